/* Where presets are found, wherever the program is: the shipped presets (installed, next to
 * the binary, or in the source tree), the user's own, and a preset given by name.
 */
#ifndef ATTNSCOPE_COMMON_PRESETS_H
#define ATTNSCOPE_COMMON_PRESETS_H

#include <stddef.h>

/* The shipped presets' directory into buf, the first that exists of: $ATTNSCOPE_PRESETS;
   the installed layout around the binary (the presets in share/attnscope/presets beside
   the binary's bin/, which follows an installation moved with DESTDIR); the installed path
   (PREFIX/share/attnscope/presets); a presets/ next to the binary; the source tree the
   binary was built in (presets/ beside build/); ./presets.  NULL when none exists. */
const char *Presets_shipped_directory(char *buf, size_t size);

/* The user's presets, $XDG_CONFIG_HOME/attnscope/presets or ~/.config/attnscope/presets,
   into buf (NULL when neither variable is set; the directory may not exist yet). */
const char *Presets_user_directory(char *buf, size_t size);

/* What --preset ARG reads: ARG itself when it names a file or a path (has a '/'); otherwise
   the preset of that name (".preset" may be left out): the user's first, then the shipped
   ones, then the tour's, by its file name or by its name without its number
   ("entropy-collapse" is tour/10-entropy-collapse.preset).  Returns 0 with the file in path, or -1 with a message in err that
   names the argument and where it was looked for. */
int Presets_resolve(const char *arg, char *path, size_t path_size, char *err, size_t size);

#endif
