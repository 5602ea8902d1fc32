#include "attnscope/measure.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <string.h>

/* The top-eigenpair route.  G = UUᵀ (U = X/‖X‖_F) is positive semidefinite with trace 1 and
 * eigenvalues λ1 ≥ λ2 ≥ … ≥ 0, and sr − 1 = Σ_{i≥2} λ_i² / λ1² = (‖G‖_F² − λ1²) / λ1².
 *
 * Method: Lanczos with full reorthogonalisation (classical Gram–Schmidt, twice), at most
 * MEASURE_LANCZOS_STEPS steps, no restart.  One product with G per step, like the power
 * method, but its error falls at the Chebyshev rate in √(relative gap) rather than as
 * (λ2/λ1)^k: on the gap-removed networks, where λ2/λ1 reaches ≈ 0.5 (sr − 1 ≈ 0.3) and the
 * power method needs ~25 products to reach the certificate's residual, Lanczos needs 6; on
 * the collapsed layers 2–5.  Reorthogonalising against the few vectors costs less than the
 * product with G and keeps the Ritz residual estimate (β_k·|y_k|) honest.  The start vector
 * is the column of G with the largest diagonal entry: deterministic, and its component
 * along the top eigenvector v1 is λ1·v1_j, large in a collapsed X where G ≈ λ1·v1v1ᵀ.  A start
 * that misses v1 cannot pass the certificate below; it only costs the fallback.
 *
 * Value: with v the Ritz vector, θ = vᵀGv/vᵀv and P = G − θ·vvᵀ/vᵀv, ‖P‖_F² = ‖G‖_F² − θ²
 * exactly, and sr − 1 ≈ ‖P‖_F²/θ².  ‖P‖_F² is summed entry by entry, so it keeps its
 * relative accuracy when sr − 1 is tiny (no cancellation), and the scale of v enters only
 * through θ's own rounding, squared.
 *
 * Certificate (exact arithmetic on the computed G, v): let F = ‖P‖_F², r = ‖Gv − θv‖/‖v‖.
 *   - θ ≤ λ1 (Rayleigh quotient), so F ≥ F_exact := ‖G‖_F² − λ1² = Σ_{i≥2} λ_i².
 *   - λ2 ≤ √F_exact ≤ √F =: α, a bound on the rest of the spectrum that needs no λ2.
 *   - If θ > α, Kato–Temple: 0 ≤ λ1 − θ ≤ η := r²/(θ − α).
 *   - Then F − F_exact = λ1² − θ² ≤ Δ := η(2θ + η), and the computed sr − 1 = F/θ² exceeds the
 *     true F_exact/λ1² by at most a factor (F/(F − Δ))·(1 + η/θ)², i.e. relative error
 *     ≤ B := Δ/(F − Δ) + (η/θ)(2 + η/θ) + Δ/(F − Δ)·(η/θ)(2 + η/θ).
 *   Accepted when θ > α, F > Δ and B ≤ MEASURE_TOP_EIGENPAIR_TOLERANCE.  Rounding in G·v and
 *   in F is of the order the all-eigenvalue route has (there each λ_i carries ~eps·λ1). */

/* Scratch of the top-eigenpair route, carved from the caller's `lanczos` buffer. */
typedef struct {
    double *basis;          /* T × steps: the Lanczos vectors */
    double *next;           /* T: G·q before orthogonalisation, then the Ritz vector */
    double *product;        /* T: G times the Ritz vector */
    double *alpha, *beta;   /* steps: the tridiagonal's diagonal and off-diagonal */
    double *diag, *offdiag; /* steps: their copies, which LAPACK destroys */
    double *overlap;        /* steps: coefficients of one Gram–Schmidt pass */
    double *ritz;           /* steps: the top Ritz vector in the Lanczos basis */
    double theta, residual; /* the last step's top Ritz value and its residual estimate */
    int done; /* out: steps whose next basis vector was formed (see lanczos_top_vector) */
} Lanczos;

static int lanczos_steps(int T)
{
    return T < MEASURE_LANCZOS_STEPS ? T : MEASURE_LANCZOS_STEPS;
}

size_t Measure_lanczos_size(int T)
{
    size_t steps = (size_t)lanczos_steps(T);
    return (size_t)T * (steps + 2) + 7 * steps;
}

size_t Measure_tokens_scratch_size(int T, int d)
{
    /* Lanczos's, the deflated route's right vector (d), the centred downdate's X's Gram
       diagonal and row means (T each). */
    return Measure_lanczos_size(T) + (size_t)d + 2 * (size_t)T;
}

bool Measure_svd_cheap(int T, int d)
{
    return (double)T * d * (T < d ? T : d) <= MEASURE_SVD_CHEAP;
}

static Lanczos lanczos_carve(double *buf, int T)
{
    size_t steps = (size_t)lanczos_steps(T);
    Lanczos l;
    l.basis = buf;
    l.next = l.basis + (size_t)T * steps;
    l.product = l.next + T;
    l.alpha = l.product + T;
    l.beta = l.alpha + steps;
    l.diag = l.beta + steps;
    l.offdiag = l.diag + steps;
    l.overlap = l.offdiag + steps;
    l.ritz = l.overlap + steps;
    return l;
}

/* ‖G‖_F² from the lower triangle. */
static double gram_norm2(int T, const double *gram)
{
    double total = 0;
    for (int j = 0; j < T; j++) {
        const double *col = gram + (size_t)j * T;
        double off = 0;
        for (int i = j + 1; i < T; i++)
            off += col[i] * col[i];
        total += col[j] * col[j] + 2 * off;
    }
    return total;
}

/* ‖G − c·vvᵀ‖_F² from the lower triangle, entry by entry and column by column (partial sums
   keep the rounding of T² positive terms near T·eps). */
static double deflated_norm2(int T, const double *gram, double c, const double *v)
{
    double total = 0;
    for (int j = 0; j < T; j++) {
        const double *col = gram + (size_t)j * T;
        double cv = c * v[j];
        double diag = col[j] - cv * v[j];
        double off = 0;
        for (int i = j + 1; i < T; i++) {
            double e = col[i] - cv * v[i];
            off += e * e;
        }
        total += diag * diag + 2 * off;
    }
    return total;
}

/* The Lanczos start: G's column with the largest diagonal entry, normalised. */
static void lanczos_start(int T, const double *gram, double *q)
{
    int top = 0;
    for (int j = 1; j < T; j++)
        if (gram[j + (size_t)j * T] > gram[top + (size_t)top * T])
            top = j;
    for (int i = 0; i < T; i++)
        q[i] = i >= top ? gram[i + (size_t)top * T] : gram[top + (size_t)i * T];
    cblas_dscal(T, 1.0 / cblas_dnrm2(T, q, 1), q, 1);
}

/* Residual of the Ritz pair below which the certificate should pass with margin: it needs
   r² ≲ tol·F·(θ − √F)/(2θ); `spread` = ‖G‖_F² − θ² stands in for F (it is ≥ F_exact, and only
   its cancellation near eps·θ² blurs it, where the floor eps·θ takes over). */
static double residual_target(double theta, double spread)
{
    double gap = theta - sqrt(spread);
    double target2 = 0.1 * MEASURE_TOP_EIGENPAIR_TOLERANCE * spread * fmax(gap, 0) / (2 * theta);
    return fmax(sqrt(target2), DBL_EPSILON * theta);
}

/* Lanczos step k: G·q_k orthogonalised against q_0..q_k into l->next, α_k and β_k. */
static void lanczos_step(int T, const double *gram, Lanczos *l, int k)
{
    const double *q = l->basis + (size_t)k * T;
    cblas_dsymv(CblasColMajor, CblasLower, T, 1.0, gram, T, q, 1, 0.0, l->next, 1);
    l->alpha[k] = 0;
    for (int pass = 0; pass < 2; pass++) {
        cblas_dgemv(CblasColMajor, CblasTrans, T, k + 1, 1.0, l->basis, T, l->next, 1, 0.0,
                    l->overlap, 1);
        cblas_dgemv(CblasColMajor, CblasNoTrans, T, k + 1, -1.0, l->basis, T, l->overlap, 1, 1.0,
                    l->next, 1);
        l->alpha[k] += l->overlap[k];
    }
    l->beta[k] = cblas_dnrm2(T, l->next, 1);
}

/* Runs Lanczos until the top Ritz pair is accurate enough for the certificate (or the steps
   run out), leaves the Ritz vector in l->next and returns 1; returns 0 when the route is
   not worth finishing (the rest of the spectrum is as large as λ1, or dstevx did not
   converge), a negative status when memory ran out or LINALG_STOPPED when la's stop hook
   asked (at T = 4096 the steps take up to ~1 s together, too long to finish first).
   With bound_tolerance > 0 (Measure_norm2_squared_bound) it runs until the residual is below
   bound_tolerance·θ instead, whatever the rest of the spectrum.  `reuse`: steps that an
   earlier run on the same Gram matrix left in l (its l->done; 0: none), whose α, β and basis
   are taken as they are: the same start and steps give the same bits, so only the stopping
   test, run again on each of their tridiagonal matrices, tells where this run ends. */
static int lanczos_top_vector(Linalg *la, int T, const double *gram, Lanczos *l,
                              double bound_tolerance, int reuse)
{
    int steps = lanczos_steps(T), used = 0;
    double gram2 = bound_tolerance > 0 ? 0 : gram_norm2(T, gram);
    if (!reuse)
        lanczos_start(T, gram, l->basis);
    l->done = reuse;
    for (int k = 0; k < steps; k++) {
        if (Linalg_stop_requested(la))
            return LINALG_STOPPED;
        if (k >= reuse)
            lanczos_step(T, gram, l, k);
        used = k + 1;

        memcpy(l->diag, l->alpha, sizeof(double) * used);
        memcpy(l->offdiag, l->beta, sizeof(double) * (used - 1));
        double theta;
        int info = Linalg_tridiagonal_top_eigenpair(la, used, l->diag, l->offdiag, &theta, l->ritz);
        if (info)
            return info < 0 ? info : 0;
        double residual = l->beta[k] * fabs(l->ritz[k]);
        l->theta = theta;
        l->residual = residual;
        if (bound_tolerance > 0) {
            if (residual <= bound_tolerance * theta)
                break;
        } else {
            double spread = fmax(gram2 - theta * theta, 0);
            /* A shortcut, not part of the certificate: once θ has settled, ‖G‖_F² ≥ 2θ² means
               λ2 may reach λ1 and no gap can be certified (the fallback is right either way). */
            if (residual <= 0.05 * theta && spread >= theta * theta)
                return 0;
            if (residual <= residual_target(theta, spread))
                break;
        }
        if (used < steps && used > reuse) {
            double *q_next = l->basis + (size_t)used * T;
            cblas_dcopy(T, l->next, 1, q_next, 1);
            cblas_dscal(T, 1.0 / l->beta[k], q_next, 1);
            l->done = used;
        }
    }
    cblas_dgemv(CblasColMajor, CblasNoTrans, T, used, 1.0, l->basis, T, l->ritz, 1, 0.0, l->next,
                1);
    return 1;
}

/* Σ_j G_jj: the trace of the Gram matrix, ‖unit‖_F² (1 up to rounding, or less for the
   centred matrix when it is not rescaled). */
static double gram_trace(int T, const double *gram)
{
    double trace = 0;
    for (int j = 0; j < T; j++)
        trace += gram[j + (size_t)j * T];
    return trace;
}

/* What the proof of ‖X‖₂² (input_bound) leaves for the flat-spectrum route on the same Ĝ: the
   same Lanczos (start, steps, stopping residual) and the same trial shift as the route's own, so
   its vector, shift and λ1(Ĝ)'s bound serve as they are, the same bits. */
typedef struct {
    double *vector; /* T: Lanczos's top Ritz vector, copied out of the scratch */
    double shift;
    double high;   /* λ1(Ĝ)'s proved bound; NaN where the factorisation proved nothing */
    bool factored; /* whether the Lanczos and the factorisation ran */
} TopProof;

/* The flat-spectrum route (docs/model.md §2), where the certificate above cannot hold (α ≥ λ2
 * reaches θ once sr − 1 > 1): λ1(Ĝ) ∈ [θ_lo, γ] from Lanczos's Ritz vector v and a Cholesky
 * proof, and sr − 1 = ‖Ĝ‖_F²/θ² − 1 with its relative error bounded from that interval.
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
typedef struct {
    const TopProof *proof; /* X's, from the input bound, or NULL */
    double *factor;        /* T×T scratch of the proof (the measure's unit: T ≤ d) */
    const double *x;       /* X and its ‖X‖_F, to form unit again where a deep route needs it */
    double norm;
    bool factored; /* out: factor (unit) was overwritten */
    int *proofs;   /* incremented by each Cholesky factorisation (the plan declares dsyevd) */
    /* The steps the top-eigenpair route's Lanczos on the same Ĝ left in the scratch, which the
       route's own carries on from (the same start and steps: not done twice). */
    int lanczos_done;
} FlatRoute;

/* The shift the Cholesky proof tries above Lanczos's top Ritz value θ with residual ρ (n×n):
   (θ + 2ρ)(1 + 8(n + 1)u), just above λ1(Ĝ) when Lanczos found the top. */
static double trial_shift(int n, double theta, double residual)
{
    return (theta + 2 * residual) * (1 + 8 * (n + 1.0) * (DBL_EPSILON / 2));
}

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

static int cholesky_top_bound(Linalg *la, int n, const double *gram, double shift,
                              double gram_rounding, double *factor, double *bound,
                              double *gram_bound);

/* sr − 1 by the flat-spectrum route (*top: θ), or NaN where it is not certified (*status: 0,
   or a failure to report).  Takes the input bound's Lanczos and proof where it ran. */
static double flat_top_rest(Linalg *la, int T, const double *gram, double *lanczos, FlatRoute *flat,
                            double *top, int *status)
{
    Lanczos l = lanczos_carve(lanczos, T);
    const TopProof *proof = flat->proof && flat->proof->factored ? flat->proof : NULL;
    const double *v = proof ? proof->vector : l.next;
    double shift = proof ? proof->shift : NAN, high = proof ? proof->high : NAN;
    *status = 0;
    if (proof && isnan(high))
        return NAN; /* the same factorisation would fail again */
    if (!proof) {
        *status = lanczos_top_vector(la, T, gram, &l, MEASURE_BOUND_RESIDUAL, flat->lanczos_done);
        if (*status <= 0)
            return NAN;
        *status = 0;
        shift = trial_shift(T, l.theta, l.residual);
    }
    cblas_dsymv(CblasColMajor, CblasLower, T, 1.0, gram, T, v, 1, 0.0, l.product, 1);
    double theta = cblas_ddot(T, v, 1, l.product, 1) / cblas_ddot(T, v, 1, v, 1);
    /* (the Lanczos basis is done with: R's row sums take it) */
    double low = theta - 4 * Linalg_rounding_gamma(T + 1.0) * abs_row_sum_max(T, gram, l.basis);
    double norm2 = gram_norm2(T, gram), rest = norm2 / theta / theta - 1;
    double trace = gram_trace(T, gram);
    double tolerance = all_eigenvalues_error(T, rest, trace, theta);
    /* The shift is below γ: where even it misses the tolerance, the proof cannot help. */
    if (!(low > 0 && rest > 0 && flat_rest_error(T, norm2, theta, low, shift) <= tolerance))
        return NAN;
    if (!proof) {
        flat->factored = true;
        (*flat->proofs)++;
        *status = cholesky_top_bound(la, T, gram, shift, 0, flat->factor, &high, NULL);
    }
    /* (fmax in flat_rest_error would drop an unproved, NaN γ: it is refused first.) */
    if (*status || isnan(high) || !(flat_rest_error(T, norm2, theta, low, high) <= tolerance))
        return NAN;
    *top = theta;
    return rest;
}

/* sr − 1 by the top eigenpair (*top: θ, within the certificate's η of λ1), or NaN when the
   certificate above does not hold (*status: 0, or a failure to report).  *done: the Lanczos
   steps it left in the scratch (lanczos_top_vector's l->done). */
static double top_eigenpair_rest(Linalg *la, int T, const double *gram, double *lanczos,
                                 double *top, int *status, int *done)
{
    Lanczos l = lanczos_carve(lanczos, T);
    *status = 0;
    int found = lanczos_top_vector(la, T, gram, &l, 0, 0);
    *done = l.done;
    if (found <= 0) {
        *status = found;
        return NAN;
    }
    const double *v = l.next;
    cblas_dsymv(CblasColMajor, CblasLower, T, 1.0, gram, T, v, 1, 0.0, l.product, 1);
    double vv = cblas_ddot(T, v, 1, v, 1);
    double theta = cblas_ddot(T, v, 1, l.product, 1) / vv;
    double residual2 = 0;
    for (int i = 0; i < T; i++) {
        double e = l.product[i] - theta * v[i];
        residual2 += e * e;
    }
    residual2 /= vv;
    double deflated2 = deflated_norm2(T, gram, theta / vv, v); /* F */
    double rest = deflated2 / theta / theta;
    *top = theta;
    /* θ ≤ λ1 and F ≥ F_exact make F/θ² an upper bound of sr − 1 without any certificate:
       below the floor, where the singular values of X decide, that is all it takes. */
    if (rest < MEASURE_GRAM_FLOOR)
        return rest;
    double second_bound = sqrt(deflated2); /* α ≥ λ2 */
    if (!(theta > second_bound))
        return NAN;
    double eta = residual2 / (theta - second_bound);
    double delta = eta * (2 * theta + eta);
    if (!(deflated2 > delta))
        return NAN;
    double from_deflated = delta / (deflated2 - delta);
    double from_theta = (eta / theta) * (2 + eta / theta);
    double bound = from_deflated + from_theta + from_deflated * from_theta;
    return bound <= MEASURE_TOP_EIGENPAIR_TOLERANCE ? rest : NAN;
}

/* What the Gram matrix of one unit matrix gives: sr − 1, the fraction of its energy off the
   top direction, and the route that gave them. */
typedef struct {
    double rest, off_top;
    MeasureRoute route;
} GramRank;

/* unit = X/‖X‖_F, entry by entry. */
static void unit_tokens(size_t td, const double *x, double norm, double *unit)
{
    for (size_t i = 0; i < td; i++)
        unit[i] = x[i] / norm;
}

/* The transposed copy goes by tiles of 8×8 doubles, a 64-byte cache line of each of 8 columns
   of x into 8 lines of the copy: copied column by column, every element written would be a
   line apart from the one before. */
enum { TRANSPOSE_TILE = 8 };

/* The lower triangle of the d×d Gram matrix XᵀX of x (T×d) through a transposed copy (dsyrk
   forms a·aᵀ), copied tile by tile. */
static int column_gram(Linalg *la, int T, int d, const double *x, double *transposed, double *gram)
{
    for (int j0 = 0; j0 < d; j0 += TRANSPOSE_TILE)
        for (int i0 = 0; i0 < T; i0 += TRANSPOSE_TILE) {
            int j1 = j0 + TRANSPOSE_TILE < d ? j0 + TRANSPOSE_TILE : d;
            int i1 = i0 + TRANSPOSE_TILE < T ? i0 + TRANSPOSE_TILE : T;
            for (int i = i0; i < i1; i++)
                for (int j = j0; j < j1; j++)
                    transposed[j + (size_t)i * d] = x[i + (size_t)j * T];
        }
    return Linalg_gram(la, d, T, transposed, gram);
}

/* The lower triangle of the n×n Gram matrix of x (T×d), n = min(T, d): XXᵀ, or XᵀX. */
static int smaller_gram(Linalg *la, int T, int d, const double *x, double *transposed, double *gram)
{
    return T <= d ? Linalg_gram(la, T, d, x, gram) : column_gram(la, T, d, x, transposed, gram);
}

/* The deflated route (docs/model.md §2), for a collapsed X (here `unit`, ‖unit‖_F = 1) whose
 * top left singular vector Lanczos has found (`ritz`, T, as a Ritz vector of XXᵀ).  The
 * singular values of X below s_1 are those of X₂ = (I − u1u1ᵀ)X(I − v1v1ᵀ), and
 * Σ_{i≥2} s_i⁴ = ‖X₂X₂ᵀ‖_F², one Gram matrix of a matrix whose entries are as small as s_2:
 * its rounding is relative to Σ_{i≥2} s_i⁴, not to s_1⁴ as in XXᵀ's.
 *   - v̂ ∝ Xᵀ·ritz, then û ∝ X·v̂ (one power step on each side) and ŝ1 = ‖X v̂‖.
 *   - R = (I − ûûᵀ)X(I − v̂v̂ᵀ), each side projected twice: the first pass leaves along û the
 *     rounding of its coefficients (γ_T·s1 at most), which the second removes ("twice is
 *     enough"); what stays is each entry's own rounding, ‖E‖_F ≤ √2·u·(‖X‖_F + ‖(I − ûûᵀ)X‖_F).
 *     The vectors' own errors enter R as s1·sin∠(û, u1)·sin∠(v̂, v1) + s2·(sin∠(û, u1) +
 *     sin∠(v̂, v1)): second order, and relative to s2.
 *   - R is scaled by the power of 2 nearest below 1/‖R‖_F (exact), so that its Gram matrix
 *     neither underflows nor overflows, and sr − 1 = ‖fl(RRᵀ)‖_F²·(2^e/ŝ1)⁴ from the smaller
 *     side's Gram matrix, whose rounding is relative: at most 2γ_m·√n of Σ_{i≥2} s_i⁴.
 * Returns 0 and fills *out, 1 where there is no direction to deflate (the caller takes the
 * singular values), or a failure of the Gram matrix.  unit is destroyed, as gram; scratch:
 * ritz and product (T each, the Lanczos scratch's), right (d). */
static int deflated_rank(Linalg *la, int T, int d, double *unit, double *gram, double *ritz,
                         double *product, double *right, GramRank *out)
{
    cblas_dgemv(CblasColMajor, CblasTrans, T, d, 1.0, unit, T, ritz, 1, 0.0, right, 1);
    double norm = cblas_dnrm2(d, right, 1);
    if (!(norm > 0))
        return 1;
    cblas_dscal(d, 1.0 / norm, right, 1);
    double *left = ritz;
    cblas_dgemv(CblasColMajor, CblasNoTrans, T, d, 1.0, unit, T, right, 1, 0.0, left, 1);
    double top = cblas_dnrm2(T, left, 1);
    if (!(top > 0))
        return 1;
    cblas_dscal(T, 1.0 / top, left, 1);
    for (int j = 0; j < d; j++) {
        double *col = unit + (size_t)j * T;
        for (int pass = 0; pass < 2; pass++)
            cblas_daxpy(T, -cblas_ddot(T, left, 1, col, 1), left, 1, col, 1);
    }
    for (int pass = 0; pass < 2; pass++) {
        cblas_dgemv(CblasColMajor, CblasNoTrans, T, d, 1.0, unit, T, right, 1, 0.0, product, 1);
        cblas_dger(CblasColMajor, T, d, -1.0, product, 1, right, 1, unit, T);
    }
    size_t td = (size_t)T * d;
    double rest2 = 0;
    for (size_t i = 0; i < td; i++)
        rest2 += unit[i] * unit[i];
    int exponent;
    frexp(sqrt(rest2), &exponent);
    double scale = ldexp(1.0, -exponent);
    for (size_t i = 0; i < td; i++)
        unit[i] *= scale;
    /* T > d: RᵀR, through a transposed copy in gram; unit, copied out by then, takes it. */
    int n = T < d ? T : d;
    double *square = T <= d ? gram : unit;
    int info = smaller_gram(la, T, d, unit, gram, square);
    if (info)
        return info;
    double ratio = 1.0 / (scale * top); /* 2^e/ŝ1 */
    out->rest = gram_norm2(n, square) * (ratio * ratio) * (ratio * ratio);
    double off = rest2 / (top * top);
    out->off_top = off / (1 + off);
    out->route = MEASURE_ROUTE_DEFLATED;
    return 0;
}

/* sr − 1 and the energy off the top direction of `unit` (T×d, ‖unit‖_F = 1; destroyed by the
   singular-value route), whose Gram matrix is `gram` (destroyed by the all-eigenvalue route),
   by the routes Measure_tokens describes.  The energy off the top,
   1 − s_1²/Σ s_i², is summed from the small terms where the route gives them (no
   cancellation), and is trace − θ on the top-eigenpair route (θ within η ≤ tol·F/(2θ) of λ1,
   far below the rounding of the trace) and on the flat-spectrum route (θ within its proved
   interval [θ_lo, γ] of λ1, of the order of the trace's own rounding).  `deep`: whether
   sr − 1 below MEASURE_GRAM_FLOOR is wanted to its own digits (from X itself), or only the
   Gram route's value there.  `flat`: the flat-spectrum route's proof and scratch, tried where
   the top-eigenpair certificate fails; NULL where that route is not taken (below
   MEASURE_SVD_CHEAP, T > d, or without Lanczos). */
static int gram_rank(Linalg *la, int T, int d, double *unit, double *gram, double *eig,
                     double *lanczos, bool deep, FlatRoute *flat, GramRank *out)
{
    double trace = gram_trace(T, gram);
    double rest = NAN, top = NAN;
    if (lanczos) {
        int status, done;
        rest = top_eigenpair_rest(la, T, gram, lanczos, &top, &status, &done);
        out->route = MEASURE_ROUTE_TOP_EIGENPAIR;
        if (!status && isnan(rest) && flat) {
            flat->lanczos_done = done;
            rest = flat_top_rest(la, T, gram, lanczos, flat, &top, &status);
            out->route = MEASURE_ROUTE_FLAT_TOP;
        }
        if (status)
            return status;
        if (!isnan(rest))
            out->off_top = fmax(trace - top, 0) / trace;
    }
    if (isnan(rest)) {
        int info = Linalg_symmetric_eigenvalues(la, T, gram, eig);
        if (info)
            return info;
        top = eig[T - 1];
        if (!(top > 0))
            return 0;
        rest = 0; /* ascending order: the small terms are added first */
        double off = 0, total = 0;
        for (int i = 0; i < T - 1; i++) {
            double ratio = eig[i] / top;
            rest += ratio * ratio;
            off += fmax(eig[i], 0);
        }
        total = off + top;
        out->off_top = off / total;
        out->route = MEASURE_ROUTE_ALL_EIGENVALUES;
    }
    /* The flat route's proof took unit (T ≤ d), which the routes from X itself read: X/‖X‖_F
       again, the same bits. */
    if (deep && rest < MEASURE_GRAM_FLOOR && flat && flat->factored)
        unit_tokens((size_t)T * d, flat->x, flat->norm, unit);
    if (deep && rest < MEASURE_GRAM_FLOOR && out->route == MEASURE_ROUTE_TOP_EIGENPAIR &&
        !Measure_svd_cheap(T, d)) {
        /* Deep in the collapse the Gram route's floor (~T·eps²) is near: X itself, without
           the top pair that Lanczos found, resolves (s_i/s_1)⁴ down to ~eps⁴. */
        Lanczos l = lanczos_carve(lanczos, T);
        int deflated = deflated_rank(la, T, d, unit, gram, l.next, l.product,
                                     lanczos + Measure_lanczos_size(T), out);
        if (deflated <= 0)
            return deflated;
    }
    if (deep && rest < MEASURE_GRAM_FLOOR) {
        /* The same with the singular values of X: they resolve (s_i/s_1)⁴ down to ~T·eps⁴. */
        int info = Linalg_singular_values(la, T, d, unit, eig);
        if (info)
            return info;
        rest = 0;
        double off = 0;
        /* min(T, d) of them: more tokens than dimensions (the embedding input) have d. */
        for (int i = (T < d ? T : d) - 1; i >= 1; i--) {
            double ratio = eig[i] / eig[0];
            rest += (ratio * ratio) * (ratio * ratio);
            off += ratio * ratio;
        }
        out->off_top = off / (1 + off);
        out->route = MEASURE_ROUTE_SINGULAR_VALUES;
    }
    out->rest = rest;
    return 0;
}

/* The tokens' directions and size, from unit = X/‖X‖_F (docs/model.md §2): the mean cosine
   over pairs of distinct nonzero rows, as (‖Σ_i c_i‖² − Σ_i ‖c_i‖²) / (n(n − 1)) with
   c_i = x_i/‖x_i‖ (O(Td) instead of the T² pairs; the subtracted Σ‖c_i‖² is summed from the
   same c_i, so it cancels their rounding); NaN with fewer than two nonzero rows.
   row_norm2: T doubles of scratch. */
static double cosine_mean(int T, int d, const double *unit, double *row_norm2)
{
    for (int i = 0; i < T; i++)
        row_norm2[i] = 0;
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            row_norm2[i] += unit[i + (size_t)j * T] * unit[i + (size_t)j * T];
    int nonzero = 0;
    for (int i = 0; i < T; i++) {
        row_norm2[i] = row_norm2[i] > 0 ? 1.0 / sqrt(row_norm2[i]) : 0; /* now 1/‖x_i‖ */
        nonzero += row_norm2[i] > 0;
    }
    if (nonzero < 2)
        return NAN;
    double sum2 = 0, own2 = 0;
    for (int j = 0; j < d; j++) {
        const double *col = unit + (size_t)j * T;
        double column_sum = 0;
        for (int i = 0; i < T; i++) {
            double c = col[i] * row_norm2[i];
            column_sum += c;
            own2 += c * c;
        }
        sum2 += column_sum * column_sum;
    }
    return (sum2 - own2) / ((double)nonzero * (nonzero - 1));
}

/* Σ x_i by pairwise summation: within γ_⌈log2 n⌉·Σ|x_i| of the exact sum (Higham, Accuracy
   and Stability of Numerical Algorithms, §4.2), where a running sum is within γ_{n−1}. */
static double pairwise_sum(int n, const double *x)
{
    if (n <= 2)
        return n == 2 ? x[0] + x[1] : x[0];
    int half = n / 2;
    return pairwise_sum(half, x) + pairwise_sum(n - half, x + half);
}

static double pairwise_terms(int n)
{
    return ceil(log2((double)n));
}

bool Measure_centred_by_downdate(int T, int d, double relative_spread, double gram_frobenius)
{
    double u = DBL_EPSILON / 2, mu = relative_spread, phi = gram_frobenius;
    double gamma_d = Linalg_rounding_gamma(d), gamma_t = Linalg_rounding_gamma(T);
    double downdate = gamma_d + (4 * Linalg_rounding_gamma(pairwise_terms(T)) + 12 * u) * phi;
    double direct = gamma_d * mu * mu + 2 * mu * gamma_t + 4 * u * mu * mu;
    return !Measure_svd_cheap(T, d) && downdate <= direct;
}

/* Scratch of the centred downdate (T each), beyond the deflated route's in `lanczos`. */
typedef struct {
    double *diagonal, *row_mean;
    double mean;
} GramKept;

/* X's Gram matrix kept through gram_rank for the downdate: its lower triangle mirrored into the
   upper one, which no route reads or writes (dsyevd 'L' references the lower triangle alone;
   so does the deflated route's dsyrk at T ≤ d, while at T > d its transposed copy overwrites
   all of it: Measure_tokens_sharing forms the centred Gram matrix directly then; a collapsed
   X of one direction keeps μ large unless its tokens are equal), the diagonal apart; its row means
   r = Ĝ1/T (row i is column i, whole once mirrored) and their mean s = 1ᵀĜ1/T², each summed
   pairwise. */
static void keep_gram(int T, double *gram, GramKept *k)
{
    for (int j = 0; j < T; j++) {
        const double *col = gram + (size_t)j * T;
        k->diagonal[j] = col[j];
        for (int i = j + 1; i < T; i++)
            gram[j + (size_t)i * T] = col[i];
    }
    for (int i = 0; i < T; i++)
        k->row_mean[i] = pairwise_sum(T, gram + (size_t)i * T) / T;
    k->mean = pairwise_sum(T, k->row_mean) / T;
}

/* The lower triangle of the centred Gram matrix P Ĝ P / μ² (P = I − 11ᵀ/T, μ the relative
   spread, so that its trace is ≈ 1 as the direct route's) from what keep_gram kept:
   (Ĝ_ij − r_i − r_j + s)/μ², Ĝ_ij (i > j) read from the upper triangle. */
static void downdated_gram(int T, double *gram, const GramKept *k, double spread)
{
    double scale = 1.0 / (spread * spread);
    for (int j = 0; j < T; j++) {
        double *col = gram + (size_t)j * T;
        col[j] = (k->diagonal[j] - k->row_mean[j] - k->row_mean[j] + k->mean) * scale;
        for (int i = j + 1; i < T; i++)
            col[i] = (gram[j + (size_t)i * T] - k->row_mean[i] - k->row_mean[j] + k->mean) * scale;
    }
}

/* unit ← (x/norm − 1x̄ᵀ)/spread, the centred tokens at unit Frobenius norm, from x itself
   (unit may have been destroyed), with the column means computed as for μ. */
static void centre_tokens(int T, int d, const double *x, double norm, double spread, double *unit)
{
    for (int j = 0; j < d; j++) {
        double *col = unit + (size_t)j * T;
        double mean = 0;
        for (int i = 0; i < T; i++) {
            col[i] = x[i + (size_t)j * T] / norm;
            mean += col[i];
        }
        mean /= T;
        for (int i = 0; i < T; i++)
            col[i] = (col[i] - mean) / spread;
    }
}

static int gram_norm2_squared_bound(Linalg *la, int n, int m, const double *gram, double *factor,
                                    double *lanczos, double *bound, TopProof *keep);

double Measure_spread_squared(int T, int d, const double *x, double *squares)
{
    double spread = 0, sum_of_squares = 0;
    for (int j = 0; j < d; j++) {
        const double *col = x + (size_t)j * T;
        double mean = 0;
        for (int i = 0; i < T; i++)
            mean += col[i];
        mean /= T;
        for (int i = 0; i < T; i++) {
            sum_of_squares += col[i] * col[i];
            spread += (col[i] - mean) * (col[i] - mean);
        }
    }
    if (squares)
        *squares = sum_of_squares;
    return spread;
}

/* ‖X‖₂² bounded from the Gram matrix Ĝ of U = fl(X/ν) (T×T, inner products of d terms; ν the
   computed ‖X‖_F, any positive number would do).  Each entry of U is one rounded division, so
   X/ν = U + E with |E| ≤ u/(1 − u)·|U| entry by entry and
   ‖X‖₂ = ν‖X/ν‖₂ ≤ ν(‖U‖₂ + u/(1 − u)·‖U‖_F), where ‖U‖₂² ≤ β, the proved bound of
   gram_norm2_squared_bound, and ‖U‖_F² ≤ tr Ĝ·(1 + 2γ_{T+d}) (each diagonal entry is within γ_d
   of its exact value, their sum within γ_T).  Rounded up by (1 + 16u) past the few operations
   below.  Beside β's own slack (~n·u·β) the added term is 2u·‖U‖_F/‖U‖₂ ≤ 2u·√T relative. */
static int input_bound(Linalg *la, int T, int d, double norm, const double *gram,
                       MeasureInputBound *b, TopProof *keep)
{
    double unit_bound;
    int info = gram_norm2_squared_bound(la, T, d, gram, b->factor, b->lanczos, &unit_bound, keep);
    if (info || isnan(unit_bound))
        return info;
    double u = DBL_EPSILON / 2;
    double frobenius = sqrt(gram_trace(T, gram) * (1 + 2 * Linalg_rounding_gamma(T + d)));
    double top = norm * (sqrt(unit_bound) + u / (1 - u) * frobenius);
    b->norm_squared = top * top * (1 + 16 * u);
    return 0;
}

int Measure_tokens(Linalg *la, int T, int d, const double *x, double log_scale, double *unit,
                   double *gram, double *eig, double *lanczos, Measures *m)
{
    MeasureSharing none = {.bound = NULL};
    return Measure_tokens_sharing(la, T, d, x, log_scale, unit, gram, eig, lanczos, &none, m);
}

/* X's measures, then the centred ones, in the order their shared buffers allow (longer than a
   screen: split, each half would take a dozen of them). */
int Measure_tokens_sharing(Linalg *la, int T, int d, const double *x, double log_scale,
                           double *unit, double *gram, double *eig, double *lanczos,
                           MeasureSharing *share, Measures *m)
{
    MeasureInputBound *bound = share->bound;
    size_t td = (size_t)T * d;
    share->centred_downdated = share->centred_formed_unplanned = false;
    share->flat_proofs = 0;
    if (bound)
        bound->norm_squared = NAN;
    double norm = cblas_dnrm2((int)td, x, 1);
    m->stable_rank = m->stable_rank_minus_one = m->log10_norm = m->log_similarity = NAN;
    TokenGeometry *g = &m->geometry;
    *g = (TokenGeometry){NAN, NAN, NAN, NAN, NAN};
    m->route = MEASURE_ROUTE_NONE;
    if (!(norm > 0) || !isfinite(norm))
        return 0;
    m->log10_norm = log10(norm) + log_scale / M_LN10;
    double rms = exp(log(norm) + log_scale - 0.5 * log((double)T));
    g->token_rms = isfinite(rms) ? rms : NAN;
    unit_tokens(td, x, norm, unit);

    double similarity2 = Measure_spread_squared(T, d, unit, NULL), spread = sqrt(similarity2);
    g->relative_spread = spread;
    /* Below this, μ/‖X‖_F is round-off (the tokens agree to ~1e-12 of their size), and
       μ(X_ℓ)/μ(X_0) would only measure the growth of ‖X‖: undefined instead. */
    bool spread_resolved = spread >= MEASURE_SIMILARITY_RESOLUTION;
    if (spread_resolved)
        m->log_similarity = 0.5 * log(similarity2) + log(norm) + log_scale;
    g->token_cosine_mean = cosine_mean(T, d, unit, eig);

    /* The eigenvalues of the Gram matrix XXᵀ are s_i(X)², so sr = Σ λ_i² / λ_max².  Their
       absolute error is ~eps·λ_max, so sr − 1 stays accurate far below 1e-13. */
    GramRank rank = {NAN, NAN, MEASURE_ROUTE_NONE};
    /* The flat-spectrum route above the gate, with unit as its proof's T×T scratch. */
    bool flat_ok = lanczos && T <= d && !Measure_svd_cheap(T, d);
    /* (eig holds the input bound's Lanczos vector from its proof to the flat route's) */
    TopProof proof = {.vector = eig};
    FlatRoute flat = {
        .proof = &proof, .factor = unit, .x = x, .norm = norm, .proofs = &share->flat_proofs};
    int info = Linalg_gram(la, T, d, unit, gram);
    if (!info && bound) /* before gram_rank, whose routes may destroy the Gram matrix */
        info = input_bound(la, T, d, norm, gram, bound, &proof);
    /* The centred Gram matrix from this one where that is as accurate as forming it
       (docs/model.md §2); the scratch beyond Lanczos's and the deflated route's. */
    GramKept kept = {NULL, NULL, 0};
    if (lanczos) {
        kept.diagonal = lanczos + Measure_lanczos_size(T) + d;
        kept.row_mean = kept.diagonal + T;
    }
    share->centred_downdated = !info && lanczos && share->centred_from_gram &&
                               Measure_centred_by_downdate(T, d, spread, sqrt(gram_norm2(T, gram)));
    if (share->centred_downdated)
        keep_gram(T, gram, &kept);
    if (!info)
        info = gram_rank(la, T, d, unit, gram, eig, lanczos, true, flat_ok ? &flat : NULL, &rank);
    if (info || isnan(rank.rest))
        return info;
    m->route = rank.route;
    m->stable_rank_minus_one = rank.rest;
    m->stable_rank = 1.0 + rank.rest;
    g->energy_off_top = rank.off_top;

    /* The same of X − 1x̄ᵀ; undefined (0/0) where the tokens agree to within round-off.  There
       its Gram matrix is formed all the same where the plan declares it (work.c; test_cost
       counts it), and not where the plan expects the downdate's passes and no Gram matrix
       (share->centred_from_gram), which Measure_centred_by_downdate refuses at such μ. */
    if (!spread_resolved && share->centred_from_gram)
        return 0;
    /* T > d: the deflated route's transposed copy went through the upper triangle that
       keep_gram kept (T ≤ d: its dsyrk writes the lower one alone, the diagonal is kept apart). */
    if (share->centred_downdated && rank.route == MEASURE_ROUTE_DEFLATED && T > d)
        share->centred_downdated = false;
    share->centred_formed_unplanned = share->centred_from_gram && !share->centred_downdated;
    if (share->centred_downdated) {
        downdated_gram(T, gram, &kept, spread);
    } else {
        centre_tokens(T, d, x, norm, spread > 0 ? spread : 1.0, unit);
        info = Linalg_gram(la, T, d, unit, gram);
    }
    if (info || !spread_resolved)
        return info;
    /* Only 1 + sr − 1 is reported of it, which below MEASURE_GRAM_FLOOR is 1 exactly in
       double whatever the route: X itself would change no bit. */
    GramRank centred = {NAN, NAN, MEASURE_ROUTE_NONE};
    flat = (FlatRoute){.factor = unit, .proofs = &share->flat_proofs};
    info = gram_rank(la, T, d, unit, gram, eig, lanczos, false, flat_ok ? &flat : NULL, &centred);
    if (!info)
        g->centred_stable_rank = 1.0 + centred.rest;
    return info;
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
   and, unless gram_bound is NULL, Ĝ's own there too. */
static int cholesky_top_bound(Linalg *la, int n, const double *gram, double shift,
                              double gram_rounding, double *factor, double *bound,
                              double *gram_bound)
{
    *bound = NAN;
    if (gram_bound)
        *gram_bound = NAN;
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
    double u = DBL_EPSILON / 2, trace = gram_trace(n, gram);
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
 * 1e-13·θ unless the steps ran out.  keep (or NULL): what the flat-spectrum route takes of it. */
static int gram_norm2_squared_bound(Linalg *la, int n, int m, const double *gram, double *factor,
                                    double *lanczos, double *bound, TopProof *keep)
{
    *bound = NAN;
    double trace = gram_trace(n, gram);
    if (!(trace > 0) || !isfinite(trace))
        return 0;
    Lanczos l = lanczos_carve(lanczos, n);
    int found = lanczos_top_vector(la, n, gram, &l, MEASURE_BOUND_RESIDUAL, 0);
    if (found <= 0)
        return found;
    double shift = trial_shift(n, l.theta, l.residual);
    if (keep) {
        memcpy(keep->vector, l.next, sizeof(double) * n);
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
    return gram_norm2_squared_bound(la, T < d ? T : d, T < d ? d : T, gram, factor, lanczos, bound,
                                    NULL);
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
