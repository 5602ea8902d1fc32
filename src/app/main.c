/* attnscope: the spectra of transformer attention at initialisation. */
#include "attnscope/conditioning.h"
#include "attnscope/cost.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "batch.h"
#include "blas_buffers.h"
#include "compute.h"
#include "conditioning_path.h"
#include "export.h"
#include "grid.h"
#include "jsonl.h"
#include "isolate.h"
#include "lanes.h"
#include "rates.h"
#include "merge.h"
#include "options.h"
#include "presets.h"
#include "tui.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* --softmax-demo: κ(softmax(αZ + βI)) over --seeds draws at n = T, printed alone. */
static int softmax_demo(const Options *o, Text *doc)
{
    const Config *c = &o->config;
    double *kappa = malloc(sizeof(double) * (size_t)c->seeds);
    if (!kappa) {
        fprintf(stderr, "attnscope: out of memory\n");
        return 1;
    }
    int status = 1;
    if (SoftmaxDemo_run(c->tokens, c->init_alpha, c->init_beta, c->seed, c->seeds, kappa)) {
        fprintf(stderr, "attnscope: --softmax-demo at n = %d: an SVD failed or memory ran out\n",
                c->tokens);
        goto done;
    }
    Batch_softmax_demo(c, kappa, c->seeds, doc);
    if (doc->failed) {
        fprintf(stderr, "attnscope: out of memory writing the JSON document\n");
        goto done;
    }
    if (fwrite(doc->data, 1, doc->length, stdout) != doc->length || fflush(stdout) != 0) {
        perror("attnscope: stdout");
        goto done;
    }
    status = 0;
done:
    free(kappa);
    return status;
}

static double monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* The cost model's estimate of the computation about to run (a fresh workspace, the lanes
   batch uses, the conditioning on its path), in seconds. */
static double estimate_seconds(const Options *o, CostRates rates, bool two_lanes,
                               bool conditioning_exact)
{
    double seconds = Cost_fresh_run(&o->config, rates, two_lanes);
    if (o->sweep_tokens)
        seconds += Cost_width_sweep(&o->config, rates, two_lanes);
    if (o->conditioning)
        seconds += Cost_conditioning(&o->config, rates, conditioning_exact);
    return seconds;
}

/* "266 days", "3.2 h", "41 min", "12 s": an estimate as a reader weighs it. */
static void duration(double seconds, char *out, size_t size)
{
    if (seconds >= 2 * 86400)
        snprintf(out, size, "%.3g days", seconds / 86400);
    else if (seconds >= 2 * 3600)
        snprintf(out, size, "%.2g h", seconds / 3600);
    else if (seconds >= 120)
        snprintf(out, size, "%.0f min", seconds / 60);
    else
        snprintf(out, size, "%.3g s", seconds);
}

/* --conditioning's path, chosen by the rule the screen uses (conditioning_path.h) at rates:
   0, or 2 with a message on stderr when the path's memory is above the budget.  Its time
   joins the estimate that check_estimate bounds, the one rule for every batch job. */
static int choose_conditioning_path(const Options *o, CostRates rates, bool *exact)
{
    const Config *c = &o->config;
    /* Memory is not part of the choice here: a budget that the exact path needs and the
       user did not give is refused, as it always was, rather than answered with an
       estimate of another kind. */
    *exact = ConditioningPath_exact((ConditioningPath)o->conditioning_path, c, rates, ULLONG_MAX);
    unsigned long long need = Conditioning_memory_estimate_path(c, *exact),
                       budget = Options_memory_budget(o);
    if (need > budget) {
        fprintf(stderr,
                "attnscope: --conditioning at T = %d, d = %d needs about %llu MiB (the Jacobian "
                "or the Lanczos basis), above the memory budget of %llu MiB (--max-memory)\n",
                c->tokens, c->width, (need + (1ull << 20) - 1) >> 20, budget >> 20);
        return 2;
    }
    if (o->conditioning_path == CONDITIONING_PATH_AUTO && !*exact &&
        Conditioning_exact(c, &(ConditioningControl){0}))
        fprintf(stderr,
                "attnscope: --conditioning: building K (%d x %d) is priced at %.3g s here, above "
                "%g s: kappa(K) is estimated by Lanczos instead (--conditioning-path exact "
                "builds it)\n",
                c->tokens * c->width, c->tokens * c->width, Cost_conditioning(c, rates, true),
                CONDITIONING_PATH_EXACT_SECONDS);
    return 0;
}

/* The estimate, when --verbose asks for it or it may pass the bound on compute time batch
   starts without asking (--max-time, BATCH_MAX_SECONDS by default; --no-confirm lifts it),
   at *rates, measured here where the caller had no need of them (NULL).  Measuring (~0.1 s)
   is skipped when even a machine 100 times slower than the reference, the slowest the
   calibration admits, would stay under the bound.  Returns 0 (the estimate, or NaN when not
   made, in *seconds), or 2 with the refusal said. */
static int check_estimate(const Options *o, const CostRates *rates, bool two_lanes,
                          bool conditioning_exact, double *seconds)
{
    double bound = o->max_time > 0 ? o->max_time : BATCH_MAX_SECONDS;
    bool bounded = !o->no_confirm;
    *seconds = NAN;
    CostRates reference = Cost_reference_rates();
    if (!rates && !o->verbose &&
        (!bounded || 100 * estimate_seconds(o, reference, two_lanes, conditioning_exact) <= bound))
        return 0;
    CostRates measured = rates ? *rates : Rates_measure();
    *seconds = estimate_seconds(o, measured, two_lanes, conditioning_exact);
    if (o->verbose)
        fprintf(stderr,
                "attnscope: estimate %.3g s for T = %d, d = %d, depth %d, %d seed%s%s%s (dgemm at "
                "%.1f GFLOP/s per core, %s)\n",
                *seconds, o->config.tokens, o->config.width, o->config.depth, o->config.seeds,
                o->config.seeds == 1 ? "" : "s", o->sweep_tokens ? ", width sweep" : "",
                !o->conditioning     ? ""
                : conditioning_exact ? ", conditioning (exact)"
                                     : ", conditioning (Lanczos)",
                measured.flops_per_second / 1e9, two_lanes ? "two lanes" : "one lane");
    if (!bounded || *seconds <= bound)
        return 0;
    char took[32], most[32];
    duration(*seconds, took, sizeof took);
    duration(bound, most, sizeof most);
    fprintf(stderr,
            "attnscope: T = %d, d = %d, depth %d, %d seed%s is estimated at %s (%.3g s), above "
            "%s (%s): to go ahead, give --max-time %.0f or more, or --no-confirm\n",
            o->config.tokens, o->config.width, o->config.depth, o->config.seeds,
            o->config.seeds == 1 ? "" : "s", took, *seconds, most,
            o->max_time > 0 ? "--max-time" : "the bound without --max-time", ceil(*seconds));
    return 2;
}

/* What batch refuses before it computes, each said: --conditioning above the memory budget
   or, on the automatic path, above an hour (choose_conditioning_path, which also sets
   *conditioning_exact), an --export target that can never work, an estimate above
   --max-time.  0 (with the estimate, or NaN), or 2. */
static int refused_before_computing(const Options *o, bool two_lanes, bool *conditioning_exact,
                                    double *estimate)
{
    CostRates rates = {0};
    bool measured = o->verbose || o->conditioning;
    if (measured)
        rates = Rates_measure();
    *conditioning_exact = false;
    if (o->conditioning && choose_conditioning_path(o, rates, conditioning_exact))
        return 2;
    char err[OPTIONS_ERROR_SIZE];
    if (o->export_dir && Export_check(o->export_dir, err, sizeof err)) {
        fprintf(stderr, "attnscope: --export '%s': %s\n", o->export_dir, err);
        return 2;
    }
    return check_estimate(o, measured ? &rates : NULL, two_lanes, *conditioning_exact, estimate);
}

/* Reserves OpenBLAS's buffers for `callers` threads, or says why not. */
static bool blas_buffers_reserved(int callers)
{
    if (BlasBuffers_reserve(callers) == 0)
        return true;
    fprintf(stderr,
            "attnscope: out of memory: the address-space limit (ulimit -v) leaves no room for "
            "OpenBLAS's buffers, %zu MiB for each of %d\n",
            BLAS_BUFFER_BYTES >> 20, callers);
    return false;
}

/* OpenBLAS starts its thread pool as it loads, each pool thread taking a buffer of 128 MiB;
   under an address-space limit a thread that cannot have one retries for ever, and shutting
   the pool down (Linalg_set_blas_threads) waits for it.  The pool's size is read from the
   environment at load, so under a limit the program runs itself again with the pool off:
   batch's lanes and the screen use one BLAS thread each anyway.  A user's
   OPENBLAS_NUM_THREADS is left as it is.  ATTNSCOPE_NO_BLAS_POOL marks the second run. */
static void restart_without_blas_pool(char **argv)
{
    struct rlimit limit;
    const char *threads = getenv("OPENBLAS_NUM_THREADS");
    if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
        (threads && *threads))
        return;
    if (setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0 &&
        setenv("ATTNSCOPE_NO_BLAS_POOL", "1", 1) == 0)
        execv("/proc/self/exe", argv);
    /* Not restarted: go on with the pool (it spins only where its buffers do not fit). */
    unsetenv("OPENBLAS_NUM_THREADS");
    unsetenv("ATTNSCOPE_NO_BLAS_POOL");
}

/* Batch runs one computation on the main thread: OpenBLAS may use both cores (issue 4
   measures the choice per size). */
static int run_batch(const Options *o)
{
    char err[OPTIONS_ERROR_SIZE];
    Workspace *w = Workspace_new();
    if (w && o->export_matrix)
        Workspace_full_attention_maps(w, true);
    Result *r = Result_new();
    Text doc = {0};
    Conditioning conditioning = {0};
    Lanes *lanes = NULL;
    int status = 1;
    /* A reader that stops early (| head) ends us by SIGPIPE, quietly, as it ends cat and
       grep: the shell sees 141, pipefail reports it.  Set here because a parent that ignores
       SIGPIPE would turn it into a write error and a "Broken pipe" message instead. */
    signal(SIGPIPE, SIG_DFL);
    if (!w || !r) {
        fprintf(stderr, "attnscope: out of memory\n");
        goto done;
    }
    /* Two cores: the network and its counterpart run on a thread each, with single-threaded
       BLAS, unless the user set OPENBLAS_NUM_THREADS (then one lane at a time). */
    const char *blas_threads = getenv("OPENBLAS_NUM_THREADS");
    bool parallel = !blas_threads || !*blas_threads || getenv("ATTNSCOPE_NO_BLAS_POOL");
    if (parallel)
        Linalg_set_blas_threads(1);
    /* Two lanes need two of OpenBLAS's buffers; where only one fits, one lane at a time. */
    if (parallel && BlasBuffers_reserve(2) != 0)
        parallel = false;
    if (!parallel && !blas_buffers_reserved(1))
        goto done;
    if (parallel)
        lanes = Lanes_new(NULL, NULL);
    Progress two_lanes = {.run_pair = Lanes_run, .pair_context = lanes};
    if (o->jsonl) {
        status = Jsonl_run(o, parallel ? &two_lanes : NULL, w, r, stdin, stdout);
        goto done;
    }
    WidthSweep sweep;
    if (o->softmax_demo) {
        status = softmax_demo(o, &doc);
        goto done;
    }
    double estimate;
    bool exact;
    if ((status = refused_before_computing(o, parallel, &exact, &estimate)))
        goto done;
    status = 1;
    double started = monotonic_seconds();
    if (Compute_batch(&o->config, o->sweep_tokens, parallel ? &two_lanes : NULL, w, r, &sweep, err,
                      sizeof err)) {
        fprintf(stderr, "attnscope: %s\n", err);
        goto done;
    }
    if (o->conditioning &&
        Conditioning_run_controlled(&o->config, &(ConditioningControl){.lanczos_only = !exact},
                                    &conditioning, err, sizeof err)) {
        fprintf(stderr, "attnscope: %s\n", err);
        goto done;
    }
    if (o->verbose)
        fprintf(stderr, "attnscope: computed in %.3g s (estimate %.3g s)\n",
                monotonic_seconds() - started, estimate);
    Batch_document(r, o->sweep_tokens ? &sweep : NULL, o->conditioning ? &conditioning : NULL,
                   &doc);
    if (doc.failed) {
        fprintf(stderr, "attnscope: out of memory writing the JSON document\n");
        goto done;
    }
    if (o->export_dir) {
        int files = Export_write(r, o->conditioning ? &conditioning : NULL, o->export_matrix,
                                 o->export_dir, err, sizeof err);
        if (files < 0) {
            fprintf(stderr, "attnscope: --export '%s': %s\n", o->export_dir, err);
            goto done;
        }
        fprintf(stderr, "attnscope: wrote %d files to %s\n", files, o->export_dir);
    }
    if (fwrite(doc.data, 1, doc.length, stdout) != doc.length || fflush(stdout) != 0) {
        perror("attnscope: stdout");
        goto done;
    }
    status = 0;
done:
    Conditioning_release(&conditioning);
    Lanes_free(lanes);
    Text_free(&doc);
    Result_free(r);
    Workspace_free(w);
    return status;
}

/* $ATTNSCOPE_TOUR when set, else the shipped presets' tour. */
static const char *tour_directory(const char *presets, char *buf, size_t size)
{
    const char *env = getenv("ATTNSCOPE_TOUR");
    if (env && env[0])
        return env;
    int n = presets ? snprintf(buf, size, "%s/tour", presets) : -1;
    return n > 0 && (size_t)n < size ? buf : NULL;
}

int main(int argc, char **argv)
{
    /* A LAPACK helper started again after the first one died (isolate.h). */
    if (argc == 3 && strcmp(argv[1], ISOLATE_HELPER_OPTION) == 0)
        Isolate_serve(atoi(argv[2]));
    restart_without_blas_pool(argv);
    /* The subcommands print JSON Lines for a pipe: a reader that stops early ends them
       quietly too (see run_batch). */
    if (argc > 1 && strcmp(argv[1], "grid") == 0) {
        signal(SIGPIPE, SIG_DFL);
        return Grid_main(argc - 1, argv + 1, stdout);
    }
    if (argc > 1 && strcmp(argv[1], "merge") == 0) {
        signal(SIGPIPE, SIG_DFL);
        return Merge_main(argc - 1, argv + 1, stdout);
    }
    Options o;
    char err[OPTIONS_ERROR_SIZE];
    if (Options_parse(argc, argv, &o, err, sizeof err)) {
        fprintf(stderr, "attnscope: %s\n", err);
        return 2;
    }
    if (o.help || o.version) {
        if (o.help)
            Options_usage(stdout);
        else
            printf("attnscope %s\n", ATTNSCOPE_VERSION);
        return Options_flush_stdout();
    }
    if (Options_check_memory(&o, &o.config, err, sizeof err) ||
        Rates_check_environment(err, sizeof err)) {
        fprintf(stderr, "attnscope: %s\n", err);
        return 2;
    }
    if (o.batch)
        return run_batch(&o);
    /* The screen's long LAPACK calls run in processes a stop can kill (isolate.h).  Their
       helper is forked here, before the screen starts its threads: a fork copies only the
       calling thread, and a lock another thread held would stay locked in the copy.
       OpenBLAS's pool, started when the library loaded, is shut down by OpenBLAS's own fork
       handler first.  Without the helper the calls run in process: slower to stop, the
       same results. */
    /* The worker and its lane call BLAS, one thread each; the helper's calls, forked from
       here, find the buffers reserved too. */
    Linalg_set_blas_threads(1);
    if (!blas_buffers_reserved(2))
        return 1;
    Isolate_start();
    Isolate_restart_with("/proc/self/exe");
    char tour[PATH_MAX + 8], shipped[PATH_MAX];
    const char *presets = Presets_shipped_directory(shipped, sizeof shipped);
    TuiSettings tui = {.config = o.config,
                       .ascii = o.ascii,
                       .no_color = o.no_color,
                       .no_confirm = o.no_confirm,
                       .conditioning_path = o.conditioning_path,
                       .export_matrix = o.export_matrix,
                       .present = o.present,
                       .trace_path = o.trace_path,
                       .memory_budget = Options_memory_budget(&o),
                       .tour_dir = tour_directory(presets, tour, sizeof tour),
                       .presets_dir = presets,
                       .load_preset = Options_load_preset,
                       .format_preset = Options_write_preset};
    return Tui_run(&tui);
}
