/* The conditioning of the self-attention sub-block (docs/model.md §8): the JVP and the full
 * Jacobian against central finite differences, the VJP as its transpose, κ of the dominant
 * term against the SVD of the Kronecker product, the structure of causal Jacobians, the
 * singular K + I of a reflection, the initialisation "cutting-skip", the softmax demo's
 * closed form, and the conditioning pass's forward (its token norms, every head's attention)
 * against Model_run's. */
#include "testing.h"

#include "attnscope/attention.h"
#include "attnscope/conditioning.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "attnscope/random.h"

#include <cblas.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

enum { T = 5, D = 7, N = T * D };

/* One random sub-block of size T×D: X, M, W_VO from the streams of `seed`, s = 1/√D. */
typedef struct {
    Mask mask;
    double sink; /* the softmax's sink logit, −∞ for none */
    double x[N], m[D * D], wvo[D * D];
    double softmax[T * T], applied[T * T];
    double scale;
} Fixture;

static void attention_of(const Fixture *f, const double *x, double *a)
{
    double logits[T * T];
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            double sum = 0;
            for (int p = 0; p < D; p++)
                for (int q = 0; q < D; q++)
                    sum += x[i + p * T] * f->m[p + q * D] * x[j + q * T];
            logits[i * T + j] = f->scale * sum;
        }
    Attention_build(ATTENTION_SOFTMAX, f->mask, 1, T, logits, f->sink, a);
}

/* f(X) = A(X)·X·W_VO straight from its definition, with loops. */
static void forward(const Fixture *f, const double *x, double *y)
{
    double a[T * T];
    attention_of(f, x, a);
    for (int i = 0; i < T; i++)
        for (int q = 0; q < D; q++) {
            double sum = 0;
            for (int j = 0; j < T; j++)
                for (int p = 0; p < D; p++)
                    sum += a[i * T + j] * x[j + p * T] * f->wvo[p + q * D];
            y[i + q * T] = sum;
        }
}

static void fixture_with_sink(Fixture *f, Mask mask, double sink, uint64_t seed)
{
    RandomStream *rs = RandomStream_new();
    assert_non_null(rs);
    f->mask = mask;
    f->sink = sink;
    f->scale = 1.0 / sqrt((double)D);
    /* σ = 1.5 keeps the softmax away from uniform, so Ȧ is not small. */
    RandomStream_gaussian(rs, seed, 0, ROLE_INPUT, 1.0, f->x, N);
    RandomStream_gaussian(rs, seed, 1, ROLE_QUERY, 1.5, f->m, D * D);
    RandomStream_gaussian(rs, seed, 1, ROLE_VALUE, 1.0, f->wvo, D * D);
    RandomStream_free(rs);
    attention_of(f, f->x, f->softmax);
    memcpy(f->applied, f->softmax, sizeof f->applied);
}

static void fixture(Fixture *f, Mask mask, uint64_t seed)
{
    fixture_with_sink(f, mask, -INFINITY, seed);
}

static SaBlock block_of(const Fixture *f)
{
    return (SaBlock){.T = T,
                     .d = D,
                     .x = f->x,
                     .m = f->m,
                     .scale = f->scale,
                     .wvo = f->wvo,
                     .softmax = f->softmax,
                     .applied = f->applied};
}

static double norm2(const double *v, int n)
{
    return cblas_dnrm2(n, v, 1);
}

/* Σ_h f_h(X) over `heads` sub-blocks that share X (the first one's), as heads do. */
static void forward_heads(const Fixture *f, int heads, const double *x, double *y)
{
    double one[N];
    forward(&f[0], x, y);
    for (int h = 1; h < heads; h++) {
        forward(&f[h], x, one);
        for (int k = 0; k < N; k++)
            y[k] += one[k];
    }
}

/* Central differences of Σ_h f_h (heads fixtures, X the first one's) along v at steps h and 2h. The
   truncation error of D(h) is c·h² + O(h⁴), D(2h)'s is 4c·h², so ‖D(h) − D(2h)‖ ≥ 3‖truncation of
   D(h)‖ to leading order; rounding adds at most about 2ε‖f‖/h per entry (ε relative in each of the
   two values, divided by 2h).  Returns that bound on ‖D(h) − Jv‖ and D(h) in out. */
static double central_difference(const Fixture *f, int heads, const double *v, double *out)
{
    double h = cbrt(DBL_EPSILON), plus[N], minus[N], x[N], coarse[N], y[N];
    for (int step = 2; step >= 1; step--) {
        for (int k = 0; k < N; k++)
            x[k] = f->x[k] + step * h * v[k];
        forward_heads(f, heads, x, plus);
        for (int k = 0; k < N; k++)
            x[k] = f->x[k] - step * h * v[k];
        forward_heads(f, heads, x, minus);
        double *into = step == 2 ? coarse : out;
        for (int k = 0; k < N; k++)
            into[k] = (plus[k] - minus[k]) / (2 * step * h);
    }
    forward_heads(f, heads, f->x, y);
    double diff[N];
    for (int k = 0; k < N; k++)
        diff[k] = out[k] - coarse[k];
    /* The sums in forward() add D·T·D terms per head: their rounding is that many ε of the
       larger of ‖f‖ and the heads' terms, bounded here by heads·‖f‖ plus each term's size. */
    double terms = 0;
    for (int k = 0; k < heads; k++) {
        double one[N];
        forward(&f[k], f->x, one);
        terms += norm2(one, N);
    }
    return norm2(diff, N) + 2.0 * heads * T * D * D * DBL_EPSILON * fmax(norm2(y, N), terms) / h;
}

static void random_vector(uint64_t seed, int role_layer, double *v, int n)
{
    RandomStream *rs = RandomStream_new();
    assert_non_null(rs);
    RandomStream_gaussian(rs, seed, role_layer, ROLE_MARKOV, 1.0, v, (size_t)n);
    RandomStream_free(rs);
}

/* With a sink too: its logit is a constant of X, so A's derivative A ⊙ (Ċ − rowsum(A ⊙ Ċ))
   holds for the sub-stochastic rows as it is written. */
static void test_jvp_matches_finite_differences_for_every_mask(void **state)
{
    (void)state;
    const Mask masks[] = {MASK_FULL, MASK_CAUSAL, MASK_WINDOW, MASK_WINDOW_CAUSAL};
    SaWork *w = SaWork_new();
    assert_non_null(w);
    for (size_t mi = 0; mi < 2 * sizeof masks / sizeof masks[0]; mi++) {
        Fixture f;
        double sink = mi < 4 ? -INFINITY : 0.7;
        fixture_with_sink(&f, masks[mi % 4], sink, 11 + mi);
        SaBlock b = block_of(&f);
        assert_int_equal(SaWork_prepare(w, &b), 0);
        for (int trial = 0; trial < 3; trial++) {
            double v[N], jv[N], fd[N], diff[N];
            random_vector(20 + mi, trial + 1, v, N);
            SaWork_jvp(w, v, jv);
            double bound = central_difference(&f, 1, v, fd);
            for (int k = 0; k < N; k++)
                diff[k] = jv[k] - fd[k];
            if (norm2(diff, N) > bound)
                fail_msg("mask %s, sink %g: |Jv - FD| = %.3g > bound %.3g (|Jv| = %.3g)",
                         MASK_NAMES.names[masks[mi % 4]], sink, norm2(diff, N), bound,
                         norm2(jv, N));
            /* The bound is tight enough to mean something. */
            assert_true(bound < 1e-6 * norm2(jv, N));
        }
    }
    SaWork_free(w);
}

static void test_vjp_is_the_transpose(void **state)
{
    (void)state;
    SaWork *w = SaWork_new();
    assert_non_null(w);
    const Mask masks[] = {MASK_FULL, MASK_CAUSAL, MASK_WINDOW, MASK_WINDOW_CAUSAL};
    for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; mi++) {
        Fixture f;
        fixture(&f, masks[mi], 31 + mi);
        SaBlock b = block_of(&f);
        assert_int_equal(SaWork_prepare(w, &b), 0);
        double u[N], v[N], jv[N], jtu[N];
        random_vector(40 + mi, 1, u, N);
        random_vector(40 + mi, 2, v, N);
        SaWork_jvp(w, v, jv);
        SaWork_vjp(w, u, jtu);
        double left = cblas_ddot(N, u, 1, jv, 1), right = cblas_ddot(N, jtu, 1, v, 1);
        /* Both are sums of products of the same entries of K in different orders: each
           differs from the exact value by at most about N·ε·|u|·|K|·|v| (|K| ≤ |K|_F). */
        double k_norm = fmax(norm2(jv, N) / norm2(v, N), norm2(jtu, N) / norm2(u, N));
        double bound = 4.0 * N * N * DBL_EPSILON * norm2(u, N) * k_norm * norm2(v, N);
        if (fabs(left - right) > bound)
            fail_msg("<u, Jv> = %.17g, <J^T u, v> = %.17g, bound %.3g", left, right, bound);
    }
    SaWork_free(w);
}

static void test_jacobian_matches_finite_differences(void **state)
{
    (void)state;
    Fixture f;
    fixture(&f, MASK_FULL, 51);
    SaWork *w = SaWork_new();
    assert_non_null(w);
    SaBlock b = block_of(&f);
    assert_int_equal(SaWork_prepare(w, &b), 0);
    double *k = malloc(sizeof(double) * N * N);
    assert_non_null(k);
    SaWork_jacobian(w, k);
    for (int j = 0; j < N; j++) {
        double e[N] = {0}, fd[N], diff[N];
        e[j] = 1.0;
        double bound = central_difference(&f, 1, e, fd);
        for (int i = 0; i < N; i++)
            diff[i] = k[i + (size_t)j * N] - fd[i];
        if (norm2(diff, N) > bound)
            fail_msg("column %d: |K e - FD| = %.3g > %.3g", j, norm2(diff, N), bound);
    }
    free(k);
    SaWork_free(w);
}

/* Singular values of the n×n matrix a (kept). */
static void singular_values(int n, const double *a, double *s)
{
    double *copy = malloc(sizeof(double) * (size_t)n * n);
    Linalg *la = Linalg_new();
    assert_non_null(copy);
    assert_non_null(la);
    memcpy(copy, a, sizeof(double) * (size_t)n * n);
    assert_int_equal(Linalg_singular_values(la, n, n, copy, s), 0);
    Linalg_free(la);
    free(copy);
}

static void test_kappa_of_the_kronecker_product(void **state)
{
    (void)state;
    Fixture f;
    fixture(&f, MASK_FULL, 61);
    /* B = W_VOᵀ ⊗ A: B[(i + T p), (j + T q)] = W_VO[q, p]·A[i, j]. */
    double *b = malloc(sizeof(double) * N * N), sb[N], sa[T], sw[D], a[T * T];
    assert_non_null(b);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            a[i + j * T] = f.applied[i * T + j];
    for (int p = 0; p < D; p++)
        for (int q = 0; q < D; q++)
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++)
                    b[(i + T * p) + (size_t)(j + T * q) * N] = f.wvo[q + p * D] * a[i + j * T];
    singular_values(N, b, sb);
    singular_values(T, a, sa);
    singular_values(D, f.wvo, sw);
    double kappa_b = Conditioning_kappa(sb[0], sb[N - 1], N);
    double product =
        Conditioning_kappa(sa[0], sa[T - 1], T) * Conditioning_kappa(sw[0], sw[D - 1], D);
    assert_false(isnan(kappa_b));
    /* dgesdd's singular values are exact to about n·ε·s_max each, so κ to about n·ε·κ. */
    double bound = 4.0 * N * DBL_EPSILON * kappa_b * kappa_b;
    if (fabs(kappa_b - product) > bound)
        fail_msg("kappa(B) = %.17g, kappa(W)kappa(A) = %.17g, bound %.3g", kappa_b, product, bound);
    free(b);
}

static void test_causal_jacobian_is_block_lower_triangular(void **state)
{
    (void)state;
    for (int masked = 0; masked < 2; masked++) {
        Fixture f;
        fixture(&f, masked ? MASK_WINDOW_CAUSAL : MASK_CAUSAL, 71);
        SaWork *w = SaWork_new();
        assert_non_null(w);
        SaBlock b = block_of(&f);
        assert_int_equal(SaWork_prepare(w, &b), 0);
        double *k = malloc(sizeof(double) * N * N);
        assert_non_null(k);
        SaWork_jacobian(w, k);
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++)
                for (int p = 0; p < D; p++)
                    for (int q = 0; q < D; q++) {
                        double entry = k[(i + T * p) + (size_t)(j + T * q) * N];
                        if (j > i && entry != 0.0)
                            fail_msg("dy_%d/dx_%d [%d,%d] = %g above the diagonal", i, j, p, q,
                                     entry);
                        /* Token 1 sees itself only: y_1 = x_1 W_VO, so its block is W_VOᵀ. */
                        if (i == 0 && j == 0 && entry != f.wvo[q + p * D])
                            fail_msg("first block [%d,%d] = %.17g, W_VO^T = %.17g", p, q, entry,
                                     f.wvo[q + p * D]);
                    }
        free(k);
        SaWork_free(w);
    }
}

/* With identity attention (A = I for every X) K = W_VOᵀ ⊗ I; a reflection W_VO has the
   eigenvalue −1, so K + I is singular: κ is NaN (null), never a huge finite number. */
static void test_singular_skip_jacobian_is_not_a_number(void **state)
{
    (void)state;
    double u[D], wvo[D * D], eye[T * T] = {0}, x[N];
    random_vector(81, 1, u, D);
    random_vector(81, 2, x, N);
    double uu = cblas_ddot(D, u, 1, u, 1);
    for (int p = 0; p < D; p++)
        for (int q = 0; q < D; q++)
            wvo[p + q * D] = (p == q) - 2.0 * u[p] * u[q] / uu;
    for (int i = 0; i < T; i++)
        eye[i * T + i] = 1.0;
    SaBlock b = {.T = T, .d = D, .x = x, .scale = 1.0, .wvo = wvo, .applied = eye};
    SaWork *w = SaWork_new();
    assert_non_null(w);
    assert_int_equal(SaWork_prepare(w, &b), 0);
    double *k = malloc(sizeof(double) * N * N), s[N];
    assert_non_null(k);
    SaWork_jacobian(w, k);
    singular_values(N, k, s);
    /* K itself is orthogonal: κ = 1. */
    assert_true(fabs(Conditioning_kappa(s[0], s[N - 1], N) - 1.0) < 8 * N * DBL_EPSILON);
    for (int i = 0; i < N; i++)
        k[i + (size_t)i * N] += 1.0;
    singular_values(N, k, s);
    assert_true(isnan(Conditioning_kappa(s[0], s[N - 1], N)));
    free(k);
    SaWork_free(w);
}

static void test_matrix_free_estimates_match_the_svd(void **state)
{
    (void)state;
    Fixture f;
    /* κ(K) ≈ 2.8·10⁴ at seed 3, within what the products' rounding lets Lanczos on KᵀK
       certify (SaWork_kappa_resolvable ≈ 5·10⁵ here; seed 91's 1.4·10⁶ is beyond it). */
    fixture(&f, MASK_FULL, 3);
    SaWork *w = SaWork_new();
    assert_non_null(w);
    SaBlock b = block_of(&f);
    assert_int_equal(SaWork_prepare(w, &b), 0);
    double *k = malloc(sizeof(double) * N * N), s[N];
    assert_non_null(k);
    SaWork_jacobian(w, k);
    singular_values(N, k, s);
    SingularValueEstimate top, smallest;
    assert_int_equal(SaWork_extreme(w, true, N, 1e-10, 1, NAN, &top), 0);
    assert_int_equal(SaWork_extreme(w, false, N, 1e-10, 2, top.value + top.error, &smallest), 0);
    assert_true(SaWork_kappa_resolvable(w, s[0]) > s[0] / s[N - 1]);
    assert_false(isnan(top.value) || isnan(smallest.value));
    /* The certificates: each value within its stated error, plus the SVD's own N·ε·s_max
       (relative to s_min: N·ε·κ). */
    double svd = 4.0 * N * DBL_EPSILON * s[0];
    if (fabs(top.value - s[0]) > top.error + svd)
        fail_msg("Lanczos s_max %.17g ± %.3g, SVD %.17g", top.value, top.error, s[0]);
    if (fabs(smallest.value - s[N - 1]) > smallest.error + svd * s[0] / s[N - 1])
        fail_msg("Lanczos s_min %.17g ± %.3g, SVD %.17g", smallest.value, smallest.error, s[N - 1]);
    /* The perturbation term alone: E = K − B, against the SVD of K − (W_VOᵀ ⊗ A). */
    for (int p = 0; p < D; p++)
        for (int q = 0; q < D; q++)
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++)
                    k[(i + T * p) + (size_t)(j + T * q) * N] -=
                        f.wvo[q + p * D] * f.applied[i * T + j];
    singular_values(N, k, s);
    SaWork_perturbation_only(w, true);
    assert_int_equal(SaWork_extreme(w, true, N, 1e-10, 3, NAN, &top), 0);
    if (fabs(top.value - s[0]) > top.error + svd)
        fail_msg("Lanczos |E|_2 %.17g ± %.3g, SVD %.17g", top.value, top.error, s[0]);
    free(k);
    SaWork_free(w);
}

/* The witness bounds (SaWork_witness) against the SVD of the built K: for pseudo-random
   vectors and through K and Kᵀ alike, the upper one is at least s_min and the lower one at
   most s_max; a zero vector gives no bound.  SaWork_rounding_consistent accepts fl(Kᵀy) and
   refuses a vector that is not Kᵀy (one entry moved by far more than the rounding allows). */
static void test_witness_bounds_hold_and_bad_vectors_are_refused(void **state)
{
    (void)state;
    Fixture f;
    fixture(&f, MASK_CAUSAL, 17);
    SaWork *w = SaWork_new();
    assert_non_null(w);
    SaBlock b = block_of(&f);
    assert_int_equal(SaWork_prepare(w, &b), 0);
    double *k = malloc(sizeof(double) * N * N), s[N], y[N], ky[N], scratch[2 * N];
    assert_non_null(k);
    SaWork_jacobian(w, k);
    singular_values(N, k, s);
    double norm = s[0] * (1 + 1e-12);
    uint64_t z = 5;
    for (int trial = 0; trial < 20; trial++) {
        for (int i = 0; i < N; i++) {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            y[i] = (double)(z >> 11) / 9007199254740992.0 - 0.5;
        }
        for (int transposed = 0; transposed < 2; transposed++) {
            double above = SaWork_witness(w, y, true, transposed, ky, NULL);
            double below = SaWork_witness(w, y, false, transposed, ky, NULL);
            assert_true(above >= s[N - 1]);
            assert_true(below <= s[0]);
            assert_true(below <= above);
        }
        double ky_error = SaWork_product_bounded(w, y, true, ky);
        assert_true(SaWork_rounding_consistent(w, y, ky, ky_error, scratch));
        ky[trial % N] += 1e-3 * norm;
        assert_false(SaWork_rounding_consistent(w, y, ky, ky_error, scratch));
    }
    /* Lanczos's Ritz vectors: on KᵀK from its own start, on KKᵀ from a given one, stopped
       early by give_up or not, the bound stays on its side of the extreme. */
    SingularValueEstimate e;
    assert_int_equal(SaWork_extreme(w, true, 12, 1e-10, 1, NAN, &e), 0);
    assert_true(e.bound <= s[0] && e.bound > 0.5 * s[0]);
    for (int left = 0; left < 2; left++) {
        ExtremeRun run = {.left = left,
                          .budget = 16,
                          .tolerance = 1e-10,
                          .give_up = NAN,
                          .seed = 2,
                          .start = left ? y : NULL,
                          .norm = norm};
        assert_int_equal(SaWork_extreme_run(w, &run, &e), 0);
        assert_true(e.bound >= s[N - 1]);
        run.give_up = 1e3 * s[0];
        assert_int_equal(SaWork_extreme_run(w, &run, &e), 0);
        assert_true(isnan(e.value) && e.taken == 8 && e.bound >= s[N - 1]);
    }
    memset(y, 0, sizeof y);
    assert_true(isnan(SaWork_witness(w, y, true, false, ky, NULL)));
    free(k);
    SaWork_free(w);
}

/* DenseExtremes_run on an n×n matrix: 0 and both values within 4·n·ε·s_max of the SVD's
   (each resolves a singular value to about n·ε·s_max). */
static void check_dense_extremes(DenseExtremes *e, int n, const double *k)
{
    double *lu = malloc(sizeof(double) * (size_t)n * n), *s = malloc(sizeof(double) * n);
    assert_non_null(lu);
    assert_non_null(s);
    singular_values(n, k, s);
    double s_max = NAN, s_min = NAN, bound = 4.0 * n * DBL_EPSILON * s[0];
    assert_int_equal(DenseExtremes_run(e, NULL, n, k, lu, &s_max, &s_min), 0);
    if (!(fabs(s_max - s[0]) <= bound) || !(fabs(s_min - s[n - 1]) <= bound))
        fail_msg("n = %d: s_max %.17g (SVD %.17g), s_min %.17g (SVD %.17g), bound %.3g", n, s_max,
                 s[0], s_min, s[n - 1], bound);
    free(lu);
    free(s);
}

/* Q₁·diag(s)·Q₂ᵀ with Q from the QR of Gaussian matrices: n×n with singular values s. */
static void matrix_with_singular_values(int n, const double *s, uint64_t seed, double *k)
{
    size_t nn = (size_t)n * n;
    double *q1 = malloc(sizeof(double) * nn), *q2 = malloc(sizeof(double) * nn);
    assert_non_null(q1);
    assert_non_null(q2);
    random_vector(seed, 1, q1, (int)nn);
    random_vector(seed, 2, q2, (int)nn);
    Linalg *la = Linalg_new();
    assert_non_null(la);
    assert_int_equal(Linalg_orthonormalise(la, n, n, q1), 0);
    assert_int_equal(Linalg_orthonormalise(la, n, n, q2), 0);
    for (int j = 0; j < n; j++)
        cblas_dscal(n, s[j], q1 + (size_t)j * n, 1);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, q1, n, q2, n, 0.0, k, n);
    Linalg_free(la);
    free(q1);
    free(q2);
}

/* Lanczos whose basis spans several of the reorthogonalisation's blocks (2 MiB: 16 vectors at
   T·d = 16384): K = W_VOᵀ ⊗ A for an A that does not move with X, so its singular values are
   the products of A's and W_VO's, prescribed here (gaps of 5% at both ends).  Both extremes
   within their certificates plus the rounding of forming A and W_VO (~d·ε), after more steps
   than one block holds. */
static void test_lanczos_across_blocks_of_the_basis(void **state)
{
    (void)state;
    enum { BT = 32, BD = 512, BN = BT * BD };
    double sa[BT], sw[BD];
    for (int i = 0; i < BT; i++) /* 1, then 0.95 … 0.55, then 0.5 */
        sa[i] = i == 0 ? 1.0 : i == BT - 1 ? 0.5 : 0.95 - 0.4 * (i - 1) / (BT - 3);
    for (int j = 0; j < BD; j++) /* 2, then 1.9 … 1.2, then 1 */
        sw[j] = j == 0 ? 2.0 : j == BD - 1 ? 1.0 : 1.9 - 0.7 * (j - 1) / (BD - 3);
    double *a = malloc(sizeof(double) * BT * BT), *wvo = malloc(sizeof(double) * BD * BD);
    double *x = malloc(sizeof(double) * BN);
    assert_non_null(a);
    assert_non_null(wvo);
    assert_non_null(x);
    matrix_with_singular_values(BT, sa, 5, a); /* read row-major: Aᵀ, the same values */
    matrix_with_singular_values(BD, sw, 6, wvo);
    random_vector(7, 1, x, BN);
    SaBlock b = {.T = BT, .d = BD, .x = x, .scale = 1.0, .wvo = wvo, .applied = a};
    SaWork *w = SaWork_new();
    assert_non_null(w);
    assert_int_equal(SaWork_prepare(w, &b), 0);
    SingularValueEstimate top, smallest;
    assert_int_equal(SaWork_extreme(w, true, 240, 1e-13, 1, NAN, &top), 0);
    assert_int_equal(SaWork_extreme(w, false, 240, 1e-13, 2, top.value + top.error, &smallest), 0);
    double formed = 4.0 * BD * DBL_EPSILON;
    if (!(fabs(top.value - 2.0) <= top.error + 2.0 * formed))
        fail_msg("s_max %.17g ± %.3g after %d steps, exactly 2", top.value, top.error, top.taken);
    if (!(fabs(smallest.value - 0.5) <= smallest.error + 2.0 * formed))
        fail_msg("s_min %.17g ± %.3g after %d steps, exactly 0.5", smallest.value, smallest.error,
                 smallest.taken);
    assert_true(smallest.taken > 16 && top.taken > 16);
    SaWork_free(w);
    free(a);
    free(wvo);
    free(x);
}

/* The exact path's extremes without the SVD agree with dgesdd: on K and K + I of a block, on
   matrices of κ = 1 (one step), 10⁸ and with a double smallest singular value; an exactly
   singular one is left to the SVD. */
static void test_dense_extremes_match_the_svd(void **state)
{
    (void)state;
    DenseExtremes *e = DenseExtremes_new();
    assert_non_null(e);
    Fixture f;
    fixture(&f, MASK_CAUSAL, 17);
    SaWork *w = SaWork_new();
    assert_non_null(w);
    SaBlock b = block_of(&f);
    assert_int_equal(SaWork_prepare(w, &b), 0);
    enum { BIG = 300 };
    double *k = malloc(sizeof(double) * BIG * BIG), s[BIG];
    assert_non_null(k);
    assert_int_equal(SaWork_jacobian(w, k), 0);
    check_dense_extremes(e, N, k);
    for (int i = 0; i < N; i++)
        k[i + (size_t)i * N] += 1.0;
    check_dense_extremes(e, N, k);
    for (int i = 0; i < BIG; i++)
        s[i] = 1.0;
    matrix_with_singular_values(BIG, s, 5, k);
    check_dense_extremes(e, BIG, k);
    for (int i = 0; i < BIG; i++)
        s[i] = 3.0 * pow(10.0, -8.0 * i / (BIG - 1));
    matrix_with_singular_values(BIG, s, 6, k);
    check_dense_extremes(e, BIG, k);
    s[BIG - 2] = s[BIG - 1];
    matrix_with_singular_values(BIG, s, 7, k);
    check_dense_extremes(e, BIG, k);
    memset(k + (size_t)(BIG / 2) * BIG, 0, sizeof(double) * BIG);
    double *lu = malloc(sizeof(double) * BIG * BIG), s_max, s_min;
    assert_non_null(lu);
    assert_int_equal(DenseExtremes_run(e, NULL, BIG, k, lu, &s_max, &s_min), DENSE_NOT_CERTIFIED);
    free(lu);
    free(k);
    SaWork_free(w);
    DenseExtremes_free(e);
}

/* Singular values of αZ_h + βI, Z_h the query stream's h-th d² numbers (head h). */
static void cutting_skip_target(const Config *c, RandomStream *rs, int h, double *z, double *s)
{
    int d = c->width;
    size_t dd = (size_t)d * d;
    double *all = malloc(sizeof(double) * dd * (size_t)(h + 1));
    assert_non_null(all);
    RandomStream_gaussian(rs, 5, 2, ROLE_QUERY, c->init_alpha / sqrt((double)d), all,
                          dd * (size_t)(h + 1));
    memcpy(z, all + dd * (size_t)h, sizeof(double) * dd);
    free(all);
    for (int i = 0; i < d; i++)
        z[i + (size_t)i * d] += c->init_beta;
    if (s) {
        double *copy = malloc(sizeof(double) * dd);
        assert_non_null(copy);
        memcpy(copy, z, sizeof(double) * dd);
        singular_values(d, copy, s);
        free(copy);
    }
}

static void test_cutting_skip_weights(void **state)
{
    (void)state;
    Config c = Config_default();
    c.width = 24;
    c.init = INIT_CUTTING_SKIP;
    c.init_alpha = 2.0;
    c.init_beta = 0.6;
    c.init_c = 3.0;
    int d = c.width;
    size_t dd = (size_t)d * d;
    double *wq = malloc(sizeof(double) * dd), *wk = malloc(sizeof(double) * dd),
           *z = malloc(sizeof(double) * dd), *m = malloc(sizeof(double) * dd),
           *wo = malloc(sizeof(double) * dd), *sigma = malloc(sizeof(double) * d),
           *want = malloc(sizeof(double) * d),
           *scratch = malloc(sizeof(double) * Init_scratch_doubles(&c));
    RandomStream *rs = RandomStream_new();
    Linalg *la = Linalg_new();
    assert_true(wq && wk && z && m && wo && sigma && want && scratch && rs && la);
    assert_int_equal(Init_draw_query_key(rs, la, &c, 5, 2, wq, wk, scratch), 0);
    /* One head: W^Q W^Kᵀ = αZ + βI with Z from the query stream, N(0, 1/d). */
    cutting_skip_target(&c, rs, 0, z, NULL);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, d, d, d, 1.0, wq, d, wk, d, 0.0, m, d);
    double scale = cblas_dnrm2((int)dd, z, 1);
    for (size_t i = 0; i < dd; i++)
        if (fabs(m[i] - z[i]) > 8.0 * d * DBL_EPSILON * scale)
            fail_msg("W^Q W^K^T - (alpha Z + beta I) = %g at %zu", m[i] - z[i], i);
    assert_int_equal(Init_logit_scale(&c), 1.0);
    /* W_VO = c²·orthogonal, without an output projection (W^V carries c²) and with an
       orthogonal one (W^V = c·U, W^O = c·Vᵀ): every singular value is c². */
    for (int with_output = 0; with_output < 2; with_output++) {
        c.output = with_output ? OUTPUT_ORTHOGONAL : OUTPUT_IDENTITY;
        assert_int_equal(Init_draw(rs, la, &c, 5, 2, MATRIX_VALUE, m), 0);
        if (with_output) {
            assert_int_equal(Init_draw(rs, la, &c, 5, 2, MATRIX_OUTPUT, wo), 0);
            singular_values(d, memcpy(z, wo, sizeof(double) * dd), sigma);
            for (int i = 0; i < d; i++)
                if (fabs(sigma[i] - 3.0) > 8.0 * d * DBL_EPSILON * 3.0)
                    fail_msg("s_%d(W^O) = %.17g, c = 3", i, sigma[i]);
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0, m, d, wo, d, 0.0,
                        z, d);
            memcpy(m, z, sizeof(double) * dd);
        }
        singular_values(d, m, sigma);
        for (int i = 0; i < d; i++)
            if (fabs(sigma[i] - 9.0) > 8.0 * d * DBL_EPSILON * 9.0)
                fail_msg("s_%d(W_VO) = %.17g, c^2 = 9 (output %d)", i, sigma[i], with_output);
    }
    /* Heads: head h's W^Q_h W^K_hᵀ is the best rank-d_h approximation of αZ_h + βI, Z_h the
       stream's h-th d² numbers: its d_h singular values are the leading ones of the target. */
    c.heads = 3;
    int dh = d / c.heads;
    double *scratch3 = malloc(sizeof(double) * Init_scratch_doubles(&c));
    assert_non_null(scratch3);
    assert_int_equal(Init_draw_query_key(rs, la, &c, 5, 2, wq, wk, scratch3), 0);
    for (int h = 0; h < c.heads; h++) {
        cutting_skip_target(&c, rs, h, z, want);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, d, d, dh, 1.0, wq + (size_t)h * dh * d,
                    d, wk + (size_t)h * dh * d, d, 0.0, m, d);
        singular_values(d, m, sigma);
        for (int i = 0; i < d; i++) {
            double expected = i < dh ? want[i] : 0.0;
            if (fabs(sigma[i] - expected) > 16.0 * d * DBL_EPSILON * want[0])
                fail_msg("head %d: s_%d(W^Q_h W^K_h^T) = %.17g, target's %.17g", h, i, sigma[i],
                         expected);
        }
    }
    free(scratch3);
    RandomStream_free(rs);
    Linalg_free(la);
    free(wq);
    free(wk);
    free(z);
    free(m);
    free(wo);
    free(sigma);
    free(want);
    free(scratch);
}

static void test_softmax_demo_closed_form(void **state)
{
    (void)state;
    enum { n = 10, DRAWS = 200 };
    double kappa[DRAWS];
    /* α = 1e-3: softmax is 1/2-Lipschitz per row in the 2-norm, so A moves from
       softmax(βI) by δ ≤ α‖Z‖_F/2, and Weyl bounds each singular value's move by δ.
       ‖Z‖_F² ~ χ²(n²)/n, mean n = 10: ‖Z‖_F ≤ 6 holds for these seeds (P(χ²(100) > 360)
       is below 1e-30). */
    const double betas[] = {1.0, 5.0, -2.0};
    for (size_t bi = 0; bi < sizeof betas / sizeof betas[0]; bi++) {
        double alpha = 1e-3, beta = betas[bi];
        assert_int_equal(SoftmaxDemo_run(n, alpha, beta, 1, DRAWS, kappa), 0);
        double peak = expm1(beta), top = 1.0, bottom = fabs(peak) / (peak + n);
        double closed = SoftmaxDemo_closed_form(n, beta), delta = alpha * 6.0 / 2.0;
        assert_true(fabs(closed - top / bottom) <= 4 * DBL_EPSILON * closed);
        for (int k = 0; k < DRAWS; k++)
            if (!(kappa[k] >= (top - delta) / (bottom + delta) &&
                  kappa[k] <= (top + delta) / (bottom - delta)))
                fail_msg("beta %g draw %d: kappa %.6g outside [%.6g, %.6g] around %.6g", beta, k,
                         kappa[k], (top - delta) / (bottom + delta),
                         (top + delta) / (bottom - delta), closed);
    }
    /* β = 0: rows near uniform, κ grows like 1/α, and the closed form is infinite (NaN). */
    assert_true(isnan(SoftmaxDemo_closed_form(n, 0.0)));
    assert_int_equal(SoftmaxDemo_run(n, 0.1, 0.0, 1, DRAWS, kappa), 0);
    int large = 0;
    for (int k = 0; k < DRAWS; k++)
        large += isnan(kappa[k]) || kappa[k] > 50;
    assert_true(large > DRAWS * 9 / 10);
}

/* Each variant of the forward pass's test changes one thing the forward pass reads; without
   LayerNorm the tokens' norm moves with every weight, so a mismatch anywhere shows in it. */
enum { FORWARD_VARIANTS = 25 };

/* Variant v of the forward pass's test into c; returns its name.  (Over 80 lines: a table of
   the 25 variants, one case each, read top to bottom.) */
static const char *forward_variant(int v, Config *c)
{
    *c = Config_default();
    c->tokens = 8;
    c->width = 12;
    c->depth = 4;
    c->skip = SKIP_PLAIN;
    c->layernorm = v == 0 ? LAYERNORM_RMS : LAYERNORM_NONE;
    static const char *const what[FORWARD_VARIANTS] = {
        "normal, rms",
        "normal",
        "cutting-skip",
        "xavier",
        "wo gaussian",
        "cutting-skip, wo orthogonal",
        "logit-scale linear",
        "ln sqrt-d",
        "gains 0.5, 2",
        "input sqrt-d, scaled skip",
        "3 heads",
        "3 heads, wo orthogonal",
        "2 heads, cutting-skip",
        "pre-LN",
        "MLP gelu",
        "pre-LN, 2 heads, MLP relu, wo gaussian",
        "markov, 2 heads, MLP tanh",
        "mimetic, 2 heads, wo gaussian (its factor)",
        "mimetic, identity values",
        "MLP swiglu, hidden 20",
        "pre-LN, 4 heads, 2 key/value heads, MLP geglu",
        "peri-LN, 2 heads, MLP swiglu, wo gaussian",
        "output-LN, MLP gelu",
        "3 heads, sinks 0.5 + N(0, 0.3^2)",
        "window-causal w = 2, window layers 1:1"};
    switch (v) {
    case 2:
        c->init = INIT_CUTTING_SKIP;
        break;
    case 3:
        c->init = INIT_XAVIER;
        break;
    case 4:
        c->output = OUTPUT_GAUSSIAN;
        break;
    case 5:
        c->init = INIT_CUTTING_SKIP;
        c->output = OUTPUT_ORTHOGONAL;
        break;
    case 6:
        c->logit_scale = LOGIT_SCALE_LINEAR;
        break;
    case 7:
        c->layernorm = LAYERNORM_LN;
        c->ln_scale = LN_SCALE_SQRT_D;
        break;
    case 8:
        c->skip_gain = 0.5;
        c->branch_gain = 2.0;
        break;
    case 9:
        c->input_norm = INPUT_NORM_SQRT_D;
        c->skip = SKIP_SCALED;
        break;
    case 10:
        c->heads = 3;
        c->head = 2;
        break;
    case 11:
        c->heads = 3;
        c->output = OUTPUT_ORTHOGONAL;
        break;
    case 12:
        c->heads = 2;
        c->init = INIT_CUTTING_SKIP;
        c->layernorm = LAYERNORM_LN;
        break;
    case 13:
        c->layernorm = LAYERNORM_RMS;
        c->ln_place = LN_PLACE_PRE;
        break;
    case 14:
        c->layernorm = LAYERNORM_LN;
        c->mlp = MLP_GELU;
        c->mlp_ratio = 2;
        break;
    case 15:
        c->layernorm = LAYERNORM_LN;
        c->ln_place = LN_PLACE_PRE;
        c->heads = 2;
        c->mlp = MLP_RELU;
        c->output = OUTPUT_GAUSSIAN;
        break;
    case 16:
        c->attention = ATTENTION_MARKOV;
        c->heads = 2;
        c->mlp = MLP_TANH;
        c->mlp_ratio = 1;
        break;
    case 17:
        c->init = INIT_MIMETIC;
        c->heads = 2;
        c->output = OUTPUT_GAUSSIAN;
        c->layernorm = LAYERNORM_LN;
        break;
    case 18:
        c->init = INIT_MIMETIC;
        c->init_value = MATRIX_INIT_IDENTITY;
        c->layernorm = LAYERNORM_LN;
        break;
    case 19:
        c->layernorm = LAYERNORM_LN;
        c->mlp = MLP_SWIGLU;
        c->mlp_hidden = 20;
        break;
    case 20:
        c->layernorm = LAYERNORM_RMS;
        c->ln_place = LN_PLACE_PRE;
        c->heads = 4;
        c->kv_heads = 2;
        c->mlp = MLP_GEGLU;
        c->output = OUTPUT_GAUSSIAN;
        break;
    case 21:
        c->layernorm = LAYERNORM_RMS;
        c->ln_scale = LN_SCALE_SQRT_D;
        c->ln_place = LN_PLACE_PERI;
        c->heads = 2;
        c->mlp = MLP_SWIGLU;
        c->output = OUTPUT_GAUSSIAN;
        break;
    case 22:
        c->layernorm = LAYERNORM_LN;
        c->ln_place = LN_PLACE_OUTPUT;
        c->mlp = MLP_GELU;
        break;
    case 23:
        c->heads = 3;
        c->sink = 0.5;
        c->sink_std = 0.3;
        break;
    case 24:
        c->mask = MASK_WINDOW_CAUSAL;
        c->window = 2;
        assert_int_equal(Config_window_layers_code("1:1", &c->window_layers), 0);
        break;
    }
    return what[v];
}

/* The model's and the conditioning's token norms, layer by layer, bit for bit. */
static void assert_norms_agree(const Config *c, const Result *r, const Conditioning *cond,
                               const char *what)
{
    for (int l = 0; l <= c->depth; l++) {
        double a = r->network.log10_norm[l], b = cond->network.log10_norm[l];
        if (!(a == b))
            fail_msg("%s, layer %d: model log10|X| %.17g, conditioning %.17g", what, l, a, b);
        a = r->counterpart.log10_norm[l];
        b = cond->counterpart.log10_norm[l];
        if (!(a == b))
            fail_msg("%s, layer %d counterpart: %.17g vs %.17g", what, l, a, b);
    }
}

/* Without LayerNorm the tokens grow: the attention saturates within four layers, or K + I
   turns singular (κ beyond double precision, null); the κ are checked where LayerNorm keeps
   the tokens' scale: κ(a·I + b′·K) there only where that is the block's Jacobian
   (Conditioning_skip_jacobian), else null.  Grouped values make B singular (null, said). */
static void assert_kappas(const Config *c, const Conditioning *cond, const char *what)
{
    bool settled = c->layernorm != LAYERNORM_NONE && !Layer_branch_norm(c);
    if (c->kv_heads) {
        settled = false;
        for (int l = 1; l <= c->depth; l++)
            assert_true(isnan(cond->network.kappa_dominant[l]) &&
                        isnan(cond->network.kappa_value_output[l]) &&
                        isfinite(cond->network.kappa_jacobian[l]));
        bool said = false;
        for (int i = 0; i < cond->warnings.count; i++)
            said = said || strstr(cond->warnings.text[i], "B are singular");
        assert_true(said);
    }
    for (int l = 1; settled && l <= c->depth; l++)
        if (isnan(cond->network.kappa_jacobian[l]) ||
            isnan(cond->network.kappa_jacobian_skip[l]) == Conditioning_skip_jacobian(c) ||
            (c->heads == 1 &&
             !(cond->network.kappa_dominant[l] >= cond->network.kappa_attention[l])) ||
            isnan(cond->network.kappa_dominant[l]))
            fail_msg("%s, layer %d: kappa(K) %g, kappa(a I + b' K) %g, kappa(B) %g, kappa(A) %g",
                     what, l, cond->network.kappa_jacobian[l], cond->network.kappa_jacobian_skip[l],
                     cond->network.kappa_dominant[l], cond->network.kappa_attention[l]);
}

/* The conditioning pass runs Model_run's layer step: the norms of the tokens agree layer by
   layer bit for bit, for both networks and every variant. */
static void test_forward_pass_agrees_with_the_model(void **state)
{
    (void)state;
    for (int v = 0; v < FORWARD_VARIANTS; v++) {
        Config c;
        const char *what = forward_variant(v, &c);
        char err[256];
        assert_int_equal(Config_validate(&c, err, sizeof err), 0);
        Workspace *w = Workspace_new();
        Result *r = Result_new();
        assert_int_equal(Model_run(&c, w, r, NULL, err, sizeof err), 0);
        Conditioning cond;
        assert_int_equal(Conditioning_run(&c, &cond, err, sizeof err), 0);
        assert_true(cond.jacobian_exact);
        assert_norms_agree(&c, r, &cond, what);
        assert_kappas(&c, &cond, what);
        Conditioning_release(&cond);
        Result_free(r);
        Workspace_free(w);
    }
}

/* Every head's applied attention of every layer of both networks, as a Progress sees it. */
enum { SEEN_LAYERS = 3, SEEN_HEADS = 3, SEEN_T = 8 };
typedef struct {
    double a[2][SEEN_LAYERS + 1][SEEN_HEADS][SEEN_T * SEEN_T];
    int count[2][SEEN_LAYERS + 1][SEEN_HEADS];
    int T;
} Seen;

static void seen_applied(void *context, int network, int layer, int head, const double *applied)
{
    Seen *s = context;
    assert_true(network >= 0 && network < 2 && layer >= 1 && layer <= SEEN_LAYERS && head >= 0 &&
                head < SEEN_HEADS);
    memcpy(s->a[network][layer][head], applied, sizeof(double) * (size_t)s->T * s->T);
    s->count[network][layer][head]++;
}

/* The conditioning pass applies Model_run's attention matrices: each head's of each layer of
   both networks equal bit for bit, for heads, pre-LN, an MLP, W^O, mimetic and cutting-skip
   weights, markov and a gap mode whose matrix differs from the softmax.  And that matrix is
   the one both show: its singular values are the run's shown ones and the conditioning's
   shown layer's, bit for bit. */
/* Variant v of the applied-attention test. */
static Config applied_variant(int v)
{
    Config c = Config_default();
    c.tokens = SEEN_T;
    c.width = 12;
    c.depth = SEEN_LAYERS;
    c.layer = 2;
    c.skip = SKIP_PLAIN;
    c.layernorm = LAYERNORM_LN;
    if (v == 0) {
        c.heads = 3;
        c.head = 2;
    } else if (v == 1 || v == 2) {
        c.heads = 2;
        c.ln_place = LN_PLACE_PRE;
        c.output = OUTPUT_GAUSSIAN;
        c.mlp = v == 1 ? MLP_GELU : MLP_NONE;
        c.mlp_ratio = 2;
        c.init = v == 2 ? INIT_MIMETIC : INIT_NORMAL;
    } else if (v == 3) {
        c.init = INIT_CUTTING_SKIP;
        c.gap = GAP_CENTER;
        c.mask = MASK_CAUSAL;
        c.layer = 3;
    } else if (v == 4) {
        c.attention = ATTENTION_MARKOV;
        c.heads = 2;
        c.head = 2;
        c.mlp = MLP_TANH;
        c.mlp_ratio = 1;
        c.gap = GAP_CENTER;
    } else {
        c.layernorm = LAYERNORM_RMS;
        c.skip = SKIP_SCALED;
        c.skip_gain = 0.5;
        c.branch_gain = 2.0;
        c.layer = 1;
    }
    return c;
}

/* The model and the conditioning saw every head's applied attention of every layer of both
   networks once, the same bit for bit. */
static void assert_seen_alike(const Config *c, const Seen *model, const Seen *conditioning,
                              const char *what)
{
    size_t tt = (size_t)c->tokens * c->tokens;
    for (int n = 0; n < 2; n++)
        for (int l = 1; l <= c->depth; l++)
            for (int h = 0; h < c->heads; h++) {
                if (model->count[n][l][h] != 1 || conditioning->count[n][l][h] != 1)
                    fail_msg("%s: network %d layer %d head %d seen %d and %d times", what, n, l, h,
                             model->count[n][l][h], conditioning->count[n][l][h]);
                if (memcmp(model->a[n][l][h], conditioning->a[n][l][h], sizeof(double) * tt))
                    fail_msg("%s: network %d layer %d head %d: the attention differs", what, n, l,
                             h);
            }
}

static void test_conditioning_applies_the_runs_attention(void **state)
{
    (void)state;
    enum { VARIANTS = 6 };
    const char *what[VARIANTS] = {"3 heads, head 2 shown, ln",
                                  "pre-LN, 2 heads, MLP gelu, wo gaussian",
                                  "mimetic, 2 heads, wo gaussian, pre-LN",
                                  "cutting-skip, gap center, causal",
                                  "markov, 2 heads, MLP tanh, gap center",
                                  "one head, rms, scaled skip, gains"};
    for (int v = 0; v < VARIANTS; v++) {
        Config c = applied_variant(v);
        char err[256];
        assert_int_equal(Config_validate(&c, err, sizeof err), 0);
        static Seen model, conditioning;
        memset(&model, 0, sizeof model);
        memset(&conditioning, 0, sizeof conditioning);
        model.T = conditioning.T = c.tokens;
        Progress watch_model = {.context = &model, .attention_applied = seen_applied};
        Progress watch_conditioning = {.context = &conditioning, .attention_applied = seen_applied};
        Workspace *w = Workspace_new();
        Result *r = Result_new();
        assert_int_equal(Model_run(&c, w, r, &watch_model, err, sizeof err), 0);
        Conditioning cond;
        ConditioningControl control = {.progress = &watch_conditioning};
        assert_int_equal(Conditioning_run_controlled(&c, &control, &cond, err, sizeof err), 0);
        assert_seen_alike(&c, &model, &conditioning, what[v]);
        size_t tt = (size_t)c.tokens * c.tokens;
        /* The shown matrix's singular values, computed here from what the hook saw. */
        double shown[SEEN_T * SEEN_T], s[SEEN_T];
        memcpy(shown, model.a[0][c.layer][c.head - 1], sizeof(double) * tt);
        Linalg *la = Linalg_new();
        assert_int_equal(Linalg_singular_values(la, c.tokens, c.tokens, shown, s), 0);
        Linalg_free(la);
        assert_true(r->spectra_ready);
        assert_memory_equal(s, r->singular_values, sizeof(double) * c.tokens);
        assert_memory_equal(s, cond.attention_singular_values, sizeof(double) * c.tokens);
        Conditioning_release(&cond);
        Result_free(r);
        Workspace_free(w);
    }
}

/* Heads sum: K of three heads on one X, from the JVP, equals finite differences of
   Σ_h A_h(X) X W_VO,h column by column; the dominant and perturbation products split it. */
static void test_multi_head_jacobian_matches_finite_differences(void **state)
{
    (void)state;
    enum { HEADS = 3 };
    Fixture f[HEADS];
    SaBlock blocks[HEADS];
    for (int h = 0; h < HEADS; h++) {
        fixture(&f[h], h == 1 ? MASK_CAUSAL : MASK_FULL, 60 + (uint64_t)h);
        memcpy(f[h].x, f[0].x, sizeof f[0].x);
        attention_of(&f[h], f[h].x, f[h].softmax);
        memcpy(f[h].applied, f[h].softmax, sizeof f[h].applied);
        blocks[h] = block_of(&f[h]);
    }
    SaWork *w = SaWork_new();
    assert_non_null(w);
    assert_int_equal(SaWork_prepare_heads(w, blocks, HEADS), 0);
    double *k = malloc(sizeof(double) * N * N), *b = malloc(sizeof(double) * N * N),
           *e = malloc(sizeof(double) * N * N);
    assert_true(k && b && e);
    SaWork_jacobian(w, k);
    for (int j = 0; j < N; j++) {
        double unit[N] = {0}, fd[N], diff[N];
        unit[j] = 1.0;
        double bound = central_difference(f, HEADS, unit, fd);
        for (int i = 0; i < N; i++)
            diff[i] = k[i + (size_t)j * N] - fd[i];
        if (norm2(diff, N) > bound)
            fail_msg("column %d: |K e - FD| = %.3g > %.3g", j, norm2(diff, N), bound);
    }
    /* B = Σ_h W_VO,hᵀ ⊗ A_h entry by entry: B[(i,q),(j,p)] = Σ_h A_h[i,j]·W_VO,h[p,q]. */
    SaWork_dominant_only(w, true);
    SaWork_jacobian(w, b);
    SaWork_perturbation_only(w, true);
    SaWork_jacobian(w, e);
    double scale = 0;
    for (int i = 0; i < N * N; i++)
        scale = fmax(scale, fabs(k[i]));
    for (int q = 0; q < D; q++)
        for (int i = 0; i < T; i++)
            for (int p = 0; p < D; p++)
                for (int jj = 0; jj < T; jj++) {
                    double want = 0;
                    for (int h = 0; h < HEADS; h++)
                        want += f[h].applied[i * T + jj] * f[h].wvo[p + q * D];
                    size_t at = (size_t)(i + q * T) + (size_t)(jj + p * T) * N;
                    if (fabs(b[at] - want) > 64 * DBL_EPSILON * scale)
                        fail_msg("B[(%d,%d),(%d,%d)] = %.17g, expected %.17g", i, q, jj, p, b[at],
                                 want);
                    if (fabs(b[at] + e[at] - k[at]) > 64 * DBL_EPSILON * scale)
                        fail_msg("B + E != K at (%d,%d),(%d,%d)", i, q, jj, p);
                }
    free(k);
    free(b);
    free(e);
    SaWork_free(w);
}

/* κ(K_1) does not depend on c: at layer 1 the input X0 is the same and K = c²·K(c = 1). */
static void test_kappa_jacobian_does_not_depend_on_c(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 6;
    c.width = 10;
    c.depth = 1;
    c.init = INIT_CUTTING_SKIP;
    double kappa[2];
    const double cs[2] = {1.0, 3.0};
    char err[256];
    for (int i = 0; i < 2; i++) {
        c.init_c = cs[i];
        Conditioning cond;
        assert_int_equal(Conditioning_run(&c, &cond, err, sizeof err), 0);
        kappa[i] = cond.network.kappa_jacobian[1];
        assert_true(fabs(cond.network.kappa_value_output[1] - 1.0) < 1e-13);
        Conditioning_release(&cond);
    }
    assert_false(isnan(kappa[0]));
    int n = c.tokens * c.width;
    if (fabs(kappa[0] - kappa[1]) > 8.0 * n * DBL_EPSILON * kappa[0] * kappa[0])
        fail_msg("kappa(K) at c = 1: %.17g, at c = 3: %.17g", kappa[0], kappa[1]);
}

/* QK-norm, RoPE, the soft-cap and a branch LN no longer make K null (test_conditioning_shape
   checks its values): the run gives κ(K) at every layer, on both paths, with no warning that
   refuses it, and κ(A) still reads the attention the layer step applied. */
static void test_jacobian_with_qk_norm_rope_cap_and_branch_ln(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 6;
    c.width = 10;
    c.depth = 3;
    /* Causal and σ_qk = 0.3: the pre-LN'd input leaves the softmax unsaturated, so K is not
       singular to double precision before any feature acts. */
    c.mask = MASK_CAUSAL;
    c.sigma_qk = 0.3;
    char err[256];
    for (int which = 0; which < 4; which++) {
        c.qk_norm = which == 0 ? QK_NORM_HEAD : QK_NORM_NONE;
        c.rope = which == 1 ? ROPE_PAIRS : ROPE_NONE;
        c.nope_every = which == 1 ? 2 : 0;
        c.logit_softcap = which == 2 ? 5.0 : 0.0;
        c.layernorm = which == 3 ? LAYERNORM_RMS : LAYERNORM_NONE;
        c.ln_place = which == 3 ? LN_PLACE_PERI : LN_PLACE_POST;
        c.ln_scale = LN_SCALE_SQRT_D; /* ε > 0: RMS rows' Jacobian is not singular */
        Conditioning cond;
        assert_int_equal(Conditioning_run(&c, &cond, err, sizeof err), 0);
        for (int l = 1; l <= 3; l++) {
            assert_true(isfinite(cond.network.kappa_jacobian[l]));
            assert_true(isfinite(cond.network.kappa_attention[l]));
            assert_true(isfinite(cond.network.premise_ratio[l]) ||
                        isnan(cond.network.kappa_dominant[l]));
        }
        for (int i = 0; i < cond.warnings.count; i++)
            assert_null(strstr(cond.warnings.text[i], "kappa_jacobian and what needs K are null"));
        Conditioning_release(&cond);
    }
    /* A centring LN's (or unit rows') Jacobian sends a direction of every row to 0: K is
       singular, κ(K) null with the reason. */
    for (int centred = 0; centred < 2; centred++) {
        c.layernorm = centred ? LAYERNORM_LN : LAYERNORM_RMS;
        c.ln_scale = centred ? LN_SCALE_SQRT_D : LN_SCALE_UNIT;
        Conditioning cond;
        assert_int_equal(Conditioning_run(&c, &cond, err, sizeof err), 0);
        for (int l = 1; l <= 3; l++)
            assert_true(isnan(cond.network.kappa_jacobian[l]));
        bool said = false;
        for (int i = 0; i < cond.warnings.count; i++)
            said = said || strstr(cond.warnings.text[i], "K = J_LN (B + E) is singular");
        assert_true(said);
        Conditioning_release(&cond);
    }
}

/* With sinks, centring subtracts each row's mean, which moves with X: the counterpart (gap
   center) has its K with Ȧ's rows centred the same way (test_conditioning_shape checks it
   against the layer step), the network (gap off) its K with the sink's softmax; no refusal. */
static void test_jacobian_with_sinks(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 6;
    c.width = 10;
    c.depth = 3;
    c.sink = 0.0;
    char err[256];
    Conditioning cond;
    assert_int_equal(Conditioning_run(&c, &cond, err, sizeof err), 0);
    for (int l = 1; l <= 3; l++) {
        assert_true(isfinite(cond.network.kappa_jacobian[l]));
        /* The centred rows sum to 0, so κ may be beyond double precision: K is there. */
        assert_true(isfinite(cond.counterpart.jacobian_norm[l]));
    }
    for (int i = 0; i < cond.warnings.count; i++)
        assert_null(strstr(cond.warnings.text[i], "the Jacobian of"));
    Conditioning_release(&cond);
}

/* A recorder of a controlled run's progress: the after_layer calls in order, and a stop
   requested after `stop_after_polls` polls of the stop hook (0: never) or when after_layer
   reaches (stop_network, stop_layer). */
typedef struct {
    int calls, network[2 * 8 + 2], layer[2 * 8 + 2];
    int polls, stop_after_polls;
    int stop_network, stop_layer;
} Recorder;

static bool recorded_after_layer(void *context, int network, int layer, int depth)
{
    Recorder *r = context;
    (void)depth;
    if (r->calls < (int)(sizeof r->network / sizeof r->network[0])) {
        r->network[r->calls] = network;
        r->layer[r->calls] = layer;
    }
    r->calls++;
    return !(network == r->stop_network && layer == r->stop_layer);
}

static bool recorded_stop(void *context)
{
    Recorder *r = context;
    r->polls++;
    return r->stop_after_polls > 0 && r->polls >= r->stop_after_polls;
}

/* The extremes stop wherever the hook asks, in either Lanczos run and between the LU's panels
   (n = 300: three), and then give no value. */
static void test_dense_extremes_stop_at_every_poll(void **state)
{
    (void)state;
    enum { SIZE = 300 };
    double *k = malloc(sizeof(double) * SIZE * SIZE), *lu = malloc(sizeof(double) * SIZE * SIZE);
    double s[SIZE];
    assert_non_null(k);
    assert_non_null(lu);
    for (int i = 0; i < SIZE; i++)
        s[i] = 1.0 + i % 7;
    matrix_with_singular_values(SIZE, s, 8, k);
    DenseExtremes *e = DenseExtremes_new();
    Linalg *la = Linalg_new();
    assert_non_null(e);
    assert_non_null(la);
    Recorder rec = {0};
    Linalg_set_stop(la, (LinalgStop){.requested = recorded_stop, .context = &rec});
    double s_max = NAN, s_min = NAN;
    assert_int_equal(DenseExtremes_run(e, la, SIZE, k, lu, &s_max, &s_min), 0);
    int polls = rec.polls;
    assert_true(polls > 3); /* the Lanczos steps and the panels */
    for (int at = 1; at <= polls; at++) {
        rec = (Recorder){.stop_after_polls = at};
        double stopped_max = NAN, stopped_min = NAN;
        assert_int_equal(DenseExtremes_run(e, la, SIZE, k, lu, &stopped_max, &stopped_min),
                         LINALG_STOPPED);
        assert_true(isnan(stopped_max) && isnan(stopped_min));
        assert_int_equal(rec.polls, at);
    }
    Linalg_free(la);
    DenseExtremes_free(e);
    free(k);
    free(lu);
}

static Config small_cutting_skip(void)
{
    Config c = Config_default();
    c.tokens = 6;
    c.width = 10;
    c.depth = 3;
    c.layer = 2;
    c.init = INIT_CUTTING_SKIP;
    return c;
}

/* Every series of two runs equal bit for bit (NaN equal to NaN). */
static void assert_same_curves(const Conditioning *a, const Conditioning *b)
{
    const ConditioningCurves *x[2] = {&a->network, &a->counterpart},
                             *y[2] = {&b->network, &b->counterpart};
    for (int n = 0; n < 2; n++)
        for (int i = 0; i < CONDITIONING_SERIES_COUNT; i++) {
            const double *u = ConditioningSeries_values(&CONDITIONING_SERIES[i], x[n]),
                         *v = ConditioningSeries_values(&CONDITIONING_SERIES[i], y[n]);
            for (int l = 0; l <= a->config.depth; l++)
                if (!(u[l] == v[l] || (isnan(u[l]) && isnan(v[l]))))
                    fail_msg("%s network %d layer %d: %.17g vs %.17g", CONDITIONING_SERIES[i].name,
                             n, l, u[l], v[l]);
        }
}

/* Under control, after_layer follows every layer of the network and then of its
   counterpart, and the numbers are Conditioning_run's bit for bit. */
static void test_controlled_run_reports_each_layer(void **state)
{
    (void)state;
    Config c = small_cutting_skip();
    Recorder rec = {.stop_network = -1};
    Progress progress = {
        .after_layer = recorded_after_layer, .context = &rec, .stop_requested = recorded_stop};
    ConditioningControl control = {.progress = &progress};
    Conditioning plain, controlled;
    char err[256];
    assert_int_equal(Conditioning_run(&c, &plain, err, sizeof err), 0);
    assert_int_equal(Conditioning_run_controlled(&c, &control, &controlled, err, sizeof err), 0);
    assert_int_equal(rec.calls, 2 * c.depth);
    for (int i = 0; i < rec.calls; i++) {
        assert_int_equal(rec.network[i], i / c.depth);
        assert_int_equal(rec.layer[i], 1 + i % c.depth);
    }
    /* The stop hook was asked (between the Jacobian's columns) and never said stop. */
    assert_true(rec.polls > 0);
    assert_same_curves(&plain, &controlled);
    Conditioning_release(&plain);
    Conditioning_release(&controlled);
}

/* A stop, from after_layer or from the hook inside the Jacobian's columns or a Lanczos
   estimate, returns CONDITIONING_STOPPED and leaves no curves behind; the next run is
   whole again. */
static void test_stopped_run_keeps_nothing(void **state)
{
    (void)state;
    Config c = small_cutting_skip();
    char err[256];
    for (int way = 0; way < 3; way++) {
        Recorder rec = {.stop_network = way == 0 ? 0 : -1,
                        .stop_layer = 2,
                        .stop_after_polls = way == 0 ? 0 : 2};
        Progress progress = {
            .after_layer = recorded_after_layer, .context = &rec, .stop_requested = recorded_stop};
        /* way 2 estimates by Lanczos, whose steps poll the hook. */
        ConditioningControl control = {.progress = &progress, .lanczos_only = way == 2};
        Conditioning cond;
        int status = Conditioning_run_controlled(&c, &control, &cond, err, sizeof err);
        if (status != CONDITIONING_STOPPED)
            fail_msg("way %d: status %d (%s)", way, status, err);
        assert_null(cond.network.kappa_jacobian);
        assert_null(cond.counterpart.kappa_jacobian);
        assert_null(cond.attention_singular_values);
        assert_null(cond.jacobian_singular_values);
        assert_non_null(strstr(err, "stopped"));
        /* Stopped inside the first layer (hook) or after the second (after_layer). */
        assert_int_equal(rec.calls, way == 0 ? 2 : 0);
    }
    Conditioning cond;
    assert_int_equal(Conditioning_run(&c, &cond, err, sizeof err), 0);
    assert_false(isnan(cond.network.kappa_jacobian[c.depth]));
    Conditioning_release(&cond);
}

/* The Lanczos path asked for where the exact one would fit: its s_min lies within its stated
   error (plus rounding) of the exact path's, and it says it is not exact. */
static void test_lanczos_only_agrees_with_the_exact_path(void **state)
{
    (void)state;
    Config c = small_cutting_skip();
    ConditioningControl lanczos = {.lanczos_only = true};
    Conditioning exact, estimated;
    char err[256];
    assert_true(Conditioning_exact(&c, &(ConditioningControl){0}));
    assert_false(Conditioning_exact(&c, &lanczos));
    assert_int_equal(Conditioning_run(&c, &exact, err, sizeof err), 0);
    assert_int_equal(Conditioning_run_controlled(&c, &lanczos, &estimated, err, sizeof err), 0);
    assert_true(exact.jacobian_exact);
    assert_false(estimated.jacobian_exact);
    assert_null(estimated.jacobian_singular_values);
    /* At the exact limit the Lanczos basis (242 vectors of T·d) is far below K and its copy. */
    Config big = c;
    big.tokens = big.width = 64;
    assert_true(8 * Conditioning_memory_estimate_path(&big, false) <
                Conditioning_memory_estimate_path(&big, true));
    int n = c.tokens * c.width;
    for (int l = 1; l <= c.depth; l++) {
        double s = exact.network.jacobian_s_min[l], e = estimated.network.jacobian_s_min[l];
        double bound = estimated.network.jacobian_s_min_error[l] +
                       16.0 * n * DBL_EPSILON * exact.network.jacobian_norm[l];
        if (!(fabs(s - e) <= bound))
            fail_msg("layer %d: s_min exact %.17g, Lanczos %.17g, bound %g", l, s, e, bound);
        assert_true(isnan(estimated.network.kappa_jacobian_skip[l]));
    }
    Conditioning_release(&exact);
    Conditioning_release(&estimated);
}

/* One run serves every shown layer: showing layer l gives bit for bit what a run with
   --layer l gives (exact path, so K's singular values too). */
/* Batch's run (K's singular values at the shown layer only) gives the screen's run's numbers
   bit for bit (‖K‖₂, s_min and κ come from the shown spectrum's ends at the shown layer and
   from the extremes elsewhere in both), the shown layer's spectrum too, and the other
   layers' spectra null. */
static void test_shown_spectrum_only_agrees_with_every_spectrum(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 6;
    c.width = 12;
    c.depth = 4;
    c.layer = 2;
    c.layernorm = LAYERNORM_RMS;
    int n = c.tokens * c.width;
    char err[256];
    Conditioning all, shown;
    assert_int_equal(Conditioning_run(&c, &all, err, sizeof err), 0);
    assert_int_equal(
        Conditioning_run_controlled(&c, &(ConditioningControl){.shown_spectrum_only = true}, &shown,
                                    err, sizeof err),
        0);
    assert_true(shown.jacobian_exact);
    assert_memory_equal(all.jacobian_singular_values, shown.jacobian_singular_values,
                        sizeof(double) * n);
    for (int l = 1; l <= c.depth; l++) {
        const double *sv = shown.layers_jacobian_sv + (size_t)(l - 1) * n;
        assert_true(l == c.layer ? !isnan(sv[0]) : isnan(sv[0]) && isnan(sv[n - 1]));
    }
    for (int i = 0; i < CONDITIONING_SERIES_COUNT; i++)
        for (int net = 0; net < 2; net++) {
            const ConditioningSeries *series = &CONDITIONING_SERIES[i];
            const double *x = ConditioningSeries_values(series,
                                                        net ? &all.counterpart : &all.network),
                         *y = ConditioningSeries_values(series,
                                                        net ? &shown.counterpart : &shown.network);
            assert_memory_equal(x + 1, y + 1, sizeof(double) * c.depth);
        }
    Conditioning_release(&all);
    Conditioning_release(&shown);
}

static void test_show_layer_equals_a_run_for_that_layer(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 4;
    c.width = 8;
    c.depth = 3;
    c.layernorm = LAYERNORM_RMS;
    char err[256];
    Conditioning all;
    assert_int_equal(Conditioning_run(&c, &all, err, sizeof err), 0);
    assert_true(all.jacobian_exact);
    for (int l = 1; l <= c.depth; l++) {
        Config at = c;
        at.layer = l;
        Conditioning one;
        assert_int_equal(Conditioning_run(&at, &one, err, sizeof err), 0);
        Conditioning_show_layer(&all, l);
        assert_int_equal(all.config.layer, l);
        assert_memory_equal(all.attention_singular_values, one.attention_singular_values,
                            sizeof(double) * c.tokens);
        assert_memory_equal(all.value_output_singular_values, one.value_output_singular_values,
                            sizeof(double) * c.width);
        assert_memory_equal(all.jacobian_singular_values, one.jacobian_singular_values,
                            sizeof(double) * c.tokens * c.width);
        /* and they are that layer's: the largest and smallest of K's are the layer's ‖K‖₂ and
           s_min; in the run that shows another layer, its extremes agree with them to dgesdd's
           own n·ε·s_max */
        assert_true(one.jacobian_singular_values[0] == one.network.jacobian_norm[l]);
        assert_true(one.jacobian_singular_values[c.tokens * c.width - 1] ==
                    one.network.jacobian_s_min[l]);
        double bound = 4.0 * c.tokens * c.width * DBL_EPSILON * one.network.jacobian_norm[l];
        assert_true(fabs(all.network.jacobian_norm[l] - one.network.jacobian_norm[l]) <= bound);
        assert_true(fabs(all.network.jacobian_s_min[l] - one.network.jacobian_s_min[l]) <= bound);
        Conditioning_release(&one);
    }
    Conditioning_release(&all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jvp_matches_finite_differences_for_every_mask),
        cmocka_unit_test(test_vjp_is_the_transpose),
        cmocka_unit_test(test_jacobian_matches_finite_differences),
        cmocka_unit_test(test_kappa_of_the_kronecker_product),
        cmocka_unit_test(test_causal_jacobian_is_block_lower_triangular),
        cmocka_unit_test(test_singular_skip_jacobian_is_not_a_number),
        cmocka_unit_test(test_matrix_free_estimates_match_the_svd),
        cmocka_unit_test(test_witness_bounds_hold_and_bad_vectors_are_refused),
        cmocka_unit_test(test_lanczos_across_blocks_of_the_basis),
        cmocka_unit_test(test_dense_extremes_match_the_svd),
        cmocka_unit_test(test_dense_extremes_stop_at_every_poll),
        cmocka_unit_test(test_cutting_skip_weights),
        cmocka_unit_test(test_softmax_demo_closed_form),
        cmocka_unit_test(test_forward_pass_agrees_with_the_model),
        cmocka_unit_test(test_conditioning_applies_the_runs_attention),
        cmocka_unit_test(test_multi_head_jacobian_matches_finite_differences),
        cmocka_unit_test(test_kappa_jacobian_does_not_depend_on_c),
        cmocka_unit_test(test_jacobian_with_qk_norm_rope_cap_and_branch_ln),
        cmocka_unit_test(test_jacobian_with_sinks),
        cmocka_unit_test(test_show_layer_equals_a_run_for_that_layer),
        cmocka_unit_test(test_shown_spectrum_only_agrees_with_every_spectrum),
        cmocka_unit_test(test_controlled_run_reports_each_layer),
        cmocka_unit_test(test_stopped_run_keeps_nothing),
        cmocka_unit_test(test_lanczos_only_agrees_with_the_exact_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
