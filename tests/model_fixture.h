/* The fixture of the model tests: one Workspace and one Linalg for the whole group, as the
 * program keeps them between runs, and the helpers they share (a small configuration, a run
 * on the kept workspace, the measures of a token matrix by either route).  Include after
 * testing.h. */
#ifndef ATTNSCOPE_TESTS_MODEL_FIXTURE_H
#define ATTNSCOPE_TESTS_MODEL_FIXTURE_H

#include "attnscope/linalg.h"
#include "attnscope/measure.h"
#include "attnscope/model.h"

#include <stdbool.h>
#include <stdlib.h>

static Workspace *workspace;
static Linalg *la;

static int setup(void **state)
{
    (void)state;
    workspace = Workspace_new();
    la = Linalg_new();
    return workspace && la ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    Workspace_free(workspace);
    Linalg_free(la);
    return 0;
}

/* The default configuration at T tokens, width d and `depth` layers. */
static inline Config small(int T, int d, int depth)
{
    Config c = Config_default();
    c.tokens = T;
    c.width = d;
    c.depth = depth;
    return c;
}

/* Model_run of a valid c on the group's workspace; a failure fails the test. */
static inline Result *run(const Config *c)
{
    char err[256];
    if (Config_validate(c, err, sizeof err))
        fail_msg("invalid test configuration: %s", err);
    Result *r = Result_new();
    assert_non_null(r);
    if (Model_run(c, workspace, r, NULL, err, sizeof err))
        fail_msg("Model_run: %s", err);
    return r;
}

/* Measure_tokens on X by the default routes, or by the reference (lanczos = NULL: all
   eigenvalues of the Gram matrix, the singular values of X below the floor, never the
   deflated route). */
static inline Measures measure_by(int T, int d, const double *x, bool top_eigenpair_first)
{
    double *unit = malloc(sizeof(double) * T * d), *gram = malloc(sizeof(double) * T * T);
    double *eig = malloc(sizeof(double) * T);
    double *lanczos = malloc(sizeof(double) * Measure_tokens_scratch_size(T, d));
    Measures m;
    assert_int_equal(
        Measure_tokens(la, T, d, x, 0.0, unit, gram, eig, top_eigenpair_first ? lanczos : NULL, &m),
        0);
    free(unit);
    free(gram);
    free(eig);
    free(lanczos);
    return m;
}

#endif
