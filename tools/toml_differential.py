#!/usr/bin/env python3
"""toml_differential.py — checks precprobe's TOML reader (src/io/toml.c) against Python's tomllib.

usage (from anywhere; Python 3.11+ for tomllib, else it skips):
  python3 tools/toml_differential.py                      shipped documents + 3000 random ones
  python3 tools/toml_differential.py --random 20000 --mutations 20000 --seed 7
  python3 tools/toml_differential.py --write-expected     (re)writes tests/data/toml/valid/*.json
  python3 tools/toml_differential.py --bin build/rel/tests/test_toml   use a built test binary

The C side is `test_toml --dump FILE...` (tests/test_toml.c), built here with cc unless --bin
names one. Trees are compared as tagged JSON, keys in order, floats by their bits (every NaN
equal to every NaN). Checks:
  tests/data/toml/valid/        both accept, same tree (and NAME.json, the C test's expectation,
                                is tomllib's tree)
  tests/data/toml/invalid/      both reject; except that tomllib reads integers of any size, where
                                TOML 1.0 requires an error (reported as a known difference)
  tests/data/toml/unsupported/  valid TOML that precprobe refuses on purpose: tomllib accepts
  --random N                    N generated valid documents: both accept, same tree
  --mutations N                 N byte-level mutations of those: same verdict, same tree when
                                both accept; precprobe's deliberate refusals are counted apart
Exit status: 0 all agree (or skipped), 1 a disagreement, 2 bad usage or a build failure.
"""
import argparse
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "tests", "data", "toml")

# Messages of precprobe's deliberate refusals of valid TOML (toml.h lists them), and of the one
# case where tomllib is more lenient than TOML 1.0 (integers outside int64).
DELIBERATE = ("not supported", "nests deeper than", "too large for binary64")
TOMLLIB_LENIENT = ("is out of range",)


# ---- trees as tagged JSON ----------------------------------------------------------------------

def tag(v):
    if isinstance(v, dict):
        return {k: tag(x) for k, x in v.items()}
    if isinstance(v, list):
        return [tag(x) for x in v]
    if isinstance(v, bool):
        return {"type": "bool", "value": "true" if v else "false"}
    if isinstance(v, int):
        return {"type": "integer", "value": str(v)}
    if isinstance(v, float):
        if math.isnan(v):
            return {"type": "float", "value": "nan"}
        return {"type": "float", "value": "0x%016x" % struct.unpack("<Q", struct.pack("<d", v))[0]}
    if isinstance(v, str):
        return {"type": "string", "value": v}
    raise TypeError(f"unexpected {type(v).__name__} from tomllib")  # dates: not in valid/


def dumps(obj):
    """The C dump's exact format: compact, keys in order, UTF-8 left as is."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def tomllib_verdict(data):
    """('ok', tagged json) or ('err', message) for bytes data, as tomllib.load reads a file."""
    try:
        return "ok", dumps(tag(tomllib.loads(data.decode("utf-8"))))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        return "err", str(e)
    except TypeError as e:  # a date or time: precprobe refuses those
        return "ok-date", str(e)


# ---- the C side --------------------------------------------------------------------------------

def build_driver(tmp):
    cc = os.environ.get("CC", "cc")
    out = os.path.join(tmp, "test_toml")
    cmd = [cc, "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-D_DEFAULT_SOURCE", "-O1", "-g",
           "-ffp-contract=off", "-I" + os.path.join(REPO, "base"),
           "-I" + os.path.join(REPO, "src"),
           os.path.join(REPO, "tests", "test_toml.c"), os.path.join(REPO, "src", "io", "toml.c"),
           os.path.join(REPO, "src", "core", "nearest.c"), os.path.join(REPO, "base", "error.c"),
           "-o", out, "-lcmocka", "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write("building the dump driver failed:\n" + " ".join(cmd) + "\n" + r.stderr)
        sys.exit(2)
    return out


def c_verdicts(driver, paths):
    """{path: ('ok', json) | ('err', message)} from one run of the driver over many files."""
    res = {}
    for i in range(0, len(paths), 500):
        chunk = paths[i:i + 500]
        r = subprocess.run([driver, "--dump"] + chunk, capture_output=True)
        if r.returncode != 0:
            sys.stderr.write(f"the dump driver crashed (status {r.returncode}) on one of:\n  "
                             + "\n  ".join(chunk) + "\n" + r.stderr.decode(errors="replace"))
            sys.exit(1)
        lines = r.stdout.decode("utf-8").split("\n")
        for p, line in zip(chunk, lines):
            kind, _, rest = line.partition(" ")
            res[p] = ("ok" if kind == "OK" else "err", rest)
    return res


# ---- random valid documents ----------------------------------------------------------------------

class Gen:
    """Random valid TOML: a random tree written out in a random mix of styles (headers, [[ ]],
    dotted keys, inline tables, every string and number syntax, comments, CRLF)."""

    BARE = ["a", "b", "c", "key", "x1", "bare-key", "_u", "3", "1234", "true", "inf", "nan",
            "e", "-", "variants", "post-alpha", "lr"]

    def __init__(self, rng):
        self.r = rng

    # -- the tree --
    def key(self, used):
        r = self.r
        for _ in range(100):
            c = r.random()
            if c < 0.6:
                k = r.choice(self.BARE)
            elif c < 0.8:
                k = "".join(r.choice("abcdé中😀 .-_\"'\\#=[]\t") for _ in range(r.randint(0, 6)))
            else:
                k = "".join(r.choice("abcdefgh") for _ in range(r.randint(1, 8)))
            if k not in used and "\x00" not in k:
                used.add(k)
                return k
        k = "k%d" % r.randint(0, 10**9)
        used.add(k)
        return k

    def scalar(self):
        r = self.r
        c = r.random()
        if c < 0.25:
            return r.choice([0, 1, -1, 2**63 - 1, -2**63, r.randint(-2**63, 2**63 - 1),
                             r.randint(-1000, 1000), r.randint(0, 2**20)])
        if c < 0.5:
            return r.choice([0.0, -0.0, 1.5, math.inf, -math.inf, math.nan, 5e-324, 1e308,
                             r.uniform(-1e6, 1e6), r.random() * 10 ** r.randint(-300, 300),
                             struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0]])
        if c < 0.8:
            alphabet = "abc XYZ 019 é中😀\"'\\\t\n\r\b\f#=[]{}\x01\x1f\x7f\u2028"
            return "".join(r.choice(alphabet) for _ in range(r.randint(0, 12)))
        return r.random() < 0.5

    def tree(self, depth):
        r = self.r
        t, used = {}, set()
        for _ in range(r.randint(0, 5 if depth < 4 else 2)):
            k = self.key(used)
            c = r.random()
            if c < 0.55 or depth >= 5:
                t[k] = self.scalar()
            elif c < 0.7:
                t[k] = self.array(depth + 1)
            elif c < 0.9:
                t[k] = self.tree(depth + 1)
            else:
                t[k] = [self.tree(depth + 2) for _ in range(r.randint(1, 3))]
        return t

    def array(self, depth):
        r = self.r
        out = []
        for _ in range(r.randint(0, 4)):
            c = r.random()
            if c < 0.7 or depth >= 5:
                out.append(self.scalar())
            elif c < 0.85:
                out.append(self.array(depth + 1))
            else:
                out.append(self.tree(depth + 1))
        return out

    # -- writing it --
    def ws(self):
        return self.r.choice(["", " ", " ", "  ", "\t", " \t "])

    def key_text(self, k):
        r = self.r
        if k and all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in k) and r.random() < 0.8:
            return k
        if "'" not in k and all(0x20 <= ord(ch) != 0x7f or ch == "\t" for ch in k) and r.random() < 0.4:
            return "'" + k + "'"
        return '"' + self.escape(k, multiline=False) + '"'

    def escape(self, s, multiline):
        r = self.r
        out = []
        for ch in s:
            o = ord(ch)
            if ch == '"' or ch == "\\":
                out.append("\\" + ch)
            elif ch == "\n" and multiline and r.random() < 0.7:
                out.append("\n")
            elif ch in "\b\t\n\f\r" and (ch != "\t" or r.random() < 0.5):
                out.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}[ch])
            elif o < 0x20 or o == 0x7f or r.random() < 0.1:
                out.append("\\u%04X" % o if o < 0x10000 and r.random() < 0.7 else "\\U%08x" % o)
            else:
                out.append(ch)
            if multiline and r.random() < 0.08:
                # A line-ending backslash: the newline and all whitespace after it go away.
                out.append("\\" + r.choice(["", " ", "\t "]) + self.nl +
                           r.choice(["", "  ", "\t", self.nl + " "]))
        return "".join(out)

    def string_text(self, s):
        r = self.r
        c = r.random()
        plain = all(0x20 <= ord(ch) != 0x7f or ch == "\t" for ch in s)
        if c < 0.2 and plain and "'" not in s:
            return "'" + s + "'"
        if c < 0.35 and "'''" not in s and not s.endswith("'") and \
                all(0x20 <= ord(ch) != 0x7f or ch in "\t\n" for ch in s) and "\r" not in s:
            lead = r.choice(["", "\n"]) if not s.startswith("\n") else "\n"
            return "'''" + lead + s + "'''"
        if c < 0.55:
            body = self.escape(s, multiline=True)
            lead = r.choice(["", "\n"]) if not body.startswith("\n") else "\n"
            if r.random() < 0.3:  # a line-ending backslash that trims nothing but whitespace
                body = body + "\\" + r.choice(["", " ", "\t"]) + "\n" + r.choice(["", "  ", "\n \t"])
            return '"""' + lead + body + '"""'
        return '"' + self.escape(s, multiline=False) + '"'

    def underscores(self, digits):
        r = self.r
        if len(digits) < 2 or r.random() < 0.6:
            return digits
        return "".join(d + ("_" if i + 1 < len(digits) and r.random() < 0.3 else "")
                       for i, d in enumerate(digits))

    def int_text(self, v):
        r = self.r
        c = r.random()
        if v >= 0 and c < 0.15:
            return "0x" + self.underscores(r.choice(["%x", "%X", "%08x"]) % v)
        if v >= 0 and c < 0.25:
            return "0o" + self.underscores("%o" % v)
        if v >= 0 and c < 0.35:
            return "0b" + self.underscores("{:b}".format(v))
        s = self.underscores(str(abs(v)))
        return ("-" if v < 0 else r.choice(["", "", "+"])) + s

    def float_text(self, v):
        r = self.r
        if math.isnan(v):
            return r.choice(["nan", "+nan", "-nan"])
        if math.isinf(v):
            return ("-" if v < 0 else r.choice(["", "+"])) + "inf"
        s = repr(v)  # shortest round trip: "1e+16", "5e-324", "0.1", "-0.0"
        sign = "-" if s.startswith("-") else r.choice(["", "+"]) if v >= 0 else ""
        s = s.lstrip("-")
        mant, _, exp = s.partition("e")
        ip, _, fp = mant.partition(".")
        if r.random() < 0.3:
            fp = (fp or "0") + "0" * r.randint(0, 3)
        text = self.underscores(ip)
        if fp and (not exp or r.random() < 0.7):
            text += "." + self.underscores(fp)
        elif not exp:
            text += ".0"
        if exp:
            e = int(exp)
            text += r.choice("eE") + (("-" if e < 0 else r.choice(["", "+"])) +
                                      self.underscores(("0" if r.random() < 0.2 else "") + str(abs(e))))
        return sign + text

    def value_text(self, v, depth):
        r = self.r
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return self.int_text(v)
        if isinstance(v, float):
            return self.float_text(v)
        if isinstance(v, str):
            return self.string_text(v)
        if isinstance(v, dict):
            return self.inline_table(v, depth)
        items = [self.value_text(x, depth + 1) for x in v]
        if r.random() < 0.5:
            return "[" + self.ws() + ("," + self.ws()).join(items) + \
                   ("," if items and r.random() < 0.3 else "") + self.ws() + "]"
        nl = self.nl
        parts = []
        for x in items:
            parts.append(nl + "  " + x + "," + (" # element" if r.random() < 0.3 else ""))
        return "[" + "".join(parts) + nl + "]"

    def inline_table(self, t, depth):
        items = []
        for k, v in t.items():
            if isinstance(v, dict) and v and self.r.random() < 0.3:
                for k2, v2 in v.items():  # dotted keys inside an inline table
                    items.append(self.key_text(k) + "." + self.key_text(k2) + self.ws() + "=" +
                                 self.ws() + self.value_text(v2, depth + 2))
            else:
                items.append(self.key_text(k) + self.ws() + "=" + self.ws() +
                             self.value_text(v, depth + 1))
        return "{" + self.ws() + ("," + self.ws()).join(items) + self.ws() + "}"

    def kv(self, keytext, v, depth):
        tail = self.r.choice(["", "", "", " # a comment", "\t#"])
        return keytext + self.ws() + "=" + self.ws() + self.value_text(v, depth) + tail + self.nl

    def dotted_lines(self, prefix, t, depth):
        """t (a table without arrays of tables below it) as prefix.k = v lines."""
        out = []
        for k, v in t.items():
            kt = prefix + self.ws() + "." + self.ws() + self.key_text(k)
            if isinstance(v, dict) and v and self.r.random() < 0.6 and not has_aot(v):
                out.extend(self.dotted_lines(kt, v, depth + 1))
            else:
                out.append(self.kv(kt, v, depth + 1))
        return out

    def section(self, path, t, depth, out, headers_only=False):
        """Writes table t (at header path `path`, a list of key texts): its key/value lines, then
        its sub-tables under headers. headers_only: t has no header of its own (it is created
        on the way to its sub-tables), so every child must get a header."""
        r = self.r
        later = []
        for k, v in t.items():
            kt = self.key_text(k)
            if headers_only:
                later.append(("table", kt, v))
            elif isinstance(v, dict) and v and not has_aot(v) and r.random() < 0.3:
                out.extend(self.dotted_lines(kt, v, depth + 1))
            elif isinstance(v, dict) and (has_aot(v) or r.random() < 0.6):
                later.append(("table", kt, v))
            elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v) and r.random() < 0.7:
                later.append(("aot", kt, v))
            else:
                out.append(self.kv(kt, v, depth + 1))
        for kind, kt, v in later:
            p = path + [kt]
            head = self.ws() + (self.ws() + "." + self.ws()).join(p) + self.ws()
            if kind == "aot":
                for elem in v:
                    out.append(self.blank() + "[[" + head + "]]" + self.nl)
                    self.section(p, elem, depth + 2, out)
            else:
                implicit = v and all(isinstance(x, dict) and x for x in v.values()) and r.random() < 0.5
                if not implicit:
                    out.append(self.blank() + "[" + head + "]" + self.nl)
                self.section(p, v, depth + 1, out, headers_only=implicit)

    def blank(self):
        return self.r.choice(["", "", self.nl, "# section" + self.nl])

    def document(self):
        self.nl = "\r\n" if self.r.random() < 0.2 else "\n"
        out = []
        if self.r.random() < 0.3:
            out.append("# a random document" + self.nl)
        self.section([], self.tree(0), 0, out)
        return "".join(out).encode("utf-8")


def has_aot(t):
    return any(isinstance(v, list) and v and all(isinstance(x, dict) for x in v) or
               (isinstance(v, dict) and has_aot(v)) for v in t.values())


def mutate(rng, data):
    data = bytearray(data)
    alphabet = b"[]{}=.,\"'#\\\n\r\t _-+0123456789abefinotuxAE:"
    for _ in range(rng.randint(1, 3)):
        if not data:
            break
        i = rng.randrange(len(data))
        c = rng.random()
        if c < 0.4:
            data[i] = rng.choice(alphabet)
        elif c < 0.7:
            del data[i]
        elif c < 0.9:
            data.insert(i, rng.choice(alphabet))
        else:
            data[i] = rng.randrange(256)
    return bytes(data)


# ---- main --------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", help="a built test_toml to use as the dump driver")
    ap.add_argument("--random", type=int, default=3000, help="random valid documents (3000)")
    ap.add_argument("--mutations", type=int, default=0, help="mutated documents (0)")
    ap.add_argument("--seed", type=int, default=20240428)
    ap.add_argument("--write-expected", action="store_true",
                    help="write tomllib's tree of every valid/NAME.toml to valid/NAME.json")
    ap.add_argument("--keep", help="keep the generated documents in this directory")
    args = ap.parse_args()
    if tomllib is None:
        print("skip: this Python has no tomllib (3.11+ needed)")
        return 0

    tmp = tempfile.mkdtemp(prefix="toml_diff_")
    try:
        driver = args.bin or build_driver(tmp)
        bad = 0
        known = 0

        def report(path, why, ours, theirs):
            nonlocal bad
            bad += 1
            if bad <= 10:
                print(f"MISMATCH {path}: {why}\n  precprobe: {ours[0]} {ours[1][:300]}\n"
                      f"  tomllib:   {theirs[0]} {theirs[1][:300]}")

        # Shipped documents.
        for sub in ("valid", "invalid", "unsupported"):
            d = os.path.join(DATA, sub)
            paths = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".toml"))
            ours = c_verdicts(driver, paths)
            for p in paths:
                with open(p, "rb") as f:
                    data = f.read()
                theirs = tomllib_verdict(data)
                o = ours[p]
                if sub == "valid":
                    if args.write_expected and theirs[0] == "ok":
                        with open(p[:-5] + ".json", "w", encoding="utf-8") as f:
                            f.write(theirs[1] + "\n")
                    if o[0] != "ok" or theirs[0] != "ok" or o[1] != theirs[1]:
                        report(p, "a valid document must read the same", o, theirs)
                elif sub == "invalid":
                    if o[0] != "err":
                        report(p, "precprobe accepts an invalid document", o, theirs)
                    elif theirs[0] != "err":
                        if any(m in o[1] for m in TOMLLIB_LENIENT):
                            known += 1
                        else:
                            report(p, "tomllib accepts a document in invalid/", o, theirs)
                else:
                    if o[0] != "err" or theirs[0] == "err":
                        report(p, "an unsupported document: precprobe refuses, tomllib accepts",
                               o, theirs)
            print(f"{sub}: {len(paths)} documents")

        # Random valid documents, then mutations of them.
        rng = random.Random(args.seed)
        gen = Gen(rng)
        gdir = args.keep or os.path.join(tmp, "gen")
        os.makedirs(gdir, exist_ok=True)
        docs = []
        gen_errors = 0
        for i in range(args.random):
            data = gen.document()
            v = tomllib_verdict(data)
            if v[0] != "ok":
                gen_errors += 1  # a bug of the generator, not of either reader
                if gen_errors <= 3:
                    print(f"generator wrote a document tomllib rejects: {v[1]}\n{data[:400]!r}")
                continue
            docs.append((data, v))
        muts = []
        for i in range(args.mutations):
            base = rng.choice(docs)[0] if docs else b"a = 1\n"
            data = mutate(rng, base)
            muts.append((data, tomllib_verdict(data)))
        counts = {"agree-ok": 0, "agree-err": 0}
        known_why = {}
        for label, batch in (("random", docs), ("mutation", muts)):
            paths = []
            for i, (data, _) in enumerate(batch):
                p = os.path.join(gdir, f"{label}_{i:06d}.toml")
                with open(p, "wb") as f:
                    f.write(data)
                paths.append(p)
            ours = c_verdicts(driver, paths) if paths else {}
            for p, (data, theirs) in zip(paths, batch):
                o = ours[p]
                if o[0] == "ok" and theirs[0] == "ok":
                    if o[1] == theirs[1]:
                        counts["agree-ok"] += 1
                    else:
                        report(p, "both accept, trees differ", o, theirs)
                elif o[0] == "err" and theirs[0] == "err":
                    counts["agree-err"] += 1
                elif o[0] == "err" and (theirs[0] == "ok-date" or
                                        any(m in o[1] for m in DELIBERATE + TOMLLIB_LENIENT)):
                    known += 1
                    why = next((m for m in DELIBERATE + TOMLLIB_LENIENT if m in o[1]), "date")
                    known_why[why] = known_why.get(why, 0) + 1
                else:
                    report(p, "verdicts differ", o, theirs)
        print(f"random: {len(docs)} documents ({gen_errors} generator errors); mutations: "
              f"{len(muts)}; agree: {counts['agree-ok']} accepted, {counts['agree-err']} rejected; "
              f"known differences: {known} {known_why or ''}; mismatches: {bad}")
        return 1 if bad or gen_errors else 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
