"""Tensors and safetensors files, numpy only."""
import json
import struct
import unittest

from util import np, rng

import precprobe
from precprobe._tensors import Tensor, dtype_format, from_tensor, load_safetensors, save_safetensors, to_tensor


class TestTensors(unittest.TestCase):
    def test_dtype_names(self):
        self.assertEqual(dtype_format(np.float16), "fp16")
        self.assertEqual(dtype_format(np.dtype("float32")), "fp32")
        self.assertEqual(dtype_format("torch.bfloat16"), "bf16")
        self.assertEqual(dtype_format("torch.float16"), "fp16")
        self.assertEqual(dtype_format("bfloat16"), "bf16")  # ml_dtypes' name
        with self.assertRaisesRegex(ValueError, "bfloat16, float16 and float32"):
            dtype_format(np.float64)
        with self.assertRaisesRegex(ValueError, "float32"):
            to_tensor(np.zeros(3, dtype=np.int32))

    def test_ml_dtypes_bfloat16(self):
        try:
            import ml_dtypes
        except ImportError:
            self.skipTest("ml_dtypes not importable: its bfloat16 untested here")
        x = np.array([1.0, -2.0, 3.0e38], dtype=ml_dtypes.bfloat16)
        t = to_tensor(x)
        self.assertEqual(t.fmt, "bf16")
        self.assertEqual(t.data.tolist(), [0x3F80, 0xC000, x.view(np.uint16)[2]])
        self.assertEqual(from_tensor(t).dtype, x.dtype)
        # a bf16 GEMM in ml_dtypes, judged by the CLI: computed in binary64, rounded once
        import tempfile
        r = np.random.default_rng(7)
        a = r.standard_normal((1, 4, 32)).astype(ml_dtypes.bfloat16)
        b = r.standard_normal((1, 32, 4)).astype(ml_dtypes.bfloat16)
        fn = lambda a, b: (a.astype(np.float64) @ b.astype(np.float64)).astype(ml_dtypes.bfloat16)  # noqa: E731
        j = precprobe.judge(precprobe.capture("mlbf16", fn, {"a": a, "b": b}, tempfile.mkdtemp()))
        self.assertEqual(j.get("mlbf16", "c")["actual_format"], "bf16")
        self.assertLessEqual(j.get("mlbf16", "c")["max_ulp"], 0.5 + 1e-9)

    def test_bf16_values(self):
        bits = np.array([0x3F80, 0xC000, 0x7F80, 0x0001], dtype=np.uint16)  # 1, -2, inf, tiny subnormal
        t = Tensor("bf16", bits)
        self.assertEqual(t.to_float64().tolist()[:3], [1.0, -2.0, float("inf")])
        self.assertEqual(t.to_float64()[3], 2.0 ** -133)

    def test_safetensors_round_trip_and_layout(self):
        import tempfile
        import os
        d = tempfile.mkdtemp()
        path = os.path.join(d, "x.safetensors")
        r = rng(1)
        ts = {"a": Tensor("bf16", r.integers(0, 65535, size=(2, 3, 4), dtype=np.uint16)),
              "b": to_tensor(r.standard_normal((5,)).astype(np.float16)),
              "c": to_tensor(r.standard_normal((3, 2)).astype(np.float32))}
        save_safetensors(path, ts, metadata={"made_by": "test"})
        with open(path, "rb") as f:
            blob = f.read()
        (n,) = struct.unpack("<Q", blob[:8])
        self.assertEqual((8 + n) % 8, 0, "data starts 8-aligned")
        header = json.loads(blob[8:8 + n])
        self.assertEqual(header["a"], {"dtype": "BF16", "shape": [2, 3, 4], "data_offsets": [0, 48]})
        self.assertEqual(header["b"]["dtype"], "F16")
        self.assertEqual(header["c"]["data_offsets"], [58, 82])
        self.assertEqual(header["__metadata__"], {"made_by": "test"})
        self.assertEqual(len(blob), 8 + n + 82)
        back = load_safetensors(path)
        for k, t in ts.items():
            self.assertEqual(back[k].fmt, t.fmt)
            self.assertTrue(np.array_equal(back[k].data.view(np.uint8), t.data.view(np.uint8)), k)

    def test_cli_reads_our_safetensors(self):
        # precprobe compare: the CLI's own reader on a file written here, bf16 kept bit for bit
        import os
        import subprocess
        import tempfile
        d = tempfile.mkdtemp()
        path = os.path.join(d, "x.safetensors")
        bits = np.array([[0x3F80, 0x4000], [0x4040, 0xBF80]], dtype=np.uint16)  # 1 2 / 3 -1
        save_safetensors(path, {"x": Tensor("bf16", bits), "y": Tensor("bf16", bits ^ np.uint16(1))})
        exe = precprobe.find_binary()
        same = subprocess.run([exe, "compare", path + ":x", path + ":x"], capture_output=True, text=True)
        self.assertEqual(same.returncode, 0, same.stdout + same.stderr)
        diff = subprocess.run([exe, "compare", path + ":x", path + ":y", "--rtol", "0", "--atol", "0"],
                              capture_output=True, text=True)
        self.assertEqual(diff.returncode, 1, diff.stdout + diff.stderr)
        self.assertIn("Mismatched elements: 4 / 4 (100.0%)", diff.stdout)


if __name__ == "__main__":
    unittest.main()
