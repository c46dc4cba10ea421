"""Adam's update of one parameter as one loop: the same arithmetic as the numpy update of
:class:`symgrad.optim.Adam`, element by element, in one pass over memory.

The numpy update (PyTorch's single-tensor Adam: ``lerp_`` and ``addcmul_`` as PyTorch's
CPU kernels fuse them, one fused multiply-add each, ``sqrt``, ``/``, ``+ eps``,
``p + (-step_size * m) / denom`` as ``addcdiv_``) makes about ten passes over the
parameter and its temporaries; for a 784x256 layer that is the largest part of a
training step after the matrix products. This loop performs the same IEEE operations
on each element in the same order (LLVM's ``fma`` where the numpy update calls
:func:`.bf16.fma`), with each Python number rounded to the array's dtype where numpy
rounds it (NEP 50: a Python float meets a float32 array as float32), and no
``fastmath``: so its results are the numpy update's, bit for bit, in float64 and in
float32 (``tests/test_torch_adam.py`` compares both with PyTorch's Adam bit for bit).
Without ``amsgrad`` nor L2 decay (Adam's defaults, AdamW's), the loop has no branch
(:func:`_plain_loop`), so that LLVM vectorizes it. Non-contiguous arrays and other
dtypes take the numpy update.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..core.config import config

_KERNEL: Any = None
_fma: Any = None  # a * b + c rounded once (fma_loops' intrinsic), set by _kernel
# sqrt(v) / c2 by _quotient where 2**-30 <= c2 <= 1: sqrt(v) lies in [2**-75, 2**64] (or is
# 0, or not finite) in float32 and [2**-537, 2**512] in float64, so no quotient, product
# nor remainder of _quotient underflows or overflows. c2 = sqrt(1 - beta2**step) is at least
# 2**-26.5 for any float beta2 < 1: the bounds are a guard (outside, the general loop divides)
_C2_LOW = 2.0 ** -30
_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def _adam_loop(p, g, m, v, top, amsgrad, weight, low, weight_minus_one, beta2,
               one_minus_beta2, decay_mode, decay, neg_step_size, c2,
               eps):  # pragma: no cover (Numba)
    for i in range(p.size):
        gi = g[i]
        if decay_mode == 1:  # decoupled (AdamW): p *= 1 - lr * wd
            p[i] = p[i] * decay
        elif decay_mode == 2:  # L2: g.add(p, alpha=wd), fused
            gi = _fma(decay, p[i], gi)
        if low:  # start.lerp_(end, weight), PyTorch's two fused formulas
            m[i] = _fma(weight, gi - m[i], m[i])
        else:
            m[i] = _fma(weight_minus_one, gi - m[i], gi)
        v[i] = v[i] * beta2
        v[i] = _fma(gi * one_minus_beta2, gi, v[i])  # addcmul_, fused
        if amsgrad:  # torch.maximum(top, v): a NaN of either wins
            if top[i] == top[i] and not v[i] <= top[i]:
                top[i] = v[i]
            denom = np.sqrt(top[i]) / c2 + eps
        else:
            denom = np.sqrt(v[i]) / c2 + eps
        p[i] = p[i] + (neg_step_size * m[i]) / denom  # addcdiv_


def _quotient(s, c2, r2):  # pragma: no cover (Numba; inlined)
    """``s / c2`` correctly rounded, as the division gives it, by multiplications: ``r2`` is
    ``1 / c2`` rounded, ``q1`` the product corrected once (within an ulp of ``s / c2``:
    faithful), ``q2`` corrected again, which is the rounded quotient by Markstein's
    theorem (as in Muller et al., Handbook of Floating-Point Arithmetic, on division with
    an FMA: a faithful quotient and a reciprocal within 2**-p relative give ``RN(s / c2)``,
    the remainder exact, provided nothing underflows nor overflows, which :func:`update`'s
    bounds on ``c2`` ensure for every ``s = sqrt(v)``). ``tests/test_torch_adam.py``
    compares it with the division. Where ``s * r2`` is already exact
    (the remainder 0: ``s`` is 0, among others) or ``s`` is not finite (the remainder NaN),
    the product is the quotient. The division's unit is the loop's bottleneck (two
    divisions and a square root an element); this takes the first division off it."""
    q0 = s * r2
    e0 = _fma(-q0, c2, s)
    q1 = _fma(e0, r2, q0)
    q2 = _fma(_fma(-q1, c2, s), r2, q1)
    return q2 if e0 != 0 and e0 == e0 else q0


def _plain_loop(p, g, m, v, weight, low, weight_minus_one, beta2, one_minus_beta2, decoupled,
                decay, neg_step_size, c2, r2, eps):  # pragma: no cover (Numba)
    """:func:`_adam_loop` without amsgrad nor L2 decay, one loop per lerp formula: with no
    branch in it, LLVM vectorizes it (a 784x256 float64 update: 110-140 us instead of
    170-230). The decoupled decay is a pass of its own, first: nothing reads ``p``
    before its update. ``sqrt(v) / c2`` by :func:`_quotient` (``r2 = 1 / c2``): 784x256
    float64, 358 -> 271 us on an Intel Xeon (AVX-512, 256-bit vectors)."""
    if decoupled:
        for i in range(p.size):
            p[i] = p[i] * decay
    if low:
        for i in range(p.size):
            gi = g[i]
            m[i] = _fma(weight, gi - m[i], m[i])
            v[i] = _fma(gi * one_minus_beta2, gi, v[i] * beta2)
            p[i] = p[i] + (neg_step_size * m[i]) / (_quotient(np.sqrt(v[i]), c2, r2) + eps)
    else:
        for i in range(p.size):
            gi = g[i]
            m[i] = _fma(weight_minus_one, gi - m[i], gi)
            v[i] = _fma(gi * one_minus_beta2, gi, v[i] * beta2)
            p[i] = p[i] + (neg_step_size * m[i]) / (_quotient(np.sqrt(v[i]), c2, r2) + eps)


def _kernel() -> Any:
    """The two loops, made once: under a lock, as two threads' first Adam steps would
    each wrap ``_quotient`` (the second in a jit of the first's dispatcher: a TypeError)."""
    global _KERNEL, _fma, _quotient
    if _KERNEL is None:
        with _KERNEL_LOCK:
            if _KERNEL is None:
                from numba import njit

                from .fma_loops import _intrinsic

                _fma = _intrinsic()
                jit = njit(cache=True, error_model="numpy", fastmath=False, nogil=True)
                _quotient = njit(inline="always", error_model="numpy",
                                 fastmath=False)(_quotient)
                _KERNEL = jit(_adam_loop), jit(_plain_loop)
    return _KERNEL


_KERNEL_LOCK = threading.Lock()


def update(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, *, beta1: float,
           beta2: float, weight_decay: float, decoupled: bool, lr: float,
           step_size: float, correction2_sqrt: float, eps: float,
           top: np.ndarray | None = None) -> bool:
    """Adam's update of ``p`` (and its state ``m``, ``v``, and ``top``, amsgrad's maximum
    of ``v``, if given) in place, as one loop; False (nothing done) where the numpy
    update must run: arrays of other dtypes or layouts, or with
    ``SYMGRAD_EAGER_COMPILE=0``."""
    dtype = p.dtype
    if not (config.eager_compile and dtype in _DTYPES and p.shape == g.shape
            and p.flags.writeable):
        return False
    for a in (p, g, m, v) if top is None else (p, g, m, v, top):
        if a.dtype != dtype or not a.flags.c_contiguous:
            return False
    s = dtype.type  # each Python number as numpy rounds it when it meets the array
    mode, rates, decay, eps_ = _constants(dtype, beta1, beta2, weight_decay, decoupled, lr,
                                          eps)
    general, plain = _kernel()
    if top is None and mode != 2 and _C2_LOW <= correction2_sqrt <= 1:
        c2 = s(correction2_sqrt)
        plain(p.reshape(-1), g.reshape(-1), m.reshape(-1), v.reshape(-1), *rates, mode == 1,
              decay, s(-step_size), c2, s(1) / c2, eps_)
        return True
    general(p.reshape(-1), g.reshape(-1), m.reshape(-1), v.reshape(-1),
            (v if top is None else top).reshape(-1), top is not None, *rates, mode, decay,
            s(-step_size), s(correction2_sqrt), eps_)
    return True


def _constants(dtype: np.dtype, beta1: float, beta2: float, weight_decay: float,
               decoupled: bool, lr: float, eps: float) -> tuple:
    """The loops' numbers that do not change from step to step, in ``dtype`` (each as numpy
    rounds it when it meets the array: NEP 50): the decay's mode (0 none, 1 decoupled, 2
    L2) and factor, lerp's weight and its formula, beta2's, eps; made once per group
    (:data:`_CONSTANTS`), not for each parameter at each step."""
    key = (dtype, beta1, beta2, weight_decay, decoupled, lr, eps)
    # only Python numbers are keys: a Tensor lr (or beta; PyTorch takes them) hashes by
    # identity, and one changed in place (a schedule's lr.mul_) kept the first step's decay
    cached = type(lr) in _NUMBERS and type(beta1) in _NUMBERS and type(beta2) in _NUMBERS
    found = _CONSTANTS.get(key) if cached else None
    if found is None:
        s = dtype.type
        weight = s(1 - beta1)
        if weight_decay != 0:
            mode, decay = (1, s(1 - lr * weight_decay)) if decoupled else (2, s(weight_decay))
        else:
            mode, decay = 0, s(0.0)
        found = (mode, (weight, weight < 0.5, weight - s(1), s(beta2), s(1 - beta2)), decay,
                 s(eps))
        if cached and len(_CONSTANTS) < 256:  # (a scheduler's lr: a key per step, bounded)
            _CONSTANTS[key] = found
    return found


_CONSTANTS: dict[tuple, tuple] = {}
_NUMBERS = frozenset({float, int})  # (weight_decay and eps: numbers in PyTorch too)
