#!/usr/bin/env bash
# run-example.sh — what `make run` runs: precprobe's main job on the shipped quick-start case
# (cases/quickstart.toml: a batched GEMM in fp16 and bf16 with fp32 and storage-format
# accumulation, against the exact product), then the text report it wrote, and the path of the
# HTML report (one self-contained page with charts: open it in any browser).
set -u
cd "$(dirname "$0")/.."
cmd=(bin/precprobe run cases/quickstart.toml --out reports/out/quickstart --html reports/out/quickstart/report.html)
echo "\$ ${cmd[*]}"
"${cmd[@]}"
rc=$?
[ $rc -le 1 ] || exit $rc
echo
echo "\$ cat reports/out/quickstart/report.txt"
cat reports/out/quickstart/report.txt
echo
echo "HTML report (charts; open in a browser): $PWD/reports/out/quickstart/report.html"
exit $rc
