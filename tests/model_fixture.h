/* The fixture of the model tests: one Workspace and one Linalg for the whole group, as the
 * program keeps them between runs. */
#ifndef ATTNSCOPE_TESTS_MODEL_FIXTURE_H
#define ATTNSCOPE_TESTS_MODEL_FIXTURE_H

#include "attnscope/linalg.h"
#include "attnscope/model.h"

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

/* A configuration of T tokens of width d and `depth` layers, the rest default. */
static inline Config fixture_config(int T, int d, int depth)
{
    Config c = Config_default();
    c.tokens = T;
    c.width = d;
    c.depth = depth;
    return c;
}

/* A run of c on the group's workspace; an invalid c or a failed run fails the test. */
static inline Result *fixture_run(const Config *c)
{
    char err[256];
    if (Config_validate(c, err, sizeof err))
        fail_msg("invalid test configuration: %s", err);
    Result *r = Result_new();
    if (Model_run(c, workspace, r, NULL, err, sizeof err))
        fail_msg("Model_run: %s", err);
    return r;
}

#endif
