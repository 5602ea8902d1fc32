/* What the files of the settings table share inside the core (config.h is their interface):
 *
 *   config.c               the one table of settings, the predicates its rows point to, and the
 *                          lookups of a row; the rows themselves in config_rows_*.inc, by what
 *                          they set, included there in table order
 *   config_values.c        the enumerations' names; one setting's value read, written, parsed,
 *                          formatted and shown; a whole configuration through every row
 *   config_rules.c         the relations between settings (Config_validate) and what follows
 *                          from a configuration (σ, widths, heads, sinks)
 *   config_window_layers.c the --window-layers pattern: its code, its spelling, each layer's mask
 *                          and local rotary θ
 */
#ifndef ATTNSCOPE_CONFIG_INTERNAL_H
#define ATTNSCOPE_CONFIG_INTERNAL_H

#include "attnscope/attention.h"
#include "attnscope/config.h"

#include <stdbool.h>

/* The window-layers key's stops, named beside the enumerations (config_values.c). */
extern const EnumNames WINDOW_LAYERS_STOPS;

/* Two of the table's in-use predicates that the rules read too (Config_validate,
   Config_layer_local, Config_sigma): inline here, under the names the rows give them. */
static inline bool window_in_use(const Config *c)
{
    return c->mask == MASK_WINDOW || c->mask == MASK_WINDOW_CAUSAL;
}

/* A local rotary θ (Gemma 3's rope_local_base_freq) turns the layers the --window-layers
   pattern marks local: RoPE on, an attention kind with queries and keys, the θ set. */
static inline bool rope_local_in_use(const Config *c)
{
    return c->rope != ROPE_NONE && c->rope_local_base_freq > 0 &&
           Attention_has_query_key(c->attention);
}

/* Whether some layer 1 … L turns by the local θ (by_local_theta) or by the global one, by the
   rotation's own predicates (Qk_rotates, Config_layer_rotary_local): a θ no layer turns by has
   no effect. */
bool Config_some_layer_turns(const Config *c, bool by_local_theta);

/* The --window-layers pattern picks each layer's mask, and the layers a set local θ turns:
   with no layer local (G, 0:1) that θ acts nowhere, and the pattern with it. */
static inline bool window_layers_in_use(const Config *c)
{
    return window_in_use(c) || Config_some_layer_turns(c, true);
}

/* The cutting-skip scheme sets W^Q W^Kᵀ = αZ + βI as the logits' matrix itself. */
static inline bool logit_scale_in_use(const Config *c)
{
    return c->attention != ATTENTION_MARKOV && c->attention != ATTENTION_UNIFORM &&
           c->attention != ATTENTION_IDENTITY && c->init != INIT_CUTTING_SKIP;
}

#endif
