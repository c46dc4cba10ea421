"""Eager training steps against PyTorch eager (issue 31, item 1): steps per second.

Four programs, each run by symgrad's Tensor API and by PyTorch from the same
weights, in one process, in alternating rounds (medians of the rounds, and the
median of the per-round ratios, so that the load of a shared machine weighs on
both): the MLP classifier (784-256-10, ReLU, CrossEntropyLoss, Adam, batch 64,
float64), the seeds' train loop (``y = x + 2; z = y * y * 3; z.mean()``, n = 1000,
``x.data -=`` updates: benchmarks/train_loop.py), and LeNet-5 and the transformer
encoder of benchmarks/torch_nn.py (float32, batch 64, Adam). One thread each.
Also prints :func:`symgrad.eager.replay.replay_stats`: the backward runs whose
kernel read the forward's saved values instead of recomputing them.

Run:  python benchmarks/replay.py [--rounds 7] [--only mlp,seed,lenet,transformer]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# compile on the calling thread at a structure's second step, inside the warm-up: tiered
# (the default) interprets while the worker compiles, so the first timed rounds ran on the
# interpreter (the seed loop after the MLP: 94-105 us per CPU step instead of 60-67)
os.environ.setdefault("SYMGRAD_TIERED", "0")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def mlp_classifier(torch, state=None):
    """The 784-256-10 classifier's training step (Adam), float64, batch 64."""
    import numpy as np

    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).double()
    if state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((64, 784)))
    y = torch.tensor(rng.integers(0, 10, 64))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    return model, step


def seed_loop(torch, state=None):
    """The seeds' graph, rebuilt and differentiated every step (n = 1000)."""
    import numpy as np
    from train_loop import seed_step

    x = torch.tensor(np.random.default_rng(0).standard_normal(1000), requires_grad=True)
    return None, lambda: seed_step(x)


def from_torch_nn(build):
    def make(torch, state=None):
        import torch_nn

        model, step = torch_nn.make(torch, getattr(torch_nn, build), state)
        return model, step
    return make


PROGRAMS = {"mlp": ("MLP classifier 784-256-10, Adam, float64, batch 64", mlp_classifier, 200),
            "seed": ("seed train loop, n=1000", seed_loop, 2000),
            "lenet": ("LeNet-5, Adam, float32, batch 64", from_torch_nn("lenet"), 10),
            "transformer": ("transformer encoder (2 layers, d=64), Adam, float32, batch 64",
                            from_torch_nn("transformer"), 10)}


def rate(step, n: int) -> tuple[float, float]:
    """Steps per second of wall time and of this process's CPU time (both libraries run
    on one thread: on a machine shared with other work, CPU time counts only the
    work of the step, wall time also the time the scheduler gave to others)."""
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        step()
    return n / (time.perf_counter() - start), n / max(time.process_time() - cpu, 1e-9)


def measure(make, steps: int, rounds: int) -> dict[str, float]:
    import torch as torch_real

    import symgrad

    torch_real.set_num_threads(1)
    symgrad.set_num_threads(1)
    reference, torch_step = make(torch_real)
    state = None if reference is None else {
        k: v.detach().numpy() for k, v in reference.state_dict().items()}
    _, ours = make(symgrad, state)
    for _ in range(5):  # symgrad interprets, then compiles, its first steps
        ours()
        torch_step()
    per_round = max(1, steps // rounds)
    a, b = [], []
    for _ in range(rounds):
        a.append(rate(ours, per_round))
        b.append(rate(torch_step, per_round))
    out = {}
    for k, what in enumerate(("", " cpu")):
        ra, rb = [x[k] for x in a], [x[k] for x in b]
        out.update({"symgrad" + what: statistics.median(ra), "torch" + what: statistics.median(rb),
                    "ratio" + what: statistics.median(x / y for x, y in zip(ra, rb))})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="mlp,seed,lenet,transformer")
    args = parser.parse_args()
    try:
        from symgrad.eager.replay import replay_stats
    except ImportError:  # symgrad before the replay (to measure "before")
        def replay_stats():
            return {"replayed": 0, "recomputed": 0}
    print("| program | symgrad steps/s | PyTorch eager steps/s | ratio | symgrad steps/CPU-s | "
          "PyTorch steps/CPU-s | CPU ratio |")
    print("|---|---|---|---|---|---|---|")
    for name in args.only.split(","):
        title, make, steps = PROGRAMS[name]
        before = replay_stats()
        r = measure(make, steps, args.rounds)
        after = replay_stats()
        print(f"| {title} | {r['symgrad']:.0f} | {r['torch']:.0f} | {r['ratio']:.2f}x | "
              f"{r['symgrad cpu']:.0f} | {r['torch cpu']:.0f} | {r['ratio cpu']:.2f}x |",
              flush=True)
        print(f"  (backward runs replaying saved forward values: "
              f"{after['replayed'] - before['replayed']}, recomputing: "
              f"{after['recomputed'] - before['recomputed']})", flush=True)


if __name__ == "__main__":
    main()
