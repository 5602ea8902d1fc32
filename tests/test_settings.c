/* The settings table (config.h): each entry is complete, and every view generated from it
 * carries every setting: --help, the preset writer and reader, the screen's keys and their
 * help, and the status line.  A new setting is one entry; this test walks them all. */
#include "testing.h"

#include "attnscope/budget.h"
#include "keys.h"
#include "ascii.h"
#include "options.h"
#include "save.h"
#include "status.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A valid value of s other than its default, as far from it as the range allows. */
static double other_value(const Setting *s)
{
    switch (s->kind) {
    case SETTING_ENUM:
        return s->names->count - 1;
    case SETTING_DOUBLE:
        return s->max / 3; /* not a short decimal: the writer must keep every digit */
    case SETTING_PATTERN:  /* LLG: two window layers, one global */
        return (double)(8 | 3);
    case SETTING_INT:
    case SETTING_SEED:
        break;
    }
    return s->fallback == s->max ? s->min : s->max;
}

static void test_entries_complete(void **state)
{
    (void)state;
    Config defaults = Config_default();
    assert_true(Settings_count() > 0 && Settings_count() <= SETTINGS_MAX);
    assert_null(Settings_at(Settings_count()));
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        assert_ptr_equal(Settings_find(s->name), s);
        assert_true(s->json && s->json[0] && s->argument && s->label && s->key_label);
        /* A pattern's names are where its key stops. */
        assert_true(Setting_is_text(s) == (s->names != NULL));
        if (!Setting_is_text(s))
            assert_true(s->min < s->max);
        assert_true(Setting_get(s, &defaults) == s->fallback);
        for (int j = 0; j < i; j++) {
            const Setting *t = Settings_at(j);
            assert_string_not_equal(s->json, t->json);
            assert_string_not_equal(s->label, t->label);
            if (s->letter && s->letter == t->letter)
                fail_msg("--%s and --%s share -%c", s->name, t->name, s->letter);
        }
        if (s->bound) {
            const Setting *b = Settings_find(s->bound);
            if (!b)
                fail_msg("--%s is bounded by --%s, which is no setting", s->name, s->bound);
            assert_true(s->bound_reason != NULL);
            /* Raising this one raises the other: it must have room. */
            if (s->raises_bound)
                assert_true(s->max - s->bound_offset <= b->max);
        }
        assert_true((s->in_use == NULL) == (s->unused_note == NULL));
        assert_true((s->raise_key || s->lower_key) == (s->step != STEP_NONE));
        assert_true(s->step != STEP_TOGGLE || s->kind == SETTING_ENUM);
        assert_true(s->step != STEP_CYCLE || Setting_is_text(s));
        assert_true(s->off_word == NULL || s->kind == SETTING_DOUBLE);
    }
    /* The default and a changed config validate; Config_equal sees every setting. */
    char err[256];
    assert_int_equal(Config_validate(&defaults, err, sizeof err), 0);
    for (int i = 0; i < Settings_count(); i++) {
        Config c = defaults;
        Setting_put(Settings_at(i), &c, other_value(Settings_at(i)));
        if (Config_equal(&c, &defaults))
            fail_msg("Config_equal does not see --%s", Settings_at(i)->name);
    }
}

/* Every setting says what a change to it invalidates (one class), and the sameness checks
   read it: Config_same_in sees a setting in its class and nowhere else, Config_reset puts
   exactly its class at the defaults. */
static void test_every_setting_declares_what_it_invalidates(void **state)
{
    (void)state;
    const unsigned every =
        REUSE_WEIGHTS | REUSE_DEPTH | REUSE_GAP | REUSE_SEED | REUSE_ENSEMBLE | REUSE_SHOWN;
    Config defaults = Config_default();
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        unsigned r = (unsigned)s->reuse;
        if (r == REUSE_UNDECLARED || (r & ~every) || (r & (r - 1)))
            fail_msg("--%s declares no single reuse class (%#x)", s->name, r);
        Config c = defaults;
        Setting_put(s, &c, other_value(s));
        if (Config_same_in(&c, &defaults, r))
            fail_msg("--%s: its class does not see it", s->name);
        if (!Config_same_in(&c, &defaults, every & ~r))
            fail_msg("--%s: another class sees it", s->name);
        Config reset = c;
        Config_reset(&reset, r);
        assert_true(Config_equal(&reset, &defaults));
        reset = c;
        Config_reset(&reset, every & ~r);
        assert_true(Config_equal(&reset, &c));
    }
}

static void test_every_setting_in_help(void **state)
{
    (void)state;
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    assert_non_null(out);
    Options_usage(out);
    fclose(out);
    Config defaults = Config_default();
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        char option[64], line[128], fallback[64], names[128];
        snprintf(option, sizeof option, "--%s %s ", s->name, s->argument);
        const char *at = strstr(text, option);
        if (!at)
            fail_msg("--help lacks '%s':\n%s", option, text);
        const char *start = at, *end = strchr(at, '\n');
        while (start > text && start[-1] != '\n')
            start--;
        snprintf(line, sizeof line, "%.*s", (int)(end - start), start);
        if (s->letter) {
            char spelled[16];
            snprintf(spelled, sizeof spelled, "  -%c, --%s", s->letter, s->name);
            assert_int_equal(strncmp(line, spelled, strlen(spelled)), 0);
        }
        Setting_format(s, &defaults, 17, fallback, sizeof fallback);
        const char *given = strrchr(line, '(');
        if (s->kind == SETTING_DOUBLE && isfinite(Setting_get(s, &defaults))) {
            /* the shortest spelling that reads back */
            if (!given || strtod(given + 1, NULL) != Setting_get(s, &defaults))
                fail_msg("'%s' does not give the default %s", line, fallback);
        } else if (!strstr(line, fallback)) {
            fail_msg("'%s' does not give the default %s", line, fallback);
        }
        if (s->kind == SETTING_ENUM && !strstr(line, EnumNames_list(s->names, names, sizeof names)))
            fail_msg("'%s' does not list %s", line, names);
    }
    free(text);
}

static char *write_temp(const char *text)
{
    static char path[64];
    strcpy(path, "/tmp/attnscope-settings-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* Each setting alone, then all at once, through the writer and back through the reader. */
static void test_every_setting_round_trips_a_preset(void **state)
{
    (void)state;
    Config all = Config_default();
    for (int i = 0; i <= Settings_count(); i++) {
        Config c = Config_default();
        if (i < Settings_count()) {
            const Setting *s = Settings_at(i);
            Setting_put(s, &c, other_value(s));
            Setting_put(s, &all, other_value(s));
        } else {
            c = all;
        }
        char text[2048], err[OPTIONS_ERROR_SIZE];
        int n = Options_write_preset(&c, text, sizeof text);
        assert_true(n > 0 && (size_t)n < sizeof text);
        for (int j = 0; j < Settings_count(); j++) {
            char key[64];
            snprintf(key, sizeof key, "%s = ", Settings_at(j)->name);
            assert_non_null(strstr(text, key));
        }
        char *path = write_temp(text);
        Config loaded = Config_default();
        if (Options_load_preset(&loaded, path, err, sizeof err))
            fail_msg("%s\n%s", err, text);
        if (!Config_equal(&loaded, &c))
            fail_msg("read back differently:\n%s", text);
        unlink(path);
    }
}

/* Every keyed setting: its keys are in the help overlay's list, and each changes the Config
   (raise from the default, then lower from there). */
static void test_every_keyed_setting_has_working_keys(void **state)
{
    (void)state;
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        Config start = Config_default();
        start.heads = 2; /* so that the shown head has another head to go to */
        Controls c = Controls_from(&start);
        const int keys[2] = {s->raise_key, s->lower_key};
        for (int k = 0; k < 2; k++) {
            if (!keys[k])
                continue;
            const KeyBinding *b = Keys_find(keys[k]);
            if (!b || b->setting != s || b->direction != (k == 0 ? 1 : -1))
                fail_msg("key '%c' does not %s --%s", keys[k], k == 0 ? "raise" : "lower", s->name);
            bool listed = false;
            for (int j = 0; j < Keys_count(); j++) {
                char line[KEYS_HELP_SIZE];
                Keys_help_line(Keys_at(j), line, sizeof line);
                listed = listed || (Keys_at(j) == b && strstr(line, s->key_label));
            }
            if (!listed)
                fail_msg("the help overlay lacks key '%c' (%s)", keys[k], s->key_label);
            double before = Setting_get(s, &c.config);
            char note[KEYS_NOTE_SIZE] = "";
            if (!Keys_apply(b, &c, note, sizeof note) || Setting_get(s, &c.config) == before)
                fail_msg("key '%c' left --%s at %g (%s)", keys[k], s->name, before, note);
            char err[256];
            assert_int_equal(Config_validate(&c.config, err, sizeof err), 0);
        }
    }
}

/* Every setting c uses is on the status line and in the header of a preset saved from it. */
static void assert_settings_shown(const Config *c)
{
    StatusView v = {.config = c, .note = "", .unicode = true};
    char lines[STATUS_LINES_MAX][STATUS_LINE_SIZE], all[STATUS_LINES_MAX * STATUS_LINE_SIZE] = "";
    int n = Status_layout(&v, 200, lines, STATUS_LINES_MAX);
    for (int i = 0; i < n; i++)
        strcat(all, lines[i]);
    char header[1024];
    int length = Save_header(c, "demo", "2026-11-24 10:00", header, sizeof header);
    assert_true(length > 0 && (size_t)length < sizeof header);
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (s->in_use && !s->in_use(c))
            continue;
        char shown[96];
        Setting_show(s, c, shown, sizeof shown);
        if (!shown[0] || !strstr(all, shown))
            fail_msg("the status line lacks --%s ('%s'):\n%s", s->name, shown, all);
        if (!strstr(header, shown))
            fail_msg("the saved header lacks '%s':\n%s", shown, header);
    }
    for (char *line = strtok(header, "\n"); line; line = strtok(NULL, "\n")) {
        assert_true(line[0] == '#');
        assert_true(Ascii_columns(line) <= 90);
    }
}

/* The status line, and the header of a preset saved from the screen, show every setting. */
static void test_every_setting_on_the_status_line(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 64;
    c.depth = 4;
    c.layer = 3;
    c.seeds = 4;
    /* The block's settings show where they differ from today's layer. */
    c.heads = 4;
    c.head = 2;
    c.kv_heads = 2;
    c.head_dim = 64; /* d/H given: shown, as every setting set */
    c.output = OUTPUT_ORTHOGONAL;
    c.logit_scale = LOGIT_SCALE_LINEAR;
    c.ln_place = LN_PLACE_PRE;
    c.ln_scale = LN_SCALE_SQRT_D;
    c.skip_gain = 0.5;
    c.branch_gain = 0.25;
    c.mlp = MLP_GELU;
    c.mlp_ratio = 2;
    c.init = INIT_GPT2;
    c.input_norm = INPUT_NORM_SQRT_D;
    c.ln_eps = 1e-6; /* in use through QK-norm */
    c.norm_gain_offset = 1;
    c.qk_norm = QK_NORM_FULL;
    c.qk_norm_place = QK_NORM_AFTER_ROPE;
    c.rope = ROPE_PAIRS;
    c.rope_theta = 500000;
    c.rope_local_base_freq = 10000;
    c.rope_fraction = 0.5;
    c.rope_scaling = ROPE_SCALING_LLAMA3;
    c.rope_factor = 32;
    c.rope_low_freq_factor = 2;
    c.rope_high_freq_factor = 8;
    c.rope_original_context = 4096;
    c.nope_every = 4;
    c.logit_softcap = 50;
    c.sink = 0.5;
    c.sink_std = 0.02;
    c.mask = MASK_WINDOW_CAUSAL;
    c.window = 3;
    assert_int_equal(Config_window_layers_code("5:1", &c.window_layers), 0);
    /* Per-matrix choices (W^O under --wo orthogonal: orthogonal or the identity). */
    c.init_query = MATRIX_INIT_XAVIER;
    c.init_key = MATRIX_INIT_ORTHOGONAL;
    c.init_value = MATRIX_INIT_NORMAL;
    c.init_output = MATRIX_INIT_IDENTITY;
    c.init_mlp = MATRIX_INIT_ZERO;
    c.init_std = 0.01;
    c.depth_scale = DEPTH_SCALE_PER_LAYER;
    /* The embedding input: under gpt2 its rows take S, not the input norm (which the
       cutting-skip scheme below uses again). */
    c.input = INPUT_EMBEDDING;
    c.vocab = 32000;
    c.positions = POSITIONS_LEARNED;
    c.attention_map = ATTENTION_MAP_PRODUCT;
    assert_settings_shown(&c);
    assert_false(Settings_find("input-norm")->in_use(&c));
    const Setting *alpha = Settings_find("init-alpha");
    assert_false(alpha->in_use(&c));
    /* The cutting-skip scheme's own settings, away from their defaults (its W^K are factors,
       which key/value heads cannot share: one per head). */
    c.kv_heads = c.heads;
    c.mlp_hidden = 384; /* the ratio is then unused, the hidden width shown */
    c.init = INIT_CUTTING_SKIP;
    c.init_alpha = 2.0;
    c.init_beta = 0.6;
    c.init_c = 3.0;
    assert_settings_shown(&c);
    assert_true(alpha->in_use(&c));
    assert_true(Settings_find("input-norm")->in_use(&c));
    /* Mimetic's value-output constants (its W^O is a factor: --wo gaussian). */
    c.init = INIT_MIMETIC;
    c.output = OUTPUT_GAUSSIAN;
    c.init_output = MATRIX_INIT_XAVIER;
    c.init_vo_alpha = 0.4;
    c.init_vo_beta = -0.5;
    assert_settings_shown(&c);
    assert_true(Settings_find("init-vo-beta")->in_use(&c));
    c.init = INIT_CUTTING_SKIP;
    c.output = OUTPUT_ORTHOGONAL;
    c.init_output = MATRIX_INIT_IDENTITY;

    StatusView v = {.config = &c, .note = "", .unicode = true};
    char lines[STATUS_LINES_MAX][STATUS_LINE_SIZE], all[STATUS_LINES_MAX * STATUS_LINE_SIZE] = "";
    int n = Status_layout(&v, 200, lines, STATUS_LINES_MAX);
    for (int i = 0; i < n; i++)
        strcat(all, lines[i]);
    assert_non_null(strstr(all, "layer=3/4"));
    assert_non_null(strstr(all, "α=2"));
    char header[1024];
    Save_header(&c, "demo", "2026-11-24 10:00", header, sizeof header);
    assert_int_equal(strncmp(header, "# demo: saved from the attnscope screen, 2026-11-24 10:00\n",
                             strlen("# demo: saved")),
                     0);
    /* At its default the ensemble size is not worth a field. */
    c.seeds = 1;
    char shown[96];
    assert_int_equal(Setting_show(Settings_find("seeds"), &c, shown, sizeof shown), 0);
}

/* Doubles read back exactly in their shortest form, whole numbers in full as the JSON writes
   them (merge's CSV compares the two): 10000 and 50, not 1e+04 and 5e+01. */
static void test_doubles_formatted_as_json_writes_them(void **state)
{
    (void)state;
    const struct {
        const char *name;
        double value;
        const char *text;
    } cases[] = {{"rope-theta", 10000, "10000"}, {"rope-theta", 500000, "500000"},
                 {"init-beta", 50, "50"},        {"init-beta", -3, "-3"},
                 {"ln-eps", 1e-5, "1e-05"},      {"sigma-qk", 0.1, "0.1"},
                 {"rope-fraction", 0.75, "0.75"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const Setting *s = Settings_find(cases[i].name);
        assert_non_null(s);
        Config c = Config_default();
        Setting_put(s, &c, cases[i].value);
        char text[64];
        Setting_format(s, &c, 0, text, sizeof text);
        assert_string_equal(text, cases[i].text);
    }
}

/* One seed limit: the parser's, and where the new-seed key wraps. */
static void test_seed_limit(void **state)
{
    (void)state;
    const Setting *s = Settings_find("seed");
    Config c = Config_default();
    char err[256], text[32];
    snprintf(text, sizeof text, "%llu", CONFIG_SEED_MAX);
    assert_int_equal(Setting_parse(s, &c, text, err, sizeof err), 0);
    assert_true(c.seed == CONFIG_SEED_MAX);
    snprintf(text, sizeof text, "%llu", CONFIG_SEED_MAX + 1);
    assert_int_equal(Setting_parse(s, &c, text, err, sizeof err), -1);
    Controls k = Controls_from(&c);
    char note[KEYS_NOTE_SIZE] = "";
    assert_true(Keys_apply(Keys_find(s->raise_key), &k, note, sizeof note));
    assert_true(k.config.seed == 0);
}

/* One memory budget: a refusal names the configuration, its need and the budget. */
static void test_budget(void **state)
{
    (void)state;
    Config c = Config_default();
    char err[256];
    assert_int_equal(Budget_check(&c, 1ull << 40, err, sizeof err), 0);
    c.tokens = c.width = 4096;
    assert_int_equal(Budget_check(&c, 1ull << 30, err, sizeof err), -1);
    unsigned long long need, budget;
    const char *at = strstr(err, "needs about ");
    assert_non_null(at);
    assert_int_equal(
        sscanf(at, "needs about %llu MiB, above the memory budget of %llu MiB", &need, &budget), 2);
    assert_true(need > budget && budget == 1024);
    assert_non_null(strstr(err, "T = 4096, d = 4096, depth 8"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries_complete),
        cmocka_unit_test(test_every_setting_declares_what_it_invalidates),
        cmocka_unit_test(test_every_setting_in_help),
        cmocka_unit_test(test_every_setting_round_trips_a_preset),
        cmocka_unit_test(test_every_keyed_setting_has_working_keys),
        cmocka_unit_test(test_every_setting_on_the_status_line),
        cmocka_unit_test(test_seed_limit),
        cmocka_unit_test(test_doubles_formatted_as_json_writes_them),
        cmocka_unit_test(test_budget),
    };
    return cmocka_run_group_tests_name("settings", tests, NULL, NULL);
}
