/* The conditioning of every layer of a network and its counterpart (docs/model.md §8): each
 * network runs through the layer step of layer.h (the one Model_run runs), whose observer
 * hands over the sub-block's input and every head's attention; at that input the layer's
 * Jacobian, its dominant term and their κ are taken (conditioning_numbers.c, through
 * conditioning.c's products and conditioning_extreme.c's extremes). */
#include "attnscope/conditioning.h"

#include "attnscope/attention.h"
#include "attnscope/conditioning_kron.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"

#include "conditioning_run_internal.h"

#include <cblas.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CURVES_PER_NETWORK = 13 };

/* The one list of a network's curves, for allocation and release. */
static void curve_slots(ConditioningCurves *c, double **slots[CURVES_PER_NETWORK])
{
    double **list[CURVES_PER_NETWORK] = {
        &c->kappa_attention,         &c->kappa_value_output, &c->kappa_dominant,
        &c->kappa_attention_product, &c->kappa_jacobian,     &c->kappa_jacobian_lower,
        &c->kappa_jacobian_skip,     &c->jacobian_norm,      &c->jacobian_s_min,
        &c->jacobian_s_min_error,    &c->premise_ratio,      &c->log10_norm,
        &c->jacobian_norm_error};
    memcpy(slots, list, sizeof list);
}

const ConditioningSeries CONDITIONING_SERIES[] = {
    {"kappa_attention", offsetof(ConditioningCurves, kappa_attention), "κ(A_ℓ)"},
    {"kappa_value_output", offsetof(ConditioningCurves, kappa_value_output), "κ(W_VO,ℓ)"},
    {"kappa_dominant", offsetof(ConditioningCurves, kappa_dominant), "κ(B_ℓ) = κ(W_VO)κ(A)"},
    {"kappa_attention_product", offsetof(ConditioningCurves, kappa_attention_product),
     "κ(A_ℓ⋯A_1)"},
    {"kappa_jacobian", offsetof(ConditioningCurves, kappa_jacobian), "κ(K_ℓ)"},
    {"kappa_jacobian_lower", offsetof(ConditioningCurves, kappa_jacobian_lower),
     "a proved lower bound on κ(K_ℓ)"},
    {"kappa_jacobian_skip", offsetof(ConditioningCurves, kappa_jacobian_skip), "κ(a·I + b′·K_ℓ)"},
    {"jacobian_norm", offsetof(ConditioningCurves, jacobian_norm), "‖K_ℓ‖₂"},
    {"jacobian_norm_error", offsetof(ConditioningCurves, jacobian_norm_error),
     "bound on the error of ‖K_ℓ‖₂"},
    {"jacobian_s_min", offsetof(ConditioningCurves, jacobian_s_min), "s_min(K_ℓ)"},
    {"jacobian_s_min_error", offsetof(ConditioningCurves, jacobian_s_min_error),
     "bound on the error of s_min(K_ℓ)"},
    {"premise_ratio", offsetof(ConditioningCurves, premise_ratio), "‖E_ℓ‖₂ / s_min(B_ℓ)"},
};
const int CONDITIONING_SERIES_COUNT = sizeof CONDITIONING_SERIES / sizeof CONDITIONING_SERIES[0];

const char *ConditioningRoute_name(ConditioningRoute route)
{
    static const char *const names[] = {
        [CONDITIONING_ROUTE_STRUCTURE] = "structure", [CONDITIONING_ROUTE_EXACT] = "exact",
        [CONDITIONING_ROUTE_KRONECKER] = "kronecker", [CONDITIONING_ROUTE_LANCZOS] = "lanczos",
        [CONDITIONING_ROUTE_BEYOND] = "beyond",       [CONDITIONING_ROUTE_INEXACT] = "inexact",
        [CONDITIONING_ROUTE_OVERFLOW] = "overflow"};
    return names[route];
}

const double *ConditioningSeries_values(const ConditioningSeries *s, const ConditioningCurves *c)
{
    return *(double *const *)((const char *)c + s->offset);
}

void Conditioning_release(Conditioning *out)
{
    ConditioningCurves *nets[2] = {&out->network, &out->counterpart};
    for (int n = 0; n < 2; n++) {
        double **slots[CURVES_PER_NETWORK];
        curve_slots(nets[n], slots);
        for (int i = 0; i < CURVES_PER_NETWORK; i++) {
            free(*slots[i]);
            *slots[i] = NULL;
        }
    }
    free(out->layers_attention_sv);
    free(out->layers_value_output_sv);
    free(out->layers_jacobian_sv);
    out->layers_attention_sv = out->layers_value_output_sv = out->layers_jacobian_sv = NULL;
    out->attention_singular_values = out->value_output_singular_values = NULL;
    out->jacobian_singular_values = NULL;
}

/* The doubles of each buffer of a run for c (one list for allocation, release and the memory
   estimate); the Jacobian's are apart. */
enum { RUN_BUFFERS = LAYER_BUFFERS + 22 };
static int run_plan(ConditioningRun *r, const Config *c, bool exact, LayerBuffer plan[RUN_BUFFERS])
{
    size_t T = (size_t)c->tokens, d = (size_t)c->width, td = T * d, dd = d * d, tt = T * T;
    size_t H = (size_t)c->heads, hidden = c->mlp != MLP_NONE ? (size_t)Config_mlp_hidden(c) : 0;
    size_t scratch = Init_scratch_doubles(c), projection = Init_doubles(c, MATRIX_QUERY);
    if (scratch < dd)
        scratch = dd;
    if (scratch < tt)
        scratch = tt;
    /* One set of step buffers runs both networks, the gap-removing one too. */
    Layer_buffers(c, &r->step, true, plan);
    LayerWeights *w = &r->weights;
    const LayerBuffer own[RUN_BUFFERS - LAYER_BUFFERS] = {
        {&w->query, projection},
        {&w->key, projection},
        {&w->value, projection},
        {&w->output, c->output != OUTPUT_IDENTITY ? projection : 0},
        {&w->mlp_in, hidden * d},
        {&w->mlp_out, hidden * d},
        {&w->mlp_up, Config_mlp_gated(c) ? hidden * d : 0},
        {&w->markov, c->attention == ATTENTION_MARKOV ? H * tt : 0},
        {&w->sink, Config_has_sink(c) ? H : 0},
        {&r->input, td},
        {&r->wvo, dd},
        {&r->m, H * dd},
        {&r->wvo_head, H > 1 ? H * dd : 0},
        {&r->scratch, scratch},
        {&r->soft, H * tt},
        {&r->applied, H * tt},
        {&r->product, tt},
        {&r->product_next, tt},
        {&r->sv_a, T},
        {&r->sv_w, d},
        {&r->jacobian_sv, exact ? T * d : 0},
        {&r->witness, exact ? 0 : 4 * td},
    };
    memcpy(plan + LAYER_BUFFERS, own, sizeof own);
    return RUN_BUFFERS;
}

static void run_free(ConditioningRun *r)
{
    LayerBuffer plan[RUN_BUFFERS];
    int n = run_plan(r, r->c, r->exact, plan);
    for (int i = 0; i < n; i++)
        free(*plan[i].buffer);
    free(r->jacobian);
    free(r->jacobian_copy);
    DenseExtremes_free(r->extremes);
    free(r->blocks);
    free(r->mean_centred);
    KronFactors_free(r->kron);
    SaWork_free(r->sa);
    Linalg_free(r->la);
    RandomStream_free(r->random);
}

static int run_alloc(ConditioningRun *r)
{
    LayerBuffer plan[RUN_BUFFERS];
    int n = run_plan(r, r->c, r->exact, plan);
    for (int i = 0; i < n; i++)
        if (plan[i].doubles && !(*plan[i].buffer = malloc(sizeof(double) * plan[i].doubles)))
            return -1;
    if (r->exact && (!(r->jacobian = malloc(sizeof(double) * r->n * r->n)) ||
                     !(r->jacobian_copy = malloc(sizeof(double) * r->n * r->n)) ||
                     !(r->extremes = DenseExtremes_new())))
        return -1;
    r->blocks = calloc((size_t)r->heads, sizeof(SaBlock));
    r->mean_centred = calloc((size_t)r->heads, sizeof(bool));
    r->random = RandomStream_new();
    r->la = r->step.la = Linalg_new();
    r->sa = SaWork_new();
    if (!r->exact && !(r->kron = KronFactors_new()))
        return -1;
    return r->blocks && r->mean_centred && r->random && r->la && r->sa ? 0 : -1;
}

static int curves_alloc(ConditioningCurves *c, int depth)
{
    double **slots[CURVES_PER_NETWORK];
    curve_slots(c, slots);
    for (int i = 0; i < CURVES_PER_NETWORK; i++) {
        double *v = malloc(sizeof(double) * (size_t)(depth + 1));
        if (!v)
            return -1;
        for (int l = 0; l <= depth; l++)
            v[l] = NAN;
        *slots[i] = v;
    }
    return 0;
}

/* The weights of a layer, drawn by the layer step's Layer_draw as Model_run draws them, then
   what the Jacobian reads of them: per head M_h = W^Q_h W^K_hᵀ and W_VO,h = W^V_h W^O_h, and
   the layer's W_VO = W^V W^O. */
static int layer_weights(ConditioningRun *r, int layer)
{
    const Config *c = r->c;
    const LayerWeights *w = &r->weights;
    int d = r->d, dh = Config_head_width(c), inner = Config_heads_width(c);
    size_t dd = (size_t)d * d;
    int info = Layer_draw(r->random, r->la, c, c->seed, layer, LAYER_DRAW_ALL, w, r->scratch);
    if (info)
        return info;
    /* Grouped keys and values: head h reads its key/value head g's blocks W^K_g, W^V_g, and
       each head's term of the Jacobian is the one-head term with those (the heads only add). */
    if (Attention_has_query_key(c->attention))
        info = Layer_qk_product(r->la, c, w->query, w->key, r->m);
    if (info)
        return info;
    /* The step's logits through these M_h where the run's take them (the same product, the
       same bits), so that the pass computes the run's network. */
    r->weights.qk_product = Layer_logits_through_qk_product(c, layer) ? r->m : NULL;
    bool grouped = Config_kv_heads(c) < r->heads;
    if (c->output == OUTPUT_IDENTITY && !grouped)
        memcpy(r->wvo, w->value, sizeof(double) * dd);
    else if (!grouped)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, d, d, inner, 1.0, w->value, d,
                    w->output, inner, 0.0, r->wvo, d);
    /* Head h writes its d_h columns of the concatenation (H·d_h wide), which W^O's rows h·d_h..
       map: without an output projection (H·d_h = d) those are the identity's, so W_VO,h is
       W^V_h in its own columns. */
    for (int h = 0; r->heads > 1 && h < r->heads; h++) {
        double *vo = r->wvo_head + dd * (size_t)h;
        const double *v = w->value + (size_t)Config_kv_head_of(c, h) * dh * d;
        if (c->output == OUTPUT_IDENTITY) {
            memset(vo, 0, sizeof(double) * dd);
            memcpy(vo + (size_t)h * dh * d, v, sizeof(double) * (size_t)dh * d);
        } else {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, d, d, dh, 1.0, v, d,
                        w->output + (size_t)h * dh, inner, 0.0, vo, d);
        }
    }
    /* With shared W^V the layer's W_VO is no longer W^V W^O but the heads' sum. */
    for (int h = 0; grouped && h < r->heads; h++)
        for (size_t i = 0; i < dd; i++)
            r->wvo[i] = (h ? r->wvo[i] : 0.0) + r->wvo_head[dd * (size_t)h + i];
    return 0;
}

/* Singular values of the m×m matrix a, descending, a left as it was (decomposed in scratch). */
static int singular_values(ConditioningRun *r, int m, const double *a, double *s)
{
    memcpy(r->scratch, a, sizeof(double) * (size_t)m * m);
    return Linalg_singular_values(r->la, m, m, r->scratch, s);
}

/* One network's pass through the layers: what it writes, and what it noted so far. */
typedef struct {
    ConditioningRun *r;
    Gap gap;
    int network; /* 0: the network, 1: its counterpart */
    ConditioningCurves *out;
    Conditioning *result;
    bool shown_numbers; /* the network's: every layer's singular values into result */
    const char *role;   /* "the", "the counterpart" */
    int layer;
    double log_scale; /* the tokens' scale the step carries apart */
    bool product_resolved, jacobian_noted, norm_noted;
    /* Of the layer's heads, as the step applied them: */
    bool own_derivative; /* every head's gap mode has the softmax's derivative (off, center) */
    Gap shown_gap;       /* the shown head's gap mode as applied */
} Pass;

static int pass_branch_input(void *context, const double *input)
{
    Pass *p = context;
    memcpy(p->r->input, input, sizeof(double) * p->r->n);
    return 0;
}

static void pass_built(void *context, int head, const double *logits, const double *attention)
{
    (void)logits;
    Pass *p = context;
    size_t tt = (size_t)p->r->T * p->r->T;
    memcpy(p->r->soft + tt * (size_t)head, attention, sizeof(double) * tt);
}

static int pass_applied(void *context, int head, const double *attention, GapOutcome outcome,
                        const Warnings *gap_warnings)
{
    Pass *p = context;
    size_t tt = (size_t)p->r->T * p->r->T;
    memcpy(p->r->applied + tt * (size_t)head, attention, sizeof(double) * tt);
    /* Centring subtracts 1/n_i from rows that sum to 1, a constant; with sinks, or on a kind
       whose rows do not sum to 1, each row's mean, which moves with X: the Jacobian centres
       Ȧ's rows the same way.  Gap uniform subtracts the constant 11ᵀ/T.  Deflation and outlier
       removal subtract what A's eigen- or singular vectors make: no derivative here. */
    const Config *c = p->r->c;
    bool stochastic = Attention_is_row_stochastic(c->attention) && !Config_has_sink(c);
    p->r->mean_centred[head] = outcome.applied == GAP_CENTER && !stochastic;
    p->own_derivative &= outcome.applied == GAP_OFF || outcome.applied == GAP_CENTER ||
                         outcome.applied == GAP_UNIFORM;
    if (head == p->r->c->head - 1) {
        p->shown_gap = outcome.applied;
        for (int i = 0; i < gap_warnings->count; i++)
            Warnings_add(&p->result->warnings, "%s", gap_warnings->text[i]);
    }
    const Progress *progress = p->r->progress;
    if (progress && progress->attention_applied)
        progress->attention_applied(progress->context, p->network, p->layer, head, attention);
    return 0;
}

/* The Jacobian's view of the layer the step computed: one SaBlock per head, at the
   sub-block's input, with its M_h, W_VO,h and attention as built and as applied. */
static void layer_blocks(ConditioningRun *r)
{
    const Config *c = r->c;
    size_t tt = (size_t)r->T * r->T, dd = (size_t)r->d * r->d;
    bool input_independent = Attention_is_input_independent(c->attention);
    for (int h = 0; h < r->heads; h++)
        r->blocks[h] = (SaBlock){.T = r->T,
                                 .d = r->d,
                                 .x = r->input,
                                 .m = input_independent ? NULL : r->m + dd * (size_t)h,
                                 .scale = Init_logit_scale(c),
                                 .wvo = r->heads > 1 ? r->wvo_head + dd * (size_t)h : r->wvo,
                                 .softmax = r->soft + tt * (size_t)h,
                                 .applied = r->applied + tt * (size_t)h,
                                 .mean_centred = r->mean_centred[h]};
}

/* κ(A_ℓ) of the shown head, κ(W_VO), κ(B) for one head, the singular values of the shown
   layer, and κ(A_ℓ⋯A_1).  *s_min_b: s_min(B) for one head where both are resolved. */
static int attention_numbers(Pass *p, double *s_min_b)
{
    ConditioningRun *r = p->r;
    ConditioningCurves *out = p->out;
    int T = r->T, d = r->d, l = p->layer;
    size_t tt = (size_t)T * T;
    const double *shown_applied = r->applied + tt * (size_t)(r->c->head - 1);
    int info;
    if ((info = singular_values(r, T, shown_applied, r->sv_a)) ||
        (info = singular_values(r, d, r->wvo, r->sv_w)))
        return info;
    out->kappa_attention[l] = Conditioning_kappa(r->sv_a[0], r->sv_a[T - 1], T);
    out->kappa_value_output[l] = Conditioning_kappa(r->sv_w[0], r->sv_w[d - 1], d);
    /* One head: κ(B) = κ(W_VO)·κ(A) exactly; s_min(B) only where both are resolved. */
    *s_min_b = NAN;
    if (r->heads == 1) {
        out->kappa_dominant[l] = out->kappa_attention[l] * out->kappa_value_output[l];
        out->dominant_route[l] = CONDITIONING_ROUTE_KRONECKER;
        *s_min_b = isnan(out->kappa_dominant[l]) ? NAN : r->sv_a[T - 1] * r->sv_w[d - 1];
    }
    if (p->shown_numbers) {
        memcpy(p->result->layers_attention_sv + (size_t)(l - 1) * T, r->sv_a, sizeof(double) * T);
        memcpy(p->result->layers_value_output_sv + (size_t)(l - 1) * d, r->sv_w,
               sizeof(double) * d);
    }
    /* A_ℓ⋯A_1, kept at unit Frobenius norm (κ does not see the scale); the buffer of the
       applied matrix is its transpose to BLAS. */
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, T, T, 1.0, shown_applied, T, r->product,
                T, 0.0, r->product_next, T);
    double pnorm = cblas_dnrm2((int)tt, r->product_next, 1);
    double *swap = r->product;
    r->product = r->product_next;
    r->product_next = swap;
    if (pnorm > 0 && isfinite(pnorm)) {
        cblas_dscal((int)tt, 1.0 / pnorm, r->product, 1);
        if ((info = singular_values(r, T, r->product, r->sv_a)))
            return info;
        out->kappa_attention_product[l] = Conditioning_kappa(r->sv_a[0], r->sv_a[T - 1], T);
    }
    if (p->product_resolved && isnan(out->kappa_attention_product[l])) {
        p->product_resolved = false;
        Warnings_add(&p->result->warnings,
                     "kappa_attention_product of %s network: beyond double precision "
                     "(s_min below T*eps*s_max) from layer %d, null there",
                     p->role, l);
    }
    return 0;
}

/* The SaWork prepared for the layer's heads (their m NULL where K is not taken), with what the
   layer does around f (SaWork_shape): QK-norm, RoPE, the soft-cap, a branch LN. */
static int prepare_layer(ConditioningRun *r, int layer, bool jacobian)
{
    layer_blocks(r);
    for (int h = 0; !jacobian && h < r->heads; h++)
        r->blocks[h].m = NULL;
    const LayerAffine *affine = Layer_affine(r->c, layer);
    SaShape shape = {.c = r->c,
                     .layer = layer,
                     .query = r->weights.query,
                     .key = r->weights.key,
                     .query_gain = affine ? affine->query_norm_gain : NULL,
                     .key_gain = affine ? affine->key_norm_gain : NULL,
                     .branch_gain = affine ? affine->norm[NORM_ATTENTION_OUT].gain : NULL};
    return SaWork_prepare_heads(r->sa, r->blocks, r->heads) || SaWork_shape(r->sa, &shape) ? -1 : 0;
}

/* J_LN = (P − y·yᵀ/m)/ρ sends 1 to 0 where LN centres (P1 = 0, ⟨y, 1⟩ = 0), and y itself
   where the rows are cut to unit norm (ε = 0): K = J_LN·(B + E) is singular there. */
static bool branch_norm_singular(const Config *c)
{
    return Layer_branch_norm(c) && (c->layernorm == LAYERNORM_LN || c->ln_scale == LN_SCALE_UNIT);
}

/* Whether token 1's own attention weight a_h moves with x_1 under a causal mask: a sink (the
   softmax over itself and the sink), or a kind other than the softmax (whose single entry is
   1 whatever x_1). */
static bool first_token_weight_moves(const Config *c)
{
    return Attention_has_query_key(c->attention) &&
           (c->attention != ATTENTION_SOFTMAX || Config_has_sink(c));
}

/* Under a causal mask token 1 sees itself alone: y_1 = Σ_h a_h(x_1)·x_1 W^V_g W^O_h, with g the
   group of head h.  Its derivative in δ is
     Σ_g (δ W^V_g) M_g  +  Σ_h (∇a_h·δ) v_h,   M_g = Σ_{h∈g} a_h W^O_h,  v_h = x_1 W^V_g W^O_h.
   The first term lies in S = Σ_g rowspace(M_g), of dimension ≤ G·d_h (M_g has d_h rows); the
   second adds the H vectors v_h where a_h moves.  But Σ_{h∈g} a_h v_h = (x_1 W^V_g) M_g lies in
   rowspace(M_g) ⊂ S: in a group with some a_h ≠ 0 one of its v_h is in S plus the others, so
   each group adds at most |g| − 1 beyond S; in a group whose a_h are all 0, M_g = 0 and the
   group adds |g| ≤ d_h + |g| − 1 with nothing in S.  Either way the rank is ≤ G·d_h + H − G,
   whatever the weights (gap centring makes the row 0, lower still).  Below d, K's first row
   of blocks is rank deficient: K is singular. */
static int first_token_rank(const Config *c)
{
    int moving = first_token_weight_moves(c) ? c->heads - Config_kv_heads(c) : 0;
    return Layer_kv_width(c) + moving;
}

static bool first_token_singular(const Config *c)
{
    return (c->mask == MASK_CAUSAL || c->mask == MASK_WINDOW_CAUSAL) &&
           first_token_rank(c) < c->width;
}

/* Why K is singular under grouped K/V and a causal mask (first_token_rank), as it holds for
   token 1's weights: fixed (the softmax's 1), or moving with x_1. */
static void warn_first_token(const Config *c, Warnings *warnings)
{
    if (!first_token_weight_moves(c)) {
        Warnings_add(warnings,
                     "conditioning: grouped K/V and a causal mask: token 1 sees itself alone, "
                     "y_1 = x_1 W_VO, and W_VO has rank <= G*d_h = %d < d, so K is singular too: "
                     "kappa_jacobian is null (infinite)",
                     Layer_kv_width(c));
        return;
    }
    Warnings_add(warnings,
                 "conditioning: grouped K/V and a causal mask: token 1 sees itself alone, y_1 = "
                 "sum_h a_h(x_1) x_1 W^V_g W^O_h with its weight a_h moving with x_1 (%s), whose "
                 "derivative has rank <= G*d_h + H - G = %d < d (each group's sum_h a_h x_1 W^V_g "
                 "W^O_h is the first term's at x_1), so K is singular too: kappa_jacobian is null "
                 "(infinite)",
                 c->attention == ATTENTION_SOFTMAX ? "a sink" : ATTENTION_NAMES.names[c->attention],
                 first_token_rank(c));
}

/* Why K is singular whatever the weights, in a few words for the screen (the first of the
   proved cases that holds), or "" where it is not known to be. */
static void singular_reason(const Config *c, char *out, size_t size)
{
    out[0] = '\0';
    if (Config_heads_width(c) < c->width)
        snprintf(out, size, "H·d_h = %d < d = %d", Config_heads_width(c), c->width);
    else if (first_token_singular(c))
        snprintf(out, size, "causal, token 1's rank ≤ %d < d", first_token_rank(c));
    else if (branch_norm_singular(c))
        snprintf(out, size, "%s-LN's Jacobian sends %s to 0", LN_PLACE_NAMES.names[c->ln_place],
                 c->layernorm == LAYERNORM_LN ? "1" : "each row");
}

bool Conditioning_dominant_singular_by_structure(const Config *c)
{
    return Layer_kv_width(c) < c->width || branch_norm_singular(c);
}

bool Conditioning_singular_by_structure(const Config *c)
{
    char reason[sizeof((Conditioning *)0)->jacobian_singular];
    singular_reason(c, reason, sizeof reason);
    return reason[0] != '\0';
}

bool Conditioning_skip_jacobian(const Config *c)
{
    return c->skip != SKIP_NONE && !Layer_pre_norm(c) &&
           !(c->ln_place == LN_PLACE_POST && c->layernorm != LAYERNORM_NONE);
}

/* The Jacobian of the sub-block at its input (B alone where K is not taken). */
static int jacobian_layer(Pass *p, double s_min_b)
{
    ConditioningRun *r = p->r;
    const Config *c = r->c;
    int l = p->layer;
    bool input_independent = Attention_is_input_independent(c->attention);
    /* A checkpoint's query and key biases move the logits ((x_i W^Q + β_Q)(x_j W^K + β_K)ᵀ),
       and with sinks a row sums to 1 − w_i(X), so the value's bias moves with X too: K is not
       differentiated through them.  The other gains and biases do not change K's form: the
       sub-block's input is read after its norm's gain and bias, the value's and W^O's biases add
       A_h·1·β and β_O, which do not move with X, and the norms' gains act through SaShape. */
    const LayerAffine *affine = Layer_affine(c, l);
    bool biased =
        affine &&
        ((Attention_has_query_key(c->attention) && (affine->query_bias || affine->key_bias)) ||
         (Config_has_sink(c) && affine->value_bias));
    bool jacobian = p->own_derivative && !biased;
    /* Several heads, or a branch LN (B is then J_LN·Σ_h W_VO,hᵀ ⊗ A_h, no Kronecker product):
       κ(B) from B's own products. */
    bool dominant_products = r->heads > 1 || Layer_branch_norm(c);
    /* Off the exact path B's Lanczos is not run where B is singular by structure: κ(B), s_min(B)
       and the premise ratio are null there whatever it would find. */
    bool dominant_known = !r->exact && Conditioning_dominant_singular_by_structure(c);
    int info = 0;
    if ((jacobian || dominant_products) && prepare_layer(r, l, jacobian))
        return -1;
    if (dominant_products && dominant_known) {
        /* One head's κ(W_VO)·κ(A) (attention_numbers) is not κ(B) here: B is J_LN·B₀. */
        p->out->kappa_dominant[l] = s_min_b = NAN;
        p->out->dominant_route[l] = CONDITIONING_ROUTE_STRUCTURE;
    }
    if (dominant_products && !dominant_known &&
        (info = ConditioningRun_dominant_numbers(r, p->out, l, &s_min_b)))
        return info;
    if (jacobian && branch_norm_singular(c) && !p->norm_noted) {
        p->norm_noted = true;
        Warnings_add(&p->result->warnings,
                     "the Jacobian of %s network: %s-LN %s, whose Jacobian sends %s of each "
                     "row to 0, so K = J_LN (B + E) is singular: kappa_jacobian, kappa_dominant "
                     "and premise_ratio null (infinite)",
                     p->role, LN_PLACE_NAMES.names[c->ln_place],
                     c->layernorm == LAYERNORM_LN ? "centres F's rows"
                                                  : "cuts F's rows to unit norm",
                     c->layernorm == LAYERNORM_LN ? "the direction 1" : "the row's own direction");
    }
    if (jacobian) {
        bool spectrum = p->shown_numbers && p->result->layers_jacobian_sv &&
                        (!r->shown_spectrum_only || l == c->layer);
        return ConditioningRun_jacobian_numbers(
            r, p->out, l, s_min_b, !input_independent,
            spectrum ? p->result->layers_jacobian_sv + (size_t)(l - 1) * r->n : NULL,
            p->shown_numbers && l == c->layer);
    }
    if (!p->jacobian_noted && biased) {
        p->jacobian_noted = true;
        Warnings_add(
            &p->result->warnings,
            "the Jacobian of %s network is not differentiated through a checkpoint's "
            "%s bias, which moves the logits with X: kappa_jacobian and what needs K "
            "are null where it acts, from layer %d (never a wrong kappa)",
            p->role,
            Config_has_sink(c) && affine->value_bias ? "value (with sinks)" : "query or key", l);
    } else if (!p->jacobian_noted) {
        p->jacobian_noted = true;
        Warnings_add(&p->result->warnings,
                     "the Jacobian of %s network is computed with gap off, center or uniform: "
                     "deflate and outliers subtract what A's eigen- or singular vectors make, "
                     "whose derivative is not taken: null with gap %s",
                     p->role, GAP_NAMES.names[p->shown_gap]);
    }
    return 0;
}

/* Layer p->layer of the pass: its weights, the layer step (which the observer watches for
   the sub-block's input and every head's attention), then the numbers at that input.
   *stopped when the network overflowed (later layers are null). */
static int pass_layer(Pass *p, bool *stopped)
{
    ConditioningRun *r = p->r;
    int l = p->layer;
    int info = layer_weights(r, l);
    if (info)
        return info;
    LayerObserver observer = {.context = p,
                              .branch_input = pass_branch_input,
                              .built = pass_built,
                              .applied = pass_applied};
    LayerStep step = {
        .config = r->c, .layer = l, .weights = &r->weights, .gap = p->gap, .observer = &observer};
    LayerOutcome outcome;
    p->own_derivative = true;
    p->shown_gap = GAP_OFF;
    if ((info = Layer_step(&step, &r->step, &outcome, &p->log_scale)))
        return info;
    *stopped = outcome != LAYER_DONE;
    if (outcome == LAYER_ATTENTION_OVERFLOW) {
        /* Linear attention squares the tokens' scale: its matrix overflows before they do,
           and no SVD of a matrix with infinities exists. */
        Warnings_add(&p->result->warnings,
                     "conditioning of %s network: the attention matrix overflows the "
                     "double range at layer %d, null from there on",
                     p->role, l);
        return 0;
    }
    double s_min_b;
    if ((info = attention_numbers(p, &s_min_b)) || (info = jacobian_layer(p, s_min_b)))
        return info;
    if (outcome == LAYER_TOKENS_OVERFLOW) {
        Warnings_add(&p->result->warnings,
                     "conditioning of %s network: the tokens overflow after layer %d, "
                     "null from there on",
                     p->role, l);
        return 0;
    }
    /* As Measure_tokens reads it from the same X_ℓ and scale, so the two agree bit for bit. */
    p->out->log10_norm[l] = log10(cblas_dnrm2((int)r->n, r->step.x, 1)) + p->log_scale / M_LN10;
    return 0;
}

/* One network of the run, layer by layer: the layer step of Model_run with each layer's
   numbers at the input of its self-attention sub-block (LN(X) before a pre-LN branch).  With
   several heads, κ(A), its product over depth and the shown singular values are the shown
   head's. */
static int network_pass(ConditioningRun *r, Pass *p)
{
    const Config *c = r->c;
    int T = r->T;
    int info = Layer_input(r->random, r->la, c, c->seed, r->step.x, r->step.queries);
    if (info)
        return info;
    p->out->log10_norm[0] = log10(cblas_dnrm2((int)r->n, r->step.x, 1));
    memset(r->product, 0, sizeof(double) * (size_t)T * T);
    for (int i = 0; i < T; i++)
        r->product[i + (size_t)i * T] = 1.0;
    for (p->layer = 1; p->layer <= c->depth; p->layer++) {
        bool stopped = false;
        if ((info = pass_layer(p, &stopped)) || stopped)
            return info;
        const Progress *progress = r->progress;
        if (progress && progress->after_layer &&
            !progress->after_layer(progress->context, p->network, p->layer, c->depth))
            return LINALG_STOPPED;
    }
    return 0;
}

size_t Conditioning_memory_estimate(const Config *c)
{
    return Conditioning_memory_estimate_path(c, true);
}

size_t Conditioning_memory_estimate_path(const Config *c, bool exact)
{
    size_t T = (size_t)c->tokens, d = (size_t)c->width, n = T * d, H = (size_t)c->heads;
    exact = exact && n <= CONDITIONING_EXACT_MAX;
    ConditioningRun sizes = {.c = c};
    LayerBuffer plan[RUN_BUFFERS];
    size_t doubles = 0;
    int count = run_plan(&sizes, c, exact, plan);
    for (int i = 0; i < count; i++)
        doubles += plan[i].doubles;
    /* The SaWork's products per head, every layer's singular values, and the Jacobian
       (exact path) or the Lanczos basis and the witnesses' rounding bound. */
    doubles += H * (3 * n + 2 * T * T) + 2 * n + T * T + SaWork_shape_doubles(c) +
               (size_t)c->depth * (T + d + (exact ? n : 0)) +
               (exact ? 0 : SaWork_product_bounded_doubles((int)T, (int)d, (int)H));
    size_t lanczos = sizeof(double) * n * (LANCZOS_STEPS_MAX + 2);
    if (lanczos > CONDITIONING_LANCZOS_BASIS_BYTES + 2 * sizeof(double) * n)
        lanczos = CONDITIONING_LANCZOS_BASIS_BYTES + 2 * sizeof(double) * n;
    size_t exact_bytes = sizeof(double) * (2 * n * n + DenseExtremes_doubles(n));
    return sizeof(double) * doubles + (exact ? exact_bytes : lanczos);
}

/* Every layer's singular values of the network, NaN until its layer is computed. */
static int layers_alloc(Conditioning *out, bool exact)
{
    size_t L = (size_t)out->config.depth, T = (size_t)out->config.tokens,
           d = (size_t)out->config.width;
    struct {
        double **p;
        size_t n;
    } plan[] = {{&out->layers_attention_sv, L * T},
                {&out->layers_value_output_sv, L * d},
                {&out->layers_jacobian_sv, exact ? L * T * d : 0}};
    for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++) {
        if (!plan[i].n)
            continue;
        if (!(*plan[i].p = malloc(sizeof(double) * plan[i].n)))
            return -1;
        for (size_t j = 0; j < plan[i].n; j++)
            (*plan[i].p)[j] = NAN;
    }
    return 0;
}

void Conditioning_show_layer(Conditioning *k, int layer)
{
    size_t T = (size_t)k->config.tokens, d = (size_t)k->config.width, at = (size_t)(layer - 1);
    bool known = layer >= 1 && layer <= k->config.depth;
    k->config.layer = layer;
    k->attention_singular_values =
        known && k->layers_attention_sv ? k->layers_attention_sv + at * T : NULL;
    k->value_output_singular_values =
        known && k->layers_value_output_sv ? k->layers_value_output_sv + at * d : NULL;
    k->jacobian_singular_values =
        known && k->layers_jacobian_sv ? k->layers_jacobian_sv + at * T * d : NULL;
}

bool Conditioning_exact(const Config *c, const ConditioningControl *control)
{
    return (size_t)c->tokens * c->width <= CONDITIONING_EXACT_MAX && !control->lanczos_only;
}

int Conditioning_run(const Config *c, Conditioning *out, char *err, size_t size)
{
    return Conditioning_run_controlled(c, &(ConditioningControl){0}, out, err, size);
}

/* Why kappa_jacobian_skip is null on the exact path (Conditioning_skip_jacobian false). */
static void warn_no_skip_jacobian(const Config *c, Warnings *w)
{
    if (c->skip == SKIP_NONE)
        Warnings_add(w, "conditioning: no skip (-k none): the block's Jacobian is K itself "
                        "(kappa_jacobian), so kappa_jacobian_skip, kappa(a I + b' K) of "
                        "X <- a X + b' F(X), is null");
    else if (Layer_pre_norm(c))
        Warnings_add(w,
                     "conditioning: with --ln-place %s the branch reads LN(X), so the block's "
                     "Jacobian is a I + b' K J_LN(X), not a I + b' K, and J_LN is not formed: "
                     "kappa_jacobian_skip null",
                     LN_PLACE_NAMES.names[c->ln_place]);
    else
        Warnings_add(w, "conditioning: with --ln-place post the LayerNorm follows the skip, so "
                        "the block's Jacobian is J_LN (a I + b' K), not a I + b' K, and J_LN is "
                        "not formed: kappa_jacobian_skip null");
}

/* Why K (n x n) was not built, for a run off the exact path: its size, the path the caller
   asked for, or the caller's time or memory budget. */
static void warn_not_built(Conditioning *out, const ConditioningControl *control, size_t n)
{
    if (n > CONDITIONING_EXACT_MAX)
        Warnings_add(&out->warnings,
                     "conditioning: T*d = %zu > %d, so K is not built: ||K||_2 by Lanczos "
                     "on K^T K, s_min(K) as said next (null where not certified), "
                     "kappa_jacobian_skip null",
                     n, CONDITIONING_EXACT_MAX);
    else if (control->matrix_free_asked)
        Warnings_add(&out->warnings,
                     "conditioning: K (%zu x %zu) is not built, as --conditioning-path %s asks "
                     "(chosen by the option, not by the time or memory budget), so ||K||_2 is by "
                     "Lanczos on K^T K, s_min(K) as said next (null where not certified), "
                     "kappa_jacobian_skip null",
                     n, n, control->kron_off ? "lanczos" : "kron");
    else
        Warnings_add(&out->warnings,
                     "conditioning: building K (%zu x %zu) does not fit the time or memory "
                     "budget, so ||K||_2 is by Lanczos on K^T K, s_min(K) as said next (null "
                     "where not certified), kappa_jacobian_skip null",
                     n, n);
}

/* Heads of --head-dim's width (H·d_h ≠ d): the value columns fewer than d without grouping
   make W_VO and B singular; heads narrower than d in all make every row of f(X) = [heads]·W^O
   lie in W^O's H·d_h-dimensional row space, so K is singular whatever the mask. */
static void heads_width_warnings(const Config *c, bool grouped, bool narrow, Warnings *w)
{
    int inner = Config_heads_width(c);
    if (narrow && !grouped)
        Warnings_add(w,
                     "conditioning: heads of d_h = %d: W_VO = sum_h W^V_h W^O_h and B read X "
                     "only through the H*d_h = %d value columns, fewer than d = %d, so W_VO and "
                     "B are singular: kappa_value_output and kappa_dominant are null",
                     Config_head_width(c), inner, c->width);
    if (inner < c->width)
        Warnings_add(w,
                     "conditioning: heads of d_h = %d: every row of f(X) = [heads] W^O lies in "
                     "W^O's row space of dimension H*d_h = %d < d = %d, so K is singular: "
                     "kappa_jacobian is null (infinite)",
                     Config_head_width(c), inner, c->width);
}

int Conditioning_run_controlled(const Config *c, const ConditioningControl *control,
                                Conditioning *out, char *err, size_t size)
{
    memset(out, 0, sizeof *out);
    out->config = *c;
    out->counterpart_gap = Gap_toggled(c->gap);
    ConditioningRun r = {.c = c,
                         .progress = control->progress,
                         .T = c->tokens,
                         .d = c->width,
                         .heads = c->heads,
                         .exact = Conditioning_exact(c, control),
                         .kron_off = control->kron_off,
                         .singular = Conditioning_singular_by_structure(c),
                         .skip_jacobian = Conditioning_skip_jacobian(c),
                         .skip_gain = Layer_skip_gain(c),
                         .branch_gain = Layer_branch_gain(c),
                         .shown_spectrum_only = control->shown_spectrum_only};
    r.n = (size_t)r.T * r.d;
    out->jacobian_exact = r.exact;
    out->kron_off = control->kron_off;
    int info = -1;
    if (run_alloc(&r) || curves_alloc(&out->network, c->depth) ||
        curves_alloc(&out->counterpart, c->depth) || layers_alloc(out, r.exact))
        goto done;
    const Progress *p = control->progress;
    Linalg_set_isolation(r.la, control->isolation);
    if (p && p->stop_requested)
        Linalg_set_stop(r.la, (LinalgStop){.requested = p->stop_requested, .context = p->context});
    SaWork_set_stop(r.sa, r.la);
    Pass passes[2] = {{.r = &r,
                       .gap = c->gap,
                       .network = 0,
                       .out = &out->network,
                       .result = out,
                       .shown_numbers = true,
                       .role = "the",
                       .product_resolved = true},
                      {.r = &r,
                       .gap = out->counterpart_gap,
                       .network = 1,
                       .out = &out->counterpart,
                       .result = out,
                       .role = "the counterpart",
                       .product_resolved = true}};
    if ((info = network_pass(&r, &passes[0])) || (info = network_pass(&r, &passes[1])))
        goto done;
    if (!out->jacobian_exact)
        warn_not_built(out, control, r.n);
    if (!out->jacobian_exact && r.singular)
        Warnings_add(&out->warnings,
                     "conditioning: s_min(K) not sought (no Lanczos or Kronecker steps): K is "
                     "singular whatever the weights (its own warning says why), so "
                     "jacobian_s_min, kappa_jacobian and kappa_jacobian_lower are null at every "
                     "layer (s_min = 0, kappa infinite)");
    if (r.norm_uncertain)
        Warnings_add(&out->warnings,
                     "conditioning: at %d of the %d layers of both networks (the first at layer "
                     "%d) the products' rounding leaves ||K||_2 uncertain by more than %g of it "
                     "(jacobian_norm_error, the bound on its error): jacobian_norm and "
                     "kappa_jacobian null there, kappa_jacobian_lower still a proof",
                     r.norm_uncertain, 2 * c->depth, r.first_norm_uncertain,
                     JACOBIAN_NORM_TOLERANCE);
    out->kron = r.tally;
    if (!out->jacobian_exact)
        KronTally_warn(&r.tally, c->depth, &out->warnings);
    if (out->jacobian_exact && !r.skip_jacobian)
        warn_no_skip_jacobian(c, &out->warnings);
    /* Not a failure: the exact value is infinite (first_token_singular). */
    bool grouped = Config_kv_heads(c) < c->heads, narrow = Layer_kv_width(c) < c->width;
    heads_width_warnings(c, grouped, narrow, &out->warnings);
    if (grouped && narrow)
        Warnings_add(&out->warnings,
                     "conditioning: grouped K/V (G = %d): W_VO = sum_h W^V_g W^O_h and B read X "
                     "only through its G*d_h = %d value columns, fewer than d = %d, so W_VO and "
                     "B are singular: kappa_value_output and kappa_dominant are null",
                     Config_kv_heads(c), Layer_kv_width(c), c->width);
    if (grouped && narrow && first_token_singular(c))
        warn_first_token(c, &out->warnings);
    singular_reason(c, out->jacobian_singular, sizeof out->jacobian_singular);
    Conditioning_show_layer(out, c->layer);
done:
    run_free(&r);
    if (info == LINALG_STOPPED) {
        snprintf(err, size, "conditioning at T = %d, d = %d: stopped", c->tokens, c->width);
        Conditioning_release(out);
        return CONDITIONING_STOPPED;
    }
    if (info) {
        if (info == -1)
            snprintf(err, size, "conditioning at T = %d, d = %d: out of memory", c->tokens,
                     c->width);
        else
            snprintf(err, size, "conditioning at T = %d, d = %d: LAPACK failed (info %d)",
                     c->tokens, c->width, info);
        Conditioning_release(out);
        return -1;
    }
    return 0;
}
