/* The canvas as text, for the tests that read a plot or a screen as a person would: rows
 * separated by newlines, into out (size bytes; cells that would not fit are left out, the row
 * ends and the terminating NUL always fit). */
#ifndef ATTNSCOPE_TESTS_CANVAS_TEXT_H
#define ATTNSCOPE_TESTS_CANVAS_TEXT_H

#include "canvas.h"

#include <stddef.h>
#include <string.h>

static void canvas_text(const Canvas *c, char *out, size_t size)
{
    size_t used = 0;
    for (int r = 0; r < Canvas_rows(c); r++) {
        for (int col = 0; col < Canvas_cols(c); col++) {
            char cell[8];
            Canvas_cell(c, col, r, cell);
            size_t n = strlen(cell);
            if (used + n + 2 < size) {
                memcpy(out + used, cell, n);
                used += n;
            }
        }
        out[used++] = '\n';
    }
    out[used] = '\0';
}

#endif
