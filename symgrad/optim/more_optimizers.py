"""More of PyTorch's optimizers: ``Adagrad``, ``Adadelta``, ``Adamax``, ``NAdam``, ``RAdam``,
``Rprop``, ``ASGD``, ``Adafactor``.

Each follows PyTorch 2.13's single-tensor update (``torch/optim/<name>.py``, the
implementation PyTorch runs on CPU tensors) step for step, on the parameters'
arrays in place, with :class:`~symgrad.optim.optimizers.Optimizer`'s parameter
groups, ``maximize``, ``state_dict`` and ``load_state_dict``; the state keys are
PyTorch's, in its order, so a state dict's layout is the same.

    >>> import symgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = torch.optim.Adagrad([w], lr=0.5)
    >>> (w ** 2).sum().backward(); opt.step()
    >>> w
    tensor([ 0.5000, -1.5000], requires_grad=True)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..eager.tensor import Tensor
from .optimizers import Optimizer, _buffer, _check, _lerp, _scalar_tensor, _step

__all__ = ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD", "Adafactor"]


def _check_betas(betas: tuple[float, float]) -> None:
    for k, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {k}: {beta}")


def _scalar(state: dict[str, Any], key: str, value: float) -> None:
    if key not in state:
        state[key] = _scalar_tensor(value)


def _weight_decay(p: np.ndarray, g: np.ndarray, group: dict[str, Any]) -> np.ndarray:
    """L2 decay added to the gradient, or decoupled (``p *= 1 - lr * wd``) when the group
    says so (NAdam's and RAdam's ``decoupled_weight_decay``)."""
    wd = group["weight_decay"]
    if wd == 0:
        return g
    if group.get("decoupled_weight_decay", False):
        p *= 1 - group["lr"] * wd
        return g
    return g + wd * p


class Adagrad(Optimizer):
    """Adagrad: ``sum += g^2``, ``p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) +
    eps)``; the state is made for every parameter at construction, as PyTorch's."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: Any = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: Any = None):
        _check("learning rate", lr)
        _check("lr_decay value", lr_decay)
        _check("weight_decay value", weight_decay)
        _check("initial_accumulator_value value", initial_accumulator_value)
        _check("epsilon value", eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                _scalar(state, "step", 0.0)
                init = group["initial_accumulator_value"]  # (both parts, as PyTorch's)
                state["sum"] = Tensor._make(np.full_like(
                    p._value, complex(init, init) if p.is_complex() else init))

    def _update(self, p, g, state, group):
        _scalar(state, "step", 0.0)
        if "sum" not in state:  # (a group added later)
            state["sum"] = Tensor._make(np.full_like(p, group["initial_accumulator_value"]))
        step = _step(state)
        g = _weight_decay(p, g, group)
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        total = state["sum"]._value
        total += g * g
        p += -clr * (g / (np.sqrt(total) + group["eps"]))


class Adadelta(Optimizer):
    """Adadelta: ``v = rho v + (1 - rho) g^2``, ``d = sqrt(u + eps) / sqrt(v + eps) * g``,
    ``u = rho u + (1 - rho) d^2``, ``p -= lr * d``."""

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: Any = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False):
        _check("learning rate", lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable,
                                      foreach=foreach, differentiable=differentiable))

    def _update(self, p, g, state, group):
        rho, eps = group["rho"], group["eps"]
        _scalar(state, "step", 0.0)
        square_avg = _buffer(state, "square_avg", p)
        acc_delta = _buffer(state, "acc_delta", p)
        _step(state)
        g = _weight_decay(p, g, group)
        square_avg *= rho
        square_avg += (1 - rho) * (g * g)
        delta = np.sqrt(acc_delta + eps) / np.sqrt(square_avg + eps) * g
        acc_delta *= rho
        acc_delta += (1 - rho) * (delta * delta)
        p += -group["lr"] * delta


class Adamax(Optimizer):
    """Adamax (Adam with the infinity norm): ``u = max(beta2 u, |g| + eps)``,
    ``p -= lr / (1 - beta1^t) * m / u``."""

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: Any = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check_betas(betas)
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _update(self, p, g, state, group):
        beta1, beta2 = group["betas"]
        _scalar(state, "step", 0.0)
        exp_avg = _buffer(state, "exp_avg", p)
        exp_inf = _buffer(state, "exp_inf", p)
        step = _step(state)
        g = _weight_decay(p, g, group)
        _lerp(exp_avg, g, 1 - beta1)
        exp_inf *= beta2
        np.maximum(exp_inf, np.abs(g) + group["eps"], out=exp_inf)
        clr = group["lr"] / (1 - beta1 ** step)
        p += -clr * (exp_avg / exp_inf)


class NAdam(Optimizer):
    """Adam with Nesterov momentum (Dozat), PyTorch's momentum schedule
    ``mu_t = beta1 (1 - 0.5 * 0.96^(t * momentum_decay))`` and ``decoupled_weight_decay``."""

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: Any = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check_betas(betas)
        _check("weight_decay value", weight_decay)
        _check("momentum_decay value", momentum_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable))

    def _update(self, p, g, state, group):
        lr, (beta1, beta2), decay = group["lr"], group["betas"], group["momentum_decay"]
        _scalar(state, "step", 0.0)
        _scalar(state, "mu_product", 1.0)
        exp_avg = _buffer(state, "exp_avg", p)
        exp_avg_sq = _buffer(state, "exp_avg_sq", p)
        step = _step(state)
        bias_correction2 = 1 - beta2 ** step
        g = _weight_decay(p, g, group)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        mu_product = state["mu_product"]._value
        mu_product *= mu
        _lerp(exp_avg, g, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * (g * g)
        denom = np.sqrt(exp_avg_sq / bias_correction2) + group["eps"]
        product = float(mu_product)
        p += (-lr * (1.0 - mu) / (1.0 - product)) * (g / denom)
        p += (-lr * mu_next / (1.0 - product * mu_next)) * (exp_avg / denom)


class RAdam(Optimizer):
    """Rectified Adam (Liu et al.): the adaptive step scaled by the variance rectification
    once ``rho_t > 5``, plain momentum SGD before; ``decoupled_weight_decay`` as AdamW."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: Any = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check_betas(betas)
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      differentiable=differentiable))

    def _update(self, p, g, state, group):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        _scalar(state, "step", 0.0)
        exp_avg = _buffer(state, "exp_avg", p)
        exp_avg_sq = _buffer(state, "exp_avg_sq", p)
        step = _step(state)
        g = _weight_decay(p, g, group)
        _lerp(exp_avg, g, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * (g * g)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                             / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = bias_correction2 ** 0.5 / (np.sqrt(exp_avg_sq) + eps)
            p -= corrected * lr * adaptive * rect
        else:
            p -= corrected * lr


class Rprop(Optimizer):
    """Resilient backpropagation: each element's step grows by ``etas[1]`` while its
    gradient keeps its sign and shrinks by ``etas[0]`` (skipping that update) when it
    flips, within ``step_sizes``; ``p -= sign(g) * step``."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: Any = None, maximize: bool = False, differentiable: bool = False):
        _check("learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _update(self, p, g, state, group):
        (minus, plus), (low, high) = group["etas"], group["step_sizes"]
        _scalar(state, "step", 0.0)
        prev = _buffer(state, "prev", p)
        if "step_size" not in state:
            state["step_size"] = Tensor._make(np.full_like(p, group["lr"]))
        step_size = state["step_size"]._value
        _step(state)
        sign = np.sign(g * prev)
        factor = np.where(sign > 0, plus, np.where(sign < 0, minus, 1.0))
        step_size *= factor
        np.clip(step_size, low, high, out=step_size)
        g = np.where(factor == minus, 0.0, g)
        p -= np.sign(g) * step_size
        prev[...] = g


class ASGD(Optimizer):
    """Averaged SGD: ``p = p (1 - lambd eta) - eta g``, the average ``ax`` of the iterates
    from step ``t0`` on, ``eta = lr / (1 + lambd lr t)^alpha``, as PyTorch's."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: Any = None, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        _check("learning rate", lr)
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _update(self, p, g, state, group):
        lr, lambd = group["lr"], group["lambd"]
        _scalar(state, "step", 0.0)
        _scalar(state, "eta", lr)
        _scalar(state, "mu", 1.0)
        ax = _buffer(state, "ax", p)
        step = _step(state)
        g = _weight_decay(p, g, group)
        eta = float(state["eta"]._value)
        p *= 1 - lambd * eta
        p += -eta * g
        mu = float(state["mu"]._value)
        if mu != 1:
            ax += (p - ax) * mu
        else:
            ax[...] = p
        state["eta"]._value[...] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        state["mu"]._value[...] = 1 / max(1, step - group["t0"])


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern), PyTorch's: the second moment of a matrix (or a stack)
    kept as row and column means of ``g^2`` (``row_var``, ``col_var``), of a vector as
    ``variance``, both lerped by ``step^beta2_decay``; ``update = g / sqrt(var)`` clipped
    to a root mean square of ``d``, scaled by ``max(eps2, rms(p)) * min(lr, 1/sqrt(step))``;
    ``weight_decay`` decoupled. ``eps1=None`` is the epsilon of the dtype of the group's
    first parameter with a gradient (PyTorch's loop keeps it for the rest)."""

    _complex_as_real = False  # (complex parameters refused, as PyTorch's)

    def __init__(self, params: Iterable[Any], lr: Any = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: Any = None, maximize: bool = False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        for ok, text in ((0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}"),
                         (0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: "
                                              f"{beta2_decay}"),
                         (eps[0] is None or 0.0 <= eps[0],
                          f"epsilon1 should be >= 0 but is: {eps[0]}"),
                         (0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}"),
                         (1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}"),
                         (0.0 <= weight_decay, f"weight_decay should be >= 0 but is: "
                                               f"{weight_decay}")):
            if not ok:
                raise ValueError(text)
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    def _update(self, p, g, state, group):
        if np.iscomplexobj(p):
            raise RuntimeError("Adafactor does not support complex parameters")
        if not state:
            state["step"] = _scalar_tensor(0.0)
            if g.ndim > 1:
                state["row_var"] = Tensor._make(np.zeros(g.shape[:-1] + (1,), g.dtype))
                state["col_var"] = Tensor._make(np.zeros(g.shape[:-2] + (1, g.shape[-1]),
                                                         g.dtype))
            else:
                state["variance"] = Tensor._make(np.zeros_like(g))
        eps1, eps2 = group["eps"]
        if eps1 is None:  # the first parameter's dtype with a gradient (PyTorch's loop)
            first = next(q for q in group["params"] if q._grad is not None)
            eps1 = float(np.finfo(first._value.dtype).eps)
        lr = group["lr"]
        lr = float(lr._value if isinstance(lr, Tensor) else lr)
        step = _step(state)
        one_minus_beta2 = step ** group["beta2_decay"]
        rho = min(lr, 1 / step ** 0.5)
        alpha = max(eps2, float(np.linalg.norm(p)) / p.size ** 0.5) * rho
        if group["weight_decay"] != 0:
            p *= 1 - lr * group["weight_decay"]
        if g.ndim > 1:
            row_var, col_var = state["row_var"]._value, state["col_var"]._value
            square = g * g
            _lerp(row_var, np.sqrt(square.sum(-1, keepdims=True)) ** 2 / g.shape[-1],
                  one_minus_beta2)
            _lerp(col_var, np.sqrt(square.sum(-2, keepdims=True)) ** 2 / g.shape[-2],
                  one_minus_beta2)
            estimate = (row_var @ col_var) / np.maximum(row_var.mean(-2, keepdims=True), eps1)
        else:
            variance = state["variance"]._value
            _lerp(variance, g * g, one_minus_beta2)
            estimate = variance.copy()
        update = 1 / np.sqrt(np.maximum(estimate, eps1 * eps1)) * g
        denom = max(1.0, float(np.linalg.norm(update)) / (update.size ** 0.5 * group["d"]))
        p += (-alpha / denom) * update
