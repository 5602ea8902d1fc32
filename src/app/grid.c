#include "grid.h"

#include "jsonl.h"
#include "options.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum {
    GRID_TERMS_MAX = SETTINGS_MAX,
    GRID_VALUES_MAX = 256,
    /* A bound that a typo (a list pasted twice) meets before the disk does. */
    GRID_LINES_MAX = 1000000,
};

typedef struct {
    const Setting *setting;
    int count;
    char *values[GRID_VALUES_MAX];   /* as given, for messages */
    double numbers[GRID_VALUES_MAX]; /* each value parsed once (Setting_put sets it) */
} Term;

typedef struct {
    int count;
    Term terms[GRID_TERMS_MAX];
    long shards;
} Grid;

static const Setting *setting_named(const char *key)
{
    for (int i = 0; i < Settings_count(); i++)
        if (strcmp(Settings_at(i)->json, key) == 0 || strcmp(Settings_at(i)->name, key) == 0)
            return Settings_at(i);
    return NULL;
}

/* The earlier value of t equal to `number`, or NULL: a value given twice would make the same
   configuration twice, whose seeds merge then refuses to count twice. */
static const char *earlier_equal(const Term *t, double number)
{
    for (int j = 0; j < t->count; j++)
        if (t->numbers[j] == number)
            return t->values[j];
    return NULL;
}

/* One KEY=V1,V2,... (cut in place).  Returns 0 or -1 with the message. */
static int parse_term(Grid *g, char *text, char *err, size_t size)
{
    char *eq = strchr(text, '=');
    *eq = '\0';
    const Setting *s = setting_named(text);
    if (!s) {
        char names[1024];
        Settings_names(true, names, sizeof names);
        snprintf(err, size,
                 "grid term '%.40s=...': unknown key; accepted: %s (or the long option names)",
                 text, names);
        return -1;
    }
    for (int i = 0; i < g->count; i++)
        if (g->terms[i].setting == s) {
            snprintf(err, size, "grid term '%.40s=...': %s is already a term of the grid", text,
                     s->json);
            return -1;
        }
    /* A setting is a term once at most, so the terms fit (GRID_TERMS_MAX = SETTINGS_MAX). */
    Term *t = &g->terms[g->count++];
    t->setting = s;
    char *rest = eq + 1;
    for (;;) {
        char *comma = strchr(rest, ',');
        if (comma)
            *comma = '\0';
        Config scratch = Config_default();
        char message[OPTIONS_ERROR_SIZE];
        if (Setting_parse(s, &scratch, rest, message, sizeof message)) {
            snprintf(err, size, "grid term %.40s=: %.400s", text, message);
            return -1;
        }
        double number = Setting_get(s, &scratch);
        const char *same = earlier_equal(t, number);
        if (same) {
            snprintf(err, size,
                     "grid term %s=: '%.40s' repeats '%.40s'; accepted distinct values (a "
                     "configuration twice would count its seeds twice in merge)",
                     text, rest, same);
            return -1;
        }
        if (t->count == GRID_VALUES_MAX) {
            snprintf(err, size, "grid term %s=: accepted at most %d values", text, GRID_VALUES_MAX);
            return -1;
        }
        t->values[t->count] = rest;
        t->numbers[t->count++] = number;
        if (!comma)
            return 0;
        rest = comma + 1;
    }
}

/* Splits a grid argument at blanks into terms. */
static int parse_terms(Grid *g, char *text, char *err, size_t size)
{
    for (char *word = strtok(text, " \t\n"); word; word = strtok(NULL, " \t\n")) {
        if (!strchr(word, '=') || word[0] == '=') {
            snprintf(err, size, "grid term '%.40s': accepted KEY=V1,V2,... (e.g. T=256,512)", word);
            return -1;
        }
        if (parse_term(g, word, err, size))
            return -1;
    }
    return 0;
}

static int parse_shards(Grid *g, const char *text, char *err, size_t size)
{
    char *end;
    long n = strtol(text, &end, 10);
    if (*text < '0' || *text > '9' || *end || n < 1 || n > CONFIG_SEEDS_MAX) {
        snprintf(err, size, "--shards '%.40s': accepted a whole number 1..%d", text,
                 CONFIG_SEEDS_MAX);
        return -1;
    }
    g->shards = n;
    return 0;
}

/* The options that make no sense for a grid, which prints configurations and runs nothing. */
static int refuse_run_options(const Options *o, char *err, size_t size)
{
    const char *which = o->batch                ? "--batch"
                        : o->jsonl              ? "--jsonl"
                        : o->export_dir         ? "--export"
                        : o->sweep_tokens       ? "--sweep-T"
                        : o->trace_path         ? "--trace"
                        : o->weights_path       ? "--weights"
                        : o->token_ids_path     ? "--token-ids"
                        : o->export_weights_dir ? "--export-weights"
                        : o->hf_config.file[0]  ? "--hf-config"
                                                : NULL;
    if (o->max_memory) {
        snprintf(err, size,
                 "grid: --max-memory is not accepted (grid checks the configurations' settings, "
                 "not memory; give --max-memory to attnscope --batch --jsonl, which checks each "
                 "line against the memory where it runs)");
        return -1;
    }
    if (!which)
        return 0;
    snprintf(err, size,
             "grid: %s is not accepted (grid prints configurations; run them with "
             "attnscope --batch --jsonl)",
             which);
    return -1;
}

/* The configuration's settings as KEY=VALUE words, for messages. */
static void describe(const Grid *g, const Config *c, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < g->count && used < size; i++) {
        char value[64];
        Setting_format(g->terms[i].setting, c, 0, value, sizeof value);
        used += (size_t)snprintf(buf + used, size - used, "%s%s=%s", i ? " " : "",
                                 g->terms[i].setting->json, value);
    }
}

/* --max-time passed on to the line's run (--batch --jsonl bounds its estimate by it), as a
   last member of the configuration's object. */
static void max_time_member(const Options *o, Text *line)
{
    if (!(o->max_time > 0) || line->failed || !line->length)
        return;
    line->length--; /* the object's closing brace */
    Text_printf(line, ",\"max_time\":");
    Json_number(line, o->max_time);
    Text_printf(line, "}");
}

/* Whether term i sets the seed range (seed, seeds): configurations that differ only in these
   are one run to merge (its records grouped by every other setting), whose ranges must tile
   one range. */
static bool sets_seed_range(const Grid *g, int i)
{
    return (g->terms[i].setting->reuse & (REUSE_SEED | REUSE_ENSEMBLE)) != 0;
}

/* The configuration at index: the base settings with each term's value. */
static Config configuration_at(const Grid *g, const Options *o, const int *index)
{
    Config c = o->config;
    for (int i = 0; i < g->count; i++)
        Setting_put(g->terms[i].setting, &c, g->terms[i].numbers[index[i]]);
    return c;
}

typedef struct {
    uint64_t seed;
    int seeds;
    int index[GRID_TERMS_MAX];
} SeedRange;

static int by_seed(const void *a, const void *b)
{
    const SeedRange *x = a, *y = b;
    if (x->seed != y->seed)
        return x->seed < y->seed ? -1 : 1;
    return (x->seeds > y->seeds) - (x->seeds < y->seeds);
}

/* The configurations that share index's values of every term but seed and seeds (index's
   own seed-range terms at their first value) tile one range of seeds, as merge requires of
   the records it groups as one run: 0, else 2 with err naming two that overlap or leave a
   gap, or 1 when out of memory. */
static int check_seed_group(const Grid *g, const Options *o, const int *index, char *err,
                            size_t size)
{
    int members = 1;
    for (int i = 0; i < g->count; i++)
        members *= sets_seed_range(g, i) ? g->terms[i].count : 1; /* at most 256 x 256 */
    if (members == 1)
        return 0;
    SeedRange *range = malloc(sizeof *range * (size_t)members);
    if (!range) {
        snprintf(err, size, "grid: out of memory");
        return 1;
    }
    SeedRange at = {0};
    memcpy(at.index, index, sizeof at.index);
    for (int m = 0; m < members; m++) {
        Config c = configuration_at(g, o, at.index);
        at.seed = c.seed;
        at.seeds = c.seeds;
        range[m] = at;
        int i = g->count - 1; /* the next combination of the seed-range terms' values */
        while (i >= 0 && (!sets_seed_range(g, i) || ++at.index[i] == g->terms[i].count)) {
            if (sets_seed_range(g, i))
                at.index[i] = 0;
            i--;
        }
    }
    qsort(range, (size_t)members, sizeof *range, by_seed);
    int status = 0;
    for (int m = 1; m < members && status == 0; m++) {
        const SeedRange *p = &range[m - 1], *r = &range[m];
        uint64_t end = p->seed + (uint64_t)p->seeds;
        if (r->seed == end)
            continue;
        char first[300], second[300];
        Config pc = configuration_at(g, o, p->index), rc = configuration_at(g, o, r->index);
        describe(g, &pc, first, sizeof first);
        describe(g, &rc, second, sizeof second);
        snprintf(err, size,
                 "grid: %.100s (seeds %llu..%llu) and %.100s (seeds %llu..%llu) %s; accepted "
                 "seed ranges that differ only in seed and seeds when they tile one range "
                 "(merge counts them as one run)",
                 first, (unsigned long long)p->seed, (unsigned long long)end - 1, second,
                 (unsigned long long)r->seed,
                 (unsigned long long)r->seed + (unsigned long long)r->seeds - 1,
                 r->seed < end ? "overlap: merge would count a seed twice"
                               : "leave a gap: merge would refuse the seeds between as missing");
        status = 2;
    }
    free(range);
    return status;
}

/* Every configuration of the grid (the last term varying fastest), each as its shards, to out;
   with out NULL, only the checks, so that a grid with a bad configuration writes nothing. */
static int expand(const Grid *g, const Options *o, FILE *out, char *err, size_t size)
{
    long lines = g->shards;
    for (int i = 0; i < g->count; i++)
        lines = lines * g->terms[i].count > GRID_LINES_MAX ? GRID_LINES_MAX + 1
                                                           : lines * g->terms[i].count;
    if (lines > GRID_LINES_MAX) {
        snprintf(err, size, "grid: more than %d lines; accepted at most that many", GRID_LINES_MAX);
        return 2;
    }
    int index[GRID_TERMS_MAX] = {0};
    Text line = {0};
    int status = 0;
    for (;;) {
        Config c = configuration_at(g, o, index);
        char message[OPTIONS_ERROR_SIZE], where[300];
        describe(g, &c, where, sizeof where);
        /* Not this machine's memory: the lines run elsewhere (a compute node, a larger
           cgroup), and --batch --jsonl checks each against the memory where it runs. */
        if (Config_validate(&c, message, sizeof message)) {
            snprintf(err, size, "grid: %.100s: %.400s", where, message);
            status = 2;
            break;
        }
        if (g->shards > c.seeds) {
            snprintf(err, size,
                     "--shards %ld: accepted 1..%d for %s (a shard is a range of at least one "
                     "of its %d seeds)",
                     g->shards, c.seeds, where, c.seeds);
            status = 2;
            break;
        }
        bool first_of_group = true; /* of the configurations that differ only in seed range */
        for (int i = 0; i < g->count; i++)
            first_of_group = first_of_group && (!sets_seed_range(g, i) || index[i] == 0);
        if (!out && first_of_group && (status = check_seed_group(g, o, index, err, size)))
            break;
        /* Shard k has seeds/shards seeds, one more for the first seeds % shards: contiguous
           ranges from the configuration's seed, whose union is exactly its seeds. */
        Config shard = c;
        for (long k = 0; out && k < g->shards; k++) {
            shard.seeds = c.seeds / (int)g->shards + (k < c.seeds % g->shards ? 1 : 0);
            line.length = 0;
            Jsonl_write_config(&shard, &line);
            max_time_member(o, &line);
            Text_printf(&line, "\n");
            if (line.failed || fwrite(line.data, 1, line.length, out) != line.length) {
                snprintf(err, size, "grid: writing the output failed");
                status = 1;
                break;
            }
            shard.seed += (uint64_t)shard.seeds;
        }
        if (status)
            break;
        int i = g->count - 1;
        while (i >= 0 && ++index[i] == g->terms[i].count)
            index[i--] = 0;
        if (i < 0)
            break;
    }
    Text_free(&line);
    if (status == 0 && out && fflush(out) != 0) {
        snprintf(err, size, "grid: writing the output failed");
        status = 1;
    }
    return status;
}

int Grid_main(int argc, char **argv, FILE *out)
{
    Grid *g = calloc(1, sizeof *g);
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    char **copies = calloc((size_t)argc + 1, sizeof *copies);
    char err[OPTIONS_ERROR_SIZE];
    int status = 2, kept = 0, copied = 0;
    if (!g || !rest || !copies) {
        fprintf(stderr, "attnscope: out of memory\n");
        status = 1;
        goto done;
    }
    g->shards = 1;
    rest[kept++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--shards") == 0 || strncmp(a, "--shards=", 9) == 0) {
            const char *value = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
            if (!value) {
                snprintf(err, sizeof err, "--shards: needs a value (see --help)");
                goto refused;
            }
            if (parse_shards(g, value, err, sizeof err))
                goto refused;
        } else if (strcmp(a, "--verbose") == 0) {
            /* Refused here, before the options' own rule names --batch and the screen. */
            snprintf(err, sizeof err,
                     "grid: --verbose is not accepted (grid prints configurations; attnscope "
                     "--batch --jsonl --verbose says each line's estimate and time as it runs)");
            goto refused;
        } else if (a[0] != '-' && strchr(a, '=')) {
            /* Terms are cut in place, so they work on a copy of the argument. */
            if (!(copies[copied] = strdup(a))) {
                fprintf(stderr, "attnscope: out of memory\n");
                status = 1;
                goto done;
            }
            if (parse_terms(g, copies[copied++], err, sizeof err))
                goto refused;
        } else {
            rest[kept++] = argv[i];
        }
    }
    Options o;
    if (Options_parse_each(kept, rest, &o, err, sizeof err) ||
        refuse_run_options(&o, err, sizeof err))
        goto refused;
    Options_warn_dropped(&o, stderr);
    if (o.help || o.version) {
        Options_usage(stdout);
        status = Options_flush_stdout();
        goto done;
    }
    status = expand(g, &o, NULL, err, sizeof err);
    if (status == 0)
        status = expand(g, &o, out, err, sizeof err);
    if (status)
        goto refused;
    goto done;
refused:
    fprintf(stderr, "attnscope: %s\n", err);
done:
    for (int i = 0; i < copied; i++)
        free(copies[i]);
    free(copies);
    free(rest);
    free(g);
    return status;
}
