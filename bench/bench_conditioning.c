/* Time of each conditioning quantity of one attention sub-block (docs/model.md §8), from the
 * core's public API: one softmax layer at orthonormal input with Gaussian weights
 * (σ_qk = 1, s = 1/√d), full mask.  Stages (milliseconds, clock_gettime(CLOCK_MONOTONIC)):
 *   svd_attention    singular values of A (T×T): κ(A)
 *   svd_value        singular values of W_VO (d×d): κ(W_VO)
 *   jacobian_build   K column by column from T·d JVPs        (T·d ≤ 4096 only)
 *   svd_jacobian     singular values of K                     (T·d ≤ 4096 only)
 *   svd_jacobian_skip singular values of K + I                (T·d ≤ 4096 only)
 *   extremes_jacobian s_max and s_min of K by Lanczos on KᵀK and, through K's LU, on
 *                    (KᵀK)⁻¹, certified to 1e-13 (the exact path's κ without the SVD)
 *                                                            (T·d ≤ 4096 only)
 *   lanczos_norm     ‖K‖₂ by Lanczos on KᵀK, certified to 1e-6
 *   lanczos_s_min    s_min(K) the same way (null when not certified in 240 steps)
 *   lanczos_e_norm   ‖E‖₂ = ‖K − B‖₂ the same way
 *   kron_s_min       s_min(K) on the Kronecker path (conditioning_kron.h): B₀'s two SVDs and
 *                    Davidson's iteration, with its products and certified half-width
 * Usage: bench_conditioning -T N -d N [--seed N] [--beta B]; prints one JSON object.  --beta
 * adds β·√d·I to M (the diagonal logit of a unit token about β: peaked attention, where B is
 * near K and the Kronecker path applies).  Built and run by
 * hand (bench/README.md, "Conditioning"):
 *   cc -O2 -Iinclude $(pkg-config --cflags openblas lapacke) bench/bench_conditioning.c \
 *      build/libattnscope_core.a -lgsl $(pkg-config --libs openblas lapacke) -lm -o /tmp/bc
 */
#include "attnscope/attention.h"
#include "attnscope/conditioning.h"
#include "attnscope/conditioning_kron.h"
#include "attnscope/linalg.h"
#include "attnscope/random.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* K built column by column, and the singular values of K and of K + I, timed (n = T·d at most
   CONDITIONING_EXACT_MAX).  Returns 0, or 1 out of memory. */
static int time_exact_jacobian(SaWork *w, Linalg *la, size_t n, double *s)
{
    double t0;
    double *kk = malloc(sizeof(double) * n * n);
    if (!kk)
        return 1;
    t0 = now_ms();
    SaWork_jacobian(w, kk);
    printf(", \"jacobian_build\": %.3f", now_ms() - t0);
    double *copy = malloc(sizeof(double) * n * n);
    if (!copy)
        return 1;
    DenseExtremes *extremes = DenseExtremes_new();
    double s_max = NAN, s_min = NAN;
    t0 = now_ms();
    int status =
        extremes ? DenseExtremes_run(extremes, NULL, (int)n, kk, copy, &s_max, &s_min) : -1;
    printf(", \"extremes_jacobian\": %.3f, \"extremes_status\": %d, \"extremes_kappa\": %.6g",
           now_ms() - t0, status, Conditioning_kappa(s_max, s_min, (int)n));
    DenseExtremes_free(extremes);
    memcpy(copy, kk, sizeof(double) * n * n);
    t0 = now_ms();
    Linalg_singular_values(la, (int)n, (int)n, copy, s);
    printf(", \"svd_jacobian\": %.3f, \"kappa_jacobian\": %.6g", now_ms() - t0,
           Conditioning_kappa(s[0], s[n - 1], (int)n));
    for (size_t i = 0; i < n; i++)
        kk[i + i * n] += 1.0;
    t0 = now_ms();
    Linalg_singular_values(la, (int)n, (int)n, kk, s);
    printf(", \"svd_jacobian_skip\": %.3f", now_ms() - t0);
    free(copy);
    free(kk);
    return 0;
}

/* ‖K‖₂, s_min(K) and ‖E‖₂ by Lanczos, timed. */
static void time_lanczos(SaWork *w, size_t n)
{
    double t0;
    SingularValueEstimate e;
    t0 = now_ms();
    SaWork_extreme(w, true, 240, 1e-6, 1, NAN, &e);
    printf(", \"lanczos_norm\": %.3f, \"lanczos_norm_steps\": %d", now_ms() - t0, e.taken);
    double norm = e.value, norm_bound = e.value + e.error;
    t0 = now_ms();
    SaWork_extreme(w, false, 240, 1e-6, 2, norm_bound, &e);
    printf(", \"lanczos_s_min\": %.3f, \"lanczos_s_min_steps\": %d, \"lanczos_kappa\": ",
           now_ms() - t0, e.taken);
    double kappa = Conditioning_kappa(norm, e.value, (int)n);
    if (isnan(kappa))
        printf("null");
    else
        printf("%.6g", kappa);
    SaWork_perturbation_only(w, true);
    t0 = now_ms();
    SaWork_extreme(w, true, 240, 1e-6, 3, NAN, &e);
    printf(", \"lanczos_e_norm\": %.3f, \"lanczos_e_norm_steps\": %d", now_ms() - t0, e.taken);
    SaWork_perturbation_only(w, false);
}

/* s_min(K) on the Kronecker path, timed: B₀'s factors and Davidson's iteration. */
static void time_kron(SaWork *w, Linalg *la, int T, int d, const double *a, const double *wvo)
{
    KronFactors *f = KronFactors_new();
    KronEstimate e = {.value = NAN, .error = NAN};
    double t0 = now_ms();
    if (f && !KronFactors_factor(f, la, T, d, a, wvo) && KronFactors_invertible(f))
        SaWork_smallest_preconditioned(w, f, NULL, KRON_STEPS_MAX, KRON_TOLERANCE, 2, &e);
    printf(", \"kron_s_min\": %.3f, \"kron_products\": %d, \"kron_value\": ", now_ms() - t0,
           e.products);
    /* NaN (not certified) is JSON's null. */
    if (isnan(e.value))
        printf("null, \"kron_error\": null}\n");
    else
        printf("%.9g, \"kron_error\": %.3g}\n", e.value, e.error);
    KronFactors_free(f);
}

int main(int argc, char **argv)
{
    int T = 16, d = 64;
    unsigned long long seed = 1;
    double beta = 0.0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-T"))
            T = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-d"))
            d = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--beta"))
            beta = atof(argv[i + 1]);
    }
    if (T < 2 || d < T) {
        fprintf(stderr, "bench_conditioning: needs 2 <= T <= d\n");
        return 2;
    }
    size_t td = (size_t)T * d, dd = (size_t)d * d, tt = (size_t)T * T, n = td;
    double *g = malloc(sizeof(double) * td), *x = malloc(sizeof(double) * td);
    double *wq = malloc(sizeof(double) * dd), *wk = malloc(sizeof(double) * dd);
    double *m = malloc(sizeof(double) * dd), *wvo = malloc(sizeof(double) * dd);
    double *q = malloc(sizeof(double) * td), *k = malloc(sizeof(double) * td);
    double *logits = malloc(sizeof(double) * tt), *a = malloc(sizeof(double) * tt);
    double *scratch = malloc(sizeof(double) * (dd > tt ? dd : tt)), *s = malloc(sizeof(double) * n);
    RandomStream *rs = RandomStream_new();
    Linalg *la = Linalg_new();
    SaWork *w = SaWork_new();
    if (!g || !x || !wq || !wk || !m || !wvo || !q || !k || !logits || !a || !scratch || !s ||
        !rs || !la || !w)
        return 1;
    RandomStream_gaussian(rs, seed, 0, ROLE_INPUT, 1.0, g, td);
    Linalg_orthonormalise(la, d, T, g);
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            x[i + (size_t)j * T] = g[j + (size_t)i * d];
    RandomStream_gaussian(rs, seed, 1, ROLE_QUERY, 1.0, wq, dd);
    RandomStream_gaussian(rs, seed, 1, ROLE_KEY, 1.0, wk, dd);
    RandomStream_gaussian(rs, seed, 1, ROLE_VALUE, 1.0, wvo, dd);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, d, d, d, 1.0, wq, d, wk, d, 0.0, m, d);
    double scale = 1.0 / sqrt((double)d);
    for (int i = 0; i < d; i++)
        m[i + (size_t)i * d] += beta * sqrt((double)d);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, x, T, wq, d, 0.0, q, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0, x, T, wk, d, 0.0, k, T);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d, scale, k, T, q, T, 0.0, logits,
                T);
    /* M's added β√d·I: s·β√d·X Xᵀ more (symmetric, so either orientation). */
    if (beta != 0)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, d,
                    scale * beta * sqrt((double)d), x, T, x, T, 1.0, logits, T);
    Attention_build(ATTENTION_SOFTMAX, MASK_FULL, 1, T, logits, -INFINITY, a);

    printf("{\"T\": %d, \"d\": %d, \"n\": %zu", T, d, n);
    double t0 = now_ms();
    memcpy(scratch, a, sizeof(double) * tt);
    Linalg_singular_values(la, T, T, scratch, s);
    printf(", \"svd_attention\": %.3f", now_ms() - t0);
    t0 = now_ms();
    memcpy(scratch, wvo, sizeof(double) * dd);
    Linalg_singular_values(la, d, d, scratch, s);
    printf(", \"svd_value\": %.3f", now_ms() - t0);

    SaBlock b = {
        .T = T, .d = d, .x = x, .m = m, .scale = scale, .wvo = wvo, .softmax = a, .applied = a};
    if (SaWork_prepare(w, &b))
        return 1;
    if (n <= CONDITIONING_EXACT_MAX && time_exact_jacobian(w, la, n, s))
        return 1;
    time_lanczos(w, n);
    time_kron(w, la, T, d, a, wvo);
    return 0;
}
