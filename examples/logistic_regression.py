"""Logistic regression trained by gradient descent with ``sg.value_and_grad``.

Synthetic data: two Gaussian classes in ``dim`` dimensions, labels from a true
linear boundary. The loss is the mean negative log-likelihood,
``mean(softplus(z) - y * z)`` with ``z = X @ w + b``; ``sg.softplus`` never
overflows (its gradient at z = 800 is exactly 1). The script asserts that the
loss goes down and that the trained model classifies the training data well.

Run:  python examples/logistic_regression.py [--steps 200] [--n 500]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import symgrad as sg


def loss(w, b, X, y):
    """Mean negative log-likelihood of labels ``y`` (0 or 1) under sigmoid(X @ w + b)."""
    z = X @ w + b
    return np.mean(sg.softplus(z) - y * z)


def make_data(n: int, dim: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    true_w = rng.normal(size=dim)
    X = rng.normal(size=(n, dim))
    y = (X @ true_w + 0.1 * rng.normal(size=n) > 0.0).astype(float)
    return X, y


def main(steps: int = 200, n: int = 500, dim: int = 5, lr: float = 1.0, seed: int = 0,
         verbose: bool = True) -> dict:
    rng = np.random.default_rng(seed)
    X, y = make_data(n, dim, rng)
    w, b = np.zeros(dim), 0.0
    step = sg.value_and_grad(loss, argnums=(0, 1))
    losses = []
    for i in range(steps):
        value, (gw, gb) = step(w, b, X, y)
        losses.append(float(value))
        w, b = w - lr * gw, b - lr * gb
        if verbose and (i % max(1, steps // 5) == 0 or i == steps - 1):
            print(f"step {i:4d}  loss {value:.5f}")
    accuracy = float(np.mean(((X @ w + b) > 0.0) == (y > 0.5)))
    if verbose:
        print(f"training accuracy {accuracy:.3f}")

    # gradient descent with a step below 4/L on this convex loss never goes up
    assert all(b <= a + 1e-12 for a, b in zip(losses, losses[1:])), "loss went up"
    assert losses[-1] < 0.5 * losses[0], (losses[0], losses[-1])
    assert accuracy > 0.9, accuracy
    return {"losses": losses, "accuracy": accuracy, "w": w, "b": b}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--n", type=int, default=500)
    args = parser.parse_args()
    main(steps=args.steps, n=args.n)
    if note := sg.compile_note():  # kernels compiled, or compiling in the background
        print(note, file=sys.stderr)
