"""symgrad: gradients of plain numpy functions, derived symbolically, compiled by Numba.

    >>> import numpy as np, symgrad as sg
    >>> @sg.grad
    ... def f(x):
    ...     return np.mean(3 * (x + 2) ** 2)
    >>> f(np.ones((2, 2)))
    array([[4.5, 4.5],
           [4.5, 4.5]])

The same gradients, the PyTorch way (:mod:`symgrad.autograd`, :mod:`symgrad.eager`):

    >>> import symgrad as torch
    >>> from symgrad.autograd import Variable
    >>> x = Variable(torch.ones(2, 2), requires_grad=True)
    >>> out = ((x + 2) * (x + 2) * 3).mean()
    >>> out.backward()
    >>> x.grad
    tensor([[4.5000, 4.5000],
            [4.5000, 4.5000]])

Importing symgrad loads numpy only; Numba is imported when a kernel is first
compiled, SymPy only by :mod:`symgrad.sympy_bridge` and Graphviz only to draw.
``symgrad.testing`` (``check_grad``) is imported on first use of ``sg.testing``, as
``np.testing``.

Layers. Each folder imports only from the layers below it (``tests/test_layers.py``
checks it, with imports inside functions counted, and that there is no cycle):

- ``core/``: the IR and its text form, the checker, the interpreter, tracing
  machinery, conventions, errors. Imports nothing of symgrad.
- ``prims/``: every primitive with all its facets and flags, and the recording
  helpers VJP rules use. Imports ``core``.
- ``numpy_api/``: numpy's API on traced values (ufunc and ``__array_function__``
  dispatch, indexing, ``sg.at``, linalg). Imports ``core``, ``prims``.
- ``transforms/``: the adjoint and the passes. Imports ``core``, ``prims``.
- ``backend/``: fusion, split, codegen, the kernel cache, ``program.build``.
  Imports ``core`` only: it reads what it needs from the primitives' flags.
- ``pipeline.py``: the one build (adjoint, passes, backend) for every front end.
  Imports ``core``, ``transforms``, ``backend``.
- Front ends, on top: ``api.py`` (grad, jit, vjp), ``eager/`` (Tensor, backward)
  with ``autograd.py``, ``cli/`` (the command), ``sympy_bridge.py``,
  ``testing.py``, ``ops.py``. They may import any layer below, and ``cli``
  and ``testing`` the other front ends; nothing below imports them.
"""

from . import autograd, ops  # noqa: E402,F401 (symgrad.ops: numpy's API, by its old name)
from .api import grad, jit, value_and_grad, vjp  # noqa: E402
from .autograd import (  # noqa: E402
    Variable,
    enable_grad,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .backend.threads import get_num_threads, max_threads, set_num_threads  # noqa: E402
from .core.errors import (  # noqa: E402
    EscapedTracerError,
    ShapeError,
    TracerBoolConversionError,
    TracerConversionError,
    UnsupportedFunctionError,
)
from .core.ir import Graph  # noqa: E402
from .core.version import __version__  # noqa: E402
from .eager.tensor import Tensor  # noqa: E402
from .eager.tensor_ops import (  # noqa: E402
    abs,
    acos,
    arange,
    asin,
    atan,
    cos,
    cosh,
    exp,
    expm1,
    from_numpy,
    full,
    log,
    log1p,
    manual_seed,
    matmul,
    maximum,
    mean,
    minimum,
    ones,
    ones_like,
    pow,
    rand,
    randn,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    sum,
    t,
    tan,
    tanh,
    tensor,
    zeros,
    zeros_like,
)
from .numpy_api import (  # noqa: E402
    at,
    log_softmax,
    logsumexp,
    relu,
    sigmoid,
    softmax,
    softplus,
    where,
    xlogy,
)

__all__ = ["grad", "value_and_grad", "vjp", "jit", "where", "at", "relu", "sigmoid", "softplus",
           "logsumexp", "log_softmax", "softmax", "xlogy", "Graph", "ShapeError",
           "TracerBoolConversionError", "TracerConversionError", "UnsupportedFunctionError",
           "EscapedTracerError", "__version__",
           # PyTorch-style autograd
           "Tensor", "Variable", "autograd", "tensor", "from_numpy", "zeros", "ones", "full",
           "zeros_like", "ones_like", "randn", "rand", "arange", "manual_seed", "no_grad",
           "enable_grad", "set_grad_enabled", "is_grad_enabled", "exp", "log", "log1p", "expm1",
           "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "abs",
           "sign", "square", "pow", "matmul", "maximum", "minimum", "sum", "mean", "t",
           # threads of parallel kernels (issue 17)
           "set_num_threads", "get_num_threads", "max_threads"]


def __getattr__(name: str):
    """``sg.testing`` without ``import symgrad.testing`` (PEP 562): the module is
    imported on first use, so ``import symgrad`` stays as light as it is."""
    if name == "testing":
        import importlib

        return importlib.import_module(".testing", __name__)  # also sets symgrad.testing
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
