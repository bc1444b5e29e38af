#!/usr/bin/env python3
"""cast_peer.py — checks `precprobe cast` against ml_dtypes, value by value and code by code.

usage: PYTHON tools/cast_peer.py [--precprobe bin/precprobe]
  PYTHON is any interpreter with numpy and ml_dtypes (e.g. a venv with both installed); prints
  "skipped" and exits 0 where they are not importable.

Checks, on float32 inputs with outliers, ties and boundaries (no NaN: ml_dtypes' e2m1 codes NaN
as -0, precprobe as +-max, both documented):
  1. --to e2m1 --packed: two codes per byte, element 2j in the low nibble (torch's
     float4_e2m1fn_x2), the codes those of ml_dtypes.float4_e2m1fn;
  2. --scaling nvfp4: g = fp32(amax / 2688), per 16 along the last axis s = e4m3(min(bamax/(6g),
     448)), P = e2m1(V / (s g)); the scales' e4m3 codes, the global scale, the packed element
     codes and the dequantised values fp32(P s g), each equal to ml_dtypes' restatement;
  3. --scaling tensor-current --to e4m3: X = fp32(amax / 448), P = e4m3(clip(fp32(V / X), 448)).
Exits 1 on any difference.
"""
import argparse
import os
import subprocess
import sys
import tempfile

try:
    import ml_dtypes
    import numpy as np
except ImportError as exc:
    print(f"cast_peer: skipped ({exc})")
    sys.exit(0)


def inputs():
    rng = np.random.default_rng(20)
    x = rng.standard_normal((6, 45)).astype(np.float32)
    x[1, 7] = 3e4  # an outlier block
    x[2, :16] = 0.0  # an all-zero block: s = 0
    x[3, :] *= np.float32(1e-30)  # tiny row: subnormal-range quotients
    e2m1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    mids = [(a + b) / 2 for a, b in zip(e2m1, e2m1[1:])] + [5.0, 7.0, 100.0, -0.0, -0.25, -0.75, -2.5]
    x[4, : len(mids)] = mids  # ties of e2m1 (unscaled cast)
    x[5, :3] = [1e38, -1e38, 1e-45]  # saturation, and the smallest subnormal
    return x


def pack(codes):
    rows, cols = codes.shape
    if cols % 2:
        codes = np.concatenate([codes, np.zeros((rows, 1), np.uint8)], axis=1)
    return (codes[:, 0::2] & 0xF) | ((codes[:, 1::2] & 0xF) << 4)


def run(pp, *args):
    r = subprocess.run([pp, "cast", *args], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"cast_peer: precprobe cast {' '.join(args)} failed: {r.stderr.strip()}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--precprobe", default=os.environ.get("PRECPROBE_BIN", "bin/precprobe"))
    a = ap.parse_args()
    x = inputs()
    bad = 0

    def check(what, got, want):
        nonlocal bad
        if got.shape != want.shape or not np.array_equal(got.view(np.uint8) if got.dtype == np.uint8 else got, want,
                                                         equal_nan=got.dtype != np.uint8):
            bad += 1
            diff = np.argwhere(got != want) if got.shape == want.shape else "shape"
            print(f"FAIL {what}: {got.shape} vs {want.shape}; first differences {diff[:5] if len(diff) else diff}")
        else:
            print(f"ok   {what} ({want.size} values)")

    with tempfile.TemporaryDirectory() as d:
        p = lambda n: os.path.join(d, n)
        np.save(p("x.npy"), x)
        # 1. unscaled e2m1, nibble-packed
        run(a.precprobe, p("x.npy"), "--to", "e2m1", "--packed", "-o", p("c.npy"))
        check("e2m1 packed codes", np.load(p("c.npy")), pack(x.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)))
        # 2. nvfp4
        run(a.precprobe, p("x.npy"), "--to", "e2m1", "--scaling", "nvfp4", "--packed", "--scales", p("s.npy"),
            "--global-scale", p("g.npy"), "-o", p("q.npy"))
        run(a.precprobe, p("x.npy"), "--to", "e2m1", "--scaling", "nvfp4", "-o", p("v.npy"))
        g = np.float32(np.float64(np.abs(x).max()) / 2688.0)
        xb = np.pad(x.astype(np.float64), ((0, 0), (0, 3)))  # 45 -> 48: three blocks of 16
        bamax = np.abs(xb.reshape(6, 3, 16)).max(axis=2)
        s = np.minimum(bamax / (6.0 * np.float64(g)), 448.0).astype(ml_dtypes.float8_e4m3fn)
        sd = np.repeat(s.astype(np.float64), 16, axis=1)[:, :45]
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(sd == 0, 0.0, x / (sd * np.float64(g)))
        P = q.astype(np.float32).astype(ml_dtypes.float4_e2m1fn)
        check("nvfp4 global scale", np.load(p("g.npy")).reshape(()), np.asarray(g))
        check("nvfp4 e4m3 block scale codes", np.load(p("s.npy")), s.view(np.uint8))
        check("nvfp4 packed e2m1 codes", np.load(p("q.npy")), pack(P.view(np.uint8)))
        check("nvfp4 dequantised values", np.load(p("v.npy")),
              (P.astype(np.float64) * sd * np.float64(g)).astype(np.float32))
        # 3. tensor-current e4m3
        run(a.precprobe, p("x.npy"), "--to", "e4m3", "--scaling", "tensor-current", "-o", p("t.npy"),
            "--global-scale", p("tx.npy"))
        X = np.float32(np.float64(np.abs(x).max()) / 448.0)
        Pt = np.clip((x.astype(np.float64) / np.float64(X)).astype(np.float32), -448, 448).astype(ml_dtypes.float8_e4m3fn)
        check("tensor-current scale", np.load(p("tx.npy")).reshape(()), np.asarray(X))
        check("tensor-current values", np.load(p("t.npy")),
              (Pt.astype(np.float64) * np.float64(X)).astype(np.float32))
    print(f"cast_peer: ml_dtypes {ml_dtypes.__version__}: {'all agree' if not bad else f'{bad} differ'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
