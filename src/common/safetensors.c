/* The safetensors reader (safetensors.h): the checks of one file's bytes and the conversions
 * to and from double; safetensors_open.c maps the files and reads the sharded index. */
#include "safetensors.h"

#include "json_read.h"
#include "safetensors_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The format's dtypes that are not floating point, or too narrow to be a weight we read:
   refused by name, so a user learns the file is valid but holds what attnscope cannot use. */
static const char *const OTHER_DTYPES[] = {
    "BOOL", "U8",  "I8",      "I16",     "U16",     "I32",     "U32",     "I64",
    "U64",  "C64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4",
};
static const char *const DTYPE_NAMES[] = {"F64", "F32", "F16", "BF16"};
static const size_t DTYPE_SIZES[] = {8, 4, 2, 2};

const char *SafetensorsDtype_name(SafetensorsDtype dtype)
{
    return DTYPE_NAMES[dtype];
}

size_t SafetensorsDtype_size(SafetensorsDtype dtype)
{
    return DTYPE_SIZES[dtype];
}

Safetensors *Safetensors_new(const char *path)
{
    Safetensors *s = calloc(1, sizeof *s);
    if (s && !(s->path = strdup(path))) {
        free(s);
        s = NULL;
    }
    return s;
}

void Safetensors_close(Safetensors *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->count; i++) {
        free((char *)s->tensors[i].name);
        free((char *)s->tensors[i].file);
    }
    for (int i = 0; i < s->metadata_count; i++) {
        free(s->metadata_keys[i]);
        free(s->metadata_values[i]);
    }
    for (int i = 0; i < s->mapping_count; i++) {
        munmap(s->mappings[i].address, s->mappings[i].length);
        free(s->mappings[i].path);
    }
    free(s->metadata_keys);
    free(s->metadata_values);
    free(s->tensors);
    free(s->by_name);
    free(s->mappings);
    free(s->path);
    free(s);
}

/* A JSON number written as a plain non-negative integer that fits 64 bits (what the
   reference's usize accepts: no sign, fraction or exponent).  false if it is not one. */
static bool whole_number(const JsonValue *v, uint64_t *out)
{
    if (!v || v->kind != JSON_NUMBER || v->length == 0)
        return false;
    uint64_t n = 0;
    for (size_t i = 0; i < v->length; i++) {
        char c = v->text[i];
        if (c < '0' || c > '9' || n > (UINT64_MAX - (uint64_t)(c - '0')) / 10)
            return false;
        n = n * 10 + (uint64_t)(c - '0');
    }
    *out = n;
    return true;
}

static int parse_dtype(const JsonValue *v, const char *file, const char *name,
                       SafetensorsDtype *out, char *err, size_t size)
{
    if (!v || v->kind != JSON_STRING) {
        snprintf(err, size, "'%s': tensor '%s': expected \"dtype\" as a string", file, name);
        return -1;
    }
    for (int i = 0; i < 4; i++)
        if (strcmp(v->text, DTYPE_NAMES[i]) == 0) {
            *out = (SafetensorsDtype)i;
            return 0;
        }
    for (size_t i = 0; i < sizeof OTHER_DTYPES / sizeof *OTHER_DTYPES; i++)
        if (strcmp(v->text, OTHER_DTYPES[i]) == 0) {
            snprintf(err, size,
                     "'%s': tensor '%s': dtype %s is not one attnscope reads (F64, F32, F16, BF16)",
                     file, name, v->text);
            return -1;
        }
    snprintf(err, size,
             "'%s': tensor '%s': unknown dtype \"%.40s\" (expected F64, F32, F16 or BF16)", file,
             name, v->text);
    return -1;
}

/* The shape, its element count and its byte count, each product checked for overflow. */
static int parse_shape(const JsonValue *v, const char *file, SafetensorsTensor *t, uint64_t *bytes,
                       char *err, size_t size)
{
    if (!v || v->kind != JSON_ARRAY || v->count > SAFETENSORS_RANK_MAX) {
        snprintf(err, size, "'%s': tensor '%s': expected \"shape\" as an array of at most %d sizes",
                 file, t->name, SAFETENSORS_RANK_MAX);
        return -1;
    }
    t->rank = v->count;
    t->elements = 1;
    for (int i = 0; i < v->count; i++) {
        if (!whole_number(&v->items[i], &t->shape[i])) {
            snprintf(err, size, "'%s': tensor '%s': shape entry %d is not a size (a whole number)",
                     file, t->name, i);
            return -1;
        }
        if (t->shape[i] && t->elements > UINT64_MAX / t->shape[i]) {
            snprintf(err, size, "'%s': tensor '%s': the shape's product overflows 64 bits", file,
                     t->name);
            return -1;
        }
        t->elements *= t->shape[i];
    }
    size_t unit = DTYPE_SIZES[t->dtype];
    if (t->elements > UINT64_MAX / unit) {
        snprintf(err, size, "'%s': tensor '%s': the byte count overflows 64 bits", file, t->name);
        return -1;
    }
    *bytes = t->elements * unit;
    return 0;
}

/* One tensor's entry: dtype, shape, data_offsets [begin, end) with end − begin its bytes.
   Other members are ignored, as the reference does. */
static int parse_tensor(const JsonValue *v, const char *file, SafetensorsTensor *t,
                        uint64_t offsets[2], char *err, size_t size)
{
    if (v->kind != JSON_OBJECT) {
        snprintf(err, size, "'%s': tensor '%s': expected an object, found %s", file, t->name,
                 JsonKind_name(v->kind));
        return -1;
    }
    uint64_t bytes;
    if (parse_dtype(JsonValue_member(v, "dtype"), file, t->name, &t->dtype, err, size) ||
        parse_shape(JsonValue_member(v, "shape"), file, t, &bytes, err, size))
        return -1;
    const JsonValue *o = JsonValue_member(v, "data_offsets");
    if (!o || o->kind != JSON_ARRAY || o->count != 2 || !whole_number(&o->items[0], &offsets[0]) ||
        !whole_number(&o->items[1], &offsets[1])) {
        snprintf(err, size, "'%s': tensor '%s': expected \"data_offsets\" as [begin, end]", file,
                 t->name);
        return -1;
    }
    if (offsets[1] < offsets[0]) {
        snprintf(err, size, "'%s': tensor '%s': data_offsets [%llu, %llu] end before they begin",
                 file, t->name, (unsigned long long)offsets[0], (unsigned long long)offsets[1]);
        return -1;
    }
    if (offsets[1] - offsets[0] != bytes) {
        snprintf(err, size,
                 "'%s': tensor '%s': data_offsets [%llu, %llu] hold %llu bytes, but %s × its "
                 "shape needs %llu",
                 file, t->name, (unsigned long long)offsets[0], (unsigned long long)offsets[1],
                 (unsigned long long)(offsets[1] - offsets[0]), DTYPE_NAMES[t->dtype],
                 (unsigned long long)bytes);
        return -1;
    }
    return 0;
}

static int parse_metadata(Safetensors *s, const JsonValue *v, const char *file, char *err,
                          size_t size)
{
    if (v->kind != JSON_OBJECT) {
        snprintf(err, size, "'%s': __metadata__ must be an object of strings", file);
        return -1;
    }
    s->metadata_keys = calloc((size_t)v->count + 1, sizeof *s->metadata_keys);
    s->metadata_values = calloc((size_t)v->count + 1, sizeof *s->metadata_values);
    if (!s->metadata_keys || !s->metadata_values) {
        snprintf(err, size, "'%s': out of memory", file);
        return -1;
    }
    for (int i = 0; i < v->count; i++) {
        if (v->items[i].kind != JSON_STRING) {
            snprintf(err, size, "'%s': __metadata__ '%s' must be a string, found %s", file,
                     v->keys[i], JsonKind_name(v->items[i].kind));
            return -1;
        }
        s->metadata_keys[i] = strdup(v->keys[i]);
        s->metadata_values[i] = strdup(v->items[i].text);
        s->metadata_count++;
        if (!s->metadata_keys[i] || !s->metadata_values[i]) {
            snprintf(err, size, "'%s': out of memory", file);
            return -1;
        }
    }
    return 0;
}

static int by_tensor_name(const void *a, const void *b)
{
    const SafetensorsTensor *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

static int name_to_tensor(const void *key, const void *element)
{
    const SafetensorsTensor *const *t = element;
    return strcmp(key, (*t)->name);
}

int Safetensors_index_names(Safetensors *s, char *err, size_t size)
{
    free(s->by_name);
    s->by_name = malloc(sizeof *s->by_name * ((size_t)s->count + 1));
    if (!s->by_name) {
        snprintf(err, size, "'%s': out of memory", s->path);
        return -1;
    }
    for (int i = 0; i < s->count; i++)
        s->by_name[i] = &s->tensors[i];
    qsort(s->by_name, (size_t)s->count, sizeof *s->by_name, by_tensor_name);
    return 0;
}

typedef struct {
    uint64_t begin, end;
    int index;
} Extent;

static int by_extent(const void *a, const void *b)
{
    const Extent *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* The tensors tile the data exactly: sorted by offset, the first begins at 0, each where the
   one before ended, and the last ends where the file does. */
static int check_tiling(const Safetensors *s, Extent *extents, uint64_t data_bytes,
                        const char *file, char *err, size_t size)
{
    qsort(extents, (size_t)s->count, sizeof *extents, by_extent);
    uint64_t at = 0;
    for (int i = 0; i < s->count; i++) {
        if (extents[i].begin != at) {
            snprintf(err, size,
                     "'%s': tensor '%s' begins at data byte %llu, expected %llu (the tensors must "
                     "tile the data with no gap or overlap)",
                     file, s->tensors[extents[i].index].name, (unsigned long long)extents[i].begin,
                     (unsigned long long)at);
            return -1;
        }
        at = extents[i].end;
    }
    if (at != data_bytes) {
        snprintf(err, size,
                 "'%s': the tensors cover %llu bytes of data, but %llu follow the header", file,
                 (unsigned long long)at, (unsigned long long)data_bytes);
        return -1;
    }
    return 0;
}

/* The header's members: __metadata__ and the tensors, which then get their data pointers in
   the order of their offsets. */
static int read_header(Safetensors *s, const JsonValue *h, const unsigned char *data,
                       uint64_t data_bytes, const char *file, char *err, size_t size)
{
    s->tensors = calloc((size_t)h->count + 1, sizeof *s->tensors);
    Extent *extents = calloc((size_t)h->count + 1, sizeof *extents);
    int status = s->tensors && extents ? 0 : -1;
    if (status)
        snprintf(err, size, "'%s': out of memory", file);
    for (int i = 0; i < h->count && status == 0; i++) {
        if (strcmp(h->keys[i], "__metadata__") == 0) {
            status = parse_metadata(s, &h->items[i], file, err, size);
            continue;
        }
        SafetensorsTensor *t = &s->tensors[s->count];
        t->name = strdup(h->keys[i]);
        t->file = strdup(file);
        s->count++;
        uint64_t offsets[2] = {0, 0};
        status = t->name && t->file ? parse_tensor(&h->items[i], file, t, offsets, err, size) : -1;
        extents[s->count - 1] = (Extent){offsets[0], offsets[1], s->count - 1};
    }
    if (status == 0)
        status = check_tiling(s, extents, data_bytes, file, err, size);
    if (status == 0)
        status = Safetensors_index_names(s, err, size);
    for (int i = 0; status == 0 && i < s->count; i++)
        s->tensors[extents[i].index].data = data + extents[i].begin;
    free(extents);
    return status;
}

static uint64_t little_endian(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

Safetensors *Safetensors_parse(const unsigned char *bytes, size_t length, const char *file,
                               char *err, size_t size)
{
    if (length < 8) {
        snprintf(err, size, "'%s': %zu bytes, too short for the 8-byte header length", file,
                 length);
        return NULL;
    }
    uint64_t n = little_endian(bytes, 8);
    if (n > SAFETENSORS_HEADER_MAX) {
        snprintf(err, size, "'%s': header length %llu, expected at most %llu (the format's bound)",
                 file, (unsigned long long)n, SAFETENSORS_HEADER_MAX);
        return NULL;
    }
    if (n > length - 8) {
        snprintf(err, size, "'%s': header length %llu, but only %zu bytes follow", file,
                 (unsigned long long)n, length - 8);
        return NULL;
    }
    /* A header of a million tensors is far beyond any model; the bound keeps the memory a
       hostile header can make us take near its own size. */
    JsonLimits limits = {.max_bytes = SAFETENSORS_HEADER_MAX,
                         .max_depth = JSON_DEPTH_MAX,
                         .max_values = (size_t)1 << 22};
    char json_err[256];
    JsonValue *h =
        Json_parse_within((const char *)bytes + 8, (size_t)n, &limits, json_err, sizeof json_err);
    if (!h || h->kind != JSON_OBJECT) {
        if (h)
            snprintf(err, size, "'%s': the header is %s, expected a JSON object", file,
                     JsonKind_name(h->kind));
        else
            snprintf(err, size, "'%s': the header is not valid JSON: %s", file, json_err);
        JsonValue_free(h);
        return NULL;
    }
    Safetensors *s = Safetensors_new(file);
    int status = s ? read_header(s, h, bytes + 8 + n, length - 8 - n, file, err, size) : -1;
    if (!s)
        snprintf(err, size, "'%s': out of memory", file);
    JsonValue_free(h);
    if (status) {
        Safetensors_close(s);
        return NULL;
    }
    return s;
}

const char *Safetensors_path(const Safetensors *s)
{
    return s->path;
}

int Safetensors_count(const Safetensors *s)
{
    return s->count;
}

const SafetensorsTensor *Safetensors_at(const Safetensors *s, int i)
{
    return i >= 0 && i < s->count ? &s->tensors[i] : NULL;
}

const SafetensorsTensor *Safetensors_find(const Safetensors *s, const char *name)
{
    const SafetensorsTensor *const *t =
        bsearch(name, s->by_name, (size_t)s->count, sizeof *s->by_name, name_to_tensor);
    return t ? *t : NULL;
}

const char *Safetensors_metadata(const Safetensors *s, const char *key)
{
    for (int i = 0; i < s->metadata_count; i++)
        if (strcmp(s->metadata_keys[i], key) == 0)
            return s->metadata_values[i];
    return NULL;
}

/* binary16: sign, 5 exponent bits (bias 15), 10 fraction bits.  The double is built from its
   bits, not by arithmetic, so the test's ldexp formula is an independent check. */
double Safetensors_f16_to_double(uint16_t bits)
{
    uint64_t sign = (uint64_t)(bits >> 15) << 63;
    int exponent = bits >> 10 & 0x1f;
    uint64_t fraction = bits & 0x3ff;
    uint64_t out;
    if (exponent == 0x1f) { /* infinity, or NaN with its payload */
        out = sign | (uint64_t)0x7ff << 52 | fraction << 42;
    } else if (exponent == 0 && fraction == 0) {
        out = sign;
    } else {
        int e = exponent - 15;
        if (exponent == 0) { /* subnormal: 0.f × 2^-14, normalised */
            e = -14;
            while (!(fraction & 0x400)) {
                fraction <<= 1;
                e--;
            }
            fraction &= 0x3ff;
        }
        out = sign | (uint64_t)(e + 1023) << 52 | fraction << 42;
    }
    double d;
    memcpy(&d, &out, sizeof d);
    return d;
}

/* bfloat16 is the top half of a binary32. */
double Safetensors_bf16_to_double(uint16_t bits)
{
    uint32_t wide = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &wide, sizeof f);
    return f;
}

/* x rounded to `digits` significant bits (ties to even), with the least unit 2^min_unit below
   which a format's numbers are subnormal; ±∞ past 2^128, the binary32 range both share. */
static float round_to(double x, int digits, int min_unit)
{
    if (isnan(x) || isinf(x))
        return (float)x;
    int e;
    frexp(x, &e); /* |x| in [2^(e−1), 2^e) */
    int unit = e - digits > min_unit ? e - digits : min_unit;
    double r = ldexp(rint(ldexp(x, -unit)), unit);
    if (fabs(r) >= 0x1p128)
        return signbit(r) ? -INFINITY : INFINITY;
    return (float)r; /* exact: r has at most 24 significant bits in binary32's range */
}

uint32_t Safetensors_double_to_f32(double x)
{
    float f = round_to(x, 24, -149);
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

uint16_t Safetensors_double_to_bf16(double x)
{
    if (isnan(x)) /* a quiet NaN: rounding could otherwise carry the payload into ±∞ */
        return signbit(x) ? 0xffc0 : 0x7fc0;
    return (uint16_t)(Safetensors_double_to_f32(round_to(x, 8, -133)) >> 16);
}

static double element(const SafetensorsTensor *t, uint64_t i)
{
    const unsigned char *p = t->data + i * DTYPE_SIZES[t->dtype];
    switch (t->dtype) {
    case SAFETENSORS_F64: {
        uint64_t bits = little_endian(p, 8);
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    case SAFETENSORS_F32: {
        uint32_t bits = (uint32_t)little_endian(p, 4);
        float f;
        memcpy(&f, &bits, sizeof f);
        return f;
    }
    case SAFETENSORS_F16:
        return Safetensors_f16_to_double((uint16_t)little_endian(p, 2));
    case SAFETENSORS_BF16:
        return Safetensors_bf16_to_double((uint16_t)little_endian(p, 2));
    }
    return NAN;
}

void Safetensors_to_double(const SafetensorsTensor *t, double *out)
{
    for (uint64_t i = 0; i < t->elements; i++)
        out[i] = element(t, i);
}

void Safetensors_range_to_double(const SafetensorsTensor *t, uint64_t first, uint64_t count,
                                 double *out)
{
    for (uint64_t i = 0; i < count; i++)
        out[i] = element(t, first + i);
}

void Safetensors_block_to_double(const SafetensorsTensor *t, uint64_t first_row, uint64_t rows,
                                 uint64_t first_column, uint64_t columns, double *out)
{
    uint64_t width = t->rank > 1 ? t->shape[1] : 1;
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t c = 0; c < columns; c++)
            out[r + c * rows] = element(t, (first_row + r) * width + first_column + c);
}

uint64_t Safetensors_first_nonfinite(const SafetensorsTensor *t, double *value)
{
    for (uint64_t i = 0; i < t->elements; i++) {
        double x = element(t, i);
        if (!isfinite(x)) {
            *value = x;
            return i;
        }
    }
    return t->elements;
}
