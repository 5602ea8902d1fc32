/* The entropy of attention rows (docs/model.md §2, §3 Attention entropy):
 * the second failure mode, where every query attends to one key, beside rank collapse,
 * where every query attends to all alike.
 *
 * Entropy is of the attention matrix A as a layer builds it, before any gap removal: A − U
 * has negative entries and is no distribution.  Attention matrices are row-major (attention.h).
 */
#ifndef ATTNSCOPE_ENTROPY_H
#define ATTNSCOPE_ENTROPY_H

#include "attnscope/config.h"
#include "attnscope/measure.h"

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

/* H_i of each row of a into h (T values), as Entropy_rows sums them. */
void Entropy_each_row(Mask mask, int window, int T, bool sink, const double *a, double *h);

/* Every field NaN. */
EntropyRows Entropy_undefined(void);

/* Zhai et al. (ICML 2023), Theorem 3.1, for one softmax row of n keys whose logit vector z has
   ‖z‖₂ <= sigma: with b = exp(−sigma·√(n/(n − 1))),
     H >= ln(1 + (n − 1)b) + sigma·√(n(n − 1))·b / (1 + (n − 1)b),
   the entropy of the one row that puts all of its centred norm on one key.  0 for n = 1. */
double Entropy_zhai_row_bound(int n, double sigma);

/* The bound for the least of the mask's rows (each with its own n_i allowed keys): under
   every row's entropy when every row's logits have norm <= sigma. */
double Entropy_zhai_bound(Mask mask, int window, int T, double sigma);

/* Why the theorem does not bound layer `layer`'s rows (NULL: it does).  It needs logits
   x_iᵀ M x_j of one matrix M for all i, j, rows a softmax of them: not QK-norm (logits of
   normalised q, k), not a RoPE layer (M turns with j − i), not kinds without such logits. */
const char *Entropy_zhai_void(const Config *c, int layer);

/* The bound's ‖X'‖₂² of a T×d input: exact (the singular values of X') while that costs
   little, T·d·min(T, d) <= ENTROPY_EXACT_INPUT_NORM; above, a proved upper bound
   (Measure_norm2_squared_bound, a few n·eps above), which keeps σ an upper bound of the
   logits' norms at the price of a Gram matrix and a Cholesky factorisation instead of an SVD
   (at T = d = 256, 8.4 M instructions against 29 M, callgrind; 16 per run at L = 8). */
#define ENTROPY_EXACT_INPUT_NORM MEASURE_SVD_CHEAP
bool Entropy_input_norm_exact(int T, int d);

/* Whether layer `layer`'s ‖X'‖₂² (first seed, 1 ≤ layer ≤ depth) is bounded when the layer
   below is measured, from the Gram matrix of X_{layer−1} that the stable rank forms
   (Measure_tokens_sharing), instead of a Gram matrix of its own: where the bound holds and
   is not exact, X' is X_{layer−1} itself (no pre- or peri-LN before the branch), and that
   Gram matrix, T×T, is of the smaller side (T ≤ d).  The run (run.c) and its plan (work.c)
   both ask; either takes the bound from the measure only where that layer below was measured
   on the same lane in the same run, else forms its own Gram matrix as before. */
bool Entropy_input_norm_measured(const Config *c, int layer);

/* The bound's ‖W^Q_h W^K_gᵀ‖₂ (d×d_h factors): exact (the singular values of a d×d_h matrix)
   by the same rule, d·d_h·min(d, d_h) ≤ ENTROPY_EXACT_INPUT_NORM; above, a proved upper bound
   (Measure_product_norm2_squared_bound: Gram matrices and Cholesky factorisations of d_h×d_h,
   no SVD). */
bool Entropy_qk_norm_exact(const Config *c);

/* Whether a measured layer computes the next layer's ‖W^Q_h W^K_gᵀ‖₂ beside its own, one on
   each lane (run.c; work.c declares the same): where there is a next layer with Zhai et al.'s
   bound and weights may be drawn ahead (Layer_draws_ahead).  The next layer then computes
   none. */
bool Entropy_qk_norms_ahead(const Config *c, int layer);

/* What rounding does to a layer's logits and, through them, to its rows (docs/model.md §2,
   "Round-off from a layer on"): δ bounds |Ŝ_ij − S_ij| for every logit the layer computes,
   S = scale·(X'W^Q_h)(X'W^K_g)ᵀ or scale·(X'M_h)X'ᵀ, as
     δ = γ_{2d + d_h + 12}·|scale|·‖W^Q_h‖_F‖W^K_g‖_F·max_i ‖x'_i‖²  (+ 4u·C with a soft-cap C),
   from weights_norm = ‖W^Q_h‖_F‖W^K_g‖_F and row_norm_max_squared = max_i ‖x'_i‖² of the
   attention input X'.  0 for markov, whose logits are drawn, not computed; NaN where the
   layer's rows read no logits (uniform, identity), and where it is not bounded so (QK-norm,
   query or key biases).  Logits within δ of the exact move every softmax weight by a factor
   in [e^{−2δ}, e^{2δ}], every row's largest weight by as much and its entropy by a factor in
   [e^{−4δ}, e^{4δ}]. */
double Entropy_logit_rounding(const Config *c, int layer, double weights_norm,
                              double row_norm_max_squared);

/* A row's own bound (docs/model.md §2, "The rows' own bound"): for a computed softmax row of
   n outcomes (keys, and the sink) whose logits are within δ of the exact, with entropy h and
   largest outcome p (both as computed), the exact row's entropy is within
     (e^{2δ'} − 1)·((h + ln p) + δ'·min(1, 2(1 − p))) + slack
   of h, δ' = δ + 760u the softmax's own rounding added, the slack (a few hundred n²u·(h + 1))
   what the softmax's and the entropy's sums leave; h + ln p = H − H_∞ ≥ 0 is 0 for one-hot
   and for flat rows, so a row far more concentrated than δ keeps its digits. */
double Entropy_row_entropy_rounding(double delta, int n, double h, double largest);

/* The same for the row's largest weight `top`: within (e^{2δ'} − 1)·min(top, 1 − top) (and
   the slack) of the exact row's. */
double Entropy_row_top_rounding(double delta, int n, double top);

/* Entropy_rows, and in *bound each field's bound from the rows' own (the mean of the rows'
   bounds for the means; for the least entropy the larger of its row's bound and
   max_i (B_i − (H_i − H_min)), the largest alike), δ bounding
   every logit's rounding (Entropy_logit_rounding); every bound NaN where δ is. */
void Entropy_rows_rounding(Mask mask, int window, int T, bool sink, const double *a, double delta,
                           EntropyRows *out, EntropyRows *bound);

/* The resolution a row statistic is shown at: its rounding bound below half its value, or
   below ENTROPY_RESOLUTION_FLOOR (nats, or weight) where the value is near 0; NaN bound (not
   bounded): shown. */
#define ENTROPY_RESOLUTION_FLOOR 1e-6
bool Entropy_resolved(double value, double bound);

#endif
