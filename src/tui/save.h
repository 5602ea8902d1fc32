/* Saving the screen's settings as a preset (issue 7) under the user's preset directory,
 * $XDG_CONFIG_HOME/attnscope/presets (or ~/.config/attnscope/presets), named by the time.
 * The text comes from the program's own preset writer; the file is written under a
 * temporary name and renamed, so it is whole or absent.
 */
#ifndef ATTNSCOPE_TUI_SAVE_H
#define ATTNSCOPE_TUI_SAVE_H

#include <stddef.h>

/* The user's preset directory into buf (NULL when neither variable is set). */
const char *Save_directory(char *buf, size_t size);

/* Writes text as attnscope-YYYYmmdd-HHMMSS.preset there (creating the directories), the
   path in path.  Returns 0, or -1 with the reason in err. */
int Save_preset(const char *text, char *path, size_t path_size, char *err, size_t size);

#endif
