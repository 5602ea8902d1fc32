/* The fitting-size search (conditioning_fit.h) against the candidates written out by hand: the
   order it tries them in (d halved down to T while the heads divide it, then T and d in turn),
   the first one priced within the bound, nothing else of the settings changed, no size the
   settings' rules refuse, and no fit below T = d = 8. */
#include "testing.h"

#include "conditioning_fit.h"

#include <string.h>

enum { VISITED_MAX = 32 };

/* A price that records the sizes asked about and costs T·d² seconds. */
typedef struct {
    int count;
    int tokens[VISITED_MAX], width[VISITED_MAX];
} Visits;

static double recorded_price(const Config *c, void *context)
{
    Visits *v = context;
    if (v->count < VISITED_MAX) {
        v->tokens[v->count] = c->tokens;
        v->width[v->count] = c->width;
    }
    v->count++;
    return (double)c->tokens * c->width * c->width;
}

static void test_engineer_size_order(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 512;
    c.width = 2048;
    c.depth = 24;
    c.heads = 16;
    /* The candidates from T = 512, d = 2048, by the rule. */
    static const int expected[][2] = {{512, 2048}, {512, 1024}, {512, 512}, {256, 512}, {256, 256},
                                      {128, 256},  {128, 128},  {64, 128},  {64, 64},   {32, 64}};
    enum { N = sizeof expected / sizeof expected[0] };
    /* A bound between the last candidate's price (32·64²) and the one before it (64·64²). */
    Visits v = {0};
    Config fit;
    assert_true(ConditioningFit_search(&c, 200000, recorded_price, &v, &fit));
    assert_int_equal(v.count, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(v.tokens[i], expected[i][0]);
        assert_int_equal(v.width[i], expected[i][1]);
    }
    assert_int_equal(fit.tokens, 32);
    assert_int_equal(fit.width, 64);
    Config rest = fit;
    rest.tokens = c.tokens;
    rest.width = c.width;
    assert_true(Config_equal(&rest, &c));
    /* Within the bound already: the size itself. */
    v = (Visits){0};
    assert_true(ConditioningFit_search(&c, 1e12, recorded_price, &v, &fit));
    assert_int_equal(v.count, 1);
    assert_true(Config_equal(&fit, &c));
}

static void test_heads_divide_width(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 16;
    c.width = 96;
    c.heads = 48;
    /* 96 → 48 (still a multiple of the 48 heads); 24 would be ≥ T but not one: T halves. */
    static const int expected[][2] = {{16, 96}, {16, 48}, {8, 48}};
    enum { N = sizeof expected / sizeof expected[0] };
    Visits v = {0};
    Config fit;
    assert_true(ConditioningFit_search(&c, 8 * 48 * 48, recorded_price, &v, &fit));
    assert_int_equal(v.count, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(v.tokens[i], expected[i][0]);
        assert_int_equal(v.width[i], expected[i][1]);
    }
}

static void test_none_fits(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 32;
    c.width = 32;
    c.heads = 1;
    Visits v = {0};
    Config fit;
    assert_false(ConditioningFit_search(&c, 0, recorded_price, &v, &fit));
    /* 32², 16·32, 16², 8·16, 8², then T = 4 stops it. */
    assert_int_equal(v.count, 5);
    assert_int_equal(v.tokens[4], 8);
    assert_int_equal(v.width[4], 8);
}

/* A size the settings' rules refuse is never named, nor priced: a window of 64 needs T > 64,
   so of T = d = 256's candidates only those with T = 256 or 128 are asked about. */
static void test_refused_sizes_passed_over(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 256;
    c.width = 256;
    c.heads = 1;
    c.mask = MASK_WINDOW_CAUSAL;
    c.window = 64;
    Visits v = {0};
    Config fit;
    /* A bound that 64·128² would fit and 128·128² would not. */
    assert_false(ConditioningFit_search(&c, 1.5e6, recorded_price, &v, &fit));
    assert_int_equal(v.count, 3); /* 256·256, 128·256, 128·128 */
    for (int i = 0; i < v.count; i++)
        assert_true(v.tokens[i] > c.window);
    v = (Visits){0};
    assert_true(ConditioningFit_search(&c, 128.0 * 128 * 128, recorded_price, &v, &fit));
    assert_int_equal(fit.tokens, 128);
    assert_int_equal(fit.width, 128);
}

static void test_phrase(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 32;
    c.width = 64;
    char out[160];
    ConditioningFit_phrase(&c, "5 min", out, sizeof out);
    assert_string_equal(
        out,
        "within 5 min the conditioning fits at T = 32, d = 64 (depth, heads and the rest kept)");
    ConditioningFit_phrase(NULL, "30 s", out, sizeof out);
    assert_string_equal(out, "within 30 s the conditioning fits at no size from T = d = 8 up "
                             "(depth, heads and the rest kept)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engineer_size_order), cmocka_unit_test(test_heads_divide_width),
        cmocka_unit_test(test_none_fits), cmocka_unit_test(test_refused_sizes_passed_over),
        cmocka_unit_test(test_phrase)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
