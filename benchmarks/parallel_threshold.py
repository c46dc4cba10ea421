"""From which loop size a parallel kernel beats the serial one (symgrad/backend/numba/threads.py).

For a memory-bound gradient (the seed's, ``mean(3*(x+2)**2)``) and a
transcendental-bound one (``sum(tanh(x)**2)``), times the serial kernel
(``SYMGRAD_PARALLEL_MIN=off``) against the parallel one (every loop a prange)
at sizes from 2**10 to 2**20, interleaved, best of several rounds, and prints
the ratio parallel/serial: below 1 the parallel kernel wins. PARALLEL_MIN is
the smallest size from which it wins for both.

Run:  python benchmarks/parallel_threshold.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import time


def best_time(fn, x, rounds: int) -> float:
    fn(x)
    best = float("inf")
    for _ in range(rounds):
        n = max(1, int(2e-3 / max(1e-7, best if best < float("inf") else 1e-4)))
        start = time.perf_counter()
        for _ in range(n):
            fn(x)
        best = min(best, (time.perf_counter() - start) / n)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    import numpy as np

    import symgrad as sg

    problems = {"seed (memory-bound)": lambda x: np.mean(3 * (x + 2) ** 2),
                "tanh (vecmath-bound)": lambda x: np.sum(np.tanh(x) ** 2)}
    print(f"threads: {sg.get_num_threads()}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'size':>9}  " + "  ".join(f"{name:>22}" for name in problems))
    for power in range(10, 21, 2):
        n = 2**power
        x = np.random.default_rng(0).standard_normal(n)
        row = []
        for f in problems.values():
            os.environ["SYMGRAD_PARALLEL_MIN"] = "off"
            serial = sg.grad(f)
            serial(x)
            os.environ["SYMGRAD_PARALLEL_MIN"] = "2"
            parallel = sg.grad(f)
            parallel(x)
            t_s = min(best_time(serial, x, 1) for _ in range(opts.rounds))
            t_p = min(best_time(parallel, x, 1) for _ in range(opts.rounds))
            row.append(f"{t_p / t_s:>9.2f} ({t_s * 1e6:7.1f}us)")
        print(f"{n:>9}  " + "  ".join(f"{r:>22}" for r in row))
    print("parallel/serial time: below 1.00 the parallel kernel wins")


if __name__ == "__main__":
    main()
