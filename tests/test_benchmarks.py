"""benchmarks/run.py: its handwritten gradients agree with symgrad's (tiny sizes, no timing)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

RUN = Path(__file__).parent.parent / "benchmarks" / "run.py"


def load_benchmarks():
    spec = importlib.util.spec_from_file_location("symgrad_benchmarks", RUN)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


bench = load_benchmarks()


@pytest.mark.parametrize("problem", bench.PROBLEMS, ids=lambda p: p.name)
def test_handwritten_gradients_agree_with_symgrad(problem):
    args = problem.make_args(problem.quick_n, np.random.default_rng(0))
    # symgrad's numpy interpreter: the same adjoint as the kernel (the rest of the
    # suite compares the two), without compiling the larger kernels for this check
    want = bench.symgrad_impl(problem, args, backend="numpy")()
    for name in ("numpy", "numba"):
        run = bench.IMPLEMENTATIONS[name][0](problem, args)
        if run is not None:  # mlp has no handwritten Numba gradient
            bench.check_gradients(problem, name, run(), want)  # SystemExit on a mismatch


def test_a_wrong_gradient_stops_the_run():
    problem = bench.PROBLEMS[1]
    args = problem.make_args(problem.quick_n, np.random.default_rng(0))
    right = problem.numpy_grad(*args)
    with pytest.raises(SystemExit, match="differs from symgrad's"):
        bench.check_gradients(problem, "numpy", right * 1.001, right)


def test_the_tables_read_the_measurements():
    times = {p.name: {"symgrad": 2e-6, "numpy": 1e-6, "numba": 1e-6} for p in bench.PROBLEMS}
    text = bench.ratios_table(times, ["symgrad", "numpy", "numba"])
    assert "| seed-4 | numba | 2.00 | 1.00 | 1.00 |" in text
    assert bench.fmt_time(1.5e-6) == "1.5 µs" and bench.fmt_time(0.25) == "250 ms"
