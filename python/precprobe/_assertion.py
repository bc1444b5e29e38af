"""assert_precision(): capture, judge, and fail with torch's message (an AssertionError) when
your kernel's outputs mismatch more than you allow, or regressed against a baseline."""
import os
import re
import tempfile

from ._capture import capture
from ._judge import judge

# set by the pytest plugin from --precprobe-baseline DIR
session_baseline = None


class PrecisionError(AssertionError):
    """assert_precision's failure; `judgement` holds every statistic of the run."""

    def __init__(self, message, judgement=None):
        super().__init__(message)
        self.judgement = judgement


def _default_name(fn):
    test = os.environ.get("PYTEST_CURRENT_TEST", "")
    raw = test.split(" ")[0].split("::")[-1] if test else getattr(fn, "__name__", "kernel")
    name = re.sub(r"[^A-Za-z0-9_+=-]+", "-", raw).strip("-")
    return name or "kernel"


def assert_precision(fn, inputs, max_mismatch=0.0, against="reference", *, name=None, tensors=None,
                     baseline=None, out_dir=None, **capture_kwargs):
    """Runs `fn` on `inputs` (see capture()), judges its outputs and raises PrecisionError with
    torch's message when an output's mismatch fraction against `against` ("reference": the exact
    answer, or an emulated variant: attention "flash"/"unfused", gemm "fp32-acc"/"storage-acc")
    exceeds max_mismatch, or when a statistic regressed against the baseline (a folder of
    CASE-NAME.h5, written on the first run; default: pytest's --precprobe-baseline). Returns the
    Judgement. name: the case name (default: the running pytest test's name, else fn's name);
    tensors: the outputs to check (default: all captured)."""
    name = name or _default_name(fn)
    if baseline is None:
        baseline = session_baseline
    if out_dir is None:
        out_dir = tempfile.mkdtemp(prefix=f"precprobe-{name}-")
    case = capture(name, fn, inputs, out_dir, **capture_kwargs)
    j = judge(case, baseline=baseline)
    variant = capture_kwargs.get("variant") or name
    rows = [r for r in j.find(variant=variant, against=against) if tensors is None or r["tensor"] in tensors]
    if not rows:
        raise ValueError(f"no comparison of {variant} against {against!r}: against is 'reference' or one of "
                         + ", ".join(sorted({r['against'] for r in j.find(variant=variant)} - {"reference"})))
    failures = []
    for r in rows:
        if not r["mismatch_fraction"] <= max_mismatch:  # NaN (no elements) fails too
            failures.append(f"{variant}.{r['tensor']} vs {against}: mismatch {r['mismatch_fraction']:.4%} > "
                            f"max_mismatch {max_mismatch:.4%} (rtol {r['rtol']:g}, atol {r['atol']:g}, "
                            f"max {r['max_ulp']:.4g} ulp)\n{r['message']}")
    if j.regressions:
        failures.append(f"regressed against the baseline {baseline}:\n" + "\n".join(j.regressions))
    if failures:
        raise PrecisionError("\n\n".join(failures) + f"\n\n(case and reports: {case.parent})", j)
    return j
