"""``symgrad.autograd.function``: PyTorch's ``torch.autograd.function`` names
(``Function``, ``FunctionCtx``, ``once_differentiable``); see :mod:`symgrad.eager.function`."""

from ..eager.function import Function, FunctionCtx, once_differentiable

__all__ = ["Function", "FunctionCtx", "once_differentiable"]
