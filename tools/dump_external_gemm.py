#!/usr/bin/env python3
"""dump_external_gemm.py — how a PyTorch user dumps their own kernel's inputs and outputs for
precprobe to judge; writes cases/external/gemm_dump.safetensors for cases/external-gemm.toml.

usage: PYTHON tools/dump_external_gemm.py   (PYTHON with torch and safetensors installed)

The workflow, in your own training code:
  1. take the inputs your kernel saw (already in their storage dtype, e.g. fp16/bf16);
  2. run your kernel (here torch.baddbmm on the CPU, alpha = 1/sqrt(k), as Megatron's
     attention does for Q·Kᵀ) and keep its output;
  3. save_file({"a": a, "b": b, "c": out}, "dump.safetensors") — bf16/fp16 stay as they are;
  4. write a ten-line case naming these tensors (cases/external-gemm.toml) and run
     `precprobe run cases/external-gemm.toml`: your output is compared with the exact product
     and with precprobe's emulated variants on the same inputs.
"""
import math
import os

import torch
from safetensors.torch import save_file

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cases", "external", "gemm_dump.safetensors")


def main():
    torch.manual_seed(0)
    batch, m, n, k = 2, 16, 16, 64
    a = (torch.randn(batch, m, k) * 2).to(torch.float16)
    b = (torch.randn(batch, k, n) * 2).to(torch.float16)
    out = torch.empty(batch, m, n, dtype=torch.float16)
    c = torch.baddbmm(out, a, b, beta=0.0, alpha=1.0 / math.sqrt(k))
    save_file({"a": a.contiguous(), "b": b.contiguous(), "c": c.contiguous()}, OUT,
              metadata={"made_by": "tools/dump_external_gemm.py", "torch": torch.__version__,
                        "kernel": "torch.baddbmm on cpu, fp16, alpha=1/sqrt(k)"})
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
