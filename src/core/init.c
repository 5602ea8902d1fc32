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
        return (MatrixInit){xavier(c, m), false, 1.0};
    case INIT_ORTHOGONAL:
        return (MatrixInit){1.0, true, 1.0};
    case INIT_GPT2: /* residual projections scaled by 1/√(2L): two per block */
        return (MatrixInit){output ? 0.02 / sqrt(2.0 * c->depth) : 0.02, false, 1.0};
    case INIT_SMALL_INIT:
        return (MatrixInit){sqrt(2.0 / (5.0 * d)), false, 1.0};
    case INIT_MUP: /* zero queries: uniform attention at initialisation */
        if (m == MATRIX_QUERY)
            return (MatrixInit){0.0, false, 1.0};
        return (MatrixInit){1.0 / sqrt(m == MATRIX_MLP_OUT ? hidden : d), false, 1.0};
    case INIT_DEEPNORM: { /* encoder: β = (8N)^(−1/4) on values, projections and the MLP */
        double beta = pow(8.0 * c->depth, -0.25);
        bool scaled = m != MATRIX_QUERY && m != MATRIX_KEY;
        return (MatrixInit){xavier(c, m) * (scaled ? beta : 1.0), false, 1.0};
    }
    case INIT_CUTTING_SKIP:
        /* W^V = c·U, W^O = c·Vᵀ with U, V Haar, so W_VO = c²·(orthogonal); without an output
           projection W^V carries both factors.  The MLP is the normal scheme's. */
        if (m == MATRIX_QUERY || m == MATRIX_KEY)
            return (MatrixInit){NAN, false, 1.0};
        if (m == MATRIX_VALUE)
            return (MatrixInit){1.0, true,
                                c->output == OUTPUT_IDENTITY ? c->init_c * c->init_c : c->init_c};
        if (m == MATRIX_OUTPUT)
            return (MatrixInit){1.0, true, c->init_c};
        break;
    }
    /* normal: today's model (σ_qk, N(0, 1) values, N(0, 1/fan-in) projections). */
    switch (m) {
    case MATRIX_QUERY:
    case MATRIX_KEY:
        return (MatrixInit){c->sigma_qk, false, 1.0};
    case MATRIX_VALUE:
        return (MatrixInit){1.0, false, 1.0};
    case MATRIX_OUTPUT:
        return (MatrixInit){1.0 / sqrt(d), c->output == OUTPUT_ORTHOGONAL, 1.0};
    case MATRIX_MLP_IN:
        return (MatrixInit){1.0 / sqrt(d), false, 1.0};
    case MATRIX_MLP_OUT:
    case MATRICES:
        break;
    }
    return (MatrixInit){1.0 / sqrt(hidden), false, 1.0};
}

int Init_draw(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer, Matrix m,
              double *out)
{
    int rows, cols;
    Init_shape(c, m, &rows, &cols);
    MatrixInit how = Init_matrix(c, m);
    if (isnan(how.std))
        return -1;
    size_t n = (size_t)rows * cols;
    RandomStream_gaussian(random, seed, layer, MATRIX_ROLES[m], how.std, out, n);
    /* An orthogonal W^O is orthogonal under every scheme that draws one. */
    if (how.orthogonal || (m == MATRIX_OUTPUT && c->output == OUTPUT_ORTHOGONAL)) {
        int info = Linalg_orthonormalise(la, rows, cols, out);
        if (info || how.gain == 1.0)
            return info;
        for (size_t i = 0; i < n; i++)
            out[i] *= how.gain;
    }
    return 0;
}

static bool factorised(const Config *c)
{
    return c->init == INIT_CUTTING_SKIP;
}

size_t Init_scratch_doubles(const Config *c)
{
    size_t d = (size_t)c->width;
    return factorised(c) ? 3 * d * d + d : 0;
}

int Init_draw_query_key(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer,
                        double *wq, double *wk, double *scratch)
{
    if (!factorised(c)) {
        int info = Init_draw(random, la, c, seed, layer, MATRIX_QUERY, wq);
        return info ? info : Init_draw(random, la, c, seed, layer, MATRIX_KEY, wk);
    }
    int d = c->width, dh = Config_head_width(c);
    size_t dd = (size_t)d * d;
    double *z = scratch, *u = scratch + dd, *vt = scratch + 2 * dd, *sigma = scratch + 3 * dd;
    for (int h = 0; h < c->heads; h++) {
        /* One stream per layer: head h continues where head h − 1 stopped. */
        if (h == 0)
            RandomStream_gaussian(random, seed, layer, ROLE_QUERY, c->init_alpha / sqrt((double)d),
                                  z, dd);
        else
            RandomStream_gaussian_more(random, c->init_alpha / sqrt((double)d), z, dd);
        for (int i = 0; i < d; i++)
            z[i + (size_t)i * d] += c->init_beta;
        int info = Linalg_svd(la, d, z, sigma, u, vt);
        if (info)
            return info;
        for (int j = 0; j < dh; j++) {
            double root = sqrt(sigma[j]);
            double *q = wq + (size_t)(h * dh + j) * d, *k = wk + (size_t)(h * dh + j) * d;
            for (int i = 0; i < d; i++) {
                q[i] = u[i + (size_t)j * d] * root;
                k[i] = vt[j + (size_t)i * d] * root;
            }
        }
    }
    return 0;
}

double Init_logit_scale(const Config *c)
{
    if (c->init == INIT_CUTTING_SKIP)
        return 1.0;
    int dh = Config_head_width(c);
    return c->logit_scale == LOGIT_SCALE_LINEAR ? 1.0 / dh : 1.0 / sqrt((double)dh);
}

double Init_effective_sigma_qk(const Config *c)
{
    if (c->init == INIT_ORTHOGONAL) /* orthonormal columns: entries of size 1/√d */
        return 1.0 / sqrt((double)c->width);
    return sqrt(Init_matrix(c, MATRIX_QUERY).std * Init_matrix(c, MATRIX_KEY).std);
}
