"""Tensors as precprobe reads them: torch / numpy / ml_dtypes arrays to (format, numpy array)
pairs, and safetensors files written (and read back) with numpy alone.

A tensor here is a `Tensor`: `fmt` is the case's format name ("bf16", "fp16", "fp32"), `data`
a C-contiguous numpy array: uint16 bit patterns for bf16 (numpy has no bfloat16), float16 or
float32 otherwise. The safetensors format is an 8-byte little-endian header length, a JSON
header, then the raw little-endian bytes (https://github.com/huggingface/safetensors); bf16 is
stored natively as "BF16", so nothing is rounded or widened on the way to the CLI.
"""
import json
import struct

import numpy as np

# format name -> (safetensors dtype, numpy storage dtype)
FORMATS = {
    "bf16": ("BF16", np.dtype("<u2")),
    "fp16": ("F16", np.dtype("<f2")),
    "fp32": ("F32", np.dtype("<f4")),
}
_ST_TO_FMT = {st: fmt for fmt, (st, _) in FORMATS.items()}

# torch dtype names (str(torch.bfloat16) == "torch.bfloat16") and numpy/ml_dtypes names
_DTYPE_NAMES = {
    "torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.half": "fp16", "torch.float32": "fp32",
    "torch.float": "fp32", "bfloat16": "bf16", "float16": "fp16", "float32": "fp32",
}


class Tensor:
    """One tensor in precprobe's terms: `fmt` ("bf16", "fp16", "fp32") and `data` (numpy,
    uint16 bit patterns for bf16)."""

    __slots__ = ("fmt", "data")

    def __init__(self, fmt, data):
        if fmt not in FORMATS:
            raise ValueError(f"format {fmt!r}: precprobe takes {', '.join(FORMATS)}")
        self.fmt = fmt
        self.data = np.ascontiguousarray(data, dtype=FORMATS[fmt][1])

    @property
    def shape(self):
        return tuple(self.data.shape)

    def transpose(self, axes):
        return Tensor(self.fmt, np.ascontiguousarray(self.data.transpose(axes)))

    def reshape(self, shape):
        return Tensor(self.fmt, self.data.reshape(shape))

    def to_float64(self):
        """The values as binary64 (exact: every format here widens exactly)."""
        if self.fmt == "bf16":
            return (self.data.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        return self.data.astype(np.float64)

    def __repr__(self):
        return f"Tensor({self.fmt}, shape={self.shape})"


def dtype_format(dtype):
    """The case format of a torch, numpy or ml_dtypes dtype (or its name); ValueError otherwise."""
    name = str(dtype)
    if name in _DTYPE_NAMES:
        return _DTYPE_NAMES[name]
    try:
        name = np.dtype(dtype).name
    except TypeError:
        pass
    if name in _DTYPE_NAMES:
        return _DTYPE_NAMES[name]
    raise ValueError(f"dtype {dtype}: precprobe takes bfloat16, float16 and float32 tensors")


def is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def to_tensor(x):
    """A torch tensor, numpy array (float16/float32, or ml_dtypes bfloat16) or Tensor as a Tensor;
    the values are not changed (no rounding, no widening)."""
    if isinstance(x, Tensor):
        return x
    if is_torch(x):
        import torch  # only reached with a torch tensor in hand
        fmt = dtype_format(x.dtype)
        t = x.detach().to("cpu").contiguous()
        if fmt == "bf16":
            return Tensor(fmt, t.view(torch.int16).numpy().view(np.uint16))
        return Tensor(fmt, t.numpy())
    a = np.asarray(x)
    fmt = dtype_format(a.dtype)
    if fmt == "bf16":  # ml_dtypes.bfloat16: the same 16 bits
        return Tensor(fmt, a.view(np.uint16))
    return Tensor(fmt, a)


def from_tensor(t, like=None):
    """A Tensor back as what `like` is (a torch tensor: torch; else numpy, bf16 as ml_dtypes'
    bfloat16 when ml_dtypes is importable, else uint16 bits)."""
    if like is not None and is_torch(like):
        import torch
        if t.fmt == "bf16":
            return torch.from_numpy(t.data.view(np.int16).copy()).view(torch.bfloat16)
        return torch.from_numpy(t.data.copy())
    if t.fmt == "bf16":
        try:
            import ml_dtypes
            return t.data.view(ml_dtypes.bfloat16)
        except ImportError:
            return t.data
    return t.data


def save_safetensors(path, tensors, metadata=None):
    """Writes {name: Tensor} as a safetensors file (numpy only); names in the given order."""
    header = {}
    offset = 0
    blobs = []
    for name, t in tensors.items():
        raw = t.data.astype(FORMATS[t.fmt][1], copy=False).tobytes(order="C")
        header[name] = {"dtype": FORMATS[t.fmt][0], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data starts 8-aligned, as safetensors' own writer pads
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def load_safetensors(path):
    """Reads a safetensors file of BF16/F16/F32 tensors as {name: Tensor} (numpy only)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        if h["dtype"] not in _ST_TO_FMT:
            raise ValueError(f"{path}: {name}: dtype {h['dtype']} is not one precprobe reads")
        fmt = _ST_TO_FMT[h["dtype"]]
        begin, end = h["data_offsets"]
        a = np.frombuffer(blob[base + begin:base + end], dtype=FORMATS[fmt][1]).reshape(h["shape"])
        out[name] = Tensor(fmt, a)
    return out
