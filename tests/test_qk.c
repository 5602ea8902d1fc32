/* QK-norm and rotary positions (docs/model.md §1.8a): the layer's logits
 * against a reference written here loop by loop from the same random streams, for both
 * placements and both rotation conventions, and the invariants the algebra promises. */
#include "testing.h"

#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/qk.h"
#include "attnscope/random.h"
#include "layer_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Head `head`'s logits (row-major T×T) at layer `layer` of c, from the weights of layer 1 of
   c's seed on X0, as the model computes them. */
static void model_logits(const Config *c, int layer, int head, double *out)
{
    Layer l;
    layer_new(&l, c);
    assert_int_equal(Layer_input(l.random, la, c, c->seed, l.b.x, l.scratch), 0);
    assert_int_equal(Layer_draw(l.random, la, c, c->seed, 1, LAYER_DRAW_ATTENTION, &l.w, l.scratch),
                     0);
    const double *logits = NULL;
    LayerOutcome outcome;
    assert_int_equal(Layer_attention(c, layer, &l.w, &l.b, head, &logits, &outcome), 0);
    memcpy(out, logits, sizeof(double) * c->tokens * c->tokens);
    layer_free(&l, c);
}

/* v (n entries, stride apart) divided by √(mean(v²) + ε). */
static void reference_rms(double *v, int n, int stride, double epsilon)
{
    double mean_square = 0;
    for (int e = 0; e < n; e++)
        mean_square += v[e * stride] * v[e * stride] / n;
    for (int e = 0; e < n; e++)
        v[e * stride] /= sqrt(mean_square + epsilon);
}

/* QK-norm on one token's row of d entries: over the full width, or each head's d_h. */
static void reference_qk_norm(const Config *c, double *row)
{
    int dh = Config_head_width(c);
    if (c->qk_norm == QK_NORM_FULL)
        reference_rms(row, c->width, 1, c->ln_eps);
    else
        for (int h = 0; h < c->heads; h++)
            reference_rms(row + h * dh, dh, 1, c->ln_eps);
}

/* Row p of a head (dh entries, stride apart) at position p turned as c says: HF's rotate_half
   x' = x·cos + (−x₂, x₁)·sin on the halves of the first d_r entries, or Meta's complex
   multiply of the pairs (x_2k + i·x_2k+1)·e^{i·p·f_k}. */
static void reference_rotate(const Config *c, double *v, int stride, int position)
{
    int dh = Config_head_width(c), dr = (int)(c->rope_fraction * dh) / 2 * 2;
    double copy[512];
    for (int e = 0; e < dh; e++)
        copy[e] = v[e * stride];
    for (int k = 0; k < dr / 2; k++) {
        double f = 1.0 / pow(c->rope_theta, (2.0 * k) / dr), a = position * f;
        int i = c->rope == ROPE_HALF ? k : 2 * k, j = c->rope == ROPE_HALF ? k + dr / 2 : 2 * k + 1;
        v[i * stride] = copy[i] * cos(a) - copy[j] * sin(a);
        v[j * stride] = copy[j] * cos(a) + copy[i] * sin(a);
    }
}

/* The logits of head `head` at layer 1, loop by loop: X0 from its stream, W^Q and W^K from
   theirs (the normal scheme's N(0, σ_qk²)), the projections, QK-norm and RoPE in c's order. */
static void reference_logits(const Config *c, int head, double *out)
{
    int T = c->tokens, d = c->width, dh = Config_head_width(c);
    RandomStream *random = RandomStream_new();
    double *g = calloc((size_t)d * T, sizeof(double)), *wq = calloc((size_t)d * d, sizeof(double));
    double *wk = calloc((size_t)d * d, sizeof(double)), *q = calloc((size_t)T * d, sizeof(double));
    double *k = calloc((size_t)T * d, sizeof(double));
    RandomStream_gaussian(random, c->seed, 0, ROLE_INPUT, 1.0, g, (size_t)d * T);
    assert_int_equal(Linalg_orthonormalise(la, d, T, g), 0); /* X0 = gᵀ: row i is column i */
    RandomStream_gaussian(random, c->seed, 1, ROLE_QUERY, c->sigma_qk, wq, (size_t)d * d);
    RandomStream_gaussian(random, c->seed, 1, ROLE_KEY, c->sigma_qk, wk, (size_t)d * d);
    for (int i = 0; i < T; i++)
        for (int e = 0; e < d; e++)
            for (int m = 0; m < d; m++) {
                q[(size_t)i * d + e] += g[m + (size_t)i * d] * wq[m + (size_t)e * d];
                k[(size_t)i * d + e] += g[m + (size_t)i * d] * wk[m + (size_t)e * d];
            }
    /* Rows of q and k are tokens (row-major here); head h is entries h·dh … h·dh + dh − 1. */
    bool norm = c->qk_norm != QK_NORM_NONE, before = c->qk_norm_place == QK_NORM_BEFORE_ROPE;
    for (int i = 0; i < T; i++)
        for (double *v = q; v; v = v == q ? k : NULL) {
            double *row = v + (size_t)i * d;
            if (norm && before)
                reference_qk_norm(c, row);
            for (int h = 0; h < c->heads && c->rope != ROPE_NONE; h++)
                reference_rotate(c, row + h * dh, 1, i);
            if (norm && !before)
                reference_qk_norm(c, row);
        }
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            double s = 0;
            for (int e = head * dh; e < (head + 1) * dh; e++)
                s += q[(size_t)i * d + e] * k[(size_t)j * d + e];
            out[(size_t)i * T + j] = s / sqrt((double)dh);
        }
    free(g), free(wq), free(wk), free(q), free(k);
    RandomStream_free(random);
}

/* T = 12, d = 16, `heads` heads, σ_qk = 0.7, seed 5. */
static Config with_heads(int heads)
{
    Config c = Config_default();
    c.tokens = 12;
    c.width = 16;
    c.heads = heads;
    c.sigma_qk = 0.7;
    c.seed = 5;
    return c;
}

static double largest_abs(const double *x, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(x[i]));
    return m;
}

/* Every QK-norm with every rotation, in both orders: the model's logits are the loop-by-loop
   reference's to 1e-12 of the largest. */
static void test_logits_match_the_reference(void **state)
{
    (void)state;
    enum { T = 12 };
    for (int heads = 1; heads <= 2; heads++)
        for (int norm = 0; norm < 3; norm++)
            for (int rope = 0; rope < 3; rope++)
                for (int place = 0; place < 2; place++) {
                    Config c = with_heads(heads);
                    c.qk_norm = (QkNorm)norm;
                    c.rope = (Rope)rope;
                    c.qk_norm_place = (QkNormPlace)place;
                    c.rope_fraction = rope == ROPE_PAIRS ? 0.75 : 1.0; /* d_r = 6 or 16 */
                    c.rope_theta = rope == ROPE_PAIRS ? 500000 : 10000;
                    c.ln_eps = 1e-6;
                    double model[T * T], reference[T * T];
                    model_logits(&c, 1, heads - 1, model);
                    reference_logits(&c, heads - 1, reference);
                    double scale = largest_abs(reference, T * T);
                    for (int i = 0; i < T * T; i++)
                        if (fabs(model[i] - reference[i]) > 1e-12 * scale)
                            fail_msg("H %d, qk-norm %s, rope %s, %s: logit %d %.17g, reference "
                                     "%.17g",
                                     heads, QK_NORM_NAMES.names[norm], ROPE_NAMES.names[rope],
                                     QK_NORM_PLACE_NAMES.names[place], i, model[i], reference[i]);
                }
}

/* Gemma 2's soft-cap on the loop-by-loop logits: the model's capped logits are C·tanh(S/C) of the
   reference's, and its attention their row softmax, for logits of std σ_qk² = 4 near a cap of 3
   (with RoPE too: the cap acts after it). */
static void test_softcap_matches_the_reference(void **state)
{
    (void)state;
    enum { T = 12 };
    for (int rope = 0; rope < 2; rope++) {
        Config c = with_heads(2);
        c.sigma_qk = 2.0;
        c.logit_softcap = 3.0;
        c.rope = rope ? ROPE_HALF : ROPE_NONE;
        double model[T * T], reference[T * T];
        model_logits(&c, 1, 1, model);
        reference_logits(&c, 1, reference);
        double beyond = 0;
        for (int i = 0; i < T * T; i++) {
            beyond = fmax(beyond, fabs(reference[i]));
            double capped = 3.0 * tanh(reference[i] / 3.0);
            if (fabs(model[i] - capped) > 1e-12 * 3.0)
                fail_msg("rope %d: capped logit %d %.17g, reference %.17g", rope, i, model[i],
                         capped);
        }
        assert_true(beyond > 3.0); /* the cap bit: some logit was beyond C */
        /* The attention the layer builds is the softmax of the capped logits. */
        Layer l;
        layer_new(&l, &c);
        assert_int_equal(Layer_input(l.random, la, &c, c.seed, l.b.x, l.scratch), 0);
        assert_int_equal(
            Layer_draw(l.random, la, &c, c.seed, 1, LAYER_DRAW_ATTENTION, &l.w, l.scratch), 0);
        const double *logits;
        LayerOutcome outcome;
        assert_int_equal(Layer_attention(&c, 1, &l.w, &l.b, 1, &logits, &outcome), 0);
        for (int i = 0; i < T; i++) {
            double sum = 0;
            for (int j = 0; j < T; j++)
                sum += exp(3.0 * tanh(reference[i * T + j] / 3.0));
            for (int j = 0; j < T; j++) {
                double want = exp(3.0 * tanh(reference[i * T + j] / 3.0)) / sum;
                if (fabs(l.b.attention[i * T + j] - want) > 1e-12)
                    fail_msg("rope %d: A[%d][%d] %.17g, reference %.17g", rope, i, j,
                             l.b.attention[i * T + j], want);
            }
        }
        layer_free(&l, &c);
    }
}

/* The rotation is orthogonal: every head's row keeps its norm, at any position. */
static void test_rotation_keeps_norms(void **state)
{
    (void)state;
    enum { T = 9, D = 24 };
    Config c = with_heads(3);
    c.tokens = T;
    c.width = D;
    for (int rope = ROPE_HALF; rope <= ROPE_PAIRS; rope++) {
        c.rope = (Rope)rope;
        double x[T * D], before[T * D];
        for (int i = 0; i < T * D; i++)
            x[i] = before[i] = sin(0.37 * i + 1);
        Qk_rotate(&c, 1, T, c.heads, 123456, x);
        double moved = 0;
        for (int h = 0; h < 3; h++)
            for (int i = 0; i < T; i++) {
                double n0 = 0, n1 = 0;
                for (int e = h * 8; e < h * 8 + 8; e++) {
                    n0 += before[i + e * T] * before[i + e * T];
                    n1 += x[i + e * T] * x[i + e * T];
                    moved = fmax(moved, fabs(x[i + e * T] - before[i + e * T]));
                }
                assert_relative(n1, n0, 1e-14);
            }
        assert_true(moved > 0.1); /* it did turn */
    }
}

/* Qk_turn from a table of cosines and sines gives Qk_rotate's bits at positions 0 … T−1, and
   transposed Qk_unrotate's: both conventions, a whole and a partial rotated width, 1 and 3
   heads.  Each call here is compared with its own turn: a table of the wrong angles, signs or
   layout, or a turn of the wrong columns, changes bits. */
static void test_table_turns_as_rotate(void **state)
{
    (void)state;
    enum { T = 9, D = 24 };
    Config c = with_heads(3);
    c.tokens = T;
    c.width = D;
    double table[T * D], x[T * D], by_table[T * D], start[T * D];
    for (int i = 0; i < T * D; i++)
        start[i] = sin(0.37 * i + 1);
    for (int rope = ROPE_HALF; rope <= ROPE_PAIRS; rope++)
        for (int partial = 0; partial < 2; partial++)
            for (int heads = 1; heads <= 3; heads += 2) {
                c.rope = (Rope)rope;
                c.rope_fraction = partial ? 0.5 : 1.0;
                assert_true(Qk_rotation_table_doubles(&c, T) <= T * D);
                Qk_rotation_table(&c, 1, T, table);
                for (int transposed = 0; transposed < 2; transposed++) {
                    memcpy(x, start, sizeof x);
                    memcpy(by_table, start, sizeof x);
                    if (transposed)
                        Qk_unrotate(&c, 1, T, heads, x);
                    else
                        Qk_rotate(&c, 1, T, heads, 0, x);
                    Qk_turn(&c, 1, T, heads, table, transposed, by_table);
                    if (memcmp(x, by_table, sizeof x) != 0)
                        fail_msg("rope %d, fraction %g, %d heads, transposed %d: the table's "
                                 "turn differs from the computed one",
                                 rope, c.rope_fraction, heads, transposed);
                    assert_true(largest_abs(x, T * D) > 0 && memcmp(x, start, sizeof x) != 0);
                }
            }
}

/* A logit depends on the positions only through j − i: turning every token by positions
   shifted by a constant gives the same logits to 1e-12 relative. */
static void test_logits_depend_on_position_differences(void **state)
{
    (void)state;
    enum { T = 10, D = 16 };
    Config c = with_heads(2);
    c.tokens = T;
    c.width = D;
    for (int rope = ROPE_HALF; rope <= ROPE_PAIRS; rope++) {
        c.rope = (Rope)rope;
        double q[T * D], k[T * D], q2[T * D], k2[T * D];
        for (int i = 0; i < T * D; i++) {
            q[i] = q2[i] = cos(0.91 * i);
            k[i] = k2[i] = sin(1.7 * i + 0.2);
        }
        Qk_rotate(&c, 1, T, c.heads, 0, q);
        Qk_rotate(&c, 1, T, c.heads, 0, k);
        Qk_rotate(&c, 1, T, c.heads, 37, q2);
        Qk_rotate(&c, 1, T, c.heads, 37, k2);
        for (int h = 0; h < 2; h++)
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++) {
                    double s = 0, s2 = 0, size = 0;
                    for (int e = h * 8; e < h * 8 + 8; e++) {
                        s += q[i + e * T] * k[j + e * T];
                        s2 += q2[i + e * T] * k2[j + e * T];
                        size += fabs(q[i + e * T] * k[j + e * T]);
                    }
                    assert_true(fabs(s - s2) <= 1e-12 * size);
                }
    }
}

/* --rope-fraction 0 rotates nothing: the whole run is --rope none's bit for bit.  And a
   --nope-every layer is a layer without RoPE, bit for bit, while the others turn. */
static void test_no_rotation_is_bit_identical(void **state)
{
    (void)state;
    enum { T = 12 };
    Config none = with_heads(2), zero = with_heads(2);
    none.depth = zero.depth = 3;
    zero.rope = ROPE_HALF;
    zero.rope_fraction = 0.05; /* 0.05·8 = 0.4 dimensions: down to 0 */
    char err[256];
    Result *a = Result_new(), *b = Result_new();
    assert_int_equal(Model_run(&none, workspace, a, NULL, err, sizeof err), 0);
    assert_int_equal(Model_run(&zero, workspace, b, NULL, err, sizeof err), 0);
    assert_memory_equal(a->network.stable_rank, b->network.stable_rank, sizeof(double) * 4);
    assert_memory_equal(a->singular_values, b->singular_values, sizeof(double) * T);
    zero.rope_fraction = 0;
    assert_int_equal(Model_run(&zero, workspace, b, NULL, err, sizeof err), 0);
    assert_memory_equal(a->network.stable_rank, b->network.stable_rank, sizeof(double) * 4);
    Result_free(a);
    Result_free(b);

    Config nope = with_heads(2);
    nope.rope = ROPE_PAIRS;
    nope.nope_every = 2;
    double plain[T * T], skipped[T * T], turned[T * T];
    model_logits(&none, 2, 1, plain);
    model_logits(&nope, 2, 1, skipped);
    model_logits(&nope, 3, 1, turned);
    assert_memory_equal(plain, skipped, sizeof plain);
    assert_true(memcmp(plain, turned, sizeof plain) != 0);
}

/* A unit-gain RMSNorm only scales and the rotation keeps norms, so before-rope and after-rope
   agree at initialisation to rounding (the setting matters once a gain is trained). */
static void test_placements_agree_to_rounding(void **state)
{
    (void)state;
    enum { T = 12 };
    for (int norm = QK_NORM_HEAD; norm <= QK_NORM_FULL; norm++) {
        Config c = with_heads(2);
        c.qk_norm = (QkNorm)norm;
        c.rope = ROPE_HALF;
        double before[T * T], after[T * T];
        model_logits(&c, 1, 0, before);
        c.qk_norm_place = QK_NORM_AFTER_ROPE;
        model_logits(&c, 1, 0, after);
        double scale = largest_abs(before, T * T);
        for (int i = 0; i < T * T; i++)
            assert_true(fabs(before[i] - after[i]) <= 1e-13 * scale);
    }
}

/* With QK-norm the first layer's logits are √d_h·cos θ: std 1 whatever σ_qk (docs/model.md §1.8a).
   At T = d = 64, one head (d_h = 64), the logits of a layer are pairwise independent (given q̂_i the
   S_ij, j = 1 … T, are i.i.d. with a law free of q̂_i, by rotation invariance of the independent
   k̂_j), E S² = d_h·E cos² = 1 and Var S² = 3d_h/(d_h + 2) − 1 < 2; over 8 seeds the mean of S²
   averages N = 8·64² = 32768 of them: its standard deviation is at most √(2/N) = 0.0078, 0.4%
   on the std.  ε = 1e-5 against entries of variance σ_qk² ≥ 0.01 shrinks each norm by at most
   0.05%.  5% is more than ten standard deviations.  Full width with two heads: each head's
   share of the norm varies (E = 1 still, by symmetry), a row's logits then share it, and the
   standard deviation grows to ≈ 1% on the std: 5% stays five of them. */
static void test_normalised_logits_have_unit_std(void **state)
{
    (void)state;
    enum { T = 64, SEEDS = 8 };
    const double sigmas[] = {0.1, 0.25, 0.5, 1, 2, 4};
    static double logits[T * T];
    for (int norm = QK_NORM_HEAD; norm <= QK_NORM_FULL; norm++)
        for (size_t s = 0; s < sizeof sigmas / sizeof sigmas[0]; s++) {
            Config c = Config_default();
            c.tokens = c.width = T;
            c.heads = norm == QK_NORM_FULL ? 2 : 1;
            c.qk_norm = (QkNorm)norm;
            c.sigma_qk = sigmas[s];
            double sum_squares = 0;
            for (int seed = 1; seed <= SEEDS; seed++) {
                c.seed = (uint64_t)seed;
                model_logits(&c, 1, 0, logits);
                for (int i = 0; i < T * T; i++)
                    sum_squares += logits[i] * logits[i];
            }
            double std = sqrt(sum_squares / (SEEDS * T * T));
            if (fabs(std - 1) > 0.05)
                fail_msg("qk-norm %s, sigma_qk %g: logit std %.4f", QK_NORM_NAMES.names[norm],
                         sigmas[s], std);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logits_match_the_reference),
        cmocka_unit_test(test_softcap_matches_the_reference),
        cmocka_unit_test(test_rotation_keeps_norms),
        cmocka_unit_test(test_table_turns_as_rotate),
        cmocka_unit_test(test_logits_depend_on_position_differences),
        cmocka_unit_test(test_no_rotation_is_bit_identical),
        cmocka_unit_test(test_placements_agree_to_rounding),
        cmocka_unit_test(test_normalised_logits_have_unit_std),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
