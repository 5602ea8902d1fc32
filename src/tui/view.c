#include "view.h"

#include "ascii.h"
#include "keys.h"
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    int row, col, rows, cols;
} Rect;

/* The eigenvalue panel on the left, about square in dots; histogram over stable rank on
   the right. */
static void layout(int cols, int rows, Rect *eigen, Rect *histogram, Rect *stable)
{
    /* Plot rows ≈ panel rows − title, axis, tick labels and two legend rows; a square of
       them is twice as many columns, plus the tick labels. */
    int wanted = 7 + 2 * (rows - 5);
    int left = wanted < cols * 2 / 5 ? cols * 2 / 5 : wanted > cols / 2 ? cols / 2 : wanted;
    int right = cols - left - 1;
    *eigen = (Rect){0, 0, rows, left};
    *histogram = (Rect){0, left + 1, rows / 2, right};
    *stable = (Rect){rows / 2, left + 1, rows - rows / 2, right};
}

static const char *spelled(const Screen *s, const char *utf8, char *buf, size_t size)
{
    if (Screen_unicode(s))
        return utf8;
    return Ascii_transliterate(utf8, buf, size);
}

static void centred(Screen *s, int row, const char *utf8, bool bold)
{
    char buf[256];
    const char *t = spelled(s, utf8, buf, sizeof buf);
    int col = (Screen_cols(s) - Ascii_columns(t)) / 2;
    Screen_text(s, row, col < 0 ? 0 : col, t, INK_DEFAULT, bold);
}

static void size_message(Screen *s)
{
    char line[160];
    int rows = Screen_rows(s);
    snprintf(line, sizeof line, "attnscope needs at least %d×%d", VIEW_MIN_COLS, VIEW_MIN_ROWS);
    centred(s, rows / 2 - 1, line, true);
    snprintf(line, sizeof line, "this terminal is %d×%d", Screen_cols(s), rows);
    centred(s, rows / 2, line, false);
    centred(s, rows / 2 + 1, "enlarge it, or press q to quit", false);
}

/* The σ of the circular and quartercircle laws, where they apply (SPEC §3): markov, and
   softmax on orthonormal input, with every key allowed. */
static double theory_sigma(const Snapshot *s)
{
    const Config *c = &s->config;
    bool applies = (c->attention == ATTENTION_SOFTMAX || c->attention == ATTENTION_MARKOV) &&
                   c->mask == MASK_FULL;
    return applies ? s->sigma : NAN;
}

/* "of A, ℓ=1, T=256", naming the gap mode actually applied at the shown layer. */
static void matrix_words(const Snapshot *s, char *out, size_t size)
{
    snprintf(out, size, "of A%s%s, ℓ=%d, T=%d", s->shown_gap == GAP_OFF ? "" : ", gap ",
             s->shown_gap == GAP_OFF ? "" : GAP_NAMES.names[s->shown_gap], s->config.layer,
             s->config.tokens);
}

static void spectra_panels(const Snapshot *shown, Canvas *eigen, Canvas *histogram)
{
    char t1[160], t2[160], words[96], wait[96];
    if (!shown || shown->failed || !shown->spectra_ready) {
        const char *why = "computing…";
        if (shown && shown->failed)
            why = "the computation failed (see the status line)";
        else if (shown) {
            snprintf(wait, sizeof wait, "waiting for layer %d (%d of %d done)", shown->config.layer,
                     shown->layers_done, shown->config.depth);
            why = wait;
        }
        Plot_message(eigen, "eigenvalues √T·λ", why);
        Plot_message(histogram, "singular values √T·s", why);
        return;
    }
    matrix_words(shown, words, sizeof words);
    snprintf(t1, sizeof t1, "eigenvalues √T·λ %s%s", words,
             shown->eigenvalues_exact ? ", exact: the diagonal" : "");
    snprintf(t2, sizeof t2, "singular values √T·s %s", words);
    double scale = sqrt((double)shown->tokens), sigma = theory_sigma(shown);
    EigenvaluePlot e = {t1,    shown->tokens, shown->eigenvalues,
                        scale, sigma,         shown->eigenvalues_exact};
    Plot_eigenvalues(eigen, &e);
    HistogramPlot h = {t2,
                       shown->tokens,
                       shown->singular_values,
                       scale,
                       sigma,
                       shown->config.attention == ATTENTION_MARKOV ? "quartercircle law"
                                                                   : "i.i.d. Markov limit"};
    Plot_histogram(histogram, &h);
}

static void stable_rank_panel(const Snapshot *shown, Canvas *c)
{
    const char *heading = "stable rank sr(Σℓ) against depth, log axis";
    if (!shown || shown->failed) {
        Plot_message(c, heading, shown ? "the computation failed" : "computing…");
        return;
    }
    char network[64], counterpart[64], t[128];
    snprintf(t, sizeof t, "%s%s", heading, shown->config.seeds > 1 ? " (seed 1)" : "");
    snprintf(network, sizeof network, "network (gap %s)", GAP_NAMES.names[shown->config.gap]);
    snprintf(counterpart, sizeof counterpart, "counterpart (gap %s)",
             GAP_NAMES.names[shown->counterpart_gap]);
    StableRankPlot p = {t,       shown->depth, shown->stable_rank,   shown->counterpart_stable_rank,
                        network, counterpart,  shown->config.tokens, shown->config.layer};
    Plot_stable_rank(c, &p);
}

static void help_overlay(Screen *s, int rows, int cols)
{
    int n = Keys_count(), half = (n + 1) / 2;
    char lines[64][KEYS_HELP_SIZE * 2], buf[KEYS_HELP_SIZE], ascii[KEYS_HELP_SIZE * 2];
    int width = 0;
    for (int i = 0; i < n && i < 64; i++) {
        Keys_help_line(Keys_at(i), buf, sizeof buf);
        snprintf(lines[i], sizeof lines[i], "%s", spelled(s, buf, ascii, sizeof ascii));
        int w = Ascii_columns(lines[i]);
        width = w > width ? w : width;
    }
    int box_cols = 2 * width + 7, box_rows = half + 4;
    if (box_cols > cols)
        box_cols = cols;
    if (box_rows > rows)
        box_rows = rows;
    int top = (rows - box_rows) / 2, left = (cols - box_cols) / 2;
    Screen_box(s, top, left, box_rows, box_cols);
    char title[64];
    Screen_text(s, top, left + 2, spelled(s, " attnscope keys ", title, sizeof title), INK_DEFAULT,
                true);
    for (int i = 0; i < n && i < 64; i++)
        Screen_text(s, top + 2 + i % half, left + 2 + (i / half) * (width + 3), lines[i],
                    INK_DEFAULT, false);
}

bool View_draw(Screen *s, const View *v, bool repaint)
{
    int cols = Screen_cols(s), rows = Screen_rows(s);
    Screen_erase(s);
    if (cols < VIEW_MIN_COLS || rows < VIEW_MIN_ROWS) {
        size_message(s);
        Screen_show(s, repaint);
        return false;
    }
    char status[STATUS_LINES_MAX][STATUS_LINE_SIZE];
    int n = Status_layout(&v->status, cols, status, STATUS_LINES_MAX);
    int panel_rows = rows - n;
    Rect r[3];
    layout(cols, panel_rows, &r[0], &r[1], &r[2]);
    Canvas *canvas[3];
    bool unicode = Screen_unicode(s);
    for (int i = 0; i < 3; i++)
        canvas[i] = Canvas_new(r[i].cols, r[i].rows, unicode);
    if (canvas[0] && canvas[1] && canvas[2]) {
        spectra_panels(v->status.shown, canvas[0], canvas[1]);
        stable_rank_panel(v->status.shown, canvas[2]);
        for (int i = 0; i < 3; i++)
            Screen_canvas(s, canvas[i], r[i].row, r[i].col);
    } else {
        centred(s, panel_rows / 2, "out of memory for the plots", true);
    }
    for (int i = 0; i < 3; i++)
        Canvas_free(canvas[i]);
    for (int i = 0; i < n; i++)
        Screen_text(s, panel_rows + i, 0, status[i], INK_DEFAULT, i == 0);
    if (v->help)
        help_overlay(s, panel_rows, cols);
    Screen_show(s, repaint);
    return true;
}
