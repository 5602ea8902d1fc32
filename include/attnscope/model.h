/* The model of docs/model.md §1 and the quantities of docs/model.md §2.
 *
 * Model_run computes one immutable Result from a Config.  It uses no threads, no terminal
 * and no files; a caller that runs it on a worker thread passes a Progress callback, which
 * is called after every layer and may ask the computation to stop.
 *
 * Undefined numbers (A⊥ = 0, overflow) are NaN in a Result, each explained by a warning;
 * writers turn them into null.
 */
#ifndef ATTNSCOPE_MODEL_H
#define ATTNSCOPE_MODEL_H

#include "attnscope/config.h"
#include "attnscope/measure.h"

#include <stdbool.h>

typedef struct {
    double re, im;
} Complex;

/* Per-layer curves of one network, index ℓ = 0..depth. */
typedef struct {
    double *stable_rank;           /* sr(Σ_ℓ) = Σ s_i(X_ℓ)^4 / s_1(X_ℓ)^4 */
    double *stable_rank_minus_one; /* Σ_{i≥2} (s_i/s_1)^4, computed directly */
    double *log10_norm;            /* log10 ‖X_ℓ‖_F */
    double *token_similarity;      /* μ(X_ℓ)/μ(X_0), μ(X) = ‖X − 1·x̄ᵀ‖_F */
    /* ‖∂X_L/∂W^V_ℓ‖_F² with attention frozen, ℓ = 1..depth (index 0 unused), first seed;
       NaN with skips or LayerNorm (the product formula describes neither) */
    double *gradient_norm;
    double *log10_gradient_norm; /* the same in log10, finite where the value overflows */
} Curves;

/* Mean and sample standard deviation over the ensemble (NaN std for one seed). */
typedef struct {
    double *mean;
    double *std;
} Band;

enum { WARNINGS_MAX = 16, WARNING_LENGTH = 240 };

typedef struct {
    int count;
    char text[WARNINGS_MAX][WARNING_LENGTH];
} Warnings;

/* The readouts of docs/model.md §2 for the shown layer, NaN where undefined: 1 − |λ2| and the count
   of |λ| > 0.5 of its eigenvalues, s1/s2 of its singular values (NaN when s2 is round-off),
   and sr(Σ_ℓ) at the shown layer ℓ. */
typedef struct {
    double one_minus_abs_lambda2;
    double s1_over_s2;
    double count_abs_lambda_above_half;
    double stable_rank_shown_layer;
} Readouts;

typedef struct {
    Config config;       /* as run (after the model's own fallbacks are noted in warnings) */
    Gap counterpart_gap; /* gap mode of the counterpart network */
    double sigma;        /* sqrt(exp(σ_qk⁴) − 1) */
    double logit_std;    /* measured std of the logits at the shown layer (NaN: no logits) */
    int layers_done;     /* < depth when the run was stopped early */

    Curves network;     /* first seed */
    Curves counterpart; /* same weights, gap removal toggled */
    /* Over the first seeds_done seeds: filled after each seed's last layer, so they grow
       while a run goes on (NaN before the first seed is done). */
    int seeds_done;
    Band stable_rank_band;
    Band counterpart_band;

    /* The attention matrix actually applied at the shown layer, first seed (filled as soon
       as that layer is done: spectra_ready). */
    bool spectra_ready;
    Gap shown_gap;           /* gap mode actually applied there (deflate may fall back) */
    int outliers_removed;    /* r of the `outliers` gap mode there, 0 otherwise */
    Complex *eigenvalues;    /* T values, by descending modulus */
    double *singular_values; /* T values, descending (not scaled by √T) */
    bool eigenvalues_exact;  /* read off a triangular matrix's diagonal */
    Readouts readouts;

    /* How many stable ranks each route computed (all seeds, both networks), by MeasureRoute:
       shows how often the top-eigenpair route was certified. */
    int measure_routes[MEASURE_ROUTES];

    Warnings warnings;
} Result;

/* How a caller follows and steers a run.  after_layer is called after each layer of each
   seed; returning false stops the run (the Result then holds what was finished, layers_done
   tells how much).  run_pair, when set, must call task(0, context) and task(1, context) at
   the same time (on two threads) and return when both are done: the two networks of a
   layer are independent, so a caller with a spare core halves the time.  The caller then
   keeps BLAS single-threaded, so the threads do not fight.  The core starts no thread. */
typedef struct {
    bool (*after_layer)(void *context, int seed_index, int layer, int depth);
    void *context;
    /* Polled inside a layer too (between its products, before the shown layer's spectra),
       from both lanes' threads, so it must be thread-safe: true stops the run at once and
       the unfinished layer is left out.  Large layers take seconds; this keeps a stop
       prompt. */
    bool (*stop_requested)(void *context);
    void (*run_pair)(void *pair_context, void (*task)(int which, void *context), void *context);
    void *pair_context;
} Progress;

typedef struct Workspace Workspace;

/* Buffers for runs up to T tokens and width d; reused between runs to avoid allocation. */
Workspace *Workspace_new(void);
void Workspace_free(Workspace *w);

/* Lets the workspace keep what its runs computed, so that a later run for settings with the
   same weights (any depth, shown layer, gap mode or seed count) computes only what is
   missing: every layer's numbers, the spectra of the last shown layers, the gradients, and
   token matrices up to budget_bytes (beyond it, evenly spaced layers, from which the others
   are computed again).  0 (the default) keeps nothing: every run starts from scratch.  The
   result is bit for bit the same either way. */
void Workspace_keep_layers(Workspace *w, size_t budget_bytes);
/* While paused, runs keep nothing and leave what is kept as it is (the width sweep runs
   other sizes on the screen's workspace).  Returns the previous state. */
bool Workspace_pause_keeping(Workspace *w, bool paused);
/* Bytes of token matrices kept now. */
size_t Workspace_kept_bytes(const Workspace *w);

/* Stable ranks from all eigenvalues of the Gram matrix, never from its top eigenpair alone:
   the reference the tests and the benchmark compare the top-eigenpair route with. */
void Workspace_measure_all_eigenvalues(Workspace *w, bool all);

Result *Result_new(void);
void Result_free(Result *r);
/* A deep copy (NULL when out of memory): an immutable result a screen can read while the
   worker goes on writing into its own. */
Result *Result_copy(const Result *r);

/* The per-layer series of a Result: the one list that the JSON document, layers.csv and the
   screen's export read, so that every writer has the same columns under the same names. */
typedef struct {
    const char *name; /* JSON key and CSV column */
    const char *unit; /* what a value is, for docs and the CSV header */
    /* The gradients exist for ℓ = 1..L only: JSON lists those, CSV leaves layer 0 empty. */
    bool from_layer_one;
    const double *(*values)(const Result *r); /* depth + 1 values, NaN where undefined */
} ResultSeries;

extern const ResultSeries RESULT_SERIES[];
extern const int RESULT_SERIES_COUNT;

/* Runs the configuration (which must pass Config_validate).  Returns 0, or -1 when memory
   ran out or a LAPACK call failed (message in err).  The result is filled even when a
   run is stopped by `progress`; after_layer is called for the layers computed, not for
   those a kept run already had. */
int Model_run(const Config *c, Workspace *w, Result *out, const Progress *progress, char *err,
              size_t size);

/* The forward pass alone: X_0 and c's layers 1..depth of the network (gap mode c->gap, first
   lane), no measures, spectra, counterpart or kept layers, for the benchmark of the block's
   products (bench/bench_block.c).  ‖X_depth‖_F into *norm.  Returns 0, -1 when memory ran out,
   or LAPACK's status. */
int Model_forward(const Config *c, Workspace *w, double *norm);

/* Bytes a run of c allocates (the workspace, LAPACK's buffers and the result), so a caller
   can refuse a configuration before it allocates. */
size_t Model_memory_estimate(const Config *c);

/* Why the frozen-attention gradient formula of docs/model.md §2 does not describe c (its
   values are then null), or NULL where it does. */
const char *Model_gradients_unavailable(const Config *c);

void Warnings_add(Warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
