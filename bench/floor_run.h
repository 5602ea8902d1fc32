/* What lane_timeline and overlap_clock both run: Model_run at T = d, L = 8, softmax, gap off,
   seed 1 (the floor's settings, as bench_stages and floor_compare.py take them), with one
   BLAS thread per lane as batch's lanes run, on lanes, a workspace and a result of its own. */
#ifndef ATTNSCOPE_BENCH_FLOOR_RUN_H
#define ATTNSCOPE_BENCH_FLOOR_RUN_H

#include "attnscope/config.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "lanes.h"

#include <stdbool.h>

typedef struct {
    Config config;
    Lanes *lanes;
    Workspace *w;
    Result *r;
} FloorRun;

/* false when out of memory (f then holds nothing to free but what FloorRun_end frees). */
static inline bool FloorRun_begin(FloorRun *f, int T)
{
    Linalg_set_blas_threads(1);
    f->config = Config_default();
    f->config.tokens = f->config.width = T;
    f->config.depth = 8;
    f->config.attention = ATTENTION_SOFTMAX;
    f->config.gap = GAP_OFF;
    f->config.seed = 1;
    f->lanes = Lanes_new(NULL, NULL);
    f->w = Workspace_new();
    f->r = Result_new();
    return f->lanes && f->w && f->r;
}

static inline void FloorRun_end(FloorRun *f)
{
    Result_free(f->r);
    Workspace_free(f->w);
    Lanes_free(f->lanes);
}

#endif
