/* The settings' values (config.h): the enumerations' names; one setting read, written,
 * parsed, formatted and shown through its row of the table (config.c); a whole configuration
 * through every row: its defaults, its comparisons, its reset by reuse class. */
#include "config_internal.h"

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
static const char *const rope_scaling_names[] = {"none", "linear", "llama3"};
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
const EnumNames WINDOW_LAYERS_STOPS = ENUM_NAMES("window-layers", window_layers_stops);
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
const EnumNames ROPE_SCALING_NAMES = ENUM_NAMES("rope-scaling", rope_scaling_names);
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

bool Setting_is_text(const Setting *s)
{
    return s->kind == SETTING_ENUM || s->kind == SETTING_PATTERN;
}

Config Config_default(void)
{
    Config c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < Settings_count(); i++)
        Setting_put(Settings_at(i), &c, Settings_at(i)->fallback);
    return c;
}

int Config_equal(const Config *a, const Config *b)
{
    for (int i = 0; i < Settings_count(); i++)
        if (Setting_get(Settings_at(i), a) != Setting_get(Settings_at(i), b))
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
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (in_classes(s, classes) && Setting_get(s, a) != Setting_get(s, b))
            return false;
    }
    return true;
}

void Config_reset(Config *c, unsigned classes)
{
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (s->reuse != REUSE_UNDECLARED && (s->reuse & classes))
            Setting_put(s, c, s->fallback);
    }
}

void Settings_names(bool json, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < Settings_count() && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "",
                                 json ? Settings_at(i)->json : Settings_at(i)->name);
}
