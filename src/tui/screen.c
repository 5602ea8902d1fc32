#include "screen.h"

#include "crash.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

struct Screen {
    SCREEN *term;
    bool unicode;
    bool color;
    bool bold; /* presentation mode: every cell bold */
    /* Where this frame shows the terminal's cursor (row -1: hidden), and whether it is shown
       now (curs_set is sent only when that changes). */
    int cursor_row, cursor_col;
    bool cursor_shown;
};

/* The colour of each ink on 8-colour terminals (pair number = ink + 1); -1 is the
   terminal's own foreground, which reads on its own background by definition.  The 8
   colours are the terminal's to choose; at xterm's (a common default) only red and magenta
   keep a contrast of 3:1 on both black and white.  Yellow, cyan and green vanish on white
   (contrast 1.7 to 2.2), blue on black (2.2).  So each background has its own inks, and a
   background COLORFGBG does not name gets inks that read on both: red, magenta and the
   terminal's foreground, the data in the foreground (glyphs and line styles tell the inks
   that share a colour apart). */
static const short INK_COLOR_DARK[INK_COUNT] = {
    [INK_DEFAULT] = -1,
    [INK_AXIS] = -1,
    [INK_BULK] = COLOR_CYAN,
    [INK_OUTLIER] = COLOR_RED,
    [INK_THEORY] = COLOR_YELLOW,
    [INK_GHOST] = COLOR_MAGENTA,
    [INK_HIGHLIGHT] = COLOR_GREEN,
    /* The map's shades: cyan, green, yellow, red (contrast ≥ 3 on black). */
    [INK_SHADE_1] = COLOR_CYAN,
    [INK_SHADE_2] = COLOR_CYAN,
    [INK_SHADE_3] = COLOR_GREEN,
    [INK_SHADE_4] = COLOR_GREEN,
    [INK_SHADE_5] = COLOR_YELLOW,
    [INK_SHADE_6] = COLOR_YELLOW,
    [INK_SHADE_7] = COLOR_RED,
    [INK_SHADE_8] = COLOR_RED,
    [INK_SHADE_9] = COLOR_RED,
};
static const short INK_COLOR_LIGHT[INK_COUNT] = {
    [INK_DEFAULT] = -1,
    [INK_AXIS] = -1,
    [INK_BULK] = COLOR_BLUE,
    [INK_OUTLIER] = COLOR_RED,
    [INK_THEORY] = COLOR_MAGENTA,
    [INK_GHOST] = -1,
    [INK_HIGHLIGHT] = COLOR_BLUE,
    /* The map's shades: blue, magenta, red (contrast ≥ 3 on white). */
    [INK_SHADE_1] = COLOR_BLUE,
    [INK_SHADE_2] = COLOR_BLUE,
    [INK_SHADE_3] = COLOR_BLUE,
    [INK_SHADE_4] = COLOR_MAGENTA,
    [INK_SHADE_5] = COLOR_MAGENTA,
    [INK_SHADE_6] = COLOR_MAGENTA,
    [INK_SHADE_7] = COLOR_RED,
    [INK_SHADE_8] = COLOR_RED,
    [INK_SHADE_9] = COLOR_RED,
};
static const short INK_COLOR_EITHER[INK_COUNT] = {
    [INK_DEFAULT] = -1,
    [INK_AXIS] = -1,
    [INK_BULK] = -1,
    [INK_OUTLIER] = COLOR_RED,
    [INK_THEORY] = COLOR_MAGENTA,
    [INK_GHOST] = COLOR_RED,
    [INK_HIGHLIGHT] = -1,
    /* The map's shades: the foreground, magenta, red. */
    [INK_SHADE_1] = -1,
    [INK_SHADE_2] = -1,
    [INK_SHADE_3] = -1,
    [INK_SHADE_4] = -1,
    [INK_SHADE_5] = COLOR_MAGENTA,
    [INK_SHADE_6] = COLOR_MAGENTA,
    [INK_SHADE_7] = COLOR_RED,
    [INK_SHADE_8] = COLOR_RED,
    [INK_SHADE_9] = COLOR_RED,
};

/* With 256 colours: mid-luminance colours that read on dark and on light backgrounds alike
   (the 8-colour yellow vanishes on white, blue on black). */
static const short INK_COLOR_256[INK_COUNT] = {
    [INK_DEFAULT] = -1,
    [INK_AXIS] = -1,
    [INK_BULK] = 32 /* #0087d7 */,
    [INK_OUTLIER] = 160 /* #d70000 */,
    [INK_THEORY] = 172 /* #d78700 */,
    [INK_GHOST] = 127 /* #af00af */,
    [INK_HIGHLIGHT] = 28 /* #008700 */,
    /* The map's shades: blue through teal, green and yellow to red, each mid-luminance. */
    [INK_SHADE_1] = 25 /* #005faf */,
    [INK_SHADE_2] = 31 /* #0087af */,
    [INK_SHADE_3] = 37 /* #00afaf */,
    [INK_SHADE_4] = 35 /* #00af5f */,
    [INK_SHADE_5] = 70 /* #5faf00 */,
    [INK_SHADE_6] = 142 /* #afaf00 */,
    [INK_SHADE_7] = 178 /* #d7af00 */,
    [INK_SHADE_8] = 166 /* #d75f00 */,
    [INK_SHADE_9] = 160 /* #d70000 */,
};

Background Screen_background(const char *colorfgbg)
{
    if (!colorfgbg)
        return BACKGROUND_UNKNOWN;
    /* The background is the last field ("15;0", rxvt's "15;default;0"). */
    const char *last = strrchr(colorfgbg, ';');
    last = last ? last + 1 : colorfgbg;
    char *end;
    long colour = strtol(last, &end, 10);
    if (end == last || *end != '\0' || colour < 0 || colour > 15)
        return BACKGROUND_UNKNOWN;
    /* As rxvt and Vim read it: black, the dark colours and dark grey are dark; light grey
       (7) and the bright colours light. */
    return colour <= 6 || colour == 8 ? BACKGROUND_DARK : BACKGROUND_LIGHT;
}

const short *Screen_palette(int colors, Background background)
{
    if (colors >= 256)
        return INK_COLOR_256;
    return background == BACKGROUND_DARK    ? INK_COLOR_DARK
           : background == BACKGROUND_LIGHT ? INK_COLOR_LIGHT
                                            : INK_COLOR_EITHER;
}

/* Whether $TERM names a terminal the screen can draw on: one that moves the cursor. */
static bool terminal_usable(char *err, size_t size)
{
    const char *term = getenv("TERM");
    if (!term || !*term) {
        snprintf(err, size,
                 "TERM is not set: the interactive screen needs the terminal's "
                 "type (e.g. TERM=xterm-256color); use --batch for JSON");
        return false;
    }
    int found;
    if (setupterm(NULL, STDOUT_FILENO, &found) != OK) {
        snprintf(err, size,
                 "TERM=%.64s: no terminfo description of this terminal (try "
                 "TERM=xterm-256color); use --batch for JSON",
                 term);
        return false;
    }
    const char *cup = tigetstr("cup");
    bool moves = cup && cup != (const char *)-1;
    del_curterm(cur_term);
    if (!moves)
        snprintf(err, size,
                 "TERM=%.64s cannot move the cursor: the interactive screen needs "
                 "a terminal like xterm; use --batch for JSON",
                 term);
    return moves;
}

/* The bytes endwin would send, collected (padding resolved) for the crash handler. */
static char reset_bytes[256];
static size_t reset_length;

static int collect(int c)
{
    if (reset_length + 1 < sizeof reset_bytes)
        reset_bytes[reset_length++] = (char)c;
    return c;
}

static void arm_crash_reset(const struct termios *modes)
{
    static const char *const CAPS[] = {"sgr0", "cnorm", "rmkx", "rmcup"};
    reset_length = 0;
    for (size_t i = 0; i < sizeof CAPS / sizeof CAPS[0]; i++) {
        const char *cap = tigetstr(CAPS[i]);
        if (cap && cap != (const char *)-1)
            tputs(cap, 1, collect);
    }
    /* Mouse reporting off, as endwin does: ncurses' XM with 0, or xterm's sequence where
       the terminal reports a mouse without saying how. */
    const char *xm = tigetstr("XM"), *kmous = tigetstr("kmous");
    if (xm && xm != (const char *)-1)
        tputs(tiparm(xm, 0), 1, collect);
    else if (kmous && kmous != (const char *)-1)
        tputs("\033[?1000l", 1, collect);
    reset_bytes[reset_length] = '\0';
    /* Without an alternate stack the screen still works; only a crash would leave the
       terminal as it is, as it did before. */
    (void)Crash_arm(STDOUT_FILENO, modes, reset_bytes);
}

int Screen_open(Screen **out, bool unicode, bool color, char *err, size_t size)
{
    *out = NULL;
    if (!terminal_usable(err, size))
        return 2;
    struct termios modes;
    if (tcgetattr(STDOUT_FILENO, &modes)) {
        snprintf(err, size, "cannot read the terminal's modes");
        return 2;
    }
    Screen *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, size, "out of memory");
        return 1;
    }
    /* newterm, unlike initscr, returns NULL instead of exiting. */
    s->term = newterm(NULL, stdout, stdin);
    if (!s->term) {
        snprintf(err, size, "out of memory starting curses");
        free(s);
        return 1;
    }
    set_term(s->term);
    s->unicode = unicode;
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    /* Clicks and the wheel; the keys do everything the mouse does. */
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    if (color && has_colors() && start_color() == OK) {
        bool defaults = use_default_colors() == OK;
        const short *palette = Screen_palette(COLORS, Screen_background(getenv("COLORFGBG")));
        for (int ink = 0; ink < INK_COUNT; ink++) {
            short fg = palette[ink];
            if (fg < 0 && !defaults)
                fg = COLOR_WHITE;
            init_pair((short)(ink + 1), fg, defaults ? -1 : COLOR_BLACK);
        }
        s->color = true;
    }
    arm_crash_reset(&modes);
    *out = s;
    return 0;
}

void Screen_close(Screen *s)
{
    if (!s)
        return;
    endwin();
    Crash_disarm();
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
    return key == ERR          ? SCREEN_NO_KEY
           : key == KEY_RESIZE ? SCREEN_RESIZED
           : key == KEY_MOUSE  ? SCREEN_MOUSE
                               : key;
}

bool Screen_mouse(Screen *s, ScreenMouse *out)
{
    (void)s;
    MEVENT event;
    if (getmouse(&event) != OK)
        return false;
    out->row = event.y;
    out->col = event.x;
    if (event.bstate & BUTTON4_PRESSED)
        out->kind = MOUSE_WHEEL_UP;
    else if (event.bstate & BUTTON5_PRESSED)
        out->kind = MOUSE_WHEEL_DOWN;
    else if (event.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED))
        out->kind = MOUSE_CLICK;
    else
        return false;
    return true;
}

void Screen_set_bold(Screen *s, bool bold)
{
    s->bold = bold;
}

void Screen_erase(Screen *s)
{
    werase(stdscr);
    s->cursor_row = -1;
}

void Screen_cursor(Screen *s, int row, int col)
{
    s->cursor_row = row;
    s->cursor_col = col;
}

/* Colour or, on a monochrome screen, an attribute where one helps the eye; glyphs and
   strokes already tell the series apart. */
static void ink_on(const Screen *s, Ink ink, bool bold)
{
    attr_t attrs = bold || s->bold ? A_BOLD : A_NORMAL;
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
    bool shown = s->cursor_row >= 0;
    /* doupdate leaves the terminal's cursor where stdscr's is (leaveok is off). */
    if (shown)
        wmove(stdscr, s->cursor_row, s->cursor_col);
    if (repaint)
        clearok(curscr, TRUE);
    wnoutrefresh(stdscr);
    doupdate();
    if (shown != s->cursor_shown) {
        curs_set(shown ? 1 : 0);
        s->cursor_shown = shown;
    }
}
