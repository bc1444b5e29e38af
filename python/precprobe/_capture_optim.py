"""capture() of an optimizer: run the user's AdamW-type optimizer for T steps on given gradients,
save θ₀, the gradients and the final θ (and m, v when the optimizer keeps them) as safetensors,
and write an adamw case (gradients = "input") with those outputs as an external variant beside
precprobe's emulated AdamW variants on the very same gradients.

The optimizer is either
  - torch: an optimizer class (torch.optim.AdamW; its hyperparameters from params) or a factory
    `lambda ps: torch.optim.AdamW(ps, lr=...)`, called with a one-element list of parameters; the
    case's lr, betas, eps and weight_decay are read back from its param_groups[0], so the case
    states what the optimizer really ran with; or
  - numpy (any other θ₀): a step function `fn(theta, grad, state) -> theta` called once per step
    with state["step"] = t (1, 2, ...) set before the call; it keeps its moments in state
    ("exp_avg"/"exp_avg_sq" as torch names them, or "m"/"v"), which become the outputs m and v.
"""
import numpy as np

from ._tensors import Tensor, is_torch, to_tensor

# The emulated variants written beside the external one (kernels/adamw.h): torch.optim.AdamW's
# order with PyTorch's CPU or CUDA tensor kernels, and AnyPrecisionAdamW's order.
EMULATED = {
    "torch-cpu": {"update": "torch", "torch_kernels": "cpu"},
    "torch-cuda": {"update": "torch", "torch_kernels": "cuda"},
    "anyprecision": {"update": "anyprecision"},
}
HYPER = ("lr", "beta1", "beta2", "eps", "weight_decay")


def _flat(t):
    """A Tensor as a 1-D Tensor (AdamW is element-wise: θ of any shape is n parameters)."""
    return t.reshape((int(np.prod(t.shape, dtype=np.int64)),))


def _grads_rows(grads, theta_shape):
    """The gradients as a list of T tensors of θ's shape: a sequence, or one tensor [T, *θ.shape]."""
    if isinstance(grads, (list, tuple)):
        rows = list(grads)
    else:
        shape = tuple(grads.shape)
        if shape[1:] != tuple(theta_shape):
            raise ValueError(f"grads of shape {shape}: give a list of T gradients of θ's shape {tuple(theta_shape)} "
                             f"or one tensor [T, {', '.join(str(s) for s in theta_shape)}]")
        rows = [grads[t] for t in range(shape[0])]
    if not rows:
        raise ValueError("grads: at least one step")
    for t, g in enumerate(rows):
        if tuple(g.shape) != tuple(theta_shape):
            raise ValueError(f"grads[{t}] has shape {tuple(g.shape)}, θ has {tuple(theta_shape)}")
    return rows


def _run_torch(optimizer, theta0, rows, hyper):
    """torch: the optimizer on one parameter, .grad set to each row; returns θ, m, v, its hyperparameters."""
    import torch
    p = torch.nn.Parameter(theta0.detach().clone())
    if isinstance(optimizer, type) and issubclass(optimizer, torch.optim.Optimizer):
        kw = {}
        if "lr" in hyper:
            kw["lr"] = hyper["lr"]
        if "beta1" in hyper or "beta2" in hyper:
            kw["betas"] = (hyper.get("beta1", 0.9), hyper.get("beta2", 0.999))
        for k in ("eps", "weight_decay"):
            if k in hyper:
                kw[k] = hyper[k]
        opt = optimizer([p], **kw)
    else:
        opt = optimizer([p])
        if not isinstance(opt, torch.optim.Optimizer):
            raise TypeError(f"{optimizer!r} returned {type(opt).__name__}: with torch tensors, give an optimizer "
                            "class or a factory taking a list of parameters")
    group = opt.param_groups[0]
    for key in ("amsgrad", "maximize", "capturable", "differentiable"):
        if group.get(key):
            raise ValueError(f"{type(opt).__name__} with {key}=True: precprobe's AdamW has no such variant")
    decoupled = group.get("decoupled_weight_decay", type(opt).__name__ == "AdamW")
    if group.get("weight_decay", 0) and not decoupled:
        raise ValueError(f"{type(opt).__name__} with weight_decay adds it to the gradient (L2); precprobe models "
                         "AdamW's decoupled decay: use torch.optim.AdamW")
    got = {"lr": float(group["lr"]), "beta1": float(group["betas"][0]), "beta2": float(group["betas"][1]),
           "eps": float(group["eps"]), "weight_decay": float(group.get("weight_decay", 0.0))}
    for t, g in enumerate(rows):
        p.grad = g.detach().clone().to(p.dtype)
        opt.step()
    st = opt.state[p]
    return p.detach().clone(), st.get("exp_avg"), st.get("exp_avg_sq"), got


def _run_numpy(step, theta0, rows):
    """numpy: the step function once per step; returns θ, m, v (None when state has no moments)."""
    theta = np.array(theta0, copy=True)
    state = {}
    for t, g in enumerate(rows, start=1):
        state["step"] = t
        out = step(theta, np.asarray(g), state)
        if out is not None:
            theta = out
    m = state.get("exp_avg", state.get("m"))
    v = state.get("exp_avg_sq", state.get("v"))
    return theta, m, v


def capture_optimizer(name, optimizer, inputs, params, emulated):
    """The case parts of an optimizer capture: (op params, inputs, outputs, knobs, emulated
    variants, notes); the caller writes them. inputs: {"theta0": θ₀, "grads": gradients}."""
    missing = [k for k in ("theta0", "grads") if k not in inputs]
    extra = [k for k in inputs if k not in ("theta0", "grads")]
    if missing or extra:
        raise ValueError("adamw takes inputs theta0, grads; "
                         + (f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(extra)}"))
    params = dict(params or {})
    if "betas" in params:
        params["beta1"], params["beta2"] = params.pop("betas")
    unknown = sorted(set(params) - set(HYPER))
    if unknown:
        raise ValueError(f"params {unknown}: an optimizer capture takes {', '.join(HYPER)} (or betas)")
    theta0 = inputs["theta0"]
    rows = _grads_rows(inputs["grads"], tuple(theta0.shape))
    if is_torch(theta0):
        theta, m, v, hyper = _run_torch(optimizer, theta0, rows, params)
    else:
        if not callable(optimizer):
            raise TypeError("with numpy arrays, give a step function fn(theta, grad, state) -> theta")
        theta, m, v = _run_numpy(optimizer, theta0, rows)
        missing = [k for k in ("lr",) if k not in params]
        if missing:
            raise ValueError("a numpy step function hides its hyperparameters: give params={'lr': ..., 'betas': "
                             "..., 'eps': ..., 'weight_decay': ...} (lr at least; the others default to torch's)")
        hyper = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0}
        hyper.update({k: float(x) for k, x in params.items()})
    th0 = to_tensor(theta0)
    n = int(np.prod(th0.shape, dtype=np.int64))
    grads = [to_tensor(g) for g in rows]
    fmts = {g.fmt for g in grads}
    if fmts != {th0.fmt}:
        raise ValueError(f"θ₀ is {th0.fmt} and the gradients {', '.join(sorted(fmts))}: AdamW's gradient has θ's "
                         "dtype (param_format)")
    g_all = Tensor(th0.fmt, np.stack([g.data.reshape(n) for g in grads]))
    outs = {"theta": _flat(to_tensor(theta))}
    knobs = {"param_format": th0.fmt}
    for key, x, knob in (("m", m, "momentum_format"), ("v", v, "variance_format")):
        if x is not None:
            outs[key] = _flat(to_tensor(x))
            knobs[knob] = outs[key].fmt
    if outs["theta"].fmt != th0.fmt:
        raise ValueError(f"the optimizer returned θ as {outs['theta'].fmt}, θ₀ is {th0.fmt}")
    opp = {"n": n, "steps": len(rows), **hyper, "gradients": "input"}
    ins = {"theta0": _flat(th0), "grads": g_all}
    emulated = EMULATED if emulated is None else emulated
    return opp, ins, outs, knobs, emulated
