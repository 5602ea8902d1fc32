/* The screen's export on its own thread (src/tui/export_job.c), held at a known point by a
 * gated writer: while it writes, the job says so and refuses a second export, its end is
 * signalled only once it is written, and what it writes is the snapshot it was given even
 * after the screen has let that snapshot go for a newer one.  No timing: the gate decides.
 */
#include "attnscope/model.h"
#include "export.h"
#include "export_job.h"
#include "snapshot.h"
#include "testing.h"

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

static int gated_writer(const Result *r, const Conditioning *k, const double *input,
                        const char *dir, char *err, size_t size)
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
    return Export_write(r, k, input, dir, err, size);
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

static Result *run_seed(unsigned long seed)
{
    Config c = Config_default();
    c.tokens = c.width = 16;
    c.depth = 2;
    c.seed = seed;
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    char err[256];
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

/* A job with the gated writer (the gate reset, closed) and what it exports from: the run of
   the seed and its finished snapshot. */
static ExportJob *gated_job(unsigned long seed, Result **r, Snapshot **s)
{
    gate_reset();
    *r = run_seed(seed);
    *s = done_snapshot(*r, 1);
    ExportJob *j = ExportJob_new(gated_writer);
    assert_non_null(j);
    return j;
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
    Result *asked = run_seed(1), *newer = run_seed(2);
    char dir[512], reference[512], err[EXPORT_JOB_ERROR_SIZE], note[1024];
    path_in(dir, sizeof dir, "screen", NULL);
    path_in(reference, sizeof reference, "reference", NULL);
    /* The reference: the result asked for, written directly. */
    assert_int_equal(Export_write(asked, NULL, NULL, reference, err, sizeof err), 8);

    ExportJob *j = ExportJob_new(gated_writer);
    assert_non_null(j);
    Snapshot *shown = done_snapshot(asked, 1);
    assert_true(ExportJob_start(j, shown, false, dir, err, sizeof err));
    gate_wait_entered();
    /* Held inside the writer: the job says it writes, and its end is not signalled. */
    assert_true(ExportJob_running(j));
    assert_false(readable(ExportJob_fd(j), 0));
    ExportOutcome o = {.files = 12345};
    assert_false(ExportJob_collect(j, &o));
    assert_int_equal(o.files, 12345);
    ExportJob_writing_note(j, 1.25, note, sizeof note);
    char expected[1024];
    snprintf(expected, sizeof expected, "writing the export to %s/, 1.2 s", dir);
    assert_string_equal(note, expected);
    /* A second export is refused, saying why, and changes nothing. */
    assert_false(ExportJob_start(j, shown, false, reference, err, sizeof err));
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
    assert_int_equal(Export_write(newer, NULL, NULL, newer_dir, err, sizeof err), 8);
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
    Result *r;
    Snapshot *s;
    ExportJob *j = gated_job(3, &r, &s);
    gate_open();
    char err[EXPORT_JOB_ERROR_SIZE], file[512], under[600];
    /* --export-matrix without the worker's X0. */
    path_in(file, sizeof file, "no-input", NULL);
    assert_false(ExportJob_start(j, s, true, file, err, sizeof err));
    assert_string_equal(err, "export failed: writing input.csv failed: the job made no X0");
    /* A directory below a regular file: Export_check refuses it at once. */
    path_in(file, sizeof file, "a-file", NULL);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(under, sizeof under, "%s/below", file);
    assert_false(ExportJob_start(j, s, false, under, err, sizeof err));
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
    Result *r;
    Snapshot *s;
    ExportJob *j = gated_job(4, &r, &s);
    gate.fail = 1;
    char err[EXPORT_JOB_ERROR_SIZE], dir[512], note[1024];
    path_in(dir, sizeof dir, "late", NULL);
    assert_true(ExportJob_start(j, s, false, dir, err, sizeof err));
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

/* Freeing the job while it writes (the screen's loop broke off) waits for the whole set. */
static void test_free_waits_for_the_export(void **state)
{
    (void)state;
    Result *r;
    Snapshot *s;
    ExportJob *j = gated_job(5, &r, &s);
    char err[EXPORT_JOB_ERROR_SIZE], dir[512], file[600];
    path_in(dir, sizeof dir, "freed", NULL);
    assert_true(ExportJob_start(j, s, false, dir, err, sizeof err));
    Snapshot_free(s);
    gate_wait_entered();
    gate_open();
    ExportJob_free(j);
    path_in(file, sizeof file, "freed", "layers.csv");
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
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
        cmocka_unit_test(test_free_waits_for_the_export),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", root);
    if (system(command) != 0)
        fprintf(stderr, "test_export_job: could not remove %s\n", root);
    return failed;
}
