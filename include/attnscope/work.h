/* The work of a run, declared once: what each stage of a layer computes (products with their
 * sizes, decompositions, normals drawn, passes over matrices), which the layer step's stages
 * state themselves (layer.h: Layer_declare runs them without buffers), and the steps a run
 * takes for a plan (Model_plan: what is kept, what is computed).  The cost model prices
 * these steps; test_cost counts what a run really did (LinalgTally) and compares it with
 * them.
 *
 * A step is what runs between two points of a run: a part on the caller's thread, and a part
 * on each of the two lanes (the network and its counterpart, or the shown matrix's
 * eigenvalues and singular values), which a caller with two threads runs at once.
 */
#ifndef ATTNSCOPE_WORK_H
#define ATTNSCOPE_WORK_H

#include "attnscope/config.h"
#include "attnscope/init.h"
#include "attnscope/model.h"

#include <stdbool.h>

typedef enum {
    WORK_PRODUCT,         /* dgemm of m×k by k×n: 2·m·n·k flops */
    WORK_GRAM,            /* dsyrk, the m×m Gram matrix of an m×k matrix: m·m·k flops */
    WORK_EIGENVALUES,     /* dgeev of n×n, no vectors */
    WORK_SINGULAR_VALUES, /* dgesdd of m×n, no vectors */
    WORK_SVD,             /* dgesdd of n×n with vectors */
    WORK_SYMMETRIC,       /* dsyevd of n×n, no vectors */
    WORK_ORTHONORMAL,     /* dgeqrf + dorgqr of m×n */
    WORK_SOLVE,           /* dgetrf + dgecon + dgetrs of n×n */
    WORK_CHOLESKY,        /* dpotrf of n×n: n³/3 flops */
    WORK_NORMALS,         /* m normals drawn (mt19937 + ziggurat) */
    WORK_LOAD,            /* a checkpoint's tensors: m bytes read from its mapping, n of its
                             elements converted to double (layer.h's WeightSource.declare) */
    WORK_PASSES,          /* m elements read and written once (copy, norm, scaling, LayerNorm) */
    WORK_BUILD_EXP,       /* m attention entries (or activations) computed with exp or erfc */
    WORK_BUILD_PLAIN,     /* m attention entries computed without */
    WORK_KINDS
} WorkKind;

typedef struct {
    WorkKind kind;
    double m, n, k; /* sizes as the kind says (unused ones 0) */
    double times;
} Work;

enum { WORK_LIST_MAX = 64 };

typedef struct {
    int count;
    Work item[WORK_LIST_MAX];
} WorkList;

/* One step of a run: `serial` on the caller's thread, then lane[0] and lane[1] (at once when
   the caller offers two threads).  A `beside` step (the shown layer's spectra, computed with
   the layer) may instead hand lane[0] (its eigenvalues) to the second thread to run beside
   the caller's lane[1] and the steps after it (Progress.start_second), until a `join` step
   (empty: the end of the seed's layers) waits for what is left of it.  tail[n] is the part
   of lane[n] that may follow both lanes' rest as a claimed pair of its own (a network's
   frozen product and measures after its layer step, run.c's run_layer): counted in lane[n]
   too, and empty where a lane is not split. */
typedef struct {
    WorkList serial, lane[2], tail[2];
    bool beside, join;
} WorkStep;

/* Adds `times` items of work to l, counted with an item of the same kind and sizes if l has
   one (the list prices and sums the same either way). */
void WorkList_add(WorkList *l, WorkKind kind, double m, double n, double k, double times);

/* Visits the steps seed s of plan takes up to Progress.after_layer(s, through) (through =
   depth + 1: the whole seed, gradients included); visit returns false to stop the walk. */
void Work_seed_steps(const ModelPlan *plan, int s, int through,
                     bool (*visit)(void *context, const WorkStep *step), void *context);

/* The work of drawing matrix m (Init_draw), and W^Q with W^K (Init_draw_query_key), by the
   initialisation's rule (Init_matrix), added to out: what Layer_declare_draw lists. */
/* Whether the first seed's gradients' value chain (gradients.c) runs beside X0 on the other
   lane, given whether the gradients are due: where weights may be drawn ahead
   (Layer_draws_ahead).  The run and its plan both ask here. */
bool Work_value_chain_beside_input(bool gradients);

/* Whether, beside that chain, layer 1's query-key work and the attention matrix both networks
   share follow X0 on its lane, and layer 2's query-key work the chain on the other (where
   both networks start at layer 1 of the first seed): one head, and layer 2's norms paired
   with layer 1's (Entropy_qk_norms_ahead).  The run and its plan both ask here. */
bool Work_layer_one_beside_input(const Config *c);

/* Whether, there, layer 1's W^Q and W^K are drawn on X0's lane too (before its query-key
   work) rather than alone before the lanes: where the initialisation draws them without the
   workspace's scratch (Init_scratch_doubles), which the chain's value draws use beside.  The
   run and its plan both ask here. */
bool Work_layer_one_drawn_on_input_lane(const Config *c);

/* Whether a layer whose query-key work is paired with the next one's (Entropy_qk_norms_ahead)
   draws each layer's W^Q and W^K on that layer's lane, from a stream object of its own, rather
   than both alone before the lanes: where weights are drawn (Layer_draws_ahead) without the
   workspace's scratch (Init_scratch_doubles), which both lanes would share.  The run and its
   plan both ask here. */
bool Work_qk_pair_drawn_on_lanes(const Config *c);

/* Whether the gradients' pairs draw the W^V their later pairs read, two at a time (one on
   each lane, from the lane's stream object), where the value cache does not hold them and
   weights are drawn without the workspace's scratch (as Work_qk_pair_drawn_on_lanes): only
   W^V_1 is then drawn alone before them.  The run and its plan both ask here. */
bool Work_gradient_values_drawn_on_lanes(const Config *c);

/* Whether a layer whose W^Q and W^K are drawn on the lanes of its query-key pair with the
   next layer's (Work_qk_pair_drawn_on_lanes) draws both layers' W^V there too, each after its
   layer's query-key work on the same lane, rather than each alone before its layer's
   networks: where the value cache does not hold them and the next layer's logits go through
   M (Layer_logits_through_qk_product), so that its W^K's buffer is free for its W^V once M is
   formed.  The run and its plan both ask here. */
bool Work_values_drawn_beside_qk(const Config *c, int layer);

/* Whether, where layer 1's and 2's query-key work runs beside X0 and the value chain
   (Work_layer_one_beside_input), layer 1's W^V is drawn on the chain's lane after layer 2's
   (the chain is then done with the workspace's W^V buffer) rather than alone before layer 1's
   networks: where the value cache does not hold it.  The run and its plan both ask here. */
bool Work_value_one_beside_input(const Config *c);

/* Whether the measure of a network's X of layer `layer` takes its centred Gram
   matrix from X's (Measure_tokens_sharing): above MEASURE_SVD_CHEAP, every network (of the
   embedding input X0 alone); Measure_centred_by_downdate still decides by the numbers, and
   where it refuses with the tokens still resolved apart (0 < μ below its threshold) the run
   forms the Gram matrix the plan did not foresee.  The run and its plan both ask here. */
bool Work_centred_downdate_expected(const Config *c, int layer);
/* The flat-spectrum route's Cholesky proofs (T×T) the plan declares for the measures of a
   network's X of layer `layer` (its gap mode `gap`), where they replace dsyevd: above
   MEASURE_SVD_CHEAP, one for X0's centred measure and one for X's where the theory expects
   its spectrum flat (X0, a network whose gap is removed), unless X's measure takes the proof
   of the next layer's ‖X'‖₂² (`bound_shared`).  Whether the route runs is the spectrum's to
   say (the top-eigenpair certificate may hold after all, or the route's bound miss dsyevd's
   and dsyevd run): the run counts the proofs it made beside the ones declared here
   (MeasureCounts), and the plan prices these.  The run and its plan both ask here. */
int Work_flat_proofs_declared(const Config *c, Gap gap, int layer, bool bound_shared);

/* Whether the plan declares the deflated route (its Gram matrix of the smaller side) for the
   measure of a network's X of layer `layer` (its gap mode `gap`): above MEASURE_SVD_CHEAP,
   where the theory has a collapsing network's sr − 1 below MEASURE_GRAM_FLOOR by then.  The
   numbers decide (a seed's network may collapse layers earlier or later than the theory's
   sr − 1 ≈ T^(1 − 2ℓ) says): the run counts the measures declared so beside the routes
   taken (MeasureCounts).  The run and its plan both ask here. */
bool Work_deflated_route_declared(const Config *c, Gap gap, int layer);
void Work_matrix_draw(const Config *c, Matrix m, WorkList *out);
void Work_query_key_draw(const Config *c, WorkList *out);

/* The work of Gap_apply(gap) on one T×T attention matrix of c at `layer` (whose mask it
   reads), added to out. */
void Work_gap_removal(const Config *c, Gap gap, int layer, WorkList *out);

/* The shown matrix's spectra: whether the eigenvalues are read off a diagonal or come from
   dgeev, as spectra.c decides for the gap mode a run applies. */
void Work_spectra(const Config *c, WorkStep *out);

/* The gap mode a run of c applies (deflate falls back to center where eigenvalue 1 is not
   simple, for the identity, or where rows do not sum to 1). */
Gap Work_applied_gap(const Config *c, Gap gap);

/* What a run really did, in the same units: a step's lists summed (the tests compare it with
   LinalgTally). */
typedef struct {
    double product_flops, gram_flops;
    double calls[WORK_KINDS];      /* the decompositions' count */
    double size_cubed[WORK_KINDS]; /* Σ m·n·min(m, n) of each */
    double normals;                /* Σ m of the WORK_NORMALS */
} WorkTotals;

void WorkTotals_add(WorkTotals *t, const WorkStep *step);

#endif
