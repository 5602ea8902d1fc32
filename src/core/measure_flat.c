/* The flat-spectrum route (docs/model.md §2), where the top-eigenpair certificate
 * (measure_lanczos.c) cannot hold (α ≥ λ2 reaches θ once sr − 1 > 1): λ1(Ĝ) ∈ [θ_lo, γ] from
 * Lanczos's Ritz vector v and a Cholesky proof, and sr − 1 = ‖Ĝ‖_F²/θ² − 1 with its relative error
 * bounded from that interval.
 *   - θ = fl(vᵀfl(Ĝv))/fl(vᵀv) is within 4γ_{T+1}·R of vᵀĜv/vᵀv ≤ λ1(Ĝ), R = max_i Σ_j |Ĝ_ij| ≥
 *     ‖|Ĝ|‖₂ (each product and sum of T terms within γ_T of |v|ᵀ|Ĝ||v|): θ_lo = θ − 4γ_{T+1}R.
 *   - γ: the Cholesky factorisation of γ₀I − Ĝ, γ₀ the trial shift of the input bound, proves
 *     λ1(Ĝ) ≤ γ (Measure_gram_top_bound's argument on Ĝ itself: no term for X's rounding,
 *     which dsyevd on Ĝ does not see either).
 *   - N = fl(‖Ĝ‖_F²) by gram_norm2: a term of the first column is squared (1 rounding), summed
 *     into its column's off-diagonal sum (T − 2), added to the diagonal's square (1) and into
 *     the total (T − 1), 2T − 1 roundings; a = fl(fl(N/θ)/θ) and a − 1 add three (the last one's
 *     u·|a − 1| ≤ u·a).  So with a the computed quotient, ρ = sr − 1 = ‖Ĝ‖_F²/λ1² − 1 lies within
 *     a·max((1 + γ_{2T+2})(θ/θ_lo)² − 1, 1 − (1 − γ_{2T+2})(θ/γ)²) of the computed a − 1.
 * Accepted where that bound, relative to a − 1, is within dsyevd's (all_eigenvalues_error);
 * else NaN, and the caller takes all eigenvalues.  Lanczos's residual already out of reach
 * skips the factorisation. */
#include "measure_internal.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <string.h>

/* dsyevd's guaranteed relative error of sr − 1 = ρ from eigenvalues within δ = p·u·λ1 of Ĝ's
   (Weyl, with the Householder tridiagonalisation's backward error p = T², Higham, Accuracy
   and Stability, Lemma 19.3): Σ_{i≥2} λ_i² moves by up to 2δ(tr − λ1), λ1² by 2δλ1, so
   2p·u·((τ − 1)/ρ + 1) with τ = tr/λ1, to first order (which only understates it). */
static double all_eigenvalues_error(int T, double rest, double trace, double top)
{
    double p = (double)T * T;
    return 2 * p * (DBL_EPSILON / 2) * ((trace / top - 1) / rest + 1);
}

/* The bound above of ρ's relative error from λ1 ∈ [low, high] and the rounding of N, a and
   a − 1 (2T − 1 + 3 roundings of a positive sum's terms, first order). */
static double flat_rest_error(int T, double norm2, double theta, double low, double high)
{
    double gamma = Linalg_rounding_gamma(2.0 * T + 2.0), a = norm2 / theta / theta;
    double above = (1 + gamma) * (theta / low) * (theta / low) - 1;
    double below = 1 - (1 - gamma) * (theta / high) * (theta / high);
    return a * fmax(above, below) / (a - 1) * (1 + 16 * DBL_EPSILON / 2);
}

/* R = max_i Σ_j |Ĝ_ij| from the lower triangle, rounded up past its T-term sums. */
static double abs_row_sum_max(int T, const double *gram, double *row)
{
    for (int i = 0; i < T; i++)
        row[i] = 0;
    for (int j = 0; j < T; j++) {
        const double *col = gram + (size_t)j * T;
        row[j] += fabs(col[j]);
        for (int i = j + 1; i < T; i++) {
            row[i] += fabs(col[i]);
            row[j] += fabs(col[i]);
        }
    }
    double top = 0;
    for (int i = 0; i < T; i++)
        top = fmax(top, row[i]);
    return top * (1 + 2 * Linalg_rounding_gamma(T));
}

/* The proof's Cholesky factorisation of shift·I − Ĝ (T×T) where the caller has no T×T scratch
   for it (T > d, where X/‖X‖_F's buffer is smaller): on Ĝ's own lower triangle, which is
   mirrored first into the upper one (no route reads it; the centred downdate's keep_gram
   holds the same mirror there) and its diagonal into `diagonal` (T), and restored from them
   after: the same bits for dsyevd where the proof fails.  Ĝ's trace is taken before. */
static int proof_in_place(Linalg *la, int T, double *gram, double shift, double *diagonal,
                          double *high)
{
    gram_mirror(T, gram, diagonal);
    int status = cholesky_top_bound(la, T, gram, shift, 0, gram, high, NULL);
    gram_restore(T, gram, diagonal);
    return status;
}

/* sr − 1 by the flat-spectrum route (*top: θ), or NaN where it is not certified (*status: 0,
   or a failure to report); norm2 = N, gram_norm2 of gram.  Takes the input bound's Lanczos and
   proof where it ran, else carries on the steps l holds on gram; takes l's basis as scratch
   after (l->held is 0 then). */
double flat_top_rest(Linalg *la, int T, double *gram, double norm2, Lanczos *l, FlatRoute *flat,
                     double *top, int *status)
{
    const TopProof *proof = flat->proof && flat->proof->factored ? flat->proof : NULL;
    const double *v = proof ? proof->vector : l->next;
    double shift = proof ? proof->shift : NAN, high = proof ? proof->high : NAN;
    *status = 0;
    if (proof && isnan(high))
        return NAN; /* the same factorisation would fail again */
    if (!proof) {
        *status = lanczos_top_vector(la, T, gram, NAN, l, MEASURE_BOUND_RESIDUAL);
        if (*status <= 0)
            return NAN;
        *status = 0;
        shift = trial_shift(T, l->theta, l->residual);
    }
    cblas_dsymv(CblasColMajor, CblasLower, T, 1.0, gram, T, v, 1, 0.0, l->product, 1);
    double theta = cblas_ddot(T, v, 1, l->product, 1) / cblas_ddot(T, v, 1, v, 1);
    /* (the Lanczos basis is done with: R's row sums take it, and no step is held after) */
    l->held = 0;
    double low = theta - 4 * Linalg_rounding_gamma(T + 1.0) * abs_row_sum_max(T, gram, l->basis);
    double rest = norm2 / theta / theta - 1;
    double trace = gram_trace(T, gram);
    double tolerance = all_eigenvalues_error(T, rest, trace, theta);
    /* The shift is below γ: where even it misses the tolerance, the proof cannot help. */
    if (!(low > 0 && rest > 0 && flat_rest_error(T, norm2, theta, low, shift) <= tolerance))
        return NAN;
    if (!proof) {
        (*flat->proofs)++;
        flat->factored = flat->factor != NULL;
        /* (l->product is done with too: θ is formed) */
        *status = flat->factor
                      ? cholesky_top_bound(la, T, gram, shift, 0, flat->factor, &high, NULL)
                      : proof_in_place(la, T, gram, shift, l->product, &high);
    }
    /* (fmax in flat_rest_error would drop an unproved, NaN γ: it is refused first.) */
    if (*status || isnan(high) || !(flat_rest_error(T, norm2, theta, low, high) <= tolerance))
        return NAN;
    *top = theta;
    return rest;
}
