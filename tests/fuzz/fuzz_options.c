/* libFuzzer harness: arbitrary bytes as a command line (NUL separates the arguments).  The
 * parser must return 0 or 2, and a 2 always comes with a message. */
#include "options.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { ARGS_MAX = 32 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[ARGS_MAX + 2] = {"attnscope"};
    int argc = 1;
    for (size_t i = 0; i <= size && argc <= ARGS_MAX; i += strlen(text + i) + 1) {
        /* --preset (and its abbreviations) would read arbitrary paths, /dev/stdin among them:
           the preset harness covers the loader. */
        if (strncmp(text + i, "--p", 3) == 0) {
            free(text);
            return 0;
        }
        argv[argc++] = text + i;
    }
    argv[argc] = NULL;
    Options o;
    char err[OPTIONS_ERROR_SIZE] = "";
    int status = Options_parse(argc, argv, &o, err, sizeof err);
    if (status != 0 && (status != 2 || !err[0]))
        abort();
    /* An accepted configuration is a valid one; with --jsonl the command line's settings are
       only each line's base, whose combination is checked per line. */
    if (status == 0 && !o.help && !o.version && !o.jsonl &&
        Config_validate(&o.config, err, sizeof err))
        abort();
    free(text);
    return 0;
}
