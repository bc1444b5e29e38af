#!/usr/bin/env bash
# install-deps.sh — installs precprobe's build and test dependencies from Debian's packages.
# Idempotent and quiet when everything is present (checked with dpkg -s first); needs root
# (or sudo) only when something is missing. Run by `make deps`, so by `make test` and `make run`.
#   tools/install-deps.sh --slurm   (make deps-slurm) installs instead the optional one-node Slurm
#   the engines' test runs (tests/e2e/slurm.sh): slurmctld, slurmd, slurm-client, munge. Without
#   it that test skips, saying why.
set -euo pipefail

pkgs=(build-essential pkg-config libmpfr-dev libgmp-dev libhdf5-dev hdf5-tools libcmocka-dev
      libcjson-dev nettle-dev clang libxml2-utils)
# parallel: GNU parallel, the engine of the sharded-run test (tests/e2e/parallel.sh)
pkgs+=(parallel)
if [ "${1:-}" = "--slurm" ]; then
    pkgs=(slurmctld slurmd slurm-client munge)
fi
# chromium: the HTML report's browser check in make test (measured 22 s to install on a fresh
# machine); python3-numpy, -h5py, -pytest: the Python bridge's tests (python/; about 2 MB besides
# numpy). Optional: if they cannot be installed, those checks skip with a message and nothing fails.
optional=(chromium python3-numpy python3-h5py python3-pytest)
[ "${1:-}" = "--slurm" ] && optional=()
missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
missing_opt=()
for p in "${optional[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing_opt+=("$p")
done
[ ${#missing[@]} -eq 0 ] && [ ${#missing_opt[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        [ ${#missing[@]} -eq 0 ] && { echo "install-deps: no root to install ${missing_opt[*]} (optional): skipped"; exit 0; }
        echo "install-deps: need root to install ${missing[*]}" >&2
        exit 3
    fi
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine's package lists are empty: update once before installing.
updated=0
if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    $sudo apt-get update -qq
    updated=1
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#missing_opt[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing_opt[*]} (optional)"
    if ! { [ $updated = 1 ] || $sudo apt-get update -qq; } ||
       ! $sudo apt-get install -y -qq --no-install-recommends "${missing_opt[@]}" >/dev/null; then
        echo "install-deps: could not install ${missing_opt[*]}: the checks that need them will skip" >&2
    fi
fi
echo "install-deps: done"
