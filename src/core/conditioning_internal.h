/* The SaWork's layout, shared by conditioning.c (the products), conditioning_shape.c (the
 * layer's shape around f that the products pass through), conditioning_rounding.c (the bound
 * on one product's rounding computed alongside it, docs/model.md §8) and
 * conditioning_extreme.c (the extreme singular values through the products). */
#ifndef ATTNSCOPE_CONDITIONING_INTERNAL_H
#define ATTNSCOPE_CONDITIONING_INTERNAL_H

#include "attnscope/conditioning.h"

#include <stdbool.h>
#include <stddef.h>

/* Which part of K the products apply. */
typedef enum { PART_WHOLE, PART_PERTURBATION, PART_DOMINANT, PARTS } Part;

struct SaWork {
    size_t td_cap, tt_cap; /* per head */
    int heads_cap, heads;
    SaBlock *b;         /* one per head */
    Part part;          /* K, E = K − B or B */
    const Linalg *stop; /* whose stop hook the Lanczos steps poll, or NULL */
    double *xm, *xmt;   /* T×d per head: X·M_h, X·M_hᵀ */
    double *xw;         /* T×d per head: X·W_VO,h */
    double *tmp, *unit; /* T×d: scratch, e_j for the Jacobian's columns */
    double *row;        /* T: each row's Σ_j A_ij·g_ij */
    double *a, *ap;     /* T×T per head, column-major: softmax, applied */
    double *cdot;       /* T×T: Ċ (or C̄) */
    /* SaWork_shape's (docs/model.md §8.1), in one block of SaWork_shape_doubles: */
    bool shaped_logits, capped, branch_norm;
    SaShape shape;
    double *shape_block;
    double *qt, *kt;       /* T×H·d_h, T×G·d_h: the queries and keys as the logits read them */
    double *qn, *kn;       /* the same: QK-norm's normalised rows (before the gain) */
    double *q_inv, *k_inv; /* T per norm group: QK-norm's 1/ρ */
    double *qdot, *kdot;   /* Q̇, K̇ (or Q̄, K̄) */
    double *cap_slope;     /* T×T per head, column-major: 1 − tanh²(S/c) */
    double *fn, *f_inv;    /* T×d, T: the branch LN's normalised rows of F and 1/ρ */
    double *ybar;          /* T×d: J_LNᵀ·Ȳ */
    double *sums;          /* T + max(T, d): the norms' row sums, Qk_shape's scratch */
    double *rope_table;    /* RoPE's cosines and sines, positions 0 … T−1 */
    /* SaWork_product_bounded's running bound: its state (NULL until first asked), and
       whether the product under way feeds it (the hooks below). */
    struct ProductBound *bound;
    bool bounding;
};

/* The shape's part of the products (conditioning_shape.c), once SaWork_shape has taken its
   state at X: Q̇ = shape'·(Ẋ W^Q) and K̇ = shape'·(Ẋ W^K) into w->qdot, w->kdot; X̄ += the
   transposes' products of w->qdot, w->kdot (Q̄, K̄); x (T×d) ← the branch LN's Jacobian times
   x, or its transpose.  The bounds on ‖J‖₂ of QK-norm at the queries and the keys (1 where
   there is none) and of the branch LN, for SaWork_product_error.  Whether c's logits are more
   than s·X·M·Xᵀ at `layer` (any layer for layer 0). */
void SaShape_project_tangent(SaWork *w, const double *dx);
void SaShape_project_cotangent(SaWork *w, double *dx);
void SaShape_branch_product(SaWork *w, bool transposed, double *x);
void SaShape_qk_norm_bounds(const SaWork *w, double *queries, double *keys);
double SaShape_branch_norm_bound(const SaWork *w);
bool SaShape_logits_shaped(const Config *c, int layer);

/* The hooks of the running bound (conditioning_rounding.c), called by SaWork_jvp and
   SaWork_vjp while w->bounding, each after the step it names: head h's value path (w->tmp
   holds fl(Ẋ W_VO,h) or fl(Ȳ W_VO,hᵀ)); its logits' tangent Ċ or the cotangent Ā in w->cdot;
   the attention derivative applied to it in w->cdot; the derivative's product added to the
   output. */
void ProductBound_value(SaWork *w, int h, bool transposed);
/* On the compensated route (while w->bounding), head h's Ċ (transposed: Ā) into w->cdot by
   Dot2 from the route's prepared products, in place of SaWork_jvp's (vjp's) dgemm: true; else
   false, and the caller computes it. */
bool ProductBound_compensated_logits(SaWork *w, int h, bool transposed);
void ProductBound_logits(SaWork *w, int h, bool transposed);
void ProductBound_derivative(SaWork *w, int h);
void ProductBound_output(SaWork *w, int h, bool transposed);
/* Frees the bound's state (SaWork_free); forgets its per-block cache (SaWork_prepare_heads). */
void ProductBound_free(struct ProductBound *b);
void ProductBound_forget(struct ProductBound *b);

#endif
