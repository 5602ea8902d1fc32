/* One frame (view.h): the panels' places for the terminal's size, zoom and presentation mode
 * (with the tour's caption in rows of its own), the status lines under them and the overlays
 * over them.  What the panels show is view_panels.c's; the overlays are view_overlays.c's. */
#include "view_internal.h"

#include "ascii.h"
#include "plot.h"
#include "tour.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* The eigenvalue panel on the left, about square in dots; histogram over stable rank on
   the right. */
static void layout(int cols, int rows, ViewRect *eigen, ViewRect *histogram, ViewRect *stable)
{
    /* Plot rows ≈ panel rows − title, axis, tick labels and two legend rows; a square of
       them is twice as many columns, plus the tick labels. */
    int wanted = 7 + 2 * (rows - 5);
    int left = wanted < cols * 2 / 5 ? cols * 2 / 5 : wanted > cols / 2 ? cols / 2 : wanted;
    int right = cols - left - 1;
    *eigen = (ViewRect){0, 0, rows, left};
    /* Below 19 rows (80×24 under a status of six lines: an ensemble's, with a note) half
       would leave the stable-rank panel, whose legend is the taller, too small to draw: the
       histogram keeps its 7 and the stable-rank panel takes the rest. */
    int upper = rows < 19 ? 7 : rows / 2;
    *histogram = (ViewRect){0, left + 1, upper, right};
    *stable = (ViewRect){upper, left + 1, rows - upper, right};
}

static void centred(Screen *s, int row, const char *utf8, bool bold)
{
    char buf[256];
    const char *t = View_spelled(s, utf8, buf, sizeof buf);
    int col = (Screen_cols(s) - Ascii_columns(t)) / 2;
    Screen_text(s, row, col < 0 ? 0 : col, t, INK_DEFAULT, bold);
}

/* The rows utf8 takes word-wrapped to the terminal's width (a word wider than it alone on a
   row, cut at the edge), drawn centred from row where draw is set. */
static int wrapped(Screen *s, const char *utf8, int row, bool bold, bool draw)
{
    char buf[256], line[256];
    const char *t = View_spelled(s, utf8, buf, sizeof buf);
    int rows = 0;
    while (*t) {
        size_t n = Ascii_words_fit(t, Screen_cols(s));
        if (!n)
            n = strcspn(t, " ");
        snprintf(line, sizeof line, "%.*s", (int)n, t);
        if (draw)
            centred(s, row + rows, line, bold);
        rows++;
        t += n;
        while (*t == ' ')
            t++;
    }
    return rows;
}

/* What the terminal needs, what it is and how to leave, each sentence wrapped to the width,
   in the first `rows` rows; where the three do not fit them, a brief form, so that a terminal
   of any size says what it needs and how to leave: q quits, but while a prompt takes text
   (the : line, a directory, a name) q is typed into it, and Esc closes it first. */
static void size_message(Screen *s, int rows, bool typing)
{
    char need[64], have[64], brief_need[32];
    snprintf(need, sizeof need, "attnscope needs at least %d×%d", VIEW_MIN_COLS, VIEW_MIN_ROWS);
    snprintf(have, sizeof have, "this terminal is %d×%d", Screen_cols(s), Screen_rows(s));
    snprintf(brief_need, sizeof brief_need, "needs %d×%d", VIEW_MIN_COLS, VIEW_MIN_ROWS);
    const char *leave = typing
                            ? "enlarge it; Esc closes the line, then q quits"
                            : "enlarge it, or press q to quit; other keys do nothing at this size";
    const char *full[] = {need, have, leave},
               *brief[] = {brief_need, typing ? "Esc closes the line" : "q quits", NULL};
    int taken = 0;
    for (int i = 0; i < 3; i++)
        taken += wrapped(s, full[i], 0, false, false);
    const char **lines = taken <= rows ? full : brief;
    if (lines == brief)
        for (int i = taken = 0; i < 2; i++)
            taken += wrapped(s, brief[i], 0, false, false);
    int row = (rows - taken + 1) / 2 < 0 ? 0 : (rows - taken + 1) / 2;
    for (int i = 0; i < 3 && lines[i]; i++)
        row += wrapped(s, lines[i], row, i == 0, true);
}

/* Presentation mode: the loaded preset's "Point at:" note in a box under the panels, in rows
   of its own, word-wrapped, so that the class reads what to look at and every panel stays
   whole. */
enum { CAPTION_BOX_COLS_MAX = 110 };

static int caption_box_cols(int cols)
{
    return cols < CAPTION_BOX_COLS_MAX ? cols : CAPTION_BOX_COLS_MAX;
}

/* Presentation mode is read from the back of a room: a panel shorter than this is not drawn
   there (the screen shows fewer panels, and says how to see the others).  At 80 columns a
   panel's frame takes up to 9 rows: its title (1, or 2 where the eigenvalue panel's wraps),
   the x axis and its tick labels (2) and its legend (up to 6 rows: the stable-rank panel's
   two curves, the theory's three-line note, the shown layer).  14 rows leave every panel at
   least 5 plot rows, 20 dots: a log axis's decade labels (T, 10, 1) each on a row of its own
   with a row between them, and the eigenvalues' disk still round (tests/tui/present.sh
   measures the plot rows on the screen at 80x24, 100x30 and 120x40). */
enum { PRESENT_PANEL_ROWS_MIN = 14 };
/* The compare view's eigenvalue panels below this height (title, legend and axes take six of
   their rows) leave the disk a few rows, too flat to read: its stable-rank row is then hidden
   as presentation mode hides a lower row (at 80x24 the upper row gets 10 rows, at 100x30 13). */
enum { COMPARE_PANEL_ROWS_MIN = 12 };

/* The rows the panels need: in presentation mode one row of panels at its minimum (the note
   says on its border which are hidden); elsewhere the rows they need to be drawn at all, measured
   at 80 columns: the right-hand column's histogram (7) over its stable-rank panel (8); the
   compare view's eigenvalues over stable ranks (8 each); one panel alone (8). */
static int panels_min_rows(const Display *d)
{
    if (d->present)
        return PRESENT_PANEL_ROWS_MIN;
    int count = Display_panel_count(d);
    if (d->zoom >= 1 && d->zoom <= count)
        return 8;
    return d->compare ? 16 : 15;
}

/* The rows the caption's box takes under panels of `area` rows: all its lines, but at most a
   third of the area and never the rows the panels need (a line of it at least). */
static int caption_rows(Screen *s, const char *caption, int area, int cols, const Display *d)
{
    int width = caption_box_cols(cols) - 4, most = area / 3;
    if (most > area - panels_min_rows(d))
        most = area - panels_min_rows(d);
    if (most < 3)
        most = 3;
    int lines = View_wrapped(s, false, caption, 0, 0, area, width);
    return 2 + lines < most ? 2 + lines : most;
}

/* The note as its box shows it.  The note points at the eigenvalue panel's outlier ("the
   point at 1"), which off scale is only an arrow on the border: while that panel is drawn so,
   the note opens with the outlier's value and where the arrow is (its first line, the one
   every size shows). */
static const char *caption_text(const View *v, char *out, size_t size)
{
    const Snapshot *shown = v->status.shown;
    const Display *d = &v->display;
    bool eigenvalues_drawn = !d->compare && d->panel != PANEL_ATTENTION_MAP &&
                             (d->zoom < 1 || d->zoom > Display_panel_count(d) || d->zoom == 1);
    if (!eigenvalues_drawn || !shown || shown->failed || !shown->result->spectra_ready)
        return v->caption;
    char t1[FIGURE_TITLE_SIZE], t2[FIGURE_TITLE_SIZE], pinned[256];
    EigenvaluePlot e;
    HistogramPlot h;
    EigenvalueFigure fig;
    Figure_spectra(shown->result, d->overlays, t1, t2, &e, &h);
    Figure_eigenvalues(&e, &fig);
    Figure_pinned_outlier(&e, &fig, pinned, sizeof pinned);
    if (!pinned[0])
        return v->caption;
    snprintf(out, size, "%s %s", pinned, v->caption);
    return out;
}

/* Whether p starts one of the note's numbered items: "(2) ". */
static bool item_start(const char *p)
{
    return p[0] == '(' && isdigit((unsigned char)p[1]) && p[2] == ')';
}

/* The note without its numbered items ("(2) the stray bar of the histogram is gone, ...;")
   that name a panel left out at this height (left_out: "histogram"), in out, so that it
   points only at what is drawn; the note itself where none does. */
static const char *items_drawn(const char *note, const char *left_out, char *out, size_t size)
{
    size_t used = 0;
    bool dropped = false;
    out[0] = '\0';
    for (const char *p = note; *p;) {
        const char *next = p + 1;
        while (*next && !(next[-1] == ' ' && item_start(next)))
            next++;
        char item[TOUR_CAPTION_SIZE + 256];
        snprintf(item, sizeof item, "%.*s", (int)(next - p), p);
        if (item_start(p) && strstr(item, left_out))
            dropped = true;
        else if (used + strlen(item) < size)
            used += (size_t)snprintf(out + used, size - used, "%s", item);
        p = next;
    }
    while (used > 0 && (out[used - 1] == ' ' || out[used - 1] == ';'))
        out[--used] = '\0';
    return dropped ? out : note;
}

/* The note's box; hidden (or NULL) says on its top border which panels are not drawn. */
static void caption_box(Screen *s, const char *caption, int top, int box_rows, int cols,
                        const char *hidden)
{
    int box_cols = caption_box_cols(cols), width = box_cols - 4, left = (cols - box_cols) / 2;
    char buf[256];
    Screen_box(s, top, left, box_rows, box_cols);
    Screen_text(s, top, left + 2, View_spelled(s, " tour ", buf, sizeof buf), INK_DEFAULT, true);
    if (hidden) {
        char text[192], cut[384];
        snprintf(text, sizeof text, " %s ", hidden);
        const char *shown = View_spelled_cut(s, text, box_cols - 11, cut, sizeof cut);
        int at = left + box_cols - 2 - Ascii_columns(shown);
        Screen_text(s, top, at, shown, INK_DEFAULT, false);
    }
    int lines = View_wrapped(s, false, caption, 0, 0, 4 * box_rows + 64, width);
    View_wrapped(s, true, caption, top + 1, left + 2, box_rows - 2, width);
    /* Cut: say where the rest is, on the bottom border. */
    const char *rest = " more: a taller terminal shows the rest ";
    if (lines > box_rows - 2 && Ascii_columns(rest) + 4 <= box_cols)
        Screen_text(s, top + box_rows - 1, left + box_cols - Ascii_columns(rest) - 2, rest,
                    INK_DEFAULT, false);
}

/* Two columns, each an eigenvalue panel over a stable-rank panel. */
static void compare_layout(int cols, int rows, ViewRect r[4])
{
    /* The stable-rank panels need their legends: on a small terminal, half the rows. */
    int left = (cols - 1) / 2, right = cols - left - 1, top = rows < 30 ? rows / 2 : rows * 3 / 5;
    r[0] = (ViewRect){0, 0, top, left};
    r[1] = (ViewRect){top, 0, rows - top, left};
    r[2] = (ViewRect){0, left + 1, top, right};
    r[3] = (ViewRect){top, left + 1, rows - top, right};
}

/* Which of the frame's panels are drawn: every one, or the zoomed one alone, or in
   presentation mode with the lower row hidden, the upper row. */
static void panels_shown(const Display *d, bool lower_hidden, bool shown[VIEW_PANELS_MAX])
{
    int count = Display_panel_count(d);
    bool zoomed = d->zoom >= 1 && d->zoom <= count;
    for (int i = 0; i < VIEW_PANELS_MAX; i++)
        shown[i] = i < count && (zoomed ? d->zoom == i + 1 : true);
    /* The lower row: the compare view's second and fourth panel, the histogram otherwise. */
    if (lower_hidden && !zoomed) {
        shown[1] = false;
        shown[3] = shown[3] && !d->compare;
    }
}

/* What the shown panels are about, as warnings name it (WarningSubject bits). */
static unsigned panels_subjects(const Display *d, const bool shown[VIEW_PANELS_MAX])
{
    /* Each panel's subjects, in the order zoom counts the panels. */
    unsigned spectra_theory = WARNING_ABOUT_SPECTRA_THEORY; /* the circles are always drawn */
    unsigned rank_theory = d->overlays ? WARNING_ABOUT_STABLE_RANK_THEORY : 0;
    unsigned eigen = WARNING_ABOUT_EIGENVALUES | spectra_theory;
    unsigned stable = WARNING_ABOUT_STABLE_RANK | rank_theory;
    unsigned main_panel_subjects[PANEL_COUNT] = {
        [PANEL_STABLE_RANK] = stable,
        [PANEL_WIDTH_SWEEP] = rank_theory,
        [PANEL_GRADIENT] = WARNING_ABOUT_GRADIENTS,
        [PANEL_SIMILARITY] = WARNING_ABOUT_SIMILARITY,
        [PANEL_ENTROPY] = WARNING_ABOUT_ENTROPY,
        [PANEL_CONDITIONING] = WARNING_ABOUT_CONDITIONING,
    };
    unsigned panel[VIEW_PANELS_MAX] = {0};
    if (d->compare && d->panel == PANEL_CONDITIONING) {
        /* κ and K's singular values, of each initialisation. */
        for (int i = 0; i < 4; i++)
            panel[i] = WARNING_ABOUT_CONDITIONING;
    } else if (d->compare) {
        panel[0] = panel[2] = eigen;
        panel[1] = panel[3] = stable;
    } else if (Display_panel_count(d) == 1) {
        panel[0] = WARNING_ABOUT_EIGENVALUES; /* the shown matrix, as the map draws it */
    } else {
        panel[0] = eigen;
        panel[1] = d->panel == PANEL_ENTROPY ? WARNING_ABOUT_ENTROPY
                   : d->panel == PANEL_CONDITIONING
                       ? WARNING_ABOUT_CONDITIONING
                       : WARNING_ABOUT_SINGULAR_VALUES | (d->overlays ? spectra_theory : 0);
        panel[2] = main_panel_subjects[d->panel];
    }
    unsigned subjects = WARNING_ABOUT_RUN;
    for (int i = 0; i < VIEW_PANELS_MAX; i++)
        if (shown[i])
            subjects |= panel[i];
    return subjects;
}

unsigned View_subjects(const Display *d)
{
    bool shown[VIEW_PANELS_MAX];
    panels_shown(d, false, shown);
    return panels_subjects(d, shown);
}

unsigned View_listed_subjects(const Display *d)
{
    return ~(unsigned)WARNING_ABOUT_CONDITIONING | View_subjects(d);
}

int View_warnings_shown(const Snapshot *shown, const Display *d)
{
    unsigned subjects = View_listed_subjects(d);
    int n = 0;
    for (int i = 0; shown && i < shown->result->warnings.count; i++)
        n += (shown->result->warnings.subject[i] & subjects) != 0;
    return n;
}

/* The panels' places in panel_rows rows (every canvas gets one, drawn or not): the layout,
   the conditioning's compare view's own rows, zoom (each at the whole area), the upper row
   at the whole height less hint_rows (the line that says so) when the lower is hidden.
   Returns the count. */
static int panels_place(const Display *d, int cols, int panel_rows, bool lower_hidden,
                        int hint_rows, ViewRect r[VIEW_PANELS_MAX])
{
    int count = Display_panel_count(d);
    if (d->compare)
        compare_layout(cols, panel_rows, r);
    else if (count == 1)
        r[0] = (ViewRect){0, 0, panel_rows, cols};
    else
        layout(cols, panel_rows, &r[0], &r[1], &r[2]);
    /* The conditioning's κ panels need six plot rows under their title and legend; its
       histograms fit in nine. */
    if (d->compare && d->panel == PANEL_CONDITIONING && panel_rows < 30) {
        int top = panel_rows - 9;
        r[0].rows = r[2].rows = top;
        r[1].row = r[3].row = top;
        r[1].rows = r[3].rows = panel_rows - top;
    }
    if (d->zoom >= 1 && d->zoom <= count) {
        for (int i = 0; i < count; i++)
            r[i] = (ViewRect){0, 0, panel_rows, cols};
    } else if (lower_hidden && count > 1) {
        r[0].rows = panel_rows - hint_rows;
        r[d->compare ? 2 : 1].rows = panel_rows - hint_rows;
        if (!d->compare)
            r[2] = (ViewRect){0, r[1].col, panel_rows - hint_rows, r[1].cols};
    }
    return count;
}

/* The height below which a panel of the full layout hides the lower row: presentation mode's,
   the compare view's (not the conditioning's, whose rows are its own), or 0 for none. */
static int lower_row_rows_min(const Display *d)
{
    if (d->present)
        return PRESENT_PANEL_ROWS_MIN;
    return d->compare && d->panel != PANEL_CONDITIONING ? COMPARE_PANEL_ROWS_MIN : 0;
}

/* Whether a panel of the full layout would be below lower_row_rows_min (the lower row is then
   hidden). */
static bool lower_row_hidden(const Display *d, int cols, int panel_rows)
{
    int rows_min = lower_row_rows_min(d);
    if (!rows_min)
        return false;
    ViewRect r[VIEW_PANELS_MAX];
    bool shown[VIEW_PANELS_MAX];
    int count = panels_place(d, cols, panel_rows, false, 0, r);
    panels_shown(d, false, shown);
    for (int i = 0; i < count; i++)
        if (shown[i] && r[i].rows < rows_min)
            return d->zoom < 1 || d->zoom > count;
    return false;
}

/* What says that some panels are hidden, and how to see them. */
static void hidden_text(const Display *d, const bool shown[VIEW_PANELS_MAX], char *out, size_t size)
{
    int drawn = 0, count = Display_panel_count(d);
    for (int i = 0; i < count; i++)
        drawn += shown[i];
    snprintf(out, size, "%d of %d panels at this height (%d rows each): z shows each alone", drawn,
             count, lower_row_rows_min(d));
}

/* Draws the panels into their places, recording them for the mouse. */
static void panels_draw(Screen *s, const View *v, int count, const ViewRect r[VIEW_PANELS_MAX],
                        const bool shown[VIEW_PANELS_MAX])
{
    Canvas *canvas[VIEW_PANELS_MAX] = {NULL, NULL, NULL, NULL};
    bool unicode = Screen_unicode(s), made = true;
    for (int i = 0; i < count; i++) {
        canvas[i] = Canvas_new(r[i].cols, r[i].rows, unicode);
        made = made && canvas[i];
        if (canvas[i])
            Canvas_set_bold(canvas[i], v->display.present);
    }
    if (v->drawn)
        v->drawn->count = 0;
    if (made) {
        View_panels(v, canvas);
        for (int i = 0; i < count; i++) {
            if (!shown[i])
                continue;
            Screen_canvas(s, canvas[i], r[i].row, r[i].col);
            if (v->drawn) {
                ViewPanels *d = v->drawn;
                d->rect[d->count] = r[i];
                d->number[d->count] = i + 1;
                bool conditioning = v->display.panel == PANEL_CONDITIONING;
                d->stable_rank[d->count] = v->display.compare
                                               ? i % 2 == 1 && !conditioning
                                               : i == 2 && v->display.panel == PANEL_STABLE_RANK;
                d->count++;
            }
        }
    } else {
        centred(s, r[0].rows / 2, "out of memory for the plots", true);
    }
    for (int i = 0; i < count; i++)
        Canvas_free(canvas[i]);
}

bool View_draw(Screen *s, const View *v, bool repaint)
{
    int cols = Screen_cols(s), rows = Screen_rows(s);
    Screen_erase(s);
    if (cols < VIEW_MIN_COLS || rows < VIEW_MIN_ROWS) {
        /* An open prompt still takes the keys: its line on the last row shows what they do. */
        size_message(s, v->prompt ? rows - 1 : rows, v->prompt && v->prompt->max_chars > 0);
        if (v->prompt)
            View_prompt_line(s, v->prompt, rows - 1, 0, cols);
        Screen_show(s, repaint);
        return false;
    }
    char status[STATUS_LINES_MAX][STATUS_LINE_SIZE];
    StatusView status_view = v->status;
    status_view.shown_subjects = View_subjects(&v->display);
    status_view.warnings_listed = View_warnings_shown(v->status.shown, &v->display);
    /* A prompt's or the picker's box says the note: in the status too, a long one (an export
       that failed) would take a line more and lay the panels out again behind the box. */
    if (v->prompt || v->picker)
        status_view.note = NULL;
    int n = Status_layout(&status_view, cols, status, STATUS_LINES_MAX);
    /* Above the status lines: the panels, then the tour's caption in rows of its own. */
    bool caption = v->display.present && v->caption;
    char caption_buf[TOUR_CAPTION_SIZE + 256], drawn_buf[sizeof caption_buf];
    const char *caption_shown = caption ? caption_text(v, caption_buf, sizeof caption_buf) : NULL;
    int above_status = rows - n;
    int caption_box_rows =
        caption ? caption_rows(s, caption_shown, above_status, cols, &v->display) : 0;
    int panel_rows = above_status - caption_box_rows;
    bool shown[VIEW_PANELS_MAX], lower_hidden = lower_row_hidden(&v->display, cols, panel_rows);
    panels_shown(&v->display, lower_hidden, shown);
    if (lower_hidden) {
        /* The warnings counted are those of the panels drawn; the status may then take a
           line more or less, and the panels the rows it leaves (the hiding stays: the upper
           row is far above its minimum). */
        status_view.shown_subjects = panels_subjects(&v->display, shown);
        n = Status_layout(&status_view, cols, status, STATUS_LINES_MAX);
        /* The note points only at the panels drawn. */
        if (caption)
            caption_shown =
                items_drawn(caption_shown, v->display.compare ? "stable rank" : "histogram",
                            drawn_buf, sizeof drawn_buf);
        above_status = rows - n;
        caption_box_rows =
            caption ? caption_rows(s, caption_shown, above_status, cols, &v->display) : 0;
        panel_rows = above_status - caption_box_rows;
    }
    /* Which panels are hidden is said on the note's border, or on a line of its own. */
    char hidden[160], buf[320];
    hidden_text(&v->display, shown, hidden, sizeof hidden);
    int hint_rows = lower_hidden && !caption ? 1 : 0;
    ViewRect r[VIEW_PANELS_MAX];
    int count = panels_place(&v->display, cols, panel_rows, lower_hidden, hint_rows, r);
    panels_draw(s, v, count, r, shown);
    if (hint_rows)
        Screen_text(s, panel_rows - 1, 0, View_spelled_cut(s, hidden, cols, buf, sizeof buf),
                    INK_DEFAULT, false);
    for (int i = 0; i < n; i++)
        Screen_text(s, above_status + i, 0, status[i], INK_DEFAULT, i == 0);
    if (caption)
        caption_box(s, caption_shown, panel_rows, caption_box_rows, cols,
                    lower_hidden ? hidden : NULL);
    if (v->help)
        View_help_overlay(s, rows, cols, v->help_page);
    if (v->warnings_first >= 0)
        View_warnings_overlay(s, v->status.shown, View_listed_subjects(&v->display),
                              v->warnings_first, above_status, cols);
    if (v->picker)
        View_picker_overlay(s, v->picker, v->status.note, above_status, cols);
    if (v->prompt)
        View_prompt_overlay(s, v->prompt, v->status.note, above_status, cols);
    Screen_show(s, repaint);
    return true;
}
