"""The MLP classifier's training step of benchmarks/replay.py, piece by piece (issue 31,
item 1): CPU µs per step of zero_grad, each forward operation, the loss, backward and
Adam's step, for symgrad and PyTorch, and the step of a hand-written numpy version (the same
products and symgrad's fused Adam loop, no graph, no Tensor): the floor of any numpy
implementation on this machine. One thread each; medians of interleaved rounds.

Run:  OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/mlp_pieces.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("SYMGRAD_TIERED", "0")

import numpy as np  # noqa: E402

PIECES = ("zero_grad", "linear 1", "relu", "linear 2", "log_softmax", "nll_loss", "backward",
          "step")


def build(lib, state=None):
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).double()
    if state is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    rng = np.random.default_rng(0)
    x, y = lib.tensor(rng.standard_normal((64, 784))), lib.tensor(rng.integers(0, 10, 64))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    l1, _, l2 = model
    f = nn.functional
    clock = time.process_time

    def pieces(n: int) -> np.ndarray:
        total = np.zeros(len(PIECES))
        for _ in range(n):
            t = [clock()]
            opt.zero_grad()
            t.append(clock())
            h = f.linear(x, l1.weight, l1.bias)
            t.append(clock())
            h = h.relu()
            t.append(clock())
            o = f.linear(h, l2.weight, l2.bias)
            t.append(clock())
            logp = o.log_softmax(1)
            t.append(clock())
            loss = f.nll_loss(logp, y)
            t.append(clock())
            loss.backward()
            t.append(clock())
            opt.step()
            t.append(clock())
            total += np.diff(t)
        return total / n * 1e6
    return model, pieces


def numpy_step(state):
    """The same step in numpy: forward, the closed-form gradients, fused Adam."""
    from symgrad.eager import fused_adam

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((64, 784)), rng.integers(0, 10, 64)
    params = [state[k].copy() for k in ("0.weight", "0.bias", "2.weight", "2.bias")]
    m, v = [np.zeros_like(p) for p in params], [np.zeros_like(p) for p in params]
    rows, count = np.arange(64), [0]

    def step() -> None:
        w1, b1, w2, b2 = params
        h = x @ w1.T + b1
        a = np.maximum(h, 0)
        o = a @ w2.T + b2
        top = o.max(1, keepdims=True)
        logp = o - (np.log(np.exp(o - top).sum(1, keepdims=True)) + top)
        g = np.exp(logp)
        g[rows, y] -= 1
        g /= 64
        gh = (g @ w2) * (h > 0)
        grads = (gh.T @ x, gh.sum(0), g.T @ a, g.sum(0))
        count[0] += 1
        for p, gp, mp, vp in zip(params, grads, m, v):
            fused_adam.update(p, gp, mp, vp, beta1=0.9, beta2=0.999, weight_decay=0,
                              decoupled=False, lr=1e-3, step_size=1e-3 / (1 - 0.9 ** count[0]),
                              correction2_sqrt=(1 - 0.999 ** count[0]) ** 0.5, eps=1e-8)
    step.params = params  # type: ignore[attr-defined]
    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    import torch

    import symgrad

    torch.set_num_threads(1)
    symgrad.set_num_threads(1)
    reference, torch_pieces = build(torch)
    state = {k: t.detach().numpy() for k, t in reference.state_dict().items()}
    _, ours = build(symgrad, state)
    floor = numpy_step(state)
    runs: dict[str, list] = {"symgrad": [], "PyTorch": [], "numpy": []}
    for _ in range(2):  # warm-up: symgrad interprets, then compiles, its first steps
        ours(5), torch_pieces(5), floor()
    for _ in range(args.rounds):
        runs["symgrad"].append(ours(args.steps))
        runs["PyTorch"].append(torch_pieces(args.steps))
        start = time.process_time()
        for _ in range(args.steps):
            floor()
        runs["numpy"].append((time.process_time() - start) / args.steps * 1e6)
    print("| CPU µs per step | " + " | ".join(PIECES) + " | total |")
    print("|---" * (len(PIECES) + 2) + "|")
    for name in ("symgrad", "PyTorch"):
        med = np.median(np.array(runs[name]), axis=0)
        print(f"| {name} | " + " | ".join(f"{t:.0f}" for t in med) + f" | {med.sum():.0f} |")
    print(f"| numpy step (no graph) | {' | ' * (len(PIECES) - 1)} | "
          f"{statistics.median(runs['numpy']):.0f} |")


if __name__ == "__main__":
    main()
