#include "attnscope/random.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

struct RandomStream {
    gsl_rng *rng;
};

RandomStream *RandomStream_new(void)
{
    RandomStream *s = malloc(sizeof *s);
    if (!s)
        return NULL;
    s->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!s->rng) {
        free(s);
        return NULL;
    }
    return s;
}

void RandomStream_free(RandomStream *s)
{
    if (!s)
        return;
    gsl_rng_free(s->rng);
    free(s);
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

uint32_t Random_stream_seed(uint64_t seed, int layer, Role role)
{
    uint64_t h = splitmix64(seed);
    h = splitmix64(h ^ (uint64_t)(uint32_t)layer);
    h = splitmix64(h ^ ((uint64_t)role << 32));
    uint32_t s = (uint32_t)(h ^ (h >> 32));
    /* mt19937 maps seed 0 to its default seed 4357: keep streams distinct from that one. */
    return s ? s : 1u;
}

void RandomStream_gaussian(RandomStream *s, uint64_t seed, int layer, Role role, double scale,
                           double *out, size_t n)
{
    gsl_rng_set(s->rng, Random_stream_seed(seed, layer, role));
    for (size_t i = 0; i < n; i++)
        out[i] = scale * gsl_ran_gaussian_ziggurat(s->rng, 1.0);
}

void RandomStream_gaussian_more(RandomStream *s, double scale, double *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = scale * gsl_ran_gaussian_ziggurat(s->rng, 1.0);
}

void RandomStream_truncated_gaussian(RandomStream *s, uint64_t seed, int layer, Role role,
                                     double scale, double cut, double *out, size_t n)
{
    gsl_rng_set(s->rng, Random_stream_seed(seed, layer, role));
    for (size_t i = 0; i < n; i++) {
        /* Rejection: a normal beyond ±cut is drawn again, which leaves exactly the normal's
           law conditioned on [−cut, cut] (0.27% of the draws at cut 3). */
        double z;
        do
            z = gsl_ran_gaussian_ziggurat(s->rng, 1.0);
        while (fabs(z) > cut);
        out[i] = scale * z;
    }
}

void RandomStream_uniform_integers(RandomStream *s, uint64_t seed, int layer, Role role,
                                   unsigned long below, double *out, size_t n)
{
    gsl_rng_set(s->rng, Random_stream_seed(seed, layer, role));
    for (size_t i = 0; i < n; i++)
        out[i] = (double)gsl_rng_uniform_int(s->rng, below);
}
