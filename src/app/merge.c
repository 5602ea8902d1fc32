#include "merge.h"

#include "attnscope/format.h"
#include "json.h"
#include "json_read.h"
#include "jsonl.h"
#include "line_reader.h"
#include "merge_keys.h"
#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The ensemble members a merge combines: for each network, the mean and M2 per layer. */
enum { BAND_NETWORK, BAND_COUNTERPART, BANDS };
static const char *const MEAN_KEY[BANDS] = {"stable_rank_mean", "counterpart_stable_rank_mean"};
static const char *const STD_KEY[BANDS] = {"stable_rank_std", "counterpart_stable_rank_std"};
static const char *const M2_KEY[BANDS] = {"stable_rank_m2", "counterpart_stable_rank_m2"};
static const char *const COUNT_KEY[BANDS] = {"stable_rank_count", "counterpart_stable_rank_count"};
static const char *const LOST_KEY[BANDS] = {"stable_rank_lost", "counterpart_stable_rank_lost"};
/* The first seed's stable rank per layer, null where it has none. */
static const char *const FIRST_SEED_KEY[BANDS] = {"stable_rank", "counterpart_stable_rank"};
/* What one run's circumstances are: listed per shard in merged_from, not copied. */
static const char *const RUN_KEYS[] = {"line", "blas_threads", "elapsed_seconds", "provenance",
                                       "merged_from"};

/* A record keeps its line's text and what grouping needs; its parsed document (about ten
   times the text) exists only while its group is merged, so that a large sweep fits. */
typedef struct {
    const char *file;
    long line;
    char *text;
    size_t length;
    Config config;
    char *version, *rng;
    char weights[96]; /* the checkpoint's bytes and content hash, "" for drawn weights */
    char *error;      /* a failed line's reason (its config read), or NULL */
    JsonValue *doc;   /* while merged */
    const JsonValue *mean[BANDS], *m2[BANDS], *count[BANDS], *lost[BANDS];
} Record;

typedef struct {
    Record *records;
    int count, capacity;
    char err[OPTIONS_ERROR_SIZE];
} Input;

/* A record's configuration without its seed range: what shards of one run share. */
static bool same_run(const Config *a, const Config *b)
{
    return Config_same_in(a, b, ~(unsigned)(REUSE_SEED | REUSE_ENSEMBLE));
}

/* Records of one run: the same settings and the same weights (drawn, or one checkpoint's
   contents). */
static bool same_group(const Record *a, const Record *b)
{
    return same_run(&a->config, &b->config) && strcmp(a->weights, b->weights) == 0;
}

static const JsonValue *member_of_kind(const JsonValue *doc, const char *key, JsonKind kind,
                                       char *err, size_t size)
{
    const JsonValue *v = JsonValue_member(doc, key);
    if (!v || v->kind != kind) {
        snprintf(err, size, "\"%s\": expected %s, found %s", key, JsonKind_name(kind),
                 v ? JsonKind_name(v->kind) : "nothing (not a result record of this version?)");
        return NULL;
    }
    return v;
}

/* A per-layer array of numbers or nulls, one per layer 0..depth. */
static const JsonValue *layer_array(const JsonValue *doc, const char *key, int layers, char *err,
                                    size_t size)
{
    const JsonValue *v = member_of_kind(doc, key, JSON_ARRAY, err, size);
    if (!v)
        return NULL;
    for (int i = 0; i < v->count; i++)
        if (v->items[i].kind != JSON_NUMBER && v->items[i].kind != JSON_NULL) {
            snprintf(err, size, "\"%s\": expected numbers or null, found %s", key,
                     JsonKind_name(v->items[i].kind));
            return NULL;
        }
    if (v->count != layers) {
        snprintf(err, size, "\"%s\": expected %d values (layers 0..depth), found %d", key, layers,
                 v->count);
        return NULL;
    }
    return v;
}

/* Refuses statistics no run can give: a layer's count of seeds and its lost seeds are whole
   numbers in [0, seeds] that sum to at most seeds, with a mean and an M2 where the count is
   above 0 and none is lost, and neither where one is; a stable rank lies in
   [1, min(T, d)] (1 + a sum of non-negative terms, at most the rank), so a mean lies there
   too and the M2 of n such values in [0, floor(n/2) ceil(n/2) / n (max - min)^2] (half the
   seeds at each end); the upper bounds with a relative 1e-9 for rounding.  0 or -1 with the
   message. */
static int check_statistics(const Record *r, int band, char *err, size_t size)
{
    double top = r->config.tokens < r->config.width ? r->config.tokens : r->config.width;
    for (int l = 0; l < r->mean[band]->count; l++) {
        const JsonValue *mean = &r->mean[band]->items[l], *m2 = &r->m2[band]->items[l];
        const JsonValue *count = &r->count[band]->items[l], *lost = &r->lost[band]->items[l];
        double n = count->kind == JSON_NUMBER ? count->number : -1;
        double gone = lost->kind == JSON_NUMBER ? lost->number : -1;
        bool numbers = mean->kind == JSON_NUMBER || m2->kind == JSON_NUMBER;
        if (!(n >= 0 && gone >= 0 && n + gone <= r->config.seeds && n == floor(n) &&
              gone == floor(gone)) ||
            (n > 0 && gone == 0 && (mean->kind != JSON_NUMBER || m2->kind != JSON_NUMBER)) ||
            (gone > 0 && numbers)) {
            snprintf(err, size,
                     "\"%s\"[%d] = %.40s and \"%s\"[%d] = %.40s: expected whole numbers of "
                     "seeds summing to at most %d, with a mean and an M2 where the first is "
                     "above 0 and the second 0, and neither where the second is above 0",
                     COUNT_KEY[band], l, count->kind == JSON_NUMBER ? count->text : "null",
                     LOST_KEY[band], l, lost->kind == JSON_NUMBER ? lost->text : "null",
                     r->config.seeds);
            return -1;
        }
        double half = floor(n / 2);
        double m2_top = n > 0 ? half * (n - half) / n * (top - 1) * (top - 1) : 0;
        if (mean->kind == JSON_NUMBER && !(mean->number >= 1 && mean->number <= top * (1 + 1e-9))) {
            snprintf(err, size,
                     "\"%s\"[%d] = %.40s: a mean stable rank lies in [1, min(T, d) = %g]",
                     MEAN_KEY[band], l, mean->text, top);
            return -1;
        }
        if (m2->kind == JSON_NUMBER && !(m2->number >= 0 && m2->number <= m2_top * (1 + 1e-9))) {
            snprintf(err, size,
                     "\"%s\"[%d] = %.40s: the M2 of %g stable ranks in [1, %g] lies in [0, %g]",
                     M2_KEY[band], l, m2->text, n, top, m2_top);
            return -1;
        }
    }
    return 0;
}

/* "weights" is null (drawn) or the checkpoint's identity: r->weights its bytes and content
   hash, "" for null.  0 or -1 with the message. */
static int read_weights(Record *r, char *err, size_t size)
{
    const JsonValue *w = JsonValue_member(r->doc, "weights");
    r->weights[0] = '\0';
    if (w && w->kind == JSON_NULL)
        return 0;
    const JsonValue *bytes = w && w->kind == JSON_OBJECT ? JsonValue_member(w, "bytes") : NULL;
    const JsonValue *hash =
        w && w->kind == JSON_OBJECT ? JsonValue_member(w, "content_hash") : NULL;
    const size_t prefix = strlen("sha256:");
    if (!bytes || bytes->kind != JSON_NUMBER || !hash || hash->kind != JSON_STRING ||
        strlen(hash->text) != prefix + 64 || strncmp(hash->text, "sha256:", prefix) != 0 ||
        strspn(hash->text + prefix, "0123456789abcdef") != 64 || strlen(bytes->text) > 20) {
        snprintf(err, size,
                 "\"weights\": expected null or {\"path\", \"bytes\", \"content_hash\" "
                 "(\"sha256:\" and 64 hex digits)}, found %s",
                 w ? JsonKind_name(w->kind) : "nothing (not a result record of this version?)");
        return -1;
    }
    snprintf(r->weights, sizeof r->weights, "%s:%s", bytes->text, hash->text);
    return 0;
}

/* "warnings", when there, is a list of texts: merge writes each once. */
static int check_warnings(const JsonValue *doc, char *err, size_t size)
{
    const JsonValue *w = JsonValue_member(doc, "warnings");
    if (!w)
        return 0;
    if (w->kind != JSON_ARRAY) {
        snprintf(err, size, "\"warnings\": expected an array of strings, found %s",
                 JsonKind_name(w->kind));
        return -1;
    }
    for (int k = 0; k < w->count; k++)
        if (w->items[k].kind != JSON_STRING) {
            snprintf(err, size, "\"warnings\"[%d]: expected a string, found %s", k,
                     JsonKind_name(w->items[k].kind));
            return -1;
        }
    return 0;
}

/* A failed line's record: kept (r->error) when it names its configuration, so that the record
   of the line run again can take its place (supersede_failed); else refused.  0 or -1. */
static int read_failed(Record *r, const JsonValue *error, char *err, size_t size)
{
    const char *why = error->kind == JSON_STRING ? error->text : "?";
    const JsonValue *config = JsonValue_member(r->doc, "config");
    char message[OPTIONS_ERROR_SIZE];
    r->config = Config_default();
    if (!config || Jsonl_apply_config(config, &r->config, message, sizeof message) ||
        Config_validate(&r->config, message, sizeof message)) {
        snprintf(err, size,
                 "a failed record (error: %.200s) cannot be merged: run that configuration again",
                 why);
        return -1;
    }
    r->error = strdup(why);
    if (!r->error) {
        snprintf(err, size, "out of memory");
        return -1;
    }
    return 0;
}

/* Checks r->doc and fills r's config and ensemble from it, and *version and *rng; 0 or -1
   with the message. */
static int read_record(Record *r, const JsonValue **version_out, const JsonValue **rng_out,
                       char *err, size_t size)
{
    const JsonValue *doc = r->doc, *v;
    if (doc->kind != JSON_OBJECT) {
        snprintf(err, size, "expected a result record (an object), found %s",
                 JsonKind_name(doc->kind));
        return -1;
    }
    if ((v = JsonValue_member(doc, "error")))
        return read_failed(r, v, err, size);
    const JsonValue *version = member_of_kind(doc, "attnscope", JSON_STRING, err, size);
    const JsonValue *rng = version ? member_of_kind(doc, "rng", JSON_STRING, err, size) : NULL;
    const JsonValue *config = rng ? member_of_kind(doc, "config", JSON_OBJECT, err, size) : NULL;
    if (!config)
        return -1;
    *version_out = version;
    *rng_out = rng;
    const JsonValue *input = JsonValue_member(config, "input_source");
    if (input) { /* not the settings' alone: another shard could not run the same input */
        snprintf(err, size,
                 "config: input_source %.200s: a record whose input is a token-id file or a "
                 "checkpoint's table cannot be merged (merge combines runs of settings alone)",
                 input->kind == JSON_STRING ? input->text : "?");
        return -1;
    }
    r->config = Config_default();
    char message[OPTIONS_ERROR_SIZE];
    if (Jsonl_apply_config(config, &r->config, message, sizeof message) ||
        Config_validate(&r->config, message, sizeof message)) {
        snprintf(err, size, "config: %.400s", message);
        return -1;
    }
    for (int i = 0; i < Settings_count(); i++)
        if (!JsonValue_member(config, Settings_at(i)->json)) {
            snprintf(err, size, "config: \"%s\" is missing (a record names every setting)",
                     Settings_at(i)->json);
            return -1;
        }
    const JsonValue *done = member_of_kind(doc, "seeds_done", JSON_NUMBER, err, size);
    if (!done)
        return -1;
    if (done->number != r->config.seeds) {
        snprintf(err, size, "seeds_done %s of seeds %d: a run stopped early cannot be merged",
                 done->text, r->config.seeds);
        return -1;
    }
    for (int b = 0; b < BANDS; b++) {
        r->mean[b] = layer_array(doc, MEAN_KEY[b], r->config.depth + 1, err, size);
        r->m2[b] = r->mean[b] ? layer_array(doc, M2_KEY[b], r->config.depth + 1, err, size) : NULL;
        r->count[b] =
            r->m2[b] ? layer_array(doc, COUNT_KEY[b], r->config.depth + 1, err, size) : NULL;
        r->lost[b] =
            r->count[b] ? layer_array(doc, LOST_KEY[b], r->config.depth + 1, err, size) : NULL;
        if (!r->lost[b] || check_statistics(r, b, err, size) ||
            !layer_array(doc, FIRST_SEED_KEY[b], r->config.depth + 1, err, size))
            return -1;
    }
    return read_weights(r, err, size) ? -1 : check_warnings(doc, err, size);
}

static bool blank(const char *text, size_t length)
{
    for (size_t i = 0; i < length; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r' && text[i] != '\n')
            return false;
    return true;
}

/* The record on the line just read, checked and kept; 0, or 2 / 1 with in->err set. */
static int add_record(Input *in, const char *path, const LineReader *lines)
{
    if (in->count == in->capacity) {
        int want = in->capacity ? 2 * in->capacity : 64;
        Record *grown = realloc(in->records, sizeof *grown * (size_t)want);
        if (!grown) {
            snprintf(in->err, sizeof in->err, "merge: out of memory");
            return 1;
        }
        in->records = grown;
        in->capacity = want;
    }
    Record *r = &in->records[in->count];
    memset(r, 0, sizeof *r);
    r->file = path;
    r->line = lines->number;
    char message[OPTIONS_ERROR_SIZE];
    r->doc = Json_parse(lines->text, lines->length, message, sizeof message);
    const JsonValue *version, *rng;
    if (!r->doc || read_record(r, &version, &rng, message, sizeof message)) {
        JsonValue_free(r->doc);
        snprintf(in->err, sizeof in->err, "%s:%ld: %.400s", lines->name, lines->number, message);
        return 2;
    }
    if (r->error) { /* kept for its configuration alone */
        JsonValue_free(r->doc);
        r->doc = NULL;
        in->count++;
        return 0;
    }
    r->version = strdup(version->text);
    r->rng = strdup(rng->text);
    r->text = malloc(lines->length);
    r->length = lines->length;
    JsonValue_free(r->doc);
    r->doc = NULL;
    in->count++;
    if (!r->version || !r->rng || !r->text) {
        snprintf(in->err, sizeof in->err, "merge: out of memory");
        return 1;
    }
    memcpy(r->text, lines->text, lines->length);
    return 0;
}

/* Whether the input from the line just read on, whose first line does not parse alone, is one
   JSON document over several lines (--batch's document, which merge does not read line by
   line); read to its end, within the bound of a line. */
static bool one_document(LineReader *lines)
{
    char message[OPTIONS_ERROR_SIZE];
    JsonValue *doc = Json_parse(lines->text, lines->length, message, sizeof message);
    if (doc) {
        JsonValue_free(doc);
        return false;
    }
    size_t length = 0;
    char *whole = NULL;
    LineStatus got = LINE_READ;
    while (got == LINE_READ && length + lines->length <= lines->max) {
        char *grown = realloc(whole, length + lines->length + 1);
        if (!grown)
            break;
        whole = grown;
        memcpy(whole + length, lines->text, lines->length);
        length += lines->length;
        got = LineReader_next(lines, message, sizeof message);
    }
    doc = got == LINE_END ? Json_parse(whole, length, message, sizeof message) : NULL;
    bool one = doc != NULL;
    JsonValue_free(doc);
    free(whole);
    return one;
}

/* Every record of one file; 0, or 2 (bad input) / 1 (out of memory) with in->err set. */
static int read_file(Input *in, const char *path)
{
    bool standard = strcmp(path, "-") == 0;
    char message[OPTIONS_ERROR_SIZE];
    FILE *f = standard ? stdin : File_open_regular(path, message, sizeof message);
    if (!f) {
        snprintf(in->err, sizeof in->err, "merge: %.400s", message);
        return 2;
    }
    LineReader lines = LineReader_start(f, standard ? "standard input" : path);
    LineStatus got = LINE_END;
    int status = 0, before = in->count;
    while (status == 0 && (got = LineReader_next(&lines, message, sizeof message)) == LINE_READ) {
        if (!blank(lines.text, lines.length))
            status = add_record(in, path, &lines);
    }
    if (status == 2 && in->count == before && one_document(&lines))
        snprintf(in->err, sizeof in->err,
                 "merge: %s holds one JSON document over %ld lines (as --batch writes it); merge "
                 "reads JSON Lines, one record a line, as --batch --jsonl or jq -c writes",
                 lines.name, lines.number - 1 /* the end's number */);
    if (status == 0 && got != LINE_END) {
        snprintf(in->err, sizeof in->err, "merge: %.400s", message);
        status = LineStatus_exit_status(got);
    }
    if (status == 0 && in->count == before) {
        snprintf(in->err, sizeof in->err, "merge: %s holds no records (it is empty or blank)",
                 lines.name);
        status = 2;
    }
    LineReader_release(&lines);
    if (!standard)
        fclose(f);
    return status;
}

/* Setting by setting in table order (an enumeration by its index): records of a run, the
   seed range last. */
static int by_settings(const void *a, const void *b)
{
    const Record *x = *(Record *const *)a, *y = *(Record *const *)b;
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (strcmp(s->name, "seed") == 0 || strcmp(s->name, "seeds") == 0)
            continue;
        double p = Setting_get(s, &x->config), q = Setting_get(s, &y->config);
        if (p != q)
            return p < q ? -1 : 1;
    }
    int weights = strcmp(x->weights, y->weights);
    if (weights)
        return weights;
    if (x->config.seed != y->config.seed)
        return x->config.seed < y->config.seed ? -1 : 1;
    /* Equal ranges overlap and are refused; the input order keeps the message stable. */
    return x->line < y->line ? -1 : x->line > y->line;
}

/* A group's shards in seed order must tile one range: same version and generator, each
   range starting where the one before ends.  0 or -1 with the reason. */
static int check_tiling(Record **shard, int count, char *err, size_t size)
{
    for (int i = 1; i < count; i++) {
        const Record *a = shard[0], *p = shard[i - 1], *r = shard[i];
        if (strcmp(a->version, r->version) != 0 || strcmp(a->rng, r->rng) != 0) {
            snprintf(err, size,
                     "%s:%ld is attnscope %.40s (%.80s), %s:%ld is attnscope %.40s (%.80s): "
                     "results of different versions or generators are not merged",
                     a->file, a->line, a->version, a->rng, r->file, r->line, r->version, r->rng);
            return -1;
        }
        unsigned long long end = p->config.seed + (unsigned long long)p->config.seeds;
        if (r->config.seed == end)
            continue;
        snprintf(err, size,
                 r->config.seed < end
                     ? "%s:%ld (seeds %llu..%llu) and %s:%ld (seeds %llu..%llu) overlap: a seed "
                       "would count twice"
                     : "%s:%ld (seeds %llu..%llu) and %s:%ld (seeds %llu..%llu) leave a gap: "
                       "the seeds between are missing",
                 p->file, p->line, (unsigned long long)p->config.seed, end - 1, r->file, r->line,
                 (unsigned long long)r->config.seed,
                 (unsigned long long)r->config.seed + (unsigned long long)r->config.seeds - 1);
        return -1;
    }
    return 0;
}

static double number_or_nan(const JsonValue *v)
{
    return v->kind == JSON_NUMBER ? v->number : NAN;
}

/* Count, mean and M2 per layer of one network over the group's shards, in seed order, by
   Chan's pairwise formula over the seeds each shard counts there (a shard that counts none
   adds nothing; NaN where no shard counts one, as one run gives), and the sample std
   sqrt(M2 / (n − 1)) as a run computes it; the seeds lost, summed, and where any is, NaN for
   the mean, M2 and std, as one run gives. */
static void combine(Record **shard, int count, int band, int layers, double *mean, double *m2,
                    double *std, double *seeds, double *lost)
{
    for (int l = 0; l < layers; l++) {
        double n = 0;
        lost[l] = 0;
        for (int i = 0; i < count; i++)
            lost[l] += shard[i]->lost[band]->items[l].number;
        mean[l] = m2[l] = NAN;
        for (int i = 0; i < count; i++) {
            double nb = shard[i]->count[band]->items[l].number, total = n + nb;
            double mb = number_or_nan(&shard[i]->mean[band]->items[l]);
            double m2b = number_or_nan(&shard[i]->m2[band]->items[l]);
            if (nb == 0)
                continue;
            if (n == 0) {
                mean[l] = mb;
                m2[l] = m2b;
            } else {
                double delta = mb - mean[l];
                mean[l] += delta * nb / total;
                m2[l] += m2b + delta * delta * n * nb / total;
            }
            n = total;
        }
        if (lost[l] > 0)
            mean[l] = m2[l] = NAN;
        std[l] = n > 1 ? sqrt(m2[l] / (n - 1)) : NAN;
        seeds[l] = n;
    }
}

/* One network's ensemble per layer, combined. */
typedef struct {
    const double *mean, *m2, *std, *count, *lost;
} Ensemble;
enum { ENSEMBLE_ARRAYS = 5 };

/* Which ensemble array key names (mean, std, M2 or count of which network), or NULL. */
static const double *ensemble_values(const char *key, const Ensemble e[BANDS])
{
    for (int b = 0; b < BANDS; b++) {
        if (strcmp(key, MEAN_KEY[b]) == 0)
            return e[b].mean;
        if (strcmp(key, STD_KEY[b]) == 0)
            return e[b].std;
        if (strcmp(key, M2_KEY[b]) == 0)
            return e[b].m2;
        if (strcmp(key, COUNT_KEY[b]) == 0)
            return e[b].count;
        if (strcmp(key, LOST_KEY[b]) == 0)
            return e[b].lost;
    }
    return NULL;
}

static bool is_run_key(const char *key)
{
    for (size_t i = 0; i < sizeof RUN_KEYS / sizeof RUN_KEYS[0]; i++)
        if (strcmp(key, RUN_KEYS[i]) == 0)
            return true;
    return false;
}

/* The warnings one run of all the seeds gives: the first seed's (the first shard's, whose
   first seed is the union's), without what the first shard said of its own ensemble, then
   what the union's ensemble says (Band_warning, as the run says it). */
static void write_warnings(Text *t, Record **shard, int count, const Ensemble e[BANDS])
{
    int layers = shard[0]->config.depth + 1, seeds = 0;
    for (int i = 0; i < count; i++)
        seeds += shard[i]->config.seeds;
    char own[BANDS][WARNING_LENGTH], merged[BANDS][WARNING_LENGTH];
    for (int b = 0; b < BANDS; b++) {
        double counted[layers], lost[layers], first[layers];
        const JsonValue *curve = JsonValue_member(shard[0]->doc, FIRST_SEED_KEY[b]);
        for (int l = 0; l < layers; l++) {
            counted[l] = shard[0]->count[b]->items[l].number;
            lost[l] = shard[0]->lost[b]->items[l].number;
            first[l] = number_or_nan(&curve->items[l]);
        }
        if (!Band_warning(counted, lost, first, layers - 1, shard[0]->config.seeds, b, own[b],
                          sizeof own[b]))
            own[b][0] = '\0';
        if (!Band_warning(e[b].count, e[b].lost, first, layers - 1, seeds, b, merged[b],
                          sizeof merged[b]))
            merged[b][0] = '\0';
    }
    const JsonValue *w = JsonValue_member(shard[0]->doc, "warnings");
    int written = 0;
    Text_printf(t, "[");
    for (int k = 0; w && k < w->count; k++) {
        const char *text = w->items[k].text;
        if (strcmp(text, own[0]) == 0 || strcmp(text, own[1]) == 0)
            continue;
        Text_printf(t, written++ ? ", " : "");
        Json_string(t, text);
    }
    for (int b = 0; b < BANDS; b++)
        if (merged[b][0]) {
            Text_printf(t, written++ ? ", " : "");
            Json_string(t, merged[b]);
        }
    Text_printf(t, "]");
}

/* Parses the group's records again (they were checked when read); 0, or -1 when memory ran
   out. */
static int load_group(Record **group, int count)
{
    for (int i = 0; i < count; i++) {
        char err[OPTIONS_ERROR_SIZE];
        const JsonValue *version, *rng;
        group[i]->doc = Json_parse(group[i]->text, group[i]->length, err, sizeof err);
        if (!group[i]->doc || read_record(group[i], &version, &rng, err, sizeof err))
            return -1;
    }
    return 0;
}

static void unload_group(Record **group, int count)
{
    for (int i = 0; i < count; i++) {
        JsonValue_free(group[i]->doc);
        group[i]->doc = NULL;
    }
}

/* The record of the union: the first shard's document (its first seed is the union's first
   seed, so every first-seed series is the union's; the keys every shard holds alike were
   checked, MergeKeys_check) with the union's seed count, ensemble, width sweep and warnings,
   and where each part came from. */
static void write_merged(Text *t, Record **shard, const MergeShard *parts, int count,
                         const Ensemble e[BANDS])
{
    const JsonValue *doc = shard[0]->doc;
    int seeds = 0, layers = shard[0]->config.depth + 1;
    for (int i = 0; i < count; i++)
        seeds += shard[i]->config.seeds;
    Text_printf(t, "{");
    for (int i = 0, written = 0; i < doc->count; i++) {
        const char *key = doc->keys[i];
        const JsonValue *v = &doc->items[i];
        if (is_run_key(key))
            continue;
        Text_printf(t, written++ ? ", " : "");
        Json_string(t, key);
        Text_printf(t, ":");
        const double *ensemble = ensemble_values(key, e);
        if (ensemble) {
            Json_numbers(t, ensemble, layers);
        } else if (strcmp(key, "seeds_done") == 0) {
            Text_printf(t, "%d", seeds);
        } else if (strcmp(key, "warnings") == 0) {
            write_warnings(t, shard, count, e);
        } else if (strcmp(key, "width_sweep") == 0) {
            MergeKeys_write_sweep(t, parts, count);
        } else if (strcmp(key, "config") == 0) {
            Text_printf(t, "{");
            for (int k = 0; k < v->count; k++) {
                Text_printf(t, k ? ", " : "");
                Json_string(t, v->keys[k]);
                Text_printf(t, ":");
                if (strcmp(v->keys[k], "seeds") == 0)
                    Text_printf(t, "%d", seeds);
                else
                    Json_value(t, &v->items[k], SIZE_MAX);
            }
            Text_printf(t, "}");
        } else {
            Json_value(t, v, SIZE_MAX);
        }
    }
    Text_printf(t, ", \"merged_from\":[");
    for (int i = 0; i < count; i++) {
        const Record *r = shard[i];
        Text_printf(t, "%s{\"file\":", i ? ", " : "");
        Json_string(t, r->file);
        Text_printf(t, ", \"line\":%ld, \"seed\":%llu, \"seeds\":%d", r->line,
                    (unsigned long long)r->config.seed, r->config.seeds);
        for (size_t k = 0; k < sizeof RUN_KEYS / sizeof RUN_KEYS[0]; k++) {
            const JsonValue *v = JsonValue_member(r->doc, RUN_KEYS[k]);
            if (!v || strcmp(RUN_KEYS[k], "line") == 0)
                continue;
            Text_printf(t, ", \"%s\":", RUN_KEYS[k]);
            Json_value(t, v, SIZE_MAX);
        }
        Text_printf(t, "}");
    }
    Text_printf(t, "]}\n");
}

static void csv_number(Text *t, double x)
{
    char buf[FORMAT_NUMBER_SIZE];
    Text_printf(t, "%s", Format_shortest(x, buf));
}

/* One row per layer: the settings (seeds: the union's), the layer, the ensemble. */
static void write_rows(Text *t, const Config *c, int seeds, const Ensemble e[BANDS])
{
    Config run = *c;
    run.seeds = seeds;
    char settings[512];
    size_t used = 0;
    for (int i = 0; i < Settings_count() && used < sizeof settings; i++) {
        char value[64];
        Setting_format(Settings_at(i), &run, 0, value, sizeof value);
        used += (size_t)snprintf(settings + used, sizeof settings - used, "%s,", value);
    }
    for (int l = 0; l <= c->depth; l++) {
        Text_printf(t, "%s%d", settings, l);
        for (int b = 0; b < BANDS; b++) {
            Text_printf(t, ",");
            csv_number(t, e[b].mean[l]);
            Text_printf(t, ",");
            csv_number(t, e[b].std[l]);
        }
        Text_printf(t, ",%s,%.0f,%.0f\n", GAP_NAMES.names[Gap_toggled(c->gap)], e[0].count[l],
                    e[1].count[l]);
    }
}

static void write_csv_header(Text *t)
{
    for (int i = 0; i < Settings_count(); i++)
        Text_printf(t, "%s,", Settings_at(i)->json);
    Text_printf(t, "layer_index,stable_rank_mean,stable_rank_std,counterpart_stable_rank_mean,"
                   "counterpart_stable_rank_std,counterpart_gap,stable_rank_count,"
                   "counterpart_stable_rank_count\n");
}

/* A configuration of the grid the results should cover (--grid): its seed range is the union
   of its shards' lines. */
typedef struct {
    Config config;
    long line;
    bool found;
} Expected;

typedef struct {
    bool csv;         /* a table, not records */
    bool uneven;      /* configurations may cover different seed ranges */
    const char *grid; /* the grid file (--grid), or NULL */
    Expected *expected;
    int expected_count;
} MergeOptions;

/* The configurations of a grid file (`attnscope grid` output: a configuration's shards on
   consecutive lines).  0, or 2 / 1 with the message. */
static int read_grid(MergeOptions *o, char *err, size_t size)
{
    char message[OPTIONS_ERROR_SIZE];
    FILE *f = File_open_regular(o->grid, message, sizeof message);
    if (!f) {
        snprintf(err, size, "merge: --grid %.400s", message);
        return 2;
    }
    LineReader lines = LineReader_start(f, o->grid);
    LineStatus got = LINE_END;
    int status = 0, room = 0;
    while (status == 0 && (got = LineReader_next(&lines, message, sizeof message)) == LINE_READ) {
        long line = lines.number;
        if (blank(lines.text, lines.length))
            continue;
        Config c = Config_default();
        JsonValue *v = Json_parse(lines.text, lines.length, message, sizeof message);
        double max_time; /* the lines' runs' bound: no part of the grid's configurations */
        if (!v || Jsonl_apply_line(v, &c, &max_time, message, sizeof message) ||
            Config_validate(&c, message, sizeof message)) {
            snprintf(err, size, "%s:%ld: %.400s", o->grid, line, message);
            status = 2;
        }
        JsonValue_free(v);
        Expected *last = o->expected_count ? &o->expected[o->expected_count - 1] : NULL;
        if (status == 0 && last && same_run(&last->config, &c) &&
            c.seed == last->config.seed + (uint64_t)last->config.seeds) {
            last->config.seeds += c.seeds; /* the next shard */
            continue;
        }
        if (status == 0 && o->expected_count == room) {
            room = room ? 2 * room : 64;
            Expected *grown = realloc(o->expected, sizeof *grown * (size_t)room);
            if (!grown) {
                snprintf(err, size, "merge: out of memory");
                status = 1;
                break;
            }
            o->expected = grown;
        }
        if (status == 0)
            o->expected[o->expected_count++] = (Expected){.config = c, .line = line};
    }
    if (status == 0 && got != LINE_END) {
        snprintf(err, size, "merge: --grid %.400s", message);
        status = LineStatus_exit_status(got);
    }
    LineReader_release(&lines);
    fclose(f);
    return status;
}

/* The group is one of the grid's configurations with the grid's seed range.  0 or -1. */
static int check_expected(MergeOptions *o, Record **group, int seeds, char *err, size_t size)
{
    const Config *c = &group[0]->config;
    for (int i = 0; i < o->expected_count; i++) {
        Expected *e = &o->expected[i];
        if (!same_run(&e->config, c))
            continue;
        e->found = true;
        if (e->config.seed == c->seed && e->config.seeds == seeds)
            return 0;
        snprintf(err, size, "%s:%ld: seeds %llu..%llu, where %s:%ld asks for seeds %llu..%llu",
                 group[0]->file, group[0]->line, (unsigned long long)c->seed,
                 (unsigned long long)c->seed + (unsigned long long)seeds - 1, o->grid, e->line,
                 (unsigned long long)e->config.seed,
                 (unsigned long long)e->config.seed + (unsigned long long)e->config.seeds - 1);
        return -1;
    }
    snprintf(err, size, "%s:%ld: its configuration is not one of the grid %s", group[0]->file,
             group[0]->line, o->grid);
    return -1;
}

/* Every configuration of the grid had results.  0 or -1. */
static int check_all_found(const MergeOptions *o, char *err, size_t size)
{
    for (int i = 0; i < o->expected_count; i++) {
        const Expected *e = &o->expected[i];
        if (e->found)
            continue;
        snprintf(err, size,
                 "%s:%ld: no record of this configuration (seeds %llu..%llu) among the results",
                 o->grid, e->line, (unsigned long long)e->config.seed,
                 (unsigned long long)e->config.seed + (unsigned long long)e->config.seeds - 1);
        return -1;
    }
    return 0;
}

/* A shard lost (a failed job whose file is missing) at either end of a configuration's range
   leaves a range that still tiles, only shorter: unless told otherwise, every configuration
   must cover the first one's range.  0 or -1 with the message. */
static int check_same_range(Record **first, int first_seeds, Record **group, int seeds, char *err,
                            size_t size)
{
    if (group[0]->config.seed == first[0]->config.seed && seeds == first_seeds)
        return 0;
    snprintf(err, size,
             "%s:%ld begins seeds %llu..%llu of its configuration, %s:%ld seeds %llu..%llu of "
             "another (other settings or other weights): is a shard missing? (every "
             "configuration of one merge covers the same seeds; --uneven accepts different "
             "ranges)",
             first[0]->file, first[0]->line, (unsigned long long)first[0]->config.seed,
             (unsigned long long)first[0]->config.seed + (unsigned long long)first_seeds - 1,
             group[0]->file, group[0]->line, (unsigned long long)group[0]->config.seed,
             (unsigned long long)group[0]->config.seed + (unsigned long long)seeds - 1);
    return -1;
}

/* Each failed line's record must be superseded by a record of the same configuration and seed
   range (the line run again, its record added): then it is left out, said on stderr; else the
   merge is refused.  0 or -1 with in->err. */
static int supersede_failed(Input *in)
{
    for (int i = 0; i < in->count; i++) {
        const Record *f = &in->records[i], *again = NULL;
        for (int j = 0; j < in->count && f->error && !again; j++) {
            const Record *r = &in->records[j];
            if (!r->error && !r->weights[0] && same_run(&f->config, &r->config) &&
                r->config.seed == f->config.seed && r->config.seeds == f->config.seeds)
                again = r;
        }
        if (f->error && !again) {
            snprintf(in->err, sizeof in->err,
                     "%s:%ld: a failed record (error: %.200s) and no record of its configuration "
                     "run again: run that line again and add its record (scripts/sweep-parallel.sh "
                     "--resume runs the failed jobs again)",
                     f->file, f->line, f->error);
            return -1;
        }
        if (f->error)
            fprintf(stderr,
                    "attnscope: merge: %s:%ld, a failed line's record, left out: %s:%ld holds "
                    "its configuration run again\n",
                    f->file, f->line, again->file, again->line);
    }
    return 0;
}

/* A record of the same configuration and seeds as the one before it (a job run again whose
   lines had succeeded) is left out, said on stderr, when its numbers are the same; different
   numbers are refused: which of two computations of one seed is right is not merge's to pick
   (README, sweep-parallel.sh's --resume with --lines above 1).  Returns the records kept at the
   front of group, or -1 with err. */
static int drop_repeats(Record **group, int count, char *err, size_t size)
{
    int kept = 1;
    for (int i = 1; i < count; i++) {
        Record *before = group[kept - 1], *r = group[i];
        if (r->config.seed != before->config.seed || r->config.seeds != before->config.seeds) {
            group[kept++] = r;
            continue;
        }
        if (!MergeKeys_same_numbers(before->doc, r->doc, RUN_KEYS,
                                    sizeof RUN_KEYS / sizeof RUN_KEYS[0])) {
            snprintf(err, size,
                     "%s:%ld and %s:%ld: the same seeds of one configuration with different "
                     "numbers (a seed would count twice; a line run again on a machine whose "
                     "BLAS kernels round otherwise? keep one of the two records)",
                     before->file, before->line, r->file, r->line);
            return -1;
        }
        fprintf(stderr, "attnscope: merge: %s:%ld left out: the same record as %s:%ld\n", r->file,
                r->line, before->file, before->line);
        JsonValue_free(r->doc);
        r->doc = NULL;
    }
    return kept;
}

/* One group of records loaded (members of them, in seed order), checked and merged into t;
   first_seeds is the first group's range's length (set when first).  0, or 2 with err. */
static int merge_group(MergeOptions *options, Record **group, int members, Record **first_group,
                       int *first_seeds, bool first, double *values, MergeShard *parts, Text *t,
                       char *err, size_t size)
{
    int count = drop_repeats(group, members, err, size);
    if (count < 0 || check_tiling(group, count, err, size))
        return 2;
    int layers = group[0]->config.depth + 1, seeds = 0;
    for (int i = 0; i < count; i++)
        seeds += group[i]->config.seeds;
    if (seeds > CONFIG_SEEDS_MAX) {
        snprintf(err, size, "%s:%ld and the records after it: %d seeds in all; accepted at most %d",
                 group[0]->file, group[0]->line, seeds, CONFIG_SEEDS_MAX);
        return 2;
    }
    /* A configuration outside the grid is named as such before its range is compared. */
    if (options->grid && check_expected(options, group, seeds, err, size))
        return 2;
    if (first)
        *first_seeds = seeds;
    else if (!options->uneven &&
             check_same_range(first_group, *first_seeds, group, seeds, err, size))
        return 2;
    for (int i = 0; i < count; i++)
        parts[i] =
            (MergeShard){group[i]->doc, group[i]->file, group[i]->line, group[i]->config.seeds};
    if (MergeKeys_check(parts, count, err, size))
        return 2;
    Ensemble e[BANDS];
    for (int b = 0; b < BANDS; b++) {
        double *m = values + (size_t)(ENSEMBLE_ARRAYS * b) * (size_t)layers;
        combine(group, count, b, layers, m, m + layers, m + 2 * layers, m + 3 * layers,
                m + 4 * layers);
        e[b] = (Ensemble){m, m + layers, m + 2 * layers, m + 3 * layers, m + 4 * layers};
    }
    if (options->csv)
        write_rows(t, &group[0]->config, seeds, e);
    else
        write_merged(t, group, parts, count, e);
    return 0;
}

/* Groups the records by configuration (in the order of their settings), checks and merges
   each group into t.  0, or 2 / 1 with in->err. */
static int merge_all(Input *in, MergeOptions *options, Text *t)
{
    int status = 0, first_seeds = 0;
    /* In the order of their settings and seeds, so that the output does not depend on the
       order of the files or of their lines. */
    Record **shard = malloc(sizeof *shard * (size_t)(in->count ? in->count : 1));
    MergeShard *parts = malloc(sizeof *parts * (size_t)(in->count ? in->count : 1));
    double *values = NULL;
    if (!shard || !parts) {
        free(shard);
        free(parts);
        snprintf(in->err, sizeof in->err, "merge: out of memory");
        return 1;
    }
    if (supersede_failed(in)) {
        free(shard);
        free(parts);
        return 2;
    }
    int records = 0;
    for (int i = 0; i < in->count; i++)
        if (!in->records[i].error)
            shard[records++] = &in->records[i];
    qsort(shard, (size_t)records, sizeof *shard, by_settings);
    if (options->csv)
        write_csv_header(t);
    for (int first = 0, members; first < records && status == 0; first += members) {
        for (members = 1;
             first + members < records && same_group(shard[first], shard[first + members]);
             members++)
            ;
        Record **group = shard + first;
        double *grown = realloc(values, sizeof(double) * ENSEMBLE_ARRAYS * BANDS *
                                            (size_t)(group[0]->config.depth + 1));
        if (grown)
            values = grown;
        if (!grown || load_group(group, members)) {
            unload_group(group, members);
            snprintf(in->err, sizeof in->err, "merge: out of memory");
            status = 1;
            break;
        }
        status = merge_group(options, group, members, shard, &first_seeds, first == 0, values,
                             parts, t, in->err, sizeof in->err);
        unload_group(group, members);
    }
    if (status == 0 && options->grid && check_all_found(options, in->err, sizeof in->err))
        status = 2;
    if (status == 0 && t->failed) {
        snprintf(in->err, sizeof in->err, "merge: out of memory");
        status = 1;
    }
    free(values);
    free(shard);
    free(parts);
    return status;
}

/* Whether paths a and b name one file: the same path, or the same device and inode. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return strcmp(a, b) == 0 || (stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
                                 sa.st_ino == sb.st_ino);
}

/* A file named twice would give its records twice: refused, naming both.  0 or 2 with err. */
static int check_files_once(char **paths, int count, char *err, size_t size)
{
    for (int i = 1; i < count; i++)
        for (int j = 0; j < i; j++) {
            if (!same_file(paths[j], paths[i]))
                continue;
            if (strcmp(paths[i], "-") == 0)
                snprintf(err, size, "merge: - (standard input) is given twice: give it once");
            else if (strcmp(paths[j], paths[i]) == 0)
                snprintf(err, size, "merge: '%.400s' is given twice: give each file once",
                         paths[i]);
            else
                snprintf(err, size,
                         "merge: '%.300s' and '%.300s' are the same file (one device and inode): "
                         "give each file once",
                         paths[j], paths[i]);
            return 2;
        }
    return 0;
}

/* The grid (--grid), then every FILE's records.  0, or 2 / 1 with in->err. */
static int read_inputs(Input *in, MergeOptions *options, char **paths, int files)
{
    int status = check_files_once(paths, files, in->err, sizeof in->err);
    if (status == 0 && options->grid)
        status = read_grid(options, in->err, sizeof in->err);
    for (int i = 0; i < files && status == 0; i++)
        status = read_file(in, paths[i]);
    /* No FILE: standard input, as cat, sort and jq read it (a pipe from --batch --jsonl). */
    if (status == 0 && files == 0)
        status = read_file(in, "-");
    return status;
}

int Merge_main(int argc, char **argv, FILE *out)
{
    Input in = {0};
    Text text = {0};
    MergeOptions options = {0};
    int files = 0, status = 0;
    char **paths = malloc(sizeof *paths * (size_t)argc); /* the FILE arguments */
    if (!paths) {
        fprintf(stderr, "attnscope: merge: out of memory\n");
        return 1;
    }
    for (int i = 1; i < argc && status == 0; i++) {
        if (strcmp(argv[i], "--csv") == 0) {
            options.csv = true;
        } else if (strcmp(argv[i], "--uneven") == 0) {
            options.uneven = true;
        } else if (strcmp(argv[i], "--grid") == 0) {
            if (i + 1 == argc) {
                snprintf(in.err, sizeof in.err,
                         "merge: --grid needs a value (the grid's configurations)");
                status = 2;
                break;
            }
            options.grid = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            free(paths);
            Options_usage(stdout);
            return Options_flush_stdout();
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            snprintf(in.err, sizeof in.err,
                     "merge: unknown option '%.40s'; accepted: FILE... (- for standard input), "
                     "--csv, --uneven and --grid FILE",
                     argv[i]);
            status = 2;
        } else {
            paths[files++] = argv[i];
        }
    }
    if (status == 0)
        status = read_inputs(&in, &options, paths, files);
    if (status == 0)
        status = merge_all(&in, &options, &text);
    if (status) {
        fprintf(stderr, "attnscope: %s\n", in.err);
    } else if (fwrite(text.data, 1, text.length, out) != text.length || fflush(out) != 0) {
        perror("attnscope: merge: stdout");
        status = 1;
    }
    for (int i = 0; i < in.count; i++) {
        free(in.records[i].text);
        free(in.records[i].error);
        free(in.records[i].version);
        free(in.records[i].rng);
    }
    free(in.records);
    free(paths);
    free(options.expected);
    Text_free(&text);
    return status;
}
