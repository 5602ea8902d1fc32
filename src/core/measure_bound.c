/* The proved upper bounds of measure.h: λ1 of a Gram matrix by a Cholesky factorisation,
 * ‖X‖₂² from it, and ‖ABᵀ‖₂² of two d×k factors; each exact where its proof fails. */
#include "measure_internal.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <string.h>

/* The shift the Cholesky proof tries above Lanczos's top Ritz value θ with residual ρ (n×n):
   (θ + 2ρ)(1 + 8(n + 1)u), just above λ1(Ĝ) when Lanczos found the top. */
double trial_shift(int n, double theta, double residual)
{
    return (theta + 2 * residual) * (1 + 8 * (n + 1.0) * (DBL_EPSILON / 2));
}

/* The proof (measure.h).  Let Ĝ be the computed Gram matrix (n×n, inner products of m terms)
 * of some X.  If the Cholesky factorisation of the computed Â = γI − Ĝ runs to completion,
 * Â + E = L̂L̂ᵀ is positive definite with ‖E‖₂ ≤ e (Linalg_cholesky), and
 *   - Â = γI − Ĝ + D with D diagonal, |D_ii| ≤ u·(γ + Ĝ_ii): λ1(Ĝ) ≤ γ + e + u(γ + tr Ĝ);
 *   - Ĝ = XXᵀ + E_G with |E_G| ≤ γ_m|X||Xᵀ|, so ‖E_G‖₂ ≤ γ_m‖X‖_F² ≤ 2γ_m·tr Ĝ;
 * so λ1(XXᵀ) ≤ γ + e + u·γ + (u + 2γ_m)·tr Ĝ, rounded up by (1 + 8u).  A Cholesky that meets
 * a non-positive pivot proves nothing: γ is below λ1(Ĝ), or too close to it for the
 * factorisation's rounding. */
int Measure_gram_top_bound(Linalg *la, int n, int m, const double *gram, double shift,
                           double *factor, double *bound)
{
    return cholesky_top_bound(la, n, gram, shift, 2 * Linalg_rounding_gamma(m), factor, bound,
                              NULL);
}

/* The same of λ1(Ĝ) + gram_rounding·tr Ĝ: 0 bounds Ĝ's own top eigenvalue, 2γ_m that of XXᵀ;
   and, unless gram_bound is NULL, Ĝ's own there too.  factor may be gram itself: each entry
   of shift·I − Ĝ is formed where Ĝ's was, and the trace is taken before. */
int cholesky_top_bound(Linalg *la, int n, const double *gram, double shift, double gram_rounding,
                       double *factor, double *bound, double *gram_bound)
{
    *bound = NAN;
    if (gram_bound)
        *gram_bound = NAN;
    double trace = gram_trace(n, gram);
    for (int j = 0; j < n; j++) {
        double *column = factor + (size_t)j * n;
        const double *g = gram + (size_t)j * n;
        column[j] = shift - g[j];
        for (int i = j + 1; i < n; i++)
            column[i] = -g[i];
    }
    double backward;
    int info = Linalg_cholesky(la, n, factor, &backward);
    if (info > 0)
        return 0; /* not proved: NaN */
    if (info)
        return info;
    double u = DBL_EPSILON / 2;
    *bound = (shift + backward + u * shift + (u + gram_rounding) * trace) * (1 + 8 * u);
    if (gram_bound)
        *gram_bound = (shift + backward + u * shift + u * trace) * (1 + 8 * u);
    return 0;
}

/* The bound of ‖X‖₂² (measure.h) from X's Gram matrix (n×n, inner products of m terms):
 * Lanczos's top Ritz value θ and residual ρ of it give the trial shift γ = (θ + 2ρ)(1 + 8(n + 1)u),
 * just above λ1(Ĝ) when Lanczos found the top, and Measure_gram_top_bound proves it.  Where the
 * proof fails (Lanczos missed λ1, or the spectrum's top is within rounding of the shift): NaN, and
 * the caller computes the norm exactly.  Tight: the shift's margin and e are ~n·u·θ, ρ is below
 * 1e-13·θ unless the budget ran out.  Its steps stay in l (l->held), carried on by a later run
 * on the same Gram matrix.  keep (or NULL): what the flat-spectrum route takes of it. */
int gram_norm2_squared_bound(Linalg *la, int n, int m, const double *gram, double *factor,
                             Lanczos *l, double *bound, TopProof *keep)
{
    *bound = NAN;
    double trace = gram_trace(n, gram);
    if (!(trace > 0) || !isfinite(trace))
        return 0;
    int found = lanczos_top_vector(la, n, gram, NAN, l, MEASURE_BOUND_RESIDUAL);
    if (found <= 0)
        return found;
    double shift = trial_shift(n, l->theta, l->residual);
    if (keep) {
        memcpy(keep->vector, l->next, sizeof(double) * n);
        keep->shift = shift;
        keep->factored = true;
    }
    return cholesky_top_bound(la, n, gram, shift, 2 * Linalg_rounding_gamma(m), factor, bound,
                              keep ? &keep->high : NULL);
}

int Measure_norm2_squared_bound(Linalg *la, int T, int d, const double *x, double *transposed,
                                double *gram, double *factor, double *lanczos, double *bound)
{
    *bound = NAN;
    int info = smaller_gram(la, T, d, x, transposed, gram);
    if (info)
        return info;
    int n = T < d ? T : d;
    Lanczos l = lanczos_carve(lanczos, n);
    return gram_norm2_squared_bound(la, n, T < d ? d : T, gram, factor, &l, bound, NULL);
}

/* Σ x_i² of n numbers, raised past its rounding: the computed sum is within γ_n of the exact
   one, and 1/(1 − γ_n) ≤ 1 + 2γ_n. */
static double sum_of_squares_above(size_t n, const double *x)
{
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += x[i] * x[i];
    return total * (1 + 2 * Linalg_rounding_gamma((double)n));
}

/* The factor (measure.h): Ĝ = fl(BᵀB) is within ‖E_G‖₂ ≤ γ_d‖B‖_F² ≤ 2γ_d·tr Ĝ of BᵀB (as in
   Measure_gram_top_bound), and Ĝ + E_c = L̂L̂ᵀ with ‖E_c‖₂ ≤ e (Linalg_cholesky). */
int Measure_gram_factor(Linalg *la, int d, int k, const double *b, double *transposed,
                        MeasureGramFactor *f)
{
    f->error = f->frobenius2 = NAN;
    int info = column_gram(la, d, k, b, transposed, f->lower);
    if (info)
        return info;
    double trace = gram_trace(k, f->lower), backward;
    if (!(trace > 0) || !isfinite(trace))
        return 0;
    info = Linalg_cholesky(la, k, f->lower, &backward);
    if (info > 0)
        return 0; /* BᵀB is not numerically positive definite: nothing proved */
    if (info)
        return info;
    double frobenius2 = 0;
    for (int j = 0; j < k; j++) {
        double *column = f->lower + (size_t)j * k;
        for (int i = 0; i < j; i++)
            column[i] = 0; /* dsyrk and dpotrf leave the upper triangle as they found it */
        for (int i = j; i < k; i++)
            frobenius2 += column[i] * column[i];
    }
    double u = DBL_EPSILON / 2;
    f->frobenius2 = frobenius2 * (1 + 2 * Linalg_rounding_gamma((double)k * k));
    f->error = (backward + 2 * Linalg_rounding_gamma(d) * trace) * (1 + 4 * u);
    return 0;
}

/* The bound of ‖ABᵀ‖₂² (measure.h).  With BᵀB = L̂L̂ᵀ − E, ‖E‖₂ ≤ ε (the factor's error):
 *   ‖ABᵀ‖₂² = λ1(A·BᵀB·Aᵀ) ≤ λ1(AL̂L̂ᵀAᵀ) + ε‖A‖₂² ≤ ‖AL̂‖₂² + ε‖A‖_F²;
 *   X̂ = fl(AL̂) has |X̂ − AL̂| ≤ γ_k|A||L̂|, so ‖AL̂‖₂ ≤ ‖X̂‖₂ + γ_k‖A‖_F‖L̂‖_F;
 *   ‖X̂‖₂² ≤ β, Measure_norm2_squared_bound's proved bound.
 * So ‖ABᵀ‖₂² ≤ (√β + γ_k‖A‖_F‖L̂‖_F)² + ε‖A‖_F², every term non-negative and a few rounded
 * operations from its exact value, rounded up by (1 + 16u).  The slack is ε‖A‖_F², about
 * d·u·‖A‖_F²‖B‖_F²: relative to ‖ABᵀ‖₂², d·u times the product of the two stable ranks. */
int Measure_product_norm2_squared_bound(Linalg *la, int d, int k, const double *a,
                                        const MeasureGramFactor *f, double *product,
                                        double *transposed, double *gram, double *lanczos,
                                        double *bound)
{
    *bound = NAN;
    if (isnan(f->error))
        return 0;
    int info = Linalg_gemm(la, false, false, d, k, k, 1.0, a, d, f->lower, k, 0.0, product, d);
    double top;
    if (!info)
        info = Measure_norm2_squared_bound(la, d, k, product, transposed, gram, transposed, lanczos,
                                           &top);
    if (info || isnan(top))
        return info;
    double a2 = sum_of_squares_above((size_t)d * k, a);
    double norm = sqrt(top) + Linalg_rounding_gamma(k) * sqrt(a2 * f->frobenius2);
    *bound = (norm * norm + f->error * a2) * (1 + 16 * DBL_EPSILON / 2);
    return 0;
}

/* The bound (measure.h): the formed M̂ = fl(ABᵀ) has |M̂ − ABᵀ| ≤ γ_k|A||B|ᵀ entrywise (any
 * order of the k-term sums), so ‖ABᵀ − M̂‖₂ ≤ ‖γ_k|A||B|ᵀ‖_F ≤ γ_k‖A‖_F‖B‖_F, and
 * ‖ABᵀ‖₂² ≤ (√β + γ_k‖A‖_F‖B‖_F)², β Measure_norm2_squared_bound's proved bound of ‖M̂‖₂²,
 * rounded up by (1 + 16u) as above.  The slack is the γ_k term, about k·u·‖A‖_F‖B‖_F, and the
 * few n·u of the proof: no Cholesky factor of BᵀB is taken, whose rounding the route above
 * adds as d·u·‖A‖_F²‖B‖_F². */
int Measure_formed_product_norm2_squared_bound(Linalg *la, int d, int k, const double *a,
                                               const double *b, const double *formed, double *gram,
                                               double *factor, double *lanczos, double *bound)
{
    *bound = NAN;
    double top;
    int info = Measure_norm2_squared_bound(la, d, d, formed, NULL, gram, factor, lanczos, &top);
    if (info || isnan(top))
        return info;
    double a2 = sum_of_squares_above((size_t)d * k, a), b2 = sum_of_squares_above((size_t)d * k, b);
    double norm = sqrt(top) + Linalg_rounding_gamma(k) * sqrt(a2 * b2);
    *bound = norm * norm * (1 + 16 * DBL_EPSILON / 2);
    return 0;
}
