/* A one-line text prompt in an overlay (the preset name of p, the export directory of x):
 * a line editor that takes only the characters its owner allows.  Curses-free but for the
 * KEY_ codes it reads, so its editing is unit-tested.
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
    /* A sentence under the label, wrapped on two rows (NULL: none): the long-job question's
       size that would fit. */
    const char *detail;
} Prompt;

typedef enum {
    PROMPT_EDITED,  /* a character added or removed (or nothing to remove) */
    PROMPT_DONE,    /* Enter */
    PROMPT_CANCEL,  /* Esc */
    PROMPT_REFUSED, /* a character the prompt does not allow */
    PROMPT_FULL     /* the text already has max_chars characters */
} PromptOutcome;

/* One key: printable characters the prompt allows are added, Backspace removes one. */
PromptOutcome Prompt_key(Prompt *p, int key);

/* Printable ASCII, space included (a path). */
bool Prompt_printable(int c);

#endif
