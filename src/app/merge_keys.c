#include "merge_keys.h"

#include "attnscope/sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* What the settings alone give (σ, the counterpart's gap, the theory, the notes of why a
   bound is void) and what was run (the config.json read, the version and generator): any
   difference means the shards are not parts of one run.  ("weights" is not among them:
   records are grouped by its contents' identity, and its path may differ from host to
   host; the first shard's is written.) */
static const char *const SAME_KEYS[] = {"attnscope",
                                        "rng",
                                        "sigma",
                                        "counterpart_gap",
                                        "theory",
                                        "attention_entropy_theory",
                                        "attention_entropy_zhai_bound_note",
                                        "hf_config"};
/* The width sweep's members that its widths and the settings fix. */
static const char *const SWEEP_SAME[] = {"T", "theory_slope"};
static const char *const SWEEP_MEANS[] = {"stable_rank_minus_one", "stable_rank_minus_one_gap"};
static const char *const SWEEP_SLOPES[] = {"slope", "slope_gap"};

bool MergeKeys_same(const char *key)
{
    for (size_t i = 0; i < sizeof SAME_KEYS / sizeof SAME_KEYS[0]; i++)
        if (strcmp(key, SAME_KEYS[i]) == 0)
            return true;
    return false;
}

/* Whether a and b are the same JSON (numbers as written: one binary writes them alike). */
static bool same_value(const JsonValue *a, const JsonValue *b)
{
    Text x = {0}, y = {0};
    Json_value(&x, a, SIZE_MAX);
    Json_value(&y, b, SIZE_MAX);
    bool same =
        !x.failed && !y.failed && x.length == y.length && memcmp(x.data, y.data, x.length) == 0;
    Text_free(&x);
    Text_free(&y);
    return same;
}

bool MergeKeys_same_numbers(const JsonValue *a, const JsonValue *b, const char *const *skip,
                            size_t skipped)
{
    int compared = 0, skipped_in_b = 0;
    for (int k = 0; k < b->count; k++)
        for (size_t s = 0; s < skipped; s++)
            skipped_in_b += strcmp(b->keys[k], skip[s]) == 0;
    for (int k = 0; k < a->count; k++) {
        bool skipped_key = false;
        for (size_t s = 0; s < skipped && !skipped_key; s++)
            skipped_key = strcmp(a->keys[k], skip[s]) == 0;
        if (skipped_key)
            continue;
        const JsonValue *v = JsonValue_member(b, a->keys[k]);
        if (!v || !same_value(&a->items[k], v))
            return false;
        compared++;
    }
    return compared == b->count - skipped_in_b;
}

static int differ(const MergeShard *a, const MergeShard *b, const char *key, const char *what,
                  char *err, size_t size)
{
    snprintf(err, size, "%s:%ld and %s:%ld %s \"%s\": they are not parts of one run", a->file,
             a->line, b->file, b->line, what, key);
    return -1;
}

/* The sweep's numbers per width, as one member array; NULL when it is not one. */
static const JsonValue *sweep_array(const JsonValue *sweep, const char *key, int count)
{
    const JsonValue *v = JsonValue_member(sweep, key);
    if (!v || v->kind != JSON_ARRAY || v->count != count)
        return NULL;
    for (int i = 0; i < count; i++)
        if (v->items[i].kind != JSON_NUMBER && v->items[i].kind != JSON_NULL)
            return NULL;
    return v;
}

static int check_sweep(const MergeShard *a, const MergeShard *b, char *err, size_t size)
{
    const JsonValue *x = JsonValue_member(a->doc, "width_sweep"),
                    *y = JsonValue_member(b->doc, "width_sweep");
    const JsonValue *widths = x ? JsonValue_member(x, "T") : NULL;
    if (!widths || widths->kind != JSON_ARRAY || widths->count > SWEEP_POINTS_MAX) {
        snprintf(err, size, "%s:%ld: \"width_sweep\": expected the object --sweep-T writes",
                 a->file, a->line);
        return -1;
    }
    for (size_t k = 0; k < sizeof SWEEP_SAME / sizeof SWEEP_SAME[0]; k++) {
        const JsonValue *p = JsonValue_member(x, SWEEP_SAME[k]),
                        *q = JsonValue_member(y, SWEEP_SAME[k]);
        if (!p || !q || !same_value(p, q))
            return differ(a, b, "width_sweep", "differ in", err, size);
    }
    for (size_t k = 0; k < sizeof SWEEP_MEANS / sizeof SWEEP_MEANS[0]; k++)
        if (!sweep_array(x, SWEEP_MEANS[k], widths->count) ||
            !sweep_array(y, SWEEP_MEANS[k], widths->count)) {
            snprintf(err, size,
                     "%s:%ld or %s:%ld: \"width_sweep\".\"%s\": expected %d numbers or nulls "
                     "(one per width)",
                     a->file, a->line, b->file, b->line, SWEEP_MEANS[k], widths->count);
            return -1;
        }
    return 0;
}

/* The first key of a that b lacks, or NULL. */
static const char *missing_key(const JsonValue *a, const JsonValue *b)
{
    for (int k = 0; k < a->count; k++)
        if (!JsonValue_member(b, a->keys[k]))
            return a->keys[k];
    return NULL;
}

int MergeKeys_check(const MergeShard *shard, int count, char *err, size_t size)
{
    const MergeShard *first = &shard[0];
    for (int i = 1; i < count; i++) {
        const MergeShard *s = &shard[i];
        const char *only_first = missing_key(first->doc, s->doc),
                   *only_later = missing_key(s->doc, first->doc);
        if (only_first || only_later) {
            snprintf(err, size,
                     "%s:%ld and %s:%ld hold different keys (\"%s\" is in the %s alone): they "
                     "are not parts of one run",
                     first->file, first->line, s->file, s->line,
                     only_first ? only_first : only_later, only_first ? "first" : "second");
            return -1;
        }
        for (int k = 0; k < first->doc->count; k++) {
            const char *key = first->doc->keys[k];
            const JsonValue *v = JsonValue_member(s->doc, key);
            if (MergeKeys_same(key) && !same_value(&first->doc->items[k], v))
                return differ(first, s, key, "differ in", err, size);
            if (strcmp(key, "width_sweep") == 0 && check_sweep(first, s, err, size))
                return -1;
        }
    }
    if (JsonValue_member(first->doc, "width_sweep") && count == 1)
        return check_sweep(first, first, err, size);
    return 0;
}

/* One width's mean over the union: Σ n_i m_i / Σ n_i, null where any shard's is (as one
   run's mean is NaN when any seed's value is). */
static double union_mean(const MergeShard *shard, int count, const char *key, int point)
{
    double sum = 0;
    int seeds = 0;
    for (int i = 0; i < count; i++) {
        const JsonValue *v =
            &JsonValue_member(JsonValue_member(shard[i].doc, "width_sweep"), key)->items[point];
        sum += v->kind == JSON_NUMBER ? shard[i].seeds * v->number : NAN;
        seeds += shard[i].seeds;
    }
    return sum / seeds;
}

void MergeKeys_write_sweep(Text *t, const MergeShard *shard, int count)
{
    const JsonValue *sweep = JsonValue_member(shard[0].doc, "width_sweep");
    const JsonValue *widths = JsonValue_member(sweep, "T");
    int tokens[SWEEP_POINTS_MAX], n = widths->count;
    for (int i = 0; i < n; i++)
        tokens[i] = widths->items[i].kind == JSON_NUMBER ? (int)widths->items[i].number : 0;
    enum { MEANS = sizeof SWEEP_MEANS / sizeof SWEEP_MEANS[0] };
    double mean[MEANS][SWEEP_POINTS_MAX];
    Text_printf(t, "{\"T\":");
    Json_value(t, widths, SIZE_MAX);
    for (int k = 0; k < MEANS; k++) {
        for (int i = 0; i < n; i++)
            mean[k][i] = union_mean(shard, count, SWEEP_MEANS[k], i);
        Text_printf(t, ", \"%s\":", SWEEP_MEANS[k]);
        Json_numbers(t, mean[k], n);
    }
    for (int k = 0; k < MEANS; k++) {
        Text_printf(t, ", \"%s\":", SWEEP_SLOPES[k]);
        Json_number(t, Sweep_loglog_slope(tokens, mean[k], n));
    }
    Text_printf(t, ", \"theory_slope\":");
    Json_value(t, JsonValue_member(sweep, "theory_slope"), SIZE_MAX);
    Text_printf(t, "}");
}
