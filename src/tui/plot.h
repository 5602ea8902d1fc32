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

void Plot_eigenvalues(Canvas *c, const EigenvaluePlot *p);
void Plot_histogram(Canvas *c, const HistogramPlot *p);
void Plot_stable_rank(Canvas *c, const StableRankPlot *p);
void Plot_series(Canvas *c, const SeriesPlot *p);
/* The rows of the plot area Plot_series would leave p on c with its whole legend (the notes
   included): a caller chooses by it what fits. */
int Plot_series_rows(const Canvas *c, const SeriesPlot *p);
/* The attention map (figure.h) coarsened to the canvas, its shade scale and block, and with
   the product its column mass as a line under it, on the map's columns (map_plot.c). */
void Plot_attention_map(Canvas *c, const AttentionMapPlot *p);
/* A panel's title on its first row (two when wider than the canvas); returns the rows taken. */
int Plot_title(Canvas *c, const char *text);
/* A title and a centred message instead of a plot (e.g. while the layer is computed). */
void Plot_message(Canvas *c, const char *title, const char *message);

#endif
