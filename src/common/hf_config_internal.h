/* The families --hf-config knows (hf_config_families.c) and what the reader (hf_config.c)
 * asks of them. */
#ifndef ATTNSCOPE_HF_CONFIG_INTERNAL_H
#define ATTNSCOPE_HF_CONFIG_INTERNAL_H

#include "attnscope/config.h"
#include "hf_config.h"
#include "json_read.h"

#include <stdbool.h>
#include <stddef.h>

/* Which layers slide their window when the file has no layer_types: none; every layer
   (Mistral); every other one, the first sliding (Gemma 2, gpt-oss); sliding_window_pattern − 1
   sliding then one global (Gemma 3); Qwen's, the layers from max_window_layers on when
   use_sliding_window. */
typedef enum {
    HF_WINDOWS_NONE,
    HF_WINDOWS_EVERY,
    HF_WINDOWS_ALTERNATE,
    HF_WINDOWS_PATTERN,
    HF_WINDOWS_QWEN,
} HfWindows;

/* The MLP: one activation (GPT-2, ViT), gated (the Llama family), or experts, which the
   block leaves out (gpt-oss: its attention path). */
typedef enum { HF_MLP_PLAIN, HF_MLP_GATED, HF_MLP_EXPERTS } HfMlp;

/* When a field changes the model in a way the block does not: any value but null, false, 0
   and empty ones (HF's "off"); or false where true is what the block does. */
typedef enum { HF_WHEN_SET, HF_WHEN_FALSE } HfWhen;

typedef struct {
    const char *field;
    HfWhen when;
    const char *why;
} HfRule;

/* The layers a family shares with its relatives: Mistral, Qwen2 and Qwen3 have Llama's, Gemma 3
   has Gemma 2's; they differ in the QK-norm and the windows (HfFamily). */
typedef struct {
    LayerNorm norm;
    LnPlace place;
    bool rope, causal, sinks;
    bool gain_offset;      /* its RMSNorm multiplies by 1 + w (Gemma) */
    bool scaled_embedding; /* it multiplies the embedding rows by sqrt(hidden_size) (Gemma) */
    HfMlp mlp;
    DepthScale depth_scale;
} HfBlock;

typedef struct {
    const char *model_type;
    const char *name; /* for messages and the docs: "Gemma 3" */
    /* The config class's defaults (configuration_*.py) for the fields the reader uses, as
       JSON: an absent field means its default, as in transformers. */
    const char *defaults;
    /* A multimodal wrapper: its member holding the text model, and that model's type. */
    const char *nested, *nested_type;
    const HfBlock *block; /* NULL for a wrapper, whose text model's family reads the block */
    QkNorm qk_norm;
    HfWindows windows;
    /* Fields that leave the block as it is (NULL-ended), and fields that change it and are
       not modelled ({NULL}-ended), beyond HF_HARMLESS and HF_RULES; NULL: none. */
    const char *const *harmless;
    const HfRule *rules;
    /* What the family always has and the block does not ("why"), or NULL. */
    const char *implied;
    /* Which of HF_FAMILY_FIELDS its model reads (NULL-ended); the others it ignores. */
    const char *const *reads;
} HfFamily;

/* Fields some families' models read and others ignore: the MLP's activation under its three
   names, the logits' soft-cap, the rotated share of a head. */
extern const char *const HF_FAMILY_FIELDS[];

/* Whether f's model reads field: any field not in HF_FAMILY_FIELDS, and those in f->reads. */
bool HfFamily_reads(const HfFamily *f, const char *field);

/* The family of model_type, or NULL. */
const HfFamily *HfFamily_find(const char *model_type);

/* "gpt2, llama, ..." into buf, for the error that names the accepted ones. */
void HfFamily_accepted(char *buf, size_t size);

/* The fields every family shares: harmless ones and rules. */
extern const char *const HF_HARMLESS[];
extern const HfRule HF_RULES[];

/* One reading: the file's text model, its family's defaults, and the settings so far. */
typedef struct {
    const char *file;
    const HfFamily *family;
    const JsonValue *object;   /* the text model's fields */
    const JsonValue *defaults; /* its config class's defaults */
    bool *consumed;            /* per member of object: read, or judged */
    Config trial;
    HfConfigReport *report;
    char *err;
    size_t size;
} HfReader;

/* The member named key of the object (marked read), else its default, else NULL. */
const JsonValue *HfReader_lookup(HfReader *r, const char *key);

/* The first of keys (the spellings of one concept, NULL-ended) that the file gives, else that
   the defaults give; two spellings with different values are an error (-1).  *key names the
   one read. */
int HfReader_concept(HfReader *r, const char *const keys[], const JsonValue **value,
                     const char **key);

/* Whether the value read for key is the family's default, the file lacking it. */
bool HfReader_from_default(const HfReader *r, const char *key);

/* "FILE: "key" is VALUE: accepted ..." into the reader's err; returns -1. */
int HfReader_refuse(HfReader *r, const char *key, const JsonValue *v, const char *accepted);

/* v as a whole number lo <= n <= 2^20 into *out: 0, or -1 (HfReader_refuse). */
int HfReader_whole(HfReader *r, const char *key, const JsonValue *v, int lo, int *out);

/* Sets one setting from text through its own setter, as a preset line does; an error names
   the field key that gave it.  0 or -1. */
int HfReader_put(HfReader *r, const char *setting, const char *text, const char *key);
int HfReader_put_int(HfReader *r, const char *setting, int value, const char *key);

/* The mask and the sliding windows (hf_config_windows.c). */
int HfReader_windows(HfReader *r);

/* Keeps a field the block does not model, for the warning and the document; value is the
   field's value as JSON (NULL: the field's own, looked up). */
void HfReader_unmodelled(HfReader *r, const char *field, const JsonValue *value, const char *why);

/* Judges what the settings did not read: the rules' fields (the file's, and the defaults'
   that the file leaves), then every other member, harmless or unknown (unmodelled: it may
   change the model). */
void HfReader_judge_rest(HfReader *r);

#endif
