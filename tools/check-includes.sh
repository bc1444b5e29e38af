#!/usr/bin/env bash
# check-includes.sh — who may include whom among the layers (base, kernels, reference, src/core,
# io, ops, pipeline, report, cli), checked, so the layers stay layers without anyone remembering
# them.
# usage: tools/check-includes.sh [ROOT]      check the tree at ROOT (default: this repository)
#        tools/check-includes.sh --self-test  show that a bad include in a small tree fails
# Every #include "..." of every .c/.h/.cu (git-tracked when ROOT is a git work tree, else all of
# them) resolves as the compiler does: the including file's folder first, then base, kernels,
# reference, src (the Makefile's -I order). It fails, naming each offending line as
# "FILE:LINE: includes X (rule)", when
#   base/ includes anything outside base/;
#   kernels/ includes src/ or reference/; kernels/cpu includes kernels/cuda or the other way;
#   reference/ includes an emulation body (kernels/cpu, kernels/cuda, adamw_thread.h,
#     attention_threads.h, attention_plan.h) or anything of src/;
#   src/core includes src/{io,ops,pipeline,report,cli}; src/io includes src/{ops,pipeline,report,
#     cli}; src/ops, src/pipeline, src/report include src/cli;
#   an include does not resolve to a file of the tree;
#   the module graph has a cycle (a module is a .c with the .h of the same stem; X depends on Y
#     when X.c or X.h includes Y.h): printed as "include cycle: A -> B -> A", then one line per
#     edge.
# tests/ and tools/ may include anything and are not modules.
set -u

self_test() {
    local rc=0
    tmp=$(mktemp -d) || exit 3
    trap 'rm -rf "$tmp"' EXIT
    # A tiny tree that keeps every rule; each case below breaks one and must be caught.
    local t=$tmp/clean
    mkdir -p "$t"/{base,kernels/cpu,kernels/cuda,reference,src/core,src/io,src/cli,tests}
    printf '#include "error.h"\n' >"$t/base/error.c"
    printf '\n' >"$t/base/error.h"
    printf '#include "error.h"\n' >"$t/kernels/format.h"
    printf '#include "format.h"\n' >"$t/kernels/adamw_thread.h"
    printf '#include "../format.h"\n#include "adamw_thread.h"\n' >"$t/kernels/cpu/adamw.h"
    printf '\n' >"$t/kernels/cuda/x.cuh"
    printf '#include "format.h"\n' >"$t/reference/ref.h"
    printf '#include "ref.h"\n' >"$t/reference/ref.c"
    printf '#include "core/tensor.h"\n' >"$t/src/core/tensor.c"
    printf '#include "format.h"\n' >"$t/src/core/tensor.h"
    printf '#include "core/tensor.h"\n' >"$t/src/io/npy.h"
    printf '#include "io/npy.h"\n' >"$t/src/io/npy.c"
    printf '#include "core/tensor.h"\n' >"$t/src/cli/main.h"
    printf '#include "cli/main.h"\n#include "io/npy.h"\n#include "ref.h"\n' >"$t/src/cli/main.c"
    printf '#include "cli/main.c"\n#include "cpu/adamw.h"\n' >"$t/tests/test_x.c"
    if ! out=$(bash "$0" "$t" 2>&1); then
        echo "check-includes self-test: the clean tree failed:"; echo "$out"; return 1
    fi
    # file | the line appended to it | what the failure must show
    local cases=(
        'base/error.c|#include "format.h"|base/error.c:2: includes kernels/format.h (base/'
        'kernels/format.h|#include "core/tensor.h"|kernels/format.h:2: includes src/core/tensor.h (kernels/'
        'kernels/cpu/adamw.h|#include "../cuda/x.cuh"|kernels/cpu/adamw.h:3: includes kernels/cuda/x.cuh (kernels/cpu'
        'reference/ref.c|#include "adamw_thread.h"|reference/ref.c:2: includes kernels/adamw_thread.h (reference/'
        'reference/ref.c|#include "cpu/adamw.h"|reference/ref.c:2: includes kernels/cpu/adamw.h (reference/'
        'reference/ref.h|#include "core/tensor.h"|reference/ref.h:2: includes src/core/tensor.h (reference/'
        'src/core/tensor.c|#include "io/npy.h"|src/core/tensor.c:2: includes src/io/npy.h (src/core'
        'src/io/npy.c|#include "cli/main.h"|src/io/npy.c:2: includes src/cli/main.h (src/io'
        'src/io/npy.c|#include "nowhere.h"|src/io/npy.c:2: includes nowhere.h (unresolved'
        'src/core/tensor.c|#include "core/sub.h"|src/core/tensor.c:2: includes src/core/sub.h (cycle)'
    )
    local c file line want
    for c in "${cases[@]}"; do
        IFS='|' read -r file line want <<<"$c"
        rm -rf "$tmp/case"; cp -r "$t" "$tmp/case"
        printf '%s\n' "$line" >>"$tmp/case/$file"
        [[ $want == *cycle* ]] && printf '#include "core/tensor.h"\n' >"$tmp/case/src/core/sub.h"
        if out=$(bash "$0" "$tmp/case" 2>&1); then
            echo "check-includes self-test: '$line' in $file passed; it must fail"; rc=1
        elif [[ $out != *"$want"* ]]; then
            echo "check-includes self-test: '$line' in $file did not report '$want':"; echo "$out"; rc=1
        fi
    done
    [ $rc = 0 ] && echo "check-includes self-test: ${#cases[@]} bad includes caught, the clean tree passes"
    return $rc
}

if [ "${1:-}" = "--self-test" ]; then
    self_test; exit $?
fi
root=${1:-$(dirname "$0")/..}
cd "$root" || { echo "check-includes: no folder $root" >&2; exit 2; }

if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
    list() { git ls-files -- '*.c' '*.h' '*.cu' '*.cuh'; }
else
    list() { find . -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sed 's|^\./||' | sort; }
fi
files=$(list)
[ -n "$files" ] || { echo "check-includes: no sources under $root" >&2; exit 2; }

# Input to awk: the file list ("F path"), then every quoted include ("I path:line:name").
{
    printf 'F %s\n' $files
    # shellcheck disable=SC2086
    grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $files /dev/null |
        sed -E 's/^([^:]*):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*)".*/I \1:\2:\3/'
} | awk '
function norm(p,    n, i, k, parts, out, o) {
    n = split(p, parts, "/"); k = 0
    for (i = 1; i <= n; i++) {
        if (parts[i] == "" || parts[i] == ".") continue
        if (parts[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
        out[++k] = parts[i]
    }
    o = ""
    for (i = 1; i <= k; i++) o = o (i > 1 ? "/" : "") out[i]
    return o
}
function dirof(p) { return sub(/\/[^\/]*$/, "", p) ? p : "" }
function resolve(from, name,    d, c, i) {
    d = dirof(from)
    c = norm((d == "" ? "" : d "/") name); if (c in have) return c
    for (i = 1; i <= 4; i++) { c = norm(root[i] "/" name); if (c in have) return c }
    return ""
}
function module(p) { sub(/\.(c|h|cu|cuh)$/, "", p); return p }
function exempt(p) { return p ~ /^(tests|tools)\// }
function bad(where, what, rule) { print where ": includes " what " (" rule ")"; nbad++ }
function rules(where, from, to) {
    if (from ~ /^base\// && to !~ /^base\//)
        bad(where, to, "base/ includes only base/")
    if (from ~ /^kernels\// && to ~ /^(src|reference)\//)
        bad(where, to, "kernels/ includes neither src/ nor reference/")
    if (from ~ /^kernels\/cpu\// && to ~ /^kernels\/cuda\//)
        bad(where, to, "kernels/cpu does not include kernels/cuda")
    if (from ~ /^kernels\/cuda\// && to ~ /^kernels\/cpu\//)
        bad(where, to, "kernels/cuda does not include kernels/cpu")
    if (from ~ /^reference\// && (to ~ /^(src|kernels\/cpu|kernels\/cuda)\// ||
        to ~ /^kernels\/(adamw_thread|attention_threads|attention_plan)\.h$/))
        bad(where, to, "reference/ uses kernels/ arithmetic and problem headers, no emulation body, nothing of src/")
    if (from ~ /^src\/core\// && to ~ /^src\/(io|ops|pipeline|report|cli)\//)
        bad(where, to, "src/core is below io, ops, pipeline, report, cli")
    if (from ~ /^src\/io\// && to ~ /^src\/(ops|pipeline|report|cli)\//)
        bad(where, to, "src/io is below ops, pipeline, report, cli")
    if (from ~ /^src\/(ops|pipeline|report)\// && to ~ /^src\/cli\//)
        bad(where, to, "only src/cli includes src/cli")
}
# Depth-first search from m; a grey module met again closes a cycle, printed with its edges.
function visit(m,    k, e, n, i, j, path) {
    state[m] = 1; stack[++depth] = m
    n = nedge[m]
    for (k = 1; k <= n; k++) {
        e = edge[m, k]
        if (state[e] == 1) {
            for (i = depth; stack[i] != e; i--) ;
            path = ""
            for (j = i; j <= depth; j++) path = path stack[j] " -> "
            print "include cycle: " path e
            for (j = i; j <= depth; j++) print "  " why[stack[j], (j < depth ? stack[j + 1] : e)]
            nbad++
        } else if (state[e] == 0)
            visit(e)
    }
    depth--; state[m] = 2
}
BEGIN { root[1] = "base"; root[2] = "kernels"; root[3] = "reference"; root[4] = "src" }
$1 == "F" { have[$2] = 1; m = module($2); if (!exempt($2) && !(m in state)) { order[++nmod] = m; state[m] = 0 }; next }
$1 == "I" {
    rest = substr($0, 3)
    file = rest; sub(/:.*/, "", file)
    line = rest; sub(/^[^:]*:/, "", line); name = line; sub(/:.*/, "", line); sub(/^[^:]*:/, "", name)
    if (exempt(file)) next
    where = file ":" line
    to = resolve(file, name)
    if (to == "") { bad(where, name, "unresolved: not a file of the tree; a new file must be git-added"); next }
    rules(where, file, to)
    if (to !~ /\.(h|cuh)$/ || exempt(to)) next
    a = module(file); b = module(to)
    if (a == b || ((a, b) in why)) next
    why[a, b] = where ": includes " to " (cycle)"
    edge[a, ++nedge[a]] = b
}
END {
    for (i = 1; i <= nmod; i++) if (state[order[i]] == 0) visit(order[i])
    if (nbad) { print nbad " include rule violation(s); the rules: tools/check-includes.sh" > "/dev/stderr"; exit 1 }
}'
