/* The theory of docs/model.md §3 (with its toolbox of laws), ready to draw and to test against.
 *
 * Every predictor says where it applies: Theory_predict fills NaN (and a reason) where no
 * formula describes the configuration, so that a screen can say so instead of drawing a
 * wrong curve.
 */
#ifndef ATTNSCOPE_THEORY_H
#define ATTNSCOPE_THEORY_H

#include "attnscope/config.h"

#include <stdbool.h>
#include <stddef.h>

/* E_ℓ(γ) = 1 / max_{z>0} z / ((1+z)^{ℓ+1} (1+γz)^ℓ): the bulk edge of the gap-removed
   covariance in units of its mean. */
double Theory_edge_gap_removed(int layer, double gamma);

/* E for identity attention: 1 / max_{z>0} z / ((1+z)(1+γz)^ℓ). */
double Theory_edge_identity(int layer, double gamma);

/* C_ℓ(γ) = (1 + ℓ(1+γ)) / E_ℓ(γ)²: sr(Σ⊥_ℓ)/T for markov with the gap removed. */
double Theory_gap_removed_ratio(int layer, double gamma);

/* (1 + ℓγ)/E²: sr(Σ_ℓ)/T for identity attention. */
double Theory_identity_ratio(int layer, double gamma);

/* σ_A^{4ℓ}·(1 + ℓ(1+γ))·T^{1−2ℓ}: sr(Σ_ℓ) − 1 for markov without gap removal (corrected). */
double Theory_collapse_excess(int layer, double sigma_a, double gamma, int tokens);

/* 1 − |λ2| of the window mask's attention at σ_qk → 0 (A_ij = 1/n_i on |i − j| ≤ w, n_i the
   row's keys): a walk with steps of variance w(w+1)/3 on T tokens whose ends reflect, so
   π²w(w+1)/(6T'²) on the length T' = T − w(w+1)/(2w+1) the ends leave it (docs/model.md §3,
   Masks); relative error ≈ (π/T')²(3w² + 3w − 1)/60, within 6% where
   Theory_window_spectral_gap_holds. */
double Theory_window_spectral_gap(int tokens, int window);

/* Whether the window is narrow enough for Theory_window_spectral_gap, 2w + 1 ≤ T/2: where
   tests/test_theory.c checks it against the exact eigenvalues.  A wider window's walk feels
   both ends at once; the formula overshoots (0.54 for the exact 0.409 at T = 64, w = 28) and
   passes 1 as w nears T. */
bool Theory_window_spectral_gap_holds(int tokens, int window);

/* Quartercircle law on [0, 2σ]: density (1/(πσ²))·√(4σ² − x²) and its CDF. */
double Theory_quartercircle_density(double x, double sigma);
double Theory_quartercircle_cdf(double x, double sigma);

/* Circular law on the disk of radius σ: radial CDF (r/σ)². */
double Theory_circular_radial_cdf(double r, double sigma);

/* Kolmogorov–Smirnov distance sup |F_n − F| of the samples (sorted in place). */
double Theory_ks_distance(double *samples, size_t n, double (*cdf)(double x, double sigma),
                          double sigma);

/* Where a stable-rank curve leaves the range [1, T] of every stable rank (T ≤ d, rank ≤ T):
   its limit or expansion no longer holds there (docs/model.md §3). */
typedef struct {
    int layer;           /* the first layer whose value is outside [1, T], 0: none */
    double limit;        /* the limit there */
    const char *formula; /* its formula, as the warning names it */
} TheoryOutOfRange;

/* What theory predicts for one configuration (NaN where nothing applies). */
typedef struct {
    double sigma;             /* √(e^{σ_qk⁴} − 1) */
    double bulk_radius;       /* eigenvalue bulk radius of √T·A, or NaN */
    double outlier;           /* predicted top eigenvalue of A, or NaN */
    double singular_edge;     /* upper edge 2σ of the quartercircle of √T·s(A⊥), or NaN */
    const char *singular_law; /* "quartercircle", "i.i.d. Markov limit" (softmax) or NULL */
    double *stable_rank;      /* sr(Σ_ℓ), ℓ = 0..depth, of the network (NaN: none) */
    double *counterpart_stable_rank; /* the same for the counterpart */
    const char *stable_rank_note;    /* why there is no curve, when there is none */
    /* Where each curve is null because it left [1, T] (its other entries stand). */
    TheoryOutOfRange out_of_range, counterpart_out_of_range;
} TheoryPrediction;

/* Why the theory says nothing of a checkpoint's weights (--weights: a weight source is in use,
   layer.h): σ and every law and curve are computed from σ_qk and the i.i.d. Gaussian draws
   of the initialisation, which the checkpoint's weights were not made by.  Its predictions
   are null with this note, but for the exact λ1 = 1 of row-stochastic attention. */
#define THEORY_CHECKPOINT_NOTE                                                                     \
    "weights from a checkpoint: the theory's sigma, laws and curves come from sigma_qk and "       \
    "i.i.d. Gaussian draws, not from its weights"

/* Whether the weights are drawn (no checkpoint's weight source in use): the theory's premise. */
bool Theory_weights_drawn(void);

/* Whether the first layer's attention reads rows of the norm σ is computed for (X0's): false
   with pre-LN when its LayerNorm rescales them (PyTorch's √d rows, or unit rows of a √d
   input), and for the embedding input, whose rows are not orthonormal. */
bool Theory_first_layer_unit_rows(const Config *c);

/* Why the theory built on orthonormal input (σ, the circle laws, the stable-rank curves from
   sr(Σ_0) = T, the entropy prediction) says nothing of the embedding input. */
#define THEORY_EMBEDDING_NOTE                                                                      \
    "the theory starts from orthonormal rows (sr = T); embedding rows have random norms and "      \
    "overlaps, repeat with their ids, span at most d dimensions"

/* Whether the spectra's theory (σ, the circle and quartercircle laws, relu's and sigmoid's
   outlier) describes the shown layer's attention: for attention that reads the tokens it is
   the first layer's, on orthonormal input (later layers read the tokens the earlier ones
   made); markov, uniform and identity attention do not read them. */
bool Theory_describes_shown_layer(const Config *c);

/* Fills p for c: the stable-rank curves into arrays of depth + 1 doubles the caller supplies,
   or, when p->stable_rank is NULL, the spectra's predictions alone. */
void Theory_predict(const Config *c, TheoryPrediction *p);

/* The random-energy prediction for the first layer's mean row entropy (docs/model.md §3,
   Attention entropy): one softmax row of n = T i.i.d. N(0, s²) logits has
   H ≈ ln n − s²/2 below s_c = √(2 ln n) and condenses (H = O(1)) above; on orthonormal input
   the first layer's logits are such a row, given its query, with s = σ_qk² (the logit std
   at the 1/√d_h scale).  Defined for softmax, the full mask, Gaussian W^Q and W^K, rows of
   the input's norm, s < s_c; elsewhere mean and (but for the first three) logit_std are NaN
   and note says why.  The limit is approached slowly: at n = 256 the mean lies 0.007 above
   it at s = 1, 0.049 at s = 1.5, 0.23 at s = 2. */
typedef struct {
    double logit_std;          /* s */
    double critical_logit_std; /* s_c = √(2 ln T) */
    double mean;               /* ln T − s²/2 */
    const char *note;          /* NULL where the prediction holds */
} EntropyTheory;

void Theory_entropy_first_layer(const Config *c, EntropyTheory *out);

/* Giorlandino & Goldt (ICLR 2026), as their released code has it (docs/model.md §3): tokens
   of mean squared norm q and mean pairwise overlap p meet logits of inverse temperature β;
   below β_c = √(2/(q(q − p))) attention averages them (the rank-collapse side), above it
   rows condense (the entropy-collapse side).  β is attnscope's logit std on unit orthogonal
   tokens over √(ln T): var(x_iᵀ M x_j) = β² ln T ‖x_i‖²‖x_j‖², their logits' law. */
double Theory_phase_beta(const Config *c);
/* β_c for q and gap = q − p, given apart because q − p formed from the two cancels where the
   tokens merge; NaN unless q > 0 and gap > 0. */
double Theory_phase_critical_beta(double q, double gap);
/* Why their threshold does not describe layer `layer` of c (NULL: it does). */
const char *Theory_phase_void(const Config *c, int layer);
/* "entropy-collapse" where β >= β_c, "rank-collapse" below, NULL where either is NaN. */
const char *Theory_phase_side(double beta, double critical_beta);

/* σ where it describes the shown matrix, the radius of its circle: softmax and markov
   attention with every key allowed, softmax at the first layer only (NaN elsewhere; +inf
   where e^{v} overflows). */
double Theory_shown_sigma(const Config *c);

#endif
