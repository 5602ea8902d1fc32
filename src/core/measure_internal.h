/* What the files of the token measures (measure.h) share inside the core, not part of its
 * interface:
 *
 *   measure.c         the measures of a token matrix (Measure_tokens_sharing): the route of
 *                     sr − 1, the token geometry, the centred Gram matrix, ‖X‖₂²'s bound for
 *                     the next layer
 *   measure_lanczos.c Lanczos on a Gram matrix, and the top-eigenpair route with its certificate
 *   measure_flat.c    the flat-spectrum route, with its proof
 *   measure_bound.c   the Cholesky proofs: λ1 of a Gram matrix, ‖X‖₂², ‖ABᵀ‖₂
 */
#ifndef ATTNSCOPE_MEASURE_INTERNAL_H
#define ATTNSCOPE_MEASURE_INTERNAL_H

#include "attnscope/linalg.h"
#include "attnscope/measure.h"

#include <stdbool.h>
#include <stddef.h>

/* The Lanczos scratch of a T×T Gram matrix (measure_lanczos.c), carved from a caller's buffer
   of Measure_lanczos_size(T) doubles, and the steps it holds.  Three counts of Lanczos steps,
   each under one name wherever it appears in the measures: `budget`, the steps a run may take;
   `held`, the steps the scratch holds, from which a run carries on; `taken`, the steps one run
   took (lanczos_top_vector's local: its tridiagonal's order). */
typedef struct {
    int budget; /* min(T, MEASURE_LANCZOS_STEPS): the columns of basis */
    /* The steps whose α, β and next basis vector the scratch holds, all on one Gram matrix from
       lanczos_start's vector (0 after lanczos_carve).  A run on that matrix carries them on: the
       same start and steps give the same bits, so it takes only the steps past them and runs its
       own stopping test on each of their tridiagonal matrices.  Whoever gives the scratch
       another matrix, or writes over basis, sets it to 0. */
    int held;
    double *basis;          /* T × budget: the Lanczos vectors */
    double *next;           /* T: G·q before orthogonalisation, then the Ritz vector */
    double *product;        /* T: G times the Ritz vector */
    double *alpha, *beta;   /* budget: the tridiagonal's diagonal and off-diagonal */
    double *diag, *offdiag; /* budget: their copies, which LAPACK destroys */
    double *overlap;        /* budget: coefficients of one Gram–Schmidt pass */
    double *ritz;           /* budget: the top Ritz vector in the Lanczos basis */
    double theta, residual; /* the last step's top Ritz value and its residual estimate */
} Lanczos;

/* What the proof of ‖X‖₂² (input_bound) leaves for the flat-spectrum route on the same Ĝ: the
   same Lanczos (start, steps, stopping residual) and the same trial shift as the route's own, so
   its vector, shift and λ1(Ĝ)'s bound serve as they are, the same bits.  Its steps stay in its
   scratch (Lanczos.held), the route's own where the two share it. */
typedef struct {
    double *vector; /* T: Lanczos's top Ritz vector, copied out of the scratch */
    double shift;
    double high;   /* λ1(Ĝ)'s proved bound; NaN where the factorisation proved nothing */
    bool factored; /* whether the Lanczos and the factorisation ran */
} TopProof;

/* What the flat-spectrum route (measure_flat.c, whose proof heads that file) is given and
   reports. */
typedef struct {
    const TopProof *proof; /* X's, from the input bound, or NULL */
    /* T×T scratch of the proof (the measure's unit: T ≤ d), or NULL: Ĝ's own lower triangle,
       kept meanwhile in the upper one and restored (T > d, where unit is smaller) */
    double *factor;
    const double *x; /* X and its ‖X‖_F, to form unit again where a deep route needs it */
    double norm;
    bool factored; /* out: factor (unit) was overwritten */
    int *proofs;   /* incremented by each Cholesky factorisation (the plan declares dsyevd) */
} FlatRoute;

/* ---- measure_lanczos.c ---- */
/* The Lanczos scratch of a T×T Gram matrix in buf (Measure_lanczos_size(T) doubles), holding no
   steps. */
Lanczos lanczos_carve(double *buf, int T);
/* Lanczos on gram, carried on from the steps l holds, until its top Ritz pair is accurate
   enough: 1 (the vector in l->next), 0 (not worth finishing) or a failure's status. */
int lanczos_top_vector(Linalg *la, int T, const double *gram, double gram2, Lanczos *l,
                       double bound_tolerance);
/* ‖G‖_F² and the trace of G, from the lower triangle. */
double gram_norm2(int T, const double *gram);
double gram_trace(int T, const double *gram);
/* sr − 1 by the top eigenpair, or NaN where its certificate does not hold. */
double top_eigenpair_rest(Linalg *la, int T, const double *gram, double gram2, Lanczos *l,
                          double *top, int *status);

/* ---- measure_flat.c ---- */
/* sr − 1 by the flat-spectrum route, or NaN where it is not certified. */
double flat_top_rest(Linalg *la, int T, double *gram, double norm2, Lanczos *l, FlatRoute *flat,
                     double *top, int *status);

/* ---- measure_bound.c ---- */
/* The shift the Cholesky proof tries above Lanczos's top Ritz value. */
double trial_shift(int n, double theta, double residual);
/* λ1(Ĝ) + gram_rounding·tr Ĝ bounded by the Cholesky factorisation of shift·I − Ĝ (NaN where
   it proves nothing); unless gram_bound is NULL, Ĝ's own λ1 too.  factor may be gram. */
int cholesky_top_bound(Linalg *la, int n, const double *gram, double shift, double gram_rounding,
                       double *factor, double *bound, double *gram_bound);
/* ‖X‖₂² bounded from the Gram matrix Ĝ (n×n of m-term products) of X (NaN: not proved); keep
   (or NULL): what the flat-spectrum route takes of the proof. */
int gram_norm2_squared_bound(Linalg *la, int n, int m, const double *gram, double *factor,
                             Lanczos *l, double *bound, TopProof *keep);

/* ---- measure.c ---- */
/* The lower triangle of XᵀX (d×d) through a transposed copy, and of the smaller side's Gram
   matrix (XXᵀ or XᵀX). */
int column_gram(Linalg *la, int T, int d, const double *x, double *transposed, double *gram);
int smaller_gram(Linalg *la, int T, int d, const double *x, double *transposed, double *gram);
/* The lower triangle of gram (T×T) mirrored into the upper one, its diagonal into `diagonal`
   (T); and the lower triangle and diagonal put back from them, the same bits. */
void gram_mirror(int T, double *gram, double *diagonal);
void gram_restore(int T, double *gram, const double *diagonal);

#endif
