#!/usr/bin/env python3
"""dump_external_attention.py — how a PyTorch user dumps their own attention kernel's inputs,
outputs and gradients for precprobe to judge; writes cases/external/attn_dump.safetensors for
cases/external-attention.toml.

usage: PYTHON tools/dump_external_attention.py   (PYTHON with torch and safetensors installed)

The workflow, in your own training code:
  1. take q, k, v your kernel saw, in precprobe's layout [b, s, h, d] and their storage dtype
     (bf16 here), and the upstream gradient dout of the output;
  2. run your kernel forward and backward (here torch's scaled_dot_product_attention on the CPU,
     causal, in bf16: substitute your FlashAttention / cuDNN / TransformerEngine call) and keep
     out, dq, dk, dv (lse too, if your kernel exposes it: precprobe compares only what you give);
  3. save_file({...}, "dump.safetensors") — bf16/fp16 stay as they are;
  4. name them in a ten-line case (cases/external-attention.toml) and run precprobe: your kernel is
     compared with the exact attention and with precprobe's emulated variants on the same inputs.
"""
import os

import torch
from safetensors.torch import save_file

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cases", "external", "attn_dump.safetensors")


def main():
    torch.manual_seed(0)
    b, s, h, d = 1, 64, 2, 32
    q, k, v, dout = (torch.randn(b, s, h, d).to(torch.bfloat16) for _ in range(4))
    qt, kt, vt = (x.clone().transpose(1, 2).requires_grad_(True) for x in (q, k, v))  # SDPA: [b, h, s, d]
    out = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=True)
    out.backward(dout.transpose(1, 2))
    back = lambda x: x.transpose(1, 2).contiguous()  # noqa: E731
    save_file({"q": q.contiguous(), "k": k.contiguous(), "v": v.contiguous(), "dout": dout.contiguous(),
               "out": back(out.detach()), "dq": back(qt.grad), "dk": back(kt.grad), "dv": back(vt.grad)}, OUT,
              metadata={"made_by": "tools/dump_external_attention.py", "torch": torch.__version__,
                        "kernel": "torch.nn.functional.scaled_dot_product_attention on cpu, bf16, causal"})
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
