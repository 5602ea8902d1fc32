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
