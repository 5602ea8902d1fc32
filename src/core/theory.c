#include "attnscope/theory.h"

#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/qk.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

static double peak_objective(double u, double a, int layer, double gamma)
{
    return u - a * log1p(exp(u)) - layer * log1p(gamma * exp(u));
}

/* max over z > 0 of log z − a·log(1+z) − ℓ·log(1+γz), with u = log z.  Its derivative in u,
   1 − a·z/(1+z) − ℓγz/(1+γz), falls from 1 to 1 − a − ℓ < 0, so the objective is unimodal
   and golden-section search finds the peak to machine precision. */
static double log_peak(double a, int layer, double gamma)
{
    const double ratio = (sqrt(5.0) - 1.0) / 2.0;
    double lo = -40.0, hi = 40.0;
    double u1 = hi - ratio * (hi - lo), u2 = lo + ratio * (hi - lo);
    double f1 = peak_objective(u1, a, layer, gamma), f2 = peak_objective(u2, a, layer, gamma);
    while (hi - lo > 1e-12) {
        if (f1 < f2) {
            lo = u1;
            u1 = u2;
            f1 = f2;
            u2 = lo + ratio * (hi - lo);
            f2 = peak_objective(u2, a, layer, gamma);
        } else {
            hi = u2;
            u2 = u1;
            f2 = f1;
            u1 = hi - ratio * (hi - lo);
            f1 = peak_objective(u1, a, layer, gamma);
        }
    }
    return peak_objective((lo + hi) / 2, a, layer, gamma);
}

double Theory_edge_gap_removed(int layer, double gamma)
{
    return exp(-log_peak(layer + 1.0, layer, gamma));
}

double Theory_edge_identity(int layer, double gamma)
{
    return exp(-log_peak(1.0, layer, gamma));
}

double Theory_gap_removed_ratio(int layer, double gamma)
{
    double e = Theory_edge_gap_removed(layer, gamma);
    return (1.0 + layer * (1.0 + gamma)) / (e * e);
}

double Theory_identity_ratio(int layer, double gamma)
{
    double e = Theory_edge_identity(layer, gamma);
    return (1.0 + layer * gamma) / (e * e);
}

double Theory_collapse_excess(int layer, double sigma_a, double gamma, int tokens)
{
    return pow(sigma_a, 4.0 * layer) * (1.0 + layer * (1.0 + gamma)) *
           pow((double)tokens, 1.0 - 2.0 * layer);
}

double Theory_window_spectral_gap(int tokens, int window)
{
    double w = window, length = tokens - w * (w + 1) / (2 * w + 1);
    return M_PI * M_PI * w * (w + 1) / (6 * length * length);
}

bool Theory_window_spectral_gap_holds(int tokens, int window)
{
    return 2 * window + 1 <= tokens / 2.0;
}

double Theory_quartercircle_density(double x, double sigma)
{
    if (x < 0 || x > 2 * sigma)
        return 0.0;
    return sqrt(4 * sigma * sigma - x * x) / (M_PI * sigma * sigma);
}

double Theory_quartercircle_cdf(double x, double sigma)
{
    if (x <= 0)
        return 0.0;
    if (x >= 2 * sigma)
        return 1.0;
    double theta = asin(x / (2 * sigma));
    return (2.0 / M_PI) * (theta + sin(theta) * cos(theta));
}

double Theory_circular_radial_cdf(double r, double sigma)
{
    if (r <= 0)
        return 0.0;
    return r >= sigma ? 1.0 : (r / sigma) * (r / sigma);
}

static int ascending(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

double Theory_ks_distance(double *samples, size_t n, double (*cdf)(double x, double sigma),
                          double sigma)
{
    qsort(samples, n, sizeof *samples, ascending);
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double f = cdf(samples[i], sigma);
        worst = fmax(worst, fmax(fabs((double)(i + 1) / n - f), fabs(f - (double)i / n)));
    }
    return worst;
}

/* Whether every layer's mask is the full one (-m full, or a window whose pattern makes every
   layer global). */
static bool every_layer_full(const Config *c)
{
    for (int l = 1; l <= c->depth; l++)
        if (Config_layer_mask(c, l) != MASK_FULL)
            return false;
    return true;
}

/* The curve's entries outside [1, T], where no stable rank can be (T ≤ d here: X0 has
   orthonormal rows).  The large-T limits C_ℓ(γ)·T and T(1 + ℓγ)/E² fall below 1 once ℓ is
   of the order of T, and the collapse's expansion 1 + σ_A^{4ℓ}(…)T^{1−2ℓ}, for small
   excesses, passes T where σ_A^{4ℓ} is large (docs/model.md §3): null there; the first such
   layer into *out. */
static void null_outside_range(double *sr, int depth, int tokens, const char *formula,
                               TheoryOutOfRange *out)
{
    *out = (TheoryOutOfRange){0};
    for (int l = 1; l <= depth; l++)
        if (sr[l] < 1 || sr[l] > tokens) {
            if (!out->layer)
                *out = (TheoryOutOfRange){.layer = l, .limit = sr[l], .formula = formula};
            sr[l] = NAN;
        }
}

/* The curve of one network, or NaN with a note. */
static const char *predict_curve(const Config *c, Gap gap, double sigma, double *sr,
                                 TheoryOutOfRange *range)
{
    *range = (TheoryOutOfRange){0};
    int T = c->tokens;
    double gamma = (double)T / c->width;
    for (int l = 0; l <= c->depth; l++)
        sr[l] = NAN;
    if (c->skip != SKIP_NONE || c->layernorm != LAYERNORM_NONE)
        return "theory covers networks without skips and LayerNorm";
    if (c->heads != 1 || c->output != OUTPUT_IDENTITY || c->mlp != MLP_NONE)
        return "theory covers one head without an output projection or MLP";
    /* The stable rank is scale-free, so a Gaussian W^V of any std has the normal scheme's
       curve; orthogonal ones keep the tokens' Gram matrix, and values alone then collapse
       nothing; an identity, zero or factorised W^V is no Gaussian (docs/model.md §1.10). */
    MatrixInit value = Init_matrix(c, MATRIX_VALUE);
    if (value.orthogonal)
        return "theory covers Gaussian value matrices (orthogonal ones keep the tokens' Gram)";
    if (!(value.std > 0) || value.diagonal != 0.0)
        return "theory covers Gaussian value matrices";
    if (c->input == INPUT_EMBEDDING)
        return THEORY_EMBEDDING_NOTE;
    sr[0] = T; /* orthonormal input */
    switch (c->attention) {
    case ATTENTION_MARKOV:
        if (!every_layer_full(c))
            break;
        for (int l = 1; l <= c->depth; l++) {
            if (gap == GAP_OFF)
                sr[l] = 1.0 + Theory_collapse_excess(l, sigma, gamma, T);
            else if (gap == GAP_CENTER || gap == GAP_UNIFORM)
                sr[l] = Theory_gap_removed_ratio(l, gamma) * T;
        }
        if (gap == GAP_OFF)
            null_outside_range(sr, c->depth, T, "1 + sigma_A^(4l)*(1 + l*(1 + gamma))*T^(1 - 2l)",
                               range);
        else if (gap == GAP_CENTER || gap == GAP_UNIFORM)
            null_outside_range(sr, c->depth, T, "C_l(gamma)*T", range);
        if (gap == GAP_OFF || gap == GAP_CENTER || gap == GAP_UNIFORM)
            return NULL;
        break;
    case ATTENTION_IDENTITY:
        if (gap != GAP_OFF)
            break;
        for (int l = 1; l <= c->depth; l++)
            sr[l] = Theory_identity_ratio(l, gamma) * T;
        null_outside_range(sr, c->depth, T, "T*(1 + l*gamma)/E_l^2", range);
        return NULL;
    case ATTENTION_UNIFORM:
        if (gap != GAP_OFF)
            break;
        for (int l = 1; l <= c->depth; l++)
            sr[l] = 1.0;
        return NULL;
    default:
        break;
    }
    for (int l = 0; l <= c->depth; l++)
        sr[l] = NAN;
    return "theory covers markov attention with the full mask (gap off, center or uniform), "
           "identity and uniform attention";
}

bool Theory_weights_drawn(void)
{
    return Layer_weights_in_use() == NULL;
}

bool Theory_first_layer_unit_rows(const Config *c)
{
    /* Pre- and peri-LN: the first layer reads LN(X0), whose rows the LayerNorm's scale sets;
       σ is computed for X0's own rows (unit, or √d with --input-norm sqrt-d). */
    if (c->input == INPUT_EMBEDDING)
        return false;
    return !Layer_pre_norm(c) || (c->ln_scale == LN_SCALE_UNIT && c->input_norm == INPUT_NORM_UNIT);
}

bool Theory_describes_shown_layer(const Config *c)
{
    return Attention_is_input_independent(c->attention) || c->layer == 1;
}

/* The logits' std on unit orthogonal tokens: σ_qk² at the 1/√d_h scale. */
static double unit_rows_logit_std(const Config *c)
{
    double s2 = Init_effective_sigma_qk(c) * Init_effective_sigma_qk(c);
    if (c->logit_scale == LOGIT_SCALE_LINEAR)
        s2 /= sqrt((double)Config_head_width(c));
    return s2;
}

/* The first layer's logits' std on orthonormal tokens (rows of norm √d: d times larger). */
static double first_layer_logit_std(const Config *c)
{
    double s2 = unit_rows_logit_std(c);
    return c->input_norm == INPUT_NORM_SQRT_D ? s2 * c->width : s2;
}

/* Whether matrix m is an i.i.d. Gaussian draw (any std, 0 included). */
static bool gaussian(const Config *c, Matrix m)
{
    MatrixInit how = Init_matrix(c, m);
    return !how.orthogonal && how.diagonal == 0.0 && isfinite(how.std);
}

/* Why the random-energy prediction does not describe c's first layer, or NULL. */
static const char *entropy_theory_void(const Config *c)
{
    if (!Theory_weights_drawn())
        return THEORY_CHECKPOINT_NOTE;
    if (c->attention != ATTENTION_SOFTMAX)
        return "the random-energy prediction is for softmax rows of i.i.d. Gaussian logits";
    if (Config_layer_mask(c, 1) != MASK_FULL)
        return "the random-energy prediction is for the full mask (n = T keys per row)";
    if (!gaussian(c, MATRIX_QUERY) || !gaussian(c, MATRIX_KEY))
        return "W^Q, W^K are not i.i.d. Gaussian: the logits of a row are not i.i.d. Gaussian";
    if (Qk_normalised(c))
        return "QK-norm: the logits are sqrt(d_h)*cos(angle), not sigma_qk-scaled Gaussians";
    if (c->logit_softcap > 0)
        return "soft-cap: the logits are C*tanh(S/C), bounded by C, not Gaussians";
    if (c->input == INPUT_EMBEDDING)
        return "embedding input: " THEORY_EMBEDDING_NOTE;
    if (Config_has_sink(c))
        return "sinks: each row is a distribution over T keys and the sink, not the T keys "
               "the prediction counts";
    if (!Theory_first_layer_unit_rows(c))
        return c->ln_place == LN_PLACE_PERI
                   ? "peri-LN: the first layer reads LN(X0), not the orthonormal input the logit "
                     "std is computed for"
                   : "pre-LN: the first layer reads LN(X0), not the orthonormal input the logit "
                     "std is computed for";
    return NULL;
}

void Theory_entropy_first_layer(const Config *c, EntropyTheory *out)
{
    double n = c->tokens;
    out->critical_logit_std = sqrt(2 * log(n));
    out->mean = NAN;
    out->note = entropy_theory_void(c);
    out->logit_std = out->note ? NAN : first_layer_logit_std(c);
    if (out->note)
        return;
    if (out->logit_std >= out->critical_logit_std)
        out->note = "the logit std is at or above s_c = sqrt(2 ln T): the rows condense onto a "
                    "few keys (entropy O(1)), beyond the random-energy prediction";
    else
        out->mean = log(n) - out->logit_std * out->logit_std / 2;
}

double Theory_phase_beta(const Config *c)
{
    return unit_rows_logit_std(c) / sqrt(log((double)c->tokens));
}

double Theory_phase_critical_beta(double q, double gap)
{
    return q > 0 && gap > 0 ? sqrt(2 / (q * gap)) : NAN;
}

const char *Theory_phase_void(const Config *c, int layer)
{
    if (!Theory_weights_drawn()) /* β is σ_qk's */
        return THEORY_CHECKPOINT_NOTE;
    if (c->attention != ATTENTION_SOFTMAX)
        return "the threshold is for softmax attention";
    if (Config_layer_mask(c, layer) != MASK_FULL)
        return "the threshold is derived for rows of all T keys (their encoder), not a mask's "
               "n_i keys";
    if (!gaussian(c, MATRIX_QUERY) || !gaussian(c, MATRIX_KEY))
        return "W^Q, W^K are not i.i.d. Gaussian, as the threshold's logits are";
    if (Qk_normalised(c))
        return "QK-norm: the logits are sqrt(d_h)*cos(angle), whatever beta";
    if (c->logit_softcap > 0)
        return "soft-cap: the logits are bounded by C, not Gaussians of std beta*sqrt(ln T)";
    if (Qk_rotates(c, layer))
        return "RoPE: each key's logit is turned by j - i, which changes the overlap the "
               "threshold reads";
    return NULL;
}

const char *Theory_phase_side(double beta, double critical_beta)
{
    if (isnan(beta) || isnan(critical_beta))
        return NULL;
    return beta >= critical_beta ? "entropy-collapse" : "rank-collapse";
}

/* A checkpoint's weights: only the exact λ1 = 1 of a row-stochastic matrix stays. */
static void withdraw_for_checkpoint(const Config *c, TheoryPrediction *p)
{
    p->sigma = p->bulk_radius = p->singular_edge = NAN;
    p->singular_law = NULL;
    if (!Config_rows_stochastic(c) || Config_has_sink(c))
        p->outlier = NAN;
}

void Theory_predict(const Config *c, TheoryPrediction *p)
{
    double s2 = first_layer_logit_std(c);
    p->sigma = Config_sigma(c);
    p->bulk_radius = p->outlier = p->singular_edge = NAN;
    p->singular_law = NULL;
    bool full = Config_layer_mask(c, c->layer) == MASK_FULL;
    switch (c->attention) {
    case ATTENTION_MARKOV:
    case ATTENTION_SOFTMAX:
        p->outlier = 1.0;
        if (full) {
            p->bulk_radius = p->sigma;
            p->singular_edge = 2 * p->sigma;
            p->singular_law =
                c->attention == ATTENTION_MARKOV ? "quartercircle" : "i.i.d. Markov limit";
        }
        break;
    case ATTENTION_RELU:
        if (full) {
            p->outlier = s2 / sqrt(2 * M_PI);
            p->bulk_radius = 0.5838 * s2;
        }
        break;
    case ATTENTION_SIGMOID:
        if (full)
            p->outlier = exp(s2 * s2 / 2);
        break;
    case ATTENTION_LINEAR:
        if (full) /* eigenvalues of S/√T fill radius σ_qk², i.e. √T·λ(S) reaches σ_qk²·T */
            p->bulk_radius = s2 * c->tokens;
        break;
    case ATTENTION_UNIFORM: /* {1, 0, …}: the outlier alone */
        p->outlier = 1.0;
        break;
    case ATTENTION_IDENTITY: /* every eigenvalue is 1: no outlier */
        break;
    }
    if (Config_has_sink(c)) {
        /* Sinks take a share of every row: A is sub-stochastic, λ1 is below 1 (T/(T + e^s)
           for the full mask at σ_qk → 0, 1/2 for the causal one, docs/model.md §1.2), and the
           i.i.d. Markov laws describe rows that sum to 1. */
        p->outlier = p->bulk_radius = p->singular_edge = NAN;
        p->singular_law = NULL;
    }
    if (!Attention_is_input_independent(c->attention) && !Theory_first_layer_unit_rows(c)) {
        /* The logits' scale is not the one σ was computed for: only the exact λ1 = 1 of a
           row-stochastic matrix stays. */
        p->sigma = p->bulk_radius = p->singular_edge = NAN;
        p->singular_law = NULL;
        if (!Config_rows_stochastic(c))
            p->outlier = NAN;
    }
    if (Qk_normalised(c)) {
        /* QK-norm: every logit is √d_h·cos θ whatever σ_qk or the rows' norm (docs/model.md
           §1.8a), so σ, computed from σ_qk, names nothing; only the exact λ1 = 1 of a
           row-stochastic matrix stays, and the measured logit std says the spread. */
        p->sigma = p->bulk_radius = p->singular_edge = NAN;
        p->singular_law = NULL;
        if (!Config_rows_stochastic(c))
            p->outlier = NAN;
    }
    if (c->init == INIT_ORTHOGONAL && !Attention_is_input_independent(c->attention)) {
        /* Haar W^Q, W^K: the logits are a product of two orthonormal frames, not i.i.d.; at
           T = d an orthogonal matrix, whose singular values are all equal.  The circle stays
           the bulk's outer radius. */
        p->singular_edge = NAN;
        p->singular_law = NULL;
    }
    if (!Theory_weights_drawn())
        withdraw_for_checkpoint(c, p);
    p->stable_rank_note = NULL;
    p->out_of_range = p->counterpart_out_of_range = (TheoryOutOfRange){0};
    if (!p->stable_rank) /* the spectra alone: the curves' maximisations cost ~1 ms at L = 256 */
        return;
    if (!Theory_weights_drawn()) {
        for (int l = 0; l <= c->depth; l++)
            p->stable_rank[l] = p->counterpart_stable_rank[l] = NAN;
        p->stable_rank_note = THEORY_CHECKPOINT_NOTE;
        return;
    }
    const char *note = predict_curve(c, c->gap, p->sigma, p->stable_rank, &p->out_of_range);
    const char *counterpart_note = predict_curve(
        c, Gap_toggled(c->gap), p->sigma, p->counterpart_stable_rank, &p->counterpart_out_of_range);
    p->stable_rank_note = note ? note : counterpart_note;
}

double Theory_shown_sigma(const Config *c)
{
    TheoryPrediction p = {.stable_rank = NULL};
    Theory_predict(c, &p);
    bool spread = c->attention == ATTENTION_SOFTMAX || c->attention == ATTENTION_MARKOV;
    return spread && Theory_describes_shown_layer(c) ? p.bulk_radius : NAN;
}
