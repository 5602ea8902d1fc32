/* The forward pass of SPEC §1.5 for a network and its counterpart (gap removal toggled),
 * sharing every random weight, and the quantities of SPEC §2.
 *
 * Storage: token matrices X are T×d column-major (leading dimension T); weights d×d
 * column-major; attention matrices row by row (see attention.h).
 */
#include "attnscope/model.h"

#include "attnscope/attention.h"
#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/random.h"
#include "attnscope/spectra.h"

#include <cblas.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NETWORK_MAIN, NETWORK_COUNTERPART, NETWORKS };

struct Workspace {
    int T, d; /* the sizes the buffers hold */
    Linalg *la;
    RandomStream *random;
    double *x[NETWORKS];      /* T×d: X_ℓ of each network (normalised, see log_scale) */
    double *frozen[NETWORKS]; /* T×d: A_ℓ⋯A_1 X0 for the gradients (normalised) */
    double *xw, *y, *q, *k;   /* T×d */
    double *wq, *wk, *wv;     /* d×d */
    double *markov_gauss;     /* T×T */
    double *logits, *attn;    /* T×T */
    double *shown_before_gap, *shown_applied; /* T×T, the shown layer of the main network */
    double *gram, *gram_eig;                  /* T×T, T */
    double *gap_scratch;
    double *column; /* max(T, d) */
};

Workspace *Workspace_new(void)
{
    Workspace *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->la = Linalg_new();
    w->random = RandomStream_new();
    if (!w->la || !w->random) {
        Workspace_free(w);
        return NULL;
    }
    return w;
}

/* Every buffer of the workspace and its size in doubles for T tokens and width d: the one
   list that allocation, release and the memory estimate share. */
typedef struct {
    double **buf;
    size_t n;
} BufferPlan;
enum { WORKSPACE_BUFFERS = 20 };

static int workspace_plan(Workspace *w, int T, int d, BufferPlan plan[WORKSPACE_BUFFERS])
{
    size_t td = (size_t)T * d, dd = (size_t)d * d, tt = (size_t)T * T;
    const BufferPlan all[WORKSPACE_BUFFERS] = {
        {&w->x[0], td},
        {&w->x[1], td},
        {&w->frozen[0], td},
        {&w->frozen[1], td},
        {&w->xw, td},
        {&w->y, td},
        {&w->q, td},
        {&w->k, td},
        {&w->wq, dd},
        {&w->wk, dd},
        {&w->wv, dd},
        {&w->markov_gauss, tt},
        {&w->logits, tt},
        {&w->attn, tt},
        {&w->shown_before_gap, tt},
        {&w->shown_applied, tt},
        {&w->gram, tt},
        {&w->gram_eig, (size_t)T},
        {&w->gap_scratch, Gap_scratch_size(T)},
        {&w->column, (size_t)(T > d ? T : d)},
    };
    memcpy(plan, all, sizeof all);
    return WORKSPACE_BUFFERS;
}

static void workspace_release_buffers(Workspace *w)
{
    BufferPlan plan[WORKSPACE_BUFFERS];
    int n = workspace_plan(w, 0, 0, plan);
    for (int i = 0; i < n; i++) {
        free(*plan[i].buf);
        *plan[i].buf = NULL;
    }
    w->T = w->d = 0;
}

void Workspace_free(Workspace *w)
{
    if (!w)
        return;
    workspace_release_buffers(w);
    Linalg_free(w->la);
    RandomStream_free(w->random);
    free(w);
}

static int workspace_reserve(Workspace *w, int T, int d)
{
    if (w->T == T && w->d == d)
        return 0;
    workspace_release_buffers(w);
    BufferPlan plan[WORKSPACE_BUFFERS];
    int n = workspace_plan(w, T, d, plan);
    for (int i = 0; i < n; i++) {
        *plan[i].buf = malloc(sizeof(double) * (plan[i].n ? plan[i].n : 1));
        if (!*plan[i].buf) {
            workspace_release_buffers(w);
            return -1;
        }
    }
    w->T = T;
    w->d = d;
    return 0;
}

size_t Model_memory_estimate(const Config *c)
{
    Workspace sizes = {0};
    BufferPlan plan[WORKSPACE_BUFFERS];
    int n = workspace_plan(&sizes, c->tokens, c->width, plan);
    size_t doubles = 0, T = (size_t)c->tokens;
    for (int i = 0; i < n; i++)
        doubles += plan[i].n;
    /* LAPACK's kept workspaces: dgesdd with vectors (outliers mode) needs about 4T² + 4T,
       dgeev and dsyevd some tens of T. */
    doubles += (c->gap == GAP_OUTLIERS ? 4 * T * T : 0) + 64 * T;
    /* The result: per-layer curves of every seed, the spectra. */
    doubles += (size_t)(c->depth + 1) * 8 * (size_t)(c->seeds + 2) + 4 * T;
    return doubles * sizeof(double);
}

Result *Result_new(void)
{
    return calloc(1, sizeof(Result));
}

static void curves_free(Curves *c)
{
    free(c->stable_rank);
    free(c->stable_rank_minus_one);
    free(c->log10_norm);
    free(c->token_similarity);
    free(c->gradient_norm);
    free(c->log10_gradient_norm);
    memset(c, 0, sizeof *c);
}

static void band_free(Band *b)
{
    free(b->mean);
    free(b->std);
    memset(b, 0, sizeof *b);
}

static void result_release(Result *r)
{
    curves_free(&r->network);
    curves_free(&r->counterpart);
    band_free(&r->stable_rank_band);
    band_free(&r->counterpart_band);
    free(r->eigenvalues);
    free(r->singular_values);
    memset(r, 0, sizeof *r);
}

void Result_free(Result *r)
{
    if (!r)
        return;
    result_release(r);
    free(r);
}

static double *nan_array(size_t n)
{
    double *p = malloc(sizeof(double) * (n ? n : 1));
    if (p)
        for (size_t i = 0; i < n; i++)
            p[i] = NAN;
    return p;
}

static int curves_alloc(Curves *c, size_t n)
{
    c->stable_rank = nan_array(n);
    c->stable_rank_minus_one = nan_array(n);
    c->log10_norm = nan_array(n);
    c->token_similarity = nan_array(n);
    c->gradient_norm = nan_array(n);
    c->log10_gradient_norm = nan_array(n);
    return c->stable_rank && c->stable_rank_minus_one && c->log10_norm && c->token_similarity &&
                   c->gradient_norm && c->log10_gradient_norm
               ? 0
               : -1;
}

static int band_alloc(Band *b, size_t n)
{
    b->mean = nan_array(n);
    b->std = nan_array(n);
    return b->mean && b->std ? 0 : -1;
}

static int result_alloc(Result *r, int T, int depth)
{
    size_t n = (size_t)depth + 1;
    if (curves_alloc(&r->network, n) || curves_alloc(&r->counterpart, n) ||
        band_alloc(&r->stable_rank_band, n) || band_alloc(&r->counterpart_band, n))
        return -1;
    r->eigenvalues = calloc((size_t)T, sizeof(Complex));
    r->singular_values = nan_array((size_t)T);
    return r->eigenvalues && r->singular_values ? 0 : -1;
}

void Warnings_add(Warnings *w, const char *fmt, ...)
{
    char text[WARNING_LENGTH];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    for (int i = 0; i < w->count; i++)
        if (strcmp(w->text[i], text) == 0)
            return;
    if (w->count < WARNINGS_MAX)
        memcpy(w->text[w->count++], text, sizeof text);
}

/* ---- one network ---------------------------------------------------------------------- */

typedef struct {
    Gap gap;
    double log_scale; /* X_ℓ = exp(log_scale) · x (input-independent kinds are rescaled) */
    double log_similarity0;
    double log_frozen; /* A_ℓ⋯A_1 X0 = exp(log_frozen) · frozen */
    bool dead;         /* overflowed or vanished: later layers are undefined */
} Network;

/* The frozen-attention gradient is the product formula of SPEC §2, which describes the
   network without skips and LayerNorm. */
static bool gradients_apply(const Config *c)
{
    return c->skip == SKIP_NONE && c->layernorm == LAYERNORM_NONE;
}

/* Replaces `*product` (exp(*log_scale) times the true value) by left·product (left is
   rows×rows, transposed if asked) or product·right (right is cols×cols), renormalised to
   unit Frobenius norm with the scale carried in *log_scale.  Returns log10 of the squared
   true norm before the step (−inf for an exact 0, which then stays 0). */
static double scaled_step(int rows, int cols, double **product, double **spare, const double *left,
                          const double *right, bool transpose_left, double *log_scale)
{
    double norm = cblas_dnrm2(rows * cols, *product, 1);
    if (!(norm > 0))
        return -INFINITY;
    double log10_norm2 = 2.0 * (log10(norm) + *log_scale / M_LN10);
    if (left)
        cblas_dgemm(CblasColMajor, transpose_left ? CblasTrans : CblasNoTrans, CblasNoTrans, rows,
                    cols, rows, 1.0 / norm, left, rows, *product, rows, 0.0, *spare, rows);
    else
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, rows, cols, cols, 1.0 / norm,
                    *product, rows, right, cols, 0.0, *spare, rows);
    double *t = *product;
    *product = *spare;
    *spare = t;
    *log_scale += log(norm);
    return log10_norm2;
}

static void record(Curves *c, int layer, const Measures *m, double log_similarity0)
{
    c->stable_rank[layer] = m->stable_rank;
    c->stable_rank_minus_one[layer] = m->stable_rank_minus_one;
    c->log10_norm[layer] = m->log10_norm;
    double ratio = exp(m->log_similarity - log_similarity0);
    c->token_similarity[layer] = isfinite(ratio) ? ratio : NAN;
}

/* Weights of one layer, shared by both networks. */
static void draw_layer_weights(Workspace *w, const Config *c, uint64_t seed, int layer)
{
    size_t dd = (size_t)c->width * c->width, tt = (size_t)c->tokens * c->tokens;
    if (Attention_has_query_key(c->attention)) {
        RandomStream_gaussian(w->random, seed, layer, ROLE_QUERY, c->sigma_qk, w->wq, dd);
        RandomStream_gaussian(w->random, seed, layer, ROLE_KEY, c->sigma_qk, w->wk, dd);
    }
    if (c->attention == ATTENTION_MARKOV)
        RandomStream_gaussian(w->random, seed, layer, ROLE_MARKOV, c->sigma_qk * c->sigma_qk,
                              w->markov_gauss, tt);
    RandomStream_gaussian(w->random, seed, layer, ROLE_VALUE, 1.0, w->wv, dd);
}

/* The logits of the layer, row-major: S = X W^Q (X W^K)ᵀ / √d, i.e. Sᵀ = K Qᵀ / √d in
   column-major.  For markov the "logits" are σ_qk²·g, whose row-softmax is Z normalised. */
static const double *layer_logits(Workspace *w, const Config *c, const double *x)
{
    int T = c->tokens, d = c->width;
    if (c->attention == ATTENTION_MARKOV)
        return w->markov_gauss;
    if (!Attention_has_query_key(c->attention))
        return NULL;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, x, T, w->wq, d, 0.0, w->q,
                T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, x, T, w->wk, d, 0.0, w->k,
                T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, 1.0 / sqrt((double)d), w->k, T,
                w->q, T, 0.0, w->logits, T);
    return w->logits;
}

/* Post-LayerNorm per token (a row of the column-major X): rms: x/‖x‖; ln: centred first.
   Unit norm, not PyTorch's √d, so σ_qk means the same at every layer.  Zero rows stay 0. */
static void layernorm(LayerNorm mode, int T, int d, double *x, double *row_stat)
{
    if (mode == LAYERNORM_NONE)
        return;
    if (mode == LAYERNORM_LN) {
        memset(row_stat, 0, sizeof(double) * T);
        for (int j = 0; j < d; j++)
            for (int i = 0; i < T; i++)
                row_stat[i] += x[i + (size_t)j * T];
        for (int i = 0; i < T; i++)
            row_stat[i] /= d;
        for (int j = 0; j < d; j++)
            for (int i = 0; i < T; i++)
                x[i + (size_t)j * T] -= row_stat[i];
    }
    /* Scale each row by its largest entry first, so the sum of squares cannot overflow. */
    memset(row_stat, 0, sizeof(double) * T);
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            row_stat[i] = fmax(row_stat[i], fabs(x[i + (size_t)j * T]));
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < T; i++)
            if (row_stat[i] > 0 && isfinite(row_stat[i]))
                row_stat[i] = 1.0 / row_stat[i];
        for (int j = 0; j < d; j++)
            for (int i = 0; i < T; i++)
                x[i + (size_t)j * T] *= row_stat[i];
        if (pass == 1)
            break;
        memset(row_stat, 0, sizeof(double) * T);
        for (int j = 0; j < d; j++)
            for (int i = 0; i < T; i++)
                row_stat[i] += x[i + (size_t)j * T] * x[i + (size_t)j * T];
        for (int i = 0; i < T; i++)
            row_stat[i] = sqrt(row_stat[i]);
    }
}

static bool all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

typedef struct {
    const Config *config;
    Workspace *w;
    Result *out;
    bool first_seed;
} Run;

/* One layer of one network: attention from its own X, gap removal, values, skip, LN. */
static int network_layer(Run *run, Network *net, int which, int layer, Curves *curves)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    int T = c->tokens, d = c->width;
    size_t td = (size_t)T * d, tt = (size_t)T * T;
    double *x = w->x[which];
    bool shown = run->first_seed && which == NETWORK_MAIN && layer == c->layer;

    const double *logits = layer_logits(w, c, x);
    Attention_build(c->attention, c->mask, c->window, T, logits, w->attn);
    if (shown) {
        memcpy(w->shown_before_gap, w->attn, sizeof(double) * tt);
        run->out->logit_std = logits ? Attention_logit_std(c->mask, c->window, T, logits) : NAN;
    }
    GapOutcome outcome;
    int info = Gap_apply(net->gap, c->attention, c->mask, c->window, T, w->attn, w->la,
                         w->gap_scratch, &outcome, &run->out->warnings);
    if (info)
        return info;
    if (shown) {
        memcpy(w->shown_applied, w->attn, sizeof(double) * tt);
        run->out->shown_gap = outcome.applied;
        run->out->outliers_removed = outcome.outliers_removed;
    }
    if (run->first_seed && gradients_apply(c)) /* frozen ← A_ℓ·frozen (the buffer is Aᵀ) */
        scaled_step(T, d, &w->frozen[which], &w->y, w->attn, NULL, true, &net->log_frozen);

    /* Y = A X W^V; the attention buffer is Aᵀ to BLAS, hence the transposed flag. */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, x, T, w->wv, d, 0.0, w->xw,
                T);
    double keep = c->skip == SKIP_NONE ? 0.0 : 1.0;
    double branch = c->skip == SKIP_SCALED ? 1.0 / sqrt((double)d) : 1.0;
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, T, d, T, branch, w->attn, T, w->xw, T,
                keep, x, T);
    layernorm(c->layernorm, T, d, x, w->column);

    if (!all_finite(x, td)) {
        net->dead = true;
        Warnings_add(&run->out->warnings,
                     "%s network overflows the double range at layer %d (no LayerNorm: "
                     "the tokens grow layer by layer); its values from there on are null",
                     which == NETWORK_MAIN ? "the" : "the counterpart", layer);
        return 0;
    }
    double norm = cblas_dnrm2((int)td, x, 1);
    if (Attention_is_input_independent(c->attention) && norm > 0 &&
        c->layernorm == LAYERNORM_NONE) {
        /* A does not depend on X and every step is homogeneous of degree 1 in X: carry the
           scale apart so that deep networks never overflow. */
        cblas_dscal((int)td, 1.0 / norm, x, 1);
        net->log_scale += log(norm);
    }

    Measures m;
    info = Measure_tokens(w->la, T, d, x, net->log_scale, w->xw, w->gram, w->gram_eig, &m);
    if (info)
        return info;
    if (isnan(m.stable_rank)) {
        net->dead = true;
        Warnings_add(&run->out->warnings,
                     "%s network is exactly 0 after layer %d (%s): its stable rank is "
                     "undefined from there on",
                     which == NETWORK_MAIN ? "the" : "the counterpart", layer,
                     ATTENTION_NAMES.names[c->attention]);
    }
    record(curves, layer, &m, net->log_similarity0);
    return 0;
}

/* Orthonormal input X0 = Qᵀ, Q from the QR factorisation of G ∈ R^{d×T}, signs by diag(R). */
static int input_tokens(Workspace *w, const Config *c, uint64_t seed)
{
    int T = c->tokens, d = c->width;
    double *g = w->y; /* d×T fits in a T×d buffer */
    RandomStream_gaussian(w->random, seed, 0, ROLE_INPUT, 1.0, g, (size_t)d * T);
    int info = Linalg_orthonormalise(w->la, d, T, g);
    if (info)
        return info;
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            w->x[0][i + (size_t)j * T] = g[j + (size_t)i * d];
    memcpy(w->x[1], w->x[0], sizeof(double) * (size_t)T * d);
    for (int n = 0; n < NETWORKS; n++)
        memcpy(w->frozen[n], w->x[0], sizeof(double) * (size_t)T * d);
    return 0;
}

/* ‖∂X_L/∂W^V_ℓ‖_F² with attention frozen = ‖P1‖_F²·‖P2‖_F², P1 = A_L⋯A_1 X0 W_1⋯W_{ℓ−1},
   P2 = W_{ℓ+1}⋯W_L (SPEC §2), in log10 for ℓ = 1..L.  The value weights are drawn again
   from their streams rather than kept: L·d² doubles would not fit at the largest sizes. */
static void frozen_attention_gradients(Workspace *w, const Config *c, uint64_t seed, Network *nets,
                                       Curves *curves)
{
    int d = c->width, L = c->depth;
    size_t dd = (size_t)d * d;
    double log_p2 = 0, *log10_p2 = curves[NETWORK_COUNTERPART].log10_gradient_norm;
    /* P2 = I, then W_ℓ·P2 from the top down; the logit weights' buffers are free now. */
    memset(w->wq, 0, sizeof(double) * dd);
    for (int i = 0; i < d; i++)
        w->wq[i + (size_t)i * d] = 1.0;
    for (int l = L; l >= 1; l--) {
        RandomStream_gaussian(w->random, seed, l, ROLE_VALUE, 1.0, w->wv, dd);
        log10_p2[l] = scaled_step(d, d, &w->wq, &w->wk, w->wv, NULL, false, &log_p2);
    }
    memcpy(curves[NETWORK_MAIN].log10_gradient_norm, log10_p2, sizeof(double) * (L + 1));

    for (int l = 1; l <= L; l++) {
        RandomStream_gaussian(w->random, seed, l, ROLE_VALUE, 1.0, w->wv, dd);
        for (int n = 0; n < NETWORKS; n++) {
            Curves *g = &curves[n];
            if (nets[n].dead) {
                g->log10_gradient_norm[l] = NAN;
                continue;
            }
            g->log10_gradient_norm[l] += scaled_step(c->tokens, d, &w->frozen[n], &w->y, NULL,
                                                     w->wv, false, &nets[n].log_frozen);
            double value = pow(10.0, g->log10_gradient_norm[l]);
            g->gradient_norm[l] = isfinite(value) ? value : NAN;
        }
    }
}

static int run_seed(Run *run, uint64_t seed, int seed_index, Curves *curves,
                    const Progress *progress, bool *stopped)
{
    const Config *c = run->config;
    Workspace *w = run->w;
    Network nets[NETWORKS] = {{.gap = c->gap}, {.gap = Gap_toggled(c->gap)}};
    int info = input_tokens(w, c, seed);
    if (info)
        return info;
    Measures m0;
    info =
        Measure_tokens(w->la, c->tokens, c->width, w->x[0], 0.0, w->xw, w->gram, w->gram_eig, &m0);
    if (info)
        return info;
    for (int n = 0; n < NETWORKS; n++) {
        nets[n].log_similarity0 = m0.log_similarity;
        record(&curves[n], 0, &m0, m0.log_similarity);
    }
    for (int layer = 1; layer <= c->depth; layer++) {
        draw_layer_weights(w, c, seed, layer);
        for (int n = 0; n < NETWORKS; n++) {
            if (nets[n].dead)
                continue;
            info = network_layer(run, &nets[n], n, layer, &curves[n]);
            if (info)
                return info;
        }
        if (run->first_seed && layer == c->layer) {
            /* Right away, so a screen shows the spectra before the deeper layers finish. */
            info = Spectra_of_shown_layer(c, run->out->shown_gap, w->shown_before_gap,
                                          w->shown_applied, w->la, w->gram, run->out);
            if (info)
                return info;
            run->out->spectra_ready = true;
        }
        if (run->first_seed)
            run->out->layers_done = layer;
        if (progress && progress->after_layer &&
            !progress->after_layer(progress->context, seed_index, layer, c->depth)) {
            *stopped = true;
            return 0;
        }
    }
    if (run->first_seed && gradients_apply(c))
        frozen_attention_gradients(w, c, seed, nets, curves);
    return 0;
}

/* Mean and sample std of one per-layer value over the seeds; NaN if any seed lacks it. */
static void fill_band(Band *band, Curves *const *per_seed, int seeds, int depth, int network)
{
    for (int l = 0; l <= depth; l++) {
        double mean = 0, ss = 0;
        for (int s = 0; s < seeds; s++)
            mean += per_seed[s][network].stable_rank[l];
        mean /= seeds;
        for (int s = 0; s < seeds; s++) {
            double dv = per_seed[s][network].stable_rank[l] - mean;
            ss += dv * dv;
        }
        band->mean[l] = mean;
        band->std[l] = seeds > 1 ? sqrt(ss / (seeds - 1)) : NAN;
    }
}

int Model_run(const Config *c, Workspace *w, Result *out, const Progress *progress, char *err,
              size_t size)
{
    result_release(out);
    out->config = *c;
    out->counterpart_gap = Gap_toggled(c->gap);
    out->sigma = Config_sigma(c);
    out->logit_std = NAN;
    out->shown_gap = c->gap;
    if (workspace_reserve(w, c->tokens, c->width) || result_alloc(out, c->tokens, c->depth)) {
        snprintf(err, size, "out of memory for T = %d, d = %d, depth %d", c->tokens, c->width,
                 c->depth);
        return -1;
    }
    int seeds = c->seeds < 1 ? 1 : c->seeds;
    /* Per seed: [network, counterpart] curves; seed 0 writes straight into the result. */
    Curves(*extra)[NETWORKS] = seeds > 1 ? calloc((size_t)seeds - 1, sizeof *extra) : NULL;
    Curves **per_seed = calloc((size_t)seeds, sizeof *per_seed);
    Curves first[NETWORKS] = {out->network, out->counterpart};
    int status = 0;
    if (!per_seed || (seeds > 1 && !extra)) {
        snprintf(err, size, "out of memory for %d seeds", seeds);
        status = -1;
        goto done;
    }
    per_seed[0] = first;
    for (int s = 1; s < seeds; s++) {
        per_seed[s] = extra[s - 1];
        for (int n = 0; n < NETWORKS; n++)
            if (curves_alloc(&extra[s - 1][n], (size_t)c->depth + 1)) {
                snprintf(err, size, "out of memory for %d seeds", seeds);
                status = -1;
                goto done;
            }
    }

    Run run = {.config = c, .w = w, .out = out, .first_seed = true};
    bool stopped = false;
    for (int s = 0; s < seeds && !stopped; s++) {
        run.first_seed = s == 0;
        int info = run_seed(&run, c->seed + (uint64_t)s, s, per_seed[s], progress, &stopped);
        if (info) {
            snprintf(err, size, "LAPACK failed (info %d) in seed %d", info, s + 1);
            status = -1;
            goto done;
        }
    }
    if (!stopped) {
        fill_band(&out->stable_rank_band, per_seed, seeds, c->depth, NETWORK_MAIN);
        fill_band(&out->counterpart_band, per_seed, seeds, c->depth, NETWORK_COUNTERPART);
    }
done:
    for (int s = 1; extra && s < seeds; s++)
        for (int n = 0; n < NETWORKS; n++)
            curves_free(&extra[s - 1][n]);
    free(extra);
    free(per_seed);
    return status;
}
