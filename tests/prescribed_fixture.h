/* Token matrices with prescribed singular values, built in long double and rounded once to
 * double, so that their exact stable rank is known (test_measure_deflated.c,
 * test_measure_flat.c).  Needs testing.h and model_fixture.h first. */
#ifndef ATTNSCOPE_PRESCRIBED_FIXTURE_H
#define ATTNSCOPE_PRESCRIBED_FIXTURE_H

#include "attnscope/random.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* q (m×n, long double, column-major) with orthonormal columns: the first `first` (m) when
   given, the others from Gaussian draws, by modified Gram–Schmidt, twice.  Returns the
   orthonormality defect ‖QᵀQ − I‖_F, as computed in long double. */
static inline long double orthonormal_columns(int m, int n, const long double *first, uint64_t seed,
                                              int role, long double *q)
{
    RandomStream *random = RandomStream_new();
    double *draw = malloc(sizeof(double) * m * n);
    RandomStream_gaussian(random, seed, 1, role, 1.0, draw, (size_t)m * n);
    for (int i = 0; i < m * n; i++)
        q[i] = draw[i];
    if (first)
        memcpy(q, first, sizeof(long double) * m);
    for (int k = 0; k < n; k++) {
        long double *col = q + (size_t)k * m;
        for (int pass = 0; pass < 2; pass++) {
            for (int j = 0; j < k; j++) {
                long double dot = 0;
                for (int i = 0; i < m; i++)
                    dot += q[i + (size_t)j * m] * col[i];
                for (int i = 0; i < m; i++)
                    col[i] -= dot * q[i + (size_t)j * m];
            }
            long double norm = 0;
            for (int i = 0; i < m; i++)
                norm += col[i] * col[i];
            norm = sqrtl(norm);
            for (int i = 0; i < m; i++)
                col[i] /= norm;
        }
    }
    long double defect = 0;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < n; j++) {
            long double dot = 0;
            for (int i = 0; i < m; i++)
                dot += q[i + (size_t)k * m] * q[i + (size_t)j * m];
            dot -= j == k;
            defect += dot * dot;
        }
    RandomStream_free(random);
    free(draw);
    return sqrtl(defect);
}

/* X = Σ_k s_k u_k v_kᵀ (T×d), k < n = min(T, d), with u_1 = 1/√T: the mean token carries s_1
   and E = X − 1·x̄ᵀ the rest.  Built in long double and rounded once to double. */
typedef struct {
    double *x;
    double exact;        /* Σ_{k≥2} (s_k/s_1)⁴, in long double */
    double exact_off;    /* Σ_{k≥2} s_k² / Σ s_k² */
    double frobenius;    /* ‖X‖_F */
    double construction; /* how far the long-double X's singular values may be from s */
} Prescribed;

static inline Prescribed prescribed(int T, int d, const double *s, uint64_t seed)
{
    int n = T < d ? T : d;
    long double *u = malloc(sizeof(long double) * T * n), *v = malloc(sizeof(long double) * d * n);
    long double *mean = malloc(sizeof(long double) * T);
    for (int i = 0; i < T; i++)
        mean[i] = 1.0L / sqrtl(T);
    long double defect = orthonormal_columns(T, n, mean, seed, ROLE_QUERY, u) +
                         orthonormal_columns(d, n, NULL, seed, ROLE_KEY, v);
    Prescribed p = {.x = malloc(sizeof(double) * T * d)};
    long double exact = 0, frobenius = 0, off = 0;
    for (int k = 1; k < n; k++) {
        long double ratio = (long double)s[k] / s[0];
        exact += ratio * ratio * ratio * ratio;
        off += (long double)s[k] * s[k];
    }
    p.exact_off = (double)(off / (off + (long double)s[0] * s[0]));
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++) {
            long double entry = 0;
            for (int k = 0; k < n; k++)
                entry += u[i + (size_t)k * T] * s[k] * v[j + (size_t)k * d];
            p.x[i + (size_t)j * T] = (double)entry;
            frobenius += entry * entry;
        }
    p.exact = (double)exact;
    p.frobenius = (double)sqrtl(frobenius);
    /* U = Q(I + F) with ‖F‖ ≲ ‖UᵀU − I‖ (likewise V): the singular values move by ≲ s_1 times
       both defects, plus the long-double sum's own rounding. */
    p.construction = (double)(s[0] * (2 * defect + n * LDBL_EPSILON));
    free(u);
    free(v);
    free(mean);
    return p;
}

#endif
