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
