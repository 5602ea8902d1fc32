/* What every harness reads: the fuzzer's bytes in a buffer of exactly their size (one byte
 * where there are none), so that ASan catches a read one past the end, which libFuzzer's own
 * buffer would not show.  NULL when out of memory (the input is then passed over). */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline void *Fuzz_input_copy(const uint8_t *data, size_t size)
{
    void *copy = malloc(size ? size : 1);
    if (copy)
        memcpy(copy, data, size);
    return copy;
}

#endif
