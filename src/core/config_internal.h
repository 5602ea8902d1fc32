/* What the files of the settings table share inside the core (config.h is their interface):
 *
 *   config.c               the one table of settings, the predicates its rows point to, and the
 *                          lookups of a row
 *   config_values.c        the enumerations' names; one setting's value read, written, parsed,
 *                          formatted and shown; a whole configuration through every row
 *   config_rules.c         the relations between settings (Config_validate) and what follows
 *                          from a configuration (σ, widths, heads, sinks)
 *   config_window_layers.c the --window-layers pattern: its code, its spelling, each layer's mask
 */
#ifndef ATTNSCOPE_CONFIG_INTERNAL_H
#define ATTNSCOPE_CONFIG_INTERNAL_H

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

/* The cutting-skip scheme sets W^Q W^Kᵀ = αZ + βI as the logits' matrix itself. */
static inline bool logit_scale_in_use(const Config *c)
{
    return c->attention != ATTENTION_MARKOV && c->attention != ATTENTION_UNIFORM &&
           c->attention != ATTENTION_IDENTITY && c->init != INIT_CUTTING_SKIP;
}

#endif
