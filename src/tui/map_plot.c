/* The attention map panel (plot.h): the kept block means coarsened to the canvas, two
 * columns a cell so that a cell is about square, a shade glyph (and its colour) per cell;
 * under it, with the product, the column mass against position on the same columns.
 */
#include "plot.h"

#include <stdio.h>
#include <string.h>

/* Where the parts of the panel go, in cells. */
typedef struct {
    int margin;     /* columns left of the map: row labels, the mass's scale */
    int top;        /* the map's first row */
    int cells;      /* the map's cells a side (each 1 row, 2 columns) */
    int mass_top;   /* the column mass's first plot row (product) */
    int mass_rows;  /* its plot rows, 0 without the product */
    bool side;      /* the legend right of the map, a phrase a line; else two rows under all */
    int legend_row; /* its first row */
    int legend_col;
} MapLayout;

/* The side legend's width: its longest phrase. */
enum { SIDE_LEGEND_COLS = 30 };

/* The map's cells a side within `rows` rows and `cols` columns. */
static int fitting_cells(int rows, int cols)
{
    return rows < cols / 2 ? rows : cols / 2;
}

/* The map gets the rows left after the title, its key axis and the line under it (with the
   product, a fifth of the panel, at least 3 rows, and its label), and the columns left of
   the legend when the legend goes beside it, which it does where that makes the map larger.
   Returns false when the map would be smaller than 2×2 cells. */
static bool map_layout(const Canvas *c, const AttentionMapPlot *p, int title_rows, MapLayout *l)
{
    int cols = Canvas_cols(c), rows = Canvas_rows(c);
    char label[16];
    l->margin = snprintf(label, sizeof label, "%d", p->tokens) + 1;
    if (p->product && l->margin < 7)
        l->margin = 7; /* "0.97" and "0" of the mass's scale, a blank */
    l->top = title_rows;
    l->mass_rows = p->product ? (rows / 5 < 3 ? 3 : rows / 5) : 0;
    int under = 1 + (p->product ? 1 + l->mass_rows : 1); /* key axis, then line or hint */
    int beside = fitting_cells(rows - l->top - under, cols - l->margin - SIDE_LEGEND_COLS - 2);
    int below = fitting_cells(rows - l->top - under - 2, cols - l->margin);
    l->side = beside >= below;
    l->cells = l->side ? beside : below;
    l->legend_row = l->side ? l->top : rows - 2;
    return l->cells >= 2;
}

/* The places that follow from the cells the map is drawn with (a coarser block may leave
   fewer than fit): the legend beside it, the line under it down to the legend. */
static void map_place(const Canvas *c, MapLayout *l, int cells)
{
    l->cells = cells;
    l->legend_col = l->side ? l->margin + 2 * cells + 2 : 0;
    l->mass_top = l->top + cells + 2;
    if (l->mass_rows)
        l->mass_rows = (l->side ? Canvas_rows(c) : l->legend_row) - l->mass_top;
}

static void right_aligned(Canvas *c, int end_col, int row, const char *text)
{
    int col = end_col - Canvas_text_width(c, text);
    Canvas_text(c, col < 0 ? 0 : col, row, text, INK_AXIS);
}

static void draw_cells(Canvas *c, const MapLayout *l, const AttentionMap *m, double top)
{
    for (int r = 0; r < m->cells; r++)
        for (int k = 0; k < m->cells; k++) {
            int shade = Figure_shade(m->mean[(size_t)r * m->cells + k], top);
            if (!shade)
                continue;
            char glyph[3] = {FIGURE_SHADE_GLYPHS[shade], FIGURE_SHADE_GLYPHS[shade], '\0'};
            Canvas_text(c, l->margin + 2 * k, l->top + r, glyph, (Ink)(INK_SHADE_1 + shade - 1));
        }
    char label[16];
    right_aligned(c, l->margin - 1, l->top, "1");
    snprintf(label, sizeof label, "%d", m->tokens);
    right_aligned(c, l->margin - 1, l->top + m->cells - 1, label);
    int axis = l->top + m->cells;
    Canvas_text(c, l->margin, axis, "1", INK_AXIS);
    right_aligned(c, l->margin + 2 * m->cells, axis, label);
    Canvas_text(c, l->margin + 2, axis, "key j ->", INK_AXIS);
}

/* The column mass against position, token j at the dot column of its key on the map. */
static void draw_mass(Canvas *c, const MapLayout *l, const AttentionMapPlot *p, int cells)
{
    Canvas_text(c, l->margin, l->mass_top - 1, p->mass_label, INK_DEFAULT);
    double peak = 0;
    for (int j = 0; j < p->tokens; j++)
        peak = p->column_mass[j] > peak ? p->column_mass[j] : peak;
    if (!(peak > 0))
        return;
    char label[16];
    Figure_number(label, sizeof label, "%.2g", peak, FIGURE_MISSING);
    right_aligned(c, l->margin - 1, l->mass_top, label);
    right_aligned(c, l->margin - 1, l->mass_top + l->mass_rows - 1, "0");
    int dots_across = 4 * cells, dots_down = 4 * l->mass_rows;
    int last_x = -1, last_y = -1;
    for (int j = 0; j < p->tokens; j++) {
        int x = 2 * l->margin + (int)((j + 0.5) * dots_across / p->tokens);
        int y = 4 * l->mass_top + dots_down - 1 -
                (int)(p->column_mass[j] / peak * (dots_down - 1) + 0.5);
        if (last_x >= 0)
            Canvas_line(c, last_x, last_y, x, y, INK_BULK, STROKE_SOLID);
        else
            Canvas_dot(c, x, y, INK_BULK);
        last_x = x;
        last_y = y;
    }
}

/* The shade scale (each glyph in its ink), then the legend's phrases: a line each beside the
   map, or joined on two rows under it. */
static void draw_legend(Canvas *c, const MapLayout *l, const AttentionMap *drawn, double top)
{
    int row = l->legend_row;
    int col = l->legend_col + Canvas_text(c, l->legend_col, row, "shades ", INK_DEFAULT);
    for (int shade = 1; shade < FIGURE_SHADES; shade++) {
        char glyph[2] = {FIGURE_SHADE_GLYPHS[shade], '\0'};
        col += Canvas_text(c, col, row, glyph, (Ink)(INK_SHADE_1 + shade - 1));
    }
    char phrase[FIGURE_MAP_PHRASES][FIGURE_MAP_PHRASE_SIZE];
    Figure_map_legend(top, drawn, phrase);
    if (l->side) {
        for (int i = 0; i < FIGURE_MAP_PHRASES; i++)
            Canvas_text(c, l->legend_col, row + 1 + i, phrase[i], INK_DEFAULT);
        return;
    }
    char line[2 * FIGURE_MAP_PHRASE_SIZE + 8];
    snprintf(line, sizeof line, " %s, %s", phrase[0], phrase[1]);
    Canvas_text(c, col, row, line, INK_DEFAULT);
    snprintf(line, sizeof line, "%s, %s; ", phrase[2], phrase[3]);
    col = Canvas_text(c, 0, row + 1, line, INK_DEFAULT);
    Canvas_text(c, col, row + 1, phrase[4], INK_DEFAULT);
}

void Plot_attention_map(Canvas *c, const AttentionMapPlot *p)
{
    if (p->message) {
        Plot_message(c, p->title, p->message);
        return;
    }
    int title_rows = Plot_title(c, p->title);
    MapLayout l;
    AttentionMap drawn = {0};
    if (!map_layout(c, p, title_rows, &l)) {
        Plot_message(c, p->title, "too small for the map: z zooms it");
        return;
    }
    if (AttentionMap_coarsen(p->map, Figure_map_factor(p->map, l.cells), &drawn)) {
        Plot_message(c, p->title, "out of memory for the map");
        return;
    }
    map_place(c, &l, drawn.cells);
    double top = Figure_map_top(&drawn);
    draw_cells(c, &l, &drawn, top);
    if (p->product)
        draw_mass(c, &l, p, drawn.cells);
    else
        Canvas_text(c, l.margin, l.top + drawn.cells + 1, p->hint, INK_DEFAULT);
    draw_legend(c, &l, &drawn, top);
    AttentionMap_release(&drawn);
}
