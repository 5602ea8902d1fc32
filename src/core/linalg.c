#include "attnscope/linalg.h"

#include <cblas.h>
#include <dlfcn.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct Linalg {
    LinalgIsolation isolation;
    LinalgStop stop;
    double *work;
    size_t work_size;
    lapack_int *iwork;
    size_t iwork_size;
    /* The lengths the call being made asked for (reserve), which it is given: never the kept
       buffers' sizes, which earlier, larger calls set, and from which LAPACK would pick
       another blocking (and other bits) than a fresh Linalg's. */
    lapack_int work_length, iwork_length;
    double *scratch; /* n-vectors and n×n helpers the calls need besides LAPACK's work */
    size_t scratch_size;
    LinalgTally tally;
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

void Linalg_set_isolation(Linalg *la, LinalgIsolation isolation)
{
    la->isolation = isolation;
}

void Linalg_set_stop(Linalg *la, LinalgStop stop)
{
    la->stop = stop;
}

bool Linalg_stop_requested(const Linalg *la)
{
    return la->stop.requested && la->stop.requested(la->stop.context);
}

void Linalg_tally_take(Linalg *la, LinalgTally *tally, bool reset)
{
    tally->product_flops += la->tally.product_flops;
    tally->gram_flops += la->tally.gram_flops;
    for (int r = 0; r < LINALG_ROUTINES; r++) {
        tally->calls[r] += la->tally.calls[r];
        tally->size_cubed[r] += la->tally.size_cubed[r];
    }
    if (reset)
        memset(&la->tally, 0, sizeof la->tally);
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

/* LAPACK's work arrays start on a cache line, wherever malloc would put them: some of
   OpenBLAS's vector kernels (Haswell's on a CPU with AVX-512, for one) sum a misaligned start
   apart, in another order, so dgecon's estimate in an isolated worker would differ in its last
   bit from the same call in process. */
enum { LINALG_WORK_ALIGN = 64 };

static int grow(void **buf, size_t *have, size_t need, size_t elem)
{
    if (need <= *have)
        return 0;
    size_t bytes = (need * elem + LINALG_WORK_ALIGN - 1) / LINALG_WORK_ALIGN * LINALG_WORK_ALIGN;
    void *p = aligned_alloc(LINALG_WORK_ALIGN, bytes);
    if (!p)
        return -1;
    if (*have)
        memcpy(p, *buf, *have * elem);
    free(*buf);
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
        return LINALG_OUT_OF_MEMORY;
    la->work_length = (lapack_int)need;
    la->iwork_length = (lapack_int)(iwork_need ? iwork_need : 1);
    return 0;
}

/* Columns of C per block of Linalg_gemm: 2·m·k·columns ≈ 2^32 flops, and at least 192
   columns; at T = d = 4096 that is 192 columns, at most ~0.1 s on one core, so a stop waits
   no longer.  A block boundary must not change how OpenBLAS adds up any element of C.  It
   blocks k by k alone, so each element sums over k in the same order; but its kernels take
   the columns in groups counted from the first (12 at a time in the SkylakeX/Cooperlake
   kernel, 24 in Haswell's, then smaller ones for the rest), and a column computed in a group
   of another width may round differently.  Blocks that start at multiples of 192 columns cut
   only between the groups one call would form.  All this holds on one BLAS thread; with more,
   OpenBLAS divides the columns among its threads at points of its own, and the product is
   left whole. */
#define GEMM_BLOCK_FLOPS 4294967296.0
enum { GEMM_BLOCK_ALIGN = 192 };

int Linalg_gemm(Linalg *la, bool transpose_a, bool transpose_b, int m, int n, int k, double alpha,
                const double *a, int lda, const double *b, int ldb, double beta, double *c, int ldc)
{
    int columns = n;
    double flops_per_column = 2.0 * m * k;
    la->tally.product_flops += flops_per_column * n;
    if (la->stop.requested && flops_per_column > 0 && Linalg_blas_threads() == 1) {
        double aligned = floor(GEMM_BLOCK_FLOPS / (flops_per_column * GEMM_BLOCK_ALIGN));
        double fit = fmax(aligned, 1.0) * GEMM_BLOCK_ALIGN;
        if (fit < n)
            columns = (int)fit;
    }
    for (int j = 0; j < n;) {
        if (Linalg_stop_requested(la))
            return LINALG_STOPPED;
        /* A short last block joins the one before: OpenBLAS has separate kernels, summing in
           another order, for small products, and a block of `columns` is never small. */
        int width = n - j < 2 * columns ? n - j : columns;
        const double *b_block = transpose_b ? b + j : b + (size_t)j * ldb;
        cblas_dgemm(CblasColMajor, transpose_a ? CblasTrans : CblasNoTrans,
                    transpose_b ? CblasTrans : CblasNoTrans, m, width, k, alpha, a, lda, b_block,
                    ldb, beta, c + (size_t)j * ldc, ldc);
        j += width;
    }
    return 0;
}

static int eigenvalues_here(Linalg *la, int n, double *a, double *re, double *im)
{
    double query;
    double dummy = 0;
    lapack_int info = LAPACKE_dgeev_work(LAPACK_COL_MAJOR, 'N', 'N', n, a, n, re, im, &dummy, 1,
                                         &dummy, 1, &query, -1);
    if (info)
        return (int)info;
    if (reserve(la, query, 0, 0))
        return LINALG_OUT_OF_MEMORY;
    return (int)LAPACKE_dgeev_work(LAPACK_COL_MAJOR, 'N', 'N', n, a, n, re, im, &dummy, 1, &dummy,
                                   1, la->work, la->work_length);
}

static int singular_values_here(Linalg *la, int m, int n, double *a, double *s)
{
    double query;
    double dummy = 0;
    int k = m < n ? m : n;
    size_t iwork = 8 * (size_t)k;
    if (grow((void **)&la->iwork, &la->iwork_size, iwork, sizeof(lapack_int)))
        return LINALG_OUT_OF_MEMORY;
    lapack_int info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'N', m, n, a, m, s, &dummy, 1, &dummy,
                                          1, &query, -1, la->iwork);
    if (info)
        return (int)info;
    if (reserve(la, query, iwork, 0))
        return LINALG_OUT_OF_MEMORY;
    return (int)LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'N', m, n, a, m, s, &dummy, 1, &dummy, 1,
                                    la->work, la->work_length, la->iwork);
}

static int svd_here(Linalg *la, int n, double *a, double *s, double *u, double *vt)
{
    double query;
    size_t iwork = 8 * (size_t)n;
    if (grow((void **)&la->iwork, &la->iwork_size, iwork, sizeof(lapack_int)))
        return LINALG_OUT_OF_MEMORY;
    lapack_int info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'S', n, n, a, n, s, u, n, vt, n, &query,
                                          -1, la->iwork);
    if (info)
        return (int)info;
    if (reserve(la, query, iwork, 0))
        return LINALG_OUT_OF_MEMORY;
    return (int)LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'S', n, n, a, n, s, u, n, vt, n, la->work,
                                    la->work_length, la->iwork);
}

static int symmetric_eigenvalues_here(Linalg *la, int n, double *a, double *w)
{
    double query;
    lapack_int iquery;
    lapack_int info =
        LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'N', 'L', n, a, n, w, &query, -1, &iquery, -1);
    if (info)
        return (int)info;
    if (reserve(la, query, (size_t)iquery, 0))
        return LINALG_OUT_OF_MEMORY;
    return (int)LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'N', 'L', n, a, n, w, la->work,
                                    la->work_length, la->iwork, la->iwork_length);
}

static int orthonormal_here(Linalg *la, int m, int n, double *a);
static int solve_here(Linalg *la, int n, double *a, double *b, double *rcond);

double Linalg_rounding_gamma(double k)
{
    double ku = k * (DBL_EPSILON / 2);
    return ku / (1 - ku);
}

/* dpotrf, then γ_{n+1}·‖|L̂||L̂ᵀ|‖_∞ ≥ ‖E‖₂ (E symmetric: ‖E‖₂ ≤ ‖E‖_∞ ≤ γ_{n+1}‖|L̂||L̂ᵀ|‖_∞):
   row i of |L̂||L̂ᵀ| sums to Σ_k |L̂_ik|·c_k with c_k the k-th column's sum of |L̂_jk|, O(n²).
   The rows are summed column by column into la's scratch (each row still in the order
   k = 0, 1, …, i), so the factor is read down its columns: row by row, each step would be a
   stride of n doubles, a cache miss.  The sums are rounded upwards by the factor
   (1 + γ_{2n}), far below the bound itself. */
static int cholesky_here(Linalg *la, int n, double *a, double *backward_error)
{
    if (grow((void **)&la->scratch, &la->scratch_size, (size_t)n, sizeof(double)))
        return LINALG_OUT_OF_MEMORY;
    int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, a, n);
    if (info)
        return info;
    double *row = la->scratch;
    for (int k = 0; k < n; k++) {
        const double *column = a + (size_t)k * n;
        double c = 0;
        for (int j = k; j < n; j++)
            c += fabs(column[j]);
        if (k == 0)
            for (int i = 0; i < n; i++)
                row[i] = fabs(column[i]) * c;
        else
            for (int i = k; i < n; i++)
                row[i] += fabs(column[i]) * c;
    }
    double worst = 0;
    for (int i = 0; i < n; i++)
        worst = row[i] > worst ? row[i] : worst;
    *backward_error = Linalg_rounding_gamma(n + 1.0) * worst * (1 + Linalg_rounding_gamma(2.0 * n));
    return 0;
}

static int gram_here(int m, int n, const double *a, double *c)
{
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, m, n, 1.0, a, m, 0.0, c, m);
    return 0;
}

int Linalg_call_sizes(LinalgRoutine routine, int m, int n, size_t size[LINALG_CALL_ARRAYS])
{
    bool rectangular = routine == LINALG_SINGULAR_VALUES || routine == LINALG_GRAM ||
                       routine == LINALG_ORTHONORMAL;
    if (m < 0 || n < 0 || (!rectangular && m != n) || (routine == LINALG_ORTHONORMAL && m < n))
        return 0;
    size_t square = (size_t)n * n, k = (size_t)(m < n ? m : n);
    switch (routine) {
    case LINALG_EIGENVALUES:
        size[0] = square;
        size[1] = size[2] = (size_t)n;
        return 3;
    case LINALG_SINGULAR_VALUES:
        size[0] = (size_t)m * n;
        size[1] = k;
        return 2;
    case LINALG_SVD:
        size[0] = size[2] = size[3] = square;
        size[1] = (size_t)n;
        return 4;
    case LINALG_SYMMETRIC_EIGENVALUES:
        size[0] = square;
        size[1] = (size_t)n;
        return 2;
    case LINALG_GRAM:
        size[0] = (size_t)m * n;
        size[1] = (size_t)m * m;
        return 2;
    case LINALG_ORTHONORMAL:
        size[0] = size[1] = (size_t)m * n;
        return 2;
    case LINALG_SOLVE:
        size[0] = square;
        size[1] = (size_t)n;
        size[2] = 1;
        return 3;
    case LINALG_CHOLESKY:
        size[0] = square;
        size[1] = 1;
        return 2;
    case LINALG_ROUTINES:
        break;
    }
    return 0;
}

/* Whether a spectral call's matrix holds a NaN or infinity, with its outputs then all NaN.
   LAPACK has no answer for one: dgesdd refuses a NaN (LAPACKE's info −5) and on an infinity
   prints its complaint to stdout (inside --batch's document) and answers nonsense.  A finite
   checkpoint's products can overflow (docs/weights.md), so such a matrix is no bug: its
   values are unknown, and the callers' nulls follow from the NaN. */
static bool no_spectrum(const LinalgCall *call)
{
    bool spectral = call->routine == LINALG_EIGENVALUES ||
                    call->routine == LINALG_SINGULAR_VALUES || call->routine == LINALG_SVD ||
                    call->routine == LINALG_SYMMETRIC_EIGENVALUES;
    bool finite = true, lower = call->routine == LINALG_SYMMETRIC_EIGENVALUES;
    size_t rows = (size_t)call->m; /* column-major: entry (i, j) at i + j·m */
    for (size_t i = 0; spectral && finite && i < call->size[0]; i++)
        finite = (lower && i % rows < i / rows) || isfinite(call->array[0][i]);
    if (!spectral || finite)
        return false;
    for (int a = 1; a < call->arrays; a++)
        for (size_t i = 0; i < call->size[a]; i++)
            call->array[a][i] = NAN;
    return true;
}

int Linalg_execute(Linalg *la, const LinalgCall *call)
{
    double *const *x = call->array;
    if (no_spectrum(call))
        return 0;
    switch (call->routine) {
    case LINALG_EIGENVALUES:
        return eigenvalues_here(la, call->n, x[0], x[1], x[2]);
    case LINALG_SINGULAR_VALUES:
        return singular_values_here(la, call->m, call->n, x[0], x[1]);
    case LINALG_SVD:
        return svd_here(la, call->n, x[0], x[1], x[2], x[3]);
    case LINALG_SYMMETRIC_EIGENVALUES:
        return symmetric_eigenvalues_here(la, call->n, x[0], x[1]);
    case LINALG_GRAM:
        return gram_here(call->m, call->n, x[0], x[1]);
    case LINALG_ORTHONORMAL:
        /* In place when the caller gave one array for both (Linalg_orthonormalise does). */
        if (x[1] != x[0])
            memcpy(x[1], x[0], call->size[1] * sizeof(double));
        return orthonormal_here(la, call->m, call->n, x[1]);
    case LINALG_SOLVE:
        return solve_here(la, call->n, x[0], x[1], x[2]);
    case LINALG_CHOLESKY:
        return cholesky_here(la, call->n, x[0], x[1]);
    case LINALG_ROUTINES:
        break;
    }
    return -1; /* LAPACK's "the first argument is illegal" */
}

/* A long call goes to the isolation hook when there is one, which may hand it back. */
static int long_call(Linalg *la, LinalgRoutine routine, int m, int n, double *a, double *out1,
                     double *out2, double *out3)
{
    LinalgCall call = {.routine = routine,
                       .m = m,
                       .n = n,
                       .inputs = routine == LINALG_SOLVE ? 2 : 1,
                       .array = {a, out1, out2, out3}};
    call.arrays = Linalg_call_sizes(routine, m, n, call.size);
    la->tally.calls[routine]++;
    la->tally.size_cubed[routine] += (double)m * n * (m < n ? m : n);
    if (routine == LINALG_GRAM)
        la->tally.gram_flops += (double)m * m * n;
    if (la->isolation.run && call.arrays) {
        call.blas_threads = Linalg_blas_threads();
        int status = la->isolation.run(la->isolation.context, &call, la->stop);
        if (status != LINALG_NOT_ISOLATED)
            return status;
    }
    return Linalg_execute(la, &call);
}

int Linalg_eigenvalues(Linalg *la, int n, double *a, double *re, double *im)
{
    return long_call(la, LINALG_EIGENVALUES, n, n, a, re, im, NULL);
}

HessenbergChoice Linalg_eigenvalue_tuning(int n)
{
    return Hessenberg_tuned(n);
}

int Linalg_singular_values(Linalg *la, int m, int n, double *a, double *s)
{
    return long_call(la, LINALG_SINGULAR_VALUES, m, n, a, s, NULL, NULL);
}

int Linalg_svd(Linalg *la, int n, double *a, double *s, double *u, double *vt)
{
    return long_call(la, LINALG_SVD, n, n, a, s, u, vt);
}

int Linalg_symmetric_eigenvalues(Linalg *la, int n, double *a, double *w)
{
    return long_call(la, LINALG_SYMMETRIC_EIGENVALUES, n, n, a, w, NULL, NULL);
}

int Linalg_gram(Linalg *la, int m, int n, const double *a, double *c)
{
    /* A call's arrays are writable, but the Gram matrix's input is only read, here and in an
       isolated worker (whose copy of it is never copied back). */
    return long_call(la, LINALG_GRAM, m, n, (double *)a, c, NULL, NULL);
}

int Linalg_cholesky(Linalg *la, int n, double *a, double *backward_error)
{
    return long_call(la, LINALG_CHOLESKY, n, n, a, backward_error, NULL, NULL);
}

int Linalg_orthonormalise(Linalg *la, int m, int n, double *a)
{
    /* Input and output are the same array: an isolated worker's copy comes back into it. */
    return long_call(la, LINALG_ORTHONORMAL, m, n, a, a, NULL, NULL);
}

int Linalg_tridiagonal_top_eigenpair(Linalg *la, int n, double *diag, double *offdiag,
                                     double *value, double *vector)
{
    /* dstevx: bisection for the one eigenvalue, inverse iteration for its vector; ifail
       (n integers) follows dstevx's own 5n. */
    if (reserve(la, 5.0 * n, 6 * (size_t)n, (size_t)n))
        return LINALG_OUT_OF_MEMORY;
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
    /* ~1 s at n = 4096 (the deflate gap mode's left Perron vector). */
    return long_call(la, LINALG_SOLVE, n, n, a, b, rcond, NULL);
}

static int solve_here(Linalg *la, int n, double *a, double *b, double *rcond)
{
    /* n pivots, then the n integers dgecon needs. */
    if (reserve(la, 4.0 * n, 2 * (size_t)n, 0))
        return LINALG_OUT_OF_MEMORY;
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

/* LAPACK's blocking of dgeqrf and dorgqr (ilaenv's block size 32 and crossover 128 for QRF
   and ORGQR), which the panels below repeat call for call: each panel is the very dgeqr2,
   dlarft, dlarfb or dorg2r call the whole routine makes, so the factor is the same to the bit
   (test_qr_stop compares it with one dgeqrf and one dorgqr), and the stop hook is polled
   between panels, every 32 columns.  In process (below isolate.c's 1536³: the QR of X0 and of
   the orthogonal initialisations) one call would run to its end after a stop, ~0.25 s of a
   core at 1536; an n×n call has about n/16 panels (57 at 1024, ~1.8 ms each), and a poll costs
   nothing beside one. */
enum { QR_PANEL = 32, QR_UNBLOCKED_BELOW = 128 };

/* A's Householder QR (m×n, m ≥ n, leading dimension m) into a and tau as dgeqrf makes it;
   work: QR_PANEL·n doubles.  0 or LINALG_STOPPED (a and tau then partly factored). */
static int qr_factor_in_panels(Linalg *la, int m, int n, double *a, double *tau, double *work)
{
    int i = 0;
    if (QR_PANEL < n && QR_UNBLOCKED_BELOW < n)
        for (; i < n - QR_UNBLOCKED_BELOW; i += QR_PANEL) {
            if (Linalg_stop_requested(la))
                return LINALG_STOPPED;
            double *panel = a + i + (size_t)i * m;
            int width = n - i < QR_PANEL ? n - i : QR_PANEL;
            lapack_int info =
                LAPACKE_dgeqr2_work(LAPACK_COL_MAJOR, m - i, width, panel, m, tau + i, work);
            if (!info && i + width < n) {
                /* The panel's reflectors as one block (T in work), applied to the columns
                   right of it. */
                info = LAPACKE_dlarft_work(LAPACK_COL_MAJOR, 'F', 'C', m - i, width, panel, m,
                                           tau + i, work, n);
                if (!info)
                    info = LAPACKE_dlarfb_work(LAPACK_COL_MAJOR, 'L', 'T', 'F', 'C', m - i,
                                               n - i - width, width, panel, m, work, n,
                                               panel + (size_t)width * m, m, work + width, n);
            }
            if (info)
                return (int)info;
        }
    if (i >= n)
        return 0;
    if (Linalg_stop_requested(la))
        return LINALG_STOPPED;
    return (int)LAPACKE_dgeqr2_work(LAPACK_COL_MAJOR, m - i, n - i, a + i + (size_t)i * m, m,
                                    tau + i, work);
}

/* The n orthonormal columns Q of the factored a (qr_factor_in_panels), in a, as dorgqr forms
   them: the last columns unblocked, then the panels from right to left.  work: QR_PANEL·n
   doubles.  0 or LINALG_STOPPED. */
static int qr_form_in_panels(Linalg *la, int m, int n, double *a, const double *tau, double *work)
{
    lapack_int lwork = (lapack_int)QR_PANEL * n, info = 0;
    int first = 0, blocked = 0; /* the panels cover columns [0, blocked) */
    if (QR_PANEL < n && QR_UNBLOCKED_BELOW < n) {
        first = (n - QR_UNBLOCKED_BELOW - 1) / QR_PANEL * QR_PANEL;
        blocked = n < first + QR_PANEL ? n : first + QR_PANEL;
        for (int j = blocked; j < n; j++)
            memset(a + (size_t)j * m, 0, sizeof(double) * (size_t)blocked);
    }
    if (blocked < n) {
        /* dorgqr on a block of at most 128 reflectors is dorg2r. */
        size_t at = (size_t)blocked + (size_t)blocked * m;
        info = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m - blocked, n - blocked, n - blocked, a + at,
                                   m, tau + blocked, work, lwork);
    }
    for (int i = first; blocked > 0 && i >= 0 && !info; i -= QR_PANEL) {
        if (Linalg_stop_requested(la))
            return LINALG_STOPPED;
        double *panel = a + i + (size_t)i * m;
        int width = n - i < QR_PANEL ? n - i : QR_PANEL;
        if (i + width < n) {
            info = LAPACKE_dlarft_work(LAPACK_COL_MAJOR, 'F', 'C', m - i, width, panel, m, tau + i,
                                       work, n);
            if (!info)
                info = LAPACKE_dlarfb_work(LAPACK_COL_MAJOR, 'L', 'N', 'F', 'C', m - i,
                                           n - i - width, width, panel, m, work, n,
                                           panel + (size_t)width * m, m, work + width, n);
        }
        if (!info)
            info = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m - i, width, width, panel, m, tau + i,
                                       work, lwork);
        for (int j = i; j < i + width; j++)
            memset(a + (size_t)j * m, 0, sizeof(double) * (size_t)i);
    }
    return (int)info;
}

static int orthonormal_here(Linalg *la, int m, int n, double *a)
{
    if (reserve(la, (double)QR_PANEL * n, 0, 2 * (size_t)n))
        return LINALG_OUT_OF_MEMORY;
    double *tau = la->scratch, *diag_sign = la->scratch + n;
    int info = qr_factor_in_panels(la, m, n, a, tau, la->work);
    if (info)
        return info;
    for (int j = 0; j < n; j++)
        diag_sign[j] = a[j + (size_t)j * m] < 0 ? -1.0 : 1.0;
    info = qr_form_in_panels(la, m, n, a, tau, la->work);
    if (info)
        return info;
    for (int j = 0; j < n; j++)
        if (diag_sign[j] < 0)
            cblas_dscal(m, -1.0, a + (size_t)j * m, 1);
    return 0;
}
