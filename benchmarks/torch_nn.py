"""LeNet-5 and a transformer encoder training step: symgrad's Tensor API against PyTorch
eager, float32, batch 64, one thread each (issue 27's speed targets: each step at
most 2x PyTorch's time).

Both libraries run the same program (the ``torch`` module is a parameter), from
the same weights; rounds alternate between them so that the load of a shared
machine weighs on both, and the medians of the rounds are compared. Writes the
section "## CNN and transformer training steps (issue 27)" of docs/benchmarks.md
with ``--write``.

Run:  OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/torch_nn.py [--reuse-memory] [--write]
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

HERE = Path(__file__).resolve().parent
ROUNDS, STEPS = 5, 3


def lenet(torch):
    nn, F = torch.nn, torch.nn.functional

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 6, 5, padding=2), nn.Conv2d(6, 16, 5)
            self.fc1, self.fc2, self.fc3 = (nn.Linear(400, 120), nn.Linear(120, 84),
                                            nn.Linear(84, 10))

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.avg_pool2d(F.relu(self.conv2(x)), 2)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))))

    return LeNet(), (64, 1, 28, 28), 10


def transformer(torch):
    nn = torch.nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, dropout=0.0,
                                               batch_first=True, norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(64, 10)

        def forward(self, x):
            # (its dtype: float32 in both; symgrad's default dtype is float64, PyTorch's
            # float32, and a float64 mask would make the attention float64)
            mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1], dtype=x.dtype)
            return self.head(self.encoder(x, mask=mask).mean(1))

    return Encoder(), (64, 16, 64), 10


def setup(torch, build, state=None):
    """``build``'s model in float32 (with ``state``'s weights), a batch, Adam and the loss."""
    import numpy as np

    torch.manual_seed(0)
    model, shape, classes = build(torch)
    model = model.float()
    if state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal(shape).astype(np.float32))
    y = torch.tensor(rng.integers(0, classes, shape[0]))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return model, x, y, opt, torch.nn.CrossEntropyLoss()


def make(torch, build, state=None):
    model, x, y, opt, loss_fn = setup(torch, build, state)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return model, step


def measure(build) -> dict[str, float]:
    import torch as torch_real

    import symgrad

    torch_real.set_num_threads(1)
    symgrad.set_num_threads(1)
    reference, torch_step = make(torch_real, build)
    state = {k: v.detach().numpy() for k, v in reference.state_dict().items()}
    _, symgrad_step = make(symgrad, build, state)
    start = time.perf_counter()
    first = [symgrad_step(), symgrad_step(), symgrad_step()]  # interprets, compiles, runs
    warm_up = time.perf_counter() - start
    torch_step()
    times: dict[str, list[float]] = {"symgrad": [], "torch": []}
    for _ in range(ROUNDS):
        for name, step in (("symgrad", symgrad_step), ("torch", torch_step)):
            start = time.perf_counter()
            for _ in range(STEPS):
                step()
            times[name].append((time.perf_counter() - start) / STEPS)
    result = {name: statistics.median(t) for name, t in times.items()}
    result["first three symgrad steps"] = warm_up
    result["first loss"] = first[0]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--reuse-memory", action="store_true",
                        help="sg.reuse_memory() first: freed memory stays in the process "
                             "(process-wide, so PyTorch's steps run under it too)")
    args = parser.parse_args()
    if args.reuse_memory:
        import symgrad

        symgrad.reuse_memory()
    lines = ["## CNN and transformer training steps (issue 27)", "",
             "`OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/torch_nn.py"
             + (" --reuse-memory" if args.reuse_memory else "") + "`, float32, "
             "batch 64, Adam, one thread each; medians of alternating rounds.", "",
             "| program | symgrad step | PyTorch eager step | ratio | target (<= 2x) | "
             "symgrad's first 3 steps |", "|---|---|---|---|---|---|"]
    for name, build in (("LeNet-5", lenet), ("transformer encoder (2 layers, d=64)",
                                              transformer)):
        r = measure(build)
        ratio = r["symgrad"] / r["torch"]
        lines.append(f"| {name} | {r['symgrad'] * 1e3:.1f} ms | {r['torch'] * 1e3:.1f} ms | "
                     f"{ratio:.2f}x | {'met' if ratio <= 2 else 'missed'} | "
                     f"{r['first three symgrad steps']:.1f} s |")
        print(lines[-1], flush=True)
    if args.write:
        sys.path.insert(0, str(HERE))
        from sections import write_section

        write_section(lines[0], "\n".join(lines) + "\n", HERE.parent / "docs" / "benchmarks.md")


if __name__ == "__main__":
    main()
