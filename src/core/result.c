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
