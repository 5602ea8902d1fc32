/* The conditioning view's panels (docs/model.md §8): κ of each layer's attention sub-block
 * against depth, with its notes, and the singular values of K (or of its dominant term) at the
 * shown layer. */
#include "view_internal.h"

#include "figure_series.h"
#include "plot.h"

#include <stdio.h>

int View_conditioning_slot(const Snapshot *s, bool cutting_skip)
{
    bool first_is = s->result->config.init == INIT_CUTTING_SKIP;
    return first_is == cutting_skip ? 0 : 1;
}

/* The settings of a conditioning slot, whether or not it is computed yet. */
static InitScheme slot_init(const Snapshot *s, int slot)
{
    InitScheme own = s->result->config.init;
    return slot == 0 ? own : own == INIT_CUTTING_SKIP ? INIT_NORMAL : INIT_CUTTING_SKIP;
}

/* Why a conditioning slot has no curves yet (`unshown` with no snapshot), or NULL when it has
   them. */
static const char *conditioning_missing(const Snapshot *s, int slot, const char *unshown)
{
    if (!s || s->failed)
        return s ? "the computation failed (see the status line)" : unshown;
    if (s->conditioning_note[slot][0])
        return s->conditioning_note[slot];
    if (!s->has_conditioning[slot])
        return "computing the Jacobians (the status line says how far)…";
    return NULL;
}

/* Below this many rows the singular values' panel has its short title (80×24). */
enum { CONDITIONING_COMPACT_ROWS = 16 };

/* The plot rows a conditioning panel keeps (README: at least 5 under its title, axis and
   legend): what does not fit beside them is left out, and one line says what. */
enum { CONDITIONING_PLOT_ROWS = 5 };

/* κ against depth on c: the whole panel where it fits; else the short title and labels with,
   as room allows, every note, the shown layer's numbers, then no note, then not the
   counterpart's curves either, the last note then naming what is left out (`z` shows the
   panel on the whole screen).  That last is drawn whatever rows it leaves (4 in the compare
   view at 80×24): a line saying what is missing is worth a plot row. */
static void conditioning_plot_fitted(const Conditioning *k, const char *init, Canvas *c)
{
    SeriesText t;
    SeriesPlot p;
    Figure_conditioning_plot(k, init, false, &t, &p);
    if (Plot_series_rows(c, &p) < CONDITIONING_PLOT_ROWS)
        Figure_conditioning_plot(k, init, true, &t, &p);
    if (Plot_series_rows(c, &p) >= CONDITIONING_PLOT_ROWS) {
        Plot_series(c, &p);
        return;
    }
    const char *nulls = p.notes == 3 ? ", nulls" : "";
    char left_out[SERIES_NOTE_SIZE];
    snprintf(left_out, sizeof left_out, "left out: the path%s (z zooms)", nulls);
    p.note[0] = t.note[1];
    p.note[1] = left_out;
    p.notes = 2;
    if (Plot_series_rows(c, &p) < CONDITIONING_PLOT_ROWS) {
        snprintf(left_out, sizeof left_out, "left out: path%s, ℓ=%d values (z zooms)", nulls,
                 k->config.layer);
        p.note[0] = left_out;
        p.notes = 1;
    }
    if (Plot_series_rows(c, &p) < CONDITIONING_PLOT_ROWS) {
        snprintf(left_out, sizeof left_out, "left out: counterpart, notes (z zooms)");
        p.count = 3;
    }
    Plot_series(c, &p);
}

void View_conditioning_panel(const Snapshot *s, int slot, bool named, const char *unshown,
                             Canvas *c)
{
    const char *init = named && s ? INIT_NAMES.names[slot_init(s, slot)] : named ? "" : NULL;
    const char *missing = conditioning_missing(s, slot, unshown);
    if (missing) {
        char title[FIGURE_TITLE_SIZE];
        Figure_conditioning_title(init, title, sizeof title);
        Plot_message(c, title, missing);
        return;
    }
    conditioning_plot_fitted(&s->conditioning[slot], init, c);
}

void View_conditioning_histogram(const Snapshot *s, int slot, const char *unshown, Canvas *c)
{
    const char *missing = conditioning_missing(s, slot, unshown);
    if (missing) {
        Plot_message(c, "singular values of K", missing);
        return;
    }
    ConditioningHistogram h;
    Figure_conditioning_histogram(&s->conditioning[slot],
                                  Canvas_rows(c) < CONDITIONING_COMPACT_ROWS, &h);
    if (h.message)
        Plot_message(c, h.title, h.message);
    else
        Plot_histogram(c, &h.plot);
    Figure_conditioning_histogram_release(&h);
}
