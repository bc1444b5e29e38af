#!/usr/bin/env bash
# python/tests/run.sh — the Python bridge's tests (stdlib unittest), run by tools/run-tests.sh
# (so by make test). They run once under each distinct interpreter that can import numpy among
# $PRECPROBE_PYTHON, python3 and /usr/bin/python3 (Debian's python3-numpy), as
# tools/find-python.sh --all lists them; tests needing torch, h5py, h5dump or pytest skip with a
# message where these are absent. With no interpreter that has numpy, everything skips with a
# message saying what each interpreter lacked, and the script passes.
set -u
cd "$(dirname "$0")/../.."
export PRECPROBE_BIN="${PRECPROBE_BIN:-$PWD/bin/precprobe}"   # the binary just built, not one on PATH
export PRECPROBE_CACHE="${PRECPROBE_CACHE:-$PWD/build/test-cache}"
export PYTHONDONTWRITEBYTECODE=1
why=$(mktemp)
if ! pys=$(bash tools/find-python.sh --all numpy 2>"$why"); then
    echo "python bridge tests skipped: $(cat "$why") (Debian: apt-get install python3-numpy)"
    rm -f "$why"
    exit 0
fi
rm -f "$why"
rc=0
while read -r py; do
    echo "python bridge: tests under $py ($("$py" -c 'import sys; print(sys.prefix)'))"
    (cd python/tests && "$py" -m unittest -v test_tensors test_capture test_readers test_assertion test_torch test_capture_optim) 2>&1 || rc=1
done <<<"$pys"
exit $rc
