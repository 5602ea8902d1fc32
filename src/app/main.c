/* attnscope: the spectra of transformer attention at initialisation. */
#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "batch.h"
#include "compute.h"
#include "export.h"
#include "lanes.h"
#include "options.h"
#include "presets.h"
#include "tui.h"

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Batch runs one computation on the main thread: OpenBLAS may use both cores (issue 4
   measures the choice per size). */
static int run_batch(const Options *o)
{
    char err[OPTIONS_ERROR_SIZE];
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    Text doc = {0};
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
    WidthSweep sweep;
    if (Compute_batch(&o->config, o->sweep_tokens, parallel ? &two_lanes : NULL, w, r, &sweep, err,
                      sizeof err)) {
        fprintf(stderr, "attnscope: %s\n", err);
        goto done;
    }
    Batch_document(r, o->sweep_tokens ? &sweep : NULL, &doc);
    if (doc.failed) {
        fprintf(stderr, "attnscope: out of memory writing the JSON document\n");
        goto done;
    }
    if (o->export_dir) {
        int files = Export_write(r, o->export_dir, err, sizeof err);
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
    if (Options_check_memory(&o, &o.config, err, sizeof err)) {
        fprintf(stderr, "attnscope: %s\n", err);
        return 2;
    }
    if (o.batch)
        return run_batch(&o);
    char tour[PATH_MAX + 8], shipped[PATH_MAX];
    const char *presets = Presets_shipped_directory(shipped, sizeof shipped);
    TuiSettings tui = {.config = o.config,
                       .ascii = o.ascii,
                       .no_color = o.no_color,
                       .present = o.present,
                       .trace_path = o.trace_path,
                       .memory_budget = Options_memory_budget(&o),
                       .tour_dir = tour_directory(presets, tour, sizeof tour),
                       .presets_dir = presets,
                       .load_preset = Options_load_preset,
                       .format_preset = Options_write_preset};
    return Tui_run(&tui);
}
