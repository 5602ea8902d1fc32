/* libFuzzer harness: arbitrary bytes as one safetensors file.  The reader must either list
 * tensors that lie inside the bytes (each is converted to doubles here, so ASan catches a
 * read past the end) or refuse with a message that names the file, never crash, and free
 * what it built either way (ASan's leak check).  The names read are then classified as
 * --weights classifies them (weights_names.c: the family, a layer's part, outside the block),
 * with and without an MLP. */
#include "fuzz_input.h"
#include "safetensors.h"
#include "weights_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *bytes = Fuzz_input_copy(data, size);
    if (!bytes)
        return 0;
    char err[512] = "";
    Safetensors *s = Safetensors_parse(bytes, size, "fuzz.safetensors", err, sizeof err);
    if (!s && strncmp(err, "'fuzz.safetensors': ", 20) != 0)
        abort();
    Names names = s ? Weights_names_of(s) : LLAMA_NAMES;
    Config with_mlp = Config_default(), without_mlp = with_mlp;
    with_mlp.mlp = MLP_GELU;
    without_mlp.mlp = MLP_NONE;
    for (int i = 0; s && i < Safetensors_count(s); i++) {
        const SafetensorsTensor *t = Safetensors_at(s, i);
        const char *group;
        if (Weights_layer_of(&names, t->name) < 0 || !Weights_layer_part(&names, t->name) ||
            Weights_outside_block(&names, &with_mlp, s, t->name, &group) == EXPERTS ||
            !Weights_outside_why(&names,
                                 Weights_outside_block(&names, &without_mlp, s, t->name, &group)) ||
            !group)
            abort(); /* experts are outside only without an MLP; every place has its why */
        (void)Weights_layer_buffer(&names, t->name);
        /* The bytes bound the elements: size / 2 at most, so the buffer below is bounded. */
        double *values = malloc(sizeof(double) * (t->elements ? t->elements : 1));
        if (!values)
            abort();
        Safetensors_to_double(t, values);
        if (t->rank == 2)
            Safetensors_block_to_double(t, 0, t->shape[0], 0, t->shape[1], values);
        double bad;
        (void)Safetensors_first_nonfinite(t, &bad);
        free(values);
    }
    Safetensors_close(s);
    free(bytes);
    return 0;
}
