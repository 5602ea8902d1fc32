/* Token-id files (token_ids.h). */
#include "token_ids.h"

#include "attnscope/config.h"
#include "attnscope/layer.h"
#include "json_read.h"
#include "line_reader.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Up to 32 bytes of what was found, non-printable bytes as '?', for a message. */
static const char *excerpt(const char *text, size_t length, char *buf, size_t size)
{
    size_t n = length < 32 ? length : 32, i;
    for (i = 0; i < n && i + 4 < size; i++)
        buf[i] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
    if (n < length && i + 4 < size) {
        memcpy(buf + i, "...", 3);
        i += 3;
    }
    buf[i] = '\0';
    return buf;
}

/* A path and a line or index, for messages. */
enum { WHERE_SIZE = 4200 };

static bool blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* One more id, where there is room for it: the count is bounded by T's range. */
static int add(TokenIds *out, long long id, int line, const char *where, char *err, size_t size)
{
    if (out->count == CONFIG_TOKENS_MAX) {
        snprintf(err, size, "%s: more than %d ids (T is at most %d)", where, CONFIG_TOKENS_MAX,
                 CONFIG_TOKENS_MAX);
        return -1;
    }
    out->ids[out->count] = (int32_t)id;
    if (out->lines)
        out->lines[out->count] = line;
    out->count++;
    return 0;
}

/* "123" (digits only) as an id in *id: 1, or 0 where the text is not digits alone, -1 where
   it is too large for an id. */
static int whole_number(const char *text, size_t length, long long *id)
{
    long long value = 0;
    bool large = false;
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9')
            return 0;
        large = large || (value = value * 10 + (text[i] - '0')) > INT32_MAX;
    }
    *id = value;
    return length == 0 ? 0 : large ? -1 : 1;
}

/* The id written as text[0..length) (a line's, or a JSON number's literal), or -1 with the
   message, `where` first. */
static int one_id(const char *text, size_t length, const char *where, long long *id, char *err,
                  size_t size)
{
    char found[40];
    bool negative = length > 1 && text[0] == '-';
    int status = whole_number(text + negative, length - negative, id);
    if (status == 1 && !negative)
        return 0;
    if (status == 1 || (negative && status == -1))
        snprintf(err, size, "%s: %s is negative: a token id is 0 … V − 1", where,
                 excerpt(text, length, found, sizeof found));
    else if (status == -1)
        snprintf(err, size, "%s: %s is too large for a token id (at most 2^31 − 1)", where,
                 excerpt(text, length, found, sizeof found));
    else
        snprintf(err, size, "%s: '%s' is not a token id (a whole number 0 … V − 1)", where,
                 excerpt(text, length, found, sizeof found));
    return -1;
}

static int parse_lines(const char *text, size_t length, const char *name, TokenIds *out, char *err,
                       size_t size)
{
    int line = 0;
    for (size_t at = 0; at < length;) {
        const char *end = memchr(text + at, '\n', length - at);
        size_t stop = end ? (size_t)(end - text) : length, first = at, last = stop;
        line++;
        while (first < last && blank(text[first]))
            first++;
        while (last > first && blank(text[last - 1]))
            last--;
        at = stop + 1;
        if (first == last)
            continue;
        char where[WHERE_SIZE];
        snprintf(where, sizeof where, "%s:%d", name, line);
        long long id;
        if (one_id(text + first, last - first, where, &id, err, size) ||
            add(out, id, line, where, err, size))
            return -1;
    }
    return 0;
}

static int parse_array(const char *text, size_t length, const char *name, TokenIds *out, char *err,
                       size_t size)
{
    /* Depth 1 and a value per id (and one for the array) are all an id list needs. */
    JsonLimits limits = {
        .max_bytes = TOKEN_IDS_FILE_MAX, .max_depth = 1, .max_values = CONFIG_TOKENS_MAX + 2};
    char json_err[256];
    JsonValue *v = Json_parse_within(text, length, &limits, json_err, sizeof json_err);
    if (!v) {
        snprintf(err, size, "%s: %s (expected a JSON array of token ids, or one id a line)", name,
                 json_err);
        return -1;
    }
    int status = 0;
    if (v->kind != JSON_ARRAY) {
        snprintf(err, size, "%s: the file is %s, expected a JSON array of token ids", name,
                 JsonKind_name(v->kind));
        status = -1;
    }
    for (int i = 0; status == 0 && i < v->count; i++) {
        const JsonValue *item = &v->items[i];
        char where[WHERE_SIZE];
        snprintf(where, sizeof where, "%s: [%d]", name, i);
        long long id = 0;
        if (item->kind != JSON_NUMBER) {
            snprintf(err, size, "%s is %s, expected a token id (a whole number 0 … V − 1)", where,
                     JsonKind_name(item->kind));
            status = -1;
        } else {
            status = one_id(item->text, strlen(item->text), where, &id, err, size);
        }
        if (status == 0)
            status = add(out, id, 0, where, err, size);
    }
    JsonValue_free(v);
    return status;
}

int TokenIds_parse(const char *text, size_t length, const char *name, TokenIds *out, char *err,
                   size_t size)
{
    size_t first = 0;
    while (first < length && blank(text[first]))
        first++;
    bool array = first < length && text[first] == '[';
    *out = (TokenIds){.ids = malloc(sizeof(int32_t) * CONFIG_TOKENS_MAX),
                      .lines = array ? NULL : malloc(sizeof(int32_t) * CONFIG_TOKENS_MAX)};
    if (!out->ids || (!array && !out->lines)) {
        TokenIds_free(out);
        snprintf(err, size, "%s: out of memory", name);
        return -1;
    }
    int status = array ? parse_array(text, length, name, out, err, size)
                       : parse_lines(text, length, name, out, err, size);
    if (status == 0 && out->count < CONFIG_TOKENS_MIN) {
        snprintf(err, size, "%s: %d token id%s, expected at least %d (T ≥ %d)", name, out->count,
                 out->count == 1 ? "" : "s", CONFIG_TOKENS_MIN, CONFIG_TOKENS_MIN);
        status = -1;
    }
    if (status)
        TokenIds_free(out);
    return status;
}

int TokenIds_read(const char *path, TokenIds *out, char *err, size_t size)
{
    char *text;
    size_t length;
    FileWhole outcome = File_read_regular(path, TOKEN_IDS_FILE_MAX, &text, &length, err, size);
    int status = -1;
    if (outcome == FILE_WHOLE_NO_MEMORY)
        snprintf(err, size, "'%s': out of memory", path);
    else if (outcome == FILE_WHOLE_TOO_LARGE)
        snprintf(err, size, "'%s': larger than %zu bytes, more than %d token ids can take", path,
                 TOKEN_IDS_FILE_MAX, CONFIG_TOKENS_MAX);
    else if (outcome == FILE_WHOLE_READ)
        status = TokenIds_parse(text, length, path, out, err, size);
    free(text);
    return status;
}

int TokenIds_check_vocab(const TokenIds *t, const char *name, int vocab, const char *table,
                         char *err, size_t size)
{
    return Layer_token_ids_below(t->ids, t->lines, t->count, name, vocab, table, err, size) ? 0
                                                                                            : -1;
}

void TokenIds_free(TokenIds *t)
{
    free(t->ids);
    free(t->lines);
    *t = (TokenIds){0};
}
