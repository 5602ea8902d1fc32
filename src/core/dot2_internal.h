/* Compensated dot products (Dot2: T. Ogita, S. M. Rump and S. Oishi, "Accurate sum and dot
 * product", SIAM J. Sci. Comput. 26, 2005, Algorithm 5.3), a matrix product's every entry at
 * once: the bounded product's accurate route (conditioning_rounding.c, docs/model.md §8, "the
 * compensated route").  Each entry is as accurate as if summed in twice the working precision
 * and then rounded: within u|xᵀy| + γ_n²|x|ᵀ|y| of the exact xᵀy (their Proposition 5.5),
 * u = 2⁻⁵³, barring underflow and overflow. */
#ifndef ATTNSCOPE_DOT2_INTERNAL_H
#define ATTNSCOPE_DOT2_INTERNAL_H

#include <stddef.h>

/* One part of a sum of products: Σ_q L[i, q]·R[j, q] over q < inner, L rows×inner
   column-major, given split (Dot2_split) into hi and lo; R read at right[j·right_column +
   q·right_inner], so that any column-major matrix or its transpose serves. */
typedef struct {
    const double *hi, *lo;
    const double *right;
    size_t right_column, right_inner;
} Dot2Part;

/* hi + lo = a exactly, each of at most 26 significant bits (Veltkamp's splitting), so that
   products of the halves are exact: count doubles. */
void Dot2_split(size_t count, const double *a, double *hi, double *lo);

/* out[i + j·rows] = fl(scale·Dot2(the parts' terms in order)) for i < rows, j < columns.
   sum, carry: scratch of rows doubles each. */
void Dot2_products(int rows, int columns, int inner, const Dot2Part *parts, int count, double scale,
                   double *sum, double *carry, double *out);

#endif
