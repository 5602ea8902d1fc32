/* The tensors of a configuration's weights under Hugging Face's Llama names or GPT-2's
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
    snprintf(t->name, sizeof t->name,
             names->family == NAMES_GPT2 ? "%sh.%d.%s" : "%smodel.layers.%d.%s", names->prefix,
             layer - 1, suffix);
    return t;
}

static void add_constant(WeightTensor *list, int *n, const Names *names, int layer,
                         const char *suffix, uint64_t length, double value)
{
    add(list, n, names, layer, suffix, length, 0, LAYER_DRAW_VALUE, NO_FIELD, CONSTANT)->constant =
        value;
}

/* A sub-block's norm under Llama-family names: its unit gain, and LayerNorm's zero bias. */
static void add_norm(WeightTensor *list, int *n, const Config *c, const Names *names, int layer,
                     const char *norm)
{
    char name[64];
    snprintf(name, sizeof name, "%s.weight", norm);
    add_constant(list, n, names, layer, name, (uint64_t)c->width, 1.0);
    snprintf(name, sizeof name, "%s.bias", norm);
    if (c->layernorm == LAYERNORM_LN)
        add_constant(list, n, names, layer, name, (uint64_t)c->width, 0.0);
}

/* Llama's names: nn.Linear (out, in) weights, W1 as up_proj (down(act(up x))) or, gated,
   gate_proj with up_proj; the norms' gains, pre-LN as Llama names them (input_layernorm,
   post_attention_layernorm before the MLP), post-LN as OLMo 2 does (post_attention_layernorm,
   post_feedforward_layernorm); QK-norm's gains; attnscope's own Markov logits. */
static int llama_tensors(const Config *c, const Names *names, int layer, WeightTensor *out)
{
    int n = 0;
    uint64_t d = (uint64_t)c->width, kv = (uint64_t)Layer_kv_width(c);
    uint64_t dh = (uint64_t)Config_head_width(c), hidden = (uint64_t)Config_mlp_hidden(c);
    bool norms = c->layernorm != LAYERNORM_NONE, pre = c->ln_place == LN_PLACE_PRE;
    if (norms)
        add_norm(out, &n, c, names, layer, pre ? "input_layernorm" : "post_attention_layernorm");
    if (Attention_has_query_key(c->attention)) {
        add(out, &n, names, layer, "self_attn.q_proj.weight", d, d, LAYER_DRAW_ATTENTION,
            offsetof(LayerWeights, query), AS_STORED);
        add(out, &n, names, layer, "self_attn.k_proj.weight", kv, d, LAYER_DRAW_ATTENTION,
            offsetof(LayerWeights, key), AS_STORED);
    }
    if (Attention_has_query_key(c->attention) && c->qk_norm != QK_NORM_NONE) {
        bool full = c->qk_norm == QK_NORM_FULL;
        add_constant(out, &n, names, layer, "self_attn.q_norm.weight", full ? d : dh, 1.0);
        add_constant(out, &n, names, layer, "self_attn.k_norm.weight", full ? kv : dh, 1.0);
    }
    if (c->attention == ATTENTION_MARKOV) {
        WeightTensor *t = add(out, &n, names, layer, "self_attn.markov_logits", (uint64_t)c->heads,
                              0, LAYER_DRAW_ATTENTION, offsetof(LayerWeights, markov), AS_STORED);
        t->rank = 3;
        t->shape[1] = t->shape[2] = (uint64_t)c->tokens;
    }
    add(out, &n, names, layer, "self_attn.v_proj.weight", kv, d, LAYER_DRAW_VALUE,
        offsetof(LayerWeights, value), AS_STORED);
    if (c->output != OUTPUT_IDENTITY)
        add(out, &n, names, layer, "self_attn.o_proj.weight", d, d, LAYER_DRAW_OUTPUT,
            offsetof(LayerWeights, output), AS_STORED);
    bool gated = Config_mlp_gated(c);
    if (norms && c->mlp != MLP_NONE)
        add_norm(out, &n, c, names, layer,
                 pre ? "post_attention_layernorm" : "post_feedforward_layernorm");
    if (c->mlp != MLP_NONE)
        add(out, &n, names, layer, gated ? "mlp.gate_proj.weight" : "mlp.up_proj.weight", hidden, d,
            LAYER_DRAW_MLP, offsetof(LayerWeights, mlp_in), COLUMNS);
    if (gated)
        add(out, &n, names, layer, "mlp.up_proj.weight", hidden, d, LAYER_DRAW_MLP,
            offsetof(LayerWeights, mlp_up), COLUMNS);
    if (c->mlp != MLP_NONE)
        add(out, &n, names, layer, "mlp.down_proj.weight", d, hidden, LAYER_DRAW_MLP,
            offsetof(LayerWeights, mlp_out), AS_STORED);
    return n;
}

/* GPT-2's names: Conv1D (in, out) weights, q | k | v fused by columns in c_attn, zero biases,
   LayerNorm's unit gains and zero biases (RMSNorm: gains only). */
static int gpt2_tensors(const Config *c, const Names *names, int layer, WeightTensor *out)
{
    int n = 0;
    uint64_t d = (uint64_t)c->width, kv = (uint64_t)Layer_kv_width(c);
    uint64_t hidden = (uint64_t)Config_mlp_hidden(c);
    bool norms = c->layernorm != LAYERNORM_NONE, biases = c->layernorm == LAYERNORM_LN;
    if (norms)
        add_constant(out, &n, names, layer, "ln_1.weight", d, 1.0);
    if (biases)
        add_constant(out, &n, names, layer, "ln_1.bias", d, 0.0);
    const struct {
        bool used;
        uint64_t first, columns;
        unsigned part;
        size_t field;
    } fused[] = {
        {Attention_has_query_key(c->attention), 0, d, LAYER_DRAW_ATTENTION,
         offsetof(LayerWeights, query)},
        {Attention_has_query_key(c->attention), d, kv, LAYER_DRAW_ATTENTION,
         offsetof(LayerWeights, key)},
        {true, d + kv, kv, LAYER_DRAW_VALUE, offsetof(LayerWeights, value)},
    };
    for (int i = 0; i < 3; i++)
        if (fused[i].used) {
            WeightTensor *t = add(out, &n, names, layer, "attn.c_attn.weight", d, d + 2 * kv,
                                  fused[i].part, fused[i].field, COLUMNS);
            t->first_column = fused[i].first;
            t->columns = fused[i].columns;
        }
    add_constant(out, &n, names, layer, "attn.c_attn.bias", d + 2 * kv, 0.0);
    if (c->output != OUTPUT_IDENTITY) {
        add(out, &n, names, layer, "attn.c_proj.weight", d, d, LAYER_DRAW_OUTPUT,
            offsetof(LayerWeights, output), COLUMNS);
        add_constant(out, &n, names, layer, "attn.c_proj.bias", d, 0.0);
    }
    if (c->mlp == MLP_NONE)
        return n;
    if (norms)
        add_constant(out, &n, names, layer, "ln_2.weight", d, 1.0);
    if (biases)
        add_constant(out, &n, names, layer, "ln_2.bias", d, 0.0);
    add(out, &n, names, layer, "mlp.c_fc.weight", d, hidden, LAYER_DRAW_MLP,
        offsetof(LayerWeights, mlp_in), AS_STORED);
    add_constant(out, &n, names, layer, "mlp.c_fc.bias", hidden, 0.0);
    add(out, &n, names, layer, "mlp.c_proj.weight", hidden, d, LAYER_DRAW_MLP,
        offsetof(LayerWeights, mlp_out), COLUMNS);
    add_constant(out, &n, names, layer, "mlp.c_proj.bias", d, 0.0);
    return n;
}

int Weights_layer_tensors(const Config *c, const Names *names, int layer,
                          WeightTensor out[LAYER_TENSORS_MAX])
{
    return names->family == NAMES_GPT2 ? gpt2_tensors(c, names, layer, out)
                                       : llama_tensors(c, names, layer, out);
}

bool Weights_gpt2_names_fit(const Config *c, char *why, size_t size)
{
    const char *missing = Config_mlp_gated(c)                ? "a gated MLP's up projection"
                          : c->attention == ATTENTION_MARKOV ? "Markov logits"
                          : Attention_has_query_key(c->attention) && c->qk_norm != QK_NORM_NONE
                              ? "QK-norm's gains"
                              : NULL;
    if (missing)
        snprintf(why, size, "GPT-2's names have no tensor for %s (the Llama names do)", missing);
    return !missing;
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
