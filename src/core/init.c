#include "attnscope/init.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const Role MATRIX_ROLES[MATRICES] = {ROLE_QUERY,  ROLE_KEY,     ROLE_VALUE, ROLE_OUTPUT,
                                            ROLE_MLP_IN, ROLE_MLP_OUT, ROLE_MLP_UP};

/* W^Q, W^K, W^V are d×H·d_h (grouped keys and values use the first G·d_h columns of theirs),
   W^O H·d_h×d, the MLP's hidden×d: H·d_h = d unless --head-dim sets d_h. */
void Init_shape(const Config *c, Matrix m, int *rows, int *cols)
{
    bool mlp = m == MATRIX_MLP_IN || m == MATRIX_MLP_OUT || m == MATRIX_MLP_UP;
    int heads = Config_heads_width(c);
    *rows = mlp ? Config_mlp_hidden(c) : m == MATRIX_OUTPUT ? heads : c->width;
    *cols = mlp || m == MATRIX_OUTPUT ? c->width : heads;
}

size_t Init_doubles(const Config *c, Matrix m)
{
    int rows, cols;
    Init_shape(c, m, &rows, &cols);
    return (size_t)rows * cols;
}

/* xavier_normal (Glorot & Bengio 2010): √(2/(fan-in + fan-out)). */
static double xavier(const Config *c, Matrix m)
{
    int rows, cols;
    Init_shape(c, m, &rows, &cols);
    return sqrt(2.0 / (rows + cols));
}

static bool factorised(InitScheme scheme)
{
    return scheme == INIT_CUTTING_SKIP || scheme == INIT_MIMETIC;
}

/* How `scheme` draws matrix m. */
static MatrixInit scheme_matrix(const Config *c, InitScheme scheme, Matrix m)
{
    double d = c->width, hidden = Config_mlp_hidden(c), heads = Config_heads_width(c);
    switch (scheme) {
    case INIT_NORMAL:
        break;
    case INIT_XAVIER:
        return (MatrixInit){xavier(c, m), false, 1.0, 0.0, 0.0};
    case INIT_ORTHOGONAL:
        return (MatrixInit){1.0, true, 1.0, 0.0, 0.0};
    case INIT_GPT2: /* residual projections ÷√(2L) (Init_depth_divisor): two per block */
        return (MatrixInit){c->init_std, false, 1.0, 0.0, 0.0};
    case INIT_TRUNC_NORMAL: /* OLMo-core: trunc_normal_(std=S, a=−3S, b=3S) */
        return (MatrixInit){c->init_std, false, 1.0, 0.0, INIT_TRUNCATION};
    case INIT_SMALL_INIT:
        return (MatrixInit){sqrt(2.0 / (5.0 * d)), false, 1.0, 0.0, 0.0};
    case INIT_MUP: /* zero queries: uniform attention at initialisation; 1/√(fan-in) */
        if (m == MATRIX_QUERY)
            return (MatrixInit){0.0, false, 1.0, 0.0, 0.0};
        return (MatrixInit){1.0 / sqrt(m == MATRIX_MLP_OUT  ? hidden
                                       : m == MATRIX_OUTPUT ? heads
                                                            : d),
                            false, 1.0, 0.0, 0.0};
    case INIT_DEEPNORM: { /* encoder: β = (8N)^(−1/4) on values, projections and the MLP */
        double beta = pow(8.0 * c->depth, -0.25);
        bool scaled = m != MATRIX_QUERY && m != MATRIX_KEY;
        return (MatrixInit){xavier(c, m) * (scaled ? beta : 1.0), false, 1.0, 0.0, 0.0};
    }
    case INIT_CUTTING_SKIP:
        /* W^V = c·U, W^O = c·Vᵀ with U, V Haar, so W_VO = c²·(orthogonal); without an output
           projection W^V carries both factors.  The MLP is the normal scheme's. */
        if (m == MATRIX_QUERY || m == MATRIX_KEY)
            return (MatrixInit){NAN, false, 1.0, 0.0, 0.0};
        if (m == MATRIX_VALUE)
            return (MatrixInit){1.0, true,
                                c->output == OUTPUT_IDENTITY ? c->init_c * c->init_c : c->init_c,
                                0.0, 0.0};
        if (m == MATRIX_OUTPUT)
            return (MatrixInit){1.0, true, c->init_c, 0.0, 0.0};
        break;
    case INIT_MIMETIC:
        /* Without an output projection W^V is the whole W_VO = α₂Z₂ − β₂I, drawn directly: no
           factor to split it into.  The MLP is the normal scheme's (the paper initialises
           the attention only). */
        if (m == MATRIX_VALUE && c->output == OUTPUT_IDENTITY)
            return (MatrixInit){c->init_vo_alpha / sqrt(d), false, 1.0, -c->init_vo_beta, 0.0};
        if (m != MATRIX_MLP_IN && m != MATRIX_MLP_OUT && m != MATRIX_MLP_UP)
            return (MatrixInit){NAN, false, 1.0, 0.0, 0.0};
        break;
    }
    /* normal: today's model (σ_qk, N(0, 1) values, N(0, 1/fan-in) projections). */
    switch (m) {
    case MATRIX_QUERY:
    case MATRIX_KEY:
        return (MatrixInit){c->sigma_qk, false, 1.0, 0.0, 0.0};
    case MATRIX_VALUE:
        return (MatrixInit){1.0, false, 1.0, 0.0, 0.0};
    case MATRIX_OUTPUT: /* 1/√(fan-in), the heads' width H·d_h */
        return (MatrixInit){1.0 / sqrt(heads), c->output == OUTPUT_ORTHOGONAL, 1.0, 0.0, 0.0};
    case MATRIX_MLP_IN:
    case MATRIX_MLP_UP: /* LeCun normal on the fan-in d, as W1 */
        return (MatrixInit){1.0 / sqrt(d), false, 1.0, 0.0, 0.0};
    case MATRIX_MLP_OUT:
    case MATRICES:
        break;
    }
    return (MatrixInit){1.0 / sqrt(hidden), false, 1.0, 0.0, 0.0};
}

static MatrixInitChoice matrix_choice(const Config *c, Matrix m)
{
    switch (m) {
    case MATRIX_QUERY:
        return c->init_query;
    case MATRIX_KEY:
        return c->init_key;
    case MATRIX_VALUE:
        return c->init_value;
    case MATRIX_OUTPUT:
        return c->init_output;
    case MATRIX_MLP_IN:
    case MATRIX_MLP_OUT:
    case MATRIX_MLP_UP:
    case MATRICES:
        break;
    }
    return c->init_mlp;
}

MatrixInit Init_matrix(const Config *c, Matrix m)
{
    MatrixInit how;
    switch (matrix_choice(c, m)) {
    case MATRIX_INIT_NORMAL:
        how = scheme_matrix(c, INIT_NORMAL, m);
        break;
    case MATRIX_INIT_XAVIER:
        how = scheme_matrix(c, INIT_XAVIER, m);
        break;
    case MATRIX_INIT_ORTHOGONAL:
        how = scheme_matrix(c, INIT_ORTHOGONAL, m);
        break;
    case MATRIX_INIT_IDENTITY: /* already orthogonal: nothing to orthonormalise */
        return (MatrixInit){0.0, false, 1.0, 1.0, 0.0};
    case MATRIX_INIT_ZERO:
        return (MatrixInit){0.0, false, 1.0, 0.0, 0.0};
    case MATRIX_INIT_SCHEME:
    default:
        how = scheme_matrix(c, c->init, m);
        break;
    }
    /* An orthogonal W^O is orthogonal under every scheme that draws one i.i.d. */
    if (m == MATRIX_OUTPUT && c->output == OUTPUT_ORTHOGONAL && !isnan(how.std))
        how.orthogonal = true;
    return how;
}

/* For each of `parts` blocks h, the SVD U S Vᵀ of M_h = (α/√d)·G_h + shift·I, G_h the h-th
   d² normals of the role's stream (one stream per layer: block h continues where h − 1
   stopped), and its `width` leading triplets: left's columns h·width.. = U_h √S_h, right's =
   V_h √S_h (as columns) or √S_h V_hᵀ (as rows of a parts·width×d matrix, right_as_rows).
   Either may be NULL.  Returns LAPACK's status. */
static int factorise(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer,
                     Role role, double alpha, double shift, int parts, int width, double *left,
                     double *right, bool right_as_rows, double *scratch)
{
    int d = c->width;
    size_t dd = (size_t)d * d;
    double *z = scratch, *u = scratch + dd, *vt = scratch + 2 * dd, *sigma = scratch + 3 * dd;
    for (int h = 0; h < parts; h++) {
        if (h == 0)
            RandomStream_gaussian(random, seed, layer, role, alpha / sqrt((double)d), z, dd);
        else
            RandomStream_gaussian_more(random, alpha / sqrt((double)d), z, dd);
        for (int i = 0; i < d; i++)
            z[i + (size_t)i * d] += shift;
        int info = Linalg_svd(la, d, z, sigma, u, vt);
        if (info)
            return info;
        for (int j = 0; j < width; j++) {
            double root = sqrt(sigma[j]);
            size_t column = (size_t)h * width + j;
            for (int i = 0; i < d; i++) {
                if (left)
                    left[i + column * d] = u[i + (size_t)j * d] * root;
                if (right && right_as_rows)
                    right[column + (size_t)i * parts * width] = vt[j + (size_t)i * d] * root;
                else if (right)
                    right[i + column * d] = vt[j + (size_t)i * d] * root;
            }
        }
    }
    return 0;
}

/* W^Q and W^K: per head, factors of its own α₁Z₁_h + β₁I. */
static int factorise_query_key(RandomStream *random, Linalg *la, const Config *c, uint64_t seed,
                               int layer, double *wq, double *wk, double *scratch)
{
    return factorise(random, la, c, seed, layer, ROLE_QUERY, c->init_alpha, c->init_beta, c->heads,
                     Config_head_width(c), wq, wk, false, scratch);
}

/* W^V and W^O: the factors of one α₂Z₂ − β₂I for the whole layer (head h's W^V_h is the
   h-th block of d_h columns of U√S, its W^O_h the same rows of √S Vᵀ), so that
   W^V W^O = Σ_h W^V_h W^O_h is the target itself, as the paper's d×d value-projection
   product is.  Heads narrower than d together (H·d_h < d, --head-dim) take its H·d_h leading
   triplets: W^V W^O is then the target's best rank-H·d_h approximation (Eckart–Young), as
   each head's W^Q_h W^K_hᵀ is of its own target at rank d_h. */
static int factorise_value_output(RandomStream *random, Linalg *la, const Config *c, uint64_t seed,
                                  int layer, double *wv, double *wo, double *scratch)
{
    return factorise(random, la, c, seed, layer, ROLE_VALUE, c->init_vo_alpha, -c->init_vo_beta, 1,
                     Config_heads_width(c), wv, wo, true, scratch);
}

/* Matrix m as a factor of its scheme's target product (Init_matrix's NaN std). */
static int draw_factor(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer,
                       Matrix m, double *out, double *scratch)
{
    switch (m) {
    case MATRIX_QUERY:
        return factorise_query_key(random, la, c, seed, layer, out, NULL, scratch);
    case MATRIX_KEY:
        return factorise_query_key(random, la, c, seed, layer, NULL, out, scratch);
    case MATRIX_VALUE:
        return factorise_value_output(random, la, c, seed, layer, out, NULL, scratch);
    case MATRIX_OUTPUT:
        return factorise_value_output(random, la, c, seed, layer, NULL, out, scratch);
    case MATRIX_MLP_IN:
    case MATRIX_MLP_OUT:
    case MATRIX_MLP_UP:
    case MATRICES:
        break;
    }
    return -1;
}

/* A Haar-orthogonal rows×cols matrix from the Gaussian a: orthonormal columns where it is
   tall, orthonormal rows (its transpose's columns) where it is wide, as torch's orthogonal_
   does; a wide one is W^Q or W^O of heads wider or narrower than d (--head-dim). */
static int orthonormalise(Linalg *la, int rows, int cols, double *a)
{
    if (rows >= cols)
        return Linalg_orthonormalise(la, rows, cols, a);
    size_t n = (size_t)rows * cols;
    double *t = malloc(sizeof(double) * n);
    if (!t)
        return LINALG_OUT_OF_MEMORY;
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++)
            t[j + (size_t)i * cols] = a[i + (size_t)j * rows];
    int info = Linalg_orthonormalise(la, cols, rows, t);
    for (int j = 0; j < cols && !info; j++)
        for (int i = 0; i < rows; i++)
            a[i + (size_t)j * rows] = t[j + (size_t)i * cols];
    free(t);
    return info;
}

int Init_draw_with_scratch(RandomStream *random, Linalg *la, const Config *c, uint64_t seed,
                           int layer, Matrix m, double *out, double *scratch)
{
    int rows, cols;
    Init_shape(c, m, &rows, &cols);
    MatrixInit how = Init_matrix(c, m);
    if (isnan(how.std))
        return scratch ? draw_factor(random, la, c, seed, layer, m, out, scratch) : -1;
    size_t n = (size_t)rows * cols;
    /* An orthogonal matrix's std only scales the draw it orthonormalises (its norm is the
       gain's): the divisor changes its rounding alone, as gpt2's W^O always had. */
    how.std /= Init_depth_divisor(c, m, layer);
    /* No draw for a zero std: 0·(a negative normal) would be −0, not the zero matrix. */
    if (how.std == 0.0)
        memset(out, 0, sizeof(double) * n);
    else if (how.cut > 0)
        RandomStream_truncated_gaussian(random, seed, layer, MATRIX_ROLES[m], how.std, how.cut, out,
                                        n);
    else
        RandomStream_gaussian(random, seed, layer, MATRIX_ROLES[m], how.std, out, n);
    if (how.diagonal != 0.0)
        for (int i = 0; i < rows && i < cols; i++)
            out[i + (size_t)i * rows] += how.diagonal;
    if (how.orthogonal) {
        int info = orthonormalise(la, rows, cols, out);
        if (info || how.gain == 1.0)
            return info;
        for (size_t i = 0; i < n; i++)
            out[i] *= how.gain;
    }
    return 0;
}

int Init_draw(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer, Matrix m,
              double *out)
{
    return Init_draw_with_scratch(random, la, c, seed, layer, m, out, NULL);
}

size_t Init_scratch_doubles(const Config *c)
{
    size_t d = (size_t)c->width;
    return factorised(c->init) ? 3 * d * d + d : 0;
}

int Init_draw_query_key(RandomStream *random, Linalg *la, const Config *c, uint64_t seed, int layer,
                        double *wq, double *wk, double *scratch)
{
    /* Both factors of one decomposition where both are the scheme's: half the SVDs. */
    if (isnan(Init_matrix(c, MATRIX_QUERY).std) && isnan(Init_matrix(c, MATRIX_KEY).std))
        return factorise_query_key(random, la, c, seed, layer, wq, wk, scratch);
    int info = Init_draw_with_scratch(random, la, c, seed, layer, MATRIX_QUERY, wq, scratch);
    return info ? info
                : Init_draw_with_scratch(random, la, c, seed, layer, MATRIX_KEY, wk, scratch);
}

double Init_logit_scale(const Config *c)
{
    if (c->init == INIT_CUTTING_SKIP)
        return 1.0;
    int dh = Config_head_width(c);
    return c->logit_scale == LOGIT_SCALE_LINEAR ? 1.0 / dh : 1.0 / sqrt((double)dh);
}

/* An entry's size as the logits see it: orthonormal columns (or rows, the longer side n of
   d×H·d_h) and the identity have entries of size 1/√n and 1/√d, a truncated normal's are
   below its S. */
static double effective_entry_std(const Config *c, Matrix m)
{
    MatrixInit how = Init_matrix(c, m);
    int rows, cols;
    Init_shape(c, m, &rows, &cols);
    if (how.orthogonal)
        return how.gain / sqrt((double)(rows > cols ? rows : cols));
    if (how.diagonal != 0.0)
        return hypot(how.std, how.diagonal / sqrt((double)c->width));
    return how.cut > 0 ? how.std * Init_truncated_std(how.cut) : how.std;
}

double Init_truncated_std(double cut)
{
    double density = exp(-0.5 * cut * cut) / sqrt(2 * M_PI), mass = erf(cut / M_SQRT2);
    return sqrt(1 - 2 * cut * density / mass);
}

bool Init_uses_one_std(const Config *c)
{
    return c->init == INIT_GPT2 || c->init == INIT_TRUNC_NORMAL;
}

/* The depth scale matrix m takes under c.  gpt2's own is HF's c_proj rule: W^O and W2.  The
   explicit ones are OLMo-core's llama and llama_depth, whose init_feed_forward scales a gated
   MLP's up projection (its w3) with the down projection (w2). */
static DepthScale depth_scale_of(const Config *c, Matrix m)
{
    bool output = m == MATRIX_OUTPUT || m == MATRIX_MLP_OUT;
    if (factorised(c->init))
        return DEPTH_SCALE_NONE;
    /* The scheme's scaling is of the matrices it draws, not of a per-matrix choice over it
       (--init-output normal keeps the normal scheme's W^O). */
    if (c->depth_scale == DEPTH_SCALE_SCHEME)
        return output && c->init == INIT_GPT2 && matrix_choice(c, m) == MATRIX_INIT_SCHEME
                   ? DEPTH_SCALE_TOTAL
                   : DEPTH_SCALE_NONE;
    return output || m == MATRIX_MLP_UP ? c->depth_scale : DEPTH_SCALE_NONE;
}

bool Init_depends_on_depth(const Config *c)
{
    return c->init == INIT_DEEPNORM || depth_scale_of(c, MATRIX_OUTPUT) == DEPTH_SCALE_TOTAL ||
           depth_scale_of(c, MATRIX_MLP_OUT) == DEPTH_SCALE_TOTAL ||
           depth_scale_of(c, MATRIX_MLP_UP) == DEPTH_SCALE_TOTAL;
}

double Init_depth_divisor(const Config *c, Matrix m, int layer)
{
    switch (depth_scale_of(c, m)) {
    case DEPTH_SCALE_TOTAL:
        return sqrt(2.0 * c->depth);
    case DEPTH_SCALE_PER_LAYER:
        return sqrt(2.0 * layer);
    case DEPTH_SCALE_SCHEME:
    case DEPTH_SCALE_NONE:
        break;
    }
    return 1.0;
}

double Init_embedding_std(const Config *c)
{
    if (Init_uses_one_std(c))
        return c->init_std;
    return c->input_norm == INPUT_NORM_SQRT_D ? 1.0 : 1.0 / sqrt((double)c->width);
}

double Init_effective_sigma_qk(const Config *c)
{
    return sqrt(effective_entry_std(c, MATRIX_QUERY) * effective_entry_std(c, MATRIX_KEY));
}
