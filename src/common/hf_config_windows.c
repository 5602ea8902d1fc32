/* --hf-config's sliding windows: which layers slide (layer_types, or the family's rule) and
 * what the mask then is at the T in force. */
#include "hf_config_internal.h"

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

/* The mask: the family's (causal, or full for an encoder), its sliding windows where they act
   at the T in force: a window of T keys or more covers every row, the causal mask exactly.
   The sliding layers' pattern is kept there too where a local θ (Gemma 3) turns them. */
int HfReader_windows(HfReader *r)
{
    int depth = r->trial.depth, keys, T = r->trial.tokens;
    bool local[CONFIG_DEPTH_MAX];
    char pattern[WINDOW_LAYERS_PERIOD_MAX + 1];
    if (layer_kinds(r, depth, local, &keys))
        return -1;
    HfConfigReport *h = r->report;
    bool causal = r->family->block->causal;
    h->judged_tokens = T;
    h->sliding_window = keys;
    memcpy(h->sliding_local, local, sizeof *local * (size_t)depth);
    int status;
    bool windows_act = keys && keys < T;
    bool local_theta = r->trial.rope_local_base_freq > 0;
    if ((windows_act || local_theta) && layer_pattern(local, depth, pattern)) {
        snprintf(r->err, r->size,
                 "'%s': \"layer_types\": the sliding layers do not repeat with a period of at most "
                 "%d layers: accepted a pattern --window-layers can spell",
                 r->file, WINDOW_LAYERS_PERIOD_MAX);
        return -1;
    } else if (!windows_act) {
        status = HfReader_put(r, "mask", causal ? "causal" : "full", "model_type") ||
                 HfReader_put(r, "window-layers", local_theta ? pattern : "all", "layer_types");
    } else {
        status = HfReader_put(r, "mask", causal ? "window-causal" : "window", "model_type") ||
                 HfReader_put_int(r, "window", keys - 1, "sliding_window") ||
                 HfReader_put(r, "window-layers", pattern, "layer_types");
    }
    h->mask = r->trial.mask;
    h->window = r->trial.window;
    h->window_layers = r->trial.window_layers;
    return status ? -1 : 0;
}
