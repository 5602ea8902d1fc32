/* The screen's export (x) on a thread of its own: Export_write of a snapshot the job holds.
 * With --export-matrix the export formats 2·T² numbers, 7 s of a core at T = 2048
 * (bench/README.md), which the UI thread must not spend: its keys answer within 30 ms
 * (issue 4).  Not on the worker: a key that changes a setting starts a job there, which must
 * neither wait for the export nor stop it.  The job holds the snapshot (Snapshot_hold), so
 * the screen may show newer ones while it writes the one the user asked for.
 */
#ifndef ATTNSCOPE_TUI_EXPORT_JOB_H
#define ATTNSCOPE_TUI_EXPORT_JOB_H

#include "attnscope/conditioning.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "export.h"
#include "keys.h"
#include "prompt.h"
#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>

enum { EXPORT_JOB_DIR_SIZE = PROMPT_SIZE + 512, EXPORT_JOB_ERROR_SIZE = 512 };

/* What writes the files: Export_write_stoppable, or a test's writer that holds the export at a
   known point.  It polls stop, which ExportJob_cancel makes ask. */
typedef int (*ExportWriter)(const Result *r, const ExportExtras *extras, const char *dir,
                            LinalgStop stop, char *err, size_t size);

typedef struct {
    int files; /* written, -1, or EXPORT_CANCELLED (export.h) */
    char dir[EXPORT_JOB_DIR_SIZE];
    char error[EXPORT_JOB_ERROR_SIZE]; /* why not, when files is -1 */
} ExportOutcome;

typedef struct ExportJob ExportJob;

/* Why a second export is refused while one writes (not queued: it would write after the
   user had moved on, into a directory typed while the first was still unknown to succeed). */
extern const char EXPORT_JOB_STILL_WRITING[];

/* NULL when out of memory or out of file descriptors. */
ExportJob *ExportJob_new(ExportWriter write);
/* Cancels a running export and waits for it to end (it removes its staging directory and leaves
   its directory as it was; leaving under it would leave the staging directory behind), then
   frees. */
void ExportJob_free(ExportJob *j);

/* Readable once the running export has ended: then ExportJob_collect. */
int ExportJob_fd(const ExportJob *j);

/* Starts writing s into dir on the job's thread: its result, the panels of the view `panel`
   where s has them (the width sweep, the conditioning of the settings' initialisation, the
   gradients, the token similarity, the row entropies), with `compare` those of its compare
   view (both halves' eigenvalues; the conditioning's: the other initialisation's too), and
   with `matrix` (--export-matrix) its X0 and the matrices in full, after the checks
   Export_check makes of dir, which are quick and so answer at once.  Returns
   false with the reason in err (as the screen says it: "export failed: ...") when an export
   is still running, s has no X0 to write, dir is refused or the thread does not start. */
bool ExportJob_start(ExportJob *j, Snapshot *s, Panel panel, bool compare, bool matrix,
                     const char *dir, char *err, size_t size);

/* Whether an export was started and not collected yet; the directory it writes. */
bool ExportJob_running(const ExportJob *j);

/* Asks the running export to stop (Esc, or quitting): it stops within a row of the matrices
   and ends as a failure does, its directory as it was, its outcome EXPORT_CANCELLED unless it
   had already put the set in place.  False when none runs or it was asked already. */
bool ExportJob_cancel(ExportJob *j);
/* Whether it was asked and has not been collected yet. */
bool ExportJob_cancelling(const ExportJob *j);
const char *ExportJob_dir(const ExportJob *j);

/* Once ExportJob_fd is readable: the ended export's outcome, its thread joined and its
   snapshot let go.  Returns false (out untouched) while it still writes or when none ran. */
bool ExportJob_collect(ExportJob *j, ExportOutcome *out);

/* The status line's words: while it writes, for how long (seconds) and that Esc cancels, or
   that it is being cancelled ... */
void ExportJob_writing_note(const ExportJob *j, double seconds, char *buf, size_t size);
/* ... and once collected, what was written or why not. */
void ExportJob_outcome_note(const ExportOutcome *o, char *buf, size_t size);

#endif
