/* What the safetensors reader's two files share (safetensors.c checks the bytes,
 * safetensors_open.c maps the files): the checkpoint's representation. */
#ifndef ATTNSCOPE_COMMON_SAFETENSORS_INTERNAL_H
#define ATTNSCOPE_COMMON_SAFETENSORS_INTERNAL_H

#include "safetensors.h"

#include <stddef.h>
#include <sys/stat.h>

/* A file mapped, and what it was when opened (Safetensors_unchanged compares them). */
typedef struct {
    void *address;
    size_t length;
    char *path;
    struct stat opened;
} Mapping;

struct Safetensors {
    char *path;
    int count;
    SafetensorsTensor *tensors;        /* names and files owned (strdup) */
    const SafetensorsTensor **by_name; /* the tensors sorted by name, for lookups */
    int metadata_count;
    char **metadata_keys, **metadata_values;
    int mapping_count;
    Mapping *mappings;
};

/* An empty checkpoint named path, or NULL when out of memory. */
Safetensors *Safetensors_new(const char *path);

/* Sorts the tensors' names for lookups in log time (a header may hold hundreds of
   thousands): after the tensors are all in place.  0, or -1 with err. */
int Safetensors_index_names(Safetensors *s, char *err, size_t size);

#endif
