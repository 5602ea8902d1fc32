/* The extreme singular values of the self-attention sub-block's Jacobian K (docs/model.md §8):
 * κ from them, Lanczos on KᵀK and KKᵀ through conditioning.c's products (with the witnesses
 * that check an estimate against the products' rounding), the same on a dense matrix with
 * the smallest through an LU factorisation, and the softmax conditioning demo. */
#include "attnscope/conditioning.h"

#include "attnscope/attention.h"

#include "buffer_internal.h"
#include "conditioning_internal.h"
#include "gram_schmidt_internal.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

double Conditioning_kappa(double s_max, double s_min, int n)
{
    if (!(s_max > 0) || !isfinite(s_max) || !(s_min > n * DBL_EPSILON * s_max))
        return NAN;
    return s_max / s_min;
}

/* Krylov_pseudo_random at unit norm: the Lanczos runs' start. */
static void start_vector(size_t n, uint64_t seed, double *v)
{
    Krylov_pseudo_random(n, seed, v);
    double norm = 0;
    for (size_t i = 0; i < n; i++)
        norm += v[i] * v[i];
    cblas_dscal((int)n, 1.0 / sqrt(norm), v, 1);
}

/* A symmetric positive semi-definite operator: out = S·v (v, out of n doubles, distinct). */
typedef void (*SymmetricProduct)(void *context, const double *v, double *out);

/* How much of the pseudo-random start vector joins a caller's start vector. */
#define START_MIX 1e-8

/* Where Lanczos left an extreme eigenvalue of S: its Ritz value θ and the residual r of its
   Ritz vector (an eigenvalue of S lies within r of θ), both NaN unless r ≤ tolerance·θ, and
   ‖s‖₁ of that vector's coordinates s in the basis (Ritz vector y = Q·s): a rounding error of
   at most η in each product S·q_j moves S·y by at most η·‖s‖₁. */
typedef struct {
    double theta, residual, coordinates_l1;
    int taken;     /* the steps the run took */
    bool overflow; /* a product left the double range: stopped there, θ NaN */
    /* Whatever the outcome, the extreme Ritz vector of the last check: its coordinates in the
       first `size` basis vectors (in the caller's tri; NULL before a check). */
    const double *coordinates;
    int size;
} RitzEstimate;

/* Lanczos on S with full reorthogonalisation from a fixed start vector, the Ritz values
   checked every check_every steps and at the last, at most `budget` of them: basis holds
   n·(budget + 1) doubles, tri 4·budget + budget² (LanczosWork).  give_up: it stops at a check where
   the extreme Ritz value is at most this (-INFINITY: never), θ then NaN.  Returns 0 or
   LINALG_STOPPED (stop's hook asked). */
static int lanczos_extreme(size_t n, SymmetricProduct apply, void *context, const Linalg *stop,
                           bool largest, int budget, int check_every, double tolerance,
                           double give_up, uint64_t seed, const double *start, double *basis,
                           double *tri, RitzEstimate *out)
{
    out->theta = out->residual = out->coordinates_l1 = NAN;
    out->taken = out->size = 0;
    out->coordinates = NULL;
    out->overflow = false;
    double *alpha = tri, *beta = alpha + budget, *diag = beta + budget, *off = diag + budget;
    double *ritz = off + budget; /* diag: Gram–Schmidt's coefficients between the checks */
    /* The extreme Ritz values θ of the tridiagonal lie inside [λ_min, λ_max] of S
       (Courant–Fischer), and r = β_j·|last component of θ's eigenvector| puts an eigenvalue of
       S within r of θ. */
    start_vector(n, seed, basis);
    if (start) {
        /* A structured start can be orthogonal to the eigenvector sought (a symmetry):
           START_MIX of the pseudo-random one keeps every direction in with probability one. */
        double norm = cblas_dnrm2((int)n, start, 1);
        cblas_dscal((int)n, START_MIX, basis, 1);
        cblas_daxpy((int)n, 1.0 / norm, start, 1, basis, 1);
        cblas_dscal((int)n, 1.0 / cblas_dnrm2((int)n, basis, 1), basis, 1);
    }
    for (int j = 0; j < budget; j++) {
        /* A step at T·d = 65536 takes ~10 ms: polling each one keeps a stop prompt. */
        if (stop && Linalg_stop_requested(stop)) {
            out->theta = out->residual = NAN;
            return LINALG_STOPPED;
        }
        double *q = basis + (size_t)j * n, *next = basis + (size_t)(j + 1) * n;
        apply(context, q, next);
        alpha[j] = GramSchmidt_twice(n, j + 1, basis, next, diag);
        beta[j] = cblas_dnrm2((int)n, next, 1);
        out->taken = j + 1;
        /* Past the double range (huge weights) the tridiagonal is inf and NaN: nothing to read. */
        if (!isfinite(alpha[j]) || !isfinite(beta[j])) {
            out->overflow = true;
            break;
        }
        bool last = j + 1 == budget || !(beta[j] > 0);
        if ((j + 1) % check_every == 0 || last) {
            int m = j + 1;
            memcpy(diag, alpha, sizeof(double) * m);
            memcpy(off, beta, sizeof(double) * m);
            if (LAPACKE_dstev(LAPACK_COL_MAJOR, 'V', m, diag, off, ritz, m) != 0)
                break;
            int at = largest ? m - 1 : 0;
            double theta = diag[at], r = fabs(beta[j] * ritz[(size_t)at * m + m - 1]);
            out->coordinates = ritz + (size_t)at * m;
            out->size = m;
            if (theta <= give_up)
                break;
            if (theta > 0 && r <= tolerance * theta) {
                out->theta = theta;
                out->residual = r;
                out->coordinates_l1 = cblas_dasum(m, ritz + (size_t)at * m, 1);
                break;
            }
        }
        if (last)
            break;
        cblas_dscal((int)n, 1.0 / beta[j], next, 1);
    }
    return 0;
}

/* KᵀK through the products, with the n doubles of K·v between them. */
typedef struct {
    SaWork *w;
    double *between;
} NormalProduct;

static void normal_product(void *context, const double *v, double *out)
{
    NormalProduct *p = context;
    SaWork_jvp(p->w, v, p->between);
    SaWork_vjp(p->w, p->between, out);
}

/* KKᵀ: the left singular vectors' operator, whose eigenvalues are KᵀK's (K is square). */
static void left_normal_product(void *context, const double *v, double *out)
{
    NormalProduct *p = context;
    SaWork_vjp(p->w, v, p->between);
    SaWork_jvp(p->w, p->between, out);
}

double SaWork_witness(SaWork *w, const double *y, bool above, bool transposed, double *ky,
                      double *ky_error)
{
    size_t n = (size_t)w->b[0].T * w->b[0].d;
    double hidden = SaWork_product_bounded(w, y, transposed, ky);
    double y_norm = cblas_dnrm2((int)n, y, 1), image = cblas_dnrm2((int)n, ky, 1);
    double slack = (double)(n + 4) * DBL_EPSILON;
    if (ky_error)
        *ky_error = hidden;
    if (!(y_norm > 0) || !isfinite(hidden))
        return NAN;
    if (above)
        return (image + hidden) * (1.0 + slack) / (y_norm * (1.0 - slack));
    double low = (image * (1.0 - slack) - hidden * (1.0 + slack)) / (y_norm * (1.0 + slack));
    return low > 0 ? low : 0.0;
}

bool SaWork_rounding_consistent(SaWork *w, const double *y, const double *kty, double kty_error,
                                double *scratch)
{
    size_t n = (size_t)w->b[0].T * w->b[0].d;
    double *x = scratch, *kx = scratch + n;
    start_vector(n, 7, x);
    double kx_error = SaWork_product_bounded(w, x, false, kx);
    double forward = cblas_ddot((int)n, kx, 1, y, 1), backward = cblas_ddot((int)n, x, 1, kty, 1);
    /* x is unit; ⟨fl(Kx), y⟩ within e_x‖y‖ of ⟨Kx, y⟩, ⟨x, fl(Kᵀy)⟩ within kty_error of
       ⟨x, Kᵀy⟩ = ⟨Kx, y⟩, each dot product within n·ε of |kx|·|y| and |x|·|kty| (Higham
       §3.1). */
    double y_norm = cblas_dnrm2((int)n, y, 1),
           dots = (double)n * DBL_EPSILON *
                  (cblas_dnrm2((int)n, kx, 1) * y_norm + cblas_dnrm2((int)n, kty, 1));
    double allowed = kx_error * y_norm + kty_error + dots;
    return fabs(forward - backward) <= allowed;
}

double SaWork_kappa_resolvable(const SaWork *w, double s_max)
{
    double eta = SaWork_product_error(w);
    return s_max / sqrt(eta * (2.0 * s_max + eta));
}

/* SaWork_witness of the Ritz vector y = Q·s that Lanczos left, formed over the basis vector
   after the last one used (no longer needed).  NaN before a check. */
static double ritz_witness(SaWork *w, const RitzEstimate *ritz, double *basis, double *between,
                           bool above, bool transposed)
{
    size_t n = (size_t)w->b[0].T * w->b[0].d;
    if (!ritz->coordinates)
        return NAN;
    double *y = basis + n * (size_t)ritz->size;
    cblas_dgemv(CblasColMajor, CblasNoTrans, (int)n, ritz->size, 1.0, basis, (int)n,
                ritz->coordinates, 1, 0.0, y, 1);
    return SaWork_witness(w, y, above, transposed, between, NULL);
}

int SaWork_extreme_run(SaWork *w, const ExtremeRun *run, SingularValueEstimate *out)
{
    size_t n = (size_t)w->b[0].T * w->b[0].d;
    bool largest = run->largest;
    int budget = run->budget;
    if ((size_t)budget * n * sizeof(double) > CONDITIONING_LANCZOS_BASIS_BYTES)
        budget = (int)(CONDITIONING_LANCZOS_BASIS_BYTES / (n * sizeof(double))) - 1;
    if ((size_t)budget > n)
        budget = (int)n;
    out->value = out->error = out->bound = NAN;
    out->taken = 0;
    out->overflow = false;
    double *basis = malloc(sizeof(double) * n * (size_t)(budget + 2));
    double *tri = malloc(sizeof(double) * (4 * (size_t)budget + (size_t)budget * budget));
    if (!basis || !tri || budget < 1) {
        free(basis);
        free(tri);
        return -1;
    }
    NormalProduct product = {w, basis + n * (size_t)(budget + 1)};
    RitzEstimate ritz;
    double give_up = largest ? -INFINITY : run->give_up * run->give_up;
    int status = lanczos_extreme(n, run->left ? left_normal_product : normal_product, &product,
                                 w->stop, largest, budget, 8, run->tolerance, give_up, run->seed,
                                 run->start, basis, tri, &ritz);
    out->taken = ritz.taken;
    out->overflow = ritz.overflow;
    if (ritz.overflow) {
        free(basis);
        free(tri);
        return status;
    }
    double norm = run->norm;
    if (!isnan(ritz.theta)) {
        /* An eigenvalue of the exact KᵀK within `reach` of θ: the Ritz residual plus what the
           products' rounding (≤ η(2‖K‖ + η) per unit vector, η = SaWork_product_error) adds
           to the Ritz vector's residual (docs/model.md §8). */
        double theta = ritz.theta, top = largest ? sqrt(theta + ritz.residual) : norm;
        double eta = SaWork_product_error(w);
        double reach = ritz.residual + eta * (2.0 * top + eta) * ritz.coordinates_l1;
        if (largest) {
            out->value = sqrt(theta);
            out->error = sqrt(theta + reach) - sqrt(theta);
        } else if (theta > reach) { /* else no positive lower bound: not certified */
            out->value = sqrt(theta);
            out->error = sqrt(theta) - sqrt(theta - reach);
        }
    }
    if (!status)
        out->bound = ritz_witness(w, &ritz, basis, product.between, !largest, run->left);
    free(basis);
    free(tri);
    return status;
}

int SaWork_extreme(SaWork *w, bool largest, int budget, double tolerance, uint64_t seed,
                   double norm, SingularValueEstimate *out)
{
    ExtremeRun run = {.largest = largest,
                      .budget = budget,
                      .tolerance = tolerance,
                      .give_up = NAN,
                      .seed = seed,
                      .norm = norm};
    return SaWork_extreme_run(w, &run, out);
}

/* ---- the extreme singular values of a dense matrix -------------------------------------- */

/* An LU factor's pivots are LAPACK's integers, kept as int in the header. */
_Static_assert(sizeof(lapack_int) == sizeof(int), "lapack_int is int (LP64 LAPACK)");

/* Lanczos steps at most for one extreme, checked every few steps: Ritz values of the
   matrices of the exact path settle in 10–40 steps. */
enum { DENSE_STEPS_MAX = 96, DENSE_CHECK_EVERY = 4 };

/* The residual that counts as converged: an eigenvalue of the operator within this much of θ
   (relative), so √θ moves by half of it, far below the n·ε·s_max to which dgesdd itself
   resolves a singular value (n ≥ 64 here). */
#define DENSE_TOLERANCE 1e-13

struct DenseExtremes {
    size_t n_cap;
    int *pivots;   /* n */
    double *basis; /* n·(DENSE_STEPS_MAX + 2): the basis and K·v between two products */
    double *tri;   /* the tridiagonal and its eigenvectors */
};

DenseExtremes *DenseExtremes_new(void)
{
    return calloc(1, sizeof(DenseExtremes));
}

void DenseExtremes_free(DenseExtremes *e)
{
    if (!e)
        return;
    free(e->pivots);
    free(e->basis);
    free(e->tri);
    free(e);
}

size_t DenseExtremes_doubles(size_t n)
{
    return n * (DENSE_STEPS_MAX + 2) + 4 * DENSE_STEPS_MAX + DENSE_STEPS_MAX * DENSE_STEPS_MAX +
           (n * sizeof(int) + sizeof(double) - 1) / sizeof(double);
}

static int dense_grow(DenseExtremes *e, size_t n)
{
    if (n <= e->n_cap)
        return 0;
    int *pivots = realloc(e->pivots, sizeof(int) * n);
    if (pivots)
        e->pivots = pivots;
    if (!pivots || Buffer_grow(&e->basis, n * (DENSE_STEPS_MAX + 2)) ||
        Buffer_grow(&e->tri, 4 * DENSE_STEPS_MAX + DENSE_STEPS_MAX * DENSE_STEPS_MAX))
        return -1;
    e->n_cap = n;
    return 0;
}

/* KᵀK and (KᵀK)⁻¹ = K⁻¹K⁻ᵀ of a dense n×n K, the inverse through K's LU factors. */
typedef struct {
    int n;
    const double *k, *lu;
    const int *pivots;
    double *between;
} DenseOperator;

static void dense_normal(void *context, const double *v, double *out)
{
    const DenseOperator *o = context;
    cblas_dgemv(CblasColMajor, CblasNoTrans, o->n, o->n, 1.0, o->k, o->n, v, 1, 0.0, o->between, 1);
    cblas_dgemv(CblasColMajor, CblasTrans, o->n, o->n, 1.0, o->k, o->n, o->between, 1, 0.0, out, 1);
}

static void dense_inverse_normal(void *context, const double *v, double *out)
{
    const DenseOperator *o = context;
    memcpy(out, v, sizeof(double) * (size_t)o->n);
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'T', o->n, 1, o->lu, o->n, o->pivots, out, o->n);
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', o->n, 1, o->lu, o->n, o->pivots, out, o->n);
}

/* dgetrf's factors (the same partial pivoting, right-looking by panels of LU_PANEL columns),
   with stop's hook polled between the panels: one LU at n = 4096 takes seconds and runs in
   this process, where no kill can end it.  Returns 0, DENSE_NOT_CERTIFIED (an exactly zero
   pivot) or LINALG_STOPPED. */
enum { LU_PANEL = 128 };

static int lu_stoppable(int n, double *a, int *pivots, const Linalg *stop)
{
    for (int j = 0; j < n; j += LU_PANEL) {
        if (stop && Linalg_stop_requested(stop))
            return LINALG_STOPPED;
        int nb = n - j < LU_PANEL ? n - j : LU_PANEL, rest = n - j - nb;
        double *panel = a + j + (size_t)j * n;
        if (LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n - j, nb, panel, n, pivots + j))
            return DENSE_NOT_CERTIFIED;
        for (int i = j; i < j + nb; i++)
            pivots[i] += j;
        /* The panel's row swaps on the columns either side of it, then U₁₂ = L₁₁⁻¹A₁₂ and
           A₂₂ −= L₂₁U₁₂. */
        LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, j, a, n, j + 1, j + nb, pivots, 1);
        if (!rest)
            break;
        double *right = a + (size_t)(j + nb) * n;
        LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, rest, right, n, j + 1, j + nb, pivots, 1);
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, nb, rest, 1.0,
                    panel, n, right + j, n);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, rest, rest, nb, -1.0, panel + nb, n,
                    right + j, n, 1.0, right + j + nb, n);
    }
    return 0;
}

int DenseExtremes_run(DenseExtremes *e, const Linalg *stop, int n, const double *k, double *lu,
                      double *s_max, double *s_min)
{
    size_t size = (size_t)n;
    if (dense_grow(e, size))
        return -1;
    int budget = n < DENSE_STEPS_MAX ? n : DENSE_STEPS_MAX;
    DenseOperator o = {n, k, lu, e->pivots, e->basis + size * (DENSE_STEPS_MAX + 1)};
    RitzEstimate top, inverse;
    int status = lanczos_extreme(size, dense_normal, &o, stop, true, budget, DENSE_CHECK_EVERY,
                                 DENSE_TOLERANCE, -INFINITY, 1, NULL, e->basis, e->tri, &top);
    if (status || isnan(top.theta))
        return status ? status : DENSE_NOT_CERTIFIED;
    memcpy(lu, k, sizeof(double) * size * size);
    /* An exactly singular factor has no inverse to iterate with. */
    if ((status = lu_stoppable(n, lu, e->pivots, stop)))
        return status;
    status = lanczos_extreme(size, dense_inverse_normal, &o, stop, true, budget, DENSE_CHECK_EVERY,
                             DENSE_TOLERANCE, -INFINITY, 2, NULL, e->basis, e->tri, &inverse);
    if (status || isnan(inverse.theta) || !isfinite(inverse.theta))
        return status ? status : DENSE_NOT_CERTIFIED;
    *s_max = sqrt(top.theta);
    *s_min = 1.0 / sqrt(inverse.theta);
    return 0;
}

/* ---- the softmax conditioning demo ------------------------------------------------------ */

int SoftmaxDemo_run(int n, double alpha, double beta, uint64_t seed, int draws, double *kappa)
{
    size_t nn = (size_t)n * n;
    double *z = malloc(sizeof(double) * nn), *a = malloc(sizeof(double) * nn);
    double *s = malloc(sizeof(double) * (size_t)n);
    RandomStream *rs = RandomStream_new();
    Linalg *la = Linalg_new();
    int info = -1;
    if (!z || !a || !s || !rs || !la)
        goto done;
    for (int k = 0; k < draws; k++) {
        RandomStream_gaussian(rs, seed + (uint64_t)k, 1, ROLE_QUERY, alpha / sqrt((double)n), z,
                              nn);
        for (int i = 0; i < n; i++)
            z[(size_t)i * n + i] += beta;
        Attention_build(ATTENTION_SOFTMAX, MASK_FULL, 1, n, z, -INFINITY, a);
        if ((info = Linalg_singular_values(la, n, n, a, s)))
            goto done;
        kappa[k] = Conditioning_kappa(s[0], s[n - 1], n);
    }
    info = 0;
done:
    free(z);
    free(a);
    free(s);
    RandomStream_free(rs);
    Linalg_free(la);
    return info;
}

double SoftmaxDemo_closed_form(int n, double beta)
{
    double peak = expm1(beta);
    return peak != 0 ? (peak + n) / fabs(peak) : NAN;
}
