/* Measure_tokens: sr − 1 accurate down to 1e-13 and below (docs/model.md §2), and its routes: the
 * top eigenpair of the Gram matrix (Lanczos, accepted by a certificate) agrees with all its
 * eigenvalues (dsyevd), runs where the certificate holds, and leaves to dsyevd what it
 * cannot certify and to X itself (deflated, or its singular values) what lies below
 * MEASURE_GRAM_FLOOR. */
/* RTLD_NEXT (the products' counter below). */
#define _GNU_SOURCE
#include "testing.h"

#include "model_fixture.h"

#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/model.h"
#include "attnscope/random.h"

#include <cblas.h>
#include <dlfcn.h>
#include <float.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A token matrix with prescribed singular values s[0..min(T, d)): X = U diag(s) Vᵀ, U (T×k)
   and V (d×k) with orthonormal columns, k = min(T, d). */
static double *with_singular_values(int T, int d, const double *s, uint64_t seed)
{
    RandomStream *random = RandomStream_new();
    int rank = T < d ? T : d;
    double *u = malloc(sizeof(double) * T * rank), *v = malloc(sizeof(double) * d * rank);
    double *x = calloc((size_t)T * d, sizeof(double));
    RandomStream_gaussian(random, seed, 1, ROLE_QUERY, 1.0, u, (size_t)T * rank);
    RandomStream_gaussian(random, seed, 1, ROLE_KEY, 1.0, v, (size_t)d * rank);
    assert_int_equal(Linalg_orthonormalise(la, T, rank, u), 0);
    assert_int_equal(Linalg_orthonormalise(la, d, rank, v), 0);
    for (int k = 0; k < rank; k++)
        for (int j = 0; j < d; j++)
            for (int i = 0; i < T; i++)
                x[i + (size_t)j * T] += u[i + (size_t)k * T] * s[k] * v[j + (size_t)k * d];
    RandomStream_free(random);
    free(u);
    free(v);
    return x;
}

static Measures measure(int T, int d, const double *x)
{
    return measure_by(T, d, x, true);
}

/* sr − 1 near 1e-13 is accurate to 1e-6 relative (docs/model.md §2), and sr is scale-invariant. */
static void test_stable_rank_minus_one_accuracy(void **state)
{
    (void)state;
    enum { T = 64, D = 96 };
    double s[T], expected = 0;
    s[0] = 1.0;
    for (int i = 1; i < T; i++) {
        s[i] = 5e-4 / (i * i); /* (s_2/s_1)⁴ = 6.25e-14 */
        expected += pow(s[i], 4);
    }
    double *x = with_singular_values(T, D, s, 3);
    Measures m = measure(T, D, x);
    assert_relative(m.stable_rank_minus_one, expected, 1e-6);
    assert_int_equal(m.route, MEASURE_ROUTE_TOP_EIGENPAIR);

    /* 1e-40: far below the Gram route's floor (~T·eps²), where X itself takes over: above
       MEASURE_SVD_CHEAP deflated (test_measure_deflated.c), at it (64³) its singular values */
    double deep = 0, s_deep[T];
    s_deep[0] = 1.0;
    for (int i = 1; i < T; i++) {
        s_deep[i] = 1e-10 / i;
        deep += pow(s_deep[i], 4);
    }
    const int widths[] = {D, T};
    const MeasureRoute deep_routes[] = {MEASURE_ROUTE_DEFLATED, MEASURE_ROUTE_SINGULAR_VALUES};
    for (int k = 0; k < 2; k++) {
        double *x_deep = with_singular_values(T, widths[k], s_deep, 4);
        Measures m_deep = measure(T, widths[k], x_deep);
        assert_relative(m_deep.stable_rank_minus_one, deep, 1e-6);
        assert_int_equal(m_deep.route, deep_routes[k]);
        /* the singular values: the same as the reference route's, so the same bits */
        if (deep_routes[k] == MEASURE_ROUTE_SINGULAR_VALUES)
            assert_true(m_deep.stable_rank_minus_one ==
                        measure_by(T, widths[k], x_deep, false).stable_rank_minus_one);
        free(x_deep);
    }
    assert_true(m.stable_rank == 1.0 + m.stable_rank_minus_one);
    for (double scale = 1e-200; scale < 1e201; scale *= 1e100) {
        for (int i = 0; i < T * D; i++)
            x[i] *= scale;
        Measures scaled = measure(T, D, x);
        assert_relative(scaled.stable_rank_minus_one, expected, 1e-6);
        assert_close(scaled.log10_norm, log10(scale) + m.log10_norm, 1e-9);
        for (int i = 0; i < T * D; i++)
            x[i] /= scale;
    }
    free(x);
}

/* More tokens than dimensions (the embedding input, T > d): X has d singular values, and
   the deep route sums exactly those, whatever its scratch held before. */
static void test_more_tokens_than_width(void **state)
{
    (void)state;
    enum { T = 40, D = 8 };
    double s[D], deep = 0, shallow[D], moderate = 0;
    s[0] = shallow[0] = 1.0;
    for (int i = 1; i < D; i++) {
        s[i] = 1e-10 / i;
        deep += pow(s[i], 4);
        shallow[i] = 0.5 / i;
        moderate += pow(shallow[i], 4);
    }
    double *x = with_singular_values(T, D, s, 5);
    Measures m = measure(T, D, x);
    assert_int_equal(m.route, MEASURE_ROUTE_SINGULAR_VALUES);
    assert_relative(m.stable_rank_minus_one, deep, 1e-6);
    free(x);
    x = with_singular_values(T, D, shallow, 6);
    m = measure(T, D, x);
    assert_relative(m.stable_rank_minus_one, moderate, 1e-9);
    assert_relative(measure_by(T, D, x, false).stable_rank_minus_one, moderate, 1e-9);
    free(x);
}

/* Singular values 1, q, q², … : sr − 1 = Σ_{i≥1} q^{4i} is known in closed form, and the
   gap is wide enough for the certificate whatever the sizes. */
static void test_top_eigenpair_route_is_taken(void **state)
{
    (void)state;
    enum { T = 48, D = 80 };
    const double ratios[] = {0.1, 0.5, 0.7, 0.8};
    for (size_t k = 0; k < sizeof ratios / sizeof ratios[0]; k++) {
        double s[T], expected = 0;
        s[0] = 1.0;
        for (int i = 1; i < T; i++) {
            s[i] = s[i - 1] * ratios[k];
            expected += pow(s[i], 4);
        }
        double *x = with_singular_values(T, D, s, 10 + k);
        Measures fast = measure_by(T, D, x, true), reference = measure_by(T, D, x, false);
        assert_int_equal(fast.route, MEASURE_ROUTE_TOP_EIGENPAIR);
        assert_int_equal(reference.route, MEASURE_ROUTE_ALL_EIGENVALUES);
        assert_relative(fast.stable_rank_minus_one, reference.stable_rank_minus_one, 1e-10);
        assert_relative(fast.stable_rank, reference.stable_rank, 1e-10);
        assert_relative(fast.stable_rank_minus_one, expected, 1e-10);
        free(x);
    }
}

/* Orthonormal X0: every eigenvalue of the Gram matrix is 1/T, there is no gap to certify,
   and a double top singular value leaves none either: both go to dsyevd, unchanged. */
static void test_no_gap_falls_back(void **state)
{
    (void)state;
    enum { T = 40, D = 64 };
    double flat[T], twin[T];
    for (int i = 0; i < T; i++) {
        flat[i] = 1.0;
        twin[i] = i < 2 ? 1.0 : 0.1 / i;
    }
    const double *spectra[] = {flat, twin};
    for (int k = 0; k < 2; k++) {
        double *x = with_singular_values(T, D, spectra[k], 20 + k);
        Measures fast = measure_by(T, D, x, true), reference = measure_by(T, D, x, false);
        assert_int_equal(fast.route, MEASURE_ROUTE_ALL_EIGENVALUES);
        assert_true(fast.stable_rank == reference.stable_rank);
        assert_true(fast.stable_rank_minus_one == reference.stable_rank_minus_one);
        free(x);
    }
    double *x0 = with_singular_values(T, D, flat, 22);
    assert_relative(measure(T, D, x0).stable_rank, T, 1e-12);
    free(x0);
}

/* The dsyevd route's own rounding: each eigenvalue carries ~eps·λ1, so Σ_{i≥2}(λ_i/λ1)²
   carries ≲ 2·eps·Σ λ_i/λ1 ≤ 2·eps·√((T − 1)·(sr − 1)) (Cauchy–Schwarz).  Above sr − 1 ≈
   1e-6 this is far below 1e-10; deep in the collapse it is what the two routes may differ
   by (the top-eigenpair route sums the deflated matrix entry by entry and is the more
   accurate one: test_stable_rank_minus_one_accuracy). */
static double agreement_tolerance(int T, double rest)
{
    return 1e-10 + 2 * DBL_EPSILON * sqrt((T - 1) / rest);
}

/* Model runs with both routes: softmax, markov and relu attention, full and causal masks,
   gap off and center, seeds 1..5; every layer of both networks agrees.  Each run must have
   used the top-eigenpair route (else the agreement would say nothing) and, above
   MEASURE_SVD_CHEAP, the flat-spectrum route for X0, whose Gram matrix is I/T. */
static void test_routes_agree_over_model_runs(void **state)
{
    (void)state;
    enum { T = 64, D = 96, DEPTH = 6 };
    const Attention kinds[] = {ATTENTION_SOFTMAX, ATTENTION_MARKOV, ATTENTION_RELU};
    const Mask masks[] = {MASK_FULL, MASK_CAUSAL};
    const Gap gaps[] = {GAP_OFF, GAP_CENTER};
    int compared = 0, deep = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (size_t mk = 0; mk < sizeof masks / sizeof masks[0]; mk++)
            for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++)
                for (uint64_t seed = 1; seed <= 5; seed++) {
                    Config c = Config_default();
                    c.tokens = T;
                    c.width = D;
                    c.depth = DEPTH;
                    c.attention = kinds[k];
                    c.mask = masks[mk];
                    c.gap = gaps[g];
                    c.seed = seed;
                    char err[256];
                    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
                    Result *fast = Result_new(), *reference = Result_new();
                    Workspace_measure_all_eigenvalues(workspace, false);
                    assert_int_equal(Model_run(&c, workspace, fast, NULL, err, sizeof err), 0);
                    Workspace_measure_all_eigenvalues(workspace, true);
                    assert_int_equal(Model_run(&c, workspace, reference, NULL, err, sizeof err), 0);
                    assert_true(fast->measure_counts.routes[MEASURE_ROUTE_TOP_EIGENPAIR] > 0);
                    assert_true(fast->measure_counts.routes[MEASURE_ROUTE_FLAT_TOP] > 0);
                    assert_int_equal(reference->measure_counts.routes[MEASURE_ROUTE_TOP_EIGENPAIR],
                                     0);
                    const Curves *pairs[2][2] = {{&fast->network, &reference->network},
                                                 {&fast->counterpart, &reference->counterpart}};
                    for (int n = 0; n < 2; n++)
                        for (int l = 0; l <= DEPTH; l++) {
                            double rest = pairs[n][1]->stable_rank_minus_one[l];
                            if (isnan(rest)) { /* a network that died: dead in both */
                                assert_true(isnan(pairs[n][0]->stable_rank_minus_one[l]));
                                continue;
                            }
                            double tolerance = agreement_tolerance(T, rest);
                            assert_relative(pairs[n][0]->stable_rank_minus_one[l], rest, tolerance);
                            assert_relative(pairs[n][0]->stable_rank[l],
                                            pairs[n][1]->stable_rank[l], tolerance);
                            compared++;
                            deep += rest < 1e-6;
                        }
                    Result_free(fast);
                    Result_free(reference);
                }
    Workspace_measure_all_eigenvalues(workspace, false);
    assert_true(compared > 700);
    assert_true(deep > 50); /* the collapsed layers, where rounding matters, are covered */
}

/* A spectrum for the input-norm bound's tests, by its shape: flat (every value `flat`), a
   double top (two at `top`, then `tail`/(1 + i)), geometric (5·0.97^i), or collapsed
   (`first`, then `rest`/i).  The values set its scale: one test wants X near 1, one far. */
typedef struct {
    double flat, top, tail, first, rest;
} SpectrumScale;
typedef struct {
    int T, d;
    const char *shape;
} ShapedCase;

static void shaped_spectrum(const char *shape, int n, SpectrumScale k, double *s)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(shape, "flat") == 0)
            s[i] = k.flat;
        else if (strcmp(shape, "double top") == 0)
            s[i] = i < 2 ? k.top : k.tail / (1 + i);
        else if (strcmp(shape, "geometric") == 0)
            s[i] = 5.0 * pow(0.97, i);
        else
            s[i] = i == 0 ? k.first : k.rest / i;
    }
}

/* Measure_norm2_squared_bound on matrices of known singular values: never below s_1², and
   within 1e-9 of it, whatever the spectrum's shape (flat as X0's, a double top, a gap,
   collapsed) and whichever side is smaller; NaN for a zero matrix.  The construction's own
   rounding (~1e-15 of s_1) is the only slack below. */
static void test_norm_bound_is_above_and_tight(void **state)
{
    (void)state;
    enum { MAX = 160 };
    const ShapedCase cases[] = {{96, 128, "flat"},
                                {64, 96, "double top"},
                                {100, 70, "geometric"},
                                {80, 80, "collapsed"},
                                {150, 90, "flat"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int T = cases[c].T, d = cases[c].d, n = T < d ? T : d;
        double s[MAX];
        shaped_spectrum(cases[c].shape, n, (SpectrumScale){1.0, 3.0, 2.0, 1.0, 1e-9}, s);
        double *x = with_singular_values(T, d, s, 11 + c);
        double *transposed = malloc(sizeof(double) * T * d);
        double *gram = malloc(sizeof(double) * n * n), *factor = transposed;
        double *lanczos = malloc(sizeof(double) * Measure_lanczos_size(n));
        double bound;
        assert_int_equal(
            Measure_norm2_squared_bound(la, T, d, x, transposed, gram, factor, lanczos, &bound), 0);
        double exact = s[0] * s[0];
        if (!(bound >= exact * (1 - 1e-13) && bound <= exact * (1 + 1e-9)))
            fail_msg("%s %d×%d: bound %.17g, s_1² %.17g (relative %.3g)", cases[c].shape, T, d,
                     bound, exact, bound / exact - 1);
        memset(x, 0, sizeof(double) * T * d);
        assert_int_equal(
            Measure_norm2_squared_bound(la, T, d, x, transposed, gram, factor, lanczos, &bound), 0);
        assert_true(isnan(bound));
        free(x);
        free(transposed);
        free(gram);
        free(lanczos);
    }
}

/* An exact Lanczos breakdown: X = 2·e_1e_1ᵀ makes G = 4·e_1e_1ᵀ, whose start vector e_1 is an
   eigenvector, so the first step leaves β_1 = 0 exactly.  The bound is still s_1² = 4, and no
   next basis vector (0/0: NaN) is left in the scratch, where a later run carrying the steps
   on would read it. */
static void test_lanczos_exact_breakdown(void **state)
{
    (void)state;
    enum { T = 8, d = 8 };
    double x[T * d] = {0}, transposed[T * d], gram[T * T];
    x[0] = 2.0;
    double *lanczos = calloc(Measure_lanczos_size(T), sizeof(double));
    double bound;
    assert_int_equal(
        Measure_norm2_squared_bound(la, T, d, x, transposed, gram, transposed, lanczos, &bound), 0);
    assert_true(bound >= 4.0 && bound <= 4.0 * (1 + 1e-9));
    for (size_t i = 0; i < Measure_lanczos_size(T); i++)
        if (!isfinite(lanczos[i]))
            fail_msg("Lanczos scratch entry %zu is %g after an exact breakdown", i, lanczos[i]);
    free(lanczos);
}

/* Measure_tokens_sharing: the bound of ‖X‖₂² from the measure's Gram matrix of X/‖X‖_F is
   never below s_1² and within 1e-9 of it (the scale ‖X‖_F put back with its rounding: X is
   scaled far from 1), on every route the measure takes after it (flat: dsyevd; a gap: the top
   eigenpair; collapsed: deflated), with and without the measure's own Lanczos; the measures
   are bit for bit Measure_tokens'; X = 0 gives NaN. */
static void test_measure_bounds_the_input_norm(void **state)
{
    (void)state;
    enum { MAX = 160 };
    const ShapedCase cases[] = {{96, 128, "flat"},
                                {64, 96, "double top"},
                                {80, 80, "collapsed"},
                                {90, 150, "geometric"},
                                {100, 70, "flat"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int T = cases[c].T, d = cases[c].d, n = T < d ? T : d;
        double s[MAX];
        shaped_spectrum(cases[c].shape, n, (SpectrumScale){3e5, 3e-7, 2e-7, 1e3, 1e-7}, s);
        double *x = with_singular_values(T, d, s, 21 + c);
        double *unit = malloc(sizeof(double) * T * d), *gram = malloc(sizeof(double) * T * T);
        double *eig = malloc(sizeof(double) * T), *factor = malloc(sizeof(double) * T * T);
        double *lanczos = malloc(sizeof(double) * Measure_tokens_scratch_size(T, d));
        for (int own = 0; own < 2; own++) {
            Measures plain = measure_by(T, d, x, own), bounded;
            MeasureInputBound bound = {.factor = factor, .lanczos = lanczos};
            MeasureSharing share = {.bound = &bound};
            assert_int_equal(Measure_tokens_sharing(la, T, d, x, 0.0, unit, gram, eig,
                                                    own ? lanczos : NULL, &share, &bounded),
                             0);
            const double a[] = {plain.stable_rank_minus_one,   plain.log10_norm,
                                plain.log_similarity,          plain.geometry.centred_stable_rank,
                                plain.geometry.energy_off_top, plain.geometry.token_cosine_mean};
            const double b[] = {
                bounded.stable_rank_minus_one,   bounded.log10_norm,
                bounded.log_similarity,          bounded.geometry.centred_stable_rank,
                bounded.geometry.energy_off_top, bounded.geometry.token_cosine_mean};
            assert_memory_equal(a, b, sizeof a); /* bit for bit (NaN too) */
            assert_int_equal(plain.route, bounded.route);
            double exact = s[0] * s[0];
            if (!(bound.norm_squared >= exact * (1 - 1e-13) &&
                  bound.norm_squared <= exact * (1 + 1e-9)))
                fail_msg("%s %d×%d: bound %.17g, s_1² %.17g (relative %.3g)", cases[c].shape, T, d,
                         bound.norm_squared, exact, bound.norm_squared / exact - 1);
        }
        memset(x, 0, sizeof(double) * T * d);
        Measures zero;
        MeasureInputBound bound = {.factor = factor, .lanczos = lanczos};
        MeasureSharing share = {.bound = &bound};
        assert_int_equal(
            Measure_tokens_sharing(la, T, d, x, 0.0, unit, gram, eig, lanczos, &share, &zero), 0);
        assert_true(isnan(bound.norm_squared));
        free(x);
        free(unit);
        free(gram);
        free(eig);
        free(factor);
        free(lanczos);
    }
}

/* The products with a symmetric matrix (cblas_dsymv: each Lanczos step's, each Ritz vector's
   check) while `products.on`, each as a hash of the matrix's lower triangle and of the vector
   and where it went, so that a test can tell a step taken twice from two steps.  This definition
   takes the place of the BLAS's in this program (the core's archive resolves to it) and calls the
   BLAS's own. */
enum { MAX_PRODUCTS = 4096 };
static struct {
    bool on;
    int count;
    uint64_t matrix[MAX_PRODUCTS], vector[MAX_PRODUCTS];
    const double *out[MAX_PRODUCTS];
} products;

static uint64_t fnv1a(uint64_t hash, const void *bytes, size_t size)
{
    const unsigned char *b = bytes;
    for (size_t i = 0; i < size; i++)
        hash = (hash ^ b[i]) * 0x100000001b3u;
    return hash;
}

/* The BLAS's own cblas_dsymv, looked up once in main() before any thread may call it. */
typedef void Dsymv(enum CBLAS_ORDER, enum CBLAS_UPLO, blasint, double, const double *, blasint,
                   const double *, blasint, double, double *, blasint);
static Dsymv *blas_dsymv;

void cblas_dsymv(const enum CBLAS_ORDER order, const enum CBLAS_UPLO uplo, const blasint n,
                 const double alpha, const double *a, const blasint lda, const double *x,
                 const blasint incx, const double beta, double *y, const blasint incy)
{
    if (products.on) {
        /* The measures' products are column-major, lower triangle, unit stride. */
        assert_true(order == CblasColMajor && uplo == CblasLower && incx == 1);
        assert_true(products.count < MAX_PRODUCTS);
        uint64_t matrix = 0xcbf29ce484222325u;
        for (blasint j = 0; j < n; j++)
            matrix = fnv1a(matrix, a + j + (size_t)j * lda, sizeof(double) * (size_t)(n - j));
        products.matrix[products.count] = matrix;
        products.vector[products.count] = fnv1a(0xcbf29ce484222325u, x, sizeof(double) * n);
        products.out[products.count] = y;
        products.count++;
    }
    blas_dsymv(order, uplo, n, alpha, a, lda, x, incx, beta, y, incy);
}

/* Measure_tokens_sharing with the input bound (or none), counting its Lanczos steps: *repeated,
   those that were taken before in it (the same matrix and vector, bit for bit).  A step's
   product goes to its scratch's next vector, at next_offset in it (where the first product of a
   measure goes, a step's); a Ritz vector's check goes elsewhere (and may repeat a step's
   product: at one step the Ritz vector is the start itself).  The scratches: the measure's
   lanczos and the bound's. */
static int measure_products(int T, int d, const double *x, double *unit, double *gram, double *eig,
                            double *lanczos, MeasureInputBound *bound, ptrdiff_t next_offset,
                            MeasureRoute route, int *repeated)
{
    MeasureSharing share = {.bound = bound};
    Measures m;
    products.count = 0;
    products.on = true;
    assert_int_equal(Measure_tokens_sharing(la, T, d, x, 0.0, unit, gram, eig, lanczos, &share, &m),
                     0);
    products.on = false;
    assert_int_equal(m.route, route); /* the case's route, with the bound or without */
    bool step[MAX_PRODUCTS];
    int steps = 0;
    *repeated = 0;
    for (int i = 0; i < products.count; i++) {
        step[i] = products.out[i] == lanczos + next_offset ||
                  (bound && products.out[i] == bound->lanczos + next_offset);
        if (!step[i])
            continue;
        steps++;
        for (int j = 0; j < i; j++)
            if (step[j] && products.matrix[i] == products.matrix[j] &&
                products.vector[i] == products.vector[j]) {
                ++*repeated;
                break;
            }
    }
    return steps;
}

/* The top-eigenpair route carries on the Lanczos steps the input bound's proof took on the same
   Ĝ from the same start in the same scratch (docs/model.md §2): no product with Ĝ is computed
   twice in the measure, where restarting from step 0 repeats the first and resuming one step
   early repeats that step.  With the proof in a scratch of its own the route starts again, and
   the counter sees the repeats (the test's own check); the shared scratch saves them all.  On
   each route that follows the top-eigenpair route's Lanczos: its certificate, the flat-spectrum
   route (which carries on its steps in turn), the deflated route. */
static void test_route_carries_on_the_bounds_steps(void **state)
{
    (void)state;
    enum { T = 96, D = 128, SPECTRA = 5 };
    double s[SPECTRA][T];
    const MeasureRoute route[SPECTRA] = {MEASURE_ROUTE_TOP_EIGENPAIR, MEASURE_ROUTE_FLAT_TOP,
                                         MEASURE_ROUTE_DEFLATED, MEASURE_ROUTE_FLAT_TOP,
                                         MEASURE_ROUTE_FLAT_TOP};
    for (int i = 0; i < T; i++) {
        s[0][i] = i == 0 ? 10.0 : 0.5 * pow(0.97, i); /* a clear top */
        s[1][i] = 5.0 * pow(0.97, i);                 /* geometric */
        s[2][i] = i == 0 ? 1e3 : 1e-7 / (i + 1);      /* collapsed */
        s[3][i] = 3e5;                                /* flat */
        s[4][i] = i < 2 ? 3e-7 : 2e-7 / (1 + i);      /* a double top */
    }
    double *unit = malloc(sizeof(double) * T * D), *gram = malloc(sizeof(double) * T * T);
    double *eig = malloc(sizeof(double) * T), *factor = malloc(sizeof(double) * T * T);
    double *lanczos = malloc(sizeof(double) * Measure_tokens_scratch_size(T, D));
    double *apart = malloc(sizeof(double) * Measure_tokens_scratch_size(T, D));
    for (int c = 0; c < SPECTRA; c++) {
        double *x = with_singular_values(T, D, s[c], 31 + c);
        int repeated_alone, repeated_shared, repeated_apart;
        /* The measure's first product is its first step's, into the scratch's next vector. */
        products.count = 0;
        measure_products(T, D, x, unit, gram, eig, lanczos, NULL, 0, route[c], &repeated_alone);
        ptrdiff_t next = products.out[0] - lanczos;
        int alone = measure_products(T, D, x, unit, gram, eig, lanczos, NULL, next, route[c],
                                     &repeated_alone);
        MeasureInputBound shared_bound = {.factor = factor, .lanczos = lanczos};
        int shared = measure_products(T, D, x, unit, gram, eig, lanczos, &shared_bound, next,
                                      route[c], &repeated_shared);
        MeasureInputBound own_bound = {.factor = factor, .lanczos = apart};
        int separate = measure_products(T, D, x, unit, gram, eig, lanczos, &own_bound, next,
                                        route[c], &repeated_apart);
        print_message("spectrum %d: %d steps without the bound (%d repeated), %d with it "
                      "(%d), %d with its own scratch (%d)\n",
                      c, alone, repeated_alone, shared, repeated_shared, separate, repeated_apart);
        assert_int_equal(repeated_alone, 0);
        assert_int_equal(repeated_shared, 0);
        assert_true(repeated_apart > 0);
        assert_int_equal(shared, separate - repeated_apart);
        assert_true(shared >= alone);
        free(x);
    }
    free(unit);
    free(gram);
    free(eig);
    free(factor);
    free(lanczos);
    free(apart);
}

/* Tokens X = 1mᵀ + V with V = Q diag(s) Wᵀ, Q's k columns orthonormal and orthogonal to 1 (so
   V is centred and its singular values are s, the centred stable rank Σ s⁴/s_1⁴) and m
   scaled so that ‖V‖_F/‖X‖_F = spread. */
static double *spread_tokens(int T, int d, int k, const double *s, double spread, uint64_t seed)
{
    RandomStream *random = RandomStream_new();
    double *q = malloc(sizeof(double) * T * (k + 1)), *w = malloc(sizeof(double) * d * k);
    double *m = malloc(sizeof(double) * d), *x = calloc((size_t)T * d, sizeof(double));
    RandomStream_gaussian(random, seed, 1, ROLE_QUERY, 1.0, q, (size_t)T * (k + 1));
    RandomStream_gaussian(random, seed, 1, ROLE_KEY, 1.0, w, (size_t)d * k);
    RandomStream_gaussian(random, seed, 1, ROLE_VALUE, 1.0, m, (size_t)d);
    for (int i = 0; i < T; i++)
        q[i] = 1.0;
    assert_int_equal(Linalg_orthonormalise(la, T, k + 1, q), 0);
    assert_int_equal(Linalg_orthonormalise(la, d, k, w), 0);
    double centred2 = 0, m2 = 0;
    for (int i = 0; i < k; i++)
        centred2 += s[i] * s[i];
    for (int j = 0; j < d; j++)
        m2 += m[j] * m[j];
    double scale = sqrt(centred2 * (1 / (spread * spread) - 1) / (T * m2));
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++) {
            double *e = &x[i + (size_t)j * T];
            *e = scale * m[j];
            for (int c = 0; c < k; c++)
                *e += q[i + (size_t)(c + 1) * T] * s[c] * w[j + (size_t)c * d];
        }
    RandomStream_free(random);
    free(q);
    free(w);
    free(m);
    return x;
}

/* The centred Gram matrix downdated from X's (Measure_centred_by_downdate): where it is taken,
   the centred stable rank is within the perturbation bound of the exact Σ s⁴/s_1⁴: with every
   eigenvalue of the trace-1 centred Gram matrix within ε = (γ_d + (4γ_k + 12u)‖Ĝ‖_F)/μ² (k =
   ⌈log2 T⌉) plus the construction's rounding, sr moves by at most 2ε/λ1² + 2·sr·ε/λ1 (Weyl);
   the direct route (not downdated) meets the same bound; tokens equal to 1e-7 of their size
   (μ tiny) are refused, and so is any size below MEASURE_SVD_CHEAP. */
static void test_centred_gram_downdated(void **state)
{
    (void)state;
    enum { T = 80, D = 96, K = 60 };
    double u = DBL_EPSILON / 2;
    const double spreads[] = {0.95, 0.8, 0.7};
    for (size_t c = 0; c < sizeof spreads / sizeof spreads[0]; c++) {
        double s[K], sum2 = 0, sum4 = 0;
        for (int i = 0; i < K; i++) {
            s[i] = pow(0.93, i) * (c == 2 && i == 0 ? 2.0 : 1.0);
            sum2 += s[i] * s[i];
            sum4 += pow(s[i], 4);
        }
        double exact = sum4 / pow(s[0], 4), top = s[0] * s[0] / sum2;
        double *x = spread_tokens(T, D, K, s, spreads[c], 31 + c);
        double *unit = malloc(sizeof(double) * T * D), *gram = malloc(sizeof(double) * T * T);
        double *eig = malloc(sizeof(double) * T);
        double *lanczos = malloc(sizeof(double) * Measure_tokens_scratch_size(T, D));
        for (int from_gram = 0; from_gram < 2; from_gram++) {
            MeasureSharing share = {.centred_from_gram = from_gram};
            Measures m, plain = measure(T, D, x);
            assert_int_equal(
                Measure_tokens_sharing(la, T, D, x, 0.0, unit, gram, eig, lanczos, &share, &m), 0);
            assert_int_equal(share.centred_downdated, from_gram);
            assert_false(share.centred_formed_unplanned);
            assert_memory_equal(&m.stable_rank_minus_one, &plain.stable_rank_minus_one,
                                sizeof(double));
            double phi = sqrt(1 - m.geometry.energy_off_top); /* ‖Ĝ‖_F ≤ (trace·λ1)^½ */
            double mu = m.geometry.relative_spread;
            double eps = (Linalg_rounding_gamma(D) +
                          (4 * Linalg_rounding_gamma(ceil(log2(T))) + 12 * u) * phi) /
                             (mu * mu) +
                         1e-14;
            double tolerance = 2 * eps / (top * top) + 2 * exact * eps / top;
            double got = m.geometry.centred_stable_rank;
            if (!(fabs(got - exact) <= tolerance))
                fail_msg("spread %.2f, %s: centred sr %.17g, exact %.17g (%.3g, allowed %.3g)",
                         spreads[c], from_gram ? "downdated" : "direct", got, exact,
                         fabs(got - exact), tolerance);
        }
        free(x);
        free(unit);
        free(gram);
        free(eig);
        free(lanczos);
    }
    assert_false(Measure_centred_by_downdate(T, D, 1e-7, 1.0));
    assert_false(Measure_centred_by_downdate(T, D, 0.5, 1.0)); /* Ĝ one direction, μ too small */
    assert_true(Measure_centred_by_downdate(T, D, 0.99, 1 / sqrt(T)));
    assert_false(Measure_centred_by_downdate(32, 32, 0.99, 1 / sqrt(32.0)));
}

/* Tokens of one direction, x_i = a_i·v with a_i = 1 + c·q_i (q centred, unit norm: the spread
   μ² = c²/(T + c²)), plus noise of relative size `noise`: sr − 1 is far below MEASURE_GRAM_FLOOR
   (the deflated route) while μ is large, and X − 1x̄ᵀ is of one direction too, so its stable
   rank is 1 + O(noise⁴): 1 exactly in double, whichever route computes it. */
static double *one_direction_tokens(int T, int d, double spread, double noise, uint64_t seed)
{
    RandomStream *random = RandomStream_new();
    double *q = malloc(sizeof(double) * T * 2), *v = malloc(sizeof(double) * d);
    double *x = malloc(sizeof(double) * T * d);
    RandomStream_gaussian(random, seed, 1, ROLE_QUERY, 1.0, q, (size_t)T * 2);
    RandomStream_gaussian(random, seed, 1, ROLE_KEY, 1.0, v, (size_t)d);
    RandomStream_gaussian(random, seed, 1, ROLE_VALUE, noise, x, (size_t)T * d);
    for (int i = 0; i < T; i++)
        q[i] = 1.0;
    assert_int_equal(Linalg_orthonormalise(la, T, 2, q), 0);
    double c = sqrt(spread * spread * T / (1 - spread * spread));
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            x[i + (size_t)j * T] += (1 + c * q[i + T]) * v[j];
    RandomStream_free(random);
    free(q);
    free(v);
    return x;
}

/* The downdate asked of a collapsed X whose tokens stay spread (μ = 0.9): sr − 1 takes the
   deflated route, and the centred stable rank is 1 exactly (one_direction_tokens).  At T ≤ d
   the kept upper triangle survives the deflated route's dsyrk and the downdate is taken; at
   T > d its transposed copy overwrites it, and the centred Gram matrix is formed directly (a
   downdate of the overwritten matrix gives no stable rank near 1).  Tokens equal to round-off
   (μ unresolved) with the downdate asked form no centred Gram matrix (the plan declares none),
   and give a null centred stable rank either way. */
static void test_centred_after_the_deflated_route(void **state)
{
    (void)state;
    const int sizes[][2] = {{96, 80}, {80, 96}};
    for (int k = 0; k < 2; k++) {
        int T = sizes[k][0], D = sizes[k][1];
        assert_false(Measure_svd_cheap(T, D));
        double *x = one_direction_tokens(T, D, 0.9, 1e-13, 41 + k);
        double *unit = malloc(sizeof(double) * T * D), *gram = malloc(sizeof(double) * T * T);
        double *eig = malloc(sizeof(double) * T);
        double *lanczos = malloc(sizeof(double) * Measure_tokens_scratch_size(T, D));
        for (int from_gram = 0; from_gram < 2; from_gram++) {
            MeasureSharing share = {.centred_from_gram = from_gram};
            Measures m;
            assert_int_equal(
                Measure_tokens_sharing(la, T, D, x, 0.0, unit, gram, eig, lanczos, &share, &m), 0);
            assert_int_equal(m.route, MEASURE_ROUTE_DEFLATED);
            assert_true(fabs(m.geometry.relative_spread - 0.9) < 1e-6);
            assert_int_equal(share.centred_downdated, from_gram && T <= D);
            assert_int_equal(share.centred_formed_unplanned, from_gram && T > D);
            if (m.geometry.centred_stable_rank != 1.0)
                fail_msg("T %d, d %d, %s: centred sr %.17g, exactly 1 expected", T, D,
                         from_gram ? "downdate asked" : "direct", m.geometry.centred_stable_rank);
        }
        /* Equal tokens: x_i = v for every i. */
        for (int j = 0; j < D; j++)
            for (int i = 0; i < T; i++)
                x[i + (size_t)j * T] = x[(size_t)j * T];
        double grams[2];
        for (int from_gram = 0; from_gram < 2; from_gram++) {
            MeasureSharing share = {.centred_from_gram = from_gram};
            Measures m;
            LinalgTally before = {0}, t = {0};
            Linalg_tally_take(la, &before, true);
            assert_int_equal(
                Measure_tokens_sharing(la, T, D, x, 0.0, unit, gram, eig, lanczos, &share, &m), 0);
            Linalg_tally_take(la, &t, true);
            grams[from_gram] = t.calls[LINALG_GRAM];
            assert_false(share.centred_formed_unplanned);
            assert_true(isnan(m.geometry.centred_stable_rank));
            assert_false(m.geometry.relative_spread >= MEASURE_SIMILARITY_RESOLUTION);
        }
        assert_true(grams[0] == grams[1] + 1);
        free(x);
        free(unit);
        free(gram);
        free(eig);
        free(lanczos);
    }
}

/* Linalg_cholesky proves positive definiteness or refuses: a matrix with one eigenvalue of
   −1e-6 is refused; with +1e-6, accepted, and its backward error bound is far below 1e-6. */
static void test_cholesky_decides_definiteness(void **state)
{
    (void)state;
    enum { N = 50 };
    double a[N * N];
    const double shifts[] = {-1e-6, 1e-6};
    for (int k = 0; k < 2; k++) {
        /* diag(1, …, 1, shift) in the basis of a Householder reflection I − 2wwᵀ. */
        double w[N], norm2 = 0;
        for (int i = 0; i < N; i++) {
            w[i] = 1.0 + (i % 7);
            norm2 += w[i] * w[i];
        }
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                double reflection_i_last = (i == N - 1) - 2 * w[i] * w[N - 1] / norm2;
                double reflection_j_last = (j == N - 1) - 2 * w[j] * w[N - 1] / norm2;
                a[i + j * N] = (i == j) + (shifts[k] - 1) * reflection_i_last * reflection_j_last;
            }
        double backward = NAN;
        int info = Linalg_cholesky(la, N, a, &backward);
        if (shifts[k] < 0) {
            assert_true(info > 0);
        } else {
            assert_int_equal(info, 0);
            assert_true(backward > 0 && backward < 1e-10);
        }
    }
}

int main(void)
{
    *(void **)&blas_dsymv = dlsym(RTLD_NEXT, "cblas_dsymv");
    if (!blas_dsymv) {
        fprintf(stderr, "test_measure: no cblas_dsymv after this program's (dlsym: %s)\n",
                dlerror());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stable_rank_minus_one_accuracy),
        cmocka_unit_test(test_top_eigenpair_route_is_taken),
        cmocka_unit_test(test_no_gap_falls_back),
        cmocka_unit_test(test_more_tokens_than_width),
        cmocka_unit_test(test_routes_agree_over_model_runs),
        cmocka_unit_test(test_norm_bound_is_above_and_tight),
        cmocka_unit_test(test_lanczos_exact_breakdown),
        cmocka_unit_test(test_measure_bounds_the_input_norm),
        cmocka_unit_test(test_route_carries_on_the_bounds_steps),
        cmocka_unit_test(test_centred_gram_downdated),
        cmocka_unit_test(test_centred_after_the_deflated_route),
        cmocka_unit_test(test_cholesky_decides_definiteness),
    };
    return cmocka_run_group_tests_name("measure", tests, setup, teardown);
}
