#include "attnscope/cost.h"

#include "attnscope/attention.h"
#include "attnscope/conditioning.h"
#include "attnscope/init.h"
#include "attnscope/measure.h"
#include "attnscope/sweep.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

/* The constants below were measured on the reference machine (AMD EPYC, OpenBLAS 0.3.21
   with its Haswell kernels, one BLAS thread), where a 256×256 dgemm ran at REFERENCE_FLOPS:
   each is the time of an operation there times that rate (a "flop equivalent"), priced at
   that rate times the calibrated scalar speed.  LAPACK's reductions ran at a fraction of
   the product rate that falls with n (their level-2 half is bound by memory), hence a term
   in n³ and one in n²; they take the same time with the faster Cooperlake dgemm. */
#define REFERENCE_FLOPS 55e9
/* And where one exp() takes this long. */
#define REFERENCE_EXP_SECONDS 2.8e-9
/* Per element of a pass over a matrix (a copy, a norm, a scaling, a finiteness check). */
#define PASS 28.0
/* Per element of an attention matrix built with exp (softmax, markov, sigmoid), else. */
#define BUILD_EXP 220.0
#define BUILD_PLAIN 55.0
/* Per normal drawn (mt19937 + ziggurat). */
#define GAUSSIAN 500.0
/* dgeev without vectors, dgesdd without vectors, dsyevd without vectors, dgesdd with vectors
   and dgetrf + dgecon + dgetrs, as c3·n³ + c2·n² (c2 = c3's excess at small n). */
static const double GEEV[2] = {18.0, 9000.0};
static const double GESDD[2] = {9.0, 800.0};
static const double SYEVD[2] = {2.7, 800.0};
static const double SVD_VECTORS[2] = {15.0, 3500.0};
static const double SOLVE[2] = {2.0, 800.0};
/* Products with the Gram matrix the top-eigenpair route takes (1 to 7 in practice, at most
   MEASURE_LANCZOS_STEPS). */
#define LANCZOS_PRODUCTS 8
/* Householder QR of the d×T input and the explicit Q: about 4dT² product flops. */
#define QR_FACTOR 4.0

static double lapack(const double c[2], int n)
{
    double nn = (double)n * n;
    return c[0] * nn * n + c[1] * nn;
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

CostRates Cost_reference_rates(void)
{
    return (CostRates){.flops_per_second = REFERENCE_FLOPS, .scalar_speed = 1};
}

CostRates Cost_calibrate(void)
{
    enum { N = 256, REPEATS = 40, SCALAR_REPEATS = 20 };
    static double a[N * N], b[N * N], c[N * N];
    for (int i = 0; i < N * N; i++) {
        a[i] = (double)(i % 17) - 8.0;
        b[i] = (double)(i % 13) - 6.0;
    }
    /* One product warms the caches; the others are timed together, over ~25 ms: longer than
       a scheduler's time slice, so a core shared with other processes shows as a lower rate,
       as it will slow the run down. */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, b, N, 0.0, c, N);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int r = 0; r < REPEATS; r++)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, b, N, 0.0, c, N);
    double rate = 2.0 * N * N * N * REPEATS / seconds_since(&start);
    /* A clock that did not move, or a wildly off reading, falls back to the reference. */
    if (!isfinite(rate) || rate < REFERENCE_FLOPS / 100 || rate > REFERENCE_FLOPS * 100)
        rate = REFERENCE_FLOPS;
    /* The scalar speed: exp over the same buffer, ~4 ms, against the reference machine. */
    clock_gettime(CLOCK_MONOTONIC, &start);
    double sum = 0;
    for (int r = 0; r < SCALAR_REPEATS; r++)
        for (int i = 0; i < N * N; i++)
            sum += exp(a[i] * 0.125 * (r + 1));
    double speed = REFERENCE_EXP_SECONDS * SCALAR_REPEATS * N * N / seconds_since(&start);
    if (!isfinite(speed) || !isfinite(sum) || speed < 0.01 || speed > 100)
        speed = 1;
    return (CostRates){.flops_per_second = rate, .scalar_speed = speed};
}

/* ---- the stages, in seconds ----------------------------------------------------------- */

/* Products (dgemm, dsyrk, the blocked QR) run at the calibrated product rate; everything
   else (LAPACK's reductions, bound by memory in their level-2 half, element-wise passes,
   exp, normals) at the reference rate times the calibrated scalar speed: a faster dgemm
   kernel speeds the first up and leaves the others as they are. */
static double product(const CostRates *r, double flops)
{
    return flops / r->flops_per_second;
}

static double other(const CostRates *r, double flop_equivalents)
{
    return flop_equivalents / (REFERENCE_FLOPS * r->scalar_speed);
}

/* The d×d SVDs of a layer's factorised weights (init.h): per head, one for W^Q and W^K
   together (one each where the other is chosen otherwise); per layer, one for W^V and one
   more for W^O (each factor decomposes its target again). */
static double factor_svds(const Config *c)
{
    bool query = isnan(Init_matrix(c, MATRIX_QUERY).std),
         key = isnan(Init_matrix(c, MATRIX_KEY).std);
    double n = 0;
    if (Attention_has_query_key(c->attention))
        n += (query && key ? 1 : (int)query + (int)key) * (double)c->heads;
    if (isnan(Init_matrix(c, MATRIX_VALUE).std))
        n++;
    if (c->output != OUTPUT_IDENTITY && isnan(Init_matrix(c, MATRIX_OUTPUT).std))
        n++;
    return n;
}

static double weights(const Config *c, const CostRates *r)
{
    double T = c->tokens, d = c->width, svds = factor_svds(c);
    double n = d * d; /* W^V */
    if (Attention_has_query_key(c->attention))
        n += 2 * d * d;
    if (c->attention == ATTENTION_MARKOV)
        n += T * T;
    /* Each SVD's d² normals and the pass that writes its factors. */
    return other(r,
                 GAUSSIAN * n + svds * (lapack(SVD_VECTORS, c->width) + (GAUSSIAN + PASS) * d * d));
}

/* The logits and the attention matrix built from them. */
static double attention(const Config *c, const CostRates *r)
{
    double T = c->tokens, d = c->width;
    double f = Attention_has_query_key(c->attention) ? 4 * T * d * d + 2 * T * T * d : 0;
    bool exp_kind = c->attention == ATTENTION_SOFTMAX || c->attention == ATTENTION_MARKOV ||
                    c->attention == ATTENTION_SIGMOID;
    return product(r, f) + other(r, (exp_kind ? BUILD_EXP : BUILD_PLAIN) * T * T);
}

static double gap_removal(const Config *c, Gap gap, const CostRates *r)
{
    int T = c->tokens;
    double tt = (double)T * T;
    switch (gap) {
    case GAP_OFF:
        return 0;
    case GAP_DEFLATE:
        return other(r, lapack(SOLVE, T) + 4 * PASS * tt);
    case GAP_OUTLIERS:
        return other(r, lapack(SVD_VECTORS, T) + 4 * PASS * tt);
    default:
        return other(r, 2 * PASS * tt);
    }
}

/* The stable rank's route (docs/model.md §2): all eigenvalues of the Gram matrix for X0
   (all equal: the top eigenpair is not certified) and while a network keeps its rank (gap
   removed), the singular values of X once a collapsing network's sr − 1 is below the Gram
   route's floor (the theory's T^(1 − 2ℓ), docs/model.md §3), the top eigenpair otherwise. */
static double measure(const Config *c, Gap gap, int layer, const CostRates *r)
{
    int T = c->tokens;
    double t = T, d = c->width, tt = t * t;
    double f = 4 * PASS * t * d + (2 + LANCZOS_PRODUCTS) * PASS * tt;
    bool collapses = gap == GAP_OFF && c->skip == SKIP_NONE &&
                     (c->attention == ATTENTION_SOFTMAX || c->attention == ATTENTION_MARKOV ||
                      c->attention == ATTENTION_UNIFORM);
    if (layer == 0 || (gap != GAP_OFF && c->attention != ATTENTION_IDENTITY))
        f += lapack(SYEVD, T);
    else if (collapses && (1.0 - 2.0 * layer) * log10(t) < log10(MEASURE_GRAM_FLOOR))
        f += lapack(GESDD, T) * d / t;
    return product(r, tt * d) + other(r, f);
}

static bool gradients_apply(const Config *c)
{
    return c->skip == SKIP_NONE && c->layernorm == LAYERNORM_NONE;
}

/* One layer of one network on its lane: attention (unless layer 1 shares it), gap removal,
   the frozen product, values, skip, LayerNorm, and its stable rank when measured. */
static double lane_layer(const Config *c, Gap gap, int layer, bool first_seed, bool shared,
                         bool measured, const CostRates *r)
{
    double T = c->tokens, d = c->width, td = T * d;
    double seconds = (shared ? 0 : attention(c, r)) + gap_removal(c, gap, r);
    double flops = 2 * T * d * d + 2 * T * T * d, passes = 3 * PASS * td;
    if (first_seed && gradients_apply(c)) {
        flops += 2 * T * T * d;
        passes += PASS * td;
    }
    if (c->layernorm != LAYERNORM_NONE)
        passes += 6 * PASS * td;
    seconds += product(r, flops) + other(r, passes);
    return seconds + (measured ? measure(c, gap, layer, r) : 0);
}

static double input(const Config *c, const CostRates *r)
{
    double T = c->tokens, d = c->width;
    return product(r, QR_FACTOR * d * T * T) + other(r, GAUSSIAN * T * d + 3 * PASS * T * d);
}

/* Layers from..to recomputed unmeasured on one lane alone (lane_load), from X0 if asked. */
static double replay(const Config *c, Gap gap, int from, int count, bool first_seed,
                     bool from_input, const CostRates *r)
{
    double seconds = from_input ? input(c, r) : other(r, PASS * c->tokens * c->width);
    for (int l = from; l < from + count; l++)
        seconds += weights(c, r) + lane_layer(c, gap, l, first_seed, false, false, r);
    return seconds;
}

static double lanes(double a, double b, bool two_lanes)
{
    return two_lanes ? fmax(a, b) : a + b;
}

static double spectra(const Config *c, bool two_lanes, const CostRates *r)
{
    int T = c->tokens;
    double tt = (double)T * T;
    /* Causal masks make the matrix triangular: its eigenvalues are its diagonal. */
    bool triangular = c->mask == MASK_CAUSAL || c->mask == MASK_WINDOW_CAUSAL ||
                      c->attention == ATTENTION_IDENTITY;
    double eigen = other(r, triangular ? PASS * tt : lapack(GEEV, T));
    double singular = other(r, lapack(GESDD, T));
    return other(r, 4 * PASS * tt) + lanes(eigen, singular, two_lanes);
}

/* The seconds of seed s up to after_layer(s, through) (through = depth + 1: the whole seed,
   with its gradients). */
static double seed_seconds(const ModelPlan *plan, int s, int through, bool two_lanes,
                           const CostRates *r)
{
    const Config *c = &plan->config;
    const SeedPlan *p = &plan->seed[s];
    const Gap gaps[2] = {c->gap, Gap_toggled(c->gap)};
    bool first = s == 0;
    double T = c->tokens, d = c->width;
    double seconds = 0;
    if (p->input)
        seconds += input(c, r) + measure(c, GAP_OFF, 0, r) + other(r, 2 * PASS * T * d);
    if (p->capture_replay >= 0) {
        seconds += replay(c, gaps[0], c->layer - p->capture_replay, p->capture_replay, first,
                          p->input_for_capture, r);
        seconds +=
            weights(c, r) + attention(c, r) + gap_removal(c, gaps[0], r) + spectra(c, two_lanes, r);
    }
    int last = through < c->depth ? through : c->depth;
    for (int l = 1; l <= last; l++) {
        bool active[2] = {l >= p->first_layer[0], l >= p->first_layer[1]};
        if (!active[0] && !active[1])
            continue;
        double lane[2] = {0, 0};
        bool shared = l == 1 && active[0] && active[1];
        for (int n = 0; n < 2; n++) {
            if (l == p->first_layer[n])
                seconds += replay(c, gaps[n], l - p->replay[n], p->replay[n], first,
                                  p->replay_input[n], r);
            if (active[n])
                lane[n] = lane_layer(c, gaps[n], l, first, shared, true, r);
        }
        seconds += weights(c, r) + (shared ? attention(c, r) : 0);
        seconds += active[0] && active[1] ? lanes(lane[0], lane[1], two_lanes) : lane[0] + lane[1];
        if (p->spectra && p->capture_replay < 0 && l == c->layer)
            seconds += spectra(c, two_lanes, r);
    }
    if (through > c->depth && p->gradients) {
        for (int n = 0; n < 2; n++)
            seconds += replay(c, gaps[n], c->depth - p->gradient_replay[n] + 1,
                              p->gradient_replay[n], first, false, r);
        /* P2 = W_{ℓ+1}⋯W_L from the top, then each lane's P1 one product per layer. */
        seconds += c->depth * (product(r, 2 * d * d * d) + other(r, GAUSSIAN * d * d));
        double p1 = product(r, 2 * T * d * d);
        seconds += c->depth * lanes(p1, p1, two_lanes);
    }
    return seconds;
}

int CostSchedule_build(CostSchedule *s, const ModelPlan *plan, CostRates rates, bool two_lanes)
{
    s->plan = plan;
    s->rates = rates;
    s->two_lanes = two_lanes;
    s->seed_start = malloc(sizeof(double) * ((size_t)plan->seeds + 1));
    if (!s->seed_start)
        return -1;
    s->seed_start[0] = 0;
    for (int i = 0; i < plan->seeds; i++)
        s->seed_start[i + 1] =
            s->seed_start[i] + seed_seconds(plan, i, plan->config.depth + 1, two_lanes, &rates);
    return 0;
}

void CostSchedule_release(CostSchedule *s)
{
    free(s->seed_start);
    s->seed_start = NULL;
}

double CostSchedule_total(const CostSchedule *s)
{
    return s->seed_start[s->plan->seeds];
}

double CostSchedule_done_at(const CostSchedule *s, int seed_index, int layer)
{
    if (seed_index < 0)
        return 0;
    if (seed_index >= s->plan->seeds)
        return CostSchedule_total(s);
    return s->seed_start[seed_index] +
           seed_seconds(s->plan, seed_index, layer, s->two_lanes, &s->rates);
}

/* after_layer comes for the layers where some network computes. */
static bool layer_called(const SeedPlan *p, int layer)
{
    return layer >= p->first_layer[0] || layer >= p->first_layer[1];
}

double CostSchedule_next_after(const CostSchedule *s, int seed_index, int layer)
{
    const ModelPlan *plan = s->plan;
    for (int i = seed_index < 0 ? 0 : seed_index; i < plan->seeds; i++)
        for (int l = i == seed_index ? layer + 1 : 1; l <= plan->config.depth; l++)
            if (layer_called(&plan->seed[i], l))
                return CostSchedule_done_at(s, i, l);
    return CostSchedule_total(s);
}

double CostSchedule_first_stage(const CostSchedule *s)
{
    return CostSchedule_next_after(s, -1, 0);
}

static double fresh_plan_seconds(const Config *c, CostRates rates, bool two_lanes)
{
    ModelPlan plan;
    CostSchedule schedule;
    if (Model_plan(c, NULL, &plan))
        return NAN;
    double seconds = NAN;
    if (!CostSchedule_build(&schedule, &plan, rates, two_lanes)) {
        seconds = CostSchedule_total(&schedule);
        CostSchedule_release(&schedule);
    }
    ModelPlan_release(&plan);
    return seconds;
}

double Cost_fresh_run(const Config *c, CostRates rates, bool two_lanes)
{
    return fresh_plan_seconds(c, rates, two_lanes);
}

double Cost_width_sweep(const Config *c, CostRates rates, bool two_lanes)
{
    /* The points of Sweep_width: one-seed runs to the shown layer at each T, fresh. */
    int counts[SWEEP_POINTS_MAX];
    int n = Sweep_token_counts(c->tokens, counts);
    double gamma = (double)c->tokens / c->width, seconds = 0;
    for (int k = 0; k < n; k++) {
        Config point = *c;
        point.tokens = counts[k];
        point.width = (int)fmax(counts[k], lround(counts[k] / gamma));
        point.depth = c->layer;
        point.seeds = 1;
        seconds += c->seeds * fresh_plan_seconds(&point, rates, two_lanes);
    }
    return seconds;
}

double Cost_compare(const Config *c, CostRates rates, bool two_lanes)
{
    /* After the run both networks are kept: the toggled one's shown attention again, and its
       spectra. */
    Gap toggled = Gap_toggled(c->gap);
    return weights(c, &rates) + lane_layer(c, toggled, c->layer, false, false, false, &rates) +
           spectra(c, two_lanes, &rates);
}

/* The Lanczos estimates of one layer of the conditioning (‖K‖₂, s_min(K), ‖E‖₂, docs/model.md
   §8.2), fitted to runs at T·d = 8192, 32768 and 65536 on the reference machine: the
   products with K and Kᵀ (thin, bound by memory: flop equivalents per flop of one JVP) and
   the reorthogonalisation's passes over the basis (per element of vec X: about 2·S²·PASS
   for S ≈ 150 steps in all). */
#define CONDITIONING_LANCZOS_PRODUCTS 726.0
#define CONDITIONING_LANCZOS_BASIS 1.32e6

double Cost_conditioning(const Config *c, CostRates rates, bool exact)
{
    double T = c->tokens, d = c->width, n = T * d, H = c->heads;
    /* One JVP: per head Ẋ·W_VO,h, A_h·(Ẋ W_VO,h), the two halves of Ċ and Ȧ·(X W_VO,h). */
    double jvp = H * (2 * T * d * d + 8 * T * T * d);
    /* Per layer: the weights (the factorised schemes' SVDs among them), the SVDs of A, W_VO
       and the product A_ℓ⋯A_1. */
    double layer =
        weights(c, &rates) + other(&rates, 2 * lapack(GESDD, c->tokens) + lapack(GESDD, c->width));
    double lanczos =
        other(&rates, CONDITIONING_LANCZOS_PRODUCTS * jvp + CONDITIONING_LANCZOS_BASIS * n);
    bool built = exact && n <= CONDITIONING_EXACT_MAX;
    if (built)
        /* K column by column, the singular values of K and of K + I, and ‖E‖₂ by Lanczos
           (one of the three estimates). */
        layer += product(&rates, n * jvp) + other(&rates, 2 * lapack(GESDD, (int)n)) + lanczos / 3;
    else
        layer += lanczos;
    /* Several heads: κ(B) from B's own products, built and decomposed or by Lanczos. */
    if (c->heads > 1)
        layer += built ? product(&rates, n * jvp / 4) + other(&rates, lapack(GESDD, (int)n))
                       : 2 * lanczos / 3;
    return 2 * c->depth * layer;
}

/* Linear at the estimated speed up to SLOWING of the stage, then approaching its end like
   1/x with a matching slope: continuous, always rising (visibly, even when the stage takes
   ten times its estimate), always below 1. */
#define SLOWING 0.8

static double inside_stage(double x)
{
    if (x <= SLOWING)
        return x;
    double tail = 1.0 - SLOWING;
    return SLOWING + tail * (1.0 - 1.0 / (1.0 + (x - SLOWING) / tail));
}

/* The pace is trusted within this factor of the estimate: early checkpoints are few. */
#define PACE_LIMIT 5.0

CostProgress Cost_progress(double done, double next, double total, double clock_at_done,
                           double since)
{
    if (!(total > 0) || !isfinite(total))
        return (CostProgress){.fraction = 0, .seconds_left = NAN};
    double pace = done > 0 && clock_at_done > 0 ? clock_at_done / done : 1;
    pace = fmin(fmax(pace, 1 / PACE_LIMIT), PACE_LIMIT);
    double stage = next - done, current = done;
    if (stage > 0 && since > 0)
        current += stage * inside_stage(since / (pace * stage));
    double fraction = current / total;
    return (CostProgress){.fraction = fraction < 0   ? 0
                                      : fraction < 1 ? fraction
                                                     : 1,
                          .seconds_left = pace * (total - current)};
}
