/* Rank collapse in width: sr(Σ_ℓ) − 1 at the shown layer against T at fixed γ = T/d, with
 * the gap off and removed (docs/model.md §3: slope 1 − 2ℓ on log–log axes for markov). */
#ifndef ATTNSCOPE_SWEEP_H
#define ATTNSCOPE_SWEEP_H

#include "attnscope/model.h"

enum { SWEEP_POINTS_MAX = 16 };

typedef struct {
    int count;                           /* points computed (fewer when stopped) */
    int tokens[SWEEP_POINTS_MAX];        /* 16, 32, … (2, 4, … below 16) up to the T */
    double excess[SWEEP_POINTS_MAX];     /* mean over seeds of sr − 1, gap off */
    double excess_gap[SWEEP_POINTS_MAX]; /* the same with the gap removed */
    double slope, slope_gap; /* least-squares slopes of log(sr − 1) on log T over the resolved
                                points (Sweep_resolved); NaN with fewer than two */
    double theory_slope;     /* 1 − 2ℓ where docs/model.md §3 predicts it, else NaN */
} WidthSweep;

/* The token counts of the sweep for T tokens: powers of two from 16 (from 2 below 16) up to
   T, and T itself. Returns how many. */
int Sweep_token_counts(int tokens, int counts[SWEEP_POINTS_MAX]);

/* Runs the sweep for c (its layer is the one measured; its seeds are averaged).  Progress is
   passed to every run, so a caller can stop it between layers.  Returns 0 or -1 (err). */
int Sweep_width(const Config *c, Workspace *w, WidthSweep *out, const Progress *progress, char *err,
                size_t size);

/* sr − 1 from which a sweep's point is resolved and enters the fitted slopes.  Below it the
   value is the size of X's own rounding, not its spectrum.  The cutoff is empirical: layers
   whose tokens are equal to within round-off read ρ = 1e-62 … 1.7e-57 (ρ = sr − 1; at
   T = 512, seed 1, docs/model.md §2), ρ^{1/4} up to 6.4e-15.  At 1e-50, ρ^{1/4} ≥ 3.2e-13
   sits 49 times above the largest of those levels, so where a point's rounding is no larger
   than that, ρ^{1/4} is within 1/49 of itself and ρ within (1 + 1/49)^4 − 1 ≈ 8.4%, 0.08 in
   its log: little beside the decades a slope spans.  §2's bounds do not give the cutoff by
   themselves (dgesdd's n^{1/4}·p·u leaves p unstated; the deflated route's 2√2·u = 3.1e-16
   bounds the decomposition, not X's rounding).  A T = 2 point with the gap removed read
   2.7e-64, and a fit through it gave a slope of 104. */
#define SWEEP_RESOLVED_EXCESS 1e-50

/* Whether sr − 1 = excess is resolved: finite and at least SWEEP_RESOLVED_EXCESS. */
bool Sweep_resolved(double excess);

/* Least-squares slope of log y on log x over the points where x > 0 and y is resolved
   (Sweep_resolved); NaN with fewer than two. */
double Sweep_loglog_slope(const int *x, const double *y, int n);

#endif
