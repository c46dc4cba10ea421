"""``torch.special``: PyTorch's special-function namespace over the Tensor methods and the
special-function primitives (``symgrad.special.expit(x)`` is ``x.sigmoid()``,
``gammaln`` is ``lgamma``, ``gammainc`` is ``igamma``, ...).

Integer and bool inputs compute in the default float dtype, as PyTorch's. Left out
(an AttributeError, not a guess): ``ndtri`` (``sqrt(2) erfinv(2p - 1)`` loses every digit
as ``p`` nears 0, where PyTorch's rational approximation holds), ``zeta``, ``erfcx`` and
the Bessel and orthogonal-polynomial families, which have no primitive here.

    >>> import symgrad as torch
    >>> torch.special.expit(torch.tensor([0.0])), torch.special.gammaln(torch.tensor([3.0]))
    (tensor([0.5000]), tensor([0.6931]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_api.scipy_special import COMPOSITES
from ..numpy_api.scipy_stats import log_ndtr as _log_ndtr
from ..prims import special_functions as SF
from .elementwise_methods import _floating, _floats
from .function import Function
from .functions import _as_tensor
from .method_args import named as _named
from .tensor import Tensor


def _tensor_method(name: str, doc: str) -> Any:
    def fn(input: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(_as_tensor(input), name)(*args, **kwargs)
    fn.__doc__ = f"``torch.special``: {doc} (``input.{name}(...)``)."
    return fn


expit = _tensor_method("sigmoid", "the logistic sigmoid")
logit = _tensor_method("logit", "``log(x / (1 - x))``, ``eps`` clamps")
erf = _tensor_method("erf", "the error function")
erfc = _tensor_method("erfc", "``1 - erf``")
erfinv = _tensor_method("erfinv", "the inverse error function")
gammaln = _tensor_method("lgamma", "``log|gamma(x)|``")
digamma = psi = _tensor_method("digamma", "the logarithmic derivative of gamma")
multigammaln = _tensor_method("mvlgamma", "the multivariate log-gamma of dimension ``p``")
i0 = _tensor_method("i0", "the modified Bessel function of order 0")
sinc = _tensor_method("sinc", "``sin(pi x) / (pi x)``, 1 at 0")
log1p = _tensor_method("log1p", "``log(1 + x)``")
expm1 = _tensor_method("expm1", "``exp(x) - 1``")
exp2 = _tensor_method("exp2", "``2**x``")
gammainc = _tensor_method("igamma", "the regularized lower incomplete gamma ``P(a, x)``")
gammaincc = _tensor_method("igammac", "the regularized upper incomplete gamma ``Q(a, x)``")
xlogy = _tensor_method("xlogy", "``x log(y)``, 0 where x is 0")


def round(input: Any, *, decimals: int = 0) -> Any:
    """``torch.special.round``: halves to even, ``decimals`` places (floats only, as
    PyTorch's)."""
    return _as_tensor(input).round(decimals=decimals)


def polygamma(n: int, input: Any) -> Any:
    """``torch.special.polygamma(n, input)``: the ``n``-th derivative of digamma."""
    return _as_tensor(input).polygamma(n)


def logsumexp(input: Any, dim: Any, keepdim: bool = False) -> Any:
    """``torch.special.logsumexp``: ``input.logsumexp(dim, keepdim)``."""
    return _as_tensor(input).logsumexp(dim, keepdim)


def softmax(input: Any, dim: int, dtype: Any = None) -> Any:
    """``torch.special.softmax``: ``input.softmax(dim, dtype)``."""
    return _as_tensor(input).softmax(dim, dtype=dtype)


def log_softmax(input: Any, dim: int, dtype: Any = None) -> Any:
    """``torch.special.log_softmax``: ``input.log_softmax(dim, dtype)``."""
    return _as_tensor(input).log_softmax(dim, dtype=dtype)


def _unary(prim_fn: Any, name: str, grad_name: str) -> Any:
    def fn(input: Any) -> Any:
        x = _as_tensor(input)
        return _named(prim_fn(_floating(x, name)), x, grad_name, (x,))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.special.{name}`` (PyTorch's node ``{grad_name}``)."
    return fn


i0e = _unary(SF.i0e, "i0e", "SpecialI0EBackward0")
i1 = _unary(SF.i1, "i1", "SpecialI1Backward0")
i1e = _unary(SF.i1e, "i1e", "SpecialI1EBackward0")
ndtr = _unary(SF.ndtr, "ndtr", "MulBackward1")  # (PyTorch's composite: its last node)


def _log_ndtr_in_float64(x: Any) -> Any:
    """``log_ndtr`` of float32 and float16 computed in float64 and rounded once (float32's
    own formula switches to the series at -10, where it holds to 4e-11, not to an ulp)."""
    if x.dtype.itemsize >= 8:
        return _log_ndtr(x)
    return _log_ndtr(x.double()).to(x.dtype)


log_ndtr = _unary(_log_ndtr_in_float64, "log_ndtr", "SpecialLogNdtrBackward0")


def entr(input: Any) -> Any:
    """``-x log(x)`` for ``x > 0``, 0 at 0, ``-inf`` below 0 (nan stays nan), as PyTorch's
    ``special_entr``, and its gradient ``-(log(x) + 1)`` everywhere, as PyTorch's: inf at
    0, nan below, -inf at inf (a ``where`` of the pieces gave 0 at and below 0, nan at
    inf)."""
    x = _floating(_as_tensor(input), "entr")
    if not x.requires_grad:
        return Tensor._make(_entr(x._value))
    return _named(_Entr.apply(x), x, "SpecialEntrBackward0", (x,))


def _entr(v: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = -(v * np.log(v))
    outside = np.where(v == 0, 0.0, np.where(np.isnan(v), v, -np.inf))
    return np.where(v > 0, inside, outside).astype(v.dtype)


class _Entr(Function):
    """entr's values with PyTorch's derivative formula (differentiable again: ``-g/x``)."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return Tensor._make(_entr(x._value))

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * -(x.log() + 1)


def xlog1py(input: Any, other: Any) -> Any:
    """``x log1p(y)``, 0 where ``x`` is 0 (unless ``y`` is nan)."""
    x = _as_tensor(input) if not hasattr(other, "_value") else input
    a, b = _floats(x, other)
    return _named(COMPOSITES["xlog1py"](a, b), x, "SpecialXlog1PyBackward0", (a, b))


__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc",
           "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr",
           "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "polygamma", "psi",
           "round", "sinc", "softmax", "xlog1py", "xlogy"]
