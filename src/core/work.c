/* The steps of a run (work.h): the plan's (Model_plan) walk over its seeds and layers, each
 * layer's work declared by the layer step itself (Layer_declare, Layer_declare_draw: the same
 * stages, run without buffers), around it what the drivers add (the gradients' frozen
 * product, the measures, the shown matrix's spectra) by the rules they follow: the
 * gradients' (Model_gradients_unavailable), the value cache's (Model_value_weights_cached),
 * the spectra's (Spectra_from_diagonal).  Sizes are those of the Linalg calls the run makes,
 * so test_cost can compare them with a LinalgTally exactly; what depends on the numbers (the
 * stable rank's route, the outliers removed) is the expectation of docs/model.md §3.
 */
#include "attnscope/work.h"

#include "attnscope/attention.h"
#include "attnscope/entropy.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/measure.h"
#include "attnscope/spectra.h"

#include <math.h>
#include <string.h>

/* Products with the Gram matrix the top-eigenpair route takes (the steps its Lanczos takes,
   `taken` in measure_internal.h: 1 to 7 in practice, far below its budget), each a pass over
   it, and the passes around them. */
#define LANCZOS_PASSES 10

void WorkList_add(WorkList *l, WorkKind kind, double m, double n, double k, double times)
{
    if (!(times > 0))
        return;
    /* Work of one kind and size is counted together (each head's, each pass over T×d): the
       longest list, a replayed layer's weights and lane, then holds under 30 items. */
    for (int i = 0; i < l->count; i++) {
        Work *w = &l->item[i];
        if (w->kind == kind && w->m == m && w->n == n && w->k == k) {
            w->times += times;
            return;
        }
    }
    if (l->count < WORK_LIST_MAX)
        l->item[l->count++] = (Work){.kind = kind, .m = m, .n = n, .k = k, .times = times};
}

static void add(WorkList *l, WorkKind kind, double m, double n, double k, double times)
{
    WorkList_add(l, kind, m, n, k, times);
}

/* Every item of `from`, done `times` times (each head's, each layer's). */
static void add_times(WorkList *out, const WorkList *from, double times)
{
    for (int i = 0; i < from->count; i++)
        add(out, from->item[i].kind, from->item[i].m, from->item[i].n, from->item[i].k,
            from->item[i].times * times);
}

static void product(WorkList *l, double m, double n, double k, double times)
{
    add(l, WORK_PRODUCT, m, n, k, times);
}

static void passes(WorkList *l, double elements)
{
    add(l, WORK_PASSES, elements, 0, 0, 1);
}

/* ---- the weights --------------------------------------------------------------------- */

/* `parts` SVDs of a d×d target, each from d² normals, its factors written out. */
static void factorisation(const Config *c, double parts, WorkList *out)
{
    double d = c->width;
    add(out, WORK_NORMALS, d * d, 0, 0, parts);
    add(out, WORK_SVD, d, d, 0, parts);
    add(out, WORK_PASSES, d * d, 0, 0, parts);
}

bool Work_value_chain_beside_input(bool gradients)
{
    return gradients && Layer_draws_ahead();
}

bool Work_layer_one_beside_input(const Config *c)
{
    return c->heads == 1 && Entropy_qk_norms_ahead(c, 1);
}

bool Work_layer_one_drawn_on_input_lane(const Config *c)
{
    return Work_layer_one_beside_input(c) && Init_scratch_doubles(c) == 0;
}

bool Work_qk_pair_drawn_on_lanes(const Config *c)
{
    return Layer_draws_ahead() && Init_scratch_doubles(c) == 0;
}

bool Work_gradient_values_drawn_on_lanes(const Config *c)
{
    return !Model_value_weights_cached(c) && Work_qk_pair_drawn_on_lanes(c);
}

bool Work_value_one_beside_input(const Config *c)
{
    return !Model_value_weights_cached(c);
}

bool Work_values_drawn_beside_qk(const Config *c, int layer)
{
    return Work_qk_pair_drawn_on_lanes(c) && !Model_value_weights_cached(c) &&
           Layer_logits_through_qk_product(c, layer + 1);
}

/* Matrix m drawn i.i.d. (Init_draw_with_scratch): normals, or zeros, then orthonormalised
   where the initialisation says. */
static void iid_matrix(const Config *c, Matrix m, WorkList *out)
{
    int rows, cols;
    Init_shape(c, m, &rows, &cols);
    MatrixInit how = Init_matrix(c, m);
    double n = (double)rows * cols;
    if (how.std == 0.0)
        passes(out, n);
    else
        add(out, WORK_NORMALS, n, 0, 0, 1);
    if (how.orthogonal && rows < cols) /* a wide one through its transpose, there and back */
        passes(out, 2 * n);
    if (how.orthogonal)
        add(out, WORK_ORTHONORMAL, rows > cols ? rows : cols, rows > cols ? cols : rows, 0, 1);
}

void Work_matrix_draw(const Config *c, Matrix m, WorkList *out)
{
    /* A factor (value-output pair) decomposes its target again. */
    if (isnan(Init_matrix(c, m).std))
        factorisation(c, 1, out);
    else
        iid_matrix(c, m, out);
}

void Work_query_key_draw(const Config *c, WorkList *out)
{
    /* One factorisation per head serves both where both are factors. */
    bool query = isnan(Init_matrix(c, MATRIX_QUERY).std),
         key = isnan(Init_matrix(c, MATRIX_KEY).std);
    if (query && key) {
        factorisation(c, c->heads, out);
        return;
    }
    const Matrix matrices[2] = {MATRIX_QUERY, MATRIX_KEY};
    for (int i = 0; i < 2; i++) {
        if (isnan(Init_matrix(c, matrices[i]).std))
            factorisation(c, c->heads, out);
        else
            iid_matrix(c, matrices[i], out);
    }
}

/* ---- one layer of one network -------------------------------------------------------- */

Gap Work_applied_gap(const Config *c, Gap gap)
{
    /* Identity attention has eigenvalue 1 T times: no unique Perron vector. */
    bool deflates = Config_rows_stochastic(c) && c->attention != ATTENTION_IDENTITY;
    return gap == GAP_DEFLATE && !deflates ? GAP_CENTER : gap;
}

void Work_gap_removal(const Config *c, Gap gap, int layer, WorkList *out)
{
    double T = c->tokens, tt = T * T;
    if (Gap_leaves_zero(gap, Layer_attention_uniform(c), Config_layer_mask(c, layer), c->window,
                        c->tokens)) {
        passes(out, tt); /* the zero written */
        return;
    }
    if (gap == GAP_OUTLIERS && c->attention == ATTENTION_IDENTITY)
        return; /* no outlier: nothing removed */
    switch (gap) {
    case GAP_OFF:
        return;
    case GAP_CENTER:
    case GAP_UNIFORM:
        passes(out, tt);
        return;
    case GAP_DEFLATE:
        /* The Perron vector of a triangular matrix is e1; else from one solve. */
        if (Config_rows_stochastic(c) && !Spectra_attention_triangular(c)) {
            passes(out, 2 * tt);
            add(out, WORK_SOLVE, T, T, 0, 1);
        }
        passes(out, tt);
        return;
    case GAP_OUTLIERS:
        /* The top r singular triplets removed: r = 1, the outlier of docs/model.md §3. */
        passes(out, 2 * tt);
        add(out, WORK_SVD, T, T, 0, 1);
        product(out, T, T, 1, 1);
        return;
    }
}

/* The spectra the theory expects flat: X0's (all eigenvalues equal) and those of a network
   whose gap is removed (docs/model.md §3). */
static bool spread_expected(const Config *c, Gap gap, int layer)
{
    return layer == 0 || (gap != GAP_OFF && c->attention != ATTENTION_IDENTITY);
}

bool Work_centred_downdate_expected(const Config *c, int layer)
{
    /* Asked of every network above the gate: the measure takes it where it is as accurate as
       the direct route (Measure_centred_by_downdate, decided by μ at run time), which holds
       beyond X0 and the gap-removed network too: at T = d = 1024, seed 1, the collapsing
       network's tokens keep μ ≥ 0.52 through L = 8 (one direction, not equal tokens), and
       where they are equal within round-off no centred Gram matrix is formed at all.  (The
       embedding input's networks collapse whatever the gap: test_cost's
       test_deflated_gram_of_the_smaller_side.) */
    return !Measure_svd_cheap(c->tokens, c->width) && (layer == 0 || c->input != INPUT_EMBEDDING);
}

int Work_flat_proofs_declared(const Config *c, Gap gap, int layer, bool bound_shared)
{
    if (Measure_svd_cheap(c->tokens, c->width))
        return 0;
    return (layer == 0) + (spread_expected(c, gap, layer) && !bound_shared);
}

/* The route from X itself where the theory has a collapsing network's sr − 1 below the Gram
   route's floor, T^(1 − 2ℓ) < MEASURE_GRAM_FLOOR: its singular values while they are cheap,
   else the deflated route. */
static bool from_x_expected(const Config *c, Gap gap, int layer)
{
    bool collapses = gap == GAP_OFF && c->skip == SKIP_NONE &&
                     (c->attention == ATTENTION_SOFTMAX || c->attention == ATTENTION_MARKOV ||
                      c->attention == ATTENTION_UNIFORM);
    return !spread_expected(c, gap, layer) && collapses &&
           (1.0 - 2.0 * layer) * log10((double)c->tokens) < log10(MEASURE_GRAM_FLOOR);
}

bool Work_deflated_route_declared(const Config *c, Gap gap, int layer)
{
    return from_x_expected(c, gap, layer) && !Measure_svd_cheap(c->tokens, c->width);
}

/* Where the theory expects a flat spectrum (X0's X and centred measures, spread_expected's),
   all the Gram matrix's eigenvalues below the gate (dsyevd), and above it the flat-spectrum
   route that runs there instead: Lanczos (the measure's passes) and the Cholesky proofs of
   Work_flat_proofs_declared. */
static void flat_measures(const Config *c, Gap gap, int layer, bool bound_shared, WorkList *out)
{
    double T = c->tokens;
    int flat = (layer == 0) + spread_expected(c, gap, layer);
    if (Measure_svd_cheap(c->tokens, c->width)) {
        if (flat)
            add(out, WORK_SYMMETRIC, T, T, 0, flat);
        return;
    }
    int proofs = Work_flat_proofs_declared(c, gap, layer, bound_shared);
    if (proofs)
        add(out, WORK_CHOLESKY, T, T, 0, proofs);
}

/* The stable rank and the other measures of X (Measure_tokens): the Gram matrix, then the
   route the theory expects: a flat spectrum's at X0 (all eigenvalues equal: the top eigenpair
   is not certified) and while a network keeps its rank (flat_measures), X itself once a
   collapsing network's sr − 1 is below the Gram route's floor (T^(1 − 2ℓ)), the top eigenpair
   otherwise.  X itself is its singular values while they are cheap, else the deflated route:
   two power steps, both sides projected twice, a scaling pass (and a transposed copy when
   T > d), the Gram matrix of the smaller side and its norm.  bound_shared: the measure's
   Gram matrix bounds the next layer's ‖X'‖₂² (measured_input_bound), whose proof the flat
   route takes. */
static void measure(const Config *c, Gap gap, int layer, bool bound_shared, WorkList *out)
{
    double T = c->tokens, d = c->width;
    passes(out, 4 * T * d + LANCZOS_PASSES * T * T);
    add(out, WORK_GRAM, T, T, d, 1);
    /* The centred stable rank: X − 1x̄ᵀ's own Gram matrix, or X's downdated (its mirror, row
       means and the downdate: a few passes over T×T), and its route (at X0 all but one of
       its eigenvalues are equal, like X0's). */
    if (Work_centred_downdate_expected(c, layer)) {
        passes(out, 4 * T * T + LANCZOS_PASSES * T * T);
    } else {
        passes(out, 3 * T * d + LANCZOS_PASSES * T * T);
        add(out, WORK_GRAM, T, T, d, 1);
    }
    flat_measures(c, gap, layer, bound_shared, out);
    if (from_x_expected(c, gap, layer)) {
        if (!Work_deflated_route_declared(c, gap, layer)) {
            add(out, WORK_SINGULAR_VALUES, T, d, 0, 1);
            return;
        }
        double n = T < d ? T : d;
        passes(out, (T > d ? 13 : 12) * T * d + n * n);
        add(out, WORK_GRAM, n, n, T + d - n, 1);
    }
}

/* Measure_norm2_squared_bound of a T×d matrix, `times` times: the Gram matrix of the smaller
   side, n = min(T, d), through a transposed copy when T > d, Lanczos on it, the shifted copy
   and its Cholesky factorisation. */
static void norm2_bound(double T, double d, double times, WorkList *out)
{
    double n = T < d ? T : d;
    passes(out, times * ((T > d ? T * d : 0) + (LANCZOS_PASSES + 1) * n * n));
    add(out, WORK_GRAM, n, n, T + d - n, times);
    add(out, WORK_CHOLESKY, n, n, 0, times);
}

/* What the first seed's entropy bounds cost a measured layer (run.c): per head, ‖W^Q_h W^K_gᵀ‖₂.
   Exact while Entropy_qk_norm_exact: s_1(A R_Bᵀ), one QR of d×d_h, two products and the
   singular values of d×d_h.  Above, the proved upper bound: per key head, a transposed copy
   of W^K_g, its d_h×d_h Gram matrix and Cholesky factor L̂ (Measure_gram_factor); per query
   head, the product W^Q_h L̂, ‖W^Q_h‖_F² and norm2_bound of the d×d_h product; or, where the
   logits go through M_h, the bound of that formed product.  The exact norm where a proof
   fails is not foreseen. */
static void qk_norms(const Config *c, int layer, WorkList *out)
{
    double d = c->width, dh = Config_head_width(c), H = c->heads, G = Config_kv_heads(c);
    if (Entropy_zhai_void(c, layer))
        return;
    if (Entropy_qk_norm_exact(c)) {
        add(out, WORK_ORTHONORMAL, d, dh, 0, H);
        product(out, dh, dh, d, H);
        product(out, d, dh, dh, H);
        add(out, WORK_SINGULAR_VALUES, d, dh, 0, H);
        return;
    }
    if (Layer_logits_through_qk_product(c, layer)) {
        /* From the formed M_h (Measure_formed_product_norm2_squared_bound): ‖W^Q_h‖_F²,
           ‖W^K_g‖_F² and norm2_bound of the d×d M_h. */
        passes(out, 2 * H * d * dh);
        norm2_bound(d, d, H, out);
        return;
    }
    passes(out, G * (d * dh + 2 * dh * dh));
    add(out, WORK_GRAM, dh, dh, d, G);
    add(out, WORK_CHOLESKY, dh, dh, 0, G);
    product(out, d, dh, dh, H);
    passes(out, H * d * dh);
    norm2_bound(d, dh, H, out);
}

/* The next layer's ‖X'‖₂² where the measure of X bounds it (Entropy_input_norm_measured):
   Lanczos on the measure's T×T Gram matrix, the shifted copy and its Cholesky factorisation,
   no Gram matrix of its own. */
static void measured_input_bound(const Config *c, WorkList *out)
{
    double T = c->tokens;
    passes(out, (LANCZOS_PASSES + 1) * T * T);
    add(out, WORK_CHOLESKY, T, T, 0, 1);
}

/* run_qk.c's layer_qk_work on one layer: its M_h where its logits go through them, and its norms
   where they are measured (the first seed). */
static void query_key(const Config *c, int layer, bool norms, WorkList *out)
{
    if (Layer_logits_through_qk_product(c, layer))
        Layer_declare_qk_product(c, out);
    if (norms)
        qk_norms(c, layer, out);
}

/* A network's share of them: q and p of the attention's input, and ‖X'‖₂² where the bound
   holds: the singular values of a T×d copy where they are cheap, else the proved upper bound
   (norm2_bound, or nothing more where the measure of the layer below gave it,
   `below_measured`; the singular values only where that proof fails, which the plan does not
   foresee). */
static void input_norms(const Config *c, int layer, bool below_measured, WorkList *out)
{
    double T = c->tokens, d = c->width;
    passes(out, 3 * T * d);
    if (Entropy_zhai_void(c, layer) || (below_measured && Entropy_input_norm_measured(c, layer)))
        return;
    if (Entropy_input_norm_exact(c->tokens, c->width)) {
        add(out, WORK_SINGULAR_VALUES, T, d, 0, 1);
        return;
    }
    norm2_bound(T, d, 1, out);
}

typedef struct {
    bool first_seed; /* the frozen products for the gradients */
    bool shared;     /* layer 1's attention was built once for both networks */
    bool measured;
    bool below_measured; /* the layer below was measured on this lane, this run */
} LaneLayer;

/* network_layer on one lane: the layer step, the frozen product of the gradients (on the
   first seed, by the gradients' own rule), the heads' entropies and the measures. */
/* One network's layer into out; its tail (run_lane.c's network_tail: the frozen product and
   the measures) into tail as well. */
static void lane_layer(const Config *c, Gap gap, int layer, LaneLayer how, WorkList *out,
                       WorkList *tail)
{
    bool mix_tokens_first = Model_gradients_unavailable(c) == NULL; /* every seed's order */
    bool gradients = how.first_seed && mix_tokens_first;
    LayerStep step = {.config = c,
                      .layer = layer,
                      .gap = gap,
                      .attention_built = how.shared,
                      .mix_tokens_first = mix_tokens_first};
    Layer_declare(&step, out);
    /* Each head's row entropies of A as built (run_lane.c's observer, on the first seed's measured
       layers): a log per entry the mask allows, at most T². */
    if (how.measured && how.first_seed && Entropy_defined(c->attention))
        add(out, WORK_BUILD_EXP, (double)c->tokens * c->tokens, 0, 0, c->heads);
    if (how.measured && how.first_seed && Entropy_defined(c->attention))
        input_norms(c, layer, how.below_measured, out);
    *tail = (WorkList){0};
    if (gradients) /* the norm of the step's A·X */
        passes(tail, (double)c->tokens * c->width);
    if (gradients && Model_frozen_product_in_step(c, layer))
        passes(tail, (double)c->tokens * c->width); /* the step's A_1·X0 copied */
    else if (gradients)
        product(tail, c->tokens, c->width, c->tokens, 1);
    bool bounding = how.first_seed && Entropy_input_norm_measured(c, layer + 1);
    if (how.measured)
        measure(c, gap, layer, bounding, tail);
    if (how.measured && bounding)
        measured_input_bound(c, tail);
    add_times(out, tail, 1);
}

/* ---- the steps of a seed --------------------------------------------------------------- */

typedef struct {
    const Config *c;
    bool first;
    bool values_chained; /* the gradients' value chain ran beside X0 (run.c's input_layer) */
    int qk_ahead;        /* the layer whose norms the layer below computed beside its own */
    int value_ahead;     /* the layer whose W^V a lane drew beside: its q·k pair, or X0 */
    bool layer1_beside;  /* layer 1's query-key work and attention ran beside X0 */
    bool (*visit)(void *context, const WorkStep *step);
    void *context;
    bool stopped;
} Walk;

static void visit(Walk *walk, const WorkStep *step)
{
    if (!walk->stopped)
        walk->stopped = !walk->visit(walk->context, step);
}

/* The weights a layer draws (draw_layer_weights): `parts` but W^V for the first seed, whose
   cache holds it for a layer computed before. */
static unsigned weight_parts(const Walk *walk, unsigned parts, bool computed_before)
{
    bool cached = walk->first && (computed_before || walk->values_chained) &&
                  Model_value_weights_cached(walk->c);
    return cached ? parts & ~(unsigned)LAYER_DRAW_VALUE : parts | LAYER_DRAW_VALUE;
}

/* lane_load: `count` layers up to `to` recomputed unmeasured on one lane alone, from X0 if
   asked (else from a kept copy). */
static void replay(Walk *walk, Gap gap, int to, int count, bool from_input)
{
    const Config *c = walk->c;
    if (count == 0 && !from_input)
        return;
    WorkStep step = {0};
    if (from_input)
        Layer_declare_input(c, &step.serial);
    else
        passes(&step.serial, (double)c->tokens * c->width);
    visit(walk, &step);
    for (int l = to - count + 1; l <= to; l++) {
        step = (WorkStep){0};
        Layer_declare_draw(c, weight_parts(walk, LAYER_DRAW_ALL, true), &step.serial);
        query_key(c, l, false, &step.serial);
        WorkList tail; /* on the caller's thread alone: not claimed apart */
        lane_layer(c, gap, l, (LaneLayer){.first_seed = walk->first}, &step.serial, &tail);
        visit(walk, &step);
    }
}

void Work_spectra(const Config *c, WorkStep *out)
{
    double T = c->tokens;
    Gap applied = Work_applied_gap(c, c->gap);
    if (Spectra_from_diagonal(c, applied))
        passes(&out->lane[0], T * T);
    else
        add(&out->lane[0], WORK_EIGENVALUES, T, T, 0, 1);
    add(&out->lane[1], WORK_SINGULAR_VALUES, T, T, 0, 1);
}

/* keep_shown_spectra's readings of the shown matrix as built, before its spectra overwrite
   it: the map on one lane, the rows' entropies on the other; then the spectra, `beside` the
   layers after it or not. */
static void shown_spectra(Walk *walk, bool beside)
{
    const Config *c = walk->c;
    double T = c->tokens;
    WorkStep step = {0};
    passes(&step.lane[0], T * T);
    passes(&step.lane[1], T * T);
    visit(walk, &step);
    step = (WorkStep){.beside = beside};
    Work_spectra(c, &step);
    visit(walk, &step);
}

/* capture_shown_attention: the shown head's attention of a kept network built again from the
   layer below, its gap removed; then its spectra. */
static void capture(Walk *walk, const SeedPlan *p)
{
    const Config *c = walk->c;
    double T = c->tokens;
    replay(walk, c->gap, c->layer - 1, p->capture_replay, p->input_for_capture);
    WorkStep step = {0};
    Layer_declare_draw(c, weight_parts(walk, LAYER_DRAW_ATTENTION, true), &step.serial);
    if (Layer_logits_through_qk_product(c, c->layer))
        Layer_declare_qk_product(c, &step.serial);
    Layer_declare_attention(c, c->layer, c->head - 1, &step.serial);
    passes(&step.serial, T * T); /* the copy capture_built keeps, before gap removal */
    Work_gap_removal(c, c->gap, c->layer, &step.serial);
    visit(walk, &step);
    shown_spectra(walk, false);
}

/* keep_shown_product: the run's network from X0 to the shown layer again where the run did
   not compute those layers itself; the product's steps (layer 1's matrix copied, each later
   one a T×T product and a copy), its map and column mass. */
static void attention_product(Walk *walk, const SeedPlan *p)
{
    const Config *c = walk->c;
    double T = c->tokens;
    if (p->product_replay)
        replay(walk, c->gap, c->layer, c->layer, true);
    WorkStep step = {0};
    product(&step.serial, T, T, T, c->layer - 1);
    passes(&step.serial, T * T * (c->layer + 2));
    visit(walk, &step);
}

/* Layer l of the networks that compute it, after the replays that bring them there. */
static void layer(Walk *walk, const SeedPlan *p, int l)
{
    const Config *c = walk->c;
    const Gap gaps[2] = {c->gap, Gap_toggled(c->gap)};
    bool active[2] = {l >= p->first_layer[0], l >= p->first_layer[1]};
    for (int n = 0; n < 2; n++)
        if (l == p->first_layer[n])
            replay(walk, gaps[n], l - 1, p->replay[n], p->replay_input[n]);
    bool shared = l == 1 && active[0] && active[1] && c->heads == 1;
    WorkStep step = {0};
    bool before = l < p->first_layer[0] || l < p->first_layer[1];
    /* A layer drawn ahead takes its W^Q and W^K from that draw (run.c's run_layer). */
    bool beside_input = l == 1 && walk->layer1_beside;
    bool paired =
        !beside_input && walk->qk_ahead != l && walk->first && Entropy_qk_norms_ahead(c, l);
    bool on_lanes = paired && Work_qk_pair_drawn_on_lanes(c);
    bool drawn_ahead = walk->qk_ahead == l || beside_input || on_lanes;
    unsigned parts =
        drawn_ahead ? LAYER_DRAW_ALL & ~(unsigned)LAYER_DRAW_ATTENTION : LAYER_DRAW_ALL;
    /* Both layers' W^V then on the pair's lanes too (run.c's run_layer). */
    bool values_beside = on_lanes && Work_values_drawn_beside_qk(c, l);
    parts = weight_parts(walk, parts, before);
    if (values_beside || walk->value_ahead == l)
        parts &= ~(unsigned)LAYER_DRAW_VALUE;
    walk->value_ahead = 0;
    Layer_declare_draw(c, parts, &step.serial);
    if (beside_input) {
        /* M_1, its norms and A_1: X0's step */
    } else if (walk->qk_ahead == l) {
        walk->qk_ahead = 0; /* formed beside the layer below */
    } else if (paired) {
        /* run_qk.c's layer_qk_work: the next layer's W^Q and W^K drawn (with this one's, each
           on its lane, Work_qk_pair_drawn_on_lanes), each layer's M_h and norms on a lane of
           its own, then the networks' step. */
        unsigned beside = LAYER_DRAW_ATTENTION | (values_beside ? LAYER_DRAW_VALUE : 0u);
        if (on_lanes) {
            Layer_declare_draw(c, beside, &step.lane[0]);
            Layer_declare_draw(c, beside, &step.lane[1]);
            walk->value_ahead = values_beside ? l + 1 : 0;
        } else {
            Layer_declare_draw(c, LAYER_DRAW_ATTENTION, &step.serial);
        }
        query_key(c, l, true, &step.lane[0]);
        query_key(c, l + 1, true, &step.lane[1]);
        visit(walk, &step);
        step = (WorkStep){0};
        walk->qk_ahead = l + 1;
    } else {
        query_key(c, l, walk->first, &step.serial);
    }
    if (shared) { /* then copied to the counterpart's lane */
        if (!beside_input)
            Layer_declare_attention(c, l, 0, &step.serial);
        passes(&step.serial, (double)c->tokens * c->tokens);
    }
    LaneLayer how = {.first_seed = walk->first, .shared = shared, .measured = true};
    for (int n = 0; n < 2; n++) {
        /* X0 is measured once, for both lanes (run.c's input_layer). */
        how.below_measured = l - 1 >= p->first_layer[n] || (l == 1 && p->input);
        if (active[n])
            lane_layer(c, gaps[n], l, how, &step.lane[n], &step.tail[n]);
    }
    visit(walk, &step);
    if (p->spectra && p->capture_replay < 0 && l == c->layer)
        shown_spectra(walk, true);
}

/* `count` value weights drawn afresh: the gradients' chains of L factors take L − 1 steps, so
   W^V of every layer but one is drawn for them where the cache does not hold it. */
static void value_draws(const Config *c, int count, WorkList *out)
{
    WorkList value = {0};
    Layer_declare_draw(c, LAYER_DRAW_VALUE, &value);
    add_times(out, &value, count);
}

/* gradients.c's value_chain: P2 = W_{ℓ+1}⋯W_L from the top, L − 2 products after the top
   step's scaled copy of W^V_L; `drawing`: W^V drawn for it (W^V_1 only into the cache, where
   the cache holds them: the layers then find them there). */
static void value_chain(const Config *c, bool drawing, WorkList *out)
{
    double d = c->width;
    if (c->depth > 1)
        passes(out, d * d);
    product(out, d, d, d, c->depth > 2 ? c->depth - 2 : 0);
    if (drawing && Model_value_weights_cached(c))
        value_draws(c, c->depth, out);
    else if (drawing)
        value_draws(c, c->depth - 1, out);
}

/* frozen_attention_gradients: P2 (unless it ran beside X0), then each lane's P1, L − 2
   products (ℓ = L's is layer L's step's); W^V drawn again for them where the cache does not
   hold them. */
static void gradients(Walk *walk, const SeedPlan *p)
{
    const Config *c = walk->c;
    const Gap gaps[2] = {c->gap, Gap_toggled(c->gap)};
    double T = c->tokens, d = c->width, L = c->depth;
    for (int n = 0; n < 2; n++)
        replay(walk, gaps[n], c->depth, p->gradient_replay[n], false);
    WorkStep step = {0};
    bool cached = Model_value_weights_cached(c), on_lanes = Work_gradient_values_drawn_on_lanes(c);
    if (!walk->values_chained)
        value_chain(c, !cached, &step.serial);
    /* W^V_1..W^V_{L−2}: alone, or W^V_1 alone and the rest two at a time on the lanes, the
       first of each two on lane 0. */
    int draws = !cached && c->depth > 2 ? c->depth - 2 : 0, alone = on_lanes && draws ? 1 : draws;
    value_draws(c, alone, &step.serial);
    visit(walk, &step);
    step = (WorkStep){0};
    for (int n = 0; n < 2; n++) {
        product(&step.lane[n], T, d, d, L > 2 ? L - 2 : 0);
        value_draws(c, (draws - alone + 1 - n) / 2, &step.lane[n]);
    }
    visit(walk, &step);
}

/* run.c's input_layer: layer 1's W^Q and W^K drawn on X0's lane or before the lanes
   (Work_layer_one_drawn_on_input_lane), its M_1, norms and shared attention after X0 on X0's
   lane, layer 2's W^Q and W^K and query-key work after the value chain on its lane. */
static void layer_one_beside(Walk *walk, WorkStep *step)
{
    const Config *c = walk->c;
    Layer_declare_draw(c, LAYER_DRAW_ATTENTION,
                       Work_layer_one_drawn_on_input_lane(c) ? &step->lane[0] : &step->serial);
    query_key(c, 1, true, &step->lane[0]);
    Layer_declare_attention(c, 1, 0, &step->lane[0]);
    Layer_declare_draw(c, LAYER_DRAW_ATTENTION, &step->lane[1]);
    query_key(c, 2, true, &step->lane[1]);
    walk->qk_ahead = 2;
}

void Work_seed_steps(const ModelPlan *plan, int s, int through,
                     bool (*visit_step)(void *context, const WorkStep *step), void *context)
{
    const Config *c = &plan->config;
    const SeedPlan *p = &plan->seed[s];
    Walk walk = {.c = c,
                 .first = s == 0,
                 .values_chained = p->input && Work_value_chain_beside_input(p->gradients),
                 .visit = visit_step,
                 .context = context};
    if (p->input) { /* X0, beside the value chain where the gradients are due */
        WorkStep step = {0};
        WorkList *x0 = walk.values_chained ? &step.lane[0] : &step.serial;
        Layer_declare_input(c, x0);
        bool bounding = walk.first && Entropy_input_norm_measured(c, 1);
        measure(c, GAP_OFF, 0, bounding, x0);
        if (bounding)
            measured_input_bound(c, x0);
        passes(x0, 2.0 * c->tokens * c->width); /* X0 and its frozen start copied */
        if (walk.values_chained)
            value_chain(c, true, &step.lane[1]);
        walk.layer1_beside = walk.values_chained && walk.first && p->first_layer[0] == 1 &&
                             p->first_layer[1] == 1 && Work_layer_one_beside_input(c);
        if (walk.layer1_beside)
            layer_one_beside(&walk, &step);
        if (walk.layer1_beside && Work_value_one_beside_input(c)) {
            Layer_declare_draw(c, LAYER_DRAW_VALUE, &step.lane[1]);
            walk.value_ahead = 1;
        }
        visit(&walk, &step);
    }
    if (p->capture_replay >= 0)
        capture(&walk, p);
    int last = through < c->depth ? through : c->depth;
    for (int l = 1; l <= last && !walk.stopped; l++)
        if (l >= p->first_layer[0] || l >= p->first_layer[1])
            layer(&walk, p, l);
    if (through > c->depth) /* run_seed waits for the shown eigenvalues after its layers */
        visit(&walk, &(WorkStep){.join = true});
    if (through > c->depth && p->product && !walk.stopped)
        attention_product(&walk, p);
    if (through > c->depth && p->gradients)
        gradients(&walk, p);
}

static void totals_add_list(WorkTotals *t, const WorkList *l)
{
    for (int i = 0; i < l->count; i++) {
        const Work *w = &l->item[i];
        double min = w->m < w->n ? w->m : w->n;
        if (w->kind == WORK_PRODUCT)
            t->product_flops += 2 * w->m * w->n * w->k * w->times;
        else if (w->kind == WORK_GRAM)
            t->gram_flops += w->m * w->n * w->k * w->times;
        else if (w->kind == WORK_NORMALS)
            t->normals += w->m * w->times;
        t->calls[w->kind] += w->times;
        t->size_cubed[w->kind] += w->m * w->n * min * w->times;
    }
}

void WorkTotals_add(WorkTotals *t, const WorkStep *step)
{
    totals_add_list(t, &step->serial);
    totals_add_list(t, &step->lane[0]);
    totals_add_list(t, &step->lane[1]);
}
