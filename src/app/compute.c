#include "compute.h"

int Compute_batch(const Config *c, bool sweep, const Progress *lanes, Workspace *w, Result *r,
                  WidthSweep *out, char *err, size_t size)
{
    if (Model_run(c, w, r, lanes, err, size))
        return -1;
    return sweep ? Sweep_width(c, w, out, lanes, err, size) : 0;
}
