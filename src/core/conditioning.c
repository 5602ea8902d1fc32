/* The conditioning of one self-attention sub-block (docs/model.md §8): the Jacobian K of
 * f(X) = Σ_h A_h(X)·X·W_VO,h and its parts, as products with vectors and in full.  The layer's
 * shape around f that the products pass through (QK-norm, RoPE, the soft-cap, a branch LN) is
 * conditioning_shape.c's; K's extreme singular values, κ and the softmax demo are
 * conditioning_extreme.c's; the per-layer run of a network through these is
 * conditioning_run.c. */
#include "attnscope/conditioning.h"

#include "attnscope/attention.h"
#include "attnscope/layer.h"
#include "attnscope/qk.h"

#include "buffer_internal.h"
#include "conditioning_internal.h"

#include <cblas.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    free(w->shape_block);
    ProductBound_free(w->bound);
    free(w);
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
        if (Buffer_grow(&w->xm, h_td) || Buffer_grow(&w->xmt, h_td) || Buffer_grow(&w->xw, h_td) ||
            Buffer_grow(&w->tmp, td) || Buffer_grow(&w->unit, td) || Buffer_grow(&w->a, h_tt) ||
            Buffer_grow(&w->ap, h_tt) || Buffer_grow(&w->cdot, tt) ||
            Buffer_grow(&w->row, (size_t)T))
            return -1;
        w->heads_cap = heads;
        w->td_cap = td;
        w->tt_cap = tt;
    }
    w->heads = heads;
    w->part = PART_WHOLE;
    ProductBound_forget(w->bound);
    w->shaped_logits = w->capped = w->branch_norm = false;
    w->shape = (SaShape){0};
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

double SaWork_product_flops(const Config *c, int layer)
{
    double T = c->tokens, d = c->width, H = c->heads, G = Config_kv_heads(c);
    double dh = Config_head_width(c), nk = Layer_kv_width(c);
    /* Per head Ẋ·W_VO,h, A_h·(Ẋ W_VO,h), Ȧ·(X W_VO,h), and Ċ's two halves through M_h. */
    double flops = H * (2 * T * d * d + 4 * T * T * d);
    if (!SaShape_logits_shaped(c, layer)) {
        flops += H * 4 * T * T * d;
    } else {
        /* Ẋ·W^Q, Ẋ·W^K, Ċ's halves on d_h columns, then per entry of the projections the
           norm's product (a dot, a mean, the update: 6 flops) and RoPE's turn (3 flops, its
           cosines and sines from SaWork_shape's table); the slope on each logit. */
        flops += 2 * T * d * (H * dh + nk) + H * 4 * T * T * dh;
        if (Qk_normalised(c))
            flops += 6 * T * (H * dh + nk);
        if (Qk_rotates(c, layer))
            flops += (H + G) * T * Qk_rotated_width(c) * 3;
        if (c->logit_softcap > 0)
            flops += H * T * T;
    }
    if (Layer_branch_norm(c)) /* the branch LN's product on T×d */
        flops += 6 * T * d;
    return flops;
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

/* Each row of g (T×T, column-major) minus its mean over the row's allowed keys, as gap_center
   does to A where that mean moves with X. */
static void centre_allowed_rows(const SaWork *w, double *g)
{
    const Config *c = w->shape.c;
    int T = w->b[0].T;
    for (int i = 0; i < T; i++) {
        int first, last;
        Mask_row_range(Config_layer_mask(c, w->shape.layer), c->window, T, i, &first, &last);
        double mean = 0;
        for (int j = first; j <= last; j++)
            mean += g[i + (size_t)j * T];
        mean /= last - first + 1;
        for (int j = first; j <= last; j++)
            g[i + (size_t)j * T] -= mean;
    }
}

/* g ← ∂A/∂Z applied to g (w->cdot, column-major) for head h: the softmax's derivative, or
   with an SaShape the kind's entry by entry (relu: 1/T where A > 0; sigmoid, A = σ(Z − log T):
   A(1 − A); linear: 1 on the allowed keys), each its own transpose; then, where the applied
   matrix is mean-centred, each row centred over its allowed keys (a symmetric projection). */
static void attention_derivative(SaWork *w, int h, bool transposed, double *g)
{
    int T = w->b[0].T;
    const double *a = w->a + (size_t)T * T * h;
    const Config *c = w->shape.c;
    Attention kind = c ? c->attention : ATTENTION_SOFTMAX;
    bool centred = c && w->b[h].mean_centred;
    if (centred && transposed)
        centre_allowed_rows(w, g);
    if (kind == ATTENTION_SOFTMAX)
        softmax_derivative(T, a, g, w->row);
    for (int i = 0; kind != ATTENTION_SOFTMAX && i < T; i++) {
        int first, last;
        Mask_row_range(Config_layer_mask(c, w->shape.layer), c->window, T, i, &first, &last);
        for (int j = 0; j < T; j++) {
            double aij = a[i + (size_t)j * T], slope = 0;
            if (j >= first && j <= last)
                slope = kind == ATTENTION_RELU      ? (aij > 0 ? 1.0 / T : 0.0)
                        : kind == ATTENTION_SIGMOID ? aij * (1 - aij)
                                                    : 1.0;
            g[i + (size_t)j * T] *= slope;
        }
    }
    if (centred && !transposed)
        centre_allowed_rows(w, g);
}

/* out += B_h·in = vec(A_applied·in·W_VO), or out += B_hᵀ·in = vec(A_appliedᵀ·in·W_VOᵀ): head
   h's dominant term, through w->tmp, with the running bound's hook after it. */
static void value_product(SaWork *w, int h, bool transposed, const double *in, double *out)
{
    const SaBlock *b = &w->b[h];
    int T = b->T, d = b->d;
    CBLAS_TRANSPOSE op = transposed ? CblasTrans : CblasNoTrans;
    cblas_dgemm(CblasColMajor, CblasNoTrans, op, T, d, d, 1.0, in, T, b->wvo, d, 0.0, w->tmp, T);
    cblas_dgemm(CblasColMajor, op, CblasNoTrans, T, d, T, 1.0, w->ap + (size_t)T * T * h, T, w->tmp,
                T, 1.0, out, T);
    if (w->bounding)
        ProductBound_value(w, h, transposed);
}

/* Ċ_h of the JVP into w->cdot: s(Ẋ (X Mᵀ)ᵀ + (X M) Ẋᵀ), or through the shaped projections
   s(Q̇_h K̃_gᵀ + Q̃_h K̇_gᵀ); times the soft-cap's slope. */
static void logit_tangent(SaWork *w, int h, const double *dx)
{
    const SaBlock *b = &w->b[h];
    int T = b->T, d = b->d;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    if (w->shaped_logits) {
        const Config *c = w->shape.c;
        int dh = Config_head_width(c);
        size_t q = (size_t)T * dh * h, k = (size_t)T * dh * Config_kv_head_of(c, h);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, dh, b->scale, w->qdot + q, T,
                    w->kt + k, T, 0.0, w->cdot, T);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, dh, b->scale, w->qt + q, T,
                    w->kdot + k, T, 1.0, w->cdot, T);
    } else if (!(w->bounding && ProductBound_compensated_logits(w, h, false))) {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, b->scale, dx, T,
                    w->xmt + td * (size_t)h, T, 0.0, w->cdot, T);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, b->scale,
                    w->xm + td * (size_t)h, T, dx, T, 1.0, w->cdot, T);
    }
    for (size_t k = 0; w->capped && k < tt; k++)
        w->cdot[k] *= w->cap_slope[tt * (size_t)h + k];
}

/* K = Σ_h K_h: each head's term added to dy (the first one overwrites it), then the branch
   LN's Jacobian where one follows f. */
void SaWork_jvp(SaWork *w, const double *dx, double *dy)
{
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d;
    memset(dy, 0, sizeof(double) * td);
    if (w->shaped_logits && w->part != PART_DOMINANT)
        SaShape_project_tangent(w, dx);
    for (int h = 0; h < w->heads; h++) {
        const SaBlock *b = &w->b[h];
        if (w->part != PART_PERTURBATION)
            value_product(w, h, false, dx, dy);
        if (!b->m || w->part == PART_DOMINANT)
            continue;
        /* Ċ, then Ȧ, then Ȧ·(X W_VO) */
        logit_tangent(w, h, dx);
        if (w->bounding)
            ProductBound_logits(w, h, false);
        attention_derivative(w, h, false, w->cdot);
        if (w->bounding)
            ProductBound_derivative(w, h);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, 1.0, w->cdot, T,
                    w->xw + td * (size_t)h, T, 1.0, dy, T);
        if (w->bounding)
            ProductBound_output(w, h, false);
    }
    if (w->branch_norm)
        SaShape_branch_product(w, false, dy);
}

/* X̄ += s(C̄ (X Mᵀ) + C̄ᵀ (X M)), or through the shaped projections Q̄_h += s·C̄ K̃_g,
   K̄_g += s·C̄ᵀ Q̃_h (projected back once every head has added its part). */
static void logit_cotangent(SaWork *w, int h, double *dx)
{
    const SaBlock *b = &w->b[h];
    int T = b->T, d = b->d;
    size_t td = (size_t)T * d;
    if (w->shaped_logits) {
        const Config *c = w->shape.c;
        int dh = Config_head_width(c);
        size_t q = (size_t)T * dh * h, k = (size_t)T * dh * Config_kv_head_of(c, h);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, dh, T, b->scale, w->cdot, T,
                    w->kt + k, T, 1.0, w->qdot + q, T);
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, dh, T, b->scale, w->cdot, T,
                    w->qt + q, T, 1.0, w->kdot + k, T);
        return;
    }
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, b->scale, w->cdot, T,
                w->xmt + td * (size_t)h, T, 1.0, dx, T);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, b->scale, w->cdot, T,
                w->xm + td * (size_t)h, T, 1.0, dx, T);
}

void SaWork_vjp(SaWork *w, const double *dy, double *dx)
{
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    if (w->branch_norm) { /* Ȳ through the branch LN's transpose first */
        memcpy(w->ybar, dy, sizeof(double) * td);
        SaShape_branch_product(w, true, w->ybar);
        dy = w->ybar;
    }
    memset(dx, 0, sizeof(double) * td);
    bool projections = w->shaped_logits && w->part != PART_DOMINANT;
    if (projections) {
        memset(w->qdot, 0, sizeof(double) * T * Config_heads_width(w->shape.c));
        memset(w->kdot, 0, sizeof(double) * T * Layer_kv_width(w->shape.c));
    }
    for (int h = 0; h < w->heads; h++) {
        const SaBlock *b = &w->b[h];
        if (w->part != PART_PERTURBATION)
            value_product(w, h, true, dy, dx);
        if (!b->m || w->part == PART_DOMINANT)
            continue;
        /* Ā = Ȳ (X W_VO)ᵀ, C̄ = the softmax derivative of Ā (times the cap's slope), then X̄ */
        if (!(w->bounding && ProductBound_compensated_logits(w, h, true)))
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, 1.0, dy, T,
                        w->xw + td * (size_t)h, T, 0.0, w->cdot, T);
        if (w->bounding)
            ProductBound_logits(w, h, true);
        attention_derivative(w, h, true, w->cdot);
        if (w->bounding)
            ProductBound_derivative(w, h);
        for (size_t k = 0; w->capped && k < tt; k++)
            w->cdot[k] *= w->cap_slope[tt * (size_t)h + k];
        logit_cotangent(w, h, dx);
        if (w->bounding)
            ProductBound_output(w, h, true);
    }
    if (projections)
        SaShape_project_cotangent(w, dx);
}

/* ‖a‖_F of `count` doubles. */
static double frobenius(size_t count, const double *a)
{
    return cblas_dnrm2((int)count, a, 1);
}

/* kε/(1 − kε): Higham's γ of 2k operations (ε = 2u), the constant η is stated with
   (docs/model.md §8). */
static double eta_gamma(double k)
{
    return Linalg_rounding_gamma(2.0 * k);
}

/* ‖Ċ‖_F per unit Ẋ bounded with Frobenius norms (≥ ‖·‖₂ of the |·| matrices Higham's bounds
   carry) of the factors the products use: s(‖fl(X M)‖ + ‖fl(X Mᵀ)‖) for s(Ẋ M Xᵀ + X M Ẋᵀ);
   through the shaped projections s(λ_Q‖W^Q‖‖K̃‖ + ‖Q̃‖λ_K‖W^K‖), λ QK-norm's ‖J‖ bound (RoPE
   is a rotation).  *prepared: the magnitude of X·M's own rounding, 2s‖X‖‖M‖ (0 for the
   shaped Q̃ and K̃, which are the state K is taken at). */
static double logit_magnitude(const SaWork *w, int h, double x_norm, double *prepared)
{
    const SaBlock *b = &w->b[h];
    size_t td = (size_t)b->T * b->d;
    double s = fabs(b->scale);
    *prepared = 0.0;
    if (!w->shaped_logits) {
        *prepared = 2.0 * s * x_norm * frobenius((size_t)b->d * b->d, b->m);
        return s * (frobenius(td, w->xm + td * (size_t)h) + frobenius(td, w->xmt + td * (size_t)h));
    }
    int T = b->T, d = b->d, nk = Layer_kv_width(w->shape.c), nq = Config_heads_width(w->shape.c);
    double lq, lk;
    SaShape_qk_norm_bounds(w, &lq, &lk);
    return s * (lq * frobenius((size_t)d * nq, w->shape.query) * frobenius((size_t)T * nk, w->kt) +
                frobenius((size_t)T * nq, w->qt) * lk * frobenius((size_t)d * nk, w->shape.key));
}

/* An upper bound on ‖D‖₂ of head h's attention derivative D and on its rounding's scale: the
   softmax's rows are diag(a) − aaᵀ with eigenvalues in [0, max a], and A ⊙ g and A ⊙ (r·1ᵀ),
   r_i = Σ_j a_ij|g_ij|, are at most max a·‖g‖_F (‖a_i‖₂² ≤ max a·Σ_j a_ij ≤ max a); the other
   kinds' slopes are at most 1 (relu 1/T, sigmoid 1/4, linear 1), centring a projection. */
static double derivative_scale(const SaWork *w, int h)
{
    const Config *c = w->shape.c;
    if (c && c->attention != ATTENTION_SOFTMAX)
        return 1.0;
    size_t tt = (size_t)w->b[0].T * w->b[0].T;
    const double *a = w->a + tt * (size_t)h;
    double top = 0.0;
    for (size_t k = 0; k < tt; k++)
        top = fmax(top, a[k]);
    return top;
}

double SaWork_product_error(const SaWork *w)
{
    const SaBlock *b = &w->b[0];
    int T = b->T, d = b->d;
    size_t tt = (size_t)T * T, td = (size_t)T * d;
    double x_norm = frobenius(td, b->x), value = 0, logits = 0, prepared = 0;
    for (int h = 0; h < w->heads; h++) {
        double wvo = frobenius((size_t)d * d, w->b[h].wvo), xw = frobenius(td, w->xw + td * h);
        value += frobenius(tt, w->ap + tt * (size_t)h) * wvo;
        if (!w->b[h].m)
            continue;
        /* Ċ (magnitude c) through the derivative (scale δ) into Ȧ·fl(X W_VO); apart from the
           products' own rounding, the prepared X·M and X·W_VO carry γ_d of theirs. */
        double delta = derivative_scale(w, h), c_prep, c = logit_magnitude(w, h, x_norm, &c_prep);
        logits += delta * c * xw;
        prepared += delta * (c_prep * xw + c * x_norm * wvo);
    }
    /* The sums' lengths, each piece's error at most γ_k of its magnitude (docs/model.md §8):
       A·(Ẋ W_VO) accumulated; Ċ (or the projections, QK-norm's product and state, RoPE's
       turn, the cap's slope); the softmax derivative's two terms and the centring's, each
       bounded by max a·‖Ċ‖ (derivative_scale); Ȧ·fl(X W_VO); the heads; the branch LN's
       product and state.  (1 + 2γ_k) covers the second-order terms (norms taken of the
       computed factors). */
    double k = (T + d + 1.0) + (w->shaped_logits ? 7.0 * d + 32.0 : 2.0 * d + 1.0) +
               4.0 * (T + 2.0) + (T + d + 1.0) + w->heads + 8.0;
    double ln = 1.0;
    if (w->branch_norm) {
        k += 4.0 * (d + 4.0);
        ln = SaShape_branch_norm_bound(w);
    }
    return ln * (eta_gamma(k) * (value + logits) + eta_gamma(d) * prepared) *
           (1.0 + 2.0 * eta_gamma(k));
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
