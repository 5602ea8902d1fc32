/* The proved upper bound of ‖ABᵀ‖₂ that Zhai et al.'s entropy bound reads above
 * ENTROPY_EXACT_INPUT_NORM (Measure_gram_factor, Measure_product_norm2_squared_bound,
 * docs/model.md §3):
 *   - never below the exact norm, the top singular value of ABᵀ formed here entry by entry
 *     (long double) and decomposed by LAPACK, and within QK_BOUND_TOLERANCE of it, on random
 *     shapes: one head (d_h = d), d_h < d, and several query heads sharing one key head's
 *     factor (grouped heads, G < H), Gaussian and spiked (a low stable rank);
 *   - the proof beneath it (Measure_gram_top_bound) refuses a shift below the top eigenvalue
 *     and accepts one above, never returning a bound below λ1;
 *   - a key whose Gram matrix is singular gives no factor, and so no bound (NaN): the caller's
 *     exact route.
 */
#include "testing.h"

#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/random.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* The bound's slack stated in docs/model.md §3 for these sizes (d ≤ 256), relative to
   ‖ABᵀ‖₂²; the construction's proof allows ~d·u·sr(A)·sr(B), below 1e-9 here. */
#define QK_BOUND_TOLERANCE 1e-9
/* The reference's own rounding: LAPACK's s_1 of the formed product is within ~d·u of it. */
#define REFERENCE_ROUNDING 1e-12

static Linalg *la;
static RandomStream *random_stream;

static int setup(void **state)
{
    (void)state;
    la = Linalg_new();
    random_stream = RandomStream_new();
    return la && random_stream ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    Linalg_free(la);
    RandomStream_free(random_stream);
    return 0;
}

/* A d×k Gaussian matrix, plus spike·(a fixed unit vector ⊗ its first column) when spike > 0:
   one large singular value over the bulk. */
static double *draw(int d, int k, uint64_t seed, Role role, double spike)
{
    double *m = malloc(sizeof(double) * d * k);
    assert_non_null(m);
    RandomStream_gaussian(random_stream, seed, 1, role, 1.0, m, (size_t)d * k);
    for (int j = 0; j < k && spike > 0; j++)
        for (int i = 0; i < d; i++)
            m[i + (size_t)j * d] += spike * m[(size_t)j * d] / sqrt((double)d);
    return m;
}

/* s_1(ABᵀ): the d×d product summed here in long double, its singular values by LAPACK. */
static double exact_norm(int d, int k, const double *a, const double *b)
{
    double *product = malloc(sizeof(double) * d * d), *s = malloc(sizeof(double) * d);
    assert_non_null(product);
    assert_non_null(s);
    for (int j = 0; j < d; j++)
        for (int i = 0; i < d; i++) {
            long double sum = 0;
            for (int l = 0; l < k; l++)
                sum += (long double)a[i + (size_t)l * d] * b[j + (size_t)l * d];
            product[i + (size_t)j * d] = (double)sum;
        }
    assert_int_equal(Linalg_singular_values(la, d, d, product, s), 0);
    double top = s[0];
    free(product);
    free(s);
    return top;
}

/* Scratch of one key's factor and its query heads' bounds. */
typedef struct {
    double *lower, *product, *transposed, *gram, *lanczos;
} Scratch;

static Scratch scratch_new(int d, int k)
{
    Scratch s = {malloc(sizeof(double) * k * k), malloc(sizeof(double) * d * k),
                 malloc(sizeof(double) * d * k), malloc(sizeof(double) * k * k),
                 malloc(sizeof(double) * Measure_lanczos_size(k))};
    assert_true(s.lower && s.product && s.transposed && s.gram && s.lanczos);
    return s;
}

static void scratch_free(Scratch *s)
{
    free(s->lower);
    free(s->product);
    free(s->transposed);
    free(s->gram);
    free(s->lanczos);
}

static void test_bound_is_above_and_within_tolerance(void **state)
{
    (void)state;
    const struct {
        int d, k, queries; /* query heads sharing the key head */
        double spike;
    } cases[] = {{96, 96, 1, 0},   {128, 32, 3, 0}, {160, 40, 2, 0},
                 {100, 100, 1, 8}, {200, 50, 4, 5}, {256, 64, 2, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int d = cases[c].d, k = cases[c].k;
        Scratch s = scratch_new(d, k);
        double *key = draw(d, k, 40 + c, ROLE_KEY, 0);
        MeasureGramFactor factor = {.lower = s.lower};
        assert_int_equal(Measure_gram_factor(la, d, k, key, s.transposed, &factor), 0);
        assert_false(isnan(factor.error));
        for (int q = 0; q < cases[c].queries; q++) {
            double *query = draw(d, k, 70 + 10 * c + q, ROLE_QUERY, cases[c].spike);
            double bound, exact = exact_norm(d, k, query, key);
            assert_int_equal(Measure_product_norm2_squared_bound(la, d, k, query, &factor,
                                                                 s.product, s.transposed, s.gram,
                                                                 s.lanczos, &bound),
                             0);
            double slack = bound / (exact * exact) - 1;
            print_message("d = %d, d_h = %d, query head %d of %d%s: bound/exact² − 1 = %.3g\n", d,
                          k, q + 1, cases[c].queries, cases[c].spike > 0 ? " (spiked)" : "", slack);
            if (!(slack >= -REFERENCE_ROUNDING && slack <= QK_BOUND_TOLERANCE))
                fail_msg("d = %d, d_h = %d, query %d: bound %.17g, exact² %.17g (relative %.3g)", d,
                         k, q, bound, exact * exact, slack);
            free(query);
        }
        free(key);
        scratch_free(&s);
    }
}

/* The Gram matrix of X = U·diag(√λ)·Vᵀ-like: diag(λ) turned by a Householder reflection, so
   its top eigenvalue is λ_0 exactly up to the rounding of the turn. */
static void turned_diagonal(int n, const double *lambda, double *gram)
{
    double w[64], norm2 = 0;
    assert_true(n <= 64);
    for (int i = 0; i < n; i++) {
        w[i] = 1.0 + (i % 5);
        norm2 += w[i] * w[i];
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            long double sum = 0;
            for (int l = 0; l < n; l++) {
                long double hi = (i == l) - 2.0L * w[i] * w[l] / norm2;
                long double hj = (j == l) - 2.0L * w[j] * w[l] / norm2;
                sum += hi * lambda[l] * hj;
            }
            gram[i + (size_t)j * n] = (double)sum;
        }
}

/* A shift below λ1 is refused (NaN) however close the caller's claim; above it, the proved
   bound is above λ1 and within the rounding the proof adds. */
static void test_low_shift_is_refused(void **state)
{
    (void)state;
    enum { N = 48 };
    double lambda[N], gram[N * N], factor[N * N];
    for (int i = 0; i < N; i++)
        lambda[i] = i == 0 ? 10.0 : 9.0 * pow(0.9, i);
    turned_diagonal(N, lambda, gram);
    const double low[] = {0.5, 0.99, 1 - 1e-6};
    for (size_t i = 0; i < sizeof low / sizeof low[0]; i++) {
        double bound;
        assert_int_equal(Measure_gram_top_bound(la, N, N, gram, low[i] * lambda[0], factor, &bound),
                         0);
        if (!isnan(bound))
            fail_msg("shift %.17g (λ1 × %.17g) accepted: bound %.17g", low[i] * lambda[0], low[i],
                     bound);
    }
    double bound;
    assert_int_equal(Measure_gram_top_bound(la, N, N, gram, lambda[0] * (1 + 1e-9), factor, &bound),
                     0);
    assert_false(isnan(bound));
    assert_true(bound >= lambda[0] && bound <= lambda[0] * (1 + 1e-8));
    /* A shift within the rounding below λ1: either refused or, if the factorisation's rounding
       lets it through, raised past λ1 by the backward error the proof adds. */
    assert_int_equal(
        Measure_gram_top_bound(la, N, N, gram, lambda[0] * (1 - 1e-15), factor, &bound), 0);
    assert_true(isnan(bound) || bound >= lambda[0]);
}

/* A key of rank below d_h: its Gram matrix is singular, no factor, no bound. */
static void test_singular_key_gives_no_bound(void **state)
{
    (void)state;
    enum { D = 80, K = 20 };
    Scratch s = scratch_new(D, K);
    double *key = draw(D, K, 5, ROLE_KEY, 0), *query = draw(D, K, 6, ROLE_QUERY, 0);
    memcpy(key + (size_t)3 * D, key + (size_t)7 * D, sizeof(double) * D); /* two equal columns */
    MeasureGramFactor factor = {.lower = s.lower};
    assert_int_equal(Measure_gram_factor(la, D, K, key, s.transposed, &factor), 0);
    assert_true(isnan(factor.error));
    double bound = 0;
    assert_int_equal(Measure_product_norm2_squared_bound(la, D, K, query, &factor, s.product,
                                                         s.transposed, s.gram, s.lanczos, &bound),
                     0);
    assert_true(isnan(bound));
    memset(key, 0, sizeof(double) * D * K);
    assert_int_equal(Measure_gram_factor(la, D, K, key, s.transposed, &factor), 0);
    assert_true(isnan(factor.error));
    free(key);
    free(query);
    scratch_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_is_above_and_within_tolerance),
        cmocka_unit_test(test_low_shift_is_refused),
        cmocka_unit_test(test_singular_key_gives_no_bound),
    };
    return cmocka_run_group_tests_name("qk_bound", tests, setup, teardown);
}
