/* config.json of --export-weights (docs/weights.md): Hugging Face's fields for the run's block,
 * the family whose model it is (checked against --hf-config's own reader), and attnscope's
 * record of the run. */
#include "weights_internal.h"

#include "hf_config.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

/* gpt-oss's experts, which the block leaves out (its attention path): their fields'
   defaults. */
static const char *const GPT_OSS_EXPERTS[] = {"num_local_experts", "experts_per_token",
                                              "swiglu_limit", "intermediate_size", NULL};
/* Gemma 2's final soft-cap of the LM head's logits (its default 30), after the block. */
static const char *const GEMMA2_HEAD[] = {"final_logit_softcapping", NULL};
/* The families whose models load Llama's names, in the order they are tried: the first whose
   --hf-config reading gives the run's block back names the export. */
static const HfClass LLAMA_NAMED[] = {
    {"llama", "LlamaForCausalLM", false, NULL, NULL, NULL},
    {"mistral", "MistralForCausalLM", false, NULL, NULL, NULL},
    {"qwen3", "Qwen3ForCausalLM", false, NULL, NULL, NULL},
    {"olmo2", "Olmo2ForCausalLM", false, NULL, NULL, NULL},
    {"gemma2", "Gemma2ForCausalLM", true, GEMMA2_HEAD, NULL, NULL},
    {"gemma3_text", "Gemma3ForCausalLM", true, NULL, NULL, NULL},
    {"gpt_oss", "GptOssForCausalLM", true, GPT_OSS_EXPERTS, NULL, NULL},
};
/* Drawn weights whose block no family loading Llama's names has: GPT-2's (LayerNorm before
   each branch, causal, a plain MLP; Conv1D names, every bias) and ViT's (the same without a
   mask; its names, no q, k, v biases: "qkv_bias": false), with their config classes' fields
   (transformers' configuration_gpt2.py and configuration_vit.py). */
static const HfFields GPT2_FIELDS = {.width = "n_embd",
                                     .heads = "n_head",
                                     .depth = "n_layer",
                                     .context = "n_positions",
                                     .mlp_width = "n_inner",
                                     .eps = "layer_norm_epsilon",
                                     .null_four_widths = true};
static const HfFields VIT_FIELDS = {.width = "hidden_size",
                                    .heads = "num_attention_heads",
                                    .depth = "num_hidden_layers",
                                    .mlp_width = "intermediate_size",
                                    .eps = "layer_norm_eps",
                                    .fixed = "\"qkv_bias\": false"};
static const HfFields LLAMA_FIELDS = {.width = "hidden_size",
                                      .heads = "num_attention_heads",
                                      .depth = "num_hidden_layers",
                                      .context = "max_position_embeddings",
                                      .mlp_width = "intermediate_size",
                                      .eps = "rms_norm_eps",
                                      .heads_shape = true,
                                      .attention_fields = true};
static const HfClass PLAIN_NAMED[] = {
    {"gpt2", "GPT2Model", false, NULL, &GPT2_NAMES, &GPT2_FIELDS},
    {"vit", "ViTModel", false, NULL, &VIT_NAMES, &VIT_FIELDS},
};
/* Qwen2's model has q_proj's, k_proj's and v_proj's biases, and no others: the family of a
   checkpoint read with those (without them, Llama's block is named first). */
static const HfClass QWEN2 = {"qwen2", "Qwen2ForCausalLM", false, NULL, NULL, NULL};
/* The families a checkpoint's names or table fix (Weights_names_model_type,
   Checkpoint_scaled_family): a multimodal Gemma 3's text model is written as Gemma 3's text
   model, under its names and with its fields at the top (gemma3 reads them in text_config). */
static const struct {
    const char *fixed;
    HfClass hf;
} FIXED[] = {
    {"phi3", {"phi3", "Phi3ForCausalLM", false, NULL, NULL, NULL}},
    {"gemma2", {"gemma2", "Gemma2ForCausalLM", true, GEMMA2_HEAD, NULL, NULL}},
    {"gemma3_text", {"gemma3_text", "Gemma3ForCausalLM", true, NULL, NULL, NULL}},
    {"gemma3", {"gemma3_text", "Gemma3ForCausalLM", true, NULL, NULL, NULL}},
};

/* The window the run's mask used, as Hugging Face's configs spell it, so that the export loads
   with the window it was run with: sliding_window in keys (window w: w + 1, the key and the w
   before it), and layer_types naming each layer's kind (with_types; --hf-config reads them for
   every family), also where only a local θ (Gemma 3's rope_local_base_freq) marks the local
   layers.  A window --hf-config read that covers every token is the file's own (its keys and
   layers: HfConfig_covering_window), so that the export reads back as the file did at any T.
   No window: "sliding_window": null, as Mistral's default of 4096 would otherwise act, and
   every layer full where the family reads layer_types (Gemma's default slides). */
static void window_json(const ExportConfig *e, int context, bool with_types, Text *t)
{
    const Config *c = e->c;
    bool read_local[CONFIG_DEPTH_MAX];
    int read_keys = HfConfig_covering_window(e->read, c, read_local);
    bool windowed = c->mask == MASK_WINDOW || c->mask == MASK_WINDOW_CAUSAL;
    bool local_theta = c->rope != ROPE_NONE && c->rope_local_base_freq > 0;
    if (!windowed && !local_theta && !read_keys) {
        Text_printf(t, "  \"sliding_window\": null,\n");
        with_types = with_types && e->hf.reads_layer_types;
    } else {
        /* A local θ without a window mask: a window of the whole context, the causal mask. */
        Text_printf(t, "  \"sliding_window\": %d,\n",
                    read_keys  ? read_keys
                    : windowed ? c->window + 1
                               : context);
    }
    if (!with_types)
        return;
    Text_printf(t, "  \"layer_types\": [");
    for (int layer = 1; layer <= c->depth; layer++)
        Text_printf(t, "%s\"%s\"", layer > 1 ? ", " : "",
                    (read_keys ? read_local[layer - 1] : Config_layer_local(c, layer)) ||
                            Config_layer_rotary_local(c, layer)
                        ? "sliding_attention"
                        : "full_attention");
    Text_printf(t, "],\n");
}

/* The logits' scale and soft-cap where a family's defaults would change them: Gemma's
   query_pre_attn_scalar (its default 256, not d_h; 1/sqrt(d_h²) is --logit-scale linear's
   1/d_h) and attn_logit_softcapping (Gemma 2's default 50: null where the run has none). */
static void logit_json(const Config *c, const char *model_type, Text *t)
{
    bool gemma = model_type && strncmp(model_type, "gemma", 5) == 0;
    int head_width = Config_head_width(c);
    if (gemma)
        Text_printf(t, "  \"query_pre_attn_scalar\": %d,\n",
                    c->logit_scale == LOGIT_SCALE_SQRT ? head_width : head_width * head_width);
    if (c->logit_softcap > 0) {
        Text_printf(t, "  \"attn_logit_softcapping\": ");
        Json_number(t, c->logit_softcap);
        Text_printf(t, ",\n");
    } else if (gemma)
        Text_printf(t, "  \"attn_logit_softcapping\": null,\n");
}

/* The rotary frequencies: θ, the rotated share, Gemma 3's local θ, the scaling ("null" for
   none where the family's default scales: gpt-oss's YaRN would otherwise act). */
static void rope_json(const Config *c, const char *model_type, Text *t)
{
    if (c->rope == ROPE_NONE)
        return;
    Text_printf(t, "  \"rope_theta\": ");
    Json_number(t, c->rope_theta);
    Text_printf(t, ",\n");
    if (c->rope_fraction != 1) {
        Text_printf(t, "  \"partial_rotary_factor\": ");
        Json_number(t, c->rope_fraction);
        Text_printf(t, ",\n");
    }
    if (c->rope_local_base_freq > 0) { /* Gemma 3's name */
        Text_printf(t, "  \"rope_local_base_freq\": ");
        Json_number(t, c->rope_local_base_freq);
        Text_printf(t, ",\n");
    }
    if (c->rope_scaling != ROPE_SCALING_NONE) {
        Text_printf(t, "  \"rope_scaling\": {\"rope_type\": \"%s\", \"factor\": ",
                    ROPE_SCALING_NAMES.names[c->rope_scaling]);
        Json_number(t, c->rope_factor);
        if (c->rope_scaling == ROPE_SCALING_LLAMA3) {
            Text_printf(t, ", \"low_freq_factor\": ");
            Json_number(t, c->rope_low_freq_factor);
            Text_printf(t, ", \"high_freq_factor\": ");
            Json_number(t, c->rope_high_freq_factor);
            Text_printf(t, ", \"original_max_position_embeddings\": %d", c->rope_original_context);
        }
        Text_printf(t, "},\n");
    } else if (model_type && HfConfig_default_sets(model_type, "rope_scaling"))
        Text_printf(t, "  \"rope_scaling\": null,\n");
}

/* The MLP's width (GPT-2's n_inner: null for 4·d, as its configs state it) and its activation,
   under the family's own name for it (Gemma's hidden_activation, GPT-2's activation_function). */
static void mlp_json(const Config *c, const HfFields *f, const char *model_type, Text *t)
{
    if (c->mlp == MLP_NONE)
        return;
    if (f->null_four_widths && Config_mlp_hidden(c) == 4 * c->width)
        Text_printf(t, "  \"%s\": null,\n", f->mlp_width);
    else
        Text_printf(t, "  \"%s\": %d,\n", f->mlp_width, Config_mlp_hidden(c));
    Text_printf(t, "  \"%s\": \"%s\",\n", HfConfig_activation_key(model_type),
                HfActivation_name(c->mlp));
}

/* config.json: Hugging Face's names for what they describe (a read checkpoint's context and
   table rows where it has them, so that the export reads back as it did; the family's
   model_type and class where one has the block), then every attnscope setting, with which the
   weights were drawn, and the export's warning. */
void ExportConfig_json(const ExportConfig *e, bool with_types, Text *t)
{
    static const char *const DTYPES[] = {[SAFETENSORS_F64] = "float64",
                                         [SAFETENSORS_F32] = "float32",
                                         [SAFETENSORS_BF16] = "bfloat16"};
    const Config *c = e->c;
    const Checkpoint *checkpoint = e->checkpoint;
    const HfFields *f = e->hf.fields ? e->hf.fields : &LLAMA_FIELDS;
    int context =
        checkpoint && Checkpoint_context(checkpoint) ? Checkpoint_context(checkpoint) : c->tokens;
    Text_printf(t, "{\n");
    if (e->hf.model_type)
        Text_printf(t, "  \"architectures\": [\"%s\"],\n  \"model_type\": \"%s\",\n",
                    e->hf.architecture, e->hf.model_type);
    Text_printf(t, "  \"%s\": %d,\n  \"%s\": %d,\n", f->width, c->width, f->heads, c->heads);
    if (f->heads_shape)
        Text_printf(t, "  \"num_key_value_heads\": %d,\n  \"head_dim\": %d,\n", Config_kv_heads(c),
                    Config_head_width(c));
    Text_printf(t, "  \"%s\": %d,\n", f->depth, c->depth);
    if (f->context)
        Text_printf(t, "  \"%s\": %d,\n", f->context, context);
    if (checkpoint && Checkpoint_table(checkpoint, false))
        Text_printf(t, "  \"vocab_size\": %d,\n", Checkpoint_vocab(checkpoint));
    if (f->fixed)
        Text_printf(t, "  %s,\n", f->fixed);
    if (f->attention_fields && e->hf.model_type && e->biases == EXPORT_BIASES_NONE)
        Text_printf(t, "  \"attention_bias\": false,\n"); /* gpt-oss's default has them */
    if (f->attention_fields)
        window_json(e, context, with_types, t);
    logit_json(c, e->hf.model_type, t);
    mlp_json(c, f, e->hf.model_type, t);
    rope_json(c, e->hf.model_type, t);
    Text_printf(t, "  \"%s\": ", f->eps);
    Json_number(t, c->ln_eps);
    Text_printf(t, ",\n  \"initializer_range\": ");
    Json_number(t, c->init_std);
    Text_printf(t, ",\n  \"torch_dtype\": \"%s\",\n  \"attnscope_version\": \"%s\",\n",
                DTYPES[e->dtype], ATTNSCOPE_VERSION);
    Text_printf(t, "  \"attnscope\": {");
    Json_config_members(t, c);
    if (e->tensors_family[0]) {
        Text_printf(t, ",\"tensors_family\":");
        Json_string(t, e->tensors_family);
    }
    if (e->warning[0]) {
        Text_printf(t, ",\"export_warning\":");
        Json_string(t, e->warning);
    }
    Text_printf(t, "}\n}\n");
}
/* The settings a config.json does not determine: how the weights were drawn (the file holds
   them) and what the run feeds the block and shows (T, the input, the seed).  The read-back
   keeps the run's, and the block is compared without them. */
static const char *const FILE_SILENT[] = {
    "init",       "init-std",    "depth-scale", "init-query",    "init-key",
    "init-value", "init-output", "init-mlp",    "sink-std",      "sigma-qk",
    "init-alpha", "init-beta",   "init-c",      "init-vo-alpha", "init-vo-beta",
    "tokens",     "seed",        "seeds",       "layer",         "head",
    "input",      "vocab",       "positions",   "input-norm",    "attention-map"};
/* Settings spelled two ways (d_h, G, the MLP's width, the mask and which layers slide it):
   compared as used. */
static const char *const TWO_WAYS[] = {"head-dim", "kv-heads", "mlp-hidden",   "mlp-ratio",
                                       "mask",     "window",   "window-layers"};

static bool named_in(const char *name, const char *const *list, size_t count)
{
    for (size_t k = 0; k < count; k++)
        if (strcmp(name, list[k]) == 0)
            return true;
    return false;
}

/* Layer's mask at c's T: a window of at least T − 1 keys before each query covers every token,
   the mask without it. */
static Mask acting_mask(const Config *c, int layer)
{
    Mask m = Config_layer_mask(c, layer);
    if ((m == MASK_WINDOW || m == MASK_WINDOW_CAUSAL) && c->window >= c->tokens - 1)
        return m == MASK_WINDOW ? MASK_FULL : MASK_CAUSAL;
    return m;
}

/* Whether b has a's block: every setting alike but those the file does not determine and
   those spelled two ways, the masks as they act at T. */
static bool same_block(const Config *a, const Config *b)
{
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (!named_in(s->name, FILE_SILENT, sizeof FILE_SILENT / sizeof *FILE_SILENT) &&
            !named_in(s->name, TWO_WAYS, sizeof TWO_WAYS / sizeof *TWO_WAYS) &&
            Setting_get(s, a) != Setting_get(s, b))
            return false;
    }
    for (int layer = 1; layer <= a->depth; layer++) {
        Mask m = acting_mask(a, layer);
        if (m != acting_mask(b, layer) ||
            ((m == MASK_WINDOW || m == MASK_WINDOW_CAUSAL) && a->window != b->window) ||
            Config_layer_rotary_local(a, layer) != Config_layer_rotary_local(b, layer))
            return false;
    }
    return Config_head_width(a) == Config_head_width(b) &&
           Config_kv_heads(a) == Config_kv_heads(b) &&
           (a->mlp == MLP_NONE || Config_mlp_hidden(a) == Config_mlp_hidden(b));
}

/* Whether every field the read-back names as not modelled is one the family's model has
   and the block leaves out on purpose: the family's own (model_type's) and e->hf's list. */
static bool warnings_expected(const ExportConfig *e, const HfConfigReport *report)
{
    if (report->left_out)
        return false;
    for (int i = 0; i < report->count; i++) {
        const char *field = report->unmodelled[i].field;
        bool expected = strcmp(field, "model_type") == 0;
        for (int k = 0; e->hf.expected && e->hf.expected[k]; k++)
            expected |= strcmp(field, e->hf.expected[k]) == 0;
        if (!expected)
            return false;
    }
    return true;
}

/* A read-back starts from the defaults with the run's settings the file does not determine,
   so that any other setting the file leaves alone differs from a run that changed it. */
static Config read_back_start(const Config *c)
{
    Config trial = Config_default();
    for (size_t k = 0; k < sizeof FILE_SILENT / sizeof *FILE_SILENT; k++) {
        const Setting *s = Settings_find(FILE_SILENT[k]);
        Setting_put(s, &trial, Setting_get(s, c));
    }
    return trial;
}

/* Whether --hf-config of the config.json written under e->hf, layer_types stated only where
   the family's model reads them, gives the run's block back at the run's T with no warning
   the family does not expect, and the window --hf-config read covering every token (if any)
   as the same window on the same layers: a family that slides none would say the same at
   this T, but not at a longer one. */
static bool reads_back(const ExportConfig *e)
{
    Text text = {0};
    ExportConfig_json(e, e->hf.reads_layer_types, &text);
    HfConfigReport *report = calloc(1, sizeof *report);
    Config trial = read_back_start(e->c);
    char err[512];
    bool local[CONFIG_DEPTH_MAX];
    int keys = HfConfig_covering_window(e->read, e->c, local);
    bool same =
        !text.failed && report &&
        HfConfig_parse(text.data, text.length, "config.json", &trial, report, err, sizeof err) ==
            0 &&
        same_block(e->c, &trial) && warnings_expected(e, report) &&
        (!keys || (report->sliding_window == keys &&
                   memcmp(report->sliding_local, local, sizeof *local * (size_t)e->c->depth) == 0));
    free(report);
    Text_free(&text);
    return same;
}

/* Where transformers' model of the family named (or of none) is not the run's block: no family
   has the block (the checkpoint's own neither), or its MLP has no tensors. */
static void export_warning(ExportConfig *e)
{
    const Config *c = e->c;
    char families[160] = "";
    for (size_t i = 0, used = 0;
         i < sizeof LLAMA_NAMED / sizeof *LLAMA_NAMED && used < sizeof families; i++)
        used += (size_t)snprintf(families + used, sizeof families - used, "%s%s", i ? ", " : "",
                                 LLAMA_NAMED[i].model_type);
    e->warning[0] = '\0';
    if (!e->hf.model_type && e->tensors_family[0])
        snprintf(e->warning, sizeof e->warning,
                 "config.json names no model_type: the checkpoint's family, %s, whose names and "
                 "conventions the tensors keep, does not have this block (--hf-config of the file "
                 "would not give the run's settings back); \"tensors_family\" under "
                 "\"attnscope\" keeps the family for --weights",
                 e->tensors_family);
    else if (!e->hf.model_type)
        snprintf(e->warning, sizeof e->warning,
                 "config.json names no model_type: no Hugging Face family that loads these "
                 "tensor names (%s)%s has this block%s; --hf-config reads no such file (its "
                 "settings are under \"attnscope\")",
                 families, e->checkpoint ? "" : " nor gpt2 or vit under their own names",
                 e->biases ? " with these biases (qwen2: q, k and v's alone)" : "");
    else if (c->mlp == MLP_NONE)
        snprintf(e->warning, sizeof e->warning,
                 "--mlp none: transformers' %s follows each attention with its MLP (gpt-oss: its "
                 "experts), which the file has no tensors for and which it would initialise "
                 "itself: this block is its attention path",
                 e->hf.architecture);
}

/* e->hf = hf where --hf-config's reading of the file written under it gives the run's block
   back, else none: whether it does. */
static bool name_if_read_back(ExportConfig *e, HfClass hf)
{
    e->hf = hf;
    if (!reads_back(e))
        e->hf = (HfClass){0};
    return e->hf.model_type != NULL;
}

void ExportConfig_name_family(ExportConfig *e, const char *fixed)
{
    e->hf = (HfClass){0};
    e->tensors_family[0] = '\0';
    for (size_t i = 0; fixed && i < sizeof FIXED / sizeof *FIXED; i++)
        if (strcmp(FIXED[i].fixed, fixed) == 0 && !name_if_read_back(e, FIXED[i].hf))
            snprintf(e->tensors_family, sizeof e->tensors_family, "%s", FIXED[i].hf.model_type);
    bool named = false;
    for (size_t i = 0; !fixed && !named && e->biases == EXPORT_BIASES_NONE &&
                       i < sizeof LLAMA_NAMED / sizeof *LLAMA_NAMED;
         i++)
        named = name_if_read_back(e, LLAMA_NAMED[i]);
    for (size_t i = 0; !fixed && !named && !e->checkpoint && e->biases == EXPORT_BIASES_NONE &&
                       i < sizeof PLAIN_NAMED / sizeof *PLAIN_NAMED;
         i++)
        named = name_if_read_back(e, PLAIN_NAMED[i]);
    if (!fixed && e->biases == EXPORT_BIASES_QKV)
        name_if_read_back(e, QWEN2);
    export_warning(e);
}
