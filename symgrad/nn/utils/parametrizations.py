"""``torch.nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm`` as
parametrizations (:mod:`.parametrize`), with PyTorch's formulas and names, and
``orthogonal`` (:mod:`.orthogonal`).

``weight_norm(module, name, dim)``: ``weight = g * v / ‖v‖`` with the norm over every
dimension but ``dim`` (all of them for ``dim=None``), ``original0`` being ``g`` and
``original1`` being ``v``. ``spectral_norm(module, name, n_power_iterations, eps,
dim)``: ``weight / σ`` with ``σ = uᵀ W v`` estimated by power iteration on the
weight as a matrix (``dim`` first), ``u`` and ``v`` the buffers ``_u``, ``_v`` of the
parametrization (``parametrizations.weight.0._u``), started from random normal
vectors and 15 iterations; in training mode each access runs
``n_power_iterations`` more in place (not differentiated), in eval mode none. Its
random start is symgrad's (numpy's streams): copy ``_u``/``_v`` across to compare
with PyTorch.

    >>> import symgrad as torch
    >>> from symgrad import nn
    >>> m = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
    >>> m.parametrizations.weight.original0.shape
    torch.Size([2, 1])
"""

from __future__ import annotations

from ...eager.grad_mode import no_grad
from ...eager.method_args import named
from ...eager.tensor import Tensor
from ...eager.tensor_ops import randn
from ..activation import normalize
from ..module import Module
from . import parametrize
from .orthogonal import orthogonal

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow`` norm of ``v`` over every dimension but ``dim``, kept as size-1
    dimensions (``dim=-1``: over all of ``v``, a scalar: PyTorch's convention)."""
    if dim == -1:
        return v.norm(pow)
    if not -v.dim() <= dim < v.dim():  # (it took dim % v.dim(), another axis)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-v.dim()}, "
                         f"{v.dim() - 1}], but got {dim})")
    dims = [d for d in range(v.dim()) if d != dim % v.dim()]
    return v.norm(pow, dims, keepdim=True) if dims else v.abs()


def weight_norm_formula(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """``torch._weight_norm``: ``v * (g / norm_except_dim(v, 2, dim))`` (one node named
    as PyTorch's fused kernel for ``dim`` first or last, as PyTorch computes those)."""
    w = v * (g / norm_except_dim(v, 2, dim))
    if dim in (0, v.dim() - 1):
        return named(w, v, "WeightNormInterfaceBackward0", (v, g))
    return w


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_formula(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Parametrize ``module.<name>`` as ``g * v / ‖v‖`` (see the module docstring)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            self.register_buffer("_u", normalize(randn(h, dtype=weight.dtype), dim=0,
                                                 eps=self.eps))
            self.register_buffer("_v", normalize(randn(w, dtype=weight.dtype), dim=0,
                                                 eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(weight_mat.t().mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.dim() == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def default_spectral_dim(module: Module) -> int:
    """1 for a ConvTranspose1d/2d/3d (its weight is (in, out, ...)), else 0: PyTorch's
    isinstance test, by the classes' names (a parametrized module's class is a subclass)."""
    names = {c.__name__ for c in type(module).__mro__}
    return 1 if names & {"ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"} else 0


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Parametrize ``module.<name>`` as the weight divided by its largest singular value,
    estimated by power iteration (see the module docstring)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = default_spectral_dim(module)
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
