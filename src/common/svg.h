/* The SVG renderer of the screen's panels: each file draws the description the screen's
 * canvas draws (figure.h) — the same points, marks, outlier rule, tick steps and legend —
 * in a 640-pixel-wide picture with a title and the run's settings as its subtitle.
 */
#ifndef ATTNSCOPE_COMMON_SVG_H
#define ATTNSCOPE_COMMON_SVG_H

#include "attnscope/conditioning.h"
#include "attnscope/model.h"
#include "attnscope/sweep.h"
#include "figure.h"

#include <stdio.h>

/* The shown layer's eigenvalues and singular values (no points until its layer is done), and
   the stable rank of both networks against depth. */
void Svg_eigenvalues(FILE *f, const Result *r);
/* One half of the compare view's eigenvalues (Figure_compare_eigenvalues, overlays on), under
   the settings of the network it is (ExportCsv_compare_eigenvalues). */
void Svg_compare_eigenvalues(FILE *f, const Result *r, const ToggledNetwork *toggled, bool removed);
void Svg_singular_values(FILE *f, const Result *r);
void Svg_stable_rank(FILE *f, const Result *r);
/* The attention map of the shown layer (or the product, with its column mass under it), as
   figure.h describes it, at most 104 cells a side. */
void Svg_attention_map(FILE *f, const Result *r);
/* The entropy view's main panel (Figure_entropy_plot, overlays and notes on). */
void Svg_entropy(FILE *f, const Result *r);
/* The entropy view's histogram of the shown matrix's row entropies (Figure_row_entropy_plot;
   where they are undefined, why). */
void Svg_row_entropies(FILE *f, const Result *r);
/* The gradient view's and the token-similarity view's panels (figure_series.h). */
void Svg_gradient(FILE *f, const Result *r);
void Svg_token_similarity(FILE *f, const Result *r);
/* The width sweep of c's shown layer, overlays on (a panel that says so when w is empty). */
void Svg_width_sweep(FILE *f, const Config *c, const WidthSweep *w);
/* The conditioning view's panels: κ against depth, and the singular values of K at the shown
   layer (or of B = W_VOᵀ ⊗ A; where neither is there, the screen's words instead); named:
   the κ plot's title names its initialisation, as the compare view's panels do. */
void Svg_conditioning(FILE *f, const Conditioning *k, bool named);
void Svg_conditioning_singular_values(FILE *f, const Conditioning *k);

#endif
