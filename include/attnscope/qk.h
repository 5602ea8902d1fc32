/* What stage 2 of a layer (layer.h) does to the projected queries and keys before the logits
 * (docs/model.md §1.8a): QK-norm, an RMSNorm with unit gain over each head's
 * d_h (Qwen3, Gemma 3) or over the full projected width H·d_h (OLMo 2), and rotary positions,
 * each head's rotated part turned by its token's position, in the order --qk-norm-place says.
 *
 * Storage: the T×(n·d_h) column-major projections of n heads (H queries, G keys), head h in its
 * block of d_h columns (a row is one token's query or key).
 */
#ifndef ATTNSCOPE_QK_H
#define ATTNSCOPE_QK_H

#include "attnscope/config.h"

#include <stdbool.h>
#include <stddef.h>

/* Whether c normalises queries and keys: a QK-norm and an attention kind that has them. */
bool Qk_normalised(const Config *c);

/* Whether layer `layer` (from 1) of c rotates: RoPE on, an attention kind with queries and keys,
   a rotated width above 0, and not a --nope-every layer. */
bool Qk_rotates(const Config *c, int layer);

/* The rotated width d_r of each head: the first --rope-fraction·d_h dimensions rounded down to
   an even count (HF's int(d_h·F), made even: a rotation turns pairs). */
int Qk_rotated_width(const Config *c);

/* The angular frequency f_k of pair k = 0 … d_r/2 − 1 at layer `layer` (from 1): θ^(−2k/d_r),
   rescaled by --rope-scaling (HF's inv_freq): linear f_k/s; llama3 keeps f_k where its
   wavelength λ = 2π/f_k < C/high, takes f_k/s where λ > C/low, and between them
   (1 − a)·f_k/s + a·f_k with a = (C/λ − low)/(high − low).  Unscaled it is pow(θ, −2k/d_r)
   itself.  A layer that turns locally (Config_layer_rotary_local) has θ = the local θ, unscaled. */
double Qk_frequency(const Config *c, int layer, int k);

/* QK-norm on x (T×heads·d_h) in place: x/√(mean(x²) + ε) over each head's d_h or over the full
   projected width heads·d_h (OLMo 2 normalises the G·d_h keys as one), ε = c->ln_eps; then,
   with a checkpoint's gain w (d_h entries shared by the heads, or heads·d_h), each column
   times o + w, o = c->norm_gain_offset (NULL: a unit gain, nothing done).
   row_stat: max(T, d) doubles, row_max: T (scratch). */
void Qk_norm(const Config *c, int T, int heads, double *x, const double *gain, double *row_stat,
             double *row_max);

/* RoPE on x (T×heads·d_h) in place: row i at position first_position + i, each head's first d_r
   dimensions turned by the angles p·f_k (Qk_frequency), k = 0 … d_r/2 − 1: HF's rotate_half pairs
   dimension k with k + d_r/2, Meta's pairs 2k with 2k + 1.  The layer's positions are 0 … T−1
   (first_position 0); another start is for the tests of the invariants.  `layer` (from 1)
   picks the frequencies (Qk_frequency). */
void Qk_rotate(const Config *c, int layer, int T, int heads, int first_position, double *x);

/* The transpose (and inverse) of Qk_rotate at positions 0 … T−1: each pair turned back by its
   angle, which is what a VJP through RoPE applies. */
void Qk_unrotate(const Config *c, int layer, int T, int heads, double *x);

/* RoPE's cosines and sines at positions 0 … T−1, for turning the same positions many times
   (the Jacobian's products, conditioning.h) without a cosine and a sine per pair and turn:
   table holds Qk_rotation_table_doubles(c, T), layer's frequencies.  Qk_turn is Qk_rotate at
   positions 0 … T−1 (transposed: Qk_unrotate) with the table's values, to the same bits. */
size_t Qk_rotation_table_doubles(const Config *c, int T);
void Qk_rotation_table(const Config *c, int layer, int T, double *table);
void Qk_turn(const Config *c, int layer, int T, int heads, const double *table, bool transposed,
             double *x);

/* Stage 2's features on the projected queries q and keys k of layer `layer` (from 1), in
   c's order: QK-norm then RoPE (before-rope), or RoPE then QK-norm (after-rope); the norms'
   gains (Qk_norm; NULL: none) with them. */
void Qk_shape(const Config *c, int layer, int T, double *q, double *k, const double *query_gain,
              const double *key_gain, double *row_stat, double *row_max);

#endif
