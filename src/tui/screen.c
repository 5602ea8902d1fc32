#include "screen.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct Screen {
    SCREEN *term;
    bool unicode;
    bool color;
};

/* The colour of each ink on 8-colour terminals (pair number = ink + 1); -1 is the
   terminal's own foreground. */
static const short INK_COLOR[INK_COUNT] = {
    [INK_DEFAULT] = -1,
    [INK_AXIS] = -1,
    [INK_BULK] = COLOR_CYAN,
    [INK_OUTLIER] = COLOR_RED,
    [INK_THEORY] = COLOR_YELLOW,
    [INK_GHOST] = COLOR_MAGENTA,
    [INK_HIGHLIGHT] = COLOR_GREEN,
};

Screen *Screen_open(bool unicode, bool color, char *err, size_t size)
{
    Screen *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, size, "out of memory");
        return NULL;
    }
    /* newterm, unlike initscr, returns NULL instead of exiting on an unknown terminal. */
    s->term = newterm(NULL, stdout, stdin);
    if (!s->term) {
        const char *term = getenv("TERM");
        snprintf(err, size, "cannot use the terminal (TERM=%s)", term ? term : "unset");
        free(s);
        return NULL;
    }
    set_term(s->term);
    s->unicode = unicode;
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    if (color && has_colors() && start_color() == OK) {
        bool defaults = use_default_colors() == OK;
        for (int ink = 0; ink < INK_COUNT; ink++) {
            short fg = INK_COLOR[ink];
            if (fg < 0 && !defaults)
                fg = COLOR_WHITE;
            init_pair((short)(ink + 1), fg, defaults ? -1 : COLOR_BLACK);
        }
        s->color = true;
    }
    return s;
}

void Screen_close(Screen *s)
{
    if (!s)
        return;
    endwin();
    delscreen(s->term);
    free(s);
}

bool Screen_unicode(const Screen *s)
{
    return s->unicode;
}

int Screen_cols(const Screen *s)
{
    (void)s;
    return COLS;
}

int Screen_rows(const Screen *s)
{
    (void)s;
    return LINES;
}

void Screen_resize(Screen *s)
{
    (void)s;
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
        resizeterm(ws.ws_row, ws.ws_col);
}

int Screen_key(Screen *s)
{
    (void)s;
    int key = wgetch(stdscr);
    return key == ERR ? SCREEN_NO_KEY : key == KEY_RESIZE ? SCREEN_RESIZED : key;
}

void Screen_erase(Screen *s)
{
    (void)s;
    werase(stdscr);
}

/* Colour or, on a monochrome screen, an attribute where one helps the eye; glyphs and
   strokes already tell the series apart. */
static void ink_on(const Screen *s, Ink ink, bool bold)
{
    attr_t attrs = bold ? A_BOLD : A_NORMAL;
    if (ink == INK_OUTLIER || ink == INK_HIGHLIGHT)
        attrs |= A_BOLD;
    wattr_set(stdscr, attrs, s->color ? (short)(ink + 1) : 0, NULL);
}

void Screen_canvas(Screen *s, const Canvas *c, int row, int col)
{
    int cols = Canvas_cols(c), rows = Canvas_rows(c);
    char run[4096], cell[8];
    for (int r = 0; r < rows && row + r < LINES; r++) {
        /* Cells of one ink go out as one string. */
        int start = 0;
        while (start < cols && col + start < COLS) {
            Ink ink = Canvas_cell(c, start, r, cell);
            size_t used = 0;
            int end = start;
            while (end < cols && col + end < COLS) {
                char next[8];
                if (Canvas_cell(c, end, r, next) != ink && strcmp(next, " ") != 0)
                    break;
                size_t n = strlen(next);
                if (used + n >= sizeof run)
                    break;
                memcpy(run + used, next, n);
                used += n;
                end++;
            }
            run[used] = '\0';
            ink_on(s, ink, false);
            mvwaddstr(stdscr, row + r, col + start, run);
            start = end;
        }
    }
    wattr_set(stdscr, A_NORMAL, 0, NULL);
}

void Screen_text(Screen *s, int row, int col, const char *text, Ink ink, bool bold)
{
    if (row < 0 || row >= LINES || col >= COLS)
        return;
    ink_on(s, ink, bold);
    mvwaddnstr(stdscr, row, col, text, -1);
    wattr_set(stdscr, A_NORMAL, 0, NULL);
}

void Screen_box(Screen *s, int row, int col, int rows, int cols)
{
    const char *h = s->unicode ? "─" : "-", *v = s->unicode ? "│" : "|";
    const char *corners[4] = {"+", "+", "+", "+"};
    if (s->unicode) {
        corners[0] = "┌";
        corners[1] = "┐";
        corners[2] = "└";
        corners[3] = "┘";
    }
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++) {
            bool top = r == 0, bottom = r == rows - 1, left = k == 0, right = k == cols - 1;
            const char *t = " ";
            if ((top || bottom) && (left || right))
                t = corners[(bottom ? 2 : 0) + (right ? 1 : 0)];
            else if (top || bottom)
                t = h;
            else if (left || right)
                t = v;
            mvwaddstr(stdscr, row + r, col + k, t);
        }
}

void Screen_show(Screen *s, bool repaint)
{
    (void)s;
    if (repaint)
        clearok(curscr, TRUE);
    wnoutrefresh(stdscr);
    doupdate();
}
