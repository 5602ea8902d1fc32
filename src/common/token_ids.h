/* A token-id file (--token-ids FILE): the ids a model's embedding table looks up for the
 * input rows, one per line or as a JSON array (docs/model.md §1.1).  Bounded (the file, the
 * count: T's range) and strict: a negative, fractional or non-numeric id is refused naming
 * its line (or index) and the text found, since a wrong file (embeddings, logits, a tokenizer's
 * vocabulary) must not pass as ids.  The parse does no I/O, so a fuzzer can drive it.
 */
#ifndef ATTNSCOPE_COMMON_TOKEN_IDS_H
#define ATTNSCOPE_COMMON_TOKEN_IDS_H

#include <stddef.h>
#include <stdint.h>

/* The largest file read: far more than CONFIG_TOKENS_MAX ids with any spacing. */
#define TOKEN_IDS_FILE_MAX ((size_t)1 << 20)

typedef struct {
    int32_t *ids;
    int count;
    /* Where id i was written, for messages: its line (from 1) in the lines format; NULL for
       a JSON array, whose messages give the index. */
    int32_t *lines;
} TokenIds;

/* Parses text[0..length) (`name` for messages): a JSON array of integers when the first
   non-blank byte is '[', otherwise one integer per line (blank lines and blanks around a
   number skipped).  Between CONFIG_TOKENS_MIN and CONFIG_TOKENS_MAX ids, each 0 … 2^31 − 1.
   Returns 0, or -1 with "NAME:LINE: …" (or "NAME: [INDEX] …") in err. */
int TokenIds_parse(const char *text, size_t length, const char *name, TokenIds *out, char *err,
                   size_t size);

/* Reads and parses the regular file at path (at most TOKEN_IDS_FILE_MAX bytes). */
int TokenIds_read(const char *path, TokenIds *out, char *err, size_t size);

/* Every id below vocab (the embedding table's rows): 0, or -1 naming the first that is not
   and `table` (what fixes V) in err. */
int TokenIds_check_vocab(const TokenIds *t, const char *name, int vocab, const char *table,
                         char *err, size_t size);

void TokenIds_free(TokenIds *t);

#endif
