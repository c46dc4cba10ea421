"""bfloat16 operations computed as PyTorch's CPU kernels compute them.

A bfloat16 Tensor stores ``ml_dtypes.bfloat16`` values (:mod:`.dtypes`). An operation
whose result is bfloat16 (:func:`.op_dtypes.result_dtype`, PyTorch's promotion) converts
each operand to bfloat16 (through float32, :func:`.dtypes.cast`), computes in float32 and
rounds the result to the nearest even bfloat16: PyTorch's CPU kernels for bfloat16 do the
same (elementwise operations upcast, compute and round; ``sum``, ``mean`` and ``matmul``
accumulate in float32 and round at the end). One exception, PyTorch's: a Python number,
or a 0-d tensor as the second operand, multiplying or dividing a bfloat16 (or float16)
tensor is taken in float32, not rounded to bfloat16 first (``x * 0.1`` is
``round(float(x) * float32(0.1))``, :func:`opmath_scalar`); in ``x + 0.1``, ``x ** 1.1``
and the rest the number is rounded to bfloat16 first. float16 tensors compute in numpy's
float16 (float32 inside, one rounding) but for that exception, ``add(b, alpha=)`` and
``div(rounding_mode="trunc")`` by a number, which follow the same rules here
(tests/test_reduced_float_arithmetic.py).

    >>> import symgrad as torch
    >>> x = torch.tensor([1.0, 3.0, 100.0], dtype=torch.bfloat16)
    >>> x * 0.1
    tensor([ 0.1001,  0.3008, 10.0000], dtype=torch.bfloat16)

PyTorch's fused kernels (``addmm`` of ``F.linear``, ``layer_norm``, ``softmax``,
``gelu``, ``silu``, ``hardswish``, ``rsqrt``, ``var``, ``std``) compute in float32 and
round once: the functions symgrad composes them of do too (:func:`in_float32`).
Autograd is refused (:data:`GRADIENT_ERROR`) but through casts alone (``x.bfloat16().float()``,
a fake quantization: :func:`exempt`), and so are optimizers other than SGD.

Known differences from PyTorch 2.13 (tests/test_bfloat16.py shows the equalities):

- float32 arithmetic is numpy's: ``exp``, ``erf``, ``tanh`` differ from PyTorch's
  vectorized float32 ones in the last float32 bit in many elements, which changes the
  bfloat16 result only near a rounding boundary (``softmax``: 1 element in 3072,
  ``gelu``: 8, mostly in its negative tail where ``1 + erf`` cancels); a long float32
  sum is added in numpy's (pairwise) order, not PyTorch's;
- ``log_softmax`` over the last dimension (so ``cross_entropy``): PyTorch's kernel is
  neither float32-inside nor per-operation rounding; up to 2 ulps apart;
- ``x ** 3`` (PyTorch: ``x * x * x``, rounding each product) and ``prod`` (PyTorch
  rounds each partial product) are computed in float32 and rounded once here;
- PyTorch's scalar tail loop (the last ``numel % 32`` elements on AVX-512) rounds
  between steps where its vectorized loop rounds once, and symgrad computes as the
  vectorized loop: ``add(b, alpha=)``, ``sub``, ``add_``, ``sub_`` (below,
  :func:`add_scaled`) and ``rsqrt`` (its tail rounds ``sqrt`` to bfloat16, then ``1 /``
  it: 5 of 2000 elements differ by one ulp, all in the last 16). PyTorch's own result
  for an element depends on the tensor's size there.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.config import config
from ..core.ir import Primitive
from . import dtypes as dt
from . import fma_loops

#: the operations whose PyTorch CPU kernel takes a scalar operand in float32 ("opmath")
_FLOAT32_SCALAR = frozenset({"mul", "div", "floor_divide"})


def opmath_scalar(v: Any, k: int, name: str) -> bool:
    """Whether PyTorch's CPU kernel for a bfloat16 or float16 result takes the operand
    ``v`` (the ``k``-th) in float32, unrounded: a Python number, or a 0-d tensor as the
    second operand (``x * t``, not ``t * x``), of ``mul``, ``div`` and ``floor_divide``
    (their kernels read ``original_scalar_value<opmath_t>(2)``; ``2 * x`` is
    ``x.mul(2)``). Other operands are rounded to the result's dtype first, as in
    ``x + 0.1``: the rounded sum of two rounded values is then the same in float32."""
    return name in _FLOAT32_SCALAR and (
        type(v) in (float, int, bool) or (k == 1 and np.ndim(v) == 0))


def operand(v: Any, k: int, prim: Primitive) -> Any:
    """The ``k``-th operand of an operation with a bfloat16 result, as the float32 value
    it computes with: bfloat16 data (ints and floats rounded to it first), or a scalar
    kept in float32 where PyTorch's kernel keeps it (:func:`opmath_scalar`)."""
    float32 = opmath_scalar(v, k, prim.name)
    if type(v) in (float, int, bool):
        v = np.asarray(float(v))
    dt.refuse_complex(v)
    if float32:
        return v.astype(np.float32)
    return dt.cast(v, dt.bfloat16).astype(np.float32)


def rounded(value: Any) -> np.ndarray:
    """An operation's float32 result rounded to bfloat16 (round to nearest even)."""
    return dt.cast(np.asarray(value), dt.bfloat16)


#: why no gradient flows through bfloat16 values (see :func:`refuse_gradients`)
GRADIENT_ERROR = (
    "gradients through bfloat16 tensors are not supported: PyTorch computes each backward "
    "node in bfloat16 (rounding every node's gradient), while symgrad's backward is one "
    "fused float64 computation, so its gradients would differ from PyTorch's by more than "
    "one rounding. Train in float32 (model.float(), x.float()), or run bfloat16 inference "
    "under torch.no_grad()")

#: the recorded nodes whose result or differentiated operand is bfloat16
_NODES: weakref.WeakSet = weakref.WeakSet()


def note(node: Any, out: Any, args: Any) -> None:
    """Remember ``node`` if its result is bfloat16 or a bfloat16 operand requires grad."""
    if out is dt.bfloat16 or any(getattr(a, "_requires_grad", False)
                                 and dt.is_bfloat16(a._value) for a in args):
        _NODES.add(node)


def exempt(node: Any) -> None:
    """Forget ``node``, a cast: its backward rounds the gradient to bfloat16 as PyTorch's
    ``ToCopyBackward0`` does (:mod:`.cast_rounding`), so a graph whose bfloat16 values
    are only cast runs."""
    _NODES.discard(node)


def refuse_gradients(nodes: Any) -> None:
    """A NotImplementedError (a RuntimeError) for a backward through bfloat16 values,
    before it computes anything: :data:`GRADIENT_ERROR`."""
    if _NODES.data and any(n in _NODES for n in nodes):  # (.data: no len() in Python)
        raise NotImplementedError(GRADIENT_ERROR)


def _is_bf16(a: Any) -> bool:  # (a Tensor's dtype, not numpy's; or a tuple's element's)
    if type(a) is tuple:
        return any(map(_is_bf16, a))
    return getattr(a, "dtype", None) is dt.bfloat16


def _up(a: Any) -> Any:
    if type(a) is tuple:
        return tuple(map(_up, a))
    return a.float() if _is_bf16(a) else a


def in_float32(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as PyTorch's fused bfloat16 CPU kernels compute it (``softmax``, ``gelu``,
    ``layer_norm``, ``addmm`` and the others this decorates): on the float32 values of its
    bfloat16 tensor arguments, its result rounded to bfloat16 once, not after each of the
    operations it is made of. Without a bfloat16 argument, ``fn`` itself."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        given = (*args, *kwargs.values())
        if not any(map(_is_bf16, given)) or any(isinstance(a, dt.dtype) for a in given):
            return fn(*args, **kwargs)  # (an explicit dtype= decides the result's dtype)
        args = tuple(map(_up, args))
        kwargs = {k: _up(v) for k, v in kwargs.items()}
        return fn(*args, **kwargs).to(dt.bfloat16)
    return run


def half_in_float32(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` of a float16 tensor computed on its float32 values and rounded to float16
    once, as PyTorch's CPU kernels compute half (``sinc(-1.0)`` is -0.0, not the 3e-4 of
    ``sin(pi * x) / (pi * x)`` rounded after each step; a third of ``sigmoid``'s and half
    of ``softmax``'s elements were an ulp off). An explicit ``dtype=`` decides itself."""
    @functools.wraps(fn)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.dtype is not dt.float16 or any(isinstance(a, dt.dtype)
                                               for a in (*args, *kwargs.values())):
            return fn(self, *args, **kwargs)
        up = [a.float() if hasattr(a, "_value") and a.dtype is dt.float16 else a for a in args]
        out = fn(self.float(), *up, **kwargs)
        return out.half() if out.dtype is dt.float32 else out
    return run


def add_scaled(a: np.ndarray, alpha: float, b: np.ndarray) -> np.ndarray:
    """``a + alpha * b`` as PyTorch's ``a.add(b, alpha=alpha)`` on arrays: for bfloat16
    (float16) ones, ``alpha`` rounded to bfloat16 (float16, as ``x + 0.1`` rounds 0.1),
    the sum computed in float32 (the product of two such values is exact there) and
    rounded once. That is PyTorch's vectorized loop; the elements past its last full
    vector (a tensor's last ``numel % 32`` on AVX-512) take its scalar loop, which rounds
    ``alpha * b`` before adding: those can differ by one rounding here."""
    reduced = _reduced(a)
    if reduced is None:
        return fma(a, alpha, b) if a.dtype in (np.float32, np.float64) else a + alpha * b
    alpha32 = dt.cast(np.asarray(alpha), reduced).astype(np.float32)
    return dt.cast(a.astype(np.float32) + alpha32 * b.astype(np.float32), reduced)


def _two_sum(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = x + y
    t = s - x
    return s, (x - (s - t)) + (y - t)


def _round_to_odd(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``s + e`` (``s`` its rounding to nearest, ``e`` the exact rest) rounded to odd: the
    neighbour whose last bit is odd where it is inexact."""
    even = (s.view(np.int64) & 1) == 0
    return np.where((e != 0) & even, np.nextafter(s, s + e), s)


def fma(a: np.ndarray, alpha: Any, b: np.ndarray) -> np.ndarray:
    """``a + alpha * b`` rounded once, as PyTorch's CPU kernels of ``add``/``sub`` with
    ``alpha`` (and ``add_``, an optimizer's update), ``lerp`` and ``addcmul`` compute it:
    one fused multiply-add (bits checked against exact rationals,
    tests/test_torch_optim_more.py, and LLVM's ``fma``, tests/test_fused_values.py);
    ``alpha`` a number or an array of ``a``'s dtype. From 4096 elements, where eager
    kernels are on, LLVM's ``fma`` in a compiled loop (:mod:`.fma_loops`); else in numpy:
    float32 through float64 rounded to odd, float64 by Boldo and Melquiond's emulation
    (``RN(th + RO(tl + ul))``), both exact, but where a float64 value is beyond what the
    split holds (|x| > 2**900, < 2**-900) or not finite: the two roundings of
    ``a + alpha * b`` there."""
    a, b = np.asarray(a), np.asarray(b)
    compiled = _compiled_fma(a, alpha, b)
    return compiled if compiled is not None else _fma_numpy(a, alpha, b)


def _compiled_fma(a: np.ndarray, alpha: Any, b: np.ndarray) -> np.ndarray | None:
    """:func:`fma` as one compiled loop (:mod:`.fma_loops`, 30x faster), where eager
    kernels are on (``SYMGRAD_EAGER_COMPILE``) and the operands are float32 or float64
    arrays of one dtype, 4096 elements or more (below, the emulation takes microseconds,
    less than loading the loop in a fresh process); None otherwise."""
    if not (config.eager_compile and a.dtype in (np.float32, np.float64) and b.dtype == a.dtype
            and max(a.size, b.size) >= 4096):
        return None
    al = np.asarray(alpha, a.dtype)
    shape = np.broadcast_shapes(a.shape, al.shape, b.shape)
    a, al, b = (np.ascontiguousarray(np.broadcast_to(v, shape)).reshape(-1) for v in (a, al, b))
    out = np.empty(a.size, a.dtype)
    fma_loops.loop()(a, al, b, out)
    return out.reshape(shape)


def _fma_numpy(a: np.ndarray, alpha: Any, b: np.ndarray) -> np.ndarray:
    """:func:`fma` in numpy (exact, by the emulations its docstring names)."""
    if a.dtype == np.float32:
        with np.errstate(all="ignore"):
            x = a.astype(np.float64)
            p = np.asarray(alpha, np.float32).astype(np.float64) * b.astype(np.float64)
            s, e = _two_sum(x, p)  # (p exact: 24 + 24 bits)
            # (an infinite sum is the sum: its rest would be NaN)
            return np.where(np.isfinite(s), _round_to_odd(s, e), s).astype(np.float32)
    with np.errstate(all="ignore"):
        big = np.float64(134217729.0)  # 2**27 + 1 (Veltkamp's split)
        al = np.asarray(alpha, np.float64)
        c = big * al
        ah = c - (c - al)
        c = big * b
        bh = c - (c - b)
        uh = al * b
        ul = ((ah * bh - uh) + ah * (b - bh) + (al - ah) * bh) + (al - ah) * (b - bh)
        th, tl = _two_sum(a, uh)
        v, w = _two_sum(tl, ul)
        fused = th + _round_to_odd(v, w)
        naive = a + al * b
        safe = ((np.abs(a) < 2.0 ** 900) & (np.abs(uh) < 2.0 ** 900) & (np.abs(al) < 2.0 ** 900)
                & (np.abs(b) < 2.0 ** 900) & ((np.abs(al) > 2.0 ** -900) | (al == 0))
                & ((np.abs(b) > 2.0 ** -900) | (b == 0))
                & ((np.abs(uh) > 2.0 ** -900) | (uh == 0)) & ((np.abs(a) > 2.0 ** -900) | (a == 0)))
    # (an exact zero is naive's, with IEEE's sign of a sum: the product was exact then)
    return np.where(safe & (fused != 0), fused, naive)


def _reduced(a: np.ndarray) -> Any:
    """bfloat16 or float16, the dtype of ``a``'s data if it is one of them, else None."""
    return dt.bfloat16 if dt.is_bfloat16(a) else dt.float16 if a.dtype == np.float16 else None


def _floor_divide(a: np.ndarray, b: Any, storage: Any = None) -> np.ndarray:
    """``a // b`` of bfloat16 (or float16, ``storage``) values as PyTorch's CPU kernel
    computes it: c10's ``div_floor_floating`` (numpy's ``floor_divide``, from ``fmod``)
    in bfloat16 arithmetic, each step rounded (``548 // 7`` is 77: ``548 - 2`` rounds to
    544). By a divisor of one element PyTorch's kernel computes in float32 and rounds
    once, that divisor in float32 if it is a number or a 0-d tensor of another dtype
    (``548 // 7`` with the Python number 7 is 78): :func:`operand` gives it so
    (:data:`_FLOAT32_SCALAR`)."""
    storage = dt.bfloat16.numpy if storage is None else storage

    def r(v: Any) -> np.ndarray:
        return np.asarray(v, np.float32).astype(storage).astype(np.float32)
    a = r(a)
    if np.size(b) == 1:
        return np.floor_divide(a, np.asarray(b, np.float32)).astype(storage)
    a, b = np.broadcast_arrays(a, np.asarray(b, np.float32))
    mod = r(np.fmod(a, b))
    div = r(r(a - mod) / b)
    div = np.where((mod != 0) & ((b < 0) != (mod < 0)), r(div - 1), div)
    low = np.floor(div)
    low = np.where(r(div - low) > 0.5, r(low + 1), low)
    low = np.where(div != 0, low, np.copysign(np.float32(0), a / b))
    return np.where(b == 0, a / b, low).astype(storage)


#: operations whose PyTorch kernel for bfloat16 (and float16) rounds between its steps
KERNELS: dict[tuple[str, Any], Callable[..., np.ndarray]] = {
    ("floor_divide", dt.bfloat16): _floor_divide,
    ("floor_divide", dt.float16): functools.partial(_floor_divide, storage=np.float16)}


def add_tensors(a: Any, b: Any, alpha: Any) -> np.ndarray | None:
    """The values of ``a.add(b, alpha=alpha)`` of a float Tensor and a Tensor of its dtype,
    as PyTorch's kernel computes them (:func:`add_scaled`, the same as ``add_``; its
    fused multiply-add for float32 and float64); also of a float32/float64 ``a`` and a
    Python number or a 0-d float Tensor ``b``, which PyTorch's kernel takes in ``a``'s
    dtype (:func:`scalar_operand`); None otherwise (``a + b * alpha`` then). Recorded or
    not: PyTorch's forward does not depend on recording."""
    if type(alpha) not in (int, float):
        return None
    y = scalar_operand(a._value, b)
    if y is None:
        if not (getattr(b, "dtype", None) is a.dtype
                and a.dtype in (dt.bfloat16, dt.float16, dt.float32, dt.float64)):
            return None
        y = b._value
    x, y = np.broadcast_arrays(a._value, y)
    return np.array(add_scaled(x, alpha, y))


def scalar_operand(a: np.ndarray, b: Any) -> np.ndarray | None:
    """``b`` in ``a``'s dtype where ``a`` is a float32 or float64 array and ``b`` a Python
    int or float or a 0-d float Tensor: PyTorch's CPU kernels take such a second operand
    as a scalar of the result's dtype (``a``'s), so ``a.add(1.7, alpha=3)`` is
    ``fma(float32(3), float32(1.7), a)`` (two roundings in float64, then float32, gave
    an ulp apart in half the elements); None for any other ``b``."""
    if not (isinstance(a, np.ndarray) and a.dtype in (np.float32, np.float64)):
        return None
    v = getattr(b, "_value", b)  # (a Tensor's values; add_ passes them)
    if type(b) in (int, float):
        value = b
    elif isinstance(b, (np.floating, np.integer)):  # a numpy scalar: PyTorch's number (its
        value = b.item()  # alpha * np.float32(0.7) was rounded in float32 for float64 a)
    elif isinstance(v, np.ndarray) and v.ndim == 0 and (
            v.dtype in (np.float16, np.float32, np.float64) or dt.is_bfloat16(v)):
        value = v.astype(np.float64)
    else:
        return None
    with np.errstate(over="ignore"):
        return np.asarray(value, a.dtype)


def scaled(a: np.ndarray, s: float) -> np.ndarray:
    """``a * s`` as PyTorch's ``a.mul(s)``: for bfloat16, ``s`` in float32, one rounding."""
    if not dt.is_bfloat16(a):
        return a * s
    return rounded(a.astype(np.float32) * np.float32(s))
