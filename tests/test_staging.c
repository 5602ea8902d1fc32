/* The staging record's signal handler (staging.h), driven in a child process that a real
 * SIGTERM ends: the parents a writer made are removed deepest first where empty, kept where
 * not; an old directory stepped aside from its name is put back before the new one's files
 * are removed, and left alone once the new one holds the name or the record is forgotten
 * (a directory not ours at the aside name stays there).  The parent checks the
 * directories the child left and that the signal ended it. */
#include "testing.h"

#include "staging.h"

#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[64];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/attnscope-staging-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", root);
    return system(command) == 0 ? 0 : -1;
}

static bool exists(const char *format, const char *name)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, format, root, name);
    return stat(path, &st) == 0;
}

/* Runs body in a child that SIGTERM then ends; asserts that it did. */
static void in_killed_child(void (*body)(void))
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        body();
        raise(SIGTERM);
        _exit(0); /* the handler did not end the process */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGTERM);
}

/* root/p/a/b made (the lengths of root/p, root/p/a, root/p/a/b), b holding a staging
   directory with one named file; root/q/c made with a file of the user's in q. */
static void make_parents_then_die(void)
{
    char path[256], stage[256], file[256];
    snprintf(path, sizeof path, "%s/p/a/b/out", root);
    size_t n = strlen(root);
    unsigned short lengths[] = {(unsigned short)(n + 2), (unsigned short)(n + 4),
                                (unsigned short)(n + 6)};
    for (int i = 0; i < 3; i++) {
        path[lengths[i]] = '\0';
        if (mkdir(path, 0777) != 0)
            _exit(3);
        path[lengths[i]] = '/';
    }
    static const char *const NAMES[] = {"data.csv"};
    snprintf(stage, sizeof stage, "%s/p/a/b/.out.export-1-0", root);
    snprintf(file, sizeof file, "%s/p/a/b/.out.export-1-0/data.csv", root);
    FILE *f;
    if (mkdir(stage, 0777) != 0 || !(f = fopen(file, "w")))
        _exit(3);
    fclose(f);
    if (Staging_remove_parents_on_signal(path, lengths, 3) ||
        Staging_remove_tree_on_signal(stage, NAMES, 1))
        _exit(4);
}

static void test_parents_removed(void **state)
{
    (void)state;
    in_killed_child(make_parents_then_die);
    assert_false(exists("%s/%s", "p"));
}

/* The same, with a file of the user's in root/p/a: p/a/b goes, p/a and p stay. */
static void make_parents_with_user_file_then_die(void)
{
    char file[256];
    snprintf(file, sizeof file, "%s/p/a/notes.txt", root);
    make_parents_then_die();
    FILE *f = fopen(file, "w");
    if (!f)
        _exit(3);
    fclose(f);
}

static void test_parents_kept_where_not_empty(void **state)
{
    (void)state;
    in_killed_child(make_parents_with_user_file_then_die);
    assert_true(exists("%s/%s", "p/a/notes.txt"));
    assert_false(exists("%s/%s", "p/a/b"));
}

/* The fallback of an exchange caught between its renames: the old set at root/.out.old, no
   root/out, the new set in the staging directory root/.out.new. */
static void step_aside_then_die(void)
{
    char old[256], aside[256], target[256], fresh[256], file[256];
    snprintf(target, sizeof target, "%s/out", root);
    snprintf(aside, sizeof aside, "%s/.out.new.old", root);
    snprintf(fresh, sizeof fresh, "%s/.out.new", root);
    snprintf(old, sizeof old, "%s/out/old.csv", root);
    snprintf(file, sizeof file, "%s/.out.new/data.csv", root);
    static const char *const NAMES[] = {"data.csv"};
    FILE *a, *b;
    if (mkdir(target, 0777) || mkdir(fresh, 0777) || !(a = fopen(old, "w")) ||
        !(b = fopen(file, "w")))
        _exit(3);
    fclose(a);
    fclose(b);
    if (Staging_remove_tree_on_signal(fresh, NAMES, 1) ||
        Staging_restore_on_signal(aside, target) || rename(target, aside) != 0)
        _exit(4);
}

static void test_aside_put_back(void **state)
{
    (void)state;
    in_killed_child(step_aside_then_die);
    assert_true(exists("%s/%s", "out/old.csv"));
    assert_false(exists("%s/%s", ".out.new.old"));
    assert_false(exists("%s/%s", ".out.new"));
}

/* Caught after the second rename: the new set holds the name and stays; the old one, still
   aside, is a staging name a later export removes. */
static void exchanged_then_die(void)
{
    char target[256], fresh[256];
    step_aside_then_die();
    snprintf(target, sizeof target, "%s/out", root);
    snprintf(fresh, sizeof fresh, "%s/.out.new", root);
    if (rename(fresh, target) != 0)
        _exit(4);
}

static void test_new_set_kept(void **state)
{
    (void)state;
    in_killed_child(exchanged_then_die);
    assert_true(exists("%s/%s", "out/data.csv"));
    assert_false(exists("%s/%s", "out/old.csv"));
    assert_true(exists("%s/%s", ".out.new.old/old.csv"));
}

/* The first rename of the fallback failed: the aside name holds a directory that is not ours
   (root/.out.new.old, with the user's file), which rename refuses to replace; target root/out
   stays, empty.  The writer forgets the aside record before the signal; the staging directory
   is still removed. */
static void step_aside_failed_then_die(void)
{
    char aside[256], target[256], fresh[256], theirs[256];
    snprintf(target, sizeof target, "%s/out", root);
    snprintf(aside, sizeof aside, "%s/.out.new.old", root);
    snprintf(fresh, sizeof fresh, "%s/.out.new", root);
    snprintf(theirs, sizeof theirs, "%s/.out.new.old/theirs.csv", root);
    static const char *const NAMES[] = {"data.csv"};
    FILE *f;
    if (mkdir(target, 0777) || mkdir(fresh, 0777) || mkdir(aside, 0777) ||
        !(f = fopen(theirs, "w")))
        _exit(3);
    fclose(f);
    if (Staging_remove_tree_on_signal(fresh, NAMES, 1) ||
        Staging_restore_on_signal(aside, target) || rename(target, aside) == 0)
        _exit(4);
    Staging_forget_aside();
}

static void test_failed_aside_left_alone(void **state)
{
    (void)state;
    in_killed_child(step_aside_failed_then_die);
    assert_true(exists("%s/%s", ".out.new.old/theirs.csv"));
    assert_true(exists("%s/%s", "out"));
    assert_false(exists("%s/%s", "out/theirs.csv"));
    assert_false(exists("%s/%s", ".out.new"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parents_removed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parents_kept_where_not_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_aside_put_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_set_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_aside_left_alone, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
