#include "tui.h"

#include "attnscope/budget.h"
#include "attnscope/cost.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "conditioning_fit.h"
#include "duration.h"
#include "export.h"
#include "export_gate.h"
#include "export_job.h"
#include "keys.h"
#include "picker.h"
#include "presets.h"
#include "prompt.h"
#include "save.h"
#include "screen.h"
#include "setline.h"
#include "status.h"
#include "tour.h"
#include "trace.h"
#include "view.h"
#include "worker.h"

#include <curses.h>

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Spinner frames while a job runs. */
#define SPINNER_MS 100
/* How long quitting waits for the worker to finish its layer before leaving anyway. */
#define STOP_WAIT_MS 300
/* A job estimated above this many seconds (docs/model.md §7) asks before it starts. */
#define CONFIRM_ABOVE_SECONDS 30.0
/* The conditioning view's question names the size that fits within this many seconds: the
   wait issue 25 asks an engineer's size to be answered within, and what --batch --max-time 300
   names, so that both front ends point at the same size.  Not CONFIRM_ABOVE_SECONDS: that is
   when to ask, not what is worth waiting for. */
#define CONDITIONING_FIT_SECONDS 300.0

/* Signals become bytes on this pipe (ttyplot's way), read by the poll() loop. */
static int signal_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char byte = (unsigned char)sig;
    ssize_t n = write(signal_pipe[1], &byte, 1);
    (void)n;
    errno = saved;
}

static const int SIGNALS[] = {SIGWINCH, SIGINT, SIGTERM, SIGHUP};
enum { SIGNAL_COUNT = sizeof SIGNALS / sizeof SIGNALS[0] };

static int signals_catch(struct sigaction old[SIGNAL_COUNT])
{
    if (pipe(signal_pipe))
        return -1;
    for (int i = 0; i < 2; i++) {
        fcntl(signal_pipe[i], F_SETFL, fcntl(signal_pipe[i], F_GETFL) | O_NONBLOCK);
        fcntl(signal_pipe[i], F_SETFD, FD_CLOEXEC);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    /* Installed before curses starts, so curses leaves these signals to us. */
    for (int i = 0; i < SIGNAL_COUNT; i++)
        sigaction(SIGNALS[i], &sa, &old[i]);
    return 0;
}

static void signals_restore(const struct sigaction old[SIGNAL_COUNT])
{
    for (int i = 0; i < SIGNAL_COUNT; i++)
        sigaction(SIGNALS[i], &old[i], NULL);
    close(signal_pipe[0]);
    close(signal_pipe[1]);
}

/* Ends the process by sig with its default action, so the parent sees why (0: no signal). */
static void end_by_signal(int sig)
{
    if (!sig)
        return;
    signal(sig, SIG_DFL);
    raise(sig);
}

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

/* What the display needs beyond the model run. */
static WorkerExtras extras_for(const Display *d)
{
    bool conditioning = d->panel == PANEL_CONDITIONING;
    /* A checkpoint's weights (--weights) fix the width: the sweep's other widths have none. */
    bool drawn = !Layer_weights_in_use();
    return (WorkerExtras){.sweep = drawn && !d->compare && d->panel == PANEL_WIDTH_SWEEP,
                          .compare = d->compare && !conditioning,
                          .conditioning = conditioning,
                          .conditioning_other = conditioning && d->compare};
}

static void submit(Loop *l)
{
    l->extras = extras_for(&l->controls.display);
    l->generation = Worker_submit_extras(l->worker, &l->controls.config, l->extras);
    l->busy = true;
    l->busy_since = Trace_clock_ms();
}

/* The settings of a preset are on: it is where the picker opens, and a tour step is where
   > and < go on from. */
static void preset_applied(Loop *l, const char *path)
{
    snprintf(l->loaded_preset, sizeof l->loaded_preset, "%s", path);
    Tour_point_at(path, l->caption, sizeof l->caption);
    l->caption_config = l->controls.config;
    for (int i = 0; i < l->tour.count; i++)
        if (strcmp(l->tour.path[i], path) == 0)
            l->tour_step = i;
    Trace_event(l->trace, "preset %s", path);
}

/* The question takes no text: only Enter and Esc answer it. */
static bool no_text(int c)
{
    (void)c;
    return false;
}

/* A candidate of the fitting-size search priced as the worker prices the job of its view. */
typedef struct {
    Worker *worker;
    WorkerExtras extras;
} ViewPricing;

static double view_job_seconds(const Config *c, void *context)
{
    const ViewPricing *p = context;
    return Worker_estimate(p->worker, c, p->extras);
}

/* For the conditioning view's question, the size whose job would take at most
   CONDITIONING_FIT_SECONDS, or that none does, into l->fitting; nothing outside that view. */
static void describe_fitting_size(Loop *l, const Controls *next)
{
    ViewPricing pricing = {.worker = l->worker, .extras = extras_for(&next->display)};
    l->fitting[0] = '\0';
    if (!pricing.extras.conditioning)
        return;
    char most[32];
    Duration_text(CONDITIONING_FIT_SECONDS, DURATION_ABOUT, most, sizeof most);
    const char *within = most + (most[0] == '~');
    Config fit;
    bool fits = ConditioningFit_search(&next->config, CONDITIONING_FIT_SECONDS, view_job_seconds,
                                       &pricing, &fit);
    ConditioningFit_phrase(fits ? &fit : NULL, within, l->fitting, sizeof l->fitting);
}

/* Whether no job has run or runs: the command line's job was asked about and declined. */
static bool nothing_computed(const Loop *l)
{
    return !l->shown && !l->busy;
}

/* Starts the job for next (from a key, or from the preset at `preset`), or, when the cost
   model puts it above confirm_above, asks first and changes nothing yet.  Returns
   true when the settings are on. */
static bool submit_or_ask(Loop *l, const Controls *next, const char *preset)
{
    double seconds = Worker_estimate(l->worker, &next->config, extras_for(&next->display));
    if (!(seconds > l->confirm_above)) {
        l->controls = *next;
        if (preset)
            preset_applied(l, preset);
        submit(l);
        return true;
    }
    l->pending = *next;
    snprintf(l->pending_preset, sizeof l->pending_preset, "%s", preset ? preset : "");
    char left[32];
    Duration_text(seconds, DURATION_ABOUT, left, sizeof left);
    const Config *c = &next->config;
    /* "about", not "about ~": the duration's own tilde says it twice.  Where the conditioning is
       priced to seek s_min at every layer the price is a ceiling (some layers stop at the
       bound: Cost_conditioning_seeks_s_min), and the question says so. */
    bool ceiling = extras_for(&next->display).conditioning && Cost_conditioning_seeks_s_min(c);
    snprintf(l->question, sizeof l->question,
             "%s %s to compute T=%d d=%d L=%d seeds=%d. Compute it? ",
             ceiling ? "at most" : "about", left + (left[0] == '~'), c->tokens, c->width, c->depth,
             c->seeds);
    describe_fitting_size(l, next);
    l->prompting = PROMPT_LONG_JOB;
    l->prompt =
        (Prompt){.title = " a long computation ",
                 .label = l->question,
                 .detail = l->fitting[0] ? l->fitting : NULL,
                 .hint = nothing_computed(l) ? "Enter computes it; Esc computes nothing yet"
                                             : "Enter computes it; Esc keeps the previous settings",
                 .max_chars = 0,
                 .allowed = no_text};
    Trace_event(l->trace, "confirm-ask seconds=%.1f", seconds);
    return false;
}

/* Whether next needs a job: other settings than the ones on, a view that adds what the
   last job did not compute (the sweep, the compare view's second network, the conditioning),
   or a view that leaves what the running job is still computing: a view's extras are
   computed only while it is shown, so leaving it cancels them (the new job reuses the model
   run). */
static bool needs_job(const Loop *l, const Controls *next)
{
    WorkerExtras want = extras_for(&next->display), had = l->extras;
    bool left = l->busy && ((had.sweep && !want.sweep) || (had.compare && !want.compare) ||
                            (had.conditioning && !want.conditioning) ||
                            (had.conditioning_other && !want.conditioning_other));
    return nothing_computed(l) || !Config_equal(&next->config, &l->controls.config) ||
           (want.sweep && !had.sweep) || (want.compare && !had.compare) ||
           (want.conditioning && !had.conditioning) ||
           (want.conditioning_other && !had.conditioning_other) || left;
}

/* Puts next on without a job: while none runs, the shown result stands for them. */
static void put_on(Loop *l, const Controls *next)
{
    l->controls = *next;
    if (!l->busy)
        l->resting_controls = *next;
}

/* Puts next on: a job where it needs one (or the long-job question), else at once.  A view
   redraws from the snapshot; only what it adds (the sweep, the compare view's second network)
   is a job, and the worker reuses the model run. */
static void change_to(Loop *l, const Controls *next)
{
    if (needs_job(l, next))
        submit_or_ask(l, next, NULL);
    else
        put_on(l, next);
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
static bool settings_refused(Loop *l, const Config *c)
{
    return hf_window_refuses(l, c) ||
           Budget_check_named(c, l->memory_budget, l->memory_budget_source, l->note,
                              sizeof l->note);
}

/* A setting or view key while the question is open steps the settings and view asked about,
   which are priced again: back at what the last job computed (a view it covers), nothing is
   asked or computed; still long, the question asks about the new ones; short enough, they are
   put on and computed. */
static void long_job_setting(Loop *l, const KeyBinding *b)
{
    Controls next = l->pending;
    if (!Keys_apply(b, &next, l->note, sizeof l->note) || settings_refused(l, &next.config))
        return; /* the question stays, about the settings it named */
    char preset[TOUR_PATH_SIZE];
    snprintf(preset, sizeof preset, "%s", l->pending_preset);
    l->prompting = PROMPT_NONE;
    if (!needs_job(l, &next)) {
        put_on(l, &next);
        snprintf(l->note, sizeof l->note, "back to the settings on: nothing to compute");
        Trace_event(l->trace, "confirm-back");
        return;
    }
    submit_or_ask(l, &next, preset[0] ? preset : NULL);
}

/* The answer to the long-job question: Enter puts the settings on and starts the job, Esc
   keeps the previous ones, with no job started; a setting or view key changes what is asked
   about (long_job_setting: leaving the conditioning view for one the last job covers asks
   nothing more); q quits, as the status line under the question offers; other keys leave the
   question open. */
static void long_job_key(Loop *l, int key)
{
    switch (Prompt_key(&l->prompt, key)) {
    case PROMPT_DONE:
        l->prompting = PROMPT_NONE;
        l->controls = l->pending;
        if (l->pending_preset[0]) {
            preset_applied(l, l->pending_preset);
            char title[TOUR_TITLE_SIZE];
            Tour_title(l->pending_preset, title, sizeof title);
            snprintf(l->note, sizeof l->note, "%s", title);
        }
        Trace_event(l->trace, "confirm-go");
        submit(l);
        break;
    case PROMPT_CANCEL:
        l->prompting = PROMPT_NONE;
        snprintf(l->note, sizeof l->note, "%s",
                 nothing_computed(l) ? "nothing computed: change the settings with keys (T, d, "
                                       "L, ...), or q quits"
                                     : "kept the previous settings: nothing computed");
        Trace_event(l->trace, "confirm-stay");
        break;
    default: {
        const KeyBinding *b = Keys_find(key);
        if (b && (b->kind == ACTION_SETTING || b->kind == ACTION_DISPLAY))
            long_job_setting(l, b);
        else if (b && b->kind == ACTION_QUIT)
            l->quit = true;
        else
            snprintf(l->note, sizeof l->note,
                     "answer with Enter (compute) or Esc (keep), or change the settings or the "
                     "view asked about with their keys");
        break;
    }
    }
}

/* x's gate for the shown result under the settings on (export_gate.h). */
static ExportGate export_gate(const Loop *l)
{
    return ExportGate_of(l->shown, &l->controls.config,
                         l->controls.display.panel == PANEL_CONDITIONING,
                         l->controls.display.compare, ExportJob_running(l->export_job));
}

/* Starts writing the shown result into the directory typed at the prompt (~/ is the home
   directory; empty: attnscope-YYYYmmdd-HHMMSS in the current directory) on the export's
   thread, or says why not in the note.  The status line says what it writes until
   on_export_done says what was written.  Returns 0 when started. */
static int export_shown(Loop *l)
{
    const char *refusal = ExportWait_said(&l->export_wait, export_gate(l));
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

/* Saves the settings as a preset named as typed at the prompt (the time when empty), which the
   command line, the tour and the picker read back; its header says when and what, for the picker.
   Returns 0 when saved. */
static int save_settings(Loop *l)
{
    char text[1536], path[640], err[640], when[64];
    if (!l->format_preset) {
        snprintf(l->note, sizeof l->note, "saving presets is not available");
        return -1;
    }
    const Config *c = &l->controls.config;
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
    int n = Save_header(c, l->prompt.text[0] ? l->prompt.text : "unnamed", when, text, sizeof text);
    int status = -1, body = -1;
    if (n >= 0 && (size_t)n < sizeof text)
        body = l->format_preset(c, text + n, sizeof text - (size_t)n);
    if (body < 0 || (size_t)body >= sizeof text - (size_t)n)
        snprintf(l->note, sizeof l->note, "save failed: the preset text does not fit");
    else if (Save_preset(text, l->prompt.text, path, sizeof path, err, sizeof err))
        snprintf(l->note, sizeof l->note, "save failed: %.140s", err);
    else {
        snprintf(l->note, sizeof l->note, "saved %.140s%s%s", path,
                 l->name_left_out[0] ? "; left out of the name: " : "", l->name_left_out);
        status = 0;
    }
    Trace_event(l->trace, "save-preset %s", l->note);
    return status;
}

/* Loads the preset at path (the display stays as it is): all of it or, when it is
   malformed, invalid or above the memory budget, nothing, with the reason.  Returns 0 when
   loaded, 1 when its job is long and the screen asks first, -1 when refused. */
static int load_preset_file(Loop *l, const char *path)
{
    Config c = Config_default();
    char err[512];
    if (!l->load_preset) {
        snprintf(l->note, sizeof l->note, "loading presets is not available");
        return -1;
    }
    if (l->load_preset(&c, path, err, sizeof err) || Config_validate(&c, err, sizeof err)) {
        snprintf(l->note, sizeof l->note, "%.500s", err);
        return -1;
    }
    if (!Layer_weights_fit(&c, err, sizeof err)) {
        snprintf(l->note, sizeof l->note, "%.40s is not loaded: %.400s", path, err);
        return -1;
    }
    if (Budget_check_named(&c, l->memory_budget, l->memory_budget_source, err, sizeof err)) {
        snprintf(l->note, sizeof l->note, "%.40s: %.115s", path, err);
        return -1;
    }
    Controls next = Controls_from(&c);
    next.display = l->controls.display;
    /* A tour step may name the view it is about (the entropy steps: "View: entropy"). */
    char view[32];
    Panel panel;
    if (Tour_view(path, view, sizeof view) && Panel_named(view, &panel))
        next.display.panel = panel;
    return submit_or_ask(l, &next, path) ? 0 : 1;
}

/* Why > and < step nothing: where the tour was looked for. */
static void no_tour_note(Loop *l)
{
    if (l->tour_dir)
        snprintf(l->note, sizeof l->note, "no tour: no steps in %.200s", l->tour_dir);
    else
        snprintf(l->note, sizeof l->note,
                 "no tour: presets/tour not found beside the program, in its install or here "
                 "(ATTNSCOPE_TOUR names one)");
}

/* Loads the tour's step `step`, saying which step it is. */
static void tour_go(Loop *l, int step)
{
    if (l->tour.count == 0) {
        no_tour_note(l);
        return;
    }
    if (step < 0 || step >= l->tour.count) {
        if (l->tour_step < 0)
            snprintf(l->note, sizeof l->note, "the tour has %d steps: press > to start it",
                     l->tour.count);
        else
            snprintf(l->note, sizeof l->note, "the tour has %d steps; this is step %d",
                     l->tour.count, l->tour_step + 1);
        return;
    }
    const char *path = l->tour.path[step];
    if (load_preset_file(l, path))
        return;
    char title[TOUR_TITLE_SIZE];
    Tour_title(path, title, sizeof title);
    snprintf(l->note, sizeof l->note, "%s (> next, < back)", title);
    Trace_event(l->trace, "tour step=%d %s", step + 1, path);
}

static void picker_open(Loop *l)
{
    char buf[512];
    const char *user = Presets_user_directory(buf, sizeof buf);
    l->picker = Picker_new();
    int listed = l->picker ? Picker_list(l->picker, l->presets_dir, l->tour_dir, user) : -1;
    if (listed <= 0) {
        if (listed < 0)
            snprintf(l->note, sizeof l->note, "out of memory for the preset list");
        else
            snprintf(l->note, sizeof l->note, "no presets found (shipped: %.60s; yours: %.60s)",
                     l->presets_dir ? l->presets_dir : "none", user ? user : "none");
        Picker_free(l->picker);
        l->picker = NULL;
        return;
    }
    Picker_select_path(l->picker, l->loaded_preset);
}

static void picker_close(Loop *l)
{
    Picker_free(l->picker);
    l->picker = NULL;
}

/* A key while the picker is open: it moves the selection, loads, or closes. */
static void picker_key(Loop *l, int key)
{
    switch (Picker_key(l->picker, key)) {
    case PICKER_STAY:
        break;
    case PICKER_CLOSE:
        picker_close(l);
        break;
    case PICKER_LOAD: {
        const PickerEntry *e = &l->picker->entry[l->picker->selected];
        int loaded = load_preset_file(l, e->path);
        /* A refused preset keeps the picker open, its reason in full inside it. */
        if (loaded < 0)
            break;
        if (loaded == 0)
            snprintf(l->note, sizeof l->note, "loaded %s preset %.100s",
                     Preset_source_name(e->source), e->name);
        picker_close(l);
        break;
    }
    }
}

static void prompt_open(Loop *l, int purpose)
{
    bool name = purpose == PROMPT_PRESET_NAME;
    l->prompting = purpose;
    l->name_left_out[0] = '\0';
    l->prompt = (Prompt){
        .title = name ? " save the settings as a preset " : " export the shown result ",
        .label = name ? "name: " : "directory: ",
        .hint = name ? "Enter saves (empty: named by the time); Esc cancels"
                     : "Enter writes CSV + SVG there (empty: attnscope-<time>); Esc cancels",
        .max_chars = name ? SAVE_NAME_MAX : PROMPT_SIZE - 1,
        .allowed = name ? Save_name_char : Prompt_printable,
    };
}

/* A key while a prompt is open.  A failed save or export (a name taken, a directory that
   cannot be written) keeps the prompt open to change what was typed. */
static void prompt_key(Loop *l, int key)
{
    bool name = l->prompting == PROMPT_PRESET_NAME;
    switch (Prompt_key(&l->prompt, key)) {
    case PROMPT_EDITED:
        break;
    case PROMPT_DONE:
        if ((name ? save_settings(l) : export_shown(l)) == 0)
            l->prompting = PROMPT_NONE;
        break;
    case PROMPT_CANCEL:
        l->prompting = PROMPT_NONE;
        snprintf(l->note, sizeof l->note, name ? "not saved" : "not exported");
        break;
    case PROMPT_REFUSED: {
        char typed[32];
        Keys_name(key, typed, sizeof typed);
        size_t used = strlen(l->name_left_out);
        if (name && key >= 0x20 && key < 0x7f && used + 5 < sizeof l->name_left_out)
            snprintf(l->name_left_out + used, sizeof l->name_left_out - used, "%s'%c'",
                     used ? " " : "", key);
        snprintf(l->note, sizeof l->note,
                 name ? "%s refused: a preset's name is its file name, which the command line "
                        "reads unquoted: letters, digits, '-', '_' and '.'"
                      : "%s refused: a directory is typed in printable ASCII",
                 typed);
        break;
    }
    case PROMPT_FULL:
        snprintf(l->note, sizeof l->note, "at most %d characters", l->prompt.max_chars);
        break;
    }
}

/* A key while the : line is open.  Enter sets what it says as a key's change is set (the
   memory budget, then the job or the long-job question); a refusal keeps the line open, its
   reason under it, and sets nothing.  Either way the line goes into the history. */
static void setline_key(Loop *l, int key)
{
    switch (SetLine_key(&l->setline, key, &l->controls.config)) {
    case PROMPT_DONE: {
        Controls next = l->controls;
        SetLine_remember(&l->setline);
        if (!SetLine_apply(l->setline.prompt.text, &next, l->note, sizeof l->note) ||
            settings_refused(l, &next.config))
            break;
        l->prompting = PROMPT_NONE;
        Trace_event(l->trace, "set %s", l->setline.prompt.text);
        change_to(l, &next);
        break;
    }
    case PROMPT_CANCEL:
        l->prompting = PROMPT_NONE;
        snprintf(l->note, sizeof l->note, "nothing set");
        break;
    case PROMPT_REFUSED:
        snprintf(l->note, sizeof l->note, "the line takes printable ASCII");
        break;
    case PROMPT_FULL:
        snprintf(l->note, sizeof l->note, "at most %d characters", l->setline.prompt.max_chars);
        break;
    case PROMPT_EDITED:
        break;
    }
}

/* The export ended: the note says what was written, or why not, in the words the prompt
   said them before the export had a thread.  A failure (known late: the directory's checks
   passed) opens the prompt again with what was typed, as a failure at Enter keeps it open,
   unless the picker, another prompt, the help or the warnings have the keys now or the screen
   is quitting. */
static void on_export_done(Loop *l)
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
    prompt_open(l, PROMPT_EXPORT_DIRECTORY);
    Prompt_set_text(&l->prompt, l->export_typed);
}

/* A key while the warnings list is open: the arrows, j/k and the page keys scroll it by
   warnings; Esc, q and ! close it; the others do nothing. */
static void warnings_key(Loop *l, int key, const KeyBinding *b)
{
    switch (key) {
    case KEY_DOWN:
    case 'j':
        l->warnings_first++;
        break;
    case KEY_UP:
    case 'k':
        l->warnings_first--;
        break;
    case KEY_NPAGE:
    case ' ':
        l->warnings_first += 4;
        break;
    case KEY_PPAGE:
        l->warnings_first -= 4;
        break;
    case KEY_HOME:
        l->warnings_first = 0;
        break;
    default:
        if (key == 27 || key == 'q' || (b && b->kind == ACTION_WARNINGS))
            l->warnings_first = -1;
        return;
    }
    int count = View_warnings_shown(l->shown, &l->controls.display);
    if (l->warnings_first > count - 1)
        l->warnings_first = count - 1;
    if (l->warnings_first < 0)
        l->warnings_first = 0;
}

static void on_key(Loop *l, int key);

/* A click on a panel shows it alone (a click on it then shows them all again); the wheel
   over a stable-rank panel steps the shown layer as ] and [ do.  Keys do all of this too. */
static void on_mouse(Loop *l)
{
    ScreenMouse m;
    if (!Screen_mouse(l->screen, &m) || l->picker || l->prompting || l->help)
        return;
    int panel = -1;
    for (int i = 0; i < l->panels.count; i++) {
        const ViewRect *r = &l->panels.rect[i];
        if (m.row >= r->row && m.row < r->row + r->rows && m.col >= r->col &&
            m.col < r->col + r->cols)
            panel = i;
    }
    Trace_event(l->trace, "mouse %s row=%d col=%d panel=%d",
                m.kind == MOUSE_CLICK      ? "click"
                : m.kind == MOUSE_WHEEL_UP ? "wheel-up"
                                           : "wheel-down",
                m.row, m.col, panel);
    if (panel < 0)
        return;
    Display *d = &l->controls.display;
    if (m.kind == MOUSE_CLICK) {
        d->zoom = d->zoom ? 0 : l->panels.number[panel];
        snprintf(l->note, sizeof l->note, "%s",
                 d->zoom ? "one panel full screen (a click: back)" : "every panel");
        l->redraw = true;
    } else if (l->panels.stable_rank[panel]) {
        on_key(l, m.kind == MOUSE_WHEEL_UP ? ']' : '[');
    }
}

/* A key while the picker or a prompt is open: modal, they take every key until they close. */
static void modal_key(Loop *l, int key, const char *name)
{
    l->note[0] = '\0';
    if (l->picker)
        picker_key(l, key);
    else if (l->prompting == PROMPT_LONG_JOB)
        long_job_key(l, key);
    else if (l->prompting == PROMPT_SETTING_LINE)
        setline_key(l, key);
    else
        prompt_key(l, key);
    Trace_event(l->trace, "key %s %s gen=%lu", name, l->picker ? "picker" : "modal", l->generation);
}

/* A key while the help is open: Esc, q and the help keys close it, Space and the page keys
   turn its pages (where it has more than one); the others do nothing while it is read, so
   reading it changes nothing. */
static void help_key(Loop *l, int key, const KeyBinding *b, const char *name)
{
    if (key == 27 || key == 'q' || (b && b->kind == ACTION_HELP))
        l->help = false;
    else if (key == ' ' || key == KEY_NPAGE)
        l->help_page++;
    else if (key == KEY_PPAGE)
        l->help_page--;
    Trace_event(l->trace, "key %s help-%s gen=%lu", name, l->help ? "open" : "closed",
                l->generation);
}

/* Esc while a job runs (and no export, which Esc cancels first): the job stops, and the
   screen returns to the last complete result and the settings it stands for, as Esc at the
   long-job question keeps the previous settings. */
static void cancel_job(Loop *l)
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
    l->extras = extras_for(&l->controls.display);
    snprintf(l->note, sizeof l->note, "%s",
             l->resting ? "cancelled: back to the settings of the shown result"
                        : "cancelled: nothing computed; change the settings with keys (T, d, L, "
                          "...), or q quits");
    Trace_event(l->trace, "job-cancel-key gen=%lu", l->generation);
}

/* A bound key's action on the main screen. */
static void bound_key(Loop *l, const KeyBinding *b)
{
    switch (b->kind) {
    case ACTION_SETTING: {
        Controls next = l->controls;
        if (!Keys_apply(b, &next, l->note, sizeof l->note) || settings_refused(l, &next.config))
            break;
        submit_or_ask(l, &next, NULL);
        break;
    }
    case ACTION_DISPLAY: {
        Controls next = l->controls;
        Keys_apply(b, &next, l->note, sizeof l->note);
        change_to(l, &next);
        break;
    }
    case ACTION_EXPORT: {
        /* Open even before the result is in: what is typed next is a directory, never keys. */
        prompt_open(l, PROMPT_EXPORT_DIRECTORY);
        const char *refusal = ExportWait_said(&l->export_wait, export_gate(l));
        snprintf(l->note, sizeof l->note, "%s", refusal ? refusal : "");
        break;
    }
    case ACTION_SAVE_PRESET:
        prompt_open(l, PROMPT_PRESET_NAME);
        break;
    case ACTION_PICK_PRESET:
        picker_open(l);
        break;
    case ACTION_SETTING_LINE:
        SetLine_open(&l->setline);
        l->prompting = PROMPT_SETTING_LINE;
        break;
    case ACTION_TOUR_NEXT:
        tour_go(l, l->tour_step + 1);
        break;
    case ACTION_TOUR_PREVIOUS:
        tour_go(l, l->tour_step - 1);
        break;
    case ACTION_HELP:
        l->help = true;
        l->help_page = 0;
        break;
    case ACTION_WARNINGS:
        l->warnings_first = 0;
        break;
    case ACTION_REDRAW:
        l->repaint = true;
        break;
    case ACTION_QUIT:
        l->quit = true;
        break;
    case ACTION_CANCEL:
        cancel_job(l);
        break;
    }
}

static void on_key(Loop *l, int key)
{
    if (key == SCREEN_MOUSE) {
        on_mouse(l);
        return;
    }
    char name[32];
    Keys_name(key, name, sizeof name);
    l->redraw = true;
    if (key == SCREEN_RESIZED) {
        Trace_event(l->trace, "resize %dx%d", Screen_cols(l->screen), Screen_rows(l->screen));
        return;
    }
    bool typing = l->prompting != PROMPT_NONE && l->prompting != PROMPT_LONG_JOB;
    if ((Screen_cols(l->screen) < VIEW_MIN_COLS || Screen_rows(l->screen) < VIEW_MIN_ROWS) &&
        !typing) {
        /* The size message hides what any other key would do: only q acts, as it says.  An
           open line to type into is drawn on the last row, so its keys still reach it. */
        l->quit = key == 'q';
        Trace_event(l->trace, "key %s %s below the minimum size", name,
                    l->quit ? "quits" : "ignored");
        return;
    }
    if (l->picker || l->prompting) {
        modal_key(l, key, name);
        return;
    }
    const KeyBinding *b = Keys_find(key);
    if (l->help) {
        help_key(l, key, b, name);
        return;
    }
    if (l->warnings_first >= 0) {
        warnings_key(l, key, b);
        Trace_event(l->trace, "key %s warnings first=%d gen=%lu", name, l->warnings_first,
                    l->generation);
        return;
    }
    l->note[0] = '\0';
    if (key == 27 && ExportJob_cancel(l->export_job)) {
        /* Esc cancels what the status line says it writes; the note comes when it has ended. */
        Trace_event(l->trace, "export-cancel gen=%lu", l->generation);
        return;
    }
    if (!b) {
        snprintf(l->note, sizeof l->note, "key %s does nothing; ? lists the keys", name);
        Trace_event(l->trace, "key %s unbound gen=%lu", name, l->generation);
        return;
    }
    bound_key(l, b);
    Trace_event(l->trace, "key %s gen=%lu", name, l->generation);
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

static void on_snapshot(Loop *l)
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
        ExportWait_ended(&l->export_wait, export_gate(l)))
        snprintf(l->note, sizeof l->note, "the result is in: Enter exports it");
    Trace_event(l->trace, "apply gen=%lu layers=%d/%d spectra=%d done=%d conditioning=%d",
                s->generation, s->result->layers_done, s->result->config.depth,
                s->result->spectra_ready, s->done, s->has_conditioning[0]);
}

static void on_signals(Loop *l)
{
    unsigned char sig[16];
    ssize_t n;
    while ((n = read(signal_pipe[0], sig, sizeof sig)) > 0)
        for (ssize_t i = 0; i < n; i++) {
            Trace_event(l->trace, "signal %d", sig[i]);
            if (sig[i] == SIGWINCH) {
                Screen_resize(l->screen);
                l->redraw = true;
            } else {
                l->quit = true;
                l->quit_signal = sig[i];
            }
        }
}

/* The running job's progress from its cost schedule, moving between its checkpoints; the
   worker's own (which layer a checkpoint is read for) in *out, left as it was when idle. */
static CostProgress job_progress(Loop *l, WorkerProgress *out)
{
    WorkerProgress p;
    if (!l->busy || !Worker_progress(l->worker, l->generation, &p))
        return (CostProgress){.fraction = 0, .seconds_left = NAN};
    *out = p;
    double now = Trace_clock_ms();
    return Cost_progress(p.done_s, p.next_s, p.total_s, (p.checkpoint_ms - p.started_ms) / 1e3,
                         (now - p.checkpoint_ms) / 1e3);
}

static void draw(Loop *l)
{
    bool current = l->shown && l->shown->generation == l->generation;
    /* A job that only adds a view's extras keeps the readouts of the same settings. */
    bool same = l->shown && Config_equal(&l->shown->result->config, &l->controls.config);
    WorkerProgress reading = {0};
    CostProgress progress = job_progress(l, &reading);
    char exporting[KEYS_NOTE_SIZE];
    if (ExportJob_running(l->export_job))
        ExportJob_writing_note(l->export_job, (Trace_clock_ms() - l->export_since) / 1e3, exporting,
                               sizeof exporting);
    View v = {
        .status =
            {
                .config = &l->controls.config,
                .shown = l->shown,
                .current = current || same,
                .busy = l->busy,
                .busy_ms = Trace_clock_ms() - l->busy_since,
                .progress = progress.fraction,
                .estimated = isfinite(progress.seconds_left),
                .seconds_left = progress.seconds_left,
                .stopping = l->busy && Worker_stopping(l->worker),
                .spinner = l->spinner,
                .exporting = ExportJob_running(l->export_job) ? exporting : NULL,
                .note = l->note,
                .unicode = Screen_unicode(l->screen),
                .weights = Layer_weights_in_use() ? Layer_weights_in_use()->name : NULL,
                .reading_layer = reading.reading_layer,
                .reading_depth = reading.reading_depth,
            },
        .display = l->controls.display,
        /* The note describes its step's settings: a key that changes them takes it away
           (the key that changes them back brings it back). */
        .caption = l->caption[0] && Config_equal(&l->caption_config, &l->controls.config)
                       ? l->caption
                       : NULL,
        .drawn = &l->panels,
        .help = l->help,
        .help_page = l->help_page,
        .warnings_first = l->warnings_first,
        .picker = l->picker,
        .prompt = l->prompting == PROMPT_SETTING_LINE ? &l->setline.prompt
                  : l->prompting                      ? &l->prompt
                                                      : NULL,
    };
    Screen_set_bold(l->screen, l->controls.display.present);
    bool full = View_draw(l->screen, &v, l->repaint);
    l->last_frame = Trace_clock_ms();
    /* Where the panels went (number:rows x cols at row,col), for the tests of the layout. */
    char places[VIEW_PANELS_MAX * 32] = "";
    for (int i = 0, used = 0; i < l->panels.count && used < (int)sizeof places; i++) {
        const ViewRect *r = &l->panels.rect[i];
        used += snprintf(places + used, sizeof places - (size_t)used, "%s%d:%dx%d@%d,%d",
                         i ? "," : "", l->panels.number[i], r->rows, r->cols, r->row, r->col);
    }
    Trace_event(l->trace, "frame gen=%lu shown=%lu spectra=%d full=%d panels=%s", l->generation,
                l->shown ? l->shown->generation : 0,
                current && l->shown->result->spectra_ready && !l->shown->failed, full, places);
    l->redraw = l->repaint = false;
}

/* Quitting while the export writes cancels it and waits the row or so it takes to stop and
   remove its staging directory (leaving under it would leave that behind); the directory
   stays as it was, and stderr says so once the screen is closed.  Keys are no longer read
   (q was the last); signals still are. */
static void quit_cancelling_export(Loop *l, struct pollfd *tty)
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

static void run(Loop *l)
{
    struct pollfd fds[4] = {
        {.fd = STDIN_FILENO, .events = POLLIN},
        {.fd = Worker_fd(l->worker), .events = POLLIN},
        {.fd = signal_pipe[0], .events = POLLIN},
        {.fd = ExportJob_fd(l->export_job), .events = POLLIN},
    };
    /* The command line's job is asked about as a key's is (--no-confirm never asks). */
    Controls start = l->controls;
    submit_or_ask(l, &start, NULL);
    l->redraw = true;
    while (!l->quit || ExportJob_running(l->export_job)) {
        if (l->quit)
            quit_cancelling_export(l, &fds[0]);
        if (l->redraw)
            draw(l);
        int timeout = -1;
        /* The spinner, and the export's seconds, move while either runs. */
        if (l->busy || ExportJob_running(l->export_job)) {
            double wait = l->last_frame + SPINNER_MS - Trace_clock_ms();
            timeout = wait > 0 ? (int)wait + 1 : 0;
        }
        int ready = poll(fds, 4, timeout);
        if (ready < 0 && errno != EINTR)
            break;
        if (fds[2].revents & POLLIN)
            on_signals(l);
        if (fds[1].revents & POLLIN)
            on_snapshot(l);
        if (fds[3].revents & POLLIN)
            on_export_done(l);
        if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
            Trace_event(l->trace, "tty-closed");
            l->quit = true;
        } else if (fds[0].revents & POLLIN) {
            int key;
            while (!l->quit && (key = Screen_key(l->screen)) != SCREEN_NO_KEY)
                on_key(l, key);
        }
        if ((l->busy || ExportJob_running(l->export_job)) &&
            Trace_clock_ms() - l->last_frame >= SPINNER_MS) {
            l->spinner++;
            l->redraw = true;
        }
    }
}

/* Settings that start the screen as a tour step's preset does (--preset tour/02-...) are
   that step: its note is shown, and > goes on to the next step instead of the first.  A
   --preset outside the tour (or a tour that is not found) still shows its own note while
   the settings are its own; presentation mode without a tour says why > will not step. */
static void tour_step_of_start(Loop *l, const TuiSettings *s)
{
    char err[256];
    Config c;
    for (int i = 0; s->load_preset && i < l->tour.count; i++) {
        c = Config_default();
        if (!s->load_preset(&c, l->tour.path[i], err, sizeof err) && Config_equal(&c, &s->config)) {
            preset_applied(l, l->tour.path[i]);
            return;
        }
    }
    c = Config_default();
    if (s->start_preset && s->load_preset &&
        !s->load_preset(&c, s->start_preset, err, sizeof err) && Config_equal(&c, &s->config))
        preset_applied(l, s->start_preset);
    if (s->present && l->tour.count == 0)
        no_tour_note(l);
}

/* Whether a terminal of this type draws braille and the other glyphs of the Unicode mode: the
   Linux and BSD consoles (TERM=linux, cons25 ...) have a font of 256 or 512 glyphs and show
   braille as blanks or diamonds, whatever the locale says. */
static bool draws_unicode_glyphs(const char *term)
{
    static const char *const consoles[] = {"linux", "cons"};
    for (size_t i = 0; term && i < sizeof consoles / sizeof consoles[0]; i++)
        if (strncmp(term, consoles[i], strlen(consoles[i])) == 0)
            return false;
    return true;
}

int Tui_run(const TuiSettings *s)
{
    setlocale(LC_ALL, "");
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "attnscope: the interactive screen needs a terminal on stdin and "
                        "stdout; use --batch for JSON\n");
        return 2;
    }
    const char *no_color = getenv("NO_COLOR");
    bool color = !s->no_color && !(no_color && no_color[0]);
    bool unicode = !s->ascii && MB_CUR_MAX > 1 && draws_unicode_glyphs(getenv("TERM"));
    Loop l = {.controls = Controls_from(&s->config),
              .memory_budget = s->memory_budget,
              .memory_budget_source =
                  s->memory_budget_source ? s->memory_budget_source : "--max-memory",
              .tour_step = -1,
              .warnings_first = -1,
              .confirm_above = s->no_confirm ? INFINITY : CONFIRM_ABOVE_SECONDS,
              .tour_dir = s->tour_dir,
              .presets_dir = s->presets_dir,
              .load_preset = s->load_preset,
              .format_preset = s->format_preset,
              .hf_config = s->hf_config,
              .start_config = s->config};
    l.controls.display.present = s->present;
    if (s->trace_path && !(l.trace = Trace_open(s->trace_path))) {
        fprintf(stderr, "attnscope: --trace '%s': %s\n", s->trace_path, strerror(errno));
        return 2;
    }
    /* Our worker is the second thread on the machine's cores: BLAS stays on one. */
    Linalg_set_blas_threads(1);
    struct sigaction old[SIGNAL_COUNT];
    char err[256];
    int status = 1;
    if (signals_catch(old)) {
        fprintf(stderr, "attnscope: cannot create a pipe: %s\n", strerror(errno));
        Trace_close(l.trace);
        return 1;
    }
    Tour_list(&l.tour, s->tour_dir);
    tour_step_of_start(&l, s);
    l.worker = Worker_new_with_lanes(l.trace, !s->one_lane);
    if (s->one_lane && !l.note[0])
        snprintf(l.note, sizeof l.note, "%s", TUI_ONE_LANE_NOTE);
    if (!l.worker) {
        fprintf(stderr, "attnscope: cannot start the worker thread\n");
        goto done;
    }
    l.export_job = ExportJob_new(Export_write_stoppable);
    if (!l.export_job) {
        fprintf(stderr, "attnscope: cannot make the export's pipe: %s\n", strerror(errno));
        goto done;
    }
    Worker_set_memory_budget(l.worker, l.memory_budget);
    Worker_set_conditioning_path(l.worker, (ConditioningPath)s->conditioning_path);
    Worker_set_full_attention_maps(l.worker, s->export_matrix);
    l.export_matrix = s->export_matrix;
    status = Screen_open(&l.screen, unicode, color, err, sizeof err);
    if (status) {
        fprintf(stderr, "attnscope: %s\n", err);
        goto done;
    }
    Trace_event(l.trace, "start %dx%d unicode=%d color=%d", Screen_cols(l.screen),
                Screen_rows(l.screen), unicode, color);
    run(&l);
done:
    Screen_close(l.screen);
    Trace_event(l.trace, "quit signal=%d", l.quit_signal);
    /* Only when the loop broke off: the loop cancels the export and waits for it to end. */
    ExportJob_free(l.export_job);
    if (l.export_cancelled_by_quit[0])
        fprintf(stderr, "attnscope: the export to %s/ was cancelled by quitting; it is as it was\n",
                l.export_cancelled_by_quit);
    Snapshot_free(l.shown);
    Snapshot_free(l.resting);
    Picker_free(l.picker);
    Tour_free(&l.tour);
    if (l.worker && !Worker_stop(l.worker, STOP_WAIT_MS)) {
        /* The worker is inside a long layer: leave without waiting for it (exit handlers
           would tear OpenBLAS down under it).  The terminal is already restored. */
        end_by_signal(l.quit_signal);
        _exit(status);
    }
    signals_restore(old);
    int lost = Trace_close(l.trace);
    if (lost) { /* a trace with lines missing would mislead whoever measures with it */
        fprintf(stderr, "attnscope: --trace '%s': writing failed, lines lost: %s\n", s->trace_path,
                strerror(lost));
        status = status ? status : 1;
    }
    end_by_signal(l.quit_signal);
    return status;
}
