"""Minimize the Rosenbrock function with SciPy's BFGS and a symgrad gradient.

``scipy.optimize.minimize(rosenbrock, x0, jac=sg.grad(rosenbrock))``: SciPy
calls the plain numpy function for values and the compiled symgrad kernel for
gradients, and reaches the minimum at ``x = (1, ..., 1)``.

Run:  python examples/rosenbrock_scipy.py [--n 5] [--method BFGS]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import scipy.optimize

import symgrad as sg


def rosenbrock(x):
    """sum(100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2) over i < n - 1."""
    head, tail = x[:-1], x[1:]
    return np.sum(100.0 * (tail - head**2) ** 2 + (1.0 - head) ** 2)


#: SciPy's tutorial starting point; from (-1.2, 1, -1.2, 1, ...) BFGS can stop at the
#: local minimum the Rosenbrock function has near (-1, 1, ..., 1) for n >= 4
X0 = np.array([1.3, 0.7, 0.8, 1.9, 1.2])


def main(n: int = 5, method: str = "BFGS", verbose: bool = True) -> dict:
    x0 = np.resize(X0, n)
    jac = sg.grad(rosenbrock)
    options = {"gtol": 1e-8, "maxiter": 10_000}
    if method == "L-BFGS-B":
        options["ftol"] = 1e-15  # its default stops at a relative decrease of 2e-9
    result = scipy.optimize.minimize(rosenbrock, x0, jac=jac, method=method, options=options)
    if verbose:
        print(f"{method}: {result.message} after {result.nit} iterations, "
              f"{result.njev} gradients")
        print(f"x = {np.array2string(result.x, precision=8)}")
        print(f"f(x) = {result.fun:.3e}")

    np.testing.assert_allclose(result.x, np.ones(n), atol=1e-5)
    assert result.fun < 1e-10, result.fun
    np.testing.assert_allclose(jac(np.ones(n)), np.zeros(n), atol=0)  # exactly 0 at the minimum
    return {"x": result.x, "fun": result.fun, "nit": result.nit}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--method", default="BFGS", choices=["BFGS", "L-BFGS-B"])
    args = parser.parse_args()
    main(n=args.n, method=args.method)
    if note := sg.compile_note():  # kernels compiled, or compiling in the background
        print(note, file=sys.stderr)
