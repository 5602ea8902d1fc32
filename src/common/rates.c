#include "rates.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* The environment's GFLOP/s, true when it sets a valid one. */
static bool pinned(double *gflops, const char **text)
{
    *text = getenv(RATES_ENVIRONMENT);
    if (!*text || !**text)
        return false;
    char *end;
    *gflops = strtod(*text, &end);
    return !*end && isfinite(*gflops) && *gflops > 0 && *gflops <= 1e6;
}

int Rates_check_environment(char *err, size_t size)
{
    double gflops;
    const char *text;
    if (pinned(&gflops, &text) || !text || !*text)
        return 0;
    snprintf(err, size, "%s='%s': accepted a number of GFLOP/s, 0 < N <= 1e6", RATES_ENVIRONMENT,
             text);
    return -1;
}

bool Rates_pinned(void)
{
    double gflops;
    const char *text;
    return pinned(&gflops, &text);
}

CostRates Rates_rerated(CostRates rates, double estimated, double elapsed)
{
    if (Rates_pinned() || !(estimated >= RATES_MEASURABLE_SECONDS) || !(elapsed > 0))
        return rates;
    double step = sqrt(estimated / elapsed);
    step = fmin(fmax(step, 0.25), 4.0);
    rates.flops_per_second *= step;
    rates.scalar_speed *= step;
    return rates;
}

int Rates_margin(void)
{
    return Rates_pinned() ? 1 : RATES_SPREAD;
}

int Rates_suggest_bound(double seconds, char *buf, size_t size)
{
    if (Rates_margin() == 1)
        return snprintf(buf, size,
                        "%.0f or more, or --no-confirm (the estimate: %s pins the rates, so the "
                        "next start estimates the same)",
                        ceil(seconds), RATES_ENVIRONMENT);
    return snprintf(buf, size,
                    "%.0f or more, or --no-confirm (the estimate ×%d: the next start measures "
                    "the machine's rate anew, and load varies it; --no-confirm always goes ahead)",
                    ceil(seconds * Rates_margin()), RATES_SPREAD);
}

CostRates Rates_measure(void)
{
    double gflops;
    const char *text;
    if (!pinned(&gflops, &text))
        return Cost_calibrate();
    CostRates reference = Cost_reference_rates();
    double ratio = gflops * 1e9 / reference.flops_per_second;
    return (CostRates){.flops_per_second = gflops * 1e9,
                       .scalar_speed = reference.scalar_speed * ratio};
}
