"""capture() of an optimizer step: numpy step functions (make test, numpy only) and, where torch
is importable, torch.optim.AdamW on the CPU in fp32 judged against the emulated variant
torch-cpu (update = "torch", torch_kernels = "cpu") of the same hyperparameters, bit for bit."""
import os
import tomllib
import unittest

from util import HAVE_TORCH, TmpTestCase, np, rng

from precprobe import capture, judge, load_safetensors

HYPER = {"lr": 1e-2, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}


def adamw_float64(theta, grad, state):
    """AdamW (torch.optim.AdamW's algorithm) in binary64, θ, m, v rounded to float32 once per step:
    close to the exact trajectory, not any kernel's bits."""
    t = state["step"]
    lr, (b1, b2), eps, wd = HYPER["lr"], HYPER["betas"], HYPER["eps"], HYPER["weight_decay"]
    g = grad.astype(np.float64)
    m = state.get("exp_avg", np.zeros_like(theta)).astype(np.float64)
    v = state.get("exp_avg_sq", np.zeros_like(theta)).astype(np.float64)
    th = theta.astype(np.float64) * (1 - lr * wd)
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    th = th - lr / (1 - b1 ** t) * m / (np.sqrt(v) / np.sqrt(1 - b2 ** t) + eps)
    state["exp_avg"], state["exp_avg_sq"] = m.astype(np.float32), v.astype(np.float32)
    return th.astype(np.float32)


def adamw_no_bias_correction(theta, grad, state):
    """A broken AdamW (the bias corrections forgotten): far from the exact answer."""
    lr, (b1, b2), eps, wd = HYPER["lr"], HYPER["betas"], HYPER["eps"], HYPER["weight_decay"]
    g = grad.astype(np.float64)
    m = state.get("m", np.zeros_like(theta)).astype(np.float64) * b1 + (1 - b1) * g
    v = state.get("v", np.zeros_like(theta)).astype(np.float64) * b2 + (1 - b2) * g * g
    state["m"], state["v"] = m.astype(np.float32), v.astype(np.float32)
    return (theta.astype(np.float64) * (1 - lr * wd) - lr * m / (np.sqrt(v) + eps)).astype(np.float32)


class TestCaptureOptimizerNumpy(TmpTestCase):
    def setUp(self):
        super().setUp()
        r = rng(3)
        self.theta0 = r.standard_normal((3, 8)).astype(np.float32)
        self.grads = (r.standard_normal((6, 3, 8)) * 1e-2).astype(np.float32)

    def test_case_file_and_tensors(self):
        case = capture("opt", adamw_float64, {"theta0": self.theta0, "grads": self.grads}, self.tmp, params=HYPER)
        with open(case, "rb") as f:
            c = tomllib.load(f)
        self.assertEqual(c["case"]["op"], "adamw")
        self.assertEqual(c["op"], {"n": 24, "steps": 6, "lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8,
                                   "weight_decay": 0.01, "gradients": "input"})
        self.assertEqual(c["inputs"], {"theta0": {"file": "opt.safetensors:theta0"},
                                       "grads": {"file": "opt.safetensors:grads"}})
        self.assertEqual(c["knobs"], {"param_format": "fp32", "momentum_format": "fp32", "variance_format": "fp32"})
        self.assertEqual(c["variants"]["opt"]["external"],
                         {"theta": "opt.safetensors:theta", "m": "opt.safetensors:m", "v": "opt.safetensors:v"})
        self.assertEqual(c["variants"]["torch-cpu"], {"update": "torch", "torch_kernels": "cpu"})
        self.assertEqual(c["compare"]["pairs"], [["opt", "torch-cpu"], ["opt", "torch-cuda"], ["opt", "anyprecision"]])
        files = load_safetensors(os.path.join(self.tmp, "opt.safetensors"))
        self.assertTrue(np.array_equal(files["theta0"].data, self.theta0.reshape(24)))
        self.assertTrue(np.array_equal(files["grads"].data, self.grads.reshape(6, 24)))
        # the outputs are what the step function computed, flattened
        state, th = {}, self.theta0
        for t in range(6):
            state["step"] = t + 1
            th = adamw_float64(th, self.grads[t], state)
        self.assertTrue(np.array_equal(files["theta"].data, th.reshape(24)))
        self.assertTrue(np.array_equal(files["v"].data, state["exp_avg_sq"].reshape(24)))

    def test_judged_against_the_exact_trajectory(self):
        good = judge(capture("good", adamw_float64, {"theta0": self.theta0, "grads": list(self.grads)}, self.tmp,
                             params=HYPER), device="cpu")
        r = good.get("good", "theta")
        self.assertEqual(r["mismatched"], 0)
        # θ rounded from binary64 once per step (½ ulp each, 6 steps); m, v in fp32 move it far less
        self.assertLessEqual(r["max_ulp"], 0.5 * 6 + 0.5)
        self.assertEqual(good.get("good", "m")["mismatched"], 0)
        bad = judge(capture("bad", adamw_no_bias_correction, {"theta0": self.theta0, "grads": self.grads}, self.tmp,
                            params=HYPER), device="cpu")
        r = bad.get("bad", "theta")
        self.assertGreater(r["mismatched"], 0)
        self.assertGreater(r["max_abs_error"], 1e-3)  # lr·(1/(1 − β1) − 1) scale errors
        self.assertIn("Tensor-likes are not close!", r["message"])
        # m and v were named "m"/"v" in the state: still the outputs m and v
        self.assertIsNotNone(bad.get("bad", "v"))

    def test_theta_only(self):
        def sgd(theta, grad, state):
            return (theta - np.float32(0.1) * grad).astype(np.float32)
        case = capture("sgd", sgd, {"theta0": self.theta0, "grads": self.grads}, self.tmp, params={"lr": 0.1})
        with open(case, "rb") as f:
            c = tomllib.load(f)
        self.assertEqual(c["variants"]["sgd"]["external"], {"theta": "sgd.safetensors:theta"})
        self.assertEqual(c["knobs"], {"param_format": "fp32"})
        j = judge(case, device="cpu")
        self.assertGreater(j.get("sgd", "theta")["mismatched"], 0)  # SGD is not AdamW
        self.assertEqual([r["tensor"] for r in j.find(variant="sgd", against="reference")], ["theta"])

    def test_mistakes(self):
        ins = {"theta0": self.theta0, "grads": self.grads}
        with self.assertRaisesRegex(ValueError, "hides its hyperparameters"):
            capture("x", adamw_float64, ins, self.tmp)
        with self.assertRaisesRegex(ValueError, r"grads\[2\] has shape \(3, 7\)"):
            capture("x", adamw_float64, {"theta0": self.theta0, "grads": [g for g in self.grads[:2]] +
                                         [self.grads[2][:, :7]]}, self.tmp, params=HYPER)
        with self.assertRaisesRegex(ValueError, "one tensor"):
            capture("x", adamw_float64, {"theta0": self.theta0, "grads": self.grads[:, :2]}, self.tmp, params=HYPER)
        with self.assertRaisesRegex(ValueError, "gradient has θ's dtype"):
            capture("x", adamw_float64, {"theta0": self.theta0, "grads": self.grads.astype(np.float16)}, self.tmp,
                    params=HYPER)
        with self.assertRaisesRegex(ValueError, "momentum"):
            capture("x", adamw_float64, ins, self.tmp, params=dict(HYPER, momentum=0.9))
        with self.assertRaisesRegex(ValueError, "adamw takes inputs theta0, grads"):
            capture("x", adamw_float64, {"theta0": self.theta0}, self.tmp, op="adamw", params=HYPER)


@unittest.skipUnless(HAVE_TORCH, "torch not importable by this interpreter (PRECPROBE_PYTHON may name one that has it)")
class TestCaptureTorchAdamW(TmpTestCase):
    """torch.optim.AdamW (CPU, fp32, single-tensor: torch's default on the CPU) on recorded
    gradients against the emulation of torch's CPU kernels. This torch build's vectorised fp32
    sqrt is not correctly rounded (tools/adamw_torch_parity.py), so bit-equality is checked with
    Tensor.sqrt replaced by a correctly rounded one (binary64 sqrt rounded once), and with torch's
    own sqrt m and v are still bit-equal (no sqrt on their path)."""

    def setUp(self):
        super().setUp()
        import torch
        g = torch.Generator().manual_seed(5)
        self.theta0 = torch.randn(200, generator=g)            # 200: vectorised chunks and a tail
        self.grads = torch.randn(25, 200, generator=g) * 1e-2
        self.real_sqrt = torch.Tensor.sqrt

    def tearDown(self):
        import torch
        torch.Tensor.sqrt = self.real_sqrt
        super().tearDown()

    def judged(self, name, optimizer, **kw):
        case = capture(name, optimizer, {"theta0": self.theta0, "grads": self.grads}, self.tmp, **kw)
        return judge(case, device="cpu")

    def test_adamw_bit_equal_to_torch_cpu_emulation(self):
        import torch
        real = self.real_sqrt
        # correctly rounded: binary64 sqrt (exact enough: 53 ≥ 2·24 + 2 bits) rounded once to fp32
        torch.Tensor.sqrt = lambda t: real(t.double()).to(t.dtype) if t.dtype != torch.float64 else real(t)
        j = self.judged("torch-adamw", lambda ps: torch.optim.AdamW(ps, lr=1e-2, betas=(0.9, 0.999), eps=1e-8,
                                                                    weight_decay=0.01))
        for tensor in ("theta", "m", "v"):
            r = j.get("torch-adamw", tensor, against="torch-cpu")
            self.assertEqual(r["max_abs_error"], 0.0, tensor)
            self.assertEqual(r["mismatched"], 0, tensor)
        # and not trivially: the CUDA kernels' flavour and AnyPrecisionAdamW's order differ in θ
        self.assertGreater(j.get("torch-adamw", "theta", against="anyprecision")["max_abs_error"], 0.0)
        self.assertGreater(j.get("torch-adamw", "theta", against="reference")["max_abs_error"], 0.0)

    def test_adamw_stock_sqrt(self):
        import torch
        j = self.judged("stock", torch.optim.AdamW, params={"lr": 1e-2, "weight_decay": 0.01})
        with open(os.path.join(self.tmp, "stock.toml"), "rb") as f:
            c = tomllib.load(f)
        self.assertEqual((c["op"]["lr"], c["op"]["weight_decay"], c["op"]["beta2"]), (0.01, 0.01, 0.999))
        for tensor in ("m", "v"):
            self.assertEqual(j.get("stock", tensor, against="torch-cpu")["max_abs_error"], 0.0, tensor)
        r = j.get("stock", "theta", against="torch-cpu")
        self.assertEqual(r["mismatched"], 0)          # torch's sqrt: close, not always the same bits
        # within 2 ulps at θ's scale (one near-zero θ can show more ulps of its own)
        theta = load_safetensors(os.path.join(self.tmp, "stock.safetensors"))["theta"].data
        self.assertLessEqual(r["max_abs_error"], 2 * float(np.spacing(np.abs(theta).max())))
        self.assertEqual(torch.Tensor.sqrt, self.real_sqrt)

    def test_refusals(self):
        import torch
        with self.assertRaisesRegex(ValueError, "L2"):
            capture("x", lambda ps: torch.optim.Adam(ps, weight_decay=0.1), {"theta0": self.theta0,
                                                                             "grads": self.grads}, self.tmp)
        with self.assertRaisesRegex(ValueError, "amsgrad"):
            capture("x", lambda ps: torch.optim.AdamW(ps, amsgrad=True), {"theta0": self.theta0,
                                                                          "grads": self.grads}, self.tmp)
        with self.assertRaisesRegex(TypeError, "factory"):
            capture("x", lambda ps: None, {"theta0": self.theta0, "grads": self.grads}, self.tmp)


if __name__ == "__main__":
    unittest.main()
