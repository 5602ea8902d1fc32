/* The rotary frequencies' scaling (--rope-scaling linear|llama3, HF's rope_scaling): Qk_frequency
 * against a table numpy printed from a transcription of Hugging Face's formulas
 * (tests/data/rope-scaling/frequencies.py wrote rope_scaling_table.h), the rotation and the
 * conditioning's table turning by those frequencies, and the refusals of the settings. */
#include "testing.h"

#include "attnscope/config.h"
#include "attnscope/qk.h"
#include "rope_scaling_table.h"

#include <float.h>
#include <string.h>

/* Both sides compute θ^(−2k/d_r) from the same exponent (HF as 1/θ^(2k/d_r), attnscope as
   pow(θ, −2k/d_r): under 1 ulp each, 0.5 for the division) and then at most five rounded
   operations (llama3's blend: 2π/f, C/λ, the smooth factor, two products and a sum, its
   factor (C/λ)/(high − low) ≤ high/(high − low) = 4/3 or 4/3 again here): 16 ulps of relative
   error bound them with room. */
#define FREQUENCY_RELATIVE (16 * DBL_EPSILON)

static Config case_config(const RopeScalingCase *t, Rope rope)
{
    Config c = Config_default();
    c.tokens = 2;
    c.width = t->head_width;
    c.heads = 1;
    c.rope = rope;
    c.rope_theta = t->theta;
    c.rope_fraction = t->fraction;
    int scaling = EnumNames_find(&ROPE_SCALING_NAMES, t->scaling);
    assert_true(scaling >= 0);
    c.rope_scaling = (RopeScaling)scaling;
    c.rope_factor = t->factor;
    c.rope_low_freq_factor = t->low;
    c.rope_high_freq_factor = t->high;
    c.rope_original_context = t->context;
    return c;
}

enum { CASES = sizeof ROPE_SCALING_CASES / sizeof ROPE_SCALING_CASES[0] };

/* Every pair's frequency is numpy's to 16 ulps; unscaled it is pow(θ, −2k/d_r) bit for bit,
   the expression every run before the scaling used (documents stay the same). */
static void test_frequencies_match_numpys_table(void **state)
{
    (void)state;
    for (int i = 0; i < CASES; i++) {
        const RopeScalingCase *t = &ROPE_SCALING_CASES[i];
        Config c = case_config(t, ROPE_HALF);
        int rotated = Qk_rotated_width(&c);
        assert_int_equal(rotated, 2 * t->pairs);
        for (int k = 0; k < t->pairs; k++) {
            double f = Qk_frequency(&c, 1, k), want = t->frequency[k];
            if (!(fabs(f / want - 1) <= FREQUENCY_RELATIVE))
                fail_msg("%s, pair %d: %.17g, numpy %.17g", t->name, k, f, want);
            if (c.rope_scaling == ROPE_SCALING_NONE)
                assert_true(f == pow(c.rope_theta, -2.0 * k / rotated));
        }
    }
}

/* Qk_rotate turns pair k of a token at position p by p·f_k, numpy's f_k: a basis vector on
   the pair's first dimension becomes (cos p·f_k, sin p·f_k) on its two, under both
   conventions; and the conditioning's table (Qk_rotation_table) holds the same cosines and
   sines.  The angles reach p·f_0 = 700 rad: their rounding is ~700·2^−53, so 1e-12. */
static void test_rotation_turns_by_the_scaled_frequencies(void **state)
{
    (void)state;
    enum { T = 3, POSITION = 700, D_MAX = 128 };
    double x[D_MAX], table[T * D_MAX];
    for (int i = 0; i < CASES; i++) {
        const RopeScalingCase *t = &ROPE_SCALING_CASES[i];
        for (int rope = ROPE_HALF; rope <= ROPE_PAIRS; rope++) {
            Config c = case_config(t, (Rope)rope);
            int rotated = Qk_rotated_width(&c);
            for (int k = 0; k < t->pairs; k++) {
                int first = rope == ROPE_HALF ? k : 2 * k;
                int second = rope == ROPE_HALF ? k + rotated / 2 : 2 * k + 1;
                double angle = POSITION * t->frequency[k];
                memset(x, 0, sizeof x);
                x[first] = 1;
                Qk_rotate(&c, 1, 1, 1, POSITION, x);
                assert_close(x[first], cos(angle), 1e-12);
                assert_close(x[second], sin(angle), 1e-12);
            }
            c.tokens = T;
            Qk_rotation_table(&c, 1, T, table);
            const double *sines = table + (size_t)T * t->pairs;
            for (int k = 0; k < t->pairs; k++)
                for (int p = 0; p < T; p++) {
                    assert_close(table[k * T + p], cos(p * t->frequency[k]), 1e-14);
                    assert_close(sines[k * T + p], sin(p * t->frequency[k]), 1e-14);
                }
        }
    }
}

/* Config_validate's message for c, which must refuse it. */
static const char *refusal(const Config *c)
{
    static char err[512];
    err[0] = '\0';
    assert_int_equal(Config_validate(c, err, sizeof err), -1);
    return err;
}

static void assert_says(const char *message, const char *part)
{
    if (!strstr(message, part))
        fail_msg("\"%s\" does not say \"%s\"", message, part);
}

/* The scaling without RoPE, and llama3's low >= high: refused, naming the options and what
   is accepted; each value out of its range: refused by its own option. */
static void test_refusals_name_the_option(void **state)
{
    (void)state;
    char err[512];
    Config c = Config_default();
    c.rope_scaling = ROPE_SCALING_LLAMA3;
    /* Without RoPE the scaling has no effect: it runs, and says so (tests/test_inert.c). */
    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
    assert_true(Setting_inert_text(Settings_find("rope-scaling"), &c, err, sizeof err) > 0);
    c.rope = ROPE_HALF;
    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
    c.rope_low_freq_factor = c.rope_high_freq_factor = 4;
    const char *why = refusal(&c);
    assert_says(why, "--rope-low-freq-factor 4 with --rope-high-freq-factor 4");
    assert_says(why, "accepted low < high");
    c.rope_low_freq_factor = 5;
    refusal(&c);
    c.rope_scaling = ROPE_SCALING_LINEAR; /* linear has no blend: low and high unused */
    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
    static const struct {
        const char *option, *value, *says;
    } bad[] = {{"rope-factor", "0", "--rope-factor '0': accepted a number 0 < X"},
               {"rope-factor", "-2", "--rope-factor '-2'"},
               {"rope-factor", "inf", "--rope-factor 'inf'"},
               {"rope-factor", "nan", "--rope-factor 'nan'"},
               {"rope-low-freq-factor", "0", "--rope-low-freq-factor '0'"},
               {"rope-high-freq-factor", "1e400", "--rope-high-freq-factor '1e400'"},
               {"rope-original-context", "0", "--rope-original-context '0': accepted a whole"},
               {"rope-original-context", "8192.5", "--rope-original-context '8192.5'"},
               {"rope-scaling", "dynamic", "accepted none|linear|llama3"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        Config d = Config_default();
        assert_int_equal(
            Setting_parse(Settings_find(bad[i].option), &d, bad[i].value, err, sizeof err), -1);
        assert_says(err, bad[i].says);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frequencies_match_numpys_table),
        cmocka_unit_test(test_rotation_turns_by_the_scaled_frequencies),
        cmocka_unit_test(test_refusals_name_the_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
