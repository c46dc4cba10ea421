"""The Python overhead of calling a transformed function, against its bare kernel.

For each function, ``g(*args)`` is timed against the Numba dispatcher it ends
in, called with the kernel's own arguments (the traced inputs as the kernel
takes them, then the array constants). Each is timed ``--repeat`` times over
``number`` calls (``timeit``'s autorange, at least 0.2 s); the medians per call
are printed, and their difference: the overhead of symgrad's Python path.

Run:  python benchmarks/dispatch.py [--repeat 7]
(kernels are compiled or loaded from the usual cache before timing)
"""

from __future__ import annotations

import argparse
import statistics
import timeit
from collections.abc import Callable


def cases() -> list[tuple[str, Callable, tuple]]:
    import numpy as np

    import symgrad as sg

    def expr15(a, b):  # 15 operations on two Python floats
        s = np.sin(a * b) + np.exp(-a) * np.cos(b) ** 2
        t = np.log1p(a * a) / (1.0 + b * b)
        return s + t - np.tanh(a - b) * np.sqrt(b * b + 1.0)

    def layer(w, b, x):  # a 3-argument loss, differentiated in w and b
        return np.sum(np.tanh(x @ w + b) ** 2)

    def four(a, b, c, d):  # four scalars
        return np.sin(a) * b + np.exp(c) * d

    rng = np.random.default_rng(0)
    table = rng.random(4)

    def guarded(x):  # reads a global-like closure array: a guard is checked per call
        return np.sum(table * x * x)

    return [
        ("seed grad, n=4", sg.grad(lambda x: np.mean(3 * (x + 2) ** 2)), (rng.random(4),)),
        ("15-op scalar grad", sg.grad(expr15), (0.3, 1.7)),
        ("grad argnums=(0, 1)", sg.grad(layer, argnums=(0, 1)),
         (rng.random((3, 2)), rng.random(2), rng.random((5, 3)))),
        ("4 scalars, argnums=0..3", sg.grad(four, argnums=(0, 1, 2, 3)), (0.1, 0.2, 0.3, 0.4)),
        ("guarded (reads a closure)", sg.grad(guarded), (rng.random(4),)),
    ]


def bare_kernel(g, args: tuple) -> tuple[Callable, tuple]:
    """The Numba dispatcher behind ``g(*args)`` and the arguments it takes."""
    from symgrad.backend import compile as kernels

    spec, inputs = g._prepare(args, None, {})
    kernel = kernels.load(spec.source)
    return kernel.function, (*inputs, *(c for _, c in spec.graph.consts))


def per_call(fun: Callable, args: tuple, repeat: int) -> float:
    """Median seconds per call of ``fun(*args)`` over ``repeat`` timeit runs."""
    timer = timeit.Timer(lambda: fun(*args))
    number, _ = timer.autorange()
    number = max(number, 1000)
    return statistics.median(t / number for t in timer.repeat(repeat, number))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    opts = parser.parse_args()
    print(f"{'function':26} {'g(...)':>10} {'kernel':>10} {'overhead':>10}   (median per call)")
    for name, g, args in cases():
        g(*args)  # compile (or load), then warm both paths
        kernel, inputs = bare_kernel(g, args)
        kernel(*inputs)
        t_g = per_call(g, args, opts.repeat)
        t_k = per_call(kernel, inputs, opts.repeat)
        print(f"{name:26} {t_g * 1e6:8.2f}us {t_k * 1e6:8.2f}us {(t_g - t_k) * 1e6:8.2f}us")


if __name__ == "__main__":
    main()
