/* The shown layer's attention matrix (config.layer and .head, first seed, the run's own
 * network): captured as its layer is computed, or computed again from a kept network when
 * only the shown layer changed, and its spectra, kept per (gap, layer, head). */
#include "attnscope/attention.h"
#include "attnscope/attention_map.h"
#include "attnscope/layer.h"
#include "attnscope/spectra.h"
#include "model_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The shown matrix as built (before gap removal) and its logits' std. */
void capture_built(Run *run, const double *logits, const double *attention)
{
    const Config *c = run->config;
    memcpy(run->w->shown_before_gap, attention, sizeof(double) * c->tokens * c->tokens);
    run->shown_logit_std =
        logits ? Attention_logit_std(Config_layer_mask(c, c->layer), c->window, c->tokens, logits)
               : NAN;
}

/* The shown matrix as applied, and what the gap mode did. */
void capture_applied(Run *run, const double *attention, GapOutcome outcome)
{
    size_t tt = (size_t)run->config->tokens * run->config->tokens;
    memcpy(run->w->shown_applied, attention, sizeof(double) * tt);
    run->shown_outcome = outcome;
    run->shown_captured = true;
}

/* The shown layer's eigenvalues (dgeev, the larger part) and singular values (dgesdd) are
   independent once their inputs are apart: each runs in a lane of its own, at once when the
   caller offers two threads.  The eigenvalues have a LAPACK workspace and scratch of their
   own, so that they may also run beside both networks' layers: they are the part the
   second thread takes (task(1, ·), of run_pair and start_second alike). */
static void shown_spectra_task(int which, void *context)
{
    ShownSpectra *job = context;
    Workspace *w = job->w;
    job->info[which] =
        which == SPECTRA_EIGENVALUES
            ? Spectra_shown_eigenvalues(job->T, job->brauer, w->shown_before_gap, w->spectra_la,
                                        w->spectra_scratch, &job->into)
            : Spectra_shown_singular_values(job->T, w->shown_applied,
                                            w->lane[NETWORK_COUNTERPART].step.la, &job->into);
}

/* The spectra job's entry once both parts ended: shown, or dropped on a failure. */
static int shown_spectra_finish(Run *run)
{
    ShownSpectra *job = &run->spectra;
    KeptSpectra *s = job->entry;
    int info = job->info[SPECTRA_EIGENVALUES] ? job->info[SPECTRA_EIGENVALUES]
                                              : job->info[SPECTRA_SINGULAR_VALUES];
    s->pending = false;
    if (info) { /* the newest entry: none is made while one is pending */
        kept_spectra_free(s);
        run->kept->spectra_count--;
        return info;
    }
    s->exact = job->into.eigenvalues_exact;
    s->warnings = job->into.warnings;
    return 0;
}

static bool second_thread_offered(const Progress *p)
{
    return p && p->run_pair && p->start_second && p->second_finished;
}

/* What the entry keeps of the matrix as built, read before the spectra, whose LAPACK calls
   overwrite it: its map on one lane, its rows' entropies on the other (each lane writes its
   own fields of the entry, and both only read the matrix). */
typedef struct {
    Run *run;
    KeptSpectra *entry;
    int info; /* the map's */
} BuiltReadings;

static void built_readings_task(int which, void *context)
{
    BuiltReadings *b = context;
    const Config *c = b->run->config;
    const double *built = b->run->w->shown_before_gap;
    if (which == 0)
        b->info = AttentionMap_reduce(built, c->tokens,
                                      AttentionMap_block_for(c->tokens, b->run->w->map_cells),
                                      &b->entry->map);
    else if (Entropy_defined(c->attention))
        Entropy_each_row(Config_layer_mask(c, c->layer), c->window, c->tokens, Config_has_sink(c),
                         built, b->entry->row_entropy);
    else
        for (int i = 0; i < c->tokens; i++)
            b->entry->row_entropy[i] = NAN;
}

int keep_shown_spectra(Run *run, bool beside)
{
    const Config *c = run->config;
    KeptSpectra *s = kept_spectra_new(run->kept, run->seed, c);
    if (!s)
        return -1;
    BuiltReadings built = {.run = run, .entry = s};
    both_lanes(run->progress, built_readings_task, &built);
    if (built.info) {
        kept_spectra_free(s);
        run->kept->spectra_count--;
        return -1;
    }
    s->applied = run->shown_outcome.applied;
    s->outliers_removed = run->shown_outcome.outliers_removed;
    s->logit_std = run->shown_logit_std;
    /* The spectra functions fill a Result's fields: one that points into the entry. */
    ShownSpectra *job = &run->spectra;
    *job = (ShownSpectra){.w = run->w, .T = c->tokens, .entry = s};
    job->into.eigenvalues = s->eigenvalues;
    job->into.singular_values = s->singular_values;
    job->brauer = Spectra_prepare_shown_layer(c, s->applied, run->w->shown_before_gap,
                                              run->w->shown_applied, &job->into);
    const Progress *p = run->progress;
    if (!beside || !second_thread_offered(p)) {
        both_lanes(p, shown_spectra_task, job);
        return shown_spectra_finish(run);
    }
    s->pending = true;
    run->spectra_beside = true;
    p->start_second(p->pair_context, shown_spectra_task, job);
    shown_spectra_task(SPECTRA_SINGULAR_VALUES, job);
    /* A failure here ends the run: it waits for the eigenvalues first. */
    return job->info[SPECTRA_SINGULAR_VALUES] ? shown_spectra_join(run, true) : 0;
}

int shown_spectra_join(Run *run, bool wait)
{
    const Progress *p = run->progress;
    if (!run->spectra_beside || !p->second_finished(p->pair_context, wait))
        return 0;
    run->spectra_beside = false;
    return shown_spectra_finish(run);
}

/* The attention matrix of `layer` on lane `which` again, from the layer below, captured as
   the shown one: for a shown layer whose network is kept but whose spectra are not.  Sets
   run->shown_captured to whether that matrix exists (finite, from a live network). */
int capture_shown_attention(Run *run, int which, int layer)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    Lane *lane = &w->lane[which];
    run->shown_captured = false;
    if (run->track[which]->state[layer - 1].net.dead)
        return 0;
    int info = lane_load(run, which, layer - 1);
    if (info)
        return info;
    LayerWeights weights = w->weights;
    info = draw_layer_weights(w, c, run->seed, layer, run->first_seed, LAYER_DRAW_ATTENTION,
                              &weights.value);
    /* Through M_h where the run's layer took them, so that the matrix is the run's bit for bit. */
    if (!info && Layer_logits_through_qk_product(c, layer)) {
        weights.qk_product = w->qk_product[0];
        info = Layer_qk_product(lane->step.la, c, weights.query, weights.key, weights.qk_product);
    }
    const double *logits = NULL;
    LayerOutcome finite = LAYER_DONE;
    if (!info)
        info = Layer_attention(c, layer, &weights, &lane->step, c->head - 1, &logits, &finite);
    if (info || finite != LAYER_DONE)
        return info;
    capture_built(run, logits, lane->step.attention);
    GapOutcome outcome;
    info = Gap_apply(run->track[which]->gap, c->attention, Config_has_sink(c),
                     Layer_attention_uniform(c), Config_layer_mask(c, layer), c->window, c->tokens,
                     lane->step.attention, lane->step.la, lane->step.gap_scratch, &outcome,
                     &lane->warnings);
    lane->warnings.count = 0; /* raised when the layer was first computed, and kept */
    capture_applied(run, lane->step.attention, outcome);
    /* The lane's token matrices are still those of layer − 1: the attention did not touch
       them. */
    return info;
}

/* One more factor of the product A_ℓ⋯A_1 (docs/model.md §2, the attention map): the shown
   head's A as the main lane's layer step builds it, first seed, layers 1..ℓ in order.  A
   layer out of order (a run that starts from kept layers) leaves the product unfinished, and
   keep_shown_product computes it from the input.  Returns 0 or LINALG_STOPPED. */
int product_take(Run *run, int which, int head, const double *attention)
{
    const Config *c = run->config;
    if (c->attention_map != ATTENTION_MAP_PRODUCT || !run->first_seed || which != NETWORK_MAIN ||
        head != c->head - 1 || run->layer > c->layer)
        return 0;
    Workspace *w = run->w;
    if (run->layer == 1) {
        memcpy(w->product, attention, sizeof(double) * c->tokens * c->tokens);
        run->product_layer = 1;
        return 0;
    }
    if (run->product_layer != run->layer - 1)
        return 0;
    int info = Attention_product_step(w->lane[which].step.la, c->tokens, attention, w->product,
                                      w->product_scratch);
    run->product_layer = info ? 0 : run->layer;
    return info;
}

/* The product's map and column mass into the shown layer's kept entry (first seed, with
   --attention-map product), from the layers this run multiplied or, where it started from
   kept layers, from the input again through the layer step.  No entry (no finite shown
   matrix) or one that has them: nothing to do.  Returns 0, -1 or a lane's status. */
int keep_shown_product(Run *run)
{
    const Config *c = run->config;
    if (c->attention_map != ATTENTION_MAP_PRODUCT || !run->first_seed)
        return 0;
    KeptSpectra *s = (KeptSpectra *)kept_spectra_find(run->kept, run->seed, c);
    if (!s || s->product_column_mass)
        return 0;
    if (run->product_layer != c->layer) {
        int info = lane_replay(run, NETWORK_MAIN, c->layer);
        if (info || run->product_layer != c->layer)
            return info;
    }
    int T = c->tokens;
    s->product_column_mass = malloc(sizeof(double) * (size_t)T);
    if (!s->product_column_mass ||
        AttentionMap_reduce(run->w->product, T, AttentionMap_block_for(T, run->w->map_cells),
                            &s->product_map)) {
        free(s->product_column_mass);
        s->product_column_mass = NULL;
        return -1;
    }
    Attention_column_mass(run->w->product, T, s->product_column_mass);
    return 0;
}
