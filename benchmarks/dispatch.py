"""The Python overhead of calling a transformed function, against its bare kernel.

For each function, ``g(*args)`` is timed against the Numba dispatcher it ends
in, called with the kernel's own arguments (the traced inputs as the kernel
takes them, then the array constants): one to four arguments, scalars and
arrays, and functions that read values from outside (a closure array, a global
float), whose guards are checked on every call. Timing is interleaved so that
load from other processes hits both alike: ``--repeat`` rounds, each timing
``g`` and then the kernel over about a millisecond of calls; the medians per
call over the rounds are printed, and their difference (last column): the
overhead of symgrad's Python path (the fast key, the guards, the picking and
wrapping of outputs); ``best`` is the difference of the fastest rounds, the
estimate least disturbed by other processes. The fast path calls the kernel's
compiled overload directly, without Numba's dispatch, which the bare kernel
time includes: so the overhead can be below zero.

Last, the cost of a call of a function that *fails closed* (it reads a value its
guards cannot cover, here a list of 100 floats, so it is traced on every call;
the kernel is reused, nothing compiles), against the same function guarded (the
list passed as an argument): a few calls, the median per call.

Run:  python benchmarks/dispatch.py [--repeat 101]
(kernels are compiled or loaded from the usual cache before timing)
"""

from __future__ import annotations

import argparse
import statistics
import timeit
from collections.abc import Callable

SCALE = 0.25  # a global float read by a guarded function (guarded by value)


def cases() -> list[tuple[str, Callable, tuple]]:
    import numpy as np

    import symgrad as sg

    def expr15(a, b):  # 15 operations on two Python floats
        s = np.sin(a * b) + np.exp(-a) * np.cos(b) ** 2
        t = np.log1p(a * a) / (1.0 + b * b)
        return s + t - np.tanh(a - b) * np.sqrt(b * b + 1.0)

    def layer(w, b, x):  # a 3-argument loss, differentiated in w and b
        return np.sum(np.tanh(x @ w + b) ** 2)

    def three(a, b, c):  # three scalars
        return np.sin(a) * b + np.exp(c) * a

    def four(a, b, c, d):  # four scalars
        return np.sin(a) * b + np.exp(c) * d

    def four_arrays(a, b, c, d):
        return np.sum(a * b + c * d)

    rng = np.random.default_rng(0)
    table = rng.random(4)

    def guarded(x):  # reads a closure array: a guard is checked per call
        return np.sum(table * x * x)

    def guarded_scalar(a, b):  # reads a global float: a guard is checked per call
        return np.sin(a) * b * SCALE

    v = [rng.random(4) for _ in range(4)]
    return [
        ("1 scalar", sg.grad(lambda a: np.sin(a) * a), (0.3,)),
        ("2 scalars (15 ops)", sg.grad(expr15, argnums=(0, 1)), (0.3, 1.7)),
        ("3 scalars", sg.grad(three, argnums=(0, 1, 2)), (0.1, 0.2, 0.3)),
        ("4 scalars", sg.grad(four, argnums=(0, 1, 2, 3)), (0.1, 0.2, 0.3, 0.4)),
        ("1 array (seed, n=4)", sg.grad(lambda x: np.mean(3 * (x + 2) ** 2)), (v[0],)),
        ("2 arrays", sg.grad(lambda x, y: np.sum(x * y)), (v[0], v[1])),
        ("3 arrays, argnums=(0, 1)", sg.grad(layer, argnums=(0, 1)),
         (rng.random((3, 2)), rng.random(2), rng.random((5, 3)))),
        ("4 arrays", sg.grad(four_arrays), tuple(v)),
        ("guarded: closure array", sg.grad(guarded), (v[0],)),
        ("guarded: global float", sg.grad(guarded_scalar, argnums=(0, 1)), (0.3, 0.5)),
    ]


def bare_kernel(g, args: tuple) -> tuple[Callable, tuple]:
    """The Numba dispatcher behind ``g(*args)`` and the arguments it takes."""
    from symgrad.backend.numba import compile as kernels

    spec, inputs = g._prepare(args, None, {})
    kernel = kernels.load(spec.source)
    return kernel.function, (*inputs, *(c for _, c in spec.graph.consts))


def rounds(funs: list[tuple[Callable, tuple]], repeat: int) -> list[list[float]]:
    """Seconds per call of each ``fun(*args)`` in each of ``repeat`` interleaved rounds
    (about a millisecond of calls of each function in turn)."""
    timers = [timeit.Timer(lambda f=f, a=a: f(*a)) for f, a in funs]
    numbers = [max(100, int(timer.autorange()[0] * 0.001 / 0.2)) for timer in timers]
    samples: list[list[float]] = [[] for _ in funs]
    for _ in range(repeat):
        for timer, number, sample in zip(timers, numbers, samples):
            sample.append(timer.timeit(number) / number)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=101, help="interleaved rounds")
    opts = parser.parse_args()
    print(f"{'function':26} {'g(...)':>10} {'kernel':>10} {'best':>10} {'overhead':>10}"
          "   (medians per call over the rounds; best: of the fastest rounds)")
    import symgrad as sg

    # compile before timing: with tiered compilation the first calls run on the
    # interpreter while Numba compiles in the background, and the fast path is filled
    # only once the kernel is ready (timing then would measure the interpreter)
    sg.config.tiered = False
    for name, g, args in cases():
        g(*args)  # compile (or load), then warm both paths
        kernel, inputs = bare_kernel(g, args)
        kernel(*inputs)
        s_g, s_k = rounds([(g, args), (kernel, inputs)], opts.repeat)
        t_g, t_k = statistics.median(s_g), statistics.median(s_k)
        best = min(s_g) - min(s_k)
        print(f"{name:26} {t_g * 1e6:8.2f}us {t_k * 1e6:8.2f}us {best * 1e6:8.2f}us "
              f"{(t_g - t_k) * 1e6:8.2f}us")
    fail_closed(opts.repeat)


def fail_closed(repeat: int) -> None:
    """Per call: a function that is traced on every call (it reads a list of 100
    floats, past the guards' limit of 64 elements), and the same with the list passed
    as an argument (a pytree: its leaves are kernel inputs, nothing is traced)."""
    import warnings

    import numpy as np

    import symgrad as sg

    weights = [float(k) for k in range(100)]
    x = np.linspace(0.0, 1.0, 4)

    def reads_a_long_list(x):
        return np.sum(np.sin(x)) * weights[3]

    def takes_it(x, w):
        return np.sum(np.sin(x)) * w[3]

    closed = sg.grad(reads_a_long_list)
    passed = sg.grad(takes_it)
    sg.config.tiered = False  # compile first: time warm calls
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.RetraceWarning)
        for g, args in ((closed, (x,)), (passed, (x, np.array(weights)))):
            g(*args)  # compile (or load)
            per_call = [timeit.timeit(lambda g=g, args=args: g(*args), number=5) / 5
                        for _ in range(max(3, repeat // 10))]
            name = "fail closed (retrace)" if g is closed else "the same, as an argument"
            print(f"{name:26} {statistics.median(per_call) * 1e6:8.1f}us per call")


if __name__ == "__main__":
    main()
