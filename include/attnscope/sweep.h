/* Rank collapse in width: sr(Σ_ℓ) − 1 at the shown layer against T at fixed γ = T/d, with
 * the gap off and removed (docs/model.md §3: slope 1 − 2ℓ on log–log axes for markov). */
#ifndef ATTNSCOPE_SWEEP_H
#define ATTNSCOPE_SWEEP_H

#include "attnscope/model.h"

enum { SWEEP_POINTS_MAX = 16 };

typedef struct {
    int count;                           /* points computed (fewer when stopped) */
    int tokens[SWEEP_POINTS_MAX];        /* 16, 32, … up to the configured T */
    double excess[SWEEP_POINTS_MAX];     /* mean over seeds of sr − 1, gap off */
    double excess_gap[SWEEP_POINTS_MAX]; /* the same with the gap removed */
    double slope, slope_gap;             /* least-squares slopes of log(sr − 1) on log T */
    double theory_slope; /* 1 − 2ℓ where docs/model.md §3 predicts it, else NaN */
} WidthSweep;

/* The token counts of the sweep for T tokens: powers of two from 16 (from 2 below 16) up to
   T, and T itself. Returns how many. */
int Sweep_token_counts(int tokens, int counts[SWEEP_POINTS_MAX]);

/* Runs the sweep for c (its layer is the one measured; its seeds are averaged).  Progress is
   passed to every run, so a caller can stop it between layers.  Returns 0 or -1 (err). */
int Sweep_width(const Config *c, Workspace *w, WidthSweep *out, const Progress *progress, char *err,
                size_t size);

/* Least-squares slope of log y on log x over the points where both are finite and > 0
   (NaN with fewer than two). */
double Sweep_loglog_slope(const int *x, const double *y, int n);

#endif
