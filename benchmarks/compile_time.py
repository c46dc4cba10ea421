"""Numba compile time against graph size, whole graph vs split into bounded kernels.

The problem is an unrolled recurrence of k steps over a small vector,

    for _ in range(k):
        x = np.sin(x) * w + 0.5 * x
    return np.sum(x)

differentiated with respect to x. For each k the table gives the number of
equations of the optimized gradient graph, the time to build it (trace, adjoint,
passes, code generation), the Numba compile time of the whole graph as one
kernel and split into kernels of at most ``--limit`` equations
(``symgrad.backend.numba.split.MAX_EQNS``), the number of kernels the split compiles (pieces
of the same structure share one), and the time per call of each.

Every measurement runs in a fresh process with a fresh temporary
``SYMGRAD_CACHE_DIR``, so compiles are real; Numba itself is imported and warmed
up before the clock starts. Times are CPU seconds of that process (Numba
compiles on one thread), so that other work on the machine counts less. The
whole-graph compile is skipped above ``--max-unsplit`` steps (before loop fusion
it took minutes there: 243 s for 100 steps, 899 equations; fused, 2.1 s).

Run:  python benchmarks/compile_time.py [--steps 25,50,100,200,400] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time, timeit
import numpy as np
import numba

numba.njit(lambda v: v + 1.0)(1.0)  # Numba and LLVM loaded before the clock starts

import symgrad as sg
from symgrad.backend.numba import compile as kernels
from symgrad.backend.numba import split

steps, limit = int(sys.argv[1]), int(sys.argv[2])
split.MAX_EQNS = split.SPLIT_ABOVE = limit  # graphs above the limit split into pieces of it,
split.FEW_ARRAYS = -1                       # even when fused into one loop

def f(x, w):
    for _ in range(steps):
        x = np.sin(x) * w + 0.5 * x
    return np.sum(x)

x, w = np.linspace(0.1, 1.0, 8), np.linspace(-1.0, 1.0, 8)
g = sg.grad(f)
clock = time.process_time    # CPU seconds: the machine may be shared
t0 = clock()
graph = g.graph(x, w)        # trace, adjoint, passes, codegen, kernel modules imported
t1 = clock()
first = g(x, w)              # Numba compiles here
t2 = clock()
n, total = 0, 0.0
while total < 0.2:
    total += timeit.Timer(lambda: g(x, w), timer=clock).timeit(number=100)
    n += 100
stats = kernels.compile_stats()
print(json.dumps({"eqns": len(graph.eqns), "build": t1 - t0, "compile": t2 - t1 - total / n,
                  "call": total / n, "kernels": stats["compiled"],
                  "pieces": len(g._prepare((x, w), None)[0].pieces),
                  "grad": first.tolist()}))
"""


def measure(steps: int, limit: int) -> dict:
    """One measurement in a fresh process with an empty kernel cache."""
    with tempfile.TemporaryDirectory(prefix="symgrad-bench-") as cache:
        env = {**os.environ, "SYMGRAD_CACHE_DIR": cache}
        env.pop("NUMBA_CACHE_DIR", None)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        done = subprocess.run([sys.executable, "-c", CHILD, str(steps), str(limit)], env=env,
                              capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


HEAD = ["steps", "equations", "build s", "compile s (whole)", "compile s (split)",
        "kernels (split)", "call µs (whole)", "call µs (split)"]


def rows(steps: list[int], limit: int, max_unsplit: int, progress: bool = False) -> list:
    """One table row per number of steps: the graph whole (up to ``max_unsplit`` steps)
    and split into pieces of ``limit`` equations, each in fresh processes."""
    table = []
    for n in steps:
        whole = measure(n, 10**9) if n <= max_unsplit else None
        parts = measure(n, limit)
        if whole is not None and whole["grad"] != parts["grad"]:
            raise SystemExit(f"{n} steps: the split kernels disagree with the whole kernel")
        table.append([n, parts["eqns"], f"{parts['build']:.2f}",
                      f"{whole['compile']:.1f}" if whole else "-", f"{parts['compile']:.1f}",
                      f"{parts['kernels']} of {parts['pieces']}",
                      f"{whole['call'] * 1e6:.1f}" if whole else "-",
                      f"{parts['call'] * 1e6:.1f}"])
        if progress:
            print("  ".join(map(str, table[-1])), file=sys.stderr, flush=True)
    return table


def markdown(table: list) -> str:
    return "\n".join(["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD),
                      *("| " + " | ".join(map(str, r)) + " |" for r in table)])


def main() -> None:
    from symgrad.backend.numba import split

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="25,50,100,200,400,800",
                        help="comma-separated numbers of unrolled steps")
    parser.add_argument("--limit", type=int, default=split.MAX_EQNS,
                        help="equations per kernel when split (default: %(default)s)")
    parser.add_argument("--max-unsplit", type=int, default=400,
                        help="largest number of steps compiled as one kernel")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args()

    table = rows([int(n) for n in args.steps.split(",")], args.limit, args.max_unsplit,
                 progress=not args.markdown)
    if args.markdown:
        print(markdown(table))
    else:
        widths = [max(len(str(x)) for x in col) for col in zip(HEAD, *table)]
        for r in [HEAD, *table]:
            print("  ".join(str(x).rjust(w) for x, w in zip(r, widths)))
    print(f"(limit {args.limit} equations per kernel; times on this machine, one run each)")


if __name__ == "__main__":
    main()
