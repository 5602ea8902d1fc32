/* What the screen shows of one computation, copied out of the worker's Result after a
 * layer.  A snapshot is immutable once published: the UI thread reads it without locks
 * while the worker goes on writing into its own Result.
 */
#ifndef ATTNSCOPE_TUI_SNAPSHOT_H
#define ATTNSCOPE_TUI_SNAPSHOT_H

#include "attnscope/model.h"
#include "attnscope/sweep.h"
#include "export.h"

#include <stdbool.h>

enum { SNAPSHOT_ERROR_SIZE = 256 };

typedef struct {
    unsigned long generation; /* of the job that made it */
    Config config;

    /* Progress of the job when the snapshot was taken. */
    int layers_done; /* of the first seed, whose curves and spectra are shown */
    double progress; /* 0..1 over all seeds and layers */
    bool done;
    double elapsed_ms; /* since the job started */
    bool failed;
    char error[SNAPSHOT_ERROR_SIZE];

    double sigma;     /* sqrt(exp(σ_qk⁴) − 1) */
    double logit_std; /* NaN: not measured (yet, or no logits) */
    Gap counterpart_gap;

    /* Curves of the first seed, index ℓ = 0..depth; NaN where not computed. */
    int depth;
    double *stable_rank;
    double *stable_rank_minus_one;
    double *counterpart_stable_rank;
    /* The other curves of both networks, carried so that changing the view redraws from
       the snapshot instead of recomputing: μ(X_ℓ)/μ(X_0) and log10 of the frozen-attention
       gradient norm (index 0 unused), NaN where undefined. */
    double *token_similarity;
    double *counterpart_token_similarity;
    double *log10_gradient_norm;
    double *counterpart_log10_gradient_norm;
    /* Mean and std of the stable rank over the first seeds_done seeds of the ensemble
       (seeds > 1), both networks: they grow while the job runs. */
    int seeds_done;
    double *stable_rank_mean, *stable_rank_std;
    double *counterpart_mean, *counterpart_std;

    /* The shown layer's attention matrix (tokens values each), once spectra_ready. */
    bool spectra_ready;
    int tokens;
    Gap shown_gap;
    int outliers_removed;
    bool eigenvalues_exact;
    Complex *eigenvalues;    /* by descending modulus */
    double *singular_values; /* descending, not scaled */
    Readouts readouts;       /* of SPEC §2, as the core computed them */

    Warnings warnings;

    /* The width sweep, when the job was asked for it and it finished. */
    bool has_sweep;
    WidthSweep sweep;

    /* The compare view's second network (same weights, gap removal toggled), when the job
       was asked for it and its shown layer is done: its gap mode and its spectra. */
    bool has_compare;
    Gap compare_gap;
    bool compare_exact;
    Complex *compare_eigenvalues;
} Snapshot;

/* Copies what the screen needs out of r.  Returns NULL when out of memory. */
Snapshot *Snapshot_of(const Result *r, unsigned long generation);
/* Copies the eigenvalues of the toggled network r into s for the compare view (false when
   out of memory, or r's shown layer is not done yet). */
bool Snapshot_attach_compare(Snapshot *s, const Result *r);
/* Fills d with what s holds (its spectra, when ready, and every per-layer curve), for
   Export_write; d points into s. */
void Snapshot_export(const Snapshot *s, ExportData *d);
/* A snapshot that only reports a failure (the config and the message). */
Snapshot *Snapshot_failure(const Config *c, unsigned long generation, const char *error);
void Snapshot_free(Snapshot *s);

/* sr at the last layer computed so far (its layer in *layer, sr − 1 as the core computed
   it, without cancellation, in *minus_one), NaN before the first layer. */
double Snapshot_last_stable_rank(const Snapshot *s, int *layer, double *minus_one);

#endif
