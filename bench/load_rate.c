/* What reading a checkpoint costs (--weights; the cost model's LOAD_BYTE and LOAD_ELEMENT,
 * src/core/cost.c): every tensor of two checkpoints holding the same tensors, one in F64 and
 * one in BF16, converted to double and its pages dropped, as the weight source's fill does
 * (src/common/weights.c), medians of RUNS passes.  The two dtypes convert as many elements
 * from 4 times fewer bytes, which splits the time into a price per byte read from the
 * mapping (the page faults of a file in the page cache) and one per element converted,
 * reported in the cost model's flop equivalents (seconds × the reference rate × the scalar
 * speed Cost_calibrate times now).
 *
 *     cc -std=c11 -O2 -D_XOPEN_SOURCE=700 -D_DEFAULT_SOURCE -Iinclude -Isrc/common \
 *        bench/load_rate.c -o build/bench/load_rate build/libattnscope_common.a \
 *        build/libattnscope_core.a $(pkg-config --cflags --libs openblas lapacke) -lgsl -lm
 *     S="-T 16 -d 1024 -L 2 --heads 8 --mlp swiglu --wo gaussian"
 *     build/attnscope $S --export-weights /tmp/f64; build/attnscope $S --export-weights /tmp/bf16
 * --export-dtype bf16 build/bench/load_rate /tmp/f64 /tmp/bf16
 *
 * Reports, never fails.
 */
#include "attnscope/cost.h"
#include "safetensors.h"

#include <stdio.h>
#include <stdlib.h>

#include "timing.h"

enum { RUNS = 7 };

typedef struct {
    double seconds, bytes, elements;
} Pass;

/* Median seconds of converting every tensor of the checkpoint at path, and its sizes. */
static int measure(const char *path, Pass *out)
{
    char err[512];
    Safetensors *s = Safetensors_open(path, err, sizeof err);
    if (!s) {
        fprintf(stderr, "load_rate: %s\n", err);
        return -1;
    }
    uint64_t largest = 0;
    *out = (Pass){0};
    for (int i = 0; i < Safetensors_count(s); i++) {
        const SafetensorsTensor *t = Safetensors_at(s, i);
        largest = t->elements > largest ? t->elements : largest;
        out->bytes += (double)(t->elements * SafetensorsDtype_size(t->dtype));
        out->elements += (double)t->elements;
    }
    double *buffer = malloc(sizeof(double) * (largest + 1)), times[RUNS];
    for (int r = 0; r < RUNS && buffer; r++) {
        double start = now();
        for (int i = 0; i < Safetensors_count(s); i++) {
            Safetensors_to_double(Safetensors_at(s, i), buffer);
            Safetensors_release(s, Safetensors_at(s, i));
        }
        times[r] = now() - start;
    }
    if (buffer)
        out->seconds = median(times, RUNS);
    free(buffer);
    Safetensors_close(s);
    return buffer ? 0 : -1;
}

int main(int argc, char **argv)
{
    Pass wide, narrow;
    if (argc != 3) {
        fprintf(stderr, "usage: load_rate F64-CHECKPOINT BF16-CHECKPOINT\n");
        return 2;
    }
    if (measure(argv[1], &wide) || measure(argv[2], &narrow))
        return 1;
    if (wide.elements != narrow.elements || wide.bytes == narrow.bytes) {
        fprintf(stderr, "load_rate: the two checkpoints must hold the same tensors\n");
        return 2;
    }
    CostRates rates = Cost_calibrate();
    double to_flops = Cost_reference_rates().flops_per_second * rates.scalar_speed;
    double per_byte = (wide.seconds - narrow.seconds) / (wide.bytes - narrow.bytes);
    double per_element = (narrow.seconds - per_byte * narrow.bytes) / narrow.elements;
    printf("| checkpoint | bytes | elements | median s | ns per element "
           "|\n|---|---:|---:|---:|---:|\n");
    printf("| F64 | %.0f | %.0f | %.4f | %.3f |\n", wide.bytes, wide.elements, wide.seconds,
           1e9 * wide.seconds / wide.elements);
    printf("| BF16 | %.0f | %.0f | %.4f | %.3f |\n\n", narrow.bytes, narrow.elements,
           narrow.seconds, 1e9 * narrow.seconds / narrow.elements);
    printf("scalar speed %.3f: LOAD_BYTE %.3g, LOAD_ELEMENT %.3g flop equivalents (%.3g ns per "
           "byte, %.3g ns per element)\n",
           rates.scalar_speed, per_byte * to_flops, per_element * to_flops, 1e9 * per_byte,
           1e9 * per_element);
    return 0;
}
