/* Grouped keys and values (--kv-heads, docs/model.md §1.7): the layer against a
 * reference written here loop by loop with HF's repeat_kv sharing, G = H against one key/value
 * head per head bit for bit, the sharing refused where the scheme draws factors, and the
 * conditioning's Jacobian against finite differences of the grouped layer. */
#include "testing.h"

#include "attnscope/conditioning.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/random.h"
#include "layer_fixture.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x·w's first n columns (T×n, column-major; w is d×H·d_h). */
static double *project(const Config *c, const double *x, const double *w, int n)
{
    int T = c->tokens, d = c->width;
    double *out = calloc((size_t)T * n, sizeof(double));
    assert_non_null(out);
    reference_product(T, d, n, x, w, 1, (size_t)d, out);
    return out;
}

/* OLMo 2's QK-norm: each row of the T×n projection over its full width n (H·d_h for the
   queries, G·d_h for the keys), divided by √(mean + ε). */
static void normalise_rows(const Config *c, double *p, int n)
{
    for (int i = 0; i < c->tokens; i++) {
        double mean = 0;
        for (int e = 0; e < n; e++)
            mean += p[i + e * c->tokens] * p[i + e * c->tokens] / n;
        for (int e = 0; e < n; e++)
            p[i + e * c->tokens] /= sqrt(mean + c->ln_eps);
    }
}

/* F(X) = [A_1 X W^V_{g(1)} … A_H X W^V_{g(H)}] W^O, A_h = softmax(q_h k_{g(h)}ᵀ/√d_h) over the
   full mask, q_h = X W^Q_h, k_g = X W^K_g (QK-norm over the full width where c asks), written
   with plain loops; g(h) = h/(H/G) as HF's repeat_kv repeats each key/value head H/G times.
   x is T×d column-major, W^Q, W^K, W^V d×H·d_h as drawn (the G heads: their first G·d_h
   columns) and W^O H·d_h×d, d_h = d/H or --head-dim's. */
static void reference_layer(const Config *c, const Layer *l, const double *x, double *out)
{
    int T = c->tokens, d = c->width, H = c->heads, dh = c->head_dim ? c->head_dim : d / H;
    int G = c->kv_heads ? c->kv_heads : H, inner = H * dh;
    double *q = project(c, x, l->w.query, inner), *k = project(c, x, l->w.key, G * dh);
    double *v = project(c, x, l->w.value, G * dh);
    if (c->qk_norm == QK_NORM_FULL) {
        normalise_rows(c, q, inner);
        normalise_rows(c, k, G * dh);
    }
    double *mixed = calloc((size_t)T * inner, sizeof(double));
    double *logit = malloc(sizeof(double) * T);
    assert_true(mixed && logit);
    for (int h = 0; h < H; h++) {
        int g = h / (H / G);
        for (int i = 0; i < T; i++) {
            double top = -INFINITY, sum = 0;
            for (int j = 0; j < T; j++) {
                double dot = 0;
                for (int e = 0; e < dh; e++)
                    dot += q[i + (h * dh + e) * T] * k[j + (g * dh + e) * T];
                logit[j] = dot / sqrt((double)dh);
                top = fmax(top, logit[j]);
            }
            for (int j = 0; j < T; j++)
                sum += logit[j] = exp(logit[j] - top);
            for (int e = 0; e < dh; e++)
                for (int j = 0; j < T; j++)
                    mixed[i + (h * dh + e) * T] += logit[j] / sum * v[j + (g * dh + e) * T];
        }
    }
    memset(out, 0, sizeof(double) * T * d);
    reference_product(T, inner, d, mixed, l->w.output, 1, (size_t)inner, out);
    free(q);
    free(k);
    free(v);
    free(mixed);
    free(logit);
}

static Config grouped_wide(int heads, int kv_heads, int head_dim)
{
    Config c = Config_default();
    c.tokens = 6;
    c.width = 12;
    c.depth = 2;
    c.heads = heads;
    c.kv_heads = kv_heads;
    c.head_dim = head_dim;
    c.output = OUTPUT_GAUSSIAN;
    c.sigma_qk = 1.5;
    char err[256];
    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
    return c;
}

static Config grouped(int heads, int kv_heads)
{
    return grouped_wide(heads, kv_heads, 0);
}

/* The grouped layer is the loop-by-loop one, for multi-query (G = 1), groups of two and of three
   heads, and G = H; the last with OLMo 2's full-width QK-norm, which normalises the G·d_h keys
   as one row. */
static void test_grouped_layer_matches_the_reference(void **state)
{
    (void)state;
    const int cases[][3] = {{6, 1, 0}, {6, 3, 0}, {6, 2, 0}, {6, 6, 0}, {4, 2, 0}, {6, 2, 1}};
    for (size_t n = 0; n < sizeof cases / sizeof cases[0]; n++) {
        Config c = grouped(cases[n][0], cases[n][1]);
        c.qk_norm = cases[n][2] ? QK_NORM_FULL : QK_NORM_NONE;
        Layer l;
        layer_new(&l, &c);
        layer_draw_all(&l, &c);
        char what[64];
        snprintf(what, sizeof what, "H %d G %d", c.heads, c.kv_heads);
        assert_step_matches(&c, &l, reference_layer, 1e-12, what);
        layer_free(&l, &c);
    }
}

/* Heads whose width does not split d (--head-dim): H·d_h = 10 < d = 12 and 20 > 12, grouped
   and not, with the full-width QK-norm over H·d_h; the layer is the loop-by-loop one. */
static void test_heads_of_their_own_width_match_the_reference(void **state)
{
    (void)state;
    const int cases[][4] = {{2, 2, 5, 0}, {4, 2, 5, 1}, {5, 1, 4, 0}, {2, 1, 10, 1}};
    for (size_t n = 0; n < sizeof cases / sizeof cases[0]; n++) {
        Config c = grouped_wide(cases[n][0], cases[n][1], cases[n][2]);
        c.qk_norm = cases[n][3] ? QK_NORM_FULL : QK_NORM_NONE;
        assert_true(Config_heads_width(&c) != c.width);
        Layer l;
        layer_new(&l, &c);
        layer_draw_all(&l, &c);
        char what[64];
        snprintf(what, sizeof what, "H %d G %d d_h %d", c.heads, c.kv_heads, c.head_dim);
        assert_step_matches(&c, &l, reference_layer, 1e-12, what);
        layer_free(&l, &c);
    }
}

/* Heads of one group attend with the same keys: with identical queries (W^Q's blocks copied)
   their attention is identical, exactly; heads of different groups differ. */
static void test_heads_of_a_group_share_their_keys(void **state)
{
    (void)state;
    Config c = grouped(4, 2);
    Layer l;
    layer_new(&l, &c);
    layer_draw_all(&l, &c);
    int d = c.width, dh = d / c.heads, T = c.tokens;
    for (int h = 1; h < c.heads; h++)
        memcpy(l.w.query + (size_t)h * dh * d, l.w.query, sizeof(double) * dh * d);
    double *a[4];
    const double *logits;
    LayerOutcome outcome;
    for (int h = 0; h < c.heads; h++) {
        assert_int_equal(Layer_attention(&c, 1, &l.w, &l.b, h, &logits, &outcome), 0);
        a[h] = malloc(sizeof(double) * T * T);
        assert_non_null(a[h]);
        memcpy(a[h], l.b.attention, sizeof(double) * T * T);
    }
    assert_memory_equal(a[0], a[1], sizeof(double) * T * T);
    assert_memory_equal(a[2], a[3], sizeof(double) * T * T);
    assert_memory_not_equal(a[0], a[2], sizeof(double) * T * T);
    for (int h = 0; h < c.heads; h++)
        free(a[h]);
    layer_free(&l, &c);
}

/* --kv-heads H is --kv-heads 0 (one per head, today's layer) bit for bit, through the whole
   run. */
static void test_one_group_per_head_is_todays_layer(void **state)
{
    (void)state;
    char err[256];
    Config c = grouped(4, 0);
    c.depth = 3;
    Result *today = Result_new(), *explicit = Result_new();
    assert_int_equal(Model_run(&c, workspace, today, NULL, err, sizeof err), 0);
    c.kv_heads = 4;
    Workspace *fresh = Workspace_new();
    assert_int_equal(Model_run(&c, fresh, explicit, NULL, err, sizeof err), 0);
    assert_memory_equal(today->network.stable_rank, explicit->network.stable_rank,
                        sizeof(double) * (c.depth + 1));
    assert_memory_equal(today->singular_values, explicit->singular_values,
                        sizeof(double) * c.tokens);
    assert_memory_equal(today->eigenvalues, explicit->eigenvalues, sizeof(Complex) * c.tokens);
    Workspace_free(fresh);
    Result_free(today);
    Result_free(explicit);
}

/* The result names the heads that share the shown head's keys (the status line shows G), and
   says nothing of groups with one key/value head per head. */
static void test_shown_heads_group_is_named(void **state)
{
    (void)state;
    char err[256];
    Config c = grouped(6, 2);
    c.head = 5;
    Result *r = Result_new();
    for (int g = 0; g < 2; g++) {
        c.kv_heads = g == 0 ? 2 : 6;
        assert_int_equal(Model_run(&c, workspace, r, NULL, err, sizeof err), 0);
        bool said = false;
        for (int i = 0; i < r->warnings.count; i++)
            said = said || strstr(r->warnings.text[i], "head 5 shares W^K and W^V with heads 4-6");
        assert_true(said == (g == 0));
    }
    Result_free(r);
}

/* G must divide H; schemes whose W^K or W^V are factors of a per-head (or per-layer) SVD cannot
   share them: both refused, naming the option and what is accepted. */
static void test_bad_groups_are_refused(void **state)
{
    (void)state;
    char err[256];
    Config c = grouped(6, 0);
    c.kv_heads = 4;
    assert_int_equal(Config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "--kv-heads 4: accepted a divisor of --heads 6"));
    c.kv_heads = 12;
    assert_int_equal(Config_validate(&c, err, sizeof err), -1);
    c.kv_heads = 3;
    c.init = INIT_CUTTING_SKIP;
    c.output = OUTPUT_ORTHOGONAL;
    assert_int_equal(Config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "--kv-heads 3: accepted only with W^K and W^V drawn on their own"));
    c.kv_heads = 6; /* one per head: the factors are each head's own */
    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
}

/* The conditioning's K of layer 1 with shared W^K, W^V is the Jacobian of the grouped layer
   itself: its largest and smallest singular values against those of central differences of
   the layer step (no skip, LayerNorm or MLP: the step is f). */
static void assert_jacobian_matches_finite_differences(Config c)
{
    char err[256];
    int T = c.tokens, d = c.width, n = T * d;
    Layer l;
    layer_new(&l, &c);
    layer_draw_all(&l, &c);
    double *x0 = malloc(sizeof(double) * n), *k = malloc(sizeof(double) * n * n);
    double *plus = malloc(sizeof(double) * n), *s = malloc(sizeof(double) * n);
    assert_true(x0 && k && plus && s);
    memcpy(x0, l.b.x, sizeof(double) * n);
    const double h = 1e-5;
    for (int j = 0; j < n; j++) {
        memcpy(l.b.x, x0, sizeof(double) * n);
        l.b.x[j] += h;
        layer_step_once(&c, &l);
        memcpy(plus, l.b.x, sizeof(double) * n);
        memcpy(l.b.x, x0, sizeof(double) * n);
        l.b.x[j] -= h;
        layer_step_once(&c, &l);
        for (int i = 0; i < n; i++)
            k[i + (size_t)j * n] = (plus[i] - l.b.x[i]) / (2 * h);
    }
    double superb[64];
    assert_int_equal(
        LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', n, n, k, n, s, NULL, 1, NULL, 1, superb), 0);
    Conditioning cond;
    assert_int_equal(Conditioning_run(&c, &cond, err, sizeof err), 0);
    /* Central differences err by O(h²)·‖f'''‖ ≈ 1e-10 here; 1e-7 of the norm is far above. */
    if (fabs(cond.network.jacobian_norm[1] - s[0]) > 1e-7 * s[0] ||
        fabs(cond.network.jacobian_s_min[1] - s[n - 1]) > 1e-7 * s[0])
        fail_msg("K: s_max %.12g s_min %.12g; differences: %.12g %.12g",
                 cond.network.jacobian_norm[1], cond.network.jacobian_s_min[1], s[0], s[n - 1]);
    Conditioning_release(&cond);
    free(x0);
    free(k);
    free(plus);
    free(s);
    layer_free(&l, &c);
}

static void test_grouped_jacobian_matches_finite_differences(void **state)
{
    (void)state;
    Config c = grouped(4, 2);
    c.tokens = 4;
    c.width = 8;
    c.depth = 1;
    assert_jacobian_matches_finite_differences(c);
    /* Heads whose width does not split d: W_VO,h = W^V_h W^O_h is still d×d, through H·d_h
       = 12 > 8, grouped (G·d_h = 6 < 8) with QK-norm's shaped projections and RoPE. */
    c.head_dim = 3;
    assert_jacobian_matches_finite_differences(c);
    c.heads = 2, c.kv_heads = 1, c.qk_norm = QK_NORM_HEAD, c.rope = ROPE_HALF, c.head_dim = 6;
    c.sigma_qk = 0.7;
    assert_jacobian_matches_finite_differences(c);
}

/* Heads narrower than d in all (H·d_h = 6 < d = 8): every row of f(X) lies in W^O's row space
   of dimension 6, so K is singular whatever the mask: κ(K), κ(W_VO) and κ(B) null, and the
   warnings say why. */
static void test_narrow_heads_make_k_singular(void **state)
{
    (void)state;
    Config c = grouped_wide(2, 0, 3);
    c.tokens = 4;
    c.width = 8;
    c.depth = 1;
    char err[256];
    Conditioning cond;
    assert_int_equal(Conditioning_run(&c, &cond, err, sizeof err), 0);
    assert_true(isnan(cond.network.kappa_jacobian[1]));
    assert_true(isnan(cond.network.kappa_value_output[1]));
    bool rows = false, values = false;
    for (int i = 0; i < cond.warnings.count; i++) {
        rows |= strstr(cond.warnings.text[i], "row space of dimension H*d_h = 6 < d = 8") != NULL;
        values |= strstr(cond.warnings.text[i], "H*d_h = 6 value columns, fewer than d") != NULL;
    }
    assert_true(rows && values);
    Conditioning_release(&cond);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grouped_layer_matches_the_reference),
        cmocka_unit_test(test_heads_of_their_own_width_match_the_reference),
        cmocka_unit_test(test_heads_of_a_group_share_their_keys),
        cmocka_unit_test(test_one_group_per_head_is_todays_layer),
        cmocka_unit_test(test_shown_heads_group_is_named),
        cmocka_unit_test(test_bad_groups_are_refused),
        cmocka_unit_test(test_grouped_jacobian_matches_finite_differences),
        cmocka_unit_test(test_narrow_heads_make_k_singular),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
