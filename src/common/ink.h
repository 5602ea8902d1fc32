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
    INK_COUNT
} Ink;

/* The styles differ in shape, not only in colour. */
typedef enum { STROKE_SOLID, STROKE_DASHED, STROKE_DOTTED } Stroke;

#endif
