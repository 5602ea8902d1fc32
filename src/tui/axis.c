#include "axis.h"

#include <math.h>
#include <string.h>

Axis Axis_make(double lo, double hi, int first, int count, bool down)
{
    return (Axis){.lo = lo, .hi = hi, .first = first, .count = count, .down = down};
}

static double clamp(double x, double least, double most)
{
    return x < least ? least : x > most ? most : x;
}

/* The offset from the low end where v goes, before it is rounded to a dot. */
static double axis_offset(const Axis *a, double v)
{
    double span = a->count - 1;
    if (a->knots < 2)
        return span * clamp((v - a->lo) / (a->hi - a->lo), -1.0, 2.0);
    int k = 0; /* the segment from knot k to k + 1; the first and the last reach beyond */
    while (k < a->knots - 2 && v > a->knot_value[k + 1])
        k++;
    const double *x = a->knot_value + k, *o = a->knot_offset + k;
    return clamp(o[0] + (v - x[0]) / (x[1] - x[0]) * (o[1] - o[0]), -span, 2 * span);
}

/* How far past an end dot's centre a value mapped through labels is still drawn on it: half
   a dot (its outer edge, which lround would round outward), and round-off. */
#define EDGE (0.5 + 1e-9)

int Axis_dot(const Axis *a, double v)
{
    double exact = axis_offset(a, v), last = a->count - 1;
    if (a->knots >= 2 && exact < 0 && exact >= -EDGE)
        exact = 0;
    if (a->knots >= 2 && exact > last && exact <= last + EDGE)
        exact = last;
    int offset = (int)lround(exact);
    return a->down ? a->first + a->count - 1 - offset : a->first + offset;
}

typedef struct {
    double value;
    int row, tick;
} Label;

/* The offset of a down axis's row centre. */
static double row_centre(const Axis *a, int row)
{
    return a->first + a->count - 1 - (4.0 * row + 1.5);
}

/* The points past the end label e (side +1: above the highest, -1: below the lowest) to the
   axis's end, from e outwards, in value and offset; slope: the labels' spacing next to e in
   dots a unit (0: e alone).  The data, which reach data_end, keep that spacing: read from the
   labels, a point past the last is where the two before it say.  Returns how many, or -1
   where the data would reach past the axis's end. */
static int beyond(const Axis *a, const Label *e, double slope, int side, double data_end,
                  double *value, double *offset)
{
    double end = side > 0 ? a->hi : a->lo, end_offset = side > 0 ? a->count - 1 : 0;
    int k = 0;
    if (slope > 0 && isfinite(data_end) && side * (data_end - e->value) > 0) {
        double reach = row_centre(a, e->row) + (data_end - e->value) * slope;
        if (side * (end_offset - reach) < -EDGE)
            return -1;
        value[k] = data_end;
        offset[k++] = reach;
    }
    if (side * (end - (k ? value[k - 1] : e->value)) > 0) {
        value[k] = end;
        offset[k++] = end_offset;
    }
    return k;
}

static void knot(Axis *a, double value, double offset)
{
    a->knot_value[a->knots] = value;
    a->knot_offset[a->knots++] = offset;
}

/* The labels' spacing between l[0] and l[1], in dots a unit. */
static double slope(const Axis *a, const Label *l)
{
    return (row_centre(a, l[1].row) - row_centre(a, l[0].row)) / (l[1].value - l[0].value);
}

/* Maps a through the m labels l (ascending) and the ends beyond them; false, with the end
   label that cannot stay where it is in *end (+1 the highest, -1 the lowest). */
static bool through_labels(Axis *a, const Label *l, int m, double data_lo, double data_hi, int *end)
{
    double below_value[2], below_offset[2], above_value[2], above_offset[2];
    int above = beyond(a, &l[m - 1], m >= 2 ? slope(a, &l[m - 2]) : 0, 1, data_hi, above_value,
                       above_offset);
    int below =
        beyond(a, &l[0], m >= 2 ? slope(a, &l[0]) : 0, -1, data_lo, below_value, below_offset);
    if (below < 0 || above < 0) {
        *end = above < 0 ? 1 : -1;
        return false;
    }
    a->knots = 0;
    for (int k = below - 1; k >= 0; k--)
        knot(a, below_value[k], below_offset[k]);
    for (int i = 0; i < m; i++)
        knot(a, l[i].value, row_centre(a, l[i].row));
    for (int k = 0; k < above; k++)
        knot(a, above_value[k], above_offset[k]);
    return true;
}

/* The ticks that get a row of their own, in rows[] and as labels, ascending; returns how many. */
static int label_candidates(const Axis *a, const double *values, int n, int skip_row, int *rows,
                            Label *labels)
{
    int first_row = a->first / 4, end_row = (a->first + a->count) / 4, m = 0;
    for (int i = 0; i < n && i < AXIS_LABELS_MAX; i++) {
        int row = Axis_dot(a, values[i]) / 4;
        bool taken = row < first_row || row >= end_row || row == skip_row;
        for (int k = 0; k < m && !taken; k++)
            taken = labels[k].row == row;
        rows[i] = taken ? -1 : row;
        if (!taken)
            labels[m++] = (Label){values[i], row, i};
    }
    for (int i = 1; i < m; i++)
        for (int k = i; k > 0 && labels[k - 1].value > labels[k].value; k--) {
            Label swap = labels[k];
            labels[k] = labels[k - 1];
            labels[k - 1] = swap;
        }
    return m;
}

void Axis_label_rows(Axis *a, const double *values, int n, int skip_row, double data_lo,
                     double data_hi, int *rows)
{
    a->knots = 0;
    Label labels[AXIS_LABELS_MAX];
    int low = 0, high = label_candidates(a, values, n, skip_row, rows, labels) - 1, end;
    /* Where the data run past the axis at the labels' spacing (two labels at least), the end
       label moves a row in (the spacing narrows and the room past it grows); where its
       neighbour has that row, the neighbour gives way (the spacing widens), and of two labels
       the end one does. */
    while (low <= high &&
           !through_labels(a, labels + low, high - low + 1, data_lo, data_hi, &end)) {
        int at = end > 0 ? high : low, next = end > 0 ? high - 1 : low + 1;
        int inward = labels[at].row + end; /* rows count down the screen */
        if (inward != labels[next].row && inward != skip_row) {
            labels[at].row = rows[labels[at].tick] = inward;
        } else if (high - low >= 2) {
            rows[labels[next].tick] = -1;
            memmove(&labels[next], &labels[next + 1], (size_t)(high - next) * sizeof labels[0]);
            high--;
        } else {
            rows[labels[at].tick] = -1;
            high -= end > 0;
            low += end < 0;
        }
    }
    /* A label alone gives no spacing to go by: the axis stays even. */
    if (high - low < 1)
        a->knots = 0;
}
