/* The descriptions of the views' curve panels beside the default view's (figure.h): gradient
 * norms and token similarity against depth, the width sweep, and the conditioning view's κ
 * against depth with K's (or B's) singular values.  The screen (src/tui/view_panels.c,
 * view_conditioning.c) and the SVG writer (svg.c) both draw these, so an export is the panel.
 */
#ifndef ATTNSCOPE_COMMON_FIGURE_SERIES_H
#define ATTNSCOPE_COMMON_FIGURE_SERIES_H

#include "attnscope/conditioning.h"
#include "attnscope/sweep.h"
#include "figure.h"

#include <stdbool.h>

enum { SERIES_TEXT_POINTS = CONFIG_DEPTH_MAX + 1, SERIES_LABEL_SIZE = 64, SERIES_NOTE_SIZE = 160 };

/* What a series plot points into: the x values (layers ℓ = 0..depth, or the sweep's T), the
   curves a plot derives (the proved bounds, the reference line), the texts. */
typedef struct {
    double x[SERIES_TEXT_POINTS];
    double derived[2][SERIES_TEXT_POINTS];
    char title[FIGURE_TITLE_SIZE];
    char label[SERIES_MAX][SERIES_LABEL_SIZE];
    char note[SERIES_NOTES_MAX][SERIES_NOTE_SIZE];
} SeriesText;

/* ‖∂X_L/∂W^V_ℓ‖_F² of both networks against depth, log axis; `done`: the run has ended (the
   empty panel then says why there are no gradients). */
void Figure_gradient_plot(const Result *r, bool done, SeriesText *t, SeriesPlot *p);
/* μ(Xℓ)/μ(X0) of both networks against depth, log axis. */
void Figure_similarity_plot(const Result *r, SeriesText *t, SeriesPlot *p);

/* The width sweep of c's shown layer: sr − 1 against T of both networks, log–log, the fitted
   slopes, and with overlays the theory slope as a line through the first resolved point.
   t->title is set in every case, p unless w is NULL; returns whether w has points. */
bool Figure_sweep_plot(const Config *c, const WidthSweep *w, bool overlays, SeriesText *t,
                       SeriesPlot *p);

/* The title of a conditioning panel, named after its initialisation (init NULL: unnamed). */
void Figure_conditioning_title(const char *init, char *title, size_t size);
/* κ against depth on a log axis: the network's κ(K_ℓ), κ(K_ℓ + I) (above the exact size the
   proved lower bounds of a null κ(K) instead) and κ(A_ℓ⋯A_1), its counterpart's κ(K_ℓ) and
   κ(K_ℓ + I); the notes say the path (note[0]), the shown layer's numbers (note[1]) and the
   nulls (note[2], where there are).  compact: the short title and labels of a small panel,
   which chooses what else it leaves out (src/tui/view_conditioning.c). */
void Figure_conditioning_plot(const Conditioning *k, const char *init, bool compact, SeriesText *t,
                              SeriesPlot *p);

/* The singular values of K at the shown layer (the exact path), or those of the dominant term
   B = W_VOᵀ ⊗ A, the products of its two factors' (every k-th of each above 256, said in the
   title), or a message instead. */
typedef struct {
    char title[FIGURE_TITLE_SIZE];
    const char *message; /* said instead of the histogram (NULL: plot holds it) */
    double *products;    /* B's, owned (Figure_conditioning_histogram_release) */
    HistogramPlot plot;
} ConditioningHistogram;

void Figure_conditioning_histogram(const Conditioning *k, bool compact, ConditioningHistogram *h);
void Figure_conditioning_histogram_release(ConditioningHistogram *h);

#endif
