#include "conditioning_fit.h"

#include <stdio.h>

bool ConditioningFit_search(const Config *c, double bound, ConditioningFitPrice price,
                            void *context, Config *fit)
{
    *fit = *c;
    while (fit->tokens >= 8 && fit->width >= 8) {
        if (price(fit, context) <= bound)
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
