/* Attention sinks (--sink, --sink-std; gpt-oss, docs/model.md §1.2): the sink softmax
 * against a loop-by-loop reference written here for every mask, rows that sum to 1 minus the
 * sink's weight, no sink as the plain softmax bit for bit, each head's sink from its own stream
 * (no other stream moves), the layer step's attention against the reference from its own
 * logits, the entropy of the (n_i + 1)-outcome rows, the gap modes and the readouts that
 * assume rows summing to 1. */
#include "testing.h"

#include "attnscope/attention.h"
#include "attnscope/entropy.h"
#include "attnscope/layer.h"
#include "attnscope/random.h"
#include "attnscope/theory.h"
#include "layer_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { T = 9, WINDOW = 2 };

static const Mask MASKS[] = {MASK_FULL, MASK_CAUSAL, MASK_WINDOW, MASK_WINDOW_CAUSAL};
enum { MASK_COUNT = sizeof MASKS / sizeof MASKS[0] };

/* Whether key j is allowed to query i, from the masks' definitions (docs/model.md §1.3), not
   from Mask_row_range. */
static bool allowed(Mask m, int i, int j)
{
    switch (m) {
    case MASK_CAUSAL:
        return j <= i;
    case MASK_WINDOW:
        return abs(i - j) <= WINDOW;
    case MASK_WINDOW_CAUSAL:
        return j <= i && i - j <= WINDOW;
    case MASK_FULL:
        break;
    }
    return true;
}

/* Row-major T×T logits N(0, spread²). */
static void logits_of(uint64_t seed, double spread, double *s)
{
    RandomStream *rs = RandomStream_new();
    assert_non_null(rs);
    RandomStream_gaussian(rs, seed, 1, ROLE_QUERY, spread, s, (size_t)T * T);
    RandomStream_free(rs);
}

/* gpt-oss's sink softmax as written: the row's allowed logits and the sink, exponentiated
   as they are (the logits here are small enough), normalised, the sink's column dropped.
   weight[i]: the sink's share of row i. */
static void reference(Mask m, int n, const double *s, double sink, double *a, double *weight)
{
    for (int i = 0; i < n; i++) {
        double sum = exp(sink);
        for (int j = 0; j < n; j++)
            if (allowed(m, i, j))
                sum += exp(s[i * n + j]);
        for (int j = 0; j < n; j++)
            a[i * n + j] = allowed(m, i, j) ? exp(s[i * n + j]) / sum : 0.0;
        weight[i] = exp(sink) / sum;
    }
}

static void test_sink_softmax_matches_the_loops(void **state)
{
    (void)state;
    const double sinks[] = {-1.3, 0.0, 2.5, 30.0};
    for (int m = 0; m < MASK_COUNT; m++)
        for (size_t k = 0; k < sizeof sinks / sizeof sinks[0]; k++) {
            double s[T * T], got[T * T], want[T * T], weight[T];
            logits_of(7 + m, 1.5, s);
            Attention_build(ATTENTION_SOFTMAX, MASKS[m], WINDOW, T, s, sinks[k], got);
            reference(MASKS[m], T, s, sinks[k], want, weight);
            for (int i = 0; i < T; i++) {
                double row = 0;
                for (int j = 0; j < T; j++) {
                    if (!allowed(MASKS[m], i, j))
                        assert_true(got[i * T + j] == 0.0);
                    /* Entries at most 1, each a few roundings from the exact quotient. */
                    if (fabs(got[i * T + j] - want[i * T + j]) > 1e-15)
                        fail_msg("mask %s, sink %g: A[%d][%d] = %.17g, loops %.17g",
                                 MASK_NAMES.names[MASKS[m]], sinks[k], i, j, got[i * T + j],
                                 want[i * T + j]);
                    row += got[i * T + j];
                }
                if (fabs(row - (1.0 - weight[i])) > 1e-14)
                    fail_msg("mask %s, sink %g: row %d sums to %.17g, 1 - sink weight %.17g",
                             MASK_NAMES.names[MASKS[m]], sinks[k], i, row, 1.0 - weight[i]);
                assert_true(row < 1.0);
            }
        }
}

/* Large logits (spread 12) where the reference would overflow exp: the build subtracts the
   row's maximum, sink included; the rows still sum to 1 minus the sink's weight, computed
   here from the logits shifted by their maximum. */
static void test_rows_sum_below_one_with_large_logits(void **state)
{
    (void)state;
    double s[T * T], a[T * T];
    logits_of(21, 12.0, s);
    for (int i = 0; i < T * T; i++)
        s[i] *= 60; /* logits of several hundred: exp overflows without the shift */
    const double sink = 400.0;
    for (int m = 0; m < MASK_COUNT; m++) {
        Attention_build(ATTENTION_SOFTMAX, MASKS[m], WINDOW, T, s, sink, a);
        for (int i = 0; i < T; i++) {
            double top = sink, sum = 0, row = 0;
            for (int j = 0; j < T; j++)
                if (allowed(MASKS[m], i, j))
                    top = fmax(top, s[i * T + j]);
            for (int j = 0; j < T; j++)
                if (allowed(MASKS[m], i, j))
                    sum += exp(s[i * T + j] - top);
            double weight = exp(sink - top) / (exp(sink - top) + sum);
            for (int j = 0; j < T; j++) {
                assert_true(isfinite(a[i * T + j]));
                row += a[i * T + j];
            }
            assert_true(fabs(row - (1.0 - weight)) <= 1e-14);
        }
    }
}

/* No sink (−∞) is the plain softmax as attention.c wrote it before sinks, operation for
   operation: the row's maximum, exp of each logit minus it, the sum, times its inverse. */
static void test_no_sink_is_the_plain_softmax_bit_for_bit(void **state)
{
    (void)state;
    double s[T * T], a[T * T];
    logits_of(3, 2.0, s);
    for (int m = 0; m < MASK_COUNT; m++) {
        Attention_build(ATTENTION_SOFTMAX, MASKS[m], WINDOW, T, s, -INFINITY, a);
        for (int i = 0; i < T; i++) {
            int first, last;
            Mask_row_range(MASKS[m], WINDOW, T, i, &first, &last);
            double max = s[i * T + first], sum = 0, e[T];
            for (int j = first + 1; j <= last; j++)
                if (s[i * T + j] > max)
                    max = s[i * T + j];
            for (int j = first; j <= last; j++) {
                e[j] = exp(s[i * T + j] - max);
                sum += e[j];
            }
            double inv = 1.0 / sum;
            for (int j = first; j <= last; j++)
                assert_true(a[i * T + j] == e[j] * inv);
        }
    }
}

static Config sink_config(double sink, double sink_std)
{
    Config c = Config_default();
    c.tokens = 8;
    c.width = 12;
    c.depth = 2;
    c.heads = 3;
    c.mask = MASK_WINDOW_CAUSAL;
    c.window = 3;
    c.sink = sink;
    c.sink_std = sink_std;
    c.seed = 5;
    return c;
}

/* Head h's sink is S + s·z_h, z_h the h-th number of (seed, layer, ROLE_SINK); drawing it
   moves no other weight. */
static void test_sinks_come_from_their_own_stream(void **state)
{
    (void)state;
    Config with = sink_config(0.5, 0.2), without = sink_config(-INFINITY, 0);
    Layer a, b;
    layer_new(&a, &with);
    layer_new(&b, &without);
    layer_draw_all(&a, &with);
    layer_draw_all(&b, &without);
    size_t dd = (size_t)with.width * with.width;
    assert_memory_equal(a.w.query, b.w.query, dd * sizeof(double));
    assert_memory_equal(a.w.key, b.w.key, dd * sizeof(double));
    assert_memory_equal(a.w.value, b.w.value, dd * sizeof(double));
    assert_memory_equal(a.b.x, b.b.x, (size_t)with.tokens * with.width * sizeof(double));
    double z[3];
    RandomStream *rs = RandomStream_new();
    RandomStream_gaussian(rs, with.seed, 1, ROLE_SINK, 1.0, z, 3);
    RandomStream_free(rs);
    for (int h = 0; h < 3; h++) {
        assert_true(fabs(a.w.sink[h] - (0.5 + 0.2 * z[h])) <= 1e-15);
        assert_true(a.w.sink[h] != 0.5); /* drawn, not the constant */
    }
    /* Without a spread every head's sink is S itself. */
    Config fixed = sink_config(-0.75, 0);
    Layer f;
    layer_new(&f, &fixed);
    layer_draw_all(&f, &fixed);
    for (int h = 0; h < 3; h++)
        assert_true(f.w.sink[h] == -0.75);
    layer_free(&a, &with);
    layer_free(&b, &without);
    layer_free(&f, &fixed);
}

typedef struct {
    const Config *c;
    const double *sink;
    int heads_seen;
} Watch;

/* Every head's attention as the step built it against the reference from the step's own
   logits and that head's sink. */
static void watch_built(void *context, int head, const double *logits, const double *attention)
{
    Watch *w = context;
    int n = w->c->tokens;
    assert_true(w->c->mask == MASK_WINDOW_CAUSAL && w->c->window == 3);
    for (int i = 0; i < n; i++) {
        double sum = exp(w->sink[head]);
        for (int j = 0; j <= i; j++)
            if (i - j <= 3)
                sum += exp(logits[i * n + j]);
        double row = 0;
        for (int j = 0; j < n; j++) {
            double e = j <= i && i - j <= 3 ? exp(logits[i * n + j]) / sum : 0.0;
            assert_true(fabs(attention[i * n + j] - e) <= 1e-15);
            row += attention[i * n + j];
        }
        assert_true(fabs(row - (1.0 - exp(w->sink[head]) / sum)) <= 1e-14);
    }
    w->heads_seen++;
}

static void test_layer_step_applies_each_heads_sink(void **state)
{
    (void)state;
    Config c = sink_config(0.3, 0.5);
    Layer l;
    layer_new(&l, &c);
    layer_draw_all(&l, &c);
    Watch watch = {&c, l.w.sink, 0};
    LayerObserver observer = {.context = &watch, .built = watch_built};
    LayerStep s = {
        .config = &c, .layer = 1, .weights = &l.w, .gap = GAP_OFF, .observer = &observer};
    LayerOutcome outcome;
    double log_scale = 0;
    assert_int_equal(Layer_step(&s, &l.b, &outcome, &log_scale), 0);
    assert_int_equal(outcome, LAYER_DONE);
    assert_int_equal(watch.heads_seen, 3);
    layer_free(&l, &c);
}

/* H_i of the (n_i + 1)-outcome row: the keys' −Σ A ln A and the sink's −m ln m, m from the
   logits; normalised by ln(n_i + 1). */
static void test_entropy_counts_the_sink_as_an_outcome(void **state)
{
    (void)state;
    for (int m = 0; m < MASK_COUNT; m++) {
        double s[T * T], a[T * T], want[T * T], weight[T];
        logits_of(40 + m, 1.0, s);
        Attention_build(ATTENTION_SOFTMAX, MASKS[m], WINDOW, T, s, 0.4, a);
        reference(MASKS[m], T, s, 0.4, want, weight);
        double mean = 0, normalised = 0;
        for (int i = 0; i < T; i++) {
            double h = -weight[i] * log(weight[i]);
            int n = 1;
            for (int j = 0; j < T; j++)
                if (allowed(MASKS[m], i, j)) {
                    h -= want[i * T + j] * log(want[i * T + j]);
                    n++;
                }
            mean += h / T;
            normalised += h / log(n) / T; /* every row has ≥ 1 key and the sink: n ≥ 2 */
        }
        EntropyRows rows;
        Entropy_rows(MASKS[m], WINDOW, T, true, a, &rows);
        assert_true(fabs(rows.mean - mean) <= 1e-13);
        assert_true(fabs(rows.normalised_mean - normalised) <= 1e-13);
        /* A row of one key is no longer one-hot: the sink shares it. */
        assert_true(rows.min > 0);
    }
}

static void test_gap_modes_treat_sink_rows_as_not_summing_to_one(void **state)
{
    (void)state;
    size_t scratch_size = Gap_scratch_size(T);
    double *scratch = malloc(sizeof(double) * scratch_size);
    assert_non_null(scratch);
    double s[T * T], a[T * T];
    logits_of(60, 1.0, s);
    for (int m = 0; m < MASK_COUNT; m++) {
        /* center: each row minus its own mean over the allowed keys, so it sums to 0 (the
           plain softmax's 1/n_i would leave the sink's share). */
        Attention_build(ATTENTION_SOFTMAX, MASKS[m], WINDOW, T, s, 0.0, a);
        GapOutcome outcome;
        Warnings warnings = {.count = 0};
        assert_int_equal(Gap_apply(GAP_CENTER, ATTENTION_SOFTMAX, true, false, MASKS[m], WINDOW, T,
                                   a, la, scratch, &outcome, &warnings),
                         0);
        for (int i = 0; i < T; i++) {
            double row = 0;
            for (int j = 0; j < T; j++)
                row += a[i * T + j];
            assert_true(fabs(row) <= 1e-15);
        }
        /* deflate: no Perron vector for sub-stochastic rows, centred instead, and said. */
        Attention_build(ATTENTION_SOFTMAX, MASKS[m], WINDOW, T, s, 0.0, a);
        warnings.count = 0;
        assert_int_equal(Gap_apply(GAP_DEFLATE, ATTENTION_SOFTMAX, true, false, MASKS[m], WINDOW, T,
                                   a, la, scratch, &outcome, &warnings),
                         0);
        assert_int_equal(outcome.applied, GAP_CENTER);
        assert_int_equal(warnings.count, 1);
        assert_non_null(strstr(warnings.text[0], "sinks take a share of every row"));
        /* uniform: says that the rows do not sum to 1. */
        Attention_build(ATTENTION_SOFTMAX, MASKS[m], WINDOW, T, s, 0.0, a);
        warnings.count = 0;
        assert_int_equal(Gap_apply(GAP_UNIFORM, ATTENTION_SOFTMAX, true, false, MASKS[m], WINDOW, T,
                                   a, la, scratch, &outcome, &warnings),
                         0);
        bool said = false;
        for (int i = 0; i < warnings.count; i++)
            said = said || strstr(warnings.text[i], "softmax-with-sink attention (rows do not sum");
        assert_true(said);
    }
    free(scratch);
}

/* The readouts measured against λ1 = 1 are null, the predicted outlier 1 withdrawn; the
   causal sink matrix at σ_qk → 0 has λ1 = 1/2 (docs/model.md §1.2), which the run reads off its
   diagonal. */
static void test_run_readouts_with_sinks(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 16;
    c.width = 16;
    c.depth = 2;
    c.mask = MASK_CAUSAL;
    c.sink = 0.0;
    c.sigma_qk = 1e-6;
    char err[256];
    Result *r = Result_new();
    assert_non_null(r);
    assert_int_equal(Model_run(&c, workspace, r, NULL, err, sizeof err), 0);
    assert_true(r->spectra_ready && r->eigenvalues_exact);
    /* Row i (from 1) has i keys and the sink, all logits ≈ 0: diagonal 1/(i + 1). */
    assert_true(fabs(r->eigenvalues[0].re - 0.5) < 1e-9);
    assert_true(isnan(r->readouts.one_minus_abs_lambda2));
    assert_true(isnan(r->readouts.count_abs_lambda_above_half));
    assert_true(isfinite(r->network.entropy.mean[1]));
    TheoryPrediction p = {.stable_rank = NULL};
    Theory_predict(&c, &p);
    assert_true(isnan(p.outlier));
    c.sink = -INFINITY;
    Theory_predict(&c, &p);
    assert_true(p.outlier == 1.0);
    Result_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sink_softmax_matches_the_loops),
        cmocka_unit_test(test_rows_sum_below_one_with_large_logits),
        cmocka_unit_test(test_no_sink_is_the_plain_softmax_bit_for_bit),
        cmocka_unit_test(test_sinks_come_from_their_own_stream),
        cmocka_unit_test(test_layer_step_applies_each_heads_sink),
        cmocka_unit_test(test_entropy_counts_the_sink_as_an_outcome),
        cmocka_unit_test(test_gap_modes_treat_sink_rows_as_not_summing_to_one),
        cmocka_unit_test(test_run_readouts_with_sinks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
