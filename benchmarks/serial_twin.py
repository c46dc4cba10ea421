"""CPU per call of the 1e6-element gradients against the handwritten loop and JAX (issue 31).

One process, interleaved rounds; per variant the median CPU time (``process_time``) per
call: ``sg`` as users call it (the thread count not pinned), ``sg1t`` pinned to one
thread (the serial twin, :func:`symgrad.backend.numba.codegen.serial_twin`), ``numba``
the handwritten serial Numba gradient of ``run.py``, ``jax`` ``jax.jit(jax.grad(f))`` in
float64. Run it once per tree to compare (``PYTHONPATH=<tree>``), alternately.

Run:  python benchmarks/serial_twin.py [--rounds 11]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--calls", type=int, default=20)
    opts = parser.parse_args()
    sys.path.insert(0, os.path.dirname(__file__))
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from run import rosenbrock, rosenbrock_numba, seed, seed_numba

    import symgrad as sg

    sg.config.tiered = False
    x = np.random.default_rng(0).random(10**6)
    jx = jnp.asarray(x)
    print(f"{sg.__file__.split('/symgrad/')[0]}, load {os.getloadavg()[0]:.1f}, "
          f"CPU ms per call (median of {opts.rounds} rounds x {opts.calls} calls)")
    for name, f, hand in (("seed", seed, seed_numba), ("rosenbrock", rosenbrock, rosenbrock_numba)):
        g = sg.grad(f)
        jg = jax.jit(jax.grad(lambda v, f=f: f(v, xp=jnp)))
        variants = {"sg": lambda g=g: g(x), "sg1t": lambda g=g: g(x),
                    "numba": lambda hand=hand: hand(x),
                    "jax": lambda jg=jg: jax.block_until_ready(jg(jx))}
        ref = np.asarray(jg(jx))
        for run in variants.values():  # compile, warm, check
            for _ in range(3):
                np.testing.assert_allclose(np.asarray(run()), ref, rtol=1e-12, atol=1e-12)
        cpu: dict[str, list[float]] = {k: [] for k in variants}
        for _ in range(opts.rounds):
            for k, run in variants.items():
                sg.set_num_threads(1 if k == "sg1t" else None)
                c0 = time.process_time()
                for _ in range(opts.calls):
                    keep = run()  # the user holds each result until the next call
                cpu[k].append((time.process_time() - c0) / opts.calls * 1e3)
                del keep
        sg.set_num_threads(None)
        m = {k: statistics.median(c) for k, c in cpu.items()}
        print(f"{name}: " + " ".join(f"{k} {m[k]:.3f}" for k in variants)
              + f" | sg/numba {m['sg'] / m['numba']:.2f} sg1t/numba {m['sg1t'] / m['numba']:.2f}"
              f" sg/jax {m['sg'] / m['jax']:.2f}")


if __name__ == "__main__":
    main()
