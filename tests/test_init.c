/* Initialisation (docs/model.md §1.10): mimetic initialisation's products against the SVD
 * of their targets, drawn here from the streams directly, and the per-matrix choices: each
 * changes its own matrix alone, into what it names. */
#include "testing.h"

#include "attnscope/init.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "attnscope/random.h"
#include "attnscope/theory.h"
#include "model_fixture.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SEED = 5, LAYER = 2 };

/* Singular values of the n×n matrix a, descending (a kept). */
static void singular_values(int n, const double *a, double *s)
{
    double *copy = malloc(sizeof(double) * (size_t)n * n);
    assert_non_null(copy);
    memcpy(copy, a, sizeof(double) * (size_t)n * n);
    assert_int_equal(Linalg_singular_values(la, n, n, copy, s), 0);
    free(copy);
}

/* The target of head h: (α/√d)·G_h + shift·I, G_h the h-th d² normals of the role's stream
   of (SEED, LAYER), drawn here in one piece (the code under test draws head by head). */
static void target(const Config *c, Role role, double alpha, double shift, int h, double *z)
{
    int d = c->width;
    size_t dd = (size_t)d * d;
    double *all = malloc(sizeof(double) * dd * (size_t)(h + 1));
    RandomStream *random = RandomStream_new();
    assert_true(all && random);
    RandomStream_gaussian(random, SEED, LAYER, role, alpha / sqrt((double)d), all,
                          dd * (size_t)(h + 1));
    memcpy(z, all + dd * (size_t)h, sizeof(double) * dd);
    for (int i = 0; i < d; i++)
        z[i + (size_t)i * d] += shift;
    RandomStream_free(random);
    free(all);
}

/* product (d×d) has z's singular values from..from + count − 1 and zeros: with from = 0 the
   best rank-count approximation of z, which Eckart–Young also checks: ‖z − product‖_F² is the
   sum of z's trailing squared singular values.  An SVD is backward stable, so its factors
   reproduce z to within a small multiple of d·ε·‖z‖₂, and the product of two factors adds as
   much again: the tolerance is 16·d·ε·s_1(z). */
static void assert_singular_piece(int d, int from, int count, const double *z,
                                  const double *product, const char *what, int h)
{
    size_t dd = (size_t)d * d;
    double *want = malloc(sizeof(double) * d), *got = malloc(sizeof(double) * d);
    assert_true(want && got);
    singular_values(d, z, want);
    singular_values(d, product, got);
    double tolerance = 16.0 * d * DBL_EPSILON * want[0], tail = 0, off = 0;
    for (int i = 0; i < d; i++) {
        double expected = i < count ? want[from + i] : 0.0;
        if (fabs(got[i] - expected) > tolerance)
            fail_msg("%s, head %d: s_%d = %.17g, the target's %.17g", what, h, i, got[i], expected);
        if (i >= count)
            tail += want[i] * want[i];
    }
    if (from == 0) {
        for (size_t i = 0; i < dd; i++)
            off += (z[i] - product[i]) * (z[i] - product[i]);
        /* ‖R‖_F − √tail, each of the d singular values off by at most the tolerance. */
        if (fabs(sqrt(off) - sqrt(tail)) > d * tolerance)
            fail_msg("%s, head %d: |target - product|_F = %.17g, Eckart-Young %.17g", what, h,
                     sqrt(off), sqrt(tail));
    }
    free(want);
    free(got);
}

static Config mimetic(int heads)
{
    Config c = Config_default();
    c.width = 24;
    c.tokens = 24;
    c.heads = heads;
    c.init = INIT_MIMETIC;
    c.output = OUTPUT_GAUSSIAN;
    /* Constants away from the defaults, with distinct singular values in both targets. */
    c.init_alpha = 0.7;
    c.init_beta = 0.5;
    c.init_vo_alpha = 0.9;
    c.init_vo_beta = 0.3;
    return c;
}

/* Head by head, W^Q_h W^K_hᵀ is the best rank-d_h approximation of α₁Z₁_h + β₁I (the query
   stream's h-th d² numbers); the layer's W^V W^O is α₂Z₂ − β₂I itself (the value stream's
   first d² numbers), head h's W^V_h W^O_h its h-th group of d_h singular triplets. */
static void test_mimetic_products(void **state)
{
    (void)state;
    const int head_counts[] = {1, 3};
    for (size_t k = 0; k < sizeof head_counts / sizeof head_counts[0]; k++) {
        Config c = mimetic(head_counts[k]);
        char err[256];
        assert_int_equal(Config_validate(&c, err, sizeof err), 0);
        int d = c.width, dh = Config_head_width(&c);
        size_t dd = (size_t)d * d;
        double *wq = malloc(sizeof(double) * dd), *wk = malloc(sizeof(double) * dd),
               *wv = malloc(sizeof(double) * dd), *wo = malloc(sizeof(double) * dd),
               *z = malloc(sizeof(double) * dd), *product = malloc(sizeof(double) * dd),
               *scratch = malloc(sizeof(double) * Init_scratch_doubles(&c));
        RandomStream *random = RandomStream_new();
        assert_true(wq && wk && wv && wo && z && product && scratch && random);
        assert_int_equal(Init_draw_query_key(random, la, &c, SEED, LAYER, wq, wk, scratch), 0);
        assert_int_equal(
            Init_draw_with_scratch(random, la, &c, SEED, LAYER, MATRIX_VALUE, wv, scratch), 0);
        assert_int_equal(
            Init_draw_with_scratch(random, la, &c, SEED, LAYER, MATRIX_OUTPUT, wo, scratch), 0);
        /* Without scratch a factor cannot be drawn, and says so. */
        assert_int_equal(Init_draw(random, la, &c, SEED, LAYER, MATRIX_VALUE, z), -1);
        for (int h = 0; h < c.heads; h++) {
            size_t block = (size_t)h * dh;
            target(&c, ROLE_QUERY, c.init_alpha, c.init_beta, h, z);
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, d, d, dh, 1.0, wq + block * d, d,
                        wk + block * d, d, 0.0, product, d);
            assert_singular_piece(d, 0, dh, z, product, "W^Q_h W^K_h^T", h);
            /* W^V_h: columns h·d_h..; W^O_h: rows h·d_h.. */
            target(&c, ROLE_VALUE, c.init_vo_alpha, -c.init_vo_beta, 0, z);
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, d, d, dh, 1.0, wv + block * d, d,
                        wo + block, d, 0.0, product, d);
            assert_singular_piece(d, h * dh, dh, z, product, "W^V_h W^O_h", h);
        }
        target(&c, ROLE_VALUE, c.init_vo_alpha, -c.init_vo_beta, 0, z);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0, wv, d, wo, d, 0.0,
                    product, d);
        assert_singular_piece(d, 0, d, z, product, "W^V W^O", -1);
        /* The weights of a standard layer: its logit scale stays 1/√d_h. */
        assert_true(Init_logit_scale(&c) == 1.0 / sqrt((double)dh));
        RandomStream_free(random);
        free(wq);
        free(wk);
        free(wv);
        free(wo);
        free(z);
        free(product);
        free(scratch);
    }
}

/* Without an output projection W^V is the whole α₂Z₂ − β₂I (Z₂ the value stream's first d²
   numbers), whatever the head count: nothing to factorise, and the same W_VO as W^V W^O. */
static void test_mimetic_value_without_output(void **state)
{
    (void)state;
    Config c = mimetic(3);
    c.output = OUTPUT_IDENTITY;
    int d = c.width;
    size_t dd = (size_t)d * d;
    double *wv = malloc(sizeof(double) * dd), *z = malloc(sizeof(double) * dd);
    RandomStream *random = RandomStream_new();
    assert_true(wv && z && random);
    assert_int_equal(Init_draw(random, la, &c, SEED, LAYER, MATRIX_VALUE, wv), 0);
    target(&c, ROLE_VALUE, c.init_vo_alpha, -c.init_vo_beta, 0, z);
    for (size_t i = 0; i < dd; i++)
        assert_true(fabs(wv[i] - z[i]) <= DBL_EPSILON * fabs(z[i]));
    RandomStream_free(random);
    free(wv);
    free(z);
}

/* Every matrix of a layer as the program draws it: W^Q, W^K together, then the others. */
static void draw_all(const Config *c, double *out[MATRICES])
{
    double *scratch = malloc(sizeof(double) * (Init_scratch_doubles(c) + 1));
    RandomStream *random = RandomStream_new();
    assert_true(scratch && random);
    for (Matrix m = MATRIX_QUERY; m < MATRICES; m++) {
        int rows, cols;
        Init_shape(c, m, &rows, &cols);
        out[m] = malloc(sizeof(double) * (size_t)rows * cols);
        assert_non_null(out[m]);
    }
    assert_int_equal(Init_draw_query_key(random, la, c, SEED, LAYER, out[MATRIX_QUERY],
                                         out[MATRIX_KEY], scratch),
                     0);
    for (Matrix m = MATRIX_VALUE; m < MATRICES; m++)
        assert_int_equal(Init_draw_with_scratch(random, la, c, SEED, LAYER, m, out[m], scratch), 0);
    RandomStream_free(random);
    free(scratch);
}

static void free_all(double *out[MATRICES])
{
    for (Matrix m = MATRIX_QUERY; m < MATRICES; m++)
        free(out[m]);
}

static MatrixInitChoice *choice_field(Config *c, Matrix m)
{
    switch (m) {
    case MATRIX_QUERY:
        return &c->init_query;
    case MATRIX_KEY:
        return &c->init_key;
    case MATRIX_VALUE:
        return &c->init_value;
    case MATRIX_OUTPUT:
        return &c->init_output;
    default:
        return &c->init_mlp;
    }
}

/* What a choice names, drawn without it: the named scheme's matrix (the scheme's other
   matrices are not looked at), the identity or zero. */
static void named(const Config *base, Matrix m, MatrixInitChoice choice, double *out)
{
    int rows, cols;
    Init_shape(base, m, &rows, &cols);
    size_t n = (size_t)rows * cols;
    if (choice == MATRIX_INIT_IDENTITY || choice == MATRIX_INIT_ZERO) {
        memset(out, 0, sizeof(double) * n);
        for (int i = 0; choice == MATRIX_INIT_IDENTITY && i < rows; i++)
            out[i + (size_t)i * rows] = 1.0;
        return;
    }
    Config scheme = *base;
    scheme.init = choice == MATRIX_INIT_NORMAL   ? INIT_NORMAL
                  : choice == MATRIX_INIT_XAVIER ? INIT_XAVIER
                                                 : INIT_ORTHOGONAL;
    double *all[MATRICES];
    draw_all(&scheme, all);
    memcpy(out, all[m], sizeof(double) * n);
    free_all(all);
}

/* A choice changes its matrix alone (the MLP's choice all of its matrices), into the matrix
   it names, under schemes that draw i.i.d., orthogonal and factorised matrices; every other
   matrix stays bit for bit the scheme's. */
static void test_choices_change_their_matrix_alone(void **state)
{
    (void)state;
    const InitScheme schemes[] = {INIT_NORMAL, INIT_GPT2, INIT_ORTHOGONAL, INIT_CUTTING_SKIP,
                                  INIT_MIMETIC};
    for (size_t s = 0; s < sizeof schemes / sizeof schemes[0]; s++) {
        Config base = Config_default();
        base.width = 16;
        base.tokens = 16;
        base.heads = 2;
        base.mlp = MLP_RELU;
        base.mlp_ratio = 1; /* square: the identity is a choice for the MLP too */
        base.init = schemes[s];
        base.output = schemes[s] == INIT_CUTTING_SKIP ? OUTPUT_ORTHOGONAL : OUTPUT_GAUSSIAN;
        double *before[MATRICES];
        draw_all(&base, before);
        for (Matrix m = MATRIX_QUERY; m <= MATRIX_MLP_IN; m++)
            for (MatrixInitChoice choice = MATRIX_INIT_NORMAL; choice <= MATRIX_INIT_ZERO;
                 choice++) {
                Config c = base;
                *choice_field(&c, m) = choice;
                char err[256];
                if (Config_validate(&c, err, sizeof err))
                    continue; /* refused (a non-orthogonal W^O under --wo orthogonal) */
                double *after[MATRICES];
                draw_all(&c, after);
                for (Matrix other = MATRIX_QUERY; other < MATRICES; other++) {
                    int rows, cols;
                    Init_shape(&c, other, &rows, &cols);
                    size_t bytes = sizeof(double) * (size_t)rows * cols;
                    bool chosen =
                        other == m ||
                        (m == MATRIX_MLP_IN && (other == MATRIX_MLP_OUT || other == MATRIX_MLP_UP));
                    if (!chosen) {
                        assert_memory_equal(after[other], before[other], bytes);
                        continue;
                    }
                    double *want = malloc(bytes);
                    assert_non_null(want);
                    named(&base, other, choice, want);
                    if (memcmp(after[other], want, bytes) != 0)
                        fail_msg("scheme %d, matrix %d chosen %d: not the matrix it names",
                                 (int)schemes[s], (int)other, (int)choice);
                    free(want);
                }
                free_all(after);
            }
        free_all(before);
    }
}

/* A zero W^Q makes every logit 0: softmax attention is uniform, 1/T everywhere, and one
   layer without a skip leaves rank one. */
static void test_zero_query_gives_uniform_attention(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 12;
    c.width = 12;
    c.depth = 1;
    c.init_query = MATRIX_INIT_ZERO;
    char err[256];
    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
    Result *r = Result_new();
    assert_non_null(r);
    if (Model_run(&c, workspace, r, NULL, err, sizeof err))
        fail_msg("Model_run: %s", err);
    /* The uniform matrix's eigenvalues: 1 once, 0 T − 1 times. */
    assert_close(r->eigenvalues[0].re, 1.0, 1e-14);
    for (int i = 1; i < c.tokens; i++)
        assert_true(hypot(r->eigenvalues[i].re, r->eigenvalues[i].im) < 1e-14);
    assert_close(r->network.stable_rank[1], 1.0, 1e-12);
    Result_free(r);
}

/* Identity attention with an identity W^V keeps the orthonormal input as it is: the stable
   rank stays T at every layer (the normal scheme's Gaussian W^V loses rank). */
static void test_identity_value_keeps_the_input(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 16;
    c.width = 16;
    c.depth = 4;
    c.attention = ATTENTION_IDENTITY;
    c.init_value = MATRIX_INIT_IDENTITY;
    char err[256];
    Result *r = Result_new();
    assert_non_null(r);
    if (Model_run(&c, workspace, r, NULL, err, sizeof err))
        fail_msg("Model_run: %s", err);
    for (int l = 0; l <= c.depth; l++)
        assert_close(r->network.stable_rank[l], c.tokens, 1e-10 * c.tokens);
    Result_free(r);
}

/* The stable-rank theory is that of N(0, 1) values: it follows the value matrix's choice,
   not the scheme's name. */
static void test_theory_follows_the_values(void **state)
{
    (void)state;
    double sr[5], counterpart[5];
    TheoryPrediction p = {.stable_rank = sr, .counterpart_stable_rank = counterpart};
    Config c = Config_default();
    c.tokens = c.width = 64; /* at T = 16 the identity limit is below 1 by layer 3: null */
    c.depth = 4;
    c.attention = ATTENTION_IDENTITY;
    Theory_predict(&c, &p);
    assert_true(isfinite(sr[4]) && sr[4] < c.tokens);
    c.init_value = MATRIX_INIT_IDENTITY; /* the rank stays T: no Gaussian-value curve */
    Theory_predict(&c, &p);
    assert_true(isnan(sr[4]));
    assert_non_null(p.stable_rank_note);
    c.init = INIT_XAVIER;
    c.init_value = MATRIX_INIT_NORMAL;
    c.attention = ATTENTION_MARKOV;
    Theory_predict(&c, &p);
    assert_true(isfinite(sr[4]));
    /* xavier's values are Gaussian of std 1/√d: the stable rank is free of their scale. */
    c.init_value = MATRIX_INIT_SCHEME;
    Theory_predict(&c, &p);
    assert_true(isfinite(sr[4]));
    c.init_value = MATRIX_INIT_ORTHOGONAL;
    Theory_predict(&c, &p);
    assert_true(isnan(sr[4]));
}

/* The memory estimate holds the SVDs' scratch (3d² + d) and LAPACK's workspace (4d² + 7d)
   under a factorised scheme, and nothing more once the choices draw every matrix i.i.d. */
static void test_memory_estimate_counts_the_svds(void **state)
{
    (void)state;
    Config c = Config_default();
    Config scheme = c;
    scheme.init = INIT_MIMETIC;
    size_t d = (size_t)c.width, extra = Model_memory_estimate(&scheme) - Model_memory_estimate(&c);
    assert_true(extra >= sizeof(double) * 7 * d * d);
    scheme.init = INIT_CUTTING_SKIP;
    assert_int_equal(Model_memory_estimate(&scheme) - Model_memory_estimate(&c), extra);
}

/* σ_qk is in use where a normal choice draws W^Q or W^K, under any scheme. */
static void test_sigma_qk_follows_the_choices(void **state)
{
    (void)state;
    const Setting *sigma_qk = Settings_find("sigma-qk");
    Config c = Config_default();
    c.init = INIT_XAVIER;
    assert_false(sigma_qk->in_use(&c));
    c.init_key = MATRIX_INIT_NORMAL;
    assert_true(sigma_qk->in_use(&c));
    c = Config_default();
    c.init_query = MATRIX_INIT_XAVIER;
    c.init_key = MATRIX_INIT_ORTHOGONAL;
    assert_false(sigma_qk->in_use(&c));
}

int main(void)
{
    Linalg_set_blas_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mimetic_products),
        cmocka_unit_test(test_mimetic_value_without_output),
        cmocka_unit_test(test_choices_change_their_matrix_alone),
        cmocka_unit_test(test_zero_query_gives_uniform_attention),
        cmocka_unit_test(test_identity_value_keeps_the_input),
        cmocka_unit_test(test_theory_follows_the_values),
        cmocka_unit_test(test_memory_estimate_counts_the_svds),
        cmocka_unit_test(test_sigma_qk_follows_the_choices),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
