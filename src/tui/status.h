/* The status lines under the plots: every parameter, then the readouts (σ where it means
 * something, logit std, 1 − |λ2|, s1/s2, |λ| > 0.5, sr at the shown and at the last layer),
 * a line that explains the picture when it needs one (causal: why the eigenvalues are
 * real), then the message line: compute time or progress, the last key's note, the export
 * while it writes, the first warning about what is on screen, and at its right end, at any
 * width, "! N warnings" and "? help".  Pure text: the screen prints the lines it is given.
 */
#ifndef ATTNSCOPE_TUI_STATUS_H
#define ATTNSCOPE_TUI_STATUS_H

#include "attnscope/config.h"
#include "attnscope/model.h"
#include "snapshot.h"

#include <stdbool.h>

enum { STATUS_LINES_MAX = 8, STATUS_LINE_SIZE = 1024 };

typedef struct {
    const Config *config;    /* the settings asked for (shown at once) */
    const Snapshot *shown;   /* the snapshot drawn, or NULL */
    bool current;            /* shown was computed from config */
    bool busy;               /* a job for config is being computed */
    double busy_ms;          /* for how long */
    double progress;         /* 0..1 of that job */
    bool estimated;          /* its time left is known: */
    double seconds_left;     /* from the cost model, at the pace so far */
    bool stopping;           /* the job before it is still winding down */
    unsigned spinner;        /* frame of the busy indicator */
    const char *exporting;   /* what x's export is writing, while it writes (NULL: none) */
    const char *note;        /* what the last key adjusted or refused ("" for none) */
    bool unicode;            /* otherwise every line is plain ASCII */
    unsigned shown_subjects; /* what the frame shows, as WarningSubject bits (View_subjects) */
    int warnings_listed;     /* the warnings the list ! opens holds (View_warnings_shown) */
    const char *weights;     /* the checkpoint whose weights run (--weights), or NULL */
    int reading_layer;       /* the layer whose weights the checkpoint is read for (0: none) */
    int reading_depth;       /* of how many */
} StatusView;

/* Lays the status out in lines of at most `width` columns; returns the number of lines
   (the last one is the message line). */
int Status_layout(const StatusView *v, int width, char lines[][STATUS_LINE_SIZE], int max);

#endif
