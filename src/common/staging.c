#include "staging.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool Staging_writer_gone(const char *text, const char **end)
{
    *end = text;
    if (*text < '0' || *text > '9') /* strtol would take spaces and a sign */
        return false;
    char *past;
    errno = 0;
    long pid = strtol(text, &past, 10);
    *end = past;
    if (errno || pid <= 0 || pid == (long)getpid() || pid != (long)(pid_t)pid)
        return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

bool Staging_dangling_link(const char *path, bool whole, char *err, size_t size)
{
    struct stat st;
    char names[PATH_MAX];
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode) || stat(path, &st) == 0 || errno != ENOENT)
        return false;
    ssize_t n = readlink(path, names, sizeof names - 1);
    names[n > 0 ? n : 0] = '\0';
    snprintf(err, size,
             "%s%s is a symbolic link to '%s', which does not exist: accepted a directory, a "
             "link to one, or a path where one can be created",
             whole ? "it" : "", whole ? "" : path, names);
    return true;
}

static const int ENDING_SIGNALS[] = {SIGINT, SIGTERM, SIGHUP};
enum { ENDING_COUNT = sizeof ENDING_SIGNALS / sizeof ENDING_SIGNALS[0] };

/* The handler reads only what count says is written: a path is stored before count grows. */
static struct {
    char path[STAGING_PATHS][STAGING_PATH_SIZE];
    volatile sig_atomic_t count;
    char directory[STAGING_PATH_SIZE];
    volatile sig_atomic_t has_directory;
    /* The files directory may hold (Staging_remove_tree_on_signal), and a path to build each
       one's in: the handler may not allocate. */
    const char *const *names;
    volatile sig_atomic_t name_count;
    char name_path[STAGING_PATH_SIZE];
    /* The parents the writer made: prefixes of parents, in the order they were made. */
    char parents[STAGING_PATH_SIZE];
    unsigned short parent_length[STAGING_PATH_SIZE / 2];
    volatile sig_atomic_t parent_count;
    /* The old directory stepped aside (aside) from target's name. */
    char aside[STAGING_PATH_SIZE], target[STAGING_PATH_SIZE];
    volatile sig_atomic_t has_aside;
    struct sigaction old[ENDING_COUNT];
    bool armed;
} staging;

/* unlinks directory/name for each recorded name; byte copies alone, as a handler may. */
static void unlink_named_files(void)
{
    size_t n = 0;
    while (staging.directory[n])
        n++;
    staging.name_path[n] = '/';
    for (size_t i = 0; i < n; i++)
        staging.name_path[i] = staging.directory[i];
    for (int k = 0; k < staging.name_count; k++) {
        size_t j = 0;
        for (const char *name = staging.names[k]; name[j]; j++)
            staging.name_path[n + 1 + j] = name[j];
        staging.name_path[n + 1 + j] = '\0';
        unlink(staging.name_path);
    }
}

/* rmdir's each parent the writer made, deepest first, cutting the path in place. */
static void remove_parents(void)
{
    for (int i = staging.parent_count - 1; i >= 0; i--) {
        char *end = &staging.parents[staging.parent_length[i]];
        char kept = *end;
        *end = '\0';
        rmdir(staging.parents);
        *end = kept;
    }
}

static void on_ending_signal(int sig)
{
    if (staging.has_aside) /* the old set back at its name first: target never stays absent */
        rename(staging.aside, staging.target);
    for (int i = 0; i < staging.count; i++)
        unlink(staging.path[i]);
    if (staging.has_directory && staging.name_count > 0)
        unlink_named_files();
    if (staging.has_directory)
        rmdir(staging.directory); /* only while empty: what else is in it stays */
    remove_parents();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    /* Blocked while the handler runs: delivered on return, now with the default action. */
    raise(sig);
}

static void arm(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_ending_signal;
    sigfillset(&sa.sa_mask); /* one handler at a time: the second signal waits for the end */
    for (int i = 0; i < ENDING_COUNT; i++) {
        sigaction(ENDING_SIGNALS[i], NULL, &staging.old[i]);
        if (staging.old[i].sa_handler != SIG_IGN)
            sigaction(ENDING_SIGNALS[i], &sa, NULL);
    }
    staging.armed = true;
}

int Staging_remove_on_signal(const char *path)
{
    int n = staging.count;
    size_t length = strlen(path);
    if (n >= STAGING_PATHS || length >= STAGING_PATH_SIZE)
        return -1;
    memcpy(staging.path[n], path, length + 1);
    atomic_signal_fence(memory_order_seq_cst);
    staging.count = n + 1;
    if (!staging.armed)
        arm();
    return 0;
}

int Staging_remove_directory_on_signal(const char *dir)
{
    size_t length = strlen(dir);
    if (length >= STAGING_PATH_SIZE)
        return -1;
    staging.name_count = 0; /* a directory alone: only while empty */
    memcpy(staging.directory, dir, length + 1);
    atomic_signal_fence(memory_order_seq_cst);
    staging.has_directory = 1;
    if (!staging.armed)
        arm();
    return 0;
}

int Staging_remove_tree_on_signal(const char *dir, const char *const *names, int count)
{
    size_t length = strlen(dir), longest = 0;
    for (int k = 0; k < count; k++)
        longest = strlen(names[k]) > longest ? strlen(names[k]) : longest;
    if (length + 1 + longest >= STAGING_PATH_SIZE)
        return -1;
    staging.has_directory = 0; /* the handler reads none of it while it changes */
    staging.name_count = 0;
    atomic_signal_fence(memory_order_seq_cst);
    memcpy(staging.directory, dir, length + 1);
    staging.names = names;
    atomic_signal_fence(memory_order_seq_cst);
    staging.name_count = count;
    staging.has_directory = 1;
    if (!staging.armed)
        arm();
    return 0;
}

int Staging_remove_parents_on_signal(const char *path, const unsigned short *lengths, int count)
{
    size_t length = strlen(path);
    if (length >= STAGING_PATH_SIZE || count < 0 ||
        (size_t)count > sizeof staging.parent_length / sizeof *staging.parent_length)
        return -1;
    staging.parent_count = 0;
    atomic_signal_fence(memory_order_seq_cst);
    memcpy(staging.parents, path, length + 1);
    for (int i = 0; i < count; i++)
        staging.parent_length[i] = lengths[i];
    atomic_signal_fence(memory_order_seq_cst);
    staging.parent_count = count;
    if (!staging.armed)
        arm();
    return 0;
}

int Staging_restore_on_signal(const char *aside, const char *target)
{
    size_t a = strlen(aside), t = strlen(target);
    if (a >= STAGING_PATH_SIZE || t >= STAGING_PATH_SIZE)
        return -1;
    staging.has_aside = 0;
    atomic_signal_fence(memory_order_seq_cst);
    memcpy(staging.aside, aside, a + 1);
    memcpy(staging.target, target, t + 1);
    atomic_signal_fence(memory_order_seq_cst);
    staging.has_aside = 1;
    if (!staging.armed)
        arm();
    return 0;
}

void Staging_forget_aside(void)
{
    staging.has_aside = 0;
    atomic_signal_fence(memory_order_seq_cst);
}

void Staging_forget(void)
{
    staging.count = 0;
    staging.has_directory = 0;
    staging.name_count = 0;
    staging.parent_count = 0;
    staging.has_aside = 0;
    atomic_signal_fence(memory_order_seq_cst);
    if (!staging.armed)
        return;
    for (int i = 0; i < ENDING_COUNT; i++)
        sigaction(ENDING_SIGNALS[i], &staging.old[i], NULL);
    staging.armed = false;
}
