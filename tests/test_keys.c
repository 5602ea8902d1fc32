/* The key table: every key of the screen is bound exactly once, the help is
 * written from the same table, and no sequence of keys can leave settings that Config_validate
 * refuses. */
#include "testing.h"

#include "ascii.h"
#include "keys.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>

static void test_every_spec_key_bound(void **state)
{
    (void)state;
    const char *letters = "TtDdLlSsaAmMWwnNkKgG][r?q";
    for (const char *k = letters; *k; k++) {
        const KeyBinding *b = Keys_find(*k);
        if (!b)
            fail_msg("key '%c' of the screen is not bound", *k);
        char name[2] = {*k, '\0'};
        assert_string_equal(b->name, name);
    }
    assert_int_equal(Keys_find('q')->kind, ACTION_QUIT);
    assert_int_equal(Keys_find('?')->kind, ACTION_HELP);
    assert_int_equal(Keys_find('L' & 0x1f)->kind, ACTION_REDRAW);
    assert_non_null(Keys_find(KEY_LEFT));
    assert_non_null(Keys_find(KEY_RIGHT));
    /* y toggles the attention map between the shown layer's A and the product A_ℓ⋯A_1. */
    assert_non_null(Keys_find('y'));
    /* No Alt, Ctrl-S or Ctrl-Q bindings (flow control and terminals disagree on them); Esc
       alone cancels the running export or job. */
    assert_null(Keys_find('S' & 0x1f));
    assert_null(Keys_find('Q' & 0x1f));
    assert_int_equal(Keys_find(27)->kind, ACTION_CANCEL);
}

/* y steps the attention map's setting, which shows in the map view alone: elsewhere its note
   says so (it had set map=product silently); in the map view the map itself shows it. */
static void test_map_key_outside_its_view_says_where(void **state)
{
    (void)state;
    Config start = Config_default();
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE] = "";
    assert_true(Keys_apply(Keys_find('y'), &c, note, sizeof note));
    assert_int_equal(c.config.attention_map, ATTENTION_MAP_PRODUCT);
    assert_non_null(strstr(note, "attention map product: drawn in the attention-map view alone"));
    c.display.panel = PANEL_ATTENTION_MAP;
    note[0] = '\0';
    assert_true(Keys_apply(Keys_find('y'), &c, note, sizeof note));
    assert_int_equal(c.config.attention_map, ATTENTION_MAP_LAYER);
    assert_null(strstr(note, "attention-map view"));
}

static void test_no_duplicates_and_complete_entries(void **state)
{
    (void)state;
    int n = Keys_count();
    assert_true(n >= 28);
    for (int i = 0; i < n; i++) {
        const KeyBinding *a = Keys_at(i);
        assert_non_null(a->name);
        assert_true(a->help && a->help[0]);
        assert_true((a->kind == ACTION_SETTING) == (a->setting != NULL));
        assert_true((a->kind == ACTION_DISPLAY) == (a->apply != NULL));
        for (int j = i + 1; j < n; j++) {
            if (Keys_at(j)->key == a->key)
                fail_msg("key %s bound twice", a->name);
            if (strcmp(Keys_at(j)->name, a->name) == 0)
                fail_msg("key name %s used twice", a->name);
        }
        assert_ptr_equal(Keys_find(a->key), a);
    }
    assert_null(Keys_at(n));
    assert_null(Keys_at(-1));
}

static void test_help_from_table(void **state)
{
    (void)state;
    for (int i = 0; i < Keys_count(); i++) {
        const KeyBinding *b = Keys_at(i);
        char line[KEYS_HELP_SIZE];
        Keys_help_line(b, line, sizeof line);
        assert_int_equal(strncmp(line, b->name, strlen(b->name)), 0);
        assert_non_null(strstr(line, b->help));
        if (Ascii_columns(line) > KEYS_HELP_COLUMNS)
            fail_msg("help line '%s' is wider than %d columns", line, KEYS_HELP_COLUMNS);
    }
    char line[KEYS_HELP_SIZE];
    Keys_help_line(Keys_find('T'), line, sizeof line);
    assert_string_equal(line, "T       tokens T ×2");
}

/* At 80×24 the help has 22 rows inside its frame and two columns of (80 − 4 − 3)/2 = 36:
   the compact lines (a setting's two keys on one) fit both ways, in UTF-8 and in ASCII, so
   that no description is cut (× from ÷, next from previous); more than 2 × 22 of them go on
   pages (tests/tui/help.sh), never into columns that would cut them. */
static void test_compact_help_fits_80x24(void **state)
{
    (void)state;
    int lines = 0;
    for (int i = 0; i < Keys_count(); lines++) {
        char line[KEYS_HELP_SIZE], ascii[2 * KEYS_HELP_SIZE];
        int took = Keys_help_compact(Keys_at(i), Keys_at(i + 1), line, sizeof line);
        assert_true(took == 1 || took == 2);
        Ascii_transliterate(line, ascii, sizeof ascii);
        if (Ascii_columns(line) > 36 || Ascii_columns(ascii) > 36)
            fail_msg("compact help line '%s' ('%s') is wider than 36 columns", line, ascii);
        i += took;
    }
    assert_true(lines > 0);
    char line[KEYS_HELP_SIZE];
    assert_int_equal(Keys_help_compact(Keys_find('T'), Keys_find('t'), line, sizeof line), 2);
    assert_string_equal(line, "T t   tokens T ×2|÷2");
    assert_int_equal(Keys_help_compact(Keys_find('T'), Keys_find('D'), line, sizeof line), 1);
    assert_string_equal(line, "T     tokens T ×2");
}

/* Applies key to c; returns whether it changed anything, the note in note. */
static bool press(Controls *c, int key, char *note)
{
    note[0] = '\0';
    const KeyBinding *b = Keys_find(key);
    assert_non_null(b);
    assert_int_equal(b->kind, ACTION_SETTING);
    return Keys_apply(b, c, note, KEYS_NOTE_SIZE);
}

/* A note that names the key to press says "press K to ...": a key bare in parentheses,
   "() raises heads H)", reads as garbled punctuation. */
static void test_bound_notes_name_keys_as_keys(void **state)
{
    (void)state;
    Config start = Config_default();
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE];
    assert_int_equal(c.config.heads, 1);
    assert_false(press(&c, '}', note));
    assert_string_equal(note, "shown head is at its maximum, H = 1 (press ) to raise heads H)");
    /* The window is bounded by T less one. */
    c.config.mask = MASK_WINDOW;
    c.config.window = c.config.tokens - 1;
    assert_false(press(&c, 'W', note));
    assert_non_null(strstr(note, "(press T to raise tokens T)"));
    /* T raising d names the key that takes d back. */
    assert_true(press(&c, 'T', note));
    assert_non_null(strstr(note, "(the input needs T ≤ d; press t to lower it back)"));
}

/* A note that says to raise a setting names the key that raises it ("raise H (H)" named
   QK-norm's key). */
static void test_notes_name_the_key_that_raises(void **state)
{
    (void)state;
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        for (int k = 0; s->unused_note && k < Settings_count(); k++) {
            const Setting *b = Settings_at(k);
            char raise[64], press[80];
            snprintf(raise, sizeof raise, "raise %s ", b->label);
            snprintf(press, sizeof press, "press %c to raise %s ", b->raise_key, b->label);
            if (b->raise_key && strstr(s->unused_note, raise) && !strstr(s->unused_note, press))
                fail_msg("%s's note '%s' does not say '%s'", s->name, s->unused_note, press);
        }
    }
}

static void test_tokens_and_width(void **state)
{
    (void)state;
    Config start = Config_default();
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE];
    assert_true(press(&c, 'T', note));
    assert_int_equal(c.config.tokens, 512);
    assert_int_equal(c.config.width, 512);
    assert_non_null(strstr(note, "d raised to 512"));
    assert_true(press(&c, 'D', note));
    assert_int_equal(c.config.width, 1024);
    assert_string_equal(note, "");
    for (int i = 0; i < 8; i++)
        press(&c, 'T', note);
    assert_int_equal(c.config.tokens, CONFIG_TOKENS_MAX);
    assert_false(press(&c, 'T', note));
    assert_non_null(strstr(note, "maximum"));
    /* d halved below T takes T down with it. */
    assert_true(press(&c, 'd', note));
    assert_int_equal(c.config.width, 2048);
    assert_int_equal(c.config.tokens, 2048);
    assert_non_null(strstr(note, "T lowered to 2048"));
    for (int i = 0; i < 12; i++)
        press(&c, 't', note);
    assert_int_equal(c.config.tokens, 2);
    assert_false(press(&c, 't', note));
    assert_non_null(strstr(note, "minimum, 2"));
}

/* A cycle passes over the names another setting rules out: cutting-skip draws an
   orthogonal W^O, so with a Gaussian one C goes from deepnorm on to mimetic, and O does not
   make cutting-skip's W^O Gaussian. */
static void test_cycles_skip_what_others_rule_out(void **state)
{
    (void)state;
    Config start = Config_default();
    start.output = OUTPUT_GAUSSIAN;
    start.init = INIT_DEEPNORM;
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE], err[256];
    assert_true(press(&c, 'C', note));
    assert_int_equal(c.config.init, INIT_MIMETIC);
    start.output = OUTPUT_IDENTITY;
    c = Controls_from(&start);
    assert_true(press(&c, 'C', note));
    assert_int_equal(c.config.init, INIT_CUTTING_SKIP);
    assert_true(press(&c, 'O', note));
    assert_int_equal(c.config.output, OUTPUT_ORTHOGONAL);
    assert_true(press(&c, 'O', note));
    assert_int_equal(c.config.output, OUTPUT_IDENTITY);
    assert_int_equal(Config_validate(&c.config, err, sizeof err), 0);
}

static void test_window_and_layer_clamps(void **state)
{
    (void)state;
    Config start = Config_default();
    start.mask = MASK_WINDOW;
    start.tokens = 16;
    start.window = 15;
    start.depth = 4;
    start.layer = 4;
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE];
    assert_false(press(&c, 'W', note));
    assert_non_null(strstr(note, "maximum, T"));
    assert_true(press(&c, 't', note));
    assert_int_equal(c.config.tokens, 8);
    assert_int_equal(c.config.window, 7);
    assert_non_null(strstr(note, "w lowered to 7"));
    assert_true(press(&c, 'l', note));
    assert_int_equal(c.config.depth, 3);
    assert_int_equal(c.config.layer, 3);
    assert_non_null(strstr(note, "shown layer lowered to 3"));
    assert_false(press(&c, ']', note));
    assert_false(press(&c, KEY_RIGHT, note));
    assert_true(press(&c, KEY_LEFT, note));
    assert_true(press(&c, '[', note));
    assert_int_equal(c.config.layer, 1);
    assert_false(press(&c, '[', note));
    /* w is kept for the window masks; elsewhere the note says it does nothing now. */
    c.config.mask = MASK_FULL;
    assert_true(press(&c, 'w', note));
    assert_non_null(strstr(note, "window masks"));
}

static void test_sigma_steps(void **state)
{
    (void)state;
    Config start = Config_default();
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE];
    press(&c, 'S', note);
    assert_close(c.config.sigma_qk, pow(2.0, 0.25), 1e-15);
    for (int i = 0; i < 3; i++)
        press(&c, 'S', note);
    assert_true(c.config.sigma_qk == 2.0);
    for (int i = 0; i < 4; i++)
        press(&c, 's', note);
    assert_true(c.config.sigma_qk == 1.0);
    for (int i = 0; i < 20; i++)
        press(&c, 'S', note);
    assert_true(c.config.sigma_qk == CONFIG_SIGMA_QK_MAX);
    assert_false(press(&c, 'S', note));
    for (int i = 0; i < 100; i++)
        press(&c, 's', note);
    assert_true(c.config.sigma_qk > 0);
    assert_false(press(&c, 's', note));
}

static void test_cycles_gap_and_seed(void **state)
{
    (void)state;
    Config start = Config_default();
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE];
    for (int i = 0; i < ATTENTION_NAMES.count; i++) {
        assert_int_equal(c.config.attention, i);
        press(&c, 'a', note);
    }
    assert_int_equal(c.config.attention, ATTENTION_SOFTMAX);
    press(&c, 'A', note);
    assert_int_equal(c.config.attention, ATTENTION_IDENTITY);
    press(&c, 'm', note);
    assert_int_equal(c.config.mask, MASK_CAUSAL);
    press(&c, 'M', note);
    press(&c, 'M', note);
    assert_int_equal(c.config.mask, MASK_WINDOW_CAUSAL);
    press(&c, 'n', note);
    assert_int_equal(c.config.layernorm, LAYERNORM_RMS);
    press(&c, 'N', note);
    press(&c, 'N', note);
    assert_int_equal(c.config.layernorm, LAYERNORM_LN);
    press(&c, 'k', note);
    assert_int_equal(c.config.skip, SKIP_PLAIN);
    press(&c, 'K', note);
    press(&c, 'K', note);
    assert_int_equal(c.config.skip, SKIP_SCALED);

    /* g toggles; G picks the mode; g off and on again brings the same mode back. */
    press(&c, 'g', note);
    assert_int_equal(c.config.gap, GAP_CENTER);
    press(&c, 'G', note);
    assert_int_equal(c.config.gap, GAP_UNIFORM);
    press(&c, 'G', note);
    press(&c, 'G', note);
    assert_int_equal(c.config.gap, GAP_OUTLIERS);
    press(&c, 'G', note);
    assert_int_equal(c.config.gap, GAP_CENTER);
    press(&c, 'G', note);
    press(&c, 'g', note);
    assert_int_equal(c.config.gap, GAP_OFF);
    press(&c, 'g', note);
    assert_int_equal(c.config.gap, GAP_UNIFORM);
    press(&c, 'g', note);
    press(&c, 'G', note);
    assert_int_equal(c.config.gap, GAP_UNIFORM);
    assert_non_null(strstr(note, "on"));

    uint64_t seed = c.config.seed;
    press(&c, 'r', note);
    assert_true(c.config.seed == seed + 1);
}

/* The view keys change only the display (no new job), and the help lists them. */
static void test_display_keys(void **state)
{
    (void)state;
    Config start = Config_default();
    Controls c = Controls_from(&start);
    assert_true(c.display.overlays);
    assert_int_equal(c.display.panel, PANEL_STABLE_RANK);
    assert_false(c.display.compare);
    const char *keys = "ovVc";
    for (const char *k = keys; *k; k++) {
        const KeyBinding *b = Keys_find(*k);
        if (!b)
            fail_msg("display key '%c' is not bound", *k);
        assert_int_equal(b->kind, ACTION_DISPLAY);
    }
    char note[KEYS_NOTE_SIZE] = "";
    assert_true(Keys_apply(Keys_find('o'), &c, note, sizeof note));
    assert_false(c.display.overlays);
    assert_non_null(strstr(note, "overlays off"));
    const Panel order[] = {PANEL_WIDTH_SWEEP,   PANEL_GRADIENT,     PANEL_SIMILARITY, PANEL_ENTROPY,
                           PANEL_ATTENTION_MAP, PANEL_CONDITIONING, PANEL_STABLE_RANK};
    for (int i = 0; i < 7; i++) {
        note[0] = '\0';
        Keys_apply(Keys_find('v'), &c, note, sizeof note);
        assert_int_equal(c.display.panel, order[i]);
        assert_non_null(strstr(note, Panel_name(order[i])));
    }
    Keys_apply(Keys_find('V'), &c, note, sizeof note);
    assert_int_equal(c.display.panel, PANEL_CONDITIONING);
    Keys_apply(Keys_find('c'), &c, note, sizeof note);
    assert_true(c.display.compare);
    assert_int_equal(Keys_find('x')->kind, ACTION_EXPORT);
    assert_int_equal(Keys_find('p')->kind, ACTION_SAVE_PRESET);
    assert_int_equal(Keys_find('P')->kind, ACTION_PICK_PRESET);
    assert_int_equal(Keys_find('>')->kind, ACTION_TOUR_NEXT);
    assert_int_equal(Keys_find('<')->kind, ACTION_TOUR_PREVIOUS);
    assert_true(Config_equal(&c.config, &start));

    /* Presentation mode and zoom: b toggles, z cycles the panels and back to all of them
       (four in the compare view, three otherwise; toggling the compare view unzooms). */
    assert_false(c.display.present);
    note[0] = '\0';
    assert_true(Keys_apply(Keys_find('Z'), &c, note, sizeof note));
    assert_true(c.display.present);
    assert_non_null(strstr(note, "presentation mode on"));
    for (int zoom = 1; zoom <= 5; zoom++) {
        Keys_apply(Keys_find('z'), &c, note, sizeof note);
        assert_int_equal(c.display.zoom, zoom % 5);
    }
    Keys_apply(Keys_find('z'), &c, note, sizeof note);
    Keys_apply(Keys_find('c'), &c, note, sizeof note);
    assert_false(c.display.compare);
    assert_int_equal(c.display.zoom, 0);
    for (int zoom = 1; zoom <= 4; zoom++) {
        Keys_apply(Keys_find('z'), &c, note, sizeof note);
        assert_int_equal(c.display.zoom, zoom % 4);
    }
    Keys_apply(Keys_find('Z'), &c, note, sizeof note);
    assert_false(c.display.present);
    assert_true(Config_equal(&c.config, &start));

    /* The help overlay is written from the table: every new key is in it. */
    const char *expected[] = {"theory overlays",   "view: rank",        "view previous", "compare",
                              "ensemble seeds ×2", "ensemble seeds ÷2", "presentation",  "zoom"};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        bool found = false;
        for (int k = 0; k < Keys_count(); k++) {
            char line[KEYS_HELP_SIZE];
            Keys_help_line(Keys_at(k), line, sizeof line);
            found = found || strstr(line, expected[i]);
        }
        if (!found)
            fail_msg("the help lacks \"%s\"", expected[i]);
    }
}

static void test_ensemble_keys(void **state)
{
    (void)state;
    Config start = Config_default();
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE];
    assert_false(press(&c, 'e', note));
    assert_non_null(strstr(note, "one seed"));
    for (int i = 0; i < 6; i++)
        assert_true(press(&c, 'E', note));
    assert_int_equal(c.config.seeds, CONFIG_SEEDS_KEY_MAX);
    assert_false(press(&c, 'E', note));
    assert_non_null(strstr(note, "maximum, 64"));
    assert_true(press(&c, 'e', note));
    assert_int_equal(c.config.seeds, 32);
}

/* A cycling key passes over the names the other settings refuse, and a key whose step would
   break a relation no key settles stops, saying why. */
static void test_keys_keep_the_relations(void **state)
{
    (void)state;
    Config start = Config_default();
    start.init = INIT_MIMETIC;
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE];
    assert_true(press(&c, 'O', note));
    assert_int_equal(c.config.output, OUTPUT_GAUSSIAN);
    /* orthogonal is refused under mimetic: the next name is identity again. */
    assert_true(press(&c, 'O', note));
    assert_int_equal(c.config.output, OUTPUT_IDENTITY);
    assert_true(press(&c, 'U', note));
    assert_int_equal(c.config.output, OUTPUT_GAUSSIAN);
    /* The identity is a square matrix's: the MLP ratio stays at 1. */
    start = Config_default();
    start.mlp = MLP_RELU;
    start.mlp_ratio = 1;
    start.init_mlp = MATRIX_INIT_IDENTITY;
    c = Controls_from(&start);
    assert_false(press(&c, 'R', note));
    assert_int_equal(c.config.mlp_ratio, 1);
    assert_non_null(strstr(note, "MLP ratio stays at 1: --init-mlp identity"));
    /* Fewer heads take the key/value heads down with them (G ≤ H), which then divide H. */
    start = Config_default();
    start.heads = 4;
    start.kv_heads = 4;
    c = Controls_from(&start);
    assert_true(press(&c, '(', note));
    assert_int_equal(c.config.heads, 2);
    assert_int_equal(c.config.kv_heads, 2);
    assert_non_null(strstr(note, "K/V heads G lowered to 2 with H (G ≤ H)"));
    /* Heads of --head-dim's width need not divide d: 8 heads of 4 on d = 40 double to 16. */
    start = Config_default();
    start.width = start.tokens = 40;
    start.heads = 8;
    start.head_dim = 4;
    start.output = OUTPUT_GAUSSIAN;
    c = Controls_from(&start);
    assert_true(press(&c, ')', note));
    assert_int_equal(c.config.heads, 16);
    /* The embedding input takes T > d; = back to orthonormal rows takes T down to d, and T
       then raises d again as the bound says. */
    start = Config_default();
    start.input = INPUT_EMBEDDING;
    start.tokens = 64;
    start.width = 16;
    c = Controls_from(&start);
    assert_true(press(&c, 'T', note));
    assert_int_equal(c.config.tokens, 128);
    assert_int_equal(c.config.width, 16);
    assert_true(press(&c, '=', note));
    assert_int_equal(c.config.input, INPUT_ORTHONORMAL);
    assert_int_equal(c.config.tokens, 16);
    assert_non_null(strstr(note, "tokens T lowered to 16 with d (the input needs T ≤ d)"));
    assert_true(press(&c, 'T', note));
    assert_int_equal(c.config.width, 32);
}

/* Random key sequences from random valid starts never produce an invalid Config. */
static void test_settings_stay_valid(void **state)
{
    (void)state;
    srand(12345);
    int settings[64], n = 0;
    for (int i = 0; i < Keys_count(); i++)
        if (Keys_at(i)->kind == ACTION_SETTING)
            settings[n++] = Keys_at(i)->key;
    for (int run = 0; run < 50; run++) {
        Config start = Config_default();
        /* The embedding input takes any T, so d may be below it. */
        start.input = (InputKind)(rand() % INPUT_NAMES.count);
        start.vocab = 1 + rand() % 100;
        start.positions = (Positions)(rand() % POSITIONS_NAMES.count);
        start.tokens = 2 + rand() % 60;
        start.width = start.input == INPUT_EMBEDDING ? 1 + rand() % 64 : start.tokens + rand() % 40;
        start.depth = 1 + rand() % 5;
        start.layer = 1 + rand() % start.depth;
        start.mask = (Mask)(rand() % MASK_NAMES.count);
        start.window = 1 + rand() % (start.tokens - 1);
        /* Heads dividing the width, so that the keys must keep H | d as d moves. */
        for (int h = 1 << (rand() % 4); h > 1 && start.heads == 1; h /= 2)
            if (start.width % h == 0)
                start.heads = h;
        start.head = 1 + rand() % start.heads;
        /* Grouped keys and values (a divisor of H, or 0), a gated MLP of its own width. */
        start.kv_heads = rand() % 2 ? start.heads >> (rand() % 3) : 0;
        if (start.kv_heads == 0 || start.heads % start.kv_heads)
            start.kv_heads = 0;
        start.mlp = (Mlp)(rand() % MLP_NAMES.count);
        start.mlp_hidden = rand() % 2 ? 1 + rand() % 48 : 0;
        /* Any scheme (a factorised one cannot share K/V heads: then the normal one), and
           any depth scale. */
        start.init = (InitScheme)(rand() % INIT_NAMES.count);
        start.init_std = 0.005 * (1 + rand() % 8);
        start.depth_scale = (DepthScale)(rand() % DEPTH_SCALE_NAMES.count);
        /* Sinks: none, or a logit of either sign with a spread or not. */
        start.sink = rand() % 2 ? -INFINITY : (rand() % 200 - 100) / 10.0;
        start.sink_std = rand() % 2 ? (rand() % 100) / 100.0 : 0;
        /* A window pattern of the user's (a few letters), or all. */
        char letters[6] = "";
        for (int k = 0, count = rand() % 6; k < count; k++)
            letters[k] = rand() % 2 ? 'L' : 'G';
        if (letters[0])
            assert_int_equal(Config_window_layers_code(letters, &start.window_layers), 0);
        char err[256];
        if (Config_validate(&start, err, sizeof err))
            start.init = INIT_NORMAL;
        assert_int_equal(Config_validate(&start, err, sizeof err), 0);
        Controls c = Controls_from(&start);
        for (int step = 0; step < 2000; step++) {
            char note[KEYS_NOTE_SIZE];
            press(&c, settings[rand() % n], note);
            if (Config_validate(&c.config, err, sizeof err))
                fail_msg("after %d keys: %s", step + 1, err);
            assert_true(c.config.sigma_qk > 0 && c.config.sigma_qk <= CONFIG_SIGMA_QK_MAX);
            assert_true(c.config.width <= CONFIG_WIDTH_MAX && c.config.tokens >= 2);
            assert_true(c.on_values.gap != GAP_OFF);
            /* % steps none, 0, 1, 2, 4, 8, none: never NaN or +∞. */
            assert_true(c.config.sink == -INFINITY || isfinite(c.config.sink));
        }
    }
}

/* % steps the sink none, 0, 1, 2, 4, 8 and back to none; from a value of the user's it goes
   on from there. */
static void test_sink_key_cycles_through_none(void **state)
{
    (void)state;
    Config start = Config_default();
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE];
    const double cycle[] = {0, 1, 2, 4, 8, -INFINITY, 0};
    for (size_t i = 0; i < sizeof cycle / sizeof cycle[0]; i++) {
        assert_true(press(&c, '%', note));
        assert_true(c.config.sink == cycle[i]);
    }
    start.sink = -3.5;
    c = Controls_from(&start);
    assert_true(press(&c, '%', note));
    assert_true(c.config.sink == 1);
    start.sink = 5;
    c = Controls_from(&start);
    assert_true(press(&c, '%', note));
    assert_true(c.config.sink == 8);
    /* Without softmax the sink has no effect: the key steps it and says so (the row's
       unused note), as --batch warns, rather than refusing it. */
    start.attention = ATTENTION_MARKOV;
    c = Controls_from(&start);
    assert_true(press(&c, '%', note));
    assert_true(c.config.sink == 8);
    assert_non_null(strstr(note, "the sink joins the softmax's denominator: softmax attention"));
    start.sink = 8;
    c = Controls_from(&start);
    assert_true(press(&c, '%', note));
    assert_true(c.config.sink == -INFINITY);
    /* A key that leaves another setting, away from its default, without effect says so. */
    start = Config_default();
    start.sink = 5;
    c = Controls_from(&start);
    assert_true(press(&c, 'a', note)); /* softmax → markov */
    assert_int_equal(c.config.attention, ATTENTION_MARKOV);
    assert_non_null(strstr(note, "sink now has no effect: the sink joins the softmax's"));
    start.sink = -INFINITY; /* at its default: nothing said */
    c = Controls_from(&start);
    assert_true(press(&c, 'a', note));
    assert_null(strstr(note, "sink"));
}

/* ; steps the window pattern all, 1:1, 5:1 and back; a pattern of the user's goes to the
   first stop.  With a global mask the pattern is unused, and the key says so. */
static void test_window_layers_key_cycles(void **state)
{
    (void)state;
    Config start = Config_default();
    start.mask = MASK_WINDOW_CAUSAL;
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE];
    const char *const cycle[] = {"1:1", "5:1", "all", "1:1"};
    for (size_t i = 0; i < sizeof cycle / sizeof cycle[0]; i++) {
        assert_true(press(&c, ';', note));
        char text[WINDOW_LAYERS_PERIOD_MAX + 1];
        Config_window_layers_text(c.config.window_layers, text, sizeof text);
        assert_string_equal(text, cycle[i]);
    }
    assert_int_equal(Config_window_layers_code("GGL", &start.window_layers), 0);
    c = Controls_from(&start);
    assert_true(press(&c, ';', note));
    assert_true(c.config.window_layers == 0);
    start.mask = MASK_CAUSAL;
    c = Controls_from(&start);
    assert_true(press(&c, ';', note));
    assert_non_null(strstr(note, "the pattern picks window or global masks per layer"));
}

/* t undoes the d that T raised, saying so: T T T T t from T = d = 256 is T = d = 2048, and
   T×5 then t×5 from T = d = 128 is back at d = 128. */
static void test_lowering_undoes_the_raised_bound(void **state)
{
    (void)state;
    Config start = Config_default();
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE];
    for (int i = 0; i < 4; i++)
        press(&c, 'T', note);
    assert_int_equal(c.config.tokens, 4096);
    assert_int_equal(c.config.width, 4096);
    assert_true(press(&c, 't', note));
    assert_int_equal(c.config.tokens, 2048);
    assert_int_equal(c.config.width, 2048);
    assert_non_null(strstr(note, "d lowered back to 2048 (T had raised it)"));

    start.tokens = start.width = 128;
    c = Controls_from(&start);
    for (int i = 0; i < 5; i++)
        press(&c, 'T', note);
    assert_int_equal(c.config.width, 4096);
    for (int i = 0; i < 5; i++)
        press(&c, 't', note);
    assert_int_equal(c.config.tokens, 128);
    assert_int_equal(c.config.width, 128);

    /* From T = 128, d = 256: d was not raised until T passed it, and comes back to 256. */
    start.width = 256;
    c = Controls_from(&start);
    for (int i = 0; i < 3; i++)
        press(&c, 'T', note);
    assert_int_equal(c.config.width, 1024);
    for (int i = 0; i < 3; i++)
        press(&c, 't', note);
    assert_int_equal(c.config.tokens, 128);
    assert_int_equal(c.config.width, 256);

    /* A d the user chose stays: T raises d, D raises it further, t leaves it. */
    start.tokens = start.width = 256;
    c = Controls_from(&start);
    press(&c, 'T', note);
    press(&c, 'D', note);
    assert_int_equal(c.config.width, 1024);
    press(&c, 't', note);
    assert_int_equal(c.config.tokens, 256);
    assert_int_equal(c.config.width, 1024);
    assert_null(strstr(note, "lowered back"));
}

/* T undoes the w that t lowered, saying so: from T = 64, w = 39 (a checkpoint's window),
   t then T is back at w = 39; a chain t t T T comes back step by step; a w the user chose
   after the lowering stays. */
static void test_raising_undoes_the_lowered_window(void **state)
{
    (void)state;
    Config start = Config_default();
    start.tokens = start.width = 64;
    start.window = 39;
    Controls c = Controls_from(&start);
    char note[KEYS_NOTE_SIZE];
    assert_true(press(&c, 't', note));
    assert_int_equal(c.config.tokens, 32);
    assert_int_equal(c.config.window, 31);
    assert_true(press(&c, 'T', note));
    assert_int_equal(c.config.tokens, 64);
    assert_int_equal(c.config.window, 39);
    assert_non_null(strstr(note, "window w raised back to 39 (T had lowered it)"));

    c = Controls_from(&start);
    press(&c, 't', note);
    press(&c, 't', note);
    assert_int_equal(c.config.window, 15);
    press(&c, 'T', note);
    assert_int_equal(c.config.window, 31);
    press(&c, 'T', note);
    assert_int_equal(c.config.window, 39);
    press(&c, 'T', note);
    assert_int_equal(c.config.window, 39);
    assert_null(strstr(note, "raised back"));

    c = Controls_from(&start);
    press(&c, 't', note);
    press(&c, 'w', note);
    assert_int_equal(c.config.window, 30);
    press(&c, 'T', note);
    assert_int_equal(c.config.tokens, 64);
    assert_int_equal(c.config.window, 30);
    assert_null(strstr(note, "raised back"));
}

/* F1 and h open the help as ? does; keys are named as people write them. */
static void test_help_keys_and_key_names(void **state)
{
    (void)state;
    assert_int_equal(Keys_find(KEY_F(1))->kind, ACTION_HELP);
    assert_int_equal(Keys_find('h')->kind, ACTION_HELP);
    assert_int_equal(Keys_find('!')->kind, ACTION_WARNINGS);
    assert_non_null(strstr(Keys_find('?')->help, "Esc ? q close it"));
    const struct {
        int key;
        const char *name;
    } cases[] = {{KEY_F(1), "F1"},    {KEY_F(5), "F5"},       {27, "Esc"},
                 {' ', "Space"},      {'\n', "Enter"},        {KEY_ENTER, "Enter"},
                 {KEY_LEFT, "←"},     {KEY_UP, "↑"},          {'\t', "Tab"},
                 {'z', "z"},          {'L' & 0x1f, "Ctrl-L"}, {'B' & 0x1f, "Ctrl-B"},
                 {KEY_NPAGE, "PgDn"}, {127, "Backspace"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        Keys_name(cases[i].key, name, sizeof name);
        assert_string_equal(name, cases[i].name);
        assert_null(strchr(name, '#'));
    }
}

/* The man page's KEYS section lists every binding as the help overlay does, so a key added,
   renamed or re-described fails here until the man page says the same. */
static void test_every_key_in_the_man_page(void **state)
{
    (void)state;
    FILE *f = fopen("attnscope.1", "r");
    assert_non_null(f); /* the tests run from the source tree's root */
    static char page[1 << 17];
    size_t length = fread(page, 1, sizeof page - 1, f);
    fclose(f);
    assert_true(length < sizeof page - 1);
    page[length] = '\0';
    for (int i = 0; i < Keys_count(); i++) {
        const KeyBinding *b = Keys_at(i);
        char entry[256];
        snprintf(entry, sizeof entry, ".TP\n\\fB%s\\fR\n%s\n", b->name, b->help);
        if (!strstr(page, entry))
            fail_msg("attnscope.1 lacks the key %s (\"%s\") in its KEYS section", b->name, b->help);
    }
}

/* The README's keys table (the rows of its "### Keys" section) names every binding of the help
   overlay: a single-character key in backquotes (`x`), a named one (F1, Ctrl-L, ←) as the help
   names it, so that a key added to the table fails here until the README lists it. */
static void test_every_key_in_the_readme(void **state)
{
    (void)state;
    FILE *f = fopen("README.md", "r");
    assert_non_null(f); /* the tests run from the source tree's root */
    static char readme[1 << 18], rows[1 << 15];
    size_t length = fread(readme, 1, sizeof readme - 1, f);
    fclose(f);
    assert_true(length < sizeof readme - 1);
    readme[length] = '\0';
    const char *section = strstr(readme, "\n### Keys\n");
    assert_non_null(section);
    /* The table's rows: the lines from the first "| key" up to the first line not a row. */
    const char *row = strstr(section, "\n| key");
    assert_non_null(row);
    size_t used = 0;
    for (row++; *row == '|';) {
        const char *end = strchr(row, '\n');
        size_t n = end ? (size_t)(end - row) + 1 : strlen(row);
        assert_true(used + n < sizeof rows);
        memcpy(rows + used, row, n);
        used += n;
        row += n;
    }
    rows[used] = '\0';
    for (int i = 0; i < Keys_count(); i++) {
        char name[32], quoted[40];
        Keys_name(Keys_at(i)->key, name, sizeof name);
        snprintf(quoted, sizeof quoted, "`%s`", name);
        bool named = strlen(name) > 1 && strstr(rows, name);
        if (!strstr(rows, quoted) && !named)
            fail_msg("README.md's keys table lacks the key %s (\"%s\")", name, Keys_at(i)->help);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_spec_key_bound),
        cmocka_unit_test(test_map_key_outside_its_view_says_where),
        cmocka_unit_test(test_bound_notes_name_keys_as_keys),
        cmocka_unit_test(test_notes_name_the_key_that_raises),
        cmocka_unit_test(test_every_key_in_the_man_page),
        cmocka_unit_test(test_every_key_in_the_readme),
        cmocka_unit_test(test_no_duplicates_and_complete_entries),
        cmocka_unit_test(test_help_from_table),
        cmocka_unit_test(test_compact_help_fits_80x24),
        cmocka_unit_test(test_tokens_and_width),
        cmocka_unit_test(test_cycles_skip_what_others_rule_out),
        cmocka_unit_test(test_window_and_layer_clamps),
        cmocka_unit_test(test_sigma_steps),
        cmocka_unit_test(test_lowering_undoes_the_raised_bound),
        cmocka_unit_test(test_raising_undoes_the_lowered_window),
        cmocka_unit_test(test_help_keys_and_key_names),
        cmocka_unit_test(test_cycles_gap_and_seed),
        cmocka_unit_test(test_keys_keep_the_relations),
        cmocka_unit_test(test_settings_stay_valid),
        cmocka_unit_test(test_sink_key_cycles_through_none),
        cmocka_unit_test(test_window_layers_key_cycles),
        cmocka_unit_test(test_display_keys),
        cmocka_unit_test(test_ensemble_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
