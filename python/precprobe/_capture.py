"""capture(): run the user's callable on given tensors, save inputs and outputs as safetensors
in the CLI's layout, and write a case with the outputs as an external variant beside precprobe's
emulated variants of the same operation."""
import json
import math
import os
import re
from pathlib import Path

from ._capture_optim import EMULATED as _ADAMW_EMULATED, capture_optimizer
from ._tensors import is_torch, save_safetensors, to_tensor

# What capture knows of each operation: the inputs the callable takes (in this order), the
# optional ones, the outputs (a tuple returned by the callable is read in this order), and the
# emulated variants written beside the external one (knob settings).
OPS = {
    "attention": {
        "inputs": ("q", "k", "v"),
        "optional": ("dout",),
        "outputs": ("out", "lse"),
        "grads": ("dq", "dk", "dv"),
        "emulated": {"flash": {"kernel": "flash"}, "unfused": {"kernel": "unfused"}},
    },
    "gemm": {
        "inputs": ("a", "b"),
        "optional": (),
        "outputs": ("c",),
        "grads": (),
        "emulated": {"fp32-acc": {"accumulate": "fp32"}, "storage-acc": {"accumulate": "storage"}},
    },
    # an optimizer: fn is a torch optimizer class/factory or a numpy step function (_capture_optim)
    "adamw": {
        "inputs": ("theta0", "grads"),
        "optional": (),
        "outputs": ("theta", "m", "v"),
        "grads": (),
        "emulated": _ADAMW_EMULATED,
    },
}
LAYOUTS = ("bshd", "bhsd")
_NAME = re.compile(r"^[A-Za-z0-9_+=-]+$")
_BSHD = (0, 2, 1, 3)  # bhsd <-> bshd (its own inverse)


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r} to a case file")


def _key(k):
    return k if re.match(r"^[A-Za-z0-9_-]+$", k) else json.dumps(k)


def infer_op(names):
    names = set(names)
    for op, spec in OPS.items():
        if set(spec["inputs"]) <= names <= set(spec["inputs"]) | set(spec["optional"]):
            return op
    raise ValueError(f"inputs {sorted(names)}: name the operation (op=...): "
                     + "; ".join(f"{op} takes {', '.join(s['inputs'])}" for op, s in OPS.items()))


def _outputs_by_name(result, names):
    """The callable's return value as {output name: tensor}: one tensor is the first output, a
    tuple/list the outputs in order (None entries skipped), a dict by name."""
    if isinstance(result, dict):
        unknown = set(result) - set(names)
        if unknown:
            raise ValueError(f"outputs {sorted(unknown)}: this operation's outputs are {', '.join(names)}")
        return {k: v for k, v in result.items() if v is not None}
    if isinstance(result, (tuple, list)):
        if len(result) > len(names):
            raise ValueError(f"the callable returned {len(result)} values; outputs are {', '.join(names)}")
        return {n: v for n, v in zip(names, result) if v is not None}
    return {names[0]: result}


def _run_backward(fn, args, dout, seed):
    """Forward and backward with torch autograd; returns (result, dout, grads)."""
    import torch
    leaves = [a.detach().clone().requires_grad_(True) for a in args]
    result = fn(*leaves)
    out = result[0] if isinstance(result, (tuple, list)) else result["out"] if isinstance(result, dict) else result
    if dout is None:
        g = torch.Generator().manual_seed(seed)
        dout = torch.randn(tuple(out.shape), generator=g, dtype=torch.float32).to(out.dtype)
    out.backward(dout)
    return result, dout, [leaf.grad for leaf in leaves]


def capture(name, fn, inputs, out_dir, *, op=None, layout="bshd", params=None, backward=False,
            variant=None, emulated=None, rtol=None, atol=None, seed=0, description=None):
    """Runs `fn` on `inputs`, saves inputs and outputs to OUT_DIR/NAME.safetensors in the CLI's
    layout and writes OUT_DIR/NAME.toml: the outputs as the external variant `variant` (default:
    NAME) beside precprobe's emulated variants of the operation, compared with the exact reference
    and with each of them. Returns the case file's Path (give it to judge()).

    inputs: {name: tensor} (attention: q, k, v, optionally dout; gemm: a, b; adamw: theta0 and grads,
            see below) or a sequence in that order; torch tensors (bfloat16, float16, float32), numpy float16/float32 arrays, or
            ml_dtypes bfloat16 arrays, all of one dtype. `fn` is called with q, k, v (a, b) as
            given, in your layout and type, and returns the output, a tuple in the operation's
            output order (attention: out, lse) or a dict by name.
    op:     "attention" or "gemm" (default: from the input names).
    layout: attention only: "bshd" (precprobe's [b, s, h, d]) or "bhsd" (SDPA's [b, h, s, d]):
            the tensors are transposed to bshd for the file, and the outputs back.
    params: the case's [op] parameters capture cannot see: attention mask ("causal" when your
            kernel is causal), softmax_scale; gemm alpha (default 1.0: fn(a, b) = a @ b).
    backward: attention with torch tensors: also run autograd with dout (inputs["dout"], else a
            seeded standard normal) and capture dq, dk, dv (passes = "fwd+bwd"); otherwise
            passes = "fwd" (out, and lse when fn returns it).
    emulated: {variant name: {knob: value}} instead of the operation's default emulated variants.
    rtol, atol: the case's tolerances (default: torch's for the format).

    An optimizer (op "adamw", inputs {"theta0": θ₀, "grads": a list of T gradients or one tensor
    [T, *θ₀.shape]}): `fn` is a torch optimizer class (torch.optim.AdamW, built with params' lr,
    betas, eps, weight_decay) or factory (`lambda ps: torch.optim.AdamW(ps, lr=1e-3)`) for torch
    tensors, or a step function `fn(theta, grad, state) -> theta` for numpy arrays (state["step"] =
    t is set before each call; its "exp_avg"/"exp_avg_sq" become m and v). It runs T steps;
    θ₀ and the gradients are saved (flattened to n), the final θ (and m, v) become the external
    variant, and the case (gradients = "input", the optimizer's hyperparameters) runs precprobe's
    AdamW variants torch-cpu, torch-cuda, anyprecision on the very same gradients. Judge it on
    the CPU (judge(case, device="cpu")): the GPU backend does not read a grads tensor.
    """
    if not _NAME.match(name or ""):
        raise ValueError(f"name {name!r}: letters, digits, _ - + = only (it names the case and its files)")
    variant = variant or name
    if not _NAME.match(variant):
        raise ValueError(f"variant {variant!r}: letters, digits, _ - + = only")
    if isinstance(inputs, dict):
        op = op or infer_op(inputs)
    elif op is None:
        raise ValueError("inputs given as a sequence: name the operation (op=...)")
    if op not in OPS:
        raise ValueError(f"op {op!r}: capture knows {', '.join(OPS)}")
    spec = OPS[op]
    if not isinstance(inputs, dict):
        inputs = dict(zip(spec["inputs"] + spec["optional"], inputs))
    missing = [n for n in spec["inputs"] if n not in inputs]
    extra = [n for n in inputs if n not in spec["inputs"] + spec["optional"]]
    if missing or extra:
        raise ValueError(f"{op} takes inputs {', '.join(spec['inputs'] + spec['optional'])}; "
                         + (f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(extra)}"))
    if layout not in LAYOUTS or (op != "attention" and layout != "bshd"):
        raise ValueError(f"layout {layout!r}: attention takes 'bshd' or 'bhsd'; other ops their own layout")
    if op == "adamw":
        if layout != "bshd" or backward:
            raise ValueError("an optimizer capture takes no layout and no backward")
        opp, ins, outs, knobs, emulated = capture_optimizer(name, fn, inputs, params, emulated)
        return _write_case(name, fn, op, variant, opp, ins, outs, knobs, emulated, out_dir, rtol, atol, description,
                           "θ₀, grads [steps, n] and the final θ, m, v flattened to n")
    params = dict(params or {})
    args = [inputs[n] for n in spec["inputs"]]

    dout = inputs.get("dout")
    grads = {}
    if backward:
        if op != "attention" or not all(is_torch(a) for a in args):
            raise ValueError("backward=True needs attention with torch tensors (autograd)")
        result, dout, gs = _run_backward(fn, args, dout, seed)
        grads = dict(zip(spec["grads"], gs))
    else:
        result = fn(*args)
    outputs = _outputs_by_name(result, spec["outputs"])
    outputs.update(grads)

    # Everything as Tensors in the CLI's layout.
    ins = {n: to_tensor(inputs[n]) for n in spec["inputs"]}
    if backward or dout is not None:
        ins["dout"] = to_tensor(dout)
    outs = {n: to_tensor(v) for n, v in outputs.items()}
    fmts = {t.fmt for t in ins.values()}
    if len(fmts) != 1:
        raise ValueError(f"inputs of mixed dtypes ({', '.join(sorted(fmts))}): precprobe runs one format per case")
    fmt = fmts.pop()
    if op == "attention":
        for t in list(ins.values()) + [outs.get(n) for n in ("out", "dq", "dk", "dv")]:
            if t is not None and len(t.shape) != 4:
                raise ValueError(f"attention tensors are 4-D ({layout}); got shape {t.shape}")
        if layout == "bhsd":
            ins = {n: t.transpose(_BSHD) for n, t in ins.items()}
            outs = {n: (t if n == "lse" else t.transpose(_BSHD)) for n, t in outs.items()}
        b, s, h, d = ins["q"].shape
        _, s_kv, h_kv, _ = ins["k"].shape
        opp = {"b": b, "s": s, "h": h, "d": d}
        if s_kv != s:
            opp["s_kv"] = s_kv
        if h_kv != h:
            opp["h_kv"] = h_kv
        opp["passes"] = "fwd+bwd" if backward else "fwd"
    else:
        a, bm = ins["a"], ins["b"]
        if len(a.shape) == 2 and len(bm.shape) == 2:
            ins = {"a": a.reshape((1,) + a.shape), "b": bm.reshape((1,) + bm.shape)}
            outs = {n: t.reshape((1,) + t.shape) for n, t in outs.items()}
        batch, m, k = ins["a"].shape
        n_ = ins["b"].shape[2]
        opp = {"batch": batch, "m": m, "n": n_, "k": k, "alpha": 1.0}
    opp.update(params)
    return _write_case(name, fn, op, variant, opp, ins, outs, {"format": fmt},
                       spec["emulated"] if emulated is None else emulated, out_dir, rtol, atol, description,
                       "[b, s, h, d] for attention")


def _write_case(name, fn, op, variant, opp, ins, outs, knobs, emulated, out_dir, rtol, atol, description, layout_note):
    """Writes OUT_DIR/NAME.safetensors (inputs and outputs) and OUT_DIR/NAME.toml (atomically)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    st_name = f"{name}.safetensors"
    save_safetensors(out_dir / st_name, {**ins, **outs},
                     metadata={"made_by": "precprobe.capture", "op": op, "layout": "bshd" if op != "adamw" else "n",
                               "callable": getattr(fn, "__qualname__", repr(fn))})
    lines = [f"# {name}.toml — written by precprobe.capture (python/precprobe): the outputs of",
             f"# {getattr(fn, '__qualname__', 'the callable')} as the external variant {variant!r}, beside precprobe's",
             "# emulated variants on the same inputs. Tensors: " + st_name + f" ({layout_note}).",
             "[case]", f"name = {_toml_value(name)}", f"op = {_toml_value(op)}",
             f"description = {_toml_value(description or f'{variant} captured by precprobe.capture')}",
             "", "[op]"]
    lines += [f"{_key(k)} = {_toml_value(v)}" for k, v in opp.items()]
    for n in ins:
        lines += ["", f"[inputs.{n}]", f"file = {_toml_value(f'{st_name}:{n}')}"]
    lines += ["", "[knobs]"] + [f"{_key(k)} = {_toml_value(v)}" for k, v in knobs.items()] + ["",
              f"[variants.{variant}]",
              "external = { " + ", ".join(f"{n} = {_toml_value(f'{st_name}:{n}')}" for n in outs) + " }"]
    for vname, vknobs in emulated.items():
        lines += [f"[variants.{_key(vname)}]"] + [f"{_key(k)} = {_toml_value(v)}" for k, v in vknobs.items()]
    lines += ["", "[compare]", "pairs = " + _toml_value([[variant, v] for v in emulated])]
    if (rtol is None) != (atol is None):
        raise ValueError("rtol and atol: both or neither")
    if rtol is not None:
        lines += [f"rtol = {_toml_value(float(rtol))}", f"atol = {_toml_value(float(atol))}"]
    case = out_dir / f"{name}.toml"
    tmp = case.with_suffix(".toml.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, case)
    return case
