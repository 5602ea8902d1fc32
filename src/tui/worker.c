#include "worker.h"

#include "attnscope/budget.h"
#include "attnscope/conditioning.h"
#include "attnscope/cost.h"
#include "attnscope/model.h"
#include "attnscope/layer.h"
#include "attnscope/sweep.h"
#include "crash.h"
#include "export.h"
#include "isolate.h"
#include "lanes.h"
#include "rates.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct Worker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;    /* a job was queued, or quit was set */
    pthread_cond_t stopped; /* the thread left its loop */
    int pipe[2];            /* [0] polled by the UI, [1] written after each snapshot */
    Trace *trace;
    Lanes *lanes;   /* the layers' second lane, for every run of the worker (NULL: one lane) */
    bool two_lanes; /* the network and its counterpart at once, and priced so */

    /* Guarded by lock. */
    bool quit, has_stopped;
    bool queued;
    Config job;
    WorkerExtras extras;
    unsigned long latest;             /* generation of the newest submission */
    unsigned long long memory_budget; /* bytes a job and what is kept may use together */
    ConditioningPath conditioning_path;
    bool full_attention_maps; /* --export-matrix: the attention maps kept whole, for x */
    Snapshot *ready;          /* newest published snapshot, not yet taken */
    bool computing;           /* the thread is inside run_job (it owns the workspace) */
    WorkerProgress progress;  /* of the job `running`, in its schedule's seconds */
    CostRates rates;          /* this machine's, timed at start */

    /* Owned by the thread. */
    Workspace *workspace;
    Result *result;
    unsigned long running; /* generation of the job being computed */
    int traced_reading;    /* the layer of the last "reading" trace line of job `running` */
    double started_ms;
    bool cancelled;        /* the running job was told to stop */
    ModelPlan plan;        /* what the running job's model run computes */
    CostSchedule schedule; /* its seconds (seed_start NULL: none) */
    double extras_s;       /* the estimated seconds of its extras, after the model run */
    double extras_before_conditioning_s; /* of those, the ones that run before the conditioning */

    /* What a later job with the same settings can reuse (valid only when complete). */
    bool result_complete;
    Config result_config;
    Result *compare; /* gap removal toggled, up to the shown layer */
    bool compare_complete;
    Config compare_config;
    bool sweep_complete;
    Config sweep_config;
    WidthSweep sweep;
    /* The conditioning view's runs: [0] for the job's settings, [1] for the other
       initialisation (conditioning_config); a note instead where memory or LAPACK failed. */
    bool conditioning_complete[2];
    Config conditioning_config[2];
    Conditioning conditioning[2];
    char conditioning_note[2][SNAPSHOT_ERROR_SIZE];
    /* The running conditioning's place in the job's schedule: seconds before it, per layer
       of one network. */
    double conditioning_base_s, conditioning_layer_s;
    /* X0 of input_config for x's input.csv where the maps are kept whole (NULL: none, and
       input_note says why where making it failed), its QR on input_la, which is isolated and
       stopped as the runs' calls are. */
    double *input;
    Config input_config;
    char input_note[SNAPSHOT_ERROR_SIZE];
    Linalg *input_la;
};

/* The schedule the cost model prices for this worker's threads. */
static CostLanes priced_lanes(const Worker *w)
{
    return w->two_lanes ? COST_TWO_LANES : COST_ONE_LANE;
}

/* True when the running job should stop: a newer job came, or the program quits. */
static bool superseded(Worker *w)
{
    pthread_mutex_lock(&w->lock);
    bool stale = w->quit || w->latest != w->running;
    pthread_mutex_unlock(&w->lock);
    return stale;
}

/* Hands s to the UI unless its generation is already stale, and wakes the UI. */
static void publish(Worker *w, Snapshot *s)
{
    if (!s) {
        Trace_event(w->trace, "snapshot-lost gen=%lu (out of memory)", w->running);
        return;
    }
    pthread_mutex_lock(&w->lock);
    Snapshot *dropped = s;
    if (s->generation == w->latest) {
        dropped = w->ready;
        w->ready = s;
    }
    pthread_mutex_unlock(&w->lock);
    Snapshot_free(dropped);
    /* The pipe is non-blocking: when it is full, the UI has a wake-up pending anyway. */
    ssize_t n = write(w->pipe[1], "s", 1);
    (void)n;
}

/* Polled by both lanes inside a layer, between the blocks of a product and while an isolated
   LAPACK call runs: a key pressed during a long layer (seconds at T = 2048) stops the job
   within ~0.1 s. */
static bool stop_requested(void *context)
{
    return superseded(context);
}

/* The running job has done `done` seconds of its schedule; the next checkpoint is at `next`. */
static void checkpoint(Worker *w, double done, double next)
{
    pthread_mutex_lock(&w->lock);
    w->progress.done_s = done;
    w->progress.next_s = next;
    w->progress.checkpoint_ms = Trace_clock_ms();
    pthread_mutex_unlock(&w->lock);
}

/* A checkpoint's layer being read (Layer_watch_reading, on this thread): shown while it is,
   and traced once per layer of a job, however many parts the layer step fills it in. */
static void reading(void *context, int layer, int depth, bool done)
{
    Worker *w = context;
    pthread_mutex_lock(&w->lock);
    w->progress.reading_layer = done ? 0 : layer;
    w->progress.reading_depth = depth;
    pthread_mutex_unlock(&w->lock);
    if (!done && layer != w->traced_reading)
        Trace_event(w->trace, "reading gen=%lu layer=%d/%d ms=%.1f", w->running, layer, depth,
                    Trace_clock_ms() - w->started_ms);
    if (!done)
        w->traced_reading = layer;
}

static bool after_layer(void *context, int seed_index, int layer, int depth)
{
    Worker *w = context;
    if (w->schedule.seed_start)
        checkpoint(w, CostSchedule_done_at(&w->schedule, seed_index, layer),
                   CostSchedule_next_after(&w->schedule, seed_index, layer));
    double elapsed = Trace_clock_ms() - w->started_ms;
    Trace_event(w->trace, "layer gen=%lu seed=%d layer=%d/%d ms=%.1f", w->running, seed_index + 1,
                layer, depth, elapsed);
    if (superseded(w)) {
        Trace_event(w->trace, "job-cancel gen=%lu seed=%d layer=%d/%d", w->running, seed_index + 1,
                    layer, depth);
        w->cancelled = true;
        return false;
    }
    /* Published after the last layer too: the gradients may follow (seconds at T = 1024
       after `L`), and the new layer's point need not wait for them. */
    Snapshot *s = Snapshot_of(w->result, w->running);
    if (s)
        s->elapsed_ms = elapsed;
    publish(w, s);
    return true;
}

/* Progress of the extras: they publish nothing per layer, they only stop when superseded. */
static bool extra_after_layer(void *context, int seed_index, int layer, int depth)
{
    Worker *w = context;
    (void)seed_index;
    if (superseded(w)) {
        Trace_event(w->trace, "extra-cancel gen=%lu layer=%d/%d", w->running, layer, depth);
        w->cancelled = true;
        return false;
    }
    return true;
}

/* How the worker follows its runs: `after` after each layer, a newer job stops them inside a
   layer too, and the layers' second lane runs on the worker's lane thread. */
static Progress worker_progress(Worker *w, bool (*after)(void *, int, int, int))
{
    return (Progress){.after_layer = after,
                      .context = w,
                      .stop_requested = stop_requested,
                      .run_pair = Lanes_run,
                      .pair_context = w->lanes};
}

/* The settings of conditioning slot 0 (the job's) or 1 (the other initialisation of the pair
   normal | cutting-skip).  The seed count does not matter: the first seed's weights. */
static Config conditioning_config(const Config *job, int slot)
{
    Config c = *job;
    c.seeds = 1;
    c.layer = 1; /* the run keeps every layer's numbers: the shown layer needs no other run */
    if (slot == 1)
        c.init = job->init == INIT_CUTTING_SKIP ? INIT_NORMAL : INIT_CUTTING_SKIP;
    return c;
}

/* Whether the compare network of the job is complete already. */
static bool compare_done(const Worker *w, const Config *job)
{
    Config toggled = Cost_compare_config(job);
    return w->compare_complete && Config_equal(&w->compare_config, &toggled);
}

static bool conditioning_wanted(WorkerExtras extras, int slot)
{
    return slot == 0 ? extras.conditioning : extras.conditioning && extras.conditioning_other;
}

static bool conditioning_done(const Worker *w, const Config *c, int slot)
{
    return w->conditioning_complete[slot] && Config_equal(&w->conditioning_config[slot], c);
}

/* The path the shared rule (conditioning_path.h) takes for c at this thread's rates. */
static bool conditioning_exact(const Worker *w, const Config *c, unsigned long long budget)
{
    return ConditioningPath_exact(w->conditioning_path, c, w->rates, budget);
}

/* The main result as a snapshot, with whatever extras are complete for this job. */
static Snapshot *snapshot_with_extras(Worker *w, const Config *job, WorkerExtras extras,
                                      double elapsed, bool done)
{
    Snapshot *s = Snapshot_of(w->result, w->running);
    if (!s)
        return NULL;
    s->done = done;
    s->elapsed_ms = elapsed;
    if (extras.compare && compare_done(w, job) && !Snapshot_attach_compare(s, w->compare)) {
        Snapshot_free(s);
        return NULL;
    }
    if (extras.sweep && w->sweep_complete && Config_equal(&w->sweep_config, job)) {
        s->has_sweep = true;
        s->sweep = w->sweep;
    }
    for (int slot = 0; slot < 2; slot++) {
        Config c = conditioning_config(job, slot);
        if (!conditioning_wanted(extras, slot))
            continue;
        if (Config_equal(&w->conditioning_config[slot], &c) && w->conditioning_note[slot][0])
            snprintf(s->conditioning_note[slot], SNAPSHOT_ERROR_SIZE, "%s",
                     w->conditioning_note[slot]);
        else if (conditioning_done(w, &c, slot) &&
                 !Snapshot_attach_conditioning(s, slot, &w->conditioning[slot])) {
            Snapshot_free(s);
            return NULL;
        }
    }
    if (done && Config_equal(&w->input_config, job)) {
        snprintf(s->input_note, SNAPSHOT_ERROR_SIZE, "%s", w->input_note);
        if (w->input && !Snapshot_attach_input(s, w->input)) {
            Snapshot_free(s);
            return NULL;
        }
    }
    return s;
}

/* Whether the jobs keep the attention maps whole (--export-matrix), and so make X0 for x. */
static bool full_maps_wanted(Worker *w)
{
    pthread_mutex_lock(&w->lock);
    bool full = w->full_attention_maps;
    pthread_mutex_unlock(&w->lock);
    return full;
}

static bool input_done(const Worker *w, const Config *job)
{
    return w->input && Config_equal(&w->input_config, job);
}

/* Seconds of making X0 for c (Layer_input's declared work). */
static double input_seconds(const Config *c, CostRates rates)
{
    WorkStep step = {0};
    Layer_declare_input(c, &step.serial);
    return Cost_step(&step, rates, COST_ONE_LANE);
}

/* X0 of the job for x's input.csv: the run keeps no X0, and making it again takes about
   0.8 s of a core at T = d = 2048 (bench/README.md), which the screen's thread cannot spend
   (a key answers within 30 ms, issue 4).  Returns false only when stopped: a failure is the
   note. */
static bool make_input(Worker *w, const Config *job)
{
    if (input_done(w, job))
        return true;
    Trace_event(w->trace, "input-start gen=%lu", w->running); /* tests tell made from kept */
    pthread_mutex_lock(&w->lock);
    double total = w->progress.total_s;
    pthread_mutex_unlock(&w->lock);
    checkpoint(w, total - input_seconds(job, w->rates), total);
    free(w->input);
    w->input_config = *job;
    w->input_note[0] = '\0';
    w->input = Export_input(job, w->input_la, w->input_note, sizeof w->input_note);
    if (!w->input && (w->cancelled || superseded(w))) {
        Trace_event(w->trace, "extra-cancel gen=%lu input", w->running);
        w->cancelled = true;
        return false;
    }
    if (!w->input)
        Trace_event(w->trace, "input-failed gen=%lu %s", w->running, w->input_note);
    return true;
}

/* The compare view's network: same weights, gap removal toggled, only up to the shown
   layer (its eigenvalues are what the main run lacks).  Returns false when stopped. */
static bool run_compare(Worker *w, const Config *job, char *err, size_t size)
{
    if (compare_done(w, job))
        return true;
    Config toggled = Cost_compare_config(job);
    w->compare_complete = false;
    Progress progress = worker_progress(w, extra_after_layer);
    Trace_event(w->trace, "compare-start gen=%lu gap=%s", w->running, GAP_NAMES.names[toggled.gap]);
    if (Model_run(&toggled, w->workspace, w->compare, &progress, err, size))
        return false;
    if (w->cancelled || superseded(w))
        return false;
    w->compare_complete = true;
    w->compare_config = toggled;
    return true;
}

static bool run_sweep(Worker *w, const Config *job, char *err, size_t size)
{
    if (w->sweep_complete && Config_equal(&w->sweep_config, job))
        return true;
    w->sweep_complete = false;
    Progress progress = worker_progress(w, extra_after_layer);
    Trace_event(w->trace, "sweep-start gen=%lu layer=%d", w->running, job->layer);
    if (Sweep_width(job, w->workspace, &w->sweep, &progress, err, size))
        return false;
    if (w->cancelled || superseded(w))
        return false;
    w->sweep_complete = true;
    w->sweep_config = *job;
    return true;
}

/* After each layer of a conditioning network: a checkpoint in the job's schedule, and a stop
   when superseded. */
static bool conditioning_after_layer(void *context, int network, int layer, int depth)
{
    Worker *w = context;
    double k = (double)network * depth + layer;
    checkpoint(w, w->conditioning_base_s + k * w->conditioning_layer_s,
               w->conditioning_base_s + (k + 1) * w->conditioning_layer_s);
    Trace_event(w->trace, "conditioning-layer gen=%lu network=%d layer=%d/%d ms=%.1f", w->running,
                network, layer, depth, Trace_clock_ms() - w->started_ms);
    if (superseded(w)) {
        Trace_event(w->trace, "extra-cancel gen=%lu conditioning layer=%d/%d", w->running, layer,
                    depth);
        w->cancelled = true;
        return false;
    }
    return true;
}

/* The conditioning of slot's settings, from done_s seconds of the job's schedule on.
   Returns false only when stopped: a failure (memory, LAPACK) is the slot's note. */
static bool run_conditioning(Worker *w, const Config *job, int slot, double done_s)
{
    Config c = conditioning_config(job, slot);
    if (conditioning_done(w, &c, slot))
        return true;
    pthread_mutex_lock(&w->lock);
    unsigned long long budget = w->memory_budget;
    pthread_mutex_unlock(&w->lock);
    bool exact = conditioning_exact(w, &c, budget);
    Conditioning_release(&w->conditioning[slot]);
    w->conditioning_complete[slot] = false;
    w->conditioning_config[slot] = c;
    w->conditioning_note[slot][0] = '\0';
    size_t need = Conditioning_memory_estimate_path(&c, exact);
    char why[SNAPSHOT_ERROR_SIZE - 64];
    if (!Layer_weights_fit(&c, why, sizeof why)) { /* the other initialisation, --weights */
        snprintf(w->conditioning_note[slot], SNAPSHOT_ERROR_SIZE, "no %s side: %s",
                 INIT_NAMES.names[c.init], why);
        return true;
    }
    if (need > budget) {
        char need_text[BUDGET_BYTES_TEXT_SIZE], budget_text[BUDGET_BYTES_TEXT_SIZE];
        snprintf(w->conditioning_note[slot], SNAPSHOT_ERROR_SIZE,
                 "the conditioning needs %s, above the memory budget of %s",
                 Budget_bytes_text(need, true, need_text),
                 Budget_bytes_text(budget, false, budget_text));
        return true;
    }
    double seconds = Cost_conditioning(&c, w->rates, exact);
    w->conditioning_base_s = done_s;
    w->conditioning_layer_s = seconds / (2.0 * c.depth);
    checkpoint(w, done_s, done_s + w->conditioning_layer_s);
    Trace_event(w->trace, "conditioning-start gen=%lu slot=%d init=%s exact=%d s=%.3f", w->running,
                slot, INIT_NAMES.names[c.init], exact, seconds);
    Progress progress = {
        .after_layer = conditioning_after_layer, .context = w, .stop_requested = stop_requested};
    ConditioningControl control = ConditioningPath_control(w->conditioning_path, exact);
    control.progress = &progress;
    control.isolation = Isolate_linalg();
    char err[SNAPSHOT_ERROR_SIZE];
    int status = Conditioning_run_controlled(&c, &control, &w->conditioning[slot], err, sizeof err);
    if (status == CONDITIONING_STOPPED || w->cancelled || superseded(w)) {
        if (!w->cancelled)
            Trace_event(w->trace, "extra-cancel gen=%lu conditioning inside a layer", w->running);
        w->cancelled = true;
        return false;
    }
    if (status) {
        snprintf(w->conditioning_note[slot], SNAPSHOT_ERROR_SIZE, "%s", err);
        Trace_event(w->trace, "conditioning-failed gen=%lu %s", w->running, err);
        return true;
    }
    w->conditioning_complete[slot] = true;
    Trace_event(w->trace, "conditioning-done gen=%lu slot=%d ms=%.1f", w->running, slot,
                Trace_clock_ms() - w->started_ms);
    return true;
}

/* Seconds of the extras a job asks for, unless they are complete for it (known: the
   thread's record of them may be read). */
static double extras_seconds(const Worker *w, const Config *job, WorkerExtras extras, bool known,
                             unsigned long long budget, bool input)
{
    double seconds = 0;
    if (input && !(known && input_done(w, job)))
        seconds += input_seconds(job, w->rates);
    if (extras.compare && !(known && compare_done(w, job)))
        seconds += Cost_compare(job, w->rates, priced_lanes(w));
    if (extras.sweep && !(known && w->sweep_complete && Config_equal(&w->sweep_config, job)))
        seconds += Cost_width_sweep(job, w->rates, priced_lanes(w));
    for (int slot = 0; slot < 2; slot++) {
        Config c = conditioning_config(job, slot);
        if (conditioning_wanted(extras, slot) && !(known && conditioning_done(w, &c, slot)))
            seconds += Cost_conditioning(&c, w->rates, conditioning_exact(w, &c, budget));
    }
    return seconds;
}

/* The schedule of the job's model run on the workspace as it is now (none when the result
   is reused or memory ran out: progress then has only the extras, or nothing), and the first
   checkpoint of the job's progress. */
static void plan_job(Worker *w, const Config *job, WorkerExtras extras, bool reuse)
{
    CostSchedule_release(&w->schedule);
    ModelPlan_release(&w->plan);
    pthread_mutex_lock(&w->lock);
    unsigned long long budget = w->memory_budget;
    bool input = w->full_attention_maps;
    pthread_mutex_unlock(&w->lock);
    w->extras_s = extras_seconds(w, job, extras, true, budget, input);
    w->extras_before_conditioning_s =
        extras_seconds(w, job, (WorkerExtras){.sweep = extras.sweep, .compare = extras.compare},
                       true, budget, false);
    double run_s = 0, first = 0;
    bool known = reuse;
    if (!reuse && !Model_plan(job, w->workspace, &w->plan) &&
        !CostSchedule_build(&w->schedule, &w->plan, w->rates, priced_lanes(w))) {
        run_s = CostSchedule_total(&w->schedule);
        first = CostSchedule_first_stage(&w->schedule);
        known = true;
    }
    Trace_event(w->trace, "job-estimate gen=%lu s=%.3f", w->running,
                known ? run_s + w->extras_s : NAN);
    pthread_mutex_lock(&w->lock);
    w->progress = (WorkerProgress){.generation = w->running,
                                   .next_s = reuse ? w->extras_s : first,
                                   .total_s = known ? run_s + w->extras_s : NAN,
                                   .started_ms = w->started_ms,
                                   .checkpoint_ms = w->started_ms};
    pthread_mutex_unlock(&w->lock);
}

/* The rates follow the machine: a finished job's measured pace re-rates them (rates.h), so
   that the next estimates, the long-job question and the conditioning's path see the load of
   now, not that of the start. */
static void rerate(Worker *w, double elapsed_s)
{
    pthread_mutex_lock(&w->lock);
    double estimated = w->progress.total_s;
    CostRates before = w->rates;
    w->rates = Rates_rerated(before, estimated, elapsed_s);
    pthread_mutex_unlock(&w->lock);
    if (w->rates.flops_per_second != before.flops_per_second)
        Trace_event(w->trace, "rerate gen=%lu estimated=%.3f elapsed=%.3f factor=%.6f", w->running,
                    estimated, elapsed_s, w->rates.flops_per_second / before.flops_per_second);
}

static void run_job(Worker *w, const Config *job, WorkerExtras extras)
{
    char err[SNAPSHOT_ERROR_SIZE];
    /* The network and its counterpart on a thread each (BLAS stays single-threaded). */
    Progress progress = worker_progress(w, after_layer);
    w->started_ms = Trace_clock_ms();
    w->cancelled = false;
    w->traced_reading = 0;
    bool reuse = w->result_complete && Config_equal(&w->result_config, job);
    plan_job(w, job, extras, reuse);
    Trace_event(w->trace, "job-start gen=%lu T=%d d=%d L=%d layer=%d sweep=%d compare=%d reuse=%d",
                w->running, job->tokens, job->width, job->depth, job->layer, extras.sweep,
                extras.compare, reuse);
    if (!reuse) {
        w->result_complete = false;
        /* What earlier jobs computed is kept within what the job leaves of the budget. */
        pthread_mutex_lock(&w->lock);
        unsigned long long budget = w->memory_budget, need = Model_memory_estimate(job);
        bool full_maps = w->full_attention_maps;
        pthread_mutex_unlock(&w->lock);
        Workspace_full_attention_maps(w->workspace, full_maps);
        Workspace_keep_layers(w->workspace, budget > need ? (size_t)(budget - need) : 0);
        int status = Model_run(job, w->workspace, w->result, &progress, err, sizeof err);
        if (status) {
            Trace_event(w->trace, "job-failed gen=%lu %s", w->running, err);
            publish(w, Snapshot_failure(job, w->running, err));
            return;
        }
        if (w->cancelled || superseded(w)) {
            if (!w->cancelled) /* stopped inside a layer, by stop_requested */
                Trace_event(w->trace, "job-cancel gen=%lu inside layer=%d/%d", w->running,
                            w->result->layers_done + 1, job->depth);
            return;
        }
        w->result_complete = true;
        w->result_config = *job;
    }
    bool extra = extras.sweep || extras.compare || extras.conditioning;
    if (extra) {
        /* The main result first, so the screen has it while the extras compute. */
        double elapsed = Trace_clock_ms() - w->started_ms;
        Snapshot *s = snapshot_with_extras(w, job, extras, elapsed, false);
        publish(w, s);
        double run_s = w->schedule.seed_start ? CostSchedule_total(&w->schedule) : 0;
        checkpoint(w, run_s, run_s + w->extras_s);
        if ((extras.compare && !run_compare(w, job, err, sizeof err)) ||
            (extras.sweep && !run_sweep(w, job, err, sizeof err))) {
            if (w->cancelled || superseded(w))
                return;
            Trace_event(w->trace, "job-failed gen=%lu %s", w->running, err);
            publish(w, Snapshot_failure(job, w->running, err));
            return;
        }
        /* Each conditioning run is published as it completes: the first κ curves need not
           wait for the other initialisation's. */
        double done_s = run_s + w->extras_before_conditioning_s;
        for (int slot = 0; slot < 2; slot++) {
            if (!conditioning_wanted(extras, slot))
                continue;
            Config c = conditioning_config(job, slot);
            bool runs = !conditioning_done(w, &c, slot);
            if (!run_conditioning(w, job, slot, done_s))
                return;
            if (runs) /* as plan_job counted it */
                done_s += Cost_conditioning(&c, w->rates, w->conditioning[slot].jacobian_exact);
            if (slot == 0 && conditioning_wanted(extras, 1))
                publish(w, snapshot_with_extras(w, job, extras, Trace_clock_ms() - w->started_ms,
                                                false));
        }
    }
    if (full_maps_wanted(w) && !make_input(w, job))
        return;
    /* A LAPACK helper or worker that died is said where the job's warnings are. */
    char isolation[256];
    if (Isolate_notice(isolation, sizeof isolation)) {
        Trace_event(w->trace, "isolation %s", isolation);
        Warnings_add(&w->result->warnings, "%s", isolation);
    }
    double elapsed = Trace_clock_ms() - w->started_ms;
    Snapshot *s = snapshot_with_extras(w, job, extras, elapsed, true);
    Trace_event(w->trace, "job-done gen=%lu ms=%.1f", w->running, elapsed);
    rerate(w, elapsed / 1e3);
    publish(w, s ? s : Snapshot_failure(job, w->running, "out of memory copying the result"));
}

static void *worker_main(void *arg)
{
    Worker *w = arg;
    void *crash_stack = Crash_thread_begin();
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->queued && !w->quit)
            pthread_cond_wait(&w->wake, &w->lock);
        if (w->quit)
            break;
        Config job = w->job;
        WorkerExtras extras = w->extras;
        w->running = w->latest;
        w->queued = false;
        w->computing = true;
        pthread_mutex_unlock(&w->lock);
        run_job(w, &job, extras);
        pthread_mutex_lock(&w->lock);
        w->computing = false;
    }
    w->has_stopped = true;
    pthread_cond_broadcast(&w->stopped);
    pthread_mutex_unlock(&w->lock);
    Crash_thread_end(crash_stack);
    return NULL;
}

static void release(Worker *w)
{
    Snapshot_free(w->ready);
    CostSchedule_release(&w->schedule);
    ModelPlan_release(&w->plan);
    Lanes_free(w->lanes);
    Result_free(w->result);
    Result_free(w->compare);
    Conditioning_release(&w->conditioning[0]);
    Conditioning_release(&w->conditioning[1]);
    free(w->input);
    Linalg_free(w->input_la);
    Workspace_free(w->workspace);
    close(w->pipe[0]);
    close(w->pipe[1]);
    pthread_cond_destroy(&w->stopped);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

Worker *Worker_new(Trace *trace)
{
    return Worker_new_with_lanes(trace, true);
}

Worker *Worker_new_with_lanes(Trace *trace, bool two_lanes)
{
    Worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->trace = trace;
    w->two_lanes = two_lanes;
    if (pipe(w->pipe)) {
        free(w);
        return NULL;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(w->pipe[i], F_SETFL, fcntl(w->pipe[i], F_GETFL) | O_NONBLOCK);
        fcntl(w->pipe[i], F_SETFD, FD_CLOEXEC);
    }
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->stopped, &attr);
    pthread_condattr_destroy(&attr);
    w->rates = Rates_measure();
    /* A checkpoint's layers are read as the jobs reach them: the screen says which. */
    if (Layer_weights_in_use())
        Layer_watch_reading(reading, w);
    w->workspace = Workspace_new();
    w->result = Result_new();
    w->compare = Result_new();
    /* A superseded job must give its core back within a second, and the stop request
       (superseded) reaches the products only between their blocks and the LAPACK calls not
       at all: those run in the helper's processes (isolate.c), killed on a stop.  Without
       the helper (not started) they run here, and a stop waits for the call to end. */
    if (w->workspace)
        Workspace_set_isolation(w->workspace, Isolate_linalg());
    w->input_la = Linalg_new();
    if (w->input_la) {
        Linalg_set_isolation(w->input_la, Isolate_linalg());
        Linalg_set_stop(w->input_la, (LinalgStop){.requested = stop_requested, .context = w});
    }
    /* The thread starts with every signal blocked, so the UI thread receives them; its own
       faults still reach the crash handler. */
    sigset_t all, old;
    sigfillset(&all);
    Crash_unblock(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    /* Created here so that the lane thread, too, leaves the signals to the UI thread. */
    w->lanes = two_lanes ? Lanes_new(Crash_thread_begin, Crash_thread_end) : NULL;
    bool started = w->workspace && w->result && w->compare && w->input_la &&
                   (w->lanes || !two_lanes) &&
                   pthread_create(&w->thread, NULL, worker_main, w) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!started) {
        release(w);
        return NULL;
    }
    return w;
}

void Worker_set_memory_budget(Worker *w, unsigned long long bytes)
{
    pthread_mutex_lock(&w->lock);
    w->memory_budget = bytes;
    pthread_mutex_unlock(&w->lock);
}

void Worker_set_conditioning_path(Worker *w, ConditioningPath path)
{
    pthread_mutex_lock(&w->lock);
    w->conditioning_path = path;
    pthread_mutex_unlock(&w->lock);
}

void Worker_set_full_attention_maps(Worker *w, bool full)
{
    pthread_mutex_lock(&w->lock);
    w->full_attention_maps = full;
    pthread_mutex_unlock(&w->lock);
}

int Worker_fd(const Worker *w)
{
    return w->pipe[0];
}

unsigned long Worker_submit(Worker *w, const Config *c)
{
    return Worker_submit_extras(w, c, (WorkerExtras){.sweep = false, .compare = false});
}

unsigned long Worker_submit_extras(Worker *w, const Config *c, WorkerExtras extras)
{
    pthread_mutex_lock(&w->lock);
    unsigned long generation = ++w->latest;
    w->job = *c;
    w->extras = extras;
    w->queued = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    return generation;
}

unsigned long Worker_cancel(Worker *w)
{
    pthread_mutex_lock(&w->lock);
    unsigned long generation = ++w->latest;
    w->queued = false;
    pthread_mutex_unlock(&w->lock);
    return generation;
}

double Worker_estimate(Worker *w, const Config *c, WorkerExtras extras)
{
    pthread_mutex_lock(&w->lock);
    /* An idle thread waits for this lock, so its workspace and its record of finished jobs
       hold still while they are read.  While it computes, they change: the estimate then
       assumes nothing kept, as if the running job had not begun. */
    bool idle = !w->computing && !w->queued;
    double seconds = 0;
    if (!(idle && w->result_complete && Config_equal(&w->result_config, c))) {
        ModelPlan plan;
        CostSchedule schedule;
        seconds = NAN;
        if (!Model_plan(c, idle ? w->workspace : NULL, &plan)) {
            if (!CostSchedule_build(&schedule, &plan, w->rates, priced_lanes(w))) {
                seconds = CostSchedule_total(&schedule);
                CostSchedule_release(&schedule);
            }
            ModelPlan_release(&plan);
        }
    }
    seconds += extras_seconds(w, c, extras, idle, w->memory_budget, w->full_attention_maps);
    pthread_mutex_unlock(&w->lock);
    return seconds;
}

bool Worker_progress(Worker *w, unsigned long generation, WorkerProgress *out)
{
    pthread_mutex_lock(&w->lock);
    bool running = w->computing && w->running == generation && w->progress.generation == generation;
    if (running)
        *out = w->progress;
    pthread_mutex_unlock(&w->lock);
    return running;
}

bool Worker_stopping(Worker *w)
{
    pthread_mutex_lock(&w->lock);
    bool stopping = w->computing && w->running != w->latest;
    pthread_mutex_unlock(&w->lock);
    return stopping;
}

Snapshot *Worker_take(Worker *w, unsigned long generation)
{
    char drain[64];
    while (read(w->pipe[0], drain, sizeof drain) > 0)
        continue;
    pthread_mutex_lock(&w->lock);
    Snapshot *s = w->ready;
    w->ready = NULL;
    pthread_mutex_unlock(&w->lock);
    if (s && s->generation != generation) {
        Snapshot_free(s);
        s = NULL;
    }
    return s;
}

bool Worker_stop(Worker *w, int wait_ms)
{
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += wait_ms / 1000;
    deadline.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->lock);
    w->quit = true;
    pthread_cond_signal(&w->wake);
    int status = 0;
    while (!w->has_stopped && status != ETIMEDOUT)
        status = pthread_cond_timedwait(&w->stopped, &w->lock, &deadline);
    bool stopped = w->has_stopped;
    pthread_mutex_unlock(&w->lock);
    if (!stopped)
        return false;
    pthread_join(w->thread, NULL);
    if (Layer_weights_in_use())
        Layer_watch_reading(NULL, NULL);
    release(w);
    return true;
}
