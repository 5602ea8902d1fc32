/* A plot's axis: data values onto a run of braille dots (plot.c).  A y axis whose ticks are
 * labelled maps values through its labels: each label's value on the centre of its row, and
 * linear between labels, so that a point drawn on a labelled row is within half a row of the
 * label's value as the labels around it space the rows.  Mapped evenly from its ends, a
 * label sits anywhere in its row: on a log axis of 2 rows labelled 256 and 10, sr = 33 was
 * drawn on the row labelled 256, the nearer label being 10.
 */
#ifndef ATTNSCOPE_TUI_AXIS_H
#define ATTNSCOPE_TUI_AXIS_H

#include <stdbool.h>

/* Labels at most (a tick list's 64), the axis's two ends and a point either side where the
   labels' spacing gives way to the ends'. */
enum { AXIS_LABELS_MAX = 64, AXIS_KNOTS_MAX = AXIS_LABELS_MAX + 4 };

typedef struct {
    double lo, hi;
    int first, count; /* the dots: first, and how many */
    bool down;        /* counts from the high end (screen y) */
    /* Where values go, ascending, as offsets in dots from the low end; fewer than 2: evenly
       from lo to hi. */
    int knots;
    double knot_value[AXIS_KNOTS_MAX], knot_offset[AXIS_KNOTS_MAX];
} Axis;

/* An axis mapped evenly from lo to hi. */
Axis Axis_make(double lo, double hi, int first, int count, bool down);
/* The dot of v; far-off values still give a dot beyond the axis, on the right side of it. */
int Axis_dot(const Axis *a, double v);
/* The rows (dot / 4) of a down axis's tick labels, and the axis mapped through them.  values:
   the ticks in order of priority, n at most AXIS_LABELS_MAX: each is labelled on the row its
   value falls on evenly, unless an earlier one took that row or the row is skip_row (-1:
   none).  The data drawn reach from data_lo to data_hi (NaN: no bound), and past the end
   labels they keep the labels' spacing, as a reader extends it: where that would run past
   the axis, the end label moves a row in, else gives way (on axes of 2 or 3 rows).  With
   fewer than two labels the axis stays even.  rows[i]: tick i's row, -1 unlabelled. */
void Axis_label_rows(Axis *a, const double *values, int n, int skip_row, double data_lo,
                     double data_hi, int *rows);

#endif
