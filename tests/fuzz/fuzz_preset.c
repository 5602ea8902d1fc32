/* libFuzzer harness: arbitrary bytes as a preset file.  The loader must either apply a valid
 * configuration or leave the old one untouched with a FILE:LINE message. */
#include "options.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/attnscope-fuzz-%d.preset", (int)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    Config c = Config_default(), before = c;
    char err[OPTIONS_ERROR_SIZE] = "";
    if (Options_load_preset(&c, path, err, sizeof err) == 0) {
        if (err[0])
            abort(); /* success says nothing */
    } else {
        if (strncmp(err, path, strlen(path)) != 0 || !Config_equal(&c, &before))
            abort(); /* a failure names the file and applies nothing */
    }
    return 0;
}
