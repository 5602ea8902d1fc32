/* The work of each stage of a run (work.h), read off the same rules the layer step follows:
 * the initialisation's (Init_matrix), the gradients' (Model_gradients_unavailable), the
 * value cache's (Model_value_weights_cached), the spectra's (Spectra_from_diagonal) and the
 * plan's (Model_plan).  Sizes are those of the Linalg calls the run makes, so test_cost can
 * compare them with a LinalgTally exactly; what depends on the numbers (the stable rank's
 * route, the outliers removed) is the expectation of docs/model.md §3.
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

/* Products with the Gram matrix the top-eigenpair route takes (1 to 7 in practice), each a
   pass over it, and the passes around them. */
#define LANCZOS_PASSES 10

static void add(WorkList *l, WorkKind kind, double m, double n, double k, double times)
{
    /* The longest list, a replayed layer's weights and lane, holds under 50 items. */
    if (times > 0 && l->count < WORK_LIST_MAX)
        l->item[l->count++] = (Work){.kind = kind, .m = m, .n = n, .k = k, .times = times};
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
    if (how.orthogonal)
        add(out, WORK_ORTHONORMAL, rows, cols, 0, 1);
}

/* Matrix m of the value-output pair: a factor decomposes its target again. */
static void value_or_output(const Config *c, Matrix m, WorkList *out)
{
    if (isnan(Init_matrix(c, m).std))
        factorisation(c, 1, out);
    else
        iid_matrix(c, m, out);
}

/* W^Q and W^K (Init_draw_query_key: one factorisation per head serves both where both are
   factors), or Markov attention's normals. */
static void query_key(const Config *c, WorkList *out)
{
    if (c->attention == ATTENTION_MARKOV)
        add(out, WORK_NORMALS, (double)c->tokens * c->tokens * c->heads, 0, 0, 1);
    if (!Attention_has_query_key(c->attention))
        return;
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

/* The weights run_layer draws (all of them) or capture_shown_attention draws (the logits'
   and W^V); W^V not when the first seed's cache holds it. */
static void weights(const Config *c, bool whole_layer, bool value, WorkList *out)
{
    query_key(c, out);
    if (value)
        value_or_output(c, MATRIX_VALUE, out);
    if (whole_layer && c->output != OUTPUT_IDENTITY)
        value_or_output(c, MATRIX_OUTPUT, out);
    if (whole_layer && c->mlp != MLP_NONE) {
        iid_matrix(c, MATRIX_MLP_IN, out);
        iid_matrix(c, MATRIX_MLP_OUT, out);
        if (Config_mlp_gated(c))
            iid_matrix(c, MATRIX_MLP_UP, out);
    }
}

void Work_layer_weights(const Config *c, WorkList *out)
{
    weights(c, true, true, out);
}

/* ---- one layer of one network -------------------------------------------------------- */

Gap Work_applied_gap(const Config *c, Gap gap)
{
    /* Identity attention has eigenvalue 1 T times: no unique Perron vector. */
    bool deflates = Attention_is_row_stochastic(c->attention) && c->attention != ATTENTION_IDENTITY;
    return gap == GAP_DEFLATE && !deflates ? GAP_CENTER : gap;
}

/* Gap_apply on one T×T matrix. */
static void gap_removal(const Config *c, Gap gap, WorkList *out)
{
    double T = c->tokens, tt = T * T;
    switch (gap) {
    case GAP_OFF:
        return;
    case GAP_CENTER:
    case GAP_UNIFORM:
        passes(out, tt);
        return;
    case GAP_DEFLATE:
        /* The Perron vector of a triangular matrix is e1; else from one solve. */
        if (Attention_is_row_stochastic(c->attention) && !Spectra_attention_triangular(c)) {
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

/* Stage 2 with several heads (layer.c's project_heads): the H queries and the G key/value
   heads' keys (with queries and keys) and values (when asked). */
static void project_heads(const Config *c, bool query_key, bool values, WorkList *out)
{
    double T = c->tokens, d = c->width, kv = Layer_kv_width(c);
    double shared = (query_key ? 1 : 0) + (values ? 1 : 0); /* products of width G·d_h */
    if (kv == d) {                                          /* one item, as the cost sums it */
        product(out, T, d, d, shared + (query_key ? 1 : 0));
        return;
    }
    product(out, T, d, d, query_key ? 1 : 0);
    product(out, T, kv, d, shared);
}

/* A head's logits from X (its queries and keys projected first with one head) and its
   attention matrix built from them. */
static void attention(const Config *c, bool project, WorkList *out)
{
    double T = c->tokens, d = c->width, dh = Config_head_width(c);
    bool exp_kind = c->attention == ATTENTION_SOFTMAX || c->attention == ATTENTION_MARKOV ||
                    c->attention == ATTENTION_SIGMOID;
    if (Attention_has_query_key(c->attention)) {
        if (project)
            product(out, T, d, d, 2);
        product(out, T, T, dh, 1);
        if (c->logit_softcap > 0) /* C·tanh(S/C) on every logit */
            add(out, WORK_BUILD_EXP, T * T, 0, 0, 1);
    }
    add(out, exp_kind ? WORK_BUILD_EXP : WORK_BUILD_PLAIN, T * T, 0, 0, 1);
}

/* The stable rank and the other measures of X (Measure_tokens): the Gram matrix, then the
   route the theory expects: all its eigenvalues at X0 (all equal: the top eigenpair is not
   certified) and while a network keeps its rank, the singular values of X once a
   collapsing network's sr − 1 is below the Gram route's floor (T^(1 − 2ℓ)), the top
   eigenpair otherwise. */
static void measure(const Config *c, Gap gap, int layer, WorkList *out)
{
    double T = c->tokens, d = c->width;
    passes(out, 4 * T * d + LANCZOS_PASSES * T * T);
    add(out, WORK_GRAM, T, T, d, 1);
    /* The centred stable rank: X − 1x̄ᵀ's own Gram matrix and route (at X0 all but one of
       its eigenvalues are equal, like X0's). */
    passes(out, 3 * T * d + LANCZOS_PASSES * T * T);
    add(out, WORK_GRAM, T, T, d, 1);
    if (layer == 0)
        add(out, WORK_SYMMETRIC, T, T, 0, 1);
    bool collapses = gap == GAP_OFF && c->skip == SKIP_NONE &&
                     (c->attention == ATTENTION_SOFTMAX || c->attention == ATTENTION_MARKOV ||
                      c->attention == ATTENTION_UNIFORM);
    if (layer == 0 || (gap != GAP_OFF && c->attention != ATTENTION_IDENTITY))
        add(out, WORK_SYMMETRIC, T, T, 0, 1);
    else if (collapses && (1.0 - 2.0 * layer) * log10(T) < log10(MEASURE_GRAM_FLOOR))
        add(out, WORK_SINGULAR_VALUES, T, d, 0, 1);
}

/* What the first seed's entropy bounds cost a measured layer (run.c): per head, ‖W^Q_h W^K_gᵀ‖₂
   as s_1(A R_Bᵀ), one QR of d×d_h, two products and the singular values of d×d_h, where
   Zhai et al.'s bound holds. */
static void qk_norms(const Config *c, int layer, WorkList *out)
{
    double d = c->width, dh = Config_head_width(c), H = c->heads;
    if (Entropy_zhai_void(c, layer))
        return;
    add(out, WORK_ORTHONORMAL, d, dh, 0, H);
    product(out, dh, dh, d, H);
    product(out, d, dh, dh, H);
    add(out, WORK_SINGULAR_VALUES, d, dh, 0, H);
}

/* A network's share of them: q and p of the attention's input, and ‖X'‖₂ (singular values of
   a T×d copy) where the bound holds. */
static void input_norms(const Config *c, int layer, WorkList *out)
{
    double T = c->tokens, d = c->width;
    passes(out, 3 * T * d);
    if (!Entropy_zhai_void(c, layer))
        add(out, WORK_SINGULAR_VALUES, T, d, 0, 1);
}

typedef struct {
    bool first_seed; /* the frozen products for the gradients */
    bool shared;     /* layer 1's attention was built once for both networks */
    bool measured;
} LaneLayer;

/* network_layer on one lane: each head's attention, gap removal and values, W^O, LayerNorm,
   the MLP, and the measures. */
static void lane_layer(const Config *c, Gap gap, int layer, LaneLayer how, WorkList *out)
{
    double T = c->tokens, d = c->width, dh = Config_head_width(c), H = c->heads, td = T * d;
    bool qk = Attention_has_query_key(c->attention), pre = c->ln_place == LN_PLACE_PRE;
    bool layernorm = c->layernorm != LAYERNORM_NONE;
    bool fused = c->heads == 1 && c->output == OUTPUT_IDENTITY;
    if (layernorm && pre)
        passes(out, 3 * td);
    if (c->heads > 1) /* every head's queries, every key/value head's keys and values at once */
        project_heads(c, qk, true, out);
    WorkList head = {0};
    if (!how.shared)
        attention(c, c->heads == 1, &head);
    passes(&head, T * T);
    gap_removal(c, gap, &head);
    if (how.first_seed && Model_gradients_unavailable(c) == NULL)
        product(&head, T, d, T, 1);
    if (c->heads == 1)
        product(&head, T, d, d, 1);
    product(&head, T, fused ? d : dh, T, 1);
    add_times(out, &head, H);
    if (c->output != OUTPUT_IDENTITY)
        product(out, T, d, d, 1);
    else if (!fused)
        passes(out, td);
    if (layernorm)
        passes(out, 3 * td);
    if (c->mlp != MLP_NONE) {
        double hidden = Config_mlp_hidden(c);
        bool gated = Config_mlp_gated(c);
        if (layernorm)
            passes(out, 3 * td);
        product(out, T, hidden, d, gated ? 2 : 1); /* gated: the gate and the up projection */
        add(out, c->mlp == MLP_RELU ? WORK_PASSES : WORK_BUILD_EXP, T * hidden, 0, 0, 1);
        if (gated) /* act(gate) ⊙ up */
            passes(out, T * hidden);
        product(out, T, d, hidden, 1);
    }
    passes(out, 3 * td);
    if (how.measured)
        measure(c, gap, layer, out);
    if (how.measured && how.first_seed && Entropy_defined(c->attention))
        input_norms(c, layer, out);
}

/* ---- the steps of a seed --------------------------------------------------------------- */

typedef struct {
    const Config *c;
    bool first;
    bool (*visit)(void *context, const WorkStep *step);
    void *context;
    bool stopped;
} Walk;

static void visit(Walk *walk, const WorkStep *step)
{
    if (!walk->stopped)
        walk->stopped = !walk->visit(walk->context, step);
}

/* The first seed's W^V comes from the cache for a layer computed before. */
static bool value_drawn(const Walk *walk, bool computed_before)
{
    return !(walk->first && computed_before && Model_value_weights_cached(walk->c));
}

/* X0: normals orthonormalised (QR of the d×T draw), transposed in. */
static void input(const Config *c, WorkList *out)
{
    double T = c->tokens, d = c->width;
    add(out, WORK_NORMALS, T * d, 0, 0, 1);
    add(out, WORK_ORTHONORMAL, d, T, 0, 1);
    passes(out, 3 * T * d);
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
        input(c, &step.serial);
    else
        passes(&step.serial, (double)c->tokens * c->width);
    visit(walk, &step);
    for (int l = to - count + 1; l <= to; l++) {
        step = (WorkStep){0};
        weights(c, true, value_drawn(walk, true), &step.serial);
        lane_layer(c, gap, l, (LaneLayer){.first_seed = walk->first}, &step.serial);
        visit(walk, &step);
    }
}

void Work_spectra(const Config *c, WorkStep *out)
{
    double T = c->tokens;
    Gap applied = Work_applied_gap(c, c->gap);
    passes(&out->serial, 2 * T * T);
    if (Spectra_from_diagonal(c, applied))
        passes(&out->lane[0], T * T);
    else
        add(&out->lane[0], WORK_EIGENVALUES, T, T, 0, 1);
    add(&out->lane[1], WORK_SINGULAR_VALUES, T, T, 0, 1);
}

/* capture_shown_attention: the shown head's attention of a kept network built again from the
   layer below, its gap removed; then its spectra. */
static void capture(Walk *walk, const SeedPlan *p)
{
    const Config *c = walk->c;
    double T = c->tokens;
    replay(walk, c->gap, c->layer - 1, p->capture_replay, p->input_for_capture);
    WorkStep step = {0};
    weights(c, false, value_drawn(walk, true), &step.serial);
    if (c->heads > 1)
        project_heads(c, Attention_has_query_key(c->attention), false, &step.serial);
    attention(c, c->heads == 1, &step.serial);
    passes(&step.serial, 2 * T * T);
    gap_removal(c, c->gap, &step.serial);
    visit(walk, &step);
    step = (WorkStep){0};
    Work_spectra(c, &step);
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
    weights(c, true, value_drawn(walk, before), &step.serial);
    if (walk->first)
        qk_norms(c, l, &step.serial);
    if (shared) {
        if (c->layernorm != LAYERNORM_NONE && c->ln_place == LN_PLACE_PRE)
            passes(&step.serial, 3.0 * c->tokens * c->width);
        attention(c, true, &step.serial);
        passes(&step.serial, (double)c->tokens * c->tokens);
    }
    LaneLayer how = {.first_seed = walk->first, .shared = shared, .measured = true};
    for (int n = 0; n < 2; n++)
        if (active[n])
            lane_layer(c, gaps[n], l, how, &step.lane[n]);
    visit(walk, &step);
    if (p->spectra && p->capture_replay < 0 && l == c->layer) {
        step = (WorkStep){0};
        Work_spectra(c, &step);
        visit(walk, &step);
    }
}

/* frozen_attention_gradients: P2 = W_{ℓ+1}⋯W_L from the top, then each lane's P1 one product
   per layer; W^V drawn again for each where the cache does not hold them. */
static void gradients(Walk *walk, const SeedPlan *p)
{
    const Config *c = walk->c;
    const Gap gaps[2] = {c->gap, Gap_toggled(c->gap)};
    double T = c->tokens, d = c->width, L = c->depth;
    for (int n = 0; n < 2; n++)
        replay(walk, gaps[n], c->depth, p->gradient_replay[n], false);
    WorkStep step = {0};
    product(&step.serial, d, d, d, L);
    if (!Model_value_weights_cached(c)) {
        WorkList value = {0};
        value_or_output(c, MATRIX_VALUE, &value);
        add_times(&step.serial, &value, 2 * L);
    }
    visit(walk, &step);
    step = (WorkStep){0};
    for (int n = 0; n < 2; n++)
        product(&step.lane[n], T, d, d, L);
    visit(walk, &step);
}

void Work_seed_steps(const ModelPlan *plan, int s, int through,
                     bool (*visit_step)(void *context, const WorkStep *step), void *context)
{
    const Config *c = &plan->config;
    const SeedPlan *p = &plan->seed[s];
    Walk walk = {.c = c, .first = s == 0, .visit = visit_step, .context = context};
    if (p->input) {
        WorkStep step = {0};
        input(c, &step.serial);
        measure(c, GAP_OFF, 0, &step.serial);
        passes(&step.serial, 2.0 * c->tokens * c->width);
        visit(&walk, &step);
    }
    if (p->capture_replay >= 0)
        capture(&walk, p);
    int last = through < c->depth ? through : c->depth;
    for (int l = 1; l <= last && !walk.stopped; l++)
        if (l >= p->first_layer[0] || l >= p->first_layer[1])
            layer(&walk, p, l);
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
