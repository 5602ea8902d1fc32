/* The memory budget: a configuration is refused before anything is allocated when a run of
 * it would need more than the budget (--max-memory).  Batch mode and the screen (keys,
 * presets) ask the same question here. */
#ifndef ATTNSCOPE_BUDGET_H
#define ATTNSCOPE_BUDGET_H

#include "attnscope/config.h"

#include <stddef.h>

/* 0 when a run of c fits in budget bytes; otherwise -1 with a message in err naming the
   configuration, the memory it needs and the budget. */
int Budget_check(const Config *c, unsigned long long budget, char *err, size_t size);

/* Budget_check with the budget's source named in the message (what set it: "--max-memory",
   "ulimit -v of 244 MiB, ..."). */
int Budget_check_named(const Config *c, unsigned long long budget, const char *source, char *err,
                       size_t size);

#endif
