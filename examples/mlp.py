"""A two-layer network (tanh hidden layer, softmax output) trained on synthetic data.

Three classes of points on concentric rings in the plane, which no linear
model separates. The loss is the mean cross-entropy, computed with
``sg.log_softmax``, which subtracts the row maximum, so ``exp`` never overflows.
Plain gradient descent with momentum; the script asserts that the loss goes
down and that the network fits the training data.

Run:  python examples/mlp.py [--steps 500] [--hidden 16]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import symgrad as sg


def loss(W1, b1, W2, b2, X, Y):
    """Mean cross-entropy of one-hot labels ``Y`` under the network's softmax."""
    hidden = np.tanh(X @ W1 + b1)
    logits = hidden @ W2 + b2
    return -np.mean(np.sum(Y * sg.log_softmax(logits, axis=1), axis=1))


def make_data(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    labels = rng.integers(0, 3, n)
    radius = 1.0 + labels + 0.15 * rng.normal(size=n)
    angle = rng.uniform(0, 2 * np.pi, n)
    X = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    return X, np.eye(3)[labels]


def main(steps: int = 500, n: int = 300, hidden: int = 16, lr: float = 0.1, seed: int = 0,
         verbose: bool = True) -> dict:
    rng = np.random.default_rng(seed)
    X, Y = make_data(n, rng)
    params = [rng.normal(size=(2, hidden)), np.zeros(hidden),
              rng.normal(size=(hidden, 3)) / np.sqrt(hidden), np.zeros(3)]
    velocity = [np.zeros_like(p) for p in params]
    step = sg.value_and_grad(loss, argnums=(0, 1, 2, 3))
    losses = []
    for i in range(steps):
        value, grads = step(*params, X, Y)
        losses.append(float(value))
        for k, g in enumerate(grads):
            velocity[k] = 0.9 * velocity[k] - lr * g
            params[k] = params[k] + velocity[k]
        if verbose and (i % max(1, steps // 5) == 0 or i == steps - 1):
            print(f"step {i:4d}  loss {value:.4f}")
    W1, b1, W2, b2 = params
    predicted = np.argmax(np.tanh(X @ W1 + b1) @ W2 + b2, axis=1)
    accuracy = float(np.mean(predicted == np.argmax(Y, axis=1)))
    if verbose:
        print(f"training accuracy {accuracy:.3f}")

    assert losses[-1] < 0.3 * losses[0], (losses[0], losses[-1])
    assert accuracy > 0.85, accuracy
    return {"losses": losses, "accuracy": accuracy, "params": params}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--hidden", type=int, default=16)
    args = parser.parse_args()
    main(steps=args.steps, hidden=args.hidden)
    if note := sg.compile_note():  # kernels compiled, or compiling in the background
        print(note, file=sys.stderr)
