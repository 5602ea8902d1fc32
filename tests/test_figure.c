/* The plot descriptions of figure.c say what the numbers say:
 *   - no two marks of one legend look alike, with or without Unicode (nothing is told by
 *     colour alone): every description figure.c builds from real runs (eigenvalues with the
 *     gap off and removed, singular values, stable rank in each order, the entropy curves
 *     and the row-entropy histogram), overlays on and off, over masks, kinds and ensembles;
 *   - the row-entropy histogram's title names what bounds its rows: ln T where each row sees
 *     every key, else the largest ln n_i, counted here from the mask's rule loop by loop; the
 *     depth plot's ceiling follows each layer's mask;
 *   - a missing value (NaN, ±inf: null in the JSON) prints as a word, never "nan" or "inf";
 *   - the conditioning plot's layer axis spans the network's layers, its nulls gaps.
 */
#include "testing.h"

#include "model_fixture.h"

#include "canvas.h"
#include "figure.h"
#include "figure_series.h"

#include "attnscope/conditioning.h"

#include "attnscope/format.h"
#include "attnscope/model.h"

#include <string.h>

/* A legend sample as a canvas of that rendering draws it (the one way the screen does). */
static void sample_text(const LegendItem *item, bool unicode, char *out, size_t size)
{
    Canvas *c = Canvas_new(item->cells, 1, unicode);
    assert_non_null(c);
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < item->cells; k++) {
        if (item->sample[k].glyph)
            Canvas_text(c, k, 0, item->sample[k].glyph, item->ink);
        else
            Canvas_pattern(c, k, 0, item->sample[k].dots, item->ink);
        char cell[8];
        Canvas_cell(c, k, 0, cell);
        used += (size_t)snprintf(out + used, size - used, "%s", cell);
    }
    Canvas_free(c);
}

/* Every two entries with a sample differ in it, in Unicode and in ASCII. */
static void assert_marks_distinct(const char *panel, const LegendItem *items, int n)
{
    for (int u = 0; u < 2; u++)
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                if (items[i].cells == 0 || items[j].cells == 0)
                    continue;
                char a[64], b[64];
                sample_text(&items[i], u == 0, a, sizeof a);
                sample_text(&items[j], u == 0, b, sizeof b);
                if (strcmp(a, b) == 0)
                    fail_msg("%s (%s): \"%s\" and \"%s\" share the mark '%s'", panel,
                             u == 0 ? "Unicode" : "ASCII", items[i].text, items[j].text, a);
            }
}

/* Every figure.c description of one result, overlays as given. */
static void assert_result_marks_distinct(const Result *r, bool overlays)
{
    char t1[FIGURE_TITLE_SIZE], t2[FIGURE_TITLE_SIZE];
    EigenvaluePlot e;
    HistogramPlot h;
    EigenvalueFigure ef;
    HistogramFigure hf;
    Figure_spectra(r, overlays, t1, t2, &e, &h);
    Figure_eigenvalues(&e, &ef);
    assert_marks_distinct(t1, ef.legend, ef.legend_count);
    Figure_histogram(&h, &hf);
    assert_marks_distinct(t2, hf.legend, hf.legend_count);
    /* The compare view's other half: the same matrix's values with the gap removed. */
    Figure_eigenvalue_plot(&r->config, r->eigenvalues, GAP_CENTER, r->eigenvalues_exact, overlays,
                           "gap removed", &e);
    Figure_eigenvalues(&e, &ef);
    assert_marks_distinct("eigenvalues, gap removed", ef.legend, ef.legend_count);
    for (int first = FIRST_NETWORK; first <= FIRST_GAP_REMOVED; first++) {
        StableRankText text;
        StableRankPlot p;
        StableRankFigure f;
        Figure_stable_rank_plot(r, overlays, (StableRankFirst)first, &text, &p);
        Figure_stable_rank(&p, &f);
        assert_marks_distinct(text.title, f.legend, f.legend_count);
    }
    EntropyText text;
    SeriesPlot s;
    LegendItem items[SERIES_MAX + SERIES_NOTES_MAX];
    bool any;
    Figure_entropy_plot(r, overlays, true, &text, &s);
    int n = Figure_series_legend(&s, items, &any);
    assert_true(any);
    assert_marks_distinct(text.title, items, n);
    double *sorted = malloc(sizeof(double) * (size_t)r->config.tokens);
    assert_non_null(sorted);
    char title[FIGURE_TITLE_SIZE];
    Figure_row_entropy_plot(r, title, sorted, &h);
    Figure_histogram(&h, &hf);
    assert_marks_distinct(title, hf.legend, hf.legend_count);
    free(sorted);
}

static void test_no_two_marks_alike(void **state)
{
    (void)state;
    Config cases[6];
    for (int k = 0; k < 6; k++)
        cases[k] = small(16, 16, 3);
    cases[1].mask = MASK_CAUSAL;
    cases[1].gap = GAP_CENTER;
    cases[2].mask = MASK_WINDOW_CAUSAL;
    cases[2].window = 4;
    cases[3].attention = ATTENTION_MARKOV; /* the theory's curves */
    cases[3].seeds = 2;                    /* the ensemble's band */
    cases[4].attention = ATTENTION_RELU;   /* the predicted λ1 */
    cases[5].mask = MASK_WINDOW;
    cases[5].window = 2;
    assert_int_equal(Config_window_layers_code("1:1", &cases[5].window_layers), 0);
    for (int k = 0; k < 6; k++) {
        Result *r = run(&cases[k]);
        assert_result_marks_distinct(r, true);
        assert_result_marks_distinct(r, false);
        Result_free(r);
    }
}

/* Where the gap-removed curve's large-T limit C_ℓ(γ)·T falls below 1 (markov, T = d = 16:
   0.537 at ℓ = 2, docs/model.md §3) it is not drawn, and the legend says from which layer, in
   every order of the two networks; the gap-off curve is drawn whole.  At L = 1 it stays in
   range and the legend says nothing of it. */
static void test_theory_drawn_only_in_its_range(void **state)
{
    (void)state;
    Config c = small(16, 16, 4);
    c.attention = ATTENTION_MARKOV;
    Result *r = run(&c);
    for (int first = FIRST_NETWORK; first <= FIRST_GAP_REMOVED; first++) {
        StableRankText text;
        StableRankPlot p;
        StableRankFigure f;
        Figure_stable_rank_plot(r, true, (StableRankFirst)first, &text, &p);
        Figure_stable_rank(&p, &f);
        const double *removed = first == FIRST_GAP_REMOVED ? p.theory : p.counterpart_theory;
        const double *off = first == FIRST_GAP_REMOVED ? p.counterpart_theory : p.theory;
        assert_true(isfinite(removed[1]) && removed[1] >= 1);
        for (int l = 2; l <= 4; l++)
            assert_true(isnan(removed[l]) && isfinite(off[l]));
        bool said = false;
        for (int i = 0; i < f.legend_count; i++)
            said |= strstr(f.legend[i].text, "not drawn from ℓ = 2 (outside [1, T])") != NULL;
        assert_true(said);
    }
    Result_free(r);
    c.depth = 1;
    r = run(&c);
    StableRankText text;
    StableRankPlot p;
    StableRankFigure f;
    Figure_stable_rank_plot(r, true, FIRST_NETWORK, &text, &p);
    Figure_stable_rank(&p, &f);
    assert_true(f.theory && f.counterpart_theory);
    for (int i = 0; i < f.legend_count; i++)
        assert_null(strstr(f.legend[i].text, "not drawn"));
    Result_free(r);
}

/* The largest ln n_i of c's shown layer, from the mask's definition (docs/model.md §2): the
   full mask lets every key in, causal j ≤ i, window |i − j| ≤ w, window-causal
   i − w ≤ j ≤ i. */
static double largest_log_keys(const Config *c)
{
    int most = 0;
    for (int i = 0; i < c->tokens; i++) {
        int keys = 0;
        for (int j = 0; j < c->tokens; j++) {
            bool in = c->mask == MASK_FULL || (c->mask == MASK_CAUSAL && j <= i) ||
                      (c->mask == MASK_WINDOW && abs(i - j) <= c->window) ||
                      (c->mask == MASK_WINDOW_CAUSAL && j <= i && i - j <= c->window);
            keys += in;
        }
        most = keys > most ? keys : most;
    }
    return log(most);
}

static void test_row_entropy_title_names_the_rows_bound(void **state)
{
    (void)state;
    const Mask masks[] = {MASK_FULL, MASK_CAUSAL, MASK_WINDOW, MASK_WINDOW_CAUSAL};
    for (size_t k = 0; k < sizeof masks / sizeof masks[0]; k++) {
        Config c = small(32, 32, 1);
        c.mask = masks[k];
        c.window = 4;
        Result *r = run(&c);
        double sorted[32];
        char title[FIGURE_TITLE_SIZE], want[FIGURE_TITLE_SIZE];
        HistogramPlot h;
        Figure_row_entropy_plot(r, title, sorted, &h);
        snprintf(want, sizeof want, "row entropies H_i, ℓ=1 (%s = %.3g)",
                 masks[k] == MASK_FULL ? "ln T" : "max ln n_i", largest_log_keys(&c));
        assert_string_equal(title, want);
        /* Every row's entropy is under the bound the title names. */
        for (int i = 0; i < h.count; i++)
            assert_true(h.values[i] <= largest_log_keys(&c) + 1e-12);
        Result_free(r);
    }
}

/* The depth plot's ceiling follows each layer's mask: under --window-layers 1:1 layer 1 is
   windowed (mean ln n_i, n_i = the keys within w of i) and layer 2 global (ln T). */
static void test_entropy_ceiling_per_layer_mask(void **state)
{
    (void)state;
    Config c = small(16, 16, 2);
    c.mask = MASK_WINDOW;
    c.window = 2;
    assert_int_equal(Config_window_layers_code("1:1", &c.window_layers), 0);
    Result *r = run(&c);
    double windowed = 0;
    for (int i = 0; i < c.tokens; i++) {
        int keys = 0;
        for (int j = 0; j < c.tokens; j++)
            keys += abs(i - j) <= c.window;
        windowed += log(keys) / c.tokens;
    }
    EntropyText text;
    SeriesPlot p;
    Figure_entropy_plot(r, true, false, &text, &p);
    assert_close(text.ceiling[1], windowed, 1e-14);
    assert_close(text.ceiling[2], log(16.0), 1e-14);
    assert_string_equal(text.ceiling_label, "mean ln n_i");
    Result_free(r);
}

/* Each half of the compare view names its network's config once, for the screen, the CSV and
   the SVG alike: the half whose gap setting is r's is r's config; the other is r's with the gap
   toggled, run to the shown layer; set also while the toggled network's values are missing. */
static void test_compare_half_config(void **state)
{
    (void)state;
    Config c = small(16, 16, 3);
    c.layer = 2;
    Result *r = run(&c);
    ToggledNetwork missing = {.eigenvalues = NULL, .gap = GAP_CENTER, .exact = false};
    char title[FIGURE_TITLE_SIZE];
    EigenvaluePlot e;
    Config half;
    assert_true(Figure_compare_eigenvalues(r, &missing, false, false, title, &e, &half));
    assert_true(Config_equal(&half, &r->config));
    assert_false(Figure_compare_eigenvalues(r, &missing, true, false, title, &e, &half));
    assert_int_equal(half.gap, Gap_toggled(GAP_OFF));
    assert_true(half.gap != GAP_OFF);
    assert_int_equal(half.depth, 2);
    assert_int_equal(half.tokens, c.tokens);
    assert_int_equal(half.seed, c.seed);
    Result_free(r);
}

static void test_missing_values_print_as_words(void **state)
{
    (void)state;
    char out[FORMAT_NUMBER_SIZE];
    assert_string_equal(Figure_number(out, sizeof out, "%.3g", NAN, FIGURE_MISSING), "n/a");
    assert_string_equal(Figure_number(out, sizeof out, "%.3g", INFINITY, "null"), "null");
    assert_string_equal(Figure_number(out, sizeof out, "%.3g", -INFINITY, "n/a"), "n/a");
    assert_string_equal(Figure_number(out, sizeof out, "%.3g", 16.517630789219226, "n/a"), "16.5");
    assert_string_equal(Figure_number(out, sizeof out, "%g", -1.0, "n/a"), "-1");
}

/* A log axis across a fraction of a decade is labelled by the linear steps of its values,
   each label the value its tick sits at (parsed back: 10^at), short enough for the screen's
   six-cell column where a plain number is; across decades the powers as before. */
static void test_log_axis_ticks_read_back(void **state)
{
    (void)state;
    const struct {
        double lo, hi;
        const char *first, *last;
    } cases[] = {
        {2.4624, 2.7076, "300", "500"},         /* 290..510 */
        {21.6656, 21.6928, "4.7e21", "4.9e21"}, /* 4.63e21..4.93e21 */
        {-2.9101, -2.8962, "0.00124", "0.00126"},
        {0, 10, "1", "1e10"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double at[64];
        char labels[64][FIGURE_TICK_LABEL_SIZE];
        int n = Figure_log_axis_ticks(cases[k].lo, cases[k].hi, 4, at, labels, 64);
        assert_true(n >= 2);
        assert_string_equal(labels[0], cases[k].first);
        assert_string_equal(labels[n - 1], cases[k].last);
        for (int i = 0; i < n; i++) {
            assert_true(at[i] >= cases[k].lo - 1e-9 && at[i] <= cases[k].hi + 1e-9);
            assert_true(strchr(labels[i], '+') == NULL);
            if (cases[k].hi < 10)
                assert_true(strlen(labels[i]) <= 7);
            char *e = strchr(labels[i], 'e');
            double exponent = e ? strtod(e + 1, NULL) : 0;
            if (e)
                *e = '\0';
            /* The label names the tick's value to its printed digits. */
            assert_close(log10(strtod(labels[i], NULL)) + exponent, at[i], 1e-9);
        }
    }
}

/* A Gaussian stack (T = 8, d = 16, 6 layers, K built) whose every κ curve is null at its last
   two layers (beyond double precision): the layer axis still ends at layer 6, where main's
   ended at the last finite point, layer 4. */
static void test_conditioning_axis_spans_the_layers(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 8;
    c.width = 16;
    c.depth = 6;
    Conditioning k;
    char err[256];
    assert_int_equal(Conditioning_run(&c, &k, err, sizeof err), 0);
    SeriesText t;
    SeriesPlot p;
    Figure_conditioning_plot(&k, NULL, false, &t, &p);
    for (int i = 0; i < p.count; i++) /* the premise: nothing drawn at the last layer */
        assert_false(isfinite(p.series[i].y[c.depth - 1]));
    double lo, hi;
    Figure_series_range(&p, true, &lo, &hi);
    assert_true(lo == 1.0 && hi == (double)c.depth);
    Conditioning_release(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_two_marks_alike),
        cmocka_unit_test(test_theory_drawn_only_in_its_range),
        cmocka_unit_test(test_row_entropy_title_names_the_rows_bound),
        cmocka_unit_test(test_entropy_ceiling_per_layer_mask),
        cmocka_unit_test(test_compare_half_config),
        cmocka_unit_test(test_missing_values_print_as_words),
        cmocka_unit_test(test_log_axis_ticks_read_back),
        cmocka_unit_test(test_conditioning_axis_spans_the_layers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
