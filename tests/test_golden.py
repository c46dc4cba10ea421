"""Golden tests of the printed IR and the generated kernel source; golden kernels are run.

Regenerate after an intended change with ``SYMGRAD_UPDATE_GOLDEN=1 pytest tests/test_golden.py``
and review the diff: it is what users will read.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import symgrad as sg

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("SYMGRAD_UPDATE_GOLDEN") == "1"


def seed(x):
    return np.mean(3 * (x + 2) ** 2)


def square(x):
    return x * x


def loss(w, x):
    scores = np.tanh(x * w)
    return np.sum(np.max(scores, axis=1) ** 2) + np.mean(np.sum(scores, axis=0))


def ratio(x, y):
    return np.sum(x / y + np.maximum(x, y))


def modulus(z):
    return np.sum(np.abs(z * z + 1j) ** 2)


# golden file stem: (transformed function, arguments, gradient)
W = np.array([0.5, -1.0, 2.0])
XS = np.array([[1.0, 2.0, 3.0], [0.5, -0.5, 0.25]])
GOLDENS = {
    "seed_mean": (sg.grad(seed), (np.ones((2, 2)),), None),
    "square_vector": (sg.grad(square), (np.array([1.0, 2, 3, 4, 5]),), np.full(5, 5.0)),
    "reductions_over_axes": (sg.grad(loss, argnums=(0, 1)), (W, XS), None),
    "broadcast_pair": (sg.value_and_grad(ratio, argnums=(0, 1)),
                       (np.array([[1.0], [2.0]]), np.array([0.5, 4.0])), None),
    # complex values in a kernel: complex128 arrays, |z|'s gradient by np.divide
    "complex_modulus": (sg.grad(modulus), (np.array([1 + 2j, -0.5j, 3.0 + 0j]),), None),
}


def _check_golden(path: Path, text: str) -> None:
    if UPDATE or not path.exists():
        path.write_text(text)
        if not UPDATE:
            pytest.fail(f"{path.name} did not exist and was written; review and commit it")
    assert text == path.read_text(), f"{path.name} changed; regenerate with SYMGRAD_UPDATE_GOLDEN=1"


@pytest.mark.parametrize("name", GOLDENS)
def test_printed_ir(name):
    f, args, gradient = GOLDENS[name]
    _check_golden(GOLDEN / f"{name}.ir", str(f.graph(*args, gradient=gradient)) + "\n")


@pytest.mark.parametrize("name", GOLDENS)
def test_generated_source(name):
    f, args, gradient = GOLDENS[name]
    _check_golden(GOLDEN / f"{name}_kernel.py", f.source(*args, gradient=gradient))


@pytest.mark.parametrize("name", GOLDENS)
def test_golden_kernel_runs_and_agrees(name, tmp_path):
    """The golden source, imported as it is, computes what symgrad returns."""
    f, args, gradient = GOLDENS[name]
    path = tmp_path / f"golden_{name}.py"  # Numba caches next to the file: keep tests/ clean
    path.write_text((GOLDEN / f"{name}_kernel.py").read_text())
    spec = importlib.util.spec_from_file_location(f"golden_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    kernel = getattr(module, f.__name__)
    inputs = [a if np.ndim(a) else float(a) for a in args]
    if gradient is not None:
        inputs.append(gradient)
    outputs = kernel(*inputs)
    spec_ = f._prepare(args, gradient)[0]
    expected = spec_.run(*inputs)
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        np.testing.assert_array_equal(got, want)


def test_golden_seed_values():
    """The seed's numbers, from the golden kernels themselves."""
    kernel = (GOLDEN / "seed_mean_kernel.py").read_text()  # 3 * (1/n) * 2 * (x + 2), n = 4
    assert "b = float(n0 * n0)" in kernel and "d = c * 3.0" in kernel
    assert "grad_x[i0, i1] = d * e" in kernel
    f, args, _ = GOLDENS["seed_mean"]
    assert np.array_equal(f(*args), np.full((2, 2), 4.5))
    f, args, gradient = GOLDENS["square_vector"]
    assert np.array_equal(f(*args, gradient=gradient), [10.0, 20.0, 30.0, 40.0, 50.0])
