/* Compensated dot products (dot2_internal.h).  TwoProduct is Dekker's (Ogita, Rump and Oishi,
 * Algorithm 3.3 with 3.2's splitting), not an fma: the build targets baseline x86-64, where
 * fma() is a library call per term.  Every product and sum here must be rounded on its own:
 * contracting x = a·r into the TwoSum that follows (GCC does under -ffp-contract=fast, its
 * default outside ISO modes) breaks TwoProduct, so the Makefile builds this file with
 * -ffp-contract=off (tests/cli/dot2-contraction.sh). */
#include "dot2_internal.h"

#include <string.h>

/* 2^27 + 1: Veltkamp's factor for 53-bit doubles. */
#define SPLIT_FACTOR 134217729.0

/* Veltkamp's splitting of one double: returns hi, *lo = a − hi, both exact halves. */
static inline double split(double a, double *lo)
{
    double c = SPLIT_FACTOR * a, high = c - (c - a);
    *lo = a - high;
    return high;
}

void Dot2_split(size_t count, const double *a, double *hi, double *lo)
{
    for (size_t k = 0; k < count; k++)
        hi[k] = split(a[k], &lo[k]);
}

/* Two rows at a time: GCC's and Clang's vector extension, SSE2's two doubles on baseline
   x86-64 (1.0 against 2.0 ns a term at T = d = 256, bench/README.md). */
typedef double RowPair __attribute__((vector_size(2 * sizeof(double))));

/* TwoProduct of (hi + lo)·r (r = r_hi + r_lo) and TwoSum of it into sum, per lane: x + e is
   the product exactly, next + err the sum, and carry gathers err + e. */
static inline void dot2_term(RowPair hi, RowPair lo, RowPair r, RowPair r_hi, RowPair r_lo,
                             RowPair *sum, RowPair *carry)
{
    RowPair a = hi + lo, x = a * r;
    RowPair e = lo * r_lo - (((x - hi * r_hi) - lo * r_hi) - hi * r_lo);
    RowPair next = *sum + x, z = next - *sum;
    RowPair err = (*sum - (next - z)) + (x - z);
    *sum = next;
    *carry += err + e;
}

/* One column of the products: every row's running sum and carry take the terms
   L[i, q]·r_q of one part, r_q = R[j, q] split once for all rows; an odd last row runs in a
   pair's first lane (the second, zeros, is dropped). */
static void column_part(int rows, int inner, const Dot2Part *part, size_t j, double *sum,
                        double *carry)
{
    for (int q = 0; q < inner; q++) {
        double r = part->right[j * part->right_column + (size_t)q * part->right_inner];
        double r_lo, r_hi = split(r, &r_lo);
        RowPair rr = {r, r}, rr_hi = {r_hi, r_hi}, rr_lo = {r_lo, r_lo};
        const double *hi = part->hi + (size_t)q * rows, *lo = part->lo + (size_t)q * rows;
        int i = 0;
        for (; i + 1 < rows; i += 2) {
            RowPair h, l, s, k;
            memcpy(&h, hi + i, sizeof h);
            memcpy(&l, lo + i, sizeof l);
            memcpy(&s, sum + i, sizeof s);
            memcpy(&k, carry + i, sizeof k);
            dot2_term(h, l, rr, rr_hi, rr_lo, &s, &k);
            memcpy(sum + i, &s, sizeof s);
            memcpy(carry + i, &k, sizeof k);
        }
        if (i < rows) {
            RowPair h = {hi[i]}, l = {lo[i]}, s = {sum[i]}, k = {carry[i]};
            dot2_term(h, l, rr, rr_hi, rr_lo, &s, &k);
            sum[i] = s[0];
            carry[i] = k[0];
        }
    }
}

void Dot2_products(int rows, int columns, int inner, const Dot2Part *parts, int count, double scale,
                   double *sum, double *carry, double *out)
{
    for (int j = 0; j < columns; j++) {
        for (int i = 0; i < rows; i++)
            sum[i] = carry[i] = 0.0;
        for (int p = 0; p < count; p++)
            column_part(rows, inner, &parts[p], (size_t)j, sum, carry);
        double *column = out + (size_t)j * rows;
        for (int i = 0; i < rows; i++)
            column[i] = scale * (sum[i] + carry[i]);
    }
}
