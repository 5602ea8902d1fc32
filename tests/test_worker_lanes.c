/* The two lanes of a layer on two threads (Pair_run) give exactly what one thread gives, and
 * so do the shown layer's eigenvalues and singular values, computed in the two lanes at once.
 * Named test_worker_* so that it also runs under ThreadSanitizer. */
#include "testing.h"

#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "pair.h"

#include <string.h>

static void compare(const Config *c)
{
    char err[256];
    Workspace *w = Workspace_new();
    Result *one = Result_new(), *two = Result_new();
    Progress lanes = {.run_pair = Pair_run};
    assert_int_equal(Model_run(c, w, one, NULL, err, sizeof err), 0);
    assert_int_equal(Model_run(c, w, two, &lanes, err, sizeof err), 0);
    size_t n = sizeof(double) * (size_t)(c->depth + 1);
    assert_memory_equal(one->network.stable_rank, two->network.stable_rank, n);
    assert_memory_equal(one->counterpart.stable_rank_minus_one,
                        two->counterpart.stable_rank_minus_one, n);
    assert_memory_equal(one->network.gradient_norm, two->network.gradient_norm, n);
    assert_memory_equal(one->counterpart_band.mean, two->counterpart_band.mean, n);
    assert_true(one->spectra_ready && two->spectra_ready);
    assert_memory_equal(one->eigenvalues, two->eigenvalues, sizeof(Complex) * c->tokens);
    assert_memory_equal(one->singular_values, two->singular_values, sizeof(double) * c->tokens);
    assert_int_equal(one->eigenvalues_exact, two->eigenvalues_exact);
    assert_int_equal(one->warnings.count, two->warnings.count);
    for (int i = 0; i < one->warnings.count; i++)
        assert_string_equal(one->warnings.text[i], two->warnings.text[i]);
    Result_free(one);
    Result_free(two);
    Workspace_free(w);
}

static void test_two_threads_equal_one(void **state)
{
    (void)state;
    Linalg_set_blas_threads(1); /* as the callers of Pair_run do */
    Config c = Config_default();
    c.tokens = 48;
    c.width = 64;
    c.depth = 4;
    c.seeds = 2;
    compare(&c);
    c.attention = ATTENTION_MARKOV;
    c.gap = GAP_DEFLATE;
    c.mask = MASK_CAUSAL;
    compare(&c);
    c.mask = MASK_FULL; /* Brauer's spectrum next to dgesdd */
    c.layer = 3;
    compare(&c);
    c.gap = GAP_CENTER; /* dgeev of a copy next to dgesdd of the original */
    c.attention = ATTENTION_RELU;
    compare(&c);
    c.layer = 1;
    c.attention = ATTENTION_SOFTMAX; /* warnings from both lanes, in a fixed order */
    c.gap = GAP_UNIFORM;
    c.depth = 40;
    c.tokens = c.width = 16;
    c.sigma_qk = 3;
    compare(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_threads_equal_one),
    };
    return cmocka_run_group_tests_name("lanes", tests, NULL, NULL);
}
