/* Durations as text (see duration.h). */
#include "duration.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MINUTE 60.0
#define HOUR 3600.0

/* Whether value, written with format, reads as at least limit: a unit gives way to the next
   where its rounded number would reach the next one's, so that 59.7 s is "~1 min" as 60 s
   is, never "~60 s" beside "~1 min". */
static bool reads_at_least(double value, const char *format, double limit)
{
    char text[64];
    snprintf(text, sizeof text, format, value);
    return strtod(text, NULL) >= limit;
}

/* As batch has written them: seconds to two minutes, minutes to two hours, hours to two
   days. */
static void plain(double seconds, char *out, size_t size)
{
    if (reads_at_least(seconds / HOUR, "%.2g", 48))
        snprintf(out, size, "%.3g days", seconds / (24 * HOUR));
    else if (reads_at_least(seconds / MINUTE, "%.0f", 120))
        snprintf(out, size, "%.2g h", seconds / HOUR);
    else if (reads_at_least(seconds, "%.3g", 120))
        snprintf(out, size, "%.0f min", seconds / MINUTE);
    else
        snprintf(out, size, "%.3g s", seconds);
}

/* As the screen's status line has written them: rounded, and "~" for an estimate's
   uncertainty. */
static void about(double seconds, char *out, size_t size)
{
    if (reads_at_least(seconds / HOUR, "%.1f", 48))
        snprintf(out, size, "~%.3g days", seconds / (24 * HOUR));
    else if (reads_at_least(seconds / MINUTE, "%.0f", 60))
        snprintf(out, size, "~%.1f h", seconds / HOUR);
    else if (reads_at_least(seconds, "%.0f", 60))
        snprintf(out, size, "~%.0f min", seconds / MINUTE);
    else if (seconds >= 1)
        snprintf(out, size, "~%.0f s", seconds);
    else
        snprintf(out, size, "<1 s");
}

void Duration_text_seconds(double seconds, char *out, size_t size)
{
    char text[48], in_seconds[48];
    plain(seconds, text, sizeof text);
    snprintf(in_seconds, sizeof in_seconds, "%.3g s", seconds);
    if (strcmp(text, in_seconds) == 0)
        snprintf(out, size, "%s", text);
    else
        snprintf(out, size, "%s (%s)", text, in_seconds);
}

void Duration_text(double seconds, DurationStyle style, char *out, size_t size)
{
    if (style == DURATION_ABOUT)
        about(seconds, out, size);
    else
        plain(seconds, out, size);
}
