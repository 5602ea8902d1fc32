/* What batch mode computes: the model run of a configuration and, with --sweep-T, the width
 * sweep, both through the same lanes (Progress.run_pair), so that both use the two cores as
 * the screen's worker does.  Apart from main so that a test can see the lanes used.
 */
#ifndef ATTNSCOPE_COMPUTE_H
#define ATTNSCOPE_COMPUTE_H

#include "attnscope/cost.h"
#include "attnscope/model.h"
#include "attnscope/sweep.h"

#include <stdbool.h>
#include <stddef.h>

/* Runs c into r and, when sweep is set, the width sweep into out; lanes may be NULL (one
   lane after the other).  Returns 0, or -1 with the reason in err. */
int Compute_batch(const Config *c, bool sweep, const Progress *lanes, Workspace *w, Result *r,
                  WidthSweep *out, char *err, size_t size);

/* The cost model's estimate of a batch computation of c (a fresh workspace, two lanes with
   the shown eigenvalues beside the layers or one lane, the width sweep and the conditioning
   on its path where asked), in seconds. */
double Compute_estimate_seconds(const Config *c, bool sweep, bool conditioning,
                                bool conditioning_exact, CostRates rates, bool two_lanes);

#endif
