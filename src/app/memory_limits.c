#include "memory_limits.h"

#include "blas_buffers.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

void MemoryLimits_size_text(unsigned long long bytes, char *buf, size_t size)
{
    if (bytes >= 1ull << 30)
        snprintf(buf, size, "%.1f GiB", (double)bytes / (double)(1ull << 30));
    else
        snprintf(buf, size, "%llu MiB", bytes >> 20);
}

/* The number at the start of the file dir/name: true when read ("max" is no number). */
static bool read_number(const char *dir, const char *name, unsigned long long *value)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool read = fscanf(f, "%llu", value) == 1;
    fclose(f);
    return read;
}

/* The value of key in dir/memory.stat ("inactive_file 123"), 0 where absent. */
static unsigned long long stat_value(const char *dir, const char *key)
{
    char path[PATH_MAX + 64], line[256];
    snprintf(path, sizeof path, "%s/memory.stat", dir);
    FILE *f = fopen(path, "r");
    unsigned long long value = 0;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ' ' && sscanf(line + n, "%llu", &value) == 1)
            break;
    if (f)
        fclose(f);
    return value;
}

/* One cgroup directory's limit: v2's memory.max less memory.current, else v1's
   memory.limit_in_bytes less memory.usage_in_bytes; kept in *best where below it.  The use
   counts the page cache too, whose inactive part the kernel drops before it fails an
   allocation: it is not counted against the run (as a container's working set leaves it
   out), else a cgroup that has read many files would refuse what fits. */
static void cgroup_dir_limit(const char *dir, MemoryLimit *best)
{
    unsigned long long limit, used = 0, cache;
    const char *name = "memory.max";
    if (read_number(dir, name, &limit)) {
        read_number(dir, "memory.current", &used);
        cache = stat_value(dir, "inactive_file");
    } else if (name = "memory.limit_in_bytes", read_number(dir, name, &limit)) {
        read_number(dir, "memory.usage_in_bytes", &used);
        cache = stat_value(dir, "total_inactive_file");
    } else
        return;
    used = used > cache ? used - cache : 0;
    unsigned long long left = limit > used ? limit - used : 0;
    if (left >= best->bytes)
        return;
    char max[32], in_use[32];
    MemoryLimits_size_text(limit, max, sizeof max);
    MemoryLimits_size_text(used, in_use, sizeof in_use);
    best->bytes = left;
    best->kind = MEMORY_LIMIT_CGROUP;
    best->beside = used;
    snprintf(best->source, sizeof best->source,
             "the cgroup's %s of %s, %s of it in use (its inactive file cache left out)", name, max,
             in_use);
}

/* The cgroups /proc/self/cgroup names (v2's "0::/path", v1's memory controller), each with
   its parents: a Slurm job's limit is on the job's cgroup, the process sits in a step's. */
static void cgroup_limits(MemoryLimit *best)
{
    const char *test_dir = getenv(MEMORY_LIMITS_CGROUP_ENV);
    if (test_dir) {
        cgroup_dir_limit(test_dir, best);
        return;
    }
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return;
    char line[PATH_MAX + 64], dir[PATH_MAX + 64];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *base = strncmp(line, "0::", 3) == 0 ? "/sys/fs/cgroup"
                           : strstr(line, ":memory:")   ? "/sys/fs/cgroup/memory"
                                                        : NULL;
        const char *path = strrchr(line, ':');
        if (!base || !path || path[1] != '/')
            continue;
        snprintf(dir, sizeof dir, "%s%s", base, path + 1);
        for (char *cut; strlen(dir) > strlen(base); *cut = '\0') {
            cgroup_dir_limit(dir, best);
            cut = strrchr(dir, '/');
        }
        cgroup_dir_limit(base, best);
    }
    fclose(f);
}

unsigned long long MemoryLimits_mapped_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f) && sscanf(line, "VmSize: %llu kB", &kib) != 1)
        ;
    fclose(f);
    return kib << 10;
}

/* ulimit -v less what is mapped and OpenBLAS's buffers: two where two fit beside what is
   mapped, one otherwise, as batch and the screen reserve them (BlasBuffers_reserve). */
static void address_space_limit(MemoryLimit *best)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return;
    /* Mapped after this is read and before the arrays: the rates' probe, stdio, a lane's
       stack; measured at about 1 MiB, kept with room to spare. */
    enum { MAPPED_LATER = 16 << 20 };
    unsigned long long cap = limit.rlim_cur, mapped = MemoryLimits_mapped_bytes() + MAPPED_LATER,
                       room = cap > mapped ? cap - mapped : 0,
                       buffers = room >= 2 * BLAS_BUFFER_BYTES ? 2 * BLAS_BUFFER_BYTES
                                                               : BLAS_BUFFER_BYTES,
                       left = room > buffers ? room - buffers : 0;
    if (left >= best->bytes)
        return;
    char text[3][32];
    MemoryLimits_size_text(cap, text[0], sizeof text[0]);
    MemoryLimits_size_text(mapped, text[1], sizeof text[1]);
    MemoryLimits_size_text(buffers, text[2], sizeof text[2]);
    best->bytes = left;
    best->kind = MEMORY_LIMIT_ADDRESS_SPACE;
    best->beside = mapped + buffers;
    snprintf(
        best->source, sizeof best->source,
        "ulimit -v of %s, less %s mapped (16 MiB of it to spare) and %s for OpenBLAS's buffers",
        text[0], text[1], text[2]);
}

void MemoryLimits_raise_text(const MemoryLimit *limit, unsigned long long need, char *buf,
                             size_t size)
{
    unsigned long long holds = need + limit->beside;
    /* Rounded up, in the units each limit is set in: never printed equal to one too small. */
    if (limit->kind == MEMORY_LIMIT_ADDRESS_SPACE) /* KiB, as ulimit -v takes it */
        snprintf(buf, size, "; ulimit -v %llu would hold it", (holds + 1023) >> 10);
    else if (limit->kind == MEMORY_LIMIT_CGROUP)
        snprintf(buf, size, "; a cgroup limit of at least %lluM would hold it",
                 (holds + (1ull << 20) - 1) >> 20);
    else
        buf[0] = '\0';
}

const MemoryLimit *MemoryLimits_default(void)
{
    static MemoryLimit kept;
    static bool read;
    if (read)
        return &kept;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    kept.bytes = pages > 0 && page > 0 ? (unsigned long long)pages * (unsigned long long)page / 2
                                       : 1ull << 32;
    kept.kind = MEMORY_LIMIT_PHYSICAL;
    snprintf(kept.source, sizeof kept.source, "half of the physical memory");
    cgroup_limits(&kept);
    address_space_limit(&kept);
    read = true;
    return &kept;
}
