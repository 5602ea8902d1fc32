/* Long LAPACK calls in a worker process (src/common/isolate.c) and the stoppable product:
 * the same bits as in process, a stop that returns within the bound with the worker gone,
 * and the call in process whenever isolation is unavailable.  Then a whole model run in the
 * worker's setting: the bits of an in-process run, and a stop inside a call. */
#include "testing.h"

#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "isolate.h"

#include <cblas.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double *random_doubles(size_t count, unsigned seed)
{
    double *p = malloc(count * sizeof *p);
    assert_non_null(p);
    unsigned long long x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < count; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (double)(x >> 11) / 9007199254740992.0 - 0.5;
    }
    return p;
}

/* The helper's children, that is its workers (at most max); -1 when unreadable. */
static int helper_children(pid_t *pids, int max)
{
    pid_t helper = Isolate_helper_pid();
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)helper, (int)helper);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0;
    long pid;
    while (n < max && fscanf(f, "%ld", &pid) == 1)
        pids[n++] = (pid_t)pid;
    fclose(f);
    return n;
}

static bool process_exists(pid_t pid)
{
    char path[32];
    snprintf(path, sizeof path, "/proc/%d", (int)pid);
    return access(path, F_OK) == 0;
}

/* A stopped or finished call leaves no worker: the helper has no child and the worker's
   /proc entry is gone (the kernel reaps it right after the pidfd reports its exit, hence a
   short grace). */
static void assert_worker_gone(pid_t worker)
{
    pid_t pids[4];
    int children = 0;
    for (int tries = 0; tries < 100; tries++) {
        children = helper_children(pids, 4);
        if (children == 0 && !(worker > 0 && process_exists(worker)))
            return;
        usleep(1000);
    }
    fail_msg("the helper still has %d children (worker %d exists: %d)", children, (int)worker,
             worker > 0 && process_exists(worker));
}

/* Counts the calls the isolation hook actually ran in a worker (from the lanes' threads too). */
static atomic_int isolated_calls;
static LinalgIsolation isolation;

static int counting_run(void *context, const LinalgCall *call, LinalgStop stop)
{
    (void)context;
    int status = isolation.run(isolation.context, call, stop);
    isolated_calls += status != LINALG_NOT_ISOLATED;
    return status;
}

static Linalg *isolated_linalg(void)
{
    Linalg *la = Linalg_new();
    assert_non_null(la);
    Linalg_set_isolation(la, (LinalgIsolation){.run = counting_run});
    return la;
}

/* One call's arrays (input first), sized by Linalg_call_sizes. */
typedef struct {
    int arrays;
    size_t size[LINALG_CALL_ARRAYS];
    double *array[LINALG_CALL_ARRAYS];
} Buffers;

static Buffers buffers_new(LinalgRoutine routine, int m, int n)
{
    Buffers b = {0};
    b.arrays = Linalg_call_sizes(routine, m, n, b.size);
    assert_true(b.arrays >= 2);
    for (int i = 0; i < b.arrays; i++) {
        b.array[i] = calloc(b.size[i] ? b.size[i] : 1, sizeof(double));
        assert_non_null(b.array[i]);
    }
    return b;
}

static void buffers_free(Buffers *b)
{
    for (int i = 0; i < b->arrays; i++)
        free(b->array[i]);
}

/* The public function for routine on a copy of a. */
static int run_routine(Linalg *la, LinalgRoutine routine, int m, int n, const double *a, Buffers *b)
{
    memcpy(b->array[0], a, b->size[0] * sizeof(double));
    double **x = b->array;
    switch (routine) {
    case LINALG_EIGENVALUES:
        return Linalg_eigenvalues(la, n, x[0], x[1], x[2]);
    case LINALG_SINGULAR_VALUES:
        return Linalg_singular_values(la, m, n, x[0], x[1]);
    case LINALG_SVD:
        return Linalg_svd(la, n, x[0], x[1], x[2], x[3]);
    case LINALG_SYMMETRIC_EIGENVALUES:
        return Linalg_symmetric_eigenvalues(la, n, x[0], x[1]);
    case LINALG_GRAM:
        return Linalg_gram(la, m, n, x[0], x[1]);
    case LINALG_ORTHONORMAL: { /* in place: the output is compared in x[1] */
        int status = Linalg_orthonormalise(la, m, n, x[0]);
        memcpy(x[1], x[0], b->size[1] * sizeof(double));
        return status;
    }
    case LINALG_SOLVE: /* b is an input too: the same one for every run */
        for (int i = 0; i < n; i++)
            x[1][i] = 1.0 + i % 7;
        return Linalg_solve(la, n, x[0], x[1], x[2]);
    case LINALG_CHOLESKY: /* made positive definite: the factorisation runs to its end */
        for (int i = 0; i < n; i++)
            x[0][i + (size_t)i * n] += n;
        return Linalg_cholesky(la, n, x[0], x[1]);
    case LINALG_ROUTINES:
        break;
    }
    fail_msg("no such routine %d", routine);
    return -1;
}

/* routine at m×n in a worker and in process: the same status and the same bits. */
static void check_isolated_matches(LinalgRoutine routine, int m, int n, unsigned seed)
{
    double *a = random_doubles((size_t)m * n, seed);
    Linalg *here = Linalg_new(), *there = isolated_linalg();
    assert_non_null(here);
    Buffers expected = buffers_new(routine, m, n), got = buffers_new(routine, m, n);
    int before = isolated_calls;
    assert_int_equal(run_routine(there, routine, m, n, a, &got), 0);
    assert_int_equal(isolated_calls, before + 1);
    assert_worker_gone(0);
    assert_int_equal(run_routine(here, routine, m, n, a, &expected), 0);
    for (int i = 1; i < expected.arrays; i++)
        for (size_t k = 0; k < expected.size[i]; k++)
            if (memcmp(&expected.array[i][k], &got.array[i][k], sizeof(double)))
                fail_msg("routine %d at %d×%d: output %d[%zu] = %.17g in a worker, %.17g here",
                         routine, m, n, i, k, got.array[i][k], expected.array[i][k]);
    buffers_free(&expected);
    buffers_free(&got);
    Linalg_free(here);
    Linalg_free(there);
    free(a);
}

static void test_isolated_calls_give_the_same_bits(void **state)
{
    (void)state;
    check_isolated_matches(LINALG_EIGENVALUES, 512, 512, 1);
    check_isolated_matches(LINALG_EIGENVALUES, 1000, 1000, 2);
    check_isolated_matches(LINALG_SINGULAR_VALUES, 1024, 1024, 3);
    check_isolated_matches(LINALG_SINGULAR_VALUES, 900, 1300, 4); /* T < d, as measure.c */
    check_isolated_matches(LINALG_SVD, 768, 768, 5);
    check_isolated_matches(LINALG_SYMMETRIC_EIGENVALUES, 1536, 1536, 6);
    check_isolated_matches(LINALG_GRAM, 1600, 2000, 7);        /* T < d, as measure.c */
    check_isolated_matches(LINALG_ORTHONORMAL, 2000, 1600, 8); /* d×T, as the input */
    check_isolated_matches(LINALG_SOLVE, 2100, 2100, 9);
    check_isolated_matches(LINALG_CHOLESKY, 2600, 2600, 10);
}

/* A call shorter than ~0.1 s stays in process. */
static void test_short_calls_stay_in_process(void **state)
{
    (void)state;
    const struct {
        LinalgRoutine routine;
        int m, n;
    } calls[] = {
        {LINALG_EIGENVALUES, 500, 500}, {LINALG_SINGULAR_VALUES, 512, 1024},
        {LINALG_SVD, 512, 512},         {LINALG_SYMMETRIC_EIGENVALUES, 1024, 1024},
        {LINALG_GRAM, 1024, 1024},      {LINALG_ORTHONORMAL, 1000, 800},
        {LINALG_SOLVE, 1024, 1024},
    };
    Linalg *la = isolated_linalg();
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        double *a = random_doubles((size_t)calls[i].m * calls[i].n, 12);
        Buffers b = buffers_new(calls[i].routine, calls[i].m, calls[i].n);
        int before = isolated_calls;
        assert_int_equal(run_routine(la, calls[i].routine, calls[i].m, calls[i].n, a, &b), 0);
        assert_int_equal(isolated_calls, before);
        buffers_free(&b);
        free(a);
    }
    Linalg_free(la);
}

/* Stops from `delay` seconds after the start; notes the first worker it sees and when it
   first said stop. */
typedef struct {
    double start, delay, stopped_at;
    pid_t worker;
    bool kill_worker; /* instead of stopping: kill the worker, as the OOM killer would */
} StopClock;

/* Whether a worker has mapped its call's memfd, which it does only after it has sent the
   caller its pidfd: a worker killed from then on is one the caller knew of.  (Killed sooner,
   between the fork and that message, it would be indistinguishable to the caller from a fork
   the helper could not make, which is no death to report.) */
static bool worker_mapped_its_call(pid_t pid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    bool mapped = false;
    while (f && !mapped && fgets(line, sizeof line, f))
        mapped = strstr(line, "/memfd:attnscope-linalg") != NULL;
    if (f)
        fclose(f);
    return mapped;
}

static bool stop_clock(void *context)
{
    StopClock *s = context;
    pid_t pids[4];
    if (!s->worker && helper_children(pids, 4) >= 1 &&
        (!s->kill_worker || worker_mapped_its_call(pids[0]))) {
        s->worker = pids[0];
        if (s->kill_worker)
            kill(s->worker, SIGKILL);
    }
    double t = now();
    if (s->kill_worker || t < s->start + s->delay)
        return false;
    if (!s->stopped_at)
        s->stopped_at = t;
    return true;
}

static void test_a_stop_ends_a_long_dgeev_within_the_bound(void **state)
{
    (void)state;
    int n = 2048; /* dgeev takes ~5 s here on one core */
    double *a = random_doubles((size_t)n * n, 7);
    Buffers b = buffers_new(LINALG_EIGENVALUES, n, n);
    Linalg *la = isolated_linalg();
    StopClock clock = {.start = now(), .delay = 0.5};
    Linalg_set_stop(la, (LinalgStop){stop_clock, &clock});
    int status = run_routine(la, LINALG_EIGENVALUES, n, n, a, &b);
    double returned = now();
    assert_int_equal(status, LINALG_STOPPED);
    assert_true(clock.worker > 0); /* it ran in a worker */
    assert_true(clock.stopped_at > 0);
    if (!(returned - clock.stopped_at < 2.0))
        fail_msg("returned %.3f s after the stop", returned - clock.stopped_at);
    assert_worker_gone(clock.worker);

    /* The next call works, in a worker again, with the same bits as in process. */
    Linalg_set_stop(la, (LinalgStop){0});
    check_isolated_matches(LINALG_EIGENVALUES, 512, 512, 8);
    buffers_free(&b);
    Linalg_free(la);
    free(a);
}

static bool always(void *context)
{
    (void)context;
    return true;
}

static void test_a_stop_before_the_call_starts_no_worker(void **state)
{
    (void)state;
    int n = 1024;
    double *a = random_doubles((size_t)n * n, 9);
    Buffers b = buffers_new(LINALG_EIGENVALUES, n, n);
    Linalg *la = isolated_linalg();
    Linalg_set_stop(la, (LinalgStop){always, NULL});
    double start = now();
    assert_int_equal(run_routine(la, LINALG_EIGENVALUES, n, n, a, &b), LINALG_STOPPED);
    assert_true(now() - start < 0.1);
    buffers_free(&b);
    Linalg_free(la);
    free(a);
}

/* A worker that dies on its own (here killed as the OOM killer would, once it is computing)
   leaves the call to the caller's process: the call still succeeds, with the same bits. */
static void test_a_worker_that_dies_leaves_the_call_in_process(void **state)
{
    (void)state;
    int n = 1024;
    double *a = random_doubles((size_t)n * n, 10);
    Buffers expected = buffers_new(LINALG_EIGENVALUES, n, n),
            got = buffers_new(LINALG_EIGENVALUES, n, n);
    Linalg *here = Linalg_new(), *la = isolated_linalg();
    assert_non_null(here);
    StopClock clock = {.kill_worker = true};
    Linalg_set_stop(la, (LinalgStop){stop_clock, &clock});
    int before = isolated_calls;
    assert_int_equal(run_routine(la, LINALG_EIGENVALUES, n, n, a, &got), 0);
    assert_true(clock.worker > 0);
    assert_int_equal(isolated_calls, before);
    assert_int_equal(run_routine(here, LINALG_EIGENVALUES, n, n, a, &expected), 0);
    assert_memory_equal(got.array[1], expected.array[1], n * sizeof(double));
    assert_memory_equal(got.array[2], expected.array[2], n * sizeof(double));
    /* ... and it is said, once (issue 26: it was silent). */
    char note[256];
    assert_true(Isolate_notice(note, sizeof note));
    assert_non_null(strstr(note, "a LAPACK worker process died before answering"));
    assert_false(Isolate_notice(note, sizeof note));
    buffers_free(&expected);
    buffers_free(&got);
    Linalg_free(here);
    Linalg_free(la);
    free(a);
}

/* A process that is a zombie (ended, not reaped) or gone. */
static bool process_ended(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;
    bool zombie = false;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "State:", 6) == 0)
            zombie = strchr(line, 'Z') != NULL;
    fclose(f);
    return zombie;
}

/* Kills the helper and waits until it has ended; its pid. */
static pid_t kill_helper(void)
{
    pid_t old = Isolate_helper_pid();
    assert_true(old > 0);
    assert_int_equal(kill(old, SIGKILL), 0);
    for (int tries = 0; tries < 2000 && !process_ended(old); tries++)
        usleep(1000);
    assert_true(process_ended(old));
    return old;
}

/* A helper killed from outside (issue 26: never noticed, a zombie until exit, every later
   call in process and slow to stop): noticed, reaped, and a fresh one (this test binary run
   with ISOLATE_HELPER_OPTION) serves the next isolated call. */
static void test_a_killed_helper_is_reaped_and_restarted(void **state)
{
    (void)state;
    Isolate_restart_with("/proc/self/exe");
    pid_t old = kill_helper();
    char note[256], expected[128];
    assert_true(Isolate_notice(note, sizeof note));
    snprintf(expected, sizeof expected,
             "the LAPACK helper process %d ended (killed by signal 9): "
             "restarted as %d",
             (int)old, (int)Isolate_helper_pid());
    assert_string_equal(note, expected);
    assert_false(process_exists(old)); /* reaped: no zombie */
    assert_true(Isolate_helper_pid() > 0 && Isolate_helper_pid() != old);
    check_isolated_matches(LINALG_SVD, 700, 700, 12); /* in the new helper, the same bits */
}

/* Without a program to restart with, the next call notices the dead helper, reaps it and runs
   in process; the note says isolation is off. */
static void test_a_killed_helper_without_restart_turns_isolation_off(void **state)
{
    (void)state;
    Isolate_restart_with(NULL);
    pid_t old = kill_helper();
    int n = 700;
    double *a = random_doubles((size_t)n * n, 13);
    Buffers got = buffers_new(LINALG_SVD, n, n);
    Linalg *la = isolated_linalg();
    int before = isolated_calls;
    assert_int_equal(run_routine(la, LINALG_SVD, n, n, a, &got), 0);
    assert_int_equal(isolated_calls, before);
    assert_false(process_exists(old));
    assert_int_equal(Isolate_helper_pid(), -1);
    char note[256];
    assert_true(Isolate_notice(note, sizeof note));
    assert_non_null(
        strstr(note, "ended (killed by signal 9): long LAPACK calls now run in process"));
    assert_int_equal(Isolate_start(), 0); /* for the tests after this one */
    buffers_free(&got);
    Linalg_free(la);
    free(a);
}

/* Without the helper every call runs in process; starting it again brings isolation back. */
static void test_without_the_helper_calls_run_in_process(void **state)
{
    (void)state;
    Isolate_end();
    assert_int_equal(Isolate_helper_pid(), -1);
    int n = 700;
    double *a = random_doubles((size_t)n * n, 11);
    Buffers expected = buffers_new(LINALG_SVD, n, n), got = buffers_new(LINALG_SVD, n, n);
    Linalg *here = Linalg_new(), *la = isolated_linalg();
    assert_non_null(here);
    int before = isolated_calls;
    assert_int_equal(run_routine(la, LINALG_SVD, n, n, a, &got), 0);
    assert_int_equal(isolated_calls, before);
    assert_int_equal(run_routine(here, LINALG_SVD, n, n, a, &expected), 0);
    for (int i = 1; i < expected.arrays; i++)
        assert_memory_equal(got.array[i], expected.array[i], expected.size[i] * sizeof(double));

    assert_int_equal(Isolate_start(), 0);
    assert_true(Isolate_helper_pid() > 0);
    assert_int_equal(run_routine(la, LINALG_SVD, n, n, a, &got), 0);
    assert_int_equal(isolated_calls, before + 1);
    buffers_free(&expected);
    buffers_free(&got);
    Linalg_free(here);
    Linalg_free(la);
    free(a);
}

typedef struct {
    unsigned seed;
    int status;
    double *re_im;
} Lane;

static void *lane_main(void *context)
{
    Lane *lane = context;
    int n = 640;
    double *a = random_doubles((size_t)n * n, lane->seed);
    Linalg *la = Linalg_new();
    if (la) {
        Linalg_set_isolation(la, (LinalgIsolation){.run = counting_run});
        lane->status = Linalg_eigenvalues(la, n, a, lane->re_im, lane->re_im + n);
    }
    Linalg_free(la);
    free(a);
    return NULL;
}

/* The screen's two lanes call at the same time, each through its own channel. */
static void test_two_lanes_call_at_once(void **state)
{
    (void)state;
    int n = 640;
    Lane lanes[2];
    pthread_t threads[2];
    int before = isolated_calls;
    for (int l = 0; l < 2; l++) {
        lanes[l] = (Lane){.seed = 50 + l, .status = -1, .re_im = calloc(2 * n, sizeof(double))};
        assert_non_null(lanes[l].re_im);
        assert_int_equal(pthread_create(&threads[l], NULL, lane_main, &lanes[l]), 0);
    }
    for (int l = 0; l < 2; l++)
        assert_int_equal(pthread_join(threads[l], NULL), 0);
    assert_int_equal(isolated_calls, before + 2);
    Linalg *here = Linalg_new();
    assert_non_null(here);
    double *expected = malloc(2 * n * sizeof(double));
    assert_non_null(expected);
    for (int l = 0; l < 2; l++) {
        assert_int_equal(lanes[l].status, 0);
        double *a = random_doubles((size_t)n * n, lanes[l].seed);
        assert_int_equal(Linalg_eigenvalues(here, n, a, expected, expected + n), 0);
        assert_memory_equal(lanes[l].re_im, expected, 2 * n * sizeof(double));
        free(a);
        free(lanes[l].re_im);
    }
    assert_worker_gone(0);
    free(expected);
    Linalg_free(here);
}

/* Counts the polls of Linalg_gemm (one per block) and stops at poll stop_at (0: never). */
typedef struct {
    int polls, stop_at;
} Polls;

static bool count_polls(void *context)
{
    Polls *p = context;
    p->polls++;
    return p->stop_at && p->polls >= p->stop_at;
}

/* Linalg_gemm with a stop hook, in blocks, against one cblas_dgemm call: the same bits.
   Returns the number of blocks. */
static int check_gemm(bool ta, bool tb, int m, int n, int k, double beta, unsigned seed)
{
    int lda = ta ? k : m, ldb = tb ? n : k;
    double *a = random_doubles((size_t)m * k, seed), *b = random_doubles((size_t)k * n, seed + 1),
           *expected = random_doubles((size_t)m * n, seed + 2);
    double *got = malloc((size_t)m * n * sizeof *got);
    assert_non_null(got);
    memcpy(got, expected, (size_t)m * n * sizeof *got);
    cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
                k, 0.75, a, lda, b, ldb, beta, expected, m);
    Linalg *la = Linalg_new();
    assert_non_null(la);
    Polls polls = {0};
    Linalg_set_stop(la, (LinalgStop){count_polls, &polls});
    assert_int_equal(Linalg_gemm(la, ta, tb, m, n, k, 0.75, a, lda, b, ldb, beta, got, m), 0);
    for (size_t i = 0; i < (size_t)m * n; i++)
        if (memcmp(&expected[i], &got[i], sizeof(double)))
            fail_msg("%c%c %d×%d×%d beta %g: C[%zu] = %.17g in %d blocks, %.17g in one call",
                     ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, beta, i, got[i], polls.polls,
                     expected[i]);
    Linalg_free(la);
    free(a);
    free(b);
    free(expected);
    free(got);
    return polls.polls;
}

static void test_gemm_in_blocks_gives_the_bits_of_one_call(void **state)
{
    (void)state;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            assert_true(check_gemm(ta, tb, 2048, 2048, 2048, 0.0, 20 + 2 * ta + tb) >= 4);
    assert_true(check_gemm(false, false, 2000, 1500, 1999, 1.0, 30) >= 2); /* odd, beta = 1 */
    assert_true(check_gemm(false, true, 1024, 5000, 1024, 0.0, 31) >= 2);  /* logits: K·Qᵀ */
    assert_true(check_gemm(true, false, 1100, 1100, 4096, 0.5, 32) >= 2);
    assert_int_equal(check_gemm(false, false, 300, 257, 200, 0.0, 33), 1); /* one block */
}

static void test_gemm_stops_between_blocks(void **state)
{
    (void)state;
    int n = 2048;
    double *a = random_doubles((size_t)n * n, 40), *c = random_doubles((size_t)n * n, 41);
    Linalg *la = Linalg_new();
    assert_non_null(la);
    Polls polls = {.stop_at = 3};
    Linalg_set_stop(la, (LinalgStop){count_polls, &polls});
    assert_int_equal(Linalg_gemm(la, false, false, n, n, n, 1.0, a, n, a, n, 0.0, c, n),
                     LINALG_STOPPED);
    assert_int_equal(polls.polls, 3);

    /* With more BLAS threads OpenBLAS splits the columns itself: one block, one poll. */
    Linalg_set_blas_threads(2);
    polls = (Polls){0};
    assert_int_equal(Linalg_gemm(la, false, false, n, n, n, 1.0, a, n, a, n, 0.0, c, n), 0);
    assert_int_equal(polls.polls, 1);
    Linalg_set_blas_threads(1);
    Linalg_free(la);
    free(a);
    free(c);
}

/* Everything a run computed, bit for bit. */
static void assert_same_result(const Result *expected, const Result *got)
{
    const Config *c = &expected->config;
    assert_int_equal(got->layers_done, expected->layers_done);
    assert_int_equal(got->spectra_ready, expected->spectra_ready);
    for (int i = 0; i < RESULT_SERIES_COUNT; i++)
        if (memcmp(RESULT_SERIES[i].values(expected), RESULT_SERIES[i].values(got),
                   sizeof(double) * (size_t)(c->depth + 1)))
            fail_msg("series %s differs", RESULT_SERIES[i].name);
    assert_memory_equal(expected->eigenvalues, got->eigenvalues, sizeof(Complex) * c->tokens);
    assert_memory_equal(expected->singular_values, got->singular_values,
                        sizeof(double) * c->tokens);
    assert_memory_equal(&expected->readouts, &got->readouts, sizeof expected->readouts);
}

/* The worker's setting: isolation, single-threaded BLAS, a stop hook (so the products run in
   blocks) that counts its polls and stops once a worker process runs, if asked. */
typedef struct {
    atomic_int polls;
    bool stop_in_worker;
} RunStop;

static bool run_stop(void *context)
{
    RunStop *s = context;
    s->polls++;
    pid_t pid;
    return s->stop_in_worker && helper_children(&pid, 1) >= 1;
}

static Config isolated_config(void)
{
    Config c = Config_default();
    c.tokens = c.width = 1024; /* its dgeev and dgesdd run in workers, its Gram matrix not */
    c.depth = 2;
    return c;
}

static void test_an_isolated_run_gives_the_bits_of_one_in_process(void **state)
{
    (void)state;
    Config c = isolated_config();
    char err[256];
    Workspace *here = Workspace_new(), *there = Workspace_new();
    Result *expected = Result_new(), *got = Result_new();
    assert_true(here && there && expected && got);
    assert_int_equal(Model_run(&c, here, expected, NULL, err, sizeof err), 0);

    Workspace_set_isolation(there, (LinalgIsolation){.run = counting_run});
    RunStop never = {0};
    Progress progress = {.stop_requested = run_stop, .context = &never};
    int before = isolated_calls;
    assert_int_equal(Model_run(&c, there, got, &progress, err, sizeof err), 0);
    assert_true(isolated_calls >= before + 2); /* the shown layer's two spectra */
    assert_true(never.polls > 0);
    assert_worker_gone(0);
    assert_same_result(expected, got);

    Result_free(expected);
    Result_free(got);
    Workspace_free(here);
    Workspace_free(there);
}

/* A stop inside an isolated call stops the run (not a LAPACK failure), leaves no worker, and
   leaves what the workspace keeps whole: the next run gives the bits of a fresh one. */
static void test_a_stop_inside_an_isolated_call_stops_the_run(void **state)
{
    (void)state;
    Config c = isolated_config();
    char err[256];
    Workspace *fresh = Workspace_new(), *w = Workspace_new();
    Result *expected = Result_new(), *got = Result_new();
    assert_true(fresh && w && expected && got);
    assert_int_equal(Model_run(&c, fresh, expected, NULL, err, sizeof err), 0);

    Workspace_set_isolation(w, Isolate_linalg());
    Workspace_keep_layers(w, (size_t)1 << 30);
    RunStop stop = {.stop_in_worker = true};
    Progress progress = {.stop_requested = run_stop, .context = &stop};
    assert_int_equal(Model_run(&c, w, got, &progress, err, sizeof err), 0);
    assert_false(got->spectra_ready); /* stopped in the shown layer's dgeev */
    assert_worker_gone(0);

    RunStop never = {0};
    progress.context = &never;
    assert_int_equal(Model_run(&c, w, got, &progress, err, sizeof err), 0);
    assert_same_result(expected, got);

    Result_free(expected);
    Result_free(got);
    Workspace_free(fresh);
    Workspace_free(w);
}

int main(int argc, char **argv)
{
    /* A helper restarted by test_a_killed_helper_is_reaped_and_restarted. */
    if (argc == 3 && strcmp(argv[1], ISOLATE_HELPER_OPTION) == 0)
        Isolate_serve(atoi(argv[2]));
    /* First, while this process has no thread of its own (see isolate.c). */
    if (Isolate_start()) {
        fprintf(stderr, "test_isolate: no helper: %s\n", strerror(errno));
        return 1;
    }
    Linalg_set_blas_threads(1);
    isolation = Isolate_linalg();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_isolated_calls_give_the_same_bits),
        cmocka_unit_test(test_short_calls_stay_in_process),
        cmocka_unit_test(test_a_stop_ends_a_long_dgeev_within_the_bound),
        cmocka_unit_test(test_a_stop_before_the_call_starts_no_worker),
        cmocka_unit_test(test_a_worker_that_dies_leaves_the_call_in_process),
        cmocka_unit_test(test_a_killed_helper_is_reaped_and_restarted),
        cmocka_unit_test(test_a_killed_helper_without_restart_turns_isolation_off),
        cmocka_unit_test(test_without_the_helper_calls_run_in_process),
        cmocka_unit_test(test_two_lanes_call_at_once),
        cmocka_unit_test(test_gemm_in_blocks_gives_the_bits_of_one_call),
        cmocka_unit_test(test_gemm_stops_between_blocks),
        cmocka_unit_test(test_an_isolated_run_gives_the_bits_of_one_in_process),
        cmocka_unit_test(test_a_stop_inside_an_isolated_call_stops_the_run),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    Isolate_end();
    return failed;
}
