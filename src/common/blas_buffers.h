/* OpenBLAS's buffers, reserved before computing so that an address-space limit is a message,
 * never a thread spinning in OpenBLAS's allocator (issue 26).
 */
#ifndef ATTNSCOPE_COMMON_BLAS_BUFFERS_H
#define ATTNSCOPE_COMMON_BLAS_BUFFERS_H

#include <stddef.h>

/* OpenBLAS takes a buffer of about 128 MiB (BLAS_BUFFER_BYTES) for a product from a
   table of them it keeps, allocating one when none is free; when the address space cannot
   hold one (ulimit -v), its allocator retries for ever, spinning a core.  This checks that
   the address space holds `callers` buffers, then has OpenBLAS allocate them all at once and
   give them back: as long as at most `callers` threads call BLAS at a time (with one BLAS
   thread each), OpenBLAS never allocates again.  Call it before the threads start and
   before the large allocations.  Returns 0, or -1 (nothing allocated) when they do not
   fit. */
int BlasBuffers_reserve(int callers);

/* A buffer as OpenBLAS 0.3 allocates it (BUFFER_SIZE, 128 MiB on x86-64, and a page), with
   room to spare. */
#define BLAS_BUFFER_BYTES ((size_t)129 << 20)

#endif
