#!/usr/bin/env python3
"""make_e2e_fixtures.py — writes the small tensors the end-to-end CLI suite and `make run` use.

usage: /usr/bin/python3 tools/make_e2e_fixtures.py   (needs Debian's python3-numpy, python3-h5py)

The outputs are committed; nothing at build or test time needs Python. Deterministic: fixed seeds.
safetensors files are written by hand here (8-byte little-endian header length, JSON header,
raw little-endian data), so the `safetensors` package is not needed; bf16 is stored as its bits.
"""
import json
import os
import struct

import h5py
import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "e2e", "fixtures")
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "example")


def bf16_bits(x):
    """Round float32 values to bf16 (nearest even) and return the uint16 bit patterns."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    rounded = np.where(nan, (b >> 16) | 0x40, rounded)
    return rounded.astype(np.uint16)


def bf16_values(x):
    return (bf16_bits(x).astype(np.uint32) << 16).view(np.float32)


def write_safetensors(path, tensors):
    """tensors: name -> (dtype string, shape, raw bytes)."""
    header, blobs, at = {}, [], 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def save(name, arr):
    np.save(os.path.join(OUT, name), arr)


def main():
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(EXAMPLE, exist_ok=True)
    rng = np.random.default_rng(7)

    # fp16 1-D with the special values: zeros, NaN, ±Inf, subnormals, a tie.
    e = np.array([0.0, -0.0, 1.0, np.nan, np.inf, -np.inf, 6e-8, 1000.0, 2.0, 0.5], dtype=np.float16)
    a = np.array([0.0, 0.0, 1.001, np.nan, np.inf, np.inf, 0.0, 1001.0, 2.0, 0.5], dtype=np.float16)
    save("special_f16_expected.npy", e)
    save("special_f16_actual.npy", a)

    # fp32 4-D, small noise: a mismatch pattern with a clear worst element.
    e4 = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    a4 = (e4 + rng.standard_normal(e4.shape).astype(np.float32) * 1e-5).astype(np.float32)
    save("f32_4d_expected.npy", e4)
    save("f32_4d_actual.npy", a4)
    save("f32_4d_close.npy", e4.copy())

    # fp64 2-D, and a transposed shape for the shape-mismatch error.
    e2 = rng.standard_normal((3, 4))
    save("f64_expected.npy", e2)
    save("f64_actual.npy", e2 * (1 + 1e-6))
    save("f64_transposed.npy", np.ascontiguousarray(e2.T))

    # 0-d tensors: the scalar message.
    save("scalar_one.npy", np.array(1.0, dtype=np.float32))
    save("scalar_two.npy", np.array(2.0, dtype=np.float32))

    # bf16 values stored as float32 in .npy (declared with --actual-dtype bf16), and one that
    # is not a bf16 value (an error when declared bf16).
    x = rng.standard_normal(64).astype(np.float32)
    save("bf16_as_f32_actual.npy", bf16_values(x))
    save("bf16_as_f32_expected.npy", x)
    save("not_bf16.npy", x)

    # Rejected inputs.
    save("fortran.npy", np.asfortranarray(rng.standard_normal((3, 4))))
    save("int32.npy", np.arange(6, dtype=np.int32))
    with open(os.path.join(OUT, "f64_expected.npy"), "rb") as f:
        full = f.read()
    with open(os.path.join(OUT, "truncated.npy"), "wb") as f:
        f.write(full[: len(full) - 20])

    # HDF5: a float32 dataset inside a group.
    with h5py.File(os.path.join(OUT, "tensors.h5"), "w") as f:
        f.create_dataset("/run/out", data=e4)
        f.create_dataset("/run/out_f16", data=e4.astype(np.float16))

    # The example `make run` compares: seed 001's situation in miniature. The same attention
    # output computed two ways in bf16 (as if with and without context parallelism), compared at
    # fp32 tolerances as TransformerEngine's test does: the differences print as bf16 values.
    ref = rng.standard_normal((1, 2, 64, 32)).astype(np.float64) * 0.05
    noise_a = rng.standard_normal(ref.shape) * 2e-4
    noise_b = rng.standard_normal(ref.shape) * 2e-4
    out_cp = bf16_bits((ref + noise_a).astype(np.float32))
    out_ref = bf16_bits((ref + noise_b).astype(np.float32))
    write_safetensors(os.path.join(EXAMPLE, "attn_out.safetensors"), {
        "out_cp": ("BF16", ref.shape, out_cp.tobytes()),
        "out_no_cp": ("BF16", ref.shape, out_ref.tobytes()),
    })
    write_safetensors(os.path.join(OUT, "bf16_pair.safetensors"), {
        "a": ("BF16", (8,), bf16_bits(np.array([1, 2, 3, 4, 5, 6, 7, 0.001], np.float32)).tobytes()),
        "e": ("BF16", (8,), bf16_bits(np.array([1, 2, 3, 4, 5, 6, 7.5, 3], np.float32)).tobytes()),
    })


if __name__ == "__main__":
    main()
