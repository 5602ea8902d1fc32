/* The logits through M_h = W^Q_h W^K_gᵀ (Layer_logits_through_qk_product, docs/model.md §1.2)
 * against a reference written here loop by loop in long double, within the rounding bound both
 * routes share; and the proved upper bound of ‖W^Q_h W^K_gᵀ‖₂ from the formed M_h
 * (Measure_formed_product_norm2_squared_bound) against the exact norm: LAPACK's singular values
 * of a product summed in long double, and a product that cancels, whose norm is known in
 * closed form; and Entropy_logit_rounding's δ (docs/model.md §2) over every logit either route
 * forms from tokens of norm 1e6, against the same long-double reference. */
#include "testing.h"

#include "attnscope/entropy.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/measure.h"
#include "attnscope/random.h"
#include "layer_fixture.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The rule's cases, each worked out by hand from its flops (the two networks' products):
   one head, T = d = 128: 2d³ + 2·4d³ = 10d³ against 2·6d³ = 12d³, and 128³ > 64³. */
static void test_rule(void **state)
{
    (void)state;
    Config c = small(128, 128, 2);
    assert_true(Layer_logits_through_qk_product(&c, 1));
    Config v = c;
    v.tokens = v.width = 64; /* T·d·min(T, d) = 64³: not above the rounding rule */
    assert_false(Layer_logits_through_qk_product(&v, 1));
    v = c, v.tokens = 64, v.width = 128; /* d = 2T: 2d³ + 4Td² + 4T²d = 8Td² + 4T²d */
    assert_false(Layer_logits_through_qk_product(&v, 1));
    v = c, v.tokens = 65, v.width = 128; /* d < 2T */
    assert_true(Layer_logits_through_qk_product(&v, 1));
    v = c, v.heads = 2; /* M_h is d×d for a head of d/2 columns: 2·2Td(d + T) per network */
    assert_false(Layer_logits_through_qk_product(&v, 1));
    v = c, v.qk_norm = QK_NORM_HEAD; /* the keys and queries are normalised apart */
    assert_false(Layer_logits_through_qk_product(&v, 1));
    v = c, v.rope = ROPE_HALF, v.nope_every = 2; /* rotated apart, except on the NoPE layers */
    assert_false(Layer_logits_through_qk_product(&v, 1));
    assert_true(Layer_logits_through_qk_product(&v, 2));
    v = c, v.attention = ATTENTION_MARKOV; /* no queries or keys at all */
    assert_false(Layer_logits_through_qk_product(&v, 1));
}

/* Head 0's logits (row-major T×T) of layer 1 of c on X0, loop by loop in long double, and
   scale·|X||W^Q||W^K|ᵀ|X|ᵀ, the scale of their rounding. */
static void reference_logits_head(const Config *c, const Layer *l, int dh, double *want,
                                  double *size)
{
    int T = c->tokens, d = c->width;
    long double *q = calloc((size_t)T * dh * 4, sizeof(long double));
    assert_non_null(q);
    long double *k = q + (size_t)T * dh, *qa = k + (size_t)T * dh, *ka = qa + (size_t)T * dh;
    for (int i = 0; i < T; i++)
        for (int e = 0; e < dh; e++)
            for (int m = 0; m < d; m++) {
                long double x = l->b.x[i + (size_t)m * T];
                long double wq = l->w.query[m + (size_t)e * d], wk = l->w.key[m + (size_t)e * d];
                q[i + (size_t)e * T] += x * wq;
                k[i + (size_t)e * T] += x * wk;
                qa[i + (size_t)e * T] += fabsl(x * wq);
                ka[i + (size_t)e * T] += fabsl(x * wk);
            }
    long double scale = Init_logit_scale(c);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            long double s = 0, a = 0;
            for (int e = 0; e < dh; e++) {
                s += q[i + (size_t)e * T] * k[j + (size_t)e * T];
                a += qa[i + (size_t)e * T] * ka[j + (size_t)e * T];
            }
            want[(size_t)i * T + j] = (double)(scale * s);
            size[(size_t)i * T + j] = (double)(fabsl(scale) * a);
        }
    free(q);
}

static void reference_logits(const Config *c, const Layer *l, double *want, double *size)
{
    reference_logits_head(c, l, Config_head_width(c), want, size);
}

/* Above the rounding rule, T < d and (embedding rows) T > d: the step's logits (X M)Xᵀ·scale within
   (γ_{d_h} + 2γ_{d+1})·scale·|X||W^Q||W^K|ᵀ|X|ᵀ of the exact ones (docs/model.md §1.2: M's
   products of d_h terms, X M's and the last product's of d and the scale), entry by entry;
   and they are read from M (a zero M gives zero logits). */
static void test_logits_match_loops(void **state)
{
    (void)state;
    const int sizes[][2] = {{64, 72}, {80, 60}};
    for (int s = 0; s < 2; s++) {
        Config c = small(sizes[s][0], sizes[s][1], 1);
        c.sigma_qk = 1.3;
        if (c.tokens > c.width) /* (orthonormal rows need T <= d) */
            c.input = INPUT_EMBEDDING, c.vocab = 50;
        assert_true(Layer_logits_through_qk_product(&c, 1));
        int T = c.tokens, d = c.width, dh = Config_head_width(&c);
        Layer l;
        layer_new(&l, &c);
        layer_draw_all(&l, &c);
        double *m = malloc(sizeof(double) * Layer_qk_product_doubles(&c));
        double *want = malloc(sizeof(double) * T * T), *size = malloc(sizeof(double) * T * T);
        assert_true(m && want && size);
        reference_logits(&c, &l, want, size);
        assert_int_equal(Layer_qk_product(la, &c, l.w.query, l.w.key, m), 0);
        l.w.qk_product = m;
        const double *logits;
        LayerOutcome outcome;
        assert_int_equal(Layer_attention(&c, 1, &l.w, &l.b, 0, &logits, &outcome), 0);
        double gamma = Linalg_rounding_gamma(dh) + 2 * Linalg_rounding_gamma(d + 1);
        double largest = 0;
        for (size_t i = 0; i < (size_t)T * T; i++) {
            /* (1 + 1e-6): the bound's second-order terms, products of two γ's */
            if (!(fabs(logits[i] - want[i]) <= gamma * size[i] * (1 + 1e-6)))
                fail_msg("T = %d, d = %d: logit %zu = %.17g, reference %.17g, bound %.3g", T, d, i,
                         logits[i], want[i], gamma * size[i]);
            largest = fmax(largest, fabs(want[i]));
        }
        assert_true(largest > 0.5); /* logits of order one: a comparison of something */
        memset(m, 0, sizeof(double) * Layer_qk_product_doubles(&c));
        assert_int_equal(Layer_attention(&c, 1, &l.w, &l.b, 0, &logits, &outcome), 0);
        for (size_t i = 0; i < (size_t)T * T; i++)
            assert_true(logits[i] == 0);
        l.w.qk_product = NULL;
        free(m);
        free(want);
        free(size);
        layer_free(&l, &c);
    }
}

/* Sum of the squares of n doubles in long double. */
static long double squares(const double *x, size_t n, size_t stride)
{
    long double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (long double)x[i * stride] * x[i * stride];
    return sum;
}

/* Through M_h (T = d = 72) and projected (T = 24 < d = 32, and two heads of 16), from tokens
   scaled to norms near 1e6, whose logits' rounding is then 1e-2 and more: every logit the step
   forms lies within δ = Entropy_logit_rounding(‖W^Q_h‖_F‖W^K_h‖_F, max_i ‖x_i‖²) of the
   long-double one, and δ is not vacuous (the largest error is above 1e-4·δ). */
static void test_logit_rounding_bounds_both_routes(void **state)
{
    (void)state;
    const int shapes[][3] = {{72, 72, 1}, {24, 32, 1}, {24, 32, 2}};
    for (int s = 0; s < 3; s++) {
        Config c = small(shapes[s][0], shapes[s][1], 1);
        c.heads = shapes[s][2];
        c.sigma_qk = 1.3;
        int T = c.tokens, d = c.width, dh = Config_head_width(&c);
        Layer l;
        layer_new(&l, &c);
        layer_draw_all(&l, &c);
        for (size_t i = 0; i < (size_t)T * d; i++)
            l.b.x[i] *= 1e6;
        double *m = NULL;
        if (Layer_logits_through_qk_product(&c, 1)) {
            m = malloc(sizeof(double) * Layer_qk_product_doubles(&c));
            assert_non_null(m);
            assert_int_equal(Layer_qk_product(la, &c, l.w.query, l.w.key, m), 0);
        }
        l.w.qk_product = m;
        long double rows = 0;
        for (int i = 0; i < T; i++)
            rows = fmaxl(rows, squares(l.b.x + i, d, T));
        double *want = malloc(sizeof(double) * T * T), *size = malloc(sizeof(double) * T * T);
        assert_true(want && size);
        for (int h = 0; h < c.heads; h++) {
            Layer view = l; /* head h's columns of W^Q and W^K */
            size_t block = (size_t)d * dh;
            double norm = (double)sqrtl(squares(l.w.query + block * h, block, 1) *
                                        squares(l.w.key + block * h, block, 1));
            double delta = Entropy_logit_rounding(&c, 1, norm, (double)rows);
            view.w.query = l.w.query + block * h, view.w.key = l.w.key + block * h;
            reference_logits_head(&c, &view, dh, want, size);
            const double *logits;
            LayerOutcome outcome;
            assert_int_equal(Layer_attention(&c, 1, &l.w, &l.b, h, &logits, &outcome), 0);
            double worst = 0;
            for (size_t i = 0; i < (size_t)T * T; i++)
                worst = fmax(worst, fabs(logits[i] - want[i]));
            if (!(worst <= delta) || !(worst > 1e-4 * delta))
                fail_msg("T = %d, d = %d, head %d: largest error %.3g against delta %.3g", T, d, h,
                         worst, delta);
        }
        free(want);
        free(size);
        free(m);
        l.w.qk_product = NULL;
        layer_free(&l, &c);
    }
}

/* a (d×k) and b (d×k) ← N(0, 1) entries of stream `draw`. */
static void gaussian_pair(RandomStream *rs, int draw, int d, int k, double *a, double *b)
{
    RandomStream_gaussian(rs, 7, draw, ROLE_QUERY, 1.0, a, (size_t)d * k);
    RandomStream_gaussian(rs, 7, draw, ROLE_KEY, 1.0, b, (size_t)d * k);
}

/* fl(a bᵀ) (d×d) and the proved bound's root from it. */
static double formed_bound(int d, int k, const double *a, const double *b, double *formed,
                           double *scratch)
{
    assert_int_equal(Linalg_gemm(la, false, true, d, d, k, 1.0, a, d, b, d, 0.0, formed, d), 0);
    double bound;
    assert_int_equal(Measure_formed_product_norm2_squared_bound(
                         la, d, k, a, b, formed, scratch, scratch + (size_t)d * d,
                         scratch + 2 * (size_t)d * d, &bound),
                     0);
    assert_false(isnan(bound));
    return sqrt(bound);
}

/* Gaussian W^Q_h, W^K_g: the bound at or above s_1 of a bᵀ summed in long double (LAPACK's
   dgesvd of it, whose own error is a few d·u of s_1: the comparison allows 64·d·u below) and
   within 1e-10 of it (the γ_k‖A‖_F‖B‖_F term is about k·u·‖A‖_F‖B‖_F/s_1 ≈ 1e-12 here). */
static void test_bound_of_gaussian_product(void **state)
{
    (void)state;
    const int d = 96, widths[] = {96, 24};
    RandomStream *rs = RandomStream_new();
    double *a = malloc(sizeof(double) * d * d), *b = malloc(sizeof(double) * d * d);
    double *formed = malloc(sizeof(double) * d * d), *exact = malloc(sizeof(double) * d * d);
    double *scratch = malloc(sizeof(double) * (2 * d * d + Measure_lanczos_size(d)));
    double *s = malloc(sizeof(double) * d), *superb = malloc(sizeof(double) * d);
    assert_true(rs && a && b && formed && exact && scratch && s && superb);
    for (int w = 0; w < 2; w++) {
        int k = widths[w];
        gaussian_pair(rs, w + 1, d, k, a, b);
        for (int i = 0; i < d; i++)
            for (int j = 0; j < d; j++) {
                long double sum = 0;
                for (int e = 0; e < k; e++)
                    sum += (long double)a[i + (size_t)e * d] * b[j + (size_t)e * d];
                exact[i + (size_t)j * d] = (double)sum;
            }
        assert_int_equal(
            LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', d, d, exact, d, s, NULL, 1, NULL, 1, superb),
            0);
        double bound = formed_bound(d, k, a, b, formed, scratch);
        double u = DBL_EPSILON / 2;
        if (!(bound >= s[0] * (1 - 64 * d * u) && bound <= s[0] * (1 + 1e-10)))
            fail_msg("k = %d: bound %.17g, s_1 %.17g", k, bound, s[0]);
    }
    free(a), free(b), free(formed), free(exact), free(scratch), free(s), free(superb);
    RandomStream_free(rs);
}

/* A = [a, a], B = [b, fl(−b + εr)]: ABᵀ = a(b + B₂)ᵀ, rank one, whose norm ‖a‖·‖b + B₂‖ is
   known to long double's precision, while fl(ABᵀ)
   carries rounding of u·|a||b|ᵀ, 1/ε times larger relative to it.  In every draw the bound is
   at or above the exact norm and within 2γ₂‖A‖_F‖B‖_F of it; in some draw the proof of
   ‖fl(ABᵀ)‖₂ alone falls below the exact norm, so the product's rounding term is what keeps
   it a bound. */
static void test_bound_of_cancelling_product(void **state)
{
    (void)state;
    const int d = 96, k = 2, draws = 16;
    const double epsilon = 1e-6;
    RandomStream *rs = RandomStream_new();
    double *a = malloc(sizeof(double) * d * k), *b = malloc(sizeof(double) * d * k);
    double *r = malloc(sizeof(double) * d), *formed = malloc(sizeof(double) * d * d);
    double *scratch = malloc(sizeof(double) * (2 * d * d + Measure_lanczos_size(d)));
    assert_true(rs && a && b && r && formed && scratch);
    int below = 0;
    for (int draw = 0; draw < draws; draw++) {
        gaussian_pair(rs, 100 + draw, d, 1, a, b);
        RandomStream_gaussian(rs, 7, 100 + draw, ROLE_VALUE, 1.0, r, (size_t)d);
        long double aa = 0, ss = 0, bb = 0;
        for (int i = 0; i < d; i++) {
            a[i + d] = a[i];
            b[i + d] = -b[i] + epsilon * r[i];
            long double sum = (long double)b[i] + b[i + d];
            aa += (long double)a[i] * a[i];
            ss += (long double)sum * sum;
            bb += (long double)b[i] * b[i] + (long double)b[i + d] * b[i + d];
        }
        double exact = (double)(sqrtl(aa) * sqrtl(ss));
        double bound = formed_bound(d, k, a, b, formed, scratch);
        double slack = 2 * Linalg_rounding_gamma(k) * (double)sqrtl(2 * aa * bb);
        if (!(bound >= exact && bound <= exact + slack + 1e-12 * exact))
            fail_msg("draw %d: bound %.17g, exact %.17g, slack %.3g", draw, bound, exact, slack);
        double alone;
        assert_int_equal(Measure_norm2_squared_bound(la, d, d, formed, NULL, scratch,
                                                     scratch + (size_t)d * d,
                                                     scratch + 2 * (size_t)d * d, &alone),
                         0);
        below += sqrt(alone) < exact;
    }
    assert_true(below > 0);
    free(a), free(b), free(r), free(formed), free(scratch);
    RandomStream_free(rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_logits_match_loops),
        cmocka_unit_test(test_bound_of_gaussian_product),
        cmocka_unit_test(test_bound_of_cancelling_product),
        cmocka_unit_test(test_logit_rounding_bounds_both_routes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
