/* The lane runner: one thread, started once, runs lane 1 of every run while the caller runs
 * lane 0.  The two lanes of a layer on two threads give exactly what one thread gives, and
 * so do the shown layer's eigenvalues and singular values, computed in the two lanes at once
 * or (batch's schedule) the eigenvalues beside the deeper layers, stopped or not.
 * Named test_worker_* so that it also runs under ThreadSanitizer. */
#include "testing.h"

#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "attnscope/work.h"
#include "compute.h"
#include "lanes.h"

#include <stdatomic.h>
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
    /* Above the value cache, logits through M: the W^V drawn on the lanes of the q·k pairs
       and of the gradients' (Work_values_drawn_beside_qk, Work_gradient_values_drawn_on_lanes),
       from each lane's stream object while the other lane draws or multiplies. */
    c = Config_default();
    c.tokens = 64;
    c.width = 96;
    c.depth = 228;
    c.layer = 2;
    assert_true(Work_values_drawn_beside_qk(&c, 3) && Work_gradient_values_drawn_on_lanes(&c));
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

/* Progress.start_second that counts its calls and hands them to the lane runner. */
static int second_starts;
static void counting_start(void *lanes, void (*task)(int which, void *context), void *context)
{
    second_starts++;
    Lanes_start(lanes, task, context);
}

/* Batch's schedule: run_pair, the shown eigenvalues handed to the lane thread, and the
   networks beside them claimed. */
static Progress beside(Lanes *runner)
{
    return (Progress){.run_pair = Lanes_run,
                      .start_second = counting_start,
                      .second_finished = Lanes_finished,
                      .run_claimed = Lanes_run_claimed,
                      .pair_context = runner};
}

/* A task and its context, handed on. */
typedef struct {
    void (*task)(int which, void *context);
    void *context;
} Handed;

/* Progress.start_second whose eigenvalues wait for a gate, so that they are still running
   when the deeper layers ask, however fast the threads are: the first claimed pair opens it,
   as does a join that waits (second_finished with `wait`). */
static Handed held;
static atomic_int beside_gate;

static void gated_beside(int which, void *context)
{
    (void)context;
    while (!atomic_load(&beside_gate))
        usleep(1000);
    held.task(which, held.context);
}

static void start_gated(void *lanes, void (*task)(int which, void *context), void *context)
{
    held = (Handed){task, context};
    atomic_store(&beside_gate, 0);
    Lanes_start(lanes, gated_beside, NULL);
}

static bool finished_gated(void *lanes, bool wait)
{
    if (wait)
        atomic_store(&beside_gate, 1);
    return Lanes_finished(lanes, wait);
}

/* Progress.run_claimed with the lanes swapped, as a claim may: the lane thread takes lane 0
   (once the eigenvalues beside are done) and the caller lane 1. */
static void swapped(int which, void *context)
{
    Handed *s = context;
    s->task(1 - which, s->context);
}

static int claimed_pairs;
static void claimed_swapped(void *lanes, void (*task)(int which, void *context), void *context)
{
    claimed_pairs++;
    Handed s = {task, context};
    atomic_store(&beside_gate, 1);
    Lanes_finished(lanes, true);
    Lanes_run(lanes, swapped, &s);
}

static void assert_same_spectra(const Result *a, const Result *b, int T)
{
    assert_true(a->spectra_ready && b->spectra_ready);
    assert_memory_equal(a->eigenvalues, b->eigenvalues, sizeof(Complex) * T);
    assert_memory_equal(a->singular_values, b->singular_values, sizeof(double) * T);
    assert_int_equal(a->eigenvalues_exact, b->eigenvalues_exact);
    assert_memory_equal(&a->readouts, &b->readouts, sizeof a->readouts);
}

/* The shown layer 1 of L = 3 with its eigenvalues beside layers 2 and 3 (and the networks of
   those layers taking turns on the caller's thread until dgeev ends) has the spectra of a
   run of L = 1 on one thread, where nothing follows the shown layer: the overlap neither
   changes nor loses them.  Its curves are those of the same L = 3 on one thread. */
static void test_spectra_beside_the_deeper_layers(void **state)
{
    (void)state;
    Linalg_set_blas_threads(1);
    char err[256];
    Config c = Config_default();
    c.tokens = 96; /* dgeev of 96×96 against two layers of two networks: either may end first */
    c.width = 96;
    c.depth = 3;
    c.layer = 1;
    c.attention = ATTENTION_MARKOV;
    c.gap = GAP_CENTER; /* dgeev of a copy, the warning-free dense path */
    Config last = c;
    last.depth = 1;
    Workspace *w = Workspace_new();
    Result *alone = Result_new(), *shallow = Result_new(), *overlapped = Result_new();
    Lanes *runner = Lanes_new(NULL, NULL);
    assert_true(w && alone && shallow && overlapped && runner);
    assert_int_equal(Model_run(&last, w, shallow, NULL, err, sizeof err), 0);
    assert_int_equal(Model_run(&c, w, alone, NULL, err, sizeof err), 0);
    Progress lanes = beside(runner);
    second_starts = 0;
    assert_int_equal(Model_run(&c, w, overlapped, &lanes, err, sizeof err), 0);
    assert_int_equal(second_starts, 1);
    assert_same_spectra(shallow, overlapped, c.tokens);
    assert_same_spectra(alone, overlapped, c.tokens);
    size_t n = sizeof(double) * (size_t)(c.depth + 1);
    assert_memory_equal(alone->network.stable_rank, overlapped->network.stable_rank, n);
    assert_memory_equal(alone->counterpart.stable_rank, overlapped->counterpart.stable_rank, n);
    assert_memory_equal(alone->network.gradient_norm, overlapped->network.gradient_norm, n);
    assert_int_equal(overlapped->layers_done, c.depth);
    /* Whichever thread runs a claimed network step, the same bits: each lane on the thread
       the other would take.  The eigenvalues held until then, layer 2's networks are claimed
       (its norms: computed ahead with layer 1's) as two pairs, their steps and then their
       tails (the frozen products and the measures), each swapped. */
    Progress gated = lanes;
    gated.start_second = start_gated;
    gated.second_finished = finished_gated;
    gated.run_claimed = claimed_swapped;
    claimed_pairs = 0;
    assert_int_equal(Model_run(&c, w, overlapped, &gated, err, sizeof err), 0);
    assert_int_equal(claimed_pairs, 2);
    assert_same_spectra(alone, overlapped, c.tokens);
    assert_memory_equal(alone->network.stable_rank, overlapped->network.stable_rank, n);
    assert_memory_equal(alone->counterpart.stable_rank, overlapped->counterpart.stable_rank, n);
    assert_memory_equal(alone->network.gradient_norm, overlapped->network.gradient_norm, n);
    assert_memory_equal(alone->counterpart.log10_norm, overlapped->counterpart.log10_norm, n);
    assert_memory_equal(alone->network.token_similarity, overlapped->network.token_similarity, n);
    assert_memory_equal(alone->network.entropy_zhai_bound, overlapped->network.entropy_zhai_bound,
                        n);
    /* Every configuration of the lanes' test, and the shown layer anywhere. */
    for (int layer = 1; layer <= 4; layer++) {
        Config d = Config_default();
        d.tokens = 48;
        d.width = 64;
        d.depth = 4;
        d.seeds = 2;
        d.layer = layer;
        d.attention = layer % 2 ? ATTENTION_SOFTMAX : ATTENTION_MARKOV;
        d.gap = layer == 2 ? GAP_DEFLATE : GAP_OFF; /* Brauer's spectrum at layer 2 */
        assert_int_equal(Model_run(&d, w, alone, NULL, err, sizeof err), 0);
        assert_int_equal(Model_run(&d, w, overlapped, &lanes, err, sizeof err), 0);
        assert_same_spectra(alone, overlapped, d.tokens);
        size_t m = sizeof(double) * (size_t)(d.depth + 1);
        assert_memory_equal(alone->counterpart_band.mean, overlapped->counterpart_band.mean, m);
        assert_int_equal(alone->warnings.count, overlapped->warnings.count);
        for (int i = 0; i < alone->warnings.count; i++)
            assert_string_equal(alone->warnings.text[i], overlapped->warnings.text[i]);
    }
    Lanes_free(runner);
    Result_free(alone);
    Result_free(shallow);
    Result_free(overlapped);
    Workspace_free(w);
}

/* A stop polled from both threads: true from the `after`-th poll on. */
typedef struct {
    atomic_int polls;
    int after;
} PollStop;

static bool poll_stop(void *context)
{
    PollStop *stop = context;
    return atomic_fetch_add(&stop->polls, 1) + 1 >= stop->after;
}

static bool stop_after_first_layer(void *context, int seed_index, int layer, int depth)
{
    (void)context, (void)seed_index, (void)depth;
    return layer < 1;
}

/* Stopped while the eigenvalues run beside: after the shown layer (the run waits for them,
   and its result has them, as when they ran before that layer's after_layer call), or inside
   a deeper layer at any of its polls (the run ends without a race, which ThreadSanitizer
   would report here).  A full run on the same workspace afterwards still has every value. */
static void test_stop_while_spectra_run_beside(void **state)
{
    (void)state;
    Linalg_set_blas_threads(1);
    char err[256];
    Config c = Config_default();
    c.tokens = 64;
    c.width = 64;
    c.depth = 4;
    Workspace *w = Workspace_new();
    Result *reference = Result_new(), *r = Result_new();
    Lanes *runner = Lanes_new(NULL, NULL);
    assert_true(w && reference && r && runner);
    assert_int_equal(Model_run(&c, w, reference, NULL, err, sizeof err), 0);
    Progress lanes = beside(runner);
    lanes.after_layer = stop_after_first_layer;
    assert_int_equal(Model_run(&c, w, r, &lanes, err, sizeof err), 0);
    assert_int_equal(r->layers_done, 1);
    assert_same_spectra(reference, r, c.tokens);
    lanes.after_layer = NULL;
    PollStop stop;
    lanes.stop_requested = poll_stop;
    lanes.context = &stop;
    for (int after = 1; after <= 40; after += 3) {
        atomic_init(&stop.polls, 0);
        stop.after = after;
        assert_int_equal(Model_run(&c, w, r, &lanes, err, sizeof err), 0);
        assert_true(r->layers_done < c.depth);
    }
    lanes.stop_requested = NULL;
    assert_int_equal(Model_run(&c, w, r, &lanes, err, sizeof err), 0);
    assert_int_equal(r->layers_done, c.depth);
    assert_same_spectra(reference, r, c.tokens);
    size_t n = sizeof(double) * (size_t)(c.depth + 1);
    assert_memory_equal(reference->network.stable_rank, r->network.stable_rank, n);
    assert_memory_equal(reference->counterpart.gradient_norm, r->counterpart.gradient_norm, n);
    Lanes_free(runner);
    Result_free(reference);
    Result_free(r);
    Workspace_free(w);
}

/* Lanes_start returns before its task ends, Lanes_finished(wait) waits for it; without a
   thread the task runs at once, on the caller's thread. */
typedef struct {
    atomic_int release; /* the task spins until it is set */
    int which;
    long tid;
} Gate;

static void gated(int which, void *context)
{
    Gate *g = context;
    while (!atomic_load(&g->release))
        ;
    g->which = which; /* checked on the test's thread: cmocka fails only there */
    g->tid = thread_id();
}

static void test_start_returns_before_the_task_ends(void **state)
{
    (void)state;
    Lanes *lanes = Lanes_new(NULL, NULL);
    assert_non_null(lanes);
    Gate g = {.which = 0, .tid = 0};
    atomic_init(&g.release, 0);
    Lanes_start(lanes, gated, &g);
    assert_false(Lanes_finished(lanes, false));
    atomic_store(&g.release, 1);
    assert_true(Lanes_finished(lanes, true));
    assert_int_equal(g.which, 1);
    assert_true(g.tid != 0 && g.tid != thread_id());
    Record r = {{0, 0}, {0, 0}, 0}; /* and the pair runs as before */
    Lanes_run(lanes, record, &r);
    assert_true(r.tid[1] == g.tid);
    Lanes_free(lanes);
    atomic_store(&g.release, 1);
    g.which = 0;
    Lanes_start(NULL, gated, &g);
    assert_int_equal(g.which, 1);
    assert_true(g.tid == thread_id());
    assert_true(Lanes_finished(NULL, false));
}

/* Lanes_run_claimed's pair: the caller claims lane 0 at once; lane 1 goes to the lane thread
   when it is free before the caller is (first case), else to the caller (second: the lane
   thread holds a handed task throughout).  Third, a stop while the lane thread holds its
   claim: the caller's lane sees it and returns at once, and Lanes_run_claimed returns only
   once the lane thread's claimed lane has ended.  The lanes wait for each other with a
   bound (WAIT_BOUND spins of 1 ms), so that a wrong order fails instead of hanging. */
enum { WAIT_BOUND = 10000 };

typedef struct {
    Gate *handed;            /* the task handed before the pair, released by lane 0 (or NULL) */
    bool await_lane_1;       /* lane 0 waits for lane 1 to start */
    atomic_int started[2];   /* each lane has begun */
    atomic_int stop;         /* lane 0 asked the pair to stop */
    atomic_int stopped_late; /* lane 1 saw the stop, then ran on a while */
    long tid[2];
    bool saw_lane_1; /* lane 0 saw lane 1 begin within the bound */
} Claims;

static bool await_flag(atomic_int *flag)
{
    for (int i = 0; i < WAIT_BOUND && !atomic_load(flag); i++)
        usleep(1000);
    return atomic_load(flag);
}

static void claimed_lane(int which, void *context)
{
    Claims *k = context;
    k->tid[which] = thread_id();
    atomic_store(&k->started[which], 1);
    if (which == 0) {
        if (k->handed)
            atomic_store(&k->handed->release, 1);
        if (k->await_lane_1)
            k->saw_lane_1 = await_flag(&k->started[1]);
        atomic_store(&k->stop, 1); /* a stop: lane 0 ends here */
    } else if (k->await_lane_1) {
        /* Lane 1 polls the stop like a network step, and takes a while to act on it. */
        await_flag(&k->stop);
        usleep(20000);
        atomic_store(&k->stopped_late, 1);
    }
}

static void claims_init(Claims *k, Gate *handed, bool await_lane_1)
{
    *k = (Claims){.handed = handed, .await_lane_1 = await_lane_1};
    for (int n = 0; n < 2; n++)
        atomic_init(&k->started[n], 0);
    atomic_init(&k->stop, 0);
    atomic_init(&k->stopped_late, 0);
}

static void test_pair_claimed_by_whichever_thread_is_free(void **state)
{
    (void)state;
    Lanes *lanes = Lanes_new(NULL, NULL);
    assert_non_null(lanes);
    Record r = {{0, 0}, {0, 0}, 0};
    Lanes_run(lanes, record, &r);
    long lane_thread = r.tid[1];
    /* The lane thread free: it claims lane 1 while the caller holds lane 0, and runs on
       after the stop; the pair returns after it. */
    Claims k;
    claims_init(&k, NULL, true);
    Lanes_run_claimed(lanes, claimed_lane, &k);
    assert_true(k.saw_lane_1);
    assert_true(k.tid[0] == thread_id() && k.tid[1] == lane_thread);
    assert_true(atomic_load(&k.stopped_late));
    /* The lane thread busy with a handed task until lane 0 releases it: lane 1 is claimed by
       whichever thread is first, and both lanes run once. */
    Gate g = {.which = 0, .tid = 0};
    atomic_init(&g.release, 0);
    Lanes_start(lanes, gated, &g);
    claims_init(&k, &g, true);
    Lanes_run_claimed(lanes, claimed_lane, &k);
    assert_true(k.saw_lane_1 && k.tid[0] == thread_id() && k.tid[1] == lane_thread);
    assert_true(atomic_load(&k.stopped_late));
    assert_true(Lanes_finished(lanes, false));
    assert_true(g.tid == lane_thread);
    /* The lane thread busy throughout (its task is released after the pair): the caller
       claims both lanes in turn. */
    atomic_init(&g.release, 0);
    Lanes_start(lanes, gated, &g);
    claims_init(&k, NULL, false);
    Lanes_run_claimed(lanes, claimed_lane, &k);
    assert_true(k.tid[0] == thread_id() && k.tid[1] == thread_id());
    assert_false(Lanes_finished(lanes, false));
    atomic_store(&g.release, 1);
    assert_true(Lanes_finished(lanes, true));
    /* Without a thread, in turn on the caller's. */
    claims_init(&k, NULL, false);
    Lanes_run_claimed(NULL, claimed_lane, &k);
    assert_true(k.tid[0] == thread_id() && k.tid[1] == thread_id());
    Lanes_free(lanes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread_for_every_run),
        cmocka_unit_test(test_no_runner_runs_in_turn),
        cmocka_unit_test(test_hooks_run_on_the_lane_thread),
        cmocka_unit_test(test_two_threads_equal_one),
        cmocka_unit_test(test_batch_sweep_uses_both_lanes),
        cmocka_unit_test(test_spectra_beside_the_deeper_layers),
        cmocka_unit_test(test_stop_while_spectra_run_beside),
        cmocka_unit_test(test_start_returns_before_the_task_ends),
        cmocka_unit_test(test_pair_claimed_by_whichever_thread_is_free),
    };
    return cmocka_run_group_tests_name("lanes", tests, NULL, NULL);
}
