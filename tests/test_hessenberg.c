/* The Hessenberg QR's parameters (hessenberg_tuning.c): the iparmq_ the core defines is the
 * one OpenBLAS's dhseqr asks in this linked program, at the table's window, while the
 * complex routines keep LAPACK's; and dgeev's eigenvalues under the table are still right,
 * on normal matrices of known spectrum above the order (75) where dhseqr leaves dlahqr. */
#include "testing.h"

#include "attnscope/hessenberg_tuning.h"
#include "attnscope/linalg.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

/* dhseqr's workspace query for an n×n matrix, eigenvalues only. */
static double hseqr_query(int n)
{
    double h = 0, w = 0, query = 0;
    lapack_int info =
        LAPACKE_dhseqr_work(LAPACK_COL_MAJOR, 'E', 'N', n, 1, n, &h, n, &w, &w, &w, 1, &query, -1);
    assert_int_equal(info, 0);
    return query;
}

/* What dhseqr asks for when its dlaqr0 runs with `choice`, from LAPACK's formulas rather than
   from IPARMQ: dlaqr0 clamps the window to (n − 1)/3 and asks dlaqr3 about a window of
   jw = NW + 1 rows, which needs jw + the larger of dgehrd's and dormhr's workspaces on a
   jw×jw matrix (its dlaqr4 on the window asks less: its own window is IPARMQ's at jw < 150,
   the reference's); dlaqr0 wants at least 3·NS/2 for its sweeps, dhseqr at least n. */
static double hseqr_query_at(int n, HessenbergChoice choice)
{
    int window = choice.window < (n - 1) / 3 ? choice.window : (n - 1) / 3;
    int jw = window + 1;
    double t = 0, hrd = 0, orm = 0;
    assert_int_equal(LAPACKE_dgehrd_work(LAPACK_COL_MAJOR, jw, 1, jw - 1, &t, jw, &t, &hrd, -1), 0);
    assert_int_equal(LAPACKE_dormhr_work(LAPACK_COL_MAJOR, 'R', 'N', jw, jw, 1, jw - 1, &t, jw, &t,
                                         &t, jw, &orm, -1),
                     0);
    double need = jw + (hrd > orm ? hrd : orm);
    if (need < 3 * choice.shifts / 2)
        need = 3 * choice.shifts / 2;
    return need > n ? need : n;
}

/* At each order where the table's window differs from LAPACK's, dhseqr's query is the one the
   table's window implies, not the one LAPACK's implies: a program where OpenBLAS reached its
   own IPARMQ (ours not linked) fails here. */
static void test_dhseqr_asks_our_iparmq(void **state)
{
    (void)state;
    const int orders[] = {160, 256, 512, 1024, 2048, 4096};
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
        int n = orders[i];
        HessenbergChoice ours = Linalg_eigenvalue_tuning(n), lapack = Hessenberg_reference(n);
        assert_int_not_equal(ours.window, lapack.window);
        double expected = hseqr_query_at(n, ours), theirs = hseqr_query_at(n, lapack);
        assert_true(expected != theirs); /* the query tells the two apart at this n */
        double query = hseqr_query(n);
        if (query != expected)
            fail_msg("n = %d: dhseqr asks for %.0f doubles; the table's window %d implies %.0f, "
                     "LAPACK's %d implies %.0f",
                     n, query, ours.window, expected, lapack.window, theirs);
    }
}

/* Below 150 rows the table is LAPACK's; and the measurement policy reaches dhseqr too.  The
   teardown puts the table back, failed or not: the tests after this one run under it. */
static void test_reference_where_the_table_is_lapacks(void **state)
{
    (void)state;
    HessenbergChoice at100 = Linalg_eigenvalue_tuning(100);
    assert_int_equal(at100.shifts, 10); /* iparmq.f: NS = 10 for 60 <= nh < 150 */
    assert_int_equal(at100.window, 10);
    assert_true(hseqr_query(100) == hseqr_query_at(100, at100));
    HessenbergChoice lapack = Hessenberg_reference(1024);
    assert_int_equal(lapack.shifts, 64); /* iparmq.f: NS = 64 for 590 <= nh < 3000 */
    assert_int_equal(lapack.window, 96); /* and NW = 3·NS/2 above 500 */
    Hessenberg_set_policy(HESSENBERG_POLICY_REFERENCE, 0, (HessenbergChoice){0});
    assert_true(hseqr_query(1024) == hseqr_query_at(1024, lapack));
}

static int tuned_policy(void **state)
{
    (void)state;
    Hessenberg_set_policy(HESSENBERG_POLICY_TUNED, 0, (HessenbergChoice){0});
    return 0;
}

/* The complex Hessenberg QR keeps LAPACK's window: zhseqr asks jw + zgehrd's workspace at
   LAPACK's window (zlaqr3's formula, zgehrd's the larger there). */
static void test_complex_routines_keep_lapacks_values(void **state)
{
    (void)state;
    int n = 1024, jw = Hessenberg_reference(n).window + 1;
    lapack_complex_double h = 0, w = 0, query = 0, t = 0, hrd = 0;
    assert_int_equal(
        LAPACKE_zhseqr_work(LAPACK_COL_MAJOR, 'E', 'N', n, 1, n, &h, n, &w, &w, 1, &query, -1), 0);
    assert_int_equal(LAPACKE_zgehrd_work(LAPACK_COL_MAJOR, jw, 1, jw - 1, &t, jw, &t, &hrd, -1), 0);
    assert_true(creal(query) == jw + creal(hrd));
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static double gaussian(void)
{
    double u[2];
    for (int k = 0; k < 2; k++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        u[k] = ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2 * log(u[0])) * cos(2 * M_PI * u[1]);
}

/* A = Q·D·Qᵀ (n×n) with Q orthogonal (the QR of a Gaussian) and D block diagonal: 2×2 blocks
   [x y; −y x] (eigenvalues x ± iy) on a grid of the upper half of [−1, 1] × (0, 1], then 1×1
   blocks on a grid of [−1, 1]: eigenvalues ≥ 1/grid apart, returned in re, im. */
static double *normal_matrix(int n, double *re, double *im, int *reals)
{
    size_t nn = (size_t)n * n;
    double *q = malloc(nn * sizeof *q), *d = calloc(nn, sizeof *d), *qd = malloc(nn * sizeof *qd),
           *a = malloc(nn * sizeof *a), *tau = malloc((size_t)n * sizeof *tau);
    for (size_t i = 0; i < nn; i++)
        q[i] = gaussian();
    assert_int_equal(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n, n, q, n, tau), 0);
    assert_int_equal(LAPACKE_dorgqr(LAPACK_COL_MAJOR, n, n, n, q, n, tau), 0);
    int pairs = n / 3, grid = (int)ceil(sqrt(pairs));
    *reals = n - 2 * pairs;
    for (int k = 0; k < pairs; k++) {
        double x = -1 + 2 * (k % grid + 0.5) / grid, y = (double)(k / grid + 1) / grid;
        size_t at = (size_t)2 * k;
        d[at + at * n] = d[at + 1 + (at + 1) * n] = x;
        d[at + (at + 1) * n] = y;
        d[at + 1 + at * n] = -y;
        re[2 * k] = re[2 * k + 1] = x;
        im[2 * k] = y;
        im[2 * k + 1] = -y;
    }
    for (int k = 0; k < *reals; k++) {
        size_t at = (size_t)2 * pairs + k;
        d[at + at * n] = re[at] = -1 + 2 * (k + 0.5) / *reals;
        im[at] = 0;
    }
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, q, n, d, n, 0, qd, n);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1, qd, n, q, n, 0, a, n);
    free(q), free(d), free(qd), free(tau);
    return a;
}

/* Every computed eigenvalue within the tolerance of a distinct true one, the real ones real.
   The tolerance: dgeev is backward stable, its eigenvalues exact for A + E with
   ‖E‖₂ ≤ p(n)·ε·‖A‖₂, p a small multiple of n; A is normal, so by Bauer–Fike (κ(V) = 1) each
   moves by at most ‖E‖₂; forming A = Q·D·Qᵀ in floating point adds an error of the same
   order (two products of n terms, Q orthogonal to n·ε).  With p(n) = 8n, at n = 1024 that
   is 1.8e-12·‖A‖₂, ~1/10⁹ of the eigenvalues' spacing (1/grid ≥ 0.05), so the nearest
   unused true eigenvalue is the match. */
static void check_eigenvalues(int n)
{
    double *re = malloc((size_t)n * sizeof *re), *im = malloc((size_t)n * sizeof *im),
           *got_re = malloc((size_t)n * sizeof *re), *got_im = malloc((size_t)n * sizeof *im);
    bool *used = calloc((size_t)n, sizeof *used);
    int reals = 0, got_reals = 0;
    double *a = normal_matrix(n, re, im, &reals);
    double norm = 0; /* ‖A‖₂ = the largest |λ| of a normal matrix */
    for (int i = 0; i < n; i++)
        norm = fmax(norm, hypot(re[i], im[i]));
    Linalg *la = Linalg_new();
    assert_int_equal(Linalg_eigenvalues(la, n, a, got_re, got_im), 0);
    double tolerance = 8.0 * n * DBL_EPSILON * norm, worst = 0;
    for (int i = 0; i < n; i++) {
        got_reals += got_im[i] == 0;
        int best = -1;
        double distance = INFINITY;
        for (int j = 0; j < n; j++) {
            double e = hypot(got_re[i] - re[j], got_im[i] - im[j]);
            if (!used[j] && e < distance)
                distance = e, best = j;
        }
        assert_true(best >= 0);
        used[best] = true;
        worst = fmax(worst, distance);
    }
    if (!(worst <= tolerance))
        fail_msg("n = %d: an eigenvalue %.3g from its true one, tolerance 8·n·ε·‖A‖₂ = %.3g", n,
                 worst, tolerance);
    assert_int_equal(got_reals, reals);
    Linalg_free(la);
    free(a), free(re), free(im), free(got_re), free(got_im), free(used);
}

static void test_eigenvalues_of_normal_matrices(void **state)
{
    (void)state;
    const int orders[] = {100, 300, 600, 1024};
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++)
        check_eigenvalues(orders[i]);
}

int main(void)
{
    Linalg_set_blas_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dhseqr_asks_our_iparmq),
        cmocka_unit_test_teardown(test_reference_where_the_table_is_lapacks, tuned_policy),
        cmocka_unit_test(test_complex_routines_keep_lapacks_values),
        cmocka_unit_test(test_eigenvalues_of_normal_matrices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
