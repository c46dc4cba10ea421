"""First-call latency of a gradient in a fresh process: cold cache, then warm.

Each measurement runs in a fresh ``python`` process. "cold" uses an empty
kernel cache directory, so Numba compiles; "warm" runs the same script again
on the cache the cold run filled, so the kernel is loaded from disk. The first
call is split into:

    import      ``import numpy`` and ``import symgrad``
    build       trace, adjoint, optimize, codegen (the call until it asks for a kernel)
    numba       ``import numba`` (the first kernel module imports it)
    load        publishing the source, importing the kernel module (``@njit``)
    compile     the kernel's first call: Numba compiles, or loads machine code
    rest        the remainder of the first call (argument checks, result)

followed by the whole first call and the second call. Functions: the seed
gradient (n = 4) and the gradient of a two-layer MLP's loss in its 4 parameters.

Run:  python benchmarks/first_call.py [--repeat 3]
(medians over ``--repeat`` cold/warm pairs, each pair on a fresh cache dir).
Python's bytecode is cached, as it is for an installed package: the children
write it to a temporary ``PYTHONPYCACHEPREFIX``, filled by a first, untimed run
(with ``PYTHONDONTWRITEBYTECODE=1`` every import compiles symgrad's sources
again, which adds about 0.1 s to "import").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import symgrad as sg
t_import = time.perf_counter() - t0
from symgrad import api
from symgrad.backend import compile as kernels

marks = {}
load = kernels.load
def timed_load(source):  # the first load of the call (api asks again for the same kernel)
    marks.setdefault("build_end", time.perf_counter())
    import numba  # noqa: F401 -- timed apart from the kernel module that imports it
    marks.setdefault("numba_end", time.perf_counter())
    kernel = load(source)
    marks.setdefault("load_end", time.perf_counter())
    return kernel
kernels.load = timed_load
first_call = kernels.Kernel.__call__
def timed_call(self, *args):
    t = time.perf_counter()
    try:
        return first_call(self, *args)
    finally:
        marks.setdefault("compile", time.perf_counter() - t)
kernels.Kernel.__call__ = timed_call

def seed(x):
    return np.mean(3 * (x + 2) ** 2)

def mlp(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    return np.mean((h @ w2 + b2 - y) ** 2)

rng = np.random.default_rng(0)
which = sys.argv[1]
if which == "seed":
    g, args = sg.grad(seed), (rng.random(4),)
else:
    g = sg.grad(mlp, argnums=(0, 1, 2, 3))
    args = (rng.standard_normal((8, 16)), np.zeros(16), rng.standard_normal((16, 1)),
            np.zeros(1), rng.standard_normal((32, 8)), rng.standard_normal((32, 1)))
t = time.perf_counter()
g(*args)
marks["first_end"] = time.perf_counter()
t2 = time.perf_counter()
g(*args)
second = time.perf_counter() - t2
first = marks["first_end"] - t
build = marks["build_end"] - t
numba = marks["numba_end"] - marks["build_end"]
load_ = marks["load_end"] - marks["numba_end"]
print(json.dumps({
    "import": t_import, "build": build, "numba": numba, "load": load_,
    "compile": marks["compile"], "rest": first - build - numba - load_ - marks["compile"],
    "first call": first, "second call": second, **kernels.compile_stats()}))
"""

COLUMNS = ["import", "build", "numba", "load", "compile", "rest", "first call", "second call"]


def run(which: str, cache: Path, pycache: Path) -> dict:
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(cache), "PYTHONPYCACHEPREFIX": str(pycache)}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, "-c", CHILD, which], env=env, capture_output=True,
                          text=True, timeout=600)
    if done.returncode:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    print(f"{'function':8} {'cache':5} " + " ".join(f"{c:>11}" for c in COLUMNS)
          + "  compiled/loaded   (ms, median)")
    pycache = Path(tempfile.mkdtemp(prefix="symgrad-pycache-"))
    for which in ("seed", "mlp"):
        with tempfile.TemporaryDirectory() as cache:
            run(which, Path(cache), pycache)  # untimed: fills the bytecode cache
        runs: dict[str, list[dict]] = {"cold": [], "warm": []}
        for _ in range(opts.repeat):
            with tempfile.TemporaryDirectory() as cache:
                runs["cold"].append(run(which, Path(cache), pycache))
                runs["warm"].append(run(which, Path(cache), pycache))
        for state, results in runs.items():
            times = " ".join(f"{statistics.median(r[c] for r in results) * 1e3:11.1f}"
                             for c in COLUMNS)
            counts = f"{results[-1]['compiled']}/{results[-1]['loaded_from_disk']}"
            print(f"{which:8} {state:5} {times}  {counts:>15}")
    shutil.rmtree(pycache, ignore_errors=True)


if __name__ == "__main__":
    main()
