/* The heap's bytes in use, for tests that compare what is really allocated with an estimate:
 * the including program's own malloc, calloc, realloc, the aligned ones and free, around
 * glibc's, count malloc_usable_size of each chunk (its bytes as the allocator rounds them).
 * Include in one test program only (it defines the allocator's functions).  Under a sanitizer,
 * whose allocator replaces glibc's, AddressSanitizer's own count instead, and none (0) under
 * ThreadSanitizer. */
#ifndef ATTNSCOPE_TESTS_HEAP_COUNT_H
#define ATTNSCOPE_TESTS_HEAP_COUNT_H

#include <errno.h>
#include <malloc.h>
#include <stddef.h>

/* GCC names the sanitizers by macros, clang by __has_feature. */
#if defined(__SANITIZE_THREAD__)
#define HEAP_COUNT_TSAN 1
#elif defined(__SANITIZE_ADDRESS__)
#define HEAP_COUNT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HEAP_COUNT_TSAN 1
#elif __has_feature(address_sanitizer)
#define HEAP_COUNT_ASAN 1
#endif
#endif

#if defined(HEAP_COUNT_TSAN)
/* ThreadSanitizer's count is of its size classes, up to a quarter above the bytes asked
   for: too coarse for the tests' slack, so none (the tests that read it skip). */
static size_t heap_in_use(void)
{
    return 0;
}
#elif defined(HEAP_COUNT_ASAN)
/* AddressSanitizer's runtime's count of the bytes asked for (its header,
   sanitizer/allocator_interface.h, comes with clang). */
size_t __sanitizer_get_current_allocated_bytes(void);

static size_t heap_in_use(void)
{
    return __sanitizer_get_current_allocated_bytes();
}
#else
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *p);
static _Atomic size_t heap_bytes;

static size_t heap_in_use(void)
{
    return heap_bytes;
}

void *malloc(size_t size)
{
    void *p = __libc_malloc(size);
    if (p)
        heap_bytes += malloc_usable_size(p);
    return p;
}

void *calloc(size_t count, size_t size)
{
    void *p = __libc_calloc(count, size);
    if (p)
        heap_bytes += malloc_usable_size(p);
    return p;
}

void *realloc(void *old, size_t size)
{
    size_t was = old ? malloc_usable_size(old) : 0;
    void *p = __libc_realloc(old, size);
    if (p)
        heap_bytes += malloc_usable_size(p) - was;
    else if (size == 0)
        heap_bytes -= was;
    return p;
}

/* The aligned ones too, which the libraries may free with free. */
void *memalign(size_t alignment, size_t size)
{
    void *p = __libc_memalign(alignment, size);
    if (p)
        heap_bytes += malloc_usable_size(p);
    return p;
}

void *aligned_alloc(size_t alignment, size_t size)
{
    return memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
    void *p = memalign(alignment, size);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void free(void *p)
{
    if (p)
        heap_bytes -= malloc_usable_size(p);
    __libc_free(p);
}
#endif

#endif
