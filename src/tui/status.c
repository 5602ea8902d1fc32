#include "status.h"

#include "ascii.h"
#include "duration.h"
#include "figure.h"
#include "attnscope/layer.h"
#include "attnscope/theory.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Every setting, and the readouts after them. */
enum { FIELDS_MAX = SETTINGS_MAX + 16, FIELD_SIZE = 96, MESSAGE_SIZE = 768 };

typedef struct {
    char text[FIELDS_MAX][FIELD_SIZE];
    bool line_break[FIELDS_MAX]; /* start a new line before this field */
    int count;
} Fields;

static void field(Fields *f, bool line_break, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void field(Fields *f, bool line_break, const char *fmt, ...)
{
    if (f->count == FIELDS_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->text[f->count], FIELD_SIZE, fmt, ap);
    va_end(ap);
    f->line_break[f->count++] = line_break;
}

/* A readout: its value when the shown snapshot belongs to the settings and has it, "…"
   while it is being computed, "n/a" when it is undefined. */
static void readout(Fields *f, const StatusView *v, const char *label, double value,
                    const char *format)
{
    char number[32];
    if (!v->current || (!isfinite(value) && v->busy))
        snprintf(number, sizeof number, "…");
    else
        Figure_number(number, sizeof number, format, value, FIGURE_MISSING);
    field(f, false, "%s=%s", label, number);
}

/* Every setting as the settings table shows it; the gap also says what the shown snapshot
   applied (deflate may fall back to center) and how many outliers it removed. */
static void parameters(Fields *f, const StatusView *v)
{
    const Config *c = v->config;
    const Snapshot *s = v->current ? v->shown : NULL;
    bool first = true;
    if (v->weights) { /* the weights are the checkpoint's: it says what the network is */
        field(f, true, "weights=%s", v->weights);
        first = false;
    }
    char input[FIELD_SIZE - 8];
    if (Layer_input_source(c, input, sizeof input)) { /* the ids, and the table they index */
        field(f, first, "input=%s", input);
        first = false;
    }
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *setting = Settings_at(i);
        char text[FIELD_SIZE];
        if (!Setting_show(setting, c, text, sizeof text))
            continue;
        /* Only what acts in the run (the table's in_use): "σ_qk=1" under --init gpt2, or
           "init=gpt2" under a checkpoint's weights, would claim what the network does not
           have. */
        if (!Setting_has_effect(setting, c))
            continue;
        size_t used = strlen(text);
        if (setting->offset == offsetof(Config, gap) && s && s->result->spectra_ready) {
            if (s->result->shown_gap != c->gap)
                used += (size_t)snprintf(text + used, sizeof text - used, "→%s",
                                         GAP_NAMES.names[s->result->shown_gap]);
            if (s->result->outliers_removed > 0 && used < sizeof text)
                snprintf(text + used, sizeof text - used, "(r=%d)", s->result->outliers_removed);
        }
        field(f, first, "%s", text);
        first = false;
    }
}

static bool from_layer(int first, int layer)
{
    return first != CURVES_NO_LAYER && layer >= first;
}

/* sr(Σ_ℓ) of the network at one layer of r (NULL: none yet) (docs/model.md §2): "1+2e-05"
   when collapsed, where "1" alone would hide how close (sr − 1 reaches 1e-13); "1 (round-off)"
   where the tokens are equal within round-off (sr − 1 is NaN there, assemble.c): sr − 1 ≤
   (μ²/(1 − μ²))² < 1e-48 with the relative spread μ below the similarity's resolution, below
   every digit of sr, and its computed value is rounding; "round-off"
   where the network passes on rounding alone ("Round-off from a layer on"); with an ensemble
   the mean ± std over the seeds done, as the panel's band. */
static void stable_rank_field(Fields *f, const StatusView *v, int layer, const Result *r)
{
    char label[32];
    snprintf(label, sizeof label, "sr(ℓ=%d)", layer);
    const Curves *n = r ? &r->network : NULL;
    if (!v->current || !n || layer < 1 || layer > r->layers_done) {
        readout(f, v, label, NAN, "%.4g");
        return;
    }
    double sr = n->stable_rank[layer], minus_one = n->stable_rank_minus_one[layer];
    if (from_layer(n->noise_from, layer)) {
        field(f, false, "%s=round-off", label);
    } else if (r->seeds_done > 1) { /* n/a where a seed has no value (noise, a dead network) */
        double mean = r->stable_rank_band.mean[layer];
        if (isfinite(mean))
            field(f, false, "%s=%.4g±%.2g (mean of %d seeds)", label, mean,
                  r->stable_rank_band.std[layer], r->seeds_done);
        else
            readout(f, v, label, NAN, "%.4g");
    } else if (isfinite(sr) && isnan(minus_one)) { /* tokens equal within round-off */
        field(f, false, "%s=1 (round-off)", label);
    } else if (isfinite(sr) && minus_one == 0) {
        field(f, false, "%s=1", label);
    } else if (isfinite(sr) && minus_one < 1e-3) {
        field(f, false, "%s=1+%.2g", label, minus_one);
    } else {
        readout(f, v, label, sr, "%.4g");
    }
}

static void readouts(Fields *f, const StatusView *v)
{
    const Snapshot *s = v->current ? v->shown : NULL;
    const Config *c = v->config;
    /* σ is the entry spread of softmax and markov attention over every key; elsewhere (other
       kinds, masks, a layer whose softmax reads the tokens earlier layers made) it names
       nothing, and where the first layer reads rows of another norm than it was computed for
       it is not known (the theory's σ is then NaN).  It is shown where its circle is. */
    double shown_sigma = Theory_shown_sigma(c);
    bool sigma = isfinite(shown_sigma);
    if (sigma)
        field(f, true, "σ=%.4g", shown_sigma);
    readout(f, v, "logit std", s ? s->result->logit_std : NAN, "%.3g");
    if (!sigma) /* the readouts still start a line */
        f->line_break[f->count - 1] = true;
    bool spectra = s && s->result->spectra_ready;
    readout(f, v, "1−|λ2|", spectra ? s->result->readouts.one_minus_abs_lambda2 : NAN, "%.3g");
    readout(f, v, "s1/s2", spectra ? s->result->readouts.s1_over_s2 : NAN, "%.3g");
    readout(f, v, "|λ|>0.5", spectra ? s->result->readouts.count_abs_lambda_above_half : NAN,
            "%.0f");
    /* The shown layer's stable rank, then the last layer's when that is another. */
    const Result *r = s ? s->result : NULL;
    bool shown_done = r && c->layer <= r->layers_done;
    stable_rank_field(f, v, c->layer, r);
    if (c->layer != c->depth)
        stable_rank_field(f, v, r && r->layers_done > 0 ? r->layers_done : c->depth, r);
    /* The entropy view's readouts at the shown layer: the mean of H_i / ln n_i over the rows
       (1: uniform, 0: one-hot) and the mean of the rows' largest weight. */
    if (v->shown_subjects & WARNING_ABOUT_ENTROPY) {
        readout(f, v, "H/ln n", shown_done ? r->network.entropy.normalised_mean[c->layer] : NAN,
                "%.3g");
        readout(f, v, "max A", shown_done ? r->network.entropy.max_weight_mean[c->layer] : NAN,
                "%.3g");
    }
}

/* The busy indicator with progress and the time left, or how long the shown result took. */
/* A result's time is given room for TIME_DIGITS digits: whether a long message goes on over a
   line more must not follow the time's digits, or the layout would change with the machine's
   speed. */
enum { TIME_DIGITS = 7 };

/* What the job is doing, or how long the shown result took, into m; returns the columns its
   time may still grow by (TIME_DIGITS). */
static int activity(char *m, const StatusView *v)
{
    const Snapshot *s = v->current ? v->shown : NULL;
    static const char *const braille[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
    static const char *const ascii[] = {"|", "/", "-", "\\"};
    if (v->busy && v->stopping) {
        /* Not "computing 0%": the new job has not started yet. */
        const char *spin = v->unicode ? braille[v->spinner % 10] : ascii[v->spinner % 4];
        snprintf(m, MESSAGE_SIZE, "%s stopping the previous job, %.1f s", spin, v->busy_ms / 1e3);
    } else if (v->busy) {
        const char *spin = v->unicode ? braille[v->spinner % 10] : ascii[v->spinner % 4];
        /* What the job is doing: a checkpoint's layer read and converted, or computing. */
        char doing[48] = "computing", time[32];
        if (v->reading_layer > 0)
            snprintf(doing, sizeof doing, "reading layer %d/%d,", v->reading_layer,
                     v->reading_depth);
        if (v->estimated) {
            Duration_text(v->seconds_left, DURATION_ABOUT, time, sizeof time);
            strncat(time, " left", sizeof time - strlen(time) - 1);
        } else {
            snprintf(time, sizeof time, "%.1f s", v->busy_ms / 1e3);
        }
        snprintf(m, MESSAGE_SIZE, "%s %s %.0f%%, %s", spin, doing, 100 * v->progress, time);
    } else if (s && s->failed) {
        snprintf(m, MESSAGE_SIZE, "failed");
    } else if (s) {
        int digits = snprintf(NULL, 0, "%.0f", s->elapsed_ms);
        snprintf(m, MESSAGE_SIZE, "computed in %.0f ms", s->elapsed_ms);
        return digits < TIME_DIGITS ? TIME_DIGITS - digits : 0;
    } else {
        m[0] = '\0';
    }
    return 0;
}

/* Appends part (after " | " unless first), cut at MESSAGE_SIZE; fit() shortens later. */
static void message_add(char *m, const char *part)
{
    size_t used = strlen(m);
    if (used)
        strncat(m, " | ", MESSAGE_SIZE - used - 1);
    used = strlen(m);
    strncat(m, part, MESSAGE_SIZE - used - 1);
}

/* Whether a warning is about something on screen: a warning about the run as a whole always
   is; one about a panel or an overlay only while that is drawn. */
static bool on_screen(const StatusView *v, unsigned subject)
{
    return (subject & (v->shown_subjects | WARNING_ABOUT_RUN)) != 0;
}

/* The message: what the job is doing, the last key's note and an error, in m; the first
   warning about what is on screen (after " | "), in warning ("" when none).  Returns the
   columns the message's time may still grow by (activity). */
static int message(char *m, char *warning, const StatusView *v)
{
    const Snapshot *s = v->current ? v->shown : NULL;
    int time_slack = activity(m, v);
    /* The last key's note first: it answers what was just pressed. */
    if (v->note && v->note[0])
        message_add(m, v->note);
    if (v->exporting)
        message_add(m, v->exporting);
    char part[MESSAGE_SIZE];
    if (s && s->failed) {
        snprintf(part, sizeof part, "error: %s", s->error);
        message_add(m, part);
    }
    warning[0] = '\0';
    for (int i = 0; s && i < s->result->warnings.count; i++)
        if (on_screen(v, s->result->warnings.subject[i])) {
            snprintf(warning, MESSAGE_SIZE, "%s⚠ %s", m[0] ? " | " : "",
                     s->result->warnings.text[i]);
            break;
        }
    return time_slack;
}

/* What stays at the right end of the message line at any width: the way to the warnings,
   counted as the list ! opens counts them, and to the help. */
static void keys_hint(const StatusView *v, char *out, size_t size)
{
    int n = v->warnings_listed;
    if (n > 0)
        snprintf(out, size, "! %d warning%s  ? help", n, n > 1 ? "s" : "");
    else
        snprintf(out, size, "? help  q quit");
}

/* The one line the picture needs to be read right, kept as long as it is true (written into
   note where it carries a number). */
static const char *explanation(const StatusView *v, char *note, size_t size)
{
    const Snapshot *s = v->current ? v->shown : NULL;
    if (!s || !s->result->spectra_ready)
        return NULL;
    const Result *r = s->result;
    /* A lower-triangular A without a causal mask is a diagonal one (identity attention). */
    bool causal = r->config.mask == MASK_CAUSAL || r->config.mask == MASK_WINDOW_CAUSAL;
    if (r->eigenvalues_exact && causal)
        return "eigenvalues exact: the diagonal of the triangular A (token i sees only j ≤ i), "
               "so all real";
    if (r->eigenvalues_exact)
        return "eigenvalues exact: A is diagonal (each token attends only to itself), so all real";
    if (Config_layer_mask(&r->config, r->config.layer) == MASK_WINDOW && r->shown_gap == GAP_OFF &&
        r->outlier < 0 && Config_rows_stochastic(&r->config)) {
        int T = r->config.tokens, w = r->config.window;
        /* Past 2w + 1 ≤ T/2 the formula is not the limit, and the limit has a gap: no claim. */
        if (!Theory_window_spectral_gap_holds(T, w))
            return "window mask: no eigenvalue stands apart here; 1 − |λ2| as σ_qk → 0 is not "
                   "given in closed form for a window this wide, 2w + 1 > T/2 (docs/model.md §3)";
        snprintf(note, size,
                 "window mask: 1 − |λ2| ≈ %.2g as σ_qk → 0 (π²w(w+1)/(6T′²)), so no eigenvalue "
                 "stands apart: there is no spectral gap (docs/model.md §3)",
                 Theory_window_spectral_gap(T, w));
        return note;
    }
    Attention kind = r->config.attention;
    if (!Theory_describes_shown_layer(&r->config) && kind != ATTENTION_LINEAR)
        return "the theory over these spectra (σ, its laws, the predicted λ1) is layer 1's, on "
               "orthonormal tokens; this layer reads the tokens the layers before it made";
    return NULL;
}

/* Cuts s (UTF-8) to at most width columns, ending in an ellipsis when cut. */
static void fit(char *s, int width, bool unicode)
{
    Ascii_cut(s, width, unicode ? "…" : "...");
}

/* Moves the words of text that fit in width columns (at least one, cut if it alone is
   wider) into line, leaving the rest in text.  Returns 1 (the line taken). */
static int words_line(char *text, int width, char *line)
{
    size_t cut = Ascii_words_fit(text, width);
    if (cut == 0) { /* one word wider than the line */
        snprintf(line, STATUS_LINE_SIZE, "%s", text);
        Ascii_cut(line, width, NULL);
        cut = strlen(line);
    } else {
        snprintf(line, STATUS_LINE_SIZE, "%.*s", (int)cut, text);
    }
    while (text[cut] == ' ')
        cut++;
    memmove(text, text + cut, strlen(text + cut) + 1);
    return 1;
}

/* Lines the fields [from, to) take when flowed with `gap` spaces between them. */
static int flow_lines(const Fields *f, int from, int to, int width, int gap)
{
    int lines = 0, col = 0;
    for (int i = from; i < to; i++) {
        int w = Ascii_columns(f->text[i]);
        if (lines == 0 || col + gap + w > width) {
            lines++;
            col = w;
        } else {
            col += gap + w;
        }
    }
    return lines;
}

int Status_layout(const StatusView *v, int width, char lines[][STATUS_LINE_SIZE], int max)
{
    Fields f = {.count = 0};
    parameters(&f, v);
    readouts(&f, v);
    if (!v->unicode)
        for (int i = 0; i < f.count; i++) {
            char ascii[FIELD_SIZE];
            Ascii_transliterate(f.text[i], ascii, sizeof ascii);
            memcpy(f.text[i], ascii, sizeof ascii);
        }
    int n = 0;
    for (int from = 0; from < f.count && n < max - 1;) {
        int to = from + 1;
        while (to < f.count && !f.line_break[to])
            to++;
        /* Two spaces between fields, one when that saves a line. */
        int gap = flow_lines(&f, from, to, width, 1) < flow_lines(&f, from, to, width, 2) ? 1 : 2;
        int col = 0;
        bool started = false;
        for (int i = from; i < to; i++) {
            int w = Ascii_columns(f.text[i]);
            if (!started || col + gap + w > width) {
                if (n == max - 1)
                    break;
                lines[n++][0] = '\0';
                col = 0;
                started = true;
            } else {
                strcat(lines[n - 1], gap == 1 ? " " : "  ");
                col += gap;
            }
            strncat(lines[n - 1], f.text[i], STATUS_LINE_SIZE - strlen(lines[n - 1]) - 1);
            col += w;
            fit(lines[n - 1], width, v->unicode);
        }
        from = to;
    }
    char text[MESSAGE_SIZE], note[MESSAGE_SIZE];
    const char *why = explanation(v, note, sizeof note);
    if (why) {
        /* Its point is at its end ("… so all real"): broken between words over the lines it
           needs, never cut. */
        if (v->unicode)
            snprintf(text, sizeof text, "%s", why);
        else
            Ascii_transliterate(why, text, sizeof text);
        while (text[0] && n < max - 1)
            n += words_line(text, width, lines[n]);
    }
    char m[MESSAGE_SIZE], warning[MESSAGE_SIZE], hint[64];
    int time_slack = message(m, warning, v);
    keys_hint(v, hint, sizeof hint);
    if (!v->unicode) {
        Ascii_transliterate(m, text, sizeof text);
        snprintf(m, sizeof m, "%s", text);
        Ascii_transliterate(warning, text, sizeof text);
        snprintf(warning, sizeof warning, "%s", text);
    }
    /* The message gives way to the hint, which ends the line.  What a key said (a tour
       step's title) is read whole: where it does not fit beside the hint, it goes on over
       a line more, broken between words; the warning after it is cut (! lists them). */
    int room = width - Ascii_columns(hint) - 2;
    /* A warning after it takes its separator and an ellipsis at least. */
    int warning_least = warning[0] ? Ascii_columns(" | …") : 0;
    if (Ascii_columns(m) + time_slack > room - warning_least && n < max - 1)
        n += words_line(m, width, lines[n]);
    char *last = lines[n++];
    /* All of it went up: the warning starts the line without its separator. */
    bool separator = m[0] || strncmp(warning, " | ", 3) != 0;
    snprintf(last, STATUS_LINE_SIZE, "%s", m);
    strncat(last, separator ? warning : warning + 3, STATUS_LINE_SIZE - strlen(last) - 1);
    fit(last, room, v->unicode);
    int used = Ascii_columns(last);
    size_t at = strlen(last);
    while (used++ < room + 2 && at + 1 < STATUS_LINE_SIZE)
        last[at++] = ' ';
    snprintf(last + at, STATUS_LINE_SIZE - at, "%s", hint);
    return n;
}
