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

void Curves_release(Curves *c)
{
    free(c->stable_rank);
    free(c->stable_rank_minus_one);
    free(c->log10_norm);
    free(c->token_similarity);
    free(c->gradient_norm);
    free(c->log10_gradient_norm);
    memset(c, 0, sizeof *c);
}

static void band_release(Band *b)
{
    free(b->mean);
    free(b->std);
    memset(b, 0, sizeof *b);
}

void Result_release(Result *r)
{
    Curves_release(&r->network);
    Curves_release(&r->counterpart);
    band_release(&r->stable_rank_band);
    band_release(&r->counterpart_band);
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

int Curves_allocate(Curves *c, size_t n)
{
    double **all[] = {&c->stable_rank,      &c->stable_rank_minus_one, &c->log10_norm,
                      &c->token_similarity, &c->gradient_norm,         &c->log10_gradient_norm};
    int status = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!(*all[i] = nan_array(n)))
            status = -1;
    return status;
}

int Result_allocate(Result *r, int T, int depth)
{
    size_t n = (size_t)depth + 1;
    r->stable_rank_band.mean = nan_array(n);
    r->stable_rank_band.std = nan_array(n);
    r->counterpart_band.mean = nan_array(n);
    r->counterpart_band.std = nan_array(n);
    r->eigenvalues = calloc((size_t)T, sizeof(Complex));
    r->singular_values = nan_array((size_t)T);
    if (Curves_allocate(&r->network, n) || Curves_allocate(&r->counterpart, n))
        return -1;
    return r->stable_rank_band.mean && r->stable_rank_band.std && r->counterpart_band.mean &&
                   r->counterpart_band.std && r->eigenvalues && r->singular_values
               ? 0
               : -1;
}

void Warnings_add(Warnings *w, const char *fmt, ...)
{
    char text[WARNING_LENGTH];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    for (int i = 0; i < w->count; i++)
        if (strcmp(w->text[i], text) == 0)
            return;
    if (w->count < WARNINGS_MAX)
        memcpy(w->text[w->count++], text, sizeof text);
}

/* A copy of n doubles, NULL for NULL (or when out of memory). */
static double *copy_doubles(const double *src, size_t n)
{
    if (!src)
        return NULL;
    double *p = malloc(sizeof(double) * (n ? n : 1));
    if (p && n)
        memcpy(p, src, sizeof(double) * n);
    return p;
}

Result *Result_copy(const Result *r)
{
    Result *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *r;
    size_t layers = (size_t)r->config.depth + 1, T = (size_t)r->config.tokens;
    const struct {
        double **to;
        const double *from;
    } curves[] = {
        {&c->network.stable_rank, r->network.stable_rank},
        {&c->network.stable_rank_minus_one, r->network.stable_rank_minus_one},
        {&c->network.log10_norm, r->network.log10_norm},
        {&c->network.token_similarity, r->network.token_similarity},
        {&c->network.gradient_norm, r->network.gradient_norm},
        {&c->network.log10_gradient_norm, r->network.log10_gradient_norm},
        {&c->counterpart.stable_rank, r->counterpart.stable_rank},
        {&c->counterpart.stable_rank_minus_one, r->counterpart.stable_rank_minus_one},
        {&c->counterpart.log10_norm, r->counterpart.log10_norm},
        {&c->counterpart.token_similarity, r->counterpart.token_similarity},
        {&c->counterpart.gradient_norm, r->counterpart.gradient_norm},
        {&c->counterpart.log10_gradient_norm, r->counterpart.log10_gradient_norm},
        {&c->stable_rank_band.mean, r->stable_rank_band.mean},
        {&c->stable_rank_band.std, r->stable_rank_band.std},
        {&c->counterpart_band.mean, r->counterpart_band.mean},
        {&c->counterpart_band.std, r->counterpart_band.std},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof curves / sizeof curves[0]; i++) {
        *curves[i].to = copy_doubles(curves[i].from, layers);
        ok &= !curves[i].from || *curves[i].to;
    }
    c->singular_values = copy_doubles(r->singular_values, T);
    c->eigenvalues = r->eigenvalues ? malloc(sizeof(Complex) * (T ? T : 1)) : NULL;
    if (c->eigenvalues)
        memcpy(c->eigenvalues, r->eigenvalues, sizeof(Complex) * T);
    ok &= (!r->singular_values || c->singular_values) && (!r->eigenvalues || c->eigenvalues);
    if (!ok) {
        Result_free(c);
        return NULL;
    }
    return c;
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
};
const int RESULT_SERIES_COUNT = (int)(sizeof RESULT_SERIES / sizeof RESULT_SERIES[0]);
