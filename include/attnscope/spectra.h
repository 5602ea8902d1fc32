/* Eigenvalues and singular values of the attention matrix shown (docs/model.md §2).
 *
 * Dense QR cannot resolve the eigenvalues of non-normal triangular matrices (errors up to
 * 0.3), so the structure decides: a lower-triangular matrix gives its diagonal exactly; the
 * `uniform` and `deflate` gap modes use Brauer's theorem (the spectrum of A with one
 * eigenvalue 1 replaced by 0); everything else goes to LAPACK's dgeev.
 */
#ifndef ATTNSCOPE_SPECTRA_H
#define ATTNSCOPE_SPECTRA_H

#include "attnscope/config.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"

#include <stdbool.h>

/* Eigenvalues of the row-major T×T matrix a (destroyed), by descending modulus; *exact is
   set when they were read off the diagonal.  re_im needs 2T doubles. */
int Spectra_eigenvalues(int T, double *a, Linalg *la, double *re_im, Complex *out, bool *exact);

/* Whether c's attention matrix, before any gap removal, is lower-triangular by construction
   (a causal mask, or the identity). */
bool Spectra_attention_triangular(const Config *c);

/* Whether the shown eigenvalues come from the matrix before the gap removal (Brauer's
   theorem: `applied` is uniform or deflate on rows that sum to one). */
bool Spectra_brauer(const Config *c, Gap applied);

/* Whether Spectra_eigenvalues reads the shown eigenvalues off a diagonal for the matrices a run
   of c builds under the gap mode `applied` (else it runs dgeev): the matrix it is given is
   triangular by construction.  What a run's matrices really are is checked on every call;
   the tests check this rule against the calls a run makes, for every kind, mask and gap mode,
   so the cost model prices what the spectra code does.  By chance a matrix may be triangular
   where the rule expects none (a small sparse relu matrix in a narrow causal window whose
   removed outlier is one entry): the run is then cheaper than priced. */
bool Spectra_from_diagonal(const Config *c, Gap applied);

/* Brauer: replaces the eigenvalue nearest 1 by 0 and re-sorts. */
void Spectra_brauer_deflate(int T, Complex *eigenvalues);

/* An eigenvalue stands apart from the bulk when its modulus is at least OUTLIER_SEPARATION times
   the bulk radius |λ2| (docs/model.md §2): it lies farther beyond the bulk's edge than the
   bulk is wide.  Softmax and markov (λ1 = 1, bulk ≈ σ/√T), relu and sigmoid pass by far; the
   window masks (|λ2| ≈ 1), linear attention (a disk), identity (all 1) and any removed gap
   do not. */
#define OUTLIER_SEPARATION 2.0

/* The index of the outlier in eigenvalues sorted by descending modulus (0), or -1 when none
   stands apart. */
int Spectra_outlier(int T, const Complex *eigenvalues);

/* Sorts by descending modulus (ties: larger real part, then larger imaginary part first). */
void Spectra_sort(int T, Complex *eigenvalues);

/* Fills out->eigenvalues, out->singular_values and out->eigenvalues_exact for the shown
   layer.  before_gap and applied are row-major T×T (both destroyed); scratch holds T×T.
   The three steps it takes, for a caller that runs the last two at once: */
int Spectra_of_shown_layer(const Config *c, Gap applied_gap, double *before_gap, double *applied,
                           Linalg *la, double *scratch, Result *out);

/* Readies before_gap for the eigenvalues: the matrix before the gap removal when Brauer's
   theorem gives the spectrum from it (returns true), else a copy of applied.  May add a
   warning to out.  Call it before the two below, which then touch disjoint memory. */
bool Spectra_prepare_shown_layer(const Config *c, Gap applied_gap, double *before_gap,
                                 const double *applied, Result *out);
/* out->eigenvalues and out->eigenvalues_exact from before_gap (destroyed). */
int Spectra_shown_eigenvalues(int T, bool brauer, double *before_gap, Linalg *la, double *scratch,
                              Result *out);
/* out->singular_values from applied (destroyed). */
int Spectra_shown_singular_values(int T, double *applied, Linalg *la, Result *out);

#endif
