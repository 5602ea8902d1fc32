/* Export of what is on the screen: CSV files with column names and one hand-written SVG per
 * plot, into a directory of their own.  The set is written into a fresh directory beside it
 * and swapped in with one rename, so the directory holds a whole set at every moment and a
 * failed export changes nothing.
 */
#ifndef ATTNSCOPE_COMMON_EXPORT_H
#define ATTNSCOPE_COMMON_EXPORT_H

#include "attnscope/conditioning.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "attnscope/sweep.h"
#include "figure.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* layers.csv: two comment lines (the version, then every setting as the command line spells
   it), the column names, then one row per layer ℓ = 0..depth with every per-layer series;
   an undefined value is an empty field.  pandas reads it with comment='#'. */
void Export_layers_csv(FILE *f, const Result *r);

/* conditioning.csv: a comment line, the column names, then one row per layer ℓ = 1..depth with
   every series of CONDITIONING_SERIES for the network and (prefix counterpart_) its
   counterpart; an undefined value is an empty field. */
void Export_conditioning_csv(FILE *f, const Conditioning *k);

/* "attnscope-YYYYmmdd-HHMMSS" for now, into buf. */
const char *Export_default_directory(char *buf, size_t size);

/* What an export writes beside the files of every export: what the run computed beside the
   result, and the panels of the screen's view, each as the SVG the screen's panel is and the
   CSV of the numbers it plots.  A zeroed struct (or NULL): nothing beside. */
typedef struct {
    /* conditioning.csv (every series), conditioning.svg (κ against depth) and
       conditioning_singular_values.csv and .svg (K's, or B's at the shown layer) */
    const Conditioning *conditioning;
    const WidthSweep *sweep; /* width_sweep.csv and .svg (--sweep-T, the width sweep view) */
    bool gradient;           /* gradient.csv and .svg: the gradient view's panel */
    bool similarity;         /* token_similarity.csv and .svg: the token-similarity view's */
    /* row_entropies.csv and .svg: the entropy view's histogram of the shown matrix's row
       entropies (its curves against depth are every export's entropy.svg) */
    bool entropy;
    /* The compare view's second network, the run's weights with gap removal toggled (NULL:
       not the compare view, or not computed): both halves' eigenvalues, as
       eigenvalues_without_gap_removal.csv and .svg and eigenvalues_with_gap_removal.csv and
       .svg */
    const ToggledNetwork *toggled;
    /* The conditioning's compare view: the other initialisation's conditioning (NULL: none),
       as conditioning_INIT.csv, conditioning_INIT.svg, conditioning_singular_values_INIT.csv
       and .svg, INIT normal or cutting_skip (its init); both κ plots' titles then name their
       initialisation, as the view's panels do */
    const Conditioning *other_init;
    /* --export-matrix: the network's input X0 of r's run (Export_input of r's settings), and
       the matrices in full: attention_matrix.csv (the shown layer's A, which the result must
       keep in full: Workspace_full_attention_maps), where the result has the product,
       attention_product.csv, and input.csv with input's rows.  NULL: none of them. */
    const double *input;
} ExportExtras;

/* The views' files r holds, which batch writes beside every export's: the token similarity's
   always, the gradients' where docs/model.md §2's formula describes the run
   (Model_gradients_unavailable), the row entropies' where the shown matrix's are defined; the
   others left false in x (its other members untouched), and said in left_out as "NAME.csv and
   .svg, as WHY", joined by "; " ("" when none). */
void Export_result_views(const Result *r, ExportExtras *x, char *left_out, size_t size);

/* Writes eigenvalues.csv, singular_values.csv, layers.csv, eigenvalues.svg,
   singular_values.svg, stable_rank.svg, attention_map.svg and entropy.svg, then those of
   extras (NULL: none), as the directory dir, creating its missing parents (as mkdir -p).
   Files get 0666 and new directories 0777, less the umask; a replaced dir keeps its mode.  An
   existing dir is replaced as a whole (atomically where the file system can exchange two
   names), so it must be empty or hold only an earlier export's files: anything else in it is
   refused, never moved or deleted.  Returns the number of files written, or -1 with the reason
   in err (not naming dir) and nothing changed.  The hidden staging directory beside dir is
   removed whatever happens, and so are those a killed export left there; when SIGINT, SIGTERM
   or SIGHUP ends the process meanwhile, its handler empties and removes it before the signal
   ends the process as before (staging.h: for a process without handlers of its own for
   them, as batch; the screen's export is Export_write_stoppable). */
int Export_write(const Result *r, const ExportExtras *extras, const char *dir, char *err,
                 size_t size);

/* What Export_write_stoppable returns when its stop hook asked. */
enum { EXPORT_CANCELLED = -2 };

/* Export_write, cancellable: polls stop (a zeroed struct: never) between files, before each
   row of the matrices in full (--export-matrix: 2·T² numbers, seconds at T = 2048) and before
   the set is put in place.  When it asks, returns EXPORT_CANCELLED with err "cancelled" and
   nothing changed, as after a failure: the staging directory and the parents it made are
   removed, dir holds what it held.  A stop after the set is in place changes nothing: the
   export is whole. */
int Export_write_stoppable(const Result *r, const ExportExtras *extras, const char *dir,
                           LinalgStop stop, char *err, size_t size);

/* The network's input X0 of a run of c (T×d, entry (i, j) at x[i + j·T]) made again as the
   run made it: Layer_input for c's seed, from the weight source and token ids in use, its QR
   factorisation on la (NULL: a Linalg of its own), whose stop and isolation hooks it follows.
   X0 is not kept by the run, and at T = d = 2048 this takes about 0.8 s of a core
   (bench/README.md), so the screen's worker makes it, not the screen.  Returns the array,
   which the caller frees, or NULL with the reason in why. */
double *Export_input(const Config *c, Linalg *la, char *why, size_t size);

/* The checks Export_write makes of dir before it writes anything, for a caller that is about
   to compute what it will export: 0, or -1 with the reason in err (not naming dir). */
int Export_check(const char *dir, char *err, size_t size);

/* Whether path is the directory an export to dir replaces as a whole, or lies within it, once
   both are made (symbolic links of what exists followed): a caller that writes path before
   the export (--export-weights) must not. */
bool Export_holds(const char *dir, const char *path);

#endif
