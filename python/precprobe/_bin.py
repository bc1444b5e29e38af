"""Finding the precprobe binary and running it."""
import os
import shutil
import subprocess


class PrecprobeError(RuntimeError):
    """The CLI refused a case or failed (exit status 2: bad input, 3: runtime failure)."""

    def __init__(self, message, returncode=None, stderr=""):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


def find_binary():
    """$PRECPROBE_BIN, else `precprobe` on PATH, else the repository's bin/precprobe (this
    package at REPO/python/precprobe: for in-tree use and tests)."""
    env = os.environ.get("PRECPROBE_BIN")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise PrecprobeError(f"PRECPROBE_BIN={env}: not an executable file")
        return env
    on_path = shutil.which("precprobe")
    if on_path:
        return on_path
    here = os.path.dirname(os.path.abspath(__file__))
    in_tree = os.path.normpath(os.path.join(here, "..", "..", "bin", "precprobe"))
    if os.path.isfile(in_tree) and os.access(in_tree, os.X_OK):
        return in_tree
    raise PrecprobeError("precprobe binary not found: set PRECPROBE_BIN, put precprobe on PATH, "
                         "or build it in the repository (make bin/precprobe)")


def run_cli(args, ok=(0, 1)):
    """Runs `precprobe ARGS`; returns the CompletedProcess. An exit status outside `ok` raises
    PrecprobeError carrying the CLI's own message."""
    exe = find_binary()
    p = subprocess.run([exe] + [str(a) for a in args], capture_output=True, text=True)
    if p.returncode not in ok:
        msg = (p.stderr.strip() or p.stdout.strip() or "no message")
        raise PrecprobeError(f"precprobe {' '.join(str(a) for a in args)}: exit {p.returncode}: {msg}",
                             p.returncode, p.stderr)
    return p
