/* The terminal, through ncursesw: the only module that calls curses.  It copies canvases
 * and lines of text to the screen and reads keys; it decides nothing about content.
 * Frames are drawn with erase + wnoutrefresh + doupdate, so curses sends only the cells
 * that changed (usable over a slow link); Screen_show(s, true) repaints everything.
 */
#ifndef ATTNSCOPE_TUI_SCREEN_H
#define ATTNSCOPE_TUI_SCREEN_H

#include "canvas.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct Screen Screen;

/* Takes over the terminal on stdin/stdout (the locale must already be set).  unicode:
   braille and symbols, otherwise ASCII only; color: 256 colours when the terminal has them,
   else 8, otherwise monochrome.  Mouse clicks and the wheel are reported (SCREEN_MOUSE).  Until
   Screen_close a crash restores the terminal (crash.h). Returns 0 with the screen in *out, else an
   exit status with a message in err: 2 when $TERM is unset, unknown or cannot move the cursor, 1
   when out of memory. */
int Screen_open(Screen **out, bool unicode, bool color, char *err, size_t size);
/* The terminal's background as $COLORFGBG tells it (rxvt, Konsole and others set it; most
   terminals do not). */
typedef enum { BACKGROUND_UNKNOWN, BACKGROUND_DARK, BACKGROUND_LIGHT } Background;
Background Screen_background(const char *colorfgbg);
/* The colour of every ink (a curses colour number; -1: the terminal's foreground) on a
   terminal of `colors` colours: 256 colours have mid-luminance inks that read on any
   background; 8 have inks for a dark, a light or an unknown background (read on both). */
const short *Screen_palette(int colors, Background background);

/* Gives the terminal back as it was (endwin). */
void Screen_close(Screen *s);

bool Screen_unicode(const Screen *s);
int Screen_cols(const Screen *s);
int Screen_rows(const Screen *s);

/* Asks the terminal for its size after SIGWINCH and resizes curses to it. */
void Screen_resize(Screen *s);

enum { SCREEN_NO_KEY = -1, SCREEN_RESIZED = -2, SCREEN_MOUSE = -3 };

/* The next key (a character or a curses KEY_ code), SCREEN_NO_KEY when none is waiting,
   SCREEN_RESIZED when curses noticed a new size itself, or SCREEN_MOUSE for a mouse event
   (read it with Screen_mouse). */
int Screen_key(Screen *s);

/* A mouse event (after Screen_key returned SCREEN_MOUSE): where, and what. */
typedef enum { MOUSE_CLICK, MOUSE_WHEEL_UP, MOUSE_WHEEL_DOWN } MouseKind;
typedef struct {
    int row, col;
    MouseKind kind;
} ScreenMouse;

/* The pending mouse event; false when there is none this screen uses. */
bool Screen_mouse(Screen *s, ScreenMouse *out);

/* Presentation mode: everything drawn bold (thicker strokes, brighter colours). */
void Screen_set_bold(Screen *s, bool bold);

/* Starts a frame on a blank screen (in memory: nothing is sent until Screen_show). */
void Screen_erase(Screen *s);
void Screen_canvas(Screen *s, const Canvas *c, int row, int col);
/* Text already spelled for this screen (see Canvas and Ascii), cut at the right edge. */
void Screen_text(Screen *s, int row, int col, const char *text, Ink ink, bool bold);
/* Clears the rectangle and draws a frame around it (for overlays). */
void Screen_box(Screen *s, int row, int col, int rows, int cols);
/* Shows the terminal's cursor at row, col in this frame (a prompt's typing place); a frame
   that does not place it hides it. */
void Screen_cursor(Screen *s, int row, int col);
/* Sends the frame; repaint redraws every cell (Ctrl-L). */
void Screen_show(Screen *s, bool repaint);

#endif
