/* One transformer layer, stage by stage (see layer.h). */
#include "attnscope/layer.h"

#include "attnscope/block.h"
#include "attnscope/init.h"
#include "attnscope/qk.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

int Layer_draw(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer,
               unsigned parts, const LayerWeights *w, double *scratch)
{
    int info = 0;
    if ((parts & LAYER_DRAW_ATTENTION) && Attention_has_query_key(c->attention))
        info = Init_draw_query_key(random, la, c, seed, layer, w->query, w->key, scratch);
    if ((parts & LAYER_DRAW_ATTENTION) && c->attention == ATTENTION_MARKOV)
        RandomStream_gaussian(random, seed, layer, ROLE_MARKOV, c->sigma_qk * c->sigma_qk,
                              w->markov, (size_t)c->tokens * c->tokens * (size_t)c->heads);
    if (!info && (parts & LAYER_DRAW_VALUE))
        info = Init_draw_with_scratch(random, la, c, seed, layer, MATRIX_VALUE, w->value, scratch);
    /* W^O of docs/model.md §1.7: entries N(0, 1/d), which keep a token's expected norm, or
       the Haar-orthogonal Q of their QR factorisation, which keeps every norm. */
    if (!info && (parts & LAYER_DRAW_OUTPUT) && c->output != OUTPUT_IDENTITY)
        info =
            Init_draw_with_scratch(random, la, c, seed, layer, MATRIX_OUTPUT, w->output, scratch);
    if (!info && (parts & LAYER_DRAW_MLP) && c->mlp != MLP_NONE)
        info = Init_draw(random, la, c, seed, layer, MATRIX_MLP_IN, w->mlp_in);
    if (!info && (parts & LAYER_DRAW_MLP) && c->mlp != MLP_NONE)
        info = Init_draw(random, la, c, seed, layer, MATRIX_MLP_OUT, w->mlp_out);
    if (!info && (parts & LAYER_DRAW_MLP) && Config_mlp_gated(c))
        info = Init_draw(random, la, c, seed, layer, MATRIX_MLP_UP, w->mlp_up);
    return info;
}

int Layer_input(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, double *x,
                double *scratch)
{
    int T = c->tokens, d = c->width;
    size_t td = (size_t)T * d;
    double *g = scratch; /* d×T */
    RandomStream_gaussian(random, seed, 0, ROLE_INPUT, 1.0, g, td);
    int info = Linalg_orthonormalise(la, d, T, g);
    if (info)
        return info;
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            x[i + (size_t)j * T] = g[j + (size_t)i * d];
    if (c->input_norm == INPUT_NORM_SQRT_D) /* rows of norm √d, as after embedding + LN */
        cblas_dscal((int)td, sqrt((double)d), x, 1);
    return 0;
}

bool Layer_fused_heads(const Config *c)
{
    return c->heads == 1 && c->output == OUTPUT_IDENTITY;
}

int Layer_kv_width(const Config *c)
{
    return Config_kv_heads(c) * Config_head_width(c);
}

bool Layer_pre_norm(const Config *c)
{
    return c->ln_place == LN_PLACE_PRE && c->layernorm != LAYERNORM_NONE;
}

/* The residual's gains, X ← keep·X + branch·F(X) (docs/model.md §1.5, §1.8): the skip's a
   (none: 0) and the branch's b, over √d for the scaled skip. */
static double skip_gain(const Config *c)
{
    return c->skip == SKIP_NONE ? 0.0 : c->skip_gain;
}

static double branch_gain(const Config *c)
{
    return c->skip == SKIP_SCALED ? c->branch_gain / sqrt((double)c->width) : c->branch_gain;
}

void Layer_buffers(const Config *c, LayerBuffers *b, bool gap_scratch,
                   LayerBuffer out[LAYER_BUFFERS])
{
    size_t T = c ? (size_t)c->tokens : 0, d = c ? (size_t)c->width : 0;
    size_t td = T * d, tt = T * T;
    size_t hidden = c && c->mlp != MLP_NONE ? (size_t)Config_mlp_hidden(c) : 0;
    const LayerBuffer list[LAYER_BUFFERS] = {
        {&b->x, td},
        {&b->normed, c && Layer_pre_norm(c) ? td : 0},
        {&b->queries, td},
        {&b->keys, c && c->heads > 1 ? td : 0},
        {&b->values, td},
        {&b->logits, tt},
        {&b->attention, tt},
        {&b->mixed, c && !Layer_fused_heads(c) ? td : 0},
        {&b->hidden, T * hidden},
        {&b->up, c && Config_mlp_gated(c) ? T * hidden : 0},
        {&b->row_stat, T > d ? T : d},
        {&b->row_max, T},
        {&b->gap_scratch, c && gap_scratch ? Gap_scratch_size(c->tokens) : 0},
    };
    memcpy(out, list, sizeof list);
}

static bool all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

/* Stage 1: what the branch F reads, X or LN(X) in `normed` under pre-LN. */
static const double *branch_input(const Config *c, LayerBuffers *b)
{
    if (!Layer_pre_norm(c))
        return b->x;
    size_t td = (size_t)c->tokens * c->width;
    memcpy(b->normed, b->x, sizeof(double) * td);
    Block_layernorm(c, c->tokens, c->width, b->normed, b->row_stat, b->row_max);
    return b->normed;
}

/* Stage 2's queries q and keys k (T×d each) of layer `layer`: the projections, then QK-norm and
   RoPE on them (qk.h).  Returns 0 or LINALG_STOPPED. */
static int project_query_key(const Config *c, int layer, const LayerWeights *w, LayerBuffers *b,
                             const double *source, double *q, double *k)
{
    int T = c->tokens, d = c->width, kv = Layer_kv_width(c);
    int info = Linalg_gemm(b->la, false, false, T, d, d, 1.0, source, T, w->query, d, 0.0, q, T);
    if (!info)
        info = Linalg_gemm(b->la, false, false, T, kv, d, 1.0, source, T, w->key, d, 0.0, k, T);
    if (!info)
        Qk_shape(c, layer, T, q, k, b->row_stat, b->row_max);
    return info;
}

/* Stage 2 with several heads: every head's queries, every key/value head's keys and (with
   values) values in one product each, as wide products run nearer the BLAS's peak than H
   narrow ones.  One head projects its queries and keys in head_logits.  Returns 0 or
   LINALG_STOPPED. */
static int project_heads(const Config *c, int layer, const LayerWeights *w, LayerBuffers *b,
                         const double *source, bool values)
{
    int T = c->tokens, d = c->width, info = 0;
    if (Attention_has_query_key(c->attention))
        info = project_query_key(c, layer, w, b, source, b->queries, b->keys);
    if (!info && values)
        info = Linalg_gemm(b->la, false, false, T, Layer_kv_width(c), d, 1.0, source, T, w->value,
                           d, 0.0, b->values, T);
    return info;
}

/* The logits of head h (from 0), row-major: S = X W^Q_h (X W^K_h)ᵀ·scale, i.e.
   Sᵀ = K Qᵀ·scale in column-major, scale Init_logit_scale; W^Q_h is the h-th block of d_h
   columns of W^Q.  For markov the "logits" are σ_qk²·g, whose row-softmax is Z normalised.
   *logits is NULL for kinds without logits.  Returns 0 or LINALG_STOPPED. */
static int head_logits(const Config *c, int layer, const LayerWeights *w, LayerBuffers *b, int h,
                       const double *source, const double **logits)
{
    int T = c->tokens, dh = Config_head_width(c);
    *logits = NULL;
    if (c->attention == ATTENTION_MARKOV) {
        *logits = w->markov + (size_t)h * T * T;
        return 0;
    }
    if (!Attention_has_query_key(c->attention))
        return 0;
    /* Several heads: their queries and keys were projected at once (project_heads), head h's
       queries are their h-th block of columns, its keys its key/value head's block.  One
       head: the values' buffer is free until the values are applied. */
    double *q = b->queries, *k = b->values;
    int status = 0;
    if (c->heads > 1) {
        q = b->queries + (size_t)T * dh * h;
        k = b->keys + (size_t)T * dh * Config_kv_head_of(c, h);
    } else {
        status = project_query_key(c, layer, w, b, source, q, k);
    }
    if (!status)
        status = Linalg_gemm(b->la, false, true, T, T, dh, Init_logit_scale(c), k, T, q, T, 0.0,
                             b->logits, T);
    if (!status && c->logit_softcap > 0)
        Attention_softcap(c->logit_softcap, b->logits, (size_t)T * T);
    if (!status)
        *logits = b->logits;
    return status;
}

int Layer_attention(const Config *c, int layer, const LayerWeights *w, LayerBuffers *b, int head,
                    const double **logits, LayerOutcome *outcome)
{
    const double *source = branch_input(c, b);
    int info = c->heads > 1 ? project_heads(c, layer, w, b, source, false) : 0;
    if (!info)
        info = head_logits(c, layer, w, b, head, source, logits);
    if (info)
        return info;
    Attention_build(c->attention, c->mask, c->window, c->tokens, *logits, b->attention);
    size_t tt = (size_t)c->tokens * c->tokens;
    *outcome = all_finite(b->attention, tt) ? LAYER_DONE : LAYER_ATTENTION_OVERFLOW;
    return 0;
}

/* Stage 3, head h: its attention (unless the driver built it), gap removal, and its output
   A_h·X'·W^V_h, written into X itself when the heads are fused (X ← keep·X + branch·A X' W^V)
   and into its block of columns of `mixed` otherwise. */
static int step_head(const LayerStep *s, LayerBuffers *b, int h, const double *source,
                     LayerOutcome *outcome)
{
    const Config *c = s->config;
    const LayerObserver *o = s->observer;
    int T = c->tokens, d = c->width, dh = Config_head_width(c);
    const double *logits = s->built_logits;
    if (!s->attention_built) {
        int status = head_logits(c, s->layer, s->weights, b, h, source, &logits);
        if (status)
            return status;
        Attention_build(c->attention, c->mask, c->window, T, logits, b->attention);
    }
    if (Linalg_stop_requested(b->la))
        return LINALG_STOPPED;
    /* Linear attention squares the tokens' scale: its matrix overflows a layer or more before
       the tokens do, and no spectrum of a matrix with infinities exists. */
    if (!all_finite(b->attention, (size_t)T * T)) {
        *outcome = LAYER_ATTENTION_OVERFLOW;
        return 0;
    }
    if (o && o->built)
        o->built(o->context, h, logits, b->attention);
    GapOutcome gap;
    Warnings gap_warnings = {.count = 0};
    int info = Gap_apply(s->gap, c->attention, c->mask, c->window, T, b->attention, b->la,
                         b->gap_scratch, &gap, &gap_warnings);
    if (!info && o && o->applied)
        info = o->applied(o->context, h, b->attention, gap, &gap_warnings);
    /* The attention buffer is Aᵀ to BLAS, hence the transposed flag.  Several heads: X' W^V
       is in `values` already (project_heads). */
    if (!info && c->heads == 1)
        info = Linalg_gemm(b->la, false, false, T, d, d, 1.0, source, T, s->weights->value, d, 0.0,
                           b->values, T);
    if (info)
        return info;
    if (Layer_fused_heads(c))
        return Linalg_gemm(b->la, true, false, T, d, T, branch_gain(c), b->attention, T, b->values,
                           T, skip_gain(c), b->x, T);
    size_t block = (size_t)T * dh * h, shared = (size_t)T * dh * Config_kv_head_of(c, h);
    return Linalg_gemm(b->la, true, false, T, dh, T, 1.0, b->attention, T, b->values + shared, T,
                       0.0, b->mixed + block, T);
}

/* Stage 4: X ← keep·X + branch·[head_1 … head_H]·W^O, once every head has read X.  Returns 0
   or LINALG_STOPPED. */
static int combine_heads(const Config *c, const LayerWeights *w, LayerBuffers *b)
{
    int T = c->tokens, d = c->width;
    double keep = skip_gain(c), branch = branch_gain(c);
    if (c->output != OUTPUT_IDENTITY)
        return Linalg_gemm(b->la, false, false, T, d, d, branch, b->mixed, T, w->output, d, keep,
                           b->x, T);
    size_t td = (size_t)T * d;
    for (size_t i = 0; i < td; i++)
        b->x[i] = keep * b->x[i] + branch * b->mixed[i];
    return 0;
}

/* Stage 6: the MLP sub-block with its own skip and LayerNorm, placed as the attention's:
   X ← a·X + b·φ(X' W1) W2 with X' = X (post, then LN) or LN(X) (pre); gated,
   X ← a·X + b·(φ(X' W1) ⊙ X' W_up) W2 (W1 the gate, W2 the down projection).  Returns 0 or
   LINALG_STOPPED. */
static int mlp_sublayer(const Config *c, const LayerWeights *w, LayerBuffers *b)
{
    int T = c->tokens, d = c->width, hidden = Config_mlp_hidden(c);
    size_t n = (size_t)T * hidden;
    const double *source = branch_input(c, b);
    int info = Linalg_gemm(b->la, false, true, T, hidden, d, 1.0, source, T, w->mlp_in, hidden, 0.0,
                           b->hidden, T);
    if (!info && Config_mlp_gated(c))
        info = Linalg_gemm(b->la, false, true, T, hidden, d, 1.0, source, T, w->mlp_up, hidden, 0.0,
                           b->up, T);
    if (info)
        return info;
    Block_activate(c->mlp, b->hidden, n);
    if (Config_mlp_gated(c))
        for (size_t i = 0; i < n; i++)
            b->hidden[i] *= b->up[i];
    info = Linalg_gemm(b->la, false, false, T, d, hidden, branch_gain(c), b->hidden, T, w->mlp_out,
                       hidden, skip_gain(c), b->x, T);
    if (info)
        return info;
    if (!Layer_pre_norm(c))
        Block_layernorm(c, T, d, b->x, b->row_stat, b->row_max);
    return 0;
}

/* Stage 7: where A does not depend on X and every stage is homogeneous of degree 1 in X
   (no LayerNorm; no MLP, or a relu one), X is carried at unit norm with its scale apart. */
static void carry_scale(const Config *c, double *x, double *log_scale)
{
    size_t td = (size_t)c->tokens * c->width;
    double norm = cblas_dnrm2((int)td, x, 1);
    if (Attention_is_input_independent(c->attention) && norm > 0 &&
        c->layernorm == LAYERNORM_NONE && (c->mlp == MLP_NONE || c->mlp == MLP_RELU)) {
        cblas_dscal((int)td, 1.0 / norm, x, 1);
        *log_scale += log(norm);
    }
}

int Layer_step(const LayerStep *step, LayerBuffers *b, LayerOutcome *outcome, double *log_scale)
{
    const Config *c = step->config;
    const LayerObserver *o = step->observer;
    *outcome = LAYER_DONE;
    const double *source = branch_input(c, b);
    int info = o && o->branch_input ? o->branch_input(o->context, source) : 0;
    if (!info && c->heads > 1)
        info = project_heads(c, step->layer, step->weights, b, source, true);
    for (int h = 0; h < c->heads && !info && *outcome == LAYER_DONE; h++)
        info = step_head(step, b, h, source, outcome);
    if (info || *outcome != LAYER_DONE) /* an overflowed head leaves no finite output */
        return info;
    if (!Layer_fused_heads(c))
        info = combine_heads(c, step->weights, b);
    if (info)
        return info;
    if (!Layer_pre_norm(c))
        Block_layernorm(c, c->tokens, c->width, b->x, b->row_stat, b->row_max);
    if (c->mlp != MLP_NONE)
        info = mlp_sublayer(c, step->weights, b);
    if (info)
        return info;
    if (Linalg_stop_requested(b->la))
        return LINALG_STOPPED;
    if (!all_finite(b->x, (size_t)c->tokens * c->width)) {
        *outcome = LAYER_TOKENS_OVERFLOW;
        return 0;
    }
    carry_scale(c, b->x, log_scale);
    return 0;
}
