#include "attnscope/config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const attention_names[] = {"softmax", "markov",  "relu",    "sigmoid",
                                              "linear",  "uniform", "identity"};
static const char *const mask_names[] = {"full", "causal", "window", "window-causal"};
static const char *const gap_names[] = {"off", "center", "uniform", "deflate", "outliers"};
static const char *const layernorm_names[] = {"none", "rms", "ln"};
static const char *const skip_names[] = {"none", "plain", "scaled"};

#define ENUM_NAMES(option, array)                                                                  \
    {                                                                                              \
        option, array, (int)(sizeof array / sizeof array[0])                                       \
    }
const EnumNames ATTENTION_NAMES = ENUM_NAMES("attention", attention_names);
const EnumNames MASK_NAMES = ENUM_NAMES("mask", mask_names);
const EnumNames GAP_NAMES = ENUM_NAMES("gap", gap_names);
const EnumNames LAYERNORM_NAMES = ENUM_NAMES("layernorm", layernorm_names);
const EnumNames SKIP_NAMES = ENUM_NAMES("skip", skip_names);

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

Config Config_default(void)
{
    return (Config){
        .tokens = 256,
        .width = 256,
        .depth = 8,
        .sigma_qk = 1.0,
        .attention = ATTENTION_SOFTMAX,
        .mask = MASK_FULL,
        .window = 1,
        .gap = GAP_OFF,
        .layernorm = LAYERNORM_NONE,
        .skip = SKIP_NONE,
        .layer = 1,
        .seed = 1,
        .seeds = 1,
    };
}

int Config_equal(const Config *a, const Config *b)
{
    return a->tokens == b->tokens && a->width == b->width && a->depth == b->depth &&
           a->sigma_qk == b->sigma_qk && a->attention == b->attention && a->mask == b->mask &&
           a->window == b->window && a->gap == b->gap && a->layernorm == b->layernorm &&
           a->skip == b->skip && a->layer == b->layer && a->seed == b->seed && a->seeds == b->seeds;
}

int Config_validate(const Config *c, char *err, size_t size)
{
    if (c->tokens > c->width) {
        snprintf(err, size,
                 "-T/--tokens %d exceeds -d/--width %d: the orthonormal input needs T <= d "
                 "(raise --width to at least %d)",
                 c->tokens, c->width, c->tokens);
        return -1;
    }
    if (c->layer < 1 || c->layer > c->depth) {
        snprintf(err, size, "-l/--layer %d: accepted 1..%d (the depth)", c->layer, c->depth);
        return -1;
    }
    if ((c->mask == MASK_WINDOW || c->mask == MASK_WINDOW_CAUSAL) && c->window >= c->tokens) {
        snprintf(err, size,
                 "-w/--window %d: accepted 1..%d (below T = %d; a wider window is the %s mask)",
                 c->window, c->tokens - 1, c->tokens, c->mask == MASK_WINDOW ? "full" : "causal");
        return -1;
    }
    return 0;
}

double Config_sigma(const Config *c)
{
    double s2 = c->sigma_qk * c->sigma_qk;
    return sqrt(expm1(s2 * s2));
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
