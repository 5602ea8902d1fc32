/* Block means of attention matrices, and the product of a layer's attention matrices
   (include/attnscope/attention_map.h). */
#include "attnscope/attention_map.h"

#include <stdlib.h>
#include <string.h>

int AttentionMap_block_for(int tokens, int cells_max)
{
    int block = (tokens + cells_max - 1) / cells_max;
    return block < 1 ? 1 : block;
}

static int side_cells(int tokens, int block)
{
    return (tokens + block - 1) / block;
}

int AttentionMap_cell_tokens(const AttentionMap *m, int i)
{
    int left = m->tokens - i * m->block;
    return left < m->block ? left : m->block;
}

static int map_new(int tokens, int block, AttentionMap *out)
{
    int cells = side_cells(tokens, block);
    *out = (AttentionMap){.tokens = tokens, .block = block, .cells = cells};
    out->mean = calloc((size_t)cells * cells, sizeof(double));
    if (!out->mean) {
        *out = (AttentionMap){0};
        return -1;
    }
    return 0;
}

int AttentionMap_reduce(const double *a, int tokens, int block, AttentionMap *out)
{
    if (map_new(tokens, block, out))
        return -1;
    int cells = out->cells;
    /* Sums row by row (the matrix is read once, in order), then each sum over its count.  A
       row's entries go to their cell's sum block by block, each in column order: no division
       per entry, and the same additions in the same order as entry by entry. */
    for (int i = 0; i < tokens; i++) {
        double *sums = out->mean + (size_t)(i / block) * cells;
        const double *row = a + (size_t)i * tokens;
        for (int cell = 0, j = 0; cell < cells; cell++) {
            int end = j + block < tokens ? j + block : tokens;
            double sum = sums[cell];
            for (; j < end; j++)
                sum += row[j];
            sums[cell] = sum;
        }
    }
    if (block == 1) /* each cell one entry: its sum is its mean, exactly (x / 1 is x) */
        return 0;
    for (int r = 0; r < cells; r++)
        for (int c = 0; c < cells; c++)
            out->mean[(size_t)r * cells + c] /=
                (double)AttentionMap_cell_tokens(out, r) * AttentionMap_cell_tokens(out, c);
    return 0;
}

int AttentionMap_coarsen(const AttentionMap *fine, int factor, AttentionMap *out)
{
    if (map_new(fine->tokens, fine->block * factor, out))
        return -1;
    int cells = out->cells;
    /* Each fine mean times the tokens it averages is its block's sum. */
    for (int r = 0; r < fine->cells; r++) {
        double rows = AttentionMap_cell_tokens(fine, r);
        double *sums = out->mean + (size_t)(r / factor) * cells;
        for (int c = 0; c < fine->cells; c++)
            sums[c / factor] +=
                fine->mean[(size_t)r * fine->cells + c] * rows * AttentionMap_cell_tokens(fine, c);
    }
    for (int r = 0; r < cells; r++)
        for (int c = 0; c < cells; c++)
            out->mean[(size_t)r * cells + c] /=
                (double)AttentionMap_cell_tokens(out, r) * AttentionMap_cell_tokens(out, c);
    return 0;
}

int AttentionMap_copy(const AttentionMap *from, AttentionMap *to)
{
    *to = *from;
    if (!from->mean)
        return 0;
    size_t n = (size_t)from->cells * from->cells;
    to->mean = malloc(sizeof(double) * n);
    if (!to->mean) {
        *to = (AttentionMap){0};
        return -1;
    }
    memcpy(to->mean, from->mean, sizeof(double) * n);
    return 0;
}

void AttentionMap_release(AttentionMap *m)
{
    free(m->mean);
    *m = (AttentionMap){0};
}

int Attention_product_step(Linalg *la, int tokens, const double *a, double *p, double *scratch)
{
    /* Row-major a and p are Aᵀ and Pᵀ to BLAS: Pᵀ·Aᵀ = (A·P)ᵀ is A·P row by row. */
    int info = Linalg_gemm(la, false, false, tokens, tokens, tokens, 1.0, p, tokens, a, tokens, 0.0,
                           scratch, tokens);
    if (!info)
        memcpy(p, scratch, sizeof(double) * tokens * tokens);
    return info;
}

void Attention_column_mass(const double *p, int tokens, double *mass)
{
    for (int j = 0; j < tokens; j++)
        mass[j] = 0;
    for (int i = 0; i < tokens; i++)
        for (int j = 0; j < tokens; j++)
            mass[j] += p[(size_t)i * tokens + j];
    for (int j = 0; j < tokens; j++)
        mass[j] /= tokens;
}
