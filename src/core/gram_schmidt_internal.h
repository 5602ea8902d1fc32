/* What the two Krylov methods of the conditioning share, the Lanczos basis of its extremes
   (conditioning_extreme.c) and the Davidson subspace of the Kronecker path
   (conditioning_kron.c): a vector orthogonalised against an orthonormal basis held in columns,
   and a fixed pseudo-random vector to start from. */
#ifndef ATTNSCOPE_GRAM_SCHMIDT_INTERNAL_H
#define ATTNSCOPE_GRAM_SCHMIDT_INTERNAL_H

#include <cblas.h>
#include <stddef.h>
#include <stdint.h>

/* Columns of the basis per block of GramSchmidt_twice: a block's first dgemv reads it from
   memory and the second finds it in cache.  2 MiB measured best on this machine
   (bench/README.md, "Conditioning": at T·d = 16384 and 65536, 1.3–1.6× the speed of a dot and
   an axpy per column, 1.1–1.7× that of classical Gram–Schmidt over the whole basis at once). */
enum { GRAM_SCHMIDT_BLOCK_BYTES = 2 << 20 };

/* v ← v minus its projection on the k orthonormal columns of basis (n×k, k ≥ 0), by block
   Gram–Schmidt twice (Kahan's "twice is enough" keeps the basis orthogonal to rounding):
   classical within blocks of columns (two dgemv), modified between them, so that each pass
   reads the basis from memory once, where classical Gram–Schmidt over all k columns reads it
   twice: past a few dozen Lanczos steps at T·d = 65536 the basis outgrows the caches and the
   passes run at the memory's rate.  coefficients: k scratch.  Returns the first pass's
   coefficient on the last column (q_kᵀ·v, Lanczos's α when v = S·q_k; 0 for k = 0). */
static inline double GramSchmidt_twice(size_t n, int k, const double *basis, double *v,
                                       double *coefficients)
{
    size_t per_block = GRAM_SCHMIDT_BLOCK_BYTES / (n * sizeof(double));
    int block = per_block < 1 ? 1 : per_block > (size_t)k ? k : (int)per_block;
    double last = 0;
    for (int pass = 0; pass < 2 && k > 0; pass++) {
        for (int i = 0; i < k; i += block) {
            int columns = k - i < block ? k - i : block;
            const double *q = basis + (size_t)i * n;
            cblas_dgemv(CblasColMajor, CblasTrans, (int)n, columns, 1.0, q, (int)n, v, 1, 0.0,
                        coefficients + i, 1);
            cblas_dgemv(CblasColMajor, CblasNoTrans, (int)n, columns, -1.0, q, (int)n,
                        coefficients + i, 1, 1.0, v, 1);
        }
        if (pass == 0)
            last = coefficients[k - 1];
    }
    return last;
}

/* v (n doubles) from splitmix64 of the index, uniform in [−0.5, 0.5): deterministic, and with
   probability one not orthogonal to any given vector (the singular vectors sought). */
static inline void Krylov_pseudo_random(size_t n, uint64_t seed, double *v)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        v[i] = (double)(z >> 11) / 9007199254740992.0 - 0.5;
    }
}

#endif
