/* What the factorised initialisations cost per layer (docs/model.md §1.10): the time one
 * layer's weights take to draw under the normal scheme, cutting-skip (one d×d SVD per head,
 * for W^Q and W^K) and mimetic with an output projection (one per head for W^Q W^Kᵀ, and
 * one each for W^V and W^O), through init.h as the model draws them, and the cost model's
 * price of the same draws at this machine's calibrated rates.
 *
 * Usage: bench_init [-d N] [--heads H] [--reps N]
 * Prints one JSON object: medians in milliseconds.  Threads: as OPENBLAS_NUM_THREADS says.
 */
#include "attnscope/config.h"
#include "attnscope/cost.h"
#include "attnscope/init.h"
#include "attnscope/linalg.h"
#include "attnscope/random.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "timing.h"

enum { REPS_MAX = 64 };

/* W^Q, W^K, W^V and W^O of one layer, as the model draws them. */
static double draw_seconds(const Config *c, RandomStream *random, Linalg *la, double *w[4],
                           double *scratch)
{
    double start = now();
    int info = Init_draw_query_key(random, la, c, 1, 1, w[0], w[1], scratch);
    if (!info)
        info = Init_draw_with_scratch(random, la, c, 1, 1, MATRIX_VALUE, w[2], scratch);
    if (!info)
        info = Init_draw_with_scratch(random, la, c, 1, 1, MATRIX_OUTPUT, w[3], scratch);
    if (info) {
        fprintf(stderr, "bench_init: drawing failed (%d)\n", info);
        exit(1);
    }
    return now() - start;
}

/* The cost model's price of one layer's weights: a one-layer run's price less the same run
   under the normal scheme, plus the normal scheme's draws, i.e. the schemes' difference. */
static double priced_difference(const Config *c, CostRates rates)
{
    Config normal = *c;
    normal.init = INIT_NORMAL;
    normal.output = OUTPUT_GAUSSIAN;
    return Cost_fresh_run(c, rates, COST_ONE_LANE) - Cost_fresh_run(&normal, rates, COST_ONE_LANE);
}

int main(int argc, char **argv)
{
    Config c = Config_default();
    c.width = 256;
    c.tokens = 16;
    c.depth = 1;
    c.output = OUTPUT_GAUSSIAN;
    int reps = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-d") == 0)
            c.width = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--heads") == 0)
            c.heads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_init [-d N] [--heads H] [--reps N]\n");
            return 2;
        }
    }
    if (c.width < 2 || c.heads < 1 || c.width % c.heads || reps < 1 || reps > REPS_MAX) {
        fprintf(stderr, "bench_init: -d N with H dividing it, 1 <= reps <= %d\n", REPS_MAX);
        return 2;
    }
    size_t dd = (size_t)c.width * c.width;
    Config cutting = c, mimetic = c;
    cutting.init = INIT_CUTTING_SKIP;
    cutting.output = OUTPUT_ORTHOGONAL;
    mimetic.init = INIT_MIMETIC;
    double *w[4], *scratch = malloc(sizeof(double) * Init_scratch_doubles(&mimetic));
    RandomStream *random = RandomStream_new();
    Linalg *la = Linalg_new();
    if (!scratch || !random || !la)
        return 1;
    for (int i = 0; i < 4; i++)
        if (!(w[i] = malloc(sizeof(double) * dd)))
            return 1;
    const Config *schemes[3] = {&c, &cutting, &mimetic};
    double ms[3];
    for (int s = 0; s < 3; s++) {
        double t[REPS_MAX];
        draw_seconds(schemes[s], random, la, w, scratch); /* LAPACK's workspace, the caches */
        for (int r = 0; r < reps; r++)
            t[r] = draw_seconds(schemes[s], random, la, w, scratch);
        ms[s] = 1e3 * median(t, reps);
    }
    CostRates rates = Cost_calibrate();
    printf("{\"d\": %d, \"heads\": %d, \"reps\": %d, \"normal_ms\": %.2f, "
           "\"cutting_skip_ms\": %.2f, \"mimetic_ms\": %.2f, \"svd_ms\": %.2f, "
           "\"cutting_skip_priced_extra_ms\": %.2f, \"mimetic_priced_extra_ms\": %.2f}\n",
           c.width, c.heads, reps, ms[0], ms[1], ms[2], (ms[2] - ms[0]) / (c.heads + 2.0),
           1e3 * priced_difference(&cutting, rates), 1e3 * priced_difference(&mimetic, rates));
    for (int i = 0; i < 4; i++)
        free(w[i]);
    free(scratch);
    RandomStream_free(random);
    Linalg_free(la);
    return 0;
}
