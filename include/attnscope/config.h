/* The settings of one experiment (docs/model.md §1, §5): what the user turns, nothing derived. */
#ifndef ATTNSCOPE_CONFIG_H
#define ATTNSCOPE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    ATTENTION_SOFTMAX,
    ATTENTION_MARKOV,
    ATTENTION_RELU,
    ATTENTION_SIGMOID,
    ATTENTION_LINEAR,
    ATTENTION_UNIFORM,
    ATTENTION_IDENTITY,
} Attention;

typedef enum { MASK_FULL, MASK_CAUSAL, MASK_WINDOW, MASK_WINDOW_CAUSAL } Mask;

typedef enum { GAP_OFF, GAP_CENTER, GAP_UNIFORM, GAP_DEFLATE, GAP_OUTLIERS } Gap;
/* What the attention map shows: the shown layer's A, or the product A_ℓ⋯A_1 up to it. */
typedef enum { ATTENTION_MAP_LAYER, ATTENTION_MAP_PRODUCT } AttentionMapKind;

typedef enum { LAYERNORM_NONE, LAYERNORM_RMS, LAYERNORM_LN } LayerNorm;

typedef enum { SKIP_NONE, SKIP_PLAIN, SKIP_SCALED } Skip;

/* The output projection W^O after the concatenated heads (docs/model.md §1.7). */
typedef enum { OUTPUT_IDENTITY, OUTPUT_GAUSSIAN, OUTPUT_ORTHOGONAL } OutputProjection;

/* The logits' scale: 1/√d_h (the papers, today's layer) or 1/d_h (μP). */
typedef enum { LOGIT_SCALE_SQRT, LOGIT_SCALE_LINEAR } LogitScale;

/* Where LayerNorm sits (docs/model.md §1.8): after the skip (post, today's), on the
   branch's input (pre: X + F(LN X), as GPT-2 and ViT), on both ends of the branch (peri:
   X + LN(F(LN X)), Gemma 2/3) or on its output only (output: X + LN(F X), OLMo 2). */
typedef enum { LN_PLACE_POST, LN_PLACE_PRE, LN_PLACE_PERI, LN_PLACE_OUTPUT } LnPlace;

/* The MLP sub-block's activation (docs/model.md §1.9); none: attention only.  swiglu and geglu
   are gated (docs/model.md §1.9): down(act(gate x) ⊙ up x), act silu or tanh-GELU. */
typedef enum { MLP_NONE, MLP_RELU, MLP_GELU, MLP_TANH, MLP_SWIGLU, MLP_GEGLU } Mlp;

/* Initialisation schemes (docs/model.md §1.10); cutting-skip is the skipless transformer
   paper's W^Q W^Kᵀ = αZ + βI with W_VO = c²·(Haar orthogonal) (--init-alpha, --init-beta,
   --init-c); mimetic (Trockman & Kolter) has the same W^Q W^Kᵀ and W^V W^O = α₂Z₂ − β₂I
   (--init-vo-alpha, --init-vo-beta). */
typedef enum {
    INIT_NORMAL,
    INIT_XAVIER,
    INIT_ORTHOGONAL,
    INIT_GPT2,
    INIT_SMALL_INIT,
    INIT_MUP,
    INIT_DEEPNORM,
    INIT_CUTTING_SKIP,
    INIT_MIMETIC,
    INIT_TRUNC_NORMAL, /* OLMo-core's normal: N(0, S²) cut at ±3S, S = --init-std */
} InitScheme;

/* The depth scaling of the residual's output projections, W^O and the MLP's down projection
   (docs/model.md §1.10): the scheme's (gpt2: total, the others none), none, ÷√(2L) (GPT-2,
   OLMo-core's llama) or ÷√(2ℓ) at layer ℓ from 1 (OLMo-core's llama_depth). */
typedef enum {
    DEPTH_SCALE_SCHEME,
    DEPTH_SCALE_NONE,
    DEPTH_SCALE_TOTAL,
    DEPTH_SCALE_PER_LAYER
} DepthScale;

/* The network's input X0: T orthonormal rows (today's, T <= d), or rows of a V-row embedding
   table N(0, S²) indexed by T uniformly drawn token ids (docs/model.md §1.1). */
typedef enum { INPUT_ORTHONORMAL, INPUT_EMBEDDING } InputKind;

/* Positions added to the embedding input's rows: none, or GPT-2's learned ones (wpe), a T-row
   table N(0, (S/2)²): OpenAI's GPT-2 draws wpe with std 0.01 beside wte's 0.02. */
typedef enum { POSITIONS_NONE, POSITIONS_LEARNED } Positions;

/* One matrix's initialisation away from the scheme's (--init-query, ...): the named scheme's
   choice for that matrix (normal, xavier, orthogonal), the identity or zero. */
typedef enum {
    MATRIX_INIT_SCHEME,
    MATRIX_INIT_NORMAL,
    MATRIX_INIT_XAVIER,
    MATRIX_INIT_ORTHOGONAL,
    MATRIX_INIT_IDENTITY,
    MATRIX_INIT_ZERO,
} MatrixInitChoice;

/* The input tokens' rows: unit norm (today's), or √d as after an embedding and LayerNorm. */
typedef enum { INPUT_NORM_UNIT, INPUT_NORM_SQRT_D } InputNorm;

/* Rows after LayerNorm: unit norm (today's, exact) or PyTorch's nn.LayerNorm, norm ≈ √d with
   ε (--ln-eps) inside the root. */
typedef enum { LN_SCALE_UNIT, LN_SCALE_SQRT_D } LnScale;

/* QK-norm (docs/model.md §1.8a): an RMSNorm with unit gain on the queries and keys, over each
   head's d_h (Qwen3, Gemma 3) or over the full projected width H·d_h (OLMo 2). */
typedef enum { QK_NORM_NONE, QK_NORM_HEAD, QK_NORM_FULL } QkNorm;

/* Where QK-norm sits relative to the rotary positions: before (Qwen3, Gemma 3, OLMo 2) or
   after (Llama 4). */
typedef enum { QK_NORM_BEFORE_ROPE, QK_NORM_AFTER_ROPE } QkNormPlace;

/* Rotary positions (docs/model.md §1.8a): none, HF's rotate_half on the split halves
   of a head's rotated part, or Meta's adjacent pairs. */
typedef enum { ROPE_NONE, ROPE_HALF, ROPE_PAIRS } Rope;

/* How the rotary frequencies are rescaled for a longer context (HF's rope_scaling.rope_type):
   not at all, all divided by one factor (linear), or Llama 3.1's split by wavelength (llama3).
   Qk_frequency (qk.h) gives the formula. */
typedef enum { ROPE_SCALING_NONE, ROPE_SCALING_LINEAR, ROPE_SCALING_LLAMA3 } RopeScaling;

/* The names of one enumeration, as the command line, presets and JSON spell them. */
typedef struct {
    const char *option; /* long option name, e.g. "attention" */
    const char *const *names;
    int count;
} EnumNames;

extern const EnumNames ATTENTION_MAP_NAMES;
extern const EnumNames ATTENTION_NAMES, MASK_NAMES, GAP_NAMES, LAYERNORM_NAMES, SKIP_NAMES;
extern const EnumNames OUTPUT_NAMES, LOGIT_SCALE_NAMES, LN_PLACE_NAMES, LN_SCALE_NAMES, MLP_NAMES,
    INIT_NAMES, INPUT_NORM_NAMES, MATRIX_INIT_NAMES, DEPTH_SCALE_NAMES, INPUT_NAMES,
    POSITIONS_NAMES, QK_NORM_NAMES, QK_NORM_PLACE_NAMES, ROPE_NAMES, ROPE_SCALING_NAMES;

/* Index of `text` in `e`, or -1. */
int EnumNames_find(const EnumNames *e, const char *text);
/* "a|b|c" into buf (for messages). */
const char *EnumNames_list(const EnumNames *e, char *buf, size_t size);

typedef struct {
    int tokens;      /* T */
    int width;       /* d = d_qk */
    int depth;       /* L */
    double sigma_qk; /* std of the query and key weights */
    Attention attention;
    Mask mask;
    int window; /* w for the window masks */
    /* Which layers use the window mask and which its global one (--window-layers): the code of
       a pattern of L (window) and G (global) repeated over the layers, 0 for every layer
       windowed (Config_layer_mask). */
    double window_layers;
    Gap gap;
    LayerNorm layernorm;
    Skip skip;
    int heads; /* H, dividing d unless --head-dim sets d_h: each head has width d_h = d/H */
    int head;  /* head whose attention matrix is shown, 1..heads */
    /* G key/value heads (grouped-query attention, HF's num_key_value_heads): heads of one group
       share W^K and W^V; 0 means one per head (G = H), as HF's absent key does. */
    int kv_heads;
    /* d_h, each head's width (HF's head_dim): 0 means d/H; set, H·d_h need not be d (Gemma,
       Qwen3, Mistral Nemo), and W^Q, W^K, W^V are d×H·d_h, W^O H·d_h×d. */
    int head_dim;
    OutputProjection output;
    LogitScale logit_scale;
    LnPlace ln_place;
    LnScale ln_scale;
    double ln_eps;        /* ε inside the root of PyTorch's rows (--ln-scale sqrt-d) and QK-norm */
    int norm_gain_offset; /* o in a norm's y = N(x)·(o + w): 1 where a checkpoint stores w − 1
                             (Gemma's RMSNorm), else 0 */
    QkNorm qk_norm;
    QkNormPlace qk_norm_place;
    Rope rope;
    double rope_theta; /* θ of the frequencies θ^(−2k/d_r) */
    /* Gemma 3's rope_local_base_freq: θ of the layers --window-layers marks local (L), which
       turn unscaled (--rope-scaling is then the global layers' alone); 0: every layer turns
       by rope_theta and the scaling. */
    double rope_local_base_freq;
    double rope_fraction; /* the rotated share of each head's d_h (partial rotary) */

    /* The frequencies' rescaling (HF's rope_scaling): rope_factor s divides them (linear: all;
       llama3: those of wavelength above C/rope_low_freq_factor, a blend down to
       C/rope_high_freq_factor), C = rope_original_context the context the model was first
       trained at (original_max_position_embeddings). */
    RopeScaling rope_scaling;
    double rope_factor, rope_low_freq_factor, rope_high_freq_factor;
    int rope_original_context;
    int nope_every;       /* every K-th layer has no rotation (0: every layer rotates) */
    double logit_softcap; /* C: attention logits C·tanh(S/C) (Gemma 2); 0: off */
    /* S: each head's sink logit in the softmax's denominator (gpt-oss); -∞ is "none", the
       sink of weight e^{-∞} = 0, i.e. no sink (0 is a real sink, gpt-oss's init). */
    double sink;
    /* s: head h's sink is S + s·z_h, z_h ~ N(0, 1) from ROLE_SINK; 0: S itself. */
    double sink_std;
    double skip_gain;   /* a in X ← a·X + b·F(X), with a skip */
    double branch_gain; /* b */
    Mlp mlp;
    int mlp_ratio;  /* the MLP's hidden width is mlp_ratio·d, unless mlp_hidden says it */
    int mlp_hidden; /* the MLP's hidden width itself (Llama's intermediate_size); 0: R·d */
    InitScheme init;
    /* S of the schemes that draw every matrix with one std (gpt2, trunc-normal) and of the
       embedding input under them: HF's initializer_range */
    double init_std;
    DepthScale depth_scale;
    InputKind input;
    int vocab; /* V, the embedding table's rows */
    Positions positions;
    InputNorm input_norm;
    double init_alpha; /* cutting-skip: W^Q W^Kᵀ = αZ + βI, Z_ij ~ N(0, 1/d) */
    double init_beta;
    double init_c;        /* cutting-skip: W_VO = c²·(Haar orthogonal) */
    double init_vo_alpha; /* mimetic: W^V W^O = α₂Z₂ − β₂I, Z₂_ij ~ N(0, 1/d) */
    double init_vo_beta;
    /* Per-matrix choices (MATRIX_INIT_SCHEME: the scheme's); W1 and W2 share init_mlp. */
    MatrixInitChoice init_query, init_key, init_value, init_output, init_mlp;
    int layer;                      /* layer whose attention matrix is shown, 1..depth */
    AttentionMapKind attention_map; /* the map shows A_ℓ, or the product A_ℓ⋯A_1 (computed) */
    uint64_t seed;
    int seeds; /* ensemble size for the stable-rank curves */
} Config;

/* Ranges of the command line contract. */
enum {
    CONFIG_TOKENS_MIN = 2,
    CONFIG_TOKENS_MAX = 4096,
    CONFIG_WIDTH_MIN = 1,
    CONFIG_WIDTH_MAX = 4096,
    CONFIG_DEPTH_MIN = 1,
    CONFIG_DEPTH_MAX = 256,
    CONFIG_SEEDS_MAX = 1024,
    /* The screen's e/E keys stop here: every seed is one more network per key. */
    CONFIG_SEEDS_KEY_MAX = 64,
    CONFIG_MLP_RATIO_MAX = 16,
};
/* The longest --window-layers pattern: its code 2^p + bits stays an exact double. */
enum { WINDOW_LAYERS_PERIOD_MAX = 48 };
#define CONFIG_SIGMA_QK_MAX 4.0
#define CONFIG_GAIN_MAX 64.0
/* HF's initializer_range, GPT-2's and OLMo-core's std: the default of --init-std. */
#define CONFIG_INIT_STD_DEFAULT 0.02
/* PyTorch's nn.LayerNorm default ε, the default of --ln-eps. */
#define CONFIG_LN_EPS_DEFAULT 1e-5
/* Seeds travel through JSON, whose numbers are doubles: 2^53 - 1 keeps them exact. */
#define CONFIG_SEED_MAX 9007199254740991ull

/* The settings table.  Each setting is described once, here; the option parser, --help,
 * the preset reader and writer, the screen's setting keys and their help, and the status
 * line's parameters are generated from it.  A value travels as a double (an enumeration
 * as its index; an int, or a seed below 2^53, exactly). */

/* SETTING_PATTERN: a per-layer pattern (--window-layers), spelled as text (all, a:b, or L/G
   letters) and travelling as its code (Config_window_layers_code). */
typedef enum {
    SETTING_INT,
    SETTING_DOUBLE,
    SETTING_SEED,
    SETTING_ENUM,
    SETTING_PATTERN
} SettingKind;

/* How the screen's keys step a setting (docs/guide.md). */
typedef enum {
    STEP_NONE,    /* no keys */
    STEP_DOUBLE,  /* raise ×2, lower ÷2 */
    STEP_ONE,     /* +1, −1 */
    STEP_QUARTER, /* ×2^¼, ÷2^¼ (landing on the powers 2^(k/4)) */
    STEP_CYCLE,   /* next, previous name, wrapping around */
    STEP_TOGGLE,  /* lower: off (the first name) and back on; raise: the next name that is on */
    STEP_NEW,     /* raise only: the next value, the minimum after the maximum (a new seed) */
    STEP_OFF_UP,  /* raise only: off (the off word), 0, 1, then ×2 up to key_max, then off */
} SettingStep;

/* What a change to a setting leaves of what earlier runs computed (model.c keeps every
   network it ran as a track, keyed by its seed and gap mode, and the spectra of the shown
   matrices it captured).  One class per setting, as bits so that a check can name several;
   the sameness checks (the kept networks', the kept spectra's, the merge's shards, the
   screen's compare view) are read off these classes, never listed by hand. */
typedef enum {
    REUSE_UNDECLARED = 0,    /* a setting without a class: compared everywhere (and a test fails) */
    REUSE_WEIGHTS = 1 << 0,  /* the weights or the forward pass: every layer from layer 1 */
    REUSE_DEPTH = 1 << 1,    /* the layers beyond the kept ones, and the gradients at depth L */
    REUSE_GAP = 1 << 2,      /* picks the network of that gap mode (a kept counterpart serves) */
    REUSE_SEED = 1 << 3,     /* picks the networks of other seeds, the first seed's among them */
    REUSE_ENSEMBLE = 1 << 4, /* the seed count: the added seeds' networks; the first one's stay */
    REUSE_SHOWN = 1 << 5,    /* the shown matrix: its attention captured again, its spectra */
} SettingReuse;

/* How the status line shows a setting. */
typedef enum {
    SHOW_VALUE,          /* "T=256" */
    SHOW_OF_BOUND,       /* "layer=1/8": out of the setting that bounds it */
    SHOW_UNLESS_DEFAULT, /* "seeds=4"; nothing at the default */
} SettingShow;

typedef struct {
    const char *name;     /* long option, preset key */
    const char *json;     /* key in the batch document's "config" */
    char letter;          /* short option, 0 for none */
    const char *argument; /* --help's "N" */
    const char *help;     /* --help's words before the range, or NULL */
    SettingKind kind;
    double min, max;        /* accepted values (a double: min < X <= max) */
    bool min_included;      /* a double: min <= X <= max (a gain of 0 is ReZero) */
    const EnumNames *names; /* SETTING_ENUM */
    double fallback;        /* the default */
    size_t offset;          /* of the Config field: int, double, uint64_t or an enumeration */
    SettingReuse reuse;     /* what a change to it invalidates */
    /* An upper bound set by another setting, value <= that one + bound_offset (T <= d,
       w <= T - 1, layer <= depth): lowering the other takes this one down with it; raising
       this one stops there, or raises the other too (raises_bound). */
    const char *bound;
    int bound_offset;
    bool raises_bound;
    const char *bound_reason;
    /* Whether the bound holds for c (NULL: always; T <= d holds for the orthonormal input). */
    bool (*bound_in_use)(const Config *c);
    /* Another setting this one must divide (H divides d): lowering that one lowers this to
       their greatest common divisor, and this one's keys stop where it would not divide. */
    const char *divides;
    /* Whether it must divide for c (NULL: always; H divides d unless --head-dim sets d_h). */
    bool (*divides_in_use)(const Config *c);
    /* Whether the model uses the value (NULL: always), and what its keys say when it does not. */
    bool (*in_use)(const Config *c);
    const char *unused_note;
    /* Where in_use is set: settings, as preset lines spell them ("rope=half rope-scaling=linear",
       space-separated), under which the value takes effect from the defaults; a name that
       is no setting is an option the message names as it stands ("weights=FILE": a
       checkpoint's gains; "(here no --weights)" when no weight source is in use), and
       "weights=none" drawn weights (what says how weights are drawn: σ_qk, --init and its
       parameters, the depth scale, the sinks' spread; "(here --weights FILE)").  A warning
       names them when the user set this one where it has none (Setting_inert_text), and
       tests/test_settings.c runs each to check that the value then changes the output and
       otherwise does not. */
    const char *needs;
    /* The screen's keys (0: none); the keys stop at key_min, key_max where these are not 0. */
    char raise_key, lower_key;
    SettingStep step;
    double key_min, key_max;
    const char *key_label; /* "tokens T" in the help and the notes */
    const char *min_note;  /* said at the minimum (NULL: "<key_label> is at its minimum, <min>") */
    const char *label;     /* status line: "T" */
    SettingShow show;
    /* A double: the word that stands for -∞, its "off" (--sink none), or NULL.  The value
       travels as -∞, the JSON writes null for it, and the command line and presets spell it
       with this word. */
    const char *off_word;
} Setting;

/* Room for the table (config.c checks it), for arrays with one element per setting. */
enum { SETTINGS_MAX = 64 };

int Settings_count(void);
/* The setting at index (table order), or NULL. */
const Setting *Settings_at(int index);
/* The setting whose long name is name, or NULL. */
const Setting *Settings_find(const char *name);

double Setting_get(const Setting *s, const Config *c);
void Setting_put(const Setting *s, Config *c, double value);
/* The setting that bounds s in c, or NULL where none does (see Setting.bound_in_use). */
const Setting *Setting_bound(const Setting *s, const Config *c);
/* The upper limit of s in c: max, or lower when another setting bounds it. */
double Setting_limit(const Setting *s, const Config *c);
/* "-T/--tokens" or "--seed", for messages. */
const char *Setting_spelled(const Setting *s, char *buf, size_t size);
/* Sets s from text as the command line and presets spell it.  Returns 0, or -1 with a message
   naming the option, the value and what is accepted. */
int Setting_parse(const Setting *s, Config *c, const char *text, char *err, size_t size);
/* The value as the command line spells it, doubles with `digits` significant digits, or
   (digits 0) the fewest that read back exactly: 0.1, not 0.10000000000000001, and a whole
   number in full (10000, not 1e+04), as the JSON and Python spell it.  Returns the length, as
   snprintf does. */
int Setting_format(const Setting *s, const Config *c, int digits, char *buf, size_t size);
/* "T=256" as the status line shows it, or "" where it shows nothing.  Returns the length. */
int Setting_show(const Setting *s, const Config *c, char *buf, size_t size);

/* Whether s's value changes what c computes (its in_use; true where it has none). */
bool Setting_has_effect(const Setting *s, const Config *c);

/* Where s has no effect in c: "--rope-factor 8 has no effect: it takes effect with --rope half
   --rope-scaling linear (here --rope none, --rope-scaling none)", the settings of s->needs and
   those of them that c has otherwise; returns the length, as snprintf does.  "" (0) where s
   has an effect. */
int Setting_inert_text(const Setting *s, const Config *c, char *buf, size_t size);

/* Every setting at its default. */
Config Config_default(void);

/* Setting by setting (a struct's padding is not compared). */
int Config_equal(const Config *a, const Config *b);

/* Whether a and b agree on every setting whose reuse class is in `classes` (SettingReuse
   bits); a setting without a class is always compared. */
bool Config_same_in(const Config *a, const Config *b, unsigned classes);

/* Puts every setting whose reuse class is in `classes` at its default. */
void Config_reset(Config *c, unsigned classes);

/* Checks the relations between settings that single options cannot (T <= d, layer <= depth,
   window < T, H divides d unless --head-dim is set, head <= H, llama3's low < high): what
   cannot be computed.  A setting without effect under the others passes (it warns:
   Setting_inert_text).  Returns 0, or -1 with a message naming the options in err. */
int Config_validate(const Config *c, char *err, size_t size);

/* The normalised entry spread of softmax/markov attention: sqrt(exp(v) - 1), v the logits'
   variance: σ_qk^4 (markov, or the 1/√d_h logit scale), σ_qk^4/d_h with the 1/d_h scale;
   NaN with QK-norm, whose logits σ_qk does not scale. */
double Config_sigma(const Config *c);

/* True for the kinds whose rows sum to one (softmax, markov, uniform, identity). */
int Attention_is_row_stochastic(Attention a);
/* True for the kinds whose matrix does not depend on the tokens (markov, uniform, identity). */
int Attention_is_input_independent(Attention a);

/* Every setting's name, comma-separated: the long options', or with `json` the JSON keys', for
   the errors that list what is accepted.  Truncated to `size` (1024 holds them all). */
void Settings_names(bool json, char *out, size_t size);

/* d_h, the width of one head: --head-dim, or d/H where it is 0. */
int Config_head_width(const Config *c);

/* H·d_h, the heads' concatenated width: the columns of W^Q (and of the drawn W^K, W^V), the
   rows of W^O; d unless --head-dim sets d_h. */
int Config_heads_width(const Config *c);

/* The MLP's hidden width: --mlp-hidden where set, else --mlp-ratio times d. */
int Config_mlp_hidden(const Config *c);

/* Whether c's MLP is gated (swiglu, geglu): a gate and an up projection, multiplied. */
bool Config_mlp_gated(const Config *c);

/* G, the key/value heads: --kv-heads, or H where it is 0. */
int Config_kv_heads(const Config *c);

/* Layer ℓ's mask (ℓ from 1): the -m mask, or for a layer the --window-layers pattern makes
   global the window mask's global one (window: full, window-causal: causal). */
Mask Config_layer_mask(const Config *c, int layer);

/* Whether layer ℓ is local (windowed) by the --window-layers pattern (a window mask in use). */
bool Config_layer_local(const Config *c, int layer);

/* Whether layer ℓ turns by the local rotary θ (--rope-local-base-freq, unscaled): one is set
   and the --window-layers pattern marks ℓ local, whatever the mask (Gemma 3's local layers
   keep their θ where the window covers every key). */
bool Config_layer_rotary_local(const Config *c, int layer);

/* The pattern's code from its spelling: "all", "a:b" (a L then b G), or L/G letters, at most
   WINDOW_LAYERS_PERIOD_MAX long; the code is that of the pattern's shortest period, 0 when
   every layer is L.  Returns 0, or -1 for text that is none of these. */
int Config_window_layers_code(const char *text, double *code);

/* The spelling of a code: "all", "a:b" for a L then b G, else the letters. */
void Config_window_layers_text(double code, char *buf, size_t size);

/* Whether s is spelled as text (an enumeration's name, a pattern): a JSON string. */
bool Setting_is_text(const Setting *s);

/* Whether c's softmax has sinks (--sink not none, softmax attention): its rows then sum below
   1, by each row's sink weight. */
bool Config_has_sink(const Config *c);

/* Whether c's attention rows sum to 1: a row-stochastic kind without sinks. */
bool Config_rows_stochastic(const Config *c);

/* The key/value head (from 0) that query head h (from 0) reads: h / (H/G), as HF's repeat_kv
   repeats each of the G heads H/G times in a row. */
int Config_kv_head_of(const Config *c, int h);

/* The gap mode of the counterpart network: gap removal toggled (off <-> center). */
Gap Gap_toggled(Gap g);

#endif
