#!/usr/bin/env python3
"""make_bad_cases.py — writes tests/data/cases/bad/*.toml: one invalid case file per mistake a
user can make, each run by the end-to-end suite (tests/e2e/cases.txt) with its exact error.

usage: python3 tools/make_bad_cases.py   (then review tests/e2e/expected/bad_*.err)
"""
import os

GOOD = """[case]
name = "bad"
op = "gemm"
seed = 1

[op]
m = 4
n = 4
k = 8

[knobs]
format = "fp16"

[variants.fp32acc]
accumulate = "fp32"
[variants.fp16acc]
accumulate = "storage"

[compare]
pairs = [["fp16acc", "fp32acc"]]

[gate]
"*.c.mismatch_fraction" = { max = 0.5 }
"""

# name -> (text to find, replacement); each makes exactly one mistake.
EDITS = {
    "unknown_table": ('[knobs]', '[knbos]'),
    "unknown_case_key": ('seed = 1', 'seeed = 1'),
    "unknown_op": ('op = "gemm"', 'op = "gem"'),
    "missing_op": ('op = "gemm"\n', ''),
    "missing_name": ('name = "bad"\n', ''),
    "bad_case_name": ('name = "bad"', 'name = "a/b"'),
    # found by tests/fuzz/fuzz_case.c: a newline in a quoted name must not split the error line
    "multiline_name": ('name = "bad"', 'name = """a\nb"""'),
    "seed_string": ('seed = 1', 'seed = "1"'),
    "negative_seed": ('seed = 1', 'seed = -1'),
    "missing_k": ('k = 8\n', ''),
    "unknown_op_key": ('k = 8', 'k = 8\nkk = 3'),
    "k_float": ('k = 8', 'k = 8.5'),
    "k_out_of_range": ('k = 8', 'k = 0'),
    "unknown_knob_value": ('format = "fp16"', 'format = "fp12"'),
    "unknown_knob": ('accumulate = "fp32"', 'acumulate = "fp32"'),
    "knob_not_string": ('accumulate = "fp32"', 'accumulate = 32'),
    "duplicate_key": ('accumulate = "fp32"', 'accumulate = "fp32"\naccumulate = "storage"'),
    "duplicate_table": ('[variants.fp16acc]', '[variants.fp32acc]'),
    "bad_variant_name": ('[variants.fp16acc]', '[variants."fp16.acc"]'),
    "one_tolerance": ('[compare]', '[compare]\nrtol = 1e-3'),
    "negative_rtol": ('[compare]', '[compare]\nrtol = -1.0\natol = 0.0'),
    "pair_unknown_variant": ('["fp16acc", "fp32acc"]', '["fp16acc", "fp64acc"]'),
    "pair_not_two": ('["fp16acc", "fp32acc"]', '["fp16acc"]'),
    "bad_torch_version": ('[compare]', '[compare]\ntorch_version = "0.4"'),
    "gate_unknown_stat": ('mismatch_fraction" =', 'mismatch_fractoin" ='),
    "gate_unknown_variant": ('"*.c.mismatch', '"fp8acc.c.mismatch'),
    "gate_unknown_tensor": ('"*.c.mismatch', '"*.out.mismatch'),
    "gate_no_bound": ('{ max = 0.5 }', '{ }'),
    "gate_bad_pattern": ('"*.c.mismatch_fraction"', '"mismatch_fraction"'),
    "bad_distribution": ('[knobs]', '[inputs]\ndistribution = "cauchy"\n\n[knobs]'),
    "negative_std": ('[knobs]', '[inputs]\nstd = -1.0\n\n[knobs]'),
    "unknown_input": ('[knobs]', '[inputs.q]\nstd = 2.0\n\n[knobs]'),
    "matrix_bad_value": ('[compare]', '[matrix]\nscale = ["post", "middle"]\n\n[compare]'),
    "matrix_not_array": ('[compare]', '[matrix]\nscale = "post"\n\n[compare]'),
    "toml_syntax": ('k = 8', 'k = = 8'),
    "toml_unterminated": ('name = "bad"', 'name = "bad'),
    "no_variants": (GOOD[GOOD.index("[variants.fp32acc]"):GOOD.index("[gate]")], ''),
    "external_missing_output": ('accumulate = "storage"', 'accumulate = "storage"\nexternal = { }'),
    "axis_scale_wrong_length": ('[knobs]', '[inputs.a]\naxis = 1\naxis_scale = [1.0, 2.0]\n\n[knobs]'),
    "axis_without_scale": ('[knobs]', '[inputs.a]\naxis = 1\n\n[knobs]'),
    "pair_unknown_view": ('[["fp16acc", "fp32acc"]]',
                          '[{ actual = "fp16acc", expected = "fp32acc", view = "rank:1" }]'),
    "pair_unknown_tensor": ('[["fp16acc", "fp32acc"]]',
                            '[{ actual = "fp16acc", expected = "fp32acc", tensors = ["cat(c, d)"] }]'),
    "pair_missing_expected": ('[["fp16acc", "fp32acc"]]', '[{ actual = "fp16acc" }]'),
    "pair_view_needs_world": ('[["fp16acc", "fp32acc"]]',
                              '[{ actual = "fp16acc", expected = "fp32acc", view = "te-cp-rank:1", tensors = ["c"] }]'),
}


def main():
    out = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "cases", "bad")
    os.makedirs(out, exist_ok=True)
    for name, (old, new) in EDITS.items():
        assert old in GOOD, name
        with open(os.path.join(out, name + ".toml"), "w") as f:
            f.write(GOOD.replace(old, new, 1))
    with open(os.path.join(out, "..", "good.toml"), "w") as f:
        f.write(GOOD)


if __name__ == "__main__":
    main()
