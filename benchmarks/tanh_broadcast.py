"""The broadcast tanh gradient (benchmarks/run.py's ``broadcast``, 1000x1000) against JAX.

Times, interleaved in one process (medians of wall-clock time per call, each
implementation warmed up first), the gradient of ``mean(tanh(A * u[:, None] + v)**2)``
with respect to u and v:

    separate   symgrad with ``codegen.TANH_PAIRS = False``: vm.tanh, then vm.exp for the
               derivative 4e/(1+e)**2 (two exponentials per element; before issue 31)
    fused      symgrad as shipped: vm.tanh_sech2, tanh and sech**2 from one exponential
    jax        jax.jit(jax.grad(...)) in float64, block_until_ready

and the same gradient without tanh, ``mean((A * u[:, None] + v)**2)``:

    sq chain   symgrad with ``codegen.ROW_SUMS = False``: grad_u's sum over each row is one
               chain of dependent additions (before issue 31's round 3, session 6)
    sq rows    symgrad as shipped: the row's terms in a scratch row, added by vm.row_sum
    sq jax     jax.jit(jax.grad(...)) in float64

at the default thread setting (symgrad: parallel kernel or serial twin by timing,
:mod:`symgrad.backend.numba.threads`), and, with ``--threads 1``, pinned to one thread
(``sg.set_num_threads(1)``; JAX/XLA is then told nothing: its CPU client decides).
Every gradient is checked against the fused one first.

Run:  python benchmarks/tanh_broadcast.py [--rounds 31] [--threads 1] [--n 1000]
          [--only tanh|square]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

import symgrad as sg
from symgrad.backend.numba import codegen

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402 -- the problem of the main benchmark


def square(A, u, v, xp=np):
    """The broadcast gradient's problem without tanh: a loop with no vectorized math."""
    return xp.mean((A * u[:, None] + v) ** 2)


def _check(got, want, rtol=1e-10):
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), b, rtol=rtol, atol=1e-16)


def _tanh(args, jargs, jax, jnp):
    codegen.TANH_PAIRS = False
    separate = sg.grad(run.broadcast, argnums=(1, 2))
    assert "vm.tanh_sech2" not in separate.source(*args)
    want_separate = separate(*args)
    codegen.TANH_PAIRS = True
    fused = sg.grad(run.broadcast, argnums=(1, 2))
    assert "vm.tanh_sech2" in fused.source(*args)
    want = fused(*args)
    jg = jax.jit(jax.grad(lambda A, u, v: run.broadcast(A, u, v, xp=jnp), argnums=(1, 2)))
    _check(want_separate, want)
    _check(jax.block_until_ready(jg(*jargs)), want)
    return {"separate": lambda: separate(*args), "fused": lambda: fused(*args),
            "jax": lambda: jax.block_until_ready(jg(*jargs))}


def _square(args, jargs, jax, jnp):
    codegen.ROW_SUMS = False
    chain = sg.grad(square, argnums=(1, 2))
    assert "vm.row_sum" not in chain.source(*args)
    want_chain = chain(*args)
    codegen.ROW_SUMS = True
    rows = sg.grad(square, argnums=(1, 2))
    assert "vm.row_sum" in rows.source(*args)
    want = rows(*args)
    jg = jax.jit(jax.grad(lambda A, u, v: square(A, u, v, xp=jnp), argnums=(1, 2)))
    _check(want_chain, want)
    _check(jax.block_until_ready(jg(*jargs)), want)
    return {"sq chain": lambda: chain(*args), "sq rows": lambda: rows(*args),
            "sq jax": lambda: jax.block_until_ready(jg(*jargs))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--only", choices=("tanh", "square"), default=None)
    opts = parser.parse_args()
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    sg.config.tiered = False  # compile first: time the kernels, not the interpreter
    args = run.broadcast_args(opts.n, np.random.default_rng(0))
    jargs = [jnp.asarray(a) for a in args]
    impls = {}
    if opts.only != "square":
        impls.update(_tanh(args, jargs, jax, jnp))
    if opts.only != "tanh":
        impls.update(_square(args, jargs, jax, jnp))
    if opts.threads is not None:
        sg.set_num_threads(opts.threads)
    for fn in impls.values():
        for _ in range(12):  # the serial twin loads, the adaptive choice settles
            fn()
    times: dict[str, list[float]] = {k: [] for k in impls}
    cpu: dict[str, list[float]] = {k: [] for k in impls}
    load = os.getloadavg()[0]
    for _ in range(opts.rounds):
        for k, fn in impls.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            times[k].append(time.perf_counter() - start)
            cpu[k].append(time.process_time() - start_cpu)
    med = {k: statistics.median(v) for k, v in times.items()}
    mcpu = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"n = {opts.n}, threads {'default' if opts.threads is None else opts.threads}, "
          f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}; medians of wall-clock time "
          f"and of CPU time (time.process_time: every thread of the process)")
    for k in impls:
        print(f"{k:>9}: wall {med[k] * 1e3:8.2f} ms "
              f"CPU {mcpu[k] * 1e3:8.2f} ms")
    for a, b, jax_key in (("fused", "separate", "jax"), ("sq rows", "sq chain", "sq jax")):
        if a in med:
            print(f"{a} / {b}: wall {med[a] / med[b]:.2f}, CPU {mcpu[a] / mcpu[b]:.2f};  "
                  f"{a} / {jax_key}: wall {med[a] / med[jax_key]:.2f}, "
                  f"CPU {mcpu[a] / mcpu[jax_key]:.2f}")


if __name__ == "__main__":
    main()
