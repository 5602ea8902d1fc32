/* Durations as text (duration.h), both styles at each unit's boundary, written out here by
   hand: two days and more read in days in both, and below that each style's units hold. */
#include "testing.h"

#include "duration.h"

#include <string.h>

typedef struct {
    double seconds;
    const char *plain, *about;
} Case;

static const Case CASES[] = {
    {0, "0 s", "<1 s"},
    {0.4, "0.4 s", "<1 s"},
    {1, "1 s", "~1 s"},
    {12.4, "12.4 s", "~12 s"},
    {59.4, "59.4 s", "~59 s"},
    {59.7, "59.7 s", "~1 min"}, /* "~60 s" would read apart from 60 s's "~1 min" */
    {60, "60 s", "~1 min"},
    {119.4, "119 s", "~2 min"},
    {119.9, "2 min", "~2 min"}, /* not "120 s" beside 120 s's "2 min" */
    {120, "2 min", "~2 min"},
    {185, "3 min", "~3 min"},
    {3569, "59 min", "~59 min"},
    {3599, "60 min", "~1.0 h"}, /* not "~60 min" beside 3600 s's "~1.0 h" */
    {3600, "60 min", "~1.0 h"},
    {7169, "119 min", "~2.0 h"},
    {7199, "2 h", "~2.0 h"}, /* not "120 min" beside 7200 s's "2 h" */
    {7200, "2 h", "~2.0 h"},
    {9000, "2.5 h", "~2.5 h"},
    {169200, "47 h", "~47.0 h"},         /* 47 h: hours */
    {172799, "2 days", "~2 days"},       /* a second short of two days: "48 h" would be two days */
    {172800, "2 days", "~2 days"},       /* two days: days */
    {348941, "4.04 days", "~4.04 days"}, /* the engineer's size at 10 GFLOP/s */
    {923400, "10.7 days", "~10.7 days"}, /* 256.5 h, as the screen said before */
    {1.3162121e7, "152 days", "~152 days"} /* estimate.sh's huge run */
};

static void test_boundaries(void **state)
{
    (void)state;
    char out[32];
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const Case *k = &CASES[i];
        Duration_text(k->seconds, DURATION_PLAIN, out, sizeof out);
        if (strcmp(out, k->plain))
            fail_msg("%.9g s plain: '%s', expected '%s'", k->seconds, out, k->plain);
        Duration_text(k->seconds, DURATION_ABOUT, out, sizeof out);
        if (strcmp(out, k->about))
            fail_msg("%.9g s about: '%s', expected '%s'", k->seconds, out, k->about);
    }
}

/* Batch's refusals: the seconds beside a larger unit, once where the text is in seconds
   already (main wrote "estimated at 1.52 s (1.52 s)"). */
static void test_with_seconds(void **state)
{
    (void)state;
    static const struct {
        double seconds;
        const char *text;
    } cases[] = {{1.52, "1.52 s"},
                 {119.4, "119 s"},
                 {119.9, "2 min (120 s)"},
                 {27700, "7.7 h (2.77e+04 s)"},
                 {1.3162121e7, "152 days (1.32e+07 s)"}};
    char out[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Duration_text_seconds(cases[i].seconds, out, sizeof out);
        if (strcmp(out, cases[i].text))
            fail_msg("%.9g s: '%s', expected '%s'", cases[i].seconds, out, cases[i].text);
    }
}

/* A short buffer gets a cut, terminated text, as snprintf cuts it. */
static void test_short_buffer(void **state)
{
    (void)state;
    char out[5];
    Duration_text(348941, DURATION_ABOUT, out, sizeof out);
    assert_string_equal(out, "~4.0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boundaries),
        cmocka_unit_test(test_with_seconds),
        cmocka_unit_test(test_short_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
