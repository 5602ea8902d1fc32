/* The numbers of one layer's Jacobian K and its dominant term B (docs/model.md §8, §8.2), at the
 * sub-block's input conditioning_run.c prepared: on the exact path from K built in full; on the
 * matrix-free path ‖K‖₂ by Lanczos and s_min(K) from B₀'s smallest singular pair, then the
 * Kronecker path or Lanczos on KKᵀ. */
#include "conditioning_run_internal.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

/* ‖E‖₂ by Lanczos on EᵀE (E's products). */
static int perturbation_norm(ConditioningRun *r, double *e_norm)
{
    SingularValueEstimate top;
    SaWork_perturbation_only(r->sa, true);
    int info = SaWork_extreme(r->sa, true, LANCZOS_STEPS_MAX, LANCZOS_TOLERANCE, 3, NAN, &top);
    SaWork_perturbation_only(r->sa, false);
    *e_norm = top.value;
    return info;
}

/* What the matrix-free path knows of a layer's s_min(K): the estimate (certified or NaN),
   `above`, a proved upper bound on s_min(K) (NaN where none), and the way it went. */
typedef struct {
    SingularValueEstimate estimate;
    double above;
    ConditioningRoute route;
} SmallestBound;

static void bound_below(SmallestBound *b, double upper)
{
    if (upper >= 0 && !(b->above <= upper))
        b->above = upper;
}

/* s_min(K) without forming K, B₀ factored (r->kron): first the image of B₀'s smallest left
   singular vector y under Kᵀ, one VJP, whose ‖Kᵀy‖ bounds s_min from above (K = (W_VOᵀ ⊗ I)·J
   and y's W_VO part is its smallest right singular vector, so Kᵀy is small by s_min(W_VO)
   at least: docs/model.md §8.2).  Then the Kronecker path where B₀ is invertible and near K
   (‖E‖₂ ≤ KRON_PREMISE_MAX·s_min(B₀); e_norm ≥ 0 where known, else it is taken here),
   Lanczos on KᵀK where it is not or the path is off, unless the bounds already prove κ(K)
   beyond LANCZOS_KAPPA_REACH (KronTally_beyond_lanczos): s_min is then null and the bound
   is the answer.  r->tally counts which way each layer went. */
static int smallest_matrix_free(ConditioningRun *r, double s_max, double s_max_low, double *e_norm,
                                SmallestBound *out)
{
    int info = 0;
    out->above = NAN;
    if ((info = KronLayer_factor(r->kron, r->la, r->c, r->heads, r->applied, r->wvo, r->wvo_head)))
        return info;
    double *right = r->witness, *left = r->witness + r->n;
    KronFactors_smallest_pair(r->kron, right, left);
    double right_error;
    bound_below(out, SaWork_witness(r->sa, left, true, true, right, &right_error));
    /* Every bound and certificate below rests on the products' rounding bounds: where the JVP
       and VJP are not adjoint to within them, none is given. */
    if (!SaWork_rounding_consistent(r->sa, left, right, right_error, r->witness + 2 * r->n)) {
        r->tally.inexact++;
        out->route = CONDITIONING_ROUTE_INEXACT;
        out->above = NAN;
        out->estimate = (SingularValueEstimate){.value = NAN, .error = NAN};
        return 0;
    }
    if (!r->kron_off) {
        if (!KronFactors_invertible(r->kron)) {
            r->tally.singular++;
        } else if ((*e_norm < 0 && (info = perturbation_norm(r, e_norm))) ||
                   !(*e_norm <= KRON_PREMISE_MAX * KronFactors_s_min(r->kron))) {
            if (info)
                return info;
            r->tally.far++;
        } else {
            KronEstimate e;
            if ((info = SaWork_smallest_preconditioned(r->sa, r->kron, r->la, KRON_STEPS_MAX,
                                                       KRON_TOLERANCE, 2, &e)))
                return info;
            if (!isnan(e.value)) {
                r->tally.certified++;
                out->route = CONDITIONING_ROUTE_KRONECKER;
                out->estimate = (SingularValueEstimate){.value = e.value, .error = e.error};
                bound_below(out, e.value + e.error);
                return 0;
            }
            r->tally.uncertified++;
            /* σ = ‖K v‖ from K·S, whose columns are off by η each (its half-width). */
            bound_below(out, e.upper + sqrt((double)e.products) * SaWork_product_error(r->sa) *
                                           (1.0 + (double)r->n * DBL_EPSILON));
        }
    }
    double resolvable = SaWork_kappa_resolvable(r->sa, s_max),
           reach = KronTally_lanczos_reach(r->n, LANCZOS_STEPS_MAX, resolvable);
    if (KronTally_beyond_lanczos(&r->tally, s_max_low, out->above, reach)) {
        out->route = CONDITIONING_ROUTE_BEYOND;
        out->estimate = (SingularValueEstimate){.value = NAN, .error = NAN};
        return 0;
    }
    /* On KKᵀ from that vector, which K's structure already put near the bottom: the bound
       only improves (the Ritz vector minimises ‖Kᵀy‖ over the Krylov space holding it), and
       the steps stop once its Ritz value puts κ(K) at the reach, or below the rounding's
       floor s_max/resolvable, under which no s_min is certified. */
    ExtremeRun smallest = {.left = true,
                           .budget = LANCZOS_STEPS_MAX,
                           .tolerance = LANCZOS_TOLERANCE,
                           .give_up = fmax(s_max_low / reach, s_max / resolvable),
                           .seed = 2,
                           .start = left,
                           .norm = s_max};
    if ((info = SaWork_extreme_run(r->sa, &smallest, &out->estimate)))
        return info;
    out->route = CONDITIONING_ROUTE_LANCZOS;
    bound_below(out, out->estimate.bound);
    bound_below(out, out->estimate.value + out->estimate.error);
    return 0;
}

/* s_max and s_min of the n×n matrix in r->jacobian (kept): LU and Lanczos, or its SVD where
   those are not certified (DenseExtremes_run). */
static int extremes(ConditioningRun *r, double *s_max, double *s_min)
{
    int n = (int)r->n;
    int info =
        DenseExtremes_run(r->extremes, r->la, n, r->jacobian, r->jacobian_copy, s_max, s_min);
    if (info != DENSE_NOT_CERTIFIED)
        return info;
    memcpy(r->jacobian_copy, r->jacobian, sizeof(double) * r->n * r->n);
    if ((info = Linalg_singular_values(r->la, n, n, r->jacobian_copy, r->jacobian_sv)))
        return info;
    *s_max = r->jacobian_sv[0];
    *s_min = r->jacobian_sv[n - 1];
    return 0;
}

/* A lower bound on κ(K) from the exact path's s_max and s_min (docs/model.md §8.2): κ itself
   where resolved; where not, the decompositions are backward stable (the values of K + δK,
   ‖δK‖ ≤ n·ε·‖K‖, the same model as Conditioning_kappa's null) and the built K is off the
   true one by at most `built` (exact_norm_error), so s_min(K) ≤ s_min + n·ε·s_max + built and
   s_max(K) ≥ (1 − n·ε)·s_max − built; null below 1, where it says nothing. */
static double exact_kappa_lower(double s_max, double s_min, double kappa, int n, double built)
{
    if (!isnan(kappa) || !(s_max > 0) || !isfinite(s_max))
        return kappa;
    double resolution = n * DBL_EPSILON;
    double lower =
        ((1.0 - resolution) * s_max - built) / (fmax(s_min, 0.0) + resolution * s_max + built);
    return lower >= 1.0 ? lower : NAN;
}

/* How far the exact path's ‖K‖₂ (and any singular value) may lie from the true K's: K is built
   one column K·e_j at a time by products each off by at most η (SaWork_product_error), so
   ‖K̂ − K‖₂ ≤ ‖K̂ − K‖_F ≤ √n·η (Weyl), and the decomposition adds n·ε·s_max. */
static double exact_norm_error(const ConditioningRun *r, double s_max)
{
    double n = (double)r->n;
    return sqrt(n) * SaWork_product_error(r->sa) + n * DBL_EPSILON * s_max;
}

/* ‖K‖₂ kept with its certified error where that is within JACOBIAN_NORM_TOLERANCE of it; else
   it and κ(K), which is built from it, are null and the layer counted (the run's warning says
   why).  Returns whether it was kept. */
static bool norm_certified(ConditioningRun *r, ConditioningCurves *out, int l, double error)
{
    out->jacobian_norm_error[l] = error;
    if (error <= JACOBIAN_NORM_TOLERANCE * out->jacobian_norm[l])
        return true;
    out->jacobian_norm[l] = out->kappa_jacobian[l] = NAN;
    if (r->norm_uncertain++ == 0)
        r->first_norm_uncertain = l;
    return false;
}

/* The exact path's numbers at one layer (K built in full): κ(K), ‖K‖₂, s_min, and κ(a·I + b′·K),
   the Jacobian of the block X ← a·X + b′·F(X) with the skip's gains as the step applies them,
   where that is the block's (Conditioning_skip_jacobian). */
static int exact_numbers(ConditioningRun *r, ConditioningCurves *out, int l, double *layer_sv,
                         bool shown)
{
    size_t n = r->n;
    int info;
    if ((info = SaWork_jacobian(r->sa, r->jacobian)))
        return info;
    /* Every singular value of K where they are kept.  ‖K‖₂ and s_min are the shown
       spectrum's ends at the shown layer (one SVD, in batch and on the screen alike) and
       K's extremes at every other, so that a layer's numbers do not depend on which
       spectra a run keeps: the screen's and batch's agree bit for bit.  Then a·I + b′·K's. */
    if (layer_sv) {
        memcpy(r->jacobian_copy, r->jacobian, sizeof(double) * n * n);
        if ((info = Linalg_singular_values(r->la, (int)n, (int)n, r->jacobian_copy, layer_sv)))
            return info;
    }
    if (shown && layer_sv) {
        out->jacobian_norm[l] = layer_sv[0];
        out->jacobian_s_min[l] = layer_sv[n - 1];
    } else if ((info = extremes(r, &out->jacobian_norm[l], &out->jacobian_s_min[l]))) {
        return info;
    }
    out->jacobian_s_min_error[l] = 0.0;
    double s_max = out->jacobian_norm[l], built = sqrt((double)n) * SaWork_product_error(r->sa);
    out->kappa_jacobian[l] = Conditioning_kappa(s_max, out->jacobian_s_min[l], (int)n);
    norm_certified(r, out, l, exact_norm_error(r, s_max));
    out->kappa_jacobian_lower[l] =
        exact_kappa_lower(s_max, out->jacobian_s_min[l], out->kappa_jacobian[l], (int)n, built);
    out->s_min_route[l] = CONDITIONING_ROUTE_EXACT;
    if (r->singular) {
        /* The settings prove s_min(K) = 0: what the SVD found is rounding (the shown layer's
           jacobian_singular_values keep it, the check), not a measurement, and κ(K) = ∞ has no
           finite lower bound; null as on the matrix-free path. */
        out->jacobian_s_min[l] = out->jacobian_s_min_error[l] = NAN;
        out->kappa_jacobian[l] = out->kappa_jacobian_lower[l] = NAN;
        out->s_min_route[l] = CONDITIONING_ROUTE_STRUCTURE;
    }
    if (!r->skip_jacobian)
        return 0;
    for (size_t i = 0; i < n * n; i++)
        r->jacobian[i] *= r->branch_gain;
    for (size_t i = 0; i < n; i++)
        r->jacobian[i + i * n] += r->skip_gain;
    double top, bottom;
    if ((info = extremes(r, &top, &bottom)))
        return info;
    out->kappa_jacobian_skip[l] = Conditioning_kappa(top, bottom, (int)n);
    return 0;
}

/* The Jacobian's numbers at one layer; the SaWork is prepared.  layer_sv: where K's singular
   values are kept, or NULL; shown: the shown layer of the network (config.layer). */
int ConditioningRun_jacobian_numbers(ConditioningRun *r, ConditioningCurves *out, int l,
                                     double s_min_b, bool has_perturbation, double *layer_sv,
                                     bool shown)
{
    int info = 0;
    /* ‖E‖₂ where the premise ratio reads it (s_min(B) resolved); else the Kronecker path
       takes it if it needs it (negative: not taken). */
    double e_norm = has_perturbation ? -1.0 : 0.0;
    if (has_perturbation && !isnan(s_min_b) && (info = perturbation_norm(r, &e_norm)))
        return info;
    out->premise_ratio[l] = isnan(s_min_b) ? NAN : e_norm / s_min_b;
    if (r->jacobian)
        return exact_numbers(r, out, l, layer_sv, shown);
    SingularValueEstimate top;
    SmallestBound smallest;
    if ((info = SaWork_extreme(r->sa, true, LANCZOS_STEPS_MAX, LANCZOS_TOLERANCE, 1, NAN, &top)))
        return info;
    if (top.overflow) { /* KᵀK past the double range: its numbers stay null, said so */
        if (r->tally.overflow++ == 0)
            r->tally.first_overflow = l;
        out->s_min_route[l] = CONDITIONING_ROUTE_OVERFLOW;
        return 0;
    }
    out->jacobian_norm[l] = top.value;
    bool norm_kept = norm_certified(r, out, l, top.error);
    if (r->singular) { /* s_min(K) = 0, proved from the settings: not sought */
        out->s_min_route[l] = CONDITIONING_ROUTE_STRUCTURE;
        return 0;
    }
    if ((info = smallest_matrix_free(r, top.value + top.error, top.bound, &e_norm, &smallest)))
        return info;
    out->s_min_route[l] = smallest.route;
    out->jacobian_s_min[l] = smallest.estimate.value;
    out->jacobian_s_min_error[l] = smallest.estimate.error;
    if (norm_kept)
        out->kappa_jacobian[l] = Conditioning_kappa(top.value, smallest.estimate.value, (int)r->n);
    /* κ(K) ≥ s_max/s_min ≥ (the witness below s_max)/(the bound above s_min); below 1 (the
       products' rounding η above ‖K y‖) it says nothing κ ≥ 1 does not: null. */
    if (smallest.above > 0 && top.bound >= smallest.above)
        out->kappa_jacobian_lower[l] = top.bound / smallest.above;
    return 0;
}

/* κ(B) of several heads, B = Σ_h W_VO,hᵀ ⊗ A_h, from its own products (the SaWork is
   prepared): exactly on the exact path, else by Lanczos.  Returns s_min(B) through s_min
   (NaN where κ(B) is not resolved). */
int ConditioningRun_dominant_numbers(ConditioningRun *r, ConditioningCurves *out, int l,
                                     double *s_min)
{
    size_t n = r->n;
    int info = 0;
    double top, bottom;
    SaWork_dominant_only(r->sa, true);
    if (r->jacobian) {
        if (!(info = SaWork_jacobian(r->sa, r->jacobian)))
            info = extremes(r, &top, &bottom);
    } else {
        SingularValueEstimate largest, smallest;
        if (!(info = SaWork_extreme(r->sa, true, LANCZOS_STEPS_MAX, LANCZOS_TOLERANCE, 4, NAN,
                                    &largest)))
            info = SaWork_extreme(r->sa, false, LANCZOS_STEPS_MAX, LANCZOS_TOLERANCE, 5,
                                  largest.value + largest.error, &smallest);
        top = largest.value;
        bottom = smallest.value;
    }
    SaWork_dominant_only(r->sa, false);
    if (info)
        return info;
    out->kappa_dominant[l] = Conditioning_kappa(top, bottom, (int)n);
    out->dominant_route[l] = r->jacobian ? CONDITIONING_ROUTE_EXACT : CONDITIONING_ROUTE_LANCZOS;
    *s_min = isnan(out->kappa_dominant[l]) ? NAN : bottom;
    return 0;
}
