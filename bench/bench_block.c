/* The transformer block's forward pass against this machine's dgemm rate (issue 13).
 *
 * The block: softmax attention with H heads, a Gaussian W^O, pre-LN (ln), plain skip, a GELU
 * MLP of ratio R.  Its products per layer and network are
 *   Q, K: 4·T·d²   logits: 2·T²·d   values: 2·T·d²   A·V: 2·T²·d   W^O: 2·T·d²   MLP: 4R·T·d²
 * flops, (8 + 4R)·T·d² + 4·T²·d in all.  The time they take at the rate of one square dgemm
 * of size d (the best the BLAS does here) is the bound; the block's time per layer is
 * measured with Model_forward as (t(L) − t(1))/(L − 1), which leaves out the input, minus
 * the time its weights take to draw (random numbers, not products), measured alone.
 *
 * Usage: bench_block [-T N] [-d N] [--heads H] [--mlp-ratio R] [-L N] [--reps N]
 * Prints one JSON object: medians in milliseconds, the dgemm rate in GFLOP/s, and the ratio
 * of the block's time to its flops' time.  Threads: as OPENBLAS_NUM_THREADS says.
 */
#include "attnscope/config.h"
#include "attnscope/model.h"
#include "attnscope/random.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "timing.h"

enum { REPS_MAX = 64 };

static double forward_seconds(const Config *c, Workspace *w)
{
    double norm, start = now();
    if (Model_forward(c, w, &norm)) {
        fprintf(stderr, "bench_block: Model_forward failed\n");
        exit(1);
    }
    return now() - start;
}

/* The block measured (T = d = 512, 4 layers, 8 heads, a GELU MLP of ratio 4, pre-LN, W^O
   Gaussian), with the command line's changes, into c, and the repetitions into *reps. */
static void parse_arguments(int argc, char **argv, Config *c, int *reps)
{
    *c = Config_default();
    c->tokens = c->width = 512;
    c->depth = 4;
    c->heads = 8;
    c->mlp = MLP_GELU;
    c->mlp_ratio = 4;
    c->ln_place = LN_PLACE_PRE;
    c->layernorm = LAYERNORM_LN;
    c->skip = SKIP_PLAIN;
    c->output = OUTPUT_GAUSSIAN;
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "-T"))
            c->tokens = v;
        else if (!strcmp(argv[i], "-d"))
            c->width = v;
        else if (!strcmp(argv[i], "--heads"))
            c->heads = v;
        else if (!strcmp(argv[i], "--mlp-ratio"))
            c->mlp_ratio = v;
        else if (!strcmp(argv[i], "-L"))
            c->depth = v;
        else if (!strcmp(argv[i], "--reps"))
            *reps = v;
    }
}

int main(int argc, char **argv)
{
    Config c;
    int reps = 5;
    parse_arguments(argc, argv, &c, &reps);
    char err[256];
    if (Config_validate(&c, err, sizeof err) || c.depth < 2 || reps < 1 || reps > REPS_MAX) {
        fprintf(stderr, "bench_block: %s\n", c.depth < 2 ? "-L must be 2 or more" : err);
        return 2;
    }
    int T = c.tokens, d = c.width, L = c.depth;
    double td2 = (double)T * d * d, t2d = (double)T * T * d;
    double flops = (8.0 + 4.0 * c.mlp_ratio) * td2 + 4.0 * t2d;

    /* The dgemm rate: one d×d×d product. */
    double *a = malloc(sizeof(double) * d * d), *b = malloc(sizeof(double) * d * d),
           *p = malloc(sizeof(double) * d * d);
    size_t weights = (size_t)d * d * (4 + 2 * (size_t)c.mlp_ratio);
    double *draw = malloc(sizeof(double) * weights);
    RandomStream *random = RandomStream_new();
    Workspace *w = Workspace_new();
    if (!a || !b || !p || !draw || !random || !w)
        return 1;
    RandomStream_gaussian(random, 1, 1, ROLE_QUERY, 1.0, a, (size_t)d * d);
    RandomStream_gaussian(random, 1, 1, ROLE_KEY, 1.0, b, (size_t)d * d);
    double gemm[REPS_MAX], drawing[REPS_MAX], one[REPS_MAX], all[REPS_MAX];
    for (int r = -1; r < reps; r++) { /* r = −1: warm-up */
        double start = now();
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0, a, d, b, d, 0.0, p, d);
        double t_gemm = now() - start;
        start = now();
        RandomStream_gaussian(random, 1, 1, ROLE_VALUE, 1.0, draw, weights);
        double t_draw = now() - start;
        Config first = c;
        first.depth = 1;
        first.layer = 1;
        double t_one = forward_seconds(&first, w), t_all = forward_seconds(&c, w);
        if (r >= 0) {
            gemm[r] = t_gemm;
            drawing[r] = t_draw;
            one[r] = t_one;
            all[r] = t_all;
        }
    }
    double t_gemm = median(gemm, reps), t_draw = median(drawing, reps);
    double per_layer = (median(all, reps) - median(one, reps)) / (L - 1);
    double rate = 2.0 * d * d * d / t_gemm, bound = flops / rate;
    double compute = per_layer - t_draw;
    printf("{\"T\": %d, \"d\": %d, \"heads\": %d, \"mlp_ratio\": %d, \"layers\": %d, \"reps\": %d,"
           " \"dgemm_gflops\": %.2f, \"block_gflop\": %.3f, \"flops_ms\": %.2f,"
           " \"layer_ms\": %.2f, \"draw_ms\": %.2f, \"products_ms\": %.2f, \"ratio\": %.3f}\n",
           T, d, c.heads, c.mlp_ratio, L, reps, rate * 1e-9, flops * 1e-9, bound * 1e3,
           per_layer * 1e3, t_draw * 1e3, compute * 1e3, compute / bound);
    Workspace_free(w);
    RandomStream_free(random);
    free(a);
    free(b);
    free(p);
    free(draw);
    return 0;
}
