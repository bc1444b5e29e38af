"""assert_precision() and the pytest plugin (run through python3 -m pytest when pytest is importable)."""
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
import unittest

from util import PKG_ROOT, TmpTestCase, np, rng

from precprobe import PrecisionError, assert_precision, find_binary

try:
    import pytest  # noqa: F401
    HAVE_PYTEST = True
except ImportError:
    HAVE_PYTEST = False


def inputs():
    r = rng(5)
    return {"a": r.standard_normal((1, 16, 64)).astype(np.float16), "b": r.standard_normal((1, 64, 16)).astype(np.float16)}


def good(a, b):
    return (a.astype(np.float64) @ b).astype(np.float16)


def bad(a, b):  # a systematic error of about 1%: torch's message must show it
    return (a.astype(np.float64) @ b * 1.01).astype(np.float16)


class TestAssertPrecision(TmpTestCase):
    def test_pass(self):
        j = assert_precision(good, inputs(), name="good", out_dir=self.tmp)
        self.assertEqual(j.get("good", "c")["mismatched"], 0)
        assert_precision(good, inputs(), against="fp32-acc", name="good", out_dir=self.tmp)

    def test_fails_with_torch_message(self):
        with self.assertRaises(PrecisionError) as cm:
            assert_precision(bad, inputs(), max_mismatch=0.01, name="bad", out_dir=self.tmp)
        msg = str(cm.exception)
        self.assertIsInstance(cm.exception, AssertionError)
        self.assertRegex(msg, r"^bad\.c vs reference: mismatch \d+\.\d{4}% > max_mismatch 1\.0000%")
        self.assertIn("\nTensor-likes are not close!\n\nMismatched elements: ", msg)
        self.assertIn("\nGreatest absolute difference: ", msg)
        self.assertIn("(up to 0.001 allowed)", msg)
        self.assertIsNotNone(cm.exception.judgement)
        # a generous bound passes the same kernel
        assert_precision(bad, inputs(), max_mismatch=1.0, name="bad", out_dir=self.tmp)

    def test_unknown_against(self):
        with self.assertRaisesRegex(ValueError, "fp32-acc, storage-acc"):
            assert_precision(good, inputs(), against="flash", name="x", out_dir=self.tmp)

    def test_baseline_regression(self):
        base = os.path.join(self.tmp, "base")
        assert_precision(good, inputs(), name="k", out_dir=os.path.join(self.tmp, "1"), baseline=base)
        self.assertTrue(os.path.isfile(os.path.join(base, "k.h5")))
        with self.assertRaisesRegex(PrecisionError, r"regressed against the baseline .*\nk c vs reference: mismatch_fraction 0\.0 -> "):
            assert_precision(bad, inputs(), max_mismatch=1.0, name="k", out_dir=os.path.join(self.tmp, "2"), baseline=base)


PLUGIN_TESTS = '''
import numpy as np
import precprobe

def inputs():
    r = np.random.default_rng(5)
    return {"a": r.standard_normal((1, 16, 64)).astype(np.float16), "b": r.standard_normal((1, 64, 16)).astype(np.float16)}

def test_fixture_good(precprobe):
    precprobe.assert_precision(lambda a, b: (a.astype(np.float64) @ b).astype(np.float16), inputs())

def test_module_level_good():
    precprobe.assert_precision(lambda a, b: (a.astype(np.float64) @ b).astype(np.float16), inputs())

def test_fixture_bad(precprobe):
    precprobe.assert_precision(lambda a, b: (a.astype(np.float64) @ b * 1.01).astype(np.float16), inputs(),
                               max_mismatch=0.01)
'''


@unittest.skipUnless(HAVE_PYTEST, "pytest not importable by this interpreter: the plugin's function is tested directly above")
class TestPytestPlugin(TmpTestCase):
    def pytest(self, *args, plugin_flag=True, python=sys.executable, env_path=PKG_ROOT, **extra_env):
        env = dict(os.environ, PYTHONPATH=env_path, PYTHONDONTWRITEBYTECODE="1", **extra_env)
        env.pop("PYTEST_CURRENT_TEST", None)
        cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        if plugin_flag:
            cmd += ["-p", "precprobe.pytest_plugin"]
        return subprocess.run(cmd + list(args), cwd=self.tmp, env=env, capture_output=True, text=True)

    def test_plugin(self):
        with open(os.path.join(self.tmp, "test_user.py"), "w") as f:
            f.write(PLUGIN_TESTS)
        base = os.path.join(self.tmp, "baselines")
        p = self.pytest("test_user.py", "--precprobe-baseline", base)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"1 failed, 2 passed")
        self.assertIn("test_fixture_bad", p.stdout)
        self.assertIn("Tensor-likes are not close!", p.stdout)
        self.assertIn("Mismatched elements: ", p.stdout)
        # one baseline per test, named by the test
        self.assertEqual(sorted(os.listdir(base)), ["test_fixture_bad.h5", "test_fixture_good.h5", "test_module_level_good.h5"])
        # the second run checks against them
        p = self.pytest("test_user.py", "-k", "good", "--precprobe-baseline", base)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        p = self.pytest("--help")
        self.assertIn("--precprobe-baseline=DIR", p.stdout)

    def test_entry_point_after_pip_install(self):
        # `pip install ./python` into a fresh venv (no network: --no-index, the interpreter's own
        # setuptools); pytest then loads the plugin through its pytest11 entry point, without -p
        with open(os.path.join(PKG_ROOT, "pyproject.toml"), "rb") as f:
            meta = tomllib.load(f)
        self.assertEqual(meta["project"]["entry-points"]["pytest11"], {"precprobe": "precprobe.pytest_plugin"})
        try:
            import setuptools  # noqa: F401
            import wheel  # noqa: F401
            import venv  # noqa: F401
        except ImportError as e:
            self.skipTest(f"pip install test skipped: {e}")
        src = os.path.join(self.tmp, "src")
        shutil.copytree(PKG_ROOT, src, ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
        venv_dir = os.path.join(self.tmp, "venv")
        v = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv_dir], capture_output=True, text=True)
        if v.returncode != 0:
            self.skipTest(f"pip install test skipped: no venv ({v.stderr.strip()[:200]})")
        py = os.path.join(venv_dir, "bin", "python")
        # --system-site-packages gives the base interpreter's packages, not those of a venv this
        # test runs in: where the new venv lacks setuptools or wheel, pip cannot build offline
        w = subprocess.run([py, "-c", "import setuptools, wheel"], capture_output=True, text=True)
        if w.returncode != 0:
            self.skipTest(f"pip install test skipped: the new venv cannot import setuptools and wheel "
                          f"({w.stderr.strip().splitlines()[-1][:200] if w.stderr.strip() else w.returncode})")
        p = subprocess.run([py, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index", "--no-deps", src],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(self.tmp, "test_user.py"), "w") as f:
            f.write(textwrap.dedent(PLUGIN_TESTS))
        # installed, the package finds the binary through PRECPROBE_BIN
        p = self.pytest("test_user.py", "-k", "good", plugin_flag=False, python=py, env_path="",
                        PRECPROBE_BIN=find_binary())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("2 passed", p.stdout)


if __name__ == "__main__":
    unittest.main()
