/* Initialisation as the codebases write it (docs/model.md §1.10): OLMo-core's truncated
 * normal against its exact law, the output projections' depth scaling on the drawn matrices,
 * and the embedding input (docs/model.md §1.1): repeated ids give identical rows, the rows'
 * norms have the mean S√d says, and more tokens than dimensions run. */
#include "testing.h"

#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/random.h"
#include "model_fixture.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SEED = 11 };

/* ∫_{−cut}^{cut} z^power φ(z) dz by Simpson's rule on 20000 intervals (error ~1e-15 here): a
   reference that shares nothing with the closed form under test. */
static double truncated_moment(double cut, int power)
{
    enum { N = 20000 };
    double h = 2 * cut / N, total = 0;
    for (int i = 0; i <= N; i++) {
        double z = -cut + i * h, f = pow(z, power) * exp(-0.5 * z * z) / sqrt(2 * M_PI);
        total += f * (i == 0 || i == N ? 1 : (i % 2 ? 4 : 2));
    }
    return total * h / 3;
}

static void test_truncated_std_against_quadrature(void **state)
{
    (void)state;
    for (double cut = 1; cut <= 4; cut++) {
        double variance = truncated_moment(cut, 2) / truncated_moment(cut, 0);
        assert_relative(Init_truncated_std(cut), sqrt(variance), 1e-12);
    }
    /* torch's trunc_normal_(std=S, a=−3S, b=3S) has entries of std 0.98658·S, not S. */
    assert_close(Init_truncated_std(INIT_TRUNCATION), 0.98658, 5e-6);
}

static Config trunc_normal_config(void)
{
    Config c = Config_default();
    c.init = INIT_TRUNC_NORMAL;
    c.width = c.tokens = 256;
    c.output = OUTPUT_GAUSSIAN;
    c.mlp = MLP_GELU;
    c.mlp_ratio = 1;
    return c;
}

/* Every entry of W^Q, W^K, W^V, W^O and the MLP's over 3 layers (917504 draws) lies within
   ±3S, and their std is the truncated law's t·S.  The sample variance s² of n i.i.d. entries
   has std √((μ4 − σ⁴)/n), μ4 = S⁴·E[z⁴ | |z| ≤ 3] (quadrature); 5 of them is the tolerance,
   0.0067·S² here, while an untruncated normal's S² lies 0.027·S² away. */
static void test_trunc_normal_draws(void **state)
{
    (void)state;
    Config c = trunc_normal_config();
    double S = c.init_std, limit = INIT_TRUNCATION * S;
    size_t dd = (size_t)c.width * c.width, n = 0;
    double *w = malloc(sizeof(double) * dd), sum = 0, sum2 = 0;
    RandomStream *random = RandomStream_new();
    assert_true(w && random);
    const Matrix matrices[] = {MATRIX_QUERY,  MATRIX_KEY,    MATRIX_VALUE,
                               MATRIX_OUTPUT, MATRIX_MLP_IN, MATRIX_MLP_OUT};
    c.depth_scale = DEPTH_SCALE_NONE; /* W^O and W2 at S too */
    for (int layer = 1; layer <= 3; layer++)
        for (size_t m = 0; m < sizeof matrices / sizeof matrices[0]; m++) {
            assert_int_equal(Init_draw(random, la, &c, SEED, layer, matrices[m], w), 0);
            for (size_t i = 0; i < dd; i++) {
                if (!(fabs(w[i]) <= limit))
                    fail_msg("matrix %d, layer %d: entry %g beyond 3S = %g", (int)matrices[m],
                             layer, w[i], limit);
                sum += w[i];
                sum2 += w[i] * w[i];
            }
            n += dd;
        }
    double t = Init_truncated_std(INIT_TRUNCATION), variance = t * t * S * S;
    double mu4 =
        pow(S, 4) * truncated_moment(INIT_TRUNCATION, 4) / truncated_moment(INIT_TRUNCATION, 0);
    double tolerance = 5 * sqrt((mu4 - variance * variance) / n);
    double sample = sum2 / n - (sum / n) * (sum / n);
    assert_close(sample, variance, tolerance);
    assert_true(fabs(sample - S * S) > 3 * tolerance); /* the test tells the two laws apart */
    assert_close(sum / n, 0, 5 * sqrt(variance / n));
    /* The σ readouts see the entries' own std. */
    assert_relative(Init_effective_sigma_qk(&c), t * S, 1e-15);
    RandomStream_free(random);
    free(w);
}

/* Matrix m of layer `layer` drawn under c. */
static double *drawn(const Config *c, Matrix m, int layer)
{
    int rows, cols;
    Init_shape(c, m, &rows, &cols);
    double *w = malloc(sizeof(double) * rows * cols);
    RandomStream *random = RandomStream_new();
    assert_true(w && random);
    assert_int_equal(Init_draw(random, la, c, SEED, layer, m, w), 0);
    RandomStream_free(random);
    return w;
}

/* W^O, W2 and a gated MLP's up projection (OLMo-core scales its w3 with w2) under
   --depth-scale total are the unscaled draws times 1/√(2L) at every layer, under per-layer
   times 1/√(2ℓ) (each entry to within the two roundings of the products), and bit for bit the
   draw of a scheme whose std is S/√(2ℓ) unscaled; W^Q, W^V and the gate are untouched;
   gpt2's own scaling is total on W^O and W2 alone (HF's c_proj). */
static void test_depth_scale_factors(void **state)
{
    (void)state;
    const InitScheme schemes[] = {INIT_NORMAL, INIT_GPT2, INIT_TRUNC_NORMAL};
    for (size_t k = 0; k < sizeof schemes / sizeof schemes[0]; k++) {
        Config c = trunc_normal_config();
        c.init = schemes[k];
        c.width = c.tokens = 32;
        c.depth = 5;
        c.mlp = MLP_SWIGLU;
        const Matrix matrices[] = {MATRIX_OUTPUT, MATRIX_MLP_OUT, MATRIX_MLP_UP,
                                   MATRIX_QUERY,  MATRIX_VALUE,   MATRIX_MLP_IN};
        for (int layer = 1; layer <= c.depth; layer++)
            for (size_t m = 0; m < sizeof matrices / sizeof matrices[0]; m++) {
                Config none = c, total = c, per_layer = c;
                none.depth_scale = DEPTH_SCALE_NONE;
                total.depth_scale = DEPTH_SCALE_TOTAL;
                per_layer.depth_scale = DEPTH_SCALE_PER_LAYER;
                bool output = matrices[m] == MATRIX_OUTPUT || matrices[m] == MATRIX_MLP_OUT;
                bool scaled = output || matrices[m] == MATRIX_MLP_UP;
                double by_total = scaled ? 1 / sqrt(2.0 * c.depth) : 1,
                       by_layer = scaled ? 1 / sqrt(2.0 * layer) : 1;
                double *plain = drawn(&none, matrices[m], layer),
                       *a = drawn(&total, matrices[m], layer),
                       *b = drawn(&per_layer, matrices[m], layer);
                size_t dd = (size_t)c.width * c.width;
                for (size_t i = 0; i < dd; i++) {
                    assert_relative(a[i], plain[i] * by_total, 4e-16);
                    assert_relative(b[i], plain[i] * by_layer, 4e-16);
                }
                if (scaled && Init_uses_one_std(&c)) {
                    Config reference = none;
                    reference.init_std = c.init_std / sqrt(2.0 * layer);
                    double *r = drawn(&reference, matrices[m], layer);
                    assert_memory_equal(r, b, sizeof(double) * dd);
                    free(r);
                }
                if (c.init == INIT_GPT2) { /* HF's c_proj: W^O and W2 alone */
                    Config scheme = c;
                    scheme.depth_scale = DEPTH_SCALE_SCHEME;
                    double *g = drawn(&scheme, matrices[m], layer);
                    assert_memory_equal(g, output ? a : plain, sizeof(double) * dd);
                    free(g);
                }
                free(plain);
                free(a);
                free(b);
            }
    }
}

static double dot(int n, const double *a, const double *b)
{
    double total = 0;
    for (int i = 0; i < n; i++)
        total += a[i] * b[i];
    return total;
}

/* A Haar W^O keeps its norm under every depth scale: WᵀW = I. */
static void test_orthogonal_output_keeps_its_norm(void **state)
{
    (void)state;
    Config c = trunc_normal_config();
    c.width = c.tokens = 24;
    c.output = OUTPUT_ORTHOGONAL;
    c.depth_scale = DEPTH_SCALE_TOTAL;
    c.depth = 8;
    double *w = drawn(&c, MATRIX_OUTPUT, 3);
    int d = c.width;
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++)
            assert_close(dot(d, w + (size_t)i * d, w + (size_t)j * d), i == j, 1e-13);
    free(w);
}

/* The embedding input of T tokens in d from V ids, every other setting at its default. */
static Config embedding_config(int T, int d, int V)
{
    Config c = Config_default();
    c.input = INPUT_EMBEDDING;
    c.tokens = T;
    c.width = d;
    c.vocab = V;
    return c;
}

/* X0 of c (T×d) from Layer_input. */
static double *input_of(const Config *c)
{
    size_t td = (size_t)c->tokens * c->width;
    double *x = malloc(sizeof(double) * td), *scratch = malloc(sizeof(double) * td);
    RandomStream *random = RandomStream_new();
    assert_true(x && scratch && random);
    assert_int_equal(Layer_input(random, la, c, SEED, x, scratch), 0);
    RandomStream_free(random);
    free(scratch);
    return x;
}

/* The token ids, drawn here with GSL itself from the ids' stream: mt19937 seeded with the
   stream's seed, gsl_rng_uniform_int on V. */
static void token_ids(const Config *c, int *ids)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    assert_non_null(rng);
    gsl_rng_set(rng, Random_stream_seed(SEED, 0, ROLE_TOKEN_IDS));
    for (int i = 0; i < c->tokens; i++)
        ids[i] = (int)gsl_rng_uniform_int(rng, (unsigned long)c->vocab);
    gsl_rng_free(rng);
}

static bool rows_equal(const Config *c, const double *x, int a, int b)
{
    for (int j = 0; j < c->width; j++)
        if (memcmp(&x[a + (size_t)j * c->tokens], &x[b + (size_t)j * c->tokens], sizeof(double)))
            return false;
    return true;
}

/* T = 200 tokens of d = 16 from V = 7 ids: two rows are identical bit for bit exactly when
   their ids are equal; under trunc-normal every entry lies within ±3S. */
static void test_repeated_ids_give_identical_rows(void **state)
{
    (void)state;
    Config c = embedding_config(200, 16, 7);
    const InitScheme schemes[] = {INIT_GPT2, INIT_TRUNC_NORMAL, INIT_NORMAL};
    for (size_t k = 0; k < sizeof schemes / sizeof schemes[0]; k++) {
        c.init = schemes[k];
        char err[256];
        assert_int_equal(Config_validate(&c, err, sizeof err), 0); /* T > d */
        double *x = input_of(&c);
        int ids[200], pairs = 0;
        token_ids(&c, ids);
        for (int a = 0; a < c.tokens; a++)
            for (int b = a + 1; b < c.tokens; b++) {
                if (rows_equal(&c, x, a, b) != (ids[a] == ids[b]))
                    fail_msg("rows %d, %d (ids %d, %d): %s", a, b, ids[a], ids[b],
                             ids[a] == ids[b] ? "differ" : "are equal");
                pairs += ids[a] == ids[b];
            }
        assert_true(pairs > 0);
        if (c.init == INIT_TRUNC_NORMAL)
            for (size_t i = 0; i < (size_t)c.tokens * c.width; i++)
                assert_true(fabs(x[i]) <= INIT_TRUNCATION * c.init_std);
        free(x);
    }
}

/* The rows' norms: ‖x_i‖/S is χ with d degrees of freedom, mean m = √2·Γ((d+1)/2)/Γ(d/2) and
   variance d − m².  The mean over the n distinct ids' rows lies within 5·S·√((d − m²)/n) of
   S·m, and S·m within S·(√d − m) < S/(4√d)·1.01 of S√d: S√d is matched within their sum.
   S is --init-std under gpt2, and 1/√d (unit rows) or 1 (√d rows) under the normal scheme. */
static void test_row_norms_match_s_sqrt_d(void **state)
{
    (void)state;
    Config c = embedding_config(4096, 64, 50257);
    const struct {
        InitScheme init;
        InputNorm norm;
        double std;
    } cases[] = {{INIT_GPT2, INPUT_NORM_UNIT, 0.02},
                 {INIT_NORMAL, INPUT_NORM_UNIT, 1 / 8.0},
                 {INIT_NORMAL, INPUT_NORM_SQRT_D, 1.0}};
    int d = c.width, T = c.tokens;
    double m = sqrt(2.0) * exp(lgamma((d + 1) / 2.0) - lgamma(d / 2.0));
    assert_true(sqrt((double)d) - m < 1.01 / (4 * sqrt((double)d)));
    int *ids = malloc(sizeof(int) * T);
    bool *seen = calloc((size_t)c.vocab, sizeof(bool));
    assert_true(ids && seen);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        c.init = cases[k].init;
        c.input_norm = cases[k].norm;
        assert_relative(Init_embedding_std(&c), cases[k].std, 1e-15);
        double *x = input_of(&c), total = 0, S = cases[k].std;
        token_ids(&c, ids);
        memset(seen, 0, sizeof(bool) * (size_t)c.vocab);
        int n = 0;
        for (int i = 0; i < T; i++) {
            if (seen[ids[i]])
                continue;
            seen[ids[i]] = true;
            n++;
            double norm2 = 0;
            for (int j = 0; j < d; j++)
                norm2 += x[i + (size_t)j * T] * x[i + (size_t)j * T];
            total += sqrt(norm2);
        }
        assert_true(n > T * 9 / 10);
        double spread = 5 * S * sqrt((d - m * m) / n);
        assert_close(total / n, S * m, spread);
        assert_close(total / n, S * sqrt((double)d), spread + 1.01 * S / (4 * sqrt((double)d)));
        free(x);
    }
    free(ids);
    free(seen);
}

/* d normals of stream (seed, k, role) times std, drawn here with GSL itself. */
static void gsl_row(uint64_t seed, int k, Role role, double std, int d, double *row)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    assert_non_null(rng);
    gsl_rng_set(rng, Random_stream_seed(seed, k, role));
    for (int j = 0; j < d; j++)
        row[j] = std * gsl_ran_gaussian_ziggurat(rng, 1.0);
    gsl_rng_free(rng);
}

/* GPT-2's learned positions: row i is, loop by loop from GSL's own draws, token row k_i
   (std S) plus position row i (std S/2), bit for bit; repeated ids no longer give equal rows;
   and the mean squared norm over T = 2048 rows is d·(S² + S²/4) within 5 of its standard
   errors (‖x‖²/σ² is χ²_d: variance 2d·σ⁴ per row, rows of distinct ids and positions
   independent, repeated ids' token rows only correlate them: n = distinct ids). */
static void test_learned_positions(void **state)
{
    (void)state;
    Config c = embedding_config(2048, 32, 50257);
    c.positions = POSITIONS_LEARNED;
    c.init = INIT_GPT2;
    int T = c.tokens, d = c.width;
    double S = c.init_std, *x = input_of(&c), token[32], position[32], total = 0;
    int *ids = malloc(sizeof(int) * T);
    assert_non_null(ids);
    token_ids(&c, ids);
    for (int i = 0; i < T; i++) {
        gsl_row(SEED, ids[i], ROLE_EMBEDDING, S, d, token);
        gsl_row(SEED, i, ROLE_POSITION, S / 2, d, position);
        for (int j = 0; j < d; j++) {
            double want = token[j] + position[j], got = x[i + (size_t)j * T];
            if (memcmp(&want, &got, sizeof want))
                fail_msg("row %d, column %d: %.17g, loop by loop %.17g", i, j, got, want);
            total += got * got;
        }
    }
    double variance = S * S * 1.25, mean = total / T;
    assert_close(mean, d * variance, 5 * sqrt(2.0 * d) * variance / sqrt(T * 0.9));
    free(ids);
    free(x);
    /* V = 1: every id the same, the rows differ by their positions alone. */
    c.vocab = 1;
    c.tokens = 8;
    x = input_of(&c);
    for (int b = 1; b < c.tokens; b++)
        assert_false(rows_equal(&c, x, 0, b));
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_std_against_quadrature),
        cmocka_unit_test(test_trunc_normal_draws),
        cmocka_unit_test(test_depth_scale_factors),
        cmocka_unit_test(test_orthogonal_output_keeps_its_norm),
        cmocka_unit_test(test_repeated_ids_give_identical_rows),
        cmocka_unit_test(test_row_norms_match_s_sqrt_d),
        cmocka_unit_test(test_learned_positions),
    };
    return cmocka_run_group_tests_name("init_codebases", tests, setup, teardown);
}
