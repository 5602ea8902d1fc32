/* QK-norm and rotary positions on the projected queries and keys (see qk.h). */
#include "attnscope/qk.h"

#include "attnscope/attention.h"
#include "attnscope/block.h"

#include <math.h>

bool Qk_normalised(const Config *c)
{
    return c->qk_norm != QK_NORM_NONE && Attention_has_query_key(c->attention);
}

int Qk_rotated_width(const Config *c)
{
    int dh = Config_head_width(c);
    int width = (int)floor(c->rope_fraction * dh);
    return width - width % 2;
}

bool Qk_rotates(const Config *c, int layer)
{
    bool nope_layer = c->nope_every > 0 && layer % c->nope_every == 0;
    return c->rope != ROPE_NONE && Attention_has_query_key(c->attention) &&
           Qk_rotated_width(c) > 0 && !nope_layer;
}

void Qk_norm(const Config *c, int T, int heads, double *x, const double *gain, double *row_stat,
             double *row_max)
{
    int dh = Config_head_width(c);
    if (c->qk_norm == QK_NORM_FULL) {
        Block_rms_rows(T, heads * dh, c->ln_eps, x, row_stat, row_max);
        if (gain)
            Block_gain_columns(T, heads * dh, x, gain, c->norm_gain_offset);
        return;
    }
    for (int h = 0; h < heads; h++) {
        Block_rms_rows(T, dh, c->ln_eps, x + (size_t)T * dh * h, row_stat, row_max);
        if (gain)
            Block_gain_columns(T, dh, x + (size_t)T * dh * h, gain, c->norm_gain_offset);
    }
}

/* Llama 3.1's rescaling of one frequency f (HF's _compute_llama3_parameters): a wavelength
   2π/f shorter than C/high is kept, one longer than C/low is divided by s, and between the two
   the frequency blends f/s and f, by how many times the wavelength fits in C. */
static double llama3_frequency(const Config *c, double frequency)
{
    double s = c->rope_factor, low = c->rope_low_freq_factor, high = c->rope_high_freq_factor;
    double context = c->rope_original_context, wavelength = 2 * M_PI / frequency;
    if (wavelength < context / high)
        return frequency;
    if (wavelength > context / low)
        return frequency / s;
    double smooth = (context / wavelength - low) / (high - low);
    return (1 - smooth) * frequency / s + smooth * frequency;
}

double Qk_frequency(const Config *c, int layer, int k)
{
    /* Gemma 3's local layers turn by their own θ, unscaled (HF's rotary_emb_local). */
    if (Config_layer_rotary_local(c, layer))
        return pow(c->rope_local_base_freq, -2.0 * k / Qk_rotated_width(c));
    double frequency = pow(c->rope_theta, -2.0 * k / Qk_rotated_width(c));
    switch (c->rope_scaling) {
    case ROPE_SCALING_LINEAR:
        return frequency / c->rope_factor;
    case ROPE_SCALING_LLAMA3:
        return llama3_frequency(c, frequency);
    case ROPE_SCALING_NONE:
        break;
    }
    return frequency;
}

/* The two dimensions (columns of a head's block) that frequency k turns together. */
static void rotated_pair(Rope rope, int rotated, int k, int *first, int *second)
{
    if (rope == ROPE_PAIRS) {
        *first = 2 * k;
        *second = 2 * k + 1;
    } else {
        *first = k;
        *second = k + rotated / 2;
    }
}

/* x turned by the angles sign·p·f_k (Qk_frequency of the layer): Qk_rotate (sign 1) or its
   transpose (−1), their cosines and sines from table (Qk_rotation_table, positions 0 … T−1)
   or, table NULL, computed here: cos(−a) = cos a and sin(−a) = −sin a in libm, so both give
   the same bits. */
static void turn(const Config *c, int layer, int T, int heads, int first_position, double sign,
                 const double *table, double *x)
{
    int dh = Config_head_width(c), rotated = Qk_rotated_width(c);
    const double *cosines = table, *sines = table ? table + (size_t)T * (rotated / 2) : NULL;
    for (int k = 0; k < rotated / 2; k++) {
        double frequency = Qk_frequency(c, layer, k);
        int first, second;
        rotated_pair(c->rope, rotated, k, &first, &second);
        for (int i = 0; i < T; i++) {
            double angle = sign * (first_position + i) * frequency;
            double cosine = table ? cosines[(size_t)k * T + i] : cos(angle);
            double sine = table ? sign * sines[(size_t)k * T + i] : sin(angle);
            for (int h = 0; h < heads; h++) {
                double *a = x + (size_t)T * (h * dh + first) + i;
                double *b = x + (size_t)T * (h * dh + second) + i;
                double turned_a = *a * cosine - *b * sine;
                *b = *b * cosine + *a * sine;
                *a = turned_a;
            }
        }
    }
}

void Qk_rotate(const Config *c, int layer, int T, int heads, int first_position, double *x)
{
    turn(c, layer, T, heads, first_position, 1.0, NULL, x);
}

void Qk_unrotate(const Config *c, int layer, int T, int heads, double *x)
{
    turn(c, layer, T, heads, 0, -1.0, NULL, x);
}

size_t Qk_rotation_table_doubles(const Config *c, int T)
{
    return (size_t)T * (size_t)Qk_rotated_width(c);
}

void Qk_rotation_table(const Config *c, int layer, int T, double *table)
{
    int rotated = Qk_rotated_width(c);
    double *sines = table + (size_t)T * (rotated / 2);
    for (int k = 0; k < rotated / 2; k++) {
        double frequency = Qk_frequency(c, layer, k);
        for (int i = 0; i < T; i++) {
            table[(size_t)k * T + i] = cos(i * frequency);
            sines[(size_t)k * T + i] = sin(i * frequency);
        }
    }
}

void Qk_turn(const Config *c, int layer, int T, int heads, const double *table, bool transposed,
             double *x)
{
    turn(c, layer, T, heads, 0, transposed ? -1.0 : 1.0, table, x);
}

void Qk_shape(const Config *c, int layer, int T, double *q, double *k, const double *query_gain,
              const double *key_gain, double *row_stat, double *row_max)
{
    bool normalised = Qk_normalised(c), rotates = Qk_rotates(c, layer);
    bool norm_first = c->qk_norm_place == QK_NORM_BEFORE_ROPE;
    int kv_heads = Config_kv_heads(c);
    if (normalised && norm_first) {
        Qk_norm(c, T, c->heads, q, query_gain, row_stat, row_max);
        Qk_norm(c, T, kv_heads, k, key_gain, row_stat, row_max);
    }
    if (rotates) {
        Qk_rotate(c, layer, T, c->heads, 0, q);
        Qk_rotate(c, layer, T, kv_heads, 0, k);
    }
    if (normalised && !norm_first) {
        Qk_norm(c, T, c->heads, q, query_gain, row_stat, row_max);
        Qk_norm(c, T, kv_heads, k, key_gain, row_stat, row_max);
    }
}
