/* Whether x's export can start now, and the prompt's wait for the result: the export holds a
 * job whole, so it waits for the result of the settings on (and, in the conditioning view, for
 * its conditioning, in its compare view both initialisations'; in the compare view for the
 * network with the gap toggled, whose eigenvalues its files hold).  The prompt opens at once anyway
 * (what is typed after x is a directory, never keys); where it was told to wait, it says when the
 * result is in.
 */
#ifndef ATTNSCOPE_TUI_EXPORT_GATE_H
#define ATTNSCOPE_TUI_EXPORT_GATE_H

#include "snapshot.h"

#include <stdbool.h>

typedef enum {
    EXPORT_GATE_OPEN,              /* the shown result can be exported now */
    EXPORT_GATE_WRITING,           /* the last export is still being written */
    EXPORT_GATE_WAIT_RESULT,       /* the settings' result is not complete yet */
    EXPORT_GATE_WAIT_CONDITIONING, /* the conditioning view's numbers are not in yet */
    EXPORT_GATE_WAIT_COMPARE,      /* the compare view's second network is not in yet */
} ExportGate;

/* The gate for shown (NULL: nothing yet) under the settings on, in the conditioning view or
   not, in a compare view or not, while an export writes or not. */
ExportGate ExportGate_of(const Snapshot *shown, const Config *settings, bool conditioning_view,
                         bool compare, bool writing);

/* Why x cannot export at gate g, as the note says it, or NULL where g is open. */
const char *ExportGate_refusal(ExportGate g);

/* The export prompt's wait: set where a refusal to wait for the result is said, ended by the
   result's arrival (said once) or by a refusal of another kind or none. */
typedef struct {
    bool waiting;
} ExportWait;

/* x opened the prompt, or Enter was refused, at gate g: the note to say (NULL: none), and the
   prompt waits while g is a wait for the result. */
const char *ExportWait_said(ExportWait *w, ExportGate g);

/* A snapshot came in and the gate is now g: true, once, where the prompt waited and g is open
   (the prompt says the result is in); the wait then ends. */
bool ExportWait_ended(ExportWait *w, ExportGate g);

#endif
