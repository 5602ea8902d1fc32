/* One transformer layer, stage by stage (see layer.h). */
#include "attnscope/layer.h"

#include "attnscope/block.h"
#include "attnscope/init.h"
#include "attnscope/measure.h"
#include "attnscope/qk.h"
#include "attnscope/work.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

bool Layer_fused_heads(const Config *c)
{
    return c->heads == 1 && c->output == OUTPUT_IDENTITY;
}

int Layer_kv_width(const Config *c)
{
    return Config_kv_heads(c) * Config_head_width(c);
}

bool Layer_pre_norm(const Config *c)
{
    return (c->ln_place == LN_PLACE_PRE || c->ln_place == LN_PLACE_PERI) &&
           c->layernorm != LAYERNORM_NONE;
}

bool Layer_branch_norm(const Config *c)
{
    return (c->ln_place == LN_PLACE_PERI || c->ln_place == LN_PLACE_OUTPUT) &&
           c->layernorm != LAYERNORM_NONE;
}

/* The residual's gains, X ← keep·X + branch·F(X) (docs/model.md §1.5, §1.8): the skip's a
   (none: 0) and the branch's b, over √d for the scaled skip. */
double Layer_skip_gain(const Config *c)
{
    return c->skip == SKIP_NONE ? 0.0 : c->skip_gain;
}

double Layer_branch_gain(const Config *c)
{
    return c->skip == SKIP_SCALED ? c->branch_gain / sqrt((double)c->width) : c->branch_gain;
}

/* Where a sub-block's last product puts F: into X with the residual's gains (X ← keep·X +
   branch·F in the product itself), or, when F is normalised before it joins, alone into
   `branch` (join_normed_branch then adds it). */
typedef struct {
    double *into;
    double branch, keep;
} Join;

static Join join_of(const Config *c, LayerBuffers *b)
{
    if (Layer_branch_norm(c))
        return (Join){.into = b->branch, .branch = 1.0, .keep = 0.0};
    return (Join){.into = b->x, .branch = Layer_branch_gain(c), .keep = Layer_skip_gain(c)};
}

void Layer_buffers(const Config *c, LayerBuffers *b, bool gap_scratch,
                   LayerBuffer out[LAYER_BUFFERS])
{
    size_t T = c ? (size_t)c->tokens : 0, d = c ? (size_t)c->width : 0;
    size_t td = T * d, tt = T * T;
    /* The heads' T×H·d_h (queries, mixed; keys and values take G·d_h of it), each at least
       T×d: the queries' holds X M_h where the logits go through M_h, and the drivers borrow
       these buffers for T×d tokens between steps. */
    size_t inner = c ? (size_t)Config_heads_width(c) : 0, th = T * inner > td ? T * inner : td;
    size_t hidden = c && c->mlp != MLP_NONE ? (size_t)Config_mlp_hidden(c) : 0;
    size_t row = T > d ? T : d;
    const LayerBuffer list[LAYER_BUFFERS] = {
        {&b->x, td},
        {&b->normed, c && Layer_pre_norm(c) ? td : 0},
        {&b->branch, c && Layer_branch_norm(c) ? td : 0},
        {&b->queries, th},
        {&b->keys, c && c->heads > 1 ? th : 0},
        {&b->values, th},
        {&b->logits, tt},
        {&b->attention, tt},
        {&b->mixed, c && !Layer_fused_heads(c) ? th : 0},
        {&b->hidden, T * hidden},
        {&b->up, c && Config_mlp_gated(c) ? T * hidden : 0},
        {&b->row_stat, row > inner ? row : inner},
        {&b->row_max, T},
        {&b->gap_scratch, c && gap_scratch ? Gap_scratch_size(c->tokens) : 0},
    };
    memcpy(out, list, sizeof list);
    b->declared = NULL; /* buffers a driver sets up are run on, never declared */
}

/* ---- what a stage does: run on the buffers, or declared (Layer_declare) ----------------
   Each primitive below either computes on b or, when b->declared is set, adds the work it
   would do to that list and computes nothing: the stages call only these, so the work the
   plan and the cost read is the list of what the step executes, stage by stage. */

static void declare(LayerBuffers *b, WorkKind kind, double m, double n, double k)
{
    WorkList_add(b->declared, kind, m, n, k, 1);
}

/* A block of a buffer from `offset` (none while declaring: the buffers are not there). */
static double *block(double *base, size_t offset)
{
    return base ? base + offset : NULL;
}

static int gemm(LayerBuffers *b, bool ta, bool tb, int m, int n, int k, double alpha,
                const double *a, int lda, const double *x, int ldx, double beta, double *y, int ldy)
{
    if (b->declared) {
        declare(b, WORK_PRODUCT, m, n, k);
        return 0;
    }
    return Linalg_gemm(b->la, ta, tb, m, n, k, alpha, a, lda, x, ldx, beta, y, ldy);
}

/* Whether x (n entries) is finite: a pass over it. */
static bool all_finite(LayerBuffers *b, const double *x, size_t n)
{
    if (b->declared) {
        declare(b, WORK_PASSES, (double)n, 0, 0);
        return true;
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

static bool stop_requested(const LayerBuffers *b)
{
    return !b->declared && Linalg_stop_requested(b->la);
}

/* A norm's gain on the T×d x (Block_gain_columns): a pass. */
static void norm_gain(const Config *c, LayerBuffers *b, double *x, const double *gain)
{
    if (b->declared)
        declare(b, WORK_PASSES, (double)c->tokens * c->width, 0, 0);
    else
        Block_gain_columns(c->tokens, c->width, x, gain, c->norm_gain_offset);
}

/* x[i, j] ← x[i, j] + scale·bias[j] (every row): a pass; nothing where bias is NULL (none). */
static void add_bias(LayerBuffers *b, int rows, int n, double *x, double scale, const double *bias)
{
    if (!bias)
        return;
    if (b->declared) {
        declare(b, WORK_PASSES, (double)rows * n, 0, 0);
        return;
    }
    for (int j = 0; j < n; j++) {
        double add = scale * bias[j];
        double *column = x + (size_t)rows * j;
        for (int i = 0; i < rows; i++)
            column[i] += add;
    }
}

/* LayerNorm (or RMSNorm) of the T×d rows of x: a pass to sum, one to scale, one to write;
   then the norm's gain and bias where it has them (a pass each). */
static void layernorm(const Config *c, LayerBuffers *b, double *x, const NormAffine *affine)
{
    if (c->layernorm == LAYERNORM_NONE)
        return;
    if (!b->declared)
        Block_layernorm(c, c->tokens, c->width, x, b->row_stat, b->row_max);
    else
        declare(b, WORK_PASSES, 3.0 * c->tokens * c->width, 0, 0);
    if (affine && affine->gain)
        norm_gain(c, b, x, affine->gain);
    if (affine)
        add_bias(b, c->tokens, c->width, x, 1.0, affine->bias);
}

/* The affine part of the norm at `site` of a layer, or NULL. */
static const NormAffine *norm_at(const LayerAffine *a, LayerNormSite site)
{
    return a ? &a->norm[site] : NULL;
}

/* QK-norm (with its gains where a checkpoint has them) and RoPE on the T×H·d_h queries and
   T×G·d_h keys (qk.h): a pass for each norm's sums, its scaling, each gain and each
   rotation. */
static void shape_query_key(const Config *c, int layer, const LayerAffine *a, LayerBuffers *b,
                            double *q, double *k)
{
    const double *q_gain = a ? a->query_norm_gain : NULL, *k_gain = a ? a->key_norm_gain : NULL;
    if (!b->declared) {
        Qk_shape(c, layer, c->tokens, q, k, q_gain, k_gain, b->row_stat, b->row_max);
        return;
    }
    double T = c->tokens, entries = T * (Config_heads_width(c) + Layer_kv_width(c));
    if (Qk_normalised(c))
        declare(b, WORK_PASSES,
                3 * entries + (q_gain ? T * Config_heads_width(c) : 0) +
                    (k_gain ? T * Layer_kv_width(c) : 0),
                0, 0);
    if (Qk_rotates(c, layer))
        declare(b, WORK_PASSES, 2 * entries, 0, 0);
}

/* Head h's sink logit, −∞ (none) without sinks, or without weights (a plan's walk). */
static double head_sink(const Config *c, const LayerWeights *w, int h)
{
    return Config_has_sink(c) && w->sink ? w->sink[h] : -INFINITY;
}

/* A head's attention matrix from its logits (docs/model.md §1.2) under the layer's mask and
   the head's sink, the kinds with exp (or erfc) priced as such. */
static void build_attention(const Config *c, int layer, double sink, LayerBuffers *b,
                            const double *logits)
{
    bool exp_kind = c->attention == ATTENTION_SOFTMAX || c->attention == ATTENTION_MARKOV ||
                    c->attention == ATTENTION_SIGMOID;
    if (b->declared)
        declare(b, exp_kind ? WORK_BUILD_EXP : WORK_BUILD_PLAIN, (double)c->tokens * c->tokens, 0,
                0);
    else
        Attention_build(c->attention, Config_layer_mask(c, layer), c->window, c->tokens, logits,
                        sink, b->attention);
}

static void softcap(const Config *c, LayerBuffers *b)
{
    size_t tt = (size_t)c->tokens * c->tokens;
    if (b->declared) /* C·tanh(S/C) on every logit */
        declare(b, WORK_BUILD_EXP, (double)tt, 0, 0);
    else
        Attention_softcap(c->logit_softcap, b->logits, tt);
}

static int remove_gap(const Config *c, int layer, LayerBuffers *b, Gap mode, GapOutcome *outcome,
                      Warnings *warnings)
{
    if (b->declared) {
        Work_gap_removal(c, mode, layer, b->declared);
        *outcome = (GapOutcome){0};
        return 0;
    }
    return Gap_apply(mode, c->attention, Config_has_sink(c), Layer_attention_uniform(c),
                     Config_layer_mask(c, layer), c->window, c->tokens, b->attention, b->la,
                     b->gap_scratch, outcome, warnings);
}

/* The MLP's activation on its n hidden entries (relu a pass, the others with exp or erf). */
static void activate(const Config *c, LayerBuffers *b, size_t n)
{
    if (b->declared)
        declare(b, c->mlp == MLP_RELU ? WORK_PASSES : WORK_BUILD_EXP, (double)n, 0, 0);
    else
        Block_activate(c->mlp, b->hidden, n);
}

/* y ← keep·y + branch·x over n entries: a pass.  With keep = 0, y is not read, as BLAS reads
   no C where β = 0: it may be a buffer that holds nothing yet (`branch`, into which F goes
   alone), where 0·NaN would be NaN. */
static void residual_sum(LayerBuffers *b, double keep, double branch, double *y, const double *x,
                         size_t n)
{
    if (b->declared) {
        declare(b, WORK_PASSES, (double)n, 0, 0);
        return;
    }
    if (keep == 0) {
        for (size_t i = 0; i < n; i++)
            y[i] = branch * x[i];
        return;
    }
    for (size_t i = 0; i < n; i++)
        y[i] = keep * y[i] + branch * x[i];
}

/* y ← y ⊙ x over n entries: a pass. */
static void entrywise_product(LayerBuffers *b, double *y, const double *x, size_t n)
{
    if (b->declared) {
        declare(b, WORK_PASSES, (double)n, 0, 0);
        return;
    }
    for (size_t i = 0; i < n; i++)
        y[i] *= x[i];
}

/* Peri- and output-LN: X ← keep·X + branch·LN(F), F in `branch`, LN with `norm`'s gain and
   bias. */
static void join_normed_branch(const Config *c, LayerBuffers *b, const NormAffine *norm)
{
    if (!Layer_branch_norm(c))
        return;
    layernorm(c, b, b->branch, norm);
    residual_sum(b, Layer_skip_gain(c), Layer_branch_gain(c), b->x, b->branch,
                 (size_t)c->tokens * c->width);
}

/* Post-LN: X ← LN(X) after a sub-block's skip. */
static void post_norm(const Config *c, LayerBuffers *b, const NormAffine *norm)
{
    if (c->ln_place == LN_PLACE_POST)
        layernorm(c, b, b->x, norm);
}

/* ---- the stages ------------------------------------------------------------------------ */

/* Stage 1: what the branch F reads, X or LN(X) in `normed` under pre- and peri-LN (LN with
   `norm`'s gain and bias). */
static const double *branch_input(const Config *c, LayerBuffers *b, const NormAffine *norm)
{
    if (!Layer_pre_norm(c))
        return b->x;
    size_t td = (size_t)c->tokens * c->width;
    if (b->declared)
        declare(b, WORK_PASSES, (double)td, 0, 0);
    else
        memcpy(b->normed, b->x, sizeof(double) * td);
    layernorm(c, b, b->normed, norm);
    return b->normed;
}

/* A matrix drawn exactly 0: no std, no diagonal, not orthonormalised. */
static bool drawn_zero(const Config *c, Matrix m)
{
    MatrixInit init = Init_matrix(c, m);
    return init.std == 0 && init.diagonal == 0 && !init.orthogonal;
}

bool Layer_attention_uniform(const Config *c)
{
    if (c->attention == ATTENTION_UNIFORM)
        return true;
    return c->attention == ATTENTION_SOFTMAX && !Config_has_sink(c) && !Layer_weights_in_use() &&
           (drawn_zero(c, MATRIX_QUERY) || drawn_zero(c, MATRIX_KEY));
}

bool Layer_logits_through_qk_product(const Config *c, int layer)
{
    if (!Attention_has_query_key(c->attention) || Qk_normalised(c) || Qk_rotates(c, layer))
        return false;
    const LayerAffine *a = Layer_affine(c, layer);
    if (a && (a->query_bias || a->key_bias))
        return false;
    /* The rule of Entropy_input_norm_exact: below it the layers keep their rounding. */
    if (Measure_svd_cheap(c->tokens, c->width))
        return false;
    double T = c->tokens, d = c->width, dh = Config_head_width(c), H = c->heads,
           G = Config_kv_heads(c), networks = 2;
    double through = 2 * H * d * d * dh + networks * H * (2 * T * d * d + 2 * T * T * d);
    double projected = networks * (2 * T * d * (H + G) * dh + 2 * H * T * T * dh);
    return through < projected;
}

size_t Layer_qk_product_doubles(const Config *c)
{
    for (int layer = 1; c && layer <= c->depth; layer++)
        if (Layer_logits_through_qk_product(c, layer))
            return (size_t)c->heads * c->width * c->width;
    return 0;
}

int Layer_qk_product(Linalg *la, const Config *c, const double *query, const double *key,
                     double *product)
{
    int d = c->width, dh = Config_head_width(c);
    size_t block = (size_t)d * dh, dd = (size_t)d * d;
    int info = 0;
    for (int h = 0; h < c->heads && !info; h++)
        info = Linalg_gemm(la, false, true, d, d, dh, 1.0, query + block * h, d,
                           key + block * Config_kv_head_of(c, h), d, 0.0, product + dd * h, d);
    return info;
}

void Layer_declare_qk_product(const Config *c, WorkList *out)
{
    WorkList_add(out, WORK_PRODUCT, c->width, c->width, Config_head_width(c), c->heads);
}

/* Stage 2's queries q (T×H·d_h) and keys k (T×G·d_h) of layer `layer`: the projections with
   their biases, then QK-norm and RoPE on them (qk.h).  Returns 0 or LINALG_STOPPED. */
static int project_query_key(const Config *c, int layer, const LayerWeights *w,
                             const LayerAffine *a, LayerBuffers *b, const double *source, double *q,
                             double *k)
{
    int T = c->tokens, d = c->width, inner = Config_heads_width(c), kv = Layer_kv_width(c);
    int info = gemm(b, false, false, T, inner, d, 1.0, source, T, w->query, d, 0.0, q, T);
    if (!info)
        info = gemm(b, false, false, T, kv, d, 1.0, source, T, w->key, d, 0.0, k, T);
    if (info)
        return info;
    if (a) {
        add_bias(b, T, inner, q, 1.0, a->query_bias);
        add_bias(b, T, kv, k, 1.0, a->key_bias);
    }
    shape_query_key(c, layer, a, b, q, k);
    return 0;
}

/* X'·W^V (and its bias) into `values`, T×G·d_h.  Returns 0 or LINALG_STOPPED. */
static int project_values(const Config *c, const LayerWeights *w, const LayerAffine *a,
                          LayerBuffers *b, const double *source)
{
    int T = c->tokens, d = c->width, kv = Layer_kv_width(c);
    int info = gemm(b, false, false, T, kv, d, 1.0, source, T, w->value, d, 0.0, b->values, T);
    if (!info && a)
        add_bias(b, T, kv, b->values, 1.0, a->value_bias);
    return info;
}

/* Whether the step takes head logits through M_h (Layer_logits_through_qk_product): where
   the driver formed it, and while declaring where the rule says the drivers do. */
static bool through_qk_product(const Config *c, int layer, const LayerWeights *w,
                               const LayerBuffers *b)
{
    return b->declared ? Layer_logits_through_qk_product(c, layer) : w->qk_product != NULL;
}

/* Stage 2 with several heads: every head's queries, every key/value head's keys and (with
   values) values in one product each, as wide products run nearer the BLAS's peak than H
   narrow ones.  One head projects its queries and keys in head_logits.  Returns 0 or
   LINALG_STOPPED. */
static int project_heads(const Config *c, int layer, const LayerWeights *w, const LayerAffine *a,
                         LayerBuffers *b, const double *source, bool values)
{
    int info = 0;
    if (Attention_has_query_key(c->attention) && !through_qk_product(c, layer, w, b))
        info = project_query_key(c, layer, w, a, b, source, b->queries, b->keys);
    if (!info && values)
        info = project_values(c, w, a, b, source);
    return info;
}

/* LayerStep.mix_tokens_first: A·X' into `values`, then X ← keep·X + branch·(A·X')·W^V (one
   fused head, no value bias), 2T²d + 2Td² flops as A·(X'·W^V).  Returns 0 or LINALG_STOPPED. */
static int mix_then_project(const Config *c, const LayerWeights *w, LayerBuffers *b,
                            const double *source)
{
    int T = c->tokens, d = c->width;
    int info = gemm(b, true, false, T, d, T, 1.0, b->attention, T, source, T, 0.0, b->values, T);
    if (info)
        return info;
    Join join = join_of(c, b);
    return gemm(b, false, false, T, d, d, join.branch, b->values, T, w->value, d, join.keep,
                join.into, T);
}

/* The soft-cap on the logits just formed (status 0), which *logits then names. */
static int finish_logits(const Config *c, LayerBuffers *b, int status, const double **logits)
{
    if (!status && c->logit_softcap > 0)
        softcap(c, b);
    if (!status)
        *logits = b->logits;
    return status;
}

/* The logits of head h (from 0), row-major: S = X W^Q_h (X W^K_h)ᵀ·scale, i.e.
   Sᵀ = K Qᵀ·scale in column-major, scale Init_logit_scale; W^Q_h is the h-th block of d_h
   columns of W^Q.  Through M_h (through_qk_product): S = (X M_h) Xᵀ·scale.  For markov the "logits"
   are σ_qk²·g, whose row-softmax is Z normalised. *logits is NULL for kinds without logits. Returns
   0 or LINALG_STOPPED. */
static int head_logits(const Config *c, int layer, const LayerWeights *w, const LayerAffine *a,
                       LayerBuffers *b, int h, const double *source, const double **logits)
{
    int T = c->tokens, dh = Config_head_width(c);
    *logits = NULL;
    if (c->attention == ATTENTION_MARKOV) {
        *logits = block(w->markov, (size_t)h * T * T);
        return 0;
    }
    if (!Attention_has_query_key(c->attention))
        return 0;
    if (through_qk_product(c, layer, w, b)) {
        /* X M_h into the queries' buffer (free: nothing was projected), then
           (X M_h) Xᵀ·scale, row-major as below: X (X M_h)ᵀ in column-major. */
        int d = c->width;
        double *xm = b->queries;
        int status = gemm(b, false, false, T, d, d, 1.0, source, T,
                          block(w->qk_product, (size_t)d * d * h), d, 0.0, xm, T);
        if (!status)
            status = gemm(b, false, true, T, T, d, Init_logit_scale(c), source, T, xm, T, 0.0,
                          b->logits, T);
        return finish_logits(c, b, status, logits);
    }
    /* Several heads: their queries and keys were projected at once (project_heads), head h's
       queries are their h-th block of columns, its keys its key/value head's block.  One
       head: the values' buffer is free until the values are applied. */
    double *q = b->queries, *k = b->values;
    int status = 0;
    if (c->heads > 1) {
        q = block(b->queries, (size_t)T * dh * h);
        k = block(b->keys, (size_t)T * dh * Config_kv_head_of(c, h));
    } else {
        status = project_query_key(c, layer, w, a, b, source, q, k);
    }
    if (!status)
        status = gemm(b, false, true, T, T, dh, Init_logit_scale(c), k, T, q, T, 0.0, b->logits, T);
    return finish_logits(c, b, status, logits);
}

static int attention(const Config *c, int layer, const LayerWeights *w, LayerBuffers *b, int head,
                     const double **logits, LayerOutcome *outcome)
{
    const LayerAffine *a = Layer_affine(c, layer);
    const double *source = branch_input(c, b, norm_at(a, NORM_ATTENTION_IN));
    int info = c->heads > 1 ? project_heads(c, layer, w, a, b, source, false) : 0;
    if (!info)
        info = head_logits(c, layer, w, a, b, head, source, logits);
    if (info)
        return info;
    build_attention(c, layer, head_sink(c, w, head), b, *logits);
    size_t tt = (size_t)c->tokens * c->tokens;
    *outcome = all_finite(b, b->attention, tt) ? LAYER_DONE : LAYER_ATTENTION_OVERFLOW;
    return 0;
}

int Layer_attention(const Config *c, int layer, const LayerWeights *w, LayerBuffers *b, int head,
                    const double **logits, LayerOutcome *outcome)
{
    return attention(c, layer, w, b, head, logits, outcome);
}

void Layer_declare_attention(const Config *c, int layer, int head, WorkList *out)
{
    LayerBuffers b = {.declared = out};
    const double *logits;
    LayerOutcome outcome;
    attention(c, layer, &(LayerWeights){0}, &b, head, &logits, &outcome);
}

/* Stage 3, head h: its attention (unless the driver built it), gap removal, and its output
   A_h·X'·W^V_h, joined to X when the heads are fused (X ← keep·X + branch·A X' W^V, join_of)
   and into its block of columns of `mixed` otherwise. */
static int step_head(const LayerStep *s, const LayerAffine *a, LayerBuffers *b, int h,
                     const double *source, LayerOutcome *outcome)
{
    const Config *c = s->config;
    const LayerObserver *o = s->observer;
    int T = c->tokens, d = c->width, dh = Config_head_width(c);
    const double *logits = s->built_logits;
    if (!s->attention_built) {
        int status = head_logits(c, s->layer, s->weights, a, b, h, source, &logits);
        if (status)
            return status;
        build_attention(c, s->layer, head_sink(c, s->weights, h), b, logits);
    }
    if (stop_requested(b))
        return LINALG_STOPPED;
    /* Linear attention squares the tokens' scale: its matrix overflows a layer or more before
       the tokens do, and no spectrum of a matrix with infinities exists. */
    if (!all_finite(b, b->attention, (size_t)T * T)) {
        *outcome = LAYER_ATTENTION_OVERFLOW;
        return 0;
    }
    if (o && o->built)
        o->built(o->context, h, logits, b->attention);
    GapOutcome gap;
    Warnings gap_warnings = {.count = 0};
    int info = remove_gap(c, s->layer, b, s->gap, &gap, &gap_warnings);
    if (!info && o && o->applied)
        info = o->applied(o->context, h, b->attention, gap, &gap_warnings);
    /* The attention buffer is Aᵀ to BLAS, hence the transposed flag.  Several heads: X' W^V
       is in `values` already (project_heads). */
    if (!info && s->mix_tokens_first)
        return mix_then_project(c, s->weights, b, source);
    if (!info && c->heads == 1)
        info = project_values(c, s->weights, a, b, source);
    if (info)
        return info;
    if (Layer_fused_heads(c)) {
        Join join = join_of(c, b);
        return gemm(b, true, false, T, d, T, join.branch, b->attention, T, b->values, T, join.keep,
                    join.into, T);
    }
    size_t at = (size_t)T * dh * h, shared = (size_t)T * dh * Config_kv_head_of(c, h);
    return gemm(b, true, false, T, dh, T, 1.0, b->attention, T, block(b->values, shared), T, 0.0,
                block(b->mixed, at), T);
}

/* Stage 4: X ← keep·X + branch·[head_1 … head_H]·W^O (join_of), once every head has read X;
   the heads' T×H·d_h through the H·d_h×d W^O (the identity only where H·d_h = d,
   Config_validate).  Returns 0 or LINALG_STOPPED. */
static int combine_heads(const Config *c, const LayerWeights *w, const LayerAffine *a,
                         LayerBuffers *b)
{
    int T = c->tokens, d = c->width, inner = Config_heads_width(c);
    Join join = join_of(c, b);
    if (c->output == OUTPUT_IDENTITY) {
        residual_sum(b, join.keep, join.branch, join.into, b->mixed, (size_t)T * d);
        return 0;
    }
    int info = gemm(b, false, false, T, d, inner, join.branch, b->mixed, T, w->output, inner,
                    join.keep, join.into, T);
    if (!info && a) /* F = [heads]·W^O + β_O joins as branch·F */
        add_bias(b, T, d, join.into, join.branch, a->output_bias);
    return info;
}

/* Stage 6: the MLP sub-block with its own skip and LayerNorm, placed as the attention's:
   X ← a·X + b·φ(X' W1) W2 with X' = X (post, then LN; output) or LN(X) (pre, peri), φ(X' W1) W2
   normalised before it joins under peri and output; gated,
   X ← a·X + b·(φ(X' W1) ⊙ X' W_up) W2 (W1 the gate, W2 the down projection).  Returns 0 or
   LINALG_STOPPED. */
static int mlp_sublayer(const Config *c, const LayerWeights *w, const LayerAffine *a,
                        LayerBuffers *b)
{
    int T = c->tokens, d = c->width, hidden = Config_mlp_hidden(c);
    size_t n = (size_t)T * hidden;
    const double *source = branch_input(c, b, norm_at(a, NORM_MLP_IN));
    int info =
        gemm(b, false, true, T, hidden, d, 1.0, source, T, w->mlp_in, hidden, 0.0, b->hidden, T);
    if (!info && Config_mlp_gated(c))
        info = gemm(b, false, true, T, hidden, d, 1.0, source, T, w->mlp_up, hidden, 0.0, b->up, T);
    if (info)
        return info;
    if (a) {
        add_bias(b, T, hidden, b->hidden, 1.0, a->mlp_in_bias);
        if (Config_mlp_gated(c))
            add_bias(b, T, hidden, b->up, 1.0, a->mlp_up_bias);
    }
    activate(c, b, n);
    if (Config_mlp_gated(c))
        entrywise_product(b, b->hidden, b->up, n);
    Join join = join_of(c, b);
    info = gemm(b, false, false, T, d, hidden, join.branch, b->hidden, T, w->mlp_out, hidden,
                join.keep, join.into, T);
    if (info)
        return info;
    if (a) /* F = φ(·)·W2 + β2 joins as branch·F */
        add_bias(b, T, d, join.into, join.branch, a->mlp_out_bias);
    join_normed_branch(c, b, norm_at(a, NORM_MLP_OUT));
    post_norm(c, b, norm_at(a, NORM_MLP_OUT));
    return 0;
}

bool Layer_network_has_bias(const Config *c)
{
    for (int layer = 1; layer <= c->depth; layer++) {
        const LayerAffine *a = Layer_affine(c, layer);
        if (a && (a->value_bias || a->output_bias || a->mlp_in_bias || a->mlp_up_bias ||
                  a->mlp_out_bias))
            return true;
    }
    return false;
}

/* Stage 7: where A does not depend on X and every stage is homogeneous of degree 1 in X
   (no LayerNorm; no MLP, or a relu one; no bias), X is carried at unit norm with its scale
   apart. */
static void carry_scale(const Config *c, LayerBuffers *b, double *log_scale)
{
    size_t td = (size_t)c->tokens * c->width;
    bool homogeneous = Attention_is_input_independent(c->attention) &&
                       c->layernorm == LAYERNORM_NONE &&
                       (c->mlp == MLP_NONE || c->mlp == MLP_RELU) && !Layer_network_has_bias(c);
    if (!homogeneous) /* X's scale stays in X: not even its norm is wanted */
        return;
    if (b->declared) { /* the norm and the scaling */
        declare(b, WORK_PASSES, 2.0 * (double)td, 0, 0);
        return;
    }
    double norm = cblas_dnrm2((int)td, b->x, 1);
    if (norm > 0) {
        cblas_dscal((int)td, 1.0 / norm, b->x, 1);
        *log_scale += log(norm);
    }
}

int Layer_step(const LayerStep *step, LayerBuffers *b, LayerOutcome *outcome, double *log_scale)
{
    const Config *c = step->config;
    const LayerObserver *o = step->observer;
    const LayerAffine *a = Layer_affine(c, step->layer);
    *outcome = LAYER_DONE;
    const double *source = branch_input(c, b, norm_at(a, NORM_ATTENTION_IN));
    int info = o && o->branch_input ? o->branch_input(o->context, source) : 0;
    if (!info && c->heads > 1)
        info = project_heads(c, step->layer, step->weights, a, b, source, true);
    for (int h = 0; h < c->heads && !info && *outcome == LAYER_DONE; h++)
        info = step_head(step, a, b, h, source, outcome);
    if (info || *outcome != LAYER_DONE) /* an overflowed head leaves no finite output */
        return info;
    if (!Layer_fused_heads(c))
        info = combine_heads(c, step->weights, a, b);
    if (info)
        return info;
    join_normed_branch(c, b, norm_at(a, NORM_ATTENTION_OUT));
    post_norm(c, b, norm_at(a, NORM_ATTENTION_OUT));
    if (c->mlp != MLP_NONE)
        info = mlp_sublayer(c, step->weights, a, b);
    if (info)
        return info;
    if (stop_requested(b))
        return LINALG_STOPPED;
    if (!all_finite(b, b->x, (size_t)c->tokens * c->width)) {
        *outcome = LAYER_TOKENS_OVERFLOW;
        return 0;
    }
    carry_scale(c, b, log_scale);
    return 0;
}

void Layer_declare(const LayerStep *step, WorkList *out)
{
    LayerStep declared = *step;
    declared.observer = NULL;
    declared.weights = &(LayerWeights){0};
    LayerBuffers b = {.declared = out};
    LayerOutcome outcome;
    double log_scale = 0;
    Layer_step(&declared, &b, &outcome, &log_scale);
}
