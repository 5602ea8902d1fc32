/* The screen's export on its own thread (src/tui/export_job.c), held at a known point by a
 * gated writer: while it writes, the job says so and refuses a second export, its end is
 * signalled only once it is written, and what it writes is the snapshot it was given even
 * after the screen has let that snapshot go for a newer one.  And cancelled, held inside the
 * attention matrix's rows (at a poll of its stop hook): it stops at the next poll, removes its
 * staging directory and leaves the directory's earlier export as it was; freeing the job
 * cancels it so.  No timing: the gate decides.
 */
#include "attnscope/model.h"
#include "export.h"
#include "export_job.h"
#include "snapshot.h"
#include "testing.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The gate the writer waits at, and what it saw. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool entered, open;
    int fail; /* the writer fails as a late failure does, without writing */
} gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false, 0};

static void gate_reset(void)
{
    pthread_mutex_lock(&gate.lock);
    gate.entered = gate.open = false;
    gate.fail = 0;
    pthread_mutex_unlock(&gate.lock);
}

static int gated_writer(const Result *r, const ExportExtras *extras, const char *dir,
                        LinalgStop stop, char *err, size_t size)
{
    pthread_mutex_lock(&gate.lock);
    gate.entered = true;
    pthread_cond_broadcast(&gate.changed);
    while (!gate.open)
        pthread_cond_wait(&gate.changed, &gate.lock);
    int fail = gate.fail;
    pthread_mutex_unlock(&gate.lock);
    if (fail) {
        snprintf(err, size, "the disk is full (a test's writer)");
        return -1;
    }
    return Export_write_stoppable(r, extras, dir, stop, err, size);
}

/* A writer held at its stop hook's hold_at-th poll, until the test opens the gate or the job
   asks it to stop; it counts the polls that follow the job's asking. */
static struct {
    int hold_at, polls, polls_after_cancel;
    LinalgStop job;
} held;

static bool holding_stop(void *context)
{
    (void)context;
    if (++held.polls == held.hold_at) {
        pthread_mutex_lock(&gate.lock);
        gate.entered = true;
        pthread_cond_broadcast(&gate.changed);
        /* ExportJob_cancel sets an atomic, not the gate: poll it (the wait's length decides
           nothing the test checks). */
        while (!gate.open && !held.job.requested(held.job.context)) {
            pthread_mutex_unlock(&gate.lock);
            usleep(1000);
            pthread_mutex_lock(&gate.lock);
        }
        pthread_mutex_unlock(&gate.lock);
    }
    bool cancel = held.job.requested(held.job.context);
    held.polls_after_cancel += cancel;
    return cancel;
}

static bool never(void *context)
{
    (void)context;
    return false;
}

static int holding_writer(const Result *r, const ExportExtras *extras, const char *dir,
                          LinalgStop stop, char *err, size_t size)
{
    held.job = stop;
    held.polls = held.polls_after_cancel = 0;
    return Export_write_stoppable(r, extras, dir, (LinalgStop){.requested = holding_stop}, err,
                                  size);
}

static void gate_wait_entered(void)
{
    pthread_mutex_lock(&gate.lock);
    while (!gate.entered)
        pthread_cond_wait(&gate.changed, &gate.lock);
    pthread_mutex_unlock(&gate.lock);
}

static void gate_open(void)
{
    pthread_mutex_lock(&gate.lock);
    gate.open = true;
    pthread_cond_broadcast(&gate.changed);
    pthread_mutex_unlock(&gate.lock);
}

static bool readable(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

/* full_maps: the attention matrix kept whole, as --export-matrix keeps it. */
static Result *run_kept(unsigned long seed, bool full_maps)
{
    Config c = Config_default();
    c.tokens = c.width = 16;
    c.depth = 2;
    c.seed = seed;
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    char err[256];
    Workspace_full_attention_maps(w, full_maps);
    if (Model_run(&c, w, r, NULL, err, sizeof err) != 0)
        fail_msg("the run failed: %s", err);
    Workspace_free(w);
    return r;
}

static Snapshot *done_snapshot(const Result *r, unsigned long generation)
{
    Snapshot *s = Snapshot_of(r, generation);
    assert_non_null(s);
    s->done = true;
    return s;
}

/* The whole of a file, or NULL. */
static char *slurp(const char *path, long *length)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *length = ftell(f);
    rewind(f);
    char *text = malloc((size_t)*length + 1);
    if (text && fread(text, 1, (size_t)*length, f) != (size_t)*length) {
        free(text);
        text = NULL;
    }
    fclose(f);
    return text;
}

static bool same_file(const char *a, const char *b)
{
    long na = -1, nb = -2;
    char *ta = slurp(a, &na), *tb = slurp(b, &nb);
    bool same = ta && tb && na == nb && memcmp(ta, tb, (size_t)na) == 0;
    free(ta);
    free(tb);
    return same;
}

static char root[] = "/tmp/attnscope-export-job-XXXXXX";

static void path_in(char *buf, size_t size, const char *dir, const char *file)
{
    snprintf(buf, size, "%s/%s%s%s", root, dir, file ? "/" : "", file ? file : "");
}

static void test_writes_the_held_snapshot_while_the_screen_moves_on(void **state)
{
    (void)state;
    gate_reset();
    Result *asked = run_kept(1, false), *newer = run_kept(2, false);
    char dir[512], reference[512], err[EXPORT_JOB_ERROR_SIZE], note[1024];
    path_in(dir, sizeof dir, "screen", NULL);
    path_in(reference, sizeof reference, "reference", NULL);
    /* The reference: the result asked for, written directly. */
    assert_int_equal(Export_write(asked, NULL, reference, err, sizeof err), 8);

    ExportJob *j = ExportJob_new(gated_writer);
    assert_non_null(j);
    Snapshot *shown = done_snapshot(asked, 1);
    assert_true(ExportJob_start(j, shown, PANEL_STABLE_RANK, false, false, dir, err, sizeof err));
    gate_wait_entered();
    /* Held inside the writer: the job says it writes, and its end is not signalled. */
    assert_true(ExportJob_running(j));
    assert_false(readable(ExportJob_fd(j), 0));
    ExportOutcome o = {.files = 12345};
    assert_false(ExportJob_collect(j, &o));
    assert_int_equal(o.files, 12345);
    ExportJob_writing_note(j, 1.25, note, sizeof note);
    char expected[1024];
    snprintf(expected, sizeof expected, "writing the export to %s/, 1.2 s (Esc cancels)", dir);
    assert_string_equal(note, expected);
    /* A second export is refused, saying why, and changes nothing. */
    assert_false(
        ExportJob_start(j, shown, PANEL_STABLE_RANK, false, false, reference, err, sizeof err));
    assert_string_equal(err, EXPORT_JOB_STILL_WRITING);
    /* The screen takes a newer snapshot and lets the one it showed go. */
    Snapshot_free(shown);
    Snapshot *next = done_snapshot(newer, 2);
    struct stat st;
    assert_int_equal(stat(dir, &st), -1);

    gate_open();
    assert_true(readable(ExportJob_fd(j), -1));
    assert_true(ExportJob_collect(j, &o));
    assert_false(ExportJob_running(j));
    assert_int_equal(o.files, 8);
    ExportJob_outcome_note(&o, note, sizeof note);
    snprintf(expected, sizeof expected, "exported 8 files to %s/", dir);
    assert_string_equal(note, expected);
    const char *files[] = {"layers.csv", "eigenvalues.csv", "singular_values.csv",
                           "stable_rank.svg"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char a[600], b[600];
        path_in(a, sizeof a, "screen", files[i]);
        path_in(b, sizeof b, "reference", files[i]);
        if (!same_file(a, b))
            fail_msg("%s is not the asked-for result's", files[i]);
    }
    /* And not the newer one's (the test would not see a mix-up otherwise). */
    char newer_dir[512], a[600], b[600];
    path_in(newer_dir, sizeof newer_dir, "newer", NULL);
    assert_int_equal(Export_write(newer, NULL, newer_dir, err, sizeof err), 8);
    path_in(a, sizeof a, "screen", "eigenvalues.csv");
    path_in(b, sizeof b, "newer", "eigenvalues.csv");
    assert_false(same_file(a, b));
    /* Collected once: nothing more to collect. */
    assert_false(ExportJob_collect(j, &o));
    ExportJob_free(j);
    Snapshot_free(next);
    Result_free(asked);
    Result_free(newer);
}

static void test_quick_refusals_start_nothing(void **state)
{
    (void)state;
    gate_reset();
    gate_open();
    Result *r = run_kept(3, false);
    Snapshot *s = done_snapshot(r, 1);
    ExportJob *j = ExportJob_new(gated_writer);
    char err[EXPORT_JOB_ERROR_SIZE], file[512], under[600];
    /* --export-matrix without the worker's X0. */
    path_in(file, sizeof file, "no-input", NULL);
    assert_false(ExportJob_start(j, s, PANEL_STABLE_RANK, false, true, file, err, sizeof err));
    assert_string_equal(err, "export failed: writing input.csv failed: the job made no X0");
    /* A directory below a regular file: Export_check refuses it at once. */
    path_in(file, sizeof file, "a-file", NULL);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(under, sizeof under, "%s/below", file);
    assert_false(ExportJob_start(j, s, PANEL_STABLE_RANK, false, false, under, err, sizeof err));
    if (strncmp(err, "export failed: cannot create the directory", 42) != 0)
        fail_msg("the reason is \"%s\"", err);
    assert_false(ExportJob_running(j));
    assert_false(gate.entered);
    assert_false(readable(ExportJob_fd(j), 0));
    ExportJob_free(j);
    Snapshot_free(s);
    Result_free(r);
}

static void test_a_late_failure_is_said(void **state)
{
    (void)state;
    gate_reset();
    gate.fail = 1;
    Result *r = run_kept(4, false);
    Snapshot *s = done_snapshot(r, 1);
    ExportJob *j = ExportJob_new(gated_writer);
    char err[EXPORT_JOB_ERROR_SIZE], dir[512], note[1024];
    path_in(dir, sizeof dir, "late", NULL);
    assert_true(ExportJob_start(j, s, PANEL_STABLE_RANK, false, false, dir, err, sizeof err));
    gate_open();
    assert_true(readable(ExportJob_fd(j), -1));
    ExportOutcome o;
    assert_true(ExportJob_collect(j, &o));
    assert_int_equal(o.files, -1);
    ExportJob_outcome_note(&o, note, sizeof note);
    assert_string_equal(note, "export failed: the disk is full (a test's writer)");
    ExportJob_free(j);
    Snapshot_free(s);
    Result_free(r);
}

/* The name of an entry of root (. and .. aside) that starts with prefix, into out; false
   when none. */
static bool entry_of_root(const char *prefix, char *out, size_t size)
{
    DIR *d = opendir(root);
    assert_non_null(d);
    struct dirent *e;
    bool found = false;
    while (!found && (e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            snprintf(out, size, "%s", e->d_name);
            found = true;
        }
    closedir(d);
    return found;
}

/* Until the holding writer is held (true) or the export has ended without reaching its hold
   (false: a writer that never polls there would otherwise leave the test waiting). */
static bool held_or_ended(const ExportJob *j)
{
    for (;;) {
        pthread_mutex_lock(&gate.lock);
        bool entered = gate.entered;
        pthread_mutex_unlock(&gate.lock);
        if (entered)
            return true;
        if (readable(ExportJob_fd(j), 10))
            return false;
    }
}

/* Freeing the job while it writes (the screen's loop broke off) cancels it and waits for it
   to end: nothing is left, neither the directory nor its staging. */
static void test_free_cancels_the_export(void **state)
{
    (void)state;
    gate_reset();
    held.hold_at = 3; /* before the third of the eight files */
    Result *r = run_kept(5, false);
    Snapshot *s = done_snapshot(r, 1);
    ExportJob *j = ExportJob_new(holding_writer);
    char err[EXPORT_JOB_ERROR_SIZE], dir[512], name[300];
    path_in(dir, sizeof dir, "freed", NULL);
    assert_true(ExportJob_start(j, s, PANEL_STABLE_RANK, false, false, dir, err, sizeof err));
    Snapshot_free(s);
    assert_true(held_or_ended(j));
    assert_true(entry_of_root(".freed.export-", name, sizeof name));
    ExportJob_free(j);
    assert_int_equal(held.polls_after_cancel, 1);
    struct stat st;
    assert_int_equal(stat(dir, &st), -1);
    assert_false(entry_of_root(".", name, sizeof name));
    Result_free(r);
}

enum { KEPT_FILES = 8 };
static const char *const KEPT[KEPT_FILES] = {
    "eigenvalues.csv",     "singular_values.csv", "layers.csv",        "eigenvalues.svg",
    "singular_values.svg", "stable_rank.svg",     "attention_map.svg", "entropy.svg"};

/* The stop is polled before each file, before each row of the matrices in
   full (the product's too where the result has it, T rows each), and before the set is put in
   place: a cancel waits at most one row. */
static void test_the_matrices_poll_every_row(void **state)
{
    (void)state;
    gate_reset();
    gate_open();
    held.hold_at = 0;
    Result *r = run_kept(8, true);
    char err[EXPORT_JOB_ERROR_SIZE], dir[512];
    double *input = Export_input(&r->config, NULL, err, sizeof err);
    assert_non_null(input);
    path_in(dir, sizeof dir, "every-row", NULL);
    int files = holding_writer(r, &(ExportExtras){.input = input}, dir,
                               (LinalgStop){.requested = never}, err, sizeof err);
    bool product = r->product_map.mean != NULL;
    assert_int_equal(files, 10 + product);
    int T = r->config.tokens;
    /* Before each file, once more before the set is put in place, and before each row. */
    assert_int_equal(held.polls, files + 1 + (2 + product) * T);
    assert_int_equal(held.polls_after_cancel, 0);
    free(input);
    Result_free(r);
}

/* Cancelled inside attention_matrix.csv's rows, over an earlier export: the writer stops at
   its next poll, and the directory holds the earlier set, byte for byte, with no staging
   directory beside it. */
static void test_cancel_inside_the_matrix_leaves_the_earlier_set(void **state)
{
    (void)state;
    gate_reset();
    /* Polls: one before each file written (the 9th before attention_matrix.csv, after the
       eight of every export), then one before each of its rows: the 11th is before its second
       row. */
    held.hold_at = 11;
    Result *earlier = run_kept(6, false), *r = run_kept(7, true);
    char err[EXPORT_JOB_ERROR_SIZE], dir[512], path[600], name[300], note[1024], expected[1024];
    path_in(dir, sizeof dir, "kept", NULL);
    assert_int_equal(Export_write(earlier, NULL, dir, err, sizeof err), KEPT_FILES);
    char *before[KEPT_FILES];
    long length[KEPT_FILES];
    for (int i = 0; i < KEPT_FILES; i++) {
        path_in(path, sizeof path, "kept", KEPT[i]);
        assert_non_null(before[i] = slurp(path, &length[i]));
    }
    double *input = Export_input(&r->config, NULL, err, sizeof err);
    assert_non_null(input);
    Snapshot *s = done_snapshot(r, 1);
    assert_true(Snapshot_attach_input(s, input));
    ExportJob *j = ExportJob_new(holding_writer);
    assert_true(ExportJob_start(j, s, PANEL_STABLE_RANK, false, true, dir, err, sizeof err));
    assert_true(held_or_ended(j));
    /* Held where it was asked: attention_matrix.csv open in the staging directory. */
    assert_true(entry_of_root(".kept.export-", name, sizeof name));
    snprintf(path, sizeof path, "%s/%s/attention_matrix.csv", root, name);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_false(ExportJob_cancelling(j));
    assert_true(ExportJob_cancel(j));
    assert_false(ExportJob_cancel(j)); /* asked once */
    assert_true(ExportJob_cancelling(j));
    ExportJob_writing_note(j, 2.0, note, sizeof note);
    snprintf(expected, sizeof expected, "cancelling the export to %s/, 2.0 s", dir);
    assert_string_equal(note, expected);

    assert_true(readable(ExportJob_fd(j), -1));
    ExportOutcome o;
    assert_true(ExportJob_collect(j, &o));
    assert_int_equal(o.files, EXPORT_CANCELLED);
    assert_int_equal(held.polls_after_cancel, 1); /* no row after the one it was held at */
    ExportJob_outcome_note(&o, note, sizeof note);
    snprintf(expected, sizeof expected, "export cancelled: %s/ left as it was", dir);
    assert_string_equal(note, expected);
    assert_false(entry_of_root(".", name, sizeof name));
    DIR *d = opendir(dir);
    assert_non_null(d);
    int entries = 0;
    for (struct dirent *e; (e = readdir(d));)
        entries += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(entries, KEPT_FILES);
    for (int i = 0; i < KEPT_FILES; i++) {
        long now_length = -1;
        path_in(path, sizeof path, "kept", KEPT[i]);
        char *now = slurp(path, &now_length);
        if (!now || now_length != length[i] || memcmp(now, before[i], (size_t)length[i]) != 0)
            fail_msg("%s is not the earlier export's", KEPT[i]);
        free(now);
        free(before[i]);
    }
    ExportJob_free(j);
    Snapshot_free(s);
    free(input);
    Result_free(earlier);
    Result_free(r);
}

int main(void)
{
    if (!mkdtemp(root)) {
        fprintf(stderr, "test_export_job: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_the_held_snapshot_while_the_screen_moves_on),
        cmocka_unit_test(test_quick_refusals_start_nothing),
        cmocka_unit_test(test_a_late_failure_is_said),
        cmocka_unit_test(test_free_cancels_the_export),
        cmocka_unit_test(test_the_matrices_poll_every_row),
        cmocka_unit_test(test_cancel_inside_the_matrix_leaves_the_earlier_set),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", root);
    if (system(command) != 0)
        fprintf(stderr, "test_export_job: could not remove %s\n", root);
    return failed;
}
