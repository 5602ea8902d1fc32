/* The screen's loop and its one entry point, Tui_run: signals as bytes on a pipe, poll() over
 * the keys, the worker, the signals and the export job, one frame drawn from the loop's state,
 * the screen started and ended.  What a key, a job, a preset or an export does is in the
 * tui_*.c files tui_internal.h lists. */
#include "tui_internal.h"

#include "attnscope/cost.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "export.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Spinner frames while a job runs. */
#define SPINNER_MS 100
/* How long quitting waits for the worker to finish its layer before leaving anyway. */
#define STOP_WAIT_MS 300
/* A job estimated above this many seconds (docs/model.md §7) asks before it starts. */
#define CONFIRM_ABOVE_SECONDS 30.0

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

/* The frame drawn, in the trace: the job it shows and where the panels went (number:rows x
   cols at row,col), for the tests of the layout. */
static void trace_frame(const Loop *l, bool current, bool full)
{
    char places[VIEW_PANELS_MAX * 32] = "";
    for (int i = 0, used = 0; i < l->panels.count && used < (int)sizeof places; i++) {
        const ViewRect *r = &l->panels.rect[i];
        used += snprintf(places + used, sizeof places - (size_t)used, "%s%d:%dx%d@%d,%d",
                         i ? "," : "", l->panels.number[i], r->rows, r->cols, r->row, r->col);
    }
    Trace_event(l->trace, "frame gen=%lu shown=%lu spectra=%d full=%d panels=%s", l->generation,
                l->shown ? l->shown->generation : 0,
                current && l->shown->result->spectra_ready && !l->shown->failed, full, places);
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
    trace_frame(l, current, full);
    l->redraw = l->repaint = false;
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
    Loop_submit_or_ask(l, &start, NULL);
    l->redraw = true;
    while (!l->quit || ExportJob_running(l->export_job)) {
        if (l->quit)
            Loop_quit_cancelling_export(l, &fds[0]);
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
            Loop_on_snapshot(l);
        if (fds[3].revents & POLLIN)
            Loop_on_export_done(l);
        if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
            Trace_event(l->trace, "tty-closed");
            l->quit = true;
        } else if (fds[0].revents & POLLIN) {
            int key;
            while (!l->quit && (key = Screen_key(l->screen)) != SCREEN_NO_KEY)
                Loop_on_key(l, key);
        }
        if ((l->busy || ExportJob_running(l->export_job)) &&
            Trace_clock_ms() - l->last_frame >= SPINNER_MS) {
            l->spinner++;
            l->redraw = true;
        }
    }
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

/* The worker (on two lanes, or one where only one BLAS buffer fits) and the export's thread,
   set as the settings say.  Returns 0, or -1 with the reason on stderr. */
static int start_threads(Loop *l, const TuiSettings *s)
{
    l->worker = Worker_new_with_lanes(l->trace, !s->one_lane);
    if (s->one_lane && !l->note[0])
        snprintf(l->note, sizeof l->note, "%s", TUI_ONE_LANE_NOTE);
    if (!l->worker) {
        fprintf(stderr, "attnscope: cannot start the worker thread\n");
        return -1;
    }
    l->export_job = ExportJob_new(Export_write_stoppable);
    if (!l->export_job) {
        fprintf(stderr, "attnscope: cannot make the export's pipe: %s\n", strerror(errno));
        return -1;
    }
    Worker_set_memory_budget(l->worker, l->memory_budget);
    Worker_set_conditioning_path(l->worker, (ConditioningPath)s->conditioning_path);
    Worker_set_full_attention_maps(l->worker, s->export_matrix);
    l->export_matrix = s->export_matrix;
    return 0;
}

/* The screen closed and everything the loop held released, the signals given back; the
   process ends by the signal that quit it, if one did.  Returns the exit status. */
static int leave(Loop *l, const TuiSettings *s, const struct sigaction old[SIGNAL_COUNT],
                 int status)
{
    Screen_close(l->screen);
    Trace_event(l->trace, "quit signal=%d", l->quit_signal);
    /* Only when the loop broke off: the loop cancels the export and waits for it to end. */
    ExportJob_free(l->export_job);
    if (l->export_cancelled_by_quit[0])
        fprintf(stderr, "attnscope: the export to %s/ was cancelled by quitting; it is as it was\n",
                l->export_cancelled_by_quit);
    Snapshot_free(l->shown);
    Snapshot_free(l->resting);
    Picker_free(l->picker);
    Tour_free(&l->tour);
    if (l->worker && !Worker_stop(l->worker, STOP_WAIT_MS)) {
        /* The worker is inside a long layer: leave without waiting for it (exit handlers
           would tear OpenBLAS down under it).  The terminal is already restored. */
        end_by_signal(l->quit_signal);
        _exit(status);
    }
    signals_restore(old);
    int lost = Trace_close(l->trace);
    if (lost) { /* a trace with lines missing would mislead whoever measures with it */
        fprintf(stderr, "attnscope: --trace '%s': writing failed, lines lost: %s\n", s->trace_path,
                strerror(lost));
        status = status ? status : 1;
    }
    end_by_signal(l->quit_signal);
    return status;
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
    Loop_tour_step_of_start(&l, s);
    if (start_threads(&l, s))
        goto done;
    status = Screen_open(&l.screen, unicode, color, err, sizeof err);
    if (status) {
        fprintf(stderr, "attnscope: %s\n", err);
        goto done;
    }
    Trace_event(l.trace, "start %dx%d unicode=%d color=%d", Screen_cols(l.screen),
                Screen_rows(l.screen), unicode, color);
    run(&l);
done:
    return leave(&l, s, old, status);
}
