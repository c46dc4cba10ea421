"""One pipeline for every front end: grad, jit, vjp and Tensor.backward build through
``symgrad.transforms.pipeline``, so the IR checker (``SYMGRAD_CHECK_IR=1``, set by conftest.py)
covers all of them, and they share argument and cotangent handling."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import symgrad as sg
import symgrad as torch
from symgrad.autograd import Variable
from symgrad.core.ir import Aval, IRError
from symgrad.eager import backward as engine
from symgrad.passes import rewrites as passes
from symgrad.transforms import pipeline


@pytest.fixture(autouse=True)
def fresh_structure_cache(monkeypatch):
    """Tensor.backward lowers a structure once; each test sees it lowered afresh."""
    monkeypatch.setattr(engine, "_CACHE", type(engine._CACHE)())


def _backward() -> np.ndarray:
    x = Variable(torch.Tensor([0.5, 1.5, 2.5]), requires_grad=True)
    (torch.sin(x) * x).sum().backward()
    return x.grad.numpy()


def _grad() -> np.ndarray:
    return sg.grad(lambda x: np.sum(np.sin(x) * x), backend="numpy")(np.array([0.5, 1.5, 2.5]))


def _jit() -> np.ndarray:
    return sg.jit(lambda x: np.sin(x) * x, backend="numpy")(np.array([0.5, 1.5, 2.5]))


def _vjp() -> np.ndarray:
    _, pullback = sg.vjp(lambda x: np.sin(x) * x, np.array([0.5, 1.5, 2.5]), backend="numpy")
    return pullback(np.ones(3))[0]


FRONT_ENDS = {"Tensor.backward": _backward, "grad": _grad, "jit": _jit, "vjp": _vjp}


@pytest.mark.parametrize("name", FRONT_ENDS)
def test_every_front_end_builds_through_derive(name, monkeypatch):
    calls = []
    derive = pipeline.derive
    monkeypatch.setattr(pipeline, "derive", lambda *a, **k: calls.append(a) or derive(*a, **k))
    FRONT_ENDS[name]()
    assert calls, f"{name} did not build through symgrad.transforms.pipeline.derive"


@pytest.mark.parametrize("name", ["Tensor.backward", "grad", "vjp"])
def test_a_malformed_adjoint_is_caught_on_every_path(name, monkeypatch):
    """The checker sees the adjoint before the passes do, on the eager path too."""
    adjoint = pipeline.adjoint

    def broken(graph, wrt, seed_inputs):
        full = adjoint(graph, wrt, seed_inputs=seed_inputs)
        return replace(full, eqns=full.eqns + full.eqns[-1:])  # a variable defined twice

    monkeypatch.setattr(pipeline, "adjoint", broken)
    with pytest.raises(IRError, match="defined twice"):
        FRONT_ENDS[name]()


@pytest.mark.parametrize("name", FRONT_ENDS)
def test_the_checker_runs_after_every_pass(name, monkeypatch):
    checked = []
    check = passes.check
    monkeypatch.setattr(passes, "check", lambda g: checked.append(g) or check(g))
    FRONT_ENDS[name]()
    assert len(checked) >= len(passes.PIPELINE)


def test_without_the_variable_nothing_is_checked(monkeypatch):
    monkeypatch.delenv("SYMGRAD_CHECK_IR")
    checked = []
    monkeypatch.setattr(passes, "check", lambda g: checked.append(g) or g)
    _backward()
    assert not checked


def test_both_front_ends_check_a_cotangent_alike():
    """grad's gradient= and backward(gradient) go through pipeline.cotangent."""
    with pytest.raises(ValueError, match=r"gradient has shape \(2,\) but <lambda> returns "
                                         r"shape \(3,\)"):
        sg.grad(lambda x: x * x, backend="numpy")(np.ones(3), gradient=np.ones(2))
    y = Variable(torch.ones(3), requires_grad=True) * 2.0
    with pytest.raises(RuntimeError, match=r"gradient has shape \(2,\) but the output has "
                                           r"shape \(3,\)"):
        y.backward(torch.ones(2))
    # one element for a scalar output will do: the seeds' torch.Tensor([1.0])
    assert pipeline.cotangent(np.array([2.0]), Aval(()), "f returns") == 2.0


@pytest.mark.parametrize("x, promote, want", [
    (3, True, (3.0, "float64")), (np.array(True), False, (True, "bool")),
    (np.array([True, False]), True, ([1.0, 0.0], "float64")),
    (np.arange(4.0)[::2], True, ([0.0, 2.0], "float64")),
])
def test_kernel_inputs_are_contiguous_float64_or_bool(x, promote, want):
    value, aval = pipeline.kernel_input(x, promote=promote)
    assert aval.dtype == want[1] and np.array_equal(value, want[0])
    if aval.shape:
        assert value.flags.c_contiguous and value.flags.writeable
    else:
        assert type(value) in (float, bool)
