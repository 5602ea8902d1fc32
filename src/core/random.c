/* The streams of random.h.  A normal is GSL's gsl_ran_gaussian_ziggurat of GSL's mt19937, bit
 * for bit, in a third of GSL's time (GSL spends 95 instructions a normal, mostly on two calls
 * through function pointers, the generator's bookkeeping and a branch on the sign).
 *
 * How: the stream's generator is MT19937 itself (Matsumoto and Nishimura's algorithm, seeded
 * as GSL's gsl_rng_mt19937 seeds it), handed to GSL as a gsl_rng_type of its own, so every GSL
 * sampler draws from it.  GSL's ziggurat, for a generator of 32 bits, turns one word k into
 * an attempt: step i = k & 0x7f, sign k & 0x80, j = (k >> 8) & 0xffffff; it accepts x = j·w_i
 * at once when j < k_i (98.8% of the attempts), and otherwise draws more words for the
 * wedge or the tail test.  The accept-at-once path is done here, inline; any other attempt
 * hands its word back to the generator and calls GSL, which draws that same word first and
 * finishes as it always does.  The table (k_i, w_i) is not copied from GSL's source: each
 * stream reads it from the GSL it is linked with, by feeding the ziggurat chosen words
 * (j < k_i exactly when GSL asks for no second word; w_i is what it returns for j = 1), and
 * then checks itself against GSL's own mt19937 and sampler; should a GSL ever draw
 * otherwise, that stream uses GSL's generator and sampler throughout
 * (tests/test_random.c compares millions of normals with GSL's). */
#include "attnscope/random.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum {
    TWISTER_WORDS = 624, /* MT19937's state */
    TWISTER_SHIFT = 397,
    ZIGGURAT_STEPS = 128,
    ZIGGURAT_POSITIONS = 1 << 24, /* j's range */
    SELF_CHECK_DRAWS = 1024,      /* ~12 of them past the accept-at-once path */
};

/* MT19937's state, its block of output words (tempered all at once, where the compiler can
   vectorise), and a word handed back: the next draw returns it first. */
typedef struct {
    uint32_t state[TWISTER_WORDS];
    uint32_t word[TWISTER_WORDS];
    int next; /* TWISTER_WORDS: the block is spent */
    bool held;
    uint32_t held_word;
} Twister;

static void twister_seed(void *state, unsigned long seed)
{
    Twister *t = state;
    if (seed == 0)
        seed = 4357; /* GSL's mt19937 maps 0 to its default seed */
    t->state[0] = (uint32_t)seed;
    for (uint32_t i = 1; i < TWISTER_WORDS; i++)
        t->state[i] = 1812433253u * (t->state[i - 1] ^ (t->state[i - 1] >> 30)) + i;
    t->next = TWISTER_WORDS;
    t->held = false;
}

static uint32_t twist(uint32_t upper, uint32_t lower, uint32_t shifted)
{
    uint32_t y = (upper & 0x80000000u) | (lower & 0x7fffffffu);
    return shifted ^ (y >> 1) ^ (-(y & 1u) & 0x9908b0dfu); /* no branch: y's bit is a coin */
}

static void twister_refill(Twister *t)
{
    uint32_t *w = t->state;
    int k = 0;
    for (; k < TWISTER_WORDS - TWISTER_SHIFT; k++)
        w[k] = twist(w[k], w[k + 1], w[k + TWISTER_SHIFT]);
    for (; k < TWISTER_WORDS - 1; k++)
        w[k] = twist(w[k], w[k + 1], w[k + TWISTER_SHIFT - TWISTER_WORDS]);
    w[k] = twist(w[k], w[0], w[TWISTER_SHIFT - 1]);
    for (k = 0; k < TWISTER_WORDS; k++) {
        uint32_t y = w[k];
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c5680u;
        y ^= (y << 15) & 0xefc60000u;
        t->word[k] = y ^ (y >> 18);
    }
    t->next = 0;
}

static inline uint32_t twister_next(Twister *t)
{
    if (t->next >= TWISTER_WORDS)
        twister_refill(t);
    return t->word[t->next++];
}

static unsigned long twister_get(void *state)
{
    Twister *t = state;
    if (t->held) {
        t->held = false;
        return t->held_word;
    }
    return twister_next(t);
}

static double twister_get_double(void *state)
{
    return twister_get(state) / 4294967296.0; /* as GSL's mt19937 */
}

static const gsl_rng_type TWISTER_TYPE = {"attnscope-mt19937", 0xffffffffUL, 0,
                                          sizeof(Twister),     twister_seed, twister_get,
                                          twister_get_double};

struct RandomStream {
    gsl_rng *rng;                    /* the stream, as GSL sees it */
    Twister *twister;                /* rng's state; NULL: GSL's mt19937 and sampler alone */
    uint32_t accept[ZIGGURAT_STEPS]; /* k_i: j < k_i is accepted at once */
    double position[ZIGGURAT_STEPS]; /* w_i: the attempt's x = j·w_i */
    Role role;                       /* of the stream the last call started */
    size_t filled[ROLES];            /* RandomStream_filled */
};

/* out[0..n) ← scale times the next n normals of gsl_ran_gaussian_ziggurat(s->rng, 1.0).  The
   block's position is kept in a local, and GSL's sign·σ·x (σ = 1: ±x exactly) flips x's sign
   bit without a branch, which half the signs would mispredict. */
static void fill_normals(RandomStream *s, double scale, double *out, size_t n)
{
    Twister *t = s->twister;
    if (!t) {
        for (size_t m = 0; m < n; m++)
            out[m] = scale * gsl_ran_gaussian_ziggurat(s->rng, 1.0);
        return;
    }
    int next = t->next;
    for (size_t m = 0; m < n; m++) {
        if (next >= TWISTER_WORDS) {
            twister_refill(t);
            next = 0;
        }
        uint32_t k = t->word[next++];
        uint32_t i = k & 0x7f, j = (k >> 8) & 0xffffff;
        if (j < s->accept[i]) {
            /* sign·x: x's sign bit flipped where k's sign bit is clear */
            double x = j * s->position[i];
            uint64_t bits;
            memcpy(&bits, &x, sizeof bits);
            bits ^= (uint64_t)(~k & 0x80u) << 56;
            memcpy(&x, &bits, sizeof x);
            out[m] = scale * x;
            continue;
        }
        t->next = next;
        t->held = true;
        t->held_word = k;
        out[m] = scale * gsl_ran_gaussian_ziggurat(s->rng, 1.0);
        next = t->next;
    }
    t->next = next;
}

/* One N(0, 1), as gsl_ran_gaussian_ziggurat(s->rng, 1.0) draws it. */
static double normal(RandomStream *s)
{
    double z;
    fill_normals(s, 1.0, &z, 1);
    return z;
}

/* A generator whose first word is chosen, then MT19937's, counting the words drawn. */
typedef struct {
    Twister rest;
    uint32_t first;
    int drawn;
} Probe;

static void probe_seed(void *state, unsigned long seed)
{
    twister_seed(&((Probe *)state)->rest, seed);
}

static unsigned long probe_get(void *state)
{
    Probe *p = state;
    return p->drawn++ ? twister_next(&p->rest) : p->first;
}

static double probe_get_double(void *state)
{
    return probe_get(state) / 4294967296.0;
}

static const gsl_rng_type PROBE_TYPE = {
    "attnscope-probe", 0xffffffffUL, 0, sizeof(Probe), probe_seed, probe_get, probe_get_double};

/* Whether GSL's ziggurat accepts the attempt (positive sign) of step i at position j without
   drawing again; *x: what it returned. */
static bool accepted_at_once(gsl_rng *probe, uint32_t i, uint32_t j, double *x)
{
    Probe *p = probe->state;
    p->first = j << 8 | 0x80 | i;
    p->drawn = 0;
    *x = gsl_ran_gaussian_ziggurat(probe, 1.0);
    return p->drawn == 1;
}

/* s's (k_i, w_i), read from GSL as the header says.  Returns false without memory. */
static bool read_ziggurat(RandomStream *s)
{
    gsl_rng *probe = gsl_rng_alloc(&PROBE_TYPE);
    if (!probe)
        return false;
    for (uint32_t i = 0; i < ZIGGURAT_STEPS; i++) {
        double x;
        uint32_t low = 0, high = ZIGGURAT_POSITIONS; /* k_i in [low, high] */
        while (low < high) {
            uint32_t mid = low + (high - low) / 2;
            if (accepted_at_once(probe, i, mid, &x))
                low = mid + 1;
            else
                high = mid;
        }
        s->accept[i] = low;
        /* With k_i <= 1 only j = 0 is accepted at once, and 0·w is 0 for any w. */
        s->position[i] = low >= 2 && accepted_at_once(probe, i, 1, &x) ? x : 0;
    }
    gsl_rng_free(probe);
    return true;
}

/* Whether s draws what GSL's mt19937 and sampler draw, over SELF_CHECK_DRAWS normals. */
static bool same_as_gsl(RandomStream *s)
{
    gsl_rng *reference = gsl_rng_alloc(gsl_rng_mt19937);
    if (!reference)
        return false;
    const unsigned long seed = 20261126;
    gsl_rng_set(reference, seed);
    gsl_rng_set(s->rng, seed);
    bool same = true;
    for (int n = 0; n < SELF_CHECK_DRAWS && same; n++) {
        double want = gsl_ran_gaussian_ziggurat(reference, 1.0), got = normal(s);
        same = want == got && signbit(want) == signbit(got);
    }
    gsl_rng_free(reference);
    return same;
}

RandomStream *RandomStream_new(void)
{
    RandomStream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->rng = gsl_rng_alloc(&TWISTER_TYPE);
    if (s->rng) {
        s->twister = s->rng->state;
        if (!read_ziggurat(s) || !same_as_gsl(s)) {
            gsl_rng_free(s->rng);
            s->twister = NULL;
            s->rng = gsl_rng_alloc(gsl_rng_mt19937);
        }
    }
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

bool RandomStream_fast(const RandomStream *s)
{
    return s->twister != NULL;
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

/* s at the start of stream (seed, layer, role). */
static void start(RandomStream *s, uint64_t seed, int layer, Role role)
{
    gsl_rng_set(s->rng, Random_stream_seed(seed, layer, role));
    s->role = role;
}

void RandomStream_gaussian(RandomStream *s, uint64_t seed, int layer, Role role, double scale,
                           double *out, size_t n)
{
    start(s, seed, layer, role);
    RandomStream_gaussian_more(s, scale, out, n);
}

void RandomStream_gaussian_more(RandomStream *s, double scale, double *out, size_t n)
{
    fill_normals(s, scale, out, n);
    s->filled[s->role] += n;
}

size_t RandomStream_filled(const RandomStream *s, Role role)
{
    return s->filled[role];
}

void RandomStream_truncated_gaussian(RandomStream *s, uint64_t seed, int layer, Role role,
                                     double scale, double cut, double *out, size_t n)
{
    start(s, seed, layer, role);
    s->filled[role] += n;
    for (size_t i = 0; i < n; i++) {
        /* Rejection: a normal beyond ±cut is drawn again, which leaves exactly the normal's
           law conditioned on [−cut, cut] (0.27% of the draws at cut 3). */
        double z;
        do
            z = normal(s);
        while (fabs(z) > cut);
        out[i] = scale * z;
    }
}

void RandomStream_uniform_integers(RandomStream *s, uint64_t seed, int layer, Role role,
                                   unsigned long below, double *out, size_t n)
{
    start(s, seed, layer, role);
    s->filled[role] += n;
    for (size_t i = 0; i < n; i++)
        out[i] = (double)gsl_rng_uniform_int(s->rng, below);
}
