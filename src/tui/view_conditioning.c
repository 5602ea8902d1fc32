/* The conditioning view's panels (docs/model.md §8): κ of each layer's attention sub-block
 * against depth, with its notes, and the singular values of K (or of its dominant term) at the
 * shown layer. */
#include "view_internal.h"

#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int View_conditioning_slot(const Snapshot *s, bool cutting_skip)
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
   the nulls lines), never "nan" or "inf". */
static const char *kappa_text(char *out, size_t size, double kappa)
{
    return Figure_number(out, size, "%.4g", kappa, "null");
}

/* A κ(K) as the readout prints it after its name: "=" the value; where it is null, "≥" the
   proved lower bound when there is one (never the bound as the value), else "=null". */
static const char *kappa_or_bound(char *out, size_t size, double kappa, double lower)
{
    char value[24];
    if (!isfinite(kappa) && isfinite(lower))
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
                 Conditioning_singular_by_structure(&k->config) ? "K singular by structure"
                 : k->jacobian_exact                            ? "beyond double precision"
                                                                : "not certified",
                 missing, depth);
    char kj[32], ks[24], ka[24];
    /* On the exact path a null κ(K) is beyond double precision, and its bound is not drawn. */
    snprintf(values, size, "ℓ=%d: κ(K)%s κ(aI+bK)=%s κ(A⋯A)=%s", shown,
             kappa_or_bound(kj, sizeof kj, k->network.kappa_jacobian[shown],
                            k->jacobian_exact ? NAN : k->network.kappa_jacobian_lower[shown]),
             kappa_text(ks, sizeof ks, k->network.kappa_jacobian_skip[shown]),
             kappa_text(ka, sizeof ka, k->network.kappa_attention_product[shown]));
    return missing;
}

void View_conditioning_panel(const Snapshot *s, int slot, bool named, Canvas *c)
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
    View_layers_axis(x, depth);
    char network[48], network_skip[48], counterpart[64], counterpart_skip[64];
    snprintf(network, sizeof network, "κ(K) (gap %s)", GAP_NAMES.names[k->config.gap]);
    snprintf(network_skip, sizeof network_skip, "κ(aI + bK)");
    snprintf(counterpart, sizeof counterpart, "κ(K) (gap %s)", GAP_NAMES.names[k->counterpart_gap]);
    snprintf(counterpart_skip, sizeof counterpart_skip, "κ(aI + bK) (gap %s)",
             GAP_NAMES.names[k->counterpart_gap]);
    /* Above the exact size κ(aI + bK) is never computed: its places show, where κ(K) is
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
        p.series[1].label = k->jacobian_exact ? "aI+bK" : "K≥";
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

void View_conditioning_histogram(const Snapshot *s, int slot, Canvas *c)
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
