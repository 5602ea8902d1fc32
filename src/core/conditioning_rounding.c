/* A bound on the rounding of one product with K (or Kᵀ), computed alongside it from the
 * magnitudes the product meets (docs/model.md §8, "the rounding of one product"): Higham's
 * componentwise |fl(AB) − AB| ≤ γ_k·|A||B| (Accuracy and Stability of Numerical Algorithms,
 * §3.5) carried step by step through SaWork_jvp and SaWork_vjp, so that each step's error
 * is charged with its own sum's length and the data's own |·| products, where
 * SaWork_product_error charges every step with the longest and Frobenius norms.  The bounded
 * product is itself computed more accurately than SaWork_jvp/vjp's where the tokens share a
 * component: a row μ (0, the tokens' mean or their median row: SaWork_product_bounded) is
 * taken out of X before X·W_VO and X·Mᵀ (the centred route, docs/model.md §8), and what that
 * leaves, a row constant the softmax derivative all but removes and a rank-one term, is
 * added back as it is. */
#include "attnscope/conditioning.h"
#include "attnscope/layer.h"

#include "conditioning_internal.h"

#include "buffer_internal.h"
#include "dot2_internal.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The running bound of one product and what it reuses.  Per product: |v| (the input), the
   accumulated bound on |fl(K v) − K v| (componentwise), T×d, T×T and d×d scratch, the
   remainders' terms (RowTerms) and the candidate product.  Per block (cached until the next
   SaWork_prepare_heads), for each of the SA_CENTRINGS rows μ taken out of X (0, the tokens'
   mean row, their median row: no one of them gives the smallest bound at every layer), one
   block of centring_doubles, allocated when a product first tries that centring: per head
   the magnitudes (CACHES T×d), then two T×d arrays per head (laid out as the prepared
   products, heads one after the other) that are X·M's magnitudes |fl(X M)| and |X||M| in
   μ = 0's block (X·M is never centred: every centring reads them there) and the centred
   products fl(X̃ W_VO) and fl(X̃ Mᵀ) (X̃ = fl(X − 1μᵀ)) in the others (μ = 0's are the
   prepared w->xw and w->xmt themselves), then μ and per head the remainders' vectors
   (Remainder).  And per block, for every centring, the row deficits (2T per head). */
enum { BOUND_BUFFERS = 11 };

/* The product under way, which the hooks (called from SaWork_jvp/vjp) read: its centring, v,
   and the output the rank-one remainder joins.  Set by centred_product only while it runs. */
typedef struct {
    SaCentring centre;
    bool compensated; /* the compensated route: Dot2's prepared products and Ĝ (Ā) */
    const double *v;
    double *out;
} UnderWay;

struct ProductBound {
    size_t cap[BOUND_BUFFERS];          /* bound_plan's buffers' sizes, in its order */
    double *input, *error, *mag, *mag2; /* T×d */
    double *value_c, *error_c, *work;   /* T×T: |Ċ|, its bound then Ȧ's, scratch */
    double *weights;                    /* d×d: |W_VO,h| or |M_h| */
    double *terms, *candidate;          /* 6T: RowTerms; T×d: a centring's product */
    double *deficits_of_heads;          /* 2T per head: Remainder's deficit, deficit_error */
    double *centring[SA_CENTRINGS];     /* centring_doubles each, once built */
    size_t centring_cap[SA_CENTRINGS];
    /* per part of K and direction: the centring a search that went past μ = 0 settled on,
       which the block's later products of that part and direction take alone; −1 where none
       did (SaWork_product_bounded) */
    int kept[PARTS][2];
    /* per part of K: the largest ‖fl(K v)‖/‖v‖ of the block's bounded products so far, about
       a lower bound on its ‖·‖₂ (the first is s_max's witness, SaWork_extreme) */
    double reach[PARTS];
    bool cached;              /* the block's centring 0 and kept[] are set */
    bool built[SA_CENTRINGS]; /* which centrings' blocks are */
    bool deficits;            /* the block's row deficits are (cache_remainders) */
    /* The compensated route's block (compensated_doubles), for one centring at a time:
       which (−1 none since the block's SaWork_prepare_heads) */
    double *compensated;
    size_t compensated_cap;
    int compensated_for;
    bool compensated_xm; /* fl(X M) built for this block (X·M is never centred) */
    double gamma_sum;    /* γ_N of the output's sum, N its terms */
    UnderWay under_way;
};

/* The magnitudes per head in every centring's block: |fl(X̃ W_VO)|, |X̃||W_VO| (which bounds
   its rounding as γ_{d+1}|X̃||W_VO|, X̃'s own included), |fl(X̃ Mᵀ)|, |X̃||Mᵀ|. */
enum { CACHE_XW, CACHE_XW_ROUND, CACHE_XMT, CACHE_XMT_ROUND, CACHES };

/* What taking μ out leaves, per head: fl(μᵀW_VO) and |μ|ᵀ|W_VO|, fl(M μ) and |M||μ| (d each),
   the stored softmax's row deficits ρ̂ ≈ ρ = 1 − Σ_j a_ij and a bound on |ρ̂ − ρ| (T each). */
typedef struct {
    double *value_row, *value_row_round, *logit_row, *logit_row_round, *deficit, *deficit_error;
} Remainder;

/* The product under way's, for its head under way (T each): the row constant k̂ of Ċ or Ā and
   a bound on its error, k̂ ρ̂ and its bound, the exact derivative's row sums q̂ ≈ D·1 and a
   bound on their error. */
typedef struct {
    double *k, *k_error, *p, *p_error, *q, *q_error;
} RowTerms;

/* The compensated route's block: per product kind (fl(X̃ W_VO), fl(X̃ Mᵀ), fl(X M), each by
   Dot2) and stage (the product, its magnitude, the bound on its error), all heads one after the
   other (so that the products are laid out as the prepared ones); then the scratch of Dot2's
   splits (two factors, hi and lo) and its sum and carry. */
enum { COMP_XW, COMP_XMT, COMP_XM, COMP_KINDS };
enum { STAGE_PRODUCT, STAGE_MAGNITUDE, STAGE_ERROR, STAGES };

static size_t compensated_doubles(int T, int d, int heads)
{
    size_t td = (size_t)T * d;
    return COMP_KINDS * STAGES * td * (size_t)heads + 4 * td + 2 * (size_t)T;
}

static double *compensated_part(const SaWork *w, int kind, int stage, int h)
{
    size_t td = (size_t)w->b[0].T * w->b[0].d, heads = (size_t)w->heads;
    return w->bound->compensated + (((size_t)stage * COMP_KINDS + kind) * heads + h) * td;
}

/* The compensated block's scratch: splits[0..3] T×d each, then sum and carry (T each). */
static double *compensated_scratch(const SaWork *w)
{
    return compensated_part(w, 0, STAGES, 0);
}

static bool compensating(const SaWork *w)
{
    return w->bound->under_way.compensated;
}

static size_t centring_doubles(int T, int d, int heads)
{
    size_t td = (size_t)T * d;
    return (CACHES + 2) * td * (size_t)heads + (size_t)d + (size_t)heads * 4 * (size_t)d;
}

/* Centring `centre`'s block from `offset_td_heads` blocks of T×d per head on (the layout
   above). */
static double *centring_part(const SaWork *w, SaCentring centre, size_t offset_td_heads)
{
    size_t td = (size_t)w->b[0].T * w->b[0].d;
    return w->bound->centring[centre] + offset_td_heads * td * (size_t)w->heads;
}

/* fl(X̃ W_VO) and fl(X̃ Mᵀ) of a centring, all heads: μ = 0's are the prepared products. */
static double *centred_xw(const SaWork *w, SaCentring centre)
{
    return centre == SA_CENTRE_NONE ? w->xw : centring_part(w, centre, CACHES);
}

static double *centred_xmt(const SaWork *w, SaCentring centre)
{
    return centre == SA_CENTRE_NONE ? w->xmt : centring_part(w, centre, CACHES + 1);
}

/* |fl(X M_h)| (round false) or |X||M_h| (round true), from μ = 0's block; on the compensated
   route its |fl(X M_h)| and the bound on its error. */
static double *xm_magnitude(const SaWork *w, int h, bool round)
{
    if (compensating(w))
        return compensated_part(w, COMP_XM, round ? STAGE_ERROR : STAGE_MAGNITUDE, h);
    size_t td = (size_t)w->b[0].T * w->b[0].d;
    return centring_part(w, SA_CENTRE_NONE, CACHES + (round ? 1 : 0)) + td * (size_t)h;
}

static double *centre_row(const SaWork *w, SaCentring centre)
{
    return centring_part(w, centre, CACHES + 2);
}

static RowTerms row_terms(const SaWork *w)
{
    double *at = w->bound->terms;
    size_t T = (size_t)w->b[0].T;
    return (RowTerms){at, at + T, at + 2 * T, at + 3 * T, at + 4 * T, at + 5 * T};
}

/* A head's remainders in centring `centre`'s block; the row deficits, which depend on the
   softmax alone, the block's for every centring. */
static Remainder head_remainder(const SaWork *w, SaCentring centre, int h)
{
    size_t T = (size_t)w->b[0].T, d = (size_t)w->b[0].d;
    double *at = centre_row(w, centre) + d + 4 * d * (size_t)h;
    double *deficit = w->bound->deficits_of_heads + 2 * T * (size_t)h;
    return (Remainder){at, at + d, at + 2 * d, at + 3 * d, deficit, deficit + T};
}

void ProductBound_forget(struct ProductBound *b)
{
    if (b)
        b->cached = false;
}

/* A magnitude (CACHE_*) of head h in centring `centre`'s block; on the compensated route
   the compensated product's magnitude and the bound on its error instead of the ..._ROUND
   |X̃||·| (the route's products are of the one centring its block was built for). */
static double *cached(const SaWork *w, SaCentring centre, int h, int which)
{
    if (compensating(w)) {
        bool logits = which == CACHE_XMT || which == CACHE_XMT_ROUND;
        bool round = which == CACHE_XW_ROUND || which == CACHE_XMT_ROUND;
        return compensated_part(w, logits ? COMP_XMT : COMP_XW,
                                round ? STAGE_ERROR : STAGE_MAGNITUDE, h);
    }
    size_t td = (size_t)w->b[0].T * w->b[0].d;
    return centring_part(w, centre, 0) + td * ((size_t)CACHES * h + which);
}

/* out[k] = |in[k]| over `count` doubles. */
static void absolute(size_t count, const double *in, double *out)
{
    for (size_t k = 0; k < count; k++)
        out[k] = fabs(in[k]);
}

/* out = |X|·|F| (T×d, F d×d, transposed: |F|ᵀ), |F| through the bound's d×d scratch. */
static void times_absolute(const SaWork *w, const double *abs_x, const double *f, bool transposed,
                           double *out)
{
    int T = w->b[0].T, d = w->b[0].d;
    absolute((size_t)d * d, f, w->bound->weights);
    cblas_dgemm(CblasColMajor, CblasNoTrans, transposed ? CblasTrans : CblasNoTrans, T, d, d, 1.0,
                abs_x, T, w->bound->weights, d, 0.0, out, T);
}

/* ρ̂ ≈ ρ_i = 1 − Σ_j a_ij of row i of the stored softmax a (T×T, column-major) by Sum2 (T.
   Ogita, S. M. Rump and S. Oishi, "Accurate sum and dot product", SIAM J. Sci. Comput. 26,
   2005, Algorithm 4.4: TwoSum's error terms summed beside), whose Proposition 4.5 puts it
   within u|ρ| + γ_T²·(1 + Σ_j a_ij) of ρ for these T + 1 terms; *error bounds that with
   |ρ| ≤ |ρ̂| + error and Σ_j a_ij ≤ its recursive sum/(1 − γ_T) (non-negative terms).  Plain
   summation would leave ρ̂ ~ Tu with an error as large, and ρ multiplies the terms that
   taking μ out leaves, whose size is the rounding the centring removes. */
static double row_deficit(const double *a, int T, int i, double *error)
{
    double sum = 1.0, carried = 0.0, mass = 0.0, u = DBL_EPSILON / 2;
    for (int j = 0; j < T; j++) {
        double term = -a[i + (size_t)j * T], next = sum + term, z = next - sum;
        carried += (sum - (next - z)) + (term - z);
        sum = next;
        mass += a[i + (size_t)j * T];
    }
    double deficit = sum + carried, gamma = Linalg_rounding_gamma(T);
    *error = (u * fabs(deficit) + gamma * gamma * (1.0 + mass / (1.0 - gamma))) / (1.0 - u);
    return deficit;
}

/* A head's remainders (Remainder) for the centring's μ: fl(μᵀW_VO), fl(M μ) and their |·|
   magnitudes, each within γ_d of the latter; the stored softmax's row deficits, once per
   block (the first centring past μ = 0 to be built).
   abs_mu: |μ|. */
static void cache_remainders(SaWork *w, SaCentring centre, int h, const double *abs_mu)
{
    const SaBlock *b = &w->b[h];
    int T = b->T, d = b->d;
    Remainder r = head_remainder(w, centre, h);
    const double *mu = centre_row(w, centre);
    cblas_dgemv(CblasColMajor, CblasTrans, d, d, 1.0, b->wvo, d, mu, 1, 0.0, r.value_row, 1);
    absolute((size_t)d * d, b->wvo, w->bound->weights);
    cblas_dgemv(CblasColMajor, CblasTrans, d, d, 1.0, w->bound->weights, d, abs_mu, 1, 0.0,
                r.value_row_round, 1);
    if (!b->m)
        return;
    cblas_dgemv(CblasColMajor, CblasNoTrans, d, d, 1.0, b->m, d, mu, 1, 0.0, r.logit_row, 1);
    absolute((size_t)d * d, b->m, w->bound->weights);
    cblas_dgemv(CblasColMajor, CblasNoTrans, d, d, 1.0, w->bound->weights, d, abs_mu, 1, 0.0,
                r.logit_row_round, 1);
    const double *a = w->a + (size_t)T * T * h;
    for (int i = 0; !w->bound->deficits && i < T; i++)
        r.deficit[i] = row_deficit(a, T, i, &r.deficit_error[i]);
}

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The centring's μ: 0, the tokens' mean row, or their median row (each column's median makes
   Σ_i |X̃_iq| the least, where the mean is the common row of collapsing tokens and minimises
   ‖X̃‖_F).  scratch: T. */
static void choose_centre(const SaWork *w, SaCentring centre, double *mu, double *scratch)
{
    int T = w->b[0].T, d = w->b[0].d;
    const double *x = w->b[0].x;
    for (int q = 0; q < d; q++) {
        const double *column = x + (size_t)q * T;
        switch (centre) {
        case SA_CENTRE_MEAN: {
            double sum = 0;
            for (int i = 0; i < T; i++)
                sum += column[i];
            mu[q] = sum / T;
            break;
        }
        case SA_CENTRE_MEDIAN:
            memcpy(scratch, column, sizeof(double) * T);
            qsort(scratch, (size_t)T, sizeof(double), ascending);
            mu[q] = scratch[(T - 1) / 2];
            break;
        default:
            mu[q] = 0.0;
        }
    }
}

/* X̃ = fl(X − 1μᵀ), T×d. */
static void take_out_row(const SaWork *w, const double *mu, double *centred)
{
    int T = w->b[0].T, d = w->b[0].d;
    const double *x = w->b[0].x;
    for (int q = 0; q < d; q++)
        for (int i = 0; i < T; i++)
            centred[i + (size_t)q * T] = x[i + (size_t)q * T] - mu[q];
}

/* A centring's block (struct ProductBound): μ, X̃ = fl(X − 1μᵀ) (in the bound's error, |X̃|
   in mag2, |X| in mag), then per head the centred products (μ = 0's are the prepared ones,
   bit for bit, and its block holds X·M's magnitudes instead), the magnitudes and the
   remainders.  μ is any vector as far as the proofs go.  Uses the bound's T×d scratch. */
static int build_centring(SaWork *w, SaCentring centre)
{
    struct ProductBound *pb = w->bound;
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d, doubles = centring_doubles(T, d, w->heads);
    if (pb->centring_cap[centre] < doubles) {
        if (Buffer_grow(&pb->centring[centre], doubles))
            return -1;
        pb->centring_cap[centre] = doubles;
    }
    const double *x = w->b[0].x;
    double *mu = centre_row(w, centre), *centred = pb->error, *abs_mu = pb->input;
    choose_centre(w, centre, mu, pb->mag);
    for (int q = 0; q < d; q++)
        abs_mu[q] = fabs(mu[q]);
    take_out_row(w, mu, centred);
    absolute(td, x, pb->mag);
    absolute(td, centred, pb->mag2);
    for (int h = 0; h < w->heads; h++) {
        const SaBlock *b = &w->b[h];
        size_t at = td * (size_t)h;
        double *xw = centred_xw(w, centre) + at, *xmt = centred_xmt(w, centre) + at;
        if (centre != SA_CENTRE_NONE)
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, centred, T, b->wvo,
                        d, 0.0, xw, T);
        absolute(td, xw, cached(w, centre, h, CACHE_XW));
        times_absolute(w, pb->mag2, b->wvo, false, cached(w, centre, h, CACHE_XW_ROUND));
        if (b->m) {
            if (centre == SA_CENTRE_NONE) {
                absolute(td, w->xm + at, xm_magnitude(w, h, false));
                times_absolute(w, pb->mag, b->m, false, xm_magnitude(w, h, true));
            } else {
                cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, d, d, 1.0, centred, T, b->m,
                            d, 0.0, xmt, T);
            }
            absolute(td, xmt, cached(w, centre, h, CACHE_XMT));
            times_absolute(w, pb->mag2, b->m, true, cached(w, centre, h, CACHE_XMT_ROUND));
        }
        if (centre != SA_CENTRE_NONE) /* μ = 0 leaves nothing to add back */
            cache_remainders(w, centre, h, abs_mu);
    }
    pb->built[centre] = true;
    pb->deficits |= centre != SA_CENTRE_NONE;
    return 0;
}

/* The compensated route's prepared product of one kind and head by Dot2 from the split left
   factor (X̃ or X) and its bound: |P̂ − P| ≤ (u|P̂| + γ_d²|L||F|)/(1 − u) (Dot2's u|P| +
   γ_d²|L||F|, |P| ≤ |P̂| + the error), plus, where L = X̃ = fl(X − 1μᵀ), X̃'s own rounding
   carried through F: |X̃ − (X − 1μᵀ)| ≤ u|X̃|/(1 − u).  abs_left: |L|, in pb->mag2 or mag. */
static void compensated_prepared(SaWork *w, int kind, int h, const double *f, bool centred,
                                 const double *hi, const double *lo, const double *abs_left)
{
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d;
    bool transposed = kind == COMP_XMT; /* X̃ Mᵀ: F read along its rows */
    Dot2Part part = {hi, lo, f, transposed ? 1 : (size_t)d, transposed ? (size_t)d : 1};
    double *scratch = compensated_scratch(w) + 4 * td;
    double *product = compensated_part(w, kind, STAGE_PRODUCT, h),
           *magnitude = compensated_part(w, kind, STAGE_MAGNITUDE, h),
           *error = compensated_part(w, kind, STAGE_ERROR, h);
    Dot2_products(T, d, d, &part, 1, 1.0, scratch, scratch + T, product);
    absolute(td, product, magnitude);
    times_absolute(w, abs_left, f, transposed, error);
    double u = DBL_EPSILON / 2, gamma = Linalg_rounding_gamma(d);
    double abs_product_factor = gamma * gamma + (centred ? u : 0.0);
    for (size_t k = 0; k < td; k++)
        error[k] = (u * magnitude[k] + abs_product_factor * error[k]) / (1.0 - u);
}

/* The compensated route's block for `centre`: X̃ = fl(X − 1μᵀ) (μ from the centring's block,
   built) split for Dot2, then per head fl(X̃ W_VO) and fl(X̃ Mᵀ) with their magnitudes and
   bounds; and, the first time in the block, X split and fl(X M)'s.  Uses the bound's T×d
   scratch. */
static int build_compensated(SaWork *w, SaCentring centre)
{
    struct ProductBound *pb = w->bound;
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d, doubles = compensated_doubles(T, d, w->heads);
    if (pb->compensated_cap < doubles) {
        if (Buffer_grow(&pb->compensated, doubles))
            return -1;
        pb->compensated_cap = doubles;
        pb->compensated_xm = false;
    }
    const double *x = w->b[0].x, *mu = centre_row(w, centre);
    double *centred = pb->error, *split = compensated_scratch(w);
    bool moved = centre != SA_CENTRE_NONE;
    bool xm = !pb->compensated_xm;
    take_out_row(w, mu, centred);
    absolute(td, centred, pb->mag2);
    Dot2_split(td, centred, split, split + td);
    if (xm) {
        absolute(td, x, pb->mag);
        Dot2_split(td, x, split + 2 * td, split + 3 * td);
    }
    for (int h = 0; h < w->heads; h++) {
        const SaBlock *b = &w->b[h];
        compensated_prepared(w, COMP_XW, h, b->wvo, moved, split, split + td, pb->mag2);
        if (!b->m)
            continue;
        compensated_prepared(w, COMP_XMT, h, b->m, moved, split, split + td, pb->mag2);
        if (xm)
            compensated_prepared(w, COMP_XM, h, b->m, false, split + 2 * td, split + 3 * td,
                                 pb->mag);
    }
    pb->compensated_for = centre;
    pb->compensated_xm = true;
    return 0;
}

/* A new block: μ = 0's centring now (every centring reads X·M's magnitudes there), the others
   when a product first tries them. */
static int cache_block(SaWork *w)
{
    struct ProductBound *b = w->bound;
    for (int c = 0; c < SA_CENTRINGS; c++)
        b->built[c] = false;
    b->deficits = false;
    for (int p = 0; p < PARTS; p++) {
        b->kept[p][0] = b->kept[p][1] = -1;
        b->reach[p] = 0.0;
    }
    b->compensated_for = -1;
    b->compensated_xm = false;
    if (build_centring(w, SA_CENTRE_NONE))
        return -1;
    b->cached = true;
    return 0;
}

/* A bound this far below its product's norm moves the witnesses' ratios (SaWork_witness) by at
   most as much, relative: a search stops at the first centring whose bound is (μ = 0 first,
   then the mean). */
#define CENTRING_UNNEEDED 1e-6

/* The share of ρ‖v‖ (ρ about ‖K‖₂) above which a product's bound is too weak for its
   witness, so that the compensated route runs: a bound of ρ‖v‖/2 already halves what s_max's
   witness proves, where one just under ρ‖v‖ (92.6 against |K v| = 94.2 in
   test_compensated_route_bounds_layer_seven) proves almost nothing.  At the default size the
   route runs at the same 6 products for any share from 0.1 to 1 (bench/README.md). */
#define COMPENSATION_NEEDED 0.5

/* The bound's scratch for T, d and `heads`, one list for its growth and its count (the
   centrings' blocks grow when built, build_centring). */
static void bound_plan(struct ProductBound *b, int T, int d, int heads,
                       LayerBuffer plan[BOUND_BUFFERS])
{
    size_t td = (size_t)T * d, tt = (size_t)T * T, dd = (size_t)d * d;
    const LayerBuffer list[BOUND_BUFFERS] = {{&b->input, td},
                                             {&b->error, td},
                                             {&b->mag, td},
                                             {&b->mag2, td},
                                             {&b->value_c, tt},
                                             {&b->error_c, tt},
                                             {&b->work, tt},
                                             {&b->weights, dd},
                                             {&b->terms, 6 * (size_t)T},
                                             {&b->candidate, td},
                                             {&b->deficits_of_heads, 2 * (size_t)T * heads}};
    memcpy(plan, list, sizeof list);
}

void ProductBound_free(struct ProductBound *b)
{
    if (!b)
        return;
    LayerBuffer plan[BOUND_BUFFERS];
    bound_plan(b, 0, 0, 0, plan);
    for (int i = 0; i < BOUND_BUFFERS; i++)
        free(*plan[i].buffer);
    for (int c = 0; c < SA_CENTRINGS; c++)
        free(b->centring[c]);
    free(b->compensated);
    free(b);
}

size_t SaWork_product_bounded_doubles(int T, int d, int heads)
{
    struct ProductBound none;
    LayerBuffer plan[BOUND_BUFFERS];
    bound_plan(&none, T, d, heads, plan);
    size_t doubles =
        SA_CENTRINGS * centring_doubles(T, d, heads) + compensated_doubles(T, d, heads);
    for (int i = 0; i < BOUND_BUFFERS; i++)
        doubles += plan[i].doubles;
    return doubles;
}

static int bound_grow(SaWork *w)
{
    if (!w->bound && !(w->bound = calloc(1, sizeof *w->bound)))
        return -1;
    struct ProductBound *b = w->bound;
    LayerBuffer plan[BOUND_BUFFERS];
    bound_plan(b, w->b[0].T, w->b[0].d, w->heads, plan);
    for (int i = 0; i < BOUND_BUFFERS; i++) {
        if (plan[i].doubles <= b->cap[i])
            continue;
        if (Buffer_grow(plan[i].buffer, plan[i].doubles))
            return -1;
        b->cap[i] = plan[i].doubles;
    }
    return 0;
}

/* Where the hooks follow every step: the plain products (softmax, or A not moving with X),
   without QK-norm, RoPE, the soft-cap, a branch LN or a centring that moves with X.
   Elsewhere SaWork_product_bounded falls back to η. */
static bool bound_follows(const SaWork *w)
{
    if (w->shaped_logits || w->branch_norm) /* the cap shapes the logits too */
        return false;
    for (int h = 0; h < w->heads; h++) {
        bool moves = w->b[h].m != NULL;
        if (moves && w->shape.c && w->shape.c->attention != ATTENTION_SOFTMAX)
            return false;
        if (moves && w->shape.c && w->b[h].mean_centred)
            return false;
    }
    return true;
}

/* The output's terms per entry: each head's value path (T products) and the derivative's
   (T, or 2T through Ċ's two halves in the VJP) and, where μ ≠ 0, its rank-one remainder (a
   product of three, counted as two); two more for the logit scale's product and the zero the sum
   starts from. */
static double output_terms(const SaWork *w, bool transposed, SaCentring centre)
{
    double T = w->b[0].T, terms = 2;
    for (int h = 0; h < w->heads; h++) {
        if (w->part != PART_PERTURBATION)
            terms += T;
        if (w->b[h].m && w->part != PART_DOMINANT)
            terms += (transposed ? 2 * T : T) + (centre != SA_CENTRE_NONE ? 2 : 0);
    }
    return terms;
}

/* What the ..._ROUND magnitudes are multiplied by to bound the prepared products' rounding:
   γ_{d+1} of |X̃||·| (X̃'s own subtraction, γ_1, included; the plain X·M takes it too,
   γ_d ≤ γ_{d+1}); 1 on the compensated route, whose caches hold the bounds themselves. */
static double gamma_prepared(const SaWork *w)
{
    return compensating(w) ? 1.0 : Linalg_rounding_gamma(w->b[0].d + 1.0);
}

/* Value path: fl(A_p t̂) summed into the output, t̂ = fl(Ẋ W) with |t̂ − ẊW| ≤ γ_d|Ẋ||W|:
   error += |A_p|·(γ_N|t̂| + γ_d|Ẋ||W|) (A_pᵀ and Wᵀ in the VJP). */
void ProductBound_value(SaWork *w, int h, bool transposed)
{
    struct ProductBound *b = w->bound;
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    times_absolute(w, b->input, w->b[h].wvo, transposed, b->mag2);
    double gamma_d = Linalg_rounding_gamma(d);
    for (size_t k = 0; k < td; k++)
        b->mag[k] = b->gamma_sum * fabs(w->tmp[k]) + gamma_d * b->mag2[k];
    absolute(tt, w->ap + tt * (size_t)h, b->work);
    cblas_dgemm(CblasColMajor, transposed ? CblasTrans : CblasNoTrans, CblasNoTrans, T, d, T, 1.0,
                b->work, T, b->mag, T, 1.0, b->error, T);
}

/* The row constant that taking μ out of X leaves in the derivative's input, k̂ and a bound on
   its error: in the JVP Ẋ M Xᵀ = Ẋ M X̃ᵀ + (Ẋ M μ)1ᵀ, k = s·Ẋ·fl(M μ); in the VJP
   Ȳ (X W_VO)ᵀ = Ȳ (X̃ W_VO)ᵀ + (Ȳ W_VOᵀ μ)1ᵀ, k = Ȳ·fl(μᵀW_VO).  Either vector f̂ is within
   γ_d|F||μ| (Remainder's round) of the exact, and the d products and s add γ_{d+1}|v||f̂|. */
static void row_constant(SaWork *w, int h, bool transposed)
{
    struct ProductBound *b = w->bound;
    int T = w->b[0].T, d = w->b[0].d;
    if (b->under_way.centre == SA_CENTRE_NONE)
        return;
    Remainder r = head_remainder(w, b->under_way.centre, h);
    RowTerms t = row_terms(w);
    double s = transposed ? 1.0 : w->b[h].scale, gamma = Linalg_rounding_gamma(d + 1.0);
    const double *f = transposed ? r.value_row : r.logit_row;
    const double *f_round = transposed ? r.value_row_round : r.logit_row_round;
    cblas_dgemv(CblasColMajor, CblasNoTrans, T, d, s, b->under_way.v, T, f, 1, 0.0, t.k, 1);
    double *magnitude = b->weights; /* d */
    for (int q = 0; q < d; q++)
        magnitude[q] = gamma * (fabs(f[q]) + f_round[q]);
    cblas_dgemv(CblasColMajor, CblasNoTrans, T, d, fabs(s), b->input, T, magnitude, 1, 0.0,
                t.k_error, 1);
}

/* Dot2's factor on Σ|x_q||y_q| for n terms, the rounding to u|result| taken out:
   |res − xᵀy| ≤ u|xᵀy| + γ_n²Σ ≤ u|res| + u|res − xᵀy| + γ_n²Σ, so within
   (u|res| + γ_n²Σ)/(1 − u); with the scaling's u, γ_2|fl(s·res)| bounds the first term. */
static double dot2_gamma(int n)
{
    double gamma = Linalg_rounding_gamma(n);
    return gamma * gamma / (1.0 - DBL_EPSILON / 2);
}

/* The compensated route's Ĝ = fl(s·Dot2(Ẋ·fl(X̃Mᵀ)ᵀ + fl(XM)·Ẋᵀ)) (JVP) or
   Ā_G = Dot2(Ȳ·fl(X̃ W_VO)ᵀ) (VJP) into w->cdot, where SaWork_jvp/vjp would take it by dgemm
   from the same (compensated) prepared products: within γ_2|Ĝ| + |s|·dot2_gamma(2d)·
   (|Ẋ||fl(X̃Mᵀ)|ᵀ + |fl(XM)||Ẋ|ᵀ) of the exact sums of those products (ProductBound_logits
   adds their own errors), and Ā_G within γ_2|Ā_G| + dot2_gamma(d)·|Ȳ||fl(X̃ W_VO)|ᵀ. */
bool ProductBound_compensated_logits(SaWork *w, int h, bool transposed)
{
    if (!compensating(w))
        return false;
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d;
    double *split = compensated_scratch(w), *sum = split + 4 * td;
    const double *v = w->bound->under_way.v;
    Dot2_split(td, v, split, split + td);
    if (transposed) {
        Dot2Part part = {split, split + td, compensated_part(w, COMP_XW, STAGE_PRODUCT, h), 1,
                         (size_t)T};
        Dot2_products(T, T, d, &part, 1, 1.0, sum, sum + T, w->cdot);
        return true;
    }
    Dot2_split(td, compensated_part(w, COMP_XM, STAGE_PRODUCT, h), split + 2 * td, split + 3 * td);
    Dot2Part parts[2] = {
        {split, split + td, compensated_part(w, COMP_XMT, STAGE_PRODUCT, h), 1, (size_t)T},
        {split + 2 * td, split + 3 * td, v, 1, (size_t)T}};
    Dot2_products(T, T, d, parts, 2, w->b[h].scale, sum, sum + T, w->cdot);
    return true;
}

/* The derivative's input g (w->cdot) and a bound on its error: in the JVP
   Ĝ = s(Ẋ·fl(X̃Mᵀ)ᵀ + fl(XM)·Ẋᵀ), 2d products each scaled by s, from the prepared products
   that carry γ_{d+1}|X̃||Mᵀ| and γ_{d+1}|X||M|: |s|(|Ẋ|·(γ_{2d+2}|fl(X̃Mᵀ)| +
   γ_{d+1}|X̃||Mᵀ|)ᵀ + (γ_{2d+2}|fl(XM)| + γ_{d+1}|X||M|)·|Ẋ|ᵀ); in the VJP
   Ā_G = Ȳ·fl(X̃ W_VO)ᵀ: |Ȳ|·(γ_d|fl(X̃ W_VO)| + γ_{d+1}|X̃||W_VO|)ᵀ.  On the compensated
   route (ProductBound_compensated_logits) γ_{2d}²/(1 − u) and γ_d²/(1 − u) replace γ_{2d+2} and
   γ_d, the prepared products' own bounds their γ_{d+1} terms, and γ_2|Ĝ| is added.  Then its row
   constant. */
void ProductBound_logits(SaWork *w, int h, bool transposed)
{
    struct ProductBound *b = w->bound;
    int T = w->b[0].T, d = w->b[0].d;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    double gamma_d = Linalg_rounding_gamma(d), gamma_c = Linalg_rounding_gamma(2.0 * d + 2.0),
           gamma_p = gamma_prepared(w), s = fabs(w->b[h].scale);
    if (compensating(w)) { /* w->cdot by Dot2 (ProductBound_compensated_logits) */
        gamma_d = dot2_gamma(d);
        gamma_c = dot2_gamma(2 * d);
    }
    absolute(tt, w->cdot, b->value_c);
    SaCentring centre = b->under_way.centre;
    if (transposed) {
        const double *xw = cached(w, centre, h, CACHE_XW),
                     *xw_round = cached(w, centre, h, CACHE_XW_ROUND);
        for (size_t k = 0; k < td; k++)
            b->mag[k] = gamma_d * xw[k] + gamma_p * xw_round[k];
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, 1.0, b->input, T, b->mag, T,
                    0.0, b->error_c, T);
    } else {
        const double *xm = xm_magnitude(w, h, false), *xm_round = xm_magnitude(w, h, true);
        const double *xmt = cached(w, centre, h, CACHE_XMT),
                     *xmt_round = cached(w, centre, h, CACHE_XMT_ROUND);
        for (size_t k = 0; k < td; k++) {
            b->mag[k] = gamma_c * xm[k] + gamma_p * xm_round[k];
            b->mag2[k] = gamma_c * xmt[k] + gamma_p * xmt_round[k];
        }
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, s, b->input, T, b->mag2, T,
                    0.0, b->error_c, T);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, s, b->mag, T, b->input, T,
                    1.0, b->error_c, T);
    }
    double gamma_2 = Linalg_rounding_gamma(2.0);
    for (size_t k = 0; compensating(w) && k < tt; k++)
        b->error_c[k] += gamma_2 * b->value_c[k];
    row_constant(w, h, transposed);
}

/* What the row constant k becomes through D, added to D̂ = w->cdot: D(k1ᵀ) = a ⊙ (k ρ)1ᵀ,
   ρ the row deficits, computed as fl(a_ij·p̂_i), p̂_i = fl(k̂_i ρ̂_i) within
   E_p = E_k|ρ̂| + (|k̂| + E_k)E_ρ + γ_1|p̂| of k_i ρ_i; the product and the sum add γ_1 of
   each.  And q̂ ≈ q = D(g + k1ᵀ)·1 = ρ ⊙ r, r_i = Σ_j a_ij g_ij + k_i(1 − ρ_i) the row sums
   the exact derivative has (D's output sums to ρ_i r_i along row i), for the rank-one
   remainder: r̂_i = fl(row_i + k̂_i·fl(1 − ρ̂_i)) from the derivative's computed row sum
   (within carried_i + γ_{T+1}own_i of the exact), q̂_i = fl(ρ̂_i r̂_i). */
static void row_remainders(SaWork *w, int h, const double *carried, const double *own)
{
    struct ProductBound *b = w->bound;
    int T = w->b[0].T;
    if (b->under_way.centre == SA_CENTRE_NONE)
        return;
    const double *a = w->a + (size_t)T * T * h;
    Remainder r = head_remainder(w, b->under_way.centre, h);
    RowTerms t = row_terms(w);
    double g1 = Linalg_rounding_gamma(1.0), g2 = Linalg_rounding_gamma(2.0),
           g_row = Linalg_rounding_gamma(T + 1.0);
    double *p = t.p, *p_error = t.p_error;
    for (int i = 0; i < T; i++) {
        double rho = fabs(r.deficit[i]), rho_error = r.deficit_error[i];
        double k = fabs(t.k[i]), k_error = t.k_error[i];
        p[i] = t.k[i] * r.deficit[i];
        p_error[i] = k_error * rho + (k + k_error) * rho_error + g1 * fabs(p[i]);
        double mass = 1.0 - r.deficit[i], mass_error = rho_error + g1 * fabs(mass);
        double sum = w->row[i] + t.k[i] * mass;
        double sum_error = carried[i] + g_row * own[i] + k * mass_error +
                           k_error * (fabs(mass) + mass_error) +
                           g2 * (fabs(w->row[i]) + k * fabs(mass));
        double sum_size = fabs(sum) + sum_error; /* ≥ |r_i| */
        t.q[i] = r.deficit[i] * sum;
        t.q_error[i] = rho * sum_error + rho_error * sum_size + g1 * fabs(t.q[i]);
    }
    for (int j = 0; j < T; j++)
        for (int i = 0; i < T; i++) {
            size_t at = i + (size_t)j * T;
            double term = a[at] * p[i];
            w->cdot[at] += term;
            b->error_c[at] += a[at] * p_error[i] + g1 * (fabs(term) + fabs(w->cdot[at]));
        }
}

/* The softmax derivative D(g) = a ⊙ (g − rowsum(a ⊙ g)), a ≥ 0, of the computed ĝ with
   |ĝ − g| ≤ E: D is linear, |D(Δ)| ≤ a ⊙ (E + rowsum(a ⊙ E)); its own rounding, the row sum
   (T terms from 0: γ_{T+1}·R, R = rowsum(a ⊙ |ĝ|)), the difference and the product (γ_2),
   is at most a ⊙ (γ_{T+3}·R + γ_2|ĝ|).  Their sum is the bound on Ȧ's (or C̄'s) error; then
   the row constant's part and the row sums (row_remainders). */
void ProductBound_derivative(SaWork *w, int h)
{
    struct ProductBound *b = w->bound;
    int T = w->b[0].T;
    const double *a = w->a + (size_t)T * T * h;
    double *carried = b->mag, *own = b->mag2; /* T each: rowsum(a ⊙ E), rowsum(a ⊙ |ĝ|) */
    double gamma_row = Linalg_rounding_gamma(T + 3.0), gamma_2 = Linalg_rounding_gamma(2.0);
    memset(carried, 0, sizeof(double) * T);
    memset(own, 0, sizeof(double) * T);
    for (int j = 0; j < T; j++)
        for (int i = 0; i < T; i++) {
            size_t at = i + (size_t)j * T;
            carried[i] += a[at] * b->error_c[at];
            own[i] += a[at] * b->value_c[at];
        }
    for (int j = 0; j < T; j++)
        for (int i = 0; i < T; i++) {
            size_t at = i + (size_t)j * T;
            b->error_c[at] = a[at] * (b->error_c[at] + carried[i] + gamma_row * own[i] +
                                      gamma_2 * b->value_c[at]);
        }
    row_remainders(w, h, carried, own);
}

/* The rank-one remainder, scale·q̂ f̂ᵀ added to the output: the JVP's D·1μᵀW_VO (f = W_VOᵀμ,
   scale 1), the VJP's s·D·1μᵀMᵀ (f = M μ).  Its error: |scale|((E_q + γ_N|q̂|)|f̂|ᵀ +
   (|q̂| + E_q)·γ_d(|F||μ|)ᵀ), the product counted among the output's N terms. */
static void rank_one_remainder(SaWork *w, int h, bool transposed)
{
    struct ProductBound *b = w->bound;
    int T = w->b[0].T, d = w->b[0].d;
    if (b->under_way.centre == SA_CENTRE_NONE)
        return;
    Remainder r = head_remainder(w, b->under_way.centre, h);
    RowTerms t = row_terms(w);
    double scale = transposed ? w->b[h].scale : 1.0, gamma_d = Linalg_rounding_gamma(d);
    const double *f = transposed ? r.logit_row : r.value_row;
    const double *f_round = transposed ? r.logit_row_round : r.value_row_round;
    cblas_dger(CblasColMajor, T, d, scale, t.q, 1, f, 1, b->under_way.out, T);
    double *left = b->mag, *right = b->mag2; /* T, d */
    for (int i = 0; i < T; i++)
        left[i] = t.q_error[i] + b->gamma_sum * fabs(t.q[i]);
    for (int q = 0; q < d; q++)
        right[q] = fabs(f[q]);
    cblas_dger(CblasColMajor, T, d, fabs(scale), left, 1, right, 1, b->error, T);
    for (int i = 0; i < T; i++)
        left[i] = fabs(t.q[i]) + t.q_error[i];
    for (int q = 0; q < d; q++)
        right[q] = gamma_d * f_round[q];
    cblas_dger(CblasColMajor, T, d, fabs(scale), left, 1, right, 1, b->error, T);
}

/* The derivative's product summed into the output, D̂ = w->cdot with |D̂ − D| ≤ E: in the
   JVP D·fl(X̃ W_VO), whose error is at most (γ_N|D̂| + E)·|fl(X̃ W_VO)| + γ_{d+1}(|D̂| +
   E)·|X̃||W_VO|; in the VJP s(D·fl(X̃ Mᵀ) + Dᵀ·fl(X M)), the same with |s| and X̃·Mᵀ, X·M.
   Then the rank-one remainder. */
void ProductBound_output(SaWork *w, int h, bool transposed)
{
    struct ProductBound *b = w->bound;
    int T = w->b[0].T, d = w->b[0].d;
    size_t tt = (size_t)T * T;
    double gamma_p = gamma_prepared(w), s = transposed ? fabs(w->b[h].scale) : 1.0;
    double *summed = b->work, *carried = b->value_c; /* γ_N|D̂| + E, γ_{d+1}(|D̂| + E) */
    for (size_t k = 0; k < tt; k++) {
        double size = fabs(w->cdot[k]);
        summed[k] = b->gamma_sum * size + b->error_c[k];
        carried[k] = gamma_p * (size + b->error_c[k]);
    }
    SaCentring centre = b->under_way.centre;
    const double *right[2][2] = {
        {cached(w, centre, h, CACHE_XW), cached(w, centre, h, CACHE_XW_ROUND)},
        {cached(w, centre, h, CACHE_XMT), cached(w, centre, h, CACHE_XMT_ROUND)}};
    for (int part = 0; part < 2; part++)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, T, s, part ? carried : summed,
                    T, right[transposed][part], T, 1.0, b->error, T);
    for (int part = 0; transposed && part < 2; part++)
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, s, part ? carried : summed, T,
                    xm_magnitude(w, h, part), T, 1.0, b->error, T);
    rank_one_remainder(w, h, transposed);
}

/* out = fl(K v) (transposed: fl(Kᵀv)) as SaWork_jvp/vjp compute it. */
static void plain_product(SaWork *w, const double *v, bool transposed, double *out)
{
    if (transposed)
        SaWork_vjp(w, v, out);
    else
        SaWork_jvp(w, v, out);
}

/* One centring's product into out (not v) and its bound: SaWork_jvp/vjp reading X̃·W_VO and
   X̃·Mᵀ where they read the prepared X·W_VO and X·Mᵀ, the hooks adding back what taking μ out
   left; compensated: the compensated route's prepared products (X·M's too) and Ĝ (Ā) by
   Dot2.  NaN where the centring's block cannot be built (no memory; out then unset). */
static double centred_product(SaWork *w, const double *v, bool transposed, SaCentring centre,
                              bool compensated, double *out)
{
    struct ProductBound *b = w->bound;
    int T = w->b[0].T, d = w->b[0].d;
    size_t n = (size_t)T * d;
    if (!b->built[centre] && build_centring(w, centre)) /* its scratch includes b->input */
        return NAN;
    if (compensated && b->compensated_for != (int)centre && build_compensated(w, centre))
        return NAN;
    absolute(n, v, b->input);
    memset(b->error, 0, sizeof(double) * n);
    b->gamma_sum = Linalg_rounding_gamma(output_terms(w, transposed, centre));
    double *plain_xw = w->xw, *plain_xmt = w->xmt, *plain_xm = w->xm;
    if (compensated) {
        w->xw = compensated_part(w, COMP_XW, STAGE_PRODUCT, 0);
        w->xmt = compensated_part(w, COMP_XMT, STAGE_PRODUCT, 0);
        w->xm = compensated_part(w, COMP_XM, STAGE_PRODUCT, 0);
    } else {
        w->xw = centred_xw(w, centre);
        w->xmt = centred_xmt(w, centre);
    }
    b->under_way = (UnderWay){centre, compensated, v, out};
    w->bounding = true;
    plain_product(w, v, transposed, out);
    w->bounding = false;
    b->under_way = (UnderWay){SA_CENTRE_NONE, false, NULL, NULL};
    w->xw = plain_xw;
    w->xmt = plain_xmt;
    w->xm = plain_xm;
    /* The bound is itself computed in floating point, from non-negative numbers only, so
       each entry is at least (1 − γ_chain) of its exact value, chain the operations along
       its deepest path (the cache's and the logits' d, the derivative's T, the output's T
       and the sum of every head's at most 6T terms into it, a few scalings), and its 2-norm
       of n entries at least (1 − γ_{n+2}) of its own.  The compensated route's prepared
       products' bounds and γ_2|Ĝ| add a few operations. */
    double chain = 4.0 * (T + d) + 6.0 * w->heads * T + 32.0 + (compensated ? 8.0 : 0.0);
    return cblas_dnrm2((int)n, b->error, 1) /
           ((1.0 - Linalg_rounding_gamma(chain)) * (1.0 - Linalg_rounding_gamma(n + 2.0)));
}

/* The bound's state ready for this block (false: it does not follow the block's shape, or
   there is no memory). */
static bool bound_ready(SaWork *w)
{
    if (!bound_follows(w) || bound_grow(w))
        return false;
    return w->bound->cached || !cache_block(w);
}

double SaWork_product_centred(SaWork *w, const double *v, bool transposed, SaCentring centring,
                              double *out)
{
    double bound = bound_ready(w) ? centred_product(w, v, transposed, centring, false, out) : NAN;
    if (isnan(bound))
        plain_product(w, v, transposed, out);
    return bound;
}

double SaWork_product_compensated(SaWork *w, const double *v, bool transposed, SaCentring centring,
                                  double *out)
{
    double bound = bound_ready(w) ? centred_product(w, v, transposed, centring, true, out) : NAN;
    if (isnan(bound))
        plain_product(w, v, transposed, out);
    return bound;
}

double SaWork_product_bounded(SaWork *w, const double *v, bool transposed, double *out)
{
    size_t n = (size_t)w->b[0].T * w->b[0].d;
    double worst = SaWork_product_error(w) * cblas_dnrm2((int)n, v, 1);
    if (!bound_ready(w)) {
        plain_product(w, v, transposed, out);
        return worst;
    }
    /* A search tries μ = 0, the mean, the median in turn, stops at the first whose bound is
       within CENTRING_UNNEEDED of its product's norm and keeps the least.  Once a search of
       this block, part of K and direction has gone past μ = 0, its choice is kept and later
       products take it alone (a third of the cost; any centring's bound is a proof); until
       then each product searches, so μ = 0 is taken only where it bounds that product to
       CENTRING_UNNEEDED or was the least of a search. */
    struct ProductBound *b = w->bound;
    int *kept = &b->kept[w->part][transposed];
    int first = *kept < 0 ? SA_CENTRE_NONE : *kept, last = *kept < 0 ? SA_CENTRINGS : first + 1;
    double least = INFINITY;
    int chosen = -1, tried = 0;
    for (int centre = first; centre < last; centre++, tried++) {
        if (tried && least <= CENTRING_UNNEEDED * cblas_dnrm2((int)n, out, 1))
            break;
        double bound = centred_product(w, v, transposed, (SaCentring)centre, false, b->candidate);
        if (bound < least) {
            least = bound;
            chosen = centre;
            memcpy(out, b->candidate, sizeof(double) * n);
        }
    }
    if (*kept < 0 && tried > 1)
        *kept = chosen;
    /* A bound near or above ‖K‖₂‖v‖ (as far as the block's products have shown it) leaves a
       witness little or no κ bound (SaWork_witness): there, and only there, the compensated
       route with the chosen centring, some 7 products more (docs/model.md §8, "the
       compensated route").  Where η's bound is the smaller, it is the one to beat.  Its product
       replaces out only with a bound below η's too, so that η is returned only with a product
       it bounds. */
    double *reach = &b->reach[w->part], v_norm = cblas_dnrm2((int)n, v, 1);
    double out_norm = cblas_dnrm2((int)n, out, 1);
    if (v_norm > 0 && out_norm / v_norm > *reach)
        *reach = out_norm / v_norm;
    if (isfinite(least) && fmin(least, worst) > COMPENSATION_NEEDED * *reach * v_norm) {
        double bound = centred_product(w, v, transposed, (SaCentring)chosen, true, b->candidate);
        if (bound < least && bound < worst) {
            least = bound;
            memcpy(out, b->candidate, sizeof(double) * n);
        }
    }
    if (isfinite(least) && least < worst)
        return least;
    /* η bounds the plain products' rounding: μ = 0's product is theirs, the others are not */
    if (chosen != SA_CENTRE_NONE)
        plain_product(w, v, transposed, out);
    return worst;
}
