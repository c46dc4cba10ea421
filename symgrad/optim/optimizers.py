"""``symgrad.optim``'s optimizers: PyTorch's optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``).

Each follows the update rule of PyTorch 2's single-tensor implementation, step
for step in the same order, on the parameters' arrays in place (no graph is
recorded; each update bumps the parameter's version, as an in-place change
under ``no_grad`` does in PyTorch). ``param_groups`` (a list of dicts with
``params`` and the hyper-parameters, editable between steps), ``state`` (per
parameter), ``zero_grad()``, ``step(closure)``, ``state_dict()`` and
``load_state_dict()`` are PyTorch's. The options that choose among PyTorch's
implementations (``foreach``, ``fused``, ``capturable``, ``differentiable``) are
accepted and kept in ``param_groups``; there is one implementation here.

    >>> import symgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w ** 2).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.4600, -0.9200], requires_grad=True)
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..eager import bf16, fused_adam
from ..eager import dtypes as dt
from ..eager.grad_mode import enable_grad
from ..eager.tensor import Tensor
from . import complex_params

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop"]


class Optimizer:
    """The base class: parameter groups, per-parameter state and their (de)serialization."""

    #: whether ``_update`` rounds bfloat16 parameters as PyTorch's does (else: refused)
    _bfloat16 = False
    #: whether a complex parameter is updated as its real view, as PyTorch's optimizers
    #: do (:mod:`.complex_params`); else ``_update`` sees it complex (and may refuse it)
    _complex_as_real = True
    #: whether ``_update`` takes a Tensor ``lr`` itself (Adam's arithmetic in its dtype);
    #: else it is given the Tensor's value as a number
    _tensor_lr = False

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]):
        self.defaults = defaults
        self.state: collections.defaultdict[Tensor, dict[str, Any]] = \
            collections.defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        group = dict(param_group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params "
                                f"is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None:
                    if set_to_none:
                        p._grad = None
                    else:
                        p._grad._value[...] = 0.0

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; ``closure`` re-evaluates the
        loss first (with grad enabled) and its value is returned."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        refuse_bf16, update, states = not self._bfloat16, self._update, self.state
        for group in self.param_groups:
            maximize = group.get("maximize", False)
            if isinstance(group.get("lr"), Tensor) and not self._tensor_lr:
                # a Tensor lr (a schedule changing it in place): its value, as PyTorch's
                # ops take a 0-d Tensor where they take a number (Tensor.item())
                group = {**group, "lr": float(group["lr"]._value)}
            for p in group["params"]:
                if p._grad is not None:
                    if refuse_bf16 and p.dtype is dt.bfloat16:
                        raise NotImplementedError(
                            f"{type(self).__name__} does not update bfloat16 parameters as "
                            "PyTorch does (rounding each operation of the update to "
                            "bfloat16); use SGD, or train in float32")
                    grad = p._grad._value
                    if maximize:
                        grad = -grad
                    state = states.get(p)
                    new = state is None
                    if new:
                        state = {}
                    if p._value.dtype.kind == "c" and self._complex_as_real:
                        complex_params.update_as_real(update, p._value, grad, state, group)
                    else:
                        update(p._value, grad, state, group)
                    if new and state:  # (SGD without momentum keeps none, as PyTorch's)
                        states[p] = state
                    p._bump()
        return loss

    def _update(self, p: np.ndarray, g: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- state_dict -------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``, the
        parameters numbered in group order, as PyTorch's."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        # the state's own tensors, not copies, as PyTorch's (deep-copy to keep a snapshot)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take the state and hyper-parameters of ``state_dict`` (parameters matched by
        position, group by group)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
                len(a["params"]) != len(b["params"]) for a, b in zip(groups, self.param_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        by_index = {i: p for saved, group in zip(groups, self.param_groups)
                    for i, p in zip(saved["params"], group["params"])}
        self.state = collections.defaultdict(dict)
        for i, s in state_dict["state"].items():
            p = by_index[int(i)]
            # as PyTorch's: converted to a floating parameter's dtype, the same tensor if it
            # has it (a complex parameter's scalars, NAdam's mu_product, stay real)
            self.state[p] = {k: (v.to(p.dtype) if isinstance(v, Tensor) and k != "step"
                                 and p.dtype.is_floating_point else v)
                             for k, v in s.items()}
        for saved, group in zip(groups, self.param_groups):
            group.update({k: v for k, v in saved.items() if k != "params"})

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for k, group in enumerate(self.param_groups):
            text += f"\nParameter Group {k}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _buffer(state: dict[str, Any], key: str, like: np.ndarray, fresh: bool = True) -> np.ndarray:
    """The state tensor ``key`` (zeros like the parameter at first), as its array. With
    ``fresh`` False (a state made by an earlier step) a missing ``key`` is PyTorch's
    KeyError: it creates a buffer only on a parameter's first step, so turning on
    ``amsgrad`` or RMSprop's ``momentum``/``centered`` mid-training raises there."""
    if key not in state:
        if not fresh:
            raise KeyError(key)
        state[key] = Tensor._make(np.zeros_like(like))
    return state[key]._value


def _scalar_tensor(value: float) -> Tensor:
    """A 0-d state tensor (``step``, ASGD's ``eta``) in the default dtype, as PyTorch's
    (float32 after ``set_default_dtype(torch.float32)``)."""
    return Tensor._make(np.array(value, dtype=dt.DEFAULT.numpy))


def _step(state: dict[str, Any]) -> float:
    """Count the step (kept as a 0-d tensor, as PyTorch does) and return its number."""
    if "step" not in state:
        state["step"] = _scalar_tensor(0.0)
    state["step"]._value += 1.0
    return float(state["step"]._value)


_FMA_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _lerp(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``start.lerp_(end, weight)`` in place, with PyTorch's two formulas; PyTorch's error
    for a state of another dtype than the gradient (Adam's after ``model.double()``)."""
    if start.dtype != end.dtype:
        names = {"float32": "float", "float64": "double", "float16": "Half"}
        raise RuntimeError(f"expected dtype {names.get(start.dtype.name, start.dtype.name)} "
                           f"for `end` but got dtype {names.get(end.dtype.name, end.dtype.name)}")
    if start.dtype not in _FMA_DTYPES:
        if weight < 0.5:
            start += weight * (end - start)
        else:
            start[...] = end - (end - start) * (1.0 - weight)
        return
    # PyTorch's vectorized kernel: fma(w, end - start, start), or fma(w - 1, end - start,
    # end) from w = 0.5 on (symgrad.eager.fused_values), w in the arrays' dtype
    w = start.dtype.type(weight)
    with np.errstate(all="ignore"):
        diff = end - start
        start[...] = bf16.fma(start, w, diff) if w < 0.5 else bf16.fma(end, w - 1, diff)


def _check(name: str, value: float, low: float = 0.0) -> None:
    if not value >= low:
        raise ValueError(f"Invalid {name}: {value}")


class SGD(Optimizer):
    """Stochastic gradient descent with momentum (optionally Nesterov), dampening and
    weight decay: ``g += wd * p; b = mu * b + (1 - dampening) * g; p -= lr * b``
    (``g + mu * b`` for Nesterov)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: Any = None, differentiable: bool = False,
                 fused: Any = None):
        _check("learning rate", lr)
        _check("momentum value", momentum)
        _check("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    _bfloat16 = True  # (each PyTorch operation below, rounded as PyTorch's: see .bf16)

    def _update(self, p, g, state, group):
        wd, momentum = group["weight_decay"], group["momentum"]
        if wd != 0:
            g = bf16.add_scaled(g, wd, p)
        if momentum != 0:
            if state.get("momentum_buffer") is None:
                state["momentum_buffer"] = Tensor._make(np.array(g, copy=True))
                buf = state["momentum_buffer"]._value
            else:
                buf = state["momentum_buffer"]._value
                buf[...] = bf16.add_scaled(bf16.scaled(buf, momentum), 1 - group["dampening"],
                                           g)
            g = bf16.add_scaled(g, momentum, buf) if group["nesterov"] else buf
        p[...] = bf16.add_scaled(p, -group["lr"], g)


class Adam(Optimizer):
    """Adam (Kingma & Ba) with PyTorch's bias corrections, ``amsgrad`` and L2
    ``weight_decay`` (added to the gradient); :class:`AdamW` decouples the decay."""

    _tensor_lr = True

    _decoupled = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: Any = None, capturable: bool = False, differentiable: bool = False,
                 fused: Any = None, decoupled_weight_decay: bool = False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        for k, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {k}: {beta}")
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay
                                      or self._decoupled))

    def _update(self, p, g, state, group):
        lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
        if isinstance(lr, Tensor):  # (its value, 0-d in its dtype, as PyTorch computes
            lr = lr._value            # 1 - lr * wd with it; numpy's in-place ops take it)
        fresh = "step" not in state
        if fresh:  # PyTorch's order of the state (no new tensor per step)
            state["step"] = _scalar_tensor(0.0)
        exp_avg = _buffer(state, "exp_avg", p)
        exp_avg_sq = _buffer(state, "exp_avg_sq", p)
        top = _buffer(state, "max_exp_avg_sq", p, fresh) if group["amsgrad"] else None
        step = _step(state)
        step_size = lr / (1 - beta1 ** step)
        correction2_sqrt = math.sqrt(1 - beta2 ** step)
        if fused_adam.update(
                p, g, exp_avg, exp_avg_sq, beta1=beta1, beta2=beta2, weight_decay=wd,
                decoupled=group["decoupled_weight_decay"], lr=lr, step_size=step_size,
                correction2_sqrt=correction2_sqrt, eps=group["eps"], top=top):
            return  # the same arithmetic as below, in one loop (symgrad.eager.fused_adam)
        # PyTorch's single-tensor update (its default on CPU; foreach gives the same bits):
        # grad.add(p, alpha=wd), lerp_, mul_(beta2).addcmul_ (fused: fma(value * g, g, v)),
        # sqrt() / c2 + eps, p.addcdiv_(m, denom, value=-step_size): p + (value * m) / denom
        fused = p.dtype in _FMA_DTYPES
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p *= 1 - lr * wd
            else:
                g = bf16.add_scaled(g, wd, p)
        _lerp(exp_avg, g, 1 - beta1)
        exp_avg_sq *= beta2
        if fused:
            exp_avg_sq[...] = bf16.fma(exp_avg_sq, g * p.dtype.type(1 - beta2), g)
        else:
            exp_avg_sq += (1 - beta2) * (g * g)
        if top is not None:
            np.maximum(top, exp_avg_sq, out=top)
            denom = np.sqrt(top) / correction2_sqrt + group["eps"]
        else:
            denom = np.sqrt(exp_avg_sq) / correction2_sqrt + group["eps"]
        p += (-step_size * exp_avg) / denom if fused else -step_size * (exp_avg / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): ``p *= 1 - lr * wd``
    before the Adam step; ``weight_decay`` defaults to 0.01. (``Adam(...,
    decoupled_weight_decay=True)`` is the same, as in PyTorch.)"""

    _decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 **options: Any):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         **options)


class RMSprop(Optimizer):
    """RMSprop: ``v = alpha * v + (1 - alpha) * g^2``, ``p -= lr * g / (sqrt(v) + eps)``,
    with ``momentum``, ``centered`` (subtracting the squared mean gradient) and
    ``weight_decay``, as PyTorch's."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False, foreach: Any = None,
                 maximize: bool = False, differentiable: bool = False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("momentum value", momentum)
        _check("weight_decay value", weight_decay)
        _check("alpha value", alpha)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    def _update(self, p, g, state, group):
        alpha, wd, momentum = group["alpha"], group["weight_decay"], group["momentum"]
        fresh = "step" not in state
        if fresh:
            state["step"] = _scalar_tensor(0.0)
        square_avg = _buffer(state, "square_avg", p)
        if momentum > 0:
            _buffer(state, "momentum_buffer", p, fresh)
        if group["centered"]:
            _buffer(state, "grad_avg", p, fresh)
        _step(state)
        if wd != 0:
            g = g + wd * p
        square_avg *= alpha
        square_avg += (1 - alpha) * (g * g)
        if group["centered"]:
            grad_avg = state["grad_avg"]._value
            _lerp(grad_avg, g, 1 - alpha)
            avg = np.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += group["eps"]
        if momentum > 0:
            buf = state["momentum_buffer"]._value
            buf *= momentum
            buf += g / avg
            p -= group["lr"] * buf
        else:
            p += -group["lr"] * (g / avg)
