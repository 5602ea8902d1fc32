#include "attnscope/cost.h"

#include "attnscope/conditioning.h"
#include "attnscope/conditioning_kron.h"
#include "attnscope/init.h"
#include "attnscope/layer.h"
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
/* Per element of an attention matrix (or an activation) built with exp or erfc (softmax,
   markov, sigmoid; gelu, tanh), else. */
#define BUILD_EXP 220.0
#define BUILD_PLAIN 55.0
/* Per normal drawn (mt19937 + ziggurat). */
#define GAUSSIAN 500.0
/* A checkpoint's tensor converted to double (--weights): per byte read from its mapping (the
   page faults of a file in the page cache, the pages dropped after each tensor), and per
   element converted and stored: medians of 7 runs of bench/load_rate.c (2026-11-26, load
   average 15-17, scalar speed 0.08-0.34; the per-byte price is the noisier). */
#define LOAD_BYTE 21.0
#define LOAD_ELEMENT 25.0
/* dgeev without vectors, dgesdd without vectors, dsyevd without vectors, dgesdd with vectors
   and dgetrf + dgecon + dgetrs, as c3·n³ + c2·n² (c2 = c3's excess at small n).  dgeev's with
   hessenberg_tuning.c's shift counts, fitted to bench/hessenberg_shifts.c's softmax attention
   at n = 256 to 2048 under the Haswell kernels, its milliseconds put on the model's scale at
   n = 1024, the one size where LAPACK's own parameters took what the previous constants said
   (bench/README.md). */
static const double GEEV[2] = {10.0, 5000.0};
static const double GESDD[2] = {9.0, 800.0};
static const double SYEVD[2] = {2.7, 800.0};
static const double SVD_VECTORS[2] = {15.0, 3500.0};
static const double SOLVE[2] = {2.0, 800.0};
/* Householder QR of an m×n matrix and its explicit Q: about 4·m·n·min(m, n) product flops. */
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

/* ---- the declared work, in seconds ----------------------------------------------------- */

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

static double work_seconds(const Work *w, const CostRates *r)
{
    double m = w->m, n = w->n, min = m < n ? m : n, seconds = 0;
    switch (w->kind) {
    case WORK_PRODUCT:
        seconds = product(r, 2 * m * n * w->k);
        break;
    case WORK_GRAM:
        seconds = product(r, m * n * w->k);
        break;
    case WORK_ORTHONORMAL:
        seconds = product(r, QR_FACTOR * m * n * min);
        break;
    case WORK_EIGENVALUES:
        seconds = other(r, lapack(GEEV, (int)n));
        break;
    case WORK_SINGULAR_VALUES: /* c3·n³ + c2·n² at m = n, in proportion to m·n·min else */
        seconds = other(r, (GESDD[0] * min + GESDD[1]) * m * n);
        break;
    case WORK_SVD:
        seconds = other(r, lapack(SVD_VECTORS, (int)n));
        break;
    case WORK_SYMMETRIC:
        seconds = other(r, lapack(SYEVD, (int)n));
        break;
    case WORK_SOLVE:
        seconds = other(r, lapack(SOLVE, (int)n));
        break;
    case WORK_CHOLESKY: /* blocked: its updates are dsyrk and dgemm */
        seconds = product(r, n * n * n / 3);
        break;
    case WORK_NORMALS:
        seconds = other(r, GAUSSIAN * m);
        break;
    case WORK_LOAD:
        seconds = other(r, LOAD_BYTE * m + LOAD_ELEMENT * n);
        break;
    case WORK_PASSES:
        seconds = other(r, PASS * m);
        break;
    case WORK_BUILD_EXP:
        seconds = other(r, BUILD_EXP * m);
        break;
    case WORK_BUILD_PLAIN:
        seconds = other(r, BUILD_PLAIN * m);
        break;
    case WORK_KINDS:
        break;
    }
    return seconds * w->times;
}

static double list_seconds(const WorkList *l, const CostRates *r)
{
    double seconds = 0;
    for (int i = 0; i < l->count; i++)
        seconds += work_seconds(&l->item[i], r);
    return seconds;
}

/* A step's serial part, then its two lanes: at once with two threads, in turn without; a
   beside step's lane[1] alone when its lane[0] goes to the second thread. */
static double step_seconds(const WorkStep *step, const CostRates *r, CostLanes lanes)
{
    double a = list_seconds(&step->lane[0], r), b = list_seconds(&step->lane[1], r);
    double lanes_seconds = lanes == COST_ONE_LANE                         ? a + b
                           : lanes == COST_SPECTRA_BESIDE && step->beside ? b
                                                                          : fmax(a, b);
    return list_seconds(&step->serial, r) + lanes_seconds;
}

double Cost_step(const WorkStep *step, CostRates rates, CostLanes lanes)
{
    return step_seconds(step, &rates, lanes);
}

/* The seconds of a walk on the caller's thread, and of the work left beside it on the second
   thread (COST_SPECTRA_BESIDE): while that runs when a step's serial part ends (run.c looks at
   it there, layer by layer), the step's lanes are claimed (Progress.run_claimed): the caller
   takes lane 0, and lane 1 goes to the second thread if that is free before the caller is,
   else to the caller after lane 0; a step with tails claims them the same way after. */
typedef struct {
    const CostRates *rates;
    CostLanes lanes;
    double seconds, beside;
} Pricing;

static void price_claimed_pair(Pricing *p, double a, double b)
{
    if (p->beside < a) {
        p->seconds += fmax(a, p->beside + b);
        p->beside = 0;
    } else {
        p->seconds += a + b;
        p->beside = fmax(p->beside - (a + b), 0);
    }
}

/* The lanes claimed as two pairs, as run.c's run_layer claims them: both lanes' rest, then
   their tails. */
static void price_claimed(Pricing *p, const WorkStep *step)
{
    double tail[2], rest[2];
    for (int n = 0; n < 2; n++) {
        tail[n] = list_seconds(&step->tail[n], p->rates);
        rest[n] = list_seconds(&step->lane[n], p->rates) - tail[n];
    }
    price_claimed_pair(p, rest[0], rest[1]);
    price_claimed_pair(p, tail[0], tail[1]);
}

static bool price_step(void *context, const WorkStep *step)
{
    Pricing *p = context;
    if (step->join) {
        p->seconds += p->beside;
        p->beside = 0;
    }
    double serial = list_seconds(&step->serial, p->rates);
    p->seconds += serial;
    p->beside = fmax(p->beside - serial, 0);
    if (p->beside > 0) {
        price_claimed(p, step);
        return true;
    }
    p->seconds += step_seconds(step, p->rates, p->lanes) - serial;
    if (p->lanes == COST_SPECTRA_BESIDE && step->beside)
        p->beside = fmax(
            list_seconds(&step->lane[0], p->rates) - list_seconds(&step->lane[1], p->rates), 0);
    return true;
}

/* The seconds of seed s up to after_layer(s, through) (through = depth + 1: the whole seed,
   with its gradients). */
static double seed_seconds(const ModelPlan *plan, int s, int through, CostLanes lanes,
                           const CostRates *r)
{
    Pricing pricing = {.rates = r, .lanes = lanes};
    Work_seed_steps(plan, s, through, price_step, &pricing);
    return pricing.seconds;
}

int CostSchedule_build(CostSchedule *s, const ModelPlan *plan, CostRates rates, CostLanes lanes)
{
    s->plan = plan;
    s->rates = rates;
    s->lanes = lanes;
    s->seed_start = malloc(sizeof(double) * ((size_t)plan->seeds + 1));
    if (!s->seed_start)
        return -1;
    s->seed_start[0] = 0;
    for (int i = 0; i < plan->seeds; i++)
        s->seed_start[i + 1] =
            s->seed_start[i] + seed_seconds(plan, i, plan->config.depth + 1, lanes, &rates);
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
           seed_seconds(s->plan, seed_index, layer, s->lanes, &s->rates);
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

static double fresh_plan_seconds(const Config *c, CostRates rates, CostLanes lanes)
{
    ModelPlan plan;
    CostSchedule schedule;
    if (Model_plan(c, NULL, &plan))
        return NAN;
    double seconds = NAN;
    if (!CostSchedule_build(&schedule, &plan, rates, lanes)) {
        seconds = CostSchedule_total(&schedule);
        CostSchedule_release(&schedule);
    }
    ModelPlan_release(&plan);
    return seconds;
}

double Cost_fresh_run(const Config *c, CostRates rates, CostLanes lanes)
{
    return fresh_plan_seconds(c, rates, lanes);
}

double Cost_width_sweep(const Config *c, CostRates rates, CostLanes lanes)
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
        seconds += c->seeds * fresh_plan_seconds(&point, rates, lanes);
    }
    return seconds;
}

Config Cost_compare_config(const Config *c)
{
    Config toggled = *c;
    toggled.gap = Gap_toggled(c->gap);
    toggled.depth = c->layer;
    Config_reset(&toggled, REUSE_ENSEMBLE);
    return toggled;
}

double Cost_compare(const Config *c, CostRates rates, CostLanes lanes)
{
    /* After the run both networks are kept: the compare view's captures its shown attention
       again and computes its spectra (and its gradients, which are depth L's in the run),
       the plan Model_plan makes for it on that workspace. */
    Config toggled = Cost_compare_config(c);
    SeedPlan seed = {.capture_replay = 0,
                     .spectra = true,
                     .first_layer = {c->layer + 1, c->layer + 1},
                     .gradients = Model_gradients_unavailable(c) == NULL && c->layer != c->depth};
    ModelPlan plan = {.config = toggled, .seeds = 1, .seed = &seed};
    return seed_seconds(&plan, 0, toggled.depth + 1, lanes, &rates);
}

/* The Lanczos estimates of one layer of the conditioning (‖K‖₂, s_min(K), ‖E‖₂, docs/model.md
   §8.2), fitted to runs at T·d = 8192, 32768 and 65536 on the reference machine: the
   products with K and Kᵀ (thin, bound by memory: flop equivalents per flop of one JVP) and
   the reorthogonalisation's passes over the basis (per element of vec X: about 2·S²·PASS
   for S ≈ 150 steps in all). */
#define CONDITIONING_LANCZOS_PRODUCTS 726.0
#define CONDITIONING_LANCZOS_BASIS 1.32e6
/* Flop equivalents per element of an n×n matrix for the Lanczos steps of its extremes: about
   64 steps of a product with it and one with its transpose (or two triangular solves each),
   ~11 equivalents per element each (bound by memory), fitted at n = 1024 and 4096. */
#define CONDITIONING_DENSE_LANCZOS 1500.0

/* The Kronecker path's own work in one layer of the matrix-free path (conditioning_kron.h):
   the SVDs of B₀'s two factors and Davidson's KRON_STEPS_MAX steps at most, each a JVP and a
   VJP (2.67 flop equivalents per JVP flop and step, as the ~272 Lanczos steps the fit above
   covers), the preconditioner (four products of T×d with T×T and d×d matrices) and the
   subspace's work (the SVD of the n×40 K·S, two orthogonalisations: about 4000 per element
   of vec X).  Priced on top of Lanczos's three estimates: where it does not certify (B₀
   singular or far from K, or the steps run out) Lanczos takes s_min, so the price is the
   worst case and a certified layer costs less. */
#define CONDITIONING_LANCZOS_STEP 2.67
/* What the bounded products' centrings add per layer and network, in products' time: μ = 0's
   cache (1.8: a third of the three's 20 ms at T = d = 256) and the searches through the mean
   and the median where μ = 0 does not bound a product to 10⁻⁶ of its norm, priced at what
   they measured at the default size (+0.35 s of CPU over its 16 layers and networks, 5.9
   products each: bench/README.md), not at all three tried at every block. */
#define CONDITIONING_CENTRING_PRODUCTS (1.8 + 5.9)
/* What the bounded products' compensated route adds per layer and network, in products' time:
   it runs only where the centred route's bound exceeds ‖K‖₂‖v‖/2, at the default size at one
   layer of each network (layer 7), so its measured time there (its block's Dot2 products and
   three compensated products, bench/README.md, "Layer 7's κ(K) lower bound") is priced as a
   share over the 8 layers, as the centrings are: no layer's share is known before it runs. */
#define CONDITIONING_COMPENSATED_PRODUCTS 5.8
#define CONDITIONING_BOUNDED_PRODUCTS                                                              \
    (CONDITIONING_CENTRING_PRODUCTS + CONDITIONING_COMPENSATED_PRODUCTS)
static double conditioning_kron_layer(const Config *c, CostRates rates, double jvp)
{
    double T = c->tokens, d = c->width, n = T * d, steps = KRON_STEPS_MAX;
    return other(&rates, CONDITIONING_LANCZOS_STEP * steps * jvp + 4000.0 * steps * n +
                             lapack(GESDD, c->tokens) + lapack(GESDD, c->width)) +
           product(&rates, steps * 4 * 2 * T * d * (T + d));
}

/* The extremes of the matrix-free path that every layer takes: ‖K‖₂ (Lanczos certifies it in
   16 steps of a JVP and a VJP each at the default size), and ‖E‖₂ where s_min(B) is resolved
   (the premise ratio; 16 steps, about half of the layers there): 24 steps, with two
   reorthogonalising passes over the basis (4·S² flop equivalents per element of vec X), at
   CONDITIONING_EXTREME_STEP flop equivalents per JVP flop and step, fitted to the default
   size's run (T = d = 256, L = 8: 28 s measured against the price at the same load). */
#define CONDITIONING_EXTREME_STEPS 24.0
/* ‖K‖₂ alone (K singular by structure: no s_min, and B singular, so no ‖E‖₂): its 16 steps. */
#define CONDITIONING_NORM_STEPS 16.0
#define CONDITIONING_EXTREME_STEP 1.3
static double conditioning_extremes(CostRates rates, double jvp, double n, double steps)
{
    return other(&rates, CONDITIONING_EXTREME_STEP * steps * jvp + 4.0 * 16.0 * 16.0 * n);
}

/* Whether m is drawn orthogonal (Haar, any gain) or the identity: its singular values all
   equal. */
static bool drawn_orthogonal(const Config *c, Matrix m)
{
    MatrixInit how = Init_matrix(c, m);
    return how.orthogonal || (how.std == 0 && how.diagonal != 0);
}

bool Cost_conditioning_seeks_s_min(const Config *c)
{
    return !Conditioning_singular_by_structure(c) && drawn_orthogonal(c, MATRIX_VALUE) &&
           (c->output == OUTPUT_IDENTITY || drawn_orthogonal(c, MATRIX_OUTPUT));
}

/* The price of a run; seek: s_min sought at every layer of the matrix-free path, whatever
   the initialisation (Cost_conditioning_seeks_s_min). */
static double conditioning_price(const Config *c, CostRates rates, bool exact, int spectra,
                                 bool seek)
{
    double T = c->tokens, d = c->width, n = T * d;
    /* One JVP, on average over the layers (RoPE skips --nope-every layers): per head Ẋ·W_VO,h,
       A_h·(Ẋ W_VO,h), the two halves of Ċ and Ȧ·(X W_VO,h), and what QK-norm, RoPE, the
       soft-cap and a branch LN add (SaWork_product_flops). */
    double jvp = 0;
    for (int l = 1; l <= c->depth; l++)
        jvp += SaWork_product_flops(c, l) / c->depth;
    /* Per layer: the weights (the factorised schemes' SVDs among them), the SVDs of A, W_VO
       and the product A_ℓ⋯A_1. */
    WorkList weights = {0};
    Layer_declare_draw(c, LAYER_DRAW_ALL, &weights);
    double layer = list_seconds(&weights, &rates) +
                   other(&rates, 2 * lapack(GESDD, c->tokens) + lapack(GESDD, c->width));
    double lanczos =
        other(&rates, CONDITIONING_LANCZOS_PRODUCTS * jvp + CONDITIONING_LANCZOS_BASIS * n);
    /* s_max and s_min of a built n×n matrix without its SVD (DenseExtremes_run): its LU, and
       Lanczos steps of two matrix-vector products each (10–80 steps for the two). */
    double extremes =
        product(&rates, 2.0 / 3.0 * n * n * n) + other(&rates, CONDITIONING_DENSE_LANCZOS * n * n);
    bool built = exact && n <= CONDITIONING_EXACT_MAX;
    /* A layer of both networks: each builds K column by column, takes the extremes of K and,
       where the skip's Jacobian is the block's, of a·I + b′·K, and ‖E‖₂ by Lanczos (one of the
       three estimates); the network's K is also decomposed where its singular values are kept
       (below).  Off the exact path, where K is singular by structure only ‖K‖₂ is sought. */
    double pair = 2 * layer;
    if (built)
        pair += 2 * product(&rates, n * jvp) + 2 * (1 + Conditioning_skip_jacobian(c)) * extremes +
                2 * lanczos / 3;
    else if (Conditioning_singular_by_structure(c))
        pair += 2 * conditioning_extremes(rates, jvp, n, CONDITIONING_NORM_STEPS);
    else if (seek || Cost_conditioning_seeks_s_min(c))
        pair += 2 * (lanczos + conditioning_kron_layer(c, rates, jvp));
    else /* ‖K‖₂ and ‖E‖₂, B₀'s two SVDs, and the bound's VJP and its check's JVP, each with
            the running bound on its rounding (SaWork_product_bounded: 2.5 and 2.65 products'
            time measured at T = d = 256, bench/README.md), plus its centrings' share
            and compensated route's (CONDITIONING_BOUNDED_PRODUCTS) */
        pair += 2 * (conditioning_extremes(rates, jvp, n, CONDITIONING_EXTREME_STEPS) +
                     other(&rates, lapack(GESDD, c->tokens) + lapack(GESDD, c->width) +
                                       2 * 2.6 * CONDITIONING_LANCZOS_STEP * jvp +
                                       CONDITIONING_BOUNDED_PRODUCTS * jvp));
    /* Several heads or a branch LN: κ(B) from B's own products, built and reduced to its
       extremes, or by Lanczos unless B is singular by structure. */
    if (built && (c->heads > 1 || Layer_branch_norm(c)))
        pair += 2 * (product(&rates, n * jvp / 4) + extremes);
    else if ((c->heads > 1 || Layer_branch_norm(c)) &&
             !Conditioning_dominant_singular_by_structure(c))
        pair += 4 * lanczos / 3;
    if (spectra > c->depth)
        spectra = c->depth;
    return c->depth * pair + (built ? spectra * other(&rates, lapack(GESDD, (int)n)) : 0);
}

double Cost_conditioning(const Config *c, CostRates rates, bool exact)
{
    return conditioning_price(c, rates, exact, c->depth, false);
}

double Cost_conditioning_spectra(const Config *c, CostRates rates, bool exact, int spectra)
{
    return conditioning_price(c, rates, exact, spectra, false);
}

double Cost_conditioning_seeking(const Config *c, CostRates rates)
{
    return conditioning_price(c, rates, false, c->depth, true);
}

double Cost_conditioning_unpriced(const Config *c, CostRates rates)
{
    /* The matrix-free path keeps no spectra, so its price does not depend on how many. */
    return Cost_conditioning_seeks_s_min(c)
               ? 0.0
               : Cost_conditioning_seeking(c, rates) - Cost_conditioning(c, rates, false);
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
