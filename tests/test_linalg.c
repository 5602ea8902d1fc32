/* The BLAS thread setting: one thread stops OpenBLAS's idle pool (which otherwise spins on
 * a core of our two while the lanes compute), BLAS still computes, and more threads bring
 * the pool back.  And a call's bits do not depend on what the Linalg ran before: its kept
 * workspace, grown by a larger call, must not change the LAPACK path of a smaller one.  And
 * Cholesky's backward error bound is the one its comment defines, and bounds the error; a
 * product with the identity is a scaled copy. */
#include "testing.h"

#include "attnscope/linalg.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* C = A·B for n×n matrices with A_ij = i + 1, B_ij = j + 1: C_ij = n(i + 1)(j + 1), exact in
   doubles for these sizes; large enough that OpenBLAS splits it across its threads. */
static void check_product(int n)
{
    double *a = malloc(sizeof(double) * (size_t)n * n), *b = malloc(sizeof(double) * (size_t)n * n),
           *c = malloc(sizeof(double) * (size_t)n * n);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            a[i + (size_t)j * n] = i + 1;
            b[i + (size_t)j * n] = j + 1;
        }
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            if (c[i + (size_t)j * n] != (double)n * (i + 1) * (j + 1))
                fail_msg("C[%d,%d] = %.17g, expected %.17g", i, j, c[i + (size_t)j * n],
                         (double)n * (i + 1) * (j + 1));
    free(a);
    free(b);
    free(c);
}

static void test_one_blas_thread_stops_the_pool(void **state)
{
    (void)state;
    int before = process_threads();
    assert_true(before >= 1);
    Linalg_set_blas_threads(1);
    assert_int_equal(Linalg_blas_threads(), 1);
    /* Only the test's own thread is left, whatever OpenBLAS started at load. */
    assert_int_equal(process_threads_settled(1), 1);
    check_product(300);
    assert_int_equal(process_threads(), 1);

    /* Two threads: the pool is back (on a machine with more than one core) and computes. */
    Linalg_set_blas_threads(2);
    check_product(300);
    Linalg_set_blas_threads(1);
    assert_int_equal(process_threads_settled(1), 1);
    check_product(300);
}

static double *random_matrix(int m, int n, unsigned seed)
{
    double *a = malloc(sizeof(double) * (size_t)m * n);
    assert_non_null(a);
    srand(seed);
    for (size_t i = 0; i < (size_t)m * n; i++)
        a[i] = (double)rand() / RAND_MAX - 0.5;
    return a;
}

/* The eigenvalues, singular values and Q of n×n matrices from a fresh Linalg, and from one
   whose workspace a 1024×1024 SVD grew first: the same bits (the LAPACK routines pick their
   blocking from the workspace length they are given). */
static void test_calls_do_not_depend_on_earlier_ones(void **state)
{
    (void)state;
    enum { N = 400, BIG = 1024 };
    Linalg *fresh = Linalg_new(), *used = Linalg_new();
    assert_true(fresh && used);
    double *big = random_matrix(BIG, BIG, 1), *s_big = malloc(sizeof(double) * BIG);
    double *u = malloc(sizeof(double) * BIG * BIG), *vt = malloc(sizeof(double) * BIG * BIG);
    assert_true(s_big && u && vt);
    assert_int_equal(Linalg_svd(used, BIG, big, s_big, u, vt), 0);
    Linalg *both[2] = {fresh, used};
    double *re[2], *im[2], *s[2], *q[2];
    for (int k = 0; k < 2; k++) {
        double *a = random_matrix(N, N, 7);
        re[k] = malloc(sizeof(double) * N), im[k] = malloc(sizeof(double) * N);
        s[k] = malloc(sizeof(double) * N);
        assert_true(re[k] && im[k] && s[k]);
        assert_int_equal(Linalg_eigenvalues(both[k], N, a, re[k], im[k]), 0);
        free(a);
        a = random_matrix(N, N, 8);
        assert_int_equal(Linalg_singular_values(both[k], N, N, a, s[k]), 0);
        free(a);
        q[k] = random_matrix(N, N / 2, 9);
        assert_int_equal(Linalg_orthonormalise(both[k], N, N / 2, q[k]), 0);
    }
    assert_memory_equal(re[0], re[1], sizeof(double) * N);
    assert_memory_equal(im[0], im[1], sizeof(double) * N);
    assert_memory_equal(s[0], s[1], sizeof(double) * N);
    assert_memory_equal(q[0], q[1], sizeof(double) * N * (N / 2));
    for (int k = 0; k < 2; k++) {
        free(re[k]);
        free(im[k]);
        free(s[k]);
        free(q[k]);
    }
    free(big);
    free(s_big);
    free(u);
    free(vt);
    Linalg_free(fresh);
    Linalg_free(used);
}

/* Linalg_cholesky's backward error against its definition, from an independent loop: L̂ read
   back from the factor, |L̂||L̂ᵀ| formed entry by entry in long double, its largest row sum
   times γ_{n+1}; the two agree to rounding.  And it bounds what it claims: ‖a − L̂L̂ᵀ‖_∞,
   formed in long double, is below it.  n odd and past a cache's stride, two sizes. */
static void test_cholesky_backward_error_is_its_definition(void **state)
{
    (void)state;
    const int sizes[] = {37, 301};
    Linalg *la = Linalg_new();
    assert_non_null(la);
    for (int s = 0; s < 2; s++) {
        int n = sizes[s];
        size_t nn = (size_t)n * n;
        double *b = random_matrix(n, n, 11 + (unsigned)s), *a = malloc(sizeof(double) * nn),
               *factor = malloc(sizeof(double) * nn);
        assert_true(a && factor);
        /* a = B·Bᵀ + I/2: positive definite, with a spread of eigenvalues. */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, b, n, b, n, 0.0, a, n);
        for (int i = 0; i < n; i++)
            a[i + (size_t)i * n] += 0.5;
        memcpy(factor, a, sizeof(double) * nn);
        double backward = NAN;
        assert_int_equal(Linalg_cholesky(la, n, factor, &backward), 0);
        long double worst_row = 0, worst_error = 0;
        for (int i = 0; i < n; i++) {
            long double row = 0, error = 0;
            for (int j = 0; j < n; j++) {
                long double entry = 0, product = 0;
                for (int k = 0; k <= (i < j ? i : j); k++) {
                    long double lik = factor[i + (size_t)k * n], ljk = factor[j + (size_t)k * n];
                    entry += fabsl(lik) * fabsl(ljk);
                    product += lik * ljk;
                }
                row += entry;
                /* a's lower triangle holds it (dpotrf read only that). */
                double aij = i >= j ? a[i + (size_t)j * n] : a[j + (size_t)i * n];
                error += fabsl((long double)aij - product);
            }
            worst_row = row > worst_row ? row : worst_row;
            worst_error = error > worst_error ? error : worst_error;
        }
        double expected = Linalg_rounding_gamma(n + 1.0) * (double)worst_row;
        assert_true(fabs(backward - expected) <= 1e-12 * expected);
        assert_true(backward >= (double)worst_error);
        assert_true(worst_error > 0); /* the check above compared something */
        free(b);
        free(a);
        free(factor);
    }
    Linalg_free(la);
}

/* What the gradients' value chain (gradients.c's scaled_identity_step) relies on: W·I·α from
   dgemm is α·W + 0.0 bit for bit, each entry a sum of exact zeros and one rounded product, on
   one BLAS thread and on two, for every d up to 70 and sizes past the kernels' blockings. */
static void test_identity_product_is_a_scaled_copy(void **state)
{
    (void)state;
    const int large[] = {127, 255, 256, 257, 384, 511, 600};
    for (int threads = 1; threads <= 2; threads++) {
        Linalg_set_blas_threads(threads);
        for (int k = 0; k < 70 + 7; k++) {
            int d = k < 70 ? k + 1 : large[k - 70];
            size_t dd = (size_t)d * d;
            double *w = random_matrix(d, d, 20 + (unsigned)d),
                   *identity = calloc(dd, sizeof(double)), *product = malloc(sizeof(double) * dd);
            assert_true(identity && product);
            for (int i = 0; i < d; i++)
                identity[i + (size_t)i * d] = 1.0;
            w[dd - 1] = -0.0; /* the product's sum starts from +0 */
            double scale = 1.0 / sqrt((double)d + 0.3);
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, d, d, d, scale, w, d, identity,
                        d, 0.0, product, d);
            for (size_t i = 0; i < dd; i++) {
                double copy = scale * w[i] + 0.0;
                if (memcmp(&copy, &product[i], sizeof copy) != 0)
                    fail_msg("d = %d, %d threads, entry %zu: product %a, scaled copy %a", d,
                             threads, i, product[i], copy);
            }
            free(w);
            free(identity);
            free(product);
        }
    }
    Linalg_set_blas_threads(1);
}

/* Every output of the spectral calls is NaN, status 0, for a matrix holding a NaN or an
   infinity anywhere (LAPACK would refuse it, or print to stdout and answer nonsense); a
   symmetric matrix's upper triangle is not read, so a NaN there changes nothing. */
static void test_spectra_of_a_nonfinite_matrix_are_nan(void **state)
{
    (void)state;
    enum { N = 5 };
    const double bad[] = {NAN, INFINITY, -INFINITY};
    for (int b = 0; b < 3; b++)
        for (int at = 0; at < N * N; at++) {
            double a[N * N], s[N], u[N * N], vt[N * N], re[N], im[N];
            double *outputs[] = {s, u, vt, re, im};
            const int sizes[] = {N, N * N, N * N, N, N};
            Linalg *la = Linalg_new();
            assert_non_null(la);
            for (int call = 0; call < 4; call++) {
                double *m = random_matrix(N, N, 3);
                memcpy(a, m, sizeof a);
                free(m);
                a[at] = bad[b];
                if (call == 3) /* symmetric: the lower triangle alone is read */
                    a[(at % N) * N + at / N] = bad[b], a[at] = a[(at % N) * N + at / N];
                for (int o = 0; o < 5; o++)
                    for (int i = 0; i < sizes[o]; i++)
                        outputs[o][i] = 0.0;
                int status = call == 0   ? Linalg_singular_values(la, N, N, a, s)
                             : call == 1 ? Linalg_svd(la, N, a, s, u, vt)
                             : call == 2 ? Linalg_eigenvalues(la, N, a, re, im)
                                         : Linalg_symmetric_eigenvalues(la, N, a, s);
                assert_int_equal(status, 0);
                const double *first = call == 2 ? re : s;
                for (int i = 0; i < N; i++)
                    if (!isnan(first[i]) || (call == 2 && !isnan(im[i])) ||
                        (call == 1 && (!isnan(u[i]) || !isnan(vt[i]))))
                        fail_msg("call %d, %g at %d: output %d is %g", call, bad[b], at, i,
                                 first[i]);
            }
            Linalg_free(la);
        }
    /* A NaN above the diagonal of a symmetric matrix: the same eigenvalues as without it. */
    double sym[N * N], copy[N * N], w[N], w_nan[N];
    Linalg *la = Linalg_new();
    assert_non_null(la);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            sym[i + j * N] = 1.0 / (1 + i + j) + (i == j);
    memcpy(copy, sym, sizeof sym);
    assert_int_equal(Linalg_symmetric_eigenvalues(la, N, sym, w), 0);
    copy[0 + 3 * N] = NAN; /* row 0, column 3: upper */
    assert_int_equal(Linalg_symmetric_eigenvalues(la, N, copy, w_nan), 0);
    assert_memory_equal(w, w_nan, sizeof w);
    Linalg_free(la);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_blas_thread_stops_the_pool),
        cmocka_unit_test(test_calls_do_not_depend_on_earlier_ones),
        cmocka_unit_test(test_cholesky_backward_error_is_its_definition),
        cmocka_unit_test(test_identity_product_is_a_scaled_copy),
        cmocka_unit_test(test_spectra_of_a_nonfinite_matrix_are_nan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
