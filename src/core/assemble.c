/* The Result of a run, rewritten from what is kept (model_internal.h): the first seed's
 * curves, the bands over the seeds, the shown spectra and the readouts of docs/model.md §2,
 * the warnings (the block's, the spectra's, each layer's) and the measure routes. */
#include "attnscope/attention.h"
#include "attnscope/entropy.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/qk.h"
#include "attnscope/spectra.h"
#include "attnscope/theory.h"
#include "model_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const ROLE_NAMES[NETWORKS] = {"the", "the counterpart"};

static void add_track_warning(Warnings *w, const char *text, unsigned subject, const char *role,
                              int layer)
{
    if (strncmp(text, LAYER_MARK, 1) == 0) {
        /* Layers come in order: the first that warned is named, the later ones are not. */
        size_t length = strlen(text + 1);
        for (int i = 0; i < w->count; i++)
            if (strncmp(w->text[i], text + 1, length) == 0)
                return;
        Warnings_add_about(w, subject, "%s (from layer %d)", text + 1, layer);
        return;
    }
    const char *mark = strstr(text, ROLE_MARK);
    if (mark)
        Warnings_add_about(w, subject, "%.*s%s%s", (int)(mark - text), text, role, mark + 1);
    else
        Warnings_add_about(w, subject, "%s", text);
}

static void set_entropy(EntropyCurves *curves, int layer, const EntropyRows *rows)
{
    curves->mean[layer] = rows->mean;
    curves->min[layer] = rows->min;
    curves->max[layer] = rows->max;
    curves->normalised_mean[layer] = rows->normalised_mean;
    curves->max_weight_mean[layer] = rows->max_weight_mean;
}

/* The largest of a layer's heads' bounds on their logits' rounding (NaN: none bounded). */
static double layer_logit_rounding(const LayerState *s, const Config *c)
{
    double largest = NAN;
    for (int h = 0; s->entropy && h < c->heads; h++)
        largest = fmax(largest, s->entropy[h].logit_rounding);
    return largest;
}

/* Each field of rows NaN where its rounding bound is not below its resolution. */
static EntropyRows resolved_only(EntropyRows rows, const EntropyRows *bound)
{
    double *value[] = {&rows.mean, &rows.min, &rows.max, &rows.normalised_mean,
                       &rows.max_weight_mean};
    const double of[] = {bound->mean, bound->min, bound->max, bound->normalised_mean,
                         bound->max_weight_mean};
    for (int k = 0; k < 5; k++)
        if (!Entropy_resolved(*value[k], of[k]))
            *value[k] = NAN;
    return rows;
}

/* A layer's row entropies: the shown head's, and each value averaged over the heads (NaN
   where the layer has none, where `collapsed` says its tokens' logits are equal up to their
   rounding, and each field where its rows' own rounding bound reaches its resolution:
   docs/model.md §2, "The rows' own bound"), the logits' rounding bound and the shown mean's. */
static void fill_entropy(Curves *dest, const LayerState *s, const Config *c, int layer,
                         bool collapsed)
{
    EntropyRows average = Entropy_undefined();
    EntropyRows shown = Entropy_undefined();
    dest->logit_rounding[layer] = layer_logit_rounding(s, c);
    dest->entropy_rounding[layer] = NAN;
    if (s->entropy && !collapsed) {
        const HeadEntropy *head = &s->entropy[c->head - 1];
        shown = resolved_only(head->rows, &head->rounding);
        dest->entropy_rounding[layer] = head->rounding.mean;
        /* the average's bound: the average of the heads' bounds */
        EntropyRows sum = {0}, bound = {0};
        for (int h = 0; h < c->heads; h++) {
            const EntropyRows *e = &s->entropy[h].rows, *b = &s->entropy[h].rounding;
            sum.mean += e->mean / c->heads;
            sum.min += e->min / c->heads;
            sum.max += e->max / c->heads;
            sum.normalised_mean += e->normalised_mean / c->heads;
            sum.max_weight_mean += e->max_weight_mean / c->heads;
            bound.mean += b->mean / c->heads;
            bound.min += b->min / c->heads;
            bound.max += b->max / c->heads;
            bound.normalised_mean += b->normalised_mean / c->heads;
            bound.max_weight_mean += b->max_weight_mean / c->heads;
        }
        average = resolved_only(sum, &bound);
    }
    set_entropy(&dest->entropy, layer, &shown);
    set_entropy(&dest->entropy_head_average, layer, &average);
}

/* Whether some of layer l's row statistics are null for their rounding bound (fill_entropy):
   bounded there, and a field of the shown head's or the heads' average null. */
static bool rows_rounded(const Curves *curves, int l)
{
    const EntropyCurves *of[] = {&curves->entropy, &curves->entropy_head_average};
    if (isnan(curves->entropy_rounding[l])) /* not bounded, or null for the tokens */
        return false;
    for (int k = 0; k < 2; k++)
        if (isnan(of[k]->mean[l]) || isnan(of[k]->min[l]) || isnan(of[k]->max[l]) ||
            isnan(of[k]->max_weight_mean[l]))
            return true;
    return false;
}

/* The bounds beside a layer's entropies (docs/model.md §3): Zhai et al.'s for the shown head,
   σ = ‖M_h‖₂·‖X'X'ᵀ‖₂ with ‖X'X'ᵀ‖₂ = ‖X'‖₂², and Giorlandino & Goldt's β_c of the input's
   q and p. */
static void fill_entropy_bounds(Curves *dest, const LayerState *s, const Config *c, int layer)
{
    dest->entropy_zhai_bound[layer] = NAN;
    dest->phase_critical_beta[layer] = NAN;
    if (layer == 0 || !s->entropy)
        return;
    double sigma = s->entropy[c->head - 1].qk_norm * s->input.norm_squared;
    if (!isnan(sigma))
        dest->entropy_zhai_bound[layer] =
            Entropy_zhai_bound(Config_layer_mask(c, layer), c->window, c->tokens, sigma);
    if (!Theory_phase_void(c, layer))
        dest->phase_critical_beta[layer] =
            Theory_phase_critical_beta(s->input.second_moment, s->input.moment_gap);
}

bool round_off_noise_after(const Config *c, Gap gap, int layer)
{
    return c->skip == SKIP_NONE &&
           Gap_annihilates_equal_tokens(gap, c->attention, Config_has_sink(c),
                                        Config_layer_mask(c, layer + 1), c->window, c->tokens);
}

bool round_off_rows_read_logits(const Config *c)
{
    return c->attention != ATTENTION_IDENTITY && !Layer_attention_uniform(c);
}

void track_round_off(const Track *t, const Config *c, int *tokens_equal_from, int *noise_from)
{
    *tokens_equal_from = *noise_from = CURVES_NO_LAYER;
    for (int l = 0; l <= c->depth && l <= t->layers; l++) {
        double spread = t->state[l].geometry.relative_spread; /* Σ‖u_i‖² = 1 */
        if (isfinite(spread) && !Measure_spread_resolved(spread * spread, 1.0)) {
            *tokens_equal_from = l;
            if (round_off_noise_after(c, t->gap, l))
                *noise_from = l + 1;
            return;
        }
    }
}

static bool from(int first, int layer)
{
    return first != CURVES_NO_LAYER && layer >= first;
}

/* What reads the differences of tokens equal to within round-off, made NaN at one layer. */
static void null_differences(Curves *dest, int l)
{
    dest->stable_rank_minus_one[l] = NAN;
    dest->token_similarity[l] = NAN;
    dest->centred_stable_rank[l] = NAN;
    dest->energy_off_top[l] = NAN;
    dest->relative_spread[l] = NAN;
}

/* Every number of a network at one layer made NaN: its input there was rounding. */
static void null_layer(Curves *dest, int l)
{
    null_differences(dest, l);
    dest->stable_rank[l] = dest->log10_norm[l] = NAN;
    dest->token_cosine_mean[l] = dest->token_rms[l] = NAN;
    dest->entropy_zhai_bound[l] = dest->logit_rounding[l] = dest->entropy_rounding[l] = NAN;
}

/* Whether X_ℓ is rank one exactly by the settings (ℓ ≥ 1): rows uniform over all T keys
   whatever the tokens (Layer_attention_uniform, every row of the layer's mask sees every key)
   make every token the mean token, the gap kept and no skip carrying X0 past them; the MLP and
   LayerNorm act on each token alone.  sr = 1 and sr − 1 = 0 there are the exact values. */
static bool rank_one_by_structure(const Config *c, Gap gap, int layer)
{
    return layer >= 1 && gap == GAP_OFF && c->skip == SKIP_NONE && !Config_has_sink(c) &&
           Layer_attention_uniform(c) &&
           Gap_leaves_zero(GAP_OUTLIERS, true, Config_layer_mask(c, layer), c->window, c->tokens);
}

/* Whether the attention of `layer` takes tokens equal within round-off from layer `equal`
   (track_round_off) and reads their logits, whose rounding alone then decides how its rows
   differ from uniform (not where the rows read no logits: uniform rows by the settings,
   identity). */
static bool rows_collapsed(const Config *c, int equal, int layer)
{
    return equal != CURVES_NO_LAYER && layer > equal && round_off_rows_read_logits(c);
}

static void fill_curves(Curves *dest, const Track *t, const Config *c)
{
    int depth = c->depth, equal;
    track_round_off(t, c, &equal, &dest->noise_from);
    for (int l = 0; l <= depth && l <= t->layers; l++) {
        const LayerState *s = &t->state[l];
        dest->stable_rank[l] = s->stable_rank;
        dest->stable_rank_minus_one[l] = s->stable_rank_minus_one;
        dest->log10_norm[l] = s->log10_norm;
        dest->token_similarity[l] = s->token_similarity;
        dest->centred_stable_rank[l] = s->geometry.centred_stable_rank;
        dest->energy_off_top[l] = s->geometry.energy_off_top;
        dest->relative_spread[l] = s->geometry.relative_spread;
        dest->token_cosine_mean[l] = s->geometry.token_cosine_mean;
        dest->token_rms[l] = s->geometry.token_rms;
        bool rows_round_off = rows_collapsed(c, equal, l);
        fill_entropy(dest, s, c, l, rows_round_off);
        fill_entropy_bounds(dest, s, c, l);
        if (rows_round_off)
            dest->phase_critical_beta[l] = NAN; /* its q − p is their spread */
        if (from(equal, l))
            null_differences(dest, l);
        if (!Measure_rank_one_resolved(s->geometry.energy_off_top)) /* ±v: the rest is rounding */
            dest->stable_rank_minus_one[l] = dest->energy_off_top[l] = NAN;
        if (from(dest->noise_from, l))
            null_layer(dest, l);
        if (rank_one_by_structure(c, t->gap, l) && isfinite(s->stable_rank)) {
            dest->stable_rank[l] = 1;
            dest->stable_rank_minus_one[l] = 0;
        }
    }
    if (t->gradient_depth == depth) {
        memcpy(dest->gradient_norm, t->gradient_norm, sizeof(double) * (depth + 1));
        memcpy(dest->log10_gradient_norm, t->log10_gradient_norm, sizeof(double) * (depth + 1));
        if (from(dest->noise_from, depth))
            for (int l = 0; l <= depth; l++)
                dest->gradient_norm[l] = dest->log10_gradient_norm[l] = NAN;
    }
}

/* The first layer at which t's network is dead (overflowed or vanished), depth + 1 where it
   is not. */
static int death_layer(const Track *t, int depth)
{
    for (int l = 0; l <= t->layers && l <= depth; l++)
        if (t->state[l].net.dead)
            return l;
    return depth + 1;
}

/* Why seeds after the first have no numbers from some layer on (their other warnings are
   not said: the first seed's numbers are the ones printed): per network and kind (overflow,
   vanished), the warning of the seed that died first, naming it, and how many more there are. */
static void later_seeds_deaths(Warnings *w, Track *(*tracks)[NETWORKS], int seeds, int depth)
{
    for (int n = 0; n < NETWORKS; n++)
        for (int overflow = 1; overflow >= 0; overflow--) {
            const Track *first = NULL;
            int first_layer = depth + 1, dead = 0;
            for (int s = 1; s < seeds; s++) {
                const Track *t = tracks[s][n];
                int l = death_layer(t, depth);
                if (l > depth || t->state[l].net.overflowed != overflow)
                    continue;
                dead++;
                if (l < first_layer && t->state[l].warnings && t->state[l].net.death_warning > 0) {
                    first = t;
                    first_layer = l;
                }
            }
            if (!first)
                continue;
            const LayerState *state = &first->state[first_layer];
            char text[WARNING_LENGTH];
            int length =
                snprintf(text, sizeof text, "seed %llu: %s", (unsigned long long)first->seed,
                         state->warnings->text[state->net.death_warning - 1]);
            if (dead > 1 && length > 0 && (size_t)length < sizeof text)
                snprintf(text + length, sizeof text - (size_t)length,
                         "; %d more of the later seeds likewise", dead - 1);
            add_track_warning(w, text, WARNING_ABOUT_STABLE_RANK, ROLE_NAMES[n], 0);
        }
}

/* Mean, sample std and M2 of one per-layer value over the seeds that have it (not NaN, not
   from rounding alone: track_round_off's noise), and how many those are; and how many are
   lost (dead at or before the layer, not of round-off noise before it), where the mean, std
   and M2 are NaN: the seeds left are those that grew least, no fair sample. */
static void fill_band(Band *band, Track *(*tracks)[NETWORKS], int seeds, const Config *c,
                      int network)
{
    int noise_from[seeds > 0 ? seeds : 1], dead_from[seeds > 0 ? seeds : 1];
    for (int s = 0; s < seeds; s++) {
        int equal;
        track_round_off(tracks[s][network], c, &equal, &noise_from[s]);
        dead_from[s] = death_layer(tracks[s][network], c->depth);
    }
    for (int l = 0; l <= c->depth; l++) {
        double mean = 0, ss = 0;
        int n = 0;
        for (int s = 0; s < seeds; s++) {
            double x = tracks[s][network]->state[l].stable_rank;
            if (!from(noise_from[s], l) && !isnan(x)) {
                mean += x;
                n++;
            }
        }
        mean = n ? mean / n : NAN;
        for (int s = 0; s < seeds; s++) {
            double dv = tracks[s][network]->state[l].stable_rank - mean;
            if (!from(noise_from[s], l) && !isnan(dv))
                ss += dv * dv;
        }
        int lost = 0; /* a network that died of its round-off (its noise) is not lost */
        for (int s = 0; s < seeds; s++)
            lost += dead_from[s] <= l && !from(noise_from[s], dead_from[s]);
        band->mean[l] = lost ? NAN : mean;
        band->std[l] = n > 1 && !lost ? sqrt(ss / (n - 1)) : NAN;
        band->m2[l] = n && !lost ? ss : NAN;
        band->count[l] = n;
        band->lost[l] = lost;
    }
}

static double modulus(Complex z)
{
    return hypot(z.re, z.im);
}

/* The readouts of docs/model.md §2 for the shown matrix and layer (NaN where undefined), and
   which eigenvalue stands apart. */
static void fill_readouts(Result *r)
{
    Readouts *o = &r->readouts;
    int T = r->config.tokens, layer = r->config.layer;
    *o = (Readouts){NAN, NAN, NAN, NAN};
    r->outlier = -1;
    if (layer <= r->layers_done)
        o->stable_rank_shown_layer = r->network.stable_rank[layer];
    if (!r->spectra_ready)
        return;
    r->outlier = Spectra_outlier(T, r->eigenvalues);
    /* The spectral gap and the count against 0.5 measure against λ1 = 1 and |λ| ≤ 1: they
       mean nothing for a matrix that is not row-stochastic (relu, linear, a removed gap). */
    bool stochastic = Config_rows_stochastic(&r->config) && r->shown_gap == GAP_OFF;
    if (stochastic) {
        int above = 0;
        for (int i = 0; i < T; i++)
            above += modulus(r->eigenvalues[i]) > 0.5;
        o->count_abs_lambda_above_half = above;
        double gap = 1.0 - modulus(r->eigenvalues[1]);
        o->one_minus_abs_lambda2 = fabs(gap) < READOUT_ROUNDOFF ? 0.0 : gap;
    }
    /* s2 at round-off (uniform attention: A⊥ = 0) makes the ratio noise: undefined. */
    if (r->singular_values[1] > 1e-12 * r->singular_values[0])
        o->s1_over_s2 = r->singular_values[0] / r->singular_values[1];
}

/* Whether some layer of c turns its queries and keys. */
static bool rope_at_some_layer(const Config *c)
{
    for (int l = 1; l <= c->depth; l++)
        if (Qk_rotates(c, l))
            return true;
    return false;
}

/* block_warnings' part for sigma, the heads and the norms' placement, and the entropy. */
static void heads_and_norms_warnings(const Config *c, Warnings *w)
{
    /* σ² = exp(v) − 1 for the logits' variance v: beyond v ≈ 709 it is not a double (NaN
       where σ names nothing: W^Q W^Kᵀ drawn as αZ + βI). */
    if (Theory_weights_drawn() && isinf(Config_sigma(c)))
        Warnings_add_about(w, WARNING_ABOUT_SPECTRA_THEORY,
                           "sigma overflows the double range: the first layer's logits have "
                           "variance above 709 (sigma^2 = exp(variance) - 1), so sigma is null");
    int dh = Config_head_width(c);
    bool input_dependent = !Attention_is_input_independent(c->attention);
    if (c->heads > 1)
        Warnings_add_about(
            w, WARNING_ABOUT_SPECTRA_THEORY,
            "head %d of %d shown: its logits have rank <= d_h = %d, so its gamma is "
            "T/d_h = %g (T/d = %g): its bulk edge leaves the i.i.d. limit as T/d_h grows",
            c->head, c->heads, dh, (double)c->tokens / dh, (double)c->tokens / c->width);
    int kv_heads = Config_kv_heads(c), group = c->heads / kv_heads;
    if (kv_heads < c->heads) {
        int first = (c->head - 1) / group * group + 1;
        Warnings_add_about(w, WARNING_ABOUT_SPECTRA_THEORY,
                           "grouped K/V (G = %d of H = %d): head %d shares W^K and W^V with heads "
                           "%d-%d; its spectra are its own, but a group's heads attend with the "
                           "same keys: their matrices are correlated, not independent draws",
                           kv_heads, c->heads, c->head, first, first + group - 1);
    }
    if (c->input == INPUT_EMBEDDING) { /* markov, uniform, identity: A ignores the rows */
        /* A checkpoint's table is not drawn: S would describe rows the run does not read. */
        const WeightSource *source = Layer_weights_in_use();
        char table[160];
        if (source && source->embed)
            snprintf(table, sizeof table, "the checkpoint's table %s", source->table);
        else
            snprintf(table, sizeof table, "S = %g", Init_embedding_std(c));
        Warnings_add_about(
            w,
            WARNING_ABOUT_STABLE_RANK_THEORY | (input_dependent ? WARNING_ABOUT_SPECTRA_THEORY : 0),
            "embedding input (V = %d, %s): %s: no %s", c->vocab, table, THEORY_EMBEDDING_NOTE,
            input_dependent ? "sigma, circle laws or stable-rank curve" : "stable-rank curve");
    } else if (input_dependent && !Theory_first_layer_unit_rows(c))
        Warnings_add_about(w, WARNING_ABOUT_SPECTRA_THEORY,
                           "%s-LN: the first layer's attention reads LN(X0), rows of norm %s, "
                           "not the input's %s rows that sigma is computed for: no sigma, no "
                           "circle or quartercircle law",
                           LN_PLACE_NAMES.names[c->ln_place],
                           c->ln_scale == LN_SCALE_SQRT_D ? "sqrt(d) (PyTorch)" : "1",
                           c->input_norm == INPUT_NORM_SQRT_D ? "sqrt(d)" : "unit");
    else if (c->layernorm != LAYERNORM_NONE && c->ln_scale == LN_SCALE_SQRT_D &&
             !Qk_normalised(c)) /* QK-norm's logits do not grow with the rows */
        Warnings_add_about(
            w, WARNING_ABOUT_SPECTRA_THEORY | WARNING_ABOUT_STABLE_RANK_THEORY,
            "LayerNorm rows of norm sqrt(d) (PyTorch): the logits after it are d = %d "
            "times those of unit rows (std sigma_qk^2*d); sigma and the overlays assume "
            "unit rows, as the first layer has",
            c->width);
    const char *no_entropy = Entropy_undefined_reason(c->attention);
    if (no_entropy)
        Warnings_add_about(w, WARNING_ABOUT_ENTROPY, "attention entropy is null: %s", no_entropy);
}

/* block_warnings' part for the queries' and keys' features: QK-norm, the soft-cap, RoPE. */
static void query_key_warnings(const Config *c, Warnings *w)
{
    if (Qk_normalised(c))
        Warnings_add_about(w, WARNING_ABOUT_SPECTRA_THEORY,
                           "QK-norm (%s): every logit is sqrt(d_h)*cos(angle) of normalised q and "
                           "k, std about 1 whatever sigma_qk = %g, so sigma, its circle and the "
                           "quartercircle law are withdrawn; the logit std is measured",
                           QK_NORM_NAMES.names[c->qk_norm], c->sigma_qk);
    if (c->logit_softcap > 0 && Attention_has_query_key(c->attention))
        Warnings_add_about(w, WARNING_ABOUT_SPECTRA_THEORY,
                           "logit soft-cap C = %g: the logits are C*tanh(S/C); sigma, its circle "
                           "and the quartercircle law assume uncapped Gaussian logits and hold "
                           "only while their std is well below C",
                           c->logit_softcap);
    char spread[64] = "";
    if (c->sink_std > 0)
        snprintf(spread, sizeof spread, ", each head's drawn with std %g", c->sink_std);
    if (Config_has_sink(c))
        Warnings_add_about(
            w, WARNING_ABOUT_SPECTRA_THEORY | WARNING_ABOUT_EIGENVALUES | WARNING_ABOUT_ENTROPY,
            "sinks (s = %g%s): each row sums to 1 minus its sink's weight, so lambda1 "
            "is below 1 (1/2 causal, T/(T + e^s) full, at sigma_qk -> 0): 1 - "
            "|lambda2|, the count above 0.5, the predicted outlier and the Markov "
            "laws are withdrawn; entropy is of the keys and the sink (T + 1 "
            "outcomes)",
            c->sink, spread);
    if (rope_at_some_layer(c))
        Warnings_add_about(w, WARNING_ABOUT_SPECTRA_THEORY | WARNING_ABOUT_STABLE_RANK_THEORY,
                           "RoPE: on identical (collapsed) tokens the logits depend on j - i, so "
                           "attention is Toeplitz, not uniform: the uniform fixed point (rank 1, "
                           "eigenvalues 1 then 0) does not hold at depth");
}

/* block_warnings' part for what the theory's curves assume of the weights and the block:
   Gaussian values, one head, no W^O, no MLP, b = 1. */
static void weights_warnings(const Config *c, Warnings *w)
{
    bool input_dependent = !Attention_is_input_independent(c->attention);
    if (c->init == INIT_ORTHOGONAL && Theory_weights_drawn()) {
        Warnings_add_about(w, WARNING_ABOUT_STABLE_RANK_THEORY,
                           "orthogonal W^V keep the tokens' Gram matrix (X W W^T X^T = X X^T), "
                           "so the values collapse nothing: the stable-rank theory, built on "
                           "Gaussian values, has no curve");
        if (input_dependent)
            Warnings_add_about(w, WARNING_ABOUT_SPECTRA_THEORY,
                               "orthogonal W^Q, W^K give logits of two orthonormal frames, not "
                               "i.i.d. (at T = d all singular values of A-perp are equal): no "
                               "quartercircle law; the circle is still the bulk's radius");
    }
    if (c->heads > 1 || c->output != OUTPUT_IDENTITY || c->mlp != MLP_NONE)
        Warnings_add_about(w, WARNING_ABOUT_STABLE_RANK_THEORY | WARNING_ABOUT_GRADIENTS,
                           "the stable-rank theory and the gradient formula describe one head "
                           "without an output projection or MLP: no theory curve, gradients "
                           "null");
    else if (c->branch_gain != 1.0 && c->skip == SKIP_NONE && c->layernorm == LAYERNORM_NONE)
        Warnings_add_about(w, WARNING_ABOUT_GRADIENTS,
                           "branch gain b = %g: the gradient formula of the frozen attention "
                           "takes b = 1 (X_L = P1 W^V P2): gradients null",
                           c->branch_gain);
}

void assemble_curve_ranges(Run *run)
{
    const Config *c = run->config;
    double curves[NETWORKS][CONFIG_DEPTH_MAX + 1];
    TheoryPrediction p = {.stable_rank = curves[0], .counterpart_stable_rank = curves[1]};
    Theory_predict(c, &p);
    run->curve_range[NETWORK_MAIN] = p.out_of_range;
    run->curve_range[NETWORK_COUNTERPART] = p.counterpart_out_of_range;
}

/* The stable-rank curves where they leave [1, T] (docs/model.md §3): null there, and each
   network's first such layer named. */
static void curve_range_warnings(const Config *c, const TheoryOutOfRange *ranges, Warnings *w)
{
    const Gap gaps[NETWORKS] = {c->gap, Gap_toggled(c->gap)};
    for (int n = 0; n < NETWORKS; n++)
        if (ranges[n].layer)
            Warnings_add_about(
                w, WARNING_ABOUT_STABLE_RANK_THEORY,
                "stable-rank theory of %s network (gap %s): %s is %.4g at layer %d, outside "
                "[1, T = %d] where every stable rank lies (the limit does not hold there): the "
                "curve is null wherever it leaves that range",
                ROLE_NAMES[n], GAP_NAMES.names[gaps[n]], ranges[n].formula, ranges[n].limit,
                ranges[n].layer, c->tokens);
}

/* The layers whose rows' own rounding bounds make some of their statistics null
   (fill_entropy): each network's first one named, with the logits' bound and the mean's
   (docs/model.md §2, "The rows' own bound"). */
static void logit_rounding_warnings(const Result *r, Warnings *w)
{
    const Curves *curves[NETWORKS] = {&r->network, &r->counterpart};
    for (int n = 0; n < NETWORKS; n++)
        for (int l = 1; l <= r->layers_done; l++) {
            if (!rows_rounded(curves[n], l))
                continue;
            Warnings_add_about(
                w, WARNING_ABOUT_ENTROPY,
                "attention rows of %s network: from layer %d each logit's rounding may reach "
                "%.3g (gamma_(2d+d_h+12)*|scale|*||W^Q_h||_F*||W^K_h||_F*max_i ||x'_i||^2), "
                "and the rows' own bound on their mean entropy is %.3g: each entropy and "
                "largest weight statistic whose bound reaches half its value (or %g where it "
                "is near 0) is null, at every layer where it does (attention_logit_rounding "
                "and attention_entropy_rounding hold the bounds of each layer)",
                ROLE_NAMES[n], l, curves[n]->logit_rounding[l], curves[n]->entropy_rounding[l],
                ENTROPY_RESOLUTION_FLOOR);
            break;
        }
}

/* What the block's settings take outside the theory (docs/model.md §1.7-§1.10, the table
   of §3): each overlay or prediction they void is not drawn, and a warning about it says
   why.  Settings that leave a prediction true (Gaussian schemes, the input norm, the logit
   scale, gains with a skip) say nothing. */
static void block_warnings(const Config *c, Warnings *w)
{
    if (!Theory_weights_drawn())
        Warnings_add_about(w,
                           WARNING_ABOUT_SPECTRA_THEORY | WARNING_ABOUT_STABLE_RANK_THEORY |
                               WARNING_ABOUT_ENTROPY,
                           "weights from a checkpoint: sigma, the circle and quartercircle laws, "
                           "relu's and sigmoid's outliers, the stable-rank curves, the entropy "
                           "prediction and the phase's beta assume sigma_qk's Gaussian draws: "
                           "null");
    heads_and_norms_warnings(c, w);
    query_key_warnings(c, w);
    weights_warnings(c, w);
}

/* The shown matrix's row entropies are the main network's rows at the shown layer: null where
   its rows' statistics are null for round-off (fill_curves: the tokens equal within it, or the
   rows' own rounding bound of the least entropy), where each row's entropy is undetermined. */
static void shown_rows_round_off(Result *out, const Track *main)
{
    const Config *c = &out->config;
    int layer = c->layer, equal, noise;
    if (layer > out->layers_done)
        return;
    track_round_off(main, c, &equal, &noise);
    /* the least entropy's bound is every row's largest: resolved, so is each row */
    bool rounded =
        !isnan(out->network.entropy_rounding[layer]) && isnan(out->network.entropy.min[layer]);
    if (rows_collapsed(c, equal, layer) || rounded)
        for (int i = 0; i < c->tokens; i++)
            out->row_entropy[i] = NAN;
}

/* The kept entry's attention maps and the product's column mass into the result. */
static void copy_maps(Result *out, const KeptSpectra *spectra)
{
    AttentionMap_release(&out->attention_map);
    AttentionMap_release(&out->product_map);
    int T = out->config.tokens;
    for (int j = 0; j < T; j++)
        out->product_column_mass[j] =
            spectra->product_column_mass ? spectra->product_column_mass[j] : NAN;
    if (AttentionMap_copy(&spectra->map, &out->attention_map) ||
        AttentionMap_copy(&spectra->product_map, &out->product_map))
        Warnings_add(&out->warnings, "out of memory for the attention map: it is not shown");
}

/* Rewrites out from the kept tracks of the first `seeds` seeds: the first seed's curves,
   the bands over the leading seeds that are complete, the shown spectra, the readouts, the
   warnings (spectra first, then layer by layer, the network before its counterpart; the
   first seed's, whose numbers are shown, then the bands' where some seeds have no stable
   rank: a merge of seed ranges says the same, docs/model.md §6) and the measure routes.  The
   same order whatever was kept, so a result does not depend on what earlier runs left.
   After each layer (while a screen follows the run) the routes are the first seed's alone:
   all seeds' would make every layer cost as much as the whole ensemble so far; the end of
   the run gathers them all (every_seed). */
void assemble(Run *run, Track *(*tracks)[NETWORKS], int seeds, bool every_seed)
{
    const Config *c = run->config;
    Result *out = run->out;
    int depth = c->depth;
    fill_curves(&out->network, tracks[0][NETWORK_MAIN], c);
    fill_curves(&out->counterpart, tracks[0][NETWORK_COUNTERPART], c);
    int layers = tracks[0][NETWORK_MAIN]->layers;
    out->layers_done = layers < depth ? (layers < 0 ? 0 : layers) : depth;

    int complete = 0;
    while (complete < seeds && tracks[complete][0]->layers >= depth &&
           tracks[complete][1]->layers >= depth)
        complete++;
    if (complete > out->seeds_done) {
        fill_band(&out->stable_rank_band, tracks, complete, c, NETWORK_MAIN);
        fill_band(&out->counterpart_band, tracks, complete, c, NETWORK_COUNTERPART);
        out->seeds_done = complete;
    }

    out->warnings.count = 0;
    const KeptSpectra *spectra = kept_spectra_find(run->kept, c->seed, c);
    if (spectra) {
        out->spectra_ready = true;
        out->shown_gap = spectra->applied;
        out->outliers_removed = spectra->outliers_removed;
        out->eigenvalues_exact = spectra->exact;
        out->logit_std = spectra->logit_std;
        memcpy(out->eigenvalues, spectra->eigenvalues, sizeof(Complex) * c->tokens);
        memcpy(out->singular_values, spectra->singular_values, sizeof(double) * c->tokens);
        memcpy(out->row_entropy, spectra->row_entropy, sizeof(double) * c->tokens);
        shown_rows_round_off(out, tracks[0][NETWORK_MAIN]);
        for (int i = 0; i < spectra->warnings.count; i++)
            Warnings_add_about(&out->warnings, spectra->warnings.subject[i], "%s",
                               spectra->warnings.text[i]);
        copy_maps(out, spectra);
    } else if (tracks[0][NETWORK_MAIN]->layers >= c->layer &&
               tracks[0][NETWORK_MAIN]->state[c->layer].net.dead) {
        out->spectra_ready = false;
        Warnings_add_about(
            &out->warnings, WARNING_ABOUT_SPECTRA,
            "layer %d has no spectra: the network overflowed or vanished at or before "
            "it, so there is no finite attention matrix to show",
            c->layer);
    }
    fill_readouts(out);
    block_warnings(c, &out->warnings);
    curve_range_warnings(c, run->curve_range, &out->warnings);
    logit_rounding_warnings(out, &out->warnings);

    out->measure_counts = (MeasureCounts){0};
    for (int s = 0; s < (every_seed ? seeds : 1); s++) {
        if (tracks[s][0]->layers >= 0)
            measure_counts_add(&out->measure_counts, &tracks[s][0]->state[0].counts);
        for (int l = 0; l <= depth; l++)
            for (int n = 0; n < NETWORKS; n++) {
                const Track *t = tracks[s][n];
                if (l > t->layers)
                    continue;
                const LayerState *state = &t->state[l];
                if (l > 0) /* X0's, counted once above */
                    measure_counts_add(&out->measure_counts, &state->counts);
                for (int i = 0; s == 0 && state->warnings && i < state->warnings->count; i++)
                    add_track_warning(&out->warnings, state->warnings->text[i],
                                      state->warnings->subject[i], ROLE_NAMES[n], l);
            }
    }
    if (every_seed)
        later_seeds_deaths(&out->warnings, tracks, seeds, depth);
    const Band *bands[NETWORKS] = {&out->stable_rank_band, &out->counterpart_band};
    const Curves *first[NETWORKS] = {&out->network, &out->counterpart};
    for (int n = 0; n < NETWORKS && out->seeds_done > 0; n++) {
        char text[WARNING_LENGTH];
        if (Band_warning(bands[n]->count, bands[n]->lost, first[n]->stable_rank, depth,
                         out->seeds_done, n == NETWORK_COUNTERPART, text, sizeof text))
            Warnings_add_about(&out->warnings, WARNING_ABOUT_STABLE_RANK, "%s", text);
    }
}
