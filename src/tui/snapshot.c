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
    s->warnings = r->warnings;
    bool ok = s->stable_rank && s->stable_rank_minus_one && s->counterpart_stable_rank;
    if (ok && r->spectra_ready) {
        s->spectra_ready = true;
        s->tokens = c->tokens;
        s->shown_gap = r->shown_gap;
        s->outliers_removed = r->outliers_removed;
        s->eigenvalues_exact = r->eigenvalues_exact;
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
    free(s->eigenvalues);
    free(s->singular_values);
    free(s);
}

static double modulus(Complex z)
{
    return hypot(z.re, z.im);
}

double Snapshot_eigen_gap(const Snapshot *s)
{
    if (!s->spectra_ready || s->tokens < 2)
        return NAN;
    return 1.0 - modulus(s->eigenvalues[1]);
}

double Snapshot_singular_ratio(const Snapshot *s)
{
    /* s2 at round-off (uniform attention: A⊥ = 0) makes the ratio noise: undefined. */
    if (!s->spectra_ready || s->tokens < 2 ||
        !(s->singular_values[1] > 1e-12 * s->singular_values[0]))
        return NAN;
    return s->singular_values[0] / s->singular_values[1];
}

int Snapshot_count_above_half(const Snapshot *s)
{
    int count = 0;
    for (int i = 0; s->spectra_ready && i < s->tokens; i++)
        count += modulus(s->eigenvalues[i]) > 0.5;
    return count;
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
