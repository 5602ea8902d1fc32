#!/usr/bin/python3
"""An independent forward pass for tests/cli/hf-forward.sh: writes a 2-layer Hugging Face
checkpoint with numpy (GPT-2, the Llama family's Qwen3 shape, a Llama 3.2 shape with its
llama3 rotary scaling, Gemma 2, Gemma 3, Phi-3, or ViT), runs attnscope on it with a token-id file (ViT: its
input drawn from the seed, which attnscope exports as input.csv), and compares every layer's
and head's attention matrix attnscope exports with this file's own forward of the same block
on the same input.

  hf_forward.py BIN DIR MODEL DTYPE LAYOUT
      MODEL   gpt2 | qwen3 | qwen3-wide | qwen3-wide-gqa | llama32 | gemma2 | gemma3 |
              gemma3-wide-window | phi3 | vit | gpt2-export | vit-export (attnscope's own
              --export-weights of drawn weights whose block is GPT-2's or ViT's, DTYPE F64,
              F32 or BF16, read back with --hf-config of its config.json: compare_export)
      DTYPE   F64 | F32 | F16 | BF16 (the values are rounded once, and both forwards read the
              rounded values: numpy computes in float64 from exactly what the file holds)
      LAYOUT  single (DIR/model.safetensors) | sharded (two shards and
              model.safetensors.index.json)

The forward follows Hugging Face's modeling code (transformers' modeling_gpt2.py,
modeling_qwen3.py, modeling_llama.py, modeling_gemma2.py and modeling_vit.py), not
attnscope's: GPT-2's Conv1D y = xW + b with W (in, out), c_attn's columns q | k | v,
wte[ids] + wpe[positions], LayerNorm before each sub-block, the causal mask,
scores / sqrt(d_head); Qwen3's nn.Linear y = xWᵀ, RMSNorm x·rsqrt(mean(x²) + ε)·w, q_norm and
k_norm per head before the rotary embedding, rotate_half with cos/sin of
positions·θ^(−2i/d_head) repeated over both halves, repeat_kv for grouped keys and values,
scores·d_head^(−1/2), down(silu(gate x) ⊙ up x); Llama 3.2's the same without q_norm and
k_norm, its frequencies rescaled by rope_scaling (tests/data/rope-scaling/frequencies.py's
transcription of _compute_llama3_parameters) and its settings read from its config.json by
--hf-config, as a user runs it; Gemma 2's embed_tokens[ids]·normalizer (sqrt(hidden_size),
Gemma2Model.forward), RMSNorm x·rsqrt(mean(x²) + ε)·(1 + w) before and after each
sub-block, scores·query_pre_attn_scalar^(−1/2) capped by attn_logit_softcapping·tanh(·/cap),
every other layer (the first) a sliding window of sliding_window keys,
down(gelu_pytorch_tanh(gate x) ⊙ up x); Gemma 3's the same without the cap, with q_norm and
k_norm (gains 1 + w) before the rotation, all but the last of every sliding_window_pattern
layers sliding and turning by rope_local_base_freq unscaled, the others by rope_theta with
rope_scaling (modeling_gemma3.py's rotary_emb_local and rotary_emb), read by --hf-config;
Phi-3's (modeling_phi3.py) Llama block with fused
projections: qkv_proj's output sliced at H·d_h and H·d_h + G·d_h into queries, keys and values
(Phi3Attention), gate_up_proj's chunked in two, the gate first (Phi3MLP), rotate_half on the
first int(d_h·partial_rotary_factor) dimensions only (apply_rotary_pos_emb's q_rot, q_pass),
and every layer's sliding window of sliding_window keys (Phi3Model's sliding-window causal
mask), its settings read from its config.json by --hf-config; ViT's ViTLayer: nn.Linear with biases, LayerNorm
before the attention (layernorm_before) and before the MLP (layernorm_after), no mask,
scores·d_head^(−1/2), the exact GELU.  The exported input.csv must be numpy's own input
(wte[ids] + wpe, the table's rows, Gemma's times sqrt(hidden_size)) bit for bit, or for ViT
have orthonormal rows.
The Llama family's X_ℓ (every layer's output; Qwen3's, Llama 3.2's, Gemma 2's, Phi-3's) are compared
through the numbers attnscope prints of them (token_rms, stable_rank, token_cosine_mean):
MODEL qwen3-wide and qwen3-wide-gqa are Qwen3's block with heads whose width does not split d
(H·d_h = 32 and 48 at d = 40, --head-dim).
Prints the largest relative difference; exit 0 when every entry agrees to 1e-9 relative
(Phi-3's: 1e-12; masked entries exactly 0), 1 otherwise.
"""
import glob
import json
import math
import os
import subprocess
import sys

import numpy as np

from safetensors_tool import PYTORCH, read, write

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                                "rope-scaling"))
from frequencies import inverse_frequencies  # noqa: E402

RTOL = 1e-9


# The norms' gains and the biases, as a trained checkpoint has them (not 1 and 0, which
# attnscope reads as none): the forward below applies whatever they are.
def gains(rng, n):
    return 1 + 0.3 * rng.standard_normal(n)


def biases(rng, n):
    return 0.2 * rng.standard_normal(n)


def stored(x, dtype):
    """x rounded to dtype (nearest, ties to even), as float64, and its little-endian bytes."""
    x = np.asarray(x, dtype=np.float64)
    if dtype == "F64":
        return x, x.astype("<f8").tobytes()
    if dtype == "F16":  # numpy rounds a double to half once, to nearest, ties to even
        f16 = x.astype(np.float16)
        return f16.astype(np.float64), f16.astype("<f2").tobytes()
    f32 = x.astype(np.float32)
    if dtype == "F32":
        return f32.astype(np.float64), f32.astype("<f4").tobytes()
    bits = f32.view(np.uint32).astype(np.uint64)
    top = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    back = (top.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return back.reshape(x.shape), top.astype("<u2").tobytes()


def checkpoint_tensors(path):
    """Every tensor of a checkpoint (a .safetensors file, or a directory of them) by name, as
    float64 arrays of the values it holds (F64, F32, F16 or BF16): what an export is compared
    with, read independently of attnscope."""
    files = glob.glob(os.path.join(path, "*.safetensors")) if os.path.isdir(path) else [path]
    found = {}
    for f in files:
        for name, dtype, shape, raw in read(f)[0]:
            kind = {"F64": "<f8", "F32": "<f4", "F16": "<f2"}.get(dtype)
            values = (np.frombuffer(raw, kind) if kind else
                      (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32))
            found[name] = values.astype(np.float64).reshape(shape)
    return found


def write_checkpoint(directory, weights, dtype, sharded):
    """weights: name -> float64 array (already the stored values)."""
    tensors = [(name, dtype, list(array.shape), stored(array, dtype)[1])
               for name, array in sorted(weights.items())]
    if not sharded:
        write(os.path.join(directory, "model.safetensors"), tensors, PYTORCH)
        return
    half = len(tensors) // 2
    shards = {"model-00001-of-00002.safetensors": tensors[half:],
              "model-00002-of-00002.safetensors": tensors[:half]}
    weight_map = {}
    for file, part in shards.items():
        write(os.path.join(directory, file), part, PYTORCH)
        weight_map.update({t[0]: file for t in part})
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": sum(len(t[3]) for t in tensors)},
                   "weight_map": weight_map}, f)


# The two shapes: sizes, config.json, attnscope's settings for the same block.
GPT2 = dict(d=16, H=2, G=2, L=2, N=64, V=50, context=32, T=12, eps=1e-5)
QWEN3 = dict(d=16, H=4, G=2, L=2, N=24, V=40, context=64, T=20, eps=1e-6, theta=10000.0,
             qk_norm=True)
# Heads whose width does not split d (head_dim, as Gemma 2/3, Qwen3-0.6B and gpt-oss have):
# H·d_h = 32 < d = 40 with two heads of 16, and 48 > 40 with four of 12 over two key/value heads.
QWEN3_WIDE = dict(QWEN3, d=40, H=2, G=2, dh=16)
QWEN3_WIDE_GQA = dict(QWEN3, d=40, H=4, G=2, dh=12)
QWEN3_SHAPES = {"qwen3": QWEN3, "qwen3-wide": QWEN3_WIDE, "qwen3-wide-gqa": QWEN3_WIDE_GQA}
# Llama 3.2's scaling (factor 32, low 1, high 4) at an original context of 64 tokens, so that
# d_h = 16's eight wavelengths 2π·10^(k/2) fall in all three of its regions at T = 24: one
# kept (below 64/4), two blended, five divided by 32 (above 64).
LLAMA32 = dict(d=32, H=2, G=1, L=2, N=48, V=40, context=128, T=24, eps=1e-5, theta=10000.0,
               scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0,
                            high_freq_factor=4.0, original_max_position_embeddings=64))
# d = 24: the embedding scale sqrt(24) is not a float that rounds the same in float32.
GEMMA2 = dict(d=24, H=4, G=2, L=2, N=32, V=40, context=64, T=14, eps=1e-6, theta=10000.0,
              window=4, cap=5.0)
# Gemma 3: layers 1 and 2 of every 3 (sliding_window_pattern) slide a window and turn by
# rope_local_base_freq unscaled, layer 3 turns by rope_theta with rope_scaling's linear factor;
# two heads of 16 at d = 24 over one key/value head, QK-norm with gains 1 + w.  gemma3-wide-window's
# window covers all T = 14 keys: every layer causal, the local layers' θ still their own.
GEMMA3 = dict(d=24, H=2, G=1, dh=16, L=3, N=32, V=40, context=64, T=14, eps=1e-6,
              theta=1000000.0, local_theta=10000.0, scaling=dict(rope_type="linear", factor=8.0),
              window=4, pattern=3, qk_norm=True)
GEMMA3_WIDE_WINDOW = dict(GEMMA3, window=32)
GEMMA_SHAPES = {"gemma2": GEMMA2, "gemma3": GEMMA3, "gemma3-wide-window": GEMMA3_WIDE_WINDOW}
VIT = dict(d=16, H=4, G=4, L=2, N=40, T=12, eps=1e-12, patch=4, image=8, channels=3)
# Phi-4-mini's shape in small: grouped keys and values, 3/4 of each head's 8 dimensions turned,
# and Phi-3-mini's window on every layer (5 keys at T = 14).
PHI3 = dict(d=32, H=4, G=2, L=2, N=20, V=40, context=64, T=14, eps=1e-5, theta=10000.0,
            window=5, fraction=0.75)
SHAPES = dict(QWEN3_SHAPES, **GEMMA_SHAPES, gpt2=GPT2, llama32=LLAMA32, phi3=PHI3, vit=VIT)
# attnscope's own export of drawn weights whose block is GPT-2's or ViT's, under that family's
# names: the same shapes, the block's settings as options (drawn_settings).
SHAPES.update({"gpt2-export": GPT2, "vit-export": VIT})


def head_width(s):
    """d_h: the shape's own head_dim where it has one (--head-dim), else d/H."""
    return s.get("dh", s["d"] // s["H"])


def gpt2_weights(rng, dtype):
    s, d, w = GPT2, GPT2["d"], {}

    def put(name, x):
        w[name] = stored(x, dtype)[0]

    put("wte.weight", 0.5 * rng.standard_normal((s["V"], d)))
    put("wpe.weight", 0.2 * rng.standard_normal((s["context"], d)))
    for layer in range(s["L"]):
        p = "h.%d." % layer
        put(p + "ln_1.weight", gains(rng, d))
        put(p + "ln_1.bias", biases(rng, d))
        put(p + "attn.c_attn.weight", 0.4 * rng.standard_normal((d, 3 * d)))
        put(p + "attn.c_attn.bias", biases(rng, 3 * d))
        put(p + "attn.c_proj.weight", 0.3 * rng.standard_normal((d, d)))
        put(p + "attn.c_proj.bias", biases(rng, d))
        put(p + "ln_2.weight", gains(rng, d))
        put(p + "ln_2.bias", biases(rng, d))
        put(p + "mlp.c_fc.weight", 0.3 * rng.standard_normal((d, s["N"])))
        put(p + "mlp.c_fc.bias", biases(rng, s["N"]))
        put(p + "mlp.c_proj.weight", 0.15 * rng.standard_normal((s["N"], d)))
        put(p + "mlp.c_proj.bias", biases(rng, d))
    put("ln_f.weight", gains(rng, d))
    put("ln_f.bias", biases(rng, d))
    return w


def llama_family_weights(rng, dtype, s, layer_norms):
    """The Llama family's tensors (Qwen3's, Llama 3.2's, Gemma 2's) for the sizes s: the
    table, each layer's projections and norms, the final norm's gains.  layer_norms(put,
    prefix) puts a layer's norms drawn before its projections, and returns a function that
    puts those drawn after."""
    d, w = s["d"], {}
    dh = head_width(s)

    def put(name, x):
        w[name] = stored(x, dtype)[0]

    put("model.embed_tokens.weight", 0.5 * rng.standard_normal((s["V"], d)))
    for layer in range(s["L"]):
        p = "model.layers.%d." % layer
        rest = layer_norms(put, p)
        put(p + "self_attn.q_proj.weight", 0.5 * rng.standard_normal((s["H"] * dh, d)))
        put(p + "self_attn.k_proj.weight", 0.5 * rng.standard_normal((s["G"] * dh, d)))
        put(p + "self_attn.v_proj.weight", 0.3 * rng.standard_normal((s["G"] * dh, d)))
        put(p + "self_attn.o_proj.weight", 0.3 * rng.standard_normal((d, s["H"] * dh)))
        rest()
        put(p + "mlp.gate_proj.weight", 0.3 * rng.standard_normal((s["N"], d)))
        put(p + "mlp.up_proj.weight", 0.3 * rng.standard_normal((s["N"], d)))
        put(p + "mlp.down_proj.weight", 0.2 * rng.standard_normal((d, s["N"])))
    put("model.norm.weight", gains(rng, d))
    return w


def llama_weights(rng, dtype, s):
    """Qwen3's or Llama 3.2's tensors at shape s; q_norm and k_norm where it has QK-norm
    (Qwen3's shapes)."""
    d, dh = s["d"], head_width(s)

    def norms(put, p):
        put(p + "input_layernorm.weight", gains(rng, d))

        def rest():
            if s.get("qk_norm"):
                put(p + "self_attn.q_norm.weight", gains(rng, dh))
                put(p + "self_attn.k_norm.weight", gains(rng, dh))
            put(p + "post_attention_layernorm.weight", gains(rng, d))
        return rest

    return llama_family_weights(rng, dtype, s, norms)


def gemma_weights(rng, dtype, s):
    """Gemma2Model's or Gemma3TextModel's tensors; its norms' weights w are read as gains
    1 + w (Gemma 3's q_norm and k_norm too)."""
    def norms(put, p):
        for norm in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                     "post_feedforward_layernorm"):
            put(p + norm + ".weight", 0.3 * rng.standard_normal(s["d"]))

        def rest():
            if s.get("qk_norm"):
                put(p + "self_attn.q_norm.weight", 0.3 * rng.standard_normal(head_width(s)))
                put(p + "self_attn.k_norm.weight", 0.3 * rng.standard_normal(head_width(s)))
        return rest

    return llama_family_weights(rng, dtype, s, norms)


def phi3_weights(rng, dtype):
    """Phi3ForCausalLM's tensors: W^Q, W^K and W^V's rows in qkv_proj, the gate's and the up
    projection's in gate_up_proj, no biases; the table, the final norm and the LM head."""
    s, d, w = PHI3, PHI3["d"], {}
    dh = head_width(s)

    def put(name, x):
        w[name] = stored(x, dtype)[0]

    put("model.embed_tokens.weight", 0.5 * rng.standard_normal((s["V"], d)))
    for layer in range(s["L"]):
        p = "model.layers.%d." % layer
        put(p + "input_layernorm.weight", gains(rng, d))
        put(p + "self_attn.qkv_proj.weight",
            0.5 * rng.standard_normal(((s["H"] + 2 * s["G"]) * dh, d)))
        put(p + "self_attn.o_proj.weight", 0.3 * rng.standard_normal((d, s["H"] * dh)))
        put(p + "post_attention_layernorm.weight", gains(rng, d))
        put(p + "mlp.gate_up_proj.weight", 0.3 * rng.standard_normal((2 * s["N"], d)))
        put(p + "mlp.down_proj.weight", 0.2 * rng.standard_normal((d, s["N"])))
    put("model.norm.weight", gains(rng, d))
    put("lm_head.weight", 0.1 * rng.standard_normal((s["V"], d)))
    return w


def vit_weights(rng, dtype, prefix):
    """ViTModel's tensors (prefix "") or ViTForImageClassification's (prefix "vit.", beside its
    classifier); the embeddings, final norm, pooler and classifier are outside the block."""
    s, d, w = VIT, VIT["d"], {}

    def put(name, x):
        w[name] = stored(x, dtype)[0]

    patches = (s["image"] // s["patch"]) ** 2
    put(prefix + "embeddings.cls_token", 0.02 * rng.standard_normal((1, 1, d)))
    put(prefix + "embeddings.position_embeddings", 0.02 * rng.standard_normal((1, patches + 1, d)))
    put(prefix + "embeddings.patch_embeddings.projection.weight",
        0.02 * rng.standard_normal((d, s["channels"], s["patch"], s["patch"])))
    put(prefix + "embeddings.patch_embeddings.projection.bias", biases(rng, d))
    for layer in range(s["L"]):
        p = prefix + "encoder.layer.%d." % layer
        put(p + "layernorm_before.weight", gains(rng, d))
        put(p + "layernorm_before.bias", biases(rng, d))
        for name in ("query", "key", "value"):
            put(p + "attention.attention.%s.weight" % name, 0.5 * rng.standard_normal((d, d)))
            put(p + "attention.attention.%s.bias" % name, biases(rng, d))
        put(p + "attention.output.dense.weight", 0.3 * rng.standard_normal((d, d)))
        put(p + "attention.output.dense.bias", biases(rng, d))
        put(p + "layernorm_after.weight", gains(rng, d))
        put(p + "layernorm_after.bias", biases(rng, d))
        put(p + "intermediate.dense.weight", 0.3 * rng.standard_normal((s["N"], d)))
        put(p + "intermediate.dense.bias", biases(rng, s["N"]))
        put(p + "output.dense.weight", 0.2 * rng.standard_normal((d, s["N"])))
        put(p + "output.dense.bias", biases(rng, d))
    put(prefix + "layernorm.weight", gains(rng, d))
    put(prefix + "layernorm.bias", biases(rng, d))
    if prefix:
        put("classifier.weight", 0.02 * rng.standard_normal((2, d)))
        put("classifier.bias", biases(rng, 2))
    else:
        put("pooler.dense.weight", 0.02 * rng.standard_normal((d, d)))
        put("pooler.dense.bias", biases(rng, d))
    return w


def layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def rms_norm(x, weight, eps):
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + eps) * weight


def causal_softmax(scores):
    T = scores.shape[-1]
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


ERF = np.vectorize(math.erf)


def gpt2_forward(w, h):
    """Every layer's attention, [layer][head] (T×T), from the hidden states h (T×d)."""
    s, d = GPT2, GPT2["d"]
    dh = d // s["H"]
    attention = []
    for layer in range(s["L"]):
        p = "h.%d." % layer
        a = layer_norm(h, w[p + "ln_1.weight"], w[p + "ln_1.bias"], s["eps"])
        qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:]
        heads, outputs = [], []
        for head in range(s["H"]):
            c = slice(head * dh, (head + 1) * dh)
            A = causal_softmax(q[:, c] @ k[:, c].T / math.sqrt(dh))
            heads.append(A)
            outputs.append(A @ v[:, c])
        attention.append(heads)
        h = h + np.concatenate(outputs, 1) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        m = layer_norm(h, w[p + "ln_2.weight"], w[p + "ln_2.bias"], s["eps"])
        m = m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]
        m = 0.5 * m * (1 + ERF(m / math.sqrt(2)))  # ACT2FN["gelu"]: the exact GELU
        h = h + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    return attention


def softmax(scores):
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def vit_forward(w, h, prefix):
    """ViTLayer's forward from the hidden states h (T×d), every layer's attention."""
    s, d = VIT, VIT["d"]
    dh = d // s["H"]
    attention = []
    for layer in range(s["L"]):
        p = prefix + "encoder.layer.%d." % layer

        def linear(x, name):  # without the bias where qkv_bias is false: nn.Linear(bias=False)
            return x @ w[p + name + ".weight"].T + w.get(p + name + ".bias", 0.0)

        a = layer_norm(h, w[p + "layernorm_before.weight"], w[p + "layernorm_before.bias"], s["eps"])
        q = linear(a, "attention.attention.query")
        k = linear(a, "attention.attention.key")
        v = linear(a, "attention.attention.value")
        heads, outputs = [], []
        for head in range(s["H"]):
            c = slice(head * dh, (head + 1) * dh)
            A = softmax(q[:, c] @ k[:, c].T * dh ** -0.5)  # is_causal = False: no mask
            heads.append(A)
            outputs.append(A @ v[:, c])
        attention.append(heads)
        h = linear(np.concatenate(outputs, 1), "attention.output.dense") + h
        m = layer_norm(h, w[p + "layernorm_after.weight"], w[p + "layernorm_after.bias"], s["eps"])
        m = linear(m, "intermediate.dense")
        m = 0.5 * m * (1 + ERF(m / math.sqrt(2)))  # ACT2FN["gelu"]
        h = linear(m, "output.dense") + h
    return attention


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate((-x[..., half:], x[..., :half]), -1)


def rope(T, dh, theta, scaling=None):
    """cos and sin of positions·θ^(−2i/d_head), the frequencies rescaled by a rope_scaling
    when one is given, repeated over both halves (T×dh)."""
    inv_freq = 1.0 / theta ** (np.arange(0, dh, 2) / dh)
    if scaling:
        inv_freq, _ = inverse_frequencies(theta, dh, 1.0, scaling["rope_type"],
                                          scaling["factor"], scaling.get("low_freq_factor"),
                                          scaling.get("high_freq_factor"),
                                          scaling.get("original_max_position_embeddings"))
    freqs = np.outer(np.arange(T), inv_freq)
    emb = np.concatenate((freqs, freqs), -1)
    return np.cos(emb), np.sin(emb)


def llama_forward(w, ids, s, tokens):
    """Every layer's attention, [layer][head]; each layer's output X_ℓ appended to tokens."""
    H, G, T = s["H"], s["G"], len(ids)
    dh = head_width(s)
    cos, sin = rope(T, dh, s["theta"], s.get("scaling"))
    h = w["model.embed_tokens.weight"][ids]
    attention = []
    for layer in range(s["L"]):
        p = "model.layers.%d." % layer
        a = rms_norm(h, w[p + "input_layernorm.weight"], s["eps"])
        q = (a @ w[p + "self_attn.q_proj.weight"].T).reshape(T, H, dh)
        k = (a @ w[p + "self_attn.k_proj.weight"].T).reshape(T, G, dh)
        v = (a @ w[p + "self_attn.v_proj.weight"].T).reshape(T, G, dh)
        if s.get("qk_norm"):
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], s["eps"])
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], s["eps"])
        q = q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]
        k = k * cos[:, None, :] + rotate_half(k) * sin[:, None, :]
        heads, outputs = [], []
        for head in range(H):
            g = head // (H // G)  # repeat_kv
            A = causal_softmax(q[:, head] @ k[:, g].T * dh ** -0.5)
            heads.append(A)
            outputs.append(A @ v[:, g])
        attention.append(heads)
        h = h + np.concatenate(outputs, 1) @ w[p + "self_attn.o_proj.weight"].T
        m = rms_norm(h, w[p + "post_attention_layernorm.weight"], s["eps"])
        gate = m @ w[p + "mlp.gate_proj.weight"].T
        up = m @ w[p + "mlp.up_proj.weight"].T
        h = h + (gate / (1 + np.exp(-gate)) * up) @ w[p + "mlp.down_proj.weight"].T
        tokens.append(h)
    return attention


def phi3_forward(w, ids, tokens):
    """Every layer's attention, [layer][head]; each layer's output X_ℓ appended to tokens."""
    s = PHI3
    H, G, T, N = s["H"], s["G"], len(ids), s["N"]
    dh = head_width(s)
    rotary = int(dh * s["fraction"])  # Phi3RotaryEmbedding's dim
    cos, sin = rope(T, rotary, s["theta"])
    i, j = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
    allowed = (j <= i) & (j > i - s["window"])
    h = w["model.embed_tokens.weight"][ids]
    attention = []
    for layer in range(s["L"]):
        p = "model.layers.%d." % layer
        a = rms_norm(h, w[p + "input_layernorm.weight"], s["eps"])
        qkv = a @ w[p + "self_attn.qkv_proj.weight"].T
        q = qkv[:, :H * dh].reshape(T, H, dh)
        k = qkv[:, H * dh:(H + G) * dh].reshape(T, G, dh)
        v = qkv[:, (H + G) * dh:].reshape(T, G, dh)

        def turn(x):
            r, rest = x[..., :rotary], x[..., rotary:]
            r = r * cos[:, None, :] + rotate_half(r) * sin[:, None, :]
            return np.concatenate((r, rest), -1)
        q, k = turn(q), turn(k)
        heads, outputs = [], []
        for head in range(H):
            g = head // (H // G)
            A = softmax(np.where(allowed, q[:, head] @ k[:, g].T * dh ** -0.5, -np.inf))
            heads.append(A)
            outputs.append(A @ v[:, g])
        attention.append(heads)
        h = h + np.concatenate(outputs, 1) @ w[p + "self_attn.o_proj.weight"].T
        m = rms_norm(h, w[p + "post_attention_layernorm.weight"], s["eps"])
        gate_up = m @ w[p + "mlp.gate_up_proj.weight"].T
        gate, up = gate_up[:, :N], gate_up[:, N:]
        h = h + (up * (gate / (1 + np.exp(-gate)))) @ w[p + "mlp.down_proj.weight"].T
        tokens.append(h)
    return attention


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def gemma_sliding(s, layer):
    """Whether layer (from 0) slides its window: Gemma2's is_sliding (the even layers), Gemma
    3's layer_types default (all but the last of every sliding_window_pattern)."""
    return (layer + 1) % s["pattern"] != 0 if "pattern" in s else layer % 2 == 0


def gemma_forward(w, ids, tokens, s):
    """Every layer's attention, [layer][head]; each layer's output X_ℓ appended to tokens.
    Gemma 3's sliding layers turn by rope_local_base_freq unscaled (rotary_emb_local), its
    full ones by rope_theta scaled (rotary_emb); Gemma 2's every layer by rope_theta."""
    d, H, G, T = s["d"], s["H"], s["G"], len(ids)
    dh = head_width(s)
    global_rope = rope(T, dh, s["theta"], s.get("scaling"))
    local_rope = rope(T, dh, s["local_theta"]) if "local_theta" in s else global_rope

    def norm(x, name):
        return rms_norm(x, 1 + w[name + ".weight"], s["eps"])

    h = w["model.embed_tokens.weight"][ids] * np.sqrt(d)  # Gemma2Model's normalizer
    i, j = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
    attention = []
    for layer in range(s["L"]):
        p = "model.layers.%d." % layer
        a = norm(h, p + "input_layernorm")
        q = (a @ w[p + "self_attn.q_proj.weight"].T).reshape(T, H, dh)
        k = (a @ w[p + "self_attn.k_proj.weight"].T).reshape(T, G, dh)
        v = (a @ w[p + "self_attn.v_proj.weight"].T).reshape(T, G, dh)
        if s.get("qk_norm"):  # Gemma 3's q_norm and k_norm, before the rotation
            q = norm(q, p + "self_attn.q_norm")
            k = norm(k, p + "self_attn.k_norm")
        sliding = gemma_sliding(s, layer)
        cos, sin = local_rope if sliding else global_rope
        q = q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]
        k = k * cos[:, None, :] + rotate_half(k) * sin[:, None, :]
        allowed = j <= i
        if sliding:
            allowed &= j > i - s["window"]
        heads, outputs = [], []
        for head in range(H):
            g = head // (H // G)
            scores = q[:, head] @ k[:, g].T * dh ** -0.5  # query_pre_attn_scalar = d_head
            if s.get("cap"):
                scores = s["cap"] * np.tanh(scores / s["cap"])
            A = softmax(np.where(allowed, scores, -np.inf))
            heads.append(A)
            outputs.append(A @ v[:, g])
        attention.append(heads)
        o = np.concatenate(outputs, 1) @ w[p + "self_attn.o_proj.weight"].T
        h = h + norm(o, p + "post_attention_layernorm")
        m = norm(h, p + "pre_feedforward_layernorm")
        m = gelu_tanh(m @ w[p + "mlp.gate_proj.weight"].T) * (m @ w[p + "mlp.up_proj.weight"].T)
        h = h + norm(m @ w[p + "mlp.down_proj.weight"].T, p + "post_feedforward_layernorm")
        tokens.append(h)
    return attention


def config_json(model):
    if model == "gpt2":
        s = GPT2
        return {"model_type": "gpt2", "n_embd": s["d"], "n_head": s["H"], "n_layer": s["L"],
                "n_positions": s["context"], "n_inner": s["N"], "vocab_size": s["V"],
                "activation_function": "gelu", "layer_norm_epsilon": s["eps"]}
    if model == "vit":
        s = VIT
        return {"model_type": "vit", "hidden_size": s["d"], "num_attention_heads": s["H"],
                "num_hidden_layers": s["L"], "intermediate_size": s["N"], "hidden_act": "gelu",
                "layer_norm_eps": s["eps"], "image_size": s["image"], "patch_size": s["patch"],
                "num_channels": s["channels"], "qkv_bias": True}
    if model == "llama32":
        s = LLAMA32
        return {"model_type": "llama", "hidden_size": s["d"], "num_attention_heads": s["H"],
                "num_key_value_heads": s["G"], "head_dim": head_width(s),
                "num_hidden_layers": s["L"], "intermediate_size": s["N"],
                "vocab_size": s["V"], "max_position_embeddings": s["context"],
                "rope_theta": s["theta"], "rope_scaling": s["scaling"],
                "rms_norm_eps": s["eps"], "hidden_act": "silu", "tie_word_embeddings": True,
                "initializer_range": 0.02}
    if model == "gemma2":
        s = GEMMA2
        return {"model_type": "gemma2", "hidden_size": s["d"], "num_attention_heads": s["H"],
                "num_key_value_heads": s["G"], "head_dim": head_width(s),
                "num_hidden_layers": s["L"], "intermediate_size": s["N"], "vocab_size": s["V"],
                "max_position_embeddings": s["context"], "rope_theta": s["theta"],
                "rms_norm_eps": s["eps"], "hidden_activation": "gelu_pytorch_tanh",
                "query_pre_attn_scalar": s["d"] // s["H"], "sliding_window": s["window"],
                "attn_logit_softcapping": s["cap"], "final_logit_softcapping": None}
    if model == "phi3":
        s = PHI3
        return {"architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
                "hidden_size": s["d"], "num_attention_heads": s["H"],
                "num_key_value_heads": s["G"], "num_hidden_layers": s["L"],
                "intermediate_size": s["N"], "vocab_size": s["V"],
                "max_position_embeddings": s["context"],
                "original_max_position_embeddings": s["context"], "rope_theta": s["theta"],
                "partial_rotary_factor": s["fraction"], "rope_scaling": None,
                "sliding_window": s["window"], "rms_norm_eps": s["eps"], "hidden_act": "silu",
                "tie_word_embeddings": False, "resid_pdrop": 0.0, "embd_pdrop": 0.0,
                "attention_dropout": 0.0, "initializer_range": 0.02}
    if model in GEMMA_SHAPES:
        s = GEMMA_SHAPES[model]
        return {"model_type": "gemma3_text", "hidden_size": s["d"],
                "num_attention_heads": s["H"], "num_key_value_heads": s["G"],
                "head_dim": head_width(s), "num_hidden_layers": s["L"],
                "intermediate_size": s["N"], "vocab_size": s["V"],
                "max_position_embeddings": s["context"], "rope_theta": s["theta"],
                "rope_local_base_freq": s["local_theta"], "rope_scaling": s["scaling"],
                "rms_norm_eps": s["eps"], "hidden_activation": "gelu_pytorch_tanh",
                "query_pre_attn_scalar": head_width(s), "sliding_window": s["window"],
                "sliding_window_pattern": s["pattern"], "attn_logit_softcapping": None,
                "final_logit_softcapping": None}
    s = QWEN3_SHAPES[model]
    return {"model_type": "qwen3", "hidden_size": s["d"], "num_attention_heads": s["H"],
            "num_key_value_heads": s["G"], "head_dim": head_width(s),
            "num_hidden_layers": s["L"], "intermediate_size": s["N"], "vocab_size": s["V"],
            "max_position_embeddings": s["context"], "rope_theta": s["theta"],
            "rms_norm_eps": s["eps"], "hidden_act": "silu", "tie_word_embeddings": True}


def attnscope_settings(model, checkpoint, sharded):
    """The same block in attnscope's settings (presets/gpt2-small-small.preset and
    qwen3-8b-small.preset at this size; ViT's and Llama 3.2's from their config.json, as a
    user reads it; Gemma 2's from its config.json with --weights naming the .safetensors file,
    whose scale then comes from --hf-config's model_type, or sharded as options without
    --norm-gain-offset, whose scale and gains 1 + w then come from the config.json in
    --weights' directory)."""
    if model in ("vit", "llama32", "gemma3", "gemma3-wide-window", "phi3") or (
            model == "gemma2" and not sharded):
        return "-T %d --hf-config %s" % (SHAPES[model]["T"], checkpoint)
    if model == "gemma2":
        s = GEMMA2
        return ("-L 2 -a softmax -m window-causal --window %d --window-layers 1:1 -k plain "
                "--ln-place peri --ln-scale sqrt-d --wo gaussian -d %d --heads %d --kv-heads %d "
                "-n rms --ln-eps %g --rope half --rope-theta %g "
                "--logit-softcap %g --mlp geglu --mlp-hidden %d") % (
                    s["window"] - 1, s["d"], s["H"], s["G"], s["eps"], s["theta"], s["cap"], s["N"])
    common = "-L 2 -a softmax -m causal -k plain --ln-place pre --ln-scale sqrt-d --wo gaussian"
    if model == "gpt2":
        s = GPT2
        return "%s -d %d --heads %d -n ln --ln-eps %g --mlp gelu --mlp-hidden %d" % (
            common, s["d"], s["H"], s["eps"], s["N"])
    s = QWEN3_SHAPES[model]
    dh = head_width(s)
    head_dim = " --head-dim %d" % dh if dh * s["H"] != s["d"] else ""
    return ("%s -d %d --heads %d --kv-heads %d -n rms --ln-eps %g --qk-norm head "
            "--qk-norm-place before-rope --rope half --rope-theta %g --mlp swiglu "
            "--mlp-hidden %d%s") % (common, s["d"], s["H"], s["G"], s["eps"], s["theta"], s["N"],
                                    head_dim)


def drawn_settings(family):
    """The settings of GPT-2's and ViT's blocks at the shapes above, for an export of drawn
    weights: pre-LN LayerNorm, a plain MLP with the exact GELU, W^O; causal for GPT-2."""
    s = SHAPES[family]
    return ("-T %d -L %d -a softmax -m %s -k plain --ln-place pre --ln-scale sqrt-d --wo gaussian "
            "-d %d --heads %d -n ln --ln-eps %g --mlp gelu --mlp-hidden %d --seed 7") % (
                s["T"], s["L"], "causal" if family == "gpt2" else "full", s["d"], s["H"], s["eps"],
                s["N"])


def export_drawn(binary, family, dtype, checkpoint):
    """attnscope's export of drawn weights (--export-dtype dtype), its tensors as numpy reads
    them from the file's bytes; None where config.json does not name the family or a tensor is
    not under its names (GPT2Model's h.N., ViTModel's encoder.layer.N.)."""
    command = [binary, "--batch", "--export-weights", checkpoint, "--export-dtype", dtype.lower()]
    subprocess.run(command + drawn_settings(family).split(), check=True, stdout=subprocess.DEVNULL)
    config = json.load(open(os.path.join(checkpoint, "config.json")))
    weights = checkpoint_tensors(checkpoint)
    layers = {"gpt2": "h.", "vit": "encoder.layer."}[family]
    if config.get("model_type") != family or not all(n.startswith(layers) for n in weights):
        print("the export is not %s's: model_type %r, tensors %s" % (
            family, config.get("model_type"), sorted(weights)[:4]))
        return None
    return weights


def exported_matrix(path):
    rows = [line for line in open(path) if not line.startswith("#")][1:]
    return np.array([[float(x) for x in line.split(",")[1:]] for line in rows])


def table_name(weights, name):
    """name under GPT-2's prefix where the checkpoint has one."""
    return name if name in weights else "transformer." + name


def write_inputs(model, rng, weights, directory):
    """The token-id file and numpy's own input X0 for GPT-2 and Qwen3 (wte[ids] + wpe, the
    table's rows), with the ids; (None, None, None) for ViT, whose input attnscope draws."""
    if model == "vit":
        return None, None, None
    s = SHAPES[model]
    ids = rng.integers(0, s["V"], s["T"])
    ids[3] = ids[7]  # a repeated token
    ids_path = os.path.join(directory, "ids.txt")
    with open(ids_path, "w") as f:
        f.write("".join("%d\n" % i for i in ids))
    if model == "gpt2":
        positions = weights[table_name(weights, "wpe.weight")][np.arange(s["T"])]
        return ids_path, ids, weights[table_name(weights, "wte.weight")][ids] + positions
    scale = np.sqrt(s["d"]) if model in GEMMA_SHAPES else 1.0
    return ids_path, ids, weights["model.embed_tokens.weight"][ids] * scale


def input_is_numpys(x, want, first):
    """Whether the exported input is numpy's own bit for bit (ViT: orthonormal rows, to
    rounding), and the same as the first run's."""
    if want is None:
        orthonormal = np.max(np.abs(x @ x.T - np.eye(len(x)))) <= 1e-13
        return orthonormal and (first is None or np.array_equal(x, first))
    return np.array_equal(x, want)


def tokens_differ(document, layer, x):
    """The largest relative difference between numpy's X_ℓ and the numbers attnscope prints of
    its own: token_rms ‖X‖_F/√T (its scale), the stable rank of Σ = XXᵀ, Σ s_i⁴/s_1⁴ (its
    spectrum's shape) and token_cosine_mean (its rows' angles), docs/model.md §2."""
    T = len(x)
    s = np.linalg.svd(x, compute_uv=False)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    cosines = unit @ unit.T
    want = {"token_rms": np.linalg.norm(x) / math.sqrt(T),
            "stable_rank": float(np.sum(s ** 4) / s[0] ** 4),
            "token_cosine_mean": float((cosines.sum() - T) / (T * (T - 1)))}
    # The cosine mean is near 0 for spread tokens: its difference is taken on its [−1, 1] scale.
    return max(abs(document[key][layer] - value) / (1.0 if key == "token_cosine_mean" else abs(value))
               for key, value in want.items())


def main(argv):
    binary, directory, model, dtype, layout = argv[1:6]
    rng = np.random.default_rng(20261126)
    s = SHAPES[model]
    # GPT-2's names under transformer. (GPT2LMHeadModel's) for the sharded checkpoints, bare
    # (GPT2Model's) otherwise; ViT's under vit. (ViTForImageClassification's) or bare
    # (ViTModel's) alike.
    sharded = layout == "sharded"
    prefix = {"gpt2": "transformer.", "vit": "vit."}.get(model, "") if sharded else ""
    checkpoint = os.path.join(directory, "checkpoint")
    if model.endswith("-export"):
        return compare_export(binary, directory, model[:-len("-export")], dtype, checkpoint)
    if model == "vit":
        weights = vit_weights(rng, dtype, prefix)
    else:
        weights = (gpt2_weights(rng, dtype) if model == "gpt2" else
                   gemma_weights(rng, dtype, s) if model in GEMMA_SHAPES else
                   phi3_weights(rng, dtype) if model == "phi3" else
                   llama_weights(rng, dtype, s))
        weights = {prefix + n: x for n, x in weights.items()}
    os.makedirs(checkpoint)
    write_checkpoint(checkpoint, weights, dtype, sharded)
    with open(os.path.join(checkpoint, "config.json"), "w") as f:
        json.dump(config_json(model), f)
    ids_path, ids, numpy_input = write_inputs(model, rng, weights, directory)
    tokens = []  # numpy's X_ℓ, ℓ = 1 … L (the Llama family's)
    if model != "vit":
        weights = {n[len(prefix):]: x for n, x in weights.items()}
        expected = (gpt2_forward(weights, numpy_input) if model == "gpt2" else
                    gemma_forward(weights, ids, tokens, s) if model in GEMMA_SHAPES else
                    phi3_forward(weights, ids, tokens) if model == "phi3" else
                    llama_forward(weights, ids, s, tokens))
    worst, first_input, document = 0.0, None, None
    for layer in range(1, s["L"] + 1):
        for head in range(1, s["H"] + 1):
            out = os.path.join(directory, "export-%d-%d" % (layer, head))
            weights_path = checkpoint
            if model == "gemma2" and not sharded:
                weights_path = os.path.join(checkpoint, "model.safetensors")
            command = [binary, "--batch", "--weights", weights_path, "--layer", str(layer),
                       "--head", str(head), "--export", out, "--export-matrix"]
            command += ["--token-ids", ids_path] if ids_path else []
            command += attnscope_settings(model, checkpoint, sharded).split()
            document = json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE).stdout)
            source = document["config"].get("input_source", "")
            if ids_path and not source.startswith(ids_path + " in "):
                print("input_source is %r" % source)
                return 1
            x = exported_matrix(os.path.join(out, "input.csv"))
            if not input_is_numpys(x, numpy_input, first_input):
                print("layer %d head %d: input.csv is not numpy's input" % (layer, head))
                return 1
            if model == "vit" and first_input is None:
                first_input, expected = x, vit_forward(weights, x, prefix)
            got = exported_matrix(os.path.join(out, "attention_matrix.csv"))
            want = expected[layer - 1][head - 1]
            if got.shape != want.shape or np.any((want == 0) != (got == 0)):
                print("layer %d head %d: shape or masked entries differ" % (layer, head))
                return 1
            nonzero = want != 0
            worst = max(worst, float(np.max(np.abs(got[nonzero] - want[nonzero]) / want[nonzero])))
    for layer, x in enumerate(tokens, 1):
        worst = max(worst, tokens_differ(document, layer, x))
    print("%s %s %s: largest relative difference %.3g over %d layers x %d heads (T = %d)" % (
        model, dtype, layout, worst, s["L"], s["H"], s["T"]))
    return 0 if worst <= (1e-12 if model == "phi3" else RTOL) else 1


def compare_export(binary, directory, family, dtype, checkpoint):
    """attnscope's export of drawn weights whose block is GPT-2's (ViT's), read back by
    --weights with --hf-config of its own config.json: every layer's and head's attention is
    numpy's forward of the family's block from the file's tensors on attnscope's drawn input
    (input.csv, orthonormal rows)."""
    weights = export_drawn(binary, family, dtype, checkpoint)
    if weights is None:
        return 1
    s, worst, expected = SHAPES[family], 0.0, None
    for layer in range(1, s["L"] + 1):
        for head in range(1, s["H"] + 1):
            out = os.path.join(directory, "export-%d-%d" % (layer, head))
            command = [binary, "--batch", "--weights", checkpoint, "--hf-config", checkpoint,
                       "-T", str(s["T"]), "--seed", "7", "--layer", str(layer), "--head",
                       str(head), "--export", out, "--export-matrix"]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            x = exported_matrix(os.path.join(out, "input.csv"))
            if expected is None:
                first = x
                expected = gpt2_forward(weights, x) if family == "gpt2" else vit_forward(
                    weights, x, "")
            if not input_is_numpys(x, None, first):
                print("layer %d head %d: input.csv is not the drawn input" % (layer, head))
                return 1
            got = exported_matrix(os.path.join(out, "attention_matrix.csv"))
            want = expected[layer - 1][head - 1]
            if got.shape != want.shape or np.any((want == 0) != (got == 0)):
                print("layer %d head %d: shape or masked entries differ" % (layer, head))
                return 1
            nonzero = want != 0
            worst = max(worst, float(np.max(np.abs(got[nonzero] - want[nonzero]) / want[nonzero])))
    print("%s's export %s: largest relative difference %.3g over %d layers x %d heads (T = %d)" % (
        family, dtype, worst, s["L"], s["H"], s["T"]))
    return 0 if worst <= RTOL else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
