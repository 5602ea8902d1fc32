/* A small strict JSON reader (RFC 8259): what --jsonl reads on stdin and merge reads from
 * result files.  Strict because a sweep's input is data a script wrote: a trailing comma, a
 * duplicate key, invalid UTF-8 or a lone surrogate is a mistake to report, not to guess
 * around.  Curses-free and IO-free, so a fuzzer can drive it with arbitrary bytes.
 */
#ifndef ATTNSCOPE_JSON_READ_H
#define ATTNSCOPE_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    JSON_NULL,
    JSON_FALSE,
    JSON_TRUE,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT,
} JsonKind;

typedef struct JsonValue JsonValue;

struct JsonValue {
    JsonKind kind;
    /* JSON_NUMBER: the value and its literal (so that a whole number can be checked as it
       was written); JSON_STRING: the decoded UTF-8 text (NUL-terminated, may hold \u0000:
       see length).  Both point into the value's own storage. */
    double number;
    char *text;
    size_t length;
    /* JSON_ARRAY, JSON_OBJECT: count items, in input order; keys[i] names items[i] of an
       object. */
    int count;
    JsonValue *items;
    char **keys;
};

/* Deepest nesting accepted: a bound on the reader's recursion. */
enum { JSON_DEPTH_MAX = 64 };

/* What one document may hold.  A parsed value takes about 60 bytes, so the bound on values
   bounds the memory a document can make us take (a line of "[0,0,..." takes 30 times its
   size) whatever the bytes say; checking duplicate keys costs one hash lookup a key. */
typedef struct {
    size_t max_bytes;  /* of the text */
    int max_depth;     /* of nesting, at most JSON_DEPTH_MAX */
    size_t max_values; /* in the whole document, containers and keys' values included */
} JsonLimits;

/* What a record or a configuration line may hold: 64 MiB (the line reader's bound), depth
   64, 2^20 values (a batch document at T = 4096 holds about 25 000). */
JsonLimits Json_default_limits(void);

/* Parses exactly one JSON value (surrounding whitespace allowed) from text[0..length) within
   Json_default_limits().  Returns the value (free with JsonValue_free), or NULL with a
   message giving the byte offset and what was expected (or which bound was passed) in err. */
JsonValue *Json_parse(const char *text, size_t length, char *err, size_t size);

/* The same within the given limits (a reader of another format chooses its own). */
JsonValue *Json_parse_within(const char *text, size_t length, const JsonLimits *limits, char *err,
                             size_t size);

void JsonValue_free(JsonValue *v);

/* The member of an object named key, or NULL (also when v is not an object). */
const JsonValue *JsonValue_member(const JsonValue *v, const char *key);

/* "a number", "a string", ... for messages. */
const char *JsonKind_name(JsonKind kind);

#endif
