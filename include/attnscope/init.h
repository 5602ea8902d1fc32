/* Initialisation schemes (docs/model.md §1.10): how each weight matrix of a layer is drawn.
 *
 * Every matrix comes from its own stream (random.h) as i.i.d. N(0, 1) numbers, scaled by the
 * scheme's standard deviation for that matrix, or orthogonalised (Haar) where the scheme
 * says so, or as a factor of the SVD of a target product (cutting-skip, mimetic).  A
 * per-matrix choice (--init-query, ...) replaces the scheme's for that matrix alone.  The
 * normal scheme is the model of docs/model.md §1.5–§1.9 exactly.
 */
#ifndef ATTNSCOPE_INIT_H
#define ATTNSCOPE_INIT_H

#include "attnscope/config.h"
#include "attnscope/linalg.h"
#include "attnscope/random.h"

#include <stdbool.h>
#include <stdint.h>

/* The matrices of one layer.  Shapes (column-major): query, key, value, output d×d; mlp-in
   (a gated MLP's gate) and mlp-up stored transposed, N×d with N the hidden width
   (Config_mlp_hidden; the MLP multiplies by their transposes); mlp-out N×d. */
typedef enum {
    MATRIX_QUERY,
    MATRIX_KEY,
    MATRIX_VALUE,
    MATRIX_OUTPUT,
    MATRIX_MLP_IN,
    MATRIX_MLP_OUT,
    MATRIX_MLP_UP, /* a gated MLP's up projection, stored as W1 (its gate) */
    MATRICES,
} Matrix;

typedef struct {
    double std;      /* of each entry (0: none; NaN: a factor of an SVD, not an i.i.d. draw) */
    bool orthogonal; /* Haar: orthonormal columns of the stored (tall) shape */
    double gain;     /* an orthogonal matrix's factor after orthonormalising (1: none) */
    double diagonal; /* added to the diagonal after the draw (the identity: std 0, diagonal 1) */
    double cut;      /* entries cut at ±cut·std (drawn again beyond it); 0: a plain normal */
} MatrixInit;

/* Where --init trunc-normal cuts, in stds (OLMo-core's ±3σ). */
#define INIT_TRUNCATION 3.0

/* The std of N(0, 1) truncated to [−cut, cut]: √(1 − 2·cut·φ(cut)/(2Φ(cut) − 1)), 0.98658 at
   3 (torch's trunc_normal_ does not rescale: its entries' std is this times S). */
double Init_truncated_std(double cut);

/* Whether c's scheme draws every matrix with one std, --init-std (gpt2, trunc-normal). */
bool Init_uses_one_std(const Config *c);

/* The divisor of matrix m's std at layer `layer` (from 1) under c's depth scale: √(2L) or
   √(2ℓ) for W^O and the MLP's down projection, and (total, per-layer: OLMo-core's llama,
   llama_depth) a gated MLP's up projection; else 1.  A Haar W^O keeps its norm (the divisor
   scales only the draw it orthonormalises); the factorised schemes take none. */
double Init_depth_divisor(const Config *c, Matrix m, int layer);

/* Whether every layer's weights depend on the depth L (÷√(2L), deepnorm's β(L)), so that a
   network of another depth shares none of them. */
bool Init_depends_on_depth(const Config *c);

/* The std of the embedding input's entries: --init-std under the schemes that use one std,
   else that of rows whose expected norm is the input norm's (1/√d for unit rows, 1 for √d). */
double Init_embedding_std(const Config *c);

/* How c draws matrix m: the per-matrix choice (--init-query, ...) where it is not `scheme`,
   else c's scheme. */
MatrixInit Init_matrix(const Config *c, Matrix m);

/* Rows and columns of m as stored. */
void Init_shape(const Config *c, Matrix m, int *rows, int *cols);

/* The doubles of m as stored: rows × cols of Init_shape. */
size_t Init_doubles(const Config *c, Matrix m);

/* Draws matrix m of (seed, layer) into out.  Returns 0 or LAPACK's status; -1 for a matrix
   that is the factor of an SVD (Init_draw_with_scratch, Init_draw_query_key). */
int Init_draw(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer, Matrix m,
              double *out);

/* Init_draw for every matrix, the factors of an SVD included: per head h, the d_h leading
   singular triplets of αZ_h + βI = U S Vᵀ (Z_h the query stream's h-th d² numbers, entries
   N(0, 1/d)) give W^Q_h = U_h √S_h, W^K_h = V_h √S_h, so that W^Q_h W^K_hᵀ is the best
   rank-d_h approximation of αZ_h + βI; under the mimetic scheme with an output projection,
   the SVD of the layer's α₂Z₂ − β₂I = U S Vᵀ (the value stream's first d² numbers) gives
   W^V = U√S and W^O = √S Vᵀ, so that W^V W^O is α₂Z₂ − β₂I.  W^V and W^O are drawn apart:
   each decomposes the target again.  scratch: Init_scratch_doubles(c). */
int Init_draw_with_scratch(RandomStream *random, Linalg *la, const Config *c, uint64_t seed,
                           int layer, Matrix m, double *out, double *scratch);

/* Doubles of scratch the factorised schemes need (0: none under c's scheme). */
size_t Init_scratch_doubles(const Config *c);

/* W^Q and W^K of (seed, layer) into wq and wk (d×d each, head h in columns h·d_h..): both
   factors of one SVD per head where c's scheme factorises αZ + βI (cutting-skip, mimetic)
   and neither is chosen otherwise, else each as Init_draw_with_scratch draws it.
   scratch: Init_scratch_doubles(c).  Returns 0 or LAPACK's status. */
int Init_draw_query_key(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer,
                        double *wq, double *wk, double *scratch);

/* The factor of the logits X W^Q (X W^K)ᵀ: 1/√d_h or 1/d_h (--logit-scale), and 1 under the
   cutting-skip scheme, whose W^Q W^Kᵀ = αZ + βI is the logits' matrix itself.  Mimetic
   initialisation sets the weights of a standard layer and keeps its scale. */
double Init_logit_scale(const Config *c);

/* The logits' std per unit σ_qk²: sqrt(std(W^Q)·std(W^K)) for c's choices, the σ_qk that
   gives the same logits under the normal scheme (an orthogonal matrix or the identity:
   entries of size 1/√d; a truncated normal: its entries' own std, Init_truncated_std times
   S; a factor of an SVD: NaN). */
double Init_effective_sigma_qk(const Config *c);

#endif
