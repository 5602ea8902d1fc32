/* Measurements of a token matrix X (T×d, column-major, T <= d) for the depth curves. */
#ifndef ATTNSCOPE_MEASURE_H
#define ATTNSCOPE_MEASURE_H

#include "attnscope/linalg.h"

typedef struct {
    double stable_rank;           /* sr(XXᵀ) = Σ s_i⁴ / s_1⁴ */
    double stable_rank_minus_one; /* Σ_{i≥2} (s_i/s_1)⁴, summed directly (no cancellation) */
    double log10_norm;            /* log10 ‖X‖_F (+ log_scale) */
    double log_similarity;        /* ln μ(X), μ(X) = ‖X − 1·x̄ᵀ‖_F (+ log_scale) */
} Measures;

/* Measures exp(log_scale)·X.  Works on X/‖X‖_F, so nothing overflows; all NaN when X is 0 or
   not finite.  Scratch: unit (T×d), gram (T×T), eig (T). */
int Measure_tokens(Linalg *la, int T, int d, const double *x, double log_scale, double *unit,
                   double *gram, double *eig, Measures *m);

#endif
