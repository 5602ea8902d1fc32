#include "json_read.h"

#include "line_reader.h"

#include "attnscope/format.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const unsigned char *text;
    size_t length, at;
    int depth;
    size_t values;
    const JsonLimits *limits;
    char *err;
    size_t size;
    bool failed;
} Reader;

static void fail(Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Keeps the first message: later ones are consequences of it. */
static void fail(Reader *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = true;
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->size, "JSON byte %zu: %s", r->at + 1, what);
}

static int peek(const Reader *r)
{
    return r->at < r->length ? r->text[r->at] : -1;
}

static void skip_space(Reader *r)
{
    while (r->at < r->length && (r->text[r->at] == ' ' || r->text[r->at] == '\t' ||
                                 r->text[r->at] == '\n' || r->text[r->at] == '\r'))
        r->at++;
}

static bool literal(Reader *r, const char *word)
{
    size_t n = strlen(word);
    if (r->length - r->at < n || memcmp(r->text + r->at, word, n) != 0) {
        /* What stands there instead: its letters, at most a dozen. */
        size_t found = 0;
        while (found < 12 && r->at + found < r->length && isalpha(r->text[r->at + found]))
            found++;
        fail(r, "expected a value (%s?), found '%.*s'", word, (int)found,
             (const char *)r->text + r->at);
        return false;
    }
    r->at += n;
    return true;
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* The number grammar of RFC 8259 §6, then strtod on the literal. */
static bool number(Reader *r, JsonValue *v)
{
    size_t start = r->at;
    if (peek(r) == '-')
        r->at++;
    if (peek(r) == '0') {
        r->at++;
    } else if (is_digit(peek(r))) {
        while (is_digit(peek(r)))
            r->at++;
    } else {
        fail(r, "expected a digit");
        return false;
    }
    if (peek(r) == '.') {
        r->at++;
        if (!is_digit(peek(r))) {
            fail(r, "expected a digit after '.'");
            return false;
        }
        while (is_digit(peek(r)))
            r->at++;
    }
    if (peek(r) == 'e' || peek(r) == 'E') {
        r->at++;
        if (peek(r) == '+' || peek(r) == '-')
            r->at++;
        if (!is_digit(peek(r))) {
            fail(r, "expected a digit in the exponent");
            return false;
        }
        while (is_digit(peek(r)))
            r->at++;
    }
    size_t n = r->at - start;
    v->text = malloc(n + 1);
    if (!v->text) {
        fail(r, "out of memory");
        return false;
    }
    memcpy(v->text, r->text + start, n);
    v->text[n] = '\0';
    v->length = n;
    errno = 0;
    v->number = strtod(v->text, NULL);
    if (!isfinite(v->number)) {
        r->at = start;
        fail(r, "number %.40s is out of range of a double", v->text);
        return false;
    }
    v->kind = JSON_NUMBER;
    return true;
}

static int hex4(Reader *r)
{
    int value = 0;
    for (int i = 0; i < 4; i++) {
        int c = peek(r);
        int digit = is_digit(c)            ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
        if (digit < 0) {
            fail(r, "expected 4 hexadecimal digits after \\u");
            return -1;
        }
        value = value * 16 + digit;
        r->at++;
    }
    return value;
}

static size_t put_utf8(unsigned char *out, uint32_t code)
{
    if (code < 0x80) {
        out[0] = (unsigned char)code;
        return 1;
    }
    if (code < 0x800) {
        out[0] = (unsigned char)(0xC0 | code >> 6);
        out[1] = (unsigned char)(0x80 | (code & 0x3F));
        return 2;
    }
    if (code < 0x10000) {
        out[0] = (unsigned char)(0xE0 | code >> 12);
        out[1] = (unsigned char)(0x80 | (code >> 6 & 0x3F));
        out[2] = (unsigned char)(0x80 | (code & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | code >> 18);
    out[1] = (unsigned char)(0x80 | (code >> 12 & 0x3F));
    out[2] = (unsigned char)(0x80 | (code >> 6 & 0x3F));
    out[3] = (unsigned char)(0x80 | (code & 0x3F));
    return 4;
}

/* A \u escape (the 'u' consumed), pairing surrogates; the code point or -1. */
static long unicode_escape(Reader *r)
{
    int high = hex4(r);
    if (high < 0)
        return -1;
    if (high >= 0xDC00 && high <= 0xDFFF) {
        fail(r, "a lone low surrogate \\u%04X", (unsigned)high);
        return -1;
    }
    if (high < 0xD800 || high > 0xDBFF)
        return high;
    if (r->length - r->at < 2 || r->text[r->at] != '\\' || r->text[r->at + 1] != 'u') {
        fail(r, "a high surrogate \\u%04X without its low surrogate", (unsigned)high);
        return -1;
    }
    r->at += 2;
    int low = hex4(r);
    if (low < 0)
        return -1;
    if (low < 0xDC00 || low > 0xDFFF) {
        fail(r, "a high surrogate \\u%04X followed by \\u%04X, not a low surrogate", (unsigned)high,
             (unsigned)low);
        return -1;
    }
    return 0x10000 + ((long)(high - 0xD800) << 10) + (low - 0xDC00);
}

/* A string (the opening quote next); the decoded text is never longer than the source. */
static char *string(Reader *r, size_t *length)
{
    r->at++;
    /* The source up to the closing quote bounds the decoded text (an escape never decodes
       to more bytes than it takes). */
    size_t span = r->at;
    while (span < r->length && r->text[span] != '"')
        span += r->text[span] == '\\' ? 2 : 1;
    unsigned char *out = malloc(span - r->at + 1);
    size_t n = 0;
    if (!out) {
        fail(r, "out of memory");
        return NULL;
    }
    for (;;) {
        int c = peek(r);
        if (c < 0) {
            fail(r, "a string without its closing quote");
            break;
        }
        if (c == '"') {
            r->at++;
            out[n] = '\0';
            *length = n;
            return (char *)out;
        }
        if (c < 0x20) {
            fail(r, "control byte 0x%02x inside a string (escape it)", (unsigned)c);
            break;
        }
        if (c != '\\') {
            size_t k = Format_utf8_length(r->text + r->at, r->length - r->at);
            if (!k) {
                fail(r, "byte 0x%02x is not UTF-8", (unsigned)c);
                break;
            }
            memcpy(out + n, r->text + r->at, k);
            n += k;
            r->at += k;
            continue;
        }
        r->at++;
        int e = peek(r);
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *found = e > 0 ? strchr(from, e) : NULL;
        if (found) {
            out[n++] = (unsigned char)to[found - from];
            r->at++;
        } else if (e == 'u') {
            r->at++;
            long code = unicode_escape(r);
            if (code < 0)
                break;
            n += put_utf8(out + n, (uint32_t)code);
        } else {
            fail(r, "unknown escape '\\%c'", e > 0x20 && e < 0x7F ? e : '?');
            break;
        }
    }
    free(out);
    return NULL;
}

static bool value(Reader *r, JsonValue *v);

/* The keys an object has so far, hashed (FNV-1a, open addressing), so that checking a
   duplicate costs one lookup: a linear scan made 80 000 keys take 14 s. */
typedef struct {
    int *slots; /* an item's index + 1, or 0 when free */
    size_t mask;
} KeySet;

static size_t key_hash(const char *key)
{
    size_t h = 14695981039346656037u;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    return h;
}

/* The slot holding key, or the free slot where it goes. */
static int *key_slot(const KeySet *set, char *const *keys, const char *key)
{
    size_t i = key_hash(key) & set->mask;
    while (set->slots[i] && strcmp(keys[set->slots[i] - 1], key) != 0)
        i = (i + 1) & set->mask;
    return &set->slots[i];
}

/* Keeps the table at most half full for count keys; -1 when memory ran out. */
static int key_set_fit(KeySet *set, char *const *keys, int count)
{
    size_t want = set->mask + 1;
    while (want < 2 * ((size_t)count + 1))
        want *= 2;
    if (set->slots && want == set->mask + 1)
        return 0;
    int *slots = calloc(want, sizeof *slots);
    if (!slots)
        return -1;
    free(set->slots);
    set->slots = slots;
    set->mask = want - 1;
    for (int i = 0; i < count; i++)
        *key_slot(set, keys, keys[i]) = i + 1;
    return 0;
}

static bool grow(Reader *r, JsonValue *v, int *capacity, bool keyed)
{
    if (v->count < *capacity)
        return true;
    int want = *capacity ? 2 * *capacity : 8;
    JsonValue *items = realloc(v->items, sizeof *items * (size_t)want);
    if (items)
        v->items = items;
    char **keys = keyed ? realloc(v->keys, sizeof *keys * (size_t)want) : NULL;
    if (keys)
        v->keys = keys;
    if (!items || (keyed && !keys)) {
        fail(r, "out of memory");
        return false;
    }
    *capacity = want;
    return true;
}

static bool members(Reader *r, JsonValue *v, bool keyed, KeySet *keys);

/* An array or an object (the opening bracket next). */
static bool container(Reader *r, JsonValue *v, bool keyed)
{
    char close = keyed ? '}' : ']';
    v->kind = keyed ? JSON_OBJECT : JSON_ARRAY;
    if (++r->depth > r->limits->max_depth) {
        fail(r, "nested deeper than %d", r->limits->max_depth);
        return false;
    }
    r->at++;
    skip_space(r);
    if (peek(r) == close) {
        r->at++;
        r->depth--;
        return true;
    }
    KeySet keys = {.mask = 7};
    bool read = members(r, v, keyed, &keys);
    free(keys.slots);
    return read;
}

/* The members of a container (at least one), through the closing bracket. */
static bool members(Reader *r, JsonValue *v, bool keyed, KeySet *keys)
{
    char close = keyed ? '}' : ']';
    int capacity = 0;
    for (;;) {
        if (!grow(r, v, &capacity, keyed))
            return false;
        JsonValue *item = &v->items[v->count];
        memset(item, 0, sizeof *item);
        if (keyed) {
            skip_space(r);
            if (peek(r) != '"') {
                fail(r, "expected a quoted key");
                return false;
            }
            size_t key_length;
            size_t key_at = r->at;
            char *key = string(r, &key_length);
            if (!key)
                return false;
            bool nul = strlen(key) != key_length;
            int *slot = NULL;
            if (!nul && key_set_fit(keys, v->keys, v->count)) {
                free(key);
                fail(r, "out of memory");
                return false;
            }
            if (!nul)
                slot = key_slot(keys, v->keys, key);
            if (nul || *slot) {
                r->at = key_at;
                fail(r, nul ? "a key holding \\u0000" : "duplicate key \"%.40s\"", key);
                free(key);
                return false;
            }
            v->keys[v->count] = key;
            *slot = v->count + 1;
            skip_space(r);
            if (peek(r) != ':') {
                v->count++; /* the key is freed with the object */
                fail(r, "expected ':' after the key");
                return false;
            }
            r->at++;
        }
        v->count++;
        if (!value(r, item))
            return false;
        skip_space(r);
        if (peek(r) == ',') {
            r->at++;
            continue;
        }
        if (peek(r) == close) {
            r->at++;
            r->depth--;
            return true;
        }
        fail(r, "expected ',' or '%c'", close);
        return false;
    }
}

static bool value(Reader *r, JsonValue *v)
{
    skip_space(r);
    if (++r->values > r->limits->max_values) {
        fail(r, "more than %zu values", r->limits->max_values);
        return false;
    }
    switch (peek(r)) {
    case '{':
        return container(r, v, true);
    case '[':
        return container(r, v, false);
    case '"':
        v->text = string(r, &v->length);
        v->kind = JSON_STRING;
        return v->text != NULL;
    case 't':
        v->kind = JSON_TRUE;
        return literal(r, "true");
    case 'f':
        v->kind = JSON_FALSE;
        return literal(r, "false");
    case 'n':
        v->kind = JSON_NULL;
        return literal(r, "null");
    case -1:
        fail(r, "expected a value, found the end");
        return false;
    default:
        if (peek(r) == '-' || is_digit(peek(r)))
            return number(r, v);
        if (peek(r) > 0x20 && peek(r) < 0x7F)
            fail(r, "expected a value, found '%c'", peek(r));
        else
            fail(r, "expected a value, found byte 0x%02X", (unsigned)peek(r));
        return false;
    }
}

static void release(JsonValue *v)
{
    for (int i = 0; i < v->count; i++) {
        release(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->text);
}

void JsonValue_free(JsonValue *v)
{
    if (!v)
        return;
    release(v);
    free(v);
}

JsonLimits Json_default_limits(void)
{
    return (JsonLimits){
        .max_bytes = LINE_MAX_BYTES, .max_depth = JSON_DEPTH_MAX, .max_values = (size_t)1 << 20};
}

JsonValue *Json_parse(const char *text, size_t length, char *err, size_t size)
{
    JsonLimits limits = Json_default_limits();
    return Json_parse_within(text, length, &limits, err, size);
}

JsonValue *Json_parse_within(const char *text, size_t length, const JsonLimits *limits, char *err,
                             size_t size)
{
    if (length > limits->max_bytes) {
        snprintf(err, size, "JSON of %zu bytes, above the %zu accepted", length, limits->max_bytes);
        return NULL;
    }
    JsonLimits bounded = *limits;
    if (bounded.max_depth > JSON_DEPTH_MAX)
        bounded.max_depth = JSON_DEPTH_MAX; /* the recursion's bound */
    Reader r = {.text = (const unsigned char *)text,
                .length = length,
                .limits = &bounded,
                .err = err,
                .size = size};
    JsonValue *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, size, "out of memory");
        return NULL;
    }
    /* RFC 8259 §8.1 lets a reader ignore a byte-order mark; transformers' json.loads refuses
       one, so a config.json holding it is refused here too, by name. */
    if (length >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        fail(&r, "a UTF-8 byte-order mark (EF BB BF) before the value: JSON has none; save the "
                 "file without it");
    else if (value(&r, v)) {
        skip_space(&r);
        if (r.at < r.length)
            fail(&r, "text after the value");
    }
    if (r.failed) {
        JsonValue_free(v);
        return NULL;
    }
    return v;
}

const JsonValue *JsonValue_member(const JsonValue *v, const char *key)
{
    if (!v || v->kind != JSON_OBJECT)
        return NULL;
    for (int i = 0; i < v->count; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

const char *JsonKind_name(JsonKind kind)
{
    static const char *const names[] = {"null",     "false",    "true",     "a number",
                                        "a string", "an array", "an object"};
    return names[kind];
}
