/* Which path the conditioning takes (K built and decomposed in full, or κ(K) estimated by
 * Lanczos), chosen the same way by the screen and by --batch --conditioning: by the cost
 * model, unless --conditioning-path pins it.  A test that needs a path pins it, so that the
 * machine's load never decides what it checks.
 */
#ifndef ATTNSCOPE_COMMON_CONDITIONING_PATH_H
#define ATTNSCOPE_COMMON_CONDITIONING_PATH_H

#include "attnscope/conditioning.h"
#include "attnscope/config.h"
#include "attnscope/cost.h"

#include <stdbool.h>

typedef enum {
    CONDITIONING_PATH_AUTO, /* exact unless priced above CONDITIONING_PATH_EXACT_SECONDS */
    CONDITIONING_PATH_EXACT,
    CONDITIONING_PATH_LANCZOS, /* s_min(K) by Lanczos on KᵀK alone */
    CONDITIONING_PATH_KRON,    /* the Kronecker path first (conditioning_kron.h), as auto's */
} ConditioningPath;

/* "auto|exact|lanczos", in the enum's order: the option's accepted values. */
extern const char *const CONDITIONING_PATH_NAMES[4];
#define CONDITIONING_PATH_ACCEPTED "auto|exact|lanczos|kron"

/* Above this many estimated seconds the automatic choice gives the exact path up for
   Lanczos, unless Lanczos would take longer: twice the screen's long-job question (30 s), so
   that the shipped preset (~9 s) keeps its exact numbers on a machine several times slower
   or busier. */
#define CONDITIONING_PATH_EXACT_SECONDS 60.0

/* The path's index in CONDITIONING_PATH_NAMES, or -1. */
int ConditioningPath_parse(const char *name);

/* Whether a run of c takes the exact path: possible at all (T·d ≤ CONDITIONING_EXACT_MAX),
   within the memory budget, and pinned exact or, on auto, priced at rates within
   CONDITIONING_PATH_EXACT_SECONDS or below Lanczos's price. */
bool ConditioningPath_exact(ConditioningPath path, const Config *c, CostRates rates,
                            unsigned long long budget);

/* The control of a conditioning run on the path chosen (exact: ConditioningPath_exact) under
   the pinned path: Lanczos where not exact, and the Kronecker path skipped only where
   --conditioning-path lanczos pins Lanczos alone.  The caller adds what is its own (progress,
   isolation, which spectra). */
ConditioningControl ConditioningPath_control(ConditioningPath path, bool exact);

#endif
