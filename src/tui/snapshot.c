#include "snapshot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Snapshot *Snapshot_of(const Result *r, unsigned long generation)
{
    Snapshot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->generation = generation;
    s->result = Result_copy(r);
    if (!s->result) {
        free(s);
        return NULL;
    }
    return s;
}

bool Snapshot_attach_compare(Snapshot *s, const Result *r)
{
    if (!r->spectra_ready || r->config.tokens != s->result->config.tokens)
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

Snapshot *Snapshot_failure(const Config *c, unsigned long generation, const char *error)
{
    Snapshot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->generation = generation;
    s->failed = true;
    s->done = true;
    s->result = Result_new();
    if (!s->result) {
        free(s);
        return NULL;
    }
    s->result->config = *c;
    s->result->sigma = s->result->logit_std = NAN;
    s->result->readouts = (Readouts){NAN, NAN, NAN, NAN};
    s->result->outlier = -1;
    snprintf(s->error, sizeof s->error, "%s", error);
    return s;
}

void Snapshot_free(Snapshot *s)
{
    if (!s)
        return;
    Result_free(s->result);
    free(s->compare_eigenvalues);
    free(s);
}

double Snapshot_last_stable_rank(const Snapshot *s, int *layer, double *minus_one)
{
    const Result *r = s->result;
    *layer = r->layers_done;
    *minus_one = NAN;
    if (!r->network.stable_rank || r->layers_done < 1)
        return NAN;
    *minus_one = r->network.stable_rank_minus_one[r->layers_done];
    return r->network.stable_rank[r->layers_done];
}
