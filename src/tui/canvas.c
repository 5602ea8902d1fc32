#include "canvas.h"

#include "ascii.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t dots;
    uint8_t ink;
    uint32_t glyph; /* drawn over the dots; 0 for none */
} Cell;

struct Canvas {
    int cols, rows;
    bool unicode;
    bool bold; /* presentation mode: points as whole cells, strokes two dots wide */
    int clip_x0, clip_y0, clip_x1, clip_y1;
    Cell *cells;
};

/* Braille dot bits by position in the cell: [dx][dy]. */
static const uint8_t DOT_BIT[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
/* Bits of the upper (rows 0, 1) and lower (rows 2, 3) halves of a cell. */
enum { UPPER_HALF = 0x01 | 0x02 | 0x08 | 0x10, LOWER_HALF = 0x04 | 0x20 | 0x40 | 0x80 };

Canvas *Canvas_new(int cols, int rows, bool unicode)
{
    if (cols < 1 || rows < 1)
        return NULL;
    Canvas *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->cells = calloc((size_t)cols * rows, sizeof(Cell));
    if (!c->cells) {
        free(c);
        return NULL;
    }
    c->cols = cols;
    c->rows = rows;
    c->unicode = unicode;
    c->bold = false;
    Canvas_unclip(c);
    return c;
}

void Canvas_clear(Canvas *c)
{
    memset(c->cells, 0, sizeof(Cell) * (size_t)c->cols * c->rows);
    Canvas_unclip(c);
}

void Canvas_free(Canvas *c)
{
    if (!c)
        return;
    free(c->cells);
    free(c);
}

int Canvas_cols(const Canvas *c)
{
    return c->cols;
}

int Canvas_rows(const Canvas *c)
{
    return c->rows;
}

void Canvas_clip(Canvas *c, int x0, int y0, int x1, int y1)
{
    c->clip_x0 = x0 < 0 ? 0 : x0;
    c->clip_y0 = y0 < 0 ? 0 : y0;
    c->clip_x1 = x1 > 2 * c->cols ? 2 * c->cols : x1;
    c->clip_y1 = y1 > 4 * c->rows ? 4 * c->rows : y1;
}

void Canvas_unclip(Canvas *c)
{
    Canvas_clip(c, 0, 0, 2 * c->cols, 4 * c->rows);
}

void Canvas_dot(Canvas *c, int x, int y, Ink ink)
{
    if (x < c->clip_x0 || x >= c->clip_x1 || y < c->clip_y0 || y >= c->clip_y1)
        return;
    Cell *cell = &c->cells[(size_t)(y / 4) * c->cols + x / 2];
    cell->dots |= DOT_BIT[x % 2][y % 4];
    if (!cell->glyph)
        cell->ink = (uint8_t)ink;
}

void Canvas_pattern(Canvas *c, int col, int row, uint8_t bits, Ink ink)
{
    if (col < 0 || col >= c->cols || row < 0 || row >= c->rows || bits == 0)
        return;
    Cell *cell = &c->cells[(size_t)row * c->cols + col];
    cell->dots |= bits;
    if (!cell->glyph)
        cell->ink = (uint8_t)ink;
}

void Canvas_set_bold(Canvas *c, bool bold)
{
    c->bold = bold;
}

/* A point's whole cell in bold mode. */
static uint32_t point_glyph(const Canvas *c)
{
    return c->unicode ? 0x25CFu : '*'; /* ● */
}

void Canvas_point(Canvas *c, int x, int y, Ink ink)
{
    if (!c->bold) {
        Canvas_dot(c, x, y, ink);
        return;
    }
    if (x < c->clip_x0 || x >= c->clip_x1 || y < c->clip_y0 || y >= c->clip_y1)
        return;
    Cell *cell = &c->cells[(size_t)(y / 4) * c->cols + x / 2];
    /* A marker or a label already there wins: it says more than one more point. */
    if (cell->glyph)
        return;
    cell->glyph = point_glyph(c);
    cell->ink = (uint8_t)ink;
}

void Canvas_point_sample(Canvas *c, int col, int row, uint8_t dots, Ink ink)
{
    if (!c->bold) {
        Canvas_pattern(c, col, row, dots, ink);
        return;
    }
    if (col < 0 || col >= c->cols || row < 0 || row >= c->rows)
        return;
    Cell *cell = &c->cells[(size_t)row * c->cols + col];
    cell->glyph = point_glyph(c);
    cell->ink = (uint8_t)ink;
}

/* One dot of a stroke; bold strokes take the dots to the right and below too, so that a
   curve reads from a distance. */
static void stroke_dot(Canvas *c, int x, int y, Ink ink)
{
    Canvas_dot(c, x, y, ink);
    if (c->bold) {
        Canvas_dot(c, x + 1, y, ink);
        Canvas_dot(c, x, y + 1, ink);
    }
}

/* Whether the i-th dot along a stroke is drawn. */
static bool stroke_on(Stroke stroke, int i)
{
    switch (stroke) {
    case STROKE_DASHED:
        return (i / 2) % 2 == 0;
    case STROKE_DOTTED:
        return i % 2 == 0;
    case STROKE_SOLID:
        break;
    }
    return true;
}

void Canvas_line(Canvas *c, int x0, int y0, int x1, int y1, Ink ink, Stroke stroke)
{
    int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
    int dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (int i = 0;; i++) {
        if (stroke_on(stroke, i))
            stroke_dot(c, x0, y0, ink);
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

void Canvas_circle(Canvas *c, int cx, int cy, int r, Ink ink, Stroke stroke)
{
    if (r <= 0) {
        Canvas_dot(c, cx, cy, ink);
        return;
    }
    int x = r, y = 0, err = 1 - r;
    /* Octant by octant; the i-th step is drawn or skipped in all eight alike, so dashes
       come out symmetric. */
    for (int i = 0; x >= y; i++) {
        if (stroke_on(stroke, i)) {
            const int px[8] = {x, y, -y, -x, -x, -y, y, x};
            const int py[8] = {y, x, x, y, -y, -x, -x, -y};
            for (int k = 0; k < 8; k++)
                stroke_dot(c, cx + px[k], cy + py[k], ink);
        }
        y++;
        if (err < 0) {
            err += 2 * y + 1;
        } else {
            x--;
            err += 2 * (y - x) + 1;
        }
    }
}

/* The text as this canvas spells it. */
static const char *spelled(const Canvas *c, const char *utf8, char *buf, size_t size)
{
    return c->unicode ? utf8 : Ascii_transliterate(utf8, buf, size);
}

int Canvas_text(Canvas *c, int col, int row, const char *utf8, Ink ink)
{
    char buf[512];
    const char *s = spelled(c, utf8, buf, sizeof buf);
    int written = 0;
    uint32_t cp;
    int n;
    for (; (n = Ascii_decode(s, &cp)) > 0; s += n, col++) {
        if (row < 0 || row >= c->rows || col < 0 || col >= c->cols)
            continue;
        Cell *cell = &c->cells[(size_t)row * c->cols + col];
        cell->glyph = cp;
        cell->ink = (uint8_t)ink;
        written++;
    }
    return written;
}

int Canvas_text_width(const Canvas *c, const char *utf8)
{
    char buf[512];
    return Ascii_columns(spelled(c, utf8, buf, sizeof buf));
}

bool Canvas_room_for_text(const Canvas *c, int col, int row, int cells)
{
    if (row < 0 || row >= c->rows || col < 0 || cells < 0 || col + cells > c->cols)
        return false;
    for (int i = 0; i < cells; i++) {
        const Cell *cell = &c->cells[(size_t)row * c->cols + col + i];
        if (cell->glyph || (!c->unicode && cell->dots))
            return false;
    }
    return true;
}

uint8_t Canvas_dots(const Canvas *c, int col, int row)
{
    return c->cells[(size_t)row * c->cols + col].dots;
}

Ink Canvas_cell(const Canvas *c, int col, int row, char *out)
{
    const Cell *cell = &c->cells[(size_t)row * c->cols + col];
    if (cell->glyph) {
        Ascii_encode(cell->glyph, out);
    } else if (cell->dots == 0) {
        out[0] = ' ';
        out[1] = '\0';
    } else if (c->unicode) {
        Ascii_encode(0x2800u + cell->dots, out);
    } else {
        bool upper = cell->dots & UPPER_HALF, lower = cell->dots & LOWER_HALF;
        out[0] = upper && lower ? ':' : upper ? '\'' : '.';
        out[1] = '\0';
    }
    return (Ink)cell->ink;
}
