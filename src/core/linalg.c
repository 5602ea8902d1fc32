#include "attnscope/linalg.h"

#include <cblas.h>
#include <dlfcn.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>

struct Linalg {
    double *work;
    size_t work_size;
    lapack_int *iwork;
    size_t iwork_size;
    double *scratch; /* n-vectors and n×n helpers the calls need besides LAPACK's work */
    size_t scratch_size;
};

Linalg *Linalg_new(void)
{
    return calloc(1, sizeof(Linalg));
}

void Linalg_free(Linalg *la)
{
    if (!la)
        return;
    free(la->work);
    free(la->iwork);
    free(la->scratch);
    free(la);
}

/* OpenBLAS starts its thread pool when it is loaded, and an idle pool thread spins for
   OPENBLAS_THREAD_TIMEOUT (2^28 cycles, ~0.1 s) before it sleeps: read before main, so it
   cannot be lowered from here.  With one BLAS thread the pool never gets work, so it is shut
   down instead (the call OpenBLAS's own fork handler makes; a BLAS built without it, or
   without a pool, has no such symbol and nothing to stop).  A later call with more threads
   starts the pool again. */
static void stop_idle_blas_pool(void)
{
    int (*shutdown)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
    if (shutdown)
        shutdown();
}

void Linalg_set_blas_threads(int threads)
{
    openblas_set_num_threads(threads);
    if (threads == 1)
        stop_idle_blas_pool();
}

int Linalg_blas_threads(void)
{
    return openblas_get_num_threads();
}

static int grow(void **buf, size_t *have, size_t need, size_t elem)
{
    if (need <= *have)
        return 0;
    void *p = realloc(*buf, need * elem);
    if (!p)
        return -1;
    *buf = p;
    *have = need;
    return 0;
}

static int reserve(Linalg *la, double work_query, size_t iwork_need, size_t scratch_need)
{
    size_t need = (size_t)work_query + 1;
    if (grow((void **)&la->work, &la->work_size, need, sizeof(double)) ||
        grow((void **)&la->iwork, &la->iwork_size, iwork_need ? iwork_need : 1,
             sizeof(lapack_int)) ||
        grow((void **)&la->scratch, &la->scratch_size, scratch_need ? scratch_need : 1,
             sizeof(double)))
        return -1;
    return 0;
}

int Linalg_eigenvalues(Linalg *la, int n, double *a, double *re, double *im)
{
    double query;
    double dummy = 0;
    lapack_int info = LAPACKE_dgeev_work(LAPACK_COL_MAJOR, 'N', 'N', n, a, n, re, im, &dummy, 1,
                                         &dummy, 1, &query, -1);
    if (info)
        return (int)info;
    if (reserve(la, query, 0, 0))
        return -1;
    return (int)LAPACKE_dgeev_work(LAPACK_COL_MAJOR, 'N', 'N', n, a, n, re, im, &dummy, 1, &dummy,
                                   1, la->work, (lapack_int)la->work_size);
}

int Linalg_singular_values(Linalg *la, int m, int n, double *a, double *s)
{
    double query;
    double dummy = 0;
    int k = m < n ? m : n;
    size_t iwork = 8 * (size_t)k;
    if (grow((void **)&la->iwork, &la->iwork_size, iwork, sizeof(lapack_int)))
        return -1;
    lapack_int info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'N', m, n, a, m, s, &dummy, 1, &dummy,
                                          1, &query, -1, la->iwork);
    if (info)
        return (int)info;
    if (reserve(la, query, iwork, 0))
        return -1;
    return (int)LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'N', m, n, a, m, s, &dummy, 1, &dummy, 1,
                                    la->work, (lapack_int)la->work_size, la->iwork);
}

int Linalg_svd(Linalg *la, int n, double *a, double *s, double *u, double *vt)
{
    double query;
    size_t iwork = 8 * (size_t)n;
    if (grow((void **)&la->iwork, &la->iwork_size, iwork, sizeof(lapack_int)))
        return -1;
    lapack_int info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'S', n, n, a, n, s, u, n, vt, n, &query,
                                          -1, la->iwork);
    if (info)
        return (int)info;
    if (reserve(la, query, iwork, 0))
        return -1;
    return (int)LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'S', n, n, a, n, s, u, n, vt, n, la->work,
                                    (lapack_int)la->work_size, la->iwork);
}

int Linalg_symmetric_eigenvalues(Linalg *la, int n, double *a, double *w)
{
    double query;
    lapack_int iquery;
    lapack_int info =
        LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'N', 'L', n, a, n, w, &query, -1, &iquery, -1);
    if (info)
        return (int)info;
    if (reserve(la, query, (size_t)iquery, 0))
        return -1;
    return (int)LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'N', 'L', n, a, n, w, la->work,
                                    (lapack_int)la->work_size, la->iwork,
                                    (lapack_int)la->iwork_size);
}

int Linalg_tridiagonal_top_eigenpair(Linalg *la, int n, double *diag, double *offdiag,
                                     double *value, double *vector)
{
    /* dstevx: bisection for the one eigenvalue, inverse iteration for its vector; ifail
       (n integers) follows dstevx's own 5n. */
    if (reserve(la, 5.0 * n, 6 * (size_t)n, (size_t)n))
        return -1;
    lapack_int found;
    lapack_int info = LAPACKE_dstevx_work(LAPACK_COL_MAJOR, 'V', 'I', n, diag, offdiag, 0.0, 0.0, n,
                                          n, 0.0, &found, la->scratch, vector, n, la->work,
                                          la->iwork, la->iwork + 5 * (size_t)n);
    if (info)
        return (int)info;
    *value = la->scratch[0];
    return found == 1 ? 0 : 1;
}

int Linalg_solve(Linalg *la, int n, double *a, double *b, double *rcond)
{
    /* n pivots, then the n integers dgecon needs. */
    if (reserve(la, 4.0 * n, 2 * (size_t)n, 0))
        return -1;
    double anorm = LAPACKE_dlange_work(LAPACK_COL_MAJOR, '1', n, n, a, n, la->work);
    lapack_int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, a, n, la->iwork);
    if (info > 0) { /* exactly singular */
        *rcond = 0;
        return 0;
    }
    if (info)
        return (int)info;
    info =
        LAPACKE_dgecon_work(LAPACK_COL_MAJOR, '1', n, a, n, anorm, rcond, la->work, la->iwork + n);
    if (info)
        return (int)info;
    return (int)LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', n, 1, a, n, la->iwork, b, n);
}

int Linalg_orthonormalise(Linalg *la, int m, int n, double *a)
{
    double query_qrf, query_orgqr;
    double *tau;
    if (grow((void **)&la->scratch, &la->scratch_size, 2 * (size_t)n, sizeof(double)))
        return -1;
    tau = la->scratch;
    lapack_int info = LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a, m, tau, &query_qrf, -1);
    if (info)
        return (int)info;
    info = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, n, a, m, tau, &query_orgqr, -1);
    if (info)
        return (int)info;
    if (reserve(la, fmax(query_qrf, query_orgqr), 0, 2 * (size_t)n))
        return -1;
    tau = la->scratch;
    double *diag_sign = la->scratch + n;
    info =
        LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a, m, tau, la->work, (lapack_int)la->work_size);
    if (info)
        return (int)info;
    for (int j = 0; j < n; j++)
        diag_sign[j] = a[j + (size_t)j * m] < 0 ? -1.0 : 1.0;
    info = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, n, a, m, tau, la->work,
                               (lapack_int)la->work_size);
    if (info)
        return (int)info;
    for (int j = 0; j < n; j++)
        if (diag_sign[j] < 0)
            cblas_dscal(m, -1.0, a + (size_t)j * m, 1);
    return 0;
}
