/* Measure_tokens' flat-spectrum route (docs/model.md §2): where the top-eigenpair certificate
 * cannot hold (sr − 1 > 1), above MEASURE_SVD_CHEAP (T ≤ d and T > d), λ1 by Lanczos within an
 * interval whose top a Cholesky factorisation proves, accepted only where its error bound is
 * within dsyevd's guaranteed one.  Checked on X built in long double with prescribed singular
 * values (so the exact sr − 1 is known) against that guarantee, beside dsyevd's own result;
 * and on a Gram matrix whose top eigenvector Lanczos's start misses, where only the proof
 * keeps a wrong λ1 out. */
#include "testing.h"

#include "model_fixture.h"
#include "prescribed_fixture.h"

#include "attnscope/linalg.h"
#include "attnscope/measure.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

static const double U = DBL_EPSILON / 2; /* the unit round-off */

/* [low, high] of Σ_{i≥2} λ_i²/λ1² when each of the n eigenvalues lam (descending, ≥ 0) may
   move by δ: Weyl's bound on what any route that is exact for a matrix within δ (in ‖·‖₂) of
   diag(lam) may report. */
static void rest_interval(int n, const long double *lam, long double delta, double *low,
                          double *high)
{
    long double up = 0, down = 0;
    for (int i = 1; i < n; i++) {
        long double above = lam[i] + delta, below = lam[i] > delta ? lam[i] - delta : 0;
        up += above * above;
        down += below * below;
    }
    *high = (double)(up / ((lam[0] - delta) * (lam[0] - delta)));
    *low = (double)(down / ((lam[0] + delta) * (lam[0] + delta)));
}

/* How far the computed Gram matrix's eigenvalues may be from the exact s_k²/Σ s_k² (each
   within it), before the route: X's rounding to double and the construction's
   (‖ΔX‖₂ ≤ u‖X‖_F + c), the division by ‖X‖_F (u per entry), the Gram matrix's rounding
   (γ_d‖U‖_F²). */
static long double input_slack(int d, const Prescribed *p, long double top)
{
    long double x = 2 * U + p->construction / p->frobenius;
    return 2 * x * sqrtl(top) + x * x + Linalg_rounding_gamma(d) * (1 + 2 * U);
}

/* The route's: dsyevd's guaranteed p·u·λ1, p = T² (docs/model.md §2), within which the flat
   route's accepted bound lies. */
static long double route_slack(int T, long double top)
{
    return (long double)T * T * U * top;
}

/* The exact eigenvalues s_k²/Σ s²(descending) of X's Gram matrix at unit Frobenius norm. */
static void exact_eigenvalues(int n, const double *s, long double *lam)
{
    long double total = 0;
    for (int k = 0; k < n; k++)
        total += (long double)s[k] * s[k];
    for (int k = 0; k < n; k++)
        lam[k] = (long double)s[k] * s[k] / total;
}

typedef struct {
    const char *name;
    double (*singular)(int k, int n);
    bool flat_expected; /* whether the route must certify it */
} FlatSpectrum;

/* All equal: X0's orthonormal tokens, λ1 of multiplicity n. */
static double equal(int k, int n)
{
    (void)k, (void)n;
    return 1.0;
}

/* A slowly falling spectrum, λ1 − λ2 about 1% of λ1, like a Gaussian X's top. */
static double falling(int k, int n)
{
    return 1.0 - 0.6 * sqrt((double)k / n);
}

/* A top pair 1e-9 apart above a flat rest: Lanczos may settle on the pair's mixture,
   whose Ritz value the proof must then keep out. */
static double near_pair(int k, int n)
{
    return k == 0 ? 1.0 : k == 1 ? 1.0 - 1e-9 : 0.9 * (1.0 - (double)k / n);
}

/* The flat route's sr − 1 beside dsyevd's on the same Ĝ, closer than the guarantee above (whose
   T²·u·λ1 would let a regression of 1e-13 pass): within 2T·u·ρ.  Why 2T: the worst cases,
   B_flat ≈ 10(T + 1)u (N's 2T + 2 roundings, θ's 4γ_{T+1}·R twice) and B_dsyevd = 4T²u, need
   every rounding to fall the same way, which no test input reaches; rounding errors of random
   sign grow as √n (Higham and Mary, SIAM J. Sci. Comput. 41, 2019: λ√n·u for n roundings),
   so with λ = 2 the flat route's (√(2T + 2) + 8√(T + 1))·2u ≈ 185u and dsyevd's at LAPACK's
   practical p = 1 (Users' Guide §4.7), 2u((τ − 1)/ρ + 1) = 4u for τ − 1 ≈ ρ, stay within
   2T·u = 192u at T = 96.  A regression of 1e-13 (≈ 900u) fails it. */
static void assert_near_dsyevd(int T, double flat, double dsyevd)
{
    double difference = fabs(flat - dsyevd), tolerance = 2 * T * U * dsyevd;
    print_message("  flat − dsyevd: %.3g u·ρ (tolerance %.3g u·ρ)\n", difference / (U * dsyevd),
                  tolerance / (U * dsyevd));
    assert_true(difference <= tolerance);
}

/* Flat spectra at (T, d) = (96, 96), (96, 128) and, T > d, (128, 96), (160, 64), where the
   T×T Ĝ has T − d zero eigenvalues and the proof factors Ĝ's own lower triangle: the route's
   sr − 1 (and the centred one, the rest of X − 1x̄ᵀ = Σ_{k≥2} s_k u_k v_kᵀ, u_1 the mean
   direction) within dsyevd's guarantee of the exact value, as dsyevd's own is; the route
   taken wherever its bound allows. */
static void test_flat_route_within_dsyevd_guarantee(void **state)
{
    (void)state;
    const FlatSpectrum spectra[] = {
        {"equal", equal, true}, {"falling", falling, true}, {"near pair", near_pair, false}};
    const struct {
        int T, d;
    } shapes[] = {{96, 96}, {96, 128}, {128, 96}, {160, 64}};
    enum { MAX = 160 };
    for (size_t w = 0; w < sizeof shapes / sizeof shapes[0]; w++)
        for (size_t k = 0; k < sizeof spectra / sizeof spectra[0]; k++) {
            int T = shapes[w].T, d = shapes[w].d, n = T < d ? T : d;
            assert_false(Measure_svd_cheap(T, d));
            double s[MAX];
            long double lam[MAX] = {0}, centred[MAX] = {0}; /* rank n and n − 1: zeros beyond */
            for (int i = 0; i < n; i++)
                s[i] = spectra[k].singular(i, n);
            Prescribed p = prescribed(T, d, s, 70 + w * 8 + k);
            Measures fast = measure_by(T, d, p.x, true), reference = measure_by(T, d, p.x, false);
            exact_eigenvalues(n, s, lam);
            exact_eigenvalues(n - 1, s + 1, centred); /* X − 1x̄ᵀ has rank n − 1 */
            double low, high, centred_low, centred_high;
            long double slack = input_slack(d, &p, lam[0]) + route_slack(T, lam[0]);
            rest_interval(T, lam, slack, &low, &high);
            /* The centred tokens, rescaled by μ² = the energy off the mean, carry X's slack over
               μ² and the centring's rounding (2γ_T·μ + 4u·μ², §2's E_dir, over μ²). */
            long double mu2 = 1 - lam[0];
            long double centring = (2 * Linalg_rounding_gamma(T) * sqrtl(mu2) + 4 * U * mu2) / mu2;
            rest_interval(T, centred,
                          input_slack(d, &p, lam[0]) / mu2 + centring + route_slack(T, centred[0]),
                          &centred_low, &centred_high);
            print_message("%s, T %d, d %d: route %d, sr − 1 exact %.17g, flat %.17g, dsyevd "
                          "%.17g (guarantee [%.17g, %.17g])\n",
                          spectra[k].name, T, d, fast.route, (double)p.exact,
                          fast.stable_rank_minus_one, reference.stable_rank_minus_one, low, high);
            assert_int_equal(reference.route, MEASURE_ROUTE_ALL_EIGENVALUES);
            if (spectra[k].flat_expected)
                assert_int_equal(fast.route, MEASURE_ROUTE_FLAT_TOP);
            else
                assert_true(fast.route == MEASURE_ROUTE_FLAT_TOP ||
                            fast.route == MEASURE_ROUTE_ALL_EIGENVALUES);
            if (fast.route == MEASURE_ROUTE_FLAT_TOP)
                assert_near_dsyevd(T, fast.stable_rank_minus_one, reference.stable_rank_minus_one);
            const Measures *both[] = {&fast, &reference};
            for (int r = 0; r < 2; r++) {
                assert_true(both[r]->stable_rank_minus_one >= low &&
                            both[r]->stable_rank_minus_one <= high);
                /* 1 + (sr − 1) rounded: u·T at most */
                double c = both[r]->geometry.centred_stable_rank - 1;
                assert_true(c >= centred_low - 2 * U * T && c <= centred_high + 2 * U * T);
                /* e = 1 − λ1/tr: trace − θ on the route, θ within the slack of λ1 */
                assert_close(both[r]->geometry.energy_off_top, (double)(1 - lam[0]),
                             (double)(2 * slack));
            }
            free(p.x);
        }
}

/* m tokens along distinct axes (each ‖x_i‖² = a) and n_B equal tokens (‖x_i‖² = b/n_B < a)
   along another: the Gram matrix has eigenvalues a (m times), b and 0, and sr − 1 = m·a²/b².
   Lanczos starts from the column with the largest diagonal entry, an axis token's, whose
   Krylov space is that token alone: θ = a, residual 0, and the top eigenvalue b is missed.
   The Cholesky factorisation of γI − Ĝ then meets b > γ, nothing is certified, and dsyevd
   decides; a route that trusted θ would report (m·a² + b²)/a² − 1 instead. */
static void test_missed_top_is_not_certified(void **state)
{
    (void)state;
    enum { T = 96, AXES = 46 };
    /* d = 64 < T: the failed factorisation ran on Ĝ's own lower triangle, which dsyevd then
       reads as it was (the same bits as the reference's). */
    const int widths[] = {128, 64};
    const double a = 1.0, b = 3.0;
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        int d = widths[w];
        assert_false(Measure_svd_cheap(T, d));
        double *x = calloc((size_t)T * d, sizeof(double));
        for (int i = 0; i < AXES; i++)
            x[i + (size_t)i * T] = sqrt(a);
        for (int i = AXES; i < T; i++)
            x[i + (size_t)AXES * T] = sqrt(b / (T - AXES));
        assert_true(b / (T - AXES) < a);
        Measures fast = measure_by(T, d, x, true), reference = measure_by(T, d, x, false);
        double exact = AXES * a * a / (b * b), trusted = (AXES * a * a + b * b) / (a * a) - 1;
        print_message("missed top, d %d: route %d, sr − 1 %.17g (exact %.17g; θ = a would give "
                      "%.17g)\n",
                      d, fast.route, fast.stable_rank_minus_one, exact, trusted);
        assert_int_equal(fast.route, MEASURE_ROUTE_ALL_EIGENVALUES);
        assert_true(fast.stable_rank_minus_one == reference.stable_rank_minus_one);
        assert_relative(fast.stable_rank_minus_one, exact, 1e-13);
        free(x);
    }
}

/* Where the measure also proves ‖X‖₂² (the next layer's entropy bound), the flat-spectrum
   route takes that proof's Lanczos vector and factorisation, which are its own on the same
   Gram matrix: the same bits as Measure_tokens alone, one Cholesky factorisation fewer (the
   centred measure's alone is the route's). */
static void test_flat_route_takes_the_input_bound(void **state)
{
    (void)state;
    enum { T = 96, D = 128 };
    double s[T];
    for (int i = 0; i < T; i++)
        s[i] = falling(i, T);
    Prescribed p = prescribed(T, D, s, 90);
    double *unit = malloc(sizeof(double) * T * D), *gram = malloc(sizeof(double) * T * T);
    double *eig = malloc(sizeof(double) * T), *factor = malloc(sizeof(double) * T * T);
    double *lanczos = malloc(sizeof(double) * Measure_tokens_scratch_size(T, D));
    MeasureInputBound bound = {.factor = factor, .lanczos = lanczos};
    MeasureSharing alone = {.bound = NULL}, shared = {.bound = &bound};
    Measures m_alone, m_shared;
    assert_int_equal(
        Measure_tokens_sharing(la, T, D, p.x, 0.0, unit, gram, eig, lanczos, &alone, &m_alone), 0);
    assert_int_equal(
        Measure_tokens_sharing(la, T, D, p.x, 0.0, unit, gram, eig, lanczos, &shared, &m_shared),
        0);
    assert_int_equal(m_alone.route, MEASURE_ROUTE_FLAT_TOP);
    assert_int_equal(m_shared.route, MEASURE_ROUTE_FLAT_TOP);
    assert_true(m_shared.stable_rank_minus_one == m_alone.stable_rank_minus_one);
    assert_true(m_shared.geometry.energy_off_top == m_alone.geometry.energy_off_top);
    assert_true(m_shared.geometry.centred_stable_rank == m_alone.geometry.centred_stable_rank);
    assert_true(bound.norm_squared > 0);
    assert_int_equal(alone.flat_proofs, 2);
    assert_int_equal(shared.flat_proofs, 1);
    free(p.x);
    free(unit);
    free(gram);
    free(eig);
    free(factor);
    free(lanczos);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_route_within_dsyevd_guarantee),
        cmocka_unit_test(test_missed_top_is_not_certified),
        cmocka_unit_test(test_flat_route_takes_the_input_bound),
    };
    return cmocka_run_group_tests_name("measure_flat", tests, setup, teardown);
}
