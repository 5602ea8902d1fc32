/* Measurements of a token matrix X (T×d, column-major; T > d too) for the depth curves. */
#ifndef ATTNSCOPE_MEASURE_H
#define ATTNSCOPE_MEASURE_H

#include "attnscope/linalg.h"

#include <stdbool.h>
#include <stddef.h>

/* How sr − 1 was computed (see Measure_tokens). */
typedef enum {
    MEASURE_ROUTE_NONE,            /* X is 0 or not finite: nothing was measured */
    MEASURE_ROUTE_TOP_EIGENPAIR,   /* Lanczos on the Gram matrix, accepted by its certificate */
    MEASURE_ROUTE_ALL_EIGENVALUES, /* every eigenvalue of the Gram matrix (dsyevd) */
    MEASURE_ROUTE_SINGULAR_VALUES, /* deep collapse: the singular values of X (dgesdd) */
    MEASURE_ROUTE_DEFLATED,        /* deep collapse above MEASURE_SVD_CHEAP: X without its top
                                      singular pair, and that rest's Gram matrix */
    MEASURE_ROUTE_FLAT_TOP,        /* above MEASURE_SVD_CHEAP, where the certificate
                                      cannot hold: λ1 by Lanczos within a Cholesky-proved
                                      interval */
    MEASURE_ROUTES
} MeasureRoute;

/* What the stable rank hides (docs/model.md §2): sr of the centred Gram matrix
   (X − 1x̄ᵀ)(X − 1x̄ᵀ)ᵀ, NaN when μ(X)/‖X‖_F is below the resolution (0/0); 1 − s_1²/‖X‖_F²;
   μ(X)/‖X‖_F; the mean cosine over pairs of distinct nonzero tokens (NaN with fewer than
   two); the RMS of the rows' norms ‖X‖_F/√T (with log_scale; NaN where it overflows). */
typedef struct {
    double centred_stable_rank, energy_off_top, relative_spread;
    double token_cosine_mean, token_rms;
} TokenGeometry;

typedef struct {
    double stable_rank;           /* sr(XXᵀ) = Σ s_i⁴ / s_1⁴ */
    double stable_rank_minus_one; /* Σ_{i≥2} (s_i/s_1)⁴, summed directly (no cancellation) */
    double log10_norm;            /* log10 ‖X‖_F (+ log_scale) */
    double log_similarity;        /* ln μ(X), μ(X) = ‖X − 1·x̄ᵀ‖_F (+ log_scale) */
    MeasureRoute route;           /* which computation gave the stable rank */
    TokenGeometry geometry;
} Measures;

/* μ(X)/‖X‖_F below which the token similarity is round-off (log_similarity is then NaN). */
#define MEASURE_SIMILARITY_RESOLUTION 1e-12
/* Whether tokens of spread Σ_i‖x_i − x̄‖² and Σ_i‖x_i‖² = squares are apart by more than
   MEASURE_SIMILARITY_RESOLUTION of their size: the token similarity and β_c's q − p hold only
   then. */
bool Measure_spread_resolved(double spread, double squares);
/* Whether X is apart from rank one by more than the same resolution: its energy off the top
   direction, e = Σ_{i≥2} s_i²/‖X‖_F² = ‖X − s1·u1v1ᵀ‖_F²/‖X‖_F², at least
   MEASURE_SIMILARITY_RESOLUTION² (docs/model.md §2: below it sr − 1 ≤ (e/(1 − e))² < 1e-48 and
   both are the tokens' rounding, tokens of one direction ±v as much as equal ones).  NaN (not
   measured): true, nothing is claimed. */
bool Measure_rank_one_resolved(double energy_off_top);
/* sr − 1 below which the Gram eigenvalues lose digits: the singular values of X decide. */
#define MEASURE_GRAM_FLOOR 1e-18
/* Lanczos steps of the top-eigenpair route at most: a run's budget is min(T, this). */
#define MEASURE_LANCZOS_STEPS 64
/* Relative error of sr − 1 (and so of sr) that the top-eigenpair route's certificate
   guarantees before rounding; a result it cannot certify is computed from all eigenvalues. */
#define MEASURE_TOP_EIGENPAIR_TOLERANCE 1e-11

/* T·d·min(T, d) up to which an SVD of a T×d matrix costs little beside the rest of a layer's
   measures: there the routes take LAPACK's singular values; above, routes without an SVD
   (the deflated stable rank below, the proved norm bounds of entropy.h). */
#define MEASURE_SVD_CHEAP (64.0 * 64 * 64)
bool Measure_svd_cheap(int T, int d);

/* Whether the centred Gram matrix P·XXᵀ·P (P = I − 11ᵀ/T) of X/‖X‖_F is taken from X's own
   computed Gram matrix (O(T²)) instead of formed from X − 1x̄ᵀ (T²d): above MEASURE_SVD_CHEAP,
   where the downdate's rounding bound, γ_d + (4γ_k + 12u)·‖Ĝ‖_F relative to ‖X‖_F² (k = ⌈log2 T⌉:
   the row means summed pairwise), is within
   the direct route's, γ_d·μ² + 2γ_T·μ + 4u·μ² (μ = relative_spread = ‖X − 1x̄ᵀ‖_F/‖X‖_F; the
   centring's own rounding included): tokens spread about their mean, whose Gram matrix is
   not dominated by one direction (docs/model.md §2). */
bool Measure_centred_by_downdate(int T, int d, double relative_spread, double gram_frobenius);

/* Σ_j Σ_i (x_ij − mean_j)² of T×d x, column by column (two passes, no cancellation where the
   tokens nearly merge), and Σ x_ij² into *squares unless NULL. */
double Measure_spread_squared(int T, int d, const double *x, double *squares);

/* Doubles of the Lanczos scratch of a T×T Gram matrix (Measure_norm2_squared_bound's). */
size_t Measure_lanczos_size(int T);

/* Doubles of the `lanczos` scratch Measure_tokens needs for T×d tokens: Lanczos's, the
   deflated route's top right singular vector, and the centred downdate's two T-vectors. */
size_t Measure_tokens_scratch_size(int T, int d);

/* Measures exp(log_scale)·X.  Works on X/‖X‖_F, so nothing overflows; all NaN when X is 0 or
   not finite; log_similarity alone is NaN when μ(X) is below the resolution.
   The stable rank comes from the top eigenpair of the Gram matrix when a certificate
   guarantees it, else (above MEASURE_SVD_CHEAP) from its top eigenvalue within a
   Cholesky-proved interval where that is as accurate as dsyevd guarantees, else from all its
   eigenvalues; where sr − 1 is below MEASURE_GRAM_FLOOR,
   from X itself: above MEASURE_SVD_CHEAP by deflation (X with the top singular pair that
   Lanczos found projected out on both sides, and the Gram matrix of the rest, docs/model.md
   §2), else (and without Lanczos's vector) from the singular values of X.  The centred stable
   rank by the same routes on X − 1x̄ᵀ, with a Gram matrix of its own.  lanczos = NULL skips
   the top-eigenpair route and so the flat and deflated ones (the reference the tests compare
   them with).
   Scratch: unit (T×d), gram (T×T), eig (T), lanczos (Measure_tokens_scratch_size(T, d)).
   Returns 0, a LAPACK failure, or LINALG_STOPPED when la's stop hook asked. */
int Measure_tokens(Linalg *la, int T, int d, const double *x, double log_scale, double *unit,
                   double *gram, double *eig, double *lanczos, Measures *m);

/* What Measure_tokens_sharing adds: a proved upper bound of ‖X‖₂² (of x, without log_scale)
   from the Gram matrix the stable rank forms anyway, where x is the next layer's attention
   input (Entropy_input_norm_measured) and Zhai et al.'s bound asks for it. */
typedef struct {
    double *factor;      /* T×T scratch of the Cholesky proof */
    double *lanczos;     /* Measure_lanczos_size(T) scratch (the measure's own may be it) */
    double norm_squared; /* out: as Measure_norm2_squared_bound's *bound, NaN where unproved */
} MeasureInputBound;

/* What a run shares with Measure_tokens_sharing beside the measures. */
typedef struct {
    /* Non-NULL: the bound of ‖X‖₂² by Measure_norm2_squared_bound's Lanczos and proof on the
       Gram matrix of X/‖X‖_F (no Gram matrix of its own), scaled back with the rounding of
       that division (measure.c's input_bound); NaN where X is 0 or not finite. */
    MeasureInputBound *bound;
    /* Whether the centred Gram matrix may come from X's (the run's expectation,
       Work_centred_downdate_expected); it does where Measure_centred_by_downdate says so
       (*centred_downdated, out), else it is formed from X − 1x̄ᵀ. */
    bool centred_from_gram;
    bool centred_downdated;
    /* out: asked from X's, yet formed from X − 1x̄ᵀ (the tokens resolved apart, refused by
       Measure_centred_by_downdate or after the deflated route): a Gram matrix the plan did
       not declare. */
    bool centred_formed_unplanned;
    /* out: the Cholesky factorisations of the flat-spectrum route (X's and the centred
       measure's, 0 to 2; the plan's expectation is Work_flat_proofs_declared). */
    int flat_proofs;
} MeasureSharing;

/* Measure_tokens with what `share` asks.  The stable rank and every measure but the centred
   stable rank are bit for bit Measure_tokens'; that one too unless downdated. */
int Measure_tokens_sharing(Linalg *la, int T, int d, const double *x, double log_scale,
                           double *unit, double *gram, double *eig, double *lanczos,
                           MeasureSharing *share, Measures *m);

/* Lanczos residual, relative to the Ritz value, at which Measure_norm2_squared_bound stops. */
#define MEASURE_BOUND_RESIDUAL 1e-13

/* A proved upper bound of ‖X‖₂² = s_1(X)² of x (T×d), within a few n·eps of it
   (n = min(T, d)): the Gram matrix of the smaller side, the top Ritz value of Lanczos on it,
   and a Cholesky factorisation of the Gram matrix subtracted from a shift just above that
   value, which proves the shift (plus the rounding the proof accounts for) above every
   eigenvalue.  *bound is NaN where the proof fails (X is 0 or not finite, or the
   factorisation met a non-positive pivot): compute s_1 exactly there.
   Scratch: transposed (T×d, used when T > d), gram and factor (n×n each; factor may be
   transposed, which is read only before), lanczos (Measure_lanczos_size(n)).  Returns 0, a LAPACK
   failure, or LINALG_STOPPED. */
int Measure_norm2_squared_bound(Linalg *la, int T, int d, const double *x, double *transposed,
                                double *gram, double *factor, double *lanczos, double *bound);

/* The proof beneath Measure_norm2_squared_bound: a proved upper bound of λ1(XXᵀ) for the X
   whose Gram matrix, as computed from inner products of m terms, is gram (n×n, lower
   triangle), when the Cholesky factorisation of shift·I − gram (into factor, n×n) runs to
   completion: shift plus the rounding of that factorisation, of the Gram matrix and of the
   subtraction, rounded up.  NaN where it meets a non-positive pivot: shift is below λ1, or
   within rounding of it.  Returns 0, a LAPACK failure, or LINALG_STOPPED. */
int Measure_gram_top_bound(Linalg *la, int n, int m, const double *gram, double shift,
                           double *factor, double *bound);

/* The Cholesky factor of the Gram matrix BᵀB of a d×k matrix B, with what the proof of
   Measure_product_norm2_squared_bound needs to know of its rounding; one factor serves
   every A of the same B (the query heads that share a key head). */
typedef struct {
    double *lower;     /* k×k, the caller's: L̂, zero above the diagonal */
    double error;      /* ‖BᵀB − L̂L̂ᵀ‖₂ is at most this; NaN: no factor (BᵀB is not
                          numerically positive definite) */
    double frobenius2; /* ‖L̂‖_F² is at most this */
} MeasureGramFactor;

/* f->lower gets L̂ (k ≤ d).  Scratch: transposed (k×d).  Returns 0, a LAPACK failure, or
   LINALG_STOPPED. */
int Measure_gram_factor(Linalg *la, int d, int k, const double *b, double *transposed,
                        MeasureGramFactor *f);

/* A proved upper bound of ‖ABᵀ‖₂² for A and B d×k (k ≤ d), B's through its factor f:
   Measure_norm2_squared_bound of X̂ = AL̂ (d×k, so a k×k Gram matrix and Cholesky
   factorisation, O(d·k²) in products and no SVD) plus what the factor's and the product's
   rounding can add, of order d·u·‖A‖_F²‖B‖_F².  NaN where the factor or the proof is
   missing: compute the norm exactly there.  Scratch: product and transposed (d×k each),
   gram (k×k), lanczos (Measure_lanczos_size(k)).  Returns 0, a LAPACK failure, or
   LINALG_STOPPED. */
int Measure_product_norm2_squared_bound(Linalg *la, int d, int k, const double *a,
                                        const MeasureGramFactor *f, double *product,
                                        double *transposed, double *gram, double *lanczos,
                                        double *bound);

/* A proved upper bound of ‖ABᵀ‖₂² for A and B d×k from `formed`, the d×d product fl(ABᵀ) as
   Linalg_gemm formed it (the logits' M_h, Layer_qk_product): Measure_norm2_squared_bound of it
   (a d×d Gram matrix, Lanczos and the Cholesky proof) plus the product's rounding,
   γ_k‖A‖_F‖B‖_F on ‖ABᵀ‖₂.  NaN where the proof fails: compute the norm exactly there.
   Scratch: gram and factor (d×d each), lanczos (Measure_lanczos_size(d)).  Returns 0, a LAPACK
   failure, or LINALG_STOPPED. */
int Measure_formed_product_norm2_squared_bound(Linalg *la, int d, int k, const double *a,
                                               const double *b, const double *formed, double *gram,
                                               double *factor, double *lanczos, double *bound);

#endif
