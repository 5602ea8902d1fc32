/* A line of settings (the screen's `:` line) against the command line's own parsing of the
 * same settings: the same Config (and the batch document's "config" object) where both accept, the
 * same message where both refuse, and nothing applied on a refusal. */
#include "testing.h"

#include "json.h"
#include "options.h"
#include "setting_line.h"

#include <string.h>

enum { ARGS_MAX = 16 };

/* Options_parse of "attnscope --batch" and args (NULL-terminated). */
static int command_line(const char *const args[], Config *out, char *err)
{
    char *argv[ARGS_MAX + 3] = {"attnscope", "--batch"};
    int argc = 2;
    for (int i = 0; args[i]; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    Options o;
    int status = Options_parse(argc, argv, &o, err, OPTIONS_ERROR_SIZE);
    *out = o.config;
    return status;
}

/* Each line, typed as the screen takes it, and the same settings as command-line words. */
static const struct {
    const char *line;
    const char *args[ARGS_MAX];
} SAME[] = {
    {"head-dim 128 wo gaussian", {"--head-dim", "128", "--wo", "gaussian"}},
    {"--head-dim 32 heads 4 wo=orthogonal",
     {"--head-dim", "32", "--heads", "4", "--wo", "orthogonal"}},
    {"heads 4 kv-heads 2", {"--heads", "4", "--kv-heads", "2"}},
    {"rope-scaling=llama3 rope half", {"--rope-scaling", "llama3", "--rope", "half"}},
    {"-T 64  width = 64", {"-T", "64", "-d", "64"}},
    {"sink none seed 7", {"--sink", "none", "--seed", "7"}},
    {"mask window window 16 window-layers 5:1",
     {"--mask", "window", "--window", "16", "--window-layers", "5:1"}},
    {"rope_theta 10000 rope pairs", {"--rope-theta", "10000", "--rope", "pairs"}},
    {"sigma-qk =0.5\tlayer= 3", {"--sigma-qk", "0.5", "--layer", "3"}},
    {"layer 2 -L 3", {"-L", "3", "--layer", "2"}},
    {"rope half rope-fraction 0.25 nope-every 4",
     {"--rope", "half", "--rope-fraction", "0.25", "--nope-every", "4"}},
    /* Given twice: the last wins, on the line as on the command line. */
    {"tokens 32 tokens 48", {"--tokens", "32", "--tokens", "48"}},
    {"depth 2 -L 3", {"-L", "2", "-L", "3"}},
};

static void test_lines_set_what_the_command_line_sets(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof SAME / sizeof SAME[0]; i++) {
        Config expected, line = Config_default();
        char err[OPTIONS_ERROR_SIZE] = "";
        assert_int_equal(command_line(SAME[i].args, &expected, err), 0);
        bool changed[SETTINGS_MAX];
        int applied = SettingLine_apply(&line, SAME[i].line, changed, err, sizeof err);
        if (applied < 0)
            fail_msg("'%s' refused: %s", SAME[i].line, err);
        int given = 0;
        while (SAME[i].args[given])
            given++;
        assert_int_equal(applied, given / 2);
        /* The "config" object the batch document prints of each. */
        Text from_line = {0}, from_options = {0};
        Json_config_members(&from_line, &line);
        Json_config_members(&from_options, &expected);
        assert_false(from_line.failed || from_options.failed);
        if (strcmp(from_line.data, from_options.data) != 0)
            fail_msg("'%s' gives {%s}, the command line {%s}", SAME[i].line, from_line.data,
                     from_options.data);
        Text_free(&from_line);
        Text_free(&from_options);
        if (!Config_equal(&line, &expected))
            fail_msg("'%s' is not the command line's %s ...", SAME[i].line, SAME[i].args[0]);
        for (int k = 0; k < given; k += 2) {
            const Setting *s = SettingLine_setting(SAME[i].args[k]);
            assert_non_null(s);
            assert_true(changed[s - Settings_at(0)]);
        }
    }
}

/* Refused by both in the same words: a value out of range, a relation between settings. */
static const struct {
    const char *line;
    const char *args[ARGS_MAX];
    const char *names; /* what the message must name */
} REFUSED[] = {
    {"head-dim -3", {"--head-dim", "-3"}, "--head-dim '-3'"},
    {"heads 3", {"--heads", "3"}, "heads"},
    {"head-dim 128", {"--head-dim", "128"}, "--wo identity"},
    {"rope half rope-scaling llama3 rope-low-freq-factor 4",
     {"--rope", "half", "--rope-scaling", "llama3", "--rope-low-freq-factor", "4"},
     "--rope-low-freq-factor 4"},
    {"attention bogus", {"--attention", "bogus"}, "softmax"},
    {"-T 64 width 32", {"-T", "64", "-d", "32"}, "T"},
    {"tokens 64 width 64 heads 3", {"-T", "64", "-d", "64", "--heads", "3"}, "heads"},
};

static void test_refusals_are_the_command_lines(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof REFUSED / sizeof REFUSED[0]; i++) {
        Config ignored, line = Config_default(), before = line;
        char expected[OPTIONS_ERROR_SIZE] = "", err[OPTIONS_ERROR_SIZE] = "";
        assert_int_equal(command_line(REFUSED[i].args, &ignored, expected), 2);
        assert_int_equal(SettingLine_apply(&line, REFUSED[i].line, NULL, err, sizeof err), -1);
        assert_string_equal(err, expected);
        assert_non_null(strstr(err, REFUSED[i].names));
        assert_true(Config_equal(&line, &before)); /* nothing applied */
    }
}

/* What only a line can get wrong: an unknown name, a name without a value, a setting twice
   (the command line takes the last, a preset refuses it, and so does the line), nothing. */
static void test_malformed_lines(void **state)
{
    (void)state;
    static const struct {
        const char *line, *says;
    } CASES[] = {
        {"bogus 3", "'bogus' is not a setting"},
        {"heads 2 head-dim", "--head-dim: needs a value (accepted "},
        {"rope-scaling", "(accepted none|linear|llama3)"},
        {"  \t ", "nothing to set"},
        {"--T 64", "'--T' is not a setting"},
        {"=64", "'=64' is not a setting"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        Config c = Config_default(), before = c;
        char err[OPTIONS_ERROR_SIZE] = "";
        assert_int_equal(SettingLine_apply(&c, CASES[i].line, NULL, err, sizeof err), -1);
        if (!strstr(err, CASES[i].says))
            fail_msg("'%s' says '%s', not '%s'", CASES[i].line, err, CASES[i].says);
        assert_true(Config_equal(&c, &before));
    }
}

/* A line of settings on top of others keeps what it does not name. */
static void test_a_line_changes_only_what_it_names(void **state)
{
    (void)state;
    Config c = Config_default(), was;
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(SettingLine_apply(&c, "tokens 32 width 32 depth 3", NULL, err, sizeof err), 3);
    was = c;
    assert_int_equal(SettingLine_apply(&c, "seed 9", NULL, err, sizeof err), 1);
    assert_int_equal(c.seed, 9);
    c.seed = was.seed;
    assert_true(Config_equal(&c, &was));
}

/* Every setting's name, with and without dashes, its letter and its JSON key find it. */
static void test_every_spelling_finds_its_setting(void **state)
{
    (void)state;
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        char dashed[64], letter[4];
        snprintf(dashed, sizeof dashed, "--%s", s->name);
        assert_ptr_equal(SettingLine_setting(s->name), s);
        assert_ptr_equal(SettingLine_setting(dashed), s);
        assert_ptr_equal(SettingLine_setting(s->json), s);
        if (s->letter) {
            snprintf(letter, sizeof letter, "-%c", s->letter);
            assert_ptr_equal(SettingLine_setting(letter), s);
        }
    }
    assert_null(SettingLine_setting("-"));
    assert_null(SettingLine_setting("--"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_set_what_the_command_line_sets),
        cmocka_unit_test(test_refusals_are_the_command_lines),
        cmocka_unit_test(test_malformed_lines),
        cmocka_unit_test(test_a_line_changes_only_what_it_names),
        cmocka_unit_test(test_every_spelling_finds_its_setting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
