#include "attnscope/attention.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

void Mask_row_range(Mask m, int window, int T, int i, int *first, int *last)
{
    switch (m) {
    case MASK_CAUSAL:
        *first = 0;
        *last = i;
        break;
    case MASK_WINDOW:
        *first = i - window < 0 ? 0 : i - window;
        *last = i + window > T - 1 ? T - 1 : i + window;
        break;
    case MASK_WINDOW_CAUSAL:
        *first = i - window < 0 ? 0 : i - window;
        *last = i;
        break;
    case MASK_FULL:
    default:
        *first = 0;
        *last = T - 1;
        break;
    }
}

bool Attention_has_query_key(Attention kind)
{
    return kind == ATTENTION_SOFTMAX || kind == ATTENTION_RELU || kind == ATTENTION_SIGMOID ||
           kind == ATTENTION_LINEAR;
}

/* Below this, exp(x) < 2^−1075·e^−0.86 rounds to 0 in double: a row of a collapsed network's
   attention is mostly such entries, which libm reaches only through its underflow path. */
#define EXP_ZERO (-746.0)

/* exp of each allowed logit minus the row maximum, normalised: no overflow for any finite
   logits, and the largest entry of every row is at least 1/n before normalising.  The sink
   joins the maximum and the denominator only (gpt-oss's column dropped after the softmax);
   −∞ adds exp(−∞) = 0 to the sum and leaves the maximum, so no sink is the plain softmax bit
   for bit. */
static void softmax_row(const double *s, double *a, int first, int last, double sink)
{
    double max = s[first];
    for (int j = first + 1; j <= last; j++)
        if (s[j] > max)
            max = s[j];
    if (sink > max)
        max = sink;
    double sum = 0;
    for (int j = first; j <= last; j++) {
        double x = s[j] - max;
        a[j] = x < EXP_ZERO ? 0.0 : exp(x);
        sum += a[j];
    }
    if (sink != -INFINITY)
        sum += exp(sink - max);
    double inv = 1.0 / sum;
    for (int j = first; j <= last; j++)
        a[j] *= inv;
}

static double sigmoid(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

void Attention_softcap(double cap, double *logits, size_t n)
{
    for (size_t i = 0; i < n; i++)
        logits[i] = cap * tanh(logits[i] / cap);
}

void Attention_build(Attention kind, Mask mask, int window, int T, const double *logits,
                     double sink, double *a)
{
    const double log_T = log((double)T);
    for (int i = 0; i < T; i++) {
        int first, last;
        Mask_row_range(mask, window, T, i, &first, &last);
        double *row = a + (size_t)i * T;
        /* The masked keys; every kind but the identity fills [first, last] itself. */
        memset(row, 0, sizeof(double) * (size_t)first);
        memset(row + last + 1, 0, sizeof(double) * (size_t)(T - 1 - last));
        const double *s = logits ? logits + (size_t)i * T : NULL;
        switch (kind) {
        case ATTENTION_SOFTMAX:
            softmax_row(s, row, first, last, sink);
            break;
        case ATTENTION_MARKOV:
            softmax_row(s, row, first, last, -INFINITY);
            break;
        case ATTENTION_RELU:
            for (int j = first; j <= last; j++)
                row[j] = s[j] > 0 ? s[j] / T : 0.0;
            break;
        case ATTENTION_SIGMOID:
            for (int j = first; j <= last; j++)
                row[j] = sigmoid(s[j] - log_T);
            break;
        case ATTENTION_LINEAR:
            for (int j = first; j <= last; j++)
                row[j] = s[j];
            break;
        case ATTENTION_UNIFORM: {
            double u = 1.0 / (last - first + 1);
            for (int j = first; j <= last; j++)
                row[j] = u;
            break;
        }
        case ATTENTION_IDENTITY:
            memset(row + first, 0, sizeof(double) * (size_t)(last - first + 1));
            row[i] = 1.0;
            break;
        }
    }
}

double Attention_logit_std(Mask mask, int window, int T, const double *logits)
{
    /* Two passes: the mean first, so the variance has no cancellation. */
    double sum = 0;
    size_t n = 0;
    for (int i = 0; i < T; i++) {
        int first, last;
        Mask_row_range(mask, window, T, i, &first, &last);
        for (int j = first; j <= last; j++)
            sum += logits[(size_t)i * T + j];
        n += (size_t)(last - first + 1);
    }
    double mean = sum / (double)n, ss = 0;
    for (int i = 0; i < T; i++) {
        int first, last;
        Mask_row_range(mask, window, T, i, &first, &last);
        for (int j = first; j <= last; j++) {
            double dv = logits[(size_t)i * T + j] - mean;
            ss += dv * dv;
        }
    }
    return sqrt(ss / (double)n);
}

bool Attention_is_lower_triangular(int T, const double *a)
{
    for (int i = 0; i < T; i++)
        for (int j = i + 1; j < T; j++)
            if (a[(size_t)i * T + j] != 0.0)
                return false;
    return true;
}

size_t Gap_scratch_size(int T)
{
    return 3 * (size_t)T * (size_t)T + 2 * (size_t)T;
}

/* Row i minus its uniform distribution over the allowed keys (row-stochastic kinds: exactly
   1/n), or minus its mean over the allowed keys (other kinds).  Masked entries stay 0. */
static void gap_center(bool stochastic, Mask mask, int window, int T, double *a)
{
    for (int i = 0; i < T; i++) {
        int first, last;
        Mask_row_range(mask, window, T, i, &first, &last);
        double *row = a + (size_t)i * T;
        int n = last - first + 1;
        double mean = 0;
        if (stochastic) {
            mean = 1.0 / n;
        } else {
            for (int j = first; j <= last; j++)
                mean += row[j];
            mean /= n;
        }
        for (int j = first; j <= last; j++)
            row[j] -= mean;
    }
}

/* The left Perron vector π (πᵀA = πᵀ, πᵀ1 = 1) into pi; false when eigenvalue 1 is not
   simple (then π is not unique).  For a stochastic A with simple eigenvalue 1,
   M = I − A + 11ᵀ is nonsingular and πᵀM = 1ᵀ, so π solves Mᵀπ = 1. */
static int perron_left(int T, const double *a, Linalg *la, double *m, double *pi, bool *simple)
{
    if (Attention_is_lower_triangular(T, a)) {
        /* Row 1 is e1ᵀ, so e1ᵀA = e1ᵀ exactly; 1 is simple iff no other diagonal entry is 1. */
        *simple = true;
        for (int i = 1; i < T; i++)
            if (a[(size_t)i * T + i] == 1.0)
                *simple = false;
        memset(pi, 0, sizeof(double) * (size_t)T);
        pi[0] = 1.0;
        return 0;
    }
    /* Column-major Mᵀ at (r, c) is M_cr = δ + 1 − A_cr, which is a[r + c*T] read as
       row-major A: the same index. */
    size_t n2 = (size_t)T * T;
    for (size_t k = 0; k < n2; k++)
        m[k] = 1.0 - a[k];
    for (int i = 0; i < T; i++)
        m[(size_t)i * T + i] += 1.0;
    for (int i = 0; i < T; i++)
        pi[i] = 1.0;
    double rcond;
    int info = Linalg_solve(la, T, m, pi, &rcond);
    if (info)
        return info;
    *simple = rcond > 1e-12;
    for (int i = 0; i < T && *simple; i++)
        if (!isfinite(pi[i]))
            *simple = false;
    return 0;
}

static int gap_outliers(int T, double *a, Linalg *la, double *scratch, int *removed)
{
    size_t n2 = (size_t)T * T;
    double *copy = scratch, *u = scratch + n2, *vt = scratch + 2 * n2, *s = scratch + 3 * n2;
    memcpy(copy, a, sizeof(double) * n2);
    /* The buffer is Aᵀ = U S Vᵀ; removing the top r terms from Aᵀ removes them from A. */
    int info = Linalg_svd(la, T, copy, s, u, vt);
    if (info)
        return info;
    int r = 1;
    double best = s[0] - s[1];
    for (int i = 1; i < T - 1; i++)
        if (s[i] - s[i + 1] > best) {
            best = s[i] - s[i + 1];
            r = i + 1;
        }
    for (int k = 0; k < r; k++)
        cblas_dscal(T, s[k], u + (size_t)k * T, 1);
    /* r may reach T − 1 (a flat spectrum): then this product is as long as a layer's. */
    info = Linalg_gemm(la, false, false, T, T, r, -1.0, u, T, vt, T, 1.0, a, T);
    *removed = r;
    return info;
}

bool Gap_leaves_zero(Gap mode, bool uniform_rows, Mask mask, int window, int T)
{
    if (!uniform_rows || (mode != GAP_DEFLATE && mode != GAP_OUTLIERS))
        return false;
    for (int i = 0; i < T; i++) {
        int first, last;
        Mask_row_range(mask, window, T, i, &first, &last);
        if (first != 0 || last != T - 1)
            return false;
    }
    return true;
}

bool Gap_annihilates_equal_tokens(Gap mode, Attention kind, bool sink, Mask mask, int window, int T)
{
    switch (mode) {
    case GAP_CENTER:
    case GAP_DEFLATE:
        return true;
    case GAP_UNIFORM:
        return Attention_is_row_stochastic(kind) && !sink;
    case GAP_OUTLIERS:
        return kind != ATTENTION_IDENTITY && Gap_leaves_zero(mode, true, mask, window, T);
    default:
        return false;
    }
}

int Gap_apply(Gap mode, Attention kind, bool sink, bool uniform_rows, Mask mask, int window, int T,
              double *a, Linalg *la, double *scratch, GapOutcome *outcome, Warnings *warnings)
{
    /* Sinks take each row's share 1 − Σ_j A_ij: the rows are no distributions over the keys,
       so the modes treat them as the kinds whose rows do not sum to 1. */
    bool stochastic = Attention_is_row_stochastic(kind) && !sink;
    const char *kind_name = sink ? "softmax-with-sink" : ATTENTION_NAMES.names[kind];
    outcome->applied = mode;
    outcome->outliers_removed = 0;
    switch (mode) {
    case GAP_OFF:
        return 0;
    case GAP_CENTER:
        gap_center(stochastic, mask, window, T, a);
        return 0;
    case GAP_UNIFORM: {
        double u = 1.0 / T;
        size_t n2 = (size_t)T * T;
        for (size_t k = 0; k < n2; k++)
            a[k] -= u;
        if (mask != MASK_FULL)
            Warnings_add(warnings,
                         "gap uniform subtracts (1/T)11^T literally: it breaks the %s mask "
                         "(tokens see keys the mask forbids); gap center keeps it",
                         MASK_NAMES.names[mask]);
        if (!stochastic)
            Warnings_add(warnings,
                         "gap uniform on %s attention (rows do not sum to 1) moves the outlier "
                         "instead of removing it; gap center removes it",
                         kind_name);
        return 0;
    }
    case GAP_DEFLATE: {
        if (Gap_leaves_zero(mode, uniform_rows, mask, window, T)) { /* 1πᵀ = U = A */
            memset(a, 0, sizeof(double) * (size_t)T * (size_t)T);
            return 0;
        }
        bool simple = false;
        double *m = scratch, *pi = scratch + 3 * (size_t)T * T;
        if (stochastic) {
            int info = perron_left(T, a, la, m, pi, &simple);
            if (info)
                return info;
        }
        if (!simple) {
            Warnings_add(warnings, "gap deflate: %s; fell back to center",
                         stochastic ? "eigenvalue 1 is not simple, the Perron vector is not unique"
                         : sink     ? "sinks take a share of every row, the rows do not sum to 1: "
                                      "there is no Perron vector"
                                    : "attention rows do not sum to 1, there is no Perron vector");
            outcome->applied = GAP_CENTER;
            gap_center(stochastic, mask, window, T, a);
            return 0;
        }
        for (int i = 0; i < T; i++)
            cblas_daxpy(T, -1.0, pi, 1, a + (size_t)i * T, 1);
        return 0;
    }
    case GAP_OUTLIERS:
        if (Gap_leaves_zero(mode, uniform_rows, mask, window,
                            T)) { /* s = (1, 0, …): r = 1, s1u1v1ᵀ = A */
            memset(a, 0, sizeof(double) * (size_t)T * (size_t)T);
            outcome->outliers_removed = 1;
            return 0;
        }
        if (kind == ATTENTION_IDENTITY) {
            Warnings_add(warnings, "gap outliers: %s", GAP_IDENTITY_HAS_NO_OUTLIER);
            return 0;
        }
        return gap_outliers(T, a, la, scratch, &outcome->outliers_removed);
    }
    return 0;
}
