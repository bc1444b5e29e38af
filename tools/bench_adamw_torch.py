"""bench_adamw_torch.py — the anchor of the AdamW lines of `make bench`: torch.optim.AdamW on the
CPU at issue 17's size, timed in the same run as precprobe's emulation and reference
(tools/bench_adamw_ref.c runs it through PRECPROBE_PYTHON).

Run: $PRECPROBE_PYTHON tools/bench_adamw_torch.py [n] [T] [threads]
Prints one line per configuration, `name wall_seconds cpu_seconds` (CPU time of the process: the
machine may be shared), or `absent reason`; exit 0 either way.
"""
import os
import sys
import time

# Idle OpenMP workers sleep instead of spinning: on a shared machine a spinning worker's CPU time
# would be charged to torch and flatter every ratio against it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 65536
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    try:
        import torch
    except ImportError as e:
        print(f"absent torch not importable ({e})")
        return 0
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(42)
    # fp32-fused-randn: the fused step on a gradient drawn by torch.randn every step (into one
    # buffer), the like-for-like anchor of the emulation's synthetic source (a normal per
    # element-step, then the update); the others reuse one gradient.
    for name, dtype, extra, randn in (("fp32", torch.float32, {"foreach": True}, False),
                                      ("fp32-fused", torch.float32, {"fused": True}, False),
                                      ("fp32-fused-randn", torch.float32, {"fused": True}, True),
                                      ("bf16", torch.bfloat16, {"foreach": True}, False)):
        p = torch.nn.Parameter(torch.randn(n, generator=gen).to(dtype))
        g = (torch.randn(n, generator=gen) * 1e-3).to(dtype)
        try:
            opt = torch.optim.AdamW([p], lr=1e-5, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, **extra)
            p.grad = g
            opt.step()  # warm-up: state allocation, dispatch
        except (RuntimeError, TypeError, ValueError) as e:
            print(f"absent {name}: {str(e).splitlines()[0]}")
            continue
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(steps):
            if randn:
                torch.randn(n, generator=gen, out=g)
            p.grad = g
            opt.step()
        print(f"{name} {time.perf_counter() - t0:.6f} {time.process_time() - c0:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
