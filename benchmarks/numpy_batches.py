"""What watching memory handed to numpy costs a training step (symgrad/eager/exposed.py).

The MLP classifier of benchmarks/replay.py (784-256-10, ReLU, CrossEntropyLoss, Adam,
float64, batch 64), its batch given each step in three ways: ``torch.tensor(batch)``
(a copy: nothing to watch), ``torch.from_numpy(batch)`` with ``batch`` kept by the loop
(its memory may be written between forward and backward: the tensor keeps a copy of
its values when the first layer reads it, compared at backward), and
``torch.from_numpy(batch.copy())`` (nobody else holds that memory: nothing to watch).
Alternating rounds, medians of CPU microseconds per step; one thread.

Run:  python benchmarks/numpy_batches.py [--rounds 7] [--steps 100]
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


def loop(torch, how: str):
    import numpy as np

    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).double()
    rng = np.random.default_rng(0)
    batch = rng.standard_normal((64, 784))
    y = torch.tensor(rng.integers(0, 10, 64))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    make = {"tensor(batch)": lambda: torch.tensor(batch),
            "from_numpy(batch), kept": lambda: torch.from_numpy(batch),
            "from_numpy(batch.copy())": lambda: torch.from_numpy(batch.copy())}[how]

    def step():
        opt.zero_grad()
        loss_fn(model(make()), y).backward()
        opt.step()
    return step


def main() -> None:
    import symgrad

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    symgrad.set_num_threads(1)
    hows = ["tensor(batch)", "from_numpy(batch), kept", "from_numpy(batch.copy())"]
    steps = {h: loop(symgrad, h) for h in hows}
    for s in steps.values():
        for _ in range(5):  # (interpreted, then compiled)
            s()
    times: dict[str, list[float]] = {h: [] for h in hows}
    for _ in range(args.rounds):
        for h in hows:
            cpu = time.process_time()
            for _ in range(args.steps):
                steps[h]()
            times[h].append((time.process_time() - cpu) / args.steps * 1e6)
    for h in hows:
        print(f"| {h} | {statistics.median(times[h]):.0f} us/step (CPU) |")


if __name__ == "__main__":
    main()
