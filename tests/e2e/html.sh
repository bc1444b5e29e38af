#!/usr/bin/env bash
# html.sh — the HTML report end to end, run by run.sh: the shipped quickstart, bloom-prescale,
# te-cp-small and adamw-small cases with --html; each page must be well-formed XML (xmllint --noout), draw no complaint from
# libxml2's HTML parser except about the element names its HTML 4 table lacks (the SVG ones,
# details, summary), hold no URL, and `precprobe show report.h5 --html` must redraw it byte for
# byte from report.h5. With two cases --html names a folder holding CASE-NAME.html each.
# usage: tests/e2e/html.sh [bin/precprobe]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
out=build/e2e/html
rm -rf "$out"; mkdir -p "$out"
command -v xmllint >/dev/null || { echo "html.sh: xmllint missing (make deps installs libxml2-utils)"; exit 1; }
fail=0
known='Tag \(svg\|title\|rect\|line\|polyline\|text\|details\|summary\) invalid'
for c in quickstart bloom-prescale te-cp-small adamw-small; do
    page=$out/$c.html
    "$bin" run "cases/$c.toml" --out "$out/$c" --html "$page" -q >"$out/$c.stdout" 2>&1
    rc=$?
    [ $rc -le 1 ] || { echo "FAIL html $c: run exit $rc"; cat "$out/$c.stdout"; fail=1; continue; }
    grep -q "reports: .* $page\$" "$out/$c.stdout" || { echo "FAIL html $c: path not printed"; fail=1; }
    xmllint --noout "$page" || { echo "FAIL html $c: not well-formed XML"; fail=1; }
    # libxml2 prints three lines per complaint: the message, the source line, a caret
    errs=$(xmllint --html --noout "$page" 2>&1 | grep 'parser error' | grep -v "$known")
    [ -z "$errs" ] || { echo "FAIL html $c: xmllint --html:"; echo "$errs" | head; fail=1; }
    if grep -qi 'http\|//' "$page"; then echo "FAIL html $c: a URL in the page"; fail=1; fi
    [ "$(grep -c '<svg' "$page")" -ge 3 ] || { echo "FAIL html $c: charts missing"; fail=1; }
    "$bin" show "$out/$c/report.h5" --html "$out/$c.show.html" >/dev/null &&
        cmp -s "$page" "$out/$c.show.html" || { echo "FAIL html $c: show --html draws another page"; fail=1; }
done
# the charts each op adds: CP error per ring chunk (attention), per-step series (adamw)
grep -q 'max error per ring chunk\|ring chunk' "$out/te-cp-small.html" || { echo "FAIL html: no CP chunk chart"; fail=1; }
grep -q 'per optimizer step: progress' "$out/adamw-small.html" || { echo "FAIL html: no adamw series chart"; fail=1; }
"$bin" run cases/quickstart.toml cases/bloom-prescale.toml --out "$out/both" --html "$out/pages" -q >/dev/null 2>&1
[ -s "$out/pages/quickstart.html" ] && [ -s "$out/pages/bloom-prescale.html" ] ||
    { echo "FAIL html: several cases: no CASE-NAME.html in the --html folder"; fail=1; }
"$bin" show "$out/quickstart/report.h5" --html "$out/missing/x.html" >/dev/null 2>&1
[ $? = 3 ] || { echo "FAIL html: show --html into a missing folder must exit 3"; fail=1; }
[ $fail = 0 ] && echo "ok   html (quickstart, bloom-prescale, te-cp-small, adamw-small: xmllint, no URL, charts, show --html identical)"
exit $fail
