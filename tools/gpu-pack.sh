#!/usr/bin/env bash
# gpu-pack.sh — the CUDA build packed for a GPU machine that has CUDA but none of precprobe's other
# libraries (MPFR, GMP, HDF5, cmocka, cJSON) and no package index to fetch them from: builds here,
# then writes .gpu/prebuilt.tar.xz holding bin/precprobe, the CUDA tests, bench_cuda,
# adamw_emulate and the shared libraries they load that are not the C runtime's or CUDA's own
# (the GPU machine brings its own libcudart/libcublas, matched to its driver).
#   tools/gpu-pack.sh                 then, on the GPU machine, in the repository root:
#   tar xJf .gpu/prebuilt.tar.xz && GPU_CHECK_PREBUILT=1 tools/gpu-check.sh
# (gpu-check.sh with GPU_CHECK_PREBUILT=1 runs no make and puts .gpu/lib on LD_LIBRARY_PATH.)
# The libraries come from this machine's distribution: the GPU machine's C library must be at least
# as new as the one here (ldd --version), which holds for Debian 12's 2.36 against Ubuntu 24.04's.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
    { echo "gpu-pack: no nvcc here: the CUDA backend cannot be built" >&2; exit 2; }
tests=$(printf "%s\n" tests/test_*_cuda.c | sed 's#^tests/#build/rel/tests/#; s#\.c$##')
bins="bin/precprobe build/rel/tools/adamw_emulate build/rel/tools/bench_cuda build/rel/tools/probe_wgmma_fp8 $tests"
# shellcheck disable=SC2086 # lists of make targets
make --no-print-directory -j"$(nproc)" $bins
rm -rf .gpu/lib && mkdir -p .gpu/lib
# every library ldd resolves, less the C runtime (libc, libm, libpthread, libdl, librt, libresolv,
# libstdc++, libgcc_s: the GPU machine's own, newer) and CUDA's (the GPU machine's, matched to its
# driver)
# shellcheck disable=SC2086
ldd $bins | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u |
    grep -Ev '^(libc|libm|libpthread|libdl|librt|libresolv|libstdc\+\+|libgcc_s)\.so|^libcu' |
    while read -r name path; do cp -L "$path" ".gpu/lib/$name"; done
# shellcheck disable=SC2086
tar cf - $bins .gpu/lib | xz -T"$(nproc)" -6 >.gpu/prebuilt.tar.xz.tmp
mv .gpu/prebuilt.tar.xz.tmp .gpu/prebuilt.tar.xz
echo "gpu-pack: .gpu/prebuilt.tar.xz, $(du -h .gpu/prebuilt.tar.xz | cut -f1), $(ls .gpu/lib | wc -l) libraries"
