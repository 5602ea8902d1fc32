/* A transformer block with a trained layer's gains and biases (layer.h's LayerAffine) written
 * loop by loop, for the tests that compare the layer step with it (test_layer_affine with
 * random gains and biases, test_weights with a Python-written checkpoint's): a causal softmax,
 * PyTorch's rows with ε, a plain skip, any norm kind and place, QK-norm per head or full, plain
 * (gelu) and gated (swiglu, geglu) MLPs.  A NULL gain or bias is none.  Needs layer_fixture.h. */
#ifndef ATTNSCOPE_TESTS_AFFINE_REFERENCE_H
#define ATTNSCOPE_TESTS_AFFINE_REFERENCE_H

#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "layer_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double *zeros(size_t n)
{
    double *x = calloc(n ? n : 1, sizeof(double));
    assert_non_null(x);
    return x;
}

/* The norm of c on the T×n rows of x in place (LayerNorm: centred first; rows √(mean + ε)
   as PyTorch's), then ·(o + gain) and + bias where given. */
static void norm_rows(const Config *c, bool centre, int n, double *x, const double *gain,
                      const double *bias)
{
    int T = c->tokens;
    for (int i = 0; i < T; i++) {
        double mean = 0, square = 0;
        for (int e = 0; centre && e < n; e++)
            mean += x[i + e * T] / n;
        for (int e = 0; e < n; e++)
            square += (x[i + e * T] - mean) * (x[i + e * T] - mean) / n;
        for (int e = 0; e < n; e++) {
            double y = (x[i + e * T] - mean) / sqrt(square + c->ln_eps);
            if (gain)
                y *= c->norm_gain_offset + gain[e];
            if (bias)
                y += bias[e];
            x[i + e * T] = y;
        }
    }
}

/* A sub-block's norm with its gain and bias (a test's RMSNorm may have a bias too: the step
   adds what the layer has). */
static void block_norm(const Config *c, double *x, const NormAffine *n)
{
    norm_rows(c, c->layernorm == LAYERNORM_LN, c->width, x, n->gain, n->bias);
}

/* x (T×d) · w's first n columns (w as drawn, d×d column-major) + bias (NULL: none). */
static double *affine_project(const Config *c, const double *x, const double *w, int n,
                              const double *bias)
{
    int T = c->tokens, d = c->width;
    double *out = zeros((size_t)T * n);
    reference_product(T, d, n, x, w, 1, (size_t)d, out);
    for (int e = 0; bias && e < n; e++)
        for (int i = 0; i < T; i++)
            out[i + e * T] += bias[e];
    return out;
}

/* QK-norm with its gain: over each head's d_h (the gain's d_h entries on every head) or the
   full n columns. */
static void qk_norm(const Config *c, double *p, int heads, const double *gain)
{
    int T = c->tokens, dh = Config_head_width(c);
    if (c->qk_norm == QK_NORM_FULL) {
        norm_rows(c, false, heads * dh, p, gain, NULL);
        return;
    }
    double *part = zeros((size_t)T * dh);
    for (int h = 0; h < heads; h++) {
        memcpy(part, p + (size_t)T * dh * h, sizeof(double) * (size_t)T * dh);
        norm_rows(c, false, dh, part, gain, NULL);
        memcpy(p + (size_t)T * dh * h, part, sizeof(double) * (size_t)T * dh);
    }
    free(part);
}

/* The attention sub-block's F(x) (T×d) with c's causal softmax, each head's matrix into
   attention[h] (row-major T×T). */
static double *reference_attention(const Config *c, const Layer *l, const LayerAffine *a,
                                   const double *x, double *attention)
{
    int T = c->tokens, d = c->width, H = c->heads, dh = d / H, G = Config_kv_heads(c);
    double *q = affine_project(c, x, l->w.query, d, a->query_bias);
    double *k = affine_project(c, x, l->w.key, G * dh, a->key_bias);
    double *v = affine_project(c, x, l->w.value, G * dh, a->value_bias);
    if (c->qk_norm != QK_NORM_NONE) {
        qk_norm(c, q, H, a->query_norm_gain);
        qk_norm(c, k, G, a->key_norm_gain);
    }
    double *mixed = zeros((size_t)T * d), scale = Init_logit_scale(c);
    for (int h = 0; h < H; h++) {
        int g = h / (H / G);
        double *A = attention + (size_t)h * T * T;
        for (int i = 0; i < T; i++) {
            double top = -INFINITY, sum = 0;
            for (int j = 0; j <= i; j++) {
                double s = 0;
                for (int e = 0; e < dh; e++)
                    s += q[i + (h * dh + e) * T] * k[j + (g * dh + e) * T];
                A[i * T + j] = s * scale;
                top = fmax(top, A[i * T + j]);
            }
            for (int j = 0; j < T; j++) {
                A[i * T + j] = j <= i ? exp(A[i * T + j] - top) : 0.0;
                sum += A[i * T + j];
            }
            for (int j = 0; j <= i; j++)
                A[i * T + j] /= sum;
            for (int e = 0; e < dh; e++)
                for (int j = 0; j <= i; j++)
                    mixed[i + (h * dh + e) * T] += A[i * T + j] * v[j + (g * dh + e) * T];
        }
    }
    double *f = affine_project(c, mixed, l->w.output, d, a->output_bias);
    free(q);
    free(k);
    free(v);
    free(mixed);
    return f;
}

/* The MLP's F(x): down(act(x·gate + β) ⊙ (x·up + β_up)) + β_down, or down(act(x·W1 + β)) + β;
   W1 and the up projection stored N×d (transposed), the down projection d columns of N. */
static double *reference_mlp(const Config *c, const Layer *l, const LayerAffine *a, const double *x)
{
    int T = c->tokens, d = c->width, N = Config_mlp_hidden(c);
    bool gated = Config_mlp_gated(c);
    double *hidden = zeros((size_t)T * N), *up = zeros((size_t)T * N), *f = zeros((size_t)T * d);
    reference_product(T, d, N, x, l->w.mlp_in, (size_t)N, 1, hidden);
    if (gated)
        reference_product(T, d, N, x, l->w.mlp_up, (size_t)N, 1, up);
    for (int e = 0; e < N; e++)
        for (int i = 0; i < T; i++) {
            double z = hidden[i + e * T] + (a->mlp_in_bias ? a->mlp_in_bias[e] : 0.0);
            double act = c->mlp == MLP_SWIGLU ? z / (1 + exp(-z))
                         : c->mlp == MLP_GEGLU
                             ? 0.5 * z * (1 + tanh(sqrt(2 / M_PI) * (z + 0.044715 * z * z * z)))
                             : 0.5 * z * erfc(-z / sqrt(2.0));
            double u = up[i + e * T] + (a->mlp_up_bias ? a->mlp_up_bias[e] : 0.0);
            hidden[i + e * T] = gated ? act * u : act;
        }
    reference_product(T, N, d, hidden, l->w.mlp_out, 1, (size_t)N, f);
    for (int e = 0; e < d; e++)
        for (int i = 0; i < T; i++)
            f[i + e * T] += a->mlp_out_bias ? a->mlp_out_bias[e] : 0.0;
    free(hidden);
    free(up);
    return f;
}

/* x ← a·x + b·F(N_in(x)) with each placement's norms: pre N_in, post N_out after the sum, peri
   both (N_out on F), output N_out on F. */
static void reference_sublayer(const Config *c, const LayerAffine *a, LayerNormSite in, double *x,
                               double *f_of_input, double *(*branch)(void *, double *),
                               void *context)
{
    size_t td = (size_t)c->tokens * c->width;
    bool pre = c->ln_place == LN_PLACE_PRE || c->ln_place == LN_PLACE_PERI;
    bool on_branch = c->ln_place == LN_PLACE_PERI || c->ln_place == LN_PLACE_OUTPUT;
    memcpy(f_of_input, x, sizeof(double) * td);
    if (pre)
        block_norm(c, f_of_input, &a->norm[in]);
    double *f = branch(context, f_of_input);
    if (on_branch)
        block_norm(c, f, &a->norm[in + 1]);
    for (size_t i = 0; i < td; i++)
        x[i] = c->skip_gain * x[i] + c->branch_gain * f[i];
    if (c->ln_place == LN_PLACE_POST)
        block_norm(c, x, &a->norm[in + 1]);
    free(f);
}

typedef struct {
    const Config *c;
    const Layer *l;
    const LayerAffine *a;
    double *attention;
} Reference;

static double *attention_branch(void *context, double *input)
{
    Reference *r = context;
    return reference_attention(r->c, r->l, r->a, input, r->attention);
}

static double *mlp_branch(void *context, double *input)
{
    Reference *r = context;
    return reference_mlp(r->c, r->l, r->a, input);
}

/* ---- the comparison -------------------------------------------------------------------- */

typedef struct {
    int T;
    double *attention; /* H·T·T: each head's as the step built it */
} Seen;

static void seen_built(void *context, int head, const double *logits, const double *attention)
{
    (void)logits;
    Seen *s = context;
    memcpy(s->attention + (size_t)head * s->T * s->T, attention,
           sizeof(double) * (size_t)s->T * s->T);
}

static void assert_agrees(const double *got, const double *want, size_t n, const char *what,
                          const char *label)
{
    double scale = 0;
    for (size_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(want[i]));
    for (size_t i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= 1e-12 * scale))
            fail_msg("%s, %s[%zu]: step %.17g, reference %.17g", label, what, i, got[i], want[i]);
}

/* Layer 1 of c on l (X0 in its x, its weights) with the gains and biases a (which the weight
   source in use must give the step): the step's attention matrices and X_1 against the
   reference's, to 1e-12 of each one's largest entry. */
static inline void affine_reference_check(const Config *c, Layer *l, const LayerAffine *a,
                                          const char *label)
{
    static const LayerAffine none;
    a = a ? a : &none;
    int T = c->tokens, H = c->heads;
    size_t td = (size_t)T * c->width, htt = (size_t)H * T * T;
    double *x = zeros(td), *input = zeros(td), *want_attention = zeros(htt);
    memcpy(x, l->b.x, sizeof(double) * td);
    Reference r = {c, l, a, want_attention};
    reference_sublayer(c, a, NORM_ATTENTION_IN, x, input, attention_branch, &r);
    if (c->mlp != MLP_NONE)
        reference_sublayer(c, a, NORM_MLP_IN, x, input, mlp_branch, &r);
    Seen seen = {T, zeros(htt)};
    LayerObserver o = {.context = &seen, .built = seen_built};
    LayerStep s = {.config = c, .layer = 1, .weights = &l->w, .gap = GAP_OFF, .observer = &o};
    LayerOutcome outcome;
    double log_scale = 0;
    assert_int_equal(Layer_step(&s, &l->b, &outcome, &log_scale), 0);
    assert_int_equal(outcome, LAYER_DONE);
    assert_agrees(seen.attention, want_attention, htt, "attention", label);
    assert_agrees(l->b.x, x, td, "X1", label);
    free(seen.attention);
    free(x);
    free(input);
    free(want_attention);
}

#endif
