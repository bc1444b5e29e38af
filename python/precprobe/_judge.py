"""judge(): run `precprobe run` (and `precprobe check` against a baseline) on a case and return
the statistics of every comparison, read from the run's report.h5.

Why report.h5: the CLI prints no machine-readable output on stdout (its summary is rounded text);
report.h5 is its documented, versioned store of every statistic bit for bit (reports/README.md).
It is read with h5py when importable (a dependency of the pip package); without h5py, with
`h5dump` (HDF5's own tool, hdf5-tools: installed with the CLI's build dependencies) printing
every double with %.17g, which round-trips binary64: both readers return the same dicts
(python/tests checks it). torch's message of each comparison comes from report.txt.
"""
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote

from ._bin import PrecprobeError, run_cli

SCHEMA_VERSION = 1


class Judgement(list):
    """A list of dicts, one per comparison in the run's order: case, variant, tensor, against,
    message (torch's, as report.txt prints it) and every attribute of reports/README.md's
    statistics table (mismatch_fraction, max_abs_diff, max_ulp, ...). Also:
    gate (a dict per rule: case, rule, passed, detail), passed (every gate rule held and no
    statistic regressed against the baseline), regressions (the check's lines, one per regressed
    statistic), baseline_written (baselines created by this call), reports (report.h5 paths)."""

    def __init__(self, rows=()):
        super().__init__(rows)
        self.gate = []
        self.regressions = []
        self.baseline_written = []
        self.reports = []
        self.check_output = ""
        self.passed = True

    def find(self, variant=None, tensor=None, against=None):
        """The comparisons matching every given name."""
        return [r for r in self if (variant is None or r["variant"] == variant)
                and (tensor is None or r["tensor"] == tensor) and (against is None or r["against"] == against)]

    def get(self, variant, tensor, against="reference"):
        """The one comparison (variant, tensor, against); KeyError if absent."""
        rows = self.find(variant, tensor, against)
        if not rows:
            raise KeyError(f"no comparison {variant}.{tensor} vs {against}")
        return rows[0]

    def to_pandas(self):
        """The comparisons as a pandas DataFrame (needs pandas)."""
        import pandas as pd
        return pd.DataFrame(list(self))

    def __repr__(self):
        return f"Judgement({len(self)} comparisons, passed={self.passed})"


# ---- report.h5 through h5py ----------------------------------------------------------------

def _py(v):
    """h5py attribute values as plain Python: str, int, float, tuples for arrays."""
    import numpy as np
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, np.ndarray):
        return tuple(_py(x) for x in v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    return v


def _read_h5py(path):
    import h5py
    with h5py.File(path, "r") as f:
        root = {k: _py(v) for k, v in f.attrs.items()}
        rows = []
        for vlink, vg in f["variants"].items():
            if "stats" not in vg:
                continue
            for tlink, tg in vg["stats"].items():
                for alink, sg in tg.items():
                    row = {"variant": unquote(vlink), "tensor": unquote(tlink), "against": unquote(alink)}
                    row.update((k, _py(v)) for k, v in sg.attrs.items())
                    rows.append(row)
        gate = []
        if "gate" in f:
            for rec in f["gate"][()]:
                gate.append({"rule": _py(rec["rule"]), "passed": bool(rec["passed"]), "detail": _py(rec["detail"])})
    return root, rows, gate


# ---- report.h5 through h5dump (no h5py) ----------------------------------------------------

_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|([^\s,{}]+)')
_ESC = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def _unescape(s):
    def rep(m):
        e = m.group(1)
        if e in _ESC:
            return _ESC[e]
        if re.fullmatch(r"[0-7]{3}", e):
            return chr(int(e, 8))
        return e
    raw = re.sub(r"\\([0-7]{3}|.)", rep, s)
    # h5dump prints non-ASCII bytes as octal escapes: the code points here are bytes
    return raw.encode("latin-1", "surrogateescape").decode("utf-8", "replace") if any(ord(c) > 127 for c in raw) else raw


def _number(tok, kind):
    if kind == "float":
        return float(tok)
    return int(tok)


def _values(text, kind):
    text = re.sub(r"\(\d+(?:,\d+)*\):", " ", text)
    out = []
    for m in _TOKEN.finditer(text):
        if m.group(1) is not None:
            out.append(_unescape(m.group(1)))
        else:
            out.append(_number(m.group(2), kind))
    return out


def _h5dump(path, *args):
    exe = shutil.which("h5dump")
    if not exe:
        raise PrecprobeError("judge reads report.h5 with h5py or h5dump: install h5py (pip install h5py, "
                             "Debian python3-h5py) or hdf5-tools")
    p = subprocess.run([exe, "-w", "0", "-m", "%.17g", *args, str(path)], capture_output=True, text=True,
                       errors="surrogateescape")
    if p.returncode != 0:
        raise PrecprobeError(f"h5dump {path}: {p.stderr.strip()}")
    return p.stdout


def _read_h5dump(path):
    """The root attributes and every stats group's attributes, from `h5dump -A`."""
    groups = {}   # group path -> {attr: value}
    stack = []    # (kind, name) of each open brace
    attr = None   # [name, kind, scalar, data text] of the attribute being read
    in_data = False
    for line in _h5dump(path, "-A").splitlines():
        s = line.strip()
        m = re.match(r'^(GROUP|DATASET|ATTRIBUTE) "((?:[^"\\]|\\.)*)" \{$', s)
        if in_data:
            if s == "}":
                in_data = False
                stack.pop()
            else:
                attr[3] += " " + s
            continue
        if m:
            stack.append((m.group(1), _unescape(m.group(2))))
            if m.group(1) == "ATTRIBUTE":
                attr = [stack[-1][1], "int", True, ""]
            continue
        if attr is not None and s.startswith("DATATYPE"):
            t = s.split()[1]
            attr[1] = "str" if t.startswith("H5T_STRING") else "float" if t.startswith("H5T_IEEE") else "int"
        elif attr is not None and s.startswith("DATASPACE"):
            attr[2] = "SCALAR" in s
        elif attr is not None and s == "DATA {":
            in_data = True
            stack.append(("DATA", ""))
            continue
        if s.endswith("{"):
            stack.append(("", ""))
        elif s == "}" or s.startswith("}"):
            kind, name = stack.pop() if stack else ("", "")
            if kind == "ATTRIBUTE" and attr is not None:
                names = [n for k, n in stack if k in ("GROUP", "DATASET")]
                gpath = "/" + "/".join(names[1:])  # names[0] is the root "/"
                vals = _values(attr[3], attr[1])
                groups.setdefault(gpath, {})[attr[0]] = vals[0] if attr[2] and vals else tuple(vals)
                attr = None
    root = groups.get("/", {})
    rows = []
    for gpath, attrs in groups.items():
        parts = gpath.split("/")  # "", "variants", V, "stats", T, A
        if len(parts) == 6 and parts[1] == "variants" and parts[3] == "stats":
            row = {"variant": unquote(parts[2]), "tensor": unquote(parts[4]), "against": unquote(parts[5])}
            row.update(attrs)
            rows.append(row)
    gate = []
    text = _h5dump(path, "-d", "/gate")
    data = text.split("DATA {", 1)[1] if "DATA {" in text else ""
    vals = _values(data, "int")
    for i in range(0, len(vals) - 2, 3):
        gate.append({"rule": vals[i], "passed": bool(vals[i + 1]), "detail": vals[i + 2]})
    return root, rows, gate


def have_h5py():
    try:
        import h5py  # noqa: F401
        return True
    except ImportError:
        return False


def read_report(path, reader=None):
    """(root attributes, comparisons, gate rules) of a report.h5; reader "h5py" or "h5dump"
    (default: h5py when importable)."""
    reader = reader or ("h5py" if have_h5py() else "h5dump")
    root, rows, gate = (_read_h5py if reader == "h5py" else _read_h5dump)(path)
    if root.get("schema_version") != SCHEMA_VERSION:
        raise PrecprobeError(f"{path}: report schema version {root.get('schema_version')}, this package reads {SCHEMA_VERSION}")
    for r in rows:
        for k, v in list(r.items()):  # multi-indices and shapes are tuples in both readers
            if (k == "shape" or k.endswith("_index")) and not k.endswith("flat_index") and not isinstance(v, tuple):
                r[k] = (v,)
    rows.sort(key=lambda r: r["order"])
    return root, rows, gate


# ---- report.txt: torch's messages ----------------------------------------------------------

_HEAD = re.compile(r"^== (.+?): (.+?) vs (.+?) \(rtol [^,]+, atol [^)]+\) ==$")


def read_messages(report_txt):
    """{(variant, tensor, against): torch's message} from a report.txt."""
    out = {}
    try:
        lines = Path(report_txt).read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    i = 0
    while i < len(lines):
        m = _HEAD.match(lines[i])
        i += 1
        if not m:
            continue
        msg = []
        while i < len(lines) and lines[i].strip() and not _HEAD.match(lines[i]):
            msg.append(lines[i])
            i += 1
        # torch's message is its first paragraph plus, when not close, the three lines after
        # the blank line ("Mismatched elements", "Greatest absolute/relative difference")
        if msg and msg[0].startswith("Tensor-likes are not close"):
            msg.append("")
            i += 1
            while i < len(lines) and lines[i].startswith(("Mismatched elements", "Greatest ")):
                msg.append(lines[i])
                i += 1
        out[(m.group(1), m.group(2), m.group(3))] = "\n".join(msg)
    return out


def _cases(case_or_dir):
    p = Path(case_or_dir)
    if p.is_dir():
        cases = sorted(p.glob("*.toml"))
        if not cases:
            raise PrecprobeError(f"{p}: no case files (*.toml)")
        return cases
    if not p.is_file():
        raise PrecprobeError(f"{p}: no such case file or folder")
    return [p]


def judge(case_or_dir, baseline=None, *, out_dir=None, device=None, threads=None, reader=None):
    """Runs `precprobe run` on a case file (or every *.toml in a folder) and returns a Judgement:
    one dict of statistics per comparison (see Judgement). With `baseline` (a report.h5, or a
    folder holding CASE-NAME.h5 per case) it also runs `precprobe check --report` against it; a
    baseline missing from the folder is written from this run (baseline_written), as
    `precprobe baseline` would. Reports go to out_dir/CASE-NAME/ (default: beside the case,
    CASE-STEM.report/). A case the CLI refuses raises PrecprobeError with its message."""
    result = Judgement()
    opts = ["-q"]
    if device:
        opts += ["--device", device]
    if threads:
        opts += ["--threads", str(threads)]
    for case in _cases(case_or_dir):
        out = Path(out_dir) / case.stem if out_dir else case.with_name(case.stem + ".report")
        p = run_cli(["run", case, "--out", out] + opts)
        h5 = out / "report.h5"
        root, rows, gate = read_report(h5, reader)
        name = root.get("case_name", case.stem)
        msgs = read_messages(out / "report.txt")
        for r in rows:
            r["case"] = name
            r["message"] = msgs.get((r["variant"], r["tensor"], r["against"]), "")
            result.append(r)
        result.gate += [dict(g, case=name) for g in gate]
        result.reports.append(str(h5))
        if p.returncode != 0 or not all(g["passed"] for g in gate):
            result.passed = False
        if baseline is not None:
            b = Path(baseline)
            if b.is_dir() or not b.suffix:
                b.mkdir(parents=True, exist_ok=True)
                b = b / f"{name}.h5"
            if not b.exists():
                shutil.copyfile(h5, b)  # a baseline is a report.h5 (precprobe baseline writes the same)
                result.baseline_written.append(str(b))
            else:
                c = run_cli(["check", case, "--baseline", b, "--report", h5, "-q"])
                result.check_output += c.stdout + c.stderr
                if c.returncode != 0:
                    result.passed = False
                    result.regressions += [ln for ln in (c.stdout + c.stderr).splitlines()
                                           if ln.strip() and not ln.startswith("check ")]
    return result
