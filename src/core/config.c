#include "attnscope/config.h"

#include "attnscope/attention.h"
#include "attnscope/init.h"
#include "attnscope/qk.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const attention_names[] = {"softmax", "markov",  "relu",    "sigmoid",
                                              "linear",  "uniform", "identity"};
static const char *const mask_names[] = {"full", "causal", "window", "window-causal"};
static const char *const gap_names[] = {"off", "center", "uniform", "deflate", "outliers"};
static const char *const layernorm_names[] = {"none", "rms", "ln"};
static const char *const skip_names[] = {"none", "plain", "scaled"};
static const char *const output_names[] = {"identity", "gaussian", "orthogonal"};
static const char *const logit_scale_names[] = {"sqrt", "linear"};
static const char *const ln_place_names[] = {"post", "pre", "peri", "output"};
static const char *const ln_scale_names[] = {"unit", "sqrt-d"};
static const char *const mlp_names[] = {"none", "relu", "gelu", "tanh", "swiglu", "geglu"};
static const char *const attention_map_names[] = {"layer", "product"};
static const char *const qk_norm_names[] = {"none", "head", "full"};
static const char *const qk_norm_place_names[] = {"before-rope", "after-rope"};
static const char *const rope_names[] = {"none", "half", "pairs"};
static const char *const input_norm_names[] = {"unit", "sqrt-d"};
static const char *const init_names[] = {"normal",     "xavier",      "orthogonal", "gpt2",
                                         "small-init", "mup",         "deepnorm",   "cutting-skip",
                                         "mimetic",    "trunc-normal"};
static const char *const depth_scale_names[] = {"scheme", "none", "total", "per-layer"};
static const char *const input_names[] = {"orthonormal", "embedding"};
static const char *const positions_names[] = {"none", "learned"};
/* Where the window-layers key ; steps: every layer windowed, Gemma 2 and gpt-oss (1:1, the
   window first), Gemma 3 (5 local, 1 global). */
static const char *const window_layers_stops[] = {"all", "1:1", "5:1"};
static const char *const matrix_init_names[] = {"scheme",     "normal",   "xavier",
                                                "orthogonal", "identity", "zero"};

#define ENUM_NAMES(option, array)                                                                  \
    {                                                                                              \
        option, array, (int)(sizeof array / sizeof array[0])                                       \
    }
const EnumNames ATTENTION_NAMES = ENUM_NAMES("attention", attention_names);
const EnumNames MASK_NAMES = ENUM_NAMES("mask", mask_names);
static const EnumNames WINDOW_LAYERS_STOPS = ENUM_NAMES("window-layers", window_layers_stops);
const EnumNames GAP_NAMES = ENUM_NAMES("gap", gap_names);
const EnumNames LAYERNORM_NAMES = ENUM_NAMES("layernorm", layernorm_names);
const EnumNames SKIP_NAMES = ENUM_NAMES("skip", skip_names);
const EnumNames OUTPUT_NAMES = ENUM_NAMES("wo", output_names);
const EnumNames LOGIT_SCALE_NAMES = ENUM_NAMES("logit-scale", logit_scale_names);
const EnumNames LN_PLACE_NAMES = ENUM_NAMES("ln-place", ln_place_names);
const EnumNames LN_SCALE_NAMES = ENUM_NAMES("ln-scale", ln_scale_names);
const EnumNames MLP_NAMES = ENUM_NAMES("mlp", mlp_names);
const EnumNames INIT_NAMES = ENUM_NAMES("init", init_names);
const EnumNames INPUT_NORM_NAMES = ENUM_NAMES("input-norm", input_norm_names);
const EnumNames DEPTH_SCALE_NAMES = ENUM_NAMES("depth-scale", depth_scale_names);
const EnumNames INPUT_NAMES = ENUM_NAMES("input", input_names);
const EnumNames POSITIONS_NAMES = ENUM_NAMES("positions", positions_names);
const EnumNames ATTENTION_MAP_NAMES = ENUM_NAMES("attention-map", attention_map_names);
const EnumNames QK_NORM_NAMES = ENUM_NAMES("qk-norm", qk_norm_names);
const EnumNames QK_NORM_PLACE_NAMES = ENUM_NAMES("qk-norm-place", qk_norm_place_names);
const EnumNames ROPE_NAMES = ENUM_NAMES("rope", rope_names);
/* Shared by --init-query, --init-key, --init-value, --init-output and --init-mlp. */
const EnumNames MATRIX_INIT_NAMES = ENUM_NAMES("init-query", matrix_init_names);

int EnumNames_find(const EnumNames *e, const char *text)
{
    for (int i = 0; i < e->count; i++)
        if (strcmp(e->names[i], text) == 0)
            return i;
    return -1;
}

const char *EnumNames_list(const EnumNames *e, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < e->count && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? "|" : "", e->names[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return buf;
}

static bool window_in_use(const Config *c)
{
    return c->mask == MASK_WINDOW || c->mask == MASK_WINDOW_CAUSAL;
}

/* Whether the normal scheme's σ_qk draws matrix choice `choice` under c's scheme. */
static bool drawn_by_normal(const Config *c, MatrixInitChoice choice)
{
    return choice == MATRIX_INIT_NORMAL || (choice == MATRIX_INIT_SCHEME && c->init == INIT_NORMAL);
}

static bool sigma_qk_in_use(const Config *c)
{
    return drawn_by_normal(c, c->init_query) || drawn_by_normal(c, c->init_key) ||
           c->attention == ATTENTION_MARKOV;
}

static bool head_in_use(const Config *c)
{
    return c->heads > 1;
}

static bool layernorm_in_use(const Config *c)
{
    return c->layernorm != LAYERNORM_NONE;
}

/* A gain offset matters where a norm has a gain: a sub-block's or QK-norm. */
static bool norm_gain_in_use(const Config *c)
{
    return c->layernorm != LAYERNORM_NONE || Qk_normalised(c);
}

static bool ln_eps_in_use(const Config *c)
{
    return (c->layernorm != LAYERNORM_NONE && c->ln_scale == LN_SCALE_SQRT_D) || Qk_normalised(c);
}

static bool query_key_in_use(const Config *c)
{
    return Attention_has_query_key(c->attention);
}

/* RoPE turns a vector by an orthogonal map and a unit-gain RMSNorm only scales it, so the two
   orders differ only with both on (and then by rounding alone at initialisation). */
static bool qk_norm_place_in_use(const Config *c)
{
    return Qk_normalised(c) && c->rope != ROPE_NONE;
}

static bool rope_in_use(const Config *c)
{
    return c->rope != ROPE_NONE && Attention_has_query_key(c->attention);
}

static bool mlp_in_use(const Config *c)
{
    return c->mlp != MLP_NONE;
}

static bool mlp_ratio_in_use(const Config *c)
{
    return c->mlp != MLP_NONE && c->mlp_hidden == 0;
}

static bool softmax_in_use(const Config *c)
{
    return c->attention == ATTENTION_SOFTMAX;
}

/* 0 leaves the width to the ratio, the one in use then. */
static bool mlp_hidden_in_use(const Config *c)
{
    return c->mlp != MLP_NONE && c->mlp_hidden > 0;
}

static bool skip_in_use(const Config *c)
{
    return c->skip != SKIP_NONE;
}

/* The cutting-skip scheme sets W^Q W^Kᵀ = αZ + βI as the logits' matrix itself. */
static bool logit_scale_in_use(const Config *c)
{
    return c->attention != ATTENTION_MARKOV && c->attention != ATTENTION_UNIFORM &&
           c->attention != ATTENTION_IDENTITY && c->init != INIT_CUTTING_SKIP;
}

static bool cutting_skip_in_use(const Config *c)
{
    return c->init == INIT_CUTTING_SKIP;
}

/* Both factorised schemes draw W^Q W^Kᵀ = αZ + βI. */
static bool query_key_factor_in_use(const Config *c)
{
    return c->init == INIT_CUTTING_SKIP || c->init == INIT_MIMETIC;
}

static bool mimetic_in_use(const Config *c)
{
    return c->init == INIT_MIMETIC;
}

static bool output_in_use(const Config *c)
{
    return c->output != OUTPUT_IDENTITY;
}

static bool init_std_in_use(const Config *c)
{
    return Init_uses_one_std(c);
}

/* The factorised schemes draw W^O as a factor, which no std scales. */
static bool depth_scale_in_use(const Config *c)
{
    return (c->output != OUTPUT_IDENTITY || c->mlp != MLP_NONE) && !query_key_factor_in_use(c);
}

static bool vocab_in_use(const Config *c)
{
    return c->input == INPUT_EMBEDDING;
}

/* The embedding's rows take --init-std under the schemes that have one std, the input norm
   otherwise (Layer_input). */
static bool input_norm_in_use(const Config *c)
{
    return c->input == INPUT_ORTHONORMAL || !Init_uses_one_std(c);
}

/* Only orthonormal rows need T <= d. */
static bool orthonormal_input(const Config *c)
{
    return c->input == INPUT_ORTHONORMAL;
}

/* Table order is the order of --help, the presets, the help overlay and the status line. */
static const Setting SETTINGS[] = {
    {.name = "tokens",
     .json = "T",
     .letter = 'T',
     .argument = "N",
     .help = "tokens (T > d with --input embedding)",
     .kind = SETTING_INT,
     .min = CONFIG_TOKENS_MIN,
     .max = CONFIG_TOKENS_MAX,
     .fallback = 256,
     .offset = offsetof(Config, tokens),
     .reuse = REUSE_WEIGHTS,
     .bound = "width",
     .raises_bound = true,
     .bound_reason = "the input needs T ≤ d",
     .bound_in_use = orthonormal_input,
     .raise_key = 'T',
     .lower_key = 't',
     .step = STEP_DOUBLE,
     .key_label = "tokens T",
     .label = "T"},
    {.name = "width",
     .json = "d",
     .letter = 'd',
     .argument = "N",
     .help = "width d = d_qk",
     .kind = SETTING_INT,
     .min = CONFIG_WIDTH_MIN,
     .max = CONFIG_WIDTH_MAX,
     .fallback = 256,
     .offset = offsetof(Config, width),
     .reuse = REUSE_WEIGHTS,
     .raise_key = 'D',
     .lower_key = 'd',
     .step = STEP_DOUBLE,
     .key_label = "width d",
     .label = "d"},
    {.name = "depth",
     .json = "depth",
     .letter = 'L',
     .argument = "N",
     .help = "layers",
     .kind = SETTING_INT,
     .min = CONFIG_DEPTH_MIN,
     .max = CONFIG_DEPTH_MAX,
     .fallback = 8,
     .offset = offsetof(Config, depth),
     .reuse = REUSE_DEPTH,
     .raise_key = 'L',
     .lower_key = 'l',
     .step = STEP_ONE,
     .key_label = "depth",
     .label = "L"},
    {.name = "sigma-qk",
     .json = "sigma_qk",
     .letter = 's',
     .argument = "X",
     .help = "std of the query/key weights",
     .kind = SETTING_DOUBLE,
     .min = 0,
     .max = CONFIG_SIGMA_QK_MAX,
     .fallback = 1.0,
     .offset = offsetof(Config, sigma_qk),
     .reuse = REUSE_WEIGHTS,
     .in_use = sigma_qk_in_use,
     .unused_note = "σ_qk is the normal scheme's: this --init draws W^Q, W^K itself",
     .raise_key = 'S',
     .lower_key = 's',
     .step = STEP_QUARTER,
     /* Below 1/64 attention is uniform for every purpose. */
     .key_min = 1.0 / 64,
     .key_label = "σ_qk",
     .label = "σ_qk"},
    {.name = "attention",
     .json = "attention",
     .letter = 'a',
     .argument = "K",
     .kind = SETTING_ENUM,
     .names = &ATTENTION_NAMES,
     .fallback = ATTENTION_SOFTMAX,
     .offset = offsetof(Config, attention),
     .reuse = REUSE_WEIGHTS,
     .raise_key = 'a',
     .lower_key = 'A',
     .step = STEP_CYCLE,
     .key_label = "attention kind",
     .label = "attn"},
    {.name = "mask",
     .json = "mask",
     .letter = 'm',
     .argument = "M",
     .kind = SETTING_ENUM,
     .names = &MASK_NAMES,
     .fallback = MASK_FULL,
     .offset = offsetof(Config, mask),
     .reuse = REUSE_WEIGHTS,
     .raise_key = 'm',
     .lower_key = 'M',
     .step = STEP_CYCLE,
     .key_label = "mask",
     .label = "mask"},
    {.name = "window",
     .json = "window",
     .letter = 'w',
     .argument = "W",
     .help = "window half-width",
     .kind = SETTING_INT,
     .min = 1,
     .max = CONFIG_TOKENS_MAX - 1,
     .fallback = 1,
     .offset = offsetof(Config, window),
     .reuse = REUSE_WEIGHTS,
     .bound = "tokens",
     .bound_offset = -1,
     .bound_reason = "w < T",
     .in_use = window_in_use,
     .unused_note = "w is used by the window masks (m)",
     .raise_key = 'W',
     .lower_key = 'w',
     .step = STEP_ONE,
     .key_label = "window w",
     .label = "w"},
    {.name = "window-layers",
     .json = "window_layers",
     .argument = "P",
     .help = "layers with the window mask (L) or its global one (G): all, a:b (a L, b G, "
             "Gemma 3: 5:1), or letters (LG: Gemma 2), repeated",
     .kind = SETTING_PATTERN,
     .max = (double)(1ull << (WINDOW_LAYERS_PERIOD_MAX + 1)), /* the codes' bound */
     .names = &WINDOW_LAYERS_STOPS,
     .fallback = 0,
     .offset = offsetof(Config, window_layers),
     .reuse = REUSE_WEIGHTS,
     .in_use = window_in_use,
     .unused_note = "the pattern picks window or global masks per layer: m to a window mask",
     .raise_key = ';',
     .step = STEP_CYCLE,
     .key_label = "window layers",
     .label = "w layers",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "gap",
     .json = "gap",
     .letter = 'g',
     .argument = "G",
     .kind = SETTING_ENUM,
     .names = &GAP_NAMES,
     .fallback = GAP_OFF,
     .offset = offsetof(Config, gap),
     .reuse = REUSE_GAP,
     .raise_key = 'G',
     .lower_key = 'g',
     .step = STEP_TOGGLE,
     .key_label = "gap removal",
     .label = "gap"},
    {.name = "layernorm",
     .json = "layernorm",
     .letter = 'n',
     .argument = "N",
     .kind = SETTING_ENUM,
     .names = &LAYERNORM_NAMES,
     .fallback = LAYERNORM_NONE,
     .offset = offsetof(Config, layernorm),
     .reuse = REUSE_WEIGHTS,
     .raise_key = 'n',
     .lower_key = 'N',
     .step = STEP_CYCLE,
     .key_label = "LayerNorm",
     .label = "LN"},
    {.name = "skip",
     .json = "skip",
     .letter = 'k',
     .argument = "S",
     .kind = SETTING_ENUM,
     .names = &SKIP_NAMES,
     .fallback = SKIP_NONE,
     .offset = offsetof(Config, skip),
     .reuse = REUSE_WEIGHTS,
     .raise_key = 'k',
     .lower_key = 'K',
     .step = STEP_CYCLE,
     .key_label = "skip",
     .label = "skip"},
    {.name = "heads",
     .json = "heads",
     .argument = "H",
     .help = "attention heads of width d/H (H divides d)",
     .kind = SETTING_INT,
     .min = 1,
     .max = CONFIG_WIDTH_MAX,
     .fallback = 1,
     .offset = offsetof(Config, heads),
     .reuse = REUSE_WEIGHTS,
     .bound = "width",
     .bound_reason = "H ≤ d",
     .divides = "width",
     .raise_key = ')',
     .lower_key = '(',
     .step = STEP_DOUBLE,
     .key_label = "heads H",
     .min_note = "one head is the fewest",
     .label = "H",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "head",
     .json = "head",
     .argument = "N",
     .help = "head whose attention matrix is shown",
     .kind = SETTING_INT,
     .min = 1,
     .max = CONFIG_WIDTH_MAX,
     .fallback = 1,
     .offset = offsetof(Config, head),
     .reuse = REUSE_SHOWN,
     .bound = "heads",
     .bound_reason = "head ≤ H",
     .in_use = head_in_use,
     .unused_note = "one head: raise H (H) to choose another",
     .raise_key = '}',
     .lower_key = '{',
     .step = STEP_ONE,
     .key_label = "shown head",
     .min_note = "head 1 is the first",
     .label = "head",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "kv-heads",
     .json = "kv_heads",
     .argument = "G",
     .help = "key/value heads G, G divides H (1: multi-query); 0: one per head",
     .kind = SETTING_INT,
     .min = 0,
     .max = CONFIG_WIDTH_MAX,
     .fallback = 0,
     .offset = offsetof(Config, kv_heads),
     .reuse = REUSE_WEIGHTS,
     .bound = "heads",
     .bound_reason = "G ≤ H",
     .in_use = head_in_use,
     .unused_note = "one head has its own keys and values: raise H (H) to group them",
     .key_label = "K/V heads G",
     .label = "G",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "wo",
     .json = "wo",
     .argument = "P",
     .help = "output W^O",
     .kind = SETTING_ENUM,
     .names = &OUTPUT_NAMES,
     .fallback = OUTPUT_IDENTITY,
     .offset = offsetof(Config, output),
     .reuse = REUSE_WEIGHTS,
     .raise_key = 'O',
     .lower_key = 'U',
     .step = STEP_CYCLE,
     .key_label = "projection W^O",
     .label = "W^O",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "logit-scale",
     .json = "logit_scale",
     .argument = "S",
     .help = "logits ×1/√d_h or ×1/d_h (μP)",
     .kind = SETTING_ENUM,
     .names = &LOGIT_SCALE_NAMES,
     .fallback = LOGIT_SCALE_SQRT,
     .offset = offsetof(Config, logit_scale),
     .reuse = REUSE_WEIGHTS,
     .in_use = logit_scale_in_use,
     .unused_note = "the logit scale acts on softmax, relu, sigmoid and linear attention",
     .raise_key = 'Y',
     .step = STEP_CYCLE,
     .key_label = "logit scale",
     .label = "scale",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "ln-place",
     .json = "ln_place",
     .argument = "P",
     .help = "LN(X + F X), or pre X + F(LN X), peri X + LN(F(LN X)), output X + LN(F X)",
     .kind = SETTING_ENUM,
     .names = &LN_PLACE_NAMES,
     .fallback = LN_PLACE_POST,
     .offset = offsetof(Config, ln_place),
     .reuse = REUSE_WEIGHTS,
     .in_use = layernorm_in_use,
     .unused_note = "the LayerNorm's place matters once there is one (n)",
     .raise_key = 'F',
     .lower_key = 'f',
     .step = STEP_CYCLE,
     .key_label = "LN place",
     .label = "LN@",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "ln-scale",
     .json = "ln_scale",
     .argument = "S",
     .help = "LN rows: unit, or √d (PyTorch)",
     .kind = SETTING_ENUM,
     .names = &LN_SCALE_NAMES,
     .fallback = LN_SCALE_UNIT,
     .offset = offsetof(Config, ln_scale),
     .reuse = REUSE_WEIGHTS,
     .in_use = layernorm_in_use,
     .unused_note = "the LayerNorm's scale matters once there is one (n)",
     .raise_key = 'I',
     .lower_key = 'i',
     .step = STEP_CYCLE,
     .key_label = "LN row scale",
     .label = "LN rows",
     .show = SHOW_UNLESS_DEFAULT},
    /* ε in PyTorch's place, √(mean(x²) + ε); unit rows are exact x/‖x‖ and take none. */
    {.name = "ln-eps",
     .json = "ln_eps",
     .argument = "E",
     .help = "epsilon inside the root of PyTorch's LN rows; 0: exact",
     .kind = SETTING_DOUBLE,
     .min = 0,
     .max = 1,
     .min_included = true,
     .fallback = CONFIG_LN_EPS_DEFAULT,
     .offset = offsetof(Config, ln_eps),
     .reuse = REUSE_WEIGHTS,
     .in_use = ln_eps_in_use,
     .unused_note = "ε acts in PyTorch's rows (--ln-scale sqrt-d, I) and in QK-norm (H); unit rows "
                    "are exact",
     .key_label = "LN ε",
     .label = "ε",
     .show = SHOW_UNLESS_DEFAULT},
    /* Gemma's RMSNorm multiplies by 1 + w (its w starts at 0): a family's convention that the
       tensors' names cannot tell (docs/weights.md). */
    {.name = "norm-gain-offset",
     .json = "norm_gain_offset",
     .argument = "O",
     .help = "a checkpoint's norm gains are O + w: 1 for Gemma's RMSNorm, else 0",
     .kind = SETTING_INT,
     .min = 0,
     .max = 1,
     .fallback = 0,
     .offset = offsetof(Config, norm_gain_offset),
     .reuse = REUSE_WEIGHTS,
     .in_use = norm_gain_in_use,
     .unused_note = "the gain offset acts on the norms' gains (n, H)",
     .key_label = "norm gain offset",
     .label = "gain o",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "qk-norm",
     .json = "qk_norm",
     .argument = "Q",
     .help = "RMSNorm on q, k over each head's d_h or the full width",
     .kind = SETTING_ENUM,
     .names = &QK_NORM_NAMES,
     .fallback = QK_NORM_NONE,
     .offset = offsetof(Config, qk_norm),
     .reuse = REUSE_WEIGHTS,
     .in_use = query_key_in_use,
     .unused_note = "QK-norm acts on queries and keys: softmax, relu, sigmoid, linear attention",
     .raise_key = 'H',
     .step = STEP_CYCLE,
     .key_label = "QK-norm",
     .label = "QK-norm",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "qk-norm-place",
     .json = "qk_norm_place",
     .argument = "P",
     .help = "QK-norm before RoPE (Qwen3, OLMo 2) or after (Llama 4)",
     .kind = SETTING_ENUM,
     .names = &QK_NORM_PLACE_NAMES,
     .fallback = QK_NORM_BEFORE_ROPE,
     .offset = offsetof(Config, qk_norm_place),
     .reuse = REUSE_WEIGHTS,
     .in_use = qk_norm_place_in_use,
     .unused_note = "the place orders QK-norm (H) and RoPE (@): it matters with both on",
     .raise_key = '^',
     .step = STEP_CYCLE,
     .key_label = "QK-norm place",
     .label = "QK-norm@",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "rope",
     .json = "rope",
     .argument = "R",
     .help = "rotary positions: HF's rotate_half or Meta's adjacent pairs",
     .kind = SETTING_ENUM,
     .names = &ROPE_NAMES,
     .fallback = ROPE_NONE,
     .offset = offsetof(Config, rope),
     .reuse = REUSE_WEIGHTS,
     .in_use = query_key_in_use,
     .unused_note = "RoPE turns queries and keys: softmax, relu, sigmoid, linear attention",
     .raise_key = '@',
     .step = STEP_CYCLE,
     .key_label = "RoPE",
     .label = "RoPE",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "rope-theta",
     .json = "rope_theta",
     .argument = "X",
     .help = "RoPE base theta (Llama 3, OLMo 2: 500000)",
     .kind = SETTING_DOUBLE,
     .min = 1,
     .max = 1e9,
     .fallback = 10000,
     .offset = offsetof(Config, rope_theta),
     .reuse = REUSE_WEIGHTS,
     .in_use = rope_in_use,
     .unused_note = "θ is RoPE's (@ turns it on)",
     .key_label = "RoPE θ",
     .label = "θ",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "rope-fraction",
     .json = "rope_fraction",
     .argument = "F",
     .help = "rotate the first F·d_h dims of each head, down to an even count",
     .kind = SETTING_DOUBLE,
     .min = 0,
     .max = 1,
     .min_included = true,
     .fallback = 1,
     .offset = offsetof(Config, rope_fraction),
     .reuse = REUSE_WEIGHTS,
     .in_use = rope_in_use,
     .unused_note = "the rotated fraction is RoPE's (@ turns it on)",
     .key_label = "RoPE fraction",
     .label = "RoPE F",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "nope-every",
     .json = "nope_every",
     .argument = "K",
     .help = "every K-th layer has no RoPE (Llama 4: 4); 0: none",
     .kind = SETTING_INT,
     .min = 0,
     .max = CONFIG_DEPTH_MAX,
     .fallback = 0,
     .offset = offsetof(Config, nope_every),
     .reuse = REUSE_WEIGHTS,
     .in_use = rope_in_use,
     .unused_note = "layers without RoPE need RoPE on (@)",
     .key_label = "NoPE every",
     .label = "NoPE every",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "logit-softcap",
     .json = "logit_softcap",
     .argument = "C",
     .help = "attention logits C·tanh(S/C) (Gemma 2: 50); 0: off",
     .kind = SETTING_DOUBLE,
     .min = 0,
     .max = 1e6,
     .min_included = true,
     .fallback = 0,
     .offset = offsetof(Config, logit_softcap),
     .reuse = REUSE_WEIGHTS,
     .in_use = query_key_in_use,
     .unused_note = "the cap acts on logits: softmax, relu, sigmoid, linear attention",
     .key_label = "logit soft-cap",
     .label = "cap",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "sink",
     .json = "sink",
     .argument = "S",
     .help = "each head's sink logit in the softmax's denominator (gpt-oss)",
     .kind = SETTING_DOUBLE,
     .min = -1e6,
     .max = 1e6,
     .min_included = true,
     .off_word = "none",
     .fallback = -INFINITY,
     .offset = offsetof(Config, sink),
     .reuse = REUSE_WEIGHTS,
     .in_use = softmax_in_use,
     .unused_note = "the sink joins the softmax's denominator: softmax attention",
     .raise_key = '%',
     .step = STEP_OFF_UP,
     .key_max = 8,
     .key_label = "sink",
     .label = "sink",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "sink-std",
     .json = "sink_std",
     .argument = "s",
     .help = "each head's sink drawn S + N(0, s^2) (gpt-oss: 0.02)",
     .kind = SETTING_DOUBLE,
     .min = 0,
     .max = 1e3,
     .min_included = true,
     .fallback = 0,
     .offset = offsetof(Config, sink_std),
     .reuse = REUSE_WEIGHTS,
     .in_use = Config_has_sink,
     .unused_note = "the sinks' spread needs a sink (%)",
     .key_label = "sink std",
     .label = "sink std",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "skip-gain",
     .json = "skip_gain",
     .argument = "A",
     .help = "a in X <- a·X + b·F(X), with a skip",
     .kind = SETTING_DOUBLE,
     .min = 0,
     .max = CONFIG_GAIN_MAX,
     .min_included = true,
     .fallback = 1.0,
     .offset = offsetof(Config, skip_gain),
     .reuse = REUSE_WEIGHTS,
     .in_use = skip_in_use,
     .unused_note = "the skip gain acts with a skip (k)",
     .raise_key = 'J',
     .lower_key = 'j',
     .step = STEP_QUARTER,
     .key_min = 1.0 / 64,
     .key_label = "skip gain a",
     .label = "a",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "branch-gain",
     .json = "branch_gain",
     .argument = "B",
     .help = "b in X <- a·X + b·F(X); 0 is ReZero",
     .kind = SETTING_DOUBLE,
     .min = 0,
     .max = CONFIG_GAIN_MAX,
     .min_included = true,
     .fallback = 1.0,
     .offset = offsetof(Config, branch_gain),
     .reuse = REUSE_WEIGHTS,
     .raise_key = 'B',
     .lower_key = 'b',
     .step = STEP_QUARTER,
     .key_min = 1.0 / 64,
     .key_label = "branch gain b",
     .label = "b",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "mlp",
     .json = "mlp",
     .argument = "M",
     .help = "MLP after the attention",
     .kind = SETTING_ENUM,
     .names = &MLP_NAMES,
     .fallback = MLP_NONE,
     .offset = offsetof(Config, mlp),
     .reuse = REUSE_WEIGHTS,
     .raise_key = 'X',
     .step = STEP_CYCLE,
     .key_label = "MLP activation",
     .label = "MLP",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "mlp-ratio",
     .json = "mlp_ratio",
     .argument = "R",
     .help = "MLP hidden width R·d",
     .kind = SETTING_INT,
     .min = 1,
     .max = CONFIG_MLP_RATIO_MAX,
     .fallback = 4,
     .offset = offsetof(Config, mlp_ratio),
     .reuse = REUSE_WEIGHTS,
     .in_use = mlp_ratio_in_use,
     .unused_note = "the ratio is the MLP's (X turns one on), unless --mlp-hidden sets the width",
     .raise_key = 'R',
     .lower_key = 'u',
     .step = STEP_DOUBLE,
     .key_label = "MLP ratio",
     .label = "R",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "mlp-hidden",
     .json = "mlp_hidden",
     .argument = "N",
     .help = "MLP hidden width N (Llama 3 8B: 14336), before --mlp-ratio; 0: R·d",
     .kind = SETTING_INT,
     .min = 0,
     .max = CONFIG_WIDTH_MAX * CONFIG_MLP_RATIO_MAX,
     .fallback = 0,
     .offset = offsetof(Config, mlp_hidden),
     .reuse = REUSE_WEIGHTS,
     .in_use = mlp_hidden_in_use,
     .unused_note = "the hidden width is the MLP's (X turns one on); 0: R·d",
     .key_label = "MLP hidden width",
     .label = "MLP N",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "init",
     .json = "init",
     .argument = "I",
     .kind = SETTING_ENUM,
     .names = &INIT_NAMES,
     .fallback = INIT_NORMAL,
     .offset = offsetof(Config, init),
     .reuse = REUSE_WEIGHTS,
     .raise_key = 'C',
     .step = STEP_CYCLE,
     .key_label = "init scheme",
     .label = "init",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "init-std",
     .json = "init_std",
     .argument = "S",
     .help = "std of gpt2, trunc-normal and their embedding input (HF's initializer_range)",
     .kind = SETTING_DOUBLE,
     .min = 0,
     .max = 4,
     .fallback = CONFIG_INIT_STD_DEFAULT,
     .offset = offsetof(Config, init_std),
     .reuse = REUSE_WEIGHTS,
     .in_use = init_std_in_use,
     .unused_note = "S is the std of --init gpt2 and trunc-normal",
     .key_label = "init std S",
     .label = "S",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "depth-scale",
     .json = "depth_scale",
     .argument = "D",
     .help = "W^O, W2, gated up: std ÷√(2L) or ÷√(2ℓ) at layer ℓ; scheme: gpt2's",
     .kind = SETTING_ENUM,
     .names = &DEPTH_SCALE_NAMES,
     .fallback = DEPTH_SCALE_SCHEME,
     .offset = offsetof(Config, depth_scale),
     .reuse = REUSE_WEIGHTS,
     .in_use = depth_scale_in_use,
     .unused_note = "the depth scale acts on a drawn W^O (--wo) or MLP (X), not on factors",
     .raise_key = '&',
     .step = STEP_CYCLE,
     .key_label = "depth scale",
     .label = "depth scale",
     .show = SHOW_UNLESS_DEFAULT},
    /* The initialisation of "Cutting the skip" (docs/model.md §1.10). */
    {.name = "init-alpha",
     .json = "init_alpha",
     .argument = "X",
     .help = "cutting-skip, mimetic: alpha of W^Q W^K^T = alpha Z + beta I",
     .kind = SETTING_DOUBLE,
     .min = 0,
     .max = 100,
     .fallback = 0.1,
     .offset = offsetof(Config, init_alpha),
     .reuse = REUSE_WEIGHTS,
     .in_use = query_key_factor_in_use,
     .unused_note = "α is used by --init cutting-skip and mimetic",
     /* The letters are taken: + and − read as up and down, × and ÷ (*, /) are c's. */
     .raise_key = '+',
     .lower_key = '-',
     .step = STEP_QUARTER,
     .key_min = 1.0 / 1024,
     .key_max = 64,
     .key_label = "α",
     .label = "α",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "init-beta",
     .json = "init_beta",
     .argument = "X",
     .help = "cutting-skip, mimetic: beta",
     .kind = SETTING_DOUBLE,
     .min = -50,
     .max = 50,
     .fallback = 5.0,
     .offset = offsetof(Config, init_beta),
     .reuse = REUSE_WEIGHTS,
     .in_use = query_key_factor_in_use,
     .unused_note = "β is used by --init cutting-skip and mimetic",
     /* β adds to the logits' diagonal: steps of 1 (the paper's 0 and 5 are five apart);
        . and , are > and < unshifted. */
     .raise_key = '.',
     .lower_key = ',',
     .step = STEP_ONE,
     .key_label = "β",
     .label = "β",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "init-c",
     .json = "init_c",
     .argument = "X",
     .help = "cutting-skip: W^V W^O = c^2 orthogonal",
     .kind = SETTING_DOUBLE,
     .min = 0,
     .max = 100,
     .fallback = 1.0,
     .offset = offsetof(Config, init_c),
     .reuse = REUSE_WEIGHTS,
     .in_use = cutting_skip_in_use,
     .unused_note = "c is used by --init cutting-skip",
     .raise_key = '*',
     .lower_key = '/',
     .step = STEP_QUARTER,
     .key_min = 1.0 / 16,
     .key_max = 16,
     .key_label = "c",
     .label = "c",
     .show = SHOW_UNLESS_DEFAULT},
    /* Mimetic initialisation's value-output pair (docs/model.md §1.10). */
    {.name = "init-vo-alpha",
     .json = "init_vo_alpha",
     .argument = "X",
     .help = "mimetic: alpha2 of W^V W^O = alpha2 Z2 - beta2 I",
     .kind = SETTING_DOUBLE,
     .min = 0,
     .max = 100,
     .min_included = true,
     .fallback = 1.0,
     .offset = offsetof(Config, init_vo_alpha),
     .reuse = REUSE_WEIGHTS,
     .in_use = mimetic_in_use,
     .unused_note = "α₂ is used by --init mimetic",
     .key_label = "α₂",
     .label = "α₂",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "init-vo-beta",
     .json = "init_vo_beta",
     .argument = "X",
     .help = "mimetic: beta2",
     .kind = SETTING_DOUBLE,
     .min = -50,
     .max = 50,
     .fallback = 1.0,
     .offset = offsetof(Config, init_vo_beta),
     .reuse = REUSE_WEIGHTS,
     .in_use = mimetic_in_use,
     .unused_note = "β₂ is used by --init mimetic",
     .key_label = "β₂",
     .label = "β₂",
     .show = SHOW_UNLESS_DEFAULT},
    /* Per-matrix choices over the scheme's (docs/model.md §1.10). */
    {.name = "init-query",
     .json = "init_query",
     .argument = "M",
     .help = "W^Q: the scheme's, or this one",
     .kind = SETTING_ENUM,
     .names = &MATRIX_INIT_NAMES,
     .fallback = MATRIX_INIT_SCHEME,
     .offset = offsetof(Config, init_query),
     .reuse = REUSE_WEIGHTS,
     .key_label = "W^Q init",
     .label = "W^Q",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "init-key",
     .json = "init_key",
     .argument = "M",
     .help = "W^K: the scheme's, or this one",
     .kind = SETTING_ENUM,
     .names = &MATRIX_INIT_NAMES,
     .fallback = MATRIX_INIT_SCHEME,
     .offset = offsetof(Config, init_key),
     .reuse = REUSE_WEIGHTS,
     .key_label = "W^K init",
     .label = "W^K",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "init-value",
     .json = "init_value",
     .argument = "M",
     .help = "W^V: the scheme's, or this one",
     .kind = SETTING_ENUM,
     .names = &MATRIX_INIT_NAMES,
     .fallback = MATRIX_INIT_SCHEME,
     .offset = offsetof(Config, init_value),
     .reuse = REUSE_WEIGHTS,
     .key_label = "W^V init",
     .label = "W^V",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "init-output",
     .json = "init_output",
     .argument = "M",
     .help = "W^O: the scheme's, or this one",
     .kind = SETTING_ENUM,
     .names = &MATRIX_INIT_NAMES,
     .fallback = MATRIX_INIT_SCHEME,
     .offset = offsetof(Config, init_output),
     .reuse = REUSE_WEIGHTS,
     .in_use = output_in_use,
     .unused_note = "W^O's initialisation matters once there is one (--wo)",
     .key_label = "W^O init",
     .label = "W^O init",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "init-mlp",
     .json = "init_mlp",
     .argument = "M",
     .help = "the MLP's W1, W2: the scheme's, or this one",
     .kind = SETTING_ENUM,
     .names = &MATRIX_INIT_NAMES,
     .fallback = MATRIX_INIT_SCHEME,
     .offset = offsetof(Config, init_mlp),
     .reuse = REUSE_WEIGHTS,
     .in_use = mlp_in_use,
     .unused_note = "the MLP's initialisation matters once there is one (X)",
     .key_label = "MLP init",
     .label = "MLP init",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "input",
     .json = "input",
     .argument = "K",
     .help = "X0: orthonormal rows (T <= d), or embedding rows of random token ids",
     .kind = SETTING_ENUM,
     .names = &INPUT_NAMES,
     .fallback = INPUT_ORTHONORMAL,
     .offset = offsetof(Config, input),
     .reuse = REUSE_WEIGHTS,
     .raise_key = '=',
     .step = STEP_CYCLE,
     .key_label = "input kind",
     .label = "X0",
     .show = SHOW_UNLESS_DEFAULT},
    /* GPT-2's vocabulary: the block attnscope models first is GPT-2's. */
    {.name = "vocab",
     .json = "vocab",
     .argument = "V",
     .help = "embedding rows V the uniform token ids index (GPT-2's 50257)",
     .kind = SETTING_INT,
     .min = 1,
     .max = 1 << 24,
     .fallback = 50257,
     .offset = offsetof(Config, vocab),
     .reuse = REUSE_WEIGHTS,
     .in_use = vocab_in_use,
     .unused_note = "V is the embedding input's (= turns it on)",
     .key_label = "vocabulary V",
     .label = "V",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "positions",
     .json = "positions",
     .argument = "P",
     .help = "embedding rows plus learned positions N(0, (S/2)^2), GPT-2's wpe",
     .kind = SETTING_ENUM,
     .names = &POSITIONS_NAMES,
     .fallback = POSITIONS_NONE,
     .offset = offsetof(Config, positions),
     .reuse = REUSE_WEIGHTS,
     .in_use = vocab_in_use,
     .unused_note = "positions are added to the embedding input's rows (= turns it on)",
     .key_label = "positions",
     .label = "positions",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "input-norm",
     .json = "input_norm",
     .argument = "N",
     .help = "input rows' norm",
     .kind = SETTING_ENUM,
     .names = &INPUT_NORM_NAMES,
     .fallback = INPUT_NORM_UNIT,
     .offset = offsetof(Config, input_norm),
     .reuse = REUSE_WEIGHTS,
     .in_use = input_norm_in_use,
     .unused_note = "the embedding's rows take --init-std under gpt2 and trunc-normal",
     .raise_key = 'Q',
     .step = STEP_CYCLE,
     .key_label = "input norm",
     .label = "X0 rows",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "layer",
     .json = "layer",
     .letter = 'l',
     .argument = "N",
     .help = "layer whose attention matrix is shown",
     .kind = SETTING_INT,
     .min = 1,
     .max = CONFIG_DEPTH_MAX,
     .fallback = 1,
     .offset = offsetof(Config, layer),
     .reuse = REUSE_SHOWN,
     .bound = "depth",
     .bound_reason = "layer ≤ depth",
     .raise_key = ']',
     .lower_key = '[',
     .step = STEP_ONE,
     .key_label = "shown layer",
     .min_note = "layer 1 is the first",
     .label = "layer",
     .show = SHOW_OF_BOUND},
    {.name = "attention-map",
     .json = "attention_map",
     .argument = "M",
     .help = "map of the shown layer: its A, or the product A_l...A_1",
     .kind = SETTING_ENUM,
     .names = &ATTENTION_MAP_NAMES,
     .fallback = ATTENTION_MAP_LAYER,
     .offset = offsetof(Config, attention_map),
     .reuse = REUSE_SHOWN,
     .raise_key = 'y',
     .step = STEP_CYCLE,
     .key_label = "attention map",
     .label = "map",
     .show = SHOW_UNLESS_DEFAULT},
    {.name = "seed",
     .json = "seed",
     .argument = "N",
     .help = "random seed",
     .kind = SETTING_SEED,
     .min = 0,
     .max = (double)CONFIG_SEED_MAX,
     .fallback = 1,
     .offset = offsetof(Config, seed),
     .reuse = REUSE_SEED,
     .raise_key = 'r',
     .step = STEP_NEW,
     .key_label = "seed",
     .label = "seed"},
    {.name = "seeds",
     .json = "seeds",
     .argument = "N",
     .help = "ensemble size for the stable-rank curves",
     .kind = SETTING_INT,
     .min = 1,
     .max = CONFIG_SEEDS_MAX,
     .fallback = 1,
     .offset = offsetof(Config, seeds),
     .reuse = REUSE_ENSEMBLE,
     .raise_key = 'E',
     .lower_key = 'e',
     .step = STEP_DOUBLE,
     .key_max = CONFIG_SEEDS_KEY_MAX,
     .key_label = "ensemble seeds",
     .min_note = "the ensemble is one seed already",
     .label = "seeds",
     .show = SHOW_UNLESS_DEFAULT},
};
enum { SETTINGS_COUNT = sizeof SETTINGS / sizeof SETTINGS[0] };
_Static_assert((int)SETTINGS_COUNT <= (int)SETTINGS_MAX, "raise SETTINGS_MAX in config.h");

int Settings_count(void)
{
    return SETTINGS_COUNT;
}

const Setting *Settings_at(int index)
{
    return index >= 0 && index < SETTINGS_COUNT ? &SETTINGS[index] : NULL;
}

const Setting *Settings_find(const char *name)
{
    for (int i = 0; i < SETTINGS_COUNT; i++)
        if (strcmp(SETTINGS[i].name, name) == 0)
            return &SETTINGS[i];
    return NULL;
}

/* Enumerations are read and written as int: GCC gives these (no negative names) unsigned
   int, which an int may alias. */
double Setting_get(const Setting *s, const Config *c)
{
    const char *field = (const char *)c + s->offset;
    switch (s->kind) {
    case SETTING_DOUBLE:
    case SETTING_PATTERN:
        return *(const double *)field;
    case SETTING_SEED:
        return (double)*(const uint64_t *)field;
    case SETTING_INT:
    case SETTING_ENUM:
        break;
    }
    return *(const int *)field;
}

void Setting_put(const Setting *s, Config *c, double value)
{
    char *field = (char *)c + s->offset;
    switch (s->kind) {
    case SETTING_DOUBLE:
    case SETTING_PATTERN:
        *(double *)field = value;
        return;
    case SETTING_SEED:
        *(uint64_t *)field = (uint64_t)value;
        return;
    case SETTING_INT:
    case SETTING_ENUM:
        break;
    }
    *(int *)field = (int)value;
}

const Setting *Setting_bound(const Setting *s, const Config *c)
{
    if (!s->bound || (s->bound_in_use && !s->bound_in_use(c)))
        return NULL;
    return Settings_find(s->bound);
}

double Setting_limit(const Setting *s, const Config *c)
{
    const Setting *b = Setting_bound(s, c);
    double bound = b ? Setting_get(b, c) + s->bound_offset : s->max;
    return bound < s->max ? bound : s->max;
}

const char *Setting_spelled(const Setting *s, char *buf, size_t size)
{
    if (s->letter)
        snprintf(buf, size, "-%c/--%s", s->letter, s->name);
    else
        snprintf(buf, size, "--%s", s->name);
    return buf;
}

int Setting_parse(const Setting *s, Config *c, const char *text, char *err, size_t size)
{
    /* The value cut after 40 bytes, so that what is accepted always fits in the message (a
       preset line may be megabytes long). */
    char spelled[32], opt[96];
    snprintf(opt, sizeof opt, "%s '%.40s%s'", Setting_spelled(s, spelled, sizeof spelled), text,
             strlen(text) > 40 ? "..." : "");
    char *end = NULL;
    errno = 0;
    /* strtol and strtod skip leading blanks: refuse them, as trailing ones are. */
    bool blank = *text == ' ' || (*text >= '\t' && *text <= '\r');
    switch (s->kind) {
    case SETTING_INT: {
        long v = strtol(text, &end, 10);
        if (*text == '\0' || blank || *end != '\0' || errno == ERANGE || v < s->min || v > s->max) {
            snprintf(err, size, "%s: accepted a whole number %.0f..%.0f", opt, s->min, s->max);
            return -1;
        }
        Setting_put(s, c, (double)v);
        return 0;
    }
    case SETTING_DOUBLE: {
        if (s->off_word && strcmp(text, s->off_word) == 0) {
            Setting_put(s, c, -INFINITY);
            return 0;
        }
        double v = strtod(text, &end);
        bool above_min = s->min_included ? v >= s->min : v > s->min;
        /* strtod reads C's hexadecimal floats too; the contract is decimal numbers. */
        bool hexadecimal = strpbrk(text, "xX") != NULL;
        if (*text == '\0' || blank || hexadecimal || *end != '\0' || !isfinite(v) || !above_min ||
            v > s->max) {
            snprintf(err, size, "%s: accepted a number %g %s X <= %g%s%s", opt, s->min,
                     s->min_included ? "<=" : "<", s->max, s->off_word ? " or " : "",
                     s->off_word ? s->off_word : "");
            return -1;
        }
        Setting_put(s, c, v);
        return 0;
    }
    case SETTING_SEED: {
        /* strtoull would take a sign: only digits are a seed. */
        unsigned long long v = strtoull(text, &end, 10);
        if (*text < '0' || *text > '9' || *end != '\0' || errno == ERANGE || v > s->max) {
            snprintf(err, size, "%s: accepted a whole number %.0f..%.0f", opt, s->min, s->max);
            return -1;
        }
        Setting_put(s, c, (double)v);
        return 0;
    }
    case SETTING_PATTERN: {
        double code;
        if (strlen(text) > 2 * WINDOW_LAYERS_PERIOD_MAX || Config_window_layers_code(text, &code)) {
            snprintf(err, size,
                     "%s: accepted all, a:b (a window layers then b global, a + b <= %d), or "
                     "up to %d letters L (window) and G (global), repeated over the layers",
                     opt, WINDOW_LAYERS_PERIOD_MAX, WINDOW_LAYERS_PERIOD_MAX);
            return -1;
        }
        Setting_put(s, c, code);
        return 0;
    }
    case SETTING_ENUM: {
        int v = EnumNames_find(s->names, text);
        if (v < 0) {
            char list[128];
            snprintf(err, size, "%s: accepted %s", opt,
                     EnumNames_list(s->names, list, sizeof list));
            return -1;
        }
        Setting_put(s, c, v);
        return 0;
    }
    }
    return -1;
}

int Setting_format(const Setting *s, const Config *c, int digits, char *buf, size_t size)
{
    double v = Setting_get(s, c);
    switch (s->kind) {
    case SETTING_DOUBLE:
        if (s->off_word && v == -INFINITY)
            return snprintf(buf, size, "%s", s->off_word);
        if (digits > 0)
            return snprintf(buf, size, "%.*g", digits, v);
        /* A whole number as JSON and Python write it: 10000, not 1e+04. */
        if (v == floor(v) && fabs(v) < 1e15)
            return snprintf(buf, size, "%.0f", v);
        for (digits = 1; digits < 17; digits++) {
            char shortest[32];
            snprintf(shortest, sizeof shortest, "%.*g", digits, v);
            if (strtod(shortest, NULL) == v)
                break;
        }
        return snprintf(buf, size, "%.*g", digits, v);
    case SETTING_ENUM:
        return snprintf(buf, size, "%s", s->names->names[(int)v]);
    case SETTING_PATTERN: {
        char text[WINDOW_LAYERS_PERIOD_MAX + 1];
        Config_window_layers_text(v, text, sizeof text);
        return snprintf(buf, size, "%s", text);
    }
    case SETTING_INT:
    case SETTING_SEED:
        break;
    }
    return snprintf(buf, size, "%.0f", v);
}

int Setting_show(const Setting *s, const Config *c, char *buf, size_t size)
{
    char value[64];
    buf[0] = '\0';
    if (!s->label || (s->show == SHOW_UNLESS_DEFAULT && Setting_get(s, c) == s->fallback))
        return 0;
    Setting_format(s, c, 3, value, sizeof value);
    if (s->show == SHOW_OF_BOUND)
        return snprintf(buf, size, "%s=%s/%.0f", s->label, value, Setting_limit(s, c));
    return snprintf(buf, size, "%s=%s", s->label, value);
}

Config Config_default(void)
{
    Config c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < SETTINGS_COUNT; i++)
        Setting_put(&SETTINGS[i], &c, SETTINGS[i].fallback);
    return c;
}

int Config_equal(const Config *a, const Config *b)
{
    for (int i = 0; i < SETTINGS_COUNT; i++)
        if (Setting_get(&SETTINGS[i], a) != Setting_get(&SETTINGS[i], b))
            return 0;
    return 1;
}

/* A setting without a class is in every set: the checks stay safe until it gets one. */
static bool in_classes(const Setting *s, unsigned classes)
{
    return s->reuse == REUSE_UNDECLARED || (s->reuse & classes) != 0;
}

bool Config_same_in(const Config *a, const Config *b, unsigned classes)
{
    for (int i = 0; i < SETTINGS_COUNT; i++)
        if (in_classes(&SETTINGS[i], classes) &&
            Setting_get(&SETTINGS[i], a) != Setting_get(&SETTINGS[i], b))
            return false;
    return true;
}

void Config_reset(Config *c, unsigned classes)
{
    for (int i = 0; i < SETTINGS_COUNT; i++)
        if (SETTINGS[i].reuse != REUSE_UNDECLARED && (SETTINGS[i].reuse & classes))
            Setting_put(&SETTINGS[i], c, SETTINGS[i].fallback);
}

/* Whether c draws m as the factor of a product's SVD (per head for W^K, per layer for W^V),
   which one block shared by several heads cannot be. */
static bool drawn_as_factor(const Config *c, Matrix m)
{
    return isnan(Init_matrix(c, m).std);
}

int Config_validate(const Config *c, char *err, size_t size)
{
    if (c->tokens > c->width && c->input == INPUT_ORTHONORMAL) {
        snprintf(err, size,
                 "-T/--tokens %d exceeds -d/--width %d: the orthonormal input needs T <= d "
                 "(raise --width to at least %d, or choose --input embedding)",
                 c->tokens, c->width, c->tokens);
        return -1;
    }
    if (c->layer < 1 || c->layer > c->depth) {
        snprintf(err, size, "-l/--layer %d: accepted 1..%d (the depth)", c->layer, c->depth);
        return -1;
    }
    if (c->width % c->heads != 0) {
        snprintf(err, size,
                 "--heads %d: accepted a divisor of -d/--width %d (each head has width d/H)",
                 c->heads, c->width);
        return -1;
    }
    if (c->kv_heads > 0 && c->heads % c->kv_heads != 0) {
        snprintf(err, size,
                 "--kv-heads %d: accepted a divisor of --heads %d (each key/value head serves H/G "
                 "query heads), or 0 for one per head",
                 c->kv_heads, c->heads);
        return -1;
    }
    if (Config_kv_heads(c) < c->heads &&
        (drawn_as_factor(c, MATRIX_KEY) || drawn_as_factor(c, MATRIX_VALUE))) {
        snprintf(err, size,
                 "--kv-heads %d: accepted only with W^K and W^V drawn on their own (--init %s "
                 "draws each head's W^K or W^V as a factor of its own product, which a shared "
                 "one is not); use --kv-heads 0",
                 c->kv_heads, INIT_NAMES.names[c->init]);
        return -1;
    }
    if (c->init == INIT_CUTTING_SKIP && c->output == OUTPUT_GAUSSIAN) {
        snprintf(err, size,
                 "--wo gaussian: accepted identity or orthogonal with --init cutting-skip (its "
                 "W^O is c times a Haar-orthogonal matrix)");
        return -1;
    }
    if (c->init == INIT_MIMETIC && c->output == OUTPUT_ORTHOGONAL) {
        snprintf(err, size,
                 "--wo orthogonal: accepted identity or gaussian with --init mimetic (its W^O is "
                 "the factor sqrt(S) V^T of alpha2 Z2 - beta2 I, not orthogonal)");
        return -1;
    }
    if (c->output == OUTPUT_ORTHOGONAL && c->init_output != MATRIX_INIT_SCHEME &&
        c->init_output != MATRIX_INIT_ORTHOGONAL && c->init_output != MATRIX_INIT_IDENTITY) {
        snprintf(err, size,
                 "--init-output %s: accepted scheme, orthogonal or identity with --wo orthogonal "
                 "(choose --wo gaussian for a W^O drawn otherwise)",
                 MATRIX_INIT_NAMES.names[c->init_output]);
        return -1;
    }
    if (c->mlp != MLP_NONE && c->init_mlp == MATRIX_INIT_IDENTITY &&
        Config_mlp_hidden(c) != c->width) {
        if (c->mlp_hidden == 0)
            snprintf(err, size,
                     "--init-mlp identity: accepted with --mlp-ratio 1 only (W1 and W2 are %d·d×d, "
                     "and only a square matrix is the identity)",
                     c->mlp_ratio);
        else
            snprintf(err, size,
                     "--init-mlp identity: accepted with --mlp-hidden %d (= d) only (W1 and W2 are "
                     "%d×d, and only a square matrix is the identity)",
                     c->width, c->mlp_hidden);
        return -1;
    }
    if (c->head < 1 || c->head > c->heads) {
        snprintf(err, size, "--head %d: accepted 1..%d (the heads)", c->head, c->heads);
        return -1;
    }
    if (window_in_use(c) && c->window >= c->tokens) {
        snprintf(err, size,
                 "-w/--window %d: accepted 1..%d (below T = %d; a wider window is the %s mask)",
                 c->window, c->tokens - 1, c->tokens, c->mask == MASK_WINDOW ? "full" : "causal");
        return -1;
    }
    return 0;
}

double Config_sigma(const Config *c)
{
    if (Qk_normalised(c)) /* the logits' spread is √d_h·cos θ's, not σ_qk's */
        return NAN;
    /* Embedding rows are not orthonormal: the logits of a row share its norm and the rows'
       overlaps, so they are not the i.i.d. law σ describes. */
    if (c->input == INPUT_EMBEDDING && !Attention_is_input_independent(c->attention))
        return NAN;
    /* Markov attention draws its matrix from σ_qk whatever the scheme draws W^Q, W^K from. */
    double sigma_qk = c->attention == ATTENTION_MARKOV ? c->sigma_qk : Init_effective_sigma_qk(c);
    double s2 = sigma_qk * sigma_qk, variance = s2 * s2;
    /* Input rows of norm √d: every first-layer logit is d times larger. */
    if (c->input_norm == INPUT_NORM_SQRT_D && logit_scale_in_use(c))
        variance *= (double)c->width * c->width;
    /* Orthonormal tokens give logits of variance σ_qk⁴·d_h·scale²: σ_qk⁴ at 1/√d_h. */
    if (c->logit_scale == LOGIT_SCALE_LINEAR && logit_scale_in_use(c))
        variance /= Config_head_width(c);
    return sqrt(expm1(variance));
}

int Config_head_width(const Config *c)
{
    return c->heads > 0 ? c->width / c->heads : c->width;
}

void Settings_names(bool json, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < SETTINGS_COUNT && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "",
                                 json ? SETTINGS[i].json : SETTINGS[i].name);
}

int Config_mlp_hidden(const Config *c)
{
    return c->mlp_hidden > 0 ? c->mlp_hidden : c->mlp_ratio * c->width;
}

bool Config_mlp_gated(const Config *c)
{
    return c->mlp == MLP_SWIGLU || c->mlp == MLP_GEGLU;
}

int Config_kv_heads(const Config *c)
{
    return c->kv_heads > 0 ? c->kv_heads : c->heads;
}

int Config_kv_head_of(const Config *c, int h)
{
    return h / (c->heads / Config_kv_heads(c));
}

/* The code of the p-letter pattern whose letter k is L where bit k of `local` is set: 2^p
   plus those bits, reduced to its shortest period, 0 when every letter is L. */
static double pattern_code(int p, uint64_t local)
{
    for (int q = 1; q < p; q++) {
        if (p % q)
            continue;
        uint64_t first = local & ((1ull << q) - 1), repeated = 0;
        for (int k = 0; k < p; k += q)
            repeated |= first << k;
        if (repeated == local) {
            p = q;
            local = first;
            break;
        }
    }
    return local == (1ull << p) - 1 ? 0.0 : (double)((1ull << p) | local);
}

int Config_window_layers_code(const char *text, double *code)
{
    if (strcmp(text, "all") == 0) {
        *code = 0;
        return 0;
    }
    int a, b, used = 0;
    if (sscanf(text, "%3d:%3d%n", &a, &b, &used) == 2 && text[used] == '\0' &&
        strspn(text, "0123456789:") == strlen(text) && a + b >= 1 &&
        a + b <= WINDOW_LAYERS_PERIOD_MAX) {
        *code = pattern_code(a + b, (1ull << a) - 1);
        return 0;
    }
    size_t p = strspn(text, "LG");
    if (p == 0 || text[p] != '\0' || p > WINDOW_LAYERS_PERIOD_MAX)
        return -1;
    uint64_t local = 0;
    for (size_t k = 0; k < p; k++)
        if (text[k] == 'L')
            local |= 1ull << k;
    *code = pattern_code((int)p, local);
    return 0;
}

/* Whether code is one Config_window_layers_code gives (0 aside): 2^p plus p bits. */
static bool pattern_code_valid(double code)
{
    return code >= 2 && code < (double)(1ull << (WINDOW_LAYERS_PERIOD_MAX + 1)) &&
           code == floor(code);
}

/* The period p and the L bits of a code other than 0. */
static int pattern_of(double code, uint64_t *local)
{
    uint64_t bits = (uint64_t)code;
    int p = 63;
    while (!(bits >> p))
        p--;
    *local = bits & ((1ull << p) - 1);
    return p;
}

void Config_window_layers_text(double code, char *buf, size_t size)
{
    if (!pattern_code_valid(code)) {
        snprintf(buf, size, "all");
        return;
    }
    uint64_t local;
    int p = pattern_of(code, &local);
    int a = 0;
    while (a < p && (local >> a & 1))
        a++;
    if (local >> a == 0) { /* L^a G^(p−a) */
        snprintf(buf, size, "%d:%d", a, p - a);
        return;
    }
    size_t k = 0;
    for (; k < (size_t)p && k + 1 < size; k++)
        buf[k] = local >> k & 1 ? 'L' : 'G';
    buf[k] = '\0';
}

bool Config_layer_local(const Config *c, int layer)
{
    if (!window_in_use(c) || !pattern_code_valid(c->window_layers))
        return window_in_use(c);
    uint64_t local;
    int p = pattern_of(c->window_layers, &local);
    return local >> (((layer - 1) % p + p) % p) & 1;
}

Mask Config_layer_mask(const Config *c, int layer)
{
    if (!window_in_use(c) || Config_layer_local(c, layer))
        return c->mask;
    return c->mask == MASK_WINDOW ? MASK_FULL : MASK_CAUSAL;
}

bool Setting_is_text(const Setting *s)
{
    return s->kind == SETTING_ENUM || s->kind == SETTING_PATTERN;
}

bool Config_has_sink(const Config *c)
{
    return c->attention == ATTENTION_SOFTMAX && c->sink != -INFINITY;
}

bool Config_rows_stochastic(const Config *c)
{
    return Attention_is_row_stochastic(c->attention) && !Config_has_sink(c);
}

int Attention_is_row_stochastic(Attention a)
{
    return a == ATTENTION_SOFTMAX || a == ATTENTION_MARKOV || a == ATTENTION_UNIFORM ||
           a == ATTENTION_IDENTITY;
}

int Attention_is_input_independent(Attention a)
{
    return a == ATTENTION_MARKOV || a == ATTENTION_UNIFORM || a == ATTENTION_IDENTITY;
}

Gap Gap_toggled(Gap g)
{
    return g == GAP_OFF ? GAP_CENTER : GAP_OFF;
}
