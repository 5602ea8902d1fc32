/* A bound on the rounding of one product with K (or Kᵀ), computed alongside it from the
 * magnitudes the product meets (docs/model.md §8, "the rounding of one product"): Higham's
 * componentwise |fl(AB) − AB| ≤ γ_k·|A||B| (Accuracy and Stability of Numerical Algorithms,
 * §3.5) carried step by step through SaWork_jvp and SaWork_vjp, so that each step's error
 * is charged with its own sum's length and the data's own |·| products, where
 * SaWork_product_error charges every step with the longest and Frobenius norms. */
#include "attnscope/conditioning.h"
#include "attnscope/layer.h"

#include "conditioning_internal.h"

#include "buffer_internal.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The running bound of one product and what it reuses.  Per product: |v| (the input), the
   accumulated bound on |fl(K v) − K v| (componentwise), and T×d, T×T and d×d scratch.  Per
   block (cached until the next SaWork_prepare_heads), per head, the magnitudes of the
   prepared products: |fl(X W_VO)| and |X||W_VO| (the latter bounds fl(X W_VO)'s rounding
   as γ_d|X||W_VO|), |fl(X M)|, |X||M|, |fl(X Mᵀ)| and |X||Mᵀ|. */
enum { BOUND_BUFFERS = 9 };

struct ProductBound {
    size_t cap[BOUND_BUFFERS];          /* bound_plan's buffers' sizes, in its order */
    double *input, *error, *mag, *mag2; /* T×d */
    double *value_c, *error_c, *work;   /* T×T: |Ċ|, its bound then Ȧ's, scratch */
    double *weights;                    /* d×d: |W_VO,h| or |M_h| */
    double *cache;                      /* 6 T×d per head */
    bool cached;
    double gamma_sum; /* γ_N of the output's sum, N its terms */
};

enum { CACHE_XW, CACHE_XW_ROUND, CACHE_XM, CACHE_XM_ROUND, CACHE_XMT, CACHE_XMT_ROUND, CACHES };

void ProductBound_forget(struct ProductBound *b)
{
    if (b)
        b->cached = false;
}

static double *cached(const SaWork *w, int h, int which)
{
    size_t td = (size_t)w->b[0].T * w->b[0].d;
    return w->bound->cache + td * ((size_t)CACHES * h + which);
}

/* out[k] = |in[k]| over `count` doubles. */
static void absolute(size_t count, const double *in, double *out)
{
    for (size_t k = 0; k < count; k++)
        out[k] = fabs(in[k]);
}

/* out = |X|·|F| (T×d, F d×d, transposed: |F|ᵀ), |F| through the bound's d×d scratch. */
static void times_absolute(const SaWork *w, const double *abs_x, const double *f, bool transposed,
                           double *out)
{
    int T = w->b[0].T, d = w->b[0].d;
    absolute((size_t)d * d, f, w->bound->weights);
    cblas_dgemm(CblasColMajor, CblasNoTrans, transposed ? CblasTrans : CblasNoTrans, T, d, d, 1.0,
                abs_x, T, w->bound->weights, d, 0.0, out, T);
}

/* The per-block magnitudes (struct ProductBound), |X| in the bound's mag. */
static void cache_block(SaWork *w)
{
    size_t td = (size_t)w->b[0].T * w->b[0].d;
    absolute(td, w->b[0].x, w->bound->mag);
    for (int h = 0; h < w->heads; h++) {
        const SaBlock *b = &w->b[h];
        absolute(td, w->xw + td * (size_t)h, cached(w, h, CACHE_XW));
        times_absolute(w, w->bound->mag, b->wvo, false, cached(w, h, CACHE_XW_ROUND));
        if (!b->m)
            continue;
        absolute(td, w->xm + td * (size_t)h, cached(w, h, CACHE_XM));
        times_absolute(w, w->bound->mag, b->m, false, cached(w, h, CACHE_XM_ROUND));
        absolute(td, w->xmt + td * (size_t)h, cached(w, h, CACHE_XMT));
        times_absolute(w, w->bound->mag, b->m, true, cached(w, h, CACHE_XMT_ROUND));
    }
    w->bound->cached = true;
}

/* The bound's buffers for T, d and `heads`, one list for their growth and their count. */
static void bound_plan(struct ProductBound *b, int T, int d, int heads,
                       LayerBuffer plan[BOUND_BUFFERS])
{
    size_t td = (size_t)T * d, tt = (size_t)T * T, dd = (size_t)d * d;
    const LayerBuffer list[BOUND_BUFFERS] = {
        {&b->input, td}, {&b->error, td},   {&b->mag, td},
        {&b->mag2, td},  {&b->value_c, tt}, {&b->error_c, tt},
        {&b->work, tt},  {&b->weights, dd}, {&b->cache, CACHES * td * (size_t)heads}};
    memcpy(plan, list, sizeof list);
}

void ProductBound_free(struct ProductBound *b)
{
    if (!b)
        return;
    LayerBuffer plan[BOUND_BUFFERS];
    bound_plan(b, 0, 0, 0, plan);
    for (int i = 0; i < BOUND_BUFFERS; i++)
        free(*plan[i].buffer);
    free(b);
}

size_t SaWork_product_bounded_doubles(int T, int d, int heads)
{
    struct ProductBound none;
    LayerBuffer plan[BOUND_BUFFERS];
    bound_plan(&none, T, d, heads, plan);
    size_t doubles = 0;
    for (int i = 0; i < BOUND_BUFFERS; i++)
        doubles += plan[i].doubles;
    return doubles;
}

static int bound_grow(SaWork *w)
{
    if (!w->bound && !(w->bound = calloc(1, sizeof *w->bound)))
        return -1;
    struct ProductBound *b = w->bound;
    LayerBuffer plan[BOUND_BUFFERS];
    bound_plan(b, w->b[0].T, w->b[0].d, w->heads, plan);
    for (int i = 0; i < BOUND_BUFFERS; i++) {
        if (plan[i].doubles <= b->cap[i])
            continue;
        if (Buffer_grow(plan[i].buffer, plan[i].doubles))
            return -1;
        b->cap[i] = plan[i].doubles;
        b->cached = false;
    }
    return 0;
}

/* Where the hooks follow every step: the plain products (softmax, or A not moving with X),
   without QK-norm, RoPE, the soft-cap, a branch LN or a centring that moves with X.
   Elsewhere SaWork_product_bounded falls back to η. */
static bool bound_follows(const SaWork *w)
{
    if (w->shaped_logits || w->branch_norm) /* the cap shapes the logits too */
        return false;
    for (int h = 0; h < w->heads; h++) {
        bool moves = w->b[h].m != NULL;
        if (moves && w->shape.c && w->shape.c->attention != ATTENTION_SOFTMAX)
            return false;
        if (moves && w->shape.c && w->b[h].mean_centred)
            return false;
    }
    return true;
}

/* The output's terms per entry: each head's value path (T products) and the derivative's
   (T, or 2T through Ċ's two halves in the VJP); two more for the logit scale's product and
   the zero the sum starts from. */
static double output_terms(const SaWork *w, bool transposed)
{
    double T = w->b[0].T, terms = 2;
    for (int h = 0; h < w->heads; h++) {
        if (w->part != PART_PERTURBATION)
            terms += T;
        if (w->b[h].m && w->part != PART_DOMINANT)
            terms += transposed ? 2 * T : T;
    }
    return terms;
}

/* Value path: fl(A_p t̂) summed into the output, t̂ = fl(Ẋ W) with |t̂ − ẊW| ≤ γ_d|Ẋ||W|:
   error += |A_p|·(γ_N|t̂| + γ_d|Ẋ||W|) (A_pᵀ and Wᵀ in the VJP). */
void ProductBound_value(SaWork *w, int h, bool transposed)
{
    struct ProductBound *b = w->bound;
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    times_absolute(w, b->input, w->b[h].wvo, transposed, b->mag2);
    double gamma_d = Linalg_rounding_gamma(d);
    for (size_t k = 0; k < td; k++)
        b->mag[k] = b->gamma_sum * fabs(w->tmp[k]) + gamma_d * b->mag2[k];
    absolute(tt, w->ap + tt * (size_t)h, b->work);
    cblas_dgemm(CblasColMajor, transposed ? CblasTrans : CblasNoTrans, CblasNoTrans, T, d, T, 1.0,
                b->work, T, b->mag, T, 1.0, b->error, T);
}

/* The derivative's input g (w->cdot) and a bound on its error: in the JVP
   Ċ = s(Ẋ·(XMᵀ)ᵀ + (XM)·Ẋᵀ), 2d products each scaled by s, from the prepared X·M that
   carry γ_d|X||M|: |s|(|Ẋ|·(γ_{2d+2}|fl(XMᵀ)| + γ_d|X||Mᵀ|)ᵀ + (γ_{2d+2}|fl(XM)| +
   γ_d|X||M|)·|Ẋ|ᵀ); in the VJP Ā = Ȳ·fl(X W_VO)ᵀ: γ_d|Ȳ|·(|fl(X W_VO)| + |X||W_VO|)ᵀ. */
void ProductBound_logits(SaWork *w, int h, bool transposed)
{
    struct ProductBound *b = w->bound;
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    double gamma_d = Linalg_rounding_gamma(d), gamma_c = Linalg_rounding_gamma(2.0 * d + 2.0),
           s = fabs(w->b[h].scale);
    absolute(tt, w->cdot, b->value_c);
    if (transposed) {
        const double *xw = cached(w, h, CACHE_XW), *xw_round = cached(w, h, CACHE_XW_ROUND);
        for (size_t k = 0; k < td; k++)
            b->mag[k] = gamma_d * (xw[k] + xw_round[k]);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, 1.0, b->input, T, b->mag, T,
                    0.0, b->error_c, T);
        return;
    }
    const double *xm = cached(w, h, CACHE_XM), *xm_round = cached(w, h, CACHE_XM_ROUND);
    const double *xmt = cached(w, h, CACHE_XMT), *xmt_round = cached(w, h, CACHE_XMT_ROUND);
    for (size_t k = 0; k < td; k++) {
        b->mag[k] = gamma_c * xm[k] + gamma_d * xm_round[k];
        b->mag2[k] = gamma_c * xmt[k] + gamma_d * xmt_round[k];
    }
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, s, b->input, T, b->mag2, T, 0.0,
                b->error_c, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, s, b->mag, T, b->input, T, 1.0,
                b->error_c, T);
}

/* The softmax derivative D(g) = a ⊙ (g − rowsum(a ⊙ g)), a ≥ 0, of the computed ĝ with
   |ĝ − g| ≤ E: D is linear, |D(Δ)| ≤ a ⊙ (E + rowsum(a ⊙ E)); its own rounding, the row sum
   (T terms from 0: γ_{T+1}·R, R = rowsum(a ⊙ |ĝ|)), the difference and the product (γ_2),
   is at most a ⊙ (γ_{T+3}·R + γ_2|ĝ|).  Their sum is the bound on Ȧ's (or C̄'s) error. */
void ProductBound_derivative(SaWork *w, int h)
{
    struct ProductBound *b = w->bound;
    int T = w->b[0].T;
    const double *a = w->a + (size_t)T * T * h;
    double *carried = b->mag, *own = b->mag2; /* T each: rowsum(a ⊙ E), rowsum(a ⊙ |ĝ|) */
    double gamma_row = Linalg_rounding_gamma(T + 3.0), gamma_2 = Linalg_rounding_gamma(2.0);
    memset(carried, 0, sizeof(double) * T);
    memset(own, 0, sizeof(double) * T);
    for (int j = 0; j < T; j++)
        for (int i = 0; i < T; i++) {
            size_t at = i + (size_t)j * T;
            carried[i] += a[at] * b->error_c[at];
            own[i] += a[at] * b->value_c[at];
        }
    for (int j = 0; j < T; j++)
        for (int i = 0; i < T; i++) {
            size_t at = i + (size_t)j * T;
            b->error_c[at] = a[at] * (b->error_c[at] + carried[i] + gamma_row * own[i] +
                                      gamma_2 * b->value_c[at]);
        }
}

/* The derivative's product summed into the output, D̂ = w->cdot with |D̂ − D| ≤ E: in the
   JVP D·(X W_VO), whose error is at most (γ_N|D̂| + E)·|fl(X W_VO)| + γ_d(|D̂| + E)·|X||W_VO|;
   in the VJP s(D·(X Mᵀ) + Dᵀ·(X M)), the same with |s| and X·Mᵀ, X·M. */
void ProductBound_output(SaWork *w, int h, bool transposed)
{
    struct ProductBound *b = w->bound;
    int T = w->b[0].T, d = w->b[0].d;
    size_t tt = (size_t)T * T;
    double gamma_d = Linalg_rounding_gamma(d), s = transposed ? fabs(w->b[h].scale) : 1.0;
    double *summed = b->work, *carried = b->value_c; /* γ_N|D̂| + E, γ_d(|D̂| + E) */
    for (size_t k = 0; k < tt; k++) {
        double size = fabs(w->cdot[k]);
        summed[k] = b->gamma_sum * size + b->error_c[k];
        carried[k] = gamma_d * (size + b->error_c[k]);
    }
    const double *right[2][2] = {{cached(w, h, CACHE_XW), cached(w, h, CACHE_XW_ROUND)},
                                 {cached(w, h, CACHE_XMT), cached(w, h, CACHE_XMT_ROUND)}};
    for (int part = 0; part < 2; part++)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, s, part ? carried : summed,
                    T, right[transposed][part], T, 1.0, b->error, T);
    for (int part = 0; transposed && part < 2; part++)
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, s, part ? carried : summed, T,
                    cached(w, h, part ? CACHE_XM_ROUND : CACHE_XM), T, 1.0, b->error, T);
}

double SaWork_product_bounded(SaWork *w, const double *v, bool transposed, double *out)
{
    int T = w->b[0].T, d = w->b[0].d;
    size_t n = (size_t)T * d;
    double worst = SaWork_product_error(w) * cblas_dnrm2((int)n, v, 1);
    if (!bound_follows(w) || bound_grow(w)) {
        if (transposed)
            SaWork_vjp(w, v, out);
        else
            SaWork_jvp(w, v, out);
        return worst;
    }
    struct ProductBound *b = w->bound;
    if (!b->cached)
        cache_block(w);
    absolute(n, v, b->input);
    memset(b->error, 0, sizeof(double) * n);
    double terms = output_terms(w, transposed);
    b->gamma_sum = Linalg_rounding_gamma(terms);
    w->bounding = true;
    if (transposed)
        SaWork_vjp(w, v, out);
    else
        SaWork_jvp(w, v, out);
    w->bounding = false;
    /* The bound is itself computed in floating point, from non-negative numbers only, so
       each entry is at least (1 − γ_chain) of its exact value, chain the operations along
       its deepest path (the cache's and the logits' d, the derivative's T, the output's T
       and the sum of every head's at most 6T terms into it, a few scalings), and its 2-norm
       of n entries at least (1 − γ_{n+2}) of its own. */
    double chain = 4.0 * (T + d) + 6.0 * w->heads * T + 32.0;
    double bound = cblas_dnrm2((int)n, b->error, 1) /
                   ((1.0 - Linalg_rounding_gamma(chain)) * (1.0 - Linalg_rounding_gamma(n + 2.0)));
    return isfinite(bound) && bound < worst ? bound : worst;
}
