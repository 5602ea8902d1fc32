/* The plots draw from plain data: legends on every plot, the outlier with its own glyph
 * (an arrow on the border when it is off scale), the gap printed, ghost and network told
 * apart by glyphs, undefined curves marked n/a, and nothing but ASCII without Unicode. */
#include "testing.h"

#include "plot.h"

#include <string.h>

/* The canvas as text, rows separated by newlines. */
static const char *text(const Canvas *c)
{
    static char out[1 << 16];
    size_t used = 0;
    for (int r = 0; r < Canvas_rows(c); r++) {
        for (int col = 0; col < Canvas_cols(c); col++) {
            char cell[8];
            Canvas_cell(c, col, r, cell);
            size_t n = strlen(cell);
            memcpy(out + used, cell, n);
            used += n;
        }
        out[used++] = '\n';
    }
    out[used] = '\0';
    return out;
}

static bool ascii_only(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s > 0x7F)
            return false;
    return true;
}

static bool has_ink(const Canvas *c, Ink ink)
{
    for (int r = 0; r < Canvas_rows(c); r++)
        for (int col = 0; col < Canvas_cols(c); col++) {
            char cell[8];
            if (Canvas_cell(c, col, r, cell) == ink && strcmp(cell, " ") != 0)
                return true;
        }
    return false;
}

static const Complex FAR[4] = {{1, 0}, {0.1, 0.05}, {0.1, -0.05}, {-0.08, 0}};
static const Complex NEAR[4] = {{0.5, 0}, {0.3, 0.2}, {0.3, -0.2}, {-0.35, 0}};

static void test_eigenvalues(void **state)
{
    (void)state;
    Canvas *c = Canvas_new(50, 24, true);
    EigenvaluePlot p = {"eigenvalues", 4, FAR, 2.0, 0.5, false};
    Plot_eigenvalues(c, &p);
    const char *t = text(c);
    assert_int_equal(strncmp(t, "eigenvalues", 11), 0);
    /* |λ1|·√T = 2 is far from the rest (≤ 1): pinned to the right border, off scale. */
    assert_non_null(strstr(t, "▸"));
    assert_null(strstr(t, "◆"));
    assert_non_null(strstr(t, "λ1 = 1, √T·|λ1| = 2 off scale"));
    assert_non_null(strstr(t, "|z| = σ = 0.5"));
    assert_non_null(strstr(t, "|z| = 1"));
    assert_non_null(strstr(t, "√T·λ (3)"));
    assert_true(has_ink(c, INK_OUTLIER) && has_ink(c, INK_BULK) && has_ink(c, INK_THEORY));
    Canvas_free(c);

    c = Canvas_new(50, 24, true);
    EigenvaluePlot q = {"eigenvalues", 4, NEAR, 2.0, NAN, true};
    Plot_eigenvalues(c, &q);
    t = text(c);
    assert_non_null(strstr(t, "◆"));
    assert_non_null(strstr(t, "λ1 = 0.5, √T·|λ1| = 1"));
    assert_null(strstr(t, "off scale"));
    assert_null(strstr(t, "|z| = σ")); /* no σ circle where the law does not apply */
    Canvas_free(c);
}

static void test_histogram(void **state)
{
    (void)state;
    double s[64];
    s[0] = 1.0;
    for (int i = 1; i < 64; i++)
        s[i] = 0.2 * (64 - i) / 64.0;
    Canvas *c = Canvas_new(50, 16, true);
    HistogramPlot p = {"singular values", 64, s, 8.0, 0.1, "quartercircle law"};
    Plot_histogram(c, &p);
    const char *t = text(c);
    assert_non_null(strstr(t, "√T·s_i, i ≥ 2"));
    assert_non_null(strstr(t, "quartercircle law"));
    /* s1·√T = 8 against a bulk up to 1.6: pinned, with the gap printed. */
    assert_non_null(strstr(t, "√T·s1 = 8, gap √T·(s1−s2) = 6.42"));
    assert_non_null(strstr(t, "▸"));
    assert_non_null(strstr(t, "─"));
    assert_non_null(strstr(t, "⣿"));
    Canvas_free(c);
}

static void test_stable_rank(void **state)
{
    (void)state;
    double network[5] = {64, 1.5, 1.01, 1.0, NAN}; /* last layer not computed yet */
    double ghost[5] = {64, 20, 8, 3, NAN};
    Canvas *c = Canvas_new(50, 16, true);
    StableRankPlot p = {
        "stable rank", 4, network, ghost, "network (gap off)", "counterpart (gap center)", 64, 2};
    Plot_stable_rank(c, &p);
    const char *t = text(c);
    assert_non_null(strstr(t, "⠤●⠤ network (gap off)"));
    assert_non_null(strstr(t, "⠄○⠄ counterpart (gap center)"));
    assert_non_null(strstr(t, "shown layer 2"));
    assert_non_null(strstr(t, "64┤"));
    assert_non_null(strstr(t, "10┤"));
    assert_true(has_ink(c, INK_HIGHLIGHT) && has_ink(c, INK_GHOST));
    Canvas_free(c);

    double none[5] = {NAN, NAN, NAN, NAN, NAN};
    c = Canvas_new(60, 16, true);
    StableRankPlot q = {"stable rank", 4, network, none, "network", "counterpart", 64, 1};
    Plot_stable_rank(c, &q);
    assert_non_null(strstr(text(c), "counterpart (n/a)"));
    Canvas_free(c);
}

static void test_ascii_and_small(void **state)
{
    (void)state;
    double s[4] = {1, 0.3, 0.2, 0.1}, sr[3] = {4, 2, 1};
    Canvas *c = Canvas_new(60, 20, false);
    EigenvaluePlot e = {"eigenvalues √T·λ", 4, FAR, 2.0, 0.5, false};
    Plot_eigenvalues(c, &e);
    assert_true(ascii_only(text(c)));
    assert_non_null(strstr(text(c), "|z| = sigma = 0.5"));
    Canvas_free(c);
    c = Canvas_new(60, 20, false);
    HistogramPlot h = {"singular values √T·s", 4, s, 2.0, 0.5, "i.i.d. Markov limit"};
    Plot_histogram(c, &h);
    assert_true(ascii_only(text(c)));
    Canvas_free(c);
    c = Canvas_new(60, 20, false);
    StableRankPlot p = {"stable rank sr(Σℓ)", 2, sr, sr, "network", "counterpart", 4, 1};
    Plot_stable_rank(c, &p);
    assert_true(ascii_only(text(c)));
    assert_non_null(strstr(text(c), ".*. network"));
    assert_non_null(strstr(text(c), ".o. counterpart"));
    Canvas_free(c);

    c = Canvas_new(20, 4, true);
    Plot_eigenvalues(c, &e);
    assert_non_null(strstr(text(c), "too small"));
    Canvas_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eigenvalues),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_stable_rank),
        cmocka_unit_test(test_ascii_and_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
