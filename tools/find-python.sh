#!/usr/bin/env bash
# find-python.sh — which Python runs a test that needs MODULEs: the one place precprobe's test
# scripts pick an interpreter (CI's python3 on PATH may be a pyenv one without numpy while
# Debian's /usr/bin/python3 has python3-numpy, so "python3" alone is not enough).
#   tools/find-python.sh MODULE...        prints the first interpreter that imports every MODULE:
#       $PRECPROBE_PYTHON alone when it is set (the user's choice is not second-guessed), else
#       the first of python3 on PATH, /usr/bin/python3
#   tools/find-python.sh --all MODULE...  prints every distinct one (by sys.prefix) that does,
#       $PRECPROBE_PYTHON first, then python3 and /usr/bin/python3
# Exits 1 with nothing on stdout when none does, and says on stderr which interpreters were tried
# and what each lacked, for the caller's "skipped" line.
set -u
all=0
[ "${1:-}" = "--all" ] && { all=1; shift; }
[ $# -gt 0 ] || { echo "usage: tools/find-python.sh [--all] MODULE..." >&2; exit 2; }
if [ -n "${PRECPROBE_PYTHON:-}" ] && [ $all = 0 ]; then
    candidates=("$PRECPROBE_PYTHON")
else
    candidates=(${PRECPROBE_PYTHON:+"$PRECPROBE_PYTHON"} python3 /usr/bin/python3)
fi
# one interpreter's verdict: "ok PREFIX" or the modules it cannot import
probe='import importlib, sys
missing = []
for m in sys.argv[1:]:
    try:
        importlib.import_module(m)
    except Exception:
        missing.append(m)
print("missing " + " ".join(missing) if missing else "ok " + sys.prefix)'
tried=(); seen=" "; found=0
for py in "${candidates[@]}"; do
    if ! command -v "$py" >/dev/null 2>&1; then
        tried+=("$py (not found)"); continue
    fi
    verdict=$("$py" -c "$probe" "$@" 2>/dev/null | tail -1)
    case "$verdict" in
    "ok "*)
        prefix=${verdict#ok }
        case "$seen" in *" $prefix "*) continue ;; esac
        seen="$seen$prefix "
        echo "$py"; found=1
        [ $all = 1 ] || exit 0
        ;;
    "missing "*) m=${verdict#missing }; tried+=("$py (no ${m// /, })") ;;
    *) tried+=("$py (does not run)") ;;
    esac
done
[ $found = 1 ] && exit 0
joined=$(printf '%s, ' "${tried[@]}")
mods=$(printf '%s, ' "$@")
echo "no interpreter imports ${mods%, }: tried ${joined%, }" >&2
exit 1
