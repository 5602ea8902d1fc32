/* Conditioning of the self-attention sub-block (docs/model.md §8), after "Cutting the skip":
 * the input Jacobian K of f(X) = A(X)·X·W_VO, its dominant term B = W_VOᵀ ⊗ A, and the
 * initialisation that keeps both well conditioned.
 *
 * Tokens are rows and vec is column-major, so vec X stacks the columns of the T×d matrix X
 * and K = ∂vec f / ∂vec X is (T·d)×(T·d).  The logits are C = s·X·M·Xᵀ with M = W^Q W^Kᵀ and
 * the logit scale s passed in, and W_VO = W^V W^O passed in.  H heads sum: f = Σ_h A_h X W_VO,h
 * with M_h = W^Q_h W^K_hᵀ and W_VO,h = W^V_h W^O_h (W^O's rows of head h), so K = Σ_h K_h.
 * s is 1/√d_h or 1/d_h, or 1 under cutting-skip, whose αZ + βI carries its scale.
 */
#ifndef ATTNSCOPE_CONDITIONING_H
#define ATTNSCOPE_CONDITIONING_H

#include "attnscope/config.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "attnscope/random.h"

#include <stdbool.h>
#include <stddef.h>

/* Above this T·d the Jacobian is not built in full ((T·d)² doubles, an SVD of that size):
   its norm and smallest singular value are then estimated without forming it. */
enum { CONDITIONING_EXACT_MAX = 4096 };

/* One self-attention sub-block at its input X.  Matrices are column-major except the
   attention matrices, which are row-major (a[i*T + j] = A_ij) as attention.h builds them. */
typedef struct {
    int T, d;
    const double *x;       /* T×d */
    const double *m;       /* d×d, M = W^Q W^Kᵀ; NULL when A does not depend on X */
    double scale;          /* s */
    const double *wvo;     /* d×d, W_VO */
    const double *softmax; /* T×T row-softmax of C over the allowed keys (NULL with m) */
    const double *applied; /* T×T, the matrix f applies: the softmax, or it minus a constant
                              (gap removal by centring), whose derivative is the softmax's */
    /* The applied matrix is A minus each row's mean over its allowed keys, a mean that moves
       with X (gap center with sinks, or on a kind whose rows do not sum to 1): Ȧ's rows are
       centred the same way.  Read with an SaShape (its mask), else false. */
    bool mean_centred;
} SaBlock;

typedef struct SaWork SaWork;

/* Buffers for blocks up to T tokens and width d (grown on demand, reused). */
SaWork *SaWork_new(void);
void SaWork_free(SaWork *w);

/* Prepares the products of b that every Jacobian product reuses (X·M, X·Mᵀ, X·W_VO).  b's
   matrices must stay valid until the next SaWork_prepare.  Returns 0 or -1 (out of memory). */
int SaWork_prepare(SaWork *w, const SaBlock *b);
/* The same for a sub-block of `heads` heads on one input: f(X) = Σ_h A_h(X)·X·W_VO,h, whose
   Jacobian is K = Σ_h K_h (each head's block with its own M_h, scale, W_VO,h = W^V_h W^O_h
   and attention); every block has the same T, d and x. */
int SaWork_prepare_heads(SaWork *w, const SaBlock *blocks, int heads);

/* What the layer does around f that K must follow (docs/model.md §8.1): the attention kind's
   derivative (softmax; relu, sigmoid and linear entry by entry), QK-norm and RoPE on
   the projected queries and keys as Qk_shape applies them, the logit soft-cap c·tanh(S/c), and
   the peri-/output-LN of the branch's output F = Σ_h A_h X W_VO,h.  With any of them the
   logits are differentiated through the projections Q = X W^Q, K = X W^K (the blocks' m only
   says whether A moves with X), so K = J_LN(F)·(B + E): B and E keep their meaning where no
   LN follows f, and both are taken after J_LN where one does. */
typedef struct {
    const Config *c;
    int layer;                 /* from 1: whether RoPE acts (--nope-every) */
    const double *query, *key; /* W^Q d×(H·d_h), W^K d×(G·d_h), column-major */
    /* The norms' gains w as a checkpoint stores them (NULL: unit; γ = o + w, o the
       --norm-gain-offset): QK-norm's over d_h (per head) or the full width, and the
       branch LN's over d.  A gain multiplies the normalised row, so the JVP applies it after
       the norm's Jacobian and the VJP before its transpose. */
    const double *query_gain, *key_gain, *branch_gain;
} SaShape;

/* After SaWork_prepare_heads (which forgets any shape): sets what of s acts at its layer
   (nothing for a plain softmax block, whose products then stay those of the formula below).
   s's matrices must stay valid until the next prepare.  Returns 0 or -1 (out of memory). */
int SaWork_shape(SaWork *w, const SaShape *s);

/* The flops of one JVP (one VJP is the same) through a sub-block of c at `layer`, the
   pieces SaWork_shape adds counted: for the cost model. */
double SaWork_product_flops(const Config *c, int layer);
/* The doubles SaWork_shape holds for c beyond SaWork_prepare_heads's (memory estimate). */
size_t SaWork_shape_doubles(const Config *c);

/* dy = K·dx: Ċ = s(Ẋ M Xᵀ + X M Ẋᵀ), Ȧ = A ⊙ (Ċ − rowsum(A ⊙ Ċ)·1ᵀ),
   Ẏ = Ȧ X W_VO + A_applied Ẋ W_VO.  dx, dy are T×d and may not overlap. */
void SaWork_jvp(SaWork *w, const double *dx, double *dy);
/* dx = Kᵀ·dy, the transpose of SaWork_jvp. */
void SaWork_vjp(SaWork *w, const double *dy, double *dx);
/* η with ‖fl(K v) − K v‖ ≤ η·‖v‖ for SaWork_jvp, and the same for Kᵀ with SaWork_vjp: an
   absolute bound per unit vector (docs/model.md §8, "the rounding term"), not one relative to
   ‖K‖₂, because Ȧ = A ⊙ (Ċ − rowsum(A ⊙ Ċ)) can cancel a Ċ that grows with ‖X‖ while K does
   not (a component common to every token puts a row-constant part into Ċ), and Ȧ·X W_VO a
   row common to X W_VO: η ≈ γ_k·λ_LN·Σ_h (‖A_h‖_F‖W_VO,h‖_F + δ_h·c_h·‖X W_VO,h‖_F) plus
   the prepared products' γ_d, c_h ≥ ‖Ċ_h‖_F per unit Ẋ, δ_h ≥ the attention derivative's norm
   (max A for the softmax), λ_LN ≥ the branch LN's ‖J‖₂ (1 without), k the sums' lengths.
   K is the Jacobian at the block's stored state (A, X, M, W_VO, and SaWork_shape's
   projections and norms). */
double SaWork_product_error(const SaWork *w);
/* out = fl(K v) (transposed: fl(Kᵀv)), and a bound on ‖out − K v‖₂ computed alongside from
   the magnitudes this product meets (|v|, |A_h|, |W_VO,h|, |fl(Ċ)|, …: docs/model.md §8, "the
   rounding of one product"), at most η‖v‖ and usually far below it.  The product is
   SaWork_jvp's (SaWork_vjp's) with a row μ taken out of X before X·W_VO and X·Mᵀ and what that
   leaves added back exactly (§8, "the centred route"): μ = 0, the tokens' mean and their
   median row are tried in turn, the search stopping at the first whose bound is within 10⁻⁶
   of its product's norm and keeping the least bound's; once a search of the block has gone
   past μ = 0 for a part of K (SaWork_perturbation_only, SaWork_dominant_only) and a direction,
   the block's later products of that part and direction take its choice alone.  Where the
   tokens share a large component it is far more accurate than SaWork_jvp's, whose bits it
   need not have.  Where the least bound and η‖v‖ still exceed ρ‖v‖/2, ρ the largest
   ‖fl(K v)‖/‖v‖ of the block's bounded products of that part so far (about ‖K‖₂), the product
   is computed once more by the compensated route (SaWork_product_compensated) and its bound
   kept where it is the smallest.  Where
   the layer's shape is more than the plain softmax block (QK-norm, RoPE, the soft-cap, a
   branch LN, another kind's or a moving centring's derivative), or its bound is not below
   η‖v‖, it is SaWork_jvp's, bounded by η‖v‖.  Costs a product or two more; a search of all
   three centrings, their caches (once per block) and the compensated route (its block once,
   then a few products each) several times that, which is why each runs only where the one
   before it bounds too loosely (measured in bench/README.md, "the centred route" and "Layer
   7's κ(K) lower bound"). */
double SaWork_product_bounded(SaWork *w, const double *v, bool transposed, double *out);
/* The rows μ that SaWork_product_bounded takes out of X: 0, the tokens' mean, their median. */
typedef enum { SA_CENTRE_NONE, SA_CENTRE_MEAN, SA_CENTRE_MEDIAN, SA_CENTRINGS } SaCentring;
/* SaWork_product_bounded's product with the one centring given, no search and no η: out and
   its bound (a proof for every centring, whatever μ), or NaN with SaWork_jvp's (vjp's) out
   where the bound does not follow the block or there is no memory.  v and out must differ. */
double SaWork_product_centred(SaWork *w, const double *v, bool transposed, SaCentring centring,
                              double *out);
/* SaWork_product_centred's product on the compensated route (docs/model.md §8, "the
   compensated route": the prepared products and Ĝ or Ā by compensated dot products), which
   SaWork_product_bounded takes where a search's least bound exceeds its product's norm. */
double SaWork_product_compensated(SaWork *w, const double *v, bool transposed, SaCentring centring,
                                  double *out);
/* The doubles SaWork_product_bounded keeps for blocks of T tokens, width d and `heads` heads,
   at most (the memory estimate: the mean's and median's blocks are allocated only when a
   product first tries them). */
size_t SaWork_product_bounded_doubles(int T, int d, int heads);
/* A bound from any nonzero T×d vector y, whatever it is: s_min(K) ≤ ‖K y‖/‖y‖ ≤ s_max(K)
   (min and max over unit vectors).  fl(K y) is within e of K y (e the bound of
   SaWork_product_bounded, at most η·‖y‖), and each computed 2-norm, the quotient and the sum
   within (n + 4)·ε relative, n = T·d (N. Higham, Accuracy and Stability of Numerical
   Algorithms, §3.1): the computed ratio moved by both, up when `above` (a number ≥ s_min(K)),
   down otherwise (≤ s_max(K), at least 0).  NaN where y is 0 or e not finite.  transposed:
   with Kᵀ y (the VJP), whose bounds are the same (K is square).  ky: T×d scratch (K y);
   ky_error (or NULL): e. */
double SaWork_witness(SaWork *w, const double *y, bool above, bool transposed, double *ky,
                      double *ky_error);
/* Whether the products are adjoint to within their rounding at this block, tried on y (T×d,
   with kty = fl(Kᵀy) computed, within kty_error of Kᵀy) and a fixed pseudo-random unit x:
   ⟨fl(Kx), y⟩ is within e_x‖y‖ of ⟨Kx, y⟩ (e_x SaWork_product_bounded's for x) and
   ⟨x, fl(Kᵀy)⟩ within kty_error, plus the dot products' n·ε.  False proves the JVP and VJP
   are not each other's transpose to that rounding (a defect in one of them, or a piece the
   bounds miss), so no certificate from them holds.  True does not prove they are.
   scratch: 2·T×d. */
bool SaWork_rounding_consistent(SaWork *w, const double *y, const double *kty, double kty_error,
                                double *scratch);
/* The largest κ(K) whose s_min Lanczos on KᵀK can certify at this block, s_max ≥ ‖K‖₂:
   SaWork_extreme certifies only where θ ≈ s_min² exceeds η(2‖K‖ + η)·‖s‖₁ ≥ η(2‖K‖ + η), so
   s_max/√(η(2 s_max + η)). */
double SaWork_kappa_resolvable(const SaWork *w, double s_max);
/* The full K (or the part the products are set to), (T·d)×(T·d) column-major, column
   k = K·e_k.  Needs T·d ≤ CONDITIONING_EXACT_MAX.  Returns 0, or LINALG_STOPPED when the
   stop hook of SaWork_set_stop asked (k is then partial). */
int SaWork_jacobian(SaWork *w, double *k);

/* κ from the largest and smallest singular values of an n×n matrix: NaN when s_min is below
   what double precision resolves in it (n·ε·s_max, ε = 2^-52), so that a singular matrix is
   never reported as a huge finite κ. */
double Conditioning_kappa(double s_max, double s_min, int n);

/* The stop hook of la (Linalg_stop_requested) is polled between the columns of
   SaWork_jacobian and the Lanczos steps of SaWork_extreme, which then return LINALG_STOPPED;
   NULL: never stopped. */
void SaWork_set_stop(SaWork *w, const Linalg *la);

/* Products with E = K − B (the perturbation term: Ẋ ↦ Ȧ X W_VO) instead of K, until the
   next SaWork_prepare. */
void SaWork_perturbation_only(SaWork *w, bool only);
/* Products with the dominant term B = Σ_h W_VO,hᵀ ⊗ A_h alone (Ẋ ↦ Σ_h A_h Ẋ W_VO,h): for
   one head its κ is κ(W_VO)·κ(A); for several it is computed from these products. */
void SaWork_dominant_only(SaWork *w, bool only);

/* An extreme singular value of K (or E) without forming it: Lanczos on KᵀK through the JVP
   and VJP, with full reorthogonalisation (it needs far fewer products than the power
   iteration for the same accuracy).  The extreme Ritz value θ lies inside the spectrum of
   KᵀK (Courant–Fischer: θ ≤ s_max², θ ≥ s_min²), and the residual r of its Ritz vector y
   puts an eigenvalue of the computed operator within r of θ; the products' rounding (at most
   η(2‖K‖ + η) per unit vector, η = SaWork_product_error) moves that residual by at most
   η(2‖K‖ + η)·‖s‖₁, s the Ritz vector's coordinates, so an eigenvalue of the exact KᵀK lies within
   their sum of θ.  The value is √θ, reported once r ≤ tolerance·θ and (for s_min) that sum is
   below θ (else NaN), with `error` the largest move of √θ the sum allows.  The interval holds
   *an* eigenvalue: Lanczos finds the extreme ones first, so it is the extreme one unless the
   start vector all but misses its eigenvector (probability zero in exact arithmetic, not a
   guarantee).  The basis is cut to 256 MiB.
   Whether certified or not, the extreme Ritz vector y where the steps stopped gives a bound
   that holds for every vector (docs/model.md §8.2, "a lower bound on κ(K)"): s_min(K) ≤
   ‖K y‖/‖y‖ ≤ s_max(K), so `bound` is ‖fl(K y)‖/‖y‖ moved by the product's rounding (its
   bound, SaWork_product_bounded)
   and the norms' (n + 4)·ε: above s_min(K) for the smallest, below s_max(K) for the largest
   (SaWork_witness).  `overflow`: a product left the double range (a checkpoint's huge
   weights: KᵀK ~ ‖K‖² past 1e308), the steps stopped there and every number is NaN. */
typedef struct {
    double value, error;
    int taken; /* the Lanczos steps taken (at most the budget) */
    double bound;
    bool overflow;
} SingularValueEstimate;

/* Bytes of Lanczos basis an estimate may hold: the step count is cut to fit. */
#define CONDITIONING_LANCZOS_BASIS_BYTES ((size_t)256 << 20)

/* norm: an upper bound on the operator's ‖·‖₂ for the rounding term of s_min (the largest
   takes its own √(θ + r); pass NAN there).  Returns 0, -1 (out of memory) or LINALG_STOPPED
   (SaWork_set_stop). */
int SaWork_extreme(SaWork *w, bool largest, int budget, double tolerance, uint64_t seed,
                   double norm, SingularValueEstimate *out);
/* SaWork_extreme with every choice: on KKᵀ instead of KᵀK (`left`: the same eigenvalues,
   the left singular vectors, the products VJP then JVP, the bound from Kᵀy), from a given
   start vector (n doubles, any norm, with 1e-8 of the pseudo-random one of seed added; NULL:
   that one alone), and for s_min
   stopped at a check (every 8 steps) where the smallest Ritz value is at most give_up²
   (value NaN then; NaN: never): the Ritz vector's bound is then already as small as the
   caller needs. */
typedef struct {
    bool largest, left;
    int budget; /* the Lanczos steps it may take, before the basis's cut */
    double tolerance, give_up;
    uint64_t seed;
    const double *start;
    double norm;
} ExtremeRun;
int SaWork_extreme_run(SaWork *w, const ExtremeRun *run, SingularValueEstimate *out);

/* ---- the extreme singular values of a dense matrix -------------------------------------- */

/* s_max and s_min of a dense n×n matrix K without its SVD (the exact path's κ where no
   singular value between them is shown): Lanczos on KᵀK through two products with K for
   s_max², and on (KᵀK)⁻¹ = K⁻¹K⁻ᵀ through K's LU factors for 1/s_min², each run until the
   residual of its Ritz vector certifies the value to 1e-13 relative (SaWork_extreme's
   certificate).  LU with partial pivoting is backward stable, so s_min is that of K + δK
   with ‖δK‖ ≈ ε‖K‖: to n·ε·s_max, as dgesdd's.  Buffers are kept for the next call. */
typedef struct DenseExtremes DenseExtremes;

DenseExtremes *DenseExtremes_new(void);
void DenseExtremes_free(DenseExtremes *e);
/* Doubles a DenseExtremes holds for n (besides the caller's LU). */
size_t DenseExtremes_doubles(size_t n);

/* DenseExtremes_run's status where either value is not certified (K exactly singular in its
   LU, or no convergence within the steps): the caller takes the SVD instead. */
enum { DENSE_NOT_CERTIFIED = 2 };

/* k (n×n column-major) is kept; lu (n×n) is overwritten with its LU factors.  Returns 0,
   DENSE_NOT_CERTIFIED, -1 (out of memory) or LINALG_STOPPED (stop's hook, polled between the
   steps). */
int DenseExtremes_run(DenseExtremes *e, const Linalg *stop, int n, const double *k, double *lu,
                      double *s_max, double *s_min);

/* ---- the softmax conditioning demo ------------------------------------------------------ */

/* κ(softmax(αZ + βI)) for n×n Z with i.i.d. N(0, 1/n) entries (the paper's Z_ij ~ N(0, 1/d)
   with d = n), row-wise softmax over all keys.  Draw k takes Z from the stream
   (seed + k, 1, query), as the seeds of an ensemble do.  kappa: `draws` values, NaN where
   the matrix is singular to double precision.  Returns 0 or a LAPACK failure. */
int SoftmaxDemo_run(int n, double alpha, double beta, uint64_t seed, int draws, double *kappa);

/* The α → 0 limit (docs/model.md §8.3): softmax(βI) = ((e^β − 1)I + 11ᵀ)/(e^β + n − 1) has
   singular values 1 and (e^β − 1)/(e^β + n − 1) (n − 1 times), so
   κ = (e^β + n − 1)/|e^β − 1|; NaN (infinite) at β = 0, where every row is uniform. */
double SoftmaxDemo_closed_form(int n, double beta);

/* ---- per layer, for the network and its counterpart ------------------------------------ */

/* How a layer's s_min(K_ℓ) and κ(B_ℓ) were obtained (docs/model.md §8.2, the JSON's
   `jacobian_s_min_route` and `kappa_dominant_route`). */
typedef enum {
    CONDITIONING_ROUTE_NONE, /* not taken (null): K not formed there, or the layer not reached */
    CONDITIONING_ROUTE_STRUCTURE, /* singular by structure: 0 by proof, reported null (κ = ∞) */
    CONDITIONING_ROUTE_EXACT,     /* the matrix built in full and decomposed */
    CONDITIONING_ROUTE_KRONECKER, /* s_min: the Kronecker path, certified; κ(B): κ(W_VO)·κ(A) */
    CONDITIONING_ROUTE_LANCZOS,   /* Lanczos on KᵀK, or on B's own products */
    CONDITIONING_ROUTE_BEYOND,    /* s_min: a proved bound puts κ(K) beyond Lanczos's reach */
    CONDITIONING_ROUTE_INEXACT,   /* s_min: the products off their rounding model, none given */
    CONDITIONING_ROUTE_OVERFLOW,  /* KᵀK past the double range: not sought */
} ConditioningRoute;

/* The JSON's name of a route; NULL for CONDITIONING_ROUTE_NONE. */
const char *ConditioningRoute_name(ConditioningRoute route);

/* Index ℓ = 1..depth (index 0 unused, NaN); NaN where undefined or beyond double precision. */
typedef struct {
    double *kappa_attention;         /* κ(A_ℓ), the matrix applied (after gap removal) */
    double *kappa_value_output;      /* κ(W_VO,ℓ) */
    double *kappa_dominant;          /* κ(B_ℓ) = κ(W_VO,ℓ)·κ(A_ℓ) */
    double *kappa_attention_product; /* κ(A_ℓ⋯A_1) */
    double *kappa_jacobian;          /* κ(K_ℓ) */
    /* A proved lower bound on κ(K_ℓ) (docs/model.md §8.2): κ(K_ℓ) itself on the exact path
       where resolved; else (a bound below s_max)/(a bound above s_min), each the image of one
       vector, where κ(K_ℓ) is null too */
    double *kappa_jacobian_lower;
    double *kappa_jacobian_skip; /* κ(K_ℓ + I), exact path only */
    /* ‖K_ℓ‖₂, NaN where its certified error (jacobian_norm_error) exceeds
       JACOBIAN_NORM_TOLERANCE of it */
    double *jacobian_norm;
    /* The certified error of ‖K_ℓ‖₂: the products' rounding (√(T·d)·η on the exact path, whose
       K is built column by column from them; Lanczos's bound off it), kept where ‖K_ℓ‖₂ is null */
    double *jacobian_norm_error;
    double *jacobian_s_min;       /* s_min(K_ℓ) */
    double *jacobian_s_min_error; /* 0 on the exact path, else the Lanczos bound */
    double *premise_ratio;        /* ‖E_ℓ‖₂ / s_min(B_ℓ) */
    double *log10_norm;           /* log10 ‖X_ℓ‖_F of the forward pass, ℓ = 0..depth */
    /* ConditioningRoute of s_min(K_ℓ) and of κ(B_ℓ), ℓ = 1..depth */
    unsigned char s_min_route[CONFIG_DEPTH_MAX + 1], dominant_route[CONFIG_DEPTH_MAX + 1];
} ConditioningCurves;

/* ‖K‖₂ is reported only where its certified error is at most this, relative: beyond, the
   products' rounding leaves its leading digits unknown (docs/model.md §8.2). */
#define JACOBIAN_NORM_TOLERANCE 1e-3

/* The per-layer series of ConditioningCurves: the one list the JSON document reads, so that
   every series has one name (the counterpart's gets the prefix "counterpart_"). */
typedef struct {
    const char *name;
    size_t offset; /* of the double * in ConditioningCurves */
    const char *meaning;
} ConditioningSeries;

extern const ConditioningSeries CONDITIONING_SERIES[];
extern const int CONDITIONING_SERIES_COUNT;

/* The values of one series, index ℓ = 0..depth. */
const double *ConditioningSeries_values(const ConditioningSeries *s, const ConditioningCurves *c);

/* How the matrix-free path took s_min(K), layer by layer of both networks
   (conditioning_kron.h): certified on the Kronecker path; B₀ singular to double precision
   (Lanczos instead); B₀ too far from K, ‖E‖₂ > KRON_PREMISE_MAX·s_min(B₀) (Lanczos
   instead); the Kronecker path's upper bound on s_min putting κ(K) beyond what Lanczos on
   KᵀK resolves (null, no Lanczos); Lanczos on KᵀK (every layer of the two before, too); the
   products off their rounding model (SaWork_rounding_consistent: null, no bound); KᵀK past
   the double range (null, s_min not sought; first_overflow the first such layer, 1-based). */
typedef struct {
    int certified, singular, far, beyond, lanczos, inexact, overflow, first_overflow;
    /* The Kronecker path ran and did not certify within its steps (Lanczos or the bound next) */
    int uncertified;
    /* Of the beyond layers, those whose reach is below 1: there the products' rounding leaves
       Lanczos nothing it could certify (κ ≥ reach < 1 would prove nothing). */
    int unresolvable;
    double kappa_at_least; /* the largest lower bound on κ(K) of those with a reach ≥ 1 (0: none) */
    double kappa_least;    /* the smallest of those bounds (0: none) */
    /* The smallest reach (KronTally_lanczos_reach) of the beyond layers with a reach of 1 or
       more: every one of them proves κ(K) at least this (0 for none). */
    double kappa_resolvable;
} KronTally;

typedef struct {
    Config config;
    Gap counterpart_gap;
    bool jacobian_exact; /* K built and decomposed in full (T·d ≤ CONDITIONING_EXACT_MAX) */
    KronTally kron;      /* the matrix-free path's ways to s_min (zero on the exact path) */
    bool kron_off;       /* the matrix-free path ran Lanczos alone (--conditioning-path lanczos) */
    /* Why K is singular by its structure (κ(K) = ∞, null in the series), short, for the screen
       ("H·d_h = 8 < d = 16"); a warning says it in full.  "" where it is not known to be. */
    char jacobian_singular[96];
    ConditioningCurves network, counterpart;
    /* Every layer ℓ of the network, at (ℓ − 1)·size: the singular values of A (T) and of
       W_VO (d), whose pairwise products are those of B for one head, and K's (T·d, exact
       path only, else NULL); NaN for a layer the run did not reach (an overflow). */
    double *layers_attention_sv, *layers_value_output_sv, *layers_jacobian_sv;
    /* The shown layer's (config.layer), pointing into the arrays above: Conditioning_show_layer
       moves them without a new run. */
    const double *attention_singular_values;
    const double *value_output_singular_values;
    const double *jacobian_singular_values;
    Warnings warnings;
} Conditioning;

/* Shows layer (1..depth): config.layer and the shown singular values follow. */
void Conditioning_show_layer(Conditioning *k, int layer);

/* Runs the first seed of c (the weights and forward pass of Model_run) and fills out.
   Returns 0, or -1 (out of memory, a LAPACK failure) with the reason in err. */
int Conditioning_run(const Config *c, Conditioning *out, char *err, size_t size);

/* How a caller (the screen's worker) follows and steers a run; a zeroed struct is
   Conditioning_run's. */
typedef struct {
    /* after_layer(context, network, layer, depth) after each layer of each network (network
       0, then its counterpart 1): false stops the run.  stop_requested is polled between the
       Jacobian's columns and the Lanczos steps, and inside the long LAPACK calls through
       `isolation` (linalg.h), where a stop can end them: a superseded run stops within about
       0.1 s wherever it is.  run_pair is not used (the networks run one after the other). */
    const Progress *progress;
    LinalgIsolation isolation;
    /* Estimate by Lanczos even where T·d ≤ CONDITIONING_EXACT_MAX: the exact path's time or
       memory does not fit the caller's budget. */
    bool lanczos_only;
    /* On the matrix-free path, s_min(K) by Lanczos alone (--conditioning-path lanczos), not
       the Kronecker path first. */
    bool kron_off;
    /* lanczos_only because the user asked for the matrix-free path (--conditioning-path
       lanczos or kron), not because of a budget: its warning says which. */
    bool matrix_free_asked;
    /* On the exact path, K's singular values at the shown layer (config.layer) only, its
       extremes elsewhere (the same κ, ‖K‖₂ and s_min to rounding): for a caller that shows
       no other layer's (batch), which so takes one SVD of K instead of L.  The other layers'
       in layers_jacobian_sv stay NaN. */
    bool shown_spectrum_only;
} ConditioningControl;

/* Conditioning_run's status when the progress stopped it: out then holds nothing (it is
   released), never a part of the layers presented as the whole. */
enum { CONDITIONING_STOPPED = 1 };

/* Conditioning_run under control: 0, -1 (err says why) or CONDITIONING_STOPPED. */
int Conditioning_run_controlled(const Config *c, const ConditioningControl *control,
                                Conditioning *out, char *err, size_t size);

/* Whether K is singular whatever the weights, proved from c alone (docs/model.md §8.1): heads
   narrower than d in all, grouped K/V under a causal mask, or a branch LN that centres or cuts
   rows to unit norm.  Off the exact path s_min(K) is then not sought. */
bool Conditioning_singular_by_structure(const Config *c);

/* Whether B (B_N with a branch LN) is singular whatever the weights: it reads X only through
   the G·d_h < d value columns, or a branch LN that centres or cuts rows to unit norm sends a
   direction of every row to 0.  Off the exact path κ(B) is then not sought. */
bool Conditioning_dominant_singular_by_structure(const Config *c);

/* Whether kappa_jacobian_skip is taken: the block X ← a·X + b′·F(X) has the Jacobian a·I + b′·K
   (a skip, and no LayerNorm before the branch or after the skip). */
bool Conditioning_skip_jacobian(const Config *c);

/* Whether a run of c takes the exact path (K built in full) under control. */
bool Conditioning_exact(const Config *c, const ConditioningControl *control);
void Conditioning_release(Conditioning *out);

/* Bytes Conditioning_run allocates at most for c (the Jacobian and its copy on the exact path,
   the Lanczos basis otherwise, and the matrices of the forward pass); _path: on the path
   asked for (exact only where T·d allows it). */
size_t Conditioning_memory_estimate(const Config *c);
size_t Conditioning_memory_estimate_path(const Config *c, bool exact);

#endif
