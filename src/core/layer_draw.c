/* Where a layer's weights and the network's input X0 come from: drawn from their streams
 * (docs/model.md §1.6: each matrix its own stream of (seed, layer, role), so that any layer is
 * drawn again alone), or read from the weight source the app sets once (--weights), with the
 * token ids (--token-ids) and the checks that they fit the settings.  Run by Layer_declare_draw
 * without buffers, each draw declares its work instead.  Apart from the step (layer.c) because
 * the step never asks where its weights came from. */
#include "attnscope/layer.h"

#include "attnscope/init.h"
#include "attnscope/work.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>

/* Where the draws of a layer go: into weights, or (declared non-NULL) into a list of the
   work they would take, nothing drawn, so that the plan prices the walk the run takes. */
typedef struct {
    RandomStream *random;
    Linalg *la;
    const Config *c;
    uint64_t seed;
    int layer;
    double *scratch;
    WorkList *declared;
} Drawing;

static int draw_query_key(const Drawing *d, const LayerWeights *w)
{
    if (d->declared) {
        Work_query_key_draw(d->c, d->declared);
        return 0;
    }
    return Init_draw_query_key(d->random, d->la, d->c, d->seed, d->layer, w->query, w->key,
                               d->scratch);
}

static void draw_markov(const Drawing *d, const LayerWeights *w)
{
    const Config *c = d->c;
    size_t n = (size_t)c->tokens * c->tokens * (size_t)c->heads;
    if (d->declared)
        WorkList_add(d->declared, WORK_NORMALS, (double)n, 0, 0, 1);
    else
        RandomStream_gaussian(d->random, d->seed, d->layer, ROLE_MARKOV, c->sigma_qk * c->sigma_qk,
                              w->markov, n);
}

/* Head h's sink S + s·z_h, z_h the h-th number of the stream (seed, layer, ROLE_SINK); S
   itself for s = 0 (no draw). */
static void draw_sinks(const Drawing *d, double *sink)
{
    const Config *c = d->c;
    if (d->declared) {
        if (c->sink_std > 0)
            WorkList_add(d->declared, WORK_NORMALS, c->heads, 0, 0, 1);
        return;
    }
    if (c->sink_std > 0)
        RandomStream_gaussian(d->random, d->seed, d->layer, ROLE_SINK, c->sink_std, sink,
                              (size_t)c->heads);
    for (int h = 0; h < c->heads; h++)
        sink[h] = c->sink_std > 0 ? c->sink + sink[h] : c->sink;
}

static int draw_matrix(const Drawing *d, Matrix m, double *out)
{
    if (d->declared) {
        Work_matrix_draw(d->c, m, d->declared);
        return 0;
    }
    if (m == MATRIX_VALUE || m == MATRIX_OUTPUT)
        return Init_draw_with_scratch(d->random, d->la, d->c, d->seed, d->layer, m, out,
                                      d->scratch);
    return Init_draw(d->random, d->la, d->c, d->seed, d->layer, m, out);
}

static int draw_parts(const Drawing *d, unsigned parts, const LayerWeights *w)
{
    const Config *c = d->c;
    int info = 0;
    if ((parts & LAYER_DRAW_ATTENTION) && Attention_has_query_key(c->attention))
        info = draw_query_key(d, w);
    if ((parts & LAYER_DRAW_ATTENTION) && c->attention == ATTENTION_MARKOV)
        draw_markov(d, w);
    if ((parts & LAYER_DRAW_ATTENTION) && Config_has_sink(c))
        draw_sinks(d, w->sink);
    if (!info && (parts & LAYER_DRAW_VALUE))
        info = draw_matrix(d, MATRIX_VALUE, w->value);
    /* W^O of docs/model.md §1.7: entries N(0, 1/d), which keep a token's expected norm, or
       the Haar-orthogonal Q of their QR factorisation, which keeps every norm. */
    if (!info && (parts & LAYER_DRAW_OUTPUT) && c->output != OUTPUT_IDENTITY)
        info = draw_matrix(d, MATRIX_OUTPUT, w->output);
    if (!info && (parts & LAYER_DRAW_MLP) && c->mlp != MLP_NONE)
        info = draw_matrix(d, MATRIX_MLP_IN, w->mlp_in);
    if (!info && (parts & LAYER_DRAW_MLP) && c->mlp != MLP_NONE)
        info = draw_matrix(d, MATRIX_MLP_OUT, w->mlp_out);
    if (!info && (parts & LAYER_DRAW_MLP) && Config_mlp_gated(c))
        info = draw_matrix(d, MATRIX_MLP_UP, w->mlp_up);
    return info;
}

/* Set once by the app before any run, then only read (layer.h). */
static const WeightSource *weight_source;

void Layer_use_weights(const WeightSource *source)
{
    weight_source = source;
}

/* Set once by the app before any run, then only read, like the source. */
static LayerReading reading_watch;
static void *reading_context;

void Layer_watch_reading(LayerReading reading, void *context)
{
    reading_watch = reading;
    reading_context = context;
}

static int fill_watched(const Config *c, int layer, unsigned parts, const LayerWeights *w)
{
    if (reading_watch)
        reading_watch(reading_context, layer, c->depth, false);
    int status = weight_source->fill(weight_source->context, c, layer, parts, w);
    if (reading_watch)
        reading_watch(reading_context, layer, c->depth, true);
    return status;
}

const WeightSource *Layer_weights_in_use(void)
{
    return weight_source;
}

bool Layer_draws_ahead(void)
{
    return weight_source == NULL;
}

/* Set once by the app before any run, then only read: --token-ids. */
static const int32_t *token_ids;
static const int32_t *token_lines;
static int token_count;
static const char *token_ids_name;

void Layer_use_token_ids(const int32_t *ids, const int32_t *lines, int count, const char *name)
{
    token_ids = ids;
    token_lines = lines;
    token_count = count;
    token_ids_name = name;
}

const char *Layer_token_ids_name(void)
{
    return token_ids ? token_ids_name : NULL;
}

bool Layer_input_source(const Config *c, char *buf, size_t size)
{
    bool table = weight_source && weight_source->embed;
    if (c->input != INPUT_EMBEDDING || (!table && !token_ids))
        return false;
    char ids[96];
    if (c->seeds > 1)
        snprintf(ids, sizeof ids, "random ids, seeds %llu … %llu", (unsigned long long)c->seed,
                 (unsigned long long)(c->seed + (uint64_t)c->seeds - 1));
    else
        snprintf(ids, sizeof ids, "random ids, seed %llu", (unsigned long long)c->seed);
    snprintf(buf, size, "%s in %s", token_ids ? token_ids_name : ids,
             table ? weight_source->table : "a drawn table");
    return true;
}

const LayerAffine *Layer_affine(const Config *c, int layer)
{
    return weight_source && weight_source->affine
               ? weight_source->affine(weight_source->context, c, layer)
               : NULL;
}

bool Layer_token_ids_below(const int32_t *ids, const int32_t *lines, int count, const char *name,
                           int vocab, const char *table, char *why, size_t size)
{
    for (int i = 0; i < count; i++) {
        if (ids[i] < vocab)
            continue;
        if (lines)
            snprintf(why, size, "%s:%d: token id %d is not below V = %d (%s)", name, lines[i],
                     ids[i], vocab, table);
        else
            snprintf(why, size, "%s: [%d] = %d is not below V = %d (%s)", name, i, ids[i], vocab,
                     table);
        return false;
    }
    return true;
}

bool Layer_weights_fit(const Config *c, char *why, size_t size)
{
    if (token_ids && c->input != INPUT_EMBEDDING) {
        snprintf(why, size, "the token ids of %s are the input (they need the embedding input)",
                 token_ids_name);
        return false;
    }
    if (token_ids && c->tokens != token_count) {
        snprintf(why, size, "the token ids of %s fix T = %d", token_ids_name, token_count);
        return false;
    }
    /* The screen's V (`:vocab`) meets the ids here as the command line's --vocab does. */
    bool table = weight_source && weight_source->embed;
    if (token_ids &&
        !Layer_token_ids_below(token_ids, token_lines, token_count, token_ids_name, c->vocab,
                               table ? weight_source->table : "--vocab, the drawn table's rows",
                               why, size))
        return false;
    /* With the source's table read at fixed ids, no stream of the seed is drawn from (§1.6):
       every seed would run the same network on the same input, and its spread be 0. */
    if (token_ids && weight_source && weight_source->embed && c->seeds > 1) {
        snprintf(why, size,
                 "--seeds %d: every seed would run the same network on the same input, since "
                 "neither its weights nor its input (the token ids of %s in %s) are drawn from "
                 "the seed: accepted 1",
                 c->seeds, token_ids_name, weight_source->table);
        return false;
    }
    return !weight_source || !weight_source->fits ||
           weight_source->fits(weight_source->context, c, why, size);
}

int Layer_draw(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer,
               unsigned parts, const LayerWeights *w, double *scratch)
{
    if (weight_source)
        return fill_watched(c, layer, parts, w);
    Drawing d = {random, la, c, seed, layer, scratch, NULL};
    return draw_parts(&d, parts, w);
}

void Layer_declare_draw(const Config *c, unsigned parts, WorkList *out)
{
    if (weight_source) {
        if (weight_source->declare)
            weight_source->declare(weight_source->context, c, parts, out);
        return;
    }
    Drawing d = {.c = c, .declared = out};
    draw_parts(&d, parts, &(LayerWeights){0});
}

/* The embedding input's rows into g (d×T, row i its column i): T token ids, the fixed ones
   or uniform on 0..V−1, into x (free until the rows are transposed in), then the weight
   source's table rows, or row k of a drawn table from its own stream (seed, k), so that a
   repeated id gives the same row bit for bit and the V×d table is never stored.  The
   trunc-normal scheme cuts them as its matrices. */
static int embedding_rows(RandomStream *random, const Config *c, uint64_t seed, double *x,
                          double *g)
{
    int T = c->tokens, d = c->width;
    double std = Init_embedding_std(c);
    if (token_ids)
        for (int i = 0; i < T; i++)
            x[i] = token_ids[i];
    else
        RandomStream_uniform_integers(random, seed, 0, ROLE_TOKEN_IDS, (unsigned long)c->vocab, x,
                                      (size_t)T);
    if (weight_source && weight_source->embed)
        return weight_source->embed(weight_source->context, c, x, g);
    for (int i = 0; i < T; i++) {
        int id = (int)x[i];
        double *row = g + (size_t)i * d;
        if (c->init == INIT_TRUNC_NORMAL)
            RandomStream_truncated_gaussian(random, seed, id, ROLE_EMBEDDING, std, INIT_TRUNCATION,
                                            row, (size_t)d);
        else
            RandomStream_gaussian(random, seed, id, ROLE_EMBEDDING, std, row, (size_t)d);
    }
    return 0;
}

/* GPT-2's learned positions added to the rows of x (T×d): row p of N(0, (S/2)²) from its
   own stream (seed, p), drawn into g (d×T, free once the rows are in x), so that a longer
   input keeps the first positions' rows. */
static void add_positions(RandomStream *random, const Config *c, uint64_t seed, double *x,
                          double *g)
{
    int T = c->tokens, d = c->width;
    double std = Init_embedding_std(c) / 2;
    for (int p = 0; p < T; p++) {
        double *row = g + (size_t)p * d;
        RandomStream_gaussian(random, seed, p, ROLE_POSITION, std, row, (size_t)d);
        for (int j = 0; j < d; j++)
            x[p + (size_t)j * T] += row[j];
    }
}

/* mt19937's state, which seeding a stream writes: 624 words. */
#define STREAM_STATE_WORDS 624

/* X0: orthonormal rows (QR of a d×T draw), or the embedding's rows (each a stream seeded and
   d normals drawn, no QR), with learned positions added as many again. */
static void declare_input(const Config *c, WorkList *out)
{
    double T = c->tokens, td = T * c->width;
    if (c->input == INPUT_EMBEDDING && weight_source && weight_source->embed) {
        /* The table's rows converted (positions' too), then transposed in. */
        WorkList_add(out, WORK_PASSES, 4 * td, 0, 0, 1);
        return;
    }
    WorkList_add(out, WORK_NORMALS, td, 0, 0, 1);
    if (c->input == INPUT_EMBEDDING) {
        WorkList_add(out, WORK_PASSES, T * (STREAM_STATE_WORDS + 1) + 2 * td, 0, 0, 1);
        if (c->positions == POSITIONS_LEARNED) {
            WorkList_add(out, WORK_NORMALS, td, 0, 0, 1);
            WorkList_add(out, WORK_PASSES, T * STREAM_STATE_WORDS + 2 * td, 0, 0, 1);
        }
        return;
    }
    bool scaled = c->input_norm == INPUT_NORM_SQRT_D;
    WorkList_add(out, WORK_ORTHONORMAL, c->width, T, 0, 1);
    WorkList_add(out, WORK_PASSES, td * (scaled ? 2 : 1), 0, 0, 1);
}

static int input(const Drawing *d, double *x)
{
    const Config *c = d->c;
    if (d->declared) {
        declare_input(c, d->declared);
        return 0;
    }
    int T = c->tokens, width = c->width;
    size_t td = (size_t)T * width;
    double *g = d->scratch; /* d×T */
    if (c->input == INPUT_EMBEDDING) {
        int status = embedding_rows(d->random, c, d->seed, x, g);
        if (status)
            return status;
    } else {
        RandomStream_gaussian(d->random, d->seed, 0, ROLE_INPUT, 1.0, g, td);
        int info = Linalg_orthonormalise(d->la, width, T, g);
        if (info)
            return info;
    }
    for (int j = 0; j < width; j++)
        for (int i = 0; i < T; i++)
            x[i + (size_t)j * T] = g[j + (size_t)i * width];
    bool drawn_table = !weight_source || !weight_source->embed;
    if (c->input == INPUT_EMBEDDING && c->positions == POSITIONS_LEARNED && drawn_table)
        add_positions(d->random, c, d->seed, x, g);
    /* Rows of norm √d, as after embedding + LN (the embedding's std says its rows' norm). */
    if (c->input == INPUT_ORTHONORMAL && c->input_norm == INPUT_NORM_SQRT_D)
        cblas_dscal((int)td, sqrt((double)width), x, 1);
    return 0;
}

int Layer_input(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, double *x,
                double *scratch)
{
    Drawing d = {random, la, c, seed, 0, scratch, NULL};
    return input(&d, x);
}

void Layer_declare_input(const Config *c, WorkList *out)
{
    Drawing d = {.c = c, .declared = out};
    input(&d, NULL);
}
