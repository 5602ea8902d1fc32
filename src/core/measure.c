/* The measures of a token matrix (measure.h, docs/model.md §2): the route of sr − 1 from the
 * Gram matrix of the smaller side (the top eigenpair, the flat-spectrum route, all
 * eigenvalues) or deep in the collapse from X itself, and what the stable rank hides (the
 * token geometry).  The routes' machinery: measure_lanczos.c, measure_flat.c; the proved
 * bounds: measure_bound.c. */
#include "attnscope/measure.h"

#include "measure_internal.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <string.h>

size_t Measure_tokens_scratch_size(int T, int d)
{
    /* Lanczos's, the deflated route's right vector (d), the centred downdate's X's Gram
       diagonal and row means (T each). */
    return Measure_lanczos_size(T) + (size_t)d + 2 * (size_t)T;
}

bool Measure_svd_cheap(int T, int d)
{
    return (double)T * d * (T < d ? T : d) <= MEASURE_SVD_CHEAP;
}

/* What the Gram matrix of one unit matrix gives: sr − 1, the fraction of its energy off the
   top direction, and the route that gave them. */
typedef struct {
    double rest, off_top;
    MeasureRoute route;
} GramRank;

/* unit = X/‖X‖_F, entry by entry. */
static void unit_tokens(size_t td, const double *x, double norm, double *unit)
{
    for (size_t i = 0; i < td; i++)
        unit[i] = x[i] / norm;
}

/* The transposed copy goes by tiles of 8×8 doubles, a 64-byte cache line of each of 8 columns
   of x into 8 lines of the copy: copied column by column, every element written would be a
   line apart from the one before. */
enum { TRANSPOSE_TILE = 8 };

/* The lower triangle of the d×d Gram matrix XᵀX of x (T×d) through a transposed copy (dsyrk
   forms a·aᵀ), copied tile by tile. */
int column_gram(Linalg *la, int T, int d, const double *x, double *transposed, double *gram)
{
    for (int j0 = 0; j0 < d; j0 += TRANSPOSE_TILE)
        for (int i0 = 0; i0 < T; i0 += TRANSPOSE_TILE) {
            int j1 = j0 + TRANSPOSE_TILE < d ? j0 + TRANSPOSE_TILE : d;
            int i1 = i0 + TRANSPOSE_TILE < T ? i0 + TRANSPOSE_TILE : T;
            for (int i = i0; i < i1; i++)
                for (int j = j0; j < j1; j++)
                    transposed[j + (size_t)i * d] = x[i + (size_t)j * T];
        }
    return Linalg_gram(la, d, T, transposed, gram);
}

/* The lower triangle of the n×n Gram matrix of x (T×d), n = min(T, d): XXᵀ, or XᵀX. */
int smaller_gram(Linalg *la, int T, int d, const double *x, double *transposed, double *gram)
{
    return T <= d ? Linalg_gram(la, T, d, x, gram) : column_gram(la, T, d, x, transposed, gram);
}

/* The deflated route (docs/model.md §2), for a collapsed X (here `unit`, ‖unit‖_F = 1) whose
 * top left singular vector Lanczos has found (`ritz`, T, as a Ritz vector of XXᵀ).  The
 * singular values of X below s_1 are those of X₂ = (I − u1u1ᵀ)X(I − v1v1ᵀ), and
 * Σ_{i≥2} s_i⁴ = ‖X₂X₂ᵀ‖_F², one Gram matrix of a matrix whose entries are as small as s_2:
 * its rounding is relative to Σ_{i≥2} s_i⁴, not to s_1⁴ as in XXᵀ's.
 *   - v̂ ∝ Xᵀ·ritz, then û ∝ X·v̂ (one power step on each side) and ŝ1 = ‖X v̂‖.
 *   - R = (I − ûûᵀ)X(I − v̂v̂ᵀ), each side projected twice: the first pass leaves along û the
 *     rounding of its coefficients (γ_T·s1 at most), which the second removes ("twice is
 *     enough"); what stays is each entry's own rounding, ‖E‖_F ≤ √2·u·(‖X‖_F + ‖(I − ûûᵀ)X‖_F).
 *     The vectors' own errors enter R as s1·sin∠(û, u1)·sin∠(v̂, v1) + s2·(sin∠(û, u1) +
 *     sin∠(v̂, v1)): second order, and relative to s2.
 *   - R is scaled by the power of 2 nearest below 1/‖R‖_F (exact), so that its Gram matrix
 *     neither underflows nor overflows, and sr − 1 = ‖fl(RRᵀ)‖_F²·(2^e/ŝ1)⁴ from the smaller
 *     side's Gram matrix, whose rounding is relative: at most 2γ_m·√n of Σ_{i≥2} s_i⁴.
 * Returns 0 and fills *out, 1 where there is no direction to deflate (the caller takes the
 * singular values), or a failure of the Gram matrix.  unit is destroyed, as gram; scratch:
 * ritz and product (T each, the Lanczos scratch's), right (d). */
static int deflated_rank(Linalg *la, int T, int d, double *unit, double *gram, double *ritz,
                         double *product, double *right, GramRank *out)
{
    cblas_dgemv(CblasColMajor, CblasTrans, T, d, 1.0, unit, T, ritz, 1, 0.0, right, 1);
    double norm = cblas_dnrm2(d, right, 1);
    if (!(norm > 0))
        return 1;
    cblas_dscal(d, 1.0 / norm, right, 1);
    double *left = ritz;
    cblas_dgemv(CblasColMajor, CblasNoTrans, T, d, 1.0, unit, T, right, 1, 0.0, left, 1);
    double top = cblas_dnrm2(T, left, 1);
    if (!(top > 0))
        return 1;
    cblas_dscal(T, 1.0 / top, left, 1);
    for (int j = 0; j < d; j++) {
        double *col = unit + (size_t)j * T;
        for (int pass = 0; pass < 2; pass++)
            cblas_daxpy(T, -cblas_ddot(T, left, 1, col, 1), left, 1, col, 1);
    }
    for (int pass = 0; pass < 2; pass++) {
        cblas_dgemv(CblasColMajor, CblasNoTrans, T, d, 1.0, unit, T, right, 1, 0.0, product, 1);
        cblas_dger(CblasColMajor, T, d, -1.0, product, 1, right, 1, unit, T);
    }
    size_t td = (size_t)T * d;
    double rest2 = 0;
    for (size_t i = 0; i < td; i++)
        rest2 += unit[i] * unit[i];
    int exponent;
    frexp(sqrt(rest2), &exponent);
    double scale = ldexp(1.0, -exponent);
    for (size_t i = 0; i < td; i++)
        unit[i] *= scale;
    /* T > d: RᵀR, through a transposed copy in gram; unit, copied out by then, takes it. */
    int n = T < d ? T : d;
    double *square = T <= d ? gram : unit;
    int info = smaller_gram(la, T, d, unit, gram, square);
    if (info)
        return info;
    double ratio = 1.0 / (scale * top); /* 2^e/ŝ1 */
    out->rest = gram_norm2(n, square) * (ratio * ratio) * (ratio * ratio);
    double off = rest2 / (top * top);
    out->off_top = off / (1 + off);
    out->route = MEASURE_ROUTE_DEFLATED;
    return 0;
}

/* sr − 1 and the energy off the top direction of `unit` (T×d, ‖unit‖_F = 1; destroyed by the
   singular-value route), whose Gram matrix is `gram` (destroyed by the all-eigenvalue route),
   by the routes Measure_tokens describes.  The energy off the top,
   1 − s_1²/Σ s_i², is summed from the small terms where the route gives them (no
   cancellation), and is trace − θ on the top-eigenpair route (θ within η ≤ tol·F/(2θ) of λ1,
   far below the rounding of the trace) and on the flat-spectrum route (θ within its proved
   interval [θ_lo, γ] of λ1, of the order of the trace's own rounding).  `deep`: whether
   sr − 1 below MEASURE_GRAM_FLOOR is wanted to its own digits (from X itself), or only the
   Gram route's value there.  `flat`: the flat-spectrum route's proof and scratch, tried where
   the top-eigenpair certificate fails; NULL where that route is not taken (below
   MEASURE_SVD_CHEAP, or without Lanczos).  gram2: ‖Ĝ‖_F² (gram_norm2), which the
   Lanczos routes read (not read without Lanczos).  l: the Lanczos scratch (NULL: all
   eigenvalues), whose held steps, on this Ĝ, the Lanczos routes carry on.  right: d doubles of
   scratch for the deflated route (read with l alone). */
static int gram_rank(Linalg *la, int T, int d, double *unit, double *gram, double gram2,
                     double *eig, Lanczos *l, double *right, bool deep, FlatRoute *flat,
                     GramRank *out)
{
    double trace = gram_trace(T, gram);
    double rest = NAN, top = NAN;
    if (l) {
        int status;
        rest = top_eigenpair_rest(la, T, gram, gram2, l, &top, &status);
        out->route = MEASURE_ROUTE_TOP_EIGENPAIR;
        if (!status && isnan(rest) && flat) {
            rest = flat_top_rest(la, T, gram, gram2, l, flat, &top, &status);
            out->route = MEASURE_ROUTE_FLAT_TOP;
        }
        if (status)
            return status;
        if (!isnan(rest))
            out->off_top = fmax(trace - top, 0) / trace;
    }
    if (isnan(rest)) {
        int info = Linalg_symmetric_eigenvalues(la, T, gram, eig);
        if (info)
            return info;
        top = eig[T - 1];
        if (!(top > 0))
            return 0;
        rest = 0; /* ascending order: the small terms are added first */
        double off = 0, total = 0;
        for (int i = 0; i < T - 1; i++) {
            double ratio = eig[i] / top;
            rest += ratio * ratio;
            off += fmax(eig[i], 0);
        }
        total = off + top;
        out->off_top = off / total;
        out->route = MEASURE_ROUTE_ALL_EIGENVALUES;
    }
    /* The flat route's proof took unit (T ≤ d; at T > d it took Ĝ's lower triangle and put it
       back), which the routes from X itself read: X/‖X‖_F again, the same bits. */
    if (deep && rest < MEASURE_GRAM_FLOOR && flat && flat->factored)
        unit_tokens((size_t)T * d, flat->x, flat->norm, unit);
    if (deep && rest < MEASURE_GRAM_FLOOR && out->route == MEASURE_ROUTE_TOP_EIGENPAIR &&
        !Measure_svd_cheap(T, d)) {
        /* Deep in the collapse the Gram route's floor (~T·eps²) is near: X itself, without
           the top pair that Lanczos found, resolves (s_i/s_1)⁴ down to ~eps⁴. */
        int deflated = deflated_rank(la, T, d, unit, gram, l->next, l->product, right, out);
        if (deflated <= 0)
            return deflated;
    }
    if (deep && rest < MEASURE_GRAM_FLOOR) {
        /* The same with the singular values of X: they resolve (s_i/s_1)⁴ down to ~T·eps⁴. */
        int info = Linalg_singular_values(la, T, d, unit, eig);
        if (info)
            return info;
        rest = 0;
        double off = 0;
        /* min(T, d) of them: more tokens than dimensions (the embedding input) have d. */
        for (int i = (T < d ? T : d) - 1; i >= 1; i--) {
            double ratio = eig[i] / eig[0];
            rest += (ratio * ratio) * (ratio * ratio);
            off += ratio * ratio;
        }
        out->off_top = off / (1 + off);
        out->route = MEASURE_ROUTE_SINGULAR_VALUES;
    }
    out->rest = rest;
    return 0;
}

/* The tokens' directions and size, from unit = X/‖X‖_F (docs/model.md §2): the mean cosine
   over pairs of distinct nonzero rows, as (‖Σ_i c_i‖² − Σ_i ‖c_i‖²) / (n(n − 1)) with
   c_i = x_i/‖x_i‖ (O(Td) instead of the T² pairs; the subtracted Σ‖c_i‖² is summed from the
   same c_i, so it cancels their rounding); NaN with fewer than two nonzero rows.
   row_norm2: T doubles of scratch. */
static double cosine_mean(int T, int d, const double *unit, double *row_norm2)
{
    for (int i = 0; i < T; i++)
        row_norm2[i] = 0;
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            row_norm2[i] += unit[i + (size_t)j * T] * unit[i + (size_t)j * T];
    int nonzero = 0;
    for (int i = 0; i < T; i++) {
        row_norm2[i] = row_norm2[i] > 0 ? 1.0 / sqrt(row_norm2[i]) : 0; /* now 1/‖x_i‖ */
        nonzero += row_norm2[i] > 0;
    }
    if (nonzero < 2)
        return NAN;
    double sum2 = 0, own2 = 0;
    for (int j = 0; j < d; j++) {
        const double *col = unit + (size_t)j * T;
        double column_sum = 0;
        for (int i = 0; i < T; i++) {
            double c = col[i] * row_norm2[i];
            column_sum += c;
            own2 += c * c;
        }
        sum2 += column_sum * column_sum;
    }
    return (sum2 - own2) / ((double)nonzero * (nonzero - 1));
}

/* Σ x_i by pairwise summation: within γ_⌈log2 n⌉·Σ|x_i| of the exact sum (Higham, Accuracy
   and Stability of Numerical Algorithms, §4.2), where a running sum is within γ_{n−1}.  The
   halves are n/2 and the rest down to four terms, summed there as the halving would: two
   levels of calls fewer, the same bits. */
static double pairwise_sum(int n, const double *x)
{
    switch (n) {
    case 4:
        return (x[0] + x[1]) + (x[2] + x[3]);
    case 3:
        return x[0] + (x[1] + x[2]);
    case 2:
        return x[0] + x[1];
    }
    if (n <= 1)
        return x[0];
    int half = n / 2;
    return pairwise_sum(half, x) + pairwise_sum(n - half, x + half);
}

static double pairwise_terms(int n)
{
    return ceil(log2((double)n));
}

bool Measure_centred_by_downdate(int T, int d, double relative_spread, double gram_frobenius)
{
    double u = DBL_EPSILON / 2, mu = relative_spread, phi = gram_frobenius;
    double gamma_d = Linalg_rounding_gamma(d), gamma_t = Linalg_rounding_gamma(T);
    double downdate = gamma_d + (4 * Linalg_rounding_gamma(pairwise_terms(T)) + 12 * u) * phi;
    double direct = gamma_d * mu * mu + 2 * mu * gamma_t + 4 * u * mu * mu;
    return !Measure_svd_cheap(T, d) && downdate <= direct;
}

/* Scratch of the centred downdate (T each), beyond the deflated route's in `lanczos`. */
typedef struct {
    double *diagonal, *row_mean;
    double mean;
} GramKept;

/* One strict triangle of gram (T×T) copied onto the other, tile by tile as column_gram's
   copy: at T = 1024 a column's consecutive entries of the upper triangle are 8 KiB apart,
   all in one set of the L1 cache, so a column-by-column copy misses on nearly every write. */
static void copy_triangle(int T, double *gram, bool lower_to_upper)
{
    for (int i0 = 0; i0 < T; i0 += TRANSPOSE_TILE) {
        int i1 = i0 + TRANSPOSE_TILE < T ? i0 + TRANSPOSE_TILE : T;
        for (int j0 = 0; j0 < i1; j0 += TRANSPOSE_TILE)
            for (int i = i0; i < i1; i++) {
                double *upper = gram + (size_t)i * T; /* column i above row i */
                int j1 = j0 + TRANSPOSE_TILE < i ? j0 + TRANSPOSE_TILE : i;
                for (int j = j0; j < j1; j++) {
                    double *lower = gram + i + (size_t)j * T; /* row i left of column i */
                    if (lower_to_upper)
                        upper[j] = *lower;
                    else
                        *lower = upper[j];
                }
            }
    }
}

void gram_mirror(int T, double *gram, double *diagonal)
{
    for (int j = 0; j < T; j++)
        diagonal[j] = gram[j + (size_t)j * T];
    copy_triangle(T, gram, true);
}

void gram_restore(int T, double *gram, const double *diagonal)
{
    for (int j = 0; j < T; j++)
        gram[j + (size_t)j * T] = diagonal[j];
    copy_triangle(T, gram, false);
}

/* X's Gram matrix kept through gram_rank for the downdate: its lower triangle mirrored into the
   upper one, which no route reads or writes but the same mirror (the flat route's proof at
   T > d, measure_flat.c's proof_in_place; dsyevd 'L' references the lower triangle alone;
   so does the deflated route's dsyrk at T ≤ d, while at T > d its transposed copy overwrites
   all of it: Measure_tokens_sharing forms the centred Gram matrix directly then; a collapsed
   X of one direction keeps μ large unless its tokens are equal), the diagonal apart; its row means
   r = Ĝ1/T (row i is column i, whole once mirrored) and their mean s = 1ᵀĜ1/T², each summed
   pairwise. */
static void keep_gram(int T, double *gram, GramKept *k)
{
    gram_mirror(T, gram, k->diagonal);
    for (int i = 0; i < T; i++)
        k->row_mean[i] = pairwise_sum(T, gram + (size_t)i * T) / T;
    k->mean = pairwise_sum(T, k->row_mean) / T;
}

/* The lower triangle of the centred Gram matrix P Ĝ P / μ² (P = I − 11ᵀ/T, μ the relative
   spread, so that its trace is ≈ 1 as the direct route's) from what keep_gram kept:
   (Ĝ_ij − r_i − r_j + s)/μ², Ĝ_ij (i > j) read from the upper triangle. */
static void downdated_gram(int T, double *gram, const GramKept *k, double spread)
{
    double scale = 1.0 / (spread * spread);
    for (int j = 0; j < T; j++) {
        double *col = gram + (size_t)j * T;
        col[j] = (k->diagonal[j] - k->row_mean[j] - k->row_mean[j] + k->mean) * scale;
        for (int i = j + 1; i < T; i++)
            col[i] = (gram[j + (size_t)i * T] - k->row_mean[i] - k->row_mean[j] + k->mean) * scale;
    }
}

/* unit ← (x/norm − 1x̄ᵀ)/spread, the centred tokens at unit Frobenius norm, from x itself
   (unit may have been destroyed), with the column means computed as for μ. */
static void centre_tokens(int T, int d, const double *x, double norm, double spread, double *unit)
{
    for (int j = 0; j < d; j++) {
        double *col = unit + (size_t)j * T;
        double mean = 0;
        for (int i = 0; i < T; i++) {
            col[i] = x[i + (size_t)j * T] / norm;
            mean += col[i];
        }
        mean /= T;
        for (int i = 0; i < T; i++)
            col[i] = (col[i] - mean) / spread;
    }
}

bool Measure_spread_resolved(double spread, double squares)
{
    return spread >= MEASURE_SIMILARITY_RESOLUTION * MEASURE_SIMILARITY_RESOLUTION * squares;
}

bool Measure_rank_one_resolved(double energy_off_top)
{
    return isnan(energy_off_top) || Measure_spread_resolved(energy_off_top, 1.0);
}

/* Column by column: its mean, then its squares about the mean and about 0 added to the two
   sums.  Each is a chain of dependent additions, so the next column's sum for its mean goes
   beside this column's squares, a third chain in the same pass: each sum in the order of a
   column-by-column loop, in one pass instead of two.  (The last column's "next" sum reads itself
   again and is not used.) */
double Measure_spread_squared(int T, int d, const double *x, double *squares)
{
    double spread = 0, sum_of_squares = 0, next_sum = 0;
    for (int i = 0; i < T && d > 0; i++)
        next_sum += x[i];
    for (int j = 0; j < d; j++) {
        const double *col = x + (size_t)j * T, *next = j + 1 < d ? col + T : col;
        double mean = next_sum / T;
        next_sum = 0;
        for (int i = 0; i < T; i++) {
            next_sum += next[i];
            sum_of_squares += col[i] * col[i];
            spread += (col[i] - mean) * (col[i] - mean);
        }
    }
    if (squares)
        *squares = sum_of_squares;
    return spread;
}

/* ‖X‖₂² bounded from the Gram matrix Ĝ of U = fl(X/ν) (T×T, inner products of d terms; ν the
   computed ‖X‖_F, any positive number would do).  Each entry of U is one rounded division, so
   X/ν = U + E with |E| ≤ u/(1 − u)·|U| entry by entry and
   ‖X‖₂ = ν‖X/ν‖₂ ≤ ν(‖U‖₂ + u/(1 − u)·‖U‖_F), where ‖U‖₂² ≤ β, the proved bound of
   gram_norm2_squared_bound, and ‖U‖_F² ≤ tr Ĝ·(1 + 2γ_{T+d}) (each diagonal entry is within γ_d
   of its exact value, their sum within γ_T).  Rounded up by (1 + 16u) past the few operations
   below.  Beside β's own slack (~n·u·β) the added term is 2u·‖U‖_F/‖U‖₂ ≤ 2u·√T relative.
   Its Lanczos runs on Ĝ from the route's start (lanczos_start): in the measure's scratch
   (measure_lanczos, or NULL) where b->lanczos is that buffer, whose steps the route then carries
   on (the same bits, not taken twice), else in b->lanczos apart. */
static int input_bound(Linalg *la, int T, int d, double norm, const double *gram,
                       MeasureInputBound *b, Lanczos *measure_lanczos, TopProof *keep)
{
    Lanczos apart, *l = measure_lanczos;
    if (!l || l->basis != b->lanczos) {
        apart = lanczos_carve(b->lanczos, T);
        l = &apart;
    }
    double unit_bound;
    int info = gram_norm2_squared_bound(la, T, d, gram, b->factor, l, &unit_bound, keep);
    if (info || isnan(unit_bound))
        return info;
    double u = DBL_EPSILON / 2;
    double frobenius = sqrt(gram_trace(T, gram) * (1 + 2 * Linalg_rounding_gamma(T + d)));
    double top = norm * (sqrt(unit_bound) + u / (1 - u) * frobenius);
    b->norm_squared = top * top * (1 + 16 * u);
    return 0;
}

int Measure_tokens(Linalg *la, int T, int d, const double *x, double log_scale, double *unit,
                   double *gram, double *eig, double *lanczos, Measures *m)
{
    MeasureSharing none = {.bound = NULL};
    return Measure_tokens_sharing(la, T, d, x, log_scale, unit, gram, eig, lanczos, &none, m);
}

/* X's measures, then the centred ones, in the order their shared buffers allow (longer than a
   screen: split, each half would take a dozen of them). */
int Measure_tokens_sharing(Linalg *la, int T, int d, const double *x, double log_scale,
                           double *unit, double *gram, double *eig, double *lanczos,
                           MeasureSharing *share, Measures *m)
{
    MeasureInputBound *bound = share->bound;
    size_t td = (size_t)T * d;
    share->centred_downdated = share->centred_formed_unplanned = false;
    share->flat_proofs = 0;
    if (bound)
        bound->norm_squared = NAN;
    double norm = cblas_dnrm2((int)td, x, 1);
    m->stable_rank = m->stable_rank_minus_one = m->log10_norm = m->log_similarity = NAN;
    TokenGeometry *g = &m->geometry;
    *g = (TokenGeometry){NAN, NAN, NAN, NAN, NAN};
    m->route = MEASURE_ROUTE_NONE;
    if (!(norm > 0) || !isfinite(norm))
        return 0;
    m->log10_norm = log10(norm) + log_scale / M_LN10;
    double rms = exp(log(norm) + log_scale - 0.5 * log((double)T));
    g->token_rms = isfinite(rms) ? rms : NAN;
    unit_tokens(td, x, norm, unit);

    double similarity2 = Measure_spread_squared(T, d, unit, NULL), spread = sqrt(similarity2);
    g->relative_spread = spread;
    /* Below this, μ/‖X‖_F is round-off (the tokens agree to ~1e-12 of their size), and
       μ(X_ℓ)/μ(X_0) would only measure the growth of ‖X‖: undefined instead. */
    bool spread_resolved = Measure_spread_resolved(similarity2, 1.0); /* Σ‖u_i‖² = 1 */
    if (spread_resolved)
        m->log_similarity = 0.5 * log(similarity2) + log(norm) + log_scale;
    g->token_cosine_mean = cosine_mean(T, d, unit, eig);

    /* The eigenvalues of the Gram matrix XXᵀ are s_i(X)², so sr = Σ λ_i² / λ_max².  Their
       absolute error is ~eps·λ_max, so sr − 1 stays accurate far below 1e-13. */
    GramRank rank = {NAN, NAN, MEASURE_ROUTE_NONE};
    /* The flat-spectrum route above the gate, with unit as its proof's T×T scratch where it
       holds T×T (T ≤ d), else Ĝ's own lower triangle. */
    bool flat_ok = lanczos && !Measure_svd_cheap(T, d);
    double *flat_factor = T <= d ? unit : NULL;
    /* (eig holds the input bound's Lanczos vector from its proof to the flat route's) */
    TopProof proof = {.vector = eig};
    FlatRoute flat = {.proof = &proof,
                      .factor = flat_factor,
                      .x = x,
                      .norm = norm,
                      .proofs = &share->flat_proofs};
    /* The Lanczos routes' scratch (NULL: all eigenvalues), the input bound's too where shared. */
    Lanczos measure_lanczos = lanczos ? lanczos_carve(lanczos, T) : (Lanczos){.basis = NULL};
    Lanczos *route_lanczos = lanczos ? &measure_lanczos : NULL;
    int info = Linalg_gram(la, T, d, unit, gram);
    /* ‖Ĝ‖_F², once: the downdate's choice and the Lanczos routes read it (without Lanczos,
       neither). */
    double gram2 = !info && lanczos ? gram_norm2(T, gram) : NAN;
    if (!info && bound) /* before gram_rank, whose routes may destroy the Gram matrix */
        info = input_bound(la, T, d, norm, gram, bound, route_lanczos, &proof);
    /* The centred Gram matrix from this one where that is as accurate as forming it
       (docs/model.md §2); the scratch beyond Lanczos's and the deflated route's (right). */
    double *right = NULL;
    GramKept kept = {NULL, NULL, 0};
    if (lanczos) {
        right = lanczos + Measure_lanczos_size(T);
        kept.diagonal = right + d;
        kept.row_mean = kept.diagonal + T;
    }
    share->centred_downdated = !info && lanczos && share->centred_from_gram &&
                               Measure_centred_by_downdate(T, d, spread, sqrt(gram2));
    if (share->centred_downdated)
        keep_gram(T, gram, &kept);
    if (!info)
        info = gram_rank(la, T, d, unit, gram, gram2, eig, route_lanczos, right, true,
                         flat_ok ? &flat : NULL, &rank);
    if (info || isnan(rank.rest))
        return info;
    m->route = rank.route;
    m->stable_rank_minus_one = rank.rest;
    m->stable_rank = 1.0 + rank.rest;
    g->energy_off_top = rank.off_top;

    /* The same of X − 1x̄ᵀ; undefined (0/0) where the tokens agree to within round-off.  There
       its Gram matrix is formed all the same where the plan declares it (work.c; test_cost
       counts it), and not where the plan expects the downdate's passes and no Gram matrix
       (share->centred_from_gram), which Measure_centred_by_downdate refuses at such μ. */
    if (!spread_resolved && share->centred_from_gram)
        return 0;
    /* T > d: the deflated route's transposed copy went through the upper triangle that
       keep_gram kept (T ≤ d: its dsyrk writes the lower one alone, the diagonal is kept apart). */
    if (share->centred_downdated && rank.route == MEASURE_ROUTE_DEFLATED && T > d)
        share->centred_downdated = false;
    share->centred_formed_unplanned = share->centred_from_gram && !share->centred_downdated;
    if (share->centred_downdated) {
        downdated_gram(T, gram, &kept, spread);
    } else {
        centre_tokens(T, d, x, norm, spread > 0 ? spread : 1.0, unit);
        info = Linalg_gram(la, T, d, unit, gram);
    }
    if (info || !spread_resolved)
        return info;
    /* Only 1 + sr − 1 is reported of it, which below MEASURE_GRAM_FLOOR is 1 exactly in
       double whatever the route: X itself would change no bit. */
    GramRank centred = {NAN, NAN, MEASURE_ROUTE_NONE};
    flat = (FlatRoute){.factor = flat_factor, .proofs = &share->flat_proofs};
    gram2 = lanczos ? gram_norm2(T, gram) : NAN;
    if (route_lanczos)
        route_lanczos->held = 0; /* its steps were on X's Ĝ, not this one */
    info = gram_rank(la, T, d, unit, gram, gram2, eig, route_lanczos, right, false,
                     flat_ok ? &flat : NULL, &centred);
    if (!info)
        g->centred_stable_rank = 1.0 + centred.rest;
    return info;
}
