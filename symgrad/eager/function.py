"""``symgrad.autograd.Function``: PyTorch's way of giving a Tensor operation its own
backward.

``forward(ctx, *args)`` runs at once, without recording (``no_grad``), on the
Tensors it is given; its results get one node each (``<Name>Backward``). The
recorded operation is a ``callback`` equation (:mod:`symgrad.prims.custom`)
whose Python functions are per class: the forward one hands back what
``forward`` computed, the VJP one runs ``backward(ctx, *grad_outputs)`` (no
recording) and returns a gradient per Tensor input. Which call's ``ctx`` they
read comes in as a data operand, a handle (a number) looked up in a table of
live contexts, so the structure of a training step's graph does not change from
one step to the next and its backward compiles once: the kernel is cut around
the callbacks (:func:`symgrad.backend.program.build`), which run in Python.

Double backward (``create_graph=True``): the gradient's graph is replayed through
the eager trace (:mod:`.double`); there ``backward`` runs *with* recording, on the
cotangent Tensors and ``ctx.saved_tensors`` (the Tensors themselves, with their
graph), so a backward written with Tensor operations is differentiated again, as
in PyTorch. A backward marked :func:`once_differentiable` runs without recording
there, and its results raise PyTorch's error when differentiated.

    >>> import symgrad as torch
    >>> class Exp(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         y = x.exp()
    ...         ctx.save_for_backward(y)
    ...         return y
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (y,) = ctx.saved_tensors
    ...         return g * y
    >>> x = torch.tensor([0.0, 1.0], requires_grad=True)
    >>> Exp.apply(x).sum().backward()
    >>> x.grad
    tensor([1.0000, 2.7183])
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.ir import FLOAT, Aval, tuple_aval
from ..prims.control import proj_p
from ..prims.custom import Host, callback_p
from . import views
from .grad_mode import enable_grad, is_grad_enabled, no_grad
from .graph import node_class
from .host_nodes import _ctx, _handle, _operand
from .inplace import _made
from .tensor import Tensor

#: PyTorch's words when a backward marked once_differentiable is differentiated
ONCE_ERROR = ("trying to differentiate twice a function that was marked with "
              "@once_differentiable")

_HOSTS: dict[type, tuple[Host, Host]] = {}
_HOSTS_LOCK = threading.Lock()


class FunctionCtx:
    """The ``ctx`` of one call: what ``forward`` saves for ``backward``."""

    def __init__(self, needs_input_grad: tuple[bool, ...]):
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = True
        self._saved: tuple = ()
        self._non_differentiable: set[int] = set()
        self._dirty: tuple = ()
        self._outputs: list[np.ndarray] = []
        self._positions: list[int] = []  # the argument of each Tensor operand
        self._live: list[int] = []       # the outputs that have a node
        self._shapes: list[tuple | None] = []  # each output's shape (None: not a Tensor)
        self._tensors: set[int] = set()  # the arguments that are Tensors
        #: the node's inputs whose gradient ``backward`` gave as None (in its last run)
        self.silent_inputs: frozenset[int] = frozenset()

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep ``tensors`` (or None) for ``backward``, as ``ctx.saved_tensors``."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{len(self._saved)} is of type {type(t).__name__}")
        self._saved = tuple(tensors)

    @property
    def saved_tensors(self) -> tuple:
        return self._saved

    def mark_dirty(self, *tensors: Any) -> None:
        """Inputs ``forward`` changed in place (and returns): each is then the output
        itself, its version bumped, its ``grad_fn`` this node, as PyTorch's."""
        self._dirty = tuple(tensors)

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Outputs that get no gradient (``requires_grad=False``), as integer results."""
        self._non_differentiable.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """With False, ``backward`` gets None for outputs nothing depends on (the default,
        True, gives zeros)."""
        self.materialize_grads = bool(value)


class _Forward(Host):
    """A Function's forward as the callback's function: the values ``forward`` computed.
    Its operands are the handle, then the Tensor arguments."""

    def __init__(self, cls: type):
        super().__init__(self._run, cls.__name__)

    @staticmethod
    def _run(*args: Any) -> list[np.ndarray]:
        return _ctx(args[0])._outputs


class _Backward(Host):
    """A Function's backward as the callback's VJP function: operands (handle, *Tensor
    arguments, *cotangents), a gradient per operand (zeros for the handle)."""

    def __init__(self, cls: type):
        super().__init__(self._run, cls.__name__ + "'")
        self.cls = cls

    def _grads(self, ctx: FunctionCtx, cts: list[Any], make: Callable) -> list[Any]:
        """``backward`` on a gradient per output of ``forward`` (zeros, or None without
        materialize_grads, for outputs without a node; None for non-Tensors)."""
        full: list[Any] = [None] * len(ctx._shapes)
        for k, c in zip(ctx._live, cts):
            full[k] = c
        for k, shape in enumerate(ctx._shapes):
            if full[k] is None and shape is not None and ctx.materialize_grads:
                full[k] = Tensor._make(np.zeros(shape))
        result = self.cls.backward(ctx, *full)
        result = result if isinstance(result, tuple) else (result,)
        n, name = len(ctx.needs_input_grad), self.cls.__name__
        if len(result) < n or any(g is not None for g in result[n:]):
            raise RuntimeError(f"function {name}Backward returned an incorrect number of "
                               f"gradients (expected {n}, got {len(result)})")
        for k, g in enumerate(result[:n]):
            if g is not None and k not in ctx._tensors:
                raise RuntimeError(f"function {name}Backward returned a gradient different than "
                                   f"None at position {k + 1}, but the corresponding forward "
                                   "input was not a Variable")
        return [make(result[k], j, k) for j, k in enumerate(ctx._positions)]

    def _run(self, *args: Any) -> list[np.ndarray]:
        ctx = _ctx(args[0])
        n = 1 + len(ctx._positions)
        cts = [None if not ctx.materialize_grads and not np.any(c) else
               Tensor._make(np.array(c, dtype=np.float64)) for c in args[n:]]

        silent: set[int] = set()

        def value(g: Any, j: int, k: int) -> np.ndarray:
            shape = np.shape(args[1 + j])
            if g is None:
                silent.add(1 + j)
                return np.zeros(shape)
            g = np.asarray(_value(g), dtype=np.float64)
            return np.array(_sum_to(g, shape, k, self.cls.__name__), dtype=np.float64)
        with no_grad():
            grads = self._grads(ctx, cts, value)
        ctx.silent_inputs = frozenset(silent)  # read by Tensor.backward: .grad stays None
        return [np.zeros(()), *grads]

    def replay(self, values: list[Any], like: Any) -> tuple:
        """The gradients as recorded Tensors (``create_graph``): ``backward`` run with
        recording on the cotangent Tensors and the saved Tensors themselves."""
        ctx = _ctx(values[0])
        n = 1 + len(ctx._positions)
        make = type(like)._make
        cts = [c if isinstance(c, Tensor) else make(np.array(c, dtype=np.float64))
               for c in values[n:]]
        once = getattr(self.cls.backward, "_once_differentiable", False)

        def tensor(g: Any, j: int, k: int) -> Any:
            shape = np.shape(_value(values[1 + j]))
            if g is None:
                return make(np.zeros(shape))
            g = _sum_to(g if isinstance(g, Tensor) else make(np.asarray(g, dtype=np.float64)),
                        shape, k, self.cls.__name__)
            if once and any(isinstance(t, Tensor) and t.requires_grad
                            for t in (*cts, *ctx._saved)):
                return _delayed_error(g, cts, ctx)
            return g if isinstance(g, Tensor) else make(np.asarray(g, dtype=np.float64))
        with enable_grad():
            grads = self._grads(ctx, cts, tensor)
        return (make(np.zeros(())), *grads)


def _value(a: Any) -> Any:
    return a._value if isinstance(a, Tensor) else a


def _sum_to(g: Any, shape: tuple, k: int, name: str) -> Any:
    """PyTorch's check of a gradient's shape (``validate_outputs``): a gradient of
    another shape is summed to the input's when the input's shape broadcasts to it
    (a (2, 3) gradient of a (3,) input), and raises otherwise (a 0-d or (2,) one)."""
    have = tuple(np.shape(_value(g)))
    if have == tuple(shape):
        return g
    lead = len(have) - len(shape)
    if lead < 0 or any(n not in (1, m) for n, m in zip(shape, have[lead:])):
        raise RuntimeError(f"Function {name}Backward returned an invalid gradient at index {k} "
                           f"- got {list(have)} but expected shape compatible with "
                           f"{list(shape)}")
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and have[lead + i] != 1)
    if isinstance(g, Tensor):
        return g.sum(dim=dims, keepdim=True).reshape(tuple(shape))
    return np.sum(g, axis=dims, keepdims=True).reshape(shape)


def _delayed_error(g: Any, cts: list[Any], ctx: FunctionCtx) -> Any:
    """``g`` as a Tensor whose gradient raises PyTorch's once_differentiable error."""
    value = np.asarray(_value(g), dtype=np.float64)
    deps = [t for t in (*cts, *ctx._saved) if isinstance(t, Tensor) and t.requires_grad]
    aval = Aval(value.shape, FLOAT)
    fn = Host(lambda *a: [value], "once_differentiable")
    params = dict(fn=fn, avals=(aval,), name="once_differentiable",
                  vjp=RuntimeError(ONCE_ERROR))
    inputs = tuple(t._node if t._node is not None else t for t in deps)
    node = node_class("CallbackBackward0")(callback_p, params, inputs, tuple_aval([aval]))
    part = node_class("DelayedError")(proj_p, {"part": 0}, (node,), aval)
    return Tensor._make(value, part)


def _hosts(cls: type) -> tuple[Host, Host]:
    hosts = _HOSTS.get(cls)
    if hosts is None:
        with _HOSTS_LOCK:
            hosts = _HOSTS.setdefault(cls, (_Forward(cls), _Backward(cls)))
    return hosts


class Function:
    """Subclass with ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)``
    staticmethods; call ``YourFunction.apply(*args)`` (PyTorch's
    ``torch.autograd.Function``). ``backward`` returns one gradient per argument of
    ``forward`` (None for an argument that needs none, or is not a Tensor)."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    def __init__(self, *args: Any, **kwargs: Any):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx = FunctionCtx(needs)
        with no_grad():
            out = cls.forward(ctx, *args)
        outs = out if isinstance(out, tuple) else (out,)
        _dirty(ctx, outs)
        if not (is_grad_enabled() and any(needs)):
            return out
        live = [k for k, o in enumerate(outs) if isinstance(o, Tensor)
                and o.is_floating_point() and id(o) not in ctx._non_differentiable]
        if not live:
            return out
        ctx._positions = [k for k, a in enumerate(args) if isinstance(a, Tensor)
                          and a.is_floating_point()]
        ctx._outputs = [np.asarray(outs[k]._value, dtype=np.float64) for k in live]
        ctx._live = live
        ctx._tensors = {k for k, a in enumerate(args) if isinstance(a, Tensor)}
        ctx._shapes = [tuple(o.shape) if isinstance(o, Tensor) else None for o in outs]
        ops = tuple(_operand(args[k]) for k in ctx._positions)
        avals = tuple(Aval(v.shape, FLOAT) for v in ctx._outputs)
        fwd, bwd = _hosts(cls)
        params = dict(fn=fwd, avals=avals, name=cls.__name__, vjp=bwd)
        node = node_class(f"{cls.__name__}Backward")(callback_p, params,
                                                      (_handle(ctx), *ops), tuple_aval(avals))
        node.versions = tuple((args[k], args[k]._version) for k in ctx._positions
                              if args[k]._node is None)
        results = list(outs)
        for j, k in enumerate(live):
            part = node_class(f"{cls.__name__}Backward")(proj_p, {"part": j}, (node,),
                                                         avals[j])
            if any(outs[k] is d for d in ctx._dirty):  # the input itself takes the node
                t = outs[k]
                t._node, t._requires_grad = part, True
                _made(part, t)
                views.after_inplace(t, _made)  # a view's root, the root's other views
            else:
                t = Tensor._make(outs[k]._value, part)
                part.made = (weakref.ref(t), 0)
            results[k] = t
        # a saved output is the output with its node when backward reads it (PyTorch's
        # saved outputs): a double backward differentiates through it
        made = {id(outs[k]): results[k] for k in live}
        ctx._saved = tuple(made.get(id(t), t) for t in ctx._saved)
        return tuple(results) if isinstance(out, tuple) else results[0]


def _dirty(ctx: FunctionCtx, outs: tuple) -> None:
    """The version bumps of the tensors ``forward`` marked dirty, then PyTorch's checks
    (returned; not a leaf that requires grad, nor a view of one, while recording)."""
    for t in ctx._dirty:
        t._bump()
    for t in ctx._dirty:
        if not any(o is t for o in outs):
            raise RuntimeError("Some elements marked as dirty during the forward method were "
                               "not returned as output. The inputs that are modified inplace "
                               "must all be outputs of the Function.")
    if is_grad_enabled():
        for t in ctx._dirty:
            if t._requires_grad and t._node is None and t._base is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            if views.root_is_leaf(t):
                raise RuntimeError("a view of a leaf Variable that requires grad is being "
                                   "used in an in-place operation.")


def once_differentiable(fn: Callable) -> Callable:
    """Mark a ``backward`` as not differentiable (PyTorch's
    ``torch.autograd.function.once_differentiable``): it runs without recording, and a
    double backward through it raises PyTorch's RuntimeError."""
    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            return fn(ctx, *args)
    wrapper._once_differentiable = True  # type: ignore[attr-defined]
    return wrapper


__all__ = ["Function", "FunctionCtx", "once_differentiable", "ONCE_ERROR"]
