/* The conditioning view's panels (docs/model.md §8): κ of each layer's attention sub-block
 * against depth, with its notes, and the singular values of K (or of its dominant term) at the
 * shown layer. */
#include "view_internal.h"

#include "figure_series.h"
#include "plot.h"

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

/* Below this many rows a conditioning panel is compact (80×24): one title row, the network's
   three curves with a one-row legend, no notes, so that the plot keeps its six rows. */
enum { CONDITIONING_COMPACT_ROWS = 16 };

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
    SeriesText t;
    SeriesPlot p;
    Figure_conditioning_plot(&s->conditioning[slot], init,
                             Canvas_rows(c) < CONDITIONING_COMPACT_ROWS, &t, &p);
    Plot_series(c, &p);
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
