"""symgrad's gradients against handwritten numpy, handwritten Numba, JAX, PyTorch and autograd.

Problems (each a scalar loss and its gradient):

    scalar      a 15-operation expression of three Python floats, gradient w.r.t. all three
    seed-4      mean(3*(x+2)**2), n = 4
    seed-1e6    mean(3*(x+2)**2), n = 10**6
    rosenbrock  sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2), n = 10**6
    broadcast   mean(tanh(A * u[:, None] + v)**2), A 1000 x 1000, gradient w.r.t. u and v
    logreg      mean(logaddexp(0, -y * (X @ w))), X 10**4 x 100, gradient w.r.t. w (BLAS-bound)
    mlp         256x64 inputs, 128 tanh hidden units, 10 classes, softmax cross-entropy,
                gradient w.r.t. W1, b1, W2, b2 (BLAS-bound)
    sinexp-1e7  sum(sin(x)*exp(-x*x)), n = 10**7 (transcendental-bound; issue 17), also
                timed at 1 and 2 threads (sg.set_num_threads)

Before anything is timed, every implementation's gradient is compared with
symgrad's; a mismatch stops the run. Times per call are the best of five
rounds, each a median over batches of calls (`time.perf_counter`, garbage
collection off while timing; the implementations take turns). symgrad's
first-call latency is measured in two fresh subprocesses sharing a new kernel
cache directory (cold: empty; warm: filled by the cold one); the peak memory of
the n = 10**7 seed gradient in a third.

Run:  python benchmarks/run.py [--quick] [--no-write]
(writes docs/benchmarks.md unless --no-write; --quick is a smoke run on tiny sizes)
      python benchmarks/run.py --quick --compare REV [--rounds 5]
(symgrad at commit REV against this tree on the quick problems, in turns: compare.py)

On a machine whose cores are busy with other work, multi-threaded BLAS stalls
(a 0.4 ms matrix-vector product took 16 ms, a scheduler slice); there, run
``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/run.py``
(the report names these settings in its command line).
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.metadata
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba
import numpy as np
from scipy.special import expit

import symgrad as sg

compile_stats = sg.compile_stats  # (not by its module path, so --compare runs older trees)
ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
MEMORY_N = 10**7
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS")

# ---------------------------------------------------------------------------
# problems: the loss (numpy API; `xp` is the numpy-like module of the framework
# that runs it), its handwritten numpy gradient and its handwritten Numba gradient


def scalar(x, y, z, xp=np):
    a = xp.sin(x) * xp.exp(y)
    b = xp.log(1 + z * z)
    c = b / (1 + x**2)
    return a + c * xp.cos(y - z) - y**3


def scalar_numpy(x, y, z):
    a = np.sin(x) * np.exp(y)
    b = np.log(1 + z * z)
    q = 1 + x**2
    c = b / q
    dx = np.cos(x) * np.exp(y) - c * np.cos(y - z) * 2 * x / q
    dy = a - c * np.sin(y - z) - 3 * y**2
    dz = np.cos(y - z) * 2 * z / ((1 + z * z) * q) + c * np.sin(y - z)
    return dx, dy, dz


@numba.njit
def scalar_numba(x, y, z):
    e = math.exp(y)
    q = 1 + x * x
    c = math.log(1 + z * z) / q
    cos_yz, sin_yz = math.cos(y - z), math.sin(y - z)
    dx = math.cos(x) * e - c * cos_yz * 2 * x / q
    dy = math.sin(x) * e - c * sin_yz - 3 * y * y
    dz = cos_yz * 2 * z / ((1 + z * z) * q) + c * sin_yz
    return dx, dy, dz


def seed(x, xp=np):
    return xp.mean(3 * (x + 2) ** 2)


def seed_numpy(x):
    return (x + 2) * (6 / x.size)


@numba.njit
def seed_numba(x):
    out = np.empty_like(x)
    scale = 6 / x.size
    for i in range(x.size):
        out[i] = scale * (x[i] + 2)
    return out


def rosenbrock(x, xp=np):
    return xp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock_numpy(x):
    r = x[1:] - x[:-1] ** 2
    g = np.zeros_like(x)
    g[1:] = 200 * r
    g[:-1] += -400 * x[:-1] * r - 2 * (1 - x[:-1])
    return g


@numba.njit
def rosenbrock_numba(x):
    g = np.empty_like(x)
    g[0] = 0.0
    for i in range(x.size - 1):
        r = x[i + 1] - x[i] * x[i]
        g[i] += -400 * x[i] * r - 2 * (1 - x[i])
        g[i + 1] = 200 * r
    return g


def broadcast(A, u, v, xp=np):
    """Rows of A scaled by u, shifted by the row v: the adjoint reduces over both axes."""
    return xp.mean(xp.tanh(A * u[:, None] + v) ** 2)


def broadcast_numpy(A, u, v):
    t = np.tanh(A * u[:, None] + v)
    d = (2 / A.size) * t * (1 - t * t)
    return np.sum(d * A, axis=1), np.sum(d, axis=0)


@numba.njit
def broadcast_numba(A, u, v):
    du, dv = np.zeros_like(u), np.zeros_like(v)
    scale = 2 / A.size
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            t = math.tanh(A[i, j] * u[i] + v[j])
            d = scale * t * (1 - t * t)
            du[i] += d * A[i, j]
            dv[j] += d
    return du, dv


def logreg(w, X, y, xp=np):
    return xp.mean(xp.logaddexp(0.0, -y * (X @ w)))


def logreg_numpy(w, X, y):
    t = -y * (X @ w)
    return X.T @ (-y * expit(t)) / len(y)


@numba.njit
def logreg_numba(w, X, y):
    """The two products by np.dot (BLAS), the elementwise part fused into one loop."""
    z = np.dot(X, w)
    c = np.empty_like(z)
    for i in range(z.size):
        t = -y[i] * z[i]
        s = 1 / (1 + math.exp(-t)) if t >= 0 else math.exp(t) / (1 + math.exp(t))
        c[i] = -y[i] * s / z.size
    return np.dot(X.T, c)


def logreg_torch(w, X, y):
    import torch

    return torch.nn.functional.softplus(-y * (X @ w)).mean()


def mlp(W1, b1, W2, b2, X, Y):
    hidden = np.tanh(X @ W1 + b1)
    return -np.mean(np.sum(Y * sg.log_softmax(hidden @ W2 + b2, axis=1), axis=1))


def mlp_numpy(W1, b1, W2, b2, X, Y):
    hidden = np.tanh(X @ W1 + b1)
    logits = hidden @ W2 + b2
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    d_logits = (p * Y.sum(axis=1, keepdims=True) - Y) / len(X)
    d_hidden = (d_logits @ W2.T) * (1 - hidden**2)
    return X.T @ d_hidden, d_hidden.sum(axis=0), hidden.T @ d_logits, d_logits.sum(axis=0)


def mlp_jax(W1, b1, W2, b2, X, Y):
    import jax
    import jax.numpy as jnp

    hidden = jnp.tanh(X @ W1 + b1)
    return -jnp.mean(jnp.sum(Y * jax.nn.log_softmax(hidden @ W2 + b2, axis=1), axis=1))


def mlp_autograd(W1, b1, W2, b2, X, Y):
    import autograd.numpy as anp
    from autograd.scipy.special import logsumexp

    logits = anp.tanh(X @ W1 + b1) @ W2 + b2
    log_p = logits - logsumexp(logits, axis=1, keepdims=True)
    return -anp.mean(anp.sum(Y * log_p, axis=1))


def mlp_torch(W1, b1, W2, b2, X, Y):
    import torch

    hidden = torch.tanh(X @ W1 + b1)
    return -(Y * torch.log_softmax(hidden @ W2 + b2, dim=1)).sum(dim=1).mean()


def sinexp(x, xp=np):
    return xp.sum(xp.sin(x) * xp.exp(-x * x))


def sinexp_numpy(x):
    e = np.exp(-x * x)
    return e * (np.cos(x) - 2 * x * np.sin(x))


@numba.njit
def sinexp_numba(x):
    """The serial handwritten loop (libm's sin, cos and exp): issue 17's baseline."""
    g = np.empty_like(x)
    for i in range(x.size):
        e = math.exp(-x[i] * x[i])
        g[i] = e * (math.cos(x[i]) - 2 * x[i] * math.sin(x[i]))
    return g


def scalar_args(n, rng):
    return 0.5, 0.3, 0.7


def vector_args(n, rng):
    return (rng.uniform(-1.0, 1.0, n),)


def broadcast_args(n, rng):
    return rng.standard_normal((n, n)), rng.uniform(0.5, 1.5, n), rng.uniform(-1.0, 1.0, n)


def logreg_args(n, rng):
    X = rng.standard_normal((n, 100))
    y = np.where(X @ rng.standard_normal(100) + rng.standard_normal(n) > 0, 1.0, -1.0)
    return 0.1 * rng.standard_normal(100), X, y


def mlp_args(n, rng):
    X = rng.standard_normal((n, 64))
    Y = np.eye(10)[rng.integers(0, 10, n)]
    return (rng.standard_normal((64, 128)) / 8, 0.1 * rng.standard_normal(128),
            rng.standard_normal((128, 10)) / 11, 0.1 * rng.standard_normal(10), X, Y)


@dataclass(frozen=True)
class Problem:
    name: str
    f: Callable                     # the loss; symgrad differentiates it as it is
    make_args: Callable             # (n, rng) -> the arguments
    n: int                          # the size that varies: vector length or batch rows
    quick_n: int                    # the size of --quick and of the tests
    numpy_grad: Callable
    numba_grad: Callable | None     # None: no handwritten Numba gradient (say why in `note`)
    kind: str                       # "small", "large" (10**6 elements) or "blas" (BLAS-bound):
                                    # which targets apply; "blas": ratios to handwritten numpy
    argnums: tuple[int, ...] = (0,)
    sized: bool = True              # False: no array length (the scalar problem)
    skip: tuple[str, ...] = ()      # implementations not timed (too slow at this size)
    jax_f: Callable | None = None   # by default f with xp=jax.numpy
    autograd_f: Callable | None = None
    torch_f: Callable | None = None
    note: str = ""


PROBLEMS = [
    Problem("scalar", scalar, scalar_args, 1, 1, scalar_numpy, scalar_numba, "small",
            argnums=(0, 1, 2), sized=False),
    Problem("seed-4", seed, vector_args, 4, 4, seed_numpy, seed_numba, "small"),
    Problem("seed-1e6", seed, vector_args, 10**6, 1000, seed_numpy, seed_numba, "large"),
    Problem("rosenbrock-1e6", rosenbrock, vector_args, 10**6, 1000, rosenbrock_numpy,
            rosenbrock_numba, "large"),
    Problem("broadcast-1000x1000", broadcast, broadcast_args, 1000, 20, broadcast_numpy,
            broadcast_numba, "large", argnums=(1, 2),
            note="the handwritten Numba loop calls libm's scalar tanh; symgrad's loop calls "
                 "vecmath's tanh_sech2 (tanh and tanh' = 4e/(1+e)**2 from one exp, each "
                 "within 1 ulp, exact in the tails) and adds each row's terms to grad_u "
                 "after the row (a scratch row, summed in 8 lanes), so it vectorizes; XLA's "
                 "tanh is a vectorized rational approximation and its tanh' is 1 - tanh**2"),
    Problem("logreg-1e4x100", logreg, logreg_args, 10**4, 50, logreg_numpy, logreg_numba,
            "blas", torch_f=logreg_torch,
            note="handwritten Numba calls np.dot for X @ w and X.T @ c"),
    Problem("mlp-256x64x128x10", mlp, mlp_args, 256, 8, mlp_numpy, None, "blas",
            argnums=(0, 1, 2, 3), jax_f=mlp_jax, autograd_f=mlp_autograd,
            torch_f=mlp_torch,
            note="no handwritten Numba: it would be the numpy version's four np.dot calls; "
                 "symgrad's tanh is vecmath's (vectorized, within 1 ulp), numpy's its own SIMD "
                 "tanh"),
    Problem("sinexp-1e7", sinexp, vector_args, 10**7, 1000, sinexp_numpy, sinexp_numba,
            "large", skip=("torch", "autograd"),
            note="the baseline is a serial handwritten Numba loop calling libm; symgrad's "
                 "kernel calls vecmath's sin, cos and exp and runs on all cores (timed at 1 "
                 "and 2 threads below); torch and autograd not timed at this size"),
]

# ---------------------------------------------------------------------------
# implementations: each takes a problem and its arguments and returns a
# function of no arguments that computes the gradient (one array per argnum)


def symgrad_impl(p: Problem, args: tuple, backend: str = "numba") -> Callable:
    g = sg.grad(p.f, argnums=p.argnums, backend=backend)
    return lambda: g(*args)


def numpy_impl(p: Problem, args: tuple) -> Callable:
    return lambda: p.numpy_grad(*args)


def numba_impl(p: Problem, args: tuple) -> Callable | None:
    if p.numba_grad is None:
        return None
    return lambda: p.numba_grad(*args)


def jax_impl(p: Problem, args: tuple) -> Callable:
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    f = p.jax_f or functools.partial(p.f, xp=jnp)
    g = jax.jit(jax.grad(f, argnums=p.argnums))
    jargs = [jnp.asarray(a) for a in args]
    return lambda: jax.block_until_ready(g(*jargs))


def autograd_impl(p: Problem, args: tuple) -> Callable:
    import autograd
    import autograd.numpy as anp

    f = p.autograd_f or functools.partial(p.f, xp=anp)

    def loss(params, *others):
        # autograd differentiates one argument: the differentiated ones travel as a tuple
        full = list(others)
        for i, x in zip(p.argnums, params):  # argnums ascending
            full.insert(i, x)
        return f(*full)

    g = autograd.grad(loss)
    params = tuple(args[i] for i in p.argnums)
    others = [a for i, a in enumerate(args) if i not in p.argnums]
    return lambda: g(params, *others)


def torch_impl(p: Problem, args: tuple) -> Callable:
    import torch

    f = p.torch_f or functools.partial(p.f, xp=torch)

    def run():
        tensors = [torch.from_numpy(np.asarray(a)) for a in args]
        wrt = [tensors[i].requires_grad_() for i in p.argnums]
        return torch.autograd.grad(f(*tensors), wrt)

    return run


IMPLEMENTATIONS = {  # name -> (builder, module it needs)
    "symgrad": (symgrad_impl, None),
    "numpy": (numpy_impl, None),
    "numba": (numba_impl, None),
    "jax": (jax_impl, "jax"),
    "torch": (torch_impl, "torch"),
    "autograd": (autograd_impl, "autograd"),
}


def available(name: str) -> bool:
    module = IMPLEMENTATIONS[name][1]
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def as_arrays(result: Any) -> list[np.ndarray]:
    """A gradient as a list of float64 numpy arrays, whatever framework made it."""
    parts = result if isinstance(result, (tuple, list)) else [result]
    return [np.asarray(part, dtype=np.float64) for part in parts]


def check_gradients(p: Problem, name: str, got: Any, want: Any) -> None:
    """Stop with an error unless ``got`` (implementation ``name``) agrees with symgrad."""
    got, want = as_arrays(got), as_arrays(want)
    if len(got) != len(want):
        raise SystemExit(f"{p.name}: {name} returns {len(got)} gradients, symgrad {len(want)}")
    for k, (a, b) in enumerate(zip(got, want)):
        scale = float(np.max(np.abs(b))) if b.size else 0.0
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-6, atol=1e-9 * scale):
            worst = np.max(np.abs(a - b)) if a.shape == b.shape else "shape"
            raise SystemExit(f"{p.name}: the {name} gradient of argument {p.argnums[k]} differs "
                             f"from symgrad's (worst absolute difference {worst}); "
                             "a baseline is wrong, nothing was timed")


# ---------------------------------------------------------------------------
# timing


def per_call(fns: dict[str, Callable], budget: float, rounds: int = 5) -> dict[str, float]:
    """Seconds per call of each function: the best of ``rounds`` medians over batches of
    about 2 ms.

    Each function gets ``budget`` seconds (at least 3 batches per round, at most
    200 in all), garbage collection off while timing. The rounds take turns
    between the functions, so that a slow moment of a shared machine spoils one
    round of each rather than all rounds of one; the median ignores a slow batch."""
    plans = {name: _batches(fn, budget, rounds) for name, fn in fns.items()}
    medians: dict[str, list[float]] = {name: [] for name in fns}
    gc.disable()
    try:
        for _ in range(rounds):
            for name, fn in fns.items():
                inner, batches = plans[name]
                times = []
                for _ in range(batches):
                    start = time.perf_counter()
                    for _ in range(inner):
                        fn()
                    times.append((time.perf_counter() - start) / inner)
                medians[name].append(statistics.median(times))
    finally:
        gc.enable()
    return {name: min(m) for name, m in medians.items()}


def _batches(fn: Callable, budget: float, rounds: int) -> tuple[int, int]:
    """(calls per batch of about 2 ms, batches per round) for ``fn``, from one timed call."""
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-9)
    inner = max(1, int(2e-3 / once))
    return inner, max(3, min(200, int(budget / (inner * once))) // rounds)


def float32_details(n: int, budget: float) -> dict:
    """``grad(sum(sin(x)*exp(-x*x)))`` at length ``n`` in float32 and in float64 (the same
    values), timed in turns in this process; the float32 result's dtype, and its largest
    difference from the float64 gradient relative to that gradient's largest element."""
    x64 = np.random.default_rng(0).uniform(-1.0, 1.0, n)
    x32 = x64.astype(np.float32)
    g = sg.grad(sinexp)
    g32, g64 = g(x32), g(x64)
    error = float(np.max(np.abs(g32 - g64)) / np.max(np.abs(g64)))
    t = per_call({"float64": lambda: g(x64), "float32": lambda: g(x32)}, budget)
    return {**t, "dtype": g32.dtype.name, "error": error, "n": n}


def compiles_during(fn: Callable) -> int:
    """How many Numba signatures symgrad compiled while ``fn`` ran."""
    before = compile_stats()["compiled"]
    fn()
    return compile_stats()["compiled"] - before


def symgrad_details(p: Problem, args: tuple, n: int, budget: float) -> dict:
    """grad/f, the wrapper's overhead over the bare kernel, and compiles for length n + 1."""
    g = sg.grad(p.f, argnums=p.argnums)
    forward = sg.jit(p.f)
    spec, inputs = g._prepare(args, None)
    kernel = spec.run
    details = per_call({"grad": lambda: g(*args), "f": lambda: forward(*args),
                        "kernel": lambda: kernel(*inputs)}, budget)
    if p.name.startswith("sinexp"):  # thread scaling: the same kernel, 1 and 2 threads
        for threads in (1, 2):
            sg.set_num_threads(min(threads, sg.max_threads()))
            details[f"threads {threads}"] = per_call({"grad": lambda: g(*args)}, budget)["grad"]
        sg.set_num_threads(None)  # the default again: each kernel measures
    if p.sized:
        longer = p.make_args(n + 1, np.random.default_rng(0))
        start = time.perf_counter()  # a retrace (trace, adjoint, passes, codegen), no compile
        details["recompiles"] = compiles_during(lambda: g(*longer))
        details["retrace"] = time.perf_counter() - start
    return details


# ---------------------------------------------------------------------------
# subprocesses: first-call latency and peak memory


def compile_times() -> dict:
    """benchmarks/compile_time.py's table: unrolled recurrences, whole and split."""
    import importlib.util

    from symgrad.backend.numba import split

    spec = importlib.util.spec_from_file_location("compile_time", ROOT / "benchmarks" /
                                                  "compile_time.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table = module.rows([25, 100, 200, 400, 800], split.MAX_EQNS, max_unsplit=400)
    return {"table": module.markdown(table), "limit": split.MAX_EQNS,
            "above": split.SPLIT_ABOVE, "few": split.FEW_ARRAYS,
            "always": split.ALWAYS_SPLIT_ABOVE}


def train_loop() -> str:
    """benchmarks/train_loop.py's output, in a fresh process with an empty kernel cache:
    Tensor.backward's first step interpreted, its second compiled, then the kernel."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "train_loop.py")],
                          capture_output=True, text=True, check=True, timeout=600,
                          env={k: v for k, v in os.environ.items() if k != "SYMGRAD_CACHE_DIR"})
    return "```\n" + done.stdout.strip() + "\n```"


def dispatch() -> str:
    """benchmarks/dispatch.py's output (fresh process): g(...) against its bare kernel."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "dispatch.py")],
                          capture_output=True, text=True, check=True, timeout=600)
    return done.stdout.strip()


def first_calls(sizes: dict[str, int]) -> dict:
    """(In a fresh process.) Seconds of each problem's first sg.grad call, and the compiles.

    Numba is already imported (this module's handwritten kernels need it), so
    its import, about half a second, is not in the first problem's time."""
    result: dict[str, dict] = {"calls": {}, "compiled": {}}
    for p in PROBLEMS:
        args = p.make_args(sizes[p.name], np.random.default_rng(0))
        g = sg.grad(p.f, argnums=p.argnums)
        before = compile_stats()["compiled"]
        start = time.perf_counter()
        g(*args)
        result["calls"][p.name] = time.perf_counter() - start
        result["compiled"][p.name] = compile_stats()["compiled"] - before
    return result


def _vm(field: str) -> int:
    """This process's VmRSS or VmHWM (peak resident set) in bytes."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(rf"^{field}:\s+(\d+) kB", status, re.M).group(1)) * 1024


def peak_memory(n: int) -> dict:
    """(In a fresh process.) Peak extra resident memory of one seed-gradient call, in bytes.

    Each implementation is called once at full size (compiling), then the
    kernel's peak resident set (VmHWM) is reset through /proc/self/clear_refs
    and the call repeated: the peak minus the resident set before the call is
    what the call needed, the returned gradient included. Numba's allocations
    are invisible to tracemalloc, hence the operating system's count. symgrad's
    output pool is emptied before the measured call (a later call would reuse the
    dropped result's buffer and need nothing new), and the child runs with
    ``SYMGRAD_TIERED=0``: with tiers the second call is still the numpy
    interpreter's while the kernel compiles."""
    p = next(p for p in PROBLEMS if p.name == "seed-1e6")
    args = p.make_args(n, np.random.default_rng(0))
    result = {}
    for name in IMPLEMENTATIONS:
        if name == "autograd" or not available(name):  # autograd: several seconds at 1e7
            continue
        fn = IMPLEMENTATIONS[name][0](p, args)
        fn()
        if name == "symgrad":  # the first call's result went back to the output pool
            from symgrad.backend.numba import pool  # (here: --compare runs older trees)
            pool.clear()
        gc.collect()
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to VmRSS
        before = _vm("VmRSS")
        out = fn()
        result[name] = _vm("VmHWM") - before
        del out
    return result


def run_child(mode: str, cache: str, quick: bool) -> dict:
    """Run this script as ``--child mode`` in a fresh process with SYMGRAD_CACHE_DIR=cache."""
    command = [sys.executable, __file__, "--child", mode] + (["--quick"] if quick else [])
    env = {**os.environ, "SYMGRAD_CACHE_DIR": cache}
    if mode == "memory":
        env["SYMGRAD_TIERED"] = "0"  # measure the compiled kernel, not the interpreter's tier
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"the {mode} subprocess failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


# ---------------------------------------------------------------------------
# report


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds <= 0:  # a difference of two times, below the noise
        return "≈0"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def baseline(p: Problem) -> str:
    return "numpy" if p.kind == "blas" or p.numba_grad is None else "numba"


def times_table(times: dict, names: list[str]) -> str:
    rows = []
    for p in PROBLEMS:
        row = [p.name]
        for name in names:
            t = times[p.name].get(name)
            mark = " (base)" if name == baseline(p) else ""
            row.append(fmt_time(t) + mark)
        rows.append(row)
    return table(["problem", *names], rows)


def ratios_table(times: dict, names: list[str]) -> str:
    rows = []
    for p in PROBLEMS:
        base = times[p.name][baseline(p)]
        row = [p.name, baseline(p)]
        row += ["—" if times[p.name].get(n) is None else f"{times[p.name][n] / base:.2f}"
                for n in names]
        rows.append(row)
    return table(["problem", "baseline", *names], rows)


def symgrad_table(details: dict, cold: dict | None, warm: dict | None) -> str:
    rows = []
    for p in PROBLEMS:
        d = details[p.name]
        rows.append([
            p.name,
            fmt_time(cold["calls"][p.name]) if cold else "skipped",
            (f"{fmt_time(warm['calls'][p.name])}, {warm['compiled'][p.name]} compiled"
             if warm else "skipped"),
            f"{d['grad'] / d['f']:.2f}",
            fmt_time(d["grad"] - d["kernel"]),
            (f"{d['recompiles']} compiled, first call {fmt_time(d['retrace'])}"
             if "recompiles" in d else "n/a"),
        ])
    return table(["problem", "first call, cold cache", "first call, warm cache",
                  "time(grad)/time(f)", "wrapper overhead", "length n+1"], rows)


def memory_table(memory: dict, n: int) -> str:
    array = 8 * n
    rows = [[name, f"{extra / 2**20:.0f} MiB", f"{extra / array:.2f}"]
            for name, extra in memory.items()]
    return table(["implementation", "peak extra memory", "in arrays of n float64"], rows)


def targets(times: dict, details: dict, warm: dict | None, memory: dict | None) -> list[list]:
    """The targets of issue 7, each with what was measured and whether it is met."""
    rows = []

    def add(target: str, measured: str, met: bool | None) -> None:
        rows.append([target, measured, "n/a" if met is None else "met" if met else "NOT met"])

    for p in PROBLEMS:
        t = times[p.name]
        if p.kind == "large":
            ratio = t["symgrad"] / t["numba"]
            add(f"{p.name}: symgrad ≤ 1.3× handwritten Numba", f"{ratio:.2f}×", ratio <= 1.3)
        if p.kind in ("small", "large"):
            jax = t.get("jax")
            add(f"{p.name}: symgrad faster than JAX",
                "JAX not installed" if jax is None else
                f"{fmt_time(t['symgrad'])} vs {fmt_time(jax)}",
                None if jax is None else t["symgrad"] < jax)
        if p.kind == "small":
            overhead = details[p.name]["grad"] - details[p.name]["kernel"]
            add(f"{p.name}: wrapper overhead ≤ 1 µs", fmt_time(overhead), overhead <= 1e-6)
        if p.kind == "blas":
            ratio = t["symgrad"] / t["numpy"]
            add(f"{p.name}: symgrad ≤ 1.1× handwritten numpy", f"{ratio:.2f}×", ratio <= 1.1)
    worst = max(PROBLEMS, key=lambda p: details[p.name]["grad"] / details[p.name]["f"])
    ratio = details[worst.name]["grad"] / details[worst.name]["f"]
    add("time(grad)/time(f) ≤ 3 on every problem", f"worst {ratio:.2f} ({worst.name})",
        ratio <= 3)
    if warm is None:
        add("warm first call: no compile", "skipped (--quick)", None)
    else:
        compiled = sum(warm["compiled"].values())
        add("warm first call: no compile", f"{compiled} compiled", compiled == 0)
    if memory is None or "symgrad" not in memory:
        add("peak memory of the n=1e7 seed gradient ≤ 3 arrays", "not measured", None)
    else:
        arrays = memory["symgrad"] / (8 * MEMORY_N)
        add("peak memory of the n=1e7 seed gradient ≤ 3 arrays", f"{arrays:.2f} arrays",
            arrays <= 3)
    return rows


def targets17(times: dict, loop: str | None, calls: str | None,
              single: dict | None = None) -> list[list]:
    """The targets of issue 17 that the table above does not hold: the MLP, sinexp, the
    training loops and dispatch, from the measurements (the subprocess outputs parsed)."""
    rows = []

    def add(target: str, measured: str, met: bool | None) -> None:
        rows.append([target, measured, "n/a" if met is None else "met" if met else "NOT met"])

    mlp = times.get("mlp-256x64x128x10", {})
    if mlp:
        ratio = mlp["symgrad"] / mlp["numpy"]
        add("mlp: symgrad ≤ 1.0× handwritten numpy", f"{ratio:.2f}×", ratio <= 1.0)
        if mlp.get("jax"):
            add("mlp: symgrad faster than JAX", f"{fmt_time(mlp['symgrad'])} vs "
                f"{fmt_time(mlp['jax'])}", mlp["symgrad"] < mlp["jax"])
    sinexp = times.get("sinexp-1e7", {})
    if sinexp:
        ratio = sinexp["symgrad"] / sinexp["numba"]
        add("sinexp-1e7: symgrad ≤ 0.6× a serial handwritten Numba loop", f"{ratio:.2f}×",
            ratio <= 0.6)
    if single:
        ratio = single["float32"] / single["float64"]
        add("float32 at n=1e7: ≤ 0.65× the float64 time, results float32",
            f"{ratio:.3f}× ({fmt_time(single['float32'])} vs {fmt_time(single['float64'])}), "
            f"{single['dtype']}, max rel. difference {single['error']:.1e}",
            ratio <= 0.65 and single["dtype"] == "float32")
    if loop is not None:
        found = re.findall(r"ratio\s*:\s*symgrad[^=]*=\s*([\d.]+)", loop)
        if len(found) >= 1:
            add("Tensor train loop (seed graph, n=1000) ≥ 1.3× PyTorch eager's steps/s",
                f"{float(found[0]):.2f}×", float(found[0]) >= 1.3)
        if len(found) >= 2:
            add("MLP training loop with Tensors ≥ 1.0× PyTorch eager", f"{float(found[1]):.2f}×",
                float(found[1]) >= 1.0)
    if calls is not None:
        overheads = [float(v) for v in re.findall(r"([-\d.]+)us\s*$", calls, re.M)]
        if overheads:
            worst = max(overheads)
            add("dispatch: ≤ 1 µs over the bare kernel, 1-4 arguments (with guards)",
                f"worst {worst:.2f} µs", worst <= 1.0)
    return rows


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        info = Path("/proc/cpuinfo").read_text()
        cpu = re.search(r"^model name\s*:\s*(.+)$", info, re.M).group(1)
    except (OSError, AttributeError):
        pass
    versions = [f"python {platform.python_version()}"]
    for package in ("numpy", "numba", "scipy", "jax", "jaxlib", "torch", "autograd"):
        try:
            versions.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{package} not installed")
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()}; " + ", ".join(versions)


def thread_settings() -> str:
    """The environment variables that size BLAS and OpenMP thread pools, as a command prefix."""
    return "".join(f"{v}={os.environ[v]} " for v in THREAD_VARIABLES if v in os.environ)


def load() -> float:
    """The 1-minute load average (nan if unknown): other processes skew the times."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return math.nan


# ---------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, few repeats, no subprocesses: a smoke run")
    parser.add_argument("--no-write", action="store_true", help="do not write docs/benchmarks.md")
    parser.add_argument("--skip-compile-time", action="store_true",
                        help="leave out benchmarks/compile_time.py (minutes on a busy machine)")
    parser.add_argument("--compare", metavar="REV",
                        help="time the quick problems of commit REV and of this tree in turns "
                             "and print new/old per problem (benchmarks/compare.py)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of --compare")
    parser.add_argument("--child", choices=["first-call", "memory"], help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.compare:
        import compare  # (beside this file)
        print(compare.compare(options.compare, options.rounds))
        return
    sizes = {p.name: p.quick_n if options.quick else p.n for p in PROBLEMS}
    if options.child == "first-call":
        print(json.dumps(first_calls(sizes)))
        return
    if options.child == "memory":
        print(json.dumps(peak_memory(1000 if options.quick else MEMORY_N)))
        return

    started, load_before = time.perf_counter(), load()
    if hasattr(sg.config, "tiered"):  # (older trees under --compare have no tiers)
        # time the kernels: with tiers, the first calls after a kernel's first use are
        # the numpy interpreter's while it compiles, and the compile shares the cores
        sg.config.tiered = False
    if not thread_settings() and load_before > 1.5:
        print(f"warning: the machine is busy (load average {load_before:.1f}); multi-threaded "
              "BLAS and OpenMP may stall. For steadier numbers run with "
              "OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1", file=sys.stderr)
    budget = 0.02 if options.quick else 0.4
    # cold and warm first calls, each in a fresh process; this process then
    # loads the kernels they compiled (symgrad reads SYMGRAD_CACHE_DIR at each compile)
    cache = tempfile.mkdtemp(prefix="symgrad-bench-")
    cold = warm = memory = compiles = loop = calls = None
    if not options.quick:
        print("first calls, cold cache (fresh process) ...", file=sys.stderr)
        cold = run_child("first-call", cache, options.quick)
        print("first calls, warm cache (fresh process) ...", file=sys.stderr)
        warm = run_child("first-call", cache, options.quick)
        print("peak memory (fresh process) ...", file=sys.stderr)
        memory = run_child("memory", cache, options.quick)
        if not options.skip_compile_time:
            print("compile time against graph size (fresh processes) ...", file=sys.stderr)
            compiles = compile_times()
        print("a training loop of Tensor.backward (fresh process) ...", file=sys.stderr)
        loop = train_loop()
        print("dispatch overhead (fresh process) ...", file=sys.stderr)
        calls = dispatch()
    os.environ["SYMGRAD_CACHE_DIR"] = cache

    names = [name for name in IMPLEMENTATIONS if available(name)]
    missing = [name for name in IMPLEMENTATIONS if name not in names]
    times: dict[str, dict[str, float]] = {}
    details = {}
    for p in PROBLEMS:
        print(f"{p.name} ...", file=sys.stderr)
        args = p.make_args(sizes[p.name], np.random.default_rng(0))
        impls = {name: IMPLEMENTATIONS[name][0](p, args) for name in names if name not in p.skip}
        impls = {name: fn for name, fn in impls.items() if fn is not None}
        want = impls["symgrad"]()
        for name, fn in impls.items():  # every baseline agrees with symgrad before timing
            check_gradients(p, name, fn(), want)
        times[p.name] = per_call(impls, budget)
        details[p.name] = symgrad_details(p, args, sizes[p.name], budget)
    single = float32_details(1000 if options.quick else 10**7, budget)
    elapsed = time.perf_counter() - started

    command = (thread_settings() + "python benchmarks/run.py"
               + (" --quick" if options.quick else "")
               + (" --skip-compile-time" if options.skip_compile_time else ""))
    notes = [f"- {p.name}: {p.note}" for p in PROBLEMS if p.note]
    notes += [f"- {name}: not installed, skipped" for name in missing]
    sections = [
        "# Benchmarks",
        f"Generated by `{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} "
        f"in {elapsed:.0f} s.",
        f"Machine: {machine()}. Load average (1 min) {load_before:.1f} at the start, "
        f"{load():.1f} at the end (this run counts about 1; above that, other processes "
        "shared the cores and the times are noisy).",
        "**A --quick smoke run: tiny sizes (the names give the full sizes), few repeats; "
        "these numbers say nothing about speed.**" if options.quick else "",
        "Every implementation's gradient was checked against symgrad's "
        "(`np.allclose`, rtol 1e-6) before timing.",
        "## Time per gradient call",
        "Best of 5 rounds, each the median over batches of calls (`time.perf_counter`, "
        f"each batch about 2 ms, {budget} s per cell in all; the implementations take turns "
        "round by round). symgrad is `sg.grad(f)`; numpy and numba are handwritten "
        "gradients (numba: `numba.njit`, explicit loops, one pass where possible); jax is "
        "`jax.jit(jax.grad(f))` in float64 with `block_until_ready`; torch is eager float64, "
        "graph built and `torch.autograd.grad` each call; autograd is HIPS `autograd.grad`.",
        times_table(times, names),
        "Notes:\n" + "\n".join(notes) if notes else "",
        "## Ratio to the baseline",
        "The baseline is the handwritten Numba gradient, or handwritten numpy for the "
        "BLAS-bound problems (logreg, mlp).",
        ratios_table(times, names),
        "## symgrad details",
        "First call: `sg.grad(f)(*args)` in a fresh process (trace, adjoint, optimize, generate, "
        "compile or load) with a new `SYMGRAD_CACHE_DIR` (cold), then in a second fresh process "
        "with the same directory (warm; `compiled` is `compile_stats()[\"compiled\"]`, 0 "
        "means loaded from disk)."
        + " Numba was imported before (not counted)."
        + " time(grad)/time(f) divides by `sg.jit(f)`, symgrad's own compiled forward. "
        "Wrapper overhead is `g(*args)` minus the bare kernel `spec.run(*inputs)`. "
        "Length n+1: Numba compiles, and the time of the first call, when the vector length "
        "(both sides of broadcast's matrix, the batch rows of logreg and mlp) grows by one; "
        "that call retraces the function (trace, adjoint, passes, codegen) and finds the "
        "kernel it already has. The scalar problem runs "
        "first in each process, so its first calls include the process's one-time set-up "
        "of Numba's compiler and cache loader.",
        symgrad_table(details, cold, warm),
    ]
    if memory is not None:
        sections += [
            f"## Peak memory of the seed gradient, n = {MEMORY_N:,}",
            "In a fresh process: each gradient called once at full size (compiling; "
            "`SYMGRAD_TIERED=0`, so symgrad's call is the compiled kernel's, not the "
            "interpreter's tier), then the peak resident set is reset "
            "(`/proc/self/clear_refs`) and the call repeated; peak minus resident set "
            "before the call, the returned gradient included, as a multiple of one array "
            f"of n float64 ({8 * MEMORY_N / 1e6:.0f} MB). symgrad's output pool is emptied "
            "first: a repeated call reuses the buffer of a result the caller dropped "
            "and needs no new memory. tracemalloc would not see Numba's allocations.",
            memory_table(memory, MEMORY_N),
        ]
    if compiles is None and not options.quick:
        sections += ["## Compile time against graph size",
                     "Not rerun (`--skip-compile-time`): `python benchmarks/compile_time.py` "
                     "prints the table."]
    if compiles is not None:
        sections += [
            "## Compile time against graph size",
            "`python benchmarks/compile_time.py` (included here): the gradient of an "
            "unrolled recurrence `x = sin(x) * w + 0.5 * x` of k steps over 8 values, each "
            "measurement in a fresh process with an empty kernel cache, CPU seconds. "
            "'whole' is one kernel; 'split' is pieces of at most "
            f"{compiles['limit']} equations (pieces of the same structure share a kernel). "
            f"By default symgrad splits graphs of more than {compiles['above']} equations "
            f"whose kernel would make more than {compiles['few']} arrays (compile time grows "
            "with those; a 1658-equation chain of slices, rolls and maxima with 493 arrays "
            "took 247 s whole and 15 s split), and all graphs of more than "
            f"{compiles['always']} equations. This recurrence is fused into one loop, so "
            "up to that size it compiles whole and runs several times faster than the chain "
            "of pieces.",
            compiles["table"],
        ]
    if loop is not None:
        sections += [
            "## Tensor.backward in a training loop",
            "`python benchmarks/train_loop.py` (included here): the seeds' graph "
            "`y = x + 2; z = y * y * 3; out = z.mean()` on n = 1000 values, rebuilt and "
            "differentiated at every step, in a fresh process with an empty kernel cache. "
            "The first backward of a structure runs on the numpy interpreter, the second "
            "compiles it (so a one-off graph never waits for Numba), later ones call the kernel.",
            loop,
        ]
    if calls is not None:
        sections += [
            "## Dispatch",
            "`python benchmarks/dispatch.py` (included here): `g(*args)` against the Numba "
            "dispatcher it ends in, called with the kernel's own arguments; the difference is "
            "symgrad's Python path (the fast key, guards of values read from outside, the "
            "picking of outputs).",
            "```\n" + calls + "\n```",
        ]
    if "sinexp-1e7" in details:
        d = details["sinexp-1e7"]
        sections += [
            "## Thread scaling, sinexp-1e7",
            "The same parallel kernel (`prange` over fixed chunks; sums added in chunk order, "
            "so the bits do not depend on the thread count) at `sg.set_num_threads(k)`:",
            table(["threads", "time per gradient", "speed-up"],
                  [[str(k), fmt_time(d[f"threads {k}"]),
                    f"{d['threads 1'] / d[f'threads {k}']:.2f}×"] for k in (1, 2)]),
        ]
    judged = targets(times, details, warm, memory) + targets17(times, loop, calls, single)
    if options.quick:  # tiny sizes: a target named for n = 1e6 is not measured here
        judged = [[target, measured, "not judged (--quick)"]
                  for target, measured, _ in judged]
    sections += ["## Targets (issues 7 and 17)", table(["target", "measured", ""], judged)]
    report = "\n\n".join(s for s in sections if s) + "\n"
    print(report)
    if not options.no_write:
        DOC.write_text(report + _kept_sections(report), encoding="utf-8")
        print(f"wrote {DOC.relative_to(ROOT)}", file=sys.stderr)


def _kept_sections(report: str) -> str:
    """The sections of docs/benchmarks.md that other scripts write (``## ...`` headings
    this report does not have, such as benchmarks/higher_order.py's and the Dask one),
    kept as they are."""
    if not DOC.exists():
        return ""
    ours = {line for line in report.splitlines() if line.startswith("## ")}
    kept, keep = [], False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            keep = line not in ours
        if keep:
            kept.append(line)
    return "\n" + "\n".join(kept) + "\n" if kept else ""


if __name__ == "__main__":
    main()

