/* The theory toolbox: closed forms, laws, and the overlays validated against sampled spectra
 * (docs/model.md §3). */
#include "testing.h"

#include "attnscope/layer.h"
#include "attnscope/model.h"
#include "attnscope/sweep.h"
#include "attnscope/theory.h"

#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

/* Measured at T = 1000 over seeds 1..5: quartercircle 0.0057–0.0067 (0.063 with σ off by
   10%), circular law 0.0177–0.0188 (0.17 with σ off by 10%). */
static const double KS_SINGULAR_MAX = 0.015;
static const double KS_CIRCLE_MAX = 0.04;

static void test_gap_removed_closed_form(void **state)
{
    (void)state;
    for (int l = 1; l <= 8; l++) {
        double closed = pow(2.0 * l, 4.0 * l) / pow(2.0 * l + 1, 4.0 * l + 1);
        assert_relative(Theory_gap_removed_ratio(l, 1.0), closed, 1e-10);
    }
    assert_close(Theory_gap_removed_ratio(1, 1.0), 0.0658, 5e-5);
    assert_close(Theory_gap_removed_ratio(2, 1.0), 0.0336, 5e-5);
    assert_close(Theory_gap_removed_ratio(3, 1.0), 0.0225, 5e-5);
}

static void test_identity_closed_form(void **state)
{
    (void)state;
    for (int l = 1; l <= 8; l++) {
        double closed = pow(l, 2.0 * l) / pow(l + 1.0, 2.0 * l + 1);
        assert_relative(Theory_identity_ratio(l, 1.0), closed, 1e-10);
    }
    /* γ → 0 (d ≫ T): the value matrices barely mix, E → 1 + ... and sr/T → 1 */
    assert_relative(Theory_identity_ratio(1, 1e-9), 1.0, 1e-3);
}

static void test_edges_are_maxima(void **state)
{
    (void)state;
    /* brute force over a fine grid of log z agrees with the golden section search */
    const double gammas[] = {0.1, 0.5, 1.0};
    for (int g = 0; g < 3; g++)
        for (int l = 1; l <= 4; l++) {
            double best = 0;
            for (double u = -20; u < 20; u += 1e-4) {
                double z = exp(u);
                best = fmax(best, z / (pow(1 + z, l + 1) * pow(1 + gammas[g] * z, l)));
            }
            assert_relative(Theory_edge_gap_removed(l, gammas[g]), 1.0 / best, 1e-7);
        }
}

static double integrate(double (*f)(double, double), double sigma, double a, double b, int n)
{
    double h = (b - a) / n, sum = 0;
    for (int i = 0; i < n; i++)
        sum += f(a + (i + 0.5) * h, sigma) * h;
    return sum;
}

static double x_times_quartercircle(double x, double sigma)
{
    return x * Theory_quartercircle_density(x, sigma);
}

static double x2_times_quartercircle(double x, double sigma)
{
    return x * x * Theory_quartercircle_density(x, sigma);
}

static void test_quartercircle(void **state)
{
    (void)state;
    const double sigma = 1.3;
    assert_close(integrate(Theory_quartercircle_density, sigma, 0, 2 * sigma, 200000), 1.0, 1e-6);
    assert_close(integrate(x_times_quartercircle, sigma, 0, 2 * sigma, 200000),
                 8 * sigma / (3 * M_PI), 1e-6);
    assert_close(integrate(x2_times_quartercircle, sigma, 0, 2 * sigma, 200000), sigma * sigma,
                 1e-6);
    for (double x = 0.1; x < 2 * sigma; x += 0.3)
        assert_close(Theory_quartercircle_cdf(x, sigma),
                     integrate(Theory_quartercircle_density, sigma, 0, x, 100000), 1e-6);
}

static void test_ks_distance(void **state)
{
    (void)state;
    /* samples at the quantiles (i + 1/2)/n of the circular law: distance exactly 1/(2n) */
    enum { N = 100 };
    double r[N];
    for (int i = 0; i < N; i++)
        r[N - 1 - i] = sqrt((i + 0.5) / N); /* unsorted on purpose */
    assert_close(Theory_ks_distance(r, N, Theory_circular_radial_cdf, 1.0), 0.5 / N, 1e-12);
    for (int i = 0; i < N; i++)
        r[i] = 0.5 * sqrt((i + 0.5) / N); /* all inside half the radius */
    assert_close(Theory_ks_distance(r, N, Theory_circular_radial_cdf, 1.0), 0.75, 0.01);
}

static Result *run(const Config *c)
{
    static Workspace *w;
    if (!w)
        w = Workspace_new();
    char err[256];
    Result *r = Result_new();
    if (Model_run(c, w, r, NULL, err, sizeof err))
        fail_msg("%s", err);
    return r;
}

/* markov, σ_A = 1, T = 1000: √T·s(A⊥) follow the quartercircle and the bulk eigenvalues of
   √T·A the circular law.  The thresholds are about twice the largest distance measured over
   seeds 1..5 (see the issue notes); a wrong σ by 10% would exceed them several times over. */
static void test_laws_fit_sampled_spectra(void **state)
{
    (void)state;
    enum { T = 1000 };
    double *x = malloc(sizeof(double) * T);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        Config c = Config_default();
        c.tokens = c.width = T;
        c.depth = 1;
        c.attention = ATTENTION_MARKOV;
        c.sigma_qk = pow(log(2.0), 0.25);
        c.seed = seed;
        c.gap = GAP_CENTER;
        Result *r = run(&c);
        for (int i = 0; i < T - 1; i++) /* the last is A⊥·1 = 0 */
            x[i] = sqrt((double)T) * r->singular_values[i];
        double ks_singular = Theory_ks_distance(x, T - 1, Theory_quartercircle_cdf, 1.0);
        double ks_wrong = Theory_ks_distance(x, T - 1, Theory_quartercircle_cdf, 1.1);
        Result_free(r);
        c.gap = GAP_OFF;
        r = run(&c);
        for (int i = 1; i < T; i++) /* the outlier λ1 = 1 is first */
            x[i - 1] = sqrt((double)T) * hypot(r->eigenvalues[i].re, r->eigenvalues[i].im);
        double ks_circle = Theory_ks_distance(x, T - 1, Theory_circular_radial_cdf, 1.0);
        double ks_circle_wrong = Theory_ks_distance(x, T - 1, Theory_circular_radial_cdf, 1.1);
        Result_free(r);
        print_message("seed %d: KS quartercircle %.4f (σ·1.1: %.4f), circular %.4f (σ·1.1: %.4f)\n",
                      (int)seed, ks_singular, ks_wrong, ks_circle, ks_circle_wrong);
        assert_true(ks_singular < KS_SINGULAR_MAX);
        assert_true(ks_wrong > KS_SINGULAR_MAX);
        assert_true(ks_circle < KS_CIRCLE_MAX);
        assert_true(ks_circle_wrong > KS_CIRCLE_MAX);
    }
    free(x);
}

/* 1 − |λ2| of the window mask's σ_qk → 0 attention (A_ij = 1/n_i on |i − j| ≤ w), from its
   symmetric twin D^(−1/2) B D^(−1/2) by LAPACK: the same eigenvalues, all real. */
static double window_gap_exact(int tokens, int window)
{
    double *s = calloc((size_t)tokens * tokens, sizeof(double)),
           *eig = malloc(sizeof(double) * tokens);
    for (int i = 0; i < tokens; i++)
        for (int j = 0; j < tokens; j++) {
            int n_i =
                (i + window < tokens ? i + window : tokens - 1) - (i > window ? i - window : 0) + 1;
            int n_j =
                (j + window < tokens ? j + window : tokens - 1) - (j > window ? j - window : 0) + 1;
            if (abs(i - j) <= window)
                s[(size_t)i * tokens + j] = 1 / sqrt((double)n_i * n_j);
        }
    assert_int_equal(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', tokens, s, tokens, eig), 0);
    double second = 0; /* eig ascends: λ1 = 1 is last, the band's negative ones first */
    for (int i = 0; i < tokens - 1; i++)
        second = fmax(second, fabs(eig[i]));
    assert_close(eig[tokens - 1], 1.0, 1e-12);
    free(s);
    free(eig);
    return 1 - second;
}

/* The formula against the exact eigenvalues wherever the window is narrow (2w + 1 ≤ T/2,
   Theory_window_spectral_gap_holds; w = 1..16 and the widest such w): within 6%; it
   neglects the band's quartic term, a relative (π/T')²(3w² + 3w − 1)/60, and overestimates by
   it (measured 1.00–1.38 times it here: the next orders of w/T); without the ends' shorter
   length, π²w(w+1)/(6T²) is low by ≈ 2w(w+1)/((2w+1)T), several times that tolerance. */
static void test_window_gap_against_exact_eigenvalues(void **state)
{
    (void)state;
    for (int tokens = 32; tokens <= 512; tokens *= 2)
        for (int w = 1; Theory_window_spectral_gap_holds(tokens, w);
             w = w < 16 ? w + 1 : (tokens / 2 - 1) / 2 + (w == (tokens / 2 - 1) / 2)) {
            double exact = window_gap_exact(tokens, w),
                   predicted = Theory_window_spectral_gap(tokens, w);
            double length = tokens - w * (w + 1.0) / (2 * w + 1);
            double quartic = pow(M_PI / length, 2) * (3.0 * w * w + 3 * w - 1) / 60;
            double bulk_only = M_PI * M_PI * w * (w + 1) / (6.0 * tokens * tokens);
            if (!(predicted >= exact && predicted - exact <= 1.5 * quartic * predicted) ||
                predicted - exact > 0.06 * exact || exact - bulk_only < 3 * 1.5 * quartic * exact)
                fail_msg("T = %d, w = %d: 1 − |λ2| %.9g exact, %.9g predicted (quartic term %.3g), "
                         "%.9g without the ends",
                         tokens, w, exact, predicted, quartic, bulk_only);
        }
}

/* attnscope's own window mask at σ_qk = 10⁻⁶ (logits of order 10⁻¹²) is that matrix: its |λ2| from
   the dense solver is the symmetric twin's. */
static void test_window_mask_is_the_reflecting_walk(void **state)
{
    (void)state;
    const int windows[] = {1, 4};
    for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
        Config c = Config_default();
        c.tokens = c.width = 64;
        c.depth = 1;
        c.attention = ATTENTION_SOFTMAX;
        c.mask = MASK_WINDOW;
        c.window = windows[k];
        c.sigma_qk = 1e-6;
        Result *r = run(&c);
        double second = hypot(r->eigenvalues[1].re, r->eigenvalues[1].im);
        assert_close(1 - second, window_gap_exact(c.tokens, c.window), 1e-9);
        Result_free(r);
    }
}

static void test_prediction_applies_only_where_theory_exists(void **state)
{
    (void)state;
    Config c = Config_default();
    c.depth = 3;
    double sr[4], counterpart[4];
    TheoryPrediction p = {.stable_rank = sr, .counterpart_stable_rank = counterpart};
    c.attention = ATTENTION_MARKOV;
    Theory_predict(&c, &p);
    assert_null(p.stable_rank_note);
    assert_close(sr[0], 256, 0);
    assert_relative(sr[1] - 1, pow(p.sigma, 4) * 3.0 / 256, 1e-12);
    assert_relative(counterpart[2], Theory_gap_removed_ratio(2, 1.0) * 256, 1e-12);
    assert_string_equal(p.singular_law, "quartercircle");

    c.attention = ATTENTION_SOFTMAX;
    Theory_predict(&c, &p);
    assert_non_null(p.stable_rank_note);
    assert_true(isnan(sr[1]) && isnan(counterpart[1]));
    assert_string_equal(p.singular_law, "i.i.d. Markov limit");
    assert_close(p.outlier, 1.0, 0);

    c.attention = ATTENTION_MARKOV;
    c.layernorm = LAYERNORM_LN;
    Theory_predict(&c, &p);
    assert_non_null(p.stable_rank_note);
    assert_true(isnan(sr[2]));

    c.layernorm = LAYERNORM_NONE;
    c.attention = ATTENTION_RELU;
    c.sigma_qk = 2;
    Theory_predict(&c, &p);
    assert_relative(p.outlier, 4 / sqrt(2 * M_PI), 1e-12);
    c.attention = ATTENTION_SIGMOID;
    Theory_predict(&c, &p);
    assert_relative(p.outlier, exp(8.0), 1e-12);
}

/* Rank collapse in width: for markov at ℓ = 1, sr − 1 falls like T^{1−2ℓ} = 1/T.  The law is
   asymptotic: T·(sr − 1) is 0.90, 1.55, 2.14, 2.68, 2.68, 2.78 at T = 16 … 512 (8 seeds,
   → 3), so a fit from T = 16 gives −0.69; fitted from T = 64 on it is −0.87 (4 seeds), and
   the test asks for −1 ± 0.25 there.  With the gap removed sr − 1 grows with T instead. */
static void test_width_sweep_slope(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = c.width = 512;
    c.attention = ATTENTION_MARKOV;
    c.sigma_qk = pow(log(2.0), 0.25);
    c.depth = 1;
    c.seeds = 4;
    Workspace *w = Workspace_new();
    WidthSweep sweep;
    char err[256];
    assert_int_equal(Sweep_width(&c, w, &sweep, NULL, err, sizeof err), 0);
    assert_int_equal(sweep.count, 6);
    assert_int_equal(sweep.tokens[0], 16);
    assert_int_equal(sweep.tokens[2], 64);
    assert_int_equal(sweep.tokens[5], 512);
    double slope = Sweep_loglog_slope(sweep.tokens + 2, sweep.excess + 2, sweep.count - 2);
    print_message("slope from T = 64: %.3f (from 16: %.3f), with the gap removed %.3f\n", slope,
                  sweep.slope, sweep.slope_gap);
    assert_close(slope, -1.0, 0.25);
    assert_close(sweep.theory_slope, -1.0, 0);
    assert_true(sweep.slope_gap > 0.5);
    Workspace_free(w);

    int counts[SWEEP_POINTS_MAX];
    assert_int_equal(Sweep_token_counts(100, counts), 4); /* 16 32 64 100 */
    assert_int_equal(counts[3], 100);
    assert_int_equal(Sweep_token_counts(8, counts), 3); /* 2 4 8 */
    const int x[] = {1, 10, 100};
    const double y[] = {5, 0.5, 0.05};
    assert_close(Sweep_loglog_slope(x, y, 3), -1.0, 1e-12);
    /* A point at round-off (below SWEEP_RESOLVED_EXCESS) is left out of the fit, not fitted
       through: the slope is the other two's, and NaN when one point is left. */
    const double with_round_off[] = {5, 0.5, 2.7e-64};
    assert_close(Sweep_loglog_slope(x, with_round_off, 3), -1.0, 1e-12);
    assert_true(isnan(Sweep_loglog_slope(x + 1, with_round_off + 1, 2)));
    assert_true(Sweep_resolved(SWEEP_RESOLVED_EXCESS));
    assert_false(Sweep_resolved(SWEEP_RESOLVED_EXCESS / 2));
    assert_false(Sweep_resolved(INFINITY));
}

static bool warned(const Result *r, const char *text)
{
    for (int i = 0; i < r->warnings.count; i++)
        if (strstr(r->warnings.text[i], text))
            return true;
    return false;
}

/* QK-norm: σ_qk no longer sets the logits' spread, so σ and the laws built on it are withdrawn
   with the reason (the outlier 1 of a row-stochastic matrix stays), and the run measures the
   logit std, ≈ 1 whatever σ_qk.  RoPE: the uniform fixed point is not claimed (a warning says
   attention on collapsed tokens is Toeplitz); σ at the first layer stays, as the logits of
   distinct tokens keep their law (docs/model.md §3). */
static void test_qk_norm_and_rope_claims(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 32;
    c.width = 64;
    c.depth = 2;
    c.sigma_qk = 3;
    TheoryPrediction p = {.stable_rank = NULL};
    Theory_predict(&c, &p);
    assert_true(isfinite(p.sigma) && isfinite(p.bulk_radius) && isfinite(Config_sigma(&c)));
    assert_true(isfinite(Theory_shown_sigma(&c)));
    c.qk_norm = QK_NORM_HEAD;
    Theory_predict(&c, &p);
    assert_true(isnan(p.sigma) && isnan(p.bulk_radius) && isnan(p.singular_edge));
    assert_null(p.singular_law);
    assert_close(p.outlier, 1.0, 0);
    assert_true(isnan(Theory_shown_sigma(&c)) && isnan(Config_sigma(&c)));
    char err[256];
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    assert_int_equal(Model_run(&c, w, r, NULL, err, sizeof err), 0);
    assert_true(isnan(r->sigma));
    assert_true(fabs(r->logit_std - 1) < 0.1); /* 32² logits: a few percent at most */
    assert_true(warned(r, "QK-norm (head)"));
    assert_false(warned(r, "Toeplitz"));
    /* PyTorch's √d rows make plain logits d times larger, not normalised ones: not said. */
    c.layernorm = LAYERNORM_LN;
    c.ln_scale = LN_SCALE_SQRT_D;
    assert_int_equal(Model_run(&c, w, r, NULL, err, sizeof err), 0);
    assert_false(warned(r, "LayerNorm rows of norm sqrt(d)"));
    c.qk_norm = QK_NORM_NONE;
    assert_int_equal(Model_run(&c, w, r, NULL, err, sizeof err), 0);
    assert_true(warned(r, "LayerNorm rows of norm sqrt(d)"));
    c.layernorm = LAYERNORM_NONE;
    c.ln_scale = LN_SCALE_UNIT;
    c.rope = ROPE_HALF;
    Theory_predict(&c, &p);
    assert_true(isfinite(p.sigma) && isfinite(Theory_shown_sigma(&c)));
    assert_int_equal(Model_run(&c, w, r, NULL, err, sizeof err), 0);
    assert_true(warned(r, "Toeplitz, not uniform"));
    c.rope_fraction = 0; /* no dimension turns: nothing to say */
    assert_int_equal(Model_run(&c, w, r, NULL, err, sizeof err), 0);
    assert_false(warned(r, "Toeplitz"));
    Result_free(r);
    Workspace_free(w);
}

/* A checkpoint's weights (a weight source in use): the theory's σ, laws, curves, entropy
   prediction and phase β come from σ_qk's Gaussian draws, so each is null with the reason;
   only the exact λ1 = 1 of row-stochastic attention stays.  The same settings with drawn
   weights predict them all. */
static void test_checkpoint_weights_withdraw_the_theory(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = c.width = 16;
    c.depth = 2;
    c.attention = ATTENTION_MARKOV;
    double curves[2][3];
    TheoryPrediction drawn = {.stable_rank = curves[0], .counterpart_stable_rank = curves[1]};
    Theory_predict(&c, &drawn);
    EntropyTheory entropy;
    Config softmax = c;
    softmax.attention = ATTENTION_SOFTMAX;
    Theory_entropy_first_layer(&softmax, &entropy);
    assert_true(isfinite(drawn.sigma) && isfinite(drawn.bulk_radius) && isfinite(curves[0][2]));
    assert_true(isfinite(entropy.mean) && !Theory_phase_void(&softmax, 1));
    assert_true(isfinite(Theory_shown_sigma(&softmax)));

    const WeightSource checkpoint = {.name = "model.safetensors"};
    Layer_use_weights(&checkpoint);
    assert_false(Theory_weights_drawn());
    TheoryPrediction read = {.stable_rank = curves[0], .counterpart_stable_rank = curves[1]};
    Theory_predict(&c, &read);
    assert_true(isnan(read.sigma) && isnan(read.bulk_radius) && isnan(read.singular_edge));
    assert_null(read.singular_law);
    assert_true(read.outlier == 1.0); /* rows sum to 1 whatever the weights */
    for (int l = 0; l <= c.depth; l++)
        assert_true(isnan(curves[0][l]) && isnan(curves[1][l]));
    assert_string_equal(read.stable_rank_note, THEORY_CHECKPOINT_NOTE);
    Theory_entropy_first_layer(&softmax, &entropy);
    assert_true(isnan(entropy.mean) && isnan(entropy.logit_std));
    assert_string_equal(entropy.note, THEORY_CHECKPOINT_NOTE);
    assert_string_equal(Theory_phase_void(&softmax, 1), THEORY_CHECKPOINT_NOTE);
    assert_true(isnan(Theory_shown_sigma(&softmax)));
    Config relu = softmax; /* relu's outlier is σ_qk's: withdrawn too */
    relu.attention = ATTENTION_RELU;
    Theory_predict(&relu, &read);
    assert_true(isnan(read.outlier));
    Layer_use_weights(NULL);
    assert_true(Theory_weights_drawn());
}

/* The formula's range ends where 2w + 1 passes T/2: one window past it the formula is off by
   more than the 6% it keeps inside, and it passes 1 as w nears T. */
static void test_window_gap_range(void **state)
{
    (void)state;
    assert_true(Theory_window_spectral_gap_holds(64, 15));
    assert_false(Theory_window_spectral_gap_holds(64, 16));
    assert_false(Theory_window_spectral_gap_holds(64, 28));
    double past = Theory_window_spectral_gap(64, 28), exact = window_gap_exact(64, 28);
    if (!(past > 1.2 * exact))
        fail_msg("T = 64, w = 28: formula %.6g, exact %.6g", past, exact);
    assert_true(Theory_window_spectral_gap(64, 60) > 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gap_removed_closed_form),
        cmocka_unit_test(test_identity_closed_form),
        cmocka_unit_test(test_edges_are_maxima),
        cmocka_unit_test(test_quartercircle),
        cmocka_unit_test(test_ks_distance),
        cmocka_unit_test(test_laws_fit_sampled_spectra),
        cmocka_unit_test(test_window_gap_against_exact_eigenvalues),
        cmocka_unit_test(test_window_gap_range),
        cmocka_unit_test(test_window_mask_is_the_reflecting_walk),
        cmocka_unit_test(test_prediction_applies_only_where_theory_exists),
        cmocka_unit_test(test_width_sweep_slope),
        cmocka_unit_test(test_qk_norm_and_rope_claims),
        cmocka_unit_test(test_checkpoint_weights_withdraw_the_theory),
    };
    return cmocka_run_group_tests_name("theory", tests, NULL, NULL);
}
