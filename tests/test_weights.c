/* A checkpoint written by Python (struct and json, HF's nn.Linear (out, in) convention) read
 * back as the layer step's weights: each tensor lands in the buffer the layer multiplies by,
 * in its layout (W^Q(i, o) = q_proj[o][i], the MLP's input projections transposed), from F32,
 * F16 and a sharded directory; shapes that do not fit are refused naming the tensor.  Trained
 * gains and biases (Qwen2's, Gemma's 1 + w, GPT-2's fused c_attn bias, a ViT-style block's)
 * land in their slots of the layer's LayerAffine, unit gains in none, and layer 1 of each runs as
 * the block written loop by loop (affine_reference.h) on the same weights.  A run under a
 * checkpoint reads what its plan declares, and each layer's W^Q and W^K once per seed. */
#include "testing.h"

#include "affine_reference.h"
#include "layer_fixture.h"
#include "model_fixture.h"
#include "result_compare.h"
#include "line_reader.h"
#include "weights.h"

#include "attnscope/entropy.h"
#include "attnscope/model.h"
#include "attnscope/work.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* d = 4, H = 2, G = 1 (kv width 2), swiglu with N = 8, L = 2, W^O gaussian. */
static Config small_config(void)
{
    Config c = Config_default();
    c.tokens = 4;
    c.width = 4;
    c.depth = 2;
    c.heads = 2;
    c.kv_heads = 1;
    c.output = OUTPUT_GAUSSIAN;
    c.mlp = MLP_SWIGLU;
    c.mlp_hidden = 8;
    return c;
}

/* Tensor t's element [r][c] as the Python writer makes it, for layer l (from 0): exact in
   binary16 (at most 11 significant bits). */
static double value(int l, int t, int r, int c)
{
    return (double)(l * 512 + t * 64 + r * 8 + c) / 4.0;
}

/* The tensors: (suffix, rows, columns) in the order of value()'s t. */
static const struct {
    const char *suffix;
    int rows, columns;
} TENSORS[] = {{"self_attn.q_proj.weight", 4, 4}, {"self_attn.k_proj.weight", 2, 4},
               {"self_attn.v_proj.weight", 2, 4}, {"self_attn.o_proj.weight", 4, 4},
               {"mlp.gate_proj.weight", 8, 4},    {"mlp.up_proj.weight", 8, 4},
               {"mlp.down_proj.weight", 4, 8}};

/* Writes the checkpoint with python3 into path (a file, or with `sharded` a directory of two
   shards and the index); false where python3 cannot. */
static bool python_writes(const char *path, const char *dtype, bool sharded, int skip_tensor)
{
    char script[4096];
    snprintf(
        script, sizeof script,
        "python3 - <<'EOF'\n"
        "import json, os, struct\n"
        "names = ['self_attn.q_proj.weight', 'self_attn.k_proj.weight',\n"
        "         'self_attn.v_proj.weight', 'self_attn.o_proj.weight',\n"
        "         'mlp.gate_proj.weight', 'mlp.up_proj.weight', 'mlp.down_proj.weight']\n"
        "shapes = [(4, 4), (2, 4), (2, 4), (4, 4), (8, 4), (8, 4), (4, 8)]\n"
        "code, size = {'F32': ('f', 4), 'F16': ('e', 2)}['%s']\n"
        "tensors = []\n"
        "for l in range(2):\n"
        "    for t, (name, (rows, cols)) in enumerate(zip(names, shapes)):\n"
        "        if t == %d: continue\n"
        "        xs = [(l * 512 + t * 64 + r * 8 + c) / 4 for r in range(rows) for c in "
        "range(cols)]\n"
        "        tensors.append(('model.layers.%%d.%%s' %% (l, name), [rows, cols],\n"
        "                        struct.pack('<%%d%%s' %% (len(xs), code), *xs)))\n"
        "def write(path, part):\n"
        "    header, at = {}, 0\n"
        "    for name, shape, raw in part:\n"
        "        header[name] = {'dtype': '%s', 'shape': shape, 'data_offsets': [at, at + "
        "len(raw)]}\n"
        "        at += len(raw)\n"
        "    text = json.dumps(header).encode()\n"
        "    open(path, 'wb').write(struct.pack('<Q', len(text)) + text + b''.join(r for _, _, r "
        "in part))\n"
        "path = '%s'\n"
        "if %d:\n"
        "    os.mkdir(path)\n"
        "    shards = {'a.safetensors': tensors[::2], 'b.safetensors': tensors[1::2]}\n"
        "    for f, part in shards.items(): write(os.path.join(path, f), part)\n"
        "    index = {'weight_map': {n: f for f, part in shards.items() for n, _, _ in part}}\n"
        "    json.dump(index, open(os.path.join(path, 'model.safetensors.index.json'), 'w'))\n"
        "else:\n"
        "    write(path, tensors)\n"
        "EOF\n",
        dtype, skip_tensor, dtype, path, sharded);
    return system(script) == 0;
}

static const double *buffer(const LayerWeights *w, int t)
{
    const double *list[] = {w->query,  w->key,    w->value,  w->output,
                            w->mlp_in, w->mlp_up, w->mlp_out};
    return list[t];
}

/* The column-major index of HF's element [r][c] in tensor t's buffer: nn.Linear's (out, in)
   is X·W's (in × out) matrix as stored; the MLP's input projections are kept N×d. */
static size_t index_of(int t, int r, int c)
{
    int rows = TENSORS[t].rows, columns = TENSORS[t].columns;
    bool transposed = t == 4 || t == 5;
    return transposed ? (size_t)r + (size_t)c * rows : (size_t)c + (size_t)r * columns;
}

static void check_reads(const char *path)
{
    Config c = small_config();
    char err[512] = "";
    Checkpoint *k = Checkpoint_open(path, &c, NULL, NULL, err, sizeof err);
    if (!k)
        fail_msg("%s", err);
    double storage[7][64];
    LayerWeights w = {.query = storage[0],
                      .key = storage[1],
                      .value = storage[2],
                      .output = storage[3],
                      .mlp_in = storage[4],
                      .mlp_up = storage[5],
                      .mlp_out = storage[6]};
    const WeightSource *source = Checkpoint_source(k);
    for (int layer = 1; layer <= 2; layer++) {
        memset(storage, 0, sizeof storage);
        assert_int_equal(source->fill(source->context, &c, layer, LAYER_DRAW_ALL, &w), 0);
        for (int t = 0; t < 7; t++)
            for (int r = 0; r < TENSORS[t].rows; r++)
                for (int col = 0; col < TENSORS[t].columns; col++)
                    if (buffer(&w, t)[index_of(t, r, col)] != value(layer - 1, t, r, col))
                        fail_msg("layer %d %s [%d][%d]: %g, expected %g", layer, TENSORS[t].suffix,
                                 r, col, buffer(&w, t)[index_of(t, r, col)],
                                 value(layer - 1, t, r, col));
    }
    /* A configuration whose shapes differ is refused by the source too. */
    Config wider = c;
    wider.width = 8;
    assert_int_not_equal(source->fill(source->context, &wider, 1, LAYER_DRAW_ALL, &w), 0);
    /* H = 4 with G = 2: every tensor keeps its shape (G·d_h = 2), but the heads split W^Q
       otherwise: another model, refused too, with the reason. */
    Config split = c;
    split.heads = 4;
    split.kv_heads = 2;
    char why[256];
    assert_int_not_equal(source->fill(source->context, &split, 1, LAYER_DRAW_ALL, &w), 0);
    assert_false(source->fits(source->context, &split, why, sizeof why));
    assert_non_null(strstr(why, "L = 2 layers of H = 2 heads, G = 1"));
    assert_true(source->fits(source->context, &c, why, sizeof why));
    Config drawn_otherwise = c;
    drawn_otherwise.sigma_qk = 0.5;
    assert_false(source->fits(source->context, &drawn_otherwise, why, sizeof why));
    assert_non_null(strstr(why, "not drawn"));
    Checkpoint_close(k);
}

static void test_python_checkpoints(void **state)
{
    (void)state;
    char f32[128], f16[128], sharded[128];
    snprintf(f32, sizeof f32, "%s/f32.safetensors", scratch_directory());
    snprintf(f16, sizeof f16, "%s/f16.safetensors", scratch_directory());
    snprintf(sharded, sizeof sharded, "%s/sharded", scratch_directory());
    if (!python_writes(f32, "F32", false, -1))
        skip(); /* no python3 here */
    check_reads(f32);
    assert_true(python_writes(f16, "F16", false, -1));
    check_reads(f16);
    assert_true(python_writes(sharded, "F32", true, -1));
    check_reads(sharded);
}

/* Dates path back to 2000, so that a write now gives it another modification time even where
   the clock the file system stamps with is coarse. */
static void date_back(const char *path)
{
    const struct timespec old[2] = {{946684800, 0}, {946684800, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

/* Pages a run let go are read again from the file: a checkpoint's files rewritten in place
   (one byte, the size kept), replaced by a rename, or removed after the identity was taken are
   named by Checkpoint_unchanged; files left alone are not, and their identity is the one taken
   before (a sharded directory's: both shards' bytes). */
static void test_files_changed_after_the_identity(void **state)
{
    (void)state;
    char file[128], sharded[128], shard[160], first_shard[160], other[160], err[512] = "";
    snprintf(file, sizeof file, "%s/changed.safetensors", scratch_directory());
    snprintf(sharded, sizeof sharded, "%s/changed", scratch_directory());
    snprintf(shard, sizeof shard, "%s/b.safetensors", sharded);
    snprintf(first_shard, sizeof first_shard, "%s/a.safetensors", sharded);
    snprintf(other, sizeof other, "%s/other.safetensors", scratch_directory());
    if (!python_writes(file, "F32", false, -1))
        skip(); /* no python3 here */
    assert_true(python_writes(sharded, "F32", true, -1));
    Config c = small_config();
    for (int change = 0; change < 4; change++) {
        const char *path = change == 3 ? sharded : file;
        assert_true(change == 3 || (python_writes(file, "F32", false, -1) &&
                                    python_writes(other, "F32", false, 0)));
        date_back(change == 3 ? shard : file);
        Checkpoint *k = Checkpoint_open(path, &c, NULL, NULL, err, sizeof err);
        if (!k || Checkpoint_take_identity(k, err, sizeof err))
            fail_msg("%s", err);
        const CheckpointIdentity *id = Checkpoint_identity(k);
        assert_int_equal(strlen(id->content_hash), 7 + 64);
        assert_int_equal(id->bytes,
                         change == 3 ? file_size(shard) + file_size(first_shard) : file_size(file));
        assert_int_equal(Checkpoint_unchanged(k, err, sizeof err), 0);
        int fd = open(change == 3 ? shard : file, O_WRONLY);
        char byte = 1;
        if (change == 0 || change == 3) /* a byte of the data rewritten, the size kept */
            assert_int_equal(pwrite(fd, &byte, 1, (off_t)file_size(change == 3 ? shard : file) - 1),
                             1);
        close(fd);
        if (change == 1) /* another file renamed over it */
            assert_int_equal(rename(other, file), 0);
        if (change == 2) /* removed */
            assert_int_equal(unlink(file), 0);
        err[0] = '\0';
        assert_int_equal(Checkpoint_unchanged(k, err, sizeof err), -1);
        if (!strstr(err, change == 3 ? shard : file) ||
            !strstr(err, change == 2 ? "gone while the run read it" : "changed while the run"))
            fail_msg("change %d: \"%s\"", change, err);
        Checkpoint_close(k);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    char missing[128], err[512];
    snprintf(missing, sizeof missing, "%s/missing.safetensors", scratch_directory());
    if (!python_writes(missing, "F32", false, 5))
        skip();
    Config c = small_config();
    assert_null(Checkpoint_open(missing, &c, NULL, NULL, err, sizeof err));
    assert_non_null(strstr(err, "no tensor 'model.layers.0.mlp.up_proj.weight' (shape [8, 4])"));
    c.mlp_hidden = 16;
    char f32[128];
    snprintf(f32, sizeof f32, "%s/f32.safetensors", scratch_directory());
    assert_null(Checkpoint_open(f32, &c, NULL, NULL, err, sizeof err));
    assert_non_null(strstr(err, "tensor 'model.layers.0.mlp.gate_proj.weight' has shape [8, 4], "
                                "expected [16, 4]"));
    c = small_config();
    c.depth = 1;
    assert_null(Checkpoint_open(f32, &c, NULL, NULL, err, sizeof err));
    assert_non_null(strstr(err, "tensor 'model.layers.1.self_attn.q_proj.weight' is not a weight "
                                "of this configuration"));
}

/* ---- a trained checkpoint's gains and biases ---------------------------------------------- */

enum { MATRIX = -1, GAIN_TENSORS_MAX = 20 };

/* A tensor of one layer of a family's checkpoint: its name, shape (columns 0: a vector), and
   the slot of LayerAffine it lands in (MATRIX: a weight matrix, not checked here) from entry
   `first` of the vector. */
typedef struct {
    const char *name;
    int rows, columns;
    int slot; /* offsetof(LayerAffine, ...) or MATRIX */
    int first;
    bool gain;
} GainTensor;

typedef struct {
    const char *label, *prefix; /* prefix: "model.layers." or "transformer.h." */
    GainTensor tensors[GAIN_TENSORS_MAX];
} Family;

#define SLOT(field) ((int)offsetof(LayerAffine, field))

/* The entry i of tensor t of layer l as Python writes it: gains o' + k/16 (k = 1 … 5, o' the
   unit gain's stored value 1 − o), other entries (k − 4)/8, k from (l, t, i): exact in F32.
   The tensor `unit_tensor` of layer 0 holds unit gains (all o'). */
static double gain_value(const GainTensor *t, int l, int index, int i, int offset)
{
    int k = (l * 7 + index * 3 + i) % 9;
    return t->gain ? 1.0 - offset + (k % 5 + 1) / 16.0 : (k - 4) / 8.0;
}

static bool python_writes_family(const char *path, const Family *f, int offset, int unit_tensor)
{
    char list[2048] = "";
    for (int t = 0; f->tensors[t].name; t++) {
        const GainTensor *g = &f->tensors[t];
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "('%s', [%d%s%.0d], %d),", g->name, g->rows,
                 g->columns ? ", " : "", g->columns, g->gain);
    }
    char script[6144];
    snprintf(script, sizeof script,
             "python3 - <<'EOF'\n"
             "import json, struct\n"
             "spec = [%s]\n"
             "tensors = []\n"
             "for l in range(2):\n"
             "    for t, (name, shape, gain) in enumerate(spec):\n"
             "        n = shape[0] * (shape[1] if len(shape) > 1 else 1)\n"
             "        ks = [(l * 7 + t * 3 + i) %% 9 for i in range(n)]\n"
             "        if gain and l == 0 and t == %d: xs = [1 - %d] * n\n"
             "        elif gain: xs = [1 - %d + (k %% 5 + 1) / 16 for k in ks]\n"
             "        else: xs = [(k - 4) / 8 for k in ks]\n"
             "        tensors.append(('%s%%d.%%s' %% (l, name), shape,\n"
             "                        struct.pack('<%%df' %% n, *xs)))\n"
             "header, at = {}, 0\n"
             "for name, shape, raw in tensors:\n"
             "    header[name] = {'dtype': 'F32', 'shape': shape, 'data_offsets': [at, at + "
             "len(raw)]}\n"
             "    at += len(raw)\n"
             "text = json.dumps(header).encode()\n"
             "open('%s', 'wb').write(struct.pack('<Q', len(text)) + text + b''.join(r for _, _, "
             "r in tensors))\n"
             "EOF\n",
             list, unit_tensor, offset, offset, f->prefix, path);
    return system(script) == 0;
}

/* Each gain and bias of the family's checkpoint in its slot of the source's LayerAffine, the
   unit tensor in none. */
static void check_family(const Family *f, const Config *c, int unit_tensor)
{
    char path[160], err[512] = "";
    snprintf(path, sizeof path, "%s/%s.safetensors", scratch_directory(), f->label);
    if (!python_writes_family(path, f, c->norm_gain_offset, unit_tensor))
        skip();
    Checkpoint *k = Checkpoint_open(path, c, NULL, NULL, err, sizeof err);
    if (!k)
        fail_msg("%s: %s", f->label, err);
    const WeightSource *source = Checkpoint_source(k);
    for (int l = 0; l < 2; l++) {
        const LayerAffine *a = source->affine(source->context, c, l + 1);
        assert_non_null(a);
        for (int t = 0; f->tensors[t].name; t++) {
            const GainTensor *g = &f->tensors[t];
            if (g->slot == MATRIX)
                continue;
            const double *v = *(double *const *)(const void *)((const char *)a + g->slot);
            if (l == 0 && t == unit_tensor) {
                if (v)
                    fail_msg("%s: %s of layer 0 holds unit gains, read as some", f->label, g->name);
                continue;
            }
            if (!v)
                fail_msg("%s: layer %d %s not read", f->label, l, g->name);
            int n = g->slot == SLOT(query_bias) || g->slot == SLOT(output_bias) ||
                            g->slot == SLOT(mlp_out_bias) || g->slot < SLOT(query_norm_gain)
                        ? c->width
                    : g->slot == SLOT(key_bias) || g->slot == SLOT(value_bias) ? 2
                    : g->slot == SLOT(mlp_in_bias) || g->slot == SLOT(mlp_up_bias)
                        ? Config_mlp_hidden(c)
                        : Config_head_width(c);
            for (int i = 0; i < n; i++)
                if (v[i] != gain_value(g, l, t, g->first + i, c->norm_gain_offset))
                    fail_msg("%s: layer %d %s [%d]: %.17g, expected %.17g", f->label, l, g->name,
                             g->first + i, v[i],
                             gain_value(g, l, t, g->first + i, c->norm_gain_offset));
        }
    }
    /* The gains were read as o + w with o fixed: another offset is another model. */
    Config other = *c;
    other.norm_gain_offset = 1 - c->norm_gain_offset;
    char why[256];
    assert_false(source->fits(source->context, &other, why, sizeof why));
    assert_non_null(strstr(why, "--norm-gain-offset"));
    /* Layer 1 run by the step on the checkpoint's weights, gains and biases, against the block
       written loop by loop. */
    Layer l;
    layer_new(&l, c);
    Layer_use_weights(source);
    layer_draw_all(&l, c);
    affine_reference_check(c, &l, source->affine(source->context, c, 1), f->label);
    Layer_use_weights(NULL);
    layer_free(&l, c);
    Checkpoint_close(k);
}

/* d = 4, H = 2 over G = 1, N = 8, L = 2, W^O Gaussian; a causal softmax, PyTorch's rows and
   a plain skip, as the reference computes them. */
static Config family_config(LayerNorm norm, LnPlace place, Mlp mlp)
{
    Config c = small_config();
    c.mask = MASK_CAUSAL;
    c.skip = SKIP_PLAIN;
    c.ln_scale = LN_SCALE_SQRT_D;
    c.layernorm = norm;
    c.ln_place = place;
    c.mlp = mlp;
    return c;
}

/* Qwen2: RMSNorm before each branch, biases on q, k and v only. */
static void test_qwen2_biases(void **state)
{
    (void)state;
    const Family qwen2 = {
        "qwen2",
        "model.layers.",
        {{"input_layernorm.weight", 4, 0, SLOT(norm[NORM_ATTENTION_IN].gain), 0, true},
         {"self_attn.q_proj.weight", 4, 4, MATRIX, 0, false},
         {"self_attn.q_proj.bias", 4, 0, SLOT(query_bias), 0, false},
         {"self_attn.k_proj.weight", 2, 4, MATRIX, 0, false},
         {"self_attn.k_proj.bias", 2, 0, SLOT(key_bias), 0, false},
         {"self_attn.v_proj.weight", 2, 4, MATRIX, 0, false},
         {"self_attn.v_proj.bias", 2, 0, SLOT(value_bias), 0, false},
         {"self_attn.o_proj.weight", 4, 4, MATRIX, 0, false},
         {"post_attention_layernorm.weight", 4, 0, SLOT(norm[NORM_MLP_IN].gain), 0, true},
         {"mlp.gate_proj.weight", 8, 4, MATRIX, 0, false},
         {"mlp.up_proj.weight", 8, 4, MATRIX, 0, false},
         {"mlp.down_proj.weight", 4, 8, MATRIX, 0, false}}};
    Config c = family_config(LAYERNORM_RMS, LN_PLACE_PRE, MLP_SWIGLU);
    check_family(&qwen2, &c, 8);
    /* The biases Qwen2 does not have are none. */
}

/* Gemma 2 and 3: four RMSNorms (peri-LN) and QK-norm, gains stored as w in x·(1 + w); layer 0's
   k_norm all 0, a unit gain. */
static void test_gemma_offset(void **state)
{
    (void)state;
    const Family gemma = {
        "gemma",
        "model.layers.",
        {{"input_layernorm.weight", 4, 0, SLOT(norm[NORM_ATTENTION_IN].gain), 0, true},
         {"post_attention_layernorm.weight", 4, 0, SLOT(norm[NORM_ATTENTION_OUT].gain), 0, true},
         {"self_attn.q_proj.weight", 4, 4, MATRIX, 0, false},
         {"self_attn.k_proj.weight", 2, 4, MATRIX, 0, false},
         {"self_attn.q_norm.weight", 2, 0, SLOT(query_norm_gain), 0, true},
         {"self_attn.k_norm.weight", 2, 0, SLOT(key_norm_gain), 0, true},
         {"self_attn.v_proj.weight", 2, 4, MATRIX, 0, false},
         {"self_attn.o_proj.weight", 4, 4, MATRIX, 0, false},
         {"pre_feedforward_layernorm.weight", 4, 0, SLOT(norm[NORM_MLP_IN].gain), 0, true},
         {"post_feedforward_layernorm.weight", 4, 0, SLOT(norm[NORM_MLP_OUT].gain), 0, true},
         {"mlp.gate_proj.weight", 8, 4, MATRIX, 0, false},
         {"mlp.up_proj.weight", 8, 4, MATRIX, 0, false},
         {"mlp.down_proj.weight", 4, 8, MATRIX, 0, false}}};
    Config c = family_config(LAYERNORM_RMS, LN_PLACE_PERI, MLP_GEGLU);
    c.qk_norm = QK_NORM_HEAD;
    c.norm_gain_offset = 1;
    check_family(&gemma, &c, 5);
}

/* GPT-2: Conv1D names, LayerNorms with biases before each branch, q | k | v biases fused in
   c_attn.bias, every projection's bias. */
static void test_gpt2_biases(void **state)
{
    (void)state;
    const Family gpt2 = {"gpt2",
                         "transformer.h.",
                         {{"ln_1.weight", 4, 0, SLOT(norm[NORM_ATTENTION_IN].gain), 0, true},
                          {"ln_1.bias", 4, 0, SLOT(norm[NORM_ATTENTION_IN].bias), 0, false},
                          {"attn.c_attn.weight", 4, 8, MATRIX, 0, false},
                          {"attn.c_attn.bias", 8, 0, SLOT(query_bias), 0, false},
                          {"attn.c_proj.weight", 4, 4, MATRIX, 0, false},
                          {"attn.c_proj.bias", 4, 0, SLOT(output_bias), 0, false},
                          {"ln_2.weight", 4, 0, SLOT(norm[NORM_MLP_IN].gain), 0, true},
                          {"ln_2.bias", 4, 0, SLOT(norm[NORM_MLP_IN].bias), 0, false},
                          {"mlp.c_fc.weight", 4, 8, MATRIX, 0, false},
                          {"mlp.c_fc.bias", 8, 0, SLOT(mlp_in_bias), 0, false},
                          {"mlp.c_proj.weight", 8, 4, MATRIX, 0, false},
                          {"mlp.c_proj.bias", 4, 0, SLOT(mlp_out_bias), 0, false}}};
    Config c = family_config(LAYERNORM_LN, LN_PLACE_PRE, MLP_GELU);
    check_family(&gpt2, &c, 6);
    /* c_attn.bias's key and value columns (entries 4, 5 and 6, 7) in their slots. */
    Family kv = gpt2;
    kv.tensors[3] = (GainTensor){"attn.c_attn.bias", 8, 0, SLOT(key_bias), 4, false};
    check_family(&kv, &c, 6);
    kv.tensors[3] = (GainTensor){"attn.c_attn.bias", 8, 0, SLOT(value_bias), 6, false};
    check_family(&kv, &c, 6);
}

/* A ViT-style block under Llama names: LayerNorms after each branch, W^O's and the plain MLP's
   biases. */
static void test_mlp_biases(void **state)
{
    (void)state;
    const Family vit = {
        "vit",
        "model.layers.",
        {{"post_attention_layernorm.weight", 4, 0, SLOT(norm[NORM_ATTENTION_OUT].gain), 0, true},
         {"post_attention_layernorm.bias", 4, 0, SLOT(norm[NORM_ATTENTION_OUT].bias), 0, false},
         {"self_attn.q_proj.weight", 4, 4, MATRIX, 0, false},
         {"self_attn.k_proj.weight", 2, 4, MATRIX, 0, false},
         {"self_attn.v_proj.weight", 2, 4, MATRIX, 0, false},
         {"self_attn.o_proj.weight", 4, 4, MATRIX, 0, false},
         {"self_attn.o_proj.bias", 4, 0, SLOT(output_bias), 0, false},
         {"post_feedforward_layernorm.weight", 4, 0, SLOT(norm[NORM_MLP_OUT].gain), 0, true},
         {"post_feedforward_layernorm.bias", 4, 0, SLOT(norm[NORM_MLP_OUT].bias), 0, false},
         {"mlp.up_proj.weight", 8, 4, MATRIX, 0, false},
         {"mlp.up_proj.bias", 8, 0, SLOT(mlp_in_bias), 0, false},
         {"mlp.down_proj.weight", 4, 8, MATRIX, 0, false},
         {"mlp.down_proj.bias", 4, 0, SLOT(mlp_out_bias), 0, false}}};
    Config c = family_config(LAYERNORM_LN, LN_PLACE_OUTPUT, MLP_GELU);
    check_family(&vit, &c, 0);
}

/* The bytes of a fresh run's plan that the checkpoint's fills read (WORK_LOAD), and the
   normals it draws: a checkpoint's weights are read, not drawn. */
static bool sum_step(void *context, const WorkStep *step)
{
    double *sums = context;
    const WorkList *lists[] = {&step->serial, &step->lane[0], &step->lane[1]};
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < lists[l]->count; i++) {
            const Work *w = &lists[l]->item[i];
            if (w->kind == WORK_LOAD)
                sums[0] += w->m * w->times;
            if (w->kind == WORK_NORMALS)
                sums[1] += w->m * w->times;
        }
    return true;
}

static void declared_load(const Config *c, double *bytes, double *normals)
{
    ModelPlan plan;
    assert_int_equal(Model_plan(c, NULL, &plan), 0);
    double sums[2] = {0, 0};
    for (int s = 0; s < plan.seeds; s++)
        Work_seed_steps(&plan, s, c->depth + 1, sum_step, sums);
    ModelPlan_release(&plan);
    *bytes = sums[0];
    *normals = sums[1];
}

/* The bytes of the checkpoint's tensors that are not norms' gains (those are checked at
   open, never read by a run), from its header. */
static double weight_bytes(const char *path)
{
    char err[256];
    Safetensors *s = Safetensors_open(path, err, sizeof err);
    assert_non_null(s);
    double bytes = 0;
    for (int i = 0; i < Safetensors_count(s); i++) {
        const SafetensorsTensor *t = Safetensors_at(s, i);
        if (!strstr(t->name, "norm.weight"))
            bytes += (double)(t->elements * SafetensorsDtype_size(t->dtype));
    }
    Safetensors_close(s);
    return bytes;
}

/* The plan prices reading the checkpoint (WORK_LOAD), the bytes every run's fills read, in
   place of the draws: the normals left are the input's. */
static void test_plan_declares_the_load(void **state)
{
    (void)state;
    Config base = small_config();
    base.mlp = MLP_GELU;
    base.layernorm = LAYERNORM_RMS;
    Config gated = small_config(), ensemble = base;
    gated.layernorm = LAYERNORM_RMS;
    ensemble.seeds = 3;
    ensemble.gap = GAP_CENTER;
    const Config *configs[] = {&base, &gated, &ensemble};
    const SafetensorsDtype dtypes[] = {SAFETENSORS_BF16, SAFETENSORS_F64, SAFETENSORS_F32};
    for (int i = 0; i < 3; i++) {
        const Config *c = configs[i];
        char dir[128], file[160], err[512];
        snprintf(dir, sizeof dir, "%s/load%d", scratch_directory(), i);
        snprintf(file, sizeof file, "%s/model.safetensors", dir);
        assert_true(Weights_export(c, NULL, NULL, dir, dtypes[i], NULL, err, sizeof err) > 0);
        double drawn_bytes, drawn_normals, input_normals = 0;
        declared_load(c, &drawn_bytes, &drawn_normals);
        Checkpoint *k = Checkpoint_open(dir, c, NULL, NULL, err, sizeof err);
        assert_non_null(k);
        Layer_use_weights(Checkpoint_source(k));
        double bytes, normals;
        declared_load(c, &bytes, &normals);
        WorkList input = {0};
        Layer_declare_input(c, &input);
        for (int j = 0; j < input.count; j++)
            if (input.item[j].kind == WORK_NORMALS)
                input_normals = input.item[j].m * input.item[j].times;
        assert_true(drawn_bytes == 0 && drawn_normals > normals);
        assert_true(normals == input_normals * c->seeds);
        Workspace *w = Workspace_new();
        Result *r = Result_new();
        assert_int_equal(Model_run(c, w, r, NULL, err, sizeof err), 0);
        double read = (double)Checkpoint_bytes_read(k);
        if (bytes != read)
            fail_msg("configuration %d: the plan declares %.17g bytes read, the run read %.17g", i,
                     bytes, read);
        /* One seed without gradients reads each weight once. */
        if (c->seeds == 1 && !Model_value_weights_cached(c))
            assert_true(read == weight_bytes(file));
        Layer_use_weights(NULL);
        Result_free(r);
        Workspace_free(w);
        Checkpoint_close(k);
    }
}

/* Whether s's needs name drawn weights ("weights=none"). */
static bool needs_drawn_weights(const Setting *s)
{
    return s->needs && strstr(s->needs, "weights=none") != NULL;
}

/* c with s's needs but drawn weights applied (preset-style: "init=gpt2 weights=none"). */
static Config under_needs(const Setting *s, Config c)
{
    char text[256], err[256];
    snprintf(text, sizeof text, "%s", s->needs);
    for (char *save = NULL, *item = strtok_r(text, " ", &save); item;
         item = strtok_r(NULL, " ", &save)) {
        char *equals = strchr(item, '=');
        *equals = '\0';
        const Setting *other = Settings_find(item);
        if (other && Setting_parse(other, &c, equals + 1, err, sizeof err))
            fail_msg("--%s needs: %s", s->name, err);
    }
    return c;
}

static Result *run_on(const Config *c)
{
    char err[512];
    Workspace *w = Workspace_new();
    Result *r = Result_new();
    if (Model_run(c, w, r, NULL, err, sizeof err))
        fail_msg("%s", err);
    Workspace_free(w);
    return r;
}

/* On a checkpoint's weights what says how weights are drawn has no effect: exactly the rows
   whose needs say "weights=none" are without effect there while in use under their needs on
   drawn weights, the warning says which weights the run has, every other row's effect is the
   checkpoint's to leave as it was (but the gain offset, which needs one), and a drawing value
   the checkpoint takes (the depth scale, the sinks' spread) changes no number. */
static void test_drawing_settings_inert_on_a_checkpoint(void **state)
{
    (void)state;
    Config c = small_config();
    c.mlp = MLP_GELU;
    c.sink = 0;
    c.sink_std = 0.02;
    char dir[128], err[512];
    snprintf(dir, sizeof dir, "%s/drawing", scratch_directory());
    assert_true(Weights_export(&c, NULL, NULL, dir, SAFETENSORS_F64, NULL, err, sizeof err) > 0);
    Checkpoint *k = Checkpoint_open(dir, &c, NULL, NULL, err, sizeof err);
    if (!k)
        fail_msg("%s", err);
    const WeightSource *source = Checkpoint_source(k);
    bool drawn_effect[SETTINGS_MAX], drawn_under_needs[SETTINGS_MAX];
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        Config on = needs_drawn_weights(s) ? under_needs(s, c) : c;
        drawn_effect[i] = Setting_has_effect(s, &c);
        drawn_under_needs[i] = Setting_has_effect(s, &on);
    }
    Layer_use_weights(source);
    int drawing = 0;
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        char text[WARNING_LENGTH], here[256];
        if (!needs_drawn_weights(s)) {
            bool gain_offset = s->needs && strstr(s->needs, "weights=FILE");
            if (!gain_offset && Setting_has_effect(s, &c) != drawn_effect[i])
                fail_msg("--%s: its effect changed with the checkpoint", s->name);
            continue;
        }
        drawing++;
        Config on = under_needs(s, c);
        if (!drawn_under_needs[i])
            fail_msg("--%s: not in use under its needs (%s) on drawn weights", s->name, s->needs);
        if (Setting_has_effect(s, &on))
            fail_msg("--%s: in use on a checkpoint's weights", s->name);
        assert_true(Setting_inert_text(s, &on, text, sizeof text) > 0);
        snprintf(here, sizeof here, "(here --weights %s)", source->name);
        if (!strstr(text, "drawn weights (no --weights)") || !strstr(text, here))
            fail_msg("--%s: '%s'", s->name, text);
    }
    assert_true(drawing >= 10); /* σ_qk, --init, its parameters, the per-matrix choices, ... */
    Config taken = c;
    taken.depth_scale = DEPTH_SCALE_TOTAL;
    taken.sink_std = 0.5;
    assert_true(source->fits(source->context, &taken, err, sizeof err));
    Result *a = run_on(&c), *b = run_on(&taken);
    assert_true(same_numbers(a, b));
    Result_free(a);
    Result_free(b);
    Layer_use_weights(NULL);
    Checkpoint_close(k);
    /* Drawn again: the same two values draw other weights. */
    a = run_on(&c);
    b = run_on(&taken);
    assert_false(same_numbers(a, b));
    Result_free(a);
    Result_free(b);
}

/* Phi-3: W^Q, W^K and W^V fused by rows in qkv_proj, the gate and the up projection in
   gate_up_proj, no biases.  Each matrix is its rows of the fused tensor, placed as the
   separate tensors' are (W^K: rows 4, 5 of qkv_proj as the d × 2 column-major matrix; the up
   projection: rows 8 … 15 of gate_up_proj kept transposed, N × d); a run reads each fused
   tensor once, the bytes its plan declares. */
static void test_phi3_fused(void **state)
{
    (void)state;
    const Family phi3 = {
        "phi3",
        "model.layers.",
        {{"input_layernorm.weight", 4, 0, SLOT(norm[NORM_ATTENTION_IN].gain), 0, true},
         {"self_attn.qkv_proj.weight", 8, 4, MATRIX, 0, false},
         {"self_attn.o_proj.weight", 4, 4, MATRIX, 0, false},
         {"post_attention_layernorm.weight", 4, 0, SLOT(norm[NORM_MLP_IN].gain), 0, true},
         {"mlp.gate_up_proj.weight", 16, 4, MATRIX, 0, false},
         {"mlp.down_proj.weight", 4, 8, MATRIX, 0, false}}};
    Config c = family_config(LAYERNORM_RMS, LN_PLACE_PRE, MLP_SWIGLU);
    check_family(&phi3, &c, 0);
    char path[160], err[512] = "";
    snprintf(path, sizeof path, "%s/phi3.safetensors", scratch_directory());
    Checkpoint *k = Checkpoint_open(path, &c, NULL, NULL, err, sizeof err);
    if (!k)
        fail_msg("%s", err);
    const WeightSource *source = Checkpoint_source(k);
    double query[64], key[64], value[64], output[64], in[64], up[64], down[64];
    LayerWeights w = {.query = query,
                      .key = key,
                      .value = value,
                      .output = output,
                      .mlp_in = in,
                      .mlp_up = up,
                      .mlp_out = down};
    assert_int_equal(source->fill(source->context, &c, 1, LAYER_DRAW_ALL, &w), 0);
    for (int row = 0; row < 2; row++)
        for (int col = 0; col < 4; col++) {
            assert_true(key[col + 4 * row] ==
                        gain_value(&phi3.tensors[1], 0, 1, (4 + row) * 4 + col, 0));
            assert_true(value[col + 4 * row] ==
                        gain_value(&phi3.tensors[1], 0, 1, (6 + row) * 4 + col, 0));
        }
    for (int row = 0; row < 8; row++)
        for (int col = 0; col < 4; col++) {
            assert_true(in[row + 8 * col] == gain_value(&phi3.tensors[4], 0, 4, row * 4 + col, 0));
            assert_true(up[row + 8 * col] ==
                        gain_value(&phi3.tensors[4], 0, 4, (8 + row) * 4 + col, 0));
        }
    double bytes, normals, filled = (double)Checkpoint_bytes_read(k);
    Layer_use_weights(source);
    declared_load(&c, &bytes, &normals);
    Workspace *ws = Workspace_new();
    Result *r = Result_new();
    assert_int_equal(Model_run(&c, ws, r, NULL, err, sizeof err), 0);
    double read = (double)Checkpoint_bytes_read(k) - filled;
    if (bytes != read || (!Model_value_weights_cached(&c) && read != weight_bytes(path)))
        fail_msg("the plan declares %.17g bytes, the run read %.17g, the file's weights are %.17g",
                 bytes, read, weight_bytes(path));
    Layer_use_weights(NULL);
    Result_free(r);
    Workspace_free(ws);
    Checkpoint_close(k);
}

/* A checkpoint's source with its fills counted: how often the run read each layer's W^Q and
   W^K (the attention part).  The other calls go to the checkpoint as they are. */
typedef struct {
    const WeightSource *checkpoint;
    int attention_reads[CONFIG_DEPTH_MAX + 1];
} CountedReads;

static int counted_fill(void *context, const Config *c, int layer, unsigned parts,
                        const LayerWeights *w)
{
    CountedReads *r = context;
    if (parts & LAYER_DRAW_ATTENTION)
        r->attention_reads[layer]++;
    return r->checkpoint->fill(r->checkpoint->context, c, layer, parts, w);
}

static bool counted_fits(void *context, const Config *c, char *why, size_t size)
{
    const WeightSource *k = ((CountedReads *)context)->checkpoint;
    return !k->fits || k->fits(k->context, c, why, size);
}

static const LayerAffine *counted_affine(void *context, const Config *c, int layer)
{
    const WeightSource *k = ((CountedReads *)context)->checkpoint;
    return k->affine ? k->affine(k->context, c, layer) : NULL;
}

static void counted_declare(void *context, const Config *c, unsigned parts, WorkList *out)
{
    const WeightSource *k = ((CountedReads *)context)->checkpoint;
    k->declare(k->context, c, parts, out);
}

static int counted_embed(void *context, const Config *c, const double *ids, double *rows)
{
    const WeightSource *k = ((CountedReads *)context)->checkpoint;
    return k->embed(k->context, c, ids, rows);
}

/* Under a checkpoint the run reads each layer's W^Q and W^K once per seed, in that layer's
   step: the next layer's qk norms, which drawn weights pair with this layer's
   (Entropy_qk_norms_ahead), are not read ahead, which would read those tensors twice (and
   emit no progress of their own that --verbose could show).  Softmax rows of bilinear logits,
   so the pairing applies where weights are drawn; with and without the gradients. */
static void test_next_layer_not_read_ahead(void **state)
{
    (void)state;
    Config plain = Config_default();
    plain.tokens = 8;
    plain.width = 8;
    plain.depth = 4;
    plain.seeds = 2;
    Config graded = plain; /* the gradients' value chain: one head, no skip, no LayerNorm */
    graded.heads = 1;
    graded.skip = SKIP_NONE;
    graded.layernorm = LAYERNORM_NONE;
    graded.output = OUTPUT_IDENTITY;
    graded.mlp = MLP_NONE;
    plain.skip = SKIP_PLAIN;
    assert_null(Model_gradients_unavailable(&graded));
    assert_non_null(Model_gradients_unavailable(&plain));
    const Config *configs[] = {&plain, &graded};
    for (int i = 0; i < 2; i++) {
        const Config *c = configs[i];
        for (int l = 1; l < c->depth; l++)
            if (!Entropy_qk_norms_ahead(c, l))
                fail_msg("configuration %d: drawn weights do not pair layer %d's qk norms with "
                         "the next layer's, so this test would prove nothing",
                         i, l);
        char dir[128], err[512];
        snprintf(dir, sizeof dir, "%s/ahead%d", scratch_directory(), i);
        if (Weights_export(c, NULL, NULL, dir, SAFETENSORS_F64, NULL, err, sizeof err) <= 0)
            fail_msg("configuration %d: %s", i, err);
        Checkpoint *k = Checkpoint_open(dir, c, NULL, NULL, err, sizeof err);
        if (!k)
            fail_msg("configuration %d: %s", i, err);
        CountedReads reads = {.checkpoint = Checkpoint_source(k)};
        WeightSource counted = *reads.checkpoint;
        counted.fill = counted_fill;
        counted.fits = counted_fits;
        counted.affine = counted_affine;
        counted.declare = counted_declare;
        counted.embed = reads.checkpoint->embed ? counted_embed : NULL;
        counted.context = &reads;
        Layer_use_weights(&counted);
        Workspace *w = Workspace_new();
        Result *r = Result_new();
        assert_int_equal(Model_run(c, w, r, NULL, err, sizeof err), 0);
        for (int l = 1; l <= c->depth; l++)
            if (reads.attention_reads[l] != c->seeds)
                fail_msg("configuration %d: layer %d's W^Q and W^K read %d times for %d seeds", i,
                         l, reads.attention_reads[l], c->seeds);
        Layer_use_weights(NULL);
        Result_free(r);
        Workspace_free(w);
        Checkpoint_close(k);
    }
}

/* The export of a checkpoint's weights takes the checkpoint from its caller: the one in use
   exports back to its own file bit for bit; another (opened beside it, whose table would sit
   beside the layers of the one in use) is refused, naming it, with nothing written. */
static void test_export_takes_the_checkpoint_in_use(void **state)
{
    (void)state;
    Config c = small_config(), other = c;
    other.seed = c.seed + 1;
    char first[128], second[128], again[128], refused[128], path[160], err[512];
    snprintf(first, sizeof first, "%s/first", scratch_directory());
    snprintf(second, sizeof second, "%s/second", scratch_directory());
    snprintf(again, sizeof again, "%s/again", scratch_directory());
    snprintf(refused, sizeof refused, "%s/refused", scratch_directory());
    assert_true(Weights_export(&c, NULL, NULL, first, SAFETENSORS_F64, NULL, err, sizeof err) > 0);
    assert_true(Weights_export(&other, NULL, NULL, second, SAFETENSORS_F64, NULL, err, sizeof err) >
                0);
    Checkpoint *in_use = Checkpoint_open(first, &c, NULL, NULL, err, sizeof err),
               *beside = Checkpoint_open(second, &c, NULL, NULL, err, sizeof err);
    assert_non_null(in_use);
    assert_non_null(beside);
    Layer_use_weights(Checkpoint_source(in_use));
    if (Weights_export(&c, in_use, NULL, again, SAFETENSORS_F64, NULL, err, sizeof err) <= 0)
        fail_msg("the export of the checkpoint in use failed: %s", err);
    long written =
        Weights_export(&c, beside, NULL, refused, SAFETENSORS_F64, NULL, err, sizeof err);
    Layer_use_weights(NULL);
    assert_int_equal(written, -1);
    if (!strstr(err, second) || !strstr(err, "not the weight source in use"))
        fail_msg("the reason is \"%s\"", err);
    snprintf(path, sizeof path, "%s/model.safetensors", refused);
    assert_int_not_equal(access(path, F_OK), 0);
    size_t n_first = 0, n_again = 0;
    char original[160], *a, *b;
    snprintf(original, sizeof original, "%s/model.safetensors", first);
    snprintf(path, sizeof path, "%s/model.safetensors", again);
    /* A few kilobytes: 1 MiB is a bound, not a size. */
    assert_int_equal(File_read_regular(original, 1 << 20, &a, &n_first, err, sizeof err),
                     FILE_WHOLE_READ);
    assert_int_equal(File_read_regular(path, 1 << 20, &b, &n_again, err, sizeof err),
                     FILE_WHOLE_READ);
    assert_int_equal(n_first, n_again);
    assert_memory_equal(a, b, n_first);
    free(a);
    free(b);
    Checkpoint_close(beside);
    Checkpoint_close(in_use);
}

static int table_not_read(void *context, const Config *c, const double *ids, double *rows)
{
    (void)context, (void)c, (void)ids, (void)rows;
    fail_msg("the export read the table of a source it was not given");
    return -1;
}

/* The other direction: with no checkpoint given while the source in use has an embedding
   table, the export would write that source's layers without the table; refused, naming
   the source, with nothing written.  Without a table the source's layers alone are its
   whole model, and they export. */
static void test_export_without_the_table_in_use_refused(void **state)
{
    (void)state;
    Config c = small_config();
    char written[128], refused[128], kept[128], path[160], err[512];
    snprintf(written, sizeof written, "%s/layers", scratch_directory());
    snprintf(refused, sizeof refused, "%s/tableless", scratch_directory());
    snprintf(kept, sizeof kept, "%s/no-table", scratch_directory());
    assert_true(Weights_export(&c, NULL, NULL, written, SAFETENSORS_F64, NULL, err, sizeof err) >
                0);
    Checkpoint *k = Checkpoint_open(written, &c, NULL, NULL, err, sizeof err);
    assert_non_null(k);
    WeightSource with_table = *Checkpoint_source(k);
    assert_null(with_table.embed); /* this export holds no table: one is given below */
    with_table.embed = table_not_read;
    with_table.table = "model.embed_tokens.weight";
    Layer_use_weights(&with_table);
    assert_int_equal(
        Weights_export(&c, NULL, NULL, refused, SAFETENSORS_F64, NULL, err, sizeof err), -1);
    if (!strstr(err, written) || !strstr(err, "has an embedding table"))
        fail_msg("the reason is \"%s\"", err);
    Layer_use_weights(Checkpoint_source(k));
    if (Weights_export(&c, NULL, NULL, kept, SAFETENSORS_F64, NULL, err, sizeof err) <= 0)
        fail_msg("the layers of a source without a table: %s", err);
    Layer_use_weights(NULL);
    snprintf(path, sizeof path, "%s/model.safetensors", refused);
    assert_int_not_equal(access(path, F_OK), 0);
    Checkpoint_close(k);
}

/* The screen's `:vocab` meets fixed token ids where --vocab does (Layer_weights_fit): a V not
   above every id is refused with the command line's words, naming the id's line; a V above
   them all is taken, and so is any V once the ids are drawn again. */
static void test_vocab_below_a_token_id_refused(void **state)
{
    (void)state;
    Config c = small_config();
    c.input = INPUT_EMBEDDING;
    c.tokens = 4;
    const int32_t ids[] = {0, 3, 12, 9};
    const int32_t lines[] = {1, 2, 4, 5};
    char why[256] = "";
    Layer_use_token_ids(ids, lines, 4, "ids.txt");
    c.vocab = 12;
    bool at_largest = Layer_weights_fit(&c, why, sizeof why);
    char said[256];
    snprintf(said, sizeof said, "%s", why);
    c.vocab = 13;
    bool above = Layer_weights_fit(&c, why, sizeof why);
    Layer_use_token_ids(ids, NULL, 4, "ids.json");
    c.vocab = 10;
    bool by_index = Layer_weights_fit(&c, why, sizeof why);
    Layer_use_token_ids(NULL, NULL, 0, NULL);
    c.vocab = 2;
    bool drawn = Layer_weights_fit(&c, why + 128, sizeof why - 128);
    assert_false(at_largest);
    assert_string_equal(
        said, "ids.txt:4: token id 12 is not below V = 12 (--vocab, the drawn table's rows)");
    assert_true(above);
    assert_false(by_index);
    assert_string_equal(why,
                        "ids.json: [2] = 12 is not below V = 10 (--vocab, the drawn table's rows)");
    assert_true(drawn);
}

/* --seeds N > 1 where nothing is drawn from the seed (docs/model.md §1.6): a source's weights
   and its table read at fixed token ids make every seed the same network on the same input,
   so the seeds are refused, saying why; one seed is accepted, and so are seeds where the ids
   or the table are still drawn. */
static void test_seeds_refused_where_the_seed_draws_nothing(void **state)
{
    (void)state;
    Config c = small_config();
    c.input = INPUT_EMBEDDING;
    c.vocab = 7;
    c.seeds = 3;
    const int32_t ids[] = {1, 2, 3, 1};
    WeightSource source = {.name = "a checkpoint", .embed = table_not_read, .table = "its table"};
    char why[512] = "";
    Layer_use_weights(&source);
    Layer_use_token_ids(ids, NULL, 4, "ids.txt");
    bool fixed_input = Layer_weights_fit(&c, why, sizeof why);
    Config one = c;
    one.seeds = 1;
    bool one_seed = Layer_weights_fit(&one, why + 256, sizeof why - 256);
    Layer_use_token_ids(NULL, NULL, 0, NULL);
    bool drawn_ids = Layer_weights_fit(&c, why + 256, sizeof why - 256);
    Layer_use_token_ids(ids, NULL, 4, "ids.txt");
    Layer_use_weights(NULL);
    bool drawn_table = Layer_weights_fit(&c, why + 256, sizeof why - 256);
    Layer_use_token_ids(NULL, NULL, 0, NULL);
    assert_false(fixed_input);
    if (!strstr(why, "--seeds 3: every seed would run the same network on the same input") ||
        !strstr(why, "ids.txt in its table"))
        fail_msg("the reason is \"%s\"", why);
    assert_true(one_seed);
    assert_true(drawn_ids);
    assert_true(drawn_table);
}

/* After a test that runs under a checkpoint: weights are drawn again, also where the test
   failed before it could say so, so the next test does not run on a closed checkpoint. */
static int draw_again(void **state)
{
    (void)state;
    Layer_use_weights(NULL);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_python_checkpoints),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_files_changed_after_the_identity),
        cmocka_unit_test_setup_teardown(test_qwen2_biases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gemma_offset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpt2_biases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mlp_biases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_phi3_fused, setup, teardown),
        cmocka_unit_test_teardown(test_plan_declares_the_load, draw_again),
        cmocka_unit_test_teardown(test_next_layer_not_read_ahead, draw_again),
        cmocka_unit_test_teardown(test_export_takes_the_checkpoint_in_use, draw_again),
        cmocka_unit_test_teardown(test_export_without_the_table_in_use_refused, draw_again),
        cmocka_unit_test_teardown(test_vocab_below_a_token_id_refused, draw_again),
        cmocka_unit_test_teardown(test_seeds_refused_where_the_seed_draws_nothing, draw_again),
        cmocka_unit_test_teardown(test_drawing_settings_inert_on_a_checkpoint, draw_again),
    };
    return cmocka_run_group_tests(tests, scratch_directory_make, scratch_directory_remove);
}
