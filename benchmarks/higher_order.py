"""Second-order and batched derivatives (issue 15): symgrad against JAX, PyTorch and numpy.

Run:  python benchmarks/higher_order.py [--quick] [--no-write] [--rounds 7] [--calls 5]

in a Python that has JAX (CPU) and PyTorch besides symgrad, e.g. the separate venv
``python -m venv /tmp/venv-jax && . /tmp/venv-jax/bin/activate && pip install jax
jaxlib numpy numba scipy sympy platformdirs torch==2.13.0 && pip install -e .``
(a framework that is missing is left out of the tables, and the report says so).
Writes the section "Higher-order derivatives (issue 15)" of docs/benchmarks.md (the
other sections are kept) unless ``--no-write``; ``--quick`` is a smoke run on tiny
sizes that writes nothing.

Problems:

    hvp          Rosenbrock, n = 10**6: ``sg.hvp(f, x, v)`` against one ``sg.grad(f)(x)``,
                 JAX ``jit(x, v -> jvp(grad(f), (x,), (v,))[1])``, PyTorch
                 ``torch.func.jvp(torch.func.grad(f))`` and double backward
                 (``autograd.grad(g, x, v)`` of ``g = autograd.grad(f, x, create_graph=True)``),
                 and the handwritten numpy H·v
    hessian      ``logdet(A + diag(exp(x))) + (x-b)ᵀA(x-b)/2`` in d = 100 variables (slogdet):
                 ``sg.hessian(f)`` against JAX ``jit(hessian(f))``, ``torch.func.hessian`` and
                 the handwritten numpy Hessian ``diag(e·diag(M⁻¹)) - (e eᵀ)∘(M⁻¹)² + A``
    per-example  logistic regression, X 10**4 x 100: ``sg.vmap(sg.grad(loss), in_axes=(None, 0,
                 0))`` against handwritten numpy ``X * (p - y)[:, None]``, JAX
                 ``jit(vmap(grad(loss), in_axes=(None, 0, 0)))`` and ``torch.func.vmap(grad)``

Before anything is timed, every implementation's result is compared with the
handwritten numpy one (an independent formula; rtol 1e-9): a mismatch stops the
run. JAX runs in float64 (``jax_enable_x64``), PyTorch on float64 tensors.
symgrad compiles with tiered execution off (``SYMGRAD_TIERED=0``: the first call
compiles, as a benchmark should see it) into a new, empty kernel cache, so its
first call is a cold compile; JAX's first call is its trace and XLA compile;
both are reported as compile time. Then every implementation is called once
more (warm) and timed in ``--rounds`` interleaved rounds (the implementations
take turns, in a rotated order each round), each round the median of
``--calls`` calls (``time.perf_counter``, garbage collection off); the tables
give the median over rounds and its ratio to the baseline.
"""

from __future__ import annotations

import os

os.environ.setdefault("SYMGRAD_TIERED", "0")  # before symgrad reads its config

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib.metadata  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import expit  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this worktree's symgrad, whatever is installed

import symgrad as sg  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/sections.py
import sections  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
SECTION = "## Higher-order derivatives (issue 15)"
RTOL = 1e-9

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:  # pragma: no cover - depends on the environment
    jax = jnp = None
try:
    import torch
    import torch.func
except ImportError:  # pragma: no cover
    torch = None

# ---------------------------------------------------------------------------
# the functions, each in numpy (traced by symgrad), jax.numpy and torch


def rosenbrock(x, xp=np):
    return xp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock_hvp_numpy(x, v):
    """H(x)·v by hand: H is tridiagonal."""
    hv = np.zeros_like(x)
    a, b, va, vb = x[:-1], x[1:], v[:-1], v[1:]
    hv[:-1] = (1200 * a * a - 400 * b + 2) * va - 400 * a * vb
    hv[1:] += 200 * vb - 400 * a * va
    return hv


def rosenbrock_grad_numpy(x):
    r = x[1:] - x[:-1] ** 2
    g = np.zeros_like(x)
    g[1:] = 200 * r
    g[:-1] += -400 * x[:-1] * r - 2 * (1 - x[:-1])
    return g


def loglik(x, A, b):
    """logdet(A + diag(exp(x))) + (x-b)ᵀA(x-b)/2 (symgrad has no np.diag: eye * row)."""
    M = A + np.eye(x.shape[0]) * np.exp(x)
    _, logdet = np.linalg.slogdet(M)
    d = x - b
    return logdet + 0.5 * np.dot(d, A @ d)


def loglik_jax(x, A, b):
    _, logdet = jnp.linalg.slogdet(A + jnp.diag(jnp.exp(x)))
    d = x - b
    return logdet + 0.5 * jnp.dot(d, A @ d)


def loglik_torch(x, A, b):
    _, logdet = torch.linalg.slogdet(A + torch.diag(torch.exp(x)))
    d = x - b
    return logdet + 0.5 * torch.dot(d, A @ d)


def loglik_hessian_numpy(x, A, b):
    """d²/dxᵢdxⱼ logdet M = δᵢⱼ eᵢ (M⁻¹)ᵢᵢ - eᵢ eⱼ (M⁻¹)ᵢⱼ², e = exp(x); plus A."""
    e = np.exp(x)
    Minv = np.linalg.inv(A + np.diag(e))
    return np.diag(e * np.diag(Minv)) - np.outer(e, e) * Minv**2 + A


def logistic(w, xi, yi, xp=np):
    """One example's loss: log(1 + exp(z)) - y z, z = x·w."""
    z = xp.dot(xi, w)
    return xp.logaddexp(0.0, z) - yi * z


def logistic_torch(w, xi, yi):
    z = torch.dot(xi, w)
    return torch.logaddexp(torch.zeros_like(z), z) - yi * z


def per_example_numpy(w, X, y):
    return X * (expit(X @ w) - y)[:, None]


# ---------------------------------------------------------------------------
# problems: arguments, the reference, and the implementations (name -> zero-argument call)


@dataclass
class Problem:
    name: str
    size: str
    baseline: str  # the implementation the ratios divide by
    implementations: dict[str, Callable[[], Any]]
    reference: Callable[[], np.ndarray]
    #: references of rows that compute something else (the gradient rows of ``hvp``)
    references: dict[str, Callable[[], np.ndarray]] = field(default_factory=dict)
    compile_seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _jax_call(f: Callable, *args: Any) -> Callable[[], np.ndarray]:
    jargs = [jnp.asarray(a) for a in args]
    return lambda: np.asarray(f(*jargs).block_until_ready())


def _torch_args(*args: Any) -> list:
    return [torch.from_numpy(np.ascontiguousarray(a)) for a in args]


def hvp_problem(n: int, rng: np.random.Generator, backend: str = "numba") -> Problem:
    x, v = rng.uniform(-1.5, 1.5, size=n), rng.normal(size=n)
    grad = sg.grad(rosenbrock, backend=backend)
    impls: dict[str, Callable[[], Any]] = {
        "symgrad hvp": lambda: sg.hvp(rosenbrock, x, v, backend=backend),
        "symgrad grad": lambda: grad(x),
        "numpy hvp (by hand)": lambda: rosenbrock_hvp_numpy(x, v),
    }
    if jax is not None:
        fj = functools_partial(rosenbrock, xp=jnp)
        impls["jax jit(jvp(grad))"] = _jax_call(
            jax.jit(lambda x, v: jax.jvp(jax.grad(fj), (x,), (v,))[1]), x, v)
        impls["jax jit(grad)"] = _jax_call(jax.jit(jax.grad(fj)), x)
    if torch is not None:
        ft = functools_partial(rosenbrock, xp=torch)
        tx, tv = _torch_args(x, v)
        impls["torch.func jvp(grad)"] = lambda: torch.func.jvp(
            torch.func.grad(ft), (tx,), (tv,))[1].numpy()

        def double_backward():
            xr = tx.detach().requires_grad_()
            (g,) = torch.autograd.grad(ft(xr), xr, create_graph=True)
            return torch.autograd.grad(g, xr, tv)[0].numpy()
        impls["torch double backward"] = double_backward
        impls["torch grad"] = lambda: torch.func.grad(ft)(tx).numpy()
    references = {"symgrad grad": lambda: rosenbrock_grad_numpy(x),
                  "jax jit(grad)": lambda: rosenbrock_grad_numpy(x),
                  "torch grad": lambda: rosenbrock_grad_numpy(x)}
    return Problem("hvp", f"Rosenbrock, n = {n:,}", "symgrad grad", impls,
                   lambda: rosenbrock_hvp_numpy(x, v), references)


def hessian_problem(d: int, rng: np.random.Generator, backend: str = "numba") -> Problem:
    B = rng.normal(size=(d, d))
    A = B @ B.T / d + np.eye(d)
    x, b = 0.3 * rng.normal(size=d), rng.normal(size=d)
    hess = sg.hessian(loglik, backend=backend)
    impls: dict[str, Callable[[], Any]] = {
        "symgrad hessian": lambda: hess(x, A, b),
        "numpy Hessian (by hand)": lambda: loglik_hessian_numpy(x, A, b),
    }
    if jax is not None:
        impls["jax jit(hessian)"] = _jax_call(jax.jit(jax.hessian(loglik_jax)), x, A, b)
    if torch is not None:
        targs = _torch_args(x, A, b)
        impls["torch.func hessian"] = lambda: torch.func.hessian(loglik_torch)(*targs).numpy()
    return Problem("hessian", f"logdet + quadratic, d = {d}", "symgrad hessian", impls,
                   lambda: loglik_hessian_numpy(x, A, b))


def per_example_problem(n: int, d: int, rng: np.random.Generator,
                        backend: str = "numba") -> Problem:
    X = rng.normal(size=(n, d))
    w = 0.1 * rng.normal(size=d)
    y = (rng.random(n) < expit(X @ rng.normal(size=d))).astype(np.float64)
    pe = sg.vmap(sg.grad(logistic), in_axes=(None, 0, 0), backend=backend)
    impls: dict[str, Callable[[], Any]] = {
        "symgrad vmap(grad)": lambda: pe(w, X, y),
        "numpy X*(p-y)[:, None]": lambda: per_example_numpy(w, X, y),
    }
    if jax is not None:
        fj = functools_partial(logistic, xp=jnp)
        impls["jax jit(vmap(grad))"] = _jax_call(
            jax.jit(jax.vmap(jax.grad(fj), in_axes=(None, 0, 0))), w, X, y)
    if torch is not None:
        targs = _torch_args(w, X, y)
        mapped = torch.func.vmap(torch.func.grad(logistic_torch), in_dims=(None, 0, 0))
        impls["torch.func vmap(grad)"] = lambda: mapped(*targs).numpy()
    return Problem("per-example", f"logistic regression, {n:,} x {d}",
                   "numpy X*(p-y)[:, None]", impls, lambda: per_example_numpy(w, X, y))


def functools_partial(f: Callable, **kwargs: Any) -> Callable:
    return lambda *args: f(*args, **kwargs)


# ---------------------------------------------------------------------------
# checking and timing


def check(problem: Problem, name: str, got: Any) -> None:
    """SystemExit unless ``got`` agrees with the problem's reference."""
    want = problem.references.get(name, problem.reference)()
    got = np.asarray(got)
    scale = np.max(np.abs(want))
    if got.shape != want.shape or not np.allclose(got, want, rtol=RTOL, atol=RTOL * scale):
        error = np.max(np.abs(got - want)) if got.shape == want.shape else "shape"
        raise SystemExit(f"{problem.name}: {name}'s result differs from the handwritten "
                         f"numpy one (max error {error}, shape {got.shape} vs {want.shape})")


def first_calls(problem: Problem) -> None:
    """Each implementation's first call (compile time for symgrad and JAX), checked."""
    for name, run in problem.implementations.items():
        t0 = time.perf_counter()
        got = run()
        problem.compile_seconds[name] = time.perf_counter() - t0
        check(problem, name, got)
        check(problem, name, run())  # the warm call too (a compiled kernel, not a tier)


def interleaved(implementations: dict[str, Callable[[], Any]], rounds: int,
                calls: int) -> dict[str, float]:
    """The median over ``rounds`` rounds of each implementation's median call time; the
    implementations take turns within a round, in an order rotated every round."""
    names = list(implementations)
    per_round: dict[str, list[float]] = {name: [] for name in names}
    gc.collect()
    gc.disable()
    try:
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                run, times = implementations[name], []
                for _ in range(calls):
                    t0 = time.perf_counter()
                    run()
                    times.append(time.perf_counter() - t0)
                per_round[name].append(statistics.median(times))
    finally:
        gc.enable()
    return {name: statistics.median(ts) for name, ts in per_round.items()}


# ---------------------------------------------------------------------------
# the report

TARGETS = [  # (problem, numerator, denominator, at most, wording)
    ("hvp", "symgrad hvp", "symgrad grad", 4.0, "sg.hvp ≤ 4× one sg.grad"),
    ("hvp", "symgrad hvp", "jax jit(jvp(grad))", 1.0, "sg.hvp faster than JAX jit(jvp(grad))"),
    ("hessian", "symgrad hessian", "jax jit(hessian)", 1.0,
     "sg.hessian faster than JAX jit(hessian) per call"),
    ("per-example", "symgrad vmap(grad)", "numpy X*(p-y)[:, None]", 1.5,
     "vmap(grad) ≤ 1.5× handwritten numpy"),
    ("per-example", "symgrad vmap(grad)", "jax jit(vmap(grad))", 1.0,
     "vmap(grad) faster than JAX jit(vmap(grad))"),
]


#: what profiling found where targets were missed (2026-12-01; see the commit that added it)
ANALYSIS = """\
What profiling (the generated kernels, timed on their own) found, target by target:

- **hvp** (met since 2026-12-01 20:00: 1.48x one grad, 0.80x JAX; it was 3.8-4.1x grad
  and 2.5x JAX). The hvp kernel used to be two loops with six n-element intermediates
  (`x**2`, `2x`, ...) between them, seven 8 MB arrays written and read again where
  JAX's fused XLA loop writes one. Three changes made it one loop that writes only its
  result, like the gradient's (`sg.hvp(rosenbrock, x, v)`'s `.source()`; asserted by
  `tests/test_fusion.py`): `x ** 0.0` simplifies to 1.0 (C's pow gives 1 for every x);
  the VJP of a power with a literal exponent records only the branch that applies, so
  the second derivative no longer transposes dead `where`s into `+ 0.0`s; and element
  moves (`x[1:]`, the adjoint's `unslice`) no longer count against fusion's recompute
  budget (now 20), so the values the shifted slice needs are computed again at `i0 - 1`
  instead of stored.
- **hessian.** `sg.hessian` is `jacfwd(jacrev(f))` with the tangent basis as a constant
  identity matrix. Until 2026-12-02 its batched tangents were `(d, d, d)` and `(d², d)`
  arrays (two dense `(d², d) @ (d, d)` products, d⁴ = 10⁸ multiply-adds each at
  d = 100; 22.6 ms on the interpreter, 155x the handwritten formula). Now
  `passes.structure` turns products by one-hot operands into gathers and
  `passes.gathers` turns sums with one nonzero per fibre into gathers and pulls
  every gather up to where its elements are made, so no value larger than d² is left
  and `inv` runs once: 0.18 ms compiled, 0.44 ms on the interpreter, below the
  handwritten numpy formula (0.27 ms; see "Structured Hessians (issue 31)").
- **per-example.** Met on an idle machine (0.48-0.65x handwritten numpy, ahead of JAX);
  the 1.1-2.4x of earlier runs was load.
"""


def fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale or unit == "µs":
            value = seconds / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    raise AssertionError


def table(problem: Problem, times: dict[str, float]) -> list[str]:
    base = times[problem.baseline]
    lines = [f"**{problem.name}** ({problem.size}); ratios to {problem.baseline}:", "",
             "| implementation | time per call (median) | ratio | first call |",
             "|---|---|---|---|"]
    for name, t in times.items():
        lines.append(f"| {name} | {fmt_time(t)} | {t / base:.2f} | "
                     f"{fmt_time(problem.compile_seconds[name])} |")
    return lines + [""]


def targets(times: dict[str, dict[str, float]]) -> list[str]:
    lines = ["| target | measured | |", "|---|---|---|"]
    for problem, num, den, limit, wording in TARGETS:
        if num not in times.get(problem, {}) or den not in times[problem]:
            lines.append(f"| {wording} | {den} not measured (not installed) | — |")
            continue
        a, b = times[problem][num], times[problem][den]
        verdict = "met" if a / b <= limit else "NOT met"
        lines.append(f"| {wording} | {fmt_time(a)} vs {fmt_time(b)} ({a / b:.2f}×) | {verdict} |")
    return lines + [""]


def versions() -> str:
    names = ["numpy", "numba", "scipy", "jax", "jaxlib", "torch"]
    found = []
    for name in names:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{name} not installed")
    return ", ".join(found)


def write_section(text: str, doc: Path = DOC) -> None:
    """Replace this script's section of ``doc`` (:func:`sections.write_section`)."""
    sections.write_section(SECTION, text, doc)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, nothing written")
    parser.add_argument("--no-write", dest="write", action="store_false")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--only", nargs="*", choices=["hvp", "hessian", "per-example"])
    args = parser.parse_args(argv)
    if args.quick:
        args.write, args.rounds, args.calls = False, 1, 1
    command = "python benchmarks/higher_order.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    threads = {k: os.environ[k] for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                          "NUMBA_NUM_THREADS", "SYMGRAD_REUSE_MEMORY")
               if k in os.environ}
    if threads:
        command = " ".join(f"{k}={v}" for k, v in threads.items()) + " " + command
    # a new, empty kernel cache: symgrad's first calls are cold compiles
    os.environ["SYMGRAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="sg_higher_order_")
    start, load_start = time.time(), os.getloadavg()
    rng = np.random.default_rng(0)
    quick = args.quick
    builders = {
        "hvp": lambda: hvp_problem(10**3 if quick else 10**6, rng),
        "hessian": lambda: hessian_problem(6 if quick else 100, rng),
        "per-example": lambda: per_example_problem(*((50, 4) if quick else (10**4, 100)), rng),
    }
    times: dict[str, dict[str, float]] = {}
    sections = []
    for name, build in builders.items():
        if args.only and name not in args.only:
            continue
        print(f"{name}: first calls (compiles) and checks ...", file=sys.stderr, flush=True)
        problem = build()
        first_calls(problem)
        print(f"{name}: timing ...", file=sys.stderr, flush=True)
        times[name] = interleaved(problem.implementations, args.rounds, args.calls)
        sections += table(problem, times[name])
    load_end = os.getloadavg()
    missing = [m for m, mod in (("JAX", jax), ("PyTorch", torch)) if mod is None]
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(start))
    text = "\n".join([
        SECTION, "",
        f"Generated by `{command}` on {when} in {time.time() - start:.0f} s "
        f"(the command line is documented at the top of benchmarks/higher_order.py).", "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"{platform.system()}; python {platform.python_version()}, {versions()}. "
        f"It was loaded by other work: load average (1, 5, 15 min) "
        f"{', '.join(f'{v:.1f}' for v in load_start)} at the start and "
        f"{', '.join(f'{v:.1f}' for v in load_end)} at the end, so the times are noisy.",
        *([f"Not installed, so not measured: {', '.join(missing)}."] if missing else []), "",
        f"Every result was first checked against the handwritten numpy formula (rtol {RTOL:g}); "
        "JAX in float64. Times per call are the median of "
        f"{args.rounds} interleaved rounds, each the median of {args.calls} calls; "
        "\"first call\" is the cold call: symgrad's trace, passes and Numba compile into an "
        "empty kernel cache (tiered execution off), JAX's trace and XLA compile, PyTorch's "
        "eager first call.", "",
        *sections,
        "Targets:", "",
        *targets(times),
        *([] if quick else [ANALYSIS]),
    ])
    print(text)
    if args.write:
        write_section(text)
        print(f"wrote the section of {DOC.relative_to(ROOT)}", file=sys.stderr)
    return text


if __name__ == "__main__":
    main()
