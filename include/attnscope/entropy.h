/* The entropy of attention rows (docs/model.md §2, THEORY.md §"Entropy of attention rows"):
 * the second failure mode, where every query attends to one key, beside rank collapse,
 * where every query attends to all alike.
 *
 * Entropy is of the attention matrix A as a layer builds it, before any gap removal: A − U
 * has negative entries and is no distribution.  Attention matrices are row-major (attention.h).
 */
#ifndef ATTNSCOPE_ENTROPY_H
#define ATTNSCOPE_ENTROPY_H

#include "attnscope/config.h"

#include <stdbool.h>

/* One attention matrix's rows, summarised; NaN where undefined. */
typedef struct {
    double mean, min, max; /* of H_i = −Σ_j A_ij ln A_ij over the rows, in nats (0 ln 0 = 0) */
    /* Mean of H_i / ln n_i over the rows with n_i ≥ 2 allowed keys: a row with one key is
       one-hot whatever the weights, so 0/0 says nothing and the row is left out (NaN when
       every row has one key). */
    double normalised_mean;
    double max_weight_mean; /* mean over the rows of max_j A_ij */
} EntropyRows;

/* Whether the rows of `kind`'s matrix are distributions (non-negative, summing to 1), so
   that their entropy means something: softmax, markov, uniform, identity.  Linear, relu and
   sigmoid rows are not. */
bool Entropy_defined(Attention kind);

/* Why entropy is undefined for `kind` (NULL where it is defined), for a warning. */
const char *Entropy_undefined_reason(Attention kind);

/* The rows of a (T×T, row-major, zero outside the mask) summarised; the keys allowed to row
   i are the mask's (Mask_row_range).  With `sink` (a built with sinks, rows summing below 1)
   each row is the (n_i + 1)-outcome distribution of its keys and the sink, whose mass is
   1 − Σ_j A_ij: H_i includes the sink's term and is normalised by ln(n_i + 1); the max weight
   stays the keys'. */
void Entropy_rows(Mask mask, int window, int T, bool sink, const double *a, EntropyRows *out);

/* Every field NaN. */
EntropyRows Entropy_undefined(void);

#endif
