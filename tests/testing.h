/* Shared helpers for the cmocka tests. */
#ifndef ATTNSCOPE_TESTING_H
#define ATTNSCOPE_TESTING_H

#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>

/* |actual − expected| <= tolerance, with both values in the failure message. */
#define assert_close(actual, expected, tolerance)                                              \
    do {                                                                                       \
        double actual_ = (actual), expected_ = (expected), tolerance_ = (tolerance);           \
        if (!(fabs(actual_ - expected_) <= tolerance_))                                        \
            fail_msg("%s = %.17g, expected %.17g within %.3g", #actual, actual_, expected_,   \
                     tolerance_);                                                              \
    } while (0)

/* |actual/expected − 1| <= relative. */
#define assert_relative(actual, expected, relative)                                            \
    do {                                                                                       \
        double actual_ = (actual), expected_ = (expected), relative_ = (relative);             \
        if (!(fabs(actual_ / expected_ - 1.0) <= relative_))                                   \
            fail_msg("%s = %.17g, expected %.17g within %.3g relative", #actual, actual_,     \
                     expected_, relative_);                                                    \
    } while (0)

/* Threads of this process, from /proc/self/task (the tests that check which threads a
   module starts). */
static inline int process_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The thread count once it reaches `expected`, or after 2 s whatever it is then: a joined
   thread's /proc entry can outlive pthread_join by a moment (the kernel clears the thread id
   the join waits for before it releases the task), so a count right after a join may still
   include it on a loaded machine. */
static inline int process_threads_settled(int expected)
{
    int n = process_threads();
    for (int i = 0; i < 200 && n != expected; i++) {
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        n = process_threads();
    }
    return n;
}

/* A scratch directory for a group of tests: scratch_directory_make and _remove are the group's
   cmocka setup and teardown (made empty before the tests, removed with all it holds after). */
static inline char *scratch_directory(void)
{
    static char path[] = "/tmp/attnscope-test-XXXXXX";
    return path;
}

static inline int scratch_directory_make(void **state)
{
    (void)state;
    return mkdtemp(scratch_directory()) ? 0 : -1;
}

static inline int scratch_directory_remove(void **state)
{
    (void)state;
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", scratch_directory());
    return system(command) == 0 ? 0 : -1;
}

#endif
