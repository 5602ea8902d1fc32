/* One transformer layer (docs/model.md §1.5-§1.9): the step every driver of the network
 * follows.  Model_run's layer loop, the conditioning pass and the benchmark's forward pass
 * call Layer_step; none of them has a forward of its own.
 *
 * A layer is X ← a·X + b·F(X'), F(X') = [A_1 X' W^V_1 … A_H X' W^V_H]·W^O with X' = X, or LN(X)
 * under pre-LN, a LayerNorm after it under post-LN, then the MLP sub-block placed the same
 * way.  Layer_step takes it stage by stage, and each stage is the one place a block feature
 * joins it:
 *   1. the branch's input: X, or LN(X) under pre-LN                (norm placements, ε)
 *   2. every head's queries, every key/value head's keys and values (--kv-heads: G of them,
 *      each shared by H/G query heads), one product each, then QK-norm and RoPE on the
 *      queries and keys (qk.h)
 *   3. per head: logits, the masked attention, gap removal, A_h·V_h (per-layer masks, sinks)
 *   4. the heads through W^O, with the skip's and the branch's gains
 *   5. LayerNorm after the sub-block (post-LN)
 *   6. the MLP sub-block, with its own skip and LayerNorm, gated (down(act(gate x) ⊙ up x))
 *      or not
 *   7. the tokens' scale carried apart where A does not depend on X
 * A driver that wants more than X_ℓ (a head's attention before and after gap removal, the
 * branch's input) passes a LayerObserver, which the step calls as it goes: what it sees is
 * what the step computes, never a second computation.
 *
 * Storage: token matrices T×d column-major; weights column-major; attention matrices row by
 * row (attention.h).
 */
#ifndef ATTNSCOPE_LAYER_H
#define ATTNSCOPE_LAYER_H

#include "attnscope/attention.h"
#include "attnscope/config.h"
#include "attnscope/linalg.h"
#include "attnscope/random.h"
#include "attnscope/work.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The weights of one layer.  Head h reads the h-th block of d_h columns of W^Q and the h-th
   T×T block of the Markov draws, and the g-th block of W^K and W^V, g = Config_kv_head_of(h)
   (= h unless --kv-heads groups them).  W^K and W^V are drawn d×d whatever G: the G shared
   blocks are the first G·d_h columns of the same draw, so G = H is today's layer bit for bit
   and the blocks keep the square draw's entry scale. */
typedef struct {
    double *query, *key, *value; /* d×d */
    double *output;              /* d×d; unused when W^O is the identity */
    double *mlp_in, *mlp_out;    /* N×d each, N the hidden width (mlp_in stored transposed,
                                    see init.h); a gated MLP's gate and down projections */
    double *mlp_up;              /* N×d, stored transposed: a gated MLP's up projection */
    double *markov;              /* T×T per head: the Markov kind's σ_qk²·g */
    double *sink;                /* H: each head's sink logit (Config_has_sink), else unused */
    /* H d×d: M_h = W^Q_h W^K_gᵀ (Layer_qk_product), where the driver formed it for a layer
       whose logits go through it (Layer_logits_through_qk_product); NULL: the logits from the
       projected queries and keys. */
    double *qk_product;
} LayerWeights;

/* Where a sub-block's norm sits (docs/model.md §1.5): on the branch's input (pre- and peri-LN)
   or after the branch (post-LN on X after the skip; peri- and output-LN on F before it joins). */
typedef enum {
    NORM_ATTENTION_IN,
    NORM_ATTENTION_OUT,
    NORM_MLP_IN,
    NORM_MLP_OUT,
    LAYER_NORM_SITES,
} LayerNormSite;

/* A norm's affine part, y = N(x) ⊙ (o + w) + β, o the family's gain offset (--norm-gain-offset:
   Gemma stores w with o = 1); each NULL where absent (a unit gain, no bias). */
typedef struct {
    double *gain, *bias; /* d: w and β as the checkpoint stores them */
} NormAffine;

/* A trained layer's gains and biases (a checkpoint's, Layer_affine), each NULL where the layer
   has none.  Drawn weights have none at all: their norms have unit gains and no bias, and the
   step then skips the operations, so a drawn layer is computed as it always was. */
typedef struct {
    NormAffine norm[LAYER_NORM_SITES];
    double *query_norm_gain, *key_norm_gain;    /* QK-norm's w: d_h shared by every head (per head),
                                                   or d and G·d_h (full) */
    double *query_bias, *key_bias, *value_bias; /* d, G·d_h, G·d_h: added to the projections */
    double *output_bias;                        /* d: added to F after W^O */
    double *mlp_in_bias, *mlp_up_bias;          /* N: added before the activation (the gate's) */
    double *mlp_out_bias;                       /* d: added after the down projection */
} LayerAffine;

/* The parts of a layer's weights Layer_draw draws (a set of these bits). */
typedef enum {
    LAYER_DRAW_ATTENTION = 1 << 0, /* W^Q and W^K (kinds with logits), the Markov draws, the
                                      sinks */
    LAYER_DRAW_VALUE = 1 << 1,
    LAYER_DRAW_OUTPUT = 1 << 2, /* W^O, unless it is the identity */
    LAYER_DRAW_MLP = 1 << 3,    /* W1 and W2 (and the up projection when gated), with an MLP */
    LAYER_DRAW_ALL = (1 << 4) - 1,
} LayerDraw;

/* Where the weights come from when they are not drawn: a checkpoint (--weights), which the
   app layer maps and converts; the core sees only this.  fill writes `parts` (LayerDraw bits)
   of layer's weights (from 1) into w in the layouts above, whatever the seed: the weights are
   fixed, and the seed draws the input alone.  Returns 0, or nonzero to stop the run.  It is
   called from the thread a layer runs on, so it must not write shared state. */
typedef struct {
    int (*fill)(void *context, const Config *c, int layer, unsigned parts, const LayerWeights *w);
    /* Whether fill can serve c (the shapes it fixes, the settings that only draw weights):
       true, or false with the reason in why (for a screen's key, a preset). */
    bool (*fits)(void *context, const Config *c, char *why, size_t size);
    /* The gains and biases of layer (from 1) for c, which fits: NULL where it has none.  They
       are the source's, read-only, and live as long as the source. */
    const LayerAffine *(*affine)(void *context, const Config *c, int layer);
    /* The work fill(…, parts, …) does for a layer of c (WORK_LOAD: the bytes it reads and
       converts), added to out: what Layer_declare_draw declares in place of the draws. */
    void (*declare)(void *context, const Config *c, unsigned parts, WorkList *out);
    const char *name; /* where the weights come from, for the status line */
    void *context;
    /* The checkpoint's embedding table, or NULL where it has none (the embedding input's rows
       are drawn then): row i of rows (d numbers at rows + i·d) becomes E[ids[i]] (+ P[i] where
       the checkpoint has learned positions), i < T, each id below its rows.  Returns 0 or
       nonzero to stop the run; called from a layer's thread, as fill. */
    int (*embed)(void *context, const Config *c, const double *ids, double *rows);
    const char *table; /* the tensors embed reads ("wte.weight + wpe.weight"), for the status */
} WeightSource;

/* Makes every Layer_draw of the process fill from source (NULL: draw again), before any run
   starts; the source must outlive the runs. */
void Layer_use_weights(const WeightSource *source);
/* The source set, or NULL while weights are drawn. */
const WeightSource *Layer_weights_in_use(void);
/* Whether a run may draw a layer's weights ahead of the layer's step as well as in it (the
   gradients' value chain beside X0, the next layer's qk norms): while weights are drawn from
   their streams, a second draw is cheap and gives the same values; a checkpoint's tensors
   would be read twice, from the one reader, and its progress would count out of order. */
bool Layer_draws_ahead(void);
/* Told when a weight source starts filling a layer's weights (done false) and when it has
   filled them (done true), on the thread that runs the layer: a screen shows "reading layer
   7/32", --batch --verbose prints it.  Set before any run starts (NULL: nobody is told); the
   layer step calls it for every fill, so a watcher that shows a layer once keeps the last. */
typedef void (*LayerReading)(void *context, int layer, int depth, bool done);
void Layer_watch_reading(LayerReading reading, void *context);

/* Whether c's weights can be had: drawn, or from a source that fits c; false with the
   reason in why. */
bool Layer_weights_fit(const Config *c, char *why, size_t size);

/* Makes the embedding input's T token ids these (count of them, named `name` for the status
   line; lines[i] the file line of id i for messages, or NULL to name its index) instead of
   drawn ones (NULL: drawn again), before any run starts; ids and lines must outlive the runs.
   Layer_weights_fit then refuses a T other than count, the orthonormal input and a V not above
   every id. */
void Layer_use_token_ids(const int32_t *ids, const int32_t *lines, int count, const char *name);
/* Whether every one of the count ids is below vocab (the rows of `table`); false with the
   first that is not in why, by its line (lines[i]) or, lines NULL, its index.  The one rule
   for --token-ids against --vocab, on the command line and the screen's `:vocab`. */
bool Layer_token_ids_below(const int32_t *ids, const int32_t *lines, int count, const char *name,
                           int vocab, const char *table, char *why, size_t size);
/* The name Layer_use_token_ids was given (the --token-ids file), or NULL while ids are drawn. */
const char *Layer_token_ids_name(void);

/* Where c's input rows come from, in words ("ids.txt" or "random ids, seed 3", then "in
   wte.weight + wpe.weight" or "in a drawn table"), where token ids are fixed or the table is
   a checkpoint's; false (nothing written) where the input is the settings' alone. */
bool Layer_input_source(const Config *c, char *buf, size_t size);

/* The gains and biases of c's layer `layer` (from 1): the weight source's, or NULL (drawn
   weights, a source without them).  The step, its declaration and the conditioning read them
   from here, so a driver has nothing to pass. */
const LayerAffine *Layer_affine(const Config *c, int layer);

/* Whether a layer of c's network adds a bias to the tokens' path (W^V's, W^O's, the MLP's): a
   bias makes a layer affine, not homogeneous, in X, at whichever layer it is. */
bool Layer_network_has_bias(const Config *c);

/* Draws `parts` of the weights of (seed, layer) into w, each from its own stream (init.h),
   so that what is drawn does not depend on what else is, or fills them from the weight
   source where one is set.  scratch: Init_scratch_doubles(c).  Returns 0 or LAPACK's (or the
   source's) status. */
int Layer_draw(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer,
               unsigned parts, const LayerWeights *w, double *scratch);

/* The work Layer_draw(…, parts, …) does, added to out: the same walk, nothing drawn; with a
   weight source, what its fill reads and converts instead (nothing drawn at all). */
void Layer_declare_draw(const Config *c, unsigned parts, WorkList *out);

/* Whether layer `layer`'s logits are computed as (X M_h) Xᵀ with M_h = W^Q_h W^K_gᵀ formed once
   for both networks (docs/model.md §1.2), instead of (X W^Q_h)(X W^K_g)ᵀ in each: where no
   feature needs the queries and keys apart (QK-norm, RoPE at this layer, a checkpoint's query
   or key bias), above T·d·min(T, d) = 64³ (the rounding differs: below, every layer is
   computed as it always was), and where it takes fewer product flops for the two networks:
   2H·d²·d_h + 2·H(2T·d² + 2T²·d) against 2·(2T·d·(H + G)·d_h + 2H·T²·d_h).  Every driver of
   the run's networks (the run, the shown head's capture, the conditioning pass) forms M where
   this says so, and the declared step follows it. */
bool Layer_logits_through_qk_product(const Config *c, int layer);

/* Whether every attention row of c is exactly uniform over its allowed keys, whatever the
   tokens (Gap_leaves_zero's premise): uniform attention; or softmax without sinks whose logits
   are exactly 0 at every layer because its drawn W^Q or W^K is (mup's queries, a per-matrix
   zero): q = 0 stays 0 through QK-norm (0/√ε), RoPE and the soft-cap, and exp(0) is 1 at
   every allowed key.  A checkpoint's weights are no such draw (and its biases make logits). */
bool Layer_attention_uniform(const Config *c);

/* Doubles of LayerWeights.qk_product: H·d² where a layer of c takes its logits through it,
   else (and for c NULL) 0. */
size_t Layer_qk_product_doubles(const Config *c);

/* M_h = W^Q_h W^K_gᵀ of every head h (g its key/value head) of W^Q and W^K (d×d each) into
   product (H d×d blocks), one product of d×d_h by d_h×d each.  Returns 0 or LINALG_STOPPED. */
int Layer_qk_product(Linalg *la, const Config *c, const double *query, const double *key,
                     double *product);

/* The work Layer_qk_product does, added to out. */
void Layer_declare_qk_product(const Config *c, WorkList *out);

/* The network's input X_0 (docs/model.md §1.1) into x (T×d): the orthonormal Qᵀ of the QR
   factorisation of G ∈ R^{d×T} (signs by diag(R)), times √d for --input-norm sqrt-d; or
   (--input embedding) the rows of T token ids (uniform on 0 … V−1, or those of
   Layer_use_token_ids) in a V-row table: the weight source's (WeightSource.embed) or drawn
   N(0, S²), S Init_embedding_std.  scratch: T×d.  Returns 0 or LAPACK's status. */
int Layer_input(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, double *x,
                double *scratch);

/* The work Layer_input does, added to out. */
void Layer_declare_input(const Config *c, WorkList *out);

/* The buffers of one network's layer.  After a step, x holds X_ℓ and the others are free
   until the next (a driver may use them as scratch), except `attention`, which holds the
   last head's applied matrix. */
typedef struct {
    Linalg *la; /* for the products and gap removal; its stop hook is polled between stages */
    double *x;  /* T×d: X_{ℓ−1} in, X_ℓ out (normalised where the scale is carried apart) */
    double *normed;    /* T×d: LN(X), the branch's input under pre- and peri-LN */
    double *branch;    /* T×d: F before its LayerNorm, under peri- and output-LN */
    double *queries;   /* T×d: every head's queries */
    double *keys;      /* T×d: every head's keys, with several heads (one head's: in values) */
    double *values;    /* T×d: X'·W^V */
    double *logits;    /* T×T: a head's logits */
    double *attention; /* T×T: a head's attention, built, then as applied */
    double *mixed;     /* T×d: the heads' outputs side by side, before W^O (not fused) */
    double *hidden;    /* T×N: the MLP's hidden layer (a gated MLP's gate, then the product) */
    double *up;        /* T×N: a gated MLP's up projection */
    double *row_stat, *row_max; /* max(T, d) and T: LayerNorm's scratch */
    double *gap_scratch;        /* Gap_scratch_size(T), for the gap modes that need it */
    WorkList *declared; /* Layer_declare's: each stage adds its work here, computing nothing */
} LayerBuffers;

enum { LAYER_BUFFERS = 14 };

typedef struct {
    double **buffer;
    size_t doubles;
} LayerBuffer;

/* Every buffer of b with its size in doubles for c (sizes 0 where c does not use it, all 0
   for c NULL), gap_scratch only with `gap_scratch`: the one list that a driver's allocation,
   release and memory estimate share.  Fills out[LAYER_BUFFERS], and sets b->declared to NULL. */
void Layer_buffers(const Config *c, LayerBuffers *b, bool gap_scratch,
                   LayerBuffer out[LAYER_BUFFERS]);

/* Which stages a layer of c runs (for its buffers here, and for whoever plans or prices it).
   Fused: one head and no output projection, so the head's output goes straight into X (skip
   and branch gain in the same product), as the one-head layer of docs/model.md §1.5 does, and
   stage 4 is empty.  Pre-norm: LayerNorm on the branch's input, X + F(LN X) (pre and peri),
   so the branch reads a normalised copy.  Branch norm: LayerNorm on the branch's output,
   X + LN(F(·)) (peri and output), so F is formed apart before it joins X.  Post-LN only
   normalises X after the skip (stage 5). */
bool Layer_fused_heads(const Config *c);
bool Layer_pre_norm(const Config *c);
bool Layer_branch_norm(const Config *c);

/* The residual's gains, X ← a·X + b′·F(X): a the skip's (0 without one), b′ the branch's, over
   √d for the scaled skip (docs/model.md §1.5, §1.8), as the step applies them. */
double Layer_skip_gain(const Config *c);
double Layer_branch_gain(const Config *c);

/* G·d_h: the columns of W^K and W^V (and of the projected keys and values) the heads read. */
int Layer_kv_width(const Config *c);

/* What a driver sees of a step as it runs; any callback may be NULL.  The step calls them from
   the thread it runs on. */
typedef struct {
    void *context;
    /* The attention sub-block's input (X, or LN(X) under pre- and peri-LN), T×d, before a
       head reads it.  A nonzero return stops the step with that status. */
    int (*branch_input)(void *context, const double *input);
    /* Head h's attention as built (row-major T×T) and its logits (NULL for kinds without). */
    void (*built)(void *context, int head, const double *logits, const double *attention);
    /* Head h's attention as applied, after gap removal, with what the gap mode did and the
       warnings it raised.  A nonzero return stops the step with that status. */
    int (*applied)(void *context, int head, const double *attention, GapOutcome outcome,
                   const Warnings *gap_warnings);
} LayerObserver;

typedef struct {
    const Config *config;
    int layer; /* ℓ from 1: RoPE skips every --nope-every-th layer */
    const LayerWeights *weights;
    Gap gap;                       /* this network's gap mode */
    const LayerObserver *observer; /* or NULL */
    /* One head whose attention the driver built already into the buffers' `attention`
       (Layer_attention; the two networks of the first layer share it), from these logits
       (NULL for kinds without); false: built here. */
    bool attention_built;
    const double *built_logits;
    /* One fused head without a value bias (the gradients' network, Model_gradients_unavailable):
       the values as (A·X')·W^V, A·X' left in the buffers' `values` for the driver (the frozen
       product of the gradients at layer 1, A_1·X0), in place of A·(X'·W^V): the same flops
       in the other order.  false: A·(X'·W^V). */
    bool mix_tokens_first;
} LayerStep;

typedef enum {
    LAYER_DONE,               /* x holds X_ℓ */
    LAYER_ATTENTION_OVERFLOW, /* a head's attention is not finite: x is undefined */
    LAYER_TOKENS_OVERFLOW,    /* X_ℓ is not finite */
} LayerOutcome;

/* Computes the layer on b->x.  Where A does not depend on X and every stage is homogeneous
   of degree 1 in X, X_ℓ is normalised and its norm's log added to *log_scale, so that deep
   networks never overflow.  Returns 0, LINALG_STOPPED (la's stop hook asked: b->x is then
   undefined), LAPACK's status, or an observer's. */
int Layer_step(const LayerStep *step, LayerBuffers *b, LayerOutcome *outcome, double *log_scale);

/* Head h's attention alone at layer `layer` (from 1), as the step builds it from b->x, into
   b->attention (not gap removed), and its logits (NULL for kinds without), for a driver that needs
   one head's matrix without the layer; *outcome says whether it is finite (LAYER_DONE) or not
   (LAYER_ATTENTION_OVERFLOW).  Returns 0 or LINALG_STOPPED. */
int Layer_attention(const Config *c, int layer, const LayerWeights *w, LayerBuffers *b, int head,
                    const double **logits, LayerOutcome *outcome);

/* The work of Layer_step(step) and of Layer_attention(c, layer, …, head), added to out: the
   same stages run without buffers, each declaring its products (with their sizes), the
   attention entries built, gap removal and its passes instead of computing them, so that the
   plan and the cost model (work.c) read the list of what the step executes, and test_cost
   compares it with what Linalg counted.  Nothing that depends on the numbers is foreseen: every
   head is finite, no stop is asked; step->observer and step->weights are not read (the gains
   and biases, whose passes are declared, are Layer_affine's). */
void Layer_declare(const LayerStep *step, WorkList *out);
void Layer_declare_attention(const Config *c, int layer, int head, WorkList *out);

#endif
