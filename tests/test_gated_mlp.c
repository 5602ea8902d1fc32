/* Gated MLPs (--mlp swiglu|geglu, --mlp-hidden; docs/model.md §1.9): the layer against a
 * reference written here loop by loop, the gate drawn from the ungated MLP's W1 stream and the
 * up projection from its own, and --mlp-hidden R·d equal to --mlp-ratio R bit for bit. */
#include "testing.h"

#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/random.h"
#include "layer_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The gate's activation as the papers write it: silu(x) = x·σ(x) with σ(x) = ½(1 + tanh(x/2)),
   and GELU's tanh approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
static double gate_activation(Mlp mlp, double x)
{
    if (mlp == MLP_SWIGLU)
        return x * 0.5 * (1.0 + tanh(0.5 * x));
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/* One layer of identity attention with plain skips: Y = X + X W^V, then
   Z = Y + (act(Y W_gate) ⊙ Y W_up) W_down, loop by loop.  W_gate and W_up are stored N×d
   (transposed), W_down N×d. */
static void reference_layer(const Config *c, const Layer *l, const double *x, double *z)
{
    int T = c->tokens, d = c->width, n = Config_mlp_hidden(c);
    size_t td = (size_t)T * d, tn = (size_t)T * n;
    double *y = malloc(sizeof(double) * td), *h = calloc(tn, sizeof(double));
    double *up = calloc(tn, sizeof(double));
    assert_true(y && h && up);
    memcpy(y, x, sizeof(double) * td);
    reference_product(T, d, d, x, l->w.value, 1, (size_t)d, y);
    reference_product(T, d, n, y, l->w.mlp_in, (size_t)n, 1, h);
    reference_product(T, d, n, y, l->w.mlp_up, (size_t)n, 1, up);
    for (size_t i = 0; i < tn; i++)
        h[i] = gate_activation(c->mlp, h[i]) * up[i];
    memcpy(z, y, sizeof(double) * td);
    reference_product(T, n, d, h, l->w.mlp_out, 1, (size_t)n, z);
    free(y);
    free(h);
    free(up);
}

static Config gated(Mlp mlp, int hidden)
{
    Config c = Config_default();
    c.tokens = 6;
    c.width = 8;
    c.depth = 2;
    c.attention = ATTENTION_IDENTITY;
    c.skip = SKIP_PLAIN;
    c.mlp = mlp;
    c.mlp_hidden = hidden;
    char err[256];
    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
    return c;
}

/* SwiGLU and GeGLU, at a hidden width that is no multiple of d, are the loop-by-loop layer. */
static void test_gated_layer_matches_the_reference(void **state)
{
    (void)state;
    const Mlp kinds[] = {MLP_SWIGLU, MLP_GEGLU};
    for (size_t k = 0; k < 2; k++) {
        Config c = gated(kinds[k], 13);
        Layer l;
        layer_new(&l, &c);
        layer_draw_all(&l, &c);
        assert_step_matches(&c, &l, reference_layer, 1e-13, MLP_NAMES.names[c.mlp]);
        layer_free(&l, &c);
    }
}

/* The gate is the ungated MLP's W1 (its stream, its LeCun std 1/√d), the down projection its
   W2; the up projection is a third stream of the same law, not a copy of the gate. */
static void test_gate_and_up_streams(void **state)
{
    (void)state;
    Config swiglu = gated(MLP_SWIGLU, 0), relu = gated(MLP_RELU, 0);
    Layer a, b;
    layer_new(&a, &swiglu);
    layer_draw_all(&a, &swiglu);
    layer_new(&b, &relu);
    layer_draw_all(&b, &relu);
    size_t nd = (size_t)Config_mlp_hidden(&swiglu) * swiglu.width;
    assert_memory_equal(a.w.mlp_in, b.w.mlp_in, sizeof(double) * nd);
    assert_memory_equal(a.w.mlp_out, b.w.mlp_out, sizeof(double) * nd);
    assert_memory_not_equal(a.w.mlp_up, a.w.mlp_in, sizeof(double) * nd);
    /* Its std: 1/√d within 4 standard errors of a sample variance (n = 4·d² = 256 entries). */
    double sum2 = 0;
    for (size_t i = 0; i < nd; i++)
        sum2 += a.w.mlp_up[i] * a.w.mlp_up[i];
    double variance = sum2 / nd, want = 1.0 / swiglu.width;
    assert_true(fabs(variance - want) < 4.0 * want * sqrt(2.0 / nd));
    layer_free(&a, &swiglu);
    layer_free(&b, &relu);
}

/* --mlp-hidden R·d is --mlp-ratio R bit for bit (gated or not), and --mlp-hidden wins over the
   ratio. */
static void test_hidden_width_precedes_the_ratio(void **state)
{
    (void)state;
    char err[256];
    const Mlp kinds[] = {MLP_GELU, MLP_GEGLU};
    for (size_t k = 0; k < 2; k++) {
        Config c = gated(kinds[k], 0);
        c.attention = ATTENTION_SOFTMAX;
        c.mlp_ratio = 2;
        Result *ratio = Result_new(), *hidden = Result_new();
        assert_int_equal(Model_run(&c, workspace, ratio, NULL, err, sizeof err), 0);
        c.mlp_ratio = 3; /* ignored: the hidden width says 2·d */
        c.mlp_hidden = 2 * c.width;
        assert_int_equal(Config_mlp_hidden(&c), 16);
        Workspace *fresh = Workspace_new();
        assert_int_equal(Model_run(&c, fresh, hidden, NULL, err, sizeof err), 0);
        assert_memory_equal(ratio->network.stable_rank, hidden->network.stable_rank,
                            sizeof(double) * (c.depth + 1));
        assert_memory_equal(ratio->network.log10_norm, hidden->network.log10_norm,
                            sizeof(double) * (c.depth + 1));
        Workspace_free(fresh);
        Result_free(ratio);
        Result_free(hidden);
    }
}

/* --init-mlp identity needs square MLP matrices: a hidden width of d, said in the option's
   terms. */
static void test_identity_mlp_needs_width_d(void **state)
{
    (void)state;
    char err[256];
    Config c = gated(MLP_SWIGLU, 12);
    c.init_mlp = MATRIX_INIT_IDENTITY;
    assert_int_equal(Config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "--init-mlp identity: accepted with --mlp-hidden 8 (= d) only"));
    c.mlp_hidden = 8;
    c.mlp_ratio = 4; /* the hidden width decides */
    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gated_layer_matches_the_reference),
        cmocka_unit_test(test_gate_and_up_streams),
        cmocka_unit_test(test_hidden_width_precedes_the_ratio),
        cmocka_unit_test(test_identity_mlp_needs_width_d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
