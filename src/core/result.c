#include "result_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Result *Result_new(void)
{
    return calloc(1, sizeof(Result));
}

/* Every per-layer array of a Result (depth + 1 doubles each), by its place in its struct: the
   one list that allocation, release and copying share, whose length the compiler counts. */
static const size_t CURVE_ARRAYS[] = {
    offsetof(Curves, stable_rank),         offsetof(Curves, stable_rank_minus_one),
    offsetof(Curves, log10_norm),          offsetof(Curves, token_similarity),
    offsetof(Curves, gradient_norm),       offsetof(Curves, log10_gradient_norm),
    offsetof(Curves, centred_stable_rank), offsetof(Curves, energy_off_top),
    offsetof(Curves, relative_spread),     offsetof(Curves, token_cosine_mean),
    offsetof(Curves, token_rms),           offsetof(Curves, entropy_zhai_bound),
    offsetof(Curves, phase_critical_beta), offsetof(Curves, logit_rounding),
    offsetof(Curves, entropy_rounding)};
static const size_t ENTROPY_OF_CURVES[] = {offsetof(Curves, entropy),
                                           offsetof(Curves, entropy_head_average)};
static const size_t ENTROPY_ARRAYS[] = {
    offsetof(EntropyCurves, mean), offsetof(EntropyCurves, min), offsetof(EntropyCurves, max),
    offsetof(EntropyCurves, normalised_mean), offsetof(EntropyCurves, max_weight_mean)};
static const size_t BAND_ARRAYS[] = {offsetof(Band, mean), offsetof(Band, std), offsetof(Band, m2),
                                     offsetof(Band, count), offsetof(Band, lost)};

#define COUNT(list) (sizeof(list) / sizeof((list)[0]))

enum {
    LAYER_ARRAYS = 2 * (COUNT(CURVE_ARRAYS) + COUNT(ENTROPY_OF_CURVES) * COUNT(ENTROPY_ARRAYS)) +
                   2 * COUNT(BAND_ARRAYS)
};

static double **field(void *base, size_t offset)
{
    return (double **)((char *)base + offset);
}

static void layer_arrays(Result *r, double **arrays[LAYER_ARRAYS])
{
    int n = 0;
    Curves *curves[] = {&r->network, &r->counterpart};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < COUNT(CURVE_ARRAYS); i++)
            arrays[n++] = field(curves[k], CURVE_ARRAYS[i]);
        for (size_t e = 0; e < COUNT(ENTROPY_OF_CURVES); e++)
            for (size_t i = 0; i < COUNT(ENTROPY_ARRAYS); i++)
                arrays[n++] = field((char *)curves[k] + ENTROPY_OF_CURVES[e], ENTROPY_ARRAYS[i]);
    }
    Band *bands[] = {&r->stable_rank_band, &r->counterpart_band};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < COUNT(BAND_ARRAYS); i++)
            arrays[n++] = field(bands[k], BAND_ARRAYS[i]);
}

void Result_release(Result *r)
{
    double **arrays[LAYER_ARRAYS];
    layer_arrays(r, arrays);
    for (int i = 0; i < LAYER_ARRAYS; i++)
        free(*arrays[i]);
    free(r->eigenvalues);
    free(r->singular_values);
    free(r->product_column_mass);
    AttentionMap_release(&r->attention_map);
    AttentionMap_release(&r->product_map);
    free(r->row_entropy);
    memset(r, 0, sizeof *r);
}

void Result_free(Result *r)
{
    if (!r)
        return;
    Result_release(r);
    free(r);
}

static double *nan_array(size_t n)
{
    double *p = malloc(sizeof(double) * (n ? n : 1));
    if (p)
        for (size_t i = 0; i < n; i++)
            p[i] = NAN;
    return p;
}

int Result_allocate(Result *r, int T, int depth)
{
    double **arrays[LAYER_ARRAYS];
    layer_arrays(r, arrays);
    int status = 0;
    for (int i = 0; i < LAYER_ARRAYS; i++)
        if (!(*arrays[i] = nan_array((size_t)depth + 1)))
            status = -1;
    Curves *curves[] = {&r->network, &r->counterpart};
    for (int k = 0; k < 2; k++)
        curves[k]->noise_from = CURVES_NO_LAYER;
    r->eigenvalues = calloc((size_t)T, sizeof(Complex));
    r->singular_values = nan_array((size_t)T);
    r->product_column_mass = nan_array((size_t)T);
    r->row_entropy = nan_array((size_t)T);
    return status == 0 && r->eigenvalues && r->singular_values && r->product_column_mass &&
                   r->row_entropy
               ? 0
               : -1;
}

/* A copy of n items of `size` bytes, NULL for NULL (or when out of memory). */
static void *copy_of(const void *src, size_t n, size_t size)
{
    if (!src)
        return NULL;
    void *p = malloc(size * (n ? n : 1));
    if (p && n)
        memcpy(p, src, size * n);
    return p;
}

Result *Result_copy(const Result *r)
{
    Result *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *r;
    size_t layers = (size_t)r->config.depth + 1, T = (size_t)r->config.tokens;
    double **from[LAYER_ARRAYS], **to[LAYER_ARRAYS];
    layer_arrays((Result *)r, from);
    layer_arrays(c, to);
    bool ok = true;
    for (int i = 0; i < LAYER_ARRAYS; i++) {
        *to[i] = copy_of(*from[i], layers, sizeof(double));
        ok &= !*from[i] || *to[i];
    }
    c->eigenvalues = copy_of(r->eigenvalues, T, sizeof(Complex));
    c->singular_values = copy_of(r->singular_values, T, sizeof(double));
    ok &= (!r->eigenvalues || c->eigenvalues) && (!r->singular_values || c->singular_values);
    c->product_column_mass = copy_of(r->product_column_mass, T, sizeof(double));
    ok &= !r->product_column_mass || c->product_column_mass;
    c->row_entropy = copy_of(r->row_entropy, T, sizeof(double));
    ok &= !r->row_entropy || c->row_entropy;
    c->attention_map = c->product_map = (AttentionMap){0};
    ok &= AttentionMap_copy(&r->attention_map, &c->attention_map) == 0;
    ok &= AttentionMap_copy(&r->product_map, &c->product_map) == 0;
    if (!ok) {
        Result_free(c);
        return NULL;
    }
    return c;
}

/* Counts n more warnings that did not fit in the list's last entry, about subject too.  The
   first count displaces the warning that entry held (which counts among them), or, where the
   list has room (a merged list whose warnings were dropped before), adds the entry: the entry
   that counts stays the last, and later warnings are counted in it. */
static void warnings_drop(Warnings *w, int n, unsigned subject)
{
    if (w->dropped == 0 && w->count == WARNINGS_MAX)
        n++;
    else if (w->dropped == 0)
        w->subject[w->count++] = 0;
    int last = w->count - 1;
    w->dropped += n;
    snprintf(w->text[last], sizeof w->text[last],
             "%d more warnings (repeats counted) did not fit: a result lists at most %d",
             w->dropped, WARNINGS_MAX);
    w->subject[last] |= subject;
}

static void warnings_add_text(Warnings *w, unsigned subject, const char *text)
{
    for (int i = 0; i < w->count; i++)
        if (strcmp(w->text[i], text) == 0) {
            w->subject[i] |= subject;
            return;
        }
    /* A full list says so rather than losing warnings without a word. */
    if (w->count < WARNINGS_MAX && w->dropped == 0) {
        snprintf(w->text[w->count], sizeof w->text[w->count], "%s", text);
        w->subject[w->count++] = subject;
        return;
    }
    warnings_drop(w, 1, subject);
}

static void warnings_add(Warnings *w, unsigned subject, const char *fmt, va_list ap)
{
    char text[WARNING_LENGTH];
    vsnprintf(text, sizeof text, fmt, ap);
    warnings_add_text(w, subject, text);
}

void Warnings_add_all(Warnings *w, const Warnings *from)
{
    int listed = from->count - (from->dropped > 0); /* from's last entry counts its dropped */
    for (int i = 0; i < listed; i++)
        warnings_add_text(w, from->subject[i], from->text[i]);
    if (from->dropped > 0)
        warnings_drop(w, from->dropped, from->subject[from->count - 1]);
}

int Band_warning(const double *count, const double *lost, const double *first, int depth, int seeds,
                 bool counterpart, char *buf, size_t size)
{
    int lost_from = -1, most_lost = 0, equal_from = -1, fewest = seeds;
    for (int l = 0; l <= depth; l++) {
        if (lost[l] > 0 && lost_from < 0)
            lost_from = l;
        most_lost = lost[l] > most_lost ? (int)lost[l] : most_lost;
        if (count[l] + lost[l] < seeds - (isnan(first[l]) ? 1 : 0) && equal_from < 0)
            equal_from = l;
        fewest = equal_from >= 0 && lost[l] == 0 && count[l] < fewest ? (int)count[l] : fewest;
    }
    const char *band = counterpart ? "counterpart_" : "";
    int n = 0;
    if (lost_from >= 0)
        n = snprintf(buf, size,
                     "%sstable_rank_mean: from layer %d seeds are lost (up to %d of the %d: "
                     "their network overflowed the double range or became exactly 0, as the "
                     "warnings say): the mean, std and M2 there are null, the seeds left being "
                     "no fair sample (%sstable_rank_lost, per layer)",
                     band, lost_from, most_lost, seeds, band);
    if (equal_from >= 0 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n,
                      "%s%sstable_rank_mean: from layer %d some of the %d seeds have no stable "
                      "rank, their tokens being equal to within round-off (rank one by rule): "
                      "the mean, std and M2 there are over the seeds that have one, as few as "
                      "%d (%sstable_rank_count, per layer)",
                      n ? "; " : "", band, equal_from, seeds, fewest, band);
    return n > 0 && (size_t)n < size ? n : 0;
}

void Warnings_add(Warnings *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    warnings_add(w, WARNING_ABOUT_RUN, fmt, ap);
    va_end(ap);
}

void Warnings_add_about(Warnings *w, unsigned subject, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    warnings_add(w, subject, fmt, ap);
    va_end(ap);
}

#define SERIES_OF(function, expression)                                                            \
    static const double *function(const Result *r)                                                 \
    {                                                                                              \
        return expression;                                                                         \
    }
SERIES_OF(stable_rank, r->network.stable_rank)
SERIES_OF(stable_rank_minus_one, r->network.stable_rank_minus_one)
SERIES_OF(stable_rank_mean, r->stable_rank_band.mean)
SERIES_OF(stable_rank_std, r->stable_rank_band.std)
SERIES_OF(counterpart_stable_rank, r->counterpart.stable_rank)
SERIES_OF(counterpart_stable_rank_minus_one, r->counterpart.stable_rank_minus_one)
SERIES_OF(counterpart_stable_rank_mean, r->counterpart_band.mean)
SERIES_OF(counterpart_stable_rank_std, r->counterpart_band.std)
SERIES_OF(token_similarity, r->network.token_similarity)
SERIES_OF(counterpart_token_similarity, r->counterpart.token_similarity)
SERIES_OF(gradient_norm, r->network.gradient_norm)
SERIES_OF(log10_gradient_norm, r->network.log10_gradient_norm)
SERIES_OF(counterpart_gradient_norm, r->counterpart.gradient_norm)
SERIES_OF(counterpart_log10_gradient_norm, r->counterpart.log10_gradient_norm)
SERIES_OF(stable_rank_m2, r->stable_rank_band.m2)
SERIES_OF(counterpart_stable_rank_m2, r->counterpart_band.m2)
SERIES_OF(stable_rank_count, r->stable_rank_band.count)
SERIES_OF(counterpart_stable_rank_count, r->counterpart_band.count)
SERIES_OF(stable_rank_lost, r->stable_rank_band.lost)
SERIES_OF(counterpart_stable_rank_lost, r->counterpart_band.lost)
SERIES_OF(log10_norm, r->network.log10_norm)
SERIES_OF(counterpart_log10_norm, r->counterpart.log10_norm)
#define ENTROPY_SERIES_OF(prefix, curves)                                                          \
    SERIES_OF(prefix##_mean, curves.entropy.mean)                                                  \
    SERIES_OF(prefix##_min, curves.entropy.min)                                                    \
    SERIES_OF(prefix##_max, curves.entropy.max)                                                    \
    SERIES_OF(prefix##_normalised_mean, curves.entropy.normalised_mean)                            \
    SERIES_OF(prefix##_mean_head_average, curves.entropy_head_average.mean)                        \
    SERIES_OF(prefix##_min_head_average, curves.entropy_head_average.min)                          \
    SERIES_OF(prefix##_max_head_average, curves.entropy_head_average.max)                          \
    SERIES_OF(prefix##_normalised_mean_head_average, curves.entropy_head_average.normalised_mean)
ENTROPY_SERIES_OF(attention_entropy, r->network)
ENTROPY_SERIES_OF(counterpart_attention_entropy, r->counterpart)
#undef ENTROPY_SERIES_OF
SERIES_OF(max_attention_mean, r->network.entropy.max_weight_mean)
SERIES_OF(max_attention_mean_head_average, r->network.entropy_head_average.max_weight_mean)
SERIES_OF(attention_entropy_zhai_bound, r->network.entropy_zhai_bound)
SERIES_OF(counterpart_attention_entropy_zhai_bound, r->counterpart.entropy_zhai_bound)
SERIES_OF(attention_phase_critical_beta, r->network.phase_critical_beta)
SERIES_OF(counterpart_attention_phase_critical_beta, r->counterpart.phase_critical_beta)
SERIES_OF(attention_logit_rounding, r->network.logit_rounding)
SERIES_OF(counterpart_attention_logit_rounding, r->counterpart.logit_rounding)
SERIES_OF(attention_entropy_rounding, r->network.entropy_rounding)
SERIES_OF(counterpart_attention_entropy_rounding, r->counterpart.entropy_rounding)
SERIES_OF(counterpart_max_attention_mean, r->counterpart.entropy.max_weight_mean)
SERIES_OF(counterpart_max_attention_mean_head_average,
          r->counterpart.entropy_head_average.max_weight_mean)
#define GEOMETRY_SERIES_OF(name)                                                                   \
    SERIES_OF(name, r->network.name)                                                               \
    SERIES_OF(counterpart_##name, r->counterpart.name)
GEOMETRY_SERIES_OF(centred_stable_rank)
GEOMETRY_SERIES_OF(energy_off_top)
GEOMETRY_SERIES_OF(relative_spread)
GEOMETRY_SERIES_OF(token_cosine_mean)
GEOMETRY_SERIES_OF(token_rms)
#undef GEOMETRY_SERIES_OF
#undef SERIES_OF

const ResultSeries RESULT_SERIES[] = {
    {"stable_rank", NULL, "sr(Σ_ℓ) = Σ s_i(X_ℓ)⁴ / s_1(X_ℓ)⁴, first seed", false, stable_rank},
    {"stable_rank_minus_one", NULL, "sr(Σ_ℓ) − 1, summed directly", false, stable_rank_minus_one},
    {"stable_rank_mean", NULL, "mean of sr(Σ_ℓ) over the seeds", false, stable_rank_mean},
    {"stable_rank_std", NULL, "sample std of sr(Σ_ℓ) over the seeds", false, stable_rank_std},
    {"counterpart_stable_rank", NULL, "sr(Σ_ℓ) of the gap-toggled network", false,
     counterpart_stable_rank},
    {"counterpart_stable_rank_minus_one", NULL, "its sr − 1", false,
     counterpart_stable_rank_minus_one},
    {"counterpart_stable_rank_mean", NULL, "its mean over the seeds", false,
     counterpart_stable_rank_mean},
    {"counterpart_stable_rank_std", NULL, "its sample std over the seeds", false,
     counterpart_stable_rank_std},
    {"token_similarity", NULL, "μ(X_ℓ)/μ(X_0), μ(X) = ‖X − 1x̄ᵀ‖_F", false, token_similarity},
    {"counterpart_token_similarity", NULL, "the same, gap-toggled network", false,
     counterpart_token_similarity},
    {"gradient_norm", NULL, "‖∂X_L/∂W^V_ℓ‖_F², attention frozen", true, gradient_norm},
    {"log10_gradient_norm", NULL, "log10 of it (finite where it overflows)", true,
     log10_gradient_norm},
    {"counterpart_gradient_norm", NULL, "the same, gap-toggled network", true,
     counterpart_gradient_norm},
    {"counterpart_log10_gradient_norm", NULL, "log10 of it", true, counterpart_log10_gradient_norm},
    {"log10_norm", NULL, "log10 ‖X_ℓ‖_F", false, log10_norm},
    {"counterpart_log10_norm", NULL, "the same, gap-toggled network", false,
     counterpart_log10_norm},
    {"stable_rank_m2", NULL, "sum over the seeds of (sr(Σ_ℓ) − mean)², for merging seed ranges",
     false, stable_rank_m2},
    {"counterpart_stable_rank_m2", NULL, "the same, gap-toggled network", false,
     counterpart_stable_rank_m2},
    {"stable_rank_count", NULL, "the seeds the mean, std and M2 hold (those with a stable rank)",
     false, stable_rank_count},
    {"counterpart_stable_rank_count", NULL, "the same, gap-toggled network", false,
     counterpart_stable_rank_count},
    {"stable_rank_lost", NULL,
     "the seeds whose network overflowed or became exactly 0 at or before the layer (mean null "
     "where any)",
     false, stable_rank_lost},
    {"counterpart_stable_rank_lost", NULL, "the same, gap-toggled network", false,
     counterpart_stable_rank_lost},
    /* The row entropies H_i = −Σ_j A_ij ln A_ij of A before gap removal (null at ℓ = 0: no
       attention), of the shown head and averaged over the heads. */
    {"attention_entropy_mean", "attention_entropy", "mean of H_i over the rows, nats, shown head",
     false, attention_entropy_mean},
    {"attention_entropy_min", "attention_entropy", "min of H_i over the rows, shown head", false,
     attention_entropy_min},
    {"attention_entropy_max", "attention_entropy", "max of H_i over the rows, shown head", false,
     attention_entropy_max},
    {"attention_entropy_normalised_mean", "attention_entropy",
     "mean of H_i / ln n_i over the rows with n_i >= 2, shown head", false,
     attention_entropy_normalised_mean},
    {"attention_entropy_mean_head_average", "attention_entropy",
     "mean of H_i, averaged over the heads", false, attention_entropy_mean_head_average},
    {"attention_entropy_min_head_average", "attention_entropy",
     "min of H_i, averaged over the heads", false, attention_entropy_min_head_average},
    {"attention_entropy_max_head_average", "attention_entropy",
     "max of H_i, averaged over the heads", false, attention_entropy_max_head_average},
    {"attention_entropy_normalised_mean_head_average", "attention_entropy",
     "mean of H_i / ln n_i, averaged over the heads", false,
     attention_entropy_normalised_mean_head_average},
    {"counterpart_attention_entropy_mean", "counterpart_attention_entropy",
     "mean of H_i over the rows, nats, gap-toggled network", false,
     counterpart_attention_entropy_mean},
    {"counterpart_attention_entropy_min", "counterpart_attention_entropy",
     "min of H_i over the rows, gap-toggled network", false, counterpart_attention_entropy_min},
    {"counterpart_attention_entropy_max", "counterpart_attention_entropy",
     "max of H_i over the rows, gap-toggled network", false, counterpart_attention_entropy_max},
    {"counterpart_attention_entropy_normalised_mean", "counterpart_attention_entropy",
     "mean of H_i / ln n_i over the rows with n_i >= 2, gap-toggled network", false,
     counterpart_attention_entropy_normalised_mean},
    {"counterpart_attention_entropy_mean_head_average", "counterpart_attention_entropy",
     "mean of H_i, averaged over the heads, gap-toggled network", false,
     counterpart_attention_entropy_mean_head_average},
    {"counterpart_attention_entropy_min_head_average", "counterpart_attention_entropy",
     "min of H_i, averaged over the heads, gap-toggled network", false,
     counterpart_attention_entropy_min_head_average},
    {"counterpart_attention_entropy_max_head_average", "counterpart_attention_entropy",
     "max of H_i, averaged over the heads, gap-toggled network", false,
     counterpart_attention_entropy_max_head_average},
    {"counterpart_attention_entropy_normalised_mean_head_average", "counterpart_attention_entropy",
     "mean of H_i / ln n_i, averaged over the heads, gap-toggled network", false,
     counterpart_attention_entropy_normalised_mean_head_average},
    {"max_attention_mean", NULL, "mean over the rows of max_j A_ij, shown head", false,
     max_attention_mean},
    {"max_attention_mean_head_average", NULL, "the same, averaged over the heads", false,
     max_attention_mean_head_average},
    {"counterpart_max_attention_mean", NULL, "the same, gap-toggled network", false,
     counterpart_max_attention_mean},
    {"counterpart_max_attention_mean_head_average", NULL, "its average over the heads", false,
     counterpart_max_attention_mean_head_average},
    /* Beside the entropies (docs/model.md §3), first seed, null at ℓ = 0 and where they do
       not hold (attention_entropy_zhai_bound_note, attention_phase_note say why). */
    {"attention_entropy_zhai_bound", NULL,
     "Zhai et al.'s lower bound on min H_i, sigma = ||W^Q_h W^K_h^T||_2 ||X'X'^T||_2, shown head",
     false, attention_entropy_zhai_bound},
    {"counterpart_attention_entropy_zhai_bound", NULL, "the same, gap-toggled network", false,
     counterpart_attention_entropy_zhai_bound},
    {"attention_phase_critical_beta", NULL,
     "Giorlandino & Goldt's beta_c = sqrt(2/(q(q - p))) of the layer's input tokens", false,
     attention_phase_critical_beta},
    {"counterpart_attention_phase_critical_beta", NULL, "the same, gap-toggled network", false,
     counterpart_attention_phase_critical_beta},
    /* docs/model.md §2, "Round-off from a layer on": what the entropies' digits are worth. */
    {"attention_logit_rounding", NULL,
     "bound on each logit's rounding, gamma_(2d+d_h+12)|scale| ||W^Q_h||_F ||W^K_h||_F "
     "max_i ||x'_i||^2, largest over the heads",
     false, attention_logit_rounding},
    {"counterpart_attention_logit_rounding", NULL, "the same, gap-toggled network", false,
     counterpart_attention_logit_rounding},
    {"attention_entropy_rounding", NULL,
     "bound on the shown head's mean entropy's rounding, the mean of its rows' own bounds", false,
     attention_entropy_rounding},
    {"counterpart_attention_entropy_rounding", NULL, "the same, gap-toggled network", false,
     counterpart_attention_entropy_rounding},
    /* What the stable rank hides (docs/model.md §2), first seed. */
    {"centred_stable_rank", NULL, "sr of (X_ℓ − 1x̄ᵀ)(X_ℓ − 1x̄ᵀ)ᵀ, null where the tokens are equal",
     false, centred_stable_rank},
    {"counterpart_centred_stable_rank", NULL, "the same, gap-toggled network", false,
     counterpart_centred_stable_rank},
    {"energy_off_top", NULL, "1 − s_1(X_ℓ)²/‖X_ℓ‖_F²", false, energy_off_top},
    {"counterpart_energy_off_top", NULL, "the same, gap-toggled network", false,
     counterpart_energy_off_top},
    {"relative_spread", NULL, "μ(X_ℓ)/‖X_ℓ‖_F, μ(X) = ‖X − 1x̄ᵀ‖_F", false, relative_spread},
    {"counterpart_relative_spread", NULL, "the same, gap-toggled network", false,
     counterpart_relative_spread},
    {"token_cosine_mean", NULL, "mean cosine over pairs of distinct nonzero tokens", false,
     token_cosine_mean},
    {"counterpart_token_cosine_mean", NULL, "the same, gap-toggled network", false,
     counterpart_token_cosine_mean},
    {"token_rms", NULL, "‖X_ℓ‖_F/√T, the RMS of the tokens' norms", false, token_rms},
    {"counterpart_token_rms", NULL, "the same, gap-toggled network", false, counterpart_token_rms},
};
const int RESULT_SERIES_COUNT = (int)(sizeof RESULT_SERIES / sizeof RESULT_SERIES[0]);
