/* A checkpoint read back as the layer step's weight source (weights.h): its tensors found and
 * checked against the configuration's (weights_names.c), then converted layer by layer;
 * weights_export.c writes them. */
#include "weights.h"

#include "hf_config.h"
#include "weights_internal.h"

#include "attnscope/init.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct Checkpoint {
    Safetensors *tensors;
    Names names;   /* the names its tensors have */
    Config config; /* as opened: what the shapes were checked against */
    /* Per layer, its gains and biases, converted when opened (vectors: a few times d per
       layer), NULL where unit or zero; `trained` where the layer has any. */
    LayerAffine *affine;
    bool *trained;
    /* The embedding table (V, d) and its learned positions (n_positions, d): GPT-2's wpe, or
       model.embed_positions under the Llama names (an export's); NULL where it has none. */
    const SafetensorsTensor *table, *positions;
    /* The positions the model takes (the learned positions' rows, config.json's
       max_position_embeddings or n_positions, the least of those given), 0 where nothing
       says; and what says it. */
    int context;
    char context_source[96], table_names[3 * NAME_SIZE];
    /* The family its config.json (or --hf-config's) names, "" where none does, and the scale
       that family's model puts on the table's rows before the first block: Gemma's
       sqrt(hidden_size), in double (transformers rounds it to the hidden states' dtype), else
       1. */
    char model_type[64];
    double embedding_scale;
    WeightSource source;
    uint64_t bytes_read; /* by fill, counted atomically: runs on two threads may fill at once */
    CheckpointIdentity identity;
};

/* The elements of t, as its layout puts them in w's buffer. */
static void fill_tensor(const SafetensorsTensor *t, const WeightTensor *want, const LayerWeights *w,
                        const Config *c)
{
    double *out = WeightTensor_buffer(w, want);
    if (want->field == offsetof(LayerWeights, key) || want->field == offsetof(LayerWeights, value))
        memset(out, 0, sizeof(double) * Init_doubles(c, MATRIX_KEY)); /* columns past G·d_h */
    uint64_t rows = want->rows ? want->rows : t->shape[0];
    if (want->layout == AS_STORED && !want->rows)
        Safetensors_to_double(t, out);
    else if (want->layout == AS_STORED) /* a fused tensor's rows: contiguous */
        Safetensors_range_to_double(t, want->first_row * t->shape[1], rows * t->shape[1], out);
    else
        Safetensors_block_to_double(t, want->first_row, rows, want->first_column, want->columns,
                                    out);
}

/* The tensor of list[0..n) named name, or NULL. */
static const WeightTensor *named(const WeightTensor *list, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0)
            return &list[i];
    return NULL;
}

/* The first tensor of c that the checkpoint lacks or holds in another shape, else the first
   of the checkpoint's that c would leave out, described in why: short, for the screen's
   message line (the name after its layer's, which is named past the first). */
static bool shapes_differ(const Checkpoint *k, const Config *c, int layer, char *why, size_t size)
{
    WeightTensor want[LAYER_TENSORS_MAX], opened[LAYER_TENSORS_MAX];
    int n = Weights_layer_tensors(c, &k->names, layer, want),
        m = Weights_layer_tensors(&k->config, &k->names, layer, opened);
    char need[64], has[64], where[32] = "";
    if (layer > 1)
        snprintf(where, sizeof where, "layer %d's ", layer);
    for (int i = 0; i < n; i++) {
        const WeightTensor *o = named(opened, m, want[i].name);
        if (o && o->rank == want[i].rank && memcmp(o->shape, want[i].shape, sizeof o->shape) == 0)
            continue;
        snprintf(why, size, "%s%s needs %s, file has %s", where,
                 Weights_layer_part(&k->names, want[i].name),
                 Weights_shape_text(want[i].rank, want[i].shape, need, sizeof need),
                 o ? Weights_shape_text(o->rank, o->shape, has, sizeof has) : "none");
        return true;
    }
    for (int i = 0; i < m; i++)
        if (!named(want, n, opened[i].name)) {
            snprintf(why, size, "the checkpoint's %s%s would be left out", where,
                     Weights_layer_part(&k->names, opened[i].name));
            return true;
        }
    return false;
}

/* Settings that only say how weights are drawn: with a checkpoint they would change nothing
   the screen says they change (and cutting-skip's logit scale would not match the weights). */
static bool draws_only(const Setting *s)
{
    return strcmp(s->name, "sigma-qk") == 0 || strncmp(s->name, "init", 4) == 0;
}

/* Whether c differs from the checkpoint in what its tensors fix, layers `first`..`last` (the
   heads too: the same (d, d) W^Q split into other heads is another model), described in why. */
static bool fixed_differ(const Checkpoint *k, const Config *c, int first, int last, char *why,
                         size_t size)
{
    const Config *o = &k->config;
    if (!Weights_names_fit(&k->names, c, why, size))
        return true;
    if (c->depth != o->depth || c->heads != o->heads || Config_kv_heads(c) != Config_kv_heads(o)) {
        snprintf(why, size,
                 "the checkpoint holds L = %d layers of H = %d heads, G = %d key/value heads",
                 o->depth, o->heads, Config_kv_heads(o));
        return true;
    }
    for (int layer = first; layer <= last; layer++)
        if (shapes_differ(k, c, layer, why, size))
            return true;
    return false;
}

/* Whether c's embedding input differs from what the checkpoint's table fixes: its rows V,
   its learned positions (added where it has them, as the model adds them), and T within the
   context.  Described in why. */
static bool input_differs(const Checkpoint *k, const Config *c, char *why, size_t size)
{
    if (!k->table || c->input != INPUT_EMBEDDING)
        return false;
    if ((uint64_t)c->vocab != k->table->shape[0]) {
        snprintf(why, size,
                 "the checkpoint's embedding table %s fixes V = %llu (the settings say %d)",
                 k->table->name, (unsigned long long)k->table->shape[0], c->vocab);
        return true;
    }
    if ((c->positions == POSITIONS_LEARNED) != (k->positions != NULL)) {
        snprintf(why, size, "the checkpoint fixes the positions: %s (--positions %s)",
                 k->positions ? "it adds its learned ones" : "it has no learned ones",
                 k->positions ? "learned" : "none");
        return true;
    }
    if (k->context && c->tokens > k->context) {
        snprintf(why, size, "T = %d is past the model's context of %d positions (%s)", c->tokens,
                 k->context, k->context_source);
        return true;
    }
    return false;
}

static bool fits(void *context, const Config *c, char *why, size_t size)
{
    const Checkpoint *k = context;
    if (fixed_differ(k, c, 1, c->depth, why, size) || input_differs(k, c, why, size))
        return false;
    if (c->norm_gain_offset != k->config.norm_gain_offset) {
        snprintf(why, size,
                 "the checkpoint's norm gains were read as %d + w (--norm-gain-offset %d)",
                 k->config.norm_gain_offset, k->config.norm_gain_offset);
        return false;
    }
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (draws_only(s) && Setting_get(s, c) != Setting_get(s, &k->config)) {
            snprintf(why, size, "the weights are the checkpoint's, not drawn, so %s does not apply",
                     s->label ? s->label : s->name);
            return false;
        }
    }
    /* W^O Gaussian or orthogonal is one tensor, o_proj, drawn two ways: which way is not the
       checkpoint's to change (identity, no tensor, is a shape the loop above refuses). */
    if (c->output != k->config.output) {
        snprintf(why, size,
                 "the weights are the checkpoint's, not drawn, so W^O=%s (how W^O is drawn) does "
                 "not apply",
                 OUTPUT_NAMES.names[c->output]);
        return false;
    }
    return true;
}

static const LayerAffine *layer_affine(void *context, const Config *c, int layer)
{
    const Checkpoint *k = context;
    (void)c; /* fits(c): the settings read the same tensors, with the same gain offset */
    return layer >= 1 && layer <= k->config.depth && k->trained[layer - 1] ? &k->affine[layer - 1]
                                                                           : NULL;
}

/* The bytes of t that want's layout reads (the columns it takes of a fused tensor). */
static uint64_t bytes_read(const SafetensorsTensor *t, const WeightTensor *want)
{
    return WeightTensor_elements(want) * SafetensorsDtype_size(t->dtype);
}

static int fill_layer(void *context, const Config *c, int layer, unsigned parts,
                      const LayerWeights *w)
{
    Checkpoint *k = context;
    char why[8];
    if (layer < 1 || layer > k->config.depth || fixed_differ(k, c, layer, layer, why, sizeof why))
        return -1; /* settings the checkpoint fixes: refused before a run gets here */
    WeightTensor want[LAYER_TENSORS_MAX];
    int n = Weights_layer_tensors(c, &k->names, layer, want);
    for (int i = 0; i < n; i++)
        if ((want[i].part & parts) && want[i].layout != AFFINE) {
            /* By name: the settings may list the checkpoint's tensors in another order. */
            const SafetensorsTensor *t = Safetensors_find(k->tensors, want[i].name);
            if (!t)
                return -1; /* refused by fixed_differ above */
            fill_tensor(t, &want[i], w, c);
            Safetensors_release(k->tensors, t);
            __atomic_fetch_add(&k->bytes_read, bytes_read(t, &want[i]), __ATOMIC_RELAXED);
        }
    return 0;
}

/* What fill_layer reads and converts for `parts` of any layer (every layer's tensors have
   the same shapes and dtypes as the first's in a checkpoint that fits c), and the zeros it
   writes past G·d_h in W^K and W^V. */
static void declare_layer(void *context, const Config *c, unsigned parts, WorkList *out)
{
    const Checkpoint *k = context;
    WeightTensor want[LAYER_TENSORS_MAX];
    int n = Weights_layer_tensors(c, &k->names, 1, want);
    for (int i = 0; i < n; i++) {
        if (!(want[i].part & parts) || want[i].layout == AFFINE)
            continue;
        const SafetensorsTensor *t = Safetensors_find(k->tensors, want[i].name);
        double elements = (double)WeightTensor_elements(&want[i]);
        if (t)
            WorkList_add(out, WORK_LOAD, (double)bytes_read(t, &want[i]), elements, 0, 1);
        if (want[i].field == offsetof(LayerWeights, key) ||
            want[i].field == offsetof(LayerWeights, value))
            WorkList_add(out, WORK_PASSES, (double)Init_doubles(c, MATRIX_KEY), 0, 0, 1);
    }
}

/* WeightSource.embed: the table's rows for the ids (and the learned positions' row per
   position), converted from the mapping row by row, so that only T of a table's V rows are
   ever read. */
static int embed_rows(void *context, const Config *c, const double *ids, double *rows)
{
    const Checkpoint *k = context;
    uint64_t d = (uint64_t)c->width;
    double *position = malloc(sizeof(double) * d);
    if (!position)
        return -1;
    for (int i = 0; i < c->tokens; i++) {
        uint64_t id = (uint64_t)ids[i];
        double *row = rows + (size_t)i * d;
        if (ids[i] < 0 || id >= k->table->shape[0]) {
            free(position);
            return -1; /* the ids are checked against V before a run */
        }
        Safetensors_range_to_double(k->table, id * d, d, row);
        if (k->embedding_scale != 1)
            for (uint64_t j = 0; j < d; j++)
                row[j] *= k->embedding_scale;
        if (k->positions && c->positions == POSITIONS_LEARNED) {
            Safetensors_range_to_double(k->positions, (uint64_t)i * d, d, position);
            for (uint64_t j = 0; j < d; j++)
                row[j] += position[j];
        }
    }
    free(position);
    Safetensors_release(k->tensors, k->table);
    if (k->positions)
        Safetensors_release(k->tensors, k->positions);
    return 0;
}

/* The gain or bias `want` of layer (from 1) from t into the layer's LayerAffine, where any entry
   is not the absent one (a unit gain, a zero bias). */
static int read_affine(Checkpoint *k, int layer, const WeightTensor *want,
                       const SafetensorsTensor *t, char *err, size_t size)
{
    uint64_t n = want->columns ? want->columns : want->shape[0];
    double *all = malloc(sizeof(double) * (t->elements + 1)), *part = malloc(sizeof(double) * n);
    if (!all || !part) {
        free(all);
        free(part);
        snprintf(err, size, "'%s': out of memory", t->file);
        return -1;
    }
    Safetensors_to_double(t, all);
    bool differs = WeightTensor_affine_part(want, all, part);
    free(all);
    if (differs) {
        *WeightTensor_affine_slot(&k->affine[layer - 1], want) = part;
        k->trained[layer - 1] = true;
    } else {
        free(part);
    }
    return 0;
}

/* The tensor of the checkpoint that want names, with want's shape (NULL for an optional one
   left out); gains and biases read into the layer's LayerAffine.  A shape refused names the
   sizes it is made of and what set them (origins). */
static int find_tensor(Checkpoint *k, int layer, const WeightTensor *want,
                       const SettingOrigins *origins, const SafetensorsTensor **out, char *err,
                       size_t size)
{
    char expected[96], found[96];
    const SafetensorsTensor *t = Safetensors_find(k->tensors, want->name);
    *out = NULL;
    if (!t && want->optional)
        return 0;
    if (!t) {
        snprintf(err, size, "'%s': no tensor '%s' (shape %s), which this configuration needs",
                 Safetensors_path(k->tensors), want->name,
                 Weights_shape_text(want->rank, want->shape, expected, sizeof expected));
        return -1;
    }
    if (t->rank != want->rank ||
        memcmp(t->shape, want->shape, sizeof(uint64_t) * (size_t)t->rank)) {
        char sizes[4096];
        Weights_shape_sizes(&k->config, want, origins, sizes, sizeof sizes);
        snprintf(err, size,
                 "'%s': tensor '%s' has shape %s, expected %s for this configuration: %s", t->file,
                 t->name, Weights_shape_text(t->rank, t->shape, found, sizeof found),
                 Weights_shape_text(want->rank, want->shape, expected, sizeof expected), sizes);
        return -1;
    }
    *out = t;
    return want->layout == AFFINE ? read_affine(k, layer, want, t, err, size) : 0;
}

/* Tensors outside the block that come in numbers (a vision tower's, a layer's mixture of
   experts in every layer), said in one warning: how many, and the distinct groups they fall in
   (Weights_outside_block's: the prefixes, or the names after the layers'). */
enum { TALLY_GROUPS = 12 };
typedef struct {
    int count, groups;
    const char *group[TALLY_GROUPS];
    bool more; /* groups past TALLY_GROUPS, not listed */
} OutsideTally;

static void tally(OutsideTally *t, const char *group)
{
    t->count++;
    for (int i = 0; i < t->groups; i++)
        if (strcmp(t->group[i], group) == 0)
            return;
    if (t->groups < TALLY_GROUPS)
        t->group[t->groups++] = group;
    else
        t->more = true;
}

static void warn_tally(const Checkpoint *k, const OutsideTally *t, Outside where, FILE *warnings)
{
    if (!t->count || !warnings)
        return;
    char groups[(TALLY_GROUPS + 2) * (NAME_SIZE + 2)], layers[NAME_SIZE];
    int n = where == EXPERTS
                ? snprintf(groups, sizeof groups,
                           "%sN.: ", Weights_layers_start(&k->names, layers, sizeof layers))
                : 0;
    for (int i = 0; i < t->groups && (size_t)n < sizeof groups; i++)
        n += snprintf(groups + n, sizeof groups - (size_t)n, "%s%.*s", i ? ", " : "", NAME_SIZE,
                      t->group[i]);
    if (t->more && (size_t)n < sizeof groups)
        snprintf(groups + n, sizeof groups - (size_t)n, ", …");
    fprintf(warnings,
            "attnscope: warning: %s: %d tensor%s %s (%s) %s outside the block attnscope runs "
            "(%s), so %s not used\n",
            Safetensors_path(k->tensors), t->count, t->count == 1 ? "" : "s",
            where == EXPERTS ? "of the layers' mixture of experts" : "beside the text model",
            groups, t->count == 1 ? "is" : "are", Weights_outside_why(&k->names, where),
            t->count == 1 ? "it is" : "they are");
}

/* Every tensor of the checkpoint is one of c's, a mask buffer, or a tensor outside the block
   (named on `warnings`): anything else would be silently left out. */
static int check_nothing_else(const Checkpoint *k, const bool *used, const SettingOrigins *origins,
                              FILE *warnings, char *err, size_t size)
{
    OutsideTally beside = {0}, experts = {0};
    for (int i = 0; i < Safetensors_count(k->tensors); i++) {
        const SafetensorsTensor *t = Safetensors_at(k->tensors, i);
        if (used[i] || Weights_layer_buffer(&k->names, t->name))
            continue;
        const char *group;
        Outside where = Weights_outside_block(&k->names, &k->config, k->tensors, t->name, &group);
        if (where == BESIDE_BLOCK || where == EXPERTS) {
            tally(where == EXPERTS ? &experts : &beside, group);
            continue;
        }
        if (where != INSIDE) {
            if (warnings)
                fprintf(warnings,
                        "attnscope: warning: %s: tensor '%s' is outside the block attnscope runs "
                        "(%s), so it is not used\n",
                        t->file, t->name, Weights_outside_why(&k->names, where));
            continue;
        }
        Weights_not_a_weight(&k->names, &k->config, t, origins, err, size);
        return -1;
    }
    warn_tally(k, &beside, BESIDE_BLOCK, warnings);
    warn_tally(k, &experts, EXPERTS, warnings);
    return 0;
}

/* A (rows, d) table of the checkpoint called `name` (under the names' prefix), with at most
   max_rows rows; NULL where there is none, or with the reason in err (*status -1). */
static const SafetensorsTensor *find_rows(const Checkpoint *k, const char *name, double max_rows,
                                          int *status, char *err, size_t size)
{
    char full[NAME_SIZE], shape[96];
    snprintf(full, sizeof full, "%s%s", k->names.prefix, name);
    const SafetensorsTensor *t = Safetensors_find(k->tensors, full);
    if (!t || (t->rank == 2 && t->shape[1] == (uint64_t)k->config.width && t->shape[0] >= 1 &&
               t->shape[0] <= max_rows))
        return t;
    snprintf(err, size,
             "'%s': tensor '%s' has shape %s, expected (rows, d = %d) with 1 to %.0f rows", t->file,
             t->name, Weights_shape_text(t->rank, t->shape, shape, sizeof shape), k->config.width,
             max_rows);
    *status = -1;
    return NULL;
}

/* Refuses a tensor attnscope reads with a NaN or infinite value: a run would carry it into
   every measure after it (the SVDs' LAPACK refuses a NaN matrix), and no measure of such a
   model means anything.  Names the first one by its place in the file's layout. */
static int check_finite(const Checkpoint *k, const SafetensorsTensor *t, char *err, size_t size)
{
    double value = 0;
    uint64_t first = Safetensors_first_nonfinite(t, &value);
    Safetensors_release(k->tensors, t);
    if (first == t->elements)
        return 0;
    uint64_t index[SAFETENSORS_RANK_MAX];
    for (int i = t->rank - 1; i >= 0; i--) {
        index[i] = first % t->shape[i];
        first /= t->shape[i];
    }
    /* %g prints a NaN with its sign bit set as "-nan": a NaN has no sign worth naming. */
    char shown[32];
    snprintf(shown, sizeof shown, "%g", isnan(value) ? NAN : value);
    char place[160];
    if (t->rank == 2)
        snprintf(place, sizeof place, "row %llu, column %llu", (unsigned long long)index[0],
                 (unsigned long long)index[1]);
    else
        Weights_shape_text(t->rank, index, place, sizeof place);
    snprintf(err, size,
             "'%s': tensor '%s' (%s) holds %s at %s: every value must be finite (NaN and "
             "infinities are refused)",
             t->file, t->name, SafetensorsDtype_name(t->dtype), shown, place);
    return -1;
}

/* What the input's status and input.csv call the table: its tensors, and the family's scale
   where it has one ("model.embed_tokens.weight scaled by sqrt(2304) (gemma2)"). */
static void name_table(Checkpoint *k)
{
    int n = snprintf(k->table_names, sizeof k->table_names, "%s", k->table->name);
    if (k->embedding_scale != 1)
        n += snprintf(k->table_names + n, sizeof k->table_names - (size_t)n,
                      " scaled by sqrt(%d) (%s)", k->config.width, k->model_type);
    if (k->positions)
        snprintf(k->table_names + n, sizeof k->table_names - (size_t)n, " + %s",
                 k->positions->name);
}

/* The checkpoint's family (its directory's config.json's model_type, else --hf-config's)
   decides what its tensors' names cannot say, both or neither: the scale on the table's rows
   (Checkpoint.embedding_scale) and the norms' gain offset the gains are read with, where
   nothing chose c's.  A choice against the family is kept, and said: the run is then not the
   family's model. */
static void settle_family(Checkpoint *k, const Config *c, const SettingOrigins *origins,
                          FILE *warnings)
{
    const char *from = "its config.json";
    if (!k->model_type[0] && origins && origins->model_type && origins->model_type[0]) {
        snprintf(k->model_type, sizeof k->model_type, "%s", origins->model_type);
        from = "--hf-config's file";
    }
    k->embedding_scale =
        HfConfig_scales_embedding(k->model_type) ? sqrt((double)k->config.width) : 1;
    int offset;
    if (!HfConfig_gain_offset(k->model_type, &offset) || offset == c->norm_gain_offset)
        return;
    if (!origins || !origins->chosen || !origins->chosen(origins->context, "norm-gain-offset")) {
        k->config.norm_gain_offset = offset;
        return;
    }
    char origin[1200];
    Weights_origin(origins, "norm-gain-offset", origin, sizeof origin);
    if (warnings)
        fprintf(warnings,
                "attnscope: warning: --weights '%s': the checkpoint's family, %s (%s), stores its "
                "norms' gains for N(x)·(%d + w), but --norm-gain-offset %d (from %s) reads them as "
                "%d + w: the run is not %s's model\n",
                Safetensors_path(k->tensors), k->model_type, from, offset, c->norm_gain_offset,
                origin, c->norm_gain_offset, k->model_type);
}

/* The embedding table (Llama's model.embed_tokens, GPT-2's wte) and its learned positions
   (GPT-2's wpe, model.embed_positions under the Llama names), where the checkpoint has them:
   the embedding input's table (docs/weights.md).  The positions' rows bound the context. */
static int find_table(Checkpoint *k, bool *used, FILE *warnings, char *err, size_t size)
{
    const char *table = Weights_table_name(&k->names, false);
    int status = 0;
    if (!table)
        return 0; /* ViT's patch embedding maps pixels, not ids: Weights_outside_block */
    k->table = find_rows(k, table, Settings_find("vocab")->max, &status, err, size);
    k->positions = !status ? find_rows(k, Weights_table_name(&k->names, true), (double)INT32_MAX,
                                       &status, err, size)
                           : NULL;
    if (status || (!k->table && !k->positions))
        return status;
    if (!k->table) {
        snprintf(err, size,
                 "'%s': tensor '%s' (learned positions) without the embedding table '%s%s'",
                 k->positions->file, k->positions->name, k->names.prefix, table);
        return -1;
    }
    if (check_finite(k, k->table, err, size) ||
        (k->positions && check_finite(k, k->positions, err, size)))
        return -1;
    used[k->table - Safetensors_at(k->tensors, 0)] = true;
    name_table(k);
    if (k->positions) {
        used[k->positions - Safetensors_at(k->tensors, 0)] = true;
        if (!k->context || k->positions->shape[0] < (uint64_t)k->context) {
            k->context = (int)k->positions->shape[0];
            snprintf(k->context_source, sizeof k->context_source, "the rows of %s",
                     k->positions->name);
        }
    }
    if (warnings && k->config.input != INPUT_EMBEDDING)
        fprintf(warnings,
                "attnscope: warning: %s: the embedding table %s is read by the embedding input "
                "(--input embedding, or = on the screen), not by the orthonormal rows now chosen\n",
                k->table->file, k->table_names);
    return 0;
}

static int find_all(Checkpoint *k, const SettingOrigins *origins, FILE *warnings, char *err,
                    size_t size)
{
    bool *used = calloc((size_t)Safetensors_count(k->tensors) + 1, sizeof *used);
    if (!used) {
        snprintf(err, size, "'%s': out of memory", Safetensors_path(k->tensors));
        return -1;
    }
    int status = 0;
    for (int layer = 1; layer <= k->config.depth && status == 0; layer++) {
        WeightTensor want[LAYER_TENSORS_MAX];
        int n = Weights_layer_tensors(&k->config, &k->names, layer, want);
        for (int i = 0; i < n && status == 0; i++) {
            const SafetensorsTensor *t; /* NULL: an optional one left out */
            status = find_tensor(k, layer, &want[i], origins, &t, err, size);
            if (status || !t || used[t - Safetensors_at(k->tensors, 0)])
                continue; /* a fused tensor's later matrix: scanned with its first */
            used[t - Safetensors_at(k->tensors, 0)] = true;
            status = check_finite(k, t, err, size);
        }
    }
    if (status == 0)
        status = find_table(k, used, warnings, err, size);
    if (status == 0)
        status = check_nothing_else(k, used, origins, warnings, err, size);
    free(used);
    return status;
}

/* The names the checkpoint's tensors have (Weights_names_of), which must describe the block. */
static int detect_names(Checkpoint *k, char *err, size_t size)
{
    k->names = Weights_names_of(k->tensors);
    char why[256];
    if (!Weights_names_fit(&k->names, &k->config, why, sizeof why)) {
        snprintf(err, size, "'%s': %s", Safetensors_path(k->tensors), why);
        return -1;
    }
    return 0;
}

Checkpoint *Checkpoint_open(const char *path, const Config *c, const SettingOrigins *origins,
                            FILE *warnings, char *err, size_t size)
{
    Checkpoint *k = calloc(1, sizeof *k);
    if (!k || !(k->affine = calloc((size_t)c->depth, sizeof *k->affine)) ||
        !(k->trained = calloc((size_t)c->depth, sizeof *k->trained))) {
        Checkpoint_close(k);
        snprintf(err, size, "'%s': out of memory", path);
        return NULL;
    }
    k->config = *c;
    k->embedding_scale = 1;
    k->names = LLAMA_NAMES; /* until its tensors say (Checkpoint_close walks the layers by them) */
    CheckpointConfig described = {.context = 0};
    if (Weights_read_config_json(path, c, origins, &described, err, size)) {
        Checkpoint_close(k);
        return NULL;
    }
    snprintf(k->model_type, sizeof k->model_type, "%s", described.model_type);
    k->context = described.context;
    snprintf(k->context_source, sizeof k->context_source, "%s", described.context_source);
    k->tensors = Safetensors_open(path, err, size);
    if (k->tensors && detect_names(k, err, size)) {
        Checkpoint_close(k);
        return NULL;
    }
    if (k->tensors)
        settle_family(k, c, origins, warnings);
    if (k->tensors)
        k->source = (WeightSource){.fill = fill_layer,
                                   .fits = fits,
                                   .affine = layer_affine,
                                   .declare = declare_layer,
                                   .name = Safetensors_path(k->tensors),
                                   .context = k};
    if (!k->tensors || find_all(k, origins, warnings, err, size)) {
        Checkpoint_close(k);
        return NULL;
    }
    if (k->table) {
        k->source.embed = embed_rows;
        k->source.table = k->table_names;
    }
    return k;
}

int Checkpoint_norm_gain_offset(const Checkpoint *k)
{
    return k->config.norm_gain_offset;
}

Names Checkpoint_names(const Checkpoint *k)
{
    return k->names;
}

const char *Checkpoint_scaled_family(const Checkpoint *k)
{
    return k->embedding_scale != 1 ? k->model_type : NULL;
}

const SafetensorsTensor *Checkpoint_table(const Checkpoint *k, bool positions)
{
    return positions ? k->positions : k->table;
}

void Checkpoint_table_row(const Checkpoint *k, bool positions, uint64_t row, double *out)
{
    const SafetensorsTensor *t = Checkpoint_table(k, positions);
    Safetensors_range_to_double(t, row * t->shape[1], t->shape[1], out);
    if (row + 1 == t->shape[0]) /* once, after the last row: a table may be GBs */
        Safetensors_release(k->tensors, t);
}

int Checkpoint_context(const Checkpoint *k)
{
    return k->context;
}

const WeightSource *Checkpoint_source(const Checkpoint *k)
{
    return &k->source;
}

int Checkpoint_vocab(const Checkpoint *k)
{
    return k->table ? (int)k->table->shape[0] : 0;
}

bool Checkpoint_has_positions(const Checkpoint *k)
{
    return k->positions != NULL;
}

uint64_t Checkpoint_bytes_read(const Checkpoint *k)
{
    return __atomic_load_n(&k->bytes_read, __ATOMIC_RELAXED);
}

const char *Checkpoint_path(const Checkpoint *k)
{
    return Safetensors_path(k->tensors);
}

int Checkpoint_take_identity(Checkpoint *k, char *err, size_t size)
{
    k->identity.path = Checkpoint_path(k);
    if (Safetensors_content_hash(k->tensors, k->identity.content_hash, &k->identity.bytes) == 0)
        return 0;
    snprintf(err, size, "'%s': out of memory hashing its contents", Checkpoint_path(k));
    return -1;
}

const CheckpointIdentity *Checkpoint_identity(const Checkpoint *k)
{
    return &k->identity;
}

int Checkpoint_unchanged(const Checkpoint *k, char *err, size_t size)
{
    return Safetensors_unchanged(k->tensors, err, size);
}

void Checkpoint_close(Checkpoint *k)
{
    if (!k)
        return;
    for (int layer = 1; k->affine && layer <= k->config.depth; layer++) {
        WeightTensor list[LAYER_TENSORS_MAX];
        int n = Weights_layer_tensors(&k->config, &k->names, layer, list);
        for (int i = 0; i < n; i++)
            if (list[i].layout == AFFINE) {
                double **slot = WeightTensor_affine_slot(&k->affine[layer - 1], &list[i]);
                free(*slot);
                *slot = NULL;
            }
    }
    Safetensors_close(k->tensors);
    free(k->affine);
    free(k->trained);
    free(k);
}
