"""A 1000-step training loop of the seed graph, symgrad vs PyTorch eager.

Each step rebuilds the seeds' graph  y = x + 2; z = y * y * 3; out = z.mean()
on n = 1000 values, calls out.backward(), updates x.data and zeroes x.grad.
Prints steps per second for symgrad (and for PyTorch, float64, when torch is
installed; measured in alternating rounds, medians, so that the load of a shared
machine weighs on both), the latency of symgrad's first two steps (step 1 runs the backward
on the numpy interpreter, step 2 compiles it with Numba) and how many Numba
compiles the loop triggered.

Then the same for a training loop of the MLP of benchmarks/run.py written with
Tensors (256x64 inputs, 128 tanh units, 10 classes, log_softmax cross-entropy,
plain SGD on W1, b1, W2, b2), symgrad against PyTorch eager float64.

Run:  python benchmarks/train_loop.py [--steps 1000] [--n 1000]
(kernels go to a fresh temporary cache directory, so the compile is real)
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

#: alternating rounds of symgrad and PyTorch; the ratios printed are their medians
ROUNDS = 7


def seed_step(x) -> None:
    """One step of the seeds' graph; the same code for symgrad and torch tensors."""
    y = x + 2
    z = y * y * 3
    out = z.mean()
    out.backward()
    x.data -= 0.1 * x.grad.data
    x.grad.data.zero_()


def symgrad_loop(steps: int, n: int) -> tuple[float, list[float], dict, object]:
    import numpy as np

    import symgrad as torch
    from symgrad.autograd import Variable
    from symgrad.backend.numba import compile as kernels

    x = Variable(torch.from_numpy(np.random.default_rng(0).standard_normal(n)),
                 requires_grad=True)
    before = kernels.compile_stats()
    firsts = []
    start = time.perf_counter()
    for step in range(steps):
        t0 = time.perf_counter()
        seed_step(x)
        if step < 3:
            firsts.append(time.perf_counter() - t0)
    total = time.perf_counter() - start
    after = kernels.compile_stats()
    compiles = {k: after[k] - before[k] for k in after}
    return steps / total, firsts, compiles, x


def torch_seed_variable(n: int):
    import numpy as np
    import torch

    x = torch.tensor(np.random.default_rng(0).standard_normal(n), requires_grad=True)
    for _ in range(50):  # warm-up
        seed_step(x)
    return x


def rate(step, steps: int) -> float:
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return steps / (time.perf_counter() - t0)


def interleaved(ours, theirs, steps: int, rounds: int = ROUNDS) -> tuple[float, float, float]:
    """Steps per second of ``ours`` and ``theirs`` (medians) and the median of their
    ratios, over ``rounds`` alternating rounds of ``steps // rounds`` steps each: on a
    machine shared with other work, a load that comes and goes then weighs on both."""
    per_round = max(1, steps // rounds)
    a, b = [], []
    for _ in range(rounds):
        a.append(rate(ours, per_round))
        if theirs is not None:
            b.append(rate(theirs, per_round))
    if theirs is None:
        return statistics.median(a), float("nan"), float("nan")
    return (statistics.median(a), statistics.median(b),
            statistics.median(x / y for x, y in zip(a, b)))


def mlp_data(torch_module):
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.standard_normal((256, 64))
    Y = np.eye(10)[rng.integers(0, 10, 256)]
    params = [rng.standard_normal((64, 128)) / 8, 0.1 * rng.standard_normal(128),
              rng.standard_normal((128, 10)) / 11, 0.1 * rng.standard_normal(10)]
    as_tensor = torch_module.from_numpy
    return (as_tensor(X), as_tensor(Y),
            [as_tensor(p.copy()).requires_grad_() for p in params])


def mlp_step(X, Y, params, log_softmax) -> None:
    """One SGD step of the MLP; the same code for symgrad and torch tensors."""
    W1, b1, W2, b2 = params
    hidden = (X @ W1 + b1).tanh()
    loss = -(Y * log_softmax(hidden @ W2 + b2)).sum(1).mean()
    loss.backward()
    for p in params:
        p.data -= 0.01 * p.grad.data
        p.grad.data.zero_()


def mlp_stepper(torch_module, log_softmax):
    X, Y, params = mlp_data(torch_module)
    for _ in range(20):  # warm-up: symgrad interprets, then compiles, the first two steps
        mlp_step(X, Y, params, log_softmax)
    return lambda: mlp_step(X, Y, params, log_softmax)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()
    os.environ.setdefault("SYMGRAD_CACHE_DIR", tempfile.mkdtemp(prefix="symgrad-bench-"))
    try:
        import torch
    except ImportError:
        torch = None

    rate_all, firsts, compiles, x = symgrad_loop(args.steps, args.n)
    xt = None if torch is None else torch_seed_variable(args.n)
    # the steady state, without the first-step interpretation and the second-step compile
    steady, torch_rate, ratio = interleaved(
        lambda: seed_step(x), None if xt is None else (lambda: seed_step(xt)), args.steps)
    print(f"seed graph, n={args.n}, {args.steps} steps")
    print(f"symgrad : {rate_all:10.0f} steps/s over the loop (incl. first-step interpretation "
          f"and the compile), {steady:.0f} steps/s steady state")
    print(f"          step 1 (numpy interpreter): {firsts[0] * 1e3:.1f} ms, "
          f"step 2 (Numba kernel compiled or loaded from disk): {firsts[1] * 1e3:.1f} ms, "
          f"step 3: {firsts[2] * 1e3:.3f} ms")
    print(f"          Numba compiles during the loop: {compiles['compiled']} "
          f"(kernels imported: {compiles['kernels']}, "
          f"loaded from disk: {compiles['loaded_from_disk']})")
    if torch is None:
        print("pytorch : not installed")
    else:
        print(f"pytorch : {torch_rate:10.0f} steps/s (eager, float64)")
        print(f"ratio   : symgrad steady state / pytorch = {ratio:.2f} "
              f"(median of {ROUNDS} alternating rounds)")
    import symgrad

    mlp_steps = max(20, args.steps // 5)
    ours = mlp_stepper(symgrad, lambda z: symgrad.log_softmax(z, axis=1))
    theirs = None if torch is None else mlp_stepper(
        torch, lambda z: torch.log_softmax(z, dim=1))
    ours_rate, theirs_rate, ratio = interleaved(ours, theirs, mlp_steps)
    print(f"MLP 256x64x128x10, {mlp_steps} SGD steps with Tensors")
    print(f"symgrad : {ours_rate:10.0f} steps/s")
    if torch is None:
        print("pytorch : not installed")
        return
    print(f"pytorch : {theirs_rate:10.0f} steps/s (eager, float64)")
    print(f"ratio   : symgrad / pytorch = {ratio:.2f} (median of {ROUNDS} alternating rounds)")


if __name__ == "__main__":
    main()
