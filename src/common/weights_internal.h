/* What the weights' two files share (weights.c reads a checkpoint, weights_export.c writes
 * one): the tensors of a configuration, their names, shapes and layouts. */
#ifndef ATTNSCOPE_COMMON_WEIGHTS_INTERNAL_H
#define ATTNSCOPE_COMMON_WEIGHTS_INTERNAL_H

#include "attnscope/config.h"
#include "attnscope/layer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a tensor's row-major elements lie in the layer's column-major buffer.  nn.Linear's
   (out, in) row-major is the (in × out) column-major matrix X·W multiplies by, so the Llama
   names' W^Q, W^K, W^V, W^O and down projection are copied as they are; the MLP's input
   projections are kept transposed (N×d, init.h), as are GPT-2's Conv1D (in, out) weights
   (y = xW): COLUMNS takes columns [first_column, first_column + columns) of such a
   (rows, total) tensor as the rows × columns column-major matrix (GPT-2's fused c_attn holds
   q | k | v by columns).  A CONSTANT (a norm's gain, a bias) has no buffer: every entry must
   be `constant`, as the block's norms have unit gains and no bias. */
typedef enum { AS_STORED, COLUMNS, CONSTANT } Layout;

/* The names a checkpoint uses: Hugging Face's Llama family (model.layers.N.self_attn.q_proj
   ...; what the export writes) or GPT-2's (h.N.attn.c_attn ..., under `prefix`, "" or
   "transformer."). */
typedef enum { NAMES_LLAMA, NAMES_GPT2 } NameFamily;

typedef struct {
    NameFamily family;
    const char *prefix;
} Names;

enum { LAYER_TENSORS_MAX = 16, NAME_SIZE = 112, NO_FIELD = (size_t)-1 };

typedef struct {
    char name[NAME_SIZE];
    int rank;
    uint64_t shape[3];
    unsigned part; /* the LayerDraw bit it belongs to */
    size_t field;  /* offsetof(LayerWeights, ...), NO_FIELD for a constant */
    Layout layout;
    uint64_t first_column, columns; /* COLUMNS */
    double constant;                /* CONSTANT */
} WeightTensor;

/* The tensors of layer `layer` (from 1) of c under `names`, in the order an export writes
   them.  Llama names for every configuration; GPT-2's for those Weights_gpt2_names_fit. */
int Weights_layer_tensors(const Config *c, const Names *names, int layer,
                          WeightTensor out[LAYER_TENSORS_MAX]);

/* Whether GPT-2's names describe c's block (no gated MLP, Markov logits or QK-norm, which
   GPT-2 has no tensor for): true, or false with the reason in why. */
bool Weights_gpt2_names_fit(const Config *c, char *why, size_t size);

/* The names the export writes. */
extern const Names LLAMA_NAMES;

/* The product of t's shape. */
uint64_t WeightTensor_elements(const WeightTensor *t);

/* The buffer of w that holds t (not for a unit gain). */
double *WeightTensor_buffer(const LayerWeights *w, const WeightTensor *t);

/* "[a, b]" into buf. */
const char *Weights_shape_text(int rank, const uint64_t *shape, char *buf, size_t size);

#endif
