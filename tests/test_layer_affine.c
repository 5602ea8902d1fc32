/* A trained layer's gains and biases (layer.h's LayerAffine, a checkpoint's through the weight
 * source): the layer step against a block written here loop by loop, with random gains and
 * biases on every norm, QK-norm and projection, for each norm kind and placement, plain and
 * gated MLPs, QK-norm per head and over the full width, and Gemma's 1 + w; each head's
 * attention matrix and X_1 agree to 1e-12 relative.  Without gains and biases (all NULL) the
 * step is the one drawn configurations run, bit for bit. */
#include "testing.h"

#include "attnscope/conditioning.h"
#include "attnscope/entropy.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/random.h"
#include "affine_reference.h"
#include "layer_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { AFFINE_VECTORS = 2 * LAYER_NORM_SITES + 9 };

/* Random gains and biases for c, each vector in its own allocation. */
typedef struct {
    LayerAffine a;
    double *all[AFFINE_VECTORS];
} Affine;

static void affine_slots(LayerAffine *a, double **slots[AFFINE_VECTORS])
{
    int n = 0;
    for (int s = 0; s < LAYER_NORM_SITES; s++) {
        slots[n++] = &a->norm[s].gain;
        slots[n++] = &a->norm[s].bias;
    }
    double **rest[] = {&a->query_norm_gain, &a->key_norm_gain, &a->query_bias,
                       &a->key_bias,        &a->value_bias,    &a->output_bias,
                       &a->mlp_in_bias,     &a->mlp_up_bias,   &a->mlp_out_bias};
    for (size_t i = 0; i < sizeof rest / sizeof *rest; i++)
        slots[n++] = rest[i];
}

/* Every gain w ~ (1 − o) + U(−0.5, 0.5) (so o + w is near 1, never exactly) and every bias
   ~ U(−0.5, 0.5), with enough entries for any of c's uses (max(d, N)). */
static void affine_draw(Affine *f, const Config *c, unsigned seed)
{
    memset(f, 0, sizeof *f);
    double **slots[AFFINE_VECTORS];
    affine_slots(&f->a, slots);
    size_t n = (size_t)(c->width > Config_mlp_hidden(c) ? c->width : Config_mlp_hidden(c));
    srand(seed);
    for (int i = 0; i < AFFINE_VECTORS; i++) {
        bool gain = (i < 2 * LAYER_NORM_SITES && i % 2 == 0) || i == 2 * LAYER_NORM_SITES ||
                    i == 2 * LAYER_NORM_SITES + 1;
        double *v = malloc(sizeof(double) * n);
        assert_non_null(v);
        for (size_t j = 0; j < n; j++)
            v[j] = (gain ? 1.0 - c->norm_gain_offset : 0.0) + (double)rand() / RAND_MAX - 0.5;
        *slots[i] = f->all[i] = v;
    }
}

static void affine_free(Affine *f)
{
    for (int i = 0; i < AFFINE_VECTORS; i++)
        free(f->all[i]);
}

static const LayerAffine *test_affine(void *context, const Config *c, int layer)
{
    (void)c;
    (void)layer;
    return context;
}

/* Layer 1 of c with random gains and biases: the step against the reference. */
static void check_against_reference(const Config *c, const char *label)
{
    Layer l;
    layer_new(&l, c);
    layer_draw_all(&l, c);
    Affine f;
    affine_draw(&f, c, 7);
    Layer_use_weights(&(WeightSource){.affine = test_affine, .name = "test", .context = &f.a});
    affine_reference_check(c, &l, &f.a, label);
    Layer_use_weights(NULL);
    affine_free(&f);
    layer_free(&l, c);
}

/* A small block: T = 6, d = 8, H = 2 heads over G = 1 key/value head, W^O Gaussian, a causal
   softmax, PyTorch's rows with ε, a plain skip with gains that are not 1. */
static Config small_block(void)
{
    Config c = Config_default();
    c.tokens = 6;
    c.width = 8;
    c.depth = 1;
    c.heads = 2;
    c.kv_heads = 1;
    c.output = OUTPUT_GAUSSIAN;
    c.attention = ATTENTION_SOFTMAX;
    c.mask = MASK_CAUSAL;
    c.skip = SKIP_PLAIN;
    c.skip_gain = 0.75;
    c.branch_gain = 1.25;
    c.ln_scale = LN_SCALE_SQRT_D;
    c.ln_eps = 1e-5;
    c.mlp_hidden = 12;
    return c;
}

static void test_every_norm_kind_and_place(void **state)
{
    (void)state;
    const LayerNorm kinds[] = {LAYERNORM_LN, LAYERNORM_RMS};
    const LnPlace places[] = {LN_PLACE_PRE, LN_PLACE_POST, LN_PLACE_PERI, LN_PLACE_OUTPUT};
    const Mlp mlps[] = {MLP_GELU, MLP_SWIGLU};
    for (int k = 0; k < 2; k++)
        for (int p = 0; p < 4; p++)
            for (int m = 0; m < 2; m++) {
                Config c = small_block();
                c.layernorm = kinds[k];
                c.ln_place = places[p];
                c.mlp = mlps[m];
                char label[96];
                snprintf(label, sizeof label, "-n %s --ln-place %s --mlp %s",
                         LAYERNORM_NAMES.names[c.layernorm], LN_PLACE_NAMES.names[c.ln_place],
                         MLP_NAMES.names[c.mlp]);
                check_against_reference(&c, label);
            }
}

/* QK-norm's gains, per head (d_h entries on every head, Qwen3's) and over the full width
   (OLMo 2's), with Qwen2's q, k and v biases beside them. */
static void test_qk_norm_gains(void **state)
{
    (void)state;
    const QkNorm norms[] = {QK_NORM_HEAD, QK_NORM_FULL};
    for (int i = 0; i < 2; i++) {
        Config c = small_block();
        c.layernorm = LAYERNORM_RMS;
        c.ln_place = LN_PLACE_PRE;
        c.mlp = MLP_SWIGLU;
        c.qk_norm = norms[i];
        check_against_reference(&c, QK_NORM_NAMES.names[c.qk_norm]);
    }
}

/* Gemma's RMSNorm, x·(1 + w), on the four norms of peri-LN and on QK-norm. */
static void test_gemma_gain_offset(void **state)
{
    (void)state;
    Config c = small_block();
    c.layernorm = LAYERNORM_RMS;
    c.ln_place = LN_PLACE_PERI;
    c.mlp = MLP_GEGLU;
    c.qk_norm = QK_NORM_HEAD;
    c.norm_gain_offset = 1;
    check_against_reference(&c, "--norm-gain-offset 1");
}

/* A source whose layers have no gains or biases (every pointer NULL) runs the drawn step bit
   for bit: nothing is multiplied by 1 or added 0. */
static void test_none_is_the_drawn_step(void **state)
{
    (void)state;
    Config c = small_block();
    c.layernorm = LAYERNORM_LN;
    c.ln_place = LN_PLACE_PERI;
    c.mlp = MLP_SWIGLU;
    c.qk_norm = QK_NORM_HEAD;
    size_t td = (size_t)c.tokens * c.width;
    double *drawn = zeros(td);
    for (int with_source = 0; with_source < 2; with_source++) {
        Layer l;
        layer_new(&l, &c);
        layer_draw_all(&l, &c);
        LayerAffine none = {0};
        WeightSource source = {.affine = test_affine, .name = "none", .context = &none};
        if (with_source)
            Layer_use_weights(&source);
        layer_step_once(&c, &l);
        Layer_use_weights(NULL);
        if (with_source)
            assert_memory_equal(l.b.x, drawn, sizeof(double) * td);
        else
            memcpy(drawn, l.b.x, sizeof(double) * td);
        layer_free(&l, &c);
    }
    free(drawn);
}

/* ---- the conditioning's Jacobian ------------------------------------------------------ */

/* A weight source for Conditioning_run: layer 1's weights as `drawn` holds them (d×d each),
   and `affine`. */
typedef struct {
    const Layer *drawn;
    const LayerAffine *affine;
} Fixed;

static int fixed_fill(void *context, const Config *c, int layer, unsigned parts,
                      const LayerWeights *w)
{
    const Fixed *f = context;
    size_t dd = sizeof(double) * (size_t)c->width * c->width;
    assert_int_equal(layer, 1);
    if (parts & LAYER_DRAW_ATTENTION) {
        memcpy(w->query, f->drawn->w.query, dd);
        memcpy(w->key, f->drawn->w.key, dd);
    }
    if (parts & LAYER_DRAW_VALUE)
        memcpy(w->value, f->drawn->w.value, dd);
    if (parts & LAYER_DRAW_OUTPUT)
        memcpy(w->output, f->drawn->w.output, dd);
    return 0;
}

static const LayerAffine *fixed_affine(void *context, const Config *c, int layer)
{
    (void)c;
    (void)layer;
    return ((const Fixed *)context)->affine;
}

static int capture_input(void *context, const double *input)
{
    const Config *c = ((void **)context)[0];
    memcpy(((void **)context)[1], input, sizeof(double) * (size_t)c->tokens * c->width);
    return 0;
}

/* f(y) of the sub-block (the step without a norm and skip: X_1 = F(y)) into out. */
static void sub_block(const Config *bare, Layer *l, const double *y, double *out)
{
    size_t td = (size_t)bare->tokens * bare->width;
    memcpy(l->b.x, y, sizeof(double) * td);
    layer_step_once(bare, l);
    memcpy(out, l->b.x, sizeof(double) * td);
}

/* The singular values (descending) of the central-difference Jacobian at y (T×d, changed and
   restored) of the step of `sub` (a config whose step is the sub-block alone) with l's weights. */
static void finite_difference_sv(const Config *sub, Layer *l, double *y, double *sv)
{
    int n = sub->tokens * sub->width;
    double *plus = zeros((size_t)n), *minus = zeros((size_t)n), *k = zeros((size_t)n * n);
    for (int j = 0; j < n; j++) {
        double h = 1e-5 * fmax(1.0, fabs(y[j])), kept = y[j];
        y[j] = kept + h;
        sub_block(sub, l, y, plus);
        y[j] = kept - h;
        sub_block(sub, l, y, minus);
        y[j] = kept;
        for (int i = 0; i < n; i++)
            k[i + (size_t)j * n] = (plus[i] - minus[i]) / (2 * h);
    }
    assert_int_equal(Linalg_singular_values(la, n, n, k, sv), 0);
    free(plus);
    free(minus);
    free(k);
}

/* The conditioning of c's layer 1 with `affine` on l's weights: its singular values of K
   against those of central differences of `sub`'s step at the input the step read. */
static void jacobian_against_differences(const Config *c, const Config *sub, Layer *l,
                                         const LayerAffine *affine)
{
    Fixed fixed = {l, affine};
    WeightSource source = {
        .fill = fixed_fill, .affine = fixed_affine, .name = "fixed", .context = &fixed};
    Layer_use_weights(&source);
    Conditioning cond;
    char err[256];
    assert_int_equal(Conditioning_run(c, &cond, err, sizeof err), 0);
    assert_true(cond.jacobian_exact && isfinite(cond.network.kappa_jacobian[1]));

    int n = c->tokens * c->width;
    double *y = zeros((size_t)n), *sv = zeros((size_t)n);
    void *capture[2] = {(void *)c, y};
    LayerObserver o = {.context = capture, .branch_input = capture_input};
    LayerStep s = {.config = c, .layer = 1, .weights = &l->w, .gap = GAP_OFF, .observer = &o};
    LayerOutcome outcome;
    double log_scale = 0;
    assert_int_equal(Layer_step(&s, &l->b, &outcome, &log_scale), 0);
    Layer b;
    layer_new(&b, sub);
    size_t dd = sizeof(double) * (size_t)c->width * c->width;
    memcpy(b.w.query, l->w.query, dd);
    memcpy(b.w.key, l->w.key, dd);
    memcpy(b.w.value, l->w.value, dd);
    memcpy(b.w.output, l->w.output, dd);
    finite_difference_sv(sub, &b, y, sv);
    for (int i = 0; i < n; i++)
        if (fabs(sv[i] - cond.layers_jacobian_sv[i]) > 1e-7 * sv[0])
            fail_msg("s_%d(K): conditioning %.17g, finite differences %.17g", i,
                     cond.layers_jacobian_sv[i], sv[i]);
    Conditioning_release(&cond);
    Layer_use_weights(NULL);
    free(y);
    free(sv);
    layer_free(&b, sub);
}

/* K of a pre-LN layer whose norm has a gain and bias and whose values and W^O have biases:
   the step's sub-block at the input the step read (after the gain and bias), which the biases
   shift but whose derivative they leave. */
static void test_jacobian_with_gains_and_biases(void **state)
{
    (void)state;
    Config c = small_block();
    c.tokens = 4;
    c.width = 6;
    c.heads = 2;
    c.kv_heads = 2;
    c.mask = MASK_FULL;
    c.skip = SKIP_NONE;
    c.branch_gain = 1;
    c.layernorm = LAYERNORM_LN;
    c.ln_place = LN_PLACE_PRE;
    Layer l;
    layer_new(&l, &c);
    layer_draw_all(&l, &c);
    Affine f;
    affine_draw(&f, &c, 11);
    LayerAffine some = {.value_bias = f.a.value_bias, .output_bias = f.a.output_bias};
    some.norm[NORM_ATTENTION_IN] = f.a.norm[NORM_ATTENTION_IN];
    Config bare = c;
    bare.layernorm = LAYERNORM_NONE;
    jacobian_against_differences(&c, &bare, &l, &some);

    /* A query bias changes the logits K's formula takes: null, and said. */
    some.query_bias = f.a.query_bias;
    Fixed fixed = {&l, &some};
    WeightSource source = {
        .fill = fixed_fill, .affine = fixed_affine, .name = "fixed", .context = &fixed};
    Layer_use_weights(&source);
    Conditioning cond;
    char err[256];
    assert_int_equal(Conditioning_run(&c, &cond, err, sizeof err), 0);
    assert_true(isnan(cond.network.kappa_jacobian[1]));
    bool said = false;
    for (int i = 0; i < cond.warnings.count; i++)
        said = said || strstr(cond.warnings.text[i], "query or key bias, which moves the logits");
    assert_true(said);
    Conditioning_release(&cond);
    Layer_use_weights(NULL);
    affine_free(&f);
    layer_free(&l, &c);
}

/* K through trained QK-norm gains and an output-LN's gain, both read as 1 + w (Gemma's offset):
   the step itself is the sub-block (no skip, no input norm), so its central differences are K. */
static void test_jacobian_with_qk_and_branch_gains(void **state)
{
    (void)state;
    Config c = small_block();
    c.tokens = 4;
    c.width = 8;
    c.heads = 2;
    c.kv_heads = 2;
    c.mask = MASK_FULL;
    c.skip = SKIP_NONE;
    c.branch_gain = 1;
    c.layernorm = LAYERNORM_RMS;
    c.ln_place = LN_PLACE_OUTPUT;
    c.ln_eps = 0.25;
    c.qk_norm = QK_NORM_HEAD;
    c.norm_gain_offset = 1;
    Layer l;
    layer_new(&l, &c);
    layer_draw_all(&l, &c);
    Affine f;
    affine_draw(&f, &c, 5);
    LayerAffine some = {.query_norm_gain = f.a.query_norm_gain, .key_norm_gain = f.a.key_norm_gain};
    some.norm[NORM_ATTENTION_OUT].gain = f.a.norm[NORM_ATTENTION_OUT].gain;
    jacobian_against_differences(&c, &c, &l, &some);
    affine_free(&f);
    layer_free(&l, &c);
}

/* Zhai's entropy bound is for bilinear logits x_i^T M x_j: a query or key bias voids it (with
   the reason), a norm's gain or a value bias does not (the bound reads the input as the step
   read it). */
static void test_entropy_bound_with_biases(void **state)
{
    (void)state;
    Config c = small_block();
    c.layernorm = LAYERNORM_RMS;
    c.ln_place = LN_PLACE_PRE;
    Affine f;
    affine_draw(&f, &c, 3);
    LayerAffine some = {.value_bias = f.a.value_bias};
    some.norm[NORM_ATTENTION_IN] = f.a.norm[NORM_ATTENTION_IN];
    WeightSource source = {.affine = test_affine, .name = "some", .context = &some};
    Layer_use_weights(&source);
    assert_null(Entropy_zhai_void(&c, 1));
    some.key_bias = f.a.key_bias;
    const char *why = Entropy_zhai_void(&c, 1);
    Layer_use_weights(NULL);
    assert_non_null(why);
    assert_non_null(strstr(why, "query or key biases"));
    affine_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_norm_kind_and_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_qk_norm_gains, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gemma_gain_offset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_none_is_the_drawn_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jacobian_with_gains_and_biases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jacobian_with_qk_and_branch_gains, setup, teardown),
        cmocka_unit_test(test_entropy_bound_with_biases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
