/* The boxes over a frame (help, warnings, the preset picker, the prompt of p or x) and the text
 * they hold: spelled for the screen, cut to columns, word-wrapped. */
#include "view_internal.h"

#include "ascii.h"
#include "keys.h"

#include <stdio.h>
#include <string.h>

const char *View_spelled(const Screen *s, const char *utf8, char *buf, size_t size)
{
    if (Screen_unicode(s))
        return utf8;
    return Ascii_transliterate(utf8, buf, size);
}

const char *View_spelled_cut(const Screen *s, const char *utf8, int width, char *buf, size_t size)
{
    if (Screen_unicode(s))
        snprintf(buf, size, "%s", utf8);
    else
        Ascii_transliterate(utf8, buf, size);
    return Ascii_cut(buf, width, NULL);
}

enum { HELP_LINES_MAX = 96 };

/* The help's lines (spelled for the screen): one per key or, paired, one per setting's
   raise and lower keys; returns the count and the widest line's columns in *width. */
static int help_lines(const Screen *s, bool paired, char lines[][KEYS_HELP_SIZE * 2], int *width)
{
    char buf[KEYS_HELP_SIZE], ascii[KEYS_HELP_SIZE * 2];
    int n = 0;
    *width = 0;
    for (int i = 0; i < Keys_count() && n < HELP_LINES_MAX; i++) {
        if (paired)
            i += Keys_help_compact(Keys_at(i), Keys_at(i + 1), buf, sizeof buf) - 1;
        else
            Keys_help_line(Keys_at(i), buf, sizeof buf);
        snprintf(lines[n], sizeof lines[n], "%s", View_spelled(s, buf, ascii, sizeof ascii));
        int w = Ascii_columns(lines[n++]);
        *width = w > *width ? w : *width;
    }
    return n;
}

/* Columns of at most `width` for n lines in the screen's rows − 2 (3 columns apart): the
   lines per column, and the columns each column gets. */
static int help_columns(int n, int width, int rows, int cols, int *per_column, int *column_cols)
{
    *per_column = rows - 2;
    int columns = (n + *per_column - 1) / *per_column;
    if (columns < 2)
        columns = 2, *per_column = (n + 1) / 2; /* two columns read better than one tall one */
    else
        *per_column = (n + columns - 1) / columns;
    *column_cols = (cols - 4 - 3 * (columns - 1)) / columns;
    if (*column_cols > width)
        *column_cols = width;
    return columns;
}

void View_help_overlay(Screen *s, int rows, int cols, int page)
{
    char lines[HELP_LINES_MAX][KEYS_HELP_SIZE * 2];
    int width, per_column, column_cols;
    int n = help_lines(s, false, lines, &width);
    int columns = help_columns(n, width, rows, cols, &per_column, &column_cols);
    if (column_cols < width) {
        n = help_lines(s, true, lines, &width);
        columns = help_columns(n, width, rows, cols, &per_column, &column_cols);
    }
    int first = 0, count = n, pages = 1;
    if (column_cols < width && rows > 2) {
        /* The pages share the lines evenly, each in two columns of equal height. */
        columns = 2;
        column_cols = (cols - 4 - 3) / 2;
        pages = (n + 2 * (rows - 2) - 1) / (2 * (rows - 2));
        int per_page = (n + pages - 1) / pages;
        per_column = (per_page + 1) / 2;
        page = (page % pages + pages) % pages;
        first = page * per_page;
        count = n - first < per_page ? n - first : per_page;
    }
    int box_cols = columns * column_cols + 3 * (columns - 1) + 4, box_rows = per_column + 2;
    int top = (rows - box_rows) / 2, left = (cols - box_cols) / 2;
    Screen_box(s, top, left, box_rows, box_cols);
    char title[64];
    Screen_text(s, top, left + 2, View_spelled(s, " attnscope keys ", title, sizeof title),
                INK_DEFAULT, true);
    /* What closes it (and turns its pages), on the bottom border, as the ? line says. */
    char closing[96];
    if (pages > 1)
        snprintf(closing, sizeof closing, " page %d of %d, Space turns; Esc, ? or q closes ",
                 page + 1, pages);
    else
        snprintf(closing, sizeof closing, " Esc, ? or q closes this help ");
    int closing_cols = Ascii_columns(closing);
    if (closing_cols + 4 <= box_cols)
        Screen_text(s, top + box_rows - 1, left + box_cols - closing_cols - 2, closing, INK_DEFAULT,
                    false);
    for (int i = 0; i < count; i++)
        Screen_text(s, top + 1 + i % per_column, left + 2 + (i / per_column) * (column_cols + 3),
                    Ascii_cut(lines[first + i], column_cols, NULL), INK_DEFAULT, false);
}

/* Lines enough for any terminal's box (a warning of WARNING_LENGTH wraps to many lines on a
   narrow one: only those shown are made); a line holds at most the box's 96 columns, each
   at most 4 bytes of UTF-8. */
enum { WARNING_LINES_MAX = 256, WARNING_LINE_BYTES = 4 * 96 + 8 };

/* The texts of the warnings about subjects from the first-th of them, word-wrapped to width
   columns, each starting with its number among them; returns the lines, and their count of
   warnings in *count. */
static int warning_lines(const Screen *s, const Warnings *w, unsigned subjects, int first,
                         int width, char lines[][WARNING_LINE_BYTES], int *count)
{
    int n = 0;
    *count = 0;
    for (int i = 0; i < w->count; i++) {
        if (!(w->subject[i] & (subjects | WARNING_ABOUT_RUN)))
            continue;
        if (++*count <= first || n >= WARNING_LINES_MAX)
            continue;
        char text[WARNING_LENGTH + 16], buf[2 * (WARNING_LENGTH + 16)];
        snprintf(text, sizeof text, "%d. %s", *count, w->text[i]);
        const char *p = View_spelled(s, text, buf, sizeof buf);
        while (*p && n < WARNING_LINES_MAX) {
            /* The longest run of whole words that fits beside the line's indent (the lines
               after the first are indented 3 columns); a word wider than that goes on in
               pieces of its width. */
            int indent = p == text || p == buf ? 0 : 3;
            size_t cut = Ascii_words_fit(p, width - indent);
            if (cut == 0) {
                snprintf(lines[n], sizeof lines[n], "%.*s", (int)sizeof lines[n] - 1, p);
                cut = strlen(Ascii_cut(lines[n], width - indent, NULL));
            }
            if (cut == 0)
                break; /* no column to write in */
            snprintf(lines[n], sizeof lines[n], "%*s%.*s", indent, "", (int)cut, p);
            n++;
            p += cut;
            while (*p == ' ')
                p++;
        }
    }
    return n;
}

void View_warnings_overlay(Screen *s, const Snapshot *shown, unsigned subjects, int first, int rows,
                           int cols)
{
    int box_cols = cols - 4 < 100 ? cols - 4 : 100, box_rows = rows - 2;
    int top = 1, left = (cols - box_cols) / 2, visible = box_rows - 2;
    static char lines[WARNING_LINES_MAX][WARNING_LINE_BYTES];
    int n = 0, count = 0;
    if (shown)
        n = warning_lines(s, &shown->result->warnings, subjects, first, box_cols - 4, lines,
                          &count);
    Screen_box(s, top, left, box_rows, box_cols);
    char title[128], buf[256];
    snprintf(title, sizeof title, " warnings of the shown result (%d): ↑/↓ scroll, Esc closes ",
             count);
    Screen_text(s, top, left + 2, View_spelled_cut(s, title, box_cols - 4, buf, sizeof buf),
                INK_DEFAULT, true);
    if (n == 0)
        Screen_text(s, top + 1, left + 2, "none: nothing to warn about", INK_DEFAULT, false);
    for (int i = 0; i < n && i < visible; i++)
        Screen_text(s, top + 1 + i, left + 2, lines[i], INK_DEFAULT, false);
    if (visible < n || first > 0) {
        snprintf(title, sizeof title, " %s%s%s ", first > 0 ? "more above: ↑" : "",
                 first > 0 && visible < n ? ", " : "", visible < n ? "more below: ↓" : "");
        Screen_text(s, top + box_rows - 1, left + 2, View_spelled(s, title, buf, sizeof buf),
                    INK_DEFAULT, false);
    }
}

/* Line `index` of View_wrapped_from: drawn at its row when at or after `first`, or only
   counted. */
static void header_line(Screen *s, bool draw, int index, int first, int row, int col,
                        const char *line)
{
    if (draw && index >= first)
        Screen_text(s, row + index - first, col, line, INK_DEFAULT, false);
}

int View_wrapped(Screen *s, bool draw, const char *header, int row, int col, int rows, int width)
{
    return View_wrapped_from(s, draw, header, 0, row, col, rows, width);
}

int View_wrapped_from(Screen *s, bool draw, const char *header, int first, int row, int col,
                      int rows, int width)
{
    char line[512] = "", word[256], out[512];
    int used = 0, line_columns = 0;
    rows += first; /* the lines before first are wrapped, not drawn */
    const char *p = header;
    while (*p && used < rows) {
        size_t length = strcspn(p, "\n");
        bool continued = p[0] == ' ', blank = length == 0;
        if (!continued && line[0]) { /* a new sentence or paragraph: flush the line */
            header_line(s, draw, used++, first, row, col, line);
            line[0] = '\0';
            line_columns = 0;
        }
        if (blank && used > 0 && used < rows)
            used++; /* the paragraph break */
        const char *q = p, *end = p + length;
        while (q < end && used < rows) {
            while (q < end && *q == ' ')
                q++;
            size_t w = strcspn(q, " \n");
            if (w == 0)
                break;
            snprintf(word, sizeof word, "%.*s", (int)(w < sizeof word - 1 ? w : sizeof word - 1),
                     q);
            q += w;
            /* A word wider than the rectangle (a path) goes on in pieces of its width. */
            char spelled_word[512];
            snprintf(spelled_word, sizeof spelled_word, "%s",
                     View_spelled(s, word, out, sizeof out));
            for (const char *rest = spelled_word; *rest && used < rows;) {
                snprintf(out, sizeof out, "%s", rest);
                Ascii_cut(out, width, NULL);
                size_t bytes = strlen(out);
                if (bytes == 0)
                    break;
                rest += bytes;
                int columns = Ascii_columns(out);
                if (line_columns > 0 && line_columns + 1 + columns > width) {
                    header_line(s, draw, used++, first, row, col, line);
                    line[0] = '\0';
                    line_columns = 0;
                    if (used >= rows)
                        break;
                }
                /* Fits: the line holds at most width columns. */
                size_t at = strlen(line), n = bytes;
                if (line_columns && at + 1 < sizeof line)
                    line[at++] = ' ';
                if (at + n >= sizeof line)
                    n = sizeof line - at - 1;
                memcpy(line + at, out, n);
                line[at + n] = '\0';
                line_columns += (line_columns ? 1 : 0) + columns;
            }
        }
        p = *end ? end + 1 : end;
    }
    if (line[0] && used < rows)
        header_line(s, draw, used++, first, row, col, line);
    return used > first ? used - first : 0;
}

/* A path that does not fit in cols columns as its end after an ellipsis: the file's name is
   what tells presets apart (three columns spare for the ellipsis spelled in ASCII). */
static const char *path_end(const char *path, int cols, char *buf, size_t size)
{
    if (Ascii_columns(path) <= cols)
        return path;
    const char *p = path;
    while (*p && Ascii_columns(p) > cols - 3) {
        p++;
        while ((*p & 0xC0) == 0x80) /* a UTF-8 character's continuation bytes */
            p++;
    }
    size_t n = strlen(p), ellipsis = strlen("…");
    if (n > size - ellipsis - 1)
        n = size - ellipsis - 1;
    memcpy(buf, "…", ellipsis);
    memcpy(buf + ellipsis, p, n);
    buf[ellipsis + n] = '\0';
    return buf;
}

/* The selected preset's header in rows × cols at (row, col): whole where it fits, else a
   page of it (Picker.header_page, modulo the pages) over a last row that marks the cut and
   names Space, which turns to the next page (after the last, the first).  Returns the rows
   used. */
static int picker_header(Screen *s, const Picker *p, int row, int col, int rows, int cols)
{
    int total = View_wrapped(s, false, p->header, 0, 0, PICKER_HEADER_SIZE, cols);
    if (total <= rows || rows < 2)
        return View_wrapped(s, true, p->header, row, col, rows, cols);
    int page_rows = rows - 1, pages = (total + page_rows - 1) / page_rows;
    int page = p->header_page % pages;
    int used = View_wrapped_from(s, true, p->header, page * page_rows, row, col, page_rows, cols);
    char mark[128], out[128];
    snprintf(mark, sizeof mark, "… page %d/%d: Space for %s", page + 1, pages,
             page + 1 < pages ? "more" : "the first");
    Screen_text(s, row + page_rows, col, View_spelled_cut(s, mark, cols, out, sizeof out),
                INK_HIGHLIGHT, true);
    return used + 1;
}

void View_picker_overlay(Screen *s, const Picker *p, const char *note, int rows, int cols)
{
    int box_cols = cols - 4 < 120 ? cols - 4 : 120, box_rows = rows - 2;
    int top = 1, left = (cols - box_cols) / 2;
    Screen_box(s, top, left, box_rows, box_cols);
    char buf[512], out[512];
    snprintf(buf, sizeof buf, " presets (%d): ↑/↓ or j/k choose, Enter loads, Esc closes ",
             p->count);
    Screen_text(s, top, left + 2, View_spelled_cut(s, buf, box_cols - 4, out, sizeof out),
                INK_DEFAULT, true);
    int name_width = 0;
    for (int i = 0; i < p->count; i++) {
        int w = Ascii_columns(p->entry[i].name);
        name_width = w > name_width ? w : name_width;
    }
    int list_cols = name_width + 12 < box_cols / 2 ? name_width + 12 : box_cols / 2;
    /* The origin column is whole: where the names are wider than the list leaves them
       (after "> " and before " shipped"), a long name is cut, its cut marked. */
    int name_cols = list_cols - 1 - 3 - Ascii_columns(Preset_source_name(PRESET_SHIPPED));
    if (name_cols > name_width)
        name_cols = name_width;
    int visible = box_rows - 2, first = p->selected - visible / 2;
    if (first > p->count - visible)
        first = p->count - visible;
    if (first < 0)
        first = 0;
    for (int i = first; i < p->count && i - first < visible; i++) {
        const PickerEntry *e = &p->entry[i];
        bool selected = i == p->selected;
        char name[sizeof e->name * 2];
        View_spelled_cut(s, e->name, (int)sizeof name, name, sizeof name);
        Ascii_cut(name, name_cols, Screen_unicode(s) ? "…" : "...");
        int pad = name_cols - Ascii_columns(name);
        snprintf(buf, sizeof buf, "%c %s%*s %s", selected ? '>' : ' ', name, pad, "",
                 Preset_source_name(e->source));
        Screen_text(s, top + 1 + i - first, left + 2,
                    View_spelled_cut(s, buf, list_cols - 1, out, sizeof out),
                    selected ? INK_HIGHLIGHT : INK_DEFAULT, selected);
    }
    int text_col = left + 2 + list_cols + 1, text_cols = box_cols - list_cols - 5;
    /* Why the selected preset was refused, in full, above its path. */
    int note_rows = 0;
    if (text_cols >= 20 && note && note[0]) {
        note_rows = visible / 3;
        View_wrapped(s, true, note, top + box_rows - 2 - note_rows, text_col, note_rows, text_cols);
    }
    if (text_cols >= 20 && p->count > 0) {
        int used = picker_header(s, p, top + 1, text_col, visible - 2 - note_rows, text_cols);
        if (used == 0)
            Screen_text(s, top + 1, text_col, "(no header comment)", INK_DEFAULT, false);
        char end[sizeof out];
        Screen_text(
            s, top + box_rows - 2, text_col,
            View_spelled_cut(s, path_end(p->entry[p->selected].path, text_cols, end, sizeof end),
                             text_cols, out, sizeof out),
            INK_DEFAULT, false);
    }
}

void View_prompt_line(Screen *s, const Prompt *p, int row, int col, int width)
{
    char label[PROMPT_SIZE + 64], line[2 * PROMPT_SIZE + 64];
    View_spelled_cut(s, p->label, width, label, sizeof label);
    int label_cols = Ascii_columns(label), room = width - label_cols;
    int length = (int)strlen(p->text);
    int cursor = p->cursor < 0 || p->cursor > length ? length : p->cursor;
    int first = room > 0 ? Prompt_first_shown(p, room) : length;
    /* The cell past the end, where typing appends, is marked (the cursor may be elsewhere). */
    bool end = cursor == length && room > 0;
    int shown = length - first < room - end ? length - first : room - end;
    snprintf(line, sizeof line, "%s%.*s%s", label, shown > 0 ? shown : 0, p->text + first,
             end ? "_" : "");
    Screen_text(s, row, col, line, INK_DEFAULT, true);
    if (p->max_chars > 0 && room > 0)
        Screen_cursor(s, row, col + label_cols + cursor - first);
}

/* The prompt's detail in rows × width at (row, col), word-wrapped: where the whole does not
   fit, its elidable start loses words from its end, an ellipsis in their place, until the
   rest fits (a setting's description shortened, what it accepts and its value now whole). */
static void prompt_detail(Screen *s, const Prompt *p, int row, int col, int rows, int width)
{
    char text[2 * PROMPT_SIZE + 64];
    int length = (int)strlen(p->detail), elidable = p->detail_elidable;
    elidable = elidable < 0 ? 0 : elidable > length ? length : elidable;
    int kept = elidable;
    snprintf(text, sizeof text, "%s", p->detail);
    while (kept > 0 && View_wrapped(s, false, text, 0, 0, rows + 1, width) > rows) {
        while (kept > 0 && p->detail[kept - 1] != ' ')
            kept--;
        while (kept > 0 && p->detail[kept - 1] == ' ')
            kept--;
        snprintf(text, sizeof text, "%.*s…%s", kept, p->detail, p->detail + elidable);
    }
    View_wrapped(s, true, text, row, col, rows, width);
}

void View_prompt_overlay(Screen *s, const Prompt *p, const char *note, int rows, int cols)
{
    int detail_rows = p->detail ? 2 : 0;
    int box_cols = cols - 4 < 90 ? cols - 4 : 90, box_rows = 8 + detail_rows;
    int top = (rows - box_rows) / 2, left = (cols - box_cols) / 2;
    Screen_box(s, top, left, box_rows, box_cols);
    char out[PROMPT_SIZE + 64];
    Screen_text(s, top, left + 2, p->title, INK_DEFAULT, true);
    View_prompt_line(s, p, top + 2, left + 2, box_cols - 4);
    if (p->detail)
        prompt_detail(s, p, top + 3, left + 2, detail_rows, box_cols - 4);
    Screen_text(s, top + 3 + detail_rows, left + 2,
                View_spelled_cut(s, p->hint, box_cols - 4, out, sizeof out), INK_DEFAULT, false);
    /* What the last key was refused for, where the typing is. */
    if (note && note[0])
        View_wrapped(s, true, note, top + 4 + detail_rows, left + 2, 3, box_cols - 4);
}
