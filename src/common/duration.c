/* Durations as text (see duration.h). */
#include "duration.h"

#include <stdio.h>

#define MINUTE 60.0
#define HOUR 3600.0
#define DAY 86400.0

/* Below two days, as batch has written them: seconds to two minutes, minutes to two hours. */
static void plain(double seconds, char *out, size_t size)
{
    if (seconds >= 2 * HOUR)
        snprintf(out, size, "%.2g h", seconds / HOUR);
    else if (seconds >= 2 * MINUTE)
        snprintf(out, size, "%.0f min", seconds / MINUTE);
    else
        snprintf(out, size, "%.3g s", seconds);
}

/* Below two days, as the screen's status line has written them: rounded, and "~" for an
   estimate's uncertainty. */
static void about(double seconds, char *out, size_t size)
{
    if (seconds < 1)
        snprintf(out, size, "<1 s");
    else if (seconds < MINUTE)
        snprintf(out, size, "~%.0f s", seconds);
    else if (seconds < HOUR)
        snprintf(out, size, "~%.0f min", seconds / MINUTE);
    else
        snprintf(out, size, "~%.1f h", seconds / HOUR);
}

void Duration_text(double seconds, DurationStyle style, char *out, size_t size)
{
    if (seconds >= 2 * DAY)
        snprintf(out, size, "%s%.3g days", style == DURATION_ABOUT ? "~" : "", seconds / DAY);
    else if (style == DURATION_ABOUT)
        about(seconds, out, size);
    else
        plain(seconds, out, size);
}
