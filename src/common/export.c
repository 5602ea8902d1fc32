/* renameat2 and RENAME_EXCHANGE (Linux, glibc 2.28). */
#define _GNU_SOURCE
#include "export.h"

#include "attnscope/format.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/random.h"
#include "figure.h"
#include "staging.h"
#include "svg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* NAME_ROOM: what a file's name adds to its directory's path. */
enum { FILES = 8, PATH_SIZE = 4096, NAME_ROOM = 32 };

/* The files of every export, then conditioning.csv (CONDITIONING_FILE), written when there is a
   conditioning result, and the attention matrix, product and input in full, when asked (the
   product where the result has it). */
enum { CONDITIONING_FILE = FILES, MATRIX_FILE, PRODUCT_FILE, INPUT_FILE, NAMES };
static const char *const FILE_NAMES[NAMES] = {
    "eigenvalues.csv",      "singular_values.csv",   "layers.csv",
    "eigenvalues.svg",      "singular_values.svg",   "stable_rank.svg",
    "attention_map.svg",    "entropy.svg",           "conditioning.csv",
    "attention_matrix.csv", "attention_product.csv", "input.csv"};

/* The shown layer's spectra, NULL until its layer is done (the files then have no rows). */
static const Complex *shown_eigenvalues(const Result *r)
{
    return r->spectra_ready ? r->eigenvalues : NULL;
}

static const double *shown_singular_values(const Result *r)
{
    return r->spectra_ready ? r->singular_values : NULL;
}

const char *Export_default_directory(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(buf, size, "attnscope-%Y%m%d-%H%M%S", &tm);
    return buf;
}

/* A number for CSV: shortest round-trip form, an empty field when undefined. */
static void csv_number(FILE *f, double x)
{
    char buf[FORMAT_NUMBER_SIZE];
    fputs(Format_shortest(x, buf), f);
}

enum { SETTINGS_SIZE = 1024 };

/* Two comment lines that make a CSV file stand alone: the version and what the file holds,
   then the settings, with the checkpoint and the token-id file, which no setting holds, so
   that the line runs the file's run again. */
static void csv_header(FILE *f, const Config *c, const char *what)
{
    char settings[SETTINGS_SIZE];
    Figure_settings(c, settings, sizeof settings);
    const WeightSource *weights = Layer_weights_in_use();
    const char *ids = Layer_token_ids_name();
    fprintf(f, "# attnscope %s, %s\n# %s%s%s%s%s\n", ATTNSCOPE_VERSION, what, settings,
            weights ? " --weights " : "", weights ? weights->name : "", ids ? " --token-ids " : "",
            ids ? ids : "");
}

static void write_eigenvalues_csv(FILE *f, const Result *r)
{
    const Complex *eigenvalues = shown_eigenvalues(r);
    int T = r->config.tokens;
    double root_t = sqrt((double)T);
    csv_header(f, &r->config,
               "eigenvalues.csv: the eigenvalues of the shown layer's attention matrix");
    fputs("index,re,im,modulus,sqrtT_re,sqrtT_im\n", f);
    for (int i = 0; eigenvalues && i < T; i++) {
        const Complex *z = &eigenvalues[i];
        fprintf(f, "%d,", i + 1);
        csv_number(f, z->re);
        fputc(',', f);
        csv_number(f, z->im);
        fputc(',', f);
        csv_number(f, hypot(z->re, z->im));
        fputc(',', f);
        csv_number(f, root_t * z->re);
        fputc(',', f);
        csv_number(f, root_t * z->im);
        fputc('\n', f);
    }
}

static void write_singular_values_csv(FILE *f, const Result *r)
{
    const double *singular_values = shown_singular_values(r);
    int T = r->config.tokens;
    csv_header(f, &r->config,
               "singular_values.csv: the singular values of the shown layer's attention matrix");
    fputs("index,singular_value,sqrtT_singular_value\n", f);
    for (int i = 0; singular_values && i < T; i++) {
        fprintf(f, "%d,", i + 1);
        csv_number(f, singular_values[i]);
        fputc(',', f);
        csv_number(f, sqrt((double)T) * singular_values[i]);
        fputc('\n', f);
    }
}

void Export_layers_csv(FILE *f, const Result *r)
{
    const Config *c = &r->config;
    csv_header(f, &r->config, "layers.csv: one row per layer, every per-layer series");
    fputs("layer", f);
    for (int i = 0; i < RESULT_SERIES_COUNT; i++)
        fprintf(f, ",%s", RESULT_SERIES[i].name);
    fputs(",mask\n", f);
    for (int l = 0; l <= c->depth; l++) {
        fprintf(f, "%d", l);
        for (int i = 0; i < RESULT_SERIES_COUNT; i++) {
            fputc(',', f);
            if (l > 0 || !RESULT_SERIES[i].from_layer_one)
                csv_number(f, RESULT_SERIES[i].values(r)[l]);
        }
        /* The layer's own mask (--window-layers); the input, layer 0, has no attention. */
        fprintf(f, ",%s\n", l > 0 ? MASK_NAMES.names[Config_layer_mask(c, l)] : "");
    }
}

void Export_conditioning_csv(FILE *f, const Conditioning *k)
{
    csv_header(f, &k->config,
               k->jacobian_exact ? "conditioning.csv: one row per layer, the network's series and "
                                   "the counterpart's (docs/model.md section 8); jacobian_exact = "
                                   "true"
                                 : "conditioning.csv: one row per layer, the network's series and "
                                   "the counterpart's (docs/model.md section 8); jacobian_exact = "
                                   "false");
    fputs("layer", f);
    for (int n = 0; n < 2; n++)
        for (int i = 0; i < CONDITIONING_SERIES_COUNT; i++)
            fprintf(f, ",%s%s", n ? "counterpart_" : "", CONDITIONING_SERIES[i].name);
    fputc('\n', f);
    for (int l = 1; l <= k->config.depth; l++) {
        fprintf(f, "%d", l);
        for (int n = 0; n < 2; n++)
            for (int i = 0; i < CONDITIONING_SERIES_COUNT; i++) {
                fputc(',', f);
                csv_number(f, ConditioningSeries_values(&CONDITIONING_SERIES[i],
                                                        n ? &k->counterpart : &k->network)[l]);
            }
        fputc('\n', f);
    }
}

static bool stop_requested(LinalgStop stop)
{
    return stop.requested && stop.requested(stop.context);
}

/* A matrix as CSV rows: row i (labelled i + 1 under row_label) holds its `columns` entries
   (headed column_label_1 …), entry (i, j) at data[i·row_stride + j·column_stride].  Polls
   stop before each row (T numbers: ~1.7 ms of a core at T = 2048, where the whole file takes
   seconds) and returns false when it asked, the file then cut short. */
static bool write_rows_csv(FILE *f, const char *row_label, const char *column_label, int rows,
                           int columns, const double *data, size_t row_stride, size_t column_stride,
                           LinalgStop stop)
{
    fputs(row_label, f);
    for (int j = 1; j <= columns; j++)
        fprintf(f, ",%s_%d", column_label, j);
    fputc('\n', f);
    for (int i = 0; i < rows; i++) {
        if (stop_requested(stop))
            return false;
        fprintf(f, "%d", i + 1);
        for (int j = 0; j < columns; j++) {
            fputc(',', f);
            csv_number(f, data[i * row_stride + j * column_stride]);
        }
        fputc('\n', f);
    }
    return true;
}

/* A T×T matrix kept in full (a map at block 1): a row per query i, its T keys' entries, the
   shown layer's A or (product) the product of the shown head's matrices.  False: stopped. */
static bool write_matrix_csv(FILE *f, const Result *r, bool product, LinalgStop stop)
{
    const AttentionMap *m = product ? &r->product_map : &r->attention_map;
    csv_header(f, &r->config,
               product ? "attention_product.csv: the product A_l...A_1 of the shown head's "
                         "attention matrices up to the shown layer"
                       : "attention_matrix.csv: the shown layer's attention matrix A as built "
                         "(row i: query i's weights on the keys)");
    return write_rows_csv(f, "query", "key", m->tokens, m->tokens, m->mean, (size_t)m->tokens, 1,
                          stop);
}

enum { WHAT_SIZE = 1024 };

/* What input.csv holds, as the run made X0: the rows of a checkpoint's table for the ids
   (Layer_input_source, for the one seed the file draws), or rows drawn from the seed. */
static void input_what(const Config *c, char *buf, size_t size)
{
    Config first_seed = *c;
    first_seed.seeds = 1; /* Layer_input draws X0 for c->seed alone */
    char source[512];
    const char *head = "input.csv: the network's input X0 (row i: token i's d entries)";
    if (Layer_input_source(&first_seed, source, sizeof source))
        snprintf(buf, size, "%s, the rows for %s", head, source);
    else if (c->input == INPUT_EMBEDDING)
        snprintf(buf, size, "%s, the rows of a table drawn from the seed for ids drawn from it",
                 head);
    else
        snprintf(buf, size, "%s, orthonormal rows drawn from the seed", head);
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

/* The network's input X0 of the result's run (input, T×d: Export_input), so that another
   program can run the same forward.  False: stopped. */
static bool write_input_csv(FILE *f, const Result *r, const double *input, LinalgStop stop)
{
    const Config *c = &r->config;
    char what[WHAT_SIZE];
    input_what(c, what, sizeof what);
    csv_header(f, c, what);
    return write_rows_csv(f, "token", "x", c->tokens, c->width, input, 1, (size_t)c->tokens, stop);
}

typedef void (*Writer)(FILE *f, const Result *r);

/* The files of every export, each a few ms at T = 2048; conditioning.csv and the matrices in
   full are written by write_file itself (the matrices row by row, polling the stop). */
static const Writer WRITERS[FILES] = {
    write_eigenvalues_csv, write_singular_values_csv, Export_layers_csv, Svg_eigenvalues,
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
    const Conditioning *conditioning;
    const double *input;
    LinalgStop stop;
} Exported;

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
    if (i == CONDITIONING_FILE)
        Export_conditioning_csv(f, e->conditioning);
    else if (i == INPUT_FILE)
        whole = write_input_csv(f, r, e->input, e->stop);
    else if (i == MATRIX_FILE || i == PRODUCT_FILE)
        whole = write_matrix_csv(f, r, i == PRODUCT_FILE, e->stop);
    else
        WRITERS[i](f, r);
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
   but never holds a mixed set. */
static int exchange(const char *fresh, const char *target)
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
    if (rename(target, aside) != 0)
        return -1;
    if (rename(fresh, target) != 0) {
        int saved = errno;
        rename(aside, target);
        errno = saved;
        return -1;
    }
    rename(aside, fresh); /* where the caller removes the old set */
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

int Export_write(const Result *r, const Conditioning *conditioning, const double *input,
                 const char *dir, char *err, size_t size)
{
    return Export_write_stoppable(r, conditioning, input, dir, (LinalgStop){0}, err, size);
}

int Export_write_stoppable(const Result *r, const Conditioning *conditioning, const double *input,
                           const char *dir, LinalgStop stop, char *err, size_t size)
{
    bool matrix = input != NULL;
    char target[PATH_SIZE], staging[PATH_SIZE];
    bool exists;
    struct stat old;
    if (resolve_target(dir, target, &exists, &old, err, size))
        return -1;
    Parents made = {0};
    if (!exists && make_parents(target, &made, err, size))
        return -1;

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
        remove_parents(target, &made);
        return -1;
    }
    int status = 0;
    if (exists && chmod(staging, old.st_mode & 07777) != 0) {
        snprintf(err, size, "cannot give the new directory the old one's mode: %s",
                 strerror(errno));
        status = -1;
    }
    bool wanted[NAMES] = {[CONDITIONING_FILE] = conditioning != NULL,
                          [MATRIX_FILE] = matrix,
                          [PRODUCT_FILE] = matrix && r->product_map.mean,
                          [INPUT_FILE] = matrix};
    for (int i = 0; i < FILES; i++)
        wanted[i] = true;
    if (status == 0 && matrix && !full_map(&r->attention_map)) {
        snprintf(err, size, "no attention matrix to export in full: %s",
                 r->attention_map.mean ? "the result keeps block means of it only"
                                       : "the shown layer has no finite attention matrix");
        status = -1;
    }
    Exported e = {r, conditioning, input, stop};
    int files = 0;
    for (int i = 0; i <= NAMES && status == 0; i++) {
        /* Between files, and once more before the set is put in place. */
        if (stop_requested(stop)) {
            snprintf(err, size, "cancelled");
            status = EXPORT_CANCELLED;
        } else if (i < NAMES && wanted[i] && (status = write_file(&e, staging, i, err, size)) == 0)
            files++;
    }
    if (status == 0 && (exists ? exchange(staging, target) : rename(staging, target)) != 0) {
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
    if (status != 0)
        remove_parents(target, &made);
    return status == 0 ? files : status == EXPORT_CANCELLED ? EXPORT_CANCELLED : -1;
}
