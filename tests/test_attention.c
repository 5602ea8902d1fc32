/* docs/model.md §4, invariants 1–6, on the attention builders, masks, gap modes and eigen-solvers.
 */
#include "testing.h"

#include "attnscope/attention.h"
#include "attnscope/linalg.h"
#include "attnscope/random.h"
#include "attnscope/spectra.h"

#include <stdlib.h>
#include <string.h>

static const Attention STOCHASTIC[] = {ATTENTION_SOFTMAX, ATTENTION_MARKOV, ATTENTION_UNIFORM,
                                       ATTENTION_IDENTITY};
typedef struct {
    Mask mask;
    int window;
} MaskCase;
static const MaskCase MASKS[] = {{MASK_FULL, 1},          {MASK_CAUSAL, 1},
                                 {MASK_WINDOW, 1},        {MASK_WINDOW, 3},
                                 {MASK_WINDOW_CAUSAL, 1}, {MASK_WINDOW_CAUSAL, 4}};
enum { N_STOCHASTIC = 4, N_MASKS = 6, T_SMALL = 24 };

static Linalg *la;

static int setup(void **state)
{
    (void)state;
    la = Linalg_new();
    return la ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    Linalg_free(la);
    return 0;
}

/* Gaussian logits with std `scale` (for markov that is σ_qk²·g, exactly what the model uses). */
static double *random_logits(int T, uint64_t seed, double scale)
{
    double *s = malloc(sizeof(double) * T * T);
    RandomStream *r = RandomStream_new();
    RandomStream_gaussian(r, seed, 1, ROLE_MARKOV, scale, s, (size_t)T * T);
    RandomStream_free(r);
    return s;
}

static double *build(Attention kind, MaskCase m, int T, uint64_t seed, double scale)
{
    double *logits = random_logits(T, seed, scale);
    double *a = malloc(sizeof(double) * T * T);
    Attention_build(kind, m.mask, m.window, T, logits, -INFINITY, a);
    free(logits);
    return a;
}

static bool allowed(MaskCase m, int T, int i, int j)
{
    int first, last;
    Mask_row_range(m.mask, m.window, T, i, &first, &last);
    return j >= first && j <= last;
}

static void eigenvalues_of(int T, const double *a, Complex *out, bool *exact)
{
    double *copy = malloc(sizeof(double) * T * T), *re_im = malloc(sizeof(double) * 2 * T);
    memcpy(copy, a, sizeof(double) * T * T);
    assert_int_equal(Spectra_eigenvalues(T, copy, la, re_im, out, exact), 0);
    free(copy);
    free(re_im);
}

/* Largest distance when each eigenvalue of x is matched to a distinct nearest one of y. */
static double multiset_distance(int n, const Complex *x, const Complex *y)
{
    bool *used = calloc(n, sizeof(bool));
    double worst = 0;
    for (int i = 0; i < n; i++) {
        int best = -1;
        double best_d = INFINITY;
        for (int j = 0; j < n; j++) {
            double dist = hypot(x[i].re - y[j].re, x[i].im - y[j].im);
            if (!used[j] && dist < best_d) {
                best_d = dist;
                best = j;
            }
        }
        used[best] = true;
        worst = fmax(worst, best_d);
    }
    free(used);
    return worst;
}

/* 1: rows sum to 1, entries >= 0, masked entries exactly 0 — every mask, every kind. */
static void test_rows_stochastic_and_masked(void **state)
{
    (void)state;
    int T = T_SMALL;
    for (int k = 0; k < N_STOCHASTIC; k++)
        for (int mi = 0; mi < N_MASKS; mi++)
            for (uint64_t seed = 1; seed <= 3; seed++) {
                double *a = build(STOCHASTIC[k], MASKS[mi], T, seed, 2.0);
                for (int i = 0; i < T; i++) {
                    double sum = 0;
                    for (int j = 0; j < T; j++) {
                        double v = a[i * T + j];
                        if (!allowed(MASKS[mi], T, i, j))
                            assert_true(v == 0.0);
                        assert_true(v >= 0.0);
                        sum += v;
                    }
                    assert_close(sum, 1.0, 1e-12);
                }
                free(a);
            }
}

/* 2: an eigenvalue within 1e-9 of 1 and all |λ| <= 1 + 1e-9. */
static void test_perron_eigenvalue(void **state)
{
    (void)state;
    int T = T_SMALL;
    Complex ev[T_SMALL];
    for (int k = 0; k < N_STOCHASTIC; k++)
        for (int mi = 0; mi < N_MASKS; mi++) {
            double *a = build(STOCHASTIC[k], MASKS[mi], T, 7, 1.5);
            bool exact;
            eigenvalues_of(T, a, ev, &exact);
            double nearest = INFINITY;
            for (int i = 0; i < T; i++) {
                nearest = fmin(nearest, hypot(ev[i].re - 1.0, ev[i].im));
                assert_true(hypot(ev[i].re, ev[i].im) <= 1.0 + 1e-9);
            }
            assert_true(nearest <= 1e-9);
            assert_close(hypot(ev[0].re, ev[0].im), 1.0, 1e-9); /* sorted by modulus */
            free(a);
        }
}

/* 3: eig(A − (1/T)11ᵀ) = eig(A) with one 1 replaced by 0 (full and window masks). */
static void test_brauer(void **state)
{
    (void)state;
    int T = T_SMALL;
    Complex direct[T_SMALL], brauer[T_SMALL];
    const MaskCase cases[] = {{MASK_FULL, 1}, {MASK_WINDOW, 1}, {MASK_WINDOW, 5}};
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 2; k++) { /* softmax, markov */
            double *a = build(STOCHASTIC[k], cases[c], T, 11 + c, 1.0);
            bool exact;
            eigenvalues_of(T, a, brauer, &exact);
            Spectra_brauer_deflate(T, brauer);
            for (int i = 0; i < T * T; i++)
                a[i] -= 1.0 / T;
            eigenvalues_of(T, a, direct, &exact);
            assert_true(multiset_distance(T, direct, brauer) <= 1e-9);
            free(a);
        }
}

/* 4: ‖A‖_F² − ‖A − (1/T)11ᵀ‖_F² = 1 and s_min(A − (1/T)11ᵀ) ≈ 0, full mask. */
static void test_frobenius_identity(void **state)
{
    (void)state;
    int T = T_SMALL;
    double s[T_SMALL];
    for (int k = 0; k < N_STOCHASTIC; k++) {
        double *a = build(STOCHASTIC[k], MASKS[0], T, 5, 1.7);
        double before = 0, after = 0;
        for (int i = 0; i < T * T; i++) {
            before += a[i] * a[i];
            a[i] -= 1.0 / T;
            after += a[i] * a[i];
        }
        assert_close(before - after, 1.0, 1e-12);
        assert_int_equal(Linalg_singular_values(la, T, T, a, s), 0);
        assert_true(s[T - 1] <= 1e-13);
        free(a);
    }
}

/* 5: causal A is lower triangular with A11 = 1; the eigenvalues are diag(A), all real. */
static void test_causal_diagonal(void **state)
{
    (void)state;
    int T = T_SMALL;
    Complex ev[T_SMALL];
    const MaskCase causal[] = {{MASK_CAUSAL, 1}, {MASK_WINDOW_CAUSAL, 2}};
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < N_STOCHASTIC; k++) {
            double *a = build(STOCHASTIC[k], causal[c], T, 3, 2.0);
            assert_true(Attention_is_lower_triangular(T, a));
            assert_true(a[0] == 1.0);
            bool exact;
            eigenvalues_of(T, a, ev, &exact);
            assert_true(exact);
            Complex diag[T_SMALL];
            for (int i = 0; i < T; i++)
                diag[i] = (Complex){a[i * T + i], 0};
            Spectra_sort(T, diag);
            for (int i = 0; i < T; i++) {
                assert_true(ev[i].im == 0.0);
                assert_true(ev[i].re == diag[i].re);
            }
            free(a);
        }
}

/* 6: σ_qk → 0 is uniform attention: full {1, 0, …}, causal {1, 1/2, …, 1/T},
   window-causal w {1, 1/2, …, 1/w, 1/(w+1) …}. */
static void test_vanishing_sigma(void **state)
{
    (void)state;
    int T = T_SMALL;
    Complex ev[T_SMALL];
    bool exact;
    double *a = build(ATTENTION_SOFTMAX, MASKS[0], T, 2, 1e-12);
    eigenvalues_of(T, a, ev, &exact);
    assert_close(ev[0].re, 1.0, 1e-9);
    for (int i = 1; i < T; i++)
        assert_true(hypot(ev[i].re, ev[i].im) <= 1e-9);
    free(a);

    a = build(ATTENTION_SOFTMAX, MASKS[1], T, 2, 1e-12);
    eigenvalues_of(T, a, ev, &exact);
    for (int i = 0; i < T; i++)
        assert_close(ev[i].re, 1.0 / (i + 1), 1e-9);
    free(a);

    int w = 4;
    a = build(ATTENTION_SOFTMAX, (MaskCase){MASK_WINDOW_CAUSAL, w}, T, 2, 1e-12);
    eigenvalues_of(T, a, ev, &exact);
    for (int i = 0; i < T; i++)
        assert_close(ev[i].re, i <= w ? 1.0 / (i + 1) : 1.0 / (w + 1), 1e-9);
    free(a);
}

static double *apply_gap(Gap mode, Attention kind, MaskCase m, int T, const double *a,
                         GapOutcome *outcome, Warnings *warnings)
{
    double *b = malloc(sizeof(double) * T * T);
    double *scratch = malloc(sizeof(double) * Gap_scratch_size(T));
    memcpy(b, a, sizeof(double) * T * T);
    assert_int_equal(Gap_apply(mode, kind, false, kind == ATTENTION_UNIFORM, m.mask, m.window, T, b,
                               la, scratch, outcome, warnings),
                     0);
    free(scratch);
    return b;
}

/* center keeps the mask (masked entries exactly 0) and leaves rows summing to 0. */
static void test_gap_center(void **state)
{
    (void)state;
    int T = T_SMALL;
    const Attention kinds[] = {ATTENTION_SOFTMAX, ATTENTION_RELU, ATTENTION_SIGMOID,
                               ATTENTION_LINEAR};
    for (int k = 0; k < 4; k++)
        for (int mi = 0; mi < N_MASKS; mi++) {
            double *a = build(kinds[k], MASKS[mi], T, 9, 1.0);
            GapOutcome out;
            Warnings warnings = {0};
            double *b = apply_gap(GAP_CENTER, kinds[k], MASKS[mi], T, a, &out, &warnings);
            assert_int_equal(out.applied, GAP_CENTER);
            assert_int_equal(warnings.count, 0);
            for (int i = 0; i < T; i++) {
                double sum = 0;
                for (int j = 0; j < T; j++) {
                    if (!allowed(MASKS[mi], T, i, j))
                        assert_true(b[i * T + j] == 0.0);
                    sum += b[i * T + j];
                }
                assert_close(sum, 0.0, 1e-12);
            }
            free(a);
            free(b);
        }
}

/* The literal uniform subtraction breaks masks and must say so. */
static void test_gap_uniform_warns_on_masks(void **state)
{
    (void)state;
    int T = T_SMALL;
    double *a = build(ATTENTION_SOFTMAX, MASKS[1], T, 4, 1.0);
    GapOutcome out;
    Warnings warnings = {0};
    double *b = apply_gap(GAP_UNIFORM, ATTENTION_SOFTMAX, MASKS[1], T, a, &out, &warnings);
    assert_int_equal(warnings.count, 1);
    assert_non_null(strstr(warnings.text[0], "causal"));
    assert_close(b[1], -1.0 / T, 0); /* token 1 now "sees" token 2 */
    free(a);
    free(b);
}

/* deflate: A − 1πᵀ with π the left Perron vector (checked by power iteration); causal: π = e1
   exactly; kinds that are not row-stochastic fall back to center with a warning. */
static void test_gap_deflate(void **state)
{
    (void)state;
    int T = T_SMALL;
    double *a = build(ATTENTION_SOFTMAX, MASKS[2], T, 8, 1.0);
    double pi[T_SMALL], next[T_SMALL];
    for (int i = 0; i < T; i++)
        pi[i] = 1.0 / T;
    for (int it = 0; it < 20000; it++) { /* πᵀ ← πᵀA (window masks mix slowly) */
        for (int j = 0; j < T; j++) {
            next[j] = 0;
            for (int i = 0; i < T; i++)
                next[j] += pi[i] * a[i * T + j];
        }
        memcpy(pi, next, sizeof pi);
    }
    GapOutcome out;
    Warnings warnings = {0};
    double *b = apply_gap(GAP_DEFLATE, ATTENTION_SOFTMAX, MASKS[2], T, a, &out, &warnings);
    assert_int_equal(out.applied, GAP_DEFLATE);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            assert_close(b[i * T + j], a[i * T + j] - pi[j], 1e-10);
    free(a);
    free(b);

    a = build(ATTENTION_MARKOV, MASKS[1], T, 8, 1.0);
    b = apply_gap(GAP_DEFLATE, ATTENTION_MARKOV, MASKS[1], T, a, &out, &warnings);
    assert_int_equal(out.applied, GAP_DEFLATE);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            assert_true(b[i * T + j] == a[i * T + j] - (j == 0 ? 1.0 : 0.0));
    free(a);
    free(b);

    a = build(ATTENTION_RELU, MASKS[0], T, 8, 1.0);
    b = apply_gap(GAP_DEFLATE, ATTENTION_RELU, MASKS[0], T, a, &out, &warnings);
    assert_int_equal(out.applied, GAP_CENTER);
    assert_int_equal(warnings.count, 1);
    assert_non_null(strstr(warnings.text[0], "fell back to center"));
    free(a);
    free(b);

    /* identity: eigenvalue 1 has multiplicity T, so π is not unique. */
    a = build(ATTENTION_IDENTITY, MASKS[0], T, 8, 1.0);
    b = apply_gap(GAP_DEFLATE, ATTENTION_IDENTITY, MASKS[0], T, a, &out, &warnings);
    assert_int_equal(out.applied, GAP_CENTER);
    free(a);
    free(b);
}

/* outliers: r = argmax (s_i − s_{i+1}); the result's singular values are s_{r+1}, … and r
   zeros. */
static void test_gap_outliers(void **state)
{
    (void)state;
    int T = T_SMALL;
    double s[T_SMALL], s_after[T_SMALL];
    const Attention kinds[] = {ATTENTION_SOFTMAX, ATTENTION_RELU, ATTENTION_LINEAR};
    for (int k = 0; k < 3; k++) {
        double *a = build(kinds[k], MASKS[0], T, 21, 1.0);
        double *copy = malloc(sizeof(double) * T * T);
        memcpy(copy, a, sizeof(double) * T * T);
        assert_int_equal(Linalg_singular_values(la, T, T, copy, s), 0);
        int r = 1;
        for (int i = 1; i < T - 1; i++)
            if (s[i] - s[i + 1] > s[r - 1] - s[r])
                r = i + 1;
        GapOutcome out;
        Warnings warnings = {0};
        double *b = apply_gap(GAP_OUTLIERS, kinds[k], MASKS[0], T, a, &out, &warnings);
        assert_int_equal(out.outliers_removed, r);
        assert_int_equal(Linalg_singular_values(la, T, T, b, s_after), 0);
        for (int i = 0; i < T - r; i++)
            assert_close(s_after[i], s[i + r], 1e-12);
        for (int i = T - r; i < T; i++)
            assert_true(s_after[i] <= 1e-12);
        free(a);
        free(b);
        free(copy);
    }
}

/* Uniform attention over every key is U = (1/T)11ᵀ: its outlier (r = 1) and deflate's 1πᵀ are
   U itself, so both leave exactly 0 (rounding would leave ~1e-16), as center does; under a
   mask with rows of different lengths U has full rank and neither is 0.  Identity attention
   has no outlier: outliers removes nothing from I and says so. */
static void test_gap_leaves_zero_where_exact(void **state)
{
    (void)state;
    int T = T_SMALL;
    const MaskCase every_key[] = {{MASK_FULL, 1}, {MASK_WINDOW, T - 1}};
    const Gap modes[] = {GAP_OUTLIERS, GAP_DEFLATE};
    for (int m = 0; m < 2; m++)
        for (int g = 0; g < 2; g++) {
            assert_true(Gap_leaves_zero(modes[g], true, every_key[m].mask, every_key[m].window, T));
            double *a = build(ATTENTION_UNIFORM, every_key[m], T, 3, 1.0);
            GapOutcome out;
            Warnings warnings = {0};
            double *b = apply_gap(modes[g], ATTENTION_UNIFORM, every_key[m], T, a, &out, &warnings);
            for (int k = 0; k < T * T; k++)
                assert_true(b[k] == 0.0);
            assert_int_equal(out.applied, modes[g]);
            assert_int_equal(out.outliers_removed, modes[g] == GAP_OUTLIERS ? 1 : 0);
            assert_int_equal(warnings.count, 0);
            free(a);
            free(b);
        }
    assert_false(Gap_leaves_zero(GAP_OUTLIERS, true, MASK_CAUSAL, 1, T));
    assert_false(Gap_leaves_zero(GAP_DEFLATE, true, MASK_WINDOW, T - 2, T));
    assert_false(Gap_leaves_zero(GAP_OUTLIERS, false, MASK_FULL, 1, T));
    assert_false(Gap_leaves_zero(GAP_OFF, true, MASK_FULL, 1, T));

    double *a = build(ATTENTION_IDENTITY, MASKS[0], T, 3, 1.0);
    GapOutcome out;
    Warnings warnings = {0};
    double *b = apply_gap(GAP_OUTLIERS, ATTENTION_IDENTITY, MASKS[0], T, a, &out, &warnings);
    assert_memory_equal(a, b, sizeof(double) * T * T);
    assert_int_equal(out.outliers_removed, 0);
    assert_int_equal(warnings.count, 1);
    assert_non_null(strstr(warnings.text[0], "identity attention has no outlier"));
    free(a);
    free(b);
}

/* Gap_annihilates_equal_tokens against what Gap_apply does (docs/model.md §2, "Round-off
   from a layer on"): A built from equal logits (the attention equal tokens get), its gap
   removed, and M·1 computed loop by loop: within rounding of 0 exactly where the predicate
   says M sends equal tokens to 0, and five decades above it everywhere else (every kind, mask,
   mode). */
static void test_gap_annihilates_equal_tokens(void **state)
{
    (void)state;
    int T = T_SMALL;
    const Attention kinds[] = {ATTENTION_SOFTMAX, ATTENTION_MARKOV,  ATTENTION_RELU,
                               ATTENTION_SIGMOID, ATTENTION_UNIFORM, ATTENTION_IDENTITY};
    const Gap modes[] = {GAP_OFF, GAP_CENTER, GAP_UNIFORM, GAP_DEFLATE, GAP_OUTLIERS};
    double *logits = malloc(sizeof(double) * T * T);
    double *a = malloc(sizeof(double) * T * T);
    for (int k = 0; k < T * T; k++)
        logits[k] = 0.5;
    int annihilating = 0, kept = 0;
    for (size_t kind = 0; kind < sizeof kinds / sizeof kinds[0]; kind++)
        for (int m = 0; m < N_MASKS; m++)
            for (size_t g = 0; g < sizeof modes / sizeof modes[0]; g++) {
                Attention_build(kinds[kind], MASKS[m].mask, MASKS[m].window, T, logits, -INFINITY,
                                a);
                GapOutcome out;
                Warnings warnings = {0};
                double *b = apply_gap(modes[g], kinds[kind], MASKS[m], T, a, &out, &warnings);
                double largest = 0; /* max_i |(M·1)_i| */
                for (int i = 0; i < T; i++) {
                    double row = 0;
                    for (int j = 0; j < T; j++)
                        row += b[(size_t)i * T + j]; /* row-major */
                    largest = fmax(largest, fabs(row));
                }
                bool said = Gap_annihilates_equal_tokens(modes[g], kinds[kind], false,
                                                         MASKS[m].mask, MASKS[m].window, T);
                if (said)
                    assert_true(largest <= 1e-13);
                else /* 5e-5 the least: relu's outliers under a one-key causal window */
                    assert_true(largest >= 1e-8);
                annihilating += said;
                kept += !said;
                free(b);
            }
    assert_true(annihilating > 0 && kept > 0);
    free(logits);
    free(a);
}

/* The textbook softmax of one row over its keys [first, last], zero elsewhere. */
static void reference_softmax_row(int T, const double *s, int first, int last, double *row)
{
    double max = -INFINITY, sum = 0;
    for (int j = first; j <= last; j++)
        max = fmax(max, s[j]);
    for (int j = 0; j < T; j++) {
        row[j] = j >= first && j <= last ? exp(s[j] - max) : 0.0;
        sum += row[j];
    }
    for (int j = first; j <= last; j++)
        row[j] *= 1.0 / sum;
}

/* Attention_build writes every entry (a buffer of NaN before it), and a softmax row whose
   logits span thousands (most of its exp(s − max) underflow, some to subnormals) is the
   textbook one bit for bit; the identity is the identity under every mask. */
static void test_build_writes_every_entry(void **state)
{
    (void)state;
    int T = 40;
    const Attention kinds[] = {ATTENTION_SOFTMAX, ATTENTION_MARKOV, ATTENTION_RELU,
                               ATTENTION_SIGMOID, ATTENTION_LINEAR, ATTENTION_UNIFORM,
                               ATTENTION_IDENTITY};
    double *expected = malloc(sizeof(double) * T * T), *a = malloc(sizeof(double) * T * T);
    assert_true(expected && a);
    for (int mi = 0; mi < N_MASKS; mi++)
        for (int k = 0; k < 7; k++) {
            double *logits = random_logits(T, 11 + (uint64_t)mi, 400.0);
            for (int i = 0; i < T * T; i++)
                a[i] = NAN;
            Attention_build(kinds[k], MASKS[mi].mask, MASKS[mi].window, T, logits, -INFINITY, a);
            for (int i = 0; i < T; i++) {
                int first, last;
                Mask_row_range(MASKS[mi].mask, MASKS[mi].window, T, i, &first, &last);
                double *row = expected + (size_t)i * T;
                if (kinds[k] == ATTENTION_SOFTMAX || kinds[k] == ATTENTION_MARKOV)
                    reference_softmax_row(T, logits + (size_t)i * T, first, last, row);
                for (int j = 0; j < T; j++) {
                    double v = a[(size_t)i * T + j];
                    assert_false(isnan(v));
                    if (j < first || j > last)
                        assert_true(v == 0.0);
                    if (kinds[k] == ATTENTION_IDENTITY)
                        assert_true(v == (i == j ? 1.0 : 0.0));
                }
            }
            if (kinds[k] == ATTENTION_SOFTMAX || kinds[k] == ATTENTION_MARKOV)
                assert_memory_equal(a, expected, sizeof(double) * T * T);
            free(logits);
        }
    free(expected);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_stochastic_and_masked),
        cmocka_unit_test(test_build_writes_every_entry),
        cmocka_unit_test(test_perron_eigenvalue),
        cmocka_unit_test(test_brauer),
        cmocka_unit_test(test_frobenius_identity),
        cmocka_unit_test(test_causal_diagonal),
        cmocka_unit_test(test_vanishing_sigma),
        cmocka_unit_test(test_gap_center),
        cmocka_unit_test(test_gap_uniform_warns_on_masks),
        cmocka_unit_test(test_gap_deflate),
        cmocka_unit_test(test_gap_outliers),
        cmocka_unit_test(test_gap_leaves_zero_where_exact),
        cmocka_unit_test(test_gap_annihilates_equal_tokens),
    };
    return cmocka_run_group_tests_name("attention", tests, setup, teardown);
}
