/* The Jacobian of the sub-block where the layer does more than A(X)·X·W_VO (docs/model.md
 * §8.1): QK-norm (per head, full width, before and after RoPE), RoPE (rotate_half and pairs,
 * partial), the logit soft-cap and the output LN (RMS, LN, unit rows), alone and combined, with
 * one and several heads and grouped keys/values, over several seeds.  The reference is the
 * layer step itself (Layer_step, skip and MLP off so that its output is the branch's): central
 * finite differences of it against SaWork_jvp, the VJP against the JVP by the adjoint identity,
 * B + E = K, B against its definition where no LN follows f, and a conditioning run's singular
 * values of K against those of the finite-difference Jacobian. */
#include "testing.h"

#include "attnscope/conditioning.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/random.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

enum { T = 6, D = 16, N = T * D, HEADS_MAX = 4 };

/* Layer 1 of c at its input X0, its weights and attention as the step computed them, and the
   SaWork prepared as the conditioning run prepares it. */
typedef struct {
    Config c;
    RandomStream *rs;
    Linalg *la;
    LayerBuffers b;
    LayerWeights w;
    double query[D * D], key[D * D], value[D * D], output[D * D], sink[HEADS_MAX];
    double x0[N], scratch[4 * N + D * D];
    double soft[HEADS_MAX * T * T], applied[HEADS_MAX * T * T];
    double m[HEADS_MAX * D * D], wvo[HEADS_MAX * D * D];
    SaBlock blocks[HEADS_MAX];
    bool mean_centred[HEADS_MAX];
    SaWork *sa;
} Fixture;

static void seen_built(void *context, int head, const double *logits, const double *attention)
{
    (void)logits;
    Fixture *f = context;
    memcpy(f->soft + (size_t)head * T * T, attention, sizeof(double) * T * T);
}

static int seen_applied(void *context, int head, const double *attention, GapOutcome outcome,
                        const Warnings *warnings)
{
    (void)warnings;
    Fixture *f = context;
    memcpy(f->applied + (size_t)head * T * T, attention, sizeof(double) * T * T);
    /* gap_center subtracts 1/n on rows that sum to 1, else the row's mean over its keys */
    bool stochastic = f->c.attention == ATTENTION_SOFTMAX && f->c.sink == -INFINITY;
    f->mean_centred[head] = outcome.applied == GAP_CENTER && !stochastic;
    return 0;
}

/* y = the layer step's output at x: with no skip and no MLP, the branch's (LN(F) under
   output-LN). */
static void forward(Fixture *f, const double *x, double *y, const LayerObserver *observer)
{
    memcpy(f->b.x, x, sizeof(double) * N);
    LayerStep step = {
        .config = &f->c, .layer = 1, .weights = &f->w, .gap = f->c.gap, .observer = observer};
    LayerOutcome outcome;
    double log_scale = 0;
    assert_int_equal(Layer_step(&step, &f->b, &outcome, &log_scale), 0);
    assert_int_equal(outcome, LAYER_DONE);
    memcpy(y, f->b.x, sizeof(double) * N);
}

/* M_h = W^Q_h W^K_gᵀ and W_VO,h = W^V_g W^O_h (W^O's rows of head h; the identity's without an
   output projection) with loops, g head h's key/value head. */
static void head_matrices(Fixture *f)
{
    const Config *c = &f->c;
    int dh = Config_head_width(c);
    for (int h = 0; h < c->heads; h++) {
        int g = Config_kv_head_of(c, h);
        double *m = f->m + (size_t)h * D * D, *vo = f->wvo + (size_t)h * D * D;
        for (int p = 0; p < D; p++)
            for (int q = 0; q < D; q++) {
                double qk = 0, v = 0;
                for (int t = 0; t < dh; t++) {
                    qk += f->query[p + (h * dh + t) * D] * f->key[q + (g * dh + t) * D];
                    double o = c->output == OUTPUT_IDENTITY ? (h * dh + t == q)
                                                            : f->output[(h * dh + t) + q * D];
                    v += f->value[p + (g * dh + t) * D] * o;
                }
                m[p + q * D] = qk;
                vo[p + q * D] = v;
            }
    }
}

static void fixture(Fixture *f, const Config *c)
{
    memset(f, 0, sizeof *f);
    f->c = *c;
    f->rs = RandomStream_new();
    f->la = Linalg_new();
    f->sa = SaWork_new();
    assert_true(f->rs && f->la && f->sa);
    assert_true(Init_scratch_doubles(c) <= sizeof f->scratch / sizeof(double));
    LayerBuffer plan[LAYER_BUFFERS];
    Layer_buffers(c, &f->b, true, plan);
    for (int i = 0; i < LAYER_BUFFERS; i++)
        if (plan[i].doubles)
            assert_non_null(*plan[i].buffer = malloc(sizeof(double) * plan[i].doubles));
    f->b.la = f->la;
    f->w = (LayerWeights){
        .query = f->query, .key = f->key, .value = f->value, .output = f->output, .sink = f->sink};
    assert_int_equal(Layer_draw(f->rs, f->la, c, c->seed, 1,
                                LAYER_DRAW_ATTENTION | LAYER_DRAW_VALUE | LAYER_DRAW_OUTPUT, &f->w,
                                f->scratch),
                     0);
    assert_int_equal(Layer_input(f->rs, f->la, c, c->seed, f->x0, f->scratch), 0);
    double y[N];
    LayerObserver seen = {.context = f, .built = seen_built, .applied = seen_applied};
    forward(f, f->x0, y, &seen);
    head_matrices(f);
    for (int h = 0; h < c->heads; h++)
        f->blocks[h] = (SaBlock){.T = T,
                                 .d = D,
                                 .x = f->x0,
                                 .m = f->m + (size_t)h * D * D,
                                 .scale = Init_logit_scale(c),
                                 .wvo = f->wvo + (size_t)h * D * D,
                                 .softmax = f->soft + (size_t)h * T * T,
                                 .applied = f->applied + (size_t)h * T * T,
                                 .mean_centred = f->mean_centred[h]};
    assert_int_equal(SaWork_prepare_heads(f->sa, f->blocks, c->heads), 0);
    SaShape shape = {.c = &f->c, .layer = 1, .query = f->query, .key = f->key};
    assert_int_equal(SaWork_shape(f->sa, &shape), 0);
}

static void fixture_free(Fixture *f)
{
    LayerBuffer plan[LAYER_BUFFERS];
    Layer_buffers(&f->c, &f->b, true, plan);
    for (int i = 0; i < LAYER_BUFFERS; i++)
        free(*plan[i].buffer);
    SaWork_free(f->sa);
    Linalg_free(f->la);
    RandomStream_free(f->rs);
}

static double norm2(const double *v, int n)
{
    return cblas_dnrm2(n, v, 1);
}

/* Central differences of the step along v at steps h and 2h into out: the truncation error of
   D(h) is c·h² + O(h⁴), D(2h)'s 4c·h², so ‖D(h) − D(2h)‖ ≥ 3‖truncation of D(h)‖ to leading
   order; rounding adds about ε·(the terms' size)/h per entry, each output entry a sum of at
   most H·T·D·D products of the sizes of f.  Returns that bound on ‖D(h) − Jv‖. */
static double central_difference(Fixture *f, const double *v, double *out)
{
    double h = cbrt(DBL_EPSILON), plus[N], minus[N], x[N], coarse[N], y[N];
    for (int step = 2; step >= 1; step--) {
        for (int k = 0; k < N; k++)
            x[k] = f->x0[k] + step * h * v[k];
        forward(f, x, plus, NULL);
        for (int k = 0; k < N; k++)
            x[k] = f->x0[k] - step * h * v[k];
        forward(f, x, minus, NULL);
        double *into = step == 2 ? coarse : out;
        for (int k = 0; k < N; k++)
            into[k] = (plus[k] - minus[k]) / (2 * step * h);
    }
    forward(f, f->x0, y, NULL);
    double diff[N];
    for (int k = 0; k < N; k++)
        diff[k] = out[k] - coarse[k];
    return norm2(diff, N) + 2.0 * f->c.heads * T * D * D * DBL_EPSILON * norm2(y, N) / h;
}

/* n normals from the stream (seed, role_layer); random_vector: N of them. */
static void random_numbers(uint64_t seed, int role_layer, double *v, size_t n)
{
    RandomStream *rs = RandomStream_new();
    assert_non_null(rs);
    RandomStream_gaussian(rs, seed, role_layer, ROLE_MARKOV, 1.0, v, n);
    RandomStream_free(rs);
}

static void random_vector(uint64_t seed, int role_layer, double *v)
{
    random_numbers(seed, role_layer, v, N);
}

/* The features of a variant, on a causal softmax block of T×D with no skip, MLP or gap. */
typedef struct {
    const char *name;
    QkNorm qk_norm;
    QkNormPlace place;
    Rope rope;
    double fraction, softcap;
    LayerNorm output_ln;
    LnScale scale;
    Attention kind; /* softmax unless set */
    Gap gap;        /* off unless set */
    bool sink;      /* a sink logit 0.5 on every head */
    RopeScaling scaling;
    double local_theta; /* --rope-local-base-freq: 0 none */
} Variant;

/* Unset fields: no QK-norm (its place before RoPE), no RoPE, no cap, no output LN, softmax,
   gap off, no sink; rope_fraction 0 reads as 1. */
#define RMS .output_ln = LAYERNORM_RMS, .scale = LN_SCALE_SQRT_D
#define LN .output_ln = LAYERNORM_LN, .scale = LN_SCALE_SQRT_D
static const Variant VARIANTS[] = {
    {"soft-cap", .softcap = 1.0},
    {"rope half", .rope = ROPE_HALF},
    {"rope half partial", .rope = ROPE_HALF, .fraction = 0.5},
    {"rope pairs partial", .rope = ROPE_PAIRS, .fraction = 0.5},
    {"qk-norm head", .qk_norm = QK_NORM_HEAD},
    {"qk-norm full", .qk_norm = QK_NORM_FULL},
    {"qk-norm head after rope", .qk_norm = QK_NORM_HEAD, .place = QK_NORM_AFTER_ROPE,
     .rope = ROPE_HALF, .fraction = 0.5},
    {"qk-norm full, rope, output RMS (OLMo 2)", .qk_norm = QK_NORM_FULL, .rope = ROPE_HALF, RMS},
    {"output RMS", RMS},
    {"output LN", LN},
    {"output LN unit rows", .output_ln = LAYERNORM_LN, .scale = LN_SCALE_UNIT},
    {"all (Gemma-like)", .qk_norm = QK_NORM_HEAD, .rope = ROPE_HALF, .fraction = 0.5,
     .softcap = 2.0, RMS},
    {"all, pairs, after rope, LN", .qk_norm = QK_NORM_HEAD, .place = QK_NORM_AFTER_ROPE,
     .rope = ROPE_PAIRS, .softcap = 1.5, LN},
    {"relu, rope", .rope = ROPE_HALF, .kind = ATTENTION_RELU},
    {"sigmoid, qk-norm, cap", .qk_norm = QK_NORM_HEAD, .softcap = 2.0, .kind = ATTENTION_SIGMOID},
    {"linear", .kind = ATTENTION_LINEAR},
    {"sigmoid, gap center (moving mean)", .kind = ATTENTION_SIGMOID, .gap = GAP_CENTER},
    {"sinks, gap center (moving mean), rope, output RMS", .rope = ROPE_HALF, RMS, .gap = GAP_CENTER,
     .sink = true},
    {"sinks, gap off", .sink = true},
    {"gap uniform", .gap = GAP_UNIFORM},
    {"rope half, llama3 scaling", .rope = ROPE_HALF, .scaling = ROPE_SCALING_LLAMA3},
    /* The one layer is local (--window-layers all): it turns at θ 3, unscaled, not at the
       global layers' scaled θ 10. */
    {"rope half, a local theta (Gemma 3)", .rope = ROPE_HALF, .scaling = ROPE_SCALING_LLAMA3,
     .local_theta = 3.0},
};
#undef RMS
#undef LN
enum { VARIANT_COUNT = sizeof VARIANTS / sizeof VARIANTS[0] };

/* Heads and key/value heads: one head; several; grouped (G < H). */
static const int HEAD_SHAPES[][2] = {{1, 1}, {2, 2}, {4, 4}, {2, 1}, {4, 2}};
enum { HEAD_SHAPE_COUNT = sizeof HEAD_SHAPES / sizeof HEAD_SHAPES[0] };

static Config variant_config(const Variant *v, int heads, int kv_heads, uint64_t seed)
{
    Config c = Config_default();
    c.tokens = T;
    c.width = D;
    c.depth = 1;
    c.heads = heads;
    c.kv_heads = kv_heads;
    c.head = 1;
    c.attention = v->kind;
    c.mask = MASK_CAUSAL;
    c.gap = v->gap;
    c.sink = v->sink ? 0.5 : -INFINITY;
    c.sink_std = 0;
    c.skip = SKIP_NONE;
    c.mlp = MLP_NONE;
    c.output = OUTPUT_GAUSSIAN;
    c.sigma_qk = 2.0; /* logits of a few units: the softmax, the cap and the norms all bend */
    c.seed = seed;
    c.qk_norm = v->qk_norm;
    c.qk_norm_place = v->place;
    c.rope = v->rope;
    c.rope_fraction = v->fraction > 0 ? v->fraction : 1.0;
    c.rope_theta = 10.0; /* angles that turn visibly over T positions */
    /* Llama 3.1's split at a context of 64: wavelengths 2π·10^(2k/d_r) below 16 kept, above 64
       divided by 8, the ones between blended. */
    c.rope_scaling = v->scaling;
    c.rope_original_context = 64;
    c.rope_local_base_freq = v->local_theta;
    c.logit_softcap = v->softcap;
    c.layernorm = v->output_ln;
    c.ln_place = v->output_ln != LAYERNORM_NONE ? LN_PLACE_OUTPUT : LN_PLACE_POST;
    c.ln_scale = v->scale;
    c.ln_eps = 1e-5;
    return c;
}

/* ⟨u, K v⟩ = ⟨Kᵀ u, v⟩: both sums of products of K's entries in other orders, apart by at most
   about N·ε·‖u‖‖K‖‖v‖ each. */
static void assert_adjoint(SaWork *w, uint64_t seed, const char *what)
{
    double u[N], v[N], kv[N], ktu[N];
    random_vector(seed, 1, u);
    random_vector(seed, 2, v);
    SaWork_jvp(w, v, kv);
    SaWork_vjp(w, u, ktu);
    double left = cblas_ddot(N, u, 1, kv, 1), right = cblas_ddot(N, ktu, 1, v, 1);
    double k_norm = fmax(norm2(kv, N) / norm2(v, N), norm2(ktu, N) / norm2(u, N));
    double bound = 4.0 * N * N * DBL_EPSILON * norm2(u, N) * k_norm * norm2(v, N);
    if (fabs(left - right) > bound)
        fail_msg("%s: <u, Kv> = %.17g, <K^T u, v> = %.17g, bound %.3g", what, left, right, bound);
}

/* B·v = Σ_h A_h v W_VO,h by loops (the applied A_h, row-major). */
static void dominant_by_loops(const Fixture *f, const double *v, double *out)
{
    memset(out, 0, sizeof(double) * N);
    for (int h = 0; h < f->c.heads; h++)
        for (int i = 0; i < T; i++)
            for (int q = 0; q < D; q++) {
                double sum = 0;
                for (int j = 0; j < T; j++)
                    for (int p = 0; p < D; p++)
                        sum += f->applied[(size_t)h * T * T + i * T + j] * v[j + p * T] *
                               f->wvo[(size_t)h * D * D + p + q * D];
                out[i + q * T] += sum;
            }
}

/* B + E = K; B as defined where nothing follows f (RoPE, QK-norm and the cap move E only). */
static void assert_split(Fixture *f, uint64_t seed, const char *what)
{
    double v[N], k[N], b[N], e[N], want[N];
    random_vector(seed, 3, v);
    SaWork_jvp(f->sa, v, k);
    SaWork_dominant_only(f->sa, true);
    SaWork_jvp(f->sa, v, b);
    SaWork_perturbation_only(f->sa, true);
    SaWork_jvp(f->sa, v, e);
    SaWork_perturbation_only(f->sa, false);
    double scale = norm2(b, N) + norm2(e, N);
    for (int i = 0; i < N; i++)
        if (fabs(b[i] + e[i] - k[i]) > 16 * DBL_EPSILON * scale)
            fail_msg("%s: (B + E)v != Kv at %d", what, i);
    if (f->c.layernorm != LAYERNORM_NONE)
        return;
    dominant_by_loops(f, v, want);
    for (int i = 0; i < N; i++)
        if (fabs(b[i] - want[i]) > 4.0 * T * D * DBL_EPSILON * norm2(want, N))
            fail_msg("%s: Bv = %.17g at %d, by its definition %.17g", what, b[i], i, want[i]);
}

static void test_every_feature_against_the_layer_step(void **state)
{
    (void)state;
    for (int vi = 0; vi < VARIANT_COUNT; vi++)
        for (int hs = 0; hs < HEAD_SHAPE_COUNT; hs++)
            for (uint64_t seed = 1; seed <= 3; seed++) {
                Config c = variant_config(&VARIANTS[vi], HEAD_SHAPES[hs][0], HEAD_SHAPES[hs][1],
                                          seed + 10 * (uint64_t)vi);
                Fixture *f = malloc(sizeof *f);
                assert_non_null(f);
                fixture(f, &c);
                char what[160];
                snprintf(what, sizeof what, "%s, H = %d, G = %d, seed %llu", VARIANTS[vi].name,
                         c.heads, Config_kv_heads(&c), (unsigned long long)c.seed);
                for (int trial = 0; trial < 2; trial++) {
                    double v[N], jv[N], fd[N], diff[N];
                    random_vector(100 + seed, trial + 5, v);
                    SaWork_jvp(f->sa, v, jv);
                    double bound = central_difference(f, v, fd);
                    for (int k = 0; k < N; k++)
                        diff[k] = jv[k] - fd[k];
                    if (norm2(diff, N) > bound)
                        fail_msg("%s: |Kv - FD| = %.3g > bound %.3g (|Kv| = %.3g)", what,
                                 norm2(diff, N), bound, norm2(jv, N));
                    /* The bound is tight enough to mean something. */
                    if (!(bound < 1e-5 * norm2(jv, N)))
                        fail_msg("%s: bound %.3g, |Kv| %.3g", what, bound, norm2(jv, N));
                }
                assert_adjoint(f->sa, 200 + seed, what);
                assert_split(f, 300 + seed, what);
                fixture_free(f);
                free(f);
            }
}

/* Gains multiply where they belong: a gain vector changes K, and the VJP stays its transpose
   (the JVP applies γ after the norm's Jacobian, the VJP before its transpose). */
static void test_gains_keep_the_adjoint(void **state)
{
    (void)state;
    Config c = variant_config(&VARIANTS[11], 4, 2, 7);
    Fixture *f = malloc(sizeof *f);
    assert_non_null(f);
    fixture(f, &c);
    double query_gain[D], key_gain[D], branch_gain[D], v[N], unit[N], gained[N];
    random_numbers(400, 1, query_gain, D);
    random_numbers(400, 2, key_gain, D);
    random_numbers(400, 3, branch_gain, D);
    random_vector(400, 4, v);
    SaWork_jvp(f->sa, v, unit);
    SaShape shape = {.c = &f->c,
                     .layer = 1,
                     .query = f->query,
                     .key = f->key,
                     .query_gain = query_gain,
                     .key_gain = key_gain,
                     .branch_gain = branch_gain};
    assert_int_equal(SaWork_shape(f->sa, &shape), 0);
    SaWork_jvp(f->sa, v, gained);
    double diff[N];
    for (int k = 0; k < N; k++)
        diff[k] = gained[k] - unit[k];
    assert_true(norm2(diff, N) > 0.1 * norm2(unit, N));
    assert_adjoint(f->sa, 401, "gains");
    fixture_free(f);
    free(f);
}

/* SaWork_product_error with every shape piece: ⟨u, fl(K v)⟩ and ⟨fl(Kᵀ u), v⟩ are each within
   η‖u‖‖v‖ of ⟨u, K v⟩ (plus the dot products' N·ε), an exact invariant the products must keep
   under the bound, on every variant at logits of a few units and saturated (σ_QK = 30: logits
   in the hundreds), gains on. */
static void test_product_error_keeps_the_adjoint(void **state)
{
    (void)state;
    double gain[3][D];
    for (int g = 0; g < 3; g++)
        random_numbers(500, g + 1, gain[g], D);
    for (int vi = 0; vi < VARIANT_COUNT; vi++)
        for (int saturated = 0; saturated < 2; saturated++) {
            Config c = variant_config(&VARIANTS[vi], 4, 2, 20 + (uint64_t)vi);
            if (saturated)
                c.sigma_qk = 30.0;
            Fixture *f = malloc(sizeof *f);
            assert_non_null(f);
            fixture(f, &c);
            SaShape shape = {.c = &f->c,
                             .layer = 1,
                             .query = f->query,
                             .key = f->key,
                             .query_gain = gain[0],
                             .key_gain = gain[1],
                             .branch_gain = gain[2]};
            assert_int_equal(SaWork_shape(f->sa, &shape), 0);
            double u[N], v[N], kv[N], ktu[N], eta = SaWork_product_error(f->sa);
            random_vector(600 + (uint64_t)vi, 1, u);
            random_vector(600 + (uint64_t)vi, 2, v);
            SaWork_jvp(f->sa, v, kv);
            SaWork_vjp(f->sa, u, ktu);
            double left = cblas_ddot(N, u, 1, kv, 1), right = cblas_ddot(N, ktu, 1, v, 1);
            double dots =
                N * DBL_EPSILON * (norm2(u, N) * norm2(kv, N) + norm2(ktu, N) * norm2(v, N));
            if (!(isfinite(eta) &&
                  fabs(left - right) <= 2.0 * eta * norm2(u, N) * norm2(v, N) + dots))
                fail_msg("%s%s: <u, Kv> - <K^T u, v> = %.3g, eta %.3g", VARIANTS[vi].name,
                         saturated ? ", saturated" : "", left - right, eta);
            fixture_free(f);
            free(f);
        }
}

/* Full QK-norm's key gain has G·d_h entries, fewer than the queries' H·d_h under grouped keys:
   η reads that many.  Entries past them (here huge) must not move it. */
static void test_product_error_reads_the_key_gain_alone(void **state)
{
    (void)state;
    Config c = variant_config(&VARIANTS[5], 4, 2, 31); /* qk-norm full, 2 key heads of 4 */
    assert_int_equal(c.qk_norm, QK_NORM_FULL);
    int key_width = Config_kv_heads(&c) * Config_head_width(&c);
    assert_true(key_width < D);
    Fixture *f = malloc(sizeof *f);
    assert_non_null(f);
    fixture(f, &c);
    double query_gain[D], key_gain[D], eta[2];
    random_numbers(700, 1, query_gain, D);
    random_numbers(700, 2, key_gain, D);
    for (int past = 0; past < 2; past++) {
        for (int j = key_width; j < D; j++)
            key_gain[j] = past ? 1e6 : 0.0;
        SaShape shape = {.c = &f->c,
                         .layer = 1,
                         .query = f->query,
                         .key = f->key,
                         .query_gain = query_gain,
                         .key_gain = key_gain};
        assert_int_equal(SaWork_shape(f->sa, &shape), 0);
        eta[past] = SaWork_product_error(f->sa);
    }
    if (!(eta[0] == eta[1]))
        fail_msg("eta %.6g with zeros past the key gain, %.6g with 1e6 there", eta[0], eta[1]);
    fixture_free(f);
    free(f);
}

/* Singular values of the n×n matrix a (kept), descending. */
static void singular_values(int n, const double *a, double *s)
{
    double *copy = malloc(sizeof(double) * (size_t)n * n);
    Linalg *la = Linalg_new();
    assert_true(copy && la);
    memcpy(copy, a, sizeof(double) * (size_t)n * n);
    assert_int_equal(Linalg_singular_values(la, n, n, copy, s), 0);
    Linalg_free(la);
    free(copy);
}

/* The conditioning run's K at layer 1 is the step's: its singular values (exact path) against
   those of the finite-difference Jacobian, which Weyl's inequality puts within ‖K − K_FD‖₂ ≤
   the root of the sum of the columns' squared bounds. */
static void test_run_agrees_with_the_step(void **state)
{
    (void)state;
    const int variants[] = {1,  7,  11,
                            12, 13, 17}; /* RoPE; OLMo 2; both "all"; relu; sinks centred */
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        Config c = variant_config(&VARIANTS[variants[i]], 4, 2, 5 + i);
        Fixture *f = malloc(sizeof *f);
        double *k = malloc(sizeof(double) * N * N), s_fd[N];
        assert_true(f && k);
        fixture(f, &c);
        double bound2 = 0;
        for (int j = 0; j < N; j++) {
            double unit[N] = {0};
            unit[j] = 1.0;
            double b = central_difference(f, unit, k + (size_t)j * N);
            bound2 += b * b;
        }
        singular_values(N, k, s_fd);
        Conditioning cond;
        char err[256];
        assert_int_equal(Conditioning_run(&c, &cond, err, sizeof err), 0);
        assert_true(cond.jacobian_exact);
        assert_non_null(cond.jacobian_singular_values);
        for (int j = 0; j < N; j++)
            if (fabs(cond.jacobian_singular_values[j] - s_fd[j]) > sqrt(bound2))
                fail_msg("%s: s_%d(K) = %.17g, finite differences %.17g (bound %.3g)",
                         VARIANTS[variants[i]].name, j, cond.jacobian_singular_values[j], s_fd[j],
                         sqrt(bound2));
        assert_true(isfinite(cond.network.jacobian_norm[1]));
        Conditioning_release(&cond);
        fixture_free(f);
        free(f);
        free(k);
    }
}

/* ‖K‖_F from the full K (SaWork_jacobian). */
static double jacobian_frobenius(SaWork *w)
{
    double *k = malloc(sizeof(double) * N * N);
    assert_non_null(k);
    assert_int_equal(SaWork_jacobian(w, k), 0);
    double norm = norm2(k, N * N);
    free(k);
    return norm;
}

/* Two exact invariants that make K singular, each checked to rounding:
   - QK-norm and a branch RMS norm with ε = 0 make the sub-block scale-invariant (the logits
     read normalised rows, N(αF) = N(F)): K·vec X = 0.
   - Grouped K/V under the causal mask: token 1 attends to itself alone, y_1 = x_1 W_VO with
     W_VO = Σ_h W_VO,h of rank ≤ G·d_h < d, so Kᵀ(e_1 ⊗ z) = 0 for W_VO z = 0. */
static void test_singular_by_structure(void **state)
{
    (void)state;
    for (int grouped = 0; grouped < 2; grouped++) {
        Config c = variant_config(&VARIANTS[grouped ? 6 : 7], 4, grouped ? 1 : 4, 21);
        c.ln_eps = grouped ? c.ln_eps : 0.0;
        Fixture *f = malloc(sizeof *f);
        assert_non_null(f);
        fixture(f, &c);
        double k_norm = jacobian_frobenius(f->sa), u[N] = {0}, out[N], v[N], kv[N];
        const double *direction = f->x0;
        if (grouped) {
            double wvo[D * D] = {0}, s[D], vt[D * D], superb[D];
            for (int h = 0; h < c.heads; h++)
                for (int i = 0; i < D * D; i++)
                    wvo[i] += f->wvo[(size_t)h * D * D + i];
            assert_int_equal(
                LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'A', D, D, wvo, D, s, NULL, 1, vt, D, superb),
                0);
            assert_true(s[D - 1] < D * DBL_EPSILON * s[0]);
            for (int q = 0; q < D; q++) /* z: the last right singular vector, row D−1 of Vᵀ */
                u[q * T] = vt[(D - 1) + q * D];
            SaWork_vjp(f->sa, u, out);
            direction = u;
        } else {
            SaWork_jvp(f->sa, f->x0, out);
        }
        double bound = 64.0 * N * DBL_EPSILON * k_norm * norm2(direction, N);
        if (norm2(out, N) > bound)
            fail_msg("%s: |K-product| = %.3g > %.3g", grouped ? "grouped, causal" : "scale",
                     norm2(out, N), bound);
        random_vector(500, 1, v); /* not a K that is 0 */
        SaWork_jvp(f->sa, v, kv);
        assert_true(norm2(kv, N) > 1e6 * bound / norm2(direction, N) * norm2(v, N));
        fixture_free(f);
        free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_feature_against_the_layer_step),
        cmocka_unit_test(test_gains_keep_the_adjoint),
        cmocka_unit_test(test_product_error_keeps_the_adjoint),
        cmocka_unit_test(test_product_error_reads_the_key_gain_alone),
        cmocka_unit_test(test_run_agrees_with_the_step),
        cmocka_unit_test(test_singular_by_structure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
