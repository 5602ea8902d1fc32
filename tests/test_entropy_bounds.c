/* The bounds beside the attention entropies (docs/model.md §3, entropy.h, theory.h):
 *   - Zhai et al.'s row bound is the entropy of its extreme row, a softmax computed here of the
 *     logit vector that puts all of its norm σ on one key, and no row of norm <= σ is below it;
 *   - a run's per-layer bound is the one a reference forward gives from σ = ‖M_h‖₂·‖X'‖₂²,
 *     both norms by power iteration in this file's own loops (not LAPACK), over the mask's own
 *     rows, where the run's norms are exact and where they are proved upper bounds;
 *   - the bound never lies above the measured least row entropy, in every layer of both
 *     networks, over σ_qk, masks, LayerNorm places and seeds; and it is null, with a reason,
 *     under QK-norm, at RoPE layers and for kinds without bilinear logits;
 *   - Giorlandino & Goldt's β_c reproduces their notebook's start (q = 1, p = 0.2: 1.581), a
 *     run's per-layer β_c is that of its input's q and p computed pair by pair here, and a
 *     network clearly on either side is said to be there, its entropies agreeing.
 */
#include "testing.h"

#include "layer_fixture.h"
#include "mask_reference.h"

#include "attnscope/attention.h"
#include "attnscope/entropy.h"
#include "attnscope/measure.h"
#include "attnscope/model.h"
#include "attnscope/qk.h"
#include "attnscope/theory.h"

#include <float.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The entropy of softmax(z) for n logits, z written out: one key at top, n − 1 at 0. */
static double softmax_entropy_two_levels(int n, double top)
{
    /* Shifted by the top logit: p_top = 1/Z, p_other = e^(−top)/Z. */
    double other = exp(-top), z = 1 + (n - 1) * other;
    double p_top = 1 / z, p_other = other / z;
    double h = -p_top * log(p_top);
    if (p_other > 0)
        h -= (n - 1) * p_other * log(p_other);
    return h;
}

/* The extreme row of norm σ: its centred logits σ·(e_1 − 1/n)/‖e_1 − 1/n‖, whose top stands
   σ/√((n − 1)/n) above the others. */
static double extreme_row_entropy(int n, double sigma)
{
    return n == 1 ? 0.0 : softmax_entropy_two_levels(n, sigma / sqrt((n - 1.0) / n));
}

static void test_row_bound_is_its_extreme_row(void **state)
{
    (void)state;
    const int ns[] = {1, 2, 3, 16, 257, 4096};
    const double sigmas[] = {0, 1e-3, 0.5, 1, 3, 10, 50, 800};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (size_t k = 0; k < sizeof sigmas / sizeof sigmas[0]; k++)
            assert_close(Entropy_zhai_row_bound(ns[i], sigmas[k]),
                         extreme_row_entropy(ns[i], sigmas[k]), 1e-12);
    assert_close(Entropy_zhai_row_bound(64, 0), log(64.0), 1e-14); /* σ = 0: uniform */
}

/* Random logit vectors scaled to norm σ (and the extreme row's neighbours) never fall below
   the bound: the theorem's minimiser is the extreme row. */
static void test_no_row_of_norm_sigma_is_below(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252u;
    for (int trial = 0; trial < 4000; trial++) {
        int n = 2 + trial % 9;
        double sigma = 0.25 * (1 + trial % 17), z[10], norm = 0;
        for (int j = 0; j < n; j++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            z[j] = (double)(x >> 11) / 9007199254740992.0 - 0.5;
            if (trial % 3 == 0) /* near the extreme row: one key far above the others */
                z[j] = j == 0 ? 1.0 : 0.01 * z[j];
            norm += z[j] * z[j];
        }
        double top = -INFINITY, sum = 0, h = 0;
        for (int j = 0; j < n; j++)
            top = fmax(top, z[j] *= sigma / sqrt(norm));
        for (int j = 0; j < n; j++)
            sum += exp(z[j] - top);
        for (int j = 0; j < n; j++) {
            double p = exp(z[j] - top) / sum;
            h -= p > 0 ? p * log(p) : 0;
        }
        assert_true(h >= Entropy_zhai_row_bound(n, sigma) - 1e-12);
    }
}

/* ---- the reference forward ------------------------------------------------------------ */

/* The top eigenvalue of the symmetric PSD n×n matrix g by power iteration, in long double. */
static double power_top(int n, const double *g)
{
    long double *v = malloc(sizeof(long double) * n), *next = malloc(sizeof(long double) * n);
    assert_non_null(v);
    assert_non_null(next);
    for (int i = 0; i < n; i++)
        v[i] = 1.0L + 0.001L * i;
    long double value = 0;
    for (int iteration = 0; iteration < 20000; iteration++) {
        long double norm = 0;
        for (int i = 0; i < n; i++) {
            long double s = 0;
            for (int j = 0; j < n; j++)
                s += (long double)g[(size_t)i * n + j] * v[j];
            next[i] = s;
            norm += s * s;
        }
        norm = sqrtl(norm);
        long double before = value;
        value = norm; /* ‖g v‖ with ‖v‖ = 1 tends to the top eigenvalue */
        for (int i = 0; i < n; i++)
            v[i] = next[i] / norm;
        if (iteration > 50 && fabsl(value - before) <= 1e-16L * value)
            break;
    }
    free(v);
    free(next);
    return (double)value;
}

/* What the reference sees of each layer: its weights and its attention input. */
typedef struct {
    const Config *c;
    const LayerWeights *w;
    double *bound;   /* per layer */
    double *q, *gap; /* per layer: q and q − p */
    int layer;
} Watch;

/* ‖X'‖₂² of the T×d input: the top eigenvalue of X'ᵀX' (d×d), summed here. */
static double input_norm_squared(const Config *c, const double *x)
{
    int T = c->tokens, d = c->width;
    double *g = calloc((size_t)d * d, sizeof(double));
    assert_non_null(g);
    for (int a = 0; a < d; a++)
        for (int b = 0; b < d; b++)
            for (int i = 0; i < T; i++)
                g[(size_t)a * d + b] += x[(size_t)a * T + i] * x[(size_t)b * T + i];
    double top = power_top(d, g);
    free(g);
    return top;
}

/* ‖M_h‖₂ of M_h = scale·W^Q_h W^K_hᵀ (d×d): the root of the top eigenvalue of M_hᵀM_h. */
static double qk_norm(const Config *c, const LayerWeights *w, int h)
{
    int d = c->width, dh = Config_head_width(c), g = Config_kv_head_of(c, h);
    double *m = calloc((size_t)d * d, sizeof(double)), *mtm = calloc((size_t)d * d, sizeof(double));
    assert_non_null(m);
    assert_non_null(mtm);
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++)
            for (int k = 0; k < dh; k++)
                m[(size_t)i * d + j] += Init_logit_scale(c) *
                                        w->query[i + (size_t)d * (h * dh + k)] *
                                        w->key[j + (size_t)d * (g * dh + k)];
    for (int a = 0; a < d; a++)
        for (int b = 0; b < d; b++)
            for (int i = 0; i < d; i++)
                mtm[(size_t)a * d + b] += m[(size_t)i * d + a] * m[(size_t)i * d + b];
    double top = sqrt(power_top(d, mtm));
    free(m);
    free(mtm);
    return top;
}

static int watch_input(void *context, const double *x)
{
    Watch *watch = context;
    const Config *c = watch->c;
    int T = c->tokens, d = c->width, l = watch->layer;
    /* q from the norms, q − p from the pairwise distances:
       Σ_{i≠j} ‖x_i − x_j‖² = 2T(T − 1)(q − p), free of the cancellation of q − p itself. */
    double squares = 0, distances = 0;
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            for (int k = 0; k < d; k++) {
                double a = x[(size_t)k * T + i], b = x[(size_t)k * T + j];
                squares += i == j ? a * a : 0;
                distances += (a - b) * (a - b);
            }
    watch->q[l] = squares / T;
    watch->gap[l] = distances / (2.0 * T * (T - 1));
    double sigma = qk_norm(c, watch->w, c->head - 1) * input_norm_squared(c, x);
    double least = INFINITY;
    for (int i = 0; i < T; i++) {
        least = fmin(least, extreme_row_entropy(
                                allowed_keys(Config_layer_mask(c, l), c->window, T, i), sigma));
    }
    watch->bound[l] = least;
    return 0;
}

/* The main network of c, layer by layer from its own draws: the bound, q and q − p per layer. */
static void reference_forward(const Config *c, double *bound, double *q, double *gap)
{
    Layer layer;
    layer_new(&layer, c);
    assert_int_equal(Layer_input(layer.random, la, c, c->seed, layer.b.x, layer.scratch), 0);
    Watch watch = {c, &layer.w, bound, q, gap, 0};
    LayerObserver observer = {.context = &watch, .branch_input = watch_input};
    double log_scale = 0;
    for (int l = 1; l <= c->depth; l++) {
        assert_int_equal(
            Layer_draw(layer.random, la, c, c->seed, l, LAYER_DRAW_ALL, &layer.w, layer.scratch),
            0);
        watch.layer = l;
        LayerStep step = {
            .config = c, .layer = l, .weights = &layer.w, .gap = c->gap, .observer = &observer};
        LayerOutcome outcome;
        assert_int_equal(Layer_step(&step, &layer.b, &outcome, &log_scale), 0);
        assert_int_equal(outcome, LAYER_DONE);
    }
    layer_free(&layer, c);
}

/* A run's bound and β_c are the reference's, layer by layer, heads and masks, pre-LN too. */
static void test_run_matches_reference(void **state)
{
    (void)state;
    Config configs[9];
    configs[0] = small(12, 16, 3);
    configs[0].sigma_qk = 0.4;
    configs[1] = small(12, 16, 3);
    configs[1].mask = MASK_CAUSAL;
    configs[1].heads = 4;
    configs[1].head = 3;
    configs[1].kv_heads = 2;
    configs[1].output = OUTPUT_GAUSSIAN;
    configs[2] = small(10, 12, 3);
    configs[2].layernorm = LAYERNORM_LN;
    configs[2].ln_place = LN_PLACE_PRE;
    configs[2].skip = SKIP_PLAIN;
    configs[2].sigma_qk = 0.6;
    configs[3] = small(10, 12, 2);
    configs[3].mask = MASK_WINDOW;
    configs[3].window = 2;
    configs[3].sigma_qk = 0.3;
    /* Windows on every other layer (Gemma 2's 1:1): the bound and β_c follow each layer's
       mask, the global layers' all T keys. */
    configs[4] = small(10, 12, 4);
    configs[4].mask = MASK_WINDOW;
    configs[4].window = 1;
    configs[4].sigma_qk = 0.3;
    assert_int_equal(Config_window_layers_code("1:1", &configs[4].window_layers), 0);
    /* Above ENTROPY_EXACT_INPUT_NORM: ‖X'‖₂² is the proved upper bound (a Gram matrix, Lanczos
       and a Cholesky factorisation): here of the measure's Gram matrix of X_{ℓ−1}/‖X_{ℓ−1}‖_F
       (Entropy_input_norm_measured) and, pre-LN, of LN(X)ᵀLN(X) with T > d. */
    configs[5] = small(64, 72, 3);
    configs[5].sigma_qk = 0.4;
    configs[6] = small(80, 64, 3);
    configs[6].input = INPUT_EMBEDDING;
    configs[6].layernorm = LAYERNORM_LN;
    configs[6].ln_place = LN_PLACE_PRE;
    configs[6].skip = SKIP_PLAIN;
    configs[6].sigma_qk = 0.3;
    /* Above it in d·d_h², ‖W^Q_h W^K_gᵀ‖₂ is a proved upper bound too (one Cholesky factor
       per key head, shared by its query heads): four heads in two groups, the third shown. */
    configs[7] = small(16, 192, 2);
    configs[7].heads = 4;
    configs[7].kv_heads = 2;
    configs[7].head = 3;
    configs[7].sigma_qk = 0.3;
    /* Tokens that merge (relative spread 3e-10 at layer 5 of the default network at 32): q − p
       is the spread per pair, which q and p themselves would lose to cancellation. */
    configs[8] = small(32, 32, 8);
    for (int k = 5; k < 7; k++)
        assert_false(Entropy_input_norm_exact(configs[k].tokens, configs[k].width));
    for (int l = 1; l <= configs[5].depth; l++)
        assert_true(Entropy_input_norm_measured(&configs[5], l));
    assert_false(Entropy_input_norm_measured(&configs[6], 1));
    assert_false(Entropy_qk_norm_exact(&configs[5]));
    assert_false(Entropy_qk_norm_exact(&configs[7]));
    for (int k = 0; k < 9; k++) {
        const Config *c = &configs[k];
        double bound[9], q[9], gap[9];
        reference_forward(c, bound, q, gap);
        Result *r = run(c);
        assert_true(isnan(r->network.entropy_zhai_bound[0]));
        for (int l = 1; l <= c->depth; l++) {
            double got = r->network.entropy_zhai_bound[l];
            assert_close(got, bound[l], 1e-9 * fmax(1.0, bound[l]) + 1e-300);
            /* The run's spread is of x_i − x̄, whose rounding (~T·u·‖x‖ a token) is relative
               ρ = μ/‖X‖_F of it; the pairwise distances here have none: 4Tu/ρ relative in q − p,
               half of it in β_c.  Below ρ = 1e-12 the run has no q − p. */
            double rho = sqrt(gap[l] * (c->tokens - 1) / (q[l] * c->tokens));
            double tol = 1e-9 + 2 * c->tokens * DBL_EPSILON / rho;
            if (Config_layer_mask(c, l) == MASK_FULL && rho >= MEASURE_SIMILARITY_RESOLUTION)
                assert_close(r->network.phase_critical_beta[l],
                             Theory_phase_critical_beta(q[l], gap[l]),
                             tol * Theory_phase_critical_beta(q[l], gap[l]));
            else
                assert_true(isnan(r->network.phase_critical_beta[l]));
        }
        /* Something to compare: the first layer's bound is no round-off. */
        if (k == 0 || k == 3 || k == 5 || k == 7)
            assert_true(bound[1] > 0.1);
        Result_free(r);
    }
}

/* Never above the measured least row entropy: every layer of both networks, σ_qk from weak
   to condensed, every mask, no LayerNorm, pre-LN and post-LN, three seeds. */
static void test_bound_under_measured_minimum(void **state)
{
    (void)state;
    const double sigmas[] = {0.3, 0.7, 1.2, 2.5};
    const Mask masks[] = {MASK_FULL, MASK_CAUSAL, MASK_WINDOW, MASK_WINDOW_CAUSAL};
    int compared = 0, informative = 0;
    for (int norm = 0; norm < 3; norm++)
        for (size_t m = 0; m < 4; m++)
            for (size_t s = 0; s < 4; s++)
                for (uint64_t seed = 1; seed <= 3; seed++) {
                    Config c = small(16, 16, 4);
                    c.mask = masks[m];
                    c.window = 3;
                    c.sigma_qk = sigmas[s];
                    c.seed = seed;
                    c.gap = seed == 2 ? GAP_CENTER : GAP_OFF;
                    if (norm) {
                        c.layernorm = norm == 1 ? LAYERNORM_LN : LAYERNORM_RMS;
                        c.ln_place = norm == 1 ? LN_PLACE_PRE : LN_PLACE_POST;
                        c.skip = SKIP_PLAIN;
                    }
                    Result *r = run(&c);
                    const Curves *nets[] = {&r->network, &r->counterpart};
                    for (int n = 0; n < 2; n++)
                        for (int l = 1; l <= c.depth; l++) {
                            double bound = nets[n]->entropy_zhai_bound[l];
                            double least = nets[n]->entropy.min[l];
                            if (isnan(least))
                                continue; /* the network died before */
                            assert_false(isnan(bound));
                            if (bound > least + 1e-12)
                                fail_msg("bound %.17g above min H %.17g: layer %d, network %d, "
                                         "sigma_qk %g, mask %d, norm %d, seed %d",
                                         bound, least, l, n, c.sigma_qk, c.mask, norm, (int)seed);
                            compared++;
                            informative += bound > 0.01;
                        }
                    Result_free(r);
                }
    print_message("%d layers compared, %d with a bound above 0.01\n", compared, informative);
    assert_true(compared > 1000);
    assert_true(informative > 50);
}

/* Null, with a reason, where the theorem does not hold. */
static void test_bound_void(void **state)
{
    (void)state;
    Config c = small(12, 16, 3);
    c.qk_norm = QK_NORM_HEAD;
    assert_non_null(Entropy_zhai_void(&c, 1));
    Result *r = run(&c);
    for (int l = 0; l <= c.depth; l++)
        assert_true(isnan(r->network.entropy_zhai_bound[l]));
    Result_free(r);
    c = small(12, 16, 4);
    c.rope = ROPE_HALF;
    c.nope_every = 2; /* every second layer has no rotation: the bound holds there */
    r = run(&c);
    for (int l = 1; l <= c.depth; l++) {
        bool rotates = Qk_rotates(&c, l);
        assert_true(rotates == (Entropy_zhai_void(&c, l) != NULL));
        assert_true(rotates == isnan(r->network.entropy_zhai_bound[l]));
    }
    Result_free(r);
    c = small(12, 16, 2);
    c.attention = ATTENTION_MARKOV;
    assert_non_null(Entropy_zhai_void(&c, 1));
    c = small(12, 16, 2);
    c.sink = 0; /* gpt-oss's: a real sink of logit 0 */
    assert_non_null(Entropy_zhai_void(&c, 1));
    r = run(&c);
    for (int l = 0; l <= c.depth; l++)
        assert_true(isnan(r->network.entropy_zhai_bound[l]));
    Result_free(r);
}

/* The entropy view's histogram reads the shown matrix's rows: uniform causal attention gives
   row i (1-based) ln i exactly; a softmax layer's rows sum to its summary (mean, least,
   largest), of the matrix as built, not as the spectra's LAPACK calls leave it. */
static void test_shown_row_entropies(void **state)
{
    (void)state;
    Config c = small(12, 16, 2);
    c.attention = ATTENTION_UNIFORM;
    c.mask = MASK_CAUSAL;
    Result *r = run(&c);
    for (int i = 0; i < c.tokens; i++)
        assert_close(r->row_entropy[i], log(i + 1.0), 1e-12);
    Result_free(r);
    c = small(24, 24, 3);
    c.sigma_qk = 1.3;
    c.layer = 2;
    c.gap = GAP_CENTER;
    r = run(&c);
    double sum = 0, least = INFINITY, largest = -INFINITY;
    for (int i = 0; i < c.tokens; i++) {
        sum += r->row_entropy[i];
        least = fmin(least, r->row_entropy[i]);
        largest = fmax(largest, r->row_entropy[i]);
    }
    assert_close(sum / c.tokens, r->network.entropy.mean[2], 1e-12);
    assert_true(least == r->network.entropy.min[2] && largest == r->network.entropy.max[2]);
    Result_free(r);
    c.attention = ATTENTION_RELU;
    r = run(&c);
    assert_true(isnan(r->row_entropy[0]));
    Result_free(r);
}

/* ---- Giorlandino & Goldt ------------------------------------------------------------- */

static void test_phase_notebook_start(void **state)
{
    (void)state;
    /* Their Gain-controlled-propagation notebook starts at q = 1, p = 0.2. */
    assert_close(Theory_phase_critical_beta(1.0, 1.0 - 0.2), 1.5811388300841898, 1e-15);
    assert_true(isnan(Theory_phase_critical_beta(1.0, 0.0))); /* tokens equal: no threshold */
    assert_string_equal(Theory_phase_side(1.6, 1.5811), "entropy-collapse");
    assert_string_equal(Theory_phase_side(1.5, 1.5811), "rank-collapse");
    assert_null(Theory_phase_side(NAN, 1.0));
    /* β: the logit std on unit orthogonal tokens over √(ln T); σ_qk² at the 1/√d_h scale. */
    Config c = small(64, 64, 1);
    c.sigma_qk = 1.5;
    assert_close(Theory_phase_beta(&c), 2.25 / sqrt(log(64.0)), 1e-15);
    /* On orthonormal tokens (q = 1, p = 0) the threshold is the random-energy one: β_c·√(ln T)
       = √2·√(ln T) = s_c. */
    EntropyTheory e;
    Theory_entropy_first_layer(&c, &e);
    assert_close(Theory_phase_critical_beta(1, 1) * sqrt(log(64.0)), e.critical_logit_std, 1e-14);
}

/* Clearly on either side at the first layer (orthonormal tokens, β_c = √2): σ_qk = 0.6 gives
   β = 0.045, averaging rows (H/ln T near 1); σ_qk = 3 gives β = 4.4, condensed rows. */
static void test_phase_sides(void **state)
{
    (void)state;
    Config c = small(64, 64, 2);
    c.sigma_qk = 0.6;
    Result *r = run(&c);
    assert_string_equal(Theory_phase_side(Theory_phase_beta(&c), r->network.phase_critical_beta[1]),
                        "rank-collapse");
    /* ln T − s²/2 over ln T: 0.984 at s = 0.36 */
    assert_true(r->network.entropy.normalised_mean[1] > 0.95);
    Result_free(r);
    c.sigma_qk = 3;
    r = run(&c);
    assert_string_equal(Theory_phase_side(Theory_phase_beta(&c), r->network.phase_critical_beta[1]),
                        "entropy-collapse");
    assert_true(r->network.entropy.normalised_mean[1] < 0.5);
    Result_free(r);
    c.qk_norm = QK_NORM_HEAD;
    assert_non_null(Theory_phase_void(&c, 1));
    r = run(&c);
    assert_true(isnan(r->network.phase_critical_beta[1]));
    Result_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_bound_is_its_extreme_row),
        cmocka_unit_test(test_no_row_of_norm_sigma_is_below),
        cmocka_unit_test(test_run_matches_reference),
        cmocka_unit_test(test_bound_under_measured_minimum),
        cmocka_unit_test(test_bound_void),
        cmocka_unit_test(test_shown_row_entropies),
        cmocka_unit_test(test_phase_notebook_start),
        cmocka_unit_test(test_phase_sides),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
