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

Without ``--stages`` it measures every target of issue 26 (what a user waits for),
each in fresh processes with the default settings (tiered execution on) unless said:

    cold      first call on an empty cache (s after import; CPU s), the seconds the
              process took to end after its last statement (its compiles were in
              flight), compiles counted in it
    left      compiles a compile-first process (``SYMGRAD_TIERED=0``) then needs on that
              cache once the cold process's worker is done: 0 when what it compiled is
              exactly what real calls use
    warm      a second process: first call (s) and its compiles (target: 0, <= 0.3 s)
    ready     compile-first on another empty cache: the first call is the kernels' compile
              (target for the d = 100 Hessian: <= 4x JAX's first call); each kernel's
              compile seconds come from ``SYMGRAD_LOG_COMPILES=1`` (target: a compile over
              3 s takes <= 3x JAX's first call)
    JAX       ``jax.jit`` of the same transform's first call in a fresh process (float64)

then, compile-first in one process each, the compiles of six identical lambdas, of 24
threads calling ``sg.hvp`` at once, of 10 training steps whose loss reads its weights
from a closure, and of four processes on one empty cache (target: one compile each);
with ``--examples [NAME ...]``, each example (all by default) on an empty cache and
then warm (target: <= 2x warm + 8 s; exit <= 1 s). Each JSON result is printed as it
comes, then a markdown table; ``--json FILE`` and ``--markdown FILE`` write them.
"missed" compares wall seconds with the targets, which assume a quiet machine: under
load, read the CPU seconds beside them (the load average is in each row). Runtime: the
rows and counts about 10 min, six small examples 3 min more (2 cores at load 14); the
large examples (lenet, transformer_lm, unet_block, dask_logistic_regression) are slow
on an empty cache, so ``--examples`` takes names.

    python benchmarks/first_call.py --json first_call.json --markdown first_call.md
    python benchmarks/first_call.py --only hessian "six lambdas" --no-jax
    python benchmarks/first_call.py --only --examples mlp torch_classifier   # examples only
    python benchmarks/first_call.py --checkout /tmp/before    # a before column: another commit

Python's bytecode is cached, as it is for an installed package: the children
write it to a temporary ``PYTHONPYCACHEPREFIX``, filled by a first, untimed run
(with ``PYTHONDONTWRITEBYTECODE=1`` every import compiles symgrad's sources
again, which adds about 0.1 s to "import").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

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
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(cache), "PYTHONPYCACHEPREFIX": str(pycache),
           "SYMGRAD_TIERED": "0"}  # the compile on the calling thread, in stages
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
    parser.add_argument("--only", nargs="*", help="rows to run (default: all; none with "
                        "--only alone)")
    parser.add_argument("--examples", nargs="*", help="the examples too (default: all)")
    parser.add_argument("--no-jax", action="store_true", help="no JAX column")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--markdown", help="write the tables here")
    parser.add_argument("--checkout", help="measure the symgrad of this checkout (e.g. a "
                        "`git worktree add /tmp/before <commit>`), not the one importable here")
    opts = parser.parse_args()
    if opts.checkout:
        CHECKOUT.append(str(Path(opts.checkout).resolve()))
    if not opts.stages:
        return waits(opts)
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
def loglik(x, A, b):
    M = A + np.eye(x.shape[0]) * np.exp(x)
    _, logdet = np.linalg.slogdet(M)
    d = x - b
    return logdet + 0.5 * np.dot(d, A @ d)
rng = np.random.default_rng(0)
B = rng.normal(size=(100, 100))
A, xx, bb = B @ B.T / 100 + np.eye(100), 0.3 * rng.normal(size=100), rng.normal(size=100)
X, y = rng.standard_normal((16, 3)), rng.standard_normal(16)
params = {"W": rng.standard_normal(3), "scale": np.ones(1)}
def loss(b):  # the weights come from the closure, through elements and reductions
    W = params["W"]
    return np.mean((X @ W + b[0] * params["scale"][0] - y) ** 2) + 0.1 * np.sum(W * W) * b[0]
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
elif which == "hessian d=100":
    sg.hessian(loglik)(xx, A, bb)
elif which == "six lambdas":
    for _ in range(6):
        sg.grad(lambda x: np.sum(np.sin(x) * x))(x)
elif which == "24 hvp threads":
    threads = [threading.Thread(target=sg.hvp, args=(f, x, np.ones(5))) for _ in range(24)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
elif which == "training loop":
    g, b = sg.grad(loss), np.array([0.3])
    for _ in range(10):
        g(b)
        params["W"] = params["W"] - 0.1 * rng.standard_normal(3)  # a training step's update
stats["first call"] = time.perf_counter() - t
stats["first cpu"] = time.process_time() - cpu
stats["last statement"] = time.time()
"""

#: JAX's first call of the same functions (jit of the same transform, float64, CPU), in a
#: fresh process; the arrays are made (and JAX's backend started) before the clock starts
JAX = r"""
import json, sys, time
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
c = jnp.arange(1.0, 6.0)
x = jnp.linspace(0.1, 0.5, 5)
def f(x):
    return jnp.sum(jnp.sin(x) * c)
def loglik(x, A, b):
    M = A + jnp.eye(x.shape[0]) * jnp.exp(x)
    _, logdet = jnp.linalg.slogdet(M)
    d = x - b
    return logdet + 0.5 * jnp.dot(d, A @ d)
rng = np.random.default_rng(0)
B = rng.normal(size=(100, 100))
A, xx, bb = (jnp.asarray(v) for v in (B @ B.T / 100 + np.eye(100), 0.3 * rng.normal(size=100),
                                       rng.normal(size=100)))
which = sys.argv[1]
calls = {
    "grad": lambda: jax.jit(jax.grad(lambda x: jnp.mean(3 * (x + 2) ** 2)))(x),
    "hessian": lambda: jax.jit(jax.hessian(f))(x),
    "jacfwd": lambda: jax.jit(jax.jacfwd(lambda x: jnp.sin(x) * c))(x),
    "hvp": lambda: jax.jit(lambda x, v: jax.jvp(jax.grad(f), (x,), (v,))[1])(x, jnp.ones(5)),
    "vmap(grad)": lambda: jax.jit(jax.vmap(jax.grad(f)))(jnp.ones((3, 5))),
    "Tensor hessian": lambda: jax.jit(jax.hessian(f))(x),
    "hessian d=100": lambda: jax.jit(jax.hessian(loglik))(xx, A, bb),
}
t, cpu = time.perf_counter(), time.process_time()
jax.block_until_ready(calls[which]())
print(json.dumps({"first call": time.perf_counter() - t, "first cpu": time.process_time() - cpu}))
"""

#: an example run as ``python examples/<name>.py``; the time of its last statement
EXAMPLE = r"""
import json, runpy, sys, time
path = sys.argv[1]
sys.argv = [path]
try:
    runpy.run_path(path, run_name="__main__")
finally:
    import symgrad as sg
    print("\n" + json.dumps({"last statement": time.time(), **sg.compile_stats()}), flush=True)
"""

#: rows measured cold, warm and against JAX (the small ones: "first result <= 1 s")
ROWS = ["grad", "hessian", "jacfwd", "hvp", "vmap(grad)", "Tensor hessian", "hessian d=100"]
SMALL = ROWS[:-1]
#: rows whose compiles are counted, compile-first, in one process (target: one compile)
COUNTED = ["six lambdas", "24 hvp threads", "training loop"]
COMPILED = re.compile(r"compiled k_(\S+) \((.*)\): (\d+) lines, (\d+) loops, in ([\d.]+) s")


#: ``--checkout DIR``: the symgrad the measured processes import (for a "before" column)
CHECKOUT: list[str] = []


def _env(cache: Path, tiered: bool, log: bool = False) -> dict:
    path = os.pathsep.join([*CHECKOUT, os.environ.get("PYTHONPATH", "")]).strip(os.pathsep)
    env = {**os.environ, "PYTHONPATH": path, "SYMGRAD_CACHE_DIR": str(cache),
           "SYMGRAD_TIERED": "1" if tiered else "0", "SYMGRAD_LOG_COMPILES": "1" if log else "0",
           "JAX_PLATFORMS": "cpu"}
    env.pop("NUMBA_CACHE_DIR", None)
    return env


def user(which: str, cache: Path, tiered: bool = True, start: bool = False,
         log: bool = False) -> Any:
    process = subprocess.Popen([sys.executable, "-c", USER, which], env=_env(cache, tiered, log),
                               text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return process if start else finish(process)


def finish(process: Any, timeout: float = 1800) -> dict:
    out, err = process.communicate(timeout=timeout)
    ended = time.time()
    if process.returncode:
        raise SystemExit(err)
    result = json.loads(out.splitlines()[-1])
    result["exit"] = ended - result["last statement"]
    result["kernels compiled"] = [{"key": m[0][:12], "what": m[1], "lines": int(m[2]),
                                   "seconds": float(m[4])} for m in COMPILED.findall(err)]
    return result


def jax_first(which: str) -> dict | None:
    """JAX's first call of ``which`` in a fresh process, seconds and CPU seconds (None:
    JAX not installed)."""
    done = subprocess.run([sys.executable, "-c", JAX, which], env=_env(Path("."), True),
                          capture_output=True, text=True, timeout=600)
    if done.returncode:
        if "No module named 'jax'" in done.stderr:
            return None
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.splitlines()[-1])


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


def load() -> float:
    return round(os.getloadavg()[0], 1)


def measure_row(which: str, with_jax: bool) -> dict:
    """Cold (tiered, empty cache), what it left for the next process (compile-first on that
    cache once its worker is done), warm (a second process), the kernel ready (compile-first
    on another empty cache, compiles logged with their seconds) and JAX's first call."""
    row: dict[str, Any] = {"row": which, "load": load()}
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as other:
        cold = user(which, Path(cache))
        quiet(Path(cache))
        fill = user(which, Path(cache), tiered=False)
        warm = user(which, Path(cache))
        ready = user(which, Path(other), tiered=False, log=True)
    row.update({
        "cold first": cold["first call"], "cold cpu": cold["first cpu"], "exit": cold["exit"],
        "cold compiles": cold["compiled"], "left": fill["compiled"],
        "warm first": warm["first call"], "warm cpu": warm["first cpu"],
        "warm compiles": warm["compiled"], "ready": ready["first call"],
        "ready cpu": ready["first cpu"], "kernels": ready["kernels compiled"]})
    jax = jax_first(which) if with_jax else None
    row["jax first"], row["jax cpu"] = (jax["first call"], jax["first cpu"]) if jax else (None,
                                                                                        None)
    row["misses"] = misses(row)
    return row


def misses(row: dict) -> list[str]:
    """The issue's targets this row misses."""
    out = []
    if row["row"] in SMALL and row["cold first"] > 1.0:
        out.append("cold first > 1 s")
    if row["exit"] > 1.0:
        out.append("exit > 1 s")
    if row["left"]:
        out.append("compiles left for the next process")
    if row["warm compiles"]:
        out.append("warm compiles")
    if row["row"] in SMALL and row["warm first"] > 0.3:
        out.append("warm first > 0.3 s")
    jax = row["jax first"]
    if jax is not None:
        slow = [k["seconds"] for k in row["kernels"] if k["seconds"] > 3.0]
        if any(s > 3 * jax for s in slow):
            out.append("a compile > 3 s and > 3x JAX")
        if row["row"] == "hessian d=100" and row["ready"] > 4 * jax:
            out.append("kernel ready > 4x JAX")
    return out


def measure_counted(which: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        row = {"row": which, "load": load()}
        if which == "four processes":
            started = [user("hessian", Path(cache), tiered=False, start=True) for _ in range(4)]
            each = [finish(p)["compiled"] for p in started]
            row.update({"compiles": sum(each), "each": each})
        else:
            row["compiles"] = user(which, Path(cache), tiered=False)["compiled"]
    row["misses"] = [] if row["compiles"] == 1 else ["more than one compile"]
    return row


def example_names(chosen: list[str]) -> list[str]:
    every = sorted(p.stem for p in EXAMPLES.glob("*.py"))
    if not chosen:
        return every
    unknown = sorted(set(chosen) - set(every))
    if unknown:
        raise SystemExit(f"no such example: {', '.join(unknown)} (examples: {', '.join(every)})")
    return chosen


def run_example(name: str, cache: Path) -> dict:
    started = time.time()
    process = subprocess.Popen([sys.executable, "-c", EXAMPLE, str(EXAMPLES / f"{name}.py")],
                               env=_env(cache, True), text=True, cwd=EXAMPLES.parent,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    result = finish(process)
    result["run"] = result["last statement"] - started
    return result


def measure_example(name: str) -> dict:
    """An example on an empty cache, then warm (its kernels compiled, the worker done)."""
    row: dict[str, Any] = {"row": f"examples/{name}.py", "load": load()}
    with tempfile.TemporaryDirectory() as cache:
        cold = run_example(name, Path(cache))
        quiet(Path(cache))
        warm = run_example(name, Path(cache))
    row.update({"cold run": cold["run"], "cold exit": cold["exit"],
                "cold compiles": cold["compiled"], "warm run": warm["run"],
                "warm exit": warm["exit"], "warm compiles": warm["compiled"]})
    row["misses"] = [m for m, bad in [
        ("cold > 2x warm + 8 s", cold["run"] > 2 * warm["run"] + 8),
        ("exit > 1 s", max(cold["exit"], warm["exit"]) > 1.0),
        ("warm compiles", warm["compiled"] > 0)] if bad]
    return row


def _s(v: float | None) -> str:
    return "" if v is None else f"{v:.2f}"


def markdown(results: dict) -> str:
    lines = ["| row | load | cold first s (cpu) | exit s | compiles in cold / left | warm first s "
             "(cpu) | warm compiles | ready s (cpu), compile-first | compiles > 1 s (s) | JAX "
             "first s (cpu) | missed |", "|" + "---|" * 11]
    for r in results["rows"]:
        slow = ", ".join(f"{k['seconds']:.1f}" for k in r["kernels"] if k["seconds"] > 1.0)
        lines.append(
            f"| {r['row']} | {r['load']} | {r['cold first']:.2f} ({r['cold cpu']:.2f}) | "
            f"{r['exit']:.2f} | {r['cold compiles']} / {r['left']} | {r['warm first']:.2f} "
            f"({r['warm cpu']:.2f}) | {r['warm compiles']} | {r['ready']:.2f} "
            f"({r['ready cpu']:.2f}), {len(r['kernels'])} compiled | {slow} | "
            f"{_s(r['jax first'])} ({_s(r['jax cpu'])}) | "
            f"{'; '.join(r['misses']) or 'met'} |")
    if results["counted"]:
        lines += ["", "| compile-first, one empty cache | load | compiles | missed |",
                  "|---|---|---|---|"]
        for r in results["counted"]:
            each = f" {r['each']}" if "each" in r else ""
            lines.append(f"| {r['row']} | {r['load']} | {r['compiles']}{each} | "
                         f"{'; '.join(r['misses']) or 'met'} |")
    if results["examples"]:
        lines += ["", "| example | load | empty cache: to last statement s (exit s, compiles) | "
                  "warm: s (exit s, compiles) | missed |", "|---|---|---|---|---|"]
        for r in results["examples"]:
            lines.append(
                f"| {r['row']} | {r['load']} | {r['cold run']:.2f} ({r['cold exit']:.2f}, "
                f"{r['cold compiles']}) | {r['warm run']:.2f} ({r['warm exit']:.2f}, "
                f"{r['warm compiles']}) | {'; '.join(r['misses']) or 'met'} |")
    return "\n".join(lines)


def waits(opts: argparse.Namespace) -> None:
    only = opts.only
    began = time.time()
    results: dict[str, Any] = {"python": sys.version.split()[0], "cpus": os.cpu_count(),
                               "rows": [], "counted": [], "examples": []}
    if only is None or "import only" in only:
        with tempfile.TemporaryDirectory() as cache:
            results["import only exit"] = user("import only", Path(cache))["exit"]
        print(f"import only: exit {results['import only exit']:.2f} s (the floor of the exit "
              "column: a process that imports numpy, symgrad and numba, then ends)", flush=True)
    for which in ROWS:
        if only is None or which in only:
            results["rows"].append(measure_row(which, not opts.no_jax))
            print(json.dumps(results["rows"][-1]), flush=True)
    for which in [*COUNTED, "four processes"]:
        if only is None or which in only:
            results["counted"].append(measure_counted(which))
            print(json.dumps(results["counted"][-1]), flush=True)
    if opts.examples is not None:
        for name in example_names(opts.examples):
            results["examples"].append(measure_example(name))
            print(json.dumps(results["examples"][-1]), flush=True)
    results["seconds"] = time.time() - began
    table = markdown(results)
    print(f"\n{table}\n\n({results['seconds']:.0f} s; load average at the end {load()})")
    if opts.json:
        Path(opts.json).write_text(json.dumps(results, indent=1) + "\n")
    if opts.markdown:
        Path(opts.markdown).write_text(table + "\n")


if __name__ == "__main__":
    main()
