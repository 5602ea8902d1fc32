/* The status lines: every parameter and readout present, "…" for values not computed for
 * the settings shown, the busy indicator (and a superseded job stopping), notes and
 * warnings on the message line, lines within the width, and plain ASCII without Unicode. */
#include "testing.h"

#include "ascii.h"
#include "status.h"

#include <string.h>

static char lines[STATUS_LINES_MAX][STATUS_LINE_SIZE];

/* All lines joined by newlines. */
static const char *layout(const StatusView *v, int width, int *count)
{
    static char all[STATUS_LINES_MAX * STATUS_LINE_SIZE];
    int n = Status_layout(v, width, lines, STATUS_LINES_MAX);
    all[0] = '\0';
    for (int i = 0; i < n; i++) {
        assert_true(Ascii_columns(lines[i]) <= width);
        strcat(all, lines[i]);
        strcat(all, "\n");
    }
    if (count)
        *count = n;
    return all;
}

static Snapshot *computed(const Config *c)
{
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    char err[256];
    assert_int_equal(Model_run(c, w, r, NULL, err, sizeof err), 0);
    Snapshot *s = Snapshot_of(r, 1);
    assert_non_null(s);
    s->done = true;
    s->elapsed_ms = 12.0;
    Result_free(r);
    Workspace_free(w);
    return s;
}

static void test_parameters_and_readouts(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = c.width = 32;
    c.depth = 3;
    Snapshot *s = computed(&c);
    StatusView v = {.config = &c, .shown = s, .current = true, .note = "", .unicode = true};
    int n;
    const char *t = layout(&v, 120, &n);
    assert_int_equal(n, 3);
    const char *fields[] = {"T=32",
                            "d=32",
                            "L=3",
                            "σ_qk=1",
                            "attn=softmax",
                            "mask=full",
                            "w=1",
                            "gap=off",
                            "LN=none",
                            "skip=none",
                            "layer=1/3",
                            "seed=1",
                            "σ=1.311",
                            "logit std=",
                            "1−|λ2|=",
                            "s1/s2=",
                            "|λ|>0.5=",
                            "sr(ℓ=3)=",
                            "computed in 12 ms",
                            "? help"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!strstr(t, fields[i]))
            fail_msg("'%s' missing from:\n%s", fields[i], t);
    assert_null(strstr(t, "…"));
    /* Narrower terminals wrap the fields; nothing is lost. */
    t = layout(&v, 80, &n);
    assert_true(n >= 3 && n <= 5);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        assert_non_null(strstr(t, fields[i]));
    Snapshot_free(s);
}

static void test_pending_and_busy(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = c.width = 16;
    c.depth = 2;
    Snapshot *s = computed(&c);
    Config asked = c;
    asked.tokens = asked.width = 32;
    StatusView v = {.config = &asked,
                    .shown = s,
                    .current = false,
                    .busy = true,
                    .busy_ms = 1500,
                    .progress = 0.5,
                    .note = "d raised to 32 with T",
                    .unicode = true};
    const char *t = layout(&v, 120, NULL);
    /* The parameters follow the key at once; readouts wait for their result. */
    assert_non_null(strstr(t, "T=32"));
    assert_non_null(strstr(t, "1−|λ2|=…"));
    assert_non_null(strstr(t, "computing 50%, 1.5 s"));
    assert_non_null(strstr(t, "d raised to 32 with T"));
    v.unicode = false;
    t = layout(&v, 120, NULL);
    for (const char *p = t; *p; p++)
        assert_true((unsigned char)*p < 0x80);
    assert_non_null(strstr(t, "1-|lambda2|=..."));
    /* With the cost model's estimate: the time left instead of the time spent, as a person
       reads it. */
    v.estimated = true;
    const struct {
        double seconds;
        const char *text;
    } left[] = {{0.4, "computing 50%, <1 s left"},
                {12.4, "computing 50%, ~12 s left"},
                {185, "computing 50%, ~3 min left"},
                {9000, "computing 50%, ~2.5 h left"}};
    for (size_t i = 0; i < sizeof left / sizeof left[0]; i++) {
        v.seconds_left = left[i].seconds;
        t = layout(&v, 120, NULL);
        if (!strstr(t, left[i].text))
            fail_msg("%.1f s left: expected '%s' in\n%s", left[i].seconds, left[i].text, t);
    }
    /* While the superseded job winds down, the new one has not started: no percentage. */
    v.unicode = true;
    v.stopping = true;
    t = layout(&v, 120, NULL);
    assert_non_null(strstr(t, "stopping the previous job, 1.5 s"));
    assert_null(strstr(t, "computing"));
    Snapshot_free(s);
}

static void test_messages(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = c.width = 16;
    c.depth = 2;
    c.mask = MASK_CAUSAL;
    c.attention = ATTENTION_UNIFORM;
    Snapshot *s = computed(&c);
    StatusView v = {.config = &c, .shown = s, .current = true, .note = "", .unicode = true};
    int n;
    const char *t = layout(&v, 200, &n);
    /* The explanation has a line of its own, kept under the note and the warning. */
    assert_non_null(strstr(lines[n - 2], "eigenvalues exact: the diagonal"));
    assert_non_null(strstr(lines[n - 2], "so all real"));
    /* Uniform attention: A⊥ = 0, the counterpart's stable rank is undefined: warned. */
    assert_true(s->result->warnings.count > 0);
    assert_non_null(strstr(lines[n - 1], "⚠"));
    v.note = "a note that is long enough to push everything else off the line when it is "
             "printed at eighty columns";
    t = layout(&v, 80, &n);
    assert_non_null(strstr(lines[n - 2], "eigenvalues exact"));
    v.note = "";
    /* A long message is cut to the width with an ellipsis. */
    t = layout(&v, 80, &n);
    assert_true(Ascii_columns(lines[n - 1]) <= 80);
    (void)t;
    Snapshot_free(s);

    Snapshot *f = Snapshot_failure(&c, 1, "out of memory for T = 16");
    v.shown = f;
    t = layout(&v, 120, &n);
    assert_non_null(strstr(t, "error: out of memory for T = 16"));
    assert_non_null(strstr(t, "failed"));
    Snapshot_free(f);
}

/* "? help" ends the message line at every width, however long the note and the warnings;
   "! N warnings" says how to read them all. */
static void test_help_always_visible(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = c.width = 16;
    c.depth = 2;
    Snapshot *s = computed(&c);
    Warnings *w = &s->result->warnings;
    w->count = 2;
    snprintf(w->text[0], sizeof w->text[0],
             "token similarity of the network: round-off from layer 7 (tokens equal to 1e-16 "
             "of ||X||), null there");
    snprintf(w->text[1], sizeof w->text[1],
             "gap deflate: attention rows do not sum to 1, "
             "there is no Perron vector; fell back to center");
    StatusView v = {.config = &c,
                    .shown = s,
                    .current = true,
                    .note = "d raised to 512 with T (T ≤ d: the input has orthonormal rows)",
                    .unicode = true};
    int widths[] = {80, 120, 200};
    for (int k = 0; k < 3; k++) {
        int n;
        layout(&v, widths[k], &n);
        const char *last = lines[n - 1];
        size_t length = strlen(last);
        assert_true(length > 6 && strcmp(last + length - 6, "? help") == 0);
        assert_non_null(strstr(last, "! 2 warnings"));
        /* The token-similarity warning is about a panel that is not shown. */
        assert_null(strstr(last, "token similarity"));
    }
    v.similarity_shown = true;
    int n;
    layout(&v, 200, &n);
    assert_non_null(strstr(lines[n - 1], "⚠ token similarity"));
    Snapshot_free(s);
}

/* σ only for softmax and markov; the spectral gap n/a for linear attention; the stable rank
   at the shown layer, and at the last one when that is another. */
static void test_readouts_that_mean_something(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = c.width = 16;
    c.depth = 3;
    c.layer = 2;
    c.attention = ATTENTION_UNIFORM;
    Snapshot *s = computed(&c);
    StatusView v = {.config = &c, .shown = s, .current = true, .note = "", .unicode = true};
    const char *t = layout(&v, 200, NULL);
    assert_null(strstr(t, "σ="));
    assert_non_null(strstr(t, "sr(ℓ=2)=1"));
    assert_non_null(strstr(t, "sr(ℓ=3)=1"));
    Snapshot_free(s);

    c.attention = ATTENTION_LINEAR;
    c.layer = 3;
    s = computed(&c);
    v.shown = s;
    t = layout(&v, 200, NULL);
    assert_null(strstr(t, "σ="));
    assert_non_null(strstr(t, "1−|λ2|=n/a"));
    assert_non_null(strstr(t, "|λ|>0.5=n/a"));
    assert_non_null(strstr(t, "sr(ℓ=3)="));
    assert_null(strstr(t, "sr(ℓ=2)"));
    Snapshot_free(s);

    c.attention = ATTENTION_MARKOV;
    s = computed(&c);
    v.shown = s;
    assert_non_null(strstr(layout(&v, 200, NULL), "σ=1.311"));
    Snapshot_free(s);

    /* W^Q W^Kᵀ drawn as αZ + βI has no σ (mimetic), softmax's σ comes back with normal keys. */
    c.attention = ATTENTION_SOFTMAX;
    c.init = INIT_MIMETIC;
    s = computed(&c);
    v.shown = s;
    assert_null(strstr(layout(&v, 200, NULL), "σ="));
    Snapshot_free(s);
    c.init_query = c.init_key = MATRIX_INIT_NORMAL;
    s = computed(&c);
    v.shown = s;
    assert_non_null(strstr(layout(&v, 200, NULL), "σ=1.311"));
    Snapshot_free(s);
    c.init = INIT_NORMAL;
    c.init_query = c.init_key = MATRIX_INIT_SCHEME;

    /* The window mask has no outlier: a line says why, for as long as it is shown. */
    c.attention = ATTENTION_SOFTMAX;
    c.mask = MASK_WINDOW;
    s = computed(&c);
    v.shown = s;
    int n;
    layout(&v, 200, &n);
    assert_int_equal(s->result->outlier, -1);
    assert_non_null(strstr(lines[n - 2], "window mask: |λ2| ≈ 1 − π²/(3T²)"));
    Snapshot_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parameters_and_readouts),
        cmocka_unit_test(test_help_always_visible),
        cmocka_unit_test(test_readouts_that_mean_something),
        cmocka_unit_test(test_pending_and_busy),
        cmocka_unit_test(test_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
