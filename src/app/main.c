/* attnscope: the spectra of transformer attention at initialisation. */
#include "attnscope/conditioning.h"
#include "attnscope/cost.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "batch.h"
#include "conditioning_path.h"
#include "compute.h"
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

/* --verbose: the cost model's estimate of the computation about to run (a fresh workspace,
   the lanes batch uses, the conditioning on its path), on stderr.  Returns the seconds, NaN
   when out of memory. */
static double print_estimate(const Options *o, CostRates rates, bool two_lanes,
                             bool conditioning_exact)
{
    double seconds = Cost_fresh_run(&o->config, rates, two_lanes);
    if (o->sweep_tokens)
        seconds += Cost_width_sweep(&o->config, rates, two_lanes);
    if (o->conditioning)
        seconds += Cost_conditioning(&o->config, rates, conditioning_exact);
    fprintf(stderr,
            "attnscope: estimate %.3g s for T = %d, d = %d, depth %d, %d seed%s%s%s (dgemm at "
            "%.1f GFLOP/s per core, %s)\n",
            seconds, o->config.tokens, o->config.width, o->config.depth, o->config.seeds,
            o->config.seeds == 1 ? "" : "s", o->sweep_tokens ? ", width sweep" : "",
            !o->conditioning     ? ""
            : conditioning_exact ? ", conditioning (exact)"
                                 : ", conditioning (Lanczos)",
            rates.flops_per_second / 1e9, two_lanes ? "two lanes" : "one lane");
    return seconds;
}

/* Above this estimate --conditioning on the automatic path refuses to start. */
#define CONDITIONING_REFUSE_SECONDS 3600.0

/* --conditioning's path, chosen by the rule the screen uses (conditioning_path.h) at rates:
   0, or 2 with a message on stderr when the path's memory is above the budget or, on the
   automatic path, its estimate is above an hour. */
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
    if (o->conditioning_path != CONDITIONING_PATH_AUTO)
        return 0;
    double seconds = Cost_conditioning(c, rates, *exact);
    if (!*exact && Conditioning_exact(c, &(ConditioningControl){0}))
        fprintf(stderr,
                "attnscope: --conditioning: building K (%d x %d) is priced at %.3g s here, above "
                "%g s: kappa(K) is estimated by Lanczos instead (--conditioning-path exact "
                "builds it)\n",
                c->tokens * c->width, c->tokens * c->width, Cost_conditioning(c, rates, true),
                CONDITIONING_PATH_EXACT_SECONDS);
    if (seconds > CONDITIONING_REFUSE_SECONDS) {
        fprintf(stderr,
                "attnscope: --conditioning at T = %d, d = %d, depth %d is estimated at %.1f h "
                "(%s path, dgemm at %.1f GFLOP/s per core): refused; --conditioning-path %s "
                "runs it anyway\n",
                c->tokens, c->width, c->depth, seconds / 3600, *exact ? "exact" : "Lanczos",
                rates.flops_per_second / 1e9, *exact ? "exact" : "lanczos");
        return 2;
    }
    return 0;
}

/* Batch runs one computation on the main thread: OpenBLAS may use both cores (issue 4
   measures the choice per size). */
static int run_batch(const Options *o)
{
    char err[OPTIONS_ERROR_SIZE];
    Workspace *w = Workspace_new();
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
    bool parallel = !blas_threads || !*blas_threads;
    if (parallel) {
        Linalg_set_blas_threads(1);
        lanes = Lanes_new(NULL, NULL);
    }
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
    CostRates rates = {0};
    if (o->verbose || o->conditioning)
        rates = Rates_measure();
    bool exact = false;
    if (o->conditioning && choose_conditioning_path(o, rates, &exact)) {
        status = 2;
        goto done;
    }
    double estimate = o->verbose ? print_estimate(o, rates, parallel, exact) : NAN;
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
        int files =
            Export_write(r, o->conditioning ? &conditioning : NULL, o->export_dir, err, sizeof err);
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
    if (o.help) {
        Options_usage(stdout);
        return 0;
    }
    if (o.version) {
        printf("attnscope %s\n", ATTNSCOPE_VERSION);
        return 0;
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
    Isolate_start();
    char tour[PATH_MAX + 8], shipped[PATH_MAX];
    const char *presets = Presets_shipped_directory(shipped, sizeof shipped);
    TuiSettings tui = {.config = o.config,
                       .ascii = o.ascii,
                       .no_color = o.no_color,
                       .no_confirm = o.no_confirm,
                       .conditioning_path = o.conditioning_path,
                       .present = o.present,
                       .trace_path = o.trace_path,
                       .memory_budget = Options_memory_budget(&o),
                       .tour_dir = tour_directory(presets, tour, sizeof tour),
                       .presets_dir = presets,
                       .load_preset = Options_load_preset,
                       .format_preset = Options_write_preset};
    return Tui_run(&tui);
}
