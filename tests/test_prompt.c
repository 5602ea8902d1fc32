/* The prompts' line editor (prompt.c) as keys reach it: typing at the cursor, the shells'
 * movement and kill keys, hand-checked and then against a reference that keeps the text as
 * the two strings on either side of the cursor; and the part of a long text shown, which
 * keeps the cursor in view. */
#include "testing.h"

#include "prompt.h"

#include <curses.h> /* the KEY_ codes Prompt_key reads */
#include <string.h>

enum { CTRL_A = 1, CTRL_D = 4, CTRL_E = 5, CTRL_K = 11, CTRL_U = 21, CTRL_W = 23 };

static void keys(Prompt *p, const int *k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_int_equal(Prompt_key(p, k[i]), PROMPT_EDITED);
}

static void type(Prompt *p, const char *text)
{
    for (const char *c = text; *c; c++)
        assert_int_equal(Prompt_key(p, *c), PROMPT_EDITED);
}

#define KEYS(p, ...)                                                                               \
    do {                                                                                           \
        const int k_[] = {__VA_ARGS__};                                                            \
        keys((p), k_, sizeof k_ / sizeof k_[0]);                                                   \
    } while (0)

static void test_moves_and_edits_at_the_cursor(void **state)
{
    (void)state;
    Prompt p = {.max_chars = PROMPT_SIZE - 1, .allowed = Prompt_printable};
    type(&p, "head-dim 32");
    KEYS(&p, KEY_HOME);
    type(&p, "seed 2 ");
    assert_string_equal(p.text, "seed 2 head-dim 32");
    assert_int_equal(p.cursor, 7);
    KEYS(&p, CTRL_E, KEY_LEFT, KEY_BACKSPACE);
    assert_string_equal(p.text, "seed 2 head-dim 2");
    assert_int_equal(p.cursor, 16);
    type(&p, "6");
    assert_string_equal(p.text, "seed 2 head-dim 62");
    KEYS(&p, CTRL_A, KEY_DC, CTRL_D, KEY_RIGHT, KEY_RIGHT);
    assert_string_equal(p.text, "ed 2 head-dim 62");
    assert_int_equal(p.cursor, 2);
    KEYS(&p, KEY_LEFT, KEY_LEFT, KEY_LEFT); /* the start holds */
    assert_int_equal(p.cursor, 0);
    KEYS(&p, KEY_END, KEY_RIGHT); /* so does the end */
    assert_int_equal(p.cursor, 16);
    /* Ctrl-W: the word before the cursor with the blanks after it; again, the next word. */
    KEYS(&p, KEY_LEFT, KEY_LEFT, KEY_LEFT, CTRL_W);
    assert_string_equal(p.text, "ed 2  62");
    assert_int_equal(p.cursor, 5);
    KEYS(&p, CTRL_W);
    assert_string_equal(p.text, "ed  62");
    assert_int_equal(p.cursor, 3);
    KEYS(&p, CTRL_K);
    assert_string_equal(p.text, "ed ");
    KEYS(&p, KEY_LEFT, CTRL_U);
    assert_string_equal(p.text, " ");
    assert_int_equal(p.cursor, 0);
    KEYS(&p, CTRL_D);
    assert_string_equal(p.text, "");
    KEYS(&p, KEY_BACKSPACE, KEY_DC, CTRL_W, CTRL_K, CTRL_U); /* nothing to remove */
    /* Ctrl-D on an empty line ends it, as a shell's end of input. */
    assert_int_equal(Prompt_key(&p, CTRL_D), PROMPT_CANCEL);
}

/* A full line takes no character, at the cursor either; a question takes no editing key, its
   owner reads them (← and → step the shown layer there). */
static void test_full_line_and_questions(void **state)
{
    (void)state;
    Prompt p = {.max_chars = 4, .allowed = Prompt_printable};
    type(&p, "abcd");
    KEYS(&p, KEY_HOME);
    assert_int_equal(Prompt_key(&p, 'x'), PROMPT_FULL);
    assert_string_equal(p.text, "abcd");
    Prompt_set_text(&p, "0123456789");
    assert_string_equal(p.text, "0123");
    assert_int_equal(p.cursor, 4);
    Prompt question = {.max_chars = 0, .allowed = Prompt_printable};
    const int editing[] = {KEY_LEFT, KEY_RIGHT, KEY_HOME, KEY_END, KEY_DC, KEY_BACKSPACE,
                           CTRL_A,   CTRL_D,    CTRL_E,   CTRL_K,  CTRL_U, CTRL_W};
    for (size_t i = 0; i < sizeof editing / sizeof editing[0]; i++)
        assert_int_equal(Prompt_key(&question, editing[i]), PROMPT_REFUSED);
    assert_int_equal(Prompt_key(&question, '\r'), PROMPT_DONE);
    assert_int_equal(Prompt_key(&question, 27), PROMPT_CANCEL);
}

/* The reference: the text as what is before the cursor and what is after it. */
typedef struct {
    char before[PROMPT_SIZE], after[PROMPT_SIZE];
} Sides;

static void reference_key(Sides *r, int key, int max_chars)
{
    size_t b = strlen(r->before), a = strlen(r->after);
    char moved[2 * PROMPT_SIZE + 2];
    switch (key) {
    case KEY_LEFT:
        if (b) {
            snprintf(moved, sizeof moved, "%c%s", r->before[b - 1], r->after);
            strcpy(r->after, moved);
            r->before[b - 1] = '\0';
        }
        break;
    case KEY_RIGHT:
        if (a) {
            r->before[b] = r->after[0];
            r->before[b + 1] = '\0';
            memmove(r->after, r->after + 1, a);
        }
        break;
    case KEY_HOME:
        snprintf(moved, sizeof moved, "%s%s", r->before, r->after);
        strcpy(r->after, moved);
        r->before[0] = '\0';
        break;
    case KEY_END:
        strcat(r->before, r->after);
        r->after[0] = '\0';
        break;
    case KEY_BACKSPACE:
        if (b)
            r->before[b - 1] = '\0';
        break;
    case KEY_DC:
        if (a)
            memmove(r->after, r->after + 1, a);
        break;
    case CTRL_K:
        r->after[0] = '\0';
        break;
    case CTRL_U:
        r->before[0] = '\0';
        break;
    case CTRL_W:
        while (b && r->before[b - 1] == ' ')
            r->before[--b] = '\0';
        while (b && r->before[b - 1] != ' ')
            r->before[--b] = '\0';
        break;
    default:
        if ((int)(a + b) < max_chars) {
            r->before[b] = (char)key;
            r->before[b + 1] = '\0';
        }
    }
}

/* Thousands of keys drawn from the editing keys and a few characters, each compared with the
   reference: the text and the cursor after every key. */
static void test_random_keys_against_the_reference(void **state)
{
    (void)state;
    const int pool[] = {KEY_LEFT, KEY_RIGHT, KEY_HOME, KEY_END, KEY_BACKSPACE, KEY_DC,
                        CTRL_K,   CTRL_U,    CTRL_W,   'a',     'b',           ' ',
                        'c',      ' ',       'd',      'e'};
    enum { POOL = sizeof pool / sizeof pool[0] };
    for (int max_chars = 6; max_chars <= 30; max_chars += 12) {
        Prompt p = {.max_chars = max_chars, .allowed = Prompt_printable};
        Sides r = {{0}, {0}};
        unsigned long long x = 88172645463325252ULL + (unsigned long long)max_chars;
        for (int i = 0; i < 20000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int key = pool[x % POOL];
            Prompt_key(&p, key);
            reference_key(&r, key, max_chars);
            char whole[2 * PROMPT_SIZE];
            snprintf(whole, sizeof whole, "%s%s", r.before, r.after);
            assert_string_equal(p.text, whole);
            assert_int_equal(p.cursor, (int)strlen(r.before));
        }
    }
}

/* The part shown keeps the cursor in view, shows the whole text (and the cell after it) where
   it fits and the end where the cursor is at the end; it moves one way with the cursor, by
   half the room at most, so that the text does not jump at every key. */
static void test_first_shown_keeps_the_cursor_in_view(void **state)
{
    (void)state;
    Prompt p = {.max_chars = PROMPT_SIZE - 1, .allowed = Prompt_printable};
    for (int n = 0; n <= 60; n++) {
        memset(p.text, 'x', (size_t)n);
        p.text[n] = '\0';
        for (int room = 1; room <= 25; room++) {
            int before = 0;
            for (p.cursor = 0; p.cursor <= n; p.cursor++) {
                int first = Prompt_first_shown(&p, room);
                assert_true(first >= 0 && first <= p.cursor);
                assert_true(p.cursor - first < room);
                if (n + 1 <= room)
                    assert_int_equal(first, 0);
                else
                    assert_true(first + room <= n + 1);
                if (p.cursor == n)
                    assert_int_equal(first, n + 1 > room ? n + 1 - room : 0);
                assert_true(first >= before && first - before <= (room > 1 ? room / 2 : 1));
                before = first;
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moves_and_edits_at_the_cursor),
        cmocka_unit_test(test_full_line_and_questions),
        cmocka_unit_test(test_random_keys_against_the_reference),
        cmocka_unit_test(test_first_shown_keeps_the_cursor_in_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
