/* Measure_tokens' deflated route (docs/model.md §2): deep in the collapse, above
 * MEASURE_SVD_CHEAP, sr − 1 = Σ_{i≥2} s_i⁴/s_1⁴ from X with its top singular pair projected
 * out and the Gram matrix of the rest, instead of the singular values of X (dgesdd).
 * Checked on X = 1·xᵀ + E built in long double with prescribed singular values of E, so that
 * the exact sr − 1 is known, against the error bound derived in docs/model.md §2, down to
 * and below what double precision resolves; and against dgesdd (the reference route) on
 * those matrices and on the collapsed layers of model runs. */
#include "testing.h"

#include "model_fixture.h"
#include "prescribed_fixture.h"

#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/random.h"

#include <float.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const double U = DBL_EPSILON / 2; /* the unit round-off */

/* How far the deflated route's ρ^{1/4} (ρ = sr − 1) may lie from the exact one of the
   long-double X (docs/model.md §2).  ρ^{1/4} = ‖X₂‖_S4/s_1, and a Schatten norm moves by at
   most the Frobenius norm of the perturbation (Mirsky): the rounding of X to double (u‖X‖_F)
   and of X/‖X‖_F (u‖X‖_F), the projections' (2√2·u‖X‖_F) and the construction's; relative
   to ρ^{1/4}: a quarter of the Gram matrix's 2γ_m√n, and s_1's and the vectors' (below
   1e-12). */
static double deflated_tolerance(int T, int d, const Prescribed *p, double s1)
{
    int n = T < d ? T : d, m = T < d ? d : T;
    double absolute = ((2 + 2 * M_SQRT2) * U * p->frobenius + p->construction) / s1;
    double relative = Linalg_rounding_gamma(m) * sqrt(n) / 2 + 1e-12;
    return absolute + relative * pow(p->exact, 0.25);
}

/* dgesdd's singular values lie within p(m, n)·u·s_1 of the exact ones each, p a modestly
   growing function of the sizes (LAPACK Users' Guide §4.9; taken here as √n), so its ρ^{1/4}
   within n^{1/4}·p·u (Minkowski in ℓ4). */
static double dgesdd_tolerance(int T, int d, double frobenius, double s1)
{
    int n = T < d ? T : d;
    return pow(n, 0.25) * sqrt(n) * U * frobenius / s1;
}

/* Singular values s_1 = 1 and s_k = scale·f(k) below it. */
static void spectrum(int n, double scale, bool geometric, double *s)
{
    s[0] = 1.0;
    for (int k = 1; k < n; k++)
        s[k] = geometric ? scale * pow(0.5, k - 1) : scale / k;
}

/* Deep in the collapse (sr − 1 from 1e-36 to round-off), T < d and T > d: the deflated route
   runs, is within the derived tolerance of the exact sr − 1 on the fourth root, and of
   dgesdd's within both tolerances; below resolution (s_k ≤ 1e-16, and E = 0) it reports a
   number no larger than that round-off (the same tolerance from 0), never NaN. */
static void test_deflated_against_exact_and_dgesdd(void **state)
{
    (void)state;
    const int shapes[][2] = {{64, 96}, {96, 64}, {80, 80}};
    const double scales[] = {1e-9, 1e-12, 1e-14, 1e-16, 1e-18, 0};
    double worst_svd = 0, worst_deflated = 0;
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        int T = shapes[sh][0], d = shapes[sh][1], n = T < d ? T : d;
        assert_false(Measure_svd_cheap(T, d));
        for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++)
            for (int geometric = 0; geometric < 2; geometric++) {
                double *s = malloc(sizeof(double) * n);
                spectrum(n, scales[k], geometric, s);
                Prescribed p = prescribed(T, d, s, 40 + sh * 16 + k * 2 + geometric);
                Measures fast = measure_by(T, d, p.x, true), svd = measure_by(T, d, p.x, false);
                assert_int_equal(fast.route, MEASURE_ROUTE_DEFLATED);
                assert_int_equal(svd.route, MEASURE_ROUTE_SINGULAR_VALUES);
                double exact4 = pow(p.exact, 0.25);
                double fast4 = pow(fast.stable_rank_minus_one, 0.25);
                double svd4 = pow(svd.stable_rank_minus_one, 0.25);
                double tolerance = deflated_tolerance(T, d, &p, s[0]);
                print_message("T %d d %d scale %g %s: exact %.6g deflated %.6g dgesdd %.6g; "
                              "4th roots off by %.3g and %.3g u (tolerance %.3g u)\n",
                              T, d, scales[k], geometric ? "geometric" : "1/k", p.exact,
                              fast.stable_rank_minus_one, svd.stable_rank_minus_one,
                              fabs(fast4 - exact4) / U, fabs(svd4 - exact4) / U, tolerance / U);
                assert_close(fast4, exact4, tolerance);
                assert_close(fast4, svd4, tolerance + dgesdd_tolerance(T, d, p.frobenius, s[0]));
                /* e = Σ_{k≥2} s_k²/Σ s_k²: √e = ‖X₂‖_F/‖X‖_F moves by the same perturbation */
                assert_close(sqrt(fast.geometry.energy_off_top), sqrt(p.exact_off), tolerance);
                worst_deflated = fmax(worst_deflated, fabs(fast4 - exact4) / U);
                worst_svd = fmax(worst_svd, fabs(svd4 - exact4) / U);
                free(p.x);
                free(s);
            }
    }
    print_message("worst 4th-root error: deflated %.3g u, dgesdd %.3g u\n", worst_deflated,
                  worst_svd);
}

/* Model runs whose gap-off network collapses below MEASURE_GRAM_FLOOR (softmax and markov,
   T = d = 96, 8 layers, seeds 1..3): each collapsed layer's sr − 1 and energy off the top by
   the deflated route against dgesdd's (the reference route), within both tolerances. */
static void test_collapsed_layers_agree_with_dgesdd(void **state)
{
    (void)state;
    enum { T = 96, DEPTH = 8 };
    const Attention kinds[] = {ATTENTION_SOFTMAX, ATTENTION_MARKOV};
    int compared = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            Config c = small(T, T, DEPTH);
            c.attention = kinds[k];
            c.seed = seed;
            Workspace_measure_all_eigenvalues(workspace, false);
            Result *fast = run(&c);
            Workspace_measure_all_eigenvalues(workspace, true);
            Result *reference = run(&c);
            Workspace_measure_all_eigenvalues(workspace, false);
            assert_true(fast->measure_counts.routes[MEASURE_ROUTE_DEFLATED] > 0);
            assert_int_equal(reference->measure_counts.routes[MEASURE_ROUTE_DEFLATED], 0);
            const Curves *f = &fast->network, *r = &reference->network;
            for (int l = 1; l <= DEPTH; l++) {
                double rest = r->stable_rank_minus_one[l];
                if (!(rest <
                      MEASURE_GRAM_FLOOR)) /* null (NaN) too: tokens equal within round-off */
                    continue;
                /* X/‖X‖_F: s_1 ≤ ‖X‖_F = 1 and s_1 ≥ 1 − e, e ≤ √(T·ρ) ≪ 1e-6 here */
                Prescribed measured = {.exact = rest, .frobenius = 1.0};
                double tolerance = deflated_tolerance(T, T, &measured, 1.0 - 1e-6) +
                                   dgesdd_tolerance(T, T, 1.0, 1.0 - 1e-6);
                assert_close(pow(f->stable_rank_minus_one[l], 0.25), pow(rest, 0.25), tolerance);
                assert_close(sqrt(f->energy_off_top[l]), sqrt(r->energy_off_top[l]), tolerance);
                compared++;
            }
            Result_free(fast);
            Result_free(reference);
        }
    print_message("%d collapsed layers compared\n", compared);
    /* 10: the layers below the Gram floor whose tokens are not yet equal within round-off
       (docs/model.md §2, "Round-off from a layer on": sr − 1 is null past that) */
    assert_true(compared >= 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deflated_against_exact_and_dgesdd),
        cmocka_unit_test(test_collapsed_layers_agree_with_dgesdd),
    };
    return cmocka_run_group_tests_name("measure_deflated", tests, setup, teardown);
}
