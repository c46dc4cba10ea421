"""float32 against float64 at n = 1e7 (issue 31's target: float32 <= 0.55x the float64 time).

``grad(sum(sin(x)*exp(-x*x)))`` (benchmarks/run.py's ``float32_details``: the same values
in both dtypes, timed in turns in one process), at the default thread setting and pinned
to one thread, then a float32 kernel of each function of symgrad/backend/vecmath32.py
against its float64 kernel (``sg.jit(lambda x: f(x))``, medians of interleaved calls).

Run:  python benchmarks/float32_speed.py [--n 10000000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

import symgrad as sg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**7)
    parser.add_argument("--budget", type=float, default=4.0)
    opts = parser.parse_args()
    sg.config.tiered = False
    print(f"load average {os.getloadavg()[0]:.1f}; n = {opts.n}")
    for threads in (None, 1):
        sg.set_num_threads(threads)
        d = run.float32_details(opts.n, opts.budget)
        print(f"sinexp gradient, threads {threads or 'default'}: "
              f"float32 {d['float32'] * 1e3:.1f} ms, float64 {d['float64'] * 1e3:.1f} ms, "
              f"ratio {d['float32'] / d['float64']:.3f}; "
              f"{d['dtype']}, max rel. difference {d['error']:.1e}")
    sg.set_num_threads(None)
    x64 = np.random.default_rng(0).uniform(-3.0, 3.0, opts.n)
    x32 = x64.astype(np.float32)
    functions = {"exp": np.exp, "log": lambda v: np.log(v * v + 0.5), "sin": np.sin,
                 "cos": np.cos, "tanh": np.tanh, "sigmoid": sg.sigmoid, "softplus": sg.softplus}
    for name, f in functions.items():
        k = sg.jit(lambda v, f=f: f(v))
        k(x32), k(x64)
        times: dict[str, list[float]] = {"f32": [], "f64": []}
        for _ in range(9):
            for key, x in (("f32", x32), ("f64", x64)):
                start = time.perf_counter()
                k(x)
                times[key].append(time.perf_counter() - start)
        m = {key: statistics.median(v) for key, v in times.items()}
        print(f"{name:>9}: float32 {m['f32'] * 1e3:7.1f} ms, float64 {m['f64'] * 1e3:7.1f} ms, "
              f"ratio {m['f32'] / m['f64']:.3f}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
