/* The SVG renderer of the screen's panels: each file draws the description the screen's
 * canvas draws (figure.h) — the same points, marks, outlier rule, tick steps and legend —
 * in a 640-pixel-wide picture with a title and the run's settings as its subtitle.
 */
#ifndef ATTNSCOPE_COMMON_SVG_H
#define ATTNSCOPE_COMMON_SVG_H

#include "attnscope/model.h"

#include <stdio.h>

/* The shown layer's eigenvalues and singular values (no points until its layer is done), and
   the stable rank of both networks against depth. */
void Svg_eigenvalues(FILE *f, const Result *r);
void Svg_singular_values(FILE *f, const Result *r);
void Svg_stable_rank(FILE *f, const Result *r);
/* The attention map of the shown layer (or the product, with its column mass under it), as
   figure.h describes it, at most 104 cells a side. */
void Svg_attention_map(FILE *f, const Result *r);
/* The entropy view's main panel (Figure_entropy_plot, overlays and notes on). */
void Svg_entropy(FILE *f, const Result *r);

#endif
