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
    double std;      /* of each entry (0: the zero matrix; NaN: not an i.i.d. draw) */
    bool orthogonal; /* Haar: orthonormal columns of the stored (tall) shape */
    double gain;     /* an orthogonal matrix's factor after orthonormalising (1: none) */
} MatrixInit;

/* How c's scheme draws matrix m. */
MatrixInit Init_matrix(const Config *c, Matrix m);

/* Rows and columns of m as stored. */
void Init_shape(const Config *c, Matrix m, int *rows, int *cols);

/* Draws matrix m of (seed, layer) into out.  Returns 0 or LAPACK's status; -1 for the
   query and key weights of a scheme that draws them together (Init_draw_query_key). */
int Init_draw(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer, Matrix m,
              double *out);

/* Doubles of scratch Init_draw_query_key needs under c's scheme (0: none). */
size_t Init_scratch_doubles(const Config *c);

/* W^Q and W^K of (seed, layer) into wq and wk (d×d each, head h in columns h·d_h..).  The
   cutting-skip scheme draws, per head, Z_h (d×d, entries N(0, 1/d): the query stream's h-th
   d² numbers), takes the SVD αZ_h + βI = U S Vᵀ and sets W^Q_h = U_h √S_h, W^K_h = V_h √S_h
   with the d_h leading singular triplets: W^Q_h W^K_hᵀ is the best rank-d_h approximation of
   αZ_h + βI (all of it for one head).  scratch: Init_scratch_doubles(c).  Returns 0 or
   LAPACK's status. */
int Init_draw_query_key(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer,
                        double *wq, double *wk, double *scratch);

/* The factor of the logits X W^Q (X W^K)ᵀ: 1/√d_h or 1/d_h (--logit-scale), and 1 under the
   cutting-skip scheme, whose W^Q W^Kᵀ = αZ + βI is the logits' matrix itself. */
double Init_logit_scale(const Config *c);

/* The logits' std per unit σ_qk²: sqrt(std(W^Q)·std(W^K)) for c's scheme, the σ_qk that
   gives the same logits under the normal scheme. */
double Init_effective_sigma_qk(const Config *c);

#endif
