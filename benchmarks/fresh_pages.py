"""What fresh output pages cost a 1e6-element gradient, against JAX (issue 31, item 4).

One process, interleaved rounds (load from other processes hits every variant
alike); per variant the median wall time per call over the rounds, its CPU time
(``process_time``) and the minor page faults per call (``getrusage``):

- ``symgrad``: ``sg.grad(f)(x)`` as users call it (the thread count not pinned, so
  each parallel kernel measures its serial twin against itself and runs the faster,
  :mod:`symgrad.backend.numba.threads`);
- ``symgrad no pool``: the same with ``codegen.OUTPUT_POOL = False`` (its own kernel):
  every output by ``np.empty``, as before the output pool (:mod:`symgrad.backend.numba.pool`);
- ``symgrad 2 threads``: ``sg.set_num_threads(2)`` (always the parallel loop);
- ``symgrad 1 thread``: ``sg.set_num_threads(1)`` (always the serial twin);
- ``numba fresh``: the handwritten serial Numba gradient, returning a fresh array;
- ``numba pooled``: the same loop writing into a buffer from a pool, reused only when
  the pool holds the only reference (``sys.getrefcount``; the caller holds each result
  until the next call returns, as a loop ``r = g(x)`` does): what a per-kernel output
  pool could at best save;
- ``jax``: ``jax.jit(jax.grad(f))`` in float64 with ``block_until_ready``.

The allocator's settings are process-wide and one-way, so they are chosen per run,
never switched within one: by default the process never calls ``mallopt``, as a
user's process that does not ask for :func:`symgrad.reuse_memory`; ``--reuse`` calls
``sg.reuse_memory(True)`` once at the start (JAX's CPU buffers come from the same
``malloc``, so its row gains too). Any ``mallopt`` call switches off glibc's dynamic
threshold for good: until session 5 this benchmark toggled the setting per round, and
its default rows measured a process pinned to 128 KiB, where every 8 MB array is
fresh pages (1954 faults per call), which a user's process does not see (0 faults
per call for arrays up to 32 MiB, docs/benchmarks.md).

Run:  python benchmarks/fresh_pages.py [--repeat 15] [--problem seed|rosenbrock] [--reuse]
          [--n 1000000]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time

import numba
import numpy as np

N = 10**6


@numba.njit
def seed_into(x, out):
    scale = 6 / x.size
    for i in range(x.size):
        out[i] = scale * (x[i] + 2)
    return out


@numba.njit
def rosenbrock_into(x, g):
    g[0] = 0.0
    for i in range(x.size - 1):
        r = x[i + 1] - x[i] * x[i]
        g[i] += -400 * x[i] * r - 2 * (1 - x[i])
        g[i + 1] = 200 * r
    return g


class Pool:
    """Output buffers per (shape, dtype), a buffer handed out again only when nobody
    else holds it (refcount: the pool's list, the loop variable and getrefcount's
    argument). A loop ``r = g(x)`` still holds the last result while the next call
    runs, so one buffer is never free then: the pool keeps up to ``LIMIT``."""

    LIMIT = 4

    def __init__(self):
        self.buffers: dict = {}

    def take(self, shape, dtype):
        kept = self.buffers.setdefault((shape, dtype), [])
        for buf in kept:
            if sys.getrefcount(buf) == 3:
                return buf
        buf = np.empty(shape, dtype)
        if len(kept) < self.LIMIT:
            kept.append(buf)
        return buf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--problem", default="seed", choices=("seed", "rosenbrock"))
    parser.add_argument("--calls", type=int, default=20, help="calls per round and variant")
    parser.add_argument("--n", type=int, default=N, help="elements of x")
    parser.add_argument("--reuse", action="store_true",
                        help="sg.reuse_memory(True) once at the start (default: no mallopt)")
    opts = parser.parse_args()
    sys.path.insert(0, os.path.dirname(__file__))
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from run import rosenbrock, rosenbrock_numba, seed, seed_numba

    import symgrad as sg
    from symgrad.backend.numba import codegen

    sg.config.tiered = False
    if opts.reuse:
        sg.reuse_memory(True)
    f, hand, into = ((seed, seed_numba, seed_into) if opts.problem == "seed"
                     else (rosenbrock, rosenbrock_numba, rosenbrock_into))
    x = np.random.default_rng(0).random(opts.n)
    g = sg.grad(f)
    codegen.OUTPUT_POOL = False
    unpooled = sg.grad(f)
    assert "pool_take" not in unpooled.source(x)
    codegen.OUTPUT_POOL = True
    jg = jax.jit(jax.grad(lambda v: f(v, xp=jnp)))
    jx = jnp.asarray(x)
    pool = Pool()
    threads = sg.get_num_threads()

    def pooled():
        out = pool.take(x.shape, x.dtype)
        if opts.problem == "rosenbrock":
            out[:] = 0.0
        return into(x, out)

    variants = {
        "symgrad": lambda: g(x),
        "symgrad no pool": lambda: unpooled(x),
        "symgrad 2 threads": lambda: g(x),
        "symgrad 1 thread": lambda: g(x),
        "numba fresh": lambda: hand(x),
        "numba pooled": pooled,
        "jax": lambda: jax.block_until_ready(jg(jx)),
    }
    ref = np.asarray(jg(jx))
    for run in variants.values():  # warm (compile) and check
        np.testing.assert_allclose(np.asarray(run()), ref, rtol=1e-12, atol=1e-12)
    times = {k: [] for k in variants}
    cpu = {k: [] for k in variants}
    faults = {k: [] for k in variants}
    for _ in range(opts.repeat):
        for name, run in variants.items():
            sg.set_num_threads(1 if name.endswith("1 thread") else
                               2 if name.endswith("2 threads") else None)
            keep = None
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            c0, t0 = time.process_time(), time.perf_counter()
            for _ in range(opts.calls):
                keep = run()  # the user holds each result until the next call
            dt = (time.perf_counter() - t0) / opts.calls
            cpu[name].append((time.process_time() - c0) / opts.calls)
            faults[name].append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
                                / opts.calls)
            times[name].append(dt)
            del keep
    sg.set_num_threads(None)
    base, cbase = statistics.median(times["jax"]), statistics.median(cpu["jax"])
    print(f"{opts.problem}-{opts.n:.0e}, {opts.repeat} rounds x {opts.calls} calls; load "
          f"{os.getloadavg()[0]:.1f}; threads {threads}; "
          f"{'sg.reuse_memory(True)' if opts.reuse else 'no mallopt'}")
    print(f"{'variant':18} {'median':>10} {'best':>10} {'/ jax':>7} {'cpu':>10} {'/ jax':>7} "
          f"{'faults/call':>12}")
    for name in variants:
        med, cmed = statistics.median(times[name]), statistics.median(cpu[name])
        print(f"{name:18} {med * 1e3:8.3f}ms {min(times[name]) * 1e3:8.3f}ms "
              f"{med / base:7.2f} {cmed * 1e3:8.3f}ms {cmed / cbase:7.2f} "
              f"{statistics.median(faults[name]):12.0f}")


if __name__ == "__main__":
    main()
