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

/* μ(X)/‖X‖_F below which the token similarity is round-off (log_similarity is then NaN). */
#define MEASURE_SIMILARITY_RESOLUTION 1e-12
/* sr − 1 below which the Gram eigenvalues lose digits: the singular values of X decide. */
#define MEASURE_GRAM_FLOOR 1e-18

/* Measures exp(log_scale)·X.  Works on X/‖X‖_F, so nothing overflows; all NaN when X is 0 or
   not finite; log_similarity alone is NaN when μ(X) is below the resolution.
   Scratch: unit (T×d), gram (T×T), eig (T). */
int Measure_tokens(Linalg *la, int T, int d, const double *x, double log_scale, double *unit,
                   double *gram, double *eig, Measures *m);

#endif
