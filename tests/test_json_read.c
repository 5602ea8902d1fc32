/* The strict JSON reader: what RFC 8259 accepts it reads to the same values; everything it
 * forbids is refused with the byte offset, never read half-way. */
#include "testing.h"

#include "json_read.h"

#include <stdlib.h>
#include <string.h>

static JsonValue *parse(const char *text, char *err)
{
    return Json_parse(text, strlen(text), err, 256);
}

static void test_values(void **state)
{
    (void)state;
    char err[256];
    JsonValue *v = parse(" {\"T\": 256, \"s\": -1.5e-3, \"a\": [true, false, null, \"x\"],"
                         " \"o\": {}, \"e\": []}\n",
                         err);
    assert_non_null(v);
    assert_int_equal(v->kind, JSON_OBJECT);
    assert_int_equal(v->count, 5);
    const JsonValue *t = JsonValue_member(v, "T");
    assert_int_equal(t->kind, JSON_NUMBER);
    assert_true(t->number == 256);
    assert_string_equal(t->text, "256");
    assert_true(JsonValue_member(v, "s")->number == -1.5e-3);
    const JsonValue *a = JsonValue_member(v, "a");
    assert_int_equal(a->count, 4);
    assert_int_equal(a->items[0].kind, JSON_TRUE);
    assert_int_equal(a->items[1].kind, JSON_FALSE);
    assert_int_equal(a->items[2].kind, JSON_NULL);
    assert_string_equal(a->items[3].text, "x");
    assert_int_equal(JsonValue_member(v, "o")->kind, JSON_OBJECT);
    assert_int_equal(JsonValue_member(v, "e")->count, 0);
    assert_null(JsonValue_member(v, "missing"));
    assert_null(JsonValue_member(a, "T")); /* not an object */
    JsonValue_free(v);
}

static void test_strings(void **state)
{
    (void)state;
    char err[256];
    /* Every escape, a BMP character by \u, a surrogate pair, raw UTF-8 and \u0000. */
    JsonValue *v =
        parse("\"q\\\"b\\\\s\\/\\b\\f\\n\\r\\t \\u00e9 \\ud83d\\ude00 \xc3\xa9 \\u0000!\"", err);
    assert_non_null(v);
    const char expected[] = "q\"b\\s/\b\f\n\r\t \xc3\xa9 \xf0\x9f\x98\x80 \xc3\xa9 \0!";
    assert_int_equal(v->length, sizeof expected - 1);
    assert_memory_equal(v->text, expected, sizeof expected - 1);
    JsonValue_free(v);
}

static void test_numbers_read_exactly(void **state)
{
    (void)state;
    char err[256];
    const char *texts[] = {"0",    "-0",       "9007199254740991",       "0.1",
                           "1E+2", "2.5e-308", "-1.7976931348623157e308"};
    double values[] = {0, -0.0, 9007199254740991.0, 0.1, 100, 2.5e-308, -1.7976931348623157e308};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        JsonValue *v = parse(texts[i], err);
        assert_non_null(v);
        assert_true(v->number == values[i]);
        JsonValue_free(v);
    }
}

/* Each malformed text is refused, and the message says where and what. */
static void test_refusals(void **state)
{
    (void)state;
    const struct {
        const char *text;
        const char *says;
    } cases[] = {
        {"", "expected a value, found the end"},
        {"   ", "found the end"},
        {"{\"a\":1,}", "expected a quoted key"},
        {"[1,]", "expected a value"},
        {"[1 2]", "expected ',' or ']'"},
        {"{\"a\" 1}", "expected ':'"},
        {"{\"a\":1,\"a\":2}", "duplicate key \"a\""},
        {"{a:1}", "expected a quoted key"},
        {"01", "text after the value"},
        {"1.", "expected a digit after '.'"},
        {".5", "expected a value"},
        {"1e", "digit in the exponent"},
        {"+1", "expected a value"},
        {"1e400", "out of range"},
        {"NaN", "expected a value"},
        {"tru", "expected a value (true?), found 'tru'"},
        {"nul", "expected a value (null?), found 'nul'"},
        {"not json", "expected a value (null?), found 'not'"},
        {"\xEF\xBB\xBF{}", "a UTF-8 byte-order mark (EF BB BF) before the value"},
        {"\x01", "expected a value, found byte 0x01"},
        {"\"abc", "without its closing quote"},
        {"\"a\tb\"", "control byte 0x09"},
        {"\"\\x\"", "unknown escape"},
        {"\"\\u12g4\"", "4 hexadecimal digits"},
        {"\"\\udc00\"", "lone low surrogate"},
        {"\"\\ud800\"", "without its low surrogate"},
        {"\"\\ud800\\u0041\"", "not a low surrogate"},
        {"\"\xff\"", "not UTF-8"},
        {"\"\xc0\xaf\"", "not UTF-8"},     /* overlong */
        {"\"\xed\xa0\x80\"", "not UTF-8"}, /* an encoded surrogate */
        {"\"\xe2\x82\"", "not UTF-8"},     /* cut short by the end */
        {"{\"a\\u0000\":1}", "\\u0000"},
        {"{} {}", "text after the value"},
        {"'a'", "expected a value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[256] = "";
        JsonValue *v = parse(cases[i].text, err);
        if (v)
            fail_msg("'%s' was accepted", cases[i].text);
        if (!strstr(err, cases[i].says) || strncmp(err, "JSON byte ", 10) != 0)
            fail_msg("'%s': message '%s' lacks '%s'", cases[i].text, err, cases[i].says);
    }
}

/* NUL inside the text is not the end of it: the length given is. */
static void test_length_not_nul(void **state)
{
    (void)state;
    char err[256];
    assert_null(Json_parse("1\0", 2, err, sizeof err));
    JsonValue *v = Json_parse("[1]xyz", 3, err, sizeof err);
    assert_non_null(v);
    JsonValue_free(v);
}

static void test_depth_bound(void **state)
{
    (void)state;
    char text[2 * JSON_DEPTH_MAX + 8], err[256];
    for (int depth = JSON_DEPTH_MAX; depth <= JSON_DEPTH_MAX + 1; depth++) {
        memset(text, '[', (size_t)depth);
        memset(text + depth, ']', (size_t)depth);
        text[2 * depth] = '\0';
        JsonValue *v = parse(text, err);
        if (depth == JSON_DEPTH_MAX) {
            assert_non_null(v);
        } else {
            assert_null(v);
            assert_non_null(strstr(err, "nested deeper than 64"));
        }
        JsonValue_free(v);
    }
}

/* The bounds of Json_parse_within, each at its edge: the bytes, the depth, the values. */
static void test_limits(void **state)
{
    (void)state;
    char err[256];
    JsonLimits limits = {.max_bytes = 9, .max_depth = 2, .max_values = 4};
    JsonValue *v = Json_parse_within("[[1],2]", 7, &limits, err, sizeof err);
    assert_non_null(v); /* 4 values, depth 2 */
    JsonValue_free(v);
    assert_null(Json_parse_within("[[1],2,3]", 9, &limits, err, sizeof err));
    assert_non_null(strstr(err, "more than 4 values"));
    assert_null(Json_parse_within("[[[]]]", 6, &limits, err, sizeof err));
    assert_non_null(strstr(err, "nested deeper than 2"));
    assert_null(Json_parse_within("[1,2,30]  ", 10, &limits, err, sizeof err));
    assert_non_null(strstr(err, "JSON of 10 bytes, above the 9 accepted"));
    /* The defaults: 2^20 values pass, one more does not. */
    size_t n = (size_t)1 << 20;
    char *text = malloc(2 * n + 2);
    assert_non_null(text);
    text[0] = '[';
    for (size_t i = 0; i < n - 1; i++)
        memcpy(text + 1 + 2 * i, "0,", 2);
    text[2 * n - 2] = ']'; /* 2^20 - 1 zeros and the array */
    v = Json_parse(text, 2 * n - 1, err, sizeof err);
    assert_non_null(v);
    assert_int_equal(v->count, n - 1);
    JsonValue_free(v);
    memcpy(text + 2 * n - 2, ",0]", 3);
    assert_null(Json_parse(text, 2 * n + 1, err, sizeof err));
    assert_non_null(strstr(err, "more than 1048576 values"));
    free(text);
}

/* Every duplicate is found wherever it is among many keys (the hash grows as keys come), and
   keys differing only past a common prefix are not taken for one another. */
static void test_duplicates_among_many(void **state)
{
    (void)state;
    enum { KEYS = 5000 };
    char *text = malloc(KEYS * 16 + 32), err[256];
    assert_non_null(text);
    for (int duplicate = 0; duplicate <= KEYS; duplicate += KEYS / 5) {
        size_t n = 0;
        text[n++] = '{';
        for (int i = 0; i < KEYS; i++)
            n += (size_t)sprintf(text + n, "%s\"key%d\":%d", i ? "," : "", i, i);
        if (duplicate < KEYS)
            n += (size_t)sprintf(text + n, ",\"key%d\":0", duplicate);
        text[n++] = '}';
        JsonValue *v = Json_parse(text, n, err, sizeof err);
        if (duplicate == KEYS) {
            assert_non_null(v);
            assert_int_equal(v->count, KEYS);
            assert_true(JsonValue_member(v, "key4321")->number == 4321);
        } else {
            char says[64];
            snprintf(says, sizeof says, "duplicate key \"key%d\"", duplicate);
            assert_null(v);
            assert_non_null(strstr(err, says));
        }
        JsonValue_free(v);
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_numbers_read_exactly),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_length_not_nul),
        cmocka_unit_test(test_depth_bound),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_duplicates_among_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
