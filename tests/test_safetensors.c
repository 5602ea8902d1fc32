/* The safetensors reader: a file the format allows is read to the values written; the 16-bit
 * conversions agree with an independent formula (and with python3's struct where it runs) on
 * every pattern; the exports' roundings are the nearest values, ties to even.  The hostile
 * files are tests/cli/safetensors-hostile.sh's. */
#include "testing.h"

#include "safetensors.h"

#include <stdlib.h>
#include <string.h>

/* A file: the 8-byte length, the header, the data. */
static unsigned char *file_of(const char *header, const void *data, size_t data_bytes,
                              size_t *length)
{
    size_t n = strlen(header);
    *length = 8 + n + data_bytes;
    unsigned char *bytes = malloc(*length);
    for (int i = 0; i < 8; i++)
        bytes[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(bytes + 8, header, n);
    memcpy(bytes + 8 + n, data, data_bytes);
    return bytes;
}

static void test_reads_what_was_written(void **state)
{
    (void)state;
    /* F32 [1.5, -2] then BF16 [1, -0.5, 3] (0x3f80, 0xbf00, 0x4040), listed out of order,
       with the spaces a writer pads with. */
    unsigned char data[14] = {0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0, 0x80, 0x3f, 0x00, 0xbf, 0x40, 0x40};
    const char *header =
        "  {\"b\": {\"dtype\": \"BF16\", \"shape\": [3], \"data_offsets\": [8, 14]},"
        " \"__metadata__\": {\"format\": \"pt\"},"
        " \"a\": {\"dtype\": \"F32\", \"shape\": [1, 2], \"data_offsets\": [0, 8]}}"
        "    ";
    size_t length;
    unsigned char *bytes = file_of(header, data, sizeof data, &length);
    char err[512] = "";
    Safetensors *s = Safetensors_parse(bytes, length, "x.safetensors", err, sizeof err);
    if (!s)
        fail_msg("%s", err);
    assert_int_equal(Safetensors_count(s), 2);
    assert_string_equal(Safetensors_metadata(s, "format"), "pt");
    const SafetensorsTensor *a = Safetensors_find(s, "a"), *b = Safetensors_find(s, "b");
    assert_int_equal(a->rank, 2);
    assert_int_equal(a->shape[1], 2);
    assert_int_equal(b->dtype, SAFETENSORS_BF16);
    double va[2], vb[3];
    Safetensors_to_double(a, va);
    Safetensors_to_double(b, vb);
    assert_true(va[0] == 1.5 && va[1] == -2.0);
    assert_true(vb[0] == 1.0 && vb[1] == -0.5 && vb[2] == 3.0);
    double bad = 0;
    assert_int_equal(Safetensors_first_nonfinite(b, &bad), b->elements);
    /* Releasing pages is for memory maps only: the caller's bytes stay as they are. */
    Safetensors_release(s, a);
    Safetensors_to_double(a, va);
    assert_true(va[0] == 1.5 && va[1] == -2.0);
    Safetensors_close(s);
    free(bytes);
}

static void test_refusals_name_file_and_tensor(void **state)
{
    (void)state;
    unsigned char data[8] = {0};
    size_t length;
    char err[512] = "";
    unsigned char *bytes = file_of("{\"w\": {\"dtype\": \"F32\", \"shape\": [3], "
                                   "\"data_offsets\": [0, 8]}}",
                                   data, sizeof data, &length);
    assert_null(Safetensors_parse(bytes, length, "m.safetensors", err, sizeof err));
    assert_non_null(strstr(err, "m.safetensors"));
    assert_non_null(strstr(err, "'w'"));
    assert_non_null(strstr(err, "needs 12"));
    free(bytes);
    bytes = file_of("{\"w\": {\"dtype\": \"I64\", \"shape\": [1], \"data_offsets\": [0, 8]}}", data,
                    sizeof data, &length);
    assert_null(Safetensors_parse(bytes, length, "m.safetensors", err, sizeof err));
    assert_non_null(strstr(err, "dtype I64 is not one attnscope reads"));
    free(bytes);
}

/* An IEEE format's value by its definition: (−1)^s × 1.f × 2^(e−bias), 0.f × 2^(1−bias) for
   e = 0, ±∞ and NaN at the top exponent. */
static double by_definition(unsigned bits, int exponent_bits, int fraction_bits)
{
    int top = (1 << exponent_bits) - 1, bias = top / 2;
    unsigned fraction = bits & ((1u << fraction_bits) - 1);
    int exponent = (int)(bits >> fraction_bits) & top;
    double sign = bits >> (exponent_bits + fraction_bits) ? -1.0 : 1.0;
    if (exponent == top)
        return fraction ? NAN : sign * INFINITY;
    if (exponent == 0)
        return sign * ldexp(fraction, 1 - bias - fraction_bits);
    return sign * ldexp(fraction + (1u << fraction_bits), exponent - bias - fraction_bits);
}

static void assert_same(double got, double expected, unsigned bits, const char *format)
{
    if (isnan(expected) ? !isnan(got) : got != expected || signbit(got) != signbit(expected))
        fail_msg("%s 0x%04x: %a, expected %a", format, bits, got, expected);
}

static void test_every_16_bit_pattern(void **state)
{
    (void)state;
    for (unsigned b = 0; b < 65536; b++) {
        assert_same(Safetensors_f16_to_double((uint16_t)b), by_definition(b, 5, 10), b, "F16");
        assert_same(Safetensors_bf16_to_double((uint16_t)b), by_definition(b, 8, 7), b, "BF16");
    }
}

/* Python's own conversions of every pattern (struct's binary16 'e' and binary32 'f'), as
   float.hex: an implementation that is not ours. */
static void test_every_16_bit_pattern_against_python(void **state)
{
    (void)state;
    const char *script = "python3 -c 'import struct\n"
                         "for b in range(65536):\n"
                         "    h = struct.unpack(\"<e\", struct.pack(\"<H\", b))[0]\n"
                         "    f = struct.unpack(\"<f\", struct.pack(\"<I\", b << 16))[0]\n"
                         "    print(h.hex(), f.hex())' 2>/dev/null";
    FILE *p = popen(script, "r");
    char f16[64], bf16[64];
    unsigned b = 0;
    while (p && b < 65536 && fscanf(p, "%63s %63s", f16, bf16) == 2) {
        assert_same(Safetensors_f16_to_double((uint16_t)b), strtod(f16, NULL), b, "F16 (python)");
        assert_same(Safetensors_bf16_to_double((uint16_t)b), strtod(bf16, NULL), b,
                    "BF16 (python)");
        b++;
    }
    int status = p ? pclose(p) : -1;
    if (b == 0 && status != 0)
        skip(); /* no python3 here */
    assert_int_equal(b, 65536);
}

/* The pattern r is the nearest to x among its neighbours, and even on a tie. */
static void assert_nearest(double x, uint16_t r)
{
    double v = Safetensors_bf16_to_double(r);
    double below = Safetensors_bf16_to_double((uint16_t)(r - 1));
    double above = Safetensors_bf16_to_double((uint16_t)(r + 1));
    double e = fabs(x - v);
    bool tie = (r & 0x7fff) && fabs(x - below) == e;
    tie |= (r & 0x7fff) != 0x7f80 && fabs(x - above) == e;
    if (!(e <= fabs(x - below) || (r & 0x7fff) == 0) || !(e <= fabs(x - above) || isinf(v)) ||
        (tie && (r & 1)))
        fail_msg("%a rounded to bf16 0x%04x = %a", x, r, v);
}

static void test_roundings_nearest_ties_even(void **state)
{
    (void)state;
    srand(7);
    for (int i = 0; i < 200000; i++) {
        double x = ldexp((double)rand() / RAND_MAX + 0.5, rand() % 200 - 100);
        assert_nearest(i & 1 ? -x : x, Safetensors_double_to_bf16(i & 1 ? -x : x));
    }
    /* Ties: halfway between 1 and 1 + 2^-7 goes to 1 (even); between 1 + 2^-7 and 1 + 2^-6
       to 1 + 2^-6. */
    assert_int_equal(Safetensors_double_to_bf16(1 + 0x1p-8), 0x3f80);
    assert_int_equal(Safetensors_double_to_bf16(1 + 3 * 0x1p-8), 0x3f82);
    /* A double just above the tie that a float would round onto the tie (1 + 2^-8 + 2^-40):
       rounding once, from the double, goes up. */
    assert_int_equal(Safetensors_double_to_bf16(1 + 0x1p-8 + 0x1p-40), 0x3f81);
    assert_int_equal(Safetensors_double_to_bf16(0x1p128), 0x7f80);
    assert_int_equal(Safetensors_double_to_bf16(-0.0), 0x8000);
    assert_int_equal(Safetensors_double_to_bf16(0x1p-134), 0x0000); /* tie at the least: even */
    assert_int_equal(Safetensors_double_to_bf16(0x1p-133), 0x0001);
    assert_int_equal(Safetensors_double_to_f32(1 + 0x1p-24 + 0x1p-40), 0x3f800001);
    assert_int_equal(Safetensors_double_to_f32(1 + 0x1p-24), 0x3f800000);
    assert_true((Safetensors_double_to_bf16(NAN) & 0x7fff) > 0x7f80);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_what_was_written),
        cmocka_unit_test(test_refusals_name_file_and_tensor),
        cmocka_unit_test(test_every_16_bit_pattern),
        cmocka_unit_test(test_every_16_bit_pattern_against_python),
        cmocka_unit_test(test_roundings_nearest_ties_even),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
