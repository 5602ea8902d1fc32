/* The forward pass of docs/model.md §1.5 for a network and its counterpart (gap removal toggled),
 * sharing every random weight, and the quantities of docs/model.md §2.
 *
 * Computed once: every layer of every network that was computed for the current weights is
 * kept as a Track (its per-layer numbers always, its token matrices while a memory budget
 * allows), and so are the shown layers' spectra and the gradients.  A run for settings that
 * share the weights (same seed, sizes, kind, mask, σ_qk, LayerNorm and skip; any depth,
 * shown layer, gap mode or seed count) computes only what is missing: a deeper network
 * continues from the kept last layer, another shown layer needs only its attention matrix
 * and spectra, and the gap-toggled network is the counterpart already computed.  A token
 * matrix that was not kept is recomputed from the nearest kept layer below, with the same
 * code in the same order, so a result is bit for bit the one a fresh workspace gives.
 *
 * The two networks of a layer are independent once the layer's weights are drawn, so each
 * runs in a lane of its own buffers, and a caller with a spare core may run both lanes at
 * once (Progress.run_pair); the core itself starts no thread.
 *
 * Storage: token matrices X are T×d column-major (leading dimension T); weights d×d
 * column-major; attention matrices row by row (see attention.h).
 */
#include "attnscope/model.h"

#include "attnscope/attention.h"
#include "attnscope/block.h"
#include "attnscope/init.h"
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/random.h"
#include "attnscope/spectra.h"
#include "attnscope/theory.h"
#include "result_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NETWORK_MAIN, NETWORK_COUNTERPART, NETWORKS };

/* The state of one network after a layer, apart from its token matrices. */
typedef struct {
    double log_scale; /* X_ℓ = exp(log_scale) · x (input-independent kinds are rescaled) */
    double log_similarity0;
    double log_frozen;    /* A_ℓ⋯A_1 X0 = exp(log_frozen) · frozen */
    bool similarity_lost; /* its token similarity became round-off (warned once) */
    bool dead;            /* overflowed or vanished: later layers are undefined */
} Network;

/* One layer of a kept network: its numbers, the warnings it raised, and (while the budget
   allows) its token matrices, from which the next layer or this layer's successor's
   attention can be computed again. */
typedef struct {
    double stable_rank, stable_rank_minus_one, log10_norm, token_similarity;
    MeasureRoute route;
    Network net;        /* after the layer */
    Warnings *warnings; /* NULL: none */
    double *x, *frozen; /* T×d each, or NULL when not kept */
} LayerState;

/* One network (a seed and a gap mode) for the current weights: layers 0..layers.  A first
   seed's track carries more (the frozen products, the similarity warning) than the same
   seed's track in an ensemble, so the role is part of its name. */
typedef struct {
    uint64_t seed;
    Gap gap;
    bool first;
    int layers;
    int capacity;      /* of state[] and the gradient arrays, in layers after layer 0 */
    LayerState *state; /* [capacity + 1] */
    /* Frozen-attention gradients at depth gradient_depth (0: none), first seed only. */
    int gradient_depth;
    double *gradient_norm, *log10_gradient_norm; /* [capacity + 1] */
} Track;

/* The spectra of one shown matrix, for the settings in key (the weights are the kept ones';
   the seed is the first seed of the run that captured it). */
typedef struct {
    Config key;
    Gap applied;
    int outliers_removed;
    bool exact;
    double logit_std;
    Complex *eigenvalues;
    double *singular_values;
    Warnings warnings;
} KeptSpectra;

enum { KEPT_SPECTRA_MAX = 8 };

typedef struct {
    bool valid;
    Config key; /* the settings that decide the weights (see same_weights) */
    int track_count, track_capacity;
    Track **tracks;
    int spectra_count;
    KeptSpectra spectra[KEPT_SPECTRA_MAX]; /* oldest first */
    size_t bytes;                          /* of token matrices held */
} Kept;

/* A lane's status when Progress.stop_requested asked it to stop, whether polled here or by
   the lane's Linalg inside a long call (LAPACK's statuses are >= -1). */
enum { LANE_STOPPED = LINALG_STOPPED };

/* The buffers one network uses for itself. */
typedef struct {
    Linalg *la;
    double *x;             /* T×d: X_ℓ (normalised for input-independent kinds, see log_scale) */
    double *frozen;        /* T×d: A_ℓ⋯A_1 X0 for the gradients (normalised) */
    double *xw, *y;        /* T×d scratch: Q and K, then X·W^V and the gradient's spare */
    double *logits, *attn; /* T×T: the logits (then the Gram matrix), the attention */
    double *gram_eig, *column; /* T, max(T, d) */
    double *lanczos;           /* Measure_lanczos_size(T) */
    double *gap_scratch;       /* main lane only: the counterpart's gap mode is off or center */
    double *mixed;     /* T×d: the heads' outputs side by side, before W^O (see fused_heads) */
    double *normed;    /* T×d: LN(X), the branch's input with pre-LayerNorm */
    double *hidden;    /* T×R·d: the MLP's hidden layer */
    double *keys;      /* T×d: every head's keys (several heads; their queries are in y) */
    Warnings warnings; /* merged into the result after each layer, main lane first */
    int measure_routes[MEASURE_ROUTES]; /* merged like the warnings */
} Lane;

/* The buffers of workspace_plan: a lane's, and the workspace's own. */
enum { LANE_BUFFERS = 14, WORKSPACE_BUFFERS = 2 * LANE_BUFFERS + 10 };

struct Workspace {
    int T, d; /* the sizes the buffers hold */
    /* The sizes of the buffers held, in workspace_plan's order: a run whose plan differs
       (other sizes, heads, output projection or LayerNorm place) allocates afresh. */
    size_t planned[WORKSPACE_BUFFERS];
    RandomStream *random;
    Lane lane[NETWORKS];
    double *wq, *wk, *wv;     /* d×d, the current layer's weights, shared by both lanes */
    double *wo;               /* d×d, the output projection (unless it is the identity) */
    double *init_scratch;     /* the factorised schemes' SVDs (Init_scratch_doubles) */
    double *mlp_in, *mlp_out; /* d×R·d and R·d×d, the MLP's weights */
    double *markov_gauss;     /* T×T per head */
    double *shown_before_gap, *shown_applied; /* T×T, the shown layer of the main network */
    double *value_cache; /* W^V of the first seed's layers, kept for the gradients */
    size_t value_cache_size;
    bool value_cached[CONFIG_DEPTH_MAX + 1]; /* which layers' W^V the cache holds, */
    uint64_t value_seed;                     /* for this seed */
    Config value_key;                        /* and these weights (see same_weights) */
    bool measure_all_eigenvalues; /* skip the top-eigenpair route (the tests' reference) */
    size_t keep_budget;           /* bytes of token matrices the kept tracks may hold */
    bool keeping_paused;          /* runs neither read nor change what is kept */
    Kept kept;                    /* what earlier runs computed for the current weights */
};

/* The value weights of all layers are kept for the gradient pass below this size, and drawn
   again from their streams above it. */
#define VALUE_CACHE_MAX ((size_t)16 << 20)

/* Every buffer and its size in doubles for T tokens and width d: the one list that
   allocation, release and the memory estimate share. */
typedef struct {
    double **buf;
    size_t n;
} BufferPlan;

/* One head and no output projection: the head's output goes straight into X (skip and
   branch gain in the same product), as the one-head layer of docs/model.md §1.5 does. */
static bool fused_heads(const Config *c)
{
    return c->heads == 1 && c->output == OUTPUT_IDENTITY;
}

/* LayerNorm on the branch's input, X + F(LN X): the branch reads a normalised copy. */
static bool pre_layernorm(const Config *c)
{
    return c->ln_place == LN_PLACE_PRE && c->layernorm != LAYERNORM_NONE;
}

/* The plan for c's sizes; c NULL lists the buffers only (sizes 0), for their release. */
static int workspace_plan(Workspace *w, const Config *c, BufferPlan plan[WORKSPACE_BUFFERS])
{
    int T = c ? c->tokens : 0, d = c ? c->width : 0, heads = c ? c->heads : 0;
    bool block = c && !fused_heads(c);
    size_t mlp_ratio = c && c->mlp != MLP_NONE ? (size_t)c->mlp_ratio : 0;
    size_t td = (size_t)T * d, dd = (size_t)d * d, tt = (size_t)T * T;
    int n = 0;
    for (int l = 0; l < NETWORKS; l++) {
        Lane *lane = &w->lane[l];
        const BufferPlan buffers[LANE_BUFFERS] = {
            {&lane->x, td},
            {&lane->frozen, td},
            {&lane->xw, td},
            {&lane->y, td},
            {&lane->logits, tt},
            {&lane->attn, tt},
            {&lane->gram_eig, (size_t)T},
            {&lane->column, (size_t)(T > d ? T : d)},
            {&lane->lanczos, Measure_lanczos_size(T)},
            {&lane->gap_scratch, l == NETWORK_MAIN ? Gap_scratch_size(T) : 0},
            {&lane->mixed, block ? td : 0},
            {&lane->normed, c && pre_layernorm(c) ? td : 0},
            {&lane->hidden, td * mlp_ratio},
            {&lane->keys, c && c->heads > 1 ? td : 0},
        };
        memcpy(plan + n, buffers, sizeof buffers);
        n += LANE_BUFFERS;
    }
    const BufferPlan shared[] = {
        {&w->wq, dd},
        {&w->wk, dd},
        {&w->wv, dd},
        {&w->wo, c && c->output != OUTPUT_IDENTITY ? dd : 0},
        {&w->init_scratch, c ? Init_scratch_doubles(c) : 0},
        {&w->mlp_in, dd * mlp_ratio},
        {&w->mlp_out, dd * mlp_ratio},
        {&w->markov_gauss, tt * (size_t)heads},
        {&w->shown_before_gap, tt},
        {&w->shown_applied, tt},
    };
    memcpy(plan + n, shared, sizeof shared);
    return n + (int)(sizeof shared / sizeof shared[0]);
}

static void workspace_release_buffers(Workspace *w)
{
    BufferPlan plan[WORKSPACE_BUFFERS];
    int n = workspace_plan(w, NULL, plan);
    for (int i = 0; i < n; i++) {
        free(*plan[i].buf);
        *plan[i].buf = NULL;
    }
    w->T = w->d = 0;
    memset(w->planned, 0, sizeof w->planned);
}

static void kept_clear(Kept *k);

Workspace *Workspace_new(void)
{
    Workspace *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->random = RandomStream_new();
    for (int l = 0; l < NETWORKS; l++)
        w->lane[l].la = Linalg_new();
    if (!w->random || !w->lane[0].la || !w->lane[1].la) {
        Workspace_free(w);
        return NULL;
    }
    return w;
}

void Workspace_free(Workspace *w)
{
    if (!w)
        return;
    workspace_release_buffers(w);
    kept_clear(&w->kept);
    free(w->value_cache);
    for (int l = 0; l < NETWORKS; l++)
        Linalg_free(w->lane[l].la);
    RandomStream_free(w->random);
    free(w);
}

void Workspace_set_isolation(Workspace *w, LinalgIsolation isolation)
{
    for (int l = 0; l < NETWORKS; l++)
        Linalg_set_isolation(w->lane[l].la, isolation);
}

void Workspace_take_tally(Workspace *w, LinalgTally *tally)
{
    for (int l = 0; l < NETWORKS; l++)
        Linalg_tally_take(w->lane[l].la, tally, true);
}

void Workspace_measure_all_eigenvalues(Workspace *w, bool all)
{
    w->measure_all_eigenvalues = all;
}

static bool gradients_apply(const Config *c);

static size_t value_cache_doubles(const Config *c)
{
    size_t n = (size_t)c->depth * c->width * c->width;
    return gradients_apply(c) && n * sizeof(double) <= VALUE_CACHE_MAX ? n : 0;
}

bool Model_value_weights_cached(const Config *c)
{
    return value_cache_doubles(c) > 0;
}

static int workspace_reserve(Workspace *w, const Config *c)
{
    /* Grown with its content: the layers' W^V stay where they are. */
    size_t cache = value_cache_doubles(c);
    if (cache > w->value_cache_size) {
        double *grown = realloc(w->value_cache, sizeof(double) * cache);
        if (!grown)
            return -1;
        w->value_cache = grown;
        w->value_cache_size = cache;
    }
    BufferPlan plan[WORKSPACE_BUFFERS];
    int n = workspace_plan(w, c, plan);
    bool same = w->T > 0;
    for (int i = 0; i < n && same; i++)
        same = plan[i].n == w->planned[i];
    if (same)
        return 0;
    workspace_release_buffers(w);
    for (int i = 0; i < n; i++) {
        *plan[i].buf = malloc(sizeof(double) * (plan[i].n ? plan[i].n : 1));
        if (!*plan[i].buf) {
            workspace_release_buffers(w);
            return -1;
        }
    }
    for (int i = 0; i < n; i++)
        w->planned[i] = plan[i].n;
    w->T = c->tokens;
    w->d = c->width;
    return 0;
}

size_t Model_memory_estimate(const Config *c)
{
    Workspace sizes = {0};
    BufferPlan plan[WORKSPACE_BUFFERS];
    int n = workspace_plan(&sizes, c, plan);
    size_t doubles = value_cache_doubles(c), T = (size_t)c->tokens;
    for (int i = 0; i < n; i++)
        doubles += plan[i].n;
    /* LAPACK's kept workspaces: dgesdd with vectors (outliers mode) needs about 4T² + 4T,
       dgeev and dsyevd some tens of T per lane. */
    doubles += (c->gap == GAP_OUTLIERS ? 4 * T * T : 0) + 128 * T;
    /* And for the factorised schemes' d×d SVDs with vectors, 4d² + 7d. */
    size_t d = (size_t)c->width;
    doubles += Init_scratch_doubles(c) ? 4 * d * d + 7 * d : 0;
    /* The result: per-layer curves of every seed, the spectra. */
    doubles += (size_t)(c->depth + 1) * 8 * (size_t)(c->seeds + 2) + 4 * T;
    return doubles * sizeof(double);
}

/* ---- one network ---------------------------------------------------------------------- */

/* The residual's gains, X ← keep·X + branch·F(X) (docs/model.md §1.5, §1.8): the skip's
   a (none: 0) and the branch's b, over √d for the scaled skip. */
static double skip_gain(const Config *c)
{
    return c->skip == SKIP_NONE ? 0.0 : c->skip_gain;
}

static double branch_gain(const Config *c)
{
    return c->skip == SKIP_SCALED ? c->branch_gain / sqrt((double)c->width) : c->branch_gain;
}

/* The frozen-attention gradient is the product formula of docs/model.md §2, which describes the
   network of one head without skips, LayerNorm or output projection. */
static bool gradients_apply(const Config *c)
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
    return NULL;
}

/* Replaces `*product` (exp(*log_scale) times the true value) by left·product (left is
   rows×rows, transposed if asked) or product·right (right is cols×cols), renormalised to
   unit Frobenius norm with the scale carried in *log_scale.  *log10_norm2 is log10 of the
   squared true norm before the step (−inf for an exact 0, which then stays 0).  Returns 0, or
   LANE_STOPPED with *product and *log_scale as they were. */
static int scaled_step(Linalg *la, int rows, int cols, double **product, double **spare,
                       const double *left, const double *right, bool transpose_left,
                       double *log_scale, double *log10_norm2)
{
    double norm = cblas_dnrm2(rows * cols, *product, 1);
    *log10_norm2 = -INFINITY;
    if (!(norm > 0))
        return 0;
    int status = left ? Linalg_gemm(la, transpose_left, false, rows, cols, rows, 1.0 / norm, left,
                                    rows, *product, rows, 0.0, *spare, rows)
                      : Linalg_gemm(la, false, false, rows, cols, cols, 1.0 / norm, *product, rows,
                                    right, cols, 0.0, *spare, rows);
    if (status)
        return status;
    *log10_norm2 = 2.0 * (log10(norm) + *log_scale / M_LN10);
    double *t = *product;
    *product = *spare;
    *spare = t;
    *log_scale += log(norm);
    return 0;
}

static void record(LayerState *state, const Measures *m, double log_similarity0)
{
    state->stable_rank = m->stable_rank;
    state->stable_rank_minus_one = m->stable_rank_minus_one;
    state->log10_norm = m->log10_norm;
    double ratio = exp(m->log_similarity - log_similarity0);
    state->token_similarity = isfinite(ratio) ? ratio : NAN;
    state->route = m->route;
}

/* The first seed's W^V of a layer, kept for its gradients while the cache fits: a later run
   for the same weights reads it instead of drawing it again. */
static int draw_value_weights(Workspace *w, const Config *c, uint64_t seed, int layer,
                              const double **out)
{
    size_t dd = (size_t)c->width * c->width;
    bool cached = value_cache_doubles(c) > 0;
    double *wv = cached ? w->value_cache + (size_t)(layer - 1) * dd : w->wv;
    *out = wv;
    if (cached && w->value_cached[layer] && w->value_seed == seed)
        return 0;
    int info = Init_draw_with_scratch(w->random, w->lane[NETWORK_MAIN].la, c, seed, layer,
                                      MATRIX_VALUE, wv, w->init_scratch);
    if (cached && !info) {
        if (w->value_seed != seed)
            memset(w->value_cached, 0, sizeof w->value_cached);
        w->value_seed = seed;
        w->value_cached[layer] = true;
    }
    return info;
}

/* W^O of docs/model.md §1.7: entries N(0, 1/d), which keep a token's expected norm, or the
   Haar-orthogonal Q of their QR factorisation (signs by diag(R)), which keeps every norm.
   Returns LAPACK's status. */
static int draw_output_projection(Workspace *w, const Config *c, uint64_t seed, int layer)
{
    return Init_draw_with_scratch(w->random, w->lane[NETWORK_MAIN].la, c, seed, layer,
                                  MATRIX_OUTPUT, w->wo, w->init_scratch);
}

/* Weights of one layer, shared by both networks (W^O apart); returns W^V. */
static int draw_layer_weights(Workspace *w, const Config *c, uint64_t seed, int layer,
                              bool first_seed, const double **wv)
{
    size_t tt = (size_t)c->tokens * c->tokens;
    Linalg *la = w->lane[NETWORK_MAIN].la;
    int info = 0;
    if (Attention_has_query_key(c->attention))
        info = Init_draw_query_key(w->random, la, c, seed, layer, w->wq, w->wk, w->init_scratch);
    if (c->attention == ATTENTION_MARKOV)
        RandomStream_gaussian(w->random, seed, layer, ROLE_MARKOV, c->sigma_qk * c->sigma_qk,
                              w->markov_gauss, tt * (size_t)c->heads);
    if (info)
        return info;
    if (first_seed)
        return draw_value_weights(w, c, seed, layer, wv);
    *wv = w->wv;
    return Init_draw_with_scratch(w->random, la, c, seed, layer, MATRIX_VALUE, w->wv,
                                  w->init_scratch);
}

/* The logits of head h (from 0), row-major: S = X W^Q_h (X W^K_h)ᵀ·scale, i.e.
   Sᵀ = K Qᵀ·scale in column-major, scale 1/√d_h or 1/d_h; W^Q_h is the h-th block of d_h
   columns of W^Q.  For markov the "logits" are σ_qk²·g, whose row-softmax is Z normalised.
   *logits is NULL for kinds without logits.  Returns 0 or LANE_STOPPED. */
static int layer_logits(Workspace *w, Lane *lane, const Config *c, int h, const double *source,
                        const double **logits)
{
    int T = c->tokens, d = c->width, dh = Config_head_width(c);
    *logits = NULL;
    if (c->attention == ATTENTION_MARKOV) {
        *logits = w->markov_gauss + (size_t)h * T * T;
        return 0;
    }
    if (!Attention_has_query_key(c->attention))
        return 0;
    double scale = Init_logit_scale(c);
    /* Several heads: every head's queries and keys were projected at once (project_heads),
       head h's are their h-th block of columns.  One head: y and xw are free until the values
       are applied. */
    double *q = lane->y, *k = lane->xw;
    int status = 0;
    if (c->heads > 1) {
        q = lane->y + (size_t)T * dh * h;
        k = lane->keys + (size_t)T * dh * h;
    } else {
        status = Linalg_gemm(lane->la, false, false, T, d, d, 1.0, source, T, w->wq, d, 0.0, q, T);
        if (!status)
            status =
                Linalg_gemm(lane->la, false, false, T, d, d, 1.0, source, T, w->wk, d, 0.0, k, T);
    }
    if (!status)
        status =
            Linalg_gemm(lane->la, false, true, T, T, dh, scale, k, T, q, T, 0.0, lane->logits, T);
    if (!status)
        *logits = lane->logits;
    return status;
}

static bool all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

/* ---- what is kept between runs --------------------------------------------------------- */

/* The settings that decide the weights and the forward pass (the settings table's
   REUSE_WEIGHTS class): the gap mode, the seed (a track's own), the depth, the shown matrix
   and the seed count leave the kept tracks valid. */
static bool same_weights(const Config *a, const Config *b)
{
    return Config_same_in(a, b, REUSE_WEIGHTS);
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
    free(t->state);
    free(t->gradient_norm);
    free(t->log10_gradient_norm);
    free(t);
}

static void kept_spectra_free(KeptSpectra *s)
{
    free(s->eigenvalues);
    free(s->singular_values);
    memset(s, 0, sizeof *s);
}

static void kept_clear(Kept *k)
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
static Track *kept_track_find(const Kept *k, uint64_t seed, Gap gap, bool first)
{
    for (int i = 0; i < k->track_count; i++)
        if (k->tracks[i]->seed == seed && k->tracks[i]->gap == gap && k->tracks[i]->first == first)
            return k->tracks[i];
    return NULL;
}

/* The highest layer at or below `layer` whose token matrices (and frozen products, when the
   gradients need them) track t keeps, or 0 (X0 is drawn again; t NULL: nothing kept): where
   lane_load starts, and where Model_plan says it will. */
static int track_nearest_kept(const Track *t, bool frozen, int layer)
{
    int from = layer;
    while (from > 0 &&
           (!t || from > t->layers || !t->state[from].x || (frozen && !t->state[from].frozen)))
        from--;
    return from;
}

/* The track of (seed, gap), created empty when missing; NULL when out of memory. */
static Track *kept_track(Kept *k, uint64_t seed, Gap gap, bool first)
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
static int track_reserve(Track *t, int depth)
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
static const KeptSpectra *kept_spectra_find(const Kept *k, uint64_t seed, const Config *c)
{
    Config wanted = *c;
    wanted.seed = seed;
    for (int i = 0; i < k->spectra_count; i++)
        if (Config_same_in(&k->spectra[i].key, &wanted, REUSE_SEED | REUSE_GAP | REUSE_SHOWN))
            return &k->spectra[i];
    return NULL;
}

/* A fresh entry for c's (gap, layer, head), replacing the oldest when all are taken. */
static KeptSpectra *kept_spectra_new(Kept *k, uint64_t seed, const Config *c)
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
    if (!s->eigenvalues || !s->singular_values) {
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
static void kept_trim(Kept *k, size_t budget, Track *const own[NETWORKS])
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

/* ---- one run -------------------------------------------------------------------------- */

/* What both lanes read during a run, and each lane's network. */
typedef struct {
    const Config *config;
    Workspace *w;
    Kept *kept;
    size_t budget; /* for the kept token matrices: 0 when the run keeps nothing */
    Result *out;
    const Progress *progress;
    uint64_t seed;
    bool first_seed;
    int layer;                   /* the layer being computed */
    bool attention_ready;        /* layer 1: both lanes start from X0 and share A */
    const double *shared_logits; /* their logits */
    const double *wv;            /* the layer's value weights */
    bool active[NETWORKS];       /* the lanes that compute this layer */
    bool measure;                /* false: only the token matrices are wanted (a replay) */
    Track *track[NETWORKS];      /* lane n computes track[n] */
    int held[NETWORKS];          /* the layer whose token matrices lane n holds, or -1 */
    Network nets[NETWORKS];      /* lane n's network state at held[n] */
    /* The shown layer's attention, captured while its layer is computed (shown_lane >= 0). */
    int shown_lane;
    bool shown_captured; /* the shown layer had a finite attention matrix to capture */
    double shown_logit_std;
    GapOutcome shown_outcome;
    int info[NETWORKS]; /* LAPACK status of each lane */
} Run;

static bool stop_requested(const Run *run)
{
    const Progress *p = run->progress;
    return p && p->stop_requested && p->stop_requested(p->context);
}

/* A kept warning about one network names it by its role in the run that shows it (the
   network of one run is the counterpart of the next after `g`): it starts with this byte,
   which the assembly replaces by ROLE_NAMES[role]. */
#define ROLE_MARK "\x01"
static const char *const ROLE_NAMES[NETWORKS] = {"the", "the counterpart"};
/* Starts a warning that is about one layer's attention (a gap mode's fallback): the
   assembly names the first layer it happened at, and says it once. */
#define LAYER_MARK "\x02"

/* Several heads: every head's queries (into y), keys and values (into xw) in one product
   each, as wide products run nearer the BLAS's peak than H narrow ones.  Returns 0 or
   LANE_STOPPED. */
static int project_heads(const Config *c, Workspace *w, Lane *lane, const double *source,
                         const double *wv)
{
    int T = c->tokens, d = c->width, info = 0;
    if (Attention_has_query_key(c->attention)) {
        info =
            Linalg_gemm(lane->la, false, false, T, d, d, 1.0, source, T, w->wq, d, 0.0, lane->y, T);
        if (!info)
            info = Linalg_gemm(lane->la, false, false, T, d, d, 1.0, source, T, w->wk, d, 0.0,
                               lane->keys, T);
    }
    if (!info && wv)
        info =
            Linalg_gemm(lane->la, false, false, T, d, d, 1.0, source, T, wv, d, 0.0, lane->xw, T);
    return info;
}

/* What the branch F reads: X, or LN(X) in the lane's `normed` with pre-LayerNorm. */
static const double *branch_input(const Config *c, Lane *lane)
{
    if (!pre_layernorm(c))
        return lane->x;
    size_t td = (size_t)c->tokens * c->width;
    memcpy(lane->normed, lane->x, sizeof(double) * td);
    Block_layernorm(c, c->tokens, c->width, lane->normed, lane->column, lane->gram_eig);
    return lane->normed;
}

/* Head h (from 0) of one layer: its attention from the lane's X (the shown head's captured),
   gap removal, and its output A_h·X·W^V_h, written into X itself when the heads are fused
   (X ← keep·X + branch·A X W^V) and into its block of columns of `mixed` otherwise. */
static int network_head(Run *run, int which, int h, const double *source)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    Lane *lane = &w->lane[which];
    Network *net = &run->nets[which];
    int T = c->tokens, d = c->width, dh = Config_head_width(c), layer = run->layer;
    size_t tt = (size_t)T * T;
    bool shown = run->shown_lane == which && h == c->head - 1;
    bool gradients = run->first_seed && gradients_apply(c);

    const double *logits = run->shared_logits;
    if (!run->attention_ready) {
        int status = layer_logits(w, lane, c, h, source, &logits);
        if (status)
            return status;
        Attention_build(c->attention, c->mask, c->window, T, logits, lane->attn);
    }
    if (stop_requested(run))
        return LANE_STOPPED;
    /* Linear attention squares the tokens' scale: its matrix overflows a layer or more before
       the tokens do, and no spectrum of a matrix with infinities exists. */
    if (!all_finite(lane->attn, tt)) {
        net->dead = true;
        Warnings_add(&lane->warnings,
                     ROLE_MARK " network's attention matrix overflows the double range at layer "
                               "%d (no LayerNorm: the tokens grow layer by layer); its values "
                               "from there on are null",
                     layer);
        return 0;
    }
    if (shown) {
        memcpy(w->shown_before_gap, lane->attn, sizeof(double) * tt);
        run->shown_logit_std = logits ? Attention_logit_std(c->mask, c->window, T, logits) : NAN;
    }
    GapOutcome outcome;
    Warnings gap_warnings = {.count = 0};
    int info = Gap_apply(run->track[which]->gap, c->attention, c->mask, c->window, T, lane->attn,
                         lane->la, lane->gap_scratch, &outcome, &gap_warnings);
    if (info)
        return info;
    for (int i = 0; i < gap_warnings.count; i++)
        Warnings_add_about(&lane->warnings, gap_warnings.subject[i], LAYER_MARK "%s",
                           gap_warnings.text[i]);
    if (shown) {
        memcpy(w->shown_applied, lane->attn, sizeof(double) * tt);
        run->shown_outcome = outcome;
        run->shown_captured = true;
    }
    if (gradients) { /* frozen ← A_ℓ·frozen (the buffer is Aᵀ) */
        double unused;
        info = scaled_step(lane->la, T, d, &lane->frozen, &lane->y, lane->attn, NULL, true,
                           &net->log_frozen, &unused);
        if (info)
            return info;
    }
    /* A_h X W^V_h; the attention buffer is Aᵀ to BLAS, hence the transposed flag.  Several
       heads: X W^V is in xw already (project_heads). */
    size_t block = (size_t)T * dh * h;
    if (c->heads == 1)
        info = Linalg_gemm(lane->la, false, false, T, d, d, 1.0, source, T, run->wv, d, 0.0,
                           lane->xw, T);
    if (info)
        return info;
    if (fused_heads(c))
        return Linalg_gemm(lane->la, true, false, T, d, T, branch_gain(c), lane->attn, T, lane->xw,
                           T, skip_gain(c), lane->x, T);
    return Linalg_gemm(lane->la, true, false, T, dh, T, 1.0, lane->attn, T, lane->xw + block, T,
                       0.0, lane->mixed + block, T);
}

/* X ← keep·X + branch·[head_1 … head_H]·W^O, once every head has read X.  Returns 0 or
   LANE_STOPPED. */
static int combine_heads(const Config *c, Workspace *w, Lane *lane)
{
    int T = c->tokens, d = c->width;
    double keep = skip_gain(c), branch = branch_gain(c);
    if (c->output != OUTPUT_IDENTITY)
        return Linalg_gemm(lane->la, false, false, T, d, d, branch, lane->mixed, T, w->wo, d, keep,
                           lane->x, T);
    size_t td = (size_t)T * d;
    for (size_t i = 0; i < td; i++)
        lane->x[i] = keep * lane->x[i] + branch * lane->mixed[i];
    return 0;
}

/* The MLP sub-block with its own skip and LayerNorm, placed as the attention's:
   X ← a·X + b·φ(X' W1) W2 with X' = X (post, then LN) or LN(X) (pre).  Returns 0 or
   LANE_STOPPED. */
static int mlp_sublayer(const Config *c, Workspace *w, Lane *lane)
{
    int T = c->tokens, d = c->width, hidden = c->mlp_ratio * c->width;
    const double *source = branch_input(c, lane);
    int info = Linalg_gemm(lane->la, false, true, T, hidden, d, 1.0, source, T, w->mlp_in, hidden,
                           0.0, lane->hidden, T);
    if (info)
        return info;
    Block_activate(c->mlp, lane->hidden, (size_t)T * hidden);
    info = Linalg_gemm(lane->la, false, false, T, d, hidden, branch_gain(c), lane->hidden, T,
                       w->mlp_out, hidden, skip_gain(c), lane->x, T);
    if (info)
        return info;
    if (!pre_layernorm(c))
        Block_layernorm(c, T, d, lane->x, lane->column, lane->gram_eig);
    return 0;
}

/* One layer of one network: each head's attention from its own X, gap removal, values, the
   output projection, skip, LN. */
static int network_layer(Run *run, int which)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    Lane *lane = &w->lane[which];
    Network *net = &run->nets[which];
    int T = c->tokens, d = c->width, layer = run->layer;
    size_t td = (size_t)T * d;

    const double *source = branch_input(c, lane);
    int info = 0;
    if (c->heads > 1)
        info = project_heads(c, w, lane, source, run->wv);
    for (int h = 0; h < c->heads && !info && !net->dead; h++)
        info = network_head(run, which, h, source);
    if (info)
        return info;
    if (net->dead) /* a head's attention overflowed: the layer has no finite output */
        return 0;
    if (!fused_heads(c))
        info = combine_heads(c, w, lane);
    if (info)
        return info;
    if (!pre_layernorm(c)) /* the Gram eigenvalues' buffer is free until the measures */
        Block_layernorm(c, T, d, lane->x, lane->column, lane->gram_eig);
    if (c->mlp != MLP_NONE)
        info = mlp_sublayer(c, w, lane);
    if (info)
        return info;
    if (stop_requested(run))
        return LANE_STOPPED;

    if (!all_finite(lane->x, td)) {
        net->dead = true;
        Warnings_add(&lane->warnings,
                     ROLE_MARK " network overflows the double range at layer %d (no LayerNorm: "
                               "the tokens grow layer by layer); its values from there on are "
                               "null",
                     layer);
        return 0;
    }
    double norm = cblas_dnrm2((int)td, lane->x, 1);
    if (Attention_is_input_independent(c->attention) && norm > 0 &&
        c->layernorm == LAYERNORM_NONE && (c->mlp == MLP_NONE || c->mlp == MLP_RELU)) {
        /* A does not depend on X and every step is homogeneous of degree 1 in X: carry the
           scale apart so that deep networks never overflow. */
        cblas_dscal((int)td, 1.0 / norm, lane->x, 1);
        net->log_scale += log(norm);
    }
    if (!run->measure)
        return 0;

    Measures m;
    /* The logits are spent once the attention is built: their buffer takes the Gram matrix. */
    info = Measure_tokens(lane->la, T, d, lane->x, net->log_scale, lane->xw, lane->logits,
                          lane->gram_eig, w->measure_all_eigenvalues ? NULL : lane->lanczos, &m);
    if (info)
        return info;
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
            "are equal to within round-off (%.0e of ||X||), so it is not shown there",
            layer, MEASURE_SIMILARITY_RESOLUTION);
    }
    record(&run->track[which]->state[layer], &m, net->log_similarity0);
    return 0;
}

static void layer_task(int which, void *context)
{
    Run *run = context;
    run->info[which] = 0;
    if (run->active[which] && !run->nets[which].dead)
        run->info[which] = network_layer(run, which);
}

/* task for both lanes: on the caller's two threads when it offers them, else in turn. */
static void both_lanes(const Progress *progress, void (*task)(int which, void *context),
                       void *context)
{
    if (progress && progress->run_pair) {
        progress->run_pair(progress->pair_context, task, context);
    } else {
        task(NETWORK_MAIN, context);
        task(NETWORK_COUNTERPART, context);
    }
}

/* Orthonormal input X0 = Qᵀ into lane `which`, Q from the QR factorisation of G ∈ R^{d×T},
   signs by diag(R). */
static int input_tokens(Workspace *w, const Config *c, uint64_t seed, int which)
{
    int T = c->tokens, d = c->width;
    size_t td = (size_t)T * d;
    Lane *lane = &w->lane[which];
    double *g = lane->y; /* d×T fits in a T×d buffer */
    RandomStream_gaussian(w->random, seed, 0, ROLE_INPUT, 1.0, g, td);
    int info = Linalg_orthonormalise(lane->la, d, T, g);
    if (info)
        return info;
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            lane->x[i + (size_t)j * T] = g[j + (size_t)i * d];
    if (c->input_norm == INPUT_NORM_SQRT_D) /* rows of norm √d, as after embedding + LN */
        cblas_dscal((int)td, sqrt((double)d), lane->x, 1);
    memcpy(lane->frozen, lane->x, sizeof(double) * td);
    return 0;
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
    memcpy(s->x, w->lane[which].x, sizeof(double) * td);
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

/* Lane `which` holds its track's token matrices at `layer`: from the kept ones at or below
   it, then layer by layer (without measuring: the numbers are kept) up to it. */
static int lane_load(Run *run, int which, int layer)
{
    if (run->held[which] == layer)
        return 0;
    Workspace *w = run->w;
    Track *t = run->track[which];
    size_t td = (size_t)run->config->tokens * run->config->width;
    bool frozen = run->first_seed && gradients_apply(run->config);
    int from = track_nearest_kept(t, frozen, layer);
    Lane *lane = &w->lane[which];
    if (run->held[which] > from && run->held[which] < layer) {
        from = run->held[which]; /* the lane is nearer than anything kept: go on from it */
    } else if (from == 0) {
        int info = input_tokens(w, run->config, run->seed, which);
        if (info)
            return info;
    } else {
        memcpy(lane->x, t->state[from].x, sizeof(double) * td);
        if (t->state[from].frozen)
            memcpy(lane->frozen, t->state[from].frozen, sizeof(double) * td);
    }
    run->held[which] = from;
    run->nets[which] = t->state[from].net;
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

/* Draws the weights of run->layer and computes it on the active lanes. */
static int run_layer(Run *run)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    int layer = run->layer;
    int info = draw_layer_weights(w, c, run->seed, layer, run->first_seed, &run->wv);
    if (!info && c->output != OUTPUT_IDENTITY)
        info = draw_output_projection(w, c, run->seed, layer);
    if (!info && c->mlp != MLP_NONE)
        info = Init_draw(w->random, w->lane[NETWORK_MAIN].la, c, run->seed, layer, MATRIX_MLP_IN,
                         w->mlp_in);
    if (!info && c->mlp != MLP_NONE)
        info = Init_draw(w->random, w->lane[NETWORK_MAIN].la, c, run->seed, layer, MATRIX_MLP_OUT,
                         w->mlp_out);
    if (info)
        return info;
    /* Both networks read X0 in layer 1: one attention matrix serves them both (one head: a
       matrix per head would be as many T×T buffers). */
    run->attention_ready = layer == 1 && run->active[0] && run->active[1] && c->heads == 1;
    run->shared_logits = NULL;
    if (run->attention_ready) {
        Lane *main_lane = &w->lane[NETWORK_MAIN];
        int status =
            layer_logits(w, main_lane, c, 0, branch_input(c, main_lane), &run->shared_logits);
        if (status)
            return status;
        Attention_build(c->attention, c->mask, c->window, c->tokens, run->shared_logits,
                        main_lane->attn);
        memcpy(w->lane[NETWORK_COUNTERPART].attn, main_lane->attn,
               sizeof(double) * c->tokens * c->tokens);
    }
    if (run->active[0] && run->active[1]) {
        both_lanes(run->progress, layer_task, run);
    } else {
        for (int n = 0; n < NETWORKS; n++)
            if (run->active[n])
                layer_task(n, run);
    }
    return run->info[0] ? run->info[0] : run->info[1];
}

/* The shown layer's eigenvalues (dgeev, the larger part) and singular values (dgesdd) are
   independent once their inputs are apart: each runs in a lane of its own, with that lane's
   workspace, at once when the caller offers two threads. */
typedef struct {
    Workspace *w;
    int T;
    bool brauer;
    Result *into;
    int info[NETWORKS];
} ShownSpectra;

static void shown_spectra_task(int which, void *context)
{
    ShownSpectra *job = context;
    Workspace *w = job->w;
    Lane *lane = &w->lane[which];
    job->info[which] =
        which == NETWORK_MAIN
            ? Spectra_shown_eigenvalues(job->T, job->brauer, w->shown_before_gap, lane->la,
                                        lane->logits, job->into)
            : Spectra_shown_singular_values(job->T, w->shown_applied, lane->la, job->into);
}

/* The spectra of the captured shown matrices (workspace's shown_before_gap and
   shown_applied), kept as the entry (gap, layer, head) of the run's settings. */
static int keep_shown_spectra(Run *run)
{
    const Config *c = run->config;
    KeptSpectra *s = kept_spectra_new(run->kept, run->seed, c);
    if (!s)
        return -1;
    s->applied = run->shown_outcome.applied;
    s->outliers_removed = run->shown_outcome.outliers_removed;
    s->logit_std = run->shown_logit_std;
    /* The spectra functions fill a Result's fields: one that points into the entry. */
    Result into = {.eigenvalues = s->eigenvalues, .singular_values = s->singular_values};
    ShownSpectra job = {.w = run->w, .T = c->tokens, .into = &into};
    job.brauer = Spectra_prepare_shown_layer(c, s->applied, run->w->shown_before_gap,
                                             run->w->shown_applied, &into);
    both_lanes(run->progress, shown_spectra_task, &job);
    int info = job.info[NETWORK_MAIN] ? job.info[NETWORK_MAIN] : job.info[NETWORK_COUNTERPART];
    if (info) {
        kept_spectra_free(s);
        run->kept->spectra_count--;
        return info;
    }
    s->exact = into.eigenvalues_exact;
    s->warnings = into.warnings;
    return 0;
}

/* The attention matrix of `layer` on lane `which` again, from the layer below, captured as
   the shown one: for a shown layer whose network is kept but whose spectra are not.  Sets
   run->shown_captured to whether that matrix exists (finite, from a live network). */
static int capture_shown_attention(Run *run, int which, int layer)
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
    const double *wv;
    info = draw_layer_weights(w, c, run->seed, layer, run->first_seed, &wv);
    if (info)
        return info;
    const double *source = branch_input(c, lane);
    if (c->heads > 1)
        info = project_heads(c, w, lane, source, NULL);
    const double *logits = NULL;
    if (!info)
        info = layer_logits(w, lane, c, c->head - 1, source, &logits);
    if (info)
        return info;
    Attention_build(c->attention, c->mask, c->window, c->tokens, logits, lane->attn);
    size_t tt = (size_t)c->tokens * c->tokens;
    if (!all_finite(lane->attn, tt))
        return 0;
    run->shown_captured = true;
    memcpy(w->shown_before_gap, lane->attn, sizeof(double) * tt);
    run->shown_logit_std =
        logits ? Attention_logit_std(c->mask, c->window, c->tokens, logits) : NAN;
    info = Gap_apply(run->track[which]->gap, c->attention, c->mask, c->window, c->tokens,
                     lane->attn, lane->la, lane->gap_scratch, &run->shown_outcome, &lane->warnings);
    lane->warnings.count = 0; /* raised when the layer was first computed, and kept */
    memcpy(w->shown_applied, lane->attn, sizeof(double) * tt);
    /* The lane's token matrices are still those of layer − 1: the attention did not touch
       them. */
    return info;
}

static void gradient_task(int which, void *context)
{
    Run *run = context;
    Track *t = run->track[which];
    int l = run->layer;
    run->info[which] = 0;
    if (run->nets[which].dead) {
        /* X_L is exactly 0, so is its derivative; the array is reused between runs, so the
           value is written, never left as found. */
        t->log10_gradient_norm[l] = NAN;
        t->gradient_norm[l] = 0;
        return;
    }
    Lane *lane = &run->w->lane[which];
    double log10_p1;
    run->info[which] =
        scaled_step(lane->la, run->config->tokens, run->config->width, &lane->frozen, &lane->y,
                    NULL, run->wv, false, &run->nets[which].log_frozen, &log10_p1);
    if (run->info[which])
        return;
    t->log10_gradient_norm[l] += log10_p1;
    double value = pow(10.0, t->log10_gradient_norm[l]);
    t->gradient_norm[l] = isfinite(value) ? value : NAN;
}

/* ‖∂X_L/∂W^V_ℓ‖_F² with attention frozen = ‖P1‖_F²·‖P2‖_F², P1 = A_L⋯A_1 X0 W_1⋯W_{ℓ−1},
   P2 = W_{ℓ+1}⋯W_L (docs/model.md §2), in log10 for ℓ = 1..L, for both tracks of the first seed.
   The lanes hold the frozen products of layer L.  The value weights come from the cache,
   or are drawn again from their streams where L·d² doubles would not fit.  Returns 0 or
   LANE_STOPPED (the tracks then have no gradients) or LAPACK's status (an orthogonal W^V is
   drawn through a QR factorisation). */
static int frozen_attention_gradients(Run *run)
{
    Workspace *w = run->w;
    const Config *c = run->config;
    int d = c->width, L = c->depth;
    size_t dd = (size_t)d * d;
    double log_p2 = 0, *log10_p2 = run->track[NETWORK_COUNTERPART]->log10_gradient_norm;
    /* The arrays are rewritten from here on: until they are complete they hold no depth's
       gradients. */
    for (int n = 0; n < NETWORKS; n++)
        run->track[n]->gradient_depth = 0;
    /* P2 = I, then W_ℓ·P2 from the top down; the logit weights' buffers are free now. */
    memset(w->wq, 0, sizeof(double) * dd);
    for (int i = 0; i < d; i++)
        w->wq[i + (size_t)i * d] = 1.0;
    for (int l = L; l >= 1; l--) {
        const double *wv;
        int status = draw_value_weights(w, c, run->seed, l, &wv);
        if (status)
            return status;
        status = scaled_step(w->lane[NETWORK_MAIN].la, d, d, &w->wq, &w->wk, wv, NULL, false,
                             &log_p2, &log10_p2[l]);
        if (status)
            return status;
    }
    log10_p2[0] = NAN;
    memcpy(run->track[NETWORK_MAIN]->log10_gradient_norm, log10_p2, sizeof(double) * (L + 1));
    for (int n = 0; n < NETWORKS; n++)
        run->track[n]->gradient_norm[0] = NAN;
    run->active[0] = run->active[1] = true;
    for (int l = 1; l <= L; l++) {
        run->layer = l;
        int info = draw_value_weights(w, c, run->seed, l, &run->wv);
        if (info)
            return info;
        both_lanes(run->progress, gradient_task, run);
        int status = run->info[0] ? run->info[0] : run->info[1];
        if (status)
            return status;
    }
    for (int n = 0; n < NETWORKS; n++)
        run->track[n]->gradient_depth = L;
    return 0;
}

/* ---- the result, assembled from what is kept ------------------------------------------ */

static void add_track_warning(Warnings *w, const char *text, unsigned subject, const char *role,
                              int layer)
{
    if (strncmp(text, LAYER_MARK, 1) == 0) {
        /* Layers come in order: the first that warned is named, the later ones are not. */
        size_t length = strlen(text + 1);
        for (int i = 0; i < w->count; i++)
            if (strncmp(w->text[i], text + 1, length) == 0)
                return;
        Warnings_add_about(w, subject, "%s (from layer %d)", text + 1, layer);
        return;
    }
    const char *mark = strstr(text, ROLE_MARK);
    if (mark)
        Warnings_add_about(w, subject, "%.*s%s%s", (int)(mark - text), text, role, mark + 1);
    else
        Warnings_add_about(w, subject, "%s", text);
}

static void fill_curves(Curves *dest, const Track *t, int depth)
{
    for (int l = 0; l <= depth && l <= t->layers; l++) {
        const LayerState *s = &t->state[l];
        dest->stable_rank[l] = s->stable_rank;
        dest->stable_rank_minus_one[l] = s->stable_rank_minus_one;
        dest->log10_norm[l] = s->log10_norm;
        dest->token_similarity[l] = s->token_similarity;
    }
    if (t->gradient_depth == depth) {
        memcpy(dest->gradient_norm, t->gradient_norm, sizeof(double) * (depth + 1));
        memcpy(dest->log10_gradient_norm, t->log10_gradient_norm, sizeof(double) * (depth + 1));
    }
}

/* Mean, sample std and M2 of one per-layer value over the seeds; NaN if any seed lacks it. */
static void fill_band(Band *band, Track *(*tracks)[NETWORKS], int seeds, int depth, int network)
{
    for (int l = 0; l <= depth; l++) {
        double mean = 0, ss = 0;
        for (int s = 0; s < seeds; s++)
            mean += tracks[s][network]->state[l].stable_rank;
        mean /= seeds;
        for (int s = 0; s < seeds; s++) {
            double dv = tracks[s][network]->state[l].stable_rank - mean;
            ss += dv * dv;
        }
        band->mean[l] = mean;
        band->std[l] = seeds > 1 ? sqrt(ss / (seeds - 1)) : NAN;
        band->m2[l] = ss;
    }
}

static double modulus(Complex z)
{
    return hypot(z.re, z.im);
}

/* The readouts of docs/model.md §2 for the shown matrix and layer (NaN where undefined), and
   which eigenvalue stands apart. */
static void fill_readouts(Result *r)
{
    Readouts *o = &r->readouts;
    int T = r->config.tokens, layer = r->config.layer;
    *o = (Readouts){NAN, NAN, NAN, NAN};
    r->outlier = -1;
    if (layer <= r->layers_done)
        o->stable_rank_shown_layer = r->network.stable_rank[layer];
    if (!r->spectra_ready)
        return;
    r->outlier = Spectra_outlier(T, r->eigenvalues);
    /* The spectral gap and the count against 0.5 measure against λ1 = 1 and |λ| ≤ 1: they
       mean nothing for a matrix that is not row-stochastic (relu, linear, a removed gap). */
    bool stochastic = Attention_is_row_stochastic(r->config.attention) && r->shown_gap == GAP_OFF;
    if (stochastic) {
        int above = 0;
        for (int i = 0; i < T; i++)
            above += modulus(r->eigenvalues[i]) > 0.5;
        o->count_abs_lambda_above_half = above;
        double gap = 1.0 - modulus(r->eigenvalues[1]);
        o->one_minus_abs_lambda2 = fabs(gap) < READOUT_ROUNDOFF ? 0.0 : gap;
    }
    /* s2 at round-off (uniform attention: A⊥ = 0) makes the ratio noise: undefined. */
    if (r->singular_values[1] > 1e-12 * r->singular_values[0])
        o->s1_over_s2 = r->singular_values[0] / r->singular_values[1];
}

/* What the block's settings take outside the theory (docs/model.md §1.7-§1.10, the table
   of §3): each overlay or prediction they void is not drawn, and a warning about it says
   why.  Settings that leave a prediction true (Gaussian schemes, the input norm, the logit
   scale, gains with a skip) say nothing. */
static void block_warnings(const Config *c, Warnings *w)
{
    /* σ² = exp(v) − 1 for the logits' variance v: beyond v ≈ 709 it is not a double (NaN
       where σ names nothing: W^Q W^Kᵀ drawn as αZ + βI). */
    if (isinf(Config_sigma(c)))
        Warnings_add_about(w, WARNING_ABOUT_SPECTRA_THEORY,
                           "sigma overflows the double range: the first layer's logits have "
                           "variance above 709 (sigma^2 = exp(variance) - 1), so sigma is null");
    int dh = Config_head_width(c);
    bool input_dependent = !Attention_is_input_independent(c->attention);
    if (c->heads > 1)
        Warnings_add_about(
            w, WARNING_ABOUT_SPECTRA_THEORY,
            "head %d of %d shown: its logits have rank <= d_h = %d, so its gamma is "
            "T/d_h = %g (T/d = %g): its bulk edge leaves the i.i.d. limit as T/d_h grows",
            c->head, c->heads, dh, (double)c->tokens / dh, (double)c->tokens / c->width);
    if (input_dependent && !Theory_first_layer_unit_rows(c))
        Warnings_add_about(w, WARNING_ABOUT_SPECTRA_THEORY,
                           "pre-LN: the first layer's attention reads LN(X0), rows of norm %s, "
                           "not the input's %s rows that sigma is computed for: no sigma, no "
                           "circle or quartercircle law",
                           c->ln_scale == LN_SCALE_SQRT_D ? "sqrt(d) (PyTorch)" : "1",
                           c->input_norm == INPUT_NORM_SQRT_D ? "sqrt(d)" : "unit");
    else if (c->layernorm != LAYERNORM_NONE && c->ln_scale == LN_SCALE_SQRT_D)
        Warnings_add_about(
            w, WARNING_ABOUT_SPECTRA_THEORY | WARNING_ABOUT_STABLE_RANK_THEORY,
            "LayerNorm rows of norm sqrt(d) (PyTorch): the logits after it are d = %d "
            "times those of unit rows (std sigma_qk^2*d); sigma and the overlays assume "
            "unit rows, as the first layer has",
            c->width);
    if (c->init == INIT_ORTHOGONAL) {
        Warnings_add_about(w, WARNING_ABOUT_STABLE_RANK_THEORY,
                           "orthogonal W^V keep the tokens' Gram matrix (X W W^T X^T = X X^T), "
                           "so the values collapse nothing: the stable-rank theory, built on "
                           "Gaussian values, has no curve");
        if (input_dependent)
            Warnings_add_about(w, WARNING_ABOUT_SPECTRA_THEORY,
                               "orthogonal W^Q, W^K give logits of two orthonormal frames, not "
                               "i.i.d. (at T = d all singular values of A-perp are equal): no "
                               "quartercircle law; the circle is still the bulk's radius");
    }
    if (c->heads > 1 || c->output != OUTPUT_IDENTITY || c->mlp != MLP_NONE)
        Warnings_add_about(w, WARNING_ABOUT_STABLE_RANK_THEORY | WARNING_ABOUT_GRADIENTS,
                           "the stable-rank theory and the gradient formula describe one head "
                           "without an output projection or MLP: no theory curve, gradients "
                           "null");
    else if (c->branch_gain != 1.0 && c->skip == SKIP_NONE && c->layernorm == LAYERNORM_NONE)
        Warnings_add_about(w, WARNING_ABOUT_GRADIENTS,
                           "branch gain b = %g: the gradient formula of the frozen attention "
                           "takes b = 1 (X_L = P1 W^V P2): gradients null",
                           c->branch_gain);
}

/* Rewrites out from the kept tracks of the first `seeds` seeds: the first seed's curves,
   the bands over the leading seeds that are complete, the shown spectra, the readouts, the
   warnings (spectra first, then layer by layer, the network before its counterpart, seed
   by seed) and the measure routes.  The same order whatever was kept, so a result does not
   depend on what earlier runs left.  After each layer (while a screen follows the run) the
   warnings and routes are the first seed's alone: all seeds' would make every layer cost as
   much as the whole ensemble so far; the end of the run gathers them all (every_seed). */
static void assemble(Run *run, Track *(*tracks)[NETWORKS], int seeds, bool every_seed)
{
    const Config *c = run->config;
    Result *out = run->out;
    int depth = c->depth;
    fill_curves(&out->network, tracks[0][NETWORK_MAIN], depth);
    fill_curves(&out->counterpart, tracks[0][NETWORK_COUNTERPART], depth);
    int layers = tracks[0][NETWORK_MAIN]->layers;
    out->layers_done = layers < depth ? (layers < 0 ? 0 : layers) : depth;

    int complete = 0;
    while (complete < seeds && tracks[complete][0]->layers >= depth &&
           tracks[complete][1]->layers >= depth)
        complete++;
    if (complete > out->seeds_done) {
        fill_band(&out->stable_rank_band, tracks, complete, depth, NETWORK_MAIN);
        fill_band(&out->counterpart_band, tracks, complete, depth, NETWORK_COUNTERPART);
        out->seeds_done = complete;
    }

    out->warnings.count = 0;
    const KeptSpectra *spectra = kept_spectra_find(run->kept, c->seed, c);
    if (spectra) {
        out->spectra_ready = true;
        out->shown_gap = spectra->applied;
        out->outliers_removed = spectra->outliers_removed;
        out->eigenvalues_exact = spectra->exact;
        out->logit_std = spectra->logit_std;
        memcpy(out->eigenvalues, spectra->eigenvalues, sizeof(Complex) * c->tokens);
        memcpy(out->singular_values, spectra->singular_values, sizeof(double) * c->tokens);
        for (int i = 0; i < spectra->warnings.count; i++)
            Warnings_add_about(&out->warnings, spectra->warnings.subject[i], "%s",
                               spectra->warnings.text[i]);
    } else if (tracks[0][NETWORK_MAIN]->layers >= c->layer &&
               tracks[0][NETWORK_MAIN]->state[c->layer].net.dead) {
        out->spectra_ready = false;
        Warnings_add_about(
            &out->warnings, WARNING_ABOUT_SPECTRA,
            "layer %d has no spectra: the network overflowed or vanished at or before "
            "it, so there is no finite attention matrix to show",
            c->layer);
    }
    fill_readouts(out);
    block_warnings(c, &out->warnings);

    memset(out->measure_routes, 0, sizeof out->measure_routes);
    for (int s = 0; s < (every_seed ? seeds : 1); s++) {
        if (tracks[s][0]->layers >= 0)
            out->measure_routes[tracks[s][0]->state[0].route]++;
        for (int l = 1; l <= depth; l++)
            for (int n = 0; n < NETWORKS; n++) {
                const Track *t = tracks[s][n];
                if (l > t->layers)
                    continue;
                const LayerState *state = &t->state[l];
                if (!isnan(state->stable_rank))
                    out->measure_routes[state->route]++;
                for (int i = 0; state->warnings && i < state->warnings->count; i++)
                    add_track_warning(&out->warnings, state->warnings->text[i],
                                      state->warnings->subject[i], ROLE_NAMES[n], l);
            }
    }
}

/* ---- the run --------------------------------------------------------------------------- */

/* Layer 0 of both tracks: X0 on both lanes, measured once. */
static int input_layer(Run *run)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    Lane *main_lane = &w->lane[NETWORK_MAIN];
    int info = input_tokens(w, c, run->seed, NETWORK_MAIN);
    if (info)
        return info;
    Measures m0;
    info = Measure_tokens(main_lane->la, c->tokens, c->width, main_lane->x, 0.0, main_lane->xw,
                          main_lane->logits, main_lane->gram_eig,
                          w->measure_all_eigenvalues ? NULL : main_lane->lanczos, &m0);
    if (info)
        return info;
    size_t td = (size_t)c->tokens * c->width;
    memcpy(w->lane[NETWORK_COUNTERPART].x, main_lane->x, sizeof(double) * td);
    memcpy(w->lane[NETWORK_COUNTERPART].frozen, main_lane->frozen, sizeof(double) * td);
    for (int n = 0; n < NETWORKS; n++) {
        Track *t = run->track[n];
        run->held[n] = 0;
        run->nets[n] = (Network){.log_similarity0 = m0.log_similarity};
        if (t->layers >= 0)
            continue;
        record(&t->state[0], &m0, m0.log_similarity);
        t->state[0].net = run->nets[n];
        t->layers = 0;
    }
    return 0;
}

static void layer_state_undefined(LayerState *s)
{
    s->stable_rank = s->stable_rank_minus_one = s->log10_norm = s->token_similarity = NAN;
    s->route = MEASURE_ROUTE_NONE;
}

/* One seed: both tracks up to the depth (what is kept is not computed again), the shown
   spectra and the gradients for the first seed.  *stopped when progress asked. */
static int run_seed(Run *run, Track *(*tracks)[NETWORKS], int seed_index, bool *stopped)
{
    const Config *c = run->config;
    Kept *k = run->kept;
    const Progress *progress = run->progress;
    const Gap gaps[NETWORKS] = {c->gap, Gap_toggled(c->gap)};
    for (int n = 0; n < NETWORKS; n++) {
        Track *t = kept_track(k, run->seed, gaps[n], run->first_seed);
        if (!t || track_reserve(t, c->depth))
            return -1;
        run->track[n] = tracks[seed_index][n] = t;
        run->held[n] = -1;
    }
    int info = 0;
    if (run->track[0]->layers < 0 || run->track[1]->layers < 0)
        info = input_layer(run);
    if (info)
        return info;

    bool spectra = !run->first_seed || kept_spectra_find(k, run->seed, c);
    if (!spectra && run->track[NETWORK_MAIN]->layers >= c->layer) {
        /* Another shown layer of a kept network: its attention matrix and spectra only. */
        run->measure = true;
        info = capture_shown_attention(run, NETWORK_MAIN, c->layer);
        if (!info && stop_requested(run)) {
            *stopped = true;
            return 0;
        }
        if (!info && run->shown_captured)
            info = keep_shown_spectra(run);
        if (info)
            return info;
        spectra = true;
        assemble(run, tracks, seed_index + 1, false);
    }

    for (int layer = 1; layer <= c->depth; layer++) {
        bool any = false;
        for (int n = 0; n < NETWORKS; n++) {
            run->active[n] = run->track[n]->layers < layer;
            any |= run->active[n];
        }
        if (!any)
            continue;
        for (int n = 0; n < NETWORKS && !info; n++)
            if (run->active[n])
                info = lane_load(run, n, layer - 1);
        if (info)
            return info;
        run->layer = layer;
        run->measure = true;
        run->shown_lane = !spectra && layer == c->layer && run->active[NETWORK_MAIN] ? 0 : -1;
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
        if (info)
            return info;
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
        kept_trim(k, run->budget, run->track);
        if (run->shown_lane == 0 && !run->shown_captured)
            run->shown_lane = -1; /* no finite attention matrix at the shown layer */
        if (run->shown_lane == 0) {
            /* Right away, so a screen shows the spectra before the deeper layers finish. */
            if (stop_requested(run)) {
                assemble(run, tracks, seed_index + 1, false);
                *stopped = true;
                return 0;
            }
            info = keep_shown_spectra(run);
            if (info)
                return info;
            spectra = true;
        }
        assemble(run, tracks, seed_index + 1, false);
        if (progress && progress->after_layer &&
            !progress->after_layer(progress->context, seed_index, layer, c->depth)) {
            *stopped = true;
            return 0;
        }
    }
    if (stop_requested(run)) {
        *stopped = true;
        return 0;
    }
    bool gradients =
        run->first_seed && gradients_apply(c) &&
        (run->track[0]->gradient_depth != c->depth || run->track[1]->gradient_depth != c->depth);
    if (gradients) {
        for (int n = 0; n < NETWORKS && !info; n++)
            info = lane_load(run, n, c->depth);
        if (info)
            return info;
        info = frozen_attention_gradients(run);
        run->held[0] = run->held[1] = -1; /* the frozen products were used up */
        if (info == LANE_STOPPED) {
            *stopped = true;
            return 0;
        }
        if (info)
            return info;
    }
    assemble(run, tracks, seed_index + 1, false);
    return 0;
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

int Model_run(const Config *c, Workspace *w, Result *out, const Progress *progress, char *err,
              size_t size)
{
    Result_release(out);
    out->config = *c;
    out->counterpart_gap = Gap_toggled(c->gap);
    out->sigma = Config_sigma(c);
    out->logit_std = NAN;
    out->shown_gap = c->gap;
    out->readouts = (Readouts){NAN, NAN, NAN, NAN};
    out->outlier = -1;
    int seeds = c->seeds < 1 ? 1 : c->seeds;
    /* Without a budget nothing outlives the run, and what earlier runs kept stays as it is
       (the width sweep runs other sizes on the screen's workspace). */
    Kept scratch = {0};
    bool keeping = w->keep_budget > 0 && !w->keeping_paused;
    Kept *k = keeping ? &w->kept : &scratch;
    if (!k->valid || !same_weights(&k->key, c)) {
        kept_clear(k);
        k->valid = true;
        k->key = *c;
    }
    if (!same_weights(&w->value_key, c)) {
        memset(w->value_cached, 0, sizeof w->value_cached);
        w->value_key = *c;
    }
    Track *(*tracks)[NETWORKS] = calloc((size_t)seeds, sizeof *tracks);
    int status = 0;
    if (!tracks || workspace_reserve(w, c) || Result_allocate(out, c->tokens, c->depth)) {
        snprintf(err, size, "out of memory for T = %d, d = %d, depth %d", c->tokens, c->width,
                 c->depth);
        status = -1;
        goto done;
    }
    Run run = {.config = c,
               .w = w,
               .kept = k,
               .budget = keeping ? w->keep_budget : 0,
               .out = out,
               .progress = progress};
    /* The lanes' products and long calls poll the stop request too, for the run only: the
       progress need not outlive it. */
    LinalgStop stop = {0};
    if (progress && progress->stop_requested)
        stop = (LinalgStop){.requested = progress->stop_requested, .context = progress->context};
    for (int n = 0; n < NETWORKS; n++)
        Linalg_set_stop(w->lane[n].la, stop);
    bool stopped = false;
    int begun = 0;
    for (int s = 0; s < seeds && !stopped; s++, begun++) {
        run.first_seed = s == 0;
        run.seed = c->seed + (uint64_t)s;
        int info = run_seed(&run, tracks, s, &stopped);
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
        Linalg_set_stop(w->lane[n].la, (LinalgStop){0});
    free(tracks);
    if (k == &scratch)
        kept_clear(&scratch);
    return status;
}

/* ---- the plan of a run ----------------------------------------------------------------- */

/* The layers lane_load recomputes to bring a lane holding `held` to `layer` of track t (NULL:
   nothing kept), by the same rules; *from_input when it starts again from X0. */
static int plan_load(const Track *t, bool frozen, int held, int layer, bool *from_input)
{
    *from_input = false;
    if (held == layer)
        return 0;
    int from = track_nearest_kept(t, frozen, layer);
    if (held > from && held < layer)
        from = held;
    else if (from == 0)
        *from_input = true;
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
    *norm = cblas_dnrm2(c->tokens * c->width, w->lane[NETWORK_MAIN].x, 1);
    w->lane[NETWORK_MAIN].warnings.count = 0;
    return info;
}
