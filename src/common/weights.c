/* A checkpoint read back as the layer step's weight source (weights.h): its tensors found and
 * checked against the configuration's (weights_names.c), then converted layer by layer;
 * weights_export.c writes them. */
#include "weights.h"

#include "weights_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct Checkpoint {
    Safetensors *tensors;
    Names names;   /* the names its tensors have */
    Config config; /* as opened: what the shapes were checked against */
    WeightSource source;
    uint64_t bytes_read; /* by fill, counted atomically: runs on two threads may fill at once */
};

/* The elements of t, as its layout puts them in w's buffer. */
static void fill_tensor(const SafetensorsTensor *t, const WeightTensor *want, const LayerWeights *w,
                        const Config *c)
{
    double *out = WeightTensor_buffer(w, want);
    if (want->field == offsetof(LayerWeights, key) || want->field == offsetof(LayerWeights, value))
        memset(out, 0, sizeof(double) * (size_t)c->width * c->width); /* columns past G·d_h */
    if (want->layout == AS_STORED)
        Safetensors_to_double(t, out);
    else
        Safetensors_columns_to_double(t, want->first_column, want->columns, out);
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
   of the checkpoint's that c would leave out, described in why; false where none. */
static bool shapes_differ(const Checkpoint *k, const Config *c, int layer, char *why, size_t size)
{
    WeightTensor want[LAYER_TENSORS_MAX], opened[LAYER_TENSORS_MAX];
    int n = Weights_layer_tensors(c, &k->names, layer, want),
        m = Weights_layer_tensors(&k->config, &k->names, layer, opened);
    char need[64], has[64];
    for (int i = 0; i < n; i++) {
        const WeightTensor *o = named(opened, m, want[i].name);
        if (o && o->rank == want[i].rank && memcmp(o->shape, want[i].shape, sizeof o->shape) == 0)
            continue;
        snprintf(why, size, "the checkpoint's tensors fix it (the settings need %s %s, %s)",
                 want[i].name, Weights_shape_text(want[i].rank, want[i].shape, need, sizeof need),
                 o ? Weights_shape_text(o->rank, o->shape, has, sizeof has) : "not in it");
        return true;
    }
    for (int i = 0; i < m; i++)
        if (!named(want, n, opened[i].name)) {
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

/* Whether c differs from the checkpoint in what its tensors fix, layers `first`..`last` (the
   heads too: the same (d, d) W^Q split into other heads is another model), described in why. */
static bool fixed_differ(const Checkpoint *k, const Config *c, int first, int last, char *why,
                         size_t size)
{
    const Config *o = &k->config;
    if (k->names.family == NAMES_GPT2 && !Weights_gpt2_names_fit(c, why, size))
        return true;
    if (c->depth != o->depth || c->heads != o->heads || Config_kv_heads(c) != Config_kv_heads(o)) {
        snprintf(why, size,
                 "the checkpoint's tensors fix it (it holds L = %d layers of H = %d heads, G = %d "
                 "key/value heads)",
                 o->depth, o->heads, Config_kv_heads(o));
        return true;
    }
    for (int layer = first; layer <= last; layer++)
        if (shapes_differ(k, c, layer, why, size))
            return true;
    return false;
}

static bool fits(void *context, const Config *c, char *why, size_t size)
{
    const Checkpoint *k = context;
    if (fixed_differ(k, c, 1, c->depth, why, size))
        return false;
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
        if ((want[i].part & parts) && want[i].layout != CONSTANT) {
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
        if (!(want[i].part & parts) || want[i].layout == CONSTANT)
            continue;
        const SafetensorsTensor *t = Safetensors_find(k->tensors, want[i].name);
        double elements = (double)WeightTensor_elements(&want[i]);
        if (t)
            WorkList_add(out, WORK_LOAD, (double)bytes_read(t, &want[i]), elements, 0, 1);
        if (want[i].field == offsetof(LayerWeights, key) ||
            want[i].field == offsetof(LayerWeights, value))
            WorkList_add(out, WORK_PASSES, (double)c->width * c->width, 0, 0, 1);
    }
}

/* Every entry of t is `value`: a norm's gain or a bias the block does not have. */
static int check_constant(const SafetensorsTensor *t, double value, char *err, size_t size)
{
    double *x = malloc(sizeof(double) * (t->elements + 1));
    if (!x) {
        snprintf(err, size, "out of memory");
        return -1;
    }
    Safetensors_to_double(t, x);
    int status = 0;
    for (uint64_t i = 0; i < t->elements && status == 0; i++)
        if (x[i] != value) {
            snprintf(err, size,
                     "%s: tensor '%s' entry %llu is %.17g: attnscope's norms have unit gains and "
                     "its block no biases, so it reads only %g there",
                     t->file, t->name, (unsigned long long)i, x[i], value);
            status = -1;
        }
    free(x);
    return status;
}

/* The tensor of the checkpoint that want names, with want's shape; constants all theirs. */
static int find_tensor(const Checkpoint *k, const WeightTensor *want, const SafetensorsTensor **out,
                       char *err, size_t size)
{
    char expected[96], found[96];
    const SafetensorsTensor *t = Safetensors_find(k->tensors, want->name);
    if (!t) {
        snprintf(err, size, "%s: no tensor '%s' (shape %s), which this configuration needs",
                 Safetensors_path(k->tensors), want->name,
                 Weights_shape_text(want->rank, want->shape, expected, sizeof expected));
        return -1;
    }
    if (t->rank != want->rank ||
        memcmp(t->shape, want->shape, sizeof(uint64_t) * (size_t)t->rank)) {
        snprintf(err, size, "%s: tensor '%s' has shape %s, expected %s for this configuration",
                 t->file, t->name, Weights_shape_text(t->rank, t->shape, found, sizeof found),
                 Weights_shape_text(want->rank, want->shape, expected, sizeof expected));
        return -1;
    }
    *out = t;
    return want->layout == CONSTANT ? check_constant(t, want->constant, err, size) : 0;
}

/* A whole model's tensors outside the block: the embeddings and positions (the input is
   drawn), the final norm, the output head. */
static bool outside_block(const Checkpoint *k, const char *name)
{
    static const char *const LLAMA[] = {"model.embed_tokens.weight", "model.norm.weight",
                                        "lm_head.weight"};
    static const char *const GPT2[] = {"wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias",
                                       "lm_head.weight"};
    bool gpt2 = k->names.family == NAMES_GPT2;
    size_t count = gpt2 ? sizeof GPT2 / sizeof *GPT2 : sizeof LLAMA / sizeof *LLAMA;
    size_t prefix = strlen(k->names.prefix);
    for (size_t i = 0; i < count; i++) {
        const char *known = gpt2 ? GPT2[i] : LLAMA[i];
        if (strcmp(name, known) == 0 ||
            (strncmp(name, k->names.prefix, prefix) == 0 && strcmp(name + prefix, known) == 0))
            return true;
    }
    return false;
}

/* GPT-2's causal-mask buffers, h.N.attn.bias and h.N.attn.masked_bias: not weights. */
static bool mask_buffer(const Checkpoint *k, const char *name)
{
    size_t prefix = strlen(k->names.prefix);
    if (k->names.family != NAMES_GPT2 || strncmp(name, k->names.prefix, prefix) != 0 ||
        strncmp(name + prefix, "h.", 2) != 0)
        return false;
    const char *rest = name + prefix + 2;
    if (*rest < '0' || *rest > '9')
        return false;
    while (*rest >= '0' && *rest <= '9')
        rest++;
    return strcmp(rest, ".attn.bias") == 0 || strcmp(rest, ".attn.masked_bias") == 0;
}

/* Every tensor of the checkpoint is one of c's, a mask buffer, or a tensor outside the block
   (named on `warnings`): anything else would be silently left out. */
static int check_nothing_else(const Checkpoint *k, const bool *used, FILE *warnings, char *err,
                              size_t size)
{
    for (int i = 0; i < Safetensors_count(k->tensors); i++) {
        const SafetensorsTensor *t = Safetensors_at(k->tensors, i);
        if (used[i] || mask_buffer(k, t->name))
            continue;
        if (outside_block(k, t->name)) {
            if (warnings)
                fprintf(warnings,
                        "attnscope: warning: %s: tensor '%s' is outside the block attnscope runs "
                        "(the input tokens are drawn), so it is not used\n",
                        t->file, t->name);
            continue;
        }
        snprintf(err, size,
                 "%s: tensor '%s' is not a weight of this configuration (d=%d, H=%d, L=%d, "
                 "attention, output, norms, MLP and QK-norm as set; docs/weights.md lists the "
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
        int n = Weights_layer_tensors(&k->config, &k->names, layer, want);
        for (int i = 0; i < n && status == 0; i++) {
            const SafetensorsTensor *t;
            status = find_tensor(k, &want[i], &t, err, size);
            if (status)
                break;
            used[t - Safetensors_at(k->tensors, 0)] = true;
            uint64_t bad = Safetensors_count_nonfinite(t);
            Safetensors_release(k->tensors, t);
            if (bad && warnings)
                fprintf(warnings,
                        "attnscope: warning: %s: tensor '%s' holds %llu NaN or infinite "
                        "entries\n",
                        t->file, t->name, (unsigned long long)bad);
        }
    }
    if (status == 0)
        status = check_nothing_else(k, used, warnings, err, size);
    free(used);
    return status;
}

/* A config.json size beside the checkpoint: its keys (the Llama family's, then GPT-2's), the
   value the settings give it, and the option that sets it. */
typedef struct {
    const char *keys[2];
    int value;
    const char *option;
} ConfigSize;

/* The sizes a directory's config.json states must be the settings': the same tensors split
   into other heads, or read as another depth, would be another model. */
static int check_config_json(const char *dir, const Config *c, char *err, size_t size)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(path, F_OK) != 0)
        return 0;
    JsonValue *v = Safetensors_read_json(path, err, size);
    if (!v)
        return -1;
    const ConfigSize sizes[] = {
        {{"hidden_size", "n_embd"}, c->width, "--width"},
        {{"num_attention_heads", "n_head"}, c->heads, "--heads"},
        {{"num_key_value_heads", NULL}, Config_kv_heads(c), "--kv-heads"},
        {{"head_dim", NULL}, Config_head_width(c), "--heads"},
        {{"num_hidden_layers", "n_layer"}, c->depth, "--depth"},
        {{"intermediate_size", "n_inner"},
         c->mlp == MLP_NONE ? -1 : Config_mlp_hidden(c),
         "--mlp-hidden"},
    };
    int status = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes && status == 0; i++)
        for (int k = 0; k < 2 && sizes[i].keys[k] && status == 0; k++) {
            const JsonValue *n = JsonValue_member(v, sizes[i].keys[k]);
            if (!n || n->kind != JSON_NUMBER || sizes[i].value < 0 || n->number == sizes[i].value)
                continue;
            snprintf(err, size,
                     "%s: %s is %.17g, but the settings give %d (%s): the checkpoint is the model "
                     "its config.json describes",
                     path, sizes[i].keys[k], n->number, sizes[i].value, sizes[i].option);
            status = -1;
        }
    JsonValue_free(v);
    return status;
}

/* The names the checkpoint's tensors have: GPT-2's where its first layer's c_attn is there
   (under transformer. or not), Llama's otherwise.  GPT-2's must describe the block. */
static int detect_names(Checkpoint *k, char *err, size_t size)
{
    k->names = LLAMA_NAMES;
    if (Safetensors_find(k->tensors, "h.0.attn.c_attn.weight"))
        k->names = (Names){NAMES_GPT2, ""};
    else if (Safetensors_find(k->tensors, "transformer.h.0.attn.c_attn.weight"))
        k->names = (Names){NAMES_GPT2, "transformer."};
    char why[256];
    if (k->names.family == NAMES_GPT2 && !Weights_gpt2_names_fit(&k->config, why, sizeof why)) {
        snprintf(err, size, "%s: %s", Safetensors_path(k->tensors), why);
        return -1;
    }
    return 0;
}

Checkpoint *Checkpoint_open(const char *path, const Config *c, FILE *warnings, char *err,
                            size_t size)
{
    Checkpoint *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, size, "out of memory");
        return NULL;
    }
    k->config = *c;
    if (check_config_json(path, c, err, size)) {
        Checkpoint_close(k);
        return NULL;
    }
    k->tensors = Safetensors_open(path, err, size);
    if (k->tensors && detect_names(k, err, size)) {
        Checkpoint_close(k);
        return NULL;
    }
    if (k->tensors)
        k->source = (WeightSource){.fill = fill_layer,
                                   .fits = fits,
                                   .declare = declare_layer,
                                   .name = Safetensors_path(k->tensors),
                                   .context = k};
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

uint64_t Checkpoint_bytes_read(const Checkpoint *k)
{
    return __atomic_load_n(&k->bytes_read, __ATOMIC_RELAXED);
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
    free(k);
}
