/* The BLAS thread setting: one thread stops OpenBLAS's idle pool (which otherwise spins on
 * a core of our two while the lanes compute), BLAS still computes, and more threads bring
 * the pool back. */
#include "testing.h"

#include "attnscope/linalg.h"

#include <cblas.h>
#include <stdlib.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_blas_thread_stops_the_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
