/* The default memory budget: what this process may really allocate, the least of half the
 * physical memory, its cgroup's memory limit less what the cgroup uses (Slurm's --mem, a
 * container's limit: above it the OOM killer ends the whole process), and the address-space
 * limit (ulimit -v) less what is mapped already and OpenBLAS's buffers. */
#ifndef ATTNSCOPE_APP_MEMORY_LIMITS_H
#define ATTNSCOPE_APP_MEMORY_LIMITS_H

#include <stddef.h>

/* Tests only: a directory read as this process's cgroup instead of the one /proc/self/cgroup
   names (memory.max and memory.current, or v1's memory.limit_in_bytes and
   memory.usage_in_bytes), its parents not read. */
#define MEMORY_LIMITS_CGROUP_ENV "ATTNSCOPE_TEST_CGROUP_DIR"

typedef enum {
    MEMORY_LIMIT_PHYSICAL,
    MEMORY_LIMIT_CGROUP,
    MEMORY_LIMIT_ADDRESS_SPACE
} MemoryLimitKind;

typedef struct {
    unsigned long long bytes;  /* the budget */
    char source[192];          /* which limit set it: "ulimit -v of 244 MiB (...)" */
    int kind;                  /* a MemoryLimitKind: what a user raises for more */
    unsigned long long beside; /* what the limit holds beside the budget (mapped, in use) */
} MemoryLimit;

/* The default budget, read once (the first call, before anything large is mapped) and kept:
   what is mapped grows as a run allocates, and the budget is what the run may take. */
const MemoryLimit *MemoryLimits_default(void);

/* The address space mapped now (VmSize), in bytes, or 0 where unknown. */
unsigned long long MemoryLimits_mapped_bytes(void);

/* What would hold a need of `need` bytes under the limit that set the budget, for a refusal:
   "; ulimit -v 191488 would hold it", "; a cgroup limit of at least 2060M would hold it", or
   "" where the physical memory set it. */
void MemoryLimits_raise_text(const MemoryLimit *limit, unsigned long long need, char *buf,
                             size_t size);

/* "244 MiB", "2.0 GiB": bytes as the messages say them. */
void MemoryLimits_size_text(unsigned long long bytes, char *buf, size_t size);

#endif
