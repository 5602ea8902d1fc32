/* attnscope: the spectra of transformer attention at initialisation. */
#include "attnscope/budget.h"
#include "attnscope/conditioning.h"
#include "attnscope/cost.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "batch.h"
#include "blas_buffers.h"
#include "compute.h"
#include "conditioning_fit.h"
#include "conditioning_path.h"
#include "duration.h"
#include "export.h"
#include "grid.h"
#include "jsonl.h"
#include "isolate.h"
#include "lanes.h"
#include "memory_limits.h"
#include "rates.h"
#include "merge.h"
#include "options.h"
#include "token_ids.h"
#include "weights.h"
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
#include <sys/stat.h>
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
    return Compute_estimate_seconds(&o->config, o->sweep_tokens, o->conditioning,
                                    conditioning_exact, rates, two_lanes);
}

/* --conditioning's path, chosen by the rule the screen uses (conditioning_path.h) at rates:
   0, or 2 with a message on stderr when the path's memory is above the budget.  Its time
   joins the estimate that check_estimate bounds, the one rule for every batch job. */
/* Whether --conditioning of c takes the exact path on o's --conditioning-path at rates.
   Memory is not part of the choice: a budget that the exact path needs and the user did not
   give is refused, as it always was, rather than answered with an estimate of another kind. */
static bool conditioning_path_exact(const Options *o, const Config *c, CostRates rates)
{
    return ConditioningPath_exact((ConditioningPath)o->conditioning_path, c, rates, ULLONG_MAX);
}

static int choose_conditioning_path(const Options *o, CostRates rates, bool *exact)
{
    const Config *c = &o->config;
    /* A path pinned to K built in full is never run without it: above the size where K is
       built, refused rather than answered matrix-free. */
    if (o->conditioning_path == CONDITIONING_PATH_EXACT &&
        !Conditioning_exact(c, &(ConditioningControl){0})) {
        fprintf(stderr,
                "attnscope: --conditioning-path exact: K is built only up to T*d = %d, and T = "
                "%d, d = %d gives T*d = %lld: give a smaller T or d, or --conditioning-path "
                "auto|lanczos|kron\n",
                CONDITIONING_EXACT_MAX, c->tokens, c->width, (long long)c->tokens * c->width);
        return 2;
    }
    *exact = conditioning_path_exact(o, c, rates);
    /* The network and the conditioning are each held to the budget; one refusal names both,
       so that a budget raised to the larger passes (main leaves the network's check here). */
    unsigned long long conditioning = Conditioning_memory_estimate_path(c, *exact),
                       network = Model_memory_estimate(c),
                       need = conditioning > network ? conditioning : network,
                       budget = Options_memory_budget(o);
    if (need > budget) {
        char source[MEMORY_SOURCE_SIZE], need_text[BUDGET_BYTES_TEXT_SIZE],
            network_text[BUDGET_BYTES_TEXT_SIZE], conditioning_text[BUDGET_BYTES_TEXT_SIZE],
            budget_text[BUDGET_BYTES_TEXT_SIZE];
        Options_memory_budget_source(o, source, sizeof source);
        fprintf(stderr,
                "attnscope: --conditioning at T = %d, d = %d, depth %d needs about %s (the "
                "network %s; the Jacobian or the Lanczos basis %s), above the memory budget of "
                "%s (%s)\n",
                c->tokens, c->width, c->depth, Budget_bytes_text(need, true, need_text),
                Budget_bytes_text(network, true, network_text),
                Budget_bytes_text(conditioning, true, conditioning_text),
                Budget_bytes_text(budget, false, budget_text), source);
        return 2;
    }
    if (o->conditioning_path == CONDITIONING_PATH_AUTO && !*exact &&
        Conditioning_exact(c, &(ConditioningControl){0}))
        fprintf(stderr,
                "attnscope: --conditioning: building K (%d x %d) is priced at %.3g s here, above "
                "%g s: kappa(K) is estimated without K instead (the Kronecker path, Lanczos "
                "where it cannot run; --conditioning-path exact builds it)\n",
                c->tokens * c->width, c->tokens * c->width, Cost_conditioning(c, rates, true),
                CONDITIONING_PATH_EXACT_SECONDS);
    return 0;
}

/* What a candidate of the fitting-size search is priced with: batch's options and rates. */
typedef struct {
    const Options *options;
    CostRates rates;
    bool two_lanes;
} BatchPricing;

/* A --conditioning run of c as batch would estimate it when started with the same options
   at c's size: on the path --conditioning-path takes there, infinite where its memory would
   be refused (ConditioningFit_search's price; the settings' rules the search checks itself). */
static double batch_conditioning_seconds(const Config *c, void *context)
{
    const BatchPricing *p = context;
    Options candidate = *p->options;
    candidate.config = *c;
    bool exact = conditioning_path_exact(&candidate, c, p->rates);
    char err[OPTIONS_ERROR_SIZE];
    /* a size that --conditioning-path exact would refuse (choose_conditioning_path) */
    bool pinned_beyond = p->options->conditioning_path == CONDITIONING_PATH_EXACT && !exact;
    if (pinned_beyond ||
        Conditioning_memory_estimate_path(c, exact) > Options_memory_budget(&candidate) ||
        Options_check_memory(&candidate, c, err, sizeof err))
        return INFINITY;
    return estimate_seconds(&candidate, p->rates, p->two_lanes, exact);
}

/* What --verbose's estimate says of --conditioning: its path and, on the matrix-free one
   where s_min(K) is not priced at every layer, how much more it may take where layers seek
   it (Cost_conditioning_unpriced), since which layers do only the run knows. */
static void describe_conditioning(const Options *o, bool exact, CostRates rates, char *out,
                                  size_t size)
{
    if (!o->conditioning) {
        out[0] = '\0';
        return;
    }
    double unpriced = exact ? 0.0 : Cost_conditioning_unpriced(&o->config, rates);
    if (exact)
        snprintf(out, size, ", conditioning (exact)");
    else if (!(unpriced > 0))
        snprintf(out, size, ", conditioning (Lanczos)");
    else
        snprintf(out, size,
                 ", conditioning (Lanczos; up to %.3g s more where kappa(K) < 1e4 makes a layer "
                 "seek s_min, which only the run knows)",
                 unpriced);
}

/* The conditioning refusal's second line: the size that fits within bound (most, as shown) on
   the path that size would take, and what a layer costs there; or that no size does. */
static void refusal_fit(const Options *o, const BatchPricing *pricing, double bound,
                        const char *most)
{
    char fits[240], within[96];
    if (Rates_margin() > 1)
        snprintf(within, sizeof within, "%s (its estimate ×%d within it, as above)", most,
                 RATES_SPREAD);
    else
        snprintf(within, sizeof within, "%s", most);
    Config fit;
    bool found = ConditioningFit_search(&o->config, bound / Rates_margin(),
                                        batch_conditioning_seconds, (void *)pricing, &fit);
    ConditioningFit_phrase(found ? &fit : NULL, within, fits, sizeof fits);
    if (!found) {
        fprintf(stderr, "attnscope: %s\n", fits);
        return;
    }
    /* "fits" is the time alone: deep or wide settings can be beyond double precision at
       every size (kappa(K) null at each layer), which only the run shows. */
    const char *time_only = "the time alone: whether kappa(K) is certified there, only the run "
                            "shows";
    Options candidate = *o;
    candidate.config = fit;
    if (conditioning_path_exact(&candidate, &fit, pricing->rates)) {
        fprintf(stderr,
                "attnscope: %s: there K is built in full (T*d = %d products with K per layer of "
                "both networks, then its extremes; %s)\n",
                fits, fit.tokens * fit.width, time_only);
        return;
    }
    fprintf(stderr,
            "attnscope: %s: each layer of both networks takes %s products with K, of "
            "H(2Td^2 + 8T^2 d) flops each (%s)\n",
            fits,
            Cost_conditioning_seeks_s_min(&fit)
                ? "a few hundred (s_min sought)"
                : "about fifty (the lower bound on kappa; a few hundred where kappa(K) < 1e4 "
                  "makes a layer seek s_min, which only the run knows)",
            time_only);
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
    if (o->verbose) {
        char conditioning[160] = "";
        describe_conditioning(o, conditioning_exact, measured, conditioning, sizeof conditioning);
        fprintf(stderr,
                "attnscope: estimate %.3g s for T = %d, d = %d, depth %d, %d seed%s%s%s (dgemm at "
                "%.1f GFLOP/s per core, %s)\n",
                *seconds, o->config.tokens, o->config.width, o->config.depth, o->config.seeds,
                o->config.seeds == 1 ? "" : "s", o->sweep_tokens ? ", width sweep" : "",
                conditioning, measured.flops_per_second / 1e9,
                two_lanes ? "two lanes" : "one lane");
    }
    if (!bounded || *seconds <= bound)
        return 0;
    char took[80], most[32], suggested[200];
    Duration_text_seconds(*seconds, took, sizeof took);
    Rates_suggest_bound(*seconds, suggested, sizeof suggested);
    Duration_text(bound, DURATION_PLAIN, most, sizeof most);
    /* Priced to seek s_min at every layer, the matrix-free conditioning's price is a ceiling
       (Cost_conditioning_seeks_s_min): said as one. */
    bool ceiling =
        o->conditioning && !conditioning_exact && Cost_conditioning_seeks_s_min(&o->config);
    fprintf(stderr,
            "attnscope: T = %d, d = %d, depth %d, %d seed%s is estimated at %s%s, above %s "
            "(%s): to go ahead, give --max-time %s\n",
            o->config.tokens, o->config.width, o->config.depth, o->config.seeds,
            o->config.seeds == 1 ? "" : "s", ceiling ? "up to " : "", took, most,
            o->max_time > 0 ? "--max-time" : "the bound without --max-time", suggested);
    /* The size suggested is held to the margin the bound suggested above keeps, so that the
       next start, measuring the rate anew, accepts it as it accepts that bound. */
    BatchPricing pricing = {.options = o, .rates = measured, .two_lanes = two_lanes};
    if (o->conditioning)
        refusal_fit(o, &pricing, bound, most);
    return 2;
}

/* --export-weights' target, refused before anything is written (Weights_export_check): 0,
   or 2 with the refusal said. */
static int weights_target_refused(const Options *o, const Checkpoint *checkpoint)
{
    char err[OPTIONS_ERROR_SIZE];
    if (!o->export_weights_dir ||
        !Weights_export_check(o->export_weights_dir, checkpoint, err, sizeof err))
        return 0;
    fprintf(stderr, "attnscope: --export-weights '%s': %s\n", o->export_weights_dir, err);
    return 2;
}

/* --export-weights: the weights (drawn or read) written, once every refusal of the command
   has been made (refused_before_computing, weights_target_refused).  0 (nothing asked, or
   written), or 1: what fails now (a full disk) fails at run time, as --export's writes do,
   and Weights_export leaves no directory of its making. */
static int export_weights(const Options *o, const Checkpoint *checkpoint)
{
    char err[OPTIONS_ERROR_SIZE];
    if (!o->export_weights_dir)
        return 0;
    long long bytes = Weights_export(
        &o->config, checkpoint, o->hf_config.file[0] ? &o->hf_config : NULL, o->export_weights_dir,
        (SafetensorsDtype)o->export_dtype, stderr, err, sizeof err);
    if (bytes < 0) {
        fprintf(stderr, "attnscope: --export-weights '%s': %s\n", o->export_weights_dir, err);
        return 1;
    }
    fprintf(stderr, "attnscope: wrote %s/model.safetensors (%lld bytes) and config.json\n",
            o->export_weights_dir, bytes);
    return 0;
}

/* Whether --export and --export-weights write one into the other, said: --export's directory
   is replaced as a whole, so the weights may not lie within it; the weights are written first,
   so an --export within their directory would fail after they were (or take a file's name). */
static bool exports_overlap(const Options *o)
{
    if (Export_holds(o->export_dir, o->export_weights_dir)) {
        fprintf(stderr,
                "attnscope: --export-weights '%s': it is --export '%s' or lies within it, which "
                "the export replaces as a whole: accepted a directory outside --export's\n",
                o->export_weights_dir, o->export_dir);
        return true;
    }
    if (Export_holds(o->export_weights_dir, o->export_dir)) {
        fprintf(stderr,
                "attnscope: --export '%s': it lies within --export-weights '%s', which the "
                "weights are written into first: accepted a directory outside --export-weights'\n",
                o->export_dir, o->export_weights_dir);
        return true;
    }
    return false;
}

/* What batch refuses before it writes or computes anything, each said: --conditioning above
   the memory budget or, on the automatic path, above an hour (choose_conditioning_path, which
   also sets *conditioning_exact), an --export or --export-weights target that can never work,
   --export and --export-weights one within the other (exports_overlap), an estimate above
   --max-time.  0 (with the estimate, or NaN), or 2. */
static int refused_before_computing(const Options *o, const Checkpoint *checkpoint, bool two_lanes,
                                    bool *conditioning_exact, double *estimate)
{
    if (o->verbose)
        Options_say_memory_budget(o, stderr);
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
    if (weights_target_refused(o, checkpoint))
        return 2;
    if (o->export_dir && o->export_weights_dir && exports_overlap(o))
        return 2;
    return check_estimate(o, measured ? &rates : NULL, two_lanes, *conditioning_exact, estimate);
}

/* Reserves OpenBLAS's buffers for `callers` threads, or says why not. */
static bool blas_buffers_reserved(int callers)
{
    if (BlasBuffers_reserve(callers) == 0)
        return true;
    struct rlimit limit;
    getrlimit(RLIMIT_AS, &limit);
    unsigned long long mapped = MemoryLimits_mapped_bytes(),
                       holds = mapped + BLAS_BUFFER_BYTES * (unsigned long long)callers;
    fprintf(stderr,
            "attnscope: out of memory: the address-space limit (ulimit -v %llu) leaves no room "
            "for OpenBLAS's buffers, %zu MiB for each of %d thread%s calling BLAS, beside the "
            "%llu MiB mapped; ulimit -v %llu would hold %s (more for the run itself)\n",
            (unsigned long long)limit.rlim_cur >> 10, BLAS_BUFFER_BYTES >> 20, callers,
            callers == 1 ? "" : "s", mapped >> 20, (holds + 1023) >> 10,
            callers == 1 ? "it" : "them");
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

/* Batch's lanes.  Two cores: the network and its counterpart run on a thread each, with
   single-threaded BLAS, unless the user set OPENBLAS_NUM_THREADS (then one lane at a time).
   Two lanes need two of OpenBLAS's buffers; where only one fits, one lane at a time.  False
   (said on stderr) where not even one fits. */
static bool batch_lanes(bool *parallel)
{
    const char *blas_threads = getenv("OPENBLAS_NUM_THREADS");
    *parallel = !blas_threads || !*blas_threads || getenv("ATTNSCOPE_NO_BLAS_POOL");
    if (*parallel)
        Linalg_set_blas_threads(1);
    if (*parallel && BlasBuffers_reserve(2) != 0)
        *parallel = false;
    return *parallel || blas_buffers_reserved(1);
}

/* Whether path exists (a link followed), as the export's target is looked at. */
static bool exists_now(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The batch document of r (with the sweep and the conditioning where asked) on stdout, and
   the exported files where asked: 0, or 1 (said on stderr).  export_new: --export's directory
   did not exist when it was checked, before the run; one there now is another's (a second
   export racing to the same new directory), never replaced as an earlier export is. */
static int batch_write(const Options *o, const Checkpoint *checkpoint, const Result *r,
                       const WidthSweep *sweep, const Conditioning *conditioning, bool export_new,
                       Text *doc)
{
    char err[OPTIONS_ERROR_SIZE];
    /* Its identity was taken before the run: a file changed since gave numbers of unknown
       contents, which no document describes. */
    if (checkpoint && Checkpoint_unchanged(checkpoint, err, sizeof err)) {
        fprintf(stderr, "attnscope: --weights %s; no document written\n", err);
        return 1;
    }
    Batch_document(r, sweep, conditioning, o->hf_config.file[0] ? &o->hf_config : NULL,
                   checkpoint ? Checkpoint_identity(checkpoint) : NULL, doc);
    if (doc->failed) {
        fprintf(stderr, "attnscope: out of memory writing the JSON document\n");
        return 1;
    }
    if (o->export_dir && export_new && exists_now(o->export_dir)) {
        fprintf(stderr,
                "attnscope: --export '%s': the directory appeared while the run computed "
                "(another export into it?): left as it is, the new files not written\n",
                o->export_dir);
        return 1;
    }
    if (o->export_dir) {
        char why[OPTIONS_ERROR_SIZE / 2];
        double *input = o->export_matrix ? Export_input(&r->config, NULL, why, sizeof why) : NULL;
        ExportExtras extras = {.conditioning = conditioning, .sweep = sweep, .input = input};
        char left_out[OPTIONS_ERROR_SIZE];
        Export_result_views(r, &extras, left_out, sizeof left_out);
        int files = -1;
        if (o->export_matrix && !input)
            snprintf(err, sizeof err, "writing input.csv failed: %s", why);
        else
            files = Export_write(r, &extras, o->export_dir, err, sizeof err);
        free(input);
        if (files < 0) {
            fprintf(stderr, "attnscope: --export '%s': %s\n", o->export_dir, err);
            return 1;
        }
        fprintf(stderr, "attnscope: wrote %d files to %s%s%s\n", files, o->export_dir,
                left_out[0] ? "; left out: " : "", left_out);
    }
    if (fwrite(doc->data, 1, doc->length, stdout) != doc->length || fflush(stdout) != 0) {
        perror("attnscope: stdout");
        return 1;
    }
    return 0;
}

static void workspace_free_task(int which, void *workspace)
{
    (void)which;
    Workspace_free(workspace);
}

/* Batch runs one computation on the main thread: OpenBLAS may use both cores (issue 4
   measures the choice per size). */
static int run_batch(const Options *o, Checkpoint *checkpoint)
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
    bool parallel;
    if (!batch_lanes(&parallel))
        goto done;
    if (parallel)
        lanes = Lanes_new(NULL, NULL);
    /* The shown layer's eigenvalues run beside the deeper layers, whose networks the lane
       thread claims once they end: nothing shows the spectra before the document is
       written. */
    Progress two_lanes = {.run_pair = Lanes_run,
                          .start_second = Lanes_start,
                          .second_finished = Lanes_finished,
                          .run_claimed = Lanes_run_claimed,
                          .pair_context = lanes};
    /* The demo may fail: the weights' target is checked first, and the weights are written
       only once the demo has run, so that a failed command has written nothing (--jsonl takes
       no --export-weights: each line describes its own model). */
    if (o->jsonl || o->softmax_demo) {
        if (!(status = weights_target_refused(o, checkpoint)) &&
            !(status = o->jsonl ? Jsonl_run(o, parallel ? &two_lanes : NULL, w, r, stdin, stdout)
                                : softmax_demo(o, &doc)))
            status = export_weights(o, checkpoint);
        goto done;
    }
    WidthSweep sweep;
    double estimate;
    bool exact;
    if ((status = refused_before_computing(o, checkpoint, parallel, &exact, &estimate)) ||
        (status = export_weights(o, checkpoint)))
        goto done;
    if (checkpoint && Checkpoint_take_identity(checkpoint, err, sizeof err)) {
        fprintf(stderr, "attnscope: --weights %s\n", err);
        status = 1;
        goto done;
    }
    bool export_new = o->export_dir && !exists_now(o->export_dir);
    status = 1;
    double started = monotonic_seconds();
    if (Compute_batch(&o->config, o->sweep_tokens, parallel ? &two_lanes : NULL, w, r, &sweep, err,
                      sizeof err)) {
        fprintf(stderr, "attnscope: %s\n", err);
        goto done;
    }
    Options_warn_inert(o, &o->config, &r->warnings);
    ConditioningControl control =
        ConditioningPath_control((ConditioningPath)o->conditioning_path, exact);
    control.shown_spectrum_only = true;
    if (o->conditioning &&
        Conditioning_run_controlled(&o->config, &control, &conditioning, err, sizeof err)) {
        fprintf(stderr, "attnscope: %s\n", err);
        goto done;
    }
    if (o->verbose)
        fprintf(stderr, "attnscope: computed in %.3g s (estimate %.3g s)\n",
                monotonic_seconds() - started, estimate);
    /* The document reads the result alone: the workspace's buffers (their unmapping takes
       ~5 ms at T = 512) are freed on the lane thread while it is formatted and written. */
    if (lanes) {
        Lanes_start(lanes, workspace_free_task, w);
        w = NULL;
    }
    status = batch_write(o, checkpoint, r, o->sweep_tokens ? &sweep : NULL,
                         o->conditioning ? &conditioning : NULL, export_new, &doc);
    if (lanes)
        Lanes_finished(lanes, true);
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

/* --batch --verbose with --weights: each layer the checkpoint is read for, once (the layer
   step fills a layer's weights in parts); context: the layer said last. */
static void say_reading(void *context, int layer, int depth, bool done)
{
    int *said = context;
    if (done || layer == *said)
        return;
    *said = layer;
    fprintf(stderr, "attnscope: reading layer %d/%d\n", layer, depth);
}

/* --token-ids: the file's ids become the input's, and their count T (a -T that says another
   is refused), at which --hf-config's sliding window is judged again.  0, or 2 with the
   message in err. */
static int read_token_ids(Options *o, TokenIds *ids, char *err, size_t size)
{
    char why[1024];
    if (!o->token_ids_path)
        return 0;
    if (TokenIds_read(o->token_ids_path, ids, why, sizeof why)) {
        snprintf(err, size, "--token-ids: %s", why);
        return 2;
    }
    if (Options_given(o, "tokens") && o->config.tokens != ids->count) {
        snprintf(err, size, "--token-ids '%s' holds %d ids, but -T/--tokens says %d",
                 o->token_ids_path, ids->count, o->config.tokens);
        return 2;
    }
    o->config.tokens = ids->count;
    if (HfConfig_judge_tokens(&o->hf_config, &o->config, err, size) ||
        Config_validate(&o->config, err, size))
        return 2;
    Layer_use_token_ids(ids->ids, ids->lines, ids->count, o->token_ids_path);
    return 0;
}

/* The embedding input's table: the checkpoint's where it has one (its rows V and its learned
   positions then fix --vocab and --positions: one given otherwise is refused, naming both),
   the drawn one otherwise; with neither a table nor --input nor --token-ids, the orthonormal
   rows as ever.  Then the ids against V, and everything the weights fix (Layer_weights_fit).
   0, or 2 with the message in err. */
static int settle_input(Options *o, const Checkpoint *k, const TokenIds *ids, char *err,
                        size_t size)
{
    Config *c = &o->config;
    int vocab = k ? Checkpoint_vocab(k) : 0;
    const char *table = vocab ? Checkpoint_source(k)->table : "--vocab, the drawn table's rows";
    if (k && !vocab && !ids->ids && !Options_given(o, "input"))
        c->input = INPUT_ORTHONORMAL;
    if (vocab && Options_given(o, "vocab") && c->vocab != vocab) {
        snprintf(err, size, "--vocab %d: the checkpoint's embedding table %s has V = %d rows",
                 c->vocab, table, vocab);
        return 2;
    }
    Positions positions = k && Checkpoint_has_positions(k) ? POSITIONS_LEARNED : POSITIONS_NONE;
    if (vocab && Options_given(o, "positions") && c->positions != positions) {
        snprintf(err, size, "--positions %s: the checkpoint %s (%s)",
                 POSITIONS_NAMES.names[c->positions],
                 positions ? "adds its learned positions" : "has no learned positions", table);
        return 2;
    }
    if (vocab) {
        c->vocab = vocab;
        c->positions = positions;
    }
    char why[1024];
    if (ids->ids &&
        TokenIds_check_vocab(ids, o->token_ids_path, c->vocab, table, why, sizeof why)) {
        snprintf(err, size, "--token-ids: %s", why);
        return 2;
    }
    /* --jsonl takes no checkpoint and no ids; its lines check their own combinations. */
    if (!o->jsonl && Config_validate(c, err, size))
        return 2;
    if (!Layer_weights_fit(c, why, sizeof why)) {
        snprintf(err, size, "--weights '%s': %s", o->weights_path, why);
        return 2;
    }
    return 0;
}

/* --seeds above 1 with a checkpoint: what the seeds still vary, said, since the weights are
   the checkpoint's whatever the seed (where the input is fixed too, Layer_weights_fit has
   refused the seeds). */
static void warn_seeds_vary_input(const Config *c)
{
    char input[256];
    if (!Layer_input_source(c, input, sizeof input))
        snprintf(input, sizeof input, "the %s input", INPUT_NAMES.names[c->input]);
    fprintf(stderr,
            "attnscope: warning: --seeds %d with --weights: every seed runs the checkpoint's "
            "weights, so the seeds vary the input alone (%s)\n",
            c->seeds, input);
}

/* --weights: the checkpoint opened for o's settings becomes the layers' weight source, and
   its table the input's.  0 (*checkpoint open or NULL), or 2 when either fails. */
static int use_weights(Options *o, Checkpoint **checkpoint, const TokenIds *ids)
{
    char err[OPTIONS_ERROR_SIZE];
    if (o->weights_path) {
        SettingOrigins origins = {Options_describe_origin, Options_chosen, o,
                                  o->hf_config.model_type};
        *checkpoint =
            Checkpoint_open(o->weights_path, &o->config, &origins, stderr, err, sizeof err);
        if (!*checkpoint) {
            /* err names the file it is about (the given path, or a shard or config.json in it). */
            fprintf(stderr, "attnscope: --weights %s\n", err);
            return 2;
        }
        o->config.norm_gain_offset = Checkpoint_norm_gain_offset(*checkpoint); /* its family's */
        Layer_use_weights(Checkpoint_source(*checkpoint));
        static int said;
        if (o->batch && o->verbose)
            Layer_watch_reading(say_reading, &said);
    }
    if (settle_input(o, *checkpoint, ids, err, sizeof err)) {
        fprintf(stderr, "attnscope: %s\n", err);
        return 2;
    }
    if (*checkpoint && o->config.seeds > 1)
        warn_seeds_vary_input(&o->config);
    return 0;
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
    HfConfig_warn(&o.hf_config, stderr);
    Options_warn_dropped(&o, stderr);
    if (o.help || o.version) {
        if (o.help)
            Options_usage(stdout);
        else
            printf("attnscope %s\n", ATTNSCOPE_VERSION);
        return Options_flush_stdout();
    }
    TokenIds ids = {0};
    /* --jsonl's lines check their own memory: the command line's settings are their base;
       --conditioning's check names the network's need beside its own (choose_conditioning_path). */
    if (read_token_ids(&o, &ids, err, sizeof err) ||
        (!o.jsonl && !o.conditioning && Options_check_memory(&o, &o.config, err, sizeof err)) ||
        Rates_check_environment(err, sizeof err)) {
        fprintf(stderr, "attnscope: %s\n", err);
        TokenIds_free(&ids);
        return 2;
    }
    Checkpoint *checkpoint = NULL;
    int status = use_weights(&o, &checkpoint, &ids);
    bool screen = status == 0 && !o.batch && !o.export_weights_dir;
    if (status == 0 && o.batch)
        status = run_batch(&o, checkpoint);
    else if (status == 0 && o.export_weights_dir &&
             !(status = weights_target_refused(&o, checkpoint)))
        status = export_weights(&o, checkpoint);
    if (!screen) {
        Checkpoint_close(checkpoint);
        TokenIds_free(&ids);
        return status;
    }
    /* The screen's long LAPACK calls run in processes a stop can kill (isolate.h).  Their
       helper is forked here, before the screen starts its threads: a fork copies only the
       calling thread, and a lock another thread held would stay locked in the copy.
       OpenBLAS's pool, started when the library loaded, is shut down by OpenBLAS's own fork
       handler first.  Without the helper the calls run in process: slower to stop, the
       same results. */
    /* The worker and its lane call BLAS, one thread each; the helper's calls, forked from
       here, find the buffers reserved too. */
    Linalg_set_blas_threads(1);
    /* Where two of OpenBLAS's buffers do not fit, one lane at a time, as batch runs. */
    bool one_lane = BlasBuffers_reserve(2) != 0;
    if (one_lane && !blas_buffers_reserved(1))
        return 1;
    if (one_lane)
        fprintf(stderr,
                "attnscope: %s: the address-space limit leaves room for one of OpenBLAS's "
                "buffers (%zu MiB), not two, so the network and its counterpart run in turn "
                "(slower)\n",
                TUI_ONE_LANE_NOTE, BLAS_BUFFER_BYTES >> 20);
    Isolate_start();
    Isolate_restart_with("/proc/self/exe");
    char tour[PATH_MAX + 8], shipped[PATH_MAX];
    const char *presets = Presets_shipped_directory(shipped, sizeof shipped);
    char budget_source[MEMORY_SOURCE_SIZE];
    Options_memory_budget_source(&o, budget_source, sizeof budget_source);
    TuiSettings tui = {.config = o.config,
                       .ascii = o.ascii,
                       .no_color = o.no_color,
                       .no_confirm = o.no_confirm,
                       .conditioning_path = o.conditioning_path,
                       .export_matrix = o.export_matrix,
                       .present = o.present,
                       .trace_path = o.trace_path,
                       .memory_budget = Options_memory_budget(&o),
                       .memory_budget_source = budget_source,
                       .one_lane = one_lane,
                       .tour_dir = tour_directory(presets, tour, sizeof tour),
                       .start_preset = o.preset_path[0] ? o.preset_path : NULL,
                       .presets_dir = presets,
                       .load_preset = Options_load_preset,
                       .format_preset = Options_write_preset,
                       .hf_config = o.hf_config.file[0] ? &o.hf_config : NULL};
    status = Tui_run(&tui);
    Checkpoint_close(checkpoint);
    TokenIds_free(&ids);
    return status;
}
