/* One frame of the interactive screen: the three panels (or, in the compare view, the
 * network without and with gap removal side by side), the status lines and, when open,
 * the help or the warnings list, laid out for the terminal's size (or the size it needs, below
 * 80×24). Turns a snapshot into the plots' data; draws only what it is given.
 */
#ifndef ATTNSCOPE_TUI_VIEW_H
#define ATTNSCOPE_TUI_VIEW_H

#include "keys.h"
#include "picker.h"
#include "prompt.h"
#include "screen.h"
#include "status.h"

#include <stdbool.h>

enum { VIEW_MIN_COLS = 80, VIEW_MIN_ROWS = 24 };

typedef struct {
    int row, col, rows, cols;
} ViewRect;

enum { VIEW_PANELS_MAX = 4 };

/* Where a frame put its panels, for the mouse. */
typedef struct {
    int count;
    ViewRect rect[VIEW_PANELS_MAX];
    int number[VIEW_PANELS_MAX];       /* the panel's number as Display.zoom counts it */
    bool stable_rank[VIEW_PANELS_MAX]; /* a stable-rank panel (the wheel steps the layer) */
} ViewPanels;

typedef struct {
    StatusView status;   /* settings, the snapshot shown and the job's progress */
    Display display;     /* overlays, the main panel, the compare view, presentation, zoom */
    const char *caption; /* the loaded preset's "Point at:" note (presentation mode), or NULL */
    ViewPanels *drawn;   /* filled with the panels' places (NULL: not wanted) */
    bool help;
    int help_page;        /* the help's page where every key does not fit at once (wraps) */
    int warnings_first;   /* the warnings list (!), from this warning; -1: closed */
    const Picker *picker; /* the preset picker, when open */
    const Prompt *prompt; /* the prompt of p or x, when open */
} View;

/* What a frame of this display shows, as warnings name it (WarningSubject bits): the panels
   drawn (one alone when zoomed) and the theory drawn over them. */
unsigned View_subjects(const Display *d);

/* What the list ! opens holds, as WarningSubject bits: every warning of the model run, a
   conditioning's only in its view (the conditioning is a result of that view alone). */
unsigned View_listed_subjects(const Display *d);
/* How many of the shown result's warnings that list holds. */
int View_warnings_shown(const Snapshot *shown, const Display *d);

/* Fills the frame's canvases (sized by the caller): the eigenvalues, the singular values and
   the main panel, or in the compare view the eigenvalues and stable ranks without, then with,
   gap removal. */
void View_panels(const View *v, Canvas **canvas);

/* Draws and sends one frame; repaint redraws every cell.  Returns false when the
   terminal is below VIEW_MIN_COLS × VIEW_MIN_ROWS (only the size message was drawn). */
bool View_draw(Screen *s, const View *v, bool repaint);

#endif
