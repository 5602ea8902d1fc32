/* The attention map (docs/model.md §2, attention_map.h):
 *   - block means against a loop over every token of every block, written out here, for T
 *     divisible by the block and not (the last cells average what is left);
 *   - coarsening a map is exact: the map at block k·b from the map at b equals the block means
 *     of the matrix at k·b;
 *   - a run's product A_ℓ⋯A_1 (--attention-map product) against a loop-by-loop product of the
 *     shown head's matrices as the run applies them (Progress.attention_applied), its column
 *     mass summing to 1, and under a causal mask at depth 8 carried by the first column;
 *   - a run that starts from kept layers computes the same product (from the input again).
 */
#include "testing.h"

#include "model_fixture.h"

#include "attnscope/attention_map.h"
#include "attnscope/model.h"

#include <stdlib.h>
#include <string.h>

/* A matrix whose entries all differ: a_ij = sin(i + 2j) + 2. */
static double *test_matrix(int T)
{
    double *a = malloc(sizeof(double) * T * T);
    assert_non_null(a);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            a[i * T + j] = sin(i + 2.0 * j) + 2;
    return a;
}

/* The mean of a over rows r0..r1−1 and columns c0..c1−1, by a plain loop. */
static double block_mean(const double *a, int T, int r0, int r1, int c0, int c1)
{
    double sum = 0;
    for (int i = r0; i < r1; i++)
        for (int j = c0; j < c1; j++)
            sum += a[i * T + j];
    return sum / ((double)(r1 - r0) * (c1 - c0));
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

static void check_block_means(int T, int block)
{
    double *a = test_matrix(T);
    AttentionMap m;
    assert_int_equal(AttentionMap_reduce(a, T, block, &m), 0);
    int cells = (T + block - 1) / block;
    assert_int_equal(m.cells, cells);
    assert_int_equal(m.block, block);
    for (int r = 0; r < cells; r++)
        for (int c = 0; c < cells; c++) {
            double expected = block_mean(a, T, r * block, min_int((r + 1) * block, T), c * block,
                                         min_int((c + 1) * block, T));
            assert_close(m.mean[r * cells + c], expected, 1e-14 * fabs(expected));
        }
    AttentionMap_release(&m);
    free(a);
}

static void test_block_means_against_loops(void **state)
{
    (void)state;
    check_block_means(48, 4);  /* divides */
    check_block_means(37, 5);  /* 8 cells, the last averaging 2 tokens */
    check_block_means(37, 1);  /* the matrix itself */
    check_block_means(37, 37); /* one cell: the mean of all */
    check_block_means(4096, AttentionMap_block_for(4096, ATTENTION_MAP_CELLS));
    assert_int_equal(AttentionMap_block_for(4096, ATTENTION_MAP_CELLS), 8);
    assert_int_equal(AttentionMap_block_for(513, ATTENTION_MAP_CELLS), 2);
    assert_int_equal(AttentionMap_block_for(100, ATTENTION_MAP_CELLS), 1);
    assert_int_equal(AttentionMap_block_for(1000, 37), 28); /* ⌈1000/28⌉ = 36 ≤ 37 < ⌈1000/27⌉ */
}

/* The map bit for bit as entry-by-entry sums into cell j / block give it, each over its
   count (how the map was first computed, and what a reordered sum would break). */
static void check_same_as_entry_by_entry(int T, int block)
{
    double *a = test_matrix(T);
    int cells = (T + block - 1) / block;
    double *expected = calloc((size_t)cells * cells, sizeof(double));
    assert_non_null(expected);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            expected[(i / block) * cells + j / block] += a[i * T + j];
    for (int r = 0; r < cells; r++)
        for (int c = 0; c < cells; c++)
            expected[r * cells + c] /= (double)(min_int((r + 1) * block, T) - r * block) *
                                       (min_int((c + 1) * block, T) - c * block);
    AttentionMap m;
    assert_int_equal(AttentionMap_reduce(a, T, block, &m), 0);
    assert_int_equal(m.cells, cells);
    assert_memory_equal(m.mean, expected, sizeof(double) * cells * cells);
    AttentionMap_release(&m);
    free(expected);
    free(a);
}

static void test_block_means_bit_for_bit(void **state)
{
    (void)state;
    check_same_as_entry_by_entry(48, 4);
    check_same_as_entry_by_entry(37, 5);
    check_same_as_entry_by_entry(37, 1);
    check_same_as_entry_by_entry(37, 37);
    check_same_as_entry_by_entry(1000, 8);
}

static void test_coarsening_is_exact(void **state)
{
    (void)state;
    int T = 101;
    double *a = test_matrix(T);
    AttentionMap fine, coarse, direct;
    assert_int_equal(AttentionMap_reduce(a, T, 3, &fine), 0); /* 34 cells, the last of 2 */
    for (int k = 1; k <= 7; k++) {
        assert_int_equal(AttentionMap_coarsen(&fine, k, &coarse), 0);
        assert_int_equal(AttentionMap_reduce(a, T, 3 * k, &direct), 0);
        assert_int_equal(coarse.cells, direct.cells);
        for (int i = 0; i < direct.cells * direct.cells; i++)
            assert_close(coarse.mean[i], direct.mean[i], 1e-14 * fabs(direct.mean[i]));
        AttentionMap_release(&coarse);
        AttentionMap_release(&direct);
    }
    AttentionMap_release(&fine);
    free(a);
}

/* The shown head's matrices of the run's network, layer by layer, as the run applies them. */
typedef struct {
    int T, head, depth;
    double *layer[9];
} Watched;

static void watch_applied(void *context, int network, int layer, int head, const double *applied)
{
    Watched *w = context;
    if (network != 0 || head != w->head || layer > w->depth)
        return;
    size_t tt = (size_t)w->T * w->T;
    w->layer[layer] = malloc(sizeof(double) * tt);
    memcpy(w->layer[layer], applied, sizeof(double) * tt);
}

/* Column mass of A_ℓ⋯A_1 by explicit loops: p ← A p, from p = A_1. */
static void reference_column_mass(const Watched *w, int layers, double *mass)
{
    int T = w->T;
    double *p = malloc(sizeof(double) * T * T), *next = malloc(sizeof(double) * T * T);
    memcpy(p, w->layer[1], sizeof(double) * T * T);
    for (int l = 2; l <= layers; l++) {
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                double s = 0;
                for (int k = 0; k < T; k++)
                    s += w->layer[l][i * T + k] * p[k * T + j];
                next[i * T + j] = s;
            }
        memcpy(p, next, sizeof(double) * T * T);
    }
    for (int j = 0; j < T; j++) {
        double s = 0;
        for (int i = 0; i < T; i++)
            s += p[i * T + j];
        mass[j] = s / T;
    }
    free(p);
    free(next);
}

static Config product_config(void)
{
    Config c = Config_default();
    c.tokens = 48;
    c.width = 48;
    c.depth = 8;
    c.layer = 8;
    c.heads = 2;
    c.head = 2;
    c.mask = MASK_CAUSAL;
    c.attention_map = ATTENTION_MAP_PRODUCT;
    return c;
}

static Result *run_watched(const Config *c, Watched *w)
{
    char err[256];
    if (Config_validate(c, err, sizeof err))
        fail_msg("invalid test configuration: %s", err);
    *w = (Watched){.T = c->tokens, .head = c->head - 1, .depth = c->depth};
    Progress progress = {.context = w, .attention_applied = watch_applied};
    Result *r = Result_new();
    if (Model_run(c, workspace, r, &progress, err, sizeof err))
        fail_msg("Model_run: %s", err);
    return r;
}

static void watched_release(Watched *w)
{
    for (int l = 0; l < 9; l++)
        free(w->layer[l]);
}

static void test_product_against_loops(void **state)
{
    (void)state;
    Config c = product_config();
    Watched w;
    Result *r = run_watched(&c, &w);
    for (int l = 1; l <= c.depth; l++)
        assert_non_null(w.layer[l]);
    double mass[48], total = 0;
    reference_column_mass(&w, c.layer, mass);
    assert_non_null(r->product_map.mean);
    for (int j = 0; j < c.tokens; j++) {
        assert_close(r->product_column_mass[j], mass[j], 1e-13);
        total += r->product_column_mass[j];
    }
    /* Row-stochastic factors: so is the product, and its column masses sum to 1. */
    assert_close(total, 1.0, 1e-13);
    /* Causal: output token i reads tokens ≤ i only, and token 0 is read by every row of
       every layer; eight layers on, it carries most of the mass (the first-token sink). */
    for (int j = 1; j < c.tokens; j++)
        assert_true(r->product_column_mass[0] > r->product_column_mass[j]);
    assert_true(r->product_column_mass[0] > 0.5);
    /* The product's map is lower-triangular, as each factor is. */
    const AttentionMap *m = &r->product_map;
    assert_int_equal(m->block, 1);
    for (int i = 0; i < m->cells; i++)
        for (int j = i + 1; j < m->cells; j++)
            assert_true(m->mean[i * m->cells + j] == 0);
    /* The layer's own map is its A as built (gap off: as applied too). */
    for (int i = 0; i < c.tokens * c.tokens; i++)
        assert_true(r->attention_map.mean[i] == w.layer[c.layer][i]);
    Result_free(r);
    watched_release(&w);
}

static void test_product_from_kept_layers(void **state)
{
    (void)state;
    Config c = product_config();
    Watched w;
    Result *fresh = run_watched(&c, &w);
    watched_release(&w);
    Workspace_keep_layers(workspace, (size_t)64 << 20);
    /* The layers kept under the layer map; the product then needs them again from X0. */
    Config layer_map = c;
    layer_map.attention_map = ATTENTION_MAP_LAYER;
    Result *first = run_watched(&layer_map, &w);
    assert_null(first->product_map.mean);
    watched_release(&w);
    Result *kept = run_watched(&c, &w);
    watched_release(&w);
    assert_non_null(kept->product_map.mean);
    assert_memory_equal(kept->product_column_mass, fresh->product_column_mass,
                        sizeof(double) * c.tokens);
    Workspace_keep_layers(workspace, 0);
    Result_free(fresh);
    Result_free(first);
    Result_free(kept);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_means_against_loops),
        cmocka_unit_test(test_block_means_bit_for_bit),
        cmocka_unit_test(test_coarsening_is_exact),
        cmocka_unit_test(test_product_against_loops),
        cmocka_unit_test(test_product_from_kept_layers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
