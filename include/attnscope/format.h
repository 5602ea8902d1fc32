/* Numbers as text for the files attnscope writes (JSON, CSV): the shortest decimal that
 * reads back as the same double, so a value survives a round trip to the last bit. */
#ifndef ATTNSCOPE_FORMAT_H
#define ATTNSCOPE_FORMAT_H

#include <stddef.h>

enum { FORMAT_NUMBER_SIZE = 32 };

/* Writes x into buf and returns buf; "" for NaN and ±inf (each format says what it means). */
const char *Format_shortest(double x, char buf[FORMAT_NUMBER_SIZE]);

/* The length of the UTF-8 sequence at p, of which `left` bytes are there, or 0 when it is
   none (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, 0xFE and
   0xFF, or cut short): the one check of the preset and JSON readers. */
size_t Format_utf8_length(const unsigned char *p, size_t left);

#endif
