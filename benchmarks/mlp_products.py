"""The five matrix products of the MLP classifier's step (benchmarks/replay.py, issue 31,
item 1: 784-256-10, batch 64, float64), each on numpy's OpenBLAS (as numpy's ``@``, with
``out=``, other operand orders), on scipy's ``dgemm`` (transposed copies, the trans flags
on Fortran views, beta = 0 or 1 into an existing buffer) and PyTorch's ``torch.mm`` (MKL):
CPU µs per product, one thread, warm operands, medians of rounds.

Run:  python benchmarks/mlp_products.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402


def cases(torch, dgemm) -> dict[str, dict]:
    """Per product, its variants (each a call of no arguments)."""
    rng = np.random.default_rng(0)
    x, w1, h = (rng.standard_normal(s) for s in ((64, 784), (256, 784), (64, 256)))
    w2, g, gh = (rng.standard_normal(s) for s in ((10, 256), (64, 10), (64, 256)))
    tx, tw1, th, tw2, tg, tgh = map(torch.from_numpy, (x, w1, h, w2, g, gh))
    out1, outw = np.zeros((64, 256)), np.zeros((256, 784))
    w1f, ghf, xf = np.asfortranarray(w1), np.asfortranarray(gh), np.asfortranarray(x)
    return {
        "forward x @ W1.T (64x784 by 784x256)": {
            "numpy x @ W1.T": lambda: x @ w1.T,
            "numpy, out=": lambda: np.matmul(x, w1.T, out=out1),
            "numpy, W1 in F order": lambda: x @ w1f.T,
            "dgemm(x, W1, trans_b) (f2py copies to F order)": lambda: dgemm(1.0, x, w1, trans_b=1),
            "dgemm on F views, trans_a (no copy)": lambda: dgemm(1.0, w1.T, x.T, trans_a=1).T,
            "dgemm F views, beta=0 into a buffer": lambda: dgemm(
                1.0, w1.T, x.T, trans_a=1, beta=0.0, c=out1.T, overwrite_c=1),
            "dgemm F views, beta=1 into a buffer": lambda: dgemm(
                1.0, w1.T, x.T, trans_a=1, beta=1.0, c=out1.T, overwrite_c=1),
            "torch.mm": lambda: torch.mm(tx, tw1.t())},
        "weight gradient gh.T @ x (256x64 by 64x784)": {
            "numpy gh.T @ x": lambda: gh.T @ x,
            "numpy, out=": lambda: np.matmul(gh.T, x, out=outw),
            "numpy (x.T @ gh).T": lambda: (x.T @ gh).T,
            "numpy, gh and x in F order": lambda: ghf.T @ xf,
            "dgemm(gh, x, trans_a) (f2py copies)": lambda: dgemm(1.0, gh, x, trans_a=1),
            "dgemm on F views, trans_b (no copy)": lambda: dgemm(1.0, x.T, gh.T, trans_b=1).T,
            "dgemm F views, beta=0 into a buffer": lambda: dgemm(
                1.0, x.T, gh.T, trans_b=1, beta=0.0, c=outw.T, overwrite_c=1),
            "dgemm F views, beta=1 into a buffer": lambda: dgemm(
                1.0, x.T, gh.T, trans_b=1, beta=1.0, c=outw.T, overwrite_c=1),
            "buffer.fill(0) alone (1.6 MB)": lambda: outw.fill(0.0),
            "torch.mm": lambda: torch.mm(tgh.t(), tx)},
        "forward h @ W2.T (64x256 by 256x10)": {
            "numpy": lambda: h @ w2.T, "dgemm (copies)": lambda: dgemm(1.0, h, w2, trans_b=1),
            "torch.mm": lambda: torch.mm(th, tw2.t())},
        "weight gradient g.T @ h (10x64 by 64x256)": {
            "numpy": lambda: g.T @ h, "dgemm (copies)": lambda: dgemm(1.0, g, h, trans_a=1),
            "torch.mm": lambda: torch.mm(tg.t(), th)},
        "input gradient g @ W2 (64x10 by 10x256)": {
            "numpy": lambda: g @ w2, "dgemm": lambda: dgemm(1.0, g, w2),
            "torch.mm": lambda: torch.mm(tg, tw2)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    import torch
    from scipy.linalg.blas import dgemm

    torch.set_num_threads(1)
    print("| product | variant | CPU µs |")
    print("|---|---|---|")
    for product, variants in cases(torch, dgemm).items():
        for name, call in variants.items():
            call()
            times = []
            for _ in range(args.rounds):
                start = time.process_time()
                for _ in range(args.calls):
                    call()
                times.append((time.process_time() - start) / args.calls * 1e6)
            print(f"| {product} | {name} | {statistics.median(times):.0f} |", flush=True)


if __name__ == "__main__":
    main()
