/* The products' rounding (docs/model.md §8, "the rounding term"): fl(K v) and fl(Kᵀ u) from
 * SaWork_jvp/vjp against K v and Kᵀ u computed loop by loop in __float128 (113-bit significand,
 * so its own error is 2⁻⁶⁰ of double's) from the same block, on blocks whose softmax is
 * saturated (huge logits), whose tokens share a huge component (Ȧ = A ⊙ (Ċ − rowsum(A ⊙ Ċ))
 * cancels the row-constant part it puts into Ċ), and neither.  SaWork_product_error must
 * hold on all; the old model γ‖K‖₂ (γ = (3(T + d) + H)·ε) must fail on the shifted ones,
 * which is why the bound changed. */
#include "testing.h"

#include "attnscope/attention.h"
#include "attnscope/conditioning.h"
#include "attnscope/random.h"

#include <cblas.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

typedef __float128 quad;

enum { T = 16, D = 8, N = T * D, HEADS = 2 };

/* HEADS sub-blocks on one X, each with its M_h, W_VO,h and softmax of s·X M_h Xᵀ (row-major). */
typedef struct {
    int heads;
    double scale;
    double x[N], m[HEADS][D * D], wvo[HEADS][D * D], a[HEADS][T * T];
    SaBlock blocks[HEADS];
} Block;

/* X ~ N(0, x_std²) plus `shift` along the first coordinate in every row, M_h, W_VO,h ~ N(0, 1)
   (M_h's first row zeroed where shifted), s = 1/√d.  x_std = 8 puts the logits' spread in the
   hundreds (a saturated softmax), 0.5 near one.  The shift is the common component of a deep
   layer's tokens: with e₁ᵀM = 0 the logits gain only x_i M e₁·shift, constant along each row,
   which the softmax ignores, while Ċ gains the row-constant shift·Ẋ_i M e₁ that the softmax
   derivative cancels, and X W_VO the row shift·e₁ᵀW_VO that Ȧ (rows summing to 0) cancels:
   K stays put as the rounding grows with shift². */
static void block_make(Block *b, int heads, Mask mask, double x_std, double shift, uint64_t seed)
{
    RandomStream *rs = RandomStream_new();
    assert_non_null(rs);
    b->heads = heads;
    b->scale = 1.0 / sqrt((double)D);
    RandomStream_gaussian(rs, seed, 0, ROLE_INPUT, x_std, b->x, N);
    for (int i = 0; i < T; i++)
        b->x[i] += shift;
    for (int h = 0; h < heads; h++) {
        RandomStream_gaussian(rs, seed, 1 + h, ROLE_QUERY, 1.0, b->m[h], D * D);
        for (int q = 0; shift != 0 && q < D; q++)
            b->m[h][q * D] = 0.0;
        RandomStream_gaussian(rs, seed, 1 + h, ROLE_VALUE, 1.0, b->wvo[h], D * D);
        double logits[T * T];
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                double sum = 0;
                for (int p = 0; p < D; p++)
                    for (int q = 0; q < D; q++)
                        sum += b->x[i + p * T] * b->m[h][p + q * D] * b->x[j + q * T];
                logits[i * T + j] = b->scale * sum;
            }
        Attention_build(ATTENTION_SOFTMAX, mask, 1, T, logits, -INFINITY, b->a[h]);
        b->blocks[h] = (SaBlock){.T = T,
                                 .d = D,
                                 .x = b->x,
                                 .m = b->m[h],
                                 .scale = b->scale,
                                 .wvo = b->wvo[h],
                                 .softmax = b->a[h],
                                 .applied = b->a[h]};
    }
    RandomStream_free(rs);
}

/* g ← A ⊙ (g − rowsum(A ⊙ g)) in quad (the softmax derivative, its own transpose). */
static void softmax_derivative_quad(const double *a, quad *g)
{
    for (int i = 0; i < T; i++) {
        quad row = 0;
        for (int j = 0; j < T; j++)
            row += (quad)a[i * T + j] * g[i * T + j];
        for (int j = 0; j < T; j++)
            g[i * T + j] = (quad)a[i * T + j] * (g[i * T + j] - row);
    }
}

/* X·W (T×d, column-major) in quad. */
static void times_quad(const double *x, const double *w, bool transposed, quad *out)
{
    for (int i = 0; i < T; i++)
        for (int q = 0; q < D; q++) {
            quad sum = 0;
            for (int p = 0; p < D; p++)
                sum += (quad)x[i + p * T] * (transposed ? w[q + p * D] : w[p + q * D]);
            out[i + q * T] = sum;
        }
}

/* out = K v (or Kᵀ v) by the definitions, in quad: K v = Σ_h A_h V W_h + Ȧ_h X W_h with
   Ȧ_h the softmax derivative of Ċ_h = s(V M_h Xᵀ + X M_h Vᵀ); Kᵀ u = Σ_h A_hᵀ U W_hᵀ +
   s(C̄_h X M_hᵀ + C̄_hᵀ X M_h), C̄_h the softmax derivative of U (X W_h)ᵀ. */
static void product_quad(const Block *b, const double *v, bool transposed, double *out)
{
    quad xw[N], xm[N], xmt[N], vw[N], g[T * T], sum[N] = {0};
    for (int h = 0; h < b->heads; h++) {
        const double *a = b->a[h];
        times_quad(b->x, b->wvo[h], false, xw);
        times_quad(b->x, b->m[h], false, xm);
        times_quad(b->x, b->m[h], true, xmt);
        times_quad(v, b->wvo[h], transposed, vw);
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                quad c = 0;
                for (int p = 0; p < D; p++)
                    c += transposed ? (quad)v[i + p * T] * xw[j + p * T]
                                    : b->scale * ((quad)v[i + p * T] * xmt[j + p * T] +
                                                  xm[i + p * T] * v[j + p * T]);
                g[i * T + j] = c;
            }
        softmax_derivative_quad(a, g);
        for (int i = 0; i < T; i++)
            for (int q = 0; q < D; q++) {
                quad y = 0;
                for (int j = 0; j < T; j++) {
                    if (transposed)
                        y += (quad)a[j * T + i] * vw[j + q * T] +
                             b->scale *
                                 (g[i * T + j] * xmt[j + q * T] + g[j * T + i] * xm[j + q * T]);
                    else
                        y += (quad)a[i * T + j] * vw[j + q * T] + g[i * T + j] * xw[j + q * T];
                }
                sum[i + q * T] += y;
            }
    }
    for (int k = 0; k < N; k++)
        out[k] = (double)sum[k];
}

static double norm2(const double *v, int n)
{
    return cblas_dnrm2(n, v, 1);
}

/* ‖K‖_F ≥ ‖K‖₂ from the quad reference's columns K e_k. */
static double jacobian_frobenius_quad(const Block *b)
{
    double e[N] = {0}, column[N], sum = 0;
    for (int k = 0; k < N; k++) {
        e[k] = 1.0;
        product_quad(b, e, false, column);
        e[k] = 0.0;
        sum += norm2(column, N) * norm2(column, N);
    }
    return sqrt(sum);
}

/* The largest ‖fl(K v) − K v‖/‖v‖ (and the same for Kᵀ) over pseudo-random v. */
static double largest_error(SaWork *w, const Block *b, uint64_t seed)
{
    RandomStream *rs = RandomStream_new();
    assert_non_null(rs);
    double worst = 0, v[N], computed[N], exact[N];
    for (int trial = 0; trial < 6; trial++) {
        RandomStream_gaussian(rs, seed, trial, ROLE_INPUT, 1.0, v, N);
        bool transposed = trial % 2;
        if (transposed)
            SaWork_vjp(w, v, computed);
        else
            SaWork_jvp(w, v, computed);
        product_quad(b, v, transposed, exact);
        for (int k = 0; k < N; k++)
            computed[k] -= exact[k];
        worst = fmax(worst, norm2(computed, N) / norm2(v, N));
    }
    RandomStream_free(rs);
    return worst;
}

/* Saturated, shifted and neither, one head and two, causal and full: the error is within
   SaWork_product_error.  On the shifted blocks the old γ‖K‖ (with ‖K‖_F ≥ ‖K‖₂ for ‖K‖) is
   exceeded: the model this bound replaced. */
static void test_product_error_bounds_the_rounding(void **state)
{
    (void)state;
    const Mask masks[] = {MASK_FULL, MASK_CAUSAL};
    const struct {
        double x_std, shift;
    } kinds[] = {{0.5, 0.0}, {8.0, 0.0}, {0.5, 1e4}};
    for (int heads = 1; heads <= HEADS; heads++)
        for (int mi = 0; mi < 2; mi++)
            for (int ki = 0; ki < 3; ki++) {
                Block *b = malloc(sizeof *b);
                SaWork *w = SaWork_new();
                assert_true(b && w);
                uint64_t seed = 40 + 6 * (uint64_t)heads + 3 * (uint64_t)mi + (uint64_t)ki;
                block_make(b, heads, masks[mi], kinds[ki].x_std, kinds[ki].shift, seed);
                assert_int_equal(SaWork_prepare_heads(w, b->blocks, heads), 0);
                double error = largest_error(w, b, seed), eta = SaWork_product_error(w);
                double old = (3.0 * (T + D) + heads) * DBL_EPSILON * jacobian_frobenius_quad(b);
                print_message("heads %d, mask %d, x_std %g, shift %g: error %.3g, eta %.3g, old "
                              "model %.3g\n",
                              heads, mi, kinds[ki].x_std, kinds[ki].shift, error, eta, old);
                if (!(error <= eta))
                    fail_msg("error %.3g above the bound %.3g", error, eta);
                if (kinds[ki].shift > 0 && !(error > old))
                    fail_msg("shifted, yet the error %.3g is within the old model's %.3g", error,
                             old);
                SaWork_free(w);
                free(b);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_product_error_bounds_the_rounding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
