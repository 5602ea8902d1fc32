/* renameat2 and RENAME_EXCHANGE (Linux, glibc 2.28). */
#define _GNU_SOURCE
#include "export.h"

#include "attnscope/entropy.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/random.h"
#include "export_csv.h"
#include "staging.h"
#include "svg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* NAME_ROOM: what a file's name adds to its directory's path. */
enum { FILES = 8, PATH_SIZE = 4096, NAME_ROOM = 40 };

/* The files of every export, then those beside them (EXTRA_FILES), each written where the
   export has it. */
enum {
    SWEEP_CSV = FILES,
    SWEEP_SVG,
    GRADIENT_CSV,
    GRADIENT_SVG,
    SIMILARITY_CSV,
    SIMILARITY_SVG,
    ROW_ENTROPIES_CSV,
    ROW_ENTROPIES_SVG,
    CONDITIONING_FILE,
    CONDITIONING_SVG,
    CONDITIONING_VALUES_CSV,
    CONDITIONING_VALUES_SVG,
    WITHOUT_GAP_REMOVAL_CSV,
    WITHOUT_GAP_REMOVAL_SVG,
    WITH_GAP_REMOVAL_CSV,
    WITH_GAP_REMOVAL_SVG,
    NORMAL_CONDITIONING, /* the four files of conditioning_*, for each initialisation */
    CUTTING_SKIP_CONDITIONING = NORMAL_CONDITIONING + 4,
    MATRIX_FILE = CUTTING_SKIP_CONDITIONING + 4,
    PRODUCT_FILE,
    INPUT_FILE,
    NAMES
};
static const char *const FILE_NAMES[NAMES] = {"eigenvalues.csv",
                                              "singular_values.csv",
                                              "layers.csv",
                                              "eigenvalues.svg",
                                              "singular_values.svg",
                                              "stable_rank.svg",
                                              "attention_map.svg",
                                              "entropy.svg",
                                              "width_sweep.csv",
                                              "width_sweep.svg",
                                              "gradient.csv",
                                              "gradient.svg",
                                              "token_similarity.csv",
                                              "token_similarity.svg",
                                              "row_entropies.csv",
                                              "row_entropies.svg",
                                              "conditioning.csv",
                                              "conditioning.svg",
                                              "conditioning_singular_values.csv",
                                              "conditioning_singular_values.svg",
                                              "eigenvalues_without_gap_removal.csv",
                                              "eigenvalues_without_gap_removal.svg",
                                              "eigenvalues_with_gap_removal.csv",
                                              "eigenvalues_with_gap_removal.svg",
                                              "conditioning_normal.csv",
                                              "conditioning_normal.svg",
                                              "conditioning_singular_values_normal.csv",
                                              "conditioning_singular_values_normal.svg",
                                              "conditioning_cutting_skip.csv",
                                              "conditioning_cutting_skip.svg",
                                              "conditioning_singular_values_cutting_skip.csv",
                                              "conditioning_singular_values_cutting_skip.svg",
                                              "attention_matrix.csv",
                                              "attention_product.csv",
                                              "input.csv"};

const char *Export_default_directory(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(buf, size, "attnscope-%Y%m%d-%H%M%S", &tm);
    return buf;
}

double *Export_input(const Config *c, Linalg *la, char *why, size_t size)
{
    size_t td = (size_t)c->tokens * c->width;
    double *x = malloc(sizeof(double) * td), *scratch = malloc(sizeof(double) * td);
    RandomStream *random = RandomStream_new();
    Linalg *own = la ? NULL : Linalg_new();
    int status = -1;
    if (!x || !scratch || !random || !(la || own))
        snprintf(why, size, "%s", strerror(ENOMEM));
    else if ((status = Layer_input(random, la ? la : own, c, c->seed, x, scratch)) != 0)
        snprintf(why, size, "drawing X0 again failed (status %d)", status);
    Linalg_free(own);
    RandomStream_free(random);
    free(scratch);
    if (status) {
        free(x);
        return NULL;
    }
    return x;
}

void Export_result_views(const Result *r, ExportExtras *x, char *left_out, size_t size)
{
    const Config *c = &r->config;
    const char *gradients = Model_gradients_unavailable(c);
    const char *entropies = !Entropy_defined(c->attention) ? Entropy_undefined_reason(c->attention)
                            : !r->spectra_ready ? "the shown layer has no finite attention matrix"
                                                : NULL;
    x->similarity = true;
    x->gradient = gradients == NULL;
    x->entropy = entropies == NULL;
    snprintf(left_out, size, "%s%s%s%s%s",
             gradients ? "gradient.csv and .svg, as the frozen-attention gradient formula " : "",
             gradients ? gradients : "", gradients && entropies ? "; " : "",
             entropies ? "row_entropies.csv and .svg, as " : "", entropies ? entropies : "");
}

typedef void (*Writer)(FILE *f, const Result *r);

/* The files of every export, each a few ms at T = 2048; those beside them are written by
   write_extra (the matrices in full row by row, polling the stop). */
static const Writer WRITERS[FILES] = {
    ExportCsv_eigenvalues, ExportCsv_singular_values, Export_layers_csv, Svg_eigenvalues,
    Svg_singular_values,   Svg_stable_rank,           Svg_attention_map, Svg_entropy};

/* Whether a full matrix is there to write: kept at block 1 (--export-matrix). */
static bool full_map(const AttentionMap *m)
{
    return m->mean && m->block == 1;
}

/* ---- Files and directories -------------------------------------------------------------- */

/* The directories make_parents created, as the lengths of their paths, in creation order. */
typedef struct {
    int count;
    unsigned short length[PATH_SIZE / 2];
} Parents;

static void remove_parents(char *path, const Parents *made)
{
    for (int i = made->count - 1; i >= 0; i--) {
        path[made->length[i]] = '\0';
        rmdir(path);
        path[made->length[i]] = '/';
    }
}

/* Creates the missing directories above path, as mkdir -p does (0777 less the umask), and
   checks that the last is a directory.  Returns 0, or -1 with err and the ones it created
   removed again. */
static int make_parents(char *path, Parents *made, char *err, size_t size)
{
    made->count = 0;
    for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        if (slash[-1] == '/')
            continue;
        *slash = '\0';
        if (mkdir(path, 0777) == 0)
            made->length[made->count++] = (unsigned short)(slash - path);
        else if (errno != EEXIST) {
            snprintf(err, size, "cannot create the directory %s: %s", path, strerror(errno));
            *slash = '/';
            remove_parents(path, made);
            return -1;
        }
        *slash = '/';
    }
    /* mkdir's EEXIST also stands for a file in the way: the directory itself would fail. */
    char *last = strrchr(path, '/');
    struct stat st;
    if (last && last != path) {
        *last = '\0';
        int status = stat(path, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
        *last = '/';
        if (status) {
            snprintf(err, size, "cannot create the directory %s: %s", path, strerror(status));
            remove_parents(path, made);
            return -1;
        }
    }
    return 0;
}

static bool export_file(const char *name)
{
    for (int i = 0; i < NAMES; i++)
        if (strcmp(name, FILE_NAMES[i]) == 0)
            return true;
    return false;
}

/* An existing directory is replaced as a whole, so it may hold only an earlier export's
   files: anything else is the user's and would leave with the old set. */
static int check_replaceable(const char *dir, char *err, size_t size)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, size, "cannot read the directory: %s", strerror(errno));
        return -1;
    }
    int status = 0;
    struct dirent *e;
    while (status == 0 && (e = readdir(d))) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            (export_file(e->d_name) &&
             fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)))
            continue;
        snprintf(err, size,
                 "the directory holds %s, which is not a file of an export: an export replaces "
                 "its directory as a whole, so name a new or empty one, or an earlier export's",
                 e->d_name);
        status = -1;
    }
    closedir(d);
    return status;
}

/* Removes an export's files (conditioning.csv too) and then the directory (left in place
   when it holds more). */
static void remove_export(const char *dir)
{
    char path[PATH_SIZE + NAME_ROOM];
    for (int i = 0; i < NAMES; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, FILE_NAMES[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* Removes the staging directories a killed export left beside the target (.BASE.export-PID-N,
   and its .old where the file system could not exchange names): those of a process that no
   longer exists, and only the export files in them. */
static void remove_abandoned_staging(const char *parent, const char *base)
{
    DIR *d = opendir(parent);
    if (!d)
        return;
    char prefix[NAME_MAX + 16], path[PATH_SIZE];
    int n = snprintf(prefix, sizeof prefix, ".%s.export-", base);
    struct dirent *e;
    while (n > 0 && (size_t)n < sizeof prefix && (e = readdir(d))) {
        const char *end;
        if (strncmp(e->d_name, prefix, (size_t)n) != 0 ||
            !Staging_writer_gone(e->d_name + n, &end) || *end != '-')
            continue; /* not one of ours, or its export may still run */
        if (snprintf(path, sizeof path, "%s/%s", parent, e->d_name) < PATH_SIZE - NAME_ROOM)
            remove_export(path);
    }
    closedir(d);
}

/* A new directory beside the target, named after it and hidden: .BASE.export-PID-N. */
static int make_staging(const char *parent, const char *base, char *out, char *err, size_t size)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        int n =
            snprintf(out, PATH_SIZE, "%s/.%s.export-%ld-%d", parent, base, (long)getpid(), attempt);
        if (n < 0 || n >= PATH_SIZE - NAME_ROOM) {
            snprintf(err, size, "the path is too long");
            return -1;
        }
        if (mkdir(out, 0777) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    snprintf(err, size, "cannot create a directory beside it in %s: %s", parent, strerror(errno));
    return -1;
}

/* What an export writes, and the hook that cancels it. */
typedef struct {
    const Result *r;
    ExportExtras x;
    LinalgStop stop;
} Exported;

/* The conditioning's file `which` of its four (conditioning.csv, its κ plot, its singular
   values' CSV and SVG, in CONDITIONING_FILE's order); named: the κ plot names its init. */
static void write_conditioning(FILE *f, const Conditioning *k, int which, bool named)
{
    switch (which) {
    case 0:
        Export_conditioning_csv(f, k);
        break;
    case 1:
        Svg_conditioning(f, k, named);
        break;
    case 2:
        ExportCsv_conditioning_singular_values(f, k);
        break;
    default:
        Svg_conditioning_singular_values(f, k);
    }
}

/* The first of the four files that hold the compare view's other initialisation's
   conditioning, named after it (NORMAL_CONDITIONING or CUTTING_SKIP_CONDITIONING), or -1 for
   none. */
static int other_init_files(const ExportExtras *x)
{
    if (!x->other_init)
        return -1;
    return x->other_init->config.init == INIT_CUTTING_SKIP ? CUTTING_SKIP_CONDITIONING
                                                           : NORMAL_CONDITIONING;
}

/* File i beside the files of every export (i ≥ FILES).  False: stopped. */
static bool write_extra(FILE *f, const Exported *e, int i)
{
    const Result *r = e->r;
    bool compared = e->x.other_init != NULL;
    if (i >= CONDITIONING_FILE && i <= CONDITIONING_VALUES_SVG) {
        write_conditioning(f, e->x.conditioning, i - CONDITIONING_FILE, compared);
        return true;
    }
    if (i >= NORMAL_CONDITIONING && i < MATRIX_FILE) {
        write_conditioning(f, e->x.other_init, (i - NORMAL_CONDITIONING) % 4, compared);
        return true;
    }
    switch (i) {
    case SWEEP_CSV:
        ExportCsv_width_sweep(f, r, e->x.sweep);
        break;
    case SWEEP_SVG:
        Svg_width_sweep(f, &r->config, e->x.sweep);
        break;
    case GRADIENT_CSV:
        ExportCsv_gradient(f, r);
        break;
    case GRADIENT_SVG:
        Svg_gradient(f, r);
        break;
    case SIMILARITY_CSV:
        ExportCsv_token_similarity(f, r);
        break;
    case SIMILARITY_SVG:
        Svg_token_similarity(f, r);
        break;
    case ROW_ENTROPIES_CSV:
        ExportCsv_row_entropies(f, r);
        break;
    case ROW_ENTROPIES_SVG:
        Svg_row_entropies(f, r);
        break;
    case WITHOUT_GAP_REMOVAL_CSV:
    case WITH_GAP_REMOVAL_CSV:
        ExportCsv_compare_eigenvalues(f, r, e->x.toggled, i == WITH_GAP_REMOVAL_CSV);
        break;
    case WITHOUT_GAP_REMOVAL_SVG:
    case WITH_GAP_REMOVAL_SVG:
        Svg_compare_eigenvalues(f, r, e->x.toggled, i == WITH_GAP_REMOVAL_SVG);
        break;
    case INPUT_FILE:
        return ExportCsv_input(f, r, e->x.input, e->stop);
    default: /* MATRIX_FILE, PRODUCT_FILE */
        return ExportCsv_matrix(f, r, i == PRODUCT_FILE, e->stop);
    }
    return true;
}

/* Whether file i is in the export e: every export's, and those of what its extras have. */
static bool wanted(const Exported *e, int i)
{
    const ExportExtras *x = &e->x;
    bool matrix = x->input != NULL;
    switch (i) {
    case SWEEP_CSV:
    case SWEEP_SVG:
        return x->sweep != NULL;
    case GRADIENT_CSV:
    case GRADIENT_SVG:
        return x->gradient;
    case SIMILARITY_CSV:
    case SIMILARITY_SVG:
        return x->similarity;
    case ROW_ENTROPIES_CSV:
    case ROW_ENTROPIES_SVG:
        return x->entropy;
    case CONDITIONING_FILE:
    case CONDITIONING_SVG:
    case CONDITIONING_VALUES_CSV:
    case CONDITIONING_VALUES_SVG:
        return x->conditioning != NULL;
    case WITHOUT_GAP_REMOVAL_CSV:
    case WITHOUT_GAP_REMOVAL_SVG:
    case WITH_GAP_REMOVAL_CSV:
    case WITH_GAP_REMOVAL_SVG:
        return x->toggled != NULL;
    case MATRIX_FILE:
    case INPUT_FILE:
        return matrix;
    case PRODUCT_FILE:
        return matrix && e->r->product_map.mean;
    default:
        if (i >= NORMAL_CONDITIONING && i < MATRIX_FILE)
            return other_init_files(x) == NORMAL_CONDITIONING + (i - NORMAL_CONDITIONING) / 4 * 4;
        return i < FILES;
    }
}

/* Writes file i into dir.  O_EXCL in a directory of our own: the kernel applies the umask
   to 0666, as for any file a program writes (mkstemp would give 0600).  0, -1 with err, or
   EXPORT_CANCELLED when the stop hook asked while a matrix was written (the file cut short,
   left for the caller to remove with the staging directory). */
static int write_file(const Exported *e, const char *dir, int i, char *err, size_t size)
{
    const Result *r = e->r;
    char path[PATH_SIZE + NAME_ROOM];
    snprintf(path, sizeof path, "%s/%s", dir, FILE_NAMES[i]);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(err, size, "cannot write %s: %s", FILE_NAMES[i], strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    errno = 0;
    bool whole = true;
    if (i < FILES)
        WRITERS[i](f, r);
    else
        whole = write_extra(f, e, i);
    if (!whole) { /* no fsync: the file is about to be removed */
        fclose(f);
        snprintf(err, size, "cancelled");
        return EXPORT_CANCELLED;
    }
    int failed = ferror(f) != 0;
    failed |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    int reason = errno;
    failed |= fclose(f) != 0;
    if (failed) {
        reason = reason ? reason : errno ? errno : EIO;
        snprintf(err, size, "writing %s failed: %s", FILE_NAMES[i], strerror(reason));
        return -1;
    }
    return 0;
}

/* Puts the directory fresh at target and target's at fresh, in one step where the file
   system can (RENAME_EXCHANGE).  Where it cannot (NFS, some FUSE), the old directory steps
   aside for the new one and comes back if that fails: target is then absent for a moment,
   but never holds a mixed set, and (on_signal) a signal that ends the process meanwhile puts
   the old one back. */
static int exchange(const char *fresh, const char *target, bool on_signal)
{
    if (renameat2(AT_FDCWD, fresh, AT_FDCWD, target, RENAME_EXCHANGE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
        return -1;
    char aside[PATH_SIZE];
    if (snprintf(aside, sizeof aside, "%s.old", fresh) >= (int)sizeof aside) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (on_signal && Staging_restore_on_signal(aside, target) != 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (rename(target, aside) != 0) {
        int saved = errno;
        if (on_signal) /* aside is not our old set: a signal must not put it at target */
            Staging_forget_aside();
        errno = saved;
        return -1;
    }
    if (rename(fresh, target) != 0) {
        int saved = errno;
        rename(aside, target);
        if (on_signal)
            Staging_forget_aside();
        errno = saved;
        return -1;
    }
    rename(aside, fresh); /* where the caller removes the old set */
    if (on_signal)
        Staging_forget_aside();
    return 0;
}

/* A directory that does not exist yet can be made: its nearest existing ancestor is a
   directory we may create entries in.  0 or -1 with err. */
static int check_creatable(const char *target, char *err, size_t size)
{
    char above[PATH_SIZE], below[PATH_SIZE];
    /* A name too long for any file system: lookups below a missing directory stop at it. */
    for (const char *name = target; *name;) {
        size_t n = strcspn(name, "/");
        if (n > NAME_MAX) {
            snprintf(err, size, "cannot create the directory %.*s: %s", (int)(name + n - target),
                     target, strerror(ENAMETOOLONG));
            return -1;
        }
        name += n + (name[n] == '/');
    }
    snprintf(above, sizeof above, "%s", target);
    if (Staging_dangling_link(target, true, err, size))
        return -1;
    struct stat st;
    for (;;) {
        memcpy(below, above, sizeof below);
        char *slash = strrchr(above, '/');
        if (!slash)
            snprintf(above, sizeof above, ".");
        else if (slash == above)
            above[1] = '\0';
        else
            *slash = '\0';
        if (stat(above, &st) == 0)
            break;
        if (Staging_dangling_link(above, false, err, size))
            return -1;
        if (errno != ENOENT) {
            snprintf(err, size, "cannot create the directory %s: %s", above, strerror(errno));
            return -1;
        }
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, size, "cannot create the directory %s: %s", below, strerror(ENOTDIR));
        return -1;
    }
    if (access(above, W_OK | X_OK) != 0) {
        snprintf(err, size, "cannot create the directory %s: %s", below, strerror(errno));
        return -1;
    }
    return 0;
}

/* Where an export to dir would go, and whether it can: dir named (not ., .., /), an existing
   one a directory we may write that holds only an earlier export's files (target is then
   its resolved path), a new one under a directory we may create it in.  0 or -1 with err. */
static int resolve_target(const char *dir, char target[PATH_SIZE], bool *exists, struct stat *old,
                          char *err, size_t size)
{
    char resolved[PATH_MAX];
    int n = snprintf(target, PATH_SIZE, "%s", dir);
    if (n <= 0 || n >= PATH_SIZE) {
        snprintf(err, size, "%s", n <= 0 ? "no directory named" : "the path is too long");
        return -1;
    }
    while (n > 1 && target[n - 1] == '/')
        target[--n] = '\0';
    const char *slash = strrchr(target, '/'), *base = slash ? slash + 1 : target;
    if (!base[0] || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        snprintf(err, size,
                 "name a directory (not ., .. or /): an export replaces its "
                 "directory as a whole");
        return -1;
    }
    *exists = stat(target, old) == 0;
    if (!*exists && errno != ENOENT && errno != ENOTDIR) { /* ENOTDIR: see make_parents */
        snprintf(err, size, "cannot reach it: %s", strerror(errno));
        return -1;
    }
    if (!*exists)
        return check_creatable(target, err, size);
    if (!S_ISDIR(old->st_mode)) {
        snprintf(err, size, "it exists and is not a directory");
        return -1;
    }
    /* A symbolic link stays; the directory it names is replaced. */
    if (!realpath(target, resolved)) {
        snprintf(err, size, "cannot resolve the path: %s", strerror(errno));
        return -1;
    }
    if (access(resolved, W_OK) != 0) {
        snprintf(err, size, "cannot write into the directory: %s", strerror(errno));
        return -1;
    }
    if (check_replaceable(resolved, err, size))
        return -1;
    snprintf(target, PATH_SIZE, "%s", resolved);
    return 0;
}

int Export_check(const char *dir, char *err, size_t size)
{
    char target[PATH_SIZE];
    bool exists;
    struct stat old;
    return resolve_target(dir, target, &exists, &old, err, size);
}

/* path as it will resolve once made: its longest existing head resolved (symbolic links, . and
   ..), the components below it read as written, as make_parents and mkdir would make them. */
static void resolved_once_made(const char *path, char out[PATH_SIZE])
{
    char head[PATH_SIZE], tail[PATH_SIZE] = "", resolved[PATH_MAX];
    snprintf(head, sizeof head, "%s", path);
    while (!realpath(head, resolved)) {
        if (strcmp(head, ".") == 0 || strcmp(head, "/") == 0) { /* a working directory gone */
            snprintf(resolved, sizeof resolved, "%s", head);
            break;
        }
        size_t n = strlen(head);
        while (n > 1 && head[n - 1] == '/')
            head[--n] = '\0';
        char *slash = strrchr(head, '/');
        const char *name = slash ? slash + 1 : head;
        size_t length = strlen(name), below = strlen(tail);
        if (length + 1 + below >= sizeof tail) { /* never: tail holds no more than path did */
            snprintf(resolved, sizeof resolved, "%s", path);
            tail[0] = '\0';
            break;
        }
        memmove(tail + length + 1, tail, below + 1); /* tail ← name/tail */
        memcpy(tail, name, length);
        tail[length] = '/';
        if (!slash)
            snprintf(head, sizeof head, ".");
        else
            slash[slash == head] = '\0'; /* "/name": the root stays */
    }
    snprintf(out, PATH_SIZE, "%s", resolved);
    char *rest;
    for (char *name = strtok_r(tail, "/", &rest); name; name = strtok_r(NULL, "/", &rest)) {
        size_t n = strlen(out);
        if (strcmp(name, "..") == 0) {
            char *last = strrchr(out, '/');
            if (last)
                last[last == out] = '\0';
        } else if (strcmp(name, ".") != 0 && n + 1 + strlen(name) < PATH_SIZE)
            snprintf(out + n, PATH_SIZE - n, "%s%s", out[n - 1] == '/' ? "" : "/", name);
    }
}

bool Export_holds(const char *dir, const char *path)
{
    char target[PATH_SIZE], inner[PATH_SIZE];
    resolved_once_made(dir, target);
    resolved_once_made(path, inner);
    size_t n = strlen(target);
    return strncmp(target, inner, n) == 0 &&
           (inner[n] == '\0' || inner[n] == '/' || (n == 1 && target[0] == '/'));
}

/* Export_write_stoppable; on_signal: the staging directory is removed if SIGINT, SIGTERM or
   SIGHUP ends the process meanwhile (staging.h: batch's, not the screen's, which quits by its
   own handlers and cancels the export). */
static int write_export(const Result *r, const ExportExtras *extras, const char *dir,
                        LinalgStop stop, bool on_signal, char *err, size_t size)
{
    Exported e = {r, extras ? *extras : (ExportExtras){0}, stop};
    bool matrix = e.x.input != NULL;
    char target[PATH_SIZE], staging[PATH_SIZE];
    bool exists;
    struct stat old;
    if (resolve_target(dir, target, &exists, &old, err, size))
        return -1;
    Parents made = {0};
    if (!exists && make_parents(target, &made, err, size))
        return -1;
    if (on_signal && Staging_remove_parents_on_signal(target, made.length, made.count) != 0) {
        snprintf(err, size, "the path is too long"); /* never: resolve_target bounds it */
        remove_parents(target, &made);
        return -1;
    }

    /* The new set goes into a fresh directory beside the target, which one rename then puts
       in its place: the target holds the whole old set or the whole new set at every moment,
       and whatever fails before that rename leaves it as it was. */
    char parent[PATH_SIZE] = ".";
    const char *slash = strrchr(target, '/');
    if (slash)
        snprintf(parent, sizeof parent, "%.*s", slash == target ? 1 : (int)(slash - target),
                 target);
    const char *base = slash ? slash + 1 : target;
    remove_abandoned_staging(parent, base);
    if (make_staging(parent, base, staging, err, size)) {
        if (on_signal)
            Staging_forget();
        remove_parents(target, &made);
        return -1;
    }
    int status = 0;
    if (on_signal && Staging_remove_tree_on_signal(staging, FILE_NAMES, NAMES) != 0) {
        snprintf(err, size, "the path is too long"); /* never: make_staging leaves room */
        status = -1;
    }
    if (exists && chmod(staging, old.st_mode & 07777) != 0) {
        snprintf(err, size, "cannot give the new directory the old one's mode: %s",
                 strerror(errno));
        status = -1;
    }
    if (status == 0 && matrix && !full_map(&r->attention_map)) {
        snprintf(err, size, "no attention matrix to export in full: %s",
                 r->attention_map.mean ? "the result keeps block means of it only"
                                       : "the shown layer has no finite attention matrix");
        status = -1;
    }
    int files = 0;
    for (int i = 0; i <= NAMES && status == 0; i++) {
        /* Before each file, and once more before the set is put in place. */
        if (i < NAMES && !wanted(&e, i))
            continue;
        if (Export_stop_requested(stop)) {
            snprintf(err, size, "cancelled");
            status = EXPORT_CANCELLED;
        } else if (i < NAMES && (status = write_file(&e, staging, i, err, size)) == 0)
            files++;
    }
    if (status == 0 &&
        (exists ? exchange(staging, target, on_signal) : rename(staging, target)) != 0) {
        if (!exists && (errno == ENOTEMPTY || errno == EEXIST)) /* rename keeps a full one */
            snprintf(err, size,
                     "the directory appeared while the files were written (another export into "
                     "it?): left as it is, the new files not put there");
        else
            snprintf(err, size, "cannot put the new files in place: %s", strerror(errno));
        status = -1;
    }
    /* After the exchange the staging name holds the old set. */
    remove_export(staging);
    if (on_signal)
        Staging_forget();
    if (status != 0)
        remove_parents(target, &made);
    return status == 0 ? files : status == EXPORT_CANCELLED ? EXPORT_CANCELLED : -1;
}

int Export_write(const Result *r, const ExportExtras *extras, const char *dir, char *err,
                 size_t size)
{
    return write_export(r, extras, dir, (LinalgStop){0}, true, err, size);
}

int Export_write_stoppable(const Result *r, const ExportExtras *extras, const char *dir,
                           LinalgStop stop, char *err, size_t size)
{
    return write_export(r, extras, dir, stop, false, err, size);
}
