/* The residual and its LayerNorms (docs/model.md §1.5, §1.8): where a norm sits (pre, peri,
 * post, output), what the branch F reads (X or LN(X)), how F joins X with the skip's and the
 * branch's gains (X <- keep·X + branch·F, or F normalised first), and the norm itself with the
 * gain and bias a checkpoint gives it.  Apart from the stages (layer.c) because every
 * sub-block (attention, MLP) places its norms and joins the same way, from these. */
#include "layer_internal.h"

#include "attnscope/block.h"

#include <math.h>
#include <string.h>

bool Layer_pre_norm(const Config *c)
{
    return (c->ln_place == LN_PLACE_PRE || c->ln_place == LN_PLACE_PERI) &&
           c->layernorm != LAYERNORM_NONE;
}

bool Layer_branch_norm(const Config *c)
{
    return (c->ln_place == LN_PLACE_PERI || c->ln_place == LN_PLACE_OUTPUT) &&
           c->layernorm != LAYERNORM_NONE;
}

/* The residual's gains, X ← keep·X + branch·F(X) (docs/model.md §1.5, §1.8): the skip's a
   (none: 0) and the branch's b, over √d for the scaled skip. */
double Layer_skip_gain(const Config *c)
{
    return c->skip == SKIP_NONE ? 0.0 : c->skip_gain;
}

double Layer_branch_gain(const Config *c)
{
    return c->skip == SKIP_SCALED ? c->branch_gain / sqrt((double)c->width) : c->branch_gain;
}

StepJoin Step_join_of(const Config *c, LayerBuffers *b)
{
    if (Layer_branch_norm(c))
        return (StepJoin){.into = b->branch, .branch = 1.0, .keep = 0.0};
    return (StepJoin){.into = b->x, .branch = Layer_branch_gain(c), .keep = Layer_skip_gain(c)};
}

/* A norm's gain on the T×d x (Block_gain_columns): a pass. */
static void norm_gain(const Config *c, LayerBuffers *b, double *x, const double *gain)
{
    if (b->declared)
        Step_declare(b, WORK_PASSES, (double)c->tokens * c->width, 0, 0);
    else
        Block_gain_columns(c->tokens, c->width, x, gain, c->norm_gain_offset);
}

/* LayerNorm (or RMSNorm) of the T×d rows of x: a pass to sum, one to scale, one to write;
   then the norm's gain and bias where it has them (a pass each). */
static void layernorm(const Config *c, LayerBuffers *b, double *x, const NormAffine *affine)
{
    if (c->layernorm == LAYERNORM_NONE)
        return;
    if (!b->declared)
        Block_layernorm(c, c->tokens, c->width, x, b->row_stat, b->row_max);
    else
        Step_declare(b, WORK_PASSES, 3.0 * c->tokens * c->width, 0, 0);
    if (affine && affine->gain)
        norm_gain(c, b, x, affine->gain);
    if (affine)
        Step_add_bias(b, c->tokens, c->width, x, 1.0, affine->bias);
}

/* The affine part of the norm at `site` of a layer, or NULL. */
const NormAffine *Step_norm_at(const LayerAffine *a, LayerNormSite site)
{
    return a ? &a->norm[site] : NULL;
}

/* y ← keep·y + branch·x over n entries: a pass.  With keep = 0, y is not read, as BLAS reads
   no C where β = 0: it may be a buffer that holds nothing yet (`branch`, into which F goes
   alone), where 0·NaN would be NaN. */
void Step_residual_sum(LayerBuffers *b, double keep, double branch, double *y, const double *x,
                       size_t n)
{
    if (b->declared) {
        Step_declare(b, WORK_PASSES, (double)n, 0, 0);
        return;
    }
    if (keep == 0) {
        for (size_t i = 0; i < n; i++)
            y[i] = branch * x[i];
        return;
    }
    for (size_t i = 0; i < n; i++)
        y[i] = keep * y[i] + branch * x[i];
}

/* Peri- and output-LN: X ← keep·X + branch·LN(F), F in `branch`, LN with `norm`'s gain and
   bias. */
void Step_join_normed_branch(const Config *c, LayerBuffers *b, const NormAffine *norm)
{
    if (!Layer_branch_norm(c))
        return;
    layernorm(c, b, b->branch, norm);
    Step_residual_sum(b, Layer_skip_gain(c), Layer_branch_gain(c), b->x, b->branch,
                      (size_t)c->tokens * c->width);
}

/* Post-LN: X ← LN(X) after a sub-block's skip. */
void Step_post_norm(const Config *c, LayerBuffers *b, const NormAffine *norm)
{
    if (c->ln_place == LN_PLACE_POST)
        layernorm(c, b, b->x, norm);
}

/* Stage 1: what the branch F reads, X or LN(X) in `normed` under pre- and peri-LN (LN with
   `norm`'s gain and bias). */
const double *Step_branch_input(const Config *c, LayerBuffers *b, const NormAffine *norm)
{
    if (!Layer_pre_norm(c))
        return b->x;
    size_t td = (size_t)c->tokens * c->width;
    if (b->declared)
        Step_declare(b, WORK_PASSES, (double)td, 0, 0);
    else
        memcpy(b->normed, b->x, sizeof(double) * td);
    layernorm(c, b, b->normed, norm);
    return b->normed;
}
