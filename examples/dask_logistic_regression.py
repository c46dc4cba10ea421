"""Logistic regression on a Dask array, fitted by SciPy's L-BFGS-B with symgrad's gradient.

The data are a Dask array of ``n`` rows and ``d`` features, generated chunk by
chunk (so nothing here needs the whole array in memory), with labels from a
known linear boundary. The loss is the same numpy code one would write for an
array in memory,

    mean(logaddexp(0, z) - y * z) + lam / 2 * |w|^2,   z = X @ w + b,

and ``sg.value_and_grad`` of it, called with the Dask arrays, runs one pass
over the chunks per evaluation: each chunk's value and gradient contribution
with the compiled kernel, summed by Dask's tree reduction, on Dask's current
scheduler (threads by default; a ``dask.distributed.Client`` if one is active).

The script asserts that the fit is right: the gradient at the optimum is ~0, the
fitted weights point along the true ones, and (when the data fit in memory) the
Dask gradient equals the in-memory one at the optimum.

Run:  python examples/dask_logistic_regression.py [--n 2000000] [--d 20] [--chunk 200000]
      [--no-persist]   (regenerate the chunks at each evaluation instead of keeping them;
                        for data larger than memory)
"""

from __future__ import annotations

import os

# One BLAS thread per process, as Dask recommends with its threaded scheduler (the
# chunks' kernels call BLAS from several threads at once); set before numpy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402
import scipy.optimize  # noqa: E402

import symgrad as sg  # noqa: E402

LAM = 1e-4


def loss(theta, X, y):
    """Mean negative log-likelihood plus a small ridge penalty; theta = (w, b)."""
    w, b = theta[:-1], theta[-1]
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * LAM * np.sum(w * w)


def make_data(n: int, d: int, chunk: int, seed: int) -> tuple[da.Array, da.Array, np.ndarray]:
    """Features N(0, 1), labels from a known boundary with logistic noise, as Dask arrays."""
    w_true = np.random.default_rng(seed).normal(size=d) / np.sqrt(d) * 3.0
    rng = da.random.default_rng(seed)
    X = rng.normal(size=(n, d), chunks=(chunk, d))
    noise = rng.logistic(size=n, chunks=chunk)
    y = (X @ w_true + 0.5 + noise > 0).astype(np.float64)
    return X, y, w_true


def main(n: int = 2_000_000, d: int = 20, chunk: int = 200_000, seed: int = 0,
         persist: bool = True, verbose: bool = True) -> dict:
    X, y, w_true = make_data(n, d, chunk, seed)
    if persist:
        X, y = dask.persist(X, y)
    value_and_grad = sg.value_and_grad(loss)
    evaluations = []

    def fun(theta):
        t0 = time.perf_counter()
        value, grad = value_and_grad(theta, X, y)
        evaluations.append(time.perf_counter() - t0)
        return float(value), grad

    start = time.perf_counter()
    result = scipy.optimize.minimize(fun, np.zeros(d + 1), jac=True, method="L-BFGS-B",
                                     options={"gtol": 1e-9, "ftol": 1e-15, "maxiter": 500})
    elapsed = time.perf_counter() - start
    theta = result.x
    grad_norm = float(np.max(np.abs(fun(theta)[1])))
    cosine = float(theta[:-1] @ w_true / np.linalg.norm(theta[:-1]) / np.linalg.norm(w_true))
    if verbose:
        print(f"{n} x {d} in chunks of {chunk} rows: {result.nit} iterations, "
              f"{len(evaluations)} evaluations, {elapsed:.1f} s "
              f"(median evaluation {np.median(evaluations) * 1e3:.0f} ms)")
        print(f"loss {result.fun:.6f}, largest gradient entry {grad_norm:.1e}, "
              f"cosine(w, w_true) {cosine:.4f}, intercept {theta[-1]:.3f} (true 0.5)")

    assert result.success, result.message
    assert grad_norm < 1e-6, grad_norm
    assert cosine > 0.99 if n >= 100_000 else cosine > 0.9, cosine
    checked = False
    if n * d <= 50_000_000:  # fits in memory: the same gradient on numpy arrays
        Xn, yn = dask.compute(X, y)
        _, in_memory = value_and_grad(theta, Xn, yn)
        np.testing.assert_allclose(fun(theta)[1], in_memory, rtol=1e-8,
                                   atol=1e-12 * np.max(np.abs(in_memory)) + 1e-15)
        checked = True
    return {"theta": theta, "w_true": w_true, "result": result, "grad_norm": grad_norm,
            "cosine": cosine, "evaluations": evaluations, "checked_in_memory": checked}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2_000_000, help="rows")
    parser.add_argument("--d", type=int, default=20, help="features")
    parser.add_argument("--chunk", type=int, default=200_000, help="rows per chunk")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-persist", dest="persist", action="store_false",
                        help="regenerate the chunks at each evaluation (out of core)")
    args = parser.parse_args()
    main(args.n, args.d, args.chunk, args.seed, args.persist)
    if note := sg.compile_note():  # kernels compiled, or compiling in the background
        print(note, file=sys.stderr)
