"""In-place Tensor operations and PyTorch's version-counter rules (a mixin of ``Tensor``).

``x.add_(y)``, ``x -= g``, ``x.zero_()``, ``x.copy_(y)``, ``x.clamp_(min=0)``,
``x[index] = v`` (in :mod:`.tensor`, through :meth:`InPlaceMethods._inplace`) write
into the tensor's own array and bump its ``_version``. Under ``no_grad``, or when
nothing involved requires grad, that is all. Otherwise the operation is recorded:
the tensor takes the new node (``y.mul_(3)`` is ``y = y * 3`` for the gradient),
and the nodes of the operation stop watching the tensor's version, since they
read it through its old node. A leaf that requires grad refuses, with PyTorch's
message. Nodes that PyTorch would have made save the tensor (an input of a
product, the output of ``exp``) keep watching it: changing it before backward
raises "modified by an inplace operation", as in PyTorch. A change through a view
also changes the view's base, and an unrecorded change of a result is read by the
backward as it is (:mod:`.views`).

    >>> import symgrad as torch
    >>> x = torch.ones(3, requires_grad=True)
    >>> y = x * 2
    >>> y.add_(1)
    tensor([3., 3., 3.], grad_fn=<AddBackward0>)
    >>> y._version, x._version
    (1, 0)
"""

from __future__ import annotations

import operator
import weakref
from typing import Any

import numpy as np

from . import bf16, grad_mode, views
from . import complex_tensors as cx
from . import dtypes as dt
from .graph import Node, next_seq
from .method_args import _mark_composite
from .methods import checked_alpha, named, promoted, unwrap
from .op_dtypes import wrapped_int
from .random import numpy_generator

_F64 = np.dtype(np.float64)
#: the ufunc of each augmented assignment, for writing into the array itself
_UFUNCS = {operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
           operator.truediv: np.true_divide}


READ_ONLY_ERROR = (
    "this tensor's memory is read-only: it is the result of unfold() (a view in PyTorch, "
    "a copy in symgrad, so an in-place change would not reach the unfolded tensor) or of a "
    "read-only numpy array. Change the tensor it came from, or a .clone() of this one.")


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "_value") and hasattr(x, "_node")


class InPlaceMethods:
    """The in-place methods of :class:`symgrad.Tensor` (see the module docstring)."""

    __slots__ = ()

    def _inplace(self, fn: Any, other: Any = None, name: str | None = None) -> Any:
        """Replace the values by ``fn(self, other)``, in the same memory.

        When grad is enabled and ``self`` or ``other`` requires grad, the operation is
        recorded: ``self`` takes the result's node, as ``y.mul_(3)`` does in PyTorch
        (backward recomputes from the leaves: an unrecorded change makes it cut the
        graph there, :func:`.views.stale`).
        Every in-place change bumps ``_version``, which backward checks against the
        versions its nodes recorded; writes through ``.data`` are not counted, as in
        PyTorch. The result is cast to ``self``'s dtype, which must be able to hold it
        (an int64 tensor cannot take a float result)."""
        records = grad_mode.is_grad_enabled() and (
            self._requires_grad or (_is_tensor(other) and other._requires_grad))
        views.refuse_no_grad_view(self)
        cx.refuse_write(self, other, records)
        if not self._value.flags.writeable:
            if 0 in self._value.strides:  # an expand()ed view: no place per element
                raise RuntimeError(views.OVERLAP_ERROR)
            raise RuntimeError(READ_ONLY_ERROR)
        if records and self._multi is not None:
            raise RuntimeError(
                f"{self._multi} is a view and is being modified inplace. This view is the "
                "output of a function that returns multiple views. Such functions do not "
                "allow the output views to be modified inplace. You should replace the "
                "inplace operation by an out-of-place one.")
        if records and ((self._requires_grad and self._node is None)
                        or views.root_is_leaf(self)):
            raise RuntimeError(
                ("a view of " if name == "CopySlices" or self._base is not None else "")
                + "a leaf Variable that requires "
                "grad is being used in an in-place operation. Update it inside `with "
                "symgrad.no_grad():` or through its .data")
        if records and self.dtype.is_floating_point:
            mark = next_seq()
            # a tensor without history enters the graph as data, which backward reads
            # then: the old values, not the ones written here (a copy, as PyTorch saves)
            source = self if self._requires_grad else type(self)._make(self._value.copy())
            result = fn(source, other)
            self._check_inplace(result.dtype, result.shape)
            if result.dtype is not self.dtype:
                result = _narrowed(result, self.dtype)
            self._value[...] = result._value
            node = named(result, self, name)._node
            self._bump()
            if node is None:  # no gradient flows (x.copysign_(w): w's is zero): unrecorded
                return self
            _renew(node, mark, self)
            before = self._node
            if before is not None and before.retained is not None and before.retained() is self:
                node.retained, before.retained = before.retained, None  # (PyTorch 2's rule)
            self._node, self._requires_grad = node, True
            _made(node, self)
            views.after_inplace(self, _made)  # a view's root, the root's other views
        elif self.dtype is dt.bfloat16 or self.dtype is dt.float16:
            # PyTorch's rounding (.bf16: x *= 0.1 takes 0.1 in float32), not numpy's
            new = fn(type(self)._make(self._value) if fn is not _overwrite else self._value,
                     other if fn is not _overwrite else unwrap(other))
            new = new._value if _is_tensor(new) else np.asarray(new)
            self._check_inplace(dt.of_array(dt.as_array(new)), np.shape(new))
            self._value[...] = dt.cast(new, self.dtype)
            self._bump()
        else:
            new = fn(self._value, _in_range(self, fn, unwrap(other)))
            self._check_inplace(dt.of_array(dt.as_array(new)), np.shape(new))
            self._value[...] = new
            self._bump()
        return self

    def _check_inplace(self, result: dt.dtype, shape: tuple[int, ...]) -> None:
        if tuple(shape) != self.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        if result.category > self.dtype.category:
            raise RuntimeError(f"result type {result.name} can't be cast to the desired output "
                               f"type {self.dtype.name}: convert the tensor first (x = x.to("
                               f"{result!r})) or compute out of place")

    def _augmented(self, other: Any, op: Any) -> Any:
        """``x -= g`` and friends: in place, recorded when a graph is (see ``_inplace``).
        Unrecorded on float64 with a float64 operand of the same shape or a Python
        number (an optimizer's update), numpy writes the result into the array itself."""
        v = self._value
        ufunc = _UFUNCS.get(op)
        if self._no_grad_view:
            views.refuse_no_grad_view(self)
        if ufunc is not None and v.dtype is _F64:
            tensor = _is_tensor(other)
            if not ((self._requires_grad or (tensor and other._requires_grad))
                    and grad_mode.is_grad_enabled()):
                o = other._value if tensor else other
                if type(o) in (float, int) or (type(o) is np.ndarray and o.dtype is _F64
                                               and o.shape == v.shape):
                    try:  # (read-only memory raises before a write: _inplace's error)
                        ufunc(v, o, out=v)
                    except ValueError:
                        pass
                    else:
                        self._bump()
                        return self
        if op is operator.mod and self.dtype.is_floating_point:
            return self.remainder_(other)  # PyTorch's zero signs, not numpy's (-3.0 % 3.0)
        if op in (operator.floordiv, operator.mod) and not self.dtype.is_floating_point:
            # integer // and % as the out-of-place Tensor ops (PyTorch's dtype, its error
            # for a zero divisor), not numpy's (int64 promotion, 0 for a zero divisor)
            make = type(self)._make

            def divide(a: Any, b: Any) -> Any:
                return op(make(a), make(b) if isinstance(b, np.ndarray) else b)._value
            divide.__name__ = op.__name__  # (a Python int wrapped as for ``op``)
            return self._inplace(divide, other)
        return self._inplace(op, other)

    def __iadd__(self, o): return self._augmented(o, operator.add)
    def __isub__(self, o): return self._augmented(o, operator.sub)
    def __imul__(self, o): return self._augmented(o, operator.mul)
    def __itruediv__(self, o): return self._augmented(o, operator.truediv)
    # (without these Python computes ``v //= 2`` out of place: a view's base keeps its values)
    def __ifloordiv__(self, o): return self._augmented(o, operator.floordiv)
    def __imod__(self, o): return self._augmented(o, operator.mod)
    def __ipow__(self, o): return self._augmented(o, operator.pow)
    # (&=, |=, ^=, <<=, >>=: .bitwise.BitwiseMethods, with PyTorch's integer rules)

    def zero_(self) -> Any:
        if not self._no_grad_view and not (
                self._requires_grad and grad_mode.is_grad_enabled()):  # nothing to record
            try:  # (read-only memory raises before a write: _inplace says why, as before)
                self._value.fill(0)
            except ValueError:
                pass
            else:
                self._bump()
                return self
        return self._inplace(_overwrite, 0, "ZeroBackward0")

    def fill_(self, value: Any) -> Any:
        return self._inplace(_overwrite, value, "FillBackward2")

    def copy_(self, other: Any) -> Any:
        return self._inplace(_overwrite, other, "CopyBackwards")

    def add_(self, other: Any, alpha: float = 1) -> Any:
        return self._inplace(_plus_scaled(alpha), other)

    def sub_(self, other: Any, alpha: float = 1) -> Any:
        return self._inplace(_plus_scaled(alpha, negate=True), other)

    def mul_(self, other: Any) -> Any:
        return self._inplace(operator.mul, other)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Any:
        if rounding_mode is not None:  # (no gradient: PyTorch's is zero)
            return self._unary_("div", other, rounding_mode=rounding_mode)
        return self._inplace(operator.truediv, other)

    def addcmul_(self, tensor1: Any, tensor2: Any, value: float = 1) -> Any:
        return self._method_("addcmul", (tensor1, tensor2), tensor1, tensor2, value=value)

    def addcdiv_(self, tensor1: Any, tensor2: Any, value: float = 1) -> Any:
        return self._method_("addcdiv", (tensor1, tensor2), tensor1, tensor2, value=value)

    def lerp_(self, end: Any, weight: Any) -> Any:
        return self._method_("lerp", (end, weight), end, weight)

    def _method_(self, method: str, operands: tuple[Any, ...], *args: Any, **kwargs: Any) -> Any:
        """``x.lerp_(end, w)`` and friends: ``x.lerp(end, w)`` written into ``x`` (its
        values, PyTorch's fused kernel's: :mod:`.fused_values`), recorded when ``x`` or one
        of ``operands`` requires grad (``zeros(3).addcmul_(w, w)``)."""
        carrier = next((t for t in operands if _is_tensor(t) and t._requires_grad), None)

        def fn(a: Any, _: Any) -> Any:
            if _is_tensor(a):
                return getattr(a, method)(*args, **kwargs)
            return getattr(self._make(a), method)(*args, **kwargs)._value
        return self._inplace(fn, carrier)

    def _unary_(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``x.exp_()`` and friends: ``x.exp()`` written into ``x``."""
        def fn(a: Any, _: Any) -> Any:
            if _is_tensor(a):
                return getattr(a, method)(*args, **kwargs)
            return getattr(self._make(a), method)(*args, **kwargs)._value
        # a tensor argument that requires grad (``x.pow_(w)``, ``clamp_(min=t)``) makes
        # the change recorded even when ``x`` needs none, as the operand of ``x += w``
        graded = [a for a in (*args, *kwargs.values()) if _is_tensor(a) and a._requires_grad]
        return self._inplace(fn, graded[0] if graded else None)

    def clamp_(self, min=None, max=None): return self._unary_("clamp", min, max)  # noqa: A002
    def relu_(self): return self._unary_("relu")
    def sigmoid_(self): return self._unary_("sigmoid")
    def tanh_(self): return self._unary_("tanh")
    def exp_(self): return self._unary_("exp")
    def log_(self): return self._unary_("log")
    def sqrt_(self): return self._unary_("sqrt")
    def abs_(self): return self._unary_("abs")
    def neg_(self): return self._unary_("neg")
    def pow_(self, exponent): return self._unary_("pow", exponent)
    def masked_fill_(self, mask, value): return self._unary_("masked_fill", mask, value)

    def uniform_(self, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Any:
        return self._random_(lambda rng: rng.uniform(a, b, self.shape), generator)

    def normal_(self, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Any:
        return self._random_(lambda rng: rng.normal(mean, std, self.shape), generator)

    def _random_(self, draw: Any, generator: Any) -> Any:
        return self._inplace(lambda a, _: draw(numpy_generator(generator)), None)


    # -- in-place shape changes: the same memory seen in a new shape ---------------------
    def _reshaped_(self, method: str, name: str, *args: Any) -> Any:
        """``self`` takes ``self.method(*args)``'s view of its memory (``y.t_()``); recorded
        as PyTorch's (``name``) when grad is enabled and ``self`` requires grad, refused on
        a leaf that requires grad or a view of one (PyTorch's error)."""
        records = grad_mode.is_grad_enabled() and self._requires_grad
        views.refuse_no_grad_view(self)
        if records and (self._node is None or views.root_is_leaf(self)):
            raise RuntimeError(("a view of " if self._base is not None else "")
                               + "a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        if records and self._multi is not None:
            raise RuntimeError(f"{self._multi} is a view and is being modified inplace.")
        mark = next_seq()
        result = getattr(self, method)(*args)
        if not np.may_share_memory(result._value, self._value) and self._value.size:
            raise AssertionError(f"{method} copied")  # (a view always: never reached)
        self._bump()
        self._value = result._value
        if records:
            node = result._node if result._node is not self._node else (self * 1)._node
            node.rename(name)
            _renew(node, mark, self)
            self._node = node
            _made(node, self)
        return self

    def unsqueeze_(self, dim: int) -> Any:
        return self._reshaped_("unsqueeze", "UnsqueezeBackward1", dim)

    def squeeze_(self, dim: Any = None) -> Any:
        name = ("SqueezeBackward3" if dim is None else
                "SqueezeBackward4" if isinstance(dim, (int, np.integer)) else "SqueezeBackward5")
        return self._reshaped_("squeeze", name, *(() if dim is None else (dim,)))

    def t_(self) -> Any:
        if self.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        return self._reshaped_("t", "TBackward1")

    def transpose_(self, dim0: int, dim1: int) -> Any:
        return self._reshaped_("transpose", "TransposeBackward1", dim0, dim1)

    swapdims_ = swapaxes_ = transpose_

    def resize_(self, *sizes: Any, memory_format: Any = None) -> Any:
        """PyTorch's ``resize_`` where it is exact here: of a tensor that does not require
        grad (PyTorch refuses one that does), C-contiguous (its memory in its order); to
        fewer elements a view of the first ones, to more (only a tensor no view shares
        memory with) the old values followed by zeros (PyTorch's are uninitialised)."""
        shape = tuple(int(n) for n in (sizes[0] if len(sizes) == 1 and not isinstance(
            sizes[0], (int, np.integer)) else sizes))
        if self._requires_grad:  # (under no_grad too, as PyTorch)
            raise RuntimeError("cannot resize variables that require grad")
        if not self._value.flags.c_contiguous:
            raise NotImplementedError(
                "resize_ of a non-contiguous tensor (PyTorch keeps its storage order, which "
                "symgrad does not track): call .contiguous() first")
        n = int(np.prod(shape))
        if n <= self._value.size:
            self._value = self._value.reshape(-1)[:n].reshape(shape)
        elif self._base is not None or len([r for r in self._aliases or () if r() is not None]) > 1:
            raise NotImplementedError(
                "resize_ to more elements of a tensor that shares its memory (a view, or "
                "viewed): PyTorch grows the shared storage, symgrad cannot; clone() first")
        else:
            grown = np.zeros(n, self._value.dtype)
            grown[:self._value.size] = self._value.reshape(-1)
            self._value = grown.reshape(shape)
        self._bump()
        return self


def _narrowed(result: Any, dtype: Any) -> Any:
    """``result`` (``float32 *= float64``: float64) cast to the dtype it is written in,
    recorded as one node with the op's name and operands: later operations and the
    backward read the float32 values written, as PyTorch's in-place node gives them."""
    inner = result._node
    cast = result._cast(dtype)
    if inner is not None and cast._node is not inner:
        cast._node.rename(inner.name())
        cast._node.shown = inner.operands()
        _mark_composite(cast._node)
    return cast


def _made(node: Any, t: Any) -> None:
    """``t`` now holds ``node``'s value (a backward may read it: :func:`.views.stale`)."""
    node.made = (weakref.ref(t), t._version)
    t._untracked = 0
    if t._seen is not None:  # its numpy array is still out there
        t._seen = t._value.copy()


def _in_range(self: Any, fn: Any, other: Any) -> Any:
    """A Python int operand of an integer tensor's in-place op as PyTorch takes it: wrapped
    into the dtype by ``add_``, ``sub_``, ``mul_`` (``int8.add_(300)`` adds 44), refused by
    the others (``fill_(300)``: PyTorch's RuntimeError)."""
    if type(other) is not int or self.dtype.is_floating_point or self.dtype is dt.bool:
        return other
    return wrapped_int(other, self.dtype, getattr(fn, "__name__", ""))


def _renew(node: Any, mark: int, target: Any) -> None:
    """After an in-place change of ``target`` recorded as the nodes made since ``mark``:
    those nodes read ``target`` as it was (through its old node, recomputed by backward;
    PyTorch keeps a copy where it needs one), so they do not watch ``target``."""
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if id(n) in seen or n.seq <= mark:
            continue
        seen.add(id(n))
        n.versions = tuple((r, v) for r, v in n.versions
                           if r is not target and not isinstance(r, weakref.ref))
        stack.extend(a for a in n.inputs if isinstance(a, Node))


def _overwrite(a: Any, b: Any) -> Any:
    """``b`` in ``a``'s shape; on Tensors a recorded ``a * 0 + b`` (zero gradient to ``a``)."""
    if _is_tensor(a):
        return a * 0 + b
    if dt.is_bfloat16(a):  # (through float32, as PyTorch's)
        return np.broadcast_to(dt.cast(np.asarray(b), dt.bfloat16), a.shape)
    return np.broadcast_to(np.asarray(b, dtype=a.dtype), a.shape)


def _plus_scaled(alpha: float, negate: bool = False) -> Any:
    """``a + alpha * b`` (``add_(b, alpha=)``); on unrecorded float tensors rounded once,
    as PyTorch's (:func:`.bf16.add_scaled`: its fused multiply-add for float32 and
    float64)."""
    def fn(a: Any, b: Any, alpha: Any = alpha) -> Any:
        alpha = checked_alpha(a, b, alpha)  # (sub_'s before it negates: True is no -1)
        alpha = -alpha if negate else alpha
        if alpha == 1:
            return a + b
        if alpha is False:  # a bool result: a or (False and b)
            return a + (b & False)
        if isinstance(a, np.ndarray) and type(alpha) in (int, float):  # (unrecorded)
            y = bf16.scalar_operand(a, b)  # a number: in a's dtype, as PyTorch's
            if y is None and a.dtype in (np.float32, np.float64) and np.asarray(b).dtype == a.dtype:
                y = b
            if y is not None:
                return bf16.add_scaled(a, alpha, np.broadcast_to(y, a.shape))
        if (_is_tensor(a) and a.dtype in (dt.bfloat16, dt.float16) and not a._requires_grad
                and not (_is_tensor(b) and (b._requires_grad or b.dtype is not a.dtype))):
            b = dt.cast(np.asarray(unwrap(b)), a.dtype)
            return type(a)._make(bf16.add_scaled(a._value, alpha, np.broadcast_to(b, a.shape)))
        if _is_tensor(a):  # recorded: Tensor.add/sub's value rounded once, alpha applied
            return a.sub(b, alpha=-alpha) if negate else a.add(b, alpha=alpha)  # before a
        b = promoted(a, b)  # broadcast b's gradient is summed (AddBackward0, SubBackward0)
        return a + alpha * b if alpha != -1 else a - b
    fn.__name__ = "add"  # (an int operand wraps as add's: _in_range)
    return fn
