/* What the weights' two files share (weights.c reads a checkpoint, weights_export.c writes
 * one): the tensors of a configuration, their names, shapes and layouts. */
#ifndef ATTNSCOPE_COMMON_WEIGHTS_INTERNAL_H
#define ATTNSCOPE_COMMON_WEIGHTS_INTERNAL_H

#include "attnscope/config.h"
#include "attnscope/layer.h"

#include <stddef.h>
#include <stdint.h>

/* How a tensor's row-major elements lie in the layer's column-major buffer.  nn.Linear's
   (out, in) row-major is the (in × out) column-major matrix X·W multiplies by, so W^Q, W^K,
   W^V, W^O and the MLP's down projection are copied as they are; the MLP's input projections
   are kept transposed (N×d, init.h), so their (N, d) rows become columns.  A unit gain has
   no buffer: it must be 1 (the block's norms have no gains to set). */
typedef enum { AS_STORED, TRANSPOSED, UNIT_GAIN } Layout;

enum { LAYER_TENSORS_MAX = 9, NAME_SIZE = 96, NO_FIELD = (size_t)-1 };

typedef struct {
    char name[NAME_SIZE];
    int rank;
    uint64_t shape[3];
    unsigned part; /* the LayerDraw bit it belongs to */
    size_t field;  /* offsetof(LayerWeights, ...), NO_FIELD for a unit gain */
    Layout layout;
} WeightTensor;

/* The tensors of layer `layer` (from 1) of c, in the order an export writes them. */
int Weights_layer_tensors(const Config *c, int layer, WeightTensor out[LAYER_TENSORS_MAX]);

/* The product of t's shape. */
uint64_t WeightTensor_elements(const WeightTensor *t);

/* The buffer of w that holds t (not for a unit gain). */
double *WeightTensor_buffer(const LayerWeights *w, const WeightTensor *t);

/* "[a, b]" into buf. */
const char *Weights_shape_text(int rank, const uint64_t *shape, char *buf, size_t size);

#endif
