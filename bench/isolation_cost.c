/* What isolation costs (issue 12): each long LAPACK call of a layer, in process and in an
 * isolated worker (src/common/isolate.c: a fork of the helper, the input copied into shared
 * memory, the outputs copied back), one BLAS thread as in the screen; medians of 3 runs.
 * Also a stop: from the stop request to the call's return with its worker gone.
 *
 *     cc -std=c11 -O2 -D_XOPEN_SOURCE=700 -D_DEFAULT_SOURCE -Iinclude -Isrc/common \
 *        bench/isolation_cost.c -o build/bench/isolation_cost build/libattnscope_common.a \
 *        build/libattnscope_core.a $(pkg-config --cflags --libs openblas lapacke) -lm
 *     build/bench/isolation_cost 1024 2048 4096
 *
 * Prints a Markdown table; reports, never fails.
 */
#include "attnscope/linalg.h"
#include "isolate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "timing.h"

enum { RUNS = 3 };

static void fill(double *p, size_t n, unsigned seed)
{
    unsigned long long x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (double)(x >> 11) / 9007199254740992.0 - 0.5;
    }
}

/* The routine on a fresh copy of the input (the calls destroy it). */
static int call(Linalg *la, LinalgRoutine routine, int n, const double *input, double **x,
                size_t *size)
{
    memcpy(x[0], input, size[0] * sizeof(double));
    switch (routine) {
    case LINALG_EIGENVALUES:
        return Linalg_eigenvalues(la, n, x[0], x[1], x[2]);
    case LINALG_SINGULAR_VALUES:
        return Linalg_singular_values(la, n, n, x[0], x[1]);
    case LINALG_GRAM:
        return Linalg_gram(la, n, n, x[0], x[1]);
    case LINALG_ORTHONORMAL:
        return Linalg_orthonormalise(la, n, n, x[0]);
    default:
        return -1;
    }
}

typedef struct {
    double at; /* stop from this time on */
} StopAt;

static bool stop_at(void *context)
{
    return now() >= ((StopAt *)context)->at;
}

static double median_seconds(Linalg *la, LinalgRoutine routine, int n, const double *input,
                             double **x, size_t *size)
{
    double t[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double start = now();
        if (call(la, routine, n, input, x, size))
            return -1;
        t[r] = now() - start;
    }
    qsort(t, RUNS, sizeof t[0], compare_doubles);
    return t[RUNS / 2];
}

int main(int argc, char **argv)
{
    if (Isolate_start()) {
        perror("isolation_cost: no helper");
        return 0;
    }
    Linalg_set_blas_threads(1);
    const struct {
        LinalgRoutine routine;
        const char *name;
    } routines[] = {
        {LINALG_ORTHONORMAL, "QR (dgeqrf + dorgqr)"},
        {LINALG_GRAM, "Gram matrix (dsyrk)"},
        {LINALG_SINGULAR_VALUES, "singular values (dgesdd)"},
        {LINALG_EIGENVALUES, "eigenvalues (dgeev)"},
    };
    printf("| call | n | in process (s) | isolated (s) | cost | stop -> return (ms) |\n");
    printf("|---|---:|---:|---:|---:|---:|\n");
    for (int a = 1; a < argc; a++) {
        int n = atoi(argv[a]);
        for (size_t i = 0; i < sizeof routines / sizeof routines[0]; i++) {
            LinalgRoutine routine = routines[i].routine;
            size_t size[LINALG_CALL_ARRAYS];
            int arrays = Linalg_call_sizes(routine, n, n, size);
            double *x[LINALG_CALL_ARRAYS] = {0};
            double *input = malloc(size[0] * sizeof(double));
            for (int k = 0; k < arrays; k++)
                x[k] = malloc(size[k] * sizeof(double));
            fill(input, size[0], (unsigned)n);
            Linalg *here = Linalg_new(), *there = Linalg_new();
            Linalg_set_isolation(there, Isolate_linalg());
            double local = median_seconds(here, routine, n, input, x, size);
            double isolated = median_seconds(there, routine, n, input, x, size);
            /* A stop halfway through the call. */
            StopAt stop = {.at = now() + 0.5 * local};
            Linalg_set_stop(there, (LinalgStop){stop_at, &stop});
            int status = call(there, routine, n, input, x, size);
            double returned = now();
            Linalg_set_stop(there, (LinalgStop){0});
            char stopped[32] = "-";
            if (status == LINALG_STOPPED)
                snprintf(stopped, sizeof stopped, "%.0f", 1e3 * (returned - stop.at));
            printf("| %s | %d | %.3f | %.3f | %+.1f%% | %s |\n", routines[i].name, n, local,
                   isolated, 100.0 * (isolated - local) / local, stopped);
            fflush(stdout);
            Linalg_free(here);
            Linalg_free(there);
            for (int k = 0; k < arrays; k++)
                free(x[k]);
            free(input);
        }
    }
    Isolate_end();
    return 0;
}
