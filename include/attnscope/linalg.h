/* LAPACK with kept workspaces.  All matrices are column-major with leading dimension equal
 * to their row count.  Each call asks LAPACK for its workspace size and grows the kept
 * buffers only when a larger problem arrives, so repeated calls do not allocate.
 * Every function returns 0, or -1 (out of memory) / the LAPACK info (> 0: no convergence).
 */
#ifndef ATTNSCOPE_LINALG_H
#define ATTNSCOPE_LINALG_H

typedef struct Linalg Linalg;

Linalg *Linalg_new(void);
void Linalg_free(Linalg *la);

/* Sets the number of OpenBLAS threads (the process-wide BLAS setting).  One thread also
   stops OpenBLAS's idle thread pool, which would otherwise spin on a core for ~0.1 s after
   the library loads; more threads start it again. */
void Linalg_set_blas_threads(int threads);
int Linalg_blas_threads(void);

/* Eigenvalues of the n×n matrix a (destroyed). */
int Linalg_eigenvalues(Linalg *la, int n, double *a, double *re, double *im);

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

/* Orthonormal Q of the thin QR factorisation of the m×n matrix a (m >= n), in place, with
   the signs fixed so that diag(R) > 0. */
int Linalg_orthonormalise(Linalg *la, int m, int n, double *a);

#endif
