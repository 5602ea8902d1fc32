/* The files of a safetensors checkpoint (safetensors.h): one memory-mapped file, or a
 * directory's model.safetensors or sharded index, each shard checked by Safetensors_parse. */
#include "safetensors.h"

#include "json_read.h"
#include "line_reader.h"
#include "safetensors_internal.h"

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void Safetensors_release(const Safetensors *s, const SafetensorsTensor *t)
{
    if (s->mapping_count == 0)
        return; /* bytes of the caller's: dropping pages would zero them */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t begin = (uintptr_t)t->data,
              end = begin + t->elements * SafetensorsDtype_size(t->dtype);
    begin = (begin + page - 1) / page * page; /* the pages wholly inside the tensor */
    end = end / page * page;
    if (end > begin) /* a private read-only file mapping: the pages come back from the file */
        madvise((void *)begin, end - begin, MADV_DONTNEED);
}

int Safetensors_content_hash(const Safetensors *s, char text[SAFETENSORS_HASH_TEXT],
                             uint64_t *bytes)
{
    const size_t chunk = (size_t)1 << 24;
    unsigned char digest[SHA256_DIGEST_LENGTH];
    unsigned int digest_length = 0;
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    int ok = context && EVP_DigestInit_ex(context, EVP_sha256(), NULL);
    *bytes = 0;
    for (int m = 0; ok && m < s->mapping_count; m++) {
        const unsigned char *p = s->mappings[m].address;
        size_t n = s->mappings[m].length;
        for (size_t done = 0; ok && done < n; done += chunk) {
            size_t length = n - done < chunk ? n - done : chunk;
            ok = EVP_DigestUpdate(context, p + done, length);
            if (length == chunk) /* whole pages of the mapping behind us: let them go */
                madvise((void *)(p + done), chunk, MADV_DONTNEED);
        }
        *bytes += n;
    }
    ok = ok && EVP_DigestFinal_ex(context, digest, &digest_length);
    EVP_MD_CTX_free(context);
    if (!ok)
        return -1;
    int n = snprintf(text, SAFETENSORS_HASH_TEXT, "sha256:");
    for (unsigned int i = 0; i < digest_length; i++)
        n += snprintf(text + n, SAFETENSORS_HASH_TEXT - (size_t)n, "%02x", digest[i]);
    return 0;
}

/* Whether a and b are one file in one state: a file rewritten in place has another
   modification or change time (a change time no program can set back), one renamed over it
   another inode. */
static bool same_file_state(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int Safetensors_unchanged(const Safetensors *s, char *err, size_t size)
{
    for (int m = 0; m < s->mapping_count; m++) {
        struct stat now;
        const Mapping *file = &s->mappings[m];
        if (stat(file->path, &now) != 0) {
            snprintf(err, size, "'%s': gone while the run read it (%s)", file->path,
                     strerror(errno));
            return -1;
        }
        if (!same_file_state(&file->opened, &now)) {
            snprintf(err, size,
                     "'%s': changed while the run read it (its size, modification time, change "
                     "time or inode is not what it was when opened): the numbers may mix two "
                     "contents",
                     file->path);
            return -1;
        }
    }
    return 0;
}

/* Maps the file at path read-only and checks it; the mapping joins s's. */
static Safetensors *map_file(const char *path, Mapping *mapping, char *err, size_t size)
{
    struct stat st; /* a FIFO, a device or a folder is refused without waiting on it */
    int fd = File_open_regular_fd(path, &st, err, size);
    if (fd < 0)
        return NULL;
    if (st.st_size < 8) {
        snprintf(err, size, "'%s': too short for the 8-byte header length", path);
        close(fd);
        return NULL;
    }
    void *address = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int reason = errno;
    close(fd);
    if (address == MAP_FAILED) {
        snprintf(err, size, "'%s': cannot map it: %s", path, strerror(reason));
        return NULL;
    }
    *mapping = (Mapping){address, (size_t)st.st_size, strdup(path), st};
    Safetensors *s =
        mapping->path ? Safetensors_parse(address, (size_t)st.st_size, path, err, size) : NULL;
    if (!mapping->path)
        snprintf(err, size, "'%s': out of memory", path);
    if (!s) {
        munmap(address, (size_t)st.st_size);
        free(mapping->path);
    }
    return s;
}

static Safetensors *open_file(const char *path, char *err, size_t size)
{
    Mapping m;
    Safetensors *s = map_file(path, &m, err, size);
    if (s && !(s->mappings = malloc(sizeof m))) {
        munmap(m.address, m.length);
        free(m.path);
        Safetensors_close(s);
        snprintf(err, size, "'%s': out of memory", path);
        return NULL;
    }
    if (s)
        s->mappings[s->mapping_count++] = m;
    return s;
}

/* Moves shard's tensors, metadata and mapping into s. */
static int adopt_shard(Safetensors *s, Safetensors *shard, char *err, size_t size)
{
    SafetensorsTensor *tensors =
        realloc(s->tensors, sizeof *tensors * (size_t)(s->count + shard->count + 1));
    Mapping *mappings = realloc(s->mappings, sizeof *mappings * (size_t)(s->mapping_count + 1));
    if (tensors)
        s->tensors = tensors;
    if (mappings)
        s->mappings = mappings;
    if (!tensors || !mappings) {
        snprintf(err, size, "'%s': out of memory", shard->path);
        return -1;
    }
    memcpy(s->tensors + s->count, shard->tensors, sizeof *tensors * (size_t)shard->count);
    s->count += shard->count;
    s->mappings[s->mapping_count++] = shard->mappings[0];
    shard->count = 0;
    shard->mapping_count = 0;
    return 0;
}

typedef struct {
    const char *name, *shard;
} MapEntry;

static int by_entry_name(const void *a, const void *b)
{
    return strcmp(((const MapEntry *)a)->name, ((const MapEntry *)b)->name);
}

static int by_entry_shard(const void *a, const void *b)
{
    return strcmp(((const MapEntry *)a)->shard, ((const MapEntry *)b)->shard);
}

/* The weight map's entries, each shard a plain file name in the directory. */
static MapEntry *map_entries(const char *index, const JsonValue *map, char *err, size_t size)
{
    MapEntry *entries = malloc(sizeof *entries * ((size_t)map->count + 1));
    if (!entries) {
        snprintf(err, size, "'%s': out of memory", index);
        return NULL;
    }
    for (int i = 0; i < map->count; i++) {
        const char *shard = map->items[i].text;
        if (map->items[i].kind != JSON_STRING || !shard[0] || strchr(shard, '/') ||
            strcmp(shard, "..") == 0 || strcmp(shard, ".") == 0) {
            snprintf(err, size, "'%s': weight_map '%s': expected a file name in the directory",
                     index, map->keys[i]);
            free(entries);
            return NULL;
        }
        entries[i] = (MapEntry){map->keys[i], shard};
    }
    return entries;
}

/* Every shard the map names, once each (in the order of their names); one missing is refused
   naming the index and a tensor it puts there. */
static int open_each_shard(Safetensors *s, const char *dir, const char *index, MapEntry *entries,
                           int count, char *err, size_t size)
{
    char path[4096];
    qsort(entries, (size_t)count, sizeof *entries, by_entry_shard);
    for (int i = 0; i < count; i++) {
        if (i > 0 && strcmp(entries[i].shard, entries[i - 1].shard) == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, entries[i].shard);
        struct stat st;
        if (stat(path, &st) != 0) {
            snprintf(err, size, "'%s' names shard '%s' for tensor '%s', but '%s': %s", index,
                     entries[i].shard, entries[i].name, path, strerror(errno));
            return -1;
        }
        Safetensors *one = open_file(path, err, size);
        int status = one ? adopt_shard(s, one, err, size) : -1;
        Safetensors_close(one);
        if (status)
            return -1;
    }
    return Safetensors_index_names(s, err, size);
}

/* Each tensor must be in the shard the map names (so a name in two shards is refused), and
   each name of the map in its shard. */
static int check_map(const Safetensors *s, const char *dir, MapEntry *entries, int count, char *err,
                     size_t size)
{
    qsort(entries, (size_t)count, sizeof *entries, by_entry_name);
    for (int i = 0; i < s->count; i++) {
        MapEntry key = {s->tensors[i].name, NULL};
        const MapEntry *where =
            bsearch(&key, entries, (size_t)count, sizeof *entries, by_entry_name);
        const char *slash = strrchr(s->tensors[i].file, '/');
        if (!where || strcmp(where->shard, slash + 1) != 0) {
            snprintf(err, size, "'%s': tensor '%s' is in %s, but the index %s", dir,
                     s->tensors[i].name, s->tensors[i].file,
                     where ? "names another shard for it" : "does not name it");
            return -1;
        }
    }
    /* Each tensor is named once by the map (a name in two shards fails above for one of
       them), so the counts agree exactly when the map names nothing more. */
    for (int i = 0; s->count != count && i < count; i++)
        if (!Safetensors_find(s, entries[i].name)) {
            snprintf(err, size, "'%s': the index names tensor '%s' in %s, which does not hold it",
                     dir, entries[i].name, entries[i].shard);
            return -1;
        }
    return 0;
}

static int open_shards(Safetensors *s, const char *dir, const char *index, const JsonValue *map,
                       char *err, size_t size)
{
    MapEntry *entries = map_entries(index, map, err, size);
    int status = entries ? open_each_shard(s, dir, index, entries, map->count, err, size) : -1;
    if (status == 0)
        status = check_map(s, dir, entries, map->count, err, size);
    free(entries);
    return status;
}

JsonValue *Safetensors_read_json(const char *path, char *err, size_t size)
{
    size_t length;
    char *text;
    FileWhole outcome = File_read_regular(path, 64u << 20, &text, &length, err, size);
    if (outcome == FILE_WHOLE_NO_MEMORY || outcome == FILE_WHOLE_TOO_LARGE)
        snprintf(err, size, "'%s': %s", path, /* the other failures' err is File_read_regular's */
                 outcome == FILE_WHOLE_NO_MEMORY ? "out of memory"
                                                 : "larger than 64 MiB, more than an index or a "
                                                   "config.json holds");
    if (outcome != FILE_WHOLE_READ)
        return NULL;
    char json_err[256];
    JsonValue *v = Json_parse(text, length, json_err, sizeof json_err);
    free(text);
    if (!v)
        snprintf(err, size, "'%s': %s", path, json_err);
    return v;
}

/* A directory's index: {"metadata": {...}, "weight_map": {tensor: shard file}}. */
static Safetensors *open_index(const char *dir, const char *index, char *err, size_t size)
{
    JsonValue *v = Safetensors_read_json(index, err, size);
    if (!v)
        return NULL;
    const JsonValue *map = JsonValue_member(v, "weight_map");
    if (!map || map->kind != JSON_OBJECT) {
        snprintf(err, size, "'%s': expected an object with \"weight_map\" {tensor: shard file}",
                 index);
        JsonValue_free(v);
        return NULL;
    }
    Safetensors *s = Safetensors_new(dir);
    if (!s)
        snprintf(err, size, "'%s': out of memory", index);
    if (s && open_shards(s, dir, index, map, err, size)) {
        Safetensors_close(s);
        s = NULL;
    }
    JsonValue_free(v);
    return s;
}

/* Whether path names a shard index (model.safetensors.index.json, or another model's
   NAME.safetensors.index.json), which is opened through its directory. */
static bool is_shard_index(const char *path)
{
    static const char SUFFIX[] = ".safetensors.index.json";
    size_t n = strlen(path), k = sizeof SUFFIX - 1;
    return n >= k && strcmp(path + n - k, SUFFIX) == 0;
}

Safetensors *Safetensors_open(const char *path, char *err, size_t size)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, size, "'%s': cannot read it: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(st.st_mode) && is_shard_index(path)) {
        /* Its JSON would be read as a header length of some 10^18 bytes. */
        const char *slash = strrchr(path, '/');
        int dir_length = slash ? (int)(slash - path) : 1;
        snprintf(err, size, "'%s': a shard index: give its directory, '%.*s'", path,
                 dir_length ? dir_length : 1, slash ? path : ".");
        return NULL;
    }
    if (!S_ISDIR(st.st_mode))
        return open_file(path, err, size);
    char index[4096], single[4096];
    snprintf(index, sizeof index, "%s/model.safetensors.index.json", path);
    snprintf(single, sizeof single, "%s/model.safetensors", path);
    if (access(index, F_OK) == 0)
        return open_index(path, index, err, size);
    if (access(single, F_OK) == 0)
        return open_file(single, err, size);
    snprintf(err, size,
             "'%s': a directory without model.safetensors.index.json or model.safetensors", path);
    return NULL;
}
