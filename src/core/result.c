#include "result_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Result *Result_new(void)
{
    return calloc(1, sizeof(Result));
}

enum { LAYER_ARRAYS = 18 };

/* Every per-layer array of a Result (depth + 1 doubles each): the one list that allocation,
   release and copying share. */
static void layer_arrays(Result *r, double **arrays[LAYER_ARRAYS])
{
    int n = 0;
    Curves *curves[] = {&r->network, &r->counterpart};
    for (int k = 0; k < 2; k++) {
        Curves *c = curves[k];
        double **of_curves[] = {&c->stable_rank,   &c->stable_rank_minus_one,
                                &c->log10_norm,    &c->token_similarity,
                                &c->gradient_norm, &c->log10_gradient_norm};
        for (size_t i = 0; i < sizeof of_curves / sizeof of_curves[0]; i++)
            arrays[n++] = of_curves[i];
    }
    Band *bands[] = {&r->stable_rank_band, &r->counterpart_band};
    for (int k = 0; k < 2; k++) {
        arrays[n++] = &bands[k]->mean;
        arrays[n++] = &bands[k]->std;
        arrays[n++] = &bands[k]->m2;
    }
}

void Result_release(Result *r)
{
    double **arrays[LAYER_ARRAYS];
    layer_arrays(r, arrays);
    for (int i = 0; i < LAYER_ARRAYS; i++)
        free(*arrays[i]);
    free(r->eigenvalues);
    free(r->singular_values);
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
    r->eigenvalues = calloc((size_t)T, sizeof(Complex));
    r->singular_values = nan_array((size_t)T);
    return status == 0 && r->eigenvalues && r->singular_values ? 0 : -1;
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
    if (!ok) {
        Result_free(c);
        return NULL;
    }
    return c;
}

static void warnings_add(Warnings *w, unsigned subject, const char *fmt, va_list ap)
{
    char text[WARNING_LENGTH];
    vsnprintf(text, sizeof text, fmt, ap);
    for (int i = 0; i < w->count; i++)
        if (strcmp(w->text[i], text) == 0) {
            w->subject[i] |= subject;
            return;
        }
    if (w->count < WARNINGS_MAX) {
        memcpy(w->text[w->count], text, sizeof text);
        w->subject[w->count++] = subject;
    }
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
SERIES_OF(log10_norm, r->network.log10_norm)
SERIES_OF(counterpart_log10_norm, r->counterpart.log10_norm)
#undef SERIES_OF

const ResultSeries RESULT_SERIES[] = {
    {"stable_rank", "sr(Σ_ℓ) = Σ s_i(X_ℓ)⁴ / s_1(X_ℓ)⁴, first seed", false, stable_rank},
    {"stable_rank_minus_one", "sr(Σ_ℓ) − 1, summed directly", false, stable_rank_minus_one},
    {"stable_rank_mean", "mean of sr(Σ_ℓ) over the seeds", false, stable_rank_mean},
    {"stable_rank_std", "sample std of sr(Σ_ℓ) over the seeds", false, stable_rank_std},
    {"counterpart_stable_rank", "sr(Σ_ℓ) of the gap-toggled network", false,
     counterpart_stable_rank},
    {"counterpart_stable_rank_minus_one", "its sr − 1", false, counterpart_stable_rank_minus_one},
    {"counterpart_stable_rank_mean", "its mean over the seeds", false,
     counterpart_stable_rank_mean},
    {"counterpart_stable_rank_std", "its sample std over the seeds", false,
     counterpart_stable_rank_std},
    {"token_similarity", "μ(X_ℓ)/μ(X_0), μ(X) = ‖X − 1x̄ᵀ‖_F", false, token_similarity},
    {"counterpart_token_similarity", "the same, gap-toggled network", false,
     counterpart_token_similarity},
    {"gradient_norm", "‖∂X_L/∂W^V_ℓ‖_F², attention frozen", true, gradient_norm},
    {"log10_gradient_norm", "log10 of it (finite where it overflows)", true, log10_gradient_norm},
    {"counterpart_gradient_norm", "the same, gap-toggled network", true, counterpart_gradient_norm},
    {"counterpart_log10_gradient_norm", "log10 of it", true, counterpart_log10_gradient_norm},
    {"log10_norm", "log10 ‖X_ℓ‖_F", false, log10_norm},
    {"counterpart_log10_norm", "the same, gap-toggled network", false, counterpart_log10_norm},
    {"stable_rank_m2", "sum over the seeds of (sr(Σ_ℓ) − mean)², for merging seed ranges", false,
     stable_rank_m2},
    {"counterpart_stable_rank_m2", "the same, gap-toggled network", false,
     counterpart_stable_rank_m2},
};
const int RESULT_SERIES_COUNT = (int)(sizeof RESULT_SERIES / sizeof RESULT_SERIES[0]);
