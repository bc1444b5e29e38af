#!/usr/bin/env python3
"""make_fixture.py — writes probe.bin, the fixture tests/test_sm90_fp8_mma.c checks the Hopper FP8
accumulation model against, from the npz that tools/probe_fp8_accum.py wrote on a GPU.

usage: python3 make_fixture.py PROBE_NPZ [OUT]   (OUT defaults to probe.bin beside this script)

probe.bin: a text header (lines, the last one "end"), then little-endian binary:
  section 1, "dots N": N constructed dot products, each
      int32 K, int32 nruns, uint32 out_slow, uint32 out_fast (fp32 bits from the GPU),
      nruns x (int32 first, int32 count, uint8 a, uint8 b, uint8 0, uint8 0): positions
      first .. first+count-1 hold e4m3 codes a and b; every other position holds 0x00, 0x00.
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


def main():
    src = sys.argv[1]
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.bin")
    d = np.load(src)
    h = json.loads(str(d["header_json"]))
    dots, blocks, names = [], [], []
    for exp in h["experiments"]:
        nm = exp["name"]
        a, b = d[nm + "__a"], d[nm + "__b"]
        slow, fast = d[nm + "__out_slow"], d[nm + "__out_fast"]
        if nm.startswith("rand"):
            blocks.append((a[:RAND_ROWS], b[:RAND_COLS], slow[:RAND_ROWS, :RAND_COLS], fast[:RAND_ROWS, :RAND_COLS]))
            names.append(f"{nm} (rows 0-{RAND_ROWS - 1}, columns 0-{RAND_COLS - 1})")
            continue
        for i in range(a.shape[0]):
            dots.append((a.shape[1], runs(a[i], b[i]), int(slow[i]), int(fast[i])))
        names.append(f"{nm} ({a.shape[0]} x K={a.shape[1]})")
    with open(dst, "wb") as f:
        head = ["precprobe sm90-fp8 fixture v1",
                f"# device: {h.get('device', '?')}; torch {h.get('torch', '?')}; cublasLt {h.get('cublas', {}).get('cublasLt', '?')}",
                "# experiments: " + "; ".join(names),
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
    print(f"wrote {dst}: {len(dots)} dot products, {len(blocks)} blocks, {os.path.getsize(dst)} bytes")


if __name__ == "__main__":
    main()
