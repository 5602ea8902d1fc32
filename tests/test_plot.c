/* The plots draw from plain data: legends on every plot, the outlier with its own glyph
 * (an arrow on the border when it is off scale), the gap printed, ghost and network told
 * apart by glyphs, undefined curves marked n/a, and nothing but ASCII without Unicode. */
#include "testing.h"

#include "canvas_text.h"
#include "plot.h"

#include <stdlib.h>
#include <string.h>

/* The canvas as text (canvas_text.h) in a buffer of its own, until the next call. */
static const char *text(const Canvas *c)
{
    static char out[1 << 16];
    canvas_text(c, out, sizeof out);
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
    EigenvaluePlot p = {"eigenvalues", 4, FAR, 2.0, 0.5, false, false, NAN, 0, false};
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
    EigenvaluePlot q = {"eigenvalues", 4, NEAR, 2.0, NAN, true, false, NAN, 0, false};
    Plot_eigenvalues(c, &q);
    t = text(c);
    assert_non_null(strstr(t, "◆"));
    assert_non_null(strstr(t, "λ1 = 0.5, √T·|λ1| = 1"));
    assert_null(strstr(t, "off scale"));
    assert_null(strstr(t, "|z| = σ")); /* no σ circle where the law does not apply */
    Canvas_free(c);
}

/* Presentation mode draws the eigenvalues as whole cells (●, ASCII '*'): the legend's sample
   is that glyph too, not the dot the plain plot draws (and its legend shows). */
static void test_bold_legend_shows_the_drawn_point(void **state)
{
    (void)state;
    EigenvaluePlot p = {"eigenvalues", 4, NEAR, 2.0, NAN, false, false, NAN, 0, false};
    Canvas *c = Canvas_new(50, 24, true);
    Plot_eigenvalues(c, &p);
    assert_non_null(strstr(text(c), "⠄ √T·λ (3)"));
    assert_null(strstr(text(c), "●"));
    Canvas_free(c);
    c = Canvas_new(50, 24, true);
    Canvas_set_bold(c, true);
    Plot_eigenvalues(c, &p);
    const char *t = text(c), *legend = strstr(t, "● √T·λ (3)");
    assert_non_null(legend);
    assert_non_null(strstr(t, "●") < legend ? strstr(t, "●") : NULL); /* drawn above it too */
    assert_null(strstr(t, "⠄ √T·λ"));
    Canvas_free(c);
    c = Canvas_new(50, 24, false);
    Canvas_set_bold(c, true);
    Plot_eigenvalues(c, &p);
    assert_non_null(strstr(text(c), "* sqrtT*lambda (3)"));
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
    HistogramPlot p = {"singular values", 64, s, 8.0, 0.1, "quartercircle law", NULL, false};
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
    StableRankPlot p = {.title = "stable rank",
                        .depth = 4,
                        .network = network,
                        .counterpart = ghost,
                        .network_label = "network (gap off)",
                        .counterpart_label = "counterpart (gap center)",
                        .top = 64,
                        .shown_layer = 2};
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
    StableRankPlot q = {.title = "stable rank",
                        .depth = 4,
                        .network = network,
                        .counterpart = none,
                        .network_label = "network",
                        .counterpart_label = "counterpart",
                        .top = 64,
                        .shown_layer = 1};
    Plot_stable_rank(c, &q);
    assert_non_null(strstr(text(c), "counterpart (n/a)"));
    Canvas_free(c);
}

static void test_ascii_and_small(void **state)
{
    (void)state;
    double s[4] = {1, 0.3, 0.2, 0.1}, sr[3] = {4, 2, 1};
    Canvas *c = Canvas_new(60, 20, false);
    EigenvaluePlot e = {"eigenvalues √T·λ", 4, FAR, 2.0, 0.5, false, false, NAN, 0, false};
    Plot_eigenvalues(c, &e);
    assert_true(ascii_only(text(c)));
    assert_non_null(strstr(text(c), "|z| = sigma = 0.5"));
    Canvas_free(c);
    c = Canvas_new(60, 20, false);
    HistogramPlot h = {"singular values √T·s", 4, s, 2.0, 0.5, "i.i.d. Markov limit", NULL, false};
    Plot_histogram(c, &h);
    assert_true(ascii_only(text(c)));
    Canvas_free(c);
    c = Canvas_new(60, 20, false);
    StableRankPlot p = {.title = "stable rank sr(Σℓ)",
                        .depth = 2,
                        .network = sr,
                        .counterpart = sr,
                        .network_label = "network",
                        .counterpart_label = "counterpart",
                        .top = 4,
                        .shown_layer = 1};
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

static int count_ink(const Canvas *c, Ink ink)
{
    int n = 0;
    for (int r = 0; r < Canvas_rows(c); r++)
        for (int col = 0; col < Canvas_cols(c); col++) {
            char cell[8];
            n += Canvas_cell(c, col, r, cell) == ink && strcmp(cell, " ") != 0;
        }
    return n;
}

/* The cell at (col, row) holding glyph, or false. */
static bool find_glyph(const Canvas *c, const char *glyph, int *col, int *row)
{
    for (int r = 0; r < Canvas_rows(c); r++)
        for (int k = 0; k < Canvas_cols(c); k++) {
            char cell[8];
            Canvas_cell(c, k, r, cell);
            if (strcmp(cell, glyph) == 0) {
                *col = k;
                *row = r;
                return true;
            }
        }
    return false;
}

/* The predicted outlier is its own glyph in the theory ink, on the real axis; off, it is
   gone from the plot and the legend. */
static void test_eigenvalue_overlay(void **state)
{
    (void)state;
    Canvas *c = Canvas_new(50, 24, true);
    EigenvaluePlot p = {"eigenvalues", 4, NEAR, 2.0, NAN, false, true, 0.4, 0, false};
    Plot_eigenvalues(c, &p);
    assert_non_null(strstr(text(c), "◇ predicted λ1 = 0.4"));
    int col, row, mcol, mrow;
    /* The first ◇ is in the plot (the legend comes last). */
    assert_true(find_glyph(c, "◇", &col, &row));
    char cell[8];
    assert_int_equal(Canvas_cell(c, col, row, cell), INK_THEORY);
    /* The measured outlier (0.5, drawn as ◆) is a different cell with the outlier's ink. */
    assert_true(find_glyph(c, "◆", &mcol, &mrow));
    assert_int_equal(Canvas_cell(c, mcol, mrow, cell), INK_OUTLIER);
    assert_int_equal(row, mrow); /* both on the real axis */
    assert_true(col < mcol);     /* 0.4 left of 0.5 */
    Canvas_free(c);

    c = Canvas_new(50, 24, true);
    p.show_predicted = false;
    Plot_eigenvalues(c, &p);
    assert_null(strstr(text(c), "◇"));
    assert_null(strstr(text(c), "predicted"));
    Canvas_free(c);
}

/* The density overlay is drawn in its own ink and glyph, unlike the bars; without σ it is
   neither drawn nor in the legend. */
static void test_histogram_overlay(void **state)
{
    (void)state;
    double s[64];
    s[0] = 0.3;
    for (int i = 1; i < 64; i++)
        s[i] = 0.25 * (64 - i) / 64.0;
    Canvas *c = Canvas_new(50, 16, true);
    HistogramPlot p = {"singular values", 64, s, 8.0, 1.0, "i.i.d. Markov limit", NULL, false};
    Plot_histogram(c, &p);
    assert_non_null(strstr(text(c), "─ i.i.d. Markov limit"));
    int theory = count_ink(c, INK_THEORY), bulk = count_ink(c, INK_BULK);
    assert_true(theory > 5 && bulk > 5);
    for (int r = 1; r < Canvas_rows(c) - 3; r++)
        for (int k = 6; k < Canvas_cols(c); k++) {
            char cell[8];
            Ink ink = Canvas_cell(c, k, r, cell);
            if (ink == INK_THEORY)
                assert_string_equal(cell, "─");
            else if (ink == INK_BULK)
                assert_true(strcmp(cell, "─") != 0);
        }
    Canvas_free(c);

    c = Canvas_new(50, 16, true);
    p.sigma = NAN;
    Plot_histogram(c, &p);
    assert_null(strstr(text(c), "Markov limit"));
    assert_int_equal(count_ink(c, INK_THEORY), 0);
    Canvas_free(c);
}

/* Predicted curves are drawn in the theory ink with their own marker; where none applies
   nothing is drawn and the note says why; the ensemble band adds dots and a legend. */
static void test_stable_rank_theory_and_band(void **state)
{
    (void)state;
    double network[5] = {64, 1.5, 1.01, 1.0, 1.0};
    double ghost[5] = {64, 20, 8, 3, 2};
    double theory[5] = {64, 2, 1.1, 1.0, 1.0}, other[5] = {64, 4.2, 2.1, 1.4, 1.2};
    double none[5] = {NAN, NAN, NAN, NAN, NAN};
    double std[5] = {0, 0.5, 0.2, 0.1, 0.05};
    StableRankPlot p = {.title = "stable rank",
                        .depth = 4,
                        .network = network,
                        .counterpart = ghost,
                        .network_label = "network (gap off)",
                        .counterpart_label = "counterpart (gap center)",
                        .top = 64,
                        .shown_layer = 1,
                        .theory = theory,
                        .counterpart_theory = other,
                        .theory_note = NULL};
    Canvas *c = Canvas_new(70, 20, true);
    Plot_stable_rank(c, &p);
    assert_non_null(strstr(text(c), "⠤×⠤ theory (docs/model.md §3), both networks"));
    assert_true(count_ink(c, INK_THEORY) > 3);
    Canvas_free(c);

    p.theory = none;
    p.counterpart_theory = none;
    p.theory_note = "no formula with LayerNorm";
    c = Canvas_new(70, 20, true);
    Plot_stable_rank(c, &p);
    assert_non_null(strstr(text(c), "no theory curve: no formula with LayerNorm"));
    assert_int_equal(count_ink(c, INK_THEORY), 0);
    Canvas_free(c);

    /* Overlays off: neither curve nor note. */
    p.theory = NULL;
    c = Canvas_new(70, 20, true);
    Plot_stable_rank(c, &p);
    assert_null(strstr(text(c), "theory"));
    int plain = count_ink(c, INK_BULK);
    Canvas_free(c);

    p.band_std = std;
    p.seeds = 8;
    c = Canvas_new(70, 20, true);
    Plot_stable_rank(c, &p);
    assert_non_null(strstr(text(c), "±1 std over 8 seeds"));
    assert_non_null(strstr(text(c), "network (gap off), mean"));
    assert_true(count_ink(c, INK_BULK) > plain);
    Canvas_free(c);
}

static void test_series(void **state)
{
    (void)state;
    double x[4] = {16, 32, 64, 128}, y[4] = {0.5, 0.25, 0.125, 0.0625};
    double flat[4] = {1, 1, 1, 1}, none[4] = {NAN, NAN, NAN, NAN};
    SeriesPlot p = {
        .title = "sweep",
        .count = 3,
        .series = {{"gap off", 4, x, y, INK_BULK, STROKE_SOLID, "●"},
                   {"gap removed", 4, x, none, INK_GHOST, STROKE_DOTTED, "○"},
                   {"theory slope -1", 4, x, flat, INK_THEORY, STROKE_DASHED, NULL}},
        .x_scale = SCALE_LOG,
        .y_scale = SCALE_LOG,
        .notes = 1,
        .note = {"fitted slope -1"},
        .empty = "nothing",
    };
    Canvas *c = Canvas_new(60, 18, true);
    Plot_series(c, &p);
    const char *t = text(c);
    assert_non_null(strstr(t, "gap removed (n/a)"));
    assert_non_null(strstr(t, "fitted slope -1"));
    assert_non_null(strstr(t, "●"));
    /* A NaN curve draws nothing: its ink is only on the legend's three sample cells. */
    assert_int_equal(count_ink(c, INK_GHOST), 3);
    assert_non_null(strstr(t, "20")); /* a short log axis has 2·10^k ticks */
    assert_true(has_ink(c, INK_THEORY) && has_ink(c, INK_BULK));
    Canvas_free(c);

    /* Nothing to draw: the message instead of axes, the legend still says what is missing. */
    p.series[0].y = none;
    p.series[2].y = none;
    c = Canvas_new(60, 18, false);
    Plot_series(c, &p);
    t = text(c);
    assert_true(ascii_only(t));
    assert_non_null(strstr(t, "nothing"));
    assert_non_null(strstr(t, "gap off (n/a)"));
    assert_null(strstr(t, "|"));
    Canvas_free(c);

    /* log10 values given: a curve beyond a double's range still draws. */
    double layers[3] = {1, 2, 3}, exponents[3] = {300, 400, 500};
    SeriesPlot g = {.title = "gradient",
                    .count = 1,
                    .series = {{"network", 3, layers, exponents, INK_BULK, STROKE_SOLID, "●"}},
                    .x_scale = SCALE_LINEAR,
                    .y_scale = SCALE_LOG10_GIVEN};
    c = Canvas_new(60, 18, true);
    Plot_series(c, &g);
    assert_non_null(strstr(text(c), "1e400"));
    Canvas_free(c);
}

/* The cells of one row of the canvas, as text. */
static const char *row_text(const Canvas *c, int row)
{
    static char out[1024];
    size_t used = 0;
    for (int col = 0; col < Canvas_cols(c); col++) {
        char cell[8];
        Canvas_cell(c, col, row, cell);
        size_t n = strlen(cell);
        memcpy(out + used, cell, n);
        used += n;
    }
    out[used] = '\0';
    return out;
}

/* Plot_series_rows, which a panel chooses what to leave out by, is the plot the drawing leaves:
   the rows with the y axis (│ or ┤ in the axis column) on the drawn canvas, counted cell by
   cell, at several heights, with legends of one row and of several (notes cut across rows). */
static void test_series_rows_are_the_drawn_plot(void **state)
{
    (void)state;
    double x[3] = {1, 2, 3}, y[3] = {10, 1000, 100000}, z[3] = {5, 50, 500};
    SeriesPlot p = {
        .title = "conditioning",
        .count = 2,
        .series = {{"network", 3, x, y, INK_BULK, STROKE_SOLID, "●"},
                   {"counterpart", 3, x, z, INK_GHOST, STROKE_DOTTED, "○"}},
        .x_scale = SCALE_LINEAR,
        .y_scale = SCALE_LOG,
        .note = {"a first note long enough to be cut across two rows of forty columns",
                 "a second note"},
    };
    for (int notes = 0; notes <= 2; notes++)
        for (int rows = 9; rows <= 16; rows++) {
            p.notes = notes;
            Canvas *c = Canvas_new(40, rows, true);
            int measured = Plot_series_rows(c, &p);
            Plot_series(c, &p);
            int axis_rows = 0;
            for (int r = 0; r < rows; r++) {
                char cell[8];
                Canvas_cell(c, 6, r, cell);
                axis_rows += strcmp(cell, "│") == 0 || strcmp(cell, "┤") == 0;
            }
            if (measured >= 2)
                assert_int_equal(measured, axis_rows);
            Canvas_free(c);
        }
}

/* A message wider than the panel is read whole: broken at spaces into centred rows below the
   title, each within the width; one that fits stays on the middle row. */
static void test_message_wraps_at_spaces(void **state)
{
    (void)state;
    Canvas *c = Canvas_new(20, 10, false);
    Plot_message(c, "title", "nothing computed: change the settings, or q quits");
    const char *expected[] = {"nothing computed:", "change the settings,", "or q quits"};
    for (int i = 0; i < 3; i++) {
        char row[64];
        snprintf(row, sizeof row, "%s", row_text(c, 4 + i));
        size_t lead = strspn(row, " "), width = strlen(expected[i]);
        assert_int_equal(lead, (20 - width) / 2);
        assert_true(strncmp(row + lead, expected[i], width) == 0);
        assert_int_equal(strspn(row + lead + width, " "), strlen(row + lead + width));
    }
    Canvas_free(c);
    c = Canvas_new(20, 10, false);
    Plot_message(c, "title", "short");
    assert_string_equal(row_text(c, 5), "       short        ");
    Canvas_free(c);
}

static int count_glyph(const Canvas *c, const char *glyph)
{
    int n = 0;
    for (int r = 0; r < Canvas_rows(c); r++)
        for (int col = 0; col < Canvas_cols(c); col++) {
            char cell[8];
            Canvas_cell(c, col, r, cell);
            n += strcmp(cell, glyph) == 0;
        }
    return n;
}

/* No outlier (linear attention, window masks): nothing is marked, the legend says why. */
static void test_no_outlier_unmarked(void **state)
{
    (void)state;
    Canvas *c = Canvas_new(50, 24, true);
    EigenvaluePlot p = {.title = "eigenvalues",
                        .count = 4,
                        .values = NEAR,
                        .scale = 2.0,
                        .sigma = NAN,
                        .predicted_outlier = NAN,
                        .outlier = -1};
    Plot_eigenvalues(c, &p);
    const char *t = text(c);
    assert_null(strstr(t, "◆"));
    assert_null(strstr(t, "λ1 ="));
    assert_null(strstr(t, "▸"));
    assert_non_null(strstr(t, "no outlier: |λ1| < 2|λ2|"));
    assert_non_null(strstr(t, "√T·λ (4)"));
    assert_false(has_ink(c, INK_OUTLIER));
    Canvas_free(c);
}

/* s1 is marked apart in every histogram, but drawn as the outlier only where it stands apart
   by the eigenvalues' rule (s1 >= 2 s2), as the SVG export marks it. */
static void test_histogram_first_not_apart(void **state)
{
    (void)state;
    double s[16];
    for (int i = 0; i < 16; i++)
        s[i] = 1.0 - 0.05 * i; /* s1/s2 = 1.05 */
    Canvas *c = Canvas_new(50, 16, true);
    HistogramPlot p = {"singular values", 16, s, 1.0, NAN, "", "s", false};
    Plot_histogram(c, &p);
    const char *t = text(c);
    assert_non_null(strstr(t, "◆"));
    assert_non_null(strstr(t, "s1 = 1, s2 = 0.95"));
    assert_false(has_ink(c, INK_OUTLIER));
    Canvas_free(c);
    for (int i = 1; i < 16; i++)
        s[i] = 0.5 - 0.01 * (i - 1); /* s1 = 2 s2 exactly: apart */
    c = Canvas_new(50, 16, true);
    Plot_histogram(c, &p);
    assert_true(has_ink(c, INK_OUTLIER));
    Canvas_free(c);
}

/* After gap removal the eigenvalue that was 1 is at 0, marked and named. */
static void test_removed_outlier_marked(void **state)
{
    (void)state;
    const Complex removed[4] = {{0.1, 0.05}, {0.1, -0.05}, {-0.08, 0}, {0, 0}};
    Canvas *c = Canvas_new(50, 24, true);
    EigenvaluePlot p = {.title = "eigenvalues",
                        .count = 4,
                        .values = removed,
                        .scale = 2.0,
                        .sigma = NAN,
                        .predicted_outlier = NAN,
                        .outlier = -1,
                        .removed_to_zero = true};
    Plot_eigenvalues(c, &p);
    const char *t = text(c);
    assert_non_null(strstr(t, "λ1: 1 → 0 (gap removed)"));
    assert_non_null(strstr(t, "◎λ1→0"));
    assert_null(strstr(t, "◆"));
    Canvas_free(c);
}

/* σ = 55 around a bulk of radius 0.5: the axes follow the bulk and the circle is named off
   scale; the quartercircle's edge 2σ = 110 likewise. */
static void test_axes_follow_the_data(void **state)
{
    (void)state;
    Canvas *c = Canvas_new(50, 24, true);
    EigenvaluePlot p = {.title = "eigenvalues",
                        .count = 4,
                        .values = FAR,
                        .scale = 2.0,
                        .sigma = 55,
                        .predicted_outlier = NAN,
                        .outlier = 0};
    Plot_eigenvalues(c, &p);
    const char *t = text(c);
    assert_non_null(strstr(t, "|z| = σ = 55 off scale"));
    /* Ticks of a ±1.1 axis, not of ±60. */
    assert_null(strstr(t, "50"));
    assert_non_null(strstr(t, "-1┤"));
    assert_non_null(strstr(t, "Re z"));
    assert_non_null(strstr(t, "Im z"));
    Canvas_free(c);

    double s[64];
    s[0] = 1.0;
    for (int i = 1; i < 64; i++)
        s[i] = 0.2 * (64 - i) / 64.0;
    c = Canvas_new(50, 16, true);
    HistogramPlot h = {"singular values", 64, s, 8.0, 55, "quartercircle law", NULL, false};
    Plot_histogram(c, &h);
    t = text(c);
    assert_non_null(strstr(t, "quartercircle law off scale (edge 2σ = 110)"));
    assert_null(strstr(t, "100"));
    assert_non_null(strstr(t, "count"));
    assert_non_null(strstr(t, "√T·s"));
    Canvas_free(c);
}

/* The unit circle is a ring of its own glyph, not dots: without colour (and in ASCII) it
   is still not eigenvalues. */
static void test_unit_circle_shape(void **state)
{
    (void)state;
    for (int unicode = 0; unicode < 2; unicode++) {
        Canvas *c = Canvas_new(50, 24, unicode);
        EigenvaluePlot p = {.title = "eigenvalues",
                            .count = 4,
                            .values = FAR,
                            .scale = 0.5,
                            .sigma = NAN,
                            .predicted_outlier = NAN,
                            .outlier = 0};
        Plot_eigenvalues(c, &p);
        const char *ring = unicode ? "∘" : "o";
        /* The legend's sample, and the ring: many cells of it. */
        assert_true(count_glyph(c, ring) > 12);
        assert_non_null(
            strstr(text(c), unicode ? "|z| = 1, z = √T·λ" : "|z| = 1, z = sqrtT*lambda"));
        Canvas_free(c);
    }
}

/* At L = 1 the layer axis has the ticks 0 and 1, no 0.2; the shown layer is a column of ┆
   (":" in ASCII), not dots like the counterpart's curve. */
static void test_layer_axis_and_shown_layer(void **state)
{
    (void)state;
    double network[2] = {64, 1.5}, ghost[2] = {64, 20};
    for (int unicode = 0; unicode < 2; unicode++) {
        Canvas *c = Canvas_new(60, 16, unicode);
        StableRankPlot p = {.title = "stable rank",
                            .depth = 1,
                            .network = network,
                            .counterpart = ghost,
                            .network_label = "network",
                            .counterpart_label = "counterpart",
                            .top = 64,
                            .shown_layer = 1};
        Plot_stable_rank(c, &p);
        const char *t = text(c);
        assert_null(strstr(t, "0.2"));
        assert_null(strstr(t, "0.5"));
        assert_non_null(strstr(t, "layer"));
        assert_true(count_glyph(c, unicode ? "┆" : ":") >= 4);
        Canvas_free(c);
    }
}

/* A title wider than its panel wraps at a space: its end is on the second row. */
/* Where the network's ● and the counterpart's ○ fall in one cell the ● would hide the ○ the
   legend names: the cell shows ◉ (ASCII &) and the ○ curve's legend entry says what it is; curves
   that never meet draw neither.  Counted against the layers where the two values are equal. */
static void test_meeting_curves_both_visible(void **state)
{
    (void)state;
    double network[5] = {64, 1.5, 1.01, 1.0, 1.0}, counterpart[5] = {64, 20, 8, 1.0, 1.0};
    double apart[5] = {40, 20, 8, 3, 2};
    StableRankPlot p = {.title = "stable rank",
                        .depth = 4,
                        .network = network,
                        .counterpart = counterpart,
                        .network_label = "network",
                        .counterpart_label = "counterpart",
                        .top = 64,
                        .shown_layer = 1};
    for (int unicode = 0; unicode < 2; unicode++) {
        const char *both = unicode ? "◉" : "&";
        Canvas *c = Canvas_new(60, 16, unicode);
        Plot_stable_rank(c, &p);
        /* Equal at layers 0, 3 and 4: three cells, and the ○ entry of the legend says what they
         * are. */
        assert_int_equal(count_glyph(c, both), 3 + 1);
        assert_non_null(strstr(text(c), unicode ? "counterpart, ◉ on ●" : "counterpart, & on *"));
        Canvas_free(c);
    }
    p.counterpart = apart;
    Canvas *c = Canvas_new(60, 16, true);
    Plot_stable_rank(c, &p);
    assert_int_equal(count_glyph(c, "◉"), 0);
    assert_null(strstr(text(c), "on ●"));
    assert_int_equal(count_glyph(c, "○"), 5 + 1);
    Canvas_free(c);

    double x[5] = {0, 1, 2, 3, 4};
    SeriesPlot s = {.title = "similarity",
                    .count = 2,
                    .series = {{"network", 5, x, network, INK_BULK, STROKE_SOLID, "●"},
                               {"counterpart", 5, x, counterpart, INK_GHOST, STROKE_DOTTED, "○"}},
                    .x_scale = SCALE_LINEAR,
                    .y_scale = SCALE_LOG};
    c = Canvas_new(60, 16, true);
    Plot_series(c, &s);
    assert_int_equal(count_glyph(c, "◉"), 3 + 1);
    assert_non_null(strstr(text(c), "counterpart, ◉ on ●"));
    Canvas_free(c);
    s.series[1].y = apart;
    c = Canvas_new(60, 16, true);
    Plot_series(c, &s);
    assert_int_equal(count_glyph(c, "◉"), 0);
    assert_null(strstr(text(c), "on ●"));
    Canvas_free(c);
}

static void test_title_wraps(void **state)
{
    (void)state;
    Canvas *c = Canvas_new(40, 16, true);
    double network[3] = {64, 2, 1.5}, ghost[3] = {64, 20, 8};
    StableRankPlot p = {.title = "stable rank sr(Σℓ) against depth, log axis (mean ± 1 std)",
                        .depth = 2,
                        .network = network,
                        .counterpart = ghost,
                        .network_label = "network",
                        .counterpart_label = "counterpart",
                        .top = 64,
                        .shown_layer = 1};
    Plot_stable_rank(c, &p);
    assert_non_null(strstr(row_text(c, 0), "stable rank"));
    assert_non_null(strstr(row_text(c, 1), "(mean ± 1 std)"));
    Canvas_free(c);
}

/* The shade scale, by hand: 3/8 of a decade a step below the top, ' ' exactly 0. */
static void test_shades(void **state)
{
    (void)state;
    assert_int_equal(Figure_shade(0, 1), 0);
    assert_int_equal(Figure_shade(1, 1), 9);
    assert_int_equal(Figure_shade(-1, 1), 9);      /* |value| */
    assert_int_equal(Figure_shade(0.5, 1), 9);     /* log10 0.5 · 8/3 = −0.80 */
    assert_int_equal(Figure_shade(1.0 / 3, 1), 8); /* −1.27 */
    assert_int_equal(Figure_shade(0.1, 2), 6);     /* log10 0.05 · 8/3 = −3.47 */
    assert_int_equal(Figure_shade(1e-9, 1), 1);    /* below the scale: its first step, not blank */
    assert_int_equal(Figure_shade(1, 0), 0);       /* an all-zero map */
}

/* A causal matrix with uniform rows: a_ij = 1/(i + 1) for j ≤ i, 0 after. */
static double *causal_uniform(int T)
{
    double *a = calloc((size_t)T * T, sizeof(double));
    for (int i = 0; i < T; i++)
        for (int j = 0; j <= i; j++)
            a[i * T + j] = 1.0 / (i + 1);
    return a;
}

/* The map row `row` of the canvas from the column after the margin, as text. */
static const char *canvas_row(const Canvas *c, int row, int from)
{
    static char out[512];
    size_t used = 0;
    for (int col = from; col < Canvas_cols(c) && used + 8 < sizeof out; col++) {
        char cell[8];
        Canvas_cell(c, col, row, cell);
        used += (size_t)snprintf(out + used, sizeof out - used, "%s", cell);
    }
    return out;
}

/* A causal map drawn whole (10 cells fit): blank above the diagonal, shades by hand below. */
static void test_attention_map_causal(void **state)
{
    (void)state;
    int T = 10;
    double *a = causal_uniform(T);
    AttentionMap m;
    assert_int_equal(AttentionMap_reduce(a, T, 1, &m), 0);
    AttentionMapPlot p = {.title = "map", .map = &m, .tokens = T, .hint = "hint"};
    Canvas *c = Canvas_new(60, 20, false);
    Plot_attention_map(c, &p);
    int margin = 3; /* "10" and a blank */
    /* Row i: shade of 1/(i + 1) on keys 0..i: '@' for 1 and 1/2, '%' for 1/3, '#' for 1/10
       (log10 0.1 · 8/3 = −2.67: two steps down). */
    const char expected[10] = {'@', '@', '%', '%', '%', '#', '#', '#', '#', '#'};
    for (int i = 0; i < T; i++) {
        const char *row = canvas_row(c, 1 + i, margin);
        for (int j = 0; j < T; j++) {
            char want = j <= i ? expected[i] : ' ';
            if (row[2 * j] != want || row[2 * j + 1] != want)
                fail_msg("row %d, key %d: '%c%c', expected '%c%c'\n%s", i, j, row[2 * j],
                         row[2 * j + 1], want, want, text(c));
        }
    }
    assert_non_null(strstr(text(c), "block means 1x1 tokens"));
    assert_true(ascii_only(text(c)));
    Canvas_free(c);
    AttentionMap_release(&m);
    free(a);
}

/* T = 37 on a panel of 8 cells a side: blocks of 5, the last of 2, each the mean of its
   tokens (a loop here), shaded against the largest. */
static void test_attention_map_blocks_not_dividing(void **state)
{
    (void)state;
    int T = 37, b = 5, n = 8;
    double *a = causal_uniform(T);
    AttentionMap m;
    assert_int_equal(AttentionMap_reduce(a, T, 1, &m), 0);
    AttentionMapPlot p = {.title = "map", .map = &m, .tokens = T, .hint = "hint"};
    /* Rows: title, 8 cells, key axis, hint; the legend beside the map. */
    Canvas *c = Canvas_new(80, 1 + n + 2, false);
    Plot_attention_map(c, &p);
    double mean[8][8], top = 0;
    for (int r = 0; r < n; r++)
        for (int k = 0; k < n; k++) {
            int r1 = r * b + b < T ? r * b + b : T, k1 = k * b + b < T ? k * b + b : T;
            double sum = 0;
            for (int i = r * b; i < r1; i++)
                for (int j = k * b; j < k1; j++)
                    sum += a[i * T + j];
            mean[r][k] = sum / ((r1 - r * b) * (k1 - k * b));
            top = mean[r][k] > top ? mean[r][k] : top;
        }
    for (int r = 0; r < n; r++) {
        const char *row = canvas_row(c, 1 + r, 3);
        for (int k = 0; k < n; k++) {
            char want = FIGURE_SHADE_GLYPHS[Figure_shade(mean[r][k], top)];
            if (row[2 * k] != want)
                fail_msg("cell %d,%d: '%c', expected '%c'\n%s", r, k, row[2 * k], want, text(c));
        }
    }
    assert_non_null(strstr(text(c), "block means 5x5 tokens (last 2)"));
    assert_non_null(strstr(text(c), "8x8 cells"));
    Canvas_free(c);
    AttentionMap_release(&m);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eigenvalues),
        cmocka_unit_test(test_bold_legend_shows_the_drawn_point),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_stable_rank),
        cmocka_unit_test(test_ascii_and_small),
        cmocka_unit_test(test_eigenvalue_overlay),
        cmocka_unit_test(test_histogram_overlay),
        cmocka_unit_test(test_stable_rank_theory_and_band),
        cmocka_unit_test(test_series),
        cmocka_unit_test(test_series_rows_are_the_drawn_plot),
        cmocka_unit_test(test_no_outlier_unmarked),
        cmocka_unit_test(test_histogram_first_not_apart),
        cmocka_unit_test(test_removed_outlier_marked),
        cmocka_unit_test(test_axes_follow_the_data),
        cmocka_unit_test(test_unit_circle_shape),
        cmocka_unit_test(test_layer_axis_and_shown_layer),
        cmocka_unit_test(test_meeting_curves_both_visible),
        cmocka_unit_test(test_title_wraps),
        cmocka_unit_test(test_shades),
        cmocka_unit_test(test_attention_map_causal),
        cmocka_unit_test(test_attention_map_blocks_not_dividing),
        cmocka_unit_test(test_message_wraps_at_spaces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
