/* The conditioning run's control on its path (conditioning_path.h), for every pinned path and
   both outcomes of the exact choice, against the rule written out: Lanczos where not exact,
   the Kronecker path skipped only under --conditioning-path lanczos, nothing else set. */
#include "testing.h"

#include "conditioning_path.h"

static void test_control(void **state)
{
    (void)state;
    const struct {
        ConditioningPath path;
        bool kron_off;
    } paths[] = {{CONDITIONING_PATH_AUTO, false},
                 {CONDITIONING_PATH_EXACT, false},
                 {CONDITIONING_PATH_LANCZOS, true},
                 {CONDITIONING_PATH_KRON, false}};
    for (int i = 0; i < 4; i++)
        for (int exact = 0; exact < 2; exact++) {
            ConditioningControl c = ConditioningPath_control(paths[i].path, exact);
            assert_int_equal(c.lanczos_only, !exact);
            assert_int_equal(c.kron_off, paths[i].kron_off);
            assert_false(c.shown_spectrum_only);
            assert_null(c.progress);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_control)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
