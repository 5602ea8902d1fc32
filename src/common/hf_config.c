/* --hf-config: a Hugging Face config.json into the settings it determines (docs/hf-config.md).
 * The file is input a user did not write for us: it is read by the bounded JSON reader, and
 * every value is checked for its kind and range before it reaches a setter. */
#include "hf_config.h"

#include "attnscope/format.h"
#include "hf_config_internal.h"
#include "line_reader.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A config.json is a few kilobytes; a megabyte leaves room for long layer_types lists. */
enum { HF_CONFIG_MAX_BYTES = 1 << 20, HF_CONFIG_MAX_VALUES = 1 << 16 };

static const char *const WIDTH[] = {"hidden_size", "n_embd", NULL};
static const char *const HEADS[] = {"num_attention_heads", "n_head", NULL};
static const char *const DEPTH[] = {"num_hidden_layers", "n_layer", NULL};
static const char *const MLP_WIDTH[] = {"intermediate_size", "n_inner", NULL};
static const char *const EPS[] = {"rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps", NULL};
static const char *const ACTIVATION[] = {"hidden_act", "hidden_activation", "activation_function",
                                         NULL};
static const char *const HEAD_DIM[] = {"head_dim", NULL};
static const char *const KV_HEADS[] = {"num_key_value_heads", NULL};

const JsonValue *HfReader_lookup(HfReader *r, const char *key)
{
    for (int i = 0; i < r->object->count; i++)
        if (strcmp(r->object->keys[i], key) == 0) {
            r->consumed[i] = true;
            return &r->object->items[i];
        }
    return JsonValue_member(r->defaults, key);
}

static bool same_value(const JsonValue *a, const JsonValue *b)
{
    return a->kind == b->kind && (a->kind != JSON_NUMBER || a->number == b->number) &&
           (a->kind != JSON_STRING || strcmp(a->text, b->text) == 0);
}

/* The first of keys (the spellings of one concept) that the file gives, else that the defaults
   give; two spellings with different values are an error.  *key names the one read. */
int HfReader_concept(HfReader *r, const char *const keys[], const JsonValue **value,
                     const char **key)
{
    *value = NULL;
    *key = keys[0];
    for (int i = 0; keys[i]; i++) {
        if (!JsonValue_member(r->object, keys[i]))
            continue;
        const JsonValue *v = HfReader_lookup(r, keys[i]);
        if (*value && !same_value(*value, v)) {
            snprintf(r->err, r->size, "'%s': \"%s\" and \"%s\" spell one setting with two values",
                     r->file, *key, keys[i]);
            return -1;
        }
        if (!*value)
            *value = v, *key = keys[i];
    }
    for (int i = 0; !*value && keys[i]; i++)
        if ((*value = JsonValue_member(r->defaults, keys[i])))
            *key = keys[i];
    return 0;
}

bool HfReader_from_default(const HfReader *r, const char *key)
{
    return !JsonValue_member(r->object, key) && JsonValue_member(r->defaults, key);
}

/* For messages about key: " (not in the file: the Mistral family's default)" where the file
   lacks it and the value read is the family's, else "" (the file holds what is quoted). */
static const char *default_note(const HfReader *r, const char *key, char *buf, size_t size)
{
    if (!HfReader_from_default(r, key))
        return "";
    snprintf(buf, size, " (not in the file: the %s family's default)", r->family->name);
    return buf;
}

/* What the file says, for messages: a number or string as written, else its kind. */
int HfReader_refuse(HfReader *r, const char *key, const JsonValue *v, const char *accepted)
{
    char value[80], note[96];
    if (v && (v->kind == JSON_NUMBER || v->kind == JSON_STRING))
        snprintf(value, sizeof value, v->kind == JSON_STRING ? "\"%.60s\"" : "%.60s", v->text);
    else
        snprintf(value, sizeof value, "%s", v ? JsonKind_name(v->kind) : "missing");
    snprintf(r->err, r->size, "'%s': \"%s\" is %s%s: accepted %s", r->file, key, value,
             v ? default_note(r, key, note, sizeof note) : "", accepted);
    return -1;
}

/* A whole number lo ≤ n ≤ 2^20 (the bound keeps the products below exact; each setter has
   its own range too). */
int HfReader_whole(HfReader *r, const char *key, const JsonValue *v, int lo, int *out)
{
    char accepted[64];
    snprintf(accepted, sizeof accepted, "a whole number from %d to 1048576", lo);
    if (!v || v->kind != JSON_NUMBER || v->number != floor(v->number) || v->number < lo ||
        v->number > (1 << 20))
        return HfReader_refuse(r, key, v, accepted);
    *out = (int)v->number;
    return 0;
}

/* The concept's whole number, or fallback (0) where it is absent or null; without a fallback
   (-1) absent and null are refused, each named as what it is. */
static int size_of(HfReader *r, const char *const keys[], int fallback, int *out, const char **key)
{
    const JsonValue *v;
    if (HfReader_concept(r, keys, &v, key))
        return -1;
    if ((!v || v->kind == JSON_NULL) && fallback >= 0) {
        *out = fallback;
        return 0;
    }
    return HfReader_whole(r, *key, v, 1, out);
}

static int number_of(HfReader *r, const char *key, const JsonValue *v, double *out)
{
    if (!v || v->kind != JSON_NUMBER || !isfinite(v->number))
        return HfReader_refuse(r, key, v, "a number");
    *out = v->number;
    return 0;
}

/* Sets one setting through its own setter, as a preset line does. */
int HfReader_put(HfReader *r, const char *setting, const char *text, const char *key)
{
    char message[512];
    const Setting *s = Settings_find(setting);
    if (Setting_parse(s, &r->trial, text, message, sizeof message) == 0) {
        HfConfigReport *h = r->report;
        for (int i = 0; i < Settings_count() && h->set_count < HF_SET_MAX; i++)
            if (Settings_at(i) == s) {
                h->set[h->set_count].setting = i;
                snprintf(h->set[h->set_count++].field, sizeof h->set[0].field, "%s", key);
            }
        return 0;
    }
    char note[96];
    snprintf(r->err, r->size, "'%s': \"%s\"%s gives %s", r->file, key,
             default_note(r, key, note, sizeof note), message);
    return -1;
}

int HfReader_put_int(HfReader *r, const char *setting, int value, const char *key)
{
    char text[32];
    snprintf(text, sizeof text, "%d", value);
    return HfReader_put(r, setting, text, key);
}

static int put_double(HfReader *r, const char *setting, double value, const char *key)
{
    char text[FORMAT_NUMBER_SIZE];
    return HfReader_put(r, setting, Format_shortest(value, text), key);
}

/* HfReader_unmodelled with the field's own value and a why that names numbers. */
static void unmodelled_because(HfReader *r, const char *field, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void unmodelled_because(HfReader *r, const char *field, const char *format, ...)
{
    char why[256];
    va_list args;
    va_start(args, format);
    vsnprintf(why, sizeof why, format, args);
    va_end(args);
    HfReader_unmodelled(r, field, NULL, why);
}

/* head_dim and num_key_value_heads where the family's model ignores them (GPT-2's, ViT's: heads
   of width / heads, each its own keys and values): named as not modelled where they say other
   than the model does, and read as absent. */
static void ignored_heads_shape(HfReader *r, int width, int heads, int *head_dim, int *kv)
{
    if (*head_dim && !HfFamily_reads(r->family, "head_dim")) {
        if (width % heads != 0 || *head_dim != width / heads)
            unmodelled_because(r, "head_dim",
                               "ignored by transformers' %s, whose heads are hidden_size / "
                               "num_attention_heads wide",
                               r->family->name);
        *head_dim = 0;
    }
    if (*kv && !HfFamily_reads(r->family, "num_key_value_heads")) {
        if (*kv != heads)
            unmodelled_because(r, "num_key_value_heads",
                               "ignored by transformers' %s, whose heads each have their own "
                               "keys and values",
                               r->family->name);
        *kv = 0;
    }
}

/* The heads and their width: d_h is head_dim where the file gives one (--head-dim; H·d_h need
   not be the residual width: Gemma 2 and 3, Qwen3-0.6B, Mistral Nemo, gpt-oss), else d/H. */
static int read_shape(HfReader *r, int *head_width)
{
    int width, heads, head_dim, kv, depth;
    const char *wkey, *hkey, *dkey, *kvkey, *lkey;
    if (size_of(r, WIDTH, -1, &width, &wkey) || size_of(r, HEADS, -1, &heads, &hkey) ||
        size_of(r, HEAD_DIM, 0, &head_dim, &dkey) || size_of(r, KV_HEADS, 0, &kv, &kvkey) ||
        size_of(r, DEPTH, -1, &depth, &lkey))
        return -1;
    ignored_heads_shape(r, width, heads, &head_dim, &kv);
    if (!head_dim && width % heads != 0) {
        char accepted[96];
        snprintf(accepted, sizeof accepted, "a multiple of %s = %d (or a head_dim)", hkey, heads);
        return HfReader_refuse(r, wkey, HfReader_lookup(r, wkey), accepted);
    }
    *head_width = head_dim ? head_dim : width / heads;
    if (kv && (kv > heads || heads % kv != 0)) {
        char accepted[96];
        snprintf(accepted, sizeof accepted, "a divisor of %s = %d", hkey, heads);
        return HfReader_refuse(r, kvkey, HfReader_lookup(r, kvkey), accepted);
    }
    /* The settings' own relations (Config_validate's), judged here where the file set both
       sides, so that the message names its fields and not options nobody gave. */
    if (head_dim > width) {
        char accepted[96];
        snprintf(accepted, sizeof accepted,
                 "at most %s = %d (a head's width within the residual "
                 "width)",
                 wkey, width);
        return HfReader_refuse(r, dkey, HfReader_lookup(r, dkey), accepted);
    }
    long long inner = (long long)heads * *head_width;
    if (r->family->block->rope && inner != width && *head_width % 2 != 0)
        return HfReader_refuse(r, dkey, HfReader_lookup(r, dkey),
                               "an even width: rotary positions turn a head's dimensions in pairs");
    if (inner > CONFIG_WIDTH_MAX) {
        snprintf(r->err, r->size,
                 "'%s': %s = %d heads of %d (%s) make H·d_h = %lld: accepted H·d_h <= %d", r->file,
                 hkey, heads, *head_width, head_dim ? dkey : "its width / heads", inner,
                 CONFIG_WIDTH_MAX);
        return -1;
    }
    /* 0 (d/H) where the heads split the width, so such a file gives the settings it always
       gave. */
    return HfReader_put_int(r, "width", width, wkey) || HfReader_put_int(r, "heads", heads, hkey) ||
           HfReader_put_int(r, "head-dim", inner == width ? 0 : *head_width, dkey ? dkey : hkey) ||
           HfReader_put_int(r, "kv-heads", kv, kvkey) || HfReader_put_int(r, "depth", depth, lkey);
}

/* The norms: the family's kind and placement, PyTorch's rows (√d) with the file's ε. */
static int read_norms(HfReader *r)
{
    const HfFamily *f = r->family;
    const JsonValue *v;
    const char *key;
    double eps = 0;
    if (HfReader_concept(r, EPS, &v, &key) || number_of(r, key, v, &eps))
        return -1;
    return HfReader_put(r, "layernorm", LAYERNORM_NAMES.names[f->block->norm], "model_type") ||
           HfReader_put(r, "ln-place", LN_PLACE_NAMES.names[f->block->place], "model_type") ||
           HfReader_put(r, "ln-scale", "sqrt-d", "model_type") ||
           put_double(r, "ln-eps", eps, key) ||
           HfReader_put(r, "norm-gain-offset", f->block->gain_offset ? "1" : "0", "model_type") ||
           HfReader_put(r, "qk-norm", QK_NORM_NAMES.names[f->qk_norm], "model_type") ||
           HfReader_put(r, "qk-norm-place", "before-rope", "model_type");
}

/* A rotary scaling as a file spells it (rope_scaling, or transformers 5's rope_parameters):
   where, its object, and the kind its rope_type (or the older type) names. */
typedef struct {
    const char *where;
    const JsonValue *object;
    RopeScaling kind;
} HfScaling;

/* Why a rope_type other than default, linear and llama3 is not modelled (transformers'
   modeling_rope_utils.py computes each). */
static void scaling_unmodelled(HfReader *r, const char *where, const JsonValue *s, const char *type)
{
    const char *why =
        strcmp(type, "dynamic") == 0 ? "its theta grows with the sequence length at inference"
        : strcmp(type, "yarn") == 0  ? "YaRN scales the attention too, by attention_factor"
        : strcmp(type, "longrope") == 0 || strcmp(type, "su") == 0 /* Phi-3's first name */
            ? "LongRoPE's per-frequency factors and attention scale"
            : "a rope_type attnscope does not know";
    char text[256];
    snprintf(text, sizeof text,
             "rotary scaling %.40s (%s): attnscope models rope_type linear and llama3 "
             "(--rope-scaling)",
             type, why);
    HfReader_unmodelled(r, where, s, text);
}

/* A scaling object without a rope_type or type: transformers 5 turns the default rotation
   and ignores its scaling members (transformers 4 refuses it, a required key missing), so
   attnscope turns the default too, and names what is ignored rather than drop it silently.
   θ and the rotated share are not scaling members: rope_parameters holds them either way. */
static void scaling_without_type(HfReader *r, const char *where, const JsonValue *s)
{
    char ignored[96] = "";
    size_t used = 0;
    for (int i = 0; i < s->count && used < sizeof ignored; i++) {
        const char *key = s->keys[i];
        if (strcmp(key, "rope_theta") == 0 || strcmp(key, "partial_rotary_factor") == 0)
            continue;
        const JsonValue *v = &s->items[i];
        int n =
            snprintf(ignored + used, sizeof ignored - used, "%s%.40s%s%.24s", used ? ", " : "", key,
                     v->kind == JSON_NUMBER ? " " : "", v->kind == JSON_NUMBER ? v->text : "");
        used += n > 0 ? (size_t)n : 0;
    }
    if (!ignored[0])
        return;
    char why[256];
    snprintf(why, sizeof why,
             "no rope_type (or type): transformers uses the default rotation and ignores %s "
             "(transformers 4 refuses the file), and so does attnscope",
             ignored);
    HfReader_unmodelled(r, where, s, why);
}

/* The scaling object s at `where`: its rope_type, or the older type (HF reads both; absent:
   default, no scaling).  Linear and llama3 are modelled; another type is named as not. */
static int read_scaling(HfReader *r, const char *where, const JsonValue *s, HfScaling *out)
{
    const char *type_key = JsonValue_member(s, "rope_type") ? "rope_type" : "type";
    const JsonValue *type = JsonValue_member(s, type_key);
    char key[96];
    snprintf(key, sizeof key, "%s.%s", where, type_key);
    if (type && type->kind != JSON_STRING)
        return HfReader_refuse(r, key, type, "a string (default, linear, llama3, ...)");
    const char *name = type ? type->text : "default";
    int kind = EnumNames_find(&ROPE_SCALING_NAMES, name);
    *out = (HfScaling){.where = where, .object = s, .kind = ROPE_SCALING_NONE};
    if (kind > 0)
        out->kind = (RopeScaling)kind;
    else if (!type)
        scaling_without_type(r, where, s);
    else if (strcmp(name, "default") != 0)
        scaling_unmodelled(r, where, s, name);
    return 0;
}

/* The member `name` of the scaling object into `setting`: a number, whole for a whole-number
   setting (original_max_position_embeddings); the setting checks its range. */
static int scaling_member(HfReader *r, const HfScaling *h, const char *name, const char *setting)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", h->where, name);
    const JsonValue *v = JsonValue_member(h->object, name);
    double x = 0;
    int n = 0;
    if (Settings_find(setting)->kind == SETTING_INT)
        return HfReader_whole(r, key, v, 1, &n) || HfReader_put_int(r, setting, n, key);
    return number_of(r, key, v, &x) || put_double(r, setting, x, key);
}

/* --rope-scaling and its numbers from h (NULL: none).  llama3's blend runs between the
   wavelengths C/high < C/low. */
static int put_scaling(HfReader *r, const HfScaling *h)
{
    if (!h)
        return HfReader_put(r, "rope-scaling", "none", "rope_scaling");
    char key[96];
    snprintf(key, sizeof key, "%s.rope_type", h->where);
    if (HfReader_put(r, "rope-scaling", ROPE_SCALING_NAMES.names[h->kind], key) ||
        scaling_member(r, h, "factor", "rope-factor"))
        return -1;
    if (h->kind != ROPE_SCALING_LLAMA3)
        return 0;
    if (scaling_member(r, h, "low_freq_factor", "rope-low-freq-factor") ||
        scaling_member(r, h, "high_freq_factor", "rope-high-freq-factor") ||
        scaling_member(r, h, "original_max_position_embeddings", "rope-original-context"))
        return -1;
    if (r->trial.rope_low_freq_factor < r->trial.rope_high_freq_factor)
        return 0;
    char accepted[96];
    snprintf(key, sizeof key, "%s.low_freq_factor", h->where);
    snprintf(accepted, sizeof accepted, "a number below high_freq_factor = %g",
             r->trial.rope_high_freq_factor);
    return HfReader_refuse(r, key, JsonValue_member(h->object, "low_freq_factor"), accepted);
}

/* The local layers' rotary parameters under rope_parameters (transformers 5's
   sliding_attention): their θ, turned unscaled (a scaling there is named as not modelled). */
static int local_rope_parameters(HfReader *r, const JsonValue *local, double *local_theta)
{
    static const char WHERE[] = "rope_parameters.sliding_attention";
    if (local->kind != JSON_OBJECT)
        return HfReader_refuse(r, WHERE, local, "an object");
    const JsonValue *theta = JsonValue_member(local, "rope_theta");
    HfScaling scaling;
    if ((theta &&
         number_of(r, "rope_parameters.sliding_attention.rope_theta", theta, local_theta)) ||
        read_scaling(r, WHERE, local, &scaling))
        return -1;
    if (scaling.kind != ROPE_SCALING_NONE)
        HfReader_unmodelled(r, WHERE, local,
                            "the local layers' frequencies scaled: attnscope turns the local "
                            "layers (--rope-local-base-freq) unscaled, as Gemma 3 does");
    return 0;
}

/* rope_parameters (transformers 5): {"rope_type", "rope_theta", "partial_rotary_factor", ...},
   or one such object per layer type (Gemma 3: full_attention, sliding_attention), the
   global one giving θ and the scaling, the local one *local_theta. */
static int rope_parameters(HfReader *r, const JsonValue *p, double *theta, double *fraction,
                           HfScaling *scaling, double *local_theta)
{
    const JsonValue *global = JsonValue_member(p, "full_attention");
    if (global) {
        const JsonValue *local = JsonValue_member(p, "sliding_attention");
        if (global->kind != JSON_OBJECT)
            return HfReader_refuse(r, "rope_parameters.full_attention", global, "an object");
        if (local && local_rope_parameters(r, local, local_theta))
            return -1;
        p = global;
    }
    for (int i = 0; i < p->count; i++) {
        const char *key = p->keys[i];
        const JsonValue *v = &p->items[i];
        if (strcmp(key, "rope_theta") == 0 && number_of(r, "rope_parameters.rope_theta", v, theta))
            return -1;
        if (strcmp(key, "partial_rotary_factor") == 0 &&
            number_of(r, "rope_parameters.partial_rotary_factor", v, fraction))
            return -1;
    }
    return read_scaling(r, global ? "rope_parameters.full_attention" : "rope_parameters", p,
                        scaling);
}

/* The frequencies' scaling: rope_parameters' (already in *from_parameters) or rope_scaling's,
   one of them, or both saying the same.  Where the family has local rotary layers (Gemma 3)
   it scales the global ones alone, as --rope-local-base-freq's layers turn unscaled. */
static int read_rope_scaling(HfReader *r, const HfScaling *from_parameters)
{
    /* A family's default rope_scaling (gpt-oss: YaRN) is transformers 4's spelling: a file
       in transformers 5's rope_parameters spells its scaling there instead. */
    const JsonValue *p = JsonValue_member(r->object, "rope_parameters");
    const JsonValue *s = JsonValue_member(r->object, "rope_scaling") || !p || p->kind == JSON_NULL
                             ? HfReader_lookup(r, "rope_scaling")
                             : NULL;
    HfScaling from_scaling = {.kind = ROPE_SCALING_NONE};
    if (s && s->kind != JSON_NULL && s->kind != JSON_OBJECT)
        return HfReader_refuse(r, "rope_scaling", s, "an object or null");
    if (s && s->kind == JSON_OBJECT && read_scaling(r, "rope_scaling", s, &from_scaling))
        return -1;
    const HfScaling *h = from_parameters->kind != ROPE_SCALING_NONE ? from_parameters
                         : from_scaling.kind != ROPE_SCALING_NONE   ? &from_scaling
                                                                    : NULL;
    if (put_scaling(r, h))
        return -1;
    if (h == from_parameters && from_scaling.kind != ROPE_SCALING_NONE) {
        Config other = r->trial;
        if (put_scaling(r, &from_scaling))
            return -1;
        if (!Config_equal(&other, &r->trial)) {
            snprintf(r->err, r->size,
                     "'%s': \"rope_scaling\" and \"%s\" spell one rotary scaling with two "
                     "values",
                     r->file, from_parameters->where);
            return -1;
        }
    }
    return 0;
}

/* The local layers' θ: rope_parameters.sliding_attention's (already in *local_theta, NaN where
   absent), or rope_local_base_freq for a family whose defaults name one (Gemma 3: HF reads it
   there alone); 0 for none, every layer turning by rope_theta. */
static int put_local_theta(HfReader *r, double local_theta)
{
    const char *key = "rope_parameters.sliding_attention.rope_theta";
    if (isnan(local_theta) && JsonValue_member(r->defaults, "rope_local_base_freq")) {
        key = "rope_local_base_freq";
        if (number_of(r, key, HfReader_lookup(r, key), &local_theta))
            return -1;
    }
    if (isnan(local_theta)) {
        local_theta = 0;
        key = "model_type";
    }
    return put_double(r, "rope-local-base-freq", local_theta, key);
}

/* Rotary positions: HF's rotate_half, θ from rope_theta or rope_parameters, the rotated
   share from partial_rotary_factor, the frequencies' scaling from rope_scaling (or
   rope_parameters), a local layers' θ where the family has one; every layer rotates. */
static int read_rope(HfReader *r)
{
    if (!r->family->block->rope)
        return HfReader_put(r, "rope", "none", "model_type") ||
               HfReader_put(r, "rope-scaling", "none", "model_type") ||
               HfReader_put(r, "rope-local-base-freq", "0", "model_type");
    /* NaN: not given.  The file's top-level fields, then its rope_parameters, then the
       family's default θ. */
    double theta = NAN, fraction = NAN, top_theta = NAN, top_fraction = NAN, local_theta = NAN;
    HfScaling scaling = {.kind = ROPE_SCALING_NONE};
    const JsonValue *p = HfReader_lookup(r, "rope_parameters");
    const JsonValue *t = JsonValue_member(r->object, "rope_theta");
    const JsonValue *f = HfReader_lookup(r, "partial_rotary_factor");
    if (p && p->kind != JSON_NULL && p->kind != JSON_OBJECT)
        return HfReader_refuse(r, "rope_parameters", p, "an object");
    if (t)
        HfReader_lookup(r, "rope_theta");
    else
        t = JsonValue_member(r->defaults, "rope_theta");
    if ((p && p->kind == JSON_OBJECT &&
         rope_parameters(r, p, &theta, &fraction, &scaling, &local_theta)) ||
        (t && number_of(r, "rope_theta", t, &top_theta)) ||
        (f && f->kind != JSON_NULL && number_of(r, "partial_rotary_factor", f, &top_fraction)))
        return -1;
    bool theta_twice = JsonValue_member(r->object, "rope_theta") && !isnan(theta);
    if ((theta_twice && top_theta != theta) ||
        (!isnan(top_fraction) && !isnan(fraction) && top_fraction != fraction)) {
        snprintf(r->err, r->size,
                 "'%s': \"%s\" and \"rope_parameters.%s\" spell one setting with "
                 "two values",
                 r->file, theta_twice ? "rope_theta" : "partial_rotary_factor",
                 theta_twice ? "rope_theta" : "partial_rotary_factor");
        return -1;
    }
    theta = isnan(theta) ? top_theta : theta;
    fraction = !isnan(fraction) ? fraction : !isnan(top_fraction) ? top_fraction : 1;
    if (isnan(theta))
        return HfReader_refuse(r, "rope_theta", NULL, "a number (or rope_parameters.rope_theta)");
    if (fraction != 1 && !HfFamily_reads(r->family, "partial_rotary_factor")) {
        bool top = !isnan(top_fraction);
        HfReader_unmodelled(r, top ? "partial_rotary_factor" : "rope_parameters", top ? f : p,
                            "a share of each head rotated: transformers' model of this family "
                            "turns every dimension (its apply_rotary_pos_emb has no partial "
                            "rotation), and so does attnscope");
        fraction = 1;
    }
    return HfReader_put(r, "rope", "half", "model_type") ||
           put_double(r, "rope-theta", theta, "rope_theta") ||
           put_double(r, "rope-fraction", fraction, "partial_rotary_factor") ||
           HfReader_put(r, "nope-every", "0", "model_type") || read_rope_scaling(r, &scaling) ||
           put_local_theta(r, local_theta);
}

/* The attention's kind and scale, its soft-cap and sinks, W^O and the plain residual. */
static int read_attention(HfReader *r, int head_width, double init_std)
{
    const JsonValue *cap = HfReader_lookup(r, "attn_logit_softcapping");
    const JsonValue *scalar = HfReader_lookup(r, "query_pre_attn_scalar");
    double softcap = 0, query_scalar = head_width;
    if ((cap && cap->kind != JSON_NULL && number_of(r, "attn_logit_softcapping", cap, &softcap)) ||
        (scalar && scalar->kind != JSON_NULL &&
         number_of(r, "query_pre_attn_scalar", scalar, &query_scalar)))
        return -1;
    if (softcap != 0 && !HfFamily_reads(r->family, "attn_logit_softcapping")) {
        unmodelled_because(r, "attn_logit_softcapping",
                           "ignored by transformers' %s, whose attention does not cap the logits",
                           r->family->name);
        softcap = 0;
    }
    if (query_scalar != head_width) {
        unmodelled_because(r, "query_pre_attn_scalar",
                           "the logits are scaled by 1/sqrt(query_pre_attn_scalar), attnscope's "
                           "by 1/sqrt(d_h) = 1/sqrt(%d)",
                           head_width);
    }
    bool sinks = r->family->block->sinks;
    return HfReader_put(r, "attention", "softmax", "model_type") ||
           HfReader_put(r, "logit-scale", "sqrt", "model_type") ||
           put_double(r, "logit-softcap", softcap, "attn_logit_softcapping") ||
           HfReader_put(r, "sink", sinks ? "0" : "none", "model_type") ||
           put_double(r, "sink-std", sinks ? init_std : 0, "initializer_range") ||
           HfReader_put(r, "wo", "gaussian", "model_type") ||
           HfReader_put(r, "skip", "plain", "model_type") ||
           HfReader_put(r, "skip-gain", "1", "model_type") ||
           HfReader_put(r, "branch-gain", "1", "model_type");
}

/* The name f's MLP reads its activation under (hidden_act for none). */
static const char *activation_key(const HfFamily *f)
{
    for (int i = 0; f && ACTIVATION[i]; i++)
        if (HfFamily_reads(f, ACTIVATION[i]))
            return ACTIVATION[i];
    return ACTIVATION[0];
}

const char *HfConfig_activation_key(const char *model_type)
{
    return activation_key(model_type ? HfFamily_find(model_type) : NULL);
}

/* The activation under the family's own name (Gemma 2 and 3: hidden_activation); another
   spelling the file gives with another value is named as ignored by the family's model. */
static void read_activation(HfReader *r, const JsonValue **act, const char **akey)
{
    const HfFamily *f = r->family;
    *akey = activation_key(f);
    *act = HfReader_lookup(r, *akey);
    for (int i = 0; ACTIVATION[i]; i++) {
        const JsonValue *other = JsonValue_member(r->object, ACTIVATION[i]);
        if (ACTIVATION[i] == *akey || !other)
            continue;
        HfReader_lookup(r, ACTIVATION[i]);
        if (!*act || !same_value(other, *act))
            unmodelled_because(
                r, ACTIVATION[i], "ignored by transformers' %s, whose MLP reads %s (here %s)",
                f->name, *akey, *act && (*act)->kind == JSON_STRING ? (*act)->text : "absent");
    }
}

/* The MLP: its activation (gated in the Llama family) and width; none for experts. */
static int read_mlp(HfReader *r)
{
    const HfFamily *f = r->family;
    if (f->block->mlp == HF_MLP_EXPERTS)
        return HfReader_put(r, "mlp", "none", "model_type");
    const JsonValue *act, *n;
    const char *akey, *nkey;
    read_activation(r, &act, &akey);
    if (HfReader_concept(r, MLP_WIDTH, &n, &nkey))
        return -1;
    bool gated = f->block->mlp == HF_MLP_GATED;
    const HfActivation *a =
        HfActivation_find(act && act->kind == JSON_STRING ? act->text : "", gated);
    if (!a) {
        char accepted[160];
        HfActivation_accepted(gated, accepted, sizeof accepted);
        return HfReader_refuse(r, akey, act, accepted);
    }
    if (a->unlike)
        HfReader_unmodelled(r, akey, NULL, a->unlike);
    if (HfReader_put(r, "mlp", MLP_NAMES.names[a->mlp], akey))
        return -1;
    /* GPT-2's n_inner: null is 4 n_embd.  Where the config class's default is a number
       (LlamaConfig's intermediate_size), transformers builds its MLP from the value as given,
       and null is no width at all. */
    const JsonValue *fallback = JsonValue_member(r->defaults, nkey);
    if (n && n->kind == JSON_NULL && fallback && fallback->kind == JSON_NUMBER)
        return HfReader_refuse(r, nkey, n,
                               "a whole number from 1 to 1048576 (the MLP's width; null gives "
                               "transformers none to build)");
    if (!n || n->kind == JSON_NULL)
        return HfReader_put(r, "mlp-ratio", "4", nkey) || HfReader_put(r, "mlp-hidden", "0", nkey);
    int hidden;
    return HfReader_whole(r, nkey, n, 1, &hidden) ||
           HfReader_put_int(r, "mlp-hidden", hidden, nkey);
}

/* HF's _init_weights: every matrix N(0, initializer_range²), the scheme the presets call gpt2;
   GPT-2 alone scales its c_proj by 1/sqrt(2 n_layer) (the scheme's own depth scaling). */
static int read_init(HfReader *r, double *std)
{
    const JsonValue *v = HfReader_lookup(r, "initializer_range");
    static const char *const MATRICES[] = {"init-query", "init-key", "init-value", "init-output",
                                           "init-mlp"};
    if (number_of(r, "initializer_range", v, std) ||
        HfReader_put(r, "init", "gpt2", "model_type") ||
        put_double(r, "init-std", *std, "initializer_range") ||
        HfReader_put(r, "depth-scale", DEPTH_SCALE_NAMES.names[r->family->block->depth_scale],
                     "model_type"))
        return -1;
    for (size_t i = 0; i < sizeof MATRICES / sizeof *MATRICES; i++)
        if (HfReader_put(r, MATRICES[i], "scheme", "model_type"))
            return -1;
    return 0;
}

static int read_model(HfReader *r)
{
    int head_width = 0;
    double std = 0;
    if (read_shape(r, &head_width) || read_norms(r) || read_rope(r) || read_init(r, &std) ||
        read_attention(r, head_width, std) || read_mlp(r) || HfReader_windows(r))
        return -1;
    if (r->family->implied) {
        JsonValue type = {.kind = JSON_STRING,
                          .text = (char *)r->family->model_type,
                          .length = strlen(r->family->model_type)};
        HfReader_unmodelled(r, "model_type", &type, r->family->implied);
    }
    HfReader_judge_rest(r);
    return 0;
}

/* Runs r over its object: the model's settings, or (model false: a multimodal wrapper) only
   the judgement of its fields. */
static int run_reader(HfReader *r, bool model)
{
    char message[256];
    JsonValue *defaults =
        Json_parse(r->family->defaults, strlen(r->family->defaults), message, sizeof message);
    r->consumed = calloc((size_t)r->object->count + 1, sizeof *r->consumed);
    int status = -1;
    if (!defaults || !r->consumed)
        snprintf(r->err, r->size, "'%s': %s", r->file, defaults ? "out of memory" : message);
    else {
        r->defaults = defaults;
        HfReader_lookup(r, "model_type");
        if (r->family->nested)
            HfReader_lookup(r, r->family->nested);
        status = model ? read_model(r) : (HfReader_judge_rest(r), 0);
    }
    free(r->consumed);
    JsonValue_free(defaults);
    return status;
}

/* The document: its model_type names the family; a wrapper's text model is read from its
   nested object (absent: the text model's defaults, as transformers does). */
static int read_document(const JsonValue *v, const char *name, Config *c, HfConfigReport *h,
                         char *err, size_t size)
{
    char accepted[256];
    HfFamily_accepted(accepted, sizeof accepted);
    const JsonValue *type = JsonValue_member(v, "model_type");
    const HfFamily *f = type && type->kind == JSON_STRING ? HfFamily_find(type->text) : NULL;
    if (v->kind != JSON_OBJECT) {
        snprintf(err, size, "'%s': a config.json holds a JSON object, found %s", name,
                 JsonKind_name(v->kind));
        return -1;
    }
    if (!f) {
        /* attnscope's own export names no model_type: its settings are under "attnscope". */
        const char *own = JsonValue_member(v, "attnscope") && !type
                              ? " (a config.json --export-weights wrote: give its settings as "
                                "options)"
                              : "";
        snprintf(err, size, "'%s': \"model_type\" is %s%.60s%s: accepted %s (docs/hf-config.md)%s",
                 name, type && type->kind == JSON_STRING ? "\"" : "",
                 !type                       ? "missing"
                 : type->kind == JSON_STRING ? type->text
                                             : JsonKind_name(type->kind),
                 type && type->kind == JSON_STRING ? "\"" : "", accepted, own);
        return -1;
    }
    snprintf(h->file, sizeof h->file, "%s", name);
    snprintf(h->model_type, sizeof h->model_type, "%s", f->model_type);
    HfReader r = {
        .file = name, .family = f, .object = v, .trial = *c, .report = h, .err = err, .size = size};
    if (f->nested) {
        static const JsonValue EMPTY = {.kind = JSON_OBJECT};
        const JsonValue *inner = JsonValue_member(v, f->nested);
        const JsonValue *inner_type = JsonValue_member(inner, "model_type");
        if (inner && inner->kind != JSON_OBJECT && inner->kind != JSON_NULL)
            return HfReader_refuse(&r, f->nested, inner, "an object (the text model's config)");
        if (inner_type &&
            (inner_type->kind != JSON_STRING || strcmp(inner_type->text, f->nested_type) != 0)) {
            char want[80];
            snprintf(want, sizeof want, "\"%s\"", f->nested_type);
            return HfReader_refuse(&r, "text_config.model_type", inner_type, want);
        }
        if (run_reader(&r, false))
            return -1;
        r.family = HfFamily_find(f->nested_type);
        r.object = inner && inner->kind == JSON_OBJECT ? inner : &EMPTY;
    }
    if (run_reader(&r, true))
        return -1;
    *c = r.trial;
    return 0;
}

int HfConfig_parse(const char *text, size_t length, const char *name, Config *c,
                   HfConfigReport *report, char *err, size_t size)
{
    JsonLimits limits = {.max_bytes = HF_CONFIG_MAX_BYTES,
                         .max_depth = JSON_DEPTH_MAX,
                         .max_values = HF_CONFIG_MAX_VALUES};
    char message[256];
    JsonValue *v = Json_parse_within(text, length, &limits, message, sizeof message);
    if (!v) {
        snprintf(err, size, "'%s': %s", name, message);
        return -1;
    }
    HfConfigReport *h = calloc(1, sizeof *h);
    Config trial = *c;
    int status = h ? read_document(v, name, &trial, h, err, size) : -1;
    if (!h)
        snprintf(err, size, "'%s': out of memory", name);
    if (status == 0) {
        *c = trial;
        h->read = trial;
        *report = *h;
    }
    free(h);
    JsonValue_free(v);
    return status;
}

int HfConfig_apply(const char *path, Config *c, HfConfigReport *report, char *err, size_t size)
{
    char file[1100];
    struct stat st;
    bool directory = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(file, sizeof file, directory ? "%s/config.json" : "%s", path);
    char *text;
    size_t n;
    FileWhole outcome = File_read_regular(file, HF_CONFIG_MAX_BYTES, &text, &n, err, size);
    int status = -1;
    if (outcome == FILE_WHOLE_READ)
        status = HfConfig_parse(text, n, file, c, report, err, size);
    else if (outcome == FILE_WHOLE_NO_MEMORY || outcome == FILE_WHOLE_TOO_LARGE)
        snprintf(err, size, "'%s': %s", file, /* the other failures' err is File_read_regular's */
                 outcome == FILE_WHOLE_NO_MEMORY ? "out of memory"
                                                 : "larger than 1 MiB: accepted a config.json (a "
                                                   "few kilobytes)");
    free(text);
    return status;
}
