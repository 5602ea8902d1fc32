/* What the files of Model_run share inside the core (not part of its interface): the
 * workspace and its lanes, what is kept between runs, and the run in progress.
 *
 *   layer.c       one layer (include/attnscope/layer.h), which every driver below follows
 *   workspace.c   the buffers of a run: their one list, allocation, the memory estimate
 *   run.c         Model_run: seeds, the two lanes, the layer loop, replays of kept layers
 *   run_lane.c    one network's layer on its lane, the run's watches on it, its numbers
 *   run_qk.c      a layer's query-key work (M_h and ‖M_h‖₂), drawn ahead and done beside
 *   shown_layer.c the shown layer's attention matrix, captured or computed again, and its spectra
 *   gradients.c   the frozen-attention gradients and the value weights kept for them
 *   assemble.c    the Result, written from what is kept: curves, bands, readouts, warnings
 *   model.c       what is kept between runs (tracks, spectra, the sameness of weights) and
 *                 the plan of a run read off it
 */
#ifndef ATTNSCOPE_MODEL_INTERNAL_H
#define ATTNSCOPE_MODEL_INTERNAL_H

#include "attnscope/entropy.h"
#include "attnscope/layer.h"
#include "attnscope/measure.h"
#include "attnscope/model.h"
#include "attnscope/random.h"
#include "attnscope/theory.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { NETWORK_MAIN, NETWORK_COUNTERPART, NETWORKS };

/* The state of one network after a layer, apart from its token matrices. */
typedef struct {
    double log_scale; /* X_ℓ = exp(log_scale) · x (input-independent kinds are rescaled) */
    double log_similarity0;
    double log_frozen; /* A_ℓ⋯A_1 X0 = exp(log_frozen) · frozen */
    /* log10 ‖A_ℓ X_{ℓ−1}‖_F² of the layer (first seed, where the gradients apply: the step's
       first product, LayerStep.mix_tokens_first), P1 of ℓ = L at depth L = ℓ; NaN from the
       input until a layer writes it.  A layer whose attention overflows writes none: the
       field keeps the layer below's value, stale but unread, as the network is then dead and
       its gradient NaN (gradients.c). */
    double log10_mixed2;
    bool similarity_lost; /* its token similarity became round-off (warned once) */
    bool mean_dominates;  /* its stable rank read collapsed beside a spread (warned once) */
    bool rank_one_lost;   /* its tokens became one direction within round-off (warned once) */
    bool dead;            /* overflowed or vanished: later layers are undefined */
    bool overflowed;      /* dead of an overflow (else, where dead, it vanished) */
    int death_warning;    /* where dead: 1 + the index of the warning saying why among its
                             layer's warnings, 0 where it did not fit */
} Network;

/* One head's row entropies, and ‖M_h‖₂ of its logits' matrix M_h = scale·W^Q_h W^K_gᵀ
   (shared by the networks: their weights are the same) for Zhai et al.'s bound, NaN where it
   does not hold. */
typedef struct {
    EntropyRows rows;
    double qk_norm;
    double logit_rounding; /* Entropy_logit_rounding of its logits, NaN: not bounded */
    EntropyRows rounding;  /* each of rows' fields' bound from it (Entropy_rows_rounding) */
} HeadEntropy;

/* What the entropy bounds read of a layer's attention input X' (X, or LN(X) under pre-LN):
   ‖X'‖₂² (NaN where Zhai et al.'s bound does not hold), the tokens' mean squared norm q and
   q − p, p their mean pairwise overlap (Giorlandino & Goldt's), kept as the spread per pair
   because q − p formed from q and p cancels where the tokens merge, and the largest squared
   norm of a token; NaN where not measured. */
typedef struct {
    double norm_squared, second_moment, moment_gap;
    double row_norm_max_squared; /* max_i ‖x'_i‖², what the logits' rounding grows with */
} AttentionInput;

/* One layer of a kept network: its numbers, the warnings it raised, and (while the budget
   allows) its token matrices, from which the next layer or this layer's successor's
   attention can be computed again. */
typedef struct {
    double stable_rank, stable_rank_minus_one, log10_norm, token_similarity;
    MeasureCounts counts;   /* what its measure did: its route, work beyond the plan */
    TokenGeometry geometry; /* what the stable rank hides */
    Network net;            /* after the layer */
    Warnings *warnings;     /* NULL: none */
    double *x, *frozen;     /* T×d each, or NULL when not kept */
    /* Each head's row entropies, of its attention before gap removal (the shown head may
       change without the layer being computed again); NULL where entropy is undefined or
       the layer overflowed. */
    HeadEntropy *entropy;
    AttentionInput input; /* measured with the entropies */
} LayerState;

/* One network (a seed and a gap mode) for the current weights: layers 0..layers.  A first
   seed's track carries more (the frozen products, the similarity warning) than the same
   seed's track in an ensemble, so the role is part of its name. */
typedef struct {
    uint64_t seed;
    Gap gap;
    bool first;
    int layers;
    int capacity;      /* of state[] and the gradient arrays, in layers after layer 0 */
    LayerState *state; /* [capacity + 1] */
    /* Frozen-attention gradients at depth gradient_depth (0: none), first seed only. */
    int gradient_depth;
    double *gradient_norm, *log10_gradient_norm; /* [capacity + 1] */
} Track;

/* The spectra of one shown matrix, for the settings in key (the weights are the kept ones';
   the seed is the first seed of the run that captured it). */
typedef struct {
    Config key;
    /* Its eigenvalues are still being computed beside the run's layers: not found, not read
       (shown_spectra_join ends that). */
    bool pending;
    Gap applied;
    int outliers_removed;
    bool exact;
    double logit_std;
    Complex *eigenvalues;
    double *singular_values;
    double *row_entropy; /* H_i of the matrix as built, NaN where entropy is undefined */
    Warnings warnings;
    AttentionMap map;            /* of the shown matrix as built */
    AttentionMap product_map;    /* of A_ℓ⋯A_1 (attention_map product; empty: not computed) */
    double *product_column_mass; /* T values, or NULL */
} KeptSpectra;

enum { KEPT_SPECTRA_MAX = 8 };

/* What earlier runs computed for the current weights: every network's track and the last
   shown matrices' spectra. */
typedef struct {
    bool valid;
    Config key; /* the settings that decide the weights (see same_weights) */
    int track_count, track_capacity;
    Track **tracks;
    int spectra_count;
    KeptSpectra spectra[KEPT_SPECTRA_MAX]; /* oldest first */
    size_t bytes;                          /* of token matrices held */
} Kept;

/* A lane's status when Progress.stop_requested asked it to stop, whether polled here or by
   the lane's Linalg inside a long call (LAPACK's statuses are >= -1). */
enum { LANE_STOPPED = LINALG_STOPPED };

/* The buffers one network uses for itself: its layer step's, and the run's own. */
typedef struct {
    LayerBuffers step; /* x is X_ℓ (normalised for input-independent kinds, see log_scale) */
    double *frozen;    /* T×d: A_ℓ⋯A_1 X0 for the gradients (normalised) */
    double *lanczos;   /* Measure_tokens_scratch_size(T, d) */
    Warnings warnings; /* merged into the result after each layer, main lane first */
} Lane;

/* The buffers of workspace_plan: a lane's, and the workspace's own. */
enum { LANE_BUFFERS = LAYER_BUFFERS + 2, WORKSPACE_BUFFERS = 2 * LANE_BUFFERS + 19 };

struct Workspace {
    int T, d; /* the sizes the buffers hold */
    /* The sizes of the buffers held, in workspace_plan's order: a run whose plan differs
       (other sizes, heads, output projection or LayerNorm place) allocates afresh. */
    size_t planned[WORKSPACE_BUFFERS];
    RandomStream *random;
    RandomStream *value_random; /* value_chain's, while X0 is drawn from `random` beside it;
                                   a q·k pair's second layer's (layer_qk_work) */
    Lane lane[NETWORKS];
    LayerWeights weights; /* the current layer's, shared by both lanes (W^V: Run.weights) */
    /* W^Q and W^K (d² each) of the layer drawn ahead for its qk work beside the layer below
       (run_qk.c's draw_ahead), which that layer takes by swapping them with weights' own
       (qk_take). */
    LayerWeights ahead;
    double *init_scratch; /* the factorised schemes' SVDs (Init_scratch_doubles) */
    double *shown_before_gap, *shown_applied; /* T×T, the shown layer of the main network */
    /* The shown eigenvalues' own LAPACK workspace and dgeev's re, im (2T): they may run on a
       second thread beside both lanes' layers (Progress.start_second). */
    Linalg *spectra_la;
    double *spectra_scratch;
    double *product, *product_scratch; /* T×T: A_ℓ⋯A_1 of the shown head (attention_map) */
    /* H d×d: the M_h = W^Q_h W^K_gᵀ of the layer computed ([0]) and of the next, formed
       ahead beside it ([1]), where the logits take them (Layer_logits_through_qk_product). */
    double *qk_product[2];
    int map_cells;       /* the kept maps' cells along a side: ATTENTION_MAP_CELLS, or T in full */
    double *value_cache; /* W^V of the first seed's layers, kept for the gradients */
    size_t value_cache_size;
    bool value_cached[CONFIG_DEPTH_MAX + 1]; /* which layers' W^V the cache holds, */
    uint64_t value_seed;                     /* for this seed */
    Config value_key;                        /* and these weights (see same_weights) */
    bool measure_all_eigenvalues; /* skip the top-eigenpair route (the tests' reference) */
    size_t keep_budget;           /* bytes of token matrices the kept tracks may hold */
    bool keeping_paused;          /* runs neither read nor change what is kept */
    Kept kept;                    /* what earlier runs computed for the current weights */
};

/* The value weights of all layers are kept for the gradient pass below this size, and drawn
   again from their streams above it. */
#define VALUE_CACHE_MAX ((size_t)16 << 20)

/* The shown layer's spectra being computed, into `into`, whose arrays are the kept entry's:
   the singular values on the caller's thread (with the counterpart lane's Linalg), the
   eigenvalues on the second thread where there is one (with the workspace's spectra_la). */
enum { SPECTRA_SINGULAR_VALUES, SPECTRA_EIGENVALUES, SPECTRA_PARTS };
typedef struct {
    Workspace *w;
    int T;
    bool brauer;
    Result into;
    KeptSpectra *entry;
    int info[SPECTRA_PARTS];
} ShownSpectra;

/* What both lanes read during a run, and each lane's network. */
typedef struct {
    const Config *config;
    Workspace *w;
    Kept *kept;
    size_t budget; /* for the kept token matrices: 0 when the run keeps nothing */
    Result *out;
    const Progress *progress;
    uint64_t seed;
    bool first_seed;
    int layer;                   /* the layer being computed */
    bool attention_ready;        /* layer 1: both lanes start from X0 and share A */
    const double *shared_logits; /* their logits */
    LayerWeights weights;        /* the layer's (W^V from the first seed's cache) */
    bool active[NETWORKS];       /* the lanes that compute this layer */
    bool measure;                /* false: only the token matrices are wanted (a replay) */
    Track *track[NETWORKS];      /* lane n computes track[n] */
    int held[NETWORKS];          /* the layer whose token matrices lane n holds, or -1 */
    Network nets[NETWORKS];      /* lane n's network state at held[n] */
    /* ‖X'‖₂² of layer input_bound_for[n]'s attention input on lane n, bounded when the layer
       below it was measured there (Entropy_input_norm_measured; 0: none, or used up). */
    int input_bound_for[NETWORKS];
    double input_bound[NETWORKS];
    /* The shown layer's attention, captured while its layer is computed (shown_lane >= 0). */
    int shown_lane;
    bool shown_captured; /* the shown layer had a finite attention matrix to capture */
    double shown_logit_std;
    GapOutcome shown_outcome;
    /* The layers multiplied into the workspace's product so far, in order from layer 1 (0:
       none): the main lane's shown head, first seed, as its layer step builds each A. */
    int product_layer;
    /* The shown spectra, and whether their eigenvalues run on the second thread beside the
       layers (Progress.start_second): until shown_spectra_join ends that, a layer's two
       lanes go to whichever thread is free first (Progress.run_claimed), or run in turn on
       the caller's thread (layer_lanes). */
    ShownSpectra spectra;
    bool spectra_beside;
    int info[NETWORKS]; /* LAPACK status of each lane */
    /* What each lane's layer step left for the rest of its layer (layer_tail_task): how the
       step ended, and the tokens' log-scale it began from. */
    LayerOutcome outcome[NETWORKS];
    double step_log_scale[NETWORKS];
    double *qk_norm; /* [heads]: the layer's HeadEntropy.qk_norm, or NULL (none measured) */
    /* The query-key work done ahead of its layer's turn (run_qk.c's hand-over: qk_state
       reads it, qk_take clears it): layer qk_ready's (0: none) in the ahead slots (the
       workspace's ahead W^Q and W^K, its qk_product[1], the norms in qk_norm_ahead), done by
       layer_qk_work beside the layer below; or QK_READY_BESIDE_INPUT: input_layer did layer
       1's, left in the layer's own slots (weights, qk_product[0], qk_norm) with the attention
       both networks share, and layer 2's in the ahead slots, which layer 1 hands on as
       qk_ready = 2.  A value of its own, so that no later state of layer 1 can be read as it. */
    double *qk_norm_ahead;
    int qk_ready;
    /* W^V of layer qk_ready where its q·k work drew it beside (Work_values_drawn_beside_qk:
       in the buffer its W^K was in), or of layer 1 where the chain's lane drew it beside X0
       (Work_value_one_beside_input: the workspace's), which the layer then reads; else NULL. */
    double *value_ahead;
    bool values_chained; /* value_chain has run for this seed's gradients */
    /* The W^V lane n draws in the gradients' current pair after its product, for a later
       pair (frozen_attention_gradients): its layer (0: none) and where it goes. */
    int value_draw_layer[NETWORKS];
    double *value_draw_into[NETWORKS];
    /* Where the theory's stable-rank curves leave [1, T], for each network (assemble's
       warning), found once a run (assemble_curve_ranges): their maximisations cost ~1.5 ms
       at L = 256, which every assemble after a layer would repeat. */
    TheoryOutOfRange curve_range[NETWORKS];
} Run;

/* A kept warning about one network names it by its role in the run that shows it (the
   network of one run is the counterpart of the next after `g`): it starts with this byte,
   which the assembly replaces by ROLE_NAMES[role]. */
#define ROLE_MARK "\x01"
/* Starts a warning that is about one layer's attention (a gap mode's fallback): the
   assembly names the first layer it happened at, and says it once. */
#define LAYER_MARK "\x02"

/* ---- workspace.c ---- */
/* Buffers for c's sizes, kept when they already fit.  Returns 0 or -1. */
int workspace_reserve(Workspace *w, const Config *c);
/* Doubles of the first seed's W^V kept for the gradients (0: drawn again instead). */
size_t value_cache_doubles(const Config *c);

/* ---- model.c: what is kept between runs ---- */
/* The settings that decide the weights and the forward pass (the settings table's
   REUSE_WEIGHTS class). */
bool same_weights(const Config *a, const Config *b);
void kept_clear(Kept *k);
/* The track of (seed, gap, first seed or not), created empty when missing; NULL: no memory. */
Track *kept_track(Kept *k, uint64_t seed, Gap gap, bool first);
/* The kept track of (seed, gap, first seed or not), or NULL. */
Track *kept_track_find(const Kept *k, uint64_t seed, Gap gap, bool first);
/* Where a lane holding layer `held` starts to reach `layer` of track t (t NULL: nothing kept):
   from itself where it is nearer than anything kept, else from the nearest kept layer, or
   from X0 drawn again.  Returns that layer and says which in *source: the one rule lane_load
   follows and Model_plan prices. */
typedef enum { LOAD_FROM_LANE, LOAD_FROM_INPUT, LOAD_FROM_KEPT } LoadSource;
int track_load_start(const Track *t, bool frozen, int held, int layer, LoadSource *source);
/* Room for layers 0..depth in t.  Returns 0 or -1. */
int track_reserve(Track *t, int depth);
/* The kept spectra of c's shown (gap, layer, head) for seed, or NULL; a fresh entry for it. */
const KeptSpectra *kept_spectra_find(const Kept *k, uint64_t seed, const Config *c);
KeptSpectra *kept_spectra_new(Kept *k, uint64_t seed, const Config *c);
void kept_spectra_free(KeptSpectra *s);
/* Drops token matrices until the kept ones fit budget, the run's own tracks (own) last. */
void kept_trim(Kept *k, size_t budget, Track *const own[NETWORKS]);

/* ---- run.c ---- */
/* task for both lanes: on the caller's two threads when it offers them, else in turn. */
void both_lanes(const Progress *progress, void (*task)(int which, void *context), void *context);
/* task for both lanes of a layer's step: both_lanes, or while the shown eigenvalues hold the
   second thread, each lane on whichever thread is free first (Progress.run_claimed), else
   both in turn on the caller's. */
void layer_lanes(const Run *run, void (*task)(int which, void *context), void *context);
/* Brings lane `which` to its track's token matrices at `layer` (from the nearest kept ones). */
int lane_load(Run *run, int which, int layer);
/* The same from X0, whatever is kept: the attention product needs every layer's matrices,
   which the kept tokens do not hold. */
int lane_replay(Run *run, int which, int layer);
/* The layer's weights for both lanes: `parts` (LayerDraw) and W^V (*wv: where it is). */
int draw_layer_weights(Workspace *w, const Config *c, uint64_t seed, int layer, bool first_seed,
                       unsigned parts, double **wv);

/* ---- run_lane.c ---- */
/* A layer's measures into its kept state, the token similarity relative to X0's, and what
   the measure did (`share`, as Measure_tokens_sharing left it) into its counts, beside what
   its plan declared (`declared`: Work_flat_proofs_declared, Work_deflated_route_declared). */
void layer_state_record(LayerState *state, const Measures *m, const MeasureSharing *share,
                        const MeasureCounts *declared, double log_similarity0);
/* sum += one, count by count (MeasureCounts). */
void measure_counts_add(MeasureCounts *sum, const MeasureCounts *one);
/* both_lanes' task of run_layer: run->layer of network `which` where that lane is active and
   alive, its status into run->info[which].  It is layer_step_task then layer_tail_task, which
   run_layer claims as two pairs while the shown eigenvalues hold the second thread: the
   tail (the frozen product and the measures) reads its own lane's buffers alone, after its
   step. */
void layer_task(int which, void *context);
void layer_step_task(int which, void *context);
void layer_tail_task(int which, void *context);

/* ---- run_qk.c ---- */
/* The lane's buffers that the heads' ‖M_h‖₂ borrow as scratch: three of its step's, free
   between layer steps (layer.h; the attention's last applied matrix is read by the frozen
   product right after its step, and none of the three is swapped with another buffer, as the
   queries' is with the frozen product), and its measures' Lanczos scratch, free between a
   layer's measure and the next layer's step.  One exception: from layer_one_beside to layer
   1's step the main lane's logits and attention hold layer 1's shared attention
   (run->shared_logits); no norms are taken in that window, since layer 1's were taken beside
   the input and layer 2's are ahead (QK_DONE_BESIDE_INPUT). */
/* Run.qk_ready's value while input_layer's work for layers 1 and 2 waits for layer 1. */
enum { QK_READY_BESIDE_INPUT = -1 };
typedef enum { QK_IN_LOGITS, QK_IN_VALUES, QK_IN_ATTENTION, QK_IN_LANCZOS, QK_BORROWED } QkBorrowed;
/* The lane's buffer behind each slot: the one table that workspace_plan grows and the norms'
   layout cuts (a buffer borrowed more is a slot and a row here, and its pieces there). */
double **qk_borrowed_buffer(Lane *lane, QkBorrowed slot);
/* The doubles the norms of c's layers need in each (0 where no layer measures them). */
void qk_norms_scratch_doubles(const Config *c, size_t need[QK_BORROWED]);
/* The query-key work done ahead of its layer's turn, and its hand-over (run_qk.c says why it
   is ahead): what run->layer finds ready (qk_state), which qk_take makes its own before its
   weights are drawn.  To do; done ahead (its W^Q, W^K, M_h and norms in the ahead slots); or
   done beside the input (layer 1's, by input_layer: in the layer's own slots, its attention
   built). */
typedef enum { QK_TO_DO, QK_DONE_AHEAD, QK_DONE_BESIDE_INPUT } QkState;
QkState qk_state(const Run *run);
/* What `state` (qk_state's, not QK_TO_DO) says is ready becomes run->layer's: its W^Q and W^K
   the workspace's own, its M_h qk_product[0], its norms run->qk_norm. */
void qk_take(Run *run, QkState state);
/* The query-key work of run->layer (M_h into run->weights.qk_product, and its norms where
   measured), for both networks, where qk_state says it is to do; with the next layer's beside
   it, left ahead, where Entropy_qk_norms_ahead pairs them. */
int layer_qk_work(Run *run);
/* Whether run->layer's query-key work is paired with the next layer's (measured, first seed,
   Entropy_qk_norms_ahead). */
bool qk_paired(const Run *run);
/* The W^Q and W^K of `layer` into `into`, the values that layer's own draw would give. */
int draw_ahead(Run *run, RandomStream *random, Linalg *la, int layer, LayerWeights *into);
/* input_layer's work for layers 1 and 2 is done (layer 1's W^Q and W^K drawn ahead, layer 2's
   into the workspace's own after the value chain): they change places, so that layer 1's are
   its own and layer 2's ahead, and layer 1 finds them (QK_DONE_BESIDE_INPUT). */
void qk_beside_input_done(Run *run);
/* The buffer for `layer`'s M_h where its logits take them (which: 0 its own, 1 ahead), or NULL. */
double *qk_product_of(Run *run, int layer, int which);
/* input_layer's work beside X0 (layer 1's M_1, norms and shared attention) and beside the
   value chain (layer 2's W^Q, W^K, M_2 and norms, from the chain's stream object). */
int layer_one_beside(Run *run);
/* Layer 1's attention matrix, which both networks read, on the main lane's buffers into
   run->shared_logits: where run_layer builds it and where layer_one_beside does, the same
   call, so the same bits. */
int layer_one_attention(Run *run, const LayerWeights *weights);
int layer_two_beside(Run *run, RandomStream *random, Lane *lane);

/* ---- shown_layer.c ---- */
/* The shown matrix as built (with its logits' std) and as applied (with the gap's outcome). */
void capture_built(Run *run, const double *logits, const double *attention);
void capture_applied(Run *run, const double *attention, GapOutcome outcome);
/* The spectra of the captured shown matrices, kept for the run's (gap, layer, head).  With
   `beside` and a caller that offers a second thread to hand work to, the eigenvalues are
   left running there (run->spectra_beside) and the entry stays hidden until
   shown_spectra_join; else both are done on return. */
int keep_shown_spectra(Run *run, bool beside);
/* The eigenvalues left running beside, if they are done (or once they are, with `wait`):
   their entry kept, or dropped on a failure, whose status is returned.  0 when nothing was
   left running, or it still runs. */
int shown_spectra_join(Run *run, bool wait);
/* The shown matrix of `layer` computed again on lane `which` from the kept layer below. */
int capture_shown_attention(Run *run, int which, int layer);
int product_take(Run *run, int which, int head, const double *attention);
int keep_shown_product(Run *run);

/* ---- gradients.c ---- */
/* Whether the gradient formula of docs/model.md §2 describes c. */
bool gradients_apply(const Config *c);
/* The first seed's W^V of `layer`, from the cache or drawn into it (*out: where it is). */
int draw_value_weights(Workspace *w, RandomStream *random, Linalg *la, const Config *c,
                       uint64_t seed, int layer, double **out);
/* frozen ← A_ℓ·frozen after lane's layer step, and the norm of the step's A_ℓ X_{ℓ−1}. */
int frozen_attention_step(const Config *c, int layer, Lane *lane, Network *net,
                          double log_scale_in);
/* Whether the first seed's gradients at the depth are to be computed: its tracks lack them. */
bool gradients_due(const Run *run);
/* The value weights' part of the gradients (their product from the top down), with la,
   drawing from `random`. */
int value_chain(Run *run, RandomStream *random, Linalg *la);
/* The gradients of every layer for both tracks of the first seed, at the depth. */
int frozen_attention_gradients(Run *run);

/* ---- assemble.c ---- */
/* Rewrites run->out from the kept tracks of the first `seeds` seeds. */
void assemble(Run *run, Track *(*tracks)[NETWORKS], int seeds, bool every_seed);
/* Whether layer + 1 of a network with gap `gap` passes on only the rounding of its input once
   the tokens entering it are equal to within round-off: no skip carries them past the
   attention, whose applied matrix sends equal tokens to 0 (Gap_annihilates_equal_tokens). */
bool round_off_noise_after(const Config *c, Gap gap, int layer);
/* Whether the attention rows of c read the logits (not identity, not uniform by the settings):
   where they do, the rows that tokens equal within round-off enter are round-off. */
bool round_off_rows_read_logits(const Config *c);
/* Where a track's numbers are round-off (docs/model.md §2, "Round-off from a layer on"),
   Curves' tokens_equal_from and noise_from. */
void track_round_off(const Track *t, const Config *c, int *tokens_equal_from, int *noise_from);
/* run_lane.c: the warning that lane `which`'s tokens are equal within round-off from `layer`
   on (0: X0 itself), into the lane's warnings, once a network (Network.similarity_lost). */
void round_off_warning(Run *run, int which, int layer);

/* run->curve_range from the theory's curves for run->config. */
void assemble_curve_ranges(Run *run);

#endif
