/* Per-stage timings of one attnscope computation (issue 4), from the core's public API.
 *
 * Mirrors Model_run (src/core/run.c, its layers src/core/layer.c) for the benchmark's
 * configurations: full mask, no skip, no LayerNorm, softmax or markov attention, gap off or
 * center, one seed, the shown layer's spectra, the counterpart network with the same weights.
 * It runs the stages one after the other on the calling thread (BLAS threads as
 * OPENBLAS_NUM_THREADS says); it does not reproduce Model_run's optimisations (two lanes,
 * shared work), which --model-run and the end-to-end time show.  Each stage is timed with
 * clock_gettime(CLOCK_MONOTONIC):
 *   input        X0: Gaussian d×T, QR (Linalg_orthonormalise), transpose
 *   weights      W^Q, W^K (softmax) or the Markov Gaussians, and W^V, per layer
 *   attention    logits (two T×d×d GEMMs and one T×T×d), Attention_build, Gap_apply
 *   forward      X W^V and A (X W^V), finiteness check
 *   spectra      Spectra_of_shown_layer (eigenvalues and singular values, one matrix)
 *   stable_rank  per layer and network: Measure_tokens (X/‖X‖_F, token similarity, XXᵀ by
 *                dsyrk, its top eigenpair by Lanczos; dsyevd where that is not certified,
 *                dgesdd of X below MEASURE_GRAM_FLOOR)
 *   floor        (apart, after each repetition) issue 25's floor: the products of both
 *                networks at the rate of a d×d×d dgemm on this process's BLAS threads, plus
 *                one dgeev of the shown matrix; what --batch cannot go below on this machine
 * The stable ranks it computes are printed too: they must equal `attnscope --batch`'s for
 * the same seed, which shows that the harness still does what Model_run does.  With
 * --model-run it also times Model_run itself in the same process.
 *
 * Usage: bench_stages -T N -d N -L N -a softmax|markov -g off|center [--seed N] [--reps N]
 *                     [--model-run | --floor-only]
 * Prints one JSON object on stdout: medians over the repetitions (after one warm-up when
 * reps > 1) in milliseconds.  --floor-only times the floor alone (floor_ms, dgemm_gflops),
 * after computing just the shown layer's matrix it needs: what bench/floor_compare.py runs
 * beside each round.
 */
#include "attnscope/attention.h"
#include "attnscope/config.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/model.h"
#include "attnscope/random.h"
#include "attnscope/spectra.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "timing.h"

enum {
    STAGE_INPUT,
    STAGE_WEIGHTS,
    STAGE_ATTENTION,
    STAGE_FORWARD,
    STAGE_SPECTRA,
    STAGE_RANK,
    STAGES
};
static const char *const STAGE_NAMES[STAGES] = {"input",   "weights", "attention",
                                                "forward", "spectra", "stable_rank"};

typedef struct {
    int T, d;
    Linalg *la;
    RandomStream *rs;
    double *x[2], *xw, *q, *k, *wq, *wk, *wv, *gauss, *logits, *attn;
    double *shown_before, *shown_applied, *floor_matrix, *gram, *eig, *lanczos, *gap_scratch;
} Bufs;

static void *alloc(size_t n)
{
    void *p = malloc(sizeof(double) * (n ? n : 1));
    if (!p) {
        fprintf(stderr, "bench_stages: out of memory\n");
        exit(1);
    }
    return p;
}

/* n doubles into each of the NULL-ended slots. */
static void alloc_each(double **const slots[], size_t n)
{
    for (int i = 0; slots[i]; i++)
        *slots[i] = alloc(n);
}

static void bufs_init(Bufs *b, int T, int d)
{
    size_t td = (size_t)T * d, dd = (size_t)d * d, tt = (size_t)T * T;
    b->T = T;
    b->d = d;
    b->la = Linalg_new();
    b->rs = RandomStream_new();
    if (!b->la || !b->rs) {
        fprintf(stderr, "bench_stages: out of memory\n");
        exit(1);
    }
    double **const tokens[] = {&b->x[0], &b->x[1], &b->xw, &b->q, &b->k, NULL};
    double **const weights[] = {&b->wq, &b->wk, &b->wv, NULL};
    double **const squares[] = {&b->gauss,         &b->logits,       &b->attn, &b->shown_before,
                                &b->shown_applied, &b->floor_matrix, &b->gram, NULL};
    alloc_each(tokens, td);
    alloc_each(weights, dd);
    alloc_each(squares, tt);
    b->eig = alloc((size_t)T);
    b->lanczos = alloc(Measure_tokens_scratch_size(T, d));
    b->gap_scratch = alloc(Gap_scratch_size(T));
}

/* sr(XXᵀ) as Model_run measures each layer: Measure_tokens with the same routes. */
static double stable_rank(Bufs *b, const double *x)
{
    Measures m;
    if (Measure_tokens(b->la, b->T, b->d, x, 0.0, b->xw, b->gram, b->eig, b->lanczos, &m))
        return NAN;
    return m.stable_rank;
}

/* X0 on both networks: orthonormal, from the input's stream. */
static int draw_input(Bufs *b, const Config *c)
{
    int T = c->tokens, d = c->width;
    size_t td = (size_t)T * d;
    double *g = b->xw; /* d×T */
    RandomStream_gaussian(b->rs, c->seed, 0, ROLE_INPUT, 1.0, g, td);
    if (Linalg_orthonormalise(b->la, d, T, g))
        return -1;
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            b->x[0][i + (size_t)j * T] = g[j + (size_t)i * d];
    memcpy(b->x[1], b->x[0], sizeof(double) * td);
    return 0;
}

/* X0 and its stable rank. */
static int pipeline_input(Bufs *b, const Config *c, double t[STAGES], double *sr_main,
                          double *sr_cp)
{
    double t0 = now();
    if (draw_input(b, c))
        return -1;
    double t1 = now();
    t[STAGE_INPUT] += t1 - t0;
    sr_main[0] = sr_cp[0] = stable_rank(b, b->x[0]);
    t[STAGE_RANK] += now() - t1;
    return 0;
}

/* The layer's weights, drawn once for both networks. */
static void pipeline_weights(Bufs *b, const Config *c, int layer, double t[STAGES])
{
    size_t dd = (size_t)c->width * c->width, tt = (size_t)c->tokens * c->tokens;
    double t0 = now();
    if (c->attention == ATTENTION_SOFTMAX) {
        RandomStream_gaussian(b->rs, c->seed, layer, ROLE_QUERY, c->sigma_qk, b->wq, dd);
        RandomStream_gaussian(b->rs, c->seed, layer, ROLE_KEY, c->sigma_qk, b->wk, dd);
    } else {
        RandomStream_gaussian(b->rs, c->seed, layer, ROLE_MARKOV, c->sigma_qk * c->sigma_qk,
                              b->gauss, tt);
    }
    RandomStream_gaussian(b->rs, c->seed, layer, ROLE_VALUE, 1.0, b->wv, dd);
    t[STAGE_WEIGHTS] += now() - t0;
}

/* Network n's attention at `layer` with its gap removed (the shown one kept in b and out). */
static int pipeline_attention(Bufs *b, const Config *c, int n, int layer, Gap gap, Result *out,
                              double t[STAGES])
{
    int T = c->tokens, d = c->width;
    size_t tt = (size_t)T * T;
    double *x = b->x[n];
    double t0 = now();
    const double *logits = b->gauss;
    if (c->attention == ATTENTION_SOFTMAX) {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, x, T, b->wq, d, 0.0,
                    b->q, T);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, x, T, b->wk, d, 0.0,
                    b->k, T);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, 1.0 / sqrt((double)d), b->k,
                    T, b->q, T, 0.0, b->logits, T);
        logits = b->logits;
    }
    Attention_build(c->attention, c->mask, c->window, T, logits, -INFINITY, b->attn);
    bool shown = n == 0 && layer == c->layer;
    if (shown)
        memcpy(b->shown_before, b->attn, sizeof(double) * tt);
    GapOutcome outcome;
    if (Gap_apply(gap, c->attention, false, Layer_attention_uniform(c), c->mask, c->window, T,
                  b->attn, b->la, b->gap_scratch, &outcome, &out->warnings))
        return -1;
    if (shown) {
        memcpy(b->shown_applied, b->attn, sizeof(double) * tt);
        out->shown_gap = outcome.applied;
    }
    t[STAGE_ATTENTION] += now() - t0;
    return 0;
}

/* The matrix the shown layer's dgeev takes in the run (the applied one unless Brauer's theorem
   serves), kept for the floor: the spectra stage's dgeev destroys its own copy. */
static void keep_floor_matrix(Bufs *b, const Config *c, Gap applied_gap)
{
    memcpy(b->floor_matrix, Spectra_brauer(c, applied_gap) ? b->shown_before : b->shown_applied,
           sizeof(double) * c->tokens * c->tokens);
}

/* Network n's tokens through its attention and values, then their stable rank; *dead once
   they are not finite. */
static void pipeline_forward(Bufs *b, const Config *c, int n, bool *dead, double t[STAGES],
                             double *sr)
{
    int T = c->tokens, d = c->width;
    size_t td = (size_t)T * d;
    double *x = b->x[n];
    double t1 = now();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, x, T, b->wv, d, 0.0, b->xw,
                T);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, 1.0, b->attn, T, b->xw, T, 0.0, x,
                T);
    for (size_t i = 0; i < td && !*dead; i++)
        if (!isfinite(x[i]))
            *dead = true;
    if (!*dead && Attention_is_input_independent(c->attention)) {
        /* Model_run carries the scale apart for input-independent attention. */
        double norm = cblas_dnrm2((int)td, x, 1);
        if (norm > 0)
            cblas_dscal((int)td, 1.0 / norm, x, 1);
    }
    double t2 = now();
    t[STAGE_FORWARD] += t2 - t1;
    *sr = *dead ? NAN : stable_rank(b, x);
    t[STAGE_RANK] += now() - t2;
}

/* One computation; adds each stage's seconds to t[], stable ranks of both networks to sr. */
static int pipeline(Bufs *b, const Config *c, double t[STAGES], double *sr_main, double *sr_cp)
{
    int T = c->tokens;
    Gap gaps[2] = {c->gap, Gap_toggled(c->gap)};
    bool dead[2] = {false, false};
    Result *out = Result_new();
    if (!out)
        return -1;
    out->eigenvalues = calloc((size_t)T, sizeof(Complex));
    out->singular_values = alloc((size_t)T);
    if (!out->eigenvalues || pipeline_input(b, c, t, sr_main, sr_cp))
        return -1;
    for (int layer = 1; layer <= c->depth; layer++) {
        pipeline_weights(b, c, layer, t);
        for (int n = 0; n < 2; n++) {
            double *sr = n == 0 ? sr_main : sr_cp;
            if (dead[n]) {
                sr[layer] = NAN;
                continue;
            }
            if (pipeline_attention(b, c, n, layer, gaps[n], out, t))
                return -1;
            pipeline_forward(b, c, n, &dead[n], t, &sr[layer]);
        }
        if (layer == c->layer) {
            keep_floor_matrix(b, c, out->shown_gap);
            double t0 = now();
            if (Spectra_of_shown_layer(c, out->shown_gap, b->shown_before, b->shown_applied, b->la,
                                       b->gram, out))
                return -1;
            t[STAGE_SPECTRA] += now() - t0;
        }
    }
    Result_free(out);
    return 0;
}

/* The floor of issue 25, in seconds: the products' flops of both networks (per layer and
   network 6·T·d² + 4·T²·d with softmax's projections and logits, 2·T·d² + 2·T²·d with
   markov's drawn logits) at the rate of a d×d×d dgemm on this process's BLAS threads, plus
   one dgeev of the shown T×T matrix (the shown layer's eigenvalues).  Nothing else counts:
   no weights, no stable ranks, no singular values.  *rate: the dgemm's flops per second. */
static double floor_seconds(Bufs *b, const Config *c, double *rate)
{
    double T = c->tokens, d = c->width;
    double per_layer = c->attention == ATTENTION_SOFTMAX ? 6 * T * d * d + 4 * T * T * d
                                                         : 2 * T * d * d + 2 * T * T * d;
    double flops = 2.0 * c->depth * per_layer;
    int n = c->width, reps = 0;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, b->wq, n, b->wk, n, 0.0,
                b->wv, n); /* warm-up */
    double start = now(), elapsed;
    do { /* at least 0.2 s, so that a time slice lost to another process averages out */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, b->wq, n, b->wk, n,
                    0.0, b->wv, n);
        reps++;
        elapsed = now() - start;
    } while (elapsed < 0.2);
    *rate = 2.0 * n * n * (double)n * reps / elapsed;
    size_t tt = (size_t)c->tokens * c->tokens;
    memcpy(b->attn, b->floor_matrix, sizeof(double) * tt);
    double *re = b->gram, *im = b->gram + c->tokens;
    start = now();
    if (Linalg_eigenvalues(b->la, c->tokens, b->attn, re, im))
        return NAN;
    return flops / *rate + (now() - start);
}

/* The repetitions of a measurement: one warm-up, not timed, when repeating. */
typedef struct {
    int runs;  /* all of them */
    int first; /* the first one timed */
    int timed; /* runs − first */
} Repetitions;

static Repetitions repetitions(int reps)
{
    int runs = reps > 1 ? reps + 1 : 1, first = runs > 1 ? 1 : 0;
    return (Repetitions){runs, first, runs - first};
}

/* The opening of the JSON object both modes print: the configuration and the BLAS. */
static void print_configuration(const Config *c, Repetitions r)
{
    printf("{\"T\":%d,\"d\":%d,\"depth\":%d,\"reps\":%d,\"threads\":%d,"
           "\"openblas_core\":\"%s\",",
           c->tokens, c->width, c->depth, r.timed, Linalg_blas_threads(), openblas_get_corename());
}

/* floor_ms and dgemm_gflops: the medians of the timed repetitions (sorts both arrays). */
static void print_floor(double *floors, double *rates, Repetitions r)
{
    printf("\"floor_ms\":%.4f,\"dgemm_gflops\":%.2f", 1e3 * median(floors + r.first, r.timed),
           1e-9 * median(rates + r.first, r.timed));
}

/* The median in ms of row `row` of samples (r.runs a row) over the timed repetitions. */
static double median_ms(double *samples, int row, Repetitions r)
{
    return 1e3 * median(samples + (size_t)row * r.runs + r.first, r.timed);
}

/* --floor-only: X0 and the first network's layers up to the shown one (whose matrix the
   floor's dgeev takes), then the floor alone, reps times after a warm-up when reps > 1.  No
   stable rank, spectra or counterpart is timed, so that bench/floor_compare.py can measure the
   floor beside every round of its runs at the cost of the floor itself. */
static int floor_only(Bufs *b, const Config *c, int reps)
{
    double t[STAGES] = {0}, sr;
    bool dead = false;
    Result *out = Result_new();
    int failed = !out || draw_input(b, c);
    for (int layer = 1; !failed && layer <= c->layer; layer++) {
        pipeline_weights(b, c, layer, t);
        failed = pipeline_attention(b, c, 0, layer, c->gap, out, t);
        if (!failed && layer < c->layer)
            pipeline_forward(b, c, 0, &dead, t, &sr);
    }
    if (!failed)
        keep_floor_matrix(b, c, out->shown_gap);
    Result_free(out);
    if (failed || dead)
        return -1;
    Repetitions r = repetitions(reps);
    double *floors = alloc((size_t)r.runs), *rates = alloc((size_t)r.runs);
    for (int k = 0; k < r.runs; k++)
        floors[k] = floor_seconds(b, c, &rates[k]);
    print_configuration(c, r);
    print_floor(floors, rates, r);
    printf("}\n");
    free(floors);
    free(rates);
    return 0;
}

static void print_array(const char *name, const double *v, int n)
{
    printf("\"%s\":[", name);
    for (int i = 0; i < n; i++) {
        if (isfinite(v[i]))
            printf("%s%.17g", i ? "," : "", v[i]);
        else
            printf("%snull", i ? "," : "");
    }
    printf("]");
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_stages -T N -d N -L N -a softmax|markov -g off|center "
                    "[--seed N] [--reps N] [--model-run | --floor-only]\n");
    return 2;
}

/* The command line into c, *reps, *model_run and *floor: 0, or -1 for usage(). */
static int parse_arguments(int argc, char **argv, Config *c, int *reps, bool *model_run,
                           bool *floor)
{
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--model-run") == 0) {
            *model_run = true;
            continue;
        }
        if (strcmp(o, "--floor-only") == 0) {
            *floor = true;
            continue;
        }
        if (i + 1 >= argc)
            return -1;
        const char *v = argv[++i];
        if (strcmp(o, "-T") == 0)
            c->tokens = atoi(v);
        else if (strcmp(o, "-d") == 0)
            c->width = atoi(v);
        else if (strcmp(o, "-L") == 0)
            c->depth = atoi(v);
        else if (strcmp(o, "-s") == 0)
            c->sigma_qk = atof(v);
        else if (strcmp(o, "--seed") == 0)
            c->seed = strtoull(v, NULL, 10);
        else if (strcmp(o, "--reps") == 0)
            *reps = atoi(v);
        else if (strcmp(o, "-a") == 0 && strcmp(v, "softmax") == 0)
            c->attention = ATTENTION_SOFTMAX;
        else if (strcmp(o, "-a") == 0 && strcmp(v, "markov") == 0)
            c->attention = ATTENTION_MARKOV;
        else if (strcmp(o, "-g") == 0 && strcmp(v, "off") == 0)
            c->gap = GAP_OFF;
        else if (strcmp(o, "-g") == 0 && strcmp(v, "center") == 0)
            c->gap = GAP_CENTER;
        else
            return -1;
    }
    char err[256];
    return *reps < 1 || c->tokens < 2 || c->depth < 1 || (*model_run && *floor) ||
                   Config_validate(c, err, sizeof err)
               ? -1
               : 0;
}

int main(int argc, char **argv)
{
    Config c = Config_default();
    int reps = 5;
    bool model_run = false, floor = false;
    if (parse_arguments(argc, argv, &c, &reps, &model_run, &floor))
        return usage();
    char err[256];
    Bufs b;
    bufs_init(&b, c.tokens, c.width);
    if (floor) {
        if (floor_only(&b, &c, reps) == 0)
            return 0;
        fprintf(stderr, "bench_stages: a LAPACK call failed or the network died\n");
        return 1;
    }
    int L = c.depth;
    Repetitions rounds = repetitions(reps);
    int runs = rounds.runs;
    double *samples = alloc((size_t)(STAGES + 2) * runs);
    double *floors = alloc((size_t)runs), *rates = alloc((size_t)runs);
    double *sr_main = alloc((size_t)L + 1), *sr_cp = alloc((size_t)L + 1);
    Workspace *w = model_run ? Workspace_new() : NULL;
    Result *r = model_run ? Result_new() : NULL;
    for (int k = 0; k < runs; k++) {
        double t[STAGES] = {0};
        double start = now();
        if (pipeline(&b, &c, t, sr_main, sr_cp)) {
            fprintf(stderr, "bench_stages: a LAPACK call failed\n");
            return 1;
        }
        double total = now() - start;
        for (int s = 0; s < STAGES; s++)
            samples[(size_t)s * runs + k] = t[s];
        samples[(size_t)STAGES * runs + k] = total;
        floors[k] = floor_seconds(&b, &c, &rates[k]);
        samples[(size_t)(STAGES + 1) * runs + k] = NAN;
        if (model_run) {
            start = now();
            if (Model_run(&c, w, r, NULL, err, sizeof err)) {
                fprintf(stderr, "bench_stages: %s\n", err);
                return 1;
            }
            samples[(size_t)(STAGES + 1) * runs + k] = now() - start;
        }
    }
    print_configuration(&c, rounds);
    printf("\"stages_ms\":{");
    for (int s = 0; s < STAGES; s++)
        printf("\"%s\":%.4f,", STAGE_NAMES[s], median_ms(samples, s, rounds));
    printf("\"total\":%.4f},", median_ms(samples, STAGES, rounds));
    print_floor(floors, rates, rounds);
    if (model_run)
        printf(",\"model_run_ms\":%.4f,", median_ms(samples, STAGES + 1, rounds));
    else
        printf(",\"model_run_ms\":null,");
    print_array("stable_rank", sr_main, L + 1);
    printf(",");
    print_array("counterpart_stable_rank", sr_cp, L + 1);
    printf("}\n");
    Result_free(r);
    Workspace_free(w);
    return 0;
}
