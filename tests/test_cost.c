/* The cost model: Model_plan says what a run will compute (checked against the layers the
 * run then reports), the price grows with every size, and a key the kept layers serve
 * costs far less than a fresh run.  Prices use the reference rates, so every number here
 * is deterministic; how close an estimate comes to the clock is measured by
 * bench/estimate.py, never tested (timing). */
#include "testing.h"

#include "attnscope/cost.h"
#include "attnscope/model.h"

#include <stdlib.h>

static Config small(void)
{
    Config c = Config_default();
    c.tokens = 16;
    c.width = 16;
    c.depth = 4;
    return c;
}

static double fresh(const Config *c)
{
    return Cost_fresh_run(c, Cost_reference_rates(), true);
}

static void test_price_grows_with_every_size(void **state)
{
    (void)state;
    Config base = Config_default();
    base.tokens = base.width = 256;
    base.depth = 8;
    double price = fresh(&base);
    assert_true(price > 0 && isfinite(price));
    Config more = base;
    for (int T = 16; T <= 1024; T *= 2) {
        more.tokens = T;
        more.width = 1024;
        Config next = more;
        next.tokens = 2 * T;
        assert_true(fresh(&next) > fresh(&more));
    }
    more = base;
    more.width = 512;
    assert_true(fresh(&more) > price);
    more = base;
    more.depth = 9;
    assert_true(fresh(&more) > price);
    more = base;
    more.seeds = 2;
    assert_true(fresh(&more) > price);
    /* Seeds add whole networks: nearly proportional (the shown spectra and the gradients
       are the first seed's alone, so a little less). */
    more.seeds = 8;
    double eight = fresh(&more);
    assert_true(eight > 4 * price && eight < 8 * price);
    /* Each kind and mask at every size: finite and positive. */
    for (int a = 0; a < ATTENTION_NAMES.count; a++)
        for (int m = 0; m < MASK_NAMES.count; m++)
            for (int g = 0; g < GAP_NAMES.count; g++) {
                Config c = base;
                c.attention = (Attention)a;
                c.mask = (Mask)m;
                c.gap = (Gap)g;
                double p = fresh(&c);
                assert_true(p > 0 && isfinite(p));
            }
}

/* The O(T³) stages dominate large sizes: doubling T and d costs 6–9 times as much. */
static void test_price_scales_like_the_products(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = c.width = 1024;
    c.depth = 8;
    Config twice = c;
    twice.tokens = twice.width = 2048;
    double ratio = fresh(&twice) / fresh(&c);
    assert_true(ratio > 6 && ratio < 9);
}

static bool count_layer(void *context, int seed_index, int layer, int depth)
{
    (void)seed_index, (void)layer, (void)depth;
    ++*(int *)context;
    return true;
}

/* after_layer calls the plan foresees: the layers where some network computes. */
static int planned_layers(const ModelPlan *plan)
{
    int n = 0;
    for (int s = 0; s < plan->seeds; s++)
        for (int l = 1; l <= plan->config.depth; l++)
            n += l >= plan->seed[s].first_layer[0] || l >= plan->seed[s].first_layer[1];
    return n;
}

typedef struct {
    const char *key;
    int layer_by, depth_by;
    bool toggle_gap;
    int seeds; /* 0: unchanged */
    int seed_by;
    /* What the plan must say: layers computed (ALL: the depth), spectra, and at most this
       share of a fresh run's price (1: no bound). */
    int layers;
    bool spectra;
    double share_at_most;
} Key;

enum { ALL = -1 };

/* `l` and `L` compute the gradients for the new depth again: a shorter network's are not a
   prefix of a longer one's. */
static const Key KEYS[] = {
    {"start", 0, 0, false, 0, 0, ALL, true, 1}, {"]", 1, 0, false, 0, 0, 0, true, 0.3},
    {"]", 1, 0, false, 0, 0, 0, true, 0.3},     {"[", -1, 0, false, 0, 0, 0, false, 0.05},
    {"L", 0, 1, false, 0, 0, 1, false, 0.3},    {"l", 0, -1, false, 0, 0, 0, false, 0.2},
    {"g", 0, 0, true, 0, 0, 0, true, 0.3},      {"g", 0, 0, true, 0, 0, 0, false, 0.05},
    {"E", 0, 0, false, 2, 0, ALL, false, 1},    {"e", 0, 0, false, 1, 0, 0, false, 0.05},
    {"r", 0, 0, false, 0, 1, ALL, true, 1},
};

/* The plan of each key against the kept workspace, then the run: the run reports exactly
   the layers the plan foresaw, at every budget (a small one makes the run compute again
   from the nearest kept layer, which the plan prices as replays). */
static void drive(size_t budget, int size, int depth, bool check_share)
{
    char err[256];
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    assert_non_null(w);
    assert_non_null(r);
    Workspace_keep_layers(w, budget);
    Config c = small();
    c.tokens = c.width = size;
    c.depth = depth;
    c.layer = 2;
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        const Key *k = &KEYS[i];
        c.layer += k->layer_by;
        c.depth += k->depth_by;
        if (k->toggle_gap)
            c.gap = Gap_toggled(c.gap);
        if (k->seeds)
            c.seeds = k->seeds;
        c.seed += (uint64_t)k->seed_by;
        ModelPlan plan;
        assert_int_equal(Model_plan(&c, w, &plan), 0);
        int layers = planned_layers(&plan), expected = k->layers == ALL ? c.depth : k->layers;
        if (layers != expected)
            fail_msg("key %zu (%s): the plan computes %d layers, expected %d", i, k->key, layers,
                     expected);
        assert_int_equal(plan.seed[0].spectra, k->spectra);
        CostSchedule schedule;
        assert_int_equal(CostSchedule_build(&schedule, &plan, Cost_reference_rates(), true), 0);
        double share = CostSchedule_total(&schedule) / fresh(&c);
        if (check_share && !(share <= k->share_at_most))
            fail_msg("key %zu (%s): %.3g of a fresh run, expected at most %.3g", i, k->key, share,
                     k->share_at_most);
        CostSchedule_release(&schedule);
        ModelPlan_release(&plan);

        int counted = 0;
        Progress progress = {.after_layer = count_layer, .context = &counted};
        assert_int_equal(Model_run(&c, w, r, &progress, err, sizeof err), 0);
        if (counted != layers)
            fail_msg("key %zu (%s): the run computed %d layers, the plan said %d", i, k->key,
                     counted, layers);
    }
    Result_free(r);
    Workspace_free(w);
}

static void test_plan_is_what_the_run_computes(void **state)
{
    (void)state;
    drive((size_t)1 << 30, 128, 8, true);
}

/* Room for one layer's token matrices: the others are computed again. */
static void test_plan_with_a_small_budget(void **state)
{
    (void)state;
    drive(2 * sizeof(double) * 16 * 16, 16, 4, false);
}

/* A workspace that keeps nothing plans a fresh run for every key, like NULL. */
static void test_plan_without_keeping(void **state)
{
    (void)state;
    char err[256];
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    Config c = small();
    assert_int_equal(Model_run(&c, w, r, NULL, err, sizeof err), 0);
    c.layer = 3;
    ModelPlan kept, none;
    assert_int_equal(Model_plan(&c, w, &kept), 0);
    assert_int_equal(Model_plan(&c, NULL, &none), 0);
    assert_int_equal(planned_layers(&kept), c.depth);
    assert_memory_equal(kept.seed, none.seed, sizeof *kept.seed);
    ModelPlan_release(&kept);
    ModelPlan_release(&none);
    Result_free(r);
    Workspace_free(w);
}

/* Progress points: after_layer's calls fall in order inside the total, each one before the
   next, and the first stage (before any layer) is part of it. */
static void test_schedule_is_ordered(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = c.width = 128;
    c.depth = 5;
    c.seeds = 3;
    ModelPlan plan;
    CostSchedule s;
    assert_int_equal(Model_plan(&c, NULL, &plan), 0);
    assert_int_equal(CostSchedule_build(&s, &plan, Cost_reference_rates(), false), 0);
    double before = 0, total = CostSchedule_total(&s);
    assert_true(CostSchedule_first_stage(&s) > 0);
    for (int seed = 0; seed < c.seeds; seed++)
        for (int l = 1; l <= c.depth; l++) {
            double done = CostSchedule_done_at(&s, seed, l);
            double next = CostSchedule_next_after(&s, seed, l);
            assert_true(done > before);
            assert_true(next > done || (next == total && seed == c.seeds - 1 && l == c.depth));
            assert_true(next <= total);
            before = done;
        }
    /* The first seed's gradients follow its last layer. */
    assert_true(CostSchedule_done_at(&s, 1, 1) > CostSchedule_next_after(&s, 0, c.depth - 1));
    /* One lane after the other costs more than two at once. */
    CostSchedule one;
    assert_int_equal(CostSchedule_build(&one, &plan, Cost_reference_rates(), true), 0);
    assert_true(CostSchedule_total(&one) < total);
    CostSchedule_release(&one);
    CostSchedule_release(&s);
    ModelPlan_release(&plan);
}

/* The rates scale the prices, and a calibration reads this machine. */
static void test_rates_scale_prices(void **state)
{
    (void)state;
    Config c = Config_default();
    CostRates slow = Cost_reference_rates();
    slow.flops_per_second /= 4;
    slow.scalar_speed /= 4;
    assert_relative(Cost_fresh_run(&c, slow, true), 4 * fresh(&c), 1e-12);
    /* A faster dgemm kernel speeds the products up, not LAPACK's reductions. */
    CostRates fast_products = Cost_reference_rates();
    fast_products.flops_per_second *= 2;
    double faster = Cost_fresh_run(&c, fast_products, true);
    assert_true(faster < fresh(&c) && faster > fresh(&c) / 2);
    CostRates here = Cost_calibrate();
    assert_true(here.flops_per_second > 0 && isfinite(here.flops_per_second));
    assert_true(here.scalar_speed > 0 && isfinite(here.scalar_speed));
    assert_true(Cost_width_sweep(&c, slow, true) >
                Cost_width_sweep(&c, Cost_reference_rates(), true));
    assert_true(Cost_compare(&c, Cost_reference_rates(), true) < fresh(&c));
}

/* The factorised schemes' SVDs are priced: one per head for W^Q, W^K (cutting-skip, mimetic)
   and, under mimetic with an output projection, one per layer for each of W^V and W^O; none
   once the choices draw every matrix i.i.d. */
static void test_price_counts_the_factor_svds(void **state)
{
    (void)state;
    Config normal = Config_default();
    normal.depth = 4;
    normal.output = OUTPUT_GAUSSIAN;
    Config cutting = normal, mimetic = normal, plain = normal;
    cutting.init = INIT_CUTTING_SKIP;
    cutting.output = OUTPUT_ORTHOGONAL;
    mimetic.init = INIT_MIMETIC;
    double one_per_layer = fresh(&cutting) - fresh(&normal);
    assert_true(one_per_layer > 0);
    /* Three decompositions per layer: W^Q W^K^T, W^V, W^O. */
    assert_relative(fresh(&mimetic) - fresh(&normal), 3 * one_per_layer, 1e-9);
    /* Eight heads: eight for W^Q W^K^T, still one each for W^V and W^O. */
    Config heads = cutting, mimetic_heads = mimetic, normal_heads = normal;
    heads.heads = mimetic_heads.heads = normal_heads.heads = 8;
    assert_relative(fresh(&heads) - fresh(&normal_heads), 8 * one_per_layer, 1e-9);
    assert_relative(fresh(&mimetic_heads) - fresh(&normal_heads), 10 * one_per_layer, 1e-9);
    /* Without W^O, W^V is the target itself: only W^Q W^K^T is decomposed. */
    mimetic.output = OUTPUT_IDENTITY;
    plain.output = OUTPUT_IDENTITY;
    assert_relative(fresh(&mimetic) - fresh(&plain), one_per_layer, 1e-9);
    /* W^Q and W^K chosen otherwise: nothing left to decompose. */
    mimetic.init_query = MATRIX_INIT_NORMAL;
    mimetic.init_key = MATRIX_INIT_NORMAL;
    mimetic.init_value = MATRIX_INIT_NORMAL;
    assert_relative(fresh(&mimetic), fresh(&plain), 1e-12);
    /* An SVD costs between d² (its memory-bound part, the normals) and d³: doubling d
       multiplies the share by 4 to 8. */
    Config wide = cutting, wide_normal = normal;
    wide.width = wide_normal.width = 512;
    double ratio = (fresh(&wide) - fresh(&wide_normal)) / one_per_layer;
    assert_true(ratio > 4 && ratio < 8);
}

/* Progress between checkpoints: at the estimated pace, always rising while time passes,
   never past the stage's end; the time left at the pace measured so far. */
static void test_progress_moves_inside_a_stage(void **state)
{
    (void)state;
    /* A single long call (the spectra at T = 2048): one stage, 30 s. */
    CostProgress p = Cost_progress(0, 30, 30, 0, 0);
    assert_close(p.fraction, 0, 0);
    assert_close(p.seconds_left, 30, 1e-12);
    p = Cost_progress(0, 30, 30, 0, 15);
    assert_close(p.fraction, 0.5, 1e-12);
    assert_close(p.seconds_left, 15, 1e-12);
    double before = 0;
    for (double since = 1; since <= 300; since *= 1.5) {
        p = Cost_progress(0, 30, 30, 0, since);
        assert_true(p.fraction > before);
        assert_true(p.fraction < 1);
        assert_true(p.seconds_left > 0);
        before = p.fraction;
    }
    /* Between checkpoints 2 s and 4 s of 10, the clock running twice as slow as estimated:
       the stage takes 4 s of clock, the rest 2·6 s. */
    p = Cost_progress(2, 4, 10, 4, 0);
    assert_close(p.fraction, 0.2, 1e-12);
    assert_close(p.seconds_left, 16, 1e-12);
    p = Cost_progress(2, 4, 10, 4, 2);
    assert_close(p.fraction, 0.3, 1e-12);
    assert_close(p.seconds_left, 14, 1e-12);
    p = Cost_progress(2, 4, 10, 4, 1e3);
    assert_true(p.fraction <= 0.4 && p.fraction > 0.39);
    /* A pace far off (a first checkpoint after a stall) is trusted only within ×5. */
    p = Cost_progress(1, 2, 10, 100, 0);
    assert_close(p.seconds_left, 45, 1e-12);
    /* No estimate: no time left, progress 0. */
    p = Cost_progress(0, 0, NAN, 0, 5);
    assert_true(isnan(p.seconds_left));
    assert_close(p.fraction, 0, 0);
}

/* The conditioning's price: two networks of `depth` equal layers; the exact path (two SVDs of
   T·d × T·d per layer) costs more than Lanczos from T·d = 4096 (the screen then estimates),
   less at the shipped preset's 16×64, and is Lanczos's above the exact limit; the default
   size's Lanczos run is priced above the long-job question's 30 s (it takes ~58 s). */
static void test_conditioning_price(void **state)
{
    (void)state;
    CostRates rates = Cost_reference_rates();
    Config c = Config_default();
    c.tokens = 16;
    c.width = 64;
    c.depth = 12;
    c.init = INIT_CUTTING_SKIP;
    double exact = Cost_conditioning(&c, rates, true),
           lanczos = Cost_conditioning(&c, rates, false);
    assert_true(exact > 0 && exact < 30 && lanczos > 0);
    Config half = c;
    half.depth = 6;
    assert_close(Cost_conditioning(&half, rates, true), exact / 2, 1e-12 * exact);
    /* Two heads: twice the JVP's products, and B's own κ on top of K's. */
    Config heads = c;
    heads.heads = 2;
    assert_true(Cost_conditioning(&heads, rates, true) > 1.5 * exact);
    assert_true(Cost_conditioning(&heads, rates, false) > 1.5 * lanczos);
    Config wide = c;
    wide.tokens = wide.width = 64;
    assert_true(Cost_conditioning(&wide, rates, true) > 4 * Cost_conditioning(&wide, rates, false));
    assert_true(Cost_conditioning(&wide, rates, true) > 30);
    for (int T = 16; T < 256; T *= 2) {
        Config small_T = c, big_T = c;
        small_T.tokens = T;
        big_T.tokens = 2 * T;
        assert_true(Cost_conditioning(&big_T, rates, false) >
                    Cost_conditioning(&small_T, rates, false));
    }
    Config big = Config_default();
    assert_close(Cost_conditioning(&big, rates, true), Cost_conditioning(&big, rates, false), 0);
    assert_true(Cost_conditioning(&big, rates, false) > 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_price_grows_with_every_size),
        cmocka_unit_test(test_price_scales_like_the_products),
        cmocka_unit_test(test_plan_is_what_the_run_computes),
        cmocka_unit_test(test_plan_with_a_small_budget),
        cmocka_unit_test(test_plan_without_keeping),
        cmocka_unit_test(test_schedule_is_ordered),
        cmocka_unit_test(test_rates_scale_prices),
        cmocka_unit_test(test_price_counts_the_factor_svds),
        cmocka_unit_test(test_progress_moves_inside_a_stage),
        cmocka_unit_test(test_conditioning_price),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
