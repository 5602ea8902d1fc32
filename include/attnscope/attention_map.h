/* The attention map (docs/model.md §2, "The attention map"): a T×T attention matrix reduced
 * to block means small enough to draw and to keep, and the column mass of a product of
 * attention matrices (where the output tokens' mass comes from).
 *
 * Blocks are b×b tokens from the first token on; where b does not divide T the last row and
 * column of cells average the T − (cells − 1)·b tokens left.  A map at block b can be
 * coarsened exactly to any block k·b: each coarse block is a union of whole fine ones.
 * Attention matrices are row-major (attention.h).
 */
#ifndef ATTNSCOPE_ATTENTION_MAP_H
#define ATTNSCOPE_ATTENTION_MAP_H

#include "attnscope/linalg.h"

typedef struct {
    int tokens;   /* T of the matrix it reduces (0: no map) */
    int block;    /* b: tokens per cell along each side */
    int cells;    /* ⌈T/b⌉ cells along each side */
    double *mean; /* cells×cells block means, row by row */
} AttentionMap;

/* A kept map has at most this many cells along a side: 2 MB at T = 4096, whatever the panel. */
enum { ATTENTION_MAP_CELLS = 512 };

/* The smallest block b with ⌈T/b⌉ ≤ cells_max (cells_max ≥ 1). */
int AttentionMap_block_for(int tokens, int cells_max);

/* The block means of a (T×T, row-major) at block b, into a fresh map.  Returns 0 or -1 (out
   of memory: *out is then empty). */
int AttentionMap_reduce(const double *a, int tokens, int block, AttentionMap *out);

/* The block means of `fine` at block factor·fine->block, exactly (each fine cell weighted by
   the tokens it averages), into a fresh map.  Returns 0 or -1. */
int AttentionMap_coarsen(const AttentionMap *fine, int factor, AttentionMap *out);

/* A deep copy (an empty map copies as empty).  Returns 0 or -1. */
int AttentionMap_copy(const AttentionMap *from, AttentionMap *to);
void AttentionMap_release(AttentionMap *m);

/* The tokens cell i of a side averages: b, or what is left in the last cell. */
int AttentionMap_cell_tokens(const AttentionMap *m, int i);

/* p ← a·p for row-major T×T matrices (scratch T×T): one more factor of the product
   A_ℓ⋯A_1 on the left.  Returns 0 or LINALG_STOPPED. */
int Attention_product_step(Linalg *la, int tokens, const double *a, double *p, double *scratch);

/* mass_j = Σ_i p_ij / T: how much of the T output tokens' mass comes from token j (1 in
   all when the rows of p sum to one). */
void Attention_column_mass(const double *p, int tokens, double *mass);

#endif
