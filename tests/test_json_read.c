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
        {"tru", "expected 'true'"},
        {"nul", "expected 'null'"},
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_numbers_read_exactly),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_length_not_nul),
        cmocka_unit_test(test_depth_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
