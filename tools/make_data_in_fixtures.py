#!/usr/bin/env python3
"""make_data_in_fixtures.py — writes the fixtures of "data in, the way PyTorch users have it":
tensors saved by torch.save (.pt) and by numpy with ml_dtypes (bf16 .npy as '<V2'), in SDPA's
[b, h, s, d] layout, from cases/external/attn_dump.safetensors (the [b, s, h, d] dump of
cases/external-attention.toml), plus small .pt files for tests/test_pt.c.

usage: PYTHON tools/make_data_in_fixtures.py   (PYTHON with torch, numpy and ml_dtypes, e.g. a venv:
       python3 -m venv V && V/bin/pip install torch numpy ml_dtypes)

tests/e2e/data_in.sh runs the cases of tests/data/cases/data_in/ on these files and checks that
each report equals cases/external-attention.toml's: the same values, read another way.
"""
import collections
import json
import os
import struct

import ml_dtypes
import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DUMP = os.path.join(ROOT, "cases", "external", "attn_dump.safetensors")
E2E = os.path.join(ROOT, "tests", "e2e", "fixtures", "data_in")
UNIT = os.path.join(ROOT, "tests", "fixtures", "pt")


def read_safetensors(path):
    """The bf16 tensors of a safetensors file, as torch tensors (no safetensors package needed)."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "BF16"
        b, e = info["data_offsets"]
        bits = np.frombuffer(raw[8 + n + b:8 + n + e], dtype="<u2").astype(np.int32)
        out[name] = torch.from_numpy(bits.astype(np.int16).copy()).view(torch.bfloat16).reshape(info["shape"])
    return out


def bhsd(x):
    """SDPA's layout [b, h, s, d] of a [b, s, h, d] tensor: a view, as a user holds it."""
    return x.transpose(1, 2)


def save_bf16_npy(path, x):
    """A bf16 tensor saved as numpy saves an ml_dtypes.bfloat16 array ('<V2' items)."""
    np.save(path, x.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16))


def main():
    os.makedirs(E2E, exist_ok=True)
    os.makedirs(UNIT, exist_ok=True)
    t = read_safetensors(DUMP)
    # every tensor of the dump in [b, h, s, d], as non-contiguous views (torch.save keeps strides)
    torch.save({name: bhsd(x) for name, x in t.items()}, os.path.join(E2E, "attn_bhsd.pt"))
    torch.save(bhsd(t["v"]), os.path.join(E2E, "v_bhsd.pt"))  # a single tensor: X.pt
    # q as float32 a quarter ulp off each bf16 value (round = "nearest" recovers the bf16 value)
    q = bhsd(t["q"]).float()
    ulp = torch.where(q == 0, torch.zeros_like(q),
                      torch.ldexp(torch.ones_like(q), torch.frexp(q).exponent - 8))
    np.save(os.path.join(E2E, "q_bhsd_f32_offgrid.npy"), (q + ulp / 4).contiguous().numpy())
    for name in ("k", "out", "dq"):
        save_bf16_npy(os.path.join(E2E, f"{name}_bhsd_bf16.npy"), bhsd(t[name]))

    # unit fixtures: every dtype read, views, a state_dict, a Parameter, what is refused
    g = torch.Generator().manual_seed(7)
    base = torch.randn(3, 4, generator=g)
    np.save(os.path.join(UNIT, "base_f32.npy"), base.numpy())  # the truth, read by the .npy reader
    torch.save({"f64": base.double(), "f32": base, "f16": base.half(), "bf16": base.bfloat16(),
                "e4m3": base.to(torch.float8_e4m3fn), "e5m2": base.to(torch.float8_e5m2),
                "t": base.t(), "slice": base[1:, 2:], "scalar": torch.tensor(2.5),
                "empty": torch.zeros(0, 3)}, os.path.join(UNIT, "dtypes.pt"))
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 2).to(torch.bfloat16)
    torch.save(lin.state_dict(), os.path.join(UNIT, "state_dict.pt"))
    torch.save({"p": torch.nn.Parameter(base)}, os.path.join(UNIT, "parameter.pt"))
    torch.save(base, os.path.join(UNIT, "single.pt"))
    torch.save({"i": torch.arange(3), "x": base}, os.path.join(UNIT, "int64.pt"))
    torch.save({"x": base, "step": 5}, os.path.join(UNIT, "mixed.pt"))
    torch.save([base], os.path.join(UNIT, "list.pt"))
    torch.save({"x": base, "od": collections.OrderedDict(a=1)}, os.path.join(UNIT, "nested.pt"))
    torch.save(base, os.path.join(UNIT, "legacy.pt"), _use_new_zipfile_serialization=False)
    print("wrote", E2E, "and", UNIT)


if __name__ == "__main__":
    main()
