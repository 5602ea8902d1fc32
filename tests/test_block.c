/* The transformer block (docs/model.md §1.7): heads, the output projection and the logit
 * scale, against a reference written here with plain loops from the same random streams,
 * and the exact invariants the algebra promises. */
#include "testing.h"

#include "attnscope/block.h"
#include "attnscope/init.h"
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/model.h"
#include "attnscope/random.h"
#include "heap_count.h"
#include "model_fixture.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { RT = 6, RD = 8, RL = 2 };

/* sr(X Xᵀ) = ‖G‖_F² / ‖G‖₂², G = X Xᵀ, from all eigenvalues of G (LAPACK's dsyev, not the
   model's route). */
static double reference_stable_rank(const double *x)
{
    double g[RT * RT], eig[RT];
    for (int i = 0; i < RT; i++)
        for (int j = 0; j < RT; j++) {
            double sum = 0;
            for (int m = 0; m < RD; m++)
                sum += x[i + m * RT] * x[j + m * RT];
            g[i + j * RT] = sum;
        }
    assert_int_equal(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', RT, g, RT, eig), 0);
    double top = eig[RT - 1], sum = 0;
    for (int i = 0; i < RT; i++)
        sum += (eig[i] / top) * (eig[i] / top);
    return sum;
}

/* One forward pass of H softmax heads (full mask, gap off, plain skip), their outputs
   concatenated and multiplied by the Gaussian W^O, written out loop by loop.  Fills the
   stable rank of every layer and the singular values of head `shown` at layer `shown_layer`. */
static void reference_block(const Config *c, double *stable_rank, double *shown_singular)
{
    int H = c->heads, dh = RD / H;
    RandomStream *random = RandomStream_new();
    double g[RD * RT], x[RT * RD], wq[RD * RD], wk[RD * RD], wv[RD * RD], wo[RD * RD];
    RandomStream_gaussian(random, c->seed, 0, ROLE_INPUT, 1.0, g, RD * RT);
    assert_int_equal(Linalg_orthonormalise(la, RD, RT, g), 0);
    for (int i = 0; i < RT; i++)
        for (int j = 0; j < RD; j++)
            x[i + j * RT] = g[j + i * RD];
    stable_rank[0] = reference_stable_rank(x);
    for (int l = 1; l <= RL; l++) {
        RandomStream_gaussian(random, c->seed, l, ROLE_QUERY, c->sigma_qk, wq, RD * RD);
        RandomStream_gaussian(random, c->seed, l, ROLE_KEY, c->sigma_qk, wk, RD * RD);
        RandomStream_gaussian(random, c->seed, l, ROLE_VALUE, 1.0, wv, RD * RD);
        RandomStream_gaussian(random, c->seed, l, ROLE_OUTPUT, 1.0 / sqrt(RD), wo, RD * RD);
        double heads[RT * RD];
        for (int h = 0; h < H; h++) {
            double a[RT][RT];
            for (int i = 0; i < RT; i++) {
                double top = -INFINITY;
                for (int j = 0; j < RT; j++) {
                    double s = 0;
                    for (int e = 0; e < dh; e++) {
                        double q = 0, k = 0;
                        for (int m = 0; m < RD; m++) {
                            q += x[i + m * RT] * wq[m + (h * dh + e) * RD];
                            k += x[j + m * RT] * wk[m + (h * dh + e) * RD];
                        }
                        s += q * k;
                    }
                    a[i][j] = s / sqrt(dh);
                    top = fmax(top, a[i][j]);
                }
                double total = 0;
                for (int j = 0; j < RT; j++)
                    total += a[i][j] = exp(a[i][j] - top);
                for (int j = 0; j < RT; j++)
                    a[i][j] /= total;
            }
            if (l == c->layer && h == c->head - 1) {
                double copy[RT * RT], u[1], vt[1], superb[RT];
                for (int i = 0; i < RT; i++)
                    for (int j = 0; j < RT; j++)
                        copy[i + j * RT] = a[i][j];
                assert_int_equal(LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', RT, RT, copy, RT,
                                                shown_singular, u, 1, vt, 1, superb),
                                 0);
            }
            for (int i = 0; i < RT; i++)
                for (int e = 0; e < dh; e++) {
                    double sum = 0;
                    for (int j = 0; j < RT; j++)
                        for (int m = 0; m < RD; m++)
                            sum += a[i][j] * x[j + m * RT] * wv[m + (h * dh + e) * RD];
                    heads[i + (h * dh + e) * RT] = sum;
                }
        }
        for (int i = 0; i < RT; i++)
            for (int j = 0; j < RD; j++) {
                double sum = 0;
                for (int m = 0; m < RD; m++)
                    sum += heads[i + m * RT] * wo[m + j * RD];
                x[i + j * RT] += sum;
            }
        stable_rank[l] = reference_stable_rank(x);
    }
    RandomStream_free(random);
}

static Config block(int heads, int head, int layer)
{
    Config c = Config_default();
    c.tokens = RT;
    c.width = RD;
    c.depth = RL;
    c.heads = heads;
    c.head = head;
    c.layer = layer;
    c.output = OUTPUT_GAUSSIAN;
    c.skip = SKIP_PLAIN;
    c.sigma_qk = 1.3;
    c.seed = 11;
    return c;
}

/* H heads of width d/H, concatenated, through W^O, with a skip: the model's stable ranks
   and the shown head's singular values equal the loop-by-loop reference. */
static void test_heads_match_the_reference(void **state)
{
    (void)state;
    const int cases[][3] = {{1, 1, 1}, {2, 2, 2}, {4, 3, 1}, {8, 8, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        Config c = block(cases[k][0], cases[k][1], cases[k][2]);
        double expected[RL + 1], singular[RT];
        reference_block(&c, expected, singular);
        Result *r = run(&c);
        for (int l = 0; l <= RL; l++)
            if (fabs(r->network.stable_rank[l] - expected[l]) > 1e-10 * expected[l])
                fail_msg("H = %d, layer %d: sr %.17g, reference %.17g", c.heads, l,
                         r->network.stable_rank[l], expected[l]);
        for (int i = 0; i < RT; i++)
            if (fabs(r->singular_values[i] - singular[i]) > 1e-12)
                fail_msg("H = %d, head %d, layer %d: s_%d %.17g, reference %.17g", c.heads, c.head,
                         c.layer, i + 1, r->singular_values[i], singular[i]);
        Result_free(r);
    }
}

/* The shown head chooses the matrix: heads 1 and 2 of the same network differ, and the
   network itself (its stable ranks) does not depend on which head is shown. */
static void test_shown_head_changes_only_the_spectra(void **state)
{
    (void)state;
    Config c = block(4, 1, 1);
    Result *one = run(&c);
    c.head = 2;
    Result *two = run(&c);
    assert_memory_equal(one->network.stable_rank, two->network.stable_rank,
                        sizeof(double) * (RL + 1));
    assert_true(fabs(one->singular_values[1] - two->singular_values[1]) > 1e-6);
    Result_free(one);
    Result_free(two);
}

/* An orthogonal W^O keeps every singular value of the heads' output: without a skip the
   first layer's stable rank and norm are those of W^O = I (to round-off). */
static void test_orthogonal_output_keeps_singular_values(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 24;
    c.width = 32;
    c.depth = 1;
    c.heads = 4;
    Result *identity = run(&c);
    c.output = OUTPUT_ORTHOGONAL;
    Result *orthogonal = run(&c);
    c.output = OUTPUT_GAUSSIAN;
    Result *gaussian = run(&c);
    assert_relative(orthogonal->network.stable_rank[1], identity->network.stable_rank[1], 1e-12);
    assert_relative(orthogonal->network.log10_norm[1], identity->network.log10_norm[1], 1e-13);
    /* A Gaussian W^O is no isometry: the check above would see it. */
    assert_true(fabs(gaussian->network.stable_rank[1] / identity->network.stable_rank[1] - 1) >
                1e-4);
    Result_free(identity);
    Result_free(orthogonal);
    Result_free(gaussian);
}

/* Logits scaled by 1/d_h at σ_qk are the logits scaled by 1/√d_h at σ_qk·d_h^(-1/4): the
   same network up to round-off, and the same σ. */
static void test_linear_logit_scale_is_a_rescaled_sigma(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 16;
    c.width = 32;
    c.depth = 3;
    c.heads = 2;
    c.sigma_qk = 2.0;
    c.logit_scale = LOGIT_SCALE_LINEAR;
    Result *linear = run(&c);
    c.logit_scale = LOGIT_SCALE_SQRT;
    c.sigma_qk = 2.0 * pow(16.0, -0.25);
    Result *sqrt_scaled = run(&c);
    assert_relative(linear->sigma, sqrt_scaled->sigma, 1e-14);
    for (int l = 1; l <= 3; l++)
        assert_relative(linear->network.stable_rank[l], sqrt_scaled->network.stable_rank[l], 1e-9);
    assert_relative(linear->logit_std, sqrt_scaled->logit_std, 1e-12);
    Result_free(linear);
    Result_free(sqrt_scaled);
}

/* Where the gradient formula and the stable-rank theory do not apply, the result says so
   and the gradients are null rather than a wrong number. */
static void test_heads_say_what_theory_leaves_out(void **state)
{
    (void)state;
    Config c = block(2, 1, 1);
    c.skip = SKIP_NONE;
    Result *r = run(&c);
    assert_non_null(Model_gradients_unavailable(&c));
    assert_true(isnan(r->network.gradient_norm[1]));
    bool said = false;
    for (int i = 0; i < r->warnings.count; i++)
        said = said || strstr(r->warnings.text[i], "gradient formula describe one head");
    assert_true(said);
    Result_free(r);
    c = Config_default();
    assert_null(Model_gradients_unavailable(&c));
}

/* Heads that do not divide d are refused with the option, the value and what is accepted. */
static void test_heads_must_divide_width(void **state)
{
    (void)state;
    char err[256];
    Config c = Config_default();
    c.width = 96;
    c.tokens = 64;
    c.heads = 5;
    assert_int_equal(Config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "--heads 5: accepted a divisor of -d/--width 96"));
    c.heads = 4;
    c.head = 5;
    assert_int_equal(Config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "--head 5: accepted 1..4"));
}

/* PyTorch's nn.LayerNorm: (x − μ)/√(var + ε), var the biased variance over the d features,
   written as PyTorch states it; rows of norm √d·√(var/(var + ε)), and √d where var ≫ ε. */
static void test_pytorch_layernorm_rows(void **state)
{
    (void)state;
    enum { T = 5, D = 64 };
    double x[T * D], expected[T * D], row_stat[T], row_max[T];
    RandomStream *random = RandomStream_new();
    RandomStream_gaussian(random, 3, 1, ROLE_VALUE, 1.0, x, T * D);
    RandomStream_free(random);
    const double row_scale[T] = {1.0, 1e-3, 1e150, 0.0, 7.0};
    for (int i = 0; i < T; i++)
        for (int j = 0; j < D; j++)
            x[i + j * T] = row_scale[i] * (x[i + j * T] + 0.5);
    for (int i = 0; i < T; i++) {
        double mean = 0, var = 0;
        for (int j = 0; j < D; j++)
            mean += x[i + j * T] / D;
        for (int j = 0; j < D; j++)
            var += (x[i + j * T] - mean) * (x[i + j * T] - mean) / D;
        for (int j = 0; j < D; j++)
            expected[i + j * T] = (x[i + j * T] - mean) / sqrt(var + 1e-5);
    }
    Config c = Config_default();
    c.layernorm = LAYERNORM_LN;
    c.ln_scale = LN_SCALE_SQRT_D;
    Block_layernorm(&c, T, D, x, row_stat, row_max);
    for (int i = 0; i < T; i++) {
        double norm2 = 0;
        for (int j = 0; j < D; j++) {
            norm2 += x[i + j * T] * x[i + j * T];
            /* The row of 1e150 overflows PyTorch's own formula (var = inf): its rows are √d. */
            if (isfinite(expected[i + j * T]) && expected[i + j * T] != 0)
                assert_relative(x[i + j * T], expected[i + j * T], 1e-12);
        }
        if (row_scale[i] == 0.0)
            assert_true(norm2 == 0.0);
        else if (row_scale[i] >= 1.0)
            assert_relative(sqrt(norm2), sqrt((double)D), 1e-5);
    }
    /* The unit convention: rows of norm 1. */
    c.ln_scale = LN_SCALE_UNIT;
    Block_layernorm(&c, T, D, x, row_stat, row_max);
    for (int i = 0; i < T; i++) {
        double norm2 = 0;
        for (int j = 0; j < D; j++)
            norm2 += x[i + j * T] * x[i + j * T];
        if (row_scale[i] != 0.0)
            assert_relative(sqrt(norm2), 1.0, 1e-14);
    }
}

/* --ln-eps puts ε inside PyTorch's root: RMSNorm rows x/√(mean(x²) + ε) against a loop here
   for each ε, rows of norm exactly √d at ε = 0, a zero row staying zero, and unit rows
   taking no ε at all. */
static void test_ln_eps_in_pytorch_place(void **state)
{
    (void)state;
    enum { T = 4, D = 6 };
    const double epsilons[] = {0.0, 1e-6, 1e-5, 0.25};
    const double row_scale[T] = {1.0, 1e-3, 0.0, 3.0};
    double row_stat[T], row_max[T];
    for (size_t e = 0; e < sizeof epsilons / sizeof epsilons[0]; e++) {
        double x[T * D], expected[T * D];
        for (int i = 0; i < T; i++)
            for (int j = 0; j < D; j++)
                x[i + j * T] = row_scale[i] * sin(1.0 + i + 7.0 * j);
        for (int i = 0; i < T; i++) {
            double mean_square = 0;
            for (int j = 0; j < D; j++)
                mean_square += x[i + j * T] * x[i + j * T] / D;
            for (int j = 0; j < D; j++)
                expected[i + j * T] =
                    row_scale[i] == 0 ? 0.0 : x[i + j * T] / sqrt(mean_square + epsilons[e]);
        }
        Config c = Config_default();
        c.layernorm = LAYERNORM_RMS;
        c.ln_scale = LN_SCALE_SQRT_D;
        c.ln_eps = epsilons[e];
        Block_layernorm(&c, T, D, x, row_stat, row_max);
        for (int i = 0; i < T; i++) {
            double norm2 = 0;
            for (int j = 0; j < D; j++) {
                norm2 += x[i + j * T] * x[i + j * T];
                if (row_scale[i] == 0)
                    assert_true(x[i + j * T] == 0.0);
                else
                    assert_relative(x[i + j * T], expected[i + j * T], 1e-14);
            }
            if (epsilons[e] == 0 && row_scale[i] != 0)
                assert_relative(sqrt(norm2), sqrt((double)D), 1e-15);
        }
        /* A row of mean square 1e-6 is visibly shrunk by ε = 1e-5: ε is really inside. */
        if (epsilons[e] == 1e-5) {
            double norm2 = 0;
            for (int j = 0; j < D; j++)
                norm2 += x[1 + j * T] * x[1 + j * T];
            assert_true(sqrt(norm2) < 0.5 * sqrt((double)D));
        }
    }
    /* Unit rows: the same bits whatever ε. */
    double a[T * D], b[T * D];
    for (int k = 0; k < T * D; k++)
        a[k] = b[k] = cos(0.3 * k);
    Config c = Config_default();
    c.layernorm = LAYERNORM_RMS;
    Block_layernorm(&c, T, D, a, row_stat, row_max);
    c.ln_eps = 0.5;
    Block_layernorm(&c, T, D, b, row_stat, row_max);
    assert_memory_equal(a, b, sizeof a);
}

/* Without skips, pre-LN (X_ℓ = F(LN X_{ℓ−1})) and post-LN (X_ℓ = LN F(X_{ℓ−1})) differ only by
   the LayerNorm the next layer applies anyway: with rms (which leaves the unit-row input as
   it is) every layer's attention matrix is the same, so the shown spectra agree. */
static void test_pre_layernorm_is_post_layernorm_without_skips(void **state)
{
    (void)state;
    for (int layer = 1; layer <= 3; layer++) {
        Config c = Config_default();
        c.tokens = 16;
        c.width = 24;
        c.depth = 3;
        c.layer = layer;
        c.layernorm = LAYERNORM_RMS;
        c.heads = 2;
        Result *post = run(&c);
        c.ln_place = LN_PLACE_PRE;
        Result *pre = run(&c);
        for (int i = 0; i < c.tokens; i++) {
            assert_close(pre->singular_values[i], post->singular_values[i], 1e-12);
            assert_close(pre->eigenvalues[i].re, post->eigenvalues[i].re, 1e-11);
            assert_close(pre->eigenvalues[i].im, post->eigenvalues[i].im, 1e-11);
        }
        /* With a skip the algebra differs from the third layer on (the second still reads
           LN(X0 + F(X0)) either way), and so do the matrices. */
        c.skip = SKIP_PLAIN;
        Result *pre_skip = run(&c);
        c.ln_place = LN_PLACE_POST;
        Result *post_skip = run(&c);
        if (layer == 3)
            assert_true(fabs(pre_skip->singular_values[1] - post_skip->singular_values[1]) > 1e-6);
        Result_free(post);
        Result_free(pre);
        Result_free(pre_skip);
        Result_free(post_skip);
    }
}

/* ReZero: X ← X + 0·F(X) is the identity map, bit for bit, at every layer. */
static void test_rezero_is_the_identity(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 16;
    c.width = 32;
    c.depth = 4;
    c.skip = SKIP_PLAIN;
    c.branch_gain = 0.0;
    for (int heads = 1; heads <= 4; heads *= 4) {
        c.heads = heads;
        Result *r = run(&c);
        for (int l = 1; l <= c.depth; l++) {
            assert_memory_equal(&r->network.stable_rank[l], &r->network.stable_rank[0],
                                sizeof(double));
            assert_memory_equal(&r->network.log10_norm[l], &r->network.log10_norm[0],
                                sizeof(double));
        }
        Result_free(r);
    }
}

/* X ← a·X + b·F(X) with both gains doubled is 2·(X + F(X)) for input-independent attention
   (F is linear in X): the same stable ranks (scaled skip); doubling b alone is another network. */
static void test_gains_scale_both_terms(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 16;
    c.width = 32;
    c.depth = 4;
    c.attention = ATTENTION_MARKOV;
    c.skip = SKIP_SCALED; /* the branch over √d: neither term swamps the other */
    Result *plain = run(&c);
    c.skip_gain = c.branch_gain = 2.0;
    Result *doubled = run(&c);
    c.skip_gain = 1.0;
    Result *branch = run(&c);
    for (int l = 1; l <= c.depth; l++) {
        assert_relative(doubled->network.stable_rank[l], plain->network.stable_rank[l], 1e-12);
        assert_true(fabs(branch->network.stable_rank[l] / plain->network.stable_rank[l] - 1) >
                    1e-3);
    }
    Result_free(plain);
    Result_free(doubled);
    Result_free(branch);
}

/* The activations as PyTorch defines them: gelu with the exact normal CDF. */
static void test_activations(void **state)
{
    (void)state;
    double x[] = {-2.0, -0.5, 0.0, 1.0, 3.0};
    double relu[5], gelu[5], th[5];
    memcpy(relu, x, sizeof x);
    memcpy(gelu, x, sizeof x);
    memcpy(th, x, sizeof x);
    Block_activate(MLP_RELU, relu, 5);
    Block_activate(MLP_GELU, gelu, 5);
    Block_activate(MLP_TANH, th, 5);
    /* Python's 0.5·x·(1 + math.erf(x/√2)). */
    const double gelu_expected[] = {-0.04550026389635842, -0.15426876936299344, 0.0,
                                    0.8413447460685429, 2.99595030590511};
    for (int i = 0; i < 5; i++) {
        assert_true(relu[i] == (x[i] > 0 ? x[i] : 0.0));
        assert_close(gelu[i], gelu_expected[i], 1e-15);
        assert_close(th[i], tanh(x[i]), 0.0);
    }
}

/* One layer of identity attention (X W^V), then the MLP relu(X W1) W2, written out loop by
   loop from the streams (LeCun normal weights), no skip, no LayerNorm. */
static void test_mlp_matches_the_reference(void **state)
{
    (void)state;
    enum { R = 2, HID = R * RD };
    Config c = Config_default();
    c.tokens = RT;
    c.width = RD;
    c.depth = 1;
    c.attention = ATTENTION_IDENTITY;
    c.mlp = MLP_RELU;
    c.mlp_ratio = R;
    c.seed = 5;
    RandomStream *random = RandomStream_new();
    double g[RD * RT], x[RT * RD], y[RT * RD], wv[RD * RD], w1[RD * HID], w2[HID * RD];
    double hidden[RT * HID];
    RandomStream_gaussian(random, c.seed, 0, ROLE_INPUT, 1.0, g, RD * RT);
    assert_int_equal(Linalg_orthonormalise(la, RD, RT, g), 0);
    for (int i = 0; i < RT; i++)
        for (int j = 0; j < RD; j++)
            x[i + j * RT] = g[j + i * RD];
    RandomStream_gaussian(random, c.seed, 1, ROLE_VALUE, 1.0, wv, RD * RD);
    RandomStream_gaussian(random, c.seed, 1, ROLE_MLP_IN, 1.0 / sqrt(RD), w1, RD * HID);
    RandomStream_gaussian(random, c.seed, 1, ROLE_MLP_OUT, 1.0 / sqrt(HID), w2, HID * RD);
    RandomStream_free(random);
    for (int i = 0; i < RT; i++)
        for (int j = 0; j < RD; j++) {
            double sum = 0;
            for (int m = 0; m < RD; m++)
                sum += x[i + m * RT] * wv[m + j * RD];
            y[i + j * RT] = sum;
        }
    for (int i = 0; i < RT; i++)
        for (int j = 0; j < HID; j++) {
            double sum = 0;
            for (int m = 0; m < RD; m++)
                sum += y[i + m * RT] * w1[j + m * HID]; /* stored transposed */
            hidden[i + j * RT] = sum > 0 ? sum : 0.0;
        }
    for (int i = 0; i < RT; i++)
        for (int j = 0; j < RD; j++) {
            double sum = 0;
            for (int m = 0; m < HID; m++)
                sum += hidden[i + m * RT] * w2[m + j * HID];
            x[i + j * RT] = sum;
        }
    double norm2 = 0;
    for (int i = 0; i < RT * RD; i++)
        norm2 += x[i] * x[i];
    Result *r = run(&c);
    assert_relative(r->network.stable_rank[1], reference_stable_rank(x), 1e-10);
    assert_relative(r->network.log10_norm[1], 0.5 * log10(norm2), 1e-12);
    Result_free(r);
}

/* What a run of c holds once it is done (a fresh workspace's buffers and LAPACK's kept
   workspaces, its result), from the heap's count. */
static size_t heap_held_by_run(const Config *c)
{
    size_t before = heap_in_use();
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    char err[256];
    assert_true(w && r);
    if (Model_run(c, w, r, NULL, err, sizeof err))
        fail_msg("Model_run: %s", err);
    size_t held = heap_in_use() - before;
    Result_free(r);
    Workspace_free(w);
    return held;
}

/* The memory estimates of `with` and `without` differ by exactly `bytes`, what the settings
   that set them apart add to the buffers, and so do what their runs really hold, within a
   derived slack: malloc's rounding of the `chunks` buffers that differ (a mapped chunk rounds
   up to a 4096-byte page plus its 16-byte header, an arena chunk less), and LAPACK's kept
   workspaces, which the estimate counts as 128·T doubles whatever the settings.  The slack is
   below half of `bytes`, so that a buffer's growth missing, or counted twice, fails. */
static void assert_estimate_and_heap_differ_by(const Config *with, const Config *without,
                                               size_t bytes, int chunks)
{
    assert_int_equal(Model_memory_estimate(with) - Model_memory_estimate(without), bytes);
    heap_held_by_run(with); /* once first: what the libraries set up for good on a first call */
    size_t held = heap_held_by_run(with), held_without = heap_held_by_run(without);
    if (held == 0 && held_without == 0)
        skip(); /* no count of the heap here (heap_count.h: ThreadSanitizer) */
    double slack = chunks * (4096.0 + 16) + sizeof(double) * 128.0 * with->tokens;
    assert_true(bytes > 2 * slack);
    assert_close((double)held - (double)held_without, (double)bytes, slack);
}

/* The memory estimate counts the MLP: its hidden layer on both lanes and its two weights. */
static void test_memory_estimate_counts_the_mlp(void **state)
{
    (void)state;
    Config without = small(32, 48, 2);
    without.heads = 2; /* no value cache for the gradients on either side */
    Config c = without;
    c.mlp = MLP_GELU;
    size_t T = 32, d = 48, hidden = 4 * d;
    assert_estimate_and_heap_differ_by(&c, &without, sizeof(double) * 2 * (T * hidden + hidden * d),
                                       4);
}

/* The memory estimate counts the scratch of the heads' ‖M_h‖₂, which borrows each lane's
   logits', values' and attention's buffers (T², T·d and T² doubles) and its measures' Lanczos
   scratch between steps: at T = 16, d = 192 with four heads of two key heads (the factor
   route: W^K_g's d×d_h transpose and d×d_h product, two d_h×d_h squares, and the largest
   singular value's d_h values beside the proof's Lanczos scratch of d_h), they are too small,
   so the plan grows each to what the norms need, on both lanes.  RoPE, where Zhai et al.'s
   bound is void, measures no norm and needs none of it. */
static void test_memory_estimate_counts_the_qk_norms(void **state)
{
    (void)state;
    Config c = small(16, 192, 2);
    c.heads = 4;
    c.kv_heads = 2;
    Config rotated = c;
    rotated.rope = ROPE_HALF;
    size_t T = 16, d = 192, dh = 48;
    const size_t needed[] = {d * dh, d * dh, 2 * dh * dh, dh + Measure_lanczos_size((int)dh)};
    const size_t own[] = {T * T, T * d, T * T, Measure_tokens_scratch_size((int)T, (int)d)};
    size_t growth = 0;
    for (int i = 0; i < 4; i++)
        growth += needed[i] > own[i] ? needed[i] - own[i] : 0;
    assert_estimate_and_heap_differ_by(&c, &rotated, sizeof(double) * 2 * growth, 8);
}

/* The benchmark's forward pass is the run's network: the same ‖X_L‖ for the full block. */
static void test_forward_is_the_run(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 24;
    c.width = 32;
    c.depth = 3;
    c.heads = 4;
    c.output = OUTPUT_GAUSSIAN;
    c.mlp = MLP_GELU;
    c.ln_place = LN_PLACE_PRE;
    c.layernorm = LAYERNORM_LN;
    c.skip = SKIP_PLAIN;
    Result *r = run(&c);
    double norm = 0;
    assert_int_equal(Model_forward(&c, workspace, &norm), 0);
    assert_relative(log10(norm), r->network.log10_norm[c.depth], 1e-13);
    Result_free(r);
}

static double *draw(const Config *c, Matrix m, int *rows, int *cols)
{
    Init_shape(c, m, rows, cols);
    double *out = malloc(sizeof(double) * (size_t)*rows * *cols);
    RandomStream *random = RandomStream_new();
    assert_int_equal(Init_draw(random, la, c, 7, 2, m, out), 0);
    RandomStream_free(random);
    return out;
}

/* xavier_normal of a d×d matrix is N(0, 2/(d + d)) = N(0, 1/d): the same matrices, bit for
   bit, as the normal scheme with σ_qk = 1/√d (d = 256: 1/16). */
static void test_xavier_is_normal_over_root_d(void **state)
{
    (void)state;
    Config xavier = Config_default(), normal = Config_default();
    xavier.init = INIT_XAVIER;
    normal.sigma_qk = 1.0 / 16;
    for (Matrix m = MATRIX_QUERY; m <= MATRIX_KEY; m++) {
        int rows, cols;
        double *a = draw(&xavier, m, &rows, &cols), *b = draw(&normal, m, &rows, &cols);
        assert_memory_equal(a, b, sizeof(double) * (size_t)rows * cols);
        free(a);
        free(b);
    }
    assert_relative(Config_sigma(&xavier), Config_sigma(&normal), 1e-15);
    /* σ_qk is the normal scheme's (and markov's): its keys say so under another scheme. */
    const Setting *sigma_qk = Settings_find("sigma-qk");
    assert_false(sigma_qk->in_use(&xavier));
    assert_true(sigma_qk->in_use(&normal));
    xavier.attention = ATTENTION_MARKOV;
    assert_true(sigma_qk->in_use(&xavier));
}

/* Orthogonal matrices have every singular value 1: WᵀW = I for the d×d ones and for the
   MLP's (stored tall: W2's columns, W1's rows are orthonormal). */
static void test_orthogonal_singular_values(void **state)
{
    (void)state;
    Config c = Config_default();
    c.width = 48;
    c.mlp = MLP_RELU;
    c.mlp_ratio = 2;
    c.init = INIT_ORTHOGONAL;
    for (Matrix m = MATRIX_QUERY; m < MATRICES; m++) {
        int rows, cols;
        double *w = draw(&c, m, &rows, &cols);
        for (int i = 0; i < cols; i++)
            for (int j = 0; j < cols; j++) {
                double dot = 0;
                for (int k = 0; k < rows; k++)
                    dot += w[k + (size_t)i * rows] * w[k + (size_t)j * rows];
                assert_close(dot, i == j ? 1.0 : 0.0, 1e-13);
            }
        free(w);
    }
}

/* Each scheme's entries have the std its source states (the sample std of d² or R·d² draws,
   within 5 standard errors, 5/√(2n)), and μP's queries are exactly zero. */
static void test_scheme_standard_deviations(void **state)
{
    (void)state;
    const double d = 256, L = 12, R = 4;
    const struct {
        InitScheme scheme;
        Matrix matrix;
        double std;
    } cases[] = {
        {INIT_XAVIER, MATRIX_VALUE, 1 / sqrt(d)},
        {INIT_XAVIER, MATRIX_MLP_IN, sqrt(2 / (d + R * d))},
        {INIT_GPT2, MATRIX_QUERY, 0.02},
        {INIT_GPT2, MATRIX_OUTPUT, 0.02 / sqrt(2 * L)},
        {INIT_GPT2, MATRIX_MLP_OUT, 0.02 / sqrt(2 * L)},
        {INIT_SMALL_INIT, MATRIX_KEY, sqrt(2 / (5 * d))},
        {INIT_MUP, MATRIX_KEY, 1 / sqrt(d)},
        {INIT_MUP, MATRIX_MLP_OUT, 1 / sqrt(R * d)},
        {INIT_DEEPNORM, MATRIX_QUERY, 1 / sqrt(d)},
        {INIT_DEEPNORM, MATRIX_VALUE, pow(8 * L, -0.25) / sqrt(d)},
        {INIT_DEEPNORM, MATRIX_MLP_OUT, pow(8 * L, -0.25) * sqrt(2 / (d + R * d))},
    };
    Config c = Config_default();
    c.depth = (int)L;
    c.mlp = MLP_GELU;
    c.mlp_ratio = (int)R;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        c.init = cases[k].scheme;
        int rows, cols;
        double *w = draw(&c, cases[k].matrix, &rows, &cols), ss = 0;
        size_t n = (size_t)rows * cols;
        for (size_t i = 0; i < n; i++)
            ss += w[i] * w[i];
        assert_relative(sqrt(ss / n), cases[k].std, 5 / sqrt(2.0 * n));
        free(w);
    }
    c.init = INIT_MUP;
    int rows, cols;
    double *q = draw(&c, MATRIX_QUERY, &rows, &cols);
    for (int i = 0; i < rows * cols; i++)
        assert_true(q[i] == 0.0);
    free(q);
    /* Zero queries: every logit is 0 and softmax attention is uniform, {1, 0, …, 0}. */
    c.tokens = c.width = 32;
    c.depth = 1;
    c.mlp = MLP_NONE;
    Result *r = run(&c);
    assert_close(r->eigenvalues[0].re, 1.0, 1e-12);
    assert_close(r->singular_values[1], 0.0, 1e-12);
    Result_free(r);
}

/* Input rows of norm √d: ‖X_0‖ grows by √d, and the first layer's logits by d, which is σ_qk
   times √d on unit rows: the same attention matrix and stable rank (depth 1; d = 64, so the
   scalings are powers of 2 and exact). */
static void test_input_rows_of_norm_root_d(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 24;
    c.width = 64;
    c.depth = 1;
    c.sigma_qk = 0.125;
    c.input_norm = INPUT_NORM_SQRT_D;
    Result *wide = run(&c);
    c.input_norm = INPUT_NORM_UNIT;
    c.sigma_qk = 0.125 * 8.0;
    Result *unit = run(&c);
    assert_close(wide->network.log10_norm[0] - unit->network.log10_norm[0], 0.5 * log10(64.0),
                 1e-13);
    assert_relative(wide->network.stable_rank[1], unit->network.stable_rank[1], 1e-11);
    for (int i = 0; i < c.tokens; i++)
        assert_close(wide->singular_values[i], unit->singular_values[i], 1e-12);
    assert_relative(wide->sigma, unit->sigma, 1e-14);
    Result_free(wide);
    Result_free(unit);
}

int main(void)
{
    Linalg_set_blas_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heads_match_the_reference),
        cmocka_unit_test(test_shown_head_changes_only_the_spectra),
        cmocka_unit_test(test_orthogonal_output_keeps_singular_values),
        cmocka_unit_test(test_linear_logit_scale_is_a_rescaled_sigma),
        cmocka_unit_test(test_heads_say_what_theory_leaves_out),
        cmocka_unit_test(test_heads_must_divide_width),
        cmocka_unit_test(test_pytorch_layernorm_rows),
        cmocka_unit_test(test_pre_layernorm_is_post_layernorm_without_skips),
        cmocka_unit_test(test_rezero_is_the_identity),
        cmocka_unit_test(test_gains_scale_both_terms),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_mlp_matches_the_reference),
        cmocka_unit_test(test_memory_estimate_counts_the_mlp),
        cmocka_unit_test(test_memory_estimate_counts_the_qk_norms),
        cmocka_unit_test(test_forward_is_the_run),
        cmocka_unit_test(test_xavier_is_normal_over_root_d),
        cmocka_unit_test(test_orthogonal_singular_values),
        cmocka_unit_test(test_scheme_standard_deviations),
        cmocka_unit_test(test_input_rows_of_norm_root_d),
        cmocka_unit_test(test_ln_eps_in_pytorch_place),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
