/* What `attnscope merge` does with each key of a result record besides the ensemble
 * (docs/model.md §6): a key every shard must hold alike (the settings' consequences), the
 * width sweep combined as one run of all the seeds averages it,
 * and every other key the first seed's, copied from the first shard. */
#ifndef ATTNSCOPE_MERGE_KEYS_H
#define ATTNSCOPE_MERGE_KEYS_H

#include "json.h"
#include "json_read.h"

#include <stdbool.h>
#include <stddef.h>

/* The shards of one merge, in seed order: each one's document, where it is and its seeds. */
typedef struct {
    const JsonValue *doc;
    const char *file;
    long line;
    int seeds;
} MergeShard;

/* The keys of the shards agree: the same keys in each, every key of MERGE_SAME_KEYS alike,
   and the width sweeps (when there) of the same widths and theory.  0, or -1 with a message
   naming the key and both records. */
int MergeKeys_check(const MergeShard *shard, int count, char *err, size_t size);

/* Whether two records hold the same keys with the same values, the keys in skip aside (a run's
   circumstances: its host, time, line). */
bool MergeKeys_same_numbers(const JsonValue *a, const JsonValue *b, const char *const *skip,
                            size_t skipped);

/* Whether the key is one every shard holds alike (checked, then copied). */
bool MergeKeys_same(const char *key);

/* The width sweep of the union: each width's mean of sr − 1 over all the seeds (the shards'
   means weighted by their seed counts) and the slopes fitted to them again. */
void MergeKeys_write_sweep(Text *t, const MergeShard *shard, int count);

#endif
