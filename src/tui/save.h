/* Saving the screen's settings as a preset (issue 7) under the user's preset directory,
 * $XDG_CONFIG_HOME/attnscope/presets (or ~/.config/attnscope/presets), under a name the
 * user types or the time.  The text comes from the program's own preset writer; the file
 * is written under a temporary name and linked to its name, so it is whole or absent and
 * never replaces a preset already there.
 */
#ifndef ATTNSCOPE_TUI_SAVE_H
#define ATTNSCOPE_TUI_SAVE_H

#include "attnscope/config.h"

#include <stdbool.h>
#include <stddef.h>

enum { SAVE_NAME_MAX = 64 };

/* The header comment of a saved preset: its name, when it was saved, and what it shows (every
   setting as the status line shows it), in lines under 90 columns.  Returns the length, as
   snprintf does. */
int Save_header(const Config *c, const char *name, const char *when, char *buf, size_t size);

/* Whether c may appear in a preset's name (letters, digits, '-', '_', '.'). */
bool Save_name_char(int c);

/* Writes text as NAME.preset there (creating the directories), or, when name is NULL or
   empty, as attnscope-YYYYmmdd-HHMMSS.preset; the path in path.  Returns 0, or -1 with the
   reason in err (a bad name, a name already taken, a write that failed). */
int Save_preset(const char *text, const char *name, char *path, size_t path_size, char *err,
                size_t size);

#endif
