#include "attnscope/budget.h"

#include "attnscope/model.h"

#include <stdio.h>

int Budget_check(const Config *c, unsigned long long budget, char *err, size_t size)
{
    return Budget_check_named(c, budget, "--max-memory, default half of the physical memory", err,
                              size);
}

int Budget_check_named(const Config *c, unsigned long long budget, const char *source, char *err,
                       size_t size)
{
    unsigned long long need = Model_memory_estimate(c);
    if (need <= budget)
        return 0;
    /* The need rounded up and the budget down, so that the two never print as equal. */
    snprintf(
        err, size,
        "T = %d, d = %d, depth %d needs about %llu MiB, above the memory budget of %llu MiB (%s)",
        c->tokens, c->width, c->depth, (need + (1ull << 20) - 1) >> 20, budget >> 20, source);
    return -1;
}
