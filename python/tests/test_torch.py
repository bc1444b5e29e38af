"""Against real torch: scaled_dot_product_attention on the CPU in bf16/fp16 (skips without torch)."""
import unittest

from util import HAVE_TORCH, TmpTestCase

from precprobe import PrecisionError, assert_precision, capture, judge, load_safetensors
from precprobe._tensors import from_tensor, to_tensor

HAVE_SDPA = False
if HAVE_TORCH:
    import torch
    import torch.nn.functional as F
    HAVE_SDPA = hasattr(F, "scaled_dot_product_attention")
NO_SDPA = f"torch {torch.__version__ if HAVE_TORCH else ''} has no scaled_dot_product_attention (2.0+)"


def sdpa_causal(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


@unittest.skipUnless(HAVE_TORCH, "torch not importable by this interpreter (PRECPROBE_PYTHON may name one that has it)")
class TestTorch(TmpTestCase):
    def qkv(self, dtype, shape=(1, 2, 64, 32)):
        g = torch.Generator().manual_seed(0)
        return {n: torch.randn(shape, generator=g).to(dtype) for n in ("q", "k", "v")}

    def test_dtypes(self):
        for dt, fmt in ((torch.bfloat16, "bf16"), (torch.float16, "fp16"), (torch.float32, "fp32")):
            x = torch.randn(3, 5).to(dt)
            t = to_tensor(x)
            self.assertEqual(t.fmt, fmt)
            self.assertTrue(torch.equal(from_tensor(t, like=x), x))
        self.assertEqual(to_tensor(torch.tensor([1.0, -2.0]).to(torch.bfloat16)).data.tolist(), [0x3F80, 0xC000])

    @unittest.skipUnless(HAVE_SDPA, NO_SDPA)
    def test_sdpa_bf16_forward_and_backward(self):
        ins = self.qkv(torch.bfloat16)
        g = torch.Generator().manual_seed(1)
        dout = torch.randn(1, 2, 64, 32, generator=g).to(torch.bfloat16)
        case = capture("sdpa", sdpa_causal, dict(ins, dout=dout), self.tmp, layout="bhsd",
                       params={"mask": "causal"}, backward=True)
        files = load_safetensors(case.parent / "sdpa.safetensors")
        # the file holds exactly what torch computed, in bshd
        qt, kt, vt = (ins[n].clone().requires_grad_(True) for n in ("q", "k", "v"))
        out = sdpa_causal(qt, kt, vt)
        out.backward(dout)
        for name, ref in (("q", ins["q"]), ("dout", dout), ("out", out.detach()), ("dq", qt.grad), ("dk", kt.grad),
                          ("dv", vt.grad)):
            self.assertEqual(files[name].fmt, "bf16")
            self.assertTrue(torch.equal(from_tensor(files[name], like=ref), ref.transpose(1, 2).contiguous()), name)
        j = judge(case)
        self.assertEqual([r["tensor"] for r in j.find(variant="sdpa", against="reference")], ["out", "dq", "dk", "dv"])
        for t in ("out", "dq", "dk", "dv"):
            # torch's bf16 SDPA is as close to the truth as precprobe's flash emulation, and close
            # to it element by element: a wrong layout or mask would mismatch most elements
            self.assertLess(j.get("sdpa", t)["mismatch_fraction"], 0.15, t)
            self.assertLess(j.get("sdpa", t, "flash")["mismatch_fraction"], 0.05, t)
            self.assertEqual(j.get("sdpa", t)["actual_format"], "bf16")

    @unittest.skipUnless(HAVE_SDPA, NO_SDPA)
    def test_sdpa_fp16_forward_only_bshd(self):
        ins = {n: x.transpose(1, 2).contiguous() for n, x in self.qkv(torch.float16, (1, 4, 48, 16)).items()}
        fn = lambda q, k, v: F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),  # noqa: E731
                                                            v.transpose(1, 2)).transpose(1, 2)
        j = judge(capture("sdpa16", fn, ins, self.tmp))
        self.assertEqual({r["tensor"] for r in j.find(variant="sdpa16")}, {"out"})
        self.assertLess(j.get("sdpa16", "out", "flash")["mismatch_fraction"], 0.05)
        self.assertEqual(j.get("sdpa16", "out")["actual_format"], "fp16")

    @unittest.skipUnless(HAVE_SDPA, NO_SDPA)
    def test_assert_precision(self):
        ins = self.qkv(torch.bfloat16)
        kw = dict(layout="bhsd", params={"mask": "causal"}, backward=True, name="sdpa-assert", out_dir=self.tmp)
        assert_precision(sdpa_causal, ins, max_mismatch=0.05, against="flash", **kw)
        with self.assertRaises(PrecisionError) as cm:
            assert_precision(sdpa_causal, ins, max_mismatch=0.0, **kw)
        self.assertIn("sdpa-assert.out vs reference: mismatch ", str(cm.exception))
        self.assertIn("Tensor-likes are not close!\n\nMismatched elements: ", str(cm.exception))
        self.assertIn("(up to 0.016 allowed)", str(cm.exception))   # torch's bf16 rtol


if __name__ == "__main__":
    unittest.main()
