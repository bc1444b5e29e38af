#!/usr/bin/env python3
"""make_fixture.py — writes the fixtures tests/test_sm90_fp8_mma.c checks the Hopper FP8
accumulation model against, from the npz that tools/probe_fp8_accum.py (e4m3 x e4m3) or
tools/probe_fp8_accum_e5m2.py (e4m3 x e5m2, e5m2 x e4m3) wrote on a GPU.

usage: python3 make_fixture.py PROBE_NPZ [OUT]
  OUT defaults to probe.bin beside this script; an npz holding several format pairs writes one
  file per pair, OUT with "_FAxFB" before its extension (probe_e4m3xe5m2.bin, ...).

A fixture: a text header (lines, the last one "end"; "formats FA FB" names the codes' formats,
e4m3 or e5m2, e4m3 e4m3 where absent), then little-endian binary:
  section 1, "dots N": N constructed dot products, each
      int32 K, int32 nruns, uint32 out_slow, uint32 out_fast (fp32 bits from the GPU),
      nruns x (int32 first, int32 count, uint8 a, uint8 b, uint8 0, uint8 0): positions
      first .. first+count-1 hold codes a and b; every other position holds 0x00, 0x00.
  section 2, "blocks N": N slices of the random GEMMs, each
      int32 K, int32 M, int32 N, then M*K uint8 codes of A's rows, N*K of B's columns (B^T rows),
      M*N uint32 out_slow, M*N uint32 out_fast (row-major).
Every constructed experiment is kept whole; of each random 256x256x4096 GEMM the first 8 rows
and 16 columns (the model was checked on all 65536 outputs when it was fitted).
"""
import json
import os
import struct
import sys

import numpy as np

RAND_ROWS, RAND_COLS = 8, 16


def runs(a, b):
    out, k = [], 0
    n = len(a)
    while k < n:
        if a[k] == 0 and b[k] == 0:
            k += 1
            continue
        j = k
        while j + 1 < n and a[j + 1] == a[k] and b[j + 1] == b[k]:
            j += 1
        out.append((k, j - k + 1, int(a[k]), int(b[k])))
        k = j + 1
    return out


FORMAT = {0: "e4m3", 1: "e5m2"}


def collect(d, h, pair):
    """The dot products, random blocks and experiment names of one format pair."""
    dots, blocks, names = [], [], []
    for exp in h["experiments"]:
        nm = exp["name"]
        if (int(d[nm + "__fa"][0]), int(d[nm + "__fb"][0])) != pair if nm + "__fa" in d else pair != (0, 0):
            continue
        a, b = d[nm + "__a"], d[nm + "__b"]
        slow, fast = d[nm + "__out_slow"], d[nm + "__out_fast"]
        if nm.startswith("rand"):
            blocks.append((a[:RAND_ROWS], b[:RAND_COLS], slow[:RAND_ROWS, :RAND_COLS], fast[:RAND_ROWS, :RAND_COLS]))
            names.append(f"{nm} (rows 0-{RAND_ROWS - 1}, columns 0-{RAND_COLS - 1})")
            continue
        for i in range(a.shape[0]):
            dots.append((a.shape[1], runs(a[i], b[i]), int(slow[i]), int(fast[i])))
        names.append(f"{nm} ({a.shape[0]} x K={a.shape[1]})")
    return dots, blocks, names


def write(dst, h, pair, dots, blocks, names):
    with open(dst, "wb") as f:
        head = ["precprobe sm90-fp8 fixture v1",
                f"# device: {h.get('device', '?')}; torch {h.get('torch', '?')}; cublasLt {h.get('cublas', {}).get('cublasLt', '?')}",
                "# experiments: " + "; ".join(names),
                f"formats {FORMAT[pair[0]]} {FORMAT[pair[1]]}",
                f"dots {len(dots)}", f"blocks {len(blocks)}", "end"]
        f.write(("\n".join(head) + "\n").encode())
        for K, rr, s, fa in dots:
            f.write(struct.pack("<iiII", K, len(rr), s, fa))
            for first, count, ca, cb in rr:
                f.write(struct.pack("<iiBBBB", first, count, ca, cb, 0, 0))
        for a, b, s, fa in blocks:
            f.write(struct.pack("<iii", a.shape[1], a.shape[0], b.shape[0]))
            f.write(np.ascontiguousarray(a, dtype=np.uint8).tobytes())
            f.write(np.ascontiguousarray(b, dtype=np.uint8).tobytes())
            f.write(np.ascontiguousarray(s, dtype="<u4").tobytes())
            f.write(np.ascontiguousarray(fa, dtype="<u4").tobytes())
    print(f"wrote {dst}: {FORMAT[pair[0]]} x {FORMAT[pair[1]]}, {len(dots)} dot products, {len(blocks)} blocks,"
          f" {os.path.getsize(dst)} bytes")


def main():
    src = sys.argv[1]
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.bin")
    d = np.load(src)
    h = json.loads(str(d["header_json"]))
    pairs = sorted({(int(d[e["name"] + "__fa"][0]), int(d[e["name"] + "__fb"][0])) if e["name"] + "__fa" in d
                    else (0, 0) for e in h["experiments"]})
    for pair in pairs:
        out = dst
        if len(pairs) > 1:
            stem, ext = os.path.splitext(dst)
            out = f"{stem}_{FORMAT[pair[0]]}x{FORMAT[pair[1]]}{ext}"
        write(out, h, pair, *collect(d, h, pair))


if __name__ == "__main__":
    main()
