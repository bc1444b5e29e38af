#!/usr/bin/env python3
"""make_pt_nested_fixtures.py — torch.save files of nested dicts of tensors for tests/test_pt.c
(and the fuzz_pt corpus): a state_dict-like {"layer": {"weight", "bias"}} with an OrderedDict
inside, three levels deep, and a nested non-tensor. The values are small exact numbers so the
test checks them by hand.  Run: PYTHON tools/make_pt_nested_fixtures.py (a python with torch)."""
import collections
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "pt")


def main():
    w = torch.arange(6, dtype=torch.float32).reshape(2, 3) / 4      # 0, .25, ..., 1.25
    b = torch.tensor([-1.0, 0.5], dtype=torch.bfloat16)
    head = collections.OrderedDict(weight=torch.tensor([3.0, -0.0], dtype=torch.float16))
    torch.save({"layer": {"weight": w, "bias": b}, "head": head, "scale": torch.tensor(2.0)},
               os.path.join(OUT, "nested_dicts.pt"))
    torch.save(collections.OrderedDict(a=collections.OrderedDict(b={"c": w.t()})),
               os.path.join(OUT, "nested_deep.pt"))
    torch.save({"opt": {"step": 3, "p": b}}, os.path.join(OUT, "nested_mixed.pt"))


if __name__ == "__main__":
    main()
