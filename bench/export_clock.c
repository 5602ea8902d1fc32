/* What the screen's export key costs the thread it runs on, with the attention maps kept
 * whole (--export-matrix), by that thread's CPU clock and the wall clock (bench/README.md):
 * Export_input (X0 made again for input.csv, which the key's handler ran before it moved to
 * the worker), Export_write with X0 (the eleven-file export the key runs now) and without it
 * (the export without --export-matrix).  The same source builds against any library tree:
 *
 *     cc -std=c11 -O2 -D_GNU_SOURCE -Iinclude -Isrc/common bench/export_clock.c \
 *         build/libattnscope_common.a build/libattnscope_core.a -lgsl -lopenblas -llapacke \
 *         -lm -o build/bench/export_clock
 *     OPENBLAS_NUM_THREADS=1 build/bench/export_clock T [reps [dir]]
 *
 * One run of T = d = T, L = 1 (the default settings otherwise) first, untimed; then reps
 * rounds of the three, each line one round.  dir (default /tmp/attnscope-export-clock) is
 * replaced as a whole by each export. */
#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "export.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    double wall, cpu;
} Lap;

static Lap lap_start(void)
{
    return (Lap){seconds(CLOCK_MONOTONIC), seconds(CLOCK_THREAD_CPUTIME_ID)};
}

static Lap lap_since(Lap start)
{
    Lap now = lap_start();
    return (Lap){now.wall - start.wall, now.cpu - start.cpu};
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: export_clock T [reps [dir]]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    const char *dir = argc > 3 ? argv[3] : "/tmp/attnscope-export-clock";
    char err[512];
    Linalg_set_blas_threads(1);
    Config c = Config_default();
    c.tokens = c.width = atoi(argv[1]);
    c.depth = 1;
    if (Config_validate(&c, err, sizeof err)) {
        fprintf(stderr, "export_clock: %s\n", err);
        return 2;
    }
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    Workspace_full_attention_maps(w, true);
    if (Model_run(&c, w, r, NULL, err, sizeof err)) {
        fprintf(stderr, "export_clock: %s\n", err);
        return 1;
    }
    for (int i = 0; i < reps; i++) {
        Lap start = lap_start();
        double *input = Export_input(&r->config, NULL, err, sizeof err);
        Lap made = lap_since(start);
        start = lap_start();
        int whole = input ? Export_write(r, NULL, input, dir, err, sizeof err) : -1;
        Lap written = lap_since(start);
        start = lap_start();
        int plain = Export_write(r, NULL, NULL, dir, err, sizeof err);
        Lap plain_written = lap_since(start);
        free(input);
        if (whole < 0 || plain < 0) {
            fprintf(stderr, "export_clock: %s\n", err);
            return 1;
        }
        printf("T = d = %d: Export_input %.3f s CPU (%.3f wall); Export_write, %d files, %.3f s "
               "CPU (%.3f wall); without X0, %d files, %.3f s CPU (%.3f wall)\n",
               c.tokens, made.cpu, made.wall, whole, written.cpu, written.wall, plain,
               plain_written.cpu, plain_written.wall);
    }
    Result_free(r);
    Workspace_free(w);
    return 0;
}
