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

ToggledNetwork Snapshot_toggled(const Snapshot *s)
{
    return (ToggledNetwork){s->has_compare ? s->compare_eigenvalues : NULL, s->compare_gap,
                            s->compare_exact};
}

static double *copied(const double *values, size_t count)
{
    if (!values)
        return NULL;
    double *p = malloc(sizeof(double) * count);
    if (p)
        memcpy(p, values, sizeof(double) * count);
    return p;
}

bool Snapshot_attach_input(Snapshot *s, const double *input)
{
    const Config *c = &s->result->config;
    free(s->input);
    s->input = copied(input, (size_t)c->tokens * c->width);
    return s->input != NULL;
}

/* The series the screen shows (CONDITIONING_SERIES), each depth + 1 values. */
static bool copy_curves(ConditioningCurves *to, const ConditioningCurves *from, int depth)
{
    bool made = true;
    for (int i = 0; i < CONDITIONING_SERIES_COUNT; i++) {
        size_t at = CONDITIONING_SERIES[i].offset;
        double *values =
            copied(ConditioningSeries_values(&CONDITIONING_SERIES[i], from), (size_t)depth + 1);
        *(double **)((char *)to + at) = values;
        made = made && values;
    }
    return made;
}

bool Snapshot_attach_conditioning(Snapshot *s, int slot, const Conditioning *c)
{
    Conditioning *to = &s->conditioning[slot];
    Conditioning_release(to);
    memset(to, 0, sizeof *to);
    to->config = c->config;
    to->counterpart_gap = c->counterpart_gap;
    to->jacobian_exact = c->jacobian_exact;
    to->kron = c->kron;
    memcpy(to->jacobian_singular, c->jacobian_singular, sizeof to->jacobian_singular);
    to->warnings = c->warnings;
    size_t T = (size_t)c->config.tokens, d = (size_t)c->config.width, L = (size_t)c->config.depth;
    bool made = copy_curves(&to->network, &c->network, c->config.depth) &&
                copy_curves(&to->counterpart, &c->counterpart, c->config.depth);
    to->layers_attention_sv = copied(c->layers_attention_sv, L * T);
    to->layers_value_output_sv = copied(c->layers_value_output_sv, L * d);
    to->layers_jacobian_sv = copied(c->layers_jacobian_sv, L * T * d);
    made = made && (to->layers_attention_sv || !c->layers_attention_sv) &&
           (to->layers_value_output_sv || !c->layers_value_output_sv) &&
           (to->layers_jacobian_sv || !c->layers_jacobian_sv);
    if (!made) {
        Conditioning_release(to);
        return false;
    }
    /* One run serves every shown layer: the snapshot shows its own. */
    Conditioning_show_layer(to, s->result->config.layer);
    for (int i = 0; i < c->warnings.count; i++)
        if (slot)
            Warnings_add_about(&s->result->warnings, WARNING_ABOUT_CONDITIONING, "[init %s] %s",
                               INIT_NAMES.names[c->config.init], c->warnings.text[i]);
        else
            Warnings_add_about(&s->result->warnings, WARNING_ABOUT_CONDITIONING, "%s",
                               c->warnings.text[i]);
    s->has_conditioning[slot] = true;
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

Snapshot *Snapshot_hold(Snapshot *s)
{
    atomic_fetch_add(&s->extra_holders, 1);
    return s;
}

void Snapshot_free(Snapshot *s)
{
    if (!s || atomic_fetch_sub(&s->extra_holders, 1) > 0)
        return;
    Result_free(s->result);
    free(s->compare_eigenvalues);
    free(s->input);
    Conditioning_release(&s->conditioning[0]);
    Conditioning_release(&s->conditioning[1]);
    free(s);
}
