#!/usr/bin/env python3
"""torch_parity.py — checks `precprobe compare` against torch.testing.assert_close, line for line.

usage: PYTHON tools/torch_parity.py [--n N] [--seed S] [--precprobe bin/precprobe] [--keep DIR]
  PYTHON is any interpreter with torch and numpy, e.g. a venv with a recent torch from PyPI,
  or Debian's /usr/bin/python3 with python3-torch (1.13). The torch version it finds decides the
  semantics precprobe is asked for (--torch-version X.Y).

It draws N random and adversarial tensor pairs (float16/bfloat16/float32/float64, mixed dtypes,
zeros, -0, NaN, ±Inf, subnormals, values near the format's max, tied maxima, 0-d and 1-D to 5-D
shapes, default and explicit tolerances, equality mode, equal_nan), writes each operand to a file
(.npy, or safetensors for bfloat16, which NumPy cannot hold), runs torch.testing.assert_close(
actual, expected, check_dtype=False, ...) and `precprobe compare` on the files, and compares
torch's message with precprobe's stdout and the exit status. Prints the agreement count; exits 1
on any disagreement, 0 when all agree, and 0 with "skipped" when torch is not importable.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError as exc:  # optional check: no torch here, nothing to compare with
    print(f"torch_parity: skipped ({exc})")
    sys.exit(0)

DTYPES = {
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "fp32": torch.float32,
    "fp64": torch.float64,
}
SPECIALS = {
    "fp16": [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 6e-8, -6e-8, 65504.0, -65504.0, 1e-5],
    "bf16": [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1e-40, -9.2e-41, 3.38e38, 1e-38],
    "fp32": [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1e-45, 3.4e38, -1e-40],
    "fp64": [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 5e-324, 1.7e308, 2.2e-308],
}


def torch_version():
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    return f"{major}.{minor}"


def save(path_base, t):
    """Writes tensor t; returns the operand spec precprobe reads."""
    if t.dtype == torch.bfloat16:
        bits = t.contiguous().view(torch.int16).numpy().astype("<i2").tobytes()
        header = {"x": {"dtype": "BF16", "shape": list(t.shape), "data_offsets": [0, len(bits)]}}
        h = json.dumps(header).encode()
        h += b" " * (-len(h) % 8)
        with open(path_base + ".safetensors", "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h + bits)
        return path_base + ".safetensors:x"
    np.save(path_base + ".npy", t.numpy())
    return path_base + ".npy"


def draw_case(rng):
    fa = rng.choice(list(DTYPES))
    fe = fa if rng.random() < 0.6 else rng.choice(list(DTYPES))
    ndim = int(rng.integers(0, 6))
    shape = tuple(int(rng.integers(1, 6)) for _ in range(ndim))
    n = int(np.prod(shape)) if shape else 1
    scale = 10.0 ** rng.integers(-6, 5)
    e = rng.standard_normal(n) * scale
    kind = rng.integers(0, 6)
    if kind == 0:    # tiny noise: near the tolerance boundary
        a = e * (1 + rng.standard_normal(n) * 10.0 ** rng.integers(-8, -1))
    elif kind == 1:  # identical
        a = e.copy()
    elif kind == 2:  # tied differences at several positions
        a = e.copy()
        pos = rng.choice(n, size=min(n, 3), replace=False)
        a[pos] = e[pos] + scale
    elif kind == 3:  # cancellation: actual is minus expected
        a = -e
    else:
        a = e + rng.standard_normal(n) * scale * 10.0 ** rng.integers(-4, 1)
    for arr, f in ((a, fa), (e, fe)):  # sprinkle special values
        k = int(rng.integers(0, 3))
        for _ in range(k):
            arr[int(rng.integers(0, n))] = rng.choice(SPECIALS[f])
    ta = torch.tensor(a, dtype=torch.float64).reshape(shape).to(DTYPES[fa])
    te = torch.tensor(e, dtype=torch.float64).reshape(shape).to(DTYPES[fe])
    tol = None
    r = rng.random()
    if r < 0.25:
        tol = (1.3e-6, 1e-5)
    elif r < 0.35:
        tol = (0.0, 0.0)
    elif r < 0.5:
        tol = (float(rng.choice([1e-3, 0.016, 0.1, 1e-7])), float(rng.choice([1e-5, 1e-3, 0.0, 1e-8])))
    equal_nan = bool(rng.random() < 0.3)
    return ta, te, tol, equal_nan


def torch_message(ta, te, tol, equal_nan):
    kw = {"check_dtype": False, "equal_nan": equal_nan}
    if tol is not None:
        kw["rtol"], kw["atol"] = tol
    try:
        torch.testing.assert_close(ta, te, **kw)
    except AssertionError as exc:
        return str(exc)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--precprobe", default="bin/precprobe")
    ap.add_argument("--keep", help="keep the disagreeing cases in this folder")
    args = ap.parse_args()
    version = torch_version()
    rng = np.random.default_rng(args.seed)
    agree = disagree = not_close = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.n):
            ta, te, tol, equal_nan = draw_case(rng)
            want = torch_message(ta, te, tol, equal_nan)
            not_close += want is not None
            sa = save(os.path.join(tmp, f"a{i}"), ta)
            se = save(os.path.join(tmp, f"e{i}"), te)
            cmd = [args.precprobe, "compare", sa, se, "--torch-version", version, "--quiet"]  # torch's silence
            if tol is not None:
                cmd += ["--rtol", repr(tol[0]), "--atol", repr(tol[1])]
            if equal_nan:
                cmd.append("--equal-nan")
            p = subprocess.run(cmd, capture_output=True, text=True)
            got = p.stdout[:-1] if p.stdout.endswith("\n") else p.stdout
            ok = (want is None and p.returncode == 0 and got == "") or \
                 (want is not None and p.returncode == 1 and got == want)
            if ok:
                agree += 1
                continue
            disagree += 1
            if disagree <= 10:
                print(f"--- case {i}: {ta.dtype} vs {te.dtype} shape {tuple(ta.shape)} tol {tol} equal_nan {equal_nan}")
                print(f"actual   {ta.flatten().tolist()[:12]}\nexpected {te.flatten().tolist()[:12]}")
                print(f"torch:\n{want}\nprecprobe (exit {p.returncode}):\n{got}{p.stderr}")
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                torch.save({"a": ta, "e": te, "tol": tol, "equal_nan": equal_nan},
                           os.path.join(args.keep, f"case{i}.pt"))
    print(f"torch_parity: torch {torch.__version__}: {agree} agree, {disagree} disagree of {args.n} "
          f"({not_close} not close per torch)")
    sys.exit(1 if disagree else 0)


if __name__ == "__main__":
    main()
