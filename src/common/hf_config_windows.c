/* --hf-config's sliding windows: which layers slide (layer_types, or the family's rule) and
 * what the mask then is at the T in force. */
#include "hf_config_internal.h"

#include <stdio.h>
#include <string.h>

/* The family's sliding layers (a window given, no layer_types): Mistral every layer, Gemma 2
   and gpt-oss the first of every two, Gemma 3 all but the last of every sliding_window_pattern,
   Qwen those from max_window_layers on when use_sliding_window. */
static int family_layers(HfReader *r, int depth, bool local[])
{
    int period = 0, first_sliding = depth;
    memset(local, 0, sizeof *local * (size_t)depth);
    switch (r->family->windows) {
    case HF_WINDOWS_NONE:
        break;
    case HF_WINDOWS_EVERY:
        period = 1;
        break;
    case HF_WINDOWS_ALTERNATE:
        period = 2;
        break;
    case HF_WINDOWS_PATTERN:
        if (HfReader_whole(r, "sliding_window_pattern",
                           HfReader_lookup(r, "sliding_window_pattern"), 1, &period))
            return -1;
        break;
    case HF_WINDOWS_QWEN: {
        const JsonValue *use = HfReader_lookup(r, "use_sliding_window");
        if (use && use->kind != JSON_TRUE && use->kind != JSON_FALSE)
            return HfReader_refuse(r, "use_sliding_window", use, "true or false");
        if (use && use->kind == JSON_TRUE &&
            HfReader_whole(r, "max_window_layers", HfReader_lookup(r, "max_window_layers"), 0,
                           &first_sliding))
            return -1;
        for (int i = first_sliding; i < depth; i++)
            local[i] = true;
        break;
    }
    }
    for (int i = 0; period && i < depth; i++)
        local[i] =
            r->family->windows == HF_WINDOWS_PATTERN ? (i + 1) % period != 0 : i % period == 0;
    return 0;
}

/* Which layers slide a window (local[ℓ−1]): layer_types where the file has them, else the
   family's rule; *keys is the window's size (sliding_window), 0 when no layer slides. */
static int layer_kinds(HfReader *r, int depth, bool local[], int *keys)
{
    const JsonValue *types = HfReader_lookup(r, "layer_types");
    /* Gemma 2's first configs spell the window twice. */
    static const char *const WINDOW[] = {"sliding_window", "sliding_window_size", NULL};
    const JsonValue *w;
    const char *wkey;
    if (HfReader_concept(r, WINDOW, &w, &wkey))
        return -1;
    bool windowed = w && w->kind != JSON_NULL;
    memset(local, 0, sizeof *local * (size_t)depth);
    if (types && types->kind != JSON_NULL) {
        if (types->kind != JSON_ARRAY || types->count != depth) {
            snprintf(r->err, r->size,
                     "'%s': \"layer_types\" is %s of %d: accepted an array of %d names, one per "
                     "layer (num_hidden_layers)",
                     r->file, JsonKind_name(types->kind),
                     types->kind == JSON_ARRAY ? types->count : 1, depth);
            return -1;
        }
        for (int i = 0; i < depth; i++) {
            const JsonValue *t = &types->items[i];
            bool sliding = t->kind == JSON_STRING && strcmp(t->text, "sliding_attention") == 0;
            if (!sliding && (t->kind != JSON_STRING || strcmp(t->text, "full_attention") != 0)) {
                char key[32];
                snprintf(key, sizeof key, "layer_types[%d]", i);
                return HfReader_refuse(r, key, t, "\"sliding_attention\" or \"full_attention\"");
            }
            local[i] = sliding;
        }
    } else if (windowed && family_layers(r, depth, local)) {
        return -1;
    }
    /* Gemma 3's configs may state both: the pattern must then be the one layer_types lists. */
    bool rule[CONFIG_DEPTH_MAX];
    if (types && types->kind != JSON_NULL && r->family->windows == HF_WINDOWS_PATTERN &&
        JsonValue_member(r->object, "sliding_window_pattern")) {
        if (family_layers(r, depth, rule))
            return -1;
        if (memcmp(rule, local, sizeof *local * (size_t)depth) != 0)
            return HfReader_refuse(r, "sliding_window_pattern",
                                   HfReader_lookup(r, "sliding_window_pattern"),
                                   "the pattern layer_types lists");
    }
    *keys = 0;
    for (int i = 0; i < depth; i++)
        if (local[i])
            return HfReader_whole(r, wkey, w, 2, keys);
    return 0;
}

/* The shortest period (at most WINDOW_LAYERS_PERIOD_MAX layers) of local[] as L/G letters,
   "all" when every layer slides; -1 when it has none. */
static int layer_pattern(const bool local[], int depth, char *out)
{
    int all = 1;
    for (int i = 0; i < depth; i++)
        all &= local[i];
    if (all) {
        strcpy(out, "all");
        return 0;
    }
    for (int p = 1; p <= WINDOW_LAYERS_PERIOD_MAX; p++) {
        int i = p;
        while (i < depth && local[i] == local[i % p])
            i++;
        if (i >= depth) {
            for (int k = 0; k < p; k++)
                out[k] = local[k] ? 'L' : 'G';
            out[p] = '\0';
            return 0;
        }
    }
    return -1;
}

/* The mask, window and layers at T for the sliding window h describes, on c through the
   settings' own setters: the window where it acts (fewer keys than T), else the family's
   mask (causal, or full for an encoder), exactly what a window of T keys or more leaves.
   The layers as --window-layers spells them, from h's sliding_local over depth layers: where
   the window acts its sliding layers, where it covers every token "all", or the sliding
   layers where a local θ (local_theta) turns them.  put(context, setting, text) sets one; 0,
   or -1 where it refused. */
typedef int (*PutSetting)(void *context, const char *setting, const char *text, const char *key);

static int put_window(const HfConfigReport *h, int depth, bool local_theta, int T, PutSetting put,
                      void *context)
{
    char keys[16], pattern[WINDOW_LAYERS_PERIOD_MAX + 1];
    bool acts = h->sliding_window && h->sliding_window < T;
    if ((acts || local_theta) && layer_pattern(h->sliding_local, depth, pattern))
        return -1; /* the callers said so first: sliding_pattern */
    snprintf(keys, sizeof keys, "%d", h->sliding_window - 1);
    if (!acts)
        return put(context, "mask", h->causal ? "causal" : "full", "model_type") ||
               put(context, "window-layers", local_theta ? pattern : "all", "layer_types");
    return put(context, "mask", h->causal ? "window-causal" : "window", "model_type") ||
           put(context, "window", keys, "sliding_window") ||
           put(context, "window-layers", pattern, "layer_types");
}

/* Whether the sliding layers h read over depth layers repeat with a period --window-layers
   can spell. */
static bool sliding_pattern(const HfConfigReport *h, int depth)
{
    char pattern[WINDOW_LAYERS_PERIOD_MAX + 1];
    return layer_pattern(h->sliding_local, depth, pattern) == 0;
}

static int put_read(void *context, const char *setting, const char *text, const char *key)
{
    return HfReader_put(context, setting, text, key);
}

/* The mask: the family's (causal, or full for an encoder), its sliding windows where they act
   at the T in force: a window of T keys or more covers every row, the causal mask exactly.
   The sliding layers' pattern is kept there too where a local θ (Gemma 3) turns them. */
int HfReader_windows(HfReader *r)
{
    int depth = r->trial.depth, keys, T = r->trial.tokens;
    bool local[CONFIG_DEPTH_MAX];
    if (layer_kinds(r, depth, local, &keys))
        return -1;
    HfConfigReport *h = r->report;
    h->causal = r->family->block->causal;
    h->judged_tokens = T;
    h->sliding_window = keys;
    memcpy(h->sliding_local, local, sizeof *local * (size_t)depth);
    bool local_theta = r->trial.rope_local_base_freq > 0;
    if (((keys && keys < T) || local_theta) && !sliding_pattern(h, depth)) {
        snprintf(r->err, r->size,
                 "'%s': \"layer_types\": the sliding layers do not repeat with a period of at most "
                 "%d layers: accepted a pattern --window-layers can spell",
                 r->file, WINDOW_LAYERS_PERIOD_MAX);
        return -1;
    }
    h->window_before = r->trial.window;
    int status = put_window(h, depth, local_theta, T, put_read, r);
    h->mask = r->trial.mask;
    h->window = r->trial.window;
    h->window_layers = r->trial.window_layers;
    return status ? -1 : 0;
}

typedef struct {
    Config *c;
    char *err;
    size_t size;
} PutOption;

static int put_option(void *context, const char *setting, const char *text, const char *key)
{
    (void)key;
    PutOption *p = context;
    return Setting_parse(Settings_find(setting), p->c, text, p->err, p->size);
}

int HfConfig_judge_tokens(HfConfigReport *h, Config *c, char *err, size_t size)
{
    int T = c->tokens;
    if (!h->file[0] || !h->sliding_window || T == h->judged_tokens || c->mask != h->mask ||
        c->window != h->window || c->window_layers != h->window_layers)
        return 0;
    int depth = h->read.depth;
    bool local_theta = h->read.rope_local_base_freq > 0;
    if (h->sliding_window < T && !sliding_pattern(h, depth)) {
        snprintf(err, size,
                 "--token-ids: T = %d, the ids' count: the sliding window of --hf-config %s "
                 "(%d keys) acts, and its sliding layers do not repeat with a period of at most "
                 "%d layers (--window-layers)",
                 T, h->file, h->sliding_window, WINDOW_LAYERS_PERIOD_MAX);
        return -1;
    }
    Config trial = *c;
    PutOption option = {&trial, err, size};
    if (put_window(h, depth, local_theta, T, put_option, &option))
        return -1;
    if (!(h->sliding_window < T))
        trial.window = h->window_before;
    *c = trial;
    h->judged_tokens = T;
    h->read.mask = h->mask = c->mask;
    h->read.window = h->window = c->window;
    h->read.window_layers = h->window_layers = c->window_layers;
    return 0;
}
