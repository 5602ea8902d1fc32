/* The export of a configuration's weights (weights.h): model.safetensors drawn layer by layer
 * and config.json, each written beside its name and renamed into place. */
#include "weights.h"

#include "attnscope/init.h"
#include "attnscope/random.h"
#include "json.h"
#include "staging.h"
#include "weights_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The names the export writes: Llama's, or a checkpoint's own where its family's model loads
   no other (Weights_export_names). */
static Names export_names(const Checkpoint *checkpoint)
{
    if (!checkpoint)
        return LLAMA_NAMES;
    Names read = Checkpoint_names(checkpoint);
    return Weights_export_names(&read);
}

/* The tensors the export writes of layer `layer` under `names`: the configuration's, without
   the optional biases that the weights do not have (drawn ones have none; a checkpoint's are
   Layer_affine's), and the values of each gain and bias (NULL: every entry its absent value)
   in affine_of. */
static int export_tensors(const Config *c, const Names *names, int layer,
                          WeightTensor list[LAYER_TENSORS_MAX],
                          const double *affine_of[LAYER_TENSORS_MAX])
{
    WeightTensor all[LAYER_TENSORS_MAX];
    int n = Weights_layer_tensors(c, names, layer, all), kept = 0;
    const LayerAffine *affine = Layer_affine(c, layer);
    for (int i = 0; i < n; i++) {
        const double *values =
            all[i].layout == AFFINE ? WeightTensor_affine_values(affine, &all[i]) : NULL;
        if (all[i].optional && !values)
            continue;
        affine_of[kept] = values;
        list[kept++] = all[i];
    }
    return kept;
}

/* One tensor's entry in the header, its data at *at (moved past it). */
static void header_entry(Text *t, const char *name, int rank, const uint64_t *shape,
                         SafetensorsDtype dtype, uint64_t *at)
{
    char text[96];
    uint64_t elements = 1;
    for (int i = 0; i < rank; i++)
        elements *= shape[i];
    uint64_t bytes = elements * SafetensorsDtype_size(dtype);
    Text_printf(t, ",\"%s\":{\"dtype\":\"%s\",\"shape\":%s,\"data_offsets\":[%llu,%llu]}", name,
                SafetensorsDtype_name(dtype), Weights_shape_text(rank, shape, text, sizeof text),
                (unsigned long long)*at, (unsigned long long)(*at + bytes));
    *at += bytes;
}

/* The header: every layer's tensors in order, back to back, then the read checkpoint's table
   and positions, then the metadata; padded with spaces to a multiple of 8 bytes, as the
   reference writer does, so the data is aligned. */
static void export_header(const Config *c, const Names *names, const Checkpoint *checkpoint,
                          SafetensorsDtype dtype, Text *t)
{
    uint64_t at = 0;
    Text_printf(t, "{\"__metadata__\":{\"format\":\"pt\",\"writer\":\"attnscope %s\"}",
                ATTNSCOPE_VERSION);
    for (int layer = 1; layer <= c->depth; layer++) {
        WeightTensor list[LAYER_TENSORS_MAX];
        const double *affine_of[LAYER_TENSORS_MAX];
        int n = export_tensors(c, names, layer, list, affine_of);
        for (int i = 0; i < n; i++)
            if (!WeightTensor_continues(&list[i])) /* a fused tensor: whole, at its first part */
                header_entry(t, list[i].name, list[i].rank, list[i].shape, dtype, &at);
    }
    for (int positions = 0; positions < 2; positions++) {
        const SafetensorsTensor *table =
            checkpoint ? Checkpoint_table(checkpoint, positions) : NULL;
        if (table)
            header_entry(t, Weights_table_name(names, positions), table->rank, table->shape, dtype,
                         &at);
    }
    Text_printf(t, "}");
    while (t->length % 8)
        Text_printf(t, " ");
}

/* Element i of the tensor in its row-major order (a fused tensor's part: of its own rows or
   entries), from the layer's buffer or (a gain, a bias) its values, NULL where absent; a part of
   a matrix fused by columns is written by write_columns. */
static double tensor_element(const LayerWeights *w, const WeightTensor *t, const double *affine,
                             uint64_t i)
{
    if (t->layout == AFFINE)
        return affine ? affine[i] : t->absent;
    const double *buffer = WeightTensor_buffer(w, t);
    if (t->layout == AS_STORED)
        return buffer[i];
    uint64_t columns = t->shape[1], r = i / columns, column = i % columns;
    return buffer[r + column * (t->rows ? t->rows : t->shape[0])];
}

/* Values encoded in dtype (little-endian) and written in chunks. */
typedef struct {
    FILE *f;
    SafetensorsDtype dtype;
    size_t used;
    unsigned char chunk[1 << 16];
} Encoder;

static int encoder_flush(Encoder *e)
{
    size_t used = e->used;
    e->used = 0;
    return fwrite(e->chunk, 1, used, e->f) == used ? 0 : -1;
}

static int encoder_put(Encoder *e, double x)
{
    uint64_t bits;
    if (e->dtype == SAFETENSORS_F64)
        memcpy(&bits, &x, sizeof bits);
    else
        bits = e->dtype == SAFETENSORS_F32 ? Safetensors_double_to_f32(x)
                                           : Safetensors_double_to_bf16(x);
    size_t unit = SafetensorsDtype_size(e->dtype);
    if (e->used + unit > sizeof e->chunk && encoder_flush(e))
        return -1;
    for (size_t b = 0; b < unit; b++)
        e->chunk[e->used++] = (unsigned char)(bits >> (8 * b));
    return 0;
}

static int write_tensor(Encoder *e, const LayerWeights *w, const WeightTensor *t,
                        const double *affine)
{
    uint64_t n = t->layout == AFFINE && t->columns ? t->columns : WeightTensor_elements(t);
    for (uint64_t i = 0; i < n; i++)
        if (encoder_put(e, tensor_element(w, t, affine, i)))
            return -1;
    return 0;
}

/* The parts of one matrix fused by columns, at list[part[0 .. count)], row by row: each row's
   columns of the first part, then the next's (a part's matrix is its rows × columns,
   column-major). */
static int write_columns(Encoder *e, const LayerWeights *w, const WeightTensor *list,
                         const int *part, int count)
{
    for (uint64_t r = 0; r < list[part[0]].shape[0]; r++)
        for (int p = 0; p < count; p++) {
            const WeightTensor *t = &list[part[p]];
            const double *buffer = WeightTensor_buffer(w, t);
            for (uint64_t j = 0; j < t->columns; j++)
                if (encoder_put(e, buffer[r + j * t->shape[0]]))
                    return -1;
        }
    return 0;
}

/* One layer's tensors in the header's order, each whole where its first part is: a fused
   tensor's parts (GPT-2's c_attn and its bias, whose parts lie between others') one after the
   other, by rows or entries, or by columns row by row. */
static int write_layer(Encoder *e, const LayerWeights *w, const WeightTensor *list,
                       const double *const *affine_of, int n)
{
    int status = 0;
    for (int i = 0; i < n && status == 0; i++) {
        if (WeightTensor_continues(&list[i]))
            continue;
        int part[LAYER_TENSORS_MAX], parts = 0;
        for (int j = i; j < n; j++)
            if (strcmp(list[j].name, list[i].name) == 0)
                part[parts++] = j;
        if (list[i].layout == COLUMNS && list[i].columns != list[i].shape[1])
            status = write_columns(e, w, list, part, parts);
        else
            for (int p = 0; p < parts && status == 0; p++)
                status = write_tensor(e, w, &list[part[p]], affine_of[part[p]]);
    }
    return status;
}

/* The read checkpoint's table (positions: its learned positions), row by row from its file. */
static int write_table(Encoder *e, const Checkpoint *checkpoint, bool positions)
{
    const SafetensorsTensor *table = Checkpoint_table(checkpoint, positions);
    uint64_t rows = table->shape[0], width = table->shape[1];
    double *row = malloc(sizeof(double) * width);
    int status = row ? 0 : -1;
    for (uint64_t r = 0; r < rows && status == 0; r++) {
        Checkpoint_table_row(checkpoint, positions, r, row);
        for (uint64_t j = 0; j < width && status == 0; j++)
            status = encoder_put(e, row[j]);
    }
    free(row);
    return status;
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
                      &d->w.mlp_out, &d->w.mlp_up, &d->w.markov, &d->w.sink,   &d->scratch};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(*all[i]);
    RandomStream_free(d->random);
    Linalg_free(d->la);
}

static int drawing_new(const Config *c, Drawing *d)
{
    size_t projection = Init_doubles(c, MATRIX_QUERY), nd = (size_t)Config_mlp_hidden(c) * c->width;
    size_t markov = (size_t)c->tokens * c->tokens * c->heads;
    memset(d, 0, sizeof *d);
    d->w.query = calloc(projection, sizeof(double));
    d->w.key = calloc(projection, sizeof(double));
    d->w.value = calloc(projection, sizeof(double));
    d->w.output = calloc(projection, sizeof(double));
    d->w.mlp_in = calloc(nd + 1, sizeof(double));
    d->w.mlp_out = calloc(nd + 1, sizeof(double));
    d->w.mlp_up = calloc(nd + 1, sizeof(double));
    d->w.markov = calloc(c->attention == ATTENTION_MARKOV ? markov : 1, sizeof(double));
    d->w.sink = calloc((size_t)c->heads, sizeof(double));
    d->scratch = calloc(Init_scratch_doubles(c) + 1, sizeof(double));
    d->random = RandomStream_new();
    d->la = Linalg_new();
    bool ok = d->w.query && d->w.key && d->w.value && d->w.output && d->w.mlp_in && d->w.mlp_out &&
              d->w.mlp_up && d->w.markov && d->w.sink && d->scratch && d->random && d->la;
    if (!ok)
        drawing_free(d);
    return ok ? 0 : -1;
}

/* model.safetensors into f: the length, the header, then layer by layer, drawn and written,
   then the read checkpoint's table and positions. */
static int write_model(FILE *f, const Config *c, const Names *names, const Checkpoint *checkpoint,
                       SafetensorsDtype dtype, char *err, size_t size)
{
    Text header = {0};
    export_header(c, names, checkpoint, dtype, &header);
    Drawing d;
    Encoder *e = malloc(sizeof *e);
    if (e)
        *e = (Encoder){.f = f, .dtype = dtype};
    if (header.failed || !e || drawing_new(c, &d)) {
        free(e);
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
        const double *affine_of[LAYER_TENSORS_MAX];
        int n = export_tensors(c, names, layer, list, affine_of);
        status = write_layer(e, &d.w, list, affine_of, n);
    }
    for (int positions = 0; positions < 2 && status == 0; positions++)
        if (checkpoint && Checkpoint_table(checkpoint, positions))
            status = write_table(e, checkpoint, positions);
    if (status == 0)
        status = encoder_flush(e);
    drawing_free(&d);
    free(e);
    return status;
}

/* The files the export writes, each staged as .NAME.PID.tmp beside its final name. */
static const char *const EXPORTED[] = {"model.safetensors", "config.json"};
enum { EXPORTED_COUNT = sizeof EXPORTED / sizeof EXPORTED[0] };

/* Removes the staged files of exports into dir that were killed (SIGKILL, a crash, a power
   cut: Staging_remove_on_signal cannot act), those whose process no longer exists, named
   exactly .NAME.PID.tmp: a file of 250 MB each time would otherwise stay for good. */
static void remove_abandoned_staged(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));)
        for (int i = 0; i < EXPORTED_COUNT; i++) {
            size_t n = strlen(EXPORTED[i]);
            const char *end;
            if (e->d_name[0] == '.' && strncmp(e->d_name + 1, EXPORTED[i], n) == 0 &&
                e->d_name[n + 1] == '.' && Staging_writer_gone(e->d_name + n + 2, &end) &&
                strcmp(end, ".tmp") == 0)
                unlinkat(dirfd(d), e->d_name, 0);
        }
    closedir(d);
}

/* A new file beside its final name (.NAME.PID.tmp in dir), O_EXCL: 0666 less the umask;
   removed if a signal ends the process before Staging_forget. */
static FILE *staged_file(const char *dir, const char *name, char *path, size_t path_size)
{
    snprintf(path, path_size, "%s/.%s.%ld.tmp", dir, name, (long)getpid());
    unlink(path); /* a killed export of an earlier process with our pid */
    if (Staging_remove_on_signal(path)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
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

/* Whether name is a file a checkpoint is made of: its config.json, a safetensors file (whole or
   a shard), an index of shards, or PyTorch's own weights. */
static bool checkpoint_file(const char *name)
{
    static const char *const SUFFIXES[] = {".safetensors", ".index.json", ".bin", ".pt", ".pth"};
    if (strcmp(name, "config.json") == 0)
        return true;
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof SUFFIXES / sizeof *SUFFIXES; i++) {
        size_t k = strlen(SUFFIXES[i]);
        if (n > k && strcmp(name + n - k, SUFFIXES[i]) == 0)
            return true;
    }
    return false;
}

/* Whether dir/name is a file an earlier export wrote, which the next one may replace: a
   config.json holding attnscope's settings object and version (config_json, which also names
   Hugging Face's model_type where the family scales its embeddings: not a sign of another
   writer), a model.safetensors whose header names attnscope its writer (export_header). */
static bool written_by_export(const char *dir, const char *name)
{
    char path[4200], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (strcmp(name, "config.json") == 0) {
        JsonValue *v = Safetensors_read_json(path, err, sizeof err);
        const JsonValue *settings = v ? JsonValue_member(v, "attnscope") : NULL;
        bool ours =
            settings && settings->kind == JSON_OBJECT && JsonValue_member(v, "attnscope_version");
        JsonValue_free(v);
        return ours;
    }
    if (strcmp(name, "model.safetensors") != 0)
        return false;
    Safetensors *s = Safetensors_open(path, err, sizeof err);
    const char *writer = s ? Safetensors_metadata(s, "writer") : NULL;
    bool ours = writer && strncmp(writer, "attnscope ", strlen("attnscope ")) == 0;
    Safetensors_close(s);
    return ours;
}

/* The checkpoint files of dir that no export wrote, listed into `found` ("a, b and 3 more"):
   0, or -1 with err where dir cannot be read. */
static int foreign_checkpoint_files(const char *dir, char *found, size_t found_size, char *err,
                                    size_t size)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, size, "cannot read the directory: %s", strerror(errno));
        return -1;
    }
    enum { LISTED = 4 };
    int count = 0;
    size_t used = 0;
    found[0] = '\0';
    for (struct dirent *e; (e = readdir(d));) {
        if (!checkpoint_file(e->d_name) || written_by_export(dir, e->d_name))
            continue;
        if (count++ < LISTED && used < found_size)
            used += (size_t)snprintf(found + used, found_size - used, "%s%s", count > 1 ? ", " : "",
                                     e->d_name);
    }
    closedir(d);
    if (count > LISTED && used < found_size)
        snprintf(found + used, found_size - used, " and %d more", count - LISTED);
    return 0;
}

/* The directory that holds path ("." for a bare name), trailing slashes ignored. */
static void parent_directory(const char *path, char *out, size_t size)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    while (n > 0 && path[n - 1] != '/')
        n--;
    while (n > 1 && path[n - 1] == '/')
        n--;
    snprintf(out, size, "%.*s", n ? (int)n : 1, n ? path : ".");
}

/* The directory a checkpoint path names: the path itself, or the directory holding the file. */
static int checkpoint_directory(const char *path, struct stat *st)
{
    char parent[4200];
    if (stat(path, st) != 0)
        return -1;
    if (S_ISDIR(st->st_mode))
        return 0;
    parent_directory(path, parent, sizeof parent);
    return stat(parent, st);
}

int Weights_export_check(const char *dir, const Checkpoint *checkpoint, char *err, size_t size)
{
    static const char ACCEPTED[] =
        "a new or empty directory, one without a checkpoint, or one holding an earlier "
        "--export-weights (its model.safetensors and config.json are replaced)";
    struct stat st, read;
    if (stat(dir, &st) != 0) {
        /* Made by the export (not its parents): its parent must take a new directory. */
        char parent[4200];
        parent_directory(dir, parent, sizeof parent);
        if (Staging_dangling_link(dir, true, err, size) ||
            Staging_dangling_link(parent, false, err, size))
            return -1;
        if (errno != ENOENT || access(parent, W_OK | X_OK) != 0) {
            snprintf(err, size,
                     "cannot create the directory: %s (in '%s'): accepted a new directory in an "
                     "existing one that can be written (the export makes no parents), or %s",
                     strerror(errno), parent, ACCEPTED);
            return -1;
        }
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, size, "it exists and is not a directory");
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, size, "cannot write into the directory: %s", strerror(errno));
        return -1;
    }
    if (checkpoint && checkpoint_directory(Checkpoint_path(checkpoint), &read) == 0 &&
        read.st_dev == st.st_dev && read.st_ino == st.st_ino) {
        snprintf(err, size,
                 "it is the directory of the checkpoint --weights reads ('%s'), which the export "
                 "would replace as it is read: accepted another one, %s",
                 Checkpoint_path(checkpoint), ACCEPTED);
        return -1;
    }
    char found[512];
    if (foreign_checkpoint_files(dir, found, sizeof found, err, size))
        return -1;
    if (found[0]) {
        snprintf(err, size,
                 "the directory holds a checkpoint that --export-weights did not write (%s): the "
                 "export would replace its config.json and put a model.safetensors beside its "
                 "weights: accepted %s",
                 found, ACCEPTED);
        return -1;
    }
    return 0;
}

/* The optional biases of the layers' tensors under the names the export writes. */
static ExportBiases export_biases(const Config *c, const Names *names)
{
    static const char *const QKV[] = {"self_attn.q_proj.bias", "self_attn.k_proj.bias",
                                      "self_attn.v_proj.bias"};
    int qkv = 0, other = 0;
    for (int layer = 1; layer <= c->depth; layer++) {
        WeightTensor list[LAYER_TENSORS_MAX];
        const double *affine_of[LAYER_TENSORS_MAX];
        int n = export_tensors(c, names, layer, list, affine_of);
        for (int k = 0; k < n; k++) {
            bool named = false;
            size_t length = strlen(list[k].name);
            for (size_t q = 0; q < sizeof QKV / sizeof *QKV; q++)
                named |= length > strlen(QKV[q]) &&
                         strcmp(list[k].name + length - strlen(QKV[q]), QKV[q]) == 0;
            qkv += list[k].optional && named;
            other += list[k].optional && !named;
        }
    }
    return qkv == 0 && other == 0          ? EXPORT_BIASES_NONE
           : qkv == 3 * c->depth && !other ? EXPORT_BIASES_QKV
                                           : EXPORT_BIASES_OTHER;
}

long long Weights_export(const Config *c, const Checkpoint *checkpoint, const HfConfigReport *read,
                         const char *dir, SafetensorsDtype dtype, FILE *warnings, char *err,
                         size_t size)
{
    /* The layers are Layer_draw's, from the source in use: beside another checkpoint's table
       they would make a model that neither checkpoint is, and without the table of the
       source in use one that it is not either. */
    const WeightSource *in_use = Layer_weights_in_use();
    if (checkpoint && in_use != Checkpoint_source(checkpoint)) {
        snprintf(err, size,
                 "the checkpoint %s is not the weight source in use, whose layers the "
                 "export would write beside its table",
                 Checkpoint_path(checkpoint));
        return -1;
    }
    if (!checkpoint && in_use && in_use->embed) {
        snprintf(err, size,
                 "the weight source in use, %s, has an embedding table (%s) the export was not "
                 "given: its layers would be written without it",
                 in_use->name, in_use->table ? in_use->table : "its table");
        return -1;
    }
    if (Weights_export_check(dir, checkpoint, err, size))
        return -1;
    Names names = export_names(checkpoint);
    const char *fixed = Weights_names_model_type(&names);
    if (!fixed && checkpoint && Checkpoint_table(checkpoint, false))
        fixed = Checkpoint_scaled_family(checkpoint);
    ExportConfig e = {.c = c,
                      .checkpoint = checkpoint,
                      .read = read,
                      .dtype = dtype,
                      .biases = export_biases(c, &names)};
    ExportConfig_name_family(&e, fixed);
    if (e.hf.names) /* a plain family's block: its own names */
        names = *e.hf.names;
    if (e.warning[0] && warnings)
        fprintf(warnings, "attnscope: warning: --export-weights '%s': %s\n", dir, e.warning);
    bool made = mkdir(dir, 0777) == 0;
    if (!made && errno != EEXIST) {
        snprintf(err, size, "cannot create the directory: %s", strerror(errno));
        return -1;
    }
    if (made)
        Staging_remove_directory_on_signal(dir); /* too long a path: the staged names are too */
    remove_abandoned_staged(dir);
    char model[STAGING_PATH_SIZE], config[STAGING_PATH_SIZE], final_model[STAGING_PATH_SIZE],
        final_config[STAGING_PATH_SIZE];
    snprintf(final_model, sizeof final_model, "%s/%s", dir, EXPORTED[0]);
    snprintf(final_config, sizeof final_config, "%s/%s", dir, EXPORTED[1]);
    FILE *f = staged_file(dir, EXPORTED[0], model, sizeof model);
    FILE *g = f ? staged_file(dir, EXPORTED[1], config, sizeof config) : NULL;
    if (!f || !g) {
        snprintf(err, size, "cannot write into the directory: %s", strerror(errno));
        if (f) {
            fclose(f);
            unlink(model);
        }
        Staging_forget();
        if (made)
            rmdir(dir);
        return -1;
    }
    int status = write_model(f, c, &names, checkpoint, dtype, err, size);
    long long bytes = status == 0 ? (long long)ftello(f) : -1;
    Text text = {0};
    ExportConfig_json(&e, true, &text);
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
    Staging_forget();
    /* A failed export leaves no directory of its own making (rmdir: only while empty). */
    if (status != 0 && made)
        rmdir(dir);
    return status == 0 ? bytes : -1;
}
