#include "plot.h"

#include "axis.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Room around the data, so nothing sits on the frame. */
#define MARGIN 1.1

/* The plot area of a panel: title on row 0, y labels left of the axis column, the x axis
   and its labels under the area, the legend on the last rows. */
typedef struct {
    int axis_col;  /* column of the y axis; labels take the columns before it */
    int left, top; /* first cell of the plot area */
    int cols, rows;
    int axis_row, label_row, legend_row;
    /* Kept for the axes' names: x tick labels end before label_limit, no y tick label on
       y_name_row. */
    int label_limit, y_name_row;
} Frame;

static bool frame_make(const Canvas *c, int title_rows, int label_width, int legend_rows, Frame *f)
{
    f->axis_col = label_width;
    f->left = label_width + 1;
    f->top = title_rows;
    f->legend_row = Canvas_rows(c) - legend_rows;
    f->label_row = f->legend_row - 1;
    f->axis_row = f->label_row - 1;
    f->rows = f->axis_row - f->top;
    f->cols = Canvas_cols(c) - f->left;
    f->label_limit = Canvas_cols(c);
    f->y_name_row = -1;
    return f->rows >= 2 && f->cols >= 4;
}

static void frame_axes(Canvas *c, const Frame *f)
{
    for (int row = f->top; row < f->axis_row; row++)
        Canvas_text(c, f->axis_col, row, "│", INK_AXIS);
    Canvas_text(c, f->axis_col, f->axis_row, "└", INK_AXIS);
    for (int col = f->left; col < f->left + f->cols; col++)
        Canvas_text(c, col, f->axis_row, "─", INK_AXIS);
}

static void frame_clip(Canvas *c, const Frame *f)
{
    Canvas_clip(c, 2 * f->left, 4 * f->top, 2 * (f->left + f->cols), 4 * (f->top + f->rows));
}

/* y tick labels: the ticks in order of priority (Axis_label_rows: a later one gives way on a
   row taken) that fit left of the axis, each on its row, a mark on the axis and the label
   right-aligned before it; a is then mapped through them, for data from data_lo to data_hi (NaN: an
   axis drawn through a copy, whose labels only read it). */
static void label_y(Canvas *c, const Frame *f, Axis *a, const double *values, char (*labels)[32],
                    int n, double data_lo, double data_hi)
{
    /* A label wider than the column left of the axis would lose its first digits. */
    double fitting[AXIS_LABELS_MAX] = {0};
    int rows[AXIS_LABELS_MAX], kept[AXIS_LABELS_MAX], m = 0;
    for (int i = 0; i < n && i < AXIS_LABELS_MAX; i++)
        if (Canvas_text_width(c, labels[i]) <= f->axis_col) {
            kept[m] = i;
            fitting[m++] = values[i];
        }
    Axis_label_rows(a, fitting, m, f->y_name_row, data_lo, data_hi, rows);
    for (int k = 0; k < m; k++) {
        if (rows[k] < 0)
            continue;
        const char *label = labels[kept[k]];
        Canvas_text(c, f->axis_col, rows[k], "┤", INK_AXIS);
        Canvas_text(c, f->axis_col - Canvas_text_width(c, label), rows[k], label, INK_AXIS);
    }
}

/* An x tick at dot column x, its label centred under it unless it would touch the
   previous label (*last_end is the column after it). */
static void frame_xtick(Canvas *c, const Frame *f, int x, const char *label, Ink ink, int *last_end)
{
    int col = x / 2;
    if (col < f->left || col >= f->left + f->cols)
        return;
    Canvas_text(c, col, f->axis_row, "┴", INK_AXIS);
    int width = Canvas_text_width(c, label);
    int start = col - width / 2;
    if (start + width > Canvas_cols(c))
        start = Canvas_cols(c) - width;
    if (start <= *last_end || start + width > f->label_limit)
        return;
    Canvas_text(c, start, f->label_row, label, ink);
    *last_end = start + width;
}

/* The axes' names (Re and Im, count, layer): x at the right end of the tick-label row, y
   above the tick labels at the top of the axis; the ticks then leave them room.  Drawn
   before the ticks. */
static void frame_names(Canvas *c, Frame *f, const char *x_name, const char *y_name)
{
    if (x_name) {
        int width = Canvas_text_width(c, x_name);
        f->label_limit = Canvas_cols(c) - width - 1;
        Canvas_text(c, Canvas_cols(c) - width, f->label_row, x_name, INK_AXIS);
    }
    if (y_name) {
        int width = Canvas_text_width(c, y_name);
        f->y_name_row = f->top;
        Canvas_text(c, f->axis_col - width > 0 ? f->axis_col - width : 0, f->top, y_name, INK_AXIS);
    }
}

/* Ticks at the multiples of a nice step inside the axis (Figure_ticks). */
static void ticks_x(Canvas *c, const Frame *f, const Axis *a, int wanted, bool whole)
{
    double values[64], step;
    int n = Figure_ticks(a->lo, a->hi, wanted, whole, values, 64, &step);
    int last_end = -1;
    for (int i = 0; i < n; i++) {
        char label[32];
        Figure_tick_label(values[i], step, label, sizeof label);
        frame_xtick(c, f, Axis_dot(a, values[i]), label, INK_AXIS, &last_end);
    }
}

/* The lowest label first, then from the top down: on an axis of two rows the lowest (0)
   shares its row with the next (2), and the data at the bottom belong to the row named 0. */
static void ticks_y(Canvas *c, const Frame *f, Axis *a, int wanted, double data_lo, double data_hi)
{
    double ticks[AXIS_LABELS_MAX], values[AXIS_LABELS_MAX], step;
    char labels[AXIS_LABELS_MAX][32];
    int n = Figure_ticks(a->lo, a->hi, wanted, false, ticks, AXIS_LABELS_MAX, &step);
    for (int i = 0; i < n; i++) {
        values[i] = ticks[i == 0 ? 0 : n - i];
        Figure_tick_label(values[i], step, labels[i], sizeof labels[i]);
    }
    label_y(c, f, a, values, labels, n, data_lo, data_hi);
}

enum { LEGEND_GAP = 2 };

static int legend_item_width(const Canvas *c, const LegendItem *item)
{
    return item->cells + (item->cells ? 1 : 0) + Canvas_text_width(c, item->text);
}

enum { LEGEND_PIECES_MAX = 24 };

/* Items wider than the canvas (long notes) are cut at spaces into pieces that fit, each
   after the first without a sample (continued[k]: piece k goes on the item before it);
   returns the number of pieces. */
static int legend_wrap(const Canvas *c, const LegendItem *items, int n, LegendItem *out,
                       bool *continued)
{
    int count = 0, cols = Canvas_cols(c);
    for (int i = 0; i < n && count < LEGEND_PIECES_MAX; i++) {
        LegendItem piece = items[i];
        bool continuing = false;
        while (legend_item_width(c, &piece) > cols && count < LEGEND_PIECES_MAX - 1) {
            /* The longest prefix ending before a space that fits. */
            char prefix[sizeof piece.text];
            size_t cut = 0;
            for (size_t k = 1; piece.text[k]; k++) {
                if (piece.text[k] != ' ')
                    continue;
                memcpy(prefix, piece.text, k);
                prefix[k] = '\0';
                LegendItem trial = piece;
                memcpy(trial.text, prefix, k + 1);
                if (legend_item_width(c, &trial) > cols)
                    break;
                cut = k;
            }
            if (cut == 0)
                break; /* one long word: the canvas cuts it */
            continued[count] = continuing;
            out[count] = piece;
            out[count].text[cut] = '\0';
            count++;
            LegendItem rest = {.cells = 0, .ink = piece.ink};
            snprintf(rest.text, sizeof rest.text, "%s", piece.text + cut + 1);
            piece = rest;
            continuing = true;
        }
        continued[count] = continuing;
        out[count++] = piece;
    }
    return count;
}

/* Items flow left to right and wrap, the pieces of a cut item each on a row of their own
   (an item after a cut one on the next row: beside its end it would read as one item):
   the pieces in items, each piece's row (from 0) in row_of and column in col_of; returns
   their count, and the rows they need in *rows. */
static int legend_layout(const Canvas *c, const LegendItem *given, int given_count,
                         LegendItem *items, int *row_of, int *col_of, int *rows)
{
    bool continued[LEGEND_PIECES_MAX];
    int n = legend_wrap(c, given, given_count, items, continued);
    int row = 0, col = 0;
    for (int i = 0; i < n; i++) {
        int width = legend_item_width(c, &items[i]);
        bool cut = continued[i] || (i > 0 && continued[i - 1]);
        if (col > 0 && (col + width > Canvas_cols(c) || cut)) {
            row++;
            col = 0;
        }
        row_of[i] = row;
        col_of[i] = col;
        col += width + LEGEND_GAP;
    }
    *rows = row + 1;
    return n;
}

static int legend_rows(const Canvas *c, const LegendItem *given, int given_count)
{
    LegendItem items[LEGEND_PIECES_MAX];
    int row_of[LEGEND_PIECES_MAX], col_of[LEGEND_PIECES_MAX], rows;
    legend_layout(c, given, given_count, items, row_of, col_of, &rows);
    return rows;
}

static void legend_draw(Canvas *c, const LegendItem *given, int given_count, int row)
{
    LegendItem items[LEGEND_PIECES_MAX];
    int row_of[LEGEND_PIECES_MAX], col_of[LEGEND_PIECES_MAX], rows;
    int n = legend_layout(c, given, given_count, items, row_of, col_of, &rows);
    for (int i = 0; i < n; i++) {
        const LegendItem *item = &items[i];
        int at = col_of[i], on = row + row_of[i];
        for (int k = 0; k < item->cells; k++, at++) {
            if (item->sample[k].glyph)
                Canvas_text(c, at, on, item->sample[k].glyph, item->ink);
            else if (item->sample[k].point)
                Canvas_point_sample(c, at, on, item->sample[k].dots, item->ink);
            else
                Canvas_pattern(c, at, on, item->sample[k].dots, item->ink);
        }
        Canvas_text(c, at + (item->cells ? 1 : 0), on, item->text, INK_DEFAULT);
    }
}

/* The length of text's longest start that fits cols columns: all of it, or up to the
   last space that fits (0 where even the first word is wider). */
static size_t fitting_length(const Canvas *c, const char *text, int cols)
{
    if (Canvas_text_width(c, text) <= cols)
        return strlen(text);
    char first[256];
    size_t cut = 0;
    for (size_t k = 1; text[k] && k < sizeof first; k++) {
        if (text[k] != ' ')
            continue;
        memcpy(first, text, k);
        first[k] = '\0';
        if (Canvas_text_width(c, first) > cols)
            break;
        cut = k;
    }
    return cut;
}

enum { TITLE_MARGIN = 2 };

/* The title on the first row or, when it is wider than the panel, on two, broken at the
   last space that fits (a cut title loses its end: "log axis", "frozen attention").
   Returns the rows it took. */
static int title(Canvas *c, const char *text)
{
    /* Two columns short of the panel's: beside the next panel's title (one column apart)
       the two never read as one ("…of A, l=1, singular values…"). */
    size_t cut = fitting_length(c, text, Canvas_cols(c) - TITLE_MARGIN);
    if (cut == 0 || text[cut] == '\0') {
        Canvas_text(c, 0, 0, text, INK_DEFAULT);
        return 1;
    }
    char first[256];
    memcpy(first, text, cut);
    first[cut] = '\0';
    Canvas_text(c, 0, 0, first, INK_DEFAULT);
    Canvas_text(c, 0, 1, text + cut + 1, INK_DEFAULT);
    return 2;
}

int Plot_title(Canvas *c, const char *text)
{
    return title(c, text);
}

/* The message centred on the panel; one wider than the panel is broken at spaces into rows
   (a word wider still is cut at the edge), so that what it says to do is read whole. */
void Plot_message(Canvas *c, const char *heading, const char *message)
{
    int head = title(c, heading);
    enum { MESSAGE_ROWS_MAX = 8 };
    const char *start[MESSAGE_ROWS_MAX];
    size_t length[MESSAGE_ROWS_MAX];
    int rows = 0;
    for (const char *rest = message; *rest && rows < MESSAGE_ROWS_MAX; rows++) {
        size_t n = fitting_length(c, rest, Canvas_cols(c));
        start[rows] = rest;
        length[rows] = n ? n : strlen(rest);
        rest += length[rows];
        rest += *rest == ' ';
    }
    int first_row = Canvas_rows(c) / 2 - (rows - 1) / 2;
    if (rows > 1 && first_row < head)
        first_row = head;
    for (int i = 0; i < rows; i++) {
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int)length[i], start[i]);
        int col = (Canvas_cols(c) - Canvas_text_width(c, line)) / 2;
        Canvas_text(c, col < 0 ? 0 : col, first_row + i, line, INK_DEFAULT);
    }
}

/* A fitted frame's legend, axes and axis names (NULL: none). */
static void frame_dress(Canvas *c, Frame *f, const LegendItem *legend, int legend_count,
                        const char *x_name, const char *y_name)
{
    legend_draw(c, legend, legend_count, f->legend_row);
    frame_axes(c, f);
    frame_names(c, f, x_name, y_name);
}

/* A panel's title, then its frame (label_width columns for the y ticks) above the legend,
   dressed; false, with "(panel too small)" drawn instead, where the frame does not fit. */
static bool panel_open(Canvas *c, const char *heading, int label_width, const LegendItem *legend,
                       int legend_count, const char *x_name, const char *y_name, Frame *f)
{
    int head = title(c, heading);
    if (!frame_make(c, head, label_width, legend_rows(c, legend, legend_count), f)) {
        Plot_message(c, heading, "(panel too small)");
        return false;
    }
    frame_dress(c, f, legend, legend_count, x_name, y_name);
    return true;
}

/* The circle |z| = 1 as cells of "∘", one per cell it crosses, inside the plot area: a
   shape of its own, where dots would read as eigenvalues without colour (and a small
   dashed circle of dots is only dots).  A glyph would hide the dots under it: cells that
   hold eigenvalues keep them, and the ring shows between them. */
static void unit_circle(Canvas *c, const Frame *f, const Axis *x, const Axis *y)
{
    int last_col = -1, last_row = -1;
    for (int k = 0; k < 256; k++) {
        double angle = 2 * M_PI * k / 256;
        int col = Axis_dot(x, cos(angle)) / 2, row = Axis_dot(y, sin(angle)) / 4;
        if ((col == last_col && row == last_row) || col < f->left || col >= f->left + f->cols ||
            row < f->top || row >= f->axis_row || Canvas_dots(c, col, row))
            continue;
        Canvas_text(c, col, row, "∘", INK_AXIS);
        last_col = col;
        last_row = row;
    }
}

/* Whether a label of width cells fits at (at, row) inside the plot area covering nothing
   that reads as text (Canvas_room_for_text) and touching nothing: the cells on either side
   free too, the point's own glyph at (col, glyph_row) or the area's edge excepted. */
static bool label_fits(const Canvas *c, const Frame *f, int at, int row, int width, int col,
                       int glyph_row)
{
    int right = f->left + f->cols;
    if (row < f->top || row >= f->axis_row || at < f->left || at + width > right ||
        !Canvas_room_for_text(c, at, row, width))
        return false;
    bool before = at == f->left || (at - 1 == col && row == glyph_row) ||
                  Canvas_room_for_text(c, at - 1, row, 1);
    bool after = at + width == right || (at + width == col && row == glyph_row) ||
                 Canvas_room_for_text(c, at + width, row, 1);
    return before && after;
}

/* How many rows above or below its glyph a label may go: farther, it no longer reads as the
   point's (a λ1→0 on the circle's border, rows above the ◎ at 0 it names). */
enum { LABEL_REACH = 1 };

/* Where a label of width cells goes for the glyph at (col, row), apart from what is drawn:
   right of it, left of it, else over or under it (ending in its column, or starting there)
   within LABEL_REACH rows.  False: nowhere. */
static bool label_place(const Canvas *c, const Frame *f, int col, int row, int width, int *at,
                        int *r)
{
    const int beside[] = {col + 1, col - width};
    for (int k = 0; k < 2; k++)
        if (label_fits(c, f, beside[k], row, width, col, row)) {
            *at = beside[k];
            *r = row;
            return true;
        }
    for (int away = 1; away <= LABEL_REACH; away++)
        for (int sign = -1; sign <= 1; sign += 2) {
            const int over[] = {col + 1 - width, col};
            for (int k = 0; k < 2; k++)
                if (label_fits(c, f, over[k], row + sign * away, width, col, row)) {
                    *at = over[k];
                    *r = row + sign * away;
                    return true;
                }
        }
    return false;
}

/* A point's label next to its glyph at (col, row) where it neither covers nor touches other
   text (in ASCII, where dots are characters too, a long "lambda1" ran into the bulk and the
   circles: "::::lambda1> :"); where the points around leave no such place, beside the glyph
   on the side with room, over what is there, with the cell past its end blanked so that it
   still stands whole. */
static void label_beside(Canvas *c, const Frame *f, int col, int row, const char *label, Ink ink)
{
    int width = Canvas_text_width(c, label), at, r;
    if (label_place(c, f, col, row, width, &at, &r)) {
        Canvas_text(c, at, r, label, ink);
        return;
    }
    bool right = col + 1 + width <= f->left + f->cols;
    at = right ? col + 1 : col - width;
    int past = right ? at + width : at - 1;
    if (past >= f->left && past < f->left + f->cols)
        Canvas_text(c, past, row, " ", INK_DEFAULT);
    Canvas_text(c, at, row, label, ink);
}

void Plot_eigenvalues(Canvas *c, const EigenvaluePlot *p)
{
    EigenvalueFigure fig;
    Figure_eigenvalues(p, &fig);
    Frame f;
    if (!panel_open(c, p->title, 6, fig.legend, fig.legend_count, "Re z", "Im z", &f))
        return;

    /* Equal units on both axes: a circle stays a circle (a dot is about square). */
    double per_unit = fmin(2.0 * f.cols, 4.0 * f.rows) / (2 * fig.range);
    Axis x = Axis_make(-f.cols / per_unit, f.cols / per_unit, 2 * f.left, 2 * f.cols, false);
    Axis y =
        Axis_make(-2.0 * f.rows / per_unit, 2.0 * f.rows / per_unit, 4 * f.top, 4 * f.rows, true);
    ticks_x(c, &f, &x, 4, false);
    /* Evenly, through a copy: a circle stays a circle. */
    Axis even = y;
    ticks_y(c, &f, &even, 4, NAN, NAN);

    frame_clip(c, &f);
    int cx = Axis_dot(&x, 0), cy = Axis_dot(&y, 0);
    if (fig.sigma_fits)
        Canvas_circle(c, cx, cy, (int)lround(p->sigma * per_unit), INK_THEORY, STROKE_SOLID);
    for (int i = 0; i < p->count; i++)
        if (!(fig.marked && i == p->outlier))
            Canvas_point(c, Axis_dot(&x, p->scale * p->values[i].re),
                         Axis_dot(&y, p->scale * p->values[i].im), INK_BULK);
    Canvas_unclip(c);
    unit_circle(c, &f, &x, &y);
    double re, im, predicted;
    Figure_place(&fig, x.hi, y.hi, &re, &im, &predicted);
    /* Drawn before the measured outlier, which wins a shared cell. */
    if (fig.predicted)
        Canvas_text(c, Axis_dot(&x, predicted) / 2, Axis_dot(&y, 0) / 4, "◇", INK_THEORY);
    if (!fig.marked && p->removed_to_zero) {
        int col = cx / 2, row = cy / 4;
        Canvas_text(c, col, row, FIGURE_REMOVED_GLYPH, INK_OUTLIER);
        label_beside(c, &f, col, row, "λ1→0", INK_OUTLIER);
    }
    if (!fig.marked)
        return;
    int col = Axis_dot(&x, re) / 2, row = Axis_dot(&y, im) / 4;
    Canvas_text(c, col, row, fig.glyph, INK_OUTLIER);
    label_beside(c, &f, col, row, "λ1", INK_OUTLIER);
}

void Plot_histogram(Canvas *c, const HistogramPlot *p)
{
    HistogramFigure fig;
    Figure_histogram(p, &fig);
    Frame f;
    if (!panel_open(c, p->title, 5, fig.legend, fig.legend_count, fig.name, "count", &f))
        return;

    /* One bin per cell column. */
    enum { BINS_MAX = 1024 };
    int bins = f.cols < BINS_MAX ? f.cols : BINS_MAX;
    int counts[BINS_MAX];
    double expected[BINS_MAX];
    double top = Figure_histogram_bins(p, &fig, bins, counts, expected);
    Axis x = Axis_make(0, fig.range, 2 * f.left, 2 * f.cols, false);
    Axis y = Axis_make(0, top * MARGIN, 4 * f.top, 4 * f.rows, true);
    ticks_x(c, &f, &x, 5, false);
    ticks_y(c, &f, &y, 3, 0, top);

    frame_clip(c, &f);
    int bottom = 4 * (f.top + f.rows) - 1;
    for (int b = 0; b < bins; b++) {
        if (counts[b] == 0)
            continue;
        int y_top = Axis_dot(&y, counts[b]);
        if (y_top > bottom)
            y_top = bottom; /* one value is still visible */
        int x0 = 2 * (f.left + b);
        Canvas_line(c, x0, bottom, x0, y_top, INK_BULK, STROKE_SOLID);
        Canvas_line(c, x0 + 1, bottom, x0 + 1, y_top, INK_BULK, STROKE_SOLID);
    }
    Canvas_unclip(c);
    for (int b = 0; fig.theory && b < bins; b++)
        if (expected[b] > 0)
            Canvas_text(c, f.left + b, Axis_dot(&y, expected[b]) / 4, "─", INK_THEORY);
    if (p->count == 0 || p->every_value)
        return;
    int col = fig.pinned ? f.left + f.cols - 1 : Axis_dot(&x, fig.s1) / 2;
    if (col >= f.left + f.cols)
        col = f.left + f.cols - 1;
    int row = f.axis_row - 1;
    Ink ink = fig.outlier ? INK_OUTLIER : INK_BULK;
    Canvas_text(c, col, row, fig.glyph, ink);
    const char *label = "s1";
    int at = col - Canvas_text_width(c, label);
    Canvas_text(c, at, row - 1, label, ink);
}

/* Markers on every layer when there is room, otherwise on every k-th and the last. */
static int marker_every(int depth, int cols)
{
    double cells_per_layer = (double)cols / (depth > 0 ? depth : 1);
    return cells_per_layer >= 2 ? 1 : (int)ceil(2 / cells_per_layer);
}

/* A curve's marker at (col, row); the network's ● over the counterpart's ○ (spelled o in
   ASCII) becomes FIGURE_BOTH_GLYPH.  Returns 1 where it did, else 0. */
static int marker_put(Canvas *c, int col, int row, const char *marker, Ink ink)
{
    char cell[8] = "";
    if (col >= 0 && col < Canvas_cols(c) && row >= 0 && row < Canvas_rows(c))
        Canvas_cell(c, col, row, cell);
    bool both = strcmp(marker, "●") == 0 && (strcmp(cell, "○") == 0 || strcmp(cell, "o") == 0);
    Canvas_text(c, col, row, both ? FIGURE_BOTH_GLYPH : marker, ink);
    return both;
}

/* The legend says what ◉ is in the ○ curve's entry (a word more there costs no legend row
   where an entry of its own would cost the plot one at 80×24).  Returns whether it has one. */
static bool legend_both(LegendItem *items, int n)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < items[i].cells; k++)
            if (items[i].sample[k].glyph && strcmp(items[i].sample[k].glyph, "○") == 0) {
                size_t used = strlen(items[i].text);
                snprintf(items[i].text + used, sizeof items[i].text - used, ", %s on ●",
                         FIGURE_BOTH_GLYPH);
                return true;
            }
    return false;
}

/* Returns the cells where ● met ○ (marker_put). */
static int curve(Canvas *c, const Axis *x, const Axis *y, const double *values, int depth,
                 int every, Ink ink, Stroke stroke, const char *marker)
{
    int px = 0, py = 0;
    bool have = false;
    for (int l = 0; l <= depth; l++) {
        if (!(values[l] > 0) || !isfinite(values[l])) {
            have = false;
            continue;
        }
        int dx = Axis_dot(x, l), dy = Axis_dot(y, log10(fmax(values[l], 1.0)));
        if (have)
            Canvas_line(c, px, py, dx, dy, ink, stroke);
        else
            Canvas_dot(c, dx, dy, ink);
        px = dx;
        py = dy;
        have = true;
    }
    int met = 0;
    for (int l = 0; l <= depth; l++)
        if (values[l] > 0 && isfinite(values[l]) && (l % every == 0 || l == depth))
            met += marker_put(c, Axis_dot(x, l) / 2, Axis_dot(y, log10(fmax(values[l], 1.0))) / 4,
                              marker, ink);
    return met;
}

/* The ±1 std band around the mean as dotted vertical strokes in every dot column, the
   edges interpolated between layers in plotted (log) units. */
static void band(Canvas *c, const Axis *x, const Axis *y, const double *mean, const double *std,
                 int depth, Ink ink)
{
    for (int l = 0; l < depth; l++) {
        double m0 = mean[l], m1 = mean[l + 1], s0 = std[l], s1 = std[l + 1];
        if (!isfinite(m0) || !isfinite(m1) || !isfinite(s0) || !isfinite(s1))
            continue;
        double lo0 = log10(fmax(m0 - s0, 1.0)), hi0 = log10(fmax(m0 + s0, 1.0));
        double lo1 = log10(fmax(m1 - s1, 1.0)), hi1 = log10(fmax(m1 + s1, 1.0));
        int x0 = Axis_dot(x, l), x1 = Axis_dot(x, l + 1);
        for (int dx = x0; dx <= x1; dx++) {
            double t = x1 > x0 ? (double)(dx - x0) / (x1 - x0) : 0;
            int ylo = Axis_dot(y, lo0 + t * (lo1 - lo0)), yhi = Axis_dot(y, hi0 + t * (hi1 - hi0));
            if (dx % 2 == 0)
                Canvas_line(c, dx, ylo, dx, yhi, ink, STROKE_DOTTED);
        }
    }
}

/* The panel, the legend saying what ◉ is when `both` and both networks have a curve.
   Returns the cells where ● met ○. */
static int stable_rank_draw(Canvas *c, const StableRankPlot *p, bool both)
{
    StableRankFigure fig;
    Figure_stable_rank(p, &fig);
    LegendItem *items = fig.legend;
    int n = fig.legend_count, note = fig.note;
    if (both && fig.network && fig.counterpart)
        legend_both(items, n);
    bool ensemble = fig.ensemble, theory = fig.theory, counterpart_theory = fig.counterpart_theory;
    int head = title(c, p->title);
    Frame f;
    /* A small panel keeps its plot: the note shrinks first, then the shown layer's entry
       goes (the ▴ under the axis still marks it). */
    bool fits = frame_make(c, head, 5, legend_rows(c, items, n), &f);
    if (!fits && note >= 0) {
        snprintf(items[note].text, sizeof items[0].text, "no theory curve here");
        fits = frame_make(c, head, 5, legend_rows(c, items, n), &f);
    }
    if (!fits) {
        n--;
        fits = frame_make(c, head, 5, legend_rows(c, items, n), &f);
    }
    if (!fits) {
        Plot_message(c, p->title, "(panel too small)");
        return 0;
    }
    /* The title names the y axis; its top tick (T) keeps the first row. */
    frame_dress(c, &f, items, n, "layer", NULL);

    double top = log10(fmax(p->top, 2.0));
    Axis x = Axis_make(0, p->depth > 0 ? p->depth : 1, 2 * f.left, 2 * f.cols, false);
    Axis y = Axis_make(0, top, 4 * f.top, 4 * f.rows, true);
    /* The top (T) first, then the lowest (1), then the powers of ten down from the top. */
    double values[AXIS_LABELS_MAX] = {top, 0};
    char labels[AXIS_LABELS_MAX][32];
    snprintf(labels[0], sizeof labels[0], "%g", p->top);
    snprintf(labels[1], sizeof labels[1], "1");
    int n_ticks = 2;
    for (int k = (int)floor(top); k >= 1 && n_ticks < AXIS_LABELS_MAX; k--, n_ticks++) {
        values[n_ticks] = k;
        snprintf(labels[n_ticks], sizeof labels[0], "%g", pow(10.0, k));
    }
    label_y(c, &f, &y, values, labels, n_ticks, 0, top);
    ticks_x(c, &f, &x, 6, true);

    int every = marker_every(p->depth, f.cols);
    frame_clip(c, &f);
    int hx = Axis_dot(&x, p->shown_layer);
    if (ensemble)
        band(c, &x, &y, p->network, p->band_std, p->depth, INK_BULK);
    if (counterpart_theory)
        curve(c, &x, &y, p->counterpart_theory, p->depth, every, INK_THEORY, STROKE_DASHED, "×");
    if (theory)
        curve(c, &x, &y, p->theory, p->depth, every, INK_THEORY, STROKE_DASHED, "×");
    curve(c, &x, &y, p->counterpart, p->depth, every, INK_GHOST, STROKE_DOTTED, "○");
    int met = curve(c, &x, &y, p->network, p->depth, every, INK_BULK, STROKE_SOLID, "●");
    Canvas_unclip(c);
    /* The shown layer last, as a column of ┆ in the cells the curves leave empty: a glyph
       of its own, where a dotted line would read as the dotted counterpart without colour. */
    for (int row = f.top; row < f.axis_row; row++) {
        char cell[8];
        Canvas_cell(c, hx / 2, row, cell);
        if (strcmp(cell, " ") == 0)
            Canvas_text(c, hx / 2, row, "┆", INK_HIGHLIGHT);
    }
    Canvas_text(c, hx / 2, f.axis_row, "▴", INK_HIGHLIGHT);
    /* The window layers on the top row, where the curves leave it empty. */
    for (int l = 1; p->local && l <= p->depth; l++) {
        char cell[8];
        int column = Axis_dot(&x, l) / 2;
        Canvas_cell(c, column, f.top, cell);
        if (p->local[l] && strcmp(cell, " ") == 0)
            Canvas_text(c, column, f.top, FIGURE_LOCAL_GLYPH, INK_AXIS);
    }
    return met;
}

void Plot_stable_rank(Canvas *c, const StableRankPlot *p)
{
    /* With ◉ in the legend first; drawn again without it where the curves never meet. */
    if (stable_rank_draw(c, p, true) == 0) {
        Canvas_clear(c);
        stable_rank_draw(c, p, false);
    }
}

/* Ticks on a log axis (Figure_log_axis_ticks); y labels as label_y lays them out, x labels from
   the left: a label that would touch the previous one gives way.  The y axis is then mapped
   through its labels, for data from data_lo to data_hi. */
static void ticks_log(Canvas *c, const Frame *f, Axis *a, int wanted, bool vertical, double data_lo,
                      double data_hi)
{
    double ticks[AXIS_LABELS_MAX], values[AXIS_LABELS_MAX];
    char tick_labels[AXIS_LABELS_MAX][FIGURE_TICK_LABEL_SIZE], labels[AXIS_LABELS_MAX][32];
    _Static_assert(sizeof labels[0] == sizeof tick_labels[0], "one label size");
    int n = Figure_log_axis_ticks(a->lo, a->hi, wanted, ticks, tick_labels, AXIS_LABELS_MAX);
    int last = -1;
    for (int i = 0; i < n; i++) {
        /* Up the y axis: the highest, the lowest, then from the top down. */
        int k = !vertical ? i : i == 0 ? n - 1 : i == 1 ? 0 : n - i;
        values[i] = ticks[k];
        memcpy(labels[i], tick_labels[k], sizeof labels[i]);
        if (!vertical)
            frame_xtick(c, f, Axis_dot(a, values[i]), labels[i], INK_AXIS, &last);
    }
    if (vertical)
        label_y(c, f, a, values, labels, n, data_lo, data_hi);
}

/* The axes of a series plot over its points' range, their ticks drawn. */
static void series_axes(Canvas *c, const SeriesPlot *p, const Frame *f, Axis *x, Axis *y)
{
    double xlo, xhi, ylo, yhi;
    Figure_series_range(p, true, &xlo, &xhi);
    Figure_series_range(p, false, &ylo, &yhi);
    /* A single value still gets an axis around it; a little room above and below. */
    if (xhi - xlo < 1e-12) {
        xlo -= 0.5;
        xhi += 0.5;
    }
    if (yhi - ylo < 1e-12) {
        ylo -= 0.5;
        yhi += 0.5;
    }
    double pad = 0.05 * (yhi - ylo);
    bool log_x = p->x_scale != SCALE_LINEAR, log_y = p->y_scale != SCALE_LINEAR;
    *x = Axis_make(xlo, xhi, 2 * f->left, 2 * f->cols, false);
    *y = Axis_make(ylo - pad, yhi + pad, 4 * f->top, 4 * f->rows, true);
    if (log_x)
        ticks_log(c, f, x, 5, false, xlo, xhi);
    else
        ticks_x(c, f, x, 6, p->x_whole);
    if (log_y)
        ticks_log(c, f, y, 4, true, ylo, yhi);
    else
        ticks_y(c, f, y, 4, ylo, yhi);
}

/* Each series' line through its finite points (broken at the others), the last series
   first; then the markers, the first series on top, on every point when there is room.
   Returns the cells where ● met ○ (marker_put). */
static int series_lines(Canvas *c, const SeriesPlot *p, const Frame *f, const Axis *x,
                        const Axis *y)
{
    frame_clip(c, f);
    for (int k = p->count - 1; k >= 0; k--) {
        const Series *s = &p->series[k];
        int px = 0, py = 0;
        bool have = false;
        for (int i = 0; i < s->count; i++) {
            double u = Figure_scaled(p->x_scale, s->x[i]), v = Figure_scaled(p->y_scale, s->y[i]);
            if (!isfinite(u) || !isfinite(v)) {
                have = false;
                continue;
            }
            int dx = Axis_dot(x, u), dy = Axis_dot(y, v);
            if (have)
                Canvas_line(c, px, py, dx, dy, s->ink, s->stroke);
            else
                Canvas_dot(c, dx, dy, s->ink);
            px = dx;
            py = dy;
            have = true;
        }
    }
    Canvas_unclip(c);
    int met = 0;
    for (int k = p->count - 1; k >= 0; k--) {
        const Series *s = &p->series[k];
        if (!s->marker)
            continue;
        int every = marker_every(s->count > 1 ? s->count - 1 : 1, f->cols);
        for (int i = 0; i < s->count; i++) {
            double u = Figure_scaled(p->x_scale, s->x[i]), v = Figure_scaled(p->y_scale, s->y[i]);
            if (isfinite(u) && isfinite(v) && (i % every == 0 || i == s->count - 1))
                met += marker_put(c, Axis_dot(x, u) / 2, Axis_dot(y, v) / 4, s->marker, s->ink);
        }
    }
    return met;
}

/* The panel, the legend saying what ◉ is when `both`.  Returns the cells where ● met ○. */
static int series_draw(Canvas *c, const SeriesPlot *p, bool both)
{
    LegendItem items[SERIES_MAX + SERIES_NOTES_MAX];
    bool any;
    int n = Figure_series_legend(p, items, &any);
    if (!any) {
        Plot_message(c, p->title, p->empty ? p->empty : "no data");
        legend_draw(c, items, n, Canvas_rows(c) - legend_rows(c, items, n));
        return 0;
    }
    if (both)
        legend_both(items, n);
    /* A small panel keeps its plot: the notes go first, the last first (a taller panel shows
       them), as the stable-rank panel's note does. */
    int least = n - (p->notes < SERIES_NOTES_MAX ? p->notes : SERIES_NOTES_MAX);
    Frame f;
    int head = title(c, p->title);
    while (n > least && !frame_make(c, head, 6, legend_rows(c, items, n), &f))
        n--;
    if (!panel_open(c, p->title, 6, items, n, p->x_name, NULL, &f))
        return 0;
    Axis x, y;
    series_axes(c, p, &f, &x, &y);
    return series_lines(c, p, &f, &x, &y);
}

int Plot_series_rows(const Canvas *c, const SeriesPlot *p)
{
    LegendItem items[SERIES_MAX + SERIES_NOTES_MAX];
    bool any;
    int n = Figure_series_legend(p, items, &any);
    legend_both(items, n); /* the longer legend: where the curves meet */
    size_t cut = fitting_length(c, p->title, Canvas_cols(c) - TITLE_MARGIN);
    Frame f;
    frame_make(c, cut == 0 || p->title[cut] == '\0' ? 1 : 2, 6, legend_rows(c, items, n), &f);
    return f.rows;
}

void Plot_series(Canvas *c, const SeriesPlot *p)
{
    /* With ◉ in the legend first; drawn again without it where the curves never meet. */
    if (series_draw(c, p, true) == 0) {
        Canvas_clear(c);
        series_draw(c, p, false);
    }
}
