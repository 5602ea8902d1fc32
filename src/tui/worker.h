/* The worker thread that owns the numerics (cmus's worker, reduced to one kind of job).
 *
 * The UI submits a Config; each submission gets the next generation number and replaces
 * any job still queued.  The running job is asked to stop after its current layer when a
 * newer one arrives.  After every layer the worker copies a Snapshot out of its Result,
 * keeps only the newest one of the newest generation, and writes a byte to a pipe; the UI
 * polls that pipe and takes the snapshot on its own thread.  The worker keeps one
 * Workspace and one Result for all jobs.
 *
 * A superseded job stops within about 0.1 s wherever it is: between layers, between the
 * blocks of a product, and inside one LAPACK call, which runs in a process of its own that
 * the stop kills (Workspace_set_isolation with src/common/isolate.c: LAPACK cannot be
 * interrupted from inside, and one dgeev at T = 4096 runs for a quarter of a minute).  That costs a
 * copy of each call's matrices through shared memory (bench/README.md measures it).
 *
 * A job may ask for extras after the model run: the width sweep, the compare view's
 * second network (gap removal toggled, same weights), and the conditioning view's runs
 * (exact only where the cost model and the memory budget allow it).  They run after the main result
 * is published, stop like it when superseded, and are kept with the result: a job whose settings
 * equal the last finished one reuses its result (and its extras) instead of recomputing, so asking
 * for a view only computes what that view adds.
 */
#ifndef ATTNSCOPE_TUI_WORKER_H
#define ATTNSCOPE_TUI_WORKER_H

#include "attnscope/config.h"
#include "conditioning_path.h"
#include "snapshot.h"
#include "trace.h"

#include <stdbool.h>

typedef struct Worker Worker;

/* Starts the thread (trace may be NULL).  NULL when memory or threads ran out. */
Worker *Worker_new(Trace *trace);

/* The same, its runs' two networks at once on a lane thread of their own (two_lanes), or in
   turn on the worker's thread alone (where only one of OpenBLAS's buffers fits), and priced
   accordingly.  Worker_new is two lanes. */
Worker *Worker_new_with_lanes(Trace *trace, bool two_lanes);

/* The memory a job and what the worker keeps of earlier jobs may use together (the worker
   keeps every layer it computed for the current weights, so that another shown layer, one
   more layer or the gap-toggled network costs only what is new).  0 keeps nothing. */
void Worker_set_memory_budget(Worker *w, unsigned long long bytes);

/* How the conditioning chooses its path (--conditioning-path; auto at start). */
void Worker_set_conditioning_path(Worker *w, ConditioningPath path);
/* Whether the jobs keep the attention maps whole (T×T, --export-matrix) for x to export, and
   make X0 again for its input.csv (Snapshot.input, in the done snapshot). */
void Worker_set_full_attention_maps(Worker *w, bool full);

/* Readable when a snapshot may be waiting (poll it with POLLIN). */
int Worker_fd(const Worker *w);

typedef struct {
    bool sweep;   /* Sweep_width at the shown layer */
    bool compare; /* the network with gap removal toggled, up to the shown layer */
    /* The conditioning of docs/model.md §8 (Conditioning_run_controlled) for the settings,
       and with it for the other initialisation of the pair normal | cutting-skip. */
    bool conditioning, conditioning_other;
} WorkerExtras;

/* Queues c (which must pass Config_validate) and returns its generation (1, 2, ...). */
unsigned long Worker_submit(Worker *w, const Config *c);
/* The same, with extras computed after the model run. */
unsigned long Worker_submit_extras(Worker *w, const Config *c, WorkerExtras extras);

/* Cancels the running or queued job without starting another: it stops as a superseded one
   does, and its snapshots are stale.  Returns the generation that superseded it, which no
   snapshot has. */
unsigned long Worker_cancel(Worker *w);

/* The estimated seconds of a job for c with these extras (the cost model, docs/model.md §7,
   against what the worker keeps when it is idle; as for a fresh workspace while it
   computes).  NaN when out of memory. */
double Worker_estimate(Worker *w, const Config *c, WorkerExtras extras);

/* How far the running job is, in the estimated seconds of its cost schedule. */
typedef struct {
    unsigned long generation;
    double done_s;        /* at the last checkpoint (after a layer, or the model run) */
    double next_s;        /* at the next one, or the end */
    double total_s;       /* of the whole job; NaN when unknown */
    double started_ms;    /* Trace_clock_ms of the job's start */
    double checkpoint_ms; /* and of the last checkpoint */
    int reading_layer;    /* the layer whose weights a checkpoint is read for (0: none) */
    int reading_depth;    /* of how many */
} WorkerProgress;

/* Fills out and returns true while the job of `generation` runs. */
bool Worker_progress(Worker *w, unsigned long generation, WorkerProgress *out);

/* True while a superseded job is still winding down (the next one has not started). */
bool Worker_stopping(Worker *w);

/* Empties the pipe and returns the newest snapshot of `generation`, which the caller
   frees, or NULL.  Snapshots of other generations are stale: they are freed here. */
Snapshot *Worker_take(Worker *w, unsigned long generation);

/* Asks the thread to stop and waits up to wait_ms for it.  Returns true when it stopped
   and everything is freed; false when it is still inside a layer: the thread then runs
   on and the process must end with _exit (exit handlers would tear down OpenBLAS under
   it). */
bool Worker_stop(Worker *w, int wait_ms);

#endif
