/* The shown eigenvalues' Hessenberg QR (hessenberg_tuning.c): dgeev's time by the thread's CPU
 * clock at each shift count NS (window by IPARMQ's rule, NW = NS up to 500 rows, 3·NS/2 above)
 * and a few windows NW at the table's NS, against LAPACK's defaults and the table, on the
 * matrices the program shows (bench/README.md, "The shown eigenvalues' Hessenberg QR"):
 *
 *   softmax1, softmax4  softmax attention of the logits X·G·Xᵀ/n, X and G Gaussian, G's entries
 *                       of standard deviation σ/√n (σ = 1, 4), as a layer's scores at init
 *   markov              markov attention of i.i.d. Gaussian logits (full rank)
 *   causal              softmax1 under the causal mask: triangular (dgebal isolates every
 *                       row, the QR has nothing to do)
 *   ginibre             i.i.d. Gaussian entries of variance 1/n
 *
 * The matrices are passed row-major, as the core hands its attention to dgeev.
 *
 *   cc -std=c11 -O2 -D_DEFAULT_SOURCE -Iinclude bench/hessenberg_shifts.c \
 *       build/libattnscope_core.a -lgsl -lopenblas -llapacke -lm -o build/bench/hessenberg_shifts
 *   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 \
 *       build/bench/hessenberg_shifts [n ...] [--reps R] [--shifts NS,NS,...] [--windows NW,...]
 *
 * Each line: n, matrix, then milliseconds (median of R) for `ref` (LAPACK's), `tab` (the
 * table's), each NS and each NW; "same" after the name when every choice gave eigenvalues
 * whose sum matches the trace within 1e-9·n·‖A‖_F. */
#include "attnscope/attention.h"
#include "attnscope/hessenberg_tuning.h"
#include "attnscope/linalg.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { CHOICES_MAX = 24, REPS_MAX = 15 };

static double thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static double uniform_open(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}

static double gaussian(void)
{
    return sqrt(-2 * log(uniform_open())) * cos(2 * M_PI * uniform_open());
}

static void gaussians(double *x, size_t count, double scale)
{
    for (size_t i = 0; i < count; i++)
        x[i] = scale * gaussian();
}

/* X·G·Xᵀ/n with G's entries σ/√n, into logits (n×n), softmax rows (mask) into a. */
static void scores(int n, double sigma, Attention kind, Mask mask, double *a)
{
    size_t nn = (size_t)n * n;
    double *x = malloc(nn * sizeof *x), *g = malloc(nn * sizeof *g), *xg = malloc(nn * sizeof *xg),
           *logits = malloc(nn * sizeof *logits);
    gaussians(x, nn, 1);
    if (kind == ATTENTION_MARKOV) {
        gaussians(logits, nn, sigma);
    } else {
        gaussians(g, nn, sigma / sqrt(n));
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, x, n, g, n, 0, xg, n);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0 / n, xg, n, x, n, 0,
                    logits, n);
    }
    Attention_build(kind, mask, 0, n, logits, -INFINITY, a);
    free(x), free(g), free(xg), free(logits);
}

static void make(const char *name, int n, double *a)
{
    if (!strcmp(name, "softmax1"))
        scores(n, 1, ATTENTION_SOFTMAX, MASK_FULL, a);
    else if (!strcmp(name, "softmax4"))
        scores(n, 4, ATTENTION_SOFTMAX, MASK_FULL, a);
    else if (!strcmp(name, "markov"))
        scores(n, 1, ATTENTION_MARKOV, MASK_FULL, a);
    else if (!strcmp(name, "causal"))
        scores(n, 1, ATTENTION_SOFTMAX, MASK_CAUSAL, a);
    else
        gaussians(a, (size_t)n * n, 1 / sqrt(n));
}

static int ascending(const void *p, const void *q)
{
    double x = *(const double *)p, y = *(const double *)q;
    return x < y ? -1 : x > y;
}

typedef struct {
    char label[16];
    HessenbergPolicy policy;
    HessenbergChoice choice;
} Choice;

/* dgeev of a (kept) under `c`: the median of reps thread-CPU times (ms); *ok false when the
   eigenvalues' sum misses the trace. */
static double time_choice(int n, const double *a, const Choice *c, int reps, bool *ok)
{
    size_t nn = (size_t)n * n;
    double *b = malloc(nn * sizeof *b), *re = malloc((size_t)n * sizeof *re),
           *im = malloc((size_t)n * sizeof *im), t[REPS_MAX];
    double trace = 0, frobenius = cblas_dnrm2((int)nn, a, 1);
    for (int i = 0; i < n; i++)
        trace += a[(size_t)i * n + i];
    Hessenberg_set_policy(c->policy, n, c->choice);
    for (int r = 0; r < reps; r++) {
        memcpy(b, a, nn * sizeof *b);
        double start = thread_seconds();
        lapack_int info =
            LAPACKE_dgeev(LAPACK_COL_MAJOR, 'N', 'N', n, b, n, re, im, NULL, 1, NULL, 1);
        t[r] = 1e3 * (thread_seconds() - start);
        double sum = 0;
        for (int i = 0; i < n; i++)
            sum += re[i];
        if (info || !(fabs(sum - trace) <= 1e-9 * n * frobenius))
            *ok = false;
    }
    Hessenberg_set_policy(HESSENBERG_POLICY_TUNED, 0, (HessenbergChoice){0});
    free(b), free(re), free(im);
    qsort(t, (size_t)reps, sizeof t[0], ascending);
    return t[reps / 2];
}

static int parse_list(const char *text, int *out, int max)
{
    int count = 0;
    for (char *end; *text && count < max; text = *end ? end + 1 : end)
        out[count++] = (int)strtol(text, &end, 10);
    return count;
}

int main(int argc, char **argv)
{
    int sizes[32], n_sizes = 0, shifts[CHOICES_MAX] = {16, 20, 24, 32, 48}, n_shifts = 5;
    int windows[CHOICES_MAX] = {16, 24, 32}, n_windows = 3, reps = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shifts") && i + 1 < argc)
            n_shifts = parse_list(argv[++i], shifts, CHOICES_MAX / 2);
        else if (!strcmp(argv[i], "--windows") && i + 1 < argc)
            n_windows = parse_list(argv[++i], windows, CHOICES_MAX / 2 - 2);
        else if (n_sizes < 32)
            sizes[n_sizes++] = atoi(argv[i]);
    }
    if (!n_sizes || reps < 1 || reps > REPS_MAX) {
        fprintf(stderr,
                "usage: hessenberg_shifts n [n ...] [--reps 1..%d] [--shifts list] "
                "[--windows list]\n",
                REPS_MAX);
        return 2;
    }
    const char *matrices[] = {"softmax1", "softmax4", "markov", "causal", "ginibre"};
    for (int s = 0; s < n_sizes; s++) {
        int n = sizes[s];
        HessenbergChoice ref = Hessenberg_reference(n), tab = Linalg_eigenvalue_tuning(n);
        Choice c[CHOICES_MAX];
        int count = 0;
        c[count++] = (Choice){"ref", HESSENBERG_POLICY_REFERENCE, ref};
        c[count++] = (Choice){"tab", HESSENBERG_POLICY_TUNED, tab};
        for (int i = 0; i < n_shifts; i++) {
            int w = n <= 500 ? shifts[i] : 3 * shifts[i] / 2;
            c[count] = (Choice){"", HESSENBERG_POLICY_FIXED, {shifts[i], w}};
            snprintf(c[count++].label, sizeof c[0].label, "ns%d", shifts[i]);
        }
        for (int i = 0; i < n_windows; i++) {
            c[count] = (Choice){"", HESSENBERG_POLICY_FIXED, {tab.shifts, windows[i]}};
            snprintf(c[count++].label, sizeof c[0].label, "ns%d/nw%d", tab.shifts, windows[i]);
        }
        printf("n %d: ref NS %d NW %d, table NS %d NW %d\n", n, ref.shifts, ref.window, tab.shifts,
               tab.window);
        double *a = malloc((size_t)n * n * sizeof *a);
        for (size_t m = 0; m < sizeof matrices / sizeof matrices[0]; m++) {
            make(matrices[m], n, a);
            bool ok = true;
            char line[1024];
            int at = 0;
            for (int i = 0; i < count; i++)
                at += snprintf(line + at, sizeof line - (size_t)at, " %s %.1f", c[i].label,
                               time_choice(n, a, &c[i], reps, &ok));
            printf("%5d %-9s %s%s\n", n, matrices[m], ok ? "same" : "WRONG", line);
            fflush(stdout);
        }
        free(a);
    }
    return 0;
}
