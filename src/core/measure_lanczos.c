/* Lanczos on a Gram matrix (T×T, lower triangle) and the top-eigenpair route of sr − 1 (its
 * certificate below), which measure.c tries before all eigenvalues; its scratch is the
 * caller's `lanczos` buffer (Measure_lanczos_size). */
#include "measure_internal.h"

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

/* The steps a Lanczos run on a T×T Gram matrix may take (Lanczos.budget). */
static int lanczos_budget(int T)
{
    return T < MEASURE_LANCZOS_STEPS ? T : MEASURE_LANCZOS_STEPS;
}

size_t Measure_lanczos_size(int T)
{
    size_t budget = (size_t)lanczos_budget(T);
    return (size_t)T * (budget + 2) + 7 * budget;
}

Lanczos lanczos_carve(double *buf, int T)
{
    int budget = lanczos_budget(T);
    Lanczos l = {.budget = budget, .held = 0};
    l.basis = buf;
    l.next = l.basis + (size_t)T * budget;
    l.product = l.next + T;
    l.alpha = l.product + T;
    l.beta = l.alpha + budget;
    l.diag = l.beta + budget;
    l.offdiag = l.diag + budget;
    l.overlap = l.offdiag + budget;
    l.ritz = l.overlap + budget;
    return l;
}

/* ‖G‖_F² from the lower triangle. */
double gram_norm2(int T, const double *gram)
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

/* Runs Lanczos until the top Ritz pair is accurate enough for the certificate (or its budget
   runs out), leaves the Ritz vector in l->next and returns 1; returns 0 when the route is
   not worth finishing (the rest of the spectrum is as large as λ1, or dstevx did not
   converge), a negative status when memory ran out or LINALG_STOPPED when la's stop hook
   asked (at T = 4096 the steps take up to ~1 s together, too long to finish first).
   gram2 = ‖G‖_F² (gram_norm2, computed once per Gram matrix by its caller) enters that test.
   With bound_tolerance > 0 (Measure_norm2_squared_bound) it runs until the residual is below
   bound_tolerance·θ instead, whatever the rest of the spectrum, and gram2 is not read.  The
   steps l holds (l->held, on this Gram matrix) are taken as they are, and l->held grows by each
   step whose next basis vector this run forms. */
int lanczos_top_vector(Linalg *la, int T, const double *gram, double gram2, Lanczos *l,
                       double bound_tolerance)
{
    int taken = 0;
    if (!l->held)
        lanczos_start(T, gram, l->basis);
    for (int k = 0; k < l->budget; k++) {
        if (Linalg_stop_requested(la))
            return LINALG_STOPPED;
        if (k >= l->held)
            lanczos_step(T, gram, l, k);
        taken = k + 1;
        /* The next basis vector before the stopping tests, whose end overwrites l->next with the
           Ritz vector: a later run that carries these steps on starts at the next step, where
           it would otherwise take this one again.  None after an exact breakdown (β_k = 0:
           q_{k+1} = 0/0), where the run ends here and a later one may not carry it on. */
        if (taken < l->budget && taken > l->held && l->beta[k] > 0) {
            double *q_next = l->basis + (size_t)taken * T;
            cblas_dcopy(T, l->next, 1, q_next, 1);
            cblas_dscal(T, 1.0 / l->beta[k], q_next, 1);
            l->held = taken;
        }

        memcpy(l->diag, l->alpha, sizeof(double) * taken);
        memcpy(l->offdiag, l->beta, sizeof(double) * (taken - 1));
        double theta;
        int info =
            Linalg_tridiagonal_top_eigenpair(la, taken, l->diag, l->offdiag, &theta, l->ritz);
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
    }
    cblas_dgemv(CblasColMajor, CblasNoTrans, T, taken, 1.0, l->basis, T, l->ritz, 1, 0.0, l->next,
                1);
    return 1;
}

/* Σ_j G_jj: the trace of the Gram matrix, ‖unit‖_F² (1 up to rounding, or less for the
   centred matrix when it is not rescaled). */
double gram_trace(int T, const double *gram)
{
    double trace = 0;
    for (int j = 0; j < T; j++)
        trace += gram[j + (size_t)j * T];
    return trace;
}

/* sr − 1 by the top eigenpair (*top: θ, within the certificate's η of λ1), or NaN when the
   certificate above does not hold (*status: 0, or a failure to report).  gram2: ‖G‖_F².
   Lanczos carries on from the steps l holds on G and leaves its own there. */
double top_eigenpair_rest(Linalg *la, int T, const double *gram, double gram2, Lanczos *l,
                          double *top, int *status)
{
    *status = 0;
    int found = lanczos_top_vector(la, T, gram, gram2, l, 0);
    if (found <= 0) {
        *status = found;
        return NAN;
    }
    const double *v = l->next;
    cblas_dsymv(CblasColMajor, CblasLower, T, 1.0, gram, T, v, 1, 0.0, l->product, 1);
    double vv = cblas_ddot(T, v, 1, v, 1);
    double theta = cblas_ddot(T, v, 1, l->product, 1) / vv;
    double residual2 = 0;
    for (int i = 0; i < T; i++) {
        double e = l->product[i] - theta * v[i];
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
