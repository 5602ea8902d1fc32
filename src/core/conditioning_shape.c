/* The layer's shape around the sub-block's f (SaWork_shape, docs/model.md §8.1): QK-norm, RoPE
 * and the soft-cap on the logits, the branch LN after f; their state at X, their Jacobians'
 * products (the JVP and VJP of conditioning.c call them) and bounds on those Jacobians' norms
 * (its rounding bound takes them). */
#include "attnscope/conditioning.h"

#include "attnscope/attention.h"
#include "attnscope/layer.h"
#include "attnscope/qk.h"

#include "buffer_internal.h"
#include "conditioning_internal.h"

#include <cblas.h>
#include <stddef.h>
#include <math.h>
#include <string.h>

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
        Qk_turn(c, w->shape.layer, T, heads, w->rope_table, transposed, x);
    for (int g = 0; normalised && !norm_first && g < groups; g++)
        row_norm_product(n, y + block * g, inv + (size_t)T * g, gain, transposed, x + block * g,
                         w->sums);
}

/* Whether c's logits are more than s·X·M·Xᵀ at `layer` (any layer for layer 0). */
bool SaShape_logits_shaped(const Config *c, int layer)
{
    bool rotates = layer > 0 ? Qk_rotates(c, layer) : c->rope != ROPE_NONE;
    return Attention_has_query_key(c->attention) &&
           (Qk_normalised(c) || rotates || c->logit_softcap > 0);
}

/* The RoPE table's doubles where c's logits are shaped and it rotates (at any layer). */
static size_t rope_table_doubles(const Config *c)
{
    return SaShape_logits_shaped(c, 0) && c->rope != ROPE_NONE
               ? Qk_rotation_table_doubles(c, c->tokens)
               : 0;
}

size_t SaWork_shape_doubles(const Config *c)
{
    size_t T = (size_t)c->tokens, d = (size_t)c->width, H = (size_t)c->heads;
    size_t G = (size_t)Config_kv_heads(c), nk = (size_t)Layer_kv_width(c);
    size_t nq = (size_t)Config_heads_width(c), row = T > d ? T : d; /* as shape_buffers cuts */
    size_t doubles = T + (row > nq ? row : nq);
    if (SaShape_logits_shaped(c, 0))
        doubles += 3 * T * (nq + nk) + T * (H + G) + (c->logit_softcap > 0 ? H * T * T : 0) +
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
    size_t nq = (size_t)Config_heads_width(c), row = T > d ? T : d; /* H·d_h */
    bool logits = SaShape_logits_shaped(c, 0), capped = logits && c->logit_softcap > 0;
    bool branch = Layer_branch_norm(c);
    size_t rope = rope_table_doubles(c);
    double *at = w->shape_block;
    struct {
        double **buffer;
        size_t doubles;
    } plan[] = {{&w->sums, T + (row > nq ? row : nq)}, {&w->qt, logits ? T * nq : 0},
                {&w->kt, logits ? T * nk : 0},         {&w->qn, logits ? T * nq : 0},
                {&w->kn, logits ? T * nk : 0},         {&w->qdot, logits ? T * nq : 0},
                {&w->kdot, logits ? T * nk : 0},       {&w->q_inv, logits ? T * H : 0},
                {&w->k_inv, logits ? T * G : 0},       {&w->cap_slope, capped ? H * T * T : 0},
                {&w->fn, branch ? T * d : 0},          {&w->ybar, branch ? T * d : 0},
                {&w->f_inv, branch ? T : 0},           {&w->rope_table, rope}};
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
    int G = Config_kv_heads(c), nq = Config_heads_width(c);
    size_t tt = (size_t)T * T;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, nq, d, 1.0, w->b[0].x, T,
                w->shape.query, d, 0.0, w->qt, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, nk, d, 1.0, w->b[0].x, T,
                w->shape.key, d, 0.0, w->kt, T);
    if (Qk_normalised(c)) {
        memcpy(w->qn, w->qt, sizeof(double) * T * nq);
        memcpy(w->kn, w->kt, sizeof(double) * T * nk);
        if (c->qk_norm_place == QK_NORM_AFTER_ROPE && Qk_rotates(c, w->shape.layer)) {
            Qk_turn(c, w->shape.layer, T, w->heads, w->rope_table, false, w->qn);
            Qk_turn(c, w->shape.layer, T, G, w->rope_table, false, w->kn);
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
    w->capped = w->b[0].m && SaShape_logits_shaped(c, s->layer) && c->logit_softcap > 0;
    w->shaped_logits = w->b[0].m && SaShape_logits_shaped(c, s->layer);
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
        Qk_rotation_table(c, s->layer, w->b[0].T, w->rope_table);
    if (w->shaped_logits)
        shape_logits(w);
    if (w->branch_norm)
        shape_branch(w);
    return 0;
}

/* Q̇ = shape'·(Ẋ W^Q), K̇ = shape'·(Ẋ W^K). */
void SaShape_project_tangent(SaWork *w, const double *dx)
{
    const Config *c = w->shape.c;
    int T = w->b[0].T, d = w->b[0].d, nk = Layer_kv_width(c), nq = Config_heads_width(c);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, nq, d, 1.0, dx, T, w->shape.query, d,
                0.0, w->qdot, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, nk, d, 1.0, dx, T, w->shape.key, d,
                0.0, w->kdot, T);
    shape_product(w, w->heads, w->qn, w->q_inv, w->shape.query_gain, false, w->qdot);
    shape_product(w, Config_kv_heads(c), w->kn, w->k_inv, w->shape.key_gain, false, w->kdot);
}

/* X̄ += (shape'ᵀ·Q̄) W^Qᵀ + (shape'ᵀ·K̄) W^Kᵀ. */
void SaShape_project_cotangent(SaWork *w, double *dx)
{
    const Config *c = w->shape.c;
    int T = w->b[0].T, d = w->b[0].d, nk = Layer_kv_width(c), nq = Config_heads_width(c);
    shape_product(w, w->heads, w->qn, w->q_inv, w->shape.query_gain, true, w->qdot);
    shape_product(w, Config_kv_heads(c), w->kn, w->k_inv, w->shape.key_gain, true, w->kdot);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, nq, 1.0, w->qdot, T, w->shape.query,
                d, 1.0, dx, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, nk, 1.0, w->kdot, T, w->shape.key, d,
                1.0, dx, T);
}

void SaShape_branch_product(SaWork *w, bool transposed, double *x)
{
    row_norm_product(branch_row_norm(w->shape.c), w->fn, w->f_inv, w->shape.branch_gain, transposed,
                     x, w->sums);
}

void SaShape_qk_norm_bounds(const SaWork *w, double *queries, double *keys)
{
    const Config *c = w->shape.c;
    int T = w->b[0].T, groups;
    *queries = *keys = 1.0;
    if (!Qk_normalised(c))
        return;
    /* Full QK-norm's gains span every head's columns: H·d_h of the queries, G·d_h of the
       keys. */
    int width = qk_row_norm(c, T, w->heads, &groups).width;
    *queries = row_norm_gain(w->shape.query_gain, c->norm_gain_offset, width, w->q_inv,
                             (size_t)T * groups);
    width = qk_row_norm(c, T, Config_kv_heads(c), &groups).width;
    *keys =
        row_norm_gain(w->shape.key_gain, c->norm_gain_offset, width, w->k_inv, (size_t)T * groups);
}

double SaShape_branch_norm_bound(const SaWork *w)
{
    return row_norm_gain(w->shape.branch_gain, w->shape.c->norm_gain_offset, w->b[0].d, w->f_inv,
                         (size_t)w->b[0].T);
}
