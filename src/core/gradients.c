/* The frozen-attention gradients of docs/model.md §2: ‖∂X_L/∂W^V_ℓ‖_F² with the attention
 * frozen, from the products A_ℓ⋯A_1 X0 the lanes carry along the layers and the value weights
 * of every layer, kept while they fit. */
#include "attnscope/layer.h"
#include "attnscope/work.h"
#include "model_internal.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* The frozen-attention gradient is the product formula of docs/model.md §2, which describes the
   network of one head without skips, LayerNorm or output projection. */
bool gradients_apply(const Config *c)
{
    return Model_gradients_unavailable(c) == NULL;
}

const char *Model_gradients_unavailable(const Config *c)
{
    if (c->skip != SKIP_NONE || c->layernorm != LAYERNORM_NONE)
        return "needs no skip and no LayerNorm";
    if (c->heads != 1)
        return "needs one head (with H heads X_L is no product P1·W^V_ℓ·P2)";
    if (c->output != OUTPUT_IDENTITY)
        return "needs W^O = identity (the formula has no output projection)";
    if (c->branch_gain != 1.0)
        return "needs branch gain b = 1";
    if (c->mlp != MLP_NONE)
        return "needs no MLP (the formula has attention and values only)";
    if (Layer_network_has_bias(c))
        return "needs no bias (a checkpoint's value bias makes X_L no product P1·W^V_ℓ·P2)";
    return NULL;
}

/* log10 of the squared true norm of a product held at `norm` times exp(log_scale). */
static double log10_true_norm2(double norm, double log_scale)
{
    return 2.0 * (log10(norm) + log_scale / M_LN10);
}

/* The step's new product, in *spare, becomes *product at unit scale: `norm`, the old one's,
   joins the carried scale. */
static void take_step(double norm, double **product, double **spare, double *log_scale)
{
    double *t = *product;
    *product = *spare;
    *spare = t;
    *log_scale += log(norm);
}

/* Replaces `*product` (exp(*log_scale) times the true value) by left·product (left is
   rows×rows, transposed if asked) or product·right (right is cols×cols), renormalised to
   unit Frobenius norm with the scale carried in *log_scale.  *log10_norm2 is log10 of the
   squared true norm before the step (−inf for an exact 0, which then stays 0).  Neither left
   nor right: that norm alone, for a chain's last factor, whose product nothing reads.
   Returns 0, or LANE_STOPPED with *product and *log_scale as they were. */
static int scaled_step(Linalg *la, int rows, int cols, double **product, double **spare,
                       const double *left, const double *right, bool transpose_left,
                       double *log_scale, double *log10_norm2)
{
    double norm = cblas_dnrm2(rows * cols, *product, 1);
    *log10_norm2 = -INFINITY;
    if (!(norm > 0))
        return 0;
    *log10_norm2 = log10_true_norm2(norm, *log_scale);
    if (!left && !right)
        return 0;
    int status = left ? Linalg_gemm(la, transpose_left, false, rows, cols, rows, 1.0 / norm, left,
                                    rows, *product, rows, 0.0, *spare, rows)
                      : Linalg_gemm(la, false, false, rows, cols, cols, 1.0 / norm, *product, rows,
                                    right, cols, 0.0, *spare, rows);
    if (!status)
        take_step(norm, product, spare, log_scale);
    return status;
}

/* scaled_step of the identity (d×d, in *product) by `left` (d×d): left/‖I‖_F, each entry one
   rounded product, as the product's (its other terms are exact zeros; + 0.0 turns a −0 into
   the +0 the product's sum starts from), without its d³ multiplications.  Exact for a finite
   `left` alone (zeros times ∞ would be NaN in the product): a checkpoint's NaN and infinities
   are refused when it is opened (docs/weights.md). */
static int scaled_identity_step(int d, double **product, double **spare, const double *left,
                                double *log_scale, double *log10_norm2)
{
    size_t dd = (size_t)d * d;
    double norm = cblas_dnrm2((int)dd, *product, 1), scale = 1.0 / norm;
    for (size_t i = 0; i < dd; i++)
        (*spare)[i] = scale * left[i] + 0.0;
    *log10_norm2 = log10_true_norm2(norm, *log_scale);
    take_step(norm, product, spare, log_scale);
    return 0;
}

/* The first seed's W^V of a layer, kept for its gradients while the cache fits: a later run
   for the same weights reads it instead of drawing it again.  random and la: the calling
   lane's (an orthogonal W^V is drawn through a QR factorisation). */
int draw_value_weights(Workspace *w, RandomStream *random, Linalg *la, const Config *c,
                       uint64_t seed, int layer, double **out)
{
    size_t dd = (size_t)c->width * c->width;
    bool cached = value_cache_doubles(c) > 0;
    LayerWeights into = {.value =
                             cached ? w->value_cache + (size_t)(layer - 1) * dd : w->weights.value};
    *out = into.value;
    if (cached && w->value_cached[layer] && w->value_seed == seed)
        return 0;
    /* The draw writes into the slot as it goes, and a stop can end it part-way (an orthogonal
       W^V's QR polls the stop hook): until it succeeds, the slot holds no seed's matrix. */
    if (cached)
        w->value_cached[layer] = false;
    int info = Layer_draw(random, la, c, seed, layer, LAYER_DRAW_VALUE, &into, w->init_scratch);
    if (cached && !info) {
        if (w->value_seed != seed)
            memset(w->value_cached, 0, sizeof w->value_cached);
        w->value_seed = seed;
        w->value_cached[layer] = true;
    }
    return info;
}

/* Layer 1 multiplies A_1·X0 first for its values, and X0 is the frozen product's start: the
   step's own product is A_1·X0, 2T²d flops fewer a network than a product after it. */
bool Model_frozen_product_in_step(const Config *c, int layer)
{
    return layer == 1 && gradients_apply(c);
}

/* frozen ← A_ℓ·frozen after lane's layer step (LayerStep.mix_tokens_first), whose attention
   buffer holds the one head's applied matrix (as Aᵀ); the queries are spent, so their buffer
   is the product's spare.  The step's values' buffer holds A_ℓ·x, X_{ℓ−1} = exp(log_scale_in)·x:
   its norm is P1's at ℓ = L for a network of depth ℓ (X_{L−1} = A_{L−1}⋯A_1 X0 W_1⋯W_{L−1},
   so P1 = A_L⋯A_1 X0 W_1⋯W_{L−1} = A_L X_{L−1}).  Layer 1's is A_1 times the frozen product's
   start (a copy of X0, Model_frozen_product_in_step): copied, with X0's scale, log_frozen
   unchanged.  That copy takes log_frozen == log_scale_in at layer 1: both are X0's, 0 as
   run.c's input_layer leaves them (X0 is not rescaled), and A_1·x carries x's scale.
   Returns 0 or LANE_STOPPED. */
int frozen_attention_step(const Config *c, int layer, Lane *lane, Network *net, double log_scale_in)
{
    double mixed = cblas_dnrm2(c->tokens * c->width, lane->step.values, 1);
    net->log10_mixed2 = mixed > 0 ? log10_true_norm2(mixed, log_scale_in) : -INFINITY;
    if (Model_frozen_product_in_step(c, layer)) {
        memcpy(lane->frozen, lane->step.values, sizeof(double) * c->tokens * c->width);
        return 0;
    }
    double unused;
    return scaled_step(lane->step.la, c->tokens, c->width, &lane->frozen, &lane->step.queries,
                       lane->step.attention, NULL, true, &net->log_frozen, &unused);
}

static int gradient_product(Run *run, int which)
{
    Track *t = run->track[which];
    int l = run->layer;
    if (run->nets[which].dead) {
        /* X_L is exactly 0, so is its derivative; the array is reused between runs, so the
           value is written, never left as found. */
        t->log10_gradient_norm[l] = NAN;
        t->gradient_norm[l] = 0;
        return 0;
    }
    Lane *lane = &run->w->lane[which];
    int L = run->config->depth;
    double log10_p1 = run->nets[which].log10_mixed2; /* layer L's own A_L X_{L−1} */
    /* Layer L − 1's P1 is the chain's last: its norm alone (run->weights.value is NULL there);
       layer L's, A_L X_{L−1}, layer L's step measured. */
    int info = l < L ? scaled_step(lane->step.la, run->config->tokens, run->config->width,
                                   &lane->frozen, &lane->step.queries, NULL, run->weights.value,
                                   false, &run->nets[which].log_frozen, &log10_p1)
                     : 0;
    if (info)
        return info;
    t->log10_gradient_norm[l] += log10_p1;
    double value = pow(10.0, t->log10_gradient_norm[l]);
    t->gradient_norm[l] = isfinite(value) ? value : NAN;
    return 0;
}

/* Lane `which`'s W^V for a later pair of the gradients, if it has one: drawn from the lane's
   own stream object and Linalg into a buffer no pair reads until then. */
static int gradient_value_draw(Run *run, int which)
{
    int layer = run->value_draw_layer[which];
    if (!layer)
        return 0;
    Workspace *w = run->w;
    RandomStream *random = which == NETWORK_MAIN ? w->random : w->value_random;
    LayerWeights into = {.value = run->value_draw_into[which]};
    return Layer_draw(random, w->lane[which].step.la, run->config, run->seed, layer,
                      LAYER_DRAW_VALUE, &into, w->init_scratch);
}

static void gradient_task(int which, void *context)
{
    Run *run = context;
    run->info[which] = gradient_product(run, which);
    if (!run->info[which])
        run->info[which] = gradient_value_draw(run, which);
}

bool gradients_due(const Run *run)
{
    const Config *c = run->config;
    return run->first_seed && gradients_apply(c) &&
           (run->track[0]->gradient_depth != c->depth || run->track[1]->gradient_depth != c->depth);
}

/* log10 ‖P2‖_F² for ℓ = 1..L, P2 = W_{ℓ+1}⋯W_L (docs/model.md §2) from the top down with la,
   into both tracks of the first seed; run->values_chained then.  It reads the value weights
   alone (the cache, or their streams again, from `random`), so it may run before the layers,
   beside X0's draw and measures (run.c's input_layer).  The top step multiplies the identity
   (scaled_identity_step), the last needs only the norm: L − 2 products; W_1 is drawn only into
   the cache, for the layer.  The tracks hold no depth's gradients from here until
   frozen_attention_gradients completes them.  The logit weights' buffers are its scratch:
   free before a layer draws into them, and after the last.  Returns 0, LANE_STOPPED or
   LAPACK's status (an orthogonal W^V is drawn through a QR factorisation). */
int value_chain(Run *run, RandomStream *random, Linalg *la)
{
    Workspace *w = run->w;
    const Config *c = run->config;
    int d = c->width, L = c->depth;
    size_t dd = (size_t)d * d;
    double log_p2 = 0, *log10_p2 = run->track[NETWORK_COUNTERPART]->log10_gradient_norm;
    for (int n = 0; n < NETWORKS; n++)
        run->track[n]->gradient_depth = 0;
    /* P2 = I, then W_ℓ·P2 from the top down. */
    memset(w->weights.query, 0, sizeof(double) * dd);
    for (int i = 0; i < d; i++)
        w->weights.query[i + (size_t)i * d] = 1.0;
    for (int l = L; l >= 1; l--) {
        double *wv = NULL;
        int status = 0;
        if (l > 1 || value_cache_doubles(c) > 0)
            status = draw_value_weights(w, random, la, c, run->seed, l, &wv);
        if (status)
            return status;
        if (l == L && l > 1)
            status = scaled_identity_step(d, &w->weights.query, &w->weights.key, wv, &log_p2,
                                          &log10_p2[l]);
        else
            status = scaled_step(la, d, d, &w->weights.query, &w->weights.key, l > 1 ? wv : NULL,
                                 NULL, false, &log_p2, &log10_p2[l]);
        if (status)
            return status;
    }
    log10_p2[0] = NAN;
    memcpy(run->track[NETWORK_MAIN]->log10_gradient_norm, log10_p2, sizeof(double) * (L + 1));
    run->values_chained = true;
    return 0;
}

/* ‖∂X_L/∂W^V_ℓ‖_F² with attention frozen = ‖P1‖_F²·‖P2‖_F², P1 = A_L⋯A_1 X0 W_1⋯W_{ℓ−1},
   P2 = W_{ℓ+1}⋯W_L (docs/model.md §2), in log10 for ℓ = 1..L, for both tracks of the first seed.
   The lanes hold the frozen products of layer L; P2's part is value_chain's, computed here
   unless it already was.  P1 takes L − 2 products, one per pair of lanes, the next pair only
   its norm, and ℓ = L's is layer L's own (frozen_attention_step).  W^V_1..W^V_{L−2} come
   from the cache, or are drawn again from their
   streams where L·d² doubles would not fit.  Returns 0 or LANE_STOPPED (the tracks then
   have no gradients) or LAPACK's status. */
int frozen_attention_gradients(Run *run)
{
    Workspace *w = run->w;
    Linalg *la = w->lane[NETWORK_MAIN].step.la;
    const Config *c = run->config;
    int L = c->depth;
    int status = run->values_chained ? 0 : value_chain(run, w->random, la);
    run->values_chained = false;
    if (status)
        return status;
    for (int n = 0; n < NETWORKS; n++)
        run->track[n]->gradient_norm[0] = NAN;
    run->active[0] = run->active[1] = true;
    /* On the lanes (Work_gradient_values_drawn_on_lanes), W^V_l is in slot (l − 1) mod 3 of
       the weights' three d×d buffers (value_chain is done with the logit weights'): a pair
       whose next W^V is not drawn yet draws the next two into the slots its own does not
       hold, which the two pairs before it read. */
    bool on_lanes = Work_gradient_values_drawn_on_lanes(c);
    double *slot[3] = {w->weights.value, w->weights.query, w->weights.key};
    int drawn = 0; /* W^V_1..W^V_drawn are in their slots */
    for (int l = 1; l <= L; l++) {
        run->layer = l;
        run->weights.value = NULL;
        int info = 0;
        if (l < L - 1 && (!on_lanes || drawn < l))
            info = draw_value_weights(w, w->random, la, c, run->seed, l, &run->weights.value);
        else if (l < L - 1)
            run->weights.value = slot[(l - 1) % 3];
        if (info)
            return info;
        drawn = l > drawn ? l : drawn;
        for (int n = 0; n < NETWORKS; n++) {
            int next = drawn + 1;
            bool due = on_lanes && drawn == l && next + n <= L - 2;
            run->value_draw_layer[n] = due ? next + n : 0;
            run->value_draw_into[n] = due ? slot[(next + n - 1) % 3] : NULL;
        }
        drawn += (run->value_draw_layer[0] > 0) + (run->value_draw_layer[1] > 0);
        both_lanes(run->progress, gradient_task, run);
        status = run->info[0] ? run->info[0] : run->info[1];
        if (status)
            return status;
    }
    for (int n = 0; n < NETWORKS; n++)
        run->track[n]->gradient_depth = L;
    return 0;
}
