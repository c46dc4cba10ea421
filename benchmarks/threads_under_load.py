"""Parallel kernels with the other core busy (issue 31, item 7): default against 1 and 2 threads.

Starts a busy loop in a child process (``python -c "while 1: pass"``, killed at the
end, also on an error), then times, interleaved, for each problem of
``benchmarks/run.py`` whose loop is large enough to be parallel (seed and Rosenbrock
at n = 1e6, the 1000x1000 broadcast, sin*exp at n = 1e6):

    hand     the handwritten serial Numba loop of benchmarks/run.py
    default  symgrad as shipped: threads.Adaptive, parallel kernel or serial twin by timing
    1        sg.set_num_threads(1): the serial twin
    2        sg.set_num_threads(2): the parallel kernel on 2 threads

in a new random order each round, and prints medians of wall-clock times
(``time.perf_counter``) with the ratios that issue 31 sets targets for: default /
1-thread (<= 1.1) and, for the seed, default / hand (<= 1.3). ``--no-busy`` measures
without the busy loop.

Run:  python benchmarks/threads_under_load.py [--rounds 41] [--no-busy]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

import numpy as np

import symgrad as sg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402 -- the problems and handwritten loops of the main benchmark


def problems(rng):
    x = rng.uniform(-1.0, 1.0, 10**6)
    b = run.broadcast_args(1000, rng)
    return {
        "seed-1e6": (run.seed, (x,), (0,), run.seed_numba),
        "rosenbrock-1e6": (run.rosenbrock, (x,), (0,), run.rosenbrock_numba),
        "broadcast-1000x1000": (run.broadcast, b, (1, 2), run.broadcast_numba),
        "sinexp-1e6": (run.sinexp, (x,), (0,), run.sinexp_numba),
    }


def pinned(g, n):
    def call(*args):
        sg.set_num_threads(n)
        try:
            return g(*args)
        finally:
            sg.set_num_threads(None)
    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--no-busy", action="store_true")
    opts = parser.parse_args()
    sg.config.tiered = False  # compile first: time the kernels, not the interpreter
    busy = None if opts.no_busy else subprocess.Popen(
        [sys.executable, "-c", "while 1: pass"])
    try:
        print(f"busy loop: {'none' if busy is None else f'pid {busy.pid}'}; "
              f"threads {sg.max_threads()}; load average {os.getloadavg()[0]:.1f}")
        print(f"{'problem':>20} {'hand':>9} {'default':>9} {'1 thread':>9} {'2 threads':>9}"
              f"  default/1  default/hand")
        for name, (f, args, argnums, hand) in problems(np.random.default_rng(0)).items():
            g = sg.grad(f, argnums=argnums)
            impls = {"hand": lambda h=hand, a=args: h(*a), "default": lambda g=g, a=args: g(*a),
                     "1": lambda g=g, a=args: pinned(g, 1)(*a),
                     "2": lambda g=g, a=args: pinned(g, 2)(*a)}
            for fn in impls.values():  # compile, load the twin, let the default choose
                for _ in range(12):
                    fn()
            times = {k: [] for k in impls}
            shuffle = random.Random(0)
            for _ in range(opts.rounds):  # in a new order each round: under load, the call
                # after the slow hand loop waited for its time slice (broadcast 19x, load 11)
                for k in shuffle.sample(list(impls), len(impls)):
                    fn = impls[k]
                    start = time.perf_counter()
                    fn()
                    times[k].append(time.perf_counter() - start)
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{name:>20} " + " ".join(f"{med[k] * 1e3:8.2f}ms" for k in impls)
                  + f"  {med['default'] / med['1']:9.2f}  {med['default'] / med['hand']:12.2f}")
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()


if __name__ == "__main__":
    main()
