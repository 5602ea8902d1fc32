/* The conditioning of one self-attention sub-block (docs/model.md §8): the Jacobian K of
 * f(X) = Σ_h A_h(X)·X·W_VO,h and its parts, as products with vectors and in full, its extreme
 * singular values by Lanczos, κ, and the softmax demo.  The per-layer run of a network
 * through these is conditioning_run.c. */
#include "attnscope/conditioning.h"

#include "attnscope/attention.h"
#include "attnscope/layer.h"
#include "attnscope/qk.h"

#include "buffer_internal.h"
#include "conditioning_internal.h"
#include "gram_schmidt_internal.h"

#include <cblas.h>
#include <float.h>
#include <stddef.h>
#include <lapacke.h>
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

/* ---- the layer's shape around f (SaWork_shape, docs/model.md §8.1) ---------------------- */

/* A row norm u ↦ γ⊙y, y = P·u/ρ, ρ = √(|P·u|²/m + ε), P the centring or the identity, of the
   rows of a T×width block (leading dimension T): Block_layernorm's LN and RMS rows (m = width)
   and unit rows (m = 1, ε = 0), and QK-norm's RMS rows over a head or the full width.  γ = o + w
   for a checkpoint's stored gain w, o the family's offset (--norm-gain-offset). */
typedef struct {
    int T, width;
    double m, epsilon, gain_offset;
    bool centred;
} RowNorm;

/* y and 1/ρ of every row of u (y may be u); sum: T scratch. */
static void row_norm_state(RowNorm n, const double *u, double *y, double *inv, double *sum)
{
    int T = n.T;
    memset(sum, 0, sizeof(double) * T);
    for (int j = 0; n.centred && j < n.width; j++)
        for (int i = 0; i < T; i++)
            sum[i] += u[i + (size_t)j * T];
    for (int i = 0; i < T; i++) {
        sum[i] = n.centred ? sum[i] / n.width : 0.0;
        inv[i] = 0.0;
    }
    for (int j = 0; j < n.width; j++)
        for (int i = 0; i < T; i++) {
            double v = u[i + (size_t)j * T] - sum[i];
            inv[i] += v * v;
        }
    for (int i = 0; i < T; i++) {
        double rho = sqrt(inv[i] / n.m + n.epsilon);
        inv[i] = rho > 0 ? 1.0 / rho : 0.0; /* a zero row stays zero, as Block_rms_rows has it */
    }
    for (int j = 0; j < n.width; j++)
        for (int i = 0; i < T; i++)
            y[i + (size_t)j * T] = (u[i + (size_t)j * T] - sum[i]) * inv[i];
}

/* x ← J·x, or Jᵀ·x, row by row: J = diag(γ)·(P − y·yᵀ/m)/ρ, the norm's Jacobian at y, 1/ρ
   (P·y = y, so P − y·yᵀ/m is symmetric and ⟨y, P·ẋ⟩ = ⟨y, ẋ⟩).  gain NULL: γ = 1.  sums: 2T. */
static void row_norm_product(RowNorm n, const double *y, const double *inv, const double *gain,
                             bool transposed, double *x, double *sums)
{
    int T = n.T;
    double *dot = sums, *mean = sums + T;
    for (int j = 0; gain && transposed && j < n.width; j++)
        cblas_dscal(T, n.gain_offset + gain[j], x + (size_t)j * T, 1);
    memset(sums, 0, sizeof(double) * 2 * T);
    for (int j = 0; j < n.width; j++)
        for (int i = 0; i < T; i++) {
            dot[i] += y[i + (size_t)j * T] * x[i + (size_t)j * T];
            mean[i] += x[i + (size_t)j * T];
        }
    for (int i = 0; i < T; i++) {
        dot[i] /= n.m;
        mean[i] = n.centred ? mean[i] / n.width : 0.0;
    }
    for (int j = 0; j < n.width; j++)
        for (int i = 0; i < T; i++) {
            size_t at = i + (size_t)j * T;
            x[at] = (x[at] - mean[i] - y[at] * dot[i]) * inv[i];
        }
    for (int j = 0; gain && !transposed && j < n.width; j++)
        cblas_dscal(T, n.gain_offset + gain[j], x + (size_t)j * T, 1);
}

/* QK-norm's row norm on the projections of `heads` heads (qk.h): RMS over each head's d_h, or
   over the full heads·d_h; its groups are the heads or one. */
static RowNorm qk_row_norm(const Config *c, int T, int heads, int *groups)
{
    int dh = Config_head_width(c), width = c->qk_norm == QK_NORM_FULL ? heads * dh : dh;
    *groups = heads * dh / width;
    return (RowNorm){.T = T,
                     .width = width,
                     .m = width,
                     .epsilon = c->ln_eps,
                     .gain_offset = c->norm_gain_offset};
}

/* The branch LN of Block_layernorm: LN centres, √d scaling is RMS rows, unit scaling x/‖x‖. */
static RowNorm branch_row_norm(const Config *c)
{
    bool rms = c->ln_scale == LN_SCALE_SQRT_D;
    return (RowNorm){.T = c->tokens,
                     .width = c->width,
                     .m = rms ? c->width : 1.0,
                     .epsilon = rms ? c->ln_eps : 0.0,
                     .gain_offset = c->norm_gain_offset,
                     .centred = c->layernorm == LAYERNORM_LN};
}

/* QK-norm's y and 1/ρ per group of the projections u (T×heads·d_h) of `heads` heads. */
static void qk_norm_state(const SaWork *w, int heads, const double *u, double *y, double *inv)
{
    int groups;
    RowNorm n = qk_row_norm(w->shape.c, w->b[0].T, heads, &groups);
    size_t block = (size_t)n.T * n.width;
    for (int g = 0; g < groups; g++)
        row_norm_state(n, u + block * g, y + block * g, inv + (size_t)n.T * g, w->sums);
}

/* x (T×heads·d_h, queries or keys) ← the Jacobian of Qk_shape at X times x, or its transpose:
   QK-norm's and RoPE's in the order Qk_shape applies them, reversed for the transpose.  y, inv,
   gain: that norm's. */
static void shape_product(SaWork *w, int heads, const double *y, const double *inv,
                          const double *gain, bool transposed, double *x)
{
    const Config *c = w->shape.c;
    int T = w->b[0].T, groups;
    bool normalised = Qk_normalised(c), rotates = Qk_rotates(c, w->shape.layer);
    bool norm_first = (c->qk_norm_place == QK_NORM_BEFORE_ROPE) != transposed;
    RowNorm n = qk_row_norm(c, T, heads, &groups);
    size_t block = (size_t)T * n.width;
    for (int g = 0; normalised && norm_first && g < groups; g++)
        row_norm_product(n, y + block * g, inv + (size_t)T * g, gain, transposed, x + block * g,
                         w->sums);
    if (rotates)
        Qk_turn(c, T, heads, w->rope_table, transposed, x);
    for (int g = 0; normalised && !norm_first && g < groups; g++)
        row_norm_product(n, y + block * g, inv + (size_t)T * g, gain, transposed, x + block * g,
                         w->sums);
}

/* Whether c's logits are more than s·X·M·Xᵀ at `layer` (any layer for layer 0). */
static bool logits_shaped(const Config *c, int layer)
{
    bool rotates = layer > 0 ? Qk_rotates(c, layer) : c->rope != ROPE_NONE;
    return Attention_has_query_key(c->attention) &&
           (Qk_normalised(c) || rotates || c->logit_softcap > 0);
}

/* The RoPE table's doubles where c's logits are shaped and it rotates (at any layer). */
static size_t rope_table_doubles(const Config *c)
{
    return logits_shaped(c, 0) && c->rope != ROPE_NONE ? Qk_rotation_table_doubles(c, c->tokens)
                                                       : 0;
}

size_t SaWork_shape_doubles(const Config *c)
{
    size_t T = (size_t)c->tokens, d = (size_t)c->width, H = (size_t)c->heads;
    size_t G = (size_t)Config_kv_heads(c), nk = (size_t)Layer_kv_width(c);
    size_t doubles = T + (T > d ? T : d);
    if (logits_shaped(c, 0))
        doubles += 3 * T * (d + nk) + T * (H + G) + (c->logit_softcap > 0 ? H * T * T : 0) +
                   rope_table_doubles(c);
    if (Layer_branch_norm(c))
        doubles += 2 * T * d + T;
    return doubles;
}

/* Cuts SaWork_shape_doubles(c) into the shape's buffers (NULL where c has none). */
static void shape_buffers(SaWork *w, const Config *c)
{
    size_t T = (size_t)c->tokens, d = (size_t)c->width, H = (size_t)c->heads;
    size_t G = (size_t)Config_kv_heads(c), nk = (size_t)Layer_kv_width(c);
    bool logits = logits_shaped(c, 0), capped = logits && c->logit_softcap > 0;
    bool branch = Layer_branch_norm(c);
    size_t rope = rope_table_doubles(c);
    double *at = w->shape_block;
    struct {
        double **buffer;
        size_t doubles;
    } plan[] = {{&w->sums, T + (T > d ? T : d)}, {&w->qt, logits ? T * d : 0},
                {&w->kt, logits ? T * nk : 0},   {&w->qn, logits ? T * d : 0},
                {&w->kn, logits ? T * nk : 0},   {&w->qdot, logits ? T * d : 0},
                {&w->kdot, logits ? T * nk : 0}, {&w->q_inv, logits ? T * H : 0},
                {&w->k_inv, logits ? T * G : 0}, {&w->cap_slope, capped ? H * T * T : 0},
                {&w->fn, branch ? T * d : 0},    {&w->ybar, branch ? T * d : 0},
                {&w->f_inv, branch ? T : 0},     {&w->rope_table, rope}};
    for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++) {
        *plan[i].buffer = plan[i].doubles ? at : NULL;
        at += plan[i].doubles;
    }
}

/* Q̃, K̃ as Qk_shape makes them from X·W^Q, X·W^K; QK-norm's state at its input (RoPE's output
   after-rope); each head's soft-cap slope 1 − tanh²(S/c) = 1 − (Attention_softcap(S)/c)². */
static void shape_logits(SaWork *w)
{
    const Config *c = w->shape.c;
    int T = w->b[0].T, d = w->b[0].d, nk = Layer_kv_width(c), dh = Config_head_width(c);
    int G = Config_kv_heads(c);
    size_t tt = (size_t)T * T;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, w->b[0].x, T,
                w->shape.query, d, 0.0, w->qt, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, nk, d, 1.0, w->b[0].x, T,
                w->shape.key, d, 0.0, w->kt, T);
    if (Qk_normalised(c)) {
        memcpy(w->qn, w->qt, sizeof(double) * T * d);
        memcpy(w->kn, w->kt, sizeof(double) * T * nk);
        if (c->qk_norm_place == QK_NORM_AFTER_ROPE && Qk_rotates(c, w->shape.layer)) {
            Qk_turn(c, T, w->heads, w->rope_table, false, w->qn);
            Qk_turn(c, T, G, w->rope_table, false, w->kn);
        }
        qk_norm_state(w, w->heads, w->qn, w->qn, w->q_inv);
        qk_norm_state(w, G, w->kn, w->kn, w->k_inv);
    }
    Qk_shape(c, w->shape.layer, T, w->qt, w->kt, w->shape.query_gain, w->shape.key_gain,
             w->sums + T, w->sums);
    for (int h = 0; w->capped && h < w->heads; h++) {
        double *slope = w->cap_slope + tt * (size_t)h, cap = c->logit_softcap;
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, dh, w->b[h].scale,
                    w->qt + (size_t)T * dh * h, T, w->kt + (size_t)T * dh * Config_kv_head_of(c, h),
                    T, 0.0, slope, T);
        Attention_softcap(cap, slope, tt);
        for (size_t k = 0; k < tt; k++)
            slope[k] = 1.0 - (slope[k] / cap) * (slope[k] / cap);
    }
}

/* F = Σ_h A_h X W_VO,h, as the layer joins it, and its LN's state. */
static void shape_branch(SaWork *w)
{
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    for (int h = 0; h < w->heads; h++)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, 1.0, w->ap + tt * (size_t)h,
                    T, w->xw + td * (size_t)h, T, h ? 1.0 : 0.0, w->fn, T);
    row_norm_state(branch_row_norm(w->shape.c), w->fn, w->fn, w->f_inv, w->sums);
}

int SaWork_shape(SaWork *w, const SaShape *s)
{
    const Config *c = s->c;
    w->capped = w->b[0].m && logits_shaped(c, s->layer) && c->logit_softcap > 0;
    w->shaped_logits = w->b[0].m && logits_shaped(c, s->layer);
    w->branch_norm = Layer_branch_norm(c);
    w->shape = *s;
    if (!w->shaped_logits && !w->branch_norm)
        return 0;
    if (Buffer_grow(&w->shape_block, SaWork_shape_doubles(c))) {
        w->shaped_logits = w->capped = w->branch_norm = false;
        return -1;
    }
    shape_buffers(w, c);
    if (w->shaped_logits && Qk_rotates(c, s->layer)) /* every product turns the same positions */
        Qk_rotation_table(c, w->b[0].T, w->rope_table);
    if (w->shaped_logits)
        shape_logits(w);
    if (w->branch_norm)
        shape_branch(w);
    return 0;
}

/* Q̇ = shape'·(Ẋ W^Q), K̇ = shape'·(Ẋ W^K). */
static void project_tangent(SaWork *w, const double *dx)
{
    const Config *c = w->shape.c;
    int T = w->b[0].T, d = w->b[0].d, nk = Layer_kv_width(c);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, dx, T, w->shape.query, d,
                0.0, w->qdot, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, nk, d, 1.0, dx, T, w->shape.key, d,
                0.0, w->kdot, T);
    shape_product(w, w->heads, w->qn, w->q_inv, w->shape.query_gain, false, w->qdot);
    shape_product(w, Config_kv_heads(c), w->kn, w->k_inv, w->shape.key_gain, false, w->kdot);
}

/* X̄ += (shape'ᵀ·Q̄) W^Qᵀ + (shape'ᵀ·K̄) W^Kᵀ. */
static void project_cotangent(SaWork *w, double *dx)
{
    const Config *c = w->shape.c;
    int T = w->b[0].T, d = w->b[0].d, nk = Layer_kv_width(c);
    shape_product(w, w->heads, w->qn, w->q_inv, w->shape.query_gain, true, w->qdot);
    shape_product(w, Config_kv_heads(c), w->kn, w->k_inv, w->shape.key_gain, true, w->kdot);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, d, 1.0, w->qdot, T, w->shape.query,
                d, 1.0, dx, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, nk, 1.0, w->kdot, T, w->shape.key, d,
                1.0, dx, T);
}

double SaWork_product_flops(const Config *c, int layer)
{
    double T = c->tokens, d = c->width, H = c->heads, G = Config_kv_heads(c);
    double dh = Config_head_width(c), nk = Layer_kv_width(c);
    /* Per head Ẋ·W_VO,h, A_h·(Ẋ W_VO,h), Ȧ·(X W_VO,h), and Ċ's two halves through M_h. */
    double flops = H * (2 * T * d * d + 4 * T * T * d);
    if (!logits_shaped(c, layer)) {
        flops += H * 4 * T * T * d;
    } else {
        /* Ẋ·W^Q, Ẋ·W^K, Ċ's halves on d_h columns, then per entry of the projections the
           norm's product (a dot, a mean, the update: 6 flops) and RoPE's turn (3 flops, its
           cosines and sines from SaWork_shape's table); the slope on each logit. */
        flops += 2 * T * d * (d + nk) + H * 4 * T * T * dh;
        if (Qk_normalised(c))
            flops += 6 * T * (d + nk);
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
    } else {
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
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    memset(dy, 0, sizeof(double) * td);
    if (w->shaped_logits && w->part != PART_DOMINANT)
        project_tangent(w, dx);
    for (int h = 0; h < w->heads; h++) {
        const SaBlock *b = &w->b[h];
        /* B_h·vec Ẋ = vec(A_applied·Ẋ·W_VO) */
        if (w->part != PART_PERTURBATION) {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, dx, T, b->wvo, d,
                        0.0, w->tmp, T);
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, 1.0,
                        w->ap + tt * (size_t)h, T, w->tmp, T, 1.0, dy, T);
            if (w->bounding)
                ProductBound_value(w, h, false);
        }
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
        row_norm_product(branch_row_norm(w->shape.c), w->fn, w->f_inv, w->shape.branch_gain, false,
                         dy, w->sums);
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
        row_norm_product(branch_row_norm(w->shape.c), w->fn, w->f_inv, w->shape.branch_gain, true,
                         w->ybar, w->sums);
        dy = w->ybar;
    }
    memset(dx, 0, sizeof(double) * td);
    bool projections = w->shaped_logits && w->part != PART_DOMINANT;
    if (projections) {
        memset(w->qdot, 0, sizeof(double) * td);
        memset(w->kdot, 0, sizeof(double) * T * Layer_kv_width(w->shape.c));
    }
    for (int h = 0; h < w->heads; h++) {
        const SaBlock *b = &w->b[h];
        /* B_hᵀ·vec Ȳ = vec(A_appliedᵀ·Ȳ·W_VOᵀ) */
        if (w->part != PART_PERTURBATION) {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, d, 1.0, dy, T, b->wvo, d,
                        0.0, w->tmp, T);
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, 1.0,
                        w->ap + tt * (size_t)h, T, w->tmp, T, 1.0, dx, T);
            if (w->bounding)
                ProductBound_value(w, h, true);
        }
        if (!b->m || w->part == PART_DOMINANT)
            continue;
        /* Ā = Ȳ (X W_VO)ᵀ, C̄ = the softmax derivative of Ā (times the cap's slope), then X̄ */
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
        project_cotangent(w, dx);
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

/* max_j |o + gain_j| over width entries (1 for no stored gain), times max_i inv_i: an upper
   bound on ‖J‖₂ of a row norm diag(γ)(P − yyᵀ/m)/ρ, whose middle factor is a projection. */
static double row_norm_gain(const double *gain, double offset, int width, const double *inv,
                            size_t rows)
{
    double top = gain ? 0.0 : 1.0, inv_max = 0.0;
    for (int j = 0; gain && j < width; j++)
        top = fmax(top, fabs(offset + gain[j]));
    for (size_t i = 0; i < rows; i++)
        inv_max = fmax(inv_max, inv[i]);
    return top * inv_max;
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
    const Config *c = w->shape.c;
    int T = b->T, d = b->d, nk = Layer_kv_width(c), groups;
    double lq = 1.0, lk = 1.0;
    if (Qk_normalised(c)) {
        /* Full QK-norm's gains span every head's columns: H·d_h of the queries, G·d_h of the
           keys. */
        int width = qk_row_norm(c, T, w->heads, &groups).width;
        lq = row_norm_gain(w->shape.query_gain, c->norm_gain_offset, width, w->q_inv,
                           (size_t)T * groups);
        width = qk_row_norm(c, T, Config_kv_heads(c), &groups).width;
        lk = row_norm_gain(w->shape.key_gain, c->norm_gain_offset, width, w->k_inv,
                           (size_t)T * groups);
    }
    return s * (lq * frobenius((size_t)d * d, w->shape.query) * frobenius((size_t)T * nk, w->kt) +
                frobenius((size_t)T * d, w->qt) * lk * frobenius((size_t)d * nk, w->shape.key));
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
        ln = row_norm_gain(w->shape.branch_gain, w->shape.c->norm_gain_offset, d, w->f_inv,
                           (size_t)T);
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

/* How much of the pseudo-random start vector joins a caller's start vector. */
#define START_MIX 1e-8

/* Where Lanczos left an extreme eigenvalue of S: its Ritz value θ and the residual r of its
   Ritz vector (an eigenvalue of S lies within r of θ), both NaN unless r ≤ tolerance·θ, and
   ‖s‖₁ of that vector's coordinates s in the basis (Ritz vector y = Q·s): a rounding error of
   at most η in each product S·q_j moves S·y by at most η·‖s‖₁. */
typedef struct {
    double theta, residual, coordinates_l1;
    int steps;
    /* Whatever the outcome, the extreme Ritz vector of the last check: its coordinates in the
       first `size` basis vectors (in the caller's tri; NULL before a check). */
    const double *coordinates;
    int size;
} RitzEstimate;

/* Lanczos on S with full reorthogonalisation from a fixed start vector, the Ritz values
   checked every check_every steps and at the last: basis holds n·(steps + 1) doubles, tri
   4·steps + steps² (LanczosWork).  give_up: it stops at a check where the extreme Ritz value
   is at most this (-INFINITY: never), θ then NaN.  Returns 0 or LINALG_STOPPED (stop's hook
   asked). */
static int lanczos_extreme(size_t n, SymmetricProduct apply, void *context, const Linalg *stop,
                           bool largest, int steps, int check_every, double tolerance,
                           double give_up, uint64_t seed, const double *start, double *basis,
                           double *tri, RitzEstimate *out)
{
    out->theta = out->residual = out->coordinates_l1 = NAN;
    out->steps = out->size = 0;
    out->coordinates = NULL;
    double *alpha = tri, *beta = alpha + steps, *diag = beta + steps, *off = diag + steps;
    double *ritz = off + steps; /* diag: Gram–Schmidt's coefficients between the checks */
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
    for (int j = 0; j < steps; j++) {
        /* A step at T·d = 65536 takes ~10 ms: polling each one keeps a stop prompt. */
        if (stop && Linalg_stop_requested(stop)) {
            out->theta = out->residual = NAN;
            return LINALG_STOPPED;
        }
        double *q = basis + (size_t)j * n, *next = basis + (size_t)(j + 1) * n;
        apply(context, q, next);
        alpha[j] = GramSchmidt_twice(n, j + 1, basis, next, diag);
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
    int steps = run->max_steps;
    if ((size_t)steps * n * sizeof(double) > CONDITIONING_LANCZOS_BASIS_BYTES)
        steps = (int)(CONDITIONING_LANCZOS_BASIS_BYTES / (n * sizeof(double))) - 1;
    if ((size_t)steps > n)
        steps = (int)n;
    out->value = out->error = out->bound = NAN;
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
    double give_up = largest ? -INFINITY : run->give_up * run->give_up;
    int status = lanczos_extreme(n, run->left ? left_normal_product : normal_product, &product,
                                 w->stop, largest, steps, 8, run->tolerance, give_up, run->seed,
                                 run->start, basis, tri, &ritz);
    out->steps = ritz.steps;
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

int SaWork_extreme(SaWork *w, bool largest, int max_steps, double tolerance, uint64_t seed,
                   double norm, SingularValueEstimate *out)
{
    ExtremeRun run = {.largest = largest,
                      .max_steps = max_steps,
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
    int steps = n < DENSE_STEPS_MAX ? n : DENSE_STEPS_MAX;
    DenseOperator o = {n, k, lu, e->pivots, e->basis + size * (DENSE_STEPS_MAX + 1)};
    RitzEstimate top, inverse;
    int status = lanczos_extreme(size, dense_normal, &o, stop, true, steps, DENSE_CHECK_EVERY,
                                 DENSE_TOLERANCE, -INFINITY, 1, NULL, e->basis, e->tri, &top);
    if (status || isnan(top.theta))
        return status ? status : DENSE_NOT_CERTIFIED;
    memcpy(lu, k, sizeof(double) * size * size);
    /* An exactly singular factor has no inverse to iterate with. */
    if ((status = lu_stoppable(n, lu, e->pivots, stop)))
        return status;
    status = lanczos_extreme(size, dense_inverse_normal, &o, stop, true, steps, DENSE_CHECK_EVERY,
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
