/* One layer's buffers and weights for the tests that drive the layer step themselves
 * (test_qk, test_gqa, test_gated_mlp): every weight the step may read, allocated for c,
 * drawn on request from c's seed as Model_run draws layer 1.  Needs model_fixture.h's la. */
#ifndef ATTNSCOPE_TESTS_LAYER_FIXTURE_H
#define ATTNSCOPE_TESTS_LAYER_FIXTURE_H

#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/random.h"
#include "model_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    LayerBuffers b;
    LayerWeights w;
    double *scratch; /* Layer_input's T×d, then Layer_draw's Init_scratch_doubles */
    RandomStream *random;
} Layer;

enum { LAYER_WEIGHTS = 8 };

/* Where each weight of l lives, one list for allocation and release. */
static void layer_weight_slots(Layer *l, double **slots[LAYER_WEIGHTS])
{
    double **all[LAYER_WEIGHTS] = {&l->w.query,  &l->w.key,     &l->w.value,  &l->w.output,
                                   &l->w.mlp_in, &l->w.mlp_out, &l->w.mlp_up, &l->w.sink};
    memcpy(slots, all, sizeof all);
}

static void layer_new(Layer *l, const Config *c)
{
    memset(l, 0, sizeof *l);
    LayerBuffer list[LAYER_BUFFERS];
    Layer_buffers(c, &l->b, false, list);
    for (int i = 0; i < LAYER_BUFFERS; i++)
        *list[i].buffer = list[i].doubles ? calloc(list[i].doubles, sizeof(double)) : NULL;
    l->b.la = la;
    size_t dd = (size_t)c->width * c->width, nd = (size_t)Config_mlp_hidden(c) * c->width;
    size_t p = Init_doubles(c, MATRIX_QUERY); /* W^Q, W^K, W^V d×H·d_h, W^O H·d_h×d */
    size_t sizes[LAYER_WEIGHTS] = {p, p, p, p, nd, nd, nd, (size_t)c->heads};
    double **slots[LAYER_WEIGHTS];
    layer_weight_slots(l, slots);
    for (int i = 0; i < LAYER_WEIGHTS; i++) {
        *slots[i] = calloc(sizes[i] ? sizes[i] : 1, sizeof(double));
        assert_non_null(*slots[i]);
    }
    /* Layer_input's scratch is T×d, more than the weights' when T > d (embedding input). */
    size_t scratch = Init_scratch_doubles(c) + dd, td = (size_t)c->tokens * c->width;
    l->scratch = calloc(scratch > td ? scratch : td, sizeof(double));
    l->random = RandomStream_new();
    assert_non_null(l->scratch);
    assert_non_null(l->random);
}

/* X0 and every weight of layer 1 of c's seed. */
static inline void layer_draw_all(Layer *l, const Config *c)
{
    assert_int_equal(Layer_input(l->random, la, c, c->seed, l->b.x, l->scratch), 0);
    assert_int_equal(Layer_draw(l->random, la, c, c->seed, 1, LAYER_DRAW_ALL, &l->w, l->scratch),
                     0);
}

static void layer_free(Layer *l, const Config *c)
{
    LayerBuffer list[LAYER_BUFFERS];
    Layer_buffers(c, &l->b, false, list);
    for (int i = 0; i < LAYER_BUFFERS; i++)
        free(*list[i].buffer);
    double **slots[LAYER_WEIGHTS];
    layer_weight_slots(l, slots);
    for (int i = 0; i < LAYER_WEIGHTS; i++)
        free(*slots[i]);
    free(l->scratch);
    RandomStream_free(l->random);
}

/* X ← the layer step's X_1 (layer 1 of c on l's buffers), which must be finite. */
static inline void layer_step_once(const Config *c, Layer *l)
{
    LayerStep s = {.config = c, .layer = 1, .weights = &l->w, .gap = GAP_OFF};
    LayerOutcome outcome;
    double log_scale = 0;
    assert_int_equal(Layer_step(&s, &l->b, &outcome, &log_scale), 0);
    assert_int_equal(outcome, LAYER_DONE);
}

/* The layer written loop by loop in a test: out (T×d) from x (T×d) and l's weights. */
typedef void ReferenceLayer(const Config *c, const Layer *l, const double *x, double *out);

/* The layer step's X_1 from l's X0 against reference's from the same X0 and weights, entry by
   entry within `tolerance` of the largest entry; `what` names the case in a failure. */
static inline void assert_step_matches(const Config *c, Layer *l, ReferenceLayer *reference,
                                       double tolerance, const char *what)
{
    size_t td = (size_t)c->tokens * c->width;
    double *x0 = malloc(sizeof(double) * td), *want = malloc(sizeof(double) * td);
    assert_true(x0 && want);
    memcpy(x0, l->b.x, sizeof(double) * td);
    reference(c, l, x0, want);
    layer_step_once(c, l);
    double scale = 0;
    for (size_t i = 0; i < td; i++)
        scale = fmax(scale, fabs(want[i]));
    for (size_t i = 0; i < td; i++)
        if (fabs(l->b.x[i] - want[i]) > tolerance * scale)
            fail_msg("%s: X1[%zu] = %.17g, reference %.17g", what, i, l->b.x[i], want[i]);
    free(x0);
    free(want);
}

/* out (T×n) += x (T×k) · W (k×n), loop by loop, column-major; W's entry (m, e) is
   w[m·row + e·col]: a matrix as drawn (row 1, col its rows) or one stored transposed (row its
   columns, col 1). */
static inline void reference_product(int T, int k, int n, const double *x, const double *w,
                                     size_t row, size_t col, double *out)
{
    for (int i = 0; i < T; i++)
        for (int e = 0; e < n; e++)
            for (int m = 0; m < k; m++)
                out[i + (size_t)e * T] += x[i + (size_t)m * T] * w[m * row + e * col];
}

#endif
