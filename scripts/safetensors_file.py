"""The safetensors format, read and written with struct and json alone (no torch, no numpy): one
reader and one writer, independent of attnscope's, that bench/numpy_ref.py's checkpoints and
the tests' files (tests/cli/safetensors_tool.py, hf_forward.py, numpy_ref_compare.py) share.

A file is an 8-byte little-endian header length, the JSON header (each tensor's dtype, shape
and [begin, end) byte offsets into the data, optionally "__metadata__"), then the data.
A tensor here is (name, dtype, shape, raw bytes).
"""
import json
import struct

# The metadata transformers' save_pretrained writes.
PYTORCH = {"format": "pt"}


def read(path):
    """The file's tensors in the order of their data, and its __metadata__ (None if absent)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    meta = header.pop("__metadata__", None)
    body = data[8 + n :]
    tensors = []
    for name, info in header.items():
        begin, end = info["data_offsets"]
        tensors.append((name, info["dtype"], info["shape"], body[begin:end]))
    tensors.sort(key=lambda t: header[t[0]]["data_offsets"][0])
    return tensors, meta


def write(path, tensors, meta=None, pad=8, lead=""):
    """tensors' data one after the other in the given order; the header after `lead` (white
    space before the JSON, which the format allows), padded with spaces to a multiple of `pad`
    bytes."""
    header, at = {}, 0
    if meta is not None:
        header["__metadata__"] = meta
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(raw)]}
        at += len(raw)
    text = (lead + json.dumps(header)).encode()
    text += b" " * (-len(text) % pad)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors))
