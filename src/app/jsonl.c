#include "jsonl.h"

#include "attnscope/linalg.h"
#include "batch.h"
#include "compute.h"
#include "duration.h"
#include "line_reader.h"
#include "rates.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The batch document also spells the width "d_qk" (d = d_qk in this model). */
static const char WIDTH_ALIAS[] = "d_qk";

static const Setting *setting_of_key(const char *key)
{
    for (int i = 0; i < Settings_count(); i++)
        if (strcmp(Settings_at(i)->json, key) == 0)
            return Settings_at(i);
    return NULL;
}

/* The job key a configuration line takes beside its settings (Jsonl_apply_line): the bound
   on its computation's estimated seconds, as --max-time bounds a batch run's (grid writes it
   from its own --max-time). */
static const char MAX_TIME_KEY[] = "max_time";

/* An unknown key refused, listing the keys accepted: a line's (line) adds its job key. */
static void unknown_key(const char *key, bool line, char *err, size_t size)
{
    char names[1024];
    Settings_names(true, names, sizeof names);
    snprintf(err, size, "unknown key \"%.40s\"; accepted: %s (and %s, equal to d%s%s%s)", key,
             names, WIDTH_ALIAS, line ? "; and " : "", line ? MAX_TIME_KEY : "",
             line ? ", a bound on the estimated seconds" : "");
}

/* Python writes 8.0 for a whole number that went through a float: for a whole-number setting
   such a value is the integer it equals (8.5, 1e400 still reach the setter and are refused). */
static const char *number_text(const Setting *s, const JsonValue *v, char *buf, size_t size)
{
    bool whole_setting = s->kind == SETTING_INT || s->kind == SETTING_SEED;
    if (!whole_setting || v->kind != JSON_NUMBER || !isfinite(v->number) ||
        v->number != floor(v->number) || fabs(v->number) > 0x1p53)
        return v->text;
    snprintf(buf, size, "%.0f", v->number);
    return buf;
}

/* Jsonl_apply_config, for a line (line: its unknown key's message lists its job key). */
static int apply_settings(const JsonValue *object, bool line, Config *c, char *err, size_t size)
{
    if (!object || object->kind != JSON_OBJECT) {
        snprintf(err, size, "expected an object of settings, found %s",
                 object ? JsonKind_name(object->kind) : "nothing");
        return -1;
    }
    const JsonValue *alias = NULL;
    for (int i = 0; i < object->count; i++) {
        const char *key = object->keys[i];
        const JsonValue *v = &object->items[i];
        if (strcmp(key, WIDTH_ALIAS) == 0) {
            alias = v; /* checked once "d" is known, wherever it comes in the object */
            continue;
        }
        const Setting *s = setting_of_key(key);
        if (!s) {
            unknown_key(key, line, err, size);
            return -1;
        }
        JsonKind wanted = Setting_is_text(s) ? JSON_STRING : JSON_NUMBER;
        /* A double's off value (-∞, --sink none) is written null. */
        if (v->kind == JSON_NULL && s->off_word) {
            Setting_put(s, c, -INFINITY);
            continue;
        }
        if (v->kind != wanted) {
            char list[128] = "a number";
            if (s->off_word)
                snprintf(list, sizeof list, "a number or null (%s)", s->off_word);
            if (s->kind == SETTING_ENUM)
                EnumNames_list(s->names, list, sizeof list);
            if (s->kind == SETTING_PATTERN)
                snprintf(list, sizeof list, "(all, a:b or L/G letters)");
            snprintf(err, size, "\"%s\": accepted %s%s, found %s", key,
                     Setting_is_text(s) ? "a string " : "", list, JsonKind_name(v->kind));
            return -1;
        }
        if (v->kind == JSON_STRING && strlen(v->text) != v->length) {
            snprintf(err, size, "\"%s\": a string holding \\u0000 (a setting's name has none)",
                     key);
            return -1;
        }
        char message[400], whole[32];
        if (Setting_parse(s, c, number_text(s, v, whole, sizeof whole), message, sizeof message)) {
            snprintf(err, size, "\"%s\": %s", key, message);
            return -1;
        }
    }
    /* The alias is read as "d" is (8.0 is 8 for both, 8.5 refused), then compared. */
    Config as_width = *c;
    char message[400], whole[32];
    const Setting *width = setting_of_key("d");
    if (alias && alias->kind == JSON_NUMBER &&
        Setting_parse(width, &as_width, number_text(width, alias, whole, sizeof whole), message,
                      sizeof message)) {
        snprintf(err, size, "\"%s\": %s", WIDTH_ALIAS, message);
        return -1;
    }
    if (alias && (alias->kind != JSON_NUMBER || as_width.width != c->width)) {
        snprintf(err, size, "\"%s\": accepted only the width d = %d (d_qk = d in this model)",
                 WIDTH_ALIAS, c->width);
        return -1;
    }
    return 0;
}

int Jsonl_apply_config(const JsonValue *object, Config *c, char *err, size_t size)
{
    return apply_settings(object, false, c, err, size);
}

void Jsonl_write_config(const Config *c, Text *t)
{
    Text_printf(t, "{");
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        Text_printf(t, "%s\"%s\":", i ? "," : "", s->json);
        char text[64];
        if (Setting_is_text(s)) {
            Setting_format(s, c, 0, text, sizeof text);
            Json_string(t, text);
        } else if (s->kind == SETTING_DOUBLE) {
            Json_number(t, Setting_get(s, c));
        } else {
            Text_printf(t, "%.0f", Setting_get(s, c));
        }
    }
    Text_printf(t, "}");
}

/* How the record was produced, so that a merged figure can be traced to its runs: the host,
   the input line, and the scheduler's job identity where one ran us. */
static void provenance(Text *t, long line)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    Text_printf(t, "\"provenance\":{\"command\":\"attnscope --batch --jsonl\",\"host\":");
    Json_string(t, host);
    Text_printf(t, ",\"line\":%ld", line);
    static const char *const scheduler[] = {"SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID",
                                            "SLURM_ARRAY_TASK_ID", "PARALLEL_SEQ"};
    for (size_t i = 0; i < sizeof scheduler / sizeof scheduler[0]; i++) {
        const char *value = getenv(scheduler[i]);
        if (value && *value) {
            Text_printf(t, ",\"%s\":", scheduler[i]);
            Json_string(t, value);
        }
    }
    Text_printf(t, "}");
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

/* The batch document on one line (its line breaks lie between members: a string's are
   escaped), with the run's circumstances added before its closing brace. */
static void result_record(const Result *r, const WidthSweep *sweep, long line, double elapsed,
                          Text *t)
{
    Text doc = {0};
    Batch_document(r, sweep, NULL, NULL, NULL, &doc);
    if (doc.failed) {
        t->failed = true;
        Text_free(&doc);
        return;
    }
    size_t kept = 0;
    for (size_t i = 0; i < doc.length; i++)
        if (doc.data[i] != '\n')
            doc.data[kept++] = doc.data[i];
    while (kept && doc.data[kept - 1] != '}')
        kept--;
    Text_printf(t, "%.*s", (int)(kept - 1), doc.data);
    Text_printf(t, ", \"line\":%ld, \"blas_threads\":%d, \"elapsed_seconds\":", line,
                Linalg_blas_threads());
    Json_number(t, elapsed);
    Text_printf(t, ", ");
    provenance(t, line);
    Text_printf(t, "}\n");
    Text_free(&doc);
}

/* A line that failed: why, and its settings where they were valid (a line above its bound, a
   computation that failed), so that merge can tell the record of the line run again. */
static void error_record(const char *message, long line, const Config *c, Text *t)
{
    Text_printf(t, "{\"attnscope\":\"%s\", \"line\":%ld, \"error\":", ATTNSCOPE_VERSION, line);
    Json_string(t, message);
    if (c) {
        Text_printf(t, ", \"config\":{");
        Json_config_members(t, c);
        Text_printf(t, "}");
    }
    Text_printf(t, ", ");
    provenance(t, line);
    Text_printf(t, "}\n");
}

static bool blank(const char *text, size_t length)
{
    for (size_t i = 0; i < length; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r' && text[i] != '\n')
            return false;
    return true;
}

/* The lines' pricing: the two lanes or one, and this machine's rates, measured once, for the
   first line that needs them. */
typedef struct {
    bool two_lanes;
    bool measured;
    CostRates rates;
} Pricing;

/* The object's members but "max_time", the settings (shallow: they point into object). */
static int settings_of(const JsonValue *object, JsonValue *settings)
{
    *settings = *object;
    settings->count = 0;
    settings->items = malloc(sizeof *settings->items * (size_t)(object->count + 1));
    settings->keys = malloc(sizeof *settings->keys * (size_t)(object->count + 1));
    if (!settings->items || !settings->keys)
        return -1;
    for (int i = 0; i < object->count; i++)
        if (strcmp(object->keys[i], MAX_TIME_KEY) != 0) {
            settings->keys[settings->count] = object->keys[i];
            settings->items[settings->count++] = object->items[i];
        }
    return 0;
}

int Jsonl_apply_line(const JsonValue *object, Config *c, double *max_time, char *err, size_t size)
{
    *max_time = 0;
    if (!object || object->kind != JSON_OBJECT) /* refused, saying what was expected */
        return apply_settings(object, true, c, err, size);
    const JsonValue *given = JsonValue_member(object, MAX_TIME_KEY);
    if (given && !(given->kind == JSON_NUMBER && given->number > 0 && isfinite(given->number))) {
        snprintf(err, size, "\"%s\": accepted a number of seconds above 0, found %s", MAX_TIME_KEY,
                 given->kind == JSON_NUMBER ? given->text : JsonKind_name(given->kind));
        return -1;
    }
    if (given)
        *max_time = given->number;
    JsonValue settings;
    int bad = settings_of(object, &settings);
    if (bad)
        snprintf(err, size, "out of memory reading the line");
    else
        bad = apply_settings(&settings, true, c, err, size);
    free(settings.items);
    free(settings.keys);
    return bad ? -1 : 0;
}

/* The configuration c of a line, its settings applied to o->config, checked, with its bound on
   the estimate: --max-time when given (the command line overrides what a grid baked in, so
   that lines refused can be run again with a larger bound), else the line's "max_time", else
   BATCH_MAX_SECONDS, as a lone batch run has (a line estimated at hours in a sweep is a slip
   as likely); none with --no-confirm.  *bound_from says which, for the refusal's words.
   Returns 0, or -1 with err written. */
typedef enum { BOUND_OPTION, BOUND_LINE, BOUND_DEFAULT } BoundFrom;
static int line_config(const JsonValue *object, const Options *o, Config *c, double *bound,
                       BoundFrom *bound_from, char *err, size_t size)
{
    *c = o->config;
    if (Jsonl_apply_line(object, c, bound, err, size) || Config_validate(c, err, size) ||
        Options_check_memory(o, c, err, size))
        return -1;
    *bound_from = BOUND_LINE;
    if (o->max_time > 0) {
        *bound = o->max_time;
        *bound_from = BOUND_OPTION;
    } else if (!(*bound > 0)) {
        *bound = BATCH_MAX_SECONDS;
        *bound_from = BOUND_DEFAULT;
    }
    if (o->no_confirm)
        *bound = 0;
    return 0;
}

/* c's estimate at this machine's rates, measured once, for the first line that needs them. */
static double measured_estimate(const Config *c, const Options *o, Pricing *pricing)
{
    if (!pricing->measured)
        pricing->rates = Rates_measure();
    pricing->measured = true;
    return Compute_estimate_seconds(c, o->sweep_tokens, false, false, pricing->rates,
                                    pricing->two_lanes);
}

/* Whether c's estimate passes the line's bound (0: none), which bound_from gave: 0, or -1
   with err saying so. */
static int within_bound(const Config *c, const Options *o, double bound, BoundFrom bound_from,
                        Pricing *pricing, char *err, size_t size)
{
    if (!(bound > 0))
        return 0;
    /* Measuring (~0.1 s) is skipped when a machine 100 times slower than the reference, the
       slowest the calibration admits, would stay under the bound, as batch does. */
    if (100 * Compute_estimate_seconds(c, o->sweep_tokens, false, false, Cost_reference_rates(),
                                       pricing->two_lanes) <=
        bound)
        return 0;
    double seconds = measured_estimate(c, o, pricing);
    if (seconds <= bound)
        return 0;
    char took[80], most[64], suggested[200];
    Duration_text_seconds(seconds, took, sizeof took);
    Rates_suggest_bound(seconds, suggested, sizeof suggested);
    if (bound_from == BOUND_DEFAULT)
        snprintf(most, sizeof most, "the default bound of an hour");
    else {
        char bound_text[32];
        Duration_text(bound, DURATION_PLAIN, bound_text, sizeof bound_text);
        snprintf(most, sizeof most, "%s bound of %s",
                 bound_from == BOUND_OPTION ? "--max-time's" : "the line's", bound_text);
    }
    snprintf(err, size,
             "T = %d, d = %d, depth %d, %d seed%s is estimated at %s, above %s (--max-time on "
             "the command line overrides a line's \"%s\"; without either the bound is an "
             "hour): to go ahead, give --max-time %s",
             c->tokens, c->width, c->depth, c->seeds, c->seeds == 1 ? "" : "s", took, most,
             MAX_TIME_KEY, suggested);
    return -1;
}

/* --verbose: the line's estimate at this machine's rates, said before it computes. */
static double say_estimate(const Config *c, const Options *o, Pricing *pricing, const char *named)
{
    double seconds = measured_estimate(c, o, pricing);
    fprintf(stderr,
            "attnscope: %s: estimate %.3g s for T = %d, d = %d, depth %d, %d seed%s%s (dgemm at "
            "%.1f GFLOP/s per core, %s)\n",
            named, seconds, c->tokens, c->width, c->depth, c->seeds, c->seeds == 1 ? "" : "s",
            o->sweep_tokens ? ", width sweep" : "", pricing->rates.flops_per_second / 1e9,
            pricing->two_lanes ? "two lanes" : "one lane");
    return seconds;
}

/* How many lines were objects, and how many of them held each setting's key: a setting the
   command line (or a preset) chose that every line sets had no effect (grid writes every
   key), which Jsonl_run says at the end. */
typedef struct {
    long lines;
    long *held; /* per setting, in table order */
} KeysHeld;

static void count_keys(KeysHeld *k, const JsonValue *object)
{
    if (!k->held || object->kind != JSON_OBJECT)
        return;
    k->lines++;
    for (int i = 0; i < object->count; i++) {
        const Setting *s = setting_of_key(object->keys[i]);
        if (s)
            k->held[s - Settings_at(0)]++;
    }
}

static void warn_overridden(const Options *o, const KeysHeld *k)
{
    for (int i = 0; k->held && k->lines > 0 && i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (k->held[i] != k->lines || !Options_chosen(o, s->name))
            continue;
        char origin[256], value[64], setting[400];
        Options_describe_origin(o, s->name, origin, sizeof origin);
        Setting_format(s, &o->config, 0, value, sizeof value);
        if (Options_given(o, s->name)) /* "--depth 4" */
            snprintf(setting, sizeof setting, "%s %s", origin, value);
        else /* "depth 4 (--preset FILE)" */
            snprintf(setting, sizeof setting, "%s %s (%s)", s->name, value, origin);
        fprintf(stderr,
                "attnscope: warning: %s had no effect: every line sets \"%s\", which wins (a "
                "line's settings replace the command line's; leave the key out of the lines to "
                "take it from the command line)\n",
                setting, s->json);
    }
}

/* One line (named so for --verbose) into r: the configuration it describes (into *c, *valid
   when it is), checked, priced against its bound, then run; with --verbose its estimate is said
   before and its time after.  Returns 0, 2 (bad input or above its bound) or 1 (the
   computation failed), with the message in err. */
static int run_line(const Options *o, const char *text, size_t length, const char *named,
                    const Progress *lanes, Pricing *pricing, KeysHeld *keys, Workspace *w,
                    Result *r, WidthSweep *sweep, Config *c, bool *valid, char *err, size_t size)
{
    *valid = false;
    char message[OPTIONS_ERROR_SIZE];
    JsonValue *object = Json_parse(text, length, message, sizeof message);
    if (!object) {
        snprintf(err, size,
                 "%.400s (a line is one JSON object of settings, as {\"T\": 64, \"d\": 64})",
                 message);
        return 2;
    }
    count_keys(keys, object);
    double bound = 0;
    BoundFrom bound_from;
    int bad = line_config(object, o, c, &bound, &bound_from, message, sizeof message);
    *valid = !bad;
    bad = bad || within_bound(c, o, bound, bound_from, pricing, message, sizeof message);
    JsonValue_free(object);
    if (bad) {
        snprintf(err, size, "%s", message);
        return 2;
    }
    double estimate = o->verbose ? say_estimate(c, o, pricing, named) : NAN;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    if (Compute_batch(c, o->sweep_tokens, lanes, w, r, sweep, err, size))
        return 1;
    if (o->verbose)
        fprintf(stderr, "attnscope: %s: computed in %.3g s (estimate %.3g s)\n", named,
                seconds_since(&start), estimate);
    Options_warn_inert(o, c, &r->warnings);
    return 0;
}

/* The number in the whole grid of the input's first line (JSONL_FIRST_LINE_ENV, which the
   sweep scripts set for a job's chunk), or 1 where it is unset or not a whole number >= 1. */
static long first_line_number(void)
{
    const char *text = getenv(JSONL_FIRST_LINE_ENV);
    char *end;
    long first = text && *text ? strtol(text, &end, 10) : 1;
    return text && *text && !*end && first >= 1 ? first : 1;
}

/* "line 7" of the input; of a job's chunk, "line 7 of the grid (line 1 of this job's)". */
static void line_name(long line, long first, char *buf, size_t size)
{
    if (first == 1)
        snprintf(buf, size, "line %ld", line);
    else
        snprintf(buf, size, "line %ld of the grid (line %ld of this job's)", first - 1 + line,
                 line);
}

int Jsonl_run(const Options *o, const Progress *lanes, Workspace *w, Result *r, FILE *in, FILE *out)
{
    /* A folder reads as EISDIR, which the reader would take for a failed read (exit 1): it is
       bad input, refused before the first line as any folder given for a file is. */
    struct stat st;
    if (fstat(fileno(in), &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "attnscope: --jsonl: standard input is a directory: accepted JSON Lines "
                        "from a file or a pipe (attnscope --batch --jsonl < FILE)\n");
        return 2;
    }
    /* Lines that share weights (same seed, sizes, kind, ...; another depth, gap or seed
       count) then compute only what is missing; the results are bit for bit those of a
       fresh workspace.  A quarter of the budget bounds what is kept. */
    Workspace_keep_layers(w, (size_t)(Options_memory_budget(o) / 4));
    if (o->verbose)
        Options_say_memory_budget(o, stderr);
    LineReader lines = LineReader_start(in, "standard input");
    LineStatus got = LINE_END;
    int status = 0;
    Text record = {0};
    WidthSweep sweep;
    char err[OPTIONS_ERROR_SIZE];
    Pricing pricing = {.two_lanes = lanes != NULL};
    KeysHeld keys = {.held = calloc((size_t)Settings_count(), sizeof *keys.held)};
    long first = first_line_number();
    char named[96];
    while ((got = LineReader_next(&lines, err, sizeof err)) == LINE_READ) {
        long line = lines.number;
        const char *text = lines.text;
        if (blank(text, lines.length))
            continue; /* a trailing empty line is common and says nothing */
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        line_name(line, first, named, sizeof named);
        Config c;
        bool valid;
        int outcome = run_line(o, text, lines.length, named, lanes, &pricing, &keys, w, r, &sweep,
                               &c, &valid, err, sizeof err);
        record.length = 0;
        if (outcome) {
            fprintf(stderr, "attnscope: %s: %s\n", named, err);
            error_record(err, line, valid ? &c : NULL, &record);
            if (status != 1)
                status = outcome;
        } else {
            result_record(r, o->sweep_tokens ? &sweep : NULL, line, seconds_since(&start), &record);
        }
        if (record.failed) {
            fprintf(stderr, "attnscope: %s: out of memory writing the record\n", named);
            status = 1;
            break;
        }
        /* Each record is flushed whole, so that a reader (or a killed run's output) never
           holds half a line. */
        if (fwrite(record.data, 1, record.length, out) != record.length || fflush(out) != 0) {
            perror("attnscope: stdout");
            status = 1;
            break;
        }
    }
    /* A line that cannot be read ends the run with its reason, never as the input's end:
       what follows it is unknown. */
    if (got != LINE_READ && got != LINE_END) {
        fprintf(stderr, "attnscope: %s\n", err);
        if (status != 1)
            status = LineStatus_exit_status(got);
    }
    warn_overridden(o, &keys);
    free(keys.held);
    LineReader_release(&lines);
    Text_free(&record);
    return status;
}
