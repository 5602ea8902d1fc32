#include "svg.h"

#include "attnscope/entropy.h"
#include "figure_series.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A 640-pixel-wide picture: the title, the settings wrapped under it, the plot area with
   its ticks and axes' names, and the legend below. */
enum { SVG_W = 640, SIDE = 60, SUBTITLE_CHARS = 88, LINE = 15 };

/* Data ranges onto pixels: x to the right from left, y upwards from bottom. */
typedef struct {
    double x0, x1, y0, y1;
    bool log_y;
    int top, bottom; /* the plot area's first and last pixel rows */
} Frame;

static const char *const INK_COLOUR[INK_COUNT] = {
    [INK_DEFAULT] = "#333",
    [INK_AXIS] = "#999",
    [INK_BULK] = "#137",
    [INK_OUTLIER] = "#d22",
    [INK_THEORY] = "#c60",
    [INK_GHOST] = "#888",
    [INK_HIGHLIGHT] = "#393",
    /* The map's shades, as the screen's 256 colours. */
    [INK_SHADE_1] = "#005faf",
    [INK_SHADE_2] = "#0087af",
    [INK_SHADE_3] = "#00afaf",
    [INK_SHADE_4] = "#00af5f",
    [INK_SHADE_5] = "#5faf00",
    [INK_SHADE_6] = "#afaf00",
    [INK_SHADE_7] = "#d7af00",
    [INK_SHADE_8] = "#d75f00",
    [INK_SHADE_9] = "#d70000"};

static double px(const Frame *fr, double x)
{
    return SIDE + (x - fr->x0) / (fr->x1 - fr->x0) * (SVG_W - 2 * SIDE);
}

static double py(const Frame *fr, double y)
{
    double lo = fr->log_y ? log10(fr->y0) : fr->y0, hi = fr->log_y ? log10(fr->y1) : fr->y1;
    double v = fr->log_y ? log10(y) : y;
    return fr->bottom - (v - lo) / (hi - lo) * (fr->bottom - fr->top);
}

/* Text as XML character data ("|λ1| < 2|λ2|" holds a <). */
static void escaped(FILE *f, const char *text)
{
    for (; *text; text++) {
        if (*text == '<')
            fputs("&lt;", f);
        else if (*text == '>')
            fputs("&gt;", f);
        else if (*text == '&')
            fputs("&amp;", f);
        else
            fputc(*text, f);
    }
}

static int svg_legend(FILE *f, const LegendItem *items, int n, int y);

enum { SUBTITLE_LINES_MAX = 16 };

/* The settings after the version, broken before an option where a line would pass
   SUBTITLE_CHARS; returns the number of lines. */
static int subtitle_lines(const char *settings, char lines[][SUBTITLE_CHARS + 64])
{
    int count = 0, used = snprintf(lines[0], sizeof lines[0], "attnscope %s:", ATTNSCOPE_VERSION);
    for (const char *option = settings; *option;) {
        const char *end = strstr(option + 1, " --");
        int length = end ? (int)(end - option) : (int)strlen(option);
        if (used + 1 + length > SUBTITLE_CHARS && count + 1 < SUBTITLE_LINES_MAX) {
            count++;
            used = 0;
        }
        used += snprintf(lines[count] + used, sizeof lines[0] - used, "%s%.*s", used ? " " : "",
                         length < SUBTITLE_CHARS ? length : SUBTITLE_CHARS, option);
        option += length + (end ? 1 : 0);
    }
    return count + 1;
}

/* The header with the settings that reproduce the run (its desc, read back by scripts), the
   title, and every setting away from its default as the subtitle, over a plot area of `rows`
   pixel rows and the rows the legend takes.  Returns the plot area's first pixel row. */
static int svg_open(FILE *f, const char *title, const Config *c, int rows, const LegendItem *legend,
                    int legend_count)
{
    char settings[1024], lines[SUBTITLE_LINES_MAX][SUBTITLE_CHARS + 64];
    Figure_settings(c, settings, sizeof settings);
    int count = subtitle_lines(settings, lines);
    int top = 42 + LINE * (count - 1) + 18;
    int height = top + rows + 50 + svg_legend(NULL, legend, legend_count, 0) * LINE;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
            "<desc>attnscope %s %s</desc>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text class=\"title\" x=\"%d\" y=\"24\" font-size=\"15\">",
            SVG_W, height, SVG_W, height, ATTNSCOPE_VERSION, settings, SIDE);
    escaped(f, title);
    fputs("</text>\n<text class=\"subtitle\" fill=\"#555\">", f);
    for (int i = 0; i < count; i++)
        fprintf(f, "<tspan x=\"%d\" y=\"%d\">%s</tspan>", SIDE, 42 + LINE * i, lines[i]);
    fputs("</text>\n", f);
    return top;
}

/* Tick values: on a linear axis the screen's (Figure_ticks, about `wanted`, whole numbers
   only along layers); on a log axis every decade, with 2 and 5 between when there are fewer
   than three decades. */
static int tick_values(double lo, double hi, bool log_axis, bool whole, int wanted, double *values,
                       double *step)
{
    if (!log_axis)
        return Figure_ticks(lo, hi, wanted, whole, values, 64, step);
    int n = 0;
    bool fine = log10(hi) - log10(lo) < 3;
    for (double decade = pow(10, floor(log10(lo))); decade <= hi && n < 60; decade *= 10)
        for (int m = 0; m < (fine ? 3 : 1); m++) {
            double v = decade * (m == 0 ? 1 : m == 1 ? 2 : 5);
            if (v >= lo && v <= hi)
                values[n++] = v;
        }
    *step = lo;
    return n;
}

/* One tick at pixel `at` along the x axis (or the y axis) with its label. */
static void svg_tick(FILE *f, const Frame *fr, bool x_axis, double at, const char *label)
{
    if (x_axis)
        fprintf(f,
                "<line class=\"tick\" x1=\"%.2f\" x2=\"%.2f\" y1=\"%d\" y2=\"%d\" "
                "stroke=\"#333\"/><text x=\"%.2f\" y=\"%d\" "
                "text-anchor=\"middle\">%s</text>\n",
                at, at, fr->bottom, fr->bottom + 5, at, fr->bottom + 18, label);
    else
        fprintf(f,
                "<line class=\"tick\" x1=\"%d\" x2=\"%d\" y1=\"%.2f\" y2=\"%.2f\" "
                "stroke=\"#333\"/><text x=\"%d\" y=\"%.2f\" "
                "text-anchor=\"end\">%s</text>\n",
                SIDE - 5, SIDE, at, at, SIDE - 7, at + 4, label);
}

static void svg_ticks(FILE *f, const Frame *fr, bool x_axis, bool whole, int wanted)
{
    double values[64], step;
    int n = x_axis ? tick_values(fr->x0, fr->x1, false, whole, wanted, values, &step)
                   : tick_values(fr->y0, fr->y1, fr->log_y, false, wanted, values, &step);
    for (int i = 0; i < n; i++) {
        char label[32];
        Figure_tick_label(values[i], step, label, sizeof label);
        svg_tick(f, fr, x_axis, x_axis ? px(fr, values[i]) : py(fr, values[i]), label);
    }
}

/* The plot area's frame and its axes' names. */
static void svg_box(FILE *f, const Frame *fr, const char *xlabel, const char *ylabel)
{
    int middle = (fr->top + fr->bottom) / 2;
    fprintf(f,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n"
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n"
            "<text x=\"16\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">%s"
            "</text>\n",
            SIDE, fr->top, SVG_W - 2 * SIDE, fr->bottom - fr->top, SVG_W / 2, fr->bottom + 34,
            xlabel, middle, middle, ylabel);
}

/* whole_x: x counts layers, ticked at whole numbers only. */
static void svg_axes(FILE *f, const Frame *fr, const char *xlabel, const char *ylabel, int x_ticks,
                     int y_ticks, bool whole_x)
{
    svg_box(f, fr, xlabel, ylabel);
    svg_ticks(f, fr, true, whole_x, x_ticks);
    svg_ticks(f, fr, false, false, y_ticks);
}

/* One cell of a legend's sample at (x, y), the baseline of its row. */
static void legend_sample(FILE *f, const char *glyph, uint8_t dots, const char *colour, double x,
                          int y)
{
    if (glyph)
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"%s\">%s</text>", x, y, colour, glyph);
    else if (dots == SAMPLE_FULL)
        fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"8\" height=\"10\" fill=\"%s\"/>", x, y - 9,
                colour);
    else if (dots == SAMPLE_STROKE)
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\"/>", x, x + 10,
                y - 4, y - 4, colour);
    else if (dots == SAMPLE_VERTICAL_DOTS)
        fprintf(f,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" "
                "stroke-dasharray=\"1 2\"/>",
                x + 4, x + 4, y - 10, y, colour);
    else
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%d\" r=\"1.5\" fill=\"%s\"/>", x + 4, y - 4, colour);
}

enum { LEGEND_RIGHT = SVG_W - 10 };

/* The width a text of n bytes is given: sans-serif at 12 px averages about 6.5 px a
   character (no renderer measures it for us). */
static double text_width(const char *utf8, size_t n)
{
    double width = 0;
    for (size_t i = 0; i < n; i++)
        width += ((unsigned char)utf8[i] & 0xC0) != 0x80 ? 6.5 : 0;
    return width;
}

static void legend_segment(FILE *f, double x, int y, const char *text, size_t n)
{
    if (!f || n == 0)
        return;
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"#333\">", x, y);
    for (size_t i = 0; i < n; i++) {
        char one[2] = {text[i], '\0'};
        escaped(f, one);
    }
    fputs("</text>\n", f);
}

/* The legend from row y, as on the screen: items flow left to right and wrap, and a text
   longer than a row breaks at spaces.  f NULL only counts.  Returns the rows. */
static int svg_legend(FILE *f, const LegendItem *items, int n, int y)
{
    double x = SIDE;
    int rows = 1;
    if (f)
        fputs("<g class=\"legend\">\n", f);
    for (int i = 0; i < n; i++) {
        const LegendItem *item = &items[i];
        const char *text = item->text;
        /* A new row for an item that does not fit whole, as on the screen; only one wider
           than a row breaks. */
        if (x > SIDE && x + 12 * item->cells + 2 + text_width(text, strlen(text)) > LEGEND_RIGHT) {
            x = SIDE;
            y += LINE;
            rows++;
        }
        for (int k = 0; k < item->cells; k++, x += 12)
            if (f)
                legend_sample(f, item->sample[k].glyph, item->sample[k].dots, INK_COLOUR[item->ink],
                              x, y);
        x += item->cells ? 2 : 0;
        const char *start = text;
        double start_x = x;
        for (const char *word = text; *word;) {
            const char *end = strchr(word, ' ');
            size_t length = end ? (size_t)(end - word) : strlen(word);
            double width = text_width(word, length);
            if (x + width > LEGEND_RIGHT && word > start) {
                legend_segment(f, start_x, y, start, (size_t)(word - start - 1));
                x = start_x = SIDE;
                y += LINE;
                rows++;
                start = word;
            }
            x += width + (end ? 6.5 : 0);
            word += length + (end ? 1 : 0);
        }
        legend_segment(f, start_x, y, start, strlen(start));
        x += 18;
    }
    if (f)
        fputs("</g>\n", f);
    return rows;
}

static void svg_close(FILE *f, const LegendItem *items, int n, const Frame *fr)
{
    svg_legend(f, items, n, fr->bottom + 56);
    fputs("</svg>\n", f);
}

/* A picture of `rows` pixel rows that says, `down` rows into it, why its plot is not there. */
static void svg_message(FILE *f, const Config *c, const char *title, int rows, int down,
                        const char *message)
{
    int top = svg_open(f, title, c, rows, NULL, 0);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n</svg>\n", SVG_W / 2,
            top + down, message);
}

/* The shown matrix's two spectrum plots with the titles they point into. */
typedef struct {
    char eigenvalue_title[FIGURE_TITLE_SIZE], singular_value_title[FIGURE_TITLE_SIZE];
    EigenvaluePlot eigenvalues;
    HistogramPlot singular_values;
} Spectra;

/* The spectra of the shown matrix, or (its layer not done) plots with no points. */
static void spectra(const Result *r, Spectra *s)
{
    Figure_spectra(r, true, s->eigenvalue_title, s->singular_value_title, &s->eigenvalues,
                   &s->singular_values);
    if (!r->spectra_ready)
        s->eigenvalues.count = s->singular_values.count = 0;
}

enum { EIGEN_ROWS = 360, HISTOGRAM_ROWS = 300, STABLE_ROWS = 300 };

/* An eigenvalue panel of the matrix of c's settings. */
static void svg_eigenvalue_plot(FILE *f, const Config *c, const EigenvaluePlot *p)
{
    EigenvalueFigure fig;
    Figure_eigenvalues(p, &fig);
    /* Equal units on both axes: the view's square is the height; x shows more. */
    double y_half = fig.range, x_half = fig.range * (SVG_W - 2 * SIDE) / EIGEN_ROWS;
    int top = svg_open(f, p->title, c, EIGEN_ROWS, fig.legend, fig.legend_count);
    Frame fr = {-x_half, x_half, -y_half, y_half, false, top, top + EIGEN_ROWS};
    svg_axes(f, &fr, "Re z, z = √T·λ", "Im z", 8, 6, false);
    double unit = EIGEN_ROWS / (2 * y_half);
    fprintf(f,
            "<circle class=\"theory unit\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"none\" "
            "stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
            px(&fr, 0), py(&fr, 0), unit);
    if (fig.sigma_fits)
        fprintf(f,
                "<circle class=\"theory sigma\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"none\" "
                "stroke=\"%s\"/>\n",
                px(&fr, 0), py(&fr, 0), p->sigma * unit, INK_COLOUR[INK_THEORY]);
    for (int i = 0; i < p->count; i++)
        if (!(fig.marked && i == p->outlier))
            fprintf(f, "<circle class=\"point\" cx=\"%.2f\" cy=\"%.2f\" r=\"2\" fill=\"%s\"/>\n",
                    px(&fr, fmax(fmin(p->scale * p->values[i].re, x_half), -x_half)),
                    py(&fr, fmax(fmin(p->scale * p->values[i].im, y_half), -y_half)),
                    INK_COLOUR[INK_BULK]);
    double re, im, predicted;
    Figure_place(&fig, x_half, y_half, &re, &im, &predicted);
    if (fig.predicted)
        fprintf(f,
                "<text class=\"theory predicted\" x=\"%.2f\" y=\"%.2f\" fill=\"%s\" "
                "text-anchor=\"middle\">◇</text>\n",
                px(&fr, predicted), py(&fr, 0) + 4, INK_COLOUR[INK_THEORY]);
    if (!fig.marked && p->removed_to_zero)
        fprintf(f, "<text class=\"removed\" x=\"%.2f\" y=\"%.2f\" fill=\"%s\">%s λ1→0</text>\n",
                px(&fr, 0) - 4, py(&fr, 0) + 4, INK_COLOUR[INK_OUTLIER], FIGURE_REMOVED_GLYPH);
    if (fig.marked)
        fprintf(
            f,
            "<text class=\"point outlier\" x=\"%.2f\" y=\"%.2f\" fill=\"%s\" "
            "text-anchor=\"middle\">%s</text><text x=\"%.2f\" y=\"%.2f\" fill=\"%s\">λ1</text>\n",
            px(&fr, re), py(&fr, im) + 4, INK_COLOUR[INK_OUTLIER], fig.glyph, px(&fr, re) + 7,
            py(&fr, im) + 4, INK_COLOUR[INK_OUTLIER]);
    svg_close(f, fig.legend, fig.legend_count, &fr);
}

void Svg_eigenvalues(FILE *f, const Result *r)
{
    Spectra s;
    spectra(r, &s);
    svg_eigenvalue_plot(f, &r->config, &s.eigenvalues);
}

void Svg_compare_eigenvalues(FILE *f, const Result *r, const ToggledNetwork *toggled, bool removed)
{
    char title[FIGURE_TITLE_SIZE];
    EigenvaluePlot e;
    Config half;
    if (Figure_compare_eigenvalues(r, toggled, removed, true, title, &e, &half))
        svg_eigenvalue_plot(f, &half, &e);
    else
        svg_message(f, &half, title, EIGEN_ROWS, EIGEN_ROWS / 2, "not computed when exported");
}

/* The ticks under a histogram's axis: one per pixel column that holds values, at its middle,
   carrying how many (data-count) and the least and greatest of them (data-min, data-max, as
   given, unscaled), so that 65 536 singular values make at most a mark per column, each
   value still accounted for.  Values come descending: a column's are consecutive. */
static void svg_value_ticks(FILE *f, const Frame *fr, const HistogramPlot *p, double range)
{
    for (int i = p->every_value ? 0 : 1, next; i < p->count; i = next) {
        double column = floor(px(fr, fmin(p->scale * p->values[i], range)));
        double least = p->values[i], greatest = p->values[i];
        for (next = i + 1;
             next < p->count && floor(px(fr, fmin(p->scale * p->values[next], range))) == column;
             next++) {
            least = fmin(least, p->values[next]);
            greatest = fmax(greatest, p->values[next]);
        }
        fprintf(f,
                "<line class=\"point\" data-count=\"%d\" data-min=\"%.17g\" data-max=\"%.17g\" "
                "x1=\"%.2f\" x2=\"%.2f\" y1=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>\n",
                next - i, least, greatest, column + 0.5, column + 0.5, py(fr, 0), py(fr, 0) + 6,
                INK_COLOUR[INK_BULK]);
    }
}

/* A histogram as the screen draws it: bars of scale·s_i, i ≥ 2 (each with its count in
   data-count), with the law's expected counts, ticks under the axis where the values are,
   and s1 marked apart (as the outlier only when it stands apart, on the right border when the
   view stops short of it); of every value alike (every_value), none apart. */
static void svg_histogram(FILE *f, const Config *c, const HistogramPlot *p)
{
    HistogramFigure fig;
    Figure_histogram(p, &fig);
    enum { BINS = 40 };
    int counts[BINS];
    double expected[BINS];
    double top = Figure_histogram_bins(p, &fig, BINS, counts, expected);
    double range = fig.range > 0 ? fig.range : 1;
    int start = svg_open(f, p->title, c, HISTOGRAM_ROWS, fig.legend, fig.legend_count);
    Frame fr = {0, range, 0, 1.1 * top, false, start, start + HISTOGRAM_ROWS};
    svg_axes(f, &fr, fig.name, "count", 6, 4, false);
    double width = range / BINS;
    for (int b = 0; b < BINS; b++) {
        if (counts[b])
            fprintf(f,
                    "<rect class=\"bar\" data-count=\"%d\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                    "height=\"%.2f\" fill=\"#9bd\"/>\n",
                    counts[b], px(&fr, b * width), py(&fr, counts[b]), px(&fr, width) - px(&fr, 0),
                    py(&fr, 0) - py(&fr, counts[b]));
        if (fig.theory && expected[b] > 0)
            fprintf(f,
                    "<line class=\"theory\" x1=\"%.2f\" x2=\"%.2f\" y1=\"%.2f\" y2=\"%.2f\" "
                    "stroke=\"%s\"/>\n",
                    px(&fr, b * width), px(&fr, (b + 1) * width), py(&fr, expected[b]),
                    py(&fr, expected[b]), INK_COLOUR[INK_THEORY]);
    }
    svg_value_ticks(f, &fr, p, range);
    if (p->count > 0 && !p->every_value) {
        const char *colour = INK_COLOUR[fig.outlier ? INK_OUTLIER : INK_BULK];
        double x = px(&fr, fig.pinned ? 0.99 * range : fig.s1);
        fprintf(f,
                "<text class=\"point %s\" x=\"%.2f\" y=\"%.2f\" fill=\"%s\" "
                "text-anchor=\"middle\">%s</text><text x=\"%.2f\" y=\"%.2f\" fill=\"%s\" "
                "text-anchor=\"end\">s1</text>\n",
                fig.outlier ? "outlier" : "first", x, py(&fr, 0) - 3, colour, fig.glyph, x - 6,
                py(&fr, 0) - 14, colour);
    }
    svg_close(f, fig.legend, fig.legend_count, &fr);
}

void Svg_singular_values(FILE *f, const Result *r)
{
    Spectra s;
    spectra(r, &s);
    svg_histogram(f, &r->config, &s.singular_values);
}

/* A curve of stable ranks (at least 1: the log axis starts there) as a polyline, with a
   marker on every layer whose class is `marks` (NULL: no markers). */
static void svg_curve(FILE *f, const Frame *fr, const double *v, int depth, Ink ink,
                      const char *dash, const char *marks, const char *glyph)
{
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\"%s points=\"", INK_COLOUR[ink], dash);
    for (int l = 0; l <= depth; l++)
        if (isfinite(v[l]) && v[l] > 0)
            fprintf(f, "%.2f,%.2f ", px(fr, l), py(fr, fmax(v[l], 1.0)));
    fputs("\"/>\n", f);
    for (int l = 0; marks && l <= depth; l++)
        if (isfinite(v[l]) && v[l] > 0)
            fprintf(f,
                    "<text class=\"%s\" x=\"%.2f\" y=\"%.2f\" fill=\"%s\" "
                    "text-anchor=\"middle\">%s</text>\n",
                    marks, px(fr, l), py(fr, fmax(v[l], 1.0)) + 4, INK_COLOUR[ink], glyph);
}

/* The ±1 std band around the mean, as one closed shape between mean − std and mean + std. */
static void svg_band(FILE *f, const Frame *fr, const double *mean, const double *std, int depth)
{
    fprintf(f, "<polygon class=\"band\" fill=\"%s\" fill-opacity=\"0.2\" points=\"",
            INK_COLOUR[INK_BULK]);
    for (int l = 0; l <= depth; l++)
        if (isfinite(mean[l]) && isfinite(std[l]))
            fprintf(f, "%.2f,%.2f ", px(fr, l), py(fr, fmax(mean[l] + std[l], 1.0)));
    for (int l = depth; l >= 0; l--)
        if (isfinite(mean[l]) && isfinite(std[l]))
            fprintf(f, "%.2f,%.2f ", px(fr, l), py(fr, fmax(mean[l] - std[l], 1.0)));
    fputs("\"/>\n", f);
}

/* The screen's stable-rank panel: both networks (the ensemble's means and band once a second
   seed is in), the theory's curves, the shown layer, on the log axis from 1 to T. */
void Svg_stable_rank(FILE *f, const Result *r)
{
    StableRankText text;
    StableRankPlot p;
    Figure_stable_rank_plot(r, true, FIRST_NETWORK, &text, &p);
    StableRankFigure fig;
    Figure_stable_rank(&p, &fig);
    int start = svg_open(f, p.title, &r->config, STABLE_ROWS, fig.legend, fig.legend_count);
    Frame fr = {0, p.depth > 0 ? p.depth : 1, 1, fmax(p.top, 2), true, start, start + STABLE_ROWS};
    svg_axes(f, &fr, "layer ℓ", "sr(Σℓ)", 6, 4, true);
    if (fig.ensemble)
        svg_band(f, &fr, p.network, p.band_std, p.depth);
    const char *dashed = " stroke-dasharray=\"6 4\"", *dotted = " stroke-dasharray=\"2 3\"";
    if (fig.counterpart_theory)
        svg_curve(f, &fr, p.counterpart_theory, p.depth, INK_THEORY, dashed, "theory", "×");
    if (fig.theory)
        svg_curve(f, &fr, p.theory, p.depth, INK_THEORY, dashed, "theory", "×");
    svg_curve(f, &fr, p.counterpart, p.depth, INK_GHOST, dotted, "point counterpart", "○");
    svg_curve(f, &fr, p.network, p.depth, INK_BULK, "", "point network", "●");
    double x = px(&fr, p.shown_layer);
    fprintf(f,
            "<line class=\"shown\" x1=\"%.2f\" x2=\"%.2f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\"%s/>\n",
            x, x, fr.top, fr.bottom, INK_COLOUR[INK_HIGHLIGHT], dotted);
    for (int l = 1; p.local && l <= p.depth; l++)
        if (p.local[l])
            fprintf(f,
                    "<text class=\"local\" x=\"%.2f\" y=\"%d\" fill=\"%s\" "
                    "text-anchor=\"middle\">%s</text>\n",
                    px(&fr, l), fr.top + 10, INK_COLOUR[INK_AXIS], FIGURE_LOCAL_GLYPH);
    svg_close(f, fig.legend, fig.legend_count, &fr);
}

/* The map's cells at most this many a side: 5 pixels each, some 10⁴ rectangles. */
enum { SVG_MAP_CELLS = 104, MAP_MASS_ROWS = 120, MAP_LEGEND_ROWS = 3 * LINE };

/* The column mass of the product under the map, on the map's x (token j at its column). */
static int svg_column_mass(FILE *f, const AttentionMapPlot *p, int top)
{
    double peak = 0;
    for (int j = 0; j < p->tokens; j++)
        peak = fmax(peak, p->column_mass[j]);
    Frame fr = {0, p->tokens, 0, peak > 0 ? peak : 1, false, top + 20, top + 20 + MAP_MASS_ROWS};
    fprintf(f, "<text x=\"%d\" y=\"%d\">", SIDE, top + 12);
    escaped(f, p->mass_label);
    fputs("</text>\n", f);
    svg_axes(f, &fr, "token j", "column mass", 6, 3, false);
    fprintf(f, "<polyline class=\"column-mass\" fill=\"none\" stroke=\"%s\" points=\"",
            INK_COLOUR[INK_BULK]);
    for (int j = 0; j < p->tokens; j++)
        fprintf(f, "%.2f,%.2f ", px(&fr, j + 0.5), py(&fr, p->column_mass[j]));
    fputs("\"/>\n", f);
    return fr.bottom + 40;
}

/* The shade scale as coloured squares, then the legend's phrases on two lines. */
static void svg_map_legend(FILE *f, const AttentionMap *drawn, double top, int y)
{
    fprintf(f, "<g class=\"legend\">\n<text x=\"%d\" y=\"%d\">shades</text>\n", SIDE, y);
    for (int shade = 1; shade < FIGURE_SHADES; shade++)
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>\n",
                SIDE + 40 + 12 * shade, y - 9, INK_COLOUR[INK_SHADE_1 + shade - 1]);
    char phrase[FIGURE_MAP_PHRASES][FIGURE_MAP_PHRASE_SIZE];
    Figure_map_legend(top, drawn, phrase);
    fprintf(f, "<text x=\"%d\" y=\"%d\">", SIDE + 40 + 12 * FIGURE_SHADES + 4, y);
    escaped(f, phrase[0]);
    fputs(", ", f);
    escaped(f, phrase[1]);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"%d\">%s, %s; %s</text>\n</g>\n", SIDE, y + LINE,
            phrase[2], phrase[3], phrase[4]);
}

void Svg_attention_map(FILE *f, const Result *r)
{
    AttentionMapPlot p;
    Figure_attention_map(r, &p);
    AttentionMap drawn = {0};
    bool map =
        !p.message && !AttentionMap_coarsen(p.map, Figure_map_factor(p.map, SVG_MAP_CELLS), &drawn);
    int side = SVG_W - 2 * SIDE, below = p.product && map ? MAP_MASS_ROWS + 80 : 0;
    if (!map) {
        svg_message(f, &r->config, p.title, side + MAP_LEGEND_ROWS, side / 2,
                    p.message ? p.message : "out of memory for the map");
        return;
    }
    int top = svg_open(f, p.title, &r->config, side + below + MAP_LEGEND_ROWS, NULL, 0);
    double cell = (double)side / drawn.cells, scale_top = Figure_map_top(&drawn);
    fprintf(f, "<g class=\"map\">\n");
    for (int i = 0; i < drawn.cells; i++)
        for (int j = 0; j < drawn.cells; j++) {
            int shade = Figure_shade(drawn.mean[(size_t)i * drawn.cells + j], scale_top);
            if (shade)
                fprintf(
                    f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
                    SIDE + j * cell, top + i * cell, cell, cell,
                    INK_COLOUR[INK_SHADE_1 + shade - 1]);
        }
    fprintf(f,
            "</g>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
            "stroke=\"#333\"/>\n",
            SIDE, top, side, side);
    int y = top + side + 8;
    if (p.product)
        y = svg_column_mass(f, &p, y);
    svg_map_legend(f, &drawn, scale_top, y + LINE);
    fputs("</svg>\n", f);
    AttentionMap_release(&drawn);
}

enum { SERIES_ROWS = 300 };

static const char *dash_of(Stroke s)
{
    return s == STROKE_DASHED   ? " stroke-dasharray=\"6 4\""
           : s == STROKE_DOTTED ? " stroke-dasharray=\"2 3\""
                                : "";
}

enum { SERIES_TICKS_MAX = 192 };

/* The ticks of a series plot's axis, in its scale's units (exponents on a log axis): the
   screen's (Figure_log_axis_ticks, or Figure_ticks on whole numbers along layers). */
static void series_ticks(FILE *f, const Frame *fr, bool x_axis, Scale scale, bool whole, int wanted)
{
    double lo = x_axis ? fr->x0 : fr->y0, hi = x_axis ? fr->x1 : fr->y1;
    double values[SERIES_TICKS_MAX], step = 1;
    char labels[SERIES_TICKS_MAX][FIGURE_TICK_LABEL_SIZE];
    int n = scale != SCALE_LINEAR
                ? Figure_log_axis_ticks(lo, hi, wanted, values, labels, SERIES_TICKS_MAX)
                : Figure_ticks(lo, hi, wanted, whole, values, SERIES_TICKS_MAX, &step);
    for (int i = 0; i < n; i++) {
        if (scale == SCALE_LINEAR)
            Figure_tick_label(values[i], step, labels[i], sizeof labels[i]);
        svg_tick(f, fr, x_axis, x_axis ? px(fr, values[i]) : py(fr, values[i]), labels[i]);
    }
}

/* The axes of a series plot over its points' range in its scales' units, as the screen's:
   a single value gets an axis around it, and y a little room above and below. */
static Frame series_frame(const SeriesPlot *p, bool any, int top)
{
    double xlo, xhi, ylo, yhi;
    Figure_series_range(p, true, &xlo, &xhi);
    Figure_series_range(p, false, &ylo, &yhi);
    if (!any)
        xlo = 0, xhi = 1, ylo = 0, yhi = 1;
    if (xhi - xlo < 1e-12)
        xlo -= 0.5, xhi += 0.5;
    if (yhi - ylo < 1e-12)
        ylo -= 0.5, yhi += 0.5;
    double pad = 0.05 * (yhi - ylo);
    return (Frame){xlo, xhi, ylo - pad, yhi + pad, false, top, top + SERIES_ROWS};
}

/* One series as a polyline per run of defined points (an undefined one leaves a gap), then
   its marker on every point, each carrying its values in data-x and data-y. */
static void svg_one_series(FILE *f, const Frame *fr, const SeriesPlot *p, int k)
{
    const Series *s = &p->series[k];
    bool open = false;
    for (int i = 0; i < s->count; i++) {
        double u = Figure_scaled(p->x_scale, s->x[i]), v = Figure_scaled(p->y_scale, s->y[i]);
        bool defined = isfinite(u) && isfinite(v);
        if (defined && !open)
            fprintf(f, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\"%s points=\"",
                    INK_COLOUR[s->ink], dash_of(s->stroke));
        if (defined)
            fprintf(f, "%.2f,%.2f ", px(fr, u), py(fr, v));
        if (open && !defined)
            fputs("\"/>\n", f);
        open = defined;
    }
    if (open)
        fputs("\"/>\n", f);
    for (int i = 0; s->marker && i < s->count; i++) {
        double u = Figure_scaled(p->x_scale, s->x[i]), v = Figure_scaled(p->y_scale, s->y[i]);
        if (isfinite(u) && isfinite(v))
            fprintf(f,
                    "<text class=\"point\" data-series=\"%d\" data-x=\"%.17g\" "
                    "data-y=\"%.17g\" x=\"%.2f\" y=\"%.2f\" fill=\"%s\" "
                    "text-anchor=\"middle\">%s</text>\n",
                    k, s->x[i], s->y[i], px(fr, u), py(fr, v) + 4, INK_COLOUR[s->ink], s->marker);
    }
}

/* A series plot as the screen's Plot_series draws it, on its linear or log axes (the ticks of
   a log axis are the screen's powers of ten): each series a polyline broken at undefined
   points, its markers on every point, the last series first, the legend and notes below;
   with no point at all, what the screen says in the middle. */
static void svg_series(FILE *f, const Config *c, const SeriesPlot *p)
{
    LegendItem items[SERIES_MAX + SERIES_NOTES_MAX];
    bool any;
    int n = Figure_series_legend(p, items, &any);
    int top = svg_open(f, p->title, c, SERIES_ROWS, items, n);
    Frame fr = series_frame(p, any, top);
    svg_box(f, &fr, p->x_name ? p->x_name : "", "");
    if (!any) {
        fprintf(f, "<text class=\"empty\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", SVG_W / 2,
                (fr.top + fr.bottom) / 2);
        escaped(f, p->empty ? p->empty : "no data");
        fputs("</text>\n", f);
    } else {
        series_ticks(f, &fr, true, p->x_scale, p->x_whole, 6);
        series_ticks(f, &fr, false, p->y_scale, false, 4);
    }
    for (int k = p->count - 1; k >= 0; k--)
        svg_one_series(f, &fr, p, k);
    svg_close(f, items, n, &fr);
}

void Svg_entropy(FILE *f, const Result *r)
{
    EntropyText text;
    SeriesPlot p;
    Figure_entropy_plot(r, true, true, &text, &p);
    svg_series(f, &r->config, &p);
}

/* The exported result is whole (the screen exports none before it is in): with no gradient
   the panel says why, as the screen's once the run is done. */
void Svg_gradient(FILE *f, const Result *r)
{
    SeriesText t;
    SeriesPlot p;
    Figure_gradient_plot(r, true, &t, &p);
    svg_series(f, &r->config, &p);
}

void Svg_token_similarity(FILE *f, const Result *r)
{
    SeriesText t;
    SeriesPlot p;
    Figure_similarity_plot(r, &t, &p);
    svg_series(f, &r->config, &p);
}

void Svg_width_sweep(FILE *f, const Config *c, const WidthSweep *w)
{
    SeriesText t;
    SeriesPlot p;
    if (!Figure_sweep_plot(c, w, true, &t, &p))
        p = (SeriesPlot){.title = t.title, .empty = "no width sweep", .x_name = "T"};
    svg_series(f, c, &p);
}

void Svg_conditioning(FILE *f, const Conditioning *k, bool named)
{
    SeriesText t;
    SeriesPlot p;
    Figure_conditioning_plot(k, named ? INIT_NAMES.names[k->config.init] : NULL, false, &t, &p);
    svg_series(f, &k->config, &p);
}

void Svg_conditioning_singular_values(FILE *f, const Conditioning *k)
{
    ConditioningHistogram h;
    Figure_conditioning_histogram(k, false, &h);
    if (h.message)
        svg_message(f, &k->config, h.title, HISTOGRAM_ROWS, HISTOGRAM_ROWS / 2, h.message);
    else
        svg_histogram(f, &k->config, &h.plot);
    Figure_conditioning_histogram_release(&h);
}

void Svg_row_entropies(FILE *f, const Result *r)
{
    const Config *c = &r->config;
    char title[FIGURE_TITLE_SIZE];
    double *sorted = malloc(sizeof(double) * (size_t)c->tokens);
    HistogramPlot h;
    if (!sorted) {
        svg_message(f, c, "row entropies", HISTOGRAM_ROWS, HISTOGRAM_ROWS / 2, "out of memory");
        return;
    }
    const char *round_off = Figure_row_entropy_plot(r, title, sorted, &h);
    if (h.count == 0)
        svg_message(f, c, title, HISTOGRAM_ROWS, HISTOGRAM_ROWS / 2,
                    round_off                       ? round_off
                    : Entropy_defined(c->attention) ? "no row entropies: the shown layer has no "
                                                      "finite attention matrix"
                                                    : Entropy_undefined_reason(c->attention));
    else
        svg_histogram(f, c, &h);
    free(sorted);
}
