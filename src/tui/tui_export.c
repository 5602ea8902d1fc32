/* x's export as the loop drives it: the gate on the shown result, the start on the export's
 * thread into the directory typed, its end (the note, the prompt again after a failure) and
 * quitting while it writes.  The writing itself is export_job.c's; this is the loop's side. */
#include "tui_internal.h"

#include "export.h"

#include <stdio.h>
#include <stdlib.h>

/* x's gate for the shown result under the settings on (export_gate.h). */
ExportGate Loop_export_gate(const Loop *l)
{
    return ExportGate_of(l->shown, &l->controls.config,
                         l->controls.display.panel == PANEL_CONDITIONING,
                         l->controls.display.compare, ExportJob_running(l->export_job));
}

/* Starts writing the shown result into the directory typed at the prompt (~/ is the home
   directory; empty: attnscope-YYYYmmdd-HHMMSS in the current directory) on the export's
   thread, or says why not in the note.  The status line says what it writes until
   Loop_on_export_done says what was written.  Returns 0 when started. */
int Loop_export_shown(Loop *l)
{
    const char *refusal = ExportWait_said(&l->export_wait, Loop_export_gate(l));
    if (refusal) {
        snprintf(l->note, sizeof l->note, "%s", refusal);
        return -1;
    }
    char dir[EXPORT_JOB_DIR_SIZE];
    const char *typed = l->prompt.text, *home = getenv("HOME");
    if (!typed[0])
        Export_default_directory(dir, sizeof dir);
    else if (typed[0] == '~' && (typed[1] == '/' || !typed[1]) && home && home[0])
        snprintf(dir, sizeof dir, "%s%s", home, typed + 1);
    else
        snprintf(dir, sizeof dir, "%s", typed);
    /* The compare view's panels are the default view's, but for the conditioning's. */
    const Display *d = &l->controls.display;
    Panel panel = d->compare && d->panel != PANEL_CONDITIONING ? PANEL_STABLE_RANK : d->panel;
    if (!ExportJob_start(l->export_job, l->shown, panel, d->compare, l->export_matrix, dir, l->note,
                         sizeof l->note)) {
        Trace_event(l->trace, "export files=-1 dir=%s", dir);
        return -1;
    }
    l->export_since = Trace_clock_ms();
    snprintf(l->export_typed, sizeof l->export_typed, "%s", typed);
    Trace_event(l->trace, "export-start gen=%lu dir=%s", l->shown->generation, dir);
    return 0;
}

/* The export ended: the note says what was written, or why not, in the words the prompt
   said them before the export had a thread.  A failure (known late: the directory's checks
   passed) opens the prompt again with what was typed, as a failure at Enter keeps it open,
   unless the picker, another prompt, the help or the warnings have the keys now or the screen
   is quitting. */
void Loop_on_export_done(Loop *l)
{
    ExportOutcome o;
    if (!ExportJob_collect(l->export_job, &o))
        return;
    ExportJob_outcome_note(&o, l->note, sizeof l->note);
    l->redraw = true;
    Trace_event(l->trace, "export files=%d dir=%s", o.files, o.dir);
    if (o.files == EXPORT_CANCELLED && l->quit)
        snprintf(l->export_cancelled_by_quit, sizeof l->export_cancelled_by_quit, "%s", o.dir);
    if (o.files >= 0 || o.files == EXPORT_CANCELLED || l->picker || l->prompting || l->help ||
        l->warnings_first >= 0 || l->quit)
        return;
    Loop_prompt_open(l, PROMPT_EXPORT_DIRECTORY);
    Prompt_set_text(&l->prompt, l->export_typed);
}

/* Quitting while the export writes cancels it and waits the row or so it takes to stop and
   remove its staging directory (leaving under it would leave that behind); the directory
   stays as it was, and stderr says so once the screen is closed.  Keys are no longer read
   (q was the last); signals still are. */
void Loop_quit_cancelling_export(Loop *l, struct pollfd *tty)
{
    if (tty->fd < 0)
        return;
    tty->fd = -1;
    ExportJob_cancel(l->export_job);
    snprintf(l->note, sizeof l->note, "quitting: cancelling the export to %.120s/",
             ExportJob_dir(l->export_job));
    l->redraw = true;
    Trace_event(l->trace, "quit-cancels-export");
}
