/* What the stable rank hides (docs/model.md §2): Measure_tokens' centred stable rank, energy
 * off the top direction, relative spread μ/‖X‖_F, mean pairwise cosine and token RMS against
 * a loop-by-loop reference (explicit centring, Gram matrices by loops, eigenvalues by cyclic
 * Jacobi rotations, the T(T − 1)/2 pairs one by one), and the exact cases: identical tokens,
 * orthonormal tokens, prescribed singular values, scaling, zero rows. */
#include "testing.h"

#include "model_fixture.h"

#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/random.h"

#include <float.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { T_MAX = 24 };

/* Eigenvalues of the symmetric n×n matrix a (full, destroyed) by cyclic Jacobi rotations. */
static void jacobi_eigenvalues(int n, double *a, double *w)
{
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++)
                off += a[p * n + q] * a[p * n + q];
        if (off < 1e-34)
            break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                if (a[p * n + q] == 0)
                    continue;
                double theta = (a[q * n + q] - a[p * n + p]) / (2 * a[p * n + q]);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < n; k++) { /* columns p, q */
                    double akp = a[k * n + p], akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) { /* rows p, q */
                    double apk = a[p * n + k], aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
            }
    }
    for (int i = 0; i < n; i++)
        w[i] = a[i * n + i];
}

/* sr = Σλ²/λ_max² and 1 − λ_max/Σλ of the Gram matrix of the T×d matrix x, by loops. */
static void reference_rank(int T, int d, const double *x, double *sr, double *off_top)
{
    double gram[T_MAX * T_MAX], w[T_MAX];
    for (int i = 0; i < T; i++)
        for (int k = 0; k < T; k++) {
            double dot = 0;
            for (int j = 0; j < d; j++)
                dot += x[i + j * T] * x[k + j * T];
            gram[i * T + k] = dot;
        }
    jacobi_eigenvalues(T, gram, w);
    double top = 0, sum = 0, sum2 = 0;
    for (int i = 0; i < T; i++) {
        top = fmax(top, w[i]);
        sum += w[i];
        sum2 += w[i] * w[i];
    }
    *sr = sum2 / (top * top);
    *off_top = 1 - top / sum;
}

/* Every quantity of TokenGeometry by its definition. */
static TokenGeometry reference(int T, int d, const double *x)
{
    TokenGeometry g;
    double centred[T_MAX * 64], norm2 = 0, spread2 = 0, row2[T_MAX] = {0};
    for (int j = 0; j < d; j++) {
        double mean = 0;
        for (int i = 0; i < T; i++)
            mean += x[i + j * T] / T;
        for (int i = 0; i < T; i++) {
            centred[i + j * T] = x[i + j * T] - mean;
            spread2 += centred[i + j * T] * centred[i + j * T];
            norm2 += x[i + j * T] * x[i + j * T];
            row2[i] += x[i + j * T] * x[i + j * T];
        }
    }
    double sr;
    reference_rank(T, d, x, &sr, &g.energy_off_top);
    reference_rank(T, d, centred, &g.centred_stable_rank, &(double){0});
    g.relative_spread = sqrt(spread2 / norm2);
    double rows2 = 0;
    for (int i = 0; i < T; i++)
        rows2 += row2[i];
    g.token_rms = sqrt(rows2 / T);
    double cosines = 0;
    int pairs = 0;
    for (int i = 0; i < T; i++)
        for (int k = i + 1; k < T; k++) {
            if (row2[i] == 0 || row2[k] == 0)
                continue;
            double dot = 0;
            for (int j = 0; j < d; j++)
                dot += x[i + j * T] * x[k + j * T];
            cosines += dot / sqrt(row2[i] * row2[k]);
            pairs++;
        }
    g.token_cosine_mean = pairs ? cosines / pairs : NAN;
    return g;
}

static void assert_matches_reference(int T, int d, const double *x, double tolerance)
{
    TokenGeometry want = reference(T, d, x);
    for (int route = 0; route < 2; route++) {
        TokenGeometry got = measure_by(T, d, x, route == 0).geometry;
        assert_relative(got.centred_stable_rank, want.centred_stable_rank, tolerance);
        assert_relative(got.energy_off_top, want.energy_off_top, tolerance);
        assert_relative(got.relative_spread, want.relative_spread, tolerance);
        assert_close(got.token_cosine_mean, want.token_cosine_mean, tolerance);
        assert_relative(got.token_rms, want.token_rms, tolerance);
    }
}

static void gaussian(uint64_t seed, int role, double *x, size_t n)
{
    RandomStream *random = RandomStream_new();
    RandomStream_gaussian(random, seed, 1, role, 1.0, x, n);
    RandomStream_free(random);
}

/* Gaussian tokens, and the case: a shared mean token of norm 10 beside Gaussian
   parts of entries 0.7 (a quarter of the energy): sr(Σ) reads collapsed (sr − 1 < 0.01, the
   warning's condition with energy_off_top ≥ 0.1), the centred stable rank does not. */
static void test_against_loop_reference(void **state)
{
    (void)state;
    enum { T = T_MAX, D = 64 };
    double x[T * D], mean[D];
    gaussian(5, ROLE_QUERY, x, T * D);
    assert_matches_reference(T, D, x, 1e-10);

    gaussian(6, ROLE_KEY, mean, D);
    for (int j = 0; j < D; j++)
        for (int i = 0; i < T; i++)
            x[i + j * T] = 0.7 * x[i + j * T] + 10 * mean[j] / sqrt(D);
    assert_matches_reference(T, D, x, 1e-10);
    Measures m = measure_by(T, D, x, true);
    assert_int_equal(m.route, MEASURE_ROUTE_TOP_EIGENPAIR);
    assert_true(m.stable_rank_minus_one < 0.01);
    assert_true(m.geometry.energy_off_top > 0.1);
    assert_true(m.geometry.centred_stable_rank > 3);
}

/* Identical tokens: X − 1x̄ᵀ = 0, so the centred stable rank is 0/0 (NaN); every cosine is
   1 and all the energy lies on the top direction (to the rounding of the O(Td) sums). */
static void test_identical_tokens(void **state)
{
    (void)state;
    enum { T = 16, D = 24 };
    double x[T * D], token[D];
    gaussian(7, ROLE_VALUE, token, D);
    for (int j = 0; j < D; j++)
        for (int i = 0; i < T; i++)
            x[i + j * T] = token[j];
    Measures m = measure_by(T, D, x, true);
    assert_true(isnan(m.geometry.centred_stable_rank));
    assert_close(m.geometry.token_cosine_mean, 1.0, 8 * DBL_EPSILON);
    assert_close(m.geometry.energy_off_top, 0.0, 8 * DBL_EPSILON);
    assert_true(m.geometry.relative_spread < MEASURE_SIMILARITY_RESOLUTION);
    assert_relative(m.stable_rank, 1.0, 1e-15);
}

/* Orthonormal rows (X0): cosine 0, energy off the top 1 − 1/T, relative spread
   √((T − 1)/T), RMS norm 1, and X − 1x̄ᵀ = (I − 11ᵀ/T)X has T − 1 unit singular values: sr T − 1. */
static void test_orthonormal_tokens(void **state)
{
    (void)state;
    enum { T = 16, D = 24 };
    double x[T * D];
    gaussian(8, ROLE_QUERY, x, T * D);
    double *rows = malloc(sizeof(double) * D * T); /* d×T, orthonormal columns */
    for (int i = 0; i < T; i++)
        for (int j = 0; j < D; j++)
            rows[j + i * D] = x[i + j * T];
    assert_int_equal(Linalg_orthonormalise(la, D, T, rows), 0);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < D; j++)
            x[i + j * T] = rows[j + i * D];
    free(rows);
    TokenGeometry g = measure_by(T, D, x, true).geometry;
    assert_close(g.token_cosine_mean, 0.0, 1e-12);
    assert_close(g.energy_off_top, 1.0 - 1.0 / T, 1e-12);
    assert_close(g.centred_stable_rank, T - 1, 1e-12 * T);
    assert_close(g.relative_spread, sqrt((T - 1.0) / T), 1e-12);
    assert_close(g.token_rms, 1.0, 1e-15);
}

/* Scaling X: by a power of 2 every quantity but the RMS is the same bit for bit (X/‖X‖_F is),
   by 3.7 to rounding; the RMS scales with X. */
static void test_scaling(void **state)
{
    (void)state;
    enum { T = 10, D = 14 };
    double x[T * D], scaled[T * D];
    gaussian(9, ROLE_KEY, x, T * D);
    TokenGeometry g = measure_by(T, D, x, true).geometry;
    const double factors[] = {1024.0, 3.7};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < T * D; i++)
            scaled[i] = factors[k] * x[i];
        TokenGeometry s = measure_by(T, D, scaled, true).geometry;
        double tolerance = k == 0 ? 0 : 1e-13;
        assert_relative(s.centred_stable_rank, g.centred_stable_rank, tolerance);
        assert_relative(s.energy_off_top, g.energy_off_top, tolerance);
        assert_relative(s.relative_spread, g.relative_spread, tolerance);
        assert_close(s.token_cosine_mean, g.token_cosine_mean, k == 0 ? 0 : 1e-15);
        assert_relative(s.token_rms, factors[k] * g.token_rms, 1e-15);
    }
}

/* Singular values 1, q, q², … : 1 − s_1²/Σs_i² = Σ_{i≥1} q^{2i}/Σ_{i≥0} q^{2i} in closed form,
   on each route: the top eigenpair (q = 0.5), all eigenvalues (a doubled top value, no gap)
   and the singular values of X (q = 1e-6: sr − 1 ≈ 1e-24, below the Gram route's floor). */
static void test_energy_off_top_on_every_route(void **state)
{
    (void)state;
    enum { T = 12, D = 20 };
    const double ratios[] = {0.5, 1.0, 1e-6};
    const MeasureRoute routes[] = {MEASURE_ROUTE_TOP_EIGENPAIR, MEASURE_ROUTE_ALL_EIGENVALUES,
                                   MEASURE_ROUTE_SINGULAR_VALUES};
    double u[T * T], v[D * T];
    gaussian(11, ROLE_QUERY, u, T * T);
    gaussian(11, ROLE_KEY, v, D * T);
    assert_int_equal(Linalg_orthonormalise(la, T, T, u), 0);
    assert_int_equal(Linalg_orthonormalise(la, D, T, v), 0);
    for (int r = 0; r < 3; r++) {
        double s[T], total = 0, off = 0, x[T * D] = {0};
        for (int i = 0; i < T; i++) {
            s[i] = i == 0 ? 1.0 : (r == 1 && i == 1 ? 1.0 : s[i - 1] * (r == 1 ? 0.3 : ratios[r]));
            total += s[i] * s[i];
            off += i ? s[i] * s[i] : 0;
        }
        for (int k = 0; k < T; k++)
            for (int j = 0; j < D; j++)
                for (int i = 0; i < T; i++)
                    x[i + j * T] += u[i + k * T] * s[k] * v[j + k * D];
        Measures m = measure_by(T, D, x, true);
        assert_int_equal(m.route, routes[r]);
        assert_relative(m.geometry.energy_off_top, off / total, r == 2 ? 1e-9 : 1e-12);
    }
}

/* Zero rows have no direction: the cosine is the mean over the pairs of nonzero rows, and
   undefined with fewer than two. */
static void test_zero_rows(void **state)
{
    (void)state;
    enum { T = 8, D = 12 };
    double x[T * D];
    gaussian(12, ROLE_VALUE, x, T * D);
    for (int j = 0; j < D; j++)
        x[2 + j * T] = x[5 + j * T] = 0;
    assert_matches_reference(T, D, x, 1e-10);
    for (int j = 0; j < D; j++)
        for (int i = 1; i < T; i++)
            x[i + j * T] = 0;
    assert_true(isnan(measure_by(T, D, x, true).geometry.token_cosine_mean));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_loop_reference),
        cmocka_unit_test(test_identical_tokens),
        cmocka_unit_test(test_orthonormal_tokens),
        cmocka_unit_test(test_scaling),
        cmocka_unit_test(test_energy_off_top_on_every_route),
        cmocka_unit_test(test_zero_rows),
    };
    return cmocka_run_group_tests_name("geometry", tests, setup, teardown);
}
