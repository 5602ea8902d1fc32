/* The plots of the screen, drawn onto a canvas from plain data (nvtop's plot.c): they
 * know nothing of snapshots, threads or terminals.  Each fills its whole canvas: a title
 * on the first row, the plot with tick labels, and a legend on the last rows.  Nothing is
 * told by colour alone: every series has its own glyph or stroke, shown in the legend.  The
 * eigenvalue and histogram panels draw the descriptions of figure.h, as the SVG export does.
 */
#ifndef ATTNSCOPE_TUI_PLOT_H
#define ATTNSCOPE_TUI_PLOT_H

#include "attnscope/model.h"
#include "canvas.h"
#include "figure.h"

#include <stdbool.h>

/* How an axis maps values: as they are, log10 of positive values, or values that are
   already log10 (a curve whose values overflow a double). */
typedef enum { SCALE_LINEAR, SCALE_LOG, SCALE_LOG10_GIVEN } Scale;

/* One curve of a SeriesPlot: points (x[i], y[i]); NaN (and non-positive values on a log
   scale) leave gaps. */
typedef struct {
    const char *label;
    int count;
    const double *x, *y;
    Ink ink;
    Stroke stroke;
    const char *marker; /* drawn on the points, NULL: none */
} Series;

enum { SERIES_MAX = 5, SERIES_NOTES_MAX = 3 };

/* Curves on shared axes (the width sweep, gradient norms, token similarity). */
typedef struct {
    const char *title;
    int count;
    Series series[SERIES_MAX];
    Scale x_scale, y_scale;
    int notes;
    const char *note[SERIES_NOTES_MAX]; /* legend lines without a sample */
    const char *empty;                  /* said in the middle when no series has a point */
    const char *x_name;                 /* the x axis's name ("layer"), NULL: none */
    bool x_whole;                       /* x ticks on whole numbers only (layers) */
} SeriesPlot;

void Plot_eigenvalues(Canvas *c, const EigenvaluePlot *p);
void Plot_histogram(Canvas *c, const HistogramPlot *p);
void Plot_stable_rank(Canvas *c, const StableRankPlot *p);
void Plot_series(Canvas *c, const SeriesPlot *p);
/* The attention map (figure.h) coarsened to the canvas, its shade scale and block, and with
   the product its column mass as a line under it, on the map's columns (map_plot.c). */
void Plot_attention_map(Canvas *c, const AttentionMapPlot *p);
/* A panel's title on its first row (two when wider than the canvas); returns the rows taken. */
int Plot_title(Canvas *c, const char *text);
/* A title and a centred message instead of a plot (e.g. while the layer is computed). */
void Plot_message(Canvas *c, const char *title, const char *message);

#endif
