/* The settings of one experiment (docs/model.md §1, §5): what the user turns, nothing derived. */
#ifndef ATTNSCOPE_CONFIG_H
#define ATTNSCOPE_CONFIG_H

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

typedef enum { LAYERNORM_NONE, LAYERNORM_RMS, LAYERNORM_LN } LayerNorm;

typedef enum { SKIP_NONE, SKIP_PLAIN, SKIP_SCALED } Skip;

/* The names of one enumeration, as the command line, presets and JSON spell them. */
typedef struct {
    const char *option; /* long option name, e.g. "attention" */
    const char *const *names;
    int count;
} EnumNames;

extern const EnumNames ATTENTION_NAMES, MASK_NAMES, GAP_NAMES, LAYERNORM_NAMES, SKIP_NAMES;

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
    Gap gap;
    LayerNorm layernorm;
    Skip skip;
    int layer; /* layer whose attention matrix is shown, 1..depth */
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
};
#define CONFIG_SIGMA_QK_MAX 4.0

Config Config_default(void);

/* Field by field (a struct's padding is not compared). */
int Config_equal(const Config *a, const Config *b);

/* Checks the relations between settings that single options cannot (T <= d, layer <= depth,
   window < T).  Returns 0, or -1 with a message naming the options in err. */
int Config_validate(const Config *c, char *err, size_t size);

/* The normalised entry spread of softmax/markov attention: sqrt(exp(sigma_qk^4) - 1). */
double Config_sigma(const Config *c);

/* True for the kinds whose rows sum to one (softmax, markov, uniform, identity). */
int Attention_is_row_stochastic(Attention a);
/* True for the kinds whose matrix does not depend on the tokens (markov, uniform, identity). */
int Attention_is_input_independent(Attention a);

/* The gap mode of the counterpart network: gap removal toggled (off <-> center). */
Gap Gap_toggled(Gap g);

#endif
