#!/usr/bin/env python3
"""make_fixture.py — writes the reference files the tensor I/O tests read: files made by numpy,
h5py and the reference safetensors implementation, so the tests check precprobe against the
writers users actually run, not only against itself.

usage:
    /usr/bin/python3 tools/make_fixture.py            # .npy and .h5 (Debian's python3-numpy, -h5py)
    /tmp/venv/bin/python tools/make_fixture.py --safetensors
        # also ref.safetensors and ref_i64.safetensors, made by the `safetensors` package (0.8.0
        # was used: python3 -m venv --system-site-packages /tmp/venv; /tmp/venv/bin/pip install
        # safetensors). It is not a dependency of precprobe: the files are committed.

Outputs go to tests/fixtures/tensorio/ and are committed; nothing at build or test time needs
Python. Deterministic: no randomness. The values are repeated by hand in tests/test_*.c, which
compare what precprobe reads with them bit for bit.
"""
import os
import sys

import h5py
import numpy as np
from numpy.lib import format as npformat

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "tensorio")

# float16 special values: zeros, the smallest and largest subnormal, the smallest normal, the
# largest finite, infinities, NaN, and two ordinary values.
F16_SPECIAL = np.array([0.0, -0.0, 2.0**-24, -(2.0**-24), 1023 * 2.0**-24, 2.0**-14, 65504.0,
                        -65504.0, np.inf, -np.inf, np.nan, 1.0, -1.5], dtype=np.float16)
F32_2X3 = np.array([[1.0, -2.5, 2.0**-149], [3.4028234663852886e38, -np.inf, -0.0]], dtype=np.float32)
F64_BE = np.array([1.0, -0.0, 5e-324, 1.7976931348623157e308, np.inf], dtype=">f8")


def npy(name, arr, version=None):
    path = os.path.join(OUT, name)
    if version is None:
        np.save(path, arr)
    else:
        with open(path, "wb") as f:
            npformat.write_array(f, arr, version=version)


def bf16_bits(values):
    """bf16 bit patterns of float32 values that are bf16 values (exact: the low 16 bits are 0)."""
    b = np.asarray(values, dtype=np.float32).view(np.uint32)
    assert not np.any(b & 0xFFFF), "not bf16 values"
    return (b >> 16).astype(np.uint16)


def make_numpy():
    npy("np_f16_special.npy", F16_SPECIAL)
    npy("np_f32_2x3.npy", F32_2X3)
    npy("np_f64_be.npy", F64_BE)
    npy("np_f32_0d.npy", np.array(-3.0, dtype=np.float32))
    npy("np_f64_empty.npy", np.zeros((0, 3), dtype=np.float64))
    npy("np_f32_v2.npy", np.array([1.0, 2.0], dtype=np.float32), version=(2, 0))
    npy("np_f16_v3.npy", np.array([0.5, -0.25], dtype=np.float16), version=(3, 0))


def make_h5():
    with h5py.File(os.path.join(OUT, "h5py.h5"), "w") as f:
        f["f16"] = F16_SPECIAL
        f["f32"] = F32_2X3
        f["/g/sub/f64"] = F64_BE.astype("<f8")
        f["f64_be"] = F64_BE  # stored big-endian
        f["scalar"] = np.float32(7.0)
        f["empty"] = np.zeros((0, 3), dtype=np.float32)
        bf = f.create_dataset("bf16", data=np.array([1.0, -0.0078125, 3.3895313892515355e38], np.float32))
        bf.attrs["precprobe_format"] = "bf16"
        nb = f.create_dataset("not_bf16", data=np.array([1.0, 1.1], np.float32))
        nb.attrs["precprobe_format"] = "bf16"
        fl = f.create_dataset("fixed_attr", data=np.array([0.5], np.float32))
        fl.attrs["precprobe_format"] = np.bytes_("e5m2")  # a fixed-length string attribute
        ua = f.create_dataset("unknown_attr", data=np.array([1.0], np.float32))
        ua.attrs["precprobe_format"] = "fp12"
        na = f.create_dataset("number_attr", data=np.array([1.0], np.float32))
        na.attrs["precprobe_format"] = 3
        f["int32"] = np.arange(6, dtype=np.int32)
        f["compound"] = np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")])
        f["null"] = h5py.Empty("f4")
        f["dims9"] = np.zeros((1,) * 9, dtype=np.float32)
        f["longdouble"] = np.zeros(2, dtype=np.longdouble)


def make_safetensors():
    from safetensors import TensorSpec, serialize_file  # the reference implementation

    keep = []

    def spec(dtype, shape, raw):
        raw = np.ascontiguousarray(raw)
        keep.append(raw)
        return TensorSpec(dtype=dtype, shape=list(shape), data_ptr=raw.ctypes.data, data_len=raw.nbytes)

    # One tensor of every dtype precprobe reads, with special values, and an empty one; the
    # writer must reproduce this file byte for byte.
    tensors = {
        "f64": spec("float64", [2, 2], np.array([1.0, -0.0, 5e-324, np.inf])),
        "f32": spec("float32", [2, 3], F32_2X3),
        "bf16": spec("bfloat16", [4], bf16_bits([1.0, -0.0078125, 3.3895313892515355e38, -np.inf])),
        "f16": spec("float16", [13], F16_SPECIAL),
        "e4m3": spec("float8_e4m3fn", [5], np.array([0x00, 0x80, 0x01, 0x7E, 0xFF], np.uint8)),
        "e5m2": spec("float8_e5m2", [5], np.array([0x00, 0x01, 0x7B, 0x7C, 0xFC], np.uint8)),
        "empty": spec("float32", [0, 3], np.zeros(0, np.float32)),
        "scalar": spec("float16", [], np.array([1.0], np.float16)),
    }
    serialize_file(tensors, os.path.join(OUT, "ref.safetensors"))
    # A file with a dtype precprobe does not read and metadata, as torch's save_file leaves it.
    serialize_file({"i64": spec("int64", [2], np.array([1, -2], np.int64)),
                    "w": spec("float32", [1], np.array([0.5], np.float32))},
                   os.path.join(OUT, "ref_i64.safetensors"), metadata={"format": "pt"})


def main():
    os.makedirs(OUT, exist_ok=True)
    if "--safetensors" in sys.argv[1:]:
        make_safetensors()
    make_numpy()
    make_h5()


if __name__ == "__main__":
    main()
