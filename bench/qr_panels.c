/* Linalg_orthonormalise in process (its QR in panels of 32 columns, polling a stop hook that
 * never fires) against one dgeqrf and one dorgqr on the same matrix: thread CPU seconds,
 * interleaved rounds, medians.  The two give the same bits (tests/test_qr_stop.c).
 *
 *   cc -std=c11 -O2 -D_GNU_SOURCE -Iinclude bench/qr_panels.c build/libattnscope_core.a \
 *       -lgsl -lopenblas -llapacke -lm -o build/bench/qr_panels
 *   OPENBLAS_NUM_THREADS=1 build/bench/qr_panels 1024 9
 */
#include "attnscope/linalg.h"

#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ROUNDS_MAX = 64 };

static double thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static bool never(void *context)
{
    (void)context;
    return false;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1024, rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 1 || rounds < 1 || rounds > ROUNDS_MAX) {
        fprintf(stderr, "usage: qr_panels N ROUNDS (1..%d)\n", ROUNDS_MAX);
        return 2;
    }
    size_t nn = (size_t)n * n;
    double *source = malloc(sizeof(double) * nn), *a = malloc(sizeof(double) * nn);
    double *tau = malloc(sizeof(double) * (size_t)n);
    Linalg *la = Linalg_new();
    if (!source || !a || !tau || !la)
        return 1;
    Linalg_set_stop(la, (LinalgStop){.requested = never});
    srand(1);
    for (size_t i = 0; i < nn; i++)
        source[i] = rand() / (double)RAND_MAX - 0.5;
    double one_call[ROUNDS_MAX], panels[ROUNDS_MAX];
    for (int r = 0; r < rounds; r++) {
        memcpy(a, source, sizeof(double) * nn);
        double start = thread_seconds();
        LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n, n, a, n, tau);
        LAPACKE_dorgqr(LAPACK_COL_MAJOR, n, n, n, a, n, tau);
        one_call[r] = thread_seconds() - start;
        memcpy(a, source, sizeof(double) * nn);
        start = thread_seconds();
        Linalg_orthonormalise(la, n, n, a);
        panels[r] = thread_seconds() - start;
    }
    qsort(one_call, (size_t)rounds, sizeof(double), ascending);
    qsort(panels, (size_t)rounds, sizeof(double), ascending);
    printf("n = %d, %d rounds: one dgeqrf + dorgqr %.4f s (min %.4f), Linalg_orthonormalise "
           "%.4f s (min %.4f)\n",
           n, rounds, one_call[rounds / 2], one_call[0], panels[rounds / 2], panels[0]);
    Linalg_free(la);
    free(source);
    free(a);
    free(tau);
    return 0;
}
