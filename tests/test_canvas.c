/* The curses-free canvas: exact braille dot bits, the ASCII fallback, line and circle
 * rasterisation, clipping, labels and inks, read back cell by cell. */
#include "testing.h"

#include "ascii.h"
#include "canvas.h"

#include <string.h>

static const char *cell(const Canvas *c, int col, int row)
{
    static char out[8];
    Canvas_cell(c, col, row, out);
    return out;
}

/* Whether dot (x, y) is set. */
static bool dot(const Canvas *c, int x, int y)
{
    static const uint8_t bit[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
    return Canvas_dots(c, x / 2, y / 4) & bit[x % 2][y % 4];
}

static int dots_set(const Canvas *c)
{
    int n = 0;
    for (int y = 0; y < 4 * Canvas_rows(c); y++)
        for (int x = 0; x < 2 * Canvas_cols(c); x++)
            n += dot(c, x, y);
    return n;
}

static void test_braille_bits(void **state)
{
    (void)state;
    /* Unicode's dot numbering: 1 2 3 down the left, 4 5 6 down the right, then 7 and 8. */
    const uint8_t expected[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 2; x++) {
            Canvas *c = Canvas_new(1, 1, true);
            Canvas_dot(c, x, y, INK_BULK);
            assert_int_equal(Canvas_dots(c, 0, 0), expected[y][x]);
            char want[8];
            Ascii_encode(0x2800u + expected[y][x], want);
            assert_string_equal(cell(c, 0, 0), want);
            Canvas_free(c);
        }
    Canvas *c = Canvas_new(2, 1, true);
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 2; x++)
            Canvas_dot(c, x, y, INK_BULK);
    assert_string_equal(cell(c, 0, 0), "⣿");
    assert_string_equal(cell(c, 1, 0), " ");
    Canvas_free(c);
}

static void test_ascii_fallback(void **state)
{
    (void)state;
    Canvas *c = Canvas_new(4, 1, false);
    Canvas_dot(c, 0, 0, INK_BULK); /* upper half only */
    Canvas_dot(c, 3, 1, INK_BULK);
    Canvas_dot(c, 4, 2, INK_BULK); /* lower half only */
    Canvas_dot(c, 5, 3, INK_BULK);
    Canvas_dot(c, 6, 1, INK_BULK); /* both halves */
    Canvas_dot(c, 6, 3, INK_BULK);
    assert_string_equal(cell(c, 0, 0), "'");
    assert_string_equal(cell(c, 1, 0), "'");
    assert_string_equal(cell(c, 2, 0), ".");
    assert_string_equal(cell(c, 3, 0), ":");
    Canvas_free(c);

    /* Labels are transliterated: no byte above 0x7F can come out. */
    c = Canvas_new(26, 1, false);
    assert_int_equal(Canvas_text(c, 0, 0, "√T·λ, σ ≥ 1 ◆", INK_DEFAULT), 26);
    char row[64] = "";
    for (int col = 0; col < 26; col++)
        strcat(row, cell(c, col, 0));
    assert_string_equal(row, "sqrtT*lambda, sigma >= 1 @");
    assert_int_equal(Canvas_text_width(c, "σ"), 5);
    Canvas_free(c);
}

static void test_transliteration(void **state)
{
    (void)state;
    char out[64];
    assert_string_equal(Ascii_transliterate("1−|λ2| ≈ ½", out, sizeof out), "1-|lambda2| ~ ?");
    assert_string_equal(Ascii_transliterate("abc", out, 3), "ab");
    /* Two spelled letters keep apart; a spelled operator before a plain letter does not. */
    assert_string_equal(Ascii_transliterate("sr(Σℓ) √T κ(K)", out, sizeof out),
                        "sr(Sigma_l) sqrtT kappa(K)");
    /* → reads "becomes" in labels and the status line ("lambda1Right0" did not). */
    assert_string_equal(Ascii_transliterate("λ1→0 deflate→center", out, sizeof out),
                        "lambda1->0 deflate->center");
    assert_int_equal(Ascii_columns("σ_qk=1"), 6);
    uint32_t cp;
    assert_int_equal(Ascii_decode("\xff", &cp), 1);
    assert_int_equal(cp, 0xFFFD);
}

/* The longest run of whole words within a width, against the plain reading of its contract:
   every prefix that ends before a space or at the end, its columns counted on a copy. */
static size_t words_fit_reference(const char *s, int width)
{
    char prefix[128];
    size_t fit = 0, length = strlen(s);
    for (size_t k = 1; k <= length; k++) {
        if (s[k] != ' ' && s[k] != '\0')
            continue;
        memcpy(prefix, s, k);
        prefix[k] = '\0';
        if (Ascii_columns(prefix) <= width)
            fit = k;
    }
    return fit;
}

static void test_words_fit_counts_columns_up_to_a_space(void **state)
{
    (void)state;
    /* Columns, not bytes: σ is one column of two bytes. */
    assert_int_equal(Ascii_words_fit("σ_qk is one", 7), strlen("σ_qk is"));
    assert_int_equal(Ascii_words_fit("σ_qk is one", 6), strlen("σ_qk"));
    assert_int_equal(Ascii_words_fit("σ_qk is one", 3), 0); /* the first word alone is wider */
    assert_int_equal(Ascii_words_fit("σ_qk is one", 11), strlen("σ_qk is one"));
    assert_int_equal(Ascii_words_fit("", 5), 0);
    const char *texts[] = {"σ_qk is one",
                           "a  b   c",
                           " lead",
                           "trail  ",
                           "κ(K) ≥ 1e4 at ℓ=3 (!)",
                           "one-long-word",
                           "x",
                           "\xe2 broken \xff bytes",
                           "λ λ λ λ λ λ"};
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++)
        for (int width = 0; width <= 24; width++)
            assert_int_equal(Ascii_words_fit(texts[t], width),
                             words_fit_reference(texts[t], width));
}

/* Room for a label: no glyph under it, and without Unicode no dots either (a cell of dots
   is a character there); off the canvas there is none. */
static void test_room_for_text(void **state)
{
    (void)state;
    for (int unicode = 0; unicode <= 1; unicode++) {
        Canvas *c = Canvas_new(6, 2, unicode);
        Canvas_dot(c, 4, 0, INK_BULK); /* cell (2, 0) */
        Canvas_text(c, 4, 1, "x", INK_DEFAULT);
        assert_true(Canvas_room_for_text(c, 0, 0, 2));
        assert_int_equal(Canvas_room_for_text(c, 0, 0, 3), unicode);
        assert_true(Canvas_room_for_text(c, 0, 1, 4));
        assert_false(Canvas_room_for_text(c, 3, 1, 2));
        assert_false(Canvas_room_for_text(c, 5, 0, 2)); /* past the right edge */
        assert_false(Canvas_room_for_text(c, -1, 0, 1));
        assert_false(Canvas_room_for_text(c, 0, 2, 1));
        Canvas_free(c);
    }
}

static void test_lines(void **state)
{
    (void)state;
    Canvas *c = Canvas_new(4, 1, true);
    Canvas_line(c, 0, 1, 3, 1, INK_BULK, STROKE_SOLID); /* horizontal, second dot row */
    assert_int_equal(Canvas_dots(c, 0, 0), 0x02 | 0x10);
    assert_int_equal(Canvas_dots(c, 1, 0), 0x02 | 0x10);
    assert_int_equal(Canvas_dots(c, 2, 0), 0);
    Canvas_free(c);

    c = Canvas_new(2, 1, true);
    Canvas_line(c, 3, 3, 0, 0, INK_BULK, STROKE_SOLID); /* diagonal, drawn backwards */
    assert_int_equal(Canvas_dots(c, 0, 0), 0x01 | 0x10);
    assert_int_equal(Canvas_dots(c, 1, 0), 0x04 | 0x80);
    Canvas_free(c);

    /* Bresenham: one dot per step along the major axis, ends included. */
    c = Canvas_new(8, 2, true);
    Canvas_line(c, 0, 0, 15, 7, INK_BULK, STROKE_SOLID);
    assert_int_equal(dots_set(c), 16);
    assert_true(dot(c, 0, 0) && dot(c, 15, 7));
    for (int x = 0; x < 16; x++) {
        int column = 0;
        for (int y = 0; y < 8; y++)
            column += dot(c, x, y);
        assert_int_equal(column, 1);
    }
    Canvas_free(c);

    /* Strokes differ in shape: dashed is two on, two off; dotted one on, one off. */
    c = Canvas_new(4, 1, true);
    Canvas_line(c, 0, 0, 7, 0, INK_GHOST, STROKE_DASHED);
    assert_int_equal(Canvas_dots(c, 0, 0), 0x09);
    assert_int_equal(Canvas_dots(c, 1, 0), 0);
    assert_int_equal(Canvas_dots(c, 2, 0), 0x09);
    assert_int_equal(Canvas_dots(c, 3, 0), 0);
    Canvas_free(c);
    c = Canvas_new(4, 1, true);
    Canvas_line(c, 0, 0, 7, 0, INK_GHOST, STROKE_DOTTED);
    for (int col = 0; col < 4; col++)
        assert_int_equal(Canvas_dots(c, col, 0), 0x01);
    Canvas_free(c);
}

static void test_circles(void **state)
{
    (void)state;
    Canvas *c = Canvas_new(3, 2, true);
    Canvas_circle(c, 2, 2, 1, INK_THEORY, STROKE_SOLID);
    /* (3,2) (2,3) (1,2) (2,1) */
    assert_int_equal(Canvas_dots(c, 0, 0), 0x20);
    assert_int_equal(Canvas_dots(c, 1, 0), 0x02 | 0x20 | 0x40);
    assert_int_equal(dots_set(c), 4);
    Canvas_free(c);

    c = Canvas_new(5, 3, true);
    Canvas_circle(c, 4, 4, 2, INK_THEORY, STROKE_SOLID);
    const int expected[12][2] = {{6, 4}, {4, 6}, {2, 4}, {4, 2}, {6, 5}, {5, 6},
                                 {3, 6}, {2, 5}, {2, 3}, {3, 2}, {5, 2}, {6, 3}};
    for (int i = 0; i < 12; i++)
        assert_true(dot(c, expected[i][0], expected[i][1]));
    assert_int_equal(dots_set(c), 12);
    Canvas_free(c);

    /* A larger circle: every dot within half a dot of the radius, and symmetric. */
    c = Canvas_new(20, 10, true);
    Canvas_circle(c, 20, 20, 15, INK_THEORY, STROKE_SOLID);
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 40; x++)
            if (dot(c, x, y)) {
                double r = hypot(x - 20, y - 20);
                assert_true(fabs(r - 15) < 0.75);
                assert_true(dot(c, 40 - x, y) && dot(c, x, 40 - y) && dot(c, y, x));
            }
    int solid = dots_set(c);
    Canvas_free(c);
    c = Canvas_new(20, 10, true);
    Canvas_circle(c, 20, 20, 15, INK_AXIS, STROKE_DASHED);
    int dashed = dots_set(c);
    assert_true(dashed > solid / 3 && dashed < solid * 2 / 3);
    Canvas_free(c);

    c = Canvas_new(1, 1, true);
    Canvas_circle(c, 1, 1, 0, INK_THEORY, STROKE_SOLID);
    assert_int_equal(Canvas_dots(c, 0, 0), 0x10);
    Canvas_free(c);
}

static void test_clip_and_bounds(void **state)
{
    (void)state;
    Canvas *c = Canvas_new(2, 1, true);
    Canvas_dot(c, -1, 0, INK_BULK);
    Canvas_dot(c, 4, 0, INK_BULK);
    Canvas_dot(c, 0, 4, INK_BULK);
    assert_int_equal(dots_set(c), 0);
    Canvas_clip(c, 2, 0, 4, 4);
    Canvas_line(c, 0, 0, 3, 0, INK_BULK, STROKE_SOLID);
    assert_int_equal(Canvas_dots(c, 0, 0), 0);
    assert_int_equal(Canvas_dots(c, 1, 0), 0x09);
    Canvas_unclip(c);
    Canvas_dot(c, 0, 0, INK_BULK);
    assert_int_equal(Canvas_dots(c, 0, 0), 0x01);
    /* Patterns (legend samples) ignore the clip. */
    Canvas_clip(c, 0, 0, 0, 0);
    Canvas_pattern(c, 0, 0, 0x80, INK_BULK);
    assert_int_equal(Canvas_dots(c, 0, 0), 0x81);
    Canvas_free(c);
    assert_null(Canvas_new(0, 3, true));
}

/* Presentation mode: a point fills its cell with a glyph (without Unicode too), never over a
   marker; strokes are two dots wide: the right and lower neighbours of every dot are set. */
static void test_bold(void **state)
{
    (void)state;
    Canvas *c = Canvas_new(10, 4, true);
    assert_non_null(c);
    Canvas_point(c, 3, 5, INK_BULK);
    assert_int_equal(dots_set(c), 1); /* off: one dot */
    Canvas_set_bold(c, true);
    Canvas_point(c, 7, 9, INK_BULK);
    assert_string_equal(cell(c, 3, 2), "●");
    assert_int_equal(Canvas_cell(c, 3, 2, (char[8]){0}), INK_BULK);
    Canvas_text(c, 5, 0, "◆", INK_OUTLIER);
    Canvas_point(c, 10, 1, INK_BULK);
    assert_string_equal(cell(c, 5, 0), "◆");
    assert_int_equal(Canvas_cell(c, 5, 0, (char[8]){0}), INK_OUTLIER);
    Canvas_clip(c, 0, 0, 4, 4);
    Canvas_point(c, 12, 12, INK_BULK); /* outside the clip: nothing */
    assert_string_equal(cell(c, 6, 3), " ");
    Canvas_free(c);

    Canvas *line = Canvas_new(10, 4, true);
    assert_non_null(line);
    Canvas_set_bold(line, true);
    Canvas_line(line, 2, 3, 12, 3, INK_BULK, STROKE_SOLID);
    for (int x = 2; x <= 12; x++)
        assert_true(dot(line, x, 3) && dot(line, x, 4));
    assert_true(dot(line, 13, 3));
    assert_int_equal(dots_set(line), 2 * 11 + 1);
    Canvas_free(line);

    Canvas *ascii = Canvas_new(4, 2, false);
    assert_non_null(ascii);
    Canvas_set_bold(ascii, true);
    Canvas_point(ascii, 1, 1, INK_BULK);
    assert_string_equal(cell(ascii, 0, 0), "*");
    Canvas_free(ascii);
}

static void test_glyphs_and_inks(void **state)
{
    (void)state;
    Canvas *c = Canvas_new(6, 1, true);
    Canvas_dot(c, 0, 0, INK_BULK);
    Canvas_dot(c, 1, 0, INK_THEORY); /* the last dot sets the cell's ink */
    char out[8];
    assert_int_equal(Canvas_cell(c, 0, 0, out), INK_THEORY);
    /* A glyph covers the dots and keeps its ink under later dots. */
    assert_int_equal(Canvas_text(c, 0, 0, "◆", INK_OUTLIER), 1);
    Canvas_dot(c, 0, 1, INK_BULK);
    assert_int_equal(Canvas_cell(c, 0, 0, out), INK_OUTLIER);
    assert_string_equal(out, "◆");
    /* Text is cut at the edge; the count says how much was written. */
    assert_int_equal(Canvas_text(c, 3, 0, "λ1 = 1", INK_DEFAULT), 3);
    assert_string_equal(cell(c, 3, 0), "λ");
    assert_string_equal(cell(c, 5, 0), " ");
    assert_int_equal(Canvas_text(c, -2, 0, "abc", INK_DEFAULT), 1);
    assert_string_equal(cell(c, 0, 0), "c");
    Canvas_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_braille_bits),
        cmocka_unit_test(test_ascii_fallback),
        cmocka_unit_test(test_transliteration),
        cmocka_unit_test(test_words_fit_counts_columns_up_to_a_space),
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_room_for_text),
        cmocka_unit_test(test_circles),
        cmocka_unit_test(test_clip_and_bounds),
        cmocka_unit_test(test_glyphs_and_inks),
        cmocka_unit_test(test_bold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
