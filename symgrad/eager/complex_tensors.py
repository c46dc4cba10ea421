"""Complex Tensors (complex64, complex128): what rotary embeddings need, the rest refused.

A complex Tensor holds a numpy complex array. Its operations are the primitives in
:data:`ALLOWED` (arithmetic with real and complex operands and broadcasting, ``exp``,
``real``/``imag``/``conj``/``abs``/``angle``, reshaping, transposing, indexing,
``sum``/``mean``, casts); any other primitive given a complex Tensor, or making a
complex result from real ones (``np.fft.fft(t)``), is a TypeError naming it, never its
real part. In-place operations on complex Tensors, hooks on them and ``create_graph``
through a complex node are refused too (:func:`refuse`).

dtypes are PyTorch's: ``float32`` with ``complex64`` is ``complex64``, ``float64`` with
``complex64`` is ``complex128``, a Python complex number is the default complex dtype
(complex128, as float64 is the default float). An integer Tensor in complex arithmetic
is refused (convert it with ``.double()``): the IR converts it to complex128 where
PyTorch's result may be complex64.

Gradients. A node of a complex result records its equation with a complex128 aval (as a
float32 node runs its backward in float64, a complex64 one runs in complex128): the
IR differentiates with JAX's convention, ``df/dx - i df/dy`` for a real ``f`` of
``z = x + iy`` (README, "Complex numbers"); a real leaf's gradient is the same in both
conventions. PyTorch's ``z.grad`` is ``df/dx + i df/dy``, the conjugate: the backward
conjugates a complex seed (``out.backward(g)``) going in and a complex gradient coming out
(:func:`torch_grad`), so ``z -= lr * z.grad`` descends, as in PyTorch.

    >>> import symgrad as torch
    >>> z = torch.tensor([1 + 2j], requires_grad=True)
    >>> (z.abs() ** 2).sum().backward()
    >>> z.grad
    tensor([2.+4.j])
"""

from __future__ import annotations

import functools
import inspect
import types
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.ir import BOOL, C128, COMPLEXES, FLOAT, Aval, Literal, Primitive
from ..core.tracing import Traced
from ..prims.complex import complex_p
from . import dtypes as dt
from . import grad_mode, views
from .fastpath import compute, node_class_of, watched
from .method_args import named
from .torch_facts import torch_facts

#: the primitives complex Tensors take (by the IR's names); every other one is refused
ALLOWED = frozenset({
    "add", "sub", "mul", "div", "neg", "exp", "convert", "complex", "real", "imag", "conj",
    "cabs", "angle", "reshape", "transpose", "broadcast_to", "squeeze", "expand_dims",
    "getitem", "slice", "gather", "sum", "mean", "concatenate", "stack"})
#: the ones whose result is real (the parts, the modulus, the phase)
_REAL_RESULT = frozenset({"real", "imag", "cabs", "angle"})


def _is_complex(v: Any) -> bool:
    return type(v) is complex or (type(v) is np.ndarray and v.dtype.kind == "c")


def involved(prim: Primitive, raw: Sequence[Any], params: dict[str, Any]) -> bool:
    """Whether ``prim`` of these operand values (a Tensor's array, numbers) is a complex
    operation: a complex operand, a cast to a complex dtype, or ``x + iy`` of two parts."""
    for v in raw:
        if type(v) is complex or (type(v) is np.ndarray and v.dtype.kind == "c"):
            return True
    return prim is complex_p or (prim.name == "convert" and params.get("dtype") in COMPLEXES)


def refusal(what: str) -> TypeError:
    """The error for an operation complex Tensors do not support, naming it."""
    return TypeError(
        f"{what} does not take complex Tensors in symgrad: complex64/complex128 Tensors "
        "support + - * / (with real and complex operands), exp, real, imag, conj, abs, "
        "angle, view_as_real/view_as_complex, reshape/view/flatten/unsqueeze/transpose, "
        "indexing, sum and mean, and casts (symgrad.eager.complex_tensors). Work on the "
        "real and imaginary parts (torch.view_as_real(z), z.real, z.imag), or use sg.grad "
        "on a numpy function for other complex operations")


def refuse(t: Any, what: str) -> None:
    """Raise :func:`refusal` if ``t`` is a complex Tensor."""
    if t._value.dtype.kind == "c":
        raise refusal(what)


def _dtype_of(v: Any) -> dt.dtype:
    if type(v) is complex:
        return dt.complex128
    if type(v) is float:
        return dt.float64
    return dt.of_array(v)


def result_dtype(prim: Primitive, raw: Sequence[Any], params: dict[str, Any]) -> dt.dtype:
    """PyTorch's dtype of a complex operation's result."""
    if prim.name == "convert":  # a cast, or a real operand entering complex arithmetic:
        target = dt.as_dtype(params["dtype"])  # its own precision (float32: complex64)
        source = _dtype_of(raw[0])
        if source.category < dt.FLOATING:
            raise TypeError(
                f"an integer or bool Tensor ({source}) in complex arithmetic: convert it "
                "first (.double() or .float()), so the result's dtype is the one you mean "
                "(PyTorch's may be complex64 where symgrad's would be complex128)")
        if source.is_complex:
            return target
        return dt.complex_of(source) if target is dt.complex128 else target
    if prim.name in _REAL_RESULT:
        return dt.real_of(_dtype_of(raw[0]))
    out = dt.result_type(raw)
    return dt.complex_of(out) if prim is complex_p else out


def _ir_aval(v: Any) -> Aval:
    if type(v) in (float, int, bool, complex):
        return Aval((), C128 if type(v) is complex else BOOL if type(v) is bool else FLOAT)
    return Aval(v.shape, C128 if v.dtype.kind == "c" else BOOL if v.dtype.kind == "b"
                else FLOAT)


def apply(prim: Primitive, args: Sequence[Any], raw: Sequence[Any], params: dict[str, Any],
          make: Any) -> Any:
    """``prim(*args)`` with a complex operand or result, computed now and recorded when an
    input requires grad (the module docstring); ``make(value, node)`` makes the Tensor."""
    if prim.name not in ALLOWED:
        raise refusal(f"{prim.name}")
    out = result_dtype(prim, raw, params)
    ir_params = dict(params)
    if prim.name == "convert":
        ir_params["dtype"] = C128 if out.is_complex else FLOAT
        if not out.is_complex and _dtype_of(raw[0]).is_complex:
            raise TypeError(f"casting a complex Tensor to {out} would drop the imaginary "
                            "part; take z.real (or z.abs()) explicitly")
    aval = prim.shape_rule(*map(_ir_aval, raw), **ir_params)  # checks shapes
    wide = out if out.is_complex else dt.complex_of(out)  # (z.real: z in its own dtype)
    part = dt.real_of(wide)
    values = [v if type(v) in (float, int, bool, complex) or v.dtype.kind == "b"
              or prim.name == "convert" else
              _as(v, wide.numpy if v.dtype.kind == "c" else part.numpy) for v in raw]
    value = np.asarray(compute(prim, values, params if prim.name != "convert" else
                               {**params, "dtype": out.numpy.name}))
    if value.dtype != out.numpy:
        value = value.astype(out.numpy)
    if not (grad_mode.is_grad_enabled() and (out.is_complex or out.is_floating_point)
            and any(isinstance(a, Traced) and a._requires_grad for a in args)):
        return make(value, None)
    literal_ok = torch_facts(prim).literal_operands
    inputs = tuple(_operand(a, v, literal_ok) for a, v in zip(args, raw))
    node = node_class_of(prim)(prim, ir_params, inputs,
                               Aval(aval.shape, C128 if out.is_complex else FLOAT))
    result = make(value, node)
    node.made = (weakref.ref(result), 0)
    node.versions, node.reads = watched(prim, args, result)
    return result


# -- memory shared between real and complex Tensors -------------------------------------
#: the Tensors that share memory with a Tensor of the other kind (``view_as_complex``,
#: ``view_as_real``, ``z.real``, ``z.imag`` and their roots). They share a version counter
#: (:func:`.views.join`): a write that is not recorded (under ``no_grad``) shows in both
#: and makes a backward that saved either raise, as in PyTorch. A recorded in-place
#: operation on one is refused (:func:`refuse_write`): symgrad's views place a view's
#: elements in its root by their memory offsets, which a view of the other kind does
#: not have.
#: (by id: a WeakSet would compare Tensors with ``==``, which is elementwise)
_SHARED: dict[int, weakref.ref] = {}


def _mark(t: Any) -> None:
    key = id(t)

    def forget(ref: weakref.ref) -> None:
        if _SHARED.get(key) is ref:
            del _SHARED[key]
    if not _shared(t):
        _SHARED[key] = weakref.ref(t, forget)


def _shared(t: Any) -> bool:
    ref = _SHARED.get(id(t))
    return ref is not None and ref() is t


def share(source: Any, result: Any) -> Any:
    """Note that ``result`` shares ``source``'s memory across kinds; returns ``result``."""
    views.join(source, result)
    for t in (source, result, source._base):
        if t is not None:
            _mark(t)
    return result


def refuse_write(t: Any, other: Any, records: bool) -> None:
    """Refuse an in-place operation on a complex Tensor or with a complex operand (a real
    tensor cannot hold its result: never its real part), and a recorded one on a Tensor
    sharing memory with a complex one (:data:`_SHARED`)."""
    v = getattr(other, "_value", other)
    if t._value.dtype.kind == "c" or type(v) is complex or (
            isinstance(v, np.ndarray | np.generic) and v.dtype.kind == "c"):
        raise refusal("in-place operations (x.add_(), x.copy_(), x[i] = v, ...)")
    if records and _SHARED and (_shared(t) or (t._base is not None and _shared(t._base))):
        raise RuntimeError(
            "an in-place operation with grad recording on a tensor that shares its memory "
            "with a complex tensor (torch.view_as_complex/view_as_real, z.real, z.imag): "
            "symgrad does not record it; compute out of place (y = x * 2), or clone() first")


def refuse_graph(nodes: Sequence[Any], what: str) -> None:
    """Refuse ``what`` on a graph with complex values (not built yet)."""
    for n in nodes:
        if n.aval.dtype == C128 or any(isinstance(a, Traced) and a._value.dtype.kind == "c"
                                       for a in n.inputs):
            raise refusal(what)


class ComplexMethods:
    """The Tensor methods of complex values (a mixin of :class:`symgrad.Tensor`, before
    those that take a real tensor as its own real part and conjugate)."""

    __slots__ = ()

    @property
    def real(self) -> Any:
        """The real part, sharing the memory as PyTorch's view; a real tensor itself."""
        return share(self, named(np.real(self), self, "RealBackward0")) if _c(self) else self

    @property
    def imag(self) -> Any:
        if not _c(self):
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        return share(self, named(np.imag(self), self, "ImagBackward0"))

    def conj(self) -> Any:  # (a real tensor is its own conjugate: PyTorch returns it)
        return named(np.conjugate(self), self, "ConjBackward0") if _c(self) else self

    conj_physical = conj

    def resolve_conj(self) -> Any:
        return self

    def is_conj(self) -> bool:
        return False

    def angle(self) -> Any:
        """The phase (``atan2(imag, real)``); of a real tensor 0 or pi (nan for nan), with
        a zero gradient (recorded, as PyTorch's: ``x.grad`` is zeros, not None)."""
        if _c(self):  # PyTorch's gradient at 0 is 0 (atan2's is nan there): the phase
            zero = self._value == 0  # of 1 in its place, the value at 0 kept (0, pi, -pi)
            if not (self._requires_grad and zero.any()):
                return named(np.angle(self), self, "AngleBackward0")
            at_zero = np.angle(self._value).astype(dt.real_of(self.dtype).numpy)
            # (-0.0 - 0.0j elsewhere: z + that is z, signed zero parts too)
            one = np.where(zero, 1 + 0j, complex(-0.0, -0.0)).astype(self._value.dtype)
            return named(np.where(zero, at_zero, np.angle(self + one)), self, "AngleBackward0")
        v = self._value  # PyTorch's: pi below 0 (not at -0.0, numpy's atan2), nan for nan
        value = np.where(v != v, v, np.where(v < 0, np.pi, 0.0))
        phase = self._make(value.astype(v.dtype if v.dtype.kind == "f" else np.float64))
        if self._requires_grad:  # (where: x * 0 would make inf nan)
            phase = np.where(np.zeros(self.shape, bool), self, phase)
        return named(phase, self, "AngleBackward0")

    def is_complex(self) -> bool:
        return _c(self)


def _c(t: Any) -> bool:
    return t._value.dtype.kind == "c"


#: the public Tensor methods a complex Tensor has; :func:`guard_methods` makes every other
#: one refuse it (many compute on the values with numpy directly, which would answer
#: where PyTorch refuses: ``floor`` of a complex tensor, ``sort``, ``isreal``...)
METHODS = frozenset("""
    numpy tolist item size dim ndimension numel nelement element_size is_complex
    is_floating_point is_conj resolve_conj conj conj_physical angle abs absolute exp neg
    negative add sub subtract mul multiply div divide true_divide sum mean reshape
    reshape_as view view_as flatten unflatten unsqueeze squeeze transpose t permute
    swapaxes contiguous expand expand_as clone detach requires_grad_ retain_grad backward
    register_hook to type type_as float double half long int short char byte bool cpu
    new_zeros new_ones new_full new_empty new_tensor is_contiguous stride storage_offset
    data_ptr is_shared is_set_to get_device astype""".split())


def guard_methods(cls: type) -> None:
    """Make each public method of ``cls`` outside :data:`METHODS` refuse a complex
    Tensor (``self``), naming the method; real Tensors pass straight through. Called
    again by the modules that add methods later (once per method)."""
    for name in dir(cls):
        if name.startswith("_") or name in METHODS:
            continue
        attr = inspect.getattr_static(cls, name)
        if isinstance(attr, types.FunctionType) and not hasattr(attr, "complex_guarded"):
            setattr(cls, name, _guarded(attr, name))


def _guarded(method: Any, name: str) -> Any:
    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self._value.dtype.kind == "c":
            raise refusal(f"Tensor.{name}")
        return method(self, *args, **kwargs)
    guarded.complex_guarded = True  # type: ignore[attr-defined]
    return guarded


def _as(v: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return v if v.dtype == dtype else v.astype(dtype)


def _operand(a: Any, v: Any, literal_ok: bool) -> Any:
    """What a complex operation's node keeps of an operand: a node, a leaf, a literal, or
    data in complex128 or float64 (the precision its backward runs in)."""
    if isinstance(a, Traced) and a._requires_grad:
        return a._node if a._node is not None else a
    if type(v) is complex:
        return np.array(v, np.complex128)
    if type(v) in (float, int, bool):
        return Literal(float(v)) if literal_ok and type(v) is not bool else \
            np.array(v, np.bool_ if type(v) is bool else np.float64)
    wide = np.complex128 if v.dtype.kind == "c" else np.bool_ if v.dtype.kind == "b" \
        else np.float64
    return v if v.dtype == wide else v.astype(wide)


def torch_grad(g: np.ndarray) -> np.ndarray:
    """PyTorch's gradient of a complex value from the IR's (JAX's convention), and a
    PyTorch seed into the IR's: the conjugate, both ways."""
    return np.conj(g) if np.iscomplexobj(g) else g
