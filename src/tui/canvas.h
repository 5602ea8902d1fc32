/* A character-cell canvas that knows nothing of curses (ttyplot's plot_dots(), made pure).
 *
 * Each cell holds up to 2×4 dots (braille, U+2800 + dot bits), an optional glyph drawn over
 * the dots (a marker or a letter of a label) and one ink.  Shapes are drawn in dot
 * coordinates: x grows to the right over 2·cols dots, y grows downwards over 4·rows dots.
 * Without Unicode a cell of dots reads as ' . : (dots in the upper half, the lower half,
 * or both) and labels are transliterated to ASCII.  The screen copies cells to the terminal;
 * tests read them back exactly.
 */
#ifndef ATTNSCOPE_TUI_CANVAS_H
#define ATTNSCOPE_TUI_CANVAS_H

#include "ink.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct Canvas Canvas;

/* An empty canvas of cols × rows cells (NULL when out of memory). */
Canvas *Canvas_new(int cols, int rows, bool unicode);
void Canvas_free(Canvas *c);
/* Every cell empty again and no clip (a plot drawn a second time, its legend changed). */
void Canvas_clear(Canvas *c);

int Canvas_cols(const Canvas *c);
int Canvas_rows(const Canvas *c);

/* Limits dot drawing (not glyphs) to the dots x0 <= x < x1, y0 <= y < y1. */
void Canvas_clip(Canvas *c, int x0, int y0, int x1, int y1);
/* Dots may go anywhere on the canvas again. */
void Canvas_unclip(Canvas *c);

/* Presentation mode (off on a new canvas): Canvas_point fills a whole cell with a glyph,
   lines and circles are two dots wide. */
void Canvas_set_bold(Canvas *c, bool bold);

/* A data point: one dot, or in bold mode a whole-cell ● (ASCII '*') unless the cell holds a
   glyph already; ignored outside the clip rectangle. */
void Canvas_point(Canvas *c, int x, int y, Ink ink);

/* One dot; ignored outside the clip rectangle. */
void Canvas_dot(Canvas *c, int x, int y, Ink ink);
/* The dots of the segment from (x0, y0) to (x1, y1), both ends included (Bresenham). */
void Canvas_line(Canvas *c, int x0, int y0, int x1, int y1, Ink ink, Stroke stroke);
/* The dots of the circle of radius r around (cx, cy) (midpoint algorithm). */
void Canvas_circle(Canvas *c, int cx, int cy, int r, Ink ink, Stroke stroke);

/* ORs the dot bits into cell (col, row), e.g. a legend's sample of a stroke; ignores the
   clip rectangle. */
void Canvas_pattern(Canvas *c, int col, int row, uint8_t bits, Ink ink);
/* A legend's sample of the points Canvas_point draws, in cell (col, row): these dots, or in
   bold mode the point's whole-cell glyph, so that the legend shows what the plot draws. */
void Canvas_point_sample(Canvas *c, int col, int row, uint8_t dots, Ink ink);

/* Writes the UTF-8 text from cell (col, row) rightwards, transliterated to ASCII when the
   canvas has no Unicode; text covers dots.  Returns the number of cells written. */
int Canvas_text(Canvas *c, int col, int row, const char *utf8, Ink ink);
/* Columns the text takes on this canvas (ASCII spellings may be longer). */
int Canvas_text_width(const Canvas *c, const char *utf8);

/* Whether text written over cols [col, col + cells) of row would cover nothing that reads
   as text: the cells are on the canvas and hold no glyph, and without Unicode (where a cell
   of dots is a character too, ' . :) no dots either. */
bool Canvas_room_for_text(const Canvas *c, int col, int row, int cells);

/* The dot bits of a cell (braille order: bit 0..7 = dots 1..8). */
uint8_t Canvas_dots(const Canvas *c, int col, int row);
/* The cell as UTF-8 (a glyph, a braille or ASCII dot character, or a space) in out, at
   least 5 bytes; returns the cell's ink. */
Ink Canvas_cell(const Canvas *c, int col, int row, char *out);

#endif
