/* Measure_tokens on a token matrix of flat spectrum, by the default routes and by the
 * reference (all eigenvalues, dsyevd), in turn, timed by the thread's CPU clock (issue 25,
 * bench/README.md): where the top-eigenpair certificate cannot hold, the flat-spectrum route
 * (Lanczos and a Cholesky proof) against dsyevd.  Builds against any core library:
 *
 *     cc -std=c11 -O2 -D_DEFAULT_SOURCE -Iinclude bench/flat_clock.c \
 *         build/libattnscope_core.a -lgsl -lopenblas -llapacke -lm -o build/bench/flat_clock
 *     OPENBLAS_NUM_THREADS=1 build/bench/flat_clock T [reps [gaussian [d]]]
 *
 * X (T×d, d = T unless given) orthonormal (X0's tokens: every nonzero eigenvalue of the Gram
 * matrix equal, as its centred matrix's but one; at d < T orthonormal columns), or with
 * gaussian = 1 Gaussian (a slowly falling top).  Each call forms X's and the centred Gram
 * matrix (T²d flops each) besides the routes.  Prints the route, X's and the centred sr − 1 of
 * both and their median CPU seconds. */
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/random.h"
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    double seconds[100];
    Measures m;
} Timed;

/* One Measure_tokens of x, by the default routes (lanczos) or dsyevd (NULL); 0 or failure. */
static int time_once(Linalg *la, int T, int d, const double *x, double *unit, double *gram,
                     double *eig, double *lanczos, Timed *t, int rep)
{
    double start = thread_seconds();
    int info = Measure_tokens(la, T, d, x, 0.0, unit, gram, eig, lanczos, &t->m);
    t->seconds[rep] = thread_seconds() - start;
    return info;
}

int main(int argc, char **argv)
{
    int T = argc > 1 ? atoi(argv[1]) : 1024, reps = argc > 2 ? atoi(argv[2]) : 5;
    int gaussian = argc > 3 ? atoi(argv[3]) : 0, d = argc > 4 ? atoi(argv[4]) : T;
    if (T < 2 || reps < 1 || reps > 100 || d < 2 || d > T) {
        fprintf(stderr, "usage: flat_clock T [reps 1..100 [gaussian 0|1 [d 2..T]]]\n");
        return 2;
    }
    size_t tt = (size_t)T * T, td = (size_t)T * d;
    double *x = malloc(sizeof(double) * td), *unit = malloc(sizeof(double) * td);
    double *gram = malloc(sizeof(double) * tt), *eig = malloc(sizeof(double) * T);
    double *lanczos = malloc(sizeof(double) * Measure_tokens_scratch_size(T, d));
    RandomStream *random = RandomStream_new();
    Linalg *la = Linalg_new();
    RandomStream_gaussian(random, 1, 1, ROLE_QUERY, 1.0, x, td);
    if (!gaussian && Linalg_orthonormalise(la, T, d, x)) {
        fprintf(stderr, "flat_clock: the QR failed\n");
        return 1;
    }
    Timed fast, reference;
    for (int r = 0; r < reps; r++)
        if (time_once(la, T, d, x, unit, gram, eig, lanczos, &fast, r) ||
            time_once(la, T, d, x, unit, gram, eig, NULL, &reference, r)) {
            fprintf(stderr, "flat_clock: Measure_tokens failed\n");
            return 1;
        }
    qsort(fast.seconds, reps, sizeof(double), compare_doubles);
    qsort(reference.seconds, reps, sizeof(double), compare_doubles);
    printf("{\"T\": %d, \"d\": %d, \"tokens\": \"%s\", \"route\": %d, "
           "\"stable_rank_minus_one\": [%.17g, %.17g], \"centred_stable_rank\": [%.17g, %.17g], "
           "\"seconds_median\": [%.6f, %.6f]}\n",
           T, d, gaussian ? "gaussian" : "orthonormal", (int)fast.m.route,
           fast.m.stable_rank_minus_one, reference.m.stable_rank_minus_one,
           fast.m.geometry.centred_stable_rank, reference.m.geometry.centred_stable_rank,
           fast.seconds[reps / 2], reference.seconds[reps / 2]);
    Linalg_free(la);
    RandomStream_free(random);
    free(x);
    free(unit);
    free(gram);
    free(eig);
    free(lanczos);
    return 0;
}
