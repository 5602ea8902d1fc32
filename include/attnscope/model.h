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

#include "attnscope/attention_map.h"
#include "attnscope/config.h"
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/random.h"

#include <stdbool.h>

typedef struct {
    double re, im;
} Complex;

/* The row entropies of one network's attention (entropy.h) against depth, index ℓ = 0..depth
   as the other curves (ℓ = 0, the input, has no attention: NaN), first seed: of the shown
   head's matrix, or the mean over the heads of each head's value. */
typedef struct {
    double *mean, *min, *max, *normalised_mean, *max_weight_mean;
} EntropyCurves;

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
    /* Of A before gap removal; NaN for kinds whose rows are not distributions (a warning
       says so) and past an overflow. */
    EntropyCurves entropy;              /* the shown head's */
    EntropyCurves entropy_head_average; /* each statistic averaged over the heads */
    /* What the stable rank hides (measure.h's TokenGeometry), first seed. */
    double *centred_stable_rank; /* sr of (X − 1x̄ᵀ)(X − 1x̄ᵀ)ᵀ; NaN: tokens equal (0/0) */
    double *energy_off_top;      /* 1 − s_1²/‖X_ℓ‖_F² */
    double *relative_spread;     /* μ(X_ℓ)/‖X_ℓ‖_F */
    double *token_cosine_mean; /* mean cosine over pairs of distinct nonzero tokens */
    double *token_rms;         /* ‖X_ℓ‖_F/√T, the RMS of the rows' norms */
    /* Beside the entropies (docs/model.md §3), first seed: Zhai et al.'s lower bound on the
       shown head's least row entropy, and Giorlandino & Goldt's β_c of the layer's input. */
    double *entropy_zhai_bound;
    double *phase_critical_beta;
    /* The layer's bound on each logit's rounding (Entropy_logit_rounding), the largest of its
       heads'; first seed, NaN where not bounded. */
    double *logit_rounding;
    /* The rows' own bound on the shown head's mean entropy (Entropy_rows_rounding) from that
       δ; NaN where not bounded and where the rows are null for their tokens' round-off.  Each
       row statistic is NaN where its bound is not below its resolution (Entropy_resolved). */
    double *entropy_rounding;
    /* From this layer on (CURVES_NO_LAYER: nowhere) every number of the network is rounding
       alone, NaN, and so are its gradients everywhere, which all take the product A_L⋯A_1
       through it (docs/model.md §2, "Round-off from a layer on"): its tokens entered the
       layer before equal to within round-off and a removed gap sent them to 0, no skip
       carrying them.  First seed. */
    int noise_from;
} Curves;

enum { CURVES_NO_LAYER = -1 };

/* Mean and sample standard deviation over the ensemble (NaN std for one seed), and the sum
   of squared deviations from the mean (M2), which lets results of disjoint seed ranges be
   combined exactly (Chan's formula) where the std alone would lose digits.  Per layer, over
   the seeds that have a stable rank there (count of them): a seed whose tokens are equal to
   within round-off has none (its stable rank is 1 by rule, docs/model.md §6).  lost: the seeds
   whose network overflowed the double range or became exactly 0 at or before the layer; where
   any has, the mean, std and M2 are NaN (the seeds left are not a fair sample: those that
   grew most are gone), the count still what is left. */
typedef struct {
    double *mean;
    double *std;
    double *m2;
    double *count;
    double *lost;
} Band;

/* WARNING_LENGTH holds the longest warning any template makes with its widest numbers and
   names, with room for the prefix a copy adds (tests/cli/warnings_whole.py bound checks
   every template against it). */
enum { WARNINGS_MAX = 16, WARNING_LENGTH = 1280 };

/* What a warning is about, as the screen shows it: a screen names on its status line only the
   warnings about something it shows (a warning about the token-similarity panel says nothing
   while the stable ranks are shown).  A warning may be about several things (a set of these
   bits); the JSON document lists every warning whatever it is about. */
typedef enum {
    WARNING_ABOUT_RUN = 1 << 0,             /* the run as a whole: always relevant */
    WARNING_ABOUT_EIGENVALUES = 1 << 1,     /* the eigenvalues of the shown matrix */
    WARNING_ABOUT_SINGULAR_VALUES = 1 << 2, /* its singular values */
    WARNING_ABOUT_STABLE_RANK = 1 << 3,     /* the stable-rank curves against depth */
    WARNING_ABOUT_SIMILARITY = 1 << 4,      /* the token similarity against depth */
    WARNING_ABOUT_GRADIENTS = 1 << 5,       /* the frozen-attention gradient norms */
    /* The theory drawn over the spectra (σ, the circle and quartercircle laws, the predicted
       outlier) and over the stable ranks (the predicted curves, the width sweep's slope). */
    WARNING_ABOUT_SPECTRA_THEORY = 1 << 6,
    WARNING_ABOUT_STABLE_RANK_THEORY = 1 << 7,
    WARNING_ABOUT_ENTROPY = 1 << 8, /* the attention rows' entropies (no view shows them yet) */
    WARNING_ABOUT_CONDITIONING = 1 << 9, /* the conditioning view's κ and K's singular values */
} WarningSubject;

#define WARNING_ABOUT_SPECTRA (WARNING_ABOUT_EIGENVALUES | WARNING_ABOUT_SINGULAR_VALUES)

typedef struct {
    int count;
    char text[WARNINGS_MAX][WARNING_LENGTH];
    unsigned subject[WARNINGS_MAX]; /* WarningSubject bits */
    /* Warnings that did not fit, repeats among them counted: once there are any, the last
       entry says how many instead of the warning it held (which counts among them). */
    int dropped;
} Warnings;

/* The readouts of docs/model.md §2 for the shown layer, NaN where undefined: 1 − |λ2| and the count
   of |λ| > 0.5 of its eigenvalues (row-stochastic matrices only, where |λ| ≤ 1 gives them a
   scale; 1 − |λ2| within READOUT_ROUNDOFF of 0 is 0), s1/s2 of its singular values (NaN when
   s2 is round-off), and sr(Σ_ℓ) at the shown layer ℓ. */
/* dgeev's eigenvalues of a row-stochastic T×T matrix are good to about T·ε ≤ 1e-12 for
   T ≤ 4096: a spectral gap below that is round-off, and reads 0. */
#define READOUT_ROUNDOFF 1e-12

typedef struct {
    double one_minus_abs_lambda2;
    double s1_over_s2;
    double count_abs_lambda_above_half;
    double stable_rank_shown_layer;
} Readouts;

/* What the stable-rank measures did beside their numbers, counted: each measure fills one
   (Measure_tokens_sharing's route and MeasureSharing's outputs), each kept layer holds its
   own, and the Result sums them, so that a new count is a field here and a line in each of
   the two functions that fill and sum it (src/core/run_lane.c). */
typedef struct {
    /* The stable ranks each route computed, by MeasureRoute (none for MEASURE_ROUTE_NONE):
       shows how often the top-eigenpair route was certified. */
    int routes[MEASURE_ROUTES];
    /* Centred Gram matrices formed where the plan expected the downdate (MeasureSharing's
       centred_formed_unplanned): T²d flops each beyond the declared work (tests/test_cost.c
       adds them). */
    int centred_formed_unplanned;
    /* The flat-spectrum route's Cholesky factorisations (MeasureSharing's flat_proofs), T³/3
       each, and those the plan declared for the same measures (Work_flat_proofs_declared):
       the spectrum decides at run time whether the route runs, so tests/test_cost.c takes
       the declared ones from the plan's and adds the ones made. */
    int flat_proofs;
    int flat_proofs_declared;
    /* The measures the plan declared the deflated route for (Work_deflated_route_declared),
       beside routes[MEASURE_ROUTE_DEFLATED], those that took it: each takes one Gram matrix of
       the smaller side, min(T, d)²·max(T, d) flops, which tests/test_cost.c adds or takes
       away where the numbers chose otherwise. */
    int deflated_declared;
} MeasureCounts;

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
    /* H_i of each row of the shown matrix as built (before gap removal), nats; NaN where
       entropy is undefined (entropy.h) or the spectra are not ready. */
    double *row_entropy;
    bool eigenvalues_exact; /* read off a triangular matrix's diagonal */
    int outlier;            /* index of the eigenvalue that stands apart (Spectra_outlier), -1 */
    Readouts readouts;
    /* The attention map (docs/model.md §2) with the spectra: block means of the shown matrix
       as built (before gap removal), and, with --attention-map product, of the shown head's
       A_ℓ⋯A_1 and its column mass Σ_i (A_ℓ⋯A_1)_ij / T (T values; NaN: not computed). */
    AttentionMap attention_map;
    AttentionMap product_map;
    double *product_column_mass;

    MeasureCounts measure_counts; /* of the seeds assembled, both networks (X0 once a seed) */

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
    /* When set beside run_pair (same pair_context): start_second hands task(1, context) to the
       second thread and returns at once; second_finished says whether it is done, waiting
       for it first when `wait` is set.  Model_run then runs the shown layer's eigenvalues
       (dgeev, the longest call of a run) on the second thread beside the deeper layers,
       whose two networks run in turn on the caller's thread until dgeev ends (or as
       run_claimed says); without them,
       beside the singular values alone, so the spectra come with the shown layer's
       after_layer call (which a screen wants first) and the deeper layers wait for them.
       The values are the same bits either way. */
    void (*start_second)(void *pair_context, void (*task)(int which, void *context), void *context);
    bool (*second_finished)(void *pair_context, bool wait);
    /* When set beside start_second: runs task(0, context) and task(1, context) as run_pair
       does, but each on whichever thread claims it first, the second thread only once the
       task start_second handed it ends.  Model_run then runs the deeper layers' two networks
       (and two layers' query-key work) this way while the eigenvalues run beside, instead of
       in turn on the caller's thread: the second thread takes a step as soon as dgeev ends,
       where it would otherwise idle until the caller's next layer.  A layer's networks are
       two such pairs, their steps and then their tails (frozen products and measures), so
       that a thread freed during the last step takes a tail. */
    void (*run_claimed)(void *pair_context, void (*task)(int which, void *context), void *context);
    /* When set, sees each head's attention matrix as a layer applies it (after gap removal,
       T×T row by row): network 0 (the run's) or 1 (its counterpart), layer from 1, head from
       0.  Model_run calls it for the layers it computes and measures (not those a kept run
       already had, nor those computed again to reach one), from the lanes' threads;
       Conditioning_run_controlled for every layer of both networks.  Both call it from the
       one layer step, so the same settings show the same matrices. */
    void (*attention_applied)(void *context, int network, int layer, int head,
                              const double *applied);
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
/* Keeps the attention maps in full (block 1, T×T) instead of at most ATTENTION_MAP_CELLS
   cells a side, for an export of the whole matrix; for the runs from now on. */
void Workspace_full_attention_maps(Workspace *w, bool full);
/* Bytes of token matrices kept now. */
size_t Workspace_kept_bytes(const Workspace *w);

/* Hands the long LAPACK calls of both lanes (and of the shown layer's eigenvalues, which
   may run beside them) to an isolation hook (see linalg.h), where a
   stop can end them; a zeroed struct runs them here again.  The results are the same bits
   either way.  While a run goes on, its Progress.stop_requested is the lanes' stop hook:
   with isolation a stop is prompt even inside one eigensolver call. */
void Workspace_set_isolation(Workspace *w, LinalgIsolation isolation);

/* Adds the products and long calls both lanes and the shown eigenvalues ran since the last take (or
   since the workspace was made) to *tally, and starts counting again: the tests check the work a
   plan declares against it.  Not while a run goes on (the lanes count unlocked). */
void Workspace_take_tally(Workspace *w, LinalgTally *tally);

/* The numbers the workspace's streams (the weights', X0's and the value chain's) have filled
   from role's streams since it was made (RandomStream_filled): the tests count the draws. */
size_t Workspace_filled(const Workspace *w, Role role);

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
    const char *name; /* CSV column, and the JSON key of an ungrouped series */
    /* NULL, or the JSON object the series is a member of, under the rest of its name (after
       the group's and an underscore): "attention_entropy_mean" is "mean" of
       "attention_entropy".  A group's series are consecutive in the list. */
    const char *group;
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

/* What one seed of a run computes, given what the workspace keeps (see Model_plan). */
typedef struct {
    bool input; /* X0 drawn, orthonormalised and measured */
    /* >= 0: the shown layer's attention is built again from a kept network, after this many
       layers recomputed (unmeasured) from the nearest kept one; -1: not needed. */
    int capture_replay;
    bool input_for_capture; /* that replay starts from X0, drawn and orthonormalised again */
    bool spectra;           /* dgeev and dgesdd of the shown layer */
    /* Per network (the run's network, then its counterpart): the first layer it computes
       (depth + 1: none), and the layers recomputed unmeasured from the nearest kept one to
       reach the layer below it (counted in replay_input when that starts from X0). */
    int first_layer[2];
    int replay[2];
    bool replay_input[2];
    bool gradients;         /* the frozen-attention gradients (first seed) */
    int gradient_replay[2]; /* layers recomputed to reach the last one for them */
    /* The product A_ℓ⋯A_1 (--attention-map product, first seed, with the spectra): one T×T
       product a layer after the first, multiplied as the run's own layers 1..ℓ pass when it
       computes them all, else (product_replay) after the run's network is computed again
       from X0 up to the shown layer. */
    bool product;
    bool product_replay;
} SeedPlan;

/* The work a run of c will do on w: what Model_run computes, seed by seed, read off the
   same kept state with the same rules (a cost model prices it).  The kept state may change
   inside a run (the budget drops token matrices); the plan is what the run starts from. */
typedef struct {
    Config config;
    int seeds;
    SeedPlan *seed; /* [seeds] */
} ModelPlan;

/* Fills plan for a run of c on w (NULL: a fresh workspace, nothing kept).  Returns 0, or -1
   when out of memory.  Must not run while another thread runs Model_run on w. */
int Model_plan(const Config *c, const Workspace *w, ModelPlan *plan);
void ModelPlan_release(ModelPlan *plan);

/* The forward pass alone: X_0 and c's layers 1..depth of the network (gap mode c->gap, first
   lane), no measures, spectra, counterpart or kept layers, for the benchmark of the block's
   products (bench/bench_block.c).  ‖X_depth‖_F into *norm.  Returns 0, -1 when memory ran out,
   or LAPACK's status. */
int Model_forward(const Config *c, Workspace *w, double *norm);

/* Bytes a run of c allocates (the workspace, LAPACK's buffers and the result), so a caller
   can refuse a configuration before it allocates. */
size_t Model_memory_estimate(const Config *c);

/* Whether a run of c keeps the first seed's W^V for its gradients (else the gradient pass
   draws them again, twice): the plan's cost reads it. */
bool Model_value_weights_cached(const Config *c);

/* Why the frozen-attention gradient formula of docs/model.md §2 does not describe c (its
   values are then null), or NULL where it does. */
const char *Model_gradients_unavailable(const Config *c);

/* Whether the first seed's step of `layer` (from 1) forms its frozen product A_ℓ⋯A_1 X0 itself,
   as the first product of its values (LayerStep.mix_tokens_first, which every layer of every
   seed takes where the gradients apply, so that a seed's bits do not depend on its place in
   the run; layer 1's A_1·X0): no product after the step then.  The plan's cost reads it. */
bool Model_frozen_product_in_step(const Config *c, int layer);

/* Adds a warning about the run as a whole, or (_about) about `subject` (WarningSubject bits).
   A text already there is not added twice; it then is about both subjects. */
void Warnings_add(Warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void Warnings_add_about(Warnings *w, unsigned subject, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds every warning of `from` after w's, each about its own subjects, and carries from's
   count of warnings that did not fit: the listed warnings and the count of the rest add up to
   both lists' warnings (the entry that counts from's is not a warning of its own). */
void Warnings_add_all(Warnings *w, const Warnings *from);

/* The ensemble's warning where seeds lack a stable rank at a layer, l = 0..depth, for each
   cause: seeds lost (lost[l] above 0: overflowed or vanished), from which layer the mean is
   null and how many at most; and seeds whose tokens are equal to within round-off (count[l]
   + lost[l] below seeds by more than the first seed's own lack, which its warnings say:
   first[l], its stable rank, NaN where it has none), from which layer and the fewest seeds a
   mean holds.  Writes it into buf and returns its length, or 0 (nothing to say).
   `counterpart`: whose band.  A run and a merge of its seed ranges say the same. */
int Band_warning(const double *count, const double *lost, const double *first, int depth, int seeds,
                 bool counterpart, char *buf, size_t size);

#endif
