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

#endif
