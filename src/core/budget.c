#include "attnscope/budget.h"

#include "attnscope/model.h"

#include <stdio.h>

const char *Budget_bytes_text(unsigned long long bytes, bool round_up,
                              char buf[BUDGET_BYTES_TEXT_SIZE])
{
    static const char *const units[] = {"bytes", "KiB", "MiB"};
    unsigned shift = bytes >= 1ull << 20 ? 20 : bytes >= 1ull << 10 ? 10 : 0;
    unsigned long long whole = bytes >> shift;
    if (round_up && whole << shift != bytes)
        whole++;
    snprintf(buf, BUDGET_BYTES_TEXT_SIZE, "%llu %s", whole, units[shift / 10]);
    return buf;
}

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
    char need_text[BUDGET_BYTES_TEXT_SIZE], budget_text[BUDGET_BYTES_TEXT_SIZE];
    snprintf(err, size, "T = %d, d = %d, depth %d needs about %s, above the memory budget of %s (%s)",
             c->tokens, c->width, c->depth, Budget_bytes_text(need, true, need_text),
             Budget_bytes_text(budget, false, budget_text), source);
    return -1;
}
