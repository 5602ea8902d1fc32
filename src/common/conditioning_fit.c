#include "conditioning_fit.h"

#include "attnscope/layer.h"

#include <stdio.h>

/* Whether a start at c would be accepted: the settings' rules (a window of 64 needs T > 64)
   and what --weights or --token-ids fix.  A size named must be one that, followed, runs. */
static bool accepted(const Config *c)
{
    char why[1024];
    return Config_validate(c, why, sizeof why) == 0 && Layer_weights_fit(c, why, sizeof why);
}

bool ConditioningFit_search(const Config *c, double bound, ConditioningFitPrice price,
                            void *context, Config *fit)
{
    *fit = *c;
    while (fit->tokens >= 8 && fit->width >= 8) {
        if (accepted(fit) && price(fit, context) <= bound)
            return true;
        /* The orthonormal input needs T ≤ d: d is halved only down to T. */
        bool halve_width = fit->width / 2 >= fit->tokens && (fit->width / 2) % fit->heads == 0;
        if (halve_width)
            fit->width /= 2;
        else
            fit->tokens /= 2;
    }
    return false;
}

void ConditioningFit_phrase(const Config *fit, const char *within, char *out, size_t size)
{
    char where[48];
    if (fit)
        snprintf(where, sizeof where, "T = %d, d = %d", fit->tokens, fit->width);
    else
        snprintf(where, sizeof where, "no size from T = d = 8 up");
    snprintf(out, size, "within %s the conditioning fits at %s (depth, heads and the rest kept)",
             within, where);
}
