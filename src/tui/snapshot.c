#include "snapshot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *copy_doubles(const double *src, size_t n)
{
    double *p = malloc(sizeof(double) * (n ? n : 1));
    if (p && n)
        memcpy(p, src, sizeof(double) * n);
    return p;
}

Snapshot *Snapshot_of(const Result *r, unsigned long generation)
{
    Snapshot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    const Config *c = &r->config;
    size_t layers = (size_t)c->depth + 1;
    s->generation = generation;
    s->config = *c;
    s->layers_done = r->layers_done;
    s->sigma = r->sigma;
    s->logit_std = r->logit_std;
    s->counterpart_gap = r->counterpart_gap;
    s->depth = c->depth;
    s->stable_rank = copy_doubles(r->network.stable_rank, layers);
    s->stable_rank_minus_one = copy_doubles(r->network.stable_rank_minus_one, layers);
    s->counterpart_stable_rank = copy_doubles(r->counterpart.stable_rank, layers);
    s->token_similarity = copy_doubles(r->network.token_similarity, layers);
    s->counterpart_token_similarity = copy_doubles(r->counterpart.token_similarity, layers);
    s->log10_gradient_norm = copy_doubles(r->network.log10_gradient_norm, layers);
    s->counterpart_log10_gradient_norm = copy_doubles(r->counterpart.log10_gradient_norm, layers);
    s->seeds_done = r->seeds_done;
    s->stable_rank_mean = copy_doubles(r->stable_rank_band.mean, layers);
    s->stable_rank_std = copy_doubles(r->stable_rank_band.std, layers);
    s->counterpart_mean = copy_doubles(r->counterpart_band.mean, layers);
    s->counterpart_std = copy_doubles(r->counterpart_band.std, layers);
    s->warnings = r->warnings;
    bool ok = s->stable_rank && s->stable_rank_minus_one && s->counterpart_stable_rank &&
              s->token_similarity && s->counterpart_token_similarity && s->log10_gradient_norm &&
              s->counterpart_log10_gradient_norm && s->stable_rank_mean && s->stable_rank_std &&
              s->counterpart_mean && s->counterpart_std;
    if (ok && r->spectra_ready) {
        s->spectra_ready = true;
        s->tokens = c->tokens;
        s->shown_gap = r->shown_gap;
        s->outliers_removed = r->outliers_removed;
        s->eigenvalues_exact = r->eigenvalues_exact;
        s->readouts = r->readouts;
        s->eigenvalues = malloc(sizeof(Complex) * (size_t)c->tokens);
        s->singular_values = copy_doubles(r->singular_values, (size_t)c->tokens);
        ok = s->eigenvalues && s->singular_values;
        if (ok)
            memcpy(s->eigenvalues, r->eigenvalues, sizeof(Complex) * (size_t)c->tokens);
    }
    if (!ok) {
        Snapshot_free(s);
        return NULL;
    }
    return s;
}

bool Snapshot_attach_compare(Snapshot *s, const Result *r)
{
    if (!r->spectra_ready || r->config.tokens != s->config.tokens)
        return false;
    Complex *values = malloc(sizeof(Complex) * (size_t)r->config.tokens);
    if (!values)
        return false;
    memcpy(values, r->eigenvalues, sizeof(Complex) * (size_t)r->config.tokens);
    free(s->compare_eigenvalues);
    s->compare_eigenvalues = values;
    s->compare_gap = r->shown_gap;
    s->compare_exact = r->eigenvalues_exact;
    s->has_compare = true;
    return true;
}

void Snapshot_export(const Snapshot *s, ExportData *d)
{
    memset(d, 0, sizeof *d);
    d->config = &s->config;
    d->sigma = s->sigma;
    d->eigenvalues = s->spectra_ready ? s->eigenvalues : NULL;
    d->singular_values = s->spectra_ready ? s->singular_values : NULL;
    /* The names of Export_from_result where the quantity is the same. */
    const struct {
        const char *name;
        const double *values;
    } curves[] = {
        {"stable_rank", s->stable_rank},
        {"stable_rank_minus_one", s->stable_rank_minus_one},
        {"stable_rank_mean", s->stable_rank_mean},
        {"stable_rank_std", s->stable_rank_std},
        {"counterpart_stable_rank", s->counterpart_stable_rank},
        {"counterpart_stable_rank_mean", s->counterpart_mean},
        {"counterpart_stable_rank_std", s->counterpart_std},
        {"token_similarity", s->token_similarity},
        {"counterpart_token_similarity", s->counterpart_token_similarity},
        {"log10_gradient_norm", s->log10_gradient_norm},
        {"counterpart_log10_gradient_norm", s->counterpart_log10_gradient_norm},
    };
    for (size_t i = 0; i < sizeof curves / sizeof curves[0]; i++) {
        d->curve_names[i] = curves[i].name;
        d->curves[i] = curves[i].values;
    }
    d->curve_count = (int)(sizeof curves / sizeof curves[0]);
    d->stable_rank_curve = 0;
    d->counterpart_stable_rank_curve = 4;
}

Snapshot *Snapshot_failure(const Config *c, unsigned long generation, const char *error)
{
    Snapshot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->generation = generation;
    s->config = *c;
    s->failed = true;
    s->done = true;
    s->sigma = NAN;
    s->logit_std = NAN;
    snprintf(s->error, sizeof s->error, "%s", error);
    return s;
}

void Snapshot_free(Snapshot *s)
{
    if (!s)
        return;
    free(s->stable_rank);
    free(s->stable_rank_minus_one);
    free(s->counterpart_stable_rank);
    free(s->token_similarity);
    free(s->counterpart_token_similarity);
    free(s->log10_gradient_norm);
    free(s->counterpart_log10_gradient_norm);
    free(s->stable_rank_mean);
    free(s->stable_rank_std);
    free(s->counterpart_mean);
    free(s->counterpart_std);
    free(s->compare_eigenvalues);
    free(s->eigenvalues);
    free(s->singular_values);
    free(s);
}

double Snapshot_last_stable_rank(const Snapshot *s, int *layer, double *minus_one)
{
    *layer = s->layers_done;
    *minus_one = NAN;
    if (!s->stable_rank || s->layers_done < 1)
        return NAN;
    *minus_one = s->stable_rank_minus_one[s->layers_done];
    return s->stable_rank[s->layers_done];
}
