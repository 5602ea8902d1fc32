/* What a change computes: the extras a view adds to the model run, whether a change needs a job
 * or is put on at once, the refusals before anything is allocated, Esc's cancel and the resting
 * result (the last complete one, and the settings it stands for) that a cancel returns to.
 * Apart from the loop because these decide the screen's state; the keys and the loop only ask
 * them. */
#include "tui_internal.h"

#include "attnscope/budget.h"
#include "attnscope/layer.h"

#include <stdio.h>

/* What the display needs beyond the model run. */
WorkerExtras Loop_extras_for(const Display *d)
{
    bool conditioning = d->panel == PANEL_CONDITIONING;
    /* A checkpoint's weights (--weights) fix the width: the sweep's other widths have none. */
    bool drawn = !Layer_weights_in_use();
    return (WorkerExtras){.sweep = drawn && !d->compare && d->panel == PANEL_WIDTH_SWEEP,
                          .compare = d->compare && !conditioning,
                          .conditioning = conditioning,
                          .conditioning_other = conditioning && d->compare};
}

void Loop_submit(Loop *l)
{
    l->extras = Loop_extras_for(&l->controls.display);
    l->generation = Worker_submit_extras(l->worker, &l->controls.config, l->extras);
    l->busy = true;
    l->busy_since = Trace_clock_ms();
}

/* Whether no job has run or runs: the command line's job was asked about and declined. */
bool Loop_nothing_computed(const Loop *l)
{
    return !l->shown && !l->busy;
}

/* Whether next needs a job: other settings than the ones on, a view that adds what the
   last job did not compute (the sweep, the compare view's second network, the conditioning),
   or a view that leaves what the running job is still computing: a view's extras are
   computed only while it is shown, so leaving it cancels them (the new job reuses the model
   run). */
bool Loop_needs_job(const Loop *l, const Controls *next)
{
    WorkerExtras want = Loop_extras_for(&next->display), had = l->extras;
    bool left = l->busy && ((had.sweep && !want.sweep) || (had.compare && !want.compare) ||
                            (had.conditioning && !want.conditioning) ||
                            (had.conditioning_other && !want.conditioning_other));
    return Loop_nothing_computed(l) || !Config_equal(&next->config, &l->controls.config) ||
           (want.sweep && !had.sweep) || (want.compare && !had.compare) ||
           (want.conditioning && !had.conditioning) ||
           (want.conditioning_other && !had.conditioning_other) || left;
}

/* Puts next on without a job: while none runs, the shown result stands for them. */
void Loop_put_on(Loop *l, const Controls *next)
{
    l->controls = *next;
    if (!l->busy)
        l->resting_controls = *next;
}

/* Puts next on: a job where it needs one (or the long-job question), else at once.  A view
   redraws from the snapshot; only what it adds (the sweep, the compare view's second network)
   is a job, and the worker reuses the model run. */
void Loop_change_to(Loop *l, const Controls *next)
{
    if (Loop_needs_job(l, next))
        Loop_submit_or_ask(l, next, NULL);
    else
        Loop_put_on(l, next);
}

/* A T across --hf-config's sliding window from the T the file was read at: refused, in the
   command line's words (HfConfig_check), since the mask the file's window sets at a T cannot
   be recomputed here without the file's own reading of it.  True with the reason in the
   note. */
static bool hf_window_refuses(Loop *l, const Config *c)
{
    char why[512];
    if (!l->hf_config || !HfConfig_check(l->hf_config, c, why, sizeof why))
        return false;
    snprintf(l->note, sizeof l->note, "nothing set: %s", why);
    return true;
}

/* Whether the settings a key or the : line would put on are refused before anything is
   allocated (--hf-config's window, then the memory budget, named by what set it): the screen
   stays as it was, the reason in the note. */
bool Loop_settings_refused(Loop *l, const Config *c)
{
    return hf_window_refuses(l, c) ||
           Budget_check_named(c, l->memory_budget, l->memory_budget_source, l->note,
                              sizeof l->note);
}

/* Esc while a job runs (and no export, which Esc cancels first): the job stops, and the
   screen returns to the last complete result and the settings it stands for, as Esc at the
   long-job question keeps the previous settings. */
void Loop_cancel_job(Loop *l)
{
    if (!l->busy) {
        snprintf(l->note, sizeof l->note, "Esc cancels a running job or export: none runs");
        return;
    }
    l->generation = Worker_cancel(l->worker);
    l->busy = false;
    Snapshot_free(l->shown);
    l->shown = l->resting ? Snapshot_hold(l->resting) : NULL;
    if (l->resting)
        l->controls = l->resting_controls;
    l->extras = Loop_extras_for(&l->controls.display);
    snprintf(l->note, sizeof l->note, "%s",
             l->resting ? "cancelled: back to the settings of the shown result"
                        : "cancelled: nothing computed; change the settings with keys (T, d, L, "
                          "...), or q quits");
    Trace_event(l->trace, "job-cancel-key gen=%lu", l->generation);
}

/* --hf-config's warnings that describe the result of s (HfConfig_warning_holds: a warning
   about a field the user has since changed by key, or about the file's model once a setting the
   file set has changed, does not) go first among its warnings: ! lists them and the status
   counts them with that result, the previous one's staying with it while the next computes. */
static void add_start_warnings(const Loop *l, Snapshot *s)
{
    const HfConfigReport *h = l->hf_config;
    static Warnings merged; /* 20 KB: on the UI thread alone */
    merged = (Warnings){0};
    char text[HF_WARNING_SIZE];
    for (int i = 0; h && i < HfConfig_warning_count(h); i++)
        if (HfConfig_warning_holds(h, i, &l->start_config, &s->result->config)) {
            HfConfig_warning(h, i, text, sizeof text);
            Warnings_add(&merged, "%s", text);
        }
    if (!merged.count)
        return;
    Warnings_add_all(&merged, &s->result->warnings);
    s->result->warnings = merged;
}

void Loop_on_snapshot(Loop *l)
{
    Snapshot *s = Worker_take(l->worker, l->generation);
    if (!s)
        return;
    add_start_warnings(l, s);
    Snapshot_free(l->shown);
    l->shown = s;
    if (s->done) {
        l->busy = false;
        Snapshot_free(l->resting);
        l->resting = Snapshot_hold(s);
        l->resting_controls = l->controls;
    }
    l->redraw = true;
    /* The export's prompt, opened before the result was in, said to wait: it is in now. */
    if (l->prompting == PROMPT_EXPORT_DIRECTORY &&
        ExportWait_ended(&l->export_wait, Loop_export_gate(l)))
        snprintf(l->note, sizeof l->note, "the result is in: Enter exports it");
    Trace_event(l->trace, "apply gen=%lu layers=%d/%d spectra=%d done=%d conditioning=%d",
                s->generation, s->result->layers_done, s->result->config.depth,
                s->result->spectra_ready, s->done, s->has_conditioning[0]);
}
