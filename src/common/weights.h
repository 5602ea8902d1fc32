/* A configuration's weights as a safetensors checkpoint (docs/weights.md): the names and shapes
 * of its tensors (Hugging Face's Llama names where the block has the same matrix), the export
 * of the weights attnscope draws (--export-weights), and a checkpoint read back as the layer
 * step's weight source (--weights), converted to double layer by layer as the layers run.
 */
#ifndef ATTNSCOPE_COMMON_WEIGHTS_H
#define ATTNSCOPE_COMMON_WEIGHTS_H

#include "attnscope/config.h"
#include "attnscope/layer.h"

#include "hf_config.h"
#include "safetensors.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct Checkpoint Checkpoint;

/* Writes the weights of c (as Layer_draw makes them for c's seed, or as the weight source in
   use gives them) into dir as model.safetensors in dtype (F64, F32 or BF16, rounded to
   nearest) and config.json, creating dir if it is missing (not its parents); with `checkpoint`,
   the checkpoint the caller opened and gave Layer_use_weights (NULL: none), its embedding
   table and learned positions too, so that the export reads back as the checkpoint did.
   Layers and table come from the one source: a `checkpoint` whose source is not the one in use is
   refused, and so is no `checkpoint` while the source in use has a table, and so is a dir
   Weights_export_check refuses.  Each file is written
   beside its final name and renamed into place once both are whole: a failure leaves what dir held
   as it was (dir removed where the export created it), and other files in dir are never touched
   but the staged files of an export killed earlier (Staging_writer_gone).  The staged files are
   removed if SIGINT, SIGTERM or SIGHUP ends the process meanwhile (staging.h: not for a caller
   with handlers of its own).  config.json names the Hugging Face family whose model is the
   run's block (docs/weights.md), and states a window `read` (--hf-config's report, NULL: none)
   found covering every token as the file did; where transformers' model of the family named
   (or of none) is not the run's, a warning says so on `warnings` (NULL: not said) and in
   config.json.  Returns the bytes of model.safetensors, or -1 with the reason in err. */
long long Weights_export(const Config *c, const Checkpoint *checkpoint, const HfConfigReport *read,
                         const char *dir, SafetensorsDtype dtype, FILE *warnings, char *err,
                         size_t size);

/* What Weights_export refuses before it writes anything, for a caller that checks before it
   computes: dir must be a directory we may write, or one we may create (its parent exists); not
   the directory of `checkpoint` (NULL: none), the one being read; and hold no checkpoint file
   (config.json, *.safetensors, an index, PyTorch weights) but those an earlier export wrote
   (config.json with attnscope's settings, model.safetensors whose header names attnscope its
   writer), which the export replaces.  0, or -1 with the reason (not naming dir) in err. */
int Weights_export_check(const char *dir, const Checkpoint *checkpoint, char *err, size_t size);
/* What the caller knows of the settings: what gave each (describe writes into buf what set the
   setting called `setting`: "--width", "--hf-config ckpt/config.json's hidden_size",
   "--width's default"), whether an option or a file chose it (chosen: false for a default),
   and the family --hf-config's file names (model_type; NULL or "": none). */
typedef struct {
    void (*describe)(const void *context, const char *setting, char *buf, size_t size);
    bool (*chosen)(const void *context, const char *setting);
    const void *context;
    const char *model_type;
} SettingOrigins;

/* Opens path (safetensors.h) for c: every tensor c's weights need must be there with its
   shape, and nothing else; unit gains (QK-norm's) must be 1, and every value read finite.
   A size the directory's config.json states otherwise is refused naming what gave the
   setting (origins; NULL: its option, nothing chosen, no --hf-config).  The checkpoint's
   family (its directory's config.json's model_type, else origins->model_type) decides what its
   tensors' names cannot say: the table's scale (Gemma's sqrt(d)) and the gain offset its norms'
   gains are read with (Checkpoint_norm_gain_offset), c's where origins say something chose it
   (a choice against the family is kept and warned about on `warnings`), the family's otherwise
   (docs/weights.md, "What the checkpoint's config.json decides").  Returns the checkpoint, or
   NULL with the reason in err, which begins with the file it is about, quoted ('path': the
   tensor, what was expected). */
Checkpoint *Checkpoint_open(const char *path, const Config *c, const SettingOrigins *origins,
                            FILE *warnings, char *err, size_t size);

/* The gain offset the checkpoint's gains were read with: the run's --norm-gain-offset, which the
   weight source's fits requires. */
int Checkpoint_norm_gain_offset(const Checkpoint *k);

/* The weight source to give Layer_use_weights: it fills a layer of any configuration whose
   tensors have the shapes this one was opened for, and refuses others. */
const WeightSource *Checkpoint_source(const Checkpoint *k);

/* The rows V of the checkpoint's embedding table, 0 where it has none; whether it has
   learned positions beside it (GPT-2's wpe, model.embed_positions under the Llama names). */
int Checkpoint_vocab(const Checkpoint *k);
bool Checkpoint_has_positions(const Checkpoint *k);
/* The bytes the source's fills have read from the checkpoint so far (the tests compare them
   with what the plan declares: WORK_LOAD). */
uint64_t Checkpoint_bytes_read(const Checkpoint *k);

/* The path opened, for the status line. */
const char *Checkpoint_path(const Checkpoint *k);

/* Which weights a run ran: the path opened (a directory's model.safetensors or index, as
   safetensors.h resolves it), and what identifies the contents wherever the files are
   (Safetensors_content_hash: their bytes and SHA-256).  The batch document's "weights"
   (README, "weights"), which merge groups records by. */
typedef struct {
    const char *path;
    uint64_t bytes;
    char content_hash[SAFETENSORS_HASH_TEXT];
} CheckpointIdentity;
/* Takes k's identity, one pass over its files: before the run reads them, so that
   Checkpoint_unchanged after it says whether the numbers came from the contents hashed.
   0, or -1 with the reason in err. */
int Checkpoint_take_identity(Checkpoint *k, char *err, size_t size);
/* The identity Checkpoint_take_identity took (content_hash "" before). */
const CheckpointIdentity *Checkpoint_identity(const Checkpoint *k);
/* Whether k's files are still as they were when opened (Safetensors_unchanged): 0, or -1 with
   the file changed named in err. */
int Checkpoint_unchanged(const Checkpoint *k, char *err, size_t size);

void Checkpoint_close(Checkpoint *k);

#endif
