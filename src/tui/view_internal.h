/* What the files of one frame share (view.h is their interface):
 *
 *   view.c              the frame: the panels' places, presentation mode and its caption, the
 *                       status lines, the overlays over them
 *   view_panels.c       what each panel shows (View_panels): spectra, stable rank, gradients,
 *                       similarity, the width sweep, entropy, the attention map, the compare view
 *   view_conditioning.c the conditioning view's panels: κ against depth, K's singular values
 *   view_overlays.c     the boxes over the frame (help, warnings, presets, prompt) and the text
 *                       they hold: spelled for the screen, cut, word-wrapped
 */
#ifndef ATTNSCOPE_TUI_VIEW_INTERNAL_H
#define ATTNSCOPE_TUI_VIEW_INTERNAL_H

#include "view.h"

#include <stdbool.h>
#include <stddef.h>

/* The conditioning slot whose initialisation is the paper's (cutting_skip) or not: the
   compare view puts normal on the left, cutting-skip on the right. */
int View_conditioning_slot(const Snapshot *s, bool cutting_skip);
/* κ against depth on a log axis: the network's κ(K_ℓ) (the sub-block), κ(a·I + b′·K_ℓ) (the
   block with its skip) and κ(A_ℓ⋯A_1), and its counterpart's κ(K_ℓ), κ(a·I + b′·K_ℓ); a null
   point is a gap, its reason in the warnings (!).  With s NULL the panel says `unshown`. */
void View_conditioning_panel(const Snapshot *s, int slot, bool named, const char *unshown,
                             Canvas *c);
/* The singular values of K at the shown layer (exact path), or of the dominant term
   B = W_VOᵀ ⊗ A, the pairwise products of the two SVDs, above the exact size. */
void View_conditioning_histogram(const Snapshot *s, int slot, const char *unshown, Canvas *c);

/* utf8 as this screen spells it: itself, or transliterated into buf. */
const char *View_spelled(const Screen *s, const char *utf8, char *buf, size_t size);
/* utf8 as this screen spells it, cut to width columns, in buf. */
const char *View_spelled_cut(const Screen *s, const char *utf8, int width, char *buf, size_t size);
/* Word-wraps a preset header into the rectangle (or, unless draw, only counts the rows it
   takes): a line that starts with a space continues the one before (the presets' indented
   continuation lines), an empty line separates paragraphs.  Returns the rows used. */
int View_wrapped(Screen *s, bool draw, const char *header, int row, int col, int rows, int width);
/* The same from its wrapped line `first` on (the lines before it wrapped, not drawn): a
   header longer than its rectangle read page by page.  Returns the rows used from first. */
int View_wrapped_from(Screen *s, bool draw, const char *header, int first, int row, int col,
                      int rows, int width);

/* Every key in as many columns as the screen needs, over the whole screen (status lines
   included).  Where one line per key would be cut (80×24: eight columns for the words, × and
   ÷ cut off), a setting's two keys share a line; where those lines are still cut in the
   columns they need, they go in two columns that hold them whole, on as many pages as that
   takes (Space turns them: a cut line would hide which key does what). */
void View_help_overlay(Screen *s, int rows, int cols, int page);
/* Every warning of the shown result about subjects (WarningSubject bits,
   View_listed_subjects: a conditioning's warnings are not the stable rank's), in full, in a box
   that scrolls by warnings (! opens it), from the first-th. */
void View_warnings_overlay(Screen *s, const Snapshot *shown, unsigned subjects, int first, int rows,
                           int cols);
/* The preset picker: the list on the left (source beside each name, the selection marked
   with > and bold, so it does not rest on colour), the selection's header on the right. */
void View_picker_overlay(Screen *s, const Picker *p, const char *note, int rows, int cols);
/* A prompt's label and the part of its text that keeps the cursor in view, on one row of
   width columns (never more: a long text scrolls, Prompt_first_shown), the terminal's cursor
   placed where typing goes (a prompt that takes no text shows none). */
void View_prompt_line(Screen *s, const Prompt *p, int row, int col, int width);
/* The prompt of p or x: its title, what is typed so far with a cursor, its detail, what the
   keys do. */
void View_prompt_overlay(Screen *s, const Prompt *p, const char *note, int rows, int cols);

#endif
