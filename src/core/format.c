#include "attnscope/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

const char *Format_shortest(double x, char buf[FORMAT_NUMBER_SIZE])
{
    buf[0] = '\0';
    if (!isfinite(x))
        return buf;
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(buf, FORMAT_NUMBER_SIZE, "%.*g", precision, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

size_t Format_utf8_length(const unsigned char *p, size_t left)
{
    int more;
    unsigned char lo = 0x80, hi = 0xBF;
    if (left == 0)
        return 0;
    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xC2 && p[0] <= 0xDF) {
        more = 1;
    } else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
        more = 2;
        lo = p[0] == 0xE0 ? 0xA0 : 0x80;
        hi = p[0] == 0xED ? 0x9F : 0xBF;
    } else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
        more = 3;
        lo = p[0] == 0xF0 ? 0x90 : 0x80;
        hi = p[0] == 0xF4 ? 0x8F : 0xBF;
    } else {
        return 0;
    }
    if (left <= (size_t)more)
        return 0;
    for (int i = 1; i <= more; i++, lo = 0x80, hi = 0xBF)
        if (p[i] < lo || p[i] > hi)
            return 0;
    return (size_t)more + 1;
}
