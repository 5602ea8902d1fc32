/* The memory budget: a configuration is refused before anything is allocated when a run of
 * it would need more than the budget (--max-memory).  Batch mode and the screen (keys,
 * presets) ask the same question here. */
#ifndef ATTNSCOPE_BUDGET_H
#define ATTNSCOPE_BUDGET_H

#include "attnscope/config.h"

#include <stdbool.h>
#include <stddef.h>

/* 0 when a run of c fits in budget bytes; otherwise -1 with a message in err naming the
   configuration, the memory it needs and the budget. */
int Budget_check(const Config *c, unsigned long long budget, char *err, size_t size);

enum { BUDGET_BYTES_TEXT_SIZE = 32 };

/* bytes as "N bytes", "N KiB" or "N MiB", in the largest of these units in which the
   value is at least 1, so that --max-memory 1K prints as 1 KiB, not 0 MiB.  A need is
   rounded up and a budget down (round_up), so that a need above a budget never prints
   as equal to it. Returns buf. */
const char *Budget_bytes_text(unsigned long long bytes, bool round_up,
                              char buf[BUDGET_BYTES_TEXT_SIZE]);

/* Budget_check with the budget's source named in the message (what set it: "--max-memory",
   "ulimit -v of 244 MiB, ..."). */
int Budget_check_named(const Config *c, unsigned long long budget, const char *source, char *err,
                       size_t size);

#endif
