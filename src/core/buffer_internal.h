/* A double buffer grown on demand and kept between calls (the conditioning's workspaces). */
#ifndef ATTNSCOPE_BUFFER_INTERNAL_H
#define ATTNSCOPE_BUFFER_INTERNAL_H

#include <stddef.h>
#include <stdlib.h>

/* *buf resized to n doubles (its contents kept up to the smaller size): 0, or -1 with *buf
   unchanged when there is no memory. */
static inline int Buffer_grow(double **buf, size_t n)
{
    double *p = realloc(*buf, sizeof(double) * n);
    if (!p)
        return -1;
    *buf = p;
    return 0;
}

#endif
