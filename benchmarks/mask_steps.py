"""CPU time per training step (median of 7 rounds of 100 steps, after 30 warm-up steps):

- ``masked``: ``((X @ W).masked_fill(M, 0).tanh() ** 2).mean()`` and an SGD step, W 64x64
  (the mask enters the kernel as data since session 15, as ``torch.where``'s condition);
- ``plain``: a Linear(64,64)-Tanh-Linear(64,1) step, one SGD over the parameters;
- ``post``: the same model with PyTorch's "optimizer in backward" idiom (one SGD per
  parameter, stepped in its ``register_post_accumulate_grad_hook``).

    python benchmarks/mask_steps.py masked
"""

from __future__ import annotations

import sys
import time

import numpy as np

import symgrad as torch


def masked(n: int = 64):
    rng = np.random.default_rng(0)
    W = torch.tensor(rng.normal(size=(n, n)) * 0.1, requires_grad=True)
    X = torch.tensor(rng.normal(size=(n, n)))
    M = torch.tensor(rng.random((n, n)) < 0.3)
    opt = torch.optim.SGD([W], lr=0.01)

    def step():
        loss = ((X @ W).masked_fill(M, 0.0).tanh() ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def mlp(hooked: bool, n: int = 64):
    rng = np.random.default_rng(0)
    model = torch.nn.Sequential(torch.nn.Linear(n, n), torch.nn.Tanh(),
                                torch.nn.Linear(n, 1)).double()
    X, Y = torch.tensor(rng.normal(size=(32, n))), torch.tensor(rng.normal(size=(32, 1)))
    params = list(model.parameters())
    if not hooked:
        opt = torch.optim.SGD(params, lr=0.01)

        def step():
            opt.zero_grad()
            ((model(X) - Y) ** 2).mean().backward()
            opt.step()
        return step
    each = {p: torch.optim.SGD([p], lr=0.01) for p in params}

    def hook(p):
        each[p].step()
        each[p].zero_grad()
    for p in params:
        p.register_post_accumulate_grad_hook(hook)
    return lambda: ((model(X) - Y) ** 2).mean().backward()


def main() -> None:
    case = sys.argv[1] if len(sys.argv) > 1 else "masked"
    step = {"masked": masked, "plain": lambda: mlp(False), "post": lambda: mlp(True)}[case]()
    for _ in range(30):
        step()
    rounds = []
    for _ in range(7):
        t = time.process_time()
        for _ in range(100):
            step()
        rounds.append((time.process_time() - t) / 100 * 1e6)
    print(f"{case}: {np.median(rounds):.1f} us a step (CPU)")


if __name__ == "__main__":
    main()
