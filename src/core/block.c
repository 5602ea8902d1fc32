#include "attnscope/block.h"

#include <math.h>
#include <string.h>

/* Subtracts each row's mean over the d features. */
static void centre_rows(int T, int d, double *x, double *row_stat)
{
    memset(row_stat, 0, sizeof(double) * T);
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            row_stat[i] += x[i + (size_t)j * T];
    for (int i = 0; i < T; i++)
        row_stat[i] /= d;
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            x[i + (size_t)j * T] -= row_stat[i];
}

/* The largest |entry| of each row: rows are scaled by it before their squares are summed,
   so that no sum of squares overflows. */
static void row_maxima(int T, int d, const double *x, double *row_max)
{
    memset(row_max, 0, sizeof(double) * T);
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            row_max[i] = fmax(row_max[i], fabs(x[i + (size_t)j * T]));
}

/* Unit rows, x/‖x‖: unit norm, not PyTorch's √d, so σ_qk means the same at every layer. */
static void unit_rows(int T, int d, double *x, double *row_stat)
{
    row_maxima(T, d, x, row_stat);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < T; i++)
            if (row_stat[i] > 0 && isfinite(row_stat[i]))
                row_stat[i] = 1.0 / row_stat[i];
        for (int j = 0; j < d; j++)
            for (int i = 0; i < T; i++)
                x[i + (size_t)j * T] *= row_stat[i];
        if (pass == 1)
            break;
        memset(row_stat, 0, sizeof(double) * T);
        for (int j = 0; j < d; j++)
            for (int i = 0; i < T; i++)
                row_stat[i] += x[i + (size_t)j * T] * x[i + (size_t)j * T];
        for (int i = 0; i < T; i++)
            row_stat[i] = sqrt(row_stat[i]);
    }
}

/* PyTorch's rows: x/√(mean(x²) + ε), computed as (x/m)/√(s/d + ε/m²) with m the row's
   largest |entry| and s = Σ(x/m)², which neither overflows nor divides by zero. */
void Block_rms_rows(int T, int d, double epsilon, double *x, double *row_stat, double *row_max)
{
    row_maxima(T, d, x, row_max);
    memset(row_stat, 0, sizeof(double) * T);
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            if (row_max[i] > 0) {
                double scaled = x[i + (size_t)j * T] / row_max[i];
                row_stat[i] += scaled * scaled;
            }
    for (int i = 0; i < T; i++) {
        double m = row_max[i];
        row_stat[i] = m > 0 ? 1.0 / (m * sqrt(row_stat[i] / d + epsilon / (m * m))) : 0.0;
    }
    for (int j = 0; j < d; j++)
        for (int i = 0; i < T; i++)
            x[i + (size_t)j * T] *= row_stat[i];
}

void Block_activate(Mlp mlp, double *x, size_t n)
{
    switch (mlp) {
    case MLP_NONE:
        return;
    case MLP_RELU:
        for (size_t i = 0; i < n; i++)
            x[i] = x[i] > 0 ? x[i] : 0.0;
        return;
    case MLP_GELU:
        for (size_t i = 0; i < n; i++)
            x[i] = 0.5 * x[i] * erfc(-x[i] * M_SQRT1_2);
        return;
    case MLP_TANH:
        for (size_t i = 0; i < n; i++)
            x[i] = tanh(x[i]);
        return;
    case MLP_SWIGLU: /* the gate's silu, x·sigmoid(x) */
        for (size_t i = 0; i < n; i++)
            x[i] = x[i] / (1.0 + exp(-x[i]));
        return;
    case MLP_GEGLU: /* the gate's tanh-GELU (Gemma's gelu_pytorch_tanh) */
        for (size_t i = 0; i < n; i++)
            x[i] = 0.5 * x[i] *
                   (1.0 + tanh(M_2_SQRTPI * M_SQRT1_2 * (x[i] + 0.044715 * x[i] * x[i] * x[i])));
        return;
    }
}

void Block_layernorm(const Config *c, int T, int d, double *x, double *row_stat, double *row_max)
{
    if (c->layernorm == LAYERNORM_NONE)
        return;
    if (c->layernorm == LAYERNORM_LN)
        centre_rows(T, d, x, row_stat);
    if (c->ln_scale == LN_SCALE_SQRT_D)
        Block_rms_rows(T, d, c->ln_eps, x, row_stat, row_max);
    else
        unit_rows(T, d, x, row_stat);
}

void Block_gain_columns(int rows, int n, double *x, const double *gain, double offset)
{
    for (int j = 0; j < n; j++) {
        double g = offset != 0 ? offset + gain[j] : gain[j];
        double *column = x + (size_t)rows * j;
        for (int i = 0; i < rows; i++)
            column[i] *= g;
    }
}
