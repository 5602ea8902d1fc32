/* The Kronecker path of the conditioning (conditioning_kron.h, docs/model.md §8.2): B₀'s
 * singular values are the products of its factors' (against the SVD of B built from its own
 * products), B₀⁻¹ and (B₀ᵀB₀)⁻¹ invert B₀'s products, and the certified s_min(K) holds the
 * exact one (the SVD of the full K) over seeds, masks and heads at T·d ≤ 4096. */
#include "testing.h"

#include "attnscope/attention.h"
#include "attnscope/conditioning.h"
#include "attnscope/conditioning_kron.h"
#include "attnscope/random.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

enum { HEADS_MAX = 4 };

/* Random sub-blocks of `heads` heads on one input X (T×d): M_h, W_VO,h Gaussian, the
   attention the softmax of s·X M_h Xᵀ under mask. */
typedef struct {
    int T, d, heads;
    double *x, *m, *wvo, *soft, *logits;
    SaBlock blocks[HEADS_MAX];
} Blocks;

static void blocks_make(Blocks *b, int T, int d, int heads, Mask mask, double sigma_qk, double beta,
                        uint64_t seed)
{
    size_t td = (size_t)T * d, dd = (size_t)d * d, tt = (size_t)T * T;
    *b = (Blocks){.T = T, .d = d, .heads = heads};
    b->x = malloc(sizeof(double) * td);
    b->m = malloc(sizeof(double) * dd * heads);
    b->wvo = malloc(sizeof(double) * dd * heads);
    b->soft = malloc(sizeof(double) * tt * heads);
    b->logits = malloc(sizeof(double) * (td + tt));
    assert_true(b->x && b->m && b->wvo && b->soft && b->logits);
    RandomStream *rs = RandomStream_new();
    assert_non_null(rs);
    RandomStream_gaussian(rs, seed, 0, ROLE_INPUT, 1.0 / sqrt((double)d), b->x, td);
    RandomStream_gaussian(rs, seed, 1, ROLE_QUERY, sigma_qk, b->m, dd * heads);
    RandomStream_gaussian(rs, seed, 1, ROLE_VALUE, 1.0 / sqrt((double)d), b->wvo, dd * heads);
    RandomStream_free(rs);
    /* M = σZ + β√d·I: the diagonal logit of a unit token is about β (cutting-skip's form). */
    for (int h = 0; h < heads; h++)
        for (int i = 0; i < d; i++)
            b->m[dd * h + i + (size_t)i * d] += beta * sqrt((double)d);
    double scale = 1.0 / sqrt((double)d), *xm = b->logits + tt;
    for (int h = 0; h < heads; h++) {
        /* logits row-major: C_ij = s·(X M Xᵀ)_ij, i.e. the column-major Cᵀ = s·X Mᵀ Xᵀ */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, d, 1.0, b->x, T, b->m + dd * h,
                    d, 0.0, xm, T);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, scale, xm, T, b->x, T, 0.0,
                    b->logits, T);
        Attention_build(ATTENTION_SOFTMAX, mask, 1, T, b->logits, -INFINITY, b->soft + tt * h);
        b->blocks[h] = (SaBlock){.T = T,
                                 .d = d,
                                 .x = b->x,
                                 .m = b->m + dd * h,
                                 .scale = scale,
                                 .wvo = b->wvo + dd * h,
                                 .softmax = b->soft + tt * h,
                                 .applied = b->soft + tt * h};
    }
}

static void blocks_free(Blocks *b)
{
    free(b->x);
    free(b->m);
    free(b->wvo);
    free(b->soft);
    free(b->logits);
}

/* Singular values of the n×n matrix a (destroyed), descending, by LAPACK directly. */
static void singular_values(int n, double *a, double *s)
{
    double *superb = malloc(sizeof(double) * n);
    assert_non_null(superb);
    assert_int_equal(
        LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', n, n, a, n, s, NULL, 1, NULL, 1, superb), 0);
    free(superb);
}

/* B = W_VOᵀ ⊗ A of one head, from SaWork's own products (its dominant part), decomposed. */
static void test_singular_values_are_the_products_of_the_factors(void **state)
{
    (void)state;
    const Mask masks[] = {MASK_FULL, MASK_CAUSAL};
    for (int k = 0; k < 2; k++) {
        Blocks b;
        int T = 6, d = 10, n = T * d;
        blocks_make(&b, T, d, 1, masks[k], 1.0, 0.0, 11 + k);
        SaWork *w = SaWork_new();
        KronFactors *f = KronFactors_new();
        Linalg *la = Linalg_new();
        double *dense = malloc(sizeof(double) * n * n), s[60], products[60];
        assert_true(w && f && la && dense);
        assert_int_equal(SaWork_prepare(w, &b.blocks[0]), 0);
        SaWork_dominant_only(w, true);
        assert_int_equal(SaWork_jacobian(w, dense), 0);
        singular_values(n, dense, s);
        assert_int_equal(KronFactors_factor(f, la, T, d, b.soft, b.wvo), 0);
        KronFactors_singular_values(f, products);
        /* dgesvd's values are exact to about n·ε·s_max each, the factors' to T·ε and d·ε. */
        double bound = 4.0 * n * DBL_EPSILON * s[0];
        for (int i = 0; i < n; i++)
            assert_close(products[i], s[i], bound);
        assert_close(KronFactors_s_max(f), s[0], bound);
        assert_close(KronFactors_s_min(f), s[n - 1], bound);
        free(dense);
        Linalg_free(la);
        KronFactors_free(f);
        SaWork_free(w);
        blocks_free(&b);
    }
}

/* B₀·(B₀⁻¹ r) = r and B₀ᵀB₀·((B₀ᵀB₀)⁻¹ r) = r through SaWork's products with B alone. */
static void test_inverses_undo_the_products(void **state)
{
    (void)state;
    Blocks b;
    int T = 7, d = 9, n = T * d;
    blocks_make(&b, T, d, 1, MASK_CAUSAL, 1.0, 0.0, 5);
    SaWork *w = SaWork_new();
    KronFactors *f = KronFactors_new();
    Linalg *la = Linalg_new();
    double r[63], x[63], y[63], z[63];
    assert_true(w && f && la);
    assert_int_equal(SaWork_prepare(w, &b.blocks[0]), 0);
    SaWork_dominant_only(w, true);
    assert_int_equal(KronFactors_factor(f, la, T, d, b.soft, b.wvo), 0);
    double kappa = KronFactors_s_max(f) / KronFactors_s_min(f);
    for (int i = 0; i < n; i++)
        r[i] = sin(1.0 + i);
    double rn = cblas_dnrm2(n, r, 1);
    KronFactors_solve(f, r, x);
    SaWork_jvp(w, x, y);
    for (int i = 0; i < n; i++)
        assert_close(y[i], r[i], 16.0 * n * DBL_EPSILON * kappa * rn);
    KronFactors_normal_inverse(f, r, x);
    SaWork_jvp(w, x, y);
    SaWork_vjp(w, y, z);
    for (int i = 0; i < n; i++)
        assert_close(z[i], r[i], 16.0 * n * DBL_EPSILON * kappa * kappa * rn);
    Linalg_free(la);
    KronFactors_free(f);
    SaWork_free(w);
    blocks_free(&b);
}

/* The certified interval [value − error, value] holds the exact s_min(K), up to the SVD's own
   rounding (n·ε·s_max); `upper` is never below it.  Returns whether it certified; *premise:
   ‖E‖₂/s_min(B₀) from the SVD of E = K − B built in full. */
static bool certified_holds_exact(const Blocks *b, bool nearest, int *products, double *premise)
{
    int T = b->T, d = b->d, n = T * d;
    SaWork *w = SaWork_new();
    KronFactors *f = KronFactors_new();
    Linalg *la = Linalg_new();
    double *k = malloc(sizeof(double) * n * n), *s = malloc(sizeof(double) * n);
    double *sum = malloc(sizeof(double) * d * d);
    assert_true(w && f && la && k && s && sum);
    assert_int_equal(SaWork_prepare_heads(w, b->blocks, b->heads), 0);
    SaWork_perturbation_only(w, true);
    assert_int_equal(SaWork_jacobian(w, k), 0);
    singular_values(n, k, s);
    double e_norm = s[0];
    SaWork_perturbation_only(w, false);
    assert_int_equal(SaWork_jacobian(w, k), 0);
    singular_values(n, k, s);
    if (nearest) {
        assert_int_equal(KronFactors_factor_nearest(f, la, T, d, b->heads, b->soft, b->wvo), 0);
    } else { /* the shown (first) head's A with the layer's W_VO = Σ_h W_VO,h */
        memset(sum, 0, sizeof(double) * d * d);
        for (int h = 0; h < b->heads; h++)
            cblas_daxpy(d * d, 1.0, b->wvo + (size_t)d * d * h, 1, sum, 1);
        assert_int_equal(KronFactors_factor(f, la, T, d, b->soft, sum), 0);
    }
    *premise = e_norm / KronFactors_s_min(f);
    KronEstimate e;
    assert_int_equal(
        SaWork_smallest_preconditioned(w, f, NULL, KRON_STEPS_MAX, KRON_TOLERANCE, 3, &e), 0);
    double svd = 4.0 * n * DBL_EPSILON * s[0], exact = s[n - 1];
    if (!(e.upper >= exact - svd))
        fail_msg("upper %.17g below the exact s_min %.17g", e.upper, exact);
    bool certified = !isnan(e.value);
    if (certified && !(exact >= e.value - e.error - svd && exact <= e.value + svd))
        fail_msg("exact s_min %.17g outside [%.17g, %.17g] (T %d, d %d, heads %d)", exact,
                 e.value - e.error, e.value, T, d, b->heads);
    *products = e.products;
    free(sum);
    free(s);
    free(k);
    Linalg_free(la);
    KronFactors_free(f);
    SaWork_free(w);
    return certified;
}

/* One head over sizes, masks and seeds, with attention peaked enough (β = 8) that B₀ is
   near K: every certified interval holds the exact value.  19 of the 27 certify within
   KRON_STEPS_MAX (deterministic: the seeds are fixed); a test that certifies nothing would
   check nothing, so fewer than 18 fails. */
static void test_certified_s_min_holds_the_exact_one(void **state)
{
    (void)state;
    const Mask masks[] = {MASK_FULL, MASK_CAUSAL, MASK_WINDOW};
    const int sizes[][2] = {{6, 12}, {12, 24}, {16, 32}};
    int near = 0, certified = 0;
    for (int size = 0; size < 3; size++)
        for (int k = 0; k < 3; k++)
            for (uint64_t seed = 1; seed <= 3; seed++) {
                Blocks b;
                blocks_make(&b, sizes[size][0], sizes[size][1], 1, masks[k], 0.5, 8.0, seed);
                int products;
                double premise;
                bool ok = certified_holds_exact(&b, false, &products, &premise);
                print_message("T %d d %d mask %d seed %d: |E|/s_min(B0) %.2f, %s, %d products\n",
                              b.T, b.d, k, (int)seed, premise, ok ? "certified" : "not certified",
                              products);
                near += premise <= KRON_PREMISE_MAX;
                certified += ok;
                blocks_free(&b);
            }
    print_message("certified %d of 27, %d within KRON_PREMISE_MAX\n", certified, near);
    assert_int_equal(near, 27);
    assert_true(certified >= 18);
}

/* Several heads: both preconditioners hold the exact value where they certify; the products
   each took are printed (docs/model.md §8.2 records the measurement). */
static void test_certified_s_min_with_heads(void **state)
{
    (void)state;
    const Mask masks[] = {MASK_FULL, MASK_CAUSAL};
    int certified[2] = {0, 0}, used[2] = {0, 0};
    for (int k = 0; k < 2; k++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            for (int nearest = 0; nearest < 2; nearest++) {
                Blocks b;
                blocks_make(&b, 12, 24, 3, masks[k], 0.5, 8.0, seed + 20);
                int products;
                double premise;
                certified[nearest] += certified_holds_exact(&b, nearest, &products, &premise);
                used[nearest] += products;
                blocks_free(&b);
            }
    print_message("heads: shown head's A with W_VO: %d certified, %d products; nearest "
                  "Kronecker product: %d certified, %d products\n",
                  certified[0], used[0], certified[1], used[1]);
    assert_true(certified[1] > 0);
}

/* Lanczos is not run from the reach: LANCZOS_KAPPA_REACH where its steps do not span the
   space, and the rounding's resolvable κ (where that is lower, or where they do span it). A
   proved κ(K) ≥ s_max_low/s_min_above at the reach or beyond skips it (counted, the largest
   bound and the reach kept), one below it or none (NaN) does not. */
static void test_beyond_lanczos_only_at_its_reach(void **state)
{
    (void)state;
    assert_close(KronTally_lanczos_reach(1024, 240, 1e6), LANCZOS_KAPPA_REACH, 0.0);
    assert_close(KronTally_lanczos_reach(240, 240, 1e6), 1e6, 0.0);
    assert_close(KronTally_lanczos_reach(1024, 240, 1e3), 1e3, 0.0);
    KronTally tally = {0};
    double limit = LANCZOS_KAPPA_REACH;
    assert_false(KronTally_beyond_lanczos(&tally, 2.0, 2.0 / (0.5 * limit), limit));
    assert_false(KronTally_beyond_lanczos(&tally, 2.0, NAN, limit));
    assert_false(KronTally_beyond_lanczos(&tally, NAN, 1.0, limit));
    assert_true(KronTally_beyond_lanczos(&tally, 2.0, 2.0 / (4.0 * limit), limit));
    assert_true(KronTally_beyond_lanczos(&tally, 2.0, 2.0 / (2.0 * limit), limit));
    assert_int_equal(tally.lanczos, 3);
    assert_int_equal(tally.beyond, 2);
    assert_close(tally.kappa_at_least, 4.0 * limit, 1e-6 * limit);
    assert_close(tally.kappa_resolvable, limit, 1e-9 * limit);
    assert_close(tally.kappa_least, 2.0 * limit, 1e-6 * limit);
    Warnings w = {0};
    KronTally_warn(&tally, 4, &w);
    assert_int_equal(w.count, 2);
    /* The bounds' range, not the reach, is what they prove: the reach is named apart. */
    assert_non_null(strstr(w.text[0], "at 2 of the 8 layers of both networks the image of one "
                                      "vector proves kappa(K) at or beyond the reach"));
    assert_non_null(strstr(w.text[0], "1e+04 at the least): kappa(K) >= 2e+04 to 4e+04"));
    assert_non_null(strstr(w.text[1], "by Lanczos on K^T K at 3 of the 8 layers of both networks"));
}

/* A reach below 1 (the products' rounding certifies nothing) proves nothing about κ ≥ 1:
   those layers are counted apart and said to leave Lanczos nothing, never "proves kappa(K) >=
   0.76"; the layers with a reach of 1 or more keep their bound and their smallest reach. */
static void test_beyond_below_reach_one_proves_nothing(void **state)
{
    (void)state;
    KronTally tally = {0};
    assert_true(KronTally_beyond_lanczos(&tally, 2.0, 2.0 / 0.9, 0.76));
    assert_true(KronTally_beyond_lanczos(&tally, 2.0, 2.0 / 0.8, 0.5));
    Warnings w = {0};
    KronTally_warn(&tally, 1, &w);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.text[0], "at 2 of the 2 layers of both networks the products' "
                                      "rounding leaves Lanczos on K^T K nothing it could certify"));
    assert_null(strstr(w.text[0], "proves"));
    assert_true(KronTally_beyond_lanczos(&tally, 2.0, 2.0 / 500.0, 100.0));
    assert_int_equal(tally.beyond, 3);
    assert_int_equal(tally.unresolvable, 2);
    assert_close(tally.kappa_resolvable, 100.0, 0.0);
    assert_close(tally.kappa_at_least, 500.0, 1e-12 * 500.0);
    w = (Warnings){0};
    KronTally_warn(&tally, 2, &w);
    assert_int_equal(w.count, 2);
    assert_non_null(strstr(w.text[0], "at 1 of the 4 layers of both networks the image of one "
                                      "vector proves kappa(K) at or beyond"));
    assert_non_null(strstr(w.text[0], "100 at the least): kappa(K) >= 500 to 500"));
    assert_non_null(
        strstr(w.text[1], "at 2 of the 4 layers of both networks the products' rounding leaves"));
}

/* Every layer's way to s_min is counted once by a warning of its outcome: the Kronecker
   path's (certified, not certified, not run) and then, for the layers it left, Lanczos or a
   bound; a layer the Kronecker path ran without a certificate is said so, never unaccounted
   (skipless-cutting-skip at -L 10 --seed 11 had 2 of 20 so), and the layers it did not run
   at are not said to go to Lanczos (they may be beyond its reach). */
static void test_tally_warnings_count_every_route(void **state)
{
    (void)state;
    KronTally tally = {.certified = 8, .singular = 10, .uncertified = 2};
    for (int i = 0; i < 12; i++) /* the 12 left: 10 to Lanczos, 2 beyond its reach */
        KronTally_beyond_lanczos(&tally, 2.0, 2.0 / (i < 10 ? 10.0 : 1e6), LANCZOS_KAPPA_REACH);
    Warnings w = {0};
    KronTally_warn(&tally, 10, &w);
    assert_int_equal(w.count, 5);
    assert_non_null(strstr(w.text[1], "did not certify s_min(K) within its 60 steps at 2 of the "
                                      "20 layers of both networks"));
    assert_non_null(strstr(w.text[2], "singular to double precision at 10 of the 20 layers"));
    assert_null(strstr(w.text[2], "s_min(K) by Lanczos"));
    assert_non_null(strstr(w.text[3], "at 2 of the 20 layers of both networks the image"));
    assert_non_null(strstr(w.text[4], "by Lanczos on K^T K at 10 of the 20 layers"));
}

/* The reach against what Lanczos does on real blocks, their κ from the SVD of K.  At T = 8,
   d = 16 (n = 128) Lanczos's 240 steps span the whole space, so the reach is the rounding's
   resolvable κ (SaWork_kappa_resolvable), and where Lanczos does not certify it is the
   rounding term, not slow convergence: a block beyond the reach is skipped and Lanczos
   indeed certifies nothing there; one well below it goes to Lanczos, whose certified
   interval holds the exact s_min.  The cases cover both sides. */
static void test_beyond_lanczos_where_lanczos_cannot_certify(void **state)
{
    (void)state;
    const struct {
        Mask mask;
        double sigma_qk;
        uint64_t seed;
    } cases[] = {
        {MASK_CAUSAL, 4.0, 3}, {MASK_FULL, 1.0, 1}, {MASK_FULL, 0.25, 2}, {MASK_CAUSAL, 0.25, 4}};
    int T = 8, d = 16, n = T * d, beyond_seen = 0, certified_seen = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        Blocks b;
        blocks_make(&b, T, d, 1, cases[c].mask, cases[c].sigma_qk, 0.0, cases[c].seed);
        SaWork *w = SaWork_new();
        double *k = malloc(sizeof(double) * n * n), *s = malloc(sizeof(double) * n);
        assert_true(w && k && s);
        assert_int_equal(SaWork_prepare(w, &b.blocks[0]), 0);
        assert_int_equal(SaWork_jacobian(w, k), 0);
        singular_values(n, k, s);
        double kappa = s[0] / s[n - 1],
               reach = KronTally_lanczos_reach(n, 240, SaWork_kappa_resolvable(w, s[0]));
        print_message("kappa(K) %.3g, reach %.3g\n", kappa, reach);
        SingularValueEstimate lanczos;
        assert_int_equal(SaWork_extreme(w, false, 240, 1e-6, 2, s[0], &lanczos), 0);
        /* The tightest upper bound any estimate could give: the exact s_min. */
        KronTally tally = {0};
        bool beyond = KronTally_beyond_lanczos(&tally, s[0], s[n - 1], reach);
        assert_int_equal(beyond, kappa >= reach);
        if (beyond) {
            beyond_seen++;
            assert_true(isnan(lanczos.value));
        } else if (kappa < reach / 10) {
            certified_seen++;
            assert_false(isnan(lanczos.value));
            assert_true(s[n - 1] >= lanczos.value - lanczos.error - 4.0 * n * DBL_EPSILON * s[0]);
            assert_true(s[n - 1] <= lanczos.value + lanczos.error + 4.0 * n * DBL_EPSILON * s[0]);
        }
        free(s);
        free(k);
        SaWork_free(w);
        blocks_free(&b);
    }
    assert_true(beyond_seen > 0);
    assert_true(certified_seen > 0);
}

/* The beyond layers' warning claims one reach for all of them: the smallest, whichever layer
   came first; a layer within reach counts for Lanczos and leaves it. */
static void test_beyond_lanczos_keeps_the_smallest_reach(void **state)
{
    (void)state;
    KronTally tally = {0};
    assert_true(KronTally_beyond_lanczos(&tally, 1e6, 1.0, 1e4));
    assert_true(KronTally_beyond_lanczos(&tally, 1e6, 1.0, 1e3));
    assert_true(KronTally_beyond_lanczos(&tally, 1e6, 1.0, 1e5));
    assert_false(KronTally_beyond_lanczos(&tally, 10.0, 1.0, 1e2));
    assert_int_equal(tally.beyond, 3);
    assert_int_equal(tally.lanczos, 1);
    assert_true(tally.kappa_resolvable == 1e3);
    assert_true(tally.kappa_at_least == 1e6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_beyond_lanczos_keeps_the_smallest_reach),
        cmocka_unit_test(test_singular_values_are_the_products_of_the_factors),
        cmocka_unit_test(test_inverses_undo_the_products),
        cmocka_unit_test(test_certified_s_min_holds_the_exact_one),
        cmocka_unit_test(test_certified_s_min_with_heads),
        cmocka_unit_test(test_beyond_lanczos_only_at_its_reach),
        cmocka_unit_test(test_beyond_below_reach_one_proves_nothing),
        cmocka_unit_test(test_tally_warnings_count_every_route),
        cmocka_unit_test(test_beyond_lanczos_where_lanczos_cannot_certify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
