/* The in-process QR (Linalg_orthonormalise below the isolation's size: X0's orthonormal rows,
 * the orthogonal initialisations) runs in panels of 32 columns and polls the stop hook between
 * them.  Checked: its Q is that of one dgeqrf and one dorgqr, bit for bit, at sizes on both
 * sides of LAPACK's blocking (32) and crossover (128); a hook that fires at its k-th poll
 * stops the call at once, with no panel's update (dlarfb, counted by interposing it) after
 * it; every update is preceded by a poll of its own; and X0 of a job superseded inside its QR
 * stops as the call does; and a run stopped inside an orthogonal W^V's draw leaves the value
 * cache as it was, so the next run of the cached seed reads its own W^V.  No timing: the hook
 * decides where, the counts say how much.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "testing.h"

#include "attnscope/config.h"
#include "attnscope/layer.h"
#include "attnscope/linalg.h"
#include "attnscope/model.h"
#include "attnscope/random.h"

#include <dlfcn.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

/* What the hook and the interposed dlarfb saw, in order. */
static struct {
    int polls;       /* calls of the stop hook */
    int fire_at;     /* the poll from which the hook asks to stop; 0: never */
    int updates;     /* dlarfb calls (a panel's update of the columns right of it) */
    int after_fired; /* dlarfb calls after the hook first asked to stop */
    int unpolled;    /* dlarfb calls with no poll since the previous one */
    bool polled;     /* a poll since the last dlarfb */
} seen;

static void seen_reset(int fire_at)
{
    memset(&seen, 0, sizeof seen);
    seen.fire_at = fire_at;
}

static bool counting_stop(void *context)
{
    (void)context;
    seen.polls++;
    seen.polled = true;
    return seen.fire_at && seen.polls >= seen.fire_at;
}

typedef void (*Dlarfb)(const char *, const char *, const char *, const char *, const int *,
                       const int *, const int *, const double *, const int *, const double *,
                       const int *, double *, const int *, double *, const int *, size_t, size_t,
                       size_t, size_t);

/* LAPACKE_dlarfb_work's call into LAPACK, counted, then passed on. */
void dlarfb_(const char *side, const char *trans, const char *direct, const char *storev,
             const int *m, const int *n, const int *k, const double *v, const int *ldv,
             const double *t, const int *ldt, double *c, const int *ldc, double *work,
             const int *ldwork, size_t l1, size_t l2, size_t l3, size_t l4)
{
    static Dlarfb next;
    if (!next)
        *(void **)&next = dlsym(RTLD_NEXT, "dlarfb_");
    seen.updates++;
    seen.after_fired += seen.fire_at && seen.polls >= seen.fire_at;
    seen.unpolled += !seen.polled;
    seen.polled = false;
    next(side, trans, direct, storev, m, n, k, v, ldv, t, ldt, c, ldc, work, ldwork, l1, l2, l3,
         l4);
}

static double *random_matrix(int m, int n, unsigned seed)
{
    double *a = malloc(sizeof(double) * (size_t)m * n);
    assert_non_null(a);
    srand(seed);
    for (size_t i = 0; i < (size_t)m * n; i++)
        a[i] = rand() / (double)RAND_MAX - 0.5;
    return a;
}

/* Q of a with R's diagonal made positive, by one dgeqrf and one dorgqr: the reference. */
static void reference_q(int m, int n, double *a)
{
    double *tau = malloc(sizeof(double) * (size_t)n), *sign = malloc(sizeof(double) * (size_t)n);
    assert_true(tau && sign);
    assert_int_equal(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, m, n, a, m, tau), 0);
    for (int j = 0; j < n; j++)
        sign[j] = a[j + (size_t)j * m] < 0 ? -1.0 : 1.0;
    assert_int_equal(LAPACKE_dorgqr(LAPACK_COL_MAJOR, m, n, n, a, m, tau), 0);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            a[i + (size_t)j * m] *= sign[j];
    free(tau);
    free(sign);
}

static void test_panels_give_one_calls_bits(void **state)
{
    (void)state;
    /* n on both sides of 32 and 128, m = n and m > n, a last panel narrower than 32. */
    static const int sizes[][2] = {{16, 16},  {64, 48},   {129, 129}, {160, 160}, {161, 150},
                                   {200, 33}, {300, 200}, {512, 512}, {700, 301}, {1024, 1024}};
    Linalg *la = Linalg_new();
    assert_non_null(la);
    Linalg_set_stop(la, (LinalgStop){.requested = counting_stop});
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int m = sizes[s][0], n = sizes[s][1];
        double *q = random_matrix(m, n, (unsigned)s + 1), *expected = random_matrix(m, n, 0);
        memcpy(expected, q, sizeof(double) * (size_t)m * n);
        reference_q(m, n, expected);
        seen_reset(0);
        assert_int_equal(Linalg_orthonormalise(la, m, n, q), 0);
        if (memcmp(q, expected, sizeof(double) * (size_t)m * n) != 0)
            fail_msg("%d×%d: Q differs from one dgeqrf and dorgqr's", m, n);
        /* Every panel's update polled first; blocked only past the crossover. */
        assert_int_equal(seen.unpolled, 0);
        if (n > 128 && seen.updates == 0)
            fail_msg("%d×%d: no panel was updated: the test sees no blocking", m, n);
        free(q);
        free(expected);
    }
    Linalg_free(la);
}

enum { M = 1024, N = 1024 };

static void test_a_stop_ends_the_call_at_the_poll(void **state)
{
    (void)state;
    Linalg *la = Linalg_new();
    assert_non_null(la);
    Linalg_set_stop(la, (LinalgStop){.requested = counting_stop});
    double *a = random_matrix(M, N, 5);
    seen_reset(0);
    assert_int_equal(Linalg_orthonormalise(la, M, N, a), 0);
    int polls = seen.polls, updates = seen.updates;
    /* The factor's (N − 128)/32 panels and the forming's as many, each updating once. */
    assert_int_equal(updates, 2 * (N - 128) / 32);
    assert_true(polls >= updates);
    /* Fired at the first poll, in the middle of the factor, at the first of the forming, and
       at the last poll: each time the call returns at that poll, with no update after it. */
    int fire_at[] = {1, polls / 4, polls / 2 + 1, polls};
    for (size_t i = 0; i < sizeof fire_at / sizeof fire_at[0]; i++) {
        free(a);
        a = random_matrix(M, N, 5);
        seen_reset(fire_at[i]);
        assert_int_equal(Linalg_orthonormalise(la, M, N, a), LINALG_STOPPED);
        assert_int_equal(seen.polls, fire_at[i]);
        assert_int_equal(seen.after_fired, 0);
    }
    free(a);
    Linalg_free(la);
}

/* X0 of a job superseded inside its QR (T = d = 1024: in process, below the isolation's
   1536³): Layer_input stops with the call, no update after the stop. */
static void test_x0_stops_inside_its_qr(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = c.width = 1024;
    Linalg *la = Linalg_new();
    RandomStream *random = RandomStream_new();
    double *x = malloc(sizeof(double) * 1024 * 1024),
           *scratch = malloc(sizeof(double) * 1024 * 1024);
    assert_true(la && random && x && scratch);
    Linalg_set_stop(la, (LinalgStop){.requested = counting_stop});
    seen_reset(10);
    assert_int_equal(Layer_input(random, la, &c, c.seed, x, scratch), LINALG_STOPPED);
    assert_int_equal(seen.polls, 10);
    assert_int_equal(seen.after_fired, 0);
    assert_int_equal(seen.updates, 9); /* one a poll before the stop */
    free(x);
    free(scratch);
    RandomStream_free(random);
    Linalg_free(la);
}

static bool same_doubles(const double *a, const double *b, int n)
{
    return memcmp(a, b, sizeof(double) * (size_t)n) == 0;
}

/* The first seed's W^V is cached for its gradients (gradients.c's draw_value_weights).  A run
   of another seed on the same workspace, stopped at its k-th poll, may stop inside the QR of
   its orthogonal W^V after the draw began writing into the cache's slot; the cached seed's
   next run must still give a fresh workspace's result bit for bit, whichever poll stopped. */
static void test_a_stopped_value_draw_keeps_the_cache(void **state)
{
    (void)state;
    Config c = Config_default();
    c.tokens = 8;
    c.width = 12;
    c.depth = 3;
    c.layer = 2;
    c.init_value = MATRIX_INIT_ORTHOGONAL;
    char err[256];
    assert_int_equal(Config_validate(&c, err, sizeof err), 0);
    assert_true(Model_value_weights_cached(&c));
    Workspace *fresh = Workspace_new();
    Result *expected = Result_new();
    assert_int_equal(Model_run(&c, fresh, expected, NULL, err, sizeof err), 0);
    Config other = c;
    other.seed = c.seed + 1;
    int n = c.depth + 1;
    for (int k = 1; k <= 40; k++) {
        Workspace *w = Workspace_new();
        Result *first = Result_new(), *stopped = Result_new(), *again = Result_new();
        assert_int_equal(Model_run(&c, w, first, NULL, err, sizeof err), 0);
        seen_reset(k);
        Progress p = {.stop_requested = counting_stop};
        Model_run(&other, w, stopped, &p, err, sizeof err);
        assert_int_equal(Model_run(&c, w, again, NULL, err, sizeof err), 0);
        if (!same_doubles(again->network.gradient_norm, expected->network.gradient_norm, n) ||
            !same_doubles(again->counterpart.gradient_norm, expected->counterpart.gradient_norm,
                          n) ||
            !same_doubles(again->network.stable_rank, expected->network.stable_rank, n))
            fail_msg("stopped at poll %d: the cached seed's rerun differs from a fresh run", k);
        Result_free(first);
        Result_free(stopped);
        Result_free(again);
        Workspace_free(w);
    }
    Result_free(expected);
    Workspace_free(fresh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_panels_give_one_calls_bits),
        cmocka_unit_test(test_a_stop_ends_the_call_at_the_poll),
        cmocka_unit_test(test_x0_stops_inside_its_qr),
        cmocka_unit_test(test_a_stopped_value_draw_keeps_the_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
