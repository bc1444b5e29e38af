#!/usr/bin/env bash
# test-browser.sh — the HTML reports of the shipped quickstart, bloom-prescale, te-cp-small and
# adamw-small cases opened in a real browser (Chromium, headless), screenshotted, and the PNG
# checked for its size and for non-background pixels (tools/png_check.py, standard library only);
# then the table sorter clicked. make test runs it (make deps installs Chromium, 22 s on a fresh
# machine); `make test-browser` runs it alone. Skips, exit 0, with a message when Chromium is absent.
set -u
cd "$(dirname "$0")/.."
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    echo "test-browser: SKIPPED: no Chromium (apt-get install -y chromium, then make test-browser)"
    exit 0
fi
out=build/browser
rm -rf "$out"; mkdir -p "$out"
fail=0
for c in quickstart bloom-prescale te-cp-small adamw-small; do
    bin/precprobe run "cases/$c.toml" --out "$out/$c" --html "$out/$c.html" -q >/dev/null 2>&1
    [ $? -le 1 ] || { echo "FAIL $c: precprobe run"; fail=1; continue; }
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --screenshot="$PWD/$out/$c.png" --window-size=1200,2000 "file://$PWD/$out/$c.html" >"$out/$c.log" 2>&1
    if [ ! -s "$out/$c.png" ]; then
        echo "FAIL $c: no screenshot"; tail -5 "$out/$c.log"; fail=1; continue
    fi
    python3 tools/png_check.py "$out/$c.png" --min-width 1200 --min-height 2000 --min-ink 0.02 || fail=1
done
# the table sorter, in the browser: a copy of the quickstart page clicks "max ulp" once
# (ascending) and twice (descending) and records the first column's order for --dump-dom
probe='<script>var th = document.querySelectorAll("table.sortable th")[6], o = [];
function firsts() { return Array.prototype.map.call(document.querySelectorAll("#comparisons tbody tr"),
  function (r) { return r.cells[0].textContent; }).join(","); }
th.click(); o.push(firsts()); th.click(); o.push(firsts());
document.body.setAttribute("data-order", o.join(";"));</script></body>'
awk -v p="$probe" '{ if ($0 == "</body>") print p; else print }' "$out/quickstart.html" >"$out/sort-probe.html"
order=$(timeout 120 "$browser" --headless --no-sandbox --disable-gpu --dump-dom "file://$PWD/$out/sort-probe.html" 2>/dev/null |
    grep -o 'data-order="[^"]*"')
# (the fp16/bf16 variants' exact-original rows included: README's quick-start summary)
want='data-order="bf16-fp32,fp16-fp32,fp16-storage,fp16-storage,fp16-storage,bf16-storage,fp16-fp32,bf16-fp32,bf16-storage;bf16-storage,bf16-fp32,fp16-fp32,bf16-storage,fp16-storage,fp16-storage,fp16-storage,fp16-fp32,bf16-fp32"'
if [ "$order" = "$want" ]; then
    echo "ok   table sorts by max ulp, both directions"
else
    echo "FAIL table sort: got $order"; echo "                 want $want"; fail=1
fi
[ $fail = 0 ] && echo "test-browser: passed (screenshots in $out/)"
exit $fail
