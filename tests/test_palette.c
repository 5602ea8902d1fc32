/* The inks read on the background they are chosen for: COLORFGBG read as rxvt and Vim read
 * it, and every coloured ink of an 8-colour palette with a contrast of at least 3:1 (WCAG's
 * minimum for graphics) against that background, at xterm's default colours; where the
 * background is unknown, against both black and white.  Inks drawn together stay apart. */
#include "testing.h"

#include "screen.h"

#include <curses.h>

static void test_background_from_colorfgbg(void **state)
{
    (void)state;
    const struct {
        const char *value;
        Background background;
    } cases[] = {
        {"15;0", BACKGROUND_DARK},
        {"0;15", BACKGROUND_LIGHT},
        {"7;8", BACKGROUND_DARK},
        {"0;7", BACKGROUND_LIGHT},
        {"15;default;0", BACKGROUND_DARK},
        {"0;default;15", BACKGROUND_LIGHT},
        {"12;4", BACKGROUND_DARK},
        {"0;11", BACKGROUND_LIGHT},
        {"default;default", BACKGROUND_UNKNOWN},
        {"", BACKGROUND_UNKNOWN},
        {"15;", BACKGROUND_UNKNOWN},
        {"15;16", BACKGROUND_UNKNOWN},
        {"15;-1", BACKGROUND_UNKNOWN},
        {"0;15x", BACKGROUND_UNKNOWN},
    };
    assert_int_equal(Screen_background(NULL), BACKGROUND_UNKNOWN);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (Screen_background(cases[i].value) != cases[i].background)
            fail_msg("COLORFGBG=%s: background %d, expected %d", cases[i].value,
                     Screen_background(cases[i].value), cases[i].background);
}

/* WCAG 2 relative luminance of an sRGB colour given as 0xRRGGBB. */
static double luminance(unsigned rgb)
{
    double channel[3], weight[3] = {0.2126, 0.7152, 0.0722}, sum = 0;
    for (int k = 0; k < 3; k++) {
        double c = ((rgb >> (16 - 8 * k)) & 0xff) / 255.0;
        channel[k] = c <= 0.03928 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
        sum += weight[k] * channel[k];
    }
    return sum;
}

static double contrast(unsigned a, unsigned b)
{
    double la = luminance(a), lb = luminance(b);
    return la > lb ? (la + 0.05) / (lb + 0.05) : (lb + 0.05) / (la + 0.05);
}

/* xterm's default 8 colours (its XTerm-col.ad resources). */
static const unsigned XTERM[8] = {
    [COLOR_BLACK] = 0x000000,  [COLOR_RED] = 0xcd0000,   [COLOR_GREEN] = 0x00cd00,
    [COLOR_YELLOW] = 0xcdcd00, [COLOR_BLUE] = 0x0000ee,  [COLOR_MAGENTA] = 0xcd00cd,
    [COLOR_CYAN] = 0x00cdcd,   [COLOR_WHITE] = 0xe5e5e5,
};

static const char *const INK_NAMES[INK_COUNT] = {
    [INK_DEFAULT] = "default",     [INK_AXIS] = "axis",       [INK_BULK] = "bulk",
    [INK_OUTLIER] = "outlier",     [INK_THEORY] = "theory",   [INK_GHOST] = "ghost",
    [INK_HIGHLIGHT] = "highlight", [INK_SHADE_1] = "shade 1", [INK_SHADE_2] = "shade 2",
    [INK_SHADE_3] = "shade 3",     [INK_SHADE_4] = "shade 4", [INK_SHADE_5] = "shade 5",
    [INK_SHADE_6] = "shade 6",     [INK_SHADE_7] = "shade 7", [INK_SHADE_8] = "shade 8",
    [INK_SHADE_9] = "shade 9",
};

static void test_eight_colour_inks_read(void **state)
{
    (void)state;
    const struct {
        Background background;
        unsigned against[2];
        int count;
    } cases[] = {
        {BACKGROUND_DARK, {0x000000}, 1},
        {BACKGROUND_LIGHT, {0xffffff}, 1},
        {BACKGROUND_UNKNOWN, {0x000000, 0xffffff}, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const short *ink = Screen_palette(8, cases[i].background);
        for (int k = 0; k < INK_COUNT; k++) {
            if (ink[k] < 0)
                continue; /* the terminal's foreground reads on its background */
            assert_true(ink[k] < 8);
            for (int b = 0; b < cases[i].count; b++) {
                double ratio = contrast(XTERM[ink[k]], cases[i].against[b]);
                if (ratio < 3.0)
                    fail_msg("background %d: the %s ink has contrast %.2f on #%06x", (int)i,
                             INK_NAMES[k], ratio, cases[i].against[b]);
            }
        }
        /* Drawn in one panel: the data, the theory over it, the counterpart beside it and
           the outlier among it. */
        const int apart[][2] = {{INK_BULK, INK_THEORY},
                                {INK_BULK, INK_GHOST},
                                {INK_THEORY, INK_GHOST},
                                {INK_BULK, INK_OUTLIER},
                                {INK_THEORY, INK_OUTLIER}};
        for (size_t p = 0; p < sizeof apart / sizeof apart[0]; p++)
            if (ink[apart[p][0]] == ink[apart[p][1]])
                fail_msg("background %d: the %s and %s inks are the same colour", (int)i,
                         INK_NAMES[apart[p][0]], INK_NAMES[apart[p][1]]);
    }
}

/* 256 colours: the mid-luminance palette, whatever the background. */
static void test_256_colours_whatever_the_background(void **state)
{
    (void)state;
    const short *dark = Screen_palette(256, BACKGROUND_DARK);
    assert_ptr_equal(dark, Screen_palette(256, BACKGROUND_LIGHT));
    assert_ptr_equal(dark, Screen_palette(256, BACKGROUND_UNKNOWN));
    for (int k = 0; k < INK_COUNT; k++)
        assert_true(dark[k] < 256);
    assert_true(dark[INK_THEORY] >= 16); /* not one of the 16 the terminal chooses */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_background_from_colorfgbg),
        cmocka_unit_test(test_eight_colour_inks_read),
        cmocka_unit_test(test_256_colours_whatever_the_background),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
