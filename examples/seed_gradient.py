"""The seed tutorials' two gradients, computed by symgrad from plain numpy code.

Tutorial 1: out = mean(3 * (x + 2) ** 2) at x = ones(2, 2); d out / dx = 3 (x + 2) / 2 = 4.5.
Tutorial 2: y = x * x at x = [1, 2, 3, 4, 5] with gradient [5, 5, 5, 5, 5]: the
gradient of sum(y * gradient) is 2 * x * 5 = [10, 20, 30, 40, 50].

Run:  python examples/seed_gradient.py   (add --show to print the IR and the kernel)

The tutorials' own PyTorch code, run on symgrad's Tensor/Variable, is in
examples/seed0_*.py and examples/seed1_*.py.
"""

import sys

import numpy as np

import symgrad as sg


@sg.grad
def mean_square(x):
    y = x + 2
    z = y * y * 3
    return z.mean()


@sg.grad
def square(x):
    return x * x


def main(show: bool = False) -> None:
    x = np.ones((2, 2))
    g = mean_square(x)
    print("d mean(3*(x+2)**2) / dx at ones(2, 2):")
    print(g)
    assert np.array_equal(g, np.full((2, 2), 4.5)), g

    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    weights = np.array([5.0, 5.0, 5.0, 5.0, 5.0])
    g = square(x, gradient=weights)
    print("gradient of sum(x * x * [5, 5, 5, 5, 5]) at [1, 2, 3, 4, 5]:")
    print(g)
    assert np.array_equal(g, [10.0, 20.0, 30.0, 40.0, 50.0]), g

    if show:
        print("\nIR of the first gradient (forward, then adjoint):")
        print(mean_square.graph(np.ones((2, 2))))
        print("\nGenerated Numba kernel:")
        print(mean_square.source(np.ones((2, 2))))


if __name__ == "__main__":
    main(show="--show" in sys.argv)
    if note := sg.compile_note():  # kernels compiled, or compiling in the background
        print(note, file=sys.stderr)
