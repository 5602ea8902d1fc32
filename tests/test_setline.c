/* The screen's `:` line as keys reach it: Tab's completion (one match, several in turn, an
 * enumeration's values, none), ↑/↓ through the session's lines, and what Enter sets into the
 * Controls a key would change (or refuses, changing nothing). */
#include "testing.h"

#include "setline.h"
#include "setting_line.h"

#include <curses.h> /* KEY_UP, KEY_DOWN, KEY_LEFT */
#include <string.h>

static void type(SetLine *l, const char *text, const Config *c)
{
    for (const char *p = text; *p; p++)
        assert_int_equal(SetLine_key(l, *p, c), PROMPT_EDITED);
}

static void test_tab_completes_one_name_and_says_what_it_accepts(void **state)
{
    (void)state;
    Config c = Config_default();
    SetLine l = {0};
    SetLine_open(&l);
    type(&l, "heads 4 --kv-he", &c);
    assert_int_equal(SetLine_key(&l, '\t', &c), PROMPT_EDITED);
    assert_string_equal(l.prompt.text, "heads 4 --kv-heads ");
    assert_ptr_equal(l.prompt.detail, l.detail);
    assert_non_null(strstr(l.detail, "--kv-heads G: "));
    assert_non_null(strstr(l.detail, "now 0"));
    char accepted[160], expected[200];
    SettingLine_accepted(Settings_find("kv-heads"), accepted, sizeof accepted);
    snprintf(expected, sizeof expected, "accepted %s;", accepted);
    assert_non_null(strstr(l.detail, expected));
}

/* Several matches come in table order, one a Tab, round; another key ends the cycle. */
static void test_tab_cycles_through_the_matches(void **state)
{
    (void)state;
    Config c = Config_default();
    const char *names[SETTINGS_MAX];
    int count = 0;
    for (int i = 0; i < Settings_count(); i++)
        if (strncmp(Settings_at(i)->name, "rope-", 5) == 0)
            names[count++] = Settings_at(i)->name;
    assert_true(count >= 2);
    SetLine l = {0};
    SetLine_open(&l);
    type(&l, "rope half rope-", &c);
    for (int round = 0; round <= count; round++) {
        SetLine_key(&l, '\t', &c);
        char expected[PROMPT_SIZE], counted[32];
        snprintf(expected, sizeof expected, "rope half %s", names[round % count]);
        snprintf(counted, sizeof counted, "%d of %d", round % count + 1, count);
        assert_string_equal(l.prompt.text, expected);
        assert_non_null(strstr(l.detail, counted));
    }
    /* Another key ends the cycle: the next Tab completes what is typed now. */
    for (size_t n = strlen(names[0]) - strlen("rope-"); n > 0; n--)
        SetLine_key(&l, KEY_BACKSPACE, &c);
    type(&l, "sc", &c);
    SetLine_key(&l, '\t', &c);
    assert_string_equal(l.prompt.text, "rope half rope-scaling ");
}

/* In a value's place Tab completes the enumeration's names; "name=" and " = " are places too. */
static void test_tab_completes_values(void **state)
{
    (void)state;
    Config c = Config_default();
    static const struct {
        const char *typed, *completed;
    } CASES[] = {
        {"rope-scaling ll", "rope-scaling llama3 "},
        {"rope-scaling=li", "rope-scaling=linear "},
        {"mask = window-c", "mask = window-causal "},
        {"heads 2 attention sig", "heads 2 attention sigmoid "},
        {"mask window win", "mask window window"}, /* a name again: window, window-layers */
        {"window-layers 5", "window-layers 5:1 "}, /* a pattern's stops */
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        SetLine l = {0};
        SetLine_open(&l);
        type(&l, CASES[i].typed, &c);
        SetLine_key(&l, '\t', &c);
        assert_string_equal(l.prompt.text, CASES[i].completed);
    }
}

static void test_tab_without_a_match_says_so(void **state)
{
    (void)state;
    Config c = Config_default();
    SetLine l = {0};
    SetLine_open(&l);
    type(&l, "zebra", &c);
    SetLine_key(&l, '\t', &c);
    assert_string_equal(l.prompt.text, "zebra");
    assert_non_null(strstr(l.detail, "no setting's name starts with 'zebra'"));
    /* A number's value has nothing to complete: the detail says what it accepts. */
    SetLine_open(&l);
    type(&l, "head-dim 3", &c);
    SetLine_key(&l, '\t', &c);
    assert_string_equal(l.prompt.text, "head-dim 3");
    assert_non_null(strstr(l.detail, "--head-dim N:"));
}

/* The detail's description may be cut on a narrow screen, never what follows it: the
   elidable part is the table's "--name ARG: help", the rest what it accepts and its value now. */
static void test_detail_marks_the_description_elidable(void **state)
{
    (void)state;
    Config c = Config_default();
    const Setting *s = Settings_find("window-layers");
    assert_non_null(s->help);
    SetLine l = {0};
    SetLine_open(&l);
    type(&l, "window-l", &c);
    SetLine_key(&l, '\t', &c);
    char description[SETLINE_DETAIL_SIZE], accepted[160], now[64], kept[SETLINE_DETAIL_SIZE];
    snprintf(description, sizeof description, "--%s %s: %s", s->name, s->argument, s->help);
    SettingLine_accepted(s, accepted, sizeof accepted);
    Setting_format(s, &c, 0, now, sizeof now);
    snprintf(kept, sizeof kept, "; accepted %s; now %s", accepted, now);
    assert_int_equal(l.prompt.detail_elidable, (int)strlen(description));
    assert_memory_equal(l.detail, description, strlen(description));
    assert_string_equal(l.detail + l.prompt.detail_elidable, kept);
    /* "1 of 3 (Tab: next): " before a cycle's description may go with it. */
    SetLine_open(&l);
    type(&l, "heads 4 he", &c);
    SetLine_key(&l, '\t', &c);
    assert_non_null(strstr(l.detail, "(Tab: next): --head"));
    assert_non_null(strstr(l.detail + l.prompt.detail_elidable, "; accepted "));
    assert_null(strstr(l.detail + l.prompt.detail_elidable, "Tab: next"));
    /* A message that names no setting has nothing to cut. */
    SetLine_open(&l);
    type(&l, "zebra", &c);
    SetLine_key(&l, '\t', &c);
    assert_int_equal(l.prompt.detail_elidable, 0);
}

/* Tab's detail speaks of the word it completed: an edit, a move or Enter's refusal takes it
   away, and the next Tab brings a detail back. */
static void test_any_other_key_takes_the_detail_away(void **state)
{
    (void)state;
    Config c = Config_default();
    static const int KEYS[] = {'x',    KEY_BACKSPACE, KEY_LEFT, KEY_HOME,
                               KEY_UP, '\n',          1 /* Ctrl-A */};
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        SetLine l = {0};
        SetLine_open(&l);
        type(&l, "heads 3", &c);
        SetLine_key(&l, '\t', &c);
        assert_ptr_equal(l.prompt.detail, l.detail);
        assert_non_null(strstr(l.detail, "--heads H"));
        SetLine_key(&l, KEYS[i], &c);
        if (l.prompt.detail)
            fail_msg("key %d left the detail '%s'", KEYS[i], l.prompt.detail);
        assert_int_equal(l.prompt.detail_elidable, 0);
    }
}

/* ↑ goes back through the lines remembered, ↓ forward to the line being typed, kept as typed;
   a line repeated is remembered once, and the oldest go past SETLINE_HISTORY. */
static void test_history(void **state)
{
    (void)state;
    Config c = Config_default();
    SetLine l = {0};
    const char *lines[] = {"head-dim 64", "seed 2", "seed 2", "heads 4"};
    for (size_t i = 0; i < 4; i++) {
        SetLine_open(&l);
        type(&l, lines[i], &c);
        SetLine_remember(&l);
    }
    assert_int_equal(l.count, 3);
    SetLine_open(&l);
    type(&l, "mlp", &c);
    SetLine_key(&l, KEY_UP, &c);
    assert_string_equal(l.prompt.text, "heads 4");
    SetLine_key(&l, KEY_UP, &c);
    SetLine_key(&l, KEY_UP, &c);
    assert_string_equal(l.prompt.text, "head-dim 64");
    SetLine_key(&l, KEY_UP, &c); /* the oldest stays */
    assert_string_equal(l.prompt.text, "head-dim 64");
    SetLine_key(&l, KEY_DOWN, &c);
    SetLine_key(&l, KEY_DOWN, &c);
    SetLine_key(&l, KEY_DOWN, &c);
    assert_string_equal(l.prompt.text, "mlp");
    SetLine_key(&l, KEY_DOWN, &c);
    assert_string_equal(l.prompt.text, "mlp");
    for (int i = 0; i < SETLINE_HISTORY + 3; i++) {
        SetLine_open(&l);
        snprintf(l.prompt.text, sizeof l.prompt.text, "seed %d", i);
        SetLine_remember(&l);
    }
    assert_int_equal(l.count, SETLINE_HISTORY);
    assert_string_equal(l.history[0], "seed 3");
    assert_string_equal(l.history[SETLINE_HISTORY - 1], "seed 34");
}

/* Tab completes the word at the cursor as a shell does: matched by what is typed of it before
   the cursor, the text after the cursor kept; the cursor ends after the completion. */
static void test_tab_completes_the_word_at_the_cursor(void **state)
{
    (void)state;
    Config c = Config_default();
    static const struct {
        const char *typed;
        int cursor;
        const char *completed;
        int after;
    } CASES[] = {
        {"rope-sc linear", 7, "rope-scaling linear", 12}, /* the blank after it is the text's */
        {"kv-hxyz 2", 4, "kv-heads xyz 2", 9},            /* the text after it stays */
        {"seed 2 --kv-h", 13, "seed 2 --kv-heads ", 18},  /* at the end, as before */
        {"rope-scaling ll heads 4", 15, "rope-scaling llama3 heads 4", 19}, /* a value */
        {"heads 4 rope-scaling=li", 23, "heads 4 rope-scaling=linear ", 28},
        {"mask=window-c seed 3", 13, "mask=window-causal seed 3", 18},
        {"kv-he2", 5, "kv-heads 2", 9}, /* a unique match ends with a blank */
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        SetLine l = {0};
        SetLine_open(&l);
        type(&l, CASES[i].typed, &c);
        while (l.prompt.cursor > CASES[i].cursor)
            assert_int_equal(SetLine_key(&l, KEY_LEFT, &c), PROMPT_EDITED);
        SetLine_key(&l, '\t', &c);
        assert_string_equal(l.prompt.text, CASES[i].completed);
        assert_int_equal(l.prompt.cursor, CASES[i].after);
    }
    /* Several matches cycle in place, the text after the word kept. */
    SetLine l = {0};
    SetLine_open(&l);
    type(&l, "rope- 2", &c);
    SetLine_key(&l, KEY_LEFT, &c);
    SetLine_key(&l, KEY_LEFT, &c);
    SetLine_key(&l, '\t', &c);
    SetLine_key(&l, '\t', &c);
    char expected[PROMPT_SIZE];
    int second = -1;
    for (int i = 0, seen = 0; i < Settings_count() && second < 0; i++)
        if (strncmp(Settings_at(i)->name, "rope-", 5) == 0 && seen++ == 1)
            second = i;
    snprintf(expected, sizeof expected, "%s 2", Settings_at(second)->name);
    assert_string_equal(l.prompt.text, expected);
    assert_int_equal(l.prompt.cursor, (int)strlen(Settings_at(second)->name));
}

/* Enter remembers a refused line as a taken one (tui_keys.c calls SetLine_remember before it
   applies the line): ↑ on a new line brings it back to fix; on the refused line, still open,
   ↑ goes past it to the one before, and a recalled line puts the cursor at its end. */
static void test_refused_lines_recalled(void **state)
{
    (void)state;
    Config c = Config_default();
    SetLine l = {0};
    SetLine_open(&l);
    type(&l, "seed 2", &c);
    SetLine_remember(&l);
    SetLine_open(&l);
    type(&l, "heads 3", &c);
    Controls k = Controls_from(&c);
    char note[KEYS_NOTE_SIZE];
    SetLine_remember(&l);
    assert_false(SetLine_apply(l.prompt.text, &k, note, sizeof note));
    SetLine_key(&l, KEY_UP, &c);
    assert_string_equal(l.prompt.text, "seed 2");
    assert_int_equal(l.prompt.cursor, 6);
    SetLine_key(&l, KEY_DOWN, &c);
    assert_string_equal(l.prompt.text, "heads 3");
    SetLine_open(&l);
    SetLine_key(&l, KEY_UP, &c);
    assert_string_equal(l.prompt.text, "heads 3");
    assert_int_equal(l.prompt.cursor, 7);
    SetLine_key(&l, KEY_BACKSPACE, &c);
    type(&l, "4", &c);
    assert_true(SetLine_apply(l.prompt.text, &k, note, sizeof note));
    assert_int_equal(k.config.heads, 4);
}

/* Enter's settings go into the Controls as the command line reads them; the note says them
   and which the model does not use; a toggle set on is where its key turns it back on. */
static void test_apply_sets_what_the_line_says(void **state)
{
    (void)state;
    Config c = Config_default();
    Controls k = Controls_from(&c);
    char note[KEYS_NOTE_SIZE];
    assert_true(SetLine_apply("gap uniform rope-theta 500", &k, note, sizeof note));
    assert_int_equal(k.config.gap, GAP_UNIFORM);
    assert_true(k.config.rope_theta == 500);
    assert_int_equal(k.on_values.gap, GAP_UNIFORM);
    assert_non_null(strstr(note, "set gap=uniform, rope-theta=500"));
    assert_non_null(strstr(note, Settings_find("rope-theta")->unused_note));
    Controls same = k;
    assert_true(SetLine_apply("gap uniform", &same, note, sizeof note));
    assert_non_null(strstr(note, "as before, nothing to compute"));
    assert_true(Config_equal(&same.config, &k.config));
}

/* What the line does not name follows what it names, as under a key (and says so); what it
   names never moves: a line whose own settings clash is refused in the command line's words. */
static void test_apply_settles_only_what_the_line_does_not_name(void **state)
{
    (void)state;
    Config c = Config_default();
    c.layer = 5;
    c.heads = 4;
    Controls k = Controls_from(&c);
    char note[KEYS_NOTE_SIZE];
    assert_true(SetLine_apply("width 50", &k, note, sizeof note));
    assert_int_equal(k.config.width, 50);
    assert_int_equal(k.config.tokens, 50); /* T <= d */
    assert_int_equal(k.config.heads, 2);   /* gcd(4, 50): H divides d */
    assert_non_null(strstr(note, "set width=50; "));
    assert_non_null(strstr(note, "lowered to 50"));
    assert_non_null(strstr(note, "lowered to 2"));
    assert_true(SetLine_apply("depth 2", &k, note, sizeof note));
    assert_int_equal(k.config.layer, 2);
    assert_true(SetLine_apply("tokens 128", &k, note, sizeof note));
    assert_int_equal(k.config.width, 128); /* raised with T, as the key T raises it */
    assert_non_null(strstr(note, "set tokens=128; width d raised to 128 with T"));

    static const char *const CLASHES[] = {"width 64 tokens 128", "depth 2 layer 5", "heads 3",
                                          "tokens 512 width 256"};
    for (size_t i = 0; i < sizeof CLASHES / sizeof CLASHES[0]; i++) {
        Config d = Config_default(), as_command_line = d;
        Controls before = Controls_from(&d), after = before;
        char says[KEYS_NOTE_SIZE];
        assert_int_equal(SettingLine_apply(&as_command_line, CLASHES[i], NULL, says, sizeof says),
                         -1);
        assert_false(SetLine_apply(CLASHES[i], &after, note, sizeof note));
        assert_string_equal(note, says);
        assert_true(Config_equal(&after.config, &before.config));
    }
}

/* Refused: the command line's words, or why an option is not set on the screen; nothing
   changes. */
static void test_apply_refuses_and_changes_nothing(void **state)
{
    (void)state;
    static const struct {
        const char *line, *says;
    } CASES[] = {
        {"heads 3", "accepted a divisor of"},
        {"rope half rope-scaling llama3 rope-low-freq-factor 4", "--rope-low-freq-factor 4"},
        {"weights ckpt/", "--weights is not set on the screen"},
        {"--hf-config=x.json", "--hf-config is not set on the screen"},
        {"seed 2 batch 1", "--batch is not set on the screen"},
        {"preset fig1", "P opens the preset picker"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        Config c = Config_default();
        Controls k = Controls_from(&c), before = k;
        char note[KEYS_NOTE_SIZE] = "";
        assert_false(SetLine_apply(CASES[i].line, &k, note, sizeof note));
        if (!strstr(note, CASES[i].says))
            fail_msg("'%s' says '%s', not '%s'", CASES[i].line, note, CASES[i].says);
        assert_true(Config_equal(&k.config, &before.config));
        assert_true(Config_equal(&k.on_values, &before.on_values));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tab_completes_one_name_and_says_what_it_accepts),
        cmocka_unit_test(test_tab_cycles_through_the_matches),
        cmocka_unit_test(test_tab_completes_values),
        cmocka_unit_test(test_tab_without_a_match_says_so),
        cmocka_unit_test(test_detail_marks_the_description_elidable),
        cmocka_unit_test(test_any_other_key_takes_the_detail_away),
        cmocka_unit_test(test_tab_completes_the_word_at_the_cursor),
        cmocka_unit_test(test_history),
        cmocka_unit_test(test_refused_lines_recalled),
        cmocka_unit_test(test_apply_sets_what_the_line_says),
        cmocka_unit_test(test_apply_settles_only_what_the_line_does_not_name),
        cmocka_unit_test(test_apply_refuses_and_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
