/* Attention matrices (docs/model.md §1.2–§1.4).
 *
 * An attention matrix is stored row by row: a[i*T + j] = A_ij, so that a row (one query
 * token over its keys) is contiguous for the softmax, the masks and the gap removal.  To
 * column-major BLAS and LAPACK the same buffer is Aᵀ, which has the eigenvalues and singular
 * values of A; products with A use the transposed flag.
 */
#ifndef ATTNSCOPE_ATTENTION_H
#define ATTNSCOPE_ATTENTION_H

#include "attnscope/config.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"

#include <stdbool.h>

/* Keys allowed for query i: every mask allows a contiguous range [*first, *last]. */
void Mask_row_range(Mask m, int window, int T, int i, int *first, int *last);

/* True when the kind computes logits S = X W^Q (X W^K)ᵀ / √d from the tokens. */
bool Attention_has_query_key(Attention kind);

/* Gemma 2's soft-cap on n logits in place: S ← C·tanh(S/C) (C = cap > 0), which bounds them by C
   and leaves |S| ≪ C nearly unchanged. */
void Attention_softcap(double cap, double *logits, size_t n);

/* Builds A from row-major logits (softmax, relu, sigmoid, linear: S; markov: σ_qk²·g, whose
   row-softmax is the i.i.d. Markov matrix).  Uniform and identity ignore `logits`.
   Masked entries are exactly 0.  `sink`: softmax's sink logit s (gpt-oss), appended to every
   row's allowed logits before the softmax and its column dropped, A_ij = e^{S_ij} /
   (e^{s} + Σ_allowed e^{S_ik}), so row i sums to 1 − its sink weight; −∞ for none.  Other
   kinds ignore it. */
void Attention_build(Attention kind, Mask mask, int window, int T, const double *logits,
                     double sink, double *a);

/* Population standard deviation of the logits over the allowed entries. */
double Attention_logit_std(Mask mask, int window, int T, const double *logits);

/* True when A is lower triangular (every entry above the diagonal exactly 0). */
bool Attention_is_lower_triangular(int T, const double *a);

typedef struct {
    Gap applied;          /* the mode used (deflate falls back to center) */
    int outliers_removed; /* r, for the outliers mode */
} GapOutcome;

/* Doubles of scratch Gap_apply needs for T tokens. */
size_t Gap_scratch_size(int T);

/* Whether gap removal `mode` leaves exactly 0 in exact arithmetic, where rounding would leave a
   residue (docs/model.md §1.4): attention whose rows are uniform over their keys
   (`uniform_rows`: Layer_attention_uniform proves it from the settings) and whose every row
   sees all T keys is U = (1/T)11ᵀ, singular values (1, 0, …, 0) and left Perron vector 1/T,
   so the outlier removed (r = 1) and deflate's 1πᵀ are U itself.  Center and uniform
   subtract U's own entries: their zero is exact in floating point too, and they need no
   proof. */
bool Gap_leaves_zero(Gap mode, bool uniform_rows, Mask mask, int window, int T);

/* Whether the matrix M that gap removal `mode` applies sends tokens equal to one another to 0
   in exact arithmetic (docs/model.md §2, "Round-off from a layer on"): center (each row minus
   its mean over its keys), deflate (A − 1πᵀ, or center where it falls back) and uniform on rows
   that sum to 1 give M·1 = 0, so M·X = M·(X − 1x̄ᵀ) reads only the tokens' differences; and
   outliers, where every row sees all T keys and equal tokens make every entry of A the same
   (A = a·11ᵀ, rank one, sinks or not: the outlier removed is A itself), except identity attention,
   which reads no tokens and has no outlier.  Then, once the tokens entering the layer are equal to
   within round-off, what M passes on is their rounding. */
bool Gap_annihilates_equal_tokens(Gap mode, Attention kind, bool sink, Mask mask, int window,
                                  int T);

/* Identity attention under gap outliers: every singular value of I is 1, every gap 0, so no
   direction is an outlier and the top one LAPACK returns would be arbitrary. */
#define GAP_IDENTITY_HAS_NO_OUTLIER                                                                \
    "identity attention has no outlier (every singular value of I is 1, every gap 0), so "         \
    "nothing is removed: the network is the gap-off one"

/* Replaces A by the matrix the gap mode applies (docs/model.md §1.4).  `sink`: A was built with
   sinks (its rows sum below 1), so center subtracts each row's mean and deflate falls back to
   it, as for the kinds whose rows do not sum to 1.  `uniform_rows`: every row of A is uniform
   over its keys in exact arithmetic (Gap_leaves_zero).  Fallbacks and broken masks are reported in
   `warnings`.  Returns 0, a LAPACK failure, or LINALG_STOPPED when la's stop hook asked. */
int Gap_apply(Gap mode, Attention kind, bool sink, bool uniform_rows, Mask mask, int window, int T,
              double *a, Linalg *la, double *scratch, GapOutcome *outcome, Warnings *warnings);

#endif
