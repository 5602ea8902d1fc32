/* A·X and A·F as two T×T·T×d products against one T×T·T×2d product of A with [X | F] (issue
 * 25, bench/README.md "The gradients' products"): whether packing A once for the layer's values
 * and its frozen product is worth joining them.  A is applied transposed, as the layer's
 * attention buffer is (Aᵀ to BLAS).  Run with one BLAS thread, as a lane's products run:
 *
 *     cc -std=c11 -O2 -D_DEFAULT_SOURCE bench/gemm_pair.c -o build/bench/gemm_pair \
 *         $(pkg-config --cflags --libs openblas)
 *     OPENBLAS_NUM_THREADS=1 build/bench/gemm_pair n [rounds]
 *
 * T = d = n.  Each round times the two products, then the one, by the thread's CPU clock;
 * prints the median of the rounds' ratios (one / two), their range, and the medians. */
#include "timing.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

static void fill(double *v, size_t count, unsigned *state)
{
    for (size_t i = 0; i < count; i++) {
        *state = *state * 1103515245u + 12345u;
        v[i] = (double)(*state >> 8) / (double)(1u << 24) - 0.5;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0, rounds = argc > 2 ? atoi(argv[2]) : 11;
    if (n < 1 || rounds < 1) {
        fprintf(stderr, "usage: gemm_pair n [rounds]  (n >= 1, rounds >= 1)\n");
        return 2;
    }
    size_t nn = (size_t)n * n;
    double *a = malloc(sizeof(double) * nn), *xf = malloc(sizeof(double) * 2 * nn);
    double *out = malloc(sizeof(double) * 2 * nn), *ratio = malloc(sizeof(double) * rounds);
    double *two = malloc(sizeof(double) * rounds), *one = malloc(sizeof(double) * rounds);
    if (!a || !xf || !out || !ratio || !two || !one) {
        fprintf(stderr, "gemm_pair: out of memory at n = %d\n", n);
        return 1;
    }
    unsigned state = 1;
    fill(a, nn, &state);
    fill(xf, 2 * nn, &state);
    for (int r = 0; r < rounds; r++) {
        double start = thread_seconds();
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, n, n, 1.0, a, n, xf, n, 0.0, out,
                    n);
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, n, n, 1.0, a, n, xf + nn, n, 0.0,
                    out + nn, n);
        double middle = thread_seconds();
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, 2 * n, n, 1.0, a, n, xf, n, 0.0,
                    out, n);
        double end = thread_seconds();
        two[r] = middle - start;
        one[r] = end - middle;
        ratio[r] = one[r] / two[r];
    }
    double low = ratio[0], high = ratio[0];
    for (int r = 1; r < rounds; r++) {
        low = ratio[r] < low ? ratio[r] : low;
        high = ratio[r] > high ? ratio[r] : high;
    }
    printf("n %d rounds %d one/two median %.4f (%.4f-%.4f); two %.4f s, one %.4f s (medians)\n", n,
           rounds, median(ratio, rounds), low, high, median(two, rounds), median(one, rounds));
    free(a);
    free(xf);
    free(out);
    free(ratio);
    free(two);
    free(one);
    return 0;
}
