#include "figure_series.h"

#include "attnscope/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* x[ℓ] = ℓ for ℓ = 0..depth, and the labels of a panel's two curves: the network's and its
   counterpart's, each with its gap (label[0], label[1]). */
static void layer_curves(const Result *r, SeriesText *t)
{
    for (int l = 0; l <= r->config.depth; l++)
        t->x[l] = l;
    snprintf(t->label[0], sizeof t->label[0], "network (gap %s)", GAP_NAMES.names[r->config.gap]);
    snprintf(t->label[1], sizeof t->label[1], "counterpart (gap %s)",
             GAP_NAMES.names[r->counterpart_gap]);
}

void Figure_gradient_plot(const Result *r, bool done, SeriesText *t, SeriesPlot *p)
{
    const Config *k = &r->config;
    layer_curves(r, t);
    snprintf(t->title, sizeof t->title, "%s",
             "gradient norm ‖∂X_L/∂W^V_ℓ‖_F², attention frozen, log axis");
    const char *empty = "computing… (the gradients need the full depth)";
    if (done)
        empty = Model_gradients_unavailable(k) ? Model_gradients_unavailable(k)
                                               : "undefined here (see the warnings)";
    /* Index 0 is unused: the curves start at ℓ = 1. */
    *p = (SeriesPlot){
        .title = t->title,
        .count = 2,
        .series = {{t->label[0], k->depth, t->x + 1, r->network.log10_gradient_norm + 1, INK_BULK,
                    STROKE_SOLID, "●"},
                   {t->label[1], k->depth, t->x + 1, r->counterpart.log10_gradient_norm + 1,
                    INK_GHOST, STROKE_DOTTED, "○"}},
        .x_scale = SCALE_LINEAR,
        .y_scale = SCALE_LOG10_GIVEN,
        .notes = 1,
        .note = {"at full depth L, attention frozen"},
        .empty = empty,
        .x_name = "layer ℓ",
        .x_whole = true,
    };
}

void Figure_similarity_plot(const Result *r, SeriesText *t, SeriesPlot *p)
{
    int layers = r->config.depth + 1;
    layer_curves(r, t);
    snprintf(t->title, sizeof t->title, "%s",
             "token similarity μ(Xℓ)/μ(X0) against depth, log axis");
    *p = (SeriesPlot){
        .title = t->title,
        .count = 2,
        .series = {{t->label[0], layers, t->x, r->network.token_similarity, INK_BULK, STROKE_SOLID,
                    "●"},
                   {t->label[1], layers, t->x, r->counterpart.token_similarity, INK_GHOST,
                    STROKE_DOTTED, "○"}},
        .x_scale = SCALE_LINEAR,
        .y_scale = SCALE_LOG,
        .notes = 1,
        .note = {"μ(X) = ‖X − mean token‖_F; gaps: round-off"},
        .empty = "computing…",
        .x_name = "layer ℓ",
        .x_whole = true,
    };
}

/* The theory slope as a reference line from the first to the last T, through the first
   resolved gap-off point (NaN: none resolved). */
static void sweep_reference(const WidthSweep *w, const double *x, double *rx, double *ry)
{
    rx[0] = x[0];
    rx[1] = x[w->count - 1];
    ry[0] = ry[1] = NAN;
    for (int i = 0; i < w->count; i++)
        if (Sweep_resolved(w->excess[i])) {
            ry[0] = w->excess[i] * pow(rx[0] / x[i], w->theory_slope);
            ry[1] = w->excess[i] * pow(rx[1] / x[i], w->theory_slope);
            return;
        }
}

/* The sweep's legend lines: the theory slope (label[2]), the fitted slopes and the seeds
   (note[0], note[1]). */
static void sweep_texts(const Config *c, const WidthSweep *w, SeriesText *t)
{
    char off[FORMAT_NUMBER_SIZE], removed[FORMAT_NUMBER_SIZE];
    snprintf(t->label[2], sizeof t->label[2], "theory slope 1−2ℓ = %s",
             Figure_number(off, sizeof off, "%g", w->theory_slope, FIGURE_MISSING));
    /* A slope is null (JSON) with fewer than two resolved points: said, never "nan". */
    bool unfitted = !isfinite(w->slope) || !isfinite(w->slope_gap);
    snprintf(t->note[0], sizeof t->note[0], "fitted slopes %s (gap off), %s (removed)%s",
             Figure_number(off, sizeof off, "%.3g", w->slope, FIGURE_MISSING),
             Figure_number(removed, sizeof removed, "%.3g", w->slope_gap, FIGURE_MISSING),
             unfitted ? "; " FIGURE_MISSING ": fewer than two points resolved" : "");
    snprintf(t->note[1], sizeof t->note[1], "mean of %d seed%s", c->seeds, c->seeds > 1 ? "s" : "");
}

bool Figure_sweep_plot(const Config *c, const WidthSweep *w, bool overlays, SeriesText *t,
                       SeriesPlot *p)
{
    snprintf(t->title, sizeof t->title, "width sweep: sr(Σℓ) − 1 at ℓ=%d against T, γ=T/d, log–log",
             c->layer);
    if (!w)
        return false;
    double *x = t->x, *rx = t->derived[0], *ry = t->derived[1];
    for (int i = 0; i < w->count; i++)
        x[i] = w->tokens[i];
    bool reference = overlays && isfinite(w->theory_slope) && w->count > 0;
    if (reference)
        sweep_reference(w, x, rx, ry);
    sweep_texts(c, w, t);
    *p = (SeriesPlot){
        .title = t->title,
        .count = reference ? 3 : 2,
        .series = {{"gap off", w->count, x, w->excess, INK_BULK, STROKE_SOLID, "●"},
                   {"gap removed", w->count, x, w->excess_gap, INK_GHOST, STROKE_DOTTED, "○"},
                   {t->label[2], 2, rx, ry, INK_THEORY, STROKE_DASHED, NULL}},
        .x_scale = SCALE_LOG,
        .y_scale = SCALE_LOG,
        /* The seeds are named where there are several: the curves are then their means. */
        .notes = c->seeds > 1 ? 2 : 1,
        .note = {t->note[0], t->note[1]},
        .empty = "sr − 1 is round-off at every T",
        .x_name = "T",
    };
    if (overlays && !isfinite(w->theory_slope))
        p->note[p->notes++] = "no theory slope: markov, full mask, no skip, no LN only";
    return w->count > 0;
}

/* ---- the conditioning view -------------------------------------------------------------- */

/* A κ as the panel prints it: "null" where it is not computed (the reason is on the path and
   the nulls lines), never "nan" or "inf". */
static const char *kappa_text(char *out, size_t size, double kappa)
{
    return Figure_number(out, size, "%.4g", kappa, "null");
}

/* A κ(K) as the readout prints it after its name: "=" the value; where it is null, "=∞" where K
   is singular, "≥" the proved lower bound when there is one (never the bound as the value),
   else "=null". */
static const char *kappa_or_bound(char *out, size_t size, double kappa, double lower, bool singular)
{
    char value[24];
    if (isnan(kappa) && singular)
        snprintf(out, size, "=∞");
    else if (!isfinite(kappa) && isfinite(lower))
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
   them carry a proved lower bound, drawn ▴), and the numbers at the shown layer.  Returns the
   layers whose κ(K) is null. */
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
    char where[64] = "";
    /* "Kronecker 8/2×12" at L = 12: the layers it certified of both networks' (the rest:
       Lanczos), short enough for the panel's line, where 8/24 read as 24 layers. */
    if (kron->certified)
        snprintf(where, sizeof where, " %d/2×%d", kron->certified, depth);
    /* The bound as 1e-04, never 0.0001: "± 0" must mean a zero bound alone. */
    if (k->jacobian_exact)
        snprintf(path, size, "κ(K) exact (SVD of K, %d×%d)", n, n);
    else if (certified)
        snprintf(path, size, "κ(K) estimated: %s%s, s_min ± %.0e relative", how, where, worst);
    else if (!kron->lanczos && kron->beyond == 2 * depth)
        snprintf(path, size, "κ(K) bounds only: every layer beyond Lanczos's reach");
    else if (!kron->lanczos)
        snprintf(path, size, "κ(K) bounds only: Lanczos ran at no layer");
    else
        snprintf(path, size, "κ(K) estimated: %s, certified at no layer", how);
    nulls[0] = '\0';
    /* Null because K is singular: κ(K) = ∞, not an unknown value, and no bound is drawn. */
    bool singular = k->jacobian_singular[0] != '\0';
    if (missing && singular)
        snprintf(nulls, size, "K singular, κ(K) = ∞: %s (!)", k->jacobian_singular);
    else if (missing && bounded == missing)
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
    snprintf(values, size, "ℓ=%d: κ(K)%s κ(aI+bK)=%s κ(A⋯A)=%s", shown,
             kappa_or_bound(kj, sizeof kj, k->network.kappa_jacobian[shown],
                            k->jacobian_exact ? NAN : k->network.kappa_jacobian_lower[shown],
                            singular),
             kappa_text(ks, sizeof ks, k->network.kappa_jacobian_skip[shown]),
             kappa_text(ka, sizeof ka, k->network.kappa_attention_product[shown]));
    return missing;
}

void Figure_conditioning_title(const char *init, char *title, size_t size)
{
    snprintf(title, size, "%s%s%sκ of the attention sub-block's Jacobian K, log axis",
             init ? "init " : "", init ? init : "", init ? ": " : "");
}

/* The curves' labels (label[0..4]): κ(K) and κ(a·I + b′·K) of both networks, or above the exact
   size, where κ(a·I + b′·K) is never computed, the proved lower bounds' in its places. */
static void conditioning_labels(const Conditioning *k, SeriesText *t)
{
    const char *gap = GAP_NAMES.names[k->config.gap],
               *counterpart = GAP_NAMES.names[k->counterpart_gap];
    snprintf(t->label[0], sizeof t->label[0], "κ(K) (gap %s)", gap);
    snprintf(t->label[2], sizeof t->label[2], "κ(K) (gap %s)", counterpart);
    if (k->jacobian_exact) {
        snprintf(t->label[1], sizeof t->label[1], "κ(aI + bK)");
        snprintf(t->label[3], sizeof t->label[3], "κ(aI + bK) (gap %s)", counterpart);
    } else {
        snprintf(t->label[1], sizeof t->label[1], "κ(K) ≥ (gap %s)", gap);
        snprintf(t->label[3], sizeof t->label[3], "κ(K) ≥ (gap %s)", counterpart);
    }
}

/* The route(s) s_min(K) took over both networks' layers, in a word for the compact title:
   the matrix-free path's certified Kronecker layers, Lanczos's, both, or neither (only
   bounds, where every layer went beyond Lanczos's reach or left it nothing). */
static const char *route_word(const Conditioning *k)
{
    const KronTally *kron = &k->kron;
    if (k->jacobian_exact)
        return "exact";
    if (kron->certified && kron->lanczos)
        return "Kron+Lanczos";
    if (kron->certified)
        return "Kronecker";
    return kron->lanczos ? "Lanczos" : "bounds";
}

/* Code points of UTF-8 text: the columns of the titles' characters, each one column wide. */
static size_t columns(const char *text)
{
    size_t n = 0;
    for (; *text; text++)
        n += ((unsigned char)*text & 0xC0) != 0x80;
    return n;
}

/* Compact (80×24, where the compare view's panels are 40 columns): one row for the longest
   initialisation's name too, so that both panels' plots start on the same row; "nulls" is
   left to the (!) where the route's words leave no room for it. */
static void compact_title(const Conditioning *k, const char *init, bool singular, int missing,
                          char *title, size_t size)
{
    enum { COMPACT_TITLE_COLUMNS = 40 };
    const char *name = init ? init : "", *colon = init ? ": " : "", *route = route_word(k);
    if (singular)
        snprintf(title, size, "%s%sκ(K) = ∞, singular (!)", name, colon);
    else if (!missing)
        snprintf(title, size, "%s%sκ(K) %s", name, colon, route);
    else {
        snprintf(title, size, "%s%sκ(K) %s, nulls (!)", name, colon, route);
        if (columns(title) > COMPACT_TITLE_COLUMNS)
            snprintf(title, size, "%s%sκ(K) %s (!)", name, colon, route);
    }
}

void Figure_conditioning_plot(const Conditioning *k, const char *init, bool compact, SeriesText *t,
                              SeriesPlot *p)
{
    int depth = k->config.depth;
    for (int l = 0; l <= depth; l++)
        t->x[l] = l;
    conditioning_labels(k, t);
    /* Above the exact size the places of κ(a·I + b′·K) show, where κ(K) is null, the proved lower
       bound instead (▴ the network's, ▵ its counterpart's). */
    int bounded = 0;
    const double *skip = k->network.kappa_jacobian_skip,
                 *counterpart_skip = k->counterpart.kappa_jacobian_skip;
    bool singular = k->jacobian_singular[0] != '\0';
    if (!k->jacobian_exact) {
        /* A bound below ∞ says less than "singular" does: none is drawn where K is. */
        bounded = singular ? 0 : bound_points(&k->network, depth, t->derived[0]);
        if (singular)
            for (int l = 0; l <= depth; l++)
                t->derived[0][l] = t->derived[1][l] = NAN;
        else
            bound_points(&k->counterpart, depth, t->derived[1]);
        skip = t->derived[0];
        counterpart_skip = t->derived[1];
    }
    int missing =
        conditioning_notes(k, bounded, t->note[0], t->note[2], t->note[1], sizeof t->note[0]);
    Figure_conditioning_title(init, t->title, sizeof t->title);
    if (compact)
        compact_title(k, init, singular, missing, t->title, sizeof t->title);
    const double *x = t->x + 1;
    *p = (SeriesPlot){
        .title = t->title,
        .count = 5,
        .series = {{t->label[0], depth, x, k->network.kappa_jacobian + 1, INK_BULK, STROKE_SOLID,
                    "●"},
                   {t->label[1], depth, x, skip + 1, INK_OUTLIER,
                    k->jacobian_exact ? STROKE_DASHED : STROKE_DOTTED,
                    k->jacobian_exact ? "◆" : "▴"},
                   {"κ(A_ℓ⋯A_1)", depth, x, k->network.kappa_attention_product + 1, INK_THEORY,
                    STROKE_DOTTED, "×"},
                   {t->label[2], depth, x, k->counterpart.kappa_jacobian + 1, INK_GHOST,
                    STROKE_DOTTED, "○"},
                   {t->label[3], depth, x, counterpart_skip + 1, INK_GHOST, STROKE_DOTTED,
                    k->jacobian_exact ? "◇" : "▵"}},
        .x_scale = SCALE_LINEAR,
        .y_scale = SCALE_LOG,
        .x_span_all = true,
        .notes = t->note[2][0] ? 3 : 2,
        .note = {t->note[0], t->note[1], t->note[2]},
        .empty = singular
                     ? "κ(K) = ∞ (K singular) and every other κ null here (see !)"
                     : "every κ is null here: beyond double precision or not certified (see !)",
        .x_name = "layer ℓ",
        .x_whole = true,
    };
    /* K singular by its structure is so in both networks (the gap changes no shape, mask or
       norm): their κ(K) are ∞, not unknown. */
    if (singular)
        p->series[0].absent = p->series[3].absent = "∞ (singular)";
    if (compact) {
        const char *counterpart = GAP_NAMES.names[k->counterpart_gap];
        p->series[0].label = "K";
        p->series[1].label = k->jacobian_exact ? "aI+bK" : "K≥";
        p->series[2].label = "A⋯A";
        snprintf(t->label[4], sizeof t->label[4], "K (gap %s)", counterpart);
        snprintf(t->label[5], sizeof t->label[5], "%s (gap %s)", k->jacobian_exact ? "aI+bK" : "K≥",
                 counterpart);
        p->series[3].label = t->label[4];
        p->series[4].label = t->label[5];
    }
}

static int descending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* At most this many products of the two SVDs in the dominant term's histogram: above, every
   k-th singular value of each factor (said in the title). */
enum { DOMINANT_FACTOR_MAX = 256 };

/* B's singular values s_i(A)·s_j(W_VO), every k-th of each factor, descending. */
static void dominant_histogram(const Conditioning *k, bool compact, ConditioningHistogram *h)
{
    int T = k->config.tokens, d = k->config.width, layer = k->config.layer;
    int stride_a = (T + DOMINANT_FACTOR_MAX - 1) / DOMINANT_FACTOR_MAX,
        stride_w = (d + DOMINANT_FACTOR_MAX - 1) / DOMINANT_FACTOR_MAX;
    int count_a = (T + stride_a - 1) / stride_a, count_w = (d + stride_w - 1) / stride_w;
    h->products = malloc(sizeof(double) * (size_t)count_a * count_w);
    if (!h->products || !k->attention_singular_values || !k->value_output_singular_values) {
        snprintf(h->title, sizeof h->title, "singular values of B = W_VOᵀ⊗A");
        h->message = "no singular values at this layer";
        return;
    }
    int n = 0;
    for (int i = 0; i < T; i += stride_a)
        for (int j = 0; j < d; j += stride_w)
            h->products[n++] = k->attention_singular_values[i] * k->value_output_singular_values[j];
    qsort(h->products, (size_t)n, sizeof(double), descending);
    char every[48] = "";
    if (stride_a > 1 || stride_w > 1)
        snprintf(every, sizeof every, ", every %d×%d-th", stride_a, stride_w);
    if (compact)
        snprintf(h->title, sizeof h->title, "s of B = W_VOᵀ⊗A, ℓ=%d%s", layer, every);
    else
        snprintf(h->title, sizeof h->title,
                 "singular values s of B = W_VOᵀ⊗A, ℓ=%d: s_i(A)·s_j(W_VO)%s", layer, every);
    h->plot = (HistogramPlot){h->title, n, h->products, 1.0, NAN, "", "s", false};
}

void Figure_conditioning_histogram(const Conditioning *k, bool compact, ConditioningHistogram *h)
{
    int T = k->config.tokens, d = k->config.width, layer = k->config.layer;
    *h = (ConditioningHistogram){.message = NULL};
    if (k->jacobian_singular_values) {
        if (compact)
            snprintf(h->title, sizeof h->title, "s of K, ℓ=%d, %d×%d, exact", layer, T * d, T * d);
        else
            snprintf(h->title, sizeof h->title, "singular values s of K, ℓ=%d, %d×%d (exact)",
                     layer, T * d, T * d);
        h->plot =
            (HistogramPlot){h->title, T * d, k->jacobian_singular_values, 1.0, NAN, "", "s", false};
        return;
    }
    /* With heads B = Σ_h W_VO,hᵀ ⊗ A_h is no Kronecker product: its singular values are not
       the factors' products, and above the exact size they are not computed. */
    if (k->config.heads > 1) {
        snprintf(h->title, sizeof h->title, "singular values of K");
        h->message = "K not built; heads: B is no Kronecker product";
        return;
    }
    dominant_histogram(k, compact, h);
}

void Figure_conditioning_histogram_release(ConditioningHistogram *h)
{
    free(h->products);
    h->products = NULL;
}
