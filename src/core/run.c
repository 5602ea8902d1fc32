/* Model_run: the forward pass of docs/model.md §1.5 for a network and its counterpart (gap
 * removal toggled), sharing every random weight, and the quantities of docs/model.md §2,
 * seed by seed and layer by layer.
 *
 * Each layer is the layer step of layer.h.  The two networks of a layer are independent once
 * its weights are drawn, so each runs in a lane of its own buffers, and a caller with a spare
 * core may run both lanes at once (Progress.run_pair); the core itself starts no thread.
 * What earlier runs kept (model.c) is not computed again: a layer whose token matrices were
 * not kept is recomputed from the nearest kept one below, with the same code in the same
 * order, so a result is bit for bit the one a fresh workspace gives.
 *
 * Storage: token matrices X are T×d column-major (leading dimension T); weights d×d
 * column-major; attention matrices row by row (see attention.h).
 */
#include "attnscope/model.h"

#include "attnscope/attention.h"
#include "attnscope/entropy.h"
#include "attnscope/theory.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/work.h"
#include "model_internal.h"
#include "result_internal.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A layer's measures into its kept state, the token similarity relative to X0's. */
static void record(LayerState *state, const Measures *m, double log_similarity0)
{
    state->stable_rank = m->stable_rank;
    state->stable_rank_minus_one = m->stable_rank_minus_one;
    state->log10_norm = m->log10_norm;
    double ratio = exp(m->log_similarity - log_similarity0);
    state->token_similarity = isfinite(ratio) ? ratio : NAN;
    state->route = m->route;
    state->geometry = m->geometry;
}

/* Weights of one layer, shared by both networks: `parts` (LayerDraw bits) and W^V, which the
   first seed reads from its cache; *wv is where W^V is. */
int draw_layer_weights(Workspace *w, const Config *c, uint64_t seed, int layer, bool first_seed,
                       unsigned parts, double **wv)
{
    Linalg *la = w->lane[NETWORK_MAIN].step.la;
    int info = Layer_draw(w->random, la, c, seed, layer, parts & ~(unsigned)LAYER_DRAW_VALUE,
                          &w->weights, w->init_scratch);
    if (info)
        return info;
    if (first_seed)
        return draw_value_weights(w, w->random, la, c, seed, layer, wv);
    *wv = w->weights.value;
    return Layer_draw(w->random, la, c, seed, layer, LAYER_DRAW_VALUE, &w->weights,
                      w->init_scratch);
}

static bool stop_requested(const Run *run)
{
    const Progress *p = run->progress;
    return p && p->stop_requested && p->stop_requested(p->context);
}

/* What a lane's layer step shows the run: which lane it is. */
typedef struct {
    Run *run;
    int which;
} LaneWatch;

static bool shown_head(const LaneWatch *watch, int head)
{
    return watch->run->shown_lane == watch->which && head == watch->run->config->head - 1;
}

static void lane_built(void *context, int head, const double *logits, const double *attention)
{
    LaneWatch *watch = context;
    Run *run = watch->run;
    if (shown_head(watch, head))
        capture_built(run, logits, attention);
    /* A stop inside the product is seen by the step's next call. */
    product_take(run, watch->which, head, attention);
    /* Entropy is of A as built: gap removal, next, leaves no distribution. */
    if (!run->measure)
        return;
    HeadEntropy *entropy = run->track[watch->which]->state[run->layer].entropy;
    const Config *c = run->config;
    if (entropy)
        Entropy_rows(Config_layer_mask(c, run->layer), c->window, c->tokens, Config_has_sink(c),
                     attention, &entropy[head].rows);
}

/* What the entropy bounds read of the attention's input X' (T×d), where the entropies are
   measured: the tokens' mean squared norm q and mean overlap p, through their spread
   Σ_i ‖x_i − x̄‖² = (T − 1)(q − p), which keeps q − p exact where the tokens nearly merge (the
   uncentred Σ_{i≠j} x_i·x_j = ‖Σ_i x_i‖² − ‖X'‖_F² cancels there), and, where Zhai et al.'s
   bound holds, ‖X'‖₂²: exactly (the singular values of a copy in the queries' buffer) where
   that is cheap or the proof of the upper bound fails, else that proved upper bound: the one
   the measure of the layer below left on this lane (Entropy_input_norm_measured), or its own
   (its scratch in the queries' and values' buffers, which the step fills only after this). */
static int lane_branch_input(void *context, const double *input)
{
    LaneWatch *watch = context;
    Run *run = watch->run;
    if (!run->measure) /* a replay, or a forward pass without a track */
        return 0;
    LayerState *state = &run->track[watch->which]->state[run->layer];
    if (!state->entropy)
        return 0;
    const Config *c = run->config;
    int T = c->tokens, d = c->width;
    double squares, spread = Measure_spread_squared(T, d, input, &squares);
    state->input.second_moment = squares / T;
    /* Tokens that agree to MEASURE_SIMILARITY_RESOLUTION of their size are equal within the
       round-off of the spread itself: no q − p, as the token similarity has none. */
    bool resolved =
        spread >= MEASURE_SIMILARITY_RESOLUTION * MEASURE_SIMILARITY_RESOLUTION * squares;
    state->input.moment_gap = T > 1 && resolved ? spread / (T - 1) : NAN;
    if (Entropy_zhai_void(c, run->layer))
        return 0;
    Lane *lane = &run->w->lane[watch->which];
    LayerBuffers *b = &lane->step;
    double bound = NAN;
    bool measured = run->input_bound_for[watch->which] == run->layer;
    run->input_bound_for[watch->which] = 0;
    if (measured) { /* set only where Entropy_input_norm_measured holds */
        bound = run->input_bound[watch->which];
    } else if (!Entropy_input_norm_exact(T, d)) {
        /* Not the logits': in layer 1 they may be the attention both networks read. */
        int info = Measure_norm2_squared_bound(b->la, T, d, input, b->values, b->queries, b->values,
                                               lane->lanczos, &bound);
        if (info)
            return info;
    }
    state->input.norm_squared = bound;
    if (!isnan(bound))
        return 0;
    memcpy(b->queries, input, sizeof(double) * T * d);
    int info = Linalg_singular_values(b->la, T, d, b->queries, b->row_stat);
    if (!info)
        state->input.norm_squared = b->row_stat[0] * b->row_stat[0];
    return info;
}

static int lane_applied(void *context, int head, const double *attention, GapOutcome outcome,
                        const Warnings *gap_warnings)
{
    LaneWatch *watch = context;
    Run *run = watch->run;
    Lane *lane = &run->w->lane[watch->which];
    for (int i = 0; i < gap_warnings->count; i++)
        Warnings_add_about(&lane->warnings, gap_warnings->subject[i], LAYER_MARK "%s",
                           gap_warnings->text[i]);
    if (shown_head(watch, head))
        capture_applied(run, attention, outcome);
    const Progress *p = run->progress;
    if (run->measure && p && p->attention_applied)
        p->attention_applied(p->context, watch->which, run->layer, head, attention);
    return 0;
}

/* Whether sr(Σ) reads collapsed while the energy is not, because the mean token dominates s_1
   (docs/model.md §2).  sr − 1 < MEAN_DOMINATES_RANK is "1.00" on the panel.  With a fraction
   e of the energy off the top direction, sr − 1 ≤ (e/(1 − e))², reached when all of it lies
   in one direction, so e ≥ MEAN_DOMINATES_ENERGY = 0.1 beside sr − 1 < 0.01 < (0.1/0.9)²
   means a spread over more than one direction that s_1⁴ hides.  And the mean token's energy
   T‖x̄‖² = (1 − (μ/‖X‖_F)²)‖X‖_F² is at least half of s_1² = (1 − e)‖X‖_F²: the top direction
   is mostly the mean, not tokens collapsed onto one direction of their own (±v, where the
   centred stable rank is ≈ 1 too). */
#define MEAN_DOMINATES_RANK 0.01
#define MEAN_DOMINATES_ENERGY 0.1
static bool mean_dominates(const Measures *m)
{
    const TokenGeometry *g = &m->geometry;
    double mean_energy = 1 - g->relative_spread * g->relative_spread;
    return m->stable_rank_minus_one < MEAN_DOMINATES_RANK &&
           g->energy_off_top >= MEAN_DOMINATES_ENERGY &&
           mean_energy >= 0.5 * (1 - g->energy_off_top);
}

/* The layer's numbers of lane `which` (docs/model.md §2), into its track. */
static int measure_layer(Run *run, int which)
{
    const Config *c = run->config;
    Lane *lane = &run->w->lane[which];
    Network *net = &run->nets[which];
    int layer = run->layer;
    Measures m;
    /* The step's buffers are free after it: the logits' takes the Gram matrix, the queries'
       the proof of the next layer's ‖X'‖₂². */
    bool bounding = run->first_seed && Entropy_input_norm_measured(c, layer + 1);
    MeasureInputBound bound = {.factor = lane->step.queries, .lanczos = lane->lanczos};
    MeasureSharing share = {.bound = bounding ? &bound : NULL,
                            .centred_from_gram = Work_centred_downdate_expected(c, layer)};
    int info =
        Measure_tokens_sharing(lane->step.la, c->tokens, c->width, lane->step.x, net->log_scale,
                               lane->step.values, lane->step.logits, lane->step.row_max,
                               run->w->measure_all_eigenvalues ? NULL : lane->lanczos, &share, &m);
    if (info)
        return info;
    if (bounding) {
        run->input_bound[which] = bound.norm_squared;
        run->input_bound_for[which] = layer + 1;
    }
    if (isnan(m.stable_rank)) {
        net->dead = true;
        Warnings_add(&lane->warnings,
                     ROLE_MARK " network is exactly 0 after layer %d (%s): its stable rank is "
                               "undefined from there on",
                     layer, ATTENTION_NAMES.names[c->attention]);
    }
    if (run->first_seed && isnan(m.log_similarity) && !isnan(m.stable_rank) &&
        !net->similarity_lost) {
        net->similarity_lost = true;
        Warnings_add_about(
            &lane->warnings, WARNING_ABOUT_SIMILARITY,
            "token similarity of " ROLE_MARK " network: from layer %d on its tokens "
            "are equal to within round-off (%.0e of ||X||), so it is not shown there, and "
            "centred_stable_rank is null (0/0)",
            layer, MEASURE_SIMILARITY_RESOLUTION);
    }
    if (run->first_seed && !net->mean_dominates && mean_dominates(&m)) {
        net->mean_dominates = true;
        Warnings_add_about(
            &lane->warnings, WARNING_ABOUT_STABLE_RANK,
            "stable rank of " ROLE_MARK " network: from layer %d sr(Σℓ) of the uncentred X_ℓ "
            "reads %.4g (collapsed), yet %.0f%% of the energy is off the top direction, %.0f%% "
            "off the mean token; centred sr %.4g",
            layer, m.stable_rank, 100 * m.geometry.energy_off_top,
            100 * m.geometry.relative_spread * m.geometry.relative_spread,
            m.geometry.centred_stable_rank);
    }
    record(&run->track[which]->state[layer], &m, net->log_similarity0);
    run->track[which]->state[layer].centred_formed_unplanned = share.centred_formed_unplanned;
    run->track[which]->state[layer].flat_proofs = share.flat_proofs;
    return 0;
}

/* Room in the layer's state for each head's row entropies, which the layer step's observer
   fills (none where they are undefined).  A replay measures nothing and keeps what the layer's
   first computation measured; the result reports the first seed's alone, so the other seeds'
   tracks (never a first seed's: the role is part of a track's name) have none.  Returns 0
   or -1. */
static int entropy_begin(Run *run, int which)
{
    const Config *c = run->config;
    if (!run->measure || !run->first_seed)
        return 0;
    LayerState *state = &run->track[which]->state[run->layer];
    free(state->entropy);
    state->entropy = NULL;
    if (!Entropy_defined(c->attention))
        return 0;
    state->entropy = malloc(sizeof *state->entropy * (size_t)c->heads);
    if (!state->entropy)
        return -1;
    for (int h = 0; h < c->heads; h++)
        state->entropy[h] = (HeadEntropy){Entropy_undefined(), run->qk_norm[h]};
    state->input = (AttentionInput){NAN, NAN, NAN};
    return 0;
}

/* Scratch of the heads' ‖M_h‖₂. */
typedef struct {
    double *block[2];       /* d×d_h each */
    double *lower, *square; /* d_h×d_h each */
    double *lanczos;        /* Measure_lanczos_size(d_h) */
    double *values;         /* d_h */
    /* The formed M_h's route alone (else NULL): d×d each, and Measure_lanczos_size(d). */
    double *gram, *factor, *gram_lanczos;
} QkScratch;

/* A proved bound of s_1² as one of s_1, rounded up past the rounding of the square root and
   of the scale's product. */
static double norm_from_squared_bound(double bound)
{
    return sqrt(bound) * (1 + 2 * DBL_EPSILON);
}

/* Where one layer's query-key work is done: its W^Q and W^K, the lane's Linalg, its
   M_h = W^Q_h W^K_gᵀ where its logits go through them (else NULL), and the [heads] norms it
   fills (NULL: none measured). */
typedef struct {
    int layer; /* 0: none on this lane */
    const double *query, *key;
    double *product;
    Linalg *la;
    double *norm;
    int info;
} QkLayer;

/* s_1(W^Q_h W^K_gᵀ) exactly: with A = W^Q_h and B = W^K_g (d×d_h) and B = Q_B R_B (thin QR),
   s_1(A Bᵀ) = s_1(A R_Bᵀ): one QR, two products of d_h columns and the singular values of a
   d×d_h matrix, never a d×d SVD.  Leaves s->lower alone. */
static int qk_norm_exact(const Config *c, const QkLayer *q, int h, QkScratch *s, double *norm)
{
    int d = c->width, dh = Config_head_width(c);
    size_t block = (size_t)d * dh;
    const double *a = q->query + block * h;
    const double *key = q->key + block * Config_kv_head_of(c, h);
    double *qb = s->block[0], *r = s->square, *product = s->block[1];
    memcpy(qb, key, sizeof(double) * block);
    int info = Linalg_orthonormalise(q->la, d, dh, qb);
    if (!info) /* R_B = Q_Bᵀ B */
        info = Linalg_gemm(q->la, true, false, dh, dh, d, 1.0, qb, d, key, d, 0.0, r, dh);
    if (!info)
        info = Linalg_gemm(q->la, false, true, d, dh, dh, 1.0, a, d, r, dh, 0.0, product, d);
    if (!info)
        info = Linalg_singular_values(q->la, d, dh, product, s->values);
    if (!info)
        *norm = s->values[0];
    return info;
}

/* Upper bounds of s_1(W^Q_h W^K_gᵀ) for the query heads h of key head g, from one Cholesky
   factor of W^K_gᵀW^K_g (Measure_product_norm2_squared_bound); exact where the proof fails. */
static int qk_norm_bounds(const Config *c, const QkLayer *q, int g, QkScratch *s)
{
    int d = c->width, dh = Config_head_width(c);
    size_t block = (size_t)d * dh;
    MeasureGramFactor key = {.lower = s->lower};
    int info = Measure_gram_factor(q->la, d, dh, q->key + block * g, s->block[0], &key);
    for (int h = 0; h < c->heads && !info; h++) {
        if (Config_kv_head_of(c, h) != g)
            continue;
        double bound;
        info = Measure_product_norm2_squared_bound(q->la, d, dh, q->query + block * h, &key,
                                                   s->block[1], s->block[0], s->square, s->lanczos,
                                                   &bound);
        q->norm[h] = norm_from_squared_bound(bound);
        if (!info && isnan(bound))
            info = qk_norm_exact(c, q, h, s, &q->norm[h]);
    }
    return info;
}

/* Upper bounds of every head's s_1(W^Q_h W^K_gᵀ) from the M_h that the logits read
   (Measure_formed_product_norm2_squared_bound); exact where the proof fails. */
static int qk_norm_bounds_formed(const Config *c, const QkLayer *q, QkScratch *s)
{
    int d = c->width, dh = Config_head_width(c);
    size_t block = (size_t)d * dh, dd = (size_t)d * d;
    int info = 0;
    for (int h = 0; h < c->heads && !info; h++) {
        double bound;
        info = Measure_formed_product_norm2_squared_bound(
            q->la, d, dh, q->query + block * h, q->key + block * Config_kv_head_of(c, h),
            q->product + dd * h, s->gram, s->factor, s->gram_lanczos, &bound);
        q->norm[h] = norm_from_squared_bound(bound);
        if (!info && isnan(bound))
            info = qk_norm_exact(c, q, h, s, &q->norm[h]);
    }
    return info;
}

/* ‖M_h‖₂ of every head's M_h = scale·W^Q_h W^K_gᵀ of one layer into q->norm (NaN where Zhai
   et al.'s bound does not hold): exact while that is cheap (Entropy_qk_norm_exact), else a
   proved upper bound, which keeps the bound a bound (docs/model.md §3): from the formed
   W^Q_h W^K_gᵀ where the logits take them (q->product), else from W^K_g's Gram factor.
   Returns 0, -1 (no memory) or LAPACK's status. */
static int qk_spectral_norms(const Config *c, const QkLayer *q)
{
    for (int h = 0; h < c->heads; h++)
        q->norm[h] = NAN;
    if (Entropy_zhai_void(c, q->layer))
        return 0;
    int d = c->width, dh = Config_head_width(c);
    size_t block = (size_t)d * dh, square = (size_t)dh * dh, dd = (size_t)d * d;
    bool formed = q->product && !Entropy_qk_norm_exact(c);
    size_t own = 2 * block + 2 * square + Measure_lanczos_size(dh) + dh;
    double *all = malloc(sizeof(double) * (own + (formed ? 2 * dd + Measure_lanczos_size(d) : 0)));
    if (!all)
        return -1;
    QkScratch s = {.block = {all, all + block},
                   .lower = all + 2 * block,
                   .square = all + 2 * block + square,
                   .lanczos = all + 2 * block + 2 * square};
    s.values = s.lanczos + Measure_lanczos_size(dh);
    if (formed) {
        s.gram = all + own;
        s.factor = s.gram + dd;
        s.gram_lanczos = s.factor + dd;
    }
    int info = 0;
    if (Entropy_qk_norm_exact(c)) {
        for (int h = 0; h < c->heads && !info; h++)
            info = qk_norm_exact(c, q, h, &s, &q->norm[h]);
    } else if (formed) {
        info = qk_norm_bounds_formed(c, q, &s);
    } else {
        for (int g = 0; g < Config_kv_heads(c) && !info; g++)
            info = qk_norm_bounds(c, q, g, &s);
    }
    for (int h = 0; h < c->heads; h++)
        q->norm[h] *= Init_logit_scale(c);
    free(all);
    return info;
}

typedef struct {
    const Config *c;
    QkLayer lane[NETWORKS];
} QkLanes;

/* A layer's M_h where its logits take them, then its norms where they are measured. */
static int layer_query_key(const Config *c, const QkLayer *q)
{
    int info = 0;
    if (q->product)
        info = Layer_qk_product(q->la, c, q->query, q->key, q->product);
    if (!info && q->norm)
        info = qk_spectral_norms(c, q);
    return info;
}

static void qk_task(int which, void *context)
{
    QkLanes *q = context;
    QkLayer *mine = &q->lane[which];
    mine->info = mine->layer ? layer_query_key(q->c, mine) : 0;
}

/* The W^Q and W^K of `layer` into `into`, from the streams that layer's own draw would start
   again: the same values, which the layer then takes (take_ahead) instead of drawing them a
   second time. */
static int draw_ahead(Run *run, RandomStream *random, Linalg *la, int layer, LayerWeights *into)
{
    return Layer_draw(random, la, run->config, run->seed, layer, LAYER_DRAW_ATTENTION, into,
                      run->w->init_scratch);
}

/* The workspace's W^Q and W^K become those drawn ahead, and the spent ones the ahead
   buffers (all four the workspace's, of d² each). */
static void take_ahead(Workspace *w)
{
    double *query = w->weights.query, *key = w->weights.key;
    w->weights.query = w->ahead.query;
    w->weights.key = w->ahead.key;
    w->ahead.query = query;
    w->ahead.key = key;
}

/* The M_h of `layer` where its logits take them (Layer_logits_through_qk_product): the
   workspace's qk_product[0] for run->layer, [1] for the one drawn ahead. */
static double *qk_product_of(Run *run, int layer, int which)
{
    return Layer_logits_through_qk_product(run->config, layer) ? run->w->qk_product[which] : NULL;
}

/* Whether run->layer's W^Q and W^K are the workspace's ahead ones, its M_h and norms formed
   beside the layer below's (layer_qk_work; layer 2's: beside the value chain, input_layer). */
static bool ahead_of_layer(const Run *run)
{
    return run->measure && run->first_seed && run->qk_ahead_layer == run->layer;
}

/* The query-key work of run->layer, once for both networks: its M_h where its logits take
   them, into run->weights.qk_product, and, where the entropies are measured, its norms into
   run->qk_norm.  A layer that Entropy_qk_norms_ahead pairs with the next one does both
   layers', one on each lane (a single head's work does not split, and the networks' steps
   keep both lanes equally busy: only two layers' side by side halve their wall time); the
   next layer then finds its own done.  Both lanes in turn while the shown eigenvalues hold
   the second thread. */
static int layer_qk_work(Run *run)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    if (ahead_of_layer(run)) {
        run->qk_ahead_layer = 0;
        memcpy(run->qk_norm, run->qk_norm_ahead, sizeof(double) * (size_t)c->heads);
        double *formed = w->qk_product[1]; /* the layer's own, formed ahead */
        w->qk_product[1] = w->qk_product[0];
        w->qk_product[0] = formed;
        run->weights.qk_product = qk_product_of(run, run->layer, 0);
        return 0;
    }
    /* Unmeasured (a replay, a later seed): the entropies, which the norms go with, are not. */
    bool norms = run->measure && run->first_seed;
    run->weights.qk_product = qk_product_of(run, run->layer, 0);
    QkLanes q = {.c = c};
    q.lane[0] = (QkLayer){.layer = run->layer,
                          .query = run->weights.query,
                          .key = run->weights.key,
                          .product = run->weights.qk_product,
                          .la = w->lane[NETWORK_MAIN].step.la,
                          .norm = norms ? run->qk_norm : NULL};
    if (!norms || !Entropy_qk_norms_ahead(c, run->layer)) {
        qk_task(NETWORK_MAIN, &q);
        return q.lane[0].info;
    }
    int info = draw_ahead(run, w->random, w->lane[NETWORK_MAIN].step.la, run->layer + 1, &w->ahead);
    if (!info)
        info = shown_spectra_join(run, false);
    if (info)
        return info;
    q.lane[1] = (QkLayer){.layer = run->layer + 1,
                          .query = w->ahead.query,
                          .key = w->ahead.key,
                          .product = qk_product_of(run, run->layer + 1, 1),
                          .la = w->lane[NETWORK_COUNTERPART].step.la,
                          .norm = run->qk_norm_ahead};
    if (!run->spectra_beside) {
        both_lanes(run->progress, qk_task, &q);
    } else {
        qk_task(NETWORK_MAIN, &q);
        qk_task(NETWORK_COUNTERPART, &q);
    }
    if (!q.lane[0].info && !q.lane[1].info)
        run->qk_ahead_layer = run->layer + 1;
    return q.lane[0].info ? q.lane[0].info : q.lane[1].info;
}

/* One layer of one network: the layer step on its lane (the shown head's attention captured
   and every head's row entropies measured on the way), the frozen product of the gradients,
   and the layer's numbers. */
static int network_layer(Run *run, int which)
{
    const Config *c = run->config;
    Lane *lane = &run->w->lane[which];
    Network *net = &run->nets[which];
    if (entropy_begin(run, which))
        return -1;
    LaneWatch watch = {run, which};
    LayerObserver observer = {.context = &watch,
                              .branch_input = lane_branch_input,
                              .built = lane_built,
                              .applied = lane_applied};
    LayerStep step = {.config = c,
                      .layer = run->layer,
                      .weights = &run->weights,
                      .gap = run->track[which]->gap,
                      .observer = &observer,
                      .attention_built = run->attention_ready,
                      .built_logits = run->shared_logits};
    LayerOutcome outcome;
    int info = Layer_step(&step, &lane->step, &outcome, &net->log_scale);
    if (!info && outcome != LAYER_ATTENTION_OVERFLOW && run->first_seed && gradients_apply(c))
        info = frozen_attention_step(c, lane, net);
    if (info)
        return info;
    /* Linear attention squares the tokens' scale: its matrix overflows a layer or more before
       the tokens do. */
    if (outcome != LAYER_DONE)
        Warnings_add(&lane->warnings,
                     ROLE_MARK " network%s overflows the double range at layer %d (no LayerNorm: "
                               "the tokens grow layer by layer); its values from there on are "
                               "null",
                     outcome == LAYER_ATTENTION_OVERFLOW ? "'s attention matrix" : "", run->layer);
    net->dead = outcome != LAYER_DONE;
    if (net->dead && run->measure) { /* a head may have been measured before the overflow */
        LayerState *state = &run->track[which]->state[run->layer];
        free(state->entropy);
        state->entropy = NULL;
    }
    return net->dead || !run->measure ? 0 : measure_layer(run, which);
}

static void layer_task(int which, void *context)
{
    Run *run = context;
    run->info[which] = 0;
    if (run->active[which] && !run->nets[which].dead)
        run->info[which] = network_layer(run, which);
}

/* task for both lanes: on the caller's two threads when it offers them, else in turn. */
void both_lanes(const Progress *progress, void (*task)(int which, void *context), void *context)
{
    if (progress && progress->run_pair) {
        progress->run_pair(progress->pair_context, task, context);
    } else {
        task(NETWORK_MAIN, context);
        task(NETWORK_COUNTERPART, context);
    }
}

/* The input X0 (Layer_input) into lane `which`, and the start of its frozen product. */
static int input_tokens(Workspace *w, const Config *c, uint64_t seed, int which)
{
    Lane *lane = &w->lane[which];
    int info = Layer_input(w->random, lane->step.la, c, seed, lane->step.x, lane->step.queries);
    if (!info)
        memcpy(lane->frozen, lane->step.x, sizeof(double) * c->tokens * c->width);
    return info;
}

/* Keeps lane `which`'s token matrices as the state of its track's layer, within budget. */
static void keep_matrices(Run *run, int which, int layer)
{
    Workspace *w = run->w;
    size_t td = (size_t)run->config->tokens * run->config->width;
    LayerState *s = &run->track[which]->state[layer];
    if (s->x || run->kept->bytes + 2 * sizeof(double) * td > run->budget)
        return;
    s->x = malloc(sizeof(double) * td);
    bool frozen = run->first_seed && gradients_apply(run->config);
    s->frozen = frozen ? malloc(sizeof(double) * td) : NULL;
    if (!s->x || (frozen && !s->frozen)) {
        free(s->x);
        free(s->frozen);
        s->x = s->frozen = NULL;
        return;
    }
    memcpy(s->x, w->lane[which].step.x, sizeof(double) * td);
    run->kept->bytes += sizeof(double) * td;
    if (frozen) {
        memcpy(s->frozen, w->lane[which].frozen, sizeof(double) * td);
        run->kept->bytes += sizeof(double) * td;
    }
}

/* Moves what lane `which` warned of into its track's layer. */
static int keep_warnings(Run *run, int which, LayerState *s)
{
    Warnings *lane = &run->w->lane[which].warnings;
    if (lane->count) {
        s->warnings = malloc(sizeof *s->warnings);
        if (!s->warnings)
            return -1;
        *s->warnings = *lane;
    }
    lane->count = 0;
    return 0;
}

static int run_layer(Run *run);

/* Lane `which` brought to `layer` from `from` (as `source` says where its tokens are), then
   layer by layer (without measuring: the numbers are kept) up to it. */
static int lane_load_from(Run *run, int which, int layer, int from, LoadSource source)
{
    Workspace *w = run->w;
    Track *t = run->track[which];
    size_t td = (size_t)run->config->tokens * run->config->width;
    Lane *lane = &w->lane[which];
    if (source == LOAD_FROM_INPUT) {
        int info = input_tokens(w, run->config, run->seed, which);
        if (info)
            return info;
    } else if (source == LOAD_FROM_KEPT) {
        memcpy(lane->step.x, t->state[from].x, sizeof(double) * td);
        if (t->state[from].frozen)
            memcpy(lane->frozen, t->state[from].frozen, sizeof(double) * td);
    } /* LOAD_FROM_LANE: the lane is nearer than anything kept, and goes on from itself */
    run->held[which] = from;
    run->nets[which] = t->state[from].net;
    run->input_bound_for[which] = 0; /* of the tokens the lane held */
    if (from == layer)
        return 0;
    /* The replay runs this lane alone, on the caller's thread. */
    bool active[NETWORKS] = {run->active[0], run->active[1]};
    bool measure = run->measure;
    int shown = run->shown_lane;
    run->active[0] = run->active[1] = false;
    run->active[which] = true;
    run->measure = false;
    run->shown_lane = -1;
    int info = 0;
    for (int l = from + 1; l <= layer && !info; l++) {
        run->layer = l;
        info = run_layer(run);
        lane->warnings.count = 0; /* raised when the layer was first computed, and kept */
        run->nets[which] = t->state[l].net;
        run->held[which] = l;
    }
    memcpy(run->active, active, sizeof active);
    run->measure = measure;
    run->shown_lane = shown;
    return info;
}

/* Lane `which` holds its track's token matrices at `layer`: from where track_load_start says,
   the kept ones at or below it, the lane itself, or X0. */
int lane_load(Run *run, int which, int layer)
{
    if (run->held[which] == layer)
        return 0;
    bool frozen = run->first_seed && gradients_apply(run->config);
    LoadSource source;
    int from = track_load_start(run->track[which], frozen, run->held[which], layer, &source);
    return lane_load_from(run, which, layer, from, source);
}

int lane_replay(Run *run, int which, int layer)
{
    return lane_load_from(run, which, layer, 0, LOAD_FROM_INPUT);
}

/* Draws the weights of run->layer and computes it on the active lanes.  A layer drawn ahead
   takes its W^Q and W^K from draw_ahead (a paired layer's attention draw is those two alone:
   Entropy_zhai_void excludes sinks and markov), so the plan prices them once. */
static int run_layer(Run *run)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    bool built = run->layer == 1 && run->layer_one_built; /* its W^Q, W^K are the workspace's */
    run->layer_one_built = false;
    unsigned parts = LAYER_DRAW_ALL;
    bool ahead = ahead_of_layer(run);
    if (ahead)
        take_ahead(w);
    if (ahead || built)
        parts &= ~(unsigned)LAYER_DRAW_ATTENTION;
    run->weights = w->weights;
    int info = draw_layer_weights(w, c, run->seed, run->layer, run->first_seed, parts,
                                  &run->weights.value);
    if (!info && built)
        run->weights.qk_product = qk_product_of(run, 1, 0);
    else if (!info)
        info = layer_qk_work(run);
    if (info)
        return info;
    /* Both networks read X0 in layer 1: one attention matrix serves them both (one head: a
       matrix per head would be as many T×T buffers). */
    run->attention_ready = run->layer == 1 && run->active[0] && run->active[1] && c->heads == 1;
    if (!built)
        run->shared_logits = NULL;
    if (run->attention_ready) {
        LayerBuffers *main_step = &w->lane[NETWORK_MAIN].step;
        LayerOutcome finite; /* the step itself checks it, on each lane */
        int status = built ? 0
                           : Layer_attention(c, run->layer, &run->weights, main_step, 0,
                                             &run->shared_logits, &finite);
        if (status)
            return status;
        memcpy(w->lane[NETWORK_COUNTERPART].step.attention, main_step->attention,
               sizeof(double) * c->tokens * c->tokens);
    }
    /* While the shown eigenvalues hold the second thread, the two networks take turns; asked
       here, after the layer's serial part, so that the answer is as late as it can be. */
    if ((info = shown_spectra_join(run, false)))
        return info;
    if (run->active[0] && run->active[1] && !run->spectra_beside) {
        both_lanes(run->progress, layer_task, run);
    } else {
        for (int n = 0; n < NETWORKS; n++)
            if (run->active[n])
                layer_task(n, run);
    }
    return run->info[0] ? run->info[0] : run->info[1];
}

/* X0 drawn and measured on the main lane and, where the first seed's gradients are due, their
   value chain (gradients.c) on the other: it reads the value weights alone (from a stream
   object of its own), so it need not wait for X0 or the layers, and it takes the core that
   X0's QR and dsyevd would leave idle. */
typedef struct {
    Run *run;
    bool chain;
    bool layer_one; /* layer 1's q·k work and attention after X0, layer 2's after the chain */
    bool bounding;  /* layer 1's ‖X0‖₂² from X0's measure, for both lanes */
    MeasureInputBound bound;
    Measures m0;
    bool centred_formed_unplanned;
    int flat_proofs;
    int info, chain_info; /* X0's lane's, the chain's lane's query-key work's */
} InputTasks;

/* Layer 1's M_1 and norms from its W^Q and W^K (drawn ahead before the lanes), then the
   attention matrix both networks share (run_layer's, bit for bit: the same calls on the same
   lane's buffers, X0 there), on X0's lane after X0's measure. */
static int layer_one_beside(Run *run)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    LayerBuffers *main_step = &w->lane[NETWORK_MAIN].step;
    /* Not a copy of w->weights: the chain beside swaps its W^Q and W^K pointers as scratch.
       Softmax without sinks (Entropy_qk_norms_ahead) reads no other part. */
    LayerWeights weights = {
        .query = w->ahead.query, .key = w->ahead.key, .qk_product = qk_product_of(run, 1, 0)};
    QkLayer q = {.layer = 1,
                 .query = weights.query,
                 .key = weights.key,
                 .product = weights.qk_product,
                 .la = main_step->la,
                 .norm = run->qk_norm};
    int info = layer_query_key(c, &q);
    LayerOutcome finite; /* each network's step checks it */
    return info ? info
                : Layer_attention(c, 1, &weights, main_step, 0, &run->shared_logits, &finite);
}

/* Layer 2's W^Q and W^K into the workspace's own (the chain's scratch until now), from the
   chain's stream object, and its M_2 and norms, on the chain's lane after the chain. */
static int layer_two_beside(Run *run, RandomStream *random, Linalg *la)
{
    Workspace *w = run->w;
    QkLayer q = {.layer = 2,
                 .query = w->weights.query,
                 .key = w->weights.key,
                 .product = qk_product_of(run, 2, 1),
                 .la = la,
                 .norm = run->qk_norm_ahead};
    int info = draw_ahead(run, random, la, 2, &w->weights);
    return info ? info : layer_query_key(run->config, &q);
}

static void input_task(int which, void *context)
{
    InputTasks *t = context;
    Run *run = t->run;
    Workspace *w = run->w;
    const Config *c = run->config;
    Lane *lane = &w->lane[which];
    if (which == NETWORK_COUNTERPART) {
        /* A chain that stops or fails here is computed again with the gradients, which then
           report it. */
        if (t->chain)
            value_chain(run, w->value_random, lane->step.la);
        if (t->layer_one)
            t->chain_info = layer_two_beside(run, w->value_random, lane->step.la);
        return;
    }
    t->info = input_tokens(w, c, run->seed, NETWORK_MAIN);
    t->bound = (MeasureInputBound){.factor = lane->step.queries, .lanczos = lane->lanczos};
    MeasureSharing share = {.bound = t->bounding ? &t->bound : NULL,
                            .centred_from_gram = Work_centred_downdate_expected(c, 0)};
    if (!t->info)
        t->info = Measure_tokens_sharing(lane->step.la, c->tokens, c->width, lane->step.x, 0.0,
                                         lane->step.values, lane->step.logits, lane->step.row_max,
                                         w->measure_all_eigenvalues ? NULL : lane->lanczos, &share,
                                         &t->m0);
    t->centred_formed_unplanned = share.centred_formed_unplanned;
    t->flat_proofs = share.flat_proofs;
    if (!t->info && t->layer_one)
        t->info = layer_one_beside(run);
}

/* Layer 0 of both tracks: X0 on both lanes, measured once.  Beside the value chain, layer 1's
   query-key work and shared attention follow X0 on its lane, and layer 2's the chain on the
   other (Work_layer_one_beside_input: both networks start at layer 1 of the first seed),
   which evens the lanes and takes them off the serial part between X0 and layer 1. */
static int input_layer(Run *run)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    Lane *main_lane = &w->lane[NETWORK_MAIN];
    InputTasks tasks = {.run = run,
                        .chain = Work_value_chain_beside_input(gradients_due(run)),
                        .bounding = run->first_seed && Entropy_input_norm_measured(c, 1)};
    tasks.layer_one = tasks.chain && run->first_seed && run->track[0]->layers < 1 &&
                      run->track[1]->layers < 1 && Work_layer_one_beside_input(c);
    if (tasks.layer_one) {
        int info = draw_ahead(run, w->random, main_lane->step.la, 1, &w->ahead);
        if (info)
            return info;
    }
    if (tasks.chain)
        both_lanes(run->progress, input_task, &tasks);
    else
        input_task(NETWORK_MAIN, &tasks);
    if (tasks.info || tasks.chain_info)
        return tasks.info ? tasks.info : tasks.chain_info;
    if (tasks.layer_one) { /* layer 1's W^Q, W^K the workspace's; layer 2's ahead */
        take_ahead(w);
        run->qk_ahead_layer = 2;
        run->layer_one_built = true;
    }
    const Measures m0 = tasks.m0;
    size_t td = (size_t)c->tokens * c->width;
    memcpy(w->lane[NETWORK_COUNTERPART].step.x, main_lane->step.x, sizeof(double) * td);
    memcpy(w->lane[NETWORK_COUNTERPART].frozen, main_lane->frozen, sizeof(double) * td);
    for (int n = 0; n < NETWORKS; n++) {
        Track *t = run->track[n];
        run->held[n] = 0;
        run->input_bound_for[n] = tasks.bounding ? 1 : 0;
        run->input_bound[n] = tasks.bound.norm_squared;
        run->nets[n] = (Network){.log_similarity0 = m0.log_similarity};
        if (t->layers >= 0)
            continue;
        record(&t->state[0], &m0, m0.log_similarity);
        t->state[0].centred_formed_unplanned = tasks.centred_formed_unplanned;
        t->state[0].flat_proofs = tasks.flat_proofs;
        t->state[0].net = run->nets[n];
        t->layers = 0;
    }
    return 0;
}

static void layer_state_undefined(LayerState *s)
{
    free(s->entropy);
    s->entropy = NULL;
    s->stable_rank = s->stable_rank_minus_one = s->log10_norm = s->token_similarity = NAN;
    s->route = MEASURE_ROUTE_NONE;
    s->centred_formed_unplanned = false;
    s->flat_proofs = 0;
    s->geometry = (TokenGeometry){NAN, NAN, NAN, NAN, NAN};
}

/* The seed's two tracks (created empty when nothing is kept for them), and its input where
   either lacks it. */
static int seed_tracks(Run *run, Track *(*tracks)[NETWORKS], int seed_index)
{
    const Config *c = run->config;
    const Gap gaps[NETWORKS] = {c->gap, Gap_toggled(c->gap)};
    for (int n = 0; n < NETWORKS; n++) {
        Track *t = kept_track(run->kept, run->seed, gaps[n], run->first_seed);
        if (!t || track_reserve(t, c->depth))
            return -1;
        run->track[n] = tracks[seed_index][n] = t;
        run->held[n] = -1;
        run->input_bound_for[n] = 0;
    }
    if (run->track[0]->layers < 0 || run->track[1]->layers < 0)
        return input_layer(run);
    return 0;
}

/* Another shown layer of a kept network: its attention matrix and spectra only. */
static int shown_from_kept(Run *run, Track *(*tracks)[NETWORKS], int seed_index, bool *stopped)
{
    run->measure = true;
    int info = capture_shown_attention(run, NETWORK_MAIN, run->config->layer);
    if (!info && stop_requested(run)) {
        *stopped = true;
        return 0;
    }
    if (!info && run->shown_captured) /* at once: the product below reads the entry */
        info = keep_shown_spectra(run, false);
    if (!info)
        info = keep_shown_product(run);
    if (!info)
        assemble(run, tracks, seed_index + 1, false);
    return info;
}

/* Keeps what the active lanes computed of `layer` in their tracks.  Returns 0 or -1. */
static int keep_layer(Run *run, int layer)
{
    for (int n = 0; n < NETWORKS; n++) {
        if (!run->active[n])
            continue;
        Track *t = run->track[n];
        t->state[layer].net = run->nets[n];
        if (keep_warnings(run, n, &t->state[layer]))
            return -1;
        keep_matrices(run, n, layer);
        t->layers = layer;
        run->held[n] = layer;
    }
    kept_trim(run->kept, run->budget, run->track);
    return 0;
}

/* `layer` of the seed on the lanes whose tracks lack it (none: nothing to do), the shown
   spectra when it is the shown layer (*spectra then true), and the progress after it. */
static int seed_layer(Run *run, Track *(*tracks)[NETWORKS], int seed_index, int layer,
                      bool *spectra, bool *stopped)
{
    const Config *c = run->config;
    const Progress *progress = run->progress;
    bool any = false;
    for (int n = 0; n < NETWORKS; n++) {
        run->active[n] = run->track[n]->layers < layer;
        any |= run->active[n];
    }
    int info = 0;
    for (int n = 0; n < NETWORKS && !info; n++)
        if (run->active[n])
            info = lane_load(run, n, layer - 1);
    if (!any || info)
        return info;
    run->layer = layer;
    run->measure = true;
    run->shown_lane = !*spectra && layer == c->layer && run->active[NETWORK_MAIN] ? 0 : -1;
    run->shown_captured = false;
    for (int n = 0; n < NETWORKS; n++)
        if (run->active[n])
            layer_state_undefined(&run->track[n]->state[layer]);
    info = run_layer(run);
    if (info == LANE_STOPPED) {
        for (int n = 0; n < NETWORKS; n++)
            run->w->lane[n].warnings.count = 0;
        *stopped = true;
        return 0;
    }
    if (info || (info = keep_layer(run, layer)))
        return info;
    if (run->shown_lane == 0 && !run->shown_captured)
        run->shown_lane = -1; /* no finite attention matrix at the shown layer */
    if (run->shown_lane == 0) {
        /* Right away: with a second thread to hand it to, dgeev runs beside the deeper layers
           (shown when it ends); else here, so that a screen shows the spectra with this
           layer. */
        if (stop_requested(run)) {
            assemble(run, tracks, seed_index + 1, false);
            *stopped = true;
            return 0;
        }
        if ((info = keep_shown_spectra(run, true)))
            return info;
        *spectra = true;
    }
    assemble(run, tracks, seed_index + 1, false);
    if (progress && progress->after_layer &&
        !progress->after_layer(progress->context, seed_index, layer, c->depth))
        *stopped = true;
    return 0;
}

/* The first seed's gradients at the depth, unless its tracks have them. */
static int seed_gradients(Run *run, bool *stopped)
{
    const Config *c = run->config;
    bool gradients = gradients_due(run);
    int info = 0;
    for (int n = 0; n < NETWORKS && gradients && !info; n++)
        info = lane_load(run, n, c->depth);
    if (!gradients || info)
        return info;
    info = frozen_attention_gradients(run);
    run->held[0] = run->held[1] = -1; /* the frozen products were used up */
    if (info == LANE_STOPPED) {
        *stopped = true;
        return 0;
    }
    return info;
}

/* One seed: both tracks up to the depth (what is kept is not computed again), the shown
   spectra and the gradients for the first seed.  *stopped when progress asked. */
static int run_seed(Run *run, Track *(*tracks)[NETWORKS], int seed_index, bool *stopped)
{
    const Config *c = run->config;
    int info = seed_tracks(run, tracks, seed_index);
    if (info)
        return info;
    bool spectra = !run->first_seed || kept_spectra_find(run->kept, run->seed, c);
    if (!spectra && run->track[NETWORK_MAIN]->layers >= c->layer) {
        if ((info = shown_from_kept(run, tracks, seed_index, stopped)) || *stopped)
            return info;
        spectra = true;
    }
    for (int layer = 1; layer <= c->depth; layer++)
        if ((info = seed_layer(run, tracks, seed_index, layer, &spectra, stopped)) || *stopped)
            return info;
    if ((info = shown_spectra_join(run, true)))
        return info;
    if (stop_requested(run)) {
        *stopped = true;
        return 0;
    }
    if ((info = keep_shown_product(run)))
        return info;
    if ((info = seed_gradients(run, stopped)) || *stopped)
        return info;
    assemble(run, tracks, seed_index + 1, false);
    return 0;
}

/* out emptied for a run of c: the settings, nothing computed yet. */
static void result_begin(Result *out, const Config *c)
{
    Result_release(out);
    out->config = *c;
    out->counterpart_gap = Gap_toggled(c->gap);
    out->sigma = Theory_weights_drawn() ? Config_sigma(c) : NAN; /* σ_qk's, not a checkpoint's */
    out->logit_std = NAN;
    out->shown_gap = c->gap;
    out->readouts = (Readouts){NAN, NAN, NAN, NAN};
    out->outlier = -1;
}

/* What a run of c reads and keeps: the workspace's kept state, or (without a budget, or while
   keeping is paused) `scratch`, so that nothing outlives the run and what earlier runs kept
   stays as it is (the width sweep runs other sizes on the screen's workspace).  Either is
   emptied when its weights are not c's, and so is the value cache. */
static Kept *kept_for(Workspace *w, const Config *c, Kept *scratch)
{
    bool keeping = w->keep_budget > 0 && !w->keeping_paused;
    Kept *k = keeping ? &w->kept : scratch;
    if (!k->valid || !same_weights(&k->key, c)) {
        kept_clear(k);
        k->valid = true;
        k->key = *c;
    }
    if (!same_weights(&w->value_key, c)) {
        memset(w->value_cached, 0, sizeof w->value_cached);
        w->value_key = *c;
    }
    return k;
}

int Model_run(const Config *c, Workspace *w, Result *out, const Progress *progress, char *err,
              size_t size)
{
    result_begin(out, c);
    int seeds = c->seeds < 1 ? 1 : c->seeds;
    Kept scratch = {0};
    Kept *k = kept_for(w, c, &scratch);
    Track *(*tracks)[NETWORKS] = calloc((size_t)seeds, sizeof *tracks);
    double *qk_norm = malloc(sizeof(double) * 2 * (size_t)c->heads);
    int status = 0;
    if (!tracks || !qk_norm || workspace_reserve(w, c) ||
        Result_allocate(out, c->tokens, c->depth)) {
        snprintf(err, size, "out of memory for T = %d, d = %d, depth %d", c->tokens, c->width,
                 c->depth);
        status = -1;
        goto done;
    }
    Run run = {.config = c,
               .w = w,
               .kept = k,
               .budget = k == &scratch ? 0 : w->keep_budget,
               .out = out,
               .progress = progress,
               .qk_norm = qk_norm,
               .qk_norm_ahead = qk_norm + c->heads};
    /* The lanes' products and long calls poll the stop request too, for the run only: the
       progress need not outlive it. */
    LinalgStop stop = {0};
    if (progress && progress->stop_requested)
        stop = (LinalgStop){.requested = progress->stop_requested, .context = progress->context};
    for (int n = 0; n < NETWORKS; n++)
        Linalg_set_stop(w->lane[n].step.la, stop);
    Linalg_set_stop(w->spectra_la, stop);
    bool stopped = false;
    int begun = 0;
    for (int s = 0; s < seeds && !stopped; s++, begun++) {
        run.first_seed = s == 0;
        run.seed = c->seed + (uint64_t)s;
        int info = run_seed(&run, tracks, s, &stopped);
        /* Whatever ended the seed, the eigenvalues beside it end before the run goes on. */
        int joined = shown_spectra_join(&run, true);
        if (!info)
            info = joined;
        if (info == LANE_STOPPED) {
            /* Stopped inside a call of a step that is not a layer (a replay of kept layers,
               the shown layer's spectra, the gradients): the same as a stop after it. */
            for (int n = 0; n < NETWORKS; n++)
                w->lane[n].warnings.count = 0;
            stopped = true;
            info = 0;
        }
        if (info == -1) {
            snprintf(err, size, "out of memory for T = %d, d = %d, depth %d, %d seeds", c->tokens,
                     c->width, c->depth, seeds);
            status = -1;
            goto done;
        }
        if (info) {
            snprintf(err, size, "LAPACK failed (info %d) in seed %d", info, s + 1);
            status = -1;
            goto done;
        }
    }
    assemble(&run, tracks, begun, true);
done:
    for (int n = 0; n < NETWORKS; n++)
        Linalg_set_stop(w->lane[n].step.la, (LinalgStop){0});
    Linalg_set_stop(w->spectra_la, (LinalgStop){0});
    free(tracks);
    free(qk_norm);
    if (k == &scratch)
        kept_clear(&scratch);
    return status;
}

int Model_forward(const Config *c, Workspace *w, double *norm)
{
    if (workspace_reserve(w, c))
        return -1;
    Track track = {.seed = c->seed, .gap = c->gap};
    Run run = {.config = c, .w = w, .seed = c->seed, .shown_lane = -1, .track = {&track, NULL}};
    run.active[NETWORK_MAIN] = true;
    int info = input_tokens(w, c, c->seed, NETWORK_MAIN);
    for (int layer = 1; layer <= c->depth && !info; layer++) {
        run.layer = layer;
        info = run_layer(&run);
    }
    *norm = cblas_dnrm2(c->tokens * c->width, w->lane[NETWORK_MAIN].step.x, 1);
    w->lane[NETWORK_MAIN].warnings.count = 0;
    return info;
}
