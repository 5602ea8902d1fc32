#include "attnscope/hessenberg_tuning.h"

#include <ctype.h>
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

/* IPARMQ's questions (ISPEC) and the reference's constant answers (LAPACK 3.x iparmq.f). */
enum {
    ISPEC_NMIN = 12,   /* below this order dhseqr uses dlahqr, the double-shift QR */
    ISPEC_WINDOW = 13, /* NW */
    ISPEC_NIBBLE = 14, /* deflation (percent) that skips the next sweep */
    ISPEC_SHIFTS = 15, /* NS */
    ISPEC_ACCUMULATE = 16,
    ISPEC_COST = 17,
    REFERENCE_NMIN = 75,
    REFERENCE_NIBBLE = 14,
    REFERENCE_COST = 10,
    ACCUMULATE_MIN = 14, /* KACMIN and K22MIN: 2×2-blocked accumulation from 14 shifts on */
    WINDOW_SWAP = 500,   /* KNWSWP: above it the window is 3/2 of the shifts */
};

/* The table bench/hessenberg_shifts.c measured (bench/README.md, "the shown eigenvalues'
   Hessenberg QR"): from `from` rows on, `shifts` shifts (0: the reference's). */
static const struct {
    int from, shifts;
} TUNED_SHIFTS[] = {
    {150, 16},
    {1280, 24},
    {3000, 32},
    {6000, 0},
};

static HessenbergPolicy policy = HESSENBERG_POLICY_TUNED;
static int fixed_nh;
static HessenbergChoice fixed_choice;

void Hessenberg_set_policy(HessenbergPolicy new_policy, int nh, HessenbergChoice fixed)
{
    policy = new_policy;
    fixed_nh = nh;
    fixed_choice = fixed;
}

static int window_for(int nh, int shifts)
{
    return nh <= WINDOW_SWAP ? shifts : 3 * shifts / 2;
}

HessenbergChoice Hessenberg_reference(int nh)
{
    int ns = 2;
    if (nh >= 30)
        ns = 4;
    if (nh >= 60)
        ns = 10;
    if (nh >= 150) { /* NINT(LOG(REAL(NH)) / LOG(TWO)), in single precision as there */
        long log2_nh = lroundf(logf((float)nh) / logf(2.0f));
        ns = (int)(nh / log2_nh);
        if (ns < 10)
            ns = 10;
    }
    if (nh >= 590)
        ns = 64;
    if (nh >= 3000)
        ns = 128;
    if (nh >= 6000)
        ns = 256;
    ns -= ns % 2;
    if (ns < 2)
        ns = 2;
    return (HessenbergChoice){.shifts = ns, .window = window_for(nh, ns)};
}

HessenbergChoice Hessenberg_tuned(int nh)
{
    int shifts = 0;
    for (size_t i = 0; i < sizeof TUNED_SHIFTS / sizeof TUNED_SHIFTS[0]; i++)
        if (nh >= TUNED_SHIFTS[i].from)
            shifts = TUNED_SHIFTS[i].shifts;
    if (!shifts)
        return Hessenberg_reference(nh);
    return (HessenbergChoice){.shifts = shifts, .window = window_for(nh, shifts)};
}

static HessenbergChoice choice_in_effect(int nh)
{
    if (policy == HESSENBERG_POLICY_REFERENCE)
        return Hessenberg_reference(nh);
    if (policy == HESSENBERG_POLICY_FIXED && nh == fixed_nh)
        return fixed_choice;
    return Hessenberg_tuned(nh);
}

/* The routine's name, upper-cased (the reference compares upper case), its first 6 letters. */
static bool name_is(const char *name, size_t length, size_t at, const char *part)
{
    for (size_t i = 0; part[i]; i++)
        if (at + i >= length || toupper((unsigned char)name[at + i]) != part[i])
            return false;
    return true;
}

/* The real double Hessenberg QR's routines: what the table was measured on.  The complex and
   single precision ones cost otherwise per shift, and the QZ (xLAQZ0) and the reordering
   (xTREXC) ask the same questions of another algorithm: they keep the reference's answers. */
static bool tuned_routine(const char *name, size_t length)
{
    return name_is(name, length, 0, "D") &&
           (name_is(name, length, 1, "HSEQR") || name_is(name, length, 1, "LAQR"));
}

/* KACC22: whether (and how) a sweep accumulates its reflections, the reference's rule. */
static int accumulate(const char *name, size_t length, int nh, int shifts)
{
    int needed = 0;
    if (name_is(name, length, 1, "GGHRD") || name_is(name, length, 1, "GGHD3"))
        return nh >= ACCUMULATE_MIN ? 2 : 1;
    if (name_is(name, length, 3, "EXC"))
        needed = nh;
    else if (name_is(name, length, 1, "HSEQR") || name_is(name, length, 1, "LAQR"))
        needed = shifts;
    else
        return 0;
    return needed >= ACCUMULATE_MIN ? 2 : 0;
}

/* LAPACK's IPARMQ, which OpenBLAS's ILAENV calls for ISPEC 12 to 17; gfortran passes the two
   strings' lengths last. */
lapack_int iparmq_(const lapack_int *ispec, const char *name, const char *opts, const lapack_int *n,
                   const lapack_int *ilo, const lapack_int *ihi, const lapack_int *lwork,
                   size_t name_length, size_t opts_length);

lapack_int iparmq_(const lapack_int *ispec, const char *name, const char *opts, const lapack_int *n,
                   const lapack_int *ilo, const lapack_int *ihi, const lapack_int *lwork,
                   size_t name_length, size_t opts_length)
{
    (void)opts, (void)n, (void)lwork, (void)opts_length;
    int nh = (int)(*ihi - *ilo + 1);
    HessenbergChoice choice =
        tuned_routine(name, name_length) ? choice_in_effect(nh) : Hessenberg_reference(nh);
    switch (*ispec) {
    case ISPEC_NMIN:
        return REFERENCE_NMIN;
    case ISPEC_NIBBLE:
        return REFERENCE_NIBBLE;
    case ISPEC_SHIFTS:
        return choice.shifts;
    case ISPEC_WINDOW:
        return choice.window;
    case ISPEC_ACCUMULATE:
        return accumulate(name, name_length, nh, choice.shifts);
    case ISPEC_COST:
        return REFERENCE_COST;
    default:
        return -1;
    }
}
