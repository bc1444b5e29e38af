"""judge's two report.h5 readers (h5py, h5dump) return the same statistics, bit for bit."""
import math
import os
import unittest

from util import HAVE_H5DUMP, HAVE_H5PY, REPO, TmpTestCase

from precprobe import judge, read_report


def same(x, y):
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return type(x) is type(y) and x == y


class TestReaders(TmpTestCase):
    @unittest.skipUnless(HAVE_H5PY and HAVE_H5DUMP, "needs both h5py and h5dump to compare them")
    def test_h5py_and_h5dump_agree(self):
        import shutil
        shutil.copy(os.path.join(REPO, "cases", "external-attention.toml"), self.tmp)
        shutil.copytree(os.path.join(REPO, "cases", "external"), os.path.join(self.tmp, "external"))
        j = judge(os.path.join(self.tmp, "external-attention.toml"))
        a = read_report(j.reports[0], "h5py")
        b = read_report(j.reports[0], "h5dump")
        self.assertEqual(a[0], b[0])
        self.assertEqual(a[2], b[2])
        self.assertEqual(len(a[1]), 22)
        self.assertEqual(len(a[1]), len(b[1]))
        for x, y in zip(a[1], b[1]):
            self.assertEqual(set(x), set(y))
            for k in x:
                self.assertTrue(same(x[k], y[k]), f"{x['variant']}.{x['tensor']}.{x['against']}.{k}: {x[k]!r} != {y[k]!r}")
        # doubles bit for bit: a value with 17 significant digits survives the text path
        self.assertTrue(any(len(repr(r["mean_abs"]).replace(".", "").lstrip("0")) >= 16 for r in b[1]))

    @unittest.skipUnless(HAVE_H5DUMP, "h5dump absent")
    def test_nan_inf_through_h5dump(self):
        # comparisons with NaN and Inf statistics (fp16 overflow in bloom-prescale) through the text path
        import shutil
        case = os.path.join(self.tmp, "bp.toml")
        shutil.copy(os.path.join(REPO, "cases", "bloom-prescale.toml"), case)
        j = judge(case, reader="h5dump")
        post = j.get("post-storage", "c")
        self.assertGreater(post["inf_count"], 0)
        self.assertEqual(post["max_abs_diff"], math.inf)
        self.assertTrue(math.isnan(j.get("pre-storage", "c", "post-storage")["max_rel_diff"]))
        if HAVE_H5PY:
            k = read_report(j.reports[0], "h5py")[1]
            t = read_report(j.reports[0], "h5dump")[1]
            for x, y in zip(k, t):
                for key in x:
                    self.assertTrue(same(x[key], y[key]), key)

    def test_no_reader_says_what_to_install(self):
        from precprobe import PrecprobeError
        old = os.environ["PATH"]
        os.environ["PATH"] = self.tmp   # no h5dump there
        try:
            with self.assertRaisesRegex(PrecprobeError, r"install h5py \(pip install h5py, Debian python3-h5py\) or hdf5-tools"):
                read_report(os.path.join(REPO, "reports", "baselines", "quickstart.h5"), "h5dump")
        finally:
            os.environ["PATH"] = old


if __name__ == "__main__":
    unittest.main()
