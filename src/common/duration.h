/* A duration as a reader weighs it, one rule for the screen and batch mode: from two days on
 * in days ("4.04 days"), where hours would leave the reader dividing by 24; below that each
 * front end keeps the units it has always written.  A unit gives way to the next where its
 * rounded number would reach the next one's: 59.7 s is "~1 min" as 60 s is, not "~60 s".
 */
#ifndef ATTNSCOPE_COMMON_DURATION_H
#define ATTNSCOPE_COMMON_DURATION_H

#include <stddef.h>

typedef enum {
    DURATION_PLAIN, /* batch's messages: "0.4 s", "12.4 s", "41 min", "2.5 h", "4.04 days" */
    DURATION_ABOUT, /* the screen's estimates: "<1 s", "~12 s", "~3 min", "~2.5 h", "~4.04 days" */
} DurationStyle;

/* seconds (finite, >= 0) into out in style. */
void Duration_text(double seconds, DurationStyle style, char *out, size_t size);

/* DURATION_PLAIN with the seconds beside a larger unit, for batch's refusals: "7.7 h
   (2.77e+04 s)"; in seconds already, once: "1.52 s", never "1.52 s (1.52 s)". */
void Duration_text_seconds(double seconds, char *out, size_t size);

#endif
