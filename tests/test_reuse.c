/* Computed once: a workspace that keeps its layers gives, for every key sequence, the result
 * a fresh workspace gives, bit for bit, while computing only what is missing.  Budgets from
 * "everything fits" down to "no token matrix fits" exercise the recomputation from the
 * nearest kept layer. */
#include "testing.h"

#include "attnscope/config.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"

#include <stdlib.h>
#include <string.h>

/* Bitwise equality of doubles, so that NaN equals NaN and -0 differs from 0. */
static void assert_same_doubles(const double *a, const double *b, int n, const char *what)
{
    if ((a == NULL) != (b == NULL))
        fail_msg("%s: one array is missing", what);
    for (int i = 0; a && i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(double)) != 0)
            fail_msg("%s[%d]: kept %.17g, fresh %.17g", what, i, a[i], b[i]);
}

static void assert_same_curves(const Curves *a, const Curves *b, int n, const char *what)
{
    char name[96];
    const double *pairs[][2] = {
        {a->stable_rank, b->stable_rank},     {a->stable_rank_minus_one, b->stable_rank_minus_one},
        {a->log10_norm, b->log10_norm},       {a->token_similarity, b->token_similarity},
        {a->gradient_norm, b->gradient_norm}, {a->log10_gradient_norm, b->log10_gradient_norm}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        snprintf(name, sizeof name, "%s curve %zu", what, i);
        assert_same_doubles(pairs[i][0], pairs[i][1], n, name);
    }
}

static void assert_same_result(const Result *kept, const Result *fresh)
{
    const Config *c = &fresh->config;
    int layers = c->depth + 1, T = c->tokens;
    assert_true(Config_equal(&kept->config, c));
    assert_int_equal(kept->layers_done, fresh->layers_done);
    assert_int_equal(kept->seeds_done, fresh->seeds_done);
    assert_same_curves(&kept->network, &fresh->network, layers, "network");
    assert_same_curves(&kept->counterpart, &fresh->counterpart, layers, "counterpart");
    assert_same_doubles(kept->stable_rank_band.mean, fresh->stable_rank_band.mean, layers, "mean");
    assert_same_doubles(kept->stable_rank_band.std, fresh->stable_rank_band.std, layers, "std");
    assert_same_doubles(kept->counterpart_band.mean, fresh->counterpart_band.mean, layers,
                        "counterpart mean");
    assert_same_doubles(kept->counterpart_band.std, fresh->counterpart_band.std, layers,
                        "counterpart std");
    assert_int_equal(kept->spectra_ready, fresh->spectra_ready);
    assert_int_equal(kept->shown_gap, fresh->shown_gap);
    assert_int_equal(kept->outliers_removed, fresh->outliers_removed);
    assert_int_equal(kept->outlier, fresh->outlier);
    assert_int_equal(kept->eigenvalues_exact, fresh->eigenvalues_exact);
    assert_same_doubles((const double *)kept->eigenvalues, (const double *)fresh->eigenvalues,
                        2 * T, "eigenvalues");
    assert_same_doubles(kept->singular_values, fresh->singular_values, T, "singular values");
    assert_same_doubles(&kept->logit_std, &fresh->logit_std, 1, "logit std");
    assert_same_doubles((const double *)&kept->readouts, (const double *)&fresh->readouts,
                        (int)(sizeof(Readouts) / sizeof(double)), "readouts");
    assert_memory_equal(kept->measure_counts.routes, fresh->measure_counts.routes,
                        sizeof kept->measure_counts.routes);
    assert_int_equal(kept->warnings.count, fresh->warnings.count);
    for (int i = 0; i < fresh->warnings.count; i++)
        assert_string_equal(kept->warnings.text[i], fresh->warnings.text[i]);
}

typedef struct {
    int layers; /* after_layer calls: layers computed (both networks count once) */
} Count;

static bool count_layer(void *context, int seed_index, int layer, int depth)
{
    (void)seed_index, (void)layer, (void)depth;
    ((Count *)context)->layers++;
    return true;
}

/* How a key changes the settings. */
typedef enum {
    SHOWN_LAYER_BY, /* `]`, `[` */
    DEPTH_BY,       /* `L`, `l` (the shown layer follows the depth down) */
    DEPTH,
    GAP_TOGGLE, /* `g`: off <-> center */
    GAP,
    SEEDS,
    SEED_BY, /* `r` and back */
    ATTENTION,
    MASK,
    LAYERNORM,
    SKIP,
    SIGMA_QK,
    HEADS,
    HEAD, /* `}`, `{` */
    OUTPUT,
    LOGIT_SCALE,
    LN_PLACE,
    LN_SCALE,
    BRANCH_GAIN,
    MLP,
    MLP_RATIO,
    INIT,
} Change;

/* A step of a key sequence: how the settings change, and how many layers the kept
   workspace may compute for it at most (-1: no bound, the weights changed). */
typedef struct {
    const char *key;
    Change change;
    double value;
    int layers_at_most;
} Step;

static void apply(Config *c, const Step *s)
{
    int v = (int)s->value;
    switch (s->change) {
    case SHOWN_LAYER_BY:
        c->layer += v;
        break;
    case DEPTH_BY:
        c->depth += v;
        if (c->layer > c->depth)
            c->layer = c->depth;
        break;
    case DEPTH:
        c->depth = v;
        break;
    case GAP_TOGGLE:
        c->gap = c->gap == GAP_OFF ? GAP_CENTER : GAP_OFF;
        break;
    case GAP:
        c->gap = (Gap)v;
        break;
    case SEEDS:
        c->seeds = v;
        break;
    case SEED_BY:
        c->seed += (uint64_t)(int64_t)v;
        break;
    case ATTENTION:
        c->attention = (Attention)v;
        break;
    case MASK:
        c->mask = (Mask)v;
        break;
    case LAYERNORM:
        c->layernorm = (LayerNorm)v;
        break;
    case SKIP:
        c->skip = (Skip)v;
        break;
    case SIGMA_QK:
        c->sigma_qk = s->value;
        break;
    case HEADS:
        c->heads = v;
        c->head = 1;
        break;
    case HEAD:
        c->head = v;
        break;
    case OUTPUT:
        c->output = (OutputProjection)v;
        break;
    case LOGIT_SCALE:
        c->logit_scale = (LogitScale)v;
        break;
    case LN_PLACE:
        c->ln_place = (LnPlace)v;
        break;
    case LN_SCALE:
        c->ln_scale = (LnScale)v;
        break;
    case BRANCH_GAIN:
        c->branch_gain = s->value;
        break;
    case MLP:
        c->mlp = (Mlp)v;
        break;
    case MLP_RATIO:
        c->mlp_ratio = v;
        break;
    case INIT:
        c->init = (InitScheme)v;
        break;
    }
}

static const Step STEPS[] = {
    {"]", SHOWN_LAYER_BY, 1, 0},
    {"]", SHOWN_LAYER_BY, 1, 0},
    {"[", SHOWN_LAYER_BY, -1, 0},
    {"L", DEPTH_BY, 1, 1},
    {"L", DEPTH_BY, 1, 1},
    {"l", DEPTH_BY, -1, 0},
    {"g", GAP_TOGGLE, 0, 0},
    {"]", SHOWN_LAYER_BY, 1, 0},
    {"g", GAP_TOGGLE, 0, 0},
    {"G deflate", GAP, GAP_DEFLATE, -1},
    {"g off", GAP, GAP_OFF, 0},
    {"G outliers", GAP, GAP_OUTLIERS, -1},
    {"g off", GAP, GAP_OFF, 0},
    {"seeds 3", SEEDS, 3, 2 * 6},
    {"L", DEPTH_BY, 1, 3},
    {"seeds 1", SEEDS, 1, 0},
    {"r", SEED_BY, 1, -1},
    {"r back", SEED_BY, -1, 0},
    {"a markov", ATTENTION, ATTENTION_MARKOV, -1},
    {"]", SHOWN_LAYER_BY, 1, 0},
    {"g", GAP_TOGGLE, 0, 0},
    {"m causal", MASK, MASK_CAUSAL, -1},
    {"[", SHOWN_LAYER_BY, -1, 0},
    {"n ln", LAYERNORM, LAYERNORM_LN, -1},
    {"L", DEPTH_BY, 1, 1},
    {"k plain", SKIP, SKIP_PLAIN, -1},
    {"g", GAP_TOGGLE, 0, 0},
    {"S", SIGMA_QK, 2.5, -1},
    {"a identity", ATTENTION, ATTENTION_IDENTITY, -1},
    {"depth 12", DEPTH, 12, -1},
    {"l", DEPTH_BY, -1, 0},
    {"g", GAP_TOGGLE, 0, 0},
    /* The block: another shown head costs no layer, like another shown layer. */
    {"a softmax", ATTENTION, ATTENTION_SOFTMAX, -1},
    {"H 4", HEADS, 4, -1},
    {"} 3", HEAD, 3, 0},
    {"]", SHOWN_LAYER_BY, 1, 0},
    {"{ 2", HEAD, 2, 0},
    {"g", GAP_TOGGLE, 0, 0},
    {"L", DEPTH_BY, 1, 1},
    {"O orthogonal", OUTPUT, OUTPUT_ORTHOGONAL, -1},
    {"} 4", HEAD, 4, 0},
    {"O gaussian", OUTPUT, OUTPUT_GAUSSIAN, -1},
    {"y linear", LOGIT_SCALE, LOGIT_SCALE_LINEAR, -1},
    {"[", SHOWN_LAYER_BY, -1, 0},
    {"h 1", HEADS, 1, -1},
    {"F pre", LN_PLACE, LN_PLACE_PRE, -1},
    {"]", SHOWN_LAYER_BY, 1, 0},
    {"I sqrt-d", LN_SCALE, LN_SCALE_SQRT_D, -1},
    {"L", DEPTH_BY, 1, 1},
    {"b 0.5", BRANCH_GAIN, 0.5, -1},
    {"g", GAP_TOGGLE, 0, 0},
    {"X gelu", MLP, MLP_GELU, -1},
    {"]", SHOWN_LAYER_BY, 1, 0},
    {"u 2", MLP_RATIO, 2, -1},
    {"L", DEPTH_BY, 1, 1},
    {"H 2", HEADS, 2, -1},
    {"C orthogonal", INIT, INIT_ORTHOGONAL, -1},
    {"]", SHOWN_LAYER_BY, 1, 0},
    {"C gpt2", INIT, INIT_GPT2, -1},
};

/* Drives the first `steps` of the key sequence at T tokens and width d on a kept workspace
   with this budget and on fresh workspaces. */
static void drive_at(int T, int d, size_t steps, size_t budget)
{
    char err[256];
    Workspace *kept = Workspace_new();
    Result *a = Result_new(), *b = Result_new();
    assert_non_null(kept);
    Workspace_keep_layers(kept, budget);
    Config c = Config_default();
    c.tokens = T;
    c.width = d;
    c.depth = 4;
    for (size_t i = 0; i <= steps; i++) {
        int bound = -1;
        if (i > 0) {
            apply(&c, &STEPS[i - 1]);
            bound = STEPS[i - 1].layers_at_most;
        }
        assert_int_equal(Config_validate(&c, err, sizeof err), 0);
        Count count = {0};
        Progress counting = {.after_layer = count_layer, .context = &count};
        assert_int_equal(Model_run(&c, kept, a, &counting, err, sizeof err), 0);
        Workspace *fresh = Workspace_new();
        assert_int_equal(Model_run(&c, fresh, b, NULL, err, sizeof err), 0);
        Workspace_free(fresh);
        if (bound >= 0 && count.layers > bound)
            fail_msg("step %zu ('%s'): %d layers computed, at most %d expected", i,
                     STEPS[i - 1].key, count.layers, bound);
        assert_same_result(a, b);
    }
    Result_free(a);
    Result_free(b);
    Workspace_free(kept);
}

static void drive(size_t budget)
{
    drive_at(12, 16, sizeof STEPS / sizeof STEPS[0], budget);
}

/* Above T·d·min(T, d) = 64³ with d < 2T the logits go through M = W^Q W^Kᵀ: another shown
   layer of a kept network captures its attention through the same M, bit for bit the fresh
   run's; the gap modes, depths, seeds and a new seed up to "r back". */
static void test_kept_equals_fresh_through_qk_product(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 64;
    c.width = 72;
    assert_true(Layer_logits_through_qk_product(&c, 1));
    drive_at(64, 72, 18, (size_t)1 << 30);
}

static void test_kept_equals_fresh_everything_fits(void **state)
{
    (void)state;
    drive((size_t)1 << 30);
}

/* Room for about three layers' token matrices (T·d doubles each, and the frozen products):
   the rest are computed again from the nearest one kept. */
static void test_kept_equals_fresh_small_budget(void **state)
{
    (void)state;
    drive(3 * 2 * sizeof(double) * 12 * 16);
}

/* No token matrix fits: every layer is computed again from the input. */
static void test_kept_equals_fresh_no_matrix_fits(void **state)
{
    (void)state;
    drive(1);
}

/* The run's dgeev calls and its plan agree for each key of the shown matrix: with two heads,
   `}` shows another head's matrix, whose eigenvalues the run computes (one dgeev) although
   the network is kept, and the plan must say so (it prices the spectra from it). */
static void test_plan_prices_the_spectra_the_run_computes(void **state)
{
    (void)state;
    char err[256];
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    Workspace_keep_layers(w, (size_t)1 << 30);
    Config c = Config_default();
    c.tokens = 12;
    c.width = 16;
    c.depth = 3;
    c.heads = 2;
    const struct {
        const char *key;
        int head, layer;
        Gap gap;
        int dgeev; /* the run's */
    } keys[] = {{"start", 1, 1, GAP_OFF, 1}, {"}", 2, 1, GAP_OFF, 1}, {"{", 1, 1, GAP_OFF, 0},
                {"]", 1, 2, GAP_OFF, 1},     {"}", 2, 2, GAP_OFF, 1}, {"g", 2, 2, GAP_CENTER, 1},
                {"g", 2, 2, GAP_OFF, 0}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        c.head = keys[i].head;
        c.layer = keys[i].layer;
        c.gap = keys[i].gap;
        ModelPlan plan;
        assert_int_equal(Model_plan(&c, w, &plan), 0);
        bool planned = plan.seed[0].spectra;
        ModelPlan_release(&plan);
        LinalgTally tally = {0};
        Workspace_take_tally(w, &tally);
        memset(&tally, 0, sizeof tally);
        assert_int_equal(Model_run(&c, w, r, NULL, err, sizeof err), 0);
        Workspace_take_tally(w, &tally);
        if (tally.calls[LINALG_EIGENVALUES] != keys[i].dgeev)
            fail_msg("key %zu ('%s'): the run computed %d dgeev, expected %d", i, keys[i].key,
                     tally.calls[LINALG_EIGENVALUES], keys[i].dgeev);
        if (planned != (tally.calls[LINALG_EIGENVALUES] > 0))
            fail_msg("key %zu ('%s'): the plan says spectra %d, the run computed %d dgeev", i,
                     keys[i].key, planned, tally.calls[LINALG_EIGENVALUES]);
    }
    Result_free(r);
    Workspace_free(w);
}

/* A valid value of setting s for c other than its own, or false when none of the nearby
   ones validates (or the model does not use s there). */
static bool changed_setting(const Setting *s, const Config *c, Config *out)
{
    char err[256];
    if (s->in_use && !s->in_use(c))
        return false;
    double v = Setting_get(s, c);
    double candidates[] = {v + 1, v - 1, 2 * v, v / 2, v + 0.5, 0};
    if (s->kind == SETTING_PATTERN) /* codes that are patterns: GL, then all */
        assert_int_equal(Config_window_layers_code("GL", &candidates[0]), 0);
    for (int i = 1; s->kind == SETTING_PATTERN && i < 5; i++)
        candidates[i] = candidates[0];
    int n = (int)(sizeof candidates / sizeof candidates[0]);
    for (int i = 0; i < (s->kind == SETTING_ENUM ? s->names->count : n); i++) {
        double x = s->kind == SETTING_ENUM ? i : candidates[i];
        if (s->kind != SETTING_DOUBLE)
            x = floor(x);
        if (x == v || x < s->min || (s->kind != SETTING_ENUM && x > s->max))
            continue;
        *out = *c;
        Setting_put(s, out, x);
        if (Config_validate(out, err, sizeof err) == 0)
            return true;
    }
    return false;
}

/* Settings that put every setting to use in one of them: heads, W^O, an MLP, pre-LN, a
   windowed causal mask, a gap mode, an ensemble; then the factorised schemes' own, then
   QK-norm and RoPE's with a gated MLP of its own hidden width, then gpt2's and the embedding
   input's. */
static Config reuse_base(int which)
{
    Config c = Config_default();
    c.tokens = 8;
    c.width = 16;
    c.depth = 3;
    c.layer = 2;
    c.seeds = 2;
    c.heads = 2;
    c.head = 2;
    c.output = OUTPUT_GAUSSIAN;
    c.mlp = MLP_GELU;
    c.mlp_ratio = 2;
    c.layernorm = LAYERNORM_LN;
    c.ln_place = LN_PLACE_PRE;
    c.skip = SKIP_SCALED;
    c.mask = MASK_WINDOW_CAUSAL;
    c.window = 3;
    c.gap = GAP_CENTER;
    c.ln_scale = LN_SCALE_SQRT_D; /* so that --ln-eps is in use */
    if (which == 1) {
        c.init = INIT_CUTTING_SKIP;
        c.output = OUTPUT_ORTHOGONAL;
    } else if (which == 2) {
        c.init = INIT_MIMETIC;
        c.mask = MASK_FULL;
        c.attention = ATTENTION_MARKOV;
    } else if (which == 3) { /* the 2026 block's queries and keys, its gated MLP */
        c.qk_norm = QK_NORM_HEAD;
        c.rope = ROPE_HALF;
        /* Llama 3.1's scaling at a context where d_h = 8's wavelengths 2π·10^(2k/4) fall in
           each of its three regions (kept below 1024/4, blended, divided above 1024). */
        c.rope_scaling = ROPE_SCALING_LLAMA3;
        c.rope_original_context = 1024;
        c.nope_every = 2;
        c.mlp = MLP_SWIGLU;
        c.mlp_hidden = 24;
        c.sink = 0.5; /* so that --sink-std is in use */
        assert_int_equal(Config_window_layers_code("LG", &c.window_layers), 0);
    } else if (which == 4) { /* GPT-2's scheme: W^O and W2 ÷√(2L), so the depth is a weight */
        c.init = INIT_GPT2;
    } else if (which == 5) { /* embedding rows, more tokens than d, OLMo-core's init */
        c.init = INIT_TRUNC_NORMAL;
        c.depth_scale = DEPTH_SCALE_PER_LAYER;
        c.input = INPUT_EMBEDDING;
        c.vocab = 6; /* repeated ids */
        c.tokens = 24;
        c.mask = MASK_CAUSAL;
    }
    return c;
}

/* Each setting changed in turn, after a run on a keeping workspace: what the run reuses
   under the setting's declared class (the settings table) gives the result a fresh
   workspace gives, bit for bit.  A setting declared in too weak a class (a weight setting
   as the shown matrix's, say) reuses stale layers and fails here. */
static void test_each_setting_reuses_what_its_class_allows(void **state)
{
    (void)state;
    char err[256];
    Result *kept_result = Result_new(), *fresh_result = Result_new();
    bool changed_once[SETTINGS_MAX] = {false};
    for (int which = 0; which < 6; which++) {
        Config base = reuse_base(which);
        assert_int_equal(Config_validate(&base, err, sizeof err), 0);
        for (int i = 0; i < Settings_count(); i++) {
            const Setting *s = Settings_at(i);
            Config changed;
            if (!changed_setting(s, &base, &changed))
                continue;
            changed_once[i] = true;
            Workspace *kept = Workspace_new(), *fresh = Workspace_new();
            Workspace_keep_layers(kept, (size_t)1 << 30);
            assert_int_equal(Model_run(&base, kept, kept_result, NULL, err, sizeof err), 0);
            Count count = {0};
            Progress counting = {.after_layer = count_layer, .context = &count};
            assert_int_equal(Model_run(&changed, kept, kept_result, &counting, err, sizeof err), 0);
            assert_int_equal(Model_run(&changed, fresh, fresh_result, NULL, err, sizeof err), 0);
            assert_same_result(kept_result, fresh_result);
            /* The weights' class computes every layer of every seed again; the shown
               matrix's none. */
            if (s->reuse == REUSE_WEIGHTS && count.layers != changed.depth * changed.seeds)
                fail_msg("--%s: %d layers computed after a change of the weights", s->name,
                         count.layers);
            if (s->reuse == REUSE_SHOWN && count.layers != 0)
                fail_msg("--%s: %d layers computed for another shown matrix", s->name,
                         count.layers);
            Workspace_free(kept);
            Workspace_free(fresh);
        }
    }
    /* A setting whose needs name a checkpoint (--norm-gain-offset: its gains) is in use in
       no drawn network, so no base here can change it. */
    for (int i = 0; i < Settings_count(); i++)
        if (!changed_once[i] &&
            !(Settings_at(i)->needs && strstr(Settings_at(i)->needs, "weights=FILE")))
            fail_msg("--%s was changed in no base configuration", Settings_at(i)->name);
    Result_free(kept_result);
    Result_free(fresh_result);
}

/* A run stopped inside its work keeps the layers it finished: the next run continues. */
static bool stop_after_three(void *context, int seed_index, int layer, int depth)
{
    (void)seed_index, (void)depth;
    ((Count *)context)->layers++;
    return layer < 3;
}

static void test_stopped_run_is_continued(void **state)
{
    (void)state;
    char err[256];
    Workspace *kept = Workspace_new();
    Result *a = Result_new(), *b = Result_new();
    Workspace_keep_layers(kept, (size_t)1 << 30);
    Config c = Config_default();
    c.tokens = 12;
    c.width = 16;
    c.depth = 6;
    Count count = {0};
    Progress stopping = {.after_layer = stop_after_three, .context = &count};
    assert_int_equal(Model_run(&c, kept, a, &stopping, err, sizeof err), 0);
    assert_int_equal(a->layers_done, 3);
    Count more = {0};
    Progress counting = {.after_layer = count_layer, .context = &more};
    assert_int_equal(Model_run(&c, kept, a, &counting, err, sizeof err), 0);
    assert_int_equal(more.layers, 3);
    Workspace *fresh = Workspace_new();
    assert_int_equal(Model_run(&c, fresh, b, NULL, err, sizeof err), 0);
    Workspace_free(fresh);
    assert_same_result(a, b);
    Result_free(a);
    Result_free(b);
    Workspace_free(kept);
}

/* The budget bounds the token matrices kept. */
static void test_budget_is_respected(void **state)
{
    (void)state;
    char err[256];
    Workspace *kept = Workspace_new();
    Result *r = Result_new();
    size_t layer_bytes = 2 * sizeof(double) * 16 * 24;
    Workspace_keep_layers(kept, 5 * layer_bytes);
    Config c = Config_default();
    c.tokens = 16;
    c.width = 24;
    c.depth = 20;
    assert_int_equal(Model_run(&c, kept, r, NULL, err, sizeof err), 0);
    assert_true(Workspace_kept_bytes(kept) <= 5 * layer_bytes);
    assert_true(Workspace_kept_bytes(kept) > 0);
    Workspace_keep_layers(kept, layer_bytes);
    assert_true(Workspace_kept_bytes(kept) <= layer_bytes);
    Result_free(r);
    Workspace_free(kept);
}

int main(void)
{
    Linalg_set_blas_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_equals_fresh_everything_fits),
        cmocka_unit_test(test_kept_equals_fresh_through_qk_product),
        cmocka_unit_test(test_kept_equals_fresh_small_budget),
        cmocka_unit_test(test_kept_equals_fresh_no_matrix_fits),
        cmocka_unit_test(test_plan_prices_the_spectra_the_run_computes),
        cmocka_unit_test(test_each_setting_reuses_what_its_class_allows),
        cmocka_unit_test(test_stopped_run_is_continued),
        cmocka_unit_test(test_budget_is_respected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
