# Sourced by the tests that compare numbers bit for bit with stored files (tests/cli/block-pin.sh,
# tests/tui/golden.sh).  OpenBLAS picks its kernels by processor (an AVX-512 machine gets
# Cooperlake's or SkylakeX's), and another kernel sums in another order, which moves the last
# bit of a stable rank.  The stored files were made with the Haswell kernel (AVX2 and FMA),
# which every x86-64 processor since 2013 runs; a kernel the environment already chose is kept.
# pin_blas_kernel returns 1, with the reason in blas_kernel_missing, where the processor cannot
# run it.
pin_blas_kernel() {
    [ -n "${OPENBLAS_CORETYPE:-}" ] && return 0
    if ! grep -qw avx2 /proc/cpuinfo 2>/dev/null || ! grep -qw fma /proc/cpuinfo 2>/dev/null; then
        blas_kernel_missing="no AVX2/FMA for the kernel the stored files were made with"
        return 1
    fi
    export OPENBLAS_CORETYPE=Haswell
}
