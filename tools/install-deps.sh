#!/usr/bin/env bash
# install-deps.sh — installs precprobe's build and test dependencies from Debian's packages.
# Idempotent and quiet when everything is present (checked with dpkg -s first); needs root
# (or sudo) only when something is missing. Run by `make deps`, so by `make test` and `make run`.
set -euo pipefail

pkgs=(build-essential pkg-config libmpfr-dev libgmp-dev libhdf5-dev hdf5-tools libcmocka-dev
      libcjson-dev nettle-dev clang libxml2-utils chromium)
# chromium: the HTML report's browser check in make test (measured 22 s to install on a fresh
# machine, under the minute the issue allows).
missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root to install ${missing[*]}" >&2; exit 3; }
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine's package lists are empty: update once before installing.
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
