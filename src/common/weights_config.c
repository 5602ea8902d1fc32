/* What a checkpoint read says of the settings (docs/weights.md): its directory's config.json,
 * whose sizes must be the settings' (its family and context kept for weights.c), and the words
 * of the refusals that name what gave a setting: the sizes a shape is made of, the setting that
 * leaves a tensor out. */
#include "weights_internal.h"

#include "json_read.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *Weights_origin(const SettingOrigins *origins, const char *setting, char *buf,
                           size_t size)
{
    if (origins)
        origins->describe(origins->context, setting, buf, size);
    else
        snprintf(buf, size, "--%s", setting);
    return buf;
}

void Weights_shape_sizes(const Config *c, const WeightTensor *want, const SettingOrigins *origins,
                         char *buf, size_t size)
{
    char d[1200], h[1200], g[1200], dh[1200];
    int n = snprintf(buf, size, "d = %d (%s), H = %d (%s), G = %d (%s), d_h = %d (%s)", c->width,
                     Weights_origin(origins, "width", d, sizeof d), c->heads,
                     Weights_origin(origins, "heads", h, sizeof h), Config_kv_heads(c),
                     Weights_origin(origins, "kv-heads", g, sizeof g), Config_head_width(c),
                     c->head_dim ? Weights_origin(origins, "head-dim", dh, sizeof dh) : "d/H");
    if (n > 0 && (size_t)n < size && want->part == LAYER_DRAW_MLP)
        snprintf(buf + n, size - (size_t)n, ", N = %d (%s)", Config_mlp_hidden(c),
                 Weights_origin(origins, c->mlp_hidden ? "mlp-hidden" : "mlp-ratio", d, sizeof d));
    else if (n > 0 && (size_t)n < size && want->field == offsetof(LayerWeights, markov))
        snprintf(buf + n, size - (size_t)n, ", T = %d (%s)", c->tokens,
                 Weights_origin(origins, "tokens", d, sizeof d));
}

/* Whether the tensor called name is one of the layer's under c, with c's sizes. */
static bool among_tensors(const Names *names, const Config *c, int layer, const char *name)
{
    WeightTensor list[LAYER_TENSORS_MAX];
    char why[8];
    if (!Weights_names_fit(names, c, why, sizeof why))
        return false;
    int n = Weights_layer_tensors(c, names, layer, list);
    for (int i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0)
            return true;
    return false;
}

void Weights_not_a_weight(const Names *names, const Config *c, const SafetensorsTensor *t,
                          const SettingOrigins *origins, char *err, size_t size)
{
    static const char *const READS[][2] = {
        {"wo", "gaussian"},      {"mlp", "swiglu"},    {"mlp", "gelu"},
        {"layernorm", "rms"},    {"layernorm", "ln"},  {"ln-place", "pre"},
        {"ln-place", "peri"},    {"ln-place", "post"}, {"qk-norm", "head"},
        {"qk-norm", "full"},     {"sink", "0"},        {"attention", "softmax"},
        {"attention", "markov"}, {"depth", NULL},
    };
    int layer = Weights_layer_of(names, t->name);
    char depth[16], why[256];
    snprintf(depth, sizeof depth, "%d", layer);
    for (size_t i = 0; layer && i < sizeof READS / sizeof *READS; i++) {
        const Setting *s = Settings_find(READS[i][0]);
        Config other = *c;
        const char *value = READS[i][1] ? READS[i][1] : depth;
        if (Setting_parse(s, &other, value, why, sizeof why) ||
            Setting_get(s, &other) == Setting_get(s, c) ||
            !among_tensors(names, &other, layer, t->name))
            continue;
        char now[64], origin[1200];
        Setting_format(s, c, 0, now, sizeof now);
        Weights_origin(origins, s->name, origin, sizeof origin);
        snprintf(err, size,
                 "'%s': tensor '%s' is not a weight of this configuration: --%s %s (from %s) "
                 "has no such tensor: give --%s %s to read it",
                 t->file, t->name, s->name, now, origin, s->name, value);
        return;
    }
    snprintf(err, size,
             "'%s': tensor '%s' is not a weight of this configuration (d=%d, H=%d, L=%d, "
             "attention, output, norms, MLP and QK-norm as set; docs/weights.md lists the "
             "names)",
             t->file, t->name, c->width, c->heads, c->depth);
}

/* A config.json size beside the checkpoint: its keys (the Llama family's, then GPT-2's), the
   value the settings give it, and the setting that gives it. */
typedef struct {
    const char *keys[2];
    int value;
    const char *setting;
} ConfigSize;

int Weights_read_config_json(const char *dir, const Config *c, const SettingOrigins *origins,
                             CheckpointConfig *out, char *err, size_t size)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(path, F_OK) != 0)
        return 0;
    JsonValue *v = Safetensors_read_json(path, err, size);
    if (!v)
        return -1;
    /* An export whose checkpoint's family does not have the run's block names no model_type,
       and keeps the family its tensors are stored for under "attnscope". */
    const JsonValue *type = JsonValue_member(v, "model_type");
    if (!type)
        type = JsonValue_member(JsonValue_member(v, "attnscope"), "tensors_family");
    if (type && type->kind == JSON_STRING && type->length < sizeof out->model_type &&
        !memchr(type->text, '\0', type->length))
        snprintf(out->model_type, sizeof out->model_type, "%s", type->text);
    /* A multimodal config (Gemma 3's) states the text model's sizes in text_config. */
    const JsonValue *text = JsonValue_member(v, "text_config");
    const JsonValue *model = text && text->kind == JSON_OBJECT ? text : v;
    const ConfigSize sizes[] = {
        {{"hidden_size", "n_embd"}, c->width, "width"},
        {{"num_attention_heads", "n_head"}, c->heads, "heads"},
        {{"num_key_value_heads", NULL}, Config_kv_heads(c), "kv-heads"},
        {{"head_dim", NULL}, Config_head_width(c), c->head_dim ? "head-dim" : "heads"},
        {{"num_hidden_layers", "n_layer"}, c->depth, "depth"},
        {{"intermediate_size", "n_inner"},
         c->mlp == MLP_NONE ? -1 : Config_mlp_hidden(c),
         c->mlp_hidden ? "mlp-hidden" : "mlp-ratio"},
    };
    int status = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes && status == 0; i++)
        for (int k = 0; k < 2 && sizes[i].keys[k] && status == 0; k++) {
            const JsonValue *n = JsonValue_member(model, sizes[i].keys[k]);
            if (!n || n->kind != JSON_NUMBER || sizes[i].value < 0 || n->number == sizes[i].value)
                continue;
            char origin[1200];
            Weights_origin(origins, sizes[i].setting, origin, sizeof origin);
            snprintf(
                err, size,
                "'%s': %s is %.17g, but the settings give %d (%s): the checkpoint is the model "
                "its config.json describes",
                path, sizes[i].keys[k], n->number, sizes[i].value, origin);
            status = -1;
        }
    static const char *const CONTEXT[] = {"max_position_embeddings", "n_positions"};
    for (int i = 0; i < 2; i++) {
        const JsonValue *n = JsonValue_member(model, CONTEXT[i]);
        if (n && n->kind == JSON_NUMBER && n->number >= 1 && n->number <= INT32_MAX &&
            (!out->context || n->number < out->context)) {
            out->context = (int)n->number;
            snprintf(out->context_source, sizeof out->context_source, "%s in config.json",
                     CONTEXT[i]);
        }
    }
    JsonValue_free(v);
    return status;
}
