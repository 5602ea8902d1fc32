/* The cost model: Model_plan says what a run will compute (checked against the layers the
 * run then reports), the price grows with every size, and a key the kept layers serve
 * costs far less than a fresh run.  Prices use the reference rates, so every number here
 * is deterministic; how close an estimate comes to the clock is measured by
 * bench/estimate.py, never tested (timing). */
#include "testing.h"

#include "attnscope/conditioning.h"
#include "attnscope/cost.h"
#include "attnscope/entropy.h"
#include "attnscope/init.h"
#include "attnscope/random.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/model.h"
#include "attnscope/work.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

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
    return Cost_fresh_run(c, Cost_reference_rates(), COST_TWO_LANES);
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
    /* Seeds add whole networks, each the same: the first seed's extras (the shown spectra,
       the gradients, the entropy bounds) are priced once, so eight seeds cost the first one
       and seven times what the second adds. */
    double two = fresh(&more);
    more.seeds = 8;
    double eight = fresh(&more);
    assert_true(two - price > 0 && eight < 8 * price);
    assert_true(fabs(eight - (price + 7 * (two - price))) <= 1e-9 * eight);
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
        assert_int_equal(
            CostSchedule_build(&schedule, &plan, Cost_reference_rates(), COST_TWO_LANES), 0);
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
    assert_int_equal(CostSchedule_build(&s, &plan, Cost_reference_rates(), COST_ONE_LANE), 0);
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
    assert_int_equal(CostSchedule_build(&one, &plan, Cost_reference_rates(), COST_TWO_LANES), 0);
    assert_true(CostSchedule_total(&one) < total);
    CostSchedule_release(&one);
    CostSchedule_release(&s);
    ModelPlan_release(&plan);
}

/* Seconds of one list of work, alone. */
static double list_price(const WorkList *l)
{
    WorkStep alone = {.lane = {*l}};
    return Cost_step(&alone, Cost_reference_rates(), COST_ONE_LANE);
}

/* Batch's schedule told with a clock per thread, from the steps a plan declares: a step's
   serial part runs on the caller's thread; while the second thread is still busy after it
   (with the shown eigenvalues) the caller runs lane 0 and lane 1 goes to whichever thread is
   free first (claimed), the lanes' rest first and then their tails the same way, else the
   lanes run at once, and a beside step hands lane 0 to the
   second thread and runs lane 1 itself; a join waits for the second thread. */
typedef struct {
    double caller, second;
} Clocks;

/* A claimed pair of a and b seconds while the second thread is busy until t->second. */
static void clock_claimed(Clocks *t, double a, double b)
{
    if (t->second < t->caller + a) { /* the second thread claims lane 1 */
        t->second = (t->second > t->caller ? t->second : t->caller) + b;
        t->caller += a;
        t->caller = t->second > t->caller ? t->second : t->caller;
        t->second = t->caller;
    } else { /* the caller, after lane 0 */
        t->caller += a + b;
    }
}

static bool clock_step(void *context, const WorkStep *step)
{
    Clocks *t = context;
    if (step->join && t->second > t->caller)
        t->caller = t->second;
    double a = list_price(&step->lane[0]), b = list_price(&step->lane[1]);
    t->caller += list_price(&step->serial);
    bool busy = t->second > t->caller;
    if (busy) { /* each lane's rest, then each lane's tail, claimed */
        double tail_a = list_price(&step->tail[0]), tail_b = list_price(&step->tail[1]);
        clock_claimed(t, a - tail_a, b - tail_b);
        clock_claimed(t, tail_a, tail_b);
    } else if (step->beside) {
        t->second = t->caller + a;
        t->caller += b;
    } else {
        t->caller += a > b ? a : b;
        t->second = t->caller;
    }
    return true;
}

static double clocked(const Config *c)
{
    ModelPlan plan;
    assert_int_equal(Model_plan(c, NULL, &plan), 0);
    double total = 0;
    for (int s = 0; s < plan.seeds; s++) {
        Clocks t = {0, 0};
        Work_seed_steps(&plan, s, c->depth + 1, clock_step, &t);
        total += t.caller;
    }
    ModelPlan_release(&plan);
    return total;
}

/* The shown eigenvalues beside the deeper layers (COST_SPECTRA_BESIDE, batch's lanes): the
   price is the two clocks' (the deeper layers' lanes claimed until dgeev ends, at once
   after), wherever the layer is shown; shown last, nothing follows it and the price is
   the two lanes'; and the shown layer's after_layer comes dgeev's excess over dgesdd
   earlier than with two lanes, which wait for dgeev there. */
static void test_spectra_beside_the_layers_priced(void **state)
{
    (void)state;
    CostRates rates = Cost_reference_rates();
    for (int T = 64; T <= 1024; T *= 4)
        for (int layer = 1; layer <= 4; layer++)
            for (int seeds = 1; seeds <= 2; seeds++) {
                Config c = Config_default();
                c.tokens = c.width = T;
                c.depth = 4;
                c.layer = layer;
                c.seeds = seeds;
                c.attention = T == 256 ? ATTENTION_MARKOV : ATTENTION_SOFTMAX;
                double beside = Cost_fresh_run(&c, rates, COST_SPECTRA_BESIDE);
                assert_relative(beside, clocked(&c), 1e-12);
                if (layer == c.depth)
                    assert_relative(beside, Cost_fresh_run(&c, rates, COST_TWO_LANES), 1e-12);
                WorkStep spectra = {0};
                Work_spectra(&c, &spectra);
                double excess = list_price(&spectra.lane[0]) - list_price(&spectra.lane[1]);
                assert_true(excess > 0);
                ModelPlan plan;
                CostSchedule two, batch;
                assert_int_equal(Model_plan(&c, NULL, &plan), 0);
                assert_int_equal(CostSchedule_build(&two, &plan, rates, COST_TWO_LANES), 0);
                assert_int_equal(CostSchedule_build(&batch, &plan, rates, COST_SPECTRA_BESIDE), 0);
                assert_relative(CostSchedule_done_at(&two, 0, layer) -
                                    CostSchedule_done_at(&batch, 0, layer),
                                excess, 1e-9);
                assert_relative(CostSchedule_total(&batch), beside, 1e-12);
                CostSchedule_release(&two);
                CostSchedule_release(&batch);
                ModelPlan_release(&plan);
            }
}

/* The rates scale the prices, and a calibration reads this machine. */
static void test_rates_scale_prices(void **state)
{
    (void)state;
    Config c = Config_default();
    CostRates slow = Cost_reference_rates();
    slow.flops_per_second /= 4;
    slow.scalar_speed /= 4;
    assert_relative(Cost_fresh_run(&c, slow, COST_TWO_LANES), 4 * fresh(&c), 1e-12);
    /* A faster dgemm kernel speeds the products up, not LAPACK's reductions. */
    CostRates fast_products = Cost_reference_rates();
    fast_products.flops_per_second *= 2;
    double faster = Cost_fresh_run(&c, fast_products, COST_TWO_LANES);
    assert_true(faster < fresh(&c) && faster > fresh(&c) / 2);
    CostRates here = Cost_calibrate();
    assert_true(here.flops_per_second > 0 && isfinite(here.flops_per_second));
    assert_true(here.scalar_speed > 0 && isfinite(here.scalar_speed));
    assert_true(Cost_width_sweep(&c, slow, COST_TWO_LANES) >
                Cost_width_sweep(&c, Cost_reference_rates(), COST_TWO_LANES));
    assert_true(Cost_compare(&c, Cost_reference_rates(), COST_TWO_LANES) < fresh(&c));
}

/* The declared work of a fresh run of c, summed over every step. */
static bool sum_step(void *context, const WorkStep *step)
{
    WorkTotals_add(context, step);
    return true;
}

static WorkTotals declared_work(const Config *c)
{
    ModelPlan plan;
    assert_int_equal(Model_plan(c, NULL, &plan), 0);
    WorkTotals t = {0};
    for (int s = 0; s < plan.seeds; s++)
        Work_seed_steps(&plan, s, c->depth + 1, sum_step, &t);
    ModelPlan_release(&plan);
    return t;
}

/* What a fresh run of c really called (both lanes' Linalg), and the normals its streams
   drew, all roles together (the embedding's token ids are integers, not normals). */
static LinalgTally performed_work(const Config *c, Result *r, double *filled)
{
    char err[256];
    Workspace *w = Workspace_new();
    assert_int_equal(Model_run(c, w, r, NULL, err, sizeof err), 0);
    LinalgTally t = {0};
    Workspace_take_tally(w, &t);
    *filled = 0;
    for (Role role = 0; role < ROLES; role++)
        *filled += role == ROLE_TOKEN_IDS ? 0 : (double)Workspace_filled(w, role);
    Workspace_free(w);
    return t;
}

/* The tally the declared work is checked against counts what Linalg ran: 2·m·n·k flops per
   product (however its columns are blocked), m·m·n per Gram matrix, each long call with its
   m·n·min(m, n); a take resets it. */
static void test_tally_counts_what_linalg_runs(void **state)
{
    (void)state;
    Linalg *la = Linalg_new();
    double a[64] = {0}, b[64] = {0}, c[64], out[64], im[8];
    for (int i = 0; i < 64; i++)
        a[i] = b[i] = (i % 7) - 3.0;
    assert_int_equal(Linalg_gemm(la, false, false, 3, 4, 5, 1.0, a, 3, b, 5, 0.0, c, 3), 0);
    assert_int_equal(Linalg_gram(la, 6, 7, a, c), 0);
    assert_int_equal(Linalg_eigenvalues(la, 5, a, out, im), 0);
    assert_int_equal(Linalg_singular_values(la, 4, 6, b, out), 0);
    LinalgTally t = {0};
    Linalg_tally_take(la, &t, true);
    assert_true(t.product_flops == 2 * 3 * 4 * 5);
    assert_true(t.gram_flops == 6 * 6 * 7);
    assert_int_equal(t.calls[LINALG_GRAM], 1);
    assert_int_equal(t.calls[LINALG_EIGENVALUES], 1);
    assert_true(t.size_cubed[LINALG_EIGENVALUES] == 125);
    assert_int_equal(t.calls[LINALG_SINGULAR_VALUES], 1);
    assert_true(t.size_cubed[LINALG_SINGULAR_VALUES] == 4 * 6 * 4);
    LinalgTally after = {0};
    Linalg_tally_take(la, &after, false);
    assert_true(after.product_flops == 0 && after.calls[LINALG_EIGENVALUES] == 0);
    Linalg_free(la);
}

/* The decompositions whose count the settings decide (the stable rank's route, dsyevd or
   the singular values of X, depends on the numbers: docs/model.md §3). */
static const struct {
    WorkKind declared;
    LinalgRoutine performed;
    const char *name;
} DECOMPOSITIONS[] = {{WORK_EIGENVALUES, LINALG_EIGENVALUES, "dgeev"},
                      {WORK_SVD, LINALG_SVD, "dgesdd with vectors"},
                      {WORK_ORTHONORMAL, LINALG_ORTHONORMAL, "QR"},
                      {WORK_SOLVE, LINALG_SOLVE, "solve"},
                      {WORK_CHOLESKY, LINALG_CHOLESKY, "Cholesky"}};

/* Whether a network of the run vanished or overflowed: the run computes nothing more for
   it (uniform attention with its gap removed is exactly 0, say), which no declaration
   foresees. */
static bool network_died(const Result *r)
{
    for (int i = 0; i < r->warnings.count; i++)
        if (strstr(r->warnings.text[i], "exactly 0 after layer") ||
            strstr(r->warnings.text[i], "overflows the double range"))
            return true;
    return false;
}

/* The declared work against the run's own count: every product's flops (outliers mode:
   the run removes r >= 1 triplets where one is declared, so its excess is whole T×T×1
   products), the Gram matrices and each decomposition, count and sizes.  Returns false,
   comparing nothing, for a run where a network died. */
static bool assert_declared_work(const Config *c, const char *what)
{
    Result *r = Result_new();
    WorkTotals declared = declared_work(c);
    double filled;
    LinalgTally performed = performed_work(c, r, &filled);
    if (network_died(r)) {
        Result_free(r);
        return false;
    }
    if (filled != declared.normals)
        fail_msg("%s: the run drew %.17g normals, the declared work %.17g", what, filled,
                 declared.normals);
    double excess = performed.product_flops - declared.product_flops;
    double removal = 2.0 * c->tokens * c->tokens;
    bool outliers = c->gap == GAP_OUTLIERS;
    if (outliers ? !(excess >= 0 && fmod(excess, removal) == 0) : excess != 0)
        fail_msg("%s: the run's products did %.17g flops, the declared work %.17g", what,
                 performed.product_flops, declared.product_flops);
    /* Where the measure refused the downdate the plan expected (the tokens too close to their
       mean for its accuracy, yet resolved apart), the run formed the centred Gram matrix; and
       where a seed's network fell below the Gram route's floor at another layer than the
       theory says, the deflated route's Gram matrix of the smaller side was formed where the
       plan did not declare it, or not where it did. */
    const MeasureCounts *counts = &r->measure_counts;
    double small = c->tokens < c->width ? c->tokens : c->width;
    double deflated = counts->routes[MEASURE_ROUTE_DEFLATED] - counts->deflated_declared;
    double unplanned = counts->centred_formed_unplanned * (double)c->tokens * c->tokens * c->width +
                       deflated * small * small * (c->tokens + c->width - small);
    if (performed.gram_flops != declared.gram_flops + unplanned)
        fail_msg("%s: Gram flops run %.17g, declared %.17g + %d centred Gram matrices unplanned "
                 "+ %.0f deflated routes unplanned",
                 what, performed.gram_flops, declared.gram_flops, counts->centred_formed_unplanned,
                 deflated);
    /* The flat-spectrum route's Cholesky proofs (T×T each): those the run made in place of
       the ones declared, which the spectrum decides (Work_flat_proofs_declared). */
    double flat = r->measure_counts.flat_proofs - r->measure_counts.flat_proofs_declared;
    double T = c->tokens;
    declared.calls[WORK_CHOLESKY] += flat;
    declared.size_cubed[WORK_CHOLESKY] += flat * T * T * T;
    for (size_t i = 0; i < sizeof DECOMPOSITIONS / sizeof DECOMPOSITIONS[0]; i++) {
        WorkKind k = DECOMPOSITIONS[i].declared;
        LinalgRoutine routine = DECOMPOSITIONS[i].performed;
        if (performed.calls[routine] != declared.calls[k] ||
            performed.size_cubed[routine] != declared.size_cubed[k])
            fail_msg("%s: %s run %d times (sizes %.0f), declared %.0f (sizes %.0f)", what,
                     DECOMPOSITIONS[i].name, performed.calls[routine],
                     performed.size_cubed[routine], declared.calls[k], declared.size_cubed[k]);
    }
    /* The shown matrix's singular values are declared; the route may add X's. */
    if (performed.calls[LINALG_SINGULAR_VALUES] < (r->spectra_ready ? 1 : 0))
        fail_msg("%s: no singular values computed", what);
    Result_free(r);
    return true;
}

static void assert_declared_work_compared(const Config *c, const char *what)
{
    if (!assert_declared_work(c, what))
        fail_msg("%s: a network died, nothing compared", what);
}

static Config work_base(void)
{
    Config c = Config_default();
    c.tokens = 8;
    c.width = 12; /* T != d: a T×d product is no T×T one */
    c.depth = 3;
    c.layer = 2;
    return c;
}

/* Every block feature, each alone and in the combinations the layer step treats apart. */
static void test_declared_work_is_what_the_run_does(void **state)
{
    (void)state;
    Config c = work_base();
    assert_declared_work_compared(&c, "default");
    Config v;
    v = c, v.heads = 2, v.head = 2;
    assert_declared_work_compared(&v, "two heads");
    v = c, v.heads = 3, v.output = OUTPUT_GAUSSIAN;
    assert_declared_work_compared(&v, "three heads, W^O gaussian");
    v = c, v.mlp = MLP_SWIGLU, v.mlp_hidden = 40;
    assert_declared_work_compared(&v, "swiglu, hidden 40");
    v = c, v.heads = 4, v.kv_heads = 2, v.head = 3;
    assert_declared_work_compared(&v, "four heads, two key/value heads");
    v = c, v.heads = 3, v.kv_heads = 1, v.attention = ATTENTION_MARKOV;
    assert_declared_work_compared(&v, "multi-query values, markov");
    /* Heads whose width does not split d (H·d_h = 16 and 8 at d = 12): W^Q, W^K, W^V d×H·d_h
       and W^O H·d_h×d, an orthogonal one of them wide (through its transpose). */
    v = c, v.heads = 2, v.head_dim = 8, v.output = OUTPUT_GAUSSIAN;
    assert_declared_work_compared(&v, "two heads of 8, d = 12");
    v = c, v.heads = 4, v.kv_heads = 2, v.head_dim = 2, v.output = OUTPUT_ORTHOGONAL, v.head = 3;
    v.qk_norm = QK_NORM_FULL, v.rope = ROPE_HALF;
    assert_declared_work_compared(&v, "four heads of 2, two key/value heads, W^O orthogonal");
    v = c, v.heads = 2, v.head_dim = 10, v.output = OUTPUT_ORTHOGONAL, v.init = INIT_ORTHOGONAL;
    v.mlp = MLP_GELU, v.mlp_ratio = 2, v.skip = SKIP_PLAIN;
    assert_declared_work_compared(&v, "orthogonal init, two heads of 10, MLP");
    v = c, v.output = OUTPUT_ORTHOGONAL;
    assert_declared_work_compared(&v, "W^O orthogonal");
    v = c, v.output = OUTPUT_GAUSSIAN;
    assert_declared_work_compared(&v, "one head, W^O gaussian");
    v = c, v.mlp = MLP_RELU, v.mlp_ratio = 4;
    assert_declared_work_compared(&v, "MLP relu 4");
    v = c, v.mlp = MLP_GELU, v.mlp_ratio = 2, v.layernorm = LAYERNORM_LN, v.ln_place = LN_PLACE_PRE;
    assert_declared_work_compared(&v, "MLP gelu, pre-LN");
    v = c, v.layernorm = LAYERNORM_RMS, v.skip = SKIP_SCALED;
    assert_declared_work_compared(&v, "post-RMSNorm, scaled skip");
    v = c, v.branch_gain = 0.5;
    assert_declared_work_compared(&v, "branch gain 0.5 (no gradients)");
    v = c, v.init = INIT_CUTTING_SKIP, v.heads = 2;
    assert_declared_work_compared(&v, "cutting-skip, two heads");
    v = c, v.init = INIT_MIMETIC, v.output = OUTPUT_GAUSSIAN, v.heads = 3;
    assert_declared_work_compared(&v, "mimetic, W^O, three heads");
    v = c, v.init = INIT_MIMETIC, v.init_query = MATRIX_INIT_NORMAL;
    assert_declared_work_compared(&v, "mimetic, W^Q normal");
    v = c, v.init = INIT_ORTHOGONAL, v.mlp = MLP_TANH, v.mlp_ratio = 2;
    assert_declared_work_compared(&v, "orthogonal init, MLP");
    /* (A zero W^K would make the counterpart's centred attention exactly 0: a network that
       dies computes nothing further, which no declaration foresees.) */
    v = c, v.output = OUTPUT_GAUSSIAN, v.init_output = MATRIX_INIT_ZERO, v.skip = SKIP_PLAIN;
    v.init_value = MATRIX_INIT_IDENTITY;
    assert_declared_work_compared(&v, "W^O zero, W^V identity");
    v = c, v.seeds = 3;
    assert_declared_work_compared(&v, "three seeds");
    v = c, v.attention_map = ATTENTION_MAP_PRODUCT, v.layer = 3, v.heads = 2, v.head = 2;
    assert_declared_work_compared(&v, "the attention product A_3 A_2 A_1 of head 2");
    v = c, v.input_norm = INPUT_NORM_SQRT_D, v.layer = 3;
    assert_declared_work_compared(&v, "input sqrt-d, last layer shown");
    /* No QR for embedding rows; T > d. */
    v = c, v.input = INPUT_EMBEDDING, v.tokens = 20, v.vocab = 6;
    assert_declared_work_compared(&v, "embedding input, T > d, repeated ids");
    v = c, v.input = INPUT_EMBEDDING, v.positions = POSITIONS_LEARNED, v.init = INIT_TRUNC_NORMAL;
    v.depth_scale = DEPTH_SCALE_PER_LAYER, v.output = OUTPUT_GAUSSIAN, v.mlp = MLP_SWIGLU;
    v.skip = SKIP_PLAIN; /* (std 0.02 branches alone would vanish) */
    assert_declared_work_compared(&v, "embedding with positions, trunc-normal, per-layer");
    /* Above ENTROPY_EXACT_INPUT_NORM the entropy bound's ‖X'‖₂² is a Gram matrix and a
       Cholesky factorisation per layer and network, of the smaller side. */
    v = c, v.tokens = 64, v.width = 72;
    assert_false(Entropy_input_norm_exact(v.tokens, v.width));
    assert_declared_work_compared(&v, "the entropy bound's input norm by Cholesky, T < d");
    v = c, v.input = INPUT_EMBEDDING, v.tokens = 80, v.width = 64, v.vocab = 50;
    assert_declared_work_compared(&v, "the same, embedding input, T > d");
    /* There (T·d·min(T, d) above 64³, d < 2T, one head) the logits go through
       M = W^Q W^Kᵀ, formed once per layer (the next layer's beside it where the norms are
       paired) and the norms' bound from it; later seeds form it alone, and so does a layer
       whose entropies have no bound (relu); RoPE layers project Q and K, NoPE layers not. */
    v = c, v.tokens = 64, v.width = 72;
    assert_true(Layer_logits_through_qk_product(&v, 1));
    v.seeds = 2;
    assert_declared_work_compared(&v, "logits through W^Q W^K^T, two seeds");
    v = c, v.tokens = 64, v.width = 72, v.attention = ATTENTION_RELU;
    assert_declared_work_compared(&v, "logits through W^Q W^K^T, relu");
    v = c, v.tokens = 64, v.width = 72, v.rope = ROPE_HALF, v.nope_every = 2, v.depth = 4;
    assert_false(Layer_logits_through_qk_product(&v, 1));
    assert_true(Layer_logits_through_qk_product(&v, 2));
    assert_declared_work_compared(&v, "logits through W^Q W^K^T on the NoPE layers");
    /* Above MEASURE_SVD_CHEAP the collapsed layers' sr − 1 (layers 6 and 7 at T = 64, by
       the rule T^(1 − 2ℓ) < MEASURE_GRAM_FLOOR) is the deflated route's Gram matrix of the
       smaller side, not the singular values of X. */
    v = c, v.tokens = 64, v.width = 72, v.depth = 7, v.layer = 7;
    assert_false(Measure_svd_cheap(v.tokens, v.width));
    assert_declared_work_compared(&v, "the collapsed layers deflated, T < d");
    /* Above it in d·d_h², ‖W^Q_h W^K_gᵀ‖₂ by Cholesky too: a factor per key head, a product,
       a Gram matrix and a factorisation per query head. */
    v = c, v.tokens = 16, v.width = 192, v.heads = 4, v.kv_heads = 2;
    assert_false(Entropy_qk_norm_exact(&v));
    assert_declared_work_compared(&v, "the bound's W^Q W^K^T norms by Cholesky, grouped heads");
    /* W^V drawn again (orthogonal: a QR each) for the gradients: L·d² doubles above the
       cache. */
    v = c, v.width = 512, v.depth = 9, v.layer = 9, v.init_value = MATRIX_INIT_ORTHOGONAL;
    v.attention = ATTENTION_SIGMOID; /* (softmax's centred counterpart vanishes at T = 8) */
    assert_false(Model_value_weights_cached(&v));
    assert_declared_work_compared(&v, "gradients without the value cache");
    /* Every kind, mask and gap mode (the spectra's dgeev or diagonal, the deflate solve, the
       outliers' SVD). */
    char what[128];
    int compared = 0, runs = 0;
    /* (Small and sparse matrices decouple by chance: at T = 8 a relu matrix may vanish, and
       in a window of 2 the outlier removed may be one entry, leaving a causal matrix
       triangular.  The run then reads the diagonal where the rule expects dgeev.) */
    c.tokens = 24;
    c.width = 32;
    for (int a = 0; a < ATTENTION_NAMES.count; a++)
        for (int m = 0; m < MASK_NAMES.count; m++)
            for (int g = 0; g < GAP_NAMES.count; g++) {
                v = c;
                v.attention = (Attention)a;
                v.mask = (Mask)m;
                v.window = 6;
                v.gap = (Gap)g;
                snprintf(what, sizeof what, "%s, %s mask, gap %s", ATTENTION_NAMES.names[a],
                         MASK_NAMES.names[m], GAP_NAMES.names[g]);
                bool same = assert_declared_work(&v, what);
                if (!same)
                    print_message("declared work: skipped %s (a network died)\n", what);
                compared += same;
                runs++;
            }
    /* The networks that die: uniform attention with its gap removed (its rows centre to 0),
       and the kinds that overflow without LayerNorm. */
    print_message("declared work: %d of %d kind, mask and gap configurations compared (the "
                  "others lose a network)\n",
                  compared, runs);
    assert_true(compared >= runs * 3 / 4);
}

/* T > d (embedding input, whose collapse does not follow the rule: both networks fall below
   MEASURE_GRAM_FLOOR earlier than it says): the run's Gram matrices beyond the declared ones
   are whole deflated ones, each of the smaller side (d×d from T terms), and the rest of the
   declaration holds. */
static void test_deflated_gram_of_the_smaller_side(void **state)
{
    (void)state;
    Config c = work_base();
    c.input = INPUT_EMBEDDING, c.tokens = 72, c.width = 64, c.vocab = 50, c.depth = 7;
    c.layer = 7;
    assert_false(Measure_svd_cheap(c.tokens, c.width));
    Result *r = Result_new();
    WorkTotals declared = declared_work(&c);
    double filled;
    LinalgTally performed = performed_work(&c, r, &filled);
    double excess = performed.gram_flops - declared.gram_flops;
    double deflated = (double)c.width * c.width * c.tokens;
    assert_true(r->measure_counts.routes[MEASURE_ROUTE_DEFLATED] > 0);
    assert_true(excess == deflated * (r->measure_counts.routes[MEASURE_ROUTE_DEFLATED] - 2));
    assert_true(performed.product_flops == declared.product_flops);
    Result_free(r);
}

/* The measures of a run above MEASURE_SVD_CHEAP (T ≤ d) that the flat-spectrum route gives,
   read off the curves: those with sr − 1 > 1, where the top-eigenpair certificate cannot hold
   (its bound α = √F of λ2 is above θ).  Below 1 it can, and in the run below it does (sr − 1
   from 0.04 to 0.71, none near 1: Result.measure_counts.routes confirms it for X's measures).  X's
   measure takes the input bound's Lanczos vector and Cholesky proof where it proves the next
   layer's ‖X'‖₂² (Entropy_input_norm_measured: every layer but the last) and runs none of its
   own; the last layer's and the centred measures, which prove nothing, run one each. */
typedef struct {
    int tokens;  /* X's measures (X0 once), as Result.measure_counts.routes counts them */
    int last;    /* of them, the last layer's */
    int centred; /* the centred measures */
} FlatMeasures;

static FlatMeasures flat_measures(const Result *r, int depth)
{
    FlatMeasures n = {0, 0, 0};
    const Curves *networks[] = {&r->network, &r->counterpart};
    for (int k = 0; k < 2; k++)
        for (int l = k == 0 ? 0 : 1; l <= depth; l++) { /* X0 is both networks' */
            double rest = networks[k]->stable_rank_minus_one[l];
            double centred = networks[k]->centred_stable_rank[l] - 1;
            n.tokens += rest > 1;
            n.last += l == depth && rest > 1;
            n.centred += centred > 1;
        }
    return n;
}

/* Above MEASURE_SVD_CHEAP (T ≤ d, no LayerNorm) each token matrix has one Gram matrix: the
   measure's of X_ℓ serves the next layer's ‖X'‖₂² too (Entropy_input_norm_measured), and its
   centred Gram matrix too (Work_centred_downdate_expected), except where the tokens are too
   close to their mean for the downdate and still resolved apart (the run counts those).  So a
   run of L layers forms 1 of X0 (once for both networks) and 1 per layer and network, plus
   the unplanned centred ones, plus the heads' norms (one head of d_h = d, whose logits go through
   the formed M = W^Q W^Kᵀ: M's d×d Gram matrix per layer), and proves ‖X'‖₂² by 2L − 1 Cholesky
   factorisations (X0's once) beside the norms' L, and the flat-spectrum route's proofs: one
   per flat measure without the input bound's (flat_measures).  The plan declares that route
   where the theory expects a flat spectrum, in place of dsyevd, which none of the measures
   runs: a proof for X0's centred measure and one for the gap-removed network's last layer
   (its earlier layers' take the next input's bound's proof, as X0's does). */
static void test_one_gram_matrix_per_token_matrix(void **state)
{
    (void)state;
    Config c = work_base();
    c.tokens = 64, c.width = 72, c.depth = 3;
    assert_true(Entropy_input_norm_measured(&c, 1));
    assert_true(Layer_logits_through_qk_product(&c, 1));
    Result *r = Result_new();
    double filled;
    LinalgTally performed = performed_work(&c, r, &filled);
    double T = c.tokens, d = c.width, L = c.depth;
    /* the collapsing network's, seed 1 */
    assert_int_equal(r->measure_counts.centred_formed_unplanned, 1);
    assert_true(performed.gram_flops ==
                (1 + 2 * L + r->measure_counts.centred_formed_unplanned) * T * T * d +
                    L * d * d * d);
    FlatMeasures flat = flat_measures(r, c.depth);
    assert_int_equal(r->measure_counts.routes[MEASURE_ROUTE_FLAT_TOP], flat.tokens);
    assert_true(flat.tokens > flat.last && flat.centred > 0); /* both kinds of proof are seen */
    assert_int_equal(r->measure_counts.flat_proofs, flat.last + flat.centred);
    assert_int_equal(performed.calls[LINALG_CHOLESKY],
                     (2 * L - 1) + L + r->measure_counts.flat_proofs);
    assert_int_equal(performed.calls[LINALG_SINGULAR_VALUES], 1); /* the shown attention's alone */
    WorkTotals declared = declared_work(&c);
    assert_int_equal(performed.calls[LINALG_SYMMETRIC_EIGENVALUES], 0);
    assert_true(declared.calls[WORK_SYMMETRIC] == 0);
    assert_int_equal(r->measure_counts.flat_proofs_declared, 2);
    assert_true(declared.calls[WORK_CHOLESKY] == (2 * L - 1) + L + 2);
    Result_free(r);
}

/* Deeper runs of several seeds: the plan declares the deflated route (a Gram matrix of the
   smaller side, here T²d) where the theory has sr − 1 below the Gram route's floor, layer 6
   at T = 64; seed 2's collapsing network falls below it at layer 4 already, seed 3's at 5.
   The run counts the routes declared beside those taken, and the Gram matrices formed are
   the plan's with the difference (assert_declared_work), with and without a gap mode. */
static void test_gram_matrices_of_several_seeds_at_depth(void **state)
{
    (void)state;
    Config c = work_base();
    c.tokens = 64, c.width = 72, c.depth = 4, c.seeds = 2;
    Result *r = Result_new();
    double filled;
    performed_work(&c, r, &filled);
    assert_int_equal(r->measure_counts.deflated_declared, 0);
    assert_int_equal(r->measure_counts.routes[MEASURE_ROUTE_DEFLATED], 1);
    c.depth = 6, c.seeds = 1;
    performed_work(&c, r, &filled);
    assert_int_equal(r->measure_counts.deflated_declared, 1);
    assert_int_equal(r->measure_counts.routes[MEASURE_ROUTE_DEFLATED], 1);
    Result_free(r);
    for (int depth = 4; depth <= 6; depth++)
        for (int seeds = 2; seeds <= 3; seeds++)
            for (int centre = 0; centre < 2; centre++) {
                c.depth = depth, c.seeds = seeds;
                c.gap = centre ? GAP_CENTER : GAP_OFF;
                char what[64];
                snprintf(what, sizeof what, "depth %d, %d seeds, gap %s", depth, seeds,
                         centre ? "center" : "off");
                assert_declared_work_compared(&c, what);
            }
}

/* The heads' row entropies (a log per attention entry, taken by run_lane.c's observer on the first
   seed's layers of both networks) are priced: softmax, whose rows are distributions, declares
   L·2·H more T² entries computed with exp or log than sigmoid, whose rows are not and which
   builds its attention with exp too; the second seed adds none. */
static void test_entropies_are_priced(void **state)
{
    (void)state;
    Config softmax = work_base();
    softmax.heads = 2;
    softmax.seeds = 2;
    Config sigmoid = softmax;
    sigmoid.attention = ATTENTION_SIGMOID;
    WorkTotals with = declared_work(&softmax), without = declared_work(&sigmoid);
    assert_true(with.calls[WORK_BUILD_EXP] - without.calls[WORK_BUILD_EXP] ==
                softmax.depth * 2 * softmax.heads);
}

/* Defect 2 of issue 21: the MLP's two products (the largest term at ratio 4) and W^O's, and
   their draws, are priced: at least their products' flops at the product rate, per layer
   and network. */
static void test_mlp_and_output_projection_are_priced(void **state)
{
    (void)state;
    CostRates rates = Cost_reference_rates();
    Config c = Config_default();
    c.depth = 4;
    double T = c.tokens, d = c.width, L = c.depth, networks = 2;
    Config mlp = c;
    mlp.mlp = MLP_RELU;
    mlp.mlp_ratio = 4;
    double products = L * networks * 2 * (2 * T * 4 * d * d) / rates.flops_per_second;
    double added =
        Cost_fresh_run(&mlp, rates, COST_ONE_LANE) - Cost_fresh_run(&c, rates, COST_ONE_LANE);
    if (!(added >= products))
        fail_msg("the MLP adds %.3g s, its products alone take %.3g s", added, products);
    /* W^O (heads apart, the frozen product the gradients no longer need is gone): its
       product and its d² normals per layer. */
    Config heads = c, output = c;
    heads.heads = output.heads = 2;
    output.output = OUTPUT_GAUSSIAN;
    products = L * networks * 2 * T * d * d / rates.flops_per_second;
    added = Cost_fresh_run(&output, rates, COST_ONE_LANE) -
            Cost_fresh_run(&heads, rates, COST_ONE_LANE);
    if (!(added >= products))
        fail_msg("W^O adds %.3g s, its products alone take %.3g s", added, products);
}

/* Defect 2: the gradients (and the frozen products they need) are priced where the model
   computes them, by the model's own rule.  With b = 2 there are none, with or without a skip
   of gain a (the same products either way): the price is the same. */
static void test_gradients_priced_by_the_models_rule(void **state)
{
    (void)state;
    Config none = Config_default();
    none.attention = ATTENTION_RELU; /* no collapse: the same stable-rank route either way */
    none.depth = 4;
    none.branch_gain = 2;
    Config skip = none;
    skip.skip = SKIP_PLAIN;
    assert_non_null(Model_gradients_unavailable(&none));
    assert_relative(fresh(&none), fresh(&skip), 1e-12);
    /* Several heads, W^O, an MLP: none either. */
    Config with = none;
    with.branch_gain = 1;
    assert_null(Model_gradients_unavailable(&with));
    assert_true(fresh(&with) > fresh(&none));
}

/* The gradients' products, counted by Linalg in the run (not by the plan): per network the
   frozen products A_ℓ·F_{ℓ−1} of layers 2..L, L − 1 (layer 1's is the step's own A_1·X0, the
   values multiplied in that order), P1's chain, L − 2 (ℓ = L's P1 is layer L's A_L·X_{L−1}),
   and P2's chain of L − 2 d×d×d products; the difference between a run with them and one
   without (b = 2, the same layers' products otherwise).  T ≠ d tells the T×T×d products from
   the T×d×d ones. */
static void test_gradients_products_counted_in_the_run(void **state)
{
    (void)state;
    Config with = Config_default();
    with.attention = ATTENTION_RELU; /* no collapse: the same stable-rank route either way */
    with.tokens = 16;
    with.width = 24;
    with.depth = 3; /* at 4, b = 2's network is exactly 0 after its last layer, unmeasured */
    Config none = with;
    none.branch_gain = 2;
    assert_null(Model_gradients_unavailable(&with));
    assert_non_null(Model_gradients_unavailable(&none));
    double filled, T = with.tokens, d = with.width, L = with.depth, gradients = 0;
    for (int run = 0; run < 2; run++) {
        Result *r = Result_new();
        gradients += (run ? -1 : 1) * performed_work(run ? &none : &with, r, &filled).product_flops;
        assert_false(network_died(r));
        Result_free(r);
    }
    double frozen = 2 * (L - 1) * 2 * T * T * d, p1 = 2 * (L - 2) * 2 * T * d * d;
    double p2 = (L - 2) * 2 * d * d * d;
    if (gradients != frozen + p1 + p2)
        fail_msg("the gradients' products did %.17g flops, expected %.17g (frozen %.17g, P1 "
                 "%.17g, P2 %.17g)",
                 gradients, frozen + p1 + p2, frozen, p1, p2);
}

/* The steps of a fresh first seed: the first one's lists summed apart, and each step's
   d×d×d product flops (the value chain's products; with one head the q·k norms' too). */
enum { STEPS_MAX = 64 };
typedef struct {
    int steps;
    WorkTotals input[3]; /* the first step's serial, lane 0, lane 1 */
    double d_cubed[STEPS_MAX];
    double d;
} StepSplit;

static WorkTotals list_totals(const WorkList *l)
{
    WorkStep only = {0};
    only.serial = *l;
    WorkTotals t = {0};
    WorkTotals_add(&t, &only);
    return t;
}

static bool split_step(void *context, const WorkStep *step)
{
    StepSplit *s = context;
    assert_true(s->steps < STEPS_MAX);
    const WorkList *lists[3] = {&step->serial, &step->lane[0], &step->lane[1]};
    for (int i = 0; i < 3; i++) {
        if (s->steps == 0)
            s->input[i] = list_totals(lists[i]);
        for (int j = 0; j < lists[i]->count; j++) {
            const Work *w = &lists[i]->item[j];
            if (w->kind == WORK_PRODUCT && w->m == s->d && w->n == s->d && w->k == s->d)
                s->d_cubed[s->steps] += 2 * w->m * w->n * w->k * w->times;
        }
    }
    s->steps++;
    return true;
}

static StepSplit first_seed_steps(const Config *c)
{
    ModelPlan plan;
    assert_int_equal(Model_plan(c, NULL, &plan), 0);
    StepSplit s = {.d = c->width};
    Work_seed_steps(&plan, 0, c->depth + 1, split_step, &s);
    ModelPlan_release(&plan);
    return s;
}

/* The plan places the gradients' value chain (P2's L products of d×d×d) where run.c's
   input_layer runs it, on lane 1 beside X0's draw and measures (lane 0), and not again in
   the gradients' serial step (the one before each lane's P1); after them, layer 1's q·k norms
   and shared attention on lane 0 and layer 2's q·k norms on lane 1
   (Work_layer_one_beside_input); without gradients X0 is serial and lane 1 idle. */
static void test_value_chain_planned_beside_x0(void **state)
{
    (void)state;
    Config c = work_base(); /* T != d: no layer product is d×d×d */
    /* L − 2 products: the top step scales W^V_L (a copy), the last is a norm alone. */
    assert_true(c.depth > 2);
    assert_true(Work_layer_one_beside_input(&c) && !Layer_logits_through_qk_product(&c, 1));
    double T = c.tokens, d = c.width, chain = 2 * d * d * d * (c.depth - 2);
    /* One head's norm (below ENTROPY_EXACT_INPUT_NORM): R_B = Q_Bᵀ W^K and W^Q R_Bᵀ; its
       attention: X0 W^Q, X0 W^K and their T×T product. */
    double qk = 2 * d * d * d + 2 * d * d * d, attention = 2 * (2 * T * d * d) + 2 * T * T * d;
    StepSplit s = first_seed_steps(&c);
    assert_true(s.input[0].product_flops == 0 && s.input[0].gram_flops == 0);
    assert_true(s.input[1].gram_flops > 0); /* X0's measures */
    assert_true(s.input[1].product_flops == qk + attention);
    assert_true(s.input[2].product_flops == chain + qk);
    assert_true(s.steps >= 3 && s.d_cubed[s.steps - 2] == 0);
    c.heads = 2; /* no gradients: no chain */
    assert_non_null(Model_gradients_unavailable(&c));
    s = first_seed_steps(&c);
    assert_true(s.input[0].gram_flops > 0);
    assert_true(s.input[1].gram_flops == 0 && s.input[2].product_flops == 0);
}

/* Each lane of each pair the run hands to Progress.run_pair, as the plan declares it and as
   the run did it: the pair's two tasks run in turn here, on the caller's thread alone, so the
   workspace's tally between them is one task's work (taking it mid-run is safe without a
   second thread). */
enum { PAIRS_MAX = 256 };
typedef struct {
    Workspace *w;
    int pairs;
    WorkTotals lane[PAIRS_MAX][2];
} PairLog;

static void log_pair(void *context, void (*task)(int which, void *context), void *task_context)
{
    PairLog *log = context;
    assert_true(log->pairs < PAIRS_MAX);
    LinalgTally before = {0};
    Workspace_take_tally(log->w, &before); /* the serial part's: not a lane's */
    for (int n = 0; n < 2; n++) {
        LinalgTally t = {0};
        task(n, task_context);
        Workspace_take_tally(log->w, &t);
        WorkTotals *mine = &log->lane[log->pairs][n];
        *mine = (WorkTotals){.product_flops = t.product_flops, .gram_flops = t.gram_flops};
        mine->calls[WORK_ORTHONORMAL] = t.calls[LINALG_ORTHONORMAL];
    }
    log->pairs++;
}

static bool log_declared_pair(void *context, const WorkStep *step)
{
    PairLog *log = context;
    if (!step->lane[0].count && !step->lane[1].count)
        return true;
    assert_true(log->pairs < PAIRS_MAX);
    for (int n = 0; n < 2; n++) {
        WorkTotals t = list_totals(&step->lane[n]), *mine = &log->lane[log->pairs][n];
        *mine = (WorkTotals){.product_flops = t.product_flops, .gram_flops = t.gram_flops};
        mine->calls[WORK_ORTHONORMAL] = t.calls[WORK_ORTHONORMAL];
    }
    log->pairs++;
    return true;
}

/* The pairs the plan declares for c and those its run hands over, lane by lane, into the
   logs (the run's gradient pairs summed into its last declared one); the run's result, which
   the caller frees. */
static Result *pairs_logged(const Config *c, PairLog *declared, PairLog *run)
{
    ModelPlan plan;
    assert_int_equal(Model_plan(c, NULL, &plan), 0);
    *declared = (PairLog){0};
    Work_seed_steps(&plan, 0, c->depth + 1, log_declared_pair, declared);
    ModelPlan_release(&plan);
    *run = (PairLog){.w = Workspace_new()};
    Progress p = {.run_pair = log_pair, .pair_context = run};
    Result *r = Result_new();
    char err[256];
    assert_int_equal(Model_run(c, run->w, r, &p, err, sizeof err), 0);
    Workspace_free(run->w);
    run->w = NULL;
    /* The gradients' P1 (where the model computes them): one step declared, the last, whose L
       products the run pairs one layer at a time. */
    int chained = Model_gradients_unavailable(c) ? 0 : c->depth - 1;
    assert_int_equal(run->pairs, declared->pairs + chained);
    for (int i = declared->pairs; i < run->pairs; i++)
        for (int n = 0; n < 2; n++) {
            WorkTotals *last = &run->lane[declared->pairs - 1][n];
            last->product_flops += run->lane[i][n].product_flops;
            last->gram_flops += run->lane[i][n].gram_flops;
            last->calls[WORK_ORTHONORMAL] += run->lane[i][n].calls[WORK_ORTHONORMAL];
        }
    return r;
}

/* The pairs the plan declares for c against those its run hands over, lane by lane: their
   products, Gram matrices and QR factorisations.  Fills both logs. */
static void assert_pairs_planned_as_run(const Config *c, PairLog *declared, PairLog *run)
{
    Result *r = pairs_logged(c, declared, run);
    /* A lane may form centred Gram matrices the plan did not declare (the run counts them):
       whole T²d ones, as many as the run reports. */
    double centred = (double)c->tokens * c->tokens * c->width, unplanned = 0;
    for (int i = 0; i < declared->pairs; i++)
        for (int n = 0; n < 2; n++) {
            const WorkTotals *a = &run->lane[i][n], *b = &declared->lane[i][n];
            double excess = a->gram_flops - b->gram_flops;
            bool whole = excess >= 0 && fmod(excess, centred) == 0;
            unplanned += whole ? excess / centred : 0;
            if (a->product_flops != b->product_flops || !whole ||
                a->calls[WORK_ORTHONORMAL] != b->calls[WORK_ORTHONORMAL])
                fail_msg("pair %d, lane %d: run %.17g product and %.17g Gram flops and %.0f QR, "
                         "declared %.17g, %.17g and %.0f",
                         i, n, a->product_flops, a->gram_flops, a->calls[WORK_ORTHONORMAL],
                         b->product_flops, b->gram_flops, b->calls[WORK_ORTHONORMAL]);
        }
    assert_true(unplanned == r->measure_counts.centred_formed_unplanned);
    Result_free(r);
}

/* The plan's lanes are the run's, pair by pair: X0's and layer 1's q·k norms and attention
   beside the value chain and layer 2's q·k norms (run.c's input_layer), the q·k norms of
   layers 3 and 4 on one lane each (layer_qk_work), the networks', the spectra's and the
   gradients' products. */
static void test_pairs_planned_as_run(void **state)
{
    (void)state;
    Config c = work_base();
    c.depth = 4; /* layers 1 and 2's norms beside X0 and the value chain, 3 and 4's a pair */
    PairLog declared, run;
    assert_pairs_planned_as_run(&c, &declared, &run);
    /* Layers 1 and 2's norms (one head: below ENTROPY_EXACT_INPUT_NORM each is a QR, two
       products of d·d_h·d_h and an SVD): a pair of them alone, one on each lane. */
    double dh = c.width, d = c.width, qk = 2 * dh * dh * d + 2 * d * dh * dh;
    bool norms_paired = false;
    for (int i = 0; i < declared.pairs; i++) {
        bool both = true;
        for (int n = 0; n < 2; n++)
            both &= run.lane[i][n].product_flops == qk && run.lane[i][n].gram_flops == 0 &&
                    run.lane[i][n].calls[WORK_ORTHONORMAL] == 1;
        norms_paired |= both;
    }
    assert_true(norms_paired);
    /* Above the rounding rule, one head, d < 2T: each lane forms its layer's M = W^Q W^Kᵀ
       (2d³ flops) and bounds ‖M‖₂ from it (a d×d Gram matrix), for layers 1 and 2. */
    c.tokens = 64;
    c.width = 72;
    assert_true(Layer_logits_through_qk_product(&c, 2));
    assert_pairs_planned_as_run(&c, &declared, &run);
    d = c.width;
    bool formed_paired = false;
    for (int i = 0; i < declared.pairs; i++) {
        bool both = true;
        for (int n = 0; n < 2; n++)
            both &= run.lane[i][n].product_flops == 2 * d * d * d &&
                    run.lane[i][n].gram_flops == d * d * d;
        formed_paired |= both;
    }
    assert_true(formed_paired);
    /* Heads whose width does not split d: H·d_h = 24 and 6 at d = 12. */
    c = work_base();
    c.depth = 4, c.heads = 3, c.head_dim = 8, c.output = OUTPUT_GAUSSIAN;
    assert_pairs_planned_as_run(&c, &declared, &run);
    c.heads = 3, c.head_dim = 2, c.kv_heads = 1, c.output = OUTPUT_ORTHOGONAL;
    assert_pairs_planned_as_run(&c, &declared, &run);
    /* Above the value cache the gradients' pairs draw W^V_2..W^V_{L−2} two at a time, the
       first of each two on lane 0 (Work_gradient_values_drawn_on_lanes), W^V_1 alone before
       them: at L = 9, 2, 4, 6 on lane 0 and 3, 5, 7 on lane 1, an orthogonal one a QR each
       on the lane that draws it (the gradients' pairs are summed into the last declared). */
    c = work_base();
    c.width = 512, c.depth = 9, c.layer = 9, c.init_value = MATRIX_INIT_ORTHOGONAL;
    c.attention = ATTENTION_SIGMOID;
    assert_true(Work_gradient_values_drawn_on_lanes(&c));
    assert_pairs_planned_as_run(&c, &declared, &run);
    for (int n = 0; n < 2; n++)
        assert_true(run.lane[declared.pairs - 1][n].calls[WORK_ORTHONORMAL] == 3);
    /* There, where the logits go through M (T = 128, d = 192), the layers paired for their
       q·k work draw both layers' W^V on the pair's lanes too (Work_values_drawn_beside_qk):
       layer 3's on lane 0 and layer 4's on lane 1, a QR each beside its M. */
    c = work_base();
    c.tokens = 128, c.width = 192, c.depth = 57, c.init_value = MATRIX_INIT_ORTHOGONAL;
    assert_true(Work_values_drawn_beside_qk(&c, 3) && !Model_value_weights_cached(&c));
    /* Their QR factorisations pair by pair, lane by lane (not all their work: at this size
       the plan declares a centred Gram matrix where a collapsed network forms none), layer
       1's W^V's on the chain's lane beside X0 (Work_value_one_beside_input) with them. */
    assert_true(Work_layer_one_beside_input(&c) && Work_value_one_beside_input(&c));
    Result_free(pairs_logged(&c, &declared, &run));
    int values_paired = 0;
    for (int i = 0; i < declared.pairs; i++) {
        for (int n = 0; n < 2; n++)
            if (run.lane[i][n].calls[WORK_ORTHONORMAL] !=
                declared.lane[i][n].calls[WORK_ORTHONORMAL])
                fail_msg("pair %d, lane %d: %.0f QR run, %.0f declared", i, n,
                         run.lane[i][n].calls[WORK_ORTHONORMAL],
                         declared.lane[i][n].calls[WORK_ORTHONORMAL]);
        bool both = true;
        for (int n = 0; n < 2; n++)
            for (const PairLog *log = &declared; log; log = log == &declared ? &run : NULL)
                both &= log->lane[i][n].calls[WORK_ORTHONORMAL] == 1 &&
                        log->lane[i][n].product_flops == 2.0 * 192 * 192 * 192;
        values_paired += both;
    }
    assert_int_equal(values_paired, (c.depth - 2) / 2); /* layers 3, 5, ..., 55 */
}

/* Each layer's W^Q and W^K are drawn once per seed: a layer whose qk norms the layer below
   paired with its own (Entropy_qk_norms_ahead, first seed) takes them from that draw and
   does not start their streams again.  So the query and key streams give L·d² normals per
   seed (one head), and the mimetic init, whose W^Q and W^K are both factors of one draw from
   the query stream, L·d² from it and none from the key's. */
static void test_query_key_drawn_once_per_layer(void **state)
{
    (void)state;
    Config normal = work_base(), mimetic = work_base();
    normal.depth = mimetic.depth = 4;
    normal.seeds = 2;
    mimetic.init = INIT_MIMETIC;
    const Config *configs[] = {&normal, &mimetic};
    for (int i = 0; i < 2; i++) {
        const Config *c = configs[i];
        for (int l = 1; l < c->depth; l += 2)
            assert_true(Entropy_qk_norms_ahead(c, l)); /* else nothing is drawn ahead */
        Workspace *w = Workspace_new();
        Result *r = Result_new();
        char err[256];
        assert_int_equal(Model_run(c, w, r, NULL, err, sizeof err), 0);
        size_t per_stream = (size_t)c->seeds * c->depth * c->width * c->width;
        size_t query = Workspace_filled(w, ROLE_QUERY), key = Workspace_filled(w, ROLE_KEY);
        if (query != per_stream || key != (i == 0 ? per_stream : 0))
            fail_msg("configuration %d: %zu query and %zu key normals drawn, %zu expected each", i,
                     query, key, per_stream);
        Result_free(r);
        Workspace_free(w);
    }
}

/* Defect 3: a causal mask's eigenvalues come off the diagonal only where the applied matrix
   stays triangular; gap `outliers` makes it dense, and the run calls dgeev, as for the full
   mask.  The head key (shown attention and spectra of a kept network) costs the same under
   both masks. */
static double plan_seconds(const ModelPlan *plan, CostRates rates)
{
    CostSchedule schedule;
    assert_int_equal(CostSchedule_build(&schedule, plan, rates, COST_TWO_LANES), 0);
    double seconds = CostSchedule_total(&schedule);
    CostSchedule_release(&schedule);
    return seconds;
}

/* A workspace that keeps everything, after a run of c. */
static Workspace *kept_after_run(const Config *c)
{
    char err[256];
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    Workspace_keep_layers(w, (size_t)1 << 30);
    assert_int_equal(Model_run(c, w, r, NULL, err, sizeof err), 0);
    Result_free(r);
    return w;
}

static double head_key_price(const Config *c, CostRates rates)
{
    SeedPlan seed = {
        .capture_replay = 0, .spectra = true, .first_layer = {c->depth + 1, c->depth + 1}};
    ModelPlan plan = {.config = *c, .seeds = 1, .seed = &seed};
    return plan_seconds(&plan, rates);
}

static void test_causal_outliers_priced_as_dgeev(void **state)
{
    (void)state;
    CostRates rates = Cost_reference_rates();
    Config full = Config_default();
    full.tokens = full.width = 1024;
    full.gap = GAP_OUTLIERS;
    Config causal = full;
    causal.mask = MASK_CAUSAL;
    assert_relative(head_key_price(&causal, rates), head_key_price(&full, rates), 1e-12);
    /* Without a gap the causal matrix is triangular: its eigenvalues are its diagonal, and
       the singular values are the longer lane. */
    causal.gap = full.gap = GAP_OFF;
    assert_true(head_key_price(&causal, rates) < head_key_price(&full, rates));
}

/* Issue 21's check: with two heads, `}` at T = 2048 is priced as the dgeev it runs.  The plan
   comes from Model_plan after a real run (at T = 16, the same layers and budget: the plan's
   shape does not depend on T), priced at T = 2048: at least its spectra step, whose
   eigenvalues lane holds one dgeev of 2048; and above the long-job question's 30 s on a
   machine 10 times slower than the reference. */
static void test_head_key_priced_as_its_dgeev(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = c.width = 16;
    c.depth = 4;
    c.heads = 2;
    Workspace *w = kept_after_run(&c);
    c.head = 2;
    ModelPlan plan;
    assert_int_equal(Model_plan(&c, w, &plan), 0);
    assert_true(plan.seed[0].spectra);
    plan.config.tokens = plan.config.width = 2048;
    WorkStep spectra = {0};
    Work_spectra(&plan.config, &spectra);
    assert_int_equal(spectra.lane[0].count, 1);
    assert_int_equal(spectra.lane[0].item[0].kind, WORK_EIGENVALUES);
    assert_true(spectra.lane[0].item[0].n == 2048);
    CostRates rates = Cost_reference_rates();
    double seconds = plan_seconds(&plan, rates);
    if (!(seconds >= Cost_step(&spectra, rates, COST_TWO_LANES)))
        fail_msg("the head key costs %.3g s, its spectra alone %.3g s", seconds,
                 Cost_step(&spectra, rates, COST_TWO_LANES));
    CostRates slow = {rates.flops_per_second / 10, rates.scalar_speed / 10};
    assert_true(plan_seconds(&plan, slow) > 30);
    ModelPlan_release(&plan);
    Workspace_free(w);
}

/* y on a kept network: the product needs its layers again from X0 (the plan says so), and
   the declared work of that run is what it runs, product for product and decomposition for
   decomposition. */
static void test_product_from_kept_layers_priced(void **state)
{
    (void)state;
    Config c = work_base();
    c.depth = 4;
    c.layer = 3;
    Workspace *w = kept_after_run(&c);
    c.attention_map = ATTENTION_MAP_PRODUCT;
    ModelPlan plan;
    assert_int_equal(Model_plan(&c, w, &plan), 0);
    assert_true(plan.seed[0].product && plan.seed[0].product_replay);
    WorkTotals declared = {0};
    Work_seed_steps(&plan, 0, c.depth + 1, sum_step, &declared);
    ModelPlan_release(&plan);
    LinalgTally performed = {0};
    Workspace_take_tally(w, &performed); /* the first run's, dropped */
    performed = (LinalgTally){0};
    char err[256];
    Result *r = Result_new();
    assert_int_equal(Model_run(&c, w, r, NULL, err, sizeof err), 0);
    assert_non_null(r->product_map.mean);
    Workspace_take_tally(w, &performed);
    if (performed.product_flops != declared.product_flops)
        fail_msg("the product's run did %.17g flops, its plan declares %.17g",
                 performed.product_flops, declared.product_flops);
    assert_true(performed.calls[LINALG_EIGENVALUES] == declared.calls[WORK_EIGENVALUES]);
    Result_free(r);
    Workspace_free(w);
}

/* The compare view's price is the plan Model_plan makes for its network (gap removal
   toggled, up to the shown layer, one seed) on the workspace the run of c kept. */
static void test_compare_price_is_its_plan(void **state)
{
    (void)state;
    const bool gradients[] = {true, false};
    for (int i = 0; i < 2; i++) {
        Config c = Config_default();
        c.tokens = c.width = 32;
        c.depth = 4;
        c.layer = 2;
        c.seeds = 2;
        if (!gradients[i])
            c.heads = 2, c.head = 2, c.mlp = MLP_RELU;
        Workspace *w = kept_after_run(&c);
        Config toggled = Cost_compare_config(&c);
        assert_int_equal(toggled.gap, Gap_toggled(c.gap));
        assert_int_equal(toggled.depth, c.layer);
        assert_int_equal(toggled.seeds, 1);
        ModelPlan plan;
        assert_int_equal(Model_plan(&toggled, w, &plan), 0);
        assert_relative(Cost_compare(&c, Cost_reference_rates(), COST_TWO_LANES),
                        plan_seconds(&plan, Cost_reference_rates()), 1e-12);
        ModelPlan_release(&plan);
        Workspace_free(w);
    }
}

/* Reading a checkpoint (WORK_LOAD) is priced by the bytes read and the elements converted:
   a BF16 tensor costs less than the same tensor in F64, more than nothing. */
static void test_checkpoint_load_priced(void **state)
{
    (void)state;
    double elements = 2048.0 * 2048;
    WorkStep bf16 = {0}, f64 = {0};
    WorkList_add(&bf16.serial, WORK_LOAD, 2 * elements, elements, 0, 1);
    WorkList_add(&f64.serial, WORK_LOAD, 8 * elements, elements, 0, 1);
    double narrow = Cost_step(&bf16, Cost_reference_rates(), COST_TWO_LANES),
           wide = Cost_step(&f64, Cost_reference_rates(), COST_TWO_LANES);
    assert_true(narrow > 0 && wide > narrow && wide < 4 * narrow);
}

/* The factorised schemes' SVDs are declared: one per head for W^Q, W^K (cutting-skip,
   mimetic) and, under mimetic with an output projection, one per layer for each of W^V and
   W^O; none once the choices draw every matrix i.i.d. */
static double svds_per_layer(const Config *c)
{
    WorkList weights = {0};
    Layer_declare_draw(c, LAYER_DRAW_ALL, &weights);
    double n = 0;
    for (int i = 0; i < weights.count; i++)
        if (weights.item[i].kind == WORK_SVD)
            n += weights.item[i].times;
    return n;
}

static void test_price_counts_the_factor_svds(void **state)
{
    (void)state;
    Config normal = Config_default();
    normal.output = OUTPUT_GAUSSIAN;
    Config cutting = normal, mimetic = normal;
    cutting.init = INIT_CUTTING_SKIP;
    cutting.output = OUTPUT_ORTHOGONAL;
    mimetic.init = INIT_MIMETIC;
    assert_true(svds_per_layer(&normal) == 0);
    assert_true(svds_per_layer(&cutting) == 1);
    assert_true(svds_per_layer(&mimetic) == 3);
    cutting.heads = mimetic.heads = 8;
    assert_true(svds_per_layer(&cutting) == 8);
    assert_true(svds_per_layer(&mimetic) == 10);
    /* Without W^O, W^V is the target itself: only W^Q W^K^T is decomposed. */
    mimetic.heads = 1;
    mimetic.output = OUTPUT_IDENTITY;
    assert_true(svds_per_layer(&mimetic) == 1);
    mimetic.init_query = MATRIX_INIT_NORMAL;
    mimetic.init_key = MATRIX_INIT_NORMAL;
    assert_true(svds_per_layer(&mimetic) == 0);
    /* And priced: an SVD costs between d² (its normals) and d³, so doubling d multiplies a
       cutting-skip run's excess over the same run with W^Q, W^K drawn i.i.d. by 4 to 8. */
    Config plain = cutting, wide = cutting;
    plain.heads = wide.heads = 1;
    cutting.heads = 1;
    plain.init_query = plain.init_key = MATRIX_INIT_NORMAL;
    Config wide_plain = plain;
    wide.width = wide_plain.width = 512;
    double ratio = (fresh(&wide) - fresh(&wide_plain)) / (fresh(&cutting) - fresh(&plain));
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

/* The conditioning's price: two networks of `depth` equal layers; the exact path (one SVD of
   T·d × T·d and three LU-and-Lanczos extremes per layer of both) costs more than Lanczos from
   T·d = 4096 (the screen then estimates),
   less at the shipped preset's 16×64, and is Lanczos's above the exact limit. */
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
    /* Two heads: twice the JVP's products, and B's own κ on top of K's (by its extremes on the
       exact path: a fifth of an SVD at this size). */
    Config heads = c;
    heads.heads = 2;
    assert_true(Cost_conditioning(&heads, rates, true) > 1.2 * exact);
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
    /* The default (normal) initialisation is priced for the lower bound alone (s_min not
       sought where it proves κ(K) ≥ LANCZOS_KAPPA_REACH): below the long-job question's 30 s;
       cutting-skip, which keeps κ(K) small, for s_min's search at every layer: above it. */
    assert_true(Cost_conditioning(&big, rates, false) < 30);
    Config seeking = big;
    seeking.init = INIT_CUTTING_SKIP;
    assert_true(Cost_conditioning(&seeking, rates, false) > 30);
    assert_true(Cost_conditioning(&seeking, rates, false) >
                4 * Cost_conditioning(&big, rates, false));
    /* The path's choice weighs the exact path against s_min's search, never against the
       lesser answer of the bound: the same price as where s_min is sought anyway. */
    assert_true(Cost_conditioning_seeking(&big, rates) > 4 * Cost_conditioning(&big, rates, false));
    assert_close(Cost_conditioning_seeking(&seeking, rates),
                 Cost_conditioning(&seeking, rates, false), 0);
    /* What the estimate leaves unpriced where layers may seek s_min, which only the run
       knows: the whole search at the default initialisation, nothing where it is priced. */
    assert_close(Cost_conditioning_unpriced(&big, rates),
                 Cost_conditioning_seeking(&big, rates) - Cost_conditioning(&big, rates, false), 0);
    assert_true(Cost_conditioning_unpriced(&big, rates) >
                3 * Cost_conditioning(&big, rates, false));
    assert_true(Cost_conditioning_unpriced(&seeking, rates) == 0);
    /* K singular by structure (grouped K/V, causal mask): ‖K‖₂ alone, s_min never sought,
       even with orthogonal W^V and W^O, where a key/value head per head seeks it. */
    Config own = big;
    own.init = INIT_ORTHOGONAL;
    own.output = OUTPUT_ORTHOGONAL;
    own.heads = 4;
    own.mask = MASK_CAUSAL;
    Config grouped = own;
    grouped.kv_heads = 1;
    assert_true(Cost_conditioning_seeks_s_min(&own) && !Cost_conditioning_seeks_s_min(&grouped));
    assert_true(Cost_conditioning_unpriced(&grouped, rates) == 0);
    assert_true(Cost_conditioning(&grouped, rates, false) <
                Cost_conditioning(&own, rates, false) / 4);
    /* On the exact path a skip adds a·I + b′·K's extremes per layer of both networks. */
    Config skip = c;
    skip.skip = SKIP_PLAIN;
    assert_true(Cost_conditioning(&skip, rates, true) > Cost_conditioning(&c, rates, true));
    /* The engineer's size of issue 25 (T = 512, d = 2048, L = 24, 16 heads) is far above five
       minutes at the reference rates: batch refuses it at once, naming a size that fits. */
    Config engineer = Config_default();
    engineer.tokens = 512;
    engineer.width = 2048;
    engineer.depth = 24;
    engineer.heads = 16;
    assert_true(Cost_conditioning(&engineer, rates, false) > 100 * 300);
}

/* κ(W_VO) of layer 1's drawn W^V W^O (W^V alone without an output projection), by SVD. */
static double drawn_kappa_value_output(const Config *c)
{
    int d = c->width;
    size_t dd = (size_t)d * d, scratch_doubles = Init_scratch_doubles(c);
    double *value = malloc(sizeof(double) * dd), *output = malloc(sizeof(double) * dd),
           *product = malloc(sizeof(double) * dd), *sv = malloc(sizeof(double) * d),
           *scratch = malloc(sizeof(double) * (scratch_doubles ? scratch_doubles : 1));
    assert_true(value && output && product && sv && scratch);
    RandomStream *random = RandomStream_new();
    Linalg *la = Linalg_new();
    assert_int_equal(Init_draw_with_scratch(random, la, c, 7, 1, MATRIX_VALUE, value, scratch), 0);
    if (c->output == OUTPUT_IDENTITY) {
        memcpy(product, value, sizeof(double) * dd);
    } else {
        assert_int_equal(
            Init_draw_with_scratch(random, la, c, 7, 1, MATRIX_OUTPUT, output, scratch), 0);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0, value, d, output, d,
                    0.0, product, d);
    }
    assert_int_equal(Linalg_singular_values(la, d, d, product, sv), 0);
    double kappa = sv[0] / sv[d - 1];
    Linalg_free(la);
    RandomStream_free(random);
    free(value);
    free(output);
    free(product);
    free(sv);
    free(scratch);
    return kappa;
}

/* The initialisations priced to seek s_min(K) at every layer are exactly those whose drawn
   W_VO is orthogonal up to a scale (κ(W_VO) = 1 to rounding), where the lower bound's witness,
   which carries s_min(W_VO), proves little. */
static void test_seeking_priced_where_value_output_orthogonal(void **state)
{
    (void)state;
    const struct {
        InitScheme init;
        OutputProjection output;
        MatrixInitChoice value;
    } cases[] = {
        {INIT_NORMAL, OUTPUT_IDENTITY, MATRIX_INIT_SCHEME},
        {INIT_NORMAL, OUTPUT_GAUSSIAN, MATRIX_INIT_SCHEME},
        {INIT_XAVIER, OUTPUT_IDENTITY, MATRIX_INIT_SCHEME},
        {INIT_GPT2, OUTPUT_GAUSSIAN, MATRIX_INIT_SCHEME},
        {INIT_MIMETIC, OUTPUT_GAUSSIAN, MATRIX_INIT_SCHEME},
        {INIT_MIMETIC, OUTPUT_IDENTITY, MATRIX_INIT_SCHEME},
        {INIT_CUTTING_SKIP, OUTPUT_GAUSSIAN, MATRIX_INIT_SCHEME},
        {INIT_CUTTING_SKIP, OUTPUT_IDENTITY, MATRIX_INIT_SCHEME},
        {INIT_ORTHOGONAL, OUTPUT_IDENTITY, MATRIX_INIT_SCHEME},
        {INIT_ORTHOGONAL, OUTPUT_GAUSSIAN, MATRIX_INIT_SCHEME},
        {INIT_NORMAL, OUTPUT_IDENTITY, MATRIX_INIT_ORTHOGONAL},
        {INIT_NORMAL, OUTPUT_GAUSSIAN, MATRIX_INIT_ORTHOGONAL},
        {INIT_NORMAL, OUTPUT_ORTHOGONAL, MATRIX_INIT_IDENTITY},
        {INIT_NORMAL, OUTPUT_ORTHOGONAL, MATRIX_INIT_NORMAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Config c = Config_default();
        c.tokens = c.width = 16;
        c.depth = 2;
        c.init = cases[i].init;
        c.output = cases[i].output;
        c.init_value = cases[i].value;
        double kappa = drawn_kappa_value_output(&c);
        bool orthogonal = kappa <= 1 + 1e-10;
        if (Cost_conditioning_seeks_s_min(&c) != orthogonal)
            fail_msg("case %zu: kappa(W_VO) = %.17g, yet s_min's search %s priced", i, kappa,
                     orthogonal ? "is not" : "is");
        if (!orthogonal)
            assert_true(kappa > 2); /* far from the rounding, either way */
    }
}

/* The conditioning's JVP with what the layer does around f (docs/model.md §8.1), counted by
   hand for T = 8, d = 16, H = 2, G = 1 (d_h = 8, 8 key columns): plain, per head 2Td² (Ẋ W_VO),
   2T²d (A·), 4T²d (Ċ through M), 2T²d (Ȧ X W_VO).  Shaped: Ċ on d_h columns (4T²d_h per head)
   after Ẋ W^Q and Ẋ W^K (2Td(d + 8)); QK-norm 6 flops per projected entry; RoPE 3 per rotated
   entry of the 3 heads' d_r = 8 columns (cosines and sines from a table); the cap one per logit;
   the branch LN 6 per entry. */
static void test_conditioning_counts_the_shaped_products(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 8;
    c.width = 16;
    c.heads = 2;
    c.kv_heads = 1;
    c.depth = 2;
    assert_close(SaWork_product_flops(&c, 1), 2 * (2 * 8 * 256 + 8 * 64 * 16), 0);
    c.qk_norm = QK_NORM_HEAD;
    c.rope = ROPE_HALF;
    c.rope_fraction = 1.0;
    c.logit_softcap = 30;
    c.layernorm = LAYERNORM_RMS;
    c.ln_place = LN_PLACE_PERI;
    double shaped = 2 * (2 * 8 * 256 + 4 * 64 * 16) + 2 * 8 * 16 * 24 + 2 * 4 * 64 * 8 +
                    6 * 8 * 24 + 3 * 8 * 8 * 3 + 2 * 64 + 6 * 8 * 16;
    assert_close(SaWork_product_flops(&c, 1), shaped, 0);
    /* A --nope-every layer does not turn. */
    c.nope_every = 2;
    assert_close(SaWork_product_flops(&c, 2), shaped - 3 * 8 * 8 * 3, 0);
    /* The price follows: more than the plain block's at the same size, on both paths (RMS
       rows of norm √d, so that the branch LN leaves K nonsingular and s_min is sought). */
    c.ln_scale = LN_SCALE_SQRT_D;
    CostRates rates = Cost_reference_rates();
    Config plain = Config_default();
    plain.tokens = 8;
    plain.width = 16;
    plain.heads = 2;
    plain.kv_heads = 1;
    plain.depth = 2;
    for (int exact = 0; exact < 2; exact++)
        assert_true(Cost_conditioning(&c, rates, exact) > Cost_conditioning(&plain, rates, exact));
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
        cmocka_unit_test(test_spectra_beside_the_layers_priced),
        cmocka_unit_test(test_rates_scale_prices),
        cmocka_unit_test(test_price_counts_the_factor_svds),
        cmocka_unit_test(test_tally_counts_what_linalg_runs),
        cmocka_unit_test(test_checkpoint_load_priced),
        cmocka_unit_test(test_declared_work_is_what_the_run_does),
        cmocka_unit_test(test_pairs_planned_as_run),
        cmocka_unit_test(test_query_key_drawn_once_per_layer),
        cmocka_unit_test(test_deflated_gram_of_the_smaller_side),
        cmocka_unit_test(test_one_gram_matrix_per_token_matrix),
        cmocka_unit_test(test_gram_matrices_of_several_seeds_at_depth),
        cmocka_unit_test(test_entropies_are_priced),
        cmocka_unit_test(test_mlp_and_output_projection_are_priced),
        cmocka_unit_test(test_gradients_priced_by_the_models_rule),
        cmocka_unit_test(test_gradients_products_counted_in_the_run),
        cmocka_unit_test(test_value_chain_planned_beside_x0),
        cmocka_unit_test(test_causal_outliers_priced_as_dgeev),
        cmocka_unit_test(test_head_key_priced_as_its_dgeev),
        cmocka_unit_test(test_product_from_kept_layers_priced),
        cmocka_unit_test(test_compare_price_is_its_plan),
        cmocka_unit_test(test_progress_moves_inside_a_stage),
        cmocka_unit_test(test_conditioning_price),
        cmocka_unit_test(test_seeking_priced_where_value_output_orthogonal),
        cmocka_unit_test(test_conditioning_counts_the_shaped_products),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
