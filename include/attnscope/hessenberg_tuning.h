/* The parameters of LAPACK's Hessenberg QR (dhseqr: dlaqr0's small-bulge multishift sweeps
 * with aggressive early deflation), which dgeev spends most of its time in.  LAPACK reads them
 * from IPARMQ, whose documentation asks for them to be tuned to the machine; OpenBLAS's
 * dhseqr calls iparmq_ through the dynamic linker, so the one src/core/hessenberg_tuning.c
 * defines (exported by every executable that links the core: linalg.c refers to it) answers
 * in place of LAPACK's.  Only the real double routines' shift count and deflation window
 * change, by a table measured with bench/hessenberg_shifts.c (bench/README.md); every other
 * answer is the reference IPARMQ's.
 */
#ifndef ATTNSCOPE_HESSENBERG_TUNING_H
#define ATTNSCOPE_HESSENBERG_TUNING_H

typedef struct {
    int shifts; /* IPARMQ's NS (ISPEC 15): simultaneous shifts per QR sweep, even */
    int window; /* IPARMQ's NW (ISPEC 13): the aggressive early deflation window */
} HessenbergChoice;

/* For an active block of nh rows (IHI − ILO + 1), LAPACK's reference IPARMQ and ours. */
HessenbergChoice Hessenberg_reference(int nh);
HessenbergChoice Hessenberg_tuned(int nh);

/* For measuring only (bench/hessenberg_shifts.c, the tests), and only while no LAPACK call
   runs on another thread: from now on our iparmq_ answers as `policy` says. */
typedef enum {
    HESSENBERG_POLICY_TUNED,     /* the table (the default) */
    HESSENBERG_POLICY_REFERENCE, /* LAPACK's values at every nh */
    HESSENBERG_POLICY_FIXED,     /* `fixed` at nh == fixed_nh, the table elsewhere */
} HessenbergPolicy;

void Hessenberg_set_policy(HessenbergPolicy policy, int fixed_nh, HessenbergChoice fixed);

#endif
