/* The Hugging Face families --hf-config reads: what each one's block is, its config
 * class's defaults, and its fields that the block does not model (docs/hf-config.md). */
#include "hf_config_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Fields outside the block or without effect on a forward pass at initialisation: token ids,
   the vocabulary and the LM head, the context length (T is attnscope's), dropout (off in a
   forward pass that is not training), caching, dtypes and bookkeeping (--export-weights' own
   record of its run too: the Hugging Face fields beside it describe the model it wrote). */
const char *const HF_HARMLESS[] = {"_name_or_path",
                                   "architectures",
                                   "auto_map",
                                   "model_type",
                                   "transformers_version",
                                   "attnscope_version",
                                   "attnscope",
                                   "torch_dtype",
                                   "dtype",
                                   "bos_token_id",
                                   "eos_token_id",
                                   "pad_token_id",
                                   "sep_token_id",
                                   "decoder_start_token_id",
                                   "vocab_size",
                                   "tie_word_embeddings",
                                   "max_position_embeddings",
                                   "use_cache",
                                   "attention_dropout",
                                   "hidden_dropout",
                                   "embedding_dropout",
                                   "pretraining_tp",
                                   "return_dict",
                                   "output_attentions",
                                   "output_hidden_states",
                                   "id2label",
                                   "label2id",
                                   "problem_type",
                                   "cache_implementation",
                                   "is_decoder",
                                   "task_specific_params",
                                   NULL};

static const char BIASES[] = "the drawn block has no biases (HF initialises them to 0, so a model "
                             "at step 0 is the same); --weights reads a checkpoint's";
static const char EXPERTS[] = "a mixture of experts: the block has one MLP or none (gpt-oss: "
                              "its attention path, --mlp none)";

const HfRule HF_RULES[] = {
    {"attention_bias", HF_WHEN_SET, BIASES},
    {"mlp_bias", HF_WHEN_SET, BIASES},
    {"num_local_experts", HF_WHEN_SET, EXPERTS},
    {"num_experts", HF_WHEN_SET, EXPERTS},
    {"num_experts_per_tok", HF_WHEN_SET, EXPERTS},
    {"experts_per_token", HF_WHEN_SET, EXPERTS},
    {"moe_intermediate_size", HF_WHEN_SET, EXPERTS},
    {"n_routed_experts", HF_WHEN_SET, EXPERTS},
    {"n_shared_experts", HF_WHEN_SET, EXPERTS},
    {"shared_expert_intermediate_size", HF_WHEN_SET, EXPERTS},
    {"q_lora_rank", HF_WHEN_SET,
     "multi-head latent attention (low-rank queries): the block's W^Q is one matrix"},
    {"kv_lora_rank", HF_WHEN_SET,
     "multi-head latent attention (low-rank keys and values): the block's W^K, W^V are one "
     "matrix each"},
    {"attn_output_gate", HF_WHEN_SET, "a gate on the attention's output: the block has none"},
    {"use_output_gate", HF_WHEN_SET, "a gate on the attention's output: the block has none"},
    {"final_logit_softcapping", HF_WHEN_SET,
     "caps the LM head's logits, after the block (attnscope ends before the final norm)"},
    {"quantization_config", HF_WHEN_SET,
     "weights stored quantised: --weights reads F64, F32, F16 and BF16 tensors only"},
    {"vision_config", HF_WHEN_SET, "a vision tower beside the text model"},
    {"use_qk_norm", HF_WHEN_SET, "Llama 4's weightless QK-norm is not among these families"},
    {NULL, HF_WHEN_SET, NULL},
};

static const char *const GPT2_HARMLESS[] = {"n_positions",
                                            "n_ctx",
                                            "resid_pdrop",
                                            "embd_pdrop",
                                            "attn_pdrop",
                                            "summary_type",
                                            "summary_use_proj",
                                            "summary_activation",
                                            "summary_proj_to_labels",
                                            "summary_first_dropout",
                                            "reorder_and_upcast_attn",
                                            "add_cross_attention",
                                            NULL};
static const HfRule GPT2_RULES[] = {
    {"scale_attn_weights", HF_WHEN_FALSE,
     "logits without the 1/sqrt(d_h) scale: attnscope's logit scale is 1/sqrt(d_h) or 1/d_h"},
    {"scale_attn_by_inverse_layer_idx", HF_WHEN_SET,
     "logits scaled by 1/layer: attnscope scales every layer alike"},
    {NULL, HF_WHEN_SET, NULL},
};

static const char *const QWEN_HARMLESS[] = {"max_window_layers", "use_sliding_window", NULL};
static const char *const GEMMA3_WRAPPER_HARMLESS[] = {"boi_token_index",   "eoi_token_index",
                                                      "image_token_index", "mm_tokens_per_image",
                                                      "initializer_range", NULL};
static const char *const GPT_OSS_HARMLESS[] = {"initial_context_length", "router_aux_loss_coef",
                                               "output_router_logits", "hidden_act", NULL};
static const HfRule GPT_OSS_RULES[] = {
    {"swiglu_limit", HF_WHEN_SET, EXPERTS},
    {"intermediate_size", HF_WHEN_SET, EXPERTS},
    {NULL, HF_WHEN_SET, NULL},
};
/* Phi-3's dropouts, the context its LongRoPE scaling (warned where set) starts from, the LM
   head's bias (after the block), and two fields of Phi-4-mini's file that transformers'
   Phi3 does not read (its remote code's). */
static const char *const PHI3_HARMLESS[] = {"resid_pdrop",
                                            "embd_pdrop",
                                            "original_max_position_embeddings",
                                            "lm_head_bias",
                                            "full_attn_mod",
                                            "interpolate_factor",
                                            NULL};
static const char *const VIT_HARMLESS[] = {
    "image_size",         "patch_size",          "num_channels",
    "encoder_stride",     "hidden_dropout_prob", "attention_probs_dropout_prob",
    "pooler_output_size", "pooler_act",          NULL};
static const HfRule VIT_RULES[] = {{"qkv_bias", HF_WHEN_SET, BIASES}, {NULL, HF_WHEN_SET, NULL}};

const char *const HF_FAMILY_FIELDS[] = {"hidden_act",
                                        "hidden_activation",
                                        "activation_function",
                                        "attn_logit_softcapping",
                                        "partial_rotary_factor",
                                        "head_dim",
                                        "num_key_value_heads",
                                        NULL};
/* GPT2MLP reads activation_function; Gemma2MLP and Gemma3MLP hidden_activation (not
   hidden_act: Gemma 1's name), and their attention alone soft-caps the logits; Phi-3's
   apply_rotary_pos_emb alone rotates a share of a head (Llama's turns every dimension).  The
   Llama family's attention takes its heads' width and its key/value heads from the config;
   GPT2Attention and ViTSelfAttention have num_attention_heads heads of hidden_size / heads,
   each its own keys and values. */
static const char *const GPT2_READS[] = {"activation_function", NULL};
static const char *const VIT_READS[] = {"hidden_act", NULL};
static const char *const LLAMA_READS[] = {"hidden_act", "head_dim", "num_key_value_heads", NULL};
static const char *const GEMMA_READS[] = {"hidden_activation", "attn_logit_softcapping", "head_dim",
                                          "num_key_value_heads", NULL};
static const char *const PHI3_READS[] = {"hidden_act", "partial_rotary_factor", "head_dim",
                                         "num_key_value_heads", NULL};

/* GPT-2's Conv1D blocks scale c_proj by 1/sqrt(2 n_layer) (the gpt2 scheme's depth scaling). */
static const HfBlock GPT2_BLOCK = {.norm = LAYERNORM_LN,
                                   .place = LN_PLACE_PRE,
                                   .causal = true,
                                   .mlp = HF_MLP_PLAIN,
                                   .depth_scale = DEPTH_SCALE_SCHEME};
static const HfBlock LLAMA_BLOCK = {.norm = LAYERNORM_RMS,
                                    .place = LN_PLACE_PRE,
                                    .rope = true,
                                    .causal = true,
                                    .mlp = HF_MLP_GATED,
                                    .depth_scale = DEPTH_SCALE_NONE};
/* Norms on both sides of each sublayer, gains 1 + w. */
static const HfBlock GEMMA_BLOCK = {.norm = LAYERNORM_RMS,
                                    .place = LN_PLACE_PERI,
                                    .rope = true,
                                    .causal = true,
                                    .gain_offset = true,
                                    .scaled_embedding = true,
                                    .mlp = HF_MLP_GATED,
                                    .depth_scale = DEPTH_SCALE_NONE};
/* Llama's with the norms on the sublayers' outputs. */
static const HfBlock OLMO2_BLOCK = {.norm = LAYERNORM_RMS,
                                    .place = LN_PLACE_OUTPUT,
                                    .rope = true,
                                    .causal = true,
                                    .mlp = HF_MLP_GATED,
                                    .depth_scale = DEPTH_SCALE_NONE};
/* Llama's with attention sinks and experts for the MLP. */
static const HfBlock GPT_OSS_BLOCK = {.norm = LAYERNORM_RMS,
                                      .place = LN_PLACE_PRE,
                                      .rope = true,
                                      .causal = true,
                                      .sinks = true,
                                      .mlp = HF_MLP_EXPERTS,
                                      .depth_scale = DEPTH_SCALE_NONE};
static const HfBlock VIT_BLOCK = {.norm = LAYERNORM_LN,
                                  .place = LN_PLACE_PRE,
                                  .mlp = HF_MLP_PLAIN,
                                  .depth_scale = DEPTH_SCALE_NONE};

static const char GEMMA_EMBEDDING[] =
    "Gemma scales its embeddings by sqrt(hidden_size): a checkpoint's table (--weights) is read "
    "so scaled, but attnscope's own drawn input (--input) is not";

static const HfFamily FAMILIES[] = {
    {.model_type = "gpt2",
     .reads = GPT2_READS,
     .name = "GPT-2",
     .defaults = "{\"n_embd\": 768, \"n_layer\": 12, \"n_head\": 12, \"n_inner\": null,"
                 "\"activation_function\": \"gelu_new\", \"layer_norm_epsilon\": 1e-05,"
                 "\"initializer_range\": 0.02, \"scale_attn_weights\": true}",
     .block = &GPT2_BLOCK,
     .harmless = GPT2_HARMLESS,
     .rules = GPT2_RULES,
     .implied = "GPT-2's Conv1D layers have biases and its input adds learned positions: the "
                "drawn block has no biases (0 at initialisation, so a model at step 0 is the "
                "same) and draws its own input; --weights reads a checkpoint's biases, and its "
                "wte and wpe as the input"},
    {.model_type = "llama",
     .reads = LLAMA_READS,
     .name = "Llama",
     .defaults = "{\"hidden_size\": 4096, \"intermediate_size\": 11008, \"num_hidden_layers\": "
                 "32, \"num_attention_heads\": 32, \"num_key_value_heads\": null, \"head_dim\": "
                 "null, \"hidden_act\": \"silu\", \"rms_norm_eps\": 1e-06, \"rope_theta\": "
                 "10000.0, \"initializer_range\": 0.02}",
     .block = &LLAMA_BLOCK},
    {.model_type = "mistral",
     .reads = LLAMA_READS,
     .name = "Mistral",
     .defaults = "{\"hidden_size\": 4096, \"intermediate_size\": 14336, \"num_hidden_layers\": "
                 "32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"head_dim\": "
                 "null, \"hidden_act\": \"silu\", \"rms_norm_eps\": 1e-06, \"rope_theta\": "
                 "10000.0, \"sliding_window\": 4096, \"initializer_range\": 0.02}",
     .block = &LLAMA_BLOCK,
     .windows = HF_WINDOWS_EVERY},
    {.model_type = "qwen2",
     .reads = LLAMA_READS,
     .name = "Qwen2",
     .defaults = "{\"hidden_size\": 4096, \"intermediate_size\": 22016, \"num_hidden_layers\": "
                 "32, \"num_attention_heads\": 32, \"num_key_value_heads\": 32, \"hidden_act\": "
                 "\"silu\", \"rms_norm_eps\": 1e-06, \"rope_theta\": 10000.0, "
                 "\"use_sliding_window\": false, \"sliding_window\": 4096, "
                 "\"max_window_layers\": 28, \"initializer_range\": 0.02}",
     .block = &LLAMA_BLOCK,
     .windows = HF_WINDOWS_QWEN,
     .harmless = QWEN_HARMLESS,
     .implied = "Qwen2's q_proj, k_proj and v_proj always have biases: the drawn block has "
                "none (0 at initialisation, so a model at step 0 is the same); --weights reads "
                "a checkpoint's"},
    {.model_type = "qwen3",
     .reads = LLAMA_READS,
     .name = "Qwen3",
     .defaults = "{\"hidden_size\": 4096, \"intermediate_size\": 22016, \"num_hidden_layers\": "
                 "32, \"num_attention_heads\": 32, \"num_key_value_heads\": 32, \"head_dim\": "
                 "128, \"hidden_act\": \"silu\", \"rms_norm_eps\": 1e-06, \"rope_theta\": "
                 "10000.0, \"use_sliding_window\": false, \"sliding_window\": 4096, "
                 "\"max_window_layers\": 28, \"initializer_range\": 0.02}",
     .block = &LLAMA_BLOCK,
     .qk_norm = QK_NORM_HEAD,
     .windows = HF_WINDOWS_QWEN,
     .harmless = QWEN_HARMLESS},
    {.model_type = "gemma2",
     .reads = GEMMA_READS,
     .name = "Gemma 2",
     .defaults = "{\"hidden_size\": 2304, \"intermediate_size\": 9216, \"num_hidden_layers\": "
                 "26, \"num_attention_heads\": 8, \"num_key_value_heads\": 4, \"head_dim\": "
                 "256, \"hidden_activation\": \"gelu_pytorch_tanh\", \"rms_norm_eps\": 1e-06, "
                 "\"rope_theta\": 10000.0, \"query_pre_attn_scalar\": 256, \"sliding_window\": "
                 "4096, \"final_logit_softcapping\": 30.0, \"attn_logit_softcapping\": 50.0, "
                 "\"initializer_range\": 0.02}",
     .block = &GEMMA_BLOCK,
     .windows = HF_WINDOWS_ALTERNATE,
     .implied = GEMMA_EMBEDDING},
    {.model_type = "gemma3_text",
     .reads = GEMMA_READS,
     .name = "Gemma 3",
     .defaults = "{\"hidden_size\": 2304, \"intermediate_size\": 9216, \"num_hidden_layers\": "
                 "26, \"num_attention_heads\": 8, \"num_key_value_heads\": 4, \"head_dim\": "
                 "256, \"hidden_activation\": \"gelu_pytorch_tanh\", \"rms_norm_eps\": 1e-06, "
                 "\"rope_theta\": 1000000.0, \"rope_local_base_freq\": 10000.0, "
                 "\"query_pre_attn_scalar\": 256, \"sliding_window\": 4096, "
                 "\"sliding_window_pattern\": 6, \"final_logit_softcapping\": null, "
                 "\"attn_logit_softcapping\": null, \"initializer_range\": 0.02}",
     .block = &GEMMA_BLOCK,
     .qk_norm = QK_NORM_HEAD,
     .windows = HF_WINDOWS_PATTERN,
     .implied = GEMMA_EMBEDDING},
    /* Gemma 3's multimodal checkpoints: the text model under text_config. */
    {.model_type = "gemma3",
     .name = "Gemma 3 (multimodal)",
     .defaults = "{}",
     .nested = "text_config",
     .nested_type = "gemma3_text",
     .harmless = GEMMA3_WRAPPER_HARMLESS},
    {.model_type = "olmo2",
     .reads = LLAMA_READS,
     .name = "OLMo 2",
     .defaults = "{\"hidden_size\": 4096, \"intermediate_size\": 11008, \"num_hidden_layers\": "
                 "32, \"num_attention_heads\": 32, \"num_key_value_heads\": null, "
                 "\"hidden_act\": \"silu\", \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, "
                 "\"initializer_range\": 0.02}",
     .block = &OLMO2_BLOCK,
     .qk_norm = QK_NORM_FULL},
    {.model_type = "gpt_oss",
     .reads = LLAMA_READS,
     .name = "gpt-oss",
     .defaults = "{\"hidden_size\": 2880, \"intermediate_size\": 2880, \"num_hidden_layers\": "
                 "36, \"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"head_dim\": 64, "
                 "\"num_local_experts\": 128, \"experts_per_token\": 4, \"rms_norm_eps\": "
                 "1e-05, \"rope_theta\": 150000.0, \"sliding_window\": 128, "
                 "\"attention_bias\": true, \"initializer_range\": 0.02, \"swiglu_limit\": "
                 "7.0, \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 32.0, "
                 "\"beta_fast\": 32.0, \"beta_slow\": 1.0, \"truncate\": false, "
                 "\"original_max_position_embeddings\": 4096}}",
     .block = &GPT_OSS_BLOCK,
     .windows = HF_WINDOWS_ALTERNATE,
     .harmless = GPT_OSS_HARMLESS,
     .rules = GPT_OSS_RULES},
    /* Phi-3, Phi-3.5-mini and Phi-4-mini: Llama's block with fused projections (qkv_proj,
       gate_up_proj: their tensors' names, weights_names.c), a window on every layer where
       sliding_window is set (Phi3Model's sliding-window causal mask), partial rotary
       dimensions (partial_rotary_factor). */
    {.model_type = "phi3",
     .reads = PHI3_READS,
     .name = "Phi-3",
     .defaults = "{\"hidden_size\": 3072, \"intermediate_size\": 8192, \"num_hidden_layers\": "
                 "32, \"num_attention_heads\": 32, \"num_key_value_heads\": null, "
                 "\"hidden_act\": \"silu\", \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, "
                 "\"sliding_window\": null, \"initializer_range\": 0.02}",
     .block = &LLAMA_BLOCK,
     .windows = HF_WINDOWS_EVERY,
     .harmless = PHI3_HARMLESS},
    {.model_type = "vit",
     .reads = VIT_READS,
     .name = "ViT",
     .defaults = "{\"hidden_size\": 768, \"num_hidden_layers\": 12, \"num_attention_heads\": 12, "
                 "\"intermediate_size\": 3072, \"hidden_act\": \"gelu\", \"layer_norm_eps\": "
                 "1e-12, \"initializer_range\": 0.02, \"qkv_bias\": true}",
     .block = &VIT_BLOCK,
     .harmless = VIT_HARMLESS,
     .rules = VIT_RULES,
     .implied = "ViT's patch embedding, CLS token and learned positions are outside the "
                "block: attnscope's input is its own (--input)"},
};
enum { FAMILY_COUNT = sizeof FAMILIES / sizeof FAMILIES[0] };

const HfFamily *HfFamily_find(const char *model_type)
{
    for (int i = 0; i < FAMILY_COUNT; i++)
        if (strcmp(FAMILIES[i].model_type, model_type) == 0)
            return &FAMILIES[i];
    return NULL;
}

bool HfFamily_reads(const HfFamily *f, const char *field)
{
    bool family_own = false, read = false;
    for (int i = 0; HF_FAMILY_FIELDS[i]; i++)
        family_own |= strcmp(HF_FAMILY_FIELDS[i], field) == 0;
    for (int i = 0; f->reads && f->reads[i]; i++)
        read |= strcmp(f->reads[i], field) == 0;
    return !family_own || read;
}

/* The block of model_type's family (a multimodal family's text model's), NULL where none. */
static const HfBlock *block_of(const char *model_type)
{
    const HfFamily *f = HfFamily_find(model_type);
    if (f && f->nested_type)
        f = HfFamily_find(f->nested_type);
    return f ? f->block : NULL;
}

bool HfConfig_scales_embedding(const char *model_type)
{
    const HfBlock *b = block_of(model_type);
    return b && b->scaled_embedding;
}

bool HfConfig_gain_offset(const char *model_type, int *offset)
{
    const HfBlock *b = block_of(model_type);
    if (b)
        *offset = b->gain_offset ? 1 : 0;
    return b != NULL;
}

static const char EXACT_GELU[] = "the exact GELU: attnscope's geglu gates with GELU's tanh "
                                 "approximation (they differ by at most 4.7e-4)";
static const char TANH_GELU[] = "GELU's tanh approximation: attnscope's gelu is the exact "
                                "normal CDF (they differ by at most 4.7e-4)";
/* The first exact row of an MLP is the name an export writes for it. */
static const HfActivation ACTIVATIONS[] = {
    {"silu", true, MLP_SWIGLU, NULL},
    {"swish", true, MLP_SWIGLU, NULL},
    {"gelu_pytorch_tanh", true, MLP_GEGLU, NULL},
    {"gelu_new", true, MLP_GEGLU, NULL},
    {"gelu_fast", true, MLP_GEGLU, NULL},
    {"gelu", true, MLP_GEGLU, EXACT_GELU},
    {"relu", false, MLP_RELU, NULL},
    {"gelu", false, MLP_GELU, NULL},
    {"tanh", false, MLP_TANH, NULL},
    {"gelu_new", false, MLP_GELU, TANH_GELU},
    {"gelu_pytorch_tanh", false, MLP_GELU, TANH_GELU},
    {"gelu_fast", false, MLP_GELU, TANH_GELU},
};
enum { ACTIVATION_COUNT = sizeof ACTIVATIONS / sizeof ACTIVATIONS[0] };

const HfActivation *HfActivation_find(const char *name, bool gated)
{
    for (int i = 0; i < ACTIVATION_COUNT; i++)
        if (ACTIVATIONS[i].gated == gated && strcmp(ACTIVATIONS[i].name, name) == 0)
            return &ACTIVATIONS[i];
    return NULL;
}

const char *HfActivation_name(Mlp mlp)
{
    for (int i = 0; i < ACTIVATION_COUNT; i++)
        if (ACTIVATIONS[i].mlp == mlp && !ACTIVATIONS[i].unlike)
            return ACTIVATIONS[i].name;
    return NULL;
}

void HfActivation_accepted(bool gated, char *buf, size_t size)
{
    int count = 0, last = 0;
    for (int i = 0; i < ACTIVATION_COUNT; i++)
        if (ACTIVATIONS[i].gated == gated)
            count++;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < ACTIVATION_COUNT && used < size; i++) {
        if (ACTIVATIONS[i].gated != gated)
            continue;
        int n = snprintf(buf + used, size - used, "%s%s",
                         !last               ? ""
                         : last == count - 1 ? " or "
                                             : ", ",
                         ACTIVATIONS[i].name);
        last++;
        used += n > 0 ? (size_t)n : 0;
    }
}

bool HfConfig_default_sets(const char *model_type, const char *field)
{
    const HfFamily *f = HfFamily_find(model_type);
    char message[256];
    JsonValue *defaults =
        f ? Json_parse(f->defaults, strlen(f->defaults), message, sizeof message) : NULL;
    const JsonValue *v = JsonValue_member(defaults, field);
    bool sets = v && v->kind != JSON_NULL;
    JsonValue_free(defaults);
    return sets;
}

void HfFamily_accepted(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < FAMILY_COUNT && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", FAMILIES[i].model_type);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}
