#include "attnscope/measure.h"

#include <cblas.h>
#include <math.h>

int Measure_tokens(Linalg *la, int T, int d, const double *x, double log_scale, double *unit,
                   double *gram, double *eig, Measures *m)
{
    size_t td = (size_t)T * d;
    double norm = cblas_dnrm2((int)td, x, 1);
    m->stable_rank = m->stable_rank_minus_one = m->log10_norm = m->log_similarity = NAN;
    if (!(norm > 0) || !isfinite(norm))
        return 0;
    m->log10_norm = log10(norm) + log_scale / M_LN10;
    for (size_t i = 0; i < td; i++)
        unit[i] = x[i] / norm;

    /* μ(X)² = Σ_j Σ_i (X_ij − mean_j)², column by column (two passes, no cancellation). */
    double similarity2 = 0;
    for (int j = 0; j < d; j++) {
        const double *col = unit + (size_t)j * T;
        double mean = 0;
        for (int i = 0; i < T; i++)
            mean += col[i];
        mean /= T;
        for (int i = 0; i < T; i++)
            similarity2 += (col[i] - mean) * (col[i] - mean);
    }
    /* Below this, μ/‖X‖_F is round-off (the tokens agree to ~1e-12 of their size), and
       μ(X_ℓ)/μ(X_0) would only measure the growth of ‖X‖: undefined instead. */
    if (sqrt(similarity2) >= MEASURE_SIMILARITY_RESOLUTION)
        m->log_similarity = 0.5 * log(similarity2) + log(norm) + log_scale;

    /* The eigenvalues of the Gram matrix XXᵀ are s_i(X)², so sr = Σ λ_i² / λ_max².  Their
       absolute error is ~eps·λ_max, so sr − 1 stays accurate far below 1e-13. */
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, T, d, 1.0, unit, T, 0.0, gram, T);
    int info = Linalg_symmetric_eigenvalues(la, T, gram, eig);
    if (info)
        return info;
    double top = eig[T - 1];
    if (!(top > 0))
        return 0;
    double rest = 0; /* ascending order: the small terms are added first */
    for (int i = 0; i < T - 1; i++) {
        double ratio = eig[i] / top;
        rest += ratio * ratio;
    }
    if (rest < MEASURE_GRAM_FLOOR) {
        /* Deep in the collapse the Gram route's floor (~T·eps²) is near: the singular values
           of X itself resolve (s_i/s_1)⁴ down to ~T·eps⁴. */
        info = Linalg_singular_values(la, T, d, unit, eig);
        if (info)
            return info;
        rest = 0;
        for (int i = T - 1; i >= 1; i--) {
            double ratio = eig[i] / eig[0];
            rest += (ratio * ratio) * (ratio * ratio);
        }
    }
    m->stable_rank_minus_one = rest;
    m->stable_rank = 1.0 + rest;
    return 0;
}
