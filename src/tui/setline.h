/* The `:` line: any setting by its name, typed as on the command line or in a preset
 * (`head-dim 128`, `--head-dim 128`, `head-dim=128`, several in a row), for the settings that
 * have no key.  A Prompt edits it at its cursor; Tab completes the setting's name (or an
 * enumeration's value) at the cursor, cycling through the matches, and shows what the
 * completed one accepts; ↑/↓ recall the session's earlier lines, refused ones included.
 * Curses-free but for the KEY_ codes, so it is unit-tested.
 */
#ifndef ATTNSCOPE_TUI_SETLINE_H
#define ATTNSCOPE_TUI_SETLINE_H

#include "keys.h"
#include "prompt.h"

#include <stdbool.h>
#include <stddef.h>

enum { SETLINE_HISTORY = 32, SETLINE_DETAIL_SIZE = 320 };

typedef struct {
    Prompt prompt;
    /* The lines entered this session (taken or refused), oldest first; recalled: the one ↑/↓
       show (count: the line being typed, kept in typed meanwhile). */
    char history[SETLINE_HISTORY][PROMPT_SIZE];
    int count, recalled;
    char typed[PROMPT_SIZE];
    /* Tab's cycle while the text is what the last Tab made: the text before the word, the
       word as typed before the cursor (without its "--"), the text after the cursor, the match
       shown (-1: none yet), and whether the word is a value (of named, NULL where its name is
       no setting) or a name. */
    bool completing;
    char stem[PROMPT_SIZE], partial[PROMPT_SIZE], rest[PROMPT_SIZE];
    int match;
    bool value;
    const Setting *named;
    char detail[SETLINE_DETAIL_SIZE]; /* what the completed setting accepts (prompt.detail) */
} SetLine;

/* Opens an empty line (the history stays). */
void SetLine_open(SetLine *l);

/* One key: Tab completes, ↑/↓ recall, the others edit as Prompt_key does (its outcome is
   returned; Tab and the arrows return PROMPT_EDITED).  c: the settings on, which the detail
   of a completed name shows.  Any key but Tab takes the detail away (the line it spoke of
   is edited, or refused at Enter with its reason). */
PromptOutcome SetLine_key(SetLine *l, int key, const Config *c);

/* The text into the history at Enter, whether the line was taken or refused (as a shell keeps
   a mistyped command, for ↑ to bring it back to fix). */
void SetLine_remember(SetLine *l);

/* Applies the typed settings to next as a key's change is checked, all or nothing: the command
   line's parsing (SettingLine_set), its relations between settings, which the settings the
   line does not name follow as under a key (width 64 takes T down with it) while those it
   names never move (width 64 tokens 128 is refused in the command line's words), then the
   shapes a checkpoint fixes.  The note says what was set, what followed and which of it the
   model does not use, or why nothing was.  Returns true when the line is taken (next may be
   as it was). */
bool SetLine_apply(const char *text, Controls *next, char *note, size_t size);

#endif
