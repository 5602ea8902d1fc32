/* The streams of random.h against GSL itself: every number random.c draws by its own path
 * (MT19937 and the ziggurat's accept-at-once step) is the one GSL's gsl_rng_mt19937 and
 * gsl_ran_gaussian_ziggurat draw from the same seed, bit for bit and sign for sign (a −0
 * included), over millions of normals: about 1.2% of them leave the accept-at-once step
 * (the wedges and the tail), so every path is taken tens of thousands of times. */
#include "testing.h"

#include "attnscope/random.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK = 1 << 16 };

/* The same double, −0 told from +0. */
static bool identical(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* The first index where got and want differ, or −1. */
static long first_difference(const double *got, const double *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!identical(got[i], want[i]))
            return (long)i;
    return -1;
}

static void assert_same(const double *got, const double *want, size_t n, const char *what,
                        uint32_t seed)
{
    long at = first_difference(got, want, n);
    if (at >= 0)
        fail_msg("%s, stream seed %u: draw %ld is %.17g, GSL draws %.17g", what, seed, at, got[at],
                 want[at]);
}

/* Ten million normals from five streams (keys of every role the model draws), in chunks that
   continue the stream (RandomStream_gaussian_more), against GSL's. */
static void test_normals_are_gsl_s(void **state)
{
    (void)state;
    RandomStream *s = RandomStream_new();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    double *got = malloc(sizeof(double) * CHUNK), *want = malloc(sizeof(double) * CHUNK);
    assert_true(s && rng && got && want);
    assert_true(RandomStream_fast(s)); /* else this test would compare GSL with itself */
    const Role roles[] = {ROLE_INPUT, ROLE_QUERY, ROLE_KEY, ROLE_VALUE, ROLE_MARKOV};
    long tail = 0;
    for (int r = 0; r < 5; r++) {
        uint32_t seed = Random_stream_seed(1 + (uint64_t)r, r + 1, roles[r]);
        gsl_rng_set(rng, seed);
        const double scale = r == 2 ? -0.37 : 1.0 / (r + 1); /* a negative scale flips signs */
        for (int chunk = 0; chunk < 30; chunk++) {
            if (chunk == 0)
                RandomStream_gaussian(s, 1 + (uint64_t)r, r + 1, roles[r], scale, got, CHUNK);
            else
                RandomStream_gaussian_more(s, scale, got, CHUNK);
            for (int i = 0; i < CHUNK; i++) {
                double z = gsl_ran_gaussian_ziggurat(rng, 1.0);
                want[i] = scale * z;
                tail += fabs(z) > 3.45; /* beyond the last step: drawn by the tail's path */
            }
            assert_same(got, want, CHUNK, "normal", seed);
        }
    }
    assert_true(tail > 1000); /* P(|z| > 3.45) = 5.6e-4 of 9.8e6 draws: ~5500 */
    gsl_rng_free(rng);
    RandomStream_free(s);
    free(got);
    free(want);
}

/* Truncated normals (the rejection loop around the same draws) and uniform integers. */
static void test_truncated_and_integers_are_gsl_s(void **state)
{
    (void)state;
    RandomStream *s = RandomStream_new();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    double *got = malloc(sizeof(double) * CHUNK), *want = malloc(sizeof(double) * CHUNK);
    assert_true(s && rng && got && want);
    uint32_t seed = Random_stream_seed(7, 3, ROLE_EMBEDDING);
    RandomStream_truncated_gaussian(s, 7, 3, ROLE_EMBEDDING, 0.02, 2.0, got, CHUNK);
    gsl_rng_set(rng, seed);
    for (int i = 0; i < CHUNK; i++) {
        double z;
        do
            z = gsl_ran_gaussian_ziggurat(rng, 1.0);
        while (fabs(z) > 2.0);
        want[i] = 0.02 * z;
    }
    assert_same(got, want, CHUNK, "truncated normal", seed);
    seed = Random_stream_seed(7, 0, ROLE_TOKEN_IDS);
    RandomStream_uniform_integers(s, 7, 0, ROLE_TOKEN_IDS, 50257, got, CHUNK);
    gsl_rng_set(rng, seed);
    for (int i = 0; i < CHUNK; i++)
        want[i] = (double)gsl_rng_uniform_int(rng, 50257);
    assert_same(got, want, CHUNK, "uniform integer", seed);
    gsl_rng_free(rng);
    RandomStream_free(s);
    free(got);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normals_are_gsl_s),
        cmocka_unit_test(test_truncated_and_integers_are_gsl_s),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
