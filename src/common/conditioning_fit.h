/* The size at which a conditioning job too long for its bound would fit (issue 25: an
 * engineer's size is answered at once with what can be computed instead).  One search and one
 * phrase for both front ends: --batch's refusal above --max-time and the screen's long-job
 * question for the conditioning view, each pricing the job its own way.
 */
#ifndef ATTNSCOPE_COMMON_CONDITIONING_FIT_H
#define ATTNSCOPE_COMMON_CONDITIONING_FIT_H

#include "attnscope/config.h"

#include <stdbool.h>
#include <stddef.h>

/* Seconds of the caller's conditioning job at c (batch: the run and the conditioning on the
   path chosen for c; the screen: the job its view would start). */
typedef double (*ConditioningFitPrice)(const Config *c, void *context);

/* The largest size whose job `price` puts within bound seconds, into *fit: d halved down to T
   (while the heads still divide it), then T and d in turn, depth and the rest kept.  A size
   the settings' rules or the loaded weights and token ids refuse (Config_validate,
   Layer_weights_fit) is passed over unpriced.  False when none from T = d = 8 up fits. */
bool ConditioningFit_search(const Config *c, double bound, ConditioningFitPrice price,
                            void *context, Config *fit);

/* "within 5 min the conditioning fits at T = 32, d = 64 (depth, heads and the rest kept)",
   within being the bound as the reader is shown it; "… fits at no size from T = d = 8 up …"
   for fit NULL (the search found none). */
void ConditioningFit_phrase(const Config *fit, const char *within, char *out, size_t size);

#endif
