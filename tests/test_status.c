/* The status lines: every parameter and readout present, "…" for values not computed for
 * the settings shown, the busy indicator (and a superseded job stopping), notes and
 * warnings on the message line, lines within the width, and plain ASCII without Unicode. */
#include "testing.h"

#include "ascii.h"
#include "setting_line.h"
#include "status.h"
#include "view.h"

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

/* The default configuration at T = d = 16 and the depth given: small enough to run at once. */
static Config small_config(int depth)
{
    Config c = Config_default();
    c.tokens = c.width = 16;
    c.depth = depth;
    return c;
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
    const char *fields[] = {
        "T=32",       "d=32",    "L=3",       "σ_qk=1",    "attn=softmax", "mask=full",
        "gap=off",    "LN=none", "skip=none", "layer=1/3", "seed=1",       "σ=1.311",
        "logit std=", "1−|λ2|=", "s1/s2=",    "|λ|>0.5=",  "sr(ℓ=3)=",     "computed in 12 ms",
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

/* A setting shows where it acts (its row's in_use): the window under a window mask, not under
   the full one; σ_qk under the normal scheme, not under one that draws W^Q, W^K itself; a
   setting away from its default the same way (the sinks' spread needs a sink). */
static void test_settings_without_effect_not_shown(void **state)
{
    (void)state;
    static const struct {
        const char *settings, *shown, *hidden;
    } CASES[] = {
        {"mask=full window=3", "mask=full", "w="},
        {"mask=window window=3", "w=3", NULL},
        {"init=gpt2", "init=gpt2", "σ_qk="},
        {"init=normal", "σ_qk=1", NULL},
        {"sink=none sink-std=0.5", "T=32", "sink std="},
        {"sink=0 sink-std=0.5", "sink std=0.5", NULL},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        Config c = Config_default();
        c.tokens = c.width = 32;
        char err[256];
        if (SettingLine_apply(&c, CASES[i].settings, NULL, err, sizeof err) < 0)
            fail_msg("%s: %s", CASES[i].settings, err);
        StatusView v = {.config = &c, .note = "", .unicode = true};
        const char *t = layout(&v, 160, NULL);
        if (!strstr(t, CASES[i].shown) || (CASES[i].hidden && strstr(t, CASES[i].hidden)))
            fail_msg("%s: wanted '%s' and no '%s' in\n%s", CASES[i].settings, CASES[i].shown,
                     CASES[i].hidden ? CASES[i].hidden : "", t);
    }
}

static void test_pending_and_busy(void **state)
{
    (void)state;
    Config c = small_config(2);
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
                {348941, "computing 50%, ~4.04 days left"},
                {9000, "computing 50%, ~2.5 h left"}};
    for (size_t i = 0; i < sizeof left / sizeof left[0]; i++) {
        v.seconds_left = left[i].seconds;
        t = layout(&v, 120, NULL);
        if (!strstr(t, left[i].text))
            fail_msg("%.1f s left: expected '%s' in\n%s", left[i].seconds, left[i].text, t);
    }
    /* While a checkpoint's layer is read (--weights), the message says which. */
    v.reading_layer = 7;
    v.reading_depth = 32;
    t = layout(&v, 120, NULL);
    assert_non_null(strstr(t, "reading layer 7/32, 50%, ~2.5 h left"));
    assert_null(strstr(t, "computing"));
    v.reading_layer = 0;
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
    Config c = small_config(2);
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
    /* The note goes on over a line more; the explanation stays above it, wrapped between
       words over two lines at 80 columns. */
    assert_non_null(strstr(lines[n - 4], "eigenvalues exact"));
    assert_non_null(strstr(lines[n - 3], "so all real"));
    assert_non_null(strstr(lines[n - 2], "a note that is long enough"));
    assert_non_null(strstr(lines[n - 1], "eighty columns"));
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

/* A key's note too long for the line beside the hint (a tour step's title) is read whole:
   over two lines broken between words, the hint still ending the last; the warning after it
   is what gets cut. */
static void test_note_wraps_at_words(void **state)
{
    (void)state;
    Config c = small_config(2);
    Snapshot *s = computed(&c);
    const char *note = "Tour 3/9: more tokens, the same outlier: rank collapse in width "
                       "(> next, < back)";
    StatusView v = {.config = &c, .shown = s, .current = true, .note = note, .unicode = true};
    int widths[] = {80, 100};
    for (int k = 0; k < 2; k++) {
        int n;
        layout(&v, widths[k], &n);
        /* The two lines, the hint and its blanks taken off the second, are the message. */
        char joined[2 * STATUS_LINE_SIZE], second[STATUS_LINE_SIZE];
        snprintf(second, sizeof second, "%s", lines[n - 1]);
        char *hint = strstr(second, "  ! ");
        if (!hint)
            hint = strstr(second, "  ? help");
        assert_non_null(hint);
        while (hint > second && hint[-1] == ' ')
            hint--;
        *hint = '\0';
        snprintf(joined, sizeof joined, "%s %s", lines[n - 2], second);
        assert_non_null(strstr(joined, note));
        /* Broken between words: the first line ends where the note has a blank (or holds
           all of it, the hint alone on the second). */
        const char *in_note = strstr(note, strstr(lines[n - 2], "Tour"));
        assert_non_null(in_note);
        size_t first = strlen(strstr(lines[n - 2], "Tour"));
        assert_true(in_note[first] == ' ' || in_note[first] == '\0');
    }
    /* Beside a warning, at every length: a note that just fits the line alone is not cut to
       make room for the warning's separator (the hint is "! 1 warning  ? help" then). */
    Warnings *w = &s->result->warnings;
    w->count = 0;
    Warnings_add(w, "a warning about the run");
    Display stable_rank_shown = {.panel = PANEL_STABLE_RANK};
    v.warnings_listed = View_warnings_shown(s, &stable_rank_shown);
    for (int length = 40; length <= 90; length++) {
        char words[128];
        for (int i = 0; i < length; i++)
            words[i] = i % 5 == 4 ? ' ' : 'a' + i % 5;
        words[length - 1] = 'z'; /* the note ends in a letter */
        words[length] = '\0';
        v.note = words;
        char all[STATUS_LINES_MAX * STATUS_LINE_SIZE];
        snprintf(all, sizeof all, "%s", layout(&v, 100, NULL));
        for (char *nl = strchr(all, '\n'); nl; nl = strchr(nl, '\n'))
            *nl = ' ';
        assert_non_null(strstr(all, words));
        assert_non_null(strstr(all, "! 1 warning  ? help"));
    }
    Snapshot_free(s);
}

/* Whether a long note goes on over a second line does not follow the time's digits: the
   layout at a note's every length is the same for a run of 97 ms and one of 1234567 ms. */
static void test_layout_does_not_follow_the_time(void **state)
{
    (void)state;
    Config c = small_config(2);
    Snapshot *s = computed(&c);
    StatusView v = {.config = &c, .shown = s, .current = true, .unicode = true};
    for (int length = 30; length <= 90; length++) {
        char words[128];
        for (int i = 0; i < length; i++)
            words[i] = i % 5 == 4 ? ' ' : 'a' + i % 5;
        words[length - 1] = 'z';
        words[length] = '\0';
        v.note = words;
        int fast, slow;
        s->elapsed_ms = 97;
        layout(&v, 100, &fast);
        s->elapsed_ms = 1234567;
        layout(&v, 100, &slow);
        assert_int_equal(fast, slow);
    }
    Snapshot_free(s);
}

/* "? help" ends the message line at every width, however long the note and the warnings;
   "! N warning(s)" says how to read them, counting what the list ! opens holds: the
   similarity panel's warning too, though that panel is not drawn (only the conditioning's
   are left to its view). */
static void test_help_always_visible(void **state)
{
    (void)state;
    Config c = small_config(2);
    Snapshot *s = computed(&c);
    Warnings *w = &s->result->warnings;
    w->count = 0;
    Warnings_add_about(w, WARNING_ABOUT_SIMILARITY,
                       "token similarity of the network: round-off from layer 7 (tokens equal to "
                       "1e-16 of ||X||), null there");
    Warnings_add(w, "gap deflate: attention rows do not sum to 1, there is no Perron vector; "
                    "fell back to center");
    Display stable_rank_shown = {.panel = PANEL_STABLE_RANK};
    StatusView v = {.config = &c,
                    .shown = s,
                    .current = true,
                    .note = "d raised to 512 with T (T ≤ d: the input has orthonormal rows)",
                    .unicode = true,
                    .shown_subjects = View_subjects(&stable_rank_shown),
                    .warnings_listed = View_warnings_shown(s, &stable_rank_shown)};
    int widths[] = {80, 120, 200};
    for (int k = 0; k < 3; k++) {
        int n;
        layout(&v, widths[k], &n);
        const char *last = lines[n - 1];
        size_t length = strlen(last);
        assert_true(length > 6 && strcmp(last + length - 6, "? help") == 0);
        assert_non_null(strstr(last, "! 2 warnings  ? help"));
    }
    Snapshot_free(s);
}

/* The message line names the first warning about something on screen: by the subject its
   maker gave it, whatever its words. */
static void test_warning_about_what_is_shown(void **state)
{
    (void)state;
    Config c = small_config(2);
    Snapshot *s = computed(&c);
    Warnings *w = &s->result->warnings;
    w->count = 0;
    /* Words that name no panel, so only the subjects can decide. */
    Warnings_add_about(w, WARNING_ABOUT_SIMILARITY, "first alpha");
    Warnings_add_about(w, WARNING_ABOUT_GRADIENTS | WARNING_ABOUT_STABLE_RANK_THEORY,
                       "second beta");
    Warnings_add_about(w, WARNING_ABOUT_SINGULAR_VALUES, "third gamma");
    Warnings_add_about(w, WARNING_ABOUT_EIGENVALUES, "fourth delta");
    Warnings_add(w, "fifth epsilon");
    /* The same text again about another subject: one warning, about both. */
    Warnings_add_about(w, WARNING_ABOUT_SIMILARITY, "third gamma");
    assert_int_equal(w->count, 5);
    assert_int_equal(w->subject[2], WARNING_ABOUT_SINGULAR_VALUES | WARNING_ABOUT_SIMILARITY);
    assert_int_equal(w->subject[4], WARNING_ABOUT_RUN);
    const struct {
        Display display;
        const char *named;
    } cases[] = {
        /* Every panel, the similarity panel below: the first warning. */
        {{.overlays = true, .panel = PANEL_SIMILARITY}, "first alpha"},
        /* Stable ranks with their theory curve: the second; without the curve, the third
           (the histogram is shown). */
        {{.overlays = true, .panel = PANEL_STABLE_RANK}, "second beta"},
        {{.overlays = false, .panel = PANEL_STABLE_RANK}, "third gamma"},
        {{.overlays = false, .panel = PANEL_GRADIENT}, "second beta"},
        /* Zoomed: panel 1 (eigenvalues) alone, panel 3 (stable ranks, no curve) alone. */
        {{.overlays = true, .panel = PANEL_SIMILARITY, .zoom = 1}, "fourth delta"},
        {{.overlays = false, .panel = PANEL_STABLE_RANK, .zoom = 3}, "fifth epsilon"},
        /* The compare view: eigenvalues over stable ranks, twice; no histogram. */
        {{.overlays = false, .panel = PANEL_SIMILARITY, .compare = true}, "fourth delta"},
        {{.overlays = true, .panel = PANEL_SIMILARITY, .compare = true}, "second beta"},
    };
    const char *all[] = {"first alpha", "second beta", "third gamma", "fourth delta",
                         "fifth epsilon"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        StatusView v = {.config = &c,
                        .shown = s,
                        .current = true,
                        .note = "",
                        .unicode = true,
                        .shown_subjects = View_subjects(&cases[i].display)};
        int n;
        layout(&v, 200, &n);
        char expected[64];
        snprintf(expected, sizeof expected, "⚠ %s", cases[i].named);
        if (!strstr(lines[n - 1], expected))
            fail_msg("case %zu: '%s' missing from '%s'", i, expected, lines[n - 1]);
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            if (strcmp(all[k], cases[i].named) != 0 && strstr(lines[n - 1], all[k]))
                fail_msg("case %zu: '%s' named besides '%s'", i, all[k], cases[i].named);
    }
    Snapshot_free(s);
}

/* σ only for softmax and markov; the spectral gap n/a for linear attention; the stable rank
   at the shown layer, and at the last one when that is another. */
static void test_readouts_that_mean_something(void **state)
{
    (void)state;
    Config c = small_config(3);
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

    /* W^Q W^Kᵀ drawn as αZ + βI has no σ (mimetic), softmax's σ comes back with normal keys
       (at the first layer, the one whose logits it describes). */
    c.attention = ATTENTION_SOFTMAX;
    c.layer = 1;
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
    c.layer = 3;

    /* The window mask has no outlier: a line says why, for as long as it is shown. */
    c.attention = ATTENTION_SOFTMAX;
    c.mask = MASK_WINDOW;
    s = computed(&c);
    v.shown = s;
    int n;
    layout(&v, 200, &n);
    assert_int_equal(s->result->outlier, -1);
    /* π²·2/(6T'²) at the configuration's T with w = 1, T' = T − 2/3 (tests/test_theory.c). */
    char note[128];
    double length = c.tokens - 2.0 / 3;
    snprintf(note, sizeof note, "window mask: 1 − |λ2| ≈ %.2g as σ_qk → 0 (π²w(w+1)/(6T′²))",
             M_PI * M_PI / (3 * length * length));
    assert_int_equal(c.window, 1);
    assert_non_null(strstr(lines[n - 2], note));
    Snapshot_free(s);
    /* w = 4 at T = 64: the exact 1 − |λ2| of the σ_qk → 0 matrix is 0.0085959 (numpy), where
       the note once said π²/(3T²) = 0.0008 for every w. */
    c.window = 4;
    c.tokens = c.width = 64;
    s = computed(&c);
    v.shown = s;
    layout(&v, 200, &n);
    assert_non_null(strstr(lines[n - 2], "window mask: 1 − |λ2| ≈ 0.0086 as σ_qk → 0"));
    Snapshot_free(s);
    /* w = 28 at T = 64, past 2w + 1 ≤ T/2: the formula's 0.54 is not the exact 0.409
       (tests/test_theory.c's LAPACK), and that limit has a gap; the note gives no number. */
    c.window = 28;
    s = computed(&c);
    v.shown = s;
    layout(&v, 200, &n);
    assert_int_equal(s->result->outlier, -1);
    assert_non_null(strstr(lines[n - 2], "window mask: no eigenvalue stands apart here; 1 − |λ2| "
                                         "as σ_qk → 0 is not given in closed form"));
    for (int i = 0; i < n; i++)
        assert_null(strstr(lines[i], "0.54"));
    Snapshot_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parameters_and_readouts),
        cmocka_unit_test(test_settings_without_effect_not_shown),
        cmocka_unit_test(test_help_always_visible),
        cmocka_unit_test(test_warning_about_what_is_shown),
        cmocka_unit_test(test_readouts_that_mean_something),
        cmocka_unit_test(test_pending_and_busy),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_note_wraps_at_words),
        cmocka_unit_test(test_layout_does_not_follow_the_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
