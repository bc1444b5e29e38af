#!/usr/bin/env python3
"""fit_fp8_accum.py — the scratch fit behind kernels/sm90_fp8_mma.h: a parametrised model of an FP8
tensor core's accumulation, run on every dot product of the npz that tools/probe_fp8_accum.py wrote
on a GPU, printing per experiment and mode how many outputs the model misses (bit for bit).

usage: PYTHON tools/fit_fp8_accum.py PROBE_NPZ ["G=32, F=13, expmode='sum', norm='rz14'"] [--all]
  G: products per alignment group; F: fraction bits kept below the group's largest exponent;
  incC: whether the accumulator C takes part in that maximum; expmode: 'sum' (e(a) + e(b) of the
  inputs' exponent fields) or 'lead' (the product's leading bit); norm: how the group's exact sum
  becomes C: 'rz' / 'rn' (to binary32) or 'rzN' (truncated to N significant bits); P: the
  promotion interval of use_fast_accum=False (fast: never). The defaults are the H200's fit
  (2026-11-26, kernels/gemm.h "Hopper FP8 accumulation"), which misses none. Random sets: every
  32nd column unless --all (all 65536 outputs: about a minute). Needs numpy. Not run by make test.
"""
import itertools
import json
import sys

import numpy as np
d = np.load(sys.argv[1] if len(sys.argv) > 1 else 'fp8_accum_probe.npz')
h = json.loads(str(d['header_json']))
# e4m3 decode to 2^-9 units and exponent (ea: subnormal -> -6), sig int (1.mmm*8 or 0.mmm*8)
codes = np.arange(256)
s = codes >> 7; e = (codes >> 3) & 15; m = codes & 7
sig = np.where(e == 0, m, 8 + m)              # value = sig * 2^(ex-3)
ex = np.where(e == 0, -6, e - 7)
nan = (e == 15) & (m == 7)
units9 = np.where(nan, 0, np.where(s == 1, -1, 1) * sig * 2.0 ** (ex - 3 + 9)).astype(np.int64)

def ilog2(x):  # floor(log2|x|) for int64 array, -10**6 for 0
    ax = np.abs(x).astype(np.float64)
    f = np.frexp(ax)[1] - 1
    return np.where(x == 0, -10**6, f)

def trunc_to(x, q):  # truncate toward zero to multiple of 2^q (units), q >= 0 means units power
    # x int64 units of 2^-18; q: int array exponent in units (power of two of the step in units)
    q = np.maximum(q, 0)
    step = np.left_shift(np.int64(1), np.minimum(q, 62).astype(np.int64))
    r = np.abs(x) // step * step
    return np.where(q >= 62, 0, np.sign(x) * r)

def rn32_units(x):  # round int64 units to 24-bit significand, RNE
    lead = ilog2(x)
    q = np.maximum(lead - 23, 0)
    step = np.left_shift(np.int64(1), q.astype(np.int64))
    ax = np.abs(x)
    lo = ax // step * step
    rem = ax - lo
    half = step // 2
    up = (rem > half) | ((rem == half) & (q > 0) & (((lo // step) & 1) == 1))
    return np.sign(x) * np.where(up, lo + step, lo)

def rz32_units(x):
    lead = ilog2(x); q = np.maximum(lead - 23, 0)
    return trunc_to(x, q)

def model(a, b, G=32, F=13, incC=True, expmode='sum', P=128, norm='rz14'):
    """a,b codes [n,K]; returns float64 results (units*2^-18) and nan mask"""
    n, K = a.shape
    pu = units9[a] * units9[b]                  # 2^-18 units
    if expmode == 'lead':
        pe = ilog2(pu)
    else:  # sum of input exponents, in units: value=sig_a*sig_b*2^(ea+eb-6) ; leading of 1*1 -> ea+eb
        pe = np.where(pu == 0, -10**6, ex[a] + ex[b] + 18)
    isnan = nan[a].any(1) | nan[b].any(1)
    total = np.zeros(n, np.int64)
    C = np.zeros(n, np.int64)
    for g0 in range(0, K, G):
        if P and g0 % P == 0 and g0 > 0:
            total = rn32_units(total + C); C[:] = 0
        p = pu[:, g0:g0+G]; pe_ = pe[:, g0:g0+G]
        Emax = pe_.max(1)
        cE = ilog2(C)
        if incC: Emax = np.maximum(Emax, cE)
        q = (Emax - F)[:, None]
        tp = trunc_to(p, np.broadcast_to(q, p.shape)).sum(1)
        tc = trunc_to(C, Emax - F) if incC else C
        ssum = tp + tc
        if norm == 'rz': C = rz32_units(ssum)
        elif norm == 'rn': C = rn32_units(ssum)
        else:
            nb = int(norm[2:]); lead = ilog2(ssum); qq = np.maximum(lead - (nb - 1), 0)
            C = trunc_to(ssum, qq)
    if P:
        total = rn32_units(total + C)
    else:
        total = C
    return total.astype(np.float64) * 2.0 ** -18, isnan

def compare(params, verbose=False, rand_cols=None):
    res = {}
    for exp in h['experiments']:
        nm = exp['name']
        a, b = d[nm + '__a'], d[nm + '__b']
        for mode in ('slow', 'fast'):
            out = d[f'{nm}__out_{mode}'].view(np.float32).astype(np.float64)
            P = params.get('P', 128) if mode == 'slow' else 0
            pp = dict(params); pp['P'] = P
            if nm.startswith('rand'):
                cols = rand_cols if rand_cols is not None else range(b.shape[0])
                bad = 0; tot = 0; worst = []
                for j in cols:
                    bb = np.broadcast_to(b[j], a.shape)
                    got, isn = model(a, bb, **pp)
                    got = got.astype(np.float32).astype(np.float64)
                    ok = (got == out[:, j]) | (isn & np.isnan(out[:, j]))
                    bad += (~ok).sum(); tot += len(ok)
                    if (~ok).any() and len(worst) < 3: worst.append((j, np.nonzero(~ok)[0][:3]))
                res[(nm, mode)] = (bad, tot, worst)
            else:
                got, isn = model(a, b, **pp)
                got32 = got.astype(np.float32).astype(np.float64)
                ok = (got32 == out) | (isn & np.isnan(out))
                res[(nm, mode)] = ((~ok).sum(), len(ok), np.nonzero(~ok)[0][:5])
    return res

if __name__ == '__main__':
    args = [x for x in sys.argv[2:] if x != '--all']
    params = eval('dict(' + (args[0] if args else '') + ')')
    cols = range(256) if '--all' in sys.argv else range(0, 256, 32)
    for k, v in compare(params, rand_cols=cols).items():
        print(k, v[0], '/', v[1], v[2] if v[0] else '')
