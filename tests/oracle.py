"""Independent oracles: SymPy's derivative at 50 digits, finite differences, plain numpy.

SymPy differentiates the *forward* graph as traced, before any pass; symgrad's
VJP rules, adjoint transform and passes play no part in what it returns.
"""

from __future__ import annotations

import contextlib
import itertools
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from symgrad import prims as P
from symgrad.core.ir import Aval
from symgrad.core.sympy_bridge import evaluate, gradient_expressions, to_sympy
from symgrad.core.tracing import arg_names
from symgrad.numpy_api import trace

RTOL = 1e-12
ATOL = 1e-12


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded by a test's name: random, but the same on every run."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def forward_graph(fn: Callable, *args: Any):
    """The graph of ``fn`` traced at ``args``, with no pass applied."""
    avals = [Aval(np.shape(a)) for a in args]
    graph, _ = trace(fn, avals, args, arg_names(fn, len(args)))
    return graph


def sympy_value(fn: Callable, *args: Any) -> Any:
    graph = forward_graph(fn, *args)
    return evaluate(to_sympy(graph)[0], graph, args)


def sympy_gradient(fn: Callable, args: Sequence[Any], cotangent: Any = None,
                   wrt: Sequence[int] | None = None) -> list[Any]:
    """SymPy's gradient of sum(fn(*args) * cotangent) at ``args``, to 50 digits."""
    graph = forward_graph(fn, *args)
    exprs = gradient_expressions(graph, cotangent, wrt)
    return [evaluate(e, graph, args) for e in exprs]


def sympy_value_and_gradient(fn: Callable, args: Sequence[Any],
                             cotangent: Any = None) -> tuple[Any, list[Any]]:
    """:func:`sympy_value` and :func:`sympy_gradient` of one SymPy form of the graph
    (built once: the same numbers as the two calls)."""
    graph = forward_graph(fn, *args)
    outputs = to_sympy(graph)
    exprs = gradient_expressions(graph, cotangent, outputs=outputs)
    return evaluate(outputs[0], graph, args), [evaluate(e, graph, args) for e in exprs]


def finite_differences(fn: Callable, args: Sequence[Any], k: int, cotangent: Any = None,
                       h: float = 1e-6) -> np.ndarray:
    """Central differences of sum(fn(*args) * cotangent) in argument ``k``."""
    args = [np.array(a, dtype=float) for a in args]
    ct = 1.0 if cotangent is None else np.asarray(cotangent)

    def loss(x: np.ndarray) -> float:
        a = list(args)
        a[k] = x
        return float(np.sum(np.asarray(fn(*a)) * ct))

    x = args[k]
    grad = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        step = h * max(1.0, abs(x[idx]))
        up, down = x.copy(), x.copy()
        up[idx] += step
        down[idx] -= step
        grad[idx] = (loss(up) - loss(down)) / (2 * step)
    return grad


def assert_close(got: Any, want: Any, rtol: float = RTOL, atol: float = ATOL, what: str = ""):
    got, want = np.asarray(got), np.asarray(want)
    # complex values compared as complex (as float, numpy kept the real parts only)
    kind = complex if np.iscomplexobj(got) or np.iscomplexobj(want) else float
    got, want = got.astype(kind), want.astype(kind)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


@contextlib.contextmanager
def replaced_vjp(name: str, vjp: Callable) -> Iterator[None]:
    """Registry primitive ``name`` with a different (wrong) VJP rule, restored on exit:
    to show that a test fails when a gradient is wrong."""
    prim = P.REGISTRY[name]
    old = prim.vjp
    object.__setattr__(prim, "vjp", vjp)  # frozen: declarations never change otherwise
    try:
        yield
    finally:
        object.__setattr__(prim, "vjp", old)


def bits(a: Any) -> np.ndarray:
    """``a``'s bytes, to compare arrays bit for bit (-0.0 and nan payloads too)."""
    return np.ascontiguousarray(a).view(np.uint8)


def naive_windows(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int],
                  dilation: Sequence[int]) -> np.ndarray:
    """The windows of ``x``'s last ``len(kernel)`` axes, copied element by element:
    shape ``(*lead, *out, *kernel)``."""
    d = len(kernel)
    out = [(n - dil * (k - 1) - 1) // s + 1
           for n, k, s, dil in zip(x.shape[-d:], kernel, stride, dilation)]
    result = np.zeros((*x.shape[:-d], *out, *kernel), x.dtype)
    for place in itertools.product(*map(range, out)):
        for offset in itertools.product(*map(range, kernel)):
            source = tuple(p * s + o * dil for p, o, s, dil in zip(place, offset, stride,
                                                                     dilation))
            result[(..., *place, *offset)] = x[(..., *source)]
    return result
