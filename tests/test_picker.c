/* The preset picker, the prompts of p and x and named saves (issue 7): the list holds the
 * shipped presets, the tour and the user's own in that order, each sorted; keys move,
 * load and close; a prompt's text is edited key by key; a save never replaces a preset, refuses
 * names that could leave the directory, and leaves no temporary file. */
#include "testing.h"

#include "keys.h"
#include "picker.h"
#include "presets.h"
#include "prompt.h"
#include "save.h"
#include "tour.h"

#include <curses.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void read_file(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(out, 1, size - 1, f);
    out[n] = '\0';
    fclose(f);
}

/* Number of entries in dir whose name contains part. */
static int count_files(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strstr(e->d_name, part) != NULL;
    closedir(d);
    return n;
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/attnscope-picker-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/shipped", root);
    mkdir(dir, 0777);
    write_file(dir, "b-second.preset",
               "# Second shipped\n#   continued here\n#\n# Shows: x\n\ntokens = 8\n");
    write_file(dir, "a-first.preset", "# First shipped\n\ntokens = 16\n");
    write_file(dir, "notes.txt", "# not a preset\n");
    snprintf(dir, sizeof dir, "%s/shipped/tour", root);
    mkdir(dir, 0777);
    write_file(dir, "01-step.preset", "tokens = 32\n");
    snprintf(dir, sizeof dir, "%s/config", root);
    setenv("XDG_CONFIG_HOME", dir, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", root);
    return system(command) == 0 ? 0 : -1;
}

static void test_header_and_title(void **state)
{
    (void)state;
    char path[256], header[256], title[64];
    snprintf(path, sizeof path, "%s/shipped/b-second.preset", root);
    /* One space after '#' goes, the indentation of a continued line stays, and the header
       ends at the first line that is not a comment. */
    assert_int_equal(Tour_header(path, header, sizeof header, 64), 4);
    assert_string_equal(header, "Second shipped\n  continued here\n\nShows: x");
    assert_int_equal(Tour_header(path, header, sizeof header, 1), 1);
    assert_string_equal(header, "Second shipped");
    Tour_title(path, title, sizeof title);
    assert_string_equal(title, "Second shipped");
    /* No comment: the title is the file's name. */
    snprintf(path, sizeof path, "%s/shipped/tour/01-step.preset", root);
    assert_int_equal(Tour_header(path, header, sizeof header, 64), 0);
    Tour_title(path, title, sizeof title);
    assert_string_equal(title, "01-step.preset");
    /* A header longer than the buffer is cut at a whole line. */
    snprintf(path, sizeof path, "%s/shipped/b-second.preset", root);
    assert_int_equal(Tour_header(path, header, 20, 64), 1);
    assert_string_equal(header, "Second shipped");
}

/* The "Point at:" note of a tour step: its continuation lines joined, what follows left out,
   a mention inside another line not taken for it. */
static void test_point_at(void **state)
{
    (void)state;
    char dir[128], path[256], note[256];
    snprintf(dir, sizeof dir, "%s/notes", root);
    assert_int_equal(mkdir(dir, 0777), 0);
    write_file(
        dir, "step.preset",
        "# Tour 3/9: a step\n#\n# Shows: see Point at: below\n"
        "# Point at: (1) the outlier,\n#   then (2) the bar.\n# Measured: 1.0\ntokens = 8\n");
    snprintf(path, sizeof path, "%s/step.preset", dir);
    assert_int_equal(Tour_point_at(path, note, sizeof note), 44);
    assert_string_equal(note, "Point at: (1) the outlier, then (2) the bar.");
    /* Too small for the second line: cut at the first. */
    assert_int_equal(Tour_point_at(path, note, 30), 26);
    assert_string_equal(note, "Point at: (1) the outlier,");
    write_file(dir, "none.preset", "# Tour 1/9\n# Shows: x\ntokens = 8\n");
    snprintf(path, sizeof path, "%s/none.preset", dir);
    assert_int_equal(Tour_point_at(path, note, sizeof note), 0);
    assert_string_equal(note, "");
    /* The view a step names, at the start of a header line only; none: "". */
    assert_int_equal(Tour_view(path, note, sizeof note), 0);
    assert_string_equal(note, "");
    write_file(dir, "view.preset",
               "# Tour 10/11: entropy\n# Shows: the View: below\n# View: entropy  \ntokens = 8\n");
    snprintf(path, sizeof path, "%s/view.preset", dir);
    assert_int_equal(Tour_view(path, note, sizeof note), 7);
    assert_string_equal(note, "entropy");
    Panel panel;
    assert_true(Panel_named(note, &panel));
    assert_int_equal(panel, PANEL_ENTROPY);
    assert_false(Panel_named("entropy view", &panel));
}

static void test_list_order_sources_and_keys(void **state)
{
    (void)state;
    char shipped[128], tour[128], user[256];
    snprintf(shipped, sizeof shipped, "%s/shipped", root);
    snprintf(tour, sizeof tour, "%s/shipped/tour", root);
    assert_non_null(Presets_user_directory(user, sizeof user));
    char err[256], saved[640];
    assert_int_equal(
        Save_preset("# Mine\n\ntokens = 64\n", "mine", saved, sizeof saved, err, sizeof err), 0);

    Picker *p = Picker_new();
    assert_non_null(p);
    assert_int_equal(Picker_list(p, shipped, tour, user), 4);
    /* The tour first: a class starts there. */
    const char *names[] = {"01-step", "a-first", "b-second", "mine"};
    const PresetSource sources[] = {PRESET_TOUR, PRESET_SHIPPED, PRESET_SHIPPED, PRESET_USER};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(p->entry[i].name, names[i]);
        assert_int_equal(p->entry[i].source, sources[i]);
    }
    assert_string_equal(p->entry[3].path, saved);
    assert_int_equal(p->selected, 0);
    assert_int_equal(Picker_key(p, 'j'), PICKER_STAY);
    assert_int_equal(p->selected, 1);
    assert_string_equal(p->header, "First shipped");

    assert_int_equal(Picker_key(p, 'j'), PICKER_STAY);
    assert_int_equal(p->selected, 2);
    assert_string_equal(p->header, "Second shipped\n  continued here\n\nShows: x");
    assert_int_equal(Picker_key(p, KEY_DOWN), PICKER_STAY);
    assert_int_equal(Picker_key(p, KEY_NPAGE), PICKER_STAY);
    assert_int_equal(p->selected, 3); /* clamped at the end */
    assert_string_equal(p->header, "Mine");
    assert_int_equal(Picker_key(p, KEY_HOME), PICKER_STAY);
    assert_int_equal(Picker_key(p, KEY_UP), PICKER_STAY);
    assert_int_equal(p->selected, 0);   /* clamped at the start */
    assert_string_equal(p->header, ""); /* the tour step has no header */
    assert_int_equal(Picker_key(p, KEY_END), PICKER_STAY);
    assert_int_equal(p->selected, 3);
    assert_int_equal(Picker_key(p, 'k'), PICKER_STAY);
    assert_int_equal(p->selected, 2);
    assert_string_equal(p->header, "Second shipped\n  continued here\n\nShows: x");
    Picker_select_path(p, saved);
    assert_int_equal(p->selected, 3);
    assert_int_equal(Picker_key(p, '\n'), PICKER_LOAD);
    assert_int_equal(Picker_key(p, KEY_ENTER), PICKER_LOAD);
    assert_int_equal(Picker_key(p, 'x'), PICKER_STAY);
    assert_int_equal(Picker_key(p, 27), PICKER_CLOSE);
    assert_int_equal(Picker_key(p, 'q'), PICKER_CLOSE);
    assert_int_equal(Picker_key(p, 'P'), PICKER_CLOSE);

    /* Missing directories list nothing, and Enter then loads nothing. */
    assert_int_equal(Picker_list(p, "/nonexistent", NULL, NULL), 0);
    assert_int_equal(Picker_key(p, '\n'), PICKER_STAY);
    assert_int_equal(Picker_key(p, KEY_DOWN), PICKER_STAY);
    Picker_free(p);
    unlink(saved);
}

/* A directory of 200 presets is listed whole, in name order, by the picker and the tour
   (readdir's order is the file system's; a fixed cap once kept an arbitrary 64). */
static void test_many_presets_all_listed(void **state)
{
    (void)state;
    enum { MANY = 200 };
    char dir[128], name[64];
    snprintf(dir, sizeof dir, "%s/many", root);
    assert_int_equal(mkdir(dir, 0777), 0);
    for (int i = MANY - 1; i >= 0; i--) {
        snprintf(name, sizeof name, "p%03d.preset", (i * 7) % MANY); /* created out of order */
        write_file(dir, name, "tokens = 8\n");
    }
    Tour tour = {0};
    assert_int_equal(Tour_list(&tour, dir), MANY);
    Picker *p = Picker_new();
    assert_non_null(p);
    assert_int_equal(Picker_list(p, dir, NULL, NULL), MANY);
    for (int i = 0; i < MANY; i++) {
        snprintf(name, sizeof name, "p%03d", i);
        assert_string_equal(p->entry[i].name, name);
        snprintf(name, sizeof name, "/p%03d.preset", i);
        assert_non_null(strstr(tour.path[i], name));
    }
    assert_int_equal(Picker_key(p, KEY_END), PICKER_STAY);
    assert_int_equal(p->selected, MANY - 1);
    /* Listing again replaces the list: these (as the tour), then the shipped presets. */
    char shipped[128];
    snprintf(shipped, sizeof shipped, "%s/shipped", root);
    assert_int_equal(Picker_list(p, shipped, dir, NULL), MANY + 2);
    assert_string_equal(p->entry[MANY - 1].name, "p199");
    assert_string_equal(p->entry[MANY + 1].name, "b-second");
    Picker_free(p);
    Tour_free(&tour);
}

static void test_prompt_editing(void **state)
{
    (void)state;
    Prompt p = {.max_chars = SAVE_NAME_MAX, .allowed = Save_name_char};
    const char *typed = "my-class_2.v1";
    for (const char *c = typed; *c; c++)
        assert_int_equal(Prompt_key(&p, *c), PROMPT_EDITED);
    assert_string_equal(p.text, typed);
    assert_int_equal(Prompt_key(&p, '/'), PROMPT_REFUSED);
    assert_int_equal(Prompt_key(&p, ' '), PROMPT_REFUSED);
    assert_int_equal(Prompt_key(&p, 0xE9), PROMPT_REFUSED);
    assert_int_equal(Prompt_key(&p, KEY_UP), PROMPT_REFUSED);
    assert_string_equal(p.text, typed);
    assert_int_equal(Prompt_key(&p, KEY_BACKSPACE), PROMPT_EDITED);
    assert_int_equal(Prompt_key(&p, 127), PROMPT_EDITED);
    assert_string_equal(p.text, "my-class_2.");
    assert_int_equal(Prompt_key(&p, '\r'), PROMPT_DONE);
    assert_int_equal(Prompt_key(&p, KEY_ENTER), PROMPT_DONE);
    assert_int_equal(Prompt_key(&p, 27), PROMPT_CANCEL);
    p.text[0] = '\0';
    assert_int_equal(Prompt_key(&p, 8), PROMPT_EDITED); /* nothing to remove */
    for (int i = 0; i < SAVE_NAME_MAX; i++)
        assert_int_equal(Prompt_key(&p, 'a'), PROMPT_EDITED);
    assert_int_equal(Prompt_key(&p, 'a'), PROMPT_FULL);
    assert_int_equal((int)strlen(p.text), SAVE_NAME_MAX);

    /* A directory prompt takes paths, spaces included, up to its buffer. */
    Prompt dir = {.max_chars = PROMPT_SIZE - 1, .allowed = Prompt_printable};
    for (const char *c = "~/my exports/run 1"; *c; c++)
        assert_int_equal(Prompt_key(&dir, *c), PROMPT_EDITED);
    assert_string_equal(dir.text, "~/my exports/run 1");
    assert_int_equal(Prompt_key(&dir, '\t'), PROMPT_REFUSED);
    while (Prompt_key(&dir, 'x') == PROMPT_EDITED)
        ;
    assert_int_equal((int)strlen(dir.text), PROMPT_SIZE - 1);
}

static void test_named_save_never_replaces(void **state)
{
    (void)state;
    char dir[256], path[640], again[640], err[256], text[128];
    assert_non_null(Presets_user_directory(dir, sizeof dir));
    assert_int_equal(
        Save_preset("# one\ntokens = 8\n", "lesson", path, sizeof path, err, sizeof err), 0);
    assert_non_null(strstr(path, "/attnscope/presets/lesson.preset"));
    read_file(path, text, sizeof text);
    assert_string_equal(text, "# one\ntokens = 8\n");
    /* The same name again: refused, the first file untouched, the prompt can say why. */
    assert_int_equal(
        Save_preset("# two\ntokens = 16\n", "lesson", again, sizeof again, err, sizeof err), -1);
    assert_non_null(strstr(err, "a preset named lesson exists"));
    read_file(path, text, sizeof text);
    assert_string_equal(text, "# one\ntokens = 8\n");

    /* Names that could leave the directory, hide the file or break a shell are refused
       before anything is written. */
    const char *bad[] = {"../escape", ".hidden", "a b", "x/y"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(Save_preset("tokens = 8\n", bad[i], again, sizeof again, err, sizeof err),
                         -1);
        assert_true(err[0] != '\0');
    }
    char long_name[SAVE_NAME_MAX + 2];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    assert_int_equal(Save_preset("tokens = 8\n", long_name, again, sizeof again, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "at most 64"));

    /* Unnamed saves in the same second get distinct names. */
    char first[640], second[640];
    assert_int_equal(Save_preset("tokens = 8\n", NULL, first, sizeof first, err, sizeof err), 0);
    assert_int_equal(Save_preset("tokens = 8\n", "", second, sizeof second, err, sizeof err), 0);
    assert_string_not_equal(first, second);
    assert_non_null(strstr(first, "/attnscope-"));
    assert_int_equal(count_files(dir, ".preset"), 3);
    assert_int_equal(count_files(dir, ".tmp"), 0);
    assert_int_equal(count_files(root, "escape"), 0);
    unlink(path);
    unlink(first);
    unlink(second);
}

static void test_save_into_unwritable_directory(void **state)
{
    (void)state;
    char dir[256], path[640], err[256];
    assert_non_null(Presets_user_directory(dir, sizeof dir));
    /* A file where the directory should be: the save fails and says where. */
    char blocked[128];
    snprintf(blocked, sizeof blocked, "%s/blocked", root);
    mkdir(blocked, 0777);
    write_file(blocked, "attnscope", "a file, not a directory\n");
    setenv("XDG_CONFIG_HOME", blocked, 1);
    assert_int_equal(Save_preset("tokens = 8\n", "x", path, sizeof path, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot create"));
    assert_int_equal(count_files(blocked, ".preset"), 0);
    char config[128];
    snprintf(config, sizeof config, "%s/config", root);
    setenv("XDG_CONFIG_HOME", config, 1);
}

/* A FIFO named like a preset in the user's folder (issue 26): listed, its header empty, and
   reaching it never waits for a writer (a blocking open hung the screen there).  The alarm
   turns a hang into a failure. */
static void test_fifo_never_waited_on(void **state)
{
    (void)state;
    char dir[128], fifo[160];
    snprintf(dir, sizeof dir, "%s/fifo-user", root);
    mkdir(dir, 0777);
    snprintf(fifo, sizeof fifo, "%s/a-pipe.preset", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    Picker *p = Picker_new();
    alarm(20);
    assert_int_equal(Picker_list(p, NULL, NULL, dir), 1);
    alarm(0);
    assert_string_equal(p->entry[0].name, "a-pipe");
    assert_string_equal(p->header, "");
    Picker_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_and_title),
        cmocka_unit_test(test_point_at),
        cmocka_unit_test(test_list_order_sources_and_keys),
        cmocka_unit_test(test_many_presets_all_listed),
        cmocka_unit_test(test_prompt_editing),
        cmocka_unit_test(test_named_save_never_replaces),
        cmocka_unit_test(test_save_into_unwritable_directory),
        cmocka_unit_test(test_fifo_never_waited_on),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
