/* What a panel shows, decided once (htop's Meter: one set of values, several renderings): the
 * points, which of them is marked apart and how, the outlier rule, the ticks, the legend and
 * the settings line.  The screen's canvas (src/tui/plot.c) and the SVG writer
 * (src/common/svg.c) both draw these descriptions, so an export cannot disagree with the
 * screen; figure_series.h describes the other views' panels the same way.  Nothing here knows
 * a terminal, a cell or a pixel.
 */
#ifndef ATTNSCOPE_COMMON_FIGURE_H
#define ATTNSCOPE_COMMON_FIGURE_H

#include "attnscope/model.h"
#include "ink.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Legend samples drawn as dots are braille bits (bit 0..7 = dots 1..8): a horizontal stroke
   through the third dot row, one dot, a full cell, a dotted vertical line. */
enum {
    SAMPLE_STROKE = 0x04 | 0x20,
    SAMPLE_DOT = 0x04,
    SAMPLE_FULL = 0xFF,
    SAMPLE_VERTICAL_DOTS = 0x01 | 0x04
};

/* One legend entry: a sample of up to three cells (each a glyph or dots) and a text.  A
   sample of data points (point) is drawn as the renderer draws the points: the dots, or
   presentation mode's whole-cell glyph. */
typedef struct {
    struct {
        const char *glyph;
        uint8_t dots;
        bool point;
    } sample[3];
    int cells;
    Ink ink;
    char text[160];
} LegendItem;

enum { FIGURE_LEGEND_MAX = 8, FIGURE_TITLE_SIZE = 160 };

/* Eigenvalues λ of one attention matrix in the complex plane, drawn as √T·λ. */
typedef struct {
    const char *title;
    int count;
    const Complex *values; /* by descending modulus */
    double scale;          /* √T */
    double sigma;          /* radius of the circle of the bulk (NaN: not drawn) */
    bool exact;            /* read off a triangular matrix's diagonal */
    /* The theory overlay's predicted outlier λ1 of A (docs/model.md §3), drawn as its own glyph. */
    bool show_predicted;
    double predicted_outlier;
    /* The index of the eigenvalue that stands apart (Spectra_outlier), marked with its own
       glyph; -1: none, every value is drawn as the bulk. */
    int outlier;
    /* Gap removal sent a row-stochastic A's eigenvalue 1 to 0 (A − U annihilates 1): that
       eigenvalue is marked at 0 and named. */
    bool removed_to_zero;
} EigenvaluePlot;

/* Histogram of scale·s_i, i ≥ 2, with s1 marked apart and the quartercircle overlay. */
typedef struct {
    const char *title;
    int count;
    const double *values;     /* singular values, descending, not scaled */
    double scale;             /* √T */
    double sigma;             /* quartercircle on [0, 2σ] (NaN: no overlay) */
    const char *theory_label; /* what the overlay is ("quartercircle law", ...) */
    const char *value_name;   /* what scale·s is called on the axis; NULL: "√T·s" */
    /* Every value in the bars, none marked apart and no law: values with no first one of
       their own (the row entropies). */
    bool every_value;
} HistogramPlot;

/* Below this fraction of the largest value, a spread is round-off. */
#define FIGURE_NEGLIGIBLE 1e-3

/* What an eigenvalue panel shows, in units of √T·λ: the view is the square
   [−range, range]² (each renderer may show more along its longer side). */
typedef struct {
    bool marked;                  /* values[outlier] is drawn apart, with glyph */
    bool pinned;                  /* ... on the border, far beyond the view, in its direction */
    double re, im;                /* the marked outlier, √T·λ1 */
    double radius;                /* its |√T·λ| */
    const char *glyph;            /* ◆, or an arrow towards it when pinned */
    const char *side;             /* the border the arrow is on: right, left, top, bottom */
    bool sigma_known, sigma_fits; /* the circle |z| = σ: named, and drawn */
    bool predicted;               /* the predicted λ1 drawn as ◇ on the real axis */
    double predicted_at;          /* its √T·λ1 */
    double range;
    int legend_count;
    LegendItem legend[FIGURE_LEGEND_MAX];
} EigenvalueFigure;

void Figure_eigenvalues(const EigenvaluePlot *p, EigenvalueFigure *f);
/* For a text that points at the outlier (the tour's note) while it is pinned: the outlier
   with its value and where its arrow is ("λ1 = 1 (off scale: the arrow ▸ at the right
   border)."), in out; "" where it lies on screen. */
void Figure_pinned_outlier(const EigenvaluePlot *p, const EigenvalueFigure *f, char *out,
                           size_t size);
/* Where a renderer whose view reaches ±x_half along Re and ±y_half along Im draws the marked
   outlier (on the border in its direction when pinned) and the predicted λ1 (kept inside the
   border when it lies beyond it). */
void Figure_place(const EigenvalueFigure *f, double x_half, double y_half, double *re, double *im,
                  double *predicted);

/* What a histogram panel shows, in units of scale·s: bins over [0, range), s1 marked apart. */
typedef struct {
    double s1, s2;
    bool outlier; /* s1 stands apart (the outlier rule of the eigenvalues, on s1 and s2) */
    bool theory;  /* the quartercircle's expected counts drawn */
    bool pinned;  /* s1 far beyond the bulk: drawn on the right border as ▸ */
    const char *glyph;
    double range;
    const char *name; /* the axis: "√T·s" or the plot's value_name */
    int legend_count;
    LegendItem legend[FIGURE_LEGEND_MAX];
} HistogramFigure;

void Figure_histogram(const HistogramPlot *p, HistogramFigure *f);
/* The bins of scale·s_i, i ≥ 2 (s1 is marked apart) over [0, f->range): values beyond fall
   into the last bin.  expected (NULL: not wanted) gets the quartercircle's count per bin when
   f->theory, else 0.  Returns the largest count or expectation, at least 1. */
double Figure_histogram_bins(const HistogramPlot *p, const HistogramFigure *f, int bins,
                             int *counts, double *expected);

/* The plots of the shown matrix as the screen builds them from a result: titles into t1, t2
   (FIGURE_TITLE_SIZE), overlays as the screen's o key has them. */
void Figure_spectra(const Result *r, bool overlays, char *t1, char *t2, EigenvaluePlot *e,
                    HistogramPlot *h);
/* An eigenvalue panel of the matrix of config k with gap `applied` (the compare view's two). */
void Figure_eigenvalue_plot(const Config *k, const Complex *values, Gap applied, bool exact,
                            bool overlays, const char *title, EigenvaluePlot *e);

/* The compare view's second network: the run's weights with gap removal toggled, its shown
   layer's eigenvalues (NULL: not computed yet), the gap mode applied there and whether they
   are exact. */
typedef struct {
    const Complex *eigenvalues;
    Gap gap;
    bool exact;
} ToggledNetwork;

/* One half of the compare view: the eigenvalues of the network without (removed false) or with
   gap removal, r's own or the toggled one's, under the title the screen gives it (into title,
   FIGURE_TITLE_SIZE), and that network's config into *config (NULL: not wanted; r's own, or
   Cost_compare_config's), set either way.  Returns false where that network's eigenvalues are
   not there yet (the toggled one computing, or r's shown layer not done): e is then unset. */
bool Figure_compare_eigenvalues(const Result *r, const ToggledNetwork *toggled, bool removed,
                                bool overlays, char *title, EigenvaluePlot *e, Config *config);

/* Stable rank against depth on a log axis, with the counterpart network as a ghost. */
typedef struct {
    const char *title;
    int depth;
    const double *network;     /* ℓ = 0..depth, NaN where not known */
    const double *counterpart; /* same, gap removal toggled */
    const char *network_label;
    const char *counterpart_label;
    double top;      /* the largest stable rank possible (T) */
    int shown_layer; /* highlighted */
    /* Theory overlay (NULL: off): the predicted curves, NaN where none applies; when both
       are all NaN the note says why instead. */
    const double *theory, *counterpart_theory;
    const char *theory_note;
    /* The first layer where each curve left [1, T] and is not drawn (0: none;
       TheoryOutOfRange), which the legend names. */
    int theory_out_of_range, counterpart_theory_out_of_range;
    /* Ensemble (NULL or seeds < 2: none): the curves above are then the means, and the
       network's ±1 std band is drawn around its mean. */
    const double *band_std, *counterpart_band_std;
    int seeds;
    /* Layers ℓ = 1..depth that --window-layers gives the window mask, marked ▾ at the top of
       the frame, the others global (NULL: no pattern mixes the two, nothing marked). */
    const bool *local;
    const char *local_label; /* the legend's words for the marks */
} StableRankPlot;

/* Which network a stable-rank panel puts first: the settings' (the counterpart is the other),
   or (the compare view's halves) the one without or with gap removal. */
typedef enum { FIRST_NETWORK, FIRST_GAP_OFF, FIRST_GAP_REMOVED } StableRankFirst;

/* What a stable-rank plot points into: the theory's curves and the texts. */
typedef struct {
    double theory[CONFIG_DEPTH_MAX + 1], theory_other[CONFIG_DEPTH_MAX + 1];
    bool local[CONFIG_DEPTH_MAX + 1];
    char title[FIGURE_TITLE_SIZE], label[64], other[64], local_label[96];
} StableRankText;

/* The stable-rank plot of a result as the screen builds it: seed 1 alone until a second seed
   is done, then the mean and band of the seeds done so far; the theory when overlays. */
void Figure_stable_rank_plot(const Result *r, bool overlays, StableRankFirst first,
                             StableRankText *text, StableRankPlot *p);

/* The mark of the eigenvalue gap removal sent from 1 to 0: a glyph of its own, where ○ (the
   counterpart's) would read in ASCII as the unit circle's ∘ ("o" both). */
#define FIGURE_REMOVED_GLYPH "◎"

/* Where the network's ● lands on a cell that holds the counterpart's ○ (the two curves meet
   on the grid, as the causal mask's with the gap removed and not do), this shows both, and
   the legend says so: the ● alone would hide the ○ that the legend names. */
#define FIGURE_BOTH_GLYPH "◉"

/* The glyph of a window layer's mark on the stable-rank panel. */
#define FIGURE_LOCAL_GLYPH "▾"

/* What a stable-rank panel shows besides its curves: which are drawn, and the legend (the
   theory's note at legend[note], -1: none; the window layers' marks before the shown layer's
   entry, which is last). */
typedef struct {
    bool network, counterpart, ensemble, theory, counterpart_theory;
    int note;
    int legend_count;
    LegendItem legend[FIGURE_LEGEND_MAX];
} StableRankFigure;

void Figure_stable_rank(const StableRankPlot *p, StableRankFigure *f);

/* The attention map (docs/model.md §2): block means of the shown layer's A, or of the product
   A_ℓ⋯A_1, as shades on a log scale below the drawn map's largest |value| (FIGURE_SHADES
   steps, ' ' exactly 0: a masked block), the block said; with the product, its column mass
   against position as a line under it. */
enum { FIGURE_SHADES = 10 };
#define FIGURE_SHADE_GLYPHS " .:-=+*#%@"
/* The shades 1..9 span this many decades below the largest value (3/8 of one a step). */
#define FIGURE_SHADE_DECADES 3.0

typedef struct {
    char title[FIGURE_TITLE_SIZE];
    const char *message;       /* said instead of a map (NULL: the map is there) */
    const AttentionMap *map;   /* as kept (at most ATTENTION_MAP_CELLS a side) */
    bool product;              /* the map is of A_ℓ⋯A_1 */
    const double *column_mass; /* the product's, T values; NULL without the product */
    int tokens;
    char mass_label[FIGURE_TITLE_SIZE]; /* what the line under the map is, its peak */
    const char *hint;                   /* a line under the map without the product */
} AttentionMapPlot;

void Figure_attention_map(const Result *r, AttentionMapPlot *p);
/* The smallest k that coarsens m to at most `cells` cells a side (AttentionMap_coarsen). */
int Figure_map_factor(const AttentionMap *m, int cells);
/* The largest |mean| of m (0 for an empty or all-zero map). */
double Figure_map_top(const AttentionMap *m);
/* The shade 0..FIGURE_SHADES − 1 of value against top: 0 for 0, else 1 + the 3/8-decade steps
   above top·10^−3 (values at or below it 1, top itself the last). */
int Figure_shade(double value, double top);
/* The legend of a map drawn at `drawn`'s block with shades up to top, as phrases a renderer
   puts on one line each or joins: the scale's top, its bottom and blank, the block, the
   cells, what rows and columns are. */
enum { FIGURE_MAP_PHRASES = 5, FIGURE_MAP_PHRASE_SIZE = 64 };
void Figure_map_legend(double top, const AttentionMap *drawn,
                       char phrase[FIGURE_MAP_PHRASES][FIGURE_MAP_PHRASE_SIZE]);

/* How an axis maps values: as they are, log10 of positive values, or values that are
   already log10 (a curve whose values overflow a double). */
typedef enum { SCALE_LINEAR, SCALE_LOG, SCALE_LOG10_GIVEN } Scale;

/* One curve of a SeriesPlot: points (x[i], y[i]); NaN (and non-positive values on a log
   scale) leave gaps. */
typedef struct {
    const char *label;
    int count;
    const double *x, *y;
    Ink ink;
    Stroke stroke;
    const char *marker; /* drawn on the points, NULL: none */
    /* What the legend says after the label where no point is drawn: why the values are absent
       ("∞ (singular)" where they are infinite), NULL: "(n/a)". */
    const char *absent;
} Series;

enum { SERIES_MAX = 6, SERIES_NOTES_MAX = 3 };

/* Curves on shared axes (the width sweep, gradient norms, token similarity, entropy). */
typedef struct {
    const char *title;
    int count;
    Series series[SERIES_MAX];
    Scale x_scale, y_scale;
    int notes;
    const char *note[SERIES_NOTES_MAX]; /* legend lines without a sample */
    const char *empty;                  /* said in the middle when no series has a point */
    const char *x_name;                 /* the x axis's name ("layer"), NULL: none */
    bool x_whole;                       /* x ticks on whole numbers only (layers) */
    bool x_span_all; /* the x axis spans every x, null values or not (layers: nulls are gaps) */
} SeriesPlot;

/* v on the scale's axis: log10 of a positive v on a log scale (NaN otherwise), v as it is
   on the others; NaN for a NaN or infinite v. */
double Figure_scaled(Scale s, double v);
/* The least and largest scaled value of every finite point, along x or y (+inf, -inf: none). */
void Figure_series_range(const SeriesPlot *p, bool along_x, double *lo, double *hi);
/* The legend of a series plot: a sample and the label of each series ("(n/a)" after one
   without points), then the notes.  *any: some series has a point.  Returns the count, at
   most SERIES_MAX + SERIES_NOTES_MAX. */
int Figure_series_legend(const SeriesPlot *p, LegendItem *items, bool *any);

/* The entropy view (docs/model.md §2, §3): each layer's mean row entropy of both networks,
   the least row's with Zhai et al.'s bound under it, the ceiling ln n (the mean over rows of
   ln n_i under each layer's mask, ln T where every mask is full) and, at layer 1, the
   random-energy prediction with the
   domain it holds on; the theory only with overlays.  What the plot points into: */
typedef struct {
    double layers[CONFIG_DEPTH_MAX + 1], ceiling[CONFIG_DEPTH_MAX + 1], prediction[1];
    char title[FIGURE_TITLE_SIZE], network[64], counterpart[64], least[64], ceiling_label[64],
        bound[80], prediction_label[96], notes[SERIES_NOTES_MAX][160];
} EntropyText;

/* notes: the lines under the legend (the domain, the nulls, the phase), where there is room. */
void Figure_entropy_plot(const Result *r, bool overlays, bool notes, EntropyText *text,
                         SeriesPlot *p);

/* The histogram of the shown matrix's row entropies H_i (descending into sorted, T values;
   the largest is drawn as the histogram's marked value); its count is 0 where they are
   undefined, not computed yet, or null for round-off, which the returned text says (NULL in
   the other cases). */
const char *Figure_row_entropy_plot(const Result *r, char *title, double *sorted, HistogramPlot *h);
#define FIGURE_ROWS_ROUND_OFF                                                                      \
    "null: at this layer the rows' entropies are round-off (a warning says why; docs/model.md "    \
    "§2)"

/* 1, 2 or 5 times a power of ten, at least `raw`. */
double Figure_nice_step(double raw);
/* Ticks at the multiples of a nice step of about (hi − lo)/wanted inside [lo, hi], ascending,
   at most max; whole numbers only when `whole` (an axis of layers has no layer 0.2).
   Returns how many, and the step in *step. */
int Figure_ticks(double lo, double hi, int wanted, bool whole, double *out, int max, double *step);
/* A tick's label; what is left of 0 after stepping there prints as 0. */
void Figure_tick_label(double v, double step, char *out, size_t size);
/* Ticks on a log axis whose plotted units are exponents, inside [lo, hi], ascending: powers
   of ten, every k-th for about `wanted`; across less than two decades also 2 and 5 times them,
   so a short axis still has labels.  Returns how many (at most max). */
int Figure_log_ticks(double lo, double hi, int wanted, double *out, int max);
/* 10^v as a log axis's tick label; far exponents as "1e400", which a double could not hold. */
void Figure_log_label(double v, char *out, size_t size);
enum { FIGURE_TICK_LABEL_SIZE = 32 };
/* The ticks of a log axis over exponents [lo, hi], at (exponents, ascending) and labelled:
   Figure_log_ticks' powers; across so little of a decade that it has fewer than two of those,
   the linear steps of its values (Figure_ticks) at their logarithms, labelled to the step's
   digits (5.0125e7 where %g cuts; exponents without + or leading zeros), so that every axis
   can be read.  Returns how many. */
int Figure_log_axis_ticks(double lo, double hi, int wanted, double *at,
                          char (*labels)[FIGURE_TICK_LABEL_SIZE], int max);
/* A value as a readout prints it: v with format (one double conversion), or `missing` where v
   is NaN or infinite, which the JSON writes as null: "nan" or "inf" on a screen would claim a
   number the document does not have.  Returns out. */
const char *Figure_number(char *out, size_t size, const char *format, double v,
                          const char *missing);
/* The word Figure_number's callers print for a missing value, unless theirs names it. */
#define FIGURE_MISSING "n/a"

/* Every setting as the command line spells it, those away from their defaults after T, d and
   the depth, from the settings table: the line that reproduces the run, in every exported
   file's header and every SVG's subtitle. */
void Figure_settings(const Config *c, char *buf, size_t size);

#endif
