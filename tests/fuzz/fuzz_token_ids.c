/* libFuzzer harness: arbitrary bytes as one --token-ids file.  The reader must either return
 * between CONFIG_TOKENS_MIN and CONFIG_TOKENS_MAX ids, each 0 … 2^31 − 1 and each with its line
 * in the lines format, or refuse with a message that names the file, never crash, and free
 * what it built either way (ASan's leak check). */
#include "attnscope/config.h"
#include "token_ids.h"
#include "fuzz_input.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *bytes = Fuzz_input_copy(data, size);
    if (!bytes)
        return 0;
    char err[512] = "";
    TokenIds ids;
    if (TokenIds_parse(bytes, size, "fuzz.ids", &ids, err, sizeof err) == 0) {
        if (ids.count < CONFIG_TOKENS_MIN || ids.count > CONFIG_TOKENS_MAX)
            abort();
        for (int i = 0; i < ids.count; i++)
            if (ids.ids[i] < 0 ||
                (ids.lines && (ids.lines[i] < 1 || (i && ids.lines[i] <= ids.lines[i - 1]))))
                abort();
        /* The vocabulary check: the largest id + 1 rows hold every id, one row fewer does not,
           and its message names the file. */
        int32_t largest = 0;
        for (int i = 0; i < ids.count; i++)
            largest = ids.ids[i] > largest ? ids.ids[i] : largest;
        if (largest < INT32_MAX &&
            TokenIds_check_vocab(&ids, "fuzz.ids", largest + 1, "the table", err, sizeof err))
            abort();
        if (TokenIds_check_vocab(&ids, "fuzz.ids", largest, "the table", err, sizeof err) == 0 ||
            strncmp(err, "fuzz.ids", 8) != 0)
            abort();
        TokenIds_free(&ids);
    } else if (strncmp(err, "fuzz.ids", 8) != 0) {
        abort();
    }
    free(bytes);
    return 0;
}
