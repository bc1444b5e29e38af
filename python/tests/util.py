"""Shared helpers of the python/ tests (stdlib unittest; numpy required, torch optional)."""
import math
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.dirname(HERE)              # python/
REPO = os.path.dirname(PKG_ROOT)
if PKG_ROOT not in sys.path:
    sys.path.insert(0, PKG_ROOT)

import numpy as np  # noqa: E402

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False
try:
    import h5py  # noqa: F401
    HAVE_H5PY = True
except ImportError:
    HAVE_H5PY = False
HAVE_H5DUMP = shutil.which("h5dump") is not None


def attention_np(q, k, v, causal=False, layout="bshd", out_dtype=np.float32, with_lse=False):
    """Attention in binary64, rounded once to out_dtype: the callable of the numpy-only tests.
    GQA: query head i uses kv head i // (h / h_kv)."""
    if layout == "bhsd":
        q, k, v = (x.transpose(0, 2, 1, 3) for x in (q, k, v))
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    b, s, h, d = q.shape
    s_kv, h_kv = k.shape[1], k.shape[2]
    rep = h // h_kv
    k = np.repeat(k, rep, axis=2)
    v = np.repeat(v, rep, axis=2)
    scores = np.einsum("bshd,bthd->bhst", q, k) / math.sqrt(d)
    if causal:
        i = np.arange(s)[:, None]
        j = np.arange(s_kv)[None, :]
        scores = np.where(j <= i + s_kv - s, scores, -np.inf)
    mx = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - mx)
    ssum = e.sum(axis=-1, keepdims=True)
    out = np.einsum("bhst,bthd->bshd", e / ssum, v)
    lse = (mx + np.log(ssum))[..., 0]          # [b, h, s]
    if layout == "bhsd":
        out = out.transpose(0, 2, 1, 3)
    out = np.ascontiguousarray(out.astype(out_dtype))
    return (out, lse.astype(np.float32)) if with_lse else out


class TmpTestCase(unittest.TestCase):
    """A fresh folder per test (self.tmp), removed afterwards unless the test failed."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="precprobe-pytest-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def rng(seed=0):
    return np.random.default_rng(seed)
