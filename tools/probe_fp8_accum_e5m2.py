#!/usr/bin/env python3
"""probe_fp8_accum_e5m2.py — how a GPU's FP8 GEMM accumulates when one operand is e5m2
(torch._scaled_mm, e4m3 x e5m2 and e5m2 x e4m3 -> fp32, scales 1, use_fast_accum False and True),
every input and output bit pattern kept, so that kernels/sm90_fp8_mma.h's model (fitted on
e4m3 x e4m3 by tools/probe_fp8_accum.py) can be checked on e5m2 off the GPU.

usage: PYTHON tools/probe_fp8_accum_e5m2.py [OUT_FILE] [--dry-run]
  OUT_FILE defaults to $OUT/fp8_accum_e5m2_probe.npz. Needs torch with CUDA on sm_89+; prints
  "SKIP: ..." and exits 0 elsewhere. --dry-run builds the inputs without a GPU (outputs zero).

Why a second probe: cuBLASLt on sm_90 takes e4m3 x e4m3, e4m3 x e5m2 and e5m2 x e4m3 (not
e5m2 x e5m2; torch refuses it). e5m2 reaches 2^-16 (subnormal) to 57344, so a product spans 2^-25
to 2^23.6 where e4m3 x e4m3 spans 2^-18 to 2^17.6: the questions are whether the adder keeps the
same 13 fraction bits below the group's largest exponent at those exponents, how it counts an e5m2
subnormal's exponent (the model: e(x) = max(floor(log2|x|), emin), emin = -14 for e5m2), and what
e5m2's infinities do (the model: IEEE, Inf + -Inf = NaN).

The file (numpy .npz, no pickles): "header_json" (versions, device, experiments) and per
experiment X: X__fa, X__fb (int64 [1]: 0 = e4m3fn, 1 = e5m2: the formats of a and b), X__a, X__b
(uint8 codes [n, K]; random sets [M, K] and [N, K] = B^T), X__out_slow, X__out_fast (uint32 fp32
bits; constructed sets: the diagonal of `gemm_rows`-row GEMMs, as tools/probe_fp8_accum.py),
X__<param> (int64 [n]).
"""
import json
import math
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probe_fp8_accum as p4  # noqa: E402  (numpy, e4m3 tables, header helpers)

np = p4.np
E4M3, E5M2 = 0, 1
NAMES = {E4M3: "e4m3fn", E5M2: "e5m2"}


def e5m2_decode_table():
    """Value of each of the 256 e5m2 codes (bias 15, S.11111.00 = Inf, S.11111.xx = NaN)."""
    vals = np.empty(256)
    for code in range(256):
        s, e, m = code >> 7, (code >> 2) & 31, code & 3
        if e == 31:
            v = math.inf if m == 0 else math.nan
        elif e == 0:
            v = m * 2.0 ** -16
        else:
            v = (1 + m / 4) * 2.0 ** (e - 15)
        vals[code] = -v if s else v
    return vals


TABLE = {E4M3: p4.E4M3, E5M2: e5m2_decode_table()}
# normal exponent ranges (a power of two 2^e is exact and normal for lo <= e <= hi)
NORMAL = {E4M3: (-6, 8), E5M2: (-14, 15)}
SUBNORMAL = {E4M3: (-9, 8), E5M2: (-16, 15)}  # powers of two down to the smallest subnormal


def exact_code(fmt, x):
    """Code of each value the format holds exactly (raises otherwise); -0 keeps its sign."""
    tab = TABLE[fmt]
    out = np.empty(len(x), dtype=np.uint8)
    for i, v in enumerate(x):
        if math.isnan(v):
            out[i] = 0x7F
            continue
        hits = [c for c in range(256) if tab[c] == v and (math.copysign(1, tab[c]) == math.copysign(1, v))]
        if not hits:
            raise ValueError(f"{v!r} is not an {NAMES[fmt]} value")
        out[i] = hits[0]
    return out


def nearest_codes(fmt, x):
    """Code nearest to each value (finite codes only, clipped to the format's max; ties to the
    lower code: random data only, deterministic)."""
    tab = TABLE[fmt]
    finite = np.array([c for c in range(256) if np.isfinite(tab[c]) and c != 0x80])
    order = np.argsort(tab[finite], kind="stable")
    vals, codes = tab[finite][order], finite[order]
    x = np.clip(np.asarray(x, dtype=np.float64), vals[0], vals[-1])
    hi = np.clip(np.searchsorted(vals, x), 1, len(vals) - 1)
    lo = hi - 1
    pick = np.where(np.abs(vals[hi] - x) < np.abs(x - vals[lo]), hi, lo)
    return codes[pick].astype(np.uint8)


def pow2_pair(e, fa, fb, subnormal=False):
    """Two powers of two, one per format, whose product is 2^e: normal ones, or subnormal ones
    too where `subnormal` (the smallest products only)."""
    (la, ha), (lb, hb) = (SUBNORMAL if subnormal else NORMAL)[fa], (SUBNORMAL if subnormal else NORMAL)[fb]
    ea = min(max(-((-e) // 2), la), ha)
    eb = e - ea
    if eb < lb:
        ea, eb = max(la, e - lb), lb
        eb = e - ea
    if eb > hb:
        ea, eb = min(ha, e - hb), hb
        eb = e - ea
    if not (la <= ea <= ha and lb <= eb <= hb):
        raise ValueError(f"2^{e} is no product of normal {NAMES[fa]} x {NAMES[fb]} powers of two")
    return 2.0 ** ea, 2.0 ** eb


class Exp:
    def __init__(self, name, why, K, fa, fb, gemm_rows=16):
        self.name, self.why, self.K, self.fa, self.fb, self.gemm_rows = name, why, K, fa, fb, gemm_rows
        self.a, self.b, self.params = [], [], {}

    def add(self, terms, **params):
        a, b = [0.0] * self.K, [0.0] * self.K
        for pos, (va, vb) in terms.items():
            a[pos], b[pos] = va, vb
        self.a.append(exact_code(self.fa, a))
        self.b.append(exact_code(self.fb, b))
        for key, val in params.items():
            self.params.setdefault(key, []).append(val)


def build(fa, fb):
    tag = f"{NAMES[fa][:4]}x{NAMES[fb][:4]}"
    exps = []

    def term(e, sign=1, mant=1.0):
        x, y = pow2_pair(e, fa, fb, e < -20)
        x *= mant  # 1.25, 1.5, 1.75: a significand both formats hold (x is normal)
        return (sign * x, y)

    # 1. 2^L + 2^(L-k): the bits kept below the group's largest exponent, at L = 12 (as the e4m3
    #    probe), at L = 20 (beyond e4m3 x e4m3's reach) and L = -8; large first or last.
    for L in (12, 20, -8):
        for K in (32, 128, 1024):
            e = Exp(f"tiny_L{L}_K{K}_{tag}", f"2^{L} + ±2^({L}-k); pos 0: large at 0, small at K-1;"
                    " 1: small at 0, large at K-1", K, fa, fb)
            for pos in (0, 1):
                pl, ps = (0, K - 1) if pos == 0 else (K - 1, 0)
                for sign in (1, -1):
                    for k in range(1, 31):
                        if L - k < -20:  # below the products of two normal powers of two
                            continue
                        e.add({pl: term(L), ps: term(L - k, sign)}, k=k, pos=pos, sign=sign)
            exps.append(e)
    # 2. rounding of the dropped part: ±2^12 + ±m 2^(12-k), m = 1.25, 1.5, 1.75
    e = Exp(f"round_K32_{tag}", "±2^12 + ±m 2^(12-k), large first", 32, fa, fb)
    for sl in (1, -1):
        for ss in (1, -1):
            for m in (1.25, 1.5, 1.75):
                for k in range(8, 20):
                    e.add({0: term(12, sl), 1: term(12 - k, ss, m)}, k=k, sign_l=sl, sign_s=ss, m4=int(m * 4))
    exps.append(e)
    # 3. e5m2 subnormals (j 2^-16, j = 1..3) times the other operand's values v, alone and beside
    #    a normal product 2^q: how the adder counts a subnormal's exponent.
    sub_f = E5M2
    e = Exp(f"sub_K32_{tag}", "kind 0: j 2^-16 x v alone; kind 1: the same beside 2^q at position 0", 32, fa, fb)
    others = [1.0, 2.0 ** -9 if E4M3 in (fa, fb) else 2.0 ** -16, 2.0 ** -6, 448.0, 2.0 ** 8]
    for j in (1, 2, 3):
        for sgn in (1, -1):
            for vi, v in enumerate(others):
                pair = (sgn * j * 2.0 ** -16, v) if fa == sub_f else (v, sgn * j * 2.0 ** -16)
                if fa == E4M3 and fb == E4M3:
                    continue
                e.add({5: pair}, kind=0, j=j, sign=sgn, v=vi, q=0)
                sub_e = -16 + int(math.log2(v))
                for q in range(sub_e, sub_e + 18):
                    e.add({0: term(q), 5: pair}, kind=1, j=j, sign=sgn, v=vi, q=q)
    exps.append(e)
    # 3b. the exponent the adder gives an e5m2 subnormal: S = ±j 2^-16 x 2^8 (j = 1..3, its true
    #     exponent -8 or -7; the model's e = -14 + 8 = -6) sets the group's E, and T = ±m 2^r
    #     (m = 1.25, 1.75: bits down to 2^(r-2)) beside it is kept whole only where r - 2 is on
    #     the grid 2^(E-13): r >= -17 under the model, r >= -19 (j = 1) if the true exponent counted.
    e = Exp(f"subexp_K32_{tag}", "S = sign_s j 2^-16 x 2^8 at 0 (e5m2 subnormal) and T = sign_t m 2^r at 1", 32, fa, fb)
    for j in (1, 2, 3):
        for ss in (1, -1):
            s_pair = (ss * j * 2.0 ** -16, 256.0) if fa == sub_f else (256.0, ss * j * 2.0 ** -16)
            for st in (1, -1):
                for m in (1.25, 1.75):
                    for r in range(-20, -8):
                        e.add({0: s_pair, 1: term(r, st, m)}, j=j, sign_s=ss, sign_t=st, m4=int(m * 4), r=r)
    exps.append(e)
    # 4. specials: e5m2 ±Inf times a finite, Inf - Inf, Inf x 0, NaN, and the largest products
    e = Exp(f"special_K32_{tag}", "kind 0: +Inf x 1; 1: -Inf x 1; 2: Inf - Inf; 3: Inf x 0;"
            " 4: NaN; 5: 32 largest products; 6: Inf beside 2^12", 32, fa, fb)
    inf_a = fa == E5M2
    def inf_pair(s, other=1.0):
        return (s * math.inf, other) if inf_a else (other, s * math.inf)
    e.add({3: inf_pair(1)}, kind=0)
    e.add({3: inf_pair(-1)}, kind=1)
    e.add({3: inf_pair(1), 9: inf_pair(-1)}, kind=2)
    e.add({3: inf_pair(1, 0.0)}, kind=3)
    e.add({3: (math.nan, 1.0) if inf_a else (1.0, math.nan)}, kind=4)
    big_a = 57344.0 if fa == E5M2 else 448.0
    big_b = 57344.0 if fb == E5M2 else 448.0
    e.add({i: (big_a, big_b) for i in range(32)}, kind=5)
    e.add({0: term(12), 3: inf_pair(1)}, kind=6)
    exps.append(e)
    return exps


def build_random(rng, fa, fb):
    """128 x 128 x 4096 GEMMs: normal with outlier rows/columns (x 2^6), and log-uniform magnitudes
    over each format's range (e4m3 2^-9..2^8, e5m2 2^-16..2^15) with random signs."""
    M = N = 128
    K = 4096
    tag = f"{NAMES[fa][:4]}x{NAMES[fb][:4]}"
    a = rng.standard_normal((M, K))
    a[:8] *= 64.0
    bt = rng.standard_normal((N, K))
    bt[:8] *= 64.0
    span = {E4M3: (-9, 8), E5M2: (-16, 15)}
    def mag(fmt, shape):
        lo, hi = span[fmt]
        return np.exp2(rng.uniform(lo, hi, shape)) * rng.choice([-1.0, 1.0], shape)
    return {f"rand_normal_outliers_{tag}": (nearest_codes(fa, a), nearest_codes(fb, bt)),
            f"rand_loguniform_{tag}": (nearest_codes(fa, mag(fa, (M, K))), nearest_codes(fb, mag(fb, (N, K))))}


def dtypes(torch, fa, fb):
    dt = {E4M3: torch.float8_e4m3fn, E5M2: torch.float8_e5m2}
    return dt[fa], dt[fb]


def main(argv):
    dry = "--dry-run" in argv
    args = [x for x in argv if x != "--dry-run"]
    path = args[0] if args else os.path.join(os.environ.get("OUT", "."), "fp8_accum_e5m2_probe.npz")
    torch = p4.gpu_or_skip(dry)
    rng = np.random.default_rng(20261126)
    store, meta = {}, []
    for fa, fb in ((E4M3, E5M2), (E5M2, E4M3)):
        for e in build(fa, fb):
            a, b = np.stack(e.a), np.stack(e.b)
            store[e.name + "__a"], store[e.name + "__b"] = a, b
            for mode, fast in (("out_slow", False), ("out_fast", True)):
                out = np.zeros(a.shape[0], np.float32) if dry else p4.run_diag(torch, a, b, e.gemm_rows, fast, dtypes(torch, fa, fb))
                store[f"{e.name}__{mode}"] = out.view(np.uint32)
            for key, val in e.params.items():
                store[f"{e.name}__{key}"] = np.asarray(val, dtype=np.int64)
            meta.append({"name": e.name, "why": e.why, "K": e.K, "n": int(a.shape[0]), "gemm_rows": e.gemm_rows,
                         "fa": NAMES[fa], "fb": NAMES[fb]})
        for name, (a, bt) in build_random(rng, fa, fb).items():
            store[name + "__a"], store[name + "__b"] = a, bt
            for mode, fast in (("out_slow", False), ("out_fast", True)):
                out = np.zeros((a.shape[0], bt.shape[0]), np.float32) if dry else p4.scaled_mm(torch, a, bt, fast, dtypes(torch, fa, fb))
                store[f"{name}__{mode}"] = out.view(np.uint32)
                if not dry:  # determinism: the same call again
                    rep = p4.scaled_mm(torch, a, bt, fast, dtypes(torch, fa, fb))
                    store[f"{name}__{mode}_rep"] = rep.view(np.uint32)
            meta.append({"name": name, "why": "random GEMM", "K": int(a.shape[1]), "M": int(a.shape[0]),
                         "N": int(bt.shape[0]), "fa": NAMES[fa], "fb": NAMES[fb]})
    for m in meta:
        store[m["name"] + "__fa"] = np.array([0 if m["fa"] == "e4m3fn" else 1], np.int64)
        store[m["name"] + "__fb"] = np.array([0 if m["fb"] == "e4m3fn" else 1], np.int64)
    h = p4.header(torch, meta, dry)
    h["tool"] = "tools/probe_fp8_accum_e5m2.py"
    h["format"] = "e4m3fn x e5m2 and e5m2 x e4m3fn -> fp32, scale_a = scale_b = 1"
    store["header_json"] = np.array(json.dumps(h))
    tmp = path + ".tmp.npz"
    np.savez_compressed(tmp, **store)
    os.replace(tmp, path)
    n = sum(m.get("n", m.get("M", 0) * m.get("N", 0)) for m in meta)
    print(f"probe_fp8_accum_e5m2: {len(meta)} experiments, {n} outputs per mode -> {path}"
          f" ({platform.node()}, {'dry run' if dry else h.get('device')})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
