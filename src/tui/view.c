#include "view.h"

#include "ascii.h"
#include "attnscope/entropy.h"
#include "attnscope/layer.h"
#include "attnscope/spectra.h"
#include "attnscope/theory.h"
#include "keys.h"
#include "plot.h"
#include "tour.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-layer arrays on the stack: the depth is at most CONFIG_DEPTH_MAX. */
enum { LAYERS_MAX = CONFIG_DEPTH_MAX + 1 };

typedef struct {
    int row, col, rows, cols;
} Rect;

/* The eigenvalue panel on the left, about square in dots; histogram over stable rank on
   the right. */
static void layout(int cols, int rows, Rect *eigen, Rect *histogram, Rect *stable)
{
    /* Plot rows ≈ panel rows − title, axis, tick labels and two legend rows; a square of
       them is twice as many columns, plus the tick labels. */
    int wanted = 7 + 2 * (rows - 5);
    int left = wanted < cols * 2 / 5 ? cols * 2 / 5 : wanted > cols / 2 ? cols / 2 : wanted;
    int right = cols - left - 1;
    *eigen = (Rect){0, 0, rows, left};
    *histogram = (Rect){0, left + 1, rows / 2, right};
    *stable = (Rect){rows / 2, left + 1, rows - rows / 2, right};
}

static const char *spelled(const Screen *s, const char *utf8, char *buf, size_t size)
{
    if (Screen_unicode(s))
        return utf8;
    return Ascii_transliterate(utf8, buf, size);
}

static void centred(Screen *s, int row, const char *utf8, bool bold)
{
    char buf[256];
    const char *t = spelled(s, utf8, buf, sizeof buf);
    int col = (Screen_cols(s) - Ascii_columns(t)) / 2;
    Screen_text(s, row, col < 0 ? 0 : col, t, INK_DEFAULT, bold);
}

static void size_message(Screen *s)
{
    char line[160];
    int rows = Screen_rows(s);
    snprintf(line, sizeof line, "attnscope needs at least %d×%d", VIEW_MIN_COLS, VIEW_MIN_ROWS);
    centred(s, rows / 2 - 1, line, true);
    snprintf(line, sizeof line, "this terminal is %d×%d", Screen_cols(s), rows);
    centred(s, rows / 2, line, false);
    centred(s, rows / 2 + 1, "enlarge it, or press q to quit", false);
}

/* The eigenvalues, and the singular values unless histogram is NULL (the conditioning view
   draws K's there). */
static void spectra_panels(const Snapshot *shown, const Display *d, Canvas *eigen,
                           Canvas *histogram)
{
    char wait[96];
    if (!shown || shown->failed || !shown->result->spectra_ready) {
        const char *why = "computing…";
        if (shown && shown->failed)
            why = "the computation failed (see the status line)";
        else if (shown && shown->done)
            why = "no spectra: the network overflowed or vanished at or before this layer";
        else if (shown) {
            snprintf(wait, sizeof wait, "waiting for layer %d (%d of %d done)",
                     shown->result->config.layer, shown->result->layers_done,
                     shown->result->config.depth);
            why = wait;
        }
        Plot_message(eigen, "eigenvalues √T·λ", why);
        if (histogram)
            Plot_message(histogram, "singular values √T·s", why);
        return;
    }
    char t1[FIGURE_TITLE_SIZE], t2[FIGURE_TITLE_SIZE];
    EigenvaluePlot e;
    HistogramPlot h;
    Figure_spectra(shown->result, d->overlays, t1, t2, &e, &h);
    Plot_eigenvalues(eigen, &e);
    if (histogram)
        Plot_histogram(histogram, &h);
}

static void stable_rank_panel(const Snapshot *shown, const Display *d, StableRankFirst first,
                              Canvas *c)
{
    if (!shown || shown->failed) {
        Plot_message(c, "stable rank sr(Σℓ) against depth, log axis",
                     shown ? "the computation failed" : "computing…");
        return;
    }
    StableRankText text;
    StableRankPlot p;
    Figure_stable_rank_plot(shown->result, d->overlays, first, &text, &p);
    Plot_stable_rank(c, &p);
}

static void layers_axis(double *x, int depth)
{
    for (int l = 0; l <= depth; l++)
        x[l] = l;
}

static void gradient_panel(const Snapshot *s, Canvas *c)
{
    const char *title = "gradient norm ‖∂X_L/∂W^V_ℓ‖_F², attention frozen, log axis";
    const Config *k = &s->result->config;
    double x[LAYERS_MAX];
    layers_axis(x, s->result->config.depth);
    char network[64], counterpart[64];
    snprintf(network, sizeof network, "network (gap %s)", GAP_NAMES.names[k->gap]);
    snprintf(counterpart, sizeof counterpart, "counterpart (gap %s)",
             GAP_NAMES.names[s->result->counterpart_gap]);
    const char *empty = "computing… (the gradients need the full depth)";
    if (s->done)
        empty = Model_gradients_unavailable(k) ? Model_gradients_unavailable(k)
                                               : "undefined here (see the warnings)";
    /* Index 0 is unused: the curves start at ℓ = 1. */
    SeriesPlot p = {
        .title = title,
        .count = 2,
        .series = {{network, s->result->config.depth, x + 1,
                    s->result->network.log10_gradient_norm + 1, INK_BULK, STROKE_SOLID, "●"},
                   {counterpart, s->result->config.depth, x + 1,
                    s->result->counterpart.log10_gradient_norm + 1, INK_GHOST, STROKE_DOTTED, "○"}},
        .x_scale = SCALE_LINEAR,
        .y_scale = SCALE_LOG10_GIVEN,
        .notes = 1,
        .note = {"at full depth L, attention frozen"},
        .empty = empty,
        .x_name = "layer ℓ",
        .x_whole = true,
    };
    Plot_series(c, &p);
}

static void similarity_panel(const Snapshot *s, Canvas *c)
{
    const Config *k = &s->result->config;
    double x[LAYERS_MAX];
    layers_axis(x, s->result->config.depth);
    char network[64], counterpart[64];
    snprintf(network, sizeof network, "network (gap %s)", GAP_NAMES.names[k->gap]);
    snprintf(counterpart, sizeof counterpart, "counterpart (gap %s)",
             GAP_NAMES.names[s->result->counterpart_gap]);
    SeriesPlot p = {
        .title = "token similarity μ(Xℓ)/μ(X0) against depth, log axis",
        .count = 2,
        .series = {{network, s->result->config.depth + 1, x, s->result->network.token_similarity,
                    INK_BULK, STROKE_SOLID, "●"},
                   {counterpart, s->result->config.depth + 1, x,
                    s->result->counterpart.token_similarity, INK_GHOST, STROKE_DOTTED, "○"}},
        .x_scale = SCALE_LINEAR,
        .y_scale = SCALE_LOG,
        .notes = 1,
        .note = {"μ(X) = ‖X − mean token‖_F; gaps: round-off"},
        .empty = "computing…",
        .x_name = "layer ℓ",
        .x_whole = true,
    };
    Plot_series(c, &p);
}

static void sweep_panel(const Snapshot *s, const Display *d, Canvas *c)
{
    const Config *k = &s->result->config;
    char title[160];
    snprintf(title, sizeof title, "width sweep: sr(Σℓ) − 1 at ℓ=%d against T, γ=T/d, log–log",
             k->layer);
    if (!s->has_sweep || s->sweep.count == 0) {
        Plot_message(c, title,
                     s->done && Layer_weights_in_use()
                         ? "no width sweep: the checkpoint's weights (--weights) fix d"
                     : s->done ? "no sweep (see the status line)"
                               : "computing the width sweep (T = 16 … T)…");
        return;
    }
    const WidthSweep *w = &s->sweep;
    double x[SWEEP_POINTS_MAX], rx[2], ry[2] = {NAN, NAN};
    for (int i = 0; i < w->count; i++)
        x[i] = w->tokens[i];
    /* The theory slope as a reference line through the first gap-off point. */
    bool reference = d->overlays && isfinite(w->theory_slope);
    rx[0] = x[0];
    rx[1] = x[w->count - 1];
    for (int i = 0; reference && i < w->count; i++)
        if (w->excess[i] > 0 && isfinite(w->excess[i])) {
            ry[0] = w->excess[i] * pow(rx[0] / x[i], w->theory_slope);
            ry[1] = w->excess[i] * pow(rx[1] / x[i], w->theory_slope);
            break;
        }
    char slope[96], fit[128], ensemble[96];
    snprintf(slope, sizeof slope, "theory slope 1−2ℓ = %g", w->theory_slope);
    snprintf(fit, sizeof fit, "fitted slopes %.3g (gap off), %.3g (removed)", w->slope,
             w->slope_gap);
    snprintf(ensemble, sizeof ensemble, "mean of %d seed%s", k->seeds, k->seeds > 1 ? "s" : "");
    SeriesPlot p = {
        .title = title,
        .count = reference ? 3 : 2,
        .series = {{"gap off", w->count, x, w->excess, INK_BULK, STROKE_SOLID, "●"},
                   {"gap removed", w->count, x, w->excess_gap, INK_GHOST, STROKE_DOTTED, "○"},
                   {slope, 2, rx, ry, INK_THEORY, STROKE_DASHED, NULL}},
        .x_scale = SCALE_LOG,
        .y_scale = SCALE_LOG,
        .notes = 2,
        .note = {fit, ensemble},
        .empty = "sr − 1 is round-off at every T",
        .x_name = "T",
    };
    if (d->overlays && !isfinite(w->theory_slope))
        p.note[p.notes++] = "no theory slope: markov, full mask, no skip, no LN only";
    Plot_series(c, &p);
}

/* ---- the conditioning view (docs/model.md §8) ------------------------------------------- */

/* The conditioning slot whose initialisation is the paper's (cutting_skip) or not: the
   compare view puts normal on the left, cutting-skip on the right. */
static int conditioning_slot(const Snapshot *s, bool cutting_skip)
{
    bool first_is = s->result->config.init == INIT_CUTTING_SKIP;
    return first_is == cutting_skip ? 0 : 1;
}

/* The settings of a conditioning slot, whether or not it is computed yet. */
static InitScheme slot_init(const Snapshot *s, int slot)
{
    InitScheme own = s->result->config.init;
    return slot == 0 ? own : own == INIT_CUTTING_SKIP ? INIT_NORMAL : INIT_CUTTING_SKIP;
}

/* Why a conditioning slot has no curves yet, or NULL when it has them. */
static const char *conditioning_missing(const Snapshot *s, int slot)
{
    if (!s || s->failed)
        return s ? "the computation failed (see the status line)" : "computing…";
    if (s->conditioning_note[slot][0])
        return s->conditioning_note[slot];
    if (!s->has_conditioning[slot])
        return "computing the Jacobians (the status line says how far)…";
    return NULL;
}

/* Below this many rows a conditioning panel is compact (80×24): one title row, the network's
   three curves with a one-row legend, no notes, so that the plot keeps its six rows. */
enum { CONDITIONING_COMPACT_ROWS = 16 };

/* A κ as the panel prints it: "null" where it is not computed (the reason is on the path and
   the nulls lines), never "nan". */
static const char *kappa_text(char *out, size_t size, double kappa)
{
    if (isnan(kappa))
        snprintf(out, size, "null");
    else
        snprintf(out, size, "%.4g", kappa);
    return out;
}

/* A κ(K) as the readout prints it after its name: "=" the value; where it is null, "≥" the
   proved lower bound when there is one (never the bound as the value), else "=null". */
static const char *kappa_or_bound(char *out, size_t size, double kappa, double lower)
{
    char value[24];
    if (isnan(kappa) && !isnan(lower))
        snprintf(out, size, "≥%.3g", lower);
    else
        snprintf(out, size, "=%s", kappa_text(value, sizeof value, kappa));
    return out;
}

/* Where a network's κ(K) is null and a lower bound is proved, the bound (NaN elsewhere): the
   points drawn apart, with their own marker, index 1..depth.  Returns how many. */
static int bound_points(const ConditioningCurves *c, int depth, double *out)
{
    int count = 0;
    out[0] = NAN;
    for (int l = 1; l <= depth; l++) {
        out[l] = isnan(c->kappa_jacobian[l]) ? c->kappa_jacobian_lower[l] : NAN;
        count += !isnan(out[l]);
    }
    return count;
}

/* The conditioning panel's notes: which path ran and how sure it is (a relative error is
   claimed only where a layer is certified), the layers left null and why (with how many of
   them carry a proved lower bound, drawn ▴), and the numbers at the shown layer. */
static int conditioning_notes(const Conditioning *k, int bounded, char *path, char *nulls,
                              char *values, size_t size)
{
    int depth = k->config.depth, shown = k->config.layer;
    int n = k->config.tokens * k->config.width, missing = 0, certified = 0;
    double worst = 0;
    for (int l = 1; l <= depth; l++) {
        missing += isnan(k->network.kappa_jacobian[l]);
        double e = k->network.jacobian_s_min_error[l] / k->network.jacobian_s_min[l];
        if (isfinite(e)) {
            worst = fmax(worst, e);
            certified++;
        }
    }
    /* The matrix-free path's ways to s_min, over both networks' layers. */
    const KronTally *kron = &k->kron;
    const char *how = kron->certified ? "Kronecker" : "Lanczos";
    char where[48] = "";
    /* "Kronecker 8/24": the layers it certified of both networks' (the rest: Lanczos), short
       enough for the panel's line. */
    if (kron->certified)
        snprintf(where, sizeof where, " %d/%d", kron->certified,
                 kron->certified + kron->lanczos + kron->beyond + kron->inexact);
    /* The bound as 1e-04, never 0.0001: "± 0" must mean a zero bound alone. */
    if (k->jacobian_exact)
        snprintf(path, size, "κ(K) exact (SVD of K, %d×%d)", n, n);
    else if (certified)
        snprintf(path, size, "κ(K) estimated: %s%s, s_min ± %.0e relative", how, where, worst);
    else
        snprintf(path, size, "κ(K) estimated: %s, certified at no layer", how);
    nulls[0] = '\0';
    if (missing && bounded == missing)
        snprintf(nulls, size, "κ(K) null at %d of %d layers; ▴ a proved κ(K) ≥ (!)", missing,
                 depth);
    else if (missing && bounded)
        snprintf(nulls, size, "κ(K) null at %d of %d layers; ▴ a proved κ(K) ≥ at %d (!)", missing,
                 depth, bounded);
    else if (missing)
        snprintf(nulls, size, "%s: null at %d of %d layers (!)",
                 k->jacobian_exact ? "beyond double precision" : "not certified", missing, depth);
    char kj[32], ks[24], ka[24];
    /* On the exact path a null κ(K) is beyond double precision, and its bound is not drawn. */
    snprintf(values, size, "ℓ=%d: κ(K)%s κ(K+I)=%s κ(A⋯A)=%s", shown,
             kappa_or_bound(kj, sizeof kj, k->network.kappa_jacobian[shown],
                            k->jacobian_exact ? NAN : k->network.kappa_jacobian_lower[shown]),
             kappa_text(ks, sizeof ks, k->network.kappa_jacobian_skip[shown]),
             kappa_text(ka, sizeof ka, k->network.kappa_attention_product[shown]));
    return missing;
}

/* κ against depth on a log axis: the network's κ(K_ℓ) (no skip), κ(K_ℓ + I) (what a skip
   adds) and κ(A_ℓ⋯A_1), and its counterpart's κ(K_ℓ), κ(K_ℓ + I); a null point is a gap,
   its reason in the warnings (!). */
static void conditioning_panel(const Snapshot *s, int slot, bool named, Canvas *c)
{
    char title[192];
    const char *init = s ? INIT_NAMES.names[slot_init(s, slot)] : "";
    bool compact = Canvas_rows(c) < CONDITIONING_COMPACT_ROWS;
    snprintf(title, sizeof title, "%s%s%sκ of the attention sub-block's Jacobian K, log axis",
             named ? "init " : "", named ? init : "", named ? ": " : "");
    const char *missing = conditioning_missing(s, slot);
    if (missing) {
        Plot_message(c, title, missing);
        return;
    }
    const Conditioning *k = &s->conditioning[slot];
    int depth = k->config.depth;
    double x[LAYERS_MAX];
    layers_axis(x, depth);
    char network[48], network_skip[48], counterpart[64], counterpart_skip[64];
    snprintf(network, sizeof network, "κ(K) (gap %s)", GAP_NAMES.names[k->config.gap]);
    snprintf(network_skip, sizeof network_skip, "κ(K + I)");
    snprintf(counterpart, sizeof counterpart, "κ(K) (gap %s)", GAP_NAMES.names[k->counterpart_gap]);
    snprintf(counterpart_skip, sizeof counterpart_skip, "κ(K + I) (gap %s)",
             GAP_NAMES.names[k->counterpart_gap]);
    /* Above the exact size κ(K + I) is never computed: its places show, where κ(K) is
       null, the proved lower bound instead (▴ the network's, ▵ its counterpart's). */
    double bound[LAYERS_MAX], counterpart_bound[LAYERS_MAX];
    int bounded = 0;
    if (!k->jacobian_exact) {
        bounded = bound_points(&k->network, depth, bound);
        bound_points(&k->counterpart, depth, counterpart_bound);
        snprintf(network_skip, sizeof network_skip, "κ(K) ≥ (gap %s)",
                 GAP_NAMES.names[k->config.gap]);
        snprintf(counterpart_skip, sizeof counterpart_skip, "κ(K) ≥ (gap %s)",
                 GAP_NAMES.names[k->counterpart_gap]);
    }
    const double *skip_or_bound = k->jacobian_exact ? k->network.kappa_jacobian_skip : bound;
    const double *counterpart_skip_or_bound =
        k->jacobian_exact ? k->counterpart.kappa_jacobian_skip : counterpart_bound;
    char path[128], nulls[128], values[128];
    int missing_points = conditioning_notes(k, bounded, path, nulls, values, sizeof path);
    if (compact)
        snprintf(title, sizeof title, "%s%sκ, log: K %s%s", named ? init : "", named ? ": " : "",
                 k->jacobian_exact ? "exact" : "Lanczos", missing_points ? ", nulls (!)" : "");
    SeriesPlot p = {
        .title = title,
        .count = 5,
        .series = {{network, depth, x + 1, k->network.kappa_jacobian + 1, INK_BULK, STROKE_SOLID,
                    "●"},
                   {network_skip, depth, x + 1, skip_or_bound + 1, INK_OUTLIER,
                    k->jacobian_exact ? STROKE_DASHED : STROKE_DOTTED,
                    k->jacobian_exact ? "◆" : "▴"},
                   {"κ(A_ℓ⋯A_1)", depth, x + 1, k->network.kappa_attention_product + 1, INK_THEORY,
                    STROKE_DOTTED, "×"},
                   {counterpart, depth, x + 1, k->counterpart.kappa_jacobian + 1, INK_GHOST,
                    STROKE_DOTTED, "○"},
                   {counterpart_skip, depth, x + 1, counterpart_skip_or_bound + 1, INK_GHOST,
                    STROKE_DOTTED, k->jacobian_exact ? "◇" : "▵"}},
        .x_scale = SCALE_LINEAR,
        .y_scale = SCALE_LOG,
        .notes = compact    ? 0
                 : nulls[0] ? 3
                            : 2,
        .note = {path, values, nulls},
        .empty = "every κ is null here: beyond double precision or not certified (see !)",
        .x_name = "layer ℓ",
        .x_whole = true,
    };
    if (compact) {
        p.count = 3;
        p.series[0].label = "K";
        p.series[1].label = k->jacobian_exact ? "K+I" : "K≥";
        p.series[2].label = "A⋯A";
    }
    Plot_series(c, &p);
}

static int descending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* At most this many products of the two SVDs in the dominant term's histogram: above, every
   k-th singular value of each factor (said in the title). */
enum { DOMINANT_FACTOR_MAX = 256 };

/* The singular values of K at the shown layer (exact path), or of the dominant term
   B = W_VOᵀ ⊗ A, the pairwise products of the two SVDs, above the exact size. */
static void conditioning_histogram(const Snapshot *s, int slot, Canvas *c)
{
    const char *missing = conditioning_missing(s, slot);
    if (missing) {
        Plot_message(c, "singular values of K", missing);
        return;
    }
    const Conditioning *k = &s->conditioning[slot];
    int T = k->config.tokens, d = k->config.width, layer = k->config.layer;
    char title[192];
    bool compact = Canvas_rows(c) < CONDITIONING_COMPACT_ROWS;
    if (k->jacobian_singular_values) {
        if (compact)
            snprintf(title, sizeof title, "s of K, ℓ=%d, %d×%d, exact", layer, T * d, T * d);
        else
            snprintf(title, sizeof title, "singular values s of K, ℓ=%d, %d×%d (exact)", layer,
                     T * d, T * d);
        HistogramPlot h = {title, T * d, k->jacobian_singular_values, 1.0, NAN, "", "s", false};
        Plot_histogram(c, &h);
        return;
    }
    /* With heads B = Σ_h W_VO,hᵀ ⊗ A_h is no Kronecker product: its singular values are not
       the factors' products, and above the exact size they are not computed. */
    if (k->config.heads > 1) {
        Plot_message(c, "singular values of K", "K not built; heads: B is no Kronecker product");
        return;
    }
    int stride_a = (T + DOMINANT_FACTOR_MAX - 1) / DOMINANT_FACTOR_MAX,
        stride_w = (d + DOMINANT_FACTOR_MAX - 1) / DOMINANT_FACTOR_MAX;
    int count_a = (T + stride_a - 1) / stride_a, count_w = (d + stride_w - 1) / stride_w;
    double *products = malloc(sizeof(double) * (size_t)count_a * count_w);
    if (!products || !k->attention_singular_values || !k->value_output_singular_values) {
        free(products);
        Plot_message(c, "singular values of B = W_VOᵀ⊗A", "no singular values at this layer");
        return;
    }
    int n = 0;
    for (int i = 0; i < T; i += stride_a)
        for (int j = 0; j < d; j += stride_w)
            products[n++] = k->attention_singular_values[i] * k->value_output_singular_values[j];
    qsort(products, (size_t)n, sizeof(double), descending);
    char every[48] = "";
    if (stride_a > 1 || stride_w > 1)
        snprintf(every, sizeof every, ", every %d×%d-th", stride_a, stride_w);
    if (compact)
        snprintf(title, sizeof title, "s of B = W_VOᵀ⊗A, ℓ=%d%s", layer, every);
    else
        snprintf(title, sizeof title, "singular values s of B = W_VOᵀ⊗A, ℓ=%d: s_i(A)·s_j(W_VO)%s",
                 layer, every);
    HistogramPlot h = {title, n, products, 1.0, NAN, "", "s", false};
    Plot_histogram(c, &h);
    free(products);
}

enum { ENTROPY_NOTES_ROWS = 16 };

/* The entropy view's main panel: row entropies against depth, with the bounds and the
   random-energy prediction when the overlays are on (Figure_entropy_plot). */
static void entropy_panel(const Snapshot *s, const Display *d, Canvas *c)
{
    EntropyText text;
    SeriesPlot p;
    /* The notes need rows a 24-row terminal's panel does not have. */
    Figure_entropy_plot(s->result, d->overlays, Canvas_rows(c) >= ENTROPY_NOTES_ROWS, &text, &p);
    Plot_series(c, &p);
}

/* The entropy view's second panel: the histogram of the shown matrix's row entropies. */
static void row_entropy_panel(const Snapshot *s, Canvas *c)
{
    const Config *k = &s->result->config;
    char title[FIGURE_TITLE_SIZE];
    double *sorted = malloc(sizeof(double) * (size_t)k->tokens);
    HistogramPlot h;
    if (!sorted) {
        Plot_message(c, "row entropies", "out of memory");
        return;
    }
    Figure_row_entropy_plot(s->result, title, sorted, &h);
    if (h.count == 0)
        Plot_message(c, title,
                     Entropy_defined(k->attention) ? "computing…"
                                                   : Entropy_undefined_reason(k->attention));
    else
        Plot_histogram(c, &h);
    free(sorted);
}

static void main_panel(const Snapshot *shown, const Display *d, Canvas *c)
{
    if (d->panel == PANEL_STABLE_RANK || !shown || shown->failed) {
        stable_rank_panel(shown, d, FIRST_NETWORK, c);
        return;
    }
    if (d->panel == PANEL_WIDTH_SWEEP)
        sweep_panel(shown, d, c);
    else if (d->panel == PANEL_GRADIENT)
        gradient_panel(shown, c);
    else if (d->panel == PANEL_CONDITIONING)
        conditioning_panel(shown, 0, false, c);
    else if (d->panel == PANEL_ENTROPY)
        entropy_panel(shown, d, c);
    else
        similarity_panel(shown, c);
}

/* The attention map alone (docs/model.md §2), drawn from the figure's description. */
static void map_panel(const Snapshot *shown, Canvas *c)
{
    if (!shown || shown->failed) {
        Plot_message(c, "attention map", shown ? "the computation failed" : "computing…");
        return;
    }
    AttentionMapPlot p;
    Figure_attention_map(shown->result, &p);
    Plot_attention_map(c, &p);
}

/* One half of the compare view: the eigenvalues of the network without (or with) gap
   removal over its stable-rank curve.  The main run's network is one of the two; the
   worker's second run (same weights) gives the other's eigenvalues. */
static void compare_half(const Snapshot *shown, const Display *d, bool removed, Canvas *eigen,
                         Canvas *stable)
{
    const char *heading = removed ? "WITH gap removal" : "WITHOUT gap removal";
    char title[192];
    if (!shown || shown->failed || !shown->result->spectra_ready) {
        snprintf(title, sizeof title, "%s: eigenvalues √T·λ", heading);
        Plot_message(eigen, title,
                     shown && shown->failed ? "the computation failed" : "computing…");
        stable_rank_panel(shown, d, removed ? FIRST_GAP_REMOVED : FIRST_GAP_OFF, stable);
        return;
    }
    const Config *k = &shown->result->config;
    bool main_is_this = (k->gap != GAP_OFF) == removed;
    const Complex *values = main_is_this ? shown->result->eigenvalues : shown->compare_eigenvalues;
    Gap gap = main_is_this ? shown->result->shown_gap : shown->compare_gap;
    bool exact = main_is_this ? shown->result->eigenvalues_exact : shown->compare_exact;
    snprintf(title, sizeof title, "%s (gap %s): eigenvalues √T·λ, ℓ=%d, T=%d", heading,
             GAP_NAMES.names[gap], k->layer, k->tokens);
    if (!main_is_this && !shown->has_compare) {
        Plot_message(eigen, title, "computing the same weights with the gap toggled…");
    } else {
        EigenvaluePlot e;
        Figure_eigenvalue_plot(k, values, gap, exact, d->overlays, title, &e);
        Plot_eigenvalues(eigen, &e);
    }
    stable_rank_panel(shown, d, removed ? FIRST_GAP_REMOVED : FIRST_GAP_OFF, stable);
}

/* utf8 as this screen spells it, cut to width columns, in buf. */
static const char *spelled_cut(const Screen *s, const char *utf8, int width, char *buf, size_t size)
{
    if (Screen_unicode(s))
        snprintf(buf, size, "%s", utf8);
    else
        Ascii_transliterate(utf8, buf, size);
    return Ascii_cut(buf, width, NULL);
}

enum { HELP_LINES_MAX = 96 };

/* The help's lines (spelled for the screen): one per key or, paired, one per setting's
   raise and lower keys; returns the count and the widest line's columns in *width. */
static int help_lines(const Screen *s, bool paired, char lines[][KEYS_HELP_SIZE * 2], int *width)
{
    char buf[KEYS_HELP_SIZE], ascii[KEYS_HELP_SIZE * 2];
    int n = 0;
    *width = 0;
    for (int i = 0; i < Keys_count() && n < HELP_LINES_MAX; i++) {
        if (paired)
            i += Keys_help_compact(Keys_at(i), Keys_at(i + 1), buf, sizeof buf) - 1;
        else
            Keys_help_line(Keys_at(i), buf, sizeof buf);
        snprintf(lines[n], sizeof lines[n], "%s", spelled(s, buf, ascii, sizeof ascii));
        int w = Ascii_columns(lines[n++]);
        *width = w > *width ? w : *width;
    }
    return n;
}

/* Columns of at most `width` for n lines in the screen's rows − 2 (3 columns apart): the
   lines per column, and the columns each column gets. */
static int help_columns(int n, int width, int rows, int cols, int *per_column, int *column_cols)
{
    *per_column = rows - 2;
    int columns = (n + *per_column - 1) / *per_column;
    if (columns < 2)
        columns = 2, *per_column = (n + 1) / 2; /* two columns read better than one tall one */
    else
        *per_column = (n + columns - 1) / columns;
    *column_cols = (cols - 4 - 3 * (columns - 1)) / columns;
    if (*column_cols > width)
        *column_cols = width;
    return columns;
}

/* Every key in as many columns as the screen needs, over the whole screen (status lines
   included).  Where one line per key would be cut (80×24: eight columns for the words, × and
   ÷ cut off), a setting's two keys share a line; where those lines are still cut in the
   columns they need, they go in two columns that hold them whole, on as many pages as that
   takes (Space turns them: a cut line would hide which key does what). */
static void help_overlay(Screen *s, int rows, int cols, int page)
{
    char lines[HELP_LINES_MAX][KEYS_HELP_SIZE * 2];
    int width, per_column, column_cols;
    int n = help_lines(s, false, lines, &width);
    int columns = help_columns(n, width, rows, cols, &per_column, &column_cols);
    if (column_cols < width) {
        n = help_lines(s, true, lines, &width);
        columns = help_columns(n, width, rows, cols, &per_column, &column_cols);
    }
    int first = 0, count = n, pages = 1;
    if (column_cols < width && rows > 2) {
        /* The pages share the lines evenly, each in two columns of equal height. */
        columns = 2;
        column_cols = (cols - 4 - 3) / 2;
        pages = (n + 2 * (rows - 2) - 1) / (2 * (rows - 2));
        int per_page = (n + pages - 1) / pages;
        per_column = (per_page + 1) / 2;
        page = (page % pages + pages) % pages;
        first = page * per_page;
        count = n - first < per_page ? n - first : per_page;
    }
    int box_cols = columns * column_cols + 3 * (columns - 1) + 4, box_rows = per_column + 2;
    int top = (rows - box_rows) / 2, left = (cols - box_cols) / 2;
    Screen_box(s, top, left, box_rows, box_cols);
    char title[64];
    Screen_text(s, top, left + 2, spelled(s, " attnscope keys ", title, sizeof title), INK_DEFAULT,
                true);
    /* What closes it (and turns its pages), on the bottom border, as the ? line says. */
    char closing[96];
    if (pages > 1)
        snprintf(closing, sizeof closing, " page %d of %d, Space turns; Esc, ? or q closes ",
                 page + 1, pages);
    else
        snprintf(closing, sizeof closing, " Esc, ? or q closes this help ");
    int closing_cols = Ascii_columns(closing);
    if (closing_cols + 4 <= box_cols)
        Screen_text(s, top + box_rows - 1, left + box_cols - closing_cols - 2, closing, INK_DEFAULT,
                    false);
    for (int i = 0; i < count; i++)
        Screen_text(s, top + 1 + i % per_column, left + 2 + (i / per_column) * (column_cols + 3),
                    Ascii_cut(lines[first + i], column_cols, NULL), INK_DEFAULT, false);
}

enum { WARNING_LINES_MAX = WARNINGS_MAX * 4 };

/* The warning texts from the first-th word-wrapped to width columns, each starting with its
   number; returns the lines. */
static int warning_lines(const Screen *s, const Warnings *w, int first, int width,
                         char lines[][WARNING_LENGTH + 16])
{
    int n = 0;
    for (int i = first; i < w->count && n < WARNING_LINES_MAX; i++) {
        char text[WARNING_LENGTH + 16], buf[2 * (WARNING_LENGTH + 16)];
        snprintf(text, sizeof text, "%d. %s", i + 1, w->text[i]);
        const char *p = spelled(s, text, buf, sizeof buf);
        while (*p && n < WARNING_LINES_MAX) {
            /* The longest run of whole words that fits (one long word is cut). */
            size_t length = strlen(p), cut = length;
            char trial[sizeof lines[0]];
            if (Ascii_columns(p) > width) {
                cut = 0;
                for (size_t k = 1; k < length && k < sizeof trial; k++) {
                    if (p[k] != ' ')
                        continue;
                    memcpy(trial, p, k);
                    trial[k] = '\0';
                    if (Ascii_columns(trial) > width)
                        break;
                    cut = k;
                }
                if (cut == 0)
                    cut = length < sizeof trial - 1 ? length : sizeof trial - 1;
            }
            snprintf(lines[n], sizeof lines[n], "%s%.*s", p == text || p == buf ? "" : "   ",
                     (int)cut, p);
            Ascii_cut(lines[n++], width, NULL);
            p += cut;
            while (*p == ' ')
                p++;
        }
    }
    return n;
}

/* Every warning of the shown result, in full, in a box that scrolls by warnings (! opens
   it), from the first-th. */
static void warnings_overlay(Screen *s, const Snapshot *shown, int first, int rows, int cols)
{
    int box_cols = cols - 4 < 100 ? cols - 4 : 100, box_rows = rows - 2;
    int top = 1, left = (cols - box_cols) / 2, visible = box_rows - 2;
    static char lines[WARNING_LINES_MAX][WARNING_LENGTH + 16];
    int n = 0;
    if (shown)
        n = warning_lines(s, &shown->result->warnings, first, box_cols - 4, lines);
    Screen_box(s, top, left, box_rows, box_cols);
    char title[128], buf[256];
    snprintf(title, sizeof title, " warnings of the shown result (%d): ↑/↓ scroll, Esc closes ",
             shown ? shown->result->warnings.count : 0);
    Screen_text(s, top, left + 2, spelled_cut(s, title, box_cols - 4, buf, sizeof buf), INK_DEFAULT,
                true);
    if (n == 0)
        Screen_text(s, top + 1, left + 2, "none: nothing to warn about", INK_DEFAULT, false);
    for (int i = 0; i < n && i < visible; i++)
        Screen_text(s, top + 1 + i, left + 2, lines[i], INK_DEFAULT, false);
    if (visible < n || first > 0) {
        snprintf(title, sizeof title, " %s%s%s ", first > 0 ? "more above: ↑" : "",
                 first > 0 && visible < n ? ", " : "", visible < n ? "more below: ↓" : "");
        Screen_text(s, top + box_rows - 1, left + 2, spelled(s, title, buf, sizeof buf),
                    INK_DEFAULT, false);
    }
}

/* A line of wrapped_header: drawn, or only counted. */
static void header_line(Screen *s, bool draw, int row, int col, const char *line)
{
    if (draw)
        Screen_text(s, row, col, line, INK_DEFAULT, false);
}

/* Word-wraps a preset header into the rectangle (or, unless draw, only counts the rows it
   takes): a line that starts with a space continues the one before (the presets' indented
   continuation lines), an empty line separates paragraphs.  Returns the rows used. */
static int wrapped_lines(Screen *s, bool draw, const char *header, int row, int col, int rows,
                         int width)
{
    char line[512] = "", word[256], out[512];
    int used = 0, line_columns = 0;
    const char *p = header;
    while (*p && used < rows) {
        size_t length = strcspn(p, "\n");
        bool continued = p[0] == ' ', blank = length == 0;
        if (!continued && line[0]) { /* a new sentence or paragraph: flush the line */
            header_line(s, draw, row + used++, col, line);
            line[0] = '\0';
            line_columns = 0;
        }
        if (blank && used > 0 && used < rows)
            used++; /* the paragraph break */
        const char *q = p, *end = p + length;
        while (q < end && used < rows) {
            while (q < end && *q == ' ')
                q++;
            size_t w = strcspn(q, " \n");
            if (w == 0)
                break;
            snprintf(word, sizeof word, "%.*s", (int)(w < sizeof word - 1 ? w : sizeof word - 1),
                     q);
            q += w;
            /* A word wider than the rectangle (a path) goes on in pieces of its width. */
            char spelled_word[512];
            snprintf(spelled_word, sizeof spelled_word, "%s", spelled(s, word, out, sizeof out));
            for (const char *rest = spelled_word; *rest && used < rows;) {
                snprintf(out, sizeof out, "%s", rest);
                Ascii_cut(out, width, NULL);
                size_t bytes = strlen(out);
                if (bytes == 0)
                    break;
                rest += bytes;
                int columns = Ascii_columns(out);
                if (line_columns > 0 && line_columns + 1 + columns > width) {
                    header_line(s, draw, row + used++, col, line);
                    line[0] = '\0';
                    line_columns = 0;
                    if (used >= rows)
                        break;
                }
                /* Fits: the line holds at most width columns. */
                size_t at = strlen(line), n = bytes;
                if (line_columns && at + 1 < sizeof line)
                    line[at++] = ' ';
                if (at + n >= sizeof line)
                    n = sizeof line - at - 1;
                memcpy(line + at, out, n);
                line[at + n] = '\0';
                line_columns += (line_columns ? 1 : 0) + columns;
            }
        }
        p = *end ? end + 1 : end;
    }
    if (line[0] && used < rows)
        header_line(s, draw, row + used++, col, line);
    return used;
}

static int wrapped_header(Screen *s, const char *header, int row, int col, int rows, int width)
{
    return wrapped_lines(s, true, header, row, col, rows, width);
}

/* The preset picker: the list on the left (source beside each name, the selection marked
   with > and bold, so it does not rest on colour), the selection's header on the right. */
static void picker_overlay(Screen *s, const Picker *p, const char *note, int rows, int cols)
{
    int box_cols = cols - 4 < 120 ? cols - 4 : 120, box_rows = rows - 2;
    int top = 1, left = (cols - box_cols) / 2;
    Screen_box(s, top, left, box_rows, box_cols);
    char buf[512], out[512];
    snprintf(buf, sizeof buf, " presets (%d): ↑/↓ or j/k choose, Enter loads, Esc closes ",
             p->count);
    Screen_text(s, top, left + 2, spelled_cut(s, buf, box_cols - 4, out, sizeof out), INK_DEFAULT,
                true);
    int name_width = 0;
    for (int i = 0; i < p->count; i++) {
        int w = Ascii_columns(p->entry[i].name);
        name_width = w > name_width ? w : name_width;
    }
    int list_cols = name_width + 12 < box_cols / 2 ? name_width + 12 : box_cols / 2;
    int visible = box_rows - 2, first = p->selected - visible / 2;
    if (first > p->count - visible)
        first = p->count - visible;
    if (first < 0)
        first = 0;
    for (int i = first; i < p->count && i - first < visible; i++) {
        const PickerEntry *e = &p->entry[i];
        bool selected = i == p->selected;
        snprintf(buf, sizeof buf, "%c %-*s %s", selected ? '>' : ' ', name_width, e->name,
                 Preset_source_name(e->source));
        Screen_text(s, top + 1 + i - first, left + 2,
                    spelled_cut(s, buf, list_cols - 1, out, sizeof out),
                    selected ? INK_HIGHLIGHT : INK_DEFAULT, selected);
    }
    int text_col = left + 2 + list_cols + 1, text_cols = box_cols - list_cols - 5;
    /* Why the selected preset was refused, in full, above its path. */
    int note_rows = 0;
    if (text_cols >= 20 && note && note[0]) {
        note_rows = visible / 3;
        wrapped_header(s, note, top + box_rows - 2 - note_rows, text_col, note_rows, text_cols);
    }
    if (text_cols >= 20 && p->count > 0) {
        int used =
            wrapped_header(s, p->header, top + 1, text_col, visible - 2 - note_rows, text_cols);
        if (used == 0)
            Screen_text(s, top + 1, text_col, "(no header comment)", INK_DEFAULT, false);
        Screen_text(s, top + box_rows - 2, text_col,
                    spelled_cut(s, p->entry[p->selected].path, text_cols, out, sizeof out),
                    INK_DEFAULT, false);
    }
}

/* The prompt of p or x: its title, what is typed so far with a cursor, its detail, what the
   keys do. */
static void prompt_overlay(Screen *s, const Prompt *p, const char *note, int rows, int cols)
{
    int detail_rows = p->detail ? 2 : 0;
    int box_cols = cols - 4 < 90 ? cols - 4 : 90, box_rows = 8 + detail_rows;
    int top = (rows - box_rows) / 2, left = (cols - box_cols) / 2;
    Screen_box(s, top, left, box_rows, box_cols);
    char buf[PROMPT_SIZE + 64], out[PROMPT_SIZE + 64];
    Screen_text(s, top, left + 2, p->title, INK_DEFAULT, true);
    /* A long text shows its end, where the typing is. */
    int room = box_cols - 5 - (int)strlen(p->label), length = (int)strlen(p->text);
    const char *shown = length > room ? p->text + (length - room) : p->text;
    snprintf(buf, sizeof buf, "%s%s_", p->label, shown);
    Screen_text(s, top + 2, left + 2, spelled_cut(s, buf, box_cols - 4, out, sizeof out),
                INK_DEFAULT, true);
    if (p->detail)
        wrapped_header(s, p->detail, top + 3, left + 2, detail_rows, box_cols - 4);
    Screen_text(s, top + 3 + detail_rows, left + 2,
                spelled_cut(s, p->hint, box_cols - 4, out, sizeof out), INK_DEFAULT, false);
    /* What the last key was refused for, where the typing is. */
    if (note && note[0])
        wrapped_header(s, note, top + 4 + detail_rows, left + 2, 3, box_cols - 4);
}

/* Presentation mode: the loaded preset's "Point at:" note in a box under the panels, in rows
   of its own, word-wrapped, so that the class reads what to look at and every panel stays
   whole. */
enum { CAPTION_BOX_COLS_MAX = 110 };

static int caption_box_cols(int cols)
{
    return cols < CAPTION_BOX_COLS_MAX ? cols : CAPTION_BOX_COLS_MAX;
}

/* Presentation mode is read from the back of a room: a panel shorter than this is not drawn
   there (the screen shows fewer panels, and says how to see the others).  At 80 columns a
   panel's frame takes up to 9 rows: its title (1, or 2 where the eigenvalue panel's wraps),
   the x axis and its tick labels (2) and its legend (up to 6 rows: the stable-rank panel's
   two curves, the theory's three-line note, the shown layer).  14 rows leave every panel at
   least 5 plot rows, 20 dots: a log axis's decade labels (T, 10, 1) each on a row of its own
   with a row between them, and the eigenvalues' disk still round (tests/tui/present.sh
   measures the plot rows on the screen at 80x24, 100x30 and 120x40). */
enum { PRESENT_PANEL_ROWS_MIN = 14 };

/* The rows the panels need: in presentation mode one row of panels at its minimum (the note
   says on its border which are hidden); elsewhere the rows they need to be drawn at all, measured
   at 80 columns: the right-hand column's histogram (7) over its stable-rank panel (8); the
   compare view's eigenvalues over stable ranks (8 each); one panel alone (8). */
static int panels_min_rows(const Display *d)
{
    if (d->present)
        return PRESENT_PANEL_ROWS_MIN;
    int count = Display_panel_count(d);
    if (d->zoom >= 1 && d->zoom <= count)
        return 8;
    return d->compare ? 16 : 15;
}

/* The rows the caption's box takes under panels of `area` rows: all its lines, but at most a
   third of the area and never the rows the panels need (a line of it at least). */
static int caption_rows(Screen *s, const char *caption, int area, int cols, const Display *d)
{
    int width = caption_box_cols(cols) - 4, most = area / 3;
    if (most > area - panels_min_rows(d))
        most = area - panels_min_rows(d);
    if (most < 3)
        most = 3;
    int lines = wrapped_lines(s, false, caption, 0, 0, area, width);
    return 2 + lines < most ? 2 + lines : most;
}

/* The note as its box shows it.  The note points at the eigenvalue panel's outlier ("the
   point at 1"), which off scale is only an arrow on the border: while that panel is drawn so,
   the note opens with the outlier's value and where the arrow is (its first line, the one
   every size shows). */
static const char *caption_text(const View *v, char *out, size_t size)
{
    const Snapshot *shown = v->status.shown;
    const Display *d = &v->display;
    bool eigenvalues_drawn = !d->compare && d->panel != PANEL_ATTENTION_MAP &&
                             (d->zoom < 1 || d->zoom > Display_panel_count(d) || d->zoom == 1);
    if (!eigenvalues_drawn || !shown || shown->failed || !shown->result->spectra_ready)
        return v->caption;
    char t1[FIGURE_TITLE_SIZE], t2[FIGURE_TITLE_SIZE], pinned[256];
    EigenvaluePlot e;
    HistogramPlot h;
    EigenvalueFigure fig;
    Figure_spectra(shown->result, d->overlays, t1, t2, &e, &h);
    Figure_eigenvalues(&e, &fig);
    Figure_pinned_outlier(&e, &fig, pinned, sizeof pinned);
    if (!pinned[0])
        return v->caption;
    snprintf(out, size, "%s %s", pinned, v->caption);
    return out;
}

/* The note's box; hidden (or NULL) says on its top border which panels are not drawn. */
static void caption_box(Screen *s, const char *caption, int top, int box_rows, int cols,
                        const char *hidden)
{
    int box_cols = caption_box_cols(cols), width = box_cols - 4, left = (cols - box_cols) / 2;
    char buf[256];
    Screen_box(s, top, left, box_rows, box_cols);
    Screen_text(s, top, left + 2, spelled(s, " tour ", buf, sizeof buf), INK_DEFAULT, true);
    if (hidden) {
        char text[192], cut[384];
        snprintf(text, sizeof text, " %s ", hidden);
        const char *shown = spelled_cut(s, text, box_cols - 11, cut, sizeof cut);
        int at = left + box_cols - 2 - Ascii_columns(shown);
        Screen_text(s, top, at, shown, INK_DEFAULT, false);
    }
    int lines = wrapped_lines(s, false, caption, 0, 0, 4 * box_rows + 64, width);
    wrapped_header(s, caption, top + 1, left + 2, box_rows - 2, width);
    /* Cut: say where the rest is, on the bottom border. */
    const char *rest = " more: a taller terminal shows the rest ";
    if (lines > box_rows - 2 && Ascii_columns(rest) + 4 <= box_cols)
        Screen_text(s, top + box_rows - 1, left + box_cols - Ascii_columns(rest) - 2, rest,
                    INK_DEFAULT, false);
}

void View_panels(const View *v, Canvas **canvas)
{
    const Snapshot *shown = v->status.shown;
    if (v->display.panel == PANEL_CONDITIONING && v->display.compare) {
        int left = shown ? conditioning_slot(shown, false) : 0;
        conditioning_panel(shown, left, true, canvas[0]);
        conditioning_histogram(shown, left, canvas[1]);
        conditioning_panel(shown, 1 - left, true, canvas[2]);
        conditioning_histogram(shown, 1 - left, canvas[3]);
        return;
    }
    if (v->display.panel == PANEL_CONDITIONING && shown && !shown->failed) {
        spectra_panels(shown, &v->display, canvas[0], NULL);
        conditioning_histogram(shown, 0, canvas[1]);
        main_panel(shown, &v->display, canvas[2]);
        return;
    }
    if (v->display.panel == PANEL_ATTENTION_MAP && !v->display.compare) {
        map_panel(shown, canvas[0]);
        return;
    }
    if (v->display.panel == PANEL_ENTROPY && !v->display.compare && shown && !shown->failed) {
        spectra_panels(shown, &v->display, canvas[0], NULL);
        row_entropy_panel(shown, canvas[1]);
        main_panel(shown, &v->display, canvas[2]);
        return;
    }
    if (v->display.compare) {
        compare_half(shown, &v->display, false, canvas[0], canvas[1]);
        compare_half(shown, &v->display, true, canvas[2], canvas[3]);
        return;
    }
    spectra_panels(shown, &v->display, canvas[0], canvas[1]);
    main_panel(shown, &v->display, canvas[2]);
}

/* Two columns, each an eigenvalue panel over a stable-rank panel. */
static void compare_layout(int cols, int rows, Rect r[4])
{
    /* The stable-rank panels need their legends: on a small terminal, half the rows. */
    int left = (cols - 1) / 2, right = cols - left - 1, top = rows < 30 ? rows / 2 : rows * 3 / 5;
    r[0] = (Rect){0, 0, top, left};
    r[1] = (Rect){top, 0, rows - top, left};
    r[2] = (Rect){0, left + 1, top, right};
    r[3] = (Rect){top, left + 1, rows - top, right};
}

/* Which of the frame's panels are drawn: every one, or the zoomed one alone, or in
   presentation mode with the lower row hidden, the upper row. */
static void panels_shown(const Display *d, bool lower_hidden, bool shown[VIEW_PANELS_MAX])
{
    int count = Display_panel_count(d);
    bool zoomed = d->zoom >= 1 && d->zoom <= count;
    for (int i = 0; i < VIEW_PANELS_MAX; i++)
        shown[i] = i < count && (zoomed ? d->zoom == i + 1 : true);
    /* The lower row: the compare view's second and fourth panel, the histogram otherwise. */
    if (lower_hidden && !zoomed) {
        shown[1] = false;
        shown[3] = shown[3] && !d->compare;
    }
}

/* What the shown panels are about, as warnings name it (WarningSubject bits). */
static unsigned panels_subjects(const Display *d, const bool shown[VIEW_PANELS_MAX])
{
    /* Each panel's subjects, in the order zoom counts the panels. */
    unsigned spectra_theory = WARNING_ABOUT_SPECTRA_THEORY; /* the circles are always drawn */
    unsigned rank_theory = d->overlays ? WARNING_ABOUT_STABLE_RANK_THEORY : 0;
    unsigned eigen = WARNING_ABOUT_EIGENVALUES | spectra_theory;
    unsigned stable = WARNING_ABOUT_STABLE_RANK | rank_theory;
    unsigned main_panel_subjects[PANEL_COUNT] = {
        [PANEL_STABLE_RANK] = stable,
        [PANEL_WIDTH_SWEEP] = rank_theory,
        [PANEL_GRADIENT] = WARNING_ABOUT_GRADIENTS,
        [PANEL_SIMILARITY] = WARNING_ABOUT_SIMILARITY,
        [PANEL_ENTROPY] = WARNING_ABOUT_ENTROPY,
    };
    unsigned panel[VIEW_PANELS_MAX] = {0};
    if (d->compare) {
        panel[0] = panel[2] = eigen;
        panel[1] = panel[3] = stable;
    } else if (Display_panel_count(d) == 1) {
        panel[0] = WARNING_ABOUT_EIGENVALUES; /* the shown matrix, as the map draws it */
    } else {
        panel[0] = eigen;
        panel[1] = d->panel == PANEL_ENTROPY
                       ? WARNING_ABOUT_ENTROPY
                       : WARNING_ABOUT_SINGULAR_VALUES | (d->overlays ? spectra_theory : 0);
        panel[2] = main_panel_subjects[d->panel];
    }
    unsigned subjects = WARNING_ABOUT_RUN;
    for (int i = 0; i < VIEW_PANELS_MAX; i++)
        if (shown[i])
            subjects |= panel[i];
    return subjects;
}

unsigned View_subjects(const Display *d)
{
    bool shown[VIEW_PANELS_MAX];
    panels_shown(d, false, shown);
    return panels_subjects(d, shown);
}

/* The panels' places in panel_rows rows (every canvas gets one, drawn or not): the layout,
   the conditioning's compare view's own rows, zoom (each at the whole area), the upper row
   at the whole height less hint_rows (the line that says so) when the lower is hidden.
   Returns the count. */
static int panels_place(const Display *d, int cols, int panel_rows, bool lower_hidden,
                        int hint_rows, Rect r[VIEW_PANELS_MAX])
{
    int count = Display_panel_count(d);
    if (d->compare)
        compare_layout(cols, panel_rows, r);
    else if (count == 1)
        r[0] = (Rect){0, 0, panel_rows, cols};
    else
        layout(cols, panel_rows, &r[0], &r[1], &r[2]);
    /* The conditioning's κ panels need six plot rows under their title and legend; its
       histograms fit in nine. */
    if (d->compare && d->panel == PANEL_CONDITIONING && panel_rows < 30) {
        int top = panel_rows - 9;
        r[0].rows = r[2].rows = top;
        r[1].row = r[3].row = top;
        r[1].rows = r[3].rows = panel_rows - top;
    }
    if (d->zoom >= 1 && d->zoom <= count) {
        for (int i = 0; i < count; i++)
            r[i] = (Rect){0, 0, panel_rows, cols};
    } else if (lower_hidden && count > 1) {
        r[0].rows = panel_rows - hint_rows;
        r[d->compare ? 2 : 1].rows = panel_rows - hint_rows;
        if (!d->compare)
            r[2] = (Rect){0, r[1].col, panel_rows - hint_rows, r[1].cols};
    }
    return count;
}

/* Presentation mode: whether a panel of the full layout would be below
   PRESENT_PANEL_ROWS_MIN (the lower row is then hidden). */
static bool present_lower_hidden(const Display *d, int cols, int panel_rows)
{
    if (!d->present)
        return false;
    Rect r[VIEW_PANELS_MAX];
    bool shown[VIEW_PANELS_MAX];
    int count = panels_place(d, cols, panel_rows, false, 0, r);
    panels_shown(d, false, shown);
    for (int i = 0; i < count; i++)
        if (shown[i] && r[i].rows < PRESENT_PANEL_ROWS_MIN)
            return d->zoom < 1 || d->zoom > count;
    return false;
}

/* What says that some panels are hidden, and how to see them. */
static void hidden_text(const bool shown[VIEW_PANELS_MAX], int count, char *out, size_t size)
{
    int drawn = 0;
    for (int i = 0; i < count; i++)
        drawn += shown[i];
    snprintf(out, size, "%d of %d panels at this height (%d rows each): z shows each alone", drawn,
             count, PRESENT_PANEL_ROWS_MIN);
}

/* Draws the panels into their places, recording them for the mouse. */
static void panels_draw(Screen *s, const View *v, int count, const Rect r[VIEW_PANELS_MAX],
                        const bool shown[VIEW_PANELS_MAX])
{
    Canvas *canvas[VIEW_PANELS_MAX] = {NULL, NULL, NULL, NULL};
    bool unicode = Screen_unicode(s), made = true;
    for (int i = 0; i < count; i++) {
        canvas[i] = Canvas_new(r[i].cols, r[i].rows, unicode);
        made = made && canvas[i];
        if (canvas[i])
            Canvas_set_bold(canvas[i], v->display.present);
    }
    if (v->drawn)
        v->drawn->count = 0;
    if (made) {
        View_panels(v, canvas);
        for (int i = 0; i < count; i++) {
            if (!shown[i])
                continue;
            Screen_canvas(s, canvas[i], r[i].row, r[i].col);
            if (v->drawn) {
                ViewPanels *d = v->drawn;
                d->rect[d->count] = (ViewRect){r[i].row, r[i].col, r[i].rows, r[i].cols};
                d->number[d->count] = i + 1;
                bool conditioning = v->display.panel == PANEL_CONDITIONING;
                d->stable_rank[d->count] = v->display.compare
                                               ? i % 2 == 1 && !conditioning
                                               : i == 2 && v->display.panel == PANEL_STABLE_RANK;
                d->count++;
            }
        }
    } else {
        centred(s, r[0].rows / 2, "out of memory for the plots", true);
    }
    for (int i = 0; i < count; i++)
        Canvas_free(canvas[i]);
}

bool View_draw(Screen *s, const View *v, bool repaint)
{
    int cols = Screen_cols(s), rows = Screen_rows(s);
    Screen_erase(s);
    if (cols < VIEW_MIN_COLS || rows < VIEW_MIN_ROWS) {
        size_message(s);
        Screen_show(s, repaint);
        return false;
    }
    char status[STATUS_LINES_MAX][STATUS_LINE_SIZE];
    StatusView status_view = v->status;
    status_view.shown_subjects = View_subjects(&v->display);
    int n = Status_layout(&status_view, cols, status, STATUS_LINES_MAX);
    /* Above the status lines: the panels, then the tour's caption in rows of its own. */
    bool caption = v->display.present && v->caption;
    char caption_buf[TOUR_CAPTION_SIZE + 256];
    const char *caption_shown = caption ? caption_text(v, caption_buf, sizeof caption_buf) : NULL;
    int above_status = rows - n;
    int caption_box_rows =
        caption ? caption_rows(s, caption_shown, above_status, cols, &v->display) : 0;
    int panel_rows = above_status - caption_box_rows;
    bool shown[VIEW_PANELS_MAX], lower_hidden = present_lower_hidden(&v->display, cols, panel_rows);
    panels_shown(&v->display, lower_hidden, shown);
    if (lower_hidden) {
        /* The warnings counted are those of the panels drawn; the status may then take a
           line more or less, and the panels the rows it leaves (the hiding stays: the upper
           row is far above its minimum). */
        status_view.shown_subjects = panels_subjects(&v->display, shown);
        n = Status_layout(&status_view, cols, status, STATUS_LINES_MAX);
        above_status = rows - n;
        caption_box_rows =
            caption ? caption_rows(s, caption_shown, above_status, cols, &v->display) : 0;
        panel_rows = above_status - caption_box_rows;
    }
    /* Which panels are hidden is said on the note's border, or on a line of its own. */
    char hidden[160], buf[320];
    hidden_text(shown, Display_panel_count(&v->display), hidden, sizeof hidden);
    int hint_rows = lower_hidden && !caption ? 1 : 0;
    Rect r[VIEW_PANELS_MAX];
    int count = panels_place(&v->display, cols, panel_rows, lower_hidden, hint_rows, r);
    panels_draw(s, v, count, r, shown);
    if (hint_rows)
        Screen_text(s, panel_rows - 1, 0, spelled_cut(s, hidden, cols, buf, sizeof buf),
                    INK_DEFAULT, false);
    for (int i = 0; i < n; i++)
        Screen_text(s, above_status + i, 0, status[i], INK_DEFAULT, i == 0);
    if (caption)
        caption_box(s, caption_shown, panel_rows, caption_box_rows, cols,
                    lower_hidden ? hidden : NULL);
    if (v->help)
        help_overlay(s, rows, cols, v->help_page);
    if (v->warnings_first >= 0)
        warnings_overlay(s, v->status.shown, v->warnings_first, above_status, cols);
    if (v->picker)
        picker_overlay(s, v->picker, v->status.note, above_status, cols);
    if (v->prompt)
        prompt_overlay(s, v->prompt, v->status.note, above_status, cols);
    Screen_show(s, repaint);
    return true;
}
