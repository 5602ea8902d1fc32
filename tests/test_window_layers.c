/* Per-layer windows (--window-layers; docs/model.md §1.3): the pattern's spellings
 * and their canonical form, each layer's mask against a reference read off the pattern's
 * letters here, the layer step's attention zero exactly where that mask forbids, an all-global
 * pattern equal to the global mask bit for bit, and the entropy's n_i following each layer's
 * mask. */
#include "testing.h"

#include "attnscope/layer.h"
#include "layer_fixture.h"

#include <math.h>
#include <string.h>

static double code_of(const char *text)
{
    double code = -1;
    assert_int_equal(Config_window_layers_code(text, &code), 0);
    return code;
}

static void test_spellings_and_their_canonical_form(void **state)
{
    (void)state;
    const char *const pairs[][2] = {
        {"all", "all"},    {"1:1", "1:1"}, {"LG", "1:1"},     {"LGLG", "1:1"},    {"5:1", "5:1"},
        {"LLLLLG", "5:1"}, {"L", "all"},   {"1:0", "all"},    {"G", "0:1"},       {"GGG", "0:1"},
        {"GL", "GL"},      {"LGG", "1:2"}, {"LLGLLG", "2:1"}, {"LGLLG", "LGLLG"}, {"48:0", "all"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char text[WINDOW_LAYERS_PERIOD_MAX + 1];
        Config_window_layers_text(code_of(pairs[i][0]), text, sizeof text);
        if (strcmp(text, pairs[i][1]) != 0)
            fail_msg("'%s' reads back as '%s', expected '%s'", pairs[i][0], text, pairs[i][1]);
        /* The canonical spelling is the same pattern. */
        assert_true(code_of(text) == code_of(pairs[i][0]));
    }
    const char *const bad[] = {"",     "x",    "LGX",  "lg",    "49:1", "0:0", "-1:2",
                               "5: 1", " 5:1", "5:1 ", "1:1:1", "5:",   ":1",  "ALL"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double code;
        if (Config_window_layers_code(bad[i], &code) == 0)
            fail_msg("'%s' accepted", bad[i]);
    }
    char letters[WINDOW_LAYERS_PERIOD_MAX + 2];
    memset(letters, 'G', sizeof letters - 1);
    letters[sizeof letters - 1] = '\0';
    double code;
    assert_int_equal(Config_window_layers_code(letters, &code), -1); /* 49 letters */
    letters[WINDOW_LAYERS_PERIOD_MAX] = '\0';
    letters[0] = 'L';
    assert_int_equal(Config_window_layers_code(letters, &code), 0); /* 48 */
}

/* Layer ℓ's mask from the letters as written: letter (ℓ − 1) mod p. */
static Mask reference_mask(Mask mask, const char *letters, int layer)
{
    bool windowed = mask == MASK_WINDOW || mask == MASK_WINDOW_CAUSAL;
    if (!windowed || letters[(layer - 1) % strlen(letters)] == 'L')
        return mask;
    return mask == MASK_WINDOW ? MASK_FULL : MASK_CAUSAL;
}

static void test_each_layers_mask_follows_the_letters(void **state)
{
    (void)state;
    const char *const patterns[] = {"LG", "LLLLLG", "GL", "LGG", "GGLGL", "L", "G"};
    const Mask masks[] = {MASK_FULL, MASK_CAUSAL, MASK_WINDOW, MASK_WINDOW_CAUSAL};
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++)
        for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++) {
            Config c = Config_default();
            c.mask = masks[m];
            c.window_layers = code_of(patterns[p]);
            for (int l = 1; l <= 40; l++) {
                Mask want = reference_mask(masks[m], patterns[p], l);
                if (Config_layer_mask(&c, l) != want)
                    fail_msg("%s, mask %s, layer %d: %s, expected %s", patterns[p],
                             MASK_NAMES.names[masks[m]], l,
                             MASK_NAMES.names[Config_layer_mask(&c, l)], MASK_NAMES.names[want]);
                assert_true(Config_layer_local(&c, l) ==
                            (want == MASK_WINDOW || want == MASK_WINDOW_CAUSAL));
            }
        }
    /* all: every layer the -m mask, today's. */
    Config c = Config_default();
    c.mask = MASK_WINDOW;
    for (int l = 1; l <= 10; l++)
        assert_int_equal(Config_layer_mask(&c, l), MASK_WINDOW);
}

typedef struct {
    const Config *c;
    const char *letters;
    int layer;
    int checked;
} Watch;

/* The step's attention at its layer is 0 exactly where the reference mask forbids a key and
   positive where it allows one (softmax over moderate logits). */
static void watch_built(void *context, int head, const double *logits, const double *attention)
{
    (void)head;
    (void)logits;
    Watch *w = context;
    int T = w->c->tokens, window = w->c->window;
    Mask m = reference_mask(w->c->mask, w->letters, w->layer);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            bool causal_ok = j <= i || m == MASK_FULL || m == MASK_WINDOW;
            bool window_ok = abs(i - j) <= window || m == MASK_FULL || m == MASK_CAUSAL;
            bool allowed = causal_ok && window_ok;
            if (allowed != (attention[i * T + j] > 0))
                fail_msg("layer %d (%s): A[%d][%d] = %g", w->layer, MASK_NAMES.names[m], i, j,
                         attention[i * T + j]);
        }
    w->checked++;
}

static void test_the_step_builds_each_layers_mask(void **state)
{
    (void)state;
    const Mask masks[] = {MASK_WINDOW, MASK_WINDOW_CAUSAL};
    for (size_t m = 0; m < 2; m++) {
        Config c = Config_default();
        c.tokens = 10;
        c.width = 12;
        c.depth = 6;
        c.heads = 2;
        c.mask = masks[m];
        c.window = 2;
        c.sigma_qk = 0.5;
        c.window_layers = code_of("LLG");
        Layer l;
        layer_new(&l, &c);
        for (int layer = 1; layer <= c.depth; layer++) {
            /* X0 and the same weights at every layer: only the mask moves, and the logits
               stay moderate (no entry underflows to 0). */
            layer_draw_all(&l, &c);
            Watch watch = {&c, "LLG", layer, 0};
            LayerObserver observer = {.context = &watch, .built = watch_built};
            LayerStep s = {.config = &c,
                           .layer = layer,
                           .weights = &l.w,
                           .gap = GAP_OFF,
                           .observer = &observer};
            LayerOutcome outcome;
            double log_scale = 0;
            assert_int_equal(Layer_step(&s, &l.b, &outcome, &log_scale), 0);
            assert_int_equal(outcome, LAYER_DONE);
            assert_int_equal(watch.checked, c.heads);
        }
        layer_free(&l, &c);
    }
}

static void assert_same_series(const double *a, const double *b, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof a[i]) != 0)
            fail_msg("%s[%d]: %.17g and %.17g", what, i, a[i], b[i]);
}

/* Every layer global: the window mask's global one, bit for bit (the window and the pattern
   then decide nothing). */
static void test_all_global_is_the_global_mask(void **state)
{
    (void)state;
    const Mask windowed[] = {MASK_WINDOW, MASK_WINDOW_CAUSAL};
    const Mask global[] = {MASK_FULL, MASK_CAUSAL};
    for (int m = 0; m < 2; m++) {
        Config a = Config_default();
        a.tokens = 16;
        a.width = 24;
        a.depth = 4;
        a.layer = 3;
        a.skip = SKIP_PLAIN;
        a.layernorm = LAYERNORM_LN;
        Config b = a;
        a.mask = windowed[m];
        a.window = 3;
        a.window_layers = code_of("G");
        b.mask = global[m];
        Result *ra = run(&a), *rb = run(&b);
        int n = a.depth + 1;
        assert_same_series(ra->network.stable_rank, rb->network.stable_rank, n, "stable_rank");
        assert_same_series(ra->counterpart.stable_rank, rb->counterpart.stable_rank, n,
                           "counterpart_stable_rank");
        assert_same_series(ra->network.entropy.mean, rb->network.entropy.mean, n, "entropy");
        for (int i = 0; i < a.tokens; i++) {
            assert_memory_equal(&ra->eigenvalues[i], &rb->eigenvalues[i], sizeof(Complex));
            assert_memory_equal(&ra->singular_values[i], &rb->singular_values[i], sizeof(double));
        }
        Result_free(ra);
        Result_free(rb);
    }
}

/* Uniform attention: H_i = ln n_i exactly, n_i the keys of row i under that layer's mask.
   window-causal w = 2 with 1:1: odd layers n_i = min(i, 3), even (causal) n_i = i (rows from
   1). */
static void test_entropy_counts_each_layers_keys(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 8;
    c.width = 8;
    c.depth = 4;
    c.attention = ATTENTION_UNIFORM;
    c.mask = MASK_WINDOW_CAUSAL;
    c.window = 2;
    c.skip = SKIP_PLAIN;
    c.window_layers = code_of("1:1");
    Result *r = run(&c);
    for (int l = 1; l <= c.depth; l++) {
        double mean = 0, normalised = 0;
        int rows = 0;
        for (int i = 1; i <= c.tokens; i++) {
            int n = l % 2 ? (i < 3 ? i : 3) : i;
            mean += log(n) / c.tokens;
            if (n >= 2) {
                normalised += 1.0;
                rows++;
            }
        }
        assert_true(fabs(r->network.entropy.mean[l] - mean) <= 1e-14);
        assert_true(fabs(r->network.entropy.normalised_mean[l] - normalised / rows) <= 1e-14);
    }
    Result_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spellings_and_their_canonical_form),
        cmocka_unit_test(test_each_layers_mask_follows_the_letters),
        cmocka_unit_test(test_the_step_builds_each_layers_mask),
        cmocka_unit_test(test_all_global_is_the_global_mask),
        cmocka_unit_test(test_entropy_counts_each_layers_keys),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
