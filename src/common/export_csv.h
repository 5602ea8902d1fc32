/* The CSV files of an export, which export.c writes into its staging directory: each opens
 * with two comment lines, the version and what the file holds, then every setting as the
 * command line spells it (with --weights and --token-ids where the run had them), then the
 * column names and the rows; an undefined value is an empty field, a number its shortest
 * round-trip form, as in the JSON document.  Export_layers_csv and Export_conditioning_csv
 * (export.h) are written here too.
 */
#ifndef ATTNSCOPE_COMMON_EXPORT_CSV_H
#define ATTNSCOPE_COMMON_EXPORT_CSV_H

#include "export.h"

#include <stdbool.h>
#include <stdio.h>

/* The shown layer's eigenvalues and singular values (no rows until its layer is done). */
void ExportCsv_eigenvalues(FILE *f, const Result *r);
void ExportCsv_singular_values(FILE *f, const Result *r);
/* The eigenvalues of one half of the compare view (Figure_compare_eigenvalues): of the network
   without (removed false) or with gap removal, r's own or toggled's, under the settings of the
   network they are (the toggled one's: Cost_compare_config, run to the shown layer); no rows
   where they are not there. */
void ExportCsv_compare_eigenvalues(FILE *f, const Result *r, const ToggledNetwork *toggled,
                                   bool removed);
/* The numbers the views' panels plot (figure_series.h): the width sweep's sr − 1 against T,
   the gradient norms' log10 and the token similarity against depth, the shown matrix's row
   entropies by row (none where undefined), the singular values the conditioning view's
   histogram draws (none where it says why instead). */
void ExportCsv_width_sweep(FILE *f, const Result *r, const WidthSweep *w);
void ExportCsv_gradient(FILE *f, const Result *r);
void ExportCsv_token_similarity(FILE *f, const Result *r);
void ExportCsv_row_entropies(FILE *f, const Result *r);
void ExportCsv_conditioning_singular_values(FILE *f, const Conditioning *k);

/* Whether stop's hook asks to stop (a zeroed stop: never). */
bool Export_stop_requested(LinalgStop stop);
/* The matrices in full (--export-matrix), polling stop before each row: the shown layer's A
   kept in full or (product) A_ℓ⋯A_1, and the input X0 (T×d, input).  False: stopped, the
   file cut short. */
bool ExportCsv_matrix(FILE *f, const Result *r, bool product, LinalgStop stop);
bool ExportCsv_input(FILE *f, const Result *r, const double *input, LinalgStop stop);

#endif
