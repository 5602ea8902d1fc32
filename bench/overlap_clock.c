/* The shown layer's dgeev on two cores, timed by the threads' own CPU clocks, which a loaded
 * machine interleaves but does not stretch (issue 25, bench/README.md):
 *
 *     cc -std=c11 -O2 -D_DEFAULT_SOURCE -Iinclude -Isrc/common bench/overlap_clock.c \
 *         src/common/lanes.c build/libattnscope_core.a -lgsl -lopenblas -llapacke -lm -pthread \
 *         -o build/bench/overlap_clock
 *     build/bench/overlap_clock T [reps]
 *
 * Runs Model_run at T = d, L = 8, softmax, gap off, seed 1 (the floor's settings), in turn
 * with the screen's schedule (Progress.run_pair alone: dgeev beside dgesdd, the next layers
 * waiting), batch's before issue 25's claiming (start_second too: dgeev beside the deeper
 * layers, whose networks take turns on the caller's thread meanwhile) and batch's (with
 * run_claimed: the lane thread claims a network step once dgeev ends).  Every piece is
 * timed by the CPU clock of the thread that runs it: the caller's work between the hooks, each
 * lane of a pair, the eigenvalues beside.  From them, the wall time two idle cores would
 * take: a pair ends when its slower lane does (a claimed lane that the lane thread ran starts
 * when the pair and the eigenvalues before it allow), a join when the eigenvalues are done (even
 * where the loaded run found them done sooner, so the estimate of the overlap errs long).
 * Prints one JSON object per schedule with the medians over the reps; with OVERLAP_TRACE set,
 * each piece to stderr as it ends (the caller's CPU alone before each pair, the pair's lanes,
 * the eigenvalues beside, and, on the wall clock, when they started and each time the run
 * asked whether they were done). */
#include "floor_run.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double wall_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The two idle cores' clock, kept beside the run. */
typedef struct {
    Lanes *lanes;
    double caller;      /* idle-core seconds of the caller's thread so far */
    double mark;        /* its CPU clock when `caller` was last brought up to date */
    double second_from; /* where the eigenvalues started beside, on the caller's clock */
    bool beside;        /* they run, not yet joined */
    void (*task)(int which, void *context);
    void *context;
    double cpu[2];  /* of the task's two parts (a pair's lanes, or the part beside in [1]) */
    double threads; /* CPU seconds of all threads */
    bool trace;     /* each piece to stderr as it ends */
    double started; /* the run's start on the wall clock: the trace says when the run asked */
    /* A claimed pair's (run_claimed): apart from the fields above, which the eigenvalues
       beside still use while the pair is posted. */
    pthread_t caller_thread;
    void (*pair_task)(int which, void *context);
    void *pair_context;
    double pair_cpu[2];
    bool on_second[2]; /* the lane thread ran that lane */
} Clock;

static void bring_up(Clock *k)
{
    double now = thread_seconds();
    k->caller += now - k->mark;
    k->threads += now - k->mark;
    k->mark = now;
}

static void timed(int which, void *context)
{
    Clock *k = context;
    double start = thread_seconds();
    k->task(which, k->context);
    k->cpu[which] = thread_seconds() - start;
}

static void pair(void *context, void (*task)(int, void *), void *task_context)
{
    Clock *k = context;
    double serial = thread_seconds() - k->mark;
    bring_up(k);
    k->task = task;
    k->context = task_context;
    Lanes_run(k->lanes, timed, k);
    if (k->trace)
        fprintf(stderr, "pair at %.3f s: caller alone before it %.3f s, lanes %.3f and %.3f s\n",
                k->caller, serial, k->cpu[0], k->cpu[1]);
    k->caller += k->cpu[0] > k->cpu[1] ? k->cpu[0] : k->cpu[1];
    k->threads += k->cpu[0] + k->cpu[1];
    k->mark = thread_seconds();
}

static void start_second(void *context, void (*task)(int, void *), void *task_context)
{
    Clock *k = context;
    bring_up(k);
    k->task = task;
    k->context = task_context;
    k->second_from = k->caller;
    if (k->trace)
        fprintf(stderr, "beside: started at wall %.3f s\n", wall_seconds() - k->started);
    k->beside = true;
    Lanes_start(k->lanes, timed, k);
}

static bool second_finished(void *context, bool wait)
{
    Clock *k = context;
    bring_up(k);
    bool finished = Lanes_finished(k->lanes, wait);
    /* Which of the run's questions found them still running: each such answer sends the
       next step's lanes in turn on the caller's thread. */
    if (k->trace && k->beside)
        fprintf(stderr, "beside: asked at wall %.3f s%s: %s\n", wall_seconds() - k->started,
                wait ? " (waiting)" : "", finished ? "done" : "running");
    if (finished && k->beside) {
        double end = k->second_from + k->cpu[1];
        if (k->trace)
            fprintf(stderr, "beside: from %.3f s, %.3f s, joined at %.3f s\n", k->second_from,
                    k->cpu[1], k->caller > end ? k->caller : end);
        k->caller = k->caller > end ? k->caller : end;
        k->threads += k->cpu[1];
        k->beside = false;
    }
    k->mark = thread_seconds();
    return finished;
}

static void timed_claim(int which, void *context)
{
    Clock *k = context;
    double start = thread_seconds();
    k->pair_task(which, k->pair_context);
    k->pair_cpu[which] = thread_seconds() - start;
    k->on_second[which] = !pthread_equal(pthread_self(), k->caller_thread);
}

/* The caller's lanes in turn from the pair's start; the lane thread's from when both the
   pair and the eigenvalues it ran before allow (it claims only after them). */
static void claimed(void *context, void (*task)(int, void *), void *task_context)
{
    Clock *k = context;
    double serial = thread_seconds() - k->mark;
    bring_up(k);
    k->pair_task = task;
    k->pair_context = task_context;
    Lanes_run_claimed(k->lanes, timed_claim, k);
    double caller_end = k->caller, second_end = k->caller;
    /* dgeev's CPU is known (and written) only where the lane thread went on to a lane. */
    bool second_ran = k->on_second[0] || k->on_second[1];
    if (second_ran && k->beside && k->second_from + k->cpu[1] > second_end)
        second_end = k->second_from + k->cpu[1];
    for (int n = 0; n < 2; n++) {
        *(k->on_second[n] ? &second_end : &caller_end) += k->pair_cpu[n];
        k->threads += k->pair_cpu[n];
    }
    if (k->trace)
        fprintf(stderr,
                "claimed pair at %.3f s: caller alone before it %.3f s, lanes %.3f (%s) and "
                "%.3f s (%s)\n",
                k->caller, serial, k->pair_cpu[0], k->on_second[0] ? "lane thread" : "caller",
                k->pair_cpu[1], k->on_second[1] ? "lane thread" : "caller");
    k->caller = caller_end > second_end ? caller_end : second_end;
    k->mark = thread_seconds();
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { REPS_MAX = 15 };

int main(int argc, char **argv)
{
    int T = argc > 1 ? atoi(argv[1]) : 1024, reps = argc > 2 ? atoi(argv[2]) : 3;
    if (T < 2 || reps < 1 || reps > REPS_MAX) {
        fprintf(stderr, "usage: overlap_clock T [reps, 1..%d]\n", REPS_MAX);
        return 2;
    }
    FloorRun f;
    if (!FloorRun_begin(&f, T))
        return 1;
    enum { SCHEDULES = 3 };
    static const char *const names[SCHEDULES] = {
        "screen (dgeev beside dgesdd)", "batch, networks in turn beside dgeev",
        "batch (dgeev beside the deeper layers, networks claimed)"};
    double idle[SCHEDULES][REPS_MAX], wall[SCHEDULES][REPS_MAX], cpu[SCHEDULES][REPS_MAX];
    char err[256];
    for (int rep = 0; rep < reps; rep++)
        for (int s = 0; s < SCHEDULES; s++) { /* interleaved */
            Clock k = {.lanes = f.lanes,
                       .mark = thread_seconds(),
                       .trace = getenv("OVERLAP_TRACE"),
                       .caller_thread = pthread_self()};
            Progress p = {.run_pair = pair, .pair_context = &k};
            if (s >= 1) {
                p.start_second = start_second;
                p.second_finished = second_finished;
            }
            if (s == 2)
                p.run_claimed = claimed;
            if (k.trace)
                fprintf(stderr, "%s\n", names[s]);
            double started = wall_seconds();
            k.started = started;
            if (Model_run(&f.config, f.w, f.r, &p, err, sizeof err)) {
                fprintf(stderr, "overlap_clock: %s\n", err);
                return 1;
            }
            bring_up(&k);
            wall[s][rep] = wall_seconds() - started;
            idle[s][rep] = k.caller;
            cpu[s][rep] = k.threads;
        }
    for (int s = 0; s < SCHEDULES; s++)
        printf("{\"T\": %d, \"schedule\": \"%s\", \"reps\": %d, \"two_idle_cores_s\": %.3f, "
               "\"cpu_s\": %.3f, \"wall_s\": %.3f}\n",
               T, names[s], reps, median(idle[s], reps), median(cpu[s], reps),
               median(wall[s], reps));
    FloorRun_end(&f);
    return 0;
}
