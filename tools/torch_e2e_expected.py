#!/usr/bin/env python3
"""torch_e2e_expected.py — writes tests/e2e/expected/NAME.out for the message cases of the
end-to-end suite by running torch.testing.assert_close itself on the same stored tensors.

usage: PYTHON tools/torch_e2e_expected.py
  Run it once with a recent torch (cases without --torch-version, or with a 2.x version the
  interpreter's torch shares semantics with) and once with Debian's python3-torch 1.13 (cases
  with --torch-version 1.13). Cases whose torch version the interpreter cannot speak for, and
  cases with --stats (precprobe's own lines), are left alone. Needs numpy and h5py.
"""
import json
import os
import struct
import sys

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def load(spec):
    if ".safetensors" in spec:
        path, _, name = spec.partition(":")
        with open(os.path.join(ROOT, path), "rb") as f:
            raw = f.read()
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8 : 8 + n])
        meta = header[name]
        b, e = meta["data_offsets"]
        data = raw[8 + n + b : 8 + n + e]
        assert meta["dtype"] == "BF16"
        bits = np.frombuffer(data, dtype="<i2").copy()
        return torch.from_numpy(bits).view(torch.bfloat16).reshape(meta["shape"])
    if ".h5:" in spec:
        import h5py
        path, _, ds = spec.partition(":")
        with h5py.File(os.path.join(ROOT, path), "r") as f:
            return torch.from_numpy(np.ascontiguousarray(f[ds][()]))
    return torch.from_numpy(np.load(os.path.join(ROOT, spec)))


def main():
    mine = "%d.%d" % tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
    written = 0
    for line in open(os.path.join(ROOT, "tests/e2e/cases.txt")):
        if line.startswith("#") or not line.strip():
            continue
        name, want, args = (x.strip() for x in line.split("|"))
        words = args.split()
        if words[0] != "compare" or "--stats" in words or "--help" in words or int(want) == 2:
            continue
        version = words[words.index("--torch-version") + 1] if "--torch-version" in words else None
        if (version or "2.15") != mine and not (version is None and mine.startswith("2.")):
            continue
        operands = [w for w in words[1:] if not w.startswith("--")]
        opts = {w: words[i + 2] for i, w in enumerate(words[1:]) if w.startswith("--") and
                w in ("--rtol", "--atol", "--actual-dtype", "--torch-version")}
        a, e = load(operands[0]), load(operands[1])
        if opts.get("--actual-dtype") == "bf16":
            a = a.to(torch.bfloat16)
        kw = {"check_dtype": False, "equal_nan": "--equal-nan" in words}
        if "--rtol" in opts:
            kw["rtol"], kw["atol"] = float(opts["--rtol"]), float(opts["--atol"])
        try:
            torch.testing.assert_close(a, e, **kw)
            text = ""
        except AssertionError as exc:
            text = str(exc) + "\n"
        if not text and "--quiet" not in words:
            continue  # close: precprobe's one line "close: ..." is its own, expected written by hand
        with open(os.path.join(ROOT, "tests/e2e/expected", name + ".out"), "w") as f:
            f.write(text)
        written += 1
        print(f"{name}: torch {torch.__version__}: {'close' if not text else text.splitlines()[2]}")
    print(f"wrote {written} expected outputs", file=sys.stderr)


if __name__ == "__main__":
    main()
