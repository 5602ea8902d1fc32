/* Plain-ASCII spellings of the few non-ASCII characters the screen uses, for terminals
 * without a UTF-8 locale and for --ascii.  Every label is written once, in UTF-8, and
 * passes through here when Unicode is off, so no non-ASCII byte can reach such a terminal.
 */
#ifndef ATTNSCOPE_TUI_ASCII_H
#define ATTNSCOPE_TUI_ASCII_H

#include <stddef.h>
#include <stdint.h>

/* Copies utf8 into out (NUL-terminated, truncated to size), replacing each known symbol
   by its ASCII spelling and any other non-ASCII character by '?'.  Returns out. */
char *Ascii_transliterate(const char *utf8, char *out, size_t size);

/* Decodes one UTF-8 character at s; stores it in *cp and returns its length in bytes
   (1 for an invalid byte, which decodes as U+FFFD; 0 at the end of the string). */
int Ascii_decode(const char *s, uint32_t *cp);

/* Encodes cp as UTF-8 into out (at least 5 bytes, NUL-terminated); returns the length. */
int Ascii_encode(uint32_t cp, char *out);

/* Number of characters (terminal columns: every character the screen uses is one column
   wide) in the UTF-8 string s. */
int Ascii_columns(const char *s);

/* The bytes of the longest run of whole words at the start of s (ending before a space or at
   the end of s) that takes at most width columns; 0 where the first word alone is wider. */
size_t Ascii_words_fit(const char *s, int width);

/* Cuts s in place to at most width columns (whole characters), ending in ellipsis when it
   was cut (NULL: a plain cut).  Returns s. */
char *Ascii_cut(char *s, int width, const char *ellipsis);

#endif
