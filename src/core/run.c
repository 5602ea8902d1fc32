/* Model_run: the forward pass of docs/model.md §1.5 for a network and its counterpart (gap
 * removal toggled), sharing every random weight, and the quantities of docs/model.md §2,
 * seed by seed and layer by layer.
 *
 * Each layer is the layer step of layer.h, run on a lane by run_lane.c after its query-key
 * work (run_qk.c).  The two networks of a layer are independent once its weights are drawn,
 * so each runs in a lane of its own buffers, and a caller with a spare core may run both
 * lanes at once (Progress.run_pair); the core itself starts no thread.
 * What earlier runs kept (model.c) is not computed again: a layer whose token matrices were
 * not kept is recomputed from the nearest kept one below, with the same code in the same
 * order, so a result is bit for bit the one a fresh workspace gives.
 *
 * Storage: token matrices X are T×d column-major (leading dimension T); weights d×d
 * column-major; attention matrices row by row (see attention.h).
 */
#include "attnscope/model.h"

#include "attnscope/entropy.h"
#include "attnscope/theory.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/work.h"
#include "model_internal.h"
#include "result_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Either thread gives the same bits: a task uses its own lane's buffers and Linalg, none of
   the thread's. */
void layer_lanes(const Run *run, void (*task)(int which, void *context), void *context)
{
    const Progress *p = run->progress;
    if (!run->spectra_beside) {
        both_lanes(p, task, context);
    } else if (p->run_claimed) { /* spectra beside: p offered start_second */
        p->run_claimed(p->pair_context, task, context);
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

/* Draws the weights of run->layer and computes it on the active lanes.  A layer whose
   query-key work was done ahead (qk_state) takes it, W^Q and W^K with it (a paired layer's
   attention draw is those two alone: Entropy_zhai_void excludes sinks and markov), so the plan
   prices them once. */
static int run_layer(Run *run)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    QkState qk = qk_state(run);
    unsigned parts = LAYER_DRAW_ALL;
    /* Where a lane drew the layer's W^V beside other work: its q·k pair's
       (Work_values_drawn_beside_qk) or X0's (Work_value_one_beside_input); NULL: drawn here. */
    double *value = NULL;
    if (qk != QK_TO_DO) {
        value = run->value_ahead;
        qk_take(run, qk);
        parts &= ~(unsigned)LAYER_DRAW_ATTENTION;
    } else if (qk_paired(run) && Work_qk_pair_drawn_on_lanes(c)) {
        parts &= ~(unsigned)LAYER_DRAW_ATTENTION; /* on its lane of the pair (layer_qk_work) */
        value = Work_values_drawn_beside_qk(c, run->layer) ? w->weights.value : NULL;
    }
    run->weights = w->weights;
    run->weights.qk_product = qk_product_of(run, run->layer, 0);
    int info = 0;
    if (value) {
        run->weights.value = value;
        info = Layer_draw(w->random, w->lane[NETWORK_MAIN].step.la, c, run->seed, run->layer,
                          parts & ~(unsigned)LAYER_DRAW_VALUE, &w->weights, w->init_scratch);
    } else {
        info = draw_layer_weights(w, c, run->seed, run->layer, run->first_seed, parts,
                                  &run->weights.value);
    }
    if (!info && qk == QK_TO_DO)
        info = layer_qk_work(run);
    if (info)
        return info;
    bool built = qk == QK_DONE_BESIDE_INPUT; /* layer 1's shared attention too */
    /* Both networks read X0 in layer 1: one attention matrix serves them both (one head: a
       matrix per head would be as many T×T buffers). */
    run->attention_ready = run->layer == 1 && run->active[0] && run->active[1] && c->heads == 1;
    if (!built)
        run->shared_logits = NULL;
    if (run->attention_ready) {
        LayerBuffers *main_step = &w->lane[NETWORK_MAIN].step;
        int status = built ? 0 : layer_one_attention(run, &run->weights);
        if (status)
            return status;
        memcpy(w->lane[NETWORK_COUNTERPART].step.attention, main_step->attention,
               sizeof(double) * c->tokens * c->tokens);
    }
    /* While the shown eigenvalues hold the second thread, the networks are claimed
       (layer_lanes); asked here, after the layer's serial part, so that the answer is as
       late as it can be.  Claimed, a network's layer is two tasks, its step then its tail,
       the steps' pair first: a thread that is freed while the other runs the last step
       takes a tail (the cost model's price_claimed). */
    if ((info = shown_spectra_join(run, false)))
        return info;
    if (run->active[0] && run->active[1] && run->spectra_beside) {
        layer_lanes(run, layer_step_task, run);
        layer_lanes(run, layer_tail_task, run);
    } else if (run->active[0] && run->active[1]) {
        layer_lanes(run, layer_task, run);
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
    bool draw_one;  /* layer 1's W^Q and W^K drawn on X0's lane, before its q·k work */
    bool bounding;  /* layer 1's ‖X0‖₂² from X0's measure, for both lanes */
    bool value_one; /* layer 1's W^V drawn after layer 2's q·k work (Work_value_one_beside_input) */
    MeasureInputBound bound;
    Measures m0;
    MeasureSharing share; /* X0's measure's */
    int info, chain_info; /* X0's lane's, the chain's lane's query-key work's */
} InputTasks;

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
            t->chain_info = layer_two_beside(run, w->value_random, lane);
        LayerWeights value = {.value = w->weights.value};
        if (t->value_one && !t->chain_info)
            t->chain_info = Layer_draw(w->value_random, lane->step.la, c, run->seed, 1,
                                       LAYER_DRAW_VALUE, &value, w->init_scratch);
        return;
    }
    t->info = input_tokens(w, c, run->seed, NETWORK_MAIN);
    t->bound = (MeasureInputBound){.factor = lane->step.queries, .lanczos = lane->lanczos};
    t->share = (MeasureSharing){.bound = t->bounding ? &t->bound : NULL,
                                .centred_from_gram = Work_centred_downdate_expected(c, 0)};
    if (!t->info)
        t->info = Measure_tokens_sharing(lane->step.la, c->tokens, c->width, lane->step.x, 0.0,
                                         lane->step.values, lane->step.logits, lane->step.row_max,
                                         w->measure_all_eigenvalues ? NULL : lane->lanczos,
                                         &t->share, &t->m0);
    if (!t->info && t->draw_one)
        t->info = draw_ahead(run, w->random, lane->step.la, 1, &w->ahead);
    if (!t->info && t->layer_one)
        t->info = layer_one_beside(run);
    if (t->info)
        return;
    /* X0 and its frozen start for the counterpart too, here rather than alone after the
       lanes: the chain beside reads neither buffer. */
    size_t td = (size_t)c->tokens * c->width;
    Lane *counterpart = &w->lane[NETWORK_COUNTERPART];
    memcpy(counterpart->step.x, lane->step.x, sizeof(double) * td);
    memcpy(counterpart->frozen, lane->frozen, sizeof(double) * td);
}

/* Layer 0 of both tracks: X0 on both lanes, measured once.  Beside the value chain, layer 1's
   query-key work and shared attention follow X0 on its lane, and layer 2's the chain on the
   other (Work_layer_one_beside_input: both networks start at layer 1 of the first seed),
   which evens the lanes and takes them off the serial part between X0 and layer 1; layer
   1's W^Q and W^K are drawn on X0's lane too where no scratch is shared with the chain. */
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
    tasks.draw_one = tasks.layer_one && Work_layer_one_drawn_on_input_lane(c);
    tasks.value_one = tasks.layer_one && Work_value_one_beside_input(c);
    if (tasks.layer_one && !tasks.draw_one) {
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
    if (tasks.layer_one)
        qk_beside_input_done(run);
    run->value_ahead = tasks.value_one ? w->weights.value : NULL;
    const Measures m0 = tasks.m0;
    /* X0's tokens equal within round-off (one vocabulary row): said from layer 0, once. */
    bool equal = isnan(m0.log_similarity) && !isnan(m0.stable_rank);
    for (int n = 0; n < NETWORKS; n++) {
        Track *t = run->track[n];
        run->held[n] = 0;
        run->input_bound_for[n] = tasks.bounding ? 1 : 0;
        run->input_bound[n] = tasks.bound.norm_squared;
        run->nets[n] = (Network){
            .log_similarity0 = m0.log_similarity, .log10_mixed2 = NAN, .similarity_lost = equal};
        if (t->layers >= 0)
            continue;
        MeasureCounts declared = {.flat_proofs_declared =
                                      Work_flat_proofs_declared(c, GAP_OFF, 0, tasks.bounding),
                                  .deflated_declared = Work_deflated_route_declared(c, GAP_OFF, 0)};
        layer_state_record(&t->state[0], &m0, &tasks.share, &declared, m0.log_similarity);
        t->state[0].net = run->nets[n];
        t->layers = 0;
        if (equal && run->first_seed) {
            round_off_warning(run, n, 0);
            if (keep_warnings(run, n, &t->state[0]))
                return -1;
        }
    }
    return 0;
}

static void layer_state_undefined(LayerState *s)
{
    free(s->entropy);
    s->entropy = NULL;
    s->stable_rank = s->stable_rank_minus_one = s->log10_norm = s->token_similarity = NAN;
    s->counts = (MeasureCounts){0};
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

/* The result rewritten from the tracks after a layer or a seed, where a caller follows the
   run (after_layer); without one nothing reads it before Model_run's last assemble, which
   rewrites it whole (each assemble copies the shown layer's attention maps, ~1.5 ms at
   T = 512). */
static void assemble_followed(Run *run, Track *(*tracks)[NETWORKS], int seeds)
{
    if (run->progress && run->progress->after_layer)
        assemble(run, tracks, seeds, false);
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
    assemble_followed(run, tracks, seed_index + 1);
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
    assemble_followed(run, tracks, seed_index + 1);
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
    assemble_curve_ranges(&run);
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
