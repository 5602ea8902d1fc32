/* The conditioning of one self-attention sub-block (docs/model.md §8): the Jacobian K of
 * f(X) = Σ_h A_h(X)·X·W_VO,h and its parts, as products with vectors and in full, its extreme
 * singular values by Lanczos, κ, and the softmax demo.  The per-layer run of a network
 * through these is conditioning_run.c. */
#include "attnscope/conditioning.h"

#include "attnscope/attention.h"

#include <cblas.h>
#include <float.h>
#include <stddef.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Which part of K the products apply. */
typedef enum { PART_WHOLE, PART_PERTURBATION, PART_DOMINANT } Part;

struct SaWork {
    size_t td_cap, tt_cap; /* per head */
    int heads_cap, heads;
    SaBlock *b;         /* one per head */
    Part part;          /* K, E = K − B or B */
    const Linalg *stop; /* whose stop hook the Lanczos steps poll, or NULL */
    double *xm, *xmt;   /* T×d per head: X·M_h, X·M_hᵀ */
    double *xw;         /* T×d per head: X·W_VO,h */
    double *tmp, *unit; /* T×d: scratch, e_j for the Jacobian's columns */
    double *row;        /* T: each row's Σ_j A_ij·g_ij */
    double *a, *ap;     /* T×T per head, column-major: softmax, applied */
    double *cdot;       /* T×T: Ċ (or C̄) */
};

SaWork *SaWork_new(void)
{
    return calloc(1, sizeof(SaWork));
}

void SaWork_free(SaWork *w)
{
    if (!w)
        return;
    double *all[] = {w->xm, w->xmt, w->xw, w->tmp, w->unit, w->row, w->a, w->ap, w->cdot};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    free(w->b);
    free(w);
}

static int grow(double **buf, size_t n)
{
    double *p = realloc(*buf, sizeof(double) * n);
    if (!p)
        return -1;
    *buf = p;
    return 0;
}

/* Row-major T×T into column-major. */
static void transpose_square(int T, const double *row_major, double *col_major)
{
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            col_major[i + (size_t)j * T] = row_major[(size_t)i * T + j];
}

int SaWork_prepare(SaWork *w, const SaBlock *b)
{
    return SaWork_prepare_heads(w, b, 1);
}

int SaWork_prepare_heads(SaWork *w, const SaBlock *blocks, int heads)
{
    int T = blocks[0].T, d = blocks[0].d;
    size_t td = (size_t)T * d, tt = (size_t)T * T, h_td = td * (size_t)heads,
           h_tt = tt * (size_t)heads;
    if (heads > w->heads_cap || td > w->td_cap || tt > w->tt_cap) {
        SaBlock *b = realloc(w->b, sizeof(SaBlock) * (size_t)heads);
        if (!b)
            return -1;
        w->b = b;
        if (grow(&w->xm, h_td) || grow(&w->xmt, h_td) || grow(&w->xw, h_td) || grow(&w->tmp, td) ||
            grow(&w->unit, td) || grow(&w->a, h_tt) || grow(&w->ap, h_tt) || grow(&w->cdot, tt) ||
            grow(&w->row, (size_t)T))
            return -1;
        w->heads_cap = heads;
        w->td_cap = td;
        w->tt_cap = tt;
    }
    w->heads = heads;
    w->part = PART_WHOLE;
    for (int h = 0; h < heads; h++) {
        const SaBlock *b = &blocks[h];
        w->b[h] = *b;
        double *xm = w->xm + td * (size_t)h, *xmt = w->xmt + td * (size_t)h;
        if (b->m) {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, b->x, T, b->m, d,
                        0.0, xm, T);
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, d, 1.0, b->x, T, b->m, d,
                        0.0, xmt, T);
            transpose_square(T, b->softmax, w->a + tt * (size_t)h);
        }
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, b->x, T, b->wvo, d,
                    0.0, w->xw + td * (size_t)h, T);
        transpose_square(T, b->applied, w->ap + tt * (size_t)h);
    }
    return 0;
}

/* g ← A ⊙ (g − rowsum(A ⊙ g)·1ᵀ): the softmax's derivative applied to g, which is its own
   transpose (the softmax Jacobian of each row is symmetric), so the JVP and VJP share it. */
static void softmax_derivative(int T, const double *a, double *g, double *row)
{
    memset(row, 0, sizeof(double) * T);
    for (int j = 0; j < T; j++)
        for (int i = 0; i < T; i++)
            row[i] += a[i + (size_t)j * T] * g[i + (size_t)j * T];
    for (int j = 0; j < T; j++)
        for (int i = 0; i < T; i++)
            g[i + (size_t)j * T] = a[i + (size_t)j * T] * (g[i + (size_t)j * T] - row[i]);
}

/* K = Σ_h K_h: each head's term added to dy (the first one overwrites it). */
void SaWork_jvp(SaWork *w, const double *dx, double *dy)
{
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    memset(dy, 0, sizeof(double) * td);
    for (int h = 0; h < w->heads; h++) {
        const SaBlock *b = &w->b[h];
        /* B_h·vec Ẋ = vec(A_applied·Ẋ·W_VO) */
        if (w->part != PART_PERTURBATION) {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, dx, T, b->wvo, d,
                        0.0, w->tmp, T);
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, 1.0,
                        w->ap + tt * (size_t)h, T, w->tmp, T, 1.0, dy, T);
        }
        if (!b->m || w->part == PART_DOMINANT)
            continue;
        /* Ċ = s(Ẋ (X Mᵀ)ᵀ + (X M) Ẋᵀ), then Ȧ, then Ȧ·(X W_VO) */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, b->scale, dx, T,
                    w->xmt + td * (size_t)h, T, 0.0, w->cdot, T);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, b->scale,
                    w->xm + td * (size_t)h, T, dx, T, 1.0, w->cdot, T);
        softmax_derivative(T, w->a + tt * (size_t)h, w->cdot, w->row);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, 1.0, w->cdot, T,
                    w->xw + td * (size_t)h, T, 1.0, dy, T);
    }
}

void SaWork_vjp(SaWork *w, const double *dy, double *dx)
{
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    memset(dx, 0, sizeof(double) * td);
    for (int h = 0; h < w->heads; h++) {
        const SaBlock *b = &w->b[h];
        /* B_hᵀ·vec Ȳ = vec(A_appliedᵀ·Ȳ·W_VOᵀ) */
        if (w->part != PART_PERTURBATION) {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, d, 1.0, dy, T, b->wvo, d,
                        0.0, w->tmp, T);
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, 1.0,
                        w->ap + tt * (size_t)h, T, w->tmp, T, 1.0, dx, T);
        }
        if (!b->m || w->part == PART_DOMINANT)
            continue;
        /* Ā = Ȳ (X W_VO)ᵀ, C̄ = the softmax derivative of Ā, X̄ += s(C̄ (X Mᵀ) + C̄ᵀ (X M)) */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, 1.0, dy, T,
                    w->xw + td * (size_t)h, T, 0.0, w->cdot, T);
        softmax_derivative(T, w->a + tt * (size_t)h, w->cdot, w->row);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, b->scale, w->cdot, T,
                    w->xmt + td * (size_t)h, T, 1.0, dx, T);
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, b->scale, w->cdot, T,
                    w->xm + td * (size_t)h, T, 1.0, dx, T);
    }
}

void SaWork_set_stop(SaWork *w, const Linalg *la)
{
    w->stop = la;
}

void SaWork_perturbation_only(SaWork *w, bool only)
{
    w->part = only ? PART_PERTURBATION : PART_WHOLE;
}

void SaWork_dominant_only(SaWork *w, bool only)
{
    w->part = only ? PART_DOMINANT : PART_WHOLE;
}

int SaWork_jacobian(SaWork *w, double *k)
{
    /* At T·d = 4096 building K takes seconds: the stop hook is polled every few columns. */
    enum { COLUMNS_PER_POLL = 64 };
    size_t n = (size_t)w->b[0].T * w->b[0].d;
    memset(w->unit, 0, sizeof(double) * n);
    for (size_t j = 0; j < n; j++) {
        if (j % COLUMNS_PER_POLL == 0 && w->stop && Linalg_stop_requested(w->stop))
            return LINALG_STOPPED;
        w->unit[j] = 1.0;
        SaWork_jvp(w, w->unit, k + j * n);
        w->unit[j] = 0.0;
    }
    return 0;
}

double Conditioning_kappa(double s_max, double s_min, int n)
{
    if (!(s_max > 0) || !isfinite(s_max) || !(s_min > n * DBL_EPSILON * s_max))
        return NAN;
    return s_max / s_min;
}

/* A fixed pseudo-random start vector (splitmix64 of the index): deterministic, and with
   probability one not orthogonal to the singular vectors sought. */
static void start_vector(size_t n, uint64_t seed, double *v)
{
    double norm = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        v[i] = (double)(z >> 11) / 9007199254740992.0 - 0.5;
        norm += v[i] * v[i];
    }
    cblas_dscal((int)n, 1.0 / sqrt(norm), v, 1);
}

/* A symmetric positive semi-definite operator: out = S·v (v, out of n doubles, distinct). */
typedef void (*SymmetricProduct)(void *context, const double *v, double *out);

/* Where Lanczos left an extreme eigenvalue of S: its Ritz value θ and the residual r of its
   Ritz vector (an eigenvalue of S lies within r of θ), both NaN unless r ≤ tolerance·θ. */
typedef struct {
    double theta, residual;
    int steps;
} RitzEstimate;

/* Lanczos on S with full reorthogonalisation from a fixed start vector, the Ritz values
   checked every check_every steps and at the last: basis holds n·(steps + 1) doubles, tri
   4·steps + steps² (LanczosWork).  Returns 0 or LINALG_STOPPED (stop's hook asked). */
static int lanczos_extreme(size_t n, SymmetricProduct apply, void *context, const Linalg *stop,
                           bool largest, int steps, int check_every, double tolerance,
                           uint64_t seed, double *basis, double *tri, RitzEstimate *out)
{
    out->theta = out->residual = NAN;
    out->steps = 0;
    double *alpha = tri, *beta = alpha + steps, *diag = beta + steps, *off = diag + steps;
    double *ritz = off + steps;
    /* The extreme Ritz values θ of the tridiagonal lie inside [λ_min, λ_max] of S
       (Courant–Fischer), and r = β_j·|last component of θ's eigenvector| puts an eigenvalue of
       S within r of θ. */
    start_vector(n, seed, basis);
    for (int j = 0; j < steps; j++) {
        /* A step at T·d = 65536 takes ~10 ms: polling each one keeps a stop prompt. */
        if (stop && Linalg_stop_requested(stop)) {
            out->theta = out->residual = NAN;
            return LINALG_STOPPED;
        }
        double *q = basis + (size_t)j * n, *next = basis + (size_t)(j + 1) * n;
        apply(context, q, next);
        alpha[j] = cblas_ddot((int)n, q, 1, next, 1);
        /* Twice is enough (Kahan's "twice is enough") to keep the basis orthogonal. */
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i <= j; i++) {
                const double *qi = basis + (size_t)i * n;
                cblas_daxpy((int)n, -cblas_ddot((int)n, qi, 1, next, 1), qi, 1, next, 1);
            }
        beta[j] = cblas_dnrm2((int)n, next, 1);
        out->steps = j + 1;
        bool last = j + 1 == steps || !(beta[j] > 0);
        if ((j + 1) % check_every == 0 || last) {
            int m = j + 1;
            memcpy(diag, alpha, sizeof(double) * m);
            memcpy(off, beta, sizeof(double) * m);
            if (LAPACKE_dstev(LAPACK_COL_MAJOR, 'V', m, diag, off, ritz, m) != 0)
                break;
            int at = largest ? m - 1 : 0;
            double theta = diag[at], r = fabs(beta[j] * ritz[(size_t)at * m + m - 1]);
            if (theta > 0 && r <= tolerance * theta) {
                out->theta = theta;
                out->residual = r;
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

int SaWork_extreme(SaWork *w, bool largest, int max_steps, double tolerance, uint64_t seed,
                   SingularValueEstimate *out)
{
    size_t n = (size_t)w->b[0].T * w->b[0].d;
    int steps = max_steps;
    if ((size_t)steps * n * sizeof(double) > CONDITIONING_LANCZOS_BASIS_BYTES)
        steps = (int)(CONDITIONING_LANCZOS_BASIS_BYTES / (n * sizeof(double))) - 1;
    if ((size_t)steps > n)
        steps = (int)n;
    out->value = out->error = NAN;
    out->steps = 0;
    double *basis = malloc(sizeof(double) * n * (size_t)(steps + 2));
    double *tri = malloc(sizeof(double) * (4 * (size_t)steps + (size_t)steps * steps));
    if (!basis || !tri || steps < 1) {
        free(basis);
        free(tri);
        return -1;
    }
    NormalProduct product = {w, basis + n * (size_t)(steps + 1)};
    RitzEstimate ritz;
    int status = lanczos_extreme(n, normal_product, &product, w->stop, largest, steps, 8, tolerance,
                                 seed, basis, tri, &ritz);
    out->steps = ritz.steps;
    if (!isnan(ritz.theta)) {
        double theta = ritz.theta, r = ritz.residual;
        out->value = sqrt(theta);
        out->error =
            largest ? sqrt(theta + r) - sqrt(theta) : sqrt(theta) - sqrt(fmax(theta - r, 0.0));
    }
    free(basis);
    free(tri);
    return status;
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
    if (!pivots || grow(&e->basis, n * (DENSE_STEPS_MAX + 2)) ||
        grow(&e->tri, 4 * DENSE_STEPS_MAX + DENSE_STEPS_MAX * DENSE_STEPS_MAX))
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
    int steps = n < DENSE_STEPS_MAX ? n : DENSE_STEPS_MAX;
    DenseOperator o = {n, k, lu, e->pivots, e->basis + size * (DENSE_STEPS_MAX + 1)};
    RitzEstimate top, inverse;
    int status = lanczos_extreme(size, dense_normal, &o, stop, true, steps, DENSE_CHECK_EVERY,
                                 DENSE_TOLERANCE, 1, e->basis, e->tri, &top);
    if (status || isnan(top.theta))
        return status ? status : DENSE_NOT_CERTIFIED;
    memcpy(lu, k, sizeof(double) * size * size);
    /* An exactly singular factor has no inverse to iterate with. */
    if ((status = lu_stoppable(n, lu, e->pivots, stop)))
        return status;
    status = lanczos_extreme(size, dense_inverse_normal, &o, stop, true, steps, DENSE_CHECK_EVERY,
                             DENSE_TOLERANCE, 2, e->basis, e->tri, &inverse);
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
