#include "batch.h"

#include "attnscope/conditioning.h"
#include "attnscope/entropy.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/random.h"
#include "attnscope/theory.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void field_numbers(Text *t, const char *name, const double *x, int n)
{
    Text_printf(t, ",\n \"%s\": ", name);
    Json_numbers(t, x, n);
}

/* The series of RESULT_SERIES from `start` on that share its group, as one object on one line
   under the group's name, each under the rest of its name.  Returns the index after them. */
static int group_object(Text *t, const Result *r, int start)
{
    const char *group = RESULT_SERIES[start].group;
    size_t prefix = strlen(group) + 1; /* the group's name and an underscore */
    int layers = r->config.depth + 1, i = start;
    Text_printf(t, ",\n \"%s\": {", group);
    for (; i < RESULT_SERIES_COUNT && RESULT_SERIES[i].group &&
           strcmp(RESULT_SERIES[i].group, group) == 0;
         i++) {
        const ResultSeries *series = &RESULT_SERIES[i];
        int first = series->from_layer_one ? 1 : 0;
        Text_printf(t, "%s\"%s\": ", i > start ? ", " : "", series->name + prefix);
        Json_numbers(t, series->values(r) + first, layers - first);
    }
    Text_printf(t, "}");
    return i;
}

static void field_number(Text *t, const char *name, double x)
{
    Text_printf(t, "\"%s\": ", name);
    Json_number(t, x);
}

static void field_string_or_null(Text *t, const char *name, const char *value)
{
    Text_printf(t, "\"%s\": ", name);
    if (value)
        Json_string(t, value);
    else
        Text_printf(t, "null");
}

/* A theory curve, null where theory has none: every curve starts at sr(Σ_0) = T, so a finite
   entry 0 says there is one, whose later entries may be null (outside [1, T], theory.h). */
static void field_curve(Text *t, const char *name, const double *x, int n)
{
    Text_printf(t, "\"%s\": ", name);
    if (n > 0 && isfinite(x[0]))
        Json_numbers(t, x, n);
    else
        Text_printf(t, "null");
}

/* One field of an object of named numbers: a number (null where not finite), a string (null
   where NULL: the reason the numbers are null, or none), or a curve (null where theory has
   none). */
typedef enum { FIELD_NUMBER, FIELD_STRING, FIELD_CURVE } FieldKind;

typedef struct {
    FieldKind kind;
    const char *name;
    double number;
    const char *string;
    const double *curve;
    int length;
    bool own_line; /* on a line of its own, as the curves are */
} Field;

static Field number(const char *name, double x)
{
    return (Field){.kind = FIELD_NUMBER, .name = name, .number = x};
}

static Field string_or_null(const char *name, const char *value, bool own_line)
{
    return (Field){.kind = FIELD_STRING, .name = name, .string = value, .own_line = own_line};
}

static Field curve(const char *name, const double *x, int n)
{
    return (Field){.kind = FIELD_CURVE, .name = name, .curve = x, .length = n, .own_line = true};
}

/* `,\n "name": {` the fields `}`, ", " between them (",\n  " before one on its own line). */
static void fields_object(Text *t, const char *name, const Field *f, int count)
{
    Text_printf(t, ",\n \"%s\": {", name);
    for (int i = 0; i < count; i++) {
        if (i)
            Text_printf(t, f[i].own_line ? ",\n  " : ", ");
        if (f[i].kind == FIELD_NUMBER)
            field_number(t, f[i].name, f[i].number);
        else if (f[i].kind == FIELD_STRING)
            field_string_or_null(t, f[i].name, f[i].string);
        else
            field_curve(t, f[i].name, f[i].curve, f[i].length);
    }
    Text_printf(t, "}");
}

static void theory_object(Text *t, const Config *c)
{
    int layers = c->depth + 1;
    double *curves = malloc(sizeof(double) * 2 * (size_t)layers);
    if (!curves) {
        t->failed = true;
        return;
    }
    TheoryPrediction p = {.stable_rank = curves, .counterpart_stable_rank = curves + layers};
    Theory_predict(c, &p);
    const Field fields[] = {
        number("sigma", p.sigma),
        number("circle_radius", p.bulk_radius),
        number("outlier", p.outlier),
        string_or_null("singular_law", p.singular_law, false),
        number("singular_edge", p.singular_edge),
        curve("stable_rank", p.stable_rank, layers),
        curve("counterpart_stable_rank", p.counterpart_stable_rank, layers),
        string_or_null("note", p.stable_rank_note, true),
    };
    fields_object(t, "theory", fields, sizeof fields / sizeof fields[0]);
    free(curves);
}

/* The random-energy prediction of the first layer's mean row entropy, null with a note where
   it does not hold. */
static void entropy_theory_object(Text *t, const Config *c)
{
    EntropyTheory e;
    Theory_entropy_first_layer(c, &e);
    const Field fields[] = {
        number("layer", 1),
        number("mean", e.mean),
        number("logit_std", e.logit_std),
        number("critical_logit_std", e.critical_logit_std),
        string_or_null("note", e.note, false),
    };
    fields_object(t, "attention_entropy_theory", fields, sizeof fields / sizeof fields[0]);
}

/* Which side of Giorlandino & Goldt's threshold each layer of a network is on, null where β or
   β_c is. */
static void phase_sides(Text *t, const char *name, double beta, const double *critical, int n)
{
    Text_printf(t, ", \"%s\": [", name);
    for (int l = 0; l < n; l++) {
        const char *side = Theory_phase_side(beta, critical[l]);
        Text_printf(t, l ? ", " : "");
        if (side)
            Json_string(t, side);
        else
            Text_printf(t, "null");
    }
    Text_printf(t, "]");
}

/* Why the bounds beside the entropies are null where they are (docs/model.md §3): the first
   layer's reason (a RoPE that skips layers voids only those); the phase's β and each layer's
   side (its β_c is the series attention_phase_critical_beta). */
static void entropy_bounds_object(Text *t, const Result *r)
{
    const Config *c = &r->config;
    int layers = c->depth + 1;
    const char *zhai = Entropy_defined(c->attention) ? Entropy_zhai_void(c, 1)
                                                     : Entropy_undefined_reason(c->attention);
    const char *phase = Theory_phase_void(c, 1);
    /* The entropy view's histogram: H_i of each row of the shown matrix as built. */
    Text_printf(t, ",\n \"shown_attention_entropy\": {\"layer\": %d, \"head\": %d, \"rows\": ",
                c->layer, c->head);
    if (r->spectra_ready && Entropy_defined(c->attention))
        Json_numbers(t, r->row_entropy, c->tokens);
    else
        Text_printf(t, "null");
    Text_printf(t, "}");
    double beta = phase ? NAN : Theory_phase_beta(c);
    Text_printf(t, ",\n ");
    field_string_or_null(t, "attention_entropy_zhai_bound_note", zhai);
    Text_printf(t, ",\n \"attention_phase\": {");
    field_number(t, "beta", beta);
    phase_sides(t, "side", beta, r->network.phase_critical_beta, layers);
    phase_sides(t, "counterpart_side", beta, r->counterpart.phase_critical_beta, layers);
    Text_printf(t, ", ");
    field_string_or_null(t, "note", phase);
    Text_printf(t, "}");
}

static void sweep_object(Text *t, const WidthSweep *w)
{
    double tokens[SWEEP_POINTS_MAX];
    for (int i = 0; i < w->count; i++)
        tokens[i] = w->tokens[i];
    Text_printf(t, ",\n \"width_sweep\": {\"T\": ");
    Json_numbers(t, tokens, w->count);
    Text_printf(t, ", \"stable_rank_minus_one\": ");
    Json_numbers(t, w->excess, w->count);
    Text_printf(t, ", \"stable_rank_minus_one_gap\": ");
    Json_numbers(t, w->excess_gap, w->count);
    Text_printf(t, ", ");
    field_number(t, "slope", w->slope);
    Text_printf(t, ", ");
    field_number(t, "slope_gap", w->slope_gap);
    Text_printf(t, ", ");
    field_number(t, "theory_slope", w->theory_slope);
    Text_printf(t, "}");
}

/* The readouts of docs/model.md §2 for the shown layer, null where undefined. */
static void readouts_object(Text *t, const Readouts *o)
{
    const Field fields[] = {
        number("one_minus_abs_lambda2", o->one_minus_abs_lambda2),
        number("s1_over_s2", o->s1_over_s2),
        number("count_abs_lambda_above_half", o->count_abs_lambda_above_half),
        number("stable_rank_shown_layer", o->stable_rank_shown_layer),
    };
    fields_object(t, "readouts", fields, sizeof fields / sizeof fields[0]);
}

static void warnings_array(Text *t, const Warnings *w)
{
    Text_printf(t, "[");
    for (int i = 0; i < w->count; i++) {
        if (i)
            Text_printf(t, ", ");
        Json_string(t, w->text[i]);
    }
    Text_printf(t, "]");
}

/* A route per layer ℓ = 1..L (ConditioningRoute_name, null where none was taken). */
static void routes_array(Text *t, const char *name, bool counterpart, const unsigned char *route,
                         int L)
{
    Text_printf(t, ",\n  \"%s%s\": [", counterpart ? "counterpart_" : "", name);
    for (int l = 1; l <= L; l++) {
        if (l > 1)
            Text_printf(t, ", ");
        const char *way = ConditioningRoute_name((ConditioningRoute)route[l]);
        if (way)
            Json_string(t, way);
        else
            Text_printf(t, "null");
    }
    Text_printf(t, "]");
}

/* docs/model.md §8: per layer ℓ = 1..L, the network's series and the counterpart's. */
static void conditioning_object(Text *t, const Conditioning *k)
{
    int L = k->config.depth, T = k->config.tokens, d = k->config.width;
    Text_printf(t, ",\n \"conditioning\": {\"jacobian_exact\": %s, \"exact_max\": %d, ",
                k->jacobian_exact ? "true" : "false", CONDITIONING_EXACT_MAX);
    field_number(t, "logit_scale", Init_logit_scale(&k->config));
    Text_printf(t, ", ");
    field_string_or_null(t, "jacobian_singular",
                         k->jacobian_singular[0] ? k->jacobian_singular : NULL);
    for (int n = 0; n < 2; n++) {
        const ConditioningCurves *curves = n ? &k->counterpart : &k->network;
        for (int i = 0; i < CONDITIONING_SERIES_COUNT; i++) {
            const ConditioningSeries *s = &CONDITIONING_SERIES[i];
            Text_printf(t, ",\n  \"%s%s\": ", n ? "counterpart_" : "", s->name);
            Json_numbers(t, ConditioningSeries_values(s, curves) + 1, L);
        }
        routes_array(t, "jacobian_s_min_route", n, curves->s_min_route, L);
        routes_array(t, "kappa_dominant_route", n, curves->dominant_route, L);
    }
    Text_printf(t, ",\n  \"shown_layer\": {\"layer\": %d, \"attention_singular_values\": ",
                k->config.layer);
    Json_numbers(t, k->attention_singular_values, T);
    Text_printf(t, ", \"value_output_singular_values\": ");
    Json_numbers(t, k->value_output_singular_values, d);
    Text_printf(t, ", \"jacobian_singular_values\": ");
    if (k->jacobian_singular_values)
        Json_numbers(t, k->jacobian_singular_values, T * d);
    else
        Text_printf(t, "null");
    Text_printf(t, "},\n  \"warnings\": ");
    warnings_array(t, &k->warnings);
    Text_printf(t, "}");
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void Batch_softmax_demo(const Config *c, const double *kappa, int draws, Text *t)
{
    /* The median over the draws, NaN (singular) counted as +infinity. */
    double *sorted = malloc(sizeof(double) * (size_t)draws);
    if (!sorted) {
        t->failed = true;
        return;
    }
    int singular = 0;
    for (int i = 0; i < draws; i++) {
        sorted[i] = isnan(kappa[i]) ? INFINITY : kappa[i];
        singular += isnan(kappa[i]);
    }
    qsort(sorted, (size_t)draws, sizeof(double), compare_doubles);
    double median =
        draws % 2 ? sorted[draws / 2] : 0.5 * (sorted[draws / 2 - 1] + sorted[draws / 2]);
    free(sorted);
    Text_printf(t, "{\"attnscope\": \"%s\",\n \"rng\": ", ATTNSCOPE_VERSION);
    Json_string(t, RANDOM_ALGORITHM);
    Text_printf(t, ",\n \"softmax_demo\": {\"n\": %d, \"draws\": %d, \"seed\": %llu, ", c->tokens,
                draws, (unsigned long long)c->seed);
    field_number(t, "alpha", c->init_alpha);
    Text_printf(t, ", ");
    field_number(t, "beta", c->init_beta);
    Text_printf(t, ",\n  ");
    field_number(t, "closed_form", SoftmaxDemo_closed_form(c->tokens, c->init_beta));
    Text_printf(t, ", ");
    field_number(t, "median", median);
    Text_printf(t, ", \"singular\": %d,\n  \"kappa\": ", singular);
    Json_numbers(t, kappa, draws);
    Text_printf(t, "},\n \"warnings\": [");
    if (singular)
        Json_string(t, "some draws are singular to double precision: their kappa is null and "
                       "counts as infinite in the median");
    Text_printf(t, "]}\n");
}

/* "weights": the checkpoint's path, its files' bytes and content hash ("sha256:" and 64 hex
   digits), or null. */
static void weights_identity(Text *t, const CheckpointIdentity *weights)
{
    Text_printf(t, ",\n \"weights\": ");
    if (!weights) {
        Text_printf(t, "null");
        return;
    }
    Text_printf(t, "{\"path\": ");
    Json_string(t, weights->path);
    Text_printf(t, ", \"bytes\": %llu, \"content_hash\": \"%s\"}",
                (unsigned long long)weights->bytes, weights->content_hash);
}

void Batch_document(const Result *r, const WidthSweep *sweep, const Conditioning *conditioning,
                    const HfConfigReport *hf_config, const CheckpointIdentity *weights, Text *t)
{
    const Config *c = &r->config;
    int layers = c->depth + 1, T = c->tokens;
    Text_printf(t, "{\"attnscope\": \"%s\",\n \"config\": {", ATTNSCOPE_VERSION);
    Json_config_members(t, c);
    char input[512];
    if (Layer_input_source(c, input, sizeof input)) { /* --token-ids, a checkpoint's table */
        Text_printf(t, ",\"input_source\":");
        Json_string(t, input);
    }
    Text_printf(t, "}");
    if (hf_config)
        HfConfig_json(hf_config, t);
    weights_identity(t, weights);
    Text_printf(t, ",");
    Text_printf(t, "\n \"rng\": ");
    Json_string(t, RANDOM_ALGORITHM);
    Text_printf(t, ",\n \"sigma\": ");
    Json_number(t, r->sigma);
    Text_printf(t, ",\n \"logit_std\": ");
    Json_number(t, r->logit_std);
    Text_printf(t, ",\n \"counterpart_gap\": \"%s\"", GAP_NAMES.names[r->counterpart_gap]);
    Text_printf(t, ",\n \"seeds_done\": %d", r->seeds_done);
    for (int i = 0; i < RESULT_SERIES_COUNT; i++) {
        const ResultSeries *series = &RESULT_SERIES[i];
        int first = series->from_layer_one ? 1 : 0;
        if (series->group)
            i = group_object(t, r, i) - 1;
        else
            field_numbers(t, series->name, series->values(r) + first, layers - first);
    }
    Text_printf(t,
                ",\n \"shown_gap\": \"%s\",\n \"outliers_removed\": %d,"
                "\n \"eigenvalues_exact\": %s,\n \"eigenvalues\": ",
                GAP_NAMES.names[r->shown_gap], r->outliers_removed,
                r->eigenvalues_exact ? "true" : "false");
    /* No spectra where the shown layer has no finite attention matrix (a network that
       overflowed or vanished before it): null, as every undefined value. */
    if (r->spectra_ready) {
        for (int i = 0; i < T; i++) {
            Text_printf(t, i ? ",[" : "[[");
            Json_number(t, r->eigenvalues[i].re);
            Text_printf(t, ",");
            Json_number(t, r->eigenvalues[i].im);
            Text_printf(t, "]");
        }
        Text_printf(t, "]");
        field_numbers(t, "singular_values", r->singular_values, T);
    } else {
        Text_printf(t, "null,\n \"singular_values\": null");
    }
    /* Computed with --attention-map product only (T³ a layer): null otherwise. */
    if (r->spectra_ready && r->product_map.mean)
        field_numbers(t, "product_column_mass", r->product_column_mass, T);
    else
        Text_printf(t, ",\n \"product_column_mass\": null");
    if (r->outlier >= 0)
        Text_printf(t, ",\n \"outlier\": %d", r->outlier);
    else
        Text_printf(t, ",\n \"outlier\": null");
    readouts_object(t, &r->readouts);
    theory_object(t, c);
    entropy_theory_object(t, c);
    entropy_bounds_object(t, r);
    if (sweep)
        sweep_object(t, sweep);
    if (conditioning)
        conditioning_object(t, conditioning);
    Text_printf(t, ",\n \"warnings\": [");
    for (int i = 0; i < r->warnings.count; i++) {
        if (i)
            Text_printf(t, ", ");
        Json_string(t, r->warnings.text[i]);
    }
    Text_printf(t, "]}\n");
}
