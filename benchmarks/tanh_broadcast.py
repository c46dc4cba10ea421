"""The broadcast tanh gradient (benchmarks/run.py's ``broadcast``, 1000x1000) against JAX.

Times, interleaved in one process (medians of wall-clock time per call, each
implementation warmed up first), the gradient of ``mean(tanh(A * u[:, None] + v)**2)``
with respect to u and v:

    separate   symgrad with ``codegen.TANH_PAIRS = False``: vm.tanh, then vm.exp for the
               derivative 4e/(1+e)**2 (two exponentials per element; before issue 31)
    fused      symgrad as shipped: vm.tanh_sech2, tanh and sech**2 from one exponential
    jax        jax.jit(jax.grad(...)) in float64, block_until_ready

at the default thread setting (symgrad: parallel kernel or serial twin by timing,
:mod:`symgrad.backend.numba.threads`), and, with ``--threads 1``, pinned to one thread
(``sg.set_num_threads(1)``; JAX/XLA is then told nothing: its CPU client decides).
Every gradient is checked against the fused one first.

Run:  python benchmarks/tanh_broadcast.py [--rounds 31] [--threads 1] [--n 1000]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--n", type=int, default=1000)
    opts = parser.parse_args()
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    sg.config.tiered = False  # compile first: time the kernels, not the interpreter
    args = run.broadcast_args(opts.n, np.random.default_rng(0))
    codegen.TANH_PAIRS = False
    separate = sg.grad(run.broadcast, argnums=(1, 2))
    assert "vm.tanh_sech2" not in separate.source(*args)
    want_separate = separate(*args)
    codegen.TANH_PAIRS = True
    fused = sg.grad(run.broadcast, argnums=(1, 2))
    assert "vm.tanh_sech2" in fused.source(*args)
    want = fused(*args)
    jg = jax.jit(jax.grad(lambda A, u, v: run.broadcast(A, u, v, xp=jnp), argnums=(1, 2)))
    jargs = [jnp.asarray(a) for a in args]
    for got in (want_separate, jax.block_until_ready(jg(*jargs))):
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-10, atol=1e-16)
    if opts.threads is not None:
        sg.set_num_threads(opts.threads)
    impls = {"separate": lambda: separate(*args), "fused": lambda: fused(*args),
             "jax": lambda: jax.block_until_ready(jg(*jargs))}
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
        print(f"{k:>9}: wall {med[k] * 1e3:8.2f} ms ({med[k] / med['jax']:5.2f}x JAX)   "
              f"CPU {mcpu[k] * 1e3:8.2f} ms ({mcpu[k] / mcpu['jax']:5.2f}x JAX)")
    print(f"fused / separate: wall {med['fused'] / med['separate']:.2f}, "
          f"CPU {mcpu['fused'] / mcpu['separate']:.2f}")


if __name__ == "__main__":
    main()
