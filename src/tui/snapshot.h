/* What the screen shows of one computation, copied out of the worker's Result after a
 * layer.  A snapshot is immutable once published: the UI thread reads it without locks
 * while the worker goes on writing into its own Result.
 */
#ifndef ATTNSCOPE_TUI_SNAPSHOT_H
#define ATTNSCOPE_TUI_SNAPSHOT_H

#include "attnscope/conditioning.h"
#include "attnscope/model.h"
#include "attnscope/sweep.h"
#include "figure.h"

#include <stdatomic.h>
#include <stdbool.h>

enum { SNAPSHOT_ERROR_SIZE = 256 };

typedef struct {
    unsigned long generation; /* of the job that made it */

    /* Progress of the job when the snapshot was taken (the worker reports how far it is
       in its cost schedule apart: Worker_progress). */
    bool done;
    double elapsed_ms; /* since the job started */
    bool failed;
    char error[SNAPSHOT_ERROR_SIZE];

    /* What was computed so far: a copy of the worker's Result (every per-layer series of
       both networks, the bands, the shown layer's spectra and readouts, the warnings), or
       an empty one (no layer done, NaN numbers) in a failure snapshot. */
    Result *result;

    /* The width sweep, when the job was asked for it and it finished. */
    bool has_sweep;
    WidthSweep sweep;

    /* The compare view's second network (same weights, gap removal toggled), when the job
       was asked for it and its shown layer is done: its gap mode and its spectra. */
    bool has_compare;
    Gap compare_gap;
    bool compare_exact;
    Complex *compare_eigenvalues;

    /* The conditioning view's numbers (docs/model.md §8): [0] for the settings, [1] in the
       compare view for the other initialisation (normal and cutting-skip side by side).
       has_conditioning: complete (a stopped run leaves nothing); otherwise
       conditioning_note says why there is none (the block it does not describe, memory, a
       failure), or is empty while it computes. */
    bool has_conditioning[2];
    Conditioning conditioning[2];
    char conditioning_note[2][SNAPSHOT_ERROR_SIZE];

    /* The network's input X0 (T×d, Export_input) of a done job whose attention maps are kept
       whole (--export-matrix), made by the worker for x's input.csv; NULL otherwise, and
       where it could not be made input_note says why. */
    double *input;
    char input_note[SNAPSHOT_ERROR_SIZE];

    /* Holders beyond the one that made it (Snapshot_hold): x's export reads the snapshot on
       a thread of its own while the screen may drop it for a newer one. */
    atomic_int extra_holders;
} Snapshot;

/* The compare view's second network of s as figure.h describes it (no eigenvalues until
   has_compare). */
ToggledNetwork Snapshot_toggled(const Snapshot *s);

/* A snapshot holding a copy of r.  Returns NULL when out of memory. */
Snapshot *Snapshot_of(const Result *r, unsigned long generation);
/* Copies the eigenvalues of the toggled network r into s for the compare view (false when
   out of memory, or r's shown layer is not done yet). */
bool Snapshot_attach_compare(Snapshot *s, const Result *r);
/* Copies the conditioning c into s's slot (0 or 1) and its warnings into the result's, so
   that `!` lists why a point is null (false when out of memory). */
bool Snapshot_attach_conditioning(Snapshot *s, int slot, const Conditioning *c);
/* Copies X0 (input, T×d of s's settings) into s (false when out of memory). */
bool Snapshot_attach_input(Snapshot *s, const double *input);
/* A snapshot that only reports a failure (the config and the message). */
Snapshot *Snapshot_failure(const Config *c, unsigned long generation, const char *error);
/* One more holder of s, which stays whole until each holder has called Snapshot_free. */
Snapshot *Snapshot_hold(Snapshot *s);
/* Lets go of s: frees it when no other holder is left. */
void Snapshot_free(Snapshot *s);

#endif
