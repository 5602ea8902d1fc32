/* Whether two results hold the same numbers, bit for bit: every per-layer series of the result
 * (RESULT_SERIES, null in both or in neither), the shown layer's eigenvalues and singular
 * values.  Include after testing.h. */
#ifndef ATTNSCOPE_TESTS_RESULT_COMPARE_H
#define ATTNSCOPE_TESTS_RESULT_COMPARE_H

#include "attnscope/model.h"

#include <stdbool.h>
#include <string.h>

static inline bool same_numbers(const Result *a, const Result *b)
{
    int layers = a->config.depth + 1, T = a->config.tokens;
    for (int i = 0; i < RESULT_SERIES_COUNT; i++) {
        const double *x = RESULT_SERIES[i].values(a), *y = RESULT_SERIES[i].values(b);
        if ((x == NULL) != (y == NULL) || (x && memcmp(x, y, sizeof(double) * layers)))
            return false;
    }
    return memcmp(a->eigenvalues, b->eigenvalues, sizeof(Complex) * T) == 0 &&
           memcmp(a->singular_values, b->singular_values, sizeof(double) * T) == 0;
}

#endif
