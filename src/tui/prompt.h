/* A one-line text prompt in an overlay (the preset name of p, the export directory of x):
 * a line editor that takes only the characters its owner allows, typing at its cursor with
 * the shells' keys (←/→, Home/End, Delete, Ctrl-A/E/D/K/U/W), and the part of a long text
 * that keeps the cursor in view.  Curses-free but for the KEY_ codes it reads, so its editing
 * is unit-tested.
 */
#ifndef ATTNSCOPE_TUI_PROMPT_H
#define ATTNSCOPE_TUI_PROMPT_H

#include <stdbool.h>

enum { PROMPT_SIZE = 256 };

typedef struct {
    const char *title; /* " save the settings as a preset " */
    const char *label; /* "name: " */
    const char *hint;  /* what Enter and Esc do */
    int max_chars;     /* below PROMPT_SIZE */
    bool (*allowed)(int c);
    char text[PROMPT_SIZE];
    int cursor; /* where typing goes: 0 (before the first character) to strlen(text) */
    /* A sentence under the label, wrapped on two rows (NULL: none): the long-job question's
       size that would fit. */
    const char *detail;
    /* The detail's first bytes that may be cut, by words and with an ellipsis, where the whole
       would not fit its rows (0: none): a setting's description, so that what it accepts and
       its value now are never cut. */
    int detail_elidable;
} Prompt;

typedef enum {
    PROMPT_EDITED,  /* a character added or removed, the cursor moved (or nothing to do) */
    PROMPT_DONE,    /* Enter */
    PROMPT_CANCEL,  /* Esc */
    PROMPT_REFUSED, /* a character the prompt does not allow */
    PROMPT_FULL     /* the text already has max_chars characters */
} PromptOutcome;

/* One key.  Printable characters the prompt allows are inserted at the cursor; Backspace
   removes the one before it, Delete (Ctrl-D) the one under it; ←/→ move by one, Home/End
   (Ctrl-A/Ctrl-E) to the ends; Ctrl-K removes from the cursor to the end, Ctrl-U from the
   start to the cursor, Ctrl-W the word before the cursor (with the blanks after it).  Ctrl-D
   on an empty line cancels, as Esc does (a shell's end of input).  A prompt that takes no
   text (max_chars 0: a question) leaves the editing keys to its owner: PROMPT_REFUSED. */
PromptOutcome Prompt_key(Prompt *p, int key);

/* The text replaced (cut at max_chars), the cursor at its end: a recalled or completed line. */
void Prompt_set_text(Prompt *p, const char *text);

/* The first character of the text shown in `room` columns (the cursor's cell past the end
   counted): 0 while text and that cell fit; else the text scrolls by half the room at a time,
   so that the cursor stays in view, and never leaves columns empty past the end. */
int Prompt_first_shown(const Prompt *p, int room);

/* Printable ASCII, space included (a path). */
bool Prompt_printable(int c);

#endif
