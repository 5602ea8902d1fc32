/* Row entropies of an attention matrix (include/attnscope/entropy.h). */
#include "attnscope/entropy.h"

#include "attnscope/attention.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/qk.h"

#include <float.h>
#include <math.h>

bool Entropy_defined(Attention kind)
{
    return Attention_is_row_stochastic(kind);
}

const char *Entropy_undefined_reason(Attention kind)
{
    switch (kind) {
    case ATTENTION_RELU:
        return "relu rows are not distributions (they do not sum to 1)";
    case ATTENTION_SIGMOID:
        return "sigmoid rows are not distributions (they do not sum to 1)";
    case ATTENTION_LINEAR:
        return "linear rows are not distributions (negative entries, no fixed sum)";
    default:
        return NULL;
    }
}

EntropyRows Entropy_undefined(void)
{
    return (EntropyRows){NAN, NAN, NAN, NAN, NAN};
}

/* H_i of row i over its allowed keys [first, last], and with a sink the (n_i + 1)-th
   outcome, the sink's mass, what the keys leave of 1 (rounding may leave a hair below 0,
   whose share is none); its largest weight in *top, its largest outcome (the sink's mass
   where that is larger) in *largest. */
static double row_entropy(const double *row, int first, int last, bool sink, double *top,
                          double *largest)
{
    double h = 0, keys = 0;
    *top = 0;
    for (int j = first; j <= last; j++) {
        if (row[j] > 0) /* 0 ln 0 = 0 */
            h -= row[j] * log(row[j]);
        if (row[j] > *top)
            *top = row[j];
        keys += row[j];
    }
    double held = 1.0 - keys;
    if (sink && held > 0)
        h -= held * log(held);
    *largest = sink && held > *top ? held : *top;
    return h;
}

void Entropy_each_row(Mask mask, int window, int T, bool sink, const double *a, double *h)
{
    for (int i = 0; i < T; i++) {
        int first, last;
        double top, largest;
        Mask_row_range(mask, window, T, i, &first, &last);
        h[i] = row_entropy(a + (size_t)i * T, first, last, sink, &top, &largest);
    }
}

/* What the row's own computation leaves beside the logits' δ (docs/model.md §2, "The rows'
   own bound"): the softmax's and the entropy's sums over n outcomes, and the sink's mass
   formed as 1 − Σ_j A_ij, all within this of H (and of the largest weight). */
static double row_slack(int n, double h)
{
    return 64.0 * (n + 4) * Linalg_rounding_gamma(2.0 * n + 8) * (h + 1);
}

/* The softmax's own rounding, as a perturbation of each logit: s_j − max rounded (746u
   at most, below which exp is 0), exp's and the normalising product's. */
#define SOFTMAX_LOGIT_ROUNDING (760 * (DBL_EPSILON / 2))

double Entropy_row_entropy_rounding(double delta, int n, double h, double largest)
{
    double d = delta + SOFTMAX_LOGIT_ROUNDING, slack = row_slack(n, h);
    double spread = fmax(0, h + log(largest)) + slack; /* H − H_∞: 0 for one-hot and flat */
    double rest = fmin(1, 2 * (1 - largest) + slack);
    return (expm1(2 * d) * (spread + d * rest) + slack) * (1 + 16 * DBL_EPSILON);
}

double Entropy_row_top_rounding(double delta, int n, double top)
{
    double d = delta + SOFTMAX_LOGIT_ROUNDING, slack = row_slack(n, 0);
    return (expm1(2 * d) * (fmin(top, 1 - top) + slack) + slack) * (1 + 16 * DBL_EPSILON);
}

void Entropy_rows_rounding(Mask mask, int window, int T, bool sink, const double *a, double delta,
                           EntropyRows *out, EntropyRows *bound)
{
    double sum = 0, normalised = 0, max_weight = 0;
    double min = INFINITY, max = -INFINITY;
    EntropyRows b = {0, 0, 0, 0, 0};
    /* the least H' is at most H_min + B at its row and at least min_i (H_i − B_i); the
       largest alike */
    double at_min = 0, at_max = 0, below = -INFINITY, above = -INFINITY;
    int normalised_rows = 0;
    for (int i = 0; i < T; i++) {
        int first, last;
        double top, largest;
        Mask_row_range(mask, window, T, i, &first, &last);
        double h = row_entropy(a + (size_t)i * T, first, last, sink, &top, &largest);
        int n = last - first + 1 + (sink ? 1 : 0);
        double row_bound = bound ? Entropy_row_entropy_rounding(delta, n, h, largest) : NAN;
        sum += h;
        max_weight += top;
        at_min = h < min ? row_bound : at_min;
        min = h < min ? h : min;
        at_max = h > max ? row_bound : at_max;
        max = h > max ? h : max;
        if (bound) {
            b.mean += row_bound;
            below = fmax(below, row_bound - h);
            above = fmax(above, row_bound + h);
            b.max_weight_mean += Entropy_row_top_rounding(delta, n, top);
        }
        if (n >= 2) {
            normalised += h / log((double)n);
            b.normalised_mean += row_bound / log((double)n);
            normalised_rows++;
        }
    }
    *out = (EntropyRows){.mean = T ? sum / T : NAN,
                         .min = T ? min : NAN,
                         .max = T ? max : NAN,
                         .normalised_mean = normalised_rows ? normalised / normalised_rows : NAN,
                         .max_weight_mean = T ? max_weight / T : NAN};
    if (!bound)
        return;
    if (isnan(delta)) {
        *bound = Entropy_undefined();
        return;
    }
    *bound = (EntropyRows){.mean = T ? b.mean / T : NAN,
                           .min = T ? fmax(at_min, min + below) + 4 * DBL_EPSILON * min : NAN,
                           .max = T ? fmax(at_max, above - max) + 4 * DBL_EPSILON * max : NAN,
                           .normalised_mean =
                               normalised_rows ? b.normalised_mean / normalised_rows : NAN,
                           .max_weight_mean = T ? b.max_weight_mean / T : NAN};
}

void Entropy_rows(Mask mask, int window, int T, bool sink, const double *a, EntropyRows *out)
{
    Entropy_rows_rounding(mask, window, T, sink, a, NAN, out, NULL);
}

bool Entropy_resolved(double value, double bound)
{
    return !(bound >= fmax(fabs(value) / 2, ENTROPY_RESOLUTION_FLOOR));
}

double Entropy_zhai_row_bound(int n, double sigma)
{
    if (n <= 1)
        return 0.0;
    double others = n - 1.0;
    /* The extreme row: its top logit sigma·√(n/(n − 1)) above the n − 1 others. */
    double b = exp(-sigma * sqrt(n / others));
    double z = 1 + others * b;
    return log1p(others * b) + sigma * sqrt(n * others) * b / z;
}

double Entropy_zhai_bound(Mask mask, int window, int T, double sigma)
{
    double least = INFINITY;
    for (int i = 0; i < T; i++) {
        int first, last;
        Mask_row_range(mask, window, T, i, &first, &last);
        double h = Entropy_zhai_row_bound(last - first + 1, sigma);
        least = h < least ? h : least;
    }
    return T ? least : NAN;
}

const char *Entropy_zhai_void(const Config *c, int layer)
{
    if (c->attention != ATTENTION_SOFTMAX)
        return "the bound is for softmax rows of bilinear logits x_i^T M x_j";
    if (Qk_normalised(c))
        return "QK-norm: the logits are of normalised queries and keys, not x_i^T W^Q W^K^T x_j";
    if (Config_has_sink(c))
        return "sinks: each row also weighs the sink's logit, which is no x_i^T M x_j";
    if (Qk_rotates(c, layer))
        return "RoPE: the logits are x_i^T W^Q R_(j-i) W^K^T x_j, no one matrix for all keys";
    const LayerAffine *a = Layer_affine(c, layer);
    if (a && (a->query_bias || a->key_bias))
        return "query or key biases: the logits are (x_i W^Q + b_Q)(x_j W^K + b_K)^T, not "
               "x_i^T M x_j";
    return NULL;
}

bool Entropy_input_norm_exact(int T, int d)
{
    return Measure_svd_cheap(T, d);
}

bool Entropy_input_norm_measured(const Config *c, int layer)
{
    return layer >= 1 && layer <= c->depth && Entropy_defined(c->attention) &&
           !Entropy_zhai_void(c, layer) && !Entropy_input_norm_exact(c->tokens, c->width) &&
           c->tokens <= c->width && !Layer_pre_norm(c);
}

bool Entropy_qk_norm_exact(const Config *c)
{
    return Entropy_input_norm_exact(c->width, Config_head_width(c));
}

bool Entropy_qk_norms_ahead(const Config *c, int layer)
{
    return layer < c->depth && !Entropy_zhai_void(c, layer + 1) && Layer_draws_ahead();
}

double Entropy_logit_rounding(const Config *c, int layer, double weights_norm,
                              double row_norm_max_squared)
{
    if (c->attention == ATTENTION_MARKOV)
        return 0;
    const LayerAffine *a = Layer_affine(c, layer);
    if (c->attention != ATTENTION_SOFTMAX || Layer_attention_uniform(c) || Qk_normalised(c) ||
        (a && (a->query_bias || a->key_bias)))
        return NAN;
    /* γ_d for each projection (or for X'M_h and its product with X'ᵀ), γ_{d_h} for the
       query-key product (or for M_h), one rounding for the scale, γ_5 for each of q and k's
       RoPE rotation: γ_a + γ_b + γ_a·γ_b ≤ γ_{a+b} sums them. */
    double terms = 2.0 * c->width + Config_head_width(c) + 12;
    double delta = Linalg_rounding_gamma(terms) * fabs(Init_logit_scale(c)) * weights_norm *
                   row_norm_max_squared;
    if (c->logit_softcap > 0) /* C·tanh(S/C) is 1-Lipschitz; tanh and the products round */
        delta += 4 * (DBL_EPSILON / 2) * c->logit_softcap;
    return delta;
}
