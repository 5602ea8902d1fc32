#include "conditioning_path.h"

#include "attnscope/conditioning.h"

#include <string.h>

const char *const CONDITIONING_PATH_NAMES[4] = {"auto", "exact", "lanczos", "kron"};

int ConditioningPath_parse(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(name, CONDITIONING_PATH_NAMES[i]) == 0)
            return i;
    return -1;
}

bool ConditioningPath_exact(ConditioningPath path, const Config *c, CostRates rates,
                            unsigned long long budget)
{
    if (path == CONDITIONING_PATH_LANCZOS || path == CONDITIONING_PATH_KRON ||
        !Conditioning_exact(c, &(ConditioningControl){0}) ||
        Conditioning_memory_estimate_path(c, true) > budget)
        return false;
    if (path == CONDITIONING_PATH_EXACT)
        return true;
    double exact = Cost_conditioning(c, rates, true);
    return exact <= CONDITIONING_PATH_EXACT_SECONDS || exact <= Cost_conditioning_seeking(c, rates);
}

ConditioningControl ConditioningPath_control(ConditioningPath path, bool exact)
{
    return (ConditioningControl){.lanczos_only = !exact,
                                 .kron_off = path == CONDITIONING_PATH_LANCZOS,
                                 .matrix_free_asked = path == CONDITIONING_PATH_LANCZOS ||
                                                      path == CONDITIONING_PATH_KRON};
}
