/* The worker thread: jobs, generations, superseding, cancellation between layers, stale
 * snapshots discarded, and a clean stop.  Also run under ThreadSanitizer.  Waits are
 * generous (a loaded 2-core machine under TSan is slow); nothing asserts on timing. */
#include "testing.h"

#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/random.h"
#include "worker.h"

#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAIT_MS 120000

static Config small(int T, int depth)
{
    Config c = Config_default();
    c.tokens = T;
    c.width = T;
    c.depth = depth;
    return c;
}

/* The first snapshot of the job (done or not), polled every 50 ms; NULL after WAIT_MS. */
static Snapshot *first_snapshot(Worker *w, unsigned long generation)
{
    Snapshot *s = NULL;
    for (int waited = 0; !s && waited < WAIT_MS; waited += 50) {
        struct pollfd p = {.fd = Worker_fd(w), .events = POLLIN};
        if (poll(&p, 1, 50) > 0)
            s = Worker_take(w, generation);
    }
    return s;
}

/* Waits for snapshots of `generation` until one is done (returned) or time runs out.
   Fails on any snapshot of another generation. */
static Snapshot *wait_done(Worker *w, unsigned long generation, int *snapshots)
{
    for (int waited = 0; waited < WAIT_MS;) {
        struct pollfd p = {.fd = Worker_fd(w), .events = POLLIN};
        int ready = poll(&p, 1, 100);
        waited += 100;
        if (ready <= 0)
            continue;
        Snapshot *s = Worker_take(w, generation);
        if (!s)
            continue;
        assert_int_equal(s->generation, generation);
        if (snapshots)
            (*snapshots)++;
        if (s->done)
            return s;
        Snapshot_free(s);
    }
    fail_msg("no final snapshot of generation %lu", generation);
    return NULL;
}

static void test_one_job(void **state)
{
    (void)state;
    Worker *w = Worker_new(NULL);
    assert_non_null(w);
    Config c = small(16, 3);
    unsigned long g = Worker_submit(w, &c);
    assert_int_equal(g, 1);
    int count = 0;
    Snapshot *s = wait_done(w, g, &count);
    assert_true(count >= 1);
    assert_true(Config_equal(&s->result->config, &c));
    assert_false(s->failed);
    assert_int_equal(s->result->layers_done, 3);
    assert_true(s->result->spectra_ready);
    assert_int_equal(s->result->config.tokens, 16);
    assert_close(s->result->network.stable_rank[0], 16.0, 1e-9);
    assert_true(s->elapsed_ms >= 0);
    /* Row-stochastic: the outlier is 1 (docs/model.md §4). */
    assert_close(s->result->eigenvalues[0].re, 1.0, 1e-9);
    Snapshot_free(s);
    /* The same Workspace serves a second, larger job. */
    Config bigger = small(32, 2);
    g = Worker_submit(w, &bigger);
    s = wait_done(w, g, NULL);
    assert_int_equal(s->result->config.tokens, 32);
    assert_int_equal(s->result->config.depth, 2);
    Snapshot_free(s);
    assert_true(Worker_stop(w, WAIT_MS));
}

/* A worker on one lane (the screen where only one of OpenBLAS's buffers fits) starts no lane
   thread, computes what a worker on two lanes computes, bit for bit, and prices a job as one
   lane: above two lanes' price at the same (pinned) rate. */
static void test_one_lane(void **state)
{
    (void)state;
    setenv("ATTNSCOPE_GFLOPS", "10", 1); /* both workers' rates the same */
    int before = process_threads();
    Worker *one = Worker_new_with_lanes(NULL, false);
    assert_non_null(one);
    assert_int_equal(process_threads_settled(before + 1), before + 1);
    Worker *two = Worker_new(NULL);
    assert_int_equal(process_threads_settled(before + 3), before + 3);
    Config c = small(16, 3);
    assert_true(Worker_estimate(one, &c, (WorkerExtras){0}) >
                Worker_estimate(two, &c, (WorkerExtras){0}));
    Snapshot *a = wait_done(one, Worker_submit(one, &c), NULL);
    Snapshot *b = wait_done(two, Worker_submit(two, &c), NULL);
    size_t n = sizeof(double) * (size_t)(c.depth + 1);
    assert_memory_equal(a->result->network.stable_rank, b->result->network.stable_rank, n);
    assert_memory_equal(a->result->counterpart.stable_rank, b->result->counterpart.stable_rank, n);
    assert_memory_equal(a->result->eigenvalues, b->result->eigenvalues,
                        sizeof(Complex) * (size_t)c.tokens);
    Snapshot_free(a);
    Snapshot_free(b);
    assert_true(Worker_stop(one, WAIT_MS));
    assert_true(Worker_stop(two, WAIT_MS));
    unsetenv("ATTNSCOPE_GFLOPS"); /* once no thread of the test reads the environment */
}

/* A newer job supersedes the queued and the running ones: only its snapshots arrive. */
static void test_supersede(void **state)
{
    (void)state;
    Worker *w = Worker_new(NULL);
    Config slow = small(32, 200), quick = small(8, 2);
    unsigned long first = 0;
    for (int i = 0; i < 5; i++)
        first = Worker_submit(w, &slow);
    assert_int_equal(first, 5);
    unsigned long last = Worker_submit(w, &quick);
    assert_int_equal(last, 6);
    Snapshot *s = wait_done(w, last, NULL);
    assert_true(Config_equal(&s->result->config, &quick));
    Snapshot_free(s);
    /* Whatever the slow jobs left is stale now. */
    assert_null(Worker_take(w, first));
    assert_true(Worker_stop(w, WAIT_MS));
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* A trace written to a new file at path (a mkstemp template, filled in here). */
static Trace *open_trace(char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    Trace *trace = Trace_open(path);
    assert_non_null(trace);
    return trace;
}

/* Stops w, then the trace's text, its file removed. */
static const char *stop_and_read_trace(Worker *w, Trace *trace, const char *path)
{
    assert_true(Worker_stop(w, WAIT_MS));
    Trace_close(trace);
    const char *text = read_all(path);
    unlink(path);
    return text;
}

/* The running job stops after its current layer when superseded (seen in the trace). */
static void test_cancel_between_layers(void **state)
{
    (void)state;
    char path[] = "/tmp/attnscope-worker-XXXXXX";
    Trace *trace = open_trace(path);
    Worker *w = Worker_new(trace);
    /* Seconds of work (more under sanitizers): it cannot end before it is superseded. */
    Config slow = small(192, 256);
    unsigned long g = Worker_submit(w, &slow);
    /* Wait for its first layer, then supersede it. */
    Snapshot *s = first_snapshot(w, g);
    assert_non_null(s);
    assert_false(s->done);
    assert_true(s->result->layers_done >= 1);
    Snapshot_free(s);
    Config quick = small(8, 1);
    unsigned long next = Worker_submit(w, &quick);
    s = wait_done(w, next, NULL);
    Snapshot_free(s);
    const char *text = stop_and_read_trace(w, trace, path);
    assert_non_null(strstr(text, "job-start gen=1 T=192"));
    char *cancel = strstr(text, "job-cancel gen=1 ");
    assert_non_null(cancel);
    int layer = 0, depth = 0;
    assert_int_equal(sscanf(strstr(cancel, "layer=") + 6, "%d/%d", &layer, &depth), 2);
    assert_int_equal(depth, 256);
    assert_true(layer < 256);
    assert_null(strstr(text, "job-done gen=1 "));
    assert_non_null(strstr(text, "job-done gen=2 "));
}

/* Extras: the compare network (same weights, gap toggled) and the width sweep come with the
   final snapshot; a later job with the same settings reuses the model run (the trace says
   so) and still carries them. */
static void test_extras_and_reuse(void **state)
{
    (void)state;
    char path[] = "/tmp/attnscope-worker-XXXXXX";
    Trace *trace = open_trace(path);
    Worker *w = Worker_new(trace);
    Config c = small(32, 2);
    c.attention = ATTENTION_MARKOV;
    unsigned long g = Worker_submit_extras(w, &c, (WorkerExtras){.sweep = true, .compare = true});
    Snapshot *s = wait_done(w, g, NULL);
    assert_true(s->has_compare && s->has_sweep);
    assert_int_equal(s->compare_gap, GAP_CENTER);
    /* The main network keeps its outlier at 1; gap removal takes it away. */
    assert_close(s->result->eigenvalues[0].re, 1.0, 1e-9);
    assert_true(hypot(s->compare_eigenvalues[0].re, s->compare_eigenvalues[0].im) < 0.9);
    assert_true(s->sweep.count >= 2);
    assert_int_equal(s->sweep.tokens[s->sweep.count - 1], 32);
    double sr1 = s->result->network.stable_rank[1];
    Snapshot_free(s);

    g = Worker_submit_extras(w, &c, (WorkerExtras){.sweep = true, .compare = false});
    s = wait_done(w, g, NULL);
    assert_true(s->has_sweep);
    assert_false(s->has_compare);
    assert_true(s->result->network.stable_rank[1] == sr1);
    Snapshot_free(s);
    const char *text = stop_and_read_trace(w, trace, path);
    assert_non_null(
        strstr(text, "job-start gen=1 T=32 d=32 L=2 layer=1 sweep=1 compare=1 reuse=0"));
    assert_non_null(
        strstr(text, "job-start gen=2 T=32 d=32 L=2 layer=1 sweep=1 compare=0 reuse=1"));
    /* Nothing was recomputed for the second job: no layer, no sweep run. */
    const char *second = strstr(text, "job-start gen=2");
    assert_null(strstr(second, "layer gen=2"));
    assert_null(strstr(second, "sweep-start gen=2"));
}

/* With the maps kept whole (--export-matrix), a done snapshot carries X0 of its job for x's
   input.csv, made on the worker's thread (the screen's must not spend 0.8 s at T = 2048): the
   bits Layer_input gives for the job's settings, here with the √d norm; a reused result keeps
   its X0, and a job of other settings gets its own.  Without whole maps, none is made. */
static void test_input_for_the_export(void **state)
{
    (void)state;
    Config c = small(16, 2);
    c.width = 24;
    c.input_norm = INPUT_NORM_SQRT_D;
    Config other = c;
    other.seed = c.seed + 1;
    size_t bytes = sizeof(double) * (size_t)c.tokens * c.width;
    double *expected = malloc(bytes), *scratch = malloc(bytes);
    assert_non_null(expected);
    assert_non_null(scratch);
    RandomStream *random = RandomStream_new();
    Linalg *la = Linalg_new();
    Worker *w = Worker_new(NULL);
    assert_non_null(w);
    Snapshot *s = wait_done(w, Worker_submit(w, &c), NULL);
    assert_null(s->input);
    Snapshot_free(s);
    Worker_set_full_attention_maps(w, true);
    const Config *jobs[] = {&c, &c, &other};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(Layer_input(random, la, jobs[i], jobs[i]->seed, expected, scratch), 0);
        s = wait_done(w, Worker_submit(w, jobs[i]), NULL);
        if (!s->input)
            fail_msg("job %d: no X0 (%s)", i, s->input_note);
        assert_memory_equal(s->input, expected, bytes);
        Snapshot_free(s);
    }
    assert_true(Worker_stop(w, WAIT_MS));
    Linalg_free(la);
    RandomStream_free(random);
    free(scratch);
    free(expected);
}

/* X0 of c's orthonormal input as docs/model.md §1.1 defines it, computed here loop by loop: G
   (d×T) drawn from the input's stream, its columns orthonormalised by modified Gram-Schmidt
   (R's diagonal positive, as the sign fix makes it), X0 = Qᵀ, times √d with --input-norm sqrt-d.
   Independent of LAPACK's QR (Linalg_orthonormalise) and of the layer's transpose and scaling. */
static void reference_input(const Config *c, double *x)
{
    int T = c->tokens, d = c->width;
    double *g = malloc(sizeof(double) * (size_t)T * d);
    RandomStream *random = RandomStream_new();
    assert_non_null(g);
    assert_non_null(random);
    RandomStream_gaussian(random, c->seed, 0, ROLE_INPUT, 1.0, g, (size_t)T * d);
    for (int i = 0; i < T; i++) { /* column i of G is g[i*d .. i*d + d) */
        double *q = g + (size_t)i * d;
        for (int k = 0; k < i; k++) {
            const double *e = g + (size_t)k * d;
            double dot = 0;
            for (int j = 0; j < d; j++)
                dot += e[j] * q[j];
            for (int j = 0; j < d; j++)
                q[j] -= dot * e[j];
        }
        double norm = 0;
        for (int j = 0; j < d; j++)
            norm += q[j] * q[j];
        for (int j = 0; j < d; j++)
            q[j] /= sqrt(norm);
    }
    double scale = c->input_norm == INPUT_NORM_SQRT_D ? sqrt((double)d) : 1.0;
    for (int i = 0; i < T; i++)
        for (int j = 0; j < d; j++)
            x[i + (size_t)j * T] = scale * g[j + (size_t)i * d];
    RandomStream_free(random);
    free(g);
}

/* X0 against reference_input.  Two orthonormalisations of one G differ by rounding: about
   κ(G)·n·ε in Q (κ ≈ (√d + √T)/(√d − √T) for a Gaussian G, 10 at 16×24; n = d), so
   √d·10·24·2.2e-16 ≈ 3e-13 in an entry of X0; 1e-11 leaves room, yet a row from another
   seed, another stream or a transposed X0 is off by O(1). */
static void assert_input_is_reference(const Config *c, const double *x)
{
    size_t td = (size_t)c->tokens * c->width;
    double *expected = malloc(sizeof(double) * td);
    assert_non_null(expected);
    reference_input(c, expected);
    for (size_t k = 0; k < td; k++)
        if (fabs(x[k] - expected[k]) > 1e-11)
            fail_msg("X0[%zu] = %.17g, the reference's %.17g", k, x[k], expected[k]);
    free(expected);
}

/* The X0 a snapshot carries for the export is the run's input (reference_input, computed
   here), and a job whose settings X0 was already made for keeps it: the trace shows no
   "input-start" for it, while a job of other settings makes its own. */
static void test_input_kept_for_a_reused_job(void **state)
{
    (void)state;
    char path[] = "/tmp/attnscope-worker-XXXXXX";
    Trace *trace = open_trace(path);
    Config c = small(16, 2);
    c.width = 24;
    c.input_norm = INPUT_NORM_SQRT_D;
    Config other = c;
    other.seed = c.seed + 1;
    Worker *w = Worker_new(trace);
    assert_non_null(w);
    Worker_set_full_attention_maps(w, true);
    const Config *jobs[] = {&c, &c, &other};
    for (int i = 0; i < 3; i++) {
        Snapshot *s = wait_done(w, Worker_submit(w, jobs[i]), NULL);
        if (!s->input)
            fail_msg("job %d: no X0 (%s)", i, s->input_note);
        assert_input_is_reference(jobs[i], s->input);
        Snapshot_free(s);
    }
    const char *text = stop_and_read_trace(w, trace, path);
    assert_non_null(strstr(text, "input-start gen=1\n"));
    assert_null(strstr(text, "input-start gen=2\n")); /* kept, not made again */
    assert_non_null(strstr(text, "input-start gen=3\n"));
}

/* A snapshot published before a newer submission is discarded by take. */
static void test_stale_generation_discarded(void **state)
{
    (void)state;
    Worker *w = Worker_new(NULL);
    Config c = small(8, 1);
    unsigned long old = Worker_submit(w, &c);
    /* Let the job finish without taking its snapshot. */
    for (int waited = 0; waited < WAIT_MS; waited += 50) {
        struct pollfd p = {.fd = Worker_fd(w), .events = POLLIN};
        if (poll(&p, 1, 50) > 0)
            break;
    }
    usleep(200 * 1000);
    Config d = small(8, 2);
    unsigned long now = Worker_submit(w, &d);
    assert_true(now > old);
    /* Whatever is waiting belongs to `old` or `now`; take(now) never returns `old`. */
    Snapshot *s = wait_done(w, now, NULL);
    assert_int_equal(s->result->config.depth, 2);
    Snapshot_free(s);
    assert_null(Worker_take(w, old));
    assert_true(Worker_stop(w, WAIT_MS));
}

/* Stopping during a long job ends it after the current layer. */
static void test_stop_during_job(void **state)
{
    (void)state;
    Worker *w = Worker_new(NULL);
    Config slow = small(192, 256);
    unsigned long g = Worker_submit(w, &slow);
    Snapshot *s = first_snapshot(w, g);
    assert_non_null(s);
    assert_false(s->done);
    Snapshot_free(s);
    assert_true(Worker_stop(w, WAIT_MS));
}

/* The worker's estimate comes from what it keeps once idle: the finished job's settings
   cost nothing, another shown layer less than the whole run.  Polls until the thread is
   idle (it goes idle just after its final snapshot). */
static double estimate_when_idle(Worker *w, const Config *c, double below)
{
    double seconds = NAN;
    for (int waited = 0; waited < WAIT_MS; waited += 10) {
        seconds = Worker_estimate(w, c, (WorkerExtras){0});
        if (seconds < below)
            return seconds;
        usleep(10000);
    }
    return seconds;
}

static void test_estimate_reads_what_is_kept(void **state)
{
    (void)state;
    Worker *w = Worker_new(NULL);
    Worker_set_memory_budget(w, 1ull << 30);
    Config c = small(64, 6);
    double fresh = Worker_estimate(w, &c, (WorkerExtras){0});
    assert_true(fresh > 0 && isfinite(fresh));
    /* The extras add their own price. */
    assert_true(Worker_estimate(w, &c, (WorkerExtras){.sweep = true}) > fresh);
    assert_true(Worker_estimate(w, &c, (WorkerExtras){.compare = true}) > fresh);
    Snapshot_free(wait_done(w, Worker_submit(w, &c), NULL));
    assert_close(estimate_when_idle(w, &c, 1e-300), 0, 0);
    Config next_layer = c;
    next_layer.layer = 2;
    double shown = estimate_when_idle(w, &next_layer, fresh / 2);
    assert_true(shown > 0 && shown < fresh / 2);
    assert_true(Worker_stop(w, WAIT_MS));
}

/* While a job runs, its progress is reported in its schedule's seconds: checkpoints in
   order, inside the total. */
static void test_progress_of_the_running_job(void **state)
{
    (void)state;
    Worker *w = Worker_new(NULL);
    Config slow = small(32, 200);
    unsigned long g = Worker_submit(w, &slow);
    WorkerProgress p, first = {0};
    bool seen = false;
    double last_done = -1;
    int checkpoints = 0;
    for (int waited = 0; waited < WAIT_MS && checkpoints < 3; waited += 5) {
        if (Worker_progress(w, g, &p)) {
            assert_int_equal(p.generation, g);
            assert_true(isfinite(p.total_s) && p.total_s > 0);
            assert_true(p.done_s >= 0 && p.done_s <= p.next_s && p.next_s <= p.total_s);
            assert_true(p.checkpoint_ms >= p.started_ms);
            if (!seen)
                first = p;
            seen = true;
            if (p.done_s > last_done) {
                last_done = p.done_s;
                checkpoints++;
            }
        }
        usleep(5000);
    }
    assert_true(seen);
    assert_true(checkpoints >= 2);
    assert_true(last_done > first.done_s);
    /* Another generation's progress is not this one's. */
    assert_false(Worker_progress(w, g + 1, &p));
    assert_true(Worker_stop(w, WAIT_MS));
}

/* The conditioning view's extras: the settings' and the other initialisation's, equal bit for
   bit to Conditioning_run's; a second request reuses both (no conditioning-start), a block it
   does not describe gets its reason, a memory budget too small a note instead of curves. */
/* The same number, or both null. */
static void assert_same_or_both_null(double a, double b)
{
    assert_true(a == b || (isnan(a) && isnan(b)));
}

/* The snapshot's conditioning in `slot` is Conditioning_run's of c under `init`: κ(K) of the
   network, κ(a·I + b′·K) of the counterpart at every layer, and the shown layer's singular values of
   K, bit for bit. */
static void assert_slot_is_direct(const Config *c, const Snapshot *s, int slot, InitScheme init)
{
    Config k = *c;
    k.init = init;
    Conditioning direct;
    char err[256];
    assert_int_equal(Conditioning_run(&k, &direct, err, sizeof err), 0);
    assert_true(s->conditioning[slot].jacobian_exact);
    for (int l = 1; l <= c->depth; l++) {
        assert_same_or_both_null(direct.network.kappa_jacobian[l],
                                 s->conditioning[slot].network.kappa_jacobian[l]);
        assert_same_or_both_null(direct.counterpart.kappa_jacobian_skip[l],
                                 s->conditioning[slot].counterpart.kappa_jacobian_skip[l]);
    }
    assert_memory_equal(direct.jacobian_singular_values,
                        s->conditioning[slot].jacobian_singular_values,
                        sizeof(double) * c->tokens * c->width);
    Conditioning_release(&direct);
}

static void test_conditioning_extras(void **state)
{
    (void)state;
    char path[] = "/tmp/attnscope-worker-XXXXXX";
    Trace *trace = open_trace(path);
    Worker *w = Worker_new(trace);
    Worker_set_memory_budget(w, 1ull << 30);
    Config c = small(6, 3);
    c.width = 10;
    c.init = INIT_CUTTING_SKIP;
    c.layernorm = LAYERNORM_RMS;
    WorkerExtras both = {.conditioning = true, .conditioning_other = true};
    unsigned long g = Worker_submit_extras(w, &c, both);
    Snapshot *s = wait_done(w, g, NULL);
    assert_true(s->has_conditioning[0] && s->has_conditioning[1]);
    assert_int_equal(s->conditioning[0].config.init, INIT_CUTTING_SKIP);
    assert_int_equal(s->conditioning[1].config.init, INIT_NORMAL);
    for (int slot = 0; slot < 2; slot++)
        assert_slot_is_direct(&c, s, slot, slot ? INIT_NORMAL : INIT_CUTTING_SKIP);
    Snapshot_free(s);

    g = Worker_submit_extras(w, &c, (WorkerExtras){.conditioning = true});
    s = wait_done(w, g, NULL);
    assert_true(s->has_conditioning[0]);
    assert_false(s->has_conditioning[1]);
    Snapshot_free(s);

    /* Two heads: the block's own conditioning (K = the heads' sum), Conditioning_run's. */
    Config heads = c;
    heads.heads = 2;
    g = Worker_submit_extras(w, &heads, (WorkerExtras){.conditioning = true});
    s = wait_done(w, g, NULL);
    assert_true(s->has_conditioning[0]);
    assert_slot_is_direct(&heads, s, 0, heads.init);
    Snapshot_free(s);

    Worker_set_memory_budget(w, 1024);
    Config other_seed = c;
    other_seed.seed = 2;
    g = Worker_submit_extras(w, &other_seed, (WorkerExtras){.conditioning = true});
    s = wait_done(w, g, NULL);
    assert_false(s->has_conditioning[0]);
    assert_non_null(strstr(s->conditioning_note[0], "memory budget"));
    Snapshot_free(s);
    const char *text = stop_and_read_trace(w, trace, path);
    assert_non_null(strstr(text, "conditioning-start gen=1 slot=0 init=cutting-skip exact=1"));
    assert_non_null(strstr(text, "conditioning-start gen=1 slot=1 init=normal exact=1"));
    /* The second job reused both the model run and the conditioning. */
    const char *second = strstr(text, "job-start gen=2");
    assert_non_null(strstr(second, "reuse=1"));
    const char *third = strstr(text, "job-start gen=3");
    assert_true(third != NULL);
    const char *again = strstr(second, "conditioning-start gen=2");
    assert_true(again == NULL || again > third);
}

int main(void)
{
    Linalg_set_blas_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_job),
        cmocka_unit_test(test_one_lane),
        cmocka_unit_test(test_supersede),
        cmocka_unit_test(test_cancel_between_layers),
        cmocka_unit_test(test_stale_generation_discarded),
        cmocka_unit_test(test_stop_during_job),
        cmocka_unit_test(test_extras_and_reuse),
        cmocka_unit_test(test_input_for_the_export),
        cmocka_unit_test(test_input_kept_for_a_reused_job),
        cmocka_unit_test(test_estimate_reads_what_is_kept),
        cmocka_unit_test(test_progress_of_the_running_job),
        cmocka_unit_test(test_conditioning_extras),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
