/* One conditioning run's state (conditioning_run.c), shared with the numbers it takes of each
 * layer's Jacobian K and dominant term B (conditioning_numbers.c). */
#ifndef ATTNSCOPE_CONDITIONING_RUN_INTERNAL_H
#define ATTNSCOPE_CONDITIONING_RUN_INTERNAL_H

#include "attnscope/conditioning.h"
#include "attnscope/conditioning_kron.h"
#include "attnscope/layer.h"

#include <stdbool.h>
#include <stddef.h>

/* The matrix-free estimates: Lanczos runs until the Ritz residual of an extreme eigenvalue
   of KᵀK is within 1e-6 relative, within this many steps, or reports NaN; the certificate it
   reports adds the products' rounding (SaWork_extreme). */
enum { LANCZOS_STEPS_MAX = 240 };
#define LANCZOS_TOLERANCE 1e-6

/* The buffers of one run; H heads of width d_h = d/H, R the MLP's ratio.  The forward pass is
   the layer step's (layer.h), on the step's buffers: the run keeps what the Jacobian reads. */
typedef struct {
    const Config *c;
    const Progress *progress; /* or NULL */
    int T, d, heads;
    size_t n;                 /* T·d */
    bool exact;               /* K built in full */
    bool kron_off;            /* s_min by Lanczos alone on the matrix-free path */
    bool shown_spectrum_only; /* ConditioningControl's */
    bool singular;      /* K singular by structure: s_min null, not sought off the exact path */
    bool skip_jacobian; /* κ(a·I + b′·K) taken (Conditioning_skip_jacobian) */
    double skip_gain, branch_gain; /* a and b′ (Layer_skip_gain, Layer_branch_gain) */
    RandomStream *random;
    Linalg *la;
    SaWork *sa;
    SaBlock *blocks;                /* one per head */
    bool *mean_centred;             /* per head: its centring subtracted a mean that moves */
    LayerBuffers step;              /* the layer step's */
    LayerWeights weights;           /* the layer's */
    double *input;                  /* T×d: the attention sub-block's input, as the step read it */
    double *wvo;                    /* d×d: W_VO = W^V W^O */
    double *m, *wvo_head;           /* d×d per head: M_h, W_VO,h = W^V_h W^O_h */
    double *scratch;                /* Init_scratch_doubles, d×d, T×T (copies to decompose) */
    double *soft, *applied;         /* T×T per head: each head's attention as built, as applied */
    double *product, *product_next; /* T×T, A_ℓ⋯A_1 of the shown head, at unit norm */
    double *sv_a, *sv_w;            /* T, d */
    double *jacobian, *jacobian_copy, *jacobian_sv; /* n×n, n×n and n: exact path only */
    double *witness; /* 4·T×d, matrix-free path only: B₀'s smallest singular pair, the check's */
    /* B₀'s factors (matrix-free path, else NULL): the Kronecker path's preconditioner, and
       the vector whose image bounds s_min(K) from above on every path */
    KronFactors *kron;
    KronTally tally;
    /* Layers of both networks whose ‖K‖₂ the products' rounding left uncertain beyond
       JACOBIAN_NORM_TOLERANCE (null), and the first of them (1-based, 0 for none) */
    int norm_uncertain, first_norm_uncertain;
    DenseExtremes *extremes; /* exact path only */
} ConditioningRun;

/* A layer's numbers of K (‖K‖₂, s_min, κ, its lower bound, κ(a·I + b′·K), the premise ratio) and of
   B (κ(B) of several heads), the SaWork prepared (conditioning_numbers.c). */
int ConditioningRun_jacobian_numbers(ConditioningRun *r, ConditioningCurves *out, int l,
                                     double s_min_b, bool has_perturbation, double *layer_sv,
                                     bool shown);
int ConditioningRun_dominant_numbers(ConditioningRun *r, ConditioningCurves *out, int l,
                                     double *s_min);

#endif
