/* s_min(K) from the structure K has (docs/model.md §8.2, the Kronecker path): B₀ = Wᵀ ⊗ A
 * factored by two small SVDs, (B₀ᵀB₀)⁻¹ applied through them, and the Davidson iteration it
 * preconditions, with its certificate (conditioning_kron.h). */
#include "attnscope/conditioning_kron.h"

#include "buffer_internal.h"
#include "gram_schmidt_internal.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct KronFactors {
    int T, d, t_cap, d_cap;
    double *ua, *vat, *sa; /* A = U_A diag(s_A) V_Aᵀ: T×T, T×T (V_Aᵀ), T */
    double *uw, *vwt, *sw; /* W = U_W diag(s_W) V_Wᵀ: d×d, d×d (V_Wᵀ), d */
    double *a, *w;         /* the factors as given (column-major), decomposed in place */
    double *mid;           /* T×d between the products */
};

KronFactors *KronFactors_new(void)
{
    return calloc(1, sizeof(KronFactors));
}

void KronFactors_free(KronFactors *f)
{
    if (!f)
        return;
    double *all[] = {f->ua, f->vat, f->sa, f->uw, f->vwt, f->sw, f->a, f->w, f->mid};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    free(f);
}

static int reserve(KronFactors *f, int T, int d)
{
    size_t tt = (size_t)T * T, dd = (size_t)d * d;
    if (T > f->t_cap || d > f->d_cap) {
        if (Buffer_grow(&f->ua, tt) || Buffer_grow(&f->vat, tt) || Buffer_grow(&f->sa, (size_t)T) ||
            Buffer_grow(&f->uw, dd) || Buffer_grow(&f->vwt, dd) || Buffer_grow(&f->sw, (size_t)d) ||
            Buffer_grow(&f->a, tt) || Buffer_grow(&f->w, dd) || Buffer_grow(&f->mid, (size_t)T * d))
            return -1;
        f->t_cap = T;
        f->d_cap = d;
    }
    f->T = T;
    f->d = d;
    return 0;
}

/* The SVDs of f->a and f->w, which hold the factors. */
static int decompose(KronFactors *f, Linalg *la)
{
    int info = Linalg_svd(la, f->T, f->a, f->sa, f->ua, f->vat);
    return info ? info : Linalg_svd(la, f->d, f->w, f->sw, f->uw, f->vwt);
}

int KronFactors_factor(KronFactors *f, Linalg *la, int T, int d, const double *a_row_major,
                       const double *w)
{
    if (reserve(f, T, d))
        return -1;
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            f->a[i + (size_t)j * T] = a_row_major[(size_t)i * T + j];
    memcpy(f->w, w, sizeof(double) * (size_t)d * d);
    return decompose(f, la);
}

/* The top eigenvector of G_W·G_A (both H×H, positive semidefinite, so its eigenvalues are
   real and ≥ 0) by the power iteration, into beta: the coefficients of the A_h in the
   rearrangement's top right singular vector. */
enum { NEAREST_POWER_STEPS = 200 };
static void nearest_coefficients(int heads, const double *gw, const double *ga, double *beta,
                                 double *spare)
{
    for (int h = 0; h < heads; h++)
        beta[h] = 1.0;
    for (int step = 0; step < NEAREST_POWER_STEPS; step++) {
        cblas_dgemv(CblasColMajor, CblasNoTrans, heads, heads, 1.0, ga, heads, beta, 1, 0.0, spare,
                    1);
        cblas_dgemv(CblasColMajor, CblasNoTrans, heads, heads, 1.0, gw, heads, spare, 1, 0.0, beta,
                    1);
        double norm = cblas_dnrm2(heads, beta, 1);
        if (!(norm > 0))
            return;
        cblas_dscal(heads, 1.0 / norm, beta, 1);
    }
}

int KronFactors_factor_nearest(KronFactors *f, Linalg *la, int T, int d, int heads,
                               const double *a_row_major, const double *w)
{
    size_t tt = (size_t)T * T, dd = (size_t)d * d, hh = (size_t)heads * heads;
    double *small = malloc(sizeof(double) * (4 * hh));
    if (!small || reserve(f, T, d)) {
        free(small);
        return -1;
    }
    double *gw = small, *ga = gw + hh, *beta = ga + hh, *alpha = beta + hh;
    /* The Gram matrices of the heads' factors: Frobenius inner products of their vecs. */
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, heads, heads, (int)dd, 1.0, w, (int)dd, w,
                (int)dd, 0.0, gw, heads);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, heads, heads, (int)tt, 1.0, a_row_major,
                (int)tt, a_row_major, (int)tt, 0.0, ga, heads);
    nearest_coefficients(heads, gw, ga, beta, alpha);
    /* The left vector is R·(its right one) = Σ_h vec W_h·(G_A β)_h, up to scale. */
    cblas_dgemv(CblasColMajor, CblasNoTrans, heads, heads, 1.0, ga, heads, beta, 1, 0.0, alpha, 1);
    memset(f->w, 0, sizeof(double) * dd);
    for (int h = 0; h < heads; h++)
        cblas_daxpy((int)dd, alpha[h], w + dd * (size_t)h, 1, f->w, 1);
    /* Σ_h β_h A_h, transposed into column-major as it is summed. */
    memset(f->a, 0, sizeof(double) * tt);
    for (int h = 0; h < heads; h++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++)
                f->a[i + (size_t)j * T] +=
                    beta[h] * a_row_major[tt * (size_t)h + (size_t)i * T + j];
    free(small);
    return decompose(f, la);
}

double KronFactors_s_max(const KronFactors *f)
{
    return f->sa[0] * f->sw[0];
}

double KronFactors_s_min(const KronFactors *f)
{
    return f->sa[f->T - 1] * f->sw[f->d - 1];
}

static int descending(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a < b) - (a > b);
}

void KronFactors_singular_values(const KronFactors *f, double *s)
{
    for (int j = 0; j < f->d; j++)
        for (int i = 0; i < f->T; i++)
            s[i + (size_t)j * f->T] = f->sa[i] * f->sw[j];
    qsort(s, (size_t)f->T * f->d, sizeof(double), descending);
}

void KronFactors_smallest_pair(const KronFactors *f, double *right, double *left)
{
    int T = f->T, d = f->d;
    /* B₀ = Wᵀ ⊗ A maps vec(v_A u_Wᵀ) to s_A·s_W·vec(u_A v_Wᵀ): the last of each factor's. */
    for (int q = 0; q < d; q++)
        for (int p = 0; p < T; p++) {
            size_t at = p + (size_t)q * T;
            right[at] = f->vat[(T - 1) + (size_t)p * T] * f->uw[q + (size_t)(d - 1) * d];
            left[at] = f->ua[p + (size_t)(T - 1) * T] * f->vwt[(d - 1) + (size_t)q * d];
        }
}

bool KronFactors_invertible(const KronFactors *f)
{
    return !isnan(Conditioning_kappa(KronFactors_s_max(f), KronFactors_s_min(f), f->T * f->d));
}

/* out ← V_A [f->mid ⊘ (s_A s_Wᵀ)^power] U_Wᵀ (f->mid its scratch), where both solves end: B₀'s
   singular values divided out entry by entry, then A's right and W's left singular vectors. */
static void divide_and_turn_back(KronFactors *f, int power, double *out)
{
    int T = f->T, d = f->d;
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++) {
            double s = f->sa[i] * f->sw[j];
            f->mid[i + (size_t)j * T] /= power == 2 ? s * s : s;
        }
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, 1.0, f->vat, T, f->mid, T, 0.0,
                out, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, d, 1.0, out, T, f->uw, d, 0.0,
                f->mid, T);
    memcpy(out, f->mid, sizeof(double) * (size_t)T * d);
}

void KronFactors_solve(KronFactors *f, const double *r, double *out)
{
    int T = f->T, d = f->d;
    /* A⁻¹ R W⁻¹ = V_A [(U_Aᵀ R V_W) ⊘ s_A s_Wᵀ] U_Wᵀ */
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, 1.0, f->ua, T, r, T, 0.0, out, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, d, 1.0, out, T, f->vwt, d, 0.0,
                f->mid, T);
    divide_and_turn_back(f, 1, out);
}

void KronFactors_normal_inverse(KronFactors *f, const double *r, double *out)
{
    int T = f->T, d = f->d;
    /* B₀⁻¹B₀⁻ᵀ: the U_A and V_W between the two solves cancel. */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, 1.0, f->vat, T, r, T, 0.0, out,
                T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, out, T, f->uw, d, 0.0,
                f->mid, T);
    divide_and_turn_back(f, 2, out);
}

/* ---- Davidson's iteration for s_min(K), preconditioned by (B₀ᵀB₀)⁻¹ ----------------------- */

/* The subspace's size before a restart, the Ritz vectors a restart keeps, and how many of
   B₀'s smallest right singular vectors start it. */
enum { SUBSPACE_MAX = 40, SUBSPACE_KEPT = 12, START_FROM_B = 8 };

typedef struct {
    SaWork *w;
    KronFactors *f;
    size_t n;
    int m;                  /* columns of S held */
    double *s, *ks, *copy;  /* n×SUBSPACE_MAX: S (orthonormal), K·S, scratch */
    double *v, *kv, *r, *t; /* n: the Ritz vector, K v, the residual, the correction */
    double sv[SUBSPACE_MAX], vt[SUBSPACE_MAX * SUBSPACE_MAX];
    int products;
} Davidson;

/* Appends t (destroyed) to S, orthogonalised twice against it (Kahan's "twice is enough"),
   and K·t to K·S.  False when t lies in S to rounding (nothing appended). */
static bool append(Davidson *dv, double *t)
{
    int n = (int)dv->n, m = dv->m;
    double before = cblas_dnrm2(n, t, 1), coefficients[SUBSPACE_MAX];
    GramSchmidt_twice(dv->n, m, dv->s, t, coefficients);
    double after = cblas_dnrm2(n, t, 1);
    if (!(after > 1e-10 * before))
        return false;
    double *column = dv->s + dv->n * (size_t)m;
    for (int i = 0; i < n; i++)
        column[i] = t[i] / after;
    SaWork_jvp(dv->w, column, dv->ks + dv->n * (size_t)m);
    dv->m++;
    dv->products++;
    return true;
}

/* The smallest singular triplet of K on S: σ = ‖K v‖ for the unit v = S y, y K·S's smallest
   right singular vector; u = K v/σ; r = Kᵀu − σ v.  Returns 0 or LAPACK's info. */
static int smallest_ritz(Davidson *dv, double *sigma, double *rho)
{
    int n = (int)dv->n, m = dv->m;
    double superb[SUBSPACE_MAX];
    memcpy(dv->copy, dv->ks, sizeof(double) * dv->n * (size_t)m);
    /* The SVD of the thin K·S (n×m), not the eigenvalues of SᵀKᵀKS: κ is not squared. */
    int info = LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'A', n, m, dv->copy, n, dv->sv, NULL, 1,
                              dv->vt, m, superb);
    if (info)
        return info;
    /* y is V's last column, the last row of Vᵀ (stride m). */
    const double *y = dv->vt + (m - 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, m, 1.0, dv->s, n, y, m, 0.0, dv->v, 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, m, 1.0, dv->ks, n, y, m, 0.0, dv->kv, 1);
    double v_norm = cblas_dnrm2(n, dv->v, 1), kv_norm = cblas_dnrm2(n, dv->kv, 1);
    cblas_dscal(n, 1.0 / v_norm, dv->v, 1);
    *sigma = kv_norm / v_norm;
    if (!(kv_norm > 0)) { /* v is a null vector of K: s_min = 0 exactly */
        *rho = 0.0;
        return 0;
    }
    cblas_dscal(n, 1.0 / kv_norm, dv->kv, 1); /* now u */
    SaWork_vjp(dv->w, dv->kv, dv->r);
    dv->products++;
    cblas_daxpy(n, -*sigma, dv->v, 1, dv->r, 1);
    *rho = cblas_dnrm2(n, dv->r, 1);
    return 0;
}

/* Keeps the SUBSPACE_KEPT smallest Ritz vectors (V's last columns) as the new S, and K·S
   with them, from the last smallest_ritz: no product with K. */
static void restart(Davidson *dv)
{
    int n = (int)dv->n, m = dv->m, kept = SUBSPACE_KEPT;
    double y[SUBSPACE_MAX * SUBSPACE_KEPT];
    for (int k = 0; k < kept; k++)
        for (int i = 0; i < m; i++)
            y[i + k * m] = dv->vt[(m - 1 - k) + i * m];
    double *bases[2] = {dv->s, dv->ks};
    for (int b = 0; b < 2; b++) {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, kept, m, 1.0, bases[b], n, y, m,
                    0.0, dv->copy, n);
        memcpy(bases[b], dv->copy, sizeof(double) * dv->n * (size_t)kept);
    }
    dv->m = kept;
}

/* S's first columns: B₀'s START_FROM_B smallest right singular vectors, vec(v_A,i u_W,jᵀ)
   for the smallest products s_A,i·s_W,j (B₀ maps it to s_A,i s_W,j·u_A,i v_W,jᵀ), then the
   pseudo-random one. */
static void start(Davidson *dv, uint64_t seed)
{
    KronFactors *f = dv->f;
    int T = f->T, d = f->d, taken[START_FROM_B];
    for (int k = 0; k < START_FROM_B && k < T * d; k++) {
        int best = -1;
        for (int at = 0; at < T * d; at++) {
            bool used = false;
            for (int q = 0; q < k; q++)
                used |= taken[q] == at;
            if (!used &&
                (best < 0 || f->sa[at % T] * f->sw[at / T] < f->sa[best % T] * f->sw[best / T]))
                best = at;
        }
        taken[k] = best;
        int i = best % T, j = best / T;
        for (int q = 0; q < d; q++)
            for (int p = 0; p < T; p++)
                dv->t[p + (size_t)q * T] = f->vat[i + (size_t)p * T] * f->uw[q + (size_t)j * d];
        append(dv, dv->t);
    }
    Krylov_pseudo_random(dv->n, seed, dv->t); /* what B₀'s vectors miss */
    append(dv, dv->t);
}

/* The certificate's half-width for the triplet of smallest_ritz, the products' rounding
   counted (docs/model.md §8): K·S was computed with an error of at most η per unit column
   (η = SaWork_product_error), so ‖E‖₂ ≤ ‖E‖_F ≤ √p·η after p products (a restart's
   orthonormal combinations never raise ‖E‖_F), the exact K v − σu is at most that, and
   Kᵀu − σv at most ρ + η. */
static double half_width(const Davidson *dv, double rho)
{
    double rounding = SaWork_product_error(dv->w);
    double forward = sqrt((double)dv->products) * rounding, backward = rho + rounding;
    return sqrt((forward * forward + backward * backward) / 2.0);
}

int SaWork_smallest_preconditioned(SaWork *w, KronFactors *f, const Linalg *stop, int max_steps,
                                   double tolerance, uint64_t seed, KronEstimate *out)
{
    size_t n = (size_t)f->T * f->d;
    Davidson dv = {.w = w, .f = f, .n = n};
    *out = (KronEstimate){.value = NAN, .error = NAN, .upper = NAN};
    double *all = malloc(sizeof(double) * n * (3 * SUBSPACE_MAX + 4));
    if (!all)
        return -1;
    dv.s = all;
    dv.ks = dv.s + n * SUBSPACE_MAX;
    dv.copy = dv.ks + n * SUBSPACE_MAX;
    dv.v = dv.copy + n * SUBSPACE_MAX;
    dv.kv = dv.v + n;
    dv.r = dv.kv + n;
    dv.t = dv.r + n;
    start(&dv, seed);
    int status = 0;
    for (int step = 0; step < max_steps; step++) {
        /* A step at T·d = 65536 takes ~20 ms: polling each one keeps a stop prompt. */
        if (stop && Linalg_stop_requested(stop)) {
            status = LINALG_STOPPED;
            break;
        }
        double sigma, rho;
        if ((status = smallest_ritz(&dv, &sigma, &rho)))
            break;
        out->upper = sigma;
        /* Converged when the residual allows no better; certified only if the rounding does
           not widen the interval beyond the tolerance either. */
        if (rho / M_SQRT2 <= tolerance * sigma || !(rho > 0)) {
            double error = half_width(&dv, rho);
            if (error <= tolerance * sigma) {
                out->value = sigma;
                out->error = error;
            }
            break;
        }
        if (dv.m == SUBSPACE_MAX)
            restart(&dv);
        KronFactors_normal_inverse(f, dv.r, dv.t);
        if (!append(&dv, dv.t))
            break; /* the correction adds nothing: stagnated, not certified */
    }
    out->products = dv.products;
    free(all);
    return status;
}

int KronLayer_factor(KronFactors *f, Linalg *la, const Config *c, int heads, const double *applied,
                     const double *wvo, const double *wvo_head)
{
    int T = c->tokens, d = c->width;
    if (heads == 1)
        return KronFactors_factor(f, la, T, d, applied, wvo);
    return KronFactors_factor_nearest(f, la, T, d, heads, applied, wvo_head);
}

double KronTally_lanczos_reach(size_t n, int budget, double resolvable)
{
    return (size_t)budget >= n ? resolvable : fmin(resolvable, LANCZOS_KAPPA_REACH);
}

bool KronTally_beyond_lanczos(KronTally *tally, double s_max_low, double s_min_above, double reach)
{
    double at_least = s_max_low / s_min_above;
    if (!(at_least >= reach)) {
        tally->lanczos++;
        return false;
    }
    /* The warning claims the reach at every such layer: the smallest holds for all.  A reach
       below 1 claims nothing (every κ is at least 1), so those layers are counted apart. */
    int resolvable = tally->beyond++ - tally->unresolvable;
    if (!(reach >= 1.0)) {
        tally->unresolvable++;
        return true;
    }
    if (resolvable == 0 || reach < tally->kappa_resolvable)
        tally->kappa_resolvable = reach;
    if (resolvable == 0 || at_least < tally->kappa_least)
        tally->kappa_least = at_least;
    if (!(tally->kappa_at_least >= at_least))
        tally->kappa_at_least = at_least;
    return true;
}

/* "3 of the 16 layers of both networks": the tally counts the network's layers and its
   counterpart's together, so a count beside the depth alone would read as more layers than
   the network has (14 at L = 8). */
static const char *layers_of_both(char *out, size_t size, int count, int depth)
{
    snprintf(out, size, "%d of the %d layers of both networks", count, 2 * depth);
    return out;
}

void KronTally_warn(const KronTally *tally, int depth, Warnings *warnings)
{
    char at[64];
    /* The Kronecker path's outcomes first (certified, not certified, not run and why); the
       layers it left go on to Lanczos or a bound, each counted by the warnings after. */
    if (tally->certified)
        Warnings_add(warnings,
                     "conditioning: s_min(K) on the Kronecker path (Davidson on K preconditioned "
                     "by (B0^T B0)^-1) at %s, within %g relative, rounding counted; "
                     "its interval holds a singular value of K, the smallest unless one was "
                     "missed",
                     layers_of_both(at, sizeof at, tally->certified, depth), KRON_TOLERANCE);
    if (tally->uncertified)
        Warnings_add(warnings,
                     "conditioning: the Kronecker path did not certify s_min(K) within its %d "
                     "steps at %s: Lanczos on K^T K or a bound there, as counted below",
                     KRON_STEPS_MAX, layers_of_both(at, sizeof at, tally->uncertified, depth));
    if (tally->singular)
        Warnings_add(warnings,
                     "conditioning: B0 = W_VO^T (x) A, which preconditions the Kronecker path, is "
                     "singular to double precision at %s (A or W_VO nearly rank "
                     "deficient): the Kronecker path not run there; Lanczos on K^T K or a bound "
                     "instead, as counted below",
                     layers_of_both(at, sizeof at, tally->singular, depth));
    if (tally->far)
        Warnings_add(warnings,
                     "conditioning: ||E||_2 > %g s_min(B0) at %s: B0 = W_VO^T (x) A is too "
                     "far from K to precondition it, so the Kronecker path not run there; "
                     "Lanczos on K^T K or a bound instead, as counted below",
                     KRON_PREMISE_MAX, layers_of_both(at, sizeof at, tally->far, depth));
    if (tally->beyond > tally->unresolvable)
        Warnings_add(warnings,
                     "conditioning: at %s the image of one vector proves kappa(K) at or beyond "
                     "the reach of Lanczos on K^T K there (its steps, or what the products' "
                     "rounding lets it certify; %.3g at the least): kappa(K) >= %.3g to %.3g "
                     "(kappa_jacobian_lower per layer), Lanczos not run, s_min not sought, "
                     "kappa_jacobian null, the bound the answer",
                     layers_of_both(at, sizeof at, tally->beyond - tally->unresolvable, depth),
                     tally->kappa_resolvable, tally->kappa_least, tally->kappa_at_least);
    if (tally->unresolvable)
        Warnings_add(warnings,
                     "conditioning: at %s the products' rounding leaves Lanczos on K^T K "
                     "nothing it could certify: s_min not sought there, kappa_jacobian null, "
                     "kappa_jacobian_lower (the image of one vector's bound) the answer",
                     layers_of_both(at, sizeof at, tally->unresolvable, depth));
    if (tally->inexact)
        Warnings_add(warnings,
                     "conditioning: at %s the products with K and K^T disagree "
                     "beyond their rounding model (<Kx, y> vs <x, K^T y>; a saturated softmax "
                     "under huge logits cancels in its derivative): no bound and no s_min there, "
                     "kappa_jacobian and kappa_jacobian_lower null",
                     layers_of_both(at, sizeof at, tally->inexact, depth));
    if (tally->overflow)
        Warnings_add(warnings,
                     "conditioning: K^T K overflows the double range at %s, the first "
                     "layer %d (the weights are too large): kappa_jacobian null there (the exact "
                     "path does not form K^T K)",
                     layers_of_both(at, sizeof at, tally->overflow, depth), tally->first_overflow);
    if (tally->lanczos)
        Warnings_add(warnings,
                     "conditioning: s_min(K) by Lanczos on K^T K at %s (null where the "
                     "residual or the products' rounding leaves no certificate); its interval "
                     "holds an eigenvalue of K^T K, the smallest unless Lanczos missed one",
                     layers_of_both(at, sizeof at, tally->lanczos, depth));
}
