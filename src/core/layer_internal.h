/* What the files of the layer step share inside the core (layer.h is their interface):
 *
 *   layer.c            the stages and the step (Layer_step, Layer_declare)
 *   layer_draw.c       the weights and X0, drawn from their streams or read from the source
 *   layer_primitives.c what a stage does, run on the buffers or declared; the buffers
 *   layer_norms.c      the residual and its LayerNorms: placement, the branch's input, the join
 *
 * Each Step_ primitive computes on b, or, with b->declared set, adds its work to that list and
 * computes nothing (layer_primitives.c says why).
 */
#ifndef ATTNSCOPE_LAYER_INTERNAL_H
#define ATTNSCOPE_LAYER_INTERNAL_H

#include "attnscope/layer.h"
#include "attnscope/work.h"

#include <stdbool.h>
#include <stddef.h>

/* Where a sub-block's last product puts F: into X with the residual's gains (X ← keep·X +
   branch·F in the product itself), or, when F is normalised before it joins, alone into
   `branch` (Step_join_normed_branch then adds it). */
typedef struct {
    double *into;
    double branch, keep;
} StepJoin;

/* layer_primitives.c */

/* Adds one item of work to b->declared. */
void Step_declare(LayerBuffers *b, WorkKind kind, double m, double n, double k);
/* A block of a buffer from `offset` (none while declaring: the buffers are not there). */
double *Step_block(double *base, size_t offset);
/* A product through Linalg_gemm, or its size declared. */
int Step_gemm(LayerBuffers *b, bool ta, bool tb, int m, int n, int k, double alpha, const double *a,
              int lda, const double *x, int ldx, double beta, double *y, int ldy);
/* Whether x (n entries) is finite: a pass over it. */
bool Step_all_finite(LayerBuffers *b, const double *x, size_t n);
/* Whether the driver asked the step to stop (never while declaring). */
bool Step_stop_requested(const LayerBuffers *b);
/* x[i, j] ← x[i, j] + scale·bias[j] (every row): a pass; nothing where bias is NULL (none). */
void Step_add_bias(LayerBuffers *b, int rows, int n, double *x, double scale, const double *bias);
/* QK-norm and RoPE on the T×H·d_h queries and T×G·d_h keys (qk.h). */
void Step_shape_query_key(const Config *c, int layer, const LayerAffine *a, LayerBuffers *b,
                          double *q, double *k);
/* Head h's sink logit, −∞ (none) without sinks, or without weights (a plan's walk). */
double Step_head_sink(const Config *c, const LayerWeights *w, int h);
/* A head's attention matrix from its logits under the layer's mask and the head's sink. */
void Step_build_attention(const Config *c, int layer, double sink, LayerBuffers *b,
                          const double *logits);
/* C·tanh(S/C) on every logit. */
void Step_softcap(const Config *c, LayerBuffers *b);
/* Gap removal on b->attention (Gap_apply). */
int Step_remove_gap(const Config *c, int layer, LayerBuffers *b, Gap mode, GapOutcome *outcome,
                    Warnings *warnings);
/* The MLP's activation on its n hidden entries. */
void Step_activate(const Config *c, LayerBuffers *b, size_t n);
/* y ← y ⊙ x over n entries: a pass. */
void Step_entrywise_product(LayerBuffers *b, double *y, const double *x, size_t n);

/* layer_norms.c */

/* Where the sub-block's last product puts F (StepJoin). */
StepJoin Step_join_of(const Config *c, LayerBuffers *b);
/* The affine part of the norm at `site` of a layer, or NULL. */
const NormAffine *Step_norm_at(const LayerAffine *a, LayerNormSite site);
/* y ← keep·y + branch·x over n entries: a pass (y not read where keep = 0). */
void Step_residual_sum(LayerBuffers *b, double keep, double branch, double *y, const double *x,
                       size_t n);
/* Peri- and output-LN: X ← keep·X + branch·LN(F), F in `branch`. */
void Step_join_normed_branch(const Config *c, LayerBuffers *b, const NormAffine *norm);
/* Post-LN: X ← LN(X) after a sub-block's skip. */
void Step_post_norm(const Config *c, LayerBuffers *b, const NormAffine *norm);
/* Stage 1: what the branch F reads, X or LN(X) in `normed` under pre- and peri-LN. */
const double *Step_branch_input(const Config *c, LayerBuffers *b, const NormAffine *norm);

#endif
