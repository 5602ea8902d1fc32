/* The query-key work of a layer, once for both networks (run.c): its M_h = W^Q_h W^K_gᵀ where
 * its logits go through them, and each head's ‖M_h‖₂ for Zhai et al.'s entropy bound
 * (docs/model.md §3), with the next layer's drawn ahead and done on the other lane where
 * Entropy_qk_norms_ahead pairs them, and layers 1 and 2's beside the input (input_layer).
 */
#include "attnscope/entropy.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "model_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Scratch of the heads' ‖M_h‖₂, in the lane's buffers (qk_scratch_layout). */
typedef struct {
    double *block[2];       /* d×d_h each */
    double *lower, *square; /* d_h×d_h each */
    double *lanczos;        /* Measure_lanczos_size(d_h) */
    double *values;         /* d_h */
    /* The formed M_h's route alone (else NULL): d×d each, and Measure_lanczos_size(d). */
    double *gram, *factor, *gram_lanczos;
} QkScratch;

/* Whether a layer's norms are bounded from its formed M_h (qk_norm_bounds_formed). */
static bool qk_norms_from_formed(const Config *c, int layer)
{
    return Layer_logits_through_qk_product(c, layer) && !Entropy_qk_norm_exact(c);
}

static size_t larger(size_t a, size_t b)
{
    return a > b ? a : b;
}

double **qk_borrowed_buffer(Lane *lane, QkBorrowed slot)
{
    double **const buffers[QK_BORROWED] = {[QK_IN_LOGITS] = &lane->step.logits,
                                           [QK_IN_VALUES] = &lane->step.values,
                                           [QK_IN_ATTENTION] = &lane->step.attention,
                                           [QK_IN_LANCZOS] = &lane->lanczos};
    return buffers[slot];
}

/* One piece of the norms' scratch: where it goes (a field of QkScratch), the borrowed buffer
   it is cut from and its doubles. */
typedef struct {
    double **at;
    QkBorrowed slot;
    size_t doubles;
} QkPiece;

/* Cuts pieces[0..n) one after the other from the start of each slot's buffer in `lane` (NULL:
   the sizes alone), and raises need[] to what each buffer must hold for them. */
static void qk_carve(const QkPiece *pieces, int n, Lane *lane, size_t need[QK_BORROWED])
{
    size_t used[QK_BORROWED] = {0};
    for (int i = 0; i < n; i++) {
        QkBorrowed slot = pieces[i].slot;
        *pieces[i].at = lane ? *qk_borrowed_buffer(lane, slot) + used[slot] : NULL;
        used[slot] += pieces[i].doubles;
    }
    for (int i = 0; i < QK_BORROWED; i++)
        need[i] = larger(need[i], used[i]);
}

/* Where a layer's norms take their scratch in the lane's buffers (qk_borrowed_buffer), which
   workspace_plan grows where they are too small (qk_norms_scratch_doubles): the one list of
   the pieces, from which both the pointers and the sizes follow.  The exact norms' pieces
   (also where a proof fails) and, where the logits' formed M_h are bounded, the formed route's
   Gram matrix, factor and Lanczos scratch, cut again from the start of the same buffers: the
   exact norm of a head whose formed bound failed overwrites the formed route's scratch, spent
   by then.  The doubles each buffer needs into need[], and with `lane`, s filled. */
static void qk_scratch_layout(const Config *c, int layer, Lane *lane, QkScratch *s,
                              size_t need[QK_BORROWED])
{
    size_t d = (size_t)c->width, dh = (size_t)Config_head_width(c);
    size_t block = d * dh, square = dh * dh;
    bool formed = qk_norms_from_formed(c, layer);
    /* W^K_g's factor beside, and the proof's Lanczos: the factor route alone. */
    bool factor = !formed && !Entropy_qk_norm_exact(c);
    QkScratch unused;
    if (!s)
        s = &unused;
    *s = (QkScratch){0};
    const QkPiece exact[] = {
        {&s->block[0], QK_IN_LOGITS, block},
        {&s->block[1], QK_IN_VALUES, block},
        {&s->square, QK_IN_ATTENTION, square},
        {&s->lower, QK_IN_ATTENTION, factor ? square : 0},
        {&s->values, QK_IN_LANCZOS, dh},
        {&s->lanczos, QK_IN_LANCZOS, factor ? Measure_lanczos_size((int)dh) : 0},
    };
    const QkPiece from_formed[] = {
        {&s->gram, QK_IN_LOGITS, d * d},
        {&s->factor, QK_IN_VALUES, d * d},
        {&s->gram_lanczos, QK_IN_LANCZOS, Measure_lanczos_size((int)d)},
    };
    for (int i = 0; i < QK_BORROWED; i++)
        need[i] = 0;
    qk_carve(exact, (int)(sizeof exact / sizeof exact[0]), lane, need);
    if (formed)
        qk_carve(from_formed, (int)(sizeof from_formed / sizeof from_formed[0]), lane, need);
}

void qk_norms_scratch_doubles(const Config *c, size_t need[QK_BORROWED])
{
    for (int i = 0; i < QK_BORROWED; i++)
        need[i] = 0;
    for (int layer = 1; c && layer <= c->depth; layer++) {
        if (Entropy_zhai_void(c, layer))
            continue;
        size_t own[QK_BORROWED];
        qk_scratch_layout(c, layer, NULL, NULL, own);
        for (int i = 0; i < QK_BORROWED; i++)
            need[i] = larger(need[i], own[i]);
    }
}

/* A proved bound of s_1² as one of s_1, rounded up past the rounding of the square root and
   of the scale's product. */
static double norm_from_squared_bound(double bound)
{
    return sqrt(bound) * (1 + 2 * DBL_EPSILON);
}

/* Where one layer's query-key work is done: its W^Q and W^K, its M_h = W^Q_h W^K_gᵀ where
   its logits go through them (else NULL), the lane (its Linalg, and its step's buffers as the
   norms' scratch), and the [heads] norms it fills (NULL: none measured). */
typedef struct {
    int layer; /* 0: none on this lane */
    const double *query, *key;
    double *product;
    Lane *lane;
    double *norm;
    /* Where the lane draws W^Q and W^K first (Work_qk_pair_drawn_on_lanes): the stream
       object it draws them from, and the weights they go to (query and key); else NULL. */
    RandomStream *random;
    LayerWeights *drawn;
    double *value; /* where the lane draws the layer's W^V after (Work_values_drawn_beside_qk) */
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
    int info = Linalg_orthonormalise(q->lane->step.la, d, dh, qb);
    if (!info) /* R_B = Q_Bᵀ B */
        info =
            Linalg_gemm(q->lane->step.la, true, false, dh, dh, d, 1.0, qb, d, key, d, 0.0, r, dh);
    if (!info)
        info = Linalg_gemm(q->lane->step.la, false, true, d, dh, dh, 1.0, a, d, r, dh, 0.0, product,
                           d);
    if (!info)
        info = Linalg_singular_values(q->lane->step.la, d, dh, product, s->values);
    if (info)
        return info;
    /* Finite weights may still overflow in the product (a checkpoint's entries of 1e200, say):
       Linalg_execute then answers NaN rather than calling LAPACK, and *norm stays NaN. */
    if (isnan(s->values[0]))
        Warnings_add(&q->lane->warnings,
                     "layer %d, head %d: W^Q_h W^K_g^T overflows the double range "
                     "(its weights are too large); its norm and Zhai et al.'s entropy bound "
                     "are null",
                     q->layer, h + 1);
    *norm = s->values[0];
    return 0;
}

/* Upper bounds of s_1(W^Q_h W^K_gᵀ) for the query heads h of key head g, from one Cholesky
   factor of W^K_gᵀW^K_g (Measure_product_norm2_squared_bound); exact where the proof fails. */
static int qk_norm_bounds(const Config *c, const QkLayer *q, int g, QkScratch *s)
{
    int d = c->width, dh = Config_head_width(c);
    size_t block = (size_t)d * dh;
    MeasureGramFactor key = {.lower = s->lower};
    int info = Measure_gram_factor(q->lane->step.la, d, dh, q->key + block * g, s->block[0], &key);
    for (int h = 0; h < c->heads && !info; h++) {
        if (Config_kv_head_of(c, h) != g)
            continue;
        double bound;
        info = Measure_product_norm2_squared_bound(q->lane->step.la, d, dh, q->query + block * h,
                                                   &key, s->block[1], s->block[0], s->square,
                                                   s->lanczos, &bound);
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
            q->lane->step.la, d, dh, q->query + block * h, q->key + block * Config_kv_head_of(c, h),
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
   Returns 0 or LAPACK's status. */
static int qk_spectral_norms(const Config *c, const QkLayer *q)
{
    for (int h = 0; h < c->heads; h++)
        q->norm[h] = NAN;
    if (Entropy_zhai_void(c, q->layer))
        return 0;
    QkScratch s;
    size_t need[QK_BORROWED];
    qk_scratch_layout(c, q->layer, q->lane, &s, need);
    int info = 0;
    if (Entropy_qk_norm_exact(c)) {
        for (int h = 0; h < c->heads && !info; h++)
            info = qk_norm_exact(c, q, h, &s, &q->norm[h]);
    } else if (s.gram) {
        info = qk_norm_bounds_formed(c, q, &s);
    } else {
        for (int g = 0; g < Config_kv_heads(c) && !info; g++)
            info = qk_norm_bounds(c, q, g, &s);
    }
    for (int h = 0; h < c->heads; h++)
        q->norm[h] *= Init_logit_scale(c);
    return info;
}

typedef struct {
    Run *run;
    QkLayer lane[NETWORKS];
} QkLanes;

/* A layer's M_h where its logits take them, then its norms where they are measured. */
static int layer_query_key(const Config *c, const QkLayer *q)
{
    int info = 0;
    if (q->product)
        info = Layer_qk_product(q->lane->step.la, c, q->query, q->key, q->product);
    if (!info && q->norm)
        info = qk_spectral_norms(c, q);
    return info;
}

static void qk_task(int which, void *context)
{
    QkLanes *q = context;
    QkLayer *mine = &q->lane[which];
    mine->info = 0;
    if (!mine->layer)
        return;
    if (mine->random)
        mine->info =
            draw_ahead(q->run, mine->random, mine->lane->step.la, mine->layer, mine->drawn);
    if (!mine->info)
        mine->info = layer_query_key(q->run->config, mine);
    LayerWeights value = {.value = mine->value};
    if (!mine->info && mine->value)
        mine->info = Layer_draw(mine->random, mine->lane->step.la, q->run->config, q->run->seed,
                                mine->layer, LAYER_DRAW_VALUE, &value, q->run->w->init_scratch);
}

/* ---- The work done ahead, and its hand-over -------------------------------------------
   Why ahead: a layer's query-key work is serial (one head's norm does not split across
   lanes), while the networks' steps keep both lanes equally busy; done beside other work it
   takes a lane that would otherwise wait: the next layer's beside this one's, one on each lane
   (layer_qk_work, where Entropy_qk_norms_ahead pairs them: only two layers side by side halve
   their wall time), and layers 1 and 2's beside X0 and the value chain (input_layer).
   The hand-over: the work done ahead of its layer's turn is left in the ahead slots (the
   workspace's ahead W^Q and W^K, its qk_product[1], the norms in run->qk_norm_ahead) and
   run->qk_ready names its layer; beside the input, layer 1's is left in the layer's own slots
   instead (QK_READY_BESIDE_INPUT, with layer 2's ahead).  qk_state says what run->layer finds
   ready, and qk_take makes it the layer's own: nothing else reads or clears run->qk_ready. */

/* The W^Q and W^K of `layer` into `into`, from the streams that layer's own draw would start
   again: the same values, which the layer then takes (qk_take) instead of drawing them a
   second time. */
int draw_ahead(Run *run, RandomStream *random, Linalg *la, int layer, LayerWeights *into)
{
    return Layer_draw(random, la, run->config, run->seed, layer, LAYER_DRAW_ATTENTION, into,
                      run->w->init_scratch);
}

/* The workspace's W^Q and W^K become those drawn ahead, and the spent ones the ahead
   buffers (all four the workspace's, of d² each). */
static void swap_ahead_weights(Workspace *w)
{
    double *query = w->weights.query, *key = w->weights.key;
    w->weights.query = w->ahead.query;
    w->weights.key = w->ahead.key;
    w->ahead.query = query;
    w->ahead.key = key;
}

void qk_beside_input_done(Run *run)
{
    swap_ahead_weights(run->w);
    run->qk_ready = QK_READY_BESIDE_INPUT;
}

/* The M_h of `layer` where its logits take them (Layer_logits_through_qk_product): the
   workspace's qk_product[0] for run->layer, [1] for the one drawn ahead. */
double *qk_product_of(Run *run, int layer, int which)
{
    return Layer_logits_through_qk_product(run->config, layer) ? run->w->qk_product[which] : NULL;
}

/* Work is done ahead only for the measured layers of the first seed (a replay or a later
   seed measures no norms), so only they find it. */
QkState qk_state(const Run *run)
{
    if (!run->measure || !run->first_seed)
        return QK_TO_DO;
    if (run->layer == 1 && run->qk_ready == QK_READY_BESIDE_INPUT)
        return QK_DONE_BESIDE_INPUT;
    return run->qk_ready == run->layer ? QK_DONE_AHEAD : QK_TO_DO;
}

void qk_take(Run *run, QkState state)
{
    Workspace *w = run->w;
    run->value_ahead = NULL; /* run_layer took it */
    if (state == QK_DONE_BESIDE_INPUT) {
        run->qk_ready = 2; /* layer 1's is in its own slots; layer 2's stays ahead */
        return;
    }
    if (state != QK_DONE_AHEAD)
        return;
    run->qk_ready = 0;
    swap_ahead_weights(w);
    double *formed = w->qk_product[1];
    w->qk_product[1] = w->qk_product[0];
    w->qk_product[0] = formed;
    memcpy(run->qk_norm, run->qk_norm_ahead, sizeof(double) * (size_t)run->config->heads);
}

bool qk_paired(const Run *run)
{
    /* Unmeasured (a replay, a later seed): the entropies, which the norms go with, are not. */
    return run->measure && run->first_seed && Entropy_qk_norms_ahead(run->config, run->layer);
}

/* The query-key work of run->layer, once for both networks: its M_h where its logits take
   them, into run->weights.qk_product, and, where the entropies are measured, its norms into
   run->qk_norm.  A layer that Entropy_qk_norms_ahead pairs with the next one does both
   layers', one on each lane (a single head's work does not split, and the networks' steps
   keep both lanes equally busy: only two layers' side by side halve their wall time), and
   leaves the next one's ahead.  While the shown eigenvalues hold the second thread, each lane
   goes to whichever thread is free first (layer_lanes). */
int layer_qk_work(Run *run)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    bool norms = run->measure && run->first_seed; /* as qk_paired says why */
    QkLanes q = {.run = run};
    q.lane[0] = (QkLayer){.layer = run->layer,
                          .query = run->weights.query,
                          .key = run->weights.key,
                          .product = run->weights.qk_product,
                          .lane = &w->lane[NETWORK_MAIN],
                          .norm = norms ? run->qk_norm : NULL};
    if (!qk_paired(run)) {
        qk_task(NETWORK_MAIN, &q);
        return q.lane[0].info;
    }
    int info = 0;
    /* Each lane draws its layer's W^V last where both do (run_layer then draws neither):
       this layer's into the workspace's, the next one's over its own W^K, spent once its M
       is formed. */
    double *values[NETWORKS] = {NULL, NULL};
    if (Work_values_drawn_beside_qk(c, run->layer)) {
        values[0] = w->weights.value;
        values[1] = w->ahead.key;
    }
    if (Work_qk_pair_drawn_on_lanes(c)) { /* the chain beside X0 is done with value_random */
        q.lane[0].random = w->random;
        q.lane[0].drawn = &w->weights;
        q.lane[0].value = values[0];
        q.lane[1].random = w->value_random;
        q.lane[1].drawn = &w->ahead;
    } else {
        info = draw_ahead(run, w->random, w->lane[NETWORK_MAIN].step.la, run->layer + 1, &w->ahead);
    }
    if (!info)
        info = shown_spectra_join(run, false);
    if (info)
        return info;
    q.lane[1] = (QkLayer){.layer = run->layer + 1,
                          .query = w->ahead.query,
                          .key = w->ahead.key,
                          .product = qk_product_of(run, run->layer + 1, 1),
                          .lane = &w->lane[NETWORK_COUNTERPART],
                          .norm = run->qk_norm_ahead,
                          .random = q.lane[1].random,
                          .drawn = q.lane[1].drawn,
                          .value = values[1]};
    layer_lanes(run, qk_task, &q);
    if (!q.lane[0].info && !q.lane[1].info) {
        run->qk_ready = run->layer + 1;
        run->value_ahead = values[1];
    }
    return q.lane[0].info ? q.lane[0].info : q.lane[1].info;
}

/* Layer 1's M_1 and norms from its W^Q and W^K (drawn ahead: input_layer), then the
   attention matrix both networks share (run_layer's, bit for bit: the same calls on the same
   lane's buffers, X0 there), on X0's lane after X0's measure. */
int layer_one_beside(Run *run)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    /* Not a copy of w->weights: the chain beside swaps its W^Q and W^K pointers as scratch.
       Softmax without sinks (Entropy_qk_norms_ahead) reads no other part. */
    LayerWeights weights = {
        .query = w->ahead.query, .key = w->ahead.key, .qk_product = qk_product_of(run, 1, 0)};
    QkLayer q = {.layer = 1,
                 .query = weights.query,
                 .key = weights.key,
                 .product = weights.qk_product,
                 .lane = &w->lane[NETWORK_MAIN],
                 .norm = run->qk_norm};
    int info = layer_query_key(c, &q);
    return info ? info : layer_one_attention(run, &weights);
}

int layer_one_attention(Run *run, const LayerWeights *weights)
{
    LayerOutcome finite; /* each network's step checks it */
    return Layer_attention(run->config, 1, weights, &run->w->lane[NETWORK_MAIN].step, 0,
                           &run->shared_logits, &finite);
}

/* Layer 2's W^Q and W^K into the workspace's own (the chain's scratch until now), from the
   chain's stream object, and its M_2 and norms, on the chain's lane after the chain. */
int layer_two_beside(Run *run, RandomStream *random, Lane *lane)
{
    Workspace *w = run->w;
    QkLayer q = {.layer = 2,
                 .query = w->weights.query,
                 .key = w->weights.key,
                 .product = qk_product_of(run, 2, 1),
                 .lane = lane,
                 .norm = run->qk_norm_ahead};
    int info = draw_ahead(run, random, lane->step.la, 2, &w->weights);
    return info ? info : layer_query_key(run->config, &q);
}
