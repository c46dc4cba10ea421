"""benchmarks/higher_order.py: its symgrad calls agree with the handwritten numpy formulas
(tiny sizes, symgrad's numpy interpreter, no timing), a wrong result stops the run, and its
section of docs/benchmarks.md replaces only itself. JAX and PyTorch rows are checked by the
script itself when it runs (JAX is not installed in the test environment)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).parent.parent / "benchmarks" / "higher_order.py"


def load():
    spec = importlib.util.spec_from_file_location("symgrad_higher_order", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


bench = load()
BUILD = {
    "hvp": lambda rng: bench.hvp_problem(40, rng, backend="numpy"),
    "hessian": lambda rng: bench.hessian_problem(5, rng, backend="numpy"),
    "per-example": lambda rng: bench.per_example_problem(30, 4, rng, backend="numpy"),
}


@pytest.mark.parametrize("name", list(BUILD))
def test_symgrad_and_numpy_rows_agree_with_the_handwritten_formula(name):
    problem = BUILD[name](np.random.default_rng(0))
    problem.implementations = {k: v for k, v in problem.implementations.items()
                               if k.startswith(("symgrad", "numpy"))}
    assert len(problem.implementations) >= 2
    bench.first_calls(problem)  # SystemExit on a mismatch
    times = bench.interleaved(problem.implementations, rounds=2, calls=1)
    assert set(times) == set(problem.implementations)
    assert "| ratio |" in "\n".join(bench.table(problem, times))


def test_the_handwritten_oracles_match_finite_differences():
    rng = np.random.default_rng(1)
    x, v = rng.uniform(-1, 1, 7), rng.normal(size=7)
    h = 1e-6
    fd = (bench.rosenbrock_grad_numpy(x + h * v) - bench.rosenbrock_grad_numpy(x - h * v)) / (2 * h)
    np.testing.assert_allclose(bench.rosenbrock_hvp_numpy(x, v), fd, rtol=1e-6, atol=1e-6)
    B = rng.normal(size=(4, 4))
    A, b, y = B @ B.T / 4 + np.eye(4), rng.normal(size=4), 0.3 * rng.normal(size=4)
    H = bench.loglik_hessian_numpy(y, A, b)
    for i in range(4):
        e = np.eye(4)[i] * 1e-4
        col = [(bench.loglik(y + e + d, A, b) - bench.loglik(y + e - d, A, b)
                - bench.loglik(y - e + d, A, b) + bench.loglik(y - e - d, A, b)) / 4e-8
               for d in np.eye(4) * 1e-4]
        np.testing.assert_allclose(H[i], col, rtol=1e-5, atol=1e-6)


def test_a_wrong_result_stops_the_run():
    problem = BUILD["per-example"](np.random.default_rng(0))
    right = problem.reference()
    with pytest.raises(SystemExit, match="differs from the handwritten"):
        bench.check(problem, "symgrad vmap(grad)", right * (1 + 1e-6))
    with pytest.raises(SystemExit, match="differs"):
        bench.check(problem, "symgrad vmap(grad)", right.T)


def test_the_section_replaces_only_itself(tmp_path):
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n## A\n\na\n\n" + bench.SECTION + "\n\nold\n\n## B\n\nb\n")
    bench.write_section(bench.SECTION + "\n\nnew\n", doc)
    want = "# Benchmarks\n\n## A\n\na\n\n" + bench.SECTION + "\n\nnew\n\n## B\n\nb\n"
    assert doc.read_text() == want
    doc.write_text("# Benchmarks\n\n## A\n")
    bench.write_section(bench.SECTION + "\n\nnew\n", doc)
    assert doc.read_text().endswith("## A\n\n" + bench.SECTION + "\n\nnew\n")


def test_targets_read_the_measurements():
    times = {"hvp": {"symgrad hvp": 3e-3, "symgrad grad": 1e-3},
             "per-example": {"symgrad vmap(grad)": 2e-3, "numpy X*(p-y)[:, None]": 1e-3}}
    text = "\n".join(bench.targets(times))
    assert "| sg.hvp ≤ 4× one sg.grad | 3 ms vs 1 ms (3.00×) | met |" in text
    assert "(2.00×) | NOT met |" in text
    assert "not measured" in text
