/* The cost model's rates from the environment (ATTNSCOPE_GFLOPS) and re-rated by a finished
   job's pace (rates.h), against the rule written out here: half way in ratio, ×4 at most. */
#include "testing.h"

#include "rates.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_pinned(void **state)
{
    (void)state;
    char err[128];
    setenv(RATES_ENVIRONMENT, "5", 1);
    assert_int_equal(Rates_check_environment(err, sizeof err), 0);
    assert_true(Rates_pinned());
    CostRates r = Rates_measure(), ref = Cost_reference_rates();
    assert_true(r.flops_per_second == 5e9);
    assert_true(fabs(r.scalar_speed - ref.scalar_speed * 5e9 / ref.flops_per_second) <= 1e-15);
    /* Pinned rates stay as they are, whatever a job measured. */
    CostRates after = Rates_rerated(r, 10, 40);
    assert_true(after.flops_per_second == r.flops_per_second);
    const char *bad[] = {"abc", "0", "-1", "2x", "inf"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(RATES_ENVIRONMENT, bad[i], 1);
        assert_int_equal(Rates_check_environment(err, sizeof err), -1);
        assert_non_null(strstr(err, RATES_ENVIRONMENT));
        assert_false(Rates_pinned());
    }
    unsetenv(RATES_ENVIRONMENT);
    assert_int_equal(Rates_check_environment(err, sizeof err), 0);
}

static void test_rerated(void **state)
{
    (void)state;
    unsetenv(RATES_ENVIRONMENT);
    CostRates r = {.flops_per_second = 1e10, .scalar_speed = 0.5};
    /* Four times slower than estimated: half way in ratio is half the rate. */
    CostRates slower = Rates_rerated(r, 2, 8);
    assert_true(fabs(slower.flops_per_second - 0.5e10) <= 1e-6);
    assert_true(fabs(slower.scalar_speed - 0.25) <= 1e-15);
    /* Faster: up, by the square root too. */
    CostRates faster = Rates_rerated(r, 9, 1);
    assert_true(fabs(faster.flops_per_second - 3e10) <= 1e-5);
    /* At most ×4 either way. */
    assert_true(fabs(Rates_rerated(r, 1, 1000).flops_per_second - 0.25e10) <= 1e-6);
    assert_true(fabs(Rates_rerated(r, 1000, 1).flops_per_second - 4e10) <= 1e-5);
    /* A job too short to say anything, or unknown, leaves them. */
    assert_true(Rates_rerated(r, RATES_MEASURABLE_SECONDS / 2, 1).flops_per_second == 1e10);
    assert_true(Rates_rerated(r, NAN, 1).flops_per_second == 1e10);
    assert_true(Rates_rerated(r, 1, 0).flops_per_second == 1e10);
}

/* The margin between an estimate and the bound that accepts it at the next start: ×3 when the
   next start measures the rates anew, none when they are pinned; the bound a refusal suggests
   keeps it. */
static void test_margin(void **state)
{
    (void)state;
    char text[256];
    unsetenv(RATES_ENVIRONMENT);
    assert_int_equal(Rates_margin(), 3);
    Rates_suggest_bound(10.2, text, sizeof text);
    assert_non_null(strstr(text, "31 or more"));
    setenv(RATES_ENVIRONMENT, "5", 1);
    assert_int_equal(Rates_margin(), 1);
    Rates_suggest_bound(10.2, text, sizeof text);
    assert_non_null(strstr(text, "11 or more"));
    unsetenv(RATES_ENVIRONMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_pinned),
                                       cmocka_unit_test(test_rerated),
                                       cmocka_unit_test(test_margin)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
