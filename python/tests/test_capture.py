"""capture() and judge() with numpy callables: the case file, the files' layout, the CLI's verdict."""
import os
import tomllib
import unittest

from util import REPO, TmpTestCase, attention_np, np, rng

import precprobe
from precprobe import PrecprobeError, capture, judge, load_safetensors


def load_toml(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def gemm_exact_fp16(a, b):
    """fp16 GEMM computed in binary64 and rounded once: within half an ulp of the truth."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)


def gemm_fp16_accumulate(a, b):
    """fp16 GEMM rounding the accumulator to fp16 after every addition: visibly worse."""
    acc = np.zeros(a.shape[:-1] + (b.shape[-1],), dtype=np.float16)
    for i in range(a.shape[-1]):
        acc = (acc + a[..., :, i:i + 1].astype(np.float32) * b[..., i:i + 1, :].astype(np.float32)).astype(np.float16)
    return acc


class TestCaptureGemm(TmpTestCase):
    def setUp(self):
        super().setUp()
        r = rng(2)
        self.a = r.standard_normal((2, 8, 64)).astype(np.float16)
        self.b = r.standard_normal((2, 64, 8)).astype(np.float16)

    def test_case_file(self):
        case = capture("g1", gemm_exact_fp16, {"a": self.a, "b": self.b}, self.tmp)
        self.assertEqual(case, __import__("pathlib").Path(self.tmp) / "g1.toml")
        c = load_toml(case)
        self.assertEqual(c["case"], {"name": "g1", "op": "gemm", "description": "g1 captured by precprobe.capture"})
        self.assertEqual(c["op"], {"batch": 2, "m": 8, "n": 8, "k": 64, "alpha": 1.0})
        self.assertEqual(c["inputs"], {"a": {"file": "g1.safetensors:a"}, "b": {"file": "g1.safetensors:b"}})
        self.assertEqual(c["knobs"], {"format": "fp16"})
        self.assertEqual(c["variants"]["g1"], {"external": {"c": "g1.safetensors:c"}})
        self.assertEqual(c["variants"]["fp32-acc"], {"accumulate": "fp32"})
        self.assertEqual(c["compare"]["pairs"], [["g1", "fp32-acc"], ["g1", "storage-acc"]])
        files = load_safetensors(os.path.join(self.tmp, "g1.safetensors"))
        self.assertTrue(np.array_equal(files["a"].data, self.a))
        self.assertTrue(np.array_equal(files["c"].data, gemm_exact_fp16(self.a, self.b)))

    def test_judge_good_and_bad_kernels(self):
        good = judge(capture("good", gemm_exact_fp16, {"a": self.a, "b": self.b}, self.tmp))
        r = good.get("good", "c")
        self.assertEqual(r["mismatched"], 0)
        self.assertLessEqual(r["max_ulp"], 0.5 + 1e-9)   # rounded once from binary64
        self.assertEqual(r["actual_format"], "fp16")
        self.assertEqual(r["shape"], (2, 8, 8))
        self.assertEqual(r["message"].splitlines()[0], "close")
        self.assertTrue(good.passed)
        self.assertEqual([(x["variant"], x["against"]) for x in good],
                         [("good", "reference"), ("fp32-acc", "reference"), ("storage-acc", "reference"),
                          ("good", "fp32-acc"), ("good", "storage-acc")])
        bad = judge(capture("bad", gemm_fp16_accumulate, [self.a, self.b], self.tmp, op="gemm"))
        r = bad.get("bad", "c")
        self.assertGreater(r["mismatch_fraction"], 0.05)
        self.assertGreater(r["max_ulp"], 4)
        self.assertTrue(r["message"].startswith("Tensor-likes are not close!\n\nMismatched elements: "), r["message"])
        self.assertIn("Greatest relative difference: ", r["message"])

    def test_2d_gemm_alpha_and_tolerances(self):
        a, b = self.a[0], self.b[0]
        case = capture("g2", lambda a, b: (0.5 * (a.astype(np.float64) @ b)).astype(np.float16), {"a": a, "b": b},
                       self.tmp, params={"alpha": 0.5}, rtol=0.0, atol=0.0)
        c = load_toml(case)
        self.assertEqual((c["op"]["batch"], c["op"]["alpha"]), (1, 0.5))
        self.assertEqual((c["compare"]["rtol"], c["compare"]["atol"]), (0.0, 0.0))
        r = judge(case).get("g2", "c")
        self.assertEqual((r["rtol"], r["atol"]), (0.0, 0.0))
        self.assertLessEqual(r["max_ulp"], 0.5 + 1e-9)

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "name the operation"):
            capture("x", gemm_exact_fp16, {"x": self.a}, self.tmp)
        with self.assertRaisesRegex(ValueError, "letters, digits"):
            capture("a b", gemm_exact_fp16, {"a": self.a, "b": self.b}, self.tmp)
        with self.assertRaisesRegex(ValueError, "mixed dtypes"):
            capture("x", gemm_exact_fp16, {"a": self.a, "b": self.b.astype(np.float32)}, self.tmp)
        with self.assertRaisesRegex(ValueError, "layout"):
            capture("x", gemm_exact_fp16, {"a": self.a, "b": self.b}, self.tmp, layout="bhsd")
        # a case the CLI refuses: its own message comes through
        case = capture("x", gemm_exact_fp16, {"a": self.a, "b": self.b}, self.tmp, params={"alpah": 1.0})
        with self.assertRaisesRegex(PrecprobeError, r"x\.toml:\d+: .*alpah.*exit 2|exit 2.*alpah"):
            judge(case)


class TestCaptureAttention(TmpTestCase):
    def inputs(self, layout, b=1, s=32, h=4, h_kv=2, d=16, s_kv=None):
        r = rng(3)
        s_kv = s_kv or s
        shp = (lambda s_, h_: (b, s_, h_, d)) if layout == "bshd" else (lambda s_, h_: (b, h_, s_, d))
        return {"q": r.standard_normal(shp(s, h)).astype(np.float32),
                "k": r.standard_normal(shp(s_kv, h_kv)).astype(np.float32),
                "v": r.standard_normal(shp(s_kv, h_kv)).astype(np.float32)}

    def check_layout(self, layout):
        ins = self.inputs(layout, s_kv=48)
        fn = lambda q, k, v: attention_np(q, k, v, causal=True, layout=layout)  # noqa: E731
        case = capture(f"attn-{layout}", fn, ins, self.tmp, layout=layout, params={"mask": "causal"})
        c = load_toml(case)
        self.assertEqual(c["op"], {"b": 1, "s": 32, "h": 4, "d": 16, "s_kv": 48, "h_kv": 2, "passes": "fwd",
                                   "mask": "causal"})
        self.assertEqual(c["knobs"]["format"], "fp32")
        self.assertEqual(c["variants"][f"attn-{layout}"], {"external": {"out": f"attn-{layout}.safetensors:out"}})
        files = load_safetensors(os.path.join(self.tmp, f"attn-{layout}.safetensors"))
        self.assertEqual(files["q"].shape, (1, 32, 4, 16))   # always bshd in the file
        self.assertEqual(files["k"].shape, (1, 48, 2, 16))
        self.assertEqual(files["out"].shape, (1, 32, 4, 16))
        j = judge(case)
        r = j.get(f"attn-{layout}", "out")
        # binary64 attention rounded once to fp32: close at fp32 tolerances; a wrong transpose or
        # mask would put most elements far off
        self.assertEqual(r["mismatched"], 0, r["message"])
        self.assertLess(r["max_ulp"], 2)
        self.assertEqual({x["tensor"] for x in j.find(variant=f"attn-{layout}")}, {"out"})
        self.assertIn("flash", {x["against"] for x in j.find(variant=f"attn-{layout}")})
        return files

    def test_bshd(self):
        self.check_layout("bshd")

    def test_bhsd_is_transposed(self):
        files = self.check_layout("bhsd")
        ins = self.inputs("bhsd", s_kv=48)
        self.assertTrue(np.array_equal(files["q"].data, ins["q"].transpose(0, 2, 1, 3)))

    def test_lse_from_a_tuple(self):
        ins = self.inputs("bshd", h_kv=4)
        case = capture("attn-lse", lambda q, k, v: attention_np(q, k, v, with_lse=True), ins, self.tmp)
        j = judge(case)
        self.assertEqual([x["tensor"] for x in j.find(variant="attn-lse", against="reference")], ["out", "lse"])
        self.assertEqual(j.get("attn-lse", "lse")["mismatched"], 0)
        # a wrong lse (natural log vs log2) is caught
        bad = capture("attn-lse2", lambda q, k, v: (lambda o, l: (o, l / np.float32(np.log(2))))(
            *attention_np(q, k, v, with_lse=True)), ins, self.tmp)
        self.assertGreater(judge(bad).get("attn-lse2", "lse")["mismatch_fraction"], 0.9)

    def test_backward_needs_torch(self):
        with self.assertRaisesRegex(ValueError, "torch"):
            capture("x", attention_np, self.inputs("bshd"), self.tmp, backward=True)


class TestJudge(TmpTestCase):
    def test_shipped_case_folder_and_gate(self):
        import shutil
        for f in ("external-attention.toml", "external-gemm.toml"):
            shutil.copy(os.path.join(REPO, "cases", f), self.tmp)
        shutil.copytree(os.path.join(REPO, "cases", "external"),
                        os.path.join(self.tmp, "external"))
        j = judge(self.tmp, out_dir=os.path.join(self.tmp, "out"))
        self.assertEqual({r["case"] for r in j}, {"external-attention", "external-gemm"})
        self.assertEqual(len(j.reports), 2)
        self.assertEqual([(g["case"], g["rule"], g["passed"]) for g in j.gate],
                         [("external-attention", "flash.*.nan_count <= 0.0", True),
                          ("external-attention", "torch-sdpa.out.mismatch_fraction <= 0.1", True)])
        self.assertTrue(j.passed)
        self.assertEqual(j.get("torch-sdpa", "out", "flash")["actual_format"], "bf16")

    def test_baseline_written_then_checked_then_regressed(self):
        r = rng(4)
        a = r.standard_normal((1, 8, 64)).astype(np.float16)
        b = r.standard_normal((1, 64, 8)).astype(np.float16)
        base = os.path.join(self.tmp, "baselines")
        j1 = judge(capture("k", lambda a, b: (a.astype(np.float64) @ b).astype(np.float16), [a, b], self.tmp,
                           op="gemm"), baseline=base)
        self.assertEqual(j1.baseline_written, [os.path.join(base, "k.h5")])
        j2 = judge(os.path.join(self.tmp, "k.toml"), baseline=base)
        self.assertEqual((j2.baseline_written, j2.regressions, j2.passed), ([], [], True))
        # the same case name, a worse kernel: check reports the regression and judge fails
        worse = os.path.join(self.tmp, "worse")
        from test_capture import gemm_fp16_accumulate
        j3 = judge(capture("k", gemm_fp16_accumulate, [a, b], worse, op="gemm"), baseline=base)
        self.assertFalse(j3.passed)
        self.assertTrue(any(ln.startswith("k c vs reference: max_ulp 0.4") for ln in j3.regressions), j3.check_output)
        self.assertNotIn("check k: FAILED", "\n".join(j3.regressions))

    def test_to_pandas(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            self.skipTest("pandas not importable: to_pandas untested here")
        r = rng(6)
        a, b = r.standard_normal((1, 4, 8)).astype(np.float32), r.standard_normal((1, 8, 4)).astype(np.float32)
        df = judge(capture("pd", lambda a, b: (a.astype(np.float64) @ b).astype(np.float32), [a, b], self.tmp,
                           op="gemm")).to_pandas()
        self.assertEqual(list(df["variant"])[:3], ["pd", "fp32-acc", "storage-acc"])
        self.assertIn("max_ulp", df.columns)

    def test_binary_lookup(self):
        old = os.environ.get("PRECPROBE_BIN")
        try:
            os.environ["PRECPROBE_BIN"] = os.path.join(self.tmp, "nope")
            with self.assertRaisesRegex(PrecprobeError, "PRECPROBE_BIN=.*nope"):
                precprobe.find_binary()
        finally:
            if old is None:
                del os.environ["PRECPROBE_BIN"]
            else:
                os.environ["PRECPROBE_BIN"] = old
        self.assertTrue(os.access(precprobe.find_binary(), os.X_OK))


if __name__ == "__main__":
    unittest.main()
