/* --hf-config FILE|DIR: a Hugging Face config.json read into the settings it determines
 * (docs/hf-config.md).  Every value goes through the settings table's own setter
 * (Setting_parse), as a preset line does; every field that changes the model and that the
 * block does not model is kept in the report, for a warning and the batch document. */
#ifndef ATTNSCOPE_HF_CONFIG_H
#define ATTNSCOPE_HF_CONFIG_H

#include "attnscope/config.h"
#include "json.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A field the block does not model: its name, its value (JSON text, or a string where the
   value was too long to keep whole) and why it matters. */
typedef struct {
    char field[64];
    char value[128];
    bool value_is_json;
    char why[256];
    char default_of[32]; /* the family whose default it is, the file lacking it; "" if in it */
} HfUnmodelled;

enum { HF_UNMODELLED_MAX = 32, HF_SET_MAX = 96 };

/* A setting the file set (its index in the settings table) and the field that set it
   ("hidden_act", "rope_scaling.factor", or "model_type" for what the family fixes). */
typedef struct {
    int setting;
    char field[96];
} HfSet;

typedef struct {
    char file[1024];     /* the config.json read; "" when none was */
    char model_type[64]; /* as the file names it */
    int count;           /* entries in unmodelled */
    int left_out;        /* entries beyond HF_UNMODELLED_MAX (counted, named in the warning) */
    HfUnmodelled unmodelled[HF_UNMODELLED_MAX];
    /* The windows were judged at T = judged_tokens: a sliding window of sliding_window keys
       (0: none) that covers all T tokens is the causal mask, exactly.  mask, window and
       window_layers are what the file set, so a later -T can be checked (HfConfig_check).
       sliding_local[ℓ−1] whether the file slides the window on layer ℓ, and whether the
       family is causal: the judgement again at another T (HfConfig_judge_tokens, which spells
       the layers as --window-layers from them), and, where the window covers every token and
       the mask is causal, the file's window an export states (HfConfig_covering_window). */
    int judged_tokens, sliding_window;
    bool sliding_local[CONFIG_DEPTH_MAX];
    Mask mask;
    int window;
    double window_layers;
    bool causal;
    int window_before; /* -w as the file found it: the file sets it only where the window acts */
    /* The settings the file set, with the field each came from, and their values as it left
       them: what its warnings are about (HfConfig_warning_holds). */
    int set_count;
    HfSet set[HF_SET_MAX];
    Config read;
} HfConfigReport;

/* Reads FILE, or DIR/config.json, into *c over its current settings: all of them, or (on an
   error) none.  Returns 0, or -1 with a message naming the file, the field, its value and
   what is accepted. */
int HfConfig_apply(const char *path, Config *c, HfConfigReport *report, char *err, size_t size);

/* The same from the file's bytes (the fuzzer's entry): name stands for the file. */
int HfConfig_parse(const char *text, size_t length, const char *name, Config *c,
                   HfConfigReport *report, char *err, size_t size);

/* After every option: a -T given after --hf-config must not change what the file's sliding
   window means (a window that covered every token at the T the file was read with and does
   not at the final one).  0, or -1 with the message. */
int HfConfig_check(const HfConfigReport *report, const Config *c, char *err, size_t size);

/* The file's sliding window where it covers all of c's tokens (the mask the causal one) and c's
   mask is still the one the file set: its keys, with the layers that slide it in local[] (depth
   entries); 0 otherwise (no file, no window, a window that acts, or options after the file that
   set the mask).  What an export of c states as its window, so that it reads back as the file
   did at any T. */
int HfConfig_covering_window(const HfConfigReport *report, const Config *c, bool local[]);

/* --token-ids set T (their count) after the file was read: the file's sliding window judged
   again at c->tokens, where the options left the mask, window and layers as the file set
   them (a window of T keys or more is the causal mask, as when the file is read).  0, or -1
   with the message (layers no --window-layers pattern spells, where the window now acts). */
int HfConfig_judge_tokens(HfConfigReport *report, Config *c, char *err, size_t size);

/* The warnings, one per field not modelled and one for the fields left out: their count, and
   warning i's text "FILE: FIELD = VALUE is not modelled: WHY" into buf, whole in
   HF_WARNING_SIZE (the longest path, field, value and reason, and the words between). */
enum { HF_WARNING_SIZE = 1024 + 64 + 128 + 256 + 160 };
int HfConfig_warning_count(const HfConfigReport *report);
void HfConfig_warning(const HfConfigReport *report, int i, char *buf, size_t size);

/* Whether warning i still describes a run of c, the program having started with `start`
   (the file's settings as the options after it left them).  A warning about a field the file
   read into settings (hidden_act into --mlp, rope_scaling into --rope-scaling) holds while
   those settings are as the file set them; a warning about what the block lacks (biases,
   experts, a field no reader knows, the fields left out) is about the file's model as a whole
   and holds while every setting the file set and the options left is as the file set it.
   Settings the file does not set (T, the seeds, the input, the shown layer) change neither. */
bool HfConfig_warning_holds(const HfConfigReport *report, int i, const Config *start,
                            const Config *c);

/* The field that set the setting named `setting` (its long option: "width"), the last where
   several did, or NULL where the file set none. */
const char *HfConfig_field_of(const HfConfigReport *report, const char *setting);

/* "attnscope: warning: " and each warning, a line each. */
void HfConfig_warn(const HfConfigReport *report, FILE *out);

/* Whether the family of model_type multiplies its embedding rows by sqrt(hidden_size) before
   the first block (Gemma 2 and 3: their ScaledWordEmbedding, or the model's normalizer). */
bool HfConfig_scales_embedding(const char *model_type);

/* An MLP's activation as transformers names it (ACT2FN), and the MLP it is in a plain MLP
   (GPT-2, ViT) or a gated one (the Llama family), with why it is not quite attnscope's (NULL:
   it is exactly). */
typedef struct {
    const char *name;
    bool gated;
    Mlp mlp;
    const char *unlike;
} HfActivation;

/* The row of name in a gated or plain MLP, or NULL where no attnscope MLP is it. */
const HfActivation *HfActivation_find(const char *name, bool gated);

/* The name config.json gives mlp (exactly it), or NULL for none (--mlp none). */
const char *HfActivation_name(Mlp mlp);

/* The field model_type's MLP reads its activation from: hidden_act, Gemma 2 and 3's
   hidden_activation, GPT-2's activation_function (NULL, no family: hidden_act). */
const char *HfConfig_activation_key(const char *model_type);

/* "silu, swish, ... or gelu": the names a gated or plain MLP accepts, into buf. */
void HfActivation_accepted(bool gated, char *buf, size_t size);

/* Whether the config class of model_type's family gives field a value other than null when a
   file leaves it out (gpt-oss's rope_scaling: YaRN), so that a file meaning none writes null. */
bool HfConfig_default_sets(const char *model_type, const char *field);

/* The gain offset o of model_type's family's norms, y = N(x)·(o + w) (Gemma's 1: its RMSNorm
   multiplies by 1 + w), into *offset: false, *offset untouched, where model_type is no family
   attnscope reads. */
bool HfConfig_gain_offset(const char *model_type, int *offset);

/* The batch document's member: "hf_config": {"file", "model_type", "unmodelled": [...]}. */
void HfConfig_json(const HfConfigReport *report, Text *t);

#endif
