"""The registry is complete: every primitive has every facet and a test-table entry."""

import numpy as np
import pytest

import symgrad as sg
from symgrad import primitives as P
from symgrad.ir import Aval

from cases import CASES

ROUND_ONE = {
    "add", "sub", "mul", "div", "pow", "neg", "exp", "log", "log1p", "expm1", "sqrt", "sin",
    "cos", "tan", "tanh", "sinh", "cosh", "arcsin", "arccos", "arctan", "abs", "sign",
    "square", "reciprocal", "maximum", "minimum", "sum", "mean", "prod", "max", "min",
}


@pytest.mark.parametrize("name", sorted(P.REGISTRY))
def test_every_facet_is_present(name):
    prim = P.REGISTRY[name]
    assert prim.name == name
    assert prim.kind in ("elementwise", "reduction", "structural", "linalg")
    for facet in P.FACETS:
        assert callable(getattr(prim, facet)), f"{name} lacks {facet}"


@pytest.mark.parametrize("name", sorted(P.REGISTRY))
def test_every_primitive_has_a_test_case(name):
    covered = {p for case in CASES for p in case.prims}
    assert name in covered, f"tests/cases.py has no case for primitive {name}"


def test_round_one_coverage():
    assert ROUND_ONE <= set(P.REGISTRY), ROUND_ONE - set(P.REGISTRY)


def test_a_primitive_missing_a_facet_fails_at_declaration():
    with pytest.raises(TypeError, match="lacks facets.*vjp"):
        P.register(name="broken", kind="elementwise", shape_rule=lambda x: x, impl=np.sin,
                   vjp=None, emit=lambda *a, **k: [], sympy=lambda sp, x: x)
    assert "broken" not in P.REGISTRY


def test_a_primitive_cannot_be_declared_twice():
    exp = P.REGISTRY["exp"]
    with pytest.raises(ValueError, match="declared twice"):
        P.register(name="exp", kind=exp.kind, shape_rule=exp.shape_rule, impl=exp.impl,
                   vjp=exp.vjp, emit=exp.emit, sympy=exp.sympy)


ELEMENTWISE = sorted(n for n, p in P.REGISTRY.items() if p.kind == "elementwise")


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_shape_rules_broadcast(name):
    prim = P.REGISTRY[name]
    n = prim.impl.nin if isinstance(prim.impl, np.ufunc) else 3
    dtypes = ["bool", "float64", "float64"] if name == "where" else ["float64"] * n
    shapes = [(2, 1), (3,), ()][:n] if n > 1 else [(2, 1)]
    avals = [Aval(s, d) for s, d in zip(shapes, dtypes)]
    assert prim.shape_rule(*avals).shape == np.broadcast_shapes(*shapes)


def test_conventions_version_is_an_integer():
    assert isinstance(P.CONVENTIONS_VERSION, int) and P.CONVENTIONS_VERSION >= 1


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_case_exercises_the_primitives_it_claims(case):
    # the coverage above counts claims; the traced forward and adjoint must bear them out
    from symgrad.trace import trace

    args = case.args()
    avals = [Aval(np.shape(a)) for a in args]
    graph, _ = trace(case.fn, avals, args, [f"a{k}" for k in range(len(args))])
    used = {e.prim.name for e in graph.eqns}
    argnums = tuple(range(len(args)))
    out = np.asarray(case.fn(*args))
    ct = None if out.ndim == 0 else np.ones(out.shape)
    g = sg.value_and_grad(case.fn, argnums=argnums, backend="numpy")
    used |= {e.prim.name for e in g.graph(*args, gradient=ct).eqns}
    assert set(case.prims) <= used, f"{case} claims {set(case.prims) - used} but does not use it"
