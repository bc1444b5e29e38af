"""pytest plugin (entry point pytest11 "precprobe"): `pytest --precprobe-baseline DIR` keeps one
baseline report per test in DIR (written on the first run, checked after), and the fixture
`precprobe` gives each test assert_precision() with its own temporary folder and name."""
import re

import pytest

from . import _assertion as assertion


def pytest_addoption(parser):
    group = parser.getgroup("precprobe", "precprobe: numerical precision of your kernels")
    group.addoption("--precprobe-baseline", metavar="DIR", default=None,
                    help="folder of baseline reports (TEST-NAME.h5): assert_precision also fails when a "
                         "statistic got worse than its baseline; missing ones are written")


def pytest_configure(config):
    assertion.session_baseline = config.getoption("precprobe_baseline", None)


def pytest_unconfigure(config):
    assertion.session_baseline = None


class _Precprobe:
    def __init__(self, name, tmp_path, baseline):
        self.name, self.tmp_path, self.baseline = name, tmp_path, baseline

    def assert_precision(self, fn, inputs, max_mismatch=0.0, against="reference", **kwargs):
        kwargs.setdefault("name", self.name)
        kwargs.setdefault("out_dir", self.tmp_path / "precprobe")
        kwargs.setdefault("baseline", self.baseline)
        return assertion.assert_precision(fn, inputs, max_mismatch, against, **kwargs)


@pytest.fixture
def precprobe(request, tmp_path):
    """assert_precision bound to this test: its name names the case and the baseline file."""
    name = re.sub(r"[^A-Za-z0-9_+=-]+", "-", request.node.name).strip("-") or "kernel"
    return _Precprobe(name, tmp_path, request.config.getoption("precprobe_baseline", None))
