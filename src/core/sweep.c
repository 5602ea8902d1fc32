#include "attnscope/sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int Sweep_token_counts(int tokens, int counts[SWEEP_POINTS_MAX])
{
    int n = 0;
    for (int t = tokens < 16 ? 2 : 16; t < tokens && n < SWEEP_POINTS_MAX - 1; t *= 2)
        counts[n++] = t;
    counts[n++] = tokens;
    return n;
}

bool Sweep_resolved(double excess)
{
    return isfinite(excess) && excess >= SWEEP_RESOLVED_EXCESS;
}

double Sweep_loglog_slope(const int *x, const double *y, int n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!Sweep_resolved(y[i]) || x[i] <= 0)
            continue;
        double lx = log((double)x[i]), ly = log(y[i]);
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
        m++;
    }
    double denominator = m * sxx - sx * sx;
    if (m < 2 || !(denominator > 0))
        return NAN;
    return (m * sxy - sx * sy) / denominator;
}

int Sweep_width(const Config *c, Workspace *w, WidthSweep *out, const Progress *progress, char *err,
                size_t size)
{
    memset(out, 0, sizeof *out);
    int counts[SWEEP_POINTS_MAX];
    int n = Sweep_token_counts(c->tokens, counts);
    double gamma = (double)c->tokens / c->width;
    int layer = c->layer;
    bool gap_on = c->gap != GAP_OFF;
    Result *r = Result_new();
    if (!r) {
        snprintf(err, size, "out of memory for the width sweep");
        return -1;
    }
    bool paused = Workspace_pause_keeping(w, true);
    for (int k = 0; k < n; k++) {
        Config point = *c;
        point.tokens = counts[k];
        /* The orthonormal input needs T <= d; the embedding input keeps γ > 1 too. */
        point.width =
            (int)fmax(c->input == INPUT_ORTHONORMAL ? counts[k] : 1, lround(counts[k] / gamma));
        point.depth = layer;
        point.seeds = 1;
        if (point.window >= point.tokens)
            point.window = point.tokens - 1;
        double off = 0, on = 0;
        for (int s = 0; s < c->seeds; s++) {
            point.seed = c->seed + (uint64_t)s;
            int status = Model_run(&point, w, r, progress, err, size);
            if (status || r->layers_done < layer) { /* failed, or stopped */
                Workspace_pause_keeping(w, paused);
                Result_free(r);
                return status;
            }
            const Curves *without = gap_on ? &r->counterpart : &r->network;
            const Curves *with = gap_on ? &r->network : &r->counterpart;
            off += without->stable_rank_minus_one[layer] / c->seeds;
            on += with->stable_rank_minus_one[layer] / c->seeds;
        }
        out->tokens[k] = counts[k];
        out->excess[k] = off;
        out->excess_gap[k] = on;
        out->count = k + 1;
    }
    Workspace_pause_keeping(w, paused);
    Result_free(r);
    out->slope = Sweep_loglog_slope(out->tokens, out->excess, out->count);
    out->slope_gap = Sweep_loglog_slope(out->tokens, out->excess_gap, out->count);
    /* The law starts from orthonormal rows (sr(Σ_0) = T). */
    bool markov_law = c->attention == ATTENTION_MARKOV && c->mask == MASK_FULL &&
                      c->skip == SKIP_NONE && c->layernorm == LAYERNORM_NONE &&
                      c->input == INPUT_ORTHONORMAL;
    out->theory_slope = markov_law ? 1.0 - 2.0 * layer : NAN;
    return 0;
}
