/* The outlier and the readouts say only what is true (docs/model.md §2): an outlier is marked
 * only when one eigenvalue stands apart from the bulk; the spectral gap and the count against
 * 0.5 exist only for a row-stochastic matrix; a spectral gap at round-off reads 0. */
#include "testing.h"

#include "attnscope/model.h"
#include "attnscope/spectra.h"
#include "model_fixture.h"

static Result *run_with_spectra(Config c)
{
    Result *r = run(&c);
    assert_true(r->spectra_ready);
    return r;
}

/* T = d = 64, two layers, of the kind, mask and gap mode given. */
static Config square(Attention kind, Mask mask, Gap gap)
{
    Config c = Config_default();
    c.tokens = c.width = 64;
    c.depth = 2;
    c.attention = kind;
    c.mask = mask;
    c.gap = gap;
    return c;
}

static void test_criterion(void **state)
{
    (void)state;
    Complex apart[3] = {{1, 0}, {0.4, 0.2}, {0.1, 0}};
    assert_int_equal(Spectra_outlier(3, apart), 0);
    /* |λ1| = 2|λ2| exactly is apart; just below is not. */
    Complex edge[2] = {{1, 0}, {0.5, 0}};
    assert_int_equal(Spectra_outlier(2, edge), 0);
    Complex near[2] = {{1, 0}, {0, 0.5000001}};
    assert_int_equal(Spectra_outlier(2, near), -1);
    Complex zero[2] = {{0, 0}, {0, 0}};
    assert_int_equal(Spectra_outlier(2, zero), -1);
}

/* Which kinds, masks and gap modes have an outlier, over several seeds. */
static void test_outlier_where_one_stands_apart(void **state)
{
    (void)state;
    const struct {
        Attention kind;
        Mask mask;
        Gap gap;
        int outlier;
    } cases[] = {
        {ATTENTION_SOFTMAX, MASK_FULL, GAP_OFF, 0},
        {ATTENTION_MARKOV, MASK_FULL, GAP_OFF, 0},
        {ATTENTION_RELU, MASK_FULL, GAP_OFF, 0},
        {ATTENTION_SIGMOID, MASK_FULL, GAP_OFF, 0},
        {ATTENTION_UNIFORM, MASK_FULL, GAP_OFF, 0},
        /* The window mask has no spectral gap: 1 − |λ2| ≈ π²w(w+1)/(6T²) at σ_qk → 0. */
        {ATTENTION_SOFTMAX, MASK_WINDOW, GAP_OFF, -1},
        {ATTENTION_LINEAR, MASK_FULL, GAP_OFF, -1},
        {ATTENTION_IDENTITY, MASK_FULL, GAP_OFF, -1},
        /* Removed: the 1 went to 0, in the bulk. */
        {ATTENTION_SOFTMAX, MASK_FULL, GAP_CENTER, -1},
        {ATTENTION_SOFTMAX, MASK_FULL, GAP_UNIFORM, -1},
        {ATTENTION_SOFTMAX, MASK_FULL, GAP_DEFLATE, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            Config c = square(cases[i].kind, cases[i].mask, cases[i].gap);
            c.seed = seed;
            Result *r = run_with_spectra(c);
            if (r->outlier != cases[i].outlier)
                fail_msg("%s/%s/%s seed %llu: outlier %d, expected %d (|λ1| %g, |λ2| %g)",
                         ATTENTION_NAMES.names[c.attention], MASK_NAMES.names[c.mask],
                         GAP_NAMES.names[c.gap], (unsigned long long)seed, r->outlier,
                         cases[i].outlier, hypot(r->eigenvalues[0].re, r->eigenvalues[0].im),
                         hypot(r->eigenvalues[1].re, r->eigenvalues[1].im));
            Result_free(r);
        }
}

/* relu, linear and a removed gap are not row-stochastic: no spectral gap, no count. */
static void test_undefined_readouts(void **state)
{
    (void)state;
    Config cases[] = {square(ATTENTION_RELU, MASK_FULL, GAP_OFF),
                      square(ATTENTION_LINEAR, MASK_FULL, GAP_OFF),
                      square(ATTENTION_SIGMOID, MASK_CAUSAL, GAP_OFF),
                      square(ATTENTION_SOFTMAX, MASK_FULL, GAP_CENTER)};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Result *r = run_with_spectra(cases[i]);
        assert_true(isnan(r->readouts.one_minus_abs_lambda2));
        assert_true(isnan(r->readouts.count_abs_lambda_above_half));
        assert_true(isfinite(r->readouts.s1_over_s2));
        Result_free(r);
    }
    Result *r = run_with_spectra(square(ATTENTION_SOFTMAX, MASK_FULL, GAP_OFF));
    assert_true(r->readouts.one_minus_abs_lambda2 > 0.5);
    assert_true(r->readouts.count_abs_lambda_above_half >= 1);
    Result_free(r);
}

/* The default network's third layer is close to a permutation (its logits have grown): |λ2|
   is 1 up to dgeev's round-off, which made 1 − |λ2| read −4e-15. */
static void test_roundoff_reads_zero(void **state)
{
    (void)state;
    Config c = Config_default();
    c.layer = 3;
    Result *r = run_with_spectra(c);
    double modulus = hypot(r->eigenvalues[1].re, r->eigenvalues[1].im);
    /* The precondition: λ2 is within round-off of the unit circle, but not exactly on it. */
    assert_true(fabs(1 - modulus) < READOUT_ROUNDOFF);
    assert_true(1 - modulus != 0);
    assert_true(r->readouts.one_minus_abs_lambda2 == 0.0);
    assert_int_equal(r->outlier, -1);
    Result_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_criterion),
        cmocka_unit_test(test_outlier_where_one_stands_apart),
        cmocka_unit_test(test_undefined_readouts),
        cmocka_unit_test(test_roundoff_reads_zero),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
