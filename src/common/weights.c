/* A configuration's weights as a checkpoint (weights.h): the tensors' names and shapes, the
 * checkpoint read back as the layer step's weight source, and the export. */
#include "weights.h"

#include "attnscope/attention.h"
#include "attnscope/init.h"
#include "attnscope/random.h"
#include "json.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How a tensor's row-major elements lie in the layer's column-major buffer.  nn.Linear's
   (out, in) row-major is the (in × out) column-major matrix X·W multiplies by, so W^Q, W^K,
   W^V, W^O and the MLP's down projection are copied as they are; the MLP's input projections
   are kept transposed (N×d, init.h), so their (N, d) rows become columns.  A unit gain has
   no buffer: it must be 1 (the block's norms have no gains to set). */
typedef enum { AS_STORED, TRANSPOSED, UNIT_GAIN } Layout;

enum { LAYER_TENSORS_MAX = 9, NAME_SIZE = 96, NO_FIELD = (size_t)-1 };

typedef struct {
    char name[NAME_SIZE];
    int rank;
    uint64_t shape[3];
    unsigned part; /* the LayerDraw bit it belongs to */
    size_t field;  /* offsetof(LayerWeights, ...), NO_FIELD for a unit gain */
    Layout layout;
} WeightTensor;

static void add(WeightTensor *list, int *n, int layer, const char *suffix, uint64_t rows,
                uint64_t columns, unsigned part, size_t field, Layout layout)
{
    WeightTensor *t = &list[(*n)++];
    snprintf(t->name, sizeof t->name, "model.layers.%d.%s", layer - 1, suffix);
    t->rank = columns ? 2 : 1;
    t->shape[0] = rows;
    t->shape[1] = columns;
    t->shape[2] = 0;
    t->part = part;
    t->field = field;
    t->layout = layout;
}

/* The tensors of layer `layer` (from 1) of c, in the order an export writes them. */
static int layer_tensors(const Config *c, int layer, WeightTensor out[LAYER_TENSORS_MAX])
{
    int n = 0;
    uint64_t d = (uint64_t)c->width, kv = (uint64_t)Layer_kv_width(c);
    uint64_t dh = (uint64_t)Config_head_width(c), hidden = (uint64_t)Config_mlp_hidden(c);
    if (Attention_has_query_key(c->attention)) {
        add(out, &n, layer, "self_attn.q_proj.weight", d, d, LAYER_DRAW_ATTENTION,
            offsetof(LayerWeights, query), AS_STORED);
        add(out, &n, layer, "self_attn.k_proj.weight", kv, d, LAYER_DRAW_ATTENTION,
            offsetof(LayerWeights, key), AS_STORED);
    }
    if (Attention_has_query_key(c->attention) && c->qk_norm != QK_NORM_NONE) {
        bool full = c->qk_norm == QK_NORM_FULL;
        add(out, &n, layer, "self_attn.q_norm.weight", full ? d : dh, 0, LAYER_DRAW_ATTENTION,
            NO_FIELD, UNIT_GAIN);
        add(out, &n, layer, "self_attn.k_norm.weight", full ? kv : dh, 0, LAYER_DRAW_ATTENTION,
            NO_FIELD, UNIT_GAIN);
    }
    if (c->attention == ATTENTION_MARKOV) {
        WeightTensor *t = &out[n];
        add(out, &n, layer, "self_attn.markov_logits", (uint64_t)c->heads, 0, LAYER_DRAW_ATTENTION,
            offsetof(LayerWeights, markov), AS_STORED);
        t->rank = 3;
        t->shape[1] = t->shape[2] = (uint64_t)c->tokens;
    }
    add(out, &n, layer, "self_attn.v_proj.weight", kv, d, LAYER_DRAW_VALUE,
        offsetof(LayerWeights, value), AS_STORED);
    if (c->output != OUTPUT_IDENTITY)
        add(out, &n, layer, "self_attn.o_proj.weight", d, d, LAYER_DRAW_OUTPUT,
            offsetof(LayerWeights, output), AS_STORED);
    bool gated = Config_mlp_gated(c);
    if (c->mlp != MLP_NONE)
        add(out, &n, layer, gated ? "mlp.gate_proj.weight" : "mlp.up_proj.weight", hidden, d,
            LAYER_DRAW_MLP, offsetof(LayerWeights, mlp_in), TRANSPOSED);
    if (gated)
        add(out, &n, layer, "mlp.up_proj.weight", hidden, d, LAYER_DRAW_MLP,
            offsetof(LayerWeights, mlp_up), TRANSPOSED);
    if (c->mlp != MLP_NONE)
        add(out, &n, layer, "mlp.down_proj.weight", d, hidden, LAYER_DRAW_MLP,
            offsetof(LayerWeights, mlp_out), AS_STORED);
    return n;
}

static uint64_t elements(const WeightTensor *t)
{
    uint64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

static double *buffer_of(const LayerWeights *w, const WeightTensor *t)
{
    double *const *field = (double *const *)(const void *)((const char *)w + t->field);
    return *field;
}

/* "[a, b]" into buf. */
static const char *shape_text(int rank, const uint64_t *shape, char *buf, size_t size)
{
    int n = snprintf(buf, size, "[");
    for (int i = 0; i < rank && n > 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "%s%llu", i ? ", " : "",
                      (unsigned long long)shape[i]);
    if (n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "]");
    return buf;
}

struct Checkpoint {
    Safetensors *tensors;
    Config config; /* as opened: what the shapes were checked against */
    /* Per layer (index layer − 1), the tensors of layer_tensors' list, in its order. */
    const SafetensorsTensor *(*found)[LAYER_TENSORS_MAX];
    WeightSource source;
};

/* The elements of t, as its layout puts them in w's buffer. */
static void fill_tensor(const SafetensorsTensor *t, const WeightTensor *want, const LayerWeights *w,
                        const Config *c)
{
    double *out = buffer_of(w, want);
    if (want->field == offsetof(LayerWeights, key) || want->field == offsetof(LayerWeights, value))
        memset(out, 0, sizeof(double) * (size_t)c->width * c->width); /* columns past G·d_h */
    if (want->layout == AS_STORED) {
        Safetensors_to_double(t, out);
        return;
    }
    Safetensors_to_double_column_major(t, out);
}

/* The first tensor of c whose name or shape differs from the checkpoint's, described in why;
   false where none does. */
static bool shapes_differ(const Checkpoint *k, const Config *c, int layer, char *why, size_t size)
{
    WeightTensor want[LAYER_TENSORS_MAX], opened[LAYER_TENSORS_MAX];
    int n = layer_tensors(c, layer, want), m = layer_tensors(&k->config, layer, opened);
    for (int i = 0; i < n || i < m; i++) {
        if (i < n && i < m && strcmp(want[i].name, opened[i].name) == 0 &&
            want[i].rank == opened[i].rank &&
            memcmp(want[i].shape, opened[i].shape, sizeof want[i].shape) == 0)
            continue;
        char need[64], has[64];
        if (i < n)
            snprintf(why, size, "the checkpoint's tensors fix it (the settings need %s %s, %s)",
                     want[i].name, shape_text(want[i].rank, want[i].shape, need, sizeof need),
                     i < m && strcmp(want[i].name, opened[i].name) == 0
                         ? shape_text(opened[i].rank, opened[i].shape, has, sizeof has)
                         : "not in it");
        else
            snprintf(why, size, "the checkpoint's tensors fix it (%s would be left out)",
                     opened[i].name);
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

static bool fits(void *context, const Config *c, char *why, size_t size)
{
    const Checkpoint *k = context;
    if (c->depth != k->config.depth) {
        snprintf(why, size, "the checkpoint's tensors fix it (it holds L = %d layers)",
                 k->config.depth);
        return false;
    }
    for (int layer = 1; layer <= c->depth; layer++)
        if (shapes_differ(k, c, layer, why, size))
            return false;
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (draws_only(s) && Setting_get(s, c) != Setting_get(s, &k->config)) {
            snprintf(why, size, "the weights are the checkpoint's, not drawn, so %s does not apply",
                     s->label ? s->label : s->name);
            return false;
        }
    }
    return true;
}

static int fill_layer(void *context, const Config *c, int layer, unsigned parts,
                      const LayerWeights *w)
{
    const Checkpoint *k = context;
    char why[8];
    if (layer < 1 || layer > k->config.depth || c->depth != k->config.depth ||
        shapes_differ(k, c, layer, why, sizeof why))
        return -1; /* settings that change the shapes: refused before a run gets here */
    WeightTensor want[LAYER_TENSORS_MAX];
    int n = layer_tensors(c, layer, want);
    for (int i = 0; i < n; i++)
        if ((want[i].part & parts) && want[i].layout != UNIT_GAIN)
            fill_tensor(k->found[layer - 1][i], &want[i], w, c);
    return 0;
}

/* The tensor of the checkpoint that want names, with want's shape; unit gains all 1. */
static int find_tensor(const Checkpoint *k, const WeightTensor *want, const SafetensorsTensor **out,
                       char *err, size_t size)
{
    char expected[96], found[96];
    const SafetensorsTensor *t = Safetensors_find(k->tensors, want->name);
    if (!t) {
        snprintf(err, size, "%s: no tensor '%s' (shape %s), which this configuration needs",
                 Safetensors_path(k->tensors), want->name,
                 shape_text(want->rank, want->shape, expected, sizeof expected));
        return -1;
    }
    if (t->rank != want->rank ||
        memcmp(t->shape, want->shape, sizeof(uint64_t) * (size_t)t->rank)) {
        snprintf(err, size, "%s: tensor '%s' has shape %s, expected %s for this configuration",
                 t->file, t->name, shape_text(t->rank, t->shape, found, sizeof found),
                 shape_text(want->rank, want->shape, expected, sizeof expected));
        return -1;
    }
    double gain[4096];
    if (want->layout == UNIT_GAIN && want->shape[0] <= 4096) {
        Safetensors_to_double(t, gain);
        for (uint64_t i = 0; i < want->shape[0]; i++)
            if (gain[i] != 1.0) {
                snprintf(err, size,
                         "%s: tensor '%s' entry %llu is %.17g: attnscope's norms have unit "
                         "gains, so it reads only gains of 1",
                         t->file, t->name, (unsigned long long)i, gain[i]);
                return -1;
            }
    }
    *out = t;
    return 0;
}

/* Every tensor of the checkpoint is one of c's: anything else would be silently left out. */
static int check_nothing_else(const Checkpoint *k, const bool *used, char *err, size_t size)
{
    for (int i = 0; i < Safetensors_count(k->tensors); i++)
        if (!used[i]) {
            const SafetensorsTensor *t = Safetensors_at(k->tensors, i);
            snprintf(err, size,
                     "%s: tensor '%s' is not a weight of this configuration (d=%d, H=%d, L=%d, "
                     "attention, output, MLP and QK-norm as set; docs/weights.md lists the "
                     "names)",
                     t->file, t->name, k->config.width, k->config.heads, k->config.depth);
            return -1;
        }
    return 0;
}

static int find_all(Checkpoint *k, FILE *warnings, char *err, size_t size)
{
    bool *used = calloc((size_t)Safetensors_count(k->tensors) + 1, sizeof *used);
    if (!used) {
        snprintf(err, size, "out of memory");
        return -1;
    }
    int status = 0;
    for (int layer = 1; layer <= k->config.depth && status == 0; layer++) {
        WeightTensor want[LAYER_TENSORS_MAX];
        int n = layer_tensors(&k->config, layer, want);
        for (int i = 0; i < n && status == 0; i++) {
            const SafetensorsTensor **t = &k->found[layer - 1][i];
            status = find_tensor(k, &want[i], t, err, size);
            if (status)
                break;
            used[*t - Safetensors_at(k->tensors, 0)] = true;
            uint64_t bad = Safetensors_count_nonfinite(*t);
            if (bad && warnings)
                fprintf(warnings,
                        "attnscope: warning: %s: tensor '%s' holds %llu NaN or infinite "
                        "entries\n",
                        (*t)->file, (*t)->name, (unsigned long long)bad);
        }
    }
    if (status == 0)
        status = check_nothing_else(k, used, err, size);
    free(used);
    return status;
}

Checkpoint *Checkpoint_open(const char *path, const Config *c, FILE *warnings, char *err,
                            size_t size)
{
    Checkpoint *k = calloc(1, sizeof *k);
    if (!k || !(k->found = calloc((size_t)c->depth, sizeof *k->found))) {
        free(k);
        snprintf(err, size, "out of memory");
        return NULL;
    }
    k->config = *c;
    k->tensors = Safetensors_open(path, err, size);
    if (k->tensors)
        k->source = (WeightSource){
            .fill = fill_layer, .fits = fits, .name = Safetensors_path(k->tensors), .context = k};
    if (!k->tensors || find_all(k, warnings, err, size)) {
        Checkpoint_close(k);
        return NULL;
    }
    return k;
}

const WeightSource *Checkpoint_source(const Checkpoint *k)
{
    return &k->source;
}

const char *Checkpoint_path(const Checkpoint *k)
{
    return Safetensors_path(k->tensors);
}

void Checkpoint_close(Checkpoint *k)
{
    if (!k)
        return;
    Safetensors_close(k->tensors);
    free(k->found);
    free(k);
}

/* The header: every layer's tensors in order, back to back, then the metadata; padded with
   spaces to a multiple of 8 bytes, as the reference writer does, so the data is aligned. */
static void export_header(const Config *c, SafetensorsDtype dtype, Text *t)
{
    uint64_t at = 0;
    Text_printf(t, "{\"__metadata__\":{\"format\":\"pt\",\"writer\":\"attnscope %s\"}",
                ATTNSCOPE_VERSION);
    for (int layer = 1; layer <= c->depth; layer++) {
        WeightTensor list[LAYER_TENSORS_MAX];
        int n = layer_tensors(c, layer, list);
        for (int i = 0; i < n; i++) {
            char shape[96];
            uint64_t bytes = elements(&list[i]) * SafetensorsDtype_size(dtype);
            Text_printf(t, ",\"%s\":{\"dtype\":\"%s\",\"shape\":%s,\"data_offsets\":[%llu,%llu]}",
                        list[i].name, SafetensorsDtype_name(dtype),
                        shape_text(list[i].rank, list[i].shape, shape, sizeof shape),
                        (unsigned long long)at, (unsigned long long)(at + bytes));
            at += bytes;
        }
    }
    Text_printf(t, "}");
    while (t->length % 8)
        Text_printf(t, " ");
}

/* Element i of the tensor in its row-major order, from the layer's buffer. */
static double tensor_element(const LayerWeights *w, const WeightTensor *t, uint64_t i)
{
    if (t->layout == UNIT_GAIN)
        return 1.0;
    const double *buffer = buffer_of(w, t);
    if (t->layout == AS_STORED)
        return buffer[i];
    uint64_t columns = t->shape[1], r = i / columns, column = i % columns;
    return buffer[r + column * t->shape[0]];
}

static int write_tensor(FILE *f, const LayerWeights *w, const WeightTensor *t,
                        SafetensorsDtype dtype)
{
    unsigned char chunk[1 << 16];
    size_t unit = SafetensorsDtype_size(dtype), used = 0;
    uint64_t n = elements(t);
    for (uint64_t i = 0; i < n; i++) {
        double x = tensor_element(w, t, i);
        uint64_t bits;
        if (dtype == SAFETENSORS_F64)
            memcpy(&bits, &x, sizeof bits);
        else
            bits = dtype == SAFETENSORS_F32 ? Safetensors_double_to_f32(x)
                                            : Safetensors_double_to_bf16(x);
        for (size_t b = 0; b < unit; b++)
            chunk[used++] = (unsigned char)(bits >> (8 * b));
        if (used == sizeof chunk || i + 1 == n) {
            if (fwrite(chunk, 1, used, f) != used)
                return -1;
            used = 0;
        }
    }
    return 0;
}

/* The buffers of one layer's weights, as the run's workspace holds them. */
typedef struct {
    LayerWeights w;
    double *scratch;
    RandomStream *random;
    Linalg *la;
} Drawing;

static void drawing_free(Drawing *d)
{
    double **all[] = {&d->w.query,   &d->w.key,    &d->w.value,  &d->w.output, &d->w.mlp_in,
                      &d->w.mlp_out, &d->w.mlp_up, &d->w.markov, &d->scratch};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(*all[i]);
    RandomStream_free(d->random);
    Linalg_free(d->la);
}

static int drawing_new(const Config *c, Drawing *d)
{
    size_t dd = (size_t)c->width * c->width, nd = (size_t)Config_mlp_hidden(c) * c->width;
    size_t markov = (size_t)c->tokens * c->tokens * c->heads;
    memset(d, 0, sizeof *d);
    d->w.query = calloc(dd, sizeof(double));
    d->w.key = calloc(dd, sizeof(double));
    d->w.value = calloc(dd, sizeof(double));
    d->w.output = calloc(dd, sizeof(double));
    d->w.mlp_in = calloc(nd + 1, sizeof(double));
    d->w.mlp_out = calloc(nd + 1, sizeof(double));
    d->w.mlp_up = calloc(nd + 1, sizeof(double));
    d->w.markov = calloc(c->attention == ATTENTION_MARKOV ? markov : 1, sizeof(double));
    d->scratch = calloc(Init_scratch_doubles(c) + 1, sizeof(double));
    d->random = RandomStream_new();
    d->la = Linalg_new();
    bool ok = d->w.query && d->w.key && d->w.value && d->w.output && d->w.mlp_in && d->w.mlp_out &&
              d->w.mlp_up && d->w.markov && d->scratch && d->random && d->la;
    if (!ok)
        drawing_free(d);
    return ok ? 0 : -1;
}

/* model.safetensors into f: the length, the header, then layer by layer, drawn and written. */
static int write_model(FILE *f, const Config *c, SafetensorsDtype dtype, char *err, size_t size)
{
    Text header = {0};
    export_header(c, dtype, &header);
    Drawing d;
    if (header.failed || drawing_new(c, &d)) {
        Text_free(&header);
        snprintf(err, size, "out of memory");
        return -1;
    }
    unsigned char length[8];
    for (int i = 0; i < 8; i++)
        length[i] = (unsigned char)((uint64_t)header.length >> (8 * i));
    int status =
        fwrite(length, 1, 8, f) == 8 && fwrite(header.data, 1, header.length, f) == header.length
            ? 0
            : -1;
    Text_free(&header);
    for (int layer = 1; layer <= c->depth && status == 0; layer++) {
        if (Layer_draw(d.random, d.la, c, c->seed, layer, LAYER_DRAW_ALL, &d.w, d.scratch)) {
            snprintf(err, size, "drawing the weights of layer %d failed", layer);
            status = -2;
            break;
        }
        WeightTensor list[LAYER_TENSORS_MAX];
        int n = layer_tensors(c, layer, list);
        for (int i = 0; i < n && status == 0; i++)
            status = write_tensor(f, &d.w, &list[i], dtype);
    }
    drawing_free(&d);
    return status;
}

/* config.json: Hugging Face's names for what they describe, then every attnscope setting,
   with which the weights were drawn. */
static void config_json(const Config *c, SafetensorsDtype dtype, Text *t)
{
    static const char *const ACTIVATIONS[] = {[MLP_RELU] = "relu",
                                              [MLP_GELU] = "gelu",
                                              [MLP_TANH] = "tanh",
                                              [MLP_SWIGLU] = "silu",
                                              [MLP_GEGLU] = "gelu_pytorch_tanh"};
    static const char *const DTYPES[] = {[SAFETENSORS_F64] = "float64",
                                         [SAFETENSORS_F32] = "float32",
                                         [SAFETENSORS_BF16] = "bfloat16"};
    Text_printf(t,
                "{\n  \"hidden_size\": %d,\n  \"num_attention_heads\": %d,\n"
                "  \"num_key_value_heads\": %d,\n  \"head_dim\": %d,\n"
                "  \"num_hidden_layers\": %d,\n  \"max_position_embeddings\": %d,\n",
                c->width, c->heads, Config_kv_heads(c), Config_head_width(c), c->depth, c->tokens);
    if (c->mlp != MLP_NONE)
        Text_printf(t, "  \"intermediate_size\": %d,\n  \"hidden_act\": \"%s\",\n",
                    Config_mlp_hidden(c), ACTIVATIONS[c->mlp]);
    if (c->rope != ROPE_NONE) {
        Text_printf(t, "  \"rope_theta\": ");
        Json_number(t, c->rope_theta);
        Text_printf(t, ",\n");
    }
    Text_printf(t, "  \"rms_norm_eps\": ");
    Json_number(t, c->ln_eps);
    Text_printf(t, ",\n  \"torch_dtype\": \"%s\",\n  \"attnscope_version\": \"%s\",\n",
                DTYPES[dtype], ATTNSCOPE_VERSION);
    Text_printf(t, "  \"attnscope\": {");
    Json_config_members(t, c);
    Text_printf(t, "}\n}\n");
}

/* A new file beside its final name (.NAME.PID.tmp in dir), O_EXCL: 0666 less the umask. */
static FILE *staged_file(const char *dir, const char *name, char *path, size_t path_size)
{
    snprintf(path, path_size, "%s/.%s.%ld.tmp", dir, name, (long)getpid());
    unlink(path); /* a killed export of an earlier process with our pid */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f && fd >= 0)
        close(fd);
    return f;
}

/* Closes f after fsync: 0, or -1 with errno. */
static int finish_file(FILE *f)
{
    int failed = ferror(f) != 0 || fflush(f) != 0 || fsync(fileno(f)) != 0;
    int reason = errno ? errno : EIO;
    failed |= fclose(f) != 0;
    if (failed)
        errno = reason;
    return failed ? -1 : 0;
}

static int make_directory(const char *dir, char *err, size_t size)
{
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        snprintf(err, size, "it exists and is not a directory");
        return -1;
    }
    if (stat(dir, &st) != 0 && mkdir(dir, 0777) != 0) {
        snprintf(err, size, "cannot create the directory: %s", strerror(errno));
        return -1;
    }
    return 0;
}

long long Weights_export(const Config *c, const char *dir, SafetensorsDtype dtype, char *err,
                         size_t size)
{
    if (make_directory(dir, err, size))
        return -1;
    char model[4200], config[4200], final_model[4200], final_config[4200];
    snprintf(final_model, sizeof final_model, "%s/model.safetensors", dir);
    snprintf(final_config, sizeof final_config, "%s/config.json", dir);
    FILE *f = staged_file(dir, "model.safetensors", model, sizeof model);
    FILE *g = f ? staged_file(dir, "config.json", config, sizeof config) : NULL;
    if (!f || !g) {
        snprintf(err, size, "cannot write into the directory: %s", strerror(errno));
        if (f) {
            fclose(f);
            unlink(model);
        }
        return -1;
    }
    int status = write_model(f, c, dtype, err, size);
    long long bytes = status == 0 ? (long long)ftello(f) : -1;
    Text text = {0};
    config_json(c, dtype, &text);
    if (fwrite(text.data, 1, text.length, g) != text.length || text.failed)
        status = status ? status : -1;
    Text_free(&text);
    int reason = errno;
    if ((finish_file(f) | finish_file(g)) && status == 0) {
        status = -1;
        reason = errno;
    }
    if (status == -1)
        snprintf(err, size, "writing failed: %s", strerror(reason ? reason : EIO));
    if (status == 0 && (rename(model, final_model) != 0 || rename(config, final_config) != 0)) {
        snprintf(err, size, "cannot put the files in place: %s", strerror(errno));
        status = -1;
    }
    unlink(model);
    unlink(config);
    return status == 0 ? bytes : -1;
}
