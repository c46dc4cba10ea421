"""Loops: first gradients of Python loops, compiled loops against handwritten Numba, JAX
and PyTorch, compile time against trip count, and the memory of tapes.

    python benchmarks/loops.py [--quick] [--baselines PYTHON] [--no-write]

Every first-call time is measured in a fresh process with an empty kernel cache (so
it includes Numba's import, tracing, the passes and the compile); warm numbers are
the best of several calls. ``--baselines`` names a Python that has JAX (and PyTorch)
installed, for the comparison rows (default: this one, skipped if they are missing):
``/tmp/venv-jax/bin/python`` on the project's machine, which has JAX 0.10.2,
PyTorch 2.13 and symgrad's dependencies.

The table is printed and written as the section "Loops (issue 16)" of
docs/benchmarks.md (up to the next ``## `` heading; the other sections are kept, as
benchmarks/run.py keeps this one), unless ``--no-write`` or ``--quick``. A full run
takes 10-20 minutes on an idle 2-core machine, most of it the cold compile of the
unrolled 50-step RNN (the "before" row).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/sections.py
import sections  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
SECTION = "## Loops (issue 16)"

COMMON = """
import json, os, resource, sys, time
t0 = time.perf_counter()
import numpy as np
sys.path.insert(0, {root!r})
import symgrad as sg
imported = time.perf_counter() - t0
H = 0.01
def rnn_python(h0, W, U, b, xs):
    h, loss = h0, 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
        loss = loss + np.sum(h * h)
    return loss
def rnn_scan(h0, W, U, b, xs):
    def cell(h, x):
        h = np.tanh(W @ h + U @ x + b)
        return h, np.sum(h * h)
    h, losses = sg.scan(cell, h0, xs)
    return np.sum(losses)
def euler(x0, p, n, checkpoint=None):
    def step(i, x):
        return x + H * (-x ** 3 + np.sin(p * x))
    return np.sum(sg.fori_loop(0, n, step, x0, checkpoint=checkpoint) ** 2)
rng = np.random.default_rng(0)
RNN = (rng.normal(size=8), rng.normal(size=(8, 8)) / 8, rng.normal(size=(8, 8)) / 8,
       rng.normal(size=8) / 8, rng.normal(size=(50, 8)))
X0 = np.linspace(0.1, 0.8, 8)
def best(f, k=5):
    ts = []
    for _ in range(k):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts)
def report(**kw):
    print(json.dumps(kw))
"""

FIRST = COMMON + """
g = sg.grad({fn}, argnums=(1,))
t = time.perf_counter(); g(*RNN); first = time.perf_counter() - t
spec = g._prepare(RNN, None)[0]
t = time.perf_counter()
ready = spec.kernel.wait() if hasattr(spec.kernel, "wait") else True
waited = time.perf_counter() - t
t = time.perf_counter(); g(*RNN); second = time.perf_counter() - t
report(first=first, imported=imported, waited=waited, second=second,
       loops=sum(e.prim.name == "loop" for e in spec.graph.eqns),
       eqns=len(spec.graph.eqns), **sg.compile_stats())
"""

EULER = COMMON + """
from numba import njit
def handwritten(cube):
    @njit(cache=False)
    def hand(x0, p, n, h):
        m = x0.shape[0]
        tape = np.empty((n, m))
        x = x0.copy()
        for i in range(n):
            tape[i] = x
            for j in range(m):
                x[j] = x[j] + h * (-cube(x[j]) + np.sin(p * x[j]))
        gx = 2.0 * x
        gp = 0.0
        for i in range(n - 1, -1, -1):
            for j in range(m):
                xj = tape[i, j]
                c = np.cos(p * xj)
                gp += gx[j] * h * c * xj
                gx[j] = gx[j] * (1.0 + h * (-3.0 * xj * xj + p * c))
        return gx, gp
    return hand
# x ** 3 as JAX and a C programmer write it (x*x*x), and as numpy computes it (C's pow; the
# two differ in the last bit for a quarter of all x; symgrad's vecmath.powi is the
# correctly rounded cube in practice, vectorized)
hand = handwritten(njit(lambda x: x * x * x))
hand_pow = handwritten(njit(lambda x: x ** 3.0))
n = {n}
g = sg.grad(euler, argnums=(0, 1), static_argnums=(3,))  # checkpoint: a static int
got = g(X0, 1.3, n)
want = hand(X0, 1.3, n, H)
err = max(float(np.max(np.abs(got[0] - want[0]))), abs(float(got[1] - want[1])))
hand_pow(X0, 1.3, n, H)
times = {{"symgrad": 1e9, "hand": 1e9, "hand_pow": 1e9}}
for _ in range(3):  # interleaved, so that other work on the machine hits all three alike
    times["symgrad"] = min(times["symgrad"], best(lambda: g(X0, 1.3, n)))
    times["hand"] = min(times["hand"], best(lambda: hand(X0, 1.3, n, H)))
    times["hand_pow"] = min(times["hand_pow"], best(lambda: hand_pow(X0, 1.3, n, H)))
report(**times, err=err)
"""

JAX = """
import json, time, numpy as np
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
H, n = 0.01, {n}
def loss(x0, p):
    x = jax.lax.fori_loop(0, n, lambda i, x: x + H * (-x ** 3 + jnp.sin(p * x)), x0)
    return jnp.sum(x ** 2)
g = jax.jit(jax.grad(loss, argnums=(0, 1)))
x0 = jnp.linspace(0.1, 0.8, 8)
t = time.perf_counter(); jax.block_until_ready(g(x0, 1.3)); first = time.perf_counter() - t
ts = []
for _ in range(5):
    t = time.perf_counter(); jax.block_until_ready(g(x0, 1.3)); ts.append(time.perf_counter() - t)
print(json.dumps({{"jax": min(ts), "jax_first": first}}))
"""

TORCH = """
import json, time, numpy as np, torch
torch.set_default_dtype(torch.float64)
H, n = 0.01, {n}
def run():
    x0 = torch.linspace(0.1, 0.8, 8, requires_grad=True)
    p = torch.tensor(1.3, requires_grad=True)
    x = x0
    for _ in range(n):
        x = x + H * (-x ** 3 + torch.sin(p * x))
    (x ** 2).sum().backward()
run()
t = time.perf_counter(); run(); print(json.dumps({{"torch": time.perf_counter() - t}}))
"""

COMPILE = COMMON + """
def fixed(x0, p):  # the trip count is a literal: a kernel of its own for each N
    return euler(x0, p, {n})
g = sg.grad(fixed, argnums=(0, 1))
g(X0, 1.3)
xs = np.ones(({n}, 8)) * 0.01
h = sg.grad(rnn_scan, argnums=(1,))
h(RNN[0], RNN[1], RNN[2], RNN[3], xs)
report(**sg.compile_stats())
"""

MEMORY = COMMON + """
n, k = {n}, {k}
g = sg.grad(euler, argnums=(0, 1), static_argnums=(3,))  # checkpoint: a static int
g(X0, 1.3, 10, k)  # compiled (or loaded), so that what follows is the run itself
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter(); g(X0, 1.3, n, k); seconds = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report(seconds=seconds, peak_mb=(peak - base) / 1024)
"""


#: what profiling the Euler kernel found (edited copies of ``sg.grad(euler).source(...)``
#: timed interleaved against the generated one); printed under the table
ANALYSIS = """\
**Where the Euler gradient's time goes** (profiled 2026-12-01: copies of the generated
kernel, `sg.grad(euler, ...).source(X0, 1.3, 100_000)`, edited one change at a time and timed
interleaved with it, best of 15; the machine was loaded, so the ratios are what count):

- Not the per-step overheads: storing the carry in the tape (`tape[i] = x`), the row view
  of the tape in the backward loop (`x_1 = d[i_1]`) and the carries' buffer swap cost
  nothing measurable (rewritten as element loops: 47.4 ms against 46.0 ms). The tape is
  allocated once per call (6.4 MB, 0.2 ms), nothing is allocated inside the loops, each
  direction's body is one fused loop, and Numba checks no bounds.
- `x ** 3` was a third of the kernel: numpy computes it as C's `pow(x, 3.0)`, a scalar libm
  call per element that also keeps LLVM from vectorizing the loop (73 ms, 47 ms with
  `x * x * x`). JAX and the handwritten loop compute `x * x * x`, which differs from numpy's
  `pow` in the last bit for a quarter of all x and is off the exact cube by up to 1.28 ulp
  (pow: 0.51; 2e5 samples in [0.5, 2]), so symgrad does not rewrite it that way.
- Built (2026-12-01): `vecmath.powi(x, n)`, which fused loops call for `pow` with a literal
  integer exponent in 3..8 (`x ** 3`, `x ** 3.0`, `np.power(x, 3)`): a double-double
  product chain (Dekker's TwoProduct, no FMA) rounded once, so it is the correctly rounded
  power in practice (at the points checked, it is where glibc's `pow` is not: they differ at
  about 1e-3 of all x); branch-free, so the loop is SIMD code. A loop that meets an argument
  whose power would leave [2**-960, 2**1020) runs again with libm, as `sin` and `cos` do
  beyond their range. The Euler gradient, timed before/after in one process, interleaved
  (best of 7, a loaded machine): 46-48 ms with `pow`, 31-34 ms with `powi`; the handwritten
  `x * x * x` loop took 37 ms in the same run. The row "the same with x**3.0" is the
  handwritten loop with C's `pow`.
- The backward loop adds `grad_p`'s term of every state into one scalar (`w += u`), a
  dependence between iterations that kept LLVM from vectorizing it (and the broadcast
  gradient of `benchmarks/run.py` the same way). Built (2026-12-01): a fused loop that calls
  vecmath and sums over its innermost axis stores the terms in a scratch row (made once per
  call) and adds them after the loop, in the same order, so the bits do not change
  (`tests/test_row_sums.py` compares with the kernel without it). Timed in one process,
  interleaved, best of 7 (a loaded machine): 20.5-22.9 ms without, 11.9-15.3 ms with.
"""


def child(code: str, cache: str | None = None, python: str = sys.executable,
          **env: str) -> dict:
    environ = {**os.environ, **env}
    environ.pop("NUMBA_CACHE_DIR", None)
    environ["SYMGRAD_CACHE_DIR"] = cache or tempfile.mkdtemp(prefix="symgrad-bench-loops-")
    done = subprocess.run([python, "-c", code], env=environ, capture_output=True, text=True,
                          timeout=3600)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def write_section(text: str, doc: Path = DOC) -> None:
    """Replace this script's section of ``doc`` (:func:`sections.write_section`)."""
    sections.write_section(SECTION, text, doc)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smaller sizes, fewer rows; nothing written")
    parser.add_argument("--baselines", default=sys.executable,
                        help="a Python with JAX and PyTorch, for the comparison rows")
    parser.add_argument("--no-write", dest="write", action="store_false",
                        help="print the section only")
    args = parser.parse_args(argv)
    command = "python benchmarks/loops.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    start, load_start = time.time(), os.getloadavg()
    common = {"root": str(ROOT)}
    rows = ["| measurement | result |", "|---|---|"]

    def row(what: str, result: str) -> None:
        rows.append(f"| {what} | {result} |")
        print(f"{what}: {result}", flush=True)

    # 1. first gradient of a 50-step 8x8 RNN, empty cache
    modes = [("Python loop, unrolled, compile first (before this work)",
              {"SYMGRAD_REROLL": "0", "SYMGRAD_TIERED": "0"}, "rnn_python"),
             ("Python loop, rerolled into a loop, compile first", {"SYMGRAD_TIERED": "0"},
              "rnn_python"),
             ("Python loop, default (rerolled, tiered)", {}, "rnn_python"),
             ("Python loop, unrolled, tiered", {"SYMGRAD_REROLL": "0"}, "rnn_python"),
             ("sg.scan, compile first", {"SYMGRAD_TIERED": "0"}, "rnn_scan"),
             ("sg.scan, default (tiered)", {}, "rnn_scan")]
    for what, env, fn in modes:
        r = child(FIRST.format(fn=fn, **common), **env)
        if "error" in r:
            row(f"RNN 50 steps 8x8, first gradient, empty cache: {what}", r["error"])
            continue
        row(f"RNN 50 steps 8x8, first gradient, empty cache: {what}",
            f"{r['first']:.2f} s (import {r['imported']:.2f} s; kernel ready after "
            f"{r['waited']:.2f} s more; {r['eqns']} equations, {r['loops']} loops; "
            f"{r['compiled']} compiled, {r['interpreted_calls']} interpreted)")
    cache = tempfile.mkdtemp(prefix="symgrad-bench-loops-warm-")
    child(FIRST.format(fn="rnn_scan", **common), cache, SYMGRAD_TIERED="0")
    r = child(FIRST.format(fn="rnn_scan", **common), cache, SYMGRAD_TIERED="0")
    row("RNN with sg.scan, fresh process, warm cache",
        f"{r['first']:.2f} s, {r['compiled']} compiles, {r['loaded_from_disk']} loaded")

    # 2. Euler: 8 states, 1e5 steps, gradient in x0 and p
    n = 10_000 if args.quick else 100_000
    r = child(EULER.format(n=n, **common), SYMGRAD_TIERED="0")
    if "error" not in r:
        row(f"Euler {n} steps, 8 states, gradient (x0, p): symgrad",
            f"{r['symgrad'] * 1e3:.2f} ms ({r['symgrad'] / r['hand']:.2f}x handwritten; "
            f"max difference {r['err']:.1e})")
        row(f"Euler {n} steps: handwritten Numba forward + adjoint (x*x*x)",
            f"{r['hand'] * 1e3:.2f} ms")
        row(f"Euler {n} steps: the same with x**3.0 (C's pow, as numpy)",
            f"{r['hand_pow'] * 1e3:.2f} ms")
    else:
        row("Euler: symgrad", r["error"])
    for name, code in (("JAX jit(grad) over lax.fori_loop", JAX), ("PyTorch eager", TORCH)):
        b = child(code.format(n=n), python=args.baselines)
        if "error" in b:
            row(f"Euler {n} steps: {name}", f"not run ({b['error'][:80]})")
        else:
            value = b.get("jax", b.get("torch"))
            extra = f" (first call {b['jax_first']:.2f} s)" if "jax_first" in b else ""
            row(f"Euler {n} steps: {name}", f"{value * 1e3:.2f} ms{extra}")

    # 3. compile time against the trip count
    for steps in ([100, 10_000] if args.quick else [100, 1_000, 10_000, 100_000, 1_000_000]):
        r = child(COMPILE.format(n=steps, **common), SYMGRAD_TIERED="0")
        if "error" in r:
            row(f"compile, trip count {steps}", r["error"])
            continue
        row(f"compile, trip count {steps} (Euler fori_loop + RNN scan, 2 kernels)",
            f"{r['compile_seconds']:.2f} s for {r['compiled']} kernels")

    # 4. tape memory at 1e6 steps
    n = 100_000 if args.quick else 1_000_000
    cache = tempfile.mkdtemp(prefix="symgrad-bench-loops-mem-")
    for k in ("None", "10", "100", "1000"):
        r = child(MEMORY.format(n=n, k=k, **common), cache, SYMGRAD_TIERED="0")
        if "error" in r:
            row(f"tape, {n} steps, checkpoint={k}", r["error"])
            continue
        carries = n if k == "None" else n // int(k) + int(k)
        row(f"Euler {n} steps, 8 states, checkpoint={k}",
            f"peak +{r['peak_mb']:.1f} MB (tape {carries * 8 * 8 / 2 ** 20:.2f} MB: "
            f"{carries} carries), {r['seconds'] * 1e3:.0f} ms")

    load_end = os.getloadavg()
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(start))
    text = "\n".join([
        SECTION, "",
        f"Generated by `{command}` on {when} in {time.time() - start:.0f} s (the options are "
        "documented at the top of benchmarks/loops.py); every row runs in a fresh process. "
        f"{os.cpu_count()} cores; load average (1, 5, 15 min) "
        f"{', '.join(f'{v:.1f}' for v in load_start)} at the start and "
        f"{', '.join(f'{v:.1f}' for v in load_end)} at the end (above about 1, other work "
        "shared the cores and the times are inflated, the cold compiles most).", "",
        *rows, "", *([] if args.quick else [ANALYSIS])])
    print(textwrap.indent(text, "  "))
    if args.write and not args.quick:
        write_section(text)
        print(f"wrote the section {SECTION[3:]!r} of {DOC.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
