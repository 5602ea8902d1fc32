/* What Model_run keeps between runs, and the plan of a run read off it (model_internal.h).
 *
 * Computed once: every layer of every network that was computed for the current weights is
 * kept as a Track (its per-layer numbers always, its token matrices while a memory budget
 * allows), and so are the shown layers' spectra and the gradients.  A run for settings that
 * share the weights (same seed, sizes, kind, mask, σ_qk, LayerNorm and skip; any depth,
 * shown layer, gap mode or seed count) computes only what is missing: a deeper network
 * continues from the kept last layer, another shown layer needs only its attention matrix
 * and spectra, and the gap-toggled network is the counterpart already computed.
 */
#include "attnscope/model.h"

#include "model_internal.h"

#include "attnscope/init.h"

#include <stdlib.h>
#include <string.h>

/* The settings that decide the weights and the forward pass (the settings table's
   REUSE_WEIGHTS class): the gap mode, the seed (a track's own), the depth, the shown matrix
   and the seed count leave the kept tracks valid; the depth does not where the weights of
   every layer depend on L (÷√(2L), deepnorm's β). */
bool same_weights(const Config *a, const Config *b)
{
    return Config_same_in(a, b, REUSE_WEIGHTS) &&
           (a->depth == b->depth || !Init_depends_on_depth(a));
}

static void state_forget_matrices(Kept *k, LayerState *s, size_t td)
{
    if (s->x)
        k->bytes -= sizeof(double) * td;
    if (s->frozen)
        k->bytes -= sizeof(double) * td;
    free(s->x);
    free(s->frozen);
    s->x = s->frozen = NULL;
}

static void track_free(Kept *k, Track *t, size_t td)
{
    for (int l = 0; l <= t->layers && l <= t->capacity; l++) {
        state_forget_matrices(k, &t->state[l], td);
        free(t->state[l].warnings);
    }
    /* A layer stopped halfway may hold its entropies above t->layers. */
    for (int l = 0; t->state && l <= t->capacity; l++)
        free(t->state[l].entropy);
    free(t->state);
    free(t->gradient_norm);
    free(t->log10_gradient_norm);
    free(t);
}

void kept_spectra_free(KeptSpectra *s)
{
    free(s->eigenvalues);
    free(s->singular_values);
    free(s->product_column_mass);
    AttentionMap_release(&s->map);
    AttentionMap_release(&s->product_map);
    free(s->row_entropy);
    memset(s, 0, sizeof *s);
}

void kept_clear(Kept *k)
{
    size_t td = (size_t)k->key.tokens * k->key.width;
    for (int i = 0; i < k->track_count; i++)
        track_free(k, k->tracks[i], td);
    free(k->tracks);
    for (int i = 0; i < k->spectra_count; i++)
        kept_spectra_free(&k->spectra[i]);
    memset(k, 0, sizeof *k);
}

/* The kept track of (seed, gap) in its role, or NULL: the run and Model_plan both ask here. */
Track *kept_track_find(const Kept *k, uint64_t seed, Gap gap, bool first)
{
    for (int i = 0; i < k->track_count; i++)
        if (k->tracks[i]->seed == seed && k->tracks[i]->gap == gap && k->tracks[i]->first == first)
            return k->tracks[i];
    return NULL;
}

/* The highest layer at or below `layer` whose token matrices (and frozen products, when the
   gradients need them) track t keeps, or 0 (X0 is drawn again; t NULL: nothing kept). */
static int track_nearest_kept(const Track *t, bool frozen, int layer)
{
    int from = layer;
    while (from > 0 &&
           (!t || from > t->layers || !t->state[from].x || (frozen && !t->state[from].frozen)))
        from--;
    return from;
}

int track_load_start(const Track *t, bool frozen, int held, int layer, LoadSource *source)
{
    int from = track_nearest_kept(t, frozen, layer);
    *source = held > from && held < layer ? LOAD_FROM_LANE
              : from == 0                 ? LOAD_FROM_INPUT
                                          : LOAD_FROM_KEPT;
    return *source == LOAD_FROM_LANE ? held : from;
}

/* The track of (seed, gap), created empty when missing; NULL when out of memory. */
Track *kept_track(Kept *k, uint64_t seed, Gap gap, bool first)
{
    Track *found = kept_track_find(k, seed, gap, first);
    if (found)
        return found;
    if (k->track_count == k->track_capacity) {
        int capacity = k->track_capacity ? 2 * k->track_capacity : 8;
        Track **grown = realloc(k->tracks, sizeof *grown * (size_t)capacity);
        if (!grown)
            return NULL;
        k->tracks = grown;
        k->track_capacity = capacity;
    }
    Track *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->seed = seed;
    t->gap = gap;
    t->first = first;
    t->layers = -1; /* not even the input yet */
    k->tracks[k->track_count++] = t;
    return t;
}

/* Room for layers 0..depth.  Returns 0 or -1. */
int track_reserve(Track *t, int depth)
{
    if (depth <= t->capacity && t->state)
        return 0;
    size_t n = (size_t)depth + 1, old = t->state ? (size_t)t->capacity + 1 : 0;
    LayerState *state = realloc(t->state, sizeof *state * n);
    if (!state)
        return -1;
    memset(state + old, 0, sizeof *state * (n - old));
    t->state = state;
    double *norm = realloc(t->gradient_norm, sizeof(double) * n);
    if (!norm)
        return -1;
    t->gradient_norm = norm;
    double *log10_norm = realloc(t->log10_gradient_norm, sizeof(double) * n);
    if (!log10_norm)
        return -1;
    t->log10_gradient_norm = log10_norm;
    t->capacity = depth;
    return 0;
}

/* The kept spectra of the shown matrix of c's network of `seed`, or NULL: the one rule the
   run and Model_plan both follow.  Within the kept weights, an entry serves the settings
   that agree on the seed, the gap mode and the shown matrix (the depth and the seed count
   do not change it). */
const KeptSpectra *kept_spectra_find(const Kept *k, uint64_t seed, const Config *c)
{
    Config wanted = *c;
    wanted.seed = seed;
    for (int i = 0; i < k->spectra_count; i++)
        if (!k->spectra[i].pending &&
            Config_same_in(&k->spectra[i].key, &wanted, REUSE_SEED | REUSE_GAP | REUSE_SHOWN))
            return &k->spectra[i];
    return NULL;
}

/* A fresh entry for c's (gap, layer, head), replacing the oldest when all are taken. */
KeptSpectra *kept_spectra_new(Kept *k, uint64_t seed, const Config *c)
{
    int T = c->tokens;
    if (k->spectra_count == KEPT_SPECTRA_MAX) {
        kept_spectra_free(&k->spectra[0]);
        memmove(k->spectra, k->spectra + 1, sizeof k->spectra[0] * (KEPT_SPECTRA_MAX - 1));
        k->spectra_count--;
    }
    KeptSpectra *s = &k->spectra[k->spectra_count];
    memset(s, 0, sizeof *s);
    s->eigenvalues = malloc(sizeof(Complex) * (size_t)T);
    s->singular_values = malloc(sizeof(double) * (size_t)T);
    s->row_entropy = malloc(sizeof(double) * (size_t)T);
    if (!s->eigenvalues || !s->singular_values || !s->row_entropy) {
        kept_spectra_free(s);
        return NULL;
    }
    s->key = *c;
    s->key.seed = seed;
    k->spectra_count++;
    return s;
}

/* Makes the kept tracks fit the budget, dropping token matrices in order of least use:
   tracks the run does not read, then the other seeds' layers, then every other layer of
   the run's own tracks (a checkpoint every 2, 4, … layers remains, so a layer is at most
   that far from one to compute from), and their last layers last. */
void kept_trim(Kept *k, size_t budget, Track *const own[NETWORKS])
{
    size_t td = (size_t)k->key.tokens * k->key.width;
    for (int pass = 0; pass < 2 && k->bytes > budget; pass++)
        for (int i = 0; i < k->track_count && k->bytes > budget; i++) {
            Track *t = k->tracks[i];
            bool first_seed_pass = pass == 0;
            if (t == own[0] || t == own[1] || t->first != first_seed_pass)
                continue;
            for (int l = 1; l <= t->layers; l++)
                state_forget_matrices(k, &t->state[l], td);
        }
    for (int stride = 2; k->bytes > budget && stride <= 2 * CONFIG_DEPTH_MAX; stride *= 2)
        for (int n = 0; n < NETWORKS; n++)
            for (int l = 1; own[n] && l < own[n]->layers && k->bytes > budget; l++)
                if (l % stride)
                    state_forget_matrices(k, &own[n]->state[l], td);
    for (int n = 0; n < NETWORKS && k->bytes > budget; n++)
        if (own[n] && own[n]->layers >= 1)
            state_forget_matrices(k, &own[n]->state[own[n]->layers], td);
}

void Workspace_keep_layers(Workspace *w, size_t budget_bytes)
{
    w->keep_budget = budget_bytes;
    if (budget_bytes == 0)
        kept_clear(&w->kept);
    else
        kept_trim(&w->kept, budget_bytes, (Track *const[NETWORKS]){NULL, NULL});
}

bool Workspace_pause_keeping(Workspace *w, bool paused)
{
    bool was = w->keeping_paused;
    w->keeping_paused = paused;
    return was;
}

size_t Workspace_kept_bytes(const Workspace *w)
{
    return w->kept.bytes;
}

/* The layers lane_load recomputes to bring a lane holding `held` to `layer` of track t (NULL:
   nothing kept), by the same rules; *from_input when it starts again from X0. */
static int plan_load(const Track *t, bool frozen, int held, int layer, bool *from_input)
{
    *from_input = false;
    if (held == layer)
        return 0;
    LoadSource source;
    int from = track_load_start(t, frozen, held, layer, &source);
    *from_input = source == LOAD_FROM_INPUT;
    return layer - from;
}

int Model_plan(const Config *c, const Workspace *w, ModelPlan *plan)
{
    int seeds = c->seeds < 1 ? 1 : c->seeds;
    plan->config = *c;
    plan->seeds = seeds;
    plan->seed = calloc((size_t)seeds, sizeof *plan->seed);
    if (!plan->seed)
        return -1;
    /* Model_run starts from nothing unless it keeps, and what it keeps has these weights. */
    const Kept *k = w && w->keep_budget > 0 && !w->keeping_paused && w->kept.valid &&
                            same_weights(&w->kept.key, c)
                        ? &w->kept
                        : NULL;
    const Gap gaps[NETWORKS] = {c->gap, Gap_toggled(c->gap)};
    for (int s = 0; s < seeds; s++) {
        SeedPlan *p = &plan->seed[s];
        bool first = s == 0, frozen = first && gradients_apply(c);
        uint64_t seed = c->seed + (uint64_t)s;
        const Track *t[NETWORKS];
        int layers[NETWORKS], held[NETWORKS] = {-1, -1};
        for (int n = 0; n < NETWORKS; n++) {
            t[n] = k ? kept_track_find(k, seed, gaps[n], first) : NULL;
            layers[n] = t[n] ? t[n]->layers : -1;
        }
        p->input = layers[0] < 0 || layers[1] < 0;
        if (p->input)
            held[0] = held[1] = 0;
        p->spectra = first && !(k && kept_spectra_find(k, seed, c));
        p->capture_replay = -1;
        if (p->spectra && layers[0] >= c->layer) {
            p->capture_replay =
                plan_load(t[0], frozen, held[0], c->layer - 1, &p->input_for_capture);
            held[0] = c->layer - 1;
        }
        for (int n = 0; n < NETWORKS; n++) {
            int computed = layers[n] < 0 ? 0 : layers[n];
            p->first_layer[n] = computed < c->depth ? computed + 1 : c->depth + 1;
            if (p->first_layer[n] <= c->depth) {
                p->replay[n] =
                    plan_load(t[n], frozen, held[n], p->first_layer[n] - 1, &p->replay_input[n]);
                held[n] = c->depth;
            }
        }
        p->product = p->spectra && c->attention_map == ATTENTION_MAP_PRODUCT;
        p->product_replay = p->product && p->first_layer[0] != 1;
        p->gradients = frozen && (!t[0] || t[0]->gradient_depth != c->depth || !t[1] ||
                                  t[1]->gradient_depth != c->depth);
        for (int n = 0; n < NETWORKS && p->gradients; n++) {
            bool from_input;
            p->gradient_replay[n] = plan_load(t[n], frozen, held[n], c->depth, &from_input);
        }
    }
    return 0;
}

void ModelPlan_release(ModelPlan *plan)
{
    free(plan->seed);
    plan->seed = NULL;
}
