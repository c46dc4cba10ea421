"""A small regression model trained the seeds' way: Variables, backward(), .grad.data.zero_().

A one-hidden-layer tanh network (written with broadcasting, so no matrix product
is needed) fits y = sin(2x) + noise. The graph is rebuilt every step, as in
PyTorch, but its structure never changes: step 1 runs the backward pass on the
numpy interpreter, step 2 compiles it with Numba, later steps reuse the kernel.

Run:  python examples/train_loop.py [steps]
"""

import sys

import numpy as np

import symgrad as torch
from symgrad.autograd import Variable


def train(steps: int = 300, lr: float = 0.1, verbose: bool = True) -> list[float]:
    """Train and return the loss of every step."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x_np = np.linspace(-1.5, 1.5, 64).reshape(-1, 1)
    x = Variable(torch.from_numpy(x_np))
    y = Variable(torch.from_numpy(np.sin(2 * x_np[:, 0]) + 0.05 * rng.standard_normal(64)))

    hidden = 16
    w1 = Variable(torch.randn(1, hidden), requires_grad=True)
    b1 = Variable(torch.zeros(hidden), requires_grad=True)
    w2 = Variable(torch.randn(hidden) * 0.5, requires_grad=True)
    b2 = Variable(torch.zeros(1), requires_grad=True)
    params = [w1, b1, w2, b2]

    losses = []
    for step in range(steps):
        h = torch.tanh(x * w1 + b1)               # (64, hidden)
        pred = (h * w2).sum(dim=1) + b2           # (64,)
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        for p in params:
            p.data -= lr * p.grad.data            # plain gradient descent on the values
            p.grad.data.zero_()
        losses.append(loss.item())
        if verbose and (step % max(1, steps // 10) == 0 or step == steps - 1):
            print(f"step {step:4d}  loss {loss.item():.6f}")
    return losses


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    losses = train(steps)
    stats = torch.autograd.backward_stats()
    print(f"backward runs: {stats['interpreted']} interpreted, {stats['compiled_runs']} compiled")
    assert losses[-1] < 0.5 * losses[0], "the loss did not go down"
    if note := torch.compile_note():  # kernels compiled, or compiling in the background
        print(note, file=sys.stderr)
