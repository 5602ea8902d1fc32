/* The cost model of a run (docs/model.md §7): how long the work that Model_plan lists (the
 * steps work.h declares for it) will take on this machine, stage by stage, so that a screen can
 * show honest progress and the time left, and ask before a long job.
 *
 * Products (dgemm, dsyrk) are priced by their floating-point operations (2mnk for an m×k by
 * k×n product) at the product rate; LAPACK's reductions (bound by memory in their level-2
 * half) and the element-wise passes by "flop equivalents", the operations a product did in
 * the same time on a reference machine, at the reference rate times a scalar speed.  Both
 * are timed at start (Cost_calibrate: a small dgemm, exp over a buffer), so a busier
 * machine slows every stage, and a faster dgemm kernel only the products.
 *
 * A stage's cost is an expectation, not a bound: the route of a stable rank (the top
 * eigenpair, all eigenvalues, or the singular values of a collapsed X) depends on the
 * numbers, and the model guesses it from the theory of docs/model.md §3.
 */
#ifndef ATTNSCOPE_COST_H
#define ATTNSCOPE_COST_H

#include "attnscope/config.h"
#include "attnscope/model.h"
#include "attnscope/work.h"

#include <stdbool.h>

typedef struct {
    double flops_per_second; /* of one BLAS thread doing a 256×256 dgemm */
    double scalar_speed;     /* exp() and the like, against the reference machine's */
} CostRates;

/* The rates of the machine the constants were measured on (deterministic: for tests). */
CostRates Cost_reference_rates(void);

/* Times 256×256 dgemm (with whatever BLAS threads are set) and exp over a buffer, ~30 ms,
   and returns the rates of this machine now. */
CostRates Cost_calibrate(void);

/* The threads a run gets from its Progress: the caller's alone; two lanes
   (run_pair: the two networks of a layer at once, the shown eigenvalues beside the shown
   singular values: the screen's); or two lanes whose second thread also takes the shown
   eigenvalues beside the deeper layers (start_second: batch's), whose networks go to
   whichever thread is free first (run_claimed) until dgeev ends. */
typedef enum { COST_ONE_LANE, COST_TWO_LANES, COST_SPECTRA_BESIDE } CostLanes;

/* Seconds of one step of declared work (work.h): its serial part, then its two lanes (a
   beside step's lane[1] alone under COST_SPECTRA_BESIDE). */
double Cost_step(const WorkStep *step, CostRates rates, CostLanes lanes);

/* The seconds of a plan, and where each of Progress.after_layer's calls falls in them, on
   the caller's thread (the shown eigenvalues beside the layers end at the seed's join). */
typedef struct {
    const ModelPlan *plan;
    CostRates rates;
    CostLanes lanes;
    double *seed_start; /* [seeds + 1]: seconds before each seed begins; the last is the total */
} CostSchedule;

/* Builds the schedule of plan (which must outlive it).  Returns 0 or -1 (out of memory). */
int CostSchedule_build(CostSchedule *s, const ModelPlan *plan, CostRates rates, CostLanes lanes);
void CostSchedule_release(CostSchedule *s);

/* Seconds of the whole run. */
double CostSchedule_total(const CostSchedule *s);

/* Seconds of work done when after_layer(seed_index, layer) is called, and when the call
   after it comes (or the run ends): progress between the two is what a long stage is
   doing. */
double CostSchedule_done_at(const CostSchedule *s, int seed_index, int layer);
double CostSchedule_next_after(const CostSchedule *s, int seed_index, int layer);

/* Seconds before the first after_layer call (the input, a shown layer of a kept network). */
double CostSchedule_first_stage(const CostSchedule *s);

/* Seconds of a whole run of c on a fresh workspace (Model_plan with nothing kept), of the
   width sweep of c (Sweep_width: its points are always fresh runs), and of the compare
   view's extra network after a run of c (its shown layer's attention and spectra). */
double Cost_fresh_run(const Config *c, CostRates rates, CostLanes lanes);
double Cost_width_sweep(const Config *c, CostRates rates, CostLanes lanes);
double Cost_compare(const Config *c, CostRates rates, CostLanes lanes);

/* The compare view's network after a run of c: the same weights with gap removal toggled, up
   to the shown layer, one seed (the settings of the ensemble class at their defaults). */
Config Cost_compare_config(const Config *c);

/* Seconds of Conditioning_run_controlled for c (docs/model.md §8), on the exact path (K built,
   two SVDs of its T·d × T·d per layer) or by Lanczos; both networks, every layer alike, so
   a layer of a network is 1/(2·depth) of it. */
double Cost_conditioning(const Config *c, CostRates rates, bool exact);
/* The same where K's singular values are taken at `spectra` layers of the network only (its
   extremes at the others: ConditioningControl.shown_spectrum_only, batch's 1); the path's
   choice prices every layer's (Cost_conditioning), so screen and batch choose alike. */
double Cost_conditioning_spectra(const Config *c, CostRates rates, bool exact, int spectra);
/* The matrix-free path's price with s_min(K) sought at every layer, as if no lower bound
   stopped it: what the exact path, which resolves every κ(K) double precision holds, is
   weighed against when the path is chosen (a bound is a lesser answer, not a cheaper one). */
double Cost_conditioning_seeking(const Config *c, CostRates rates);
/* Whether c's run is priced to seek s_min(K) at every layer of the matrix-free path, where
   the lower bound on κ(K) stays below LANCZOS_KAPPA_REACH, which the price cannot know before
   the run; what it can know is the bound's witness: it carries s_min(W_VO) through Kᵀ, so it
   proves κ(K) large from a badly conditioned W_VO (Gaussian: κ ~ d) and little where W_VO is
   orthogonal by construction (κ(W_VO) = 1: W^V orthogonal or the identity, W^O too or none;
   cutting-skip, orthogonal).  Those are priced to seek s_min at every layer (an upper bound:
   some layers still stop at the bound), every other initialisation for the bound alone, and a
   layer that does seek s_min runs past that (Cost_conditioning_unpriced; bench/README.md,
   "Pricing the conditioning by initialisation").  Never where K is singular by structure
   (Conditioning_singular_by_structure): s_min is not sought there at all. */
bool Cost_conditioning_seeks_s_min(const Config *c);
/* The most a matrix-free run of c may add to its price (Cost_conditioning) where layers seek
   s_min(K) unpriced: Cost_conditioning_seeking's price less it, 0 where seeking is priced
   (Cost_conditioning_seeks_s_min).  Which layers seek it only the run knows (the bound on
   κ(K) at each layer decides), so an estimate says this beside its own. */
double Cost_conditioning_unpriced(const Config *c, CostRates rates);

/* Where a running job is, from its schedule: done and next are the seconds of work at the
   last after_layer call and at the one to come (or the end), total the whole job's;
   clock_at_done the seconds of the clock from the job's start to that last call, since
   the seconds from it to now.  The clock's seconds per estimated second so far (the pace,
   within ×5 of 1) stretch the estimate of what is left.  Inside a stage the progress moves
   at that pace and slows down before the stage's end, which it never reaches: a long
   LAPACK call shows work going on, never more than was done. */
typedef struct {
    double fraction;     /* 0..1 of the job */
    double seconds_left; /* at the pace so far; NaN when total is unknown */
} CostProgress;

CostProgress Cost_progress(double done, double next, double total, double clock_at_done,
                           double since);

#endif
