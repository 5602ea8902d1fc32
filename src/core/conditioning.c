#include "attnscope/conditioning.h"

#include "attnscope/attention.h"
#include "attnscope/block.h"
#include "attnscope/init.h"

#include <cblas.h>
#include <float.h>
#include <stddef.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct SaWork {
    size_t td_cap, tt_cap;
    SaBlock b;
    bool perturbation_only;      /* products with E = K − B instead of K */
    const Linalg *stop;          /* whose stop hook the Lanczos steps poll, or NULL */
    double *xm, *xmt, *xw, *tmp; /* T×d: X·M, X·Mᵀ, X·W_VO, scratch */
    double *unit;                /* T×d: e_j for the Jacobian's columns */
    double *row;                 /* T: each row's Σ_j A_ij·g_ij */
    double *a, *ap, *cdot;       /* T×T column-major: softmax, applied, Ċ (or C̄) */
};

SaWork *SaWork_new(void)
{
    return calloc(1, sizeof(SaWork));
}

void SaWork_free(SaWork *w)
{
    if (!w)
        return;
    free(w->xm);
    free(w->xmt);
    free(w->xw);
    free(w->tmp);
    free(w->unit);
    free(w->row);
    free(w->a);
    free(w->ap);
    free(w->cdot);
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
    int T = b->T, d = b->d;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    if (td > w->td_cap) {
        if (grow(&w->xm, td) || grow(&w->xmt, td) || grow(&w->xw, td) || grow(&w->tmp, td) ||
            grow(&w->unit, td))
            return -1;
        w->td_cap = td;
    }
    if (tt > w->tt_cap) {
        if (grow(&w->a, tt) || grow(&w->ap, tt) || grow(&w->cdot, tt) || grow(&w->row, (size_t)T))
            return -1;
        w->tt_cap = tt;
    }
    w->b = *b;
    w->perturbation_only = false;
    if (b->m) {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, b->x, T, b->m, d, 0.0,
                    w->xm, T);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, d, 1.0, b->x, T, b->m, d, 0.0,
                    w->xmt, T);
        transpose_square(T, b->softmax, w->a);
    }
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, b->x, T, b->wvo, d, 0.0,
                w->xw, T);
    transpose_square(T, b->applied, w->ap);
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

void SaWork_jvp(SaWork *w, const double *dx, double *dy)
{
    const SaBlock *b = &w->b;
    int T = b->T, d = b->d;
    /* B·vec Ẋ = vec(A_applied·Ẋ·W_VO) */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, dx, T, b->wvo, d, 0.0,
                w->tmp, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, 1.0, w->ap, T, w->tmp, T, 0.0,
                dy, T);
    if (w->perturbation_only)
        memset(dy, 0, sizeof(double) * (size_t)T * d);
    if (!b->m)
        return;
    /* Ċ = s(Ẋ (X Mᵀ)ᵀ + (X M) Ẋᵀ), then Ȧ, then Ȧ·(X W_VO) */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, b->scale, dx, T, w->xmt, T, 0.0,
                w->cdot, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, b->scale, w->xm, T, dx, T, 1.0,
                w->cdot, T);
    softmax_derivative(T, w->a, w->cdot, w->row);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, 1.0, w->cdot, T, w->xw, T, 1.0,
                dy, T);
}

void SaWork_vjp(SaWork *w, const double *dy, double *dx)
{
    const SaBlock *b = &w->b;
    int T = b->T, d = b->d;
    /* Bᵀ·vec Ȳ = vec(A_appliedᵀ·Ȳ·W_VOᵀ) */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, d, 1.0, dy, T, b->wvo, d, 0.0,
                w->tmp, T);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, 1.0, w->ap, T, w->tmp, T, 0.0, dx,
                T);
    if (w->perturbation_only)
        memset(dx, 0, sizeof(double) * (size_t)T * d);
    if (!b->m)
        return;
    /* Ā = Ȳ (X W_VO)ᵀ, C̄ = the softmax derivative of Ā, X̄ += s(C̄ (X Mᵀ) + C̄ᵀ (X M)) */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, 1.0, dy, T, w->xw, T, 0.0,
                w->cdot, T);
    softmax_derivative(T, w->a, w->cdot, w->row);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, b->scale, w->cdot, T, w->xmt, T,
                1.0, dx, T);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, b->scale, w->cdot, T, w->xm, T,
                1.0, dx, T);
}

void SaWork_set_stop(SaWork *w, const Linalg *la)
{
    w->stop = la;
}

void SaWork_perturbation_only(SaWork *w, bool only)
{
    w->perturbation_only = only;
}

void SaWork_jacobian(SaWork *w, double *k)
{
    size_t n = (size_t)w->b.T * w->b.d;
    memset(w->unit, 0, sizeof(double) * n);
    for (size_t j = 0; j < n; j++) {
        w->unit[j] = 1.0;
        SaWork_jvp(w, w->unit, k + j * n);
        w->unit[j] = 0.0;
    }
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

/* out = KᵀK·v through the products (spare: n doubles). */
static void normal_product(SaWork *w, const double *v, double *work, double *out)
{
    SaWork_jvp(w, v, work);
    SaWork_vjp(w, work, out);
}

/* Bytes of Lanczos basis an estimate may hold: the step count is cut to fit. */
#define LANCZOS_BASIS_BYTES ((size_t)256 << 20)

int SaWork_extreme(SaWork *w, bool largest, int max_steps, double tolerance, uint64_t seed,
                   SingularValueEstimate *out)
{
    size_t n = (size_t)w->b.T * w->b.d;
    int steps = max_steps;
    if ((size_t)steps * n * sizeof(double) > LANCZOS_BASIS_BYTES)
        steps = (int)(LANCZOS_BASIS_BYTES / (n * sizeof(double))) - 1;
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
    double *alpha = tri, *beta = alpha + steps, *diag = beta + steps, *off = diag + steps;
    double *ritz = off + steps, *spare = basis + n * (size_t)(steps + 1);
    /* The extreme Ritz values θ of the tridiagonal lie inside [λ_min, λ_max] of KᵀK
       (Courant–Fischer), and r = β_j·|last component of θ's eigenvector| puts an eigenvalue of
       KᵀK within r of θ. */
    start_vector(n, seed, basis);
    int status = 0;
    for (int j = 0; j < steps; j++) {
        /* A step at T·d = 65536 takes ~10 ms: polling each one keeps a stop prompt. */
        if (w->stop && Linalg_stop_requested(w->stop)) {
            status = LINALG_STOPPED;
            out->value = out->error = NAN;
            break;
        }
        double *q = basis + (size_t)j * n, *next = basis + (size_t)(j + 1) * n;
        normal_product(w, q, spare, next);
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
        if ((j + 1) % 8 == 0 || last) {
            int m = j + 1;
            memcpy(diag, alpha, sizeof(double) * m);
            memcpy(off, beta, sizeof(double) * m);
            if (LAPACKE_dstev(LAPACK_COL_MAJOR, 'V', m, diag, off, ritz, m) != 0)
                break;
            int at = largest ? m - 1 : 0;
            double theta = diag[at], r = fabs(beta[j] * ritz[(size_t)at * m + m - 1]);
            if (theta > 0 && r <= tolerance * theta) {
                out->value = sqrt(theta);
                out->error = largest ? sqrt(theta + r) - sqrt(theta)
                                     : sqrt(theta) - sqrt(fmax(theta - r, 0.0));
                break;
            }
        }
        if (last)
            break;
        cblas_dscal((int)n, 1.0 / beta[j], next, 1);
    }
    free(basis);
    free(tri);
    return status;
}

/* ---- per layer, for the network and its counterpart ------------------------------------ */

enum { CURVES_PER_NETWORK = 11 };

/* The one list of a network's curves, for allocation and release. */
static void curve_slots(ConditioningCurves *c, double **slots[CURVES_PER_NETWORK])
{
    double **list[CURVES_PER_NETWORK] = {
        &c->kappa_attention,         &c->kappa_value_output, &c->kappa_dominant,
        &c->kappa_attention_product, &c->kappa_jacobian,     &c->kappa_jacobian_skip,
        &c->jacobian_norm,           &c->jacobian_s_min,     &c->jacobian_s_min_error,
        &c->premise_ratio,           &c->log10_norm};
    memcpy(slots, list, sizeof list);
}

const ConditioningSeries CONDITIONING_SERIES[] = {
    {"kappa_attention", offsetof(ConditioningCurves, kappa_attention), "κ(A_ℓ)"},
    {"kappa_value_output", offsetof(ConditioningCurves, kappa_value_output), "κ(W_VO,ℓ)"},
    {"kappa_dominant", offsetof(ConditioningCurves, kappa_dominant), "κ(B_ℓ) = κ(W_VO)κ(A)"},
    {"kappa_attention_product", offsetof(ConditioningCurves, kappa_attention_product),
     "κ(A_ℓ⋯A_1)"},
    {"kappa_jacobian", offsetof(ConditioningCurves, kappa_jacobian), "κ(K_ℓ)"},
    {"kappa_jacobian_skip", offsetof(ConditioningCurves, kappa_jacobian_skip), "κ(K_ℓ + I)"},
    {"jacobian_norm", offsetof(ConditioningCurves, jacobian_norm), "‖K_ℓ‖₂"},
    {"jacobian_s_min", offsetof(ConditioningCurves, jacobian_s_min), "s_min(K_ℓ)"},
    {"jacobian_s_min_error", offsetof(ConditioningCurves, jacobian_s_min_error),
     "bound on the error of s_min(K_ℓ)"},
    {"premise_ratio", offsetof(ConditioningCurves, premise_ratio), "‖E_ℓ‖₂ / s_min(B_ℓ)"},
};
const int CONDITIONING_SERIES_COUNT = sizeof CONDITIONING_SERIES / sizeof CONDITIONING_SERIES[0];

const double *ConditioningSeries_values(const ConditioningSeries *s, const ConditioningCurves *c)
{
    return *(double *const *)((const char *)c + s->offset);
}

void Conditioning_release(Conditioning *out)
{
    ConditioningCurves *nets[2] = {&out->network, &out->counterpart};
    for (int n = 0; n < 2; n++) {
        double **slots[CURVES_PER_NETWORK];
        curve_slots(nets[n], slots);
        for (int i = 0; i < CURVES_PER_NETWORK; i++) {
            free(*slots[i]);
            *slots[i] = NULL;
        }
    }
    free(out->attention_singular_values);
    free(out->value_output_singular_values);
    free(out->jacobian_singular_values);
    out->attention_singular_values = out->value_output_singular_values = NULL;
    out->jacobian_singular_values = NULL;
}

/* The matrix-free estimates: Lanczos certifies the extreme eigenvalues of KᵀK to 1e-6
   relative within this many steps, or reports NaN. */
enum { LANCZOS_STEPS_MAX = 240 };
#define LANCZOS_TOLERANCE 1e-6

/* The buffers of one run. */
typedef struct {
    const Config *c;
    const Progress *progress; /* or NULL */
    int T, d;
    size_t n;   /* T·d */
    bool exact; /* K built in full */
    RandomStream *random;
    Linalg *la;
    SaWork *sa;
    double *x, *xw, *q, *k;    /* T×d */
    double *wq, *wk, *m, *wvo; /* d×d */
    double *scratch; /* Init_scratch_doubles, d×d (W^V W^O), T×T (copies to decompose) */
    double *logits, *soft, *applied; /* T×T */
    double *product, *product_next;  /* T×T, A_ℓ⋯A_1 column-major, scaled to unit norm */
    double *gap_scratch, *row_stat, *row_max;
    double *sv_a, *sv_w;                            /* T, d */
    double *jacobian, *jacobian_copy, *jacobian_sv; /* n×n, n×n and n: exact path only */
} ConditioningRun;

static void run_free(ConditioningRun *r)
{
    double *all[] = {r->row_max,     r->x,        r->xw,
                     r->q,           r->k,        r->wq,
                     r->wk,          r->m,        r->wvo,
                     r->scratch,     r->logits,   r->soft,
                     r->applied,     r->product,  r->product_next,
                     r->gap_scratch, r->row_stat, r->sv_a,
                     r->sv_w,        r->jacobian, r->jacobian_copy,
                     r->jacobian_sv};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    SaWork_free(r->sa);
    Linalg_free(r->la);
    RandomStream_free(r->random);
}

static int run_alloc(ConditioningRun *r)
{
    size_t T = (size_t)r->T, d = (size_t)r->d, td = T * d, dd = d * d, tt = T * T;
    size_t scratch = Init_scratch_doubles(r->c);
    if (scratch < dd)
        scratch = dd;
    if (scratch < tt)
        scratch = tt;
    struct {
        double **p;
        size_t n;
    } plan[] = {
        {&r->x, td},       {&r->xw, td},           {&r->q, td},
        {&r->k, td},       {&r->wq, dd},           {&r->wk, dd},
        {&r->m, dd},       {&r->wvo, dd},          {&r->scratch, scratch},
        {&r->logits, tt},  {&r->soft, tt},         {&r->applied, tt},
        {&r->product, tt}, {&r->product_next, tt}, {&r->gap_scratch, Gap_scratch_size(r->T)},
        {&r->row_stat, T}, {&r->row_max, T},       {&r->sv_a, T},
        {&r->sv_w, d}};
    for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++)
        if (!(*plan[i].p = malloc(sizeof(double) * (plan[i].n ? plan[i].n : 1))))
            return -1;
    if (r->exact && (!(r->jacobian = malloc(sizeof(double) * r->n * r->n)) ||
                     !(r->jacobian_copy = malloc(sizeof(double) * r->n * r->n)) ||
                     !(r->jacobian_sv = malloc(sizeof(double) * r->n))))
        return -1;
    r->random = RandomStream_new();
    r->la = Linalg_new();
    r->sa = SaWork_new();
    return r->random && r->la && r->sa ? 0 : -1;
}

static int curves_alloc(ConditioningCurves *c, int depth)
{
    double **slots[CURVES_PER_NETWORK];
    curve_slots(c, slots);
    for (int i = 0; i < CURVES_PER_NETWORK; i++) {
        double *v = malloc(sizeof(double) * (size_t)(depth + 1));
        if (!v)
            return -1;
        for (int l = 0; l <= depth; l++)
            v[l] = NAN;
        *slots[i] = v;
    }
    return 0;
}

/* The orthonormal input X0 of docs/model.md §1.1, as Model_run draws it. */
static int input_tokens(ConditioningRun *r)
{
    int T = r->T, d = r->d;
    RandomStream_gaussian(r->random, r->c->seed, 0, ROLE_INPUT, 1.0, r->q, r->n);
    int info = Linalg_orthonormalise(r->la, d, T, r->q);
    if (info)
        return info;
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            r->x[i + (size_t)j * T] = r->q[j + (size_t)i * d];
    if (r->c->input_norm == INPUT_NORM_SQRT_D)
        cblas_dscal((int)r->n, sqrt((double)d), r->x, 1);
    return 0;
}

/* The weights of a layer, as Model_run draws them (init.h; each from its own stream, so
   the order does not matter): W_VO = W^V W^O, W^Q, W^K and M = W^Q W^Kᵀ, and the i.i.d.
   Markov logits. */
static int layer_weights(ConditioningRun *r, int layer)
{
    const Config *c = r->c;
    int d = r->d;
    int info = Init_draw(r->random, r->la, c, c->seed, layer, MATRIX_VALUE, r->wvo);
    if (!info && c->output != OUTPUT_IDENTITY) {
        /* W^O in the scratch, the product through M's buffer (M comes next). */
        info = Init_draw(r->random, r->la, c, c->seed, layer, MATRIX_OUTPUT, r->scratch);
        if (!info) {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0, r->wvo, d,
                        r->scratch, d, 0.0, r->m, d);
            memcpy(r->wvo, r->m, sizeof(double) * d * d);
        }
    }
    if (!info && Attention_has_query_key(c->attention)) {
        info = Init_draw_query_key(r->random, r->la, c, c->seed, layer, r->wq, r->wk, r->scratch);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, d, d, d, 1.0, r->wq, d, r->wk, d, 0.0,
                    r->m, d);
    }
    if (c->attention == ATTENTION_MARKOV)
        RandomStream_gaussian(r->random, c->seed, layer, ROLE_MARKOV, c->sigma_qk * c->sigma_qk,
                              r->logits, (size_t)r->T * r->T);
    return info;
}

/* The logits as Model_run forms them (row-major S, i.e. Sᵀ = K Qᵀ·s column-major), so that
   both passes see bit for bit the same attention. */
static void layer_logits(ConditioningRun *r)
{
    int T = r->T, d = r->d;
    if (!Attention_has_query_key(r->c->attention))
        return;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, r->x, T, r->wq, d, 0.0,
                r->q, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, r->x, T, r->wk, d, 0.0,
                r->k, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, Init_logit_scale(r->c), r->k, T,
                r->q, T, 0.0, r->logits, T);
}

/* Singular values of the m×m matrix a, descending, a left as it was (decomposed in scratch). */
static int singular_values(ConditioningRun *r, int m, const double *a, double *s)
{
    memcpy(r->scratch, a, sizeof(double) * (size_t)m * m);
    return Linalg_singular_values(r->la, m, m, r->scratch, s);
}

/* K column by column, polling the stop hook every few columns (at T·d = 4096 building K
   takes seconds). */
static int build_jacobian(ConditioningRun *r)
{
    enum { COLUMNS_PER_POLL = 64 };
    double *unit = r->q; /* free between the layers' logits */
    memset(unit, 0, sizeof(double) * r->n);
    for (size_t j = 0; j < r->n; j++) {
        if (j % COLUMNS_PER_POLL == 0 && Linalg_stop_requested(r->la))
            return LINALG_STOPPED;
        unit[j] = 1.0;
        SaWork_jvp(r->sa, unit, r->jacobian + j * r->n);
        unit[j] = 0.0;
    }
    return 0;
}

/* The Jacobian's numbers at one layer; the SaWork is prepared. */
static int jacobian_numbers(ConditioningRun *r, ConditioningCurves *out, int l, double s_min_b,
                            bool has_perturbation, double **shown_sv)
{
    size_t n = r->n;
    int info = 0;
    if (r->jacobian) {
        if ((info = build_jacobian(r)))
            return info;
        /* K's singular values from a copy, then K + I's from K itself. */
        memcpy(r->jacobian_copy, r->jacobian, sizeof(double) * n * n);
        info = Linalg_singular_values(r->la, (int)n, (int)n, r->jacobian_copy, r->jacobian_sv);
        if (info)
            return info;
        out->jacobian_norm[l] = r->jacobian_sv[0];
        out->jacobian_s_min[l] = r->jacobian_sv[n - 1];
        out->jacobian_s_min_error[l] = 0.0;
        out->kappa_jacobian[l] =
            Conditioning_kappa(r->jacobian_sv[0], r->jacobian_sv[n - 1], (int)n);
        if (shown_sv) {
            *shown_sv = malloc(sizeof(double) * n);
            if (!*shown_sv)
                return -1;
            memcpy(*shown_sv, r->jacobian_sv, sizeof(double) * n);
        }
        for (size_t i = 0; i < n; i++)
            r->jacobian[i + i * n] += 1.0;
        info = Linalg_singular_values(r->la, (int)n, (int)n, r->jacobian, r->jacobian_sv);
        if (info)
            return info;
        out->kappa_jacobian_skip[l] =
            Conditioning_kappa(r->jacobian_sv[0], r->jacobian_sv[n - 1], (int)n);
    } else {
        SingularValueEstimate top, smallest;
        if ((info = SaWork_extreme(r->sa, true, LANCZOS_STEPS_MAX, LANCZOS_TOLERANCE, 1, &top)) ||
            (info =
                 SaWork_extreme(r->sa, false, LANCZOS_STEPS_MAX, LANCZOS_TOLERANCE, 2, &smallest)))
            return info;
        out->jacobian_norm[l] = top.value;
        out->jacobian_s_min[l] = smallest.value;
        out->jacobian_s_min_error[l] = smallest.error;
        out->kappa_jacobian[l] = Conditioning_kappa(out->jacobian_norm[l], smallest.value, (int)n);
    }
    double e_norm = 0.0;
    if (has_perturbation) {
        SingularValueEstimate top;
        SaWork_perturbation_only(r->sa, true);
        info = SaWork_extreme(r->sa, true, LANCZOS_STEPS_MAX, LANCZOS_TOLERANCE, 3, &top);
        SaWork_perturbation_only(r->sa, false);
        if (info)
            return info;
        e_norm = top.value;
    }
    out->premise_ratio[l] = e_norm / s_min_b;
    return 0;
}

/* One network of the run, layer by layer: the forward pass of Model_run (attention, gap
   removal, values, skip, LayerNorm) with each layer's numbers at its input. */
static int network_pass(ConditioningRun *r, Gap gap, ConditioningCurves *out, bool shown_numbers,
                        Conditioning *result, const char *role)
{
    const Config *c = r->c;
    int T = r->T, d = r->d;
    size_t td = r->n, tt = (size_t)T * T;
    bool input_independent = Attention_is_input_independent(c->attention);
    bool differentiable = c->attention == ATTENTION_SOFTMAX || input_independent;
    double log_scale = 0.0;
    bool product_resolved = true, jacobian_noted = false;
    int info = input_tokens(r);
    if (info)
        return info;
    out->log10_norm[0] = log10(cblas_dnrm2((int)td, r->x, 1));
    memset(r->product, 0, sizeof(double) * tt);
    for (int i = 0; i < T; i++)
        r->product[i + (size_t)i * T] = 1.0;

    for (int l = 1; l <= c->depth; l++) {
        if ((info = layer_weights(r, l)))
            return info;
        layer_logits(r);
        Attention_build(c->attention, c->mask, c->window, T, r->logits, r->soft);
        memcpy(r->applied, r->soft, sizeof(double) * tt);
        GapOutcome outcome;
        info = Gap_apply(gap, c->attention, c->mask, c->window, T, r->applied, r->la,
                         r->gap_scratch, &outcome, &result->warnings);
        if (info)
            return info;

        /* The dominant term's factors. */
        if ((info = singular_values(r, T, r->applied, r->sv_a)) ||
            (info = singular_values(r, d, r->wvo, r->sv_w)))
            return info;
        out->kappa_attention[l] = Conditioning_kappa(r->sv_a[0], r->sv_a[T - 1], T);
        out->kappa_value_output[l] = Conditioning_kappa(r->sv_w[0], r->sv_w[d - 1], d);
        out->kappa_dominant[l] = out->kappa_attention[l] * out->kappa_value_output[l];
        /* s_min(B) only where both factors are resolved; else the ratio is undefined. */
        double s_min_b = isnan(out->kappa_dominant[l]) ? NAN : r->sv_a[T - 1] * r->sv_w[d - 1];
        if (shown_numbers && l == c->layer) {
            result->attention_singular_values = malloc(sizeof(double) * T);
            result->value_output_singular_values = malloc(sizeof(double) * d);
            if (!result->attention_singular_values || !result->value_output_singular_values)
                return -1;
            memcpy(result->attention_singular_values, r->sv_a, sizeof(double) * T);
            memcpy(result->value_output_singular_values, r->sv_w, sizeof(double) * d);
        }

        /* A_ℓ⋯A_1, kept at unit Frobenius norm (κ does not see the scale); the buffer of
           the applied matrix is its transpose to BLAS. */
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, T, T, 1.0, r->applied, T,
                    r->product, T, 0.0, r->product_next, T);
        double pnorm = cblas_dnrm2((int)tt, r->product_next, 1);
        double *swap = r->product;
        r->product = r->product_next;
        r->product_next = swap;
        if (pnorm > 0 && isfinite(pnorm)) {
            cblas_dscal((int)tt, 1.0 / pnorm, r->product, 1);
            if ((info = singular_values(r, T, r->product, r->sv_a)))
                return info;
            out->kappa_attention_product[l] = Conditioning_kappa(r->sv_a[0], r->sv_a[T - 1], T);
        }
        if (product_resolved && isnan(out->kappa_attention_product[l])) {
            product_resolved = false;
            Warnings_add(&result->warnings,
                         "kappa_attention_product of %s network: beyond double precision "
                         "(s_min below T*eps*s_max) from layer %d, null there",
                         role, l);
        }

        /* The Jacobian of the sub-block at X_{ℓ−1}. */
        bool own_derivative = outcome.applied == GAP_OFF || outcome.applied == GAP_CENTER;
        if (differentiable && own_derivative) {
            SaBlock block = {.T = T,
                             .d = d,
                             .x = r->x,
                             .m = input_independent ? NULL : r->m,
                             .scale = Init_logit_scale(c),
                             .wvo = r->wvo,
                             .softmax = r->soft,
                             .applied = r->applied};
            if (SaWork_prepare(r->sa, &block))
                return -1;
            info = jacobian_numbers(
                r, out, l, s_min_b, !input_independent,
                shown_numbers && l == c->layer ? &result->jacobian_singular_values : NULL);
            if (info)
                return info;
        } else if (!jacobian_noted) {
            jacobian_noted = true;
            Warnings_add(&result->warnings,
                         "the Jacobian of %s network is computed for softmax and the "
                         "input-independent kinds with gap off or center: null for %s, gap %s",
                         role, ATTENTION_NAMES.names[c->attention],
                         GAP_NAMES.names[outcome.applied]);
        }

        /* X_ℓ = keep·X_{ℓ−1} + branch·A X W_VO, then LayerNorm, as Model_run. */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, r->x, T, r->wvo, d,
                    0.0, r->xw, T);
        double keep = c->skip == SKIP_NONE ? 0.0 : c->skip_gain;
        double branch = c->skip == SKIP_SCALED ? c->branch_gain / sqrt((double)d) : c->branch_gain;
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, branch, r->applied, T, r->xw,
                    T, keep, r->x, T);
        Block_layernorm(c, T, d, r->x, r->row_stat, r->row_max);
        double norm = cblas_dnrm2((int)td, r->x, 1);
        if (!isfinite(norm)) {
            Warnings_add(&result->warnings,
                         "conditioning of %s network: the tokens overflow after layer %d, "
                         "null from there on",
                         role, l);
            return 0;
        }
        if (input_independent && norm > 0 && c->layernorm == LAYERNORM_NONE) {
            cblas_dscal((int)td, 1.0 / norm, r->x, 1);
            log_scale += log(norm);
            norm = 1.0;
        }
        out->log10_norm[l] = log10(norm) + log_scale / log(10.0);
        const Progress *p = r->progress;
        if (p && p->after_layer && !p->after_layer(p->context, shown_numbers ? 0 : 1, l, c->depth))
            return LINALG_STOPPED;
    }
    return 0;
}

size_t Conditioning_memory_estimate(const Config *c)
{
    return Conditioning_memory_estimate_path(c, true);
}

size_t Conditioning_memory_estimate_path(const Config *c, bool exact)
{
    size_t T = (size_t)c->tokens, d = (size_t)c->width, n = T * d;
    size_t forward = sizeof(double) * (12 * n + 12 * d * d + 12 * T * T);
    size_t lanczos = sizeof(double) * n * (LANCZOS_STEPS_MAX + 2);
    if (lanczos > LANCZOS_BASIS_BYTES + 2 * sizeof(double) * n)
        lanczos = LANCZOS_BASIS_BYTES + 2 * sizeof(double) * n;
    size_t exact_bytes = sizeof(double) * (2 * n * n + n);
    return forward + (exact && n <= CONDITIONING_EXACT_MAX ? exact_bytes : lanczos);
}

const char *Conditioning_unsupported(const Config *c)
{
    if (c->heads > 1)
        return "--conditioning: computed for one head (--heads 1): the Jacobian of a sum of "
               "heads is not the Kronecker product W_VO^T (x) A it takes apart";
    if (c->mlp != MLP_NONE)
        return "--conditioning: computed without an MLP (--mlp none): its forward pass is the "
               "attention layer's";
    if (c->ln_place != LN_PLACE_POST)
        return "--conditioning: computed with --ln-place post: pre-LN feeds the sub-block LN(X), "
               "whose Jacobian it does not include";
    return NULL;
}

bool Conditioning_exact(const Config *c, const ConditioningControl *control)
{
    return (size_t)c->tokens * c->width <= CONDITIONING_EXACT_MAX && !control->lanczos_only;
}

int Conditioning_run(const Config *c, Conditioning *out, char *err, size_t size)
{
    return Conditioning_run_controlled(c, &(ConditioningControl){0}, out, err, size);
}

int Conditioning_run_controlled(const Config *c, const ConditioningControl *control,
                                Conditioning *out, char *err, size_t size)
{
    memset(out, 0, sizeof *out);
    out->config = *c;
    out->counterpart_gap = Gap_toggled(c->gap);
    ConditioningRun r = {.c = c,
                         .progress = control->progress,
                         .T = c->tokens,
                         .d = c->width,
                         .exact = Conditioning_exact(c, control)};
    r.n = (size_t)r.T * r.d;
    out->jacobian_exact = r.exact;
    int info = -1;
    if (run_alloc(&r) || curves_alloc(&out->network, c->depth) ||
        curves_alloc(&out->counterpart, c->depth))
        goto done;
    const Progress *p = control->progress;
    Linalg_set_isolation(r.la, control->isolation);
    if (p && p->stop_requested)
        Linalg_set_stop(r.la, (LinalgStop){.requested = p->stop_requested, .context = p->context});
    SaWork_set_stop(r.sa, r.la);
    if ((info = network_pass(&r, c->gap, &out->network, true, out, "the")) ||
        (info = network_pass(&r, out->counterpart_gap, &out->counterpart, false, out,
                             "the counterpart")))
        goto done;
    if (!out->jacobian_exact && r.n > CONDITIONING_EXACT_MAX)
        Warnings_add(&out->warnings,
                     "conditioning: T*d = %zu > %d, so K is not built: ||K||_2 and s_min(K) "
                     "by Lanczos on K^T K (null where not certified to 1e-6), "
                     "kappa_jacobian_skip null",
                     r.n, CONDITIONING_EXACT_MAX);
    else if (!out->jacobian_exact)
        Warnings_add(&out->warnings,
                     "conditioning: building K (%zu x %zu) does not fit the time or memory "
                     "budget, so ||K||_2 and s_min(K) are by Lanczos on K^T K (null where not "
                     "certified to 1e-6), kappa_jacobian_skip null",
                     r.n, r.n);
done:
    run_free(&r);
    if (info == LINALG_STOPPED) {
        snprintf(err, size, "conditioning at T = %d, d = %d: stopped", c->tokens, c->width);
        Conditioning_release(out);
        return CONDITIONING_STOPPED;
    }
    if (info) {
        snprintf(err, size, "conditioning at T = %d, d = %d: %s", c->tokens, c->width,
                 info < 0 ? "out of memory" : "a LAPACK call did not converge");
        Conditioning_release(out);
        return -1;
    }
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
        Attention_build(ATTENTION_SOFTMAX, MASK_FULL, 1, n, z, a);
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
