/* The tensors of a configuration's weights under Hugging Face's Llama names, GPT-2's, ViT's or
 * Phi-3's (weights_internal.h, docs/weights.md): names, shapes, and where each lies in the layer's
 * buffers. */
#include "weights_internal.h"

#include "attnscope/attention.h"

#include <stdio.h>
#include <string.h>

/* An nn.Linear family's names (Llama's, ViT's), after a layer's: the projections, each
   NAME.weight (out, in) with NAME.bias; the norms by site, each NAME.weight with LayerNorm's
   NAME.bias (NULL where the family has none: Weights_names_fit refuses what would need it). */
typedef struct {
    const char *query, *key, *value, *output;
    const char *up, *gate, *down; /* the MLP's W1 (gated: its up projection), gate and W2 */
    bool biases_optional; /* W^O's and the MLP's biases may be left out (q, k, v's always may) */
    /* Before and after the attention's branch, before the MLP's (alone, or beside a norm after
       it: Llama's two names) and after it. */
    const char *attention_in, *attention_out, *mlp_in, *mlp_in_beside_out, *mlp_out;
    const char *query_norm, *key_norm, *markov, *sinks;
    /* Phi-3's fused tensors, without biases: W^Q, W^K and W^V's rows in one, the gate's and
       the up projection's in the other (NULL: separate ones). */
    const char *fused_qkv, *fused_gate_up;
} LinearNames;

typedef int (*LayerTensors)(const Config *c, const Names *names, int layer, WeightTensor *out);

struct NameFamily {
    const char *label; /* for messages */
    /* The model_type whose transformers model loads only these names, so that the export of a
       checkpoint read under them keeps them (Phi-3); NULL: the export writes Llama's. */
    const char *exported_as;
    const char *layers; /* what a layer's names start with (after the prefix), before its index */
    const char *detect; /* the tensor of layer 0 that tells the family apart (NULL: Llama, the
                           default) */
    /* The prefixes the names are saved under, NULL-terminated: "" bare, and where a model
       with a head (or a multimodal model, its text model) saves them. */
    const char *const *prefixes;
    const char *table, *positions; /* the embedding table's names (NULL: no token table) */
    const char *const *before, *const *after; /* outside the block, NULL-terminated */
    const char *before_why;                   /* why those before it are not used */
    /* Beside the block: the prefixes of another model's names (a vision tower's), NULL or
       NULL-terminated, and why they are not used. */
    const char *const *beside;
    const char *beside_why;
    const char *const *buffers; /* a layer's tensors that are no weights, NULL-terminated */
    unsigned refused_places;    /* 1 << LnPlace of the placements it has no norms for */
    const char *place_missing;  /* what those lack */
    const LinearNames *linear;  /* Llama's and ViT's (GPT-2's fused Conv1D: gpt2_tensors) */
    LayerTensors tensors;
};

/* Appends layer's tensor `suffix` under names, (rows, columns) or (rows) for columns 0. */
static WeightTensor *add(WeightTensor *list, int *n, const Names *names, int layer,
                         const char *suffix, uint64_t rows, uint64_t columns, unsigned part,
                         size_t field, Layout layout)
{
    WeightTensor *t = &list[(*n)++];
    *t = (WeightTensor){.rank = columns ? 2 : 1,
                        .shape = {rows, columns, 0},
                        .part = part,
                        .field = field,
                        .layout = layout,
                        .columns = columns};
    snprintf(t->name, sizeof t->name, "%s%s%d.%s", names->prefix, names->family->layers, layer - 1,
             suffix);
    return t;
}

/* A gain or a bias of the layer into LayerAffine's slot `field`: absent where every entry is
   `absent`.  Gains are stored as w in y = N(x)·(o + w), so a unit gain is w = 1 − o. */
static WeightTensor *add_affine(WeightTensor *list, int *n, const Names *names, int layer,
                                const char *suffix, uint64_t length, size_t field, double absent)
{
    WeightTensor *t =
        add(list, n, names, layer, suffix, length, 0, LAYER_DRAW_VALUE, field, AFFINE);
    t->absent = absent;
    return t;
}

static double unit_gain(const Config *c)
{
    return 1.0 - c->norm_gain_offset;
}

/* A sub-block's norm at `site`: its gain, and LayerNorm's bias. */
static void add_norm(WeightTensor *list, int *n, const Config *c, const Names *names, int layer,
                     const char *norm, LayerNormSite site)
{
    char name[64];
    snprintf(name, sizeof name, "%s.weight", norm);
    add_affine(list, n, names, layer, name, (uint64_t)c->width,
               offsetof(LayerAffine, norm[site].gain), unit_gain(c));
    snprintf(name, sizeof name, "%s.bias", norm);
    if (c->layernorm == LAYERNORM_LN)
        add_affine(list, n, names, layer, name, (uint64_t)c->width,
                   offsetof(LayerAffine, norm[site].bias), 0.0);
}

/* A projection NAME's weight, (rows, columns) in `layout` into LayerWeights' `field`, and its
   bias (rows) into LayerAffine's `bias`, which the checkpoint may leave out where `optional`. */
static void add_linear(WeightTensor *list, int *n, const Names *names, int layer,
                       const char *projection, uint64_t rows, uint64_t columns, unsigned part,
                       size_t field, Layout layout, size_t bias, bool optional)
{
    char name[64];
    snprintf(name, sizeof name, "%s.weight", projection);
    add(list, n, names, layer, name, rows, columns, part, field, layout);
    snprintf(name, sizeof name, "%s.bias", projection);
    add_affine(list, n, names, layer, name, rows, bias, 0.0)->optional = optional;
}

/* Rows [first, first + rows) of the fused (total, columns) nn.Linear tensor `fused` as one
   matrix (Phi-3's qkv_proj and gate_up_proj, which have no biases). */
static void add_fused_part(WeightTensor *list, int *n, const Names *names, int layer,
                           const char *fused, uint64_t total, uint64_t first, uint64_t rows,
                           uint64_t columns, unsigned part, size_t field, Layout layout)
{
    char name[64];
    snprintf(name, sizeof name, "%s.weight", fused);
    WeightTensor *t = add(list, n, names, layer, name, total, columns, part, field, layout);
    t->first_row = first;
    t->rows = rows;
}

enum { QUERY, KEY, VALUE };

/* W^Q, W^K or W^V (which): its own projection with its optional bias, or its rows of the fused
   qkv_proj (queries, then keys, then values, as Phi3Attention slices them). */
static void add_attention_input(WeightTensor *list, int *n, const Config *c, const Names *names,
                                int layer, int which)
{
    const LinearNames *l = names->family->linear;
    uint64_t d = (uint64_t)c->width, kv = (uint64_t)Layer_kv_width(c);
    uint64_t inner = (uint64_t)Config_heads_width(c);
    const struct {
        const char *name;
        uint64_t first, rows;
        unsigned part;
        size_t field, bias;
    } m[] = {
        [QUERY] = {l->query, 0, inner, LAYER_DRAW_ATTENTION, offsetof(LayerWeights, query),
                   offsetof(LayerAffine, query_bias)},
        [KEY] = {l->key, inner, kv, LAYER_DRAW_ATTENTION, offsetof(LayerWeights, key),
                 offsetof(LayerAffine, key_bias)},
        [VALUE] = {l->value, inner + kv, kv, LAYER_DRAW_VALUE, offsetof(LayerWeights, value),
                   offsetof(LayerAffine, value_bias)},
    };
    if (l->fused_qkv)
        add_fused_part(list, n, names, layer, l->fused_qkv, inner + 2 * kv, m[which].first,
                       m[which].rows, d, m[which].part, m[which].field, AS_STORED);
    else
        add_linear(list, n, names, layer, m[which].name, m[which].rows, d, m[which].part,
                   m[which].field, AS_STORED, m[which].bias, true);
}

/* The MLP's input projections, kept transposed (N×d): W1 (gated: the gate, and the up
   projection), each its own with its bias, or the gate's and the up projection's rows of the
   fused gate_up_proj (Phi3MLP's chunk: the gate first). */
static void add_mlp_inputs(WeightTensor *list, int *n, const Config *c, const Names *names,
                           int layer)
{
    const LinearNames *l = names->family->linear;
    uint64_t d = (uint64_t)c->width, hidden = (uint64_t)Config_mlp_hidden(c);
    bool gated = Config_mlp_gated(c);
    if (l->fused_gate_up) {
        add_fused_part(list, n, names, layer, l->fused_gate_up, 2 * hidden, 0, hidden, d,
                       LAYER_DRAW_MLP, offsetof(LayerWeights, mlp_in), COLUMNS);
        add_fused_part(list, n, names, layer, l->fused_gate_up, 2 * hidden, hidden, hidden, d,
                       LAYER_DRAW_MLP, offsetof(LayerWeights, mlp_up), COLUMNS);
        return;
    }
    add_linear(list, n, names, layer, gated ? l->gate : l->up, hidden, d, LAYER_DRAW_MLP,
               offsetof(LayerWeights, mlp_in), COLUMNS, offsetof(LayerAffine, mlp_in_bias),
               l->biases_optional);
    if (gated)
        add_linear(list, n, names, layer, l->up, hidden, d, LAYER_DRAW_MLP,
                   offsetof(LayerWeights, mlp_up), COLUMNS, offsetof(LayerAffine, mlp_up_bias),
                   l->biases_optional);
}

/* The norms of the attention sub-block (of the MLP's when `mlp`) under an nn.Linear family's
   names: before the branch (pre- and peri-LN) and after it (post-, peri- and output-LN).
   Llama's are Llama's at pre-LN (input_layernorm, post_attention_layernorm before the MLP),
   OLMo 2's at post- and output-LN (post_attention_layernorm, post_feedforward_layernorm after
   each branch), Gemma 2 and 3's at peri-LN (all four). */
static void add_linear_norms(WeightTensor *list, int *n, const Config *c, const Names *names,
                             int layer, bool mlp)
{
    const LinearNames *l = names->family->linear;
    if (c->layernorm == LAYERNORM_NONE)
        return;
    bool in = Layer_pre_norm(c), out = c->ln_place != LN_PLACE_PRE;
    const char *before = mlp ? (out ? l->mlp_in_beside_out : l->mlp_in) : l->attention_in;
    const char *after = mlp ? l->mlp_out : l->attention_out;
    if (in && before)
        add_norm(list, n, c, names, layer, before, mlp ? NORM_MLP_IN : NORM_ATTENTION_IN);
    if (out && after)
        add_norm(list, n, c, names, layer, after, mlp ? NORM_MLP_OUT : NORM_ATTENTION_OUT);
}

/* An nn.Linear family's layer (Llama's, ViT's): (out, in) weights and their biases, W1 (and,
   gated, the gate) kept transposed, the norms (add_linear_norms), QK-norm's gains, attnscope's
   own Markov logits and sinks. */
static int linear_tensors(const Config *c, const Names *names, int layer, WeightTensor *out)
{
    const LinearNames *l = names->family->linear;
    int n = 0;
    uint64_t d = (uint64_t)c->width, kv = (uint64_t)Layer_kv_width(c);
    uint64_t dh = (uint64_t)Config_head_width(c), hidden = (uint64_t)Config_mlp_hidden(c);
    uint64_t inner = (uint64_t)Config_heads_width(c); /* H·d_h: q_proj's rows, o_proj's columns */
    add_linear_norms(out, &n, c, names, layer, false);
    bool logits = Attention_has_query_key(c->attention);
    if (logits) {
        add_attention_input(out, &n, c, names, layer, QUERY);
        add_attention_input(out, &n, c, names, layer, KEY);
    }
    if (logits && c->qk_norm != QK_NORM_NONE) {
        bool full = c->qk_norm == QK_NORM_FULL;
        add_affine(out, &n, names, layer, l->query_norm, full ? inner : dh,
                   offsetof(LayerAffine, query_norm_gain), unit_gain(c));
        add_affine(out, &n, names, layer, l->key_norm, full ? kv : dh,
                   offsetof(LayerAffine, key_norm_gain), unit_gain(c));
    }
    if (c->attention == ATTENTION_MARKOV) {
        WeightTensor *t = add(out, &n, names, layer, l->markov, (uint64_t)c->heads, 0,
                              LAYER_DRAW_ATTENTION, offsetof(LayerWeights, markov), AS_STORED);
        t->rank = 3;
        t->shape[1] = t->shape[2] = (uint64_t)c->tokens;
    }
    if (Config_has_sink(c))
        add(out, &n, names, layer, l->sinks, (uint64_t)c->heads, 0, LAYER_DRAW_ATTENTION,
            offsetof(LayerWeights, sink), AS_STORED);
    add_attention_input(out, &n, c, names, layer, VALUE);
    if (c->output != OUTPUT_IDENTITY)
        add_linear(out, &n, names, layer, l->output, d, inner, LAYER_DRAW_OUTPUT,
                   offsetof(LayerWeights, output), AS_STORED, offsetof(LayerAffine, output_bias),
                   l->biases_optional);
    if (c->mlp == MLP_NONE)
        return n;
    add_linear_norms(out, &n, c, names, layer, true);
    add_mlp_inputs(out, &n, c, names, layer);
    add_linear(out, &n, names, layer, l->down, d, hidden, LAYER_DRAW_MLP,
               offsetof(LayerWeights, mlp_out), AS_STORED, offsetof(LayerAffine, mlp_out_bias),
               l->biases_optional);
    return n;
}

/* GPT-2's LayerNorm (RMSNorm: gain only) `norm` of a sub-block, before its branch (pre-LN) or
   after it (post- and output-LN). */
static void add_gpt2_norm(WeightTensor *list, int *n, const Config *c, const Names *names,
                          int layer, const char *norm, bool mlp)
{
    if (c->layernorm == LAYERNORM_NONE)
        return;
    bool pre = Layer_pre_norm(c);
    LayerNormSite site =
        mlp ? (pre ? NORM_MLP_IN : NORM_MLP_OUT) : (pre ? NORM_ATTENTION_IN : NORM_ATTENTION_OUT);
    add_norm(list, n, c, names, layer, norm, site);
}

/* GPT-2's names: Conv1D (in, out) weights, q | k | v fused by columns in c_attn (and in its
   bias), every projection's bias, LayerNorm's gains and biases (RMSNorm: gains only). */
static int gpt2_tensors(const Config *c, const Names *names, int layer, WeightTensor *out)
{
    int n = 0;
    uint64_t d = (uint64_t)c->width, kv = (uint64_t)Layer_kv_width(c);
    uint64_t hidden = (uint64_t)Config_mlp_hidden(c), inner = (uint64_t)Config_heads_width(c);
    add_gpt2_norm(out, &n, c, names, layer, "ln_1", false);
    const struct {
        bool used;
        uint64_t first, columns;
        unsigned part;
        size_t field, bias;
    } fused[] = {
        {Attention_has_query_key(c->attention), 0, inner, LAYER_DRAW_ATTENTION,
         offsetof(LayerWeights, query), offsetof(LayerAffine, query_bias)},
        {Attention_has_query_key(c->attention), inner, kv, LAYER_DRAW_ATTENTION,
         offsetof(LayerWeights, key), offsetof(LayerAffine, key_bias)},
        {true, inner + kv, kv, LAYER_DRAW_VALUE, offsetof(LayerWeights, value),
         offsetof(LayerAffine, value_bias)},
    };
    for (int i = 0; i < 3; i++)
        if (fused[i].used) {
            WeightTensor *t = add(out, &n, names, layer, "attn.c_attn.weight", d, inner + 2 * kv,
                                  fused[i].part, fused[i].field, COLUMNS);
            t->first_column = fused[i].first;
            t->columns = fused[i].columns;
            t = add_affine(out, &n, names, layer, "attn.c_attn.bias", inner + 2 * kv, fused[i].bias,
                           0.0);
            t->first_column = fused[i].first;
            t->columns = fused[i].columns;
        }
    if (c->output != OUTPUT_IDENTITY) {
        add(out, &n, names, layer, "attn.c_proj.weight", inner, d, LAYER_DRAW_OUTPUT,
            offsetof(LayerWeights, output), COLUMNS);
        add_affine(out, &n, names, layer, "attn.c_proj.bias", d, offsetof(LayerAffine, output_bias),
                   0.0);
    }
    if (c->mlp == MLP_NONE)
        return n;
    add_gpt2_norm(out, &n, c, names, layer, "ln_2", true);
    add(out, &n, names, layer, "mlp.c_fc.weight", d, hidden, LAYER_DRAW_MLP,
        offsetof(LayerWeights, mlp_in), AS_STORED);
    add_affine(out, &n, names, layer, "mlp.c_fc.bias", hidden, offsetof(LayerAffine, mlp_in_bias),
               0.0);
    add(out, &n, names, layer, "mlp.c_proj.weight", hidden, d, LAYER_DRAW_MLP,
        offsetof(LayerWeights, mlp_out), COLUMNS);
    add_affine(out, &n, names, layer, "mlp.c_proj.bias", d, offsetof(LayerAffine, mlp_out_bias),
               0.0);
    return n;
}

/* ---- The families ------------------------------------------------------------------------ */

/* Llama's names, OLMo 2's and Gemma's norms (add_linear_norms), attnscope's own Markov logits,
   sinks and learned positions (model.embed_positions, under which the export writes GPT-2's
   wpe). */
static const LinearNames LLAMA_LINEAR = {
    .query = "self_attn.q_proj",
    .key = "self_attn.k_proj",
    .value = "self_attn.v_proj",
    .output = "self_attn.o_proj",
    .up = "mlp.up_proj",
    .gate = "mlp.gate_proj",
    .down = "mlp.down_proj",
    .biases_optional = true,
    .attention_in = "input_layernorm",
    .attention_out = "post_attention_layernorm",
    .mlp_in = "post_attention_layernorm",
    .mlp_in_beside_out = "pre_feedforward_layernorm",
    .mlp_out = "post_feedforward_layernorm",
    .query_norm = "self_attn.q_norm.weight",
    .key_norm = "self_attn.k_norm.weight",
    .markov = "self_attn.markov_logits",
    .sinks = "self_attn.sinks",
};

/* ViT's (modeling_vit.py's ViTLayer): query, key and value under attention.attention, their
   biases there only with qkv_bias (the default); W^O as attention.output.dense, W1 as
   intermediate.dense, W2 as output.dense, each with its bias; LayerNorm before the attention
   (layernorm_before) and before the MLP (layernorm_after, "after" the attention's residual
   add). */
static const LinearNames VIT_LINEAR = {
    .query = "attention.attention.query",
    .key = "attention.attention.key",
    .value = "attention.attention.value",
    .output = "attention.output.dense",
    .up = "intermediate.dense",
    .down = "output.dense",
    .attention_in = "layernorm_before",
    .mlp_in = "layernorm_after",
};

/* Phi-3's (modeling_phi3.py: Phi3Attention, Phi3MLP, Phi3DecoderLayer): Llama's, with the
   queries, keys and values fused in qkv_proj and the gate and up projection in gate_up_proj,
   without biases; pre-LN only (input_layernorm, post_attention_layernorm). */
static const LinearNames PHI3_LINEAR = {
    .output = "self_attn.o_proj",
    .down = "mlp.down_proj",
    .biases_optional = true,
    .attention_in = "input_layernorm",
    .mlp_in = "post_attention_layernorm",
    .fused_qkv = "self_attn.qkv_proj",
    .fused_gate_up = "mlp.gate_up_proj",
};

static const char *const LLAMA_AFTER[] = {"model.norm.weight", "lm_head.weight", NULL};
static const char *const GPT2_AFTER[] = {"ln_f.weight", "ln_f.bias", "lm_head.weight", NULL};
static const char *const GPT2_BUFFERS[] = {"attn.bias", "attn.masked_bias", NULL};
/* The rotary inverse frequencies older Llama-family checkpoints saved per layer, which
   transformers ignores on loading (_keys_to_ignore_on_load_unexpected): rope_theta gives them. */
static const char *const LLAMA_BUFFERS[] = {"self_attn.rotary_emb.inv_freq", NULL};
static const char *const VIT_AFTER[] = {"layernorm.weight",
                                        "layernorm.bias",
                                        "pooler.dense.weight",
                                        "pooler.dense.bias",
                                        "classifier.weight",
                                        "classifier.bias",
                                        NULL};
static const char *const VIT_BEFORE[] = {"embeddings.cls_token",
                                         "embeddings.mask_token",
                                         "embeddings.position_embeddings",
                                         "embeddings.patch_embeddings.projection.weight",
                                         "embeddings.patch_embeddings.projection.bias",
                                         NULL};
static const char *const EMPTY[] = {NULL};
static const char *const BARE[] = {"", NULL};
static const char *const GPT2_PREFIXES[] = {"", "transformer.", NULL};
static const char *const VIT_PREFIXES[] = {"", "vit.", NULL};
/* Gemma 3's multimodal checkpoints (Gemma3ForConditionalGeneration) hold the text model under
   language_model.model.layers.N (as saved up to transformers 4.51) or
   model.language_model.layers.N (as saved since), the vision tower and its projector beside. */
static const char *const GEMMA3_OLD_PREFIXES[] = {"language_model.", NULL};
static const char *const GEMMA3_NEW_PREFIXES[] = {"model.language_model.", NULL};
static const char *const GEMMA3_NEW_AFTER[] = {"norm.weight", "lm_head.weight", NULL};
static const char *const VISION_TOWER[] = {"vision_tower.", "multi_modal_projector.",
                                           "model.vision_tower.", "model.multi_modal_projector.",
                                           NULL};
static const char VISION_WHY[] =
    "the vision tower turns images into the text model's input: attnscope runs the text "
    "model's block on its own input";

static const NameFamily LLAMA = {
    .label = "Llama",
    .layers = "model.layers.",
    .prefixes = BARE,
    .table = "model.embed_tokens.weight",
    .positions = "model.embed_positions.weight",
    .before = EMPTY,
    .after = LLAMA_AFTER,
    .buffers = LLAMA_BUFFERS,
    .linear = &LLAMA_LINEAR,
    .tensors = linear_tensors,
};

/* Gemma 3's text model in a multimodal checkpoint: Llama's names under language_model. */
static const NameFamily GEMMA3_OLD = {
    .label = "Gemma 3 multimodal",
    .layers = "model.layers.",
    .detect = "self_attn.v_proj.weight",
    .prefixes = GEMMA3_OLD_PREFIXES,
    .table = "model.embed_tokens.weight",
    .positions = "model.embed_positions.weight",
    .before = EMPTY,
    .after = LLAMA_AFTER,
    .beside = VISION_TOWER,
    .beside_why = VISION_WHY,
    .buffers = LLAMA_BUFFERS,
    .linear = &LLAMA_LINEAR,
    .tensors = linear_tensors,
};

/* The same as saved since: the text model's own names under model.language_model. */
static const NameFamily GEMMA3_NEW = {
    .label = "Gemma 3 multimodal",
    .layers = "layers.",
    .detect = "self_attn.v_proj.weight",
    .prefixes = GEMMA3_NEW_PREFIXES,
    .table = "embed_tokens.weight",
    .positions = "embed_positions.weight",
    .before = EMPTY,
    .after = GEMMA3_NEW_AFTER,
    .beside = VISION_TOWER,
    .beside_why = VISION_WHY,
    .buffers = LLAMA_BUFFERS,
    .linear = &LLAMA_LINEAR,
    .tensors = linear_tensors,
};

static const NameFamily GPT2 = {
    .label = "GPT-2",
    .layers = "h.",
    .detect = "attn.c_attn.weight",
    .prefixes = GPT2_PREFIXES,
    .table = "wte.weight",
    .positions = "wpe.weight",
    .before = EMPTY,
    .after = GPT2_AFTER,
    .buffers = GPT2_BUFFERS,
    .refused_places = (1u << LN_PLACE_PERI),
    .place_missing = "peri-LN's second norm of a sub-block (ln_1 and ln_2 are one each)",
    .tensors = gpt2_tensors,
};

static const NameFamily VIT = {
    .label = "ViT",
    .layers = "encoder.layer.",
    .detect = "attention.attention.value.weight",
    .prefixes = VIT_PREFIXES,
    .before = VIT_BEFORE,
    .after = VIT_AFTER,
    .before_why = "ViT's patch embedding is no token table: the input is attnscope's own, drawn "
                  "from the seed (--input)",
    .buffers = EMPTY,
    .refused_places = (1u << LN_PLACE_POST) | (1u << LN_PLACE_PERI) | (1u << LN_PLACE_OUTPUT),
    .place_missing = "a norm after a branch (layernorm_before and layernorm_after are pre-LN's, "
                     "before the attention and the MLP)",
    .linear = &VIT_LINEAR,
    .tensors = linear_tensors,
};

static const NameFamily PHI3 = {
    .label = "Phi-3",
    .exported_as = "phi3",
    .layers = "model.layers.",
    .detect = "self_attn.qkv_proj.weight",
    .prefixes = BARE,
    .table = "model.embed_tokens.weight",
    .positions = "model.embed_positions.weight",
    .before = EMPTY,
    .after = LLAMA_AFTER,
    .buffers = LLAMA_BUFFERS,
    .refused_places = (1u << LN_PLACE_POST) | (1u << LN_PLACE_PERI) | (1u << LN_PLACE_OUTPUT),
    .place_missing = "a norm after a branch (input_layernorm and post_attention_layernorm are "
                     "pre-LN's, before the attention and the MLP)",
    .linear = &PHI3_LINEAR,
    .tensors = linear_tensors,
};

const Names LLAMA_NAMES = {&LLAMA, ""};
const Names GPT2_NAMES = {&GPT2, ""};
const Names VIT_NAMES = {&VIT, ""};

Names Weights_export_names(const Names *names)
{
    return names && names->family->exported_as ? (Names){names->family, ""} : LLAMA_NAMES;
}

const char *Weights_names_model_type(const Names *names)
{
    return names->family->exported_as;
}

int Weights_layer_tensors(const Config *c, const Names *names, int layer,
                          WeightTensor out[LAYER_TENSORS_MAX])
{
    return names->family->tensors(c, names, layer, out);
}

Names Weights_names_of(const Safetensors *tensors)
{
    static const NameFamily *const DETECTED[] = {&GPT2, &VIT, &PHI3, &GEMMA3_OLD, &GEMMA3_NEW};
    for (size_t i = 0; i < sizeof DETECTED / sizeof *DETECTED; i++) {
        const NameFamily *f = DETECTED[i];
        for (int p = 0; f->prefixes[p]; p++) {
            char name[NAME_SIZE];
            snprintf(name, sizeof name, "%s%s0.%s", f->prefixes[p], f->layers, f->detect);
            if (Safetensors_find(tensors, name))
                return (Names){f, f->prefixes[p]};
        }
    }
    return LLAMA_NAMES;
}

/* Whether name is `known`, bare or under the names' prefix. */
static bool named(const Names *names, const char *name, const char *known)
{
    size_t prefix = strlen(names->prefix);
    return strcmp(name, known) == 0 ||
           (strncmp(name, names->prefix, prefix) == 0 && strcmp(name + prefix, known) == 0);
}

static bool listed(const Names *names, const char *name, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (named(names, name, list[i]))
            return true;
    return false;
}

/* The part of name after its layer's "PREFIX LAYERS N.", NULL where it is no layer's. */
static const char *in_layer(const Names *names, const char *name, int *layer)
{
    const NameFamily *f = names->family;
    size_t prefix = strlen(names->prefix), layers = strlen(f->layers);
    if (strncmp(name, names->prefix, prefix) != 0 || strncmp(name + prefix, f->layers, layers) != 0)
        return NULL;
    const char *rest = name + prefix + layers;
    if (*rest < '0' || *rest > '9')
        return NULL;
    *layer = 0;
    while (*rest >= '0' && *rest <= '9' && *layer < 100000000)
        *layer = *layer * 10 + (*rest++ - '0');
    return *rest == '.' ? rest + 1 : NULL;
}

/* gpt-oss's mixture of experts, in a layer of Llama's names: its router and experts, and the
   norm before them (post_attention_layernorm, the MoE's input norm beside a router). */
static const char *const EXPERTS_PARTS[] = {"mlp.router.", "mlp.experts.", NULL};
static const char EXPERTS_NORM[] = "post_attention_layernorm.";

static bool expert_tensor(const Names *names, const Safetensors *tensors, const char *name,
                          const char **part)
{
    int layer = 0;
    const char *rest =
        names->family->linear == &LLAMA_LINEAR ? in_layer(names, name, &layer) : NULL;
    for (int i = 0; rest && EXPERTS_PARTS[i]; i++)
        if (strncmp(rest, EXPERTS_PARTS[i], strlen(EXPERTS_PARTS[i])) == 0) {
            *part = rest;
            return true;
        }
    char router[NAME_SIZE];
    snprintf(router, sizeof router, "%s%s%d.mlp.router.weight", names->prefix,
             names->family->layers, layer);
    if (!rest || strncmp(rest, EXPERTS_NORM, strlen(EXPERTS_NORM)) != 0 ||
        !Safetensors_find(tensors, router))
        return false;
    *part = rest;
    return true;
}

int Weights_layer_of(const Names *names, const char *name)
{
    int layer;
    return in_layer(names, name, &layer) ? layer + 1 : 0;
}

const char *Weights_layer_part(const Names *names, const char *name)
{
    int layer;
    const char *rest = in_layer(names, name, &layer);
    return rest ? rest : name;
}

const char *Weights_layers_start(const Names *names, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s", names->prefix, names->family->layers);
    return buf;
}

Outside Weights_outside_block(const Names *names, const Config *c, const Safetensors *tensors,
                              const char *name, const char **group)
{
    const NameFamily *f = names->family;
    *group = name;
    for (int i = 0; f->beside && f->beside[i]; i++)
        if (strncmp(name, f->beside[i], strlen(f->beside[i])) == 0) {
            *group = f->beside[i];
            return BESIDE_BLOCK;
        }
    if (c->mlp == MLP_NONE && expert_tensor(names, tensors, name, group))
        return EXPERTS;
    return listed(names, name, f->after)    ? AFTER_BLOCK
           : listed(names, name, f->before) ? BEFORE_BLOCK
                                            : INSIDE;
}

const char *Weights_outside_why(const Names *names, Outside where)
{
    switch (where) {
    case BEFORE_BLOCK:
        return names->family->before_why;
    case BESIDE_BLOCK:
        return names->family->beside_why;
    case EXPERTS:
        return "the block has no mixture of experts: --mlp none, its attention path";
    default:
        return "it ends before the final norm and the output head";
    }
}

bool Weights_layer_buffer(const Names *names, const char *name)
{
    int layer;
    const char *rest = in_layer(names, name, &layer);
    for (int i = 0; rest && names->family->buffers[i]; i++)
        if (strcmp(rest, names->family->buffers[i]) == 0)
            return true;
    return false;
}

/* What the family's names have no tensor for among c's (the Llama names have one for
   everything). */
static const char *missing_tensor(const NameFamily *f, const Config *c)
{
    const LinearNames *l = f->linear;
    bool qk_norm = Attention_has_query_key(c->attention) && c->qk_norm != QK_NORM_NONE;
    if (Config_mlp_gated(c) && !(l && (l->gate || l->fused_gate_up)))
        return "a gated MLP's up projection";
    if (l && l->fused_gate_up && c->mlp != MLP_NONE && !Config_mlp_gated(c))
        return "a plain MLP's W1 (gate_up_proj fuses a gate and an up projection)";
    if (l && l->fused_qkv && !Attention_has_query_key(c->attention))
        return "values without queries and keys (qkv_proj fuses the three)";
    if (c->attention == ATTENTION_MARKOV && !(l && l->markov))
        return "Markov logits";
    if (Config_has_sink(c) && !(l && l->sinks))
        return "attention sinks";
    if (qk_norm && !(l && l->query_norm))
        return "QK-norm's gains";
    if (c->layernorm != LAYERNORM_NONE && (f->refused_places & (1u << c->ln_place)))
        return f->place_missing;
    return NULL;
}

bool Weights_names_fit(const Names *names, const Config *c, char *why, size_t size)
{
    const char *missing = missing_tensor(names->family, c);
    if (missing)
        snprintf(why, size, "%s's names have no tensor for %s (the Llama names do)",
                 names->family->label, missing);
    return !missing;
}

const char *Weights_table_name(const Names *names, bool positions)
{
    return positions ? names->family->positions : names->family->table;
}

double **WeightTensor_affine_slot(LayerAffine *a, const WeightTensor *t)
{
    return (double **)(void *)((char *)a + t->field);
}

const double *WeightTensor_affine_values(const LayerAffine *a, const WeightTensor *t)
{
    return a ? *(double *const *)(const void *)((const char *)a + t->field) : NULL;
}

bool WeightTensor_affine_part(const WeightTensor *t, const double *all, double *out)
{
    uint64_t n = t->columns ? t->columns : t->shape[0];
    bool differs = false;
    for (uint64_t i = 0; i < n; i++) {
        out[i] = all[t->first_column + i];
        differs |= out[i] != t->absent; /* NaN differs: it runs, and the nulls say so */
    }
    return differs;
}

uint64_t WeightTensor_elements(const WeightTensor *t)
{
    uint64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= i == 0 && t->rows ? t->rows : t->shape[i];
    return n;
}

bool WeightTensor_continues(const WeightTensor *t)
{
    return (t->rows && t->first_row > 0) || t->first_column > 0;
}

double *WeightTensor_buffer(const LayerWeights *w, const WeightTensor *t)
{
    double *const *field = (double *const *)(const void *)((const char *)w + t->field);
    return *field;
}

const char *Weights_shape_text(int rank, const uint64_t *shape, char *buf, size_t size)
{
    int n = snprintf(buf, size, "[");
    for (int i = 0; i < rank && n > 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "%s%llu", i ? ", " : "",
                      (unsigned long long)shape[i]);
    if (n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "]");
    return buf;
}
