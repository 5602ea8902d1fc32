/* --hf-config: each family's config.json (tests/data/hf-config/, the real files' fields and
 * values) gives the settings of the preset written by hand for that model from the same
 * sources, except where a preset differs on purpose; hostile files are refused whole, with
 * the file, the field and what is accepted. */
#include "testing.h"

#include "json_read.h"
#include "options.h"

#include <stdlib.h>
#include <string.h>

#define DATA "tests/data/hf-config/"

static int parse(char **argv, Options *o, char *err)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return Options_parse(argc, argv, o, err, OPTIONS_ERROR_SIZE);
}

/* The JSON keys whose values differ between a and b, space-separated. */
static void differing(const Config *a, const Config *b, char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        char x[64], y[64];
        Setting_format(s, a, 0, x, sizeof x);
        Setting_format(s, b, 0, y, sizeof y);
        if (strcmp(x, y) != 0)
            snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? " " : "", s->json);
    }
}

/* A preset and a config.json of one model; `differ` lists the settings the preset sets
   differently on purpose (docs/hf-config.md says why). */
typedef struct {
    const char *preset, *file, *differ;
} Pair;

static void test_presets_agree(void **state)
{
    (void)state;
    static const Pair PAIRS[] = {
        {"presets/gpt2-small.preset", DATA "gpt2.json", ""},
        /* meta-llama/Meta-Llama-3-8B's config.json, the model the preset describes (no
           rope_scaling); Llama 3.1 8B's adds llama3's scaling for its longer context. */
        {"presets/llama3-8b.preset", DATA "llama-3-8b.json", ""},
        {"presets/llama3-8b.preset", DATA "llama-3.1-8b.json", "rope_scaling"},
        {"presets/mistral-7b.preset", DATA "mistral-7b.json", ""},
        {"presets/qwen3-8b.preset", DATA "qwen3-8b.json", ""},
        {"presets/gemma3-4b.preset", DATA "gemma-3-4b.json", ""},
        /* The preset follows OLMo-core's training init (a normal cut at ±3 std); HF's
           Olmo2PreTrainedModel._init_weights draws a plain normal. */
        {"presets/olmo2-7b.preset", DATA "olmo-2-7b.json", "init"},
        {"presets/gpt-oss-20b.preset", DATA "gpt-oss-20b.json", ""},
    };
    for (size_t i = 0; i < sizeof PAIRS / sizeof *PAIRS; i++) {
        Options preset, hf;
        char err[OPTIONS_ERROR_SIZE], diff[1024];
        char *by_preset[] = {"attnscope", "--preset", (char *)PAIRS[i].preset, NULL};
        /* The presets run T = 512 tokens; a config.json does not say T. */
        char *by_file[] = {"attnscope", "-T", "512", "--hf-config", (char *)PAIRS[i].file, NULL};
        if (parse(by_preset, &preset, err) || parse(by_file, &hf, err))
            fail_msg("%s: %s", PAIRS[i].file, err);
        differing(&preset.config, &hf.config, diff, sizeof diff);
        if (strcmp(diff, PAIRS[i].differ) != 0)
            fail_msg("%s against %s: settings differ: \"%s\", expected \"%s\"", PAIRS[i].file,
                     PAIRS[i].preset, diff, PAIRS[i].differ);
    }
}

static Options read_file(const char *file, const char *tokens)
{
    Options o;
    char err[OPTIONS_ERROR_SIZE];
    char *argv[] = {"attnscope", "-T", (char *)tokens, "--hf-config", (char *)file, NULL};
    if (parse(argv, &o, err))
        fail_msg("%s: %s", file, err);
    return o;
}

/* The families without a preset, value by value against the files. */
static void test_families_without_presets(void **state)
{
    (void)state;
    Options o = read_file(DATA "qwen2.5-7b.json", "256");
    const Config *c = &o.config;
    assert_int_equal(c->width, 3584);
    assert_int_equal(c->heads, 28);
    assert_int_equal(c->kv_heads, 4);
    assert_int_equal(c->depth, 28);
    assert_int_equal(c->mlp, MLP_SWIGLU);
    assert_int_equal(c->mlp_hidden, 18944);
    assert_true(c->rope_theta == 1e6 && c->ln_eps == 1e-6 && c->rope == ROPE_HALF);
    assert_int_equal(c->mask, MASK_CAUSAL); /* use_sliding_window false */
    assert_int_equal(c->qk_norm, QK_NORM_NONE);

    o = read_file(DATA "gemma-2-9b.json", "256");
    assert_int_equal(c->width, 3584); /* hidden_size, with heads of head_dim 256: 16·256 ≠ d */
    assert_int_equal(c->head_dim, 256);
    assert_int_equal(c->heads, 16);
    assert_int_equal(c->kv_heads, 8);
    assert_int_equal(c->depth, 42);
    assert_int_equal(c->ln_place, LN_PLACE_PERI);
    assert_int_equal(c->mlp, MLP_GEGLU);
    assert_int_equal(c->mlp_hidden, 14336);
    assert_true(c->logit_softcap == 50);
    assert_int_equal(c->qk_norm, QK_NORM_NONE);

    o = read_file(DATA "vit-base.json", "196");
    assert_int_equal(c->width, 768);
    assert_int_equal(c->heads, 12);
    assert_int_equal(c->mask, MASK_FULL);
    assert_int_equal(c->layernorm, LAYERNORM_LN);
    assert_int_equal(c->ln_place, LN_PLACE_PRE);
    assert_true(c->ln_eps == 1e-12);
    assert_int_equal(c->mlp, MLP_GELU);
    assert_int_equal(c->mlp_hidden, 3072);
    assert_int_equal(c->rope, ROPE_NONE);
    assert_int_equal(c->depth_scale, DEPTH_SCALE_NONE);
}

/* The fields named as not modelled: exactly these, for gpt-oss. */
static void test_unmodelled_fields(void **state)
{
    (void)state;
    Options o = read_file(DATA "gpt-oss-20b.json", "512");
    static const char *const WANT[] = {
        "rope_scaling",      "attention_bias",      "num_local_experts", "num_experts_per_tok",
        "experts_per_token", "quantization_config", "swiglu_limit",      "intermediate_size"};
    assert_int_equal(o.hf_config.count, (int)(sizeof WANT / sizeof *WANT));
    for (size_t i = 0; i < sizeof WANT / sizeof *WANT; i++)
        assert_string_equal(o.hf_config.unmodelled[i].field, WANT[i]);
    assert_string_equal(o.hf_config.model_type, "gpt_oss");
    assert_string_equal(o.hf_config.unmodelled[2].value, "32");
    /* The residual width is modelled: hidden_size 2880 with 64 heads of head_dim 64. */
    assert_int_equal(o.config.width, 2880);
    assert_int_equal(o.config.head_dim, 64);
    /* The document's member is JSON, and whole. */
    Text t = {0};
    Text_printf(&t, "{\"x\": 0");
    HfConfig_json(&o.hf_config, &t);
    Text_printf(&t, "}");
    char err[256];
    JsonValue *v = Json_parse(t.data, t.length, err, sizeof err);
    if (!v)
        fail_msg("%s in %s", err, t.data);
    const JsonValue *list = JsonValue_member(JsonValue_member(v, "hf_config"), "unmodelled");
    assert_non_null(list);
    assert_int_equal(list->count, o.hf_config.count);
    /* rope_scaling's object is longer than the report keeps: a string, cut. */
    const JsonValue *value = JsonValue_member(&list->items[0], "value");
    assert_int_equal(value->kind, JSON_STRING);
    assert_int_equal(strncmp(value->text, "{\"beta_fast\":32.0, ", 19), 0);
    JsonValue_free(v);
    Text_free(&t);
    /* Per-layer-type rope_parameters whose global part has no theta (the fuzzer's find): the
       family's θ, and the local one read as the local layers'. */
    Config c = Config_default();
    char message[OPTIONS_ERROR_SIZE];
    static const char GLOBAL_WITHOUT_THETA[] =
        "{\"model_type\": \"gemma3_text\", \"hidden_size\": 2048, \"rope_parameters\": "
        "{\"full_attention\": {\"rope_type\": \"default\"}, \"sliding_attention\": "
        "{\"rope_theta\": 10000}}}";
    if (HfConfig_parse(GLOBAL_WITHOUT_THETA, strlen(GLOBAL_WITHOUT_THETA), "x.json", &c,
                       &o.hf_config, message, sizeof message))
        fail_msg("%s", message);
    assert_true(c.rope_theta == 1e6 && c.rope_local_base_freq == 10000);
    for (int i = 0; i < o.hf_config.count; i++) /* Gemma's embedding scale aside */
        assert_null(strstr(o.hf_config.unmodelled[i].field, "rope"));
    /* Llama 3.1: everything modelled, its llama3 rotary scaling too. */
    o = read_file(DATA "llama-3.1-8b.json", "256");
    assert_int_equal(o.hf_config.count, 0);
    assert_int_equal(o.config.rope_scaling, ROPE_SCALING_LLAMA3);
    assert_true(o.config.rope_factor == 8 && o.config.rope_low_freq_factor == 1 &&
                o.config.rope_high_freq_factor == 4 && o.config.rope_original_context == 8192);
}

static int from_text(const char *json, Config *c, HfConfigReport *h, char *err)
{
    return HfConfig_parse(json, strlen(json), "x.json", c, h, err, OPTIONS_ERROR_SIZE);
}

/* Phi-3 and Phi-4-mini (microsoft/Phi-3-mini-4k-instruct's and microsoft/Phi-4-mini-instruct's
   config.json, tests/data/hf-config/): Llama's block; Phi3Model slides a window of
   sliding_window keys on every layer, so Phi-3-mini's 2047 act at T = 4096 and not at 2047;
   Phi-4-mini rotates 3/4 of each head and its LongRoPE scaling is named as not modelled, as
   is nothing else (its dropouts, original context and remote code's fields are harmless). */
static void test_phi3(void **state)
{
    (void)state;
    Options o;
    char message[OPTIONS_ERROR_SIZE];
    /* T > d: the embedding input (the orthonormal one needs T <= d). */
    char *argv[] = {
        "attnscope", "-T", "4096", "--input", "embedding", "--hf-config", DATA "phi-3-mini-4k.json",
        NULL};
    if (parse(argv, &o, message))
        fail_msg("%s", message);
    const Config *c = &o.config;
    assert_int_equal(c->width, 3072);
    assert_int_equal(c->heads, 32);
    assert_int_equal(c->kv_heads, 32);
    assert_int_equal(c->head_dim, 0);
    assert_int_equal(c->depth, 32);
    assert_int_equal(c->layernorm, LAYERNORM_RMS);
    assert_int_equal(c->ln_place, LN_PLACE_PRE);
    assert_true(c->ln_eps == 1e-5 && c->rope == ROPE_HALF && c->rope_theta == 1e4);
    assert_true(c->rope_fraction == 1);
    assert_int_equal(c->rope_scaling, ROPE_SCALING_NONE);
    assert_int_equal(c->mlp, MLP_SWIGLU);
    assert_int_equal(c->mlp_hidden, 8192);
    assert_int_equal(c->qk_norm, QK_NORM_NONE);
    assert_int_equal(c->mask, MASK_WINDOW_CAUSAL);
    assert_int_equal(c->window, 2046);
    for (int layer = 1; layer <= 32; layer++)
        assert_true(Config_layer_local(c, layer));
    assert_int_equal(o.hf_config.count, 0);
    assert_string_equal(o.hf_config.model_type, "phi3");
    o = read_file(DATA "phi-3-mini-4k.json", "2047");
    assert_int_equal(o.config.mask, MASK_CAUSAL);

    o = read_file(DATA "phi-4-mini.json", "512");
    assert_int_equal(c->width, 3072);
    assert_int_equal(c->heads, 24);
    assert_int_equal(c->kv_heads, 8);
    assert_true(c->rope_fraction == 0.75);
    assert_int_equal(c->rope_scaling, ROPE_SCALING_NONE);
    assert_int_equal(c->mask, MASK_CAUSAL); /* 262144 keys */
    assert_int_equal(o.hf_config.count, 1);
    assert_string_equal(o.hf_config.unmodelled[0].field, "rope_scaling");
    assert_non_null(strstr(o.hf_config.unmodelled[0].why, "LongRoPE"));
    assert_int_equal(strncmp(o.hf_config.unmodelled[0].value, "{\"long_factor\":[1, 1.118", 24), 0);

    /* Phi-3 128k's first files named LongRoPE "su"; the defaults of Phi3Config fill the rest. */
    Config d = Config_default();
    HfConfigReport h;
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(from_text("{\"model_type\": \"phi3\", \"rope_scaling\": {\"type\": \"su\", "
                               "\"short_factor\": [1.0], \"long_factor\": [1.0]}}",
                               &d, &h, err),
                     0);
    assert_int_equal(h.count, 1);
    assert_non_null(strstr(h.unmodelled[0].why, "rotary scaling su (LongRoPE"));
    assert_true(d.width == 3072 && d.heads == 32 && d.kv_heads == 0 && d.mlp_hidden == 8192);
    assert_int_equal(d.mask, MASK_CAUSAL); /* sliding_window's default: null */
}

/* The index of the warning about `field`, or -1. */
static int warning_about(const HfConfigReport *h, const char *field)
{
    for (int i = 0; i < h->count; i++)
        if (strcmp(h->unmodelled[i].field, field) == 0)
            return i;
    return -1;
}

/* Fails unless warning all[k] holds for a run of c exactly where expected[k] says so. */
static void holds_as(const HfConfigReport *h, const int all[3], const Config *start,
                     const Config *c, const bool expected[3], int line)
{
    for (int k = 0; k < 3; k++)
        if (HfConfig_warning_holds(h, all[k], start, c) != expected[k])
            fail_msg("line %d: the warning about %s should have %s", line,
                     h->unmodelled[all[k]].field, expected[k] ? "held" : "dropped");
}

/* Which of --hf-config's warnings still describe a run of changed settings (the screen lists
   those with each result): GPT-2's activation_function (read into --mlp) while --mlp is the
   file's; its model_type (the family's biases) while the settings the family fixes are; a
   field no reader knows while every setting the file set is.  T, the seed and the shown layer
   are not the file's; a setting an option after the file changed is not asked of the file. */
static void test_warnings_hold_per_field(void **state)
{
    (void)state;
    static const char GPT2[] =
        "{\"model_type\": \"gpt2\", \"n_embd\": 64, \"n_head\": 4, \"n_layer\": 6, "
        "\"activation_function\": \"gelu_new\", \"initializer_range\": 0.02, "
        "\"attn_unheard_of_scale\": 2.5}";
    Config start = Config_default();
    HfConfigReport h;
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(from_text(GPT2, &start, &h, err), 0);
    int act = warning_about(&h, "activation_function"), family = warning_about(&h, "model_type"),
        unknown = warning_about(&h, "attn_unheard_of_scale");
    assert_true(act >= 0 && family >= 0 && unknown >= 0);
    const int all[] = {act, family, unknown};
    holds_as(&h, all, &start, &start, (const bool[]){true, true, true}, __LINE__);
    Config c = start;
    c.tokens = start.tokens / 2;
    c.seed = start.seed + 1;
    c.layer = 2;
    /* none of these is the file's */
    holds_as(&h, all, &start, &c, (const bool[]){true, true, true}, __LINE__);
    c = start;
    c.mlp = MLP_RELU;
    /* activation_function's own setting, and one of the file's */
    holds_as(&h, all, &start, &c, (const bool[]){false, true, false}, __LINE__);
    c = start;
    c.width = 2 * start.width;
    /* n_embd: the file's model, not the activation's */
    holds_as(&h, all, &start, &c, (const bool[]){true, true, false}, __LINE__);
    c = start;
    c.layernorm = LAYERNORM_RMS;
    /* the family's norm */
    holds_as(&h, all, &start, &c, (const bool[]){true, false, false}, __LINE__);
    c.layernorm = start.layernorm;
    /* changed back */
    holds_as(&h, all, &start, &c, (const bool[]){true, true, true}, __LINE__);
    /* -L 2 after the file: the file's depth no longer asked for; --mlp relu after it: the
       activation's warning does not describe the run from the start. */
    Config options = start;
    options.depth = 2;
    options.mlp = MLP_RELU;
    c = options;
    c.depth = 4;
    assert_true(HfConfig_warning_holds(&h, unknown, &options, &c));
    assert_false(HfConfig_warning_holds(&h, act, &options, &options));
}

/* Windows at the T in force: gpt-oss's 128 keys act at T = 512 and cover T = 64; Gemma 3's
   pattern and Qwen's max_window_layers give their layers. */
static void test_windows(void **state)
{
    (void)state;
    Options o = read_file(DATA "gpt-oss-20b.json", "512");
    assert_int_equal(o.config.mask, MASK_WINDOW_CAUSAL);
    assert_int_equal(o.config.window, 127);
    o = read_file(DATA "gpt-oss-20b.json", "64");
    assert_int_equal(o.config.mask, MASK_CAUSAL);
    Config c = Config_default();
    HfConfigReport h;
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(from_text("{\"model_type\": \"gemma3_text\", \"num_hidden_layers\": 12, "
                               "\"sliding_window\": 16, \"hidden_size\": 2048}",
                               &c, &h, err),
                     0);
    char pattern[64];
    Config_window_layers_text(c.window_layers, pattern, sizeof pattern);
    assert_string_equal(pattern, "5:1");
    assert_int_equal(c.window, 15);
    for (int layer = 1; layer <= 12; layer++)
        assert_int_equal(Config_layer_local(&c, layer), layer % 6 != 0);
    /* layer_types beside sliding_window_pattern (newer Gemma 3 files): read, and equal. */
    static const char BOTH[] = "{\"model_type\": \"gemma3_text\", \"num_hidden_layers\": 6, "
                               "\"hidden_size\": 2048, \"sliding_window\": 16, "
                               "\"sliding_window_pattern\": %d, \"layer_types\": "
                               "[\"sliding_attention\", \"sliding_attention\", "
                               "\"sliding_attention\", \"sliding_attention\", "
                               "\"sliding_attention\", \"full_attention\"]}";
    char text[512];
    snprintf(text, sizeof text, BOTH, 6);
    c = Config_default();
    assert_int_equal(from_text(text, &c, &h, err), 0);
    for (int i = 0; i < h.count; i++)
        assert_string_not_equal(h.unmodelled[i].field, "sliding_window_pattern");
    snprintf(text, sizeof text, BOTH, 3);
    assert_int_equal(from_text(text, &c, &h, err), -1);
    assert_non_null(strstr(err, "\"sliding_window_pattern\" is 3: accepted the pattern "
                                "layer_types lists"));
    c = Config_default();
    assert_int_equal(from_text("{\"model_type\": \"qwen2\", \"num_hidden_layers\": 4, "
                               "\"use_sliding_window\": true, \"max_window_layers\": 0, "
                               "\"sliding_window\": 32, \"hidden_size\": 256, "
                               "\"num_attention_heads\": 4, \"num_key_value_heads\": 2}",
                               &c, &h, err),
                     0);
    Config_window_layers_text(c.window_layers, pattern, sizeof pattern);
    assert_string_equal(pattern, "all");
    assert_int_equal(c.mask, MASK_WINDOW_CAUSAL);
    assert_int_equal(c.window, 31);
}

/* Rotary positions: rope_parameters (transformers 5) as rope_theta, the rotated share, and a
   scaling named as not modelled. */
static void test_rope(void **state)
{
    (void)state;
    Config c = Config_default();
    HfConfigReport h;
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(from_text("{\"model_type\": \"phi3\", \"hidden_size\": 256, "
                               "\"num_attention_heads\": 4, \"rope_parameters\": {\"rope_type\": "
                               "\"default\", \"rope_theta\": 500000.0, "
                               "\"partial_rotary_factor\": 0.25}}",
                               &c, &h, err),
                     0);
    assert_true(c.rope_theta == 500000 && c.rope_fraction == 0.25);
    assert_int_equal(h.count, 0);
    /* Llama's apply_rotary_pos_emb turns every dimension: the share is named, not taken. */
    assert_int_equal(from_text("{\"model_type\": \"llama\", \"hidden_size\": 256, "
                               "\"num_attention_heads\": 4, \"rope_parameters\": {\"rope_type\": "
                               "\"default\", \"rope_theta\": 500000.0, "
                               "\"partial_rotary_factor\": 0.25}}",
                               &c, &h, err),
                     0);
    assert_true(c.rope_theta == 500000 && c.rope_fraction == 1);
    assert_int_equal(h.count, 1);
    assert_string_equal(h.unmodelled[0].field, "rope_parameters");
    assert_int_equal(
        from_text("{\"model_type\": \"qwen3\", \"hidden_size\": 256, \"num_key_value_heads\": 4, "
                  "\"num_attention_heads\": 4, \"partial_rotary_factor\": 0.5}",
                  &c, &h, err),
        0);
    assert_true(c.rope_fraction == 1);
    assert_int_equal(h.count, 1);
    assert_string_equal(h.unmodelled[0].field, "partial_rotary_factor");
    assert_string_equal(h.unmodelled[0].value, "0.5");
    assert_int_equal(from_text("{\"model_type\": \"llama\", \"hidden_size\": 256, "
                               "\"num_attention_heads\": 4, \"rope_parameters\": {\"rope_type\": "
                               "\"yarn\", \"rope_theta\": 1000.0, \"factor\": 4}}",
                               &c, &h, err),
                     0);
    assert_true(c.rope_theta == 1000 && c.rope_fraction == 1);
    assert_int_equal(h.count, 1);
    assert_string_equal(h.unmodelled[0].field, "rope_parameters");
    assert_string_equal(h.unmodelled[0].value,
                        "{\"rope_type\":\"yarn\", \"rope_theta\":1000.0, \"factor\":4}");
}

/* Fields one family's model reads and another's ignores: the soft-cap (Gemma 2 and 3 alone),
   the activation under its family's own name (Gemma 2 and 3: hidden_activation, and
   hidden_act beside it is ignored), each named as ignored where the model ignores it. */
static void test_family_fields(void **state)
{
    (void)state;
    Config c = Config_default();
    HfConfigReport h;
    char err[OPTIONS_ERROR_SIZE];
    const char *llama_cap = "{\"model_type\": \"llama\", \"hidden_size\": 256, "
                            "\"num_attention_heads\": 4, \"attn_logit_softcapping\": 30.0}";
    assert_int_equal(from_text(llama_cap, &c, &h, err), 0);
    assert_true(c.logit_softcap == 0);
    assert_int_equal(h.count, 1);
    assert_string_equal(h.unmodelled[0].field, "attn_logit_softcapping");
    assert_non_null(strstr(h.unmodelled[0].why, "ignored by transformers' Llama"));
    const char *gemma_cap = "{\"model_type\": \"gemma2\", \"hidden_size\": 256, "
                            "\"num_attention_heads\": 4, \"head_dim\": 64, "
                            "\"query_pre_attn_scalar\": 64, \"final_logit_softcapping\": null, "
                            "\"attn_logit_softcapping\": 30.0}";
    assert_int_equal(from_text(gemma_cap, &c, &h, err), 0);
    assert_true(c.logit_softcap == 30 && c.mlp == MLP_GEGLU);
    assert_int_equal(h.count, 1); /* the embedding's scale alone */
    assert_string_equal(h.unmodelled[0].field, "model_type");
    /* hidden_act alone: Gemma2MLP builds its default, gelu_pytorch_tanh (GeGLU). */
    const char *gemma_act = "{\"model_type\": \"gemma3_text\", \"hidden_size\": 256, "
                            "\"num_attention_heads\": 4, \"head_dim\": 64, "
                            "\"query_pre_attn_scalar\": 64, \"hidden_act\": \"silu\"}";
    assert_int_equal(from_text(gemma_act, &c, &h, err), 0);
    assert_true(c.mlp == MLP_GEGLU);
    assert_int_equal(h.count, 2);
    assert_string_equal(h.unmodelled[0].field, "hidden_act");
    assert_non_null(strstr(h.unmodelled[0].why,
                           "ignored by transformers' Gemma 3, whose MLP "
                           "reads hidden_activation (here gelu_pytorch_tanh)"));
    const char *gemma_silu = "{\"model_type\": \"gemma3_text\", \"hidden_size\": 256, "
                             "\"num_attention_heads\": 4, \"head_dim\": 64, "
                             "\"query_pre_attn_scalar\": 64, \"hidden_act\": \"silu\", "
                             "\"hidden_activation\": \"silu\"}";
    assert_int_equal(from_text(gemma_silu, &c, &h, err), 0);
    assert_true(c.mlp == MLP_SWIGLU);
    assert_int_equal(h.count, 1); /* the same value under both names: nothing ignored */
    /* Llama's MLP reads hidden_act: a hidden_activation beside it is ignored. */
    assert_int_equal(from_text("{\"model_type\": \"llama\", \"hidden_size\": 256, "
                               "\"num_attention_heads\": 4, \"hidden_activation\": \"gelu\"}",
                               &c, &h, err),
                     0);
    assert_true(c.mlp == MLP_SWIGLU);
    assert_int_equal(h.count, 1);
    assert_string_equal(h.unmodelled[0].field, "hidden_activation");
}

/* The activations' one table: the name an export writes for each MLP reads back as that MLP,
   exactly (no warning), in the kind of MLP (gated or plain) it is. */
static void test_activation_names(void **state)
{
    (void)state;
    static const struct {
        Mlp mlp;
        bool gated;
        const char *name;
    } WRITTEN[] = {{MLP_RELU, false, "relu"},
                   {MLP_GELU, false, "gelu"},
                   {MLP_TANH, false, "tanh"},
                   {MLP_SWIGLU, true, "silu"},
                   {MLP_GEGLU, true, "gelu_pytorch_tanh"}};
    assert_null(HfActivation_name(MLP_NONE));
    for (size_t i = 0; i < sizeof WRITTEN / sizeof *WRITTEN; i++) {
        assert_string_equal(HfActivation_name(WRITTEN[i].mlp), WRITTEN[i].name);
        const HfActivation *a = HfActivation_find(WRITTEN[i].name, WRITTEN[i].gated);
        assert_non_null(a);
        assert_int_equal(a->mlp, WRITTEN[i].mlp);
        assert_null(a->unlike);
    }
    assert_string_equal(HfConfig_activation_key("gemma2"), "hidden_activation");
    assert_string_equal(HfConfig_activation_key("gemma3_text"), "hidden_activation");
    assert_string_equal(HfConfig_activation_key("gpt2"), "activation_function");
    assert_string_equal(HfConfig_activation_key("llama"), "hidden_act");
    assert_string_equal(HfConfig_activation_key(NULL), "hidden_act");
}

/* gpt-oss's default rope_scaling is YaRN: a file's "rope_scaling": null is no scaling, and
   nothing is warned about it. */
static void test_null_scaling(void **state)
{
    (void)state;
    Config c = Config_default();
    HfConfigReport h;
    char err[OPTIONS_ERROR_SIZE];
    const char *yarn = "{\"model_type\": \"gpt_oss\", \"hidden_size\": 256, "
                       "\"num_attention_heads\": 4, \"head_dim\": 64, \"num_key_value_heads\": 4}";
    const char *none = "{\"model_type\": \"gpt_oss\", \"hidden_size\": 256, "
                       "\"num_attention_heads\": 4, \"head_dim\": 64, \"num_key_value_heads\": 4, "
                       "\"rope_scaling\": null}";
    assert_int_equal(from_text(yarn, &c, &h, err), 0);
    bool yarn_named = false;
    for (int i = 0; i < h.count; i++)
        yarn_named |= strcmp(h.unmodelled[i].field, "rope_scaling") == 0;
    assert_true(yarn_named);
    assert_int_equal(from_text(none, &c, &h, err), 0);
    assert_true(c.rope_scaling == ROPE_SCALING_NONE);
    for (int i = 0; i < h.count; i++)
        assert_string_not_equal(h.unmodelled[i].field, "rope_scaling");
    assert_true(HfConfig_default_sets("gpt_oss", "rope_scaling"));
    assert_false(HfConfig_default_sets("llama", "rope_scaling"));
}

/* The field named unmodelled, or NULL: the report holds at most one in these files. */
static const char *only_unmodelled(const char *json)
{
    static HfConfigReport h;
    Config c = Config_default();
    char err[OPTIONS_ERROR_SIZE];
    if (from_text(json, &c, &h, err))
        fail_msg("%s: %s", json, err);
    assert_true(h.count <= 1);
    return h.count ? h.unmodelled[0].field : NULL;
}

/* What scales nothing is not warned: rope_scaling of rope_type "default", or linear by a
   factor of 1 (either spelling of the type, or in rope_parameters); a local theta equal to the
   global one.  Their neighbours that do scale are. */
static void test_identities_not_warned(void **state)
{
    (void)state;
    static const char LLAMA[] = "{\"model_type\": \"llama\", \"hidden_size\": 256, "
                                "\"num_attention_heads\": 4, %s}";
    static const char *const QUIET[] = {
        "\"rope_scaling\": {\"rope_type\": \"default\"}",
        "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 1.0}",
        "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 1}",
        "\"rope_parameters\": {\"rope_type\": \"linear\", \"factor\": 1, \"rope_theta\": 1e4}"};
    /* The scalings attnscope does not model are still named (linear and llama3 are
       modelled since the rotary scaling settings: test_rope_scaling). */
    static const char *const WARNED[][2] = {
        {"\"rope_scaling\": {\"rope_type\": \"dynamic\", \"factor\": 1.0}", "rope_scaling"},
        {"\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 4.0}", "rope_scaling"}};
    char text[512];
    for (size_t i = 0; i < sizeof QUIET / sizeof *QUIET; i++) {
        snprintf(text, sizeof text, LLAMA, QUIET[i]);
        const char *field = only_unmodelled(text);
        if (field)
            fail_msg("%s: %s named unmodelled", QUIET[i], field);
    }
    for (size_t i = 0; i < sizeof WARNED / sizeof *WARNED; i++) {
        snprintf(text, sizeof text, LLAMA, WARNED[i][0]);
        const char *field = only_unmodelled(text);
        if (!field || strcmp(field, WARNED[i][1]) != 0)
            fail_msg("%s: %s named unmodelled", WARNED[i][0], field ? field : "nothing");
    }
    static const char GEMMA3[] =
        "{\"model_type\": \"gemma3_text\", \"hidden_size\": 2048, \"query_pre_attn_scalar\": "
        "256, \"rope_theta\": 10000.0, \"rope_local_base_freq\": %s}";
    /* Gemma 3's local θ is modelled (--rope-local-base-freq), equal to the global one or not. */
    for (int differs = 0; differs <= 1; differs++) {
        snprintf(text, sizeof text, GEMMA3, differs ? "20000" : "10000.0");
        Config c = Config_default();
        HfConfigReport h;
        char err[OPTIONS_ERROR_SIZE];
        assert_int_equal(from_text(text, &c, &h, err), 0);
        for (int i = 0; i < h.count; i++) /* Gemma's embedding scale aside */
            assert_null(strstr(h.unmodelled[i].field, "rope"));
        assert_true(c.rope_local_base_freq == (differs ? 20000 : 10000));
    }
}

/* A field the file leaves out is judged at its class's default, and the warning and the
   document say so: gpt-oss's attention_bias and intermediate_size. */
static void test_defaults_named_as_defaults(void **state)
{
    (void)state;
    Config c = Config_default();
    HfConfigReport h;
    char err[OPTIONS_ERROR_SIZE];
    assert_int_equal(from_text("{\"model_type\": \"gpt_oss\", \"hidden_size\": 256, "
                               "\"num_attention_heads\": 4, \"head_dim\": 64, "
                               "\"num_key_value_heads\": 2, \"intermediate_size\": 256}",
                               &c, &h, err),
                     0);
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    HfConfig_warn(&h, out);
    fclose(out);
    assert_non_null(strstr(text, "x.json: attention_bias = true (not in the file: the gpt-oss "
                                 "family's default) is not modelled: "));
    assert_non_null(strstr(text, "x.json: intermediate_size = 256 is not modelled: "));
    /* GptOssConfig's own defaults for what the file leaves out: YaRN, and the experts' clamp. */
    assert_non_null(strstr(text, "x.json: rope_scaling = {\"rope_type\":\"yarn\", "
                                 "\"factor\":32.0, "));
    assert_non_null(strstr(text, "(not in the file: the gpt-oss family's default) is not "
                                 "modelled: rotary scaling yarn"));
    assert_non_null(strstr(text, "x.json: swiglu_limit = 7.0 (not in the file: the gpt-oss "
                                 "family's default) is not modelled: "));
    free(text);
    Text t = {0};
    Text_printf(&t, "{\"x\": 0");
    HfConfig_json(&h, &t);
    Text_printf(&t, "}");
    JsonValue *v = Json_parse(t.data, t.length, err, sizeof err);
    assert_non_null(v);
    const JsonValue *list = JsonValue_member(JsonValue_member(v, "hf_config"), "unmodelled");
    for (int i = 0; i < list->count; i++) {
        const JsonValue *field = JsonValue_member(&list->items[i], "field"),
                        *in_file = JsonValue_member(&list->items[i], "in_file");
        bool given = strcmp(field->text, "intermediate_size") == 0;
        assert_int_equal(in_file->kind, given ? JSON_TRUE : JSON_FALSE);
    }
    JsonValue_free(v);
    Text_free(&t);
    /* transformers 5's spelling of the scaling, rope_parameters: the file's, and not the
       default rope_scaling besides. */
    assert_int_equal(from_text("{\"model_type\": \"gpt_oss\", \"hidden_size\": 256, "
                               "\"num_attention_heads\": 4, \"head_dim\": 64, "
                               "\"num_key_value_heads\": 2, \"rope_parameters\": {\"rope_type\": "
                               "\"yarn\", \"factor\": 32.0, \"rope_theta\": 150000}}",
                               &c, &h, err),
                     0);
    int scalings = 0;
    for (int i = 0; i < h.count; i++)
        scalings += strncmp(h.unmodelled[i].field, "rope_", 5) == 0;
    assert_int_equal(scalings, 1);
}

/* GPT-2's and Qwen2's biases (and GPT-2's learned positions), which their model_type implies:
   the warning true with the drawn block and with --weights, which reads them (as the bias
   fields' warnings say). */
static void test_implied_with_weights(void **state)
{
    (void)state;
    static const char *const FILES[][2] = {
        {DATA "gpt2.json", "--weights reads a checkpoint's biases, and its wte and wpe as the "
                           "input"},
        {DATA "qwen2.5-7b.json", "the drawn block has none (0 at initialisation, so a model at "
                                 "step 0 is the same); --weights reads a checkpoint's"},
    };
    for (size_t i = 0; i < sizeof FILES / sizeof *FILES; i++) {
        Options o = read_file(FILES[i][0], "256");
        int found = 0;
        for (int k = 0; k < o.hf_config.count; k++)
            found += strcmp(o.hf_config.unmodelled[k].field, "model_type") == 0 &&
                     strstr(o.hf_config.unmodelled[k].why, FILES[i][1]) != NULL;
        if (found != 1)
            fail_msg("%s: no model_type warning saying \"%s\"", FILES[i][0], FILES[i][1]);
    }
}

/* Options after --hf-config override it, options before it are overridden (one mechanism
   with --preset); a -T after it that changes what its window means is refused. */
static void test_order(void **state)
{
    (void)state;
    Options o;
    char err[OPTIONS_ERROR_SIZE];
    char *after[] = {"attnscope", "--hf-config", DATA "qwen3-8b.json", "--heads", "8", NULL};
    assert_int_equal(parse(after, &o, err), 0);
    assert_int_equal(o.config.heads, 8);
    char *before[] = {"attnscope", "--heads", "8", "--hf-config", DATA "qwen3-8b.json", NULL};
    assert_int_equal(parse(before, &o, err), 0);
    assert_int_equal(o.config.heads, 32);
    char *late_tokens[] = {"attnscope", "--hf-config", DATA "gpt-oss-20b.json", "-T", "64", NULL};
    assert_int_equal(parse(late_tokens, &o, err), 2);
    assert_non_null(strstr(err, "give -T before --hf-config"));
    char *late_mask[] = {"attnscope", "--hf-config", DATA "gpt-oss-20b.json", "-T", "64", "-m",
                         "causal",    NULL};
    assert_int_equal(parse(late_mask, &o, err), 0);
    char *directory[] = {"attnscope", "--hf-config", "tests/data/hf-config/dir", NULL};
    assert_int_equal(parse(directory, &o, err), 0);
    assert_string_equal(o.hf_config.file, "tests/data/hf-config/dir/config.json");
}

/* The rotary scaling: rope_scaling's rope_type or older type, transformers 5's rope_parameters,
   both when they agree; another type named as not modelled, and no scaling; a family without
   RoPE clears one given before.  The refusals are test_hostile's. */
static void test_rope_scaling(void **state)
{
    (void)state;
    HfConfigReport h;
    char err[OPTIONS_ERROR_SIZE];
    static const char *const SCALED[] = {
        "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.5}",
        "\"rope_parameters\": {\"rope_type\": \"linear\", \"factor\": 2.5, "
        "\"rope_theta\": 10000}",
        "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2.5}, \"rope_parameters\": "
        "{\"rope_type\": \"linear\", \"factor\": 2.5}",
    };
    for (size_t i = 0; i < sizeof SCALED / sizeof *SCALED; i++) {
        char text[512];
        snprintf(text, sizeof text, "{\"model_type\": \"llama\", \"hidden_size\": 256, %s}",
                 SCALED[i]);
        Config c = Config_default();
        if (from_text(text, &c, &h, err))
            fail_msg("%s: %s", text, err);
        assert_int_equal(c.rope_scaling, ROPE_SCALING_LINEAR);
        assert_true(c.rope_factor == 2.5);
        assert_int_equal(h.count, 0);
    }
    Config c = Config_default();
    c.rope = ROPE_HALF;
    c.rope_scaling = ROPE_SCALING_LLAMA3;
    assert_int_equal(from_text("{\"model_type\": \"llama\", \"hidden_size\": 256, "
                               "\"rope_scaling\": {\"rope_type\": \"dynamic\", \"factor\": 2}}",
                               &c, &h, err),
                     0);
    assert_int_equal(c.rope_scaling, ROPE_SCALING_NONE);
    assert_int_equal(h.count, 1);
    assert_string_equal(h.unmodelled[0].field, "rope_scaling");
    assert_string_equal(h.unmodelled[0].value, "{\"rope_type\":\"dynamic\", \"factor\":2}");
    assert_non_null(strstr(h.unmodelled[0].why, "rotary scaling dynamic (its theta grows"));
    c.rope_scaling = ROPE_SCALING_LINEAR;
    assert_int_equal(from_text("{\"model_type\": \"gpt2\"}", &c, &h, err), 0);
    assert_int_equal(c.rope_scaling, ROPE_SCALING_NONE);
    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
}

/* rope_scaling without a rope_type or type: transformers 5 turns the default rotation and
   ignores the members (4 refuses the file); attnscope turns the default too, and says so. */
static void test_rope_scaling_without_type(void **state)
{
    (void)state;
    HfConfigReport h;
    char err[OPTIONS_ERROR_SIZE];
    Config c = Config_default();
    c.rope_scaling = ROPE_SCALING_LINEAR;
    assert_int_equal(from_text("{\"model_type\": \"llama\", \"hidden_size\": 256, "
                               "\"rope_scaling\": {\"factor\": 2.0}}",
                               &c, &h, err),
                     0);
    assert_int_equal(c.rope_scaling, ROPE_SCALING_NONE);
    assert_int_equal(h.count, 1);
    assert_string_equal(h.unmodelled[0].field, "rope_scaling");
    assert_string_equal(h.unmodelled[0].value, "{\"factor\":2.0}");
    assert_non_null(strstr(h.unmodelled[0].why, "no rope_type (or type): transformers uses the "
                                                "default rotation and ignores factor 2.0"));
    /* θ alone is no scaling to ignore: rope_parameters without a type, silent. */
    assert_int_equal(from_text("{\"model_type\": \"llama\", \"hidden_size\": 256, "
                               "\"rope_parameters\": {\"rope_theta\": 20000}}",
                               &c, &h, err),
                     0);
    assert_true(c.rope_theta == 20000);
    assert_int_equal(h.count, 0);
}

/* The windows judged again at the T --token-ids set after the file was read: exactly the
   settings the file gives when read at that T (-T before it), both ways across the window. */
static void test_judge_tokens(void **state)
{
    (void)state;
    char err[OPTIONS_ERROR_SIZE];
    static const struct {
        const char *read_at, *run_at;
    } CASES[] = {{"256", "20"}, {"64", "512"}, {"512", "300"}, {"20", "128"}};
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        Options o = read_file(DATA "gpt-oss-20b.json", CASES[i].read_at);
        Options want = read_file(DATA "gpt-oss-20b.json", CASES[i].run_at);
        o.config.tokens = atoi(CASES[i].run_at);
        if (HfConfig_judge_tokens(&o.hf_config, &o.config, err, sizeof err))
            fail_msg("%s", err);
        char diff[1024];
        differing(&o.config, &want.config, diff, sizeof diff);
        if (diff[0])
            fail_msg("read at T = %s, judged at %s: \"%s\" differ from reading at %s",
                     CASES[i].read_at, CASES[i].run_at, diff, CASES[i].run_at);
        assert_int_equal(Config_validate(&o.config, err, sizeof err), 0);
        /* The report's record follows: a -T check and the warnings see the run's mask. */
        assert_int_equal(HfConfig_check(&o.hf_config, &o.config, err, sizeof err), 0);
        assert_int_equal(o.hf_config.read.mask, o.config.mask);
    }
    /* A mask an option after the file chose is the option's: left as it is. */
    Options o = read_file(DATA "gpt-oss-20b.json", "512");
    o.config.mask = MASK_CAUSAL;
    o.config.tokens = 20;
    assert_int_equal(HfConfig_judge_tokens(&o.hf_config, &o.config, err, sizeof err), 0);
    assert_int_equal(o.config.window, 127);
    /* Sliding layers no --window-layers pattern spells (the first of 50), where the window
       covered every token when read and acts at the ids' T: refused, saying why. */
    char text[2048];
    int at = snprintf(text, sizeof text,
                      "{\"model_type\": \"gpt_oss\", \"hidden_size\": 256, \"num_attention_"
                      "heads\": 4, \"head_dim\": 64, \"num_key_value_heads\": 2, "
                      "\"num_hidden_layers\": 50, \"sliding_window\": 300, \"layer_types\": [");
    for (int layer = 0; layer < 50; layer++)
        at += snprintf(text + at, sizeof text - (size_t)at, "%s\"%s_attention\"", layer ? ", " : "",
                       layer ? "full" : "sliding");
    snprintf(text + at, sizeof text - (size_t)at, "]}");
    Config c = Config_default();
    HfConfigReport h;
    assert_int_equal(from_text(text, &c, &h, err), 0);
    assert_int_equal(c.mask, MASK_CAUSAL);
    c.tokens = 400;
    Config before = c;
    assert_int_equal(HfConfig_judge_tokens(&h, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "T = 400, the ids' count: the sliding window of --hf-config "
                                "x.json (300 keys) acts"));
    assert_true(Config_equal(&c, &before));
}

/* A relation between settings refused after the options names a setting a file gave as
   that file's field: nobody typed the option it names. */
static void test_origin_named(void **state)
{
    (void)state;
    Options o;
    char err[OPTIONS_ERROR_SIZE];
    char *wide[] = {"attnscope", "-T", "1000", "--hf-config", DATA "gpt2.json", NULL};
    assert_int_equal(parse(wide, &o, err), 2);
    assert_non_null(strstr(err, "-T/--tokens 1000 exceeds -d/--width 768"));
    assert_non_null(strstr(err, "; --width 768 is \"n_embd\" of --hf-config "
                                "'" DATA "gpt2.json'"));
    char *given[] = {"attnscope", "-T", "1000", "--hf-config", DATA "gpt2.json", "-d", "768", NULL};
    assert_int_equal(parse(given, &o, err), 2);
    assert_null(strstr(err, "n_embd"));
    /* A bound the file gave: the shown head against its heads, the shown layer its depth. */
    char *head[] = {"attnscope", "--head", "40", "--hf-config", DATA "qwen3-8b.json", NULL};
    assert_int_equal(parse(head, &o, err), 2);
    assert_non_null(strstr(err, "--head 40: accepted 1..32 (the heads, --heads 32); --heads 32 "
                                "is \"num_attention_heads\" of --hf-config"));
    char *layer[] = {"attnscope", "-l", "40", "--hf-config", DATA "qwen3-8b.json", NULL};
    assert_int_equal(parse(layer, &o, err), 2);
    assert_non_null(strstr(err, "(the depth, -L/--depth 36); --depth 36 is "
                                "\"num_hidden_layers\" of --hf-config"));
}

/* Each broken file: refused with its name, the field and what is accepted; nothing set. */
static void test_hostile(void **state)
{
    (void)state;
    static const char *const CASES[][2] = {
        {"[1, 2]", "a config.json holds a JSON object, found an array"},
        {"{\"n_embd\": 64}", "\"model_type\" is missing: accepted gpt2, llama"},
        {"{\"model_type\": \"bert\"}", "\"model_type\" is \"bert\": accepted gpt2"},
        {"{\"model_type\": 7}", "\"model_type\" is a number: accepted"},
        {"{\"model_type\": \"llama\", \"hidden_size\": \"4096\"}",
         "\"hidden_size\" is \"4096\": accepted a whole number"},
        {"{\"model_type\": \"llama\", \"hidden_size\": -64}", "\"hidden_size\" is -64"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 64.5}", "\"hidden_size\" is 64.5"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 1e300}", "\"hidden_size\" is 1e300"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 100, \"num_attention_heads\": 3}",
         "\"hidden_size\" is 100: accepted a multiple of num_attention_heads = 3"},
        {"{\"model_type\": \"llama\", \"head_dim\": 1024}",
         "num_attention_heads = 32 heads of 1024 (head_dim) make H·d_h = 32768: accepted H·d_h <= "
         "4096"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"num_key_value_heads\": 5}",
         "\"num_key_value_heads\" is 5: accepted a divisor of num_attention_heads = 32"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"num_hidden_layers\": 1000}",
         "\"num_hidden_layers\" gives -L/--depth '1000': accepted a whole number 1..256"},
        {"{\"model_type\": \"gpt2\", \"n_embd\": 64, \"hidden_size\": 128}",
         "\"hidden_size\" and \"n_embd\" spell one setting with two values"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"rms_norm_eps\": 2}",
         "\"rms_norm_eps\" gives --ln-eps '2'"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"num_hidden_layers\": null}",
         "\"num_hidden_layers\" is null: accepted a whole number from 1"},
        /* LlamaConfig's intermediate_size is a number: null builds no MLP in transformers
           (GPT-2's n_inner, whose default is null, is 4 n_embd: test_presets_agree). */
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"intermediate_size\": null}",
         "\"intermediate_size\" is null: accepted a whole number from 1 to 1048576"},
        /* The settings' relations where the file set both sides: its fields named, not the
           options (--head-dim, -d) that nobody gave. */
        {"{\"model_type\": \"qwen3\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
         "\"num_key_value_heads\": 2, \"head_dim\": 128}",
         "\"head_dim\" is 128: accepted at most hidden_size = 64"},
        {"{\"model_type\": \"qwen3\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
         "\"num_key_value_heads\": 2}",
         "\"head_dim\" is 128 (not in the file: the Qwen3 family's default): accepted at most "
         "hidden_size = 64"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
         "\"head_dim\": 15}",
         "\"head_dim\" is 15: accepted an even width: rotary positions turn"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"rms_norm_eps\": null}",
         "\"rms_norm_eps\" is null: accepted a number"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"hidden_act\": \"tanh\"}",
         "\"hidden_act\" is \"tanh\": accepted silu, swish, gelu_pytorch_tanh, gelu_new, "
         "gelu_fast or gelu"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"rope_theta\": \"big\"}",
         "\"rope_theta\" is \"big\": accepted a number"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"rope_theta\": 10, "
         "\"rope_parameters\": {\"rope_theta\": 20}}",
         "spell one setting with two values"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"rope_scaling\": 8}",
         "\"rope_scaling\" is 8: accepted an object or null"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"rope_scaling\": {\"rope_type\": 3}}",
         "\"rope_scaling.rope_type\" is 3: accepted a string (default, linear, llama3, ...)"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"rope_scaling\": {\"type\": "
         "\"linear\"}}",
         "\"rope_scaling.factor\" is missing: accepted a number"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"rope_scaling\": {\"rope_type\": "
         "\"linear\", \"factor\": 0}}",
         "\"rope_scaling.factor\" gives --rope-factor '0': accepted a number 0 < X"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"rope_scaling\": {\"rope_type\": "
         "\"llama3\", \"factor\": 8, \"low_freq_factor\": 1, \"high_freq_factor\": 4}}",
         "\"rope_scaling.original_max_position_embeddings\" is missing: accepted a whole number"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"rope_scaling\": {\"rope_type\": "
         "\"llama3\", \"factor\": 8, \"low_freq_factor\": 1, \"high_freq_factor\": 4, "
         "\"original_max_position_embeddings\": 8192.5}}",
         "\"rope_scaling.original_max_position_embeddings\" is 8192.5: accepted a whole number"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"rope_scaling\": {\"rope_type\": "
         "\"llama3\", \"factor\": 8, \"low_freq_factor\": 4, \"high_freq_factor\": 4, "
         "\"original_max_position_embeddings\": 8192}}",
         "\"rope_scaling.low_freq_factor\" is 4: accepted a number below high_freq_factor = 4"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"rope_scaling\": {\"rope_type\": "
         "\"linear\", \"factor\": 2}, \"rope_parameters\": {\"rope_type\": \"linear\", "
         "\"factor\": 4}}",
         "\"rope_scaling\" and \"rope_parameters\" spell one rotary scaling with two values"},
        {"{\"model_type\": \"gpt_oss\", \"num_hidden_layers\": 3, \"hidden_size\": 256, "
         "\"layer_types\": [\"full_attention\"]}",
         "\"layer_types\" is an array of 1: accepted an array of 3 names"},
        {"{\"model_type\": \"gpt_oss\", \"num_hidden_layers\": 2, \"layer_types\": "
         "[\"full_attention\", \"chunked_attention\"]}",
         "\"layer_types[1]\" is \"chunked_attention\": accepted \"sliding_attention\""},
        {"{\"model_type\": \"mistral\", \"sliding_window\": 1}",
         "\"sliding_window\" is 1: accepted a whole number from 2"},
        {"{\"model_type\": \"gemma3\", \"text_config\": [1]}",
         "\"text_config\" is an array: accepted an object"},
        {"{\"model_type\": \"gemma3\", \"text_config\": {\"model_type\": \"llama\"}}",
         "\"text_config.model_type\" is \"llama\": accepted \"gemma3_text\""},
        {"{\"model_type\": \"llama\", \"hidden_size\": 256, \"initializer_range\": 0}",
         "\"initializer_range\" gives --init-std '0'"},
        {"{\"model_type\": \"llama\"", "'x.json': "},
        {"{\"model_type\": \"llama\", \"model_type\": \"llama\"}", "'x.json': "},
        {"{\"model_type\": \"\xff\"}", "'x.json': "},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        Config c = Config_default(), before = c;
        HfConfigReport h = {.count = -7};
        char err[OPTIONS_ERROR_SIZE] = "";
        if (from_text(CASES[i][0], &c, &h, err) == 0)
            fail_msg("accepted: %s", CASES[i][0]);
        if (strncmp(err, "'x.json': ", 10) != 0 || !strstr(err, CASES[i][1]))
            fail_msg("%s: message \"%s\", expected \"%s\"", CASES[i][0], err, CASES[i][1]);
        assert_true(Config_equal(&c, &before));
        assert_int_equal(h.count, -7);
    }
    /* 5000 levels of nesting: the reader's depth bound, not the stack. */
    size_t n = 5000;
    char *deep = malloc(2 * n + 64);
    strcpy(deep, "{\"model_type\": \"llama\", \"x\": ");
    size_t at = strlen(deep);
    memset(deep + at, '[', n);
    memset(deep + at + n, ']', n);
    strcpy(deep + at + 2 * n, "}");
    Config c = Config_default();
    HfConfigReport h;
    char err[OPTIONS_ERROR_SIZE];
    assert_int_not_equal(from_text(deep, &c, &h, err), 0);
    assert_non_null(strstr(err, "'x.json': "));
    free(deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets_agree),
        cmocka_unit_test(test_families_without_presets),
        cmocka_unit_test(test_unmodelled_fields),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_phi3),
        cmocka_unit_test(test_rope),
        cmocka_unit_test(test_family_fields),
        cmocka_unit_test(test_activation_names),
        cmocka_unit_test(test_null_scaling),
        cmocka_unit_test(test_rope_scaling),
        cmocka_unit_test(test_rope_scaling_without_type),
        cmocka_unit_test(test_judge_tokens),
        cmocka_unit_test(test_origin_named),
        cmocka_unit_test(test_identities_not_warned),
        cmocka_unit_test(test_defaults_named_as_defaults),
        cmocka_unit_test(test_implied_with_weights),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_warnings_hold_per_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
