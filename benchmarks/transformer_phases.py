"""The transformer encoder's training step of benchmarks/torch_nn.py split into its phases:
forward (with ``zero_grad``), backward and Adam's step, CPU milliseconds of symgrad's and
PyTorch's, in one process, one step of each in turn (medians), after 5 warm-up steps.

Run:  OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/transformer_phases.py [steps]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("SYMGRAD_TIERED", "0")  # (compile inside the warm-up, as replay.py)
sys.path.insert(0, str(Path(__file__).resolve().parent))
PHASES = ("forward", "backward", "adam")


def make(torch, state=None):
    """The step of torch_nn.transformer, appending each phase's CPU seconds to ``times``."""
    import torch_nn

    model, x, y, opt, loss_fn = torch_nn.setup(torch, torch_nn.transformer, state)

    def step(times: dict[str, list[float]]) -> None:
        marks = [time.process_time()]
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        marks.append(time.process_time())
        loss.backward()
        marks.append(time.process_time())
        opt.step()
        marks.append(time.process_time())
        for name, a, b in zip(PHASES, marks, marks[1:]):
            times[name].append(b - a)
    return model, step


def main() -> None:
    import torch as torch_real

    import symgrad

    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    torch_real.set_num_threads(1)
    symgrad.set_num_threads(1)
    reference, torch_step = make(torch_real)
    _, symgrad_step = make(symgrad, {k: v.detach().numpy()
                                     for k, v in reference.state_dict().items()})
    times = {lib: {p: [] for p in PHASES} for lib in ("symgrad", "torch")}
    for k in range(5 + steps):
        for lib, step in (("symgrad", symgrad_step), ("torch", torch_step)):
            step(times[lib] if k >= 5 else {p: [] for p in PHASES})
    print("| phase | symgrad CPU ms | PyTorch CPU ms | symgrad / PyTorch time |")
    print("|---|---|---|---|")
    for p in (*PHASES, "step"):
        a, b = (statistics.median(map(sum, zip(*t.values()))) if p == "step"
                else statistics.median(t[p]) for t in times.values())
        print(f"| {p} | {a * 1e3:.2f} | {b * 1e3:.2f} | {a / b:.2f} |")


if __name__ == "__main__":
    main()
