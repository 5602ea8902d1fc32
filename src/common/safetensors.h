/* A strict reader of Hugging Face's safetensors format (docs/weights.md): an 8-byte
 * little-endian header length N ≤ 100 000 000, N bytes of JSON naming each tensor's dtype,
 * shape and [begin, end) within the data that follows, then the data, which the tensors tile
 * exactly.  Strict as the reference reader (huggingface/safetensors, tensor.rs) is: a file it
 * would refuse is refused here, with a message naming the file, the tensor and what was
 * expected.  A checkpoint is one such file, or a directory holding one (model.safetensors) or
 * a model.safetensors.index.json whose weight_map names each tensor's shard.
 *
 * Files are memory-mapped: opening reads the headers only, and a tensor's bytes are read when
 * it is converted to doubles (Safetensors_to_double).  Only the floating dtypes F64, F32, F16
 * and BF16 are accepted; the format's others are refused by name.
 */
#ifndef ATTNSCOPE_COMMON_SAFETENSORS_H
#define ATTNSCOPE_COMMON_SAFETENSORS_H

#include "json_read.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The reference reader's bound on the header. */
#define SAFETENSORS_HEADER_MAX 100000000ull

/* The deepest shape accepted (the format has no bound; a weight has at most 4 axes). */
enum { SAFETENSORS_RANK_MAX = 8 };

typedef enum {
    SAFETENSORS_F64,
    SAFETENSORS_F32,
    SAFETENSORS_F16,
    SAFETENSORS_BF16
} SafetensorsDtype;

typedef struct {
    const char *name;
    const char *file; /* the path of the file holding it, for messages */
    SafetensorsDtype dtype;
    int rank;
    uint64_t shape[SAFETENSORS_RANK_MAX];
    uint64_t elements;         /* the product of the shape (1 for a scalar) */
    const unsigned char *data; /* elements × the dtype's size, little-endian, row-major */
} SafetensorsTensor;

typedef struct Safetensors Safetensors;

/* "F64", "F32", "F16", "BF16". */
const char *SafetensorsDtype_name(SafetensorsDtype dtype);
/* Bytes per element: 8, 4, 2, 2. */
size_t SafetensorsDtype_size(SafetensorsDtype dtype);

/* Checks the bytes of a whole file (bytes[0..length), the file's name for messages) and
   lists its tensors into a new Safetensors whose tensors point into `bytes` (which must
   outlive it).  Returns it, or NULL with the reason in err.  No file I/O: what the fuzzer
   drives. */
Safetensors *Safetensors_parse(const unsigned char *bytes, size_t length, const char *file,
                               char *err, size_t size);

/* Opens path: a .safetensors file, or a directory with model.safetensors.index.json (and its
   shards) or model.safetensors.  Returns the checkpoint, or NULL with the reason in err. */
Safetensors *Safetensors_open(const char *path, char *err, size_t size);

void Safetensors_close(Safetensors *s);

/* A JSON file beside a checkpoint (the index, config.json), at most 64 MiB, read whole: the
   value (free with JsonValue_free), or NULL with the reason, naming the file, in err. */
JsonValue *Safetensors_read_json(const char *path, char *err, size_t size);

/* What was opened (the path given), for the status line and messages. */
const char *Safetensors_path(const Safetensors *s);

int Safetensors_count(const Safetensors *s);
/* Tensor i (0..count), in the header's order (a directory's: shard by shard); NULL out of
   range. */
const SafetensorsTensor *Safetensors_at(const Safetensors *s, int i);
/* The tensor called name, or NULL. */
const SafetensorsTensor *Safetensors_find(const Safetensors *s, const char *name);
/* The value of the header's __metadata__ key, or NULL. */
const char *Safetensors_metadata(const Safetensors *s, const char *key);

/* The tensor's elements as doubles into out (t->elements of them), exactly: every F32, F16
   and BF16 value is a double. */
void Safetensors_to_double(const SafetensorsTensor *t, double *out);

/* Elements [first, first + count) in storage order (a row of a row-major table) into out,
   exactly: a table's rows are converted where they are used, never the whole table. */
void Safetensors_range_to_double(const SafetensorsTensor *t, uint64_t first, uint64_t count,
                                 double *out);
/* Rows [first_row, first_row + rows) and columns [first_column, first_column + columns) of a
   rank-2 tensor as the column-major rows × columns matrix, into out: element
   (first_row + r, first_column + c) at out[r + c·rows] (GPT-2's fused c_attn by columns,
   Phi-3's fused gate_up_proj by rows).  The block must lie inside the tensor. */
void Safetensors_block_to_double(const SafetensorsTensor *t, uint64_t first_row, uint64_t rows,
                                 uint64_t first_column, uint64_t columns, double *out);

/* Lets the pages of a tensor of a memory-mapped checkpoint go (they are read from the file
   again when needed), so that reading a checkpoint layer by layer keeps about one layer in
   memory; nothing for a checkpoint made by Safetensors_parse on bytes of the caller's. */
void Safetensors_release(const Safetensors *s, const SafetensorsTensor *t);

/* What identifies the checkpoint's contents: the bytes of its files, in the order opened (a
   directory's shards in the order of their file names), and the SHA-256 of those bytes, the
   files' one after another, as text: "sha256:" and 64 lowercase hex digits.  One pass over the
   files, whose pages are let go as it goes; 0 bytes for a checkpoint made by Safetensors_parse
   on bytes of the caller's.  0, or -1 where the digest could not be taken (out of memory). */
#define SAFETENSORS_HASH_TEXT 72
int Safetensors_content_hash(const Safetensors *s, char text[SAFETENSORS_HASH_TEXT],
                             uint64_t *bytes);

/* Whether each file mapped is still the one opened, as it was then (inode, size, modification
   and change times): pages let go are read again from the file, so a file rewritten while a
   run reads it gives it numbers of two contents.  0, or -1 with the first file changed or gone
   named in err. */
int Safetensors_unchanged(const Safetensors *s, char *err, size_t size);

/* The index (row-major, in the file's layout) of the first NaN or infinite element, its value
   in *value; t->elements when every one is finite.  The format allows them; a reader refuses
   them where it reads the values as weights. */
uint64_t Safetensors_first_nonfinite(const SafetensorsTensor *t, double *value);

/* The IEEE binary16 and bfloat16 values of a 16-bit pattern, exactly. */
double Safetensors_f16_to_double(uint16_t bits);
double Safetensors_bf16_to_double(uint16_t bits);

/* The bfloat16 and binary32 nearest x (ties to even; NaN stays NaN), as their bit patterns:
   what an export in those dtypes writes. */
uint16_t Safetensors_double_to_bf16(double x);
uint32_t Safetensors_double_to_f32(double x);

#endif
