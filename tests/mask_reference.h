/* The masks written out for the tests, independently of Mask_row_range: which keys a query
 * may read, and how many. */
#ifndef ATTNSCOPE_TESTS_MASK_REFERENCE_H
#define ATTNSCOPE_TESTS_MASK_REFERENCE_H

#include "attnscope/config.h"

#include <stdbool.h>
#include <stdlib.h>

/* Whether the mask lets query i (0-based) read key j. */
static inline bool allowed(Mask mask, int window, int i, int j)
{
    switch (mask) {
    case MASK_CAUSAL:
        return j <= i;
    case MASK_WINDOW:
        return abs(i - j) <= window;
    case MASK_WINDOW_CAUSAL:
        return j <= i && i - j <= window;
    default:
        return true;
    }
}

/* n_i: the keys query i may read. */
static inline int allowed_keys(Mask mask, int window, int T, int i)
{
    int n = 0;
    for (int j = 0; j < T; j++)
        n += allowed(mask, window, i, j);
    return n;
}

#endif
