#include "attnscope/init.h"

#include <math.h>

static const Role MATRIX_ROLES[MATRICES] = {ROLE_QUERY,  ROLE_KEY,    ROLE_VALUE,
                                            ROLE_OUTPUT, ROLE_MLP_IN, ROLE_MLP_OUT};

void Init_shape(const Config *c, Matrix m, int *rows, int *cols)
{
    bool mlp = m == MATRIX_MLP_IN || m == MATRIX_MLP_OUT;
    *rows = mlp ? c->mlp_ratio * c->width : c->width;
    *cols = c->width;
}

/* xavier_normal (Glorot & Bengio 2010): √(2/(fan-in + fan-out)). */
static double xavier(const Config *c, Matrix m)
{
    int rows, cols;
    Init_shape(c, m, &rows, &cols);
    return sqrt(2.0 / (rows + cols));
}

MatrixInit Init_matrix(const Config *c, Matrix m)
{
    double d = c->width, hidden = (double)c->mlp_ratio * c->width;
    bool output = m == MATRIX_OUTPUT || m == MATRIX_MLP_OUT;
    switch (c->init) {
    case INIT_NORMAL:
        break;
    case INIT_XAVIER:
        return (MatrixInit){xavier(c, m), false};
    case INIT_ORTHOGONAL:
        return (MatrixInit){1.0, true};
    case INIT_GPT2: /* residual projections scaled by 1/√(2L): two per block */
        return (MatrixInit){output ? 0.02 / sqrt(2.0 * c->depth) : 0.02, false};
    case INIT_SMALL_INIT:
        return (MatrixInit){sqrt(2.0 / (5.0 * d)), false};
    case INIT_MUP: /* zero queries: uniform attention at initialisation */
        if (m == MATRIX_QUERY)
            return (MatrixInit){0.0, false};
        return (MatrixInit){1.0 / sqrt(m == MATRIX_MLP_OUT ? hidden : d), false};
    case INIT_DEEPNORM: { /* encoder: β = (8N)^(−1/4) on values, projections and the MLP */
        double beta = pow(8.0 * c->depth, -0.25);
        bool scaled = m != MATRIX_QUERY && m != MATRIX_KEY;
        return (MatrixInit){xavier(c, m) * (scaled ? beta : 1.0), false};
    }
    }
    /* normal: today's model (σ_qk, N(0, 1) values, N(0, 1/fan-in) projections). */
    switch (m) {
    case MATRIX_QUERY:
    case MATRIX_KEY:
        return (MatrixInit){c->sigma_qk, false};
    case MATRIX_VALUE:
        return (MatrixInit){1.0, false};
    case MATRIX_OUTPUT:
        return (MatrixInit){1.0 / sqrt(d), c->output == OUTPUT_ORTHOGONAL};
    case MATRIX_MLP_IN:
        return (MatrixInit){1.0 / sqrt(d), false};
    case MATRIX_MLP_OUT:
    case MATRICES:
        break;
    }
    return (MatrixInit){1.0 / sqrt(hidden), false};
}

int Init_draw(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer, Matrix m,
              double *out)
{
    int rows, cols;
    Init_shape(c, m, &rows, &cols);
    MatrixInit how = Init_matrix(c, m);
    RandomStream_gaussian(random, seed, layer, MATRIX_ROLES[m], how.std, out, (size_t)rows * cols);
    /* An orthogonal W^O is orthogonal under every scheme that draws one. */
    if (how.orthogonal || (m == MATRIX_OUTPUT && c->output == OUTPUT_ORTHOGONAL))
        return Linalg_orthonormalise(la, rows, cols, out);
    return 0;
}

double Init_effective_sigma_qk(const Config *c)
{
    if (c->init == INIT_ORTHOGONAL) /* orthonormal columns: entries of size 1/√d */
        return 1.0 / sqrt((double)c->width);
    return sqrt(Init_matrix(c, MATRIX_QUERY).std * Init_matrix(c, MATRIX_KEY).std);
}
