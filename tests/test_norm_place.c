/* LayerNorm placements beyond post and pre (docs/model.md §1.8): peri, X + LN(F(LN X)) (Gemma
 * 2/3), and output, X + LN(F X) (OLMo 2).  One layer step against a reference written here loop
 * by loop from the layer's weights, with and without an MLP, a skip, several heads and W^O;
 * the exact invariants of the placements; and the conditioning's refusal of K there. */
#include "testing.h"

#include "attnscope/conditioning.h"
#include "attnscope/layer.h"
#include "layer_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One token's row (d entries, T apart) normalised as c says: centred for ln, then divided by
   its norm (unit rows) or by √(mean(z²) + ε) (PyTorch's rows, --ln-scale sqrt-d). */
static void reference_norm_row(const Config *c, double *row, int T)
{
    int d = c->width;
    double mean = 0, squares = 0;
    if (c->layernorm == LAYERNORM_LN) {
        for (int e = 0; e < d; e++)
            mean += row[e * T] / d;
        for (int e = 0; e < d; e++)
            row[e * T] -= mean;
    }
    for (int e = 0; e < d; e++)
        squares += row[e * T] * row[e * T];
    double divisor = c->ln_scale == LN_SCALE_SQRT_D ? sqrt(squares / d + c->ln_eps) : sqrt(squares);
    for (int e = 0; e < d; e++)
        row[e * T] /= divisor;
}

static void reference_norm(const Config *c, double *x)
{
    for (int i = 0; i < c->tokens; i++)
        reference_norm_row(c, x + i, c->tokens);
}

static bool reads_norm(const Config *c)
{
    return c->ln_place == LN_PLACE_PRE || c->ln_place == LN_PLACE_PERI;
}

static bool writes_norm(const Config *c)
{
    return c->ln_place == LN_PLACE_PERI || c->ln_place == LN_PLACE_OUTPUT;
}

/* out (T×n) = in (T×m) · w, w m×n column-major with leading dimension ld; transposed: w is
   n×m and out = in·wᵀ. */
static void product(int T, int m, int n, const double *in, const double *w, int ld, bool transposed,
                    double *out)
{
    for (int i = 0; i < T; i++)
        for (int p = 0; p < n; p++) {
            double s = 0;
            for (int e = 0; e < m; e++)
                s += in[i + e * T] * (transposed ? w[p + e * ld] : w[e + p * ld]);
            out[i + p * T] = s;
        }
}

/* The self-attention branch F(X'), X' the T×d input: every head's full-mask softmax of
   q_i·k_j/√d_h, times its values, the heads side by side, times W^O where there is one. */
static void reference_attention(const Config *c, const Layer *l, const double *xin, double *f)
{
    int T = c->tokens, d = c->width, dh = d / c->heads;
    size_t td = (size_t)T * d;
    double *q = malloc(sizeof(double) * td), *k = malloc(sizeof(double) * td);
    double *v = malloc(sizeof(double) * td), *mixed = calloc(td, sizeof(double));
    assert_true(q && k && v && mixed && T <= 64); /* one row's logits fit logit[64] */
    product(T, d, d, xin, l->w.query, d, false, q);
    product(T, d, d, xin, l->w.key, d, false, k);
    product(T, d, d, xin, l->w.value, d, false, v);
    for (int h = 0; h < c->heads; h++)
        for (int i = 0; i < T; i++) {
            double logit[64], largest = -INFINITY, total = 0;
            for (int j = 0; j < T; j++) {
                logit[j] = 0;
                for (int e = h * dh; e < (h + 1) * dh; e++)
                    logit[j] += q[i + e * T] * k[j + e * T] / sqrt((double)dh);
                largest = fmax(largest, logit[j]);
            }
            for (int j = 0; j < T; j++)
                total += logit[j] = exp(logit[j] - largest);
            for (int e = h * dh; e < (h + 1) * dh; e++)
                for (int j = 0; j < T; j++)
                    mixed[i + e * T] += logit[j] / total * v[j + e * T];
        }
    if (c->output == OUTPUT_IDENTITY)
        memcpy(f, mixed, sizeof(double) * td);
    else
        product(T, d, d, mixed, l->w.output, d, false, f);
    free(q), free(k), free(v), free(mixed);
}

/* The MLP branch: gelu(X' W1) W2 with the exact normal CDF, W1 stored N×d, W2 N×d. */
static void reference_mlp(const Config *c, const Layer *l, const double *xin, double *f)
{
    int T = c->tokens, d = c->width, n = Config_mlp_hidden(c);
    double *hidden = malloc(sizeof(double) * T * n);
    assert_non_null(hidden);
    product(T, d, n, xin, l->w.mlp_in, n, true, hidden);
    for (int i = 0; i < T * n; i++)
        hidden[i] = 0.5 * hidden[i] * (1.0 + erf(hidden[i] / sqrt(2.0)));
    product(T, n, d, hidden, l->w.mlp_out, n, false, f);
    free(hidden);
}

/* X ← keep·X + N_out(F(N_in(X))) for one sub-block, N_in and N_out as the placement has them. */
static void reference_sublayer(const Config *c, const Layer *l, bool mlp, double *x)
{
    size_t td = (size_t)c->tokens * c->width;
    double *xin = malloc(sizeof(double) * td), *f = malloc(sizeof(double) * td);
    assert_true(xin && f);
    memcpy(xin, x, sizeof(double) * td);
    if (reads_norm(c))
        reference_norm(c, xin);
    (mlp ? reference_mlp : reference_attention)(c, l, xin, f);
    if (writes_norm(c))
        reference_norm(c, f);
    double keep = c->skip == SKIP_NONE ? 0.0 : 1.0;
    for (size_t i = 0; i < td; i++)
        x[i] = keep * x[i] + f[i];
    free(xin), free(f);
}

/* Every case: placement, norm kind and scale, heads (with W^O for 2), MLP, skip. */
typedef struct {
    LnPlace place;
    LayerNorm norm;
    LnScale scale;
    int heads;
    Mlp mlp;
    Skip skip;
} Case;

static Config case_config(const Case *k)
{
    Config c = Config_default();
    c.tokens = 6;
    c.width = 8;
    c.depth = 2;
    c.sigma_qk = 1.5;
    c.ln_place = k->place;
    c.layernorm = k->norm;
    c.ln_scale = k->scale;
    c.ln_eps = k->scale == LN_SCALE_SQRT_D ? 1e-6 : c.ln_eps;
    c.heads = k->heads;
    c.output = k->heads > 1 ? OUTPUT_GAUSSIAN : OUTPUT_IDENTITY;
    c.mlp = k->mlp;
    c.skip = k->skip;
    char err[256];
    if (Config_validate(&c, err, sizeof err))
        fail_msg("%s", err);
    return c;
}

/* One layer step of c (case n) against the reference.  stale: the buffer F goes into first
   holds NaN, as a workspace's reused buffers hold what an earlier run left: it must not be
   read. */
static void assert_step_matches_reference(const Config *c, size_t n, bool stale)
{
    Layer l;
    layer_new(&l, c);
    layer_draw_all(&l, c);
    size_t td = (size_t)c->tokens * c->width;
    double *want = malloc(sizeof(double) * td);
    assert_non_null(want);
    memcpy(want, l.b.x, sizeof(double) * td);
    reference_sublayer(c, &l, false, want);
    if (c->mlp != MLP_NONE)
        reference_sublayer(c, &l, true, want);
    for (size_t i = 0; stale && l.b.branch && i < td; i++)
        l.b.branch[i] = NAN;
    LayerStep s = {.config = c, .layer = 1, .weights = &l.w, .gap = GAP_OFF};
    LayerOutcome outcome;
    double log_scale = 0;
    assert_int_equal(Layer_step(&s, &l.b, &outcome, &log_scale), 0);
    assert_int_equal(outcome, LAYER_DONE);
    double scale = 0;
    for (size_t i = 0; i < td; i++)
        scale = fmax(scale, fabs(want[i]));
    for (size_t i = 0; i < td; i++)
        if (!(fabs(l.b.x[i] - want[i]) <= 1e-13 * scale))
            fail_msg("%s, case %zu%s: X1[%zu] = %.17g, reference %.17g",
                     LN_PLACE_NAMES.names[c->ln_place], n, stale ? " (stale branch buffer)" : "", i,
                     l.b.x[i], want[i]);
    free(want);
    layer_free(&l, c);
}

static void test_step_matches_the_reference(void **state)
{
    (void)state;
    const LnPlace places[] = {LN_PLACE_PERI, LN_PLACE_OUTPUT, LN_PLACE_PRE};
    const Case norms[] = {{0, LAYERNORM_RMS, LN_SCALE_SQRT_D, 1, MLP_NONE, SKIP_PLAIN},
                          {0, LAYERNORM_LN, LN_SCALE_UNIT, 1, MLP_NONE, SKIP_PLAIN},
                          {0, LAYERNORM_RMS, LN_SCALE_SQRT_D, 2, MLP_NONE, SKIP_PLAIN},
                          {0, LAYERNORM_RMS, LN_SCALE_SQRT_D, 1, MLP_GELU, SKIP_PLAIN},
                          {0, LAYERNORM_LN, LN_SCALE_SQRT_D, 2, MLP_GELU, SKIP_PLAIN},
                          {0, LAYERNORM_RMS, LN_SCALE_SQRT_D, 2, MLP_GELU, SKIP_NONE},
                          {0, LAYERNORM_RMS, LN_SCALE_UNIT, 1, MLP_GELU, SKIP_NONE}};
    for (size_t p = 0; p < sizeof places / sizeof places[0]; p++)
        for (size_t n = 0; n < sizeof norms / sizeof norms[0]; n++) {
            Case k = norms[n];
            k.place = places[p];
            Config c = case_config(&k);
            assert_step_matches_reference(&c, n, false);
        }
}

/* F normalised before it joins goes alone into the branch buffer, which under a workspace
   holds what the last run left there (NaN here): several heads without W^O, summed into it,
   once read it (0·NaN), and every case is checked so. */
static void test_stale_branch_buffer_not_read(void **state)
{
    (void)state;
    const LnPlace places[] = {LN_PLACE_PERI, LN_PLACE_OUTPUT};
    for (size_t p = 0; p < sizeof places / sizeof places[0]; p++)
        for (int output = 0; output < 2; output++) {
            Case k = {places[p], LAYERNORM_RMS, LN_SCALE_SQRT_D, 2, MLP_GELU, SKIP_PLAIN};
            Config c = case_config(&k);
            c.output = output ? OUTPUT_GAUSSIAN : OUTPUT_IDENTITY;
            assert_step_matches_reference(&c, (size_t)output, true);
        }
}

/* Without a skip, output-LN is post-LN: X ← LN(F(X)) both, bit for bit; without a LayerNorm
   every placement is the plain block. */
static void test_placements_that_coincide(void **state)
{
    (void)state;
    Case k = {LN_PLACE_OUTPUT, LAYERNORM_RMS, LN_SCALE_SQRT_D, 2, MLP_GELU, SKIP_NONE};
    Config output = case_config(&k), post = output;
    post.ln_place = LN_PLACE_POST;
    Result *a = run(&output), *b = run(&post);
    size_t n = sizeof(double) * (output.depth + 1);
    assert_memory_equal(a->network.stable_rank, b->network.stable_rank, n);
    assert_memory_equal(a->network.log10_norm, b->network.log10_norm, n);
    Result_free(a);
    Result_free(b);
    Config plain = post;
    plain.layernorm = LAYERNORM_NONE;
    plain.skip = SKIP_PLAIN;
    b = run(&plain);
    const LnPlace places[] = {LN_PLACE_PRE, LN_PLACE_PERI, LN_PLACE_OUTPUT};
    for (size_t p = 0; p < 3; p++) {
        Config other = plain;
        other.ln_place = places[p];
        a = run(&other);
        assert_memory_equal(a->network.log10_norm, b->network.log10_norm, n);
        Result_free(a);
    }
    Result_free(b);
}

/* Peri- and output-LN with PyTorch's rows at ε = 0: each branch joins as rows of norm exactly
   √d, so with the skip every row of X_1 − X_0 after the attention sub-block has norm √d. */
static void test_branch_rows_have_norm_sqrt_d(void **state)
{
    (void)state;
    const LnPlace places[] = {LN_PLACE_PERI, LN_PLACE_OUTPUT};
    for (size_t p = 0; p < 2; p++) {
        Case k = {places[p], LAYERNORM_RMS, LN_SCALE_SQRT_D, 2, MLP_NONE, SKIP_PLAIN};
        Config c = case_config(&k);
        c.ln_eps = 0;
        Layer l;
        layer_new(&l, &c);
        layer_draw_all(&l, &c);
        int T = c.tokens, d = c.width;
        double *x0 = malloc(sizeof(double) * T * d);
        assert_non_null(x0);
        memcpy(x0, l.b.x, sizeof(double) * T * d);
        LayerStep s = {.config = &c, .layer = 1, .weights = &l.w, .gap = GAP_OFF};
        LayerOutcome outcome;
        double log_scale = 0;
        assert_int_equal(Layer_step(&s, &l.b, &outcome, &log_scale), 0);
        for (int i = 0; i < T; i++) {
            double squares = 0;
            for (int e = 0; e < d; e++)
                squares += pow(l.b.x[i + e * T] - x0[i + e * T], 2);
            assert_true(fabs(sqrt(squares) - sqrt((double)d)) < 1e-13 * sqrt((double)d));
        }
        free(x0);
        layer_free(&l, &c);
    }
}

/* Under peri and output the sub-block is LN(f): the conditioning takes K = J_LN·(B + E)
   (test_conditioning_shape checks it against the layer step) at every layer, says nothing to
   refuse it, and keeps κ(A) of the attention the step applied. */
static void test_conditioning_takes_k_through_a_branch_norm(void **state)
{
    (void)state;
    const LnPlace places[] = {LN_PLACE_PERI, LN_PLACE_OUTPUT};
    for (size_t p = 0; p < 2; p++) {
        Case k = {places[p], LAYERNORM_RMS, LN_SCALE_SQRT_D, 1, MLP_NONE, SKIP_PLAIN};
        Config c = case_config(&k);
        c.sigma_qk = 0.5; /* rows of norm √d multiply the logits by d: keep A resolved */
        Conditioning cond;
        char err[256];
        assert_int_equal(Conditioning_run(&c, &cond, err, sizeof err), 0);
        for (int l = 1; l <= c.depth; l++) {
            assert_true(isfinite(cond.network.jacobian_norm[l]));
            assert_true(isfinite(cond.counterpart.jacobian_norm[l]));
            assert_true(isfinite(cond.network.kappa_attention[l]));
        }
        for (int i = 0; i < cond.warnings.count; i++)
            assert_null(strstr(cond.warnings.text[i], "the Jacobian of"));
        Conditioning_release(&cond);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_matches_the_reference),
        cmocka_unit_test(test_stale_branch_buffer_not_read),
        cmocka_unit_test(test_placements_that_coincide),
        cmocka_unit_test(test_branch_rows_have_norm_sqrt_d),
        cmocka_unit_test(test_conditioning_takes_k_through_a_branch_norm),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
