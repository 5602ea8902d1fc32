#!/usr/bin/env python3
"""Safetensors files for the tests, written with struct and json alone (no torch, no numpy):
an independent writer and reader of the format attnscope reads and writes (their format is
scripts/safetensors_file.py's, which `from safetensors_tool import read, write` gives).

  safetensors_tool.py shard SRC DIR          SRC's tensors in two shards + the index, in
                                             reverse order and padded otherwise than SRC
  safetensors_tool.py scale SRC DST NAME X   NAME's F64 values times X
  safetensors_tool.py set SRC DST NAME I X   NAME's F64 element I set to X (nan, inf allowed)
  safetensors_tool.py fill SRC DST NAME X    every element of NAME X
  safetensors_tool.py convert SRC DST DTYPE  every tensor in F32 or F16 (struct's rounding)
  safetensors_tool.py round SRC DST DTYPE    every tensor's values rounded to F32 or BF16
                                             (nearest, ties to even), written as F64
  safetensors_tool.py gpt2 SRC DST LN        SRC (attnscope's Llama names, F64) in GPT-2's
                                             names and layouts: Conv1D (in, out), q | k | v
                                             fused, zero biases, LN gains (LN = ln: and
                                             biases; rms: gains only), a mask buffer, wte,
                                             wpe, ln_f, all under transformer.
  safetensors_tool.py whole-model SRC DST    SRC with a Llama model's tensors outside the
                                             block: model.embed_tokens, model.norm, lm_head
  safetensors_tool.py gpt-oss SRC DST        SRC (Llama names, F64, no MLP) with gpt-oss's
                                             mixture of experts in every layer: the norm
                                             before it, mlp.router, mlp.experts (4 experts)
  safetensors_tool.py gemma3-mm SRC DST OLD|NEW  SRC (Llama names) as a multimodal Gemma 3
                                             saves its text model: under language_model.
                                             (OLD) or model.language_model. (NEW), with a
                                             vision tower and projector beside it
  safetensors_tool.py values FILE NAME       NAME's values, one float.hex per line
  safetensors_tool.py hostile DIR            the hostile corpus: DIR/NAME.safetensors, and
                                             DIR/manifest (NAME, tab, what the error says)
"""
import json
import math
import os
import struct
import sys

# The one reader and writer of the format, shared with bench/numpy_ref.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from safetensors_file import PYTORCH, read, write  # noqa: E402

FORMATS = {"F64": ("d", 8), "F32": ("f", 4), "F16": ("e", 2)}


def values(dtype, raw):
    if dtype == "BF16":  # the top half of a binary32
        halves = struct.unpack("<%dH" % (len(raw) // 2), raw)
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]
    code, size = FORMATS[dtype]
    return list(struct.unpack("<%d%s" % (len(raw) // size, code), raw))


def rounded(x, dtype):
    """x to the nearest F32 (struct) or BF16 (8 significant bits, round() ties to even: the
    scaling by powers of two is exact), once, from the double."""
    if dtype == "F32":
        return struct.unpack("<f", struct.pack("<f", x))[0]
    if x == 0 or x != x or abs(x) == float("inf"):
        return x
    m, e = math.frexp(x)  # |m| in [0.5, 1)
    unit = max(e - 8, -133)
    r = math.ldexp(round(math.ldexp(x, -unit)), unit)
    return r if abs(r) < 2.0**128 else math.copysign(float("inf"), x)


def pack(dtype, xs):
    return struct.pack("<%d%s" % (len(xs), FORMATS[dtype][0]), *xs)


def shard(src, out):
    tensors, meta = read(src)
    tensors.reverse()
    half = len(tensors) // 2
    names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, names[0]), tensors[:half], meta, pad=1, lead="  ")
    write(os.path.join(out, names[1]), tensors[half:], None, pad=16)
    index = {"metadata": {"total_size": sum(len(t[3]) for t in tensors)},
             "weight_map": {t[0]: names[0 if i < half else 1] for i, t in enumerate(tensors)}}
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f)


def edit(src, dst, name, change):
    tensors, meta = read(src)
    out = []
    for n, dtype, shape, raw in tensors:
        if n == name:
            raw = pack(dtype, change(values(dtype, raw)))
        out.append((n, dtype, shape, raw))
    write(dst, out, meta)


def gpt2(src, dst, norm):
    """The same weights under GPT-2's names: each nn.Linear (out, in) W becomes the Conv1D
    (in, out) W^T, the queries, keys and values side by side by columns."""
    tensors = dict((n, (s, values(d, raw))) for n, d, s, raw in read(src)[0])
    out, layer = [], 0

    def add(name, shape, xs):
        out.append(("transformer." + name, "F64", shape, pack("F64", xs)))

    def conv1d(name):  # (out, in) rows -> (in, out) rows
        (rows, cols), xs = tensors[name]
        return [xs[o * cols + i] for i in range(cols) for o in range(rows)], rows, cols

    while "model.layers.%d.self_attn.v_proj.weight" % layer in tensors:
        p = "model.layers.%d." % layer
        q, d, _ = conv1d(p + "self_attn.q_proj.weight")
        k, kv, _ = conv1d(p + "self_attn.k_proj.weight")
        v, _, _ = conv1d(p + "self_attn.v_proj.weight")
        fused = []
        for i in range(d):
            fused += q[i * d:(i + 1) * d] + k[i * kv:(i + 1) * kv] + v[i * kv:(i + 1) * kv]
        h = "h.%d." % layer
        add(h + "ln_1.weight", [d], [1.0] * d)
        if norm == "ln":
            add(h + "ln_1.bias", [d], [0.0] * d)
        add(h + "attn.c_attn.weight", [d, d + 2 * kv], fused)
        add(h + "attn.c_attn.bias", [d + 2 * kv], [0.0] * (d + 2 * kv))
        o, _, _ = conv1d(p + "self_attn.o_proj.weight")
        add(h + "attn.c_proj.weight", [d, d], o)
        add(h + "attn.c_proj.bias", [d], [0.0] * d)
        add(h + "ln_2.weight", [d], [1.0] * d)
        if norm == "ln":
            add(h + "ln_2.bias", [d], [0.0] * d)
        up, hidden, _ = conv1d(p + "mlp.up_proj.weight")
        add(h + "mlp.c_fc.weight", [d, hidden], up)
        add(h + "mlp.c_fc.bias", [hidden], [0.0] * hidden)
        down, _, _ = conv1d(p + "mlp.down_proj.weight")
        add(h + "mlp.c_proj.weight", [hidden, d], down)
        add(h + "mlp.c_proj.bias", [d], [0.0] * d)
        add(h + "attn.bias", [1, 1, 4, 4], [1.0 if c <= r else 0.0 for r in range(4) for c in range(4)])
        layer += 1
    add("wte.weight", [7, d], [0.01 * i for i in range(7 * d)])
    add("wpe.weight", [4, d], [0.02 * i for i in range(4 * d)])
    add("ln_f.weight", [d], [1.0] * d)
    add("ln_f.bias", [d], [0.0] * d)
    write(dst, out, PYTORCH)


def gpt_oss(src, dst):
    """gpt-oss's tensors beyond its attention path, as its BF16 checkpoints lay them out
    (modeling_gpt_oss.py: GptOssTopKRouter, GptOssExperts), each layer's after its own."""
    tensors, meta = read(src)
    d = [s for n, _, s, _ in tensors if n.endswith("v_proj.weight")][0][1]
    experts, out, layer = 4, list(tensors), 0
    while any(n.startswith("model.layers.%d." % layer) for n, _, _, _ in tensors):
        p = "model.layers.%d." % layer
        for name, shape in (("post_attention_layernorm.weight", [d]),
                            ("mlp.router.weight", [experts, d]), ("mlp.router.bias", [experts]),
                            ("mlp.experts.gate_up_proj", [experts, d, 2 * d]),
                            ("mlp.experts.gate_up_proj_bias", [experts, 2 * d]),
                            ("mlp.experts.down_proj", [experts, d, d]),
                            ("mlp.experts.down_proj_bias", [experts, d])):
            count = math.prod(shape)
            out.append((p + name, "F64", shape, pack("F64", [0.01 * (i % 7) for i in range(count)])))
        layer += 1
    write(dst, out, meta)


def gemma3_mm(src, dst, layout):
    """SRC's text model as Gemma3ForConditionalGeneration saves it: transformers up to 4.51
    (OLD) under language_model., since (NEW) under model.language_model. without the text
    model's own model., lm_head at the top; the vision tower and its projector beside."""
    tensors, meta = read(src)
    d = [s for n, _, s, _ in tensors if n.endswith("v_proj.weight")][0][1]
    renamed = []
    for n, dtype, shape, raw in tensors:
        if layout == "OLD":
            n = "language_model." + n
        elif n.startswith("model."):
            n = "model.language_model." + n[len("model."):]
        renamed.append((n, dtype, shape, raw))
    top = "" if layout == "OLD" else "model."
    vision = [(top + "vision_tower.vision_model.embeddings.patch_embedding.weight", [4, 3, 2, 2]),
              (top + "vision_tower.vision_model.post_layernorm.weight", [4]),
              (top + "multi_modal_projector.mm_input_projection_weight", [4, d])]
    write(dst, [(n, "F64", s, pack("F64", [0.5] * math.prod(s))) for n, s in vision] + renamed,
          meta)


def hostile(out):
    """Each rule of the reader broken once, on a valid two-tensor file."""
    os.makedirs(out, exist_ok=True)
    a = {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}
    b = {"dtype": "F16", "shape": [3], "data_offsets": [16, 22]}
    data = bytes(22)
    cases = []

    def case(name, says, header=None, body=data, raw_header=None, length=None):
        text = raw_header if raw_header is not None else json.dumps(header).encode()
        n = len(text) if length is None else length
        with open(os.path.join(out, name + ".safetensors"), "wb") as f:
            f.write(struct.pack("<Q", n) + text + body)
        cases.append((name, says))

    case("gap", "begins at data byte 18, expected 16",
         {"a": a, "b": dict(b, data_offsets=[18, 24])}, bytes(24))
    case("overlap", "begins at data byte 14, expected 16",
         {"a": a, "b": dict(b, data_offsets=[14, 20])})
    case("first-not-zero", "begins at data byte 2, expected 0",
         {"a": dict(a, data_offsets=[2, 18]), "b": dict(b, data_offsets=[18, 24])}, bytes(24))
    case("trailing-bytes", "cover 22 bytes of data, but 23 follow", {"a": a, "b": b}, bytes(23))
    case("short-data", "cover 22 bytes of data, but 21 follow", {"a": a, "b": b}, bytes(21))
    case("count-mismatch", "'b': data_offsets [16, 22] hold 6 bytes, but F16 × its shape needs 8",
         {"a": a, "b": dict(b, shape=[4])})
    case("end-before-begin", "data_offsets [22, 16] end before they begin",
         {"a": a, "b": dict(b, data_offsets=[22, 16])})
    case("shape-overflow", "the shape's product overflows 64 bits",
         {"a": a, "b": dict(b, shape=[2**32, 2**32 + 1])})
    case("bytes-overflow", "the byte count overflows 64 bits",
         {"a": a, "b": dict(b, shape=[2**63 + 1])})
    case("offset-too-big", "expected \"data_offsets\" as [begin, end]", raw_header=(
        b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 18446744073709551616]}}'))
    case("negative-size", "shape entry 0 is not a size",
         {"a": a, "b": dict(b, shape=[-3])})
    case("fractional-size", "shape entry 0 is not a size",
         {"a": a, "b": dict(b, shape=[3.0])})
    case("exponent-offset", "expected \"data_offsets\" as [begin, end]", raw_header=(
        b'{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 1.6e1]}}'), body=bytes(16))
    case("duplicate-name", "duplicate key \"a\"", raw_header=(
        b'{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},'
        b' "a": {"dtype": "F16", "shape": [3], "data_offsets": [16, 22]}}'))
    case("integer-dtype", "dtype I64 is not one attnscope reads",
         {"a": a, "b": dict(b, dtype="I64", shape=[1], data_offsets=[16, 24])}, bytes(24))
    case("unknown-dtype", "unknown dtype \"F12\"", {"a": a, "b": dict(b, dtype="F12")})
    case("no-dtype", "expected \"dtype\" as a string",
         {"a": a, "b": {"shape": [3], "data_offsets": [16, 22]}})
    case("no-offsets", "expected \"data_offsets\"", {"a": a, "b": {"dtype": "F16", "shape": [3]}})
    case("three-offsets", "expected \"data_offsets\"",
         {"a": a, "b": dict(b, data_offsets=[16, 22, 22])})
    case("tensor-not-object", "expected an object, found an array", {"a": a, "b": [1, 2]})
    case("metadata-not-string", "__metadata__ 'x' must be a string",
         {"__metadata__": {"x": 1}, "a": a, "b": b})
    case("header-not-object", "the header is an array, expected a JSON object", raw_header=b"[1, 2]", body=b"")
    case("header-too-long", "header length 100000001, expected at most 100000000 (the format's bound)", raw_header=b"{}",
         length=100000001)
    case("header-past-end", "header length 4096, but only 2 bytes follow", raw_header=b"{}",
         length=4096, body=b"")
    case("huge-length", "header length 18446744073709551615", raw_header=b"{}",
         length=2**64 - 1, body=b"")
    case("deep-json", "the header is not valid JSON: JSON byte 65: nested deeper than 64", raw_header=b"[" * 5000 + b"]" * 5000,
         body=b"")
    case("non-utf8", "the header is not valid JSON: JSON byte 3: byte 0xff is not UTF-8",
         raw_header=b'{"\xff\xfe": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}}',
         body=b"")
    case("truncated-header", "the header is not valid JSON",
         raw_header=json.dumps({"a": a, "b": b}).encode()[:-5], body=b"")
    case("rank-9", "at most 8 sizes", {"a": dict(a, shape=[1] * 9, data_offsets=[0, 4])}, bytes(4))
    with open(os.path.join(out, "short.safetensors"), "wb") as f:
        f.write(b"\x02\x00\x00")
    cases.append(("short", "too short for the 8-byte header length"))
    with open(os.path.join(out, "manifest"), "w") as f:
        for name, says in cases:
            f.write("%s\t%s\n" % (name, says))


def main(argv):
    command = argv[1]
    if command == "shard":
        shard(argv[2], argv[3])
    elif command == "scale":
        edit(argv[2], argv[3], argv[4], lambda xs: [x * float(argv[5]) for x in xs])
    elif command == "fill":
        edit(argv[2], argv[3], argv[4], lambda xs: [float(argv[5])] * len(xs))
    elif command == "set":
        i = int(argv[5])
        edit(argv[2], argv[3], argv[4], lambda xs: xs[:i] + [float(argv[6])] + xs[i + 1 :])
    elif command == "convert":
        tensors, meta = read(argv[2])
        write(argv[3], [(n, argv[4], s, pack(argv[4], values(d, raw))) for n, d, s, raw in tensors],
              meta)
    elif command == "round":
        tensors, meta = read(argv[2])
        write(argv[3], [(n, "F64", s, pack("F64", [rounded(x, argv[4]) for x in values(d, raw)]))
                        for n, d, s, raw in tensors], meta)
    elif command == "whole-model":
        tensors, meta = read(argv[2])
        d = [s for n, _, s, _ in tensors if n.endswith("v_proj.weight")][0][1]
        extra = [("model.embed_tokens.weight", [7, d], [0.01 * i for i in range(7 * d)]),
                 ("model.norm.weight", [d], [1.0] * d),
                 ("lm_head.weight", [7, d], [0.02 * i for i in range(7 * d)])]
        write(argv[3], [(n, "F64", s, pack("F64", xs)) for n, s, xs in extra] + tensors, meta)
    elif command == "add":  # a vector of LENGTH entries VALUE, in F64, after the others
        tensors, meta = read(argv[2])
        n = int(argv[5])
        write(argv[3], tensors + [(argv[4], "F64", [n], pack("F64", [float(argv[6])] * n))], meta)
    elif command == "gpt2":
        gpt2(argv[2], argv[3], argv[4])
    elif command == "gpt-oss":
        gpt_oss(argv[2], argv[3])
    elif command == "gemma3-mm":
        gemma3_mm(argv[2], argv[3], argv[4])
    elif command == "values":
        tensors, _ = read(argv[2])
        for n, d, s, raw in tensors:
            if n == argv[3]:
                print("\n".join(float(x).hex() for x in values(d, raw)))
    elif command == "hostile":
        hostile(argv[2])


if __name__ == "__main__":
    main(sys.argv)
