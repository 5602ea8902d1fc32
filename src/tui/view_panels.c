/* What each panel of a frame shows (View_panels, view.h): a snapshot handed to the plots'
 * descriptions (figure.h, figure_series.h, which the SVG writer draws too), drawn on the
 * canvases the frame sized, or what a panel not computed yet says.  The conditioning view's
 * panels are in view_conditioning.c. */
#include "view_internal.h"

#include "attnscope/entropy.h"
#include "attnscope/layer.h"
#include "figure_series.h"
#include "plot.h"

#include <stdio.h>
#include <stdlib.h>

/* The eigenvalues, and the singular values unless histogram is NULL (the conditioning view
   draws K's there).  `unshown` is what a panel with no snapshot says (unshown_text). */
static void spectra_panels(const Snapshot *shown, const Display *d, const char *unshown,
                           Canvas *eigen, Canvas *histogram)
{
    char wait[96];
    if (!shown || shown->failed || !shown->result->spectra_ready) {
        const char *why = unshown;
        if (shown && shown->failed)
            why = "the computation failed (see the status line)";
        else if (shown && shown->done)
            why = "no spectra: the network overflowed or vanished at or before this layer";
        else if (shown) {
            snprintf(wait, sizeof wait, "waiting for layer %d (%d of %d done)",
                     shown->result->config.layer, shown->result->layers_done,
                     shown->result->config.depth);
            why = wait;
        }
        Plot_message(eigen, "eigenvalues √T·λ", why);
        if (histogram)
            Plot_message(histogram, "singular values √T·s", why);
        return;
    }
    char t1[FIGURE_TITLE_SIZE], t2[FIGURE_TITLE_SIZE];
    EigenvaluePlot e;
    HistogramPlot h;
    Figure_spectra(shown->result, d->overlays, t1, t2, &e, &h);
    Plot_eigenvalues(eigen, &e);
    if (histogram)
        Plot_histogram(histogram, &h);
}

static void stable_rank_panel(const Snapshot *shown, const Display *d, StableRankFirst first,
                              const char *unshown, Canvas *c)
{
    if (!shown || shown->failed) {
        Plot_message(c, "stable rank sr(Σℓ) against depth, log axis",
                     shown ? "the computation failed" : unshown);
        return;
    }
    StableRankText text;
    StableRankPlot p;
    Figure_stable_rank_plot(shown->result, d->overlays, first, &text, &p);
    Plot_stable_rank(c, &p);
}

static void gradient_panel(const Snapshot *s, Canvas *c)
{
    SeriesText t;
    SeriesPlot p;
    Figure_gradient_plot(s->result, s->done, &t, &p);
    Plot_series(c, &p);
}

static void similarity_panel(const Snapshot *s, Canvas *c)
{
    SeriesText t;
    SeriesPlot p;
    Figure_similarity_plot(s->result, &t, &p);
    Plot_series(c, &p);
}

static void sweep_panel(const Snapshot *s, const Display *d, Canvas *c)
{
    SeriesText t;
    SeriesPlot p;
    if (!Figure_sweep_plot(&s->result->config, s->has_sweep ? &s->sweep : NULL, d->overlays, &t,
                           &p)) {
        Plot_message(c, t.title,
                     s->done && Layer_weights_in_use()
                         ? "no width sweep: the checkpoint's weights (--weights) fix d"
                     : s->done ? "no sweep (see the status line)"
                               : "computing the width sweep (T = 16 … T)…");
        return;
    }
    Plot_series(c, &p);
}

enum { ENTROPY_NOTES_ROWS = 16 };

/* The entropy view's main panel: row entropies against depth, with the bounds and the
   random-energy prediction when the overlays are on (Figure_entropy_plot). */
static void entropy_panel(const Snapshot *s, const Display *d, Canvas *c)
{
    EntropyText text;
    SeriesPlot p;
    /* The notes need rows a 24-row terminal's panel does not have. */
    Figure_entropy_plot(s->result, d->overlays, Canvas_rows(c) >= ENTROPY_NOTES_ROWS, &text, &p);
    Plot_series(c, &p);
}

/* The entropy view's second panel: the histogram of the shown matrix's row entropies. */
static void row_entropy_panel(const Snapshot *s, Canvas *c)
{
    const Config *k = &s->result->config;
    char title[FIGURE_TITLE_SIZE];
    double *sorted = malloc(sizeof(double) * (size_t)k->tokens);
    HistogramPlot h;
    if (!sorted) {
        Plot_message(c, "row entropies", "out of memory");
        return;
    }
    const char *round_off = Figure_row_entropy_plot(s->result, title, sorted, &h);
    if (h.count == 0)
        Plot_message(c, title,
                     round_off                       ? round_off
                     : Entropy_defined(k->attention) ? "computing…"
                                                     : Entropy_undefined_reason(k->attention));
    else
        Plot_histogram(c, &h);
    free(sorted);
}

static void main_panel(const Snapshot *shown, const Display *d, const char *unshown, Canvas *c)
{
    if (d->panel == PANEL_STABLE_RANK || !shown || shown->failed) {
        stable_rank_panel(shown, d, FIRST_NETWORK, unshown, c);
        return;
    }
    if (d->panel == PANEL_WIDTH_SWEEP)
        sweep_panel(shown, d, c);
    else if (d->panel == PANEL_GRADIENT)
        gradient_panel(shown, c);
    else if (d->panel == PANEL_CONDITIONING)
        View_conditioning_panel(shown, 0, false, unshown, c);
    else if (d->panel == PANEL_ENTROPY)
        entropy_panel(shown, d, c);
    else
        similarity_panel(shown, c);
}

/* The attention map alone (docs/model.md §2), drawn from the figure's description. */
static void map_panel(const Snapshot *shown, const char *unshown, Canvas *c)
{
    if (!shown || shown->failed) {
        Plot_message(c, "attention map", shown ? "the computation failed" : unshown);
        return;
    }
    AttentionMapPlot p;
    Figure_attention_map(shown->result, &p);
    Plot_attention_map(c, &p);
}

/* One half of the compare view: the eigenvalues of the network without (or with) gap
   removal over its stable-rank curve.  The main run's network is one of the two; the
   worker's second run (same weights) gives the other's eigenvalues. */
static void compare_half(const Snapshot *shown, const Display *d, bool removed, const char *unshown,
                         Canvas *eigen, Canvas *stable)
{
    const char *heading = removed ? "WITH gap removal" : "WITHOUT gap removal";
    char title[FIGURE_TITLE_SIZE];
    if (!shown || shown->failed || !shown->result->spectra_ready) {
        snprintf(title, sizeof title, "%s: eigenvalues √T·λ", heading);
        Plot_message(eigen, title, shown && shown->failed ? "the computation failed" : unshown);
        stable_rank_panel(shown, d, removed ? FIRST_GAP_REMOVED : FIRST_GAP_OFF, unshown, stable);
        return;
    }
    ToggledNetwork toggled = Snapshot_toggled(shown);
    EigenvaluePlot e;
    if (Figure_compare_eigenvalues(shown->result, &toggled, removed, d->overlays, title, &e, NULL))
        Plot_eigenvalues(eigen, &e);
    else
        Plot_message(eigen, title, "computing the same weights with the gap toggled…");
    stable_rank_panel(shown, d, removed ? FIRST_GAP_REMOVED : FIRST_GAP_OFF, unshown, stable);
}

/* What a panel with no snapshot says: a job computes one, or none runs (the start-up job's
   question is open, or was declined with Esc) and the panel says how to go on. */
static const char *unshown_text(const View *v)
{
    if (v->status.busy)
        return "computing…";
    if (v->prompt)
        return "nothing computed yet: the question below decides";
    return "nothing computed: change the settings with keys (T, d, L, ...), or q quits";
}

void View_panels(const View *v, Canvas **canvas)
{
    const Snapshot *shown = v->status.shown;
    const char *unshown = unshown_text(v);
    if (v->display.panel == PANEL_CONDITIONING && v->display.compare) {
        int left = shown ? View_conditioning_slot(shown, false) : 0;
        View_conditioning_panel(shown, left, true, unshown, canvas[0]);
        View_conditioning_histogram(shown, left, unshown, canvas[1]);
        View_conditioning_panel(shown, 1 - left, true, unshown, canvas[2]);
        View_conditioning_histogram(shown, 1 - left, unshown, canvas[3]);
        return;
    }
    if (v->display.panel == PANEL_CONDITIONING && shown && !shown->failed) {
        spectra_panels(shown, &v->display, unshown, canvas[0], NULL);
        View_conditioning_histogram(shown, 0, unshown, canvas[1]);
        main_panel(shown, &v->display, unshown, canvas[2]);
        return;
    }
    if (v->display.panel == PANEL_ATTENTION_MAP && !v->display.compare) {
        map_panel(shown, unshown, canvas[0]);
        return;
    }
    if (v->display.panel == PANEL_ENTROPY && !v->display.compare && shown && !shown->failed) {
        spectra_panels(shown, &v->display, unshown, canvas[0], NULL);
        row_entropy_panel(shown, canvas[1]);
        main_panel(shown, &v->display, unshown, canvas[2]);
        return;
    }
    if (v->display.compare) {
        compare_half(shown, &v->display, false, unshown, canvas[0], canvas[1]);
        compare_half(shown, &v->display, true, unshown, canvas[2], canvas[3]);
        return;
    }
    spectra_panels(shown, &v->display, unshown, canvas[0], canvas[1]);
    main_panel(shown, &v->display, unshown, canvas[2]);
}
