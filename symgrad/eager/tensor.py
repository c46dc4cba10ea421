"""``symgrad.Tensor``: a float64 array with PyTorch's autograd state.

A Tensor has numpy's array API (:class:`symgrad.numpy_api.ArrayMethods`), so
Python operators, ``np.exp(x)``, ``symgrad.exp(x)`` and the methods below run
the same code as a function traced by :func:`symgrad.grad`. The difference is
its trace, :data:`EAGER`: an :class:`EagerTrace` computes each operation at
once with the primitive's numpy ``impl`` and, when an input requires grad,
records a :class:`~symgrad.eager.graph.Node` (the equation and its inputs). So
every primitive the ``grad`` API supports works on Tensors, with no per-op code
here. The methods with PyTorch's names (``dim=``, ``keepdim=``, ``view``,
``t``) are thin wrappers over numpy's.

    >>> import symgrad as torch
    >>> x = torch.ones(2, 2, requires_grad=True)
    >>> out = (3 * (x + 2) ** 2).mean()
    >>> out
    tensor(27., grad_fn=<MeanBackward0>)
    >>> out.backward()
    >>> x.grad
    tensor([[4.5000, 4.5000],
            [4.5000, 4.5000]])

Data is float64 (integers are promoted; comparisons give bool tensors).
"""

from __future__ import annotations

import builtins
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.ir import BOOL, C128, COMPLEXES, F32, FLOAT, Aval, Literal, Primitive
from ..core.tracing import Trace, Traced
from ..numpy_api.indexing import at
from ..numpy_api.traced_array import ArrayMethods
from ..prims.elementwise import add_p, div_p, mul_p, sub_p
from ..prims.operators import Operators
from . import complex_tensors as cx
from . import double, exposed, fastpath, grad_mode, hooks, operand_rules, replay, views
from . import dtypes as dt
from .bf16 import KERNELS
from .bf16 import note as note_bf16
from .bitwise import BitwiseMethods
from .dtype_methods import DtypeMethods
from .dtypes import CPU, Size, as_array, device
from .extra_methods import ExtraMethods
from .fastpath import apply_f64, binary_f64, compute, node_class_of, watched
from .graph import next_seq
from .index_order import ints_first
from .inplace import InPlaceMethods
from .methods import TensorMethods, named, new_view, size_arg, unwrap
from .more_methods import MoreMethods
from .op_dtypes import compared, in_dtype, int_power, ir_shape_rule, result_dtype
from .operand_rules import bool_power as _bool_power
from .operand_rules import floordiv as _floordiv
from .operand_rules import is_bool as _is_bool
from .operand_rules import no_bool_sub as _no_bool_sub
from .operand_rules import no_bools as _no_bools
from .operand_rules import remainder as _remainder
from .replay import keep
from .saved_indices import saved_by_indexing, watch_indices
from .select_methods import SelectMethods, nan_passes_both, zero_times_gradient_at_nan
from .torch_facts import torch_facts
from .torch_methods import TorchMethods
from .value_methods import ValueMethods

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during backward(). If you want the gradient of this "
    "non-leaf Tensor, call .retain_grad() on it before backward(); if you meant the leaf, "
    "access .grad of the leaf Tensor instead.")


class EagerTrace(Trace):
    """The trace Tensors belong to: computes each operation now, records it if needed.

    Tensors hold float64, float32, int64 and more. An operation takes its result dtype
    from PyTorch's promotion (:func:`.op_dtypes.result_dtype`), computes in it with
    numpy, and records (for floating results only) an equation whose node notes the
    result's dtype (float32, or float64 for every other one): backward runs a graph all
    of float32 in float32, any other in float64, converting float32 leaves at the
    kernel's boundary and their gradients back (see :mod:`.backward`)."""

    def apply(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        result = self._apply(prim, args, params)
        if prim.view:  # y[0:2], y.t(), y.view(4): a view of y's root (see .views)
            views.note(args, result)
        return result

    def unary(self, prim: Primitive, a: Any, params: dict[str, Any]) -> Any:
        """:meth:`apply` of ``prim(a, **params)``; for a float64 ``a``, the fast path's
        :func:`.fastpath.unary_f64` at once (its contract: the same value and node)."""
        result = fastpath.unary_f64(prim, a, params, Tensor._make)
        if result is None:
            return self.apply(prim, (a,), params)
        if prim.view:
            views.note((a,), result)
        return result

    def _apply(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        fast = apply_f64(prim, args, params, Tensor._make)
        if fast is not None:
            return fast
        # numpy's scalars (np.log(2.0)) are Python numbers to PyTorch's promotion: a 0-d
        # float32 tensor times np.float64(0.5) stays float32
        raw = [a._value if isinstance(a, Tensor) else a if type(a) in (float, int, bool)
               else a.item() if isinstance(a, np.generic) and a.dtype.kind in "biuf"
               else a if type(a) is complex else as_array(a) for a in args]
        if cx.involved(prim, raw, params):  # complex Tensors: their own rules
            return cx.apply(prim, args, raw, params, Tensor._make)
        aval = ir_shape_rule(prim, raw, params)
        if aval.dtype in COMPLEXES:  # np.fft.rfft(t): never its real part, silently
            raise cx.refusal(prim.name)
        out = result_dtype(prim, raw, aval, params)
        values = compared(raw, prim) if out is None else [in_dtype(v, out, k, prim)
                                                          for k, v in enumerate(raw)]
        kernel = KERNELS.get((prim.name, out))
        value = compute(prim, values, params, kernel)  # IEEE results (inf, nan)
        want = np.bool_ if out is None else out.numpy
        if type(value) is not np.ndarray or value.dtype != want:
            value = np.asarray(value, want) if out is None else dt.cast(np.asarray(value), out)
        if not (out is not None and out.is_floating_point and grad_mode.is_grad_enabled()
                and any(isinstance(a, Tensor) and a._requires_grad for a in args)):
            return Tensor._make(value)
        literal_ok = torch_facts(prim).literal_operands
        inputs = tuple(_operand(a, v, literal_ok) for a, v in zip(args, values))
        # (the node's dtype: a graph all of float32 runs its backward in float32)
        node = node_class_of(prim)(prim, params, inputs,
                                   Aval(aval.shape, F32 if out is dt.float32 else FLOAT))
        result = Tensor._make(value, node)
        node.made = (weakref.ref(result), 0)
        node.versions, node.reads = watched(prim, args, result)
        keep(node, value, values)
        note_bf16(node, out, args)
        return result


#: the dtypes a node keeps its data in (others: converted to float64)
_DATA_DTYPES = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.bool_))


def _operand(a: Any, value: Any, literal_ok: bool) -> Any:
    """What a node keeps of an operand: a node, a leaf, a literal or float (or bool) data."""
    if isinstance(a, Tensor) and a._requires_grad:
        return a._node if a._node is not None else a  # a result's node, or a leaf
    if type(value) in (float, int, bool):
        value = np.float64(value) if type(value) is not bool else np.bool_(value)
    scalar = value.ndim == 0 and not isinstance(a, Tensor)
    if scalar and (literal_ok or value.dtype != np.float64):
        return Literal(value.item() if value.dtype == np.bool_ else float(value))
    if value.dtype not in _DATA_DTYPES:  # (int64, float16 ... data enter kernels as
        value = value.astype(np.float64)  # float64; float32 data stay: .backward converts)
    if scalar:  # x * (0.5 + k): a kernel input, so the structure does not change with k
        return np.array(value, dtype=np.float64)
    if value is a:  # the caller's own array (x * a): a copy, so that a write into it after
        value = value.copy()  # the forward does not reach the backward (no version sees it)
    return value  # data: a kernel input, never a literal


def _arithmetic(prim: Primitive, general: Any, swap: bool = False) -> Any:
    """A Python operator of Tensor: :func:`.fastpath.apply_f64` when it takes the
    operands, else ``general`` (numpy's operator, bools counted as int64)."""
    def op(self: Tensor, o: Any) -> Any:
        result = binary_f64(prim, o, self, _make) if swap else binary_f64(prim, self, o, _make)
        if result is None:
            result = apply_f64(prim, (o, self) if swap else (self, o), {}, _make)
        return general(*_no_bools(self, o)) if result is None else result
    op.__name__ = general.__name__
    return op


EAGER = EagerTrace()


def _untracked_change(data: Any, seq: int) -> None:
    """``y.data`` (or a view of it) was changed in place: so were y's root and the views and
    aliases of that root, uncounted by their versions: ``_untracked`` is negative."""
    origin = data._data_of()
    if origin is not None:
        origin._untracked = -seq
        for ref in origin._aliases or ():
            t = ref()
            if t is not None and t is not origin:
                t._untracked = -seq


class Tensor(DtypeMethods, cx.ComplexMethods, ValueMethods, BitwiseMethods, InPlaceMethods,
             MoreMethods, TensorMethods, ExtraMethods, SelectMethods, TorchMethods,
             ArrayMethods, Traced):
    """An n-d array (float64 by default; float32, int64, bool) with autograd state:
    ``data``, ``grad``, ``grad_fn``, ``requires_grad``, ``is_leaf``.
    ``Tensor([[1., 2.]])`` copies data as float64 (a float64 numpy array is shared, as
    PyTorch's of its default dtype); ``Tensor(2, 3)`` is a zero-filled tensor of that shape."""

    __slots__ = ("_value", "_node", "_requires_grad", "_grad", "_accumulate", "_version",
                 "_aliases", "_base", "_data_of", "_untracked", "_multi", "_no_grad_view",
                 "_seen", "_kept", "_hooks", "_post_hooks", "__weakref__")
    __hash__ = object.__hash__  # type: ignore[assignment]  # by identity, as in PyTorch
    _trace = EAGER  # every operation on a Tensor is computed and recorded by it
    _default = dt.float64  # the dtype of ``Tensor(data)`` (FloatTensor & co. set theirs)

    def __init__(self, *data: Any):
        if len(data) == 1 and type(data[0]) is np.ndarray and \
                data[0].dtype == self._default.numpy:  # (PyTorch's: shared, as from_numpy)
            self._init(exposed.adopt(data[0], data[0]), None, False)
            return
        if len(data) == 1 and not isinstance(data[0], (int, np.integer)):
            dt.refuse_complex(np.asarray(_unwrap(data[0])))
            value = np.array(_unwrap(data[0]), dtype=self._default.numpy)
        else:
            value = np.zeros(size_arg(data), dtype=self._default.numpy)
        self._init(value, None, False)

    def _init(self, value: np.ndarray, node: Any, requires_grad: bool) -> None:
        self._value = value
        self._node = node
        self._requires_grad = requires_grad or node is not None
        self._grad: Tensor | None = None
        self._accumulate: Any = None
        self._version = 0  # bumped by in-place operations; checked by backward
        self._aliases: list | None = None  # weak references to tensors detach() shares it with
        #: and to its views (:mod:`.views`); the root tensor this one is a view of
        self._base: Tensor | None = None
        self._data_of: Any = None  # for ``y.data``: a weak reference to y (its root)
        self._multi: str | None = None  # "Output 1 of Unbind": one of several views
        self._no_grad_view = False  # a view made under no_grad of one requiring grad (.views)
        #: a copy of the values when an alias's numpy() array was handed out (.views.expose)
        self._seen: np.ndarray | None = None
        #: (version, weak reference to a copy of the values, the copy or None) while its
        #: memory is handed to numpy (.exposed)
        self._kept: tuple | None = None
        #: nonzero when the values changed since the tensor's node made them: the
        #: number of the last node made before the change (through an alias, under
        #: ``no_grad``), negated when no version counted it (``.data``). A backward reads
        #: the values then (:func:`.views.stale`)
        self._untracked = 0
        self._hooks: dict[int, Any] | None = None  # register_hook's (.hooks)
        self._post_hooks: dict[int, Any] | None = None  # register_post_accumulate_grad_hook's

    def _bump(self) -> None:
        """Count one in-place change: in this tensor's version and in those of the tensors
        that ``detach()`` made from it or it from (they share the values, and PyTorch
        their version counter), so a backward that saved any of them refuses."""
        self._version += 1
        seq = next_seq()
        replay.written(self._value)
        if self._node is not None:
            self._node.exposed = True  # its kept value is these values (see .replay)
        if self._untracked >= 0:  # (a recorded change gives it a new node after this)
            self._untracked = seq
        if self._data_of is not None:
            _untracked_change(self, seq)
        if self._aliases is not None:
            for ref in self._aliases:
                t = ref()
                if t is not None and t is not self:
                    t._version += 1
                    if t._node is not None:
                        t._node.exposed = True
                    if t._untracked >= 0:
                        t._untracked = seq
                    if t._data_of is not None:
                        _untracked_change(t, seq)

    @classmethod
    def _make(cls, value: np.ndarray, node: Any = None) -> Tensor:
        """A Tensor (never a subclass such as ``nn.Parameter``) holding ``value``."""
        t = object.__new__(Tensor)
        t._init(value, node, False)
        return t

    @classmethod
    def _shared(cls, data: Any, requires_grad: bool = False) -> Tensor:
        """:meth:`_leaf` of the caller's ``data`` (``from_numpy``, ``Variable``,
        ``nn.Parameter``): an array it shares is registered as handed to numpy
        (:func:`.exposed.adopt`), a Tensor shares its version counter, as PyTorch's (and
        so its handouts: ``c.numpy()`` after a forward read ``Variable(c)``)."""
        t = cls._leaf(data, requires_grad)
        t._value = exposed.adopt(t._value, data)
        if isinstance(data, Tensor):
            views.join(data, t)
        return t

    @classmethod
    def _leaf(cls, data: Any, requires_grad: bool = False) -> Tensor:
        """A leaf sharing ``data``'s values when it is a Tensor or an array of a tensor dtype."""
        value = data._value if isinstance(data, Tensor) else dt.as_array(_unwrap(data))
        t = cls._make(value)
        t.requires_grad = requires_grad
        return t

    # -- what numpy and the ops need ----------------------------------------------
    @property
    def aval(self) -> Aval:
        """The IR's view: float64 for every real number type, bool for masks, complex128
        for both complex dtypes."""
        kind = self._value.dtype.kind
        return Aval(self._value.shape, BOOL if kind == "b" else C128 if kind == "c" else FLOAT)

    @property
    def shape(self) -> Size:
        return Size(self._value.shape)

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def dtype(self) -> dt.dtype:
        return dt.of_array(self._value)

    @property
    def device(self) -> device:
        return CPU

    def size(self, dim: int | None = None) -> Any:  # type: ignore[override]
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return self.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._value.size

    nelement = numel

    def element_size(self) -> int:
        return self._value.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # -- autograd state -------------------------------------------------------------
    @property
    def data(self) -> Tensor:
        """The values, as a tensor without history that shares them. Its in-place changes
        are not counted by this tensor's version (as in PyTorch); a backward reads the
        changed values where PyTorch's would (:mod:`.views`)."""
        t = _make(self._value)
        origin = self._base if self._base is not None else self
        t._data_of = weakref.ref(origin)
        if origin._node is not None:  # (expose's first test: no call for a leaf)
            replay.expose(origin)  # (a write through t counts no version of origin's)
        if origin is not self:
            replay.expose(self)
        return t

    @data.setter
    def data(self, other: Any) -> None:
        if isinstance(other, Tensor):  # (writes into self now write other's memory)
            replay.expose(other)
        self._value = other._value if isinstance(other, Tensor) else exposed.adopt(
            dt.as_array(other), other)
        self._untracked = -next_seq()

    @property
    def grad(self) -> Tensor | None:
        if self._node is not None and self._node.retained is None:
            warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is not None and np.shape(_unwrap(value)) != self.shape:
            raise RuntimeError(
                f"assigned grad has data of a different size: shape "
                f"{list(np.shape(_unwrap(value)))} for a tensor of shape {list(self.shape)}")
        if isinstance(value, Tensor) and value.dtype is not self.dtype:
            raise RuntimeError(f"assigned grad has data of a different type: {value.dtype} "
                               f"for a tensor of {self.dtype}; convert it with .to()")
        self._grad = None if value is None else Tensor._leaf(value)
        if isinstance(value, Tensor):  # backward adds into it without a version: a write
            replay.written(value._value)  # to come into its memory
            for ref in value._aliases or ((lambda: value),):
                t = ref()
                if t is not None and t._node is not None:
                    t._node.exposed = True

    @property
    def grad_fn(self) -> Any:
        return self._node

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if self._node is not None:
            if flag:
                return  # a result that requires grad already; PyTorch allows it
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if flag and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(
                f"only Tensors of floating point dtype can require gradients (this one is "
                f"{self.dtype}); convert it first, e.g. x.double().requires_grad_()")
        self._requires_grad = builtins.bool(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in ``.grad`` at the next backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._node is not None:
            self._node.retained = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        return self._node is not None and self._node.retained is not None

    def register_hook(self, hook: Any) -> Any:
        """Call ``hook(grad)`` with this tensor's gradient in ``backward()``; a returned
        tensor replaces the gradient. Returns a handle whose ``remove()`` undoes it
        (:mod:`.hooks`)."""
        return hooks.register(self, hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """Call ``hook(self)`` (a leaf) once its ``.grad`` has been accumulated in a
        backward; returns a handle whose ``remove()`` undoes it (:mod:`.hooks`)."""
        return hooks.register_post(self, hook)

    def detach(self) -> Tensor:
        t = Tensor._make(self._value)
        views.join(self, t)  # one version counter, as in PyTorch
        replay.expose(self)  # (t may write self's values after self is gone)
        return t

    def detach_(self) -> Tensor:
        replay.expose(self)
        self._node, self._requires_grad = None, False
        return self

    def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Add to each leaf's ``.grad`` (or only to those of ``inputs``) the gradient of
        ``sum(self * gradient)`` (``gradient`` may be omitted for a one-element tensor);
        with ``create_graph`` the gradients are recorded, to be differentiated again
        (:mod:`.double`)."""
        double.backward(self, gradient, retain_graph, create_graph, inputs)

    # -- indexing ----------------------------------------------------------------------
    def __getitem__(self, index: Any) -> Any:
        split = ints_first(index)
        if split is not None:  # PyTorch selects the integers' dims first
            return self[split[0]][split[1]]
        arrays = _index_of(index)
        result = super().__getitem__(arrays)  # what the traced indexing supports
        if result is self:  # (x[:], x[...]: a new view, as PyTorch's)
            return named(new_view(result, self), self,
                         "SliceBackward0" if isinstance(index, slice) else "AliasBackward0")
        result = named(result, self, "SelectBackward0" if _is_int(arrays) else None)
        return watch_indices(result, *saved_by_indexing(index))

    def __setitem__(self, index: Any, value: Any) -> None:
        """``t[index] = value``, in place. On a tensor that requires grad (a result, or
        one that takes a value that requires grad) it is recorded (``CopySlices``): the
        overwritten elements get a zero gradient, ``value`` theirs."""
        split = ints_first(index)
        if split is not None:  # PyTorch selects the integers' dims first (a view)
            self[split[0]][split[1]] = value
            return
        original, index = index, _index_of(index)

        def write(a: Any, v: Any) -> Any:
            if isinstance(a, Tensor):
                return at(a)[index].set(v)
            a = a.copy()
            a[index] = v
            return a
        self._inplace(write, value, "CopySlices")
        if self._node is not None:
            watch_indices(self, *saved_by_indexing(original))

    # -- arithmetic: bool tensors count as int64, as in PyTorch (numpy makes them float) --
    # float64 tensors and Python numbers take the fast path (the same operation)
    __add__ = _arithmetic(add_p, Operators.__add__)
    __radd__ = _arithmetic(add_p, Operators.__radd__, swap=True)
    def __sub__(self, o):
        result = binary_f64(sub_p, self, o, _make)
        if result is None:
            result = apply_f64(sub_p, (self, o), {}, _make)
        return Operators.__sub__(*_no_bools(*_no_bool_sub(self, o))) if result is None else result
    __mul__ = _arithmetic(mul_p, Operators.__mul__)
    __rmul__ = _arithmetic(mul_p, Operators.__rmul__, swap=True)
    __truediv__ = _arithmetic(div_p, Operators.__truediv__)
    _rdivide = _arithmetic(div_p, Operators.__rtruediv__, swap=True)

    def __rtruediv__(self, o: Any) -> Any:  # 2 / x is x.reciprocal() * 2, as in PyTorch
        if _is_scalar(o) and self.dtype.is_floating_point:
            return self.reciprocal() * o
        return self._rdivide(o)
    def __pow__(self, o: Any) -> Any:
        if _is_bool(self) and (type(o) is bool or _is_bool(o)):
            return _bool_power(self, o)
        result = int_power(self, o, lambda: Operators.__pow__(*_no_bools(self, o)))
        return named(result, self, "PowBackward1" if isinstance(o, Tensor) else None)

    def __floordiv__(self, o): return _floordiv(*_no_bools(self, o))
    def __rfloordiv__(self, o): return _floordiv(*_no_bools(o, self))
    def __mod__(self, o): return _remainder(*_no_bools(self, o))
    def __rmod__(self, o): return _remainder(*_no_bools(o, self))

    def __rsub__(self, o: Any) -> Any:
        result = Operators.__rsub__(*_no_bools(*_no_bool_sub(self, o)))
        return named(result, self, "RsubBackward1" if _is_scalar(o) else None)

    def __rpow__(self, o: Any) -> Any:
        if _is_bool(self) and type(o) is bool:
            _bool_power(self, self)  # (PyTorch refuses it)
        result = int_power(o, self, lambda: Operators.__rpow__(*_no_bools(self, o)))
        return named(result, self, "PowBackward2" if _is_scalar(o) else None)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """numpy's ufuncs on Tensors (:mod:`symgrad.numpy_api`), but a numpy scalar on the
        left of an operator (``np.float64(3.0) % w`` reaches here as ``np.remainder``) is
        the Python number PyTorch takes it for: ``3.0 % w``, without a derivative in
        ``w``, ``np.int64(3) % int32`` int32, ``np.float64(2.0) - w`` ``RsubBackward1``."""
        reflected = _REFLECTED.get(ufunc)
        if (reflected and method == "__call__" and not kwargs and len(inputs) == 2
                and inputs[1] is self and isinstance(inputs[0], np.number)):
            return getattr(self, reflected)(inputs[0].item())
        out = super().__array_ufunc__(ufunc, method, *inputs, **kwargs)
        if not getattr(out, "_requires_grad", False) or method != "__call__" or kwargs:
            return out
        if ufunc is np.absolute:
            return zero_times_gradient_at_nan(out, self)  # PyTorch's g * sgn(nan), sgn(nan) = 0
        if (ufunc is np.maximum or ufunc is np.minimum) and len(inputs) == 2:
            return nan_passes_both(out, *inputs)
        return out

    def clone(self) -> Any:
        if self._requires_grad:
            return named(self * 1, self, "CloneBackward0")
        return Tensor._make(self._value.copy())


#: the ufunc a numpy scalar's operator calls on a Tensor, and the Tensor's reflected operator
_REFLECTED = {np.add: "__radd__", np.subtract: "__rsub__", np.multiply: "__rmul__",
              np.true_divide: "__rtruediv__", np.floor_divide: "__rfloordiv__",
              np.remainder: "__rmod__", np.power: "__rpow__", np.bitwise_and: "__rand__",
              np.bitwise_or: "__ror__", np.bitwise_xor: "__rxor__"}


def _index_of(index: Any) -> Any:
    """An index with its Tensor parts as the arrays they hold (integer or bool)."""
    if isinstance(index, tuple):
        return tuple(_index_of(p) for p in index)
    if isinstance(index, Tensor):
        if index._requires_grad or index.dtype.is_floating_point:
            raise IndexError("tensors used as indices must be long, int or bool tensors (this "
                             f"one is {index.dtype}); convert it with .long()")
        return index._value.item() if index.ndim == 0 and index.dtype is dt.int64 \
            else index._value
    return index


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, builtins.bool)


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (int, builtins.float, np.number)) and not isinstance(x, builtins.bool)


_unwrap = unwrap  # the name the sibling modules import
_make = Tensor._make
operand_rules.Tensor = Tensor
fastpath.TENSOR.append(Tensor)
cx.guard_methods(Tensor)  # (the methods complex Tensors have not refuse them)
