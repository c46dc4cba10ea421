"""Where a LeNet-5 training step goes, layer by layer: symgrad's Tensor API against PyTorch.

The step of benchmarks/torch_nn.py (float32, batch 64, Adam, one thread), with
``time.process_time`` read around each layer of the forward ("conv1" includes
``zero_grad``), ``backward()`` and ``opt.step()``; symgrad's and PyTorch's steps
alternately in one process, medians per column in CPU ms (the forward's column:
the median of the steps' sums of the first six).

Run:  python benchmarks/lenet_layers.py [--steps 60] [--batch 64]
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
os.environ.setdefault("SYMGRAD_TIERED", "0")
sys.path.insert(0, str(Path(__file__).resolve().parent))

COLUMNS = ("conv1", "relu + max pool", "conv2", "relu + avg pool", "fc's", "loss",
           "backward", "Adam")


def timed_step(torch, batch: int, state=None):
    """The model (for its weights) and ``step(record)``, which appends one row of ms."""
    import torch_nn

    def build(torch):
        model, shape, classes = torch_nn.lenet(torch)
        return model, (batch, *shape[1:]), classes

    model, x, y, opt, loss_fn = torch_nn.setup(torch, build, state)
    F, now = torch.nn.functional, time.process_time

    def step(record):
        t = [now()]
        opt.zero_grad()
        h = model.conv1(x)
        t.append(now())
        h = F.max_pool2d(F.relu(h), 2)
        t.append(now())
        h = model.conv2(h)
        t.append(now())
        h = F.avg_pool2d(F.relu(h), 2)
        t.append(now())
        h = model.fc3(F.relu(model.fc2(F.relu(model.fc1(torch.flatten(h, 1))))))
        t.append(now())
        loss = loss_fn(h, y)
        t.append(now())
        loss.backward()
        t.append(now())
        opt.step()
        t.append(now())
        loss.item()
        if record is not None:
            record.append([(b - a) * 1e3 for a, b in zip(t, t[1:])])
    return model, step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    import torch as torch_real

    import symgrad

    torch_real.set_num_threads(1)
    symgrad.set_num_threads(1)
    reference, torch_step = timed_step(torch_real, args.batch)
    state = {k: v.detach().numpy() for k, v in reference.state_dict().items()}
    _, symgrad_step = timed_step(symgrad, args.batch, state)
    for _ in range(4):  # (symgrad interprets, compiles, then runs its backward)
        symgrad_step(None)
        torch_step(None)
    rows: dict[str, list] = {"symgrad": [], "PyTorch": []}
    for _ in range(args.steps):
        symgrad_step(rows["symgrad"])
        torch_step(rows["PyTorch"])
    print("| CPU ms | " + " | ".join(COLUMNS) + " | forward | step |")
    print("|---" * (len(COLUMNS) + 3) + "|")
    for name, r in rows.items():
        medians = [statistics.median(c) for c in zip(*r)]
        forward = statistics.median(sum(s[:6]) for s in r)
        step = statistics.median(sum(s) for s in r)
        print(f"| {name} | " + " | ".join(f"{m:.2f}" for m in medians)
              + f" | {forward:.2f} | {step:.2f} |")


if __name__ == "__main__":
    main()
