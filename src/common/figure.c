#include "figure.h"

#include "attnscope/attention.h"
#include "attnscope/cost.h"
#include "attnscope/entropy.h"
#include "attnscope/format.h"
#include "attnscope/spectra.h"
#include "attnscope/theory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A point farther out than this times the rest of the picture is pinned to the border
   (with its value printed) instead of squeezing everything else into a corner. */
#define PIN_RATIO 1.25
/* Room around the data, so nothing sits on the frame. */
#define MARGIN 1.1

static LegendItem *legend_add(LegendItem *items, int *n, Ink ink, int cells)
{
    LegendItem *item = &items[(*n)++];
    *item = (LegendItem){.cells = cells, .ink = ink};
    return item;
}

static void sample(LegendItem *item, int k, const char *glyph, uint8_t dots)
{
    item->sample[k].glyph = glyph;
    item->sample[k].dots = dots;
}

/* The arrows that point towards a pinned outlier, each with the border it sits on. */
static const struct {
    const char *glyph, *side;
} ARROWS[] = {{"▸", "right"}, {"◂", "left"}, {"▾", "bottom"}, {"▴", "top"}};

/* The arrow pointing from the centre towards direction (dx, dy) (screen y down). */
static int arrow(double dx, double dy)
{
    if (fabs(dx) >= fabs(dy))
        return dx >= 0 ? 0 : 1;
    return dy >= 0 ? 2 : 3;
}

static void complex_words(Complex z, char *out, size_t size)
{
    if (z.im == 0 || !isfinite(z.re) || !isfinite(z.im))
        Figure_number(out, size, "%.3g", isfinite(z.im) ? z.re : NAN, FIGURE_MISSING);
    else
        snprintf(out, size, "%.3g%+.3gi", z.re, z.im);
}

static void eigenvalue_legend(const EigenvaluePlot *p, EigenvalueFigure *f)
{
    int n = 0;
    LegendItem *item = legend_add(f->legend, &n, INK_BULK, 1);
    sample(item, 0, NULL, SAMPLE_DOT);
    item->sample[0].point = true; /* the eigenvalues are points (Canvas_point) */
    snprintf(item->text, sizeof item->text, "√T·λ (%d)", f->marked ? p->count - 1 : p->count);
    if (f->predicted) {
        item = legend_add(f->legend, &n, INK_THEORY, 1);
        sample(item, 0, "◇", 0);
        snprintf(item->text, sizeof item->text, "predicted λ1 = %.3g", p->predicted_outlier);
    }
    if (f->marked) {
        char value[48], radius[FORMAT_NUMBER_SIZE];
        complex_words(p->values[p->outlier], value, sizeof value);
        item = legend_add(f->legend, &n, INK_OUTLIER, 1);
        sample(item, 0, f->glyph, 0);
        snprintf(item->text, sizeof item->text, "λ1 = %s, √T·|λ1| = %s%s", value,
                 Figure_number(radius, sizeof radius, "%.3g", f->radius, FIGURE_MISSING),
                 f->pinned ? " off scale" : "");
    } else if (p->removed_to_zero) {
        item = legend_add(f->legend, &n, INK_OUTLIER, 1);
        sample(item, 0, FIGURE_REMOVED_GLYPH, 0);
        snprintf(item->text, sizeof item->text, "λ1: 1 → 0 (gap removed)");
    } else if (p->count > 1) {
        item = legend_add(f->legend, &n, INK_DEFAULT, 0);
        snprintf(item->text, sizeof item->text, "no outlier: |λ1| < 2|λ2|");
    }
    if (f->sigma_known) {
        item = legend_add(f->legend, &n, INK_THEORY, f->sigma_fits ? 2 : 0);
        sample(item, 0, NULL, SAMPLE_STROKE);
        sample(item, 1, NULL, SAMPLE_STROKE);
        snprintf(item->text, sizeof item->text, "|z| = σ = %.3g%s", p->sigma,
                 f->sigma_fits ? "" : " off scale");
    }
    /* The unit circle is drawn in its own glyph (not dots), so that without colour it is
       still not taken for eigenvalues. */
    item = legend_add(f->legend, &n, INK_AXIS, 1);
    sample(item, 0, "∘", 0);
    snprintf(item->text, sizeof item->text, "|z| = 1, z = √T·λ");
    f->legend_count = n;
}

void Figure_eigenvalues(const EigenvaluePlot *p, EigenvalueFigure *f)
{
    *f = (EigenvalueFigure){.marked = p->outlier >= 0 && p->outlier < p->count};
    /* The view follows the data: the bulk (every value but the marked outlier) and the unit
       circle.  A theory circle far outside them is named off scale rather than squeezing the
       bulk into a spot; the outlier, when far, is pinned to the border. */
    double bulk = 0;
    for (int i = 0; i < p->count; i++) {
        double r = p->scale * hypot(p->values[i].re, p->values[i].im);
        if (f->marked && i == p->outlier)
            f->radius = r;
        else if (isfinite(r))
            bulk = fmax(bulk, r);
    }
    double base = fmax(bulk, 1.0);
    f->sigma_known = isfinite(p->sigma) && p->sigma > 0;
    f->sigma_fits = f->sigma_known && p->sigma <= PIN_RATIO * base;
    if (f->sigma_fits)
        base = fmax(base, p->sigma);
    f->pinned = f->marked && f->radius > PIN_RATIO * base;
    f->range = MARGIN * (f->pinned || !f->marked ? base : fmax(base, f->radius));
    if (f->marked) {
        f->re = p->scale * p->values[p->outlier].re;
        f->im = p->scale * p->values[p->outlier].im;
    }
    /* Off scale, an arrow on the border points the way to the outlier. */
    int towards = arrow(f->re, -f->im);
    f->glyph = f->pinned ? ARROWS[towards].glyph : "◆";
    f->side = f->pinned ? ARROWS[towards].side : NULL;
    f->predicted = p->show_predicted && isfinite(p->predicted_outlier);
    f->predicted_at = p->scale * p->predicted_outlier;
    eigenvalue_legend(p, f);
}

void Figure_pinned_outlier(const EigenvaluePlot *p, const EigenvalueFigure *f, char *out,
                           size_t size)
{
    out[0] = '\0';
    if (!f->pinned)
        return;
    char value[48];
    complex_words(p->values[p->outlier], value, sizeof value);
    snprintf(out, size, "λ1 = %s (off scale: the arrow %s at the %s border).", value, f->glyph,
             f->side);
}

void Figure_place(const EigenvalueFigure *f, double x_half, double y_half, double *re, double *im,
                  double *predicted)
{
    double t = 1;
    if (f->pinned)
        t = 0.97 * fmin(x_half / fmax(fabs(f->re), 1e-300), y_half / fmax(fabs(f->im), 1e-300));
    *re = t * f->re;
    *im = t * f->im;
    *predicted = fmax(fmin(f->predicted_at, 0.97 * x_half), -0.97 * x_half);
}

static void histogram_legend(const HistogramPlot *p, bool law, HistogramFigure *f)
{
    int n = 0;
    LegendItem *item = legend_add(f->legend, &n, INK_BULK, 1);
    sample(item, 0, NULL, SAMPLE_FULL);
    snprintf(item->text, sizeof item->text, "%s_i, i ≥ 2", f->name);
    if (f->theory) {
        item = legend_add(f->legend, &n, INK_THEORY, 1);
        sample(item, 0, "─", 0);
        snprintf(item->text, sizeof item->text, "%s", p->theory_label);
    } else if (law) {
        item = legend_add(f->legend, &n, INK_THEORY, 0);
        snprintf(item->text, sizeof item->text, "%s off scale (edge 2σ = %.3g)", p->theory_label,
                 2 * p->sigma);
    }
    item = legend_add(f->legend, &n, f->outlier ? INK_OUTLIER : INK_BULK, 1);
    sample(item, 0, f->glyph, 0);
    char s1[FORMAT_NUMBER_SIZE], other[FORMAT_NUMBER_SIZE];
    Figure_number(s1, sizeof s1, "%.3g", f->s1, FIGURE_MISSING);
    if (p->value_name)
        snprintf(item->text, sizeof item->text, "%s1 = %s, %s2 = %s", f->name, s1, f->name,
                 Figure_number(other, sizeof other, "%.3g", f->s2, FIGURE_MISSING));
    else
        snprintf(item->text, sizeof item->text, "√T·s1 = %s, gap √T·(s1−s2) = %s", s1,
                 Figure_number(other, sizeof other, "%.3g", f->s1 - f->s2, FIGURE_MISSING));
    f->legend_count = n;
}

/* Every value in the bars: the axis up to the largest, the legend the bars and the extremes. */
static void histogram_of_every_value(const HistogramPlot *p, HistogramFigure *f)
{
    double largest = p->count > 0 ? p->scale * p->values[0] : 0;
    double least = p->count > 0 ? p->scale * p->values[p->count - 1] : 0;
    f->range = MARGIN * (largest > 0 ? largest : 1);
    int n = 0;
    LegendItem *item = legend_add(f->legend, &n, INK_BULK, 1);
    sample(item, 0, NULL, SAMPLE_FULL);
    snprintf(item->text, sizeof item->text, "%s of each of the %d rows", f->name, p->count);
    item = legend_add(f->legend, &n, INK_DEFAULT, 0);
    char high[FORMAT_NUMBER_SIZE], low[FORMAT_NUMBER_SIZE];
    snprintf(item->text, sizeof item->text, "largest %s, least %s",
             Figure_number(high, sizeof high, "%.3g", largest, FIGURE_MISSING),
             Figure_number(low, sizeof low, "%.3g", least, FIGURE_MISSING));
    f->legend_count = n;
}

void Figure_histogram(const HistogramPlot *p, HistogramFigure *f)
{
    *f = (HistogramFigure){.name = p->value_name ? p->value_name : "√T·s"};
    if (p->every_value) {
        histogram_of_every_value(p, f);
        return;
    }
    f->s1 = p->count > 0 ? p->scale * p->values[0] : 0;
    f->s2 = p->count > 1 ? p->scale * p->values[1] : 0;
    /* The eigenvalues' rule on the two largest: one outlier rule for every panel. */
    Complex top[2] = {{f->s1, 0}, {f->s2, 0}};
    f->outlier = p->count > 1 && Spectra_outlier(2, top) == 0;
    bool law = isfinite(p->sigma) && p->sigma > 0 && p->count > 1;
    /* The axis follows the bulk; the law's edge 2σ widens it only when it is near, else the
       law is named off scale (σ = 55 would flatten a bulk of width 2 into one bar). */
    f->theory = law && 2 * p->sigma <= PIN_RATIO * f->s2;
    double base = f->s2;
    if (f->theory)
        base = fmax(base, 2 * p->sigma);
    /* A bulk that is round-off next to s1 (uniform attention) is drawn at 0, on s1's
       scale, rather than blown up. */
    f->pinned = f->s1 > PIN_RATIO * base && base > FIGURE_NEGLIGIBLE * f->s1;
    f->range = MARGIN * (f->pinned ? base : fmax(base, f->s1));
    /* ▸ rather than ◆ says that s1 lies beyond the right edge. */
    f->glyph = f->pinned ? "▸" : "◆";
    histogram_legend(p, law, f);
}

/* Density of the quartercircle law of radius 2σ. */
static double quartercircle(double x, double sigma)
{
    double r2 = 4 * sigma * sigma - x * x;
    return r2 > 0 ? sqrt(r2) / (M_PI * sigma * sigma) : 0;
}

double Figure_histogram_bins(const HistogramPlot *p, const HistogramFigure *f, int bins,
                             int *counts, double *expected)
{
    double width = f->range / bins, top = 1;
    for (int b = 0; b < bins; b++)
        counts[b] = 0;
    for (int i = p->every_value ? 0 : 1; i < p->count; i++) {
        int b = (int)(p->scale * p->values[i] / width);
        b = b < 0 ? 0 : b >= bins ? bins - 1 : b;
        counts[b]++;
    }
    for (int b = 0; b < bins; b++) {
        double e =
            f->theory ? (p->count - 1) * quartercircle((b + 0.5) * width, p->sigma) * width : 0;
        if (expected)
            expected[b] = e;
        top = fmax(top, fmax(counts[b], expected ? e : 0));
    }
    return top;
}

/* The σ of the circular law, and of the quartercircle law, where they apply (docs/model.md §3):
   markov, and softmax on orthonormal input, with every key allowed, as the theory says. */
static void theory_sigmas(const Config *c, double *circle, double *quartercircle_sigma)
{
    TheoryPrediction t = {.stable_rank = NULL};
    Theory_predict(c, &t);
    *circle = Theory_shown_sigma(c);
    *quartercircle_sigma = isfinite(*circle) ? t.singular_edge / 2 : NAN;
}

/* The outlier theory predicts for relu and sigmoid (docs/model.md §3), NaN elsewhere (softmax and
   markov have λ1 = 1 exactly, which the legend prints already). */
static double predicted_outlier(const Config *c)
{
    if ((c->attention != ATTENTION_RELU && c->attention != ATTENTION_SIGMOID) ||
        !Theory_describes_shown_layer(c))
        return NAN;
    TheoryPrediction t = {.stable_rank = NULL};
    Theory_predict(c, &t);
    return t.outlier;
}

void Figure_eigenvalue_plot(const Config *k, const Complex *values, Gap applied, bool exact,
                            bool overlays, const char *title, EigenvaluePlot *e)
{
    double sigma, quartercircle_sigma;
    theory_sigmas(k, &sigma, &quartercircle_sigma);
    /* The circles are always drawn; the overlays govern the predictions. */
    *e = (EigenvaluePlot){
        .title = title,
        .count = k->tokens,
        .values = values,
        .scale = sqrt((double)k->tokens),
        .sigma = sigma,
        .exact = exact,
        .show_predicted = overlays && applied == GAP_OFF,
        .predicted_outlier = predicted_outlier(k),
        .outlier = Spectra_outlier(k->tokens, values),
        /* Where gap removal sent the outlier: A − U annihilates 1 (each row of A − U sums to
           0), so one eigenvalue is 0, and for a row-stochastic A it was λ1 = 1.  Only then is
           it known that the 1 went to 0: relu's and sigmoid's λ1 need not have stood apart
           before (at small T it does not), and their rows' new eigenvalue 0 says nothing of
           it; linear attention had no outlier to send. */
        .removed_to_zero =
            Config_rows_stochastic(k) &&
            (applied == GAP_CENTER || applied == GAP_DEFLATE || applied == GAP_UNIFORM),
    };
}

bool Figure_compare_eigenvalues(const Result *r, const ToggledNetwork *toggled, bool removed,
                                bool overlays, char *title, EigenvaluePlot *e, Config *config)
{
    const Config *k = &r->config;
    bool own = (k->gap != GAP_OFF) == removed;
    if (config)
        *config = own ? *k : Cost_compare_config(k);
    Gap gap = own ? r->shown_gap : toggled->gap;
    snprintf(title, FIGURE_TITLE_SIZE, "%s (gap %s): eigenvalues √T·λ, ℓ=%d, T=%d",
             removed ? "WITH gap removal" : "WITHOUT gap removal", GAP_NAMES.names[gap], k->layer,
             k->tokens);
    const Complex *values = own ? r->eigenvalues : toggled->eigenvalues;
    if (!r->spectra_ready || !values)
        return false;
    Figure_eigenvalue_plot(k, values, gap, own ? r->eigenvalues_exact : toggled->exact, overlays,
                           title, e);
    return true;
}

void Figure_spectra(const Result *r, bool overlays, char *t1, char *t2, EigenvaluePlot *e,
                    HistogramPlot *h)
{
    const Config *c = &r->config;
    /* "of A, ℓ=1, T=256", naming the gap mode actually applied at the shown layer. */
    char words[96];
    snprintf(words, sizeof words, "of A%s%s, ℓ=%d, T=%d", r->shown_gap == GAP_OFF ? "" : ", gap ",
             r->shown_gap == GAP_OFF ? "" : GAP_NAMES.names[r->shown_gap], c->layer, c->tokens);
    snprintf(t1, FIGURE_TITLE_SIZE, "eigenvalues √T·λ %s%s", words,
             r->eigenvalues_exact ? ", exact" : "");
    snprintf(t2, FIGURE_TITLE_SIZE, "singular values √T·s %s", words);
    Figure_eigenvalue_plot(c, r->eigenvalues, r->shown_gap, r->eigenvalues_exact, overlays, t1, e);
    e->outlier = r->outlier; /* the same rule, applied when the layer was done */
    double sigma, quartercircle_sigma;
    theory_sigmas(c, &sigma, &quartercircle_sigma);
    *h = (HistogramPlot){
        .title = t2,
        .count = c->tokens,
        .values = r->singular_values,
        .scale = e->scale,
        .sigma = overlays ? quartercircle_sigma : NAN,
        .theory_label =
            c->attention == ATTENTION_MARKOV ? "quartercircle law" : "i.i.d. Markov limit",
        .value_name = NULL,
    };
}

static bool any_finite(const double *v, int n)
{
    for (int i = 0; v && i < n; i++)
        if (isfinite(v[i]))
            return true;
    return false;
}

/* Swaps two pointers: the compare view's halves put either network first. */
static void swap(const double **a, const double **b)
{
    const double *t = *a;
    *a = *b;
    *b = t;
}

void Figure_stable_rank_plot(const Result *r, bool overlays, StableRankFirst first,
                             StableRankText *text, StableRankPlot *p)
{
    const char *heading = "stable rank sr(Σℓ) against depth, log axis";
    const Config *k = &r->config;
    bool ensemble = k->seeds > 1 && r->seeds_done > 1;
    const double *network = ensemble ? r->stable_rank_band.mean : r->network.stable_rank;
    const double *counterpart = ensemble ? r->counterpart_band.mean : r->counterpart.stable_rank;
    const double *std = r->stable_rank_band.std, *counterpart_std = r->counterpart_band.std;
    Gap gap = k->gap, other_gap = r->counterpart_gap;
    TheoryPrediction t = {.stable_rank = text->theory,
                          .counterpart_stable_rank = text->theory_other};
    Theory_predict(k, &t);
    const double *curve = text->theory, *curve_other = text->theory_other;
    int out_of_range = t.out_of_range.layer, out_of_range_other = t.counterpart_out_of_range.layer;
    if ((first == FIRST_GAP_OFF && gap != GAP_OFF) ||
        (first == FIRST_GAP_REMOVED && gap == GAP_OFF)) {
        swap(&network, &counterpart);
        swap(&std, &counterpart_std);
        swap(&curve, &curve_other);
        int o = out_of_range;
        out_of_range = out_of_range_other;
        out_of_range_other = o;
        Gap g = gap;
        gap = other_gap;
        other_gap = g;
    }
    if (k->seeds > 1 && r->seeds_done >= k->seeds)
        snprintf(text->title, sizeof text->title, "%s (mean ± 1 std)", heading);
    else if (ensemble)
        snprintf(text->title, sizeof text->title, "%s (mean ± 1 std, %d/%d seeds)", heading,
                 r->seeds_done, k->seeds);
    else if (k->seeds > 1)
        snprintf(text->title, sizeof text->title, "%s (seed 1, ensemble computing)", heading);
    else
        snprintf(text->title, sizeof text->title, "%s", heading);
    bool named = first == FIRST_NETWORK;
    snprintf(text->label, sizeof text->label, "%s (gap %s)", named ? "network" : "this network",
             GAP_NAMES.names[gap]);
    snprintf(text->other, sizeof text->other, "%s (gap %s)", named ? "counterpart" : "the other",
             GAP_NAMES.names[other_gap]);
    bool mixed = false;
    for (int l = 1; l <= k->depth; l++) {
        text->local[l] = Config_layer_local(k, l);
        mixed = mixed || text->local[l] != text->local[1];
    }
    char pattern[WINDOW_LAYERS_PERIOD_MAX + 1];
    Config_window_layers_text(k->window_layers, pattern, sizeof pattern);
    snprintf(text->local_label, sizeof text->local_label, "%s layers (w = %d), others %s: %s",
             MASK_NAMES.names[k->mask], k->window,
             MASK_NAMES.names[k->mask == MASK_WINDOW ? MASK_FULL : MASK_CAUSAL], pattern);
    *p = (StableRankPlot){
        .title = text->title,
        .depth = k->depth,
        .network = network,
        .counterpart = counterpart,
        .network_label = text->label,
        .counterpart_label = text->other,
        .top = k->tokens,
        .shown_layer = k->layer,
        .theory = overlays ? curve : NULL,
        .counterpart_theory = overlays ? curve_other : NULL,
        .theory_note = t.stable_rank_note,
        .theory_out_of_range = out_of_range,
        .counterpart_theory_out_of_range = out_of_range_other,
        .band_std = ensemble ? std : NULL,
        .counterpart_band_std = ensemble ? counterpart_std : NULL,
        .seeds = ensemble ? r->seeds_done : 1,
        .local = mixed ? text->local : NULL,
        .local_label = text->local_label,
    };
}

void Figure_stable_rank(const StableRankPlot *p, StableRankFigure *f)
{
    int L = p->depth + 1;
    *f = (StableRankFigure){.network = any_finite(p->network, L),
                            .counterpart = any_finite(p->counterpart, L),
                            .ensemble = p->seeds > 1 && p->band_std,
                            .theory = any_finite(p->theory, L),
                            .counterpart_theory = any_finite(p->counterpart_theory, L),
                            .note = -1};
    int n = 0;
    LegendItem *item = legend_add(f->legend, &n, INK_BULK, 3);
    sample(item, 0, NULL, SAMPLE_STROKE);
    sample(item, 1, "●", 0);
    sample(item, 2, NULL, SAMPLE_STROKE);
    snprintf(item->text, sizeof item->text, "%s%s%s", p->network_label, f->ensemble ? ", mean" : "",
             f->network ? "" : " (n/a)");
    item = legend_add(f->legend, &n, INK_GHOST, 3);
    sample(item, 0, NULL, SAMPLE_DOT);
    sample(item, 1, "○", 0);
    sample(item, 2, NULL, SAMPLE_DOT);
    snprintf(item->text, sizeof item->text, "%s%s%s", p->counterpart_label,
             f->ensemble ? ", mean" : "", f->counterpart ? "" : " (n/a)");
    if (f->ensemble) {
        item = legend_add(f->legend, &n, INK_BULK, 2);
        sample(item, 0, NULL, SAMPLE_VERTICAL_DOTS);
        sample(item, 1, NULL, SAMPLE_VERTICAL_DOTS);
        snprintf(item->text, sizeof item->text, "±1 std over %d seeds", p->seeds);
    }
    if (f->theory || f->counterpart_theory) {
        item = legend_add(f->legend, &n, INK_THEORY, 3);
        sample(item, 0, NULL, SAMPLE_STROKE);
        sample(item, 1, "×", 0);
        sample(item, 2, NULL, SAMPLE_STROKE);
        bool both = f->theory && f->counterpart_theory;
        size_t used = (size_t)snprintf(item->text, sizeof item->text, "theory (docs/model.md §3)%s",
                                       both        ? ", both networks"
                                       : f->theory ? ", network"
                                                   : ", counterpart");
        int ends[2] = {f->theory ? p->theory_out_of_range : 0,
                       f->counterpart_theory ? p->counterpart_theory_out_of_range : 0};
        const char *whose[2] = {"network's ", "counterpart's "};
        for (int i = 0; i < 2; i++)
            if (ends[i] && used < sizeof item->text)
                used += (size_t)snprintf(item->text + used, sizeof item->text - used,
                                         "; %snot drawn from ℓ = %d (outside [1, T])",
                                         both ? whose[i] : "", ends[i]);
    } else if (p->theory && p->theory_note) {
        f->note = n;
        item = legend_add(f->legend, &n, INK_THEORY, 0);
        snprintf(item->text, sizeof item->text, "no theory curve: %s", p->theory_note);
    }
    if (p->local) {
        item = legend_add(f->legend, &n, INK_AXIS, 1);
        sample(item, 0, FIGURE_LOCAL_GLYPH, 0);
        snprintf(item->text, sizeof item->text, "%s", p->local_label);
    }
    item = legend_add(f->legend, &n, INK_HIGHLIGHT, 2);
    sample(item, 0, "┆", 0);
    sample(item, 1, "▴", 0);
    snprintf(item->text, sizeof item->text, "shown layer %d", p->shown_layer);
    f->legend_count = n;
}

double Figure_nice_step(double raw)
{
    if (!(raw > 0) || !isfinite(raw))
        return 1.0;
    double magnitude = pow(10.0, floor(log10(raw)));
    const double steps[] = {1, 2, 5, 10};
    for (int i = 0; i < 4; i++)
        if (steps[i] * magnitude >= raw * (1 - 1e-12))
            return steps[i] * magnitude;
    return 10 * magnitude;
}

int Figure_ticks(double lo, double hi, int wanted, bool whole, double *out, int max, double *step)
{
    *step = Figure_nice_step((hi - lo) / wanted);
    if (whole)
        *step = fmax(*step, 1.0);
    int n = 0;
    for (double v = ceil(lo / *step) * *step; v <= hi + 1e-9 * *step && n < max; v += *step)
        out[n++] = v;
    return n;
}

void Figure_tick_label(double v, double step, char *out, size_t size)
{
    snprintf(out, size, "%g", fabs(v) < 1e-9 * step ? 0.0 : v);
}

int Figure_log_ticks(double lo, double hi, int wanted, double *out, int max)
{
    double step = ceil(Figure_nice_step((hi - lo) / wanted));
    bool fine = hi - lo < 2;
    const double mantissas[] = {1, 2, 5};
    int n = 0;
    for (int i = 0; i < 64; i++) {
        double k = floor(lo / step) * step + i * step;
        if (k > hi + 1e-9)
            break;
        for (int m = 0; m < (fine ? 3 : 1) && n < max; m++) {
            double v = k + log10(mantissas[m]);
            if (v >= lo - 1e-9 && v <= hi + 1e-9)
                out[n++] = v;
        }
    }
    return n;
}

void Figure_log_label(double v, char *out, size_t size)
{
    double e = floor(v + 1e-9), mantissa = round(pow(10.0, v - e));
    if (fabs(e) <= 4)
        snprintf(out, size, "%g", mantissa * pow(10.0, e));
    else if (mantissa == 1)
        snprintf(out, size, "1e%.0f", e);
    else
        snprintf(out, size, "%.0fe%.0f", mantissa, e);
}

/* "4.7e+21" as "4.7e21", "5e-07" as "5e-7": a screen's label column has six cells. */
static void compact_exponent(char *label)
{
    char *e = strchr(label, 'e');
    if (!e)
        return;
    char *digits = e + 1 + (e[1] == '-' || e[1] == '+'), *first = digits;
    while (first[0] == '0' && first[1])
        first++;
    if (e[1] == '+')
        digits = e + 1;
    memmove(digits, first, strlen(first) + 1);
}

int Figure_log_axis_ticks(double lo, double hi, int wanted, double *at,
                          char (*labels)[FIGURE_TICK_LABEL_SIZE], int max)
{
    int n = Figure_log_ticks(lo, hi, wanted, at, max);
    double step = 1;
    bool linear_steps = n < 2 && fabs(lo) < 300 && fabs(hi) < 300;
    if (linear_steps)
        n = Figure_ticks(pow(10, lo), pow(10, hi), wanted, false, at, max, &step);
    for (int i = 0; i < n; i++) {
        if (!linear_steps) {
            Figure_log_label(at[i], labels[i], FIGURE_TICK_LABEL_SIZE);
            continue;
        }
        /* The digits down to the step's; below 10^5 every digit of the whole part (%g
           wrote 500 as 5e+02). */
        double exponent = floor(log10(fabs(at[i])));
        double digits = fmax(1, exponent - floor(log10(step)) + 1);
        if (exponent >= 0 && exponent < 5)
            digits = fmax(digits, exponent + 1);
        snprintf(labels[i], FIGURE_TICK_LABEL_SIZE, "%.*g", (int)digits, at[i]);
        compact_exponent(labels[i]);
        at[i] = log10(at[i]);
    }
    return n;
}

const char *Figure_number(char *out, size_t size, const char *format, double v, const char *missing)
{
    if (isfinite(v))
        snprintf(out, size, format, v);
    else
        snprintf(out, size, "%s", missing);
    return out;
}

void Figure_settings(const Config *c, char *buf, size_t size)
{
    Config defaults = Config_default();
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < Settings_count() && used < size; i++) {
        const Setting *setting = Settings_at(i);
        bool always = i < 3;
        if (!always && Setting_get(setting, c) == Setting_get(setting, &defaults))
            continue;
        char value[FORMAT_NUMBER_SIZE];
        if (setting->kind == SETTING_DOUBLE && isfinite(Setting_get(setting, c)))
            Format_shortest(Setting_get(setting, c), value);
        else
            Setting_format(setting, c, 0, value, sizeof value);
        int n =
            snprintf(buf + used, size - used, "%s--%s %s", used ? " " : "", setting->name, value);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

void Figure_attention_map(const Result *r, AttentionMapPlot *p)
{
    const Config *c = &r->config;
    bool product = c->attention_map == ATTENTION_MAP_PRODUCT;
    *p = (AttentionMapPlot){.product = product, .tokens = c->tokens};
    if (product)
        snprintf(p->title, sizeof p->title, "attention product A_ℓ…A_1, ℓ=%d, head %d, T=%d",
                 c->layer, c->head, c->tokens);
    else
        snprintf(p->title, sizeof p->title, "attention map A (as built), ℓ=%d, head %d, T=%d",
                 c->layer, c->head, c->tokens);
    const AttentionMap *map = product ? &r->product_map : &r->attention_map;
    if (!r->spectra_ready || !map->mean) {
        /* The layer done without spectra: its network overflowed or vanished before it. */
        if (!r->spectra_ready && r->layers_done >= c->layer)
            p->message = "no map: the network has no finite attention matrix at this layer";
        else
            p->message = r->spectra_ready ? "computing the product A_ℓ…A_1…" : "computing…";
        return;
    }
    p->map = map;
    if (!product) {
        p->hint = "y: the product A_ℓ…A_1 and its column mass (one T×T product a layer)";
        return;
    }
    p->column_mass = r->product_column_mass;
    int peak = 0;
    for (int j = 1; j < c->tokens; j++)
        if (r->product_column_mass[j] > r->product_column_mass[peak])
            peak = j;
    char mass[FORMAT_NUMBER_SIZE];
    snprintf(p->mass_label, sizeof p->mass_label,
             "column mass Σ_i P_ij/T against token j: largest %s at j=%d",
             Figure_number(mass, sizeof mass, "%.3g", r->product_column_mass[peak], FIGURE_MISSING),
             peak + 1);
}

int Figure_map_factor(const AttentionMap *m, int cells)
{
    if (cells < 1)
        cells = 1;
    return (m->cells + cells - 1) / cells;
}

double Figure_map_top(const AttentionMap *m)
{
    double top = 0;
    for (size_t i = 0; m->mean && i < (size_t)m->cells * m->cells; i++)
        if (fabs(m->mean[i]) > top)
            top = fabs(m->mean[i]);
    return top;
}

int Figure_shade(double value, double top)
{
    if (value == 0 || !(top > 0))
        return 0;
    double steps = (FIGURE_SHADES - 2) / FIGURE_SHADE_DECADES;
    double level = FIGURE_SHADES - 1 + ceil(log10(fabs(value) / top) * steps);
    return level < 1 ? 1 : level > FIGURE_SHADES - 1 ? FIGURE_SHADES - 1 : (int)level;
}

void Figure_map_legend(double top, const AttentionMap *drawn,
                       char phrase[FIGURE_MAP_PHRASES][FIGURE_MAP_PHRASE_SIZE])
{
    snprintf(phrase[0], FIGURE_MAP_PHRASE_SIZE, "log scale to max %.3g", top);
    snprintf(phrase[1], FIGURE_MAP_PHRASE_SIZE, "'.' ≤ %.2g, blank: 0",
             top * pow(10, -FIGURE_SHADE_DECADES));
    int last = AttentionMap_cell_tokens(drawn, drawn->cells - 1);
    char rest[32] = "";
    if (last != drawn->block)
        snprintf(rest, sizeof rest, " (last %d)", last);
    snprintf(phrase[2], FIGURE_MAP_PHRASE_SIZE, "block means %d×%d tokens%s", drawn->block,
             drawn->block, rest);
    snprintf(phrase[3], FIGURE_MAP_PHRASE_SIZE, "%d×%d cells", drawn->cells, drawn->cells);
    snprintf(phrase[4], FIGURE_MAP_PHRASE_SIZE, "rows: query i, columns: key j");
}

/* ---- curves on shared axes -------------------------------------------------------------- */

double Figure_scaled(Scale s, double v)
{
    if (!isfinite(v))
        return NAN;
    if (s == SCALE_LOG)
        return v > 0 ? log10(v) : NAN;
    return v;
}

void Figure_series_range(const SeriesPlot *p, bool along_x, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int k = 0; k < p->count; k++) {
        const Series *s = &p->series[k];
        for (int i = 0; i < s->count; i++) {
            double u = Figure_scaled(p->x_scale, s->x[i]), v = Figure_scaled(p->y_scale, s->y[i]);
            if (!isfinite(u) || (!isfinite(v) && !(along_x && p->x_span_all)))
                continue;
            double w = along_x ? u : v;
            *lo = fmin(*lo, w);
            *hi = fmax(*hi, w);
        }
    }
}

static bool series_has_points(const SeriesPlot *p, const Series *s)
{
    for (int i = 0; i < s->count; i++)
        if (isfinite(Figure_scaled(p->x_scale, s->x[i])) &&
            isfinite(Figure_scaled(p->y_scale, s->y[i])))
            return true;
    return false;
}

int Figure_series_legend(const SeriesPlot *p, LegendItem *items, bool *any)
{
    int n = 0;
    *any = false;
    for (int k = 0; k < p->count && k < SERIES_MAX; k++) {
        const Series *s = &p->series[k];
        bool has = series_has_points(p, s);
        *any = *any || has;
        uint8_t dots = s->stroke == STROKE_SOLID ? SAMPLE_STROKE : SAMPLE_DOT;
        items[n] = (LegendItem){
            .sample = {{NULL, dots}, {s->marker, dots}, {NULL, dots}}, .cells = 3, .ink = s->ink};
        snprintf(items[n++].text, sizeof items[0].text, "%s%s%s", s->label, has ? "" : " ",
                 has         ? ""
                 : s->absent ? s->absent
                             : "(n/a)");
    }
    for (int k = 0; k < p->notes && k < SERIES_NOTES_MAX; k++) {
        items[n] = (LegendItem){.cells = 0, .ink = INK_DEFAULT};
        snprintf(items[n++].text, sizeof items[0].text, "%s", p->note[k]);
    }
    return n;
}

/* ---- the entropy view ------------------------------------------------------------------- */

/* Over the rows of a layer's mask, the mean of ln n_i (the mean row entropy of uniform rows,
   the ceiling of the mean) and the largest (the ceiling of every row's). */
static void log_keys(const Config *c, int layer, double *mean, double *largest)
{
    double sum = 0;
    *largest = 0;
    for (int i = 0; i < c->tokens; i++) {
        int first, last;
        Mask_row_range(Config_layer_mask(c, layer), c->window, c->tokens, i, &first, &last);
        double keys = log(last - first + 1.0);
        sum += keys;
        *largest = fmax(*largest, keys);
    }
    *mean = sum / c->tokens;
}

/* The notes under the entropy curves: where the random-energy line holds (or why there is
   none), why Zhai et al.'s bound is missing, and which side of Giorlandino & Goldt's
   threshold the shown layer is on.  Returns how many. */
static int entropy_notes(const Result *r, const EntropyTheory *e, EntropyText *t)
{
    const Config *c = &r->config;
    int n = 0;
    char a[FORMAT_NUMBER_SIZE], b[FORMAT_NUMBER_SIZE];
    if (e->note)
        snprintf(t->notes[n++], sizeof t->notes[0], "no random-energy line: %s", e->note);
    else
        snprintf(t->notes[n++], sizeof t->notes[0],
                 "ln T − s²/2 holds at ℓ=1 for s < s_c = %s; s = %s",
                 Figure_number(a, sizeof a, "%.3g", e->critical_logit_std, FIGURE_MISSING),
                 Figure_number(b, sizeof b, "%.3g", e->logit_std, FIGURE_MISSING));
    const char *zhai = Entropy_zhai_void(c, c->layer);
    if (zhai)
        snprintf(t->notes[n++], sizeof t->notes[0], "no Zhai bound at ℓ=%d: %s", c->layer, zhai);
    double beta = Theory_phase_beta(c), critical = r->network.phase_critical_beta[c->layer];
    const char *side = Theory_phase_side(beta, critical);
    if (side && !Theory_phase_void(c, c->layer))
        snprintf(t->notes[n++], sizeof t->notes[0],
                 "ℓ=%d: %s side, β = %s, β_c = %s (Giorlandino & Goldt)", c->layer, side,
                 Figure_number(a, sizeof a, "%.3g", beta, FIGURE_MISSING),
                 Figure_number(b, sizeof b, "%.3g", critical, FIGURE_MISSING));
    return n;
}

void Figure_entropy_plot(const Result *r, bool overlays, bool notes, EntropyText *text,
                         SeriesPlot *p)
{
    const Config *c = &r->config;
    int depth = c->depth, layers = depth + 1;
    bool every_key = true; /* every layer's mask the full one: the ceiling is ln T */
    text->layers[0] = 0;
    text->ceiling[0] = NAN;
    for (int l = 1; l <= depth; l++) {
        double largest;
        text->layers[l] = l;
        log_keys(c, l, &text->ceiling[l], &largest);
        every_key = every_key && Config_layer_mask(c, l) == MASK_FULL;
    }
    EntropyTheory e;
    Theory_entropy_first_layer(c, &e);
    text->prediction[0] = e.mean;
    snprintf(text->title, sizeof text->title, "row entropy H (nats) against depth, head %d",
             c->head);
    snprintf(text->network, sizeof text->network, "mean H (gap %s)", GAP_NAMES.names[c->gap]);
    snprintf(text->counterpart, sizeof text->counterpart, "mean H (gap %s)",
             GAP_NAMES.names[r->counterpart_gap]);
    snprintf(text->least, sizeof text->least, "least H_i");
    snprintf(text->ceiling_label, sizeof text->ceiling_label, "%s",
             every_key ? "ln T" : "mean ln n_i");
    snprintf(text->bound, sizeof text->bound, "Zhai bound");
    snprintf(text->prediction_label, sizeof text->prediction_label, "ln T − s²/2");
    *p = (SeriesPlot){
        .title = text->title,
        .count = 4,
        .series = {{text->network, layers, text->layers, r->network.entropy.mean, INK_BULK,
                    STROKE_SOLID, "●"},
                   {text->counterpart, layers, text->layers, r->counterpart.entropy.mean, INK_GHOST,
                    STROKE_DOTTED, "○"},
                   {text->least, layers, text->layers, r->network.entropy.min, INK_BULK,
                    STROKE_DASHED, "▾"},
                   {text->ceiling_label, layers, text->layers, text->ceiling, INK_AXIS,
                    STROKE_DOTTED, NULL}},
        .x_scale = SCALE_LINEAR,
        .y_scale = SCALE_LINEAR,
        .empty =
            Entropy_defined(c->attention) ? "computing…" : Entropy_undefined_reason(c->attention),
        .x_name = "layer ℓ",
        .x_whole = true,
    };
    if (!overlays)
        return;
    /* × as the stable rank's theory curves: without colour a bare dashed line's legend
       sample reads as the ceiling's dotted one. */
    p->series[p->count++] =
        (Series){text->bound, layers,        text->layers, r->network.entropy_zhai_bound,
                 INK_THEORY,  STROKE_DASHED, "×",          NULL};
    p->series[p->count++] = (Series){text->prediction_label,
                                     1,
                                     text->layers + 1,
                                     text->prediction,
                                     INK_THEORY,
                                     STROKE_SOLID,
                                     "◇",
                                     NULL};
    p->notes = notes ? entropy_notes(r, &e, text) : 0;
    for (int k = 0; k < p->notes; k++)
        p->note[k] = text->notes[k];
}

static int descending_values(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

const char *Figure_row_entropy_plot(const Result *r, char *title, double *sorted, HistogramPlot *h)
{
    const Config *c = &r->config;
    int T = c->tokens;
    bool defined = r->spectra_ready && Entropy_defined(c->attention);
    /* What bounds every row: H_i ≤ ln n_i, ln T only where each row sees every key. */
    double mean, largest;
    log_keys(c, c->layer, &mean, &largest);
    if (Config_layer_mask(c, c->layer) == MASK_FULL)
        snprintf(title, FIGURE_TITLE_SIZE, "row entropies H_i, ℓ=%d (ln T = %.3g)", c->layer,
                 largest);
    else
        snprintf(title, FIGURE_TITLE_SIZE, "row entropies H_i, ℓ=%d (max ln n_i = %.3g)", c->layer,
                 largest);
    /* The rows are null together where they are round-off (docs/model.md §2): no bars. */
    int rows = 0;
    for (int i = 0; defined && i < T; i++)
        if (!isnan(r->row_entropy[i]))
            sorted[rows++] = r->row_entropy[i];
    qsort(sorted, (size_t)rows, sizeof(double), descending_values);
    *h = (HistogramPlot){title, rows, sorted, 1.0, NAN, "", "H_i (nats)", true};
    return defined && rows == 0 ? FIGURE_ROWS_ROUND_OFF : NULL;
}
