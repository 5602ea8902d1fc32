/* Row entropies of an attention matrix (include/attnscope/entropy.h). */
#include "attnscope/entropy.h"

#include "attnscope/attention.h"

#include <math.h>

bool Entropy_defined(Attention kind)
{
    return Attention_is_row_stochastic(kind);
}

const char *Entropy_undefined_reason(Attention kind)
{
    switch (kind) {
    case ATTENTION_RELU:
        return "relu rows are not distributions (they do not sum to 1)";
    case ATTENTION_SIGMOID:
        return "sigmoid rows are not distributions (they do not sum to 1)";
    case ATTENTION_LINEAR:
        return "linear rows are not distributions (negative entries, no fixed sum)";
    default:
        return NULL;
    }
}

EntropyRows Entropy_undefined(void)
{
    return (EntropyRows){NAN, NAN, NAN, NAN, NAN};
}

void Entropy_rows(Mask mask, int window, int T, bool sink, const double *a, EntropyRows *out)
{
    double sum = 0, normalised = 0, max_weight = 0;
    double min = INFINITY, max = -INFINITY;
    int normalised_rows = 0;
    for (int i = 0; i < T; i++) {
        int first, last;
        Mask_row_range(mask, window, T, i, &first, &last);
        const double *row = a + (size_t)i * T;
        double h = 0, top = 0, keys = 0;
        for (int j = first; j <= last; j++) {
            if (row[j] > 0) /* 0 ln 0 = 0 */
                h -= row[j] * log(row[j]);
            if (row[j] > top)
                top = row[j];
            keys += row[j];
        }
        /* The sink's mass, the (n_i + 1)-th outcome: what the keys leave of 1.  Rounding may
           leave a hair below 0, whose share is none. */
        double held = 1.0 - keys;
        if (sink && held > 0)
            h -= held * log(held);
        sum += h;
        max_weight += top;
        min = h < min ? h : min;
        max = h > max ? h : max;
        int n = last - first + 1 + (sink ? 1 : 0);
        if (n >= 2) {
            normalised += h / log((double)n);
            normalised_rows++;
        }
    }
    *out = (EntropyRows){.mean = T ? sum / T : NAN,
                         .min = T ? min : NAN,
                         .max = T ? max : NAN,
                         .normalised_mean = normalised_rows ? normalised / normalised_rows : NAN,
                         .max_weight_mean = T ? max_weight / T : NAN};
}
