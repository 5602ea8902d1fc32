/* The command line and presets: every rejected value exits 2 with a message naming the
 * option and the value; presets apply whole or not at all, with FILE:LINE messages. */
#include "testing.h"

#include "attnscope/budget.h"
#include "options.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int parse(char **argv, Options *o, char *err)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return Options_parse(argc, argv, o, err, OPTIONS_ERROR_SIZE);
}

static void test_defaults(void **state)
{
    (void)state;
    char *argv[] = {"attnscope", "--batch", NULL};
    Options o;
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(parse(argv, &o, err), 0);
    Config d = Config_default();
    assert_int_equal(o.config.tokens, 256);
    assert_int_equal(o.config.width, 256);
    assert_int_equal(o.config.depth, 8);
    assert_true(o.config.sigma_qk == 1.0);
    assert_int_equal(o.config.attention, ATTENTION_SOFTMAX);
    assert_int_equal(o.config.gap, GAP_OFF);
    assert_true(Config_equal(&o.config, &d));
    assert_true(o.batch);
}

static void test_every_option(void **state)
{
    (void)state;
    char *argv[] = {"attnscope",
                    "-T",
                    "64",
                    "-d",
                    "128",
                    "-L",
                    "5",
                    "-s",
                    "0.5",
                    "-a",
                    "markov",
                    "-m",
                    "window-causal",
                    "-w",
                    "3",
                    "-g",
                    "deflate",
                    "-n",
                    "ln",
                    "-k",
                    "scaled",
                    "-l",
                    "4",
                    "--seed",
                    "9007199254740985",
                    "--seeds",
                    "7",
                    "--ascii",
                    "--no-color",
                    NULL};
    Options o;
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(parse(argv, &o, err), 0);
    Config c = o.config;
    assert_int_equal(c.tokens, 64);
    assert_int_equal(c.width, 128);
    assert_int_equal(c.depth, 5);
    assert_true(c.sigma_qk == 0.5);
    assert_int_equal(c.attention, ATTENTION_MARKOV);
    assert_int_equal(c.mask, MASK_WINDOW_CAUSAL);
    assert_int_equal(c.window, 3);
    assert_int_equal(c.gap, GAP_DEFLATE);
    assert_int_equal(c.layernorm, LAYERNORM_LN);
    assert_int_equal(c.skip, SKIP_SCALED);
    assert_int_equal(c.layer, 4);
    assert_true(c.seed == 9007199254740985ull); /* its last seed is 2^53 - 1 */
    assert_int_equal(c.seeds, 7);
    assert_true(o.ascii && o.no_color && !o.batch);
}

/* Each row: an option, a bad value, and a piece the message must contain. */
static const struct {
    const char *option, *value, *says;
} BAD[] = {
    {"--tokens", "", "accepted a whole number 2..4096"},
    {"--tokens", "0", "-T/--tokens '0'"},
    {"--tokens", "1", "2..4096"},
    {"--tokens", "-5", "-T/--tokens '-5'"},
    {"--tokens", "4097", "2..4096"},
    {"--tokens", "99999999999999999999", "2..4096"},
    {"--tokens", "abc", "-T/--tokens 'abc'"},
    {"--tokens", "12x", "-T/--tokens '12x'"},
    {"--tokens", "nan", "-T/--tokens 'nan'"},
    {"--width", "0", "-d/--width '0': accepted a whole number 1..4096"},
    {"--width", "inf", "-d/--width 'inf'"},
    {"--width", " 64", "-d/--width ' 64': accepted a whole number 1..4096"},
    {"--depth", "0", "-L/--depth '0': accepted a whole number 1..256"},
    {"--depth", "257", "1..256"},
    {"--sigma-qk", "0", "-s/--sigma-qk '0': accepted a number 0 < X <= 4"},
    {"--sigma-qk", "-1", "-s/--sigma-qk '-1'"},
    {"--sigma-qk", "4.0001", "0 < X <= 4"},
    {"--sigma-qk", "nan", "-s/--sigma-qk 'nan'"},
    {"--sigma-qk", "inf", "-s/--sigma-qk 'inf'"},
    {"--sigma-qk", "1e999", "-s/--sigma-qk '1e999'"},
    {"--sigma-qk", "1.5x", "-s/--sigma-qk '1.5x'"},
    {"--sigma-qk", "", "0 < X <= 4"},
    {"--sigma-qk", "\t1", "-s/--sigma-qk '\t1': accepted a number 0 < X <= 4"},
    {"--attention", "softmaxx",
     "-a/--attention 'softmaxx': accepted softmax|markov|relu|sigmoid|linear|uniform|identity"},
    {"--attention", "", "-a/--attention ''"},
    {"--mask", "diagonal", "-m/--mask 'diagonal': accepted full|causal|window|window-causal"},
    {"--window", "0", "-w/--window '0'"},
    {"--gap", "on", "-g/--gap 'on': accepted off|center|uniform|deflate|outliers"},
    {"--layernorm", "layer", "-n/--layernorm 'layer': accepted none|rms|ln"},
    {"--skip", "yes", "-k/--skip 'yes': accepted none|plain|scaled"},
    {"--layer", "0", "-l/--layer '0'"},
    {"--seed", "-1", "--seed '-1': accepted a whole number 0..9007199254740991"},
    {"--seed", "9007199254740992", "--seed '9007199254740992'"},
    {"--seed", " 5", "--seed ' 5'"},
    {"--seeds", "0", "--seeds '0': accepted a whole number 1..1024"},
    {"--seeds", "1025", "1..1024"},
    {"--preset", "/nonexistent/x.preset", "--preset '/nonexistent/x.preset': No such file"},
};

static void test_bad_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char *argv[] = {"attnscope", (char *)BAD[i].option, (char *)BAD[i].value, NULL};
        Options o;
        char err[OPTIONS_ERROR_SIZE] = "";
        int status = parse(argv, &o, err);
        if (status != 2 || !strstr(err, BAD[i].says))
            fail_msg("%s '%s': status %d, message \"%s\", expected to contain \"%s\"",
                     BAD[i].option, BAD[i].value, status, err, BAD[i].says);
    }
}

static void test_bad_combinations(void **state)
{
    (void)state;
    struct {
        char *argv[12];
        const char *says;
    } cases[] = {
        {{"attnscope", "-T", "512", NULL}, "-T/--tokens 512 exceeds -d/--width 256"},
        {{"attnscope", "-L", "3", "-l", "4", NULL}, "-l/--layer 4: accepted 1..3"},
        {{"attnscope", "-T", "8", "-d", "8", "-m", "window", "-w", "8", NULL},
         "-w/--window 8: accepted 1..7"},
        {{"attnscope", "--frobnicate", NULL}, "unknown option '--frobnicate'"},
        {{"attnscope", "-x", NULL}, "unknown option '-x'"},
        {{"attnscope", "-T", NULL}, "-T: needs a value"},
        {{"attnscope", "extra", NULL}, "unexpected argument 'extra'"},
        {{"attnscope", "--seed", "9007199254740990", "--seeds", "3", NULL},
         "seeds 9007199254740990..9007199254740992 pass the largest seed 9007199254740991 (a "
         "seed is written as a JSON number, exact to 2^53 - 1); accepted --seed up to "
         "9007199254740989 with --seeds 3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Options o;
        char err[OPTIONS_ERROR_SIZE] = "";
        int status = parse(cases[i].argv, &o, err);
        if (status != 2 || !strstr(err, cases[i].says))
            fail_msg("case %zu: status %d, message \"%s\", expected \"%s\"", i, status, err,
                     cases[i].says);
    }
    /* a window wider than T is fine when the mask does not use it */
    char *ok[] = {"attnscope", "-T", "8", "-d", "8", "-w", "100", NULL};
    Options o;
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(parse(ok, &o, err), 0);
}

static char *write_temp(const char *text, size_t length)
{
    static char path[64];
    strcpy(path, "/tmp/attnscope-preset-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, length), (ssize_t)length);
    close(fd);
    return path;
}

static void test_preset_applies_and_later_options_override(void **state)
{
    (void)state;
    const char *text = "# a comment, in UTF-8: σ_qk — fine\n\n  tokens = 64   # trailing comment\n"
                       "width=128\n"
                       "attention = markov\r\ngap = center\n";
    char *path = write_temp(text, strlen(text));
    char *argv[] = {"attnscope", "--preset", path, "-T", "32", NULL};
    Options o;
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(parse(argv, &o, err), 0);
    assert_int_equal(o.config.tokens, 32);
    assert_int_equal(o.config.width, 128);
    assert_int_equal(o.config.attention, ATTENTION_MARKOV);
    assert_int_equal(o.config.gap, GAP_CENTER);
    unlink(path);
}

static void test_preset_round_trip(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 100;
    c.width = 300;
    c.sigma_qk = 0.91287092917527690;
    c.attention = ATTENTION_SIGMOID;
    c.mask = MASK_WINDOW;
    c.window = 7;
    c.gap = GAP_OUTLIERS;
    c.layernorm = LAYERNORM_RMS;
    c.skip = SKIP_PLAIN;
    c.depth = 12;
    c.layer = 11;
    c.seed = 123456789;
    c.seeds = 4;
    char text[2048];
    assert_true((size_t)Options_write_preset(&c, text, sizeof text) < sizeof text);
    char *path = write_temp(text, strlen(text));
    Config loaded = Config_default();
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(Options_load_preset(&loaded, path, err, sizeof err), 0);
    assert_true(Config_equal(&loaded, &c));
    unlink(path);
}

/* A malformed preset reports FILE:LINE and applies nothing. */
static void test_preset_errors(void **state)
{
    (void)state;
    const struct {
        const char *text;
        size_t length;
        int line;
        const char *says;
    } cases[] = {
        {"tokens = 64\nfrobs = 3\n", 0, 2, "unknown key 'frobs'"},
        {"tokens = 64\ntokens = 32\n", 0, 2, "duplicate key 'tokens'"},
        {"# x\ntokens 64\n", 0, 2, "expected 'key = value'"},
        {"tokens = 64\nsigma-qk = nan\n", 0, 2, "'nan'"},
        {"width = 64\nmask = diag\n", 0, 2, "accepted full|causal|window|window-causal"},
        {"tokens = 6\0004\n", 12, 1, "NUL byte"},
        {"tokens = \x01\x02\n", 0, 1, "control byte 0x01"},
        {"tokens =\n", 0, 1, "accepted a whole number"},
        {"# caf\xe9\ntokens = 8\n", 0, 1, "byte 0xe9 at column 6 is not UTF-8"},
        {"tokens = 8\nwidth = 8\xff\n", 0, 2, "byte 0xff at column 10 is not UTF-8"},
        {"# \xed\xa0\x80 (a surrogate)\n", 0, 1, "byte 0xed at column 3 is not UTF-8"},
        {"# \xc0\xaf (overlong)\n", 0, 1, "byte 0xc0 at column 3 is not UTF-8"},
        {"# \xe2\x80 (cut short)\n", 0, 1, "byte 0xe2 at column 3 is not UTF-8"},
        {"# \x7f\n", 0, 1, "control byte 0x7f"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = cases[i].length ? cases[i].length : strlen(cases[i].text);
        char *path = write_temp(cases[i].text, n);
        Config c = Config_default(), before = c;
        char err[OPTIONS_ERROR_SIZE] = "", prefix[128];
        snprintf(prefix, sizeof prefix, "%s:%d: ", path, cases[i].line);
        int status = Options_load_preset(&c, path, err, sizeof err);
        if (status != -1 || strncmp(err, prefix, strlen(prefix)) != 0 ||
            !strstr(err, cases[i].says))
            fail_msg("case %zu: status %d, message \"%s\", expected \"%s...%s\"", i, status, err,
                     prefix, cases[i].says);
        assert_true(Config_equal(&c, &before));
        unlink(path);
    }
}

static void test_preset_long_line_and_directory(void **state)
{
    (void)state;
    size_t n = 10u << 20;
    char *text = malloc(n + 16);
    memcpy(text, "seed = ", 7);
    memset(text + 7, '7', n);
    memcpy(text + 7 + n, "\n", 2);
    char *path = write_temp(text, strlen(text));
    Config c = Config_default();
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(Options_load_preset(&c, path, err, sizeof err), -1);
    assert_non_null(strstr(err, ":1: --seed '7777777777777777777777777777777777777777...': "
                                "accepted a whole number 0..9007199254740991"));
    unlink(path);
    free(text);

    assert_int_equal(Options_load_preset(&c, "/tmp", err, sizeof err), -1);
    assert_non_null(strstr(err, "'/tmp': Is a directory"));

    path = write_temp("tokens = 8\n", 11);
    chmod(path, 0);
    if (geteuid() != 0) { /* root reads anything */
        assert_int_equal(Options_load_preset(&c, path, err, sizeof err), -1);
        assert_non_null(strstr(err, "Permission denied"));
    }
    unlink(path);
}

/* Each amount in the largest of bytes, KiB and MiB in which it is at least 1; a need
   rounded up and a budget down, so that a need above a budget never reads as equal. */
static void test_bytes_text(void **state)
{
    (void)state;
    struct {
        unsigned long long bytes;
        const char *down, *up;
    } cases[] = {{0, "0 bytes", "0 bytes"},
                 {1023, "1023 bytes", "1023 bytes"},
                 {1024, "1 KiB", "1 KiB"},
                 {1025, "1 KiB", "2 KiB"},
                 {(1ull << 20) - 1, "1023 KiB", "1024 KiB"},
                 {1ull << 20, "1 MiB", "1 MiB"},
                 {(3ull << 20) + 1, "3 MiB", "4 MiB"},
                 {1ull << 40, "1048576 MiB", "1048576 MiB"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[BUDGET_BYTES_TEXT_SIZE];
        assert_string_equal(Budget_bytes_text(cases[i].bytes, false, buf), cases[i].down);
        assert_string_equal(Budget_bytes_text(cases[i].bytes, true, buf), cases[i].up);
    }
}

static void test_memory_budget(void **state)
{
    (void)state;
    char *sizes[][2] = {{"512M", "536870912"},
                        {"2G", "2147483648"},
                        {"300", "314572800"},
                        {"64KiB", "65536"},
                        {"1t", "1099511627776"}};
    for (int i = 0; i < 5; i++) {
        char *argv[] = {"attnscope", "--max-memory", sizes[i][0], NULL};
        Options o;
        char err[OPTIONS_ERROR_SIZE];
        assert_int_equal(parse(argv, &o, err), 0);
        assert_true(o.max_memory == strtoull(sizes[i][1], NULL, 10));
    }
    const char *bad[] = {"", "0", "-1", "12x", "5GB2", "M", "99999999999999999999T"};
    for (int i = 0; i < 7; i++) {
        char *argv[] = {"attnscope", "--max-memory", (char *)bad[i], NULL};
        Options o;
        char err[OPTIONS_ERROR_SIZE] = "";
        assert_int_equal(parse(argv, &o, err), 2);
        assert_non_null(strstr(err, "--max-memory"));
    }
    char *argv[] = {"attnscope", "-T", "4096", "-d", "4096", "--max-memory", "1G", NULL};
    Options o;
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(parse(argv, &o, err), 0);
    assert_int_equal(Options_check_memory(&o, &o.config, err, sizeof err), -1);
    assert_non_null(strstr(err, "above the memory budget of 1024 MiB"));
    o.config.tokens = o.config.width = 256;
    assert_int_equal(Options_check_memory(&o, &o.config, err, sizeof err), 0);
    /* A budget below 1 MiB shows in the unit that holds it (it printed as "0 MiB"). */
    char *small[] = {"attnscope", "-T", "8", "-d", "8", "-L", "1", "--max-memory", "1K", NULL};
    assert_int_equal(parse(small, &o, err), 0);
    assert_int_equal(Options_check_memory(&o, &o.config, err, sizeof err), -1);
    assert_non_null(strstr(err, "above the memory budget of 1 KiB "));
    o.max_memory = 0; /* the default: half of the physical memory, never 0 */
    assert_true(Options_memory_budget(&o) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_option),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_bad_combinations),
        cmocka_unit_test(test_preset_applies_and_later_options_override),
        cmocka_unit_test(test_preset_round_trip),
        cmocka_unit_test(test_preset_errors),
        cmocka_unit_test(test_preset_long_line_and_directory),
        cmocka_unit_test(test_bytes_text),
        cmocka_unit_test(test_memory_budget),
    };
    return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
