"""The eager Tensor's fast path: one operation on float64 (or float32) tensors in few
Python steps.

A training loop spends its time in :meth:`symgrad.eager.tensor.EagerTrace.apply`
on float64 or float32 tensors and Python numbers. :func:`apply_f64` does what that
general path does for exactly those operands (every Tensor float64, or every Tensor
float32, every other operand a Python ``float`` or ``int``, a floating result; not
``convert``, whose result has its own dtype), with the work that cannot
change between steps memoized: the output aval per (primitive, shapes,
parameters), the node class per primitive, numpy's error state as one prepared
object. It returns None for anything else, and the general path decides.

Contract: for the operands it accepts, :func:`apply_f64` gives the same value,
dtype, node (class, inputs, aval, watched versions) as the general path. The
tests in ``tests/test_eager_fastpath.py`` compare both paths, and PyTorch.

    >>> import symgrad as torch
    >>> x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    >>> (x * 2 + 1).grad_fn
    <AddBackward0 object at ...>
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.ir import F32, FLOAT, Aval, Literal, Primitive
from ..core.tracing import Traced, Tracer
from ..prims.elementwise import relu_p
from ..prims.layer_norm import layer_norm_p
from ..prims.linalg import linear_gemm, linear_p
from ..prims.overflow import CheckedUfunc
from ..prims.reductions import mean_of, mean_p, reshape_p, sum_p, transpose_p
from ..prims.selection import where_p
from ..prims.softmax import normalized, shifted_exp, softmax_p
from ..prims.windows import windows_p
from ..transforms.pipeline import (
    compiled_first_max,
    compiled_layer_norm,
    compiled_middle_sum,
    compiled_normalize,
    compiled_relu,
    compiled_row_sum,
    compiled_select,
    compiled_shift,
    fill_window_rows,  # noqa: F401 -- (nn.convolution's: nn reaches the backend through eager)
    gathered_windows,
)
from . import exposed, grad_mode
from .exposed import HANDED
from .graph import node_class
from .replay import keep
from .torch_facts import CONTIGUOUS_RESULTS, node_name, product_saves, torch_facts

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_NUMBERS = (float, int)  # (bool is neither: type(True) is bool)


_AVALS: dict[tuple, Aval] = {}
#: a float32 node's aval, per float64 aval
_AVALS32: dict[Aval, Aval] = {}
_NODE_CLASSES: dict[Primitive, type] = {}

try:  # numpy's error state as a context variable: set once, not built per operation
    from numpy._core._ufunc_config import _extobj_contextvar as _ERRSTATE
    with np.errstate(all="ignore"):
        _IGNORE = _ERRSTATE.get()
except (ImportError, AttributeError, LookupError):  # another numpy: its public errstate
    _ERRSTATE = None


def node_class_of(prim: Primitive) -> type:
    """The class PyTorch names ``prim``'s node by, looked up once per primitive."""
    cls = _NODE_CLASSES.get(prim)
    if cls is None:
        cls = _NODE_CLASSES[prim] = node_class(node_name(prim))
    return cls


def watched(prim: Primitive, args: Sequence[Any], result: Any) -> tuple[tuple, tuple]:
    """What backward must find unchanged, and what it must know the changes of.

    First, (tensor, version) for the tensors PyTorch's node would have saved, for which
    PyTorch raises when they change in place: the inputs of a non-linear primitive
    (of a product only those whose partner requires grad), the output of ``exp`` and
    the like (by weak reference), and any mask or indices (``where``, ``gather``).
    Second, (position, tensor, version) for every leaf or data input: PyTorch reads a
    leaf it saved as it is at backward time, and does not read one it did not save, so
    backward must not recompute a value from a leaf changed since
    (:func:`.replay.refuse_unmatched`)."""
    inputs, product, output = _SAVES.get(prim) or _saves(prim)
    found: list[tuple[Any, int]] = []
    read: list[tuple[int, Any, int]] = []
    for k, a in enumerate(args):
        if not isinstance(a, Traced):
            continue
        if a._node is None:
            read.append((k, a, a._version))
            if HANDED:  # (memory handed to numpy: numpy's writes count no version)
                exposed.read(a, result._node)
            if a._value.dtype.kind in "biu":  # a mask or indices: read by any rule
                found.append((a, a._version))
                continue
        if inputs and (not product or product_saves(_requires_grad(args), k)):
            found.append((a, a._version))
    if output:
        found.append((weakref.ref(result), 0))
    return tuple(found), tuple(read)


_SAVES: dict[Primitive, tuple[bool, bool, bool]] = {}


def _saves(prim: Primitive) -> tuple[bool, bool, bool]:
    """Whether PyTorch's node for ``prim`` saves its inputs, follows a product's rule
    (saves an input when its partner requires grad), saves its output; once per primitive."""
    facts = torch_facts(prim)  # (max, amax: the output too, whose elements share it)
    saves = _SAVES[prim] = (not prim.linear and not facts.saves_output, facts.product,
                            facts.saves_output or facts.saves_both)
    return saves


def _watched_pair(saves: tuple[bool, bool, bool], a: Any, b: Any, result: Any
                  ) -> tuple[tuple, tuple]:
    """:func:`watched` of one or two float64 operands (``a``, and ``b`` or None; a Python
    number is None) with ``saves`` (:func:`_saves`), without its loop: the same tuples."""
    inputs, product, output = saves
    found: tuple = ()
    read: tuple = ()
    if a is not None:
        if a._node is None:
            read = ((0, a, a._version),)
            if HANDED:
                exposed.read(a, result._node)
        if inputs and (not product or (b is not None and b._requires_grad)):
            found = ((a, a._version),)
    if b is not None:
        if b._node is None:
            read += ((1, b, b._version),)
            if HANDED:
                exposed.read(b, result._node)
        if inputs and (not product or (a is not None and a._requires_grad)):
            found += ((b, b._version),)
    if output:
        found += ((weakref.ref(result), 0),)
    return found, read


def _requires_grad(args: Sequence[Any]) -> list[bool]:
    return [isinstance(b, Traced) and b._requires_grad for b in args]


def compute(prim: Primitive, values: Sequence[Any], params: dict[str, Any],
            impl: Any = None) -> Any:
    """``prim.impl`` (or ``impl`` in its place) with numpy's floating-point warnings off
    (IEEE results, as the kernels give), C-contiguous where PyTorch's is
    (:data:`.torch_facts.CONTIGUOUS_RESULTS`; the fast paths' impls see to it themselves,
    :func:`_float_impl`)."""
    impl = prim.impl if impl is None else impl
    if _ERRSTATE is None:
        with np.errstate(all="ignore"):
            value = impl(*values, **params)
    else:
        token = _ERRSTATE.set(_IGNORE)
        try:
            value = impl(*values, **params)
        finally:
            _ERRSTATE.reset(token)
    return c_ordered(value) if prim in CONTIGUOUS_RESULTS else value


def _aval(prim: Primitive, shapes: tuple, params: dict[str, Any]) -> Aval | None:
    """The float64 result's aval (None for a bool result), memoized per structure."""
    try:
        key: Any = (prim, shapes, tuple(params.items())) if params else (prim, shapes)
        aval = _AVALS.get(key)
    except TypeError:  # unhashable parameters: ask the rule every time
        key, aval = None, None
    if aval is None:
        aval = prim.shape_rule(*(Aval(s, FLOAT) for s in shapes), **params)
        aval = Aval(aval.shape, FLOAT) if aval.dtype == FLOAT else False
        if key is not None and len(_AVALS) < 100_000:
            _AVALS[key] = aval
    return aval or None


_BOOL = np.dtype(np.bool_)


def _condition(c: Any) -> np.ndarray | None:
    """``where``'s condition as the general path keeps it: the array of a bool Tensor or
    a bool array of one dimension or more (None for anything else: the general path)."""
    if isinstance(c, Traced) and not isinstance(c, Tracer):
        c = c._value
    elif type(c) is not np.ndarray or not c.ndim:
        return None
    return c if type(c) is np.ndarray and c.dtype is _BOOL else None


def _where_aval(prim: Primitive, shapes: tuple, params: dict[str, Any]) -> Aval | None:
    """``where``'s float64 result aval, memoized as :func:`_aval`'s (None where the shapes
    do not broadcast: the general path raises its error)."""
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        return None
    aval = _AVALS[(prim, shapes)] = Aval(shape, FLOAT)
    return aval


_IMPLS: dict[Primitive, Any] = {}


def _relu(x: Any) -> Any:
    """``relu``'s value by one compiled loop where it applies, else ``relu_p.impl``'s."""
    found = compiled_relu(x)
    return relu_p.impl(x) if found is None else found


def _where(c: Any, x: Any, y: Any) -> Any:
    """``where``'s value by one compiled loop where it applies, else ``where_p.impl``'s."""
    found = compiled_select(c, x, y)
    return where_p.impl(c, x, y) if found is None else found


def _sum(x: Any, axes: tuple[int, ...]) -> Any:
    """``sum``'s value over a few trailing elements by one compiled loop where it
    applies, else ``sum_p.impl``'s."""
    found = compiled_row_sum(x, axes)
    if found is None:
        found = compiled_middle_sum(x, axes)
    return sum_p.impl(x, axes=axes) if found is None else found


def _mean(x: Any, axes: tuple[int, ...]) -> Any:
    """``mean``'s value over a middle axis by one compiled sum where it applies, else
    ``mean_p.impl``'s (the same bits)."""
    found = compiled_middle_sum(x, axes)
    return mean_p.impl(x, axes=axes) if found is None else mean_of(found, x, axes)


def _layer_norm(x: Any, *affine: Any, ndim: int, eps: float, weight: bool,
                bias: bool) -> Any:
    """``layer_norm``'s value over one axis by one compiled loop where it applies, else
    ``layer_norm_p.impl``'s (the same bits)."""
    found = compiled_layer_norm(x, affine, eps, weight, bias) if ndim == 1 else None
    if found is None:
        return layer_norm_p.impl(x, *affine, ndim=ndim, eps=eps, weight=weight, bias=bias)
    return found


def _softmax(x: Any, axis: int) -> Any:
    """``softmax``'s value along the last axis, its row maxima subtracted and its division
    by the row sums by compiled loops where they apply, else ``softmax_p.impl``'s (the
    same bits)."""
    if axis != np.ndim(x) - 1:
        return softmax_p.impl(x, axis=axis)
    e = compiled_shift(x)
    e = shifted_exp(x, axis) if e is None else np.exp(e, out=e)
    return e if compiled_normalize(e) else normalized(e, axis)


def _reshape(x: Any, shape: tuple[int, ...]) -> Any:
    """``reshape``'s value: ``np.reshape``'s, without its dispatch for an array (a Python
    number, this path's other operand, by ``np.reshape``)."""
    return x.reshape(shape) if type(x) is np.ndarray else np.reshape(x, shape)


def _transpose(x: Any, perm: tuple[int, ...]) -> Any:
    """``transpose``'s value: ``np.transpose``'s, as :func:`_reshape`."""
    return x.transpose(perm) if type(x) is np.ndarray else np.transpose(x, perm)


def window_first_max(values: np.ndarray) -> np.ndarray | None:
    """A mask of each window's (last axis) first maximum, or its last NaN, by one compiled
    loop; None where it does not apply (:mod:`symgrad.backend.numba.eager_loops`)."""
    return compiled_first_max(values)


#: faster implementations of this path's operations, the same values as ``prim.impl``
_EAGER_IMPLS: dict[Primitive, Any] = {windows_p: gathered_windows, relu_p: _relu,
                                       where_p: _where, sum_p: _sum, mean_p: _mean,
                                       layer_norm_p: _layer_norm, softmax_p: _softmax,
                                       reshape_p: _reshape, transpose_p: _transpose,
                                       linear_p: linear_gemm}


def _float_impl(prim: Primitive) -> Any:
    """``prim.impl`` for floating operands, looked up once per primitive: numpy's ufunc
    itself for a :class:`~symgrad.prims.overflow.CheckedUfunc` (its int64 overflow test
    never applies to the floating values this path computes), the compiled gather of
    :mod:`symgrad.backend.numba.window_gather` for ``windows``, the compiled loop of
    :mod:`symgrad.backend.numba.eager_loops` for ``relu``, a ``where`` of an array and a
    number and a ``sum`` over a few trailing elements."""
    impl = _EAGER_IMPLS.get(prim, prim.impl)
    if isinstance(impl, CheckedUfunc):
        impl = impl.ufunc
    _PLAIN[prim] = impl
    if prim in CONTIGUOUS_RESULTS:
        impl = _c_ordered(impl)
    _IMPLS[prim] = impl
    return impl


#: :data:`_IMPLS` without :func:`_c_ordered`: for results of fewer than two dimensions,
#: which are C-contiguous as numpy makes them (a fresh array)
_PLAIN: dict[Primitive, Any] = {}


def c_ordered(value: Any) -> Any:
    """``value`` C-contiguous (a copy only where it is not), as PyTorch lays out the
    results of :data:`.torch_facts.CONTIGUOUS_RESULTS`."""
    if type(value) is np.ndarray and not value.flags.c_contiguous:
        return np.ascontiguousarray(value)
    return value


def _c_ordered(impl: Any) -> Any:
    """``impl`` whose results are :func:`c_ordered`."""
    def run(*values: Any, **params: Any) -> Any:
        return c_ordered(impl(*values, **params))
    return run


def apply_f64(prim: Primitive, args: Sequence[Any], params: dict[str, Any],
              make: Any) -> Any:
    """``prim(*args)`` computed now and recorded when an input requires grad, for float64
    Tensors and Python numbers with a float64 result, or float32 Tensors and Python
    numbers with a float32 result (the node's aval says float32, and it keeps its data
    as they are, as the general path does); None for other operands (the general path's).
    ``make(value, node)`` makes the result Tensor."""
    values: list[Any] = []
    shapes: list[tuple] = []
    grad = False
    kind = None  # the Tensors' dtype
    operands = args
    if prim is where_p:  # a boolean condition (no node), then the operands as above
        cond = _condition(args[0])
        if cond is None:
            return None
        values.append(cond)
        shapes.append(cond.shape)
        operands = args[1:]
    for a in operands:
        if type(a) in _NUMBERS:
            values.append(float(a))
            shapes.append(())
        elif isinstance(a, Traced) and not isinstance(a, Tracer):  # a Tensor
            v = a._value
            if v.dtype is not kind:
                if kind is not None or (v.dtype is not _F64 and v.dtype is not _F32):
                    return None
                kind = v.dtype
            values.append(v)
            shapes.append(v.shape)
            grad = grad or a._requires_grad
        else:
            return None
    if kind is _F32 and prim.name == "convert":
        return None  # (its result's dtype is its parameter's: the general path)
    shapes_key = tuple(shapes)
    aval = None if params else _AVALS.get((prim, shapes_key))
    if not aval:  # (False: a bool result, which the general path computes)
        if prim is where_p and kind is None:
            return None  # (a choice of two numbers: the general path's dtype)
        aval = (_where_aval if prim is where_p else _aval)(prim, shapes_key, params)
        if aval is None:
            return None
    impl = _IMPLS.get(prim) or _float_impl(prim)
    if _ERRSTATE is None:
        value = compute(prim, values, params, impl)
    else:  # (compute, inlined: this runs for every operation of a training loop)
        token = _ERRSTATE.set(_IGNORE)
        try:
            value = impl(*values, **params)
        finally:
            _ERRSTATE.reset(token)
    if kind is None:  # (no Tensor: Python numbers)
        kind = _F64
    if type(value) is not np.ndarray or value.dtype is not kind:
        value = np.asarray(value, dtype=kind)
    if not (grad and grad_mode.is_grad_enabled()):
        return make(value, None)
    literal_ok = torch_facts(prim).literal_operands
    inputs = []
    for a, v in zip(args, values):
        if v.dtype is _BOOL if type(v) is np.ndarray else False:  # where's condition: data
            inputs.append(v)
        elif type(v) is float:  # a Python number: a literal exponent or 0-d data
            inputs.append(Literal(v) if literal_ok else np.array(v))
        elif a._requires_grad:
            inputs.append(a._node if a._node is not None else a)
        else:  # data, as they are (float32 data enter a float64 backward converted)
            inputs.append(v)
    aval = _node_aval(aval, kind)
    cls = _NODE_CLASSES.get(prim) or node_class_of(prim)
    node = cls(prim, params, tuple(inputs), aval)
    result = make(value, node)
    node.made = (weakref.ref(result), 0)
    node.versions, node.reads = watched(prim, args, result)
    keep(node, value, values)
    return result


#: the Tensor class (set by :mod:`.tensor`, which imports this module)
TENSOR: list[type] = []
#: per (primitive, shape or None for a Python number, the same for the second operand,
#: whether the Tensors are float32): the result's aval, the float implementation, the node
#: class, the node's signature when no operand is a literal (None where :func:`apply_f64`
#: must decide), what the node saves and whether the result is always fresh; per
#: (primitive, float32 or not, shape, parameters) the same for :func:`unary_f64`
_BINARY: dict[tuple, tuple | None] = {}


def binary_f64(prim: Primitive, a: Any, b: Any, make: Any) -> Any:
    """:func:`apply_f64` of ``prim(a, b)`` for a float64 (float32) Tensor and a Tensor of
    the same dtype or a Python ``float`` or ``int`` (either order), in fewer Python steps:
    what cannot change between two calls with the same shapes is looked up once
    (:data:`_BINARY`). The same value, node and result; None for any other operands (the
    caller's path)."""
    tensor = TENSOR[0]
    if type(a) in _NUMBERS:
        va: Any = float(a)
        sa = kind = None
    elif isinstance(a, tensor):
        va = a._value
        kind = va.dtype
        if kind is not _F64 and kind is not _F32:
            return None
        sa = va.shape
    else:
        return None
    if type(b) in _NUMBERS:
        if sa is None:
            return None
        vb: Any = float(b)
        sb = None
    elif isinstance(b, tensor):
        vb = b._value
        if vb.dtype is not kind:
            if kind is not None or (vb.dtype is not _F64 and vb.dtype is not _F32):
                return None
            kind = vb.dtype
        sb = vb.shape
    else:
        return None
    key = (prim, sa, sb, kind is _F32)  # (a bool: hashing a dtype is slower)
    recipe = _BINARY.get(key, False)
    if recipe is False:
        recipe = _binary_recipe(prim, sa, sb, kind)
    if recipe is None or _ERRSTATE is None:
        return None
    aval, impl, cls, sig, saves, fresh = recipe
    token = _ERRSTATE.set(_IGNORE)
    try:
        value = impl(va, vb)
    finally:
        _ERRSTATE.reset(token)
    if type(value) is not np.ndarray or value.dtype is not kind:
        value = np.asarray(value, dtype=kind)
    if not ((sa is not None and a._requires_grad) or (sb is not None and b._requires_grad)) \
            or not grad_mode.is_grad_enabled():
        return make(value, None)
    args = (a, b)
    if sig is None:  # a literal operand (an exponent): the general construction
        inputs = tuple([_input(x, v, True) for x, v in zip(args, (va, vb))])
        node = cls(prim, {}, inputs, aval)
    else:  # (_input of each, inline: a Python number is 0-d data here)
        ia = np.array(va) if sa is None else va if not a._requires_grad else \
            a._node if a._node is not None else a
        ib = np.array(vb) if sb is None else vb if not b._requires_grad else \
            b._node if b._node is not None else b
        node = cls(prim, {}, (ia, ib), aval, sig)
    result = make(value, node)
    node.made = (weakref.ref(result), 0)
    node.versions, node.reads = _watched_pair(saves, None if sa is None else a,
                                              None if sb is None else b, result)
    if fresh:  # (keep's verdict, known: a ufunc's result is a new array of its own)
        node.value = value
    else:
        keep(node, value, (va, vb))
    return result


def _node_aval(aval: Aval, kind: np.dtype) -> Aval:
    """The node's aval for a float64 result ``aval`` computed in ``kind`` (float32: a
    float32 aval, as :func:`apply_f64` makes)."""
    if kind is not _F32:
        return aval
    return _AVALS32.get(aval) or _AVALS32.setdefault(aval, Aval(aval.shape, F32))


def _input(a: Any, v: Any, literal_ok: bool) -> Any:
    """What :func:`apply_f64`'s node keeps of an operand (its inputs loop)."""
    if type(v) is float:  # a Python number: a literal exponent or 0-d data
        return Literal(v) if literal_ok else np.array(v)
    if a._requires_grad:
        return a._node if a._node is not None else a
    return v


def _binary_recipe(prim: Primitive, sa: tuple | None, sb: tuple | None, kind: np.dtype
                   ) -> tuple | None:
    shapes = (() if sa is None else sa, () if sb is None else sb)
    aval = _AVALS.get((prim, shapes)) or _aval(prim, shapes, {})
    if aval is None or prim is where_p:  # (a bool result: the general path)
        recipe = None
    else:
        aval = _node_aval(aval, kind)
        literal = torch_facts(prim).literal_operands and (sa is None or sb is None)
        sig = None if literal else (prim.name, (), (), aval.dtype)
        impl = _IMPLS.get(prim) or _float_impl(prim)
        recipe = (aval, impl, node_class_of(prim), sig, _SAVES.get(prim) or _saves(prim),
                  fresh_result(prim, impl))
    if len(_BINARY) < 10_000:
        _BINARY[(prim, sa, sb, kind is _F32)] = recipe
    return recipe


def unary_f64(prim: Primitive, a: Any, params: dict[str, Any], make: Any) -> Any:
    """:func:`apply_f64` of ``prim(a, **params)`` for a float64 (float32) Tensor ``a`` and
    hashable ``params`` (``x.mean()``, ``x.reshape(4, 2)``), memoized as
    :func:`binary_f64`: the same value, node and result; None for any other operand."""
    v = a._value
    kind = v.dtype
    if (kind is not _F64 and kind is not _F32) or _ERRSTATE is None:
        return None
    key = (prim, kind is _F32, v.shape, *params.items())
    recipe = _BINARY.get(key, False)
    if recipe is False:
        recipe = _unary_recipe(prim, v.shape, params, key, kind)
    if recipe is None:
        return None
    aval, impl, cls, sig, saves, fresh = recipe
    token = _ERRSTATE.set(_IGNORE)
    try:
        value = impl(v, **params)
    finally:
        _ERRSTATE.reset(token)
    if type(value) is not np.ndarray or value.dtype is not kind:
        # (a scalar, or another dtype: asarray makes a new array of its own, as a ufunc)
        fresh = fresh or ((not isinstance(value, np.ndarray) or value.dtype != kind)
                          and not prim.subgraphs and prim.linearized is None)
        value = np.asarray(value, dtype=kind)
    if not (a._requires_grad and grad_mode.is_grad_enabled()):
        return make(value, None)
    node = cls(prim, params, (a._node if a._node is not None else a,), aval, sig)
    result = make(value, node)
    node.made = (weakref.ref(result), 0)
    node.versions, node.reads = _watched_pair(saves, a, None, result)
    if fresh:  # (keep's verdict, known)
        node.value = value
    else:
        keep(node, value, (v,))
    return result


def _unary_recipe(prim: Primitive, shape: tuple, params: dict[str, Any], key: tuple,
                  kind: np.dtype) -> tuple | None:
    try:
        hash(key)
    except TypeError:
        return None
    made = None if prim.name == "convert" else shaped_recipe(prim, (shape,), params, kind)
    recipe = None if made is None else (*made, _SAVES.get(prim) or _saves(prim),
                                        fresh_result(prim, made[1]))
    if len(_BINARY) < 10_000:
        _BINARY[key] = recipe
    return recipe


def fresh_result(prim: Primitive, impl: Any) -> bool:
    """Whether :func:`.replay.keep` keeps every float result of ``impl`` for ``prim``
    without looking: a numpy ufunc called without ``out`` returns a new array owning its
    memory (or a scalar, which the fast paths make a new array), never an operand."""
    return type(impl) is np.ufunc and not prim.subgraphs and prim.linearized is None


def shaped_recipe(prim: Primitive, shapes: tuple, params: dict[str, Any], kind: np.dtype
                  ) -> tuple | None:
    """What a fast path looks up once for ``prim(**params)`` of float operands of
    ``shapes`` and dtype ``kind``: the node's aval, the implementation, the node class and
    its signature; None where the shapes give no aval."""
    aval = _aval(prim, shapes, params)
    if aval is None:
        return None
    aval = _node_aval(aval, kind)
    impl = _IMPLS.get(prim) or _float_impl(prim)
    if len(aval.shape) < 2:  # (x.sum(), x.mean(0) of a matrix: contiguous as made)
        impl = _PLAIN.get(prim, impl)
    return (aval, impl, node_class_of(prim),
            (prim.name, tuple(sorted(params.items())), (), aval.dtype))

