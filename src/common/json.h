/* A small JSON writer into a growing memory buffer: the document is complete before a
 * single byte reaches stdout, so a failure never leaves half a document behind. */
#ifndef ATTNSCOPE_JSON_H
#define ATTNSCOPE_JSON_H

#include "attnscope/config.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *data;
    size_t length, capacity;
    bool failed; /* out of memory: the text is incomplete */
} Text;

void Text_free(Text *t);
void Text_printf(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The shortest decimal that reads back as the same double; null when not finite. */
void Json_number(Text *t, double x);
/* A quoted, escaped JSON string. */
void Json_string(Text *t, const char *s);
/* A value the reader parsed (json_read.h), as compact JSON with numbers as they were written;
   members stop being added once the text passes `limit` bytes (SIZE_MAX: all of them), so
   that a long value can be cut. */
struct JsonValue;
void Json_value(Text *t, const struct JsonValue *v, size_t limit);
/* [x0, x1, ...] with Json_number. */
void Json_numbers(Text *t, const double *x, int n);

/* Every setting of c under its JSON key ("T":256,"d":256,...), without the braces: the
   batch document's "config" and an exported checkpoint's config.json. */
void Json_config_members(Text *t, const Config *c);

#endif
