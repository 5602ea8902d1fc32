/* One transformer layer, stage by stage (see layer.h): the projections, the logits, each head's
 * attention and gap removal, W^O, the MLP, the scale carried apart, and the step that runs
 * them in order with the driver's observer on them (Layer_step), or declares their work
 * (Layer_declare).  The weights and X0 it reads are drawn in layer_draw.c; its primitives are in
 * layer_primitives.c and its norms and residual join in layer_norms.c (layer_internal.h). */
#include "layer_internal.h"

#include "attnscope/init.h"
#include "attnscope/measure.h"
#include "attnscope/qk.h"

#include <cblas.h>
#include <math.h>

/* A matrix drawn exactly 0: no std, no diagonal, not orthonormalised. */
static bool drawn_zero(const Config *c, Matrix m)
{
    MatrixInit init = Init_matrix(c, m);
    return init.std == 0 && init.diagonal == 0 && !init.orthogonal;
}

bool Layer_attention_uniform(const Config *c)
{
    if (c->attention == ATTENTION_UNIFORM)
        return true;
    return c->attention == ATTENTION_SOFTMAX && !Config_has_sink(c) && !Layer_weights_in_use() &&
           (drawn_zero(c, MATRIX_QUERY) || drawn_zero(c, MATRIX_KEY));
}

bool Layer_logits_through_qk_product(const Config *c, int layer)
{
    if (!Attention_has_query_key(c->attention) || Qk_normalised(c) || Qk_rotates(c, layer))
        return false;
    const LayerAffine *a = Layer_affine(c, layer);
    if (a && (a->query_bias || a->key_bias))
        return false;
    /* The rule of Entropy_input_norm_exact: below it the layers keep their rounding. */
    if (Measure_svd_cheap(c->tokens, c->width))
        return false;
    double T = c->tokens, d = c->width, dh = Config_head_width(c), H = c->heads,
           G = Config_kv_heads(c), networks = 2;
    double through = 2 * H * d * d * dh + networks * H * (2 * T * d * d + 2 * T * T * d);
    double projected = networks * (2 * T * d * (H + G) * dh + 2 * H * T * T * dh);
    return through < projected;
}

size_t Layer_qk_product_doubles(const Config *c)
{
    for (int layer = 1; c && layer <= c->depth; layer++)
        if (Layer_logits_through_qk_product(c, layer))
            return (size_t)c->heads * c->width * c->width;
    return 0;
}

int Layer_qk_product(Linalg *la, const Config *c, const double *query, const double *key,
                     double *product)
{
    int d = c->width, dh = Config_head_width(c);
    size_t block = (size_t)d * dh, dd = (size_t)d * d;
    int info = 0;
    for (int h = 0; h < c->heads && !info; h++)
        info = Linalg_gemm(la, false, true, d, d, dh, 1.0, query + block * h, d,
                           key + block * Config_kv_head_of(c, h), d, 0.0, product + dd * h, d);
    return info;
}

void Layer_declare_qk_product(const Config *c, WorkList *out)
{
    WorkList_add(out, WORK_PRODUCT, c->width, c->width, Config_head_width(c), c->heads);
}

/* Stage 2's queries q (T×H·d_h) and keys k (T×G·d_h) of layer `layer`: the projections with
   their biases, then QK-norm and RoPE on them (qk.h).  Returns 0 or LINALG_STOPPED. */
static int project_query_key(const Config *c, int layer, const LayerWeights *w,
                             const LayerAffine *a, LayerBuffers *b, const double *source, double *q,
                             double *k)
{
    int T = c->tokens, d = c->width, inner = Config_heads_width(c), kv = Layer_kv_width(c);
    int info = Step_gemm(b, false, false, T, inner, d, 1.0, source, T, w->query, d, 0.0, q, T);
    if (!info)
        info = Step_gemm(b, false, false, T, kv, d, 1.0, source, T, w->key, d, 0.0, k, T);
    if (info)
        return info;
    if (a) {
        Step_add_bias(b, T, inner, q, 1.0, a->query_bias);
        Step_add_bias(b, T, kv, k, 1.0, a->key_bias);
    }
    Step_shape_query_key(c, layer, a, b, q, k);
    return 0;
}

/* X'·W^V (and its bias) into `values`, T×G·d_h.  Returns 0 or LINALG_STOPPED. */
static int project_values(const Config *c, const LayerWeights *w, const LayerAffine *a,
                          LayerBuffers *b, const double *source)
{
    int T = c->tokens, d = c->width, kv = Layer_kv_width(c);
    int info = Step_gemm(b, false, false, T, kv, d, 1.0, source, T, w->value, d, 0.0, b->values, T);
    if (!info && a)
        Step_add_bias(b, T, kv, b->values, 1.0, a->value_bias);
    return info;
}

/* Whether the step takes head logits through M_h (Layer_logits_through_qk_product): where
   the driver formed it, and while declaring where the rule says the drivers do. */
static bool through_qk_product(const Config *c, int layer, const LayerWeights *w,
                               const LayerBuffers *b)
{
    return b->declared ? Layer_logits_through_qk_product(c, layer) : w->qk_product != NULL;
}

/* Stage 2 with several heads: every head's queries, every key/value head's keys and (with
   values) values in one product each, as wide products run nearer the BLAS's peak than H
   narrow ones.  One head projects its queries and keys in head_logits.  Returns 0 or
   LINALG_STOPPED. */
static int project_heads(const Config *c, int layer, const LayerWeights *w, const LayerAffine *a,
                         LayerBuffers *b, const double *source, bool values)
{
    int info = 0;
    if (Attention_has_query_key(c->attention) && !through_qk_product(c, layer, w, b))
        info = project_query_key(c, layer, w, a, b, source, b->queries, b->keys);
    if (!info && values)
        info = project_values(c, w, a, b, source);
    return info;
}

/* LayerStep.mix_tokens_first: A·X' into `values`, then X ← keep·X + branch·(A·X')·W^V (one
   fused head, no value bias), 2T²d + 2Td² flops as A·(X'·W^V).  Returns 0 or LINALG_STOPPED. */
static int mix_then_project(const Config *c, const LayerWeights *w, LayerBuffers *b,
                            const double *source)
{
    int T = c->tokens, d = c->width;
    int info =
        Step_gemm(b, true, false, T, d, T, 1.0, b->attention, T, source, T, 0.0, b->values, T);
    if (info)
        return info;
    StepJoin join = Step_join_of(c, b);
    return Step_gemm(b, false, false, T, d, d, join.branch, b->values, T, w->value, d, join.keep,
                     join.into, T);
}

/* The soft-cap on the logits just formed (status 0), which *logits then names. */
static int finish_logits(const Config *c, LayerBuffers *b, int status, const double **logits)
{
    if (!status && c->logit_softcap > 0)
        Step_softcap(c, b);
    if (!status)
        *logits = b->logits;
    return status;
}

/* The logits of head h (from 0), row-major: S = X W^Q_h (X W^K_h)ᵀ·scale, i.e.
   Sᵀ = K Qᵀ·scale in column-major, scale Init_logit_scale; W^Q_h is the h-th block of d_h
   columns of W^Q.  Through M_h (through_qk_product): S = (X M_h) Xᵀ·scale.  For markov the "logits"
   are σ_qk²·g, whose row-softmax is Z normalised. *logits is NULL for kinds without logits. Returns
   0 or LINALG_STOPPED. */
static int head_logits(const Config *c, int layer, const LayerWeights *w, const LayerAffine *a,
                       LayerBuffers *b, int h, const double *source, const double **logits)
{
    int T = c->tokens, dh = Config_head_width(c);
    *logits = NULL;
    if (c->attention == ATTENTION_MARKOV) {
        *logits = Step_block(w->markov, (size_t)h * T * T);
        return 0;
    }
    if (!Attention_has_query_key(c->attention))
        return 0;
    if (through_qk_product(c, layer, w, b)) {
        /* X M_h into the queries' buffer (free: nothing was projected), then
           (X M_h) Xᵀ·scale, row-major as below: X (X M_h)ᵀ in column-major. */
        int d = c->width;
        double *xm = b->queries;
        int status = Step_gemm(b, false, false, T, d, d, 1.0, source, T,
                               Step_block(w->qk_product, (size_t)d * d * h), d, 0.0, xm, T);
        if (!status)
            status = Step_gemm(b, false, true, T, T, d, Init_logit_scale(c), source, T, xm, T, 0.0,
                               b->logits, T);
        return finish_logits(c, b, status, logits);
    }
    /* Several heads: their queries and keys were projected at once (project_heads), head h's
       queries are their h-th block of columns, its keys its key/value head's block.  One
       head: the values' buffer is free until the values are applied. */
    double *q = b->queries, *k = b->values;
    int status = 0;
    if (c->heads > 1) {
        q = Step_block(b->queries, (size_t)T * dh * h);
        k = Step_block(b->keys, (size_t)T * dh * Config_kv_head_of(c, h));
    } else {
        status = project_query_key(c, layer, w, a, b, source, q, k);
    }
    if (!status)
        status =
            Step_gemm(b, false, true, T, T, dh, Init_logit_scale(c), k, T, q, T, 0.0, b->logits, T);
    return finish_logits(c, b, status, logits);
}

static int attention(const Config *c, int layer, const LayerWeights *w, LayerBuffers *b, int head,
                     const double **logits, LayerOutcome *outcome)
{
    const LayerAffine *a = Layer_affine(c, layer);
    const double *source = Step_branch_input(c, b, Step_norm_at(a, NORM_ATTENTION_IN));
    int info = c->heads > 1 ? project_heads(c, layer, w, a, b, source, false) : 0;
    if (!info)
        info = head_logits(c, layer, w, a, b, head, source, logits);
    if (info)
        return info;
    Step_build_attention(c, layer, Step_head_sink(c, w, head), b, *logits);
    size_t tt = (size_t)c->tokens * c->tokens;
    *outcome = Step_all_finite(b, b->attention, tt) ? LAYER_DONE : LAYER_ATTENTION_OVERFLOW;
    return 0;
}

int Layer_attention(const Config *c, int layer, const LayerWeights *w, LayerBuffers *b, int head,
                    const double **logits, LayerOutcome *outcome)
{
    return attention(c, layer, w, b, head, logits, outcome);
}

void Layer_declare_attention(const Config *c, int layer, int head, WorkList *out)
{
    LayerBuffers b = {.declared = out};
    const double *logits;
    LayerOutcome outcome;
    attention(c, layer, &(LayerWeights){0}, &b, head, &logits, &outcome);
}

/* Stage 3, head h: its attention (unless the driver built it), gap removal, and its output
   A_h·X'·W^V_h, joined to X when the heads are fused (X ← keep·X + branch·A X' W^V, Step_join_of)
   and into its block of columns of `mixed` otherwise. */
static int step_head(const LayerStep *s, const LayerAffine *a, LayerBuffers *b, int h,
                     const double *source, LayerOutcome *outcome)
{
    const Config *c = s->config;
    const LayerObserver *o = s->observer;
    int T = c->tokens, d = c->width, dh = Config_head_width(c);
    const double *logits = s->built_logits;
    if (!s->attention_built) {
        int status = head_logits(c, s->layer, s->weights, a, b, h, source, &logits);
        if (status)
            return status;
        Step_build_attention(c, s->layer, Step_head_sink(c, s->weights, h), b, logits);
    }
    if (Step_stop_requested(b))
        return LINALG_STOPPED;
    /* Linear attention squares the tokens' scale: its matrix overflows a layer or more before
       the tokens do, and no spectrum of a matrix with infinities exists. */
    if (!Step_all_finite(b, b->attention, (size_t)T * T)) {
        *outcome = LAYER_ATTENTION_OVERFLOW;
        return 0;
    }
    if (o && o->built)
        o->built(o->context, h, logits, b->attention);
    GapOutcome gap;
    Warnings gap_warnings = {.count = 0};
    int info = Step_remove_gap(c, s->layer, b, s->gap, &gap, &gap_warnings);
    if (!info && o && o->applied)
        info = o->applied(o->context, h, b->attention, gap, &gap_warnings);
    /* The attention buffer is Aᵀ to BLAS, hence the transposed flag.  Several heads: X' W^V
       is in `values` already (project_heads). */
    if (!info && s->mix_tokens_first)
        return mix_then_project(c, s->weights, b, source);
    if (!info && c->heads == 1)
        info = project_values(c, s->weights, a, b, source);
    if (info)
        return info;
    if (Layer_fused_heads(c)) {
        StepJoin join = Step_join_of(c, b);
        return Step_gemm(b, true, false, T, d, T, join.branch, b->attention, T, b->values, T,
                         join.keep, join.into, T);
    }
    size_t at = (size_t)T * dh * h, shared = (size_t)T * dh * Config_kv_head_of(c, h);
    return Step_gemm(b, true, false, T, dh, T, 1.0, b->attention, T, Step_block(b->values, shared),
                     T, 0.0, Step_block(b->mixed, at), T);
}

/* Stage 4: X ← keep·X + branch·[head_1 … head_H]·W^O (Step_join_of), once every head has read X;
   the heads' T×H·d_h through the H·d_h×d W^O (the identity only where H·d_h = d,
   Config_validate).  Returns 0 or LINALG_STOPPED. */
static int combine_heads(const Config *c, const LayerWeights *w, const LayerAffine *a,
                         LayerBuffers *b)
{
    int T = c->tokens, d = c->width, inner = Config_heads_width(c);
    StepJoin join = Step_join_of(c, b);
    if (c->output == OUTPUT_IDENTITY) {
        Step_residual_sum(b, join.keep, join.branch, join.into, b->mixed, (size_t)T * d);
        return 0;
    }
    int info = Step_gemm(b, false, false, T, d, inner, join.branch, b->mixed, T, w->output, inner,
                         join.keep, join.into, T);
    if (!info && a) /* F = [heads]·W^O + β_O joins as branch·F */
        Step_add_bias(b, T, d, join.into, join.branch, a->output_bias);
    return info;
}

/* Stage 6: the MLP sub-block with its own skip and LayerNorm, placed as the attention's:
   X ← a·X + b·φ(X' W1) W2 with X' = X (post, then LN; output) or LN(X) (pre, peri), φ(X' W1) W2
   normalised before it joins under peri and output; gated,
   X ← a·X + b·(φ(X' W1) ⊙ X' W_up) W2 (W1 the gate, W2 the down projection).  Returns 0 or
   LINALG_STOPPED. */
static int mlp_sublayer(const Config *c, const LayerWeights *w, const LayerAffine *a,
                        LayerBuffers *b)
{
    int T = c->tokens, d = c->width, hidden = Config_mlp_hidden(c);
    size_t n = (size_t)T * hidden;
    const double *source = Step_branch_input(c, b, Step_norm_at(a, NORM_MLP_IN));
    int info = Step_gemm(b, false, true, T, hidden, d, 1.0, source, T, w->mlp_in, hidden, 0.0,
                         b->hidden, T);
    if (!info && Config_mlp_gated(c))
        info = Step_gemm(b, false, true, T, hidden, d, 1.0, source, T, w->mlp_up, hidden, 0.0,
                         b->up, T);
    if (info)
        return info;
    if (a) {
        Step_add_bias(b, T, hidden, b->hidden, 1.0, a->mlp_in_bias);
        if (Config_mlp_gated(c))
            Step_add_bias(b, T, hidden, b->up, 1.0, a->mlp_up_bias);
    }
    Step_activate(c, b, n);
    if (Config_mlp_gated(c))
        Step_entrywise_product(b, b->hidden, b->up, n);
    StepJoin join = Step_join_of(c, b);
    info = Step_gemm(b, false, false, T, d, hidden, join.branch, b->hidden, T, w->mlp_out, hidden,
                     join.keep, join.into, T);
    if (info)
        return info;
    if (a) /* F = φ(·)·W2 + β2 joins as branch·F */
        Step_add_bias(b, T, d, join.into, join.branch, a->mlp_out_bias);
    Step_join_normed_branch(c, b, Step_norm_at(a, NORM_MLP_OUT));
    Step_post_norm(c, b, Step_norm_at(a, NORM_MLP_OUT));
    return 0;
}

bool Layer_network_has_bias(const Config *c)
{
    for (int layer = 1; layer <= c->depth; layer++) {
        const LayerAffine *a = Layer_affine(c, layer);
        if (a && (a->value_bias || a->output_bias || a->mlp_in_bias || a->mlp_up_bias ||
                  a->mlp_out_bias))
            return true;
    }
    return false;
}

/* Stage 7: where A does not depend on X and every stage is homogeneous of degree 1 in X
   (no LayerNorm; no MLP, or a relu one; no bias), X is carried at unit norm with its scale
   apart. */
static void carry_scale(const Config *c, LayerBuffers *b, double *log_scale)
{
    size_t td = (size_t)c->tokens * c->width;
    bool homogeneous = Attention_is_input_independent(c->attention) &&
                       c->layernorm == LAYERNORM_NONE &&
                       (c->mlp == MLP_NONE || c->mlp == MLP_RELU) && !Layer_network_has_bias(c);
    if (!homogeneous) /* X's scale stays in X: not even its norm is wanted */
        return;
    if (b->declared) { /* the norm and the scaling */
        Step_declare(b, WORK_PASSES, 2.0 * (double)td, 0, 0);
        return;
    }
    double norm = cblas_dnrm2((int)td, b->x, 1);
    if (norm > 0) {
        cblas_dscal((int)td, 1.0 / norm, b->x, 1);
        *log_scale += log(norm);
    }
}

int Layer_step(const LayerStep *step, LayerBuffers *b, LayerOutcome *outcome, double *log_scale)
{
    const Config *c = step->config;
    const LayerObserver *o = step->observer;
    const LayerAffine *a = Layer_affine(c, step->layer);
    *outcome = LAYER_DONE;
    const double *source = Step_branch_input(c, b, Step_norm_at(a, NORM_ATTENTION_IN));
    int info = o && o->branch_input ? o->branch_input(o->context, source) : 0;
    if (!info && c->heads > 1)
        info = project_heads(c, step->layer, step->weights, a, b, source, true);
    for (int h = 0; h < c->heads && !info && *outcome == LAYER_DONE; h++)
        info = step_head(step, a, b, h, source, outcome);
    if (info || *outcome != LAYER_DONE) /* an overflowed head leaves no finite output */
        return info;
    if (!Layer_fused_heads(c))
        info = combine_heads(c, step->weights, a, b);
    if (info)
        return info;
    Step_join_normed_branch(c, b, Step_norm_at(a, NORM_ATTENTION_OUT));
    Step_post_norm(c, b, Step_norm_at(a, NORM_ATTENTION_OUT));
    if (c->mlp != MLP_NONE)
        info = mlp_sublayer(c, step->weights, a, b);
    if (info)
        return info;
    if (Step_stop_requested(b))
        return LINALG_STOPPED;
    if (!Step_all_finite(b, b->x, (size_t)c->tokens * c->width)) {
        *outcome = LAYER_TOKENS_OVERFLOW;
        return 0;
    }
    carry_scale(c, b, log_scale);
    return 0;
}

void Layer_declare(const LayerStep *step, WorkList *out)
{
    LayerStep declared = *step;
    declared.observer = NULL;
    declared.weights = &(LayerWeights){0};
    LayerBuffers b = {.declared = out};
    LayerOutcome outcome;
    double log_scale = 0;
    Layer_step(&declared, &b, &outcome, &log_scale);
}
