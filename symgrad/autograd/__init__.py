"""``symgrad.autograd``: PyTorch's ``torch.autograd`` names for the eager layer.

``Variable``, grad mode (``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``is_grad_enabled``), the graph's node types, the backward engine's
statistics and warning, ``grad`` (``torch.autograd.grad``, with ``create_graph``
for gradients that can be differentiated again: :mod:`symgrad.eager.double`) and
:mod:`.functional` (``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``,
``vhp``) and ``Function`` (your own backward, :mod:`symgrad.eager.function`). The
implementation is :mod:`symgrad.eager`.

    >>> import symgrad as torch
    >>> from symgrad.autograd import Variable
    >>> x = Variable(torch.ones(2, 2), requires_grad=True)
    >>> out = ((x + 2) * (x + 2) * 3).mean()
    >>> out.backward()
    >>> x.grad
    tensor([[4.5000, 4.5000],
            [4.5000, 4.5000]])
    >>> g, = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    >>> torch.autograd.grad(g.sum(), x)[0]
    tensor([[6., 6.],
            [6., 6.]])
"""

from ..core.errors import SCALAR_OUTPUT_ERROR
from ..eager import scatter_extreme  # noqa: F401 -- sets scatter_reduce's amax/amin
from ..eager.backward import KernelFallbackWarning, backward_stats
from ..eager.double import grad
from ..eager.function import Function, FunctionCtx, once_differentiable
from ..eager.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from ..eager.graph import AccumulateGrad, Node
from ..eager.tensor import EagerTrace
from ..eager.tensor_ops import Variable

__all__ = ["Variable", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "inference_mode", "is_inference_mode_enabled",
           "Node", "AccumulateGrad", "EagerTrace", "backward_stats", "KernelFallbackWarning",
           "SCALAR_OUTPUT_ERROR", "grad", "functional", "Function", "FunctionCtx",
           "once_differentiable"]

from . import function, functional  # noqa: E402,F401 (torch.autograd.functional: jacobian, hessian, ...)
