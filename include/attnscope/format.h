/* Numbers as text for the files attnscope writes (JSON, CSV): the shortest decimal that
 * reads back as the same double, so a value survives a round trip to the last bit. */
#ifndef ATTNSCOPE_FORMAT_H
#define ATTNSCOPE_FORMAT_H

enum { FORMAT_NUMBER_SIZE = 32 };

/* Writes x into buf and returns buf; "" for NaN and ±inf (each format says what it means). */
const char *Format_shortest(double x, char buf[FORMAT_NUMBER_SIZE]);

#endif
