"""``torch.nn.utils``: gradient clipping, ``parameters_to_vector`` and
``vector_to_parameters``, :mod:`.rnn` (``pad_sequence``), :mod:`.parametrize`
(``register_parametrization``), :mod:`.parametrizations` (``weight_norm``,
``spectral_norm``, ``orthogonal``) and the legacy ``weight_norm``/``remove_weight_norm``
and ``spectral_norm``/``remove_spectral_norm``.

    >>> import symgrad as torch
    >>> from symgrad import nn
    >>> w = nn.Parameter(torch.tensor([3.0, 4.0]))
    >>> (w * w).sum().backward()
    >>> float(nn.utils.clip_grad_norm_([w], 1.0))
    10.0
    >>> w.grad
    tensor([0.6000, 0.8000])
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ...eager.functions import cat
from ...eager.tensor import Tensor
from . import parametrizations, parametrize, rnn
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters", "rnn", "get_total_norm", "clip_grads_with_norm_",
           "parametrize", "parametrizations", "weight_norm", "remove_weight_norm",
           "spectral_norm", "remove_spectral_norm"]


def _grads(parameters: Any) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: Any = None) -> Tensor:
    """Scale the gradients in place so that their joint ``norm_type`` norm is at most
    ``max_norm``; returns the norm before clipping (PyTorch's formula: the scale is
    ``min(max_norm / (norm + 1e-6), 1)``)."""
    grads = _grads(parameters)
    if not grads:
        return Tensor._make(np.array(0.0))
    norm_type = float(norm_type)
    values = [g._value for g in grads]
    if math.isinf(norm_type):
        total = max(float(np.max(np.abs(v))) if v.size else 0.0 for v in values)
    else:
        norms = [np.linalg.norm(v.ravel(), norm_type) for v in values]
        total = float(np.linalg.norm(np.array(norms), norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    scale = min(max_norm / (total + 1e-6), 1.0)
    for g in grads:
        g.data.mul_(scale)
    return Tensor._make(np.array(total, dtype=values[0].dtype))


def get_total_norm(tensors: Iterable[Tensor] | Tensor, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """The ``norm_type`` norm of the tensors' norms (PyTorch's: ``vector_norm`` of each,
    stacked, ``vector_norm`` again, under ``no_grad``); 0.0 for no tensors."""
    from ...eager.functions import stack
    from ...eager.grad_mode import no_grad
    from ...eager.linalg import vector_norm

    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if not tensors:
        return Tensor._make(np.array(0.0))
    norm_type = float(norm_type)
    with no_grad():
        total = vector_norm(stack([vector_norm(t, norm_type) for t in tensors]), norm_type)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                          total_norm: Tensor, foreach: Any = None) -> None:
    """Scale the gradients in place by ``min(max_norm / (total_norm + 1e-6), 1)``."""
    grads = _grads(parameters)
    if not grads:
        return
    scale = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.detach())


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float,
                     foreach: Any = None) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]`` in place."""
    for g in _grads(parameters):
        g.data.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated (differentiable, as PyTorch's)."""
    return cat([p.reshape(-1) for p in parameters], 0)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Make each parameter's data the next slice of ``vec`` (no graph)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    start = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[start:start + n].view_as(p).data  # (a view of vec, as in PyTorch)
        start += n
