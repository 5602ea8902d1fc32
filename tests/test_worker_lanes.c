/* The lane runner: one thread, started once, runs lane 1 of every run while the caller runs
 * lane 0.  The two lanes of a layer on two threads give exactly what one thread gives, and
 * so do the shown layer's eigenvalues and singular values, computed in the two lanes at once.
 * Named test_worker_* so that it also runs under ThreadSanitizer. */
#include "testing.h"

#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "compute.h"
#include "lanes.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Kernel thread ids, not pthread_t: a joined thread's pthread_t is reused by the next one. */
static long thread_id(void)
{
    return syscall(SYS_gettid);
}

typedef struct {
    long tid[2];        /* which thread ran each lane in the latest run */
    int runs[2];        /* how often each lane ran */
    int threads_inside; /* the process's threads while lane 1 ran */
} Record;

static void record(int which, void *context)
{
    Record *r = context;
    r->tid[which] = thread_id();
    r->runs[which]++;
    if (which == 1)
        r->threads_inside = process_threads();
}

static void compare(const Config *c)
{
    char err[256];
    Workspace *w = Workspace_new();
    Result *one = Result_new(), *two = Result_new();
    Lanes *runner = Lanes_new(NULL, NULL);
    assert_non_null(runner);
    Progress lanes = {.run_pair = Lanes_run, .pair_context = runner};
    assert_int_equal(Model_run(c, w, one, NULL, err, sizeof err), 0);
    assert_int_equal(Model_run(c, w, two, &lanes, err, sizeof err), 0);
    Lanes_free(runner);
    size_t n = sizeof(double) * (size_t)(c->depth + 1);
    assert_memory_equal(one->network.stable_rank, two->network.stable_rank, n);
    assert_memory_equal(one->counterpart.stable_rank_minus_one,
                        two->counterpart.stable_rank_minus_one, n);
    assert_memory_equal(one->network.gradient_norm, two->network.gradient_norm, n);
    assert_memory_equal(one->counterpart_band.mean, two->counterpart_band.mean, n);
    assert_true(one->spectra_ready && two->spectra_ready);
    assert_memory_equal(one->eigenvalues, two->eigenvalues, sizeof(Complex) * c->tokens);
    assert_memory_equal(one->singular_values, two->singular_values, sizeof(double) * c->tokens);
    assert_int_equal(one->eigenvalues_exact, two->eigenvalues_exact);
    assert_int_equal(one->warnings.count, two->warnings.count);
    for (int i = 0; i < one->warnings.count; i++)
        assert_string_equal(one->warnings.text[i], two->warnings.text[i]);
    Result_free(one);
    Result_free(two);
    Workspace_free(w);
}

static void test_two_threads_equal_one(void **state)
{
    (void)state;
    Linalg_set_blas_threads(1); /* as the callers of Lanes_run do */
    Config c = Config_default();
    c.tokens = 48;
    c.width = 64;
    c.depth = 4;
    c.seeds = 2;
    compare(&c);
    c.attention = ATTENTION_MARKOV;
    c.gap = GAP_DEFLATE;
    c.mask = MASK_CAUSAL;
    compare(&c);
    c.mask = MASK_FULL; /* Brauer's spectrum next to dgesdd */
    c.layer = 3;
    compare(&c);
    c.gap = GAP_CENTER; /* dgeev of a copy next to dgesdd of the original */
    c.attention = ATTENTION_RELU;
    compare(&c);
    c.layer = 1;
    c.attention = ATTENTION_SOFTMAX; /* warnings from both lanes, in a fixed order */
    c.gap = GAP_UNIFORM;
    c.depth = 40;
    c.tokens = c.width = 16;
    c.sigma_qk = 3;
    compare(&c);
    /* The embedding input at T > d, OLMo-core's truncated normal and per-layer scaling. */
    c = Config_default();
    c.input = INPUT_EMBEDDING;
    c.vocab = 40;
    c.tokens = 48;
    c.width = 16;
    c.depth = 3;
    c.init = INIT_TRUNC_NORMAL;
    c.depth_scale = DEPTH_SCALE_PER_LAYER;
    c.output = OUTPUT_GAUSSIAN;
    c.mlp = MLP_SWIGLU;
    c.skip = SKIP_PLAIN;
    c.seeds = 2;
    compare(&c);
}

/* A hundred runs hand lane 1 to the same thread, started by Lanes_new and ended by
   Lanes_free: no thread is created per run. */
static void test_one_thread_for_every_run(void **state)
{
    (void)state;
    Linalg_set_blas_threads(1); /* OpenBLAS's own pool would change the count */
    /* A first thread may bring a helper of its own (ThreadSanitizer's): counted before. */
    Lanes_free(Lanes_new(NULL, NULL));
    int before = process_threads();
    assert_true(before >= 1);
    Lanes *lanes = Lanes_new(NULL, NULL);
    assert_non_null(lanes);
    assert_int_equal(process_threads(), before + 1);
    Record r = {{0, 0}, {0, 0}, 0};
    Lanes_run(lanes, record, &r);
    long lane_thread = r.tid[1];
    assert_true(lane_thread != thread_id());
    for (int i = 0; i < 100; i++) {
        Lanes_run(lanes, record, &r);
        assert_true(r.tid[0] == thread_id());
        assert_true(r.tid[1] == lane_thread);
        assert_int_equal(r.threads_inside, before + 1);
    }
    assert_int_equal(r.runs[0], 101);
    assert_int_equal(r.runs[1], 101);
    assert_int_equal(process_threads(), before + 1);
    Lanes_free(lanes);
    assert_int_equal(process_threads_settled(before), before);
}

/* Without a runner (or without its thread) both lanes run in turn on the caller's thread. */
static void test_no_runner_runs_in_turn(void **state)
{
    (void)state;
    Record r = {{0, 0}, {0, 0}, 0};
    Lanes_run(NULL, record, &r);
    assert_true(r.tid[0] == thread_id() && r.tid[1] == thread_id());
    assert_int_equal(r.runs[0], 1);
    assert_int_equal(r.runs[1], 1);
    Lanes_free(NULL);
}

/* The hooks run once each, on the lane thread, the end hook with what the begin hook gave. */
static long hook_thread[2];
static int hook_token, hook_calls[2];
static void *hook_ended_with;

static void *hook_begin(void)
{
    hook_thread[0] = thread_id();
    hook_calls[0]++;
    return &hook_token;
}

static void hook_end(void *token)
{
    hook_ended_with = token; /* checked on the test's thread: cmocka fails only there */
    hook_thread[1] = thread_id();
    hook_calls[1]++;
}

static void test_hooks_run_on_the_lane_thread(void **state)
{
    (void)state;
    Lanes *lanes = Lanes_new(hook_begin, hook_end);
    assert_non_null(lanes);
    Record r = {{0, 0}, {0, 0}, 0};
    for (int i = 0; i < 3; i++)
        Lanes_run(lanes, record, &r);
    Lanes_free(lanes); /* joins: the hooks' writes are visible from here on */
    assert_int_equal(hook_calls[0], 1);
    assert_int_equal(hook_calls[1], 1);
    assert_ptr_equal(hook_ended_with, &hook_token);
    assert_true(hook_thread[0] == r.tid[1] && hook_thread[1] == r.tid[1]);
}

/* Progress.run_pair that counts its calls and hands them to the lane runner. */
static int pair_calls;
static void counting_pair(void *lanes, void (*task)(int which, void *context), void *context)
{
    pair_calls++;
    Lanes_run(lanes, task, context);
}

/* Batch mode's width sweep runs its layers in the two lanes too (it ran on one core while
   the screen's used both), with the same numbers as one lane after the other. */
static void test_batch_sweep_uses_both_lanes(void **state)
{
    (void)state;
    Linalg_set_blas_threads(1);
    Config c = Config_default();
    c.tokens = 32;
    c.width = 32;
    c.depth = 3;
    c.layer = 2;
    c.seeds = 2;
    char err[256];
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    Lanes *runner = Lanes_new(NULL, NULL);
    assert_true(w && r && runner);
    Progress lanes = {.run_pair = counting_pair, .pair_context = runner};
    WidthSweep alone, both;
    assert_int_equal(Compute_batch(&c, true, NULL, w, r, &alone, err, sizeof err), 0);
    pair_calls = 0;
    assert_int_equal(Compute_batch(&c, false, &lanes, w, r, &both, err, sizeof err), 0);
    int model_calls = pair_calls;
    assert_true(model_calls >= c.depth * c.seeds);
    pair_calls = 0;
    assert_int_equal(Compute_batch(&c, true, &lanes, w, r, &both, err, sizeof err), 0);
    /* At least one call per layer of every point and seed of the sweep. */
    int tokens[SWEEP_POINTS_MAX], points = Sweep_token_counts(c.tokens, tokens);
    assert_true(pair_calls - model_calls >= points * c.seeds * c.layer);
    assert_int_equal(both.count, points);
    assert_int_equal(alone.count, points);
    assert_memory_equal(alone.tokens, both.tokens, sizeof alone.tokens);
    assert_memory_equal(alone.excess, both.excess, sizeof alone.excess);
    assert_memory_equal(alone.excess_gap, both.excess_gap, sizeof alone.excess_gap);
    assert_memory_equal(&alone.slope, &both.slope, sizeof alone.slope);
    assert_memory_equal(&alone.slope_gap, &both.slope_gap, sizeof alone.slope_gap);
    Lanes_free(runner);
    Result_free(r);
    Workspace_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread_for_every_run),
        cmocka_unit_test(test_no_runner_runs_in_turn),
        cmocka_unit_test(test_hooks_run_on_the_lane_thread),
        cmocka_unit_test(test_two_threads_equal_one),
        cmocka_unit_test(test_batch_sweep_uses_both_lanes),
    };
    return cmocka_run_group_tests_name("lanes", tests, NULL, NULL);
}
