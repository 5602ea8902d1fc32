/* The settings table: the options, keys, status labels, JSON keys, preset lines, help and
 * reuse classes all follow from its rows, so it is one table (SETTINGS).  Its rows are in the
 * config_rows_*.inc files by what they set, included here in table order; beside them here the
 * predicates the rows point to (whether a setting is in use, whether a bound applies) and the
 * lookups of a row.  What reads the table is in the files config_internal.h lists. */
#include "config_internal.h"

#include "attnscope/attention.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/qk.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Whether the normal scheme's σ_qk draws matrix choice `choice` under c's scheme. */
static bool drawn_by_normal(const Config *c, MatrixInitChoice choice)
{
    return choice == MATRIX_INIT_NORMAL || (choice == MATRIX_INIT_SCHEME && c->init == INIT_NORMAL);
}

/* Whether the weights are drawn: a checkpoint's (--weights) are read, so that what says how
   weights are drawn (σ_qk, the scheme, its parameters and per-matrix choices, the depth
   scale, the sinks' spread) has no effect on them.  Their rows' needs say "weights=none". */
static bool weights_drawn(void)
{
    return !Layer_weights_in_use();
}

static bool drawn_in_use(const Config *c)
{
    (void)c;
    return weights_drawn();
}

static bool sigma_qk_in_use(const Config *c)
{
    return weights_drawn() && (drawn_by_normal(c, c->init_query) ||
                               drawn_by_normal(c, c->init_key) || c->attention == ATTENTION_MARKOV);
}

static bool head_in_use(const Config *c)
{
    return c->heads > 1;
}

/* H divides d only where each head is d/H wide (no --head-dim). */
static bool heads_split_width(const Config *c)
{
    return c->head_dim == 0;
}

static bool layernorm_in_use(const Config *c)
{
    return c->layernorm != LAYERNORM_NONE;
}

/* A gain offset matters where a norm has a gain: a sub-block's or QK-norm's, read from a
   checkpoint (drawn norms have none: N(x) itself). */
static bool norm_gain_in_use(const Config *c)
{
    return Layer_weights_in_use() && (c->layernorm != LAYERNORM_NONE || Qk_normalised(c));
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

/* The global θ and its scaling turn the layers that no local θ turns (a local θ turns the
   pattern's L layers, every layer under `all`). */
static bool rope_theta_in_use(const Config *c)
{
    return Config_some_layer_turns(c, false);
}

/* Whether a local θ would turn a layer (some rotated layer the pattern marks L), whatever its
   value: 0, rope-theta's, is one value among others. */
static bool rope_local_theta_in_use(const Config *c)
{
    Config with_local = *c;
    if (!(with_local.rope_local_base_freq > 0))
        with_local.rope_local_base_freq = with_local.rope_theta;
    return Config_some_layer_turns(&with_local, true);
}

/* The factor divides frequencies under either scaling; the two bounds of the blend and the
   original context are llama3's alone. */
static bool rope_factor_in_use(const Config *c)
{
    return rope_theta_in_use(c) && c->rope_scaling != ROPE_SCALING_NONE;
}

static bool llama3_scaling_in_use(const Config *c)
{
    return rope_theta_in_use(c) && c->rope_scaling == ROPE_SCALING_LLAMA3;
}

static bool mlp_drawn_in_use(const Config *c)
{
    return weights_drawn() && c->mlp != MLP_NONE;
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

static bool cutting_skip_in_use(const Config *c)
{
    return weights_drawn() && c->init == INIT_CUTTING_SKIP;
}

/* Both factorised schemes draw W^Q W^Kᵀ = αZ + βI. */
static bool query_key_factor(const Config *c)
{
    return c->init == INIT_CUTTING_SKIP || c->init == INIT_MIMETIC;
}

static bool query_key_factor_in_use(const Config *c)
{
    return weights_drawn() && query_key_factor(c);
}

static bool mimetic_in_use(const Config *c)
{
    return weights_drawn() && c->init == INIT_MIMETIC;
}

static bool output_drawn_in_use(const Config *c)
{
    return weights_drawn() && c->output != OUTPUT_IDENTITY;
}

static bool init_std_in_use(const Config *c)
{
    return weights_drawn() && Init_uses_one_std(c);
}

/* The factorised schemes draw W^O as a factor, which no std scales. */
static bool depth_scale_in_use(const Config *c)
{
    return weights_drawn() && (c->output != OUTPUT_IDENTITY || c->mlp != MLP_NONE) &&
           !query_key_factor(c);
}

/* A checkpoint's sinks are its own (self_attn.sinks), not drawn around S. */
static bool sink_std_in_use(const Config *c)
{
    return weights_drawn() && Config_has_sink(c);
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

/* Table order is the order of --help, the presets, the help overlay and the status line.  One
   array, since a row's place in it is its index (options.c and setline.c take a row's index as
   its distance from Settings_at(0)); its rows are in the files below by what they set, each a
   sitting's read. */
static const Setting SETTINGS[] = {
#include "config_rows_network.inc"
#include "config_rows_norms.inc"
#include "config_rows_rotary.inc"
#include "config_rows_block.inc"
#include "config_rows_init.inc"
#include "config_rows_input_run.inc"
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
