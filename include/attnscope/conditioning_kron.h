/* s_min(K) from the structure K has (docs/model.md §8.2, "the Kronecker path"): K = B + E with
 * B = Σ_h W_VO,hᵀ ⊗ A_h.  For one head B is a Kronecker product, whose singular values and
 * inverse come from the SVDs of its two factors (O(T³ + d³), not O(T³d³)); (BᵀB)⁻¹ applied
 * through those factors preconditions a Davidson iteration for the smallest singular triplet
 * of K, whose Ritz values are read from the SVD of K·S (not KᵀK: κ is not squared).  With
 * several heads the preconditioner is one Kronecker product standing for the sum.
 *
 * Tokens are rows and vec is column-major, as in conditioning.h: B·vec X = vec(A X W).
 */
#ifndef ATTNSCOPE_CONDITIONING_KRON_H
#define ATTNSCOPE_CONDITIONING_KRON_H

#include "attnscope/conditioning.h"
#include "attnscope/linalg.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct KronFactors KronFactors;

KronFactors *KronFactors_new(void);
void KronFactors_free(KronFactors *f);

/* Factors B₀ = Wᵀ ⊗ A for the T×T matrix A, given row-major (a[i*T + j] = A_ij, as the
   attention matrices are) and the d×d column-major W: the SVDs A = U_A Σ_A V_Aᵀ and
   W = U_W Σ_W V_Wᵀ, through la (its stop hook and isolation).  Returns 0, -1 (out of
   memory), a LAPACK failure or LINALG_STOPPED. */
int KronFactors_factor(KronFactors *f, Linalg *la, int T, int d, const double *a_row_major,
                       const double *w);

/* Several heads: the nearest Kronecker product to B = Σ_h W_hᵀ ⊗ A_h in the Frobenius norm
   (Van Loan and Pitsianis 1993), B₀ = (Σ_h α_h W_h)ᵀ ⊗ (Σ_h β_h A_h), with (α, β) the top
   singular pair of the rank-H rearrangement Σ_h vec W_h (vec A_h)ᵀ, found on the H×H Gram
   matrices.  a: H row-major T×T matrices, w: H column-major d×d.  Returns as _factor. */
int KronFactors_factor_nearest(KronFactors *f, Linalg *la, int T, int d, int heads,
                               const double *a_row_major, const double *w);

/* s_max(B₀) and s_min(B₀): the products of the factors' extreme singular values. */
double KronFactors_s_max(const KronFactors *f);
double KronFactors_s_min(const KronFactors *f);

/* B₀'s T·d singular values, descending: every product s_i(A)·s_j(W), sorted. */
void KronFactors_singular_values(const KronFactors *f, double *s);

/* B₀'s right and left singular vectors of its smallest singular value, vec(v_A,T u_W,dᵀ) and
   vec(u_A,T v_W,dᵀ) (T×d each, unit): B₀ maps the first to s_min(B₀) times the second. */
void KronFactors_smallest_pair(const KronFactors *f, double *right, double *left);

/* Whether B₀ can precondition: its κ is resolved in double precision (s_min > n·ε·s_max,
   Conditioning_kappa's rule, n = T·d). */
bool KronFactors_invertible(const KronFactors *f);

/* out = B₀⁻¹·r (r, out: T×d, may not overlap): vec(A⁻¹ R W⁻¹) from the factors. */
void KronFactors_solve(KronFactors *f, const double *r, double *out);

/* out = (B₀ᵀB₀)⁻¹·r = vec(V_A [(V_Aᵀ R U_W) ⊘ (s_A s_Wᵀ)²] U_Wᵀ): four products of T×T and
   d×d matrices with T×d ones, O(T·d·(T + d)). */
void KronFactors_normal_inverse(KronFactors *f, const double *r, double *out);

/* Why a preconditioned estimate stopped without a certificate. */
typedef struct {
    double value, error; /* s_min(K) and the certified half-width, NaN when not certified */
    double upper;        /* ‖K v‖ for the best unit v: always ≥ s_min(K) (NaN before one) */
    int products;        /* JVPs and VJPs it took */
} KronEstimate;

/* Steps (one JVP and one VJP each) the preconditioned iteration may take per estimate, and
   the certificate's relative half-width it stops at (a κ curve on a log scale needs no more;
   the half-width itself is reported). */
enum { KRON_STEPS_MAX = 60 };
#define KRON_TOLERANCE 1e-4

/* The Kronecker path runs where ‖E‖₂ ≤ this·s_min(B₀) (‖E B₀⁻¹‖₂ ≤ ‖E‖₂/s_min(B₀), and
   K B₀⁻¹ = I + E B₀⁻¹).  Measured (docs/model.md §8.2): random blocks certify in 30–110 steps
   at ratios 5–300 and sometimes not at 9; at the default size's Gaussian layers (ratios
   10⁷–10¹⁰) it never does, and Lanczos is left to run alone there. */
#define KRON_PREMISE_MAX 1e3

/* The preconditioner of a layer's K (H heads): B₀ = W_VOᵀ ⊗ A for one head; for several the
   nearest Kronecker product to Σ_h W_VO,hᵀ ⊗ A_h (measured faster than the shown head's A
   with the layer's W_VO: docs/model.md §8.2).  applied: H row-major T×T; wvo: the layer's
   W_VO; wvo_head: H of them (several heads).  Returns as KronFactors_factor. */
int KronLayer_factor(KronFactors *f, Linalg *la, const Config *c, int heads, const double *applied,
                     const double *wvo, const double *wvo_head);

/* Where a proved lower bound on κ(K) reaches LANCZOS_KAPPA_REACH, s_min(K) is not sought by
   Lanczos on KᵀK: its convergence to the smallest eigenvalue of KᵀK is governed by
   λ_max/λ_min = κ², and it was never measured to certify a κ near this within its 240 steps
   above T·d = 4096 (bench/README.md, "Conditioning"), where each layer would spend its 240
   steps to say null.  The bound is then the answer (docs/model.md §8.2, "a lower bound on
   κ(K)"). */
#define LANCZOS_KAPPA_REACH 1e4

/* The κ(K) from which Lanczos on KᵀK (at most `budget` steps in n dimensions) is not run for
   s_min: `resolvable` (SaWork_kappa_resolvable: beyond it the products' rounding leaves Lanczos no
   certificate at all), and LANCZOS_KAPPA_REACH as well where its steps do not span the n
   dimensions (where they do, its Krylov space is the whole space and only the rounding limits
   it). */
double KronTally_lanczos_reach(size_t n, int budget, double resolvable);

/* κ(K) ≥ s_max_low/s_min_above (a bound below s_max over one above s_min) at least reach
   (KronTally_lanczos_reach): then Lanczos is not run (tally.beyond; kappa_at_least keeps the
   largest such bound, kappa_resolvable the reach).  Else tally.lanczos.  Returns whether it
   is beyond. */
bool KronTally_beyond_lanczos(KronTally *tally, double s_max_low, double s_min_above, double reach);

/* The warnings that say how the matrix-free path took s_min(K), one per way it went, each
   count out of the 2·depth layers of both networks (the tally counts them together). */
void KronTally_warn(const KronTally *tally, int depth, Warnings *warnings);

/* s_min(K) of the prepared w by Davidson's method with the preconditioner (B₀ᵀB₀)⁻¹: the
   subspace S starts with B₀'s four smallest right singular vectors and a pseudo-random one
   (seed), and grows by P·r, r = Kᵀu − σv the residual of the smallest Ritz triplet
   (σ, u, v) of K on S (the SVD of K·S); restarted on its three best vectors at 24.  σ is ‖Kv‖
   for a unit v, so s_min(K) ≤ σ always; ‖Kv − σu‖ = 0 and ‖Kᵀu − σv‖ = ρ put a singular value
   of K within ρ/√2 of σ (the symmetric [0 K; Kᵀ 0] has ±s_i as eigenvalues and (u; v)/√2 as
   an approximate eigenvector with residual ρ/√2) in exact arithmetic.  The products' rounding
   (η per unit vector, η = SaWork_product_error) makes ‖Kv − σu‖ at most √p·η after p
   products and ‖Kᵀu − σv‖ at most ρ + η, and the half-width
   √((‖Kv − σu‖² + ‖Kᵀu − σv‖²)/2) bounds the move.  It stops once ρ/√2 ≤ tolerance·σ and
   reports (value σ, error that half-width) if the half-width is ≤ tolerance·σ too.  The
   interval holds *a* singular value: the smallest unless the subspace missed a smaller one.
   stop: polled between steps (NULL: never).  Returns 0, -1 (out of memory), a LAPACK failure
   or LINALG_STOPPED. */
int SaWork_smallest_preconditioned(SaWork *w, KronFactors *f, const Linalg *stop, int max_steps,
                                   double tolerance, uint64_t seed, KronEstimate *out);

#endif
