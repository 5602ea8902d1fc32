/* What the files of the screen's loop share (tui.h is their interface, Tui_run):
 *
 *   tui.c          the loop: signals as bytes on a pipe, poll() over the keys, the worker, the
 *                  signals and the export; one frame drawn; the screen started and ended
 *   tui_keys.c     a key's way: the size gate, the picker, prompts and : line that take every
 *                  key while open, the help, the warnings list, the mouse, a bound key's action
 *   tui_job.c      what a change computes: the job a change needs or none, the refusals before
 *                  it, Esc's cancel, and the resting result (the last complete one) it returns to
 *   tui_long_job.c the question before a long job, and its answer
 *   tui_presets.c  presets and the tour: a preset saved, loaded, picked; the tour's steps
 *   tui_export.c   x's export as the loop drives it: the gate, the start, the end, quitting
 *
 * Everything here runs on the UI thread alone.
 */
#ifndef ATTNSCOPE_TUI_TUI_INTERNAL_H
#define ATTNSCOPE_TUI_TUI_INTERNAL_H

#include "export_gate.h"
#include "export_job.h"
#include "hf_config.h"
#include "keys.h"
#include "picker.h"
#include "prompt.h"
#include "screen.h"
#include "setline.h"
#include "tour.h"
#include "trace.h"
#include "tui.h"
#include "view.h"
#include "worker.h"

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

/* Everything the loop knows; only the UI thread touches it. */
typedef struct {
    Screen *screen;
    Worker *worker;
    Trace *trace;
    Controls controls;
    unsigned long long memory_budget;
    const char *memory_budget_source; /* what set it, named by the refusals */
    bool export_matrix;       /* --export-matrix: x writes the attention matrix in full too */
    unsigned long generation; /* of the newest job submitted */
    WorkerExtras extras;      /* what that job computes beyond the model run */
    Snapshot *shown;          /* the newest snapshot taken (possibly of an older job) */
    /* The last complete result and the settings (the view too) it stands for: where Esc
       returns when it cancels a job. */
    Snapshot *resting;
    Controls resting_controls;
    ExportJob *export_job;          /* x's export, written on a thread of its own */
    double export_since;            /* when it started (Trace_clock_ms) */
    char export_typed[PROMPT_SIZE]; /* its directory as typed at the prompt */
    ExportWait export_wait;         /* the prompt said to wait for the result */
    /* The directory of the export that quitting cancelled, said on stderr on leaving. */
    char export_cancelled_by_quit[EXPORT_JOB_DIR_SIZE];
    bool busy;
    double busy_since;
    unsigned spinner;
    char note[KEYS_NOTE_SIZE];
    /* The characters the name prompt refused since it opened ("' ' '$'"): the saved note says
       them again, so that `my first` saved as myfirst.preset is not a surprise. */
    char name_left_out[40];
    bool help;
    int help_page;
    int warnings_first; /* the warnings list, while it is open: its first warning shown; -1 closed
                         */
    bool redraw, repaint;
    bool quit;
    int quit_signal;
    double last_frame;
    Tour tour;
    int tour_step; /* index of the step loaded last, -1 before the first */
    const char *tour_dir, *presets_dir;
    Picker *picker;                     /* the preset picker, while it is open */
    char loaded_preset[TOUR_PATH_SIZE]; /* the preset loaded last: where the picker opens */
    char caption[TOUR_CAPTION_SIZE];    /* its "Point at:" note, for presentation mode */
    Config caption_config;              /* the settings the note describes */
    ViewPanels panels;                  /* where the last frame put its panels (the mouse) */
    /* The prompt of p (a preset's name) or x (the export directory), or the question before
       a long job, while it is open. */
    enum {
        PROMPT_NONE,
        PROMPT_PRESET_NAME,
        PROMPT_EXPORT_DIRECTORY,
        PROMPT_LONG_JOB,
        PROMPT_SETTING_LINE
    } prompting;
    Prompt prompt;
    SetLine setline; /* the : line, its prompt and the session's history */
    /* What the long-job question is about: the settings asked for, the preset they come
       from ("" for a key), and the question. */
    Controls pending;
    char pending_preset[TOUR_PATH_SIZE];
    char question[KEYS_NOTE_SIZE];
    double confirm_above; /* seconds: a job estimated above asks first */
    /* Under the question about the conditioning view: the size that would fit. */
    char fitting[KEYS_NOTE_SIZE];
    int (*load_preset)(Config *c, const char *path, char *err, size_t size);
    int (*format_preset)(const Config *c, char *buf, size_t size);
    const HfConfigReport *hf_config; /* --hf-config's report (TuiSettings), or NULL */
    Config start_config;             /* the settings the screen started with */
} Loop;

/* tui_job.c */

/* What the display needs beyond the model run. */
WorkerExtras Loop_extras_for(const Display *d);
/* Submits the settings on as the newest job. */
void Loop_submit(Loop *l);
/* Whether no job has run or runs: the command line's job was asked about and declined. */
bool Loop_nothing_computed(const Loop *l);
/* Whether next needs a job (other settings, or a view that adds or leaves a job's extras). */
bool Loop_needs_job(const Loop *l, const Controls *next);
/* Puts next on without a job: while none runs, the shown result stands for them. */
void Loop_put_on(Loop *l, const Controls *next);
/* Puts next on: a job where it needs one (or the long-job question), else at once. */
void Loop_change_to(Loop *l, const Controls *next);
/* Whether the settings would be refused before anything is allocated (reason in the note). */
bool Loop_settings_refused(Loop *l, const Config *c);
/* Esc while a job runs: the job stops, the screen returns to the resting result. */
void Loop_cancel_job(Loop *l);
/* The worker's newest snapshot taken; a complete one becomes the resting result. */
void Loop_on_snapshot(Loop *l);

/* tui_long_job.c */

/* Starts the job for next, or asks first when it is long.  True when the settings are on. */
bool Loop_submit_or_ask(Loop *l, const Controls *next, const char *preset);
/* A key while the long-job question is open. */
void Loop_long_job_key(Loop *l, int key);

/* tui_presets.c */

/* The settings of the preset at path are on: the picker opens there, the tour goes on there. */
void Loop_preset_applied(Loop *l, const char *path);
/* Saves the settings as the preset named at the prompt.  Returns 0 when saved. */
int Loop_save_settings(Loop *l);
/* Loads the tour's step `step`, saying which step it is. */
void Loop_tour_go(Loop *l, int step);
/* Opens the preset picker at the preset loaded last, or says why there is none. */
void Loop_picker_open(Loop *l);
/* A key while the picker is open. */
void Loop_picker_key(Loop *l, int key);
/* The tour step (or --preset) the start's settings are, with its note. */
void Loop_tour_step_of_start(Loop *l, const TuiSettings *s);

/* tui_export.c */

/* x's gate for the shown result under the settings on (export_gate.h). */
ExportGate Loop_export_gate(const Loop *l);
/* Starts the export into the directory typed at the prompt.  Returns 0 when started. */
int Loop_export_shown(Loop *l);
/* The export ended: the note says what was written, or why not. */
void Loop_on_export_done(Loop *l);
/* Quitting while the export writes: it is cancelled, keys are no longer read. */
void Loop_quit_cancelling_export(Loop *l, struct pollfd *tty);

/* tui_keys.c */

/* Opens the prompt of p (PROMPT_PRESET_NAME) or x (PROMPT_EXPORT_DIRECTORY). */
void Loop_prompt_open(Loop *l, int purpose);
/* A key (or SCREEN_MOUSE, SCREEN_RESIZED) read by the loop. */
void Loop_on_key(Loop *l, int key);

#endif
