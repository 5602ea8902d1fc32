/* The buffers of a run (docs/model.md §7): two lanes, each a layer step's buffers with the
 * frozen product and the measures' scratch (some grown where the query-key norms, run_qk.c,
 * borrow them between steps and need more), the layer's weights both lanes read, and the
 * shown layer's matrices; one list of them serves allocation, release and the memory
 * estimate. */
#include "attnscope/attention_map.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/measure.h"
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

/* Every buffer and its size in doubles for T tokens and width d: the one list that
   allocation, release and the memory estimate share. */
typedef struct {
    double **buf;
    size_t n;
} BufferPlan;

/* The buffer `buf` of plan[0..n) holds at least `doubles`. */
static void plan_grow(BufferPlan *plan, int n, double **buf, size_t doubles)
{
    for (int i = 0; i < n; i++)
        if (plan[i].buf == buf && plan[i].n < doubles)
            plan[i].n = doubles;
}

/* The plan for c's sizes; c NULL lists the buffers only (sizes 0), for their release. */
static int workspace_plan(Workspace *w, const Config *c, BufferPlan plan[WORKSPACE_BUFFERS])
{
    int T = c ? c->tokens : 0, d = c ? c->width : 0, heads = c ? c->heads : 0;
    size_t hidden = c && c->mlp != MLP_NONE ? (size_t)Config_mlp_hidden(c) : 0;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    /* W^Q, W^K, W^V (d×H·d_h) and W^O (H·d_h×d) hold as many doubles (Init_shape). */
    size_t projection = c ? Init_doubles(c, MATRIX_QUERY) : 0;
    size_t qk[QK_BORROWED]; /* what the heads' ‖M_h‖₂ borrow between steps */
    qk_norms_scratch_doubles(c, qk);
    int n = 0;
    for (int l = 0; l < NETWORKS; l++) {
        Lane *lane = &w->lane[l];
        /* The counterpart's gap mode is off or center, which need no scratch. */
        LayerBuffer step[LAYER_BUFFERS];
        Layer_buffers(c, &lane->step, l == NETWORK_MAIN, step);
        int first = n;
        for (int i = 0; i < LAYER_BUFFERS; i++)
            plan[n++] = (BufferPlan){step[i].buffer, step[i].doubles};
        plan[n++] = (BufferPlan){&lane->frozen, td};
        plan[n++] = (BufferPlan){&lane->lanczos, Measure_tokens_scratch_size(T, d)};
        for (int slot = 0; slot < QK_BORROWED; slot++)
            plan_grow(plan + first, n - first, qk_borrowed_buffer(lane, (QkBorrowed)slot),
                      qk[slot]);
    }
    LayerWeights *weights = &w->weights;
    const BufferPlan shared[] = {
        {&weights->query, projection},
        {&weights->key, projection},
        {&weights->value, projection},
        {&weights->output, c && c->output != OUTPUT_IDENTITY ? projection : 0},
        {&w->init_scratch, c ? Init_scratch_doubles(c) : 0},
        {&weights->mlp_in, hidden * d},
        {&weights->mlp_out, hidden * d},
        {&weights->mlp_up, c && Config_mlp_gated(c) ? hidden * d : 0},
        {&weights->markov, tt * (size_t)heads},
        {&weights->sink, c && Config_has_sink(c) ? (size_t)heads : 0},
        {&w->shown_before_gap, tt},
        {&w->shown_applied, tt},
        {&w->spectra_scratch, 2 * (size_t)T},
        /* A_ℓ⋯A_1 and its product's scratch, when the map shows the product. */
        {&w->product, c && c->attention_map == ATTENTION_MAP_PRODUCT ? tt : 0},
        {&w->product_scratch, c && c->attention_map == ATTENTION_MAP_PRODUCT ? tt : 0},
        {&w->qk_product[0], Layer_qk_product_doubles(c)},
        {&w->qk_product[1], c && c->depth > 1 ? Layer_qk_product_doubles(c) : 0},
        {&w->ahead.query, c && c->depth > 1 && Layer_draws_ahead() ? projection : 0},
        {&w->ahead.key, c && c->depth > 1 && Layer_draws_ahead() ? projection : 0},
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

Workspace *Workspace_new(void)
{
    Workspace *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->map_cells = ATTENTION_MAP_CELLS;
    w->random = RandomStream_new();
    w->value_random = RandomStream_new();
    for (int l = 0; l < NETWORKS; l++)
        w->lane[l].step.la = Linalg_new();
    w->spectra_la = Linalg_new();
    if (!w->random || !w->value_random || !w->lane[0].step.la || !w->lane[1].step.la ||
        !w->spectra_la) {
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
        Linalg_free(w->lane[l].step.la);
    Linalg_free(w->spectra_la);
    RandomStream_free(w->random);
    RandomStream_free(w->value_random);
    free(w);
}

void Workspace_set_isolation(Workspace *w, LinalgIsolation isolation)
{
    for (int l = 0; l < NETWORKS; l++)
        Linalg_set_isolation(w->lane[l].step.la, isolation);
    Linalg_set_isolation(w->spectra_la, isolation);
}

void Workspace_take_tally(Workspace *w, LinalgTally *tally)
{
    for (int l = 0; l < NETWORKS; l++)
        Linalg_tally_take(w->lane[l].step.la, tally, true);
    Linalg_tally_take(w->spectra_la, tally, true);
}

size_t Workspace_filled(const Workspace *w, Role role)
{
    return RandomStream_filled(w->random, role) + RandomStream_filled(w->value_random, role);
}

void Workspace_full_attention_maps(Workspace *w, bool full)
{
    w->map_cells = full ? CONFIG_TOKENS_MAX : ATTENTION_MAP_CELLS;
}

void Workspace_measure_all_eigenvalues(Workspace *w, bool all)
{
    w->measure_all_eigenvalues = all;
}

size_t value_cache_doubles(const Config *c)
{
    size_t n = (size_t)c->depth * c->width * c->width;
    return gradients_apply(c) && n * sizeof(double) <= VALUE_CACHE_MAX ? n : 0;
}

bool Model_value_weights_cached(const Config *c)
{
    return value_cache_doubles(c) > 0;
}

int workspace_reserve(Workspace *w, const Config *c)
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
    /* The attention maps (layer and product), kept and in the result. */
    size_t cells =
        (size_t)((c->tokens + AttentionMap_block_for(c->tokens, ATTENTION_MAP_CELLS) - 1) /
                 AttentionMap_block_for(c->tokens, ATTENTION_MAP_CELLS));
    doubles += 4 * cells * cells + 2 * T;
    return doubles * sizeof(double);
}
