/* Export of what is on the screen: CSV files with column names and one hand-written SVG per
 * plot, into a directory of their own.  The set is written into a fresh directory beside it
 * and swapped in with one rename, so the directory holds a whole set at every moment and a
 * failed export changes nothing.
 */
#ifndef ATTNSCOPE_COMMON_EXPORT_H
#define ATTNSCOPE_COMMON_EXPORT_H

#include "attnscope/model.h"

#include <stddef.h>

enum { EXPORT_CURVES_MAX = 16 };

/* The data to export, from a Result or from what the screen holds.  Per-layer curves have
   depth + 1 values (ℓ = 0..depth), NaN where undefined (written as empty CSV fields). */
typedef struct {
    const Config *config;
    double sigma;
    const Complex *eigenvalues;    /* config->tokens values, or NULL */
    const double *singular_values; /* config->tokens values, descending, or NULL */
    int curve_count;
    const char *curve_names[EXPORT_CURVES_MAX];
    const double *curves[EXPORT_CURVES_MAX];
    int stable_rank_curve;             /* index of sr(Σ_ℓ) among the curves, or -1 */
    int counterpart_stable_rank_curve; /* index of the counterpart's, or -1 */
} ExportData;

/* Fills d with every per-layer quantity of r. */
void Export_from_result(ExportData *d, const Result *r);

/* "attnscope-YYYYmmdd-HHMMSS" for now, into buf. */
const char *Export_default_directory(char *buf, size_t size);

/* Writes eigenvalues.csv, singular_values.csv, layers.csv, eigenvalues.svg,
   singular_values.svg and stable_rank.svg as the directory dir, creating its missing parents
   (as mkdir -p).  Files get 0666 and new directories 0777, less the umask; a replaced dir
   keeps its mode.  An existing dir is replaced as a whole (atomically where the file system
   can exchange two names), so it must be empty or hold only an earlier export's files:
   anything else in it is refused, never moved or deleted.  Returns the number of files
   written, or -1 with the reason in err (not naming dir) and nothing changed. */
int Export_write(const ExportData *d, const char *dir, char *err, size_t size);

#endif
