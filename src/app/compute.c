#include "compute.h"

int Compute_batch(const Config *c, bool sweep, const Progress *lanes, Workspace *w, Result *r,
                  WidthSweep *out, char *err, size_t size)
{
    if (Model_run(c, w, r, lanes, err, size))
        return -1;
    return sweep ? Sweep_width(c, w, out, lanes, err, size) : 0;
}

double Compute_estimate_seconds(const Config *c, bool sweep, bool conditioning,
                                bool conditioning_exact, CostRates rates, bool two_lanes)
{
    /* Batch's two lanes (main.c's Progress) take the shown eigenvalues beside the layers. */
    CostLanes lanes = two_lanes ? COST_SPECTRA_BESIDE : COST_ONE_LANE;
    double seconds = Cost_fresh_run(c, rates, lanes);
    if (sweep)
        seconds += Cost_width_sweep(c, rates, lanes);
    if (conditioning)
        seconds += Cost_conditioning_spectra(c, rates, conditioning_exact, 1);
    return seconds;
}
