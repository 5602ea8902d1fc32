/* Dot2's kernel on sums whose value is exactly one product's rounding error: row i is
 * a_i·b − fl(a_i·b), which Dot2 returns exactly (TwoProduct's error term carried, the rest
 * cancelling) and a recursive sum returns as 0.  Linked against a dot2.o built by the
 * Makefile's own rule (tests/cli/dot2-contraction.sh); the reference a_i·b − fl(a_i·b) is
 * fma's single rounding of an exact value.  Three rows: two in one vector pair and the odd
 * last row in a pair's first lane.  Exit 1 with the count of wrong entries. */
#include "dot2_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

enum { ROWS = 3, INNER = 2, TRIALS = 1000 };

/* A double in [1, 2) with a full 53-bit significand (xorshift64). */
static double significand(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return 1.0 + (double)(*state >> 11) * 0x1p-52;
}

int main(void)
{
    uint64_t state = 88172645463325252ull;
    int wrong = 0;
    for (int trial = 0; trial < TRIALS; trial++) {
        double left[ROWS * INNER], right[INNER] = {significand(&state), 1.0};
        double hi[ROWS * INNER], lo[ROWS * INNER], sum[ROWS], carry[ROWS], out[ROWS];
        double want[ROWS];
        for (int i = 0; i < ROWS; i++) {
            left[i] = significand(&state);
            volatile double rounded = left[i] * right[0]; /* fl(a_i·b), never fused */
            left[i + ROWS] = -rounded;
            want[i] = fma(left[i], right[0], -rounded);
        }
        Dot2_split(ROWS * INNER, left, hi, lo);
        Dot2Part part = {hi, lo, right, 0, 1};
        Dot2_products(ROWS, 1, INNER, &part, 1, 1.0, sum, carry, out);
        for (int i = 0; i < ROWS; i++)
            wrong += out[i] != want[i];
    }
    printf("%d of %d entries differ from the exact rounding error\n", wrong, ROWS * TRIALS);
    return wrong != 0;
}
