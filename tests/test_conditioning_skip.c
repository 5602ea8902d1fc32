/* The block's Jacobian with its skip (docs/model.md §8.2, kappa_jacobian_skip): κ(a·I + b′·K)
 * against the singular values of central differences of the real layer step, for the plain
 * and scaled skips, the gains and a branch LN; null, said why, without a skip or with a
 * LayerNorm before the branch or after the skip.  And K singular by structure (§8.1): where the
 * settings prove it, the exact path finds K singular, and the matrix-free path seeks no
 * s_min. */
#include "testing.h"

#include "attnscope/conditioning.h"
#include "layer_fixture.h"

#include <float.h>
#include <lapacke.h>

/* κ of the finite-difference Jacobian of layer 1's step (X ← a·X + b′·F(X) here: no MLP) at
   c's X0: central differences at h = 1e-5, whose O(h²) error is about 1e-10 of ‖J‖. */
static double step_kappa_by_differences(const Config *c)
{
    int n = c->tokens * c->width;
    Layer l;
    layer_new(&l, c);
    layer_draw_all(&l, c);
    double *x0 = malloc(sizeof(double) * n), *j = malloc(sizeof(double) * n * n);
    double *plus = malloc(sizeof(double) * n), *s = malloc(sizeof(double) * n);
    assert_true(x0 && j && plus && s);
    memcpy(x0, l.b.x, sizeof(double) * n);
    const double h = 1e-5;
    for (int col = 0; col < n; col++) {
        memcpy(l.b.x, x0, sizeof(double) * n);
        l.b.x[col] += h;
        layer_step_once(c, &l);
        memcpy(plus, l.b.x, sizeof(double) * n);
        memcpy(l.b.x, x0, sizeof(double) * n);
        l.b.x[col] -= h;
        layer_step_once(c, &l);
        for (int i = 0; i < n; i++)
            j[i + (size_t)col * n] = (plus[i] - l.b.x[i]) / (2 * h);
    }
    double superb[128];
    assert_true(n <= 128);
    assert_int_equal(
        LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', n, n, j, n, s, NULL, 1, NULL, 1, superb), 0);
    double kappa = s[0] / s[n - 1];
    free(x0);
    free(j);
    free(plus);
    free(s);
    layer_free(&l, c);
    return kappa;
}

static bool has_warning(const Conditioning *cond, const char *fragment)
{
    for (int i = 0; i < cond->warnings.count; i++)
        if (strstr(cond->warnings.text[i], fragment))
            return true;
    return false;
}

static Config skip_block(Skip skip, double a, double b)
{
    Config c = small(4, 6, 1);
    c.sigma_qk = 1.5; /* logits away from uniform, so E is not small */
    c.skip = skip;
    c.skip_gain = a;
    c.branch_gain = b;
    char err[256];
    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
    return c;
}

/* κ(a·I + b′·K) from the run against the step's differences: an error δ ≤ 1e-7‖J‖ in J moves κ
   by at most (1 + κ)·1e-7 relative to first order (Weyl on both ends). */
static double assert_skip_kappa_is_the_steps(const Config *c)
{
    char err[256];
    Conditioning cond;
    assert_int_equal(Conditioning_run(c, &cond, err, sizeof err), 0);
    assert_true(cond.jacobian_exact);
    double got = cond.network.kappa_jacobian_skip[1], want = step_kappa_by_differences(c);
    if (!(fabs(got - want) <= 1e-7 * (1 + want) * want))
        fail_msg("skip %s, a = %g, b = %g: kappa_jacobian_skip %.12g, differences %.12g",
                 SKIP_NAMES.names[c->skip], c->skip_gain, c->branch_gain, got, want);
    Conditioning_release(&cond);
    return got;
}

static void test_skip_jacobian_is_the_blocks(void **state)
{
    (void)state;
    Config blocks[] = {skip_block(SKIP_PLAIN, 1, 1), skip_block(SKIP_SCALED, 1, 1),
                       skip_block(SKIP_PLAIN, 2, 0.5)};
    double plain = assert_skip_kappa_is_the_steps(&blocks[0]),
           scaled = assert_skip_kappa_is_the_steps(&blocks[1]),
           gains = assert_skip_kappa_is_the_steps(&blocks[2]);
    /* The three blocks differ, so a κ of K + I for all of them could not pass. */
    assert_true(fabs(plain - scaled) > 0.1 * plain && fabs(plain - gains) > 0.1 * plain);
    /* The scaled skip with gains, and a branch LN (output-LN: X ← a·X + b′·N(F(X)), N inside
       K): still a·I + b′·K. */
    Config normed = skip_block(SKIP_SCALED, 1.5, 2);
    normed.layernorm = LAYERNORM_RMS;
    normed.ln_place = LN_PLACE_OUTPUT;
    normed.ln_scale = LN_SCALE_SQRT_D;
    assert_skip_kappa_is_the_steps(&normed);
}

/* No skip: the block's Jacobian is K, so kappa_jacobian_skip is null and a warning says why;
   likewise with a LayerNorm before the branch or after the skip, where it is not a·I + b′·K. */
static void test_skip_jacobian_null_where_not_the_blocks(void **state)
{
    (void)state;
    struct {
        Skip skip;
        LayerNorm norm;
        LnPlace place;
        const char *why;
    } cases[] = {
        {SKIP_NONE, LAYERNORM_NONE, LN_PLACE_POST, "no skip (-k none)"},
        {SKIP_PLAIN, LAYERNORM_RMS, LN_PLACE_PRE, "--ln-place pre the branch reads LN(X)"},
        {SKIP_PLAIN, LAYERNORM_RMS, LN_PLACE_PERI, "--ln-place peri the branch reads LN(X)"},
        {SKIP_SCALED, LAYERNORM_LN, LN_PLACE_POST, "the LayerNorm follows the skip"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Config c = skip_block(cases[i].skip, 1, 1);
        c.layernorm = cases[i].norm;
        c.ln_place = cases[i].place;
        char err[256];
        Conditioning cond;
        assert_int_equal(Conditioning_run(&c, &cond, err, sizeof err), 0);
        assert_false(Conditioning_skip_jacobian(&c));
        assert_true(isnan(cond.network.kappa_jacobian_skip[1]) &&
                    isnan(cond.counterpart.kappa_jacobian_skip[1]));
        if (!has_warning(&cond, cases[i].why))
            fail_msg("case %zu: no warning saying \"%s\"", i, cases[i].why);
        Conditioning_release(&cond);
    }
}

/* Grouped K/V: 4 heads of 3 on d = 12 sharing G key/value heads, the causal mask. */
static Config grouped_causal(int kv_heads, double sink)
{
    Config c = small(5, 12, 2);
    c.heads = 4;
    c.kv_heads = kv_heads;
    c.output = OUTPUT_GAUSSIAN;
    c.mask = MASK_CAUSAL;
    c.sink = sink;
    char err[256];
    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
    return c;
}

/* Where the settings prove K singular the exact path's K is singular to rounding (its
   spectrum's smallest below n·ε·s_max) and reported as the structure proves it (s_min, κ and
   the bound null, route "structure"), and the matrix-free path takes ‖K‖₂ but no s_min step:
   no layer of either network went to Lanczos or the Kronecker path, s_min and the bound null,
   said so, each layer's route "structure".  With a key/value head per head it is not proved,
   and s_min is sought: no layer's route is "structure". */
static void test_structurally_singular_k_seeks_no_s_min(void **state)
{
    (void)state;
    Config shared = grouped_causal(1, -INFINITY), own = grouped_causal(4, -INFINITY);
    Config narrow = own;
    narrow.head_dim = 2; /* H·d_h = 8 < 12: every row of f in W^O's row space */
    /* Sinks move token 1's weight with x_1: G·d_h + H = 3 + 4 = 7 < 12 still proves it. */
    Config sunk = grouped_causal(1, 0.0);
    const Config *singular[] = {&shared, &narrow, &sunk};
    char err[256];
    for (int i = 0; i < 3; i++) {
        const Config *c = singular[i];
        assert_true(Conditioning_singular_by_structure(c));
        Conditioning exact, free_path;
        assert_int_equal(Conditioning_run(c, &exact, err, sizeof err), 0);
        assert_int_equal(Conditioning_run_controlled(c,
                                                     &(ConditioningControl){.lanczos_only = true},
                                                     &free_path, err, sizeof err),
                         0);
        assert_false(free_path.jacobian_exact);
        const KronTally *t = &free_path.kron;
        assert_int_equal(t->certified + t->singular + t->far + t->beyond + t->lanczos, 0);
        assert_true(has_warning(&free_path, "s_min(K) not sought"));
        for (int l = 1; l <= c->depth; l++) {
            int n = c->tokens * c->width;
            const double *sv = exact.layers_jacobian_sv + (size_t)(l - 1) * n;
            assert_true(isnan(exact.network.kappa_jacobian[l]));
            assert_true(sv[n - 1] <= n * DBL_EPSILON * sv[0]);
            assert_true(isnan(exact.network.jacobian_s_min[l]) &&
                        isnan(exact.network.kappa_jacobian_lower[l]) &&
                        isnan(exact.counterpart.jacobian_s_min[l]));
            for (int net = 0; net < 2; net++) {
                const Conditioning *k[] = {&exact, &free_path};
                for (int path = 0; path < 2; path++)
                    assert_int_equal(
                        (net ? &k[path]->counterpart : &k[path]->network)->s_min_route[l],
                        CONDITIONING_ROUTE_STRUCTURE);
            }
            assert_true(isnan(free_path.network.jacobian_s_min[l]) &&
                        isnan(free_path.network.kappa_jacobian_lower[l]) &&
                        isnan(free_path.counterpart.jacobian_s_min[l]));
            /* ‖K‖₂ still taken: Lanczos's certificate against the SVD's, 1e-6 relative. */
            assert_true(fabs(free_path.network.jacobian_norm[l] - exact.network.jacobian_norm[l]) <=
                        1e-6 * exact.network.jacobian_norm[l]);
        }
        Conditioning_release(&exact);
        Conditioning_release(&free_path);
    }
    assert_false(Conditioning_singular_by_structure(&own));
    Conditioning free_path;
    assert_int_equal(Conditioning_run_controlled(&own, &(ConditioningControl){.lanczos_only = true},
                                                 &free_path, err, sizeof err),
                     0);
    const KronTally *t = &free_path.kron;
    assert_true(t->certified + t->singular + t->far + t->beyond + t->lanczos > 0);
    assert_false(has_warning(&free_path, "s_min(K) not sought"));
    for (int l = 1; l <= own.depth; l++)
        assert_true(free_path.network.s_min_route[l] != CONDITIONING_ROUTE_STRUCTURE &&
                    free_path.network.s_min_route[l] != CONDITIONING_ROUTE_NONE &&
                    free_path.counterpart.s_min_route[l] != CONDITIONING_ROUTE_STRUCTURE);
    Conditioning_release(&free_path);
}

/* The exact path's smallest singular value of K over its largest, at every layer: the worst
   (largest) of them.  The network's spectrum is kept at every layer and is read where the
   structure's null stands for s_min; the counterpart's s_min where it is reported. */
static double exact_s_min_ratio(const Config *c, const char *warning)
{
    Conditioning exact;
    char err[256];
    assert_int_equal(Conditioning_run(c, &exact, err, sizeof err), 0);
    assert_true(exact.jacobian_exact);
    if (warning && !has_warning(&exact, warning))
        fail_msg("no warning saying \"%s\"", warning);
    double worst = 0;
    size_t n = (size_t)c->tokens * c->width;
    for (int l = 1; l <= c->depth; l++) {
        const double *sv = exact.layers_jacobian_sv + (size_t)(l - 1) * n;
        worst = fmax(worst, sv[n - 1] / sv[0]);
        if (exact.counterpart.s_min_route[l] != CONDITIONING_ROUTE_STRUCTURE)
            worst = fmax(worst,
                         exact.counterpart.jacobian_s_min[l] / exact.counterpart.jacobian_norm[l]);
    }
    Conditioning_release(&exact);
    return worst;
}

/* Where token 1's weight moves with x_1, first_token_rank proves rank ≤ G·d_h + H − G: with
   4 heads of d_h = 4 on d = 12 in G = 2 groups that is 10 < 12 (G·d_h + H = 12 would not
   prove it), and the exact path's s_min is 0 to rounding for each kind whose weight moves.
   At d_h = 5 the bound is 12 = d: not claimed, and the exact s_min is far from 0. */
static void test_grouped_causal_rank_with_moving_weights(void **state)
{
    (void)state;
    Attention moving[] = {ATTENTION_SOFTMAX, ATTENTION_RELU, ATTENTION_SIGMOID, ATTENTION_LINEAR};
    for (size_t i = 0; i < sizeof moving / sizeof *moving; i++) {
        Config c = grouped_causal(2, moving[i] == ATTENTION_SOFTMAX ? 0.0 : -INFINITY);
        c.attention = moving[i];
        c.head_dim = 4;
        char err[256];
        assert_int_equal(Config_validate(&c, err, sizeof err), 0);
        if (!Conditioning_singular_by_structure(&c))
            fail_msg("%s: G·d_h + H − G = 10 < 12 not claimed", ATTENTION_NAMES.names[moving[i]]);
        double ratio = exact_s_min_ratio(&c, "rank <= G*d_h + H - G = 10 < d");
        int n = c.tokens * c.width;
        if (ratio > n * DBL_EPSILON)
            fail_msg("%s: s_min/‖K‖ = %.3g, not 0 to rounding", ATTENTION_NAMES.names[moving[i]],
                     ratio);
    }
    Config above = grouped_causal(2, 0.0);
    above.head_dim = 5;
    assert_false(Conditioning_singular_by_structure(&above));
    assert_true(exact_s_min_ratio(&above, NULL) > 1e-6);
    /* The softmax without a sink: a fixed weight, the value columns' bound and its words. */
    Config fixed = grouped_causal(1, -INFINITY);
    assert_true(exact_s_min_ratio(&fixed, "y_1 = x_1 W_VO, and W_VO has rank <= G*d_h = 3 < d") <=
                fixed.tokens * fixed.width * DBL_EPSILON);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skip_jacobian_is_the_blocks),
        cmocka_unit_test(test_skip_jacobian_null_where_not_the_blocks),
        cmocka_unit_test(test_structurally_singular_k_seeks_no_s_min),
        cmocka_unit_test(test_grouped_causal_rank_with_moving_weights),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
