/* Reproducible random streams (docs/model.md §1.6).
 *
 * Every random matrix comes from its own stream, keyed by (seed, layer, role): raising the
 * depth keeps the earlier layers, and toggling gap removal, LayerNorm, mask or skip reuses
 * the same weights.  A stream is GSL's mt19937 seeded with a splitmix64 hash of the key;
 * normals are gsl_ran_gaussian_ziggurat's, filled in storage order (random.c draws the same
 * numbers faster).  GSL stays inside this module (its cblas header collides with OpenBLAS's).
 */
#ifndef ATTNSCOPE_RANDOM_H
#define ATTNSCOPE_RANDOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The heads of a layer share the query, key, value and markov streams: head h takes the
   h-th block of columns of one d×d matrix (the h-th T×T block of the markov draw), so one
   head is today's layer exactly and H heads reuse the same numbers.  New matrices get new
   roles, appended so that the existing streams keep their seeds. */
typedef enum {
    ROLE_INPUT,
    ROLE_QUERY,
    ROLE_KEY,
    ROLE_VALUE,
    ROLE_MARKOV,
    ROLE_OUTPUT,
    ROLE_MLP_IN,
    ROLE_MLP_OUT,
    ROLE_MLP_UP,    /* a gated MLP's up projection (its gate is ROLE_MLP_IN's W1) */
    ROLE_TOKEN_IDS, /* the embedding input's T token ids (layer 0) */
    ROLE_EMBEDDING, /* the embedding table's row k, drawn from stream (seed, k, role) */
    ROLE_POSITION,  /* the learned positions' row p, drawn from stream (seed, p, role) */
    ROLE_SINK,      /* the heads' sink logits' spread (--sink-std), head h the h-th number */
    ROLES           /* how many: a new role goes above */
} Role;

/* Names the generator and sampler that a seed means, for the JSON document. */
#define RANDOM_ALGORITHM "mt19937+ziggurat, splitmix64(seed, layer, role)"

typedef struct RandomStream RandomStream;

RandomStream *RandomStream_new(void);
void RandomStream_free(RandomStream *s);

/* Whether s draws its normals by random.c's own path (false: through GSL's sampler alone,
   where the GSL linked in did not draw as the one random.c was checked against). */
bool RandomStream_fast(const RandomStream *s);

/* The 32-bit generator seed of the stream (seed, layer, role). */
uint32_t Random_stream_seed(uint64_t seed, int layer, Role role);

/* Fills out[0..n) with i.i.d. N(0, scale²) from the start of stream (seed, layer, role). */
void RandomStream_gaussian(RandomStream *s, uint64_t seed, int layer, Role role, double scale,
                           double *out, size_t n);

/* Fills out[0..n) with i.i.d. N(0, scale²) cut at ±cut·scale from the start of stream
   (seed, layer, role): the stream's normals beyond the cut are drawn again (rejection). */
void RandomStream_truncated_gaussian(RandomStream *s, uint64_t seed, int layer, Role role,
                                     double scale, double cut, double *out, size_t n);

/* Fills out[0..n) with i.i.d. integers uniform on 0..below−1 (gsl_rng_uniform_int, exact),
   as doubles, from the start of stream (seed, layer, role); below <= 2^32. */
void RandomStream_uniform_integers(RandomStream *s, uint64_t seed, int layer, Role role,
                                   unsigned long below, double *out, size_t n);

/* Fills out[0..n) with the next n numbers of the stream the last call filled from. */
void RandomStream_gaussian_more(RandomStream *s, double scale, double *out, size_t n);

/* How many numbers s has filled from role's streams since it was made (a continuation counts
   for the role it continues): the tests count what a run draws, e.g. each layer's W^Q once. */
size_t RandomStream_filled(const RandomStream *s, Role role);

#endif
