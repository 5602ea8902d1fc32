#include "export_job.h"

#include "export.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

const char EXPORT_JOB_STILL_WRITING[] =
    "still writing the last export: Enter again once it is written";

struct ExportJob {
    ExportWriter write;
    int pipe[2]; /* [0] polled by the UI, [1] written once by the thread when it ends */
    /* Set by ExportJob_start and ExportJob_collect on the UI thread only. */
    bool running;
    pthread_t thread;
    Snapshot *held;
    ExportExtras extras;    /* pointers into held, and to toggled */
    ToggledNetwork toggled; /* the compare view's second network, held's */
    /* Set by ExportJob_cancel (the UI thread), polled by the writer; cleared at start. */
    atomic_bool cancel;
    /* Written by the thread before it writes to the pipe, read after pthread_join. */
    ExportOutcome outcome;
};

ExportJob *ExportJob_new(ExportWriter write)
{
    ExportJob *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    if (pipe(j->pipe)) {
        free(j);
        return NULL;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(j->pipe[i], F_SETFL, fcntl(j->pipe[i], F_GETFL) | O_NONBLOCK);
        fcntl(j->pipe[i], F_SETFD, FD_CLOEXEC);
    }
    j->write = write;
    return j;
}

/* The ended (or ending) export's thread joined and its snapshot let go. */
static void finish(ExportJob *j)
{
    pthread_join(j->thread, NULL);
    Snapshot_free(j->held);
    j->held = NULL;
    j->running = false;
}

void ExportJob_free(ExportJob *j)
{
    if (!j)
        return;
    if (j->running) {
        ExportJob_cancel(j);
        finish(j);
    }
    close(j->pipe[0]);
    close(j->pipe[1]);
    free(j);
}

int ExportJob_fd(const ExportJob *j)
{
    return j->pipe[0];
}

static bool cancel_requested(void *context)
{
    ExportJob *j = context;
    return atomic_load(&j->cancel);
}

static void *export_thread(void *arg)
{
    ExportJob *j = arg;
    ExportOutcome *o = &j->outcome;
    LinalgStop stop = {.requested = cancel_requested, .context = j};
    o->files = j->write(j->held->result, &j->extras, o->dir, stop, o->error, sizeof o->error);
    ssize_t n = write(j->pipe[1], "x", 1);
    (void)n; /* one byte into an empty pipe: it fits */
    return NULL;
}

/* What an export of s from the view `panel` (compare: its compare view) writes beside every
   export's files (pointers into s, and to toggled, s's second network where it has one). */
static ExportExtras view_extras(const Snapshot *s, Panel panel, bool compare, bool matrix,
                                const ToggledNetwork *toggled)
{
    bool conditioning = panel == PANEL_CONDITIONING;
    return (ExportExtras){
        .conditioning = conditioning && s->has_conditioning[0] ? &s->conditioning[0] : NULL,
        .toggled = compare && !conditioning && s->has_compare ? toggled : NULL,
        .other_init =
            compare && conditioning && s->has_conditioning[1] ? &s->conditioning[1] : NULL,
        .sweep = panel == PANEL_WIDTH_SWEEP && s->has_sweep ? &s->sweep : NULL,
        .gradient = panel == PANEL_GRADIENT,
        .similarity = panel == PANEL_SIMILARITY,
        .entropy = panel == PANEL_ENTROPY,
        .input = matrix ? s->input : NULL,
    };
}

bool ExportJob_start(ExportJob *j, Snapshot *s, Panel panel, bool compare, bool matrix,
                     const char *dir, char *err, size_t size)
{
    char why[EXPORT_JOB_ERROR_SIZE];
    if (j->running) {
        snprintf(err, size, "%s", EXPORT_JOB_STILL_WRITING);
        return false;
    }
    /* X0 for input.csv is the worker's (Export_input takes 0.8 s at T = d = 2048). */
    if (matrix && !s->input) {
        snprintf(err, size, "export failed: writing input.csv failed: %.140s",
                 s->input_note[0] ? s->input_note : "the job made no X0");
        return false;
    }
    if (Export_check(dir, why, sizeof why)) {
        snprintf(err, size, "export failed: %.140s", why);
        return false;
    }
    j->outcome = (ExportOutcome){.files = -1};
    snprintf(j->outcome.dir, sizeof j->outcome.dir, "%s", dir);
    j->held = Snapshot_hold(s);
    j->toggled = Snapshot_toggled(j->held);
    j->extras = view_extras(j->held, panel, compare, matrix, &j->toggled);
    atomic_store(&j->cancel, false);
    int failed = pthread_create(&j->thread, NULL, export_thread, j);
    if (failed) {
        Snapshot_free(j->held);
        j->held = NULL;
        snprintf(err, size, "export failed: cannot start its thread");
        return false;
    }
    j->running = true;
    return true;
}

bool ExportJob_running(const ExportJob *j)
{
    return j->running;
}

bool ExportJob_cancel(ExportJob *j)
{
    if (!j->running || atomic_load(&j->cancel))
        return false;
    atomic_store(&j->cancel, true);
    return true;
}

bool ExportJob_cancelling(const ExportJob *j)
{
    return j->running && atomic_load(&j->cancel);
}

const char *ExportJob_dir(const ExportJob *j)
{
    return j->outcome.dir;
}

bool ExportJob_collect(ExportJob *j, ExportOutcome *out)
{
    char byte;
    if (!j->running || read(j->pipe[0], &byte, 1) != 1)
        return false;
    finish(j);
    *out = j->outcome;
    return true;
}

void ExportJob_writing_note(const ExportJob *j, double seconds, char *buf, size_t size)
{
    if (ExportJob_cancelling(j))
        snprintf(buf, size, "cancelling the export to %.120s/, %.1f s", j->outcome.dir, seconds);
    else
        snprintf(buf, size, "writing the export to %.120s/, %.1f s (Esc cancels)", j->outcome.dir,
                 seconds);
}

void ExportJob_outcome_note(const ExportOutcome *o, char *buf, size_t size)
{
    if (o->files == EXPORT_CANCELLED)
        snprintf(buf, size, "export cancelled: %.120s/ left as it was", o->dir);
    else if (o->files < 0)
        snprintf(buf, size, "export failed: %.140s", o->error);
    else
        snprintf(buf, size, "exported %d files to %.120s/", o->files, o->dir);
}
