/* What the weights' two files share (weights.c reads a checkpoint, weights_export.c writes
 * one): the tensors of a configuration, their names, shapes and layouts. */
#ifndef ATTNSCOPE_COMMON_WEIGHTS_INTERNAL_H
#define ATTNSCOPE_COMMON_WEIGHTS_INTERNAL_H

#include "attnscope/config.h"
#include "attnscope/layer.h"
#include "json.h"
#include "weights.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a tensor's row-major elements lie in the layer's column-major buffer.  nn.Linear's
   (out, in) row-major is the (in × out) column-major matrix X·W multiplies by, so the Llama
   names' W^Q, W^K, W^V, W^O and down projection are copied as they are; the MLP's input
   projections are kept transposed (N×d, init.h), as are GPT-2's Conv1D (in, out) weights
   (y = xW): COLUMNS takes columns [first_column, first_column + columns) of such a
   (rows, total) tensor as the rows × columns column-major matrix (GPT-2's fused c_attn holds
   q | k | v by columns).  An AFFINE tensor (a norm's gain, a bias) goes to its slot of the
   layer's LayerAffine (layer.h) rather than into a buffer: entries [first_column,
   first_column + columns) of the vector (all of it where columns is 0; GPT-2's c_attn bias
   holds q | k | v), left NULL where every entry is `absent` (a unit gain, a zero bias), so that
   a checkpoint at step 0 runs as drawn weights do.  A fused nn.Linear tensor (Phi-3's
   qkv_proj: W^Q's rows, then W^K's, then W^V's; gate_up_proj: the gate's, then the up
   projection's) is one WeightTensor per matrix, each taking rows [first_row, first_row + rows)
   in either layout (rows 0: all of them). */
typedef enum { AS_STORED, COLUMNS, AFFINE } Layout;

/* The names a checkpoint uses: Hugging Face's Llama family (model.layers.N.self_attn.q_proj
   ...; what the export writes), GPT-2's (h.N.attn.c_attn ..., under `prefix`, "" or
   "transformer."), ViT's (encoder.layer.N.attention.attention.query ..., under "" or
   "vit.") or Phi-3's (Llama's with model.layers.N.self_attn.qkv_proj and mlp.gate_up_proj
   fused).  Everything attnscope knows of a family is its NameFamily (weights_names.c holds
   the four). */
typedef struct NameFamily NameFamily;

typedef struct {
    const NameFamily *family;
    const char *prefix;
} Names;

enum { LAYER_TENSORS_MAX = 32, NAME_SIZE = 112 };

typedef struct {
    char name[NAME_SIZE];
    int rank;
    uint64_t shape[3];
    unsigned part; /* the LayerDraw bit it belongs to */
    size_t field;  /* offsetof(LayerWeights, ...), or offsetof(LayerAffine, ...) for AFFINE */
    Layout layout;
    uint64_t first_column, columns; /* COLUMNS, and AFFINE's part of a vector */
    uint64_t first_row, rows;       /* a fused tensor's rows this matrix takes; rows 0: all */
    double absent;                  /* AFFINE: the value of every entry where there is none */
    bool optional; /* AFFINE: a checkpoint may leave it out (Llama-family biases: Qwen2 has q, k
                      and v biases, most others none; ViT's q, k and v, without qkv_bias); the
                      export writes it only with values */
} WeightTensor;

/* The tensors of layer `layer` (from 1) of c under `names`, in the order an export writes
   them.  Llama names for every configuration; GPT-2's and ViT's for those Weights_names_fit. */
int Weights_layer_tensors(const Config *c, const Names *names, int layer,
                          WeightTensor out[LAYER_TENSORS_MAX]);

/* Whether `names` describe c's block (GPT-2's and ViT's have no tensor for a gated MLP, Markov
   logits, sinks or QK-norm; GPT-2's none for peri-LN's second norm of a sub-block; ViT's none
   for a norm after a branch): true, or false with the reason in why. */
bool Weights_names_fit(const Names *names, const Config *c, char *why, size_t size);

/* The names the export writes: Llama's, and GPT-2's and ViT's (bare) for a block that is
   their family's. */
extern const Names LLAMA_NAMES, GPT2_NAMES, VIT_NAMES;

/* The names of a checkpoint's tensors: a family's where its first layer's tensor that tells it
   apart is there (bare, or under the prefix its model with a head saves it under), Llama's
   otherwise. */
Names Weights_names_of(const Safetensors *tensors);

/* Where a tensor the block does not use lies: a whole model's tensors after the block (the final
   norm, the output head), before it (ViT's patch embedding), beside it (a multimodal model's
   vision tower: *group is the prefix its names start with), a layer's mixture of experts where
   c has no MLP (gpt-oss's mlp.router and mlp.experts, and the norm before them where the layer
   has a router: *group is the name after the layer's "model.layers.N."), or INSIDE (none of
   those; *group is the name). */
typedef enum { INSIDE, BEFORE_BLOCK, AFTER_BLOCK, BESIDE_BLOCK, EXPERTS } Outside;
Outside Weights_outside_block(const Names *names, const Config *c, const Safetensors *tensors,
                              const char *name, const char **group);
/* The layer (from 1) whose tensor name is, 0 where it is no layer's; what every layer's names
   start with ("model.layers.", under the prefix). */
int Weights_layer_of(const Names *names, const char *name);
/* The name after its layer's "model.layers.N." ("input_layernorm.weight"), the name where it is
   no layer's. */
const char *Weights_layer_part(const Names *names, const char *name);
const char *Weights_layers_start(const Names *names, char *buf, size_t size);
/* Why the family's tensors at `where` (not INSIDE) are not used, for the warning. */
const char *Weights_outside_why(const Names *names, Outside where);

/* Whether name is a buffer a layer saves beside its weights, not a weight (GPT-2's causal
   masks, h.N.attn.bias and h.N.attn.masked_bias; the Llama family's rotary inverse
   frequencies, model.layers.N.self_attn.rotary_emb.inv_freq). */
bool Weights_layer_buffer(const Names *names, const char *name);

/* The elements of t's matrix: the product of its shape, with its own rows of a fused tensor. */
uint64_t WeightTensor_elements(const WeightTensor *t);

/* Whether t continues the fused tensor an earlier WeightTensor of the layer begins (its rows
   or columns start past the first): the export writes the tensor's header entry once, at its
   first part, and the parts' rows one after the other (fused by columns, GPT-2's c_attn: each
   row's parts one after the other). */
bool WeightTensor_continues(const WeightTensor *t);

/* The names the export writes for a checkpoint read under `names`: its own where transformers'
   model of the family loads no other (Phi-3's fused tensors), else Llama's, which read back
   the same; and that family's model_type for config.json (NULL: none). */
Names Weights_export_names(const Names *names);
const char *Weights_names_model_type(const Names *names);

/* The buffer of w that holds t (not for AFFINE). */
double *WeightTensor_buffer(const LayerWeights *w, const WeightTensor *t);

/* The slot of a that holds an AFFINE t, and what it holds (NULL also for a NULL). */
double **WeightTensor_affine_slot(LayerAffine *a, const WeightTensor *t);
const double *WeightTensor_affine_values(const LayerAffine *a, const WeightTensor *t);

/* The entries of an AFFINE t, from the checkpoint's whole vector `all`, into out: whether any
   differs from t's absent value. */
bool WeightTensor_affine_part(const WeightTensor *t, const double *all, double *out);

/* The names of the embedding table and its learned positions under `names` (after the
   prefix): GPT-2's wte and wpe, the Llama family's model.embed_tokens and attnscope's own
   model.embed_positions (the export writes a GPT-2 checkpoint's positions under it); NULL for
   ViT, whose patch embedding is no token table. */
const char *Weights_table_name(const Names *names, bool positions);

/* The checkpoint's embedding table (positions: its learned positions), NULL where it has none,
   and its row `row` converted to double into out (the pages let go after the last row: the
   export reads the rows in order). */
const SafetensorsTensor *Checkpoint_table(const Checkpoint *k, bool positions);
void Checkpoint_table_row(const Checkpoint *k, bool positions, uint64_t row, double *out);

/* The names the checkpoint's tensors have. */
Names Checkpoint_names(const Checkpoint *k);

/* The model_type of a checkpoint whose family scales the table's rows (Gemma: the export's
   config.json names it, so that the table reads back as it did), else NULL. */
const char *Checkpoint_scaled_family(const Checkpoint *k);

/* The positions the checkpoint's model takes (its learned positions' rows, its config.json's
   max_position_embeddings or n_positions, the least of those), 0 where nothing says. */
int Checkpoint_context(const Checkpoint *k);

/* What set the setting called `setting` (origins; NULL: its option) into buf, which it returns:
   "--width", "--hf-config ckpt/config.json's hidden_size", "--width's default". */
const char *Weights_origin(const SettingOrigins *origins, const char *setting, char *buf,
                           size_t size);

/* The sizes want's shape is made of under c, each with what set it (d, H, G and d_h; N for the
   MLP's tensors, T for Markov logits), into buf: a shape refused names the settings to mend. */
void Weights_shape_sizes(const Config *c, const WeightTensor *want, const SettingOrigins *origins,
                         char *buf, size_t size);

/* The refusal of t, none of c's tensors under names, into err: the setting in force that leaves
   it out and the value that reads it (--wo identity has no o_proj: --wo gaussian reads it),
   where one setting's other value does; else the sizes and where the names are listed. */
void Weights_not_a_weight(const Names *names, const Config *c, const SafetensorsTensor *t,
                          const SettingOrigins *origins, char *err, size_t size);

/* What a checkpoint directory's config.json says besides its sizes: its family (model_type; ""
   where it names none) and its context (max_position_embeddings or n_positions, the least; 0
   where neither), with what says it. */
typedef struct {
    char model_type[64];
    int context;
    char context_source[96];
} CheckpointConfig;

/* Reads dir/config.json, where dir is a directory holding one (else *out stays as it is): its
   sizes (from text_config in a multimodal config) must be c's, a refusal naming what gave the
   setting (origins).  0, or -1 with the reason in err. */
int Weights_read_config_json(const char *dir, const Config *c, const SettingOrigins *origins,
                             CheckpointConfig *out, char *err, size_t size);

/* "[a, b]" into buf. */
const char *Weights_shape_text(int rank, const uint64_t *shape, char *buf, size_t size);

/* How config.json names the model for Hugging Face: its model_type and the class a reader
   builds (NULL: no family's), and whether that class's model reads layer_types (the others
   slide by their own rule: Mistral every layer, Phi-3 every layer where sliding_window is set,
   Llama and OLMo 2 none, Qwen only with use_sliding_window), and the fields --hf-config names
   as not modelled in every such export beyond model_type's (NULL-ended; NULL: none):
   gpt-oss's experts, Gemma 2's final soft-cap (its LM head's, after the block). */
/* The fields config.json states the block's sizes under, as the family's config class reads
   them (the Llama family's hidden_size …; GPT-2's n_embd …), NULL where its model reads none
   (ViT's context: its image and patch sizes); whether it states the key/value heads and a
   head's width (GPT-2's and ViT's models have neither: H heads of d/H) and the attention's
   bias and window fields (the Llama family's); whether the MLP's width 4·d is null (GPT-2's
   n_inner, as its own configs state it); and fields its model must be told that the block
   fixes (ViT's "qkv_bias": false), or NULL. */
typedef struct {
    const char *width, *heads, *depth, *context, *mlp_width, *eps;
    bool heads_shape, attention_fields, null_four_widths;
    const char *fixed;
} HfFields;

typedef struct {
    const char *model_type, *architecture;
    bool reads_layer_types;
    const char *const *expected;
    /* The names its model loads (NULL: Llama's, or the checkpoint's own) and its fields (NULL:
       the Llama family's). */
    const Names *names;
    const HfFields *fields;
} HfClass;

/* The optional biases the layers' tensors include: none, Qwen2's (q_proj's, k_proj's and
   v_proj's on every layer, no other), or others. */
typedef enum { EXPORT_BIASES_NONE, EXPORT_BIASES_QKV, EXPORT_BIASES_OTHER } ExportBiases;

/* What config.json is written from: the run's settings, the checkpoint read (NULL: drawn
   weights), --hf-config's report (NULL: none), the family named, and the warning the export
   gives ("" none). */
typedef struct {
    const Config *c;
    const Checkpoint *checkpoint;
    const HfConfigReport *read;
    SafetensorsDtype dtype;
    HfClass hf;
    ExportBiases biases;
    /* The family a checkpoint's names or table fix where it does not have the run's block
       (config.json then names no model_type): "tensors_family" under "attnscope", which
       --weights reads in model_type's place (Gemma's table scale and gain offset). */
    char tensors_family[32];
    char warning[640];
} ExportConfig;

/* Names e's family (e->hf) and its warning (e->warning), e->biases said: `fixed`, the
   model_type the checkpoint's names or table fix (NULL: none), or the first family loading
   Llama's names (drawn weights: then GPT-2's or ViT's, under their own names) whose --hf-config
   reading of the file gives the run's block back: without biases any of them, with Qwen2's
   qwen2 alone, with others none (the families switch them on in their own ways).  A fixed
   family is named only where it reads the block back too (else e->tensors_family). */
void ExportConfig_name_family(ExportConfig *e, const char *fixed);

/* config.json of e into t (weights_export_config.c): layer_types where with_types. */
void ExportConfig_json(const ExportConfig *e, bool with_types, Text *t);

#endif
