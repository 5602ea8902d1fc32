/* The three plots of SPEC §6, drawn onto a canvas from plain data (nvtop's plot.c): they
 * know nothing of snapshots, threads or terminals.  Each fills its whole canvas: a title
 * on the first row, the plot with tick labels, and a legend on the last rows.  Nothing is
 * told by colour alone: every series has its own glyph or stroke, shown in the legend.
 */
#ifndef ATTNSCOPE_TUI_PLOT_H
#define ATTNSCOPE_TUI_PLOT_H

#include "attnscope/model.h"
#include "canvas.h"

#include <stdbool.h>

/* Eigenvalues λ of one attention matrix in the complex plane, drawn as √T·λ. */
typedef struct {
    const char *title;
    int count;
    const Complex *values; /* by descending modulus: values[0] is the outlier */
    double scale;          /* √T */
    double sigma;          /* radius of the circle of the bulk (NaN: not drawn) */
    bool exact;            /* read off a triangular matrix's diagonal */
} EigenvaluePlot;

/* Histogram of √T·s_i, i ≥ 2, with s1 marked apart and the quartercircle overlay. */
typedef struct {
    const char *title;
    int count;
    const double *values;     /* singular values, descending, not scaled */
    double scale;             /* √T */
    double sigma;             /* quartercircle on [0, 2σ] (NaN: no overlay) */
    const char *theory_label; /* what the overlay is ("quartercircle law", ...) */
} HistogramPlot;

/* Stable rank against depth on a log axis, with the counterpart network as a ghost. */
typedef struct {
    const char *title;
    int depth;
    const double *network;     /* ℓ = 0..depth, NaN where not known */
    const double *counterpart; /* same, gap removal toggled */
    const char *network_label;
    const char *counterpart_label;
    double top;      /* the largest stable rank possible (T) */
    int shown_layer; /* highlighted */
} StableRankPlot;

void Plot_eigenvalues(Canvas *c, const EigenvaluePlot *p);
void Plot_histogram(Canvas *c, const HistogramPlot *p);
void Plot_stable_rank(Canvas *c, const StableRankPlot *p);
/* A title and a centred message instead of a plot (e.g. while the layer is computed). */
void Plot_message(Canvas *c, const char *title, const char *message);

#endif
