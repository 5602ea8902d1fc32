/* Nothing on screen is false, for every attention kind × mask × gap mode: the text the user
 * reads (the status lines and the spectra panels, as the screen lays them out) is checked
 * against facts read off the numbers themselves, not against the rules that wrote it:
 *   - λ1 is marked exactly when |λ1| ≥ 2|λ2| on the eigenvalues (the two largest moduli,
 *     found here), "no outlier" otherwise, unless gap removal is named;
 *   - "λ1: 1 → 0" only where the gap-off matrix had an eigenvalue 1, the applied one has an
 *     eigenvalue 0 and none at 1 ("λ1 → 0" where the gap-off matrix had an outlier);
 *   - 1−|λ2| and |λ|>0.5 are numbers only for a spectrum a row-stochastic matrix can have (an
 *     eigenvalue 1, none larger), and then equal what the eigenvalues say; n/a otherwise;
 *   - s1/s2 is the ratio of the singular values, n/a exactly when s2 is round-off;
 *   - σ only for softmax and markov attention with the full mask, softmax at layer 1 only,
 *     with its value e^{σ_qk⁴} − 1 under the root, and its circle with it; softmax's
 *     measured logits have the spread it stands for;
 *   - "eigenvalues exact ... all real" only over real eigenvalues; the window line only where
 *     no eigenvalue stands apart;
 *   - the stable ranks printed are the network's, within [1, T];
 *   - no NaN or infinity printed as a number.
 * And for the block's settings (pre-LN, LayerNorm scale, input norm, schemes, logit scale):
 * σ and its circle only where the first layer's measured logits have the spread σ stands for.
 */
#include "testing.h"

#include "ascii.h"
#include "attnscope/conditioning.h"
#include "attnscope/model.h"
#include "canvas.h"
#include "canvas_text.h"
#include "model_fixture.h"
#include "status.h"
#include "view.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { T = 16, EIGEN_COLS = 70, EIGEN_ROWS = 30, HISTOGRAM_ROWS = 16, MAIN_ROWS = 20 };

typedef struct {
    char status[STATUS_LINES_MAX * STATUS_LINE_SIZE];
    char eigen[1 << 16], histogram[1 << 16];
} Screenful;

/* What the screen shows for r: its status lines at 200 columns and its spectra panels. */
static void screenful(const Result *r, Screenful *out)
{
    Snapshot *s = Snapshot_of(r, 1);
    assert_non_null(s);
    s->done = true;
    s->elapsed_ms = 1;
    Display display = {.overlays = true, .panel = PANEL_STABLE_RANK};
    View v = {.status = {.config = &r->config,
                         .shown = s,
                         .current = true,
                         .note = "",
                         .unicode = true,
                         .shown_subjects = View_subjects(&display),
                         .warnings_listed = View_warnings_shown(s, &display)},
              .display = display,
              .warnings_first = -1};
    char lines[STATUS_LINES_MAX][STATUS_LINE_SIZE];
    int n = Status_layout(&v.status, 200, lines, STATUS_LINES_MAX);
    out->status[0] = '\0';
    for (int i = 0; i < n; i++) {
        strcat(out->status, lines[i]);
        strcat(out->status, "\n");
    }
    Canvas *canvas[3] = {Canvas_new(EIGEN_COLS, EIGEN_ROWS, true),
                         Canvas_new(EIGEN_COLS, HISTOGRAM_ROWS, true),
                         Canvas_new(EIGEN_COLS, MAIN_ROWS, true)};
    for (int i = 0; i < 3; i++)
        assert_non_null(canvas[i]);
    View_panels(&v, canvas);
    canvas_text(canvas[0], out->eigen, sizeof out->eigen);
    canvas_text(canvas[1], out->histogram, sizeof out->histogram);
    for (int i = 0; i < 3; i++)
        Canvas_free(canvas[i]);
    Snapshot_free(s);
}

/* The number printed after "label=" (NaN for n/a, "…" or absence); *found says whether the
   label is there. */
static double printed(const char *text, const char *label, bool *found)
{
    char key[64];
    snprintf(key, sizeof key, "%s=", label);
    const char *at = strstr(text, key);
    *found = at != NULL;
    if (!at)
        return NAN;
    at += strlen(key);
    if (strncmp(at, "1+", 2) == 0 && (isdigit((unsigned char)at[2]) || at[2] == '.'))
        return 1.0 + strtod(at + 2, NULL);
    char *end;
    double value = strtod(at, &end);
    return end == at ? NAN : value;
}

/* "nan" or "inf" standing as a word: a number that is not one. */
static void no_undefined_number(const char *text, const char *where, const char *what)
{
    for (const char *p = text; *p; p++) {
        if (p > text && isalpha((unsigned char)p[-1]))
            continue;
        if ((strncasecmp(p, "nan", 3) == 0 || strncasecmp(p, "inf", 3) == 0) &&
            !isalpha((unsigned char)p[3]))
            fail_msg("%s: '%.3s' printed in the %s:\n%s", where, p, what, text);
    }
}

static double modulus(Complex z)
{
    return hypot(z.re, z.im);
}

/* The largest and second largest |λ|, by a scan of every value (not the result's order). */
static void two_largest(const Result *r, double *first, double *second)
{
    *first = *second = 0;
    for (int i = 0; i < T; i++) {
        double m = modulus(r->eigenvalues[i]);
        if (m > *first) {
            *second = *first;
            *first = m;
        } else if (m > *second) {
            *second = m;
        }
    }
}

/* Some eigenvalue within tolerance of the real number x. */
static bool has_eigenvalue(const Result *r, double x, double tolerance)
{
    for (int i = 0; i < T; i++)
        if (hypot(r->eigenvalues[i].re - x, r->eigenvalues[i].im) <= tolerance)
            return true;
    return false;
}

/* The spectrum a row-stochastic matrix has: an eigenvalue 1 and none larger in modulus. */
static bool stochastic_spectrum(const Result *r)
{
    double first, second;
    two_largest(r, &first, &second);
    return has_eigenvalue(r, 1.0, 1e-9) && first <= 1 + 1e-9;
}

/* A printed %.3g number against the value it stands for. */
static bool agrees(double shown, double value)
{
    return fabs(shown - value) <= 5e-3 * fabs(value) + 1e-12;
}

/* How often each claim was checked: a sweep that never met one proves nothing of it. */
enum {
    SEEN_MARKED,
    SEEN_REMOVED,
    SEEN_NO_OUTLIER,
    SEEN_GAP,
    SEEN_GAP_NA,
    SEEN_SIGMA,
    SEEN_EXACT,
    SEEN_WINDOW,
    SEEN_RATIO_NA,
    SEEN_NO_SPECTRA,
    SEEN_COUNT
};
static int seen[SEEN_COUNT];

/* Gap removal moved something to 0: the same weights with the gap off had it. */
static void check_gap_removed(const Config *c, const Result *r, const Screenful *s,
                              const char *where)
{
    Config off = *c;
    off.gap = GAP_OFF;
    Result *before = run(&off);
    double before_first, before_second;
    two_largest(before, &before_first, &before_second);
    if (!has_eigenvalue(r, 0.0, 1e-9 * fmax(1.0, before_first)) || r->shown_gap == GAP_OFF)
        fail_msg("%s: 'gap removed' named without an eigenvalue 0\n%s", where, s->eigen);
    if (strstr(s->eigen, "λ1: 1 → 0")) {
        if (!has_eigenvalue(before, 1.0, 1e-9))
            fail_msg("%s: 'λ1: 1 → 0' but the gap-off matrix has no eigenvalue 1", where);
        /* A 1 has gone (a triangular mask's centering moves the other diagonal entries
           too, by −1/i). */
        int ones = 0, ones_after = 0;
        for (int i = 0; i < T; i++) {
            ones += hypot(before->eigenvalues[i].re - 1, before->eigenvalues[i].im) < 1e-9;
            ones_after += hypot(r->eigenvalues[i].re - 1, r->eigenvalues[i].im) < 1e-9;
        }
        if (ones_after >= ones)
            fail_msg("%s: 'λ1: 1 → 0' but %d eigenvalues at 1 became %d", where, ones, ones_after);
    } else if (!(before_first >= 2 * before_second)) {
        fail_msg("%s: 'λ1 → 0' but the gap-off matrix had no outlier (%.3g, %.3g)", where,
                 before_first, before_second);
    }
    Result_free(before);
}

/* The outlier: marked exactly when it stands apart on the eigenvalues themselves.  Sets the two
   largest moduli and whether the first stands apart. */
static void check_outlier(const Config *c, const Result *r, const Screenful *s, const char *where,
                          double *first, double *second, bool *apart)
{
    two_largest(r, first, second);
    *apart = *first > 0 && *first >= 2 * *second;
    bool marked = false; /* "λ1 = ...", not the theory's "predicted λ1 = ..." */
    for (const char *at = strstr(s->eigen, "λ1 = "); at; at = strstr(at + 1, "λ1 = "))
        marked |= at - s->eigen < 10 || strncmp(at - 10, "predicted ", 10) != 0;
    if (marked != *apart)
        fail_msg("%s: λ1 %s but |λ1| = %.6g, |λ2| = %.6g\n%s", where,
                 marked ? "marked" : "not marked", *first, *second, s->eigen);
    bool removed = strstr(s->eigen, "→ 0 (gap removed)") != NULL;
    bool none = strstr(s->eigen, "no outlier: |λ1| < 2|λ2|") != NULL;
    seen[SEEN_MARKED] += marked;
    seen[SEEN_REMOVED] += removed;
    seen[SEEN_NO_OUTLIER] += none;
    if (marked + removed + none != 1)
        fail_msg("%s: the legend says %d of: marked, removed, no outlier\n%s", where,
                 marked + removed + none, s->eigen);
    if (removed)
        check_gap_removed(c, r, s, where);
}

/* The spectral gap and the count against 0.5: numbers only for a row-stochastic
   spectrum, and then the eigenvalues' own. */
static void check_gap_readouts(const Result *r, const Screenful *s, const char *where, double first,
                               double second)
{
    bool found;
    double gap = printed(s->status, "1−|λ2|", &found);
    assert_true(found);
    double count = printed(s->status, "|λ|>0.5", &found);
    assert_true(found);
    bool stochastic = stochastic_spectrum(r) && r->shown_gap == GAP_OFF;
    if (isfinite(gap) != stochastic || isfinite(count) != stochastic)
        fail_msg("%s: 1−|λ2| and |λ|>0.5 %s, but the spectrum %s that of a row-stochastic "
                 "matrix with its gap (|λ1| = %.17g)\n%s",
                 where, isfinite(gap) ? "shown" : "n/a", stochastic ? "is" : "is not", first,
                 s->status);
    seen[stochastic ? SEEN_GAP : SEEN_GAP_NA]++;
    if (stochastic) {
        double expected = 1 - second;
        if (fabs(expected) < READOUT_ROUNDOFF)
            expected = 0;
        if (!agrees(gap, expected))
            fail_msg("%s: 1−|λ2| = %g shown, the eigenvalues say %.6g", where, gap, expected);
        int above = 0;
        for (int i = 0; i < T; i++)
            above += modulus(r->eigenvalues[i]) > 0.5;
        if (count != above)
            fail_msg("%s: |λ|>0.5 = %g shown, %d counted", where, count, above);
    }
}

/* s1/s2: the singular values' ratio, n/a exactly where s2 is round-off. */
static void check_ratio(const Result *r, const Screenful *s, const char *where)
{
    bool found;
    double ratio = printed(s->status, "s1/s2", &found);
    assert_true(found);
    double s1 = 0, s2 = 0;
    for (int i = 0; i < T; i++) {
        double v = r->singular_values[i];
        if (v > s1) {
            s2 = s1;
            s1 = v;
        } else if (v > s2) {
            s2 = v;
        }
    }
    bool defined = s2 > 1e-12 * s1;
    seen[SEEN_RATIO_NA] += !defined;
    if (isfinite(ratio) != defined || (defined && !agrees(ratio, s1 / s2)))
        fail_msg("%s: s1/s2 = %g shown, singular values %.6g, %.6g", where, ratio, s1, s2);
}

/* σ: the entry spread of markov attention, and of softmax attention on the first
   layer's orthonormal tokens, where the measured logits have the spread it stands for. */
static void check_sigma(const Config *c, const Result *r, const Screenful *s, const char *where)
{
    bool found;
    double sigma = printed(s->status, "σ", &found);
    bool spread = c->mask == MASK_FULL && (c->attention == ATTENTION_MARKOV ||
                                           (c->attention == ATTENTION_SOFTMAX && c->layer == 1));
    if (found != spread)
        fail_msg("%s: σ %s\n%s", where, found ? "shown" : "missing", s->status);
    if (found != (strstr(s->eigen, "|z| = σ") != NULL))
        fail_msg("%s: σ %s, its circle not\n%s", where, found ? "shown" : "missing", s->eigen);
    if (found) {
        seen[SEEN_SIGMA]++;
        double q = c->sigma_qk * c->sigma_qk;
        if (!agrees(sigma, sqrt(exp(q * q) - 1)))
            fail_msg("%s: σ = %g shown", where, sigma);
        double variance = log1p(sigma * sigma);
        if (c->attention == ATTENTION_SOFTMAX && fabs(sqrt(variance) / r->logit_std - 1) > 0.25)
            fail_msg("%s: σ = %g stands for logits of std %.3g, measured %.3g", where, sigma,
                     sqrt(variance), r->logit_std);
    }
}

/* The explanation lines say what the eigenvalues show. */
static void check_explanations(const Result *r, const Screenful *s, const char *where, bool apart,
                               double first, double second)
{
    seen[SEEN_EXACT] += strstr(s->status, "eigenvalues exact") != NULL;
    seen[SEEN_WINDOW] += strstr(s->status, "no eigenvalue stands apart") != NULL;
    if (strstr(s->status, "eigenvalues exact"))
        for (int i = 0; i < T; i++)
            if (r->eigenvalues[i].im != 0)
                fail_msg("%s: 'all real' over λ = %g%+gi", where, r->eigenvalues[i].re,
                         r->eigenvalues[i].im);
    if (strstr(s->status, "no eigenvalue stands apart") && apart)
        fail_msg("%s: 'no eigenvalue stands apart' over |λ1| = %g, |λ2| = %g", where, first,
                 second);
}

/* The stable ranks shown are the network's, and a stable rank lies in [1, T]. */
static void check_stable_ranks(const Config *c, const Result *r, const Screenful *s,
                               const char *where)
{
    bool found;
    for (int layer = 1; layer <= c->depth; layer++) {
        char label[32];
        snprintf(label, sizeof label, "sr(ℓ=%d)", layer);
        double sr = printed(s->status, label, &found);
        if (!found)
            continue;
        double expected = r->network.stable_rank[layer];
        if (isfinite(expected) != isfinite(sr) ||
            (isfinite(sr) && (!agrees(sr, expected) || sr < 1 - 1e-9 || sr > T + 1e-9)))
            fail_msg("%s: %s = %g shown, the network's is %.6g", where, label, sr, expected);
    }
}

static void check_one(const Config *c, Screenful *s)
{
    char where[160];
    snprintf(where, sizeof where, "%s/%s/%s layer %d seed %llu",
             ATTENTION_NAMES.names[c->attention], MASK_NAMES.names[c->mask],
             GAP_NAMES.names[c->gap], c->layer, (unsigned long long)c->seed);
    Result *r = run(c);
    screenful(r, s);
    no_undefined_number(s->status, where, "status lines");
    no_undefined_number(s->eigen, where, "eigenvalue panel");
    no_undefined_number(s->histogram, where, "singular-value panel");
    if (!r->spectra_ready) {
        /* A network that vanished before the shown layer (uniform attention with its gap
           removed is 0 after one layer): the panel says so and no readout pretends. */
        bool found;
        if (!strstr(s->eigen, "no spectra") || isfinite(printed(s->status, "1−|λ2|", &found)) ||
            isfinite(printed(s->status, "s1/s2", &found)))
            fail_msg("%s: no spectra, yet\n%s\n%s", where, s->eigen, s->status);
        seen[SEEN_NO_SPECTRA]++;
        Result_free(r);
        return;
    }

    double first, second;
    bool apart;
    check_outlier(c, r, s, where, &first, &second, &apart);
    check_gap_readouts(r, s, where, first, second);
    check_ratio(r, s, where);
    check_sigma(c, r, s, where);
    check_explanations(r, s, where, apart, first, second);
    check_stable_ranks(c, r, s, where);
    Result_free(r);
}

static void test_every_kind_mask_and_gap_mode(void **state)
{
    (void)state;
    static Screenful s;
    for (int kind = 0; kind < ATTENTION_NAMES.count; kind++)
        for (int mask = 0; mask < MASK_NAMES.count; mask++)
            for (int gap = 0; gap < GAP_NAMES.count; gap++)
                for (int shown = 1; shown <= 2; shown++) {
                    Config c = Config_default();
                    c.tokens = c.width = T;
                    c.depth = 2;
                    c.attention = (Attention)kind;
                    c.mask = (Mask)mask;
                    c.window = 2;
                    c.gap = (Gap)gap;
                    c.layer = shown;
                    c.seed = (uint64_t)shown;
                    check_one(&c, &s);
                }
    for (int i = 0; i < SEEN_COUNT; i++)
        if (seen[i] == 0)
            fail_msg("claim %d never met in the sweep", i);
}

/* The block's settings: σ on the status line, and its circle, only where the first layer's
   measured logits have the spread σ stands for (σ² = e^{v} − 1 for logits of variance v),
   and no infinity printed where σ overflows. */
static void test_sigma_only_where_the_logits_have_its_spread(void **state)
{
    (void)state;
    static Screenful s;
    const struct {
        const char *name;
        LnPlace place;
        LayerNorm layernorm;
        LnScale scale;
        InputNorm input;
        InitScheme init;
        LogitScale logits;
        int width;
    } cases[] = {
        {"default", LN_PLACE_POST, LAYERNORM_NONE, LN_SCALE_UNIT, INPUT_NORM_UNIT, INIT_NORMAL,
         LOGIT_SCALE_SQRT, 16},
        {"pre-LN, PyTorch LN", LN_PLACE_PRE, LAYERNORM_LN, LN_SCALE_SQRT_D, INPUT_NORM_UNIT,
         INIT_NORMAL, LOGIT_SCALE_SQRT, 16},
        {"pre-LN, rms, sqrt(d) input", LN_PLACE_PRE, LAYERNORM_RMS, LN_SCALE_UNIT,
         INPUT_NORM_SQRT_D, INIT_NORMAL, LOGIT_SCALE_SQRT, 16},
        {"pre-LN, rms", LN_PLACE_PRE, LAYERNORM_RMS, LN_SCALE_UNIT, INPUT_NORM_UNIT, INIT_NORMAL,
         LOGIT_SCALE_SQRT, 16},
        {"post-LN, PyTorch LN", LN_PLACE_POST, LAYERNORM_LN, LN_SCALE_SQRT_D, INPUT_NORM_UNIT,
         INIT_NORMAL, LOGIT_SCALE_SQRT, 16},
        {"sqrt(d) input", LN_PLACE_POST, LAYERNORM_NONE, LN_SCALE_UNIT, INPUT_NORM_SQRT_D,
         INIT_NORMAL, LOGIT_SCALE_SQRT, 16},
        /* σ² = e^{32²} − 1 overflows */
        {"sqrt(d) input, d = 32", LN_PLACE_POST, LAYERNORM_NONE, LN_SCALE_UNIT, INPUT_NORM_SQRT_D,
         INIT_NORMAL, LOGIT_SCALE_SQRT, 32},
        {"xavier", LN_PLACE_POST, LAYERNORM_NONE, LN_SCALE_UNIT, INPUT_NORM_UNIT, INIT_XAVIER,
         LOGIT_SCALE_SQRT, 16},
        {"linear logit scale", LN_PLACE_POST, LAYERNORM_NONE, LN_SCALE_UNIT, INPUT_NORM_UNIT,
         INIT_NORMAL, LOGIT_SCALE_LINEAR, 16},
    };
    bool sigma_seen = false, silence_seen = false;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Config c = Config_default();
        c.tokens = T;
        c.width = cases[i].width;
        c.depth = 2;
        c.ln_place = cases[i].place;
        c.layernorm = cases[i].layernorm;
        c.ln_scale = cases[i].scale;
        c.input_norm = cases[i].input;
        c.init = cases[i].init;
        c.logit_scale = cases[i].logits;
        Result *r = run(&c);
        screenful(r, &s);
        no_undefined_number(s.status, cases[i].name, "status lines");
        no_undefined_number(s.eigen, cases[i].name, "eigenvalue panel");
        bool found;
        double sigma = printed(s.status, "σ", &found);
        bool circle = strstr(s.eigen, "|z| = σ") != NULL;
        if (circle != found)
            fail_msg("%s: σ %s on the status line but its circle %s", cases[i].name,
                     found ? "shown" : "not shown", circle ? "drawn" : "not drawn");
        /* The spread σ stands for, against the one measured at layer 1. */
        double variance = log1p(sigma * sigma), measured = r->logit_std;
        bool spread_agrees = found && fabs(sqrt(variance) / measured - 1) < 0.25;
        if (found && !spread_agrees)
            fail_msg("%s: σ = %g stands for logits of std %.4g, measured %.4g", cases[i].name,
                     sigma, sqrt(variance), measured);
        sigma_seen |= found;
        silence_seen |= !found;
        Result_free(r);
    }
    assert_true(sigma_seen && silence_seen);
}

/* The conditioning view's histogram above the exact size names what it draws: B's singular
   values as the factors' products for one head, and for several heads (where B is no
   Kronecker product) a message instead of products that would not be B's. */
static void test_conditioning_histogram_says_what_it_shows(void **state)
{
    (void)state;
    for (int heads = 1; heads <= 2; heads++) {
        Config c = Config_default();
        c.tokens = 8;
        c.width = 16;
        c.depth = 1;
        c.heads = heads;
        Result *r = run(&c);
        Snapshot *s = Snapshot_of(r, 1);
        assert_non_null(s);
        s->done = true;
        Conditioning k;
        char err[256];
        ConditioningControl lanczos = {.lanczos_only = true};
        assert_int_equal(Conditioning_run_controlled(&c, &lanczos, &k, err, sizeof err), 0);
        assert_false(k.jacobian_exact);
        assert_true(Snapshot_attach_conditioning(s, 0, &k));
        Display display = {.panel = PANEL_CONDITIONING};
        View v = {
            .status = {.config = &c, .shown = s, .current = true, .note = "", .unicode = true},
            .display = display,
            .warnings_first = -1};
        Canvas *canvas[3] = {Canvas_new(EIGEN_COLS, EIGEN_ROWS, true),
                             Canvas_new(EIGEN_COLS, HISTOGRAM_ROWS, true),
                             Canvas_new(EIGEN_COLS, MAIN_ROWS, true)};
        View_panels(&v, canvas);
        static char text[1 << 16];
        canvas_text(canvas[1], text, sizeof text);
        if (heads == 1)
            assert_non_null(strstr(text, "B = W_VOᵀ⊗A"));
        else if (!strstr(text, "no Kronecker product") || strstr(text, "s_i(A)·s_j(W_VO)"))
            fail_msg("two heads, the histogram:\n%s", text);
        for (int i = 0; i < 3; i++)
            Canvas_free(canvas[i]);
        Conditioning_release(&k);
        Snapshot_free(s);
        Result_free(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_kind_mask_and_gap_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigma_only_where_the_logits_have_its_spread, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_conditioning_histogram_says_what_it_shows, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
