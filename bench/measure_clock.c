/* Measure_tokens on a collapsed token matrix, timed by the thread's CPU clock (issue 25,
 * bench/README.md): the stable rank's deep route, dgesdd of X before the deflated route and
 * the deflated route after it.  The same source builds against any core library:
 *
 *     cc -std=c11 -O2 -D_DEFAULT_SOURCE -Iinclude bench/measure_clock.c \
 *         build/libattnscope_core.a -lgsl -lopenblas -llapacke -lm -o build/bench/measure_clock
 *     OPENBLAS_NUM_THREADS=1 build/bench/measure_clock T [reps [spread]]
 *
 * X (T×T) = 1·xᵀ + E with x and E Gaussian, ‖E‖_F ≈ spread·‖1·xᵀ‖_F (default 1e-13): sr − 1
 * ≈ spread⁴/T, below MEASURE_GRAM_FLOOR as at a collapsed layer; below spread = 1e-12 the
 * tokens are equal to within round-off and the centred matrix is not measured (the deeper
 * collapsed layers), above it its Gram matrix is decomposed too (the layer where the collapse
 * begins; with Gaussian E, whose spectrum is flat, by dsyevd).  Prints the route, sr − 1 and
 * the median CPU seconds of the reps; under callgrind, reps = 1 counts one call. */
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/random.h"
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int T = argc > 1 ? atoi(argv[1]) : 512, reps = argc > 2 ? atoi(argv[2]) : 5;
    double spread = argc > 3 ? atof(argv[3]) : 1e-13;
    if (T < 2 || reps < 1 || reps > 100 || !(spread > 0)) {
        fprintf(stderr, "usage: measure_clock T [reps 1..100 [spread > 0]]\n");
        return 2;
    }
    size_t tt = (size_t)T * T;
    double *x = malloc(sizeof(double) * tt), *noise = malloc(sizeof(double) * tt);
    double *token = malloc(sizeof(double) * T), *unit = malloc(sizeof(double) * tt);
    double *gram = malloc(sizeof(double) * tt), *eig = malloc(sizeof(double) * T);
    /* Measure_tokens_scratch_size(T, T) where it exists; Measure_lanczos_size(T) before. */
    double *lanczos = malloc(sizeof(double) * (Measure_lanczos_size(T) + T));
    RandomStream *random = RandomStream_new();
    RandomStream_gaussian(random, 1, 1, ROLE_QUERY, 1.0, token, T);
    RandomStream_gaussian(random, 1, 1, ROLE_KEY, spread / T, noise, tt);
    for (int j = 0; j < T; j++)
        for (int i = 0; i < T; i++)
            x[i + (size_t)j * T] = token[j] / T + noise[i + (size_t)j * T];
    Linalg *la = Linalg_new();
    double seconds[100];
    Measures m;
    for (int r = 0; r < reps; r++) {
        double start = thread_seconds();
        if (Measure_tokens(la, T, T, x, 0.0, unit, gram, eig, lanczos, &m)) {
            fprintf(stderr, "measure_clock: Measure_tokens failed\n");
            return 1;
        }
        seconds[r] = thread_seconds() - start;
    }
    qsort(seconds, reps, sizeof seconds[0], compare_doubles);
    printf("{\"T\": %d, \"spread\": %g, \"route\": %d, \"stable_rank_minus_one\": %.17g, "
           "\"energy_off_top\": "
           "%.17g, \"seconds_median\": %.6f, \"seconds_min\": %.6f}\n",
           T, spread, (int)m.route, m.stable_rank_minus_one, m.geometry.energy_off_top,
           seconds[reps / 2], seconds[0]);
    Linalg_free(la);
    RandomStream_free(random);
    free(x);
    free(noise);
    free(token);
    free(unit);
    free(gram);
    free(eig);
    free(lanczos);
    return 0;
}
