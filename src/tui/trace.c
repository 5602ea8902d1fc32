#include "trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct Trace {
    FILE *file;
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
    return t;
}

void Trace_close(Trace *t)
{
    if (!t)
        return;
    fclose(t->file);
    free(t);
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
    fprintf(t->file, "%.3f %s\n", Trace_clock_ms(), message);
    fflush(t->file);
    funlockfile(t->file);
}
