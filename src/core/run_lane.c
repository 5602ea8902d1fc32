/* One network's layer on its lane (docs/model.md §1.5, §2): the layer step of layer.h with
 * the run's watches on it (the shown head captured, every head's row entropies and what the
 * entropy bounds read of the attention's input), then the layer's numbers into its track.
 * run.c runs it on both lanes (layer_task).
 */
#include "attnscope/attention.h"
#include "attnscope/entropy.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/work.h"
#include "model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one measure did, counted (MeasureCounts: a new count is filled here). */
static MeasureCounts measure_counts_of(const Measures *m, const MeasureSharing *share,
                                       const MeasureCounts *declared)
{
    MeasureCounts counts = {.centred_formed_unplanned = share->centred_formed_unplanned,
                            .flat_proofs = share->flat_proofs,
                            .flat_proofs_declared = declared->flat_proofs_declared,
                            .deflated_declared = declared->deflated_declared};
    if (m->route != MEASURE_ROUTE_NONE) /* a stable rank was computed */
        counts.routes[m->route] = 1;
    return counts;
}

void measure_counts_add(MeasureCounts *sum, const MeasureCounts *one)
{
    for (int r = 0; r < MEASURE_ROUTES; r++)
        sum->routes[r] += one->routes[r];
    sum->centred_formed_unplanned += one->centred_formed_unplanned;
    sum->flat_proofs += one->flat_proofs;
    sum->flat_proofs_declared += one->flat_proofs_declared;
    sum->deflated_declared += one->deflated_declared;
}

void layer_state_record(LayerState *state, const Measures *m, const MeasureSharing *share,
                        const MeasureCounts *declared, double log_similarity0)
{
    state->stable_rank = m->stable_rank;
    state->stable_rank_minus_one = m->stable_rank_minus_one;
    state->log10_norm = m->log10_norm;
    double ratio = exp(m->log_similarity - log_similarity0);
    state->token_similarity = isfinite(ratio) ? ratio : NAN;
    state->counts = measure_counts_of(m, share, declared);
    state->geometry = m->geometry;
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

/* ‖W^Q_h‖_F·‖W^K_g‖_F of head h (g its key/value head), rounded up past its sums (each
   square within γ_{d·d_h} of the exact); NaN without query and key weights. */
static double query_key_norm(const Config *c, const LayerWeights *w, int h)
{
    if (!Attention_has_query_key(c->attention) || !w->query || !w->key)
        return NAN;
    size_t block = (size_t)c->width * Config_head_width(c);
    const double *q = w->query + block * h, *k = w->key + block * Config_kv_head_of(c, h);
    /* Four sums each, that the additions do not wait on one another (any order keeps γ). */
    double qq[4] = {0}, kk[4] = {0};
    size_t i = 0;
    for (; i + 4 <= block; i += 4)
        for (int j = 0; j < 4; j++) {
            qq[j] += q[i + j] * q[i + j];
            kk[j] += k[i + j] * k[i + j];
        }
    for (; i < block; i++) {
        qq[0] += q[i] * q[i];
        kk[0] += k[i] * k[i];
    }
    double squares = (qq[0] + qq[1] + qq[2] + qq[3]) * (kk[0] + kk[1] + kk[2] + kk[3]);
    return sqrt(squares) * (1 + Linalg_rounding_gamma((double)block + 4));
}

/* The largest ‖x_i‖² of the T×d input (column-major), rounded up past its sums of d squares;
   `norms` holds T doubles of scratch. */
static double row_norm_max_squared(int T, int d, const double *x, double *norms)
{
    memset(norms, 0, sizeof(double) * T);
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            norms[i] += x[i + (size_t)j * T] * x[i + (size_t)j * T];
    double largest = 0;
    for (int i = 0; i < T; i++)
        largest = fmax(largest, norms[i]);
    return largest * (1 + Linalg_rounding_gamma(d + 1));
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
    LayerState *state = &run->track[watch->which]->state[run->layer];
    const Config *c = run->config;
    if (!state->entropy)
        return;
    HeadEntropy *e = &state->entropy[head];
    e->logit_rounding = Entropy_logit_rounding(
        c, run->layer, query_key_norm(c, &run->weights, head), state->input.row_norm_max_squared);
    Entropy_rows_rounding(Config_layer_mask(c, run->layer), c->window, c->tokens,
                          Config_has_sink(c), attention, e->logit_rounding, &e->rows, &e->rounding);
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
    /* Tokens equal within the round-off of the spread itself: no q − p, as no similarity. */
    bool resolved = Measure_spread_resolved(spread, squares);
    state->input.moment_gap = T > 1 && resolved ? spread / (T - 1) : NAN;
    Lane *lane = &run->w->lane[watch->which];
    LayerBuffers *b = &lane->step;
    /* row_stat is free until the step's attention (QK-norm, LayerNorm) */
    state->input.row_norm_max_squared = row_norm_max_squared(T, d, input, b->row_stat);
    if (Entropy_zhai_void(c, run->layer))
        return 0;
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

/* From `layer` on the tokens of lane `which` are equal to within round-off: what is null from
   there (assemble.c's track_round_off, docs/model.md §2 "Round-off from a layer on"), said once,
   in words that hold at any depth (a deeper run reuses the kept layer and its warning). */
void round_off_warning(Run *run, int which, int layer)
{
    const Config *c = run->config;
    unsigned subject = WARNING_ABOUT_SIMILARITY | WARNING_ABOUT_ENTROPY;
    char attention[160] = "", noise[400] = "";
    if (round_off_rows_read_logits(c))
        snprintf(attention, sizeof attention,
                 ", and from layer %d the attention rows' entropies and largest weights (the "
                 "logits are equal up to their rounding)",
                 layer + 1);
    Gap gap = run->track[which]->gap;
    if (round_off_noise_after(c, gap, layer)) {
        subject |= WARNING_ABOUT_GRADIENTS; /* the stable rank's status line says round-off */
        snprintf(noise, sizeof noise,
                 "; gap %s sends equal tokens to 0 and no skip carries them, so layer %d passes "
                 "on their rounding alone: every number of the network from layer %d on is "
                 "null, and where the network is deeper than layer %d so are its gradients at "
                 "every layer (each takes A_L...A_1 through layer %d)",
                 GAP_NAMES.names[gap], layer + 1, layer + 1, layer, layer + 1);
    }
    Warnings_add_about(&run->w->lane[which].warnings, subject,
                       "token similarity of " ROLE_MARK " network: from layer %d on its tokens "
                       "are equal to within round-off (%.0e of ||X||), so it is not shown "
                       "there; nor are stable_rank_minus_one (sr is 1 to every digit), "
                       "relative_spread and energy_off_top, and centred_stable_rank is null "
                       "(0/0)%s%s",
                       layer, MEASURE_SIMILARITY_RESOLUTION, attention, noise);
}

/* Where the warning saying why net died is among its layer's (w, which held `before` until
   it was added): the assembly names it for a later seed (0: it did not fit, or was there). */
static void note_death_warning(Network *net, const Warnings *w, int before)
{
    net->death_warning = w->count == before + 1 && w->dropped == 0 ? before + 1 : 0;
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
        int before = lane->warnings.count;
        Warnings_add(&lane->warnings,
                     ROLE_MARK " network is exactly 0 after layer %d (%s): its stable rank is "
                               "undefined from there on",
                     layer, ATTENTION_NAMES.names[c->attention]);
        note_death_warning(net, &lane->warnings, before);
    }
    if (run->first_seed && isnan(m.log_similarity) && !isnan(m.stable_rank) &&
        !net->similarity_lost) {
        net->similarity_lost = true;
        round_off_warning(run, which, layer);
    }
    if (run->first_seed && !net->rank_one_lost && !isnan(m.log_similarity) &&
        !Measure_rank_one_resolved(m.geometry.energy_off_top)) {
        net->rank_one_lost = true; /* (tokens equal within round-off say so themselves) */
        Warnings_add_about(&lane->warnings, WARNING_ABOUT_STABLE_RANK | WARNING_ABOUT_SIMILARITY,
                           "stable rank of " ROLE_MARK " network: from layer %d its tokens lie "
                           "along one direction to within round-off (the energy off it is below "
                           "%.0e of ||X||_F^2) while they stay apart: sr - 1 < 1e-48 is below "
                           "every digit of sr, which reads 1, and stable_rank_minus_one and "
                           "energy_off_top are the tokens' rounding, null at every layer where "
                           "this holds",
                           layer, MEASURE_SIMILARITY_RESOLUTION * MEASURE_SIMILARITY_RESOLUTION);
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
    Gap gap = run->track[which]->gap;
    MeasureCounts declared = {.flat_proofs_declared =
                                  Work_flat_proofs_declared(c, gap, layer, bounding),
                              .deflated_declared = Work_deflated_route_declared(c, gap, layer)};
    layer_state_record(&run->track[which]->state[layer], &m, &share, &declared,
                       net->log_similarity0);
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
        state->entropy[h] =
            (HeadEntropy){Entropy_undefined(), run->qk_norm[h], NAN, Entropy_undefined()};
    state->input = (AttentionInput){NAN, NAN, NAN, NAN};
    return 0;
}

/* The first part of one network's layer: the layer step on its lane (the shown head's
   attention captured and every head's row entropies measured on the way); what the rest needs
   of it into run->outcome and run->step_log_scale. */
static int network_step(Run *run, int which)
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
                      .built_logits = run->shared_logits,
                      .mix_tokens_first = gradients_apply(c)};
    run->step_log_scale[which] = net->log_scale;
    return Layer_step(&step, &lane->step, &run->outcome[which], &net->log_scale);
}

/* The rest of it, after its step: the frozen product of the gradients, then the layer's
   numbers. */
static int network_tail(Run *run, int which)
{
    const Config *c = run->config;
    Lane *lane = &run->w->lane[which];
    Network *net = &run->nets[which];
    LayerOutcome outcome = run->outcome[which];
    int info = 0;
    /* Every seed multiplies in the gradients' order (network_step), so a seed's bits do not
       depend on its place in the run (a shard's first seed is an unsharded run's later one);
       only the first seed's gradients read the product. */
    if (outcome != LAYER_ATTENTION_OVERFLOW && run->first_seed && gradients_apply(c))
        info = frozen_attention_step(c, run->layer, lane, net, run->step_log_scale[which]);
    if (info)
        return info;
    /* Linear attention squares the tokens' scale: its matrix overflows a layer or more before
       the tokens do. */
    if (outcome != LAYER_DONE) {
        int before = lane->warnings.count;
        Warnings_add(&lane->warnings,
                     ROLE_MARK " network%s overflows the double range at layer %d (%s); its "
                               "values from there on are null",
                     outcome == LAYER_ATTENTION_OVERFLOW ? "'s attention matrix" : "", run->layer,
                     Layer_weights_in_use() ? "the checkpoint's weights are too large"
                                            : "no LayerNorm: the tokens grow layer by layer");
        note_death_warning(net, &lane->warnings, before);
    }
    net->dead = net->overflowed = outcome != LAYER_DONE;
    if (net->dead && run->measure) { /* a head may have been measured before the overflow */
        LayerState *state = &run->track[which]->state[run->layer];
        free(state->entropy);
        state->entropy = NULL;
    }
    return net->dead || !run->measure ? 0 : measure_layer(run, which);
}

void layer_step_task(int which, void *context)
{
    Run *run = context;
    run->info[which] = 0;
    if (run->active[which] && !run->nets[which].dead)
        run->info[which] = network_step(run, which);
}

/* A lane whose step ran and succeeded (its network is marked dead only here). */
void layer_tail_task(int which, void *context)
{
    Run *run = context;
    if (run->active[which] && !run->nets[which].dead && !run->info[which])
        run->info[which] = network_tail(run, which);
}

void layer_task(int which, void *context)
{
    layer_step_task(which, context);
    layer_tail_task(which, context);
}
