#include "trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct Trace {
    FILE *file;
    int lost; /* errno of the first write that failed (under the file's lock), 0: none */
};

Trace *Trace_open(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    Trace *t = malloc(sizeof *t);
    if (!t) {
        fclose(f);
        return NULL;
    }
    t->file = f;
    t->lost = 0;
    return t;
}

int Trace_close(Trace *t)
{
    if (!t)
        return 0;
    int lost = t->lost;
    if (fclose(t->file) != 0 && !lost)
        lost = errno ? errno : EIO;
    free(t);
    return lost;
}

double Trace_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void Trace_event(Trace *t, const char *fmt, ...)
{
    if (!t)
        return;
    char message[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    /* The clock is read under the file's lock, so the lines of both threads come out in
       time order. */
    flockfile(t->file);
    errno = 0;
    bool failed = fprintf(t->file, "%.3f %s\n", Trace_clock_ms(), message) < 0;
    failed |= fflush(t->file) != 0;
    if (failed && !t->lost)
        t->lost = errno ? errno : EIO;
    funlockfile(t->file);
}
