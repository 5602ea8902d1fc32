/* Every point is drawn on the row its y labels say.  The plots are drawn onto canvases of every
 * plot height from 2 to 12 rows, over linear and log axes and ranges from a fraction of a
 * decade to ten decades, and read back as a person reads them: the labels left of the axis
 * (their values parsed from the text) and the markers' rows.  From the labels alone, each
 * point's place is interpolated between the two labels around it (extrapolated from the two
 * nearest past the last), in rows; the row the point is drawn on must be that place rounded:
 * within half a row.  A 2-row log axis had drawn sr = 33 on the row labelled 256 with the row
 * below labelled 10. */
#include "testing.h"

#include "canvas_text.h"
#include "plot.h"

#include <string.h>

enum { POINTS = 12, LABELS_MAX = 32 };

/* What the canvas shows of one y axis: the labels' rows and values (in the axis's units:
   log10 of the label on a log axis), top down, and each marker's row, left to right. */
typedef struct {
    int plot_rows, labels, markers;
    int label_row[LABELS_MAX];
    double label_value[LABELS_MAX];
    int marker_row[POINTS];
} Reading;

static bool cell_is(const Canvas *c, int col, int row, const char *glyph)
{
    char cell[8];
    Canvas_cell(c, col, row, cell);
    return strcmp(cell, glyph) == 0;
}

/* The label ending left of the axis at (axis_col, row), as text. */
static void label_text(const Canvas *c, int axis_col, int row, char *out, size_t size)
{
    int start = axis_col;
    while (start > 0 && !cell_is(c, start - 1, row, " "))
        start--;
    size_t used = 0;
    for (int col = start; col < axis_col; col++) {
        char cell[8];
        Canvas_cell(c, col, row, cell);
        used += (size_t)snprintf(out + used, size - used, "%s", cell);
    }
    out[used] = '\0';
}

/* Reads the canvas; false where it shows no axis corner. */
static bool read_axis(const Canvas *c, const char *marker, bool log_axis, Reading *r)
{
    int axis_row = -1, axis_col = -1;
    for (int row = 0; row < Canvas_rows(c) && axis_row < 0; row++)
        for (int col = 0; col < Canvas_cols(c); col++)
            if (cell_is(c, col, row, "└")) {
                axis_row = row;
                axis_col = col;
                break;
            }
    if (axis_row < 0)
        return false;
    *r = (Reading){0};
    for (int row = 0; row < axis_row; row++) {
        bool tick = cell_is(c, axis_col, row, "┤");
        r->plot_rows += tick || cell_is(c, axis_col, row, "│");
        if (!tick || r->labels == LABELS_MAX)
            continue;
        char text[64];
        label_text(c, axis_col, row, text, sizeof text);
        /* "1e400" is no double: its log is log10 of the mantissa plus the exponent. */
        char *e = strchr(text, 'e'), *end, *after = e;
        double exponent = e ? strtol(e + 1, &after, 10) : 0;
        if (e)
            *e = '\0';
        double mantissa = strtod(text, &end);
        assert_true(end != text && *end == '\0' && (!e || *after == '\0'));
        r->label_row[r->labels] = row;
        r->label_value[r->labels++] =
            log_axis ? log10(mantissa) + exponent : mantissa * pow(10.0, exponent);
    }
    for (int col = axis_col + 1; col < Canvas_cols(c); col++)
        for (int row = 0; row < axis_row; row++)
            if (cell_is(c, col, row, marker) && r->markers < POINTS)
                r->marker_row[r->markers++] = row;
    return true;
}

/* The row where the labels put v: between the two around it, or past the end from the two
   nearest, linearly in the axis's units. */
static double labelled_place(const Reading *r, double v)
{
    int k = 0; /* labels k and k + 1, top down, so values descending */
    while (k < r->labels - 2 && v < r->label_value[k + 1])
        k++;
    double v0 = r->label_value[k], v1 = r->label_value[k + 1];
    return r->label_row[k] + (v - v0) / (v1 - v0) * (r->label_row[k + 1] - r->label_row[k]);
}

/* Checks the reading against the values (in axis units) drawn left to right; returns the
   plot's height.  Fewer than two labels give no spacing to check against. */
static int check_rows(const Canvas *c, const Reading *r, const double *values, const char *what)
{
    static char shown[1 << 16];
    canvas_text(c, shown, sizeof shown);
    if (r->markers != POINTS)
        fail_msg("%s: %d markers of %d on\n%s", what, r->markers, POINTS, shown);
    for (int i = 1; i < r->labels; i++)
        if (!(r->label_value[i] < r->label_value[i - 1]))
            fail_msg("%s: labels not descending on\n%s", what, shown);
    for (int i = 0; i < POINTS && r->labels >= 2; i++) {
        double place = labelled_place(r, values[i]);
        if (!(fabs(r->marker_row[i] - place) <= 0.5 + 1e-9))
            fail_msg("%s, %d plot rows: point %d (%g) drawn on row %d, its labels put it at "
                     "%.3f:\n%s",
                     what, r->plot_rows, i, values[i], r->marker_row[i], place, shown);
    }
    return r->plot_rows;
}

/* Deterministic values spread over [lo, hi] in axis units, the ends among them. */
static void spread(double lo, double hi, unsigned seed, double *out)
{
    for (int i = 0; i < POINTS; i++) {
        seed = seed * 1103515245u + 12345u;
        out[i] = lo + (hi - lo) * ((seed >> 8) % 10007) / 10006.0;
    }
    out[seed % POINTS] = lo;
    out[(seed / POINTS + 1 + seed % POINTS) % POINTS] = hi;
}

static void test_series_rows(void **state)
{
    (void)state;
    /* Ranges in axis units: on log axes exponents. */
    const double ranges[][2] = {{0, 4.4},     {-3, 7},    {1000, 1003}, {0.001, 0.0023},
                                {-50, -49.2}, {0, 1},     {0.3, 10},    {0.301, 1.3},
                                {0, 2.41},    {0.1, 0.7}, {-2, 3.5},    {0, 10}};
    bool covered[13] = {false};
    double layers[POINTS], y[POINTS], shown[POINTS];
    for (int i = 0; i < POINTS; i++)
        layers[i] = i;
    for (Scale scale = SCALE_LINEAR; scale <= SCALE_LOG10_GIVEN; scale++)
        for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++)
            for (unsigned seed = 1; seed <= 6; seed++)
                for (int height = 6; height <= 16; height++) {
                    bool log_axis = scale != SCALE_LINEAR;
                    if (scale == SCALE_LOG && fabs(ranges[k][0]) > 300)
                        continue; /* 10^1000 is no double: SCALE_LOG10_GIVEN's */
                    spread(ranges[k][0], ranges[k][1], seed + 31u * (unsigned)k, shown);
                    for (int i = 0; i < POINTS; i++)
                        y[i] = scale == SCALE_LOG ? pow(10.0, shown[i]) : shown[i];
                    SeriesPlot p = {
                        .title = "t",
                        .count = 1,
                        .series = {{"s", POINTS, layers, y, INK_BULK, STROKE_SOLID, "●"}},
                        .x_scale = SCALE_LINEAR,
                        .y_scale = scale,
                        .x_whole = true};
                    Canvas *c = Canvas_new(70, height, true);
                    Plot_series(c, &p);
                    Reading r;
                    char what[96];
                    snprintf(what, sizeof what, "scale %d over [%g, %g], seed %u", (int)scale,
                             ranges[k][0], ranges[k][1], seed);
                    if (!read_axis(c, "●", log_axis, &r)) {
                        static char drawn[1 << 16];
                        canvas_text(c, drawn, sizeof drawn);
                        fail_msg("%s: no axes on\n%s", what, drawn);
                    }
                    int rows = check_rows(c, &r, shown, what);
                    if (rows >= 2 && rows <= 12)
                        covered[rows] = true;
                    Canvas_free(c);
                }
    for (int rows = 2; rows <= 12; rows++)
        assert_true(covered[rows]);
}

static void test_stable_rank_rows(void **state)
{
    (void)state;
    const double tops[] = {256, 64, 1024, 100, 12};
    bool covered[13] = {false};
    double network[POINTS], shown[POINTS], none[POINTS];
    for (size_t k = 0; k < sizeof tops / sizeof tops[0]; k++)
        for (unsigned seed = 1; seed <= 6; seed++)
            for (int height = 6; height <= 18; height++) {
                spread(0, log10(tops[k]), seed + 7u * (unsigned)k, shown);
                for (int i = 0; i < POINTS; i++) {
                    network[i] = pow(10.0, shown[i]);
                    none[i] = NAN;
                }
                StableRankPlot p = {.title = "sr",
                                    .depth = POINTS - 1,
                                    .network = network,
                                    .counterpart = none,
                                    .network_label = "network",
                                    .counterpart_label = "counterpart",
                                    .top = tops[k],
                                    .shown_layer = 0};
                Canvas *c = Canvas_new(70, height, true);
                Plot_stable_rank(c, &p);
                Reading r;
                if (read_axis(c, "●", true, &r)) {
                    char what[64];
                    snprintf(what, sizeof what, "stable rank up to %g, seed %u", tops[k], seed);
                    int rows = check_rows(c, &r, shown, what);
                    if (rows >= 2 && rows <= 12)
                        covered[rows] = true;
                }
                Canvas_free(c);
            }
    for (int rows = 2; rows <= 12; rows++)
        assert_true(covered[rows]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_rows),
        cmocka_unit_test(test_stable_rank_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
