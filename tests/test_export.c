/* input.csv: Export_input makes X0 again from the weight source in use, and a source whose
 * table fails makes it fail saying so (not "out of memory"); one that gives the rows makes a
 * file whose first line says whose rows they are, whose settings line names the source and
 * the token-id file, and whose entries are the source's rows.  Export_write writes the X0 its
 * caller gives (the screen's worker makes it, not the screen), bit for bit. */
#include "testing.h"

#include "export.h"

#include "attnscope/layer.h"
#include "attnscope/model.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { TOKENS = 4, WIDTH = 4 };

static const int32_t IDS[TOKENS] = {7, 2, 7, 0};

/* WeightSource.embed that fails, as a table read past its end would. */
static int failing_rows(void *context, const Config *c, const double *ids, double *rows)
{
    (void)context, (void)c, (void)ids, (void)rows;
    return -1;
}

/* WeightSource.embed of a table whose row id holds id + j/8 in column j (exact in binary). */
static int counting_rows(void *context, const Config *c, const double *ids, double *rows)
{
    (void)context;
    for (int i = 0; i < c->tokens; i++)
        for (int j = 0; j < c->width; j++)
            rows[(size_t)i * c->width + j] = ids[i] + j / 8.0;
    return 0;
}

static Config embedding_config(void)
{
    Config c = Config_default();
    c.tokens = TOKENS;
    c.width = WIDTH;
    c.depth = 1;
    c.input = INPUT_EMBEDDING;
    return c;
}

/* A run of c on drawn weights, the result an export writes. */
static Result *run(const Config *c)
{
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    char err[256];
    assert_non_null(w);
    assert_non_null(r);
    if (Model_run(c, w, r, NULL, err, sizeof err) != 0)
        fail_msg("the run failed: %s", err);
    Workspace_free(w);
    return r;
}

static void test_table_failure_is_said(void **state)
{
    (void)state;
    Config c = embedding_config();
    WeightSource source = {.embed = failing_rows, .name = "broken.safetensors", .table = "t"};
    Layer_use_weights(&source);
    char why[256] = "";
    double *input = Export_input(&c, NULL, why, sizeof why);
    Layer_use_weights(NULL);
    assert_null(input);
    if (!strstr(why, "drawing X0 again failed") || strstr(why, "memory"))
        fail_msg("the reason is \"%s\"", why);
}

/* The rows after input.csv's three header lines, T of d numbers each, into x (entry (i, j)
   at x[i + j·T]), each row numbered from 1. */
static void read_input_rows(FILE *f, int tokens, int width, double *x)
{
    for (int i = 0; i < tokens; i++) {
        int token;
        assert_int_equal(fscanf(f, "%d", &token), 1);
        assert_int_equal(token, i + 1);
        for (int j = 0; j < width; j++)
            assert_int_equal(fscanf(f, ",%lf", &x[i + (size_t)j * tokens]), 1);
    }
}

/* Export_write's input.csv holds the X0 it is given, every entry bit for bit (thirds and
   sevenths, which no decimal of fewer than 17 digits holds), not one it makes itself. */
static void test_given_input_is_written(void **state)
{
    (void)state;
    Config c = embedding_config();
    Result *r = run(&c);
    double given[TOKENS * WIDTH], read[TOKENS * WIDTH];
    for (int k = 0; k < TOKENS * WIDTH; k++)
        given[k] = (k + 1) / 3.0 - k / 7.0;
    char dir[96], path[128], err[256] = "", line[1024];
    snprintf(dir, sizeof dir, "%s/given", scratch_directory());
    if (Export_write(r, &(ExportExtras){.input = given}, dir, err, sizeof err) < 0)
        fail_msg("the export failed: %s", err);
    snprintf(path, sizeof path, "%s/input.csv", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    for (int i = 0; i < 3; i++)
        assert_non_null(fgets(line, sizeof line, f));
    read_input_rows(f, TOKENS, WIDTH, read);
    fclose(f);
    assert_memory_equal(read, given, sizeof given);
    Result_free(r);
}

static void test_table_rows_are_named(void **state)
{
    (void)state;
    Config c = embedding_config();
    Result *r = run(&c);
    WeightSource source = {
        .embed = counting_rows, .name = "model.safetensors", .table = "embed.weight"};
    Layer_use_weights(&source);
    Layer_use_token_ids(IDS, NULL, TOKENS, "ids.txt");
    char dir[96], path[128], err[256] = "";
    snprintf(dir, sizeof dir, "%s/named", scratch_directory());
    double *input = Export_input(&c, NULL, err, sizeof err);
    int written =
        input ? Export_write(r, &(ExportExtras){.input = input}, dir, err, sizeof err) : -1;
    Layer_use_token_ids(NULL, NULL, 0, NULL);
    Layer_use_weights(NULL);
    free(input);
    if (written < 0)
        fail_msg("the export failed: %s", err);
    snprintf(path, sizeof path, "%s/input.csv", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char what[1024], settings[1024], line[1024];
    assert_non_null(fgets(what, sizeof what, f));
    assert_non_null(fgets(settings, sizeof settings, f));
    assert_non_null(fgets(line, sizeof line, f)); /* the columns' names */
    if (!strstr(what, "the rows for ids.txt in embed.weight"))
        fail_msg("the first line is \"%s\"", what);
    if (!strstr(settings, " --weights model.safetensors --token-ids ids.txt\n"))
        fail_msg("the settings line is \"%s\"", settings);
    double x[TOKENS * WIDTH];
    read_input_rows(f, TOKENS, WIDTH, x);
    for (int i = 0; i < TOKENS; i++)
        for (int j = 0; j < WIDTH; j++)
            if (x[i + j * TOKENS] != IDS[i] + j / 8.0)
                fail_msg("token %d, x_%d: %.17g, expected %.17g", i + 1, j + 1, x[i + j * TOKENS],
                         IDS[i] + j / 8.0);
    fclose(f);
    Result_free(r);
}

/* A stop hook that never stops, but makes the export's new directory, with a file of another
   export in it, the first time it is asked: a second export into the same new directory that
   finished while this one wrote. */
static bool another_export_finishes(void *context)
{
    const char *dir = context;
    char path[160];
    snprintf(path, sizeof path, "%s/layers.csv", dir);
    if (mkdir(dir, 0777) == 0) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs("the other export's\n", f);
        assert_int_equal(fclose(f), 0);
    }
    return false;
}

/* A new directory that appears while the files are written is another's: the export fails
   saying so, and the other's file is as it was, nothing added beside it. */
static void test_directory_appearing_is_left(void **state)
{
    (void)state;
    Config c = embedding_config();
    Result *r = run(&c);
    char dir[96], path[160], err[256] = "", line[64] = "";
    snprintf(dir, sizeof dir, "%s/raced", scratch_directory());
    int written = Export_write_stoppable(
        r, &(ExportExtras){0}, dir, (LinalgStop){another_export_finishes, dir}, err, sizeof err);
    assert_int_equal(written, -1);
    if (!strstr(err, "the directory appeared while the files were written"))
        fail_msg("the error is \"%s\"", err);
    snprintf(path, sizeof path, "%s/layers.csv", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    assert_null(fgets(line + strlen(line), 2, f));
    fclose(f);
    assert_string_equal(line, "the other export's\n");
    snprintf(path, sizeof path, "%s/eigenvalues.csv", dir);
    assert_int_not_equal(access(path, F_OK), 0);
    Result_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_failure_is_said),
        cmocka_unit_test(test_given_input_is_written),
        cmocka_unit_test(test_table_rows_are_named),
        cmocka_unit_test(test_directory_appearing_is_left),
    };
    return cmocka_run_group_tests(tests, scratch_directory_make, scratch_directory_remove);
}
