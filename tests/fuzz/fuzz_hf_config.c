/* libFuzzer harness: arbitrary bytes as one config.json for --hf-config.  The reader must
 * either set the settings (and then its report is valid JSON that the project's reader takes
 * back, and its window judged at another T stands at that T) or refuse with a message that
 * names the file, never crash, and free what it built either way (ASan's leak check). */
#include "hf_config.h"
#include "json_read.h"
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
    Config c = Config_default();
    HfConfigReport *report = calloc(1, sizeof *report);
    char err[1280] = "";
    if (!report)
        abort();
    if (HfConfig_parse(bytes, size, "fuzz.json", &c, report, err, sizeof err) != 0) {
        if (strncmp(err, "'fuzz.json': ", 13) != 0)
            abort();
    } else {
        Text t = {0};
        Text_printf(&t, "{\"x\": 0");
        HfConfig_json(report, &t);
        Text_printf(&t, "}");
        JsonValue *v = t.failed ? NULL : Json_parse(t.data, t.length, err, sizeof err);
        if (!t.failed && !v)
            abort(); /* the document's member would not be JSON */
        JsonValue_free(v);
        Text_free(&t);
        /* --token-ids setting another T: the window judged there, after which that T is the
           one the file was read at (HfConfig_check has nothing to refuse). */
        Config at = c;
        at.tokens = 2 + (int)(size % 4095);
        if (HfConfig_judge_tokens(report, &at, err, sizeof err) == 0 &&
            HfConfig_check(report, &at, err, sizeof err) != 0)
            abort();
    }
    free(report);
    free(bytes);
    return 0;
}
