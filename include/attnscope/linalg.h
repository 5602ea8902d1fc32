/* LAPACK with kept workspaces.  All matrices are column-major with leading dimension equal
 * to their row count.  Each call asks LAPACK for its workspace size and grows the kept
 * buffers only when a larger problem arrives, so repeated calls do not allocate.
 * Every function returns 0, or -1 (out of memory) / the LAPACK info (> 0: no convergence);
 * the long calls and the product may also return LINALG_STOPPED.
 *
 * Stopping.  One LAPACK call cannot be interrupted from inside, and at T = 4096 dgeev runs
 * for a quarter of a minute.  The core starts no process and knows no OS, so it offers hooks: the
 * long calls (eigenvalues, singular values, SVD, symmetric eigenvalues, Gram matrix, QR,
 * Cholesky) are
 * described as a LinalgCall and handed to an isolation hook, which may run them somewhere they can
 * be killed (src/common/isolate.c runs them in a child process) and polls the stop hook while it
 * waits.  The matrix product is stopped from here, between blocks of its columns, and so is the
 * QR where it runs in process, between panels of 32 columns.  Without hooks every call runs in
 * process and to its end.
 */
#ifndef ATTNSCOPE_LINALG_H
#define ATTNSCOPE_LINALG_H

#include "attnscope/hessenberg_tuning.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct Linalg Linalg;

/* Statuses besides 0 and LAPACK's info, clear of LAPACKE's own negative codes (>= -1011). */
enum {
    LINALG_OUT_OF_MEMORY = -1,
    /* The stop hook asked; the call was abandoned and its outputs are undefined. */
    LINALG_STOPPED = -3000,
    /* Returned by an isolation hook only: it did not run the call, the core runs it here. */
    LINALG_NOT_ISOLATED = -3001,
};

/* The calls an isolation hook may be given.  The first `inputs` arrays are read (array[0],
   the matrix, is destroyed unless said otherwise), all but array[0] are written; the sizes
   are Linalg_call_sizes'. */
typedef enum {
    LINALG_EIGENVALUES,           /* dgeev: a (n×n); re, im (n) */
    LINALG_SINGULAR_VALUES,       /* dgesdd 'N': a (m×n); s (min(m, n)) */
    LINALG_SVD,                   /* dgesdd 'S', m = n: a; s (n); u, vt (n×n) */
    LINALG_SYMMETRIC_EIGENVALUES, /* dsyevd: a (n×n, lower triangle); w (n) */
    LINALG_GRAM,                  /* dsyrk: a (m×n, kept); c (m×m, lower triangle) */
    LINALG_ORTHONORMAL,           /* dgeqrf + dorgqr: a (m×n, m >= n); q (m×n, may be a) */
    LINALG_SOLVE,                 /* dgetrf + dgecon + dgetrs: a (n×n); b (n, in and out); rcond */
    LINALG_CHOLESKY,              /* dpotrf: a (n×n, lower triangle); backward error bound (1) */
    LINALG_ROUTINES
} LinalgRoutine;

enum { LINALG_CALL_ARRAYS = 4 };

typedef struct {
    LinalgRoutine routine;
    int m, n;
    /* The caller's OpenBLAS threads: whoever runs the call uses as many, so the same
       blocking gives the same bits. */
    int blas_threads;
    int arrays, inputs;
    double *array[LINALG_CALL_ARRAYS];
    size_t size[LINALG_CALL_ARRAYS]; /* in doubles */
} LinalgCall;

typedef struct {
    bool (*requested)(void *context); /* thread-safe; true: stop as soon as possible */
    void *context;
} LinalgStop;

typedef struct {
    /* Runs call and returns its status, LINALG_STOPPED when stop.requested said so while it
       ran, or LINALG_NOT_ISOLATED to leave the call to the core (a small call, or isolation
       unavailable).  Called from the Linalg's thread. */
    int (*run)(void *context, const LinalgCall *call, LinalgStop stop);
    void *context;
} LinalgIsolation;

/* What a Linalg ran since it was made or reset: the tests compare it with the work a plan
   declares (cost.c), so that the declaration cannot drift from the run. */
typedef struct {
    double product_flops; /* Linalg_gemm: 2·m·n·k per product */
    double gram_flops;    /* Linalg_gram: m·m·n per call (dsyrk's lower triangle) */
    int calls[LINALG_ROUTINES];
    double
        size_cubed[LINALG_ROUTINES]; /* Σ m·n·min(m, n) over the calls, which tells sizes apart */
} LinalgTally;

Linalg *Linalg_new(void);
void Linalg_free(Linalg *la);

/* Hooks for the long calls and the product; a zeroed struct removes them. */
void Linalg_set_isolation(Linalg *la, LinalgIsolation isolation);
void Linalg_set_stop(Linalg *la, LinalgStop stop);

/* The number of arrays of routine at m×n and their sizes in doubles; 0 when routine, m or n
   is out of range.  An isolation hook rebuilds a call from (routine, m, n) with these. */
int Linalg_call_sizes(LinalgRoutine routine, int m, int n, size_t size[LINALG_CALL_ARRAYS]);

/* Runs call here, with la's kept workspace: what an isolation hook's worker runs, after
   setting call->blas_threads. */
int Linalg_execute(Linalg *la, const LinalgCall *call);

/* Adds what la ran to *tally; then forgets it when reset is set. */
void Linalg_tally_take(Linalg *la, LinalgTally *tally, bool reset);

/* Sets the number of OpenBLAS threads (the process-wide BLAS setting).  One thread also
   stops OpenBLAS's idle thread pool, which would otherwise spin on a core for ~0.1 s after
   the library loads; more threads start it again. */
void Linalg_set_blas_threads(int threads);
int Linalg_blas_threads(void);

/* C = alpha·op(A)·op(B) + beta·C, as cblas_dgemm in column-major order (op(A) is m×k,
   op(B) k×n, C m×n).  With a stop hook and one BLAS thread, a large product runs in blocks
   of C's columns of ~0.1 s each and polls the hook before each; bit-identical to one
   cblas_dgemm call.  Returns 0 or LINALG_STOPPED (C then partly updated). */
int Linalg_gemm(Linalg *la, bool transpose_a, bool transpose_b, int m, int n, int k, double alpha,
                const double *a, int lda, const double *b, int ldb, double beta, double *c,
                int ldc);

/* True when the stop hook asks to stop: for loops of short calls that poll it themselves
   (and then return LINALG_STOPPED). */
bool Linalg_stop_requested(const Linalg *la);

/* The lower triangle of the m×m Gram matrix c = a·aᵀ of the m×n matrix a (kept), as
   cblas_dsyrk.  One call, as long as a product at m = n: a long call (isolated), since
   splitting it would change its bits. */
int Linalg_gram(Linalg *la, int m, int n, const double *a, double *c);

/* The four spectral calls below: where a holds a NaN or an infinity (the symmetric call reads
   only the lower triangle), every output is NaN and the status 0, LAPACK is not called. */

/* Eigenvalues of the n×n matrix a (destroyed). */
int Linalg_eigenvalues(Linalg *la, int n, double *a, double *re, double *im);
/* The shift count and deflation window of the Hessenberg QR inside Linalg_eigenvalues at
   order n: hessenberg_tuning.c's table, which every executable linking this file gives
   OpenBLAS's dhseqr in place of LAPACK's defaults. */
HessenbergChoice Linalg_eigenvalue_tuning(int n);

/* Singular values of the m×n matrix a (destroyed), descending. */
int Linalg_singular_values(Linalg *la, int m, int n, double *a, double *s);

/* Thin SVD of the n×n matrix a (destroyed): a = u·diag(s)·vt. */
int Linalg_svd(Linalg *la, int n, double *a, double *s, double *u, double *vt);

/* Eigenvalues of the symmetric n×n matrix a (lower triangle used, destroyed), ascending. */
int Linalg_symmetric_eigenvalues(Linalg *la, int n, double *a, double *w);

/* The largest eigenvalue of the symmetric tridiagonal n×n matrix with diagonal diag (n) and
   off-diagonal offdiag (n − 1), both destroyed, and its unit eigenvector (n). */
int Linalg_tridiagonal_top_eigenpair(Linalg *la, int n, double *diag, double *offdiag,
                                     double *value, double *vector);

/* Solves a·x = b for one right-hand side (a destroyed, b overwritten by x) and reports the
   reciprocal condition number of a in the 1-norm. */
int Linalg_solve(Linalg *la, int n, double *a, double *b, double *rcond);

/* Whether the symmetric n×n matrix a (lower triangle used, destroyed) is positive definite,
   proved by its Cholesky factorisation: 0 when dpotrf ran to completion, LAPACK's info > 0
   when it met a non-positive pivot.  On 0, *backward_error bounds ‖E‖₂ of the E with
   a + E = L̂L̂ᵀ exactly for the computed factor L̂ (Higham, Accuracy and Stability of Numerical
   Algorithms, 2nd ed., Thm 10.3: |E| ≤ γ_{n+1}·|L̂||L̂ᵀ|, any order of the inner products), so
   λ_min(a) ≥ −*backward_error. */
int Linalg_cholesky(Linalg *la, int n, double *a, double *backward_error);

/* γ_k = k·u/(1 − k·u), u the unit round-off: the relative error bound of k rounded operations
   in a row (Higham §3.1), for the proofs built on these calls. */
double Linalg_rounding_gamma(double k);

/* Orthonormal Q of the thin QR factorisation of the m×n matrix a (m >= n), in place, with
   the signs fixed so that diag(R) > 0.  In process it polls the stop hook every 32 columns
   (LINALG_STOPPED: a then undefined); its bits are one dgeqrf and one dorgqr's. */
int Linalg_orthonormalise(Linalg *la, int m, int n, double *a);

#endif
