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

Run:  python benchmarks/first_call.py --stages [--repeat 3]
(medians over ``--repeat`` cold/warm pairs, each pair on a fresh cache dir).

Without ``--stages`` it measures what a user waits for (issue 26), each row in
fresh processes with the default settings (tiered execution on):

    cold      first call on an empty cache (s, after import), the seconds the process
              took to end after its last statement, compiles counted in it at exit
    fill      compiles a compile-first process (``SYMGRAD_TIERED=0``) then needs on that
              cache: 0 when what the cold process compiled (in the background, or in a
              worker that outlives it) is exactly what real calls use
    warm      a second process: first call (s) and its compiles (target: 0, <= 0.3 s)

and, compile-first, the compiles of six identical lambdas in one process, 24
threads calling ``sg.hvp`` at once, and four processes on one empty cache
(target: one compile each).
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
import time
from pathlib import Path
from typing import Any

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import symgrad as sg
t_import = time.perf_counter() - t0
from symgrad.transforms import api
from symgrad.backend.numba import compile as kernels

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
    parser.add_argument("--stages", action="store_true", help="the first call in stages")
    parser.add_argument("--only", nargs="*", help="rows to run (default: all)")
    opts = parser.parse_args()
    if not opts.stages:
        return waits(opts.only)
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


USER = r"""
import atexit, json, os, sys, threading, time, weakref
weakref.finalize._registered_with_atexit = True  # no finalizers at exit: counts stay single
import numpy as np
import symgrad as sg
import numba  # noqa: F401 -- imported by the first kernel anyway; "import only" includes it
stats = {}
atexit.register(lambda: print(json.dumps({**stats, **sg.compile_stats()}), flush=True))
c = np.arange(1.0, 6.0)
x = np.linspace(0.1, 0.5, 5)
def f(x):
    return np.sum(np.sin(x) * c)
which = sys.argv[1]
t, cpu = time.perf_counter(), time.process_time()
if which == "import only":
    pass
elif which == "grad":
    sg.grad(lambda x: np.mean(3 * (x + 2) ** 2))(x)
elif which == "hessian":
    sg.hessian(f)(x)
elif which == "jacfwd":
    sg.jacfwd(lambda x: np.sin(x) * c)(x)
elif which == "hvp":
    sg.hvp(f, x, np.ones(5))
elif which == "vmap(grad)":
    sg.vmap(sg.grad(f))(np.ones((3, 5)))
elif which == "Tensor hessian":
    import symgrad as torch
    torch.autograd.functional.hessian(lambda t: (t.sin() * torch.tensor(c)).sum(),
                                      torch.tensor(x))
elif which == "six lambdas":
    for _ in range(6):
        sg.grad(lambda x: np.sum(np.sin(x) * x))(x)
elif which == "24 hvp threads":
    threads = [threading.Thread(target=sg.hvp, args=(f, x, np.ones(5))) for _ in range(24)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
stats["first call"] = time.perf_counter() - t
stats["first cpu"] = time.process_time() - cpu
stats["last statement"] = time.time()
"""

ROWS = ["grad", "hessian", "jacfwd", "hvp", "vmap(grad)", "Tensor hessian"]
COUNTED = ["six lambdas", "24 hvp threads"]


def user(which: str, cache: Path, tiered: bool = True, start: bool = False) -> Any:
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(cache), "SYMGRAD_TIERED": "1" if tiered else "0"}
    env.pop("NUMBA_CACHE_DIR", None)
    process = subprocess.Popen([sys.executable, "-c", USER, which], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return process if start else finish(process)


def finish(process: Any) -> dict:
    out, err = process.communicate(timeout=1200)
    ended = time.time()
    if process.returncode:
        raise SystemExit(err)
    result = json.loads(out.splitlines()[-1])
    result["exit"] = ended - result["last statement"]
    return result


def quiet(cache: Path) -> None:
    """Wait until no compile worker of ``cache`` runs (a worker finishes the compile in
    hand after its process ended; code without workers finished before it ended)."""
    mark = f"SYMGRAD_CACHE_DIR={cache}".encode()
    while True:
        busy = False
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                if b"symgrad.backend.numba.worker" in (proc / "cmdline").read_bytes() \
                        and mark in (proc / "environ").read_bytes().split(b"\0"):
                    busy = True
            except OSError:
                continue
        if not busy:
            return
        time.sleep(0.25)


def waits(only: list[str] | None) -> None:
    print(f"{'':16} {'cold first':>10} {'(cpu)':>6} {'exit':>6} {'compiles':>8} {'fill':>5} "
          f"{'warm first':>10} {'(cpu)':>6} {'compiles':>8}   (seconds)")
    if not only or "import only" in only:
        with tempfile.TemporaryDirectory() as cache:
            got = user("import only", Path(cache))
            print(f"{'import only':16} {'':10} {'':6} {got['exit']:6.2f}   (the floor: a "
                  "process that imports numpy, symgrad and numba, then ends)", flush=True)
    for which in ROWS:
        if only and which not in only:
            continue
        with tempfile.TemporaryDirectory() as cache:
            cold = user(which, Path(cache))
            quiet(Path(cache))
            fill = user(which, Path(cache), tiered=False)
            warm = user(which, Path(cache))
            print(f"{which:16} {cold['first call']:10.2f} {cold['first cpu']:6.2f} "
                  f"{cold['exit']:6.2f} {cold['compiled']:8d} {fill['compiled']:5d} "
                  f"{warm['first call']:10.2f} {warm['first cpu']:6.2f} {warm['compiled']:8d}",
                  flush=True)
    for which in COUNTED:
        if only and which not in only:
            continue
        with tempfile.TemporaryDirectory() as cache:
            got = user(which, Path(cache), tiered=False)
            print(f"{which:16} compiles {got['compiled']} (compile-first, one process)",
                  flush=True)
    if not only or "four processes" in only:
        with tempfile.TemporaryDirectory() as cache:
            started = [user("hessian", Path(cache), tiered=False, start=True) for _ in range(4)]
            got = [finish(p)["compiled"] for p in started]
            print(f"{'four processes':16} compiles {sum(got)} {got} (compile-first, "
                  "one empty cache)", flush=True)


if __name__ == "__main__":
    main()
