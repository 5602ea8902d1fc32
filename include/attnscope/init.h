/* Initialisation schemes (docs/model.md §1.10): how each weight matrix of a layer is drawn.
 *
 * Every matrix comes from its own stream (random.h) as i.i.d. N(0, 1) numbers, scaled by the
 * scheme's standard deviation for that matrix, or orthogonalised (Haar) where the scheme
 * says so.  The normal scheme is the model of docs/model.md §1.5–§1.9 exactly.
 */
#ifndef ATTNSCOPE_INIT_H
#define ATTNSCOPE_INIT_H

#include "attnscope/config.h"
#include "attnscope/linalg.h"
#include "attnscope/random.h"

#include <stdbool.h>
#include <stdint.h>

/* The matrices of one layer.  Shapes (column-major): query, key, value, output d×d; mlp-in
   stored transposed, R·d×d (the MLP multiplies by its transpose); mlp-out R·d×d. */
typedef enum {
    MATRIX_QUERY,
    MATRIX_KEY,
    MATRIX_VALUE,
    MATRIX_OUTPUT,
    MATRIX_MLP_IN,
    MATRIX_MLP_OUT,
    MATRICES,
} Matrix;

typedef struct {
    double std;      /* of each entry (0: the zero matrix) */
    bool orthogonal; /* Haar: orthonormal columns of the stored (tall) shape */
} MatrixInit;

/* How c's scheme draws matrix m. */
MatrixInit Init_matrix(const Config *c, Matrix m);

/* Rows and columns of m as stored. */
void Init_shape(const Config *c, Matrix m, int *rows, int *cols);

/* Draws matrix m of (seed, layer) into out.  Returns 0 or LAPACK's status. */
int Init_draw(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer, Matrix m,
              double *out);

/* The logits' std per unit σ_qk²: sqrt(std(W^Q)·std(W^K)) for c's scheme, the σ_qk that
   gives the same logits under the normal scheme. */
double Init_effective_sigma_qk(const Config *c);

#endif
