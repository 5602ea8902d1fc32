/* Allocation of Results and per-layer curves, shared by the modules of the core. */
#ifndef ATTNSCOPE_RESULT_INTERNAL_H
#define ATTNSCOPE_RESULT_INTERNAL_H

#include "attnscope/model.h"

#include <stddef.h>

/* Frees everything r holds and zeroes it. */
void Result_release(Result *r);
/* Allocates r's arrays for T tokens and depth layers, every value NaN.  Returns 0 or -1. */
int Result_allocate(Result *r, int T, int depth);

#endif
