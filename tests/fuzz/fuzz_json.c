/* libFuzzer harness: arbitrary bytes as one JSON Lines record.  The reader must either return
 * a value or refuse with a message that says where ("JSON byte N: ..."), never read past the
 * length it is given, and free what it built either way (ASan's leak check). */
#include "json_read.h"
#include "fuzz_input.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = Fuzz_input_copy(data, size);
    if (!text)
        return 0;
    char err[256] = "";
    JsonValue *v = Json_parse(text, size, err, sizeof err);
    if (!v && strncmp(err, "JSON byte ", 10) != 0)
        abort();
    JsonValue_free(v);
    free(text);
    return 0;
}
