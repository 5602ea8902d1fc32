/* What a mark of a plot shows, by meaning, and how its lines are stroked: the screen's canvas
 * and the SVG writer each pick a colour (or none) and a dash for each.
 */
#ifndef ATTNSCOPE_COMMON_INK_H
#define ATTNSCOPE_COMMON_INK_H

typedef enum {
    INK_DEFAULT,
    INK_AXIS,
    INK_BULK,
    INK_OUTLIER,
    INK_THEORY,
    INK_GHOST,
    INK_HIGHLIGHT,
    /* The attention map's shades 1..9, lightest first (shade 0, exactly 0, is blank): the
       glyph says the shade too, so a terminal without colour loses nothing. */
    INK_SHADE_1,
    INK_SHADE_2,
    INK_SHADE_3,
    INK_SHADE_4,
    INK_SHADE_5,
    INK_SHADE_6,
    INK_SHADE_7,
    INK_SHADE_8,
    INK_SHADE_9,
    INK_COUNT
} Ink;

/* The styles differ in shape, not only in colour. */
typedef enum { STROKE_SOLID, STROKE_DASHED, STROKE_DOTTED } Stroke;

#endif
