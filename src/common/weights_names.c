/* The tensors of a configuration's weights under Hugging Face's Llama names, GPT-2's or ViT's
 * (weights_internal.h, docs/weights.md): names, shapes, and where each lies in the layer's
 * buffers. */
#include "weights_internal.h"

#include "attnscope/attention.h"

#include <stdio.h>
#include <string.h>

const Names LLAMA_NAMES = {NAMES_LLAMA, ""};

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
    const char *format = names->family == NAMES_GPT2  ? "%sh.%d.%s"
                         : names->family == NAMES_VIT ? "%sencoder.layer.%d.%s"
                                                      : "%smodel.layers.%d.%s";
    snprintf(t->name, sizeof t->name, format, names->prefix, layer - 1, suffix);
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

/* A projection's bias, which a checkpoint may leave out (the Llama family's, ViT's q, k, v). */
static void add_optional_bias(WeightTensor *list, int *n, const Names *names, int layer,
                              const char *projection, uint64_t length, size_t field)
{
    char name[64];
    snprintf(name, sizeof name, "%s.bias", projection);
    add_affine(list, n, names, layer, name, length, field, 0.0)->optional = true;
}

/* The Llama family's norms of the attention sub-block (before the MLP's when `mlp`): pre-LN as
   Llama names them (input_layernorm, post_attention_layernorm before the MLP), post- and
   output-LN as OLMo 2 does (post_attention_layernorm, post_feedforward_layernorm after each
   branch), peri-LN as Gemma 2 and 3 do (all four). */
static void add_llama_norms(WeightTensor *list, int *n, const Config *c, const Names *names,
                            int layer, bool mlp)
{
    if (c->layernorm == LAYERNORM_NONE)
        return;
    bool in = Layer_pre_norm(c), out = c->ln_place != LN_PLACE_PRE;
    if (!mlp && in)
        add_norm(list, n, c, names, layer, "input_layernorm", NORM_ATTENTION_IN);
    if (!mlp && out)
        add_norm(list, n, c, names, layer, "post_attention_layernorm", NORM_ATTENTION_OUT);
    if (mlp && in)
        add_norm(list, n, c, names, layer,
                 out ? "pre_feedforward_layernorm" : "post_attention_layernorm", NORM_MLP_IN);
    if (mlp && out)
        add_norm(list, n, c, names, layer, "post_feedforward_layernorm", NORM_MLP_OUT);
}

/* Llama's names: nn.Linear (out, in) weights and their optional biases, W1 as up_proj
   (down(act(up x))) or, gated, gate_proj with up_proj; the norms' gains (add_llama_norms);
   QK-norm's gains; attnscope's own Markov logits. */
static int llama_tensors(const Config *c, const Names *names, int layer, WeightTensor *out)
{
    int n = 0;
    uint64_t d = (uint64_t)c->width, kv = (uint64_t)Layer_kv_width(c);
    uint64_t dh = (uint64_t)Config_head_width(c), hidden = (uint64_t)Config_mlp_hidden(c);
    add_llama_norms(out, &n, c, names, layer, false);
    if (Attention_has_query_key(c->attention)) {
        add(out, &n, names, layer, "self_attn.q_proj.weight", d, d, LAYER_DRAW_ATTENTION,
            offsetof(LayerWeights, query), AS_STORED);
        add_optional_bias(out, &n, names, layer, "self_attn.q_proj", d,
                          offsetof(LayerAffine, query_bias));
        add(out, &n, names, layer, "self_attn.k_proj.weight", kv, d, LAYER_DRAW_ATTENTION,
            offsetof(LayerWeights, key), AS_STORED);
        add_optional_bias(out, &n, names, layer, "self_attn.k_proj", kv,
                          offsetof(LayerAffine, key_bias));
    }
    if (Attention_has_query_key(c->attention) && c->qk_norm != QK_NORM_NONE) {
        bool full = c->qk_norm == QK_NORM_FULL;
        add_affine(out, &n, names, layer, "self_attn.q_norm.weight", full ? d : dh,
                   offsetof(LayerAffine, query_norm_gain), unit_gain(c));
        add_affine(out, &n, names, layer, "self_attn.k_norm.weight", full ? kv : dh,
                   offsetof(LayerAffine, key_norm_gain), unit_gain(c));
    }
    if (c->attention == ATTENTION_MARKOV) {
        WeightTensor *t = add(out, &n, names, layer, "self_attn.markov_logits", (uint64_t)c->heads,
                              0, LAYER_DRAW_ATTENTION, offsetof(LayerWeights, markov), AS_STORED);
        t->rank = 3;
        t->shape[1] = t->shape[2] = (uint64_t)c->tokens;
    }
    if (Config_has_sink(c))
        add(out, &n, names, layer, "self_attn.sinks", (uint64_t)c->heads, 0, LAYER_DRAW_ATTENTION,
            offsetof(LayerWeights, sink), AS_STORED);
    add(out, &n, names, layer, "self_attn.v_proj.weight", kv, d, LAYER_DRAW_VALUE,
        offsetof(LayerWeights, value), AS_STORED);
    add_optional_bias(out, &n, names, layer, "self_attn.v_proj", kv,
                      offsetof(LayerAffine, value_bias));
    if (c->output != OUTPUT_IDENTITY) {
        add(out, &n, names, layer, "self_attn.o_proj.weight", d, d, LAYER_DRAW_OUTPUT,
            offsetof(LayerWeights, output), AS_STORED);
        add_optional_bias(out, &n, names, layer, "self_attn.o_proj", d,
                          offsetof(LayerAffine, output_bias));
    }
    if (c->mlp == MLP_NONE)
        return n;
    bool gated = Config_mlp_gated(c);
    add_llama_norms(out, &n, c, names, layer, true);
    const char *first = gated ? "mlp.gate_proj" : "mlp.up_proj";
    char name[64];
    snprintf(name, sizeof name, "%s.weight", first);
    add(out, &n, names, layer, name, hidden, d, LAYER_DRAW_MLP, offsetof(LayerWeights, mlp_in),
        COLUMNS);
    add_optional_bias(out, &n, names, layer, first, hidden, offsetof(LayerAffine, mlp_in_bias));
    if (gated) {
        add(out, &n, names, layer, "mlp.up_proj.weight", hidden, d, LAYER_DRAW_MLP,
            offsetof(LayerWeights, mlp_up), COLUMNS);
        add_optional_bias(out, &n, names, layer, "mlp.up_proj", hidden,
                          offsetof(LayerAffine, mlp_up_bias));
    }
    add(out, &n, names, layer, "mlp.down_proj.weight", d, hidden, LAYER_DRAW_MLP,
        offsetof(LayerWeights, mlp_out), AS_STORED);
    add_optional_bias(out, &n, names, layer, "mlp.down_proj", d,
                      offsetof(LayerAffine, mlp_out_bias));
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
    uint64_t hidden = (uint64_t)Config_mlp_hidden(c);
    add_gpt2_norm(out, &n, c, names, layer, "ln_1", false);
    const struct {
        bool used;
        uint64_t first, columns;
        unsigned part;
        size_t field, bias;
    } fused[] = {
        {Attention_has_query_key(c->attention), 0, d, LAYER_DRAW_ATTENTION,
         offsetof(LayerWeights, query), offsetof(LayerAffine, query_bias)},
        {Attention_has_query_key(c->attention), d, kv, LAYER_DRAW_ATTENTION,
         offsetof(LayerWeights, key), offsetof(LayerAffine, key_bias)},
        {true, d + kv, kv, LAYER_DRAW_VALUE, offsetof(LayerWeights, value),
         offsetof(LayerAffine, value_bias)},
    };
    for (int i = 0; i < 3; i++)
        if (fused[i].used) {
            WeightTensor *t = add(out, &n, names, layer, "attn.c_attn.weight", d, d + 2 * kv,
                                  fused[i].part, fused[i].field, COLUMNS);
            t->first_column = fused[i].first;
            t->columns = fused[i].columns;
            t = add_affine(out, &n, names, layer, "attn.c_attn.bias", d + 2 * kv, fused[i].bias,
                           0.0);
            t->first_column = fused[i].first;
            t->columns = fused[i].columns;
        }
    if (c->output != OUTPUT_IDENTITY) {
        add(out, &n, names, layer, "attn.c_proj.weight", d, d, LAYER_DRAW_OUTPUT,
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

/* ViT's names (modeling_vit.py's ViTLayer): nn.Linear (out, in) weights; query, key and value
   under attention.attention, their biases there only with qkv_bias (the default); W^O as
   attention.output.dense, W1 as intermediate.dense, W2 as output.dense, each with its bias;
   LayerNorm before the attention (layernorm_before) and before the MLP (layernorm_after, "after"
   the attention's residual add). */
static int vit_tensors(const Config *c, const Names *names, int layer, WeightTensor *out)
{
    int n = 0;
    uint64_t d = (uint64_t)c->width, kv = (uint64_t)Layer_kv_width(c);
    uint64_t hidden = (uint64_t)Config_mlp_hidden(c);
    if (c->layernorm != LAYERNORM_NONE)
        add_norm(out, &n, c, names, layer, "layernorm_before", NORM_ATTENTION_IN);
    if (Attention_has_query_key(c->attention)) {
        add(out, &n, names, layer, "attention.attention.query.weight", d, d, LAYER_DRAW_ATTENTION,
            offsetof(LayerWeights, query), AS_STORED);
        add_optional_bias(out, &n, names, layer, "attention.attention.query", d,
                          offsetof(LayerAffine, query_bias));
        add(out, &n, names, layer, "attention.attention.key.weight", kv, d, LAYER_DRAW_ATTENTION,
            offsetof(LayerWeights, key), AS_STORED);
        add_optional_bias(out, &n, names, layer, "attention.attention.key", kv,
                          offsetof(LayerAffine, key_bias));
    }
    add(out, &n, names, layer, "attention.attention.value.weight", kv, d, LAYER_DRAW_VALUE,
        offsetof(LayerWeights, value), AS_STORED);
    add_optional_bias(out, &n, names, layer, "attention.attention.value", kv,
                      offsetof(LayerAffine, value_bias));
    if (c->output != OUTPUT_IDENTITY) {
        add(out, &n, names, layer, "attention.output.dense.weight", d, d, LAYER_DRAW_OUTPUT,
            offsetof(LayerWeights, output), AS_STORED);
        add_affine(out, &n, names, layer, "attention.output.dense.bias", d,
                   offsetof(LayerAffine, output_bias), 0.0);
    }
    if (c->mlp == MLP_NONE)
        return n;
    if (c->layernorm != LAYERNORM_NONE)
        add_norm(out, &n, c, names, layer, "layernorm_after", NORM_MLP_IN);
    add(out, &n, names, layer, "intermediate.dense.weight", hidden, d, LAYER_DRAW_MLP,
        offsetof(LayerWeights, mlp_in), COLUMNS);
    add_affine(out, &n, names, layer, "intermediate.dense.bias", hidden,
               offsetof(LayerAffine, mlp_in_bias), 0.0);
    add(out, &n, names, layer, "output.dense.weight", d, hidden, LAYER_DRAW_MLP,
        offsetof(LayerWeights, mlp_out), AS_STORED);
    add_affine(out, &n, names, layer, "output.dense.bias", d, offsetof(LayerAffine, mlp_out_bias),
               0.0);
    return n;
}

int Weights_layer_tensors(const Config *c, const Names *names, int layer,
                          WeightTensor out[LAYER_TENSORS_MAX])
{
    switch (names->family) {
    case NAMES_GPT2:
        return gpt2_tensors(c, names, layer, out);
    case NAMES_VIT:
        return vit_tensors(c, names, layer, out);
    default:
        return llama_tensors(c, names, layer, out);
    }
}

/* What GPT-2's and ViT's names have no tensor for (the Llama names have one for everything). */
static const char *missing_tensor(const Config *c)
{
    return Config_mlp_gated(c)                ? "a gated MLP's up projection"
           : c->attention == ATTENTION_MARKOV ? "Markov logits"
           : Config_has_sink(c)               ? "attention sinks"
           : Attention_has_query_key(c->attention) && c->qk_norm != QK_NORM_NONE ? "QK-norm's gains"
                                                                                 : NULL;
}

bool Weights_names_fit(const Names *names, const Config *c, char *why, size_t size)
{
    if (names->family == NAMES_LLAMA)
        return true;
    bool gpt2 = names->family == NAMES_GPT2;
    const char *missing = missing_tensor(c);
    if (!missing && c->layernorm != LAYERNORM_NONE && gpt2 && c->ln_place == LN_PLACE_PERI)
        missing = "peri-LN's second norm of a sub-block (ln_1 and ln_2 are one each)";
    if (!missing && c->layernorm != LAYERNORM_NONE && !gpt2 && c->ln_place != LN_PLACE_PRE)
        missing = "a norm after a branch (layernorm_before and layernorm_after are pre-LN's, "
                  "before the attention and the MLP)";
    if (missing)
        snprintf(why, size, "%s's names have no tensor for %s (the Llama names do)",
                 gpt2 ? "GPT-2" : "ViT", missing);
    return !missing;
}

const char *Weights_table_name(const Names *names, bool positions)
{
    switch (names->family) {
    case NAMES_GPT2:
        return positions ? "wpe.weight" : "wte.weight";
    case NAMES_VIT:
        return NULL;
    default:
        return positions ? "model.embed_positions.weight" : "model.embed_tokens.weight";
    }
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
        n *= t->shape[i];
    return n;
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
