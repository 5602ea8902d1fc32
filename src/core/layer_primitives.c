/* What a stage of the layer does, through a few primitives (a product, a pass, an attention
 * build, gap removal, the query-key shaping): each either computes on the step's buffers or,
 * when b->declared is set (Layer_declare), adds the work it would do to that list and computes
 * nothing.  The stages call only these (and the norms of layer_norms.c, made of them), so the
 * work the plan and the cost read is the list of what the step executes, stage by stage.
 * Beside them, the buffers a step runs on (Layer_buffers).  Apart from the stages (layer.c)
 * so that the run-or-declare rule is read in one place. */
#include "layer_internal.h"

#include "attnscope/attention.h"
#include "attnscope/block.h"
#include "attnscope/qk.h"

#include <math.h>
#include <string.h>

bool Layer_fused_heads(const Config *c)
{
    return c->heads == 1 && c->output == OUTPUT_IDENTITY;
}

int Layer_kv_width(const Config *c)
{
    return Config_kv_heads(c) * Config_head_width(c);
}

void Layer_buffers(const Config *c, LayerBuffers *b, bool gap_scratch,
                   LayerBuffer out[LAYER_BUFFERS])
{
    size_t T = c ? (size_t)c->tokens : 0, d = c ? (size_t)c->width : 0;
    size_t td = T * d, tt = T * T;
    /* The heads' T×H·d_h (queries, mixed; keys and values take G·d_h of it), each at least
       T×d: the queries' holds X M_h where the logits go through M_h, and the drivers borrow
       these buffers for T×d tokens between steps. */
    size_t inner = c ? (size_t)Config_heads_width(c) : 0, th = T * inner > td ? T * inner : td;
    size_t hidden = c && c->mlp != MLP_NONE ? (size_t)Config_mlp_hidden(c) : 0;
    size_t row = T > d ? T : d;
    const LayerBuffer list[LAYER_BUFFERS] = {
        {&b->x, td},
        {&b->normed, c && Layer_pre_norm(c) ? td : 0},
        {&b->branch, c && Layer_branch_norm(c) ? td : 0},
        {&b->queries, th},
        {&b->keys, c && c->heads > 1 ? th : 0},
        {&b->values, th},
        {&b->logits, tt},
        {&b->attention, tt},
        {&b->mixed, c && !Layer_fused_heads(c) ? th : 0},
        {&b->hidden, T * hidden},
        {&b->up, c && Config_mlp_gated(c) ? T * hidden : 0},
        {&b->row_stat, row > inner ? row : inner},
        {&b->row_max, T},
        {&b->gap_scratch, c && gap_scratch ? Gap_scratch_size(c->tokens) : 0},
    };
    memcpy(out, list, sizeof list);
    b->declared = NULL; /* buffers a driver sets up are run on, never declared */
}

void Step_declare(LayerBuffers *b, WorkKind kind, double m, double n, double k)
{
    WorkList_add(b->declared, kind, m, n, k, 1);
}

/* A block of a buffer from `offset` (none while declaring: the buffers are not there). */
double *Step_block(double *base, size_t offset)
{
    return base ? base + offset : NULL;
}

int Step_gemm(LayerBuffers *b, bool ta, bool tb, int m, int n, int k, double alpha, const double *a,
              int lda, const double *x, int ldx, double beta, double *y, int ldy)
{
    if (b->declared) {
        Step_declare(b, WORK_PRODUCT, m, n, k);
        return 0;
    }
    return Linalg_gemm(b->la, ta, tb, m, n, k, alpha, a, lda, x, ldx, beta, y, ldy);
}

/* Whether x (n entries) is finite: a pass over it. */
bool Step_all_finite(LayerBuffers *b, const double *x, size_t n)
{
    if (b->declared) {
        Step_declare(b, WORK_PASSES, (double)n, 0, 0);
        return true;
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

bool Step_stop_requested(const LayerBuffers *b)
{
    return !b->declared && Linalg_stop_requested(b->la);
}

/* x[i, j] ← x[i, j] + scale·bias[j] (every row): a pass; nothing where bias is NULL (none). */
void Step_add_bias(LayerBuffers *b, int rows, int n, double *x, double scale, const double *bias)
{
    if (!bias)
        return;
    if (b->declared) {
        Step_declare(b, WORK_PASSES, (double)rows * n, 0, 0);
        return;
    }
    for (int j = 0; j < n; j++) {
        double add = scale * bias[j];
        double *column = x + (size_t)rows * j;
        for (int i = 0; i < rows; i++)
            column[i] += add;
    }
}

/* QK-norm (with its gains where a checkpoint has them) and RoPE on the T×H·d_h queries and
   T×G·d_h keys (qk.h): a pass for each norm's sums, its scaling, each gain and each
   rotation. */
void Step_shape_query_key(const Config *c, int layer, const LayerAffine *a, LayerBuffers *b,
                          double *q, double *k)
{
    const double *q_gain = a ? a->query_norm_gain : NULL, *k_gain = a ? a->key_norm_gain : NULL;
    if (!b->declared) {
        Qk_shape(c, layer, c->tokens, q, k, q_gain, k_gain, b->row_stat, b->row_max);
        return;
    }
    double T = c->tokens, entries = T * (Config_heads_width(c) + Layer_kv_width(c));
    if (Qk_normalised(c))
        Step_declare(b, WORK_PASSES,
                     3 * entries + (q_gain ? T * Config_heads_width(c) : 0) +
                         (k_gain ? T * Layer_kv_width(c) : 0),
                     0, 0);
    if (Qk_rotates(c, layer))
        Step_declare(b, WORK_PASSES, 2 * entries, 0, 0);
}

/* Head h's sink logit, −∞ (none) without sinks, or without weights (a plan's walk). */
double Step_head_sink(const Config *c, const LayerWeights *w, int h)
{
    return Config_has_sink(c) && w->sink ? w->sink[h] : -INFINITY;
}

/* A head's attention matrix from its logits (docs/model.md §1.2) under the layer's mask and
   the head's sink, the kinds with exp (or erfc) priced as such. */
void Step_build_attention(const Config *c, int layer, double sink, LayerBuffers *b,
                          const double *logits)
{
    bool exp_kind = c->attention == ATTENTION_SOFTMAX || c->attention == ATTENTION_MARKOV ||
                    c->attention == ATTENTION_SIGMOID;
    if (b->declared)
        Step_declare(b, exp_kind ? WORK_BUILD_EXP : WORK_BUILD_PLAIN, (double)c->tokens * c->tokens,
                     0, 0);
    else
        Attention_build(c->attention, Config_layer_mask(c, layer), c->window, c->tokens, logits,
                        sink, b->attention);
}

void Step_softcap(const Config *c, LayerBuffers *b)
{
    size_t tt = (size_t)c->tokens * c->tokens;
    if (b->declared) /* C·tanh(S/C) on every logit */
        Step_declare(b, WORK_BUILD_EXP, (double)tt, 0, 0);
    else
        Attention_softcap(c->logit_softcap, b->logits, tt);
}

int Step_remove_gap(const Config *c, int layer, LayerBuffers *b, Gap mode, GapOutcome *outcome,
                    Warnings *warnings)
{
    if (b->declared) {
        Work_gap_removal(c, mode, layer, b->declared);
        *outcome = (GapOutcome){0};
        return 0;
    }
    return Gap_apply(mode, c->attention, Config_has_sink(c), Layer_attention_uniform(c),
                     Config_layer_mask(c, layer), c->window, c->tokens, b->attention, b->la,
                     b->gap_scratch, outcome, warnings);
}

/* The MLP's activation on its n hidden entries (relu a pass, the others with exp or erf). */
void Step_activate(const Config *c, LayerBuffers *b, size_t n)
{
    if (b->declared)
        Step_declare(b, c->mlp == MLP_RELU ? WORK_PASSES : WORK_BUILD_EXP, (double)n, 0, 0);
    else
        Block_activate(c->mlp, b->hidden, n);
}

/* y ← y ⊙ x over n entries: a pass. */
void Step_entrywise_product(LayerBuffers *b, double *y, const double *x, size_t n)
{
    if (b->declared) {
        Step_declare(b, WORK_PASSES, (double)n, 0, 0);
        return;
    }
    for (size_t i = 0; i < n; i++)
        y[i] *= x[i];
}
