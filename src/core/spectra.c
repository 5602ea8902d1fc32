#include "attnscope/spectra.h"

#include "attnscope/attention.h"

#include <math.h>
#include <stdlib.h>

static int by_descending_modulus(const void *pa, const void *pb)
{
    const Complex *a = pa, *b = pb;
    double ma = hypot(a->re, a->im), mb = hypot(b->re, b->im);
    if (ma != mb)
        return ma > mb ? -1 : 1;
    if (a->re != b->re)
        return a->re > b->re ? -1 : 1;
    if (a->im != b->im)
        return a->im > b->im ? -1 : 1;
    return 0;
}

void Spectra_sort(int T, Complex *eigenvalues)
{
    qsort(eigenvalues, (size_t)T, sizeof *eigenvalues, by_descending_modulus);
}

int Spectra_outlier(int T, const Complex *eigenvalues)
{
    if (T < 2)
        return -1;
    double first = hypot(eigenvalues[0].re, eigenvalues[0].im),
           bulk = hypot(eigenvalues[1].re, eigenvalues[1].im);
    return first > 0 && first >= OUTLIER_SEPARATION * bulk ? 0 : -1;
}

int Spectra_eigenvalues(int T, double *a, Linalg *la, double *re_im, Complex *out, bool *exact)
{
    *exact = Attention_is_lower_triangular(T, a);
    if (*exact) {
        for (int i = 0; i < T; i++)
            out[i] = (Complex){a[(size_t)i * T + i], 0.0};
    } else {
        /* The buffer is Aᵀ to LAPACK: same eigenvalues. */
        int info = Linalg_eigenvalues(la, T, a, re_im, re_im + T);
        if (info)
            return info;
        for (int i = 0; i < T; i++)
            out[i] = (Complex){re_im[i], re_im[T + i]};
    }
    Spectra_sort(T, out);
    return 0;
}

bool Spectra_attention_triangular(const Config *c)
{
    return c->mask == MASK_CAUSAL || c->mask == MASK_WINDOW_CAUSAL ||
           c->attention == ATTENTION_IDENTITY;
}

bool Spectra_brauer(const Config *c, Gap applied)
{
    return (applied == GAP_UNIFORM || applied == GAP_DEFLATE) && Config_rows_stochastic(c);
}

bool Spectra_from_diagonal(const Config *c, Gap applied)
{
    /* Deflate is applied only to rows that sum to one: Brauer's theorem then. */
    if (Spectra_brauer(c, applied) || applied == GAP_OFF || applied == GAP_DEFLATE)
        return Spectra_attention_triangular(c);
    if (applied == GAP_CENTER)
        /* Centring keeps the mask's zeros; uniform attention's rows centre to exact zeros. */
        return c->mask == MASK_CAUSAL || c->mask == MASK_WINDOW_CAUSAL ||
               c->attention == ATTENTION_UNIFORM;
    /* The identity's singular vectors are unit vectors: removing its top ones leaves it
       diagonal. */
    if (applied == GAP_OUTLIERS)
        return c->attention == ATTENTION_IDENTITY;
    return false; /* uniform on rows that do not sum to one: a dense matrix */
}

void Spectra_brauer_deflate(int T, Complex *eigenvalues)
{
    int nearest = 0;
    double best = INFINITY;
    for (int i = 0; i < T; i++) {
        double dist = hypot(eigenvalues[i].re - 1.0, eigenvalues[i].im);
        if (dist < best) {
            best = dist;
            nearest = i;
        }
    }
    eigenvalues[nearest] = (Complex){0.0, 0.0};
    Spectra_sort(T, eigenvalues);
}

bool Spectra_prepare_shown_layer(const Config *c, Gap applied_gap, double *before_gap,
                                 const double *applied, Result *out)
{
    int T = c->tokens;
    if (Spectra_brauer(c, applied_gap))
        return true;
    if (applied_gap == GAP_UNIFORM && Config_layer_mask(c, c->layer) != MASK_FULL)
        Warnings_add_about(&out->warnings, WARNING_ABOUT_EIGENVALUES,
                           "eigenvalues of the masked %s attention minus (1/T)11^T come from "
                           "dense QR on a non-normal matrix and may be off by several percent",
                           ATTENTION_NAMES.names[c->attention]);
    /* dgeev destroys its input, and the singular values need `applied` too. */
    size_t tt = (size_t)T * T;
    for (size_t k = 0; k < tt; k++)
        before_gap[k] = applied[k];
    return false;
}

int Spectra_shown_eigenvalues(int T, bool brauer, double *before_gap, Linalg *la, double *scratch,
                              Result *out)
{
    int info =
        Spectra_eigenvalues(T, before_gap, la, scratch, out->eigenvalues, &out->eigenvalues_exact);
    if (!info && brauer)
        Spectra_brauer_deflate(T, out->eigenvalues);
    return info;
}

int Spectra_shown_singular_values(int T, double *applied, Linalg *la, Result *out)
{
    return Linalg_singular_values(la, T, T, applied, out->singular_values);
}

int Spectra_of_shown_layer(const Config *c, Gap applied_gap, double *before_gap, double *applied,
                           Linalg *la, double *scratch, Result *out)
{
    int T = c->tokens;
    bool brauer = Spectra_prepare_shown_layer(c, applied_gap, before_gap, applied, out);
    int info = Spectra_shown_eigenvalues(T, brauer, before_gap, la, scratch, out);
    return info ? info : Spectra_shown_singular_values(T, applied, la, out);
}
