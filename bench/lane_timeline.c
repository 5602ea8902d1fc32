/* Where a core idles in batch's schedule, on the wall clock (issue 25, bench/README.md):
 *
 *     cc -std=c11 -O2 -D_DEFAULT_SOURCE -Iinclude -Isrc/common bench/lane_timeline.c \
 *         src/common/lanes.c build/libattnscope_core.a -lgsl -lopenblas -llapacke -lm -pthread \
 *         -o build/bench/lane_timeline
 *     sleep 1; chrt -f 10 build/bench/lane_timeline T [in-turn]
 *
 * Runs Model_run once at T = d, L = 8, softmax, gap off, seed 1 (the floor's settings) with
 * batch's Progress (Lanes_run, the shown eigenvalues beside the deeper layers, the lanes
 * claimed meanwhile; with `in-turn`, without run_claimed, as before issue 25's claiming) and
 * prints on stderr, in milliseconds from the run's start, when each pair starts, when each
 * lane of it begins and ends on which thread (and its thread's CPU clock meanwhile, "ran"),
 * when the eigenvalues run beside and each time the run asks whether they are done.  overlap_clock
 * adds the threads' CPU clocks up as two idle cores would run them; this shows what the real
 * threads did, so run it where the other processes do not take its cores: under SCHED_FIFO (chrt),
 * a second after any other real-time run, as the kernel gives real-time threads 0.95 s of each
 * second: a run longer than that loses ~50 ms of a thread once a second, which "ran" shows below a
 * task's wall span. */
#include "floor_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double started;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * ((double)t.tv_sec + 1e-9 * (double)t.tv_nsec - started);
}

/* A task handed to the lanes, and what the timeline calls it. */
typedef struct {
    Lanes *lanes;
    void (*task)(int which, void *context);
    void *context;
    const char *kind;
} Timed;

/* The calling thread's CPU clock, ms: below the wall clock's span where the thread did not run. */
static double thread_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static void timed(int which, void *context)
{
    Timed *t = context;
    double begun = now_ms(), cpu = thread_ms();
    t->task(which, t->context);
    double ended = now_ms();
    cpu = thread_ms() - cpu;
    fprintf(stderr, "  %s lane %d: %.1f .. %.1f ms (%.1f, ran %.1f)\n", t->kind, which, begun,
            ended, ended - begun, cpu);
}

static Timed pair_timed, beside_timed;

static void pair(void *context, void (*task)(int, void *), void *task_context)
{
    pair_timed = (Timed){context, task, task_context, "pair"};
    fprintf(stderr, "pair at %.1f ms\n", now_ms());
    Lanes_run(context, timed, &pair_timed);
}

static void claimed(void *context, void (*task)(int, void *), void *task_context)
{
    pair_timed = (Timed){context, task, task_context, "claimed"};
    fprintf(stderr, "claimed pair at %.1f ms\n", now_ms());
    Lanes_run_claimed(context, timed, &pair_timed);
}

static void start_second(void *context, void (*task)(int, void *), void *task_context)
{
    beside_timed = (Timed){context, task, task_context, "eigenvalues beside,"};
    fprintf(stderr, "eigenvalues handed beside at %.1f ms\n", now_ms());
    Lanes_start(context, timed, &beside_timed);
}

static bool second_finished(void *context, bool wait)
{
    bool finished = Lanes_finished(context, wait);
    fprintf(stderr, "asked at %.1f ms%s: %s\n", now_ms(), wait ? " (waiting)" : "",
            finished ? "done" : "running");
    return finished;
}

int main(int argc, char **argv)
{
    int T = argc > 1 ? atoi(argv[1]) : 512;
    bool in_turn = argc > 2 && strcmp(argv[2], "in-turn") == 0;
    if (T < 2) {
        fprintf(stderr, "usage: lane_timeline T [in-turn]\n");
        return 2;
    }
    FloorRun f;
    if (!FloorRun_begin(&f, T))
        return 1;
    Progress p = {.run_pair = pair,
                  .start_second = start_second,
                  .second_finished = second_finished,
                  .run_claimed = in_turn ? NULL : claimed,
                  .pair_context = f.lanes};
    char err[256];
    started = 0;
    started = now_ms() / 1e3;
    int status = Model_run(&f.config, f.w, f.r, &p, err, sizeof err);
    if (status)
        fprintf(stderr, "lane_timeline: %s\n", err);
    else
        fprintf(stderr, "end at %.1f ms\n", now_ms());
    FloorRun_end(&f);
    return status ? 1 : 0;
}
