/* The products' rounding (docs/model.md §8, "the rounding term" and "the rounding of one
 * product"): fl(K v) and fl(Kᵀ u) from SaWork_jvp/vjp and from SaWork_product_bounded's
 * centred route (and each centring's alone, SaWork_product_centred) against K v and Kᵀ u
 * computed loop by loop in __float128 (113-bit significand, so its own error is 2⁻⁶⁰ of
 * double's) from the same block, on blocks whose softmax is saturated (huge logits), whose
 * tokens share a huge component (Ȧ = A ⊙ (Ċ − rowsum(A ⊙ Ċ)) cancels the row-constant part it
 * puts into Ċ), and neither, and on every layer of the default network at T = d = 64.
 * SaWork_product_bounded's bound of each product must hold and stay below
 * SaWork_product_error's η, and each centring's must hold; one part of K's search must not
 * decide another's; on short sums it must come within 10 of the error (so a bound 10 times
 * smaller fails); the plain products must exceed
 * the old model γ‖K‖₂ (γ = (3(T + d) + H)·ε) on the shifted blocks, which is why the bound
 * changed, and the centred route's bound must fall below the plain products' error there and
 * at the default network's deep layers, which is why the bounded product is centred.  The
 * compensated route (Dot2 sums, SaWork_product_compensated) must hold on every block, centring
 * and vector too, recover the terms a recursive sum loses (so dropping Dot2's carried errors
 * fails), and bound a layer-7-like block (T = 16, d = 64) where the centred route's bound
 * exceeds the product's norm to a tenth of it; on constructed blocks, each term of the prepared
 * products' bound (u|P̂|, γ_d²|L||F|) is the one that holds it (dropping either fails). */
#include "testing.h"

#include "attnscope/attention.h"
#include "attnscope/conditioning.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/random.h"
#include "layer_fixture.h"
#include "model_fixture.h"

#include <cblas.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

typedef __float128 quad;

enum { T = 16, D = 8, N = T * D, HEADS = 2 };

/* Up to HEADS sub-blocks on one T×d input X (sizes at run time), each with its M_h, W_VO,h,
   softmax of s·X M_h Xᵀ and the attention applied (row-major). */
typedef struct {
    int T, d, heads;
    double scale;
    double *x, *m[HEADS], *wvo[HEADS], *a[HEADS], *applied[HEADS];
    SaBlock blocks[HEADS];
} Block;

static Block *block_new(int t, int d, int heads)
{
    Block *b = calloc(1, sizeof *b);
    assert_non_null(b);
    *b = (Block){.T = t, .d = d, .heads = heads};
    assert_non_null(b->x = malloc(sizeof(double) * (size_t)t * d));
    for (int h = 0; h < heads; h++) {
        assert_non_null(b->m[h] = malloc(sizeof(double) * (size_t)d * d));
        assert_non_null(b->wvo[h] = malloc(sizeof(double) * (size_t)d * d));
        assert_non_null(b->a[h] = malloc(sizeof(double) * (size_t)t * t));
        b->applied[h] = b->a[h];
    }
    return b;
}

static void block_free(Block *b)
{
    for (int h = 0; h < b->heads; h++) {
        if (b->applied[h] != b->a[h])
            free(b->applied[h]);
        free(b->m[h]);
        free(b->wvo[h]);
        free(b->a[h]);
    }
    free(b->x);
    free(b);
}

static void block_link(Block *b)
{
    for (int h = 0; h < b->heads; h++)
        b->blocks[h] = (SaBlock){.T = b->T,
                                 .d = b->d,
                                 .x = b->x,
                                 .m = b->m[h],
                                 .scale = b->scale,
                                 .wvo = b->wvo[h],
                                 .softmax = b->a[h],
                                 .applied = b->applied[h]};
}

/* Each head's softmax of s·X M_h Xᵀ (b->x, b->m set, s = 1/√d), then the SaBlocks. */
static void block_attend(Block *b, Mask mask)
{
    int t = b->T, d = b->d;
    double *logits = malloc(sizeof(double) * (size_t)t * t);
    assert_non_null(logits);
    b->scale = 1.0 / sqrt((double)d);
    for (int h = 0; h < b->heads; h++) {
        for (int i = 0; i < t; i++)
            for (int j = 0; j < t; j++) {
                double sum = 0;
                for (int p = 0; p < d; p++)
                    for (int q = 0; q < d; q++)
                        sum += b->x[i + p * t] * b->m[h][p + q * d] * b->x[j + q * t];
                logits[i * t + j] = b->scale * sum;
            }
        Attention_build(ATTENTION_SOFTMAX, mask, 1, t, logits, -INFINITY, b->a[h]);
    }
    free(logits);
    block_link(b);
}

/* A workspace with b's heads (attended) prepared for the products under test. */
static SaWork *prepared_work(const Block *b)
{
    SaWork *w = SaWork_new();
    assert_non_null(w);
    assert_int_equal(SaWork_prepare_heads(w, b->blocks, b->heads), 0);
    return w;
}

/* X ~ N(0, x_std²) plus `shift` along the first coordinate in every row, M_h, W_VO,h ~ N(0, 1)
   (M_h's first row zeroed where shifted), s = 1/√d.  x_std = 8 puts the logits' spread in the
   hundreds (a saturated softmax), 0.5 near one.  The shift is the common component of a deep
   layer's tokens: with e₁ᵀM = 0 the logits gain only x_i M e₁·shift, constant along each row,
   which the softmax ignores, while Ċ gains the row-constant shift·Ẋ_i M e₁ that the softmax
   derivative cancels, and X W_VO the row shift·e₁ᵀW_VO that Ȧ (rows summing to 0) cancels:
   K stays put as the rounding grows with shift². */
static Block *block_make(int t, int d, int heads, Mask mask, double x_std, double shift,
                         uint64_t seed)
{
    RandomStream *rs = RandomStream_new();
    assert_non_null(rs);
    Block *b = block_new(t, d, heads);
    RandomStream_gaussian(rs, seed, 0, ROLE_INPUT, x_std, b->x, (size_t)t * d);
    for (int i = 0; i < t; i++)
        b->x[i] += shift;
    for (int h = 0; h < heads; h++) {
        RandomStream_gaussian(rs, seed, 1 + h, ROLE_QUERY, 1.0, b->m[h], (size_t)d * d);
        for (int q = 0; shift != 0 && q < d; q++)
            b->m[h][q * d] = 0.0;
        RandomStream_gaussian(rs, seed, 1 + h, ROLE_VALUE, 1.0, b->wvo[h], (size_t)d * d);
    }
    RandomStream_free(rs);
    block_attend(b, mask);
    return b;
}

/* g ← A ⊙ (g − rowsum(A ⊙ g)) in quad (the softmax derivative, its own transpose). */
static void softmax_derivative_quad(int t, const double *a, quad *g)
{
    for (int i = 0; i < t; i++) {
        quad row = 0;
        for (int j = 0; j < t; j++)
            row += (quad)a[i * t + j] * g[i * t + j];
        for (int j = 0; j < t; j++)
            g[i * t + j] = (quad)a[i * t + j] * (g[i * t + j] - row);
    }
}

/* X·W (T×d, column-major) in quad. */
static void times_quad(int t, int d, const double *x, const double *w, bool transposed, quad *out)
{
    for (int i = 0; i < t; i++)
        for (int q = 0; q < d; q++) {
            quad sum = 0;
            for (int p = 0; p < d; p++)
                sum += (quad)x[i + p * t] * (transposed ? w[q + p * d] : w[p + q * d]);
            out[i + q * t] = sum;
        }
}

/* out = K v (or Kᵀ v) by the definitions, in quad: K v = Σ_h P_h V W_h + Ȧ_h X W_h with P_h
   the applied attention and Ȧ_h the softmax derivative of Ċ_h = s(V M_h Xᵀ + X M_h Vᵀ);
   Kᵀ u = Σ_h P_hᵀ U W_hᵀ + s(C̄_h X M_hᵀ + C̄_hᵀ X M_h), C̄_h the softmax derivative of
   U (X W_h)ᵀ. */
static void product_quad(const Block *b, const double *v, bool transposed, double *out)
{
    int t = b->T, d = b->d;
    size_t td = (size_t)t * d;
    quad *xw = malloc(sizeof(quad) * (5 * td + (size_t)t * t));
    assert_non_null(xw);
    quad *xm = xw + td, *xmt = xm + td, *vw = xmt + td, *sum = vw + td, *g = sum + td;
    for (size_t k = 0; k < td; k++)
        sum[k] = 0;
    for (int h = 0; h < b->heads; h++) {
        const double *a = b->a[h], *p = b->applied[h];
        times_quad(t, d, b->x, b->wvo[h], false, xw);
        times_quad(t, d, b->x, b->m[h], false, xm);
        times_quad(t, d, b->x, b->m[h], true, xmt);
        times_quad(t, d, v, b->wvo[h], transposed, vw);
        for (int i = 0; i < t; i++)
            for (int j = 0; j < t; j++) {
                quad c = 0;
                for (int q = 0; q < d; q++)
                    c += transposed ? (quad)v[i + q * t] * xw[j + q * t]
                                    : b->scale * ((quad)v[i + q * t] * xmt[j + q * t] +
                                                  xm[i + q * t] * v[j + q * t]);
                g[i * t + j] = c;
            }
        softmax_derivative_quad(t, a, g);
        for (int i = 0; i < t; i++)
            for (int q = 0; q < d; q++) {
                quad y = 0;
                for (int j = 0; j < t; j++) {
                    if (transposed)
                        y += (quad)p[j * t + i] * vw[j + q * t] +
                             b->scale *
                                 (g[i * t + j] * xmt[j + q * t] + g[j * t + i] * xm[j + q * t]);
                    else
                        y += (quad)p[i * t + j] * vw[j + q * t] + g[i * t + j] * xw[j + q * t];
                }
                sum[i + q * t] += y;
            }
    }
    for (size_t k = 0; k < td; k++)
        out[k] = (double)sum[k];
    free(xw);
}

static double norm2(const double *v, size_t n)
{
    return cblas_dnrm2((int)n, v, 1);
}

/* ‖computed − exact‖, computed overwritten by the difference. */
static double error_norm(double *computed, const double *exact, size_t n)
{
    for (size_t k = 0; k < n; k++)
        computed[k] -= exact[k];
    return norm2(computed, n);
}

/* ‖K‖_F ≥ ‖K‖₂ from the quad reference's columns K e_k. */
static double jacobian_frobenius_quad(const Block *b)
{
    size_t n = (size_t)b->T * b->d;
    double *e = calloc(2 * n, sizeof(double)), *column = e + n, sum = 0;
    assert_non_null(e);
    for (size_t k = 0; k < n; k++) {
        e[k] = 1.0;
        product_quad(b, e, false, column);
        e[k] = 0.0;
        sum += norm2(column, n) * norm2(column, n);
    }
    free(e);
    return sqrt(sum);
}

/* Over `trials` pseudo-random v, through K and Kᵀ alternately: the largest
   ‖fl(K v) − K v‖/‖v‖ of SaWork_product_bounded's (centred) product and the largest ratio of
   that error to its bound e (at most 1, else it fails: e must hold), the largest e/‖v‖, and
   the largest error of the plain SaWork_jvp/vjp (the products Lanczos uses) per unit v. */
typedef struct {
    double error, tightness, bound, plain;
    double compensated_tightness; /* the largest error/bound of the compensated route's */
} Rounding;

static Rounding product_rounding(SaWork *w, const Block *b, uint64_t seed, int trials)
{
    size_t n = (size_t)b->T * b->d;
    RandomStream *rs = RandomStream_new();
    double *v = malloc(sizeof(double) * 3 * n), *computed = v + n, *exact = computed + n;
    assert_true(rs && v);
    Rounding r = {0, 0, 0, 0, 0};
    for (int trial = 0; trial < trials; trial++) {
        RandomStream_gaussian(rs, seed, trial, ROLE_INPUT, 1.0, v, n);
        bool transposed = trial % 2;
        product_quad(b, v, transposed, exact);
        if (transposed)
            SaWork_vjp(w, v, computed);
        else
            SaWork_jvp(w, v, computed);
        r.plain = fmax(r.plain, error_norm(computed, exact, n) / norm2(v, n));
        double bound = SaWork_product_bounded(w, v, transposed, computed);
        double error = error_norm(computed, exact, n);
        if (!(error <= bound))
            fail_msg("trial %d: error %.3g above the product's bound %.3g", trial, error, bound);
        r.error = fmax(r.error, error / norm2(v, n));
        r.tightness = fmax(r.tightness, error / bound);
        r.bound = fmax(r.bound, bound / norm2(v, n));
        /* every centring's bound is a proof, whichever the search would keep */
        for (int centre = 0; centre < SA_CENTRINGS; centre++) {
            double centred = SaWork_product_centred(w, v, transposed, centre, computed);
            error = error_norm(computed, exact, n);
            if (!(error <= centred))
                fail_msg("trial %d, centring %d: error %.3g above its bound %.3g", trial, centre,
                         error, centred);
            double compensated = SaWork_product_compensated(w, v, transposed, centre, computed);
            error = error_norm(computed, exact, n);
            if (!(error <= compensated))
                fail_msg("trial %d, centring %d, compensated: error %.3g above its bound %.3g",
                         trial, centre, error, compensated);
            r.compensated_tightness = fmax(r.compensated_tightness, error / compensated);
        }
    }
    free(v);
    RandomStream_free(rs);
    return r;
}

/* Saturated, shifted and neither, one head and two, causal and full: the error is within
   SaWork_product_bounded's bound, itself at most SaWork_product_error's η.  On the shifted
   blocks the plain products exceed the old γ‖K‖ (with ‖K‖_F ≥ ‖K‖₂ for ‖K‖): the model η
   replaced; and the centred route's bound is below the plain products' own error there (no
   bound of the plain products could be as small: the shift is what taking μ out removes). */
static void test_product_error_bounds_the_rounding(void **state)
{
    (void)state;
    const Mask masks[] = {MASK_FULL, MASK_CAUSAL};
    const struct {
        double x_std, shift;
    } kinds[] = {{0.5, 0.0}, {8.0, 0.0}, {0.5, 1e5}};
    for (int heads = 1; heads <= HEADS; heads++)
        for (int mi = 0; mi < 2; mi++)
            for (int ki = 0; ki < 3; ki++) {
                uint64_t seed = 40 + 6 * (uint64_t)heads + 3 * (uint64_t)mi + (uint64_t)ki;
                Block *b =
                    block_make(T, D, heads, masks[mi], kinds[ki].x_std, kinds[ki].shift, seed);
                SaWork *w = prepared_work(b);
                Rounding r = product_rounding(w, b, seed, 6);
                double eta = SaWork_product_error(w);
                double old = (3.0 * (T + D) + heads) * DBL_EPSILON * jacobian_frobenius_quad(b);
                print_message("heads %d, mask %d, x_std %g, shift %g: error %.3g, bound %.3g "
                              "(error/bound %.3g at most), eta %.3g, old model %.3g, plain "
                              "products' error %.3g\n",
                              heads, mi, kinds[ki].x_std, kinds[ki].shift, r.error, r.bound,
                              r.tightness, eta, old, r.plain);
                if (!(r.error <= eta && r.bound <= eta))
                    fail_msg("error %.3g or the product's bound %.3g above eta %.3g", r.error,
                             r.bound, eta);
                if (kinds[ki].shift > 0 && !(r.plain > old))
                    fail_msg("shifted, yet the plain error %.3g is within the old model's %.3g",
                             r.plain, old);
                if (kinds[ki].shift > 0 && !(r.bound < r.plain))
                    fail_msg("shifted, yet the centred bound %.3g is not below the plain "
                             "products' error %.3g",
                             r.bound, r.plain);
                SaWork_free(w);
                block_free(b);
            }
}

/* Rows that sum to 1 − ρ_i with ρ far from rounding (a sink, §1.2, takes 0.3 of every row):
   the centred route's remainders then carry ρ itself, not a rounding of it, and D no longer
   removes the shift (K moves with it), so the route gains nothing here and the search keeps
   μ = 0; each centring's bound (product_rounding forces each: the mean's and the median's
   carry ρ's remainders) must still hold against the quad reference (which reads the same
   stored rows), and the kept one stay below η. */
static void test_product_bound_holds_with_a_sink(void **state)
{
    (void)state;
    for (int heads = 1; heads <= HEADS; heads++) {
        uint64_t seed = 70 + (uint64_t)heads;
        Block *b = block_make(T, D, heads, MASK_CAUSAL, 0.5, 1e4, seed);
        for (int h = 0; h < heads; h++)
            for (size_t k = 0; k < (size_t)T * T; k++)
                b->a[h][k] *= 0.7;
        SaWork *w = prepared_work(b);
        Rounding r = product_rounding(w, b, seed, 6);
        double eta = SaWork_product_error(w);
        print_message("heads %d, rows summing to 0.7: error %.3g, bound %.3g (error/bound %.3g at "
                      "most), eta %.3g, plain products' error %.3g\n",
                      heads, r.error, r.bound, r.tightness, eta, r.plain);
        if (!(r.bound <= eta))
            fail_msg("the product's bound %.3g above eta %.3g", r.bound, eta);
        SaWork_free(w);
        block_free(b);
    }
}

/* The search of one part of K does not decide another's: with two heads and tokens shifted
   by 10⁵, a JVP of B alone (SaWork_dominant_only, as the run's κ(B) does first) is bounded
   to 10⁻⁶ of its norm by μ = 0, where centring changes nothing, while K's JVP needs the
   centring.  K's JVP after B's must get the bound a fresh block gives it, bit for bit (when
   one choice served every part, it kept μ = 0: 2.8·10⁻³ against 1.3·10⁻¹²), and stay far
   below the plain products' η. */
static void test_search_is_per_part_of_k(void **state)
{
    (void)state;
    Block *b = block_make(T, D, HEADS, MASK_FULL, 0.5, 1e5, 81);
    SaWork *fresh = SaWork_new(), *after = SaWork_new();
    double *v = malloc(sizeof(double) * 2 * N), *out = v + N;
    RandomStream *rs = RandomStream_new();
    assert_true(fresh && after && v && rs);
    RandomStream_gaussian(rs, 81, 0, ROLE_INPUT, 1.0, v, N);
    assert_int_equal(SaWork_prepare_heads(fresh, b->blocks, HEADS), 0);
    assert_int_equal(SaWork_prepare_heads(after, b->blocks, HEADS), 0);
    double alone = SaWork_product_bounded(fresh, v, false, out);
    SaWork_dominant_only(after, true);
    double dominant = SaWork_product_bounded(after, v, false, out);
    SaWork_dominant_only(after, false);
    double whole = SaWork_product_bounded(after, v, false, out);
    double eta = SaWork_product_error(after) * norm2(v, N);
    print_message("K's JVP alone: bound %.3g; B's first: %.3g; then K's: %.3g (eta %.3g)\n", alone,
                  dominant, whole, eta);
    if (!(whole == alone && whole < 1e-6 * eta))
        fail_msg("K's JVP after B's bounded by %.3g, alone by %.3g (eta %.3g)", whole, alone, eta);
    RandomStream_free(rs);
    free(v);
    SaWork_free(fresh);
    SaWork_free(after);
    block_free(b);
}

/* Where the bound is tight: at T = 2 and d = 1 or 2 every sum is one or two terms long and
   the worst case nearly happens, so the largest error over these blocks and vectors comes
   within 10 of the bound, the compensated route's too (docs/model.md §8 gives the figures).  A
   bound 10 times smaller would be below a measured error: this fails on it, as the other tests fail
   on a bound that does not hold. */
static void test_product_bound_is_tight_on_short_sums(void **state)
{
    (void)state;
    const int sizes[][2] = {{2, 1}, {2, 2}};
    for (int si = 0; si < 2; si++) {
        double worst = 0, compensated = 0;
        for (uint64_t seed = 1; seed < 40; seed++)
            for (int ki = 0; ki < 2; ki++) {
                Block *b =
                    block_make(sizes[si][0], sizes[si][1], 1, MASK_FULL, 0.5, ki ? 1e4 : 0.0, seed);
                SaWork *w = prepared_work(b);
                Rounding r = product_rounding(w, b, seed, 20);
                worst = fmax(worst, r.tightness);
                compensated = fmax(compensated, r.compensated_tightness);
                SaWork_free(w);
                block_free(b);
            }
        print_message("T = %d, d = %d: error/bound %.3g at most, compensated %.3g\n", sizes[si][0],
                      sizes[si][1], worst, compensated);
        if (!(worst > 0.1))
            fail_msg("T = %d, d = %d: the error reaches %.3g of the bound at most, not 1/10",
                     sizes[si][0], sizes[si][1], worst);
        if (!(compensated > 0.1))
            fail_msg("T = %d, d = %d: the error reaches %.3g of the compensated route's bound at "
                     "most, not 1/10",
                     sizes[si][0], sizes[si][1], compensated);
    }
}

/* The sub-block of layer `layer` of c's network (gap as given), as the conditioning run
   prepares it: the layer's input and attention as the layer step computed them, M = W^Q W^Kᵀ,
   W_VO = W^V (one head, no output projection: the default block). */
typedef struct {
    Block *b;
    int layer;
} Capture;

static void captured_built(void *context, int head, const double *logits, const double *a)
{
    (void)logits;
    Block *b = context;
    memcpy(b->a[head], a, sizeof(double) * (size_t)b->T * b->T);
}

static int captured_applied(void *context, int head, const double *a, GapOutcome outcome,
                            const Warnings *warnings)
{
    (void)outcome;
    (void)warnings;
    Block *b = context;
    memcpy(b->applied[head], a, sizeof(double) * (size_t)b->T * b->T);
    return 0;
}

static Block *network_block(const Config *c, Gap gap, int layer)
{
    int t = c->tokens, d = c->width;
    size_t td = (size_t)t * d, dd = (size_t)d * d;
    Block *b = block_new(t, d, 1);
    assert_non_null(b->applied[0] = malloc(sizeof(double) * (size_t)t * t));
    b->scale = Init_logit_scale(c);
    Layer l;
    layer_new(&l, c);
    assert_int_equal(Layer_input(l.random, la, c, c->seed, l.b.x, l.scratch), 0);
    LayerObserver seen = {.context = b, .built = captured_built, .applied = captured_applied};
    for (int at = 1; at <= layer; at++) {
        assert_int_equal(Layer_draw(l.random, la, c, c->seed, at, LAYER_DRAW_ALL, &l.w, l.scratch),
                         0);
        if (at == layer)
            memcpy(b->x, l.b.x, sizeof(double) * td);
        LayerStep step = {.config = c,
                          .layer = at,
                          .weights = &l.w,
                          .gap = gap,
                          .observer = at == layer ? &seen : NULL};
        LayerOutcome outcome;
        double log_scale = 0;
        assert_int_equal(Layer_step(&step, &l.b, &outcome, &log_scale), 0);
        assert_int_equal(outcome, LAYER_DONE);
    }
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, d, d, d, 1.0, l.w.query, d, l.w.key, d,
                0.0, b->m[0], d);
    memcpy(b->wvo[0], l.w.value, sizeof(double) * dd);
    layer_free(&l, c);
    block_link(b);
    return b;
}

/* The default network at T = d = 64 (softmax, full mask, no skip, no LayerNorm), both
   networks (gap off and centred), every layer: its tokens share a component that grows to
   ‖X‖_F ≈ 5·10⁶ by layer 8, where the old model γ‖K‖ was 10⁹ below the error.  The bound of
   each product holds against the quad reference, and is below η. */
static void test_product_bound_holds_at_the_default_network(void **state)
{
    (void)state;
    Config c = small(64, 64, 8);
    const Gap gaps[] = {GAP_OFF, GAP_CENTER};
    for (int g = 0; g < 2; g++)
        for (int layer = 1; layer <= c.depth; layer++) {
            Block *b = network_block(&c, gaps[g], layer);
            SaWork *w = prepared_work(b);
            Rounding r = product_rounding(w, b, 90 + (uint64_t)layer, 2);
            double eta = SaWork_product_error(w);
            print_message("gap %d, layer %d: ‖X‖_F %.3g, error %.3g, bound %.3g (error/bound "
                          "%.3g at most), eta %.3g, plain products' error %.3g\n",
                          g, layer, norm2(b->x, (size_t)64 * 64), r.error, r.bound, r.tightness,
                          eta, r.plain);
            if (!(r.bound <= eta))
                fail_msg("layer %d: the product's bound %.3g above eta %.3g", layer, r.bound, eta);
            /* From layer 6 of the network its tokens are equal to round-off: the centred
               route proves less than the plain products' own error. */
            if (gaps[g] == GAP_OFF && layer >= 6 && !(r.bound < r.plain))
                fail_msg("layer %d: the centred bound %.3g not below the plain error %.3g", layer,
                         r.bound, r.plain);
            /* The lower bound's witness moves ‖Kᵀy‖ by that product's bound, not by η‖y‖. */
            size_t n = (size_t)64 * 64;
            double *y = malloc(sizeof(double) * 2 * n), witnessed, bounded;
            assert_non_null(y);
            for (size_t k = 0; k < n; k++)
                y[k] = cos(0.37 * (double)k);
            SaWork_witness(w, y, true, true, y + n, &witnessed);
            bounded = SaWork_product_bounded(w, y, true, y + n);
            if (!(witnessed == bounded && witnessed < eta * norm2(y, n)))
                fail_msg(
                    "layer %d: the witness's rounding %.3g, the product's bound %.3g, eta %.3g",
                    layer, witnessed, bounded, eta * norm2(y, n));
            free(y);
            SaWork_free(w);
            block_free(b);
        }
}

/* The compensated route's sums recover what a recursive sum loses.  T = 2 tokens e₁ and e₂,
   d = 64, M's first column all ones (so fl(X Mᵀ)'s first row is, and its second 0), W_VO = I,
   and the applied attention 0 (K = E, no value path: the derivative's path alone).  Every row
   of Ẋ is (1, 2⁵³, 1, …, 1, −2⁵³): a recursive sum of Ĝ's first column loses each 1 after
   2⁵³ (ties to even) and returns 1 (+1 from X M Ẋᵀ) where the sum is 63, an error of 62·s;
   Dot2 returns it exactly.  The bound, which charges the sums' rounding as Dot2's u|Ĝ| +
   γ_2d²Σ (and the prepared product's u|fl(X Mᵀ)|, about 2s here), must hold against the quad
   reference: with the compensation (Dot2's carried error terms) dropped it fails by about
   10 times.  The plain route's bound (γ_{2d+2}Σ, some 260s) exceeds the product's norm here,
   so SaWork_product_bounded takes the compensated route: its bound (whichever centring it
   keeps) must hold and be below a fifth of the product's norm. */
/* A one-head block of t tokens and width d for the compensated route's constructed cases: its
   applied attention is 0 (no value path, the derivative's path alone), W_VO = I, X and M are 0
   for the case to fill.  *vectors gets three t·d vectors: the direction, the product, and the
   quad reference. */
static Block *derivative_only_block(int t, int d, double **vectors)
{
    size_t n = (size_t)t * d;
    Block *b = block_new(t, d, 1);
    assert_non_null(*vectors = calloc(3 * n, sizeof(double)));
    assert_non_null(b->applied[0] = calloc((size_t)t * t, sizeof(double)));
    memset(b->x, 0, sizeof(double) * n);
    memset(b->m[0], 0, sizeof(double) * (size_t)d * d);
    memset(b->wvo[0], 0, sizeof(double) * (size_t)d * d);
    for (int q = 0; q < d; q++)
        b->wvo[0][q + (size_t)q * d] = 1.0;
    return b;
}

static void test_compensated_sums_recover_lost_terms(void **state)
{
    (void)state;
    const int t = 2, d = 64;
    size_t n = (size_t)t * d;
    double *v;
    Block *b = derivative_only_block(t, d, &v);
    double *out = v + n, *exact = out + n;
    for (int q = 0; q < d; q++)
        b->m[0][q] = 1.0;
    b->x[0] = b->x[1 + t] = 1.0;
    for (int i = 0; i < t; i++)
        for (int q = 0; q < d; q++)
            v[i + (size_t)q * t] = q == 1 ? 0x1p53 : q == d - 1 ? -0x1p53 : 1.0;
    block_attend(b, MASK_FULL);
    SaWork *w = prepared_work(b);
    product_quad(b, v, false, exact);
    double bound = SaWork_product_compensated(w, v, false, SA_CENTRE_NONE, out);
    double error = error_norm(out, exact, n), image = norm2(exact, n);
    double plain = SaWork_product_centred(w, v, false, SA_CENTRE_NONE, out);
    print_message("lost terms: |K v| %.3g, compensated error %.3g, bound %.3g; the plain route's "
                  "bound %.3g\n",
                  image, error, bound, plain);
    if (!(error <= bound))
        fail_msg("the compensated route's error %.3g above its bound %.3g", error, bound);
    if (!(plain > image && bound < image / 5))
        fail_msg("the plain route's bound %.3g, the compensated %.3g, |K v| %.3g", plain, bound,
                 image);
    double bounded = SaWork_product_bounded(w, v, false, out);
    error = error_norm(out, exact, n);
    if (!(bounded < image / 5 && error <= bounded))
        fail_msg("SaWork_product_bounded: bound %.3g, error %.3g, |K v| %.3g", bounded, error,
                 image);
    SaWork_free(w);
    free(v);
    block_free(b);
}

/* A JVP whose only error is one prepared product's, fl(X M)₀₀, and whose every other charge is
   0, so that the compensated bound rests on that product's own term alone (each case's comment
   says which).  T = 2, d = 8, the applied attention 0 (no value path), W_VO = I.  Token 0 holds
   `row` in columns 2 onwards, token 1 is 0; M's column 0 is 1 in rows 2 .. 1 + terms (so
   X M's (0, 0) entry is the sum of `row`, in order).  With `cancel`, X₀₇ = 1 and M₇₁ = −1
   (fl(X M)₀₁ = −1, exact).  X Mᵀ is 0 and so are the logits (M's columns 0 and 1 meet X's,
   which are 0): a = 1/2 everywhere, exact.  Ẋ: token 0 is (1, cancel, 0, …), token 1 is 0.
   Ĝ = s(fl(X M)₀₀ − cancel) in row 0, column 0 (0 elsewhere); D, a = 1/2, passes it on as
   ±Ĝ₀₀/4, and the output's row 0 is D₀₀ times token 0.  Returns the error of
   SaWork_product_compensated (μ = 0) against the quad reference over its bound. */
static double compensated_prepared_case(const char *term, const double *row, int terms, bool cancel)
{
    const int t = 2, d = 8;
    size_t n = (size_t)t * d;
    double *v;
    Block *b = derivative_only_block(t, d, &v);
    double *out = v + n, *exact = out + n;
    for (int k = 0; k < terms; k++) {
        b->x[(size_t)(2 + k) * t] = row[k];
        b->m[0][2 + k] = 1.0;
    }
    if (cancel) {
        b->x[(size_t)7 * t] = 1.0;
        b->m[0][7 + d] = -1.0;
    }
    v[0] = 1.0;
    v[t] = cancel ? 1.0 : 0.0;
    block_attend(b, MASK_FULL);
    SaWork *w = prepared_work(b);
    product_quad(b, v, false, exact);
    double bound = SaWork_product_compensated(w, v, false, SA_CENTRE_NONE, out);
    double error = error_norm(out, exact, n);
    if (!(error > 0))
        fail_msg("%s's case has no error to bound (the construction changed?)", term);
    if (!(error <= bound))
        fail_msg("%s's case: the compensated route's error %.3g above its bound %.3g", term, error,
                 bound);
    SaWork_free(w);
    free(v);
    block_free(b);
    return error / bound;
}

/* Each term of the prepared products' bound E_P = (u|P̂| + γ_d²|L||F|)/(1 − u) is needed: in
   each case below the bound is 0 without it and the error is not.
   - u|P̂|: fl(X M)₀₀ = fl(1 + 2⁻⁵³ − 2⁻⁸⁰) = 1 (just below the tie), off by u·(1 − 2⁻²⁷), and
     fl(X M)₀₁ = −1 cancels it in Ĝ: Ĝ = 0 exactly, so γ_2|Ĝ| and every charge of the
     derivative and the output on |Ĝ|, |D̂| is 0, γ_d²|X||M| ≈ 64u² ≈ 2⁻¹⁰⁰ is 2⁴⁷ times below
     the error, and only u|P̂| (u each of the two P̂ entries) covers the s·u/4·‖x₀‖ it leaves.
   - γ_d² (the γ_n² factor of Dot2's Proposition 5.5, here n = d): the sum 2¹¹⁰ + 2⁵⁴ + 1 − 2¹¹⁰
     − 2⁵⁴ = 1, which Dot2 returns as 0 (the carried errors 2⁵⁴ and 1 round to 2⁵⁴ in the
     carry: exact in __float128, 111 bits), so u|P̂| = 0 there and only γ_d²|X||M| (≈ 2¹¹)
     bounds the error s/4·‖x₀‖ ≈ 2¹⁰⁷.
   The Dot2 sums of Ĝ and Ā have their own γ_{2d}² and γ_d² terms, which no test here makes
   necessary: the prepared products they read are charged u|P̂| each, so those sums' Σ|x||y| is
   charged u·Σ already, 1/(4d²u) times their γ² term (3·10¹⁰ at d = 256); it would matter only
   where every prepared product errs by its full u|P̂| to within γ² and Ĝ cancels besides.  And
   γ_2|Ĝ| (Ā) is never the term that matters: the softmax derivative D, which every Ĝ goes through,
   charges its own rounding a ⊙ (γ_{T+3}·rowsum(a ⊙ |ĝ|) + γ_2|ĝ|), entry by entry at least what
   γ_2|Ĝ| becomes through D, a ⊙ (γ_2|ĝ| + γ_2·rowsum(a ⊙ |ĝ|)), while D's actual rounding
   exceeds the rest of its charge by at most 2u|D̂|, which the output sum's γ_N|D̂| (N ≥ T + 2)
   covers; so the bound holds without it (to first order in u) and no input can show it. */
static void test_compensated_bound_needs_each_term(void **state)
{
    (void)state;
    const double tie[] = {1.0, 0x1p-53, -0x1p-80};
    const double lost[] = {0x1p110, 0x1p54, 1.0, -0x1p110, -0x1p54};
    double rounding = compensated_prepared_case("u|P̂|", tie, 3, true);
    double cancelled = compensated_prepared_case("γ_d²|X||M|", lost, 5, false);
    print_message("error/bound: %.3g where u|P̂| alone bounds it, %.3g where γ_d²|X||M| does\n",
                  rounding, cancelled);
}

/* Layer 7's situation at the default size, small: at T = 16, d = 64 the counterpart
   network's layer-8 input (‖X‖_F 1.7·10⁶, saturated rows) leaves the centred route's bound,
   for all three centrings, above the product's norm for some vectors (a witness there proves
   no κ bound), the error of its 2d-term sums' k·u worst case.  The compensated route's bound
   must hold against the quad reference for each centring and vector, and where the centred
   bound exceeds half the norm (all four vectors; above it at least one) SaWork_product_bounded
   on a fresh block (which takes the compensated route there) must return a bound that holds
   and is below a tenth of the product's norm. */
static void test_compensated_route_bounds_layer_seven(void **state)
{
    (void)state;
    Config c = small(16, 64, 8);
    Block *b = network_block(&c, GAP_CENTER, 8);
    size_t n = (size_t)b->T * b->d;
    SaWork *w = SaWork_new();
    double *v = malloc(sizeof(double) * 3 * n), *out = v + n, *exact = out + n;
    RandomStream *rs = RandomStream_new();
    assert_true(w && v && rs);
    assert_int_equal(SaWork_prepare_heads(w, b->blocks, 1), 0);
    int weak = 0;
    for (int trial = 0; trial < 4; trial++) {
        bool transposed = trial % 2;
        RandomStream_gaussian(rs, 17, trial, ROLE_INPUT, 1.0, v, n);
        product_quad(b, v, transposed, exact);
        /* a new block for each: no earlier product's norm raises the bar the route needs */
        assert_int_equal(SaWork_prepare_heads(w, b->blocks, 1), 0);
        double image = norm2(exact, n), least = INFINITY, compensated = INFINITY;
        for (int centre = 0; centre < SA_CENTRINGS; centre++) {
            least = fmin(least, SaWork_product_centred(w, v, transposed, centre, out));
            double bound = SaWork_product_compensated(w, v, transposed, centre, out);
            double error = error_norm(out, exact, n);
            if (!(error <= bound))
                fail_msg("centring %d: error %.3g above the compensated bound %.3g", centre, error,
                         bound);
            compensated = fmin(compensated, bound);
        }
        double bounded = SaWork_product_bounded(w, v, transposed, out);
        double error = error_norm(out, exact, n);
        print_message("%s: |K v| %.3g, centred bound %.3g, compensated %.3g, bounded %.3g "
                      "(error %.3g)\n",
                      transposed ? "VJP" : "JVP", image, least, compensated, bounded, error);
        if (!(error <= bounded))
            fail_msg("SaWork_product_bounded's error %.3g above its bound %.3g", error, bounded);
        weak += least > image;
        if (!(least > image / 2)) /* the route's trigger: above half ρ‖v‖, ρ ≈ |K v| here */
            continue;
        if (!(bounded < image / 10))
            fail_msg("SaWork_product_bounded's bound %.3g (error %.3g) against |K v| %.3g", bounded,
                     error, image);
    }
    if (!weak)
        fail_msg("the centred route bounds every product within its norm: not layer 7's case");
    RandomStream_free(rs);
    free(v);
    SaWork_free(w);
    block_free(b);
}

/* The compensated route's block is rebuilt for each centring but its fl(X M) only once per
   block: products through one SaWork that goes from centring to centring and then to a
   second block must equal a fresh SaWork's of that block and centring bit for bit, product
   and bound, JVP and VJP (a stale fl(X M) from the first block, or one never built, would
   differ). */
static void test_compensated_block_rebuilt_alike(void **state)
{
    (void)state;
    Block *first = block_make(T, D, HEADS, MASK_FULL, 0.5, 1e4, 91);
    Block *second = block_make(T, D, HEADS, MASK_FULL, 0.5, 1e4, 92);
    SaWork *shared = SaWork_new();
    double *v = malloc(sizeof(double) * 3 * N), *out = v + N, *want = out + N;
    RandomStream *rs = RandomStream_new();
    assert_true(shared && v && rs);
    const SaCentring order[] = {SA_CENTRE_MEAN, SA_CENTRE_NONE, SA_CENTRE_MEDIAN, SA_CENTRE_MEAN};
    const Block *blocks[] = {first, second};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(SaWork_prepare_heads(shared, blocks[k]->blocks, HEADS), 0);
        for (int step = 0; step < 4; step++)
            for (int transposed = 0; transposed < 2; transposed++) {
                RandomStream_gaussian(rs, 93, step, ROLE_INPUT, 1.0, v, N);
                SaWork *fresh = SaWork_new();
                assert_non_null(fresh);
                assert_int_equal(SaWork_prepare_heads(fresh, blocks[k]->blocks, HEADS), 0);
                double expected =
                    SaWork_product_compensated(fresh, v, transposed, order[step], want);
                double bound = SaWork_product_compensated(shared, v, transposed, order[step], out);
                SaWork_free(fresh);
                if (memcmp(&bound, &expected, sizeof bound) ||
                    memcmp(out, want, sizeof(double) * N))
                    fail_msg("block %d, centring %d, %s: bound %.17g against a fresh block's "
                             "%.17g, or the products differ",
                             k, order[step], transposed ? "VJP" : "JVP", bound, expected);
            }
    }
    RandomStream_free(rs);
    free(v);
    SaWork_free(shared);
    block_free(first);
    block_free(second);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_product_error_bounds_the_rounding),
        cmocka_unit_test(test_product_bound_holds_with_a_sink),
        cmocka_unit_test(test_search_is_per_part_of_k),
        cmocka_unit_test(test_product_bound_is_tight_on_short_sums),
        cmocka_unit_test(test_product_bound_holds_at_the_default_network),
        cmocka_unit_test(test_compensated_sums_recover_lost_terms),
        cmocka_unit_test(test_compensated_bound_needs_each_term),
        cmocka_unit_test(test_compensated_route_bounds_layer_seven),
        cmocka_unit_test(test_compensated_block_rebuilt_alike),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
