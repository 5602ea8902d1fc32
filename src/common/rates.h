/* The rates the cost model prices work at: measured at start (Cost_calibrate), or pinned by
 * the environment (ATTNSCOPE_GFLOPS=N: a machine whose 256×256 dgemm runs at N GFLOP/s per
 * core and whose other work is as much slower or faster than the reference machine's), so
 * that a test of a priced choice (the conditioning's path, a refusal, the screen's long-job
 * question) takes the same branch on any machine under any load.  The screen and batch both
 * read it here.
 */
#ifndef ATTNSCOPE_COMMON_RATES_H
#define ATTNSCOPE_COMMON_RATES_H

#include "attnscope/cost.h"

#include <stdbool.h>
#include <stddef.h>

#define RATES_ENVIRONMENT "ATTNSCOPE_GFLOPS"

/* 0, or -1 with a message naming the variable, its value and what is accepted. */
int Rates_check_environment(char *err, size_t size);

/* The pinned rates when the environment sets them (checked: Rates_check_environment), the
   measured ones otherwise. */
CostRates Rates_measure(void);

/* The bound a refusal suggests for a job estimated at some seconds: the estimate times
   RATES_SPREAD, rounded up.  The next start measures the rate anew (~25 ms of dgemm), and on
   a loaded machine that varies: over 90 starts at load 15-18 the estimates spanned 3.9-fold,
   and a later start's estimate passed an earlier one's ×2 in 2.3% of pairs, ×3 in 0.1%
   (bench/README.md), so the estimate itself was often refused again.  --no-confirm is the
   sure way. */
#define RATES_SPREAD 3
/* The factor between a job's estimate and the bound that accepts it at the next start:
   RATES_SPREAD, or 1 when the rates are pinned (Rates_pinned: the next start estimates the
   same). */
int Rates_margin(void);
/* "N or more, or --no-confirm (the estimate ×3: …)", N the bound suggested for a job
   estimated at `seconds`, for a refusal's "to go ahead, give [--max-time] …"; when the rates
   are pinned (Rates_pinned), the next start estimates the same, so N is the estimate rounded
   up, without the margin.  Returns the length, as snprintf does. */
int Rates_suggest_bound(double seconds, char *buf, size_t size);

/* Whether the environment pins the rates (then nothing re-rates them). */
bool Rates_pinned(void);

/* Jobs estimated below this many seconds say too little about the machine to re-rate it. */
#define RATES_MEASURABLE_SECONDS 0.2

/* The rates after a job estimated at `estimated` seconds took `elapsed`: moved half way (in
   ratio) towards the pace measured, so that a machine that became busier (or quieter) since
   the start is priced as it is now, while one job's error of the model moves them little.
   The step is at most ×4 either way.  Unchanged when pinned or when the job was too short. */
CostRates Rates_rerated(CostRates rates, double estimated, double elapsed);

#endif
