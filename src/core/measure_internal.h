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

/* Scratch of the top-eigenpair route, carved from the caller's `lanczos` buffer. */
typedef struct {
    double *basis;          /* T × steps: the Lanczos vectors */
    double *next;           /* T: G·q before orthogonalisation, then the Ritz vector */
    double *product;        /* T: G times the Ritz vector */
    double *alpha, *beta;   /* steps: the tridiagonal's diagonal and off-diagonal */
    double *diag, *offdiag; /* steps: their copies, which LAPACK destroys */
    double *overlap;        /* steps: coefficients of one Gram–Schmidt pass */
    double *ritz;           /* steps: the top Ritz vector in the Lanczos basis */
    double theta, residual; /* the last step's top Ritz value and its residual estimate */
    int done; /* out: steps whose next basis vector was formed (see lanczos_top_vector) */
} Lanczos;

/* What the proof of ‖X‖₂² (input_bound) leaves for the flat-spectrum route on the same Ĝ: the
   same Lanczos (start, steps, stopping residual) and the same trial shift as the route's own, so
   its vector, shift and λ1(Ĝ)'s bound serve as they are, the same bits. */
typedef struct {
    double *vector; /* T: Lanczos's top Ritz vector, copied out of the scratch */
    double shift;
    double high;   /* λ1(Ĝ)'s proved bound; NaN where the factorisation proved nothing */
    bool factored; /* whether the Lanczos and the factorisation ran */
    /* The steps its Lanczos left in its scratch (l->done; 0: it did not run), which the
       top-eigenpair route carries on from where that scratch is the route's own. */
    int lanczos_done;
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
    /* The steps the top-eigenpair route's Lanczos on the same Ĝ left in the scratch, which the
       route's own carries on from (the same start and steps: not done twice). */
    int lanczos_done;
} FlatRoute;

/* ---- measure_lanczos.c ---- */
/* The scratch of the top-eigenpair route, carved from the caller's `lanczos` buffer. */
Lanczos lanczos_carve(double *buf, int T);
/* Lanczos on gram until its top Ritz pair is accurate enough: 1 (the vector in l->next), 0
   (not worth finishing) or a failure's status. */
int lanczos_top_vector(Linalg *la, int T, const double *gram, double gram2, Lanczos *l,
                       double bound_tolerance, int reuse);
/* ‖G‖_F² and the trace of G, from the lower triangle. */
double gram_norm2(int T, const double *gram);
double gram_trace(int T, const double *gram);
/* sr − 1 by the top eigenpair, or NaN where its certificate does not hold. */
double top_eigenpair_rest(Linalg *la, int T, const double *gram, double gram2, double *lanczos,
                          double *top, int *status, int *done);

/* ---- measure_flat.c ---- */
/* sr − 1 by the flat-spectrum route, or NaN where it is not certified. */
double flat_top_rest(Linalg *la, int T, double *gram, double norm2, double *lanczos,
                     FlatRoute *flat, double *top, int *status);

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
                             double *lanczos, double *bound, TopProof *keep);

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
