#!/usr/bin/env python3
"""probe_fp8_accum.py — measures how a GPU's FP8 GEMM accumulates (torch._scaled_mm, e4m3 x e4m3
-> fp32, scales 1, use_fast_accum False and True) and writes every input and output bit pattern
so that an accumulator model can be fitted and tested later, off the GPU.

usage: PYTHON tools/probe_fp8_accum.py [OUT_FILE] [--dry-run]
  PYTHON: torch >= 2.1 built with CUDA, and numpy. Needs an sm_89+ GPU (Ada, Hopper, Blackwell);
  prints "SKIP: ..." and exits 0 elsewhere. OUT_FILE defaults to $OUT/fp8_accum_probe.npz (or
  ./fp8_accum_probe.npz without $OUT). --dry-run builds the inputs, the exact sums and the
  binary32-chain model without a GPU and writes them (header "dry_run": true): the CPU half,
  to check this program where no GPU is. Takes well under 60 s on an H200.

Why: precprobe emulates FP8 GEMMs (kernels/gemm_scaled_thread.h, kernels/attention_fp8.h) with a
binary32 fma chain. Hopper's FP8 tensor cores are reported to keep fewer bits: the DeepSeek-V3
technical report (arXiv 2412.19437, section 3.3.2 "Increasing Accumulation Precision") measured
FP8 GEMM accumulation on H800 as retaining about 14 bits and promotes partial sums to fp32 CUDA-core
registers every N_C = 128 elements; CUTLASS's Hopper FP8 mainloop does the same "2xAcc" promotion
every `mma_promotion_interval` MMAs (include/cutlass/gemm/collective/fp8_accumulation.hpp,
GmmaFP8Accumulation::promote_if_needed; default 4 in the sm90 FP8 collectives' Arguments) unless
the FastAccum kernel schedule is chosen; cuBLASLt exposes the same choice as
CUBLASLT_MATMUL_DESC_FAST_ACCUM ("intermediate results will not periodically be promoted to a
higher precision"), which torch._scaled_mm's use_fast_accum sets. Khattak & Mikaitis, "Accurate
Models of NVIDIA Tensor Cores" (arXiv 2512.07004, 2025) model H100's FP8 inner products bit for
bit; Fasi, Higham, Mikaitis & Pranesh, "Numerical behavior of NVIDIA tensor cores" (PeerJ CS 7:e330,
2021) designed the kind of test vectors used here (alignment to the largest exponent, truncation,
normalisation, order) for V100/T4/A100. cuBLAS's own kernels and their promotion interval are
closed: this probe measures them as torch calls them.

Measured before this program existed (H200, torch 2.11.0+cu130, cuBLASLt 130100, a 25-line check
of the same 2^12 + 2^(12-k) and scan inputs): 2^12 + 2^(12-k) in one GEMM keeps the small term
for k <= 13 only (a 14-bit significand: DeepSeek's "about 14 bits"), fast accumulation or not,
K = 32 and 128; at K = 1024 with the small term last, use_fast_accum=False keeps it through
k = 23 (binary32) and True through 13; in a 256x256x1024 GEMM with 2^12 at k = 0, 2^-8 at p
survives without fast accumulation exactly for p >= 128 (a promotion every 128 elements of K), and
never with it. This program repeats those measurements with every bit kept.

What is exact here: every e4m3 value is an integer multiple of 2^-9 (|v| <= 448), so every
product is an integer multiple of 2^-18 and every sum below is an int64 count of 2^-18 units
("exact_units"), exactly; float64 holds it exactly too (|sum| < 2^35 for K <= 4096).

The file (numpy .npz, no pickles): "header_json" (a str: versions, device, the list of
experiments with their descriptions and parameters) and, per experiment X:
  X__a, X__b        uint8 [n, K]  e4m3fn bit patterns of the two vectors of each dot product
                    (random sets: X__a [M, K] = A, X__b [N, K] = B transposed, C = A B^T)
  X__exact_units    int64 [n] (random sets [M, N]): the exact dot product in units of 2^-18
  X__out_slow, X__out_fast  uint32: fp32 bit patterns torch returned (use_fast_accum False/True)
  X__out_slow_rep, X__out_fast_rep  the same call again (random sets only: determinism)
  X__fp32_chain     uint32: sequential binary32 sum in k order (what precprobe models today)
  X__<param>        int64 [n]: the parameters each row was built from (k, pos, ...)
The dot products are run 16 (or 256) at a time as one GEMM whose diagonal is kept: the shape
torch passes to cuBLAS decides its kernel, so each experiment records its batch ("gemm_rows").
"""
import json
import math
import os
import platform
import sys
import time

try:
    import numpy as np
except ImportError as exc:
    print(f"SKIP: probe_fp8_accum needs numpy ({exc})")
    sys.exit(0)

UNIT_EXP = -18  # exact sums count units of 2^-18 (e4m3's smallest subnormal is 2^-9)
DEVICE = "cuda"  # a module constant so that a CPU test can run the GPU half with a stand-in
L_EXP = 12      # the large product is 2^12 = 2^6 * 2^6, so a small one 2^(12-k) reaches k = 30


# ---- e4m3fn (OCP FP8: bias 7, no infinities, S.1111.111 = NaN, max 448) ----

def e4m3_decode_table():
    """Value of each of the 256 codes as float64 (NaN for 0x7f, 0xff)."""
    vals = np.empty(256)
    for code in range(256):
        s, e, m = code >> 7, (code >> 3) & 15, code & 7
        if e == 15 and m == 7:
            v = math.nan
        elif e == 0:
            v = m * 2.0 ** -9
        else:
            v = (1 + m / 8) * 2.0 ** (e - 7)
        vals[code] = -v if s else v
    return vals


E4M3 = e4m3_decode_table()
E4M3_UNITS = np.where(np.isnan(E4M3), 0, E4M3 * 2 ** 9).astype(np.int64)  # value in 2^-9 units
_FINITE_CODES = np.array([c for c in range(256) if not math.isnan(E4M3[c])
                          and not (E4M3[c] == 0 and c == 0x80)])
_ORDER = np.argsort(E4M3[_FINITE_CODES], kind="stable")
_SORTED_VALS = E4M3[_FINITE_CODES][_ORDER]
_SORTED_CODES = _FINITE_CODES[_ORDER]


def e4m3_exact(x):
    """Code of a value that e4m3 holds exactly (the constructed experiments); raises otherwise."""
    x = np.asarray(x, dtype=np.float64)
    idx = np.clip(np.searchsorted(_SORTED_VALS, x), 0, len(_SORTED_VALS) - 1)
    codes = _SORTED_CODES[idx].astype(np.uint8)
    codes = np.where((x == 0) & np.signbit(x), np.uint8(0x80), codes)
    if not np.array_equal(E4M3[codes], x):
        raise ValueError("a constructed value is not an e4m3 value")
    return codes


def e4m3_nearest(x):
    """Code nearest to each value (ties to the lower one: only for random data, deterministic)."""
    x = np.clip(np.asarray(x, dtype=np.float64), -448.0, 448.0)
    hi = np.clip(np.searchsorted(_SORTED_VALS, x), 1, len(_SORTED_VALS) - 1)
    lo = hi - 1
    pick = np.where(np.abs(_SORTED_VALS[hi] - x) < np.abs(x - _SORTED_VALS[lo]), hi, lo)
    return _SORTED_CODES[pick].astype(np.uint8)


def pow2_pair(e):
    """Two e4m3 powers of two whose product is 2^e, for -18 <= e <= 16."""
    ea = -((-e) // 2)  # ceil(e / 2)
    return 2.0 ** ea, 2.0 ** (e - ea)


# ---- exact sums and the binary32 model ----

def exact_units(a, b):
    """Exact dot products of rows of a and b (codes) in 2^-18 units; int64 cannot overflow
    (|product| <= 448^2 * 2^18 < 2^36, K <= 4096 terms)."""
    return np.einsum("nk,nk->n", E4M3_UNITS[a], E4M3_UNITS[b])


def exact_units_matrix(a, bt):
    """A B^T exactly, in 2^-18 units: float64 BLAS is exact here since every partial sum is an
    integer below 2^53; checked against int64 on a few entries."""
    c = (E4M3_UNITS[a].astype(np.float64) @ E4M3_UNITS[bt].astype(np.float64).T)
    units = c.astype(np.int64)
    for i, j in [(0, 0), (a.shape[0] - 1, bt.shape[0] - 1), (7, 3)]:
        assert units[i, j] == int(np.dot(E4M3_UNITS[a[i]], E4M3_UNITS[bt[j]]))
    return units


def fp32_chain(a, b):
    """Binary32 sequential sum over k of the products (exact in binary32: 4-bit significands):
    fma(a, b, acc) = RN32(acc + a*b), precprobe's model. NaN inputs give NaN."""
    pa, pb = E4M3[a].astype(np.float32), E4M3[b].astype(np.float32)
    acc = np.zeros(a.shape[:-1], dtype=np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        for k in range(a.shape[-1]):
            acc = (acc + pa[..., k] * pb[..., k]).astype(np.float32)
    return acc


def fp32_chain_matrix(a, bt):
    pa, pb = E4M3[a].astype(np.float32), E4M3[bt].astype(np.float32)
    acc = np.zeros((a.shape[0], bt.shape[0]), dtype=np.float32)
    for k in range(a.shape[1]):
        acc = (acc + np.outer(pa[:, k], pb[:, k])).astype(np.float32)
    return acc


def units_to_f64(u):
    return np.asarray(u, dtype=np.float64) * 2.0 ** UNIT_EXP


def bits_lost(out, units):
    """Per element: 0 where out is the binary32 rounding of the exact sum (or both are 0), else
    floor(log2(|err| / ulp32(exact))) + 1: 1 for an error of one ulp, 2 for 2-3 ulps, ...;
    -1 where out is NaN/Inf (and the exact sum is finite)."""
    out = np.asarray(out, dtype=np.float64)
    ex = units_to_f64(units)
    rounded = ex.astype(np.float32).astype(np.float64)
    err = np.abs(out - ex)
    mag = np.where(ex == 0, 2.0 ** -149, np.abs(ex))
    ulp = np.exp2(np.floor(np.log2(mag)) - 23)
    with np.errstate(divide="ignore", invalid="ignore"):
        lost = np.floor(np.log2(err / ulp)) + 1
    lost = np.where((out == rounded) | (err == 0), 0, np.maximum(lost, 1))
    return np.where(np.isfinite(out), lost, -1).astype(np.int64)


# ---- the experiments: lists of dot products (a, b), each with its parameters ----

class Experiment:
    def __init__(self, name, why, K, gemm_rows=16):
        self.name, self.why, self.K, self.gemm_rows = name, why, K, gemm_rows
        self.a, self.b, self.params = [], [], {}

    def add(self, terms, **params):
        """terms: {position: (value_a, value_b)}, every other position 0."""
        a, b = np.zeros(self.K), np.zeros(self.K)
        for pos, (va, vb) in terms.items():
            a[pos], b[pos] = va, vb
        self.a.append(e4m3_exact(a))
        self.b.append(e4m3_exact(b))
        for key, val in params.items():
            self.params.setdefault(key, []).append(val)

    def arrays(self):
        return np.stack(self.a), np.stack(self.b)


def big(sign=1):
    x, y = pow2_pair(L_EXP)
    return (sign * x, y)


def small(k, sign=1, mant=1.0):
    """±mant 2^(12-k) as a product; mant != 1 needs its factor normal (>= 2^-6)."""
    e = L_EXP - k
    x, y = pow2_pair(e)
    if mant != 1.0 and x < 2.0 ** -6:
        x, y = 2.0 ** -6, 2.0 ** (e + 6)
    return (sign * mant * x, y)


def build_experiments():
    exps = []
    # 1. L + s with s = 2^-k L: the largest k whose s survives is the accumulator's precision
    #    (binary32: 23, plus RN ties). The large term first, in the middle or last, because an
    #    accumulator that aligns to the running sum loses s where one that aligns to the largest
    #    exponent of a whole chunk (Fasi et al.'s multi-term adder) loses it everywhere; several
    #    K, because a chunk (16 or 32 for FP8 wgmma) and a promotion interval (128?) bound it.
    for K in (16, 32, 64, 128, 4096):
        e = Experiment(f"tiny_K{K}", "2^12 + 2^(12-k) (and minus), large term first/middle/last;"
                       " pos 0: large at 0, small at K-1; 1: small at 0, large at K/2; 2: small"
                       " at 0, large at K-1", K)
        spots = {0: (0, K - 1), 1: (K // 2, 0), 2: (K - 1, 0)}
        for pos, (pl, ps) in spots.items():
            for sign in (1, -1):
                for k in range(1, 31):
                    e.add({pl: big(), ps: small(k, sign)}, k=k, pos=pos, sign=sign)
        exps.append(e)
    # 2. Rounding of the dropped part: s = ±m 2^-k L with m in {1.125 .. 1.875} puts bits just
    #    below the kept ones: truncation (toward zero, or toward -inf in two's complement) and
    #    round-to-nearest return different neighbours, and the sign of L vs s tells which.
    e = Experiment("round_K32", "±2^12 + ±m 2^(12-k), m = 1.125..1.875, large first", 32)
    for sl in (1, -1):
        for ss in (1, -1):
            for m in (1.125, 1.25, 1.5, 1.75, 1.875):
                for k in range(6, 27):
                    e.add({0: big(sl), 1: small(k, ss, m)}, k=k, sign_l=sl, sign_s=ss,
                          m8=int(m * 8))
    exps.append(e)
    # 3. Cancellation: x + (-x) + s = s exactly. An adder that aligns all terms of a chunk to the
    #    largest exponent before adding loses s even though the result is s; across chunks or
    #    promotion blocks it does not. Patterns: positions of (L, -L, s).
    patterns = {32: [(0, 1, 2), (0, 2, 1), (1, 2, 0), (0, 31, 16)],
                128: [(0, 40, 80), (0, 64, 127), (0, 127, 64), (0, 1, 127)]}
    for K, pats in patterns.items():
        e = Experiment(f"cancel_K{K}", "L at p_l, -L at p_neg, 2^-k L at p_s; exact = 2^-k L",
                       K)
        for pi, (pl, pn, ps) in enumerate(pats):
            for k in range(1, 31):
                e.add({pl: big(), pn: big(-1), ps: small(k)}, k=k, pattern=pi, p_l=pl,
                      p_neg=pn, p_s=ps)
        exps.append(e)
    # 4. Swamping: L then K-1 copies of 2^-k L (and the copies first, L last). A per-term
    #    truncation loses every copy; a chunk sum of copies before alignment keeps them; a
    #    promotion every N elements keeps those summed apart from L.
    for K in (128, 4096):
        e = Experiment(f"swamp_K{K}", "2^12 and K-1 copies of 2^(12-k); order 0: large first,"
                       " 1: large last", K)
        for order in (0, 1):
            for k in range(6, 31):
                terms = {i: small(k) for i in range(K)}
                terms[0 if order == 0 else K - 1] = big()
                e.add(terms, k=k, order=order)
        exps.append(e)
    # 5. Promotion scan: L at 0, s = 2^-20 L at p for every p. In binary32 s survives anywhere;
    #    a short accumulator loses it where it shares a promotion block (or split-K slice) with L
    #    and keeps it elsewhere, so the set of p where it survives maps the block boundaries.
    #    Run as 16x16 and as 256x256 GEMMs: cuBLAS chooses its kernel (and split-K) by shape.
    #    With L at 300 as well: are the blocks aligned to k = 0 or to where L is?
    for rows, at in ((16, 0), (256, 0), (256, 300)):
        e = Experiment(f"scan_K1024_L{at}_m{rows}", f"2^12 at {at} and 2^-8 at every other p",
                       1024, rows)
        for p in range(1024):
            if p != at:
                e.add({at: big(), p: small(20)}, p=p)
        exps.append(e)
    # 6. Subnormals and specials: each e4m3 subnormal times 1, 2^-9 and 448 alone (products down
    #    to 2^-18: is any flushed?), 2^12 + subnormal product, NaN input, max products, and the
    #    sign of an all -0 sum (IEEE: -0; an integer accumulator gives +0).
    e = Experiment("special_K32", "kind 0: sub x b alone; 1: 2^12 + sub x b; 2: NaN; 3: 448 x 448"
                   " x 32; 4: -0 products; 5: 16 subnormal products", 32)
    for m in range(1, 8):
        for sgn in (1, -1):
            for bv in (1.0, 2.0 ** -9, 448.0):
                e.add({5: (sgn * m * 2.0 ** -9, bv)}, kind=0, m=m, sign=sgn)
                e.add({0: big(), 5: (sgn * m * 2.0 ** -9, bv)}, kind=1, m=m, sign=sgn)
    e.add({i: (1.0, 1.0) for i in range(32)}, kind=2, m=0, sign=1)  # NaN patched in below
    e.add({i: (448.0, 448.0) for i in range(32)}, kind=3, m=0, sign=1)
    e.add({i: (448.0, -448.0) for i in range(32)}, kind=3, m=0, sign=-1)
    e.add({i: (-0.0, 1.0) for i in range(32)}, kind=4, m=0, sign=-1)
    e.add({i: (-1.0, 0.0) for i in range(32)}, kind=4, m=1, sign=-1)
    e.add({i: (m * 2.0 ** -9, 2.0 ** -9) for i, m in enumerate([1, 3, 5, 7] * 4)}, kind=5, m=0,
          sign=1)
    e.a[[i for i, k in enumerate(e.params["kind"]) if k == 2][0]][3] = 0x7F
    exps.append(e)
    return exps


def build_random(rng):
    """Two 256x256x4096 GEMMs to validate a fitted model: (normal, rows 0-7 of A and columns 0-7
    of C scaled by 2^6: outliers that dominate their chunks) and (log-uniform magnitudes 2^-9..2^8
    with random signs: every alignment distance)."""
    M = N = 256
    K = 4096
    a = rng.standard_normal((M, K))
    a[:8] *= 64.0
    bt = rng.standard_normal((N, K))
    bt[:8] *= 64.0
    normal = (e4m3_nearest(a), e4m3_nearest(bt))
    mag = lambda shape: np.exp2(rng.uniform(-9, 8, shape)) * rng.choice([-1.0, 1.0], shape)
    loguni = (e4m3_nearest(mag((M, K))), e4m3_nearest(mag((N, K))))
    return {"rand_normal_outliers": normal, "rand_loguniform": loguni}


# ---- the GPU ----

def gpu_or_skip(dry_run):
    """torch with a CUDA device of compute capability >= 8.9, or None (dry run) / exit."""
    try:
        import torch
    except ImportError as exc:
        if dry_run:
            return None
        print(f"SKIP: probe_fp8_accum needs torch with CUDA ({exc})")
        sys.exit(0)
    if dry_run:
        return None
    why = None
    if not torch.cuda.is_available():
        why = "no CUDA device"
    elif torch.cuda.get_device_capability() < (8, 9):
        why = f"{torch.cuda.get_device_name()} is sm_{''.join(map(str, torch.cuda.get_device_capability()))}, FP8 needs sm_89+"
    elif not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        why = f"torch {torch.__version__} has no _scaled_mm/float8_e4m3fn (needs >= 2.1)"
    if why:
        print(f"SKIP: probe_fp8_accum: {why}")
        sys.exit(0)
    return torch


def scaled_mm(torch, a_codes, bt_codes, fast, dtypes=None):
    """C = A B^T in fp32 through torch._scaled_mm, scales 1. Keywords work in every version:
    2.1-2.3 declare `_scaled_mm(self, mat2, *, bias, out_dtype, scale_a=None, scale_b=None,
    scale_result, use_fast_accum) -> (Tensor, Tensor amax)`, later ones scale_a and scale_b
    positional and required, one Tensor back. mat2 must be column-major: B^T contiguous, .t()."""
    dev = DEVICE
    ta, tb = dtypes or (torch.float8_e4m3fn, torch.float8_e4m3fn)  # the codes' formats (A, B)
    a = torch.from_numpy(np.ascontiguousarray(a_codes)).to(dev).view(ta)
    bt = torch.from_numpy(np.ascontiguousarray(bt_codes)).to(dev).view(tb)
    one = torch.ones((), dtype=torch.float32, device=dev)
    out = torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=one, out_dtype=torch.float32,
                           use_fast_accum=fast)
    if isinstance(out, tuple):
        out = out[0]
    return out.float().cpu().numpy()


def run_diag(torch, a, b, rows, fast, dtypes=None):
    """Dot products of rows of a and b, `rows` at a time as one rows x rows GEMM (zero rows pad
    the last batch); the diagonal is kept."""
    n, K = a.shape
    out = np.empty(n, dtype=np.float32)
    for start in range(0, n, rows):
        pa = np.zeros((rows, K), dtype=np.uint8)
        pb = np.zeros((rows, K), dtype=np.uint8)
        cnt = min(rows, n - start)
        pa[:cnt], pb[:cnt] = a[start:start + cnt], b[start:start + cnt]
        out[start:start + cnt] = np.diagonal(scaled_mm(torch, pa, pb, fast, dtypes))[:cnt]
    return out


def cublas_version():
    """cublasLtGetVersion() of the libcublasLt this process loaded (after a GEMM), or None."""
    try:
        import ctypes
        with open("/proc/self/maps") as maps:
            paths = sorted({ln.split()[-1] for ln in maps if "libcublasLt" in ln})
        if not paths:
            return None
        lib = ctypes.CDLL(paths[0])
        lib.cublasLtGetVersion.restype = ctypes.c_size_t
        return {"cublasLt": int(lib.cublasLtGetVersion()), "path": os.path.basename(paths[0])}
    except Exception as exc:  # informational only
        return {"error": str(exc)}


def header(torch, exps_meta, dry_run):
    h = {"tool": "tools/probe_fp8_accum.py", "dry_run": dry_run, "numpy": np.__version__,
         "python": platform.python_version(), "unit_exp": UNIT_EXP, "large_exp": L_EXP,
         "format": "e4m3fn x e4m3fn -> fp32, scale_a = scale_b = 1", "experiments": exps_meta}
    if torch is not None:
        h["torch"] = torch.__version__
        h["torch_cuda"] = torch.version.cuda
        prop = torch.cuda.get_device_properties(0)
        h["device"] = prop.name
        h["capability"] = f"{prop.major}.{prop.minor}"
        h["sm_count"] = prop.multi_processor_count
        h["cublas"] = cublas_version()
        try:
            h["driver"] = torch._C._cuda_getDriverVersion()
        except Exception:
            pass
    return h


# ---- the summary ----

def f32bits(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def hexfloat(x):
    return float(x).hex() if np.isfinite(x) else str(float(x))


def summarise_generic(name, res, modes):
    ex = res["exact_units"]
    print(f"  {'mode':10s} {'= RN32(exact)':>14s} {'max bits lost':>14s}  worst row")
    for mode in modes:
        out = res[mode].view(np.float32)
        lost = bits_lost(out, ex)
        worst = int(np.argmax(np.where(lost < 0, 99, lost)))
        params = ", ".join(f"{k}={v[worst]}" for k, v in res["params"].items())
        if lost.ndim == 2:
            params = "row %d, col %d" % np.unravel_index(worst, lost.shape)
        print(f"  {mode:10s} {np.sum(lost == 0):6d}/{lost.size:<7d} {int(lost.max()):14d}  "
              f"#{worst} ({params}): exact {hexfloat(units_to_f64(ex.flat[worst]))}, got "
              f"{hexfloat(out.flat[worst])}")


def survival_threshold(res, mode, mask):
    """Largest k such that every row with k' <= k (under mask) is RN32(exact)."""
    lost = bits_lost(res[mode].view(np.float32), res["exact_units"])
    ks = np.asarray(res["params"]["k"])
    best = 0
    for k in sorted(set(ks[mask])):
        if np.all(lost[mask & (ks == k)] == 0):
            best = k
        else:
            break
    # from k = 24 on, RN32(exact) is the large term itself: no loss a binary32 output can show
    return "all" if best >= 24 else str(best)


def summarise_tiny(res, modes):
    print("  exact through k (largest k with 2^12 ± 2^(12-k) returned as RN32(exact); 'all':"
          " none lost that a binary32 output can show):")
    p = {k: np.asarray(v) for k, v in res["params"].items()}
    for pos in (0, 1, 2):
        for sign in (1, -1):
            m = (p["pos"] == pos) & (p["sign"] == sign)
            th = {mode: survival_threshold(res, mode, m) for mode in modes}
            print(f"    {['large first', 'large middle', 'large last'][pos]:13s} "
                  f"{'+' if sign > 0 else '-'}: " + "  ".join(f"{mo} {th[mo]:>3s}" for mo in modes))


def summarise_round(res, modes):
    print("  (out - L) / 2^(12-k) for k = 10..20 (1 = s kept; 0 = dropped; fractions show where"
          " the cut rounds):")
    p = {k: np.asarray(v) for k, v in res["params"].items()}
    out_ks = list(range(10, 21))
    for mode in modes:
        out = res[mode].view(np.float32).astype(np.float64)
        print(f"    {mode}:")
        for sl in (1, -1):
            for ss in (1, -1):
                for m8 in (9, 12, 15):
                    vals = []
                    for k in out_ks:
                        i = np.nonzero((p["sign_l"] == sl) & (p["sign_s"] == ss) & (p["m8"] == m8)
                                       & (p["k"] == k))[0][0]
                        vals.append((out[i] - sl * 2.0 ** L_EXP) / 2.0 ** (L_EXP - k))
                    print(f"      L{'+' if sl > 0 else '-'} s{'+' if ss > 0 else '-'}{m8 / 8:.3f}: "
                          + " ".join(f"{v:+6.3f}" for v in vals))


def summarise_cancel(res, modes):
    p = {k: np.asarray(v) for k, v in res["params"].items()}
    print("  exact through k (x + (-x) + 2^-k x = 2^-k x; positions p_l, p_neg, p_s):")
    for pi in sorted(set(p["pattern"])):
        m = p["pattern"] == pi
        i = np.nonzero(m)[0][0]
        th = {mode: survival_threshold(res, mode, m) for mode in modes}
        print(f"    ({p['p_l'][i]:3d},{p['p_neg'][i]:3d},{p['p_s'][i]:3d}): "
              + "  ".join(f"{mo} {th[mo]:>3s}" for mo in modes))


def summarise_swamp(res, modes):
    p = {k: np.asarray(v) for k, v in res["params"].items()}
    print("  exact through k (2^12 + (K-1) 2^(12-k)):")
    for order in (0, 1):
        m = p["order"] == order
        th = {mode: survival_threshold(res, mode, m) for mode in modes}
        print(f"    {['large first', 'large last'][order]:12s}: "
              + "  ".join(f"{mo} {th[mo]:>3s}" for mo in modes))


def ranges(ps):
    out, start, prev = [], None, None
    for x in ps:
        if start is None:
            start = prev = x
        elif x == prev + 1:
            prev = x
        else:
            out.append(f"{start}-{prev}" if prev > start else f"{start}")
            start = prev = x
    if start is not None:
        out.append(f"{start}-{prev}" if prev > start else f"{start}")
    return ",".join(out) if out else "none"


def summarise_scan(res, modes):
    ps = np.asarray(res["params"]["p"])
    for mode in modes:
        kept = bits_lost(res[mode].view(np.float32), res["exact_units"]) == 0
        print(f"    {mode:10s} s kept at p = {ranges(ps[kept])}")


def summarise_special(res, modes):
    p = {k: np.asarray(v) for k, v in res["params"].items()}
    names = {2: "NaN in a", 3: "±448 x 448 x 32", 4: "-0 products (IEEE: -0)",
             5: "16 subnormal products"}
    for kind in (0, 1):
        m = p["kind"] == kind
        print(f"    {['subnormal x b alone', '2^12 + subnormal x b'][kind]:22s}: " + "  ".join(
            f"{mo} {np.sum(bits_lost(res[mo].view(np.float32), res['exact_units'])[m] == 0)}/"
            f"{np.sum(m)} exact" for mo in modes))
    for i in np.nonzero(p["kind"] >= 2)[0]:
        print(f"    {names[int(p['kind'][i])]:22s}: exact "
              f"{hexfloat(units_to_f64(res['exact_units'][i]))}; " + "  ".join(
                  f"{mo} {hexfloat(res[mo].view(np.float32)[i])}" for mo in modes))


SUMMARIES = {"special": summarise_special, "tiny": summarise_tiny, "round": summarise_round, "cancel": summarise_cancel,
             "swamp": summarise_swamp, "scan": summarise_scan}


def main(argv):
    dry_run = "--dry-run" in argv
    args = [x for x in argv if x != "--dry-run"]
    path = args[0] if args else os.path.join(os.environ.get("OUT", "."), "fp8_accum_probe.npz")
    torch = gpu_or_skip(dry_run)
    t0 = time.time()
    modes = ["fp32_chain"] + ([] if torch is None else ["out_slow", "out_fast"])
    store, meta, results = {}, [], []
    for e in build_experiments():
        a, b = e.arrays()
        res = {"exact_units": exact_units(a, b), "params": e.params,
               "fp32_chain": f32bits(fp32_chain(a, b))}
        for mode, fast in (("out_slow", False), ("out_fast", True)):
            if torch is not None:
                res[mode] = f32bits(run_diag(torch, a, b, e.gemm_rows, fast))
        store.update({f"{e.name}__a": a, f"{e.name}__b": b})
        store.update({f"{e.name}__{m}": res[m] for m in ["exact_units"] + modes})
        store.update({f"{e.name}__{k}": np.asarray(v, dtype=np.int64) for k, v in e.params.items()})
        meta.append({"name": e.name, "why": e.why, "K": e.K, "n": int(a.shape[0]),
                     "gemm_rows": e.gemm_rows, "params": sorted(e.params)})
        results.append((e, res))
    rng = np.random.default_rng(20261126)
    rand = build_random(rng)
    for name, (a, bt) in rand.items():
        res = {"exact_units": exact_units_matrix(a, bt), "params": {},
               "fp32_chain": f32bits(fp32_chain_matrix(a, bt))}
        for mode, fast in (("out_slow", False), ("out_fast", True)):
            if torch is not None:
                res[mode] = f32bits(scaled_mm(torch, a, bt, fast))
                res[mode + "_rep"] = f32bits(scaled_mm(torch, a, bt, fast))
        store.update({f"{name}__a": a, f"{name}__b": bt})
        store.update({f"{name}__{m}": v for m, v in res.items() if m != "params"})
        meta.append({"name": name, "why": build_random.__doc__.split(":")[0], "K": a.shape[1],
                     "M": a.shape[0], "N": bt.shape[0], "gemm_rows": a.shape[0], "params": []})
        results.append((None, dict(res, name=name)))
    h = header(torch, meta, dry_run)
    store["header_json"] = np.array(json.dumps(h))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    np.savez_compressed(path, **store)

    print(f"probe_fp8_accum: {h.get('device', 'no GPU (dry run)')}, torch {h.get('torch', '-')}, "
          f"CUDA {h.get('torch_cuda', '-')}, cuBLASLt {h.get('cublas', '-')}")
    print("modes: fp32_chain = binary32 sequential sum (precprobe's model, computed here);"
          " out_slow = _scaled_mm use_fast_accum=False; out_fast = use_fast_accum=True")
    print("bits lost: 0 = the binary32 rounding of the exact sum; n = error in [2^(n-1), 2^n)"
          " binary32 ulps of the exact sum; -1 = non-finite")
    for e, res in results:
        name = e.name if e is not None else res["name"]
        print(f"\n== {name}" + (f" (K={e.K}, {len(e.a)} dot products, {e.gemm_rows}x"
                                  f"{e.gemm_rows} GEMMs): {e.why}" if e is not None else
                                  " (256x256x4096 GEMM)"))
        summarise_generic(name, res, modes)
        family = name.split("_")[0]
        if family in SUMMARIES:
            SUMMARIES[family](res, modes)
        if e is None and torch is not None:
            for mode in ("out_slow", "out_fast"):
                same = np.array_equal(res[mode], res[mode + "_rep"])
                print(f"  {mode} run twice: {'bit-identical' if same else 'DIFFERENT'}")
    print(f"\nwrote {path} ({os.path.getsize(path)} bytes) in {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
