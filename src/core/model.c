/* The forward pass of SPEC §1.5 for a network and its counterpart (gap removal toggled),
 * sharing every random weight, and the quantities of SPEC §2.
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
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/random.h"
#include "attnscope/spectra.h"
#include "result_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NETWORK_MAIN, NETWORK_COUNTERPART, NETWORKS };

/* A lane's status when Progress.stop_requested asked it to stop (LAPACK's are >= -1). */
enum { LANE_STOPPED = -1000 };

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
    Warnings warnings;         /* merged into the result after each layer, main lane first */
    int measure_routes[MEASURE_ROUTES]; /* merged like the warnings */
} Lane;

struct Workspace {
    int T, d; /* the sizes the buffers hold */
    RandomStream *random;
    Lane lane[NETWORKS];
    double *wq, *wk, *wv; /* d×d, the current layer's weights, shared by both lanes */
    double *markov_gauss; /* T×T */
    double *shown_before_gap, *shown_applied; /* T×T, the shown layer of the main network */
    double *value_cache; /* W^V of every layer, kept for the gradients when it fits */
    size_t value_cache_size;
    bool measure_all_eigenvalues; /* skip the top-eigenpair route (the tests' reference) */
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
enum { LANE_BUFFERS = 10, WORKSPACE_BUFFERS = 2 * LANE_BUFFERS + 6 };

static int workspace_plan(Workspace *w, int T, int d, BufferPlan plan[WORKSPACE_BUFFERS])
{
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
        };
        memcpy(plan + n, buffers, sizeof buffers);
        n += LANE_BUFFERS;
    }
    const BufferPlan shared[] = {
        {&w->wq, dd},
        {&w->wk, dd},
        {&w->wv, dd},
        {&w->markov_gauss, tt},
        {&w->shown_before_gap, tt},
        {&w->shown_applied, tt},
    };
    memcpy(plan + n, shared, sizeof shared);
    return n + (int)(sizeof shared / sizeof shared[0]);
}

static void workspace_release_buffers(Workspace *w)
{
    BufferPlan plan[WORKSPACE_BUFFERS];
    int n = workspace_plan(w, 0, 0, plan);
    for (int i = 0; i < n; i++) {
        free(*plan[i].buf);
        *plan[i].buf = NULL;
    }
    w->T = w->d = 0;
}

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
    free(w->value_cache);
    for (int l = 0; l < NETWORKS; l++)
        Linalg_free(w->lane[l].la);
    RandomStream_free(w->random);
    free(w);
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

static int workspace_reserve(Workspace *w, const Config *c)
{
    size_t cache = value_cache_doubles(c);
    if (cache > w->value_cache_size) {
        free(w->value_cache);
        w->value_cache = malloc(sizeof(double) * cache);
        w->value_cache_size = w->value_cache ? cache : 0;
        if (!w->value_cache)
            return -1;
    }
    if (w->T == c->tokens && w->d == c->width)
        return 0;
    workspace_release_buffers(w);
    BufferPlan plan[WORKSPACE_BUFFERS];
    int n = workspace_plan(w, c->tokens, c->width, plan);
    for (int i = 0; i < n; i++) {
        *plan[i].buf = malloc(sizeof(double) * (plan[i].n ? plan[i].n : 1));
        if (!*plan[i].buf) {
            workspace_release_buffers(w);
            return -1;
        }
    }
    w->T = c->tokens;
    w->d = c->width;
    return 0;
}

size_t Model_memory_estimate(const Config *c)
{
    Workspace sizes = {0};
    BufferPlan plan[WORKSPACE_BUFFERS];
    int n = workspace_plan(&sizes, c->tokens, c->width, plan);
    size_t doubles = value_cache_doubles(c), T = (size_t)c->tokens;
    for (int i = 0; i < n; i++)
        doubles += plan[i].n;
    /* LAPACK's kept workspaces: dgesdd with vectors (outliers mode) needs about 4T² + 4T,
       dgeev and dsyevd some tens of T per lane. */
    doubles += (c->gap == GAP_OUTLIERS ? 4 * T * T : 0) + 128 * T;
    /* The result: per-layer curves of every seed, the spectra. */
    doubles += (size_t)(c->depth + 1) * 8 * (size_t)(c->seeds + 2) + 4 * T;
    return doubles * sizeof(double);
}

/* ---- one network ---------------------------------------------------------------------- */

typedef struct {
    Gap gap;
    double log_scale; /* X_ℓ = exp(log_scale) · x (input-independent kinds are rescaled) */
    double log_similarity0;
    double log_frozen;    /* A_ℓ⋯A_1 X0 = exp(log_frozen) · frozen */
    bool similarity_lost; /* its token similarity became round-off (warned once) */
    bool dead;            /* overflowed or vanished: later layers are undefined */
} Network;

/* The frozen-attention gradient is the product formula of SPEC §2, which describes the
   network without skips and LayerNorm. */
static bool gradients_apply(const Config *c)
{
    return c->skip == SKIP_NONE && c->layernorm == LAYERNORM_NONE;
}

/* Replaces `*product` (exp(*log_scale) times the true value) by left·product (left is
   rows×rows, transposed if asked) or product·right (right is cols×cols), renormalised to
   unit Frobenius norm with the scale carried in *log_scale.  Returns log10 of the squared
   true norm before the step (−inf for an exact 0, which then stays 0). */
static double scaled_step(int rows, int cols, double **product, double **spare, const double *left,
                          const double *right, bool transpose_left, double *log_scale)
{
    double norm = cblas_dnrm2(rows * cols, *product, 1);
    if (!(norm > 0))
        return -INFINITY;
    double log10_norm2 = 2.0 * (log10(norm) + *log_scale / M_LN10);
    if (left)
        cblas_dgemm(CblasColMajor, transpose_left ? CblasTrans : CblasNoTrans, CblasNoTrans, rows,
                    cols, rows, 1.0 / norm, left, rows, *product, rows, 0.0, *spare, rows);
    else
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, rows, cols, cols, 1.0 / norm,
                    *product, rows, right, cols, 0.0, *spare, rows);
    double *t = *product;
    *product = *spare;
    *spare = t;
    *log_scale += log(norm);
    return log10_norm2;
}

static void record(Curves *c, int layer, const Measures *m, double log_similarity0)
{
    c->stable_rank[layer] = m->stable_rank;
    c->stable_rank_minus_one[layer] = m->stable_rank_minus_one;
    c->log10_norm[layer] = m->log10_norm;
    double ratio = exp(m->log_similarity - log_similarity0);
    c->token_similarity[layer] = isfinite(ratio) ? ratio : NAN;
}

/* The value weights of a layer: kept in the cache when there is one. */
static double *value_weights(Workspace *w, const Config *c, int layer)
{
    size_t dd = (size_t)c->width * c->width;
    return w->value_cache && value_cache_doubles(c) ? w->value_cache + (size_t)(layer - 1) * dd
                                                    : w->wv;
}

/* Weights of one layer, shared by both networks. */
static const double *draw_layer_weights(Workspace *w, const Config *c, uint64_t seed, int layer)
{
    size_t dd = (size_t)c->width * c->width, tt = (size_t)c->tokens * c->tokens;
    if (Attention_has_query_key(c->attention)) {
        RandomStream_gaussian(w->random, seed, layer, ROLE_QUERY, c->sigma_qk, w->wq, dd);
        RandomStream_gaussian(w->random, seed, layer, ROLE_KEY, c->sigma_qk, w->wk, dd);
    }
    if (c->attention == ATTENTION_MARKOV)
        RandomStream_gaussian(w->random, seed, layer, ROLE_MARKOV, c->sigma_qk * c->sigma_qk,
                              w->markov_gauss, tt);
    double *wv = value_weights(w, c, layer);
    RandomStream_gaussian(w->random, seed, layer, ROLE_VALUE, 1.0, wv, dd);
    return wv;
}

/* The logits of the layer, row-major: S = X W^Q (X W^K)ᵀ / √d, i.e. Sᵀ = K Qᵀ / √d in
   column-major.  For markov the "logits" are σ_qk²·g, whose row-softmax is Z normalised. */
static const double *layer_logits(Workspace *w, Lane *lane, const Config *c)
{
    int T = c->tokens, d = c->width;
    if (c->attention == ATTENTION_MARKOV)
        return w->markov_gauss;
    if (!Attention_has_query_key(c->attention))
        return NULL;
    double *q = lane->xw, *k = lane->y; /* both free until the values are applied */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, lane->x, T, w->wq, d, 0.0,
                q, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, lane->x, T, w->wk, d, 0.0,
                k, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, 1.0 / sqrt((double)d), k, T, q, T,
                0.0, lane->logits, T);
    return lane->logits;
}

/* Post-LayerNorm per token (a row of the column-major X): rms: x/‖x‖; ln: centred first.
   Unit norm, not PyTorch's √d, so σ_qk means the same at every layer.  Zero rows stay 0. */
static void layernorm(LayerNorm mode, int T, int d, double *x, double *row_stat)
{
    if (mode == LAYERNORM_NONE)
        return;
    if (mode == LAYERNORM_LN) {
        memset(row_stat, 0, sizeof(double) * T);
        for (int j = 0; j < d; j++)
            for (int i = 0; i < T; i++)
                row_stat[i] += x[i + (size_t)j * T];
        for (int i = 0; i < T; i++)
            row_stat[i] /= d;
        for (int j = 0; j < d; j++)
            for (int i = 0; i < T; i++)
                x[i + (size_t)j * T] -= row_stat[i];
    }
    /* Scale each row by its largest entry first, so the sum of squares cannot overflow. */
    memset(row_stat, 0, sizeof(double) * T);
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            row_stat[i] = fmax(row_stat[i], fabs(x[i + (size_t)j * T]));
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < T; i++)
            if (row_stat[i] > 0 && isfinite(row_stat[i]))
                row_stat[i] = 1.0 / row_stat[i];
        for (int j = 0; j < d; j++)
            for (int i = 0; i < T; i++)
                x[i + (size_t)j * T] *= row_stat[i];
        if (pass == 1)
            break;
        memset(row_stat, 0, sizeof(double) * T);
        for (int j = 0; j < d; j++)
            for (int i = 0; i < T; i++)
                row_stat[i] += x[i + (size_t)j * T] * x[i + (size_t)j * T];
        for (int i = 0; i < T; i++)
            row_stat[i] = sqrt(row_stat[i]);
    }
}

static bool all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

/* One seed's run: what both lanes read, and each lane's network and status. */
typedef struct {
    const Config *config;
    Workspace *w;
    Result *out;
    const Progress *progress;
    bool first_seed;
    int layer;                   /* the layer being computed */
    bool attention_ready;        /* layer 1: both lanes start from X0 and share A */
    const double *shared_logits; /* their logits, for the logit std */
    const double *wv;            /* the layer's value weights */
    Network nets[NETWORKS];
    Curves *curves;     /* [NETWORKS] of this seed */
    int info[NETWORKS]; /* LAPACK status of each lane */
    /* Every seed's curves, [seed][network]; seed 0's are the result's own. */
    Curves (*per_seed)[NETWORKS];
} Run;

static bool stop_requested(const Run *run)
{
    const Progress *p = run->progress;
    return p && p->stop_requested && p->stop_requested(p->context);
}

static const char *network_name(int which)
{
    return which == NETWORK_MAIN ? "the" : "the counterpart";
}

/* One layer of one network: attention from its own X, gap removal, values, skip, LN. */
static int network_layer(Run *run, int which)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    Lane *lane = &w->lane[which];
    Network *net = &run->nets[which];
    int T = c->tokens, d = c->width, layer = run->layer;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    bool shown = run->first_seed && which == NETWORK_MAIN && layer == c->layer;

    const double *logits = run->shared_logits;
    if (!run->attention_ready) {
        logits = layer_logits(w, lane, c);
        Attention_build(c->attention, c->mask, c->window, T, logits, lane->attn);
    }
    if (stop_requested(run))
        return LANE_STOPPED;
    if (shown) {
        memcpy(w->shown_before_gap, lane->attn, sizeof(double) * tt);
        run->out->logit_std = logits ? Attention_logit_std(c->mask, c->window, T, logits) : NAN;
    }
    GapOutcome outcome;
    int info = Gap_apply(net->gap, c->attention, c->mask, c->window, T, lane->attn, lane->la,
                         lane->gap_scratch, &outcome, &lane->warnings);
    if (info)
        return info;
    if (shown) {
        memcpy(w->shown_applied, lane->attn, sizeof(double) * tt);
        run->out->shown_gap = outcome.applied;
        run->out->outliers_removed = outcome.outliers_removed;
    }
    if (run->first_seed && gradients_apply(c)) /* frozen ← A_ℓ·frozen (the buffer is Aᵀ) */
        scaled_step(T, d, &lane->frozen, &lane->y, lane->attn, NULL, true, &net->log_frozen);

    /* Y = A X W^V; the attention buffer is Aᵀ to BLAS, hence the transposed flag. */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, lane->x, T, run->wv, d,
                0.0, lane->xw, T);
    double keep = c->skip == SKIP_NONE ? 0.0 : 1.0;
    double branch = c->skip == SKIP_SCALED ? 1.0 / sqrt((double)d) : 1.0;
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, branch, lane->attn, T, lane->xw,
                T, keep, lane->x, T);
    layernorm(c->layernorm, T, d, lane->x, lane->column);
    if (stop_requested(run))
        return LANE_STOPPED;

    if (!all_finite(lane->x, td)) {
        net->dead = true;
        Warnings_add(&lane->warnings,
                     "%s network overflows the double range at layer %d (no LayerNorm: "
                     "the tokens grow layer by layer); its values from there on are null",
                     network_name(which), layer);
        return 0;
    }
    double norm = cblas_dnrm2((int)td, lane->x, 1);
    if (Attention_is_input_independent(c->attention) && norm > 0 &&
        c->layernorm == LAYERNORM_NONE) {
        /* A does not depend on X and every step is homogeneous of degree 1 in X: carry the
           scale apart so that deep networks never overflow. */
        cblas_dscal((int)td, 1.0 / norm, lane->x, 1);
        net->log_scale += log(norm);
    }

    Measures m;
    /* The logits are spent once the attention is built: their buffer takes the Gram matrix. */
    info = Measure_tokens(lane->la, T, d, lane->x, net->log_scale, lane->xw, lane->logits,
                          lane->gram_eig, w->measure_all_eigenvalues ? NULL : lane->lanczos, &m);
    if (info)
        return info;
    lane->measure_routes[m.route]++;
    if (isnan(m.stable_rank)) {
        net->dead = true;
        Warnings_add(&lane->warnings,
                     "%s network is exactly 0 after layer %d (%s): its stable rank is "
                     "undefined from there on",
                     network_name(which), layer, ATTENTION_NAMES.names[c->attention]);
    }
    if (run->first_seed && isnan(m.log_similarity) && !isnan(m.stable_rank) &&
        !net->similarity_lost) {
        net->similarity_lost = true;
        Warnings_add(&lane->warnings,
                     "token similarity of %s network: round-off from layer %d (tokens equal "
                     "to %.0e of ||X||), null there",
                     network_name(which), layer, MEASURE_SIMILARITY_RESOLUTION);
    }
    record(&run->curves[which], layer, &m, net->log_similarity0);
    return 0;
}

static void layer_task(int which, void *context)
{
    Run *run = context;
    if (!run->nets[which].dead)
        run->info[which] = network_layer(run, which);
}

/* Both lanes, at once when the caller offers a way, else one after the other. */
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

static int run_lanes(Run *run, void (*task)(int which, void *context), const Progress *progress)
{
    run->info[0] = run->info[1] = 0;
    both_lanes(progress, task, run);
    for (int n = 0; n < NETWORKS; n++) {
        Warnings *lane = &run->w->lane[n].warnings;
        for (int i = 0; i < lane->count; i++)
            Warnings_add(&run->out->warnings, "%s", lane->text[i]);
        lane->count = 0;
        int *routes = run->w->lane[n].measure_routes;
        for (int r = 0; r < MEASURE_ROUTES; r++)
            run->out->measure_routes[r] += routes[r];
        memset(routes, 0, sizeof(int) * MEASURE_ROUTES);
    }
    return run->info[0] ? run->info[0] : run->info[1];
}

/* Orthonormal input X0 = Qᵀ, Q from the QR factorisation of G ∈ R^{d×T}, signs by diag(R). */
static int input_tokens(Workspace *w, const Config *c, uint64_t seed)
{
    int T = c->tokens, d = c->width;
    size_t td = (size_t)T * d;
    Lane *main_lane = &w->lane[NETWORK_MAIN];
    double *g = main_lane->y; /* d×T fits in a T×d buffer */
    RandomStream_gaussian(w->random, seed, 0, ROLE_INPUT, 1.0, g, td);
    int info = Linalg_orthonormalise(main_lane->la, d, T, g);
    if (info)
        return info;
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            main_lane->x[i + (size_t)j * T] = g[j + (size_t)i * d];
    for (int n = 0; n < NETWORKS; n++) {
        memcpy(w->lane[n].x, main_lane->x, sizeof(double) * td);
        memcpy(w->lane[n].frozen, main_lane->x, sizeof(double) * td);
    }
    return 0;
}

static void gradient_task(int which, void *context)
{
    Run *run = context;
    Curves *g = &run->curves[which];
    Lane *lane = &run->w->lane[which];
    int l = run->layer;
    if (run->nets[which].dead) {
        g->log10_gradient_norm[l] = NAN;
        return;
    }
    g->log10_gradient_norm[l] +=
        scaled_step(run->config->tokens, run->config->width, &lane->frozen, &lane->y, NULL, run->wv,
                    false, &run->nets[which].log_frozen);
    double value = pow(10.0, g->log10_gradient_norm[l]);
    g->gradient_norm[l] = isfinite(value) ? value : NAN;
}

/* ‖∂X_L/∂W^V_ℓ‖_F² with attention frozen = ‖P1‖_F²·‖P2‖_F², P1 = A_L⋯A_1 X0 W_1⋯W_{ℓ−1},
   P2 = W_{ℓ+1}⋯W_L (SPEC §2), in log10 for ℓ = 1..L.  The value weights come from the cache,
   or are drawn again from their streams where L·d² doubles would not fit. */
static int frozen_attention_gradients(Run *run, uint64_t seed, const Progress *progress)
{
    Workspace *w = run->w;
    const Config *c = run->config;
    int d = c->width, L = c->depth;
    size_t dd = (size_t)d * d;
    bool cached = value_cache_doubles(c) > 0;
    double log_p2 = 0, *log10_p2 = run->curves[NETWORK_COUNTERPART].log10_gradient_norm;
    /* P2 = I, then W_ℓ·P2 from the top down; the logit weights' buffers are free now. */
    memset(w->wq, 0, sizeof(double) * dd);
    for (int i = 0; i < d; i++)
        w->wq[i + (size_t)i * d] = 1.0;
    for (int l = L; l >= 1; l--) {
        const double *wv = value_weights(w, c, l);
        if (!cached)
            RandomStream_gaussian(w->random, seed, l, ROLE_VALUE, 1.0, w->wv, dd);
        log10_p2[l] = scaled_step(d, d, &w->wq, &w->wk, wv, NULL, false, &log_p2);
    }
    memcpy(run->curves[NETWORK_MAIN].log10_gradient_norm, log10_p2, sizeof(double) * (L + 1));
    for (int l = 1; l <= L; l++) {
        run->layer = l;
        run->wv = value_weights(w, c, l);
        if (!cached)
            RandomStream_gaussian(w->random, seed, l, ROLE_VALUE, 1.0, w->wv, dd);
        run_lanes(run, gradient_task, progress);
    }
    return 0;
}

/* Mean and sample std of one per-layer value over the seeds; NaN if any seed lacks it. */
static void fill_band(Band *band, Curves (*per_seed)[NETWORKS], int seeds, int depth, int network)
{
    for (int l = 0; l <= depth; l++) {
        double mean = 0, ss = 0;
        for (int s = 0; s < seeds; s++)
            mean += per_seed[s][network].stable_rank[l];
        mean /= seeds;
        for (int s = 0; s < seeds; s++) {
            double dv = per_seed[s][network].stable_rank[l] - mean;
            ss += dv * dv;
        }
        band->mean[l] = mean;
        band->std[l] = seeds > 1 ? sqrt(ss / (seeds - 1)) : NAN;
    }
}

/* The bands over the seeds finished so far, so that a screen shows the ensemble grow. */
static void fill_bands(Run *run, int seeds_done)
{
    Result *out = run->out;
    fill_band(&out->stable_rank_band, run->per_seed, seeds_done, run->config->depth, NETWORK_MAIN);
    fill_band(&out->counterpart_band, run->per_seed, seeds_done, run->config->depth,
              NETWORK_COUNTERPART);
    out->seeds_done = seeds_done;
}

/* The shown layer's eigenvalues (dgeev, the larger part) and singular values (dgesdd) are
   independent once their inputs are apart: each runs in a lane of its own, with that lane's
   workspace, at once when the caller offers two threads. */
typedef struct {
    Run *run;
    bool brauer;
    int info[NETWORKS];
} ShownSpectra;

static void shown_spectra_task(int which, void *context)
{
    ShownSpectra *job = context;
    Workspace *w = job->run->w;
    Lane *lane = &w->lane[which];
    int T = job->run->config->tokens;
    job->info[which] =
        which == NETWORK_MAIN
            ? Spectra_shown_eigenvalues(T, job->brauer, w->shown_before_gap, lane->la, lane->logits,
                                        job->run->out)
            : Spectra_shown_singular_values(T, w->shown_applied, lane->la, job->run->out);
}

static int shown_spectra(Run *run, const Progress *progress)
{
    Workspace *w = run->w;
    ShownSpectra job = {.run = run};
    job.brauer = Spectra_prepare_shown_layer(run->config, run->out->shown_gap, w->shown_before_gap,
                                             w->shown_applied, run->out);
    both_lanes(progress, shown_spectra_task, &job);
    return job.info[NETWORK_MAIN] ? job.info[NETWORK_MAIN] : job.info[NETWORK_COUNTERPART];
}

static int run_seed(Run *run, uint64_t seed, int seed_index, const Progress *progress,
                    bool *stopped)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    Lane *main_lane = &w->lane[NETWORK_MAIN];
    run->nets[NETWORK_MAIN] = (Network){.gap = c->gap};
    run->nets[NETWORK_COUNTERPART] = (Network){.gap = Gap_toggled(c->gap)};
    int info = input_tokens(w, c, seed);
    if (info)
        return info;
    Measures m0;
    info = Measure_tokens(main_lane->la, c->tokens, c->width, main_lane->x, 0.0, main_lane->xw,
                          main_lane->logits, main_lane->gram_eig,
                          w->measure_all_eigenvalues ? NULL : main_lane->lanczos, &m0);
    if (info)
        return info;
    run->out->measure_routes[m0.route]++;
    for (int n = 0; n < NETWORKS; n++) {
        run->nets[n].log_similarity0 = m0.log_similarity;
        record(&run->curves[n], 0, &m0, m0.log_similarity);
    }
    for (int layer = 1; layer <= c->depth; layer++) {
        run->layer = layer;
        run->wv = draw_layer_weights(w, c, seed, layer);
        /* Both networks read X0 in layer 1: one attention matrix serves them both. */
        run->attention_ready = layer == 1;
        run->shared_logits = NULL;
        if (run->attention_ready) {
            size_t tt = (size_t)c->tokens * c->tokens;
            run->shared_logits = layer_logits(w, main_lane, c);
            Attention_build(c->attention, c->mask, c->window, c->tokens, run->shared_logits,
                            main_lane->attn);
            memcpy(w->lane[NETWORK_COUNTERPART].attn, main_lane->attn, sizeof(double) * tt);
        }
        info = run_lanes(run, layer_task, progress);
        if (info == LANE_STOPPED) {
            *stopped = true;
            return 0;
        }
        if (info)
            return info;
        if (run->first_seed)
            run->out->layers_done = layer;
        if (run->first_seed && layer == c->layer) {
            /* Right away, so a screen shows the spectra before the deeper layers finish. */
            if (stop_requested(run)) {
                *stopped = true;
                return 0;
            }
            info = shown_spectra(run, progress);
            if (info)
                return info;
            run->out->spectra_ready = true;
        }
        /* The seed's curves are complete after its last layer (the gradients that may
           follow are the first seed's alone): its snapshot already counts it. */
        if (layer == c->depth)
            fill_bands(run, seed_index + 1);
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
    if (run->first_seed && gradients_apply(c))
        return frozen_attention_gradients(run, seed, progress);
    return 0;
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
    int seeds = c->seeds < 1 ? 1 : c->seeds;
    /* Per seed: [network, counterpart] curves; seed 0's are the result's own. */
    Curves(*per_seed)[NETWORKS] = calloc((size_t)seeds, sizeof *per_seed);
    int status = 0;
    if (!per_seed || workspace_reserve(w, c) || Result_allocate(out, c->tokens, c->depth)) {
        snprintf(err, size, "out of memory for T = %d, d = %d, depth %d", c->tokens, c->width,
                 c->depth);
        status = -1;
        goto done;
    }
    for (int s = 1; s < seeds; s++)
        for (int n = 0; n < NETWORKS; n++)
            if (Curves_allocate(&per_seed[s][n], (size_t)c->depth + 1)) {
                snprintf(err, size, "out of memory for %d seeds", seeds);
                status = -1;
                goto done;
            }

    per_seed[0][NETWORK_MAIN] = out->network; /* the same arrays: seed 0 writes the result */
    per_seed[0][NETWORK_COUNTERPART] = out->counterpart;
    Run run = {.config = c, .w = w, .out = out, .progress = progress, .per_seed = per_seed};
    bool stopped = false;
    for (int s = 0; s < seeds && !stopped; s++) {
        run.first_seed = s == 0;
        run.curves = per_seed[s];
        int info = run_seed(&run, c->seed + (uint64_t)s, s, progress, &stopped);
        if (info) {
            snprintf(err, size, "LAPACK failed (info %d) in seed %d", info, s + 1);
            status = -1;
            goto done;
        }
    }
done:
    for (int s = 1; per_seed && s < seeds; s++)
        for (int n = 0; n < NETWORKS; n++)
            Curves_release(&per_seed[s][n]);
    free(per_seed);
    return status;
}
