"""``torch.nn.utils.spectral_norm`` and ``remove_spectral_norm``: the legacy spectral
normalization (PyTorch recommends :func:`.parametrizations.spectral_norm`).

``spectral_norm(module, name, n_power_iterations, eps, dim)`` renames the parameter
``name`` to ``name_orig`` (the same Parameter), adds the buffers ``name_u`` and
``name_v`` (random normal vectors, normalized: symgrad's random numbers, not
PyTorch's; copy them across to compare) and registers a forward pre-hook that sets
``module.<name> = name_orig / σ``, ``σ = uᵀ W v`` with ``W`` the weight as a matrix
(``dim`` first). In training mode each forward first runs ``n_power_iterations`` of
``v = normalize(Wᵀ u)``, ``u = normalize(W v)`` in place on the buffers (not
differentiated); in eval mode none. Until the first forward ``module.<name>`` is the
original's values (PyTorch's ``weight.data``). The state_dict has PyTorch's keys
(``weight_orig``, ``weight_u``, ``weight_v``); PyTorch's conversion of state dicts of
its version 0 (a ``weight`` key, no ``weight_v``) is not done: loading one fails
with the unexpected key. ``remove_spectral_norm`` makes ``name`` one parameter again
(the normalized weight, without a power iteration).

    >>> import symgrad as torch
    >>> m = torch.nn.utils.spectral_norm(torch.nn.Linear(3, 4))
    >>> list(m.state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
"""

from __future__ import annotations

from typing import Any

from ...eager.grad_mode import no_grad
from ...eager.tensor import Tensor
from ...eager.tensor_ops import randn
from ..activation import normalize
from ..module import Module
from ..parameter import Parameter
from .parametrizations import default_spectral_dim
from .weight_norm import remove_hook

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook of one spectrally normalized parameter."""

    _version = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(weight_mat.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(normalize(weight_mat.mv(v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook, _ in module.__dict__.get("_forward_pre_hooks", {}).values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError("Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = normalize(randn(h, dtype=weight.dtype), dim=0, eps=fn.eps)
            v = normalize(randn(w, dtype=weight.dtype), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Normalize ``module.<name>`` by its spectral norm before each forward (see the
    module docstring)."""
    if dim is None:
        dim = default_spectral_dim(module)
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``<name>`` is one parameter again, the normalized
    weight."""
    return remove_hook(module, name, SpectralNorm, "spectral_norm")
