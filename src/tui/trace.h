/* --trace FILE: one line per screen event, "<monotonic ms> <event> key=value...", written
 * from both threads and flushed at once, so latency can be measured from outside while the
 * program runs (e.g. the time from "key" to the next "frame").
 */
#ifndef ATTNSCOPE_TUI_TRACE_H
#define ATTNSCOPE_TUI_TRACE_H

typedef struct Trace Trace;

/* Opens (truncates) path; NULL with errno set on failure. */
Trace *Trace_open(const char *path);
/* Closes t (NULL: nothing): 0, or the errno of the first write that failed (lines were then
   lost: a full disk, /dev/full), for the caller to say. */
int Trace_close(Trace *t);

/* Writes one line; does nothing when t is NULL.  Safe from any thread. */
void Trace_event(Trace *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Milliseconds of CLOCK_MONOTONIC, the clock of the trace lines. */
double Trace_clock_ms(void);

#endif
