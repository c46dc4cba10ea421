"""The registry is complete and consistent: every primitive has every facet, every
flag, a test-table entry, and flags that agree with what its facets do."""

import functools
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import symgrad as sg
from symgrad import prims as P
from symgrad.backend.numba.lowering import TABLE as NUMBA_TABLE
from symgrad.backend.numba.lowering import lowering
from symgrad.backend.registry import BACKENDS
from symgrad.core.ir import Aval, Eqn, Graph, Literal, Var, subgraphs
from symgrad.core.tracing import Trace, recording
from symgrad.numpy_api import trace
from symgrad.prims import PrimTracer

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
    assert prim.kind in P.KINDS
    for facet in P.FACETS:
        assert callable(getattr(prim, facet)), f"{name} lacks {facet}"
    for facet in P.OPTIONAL_FACETS:
        assert getattr(prim, facet) is None or callable(getattr(prim, facet))
    for flag, kind in P.FLAGS.items():
        assert type(getattr(prim, flag)) is kind, f"{name}.{flag} is not a {kind.__name__}"


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_every_backend_lowers_every_primitive(backend):
    """Each registered backend has a lowering of each registered primitive (the
    interpreter's is the primitive's ``impl``; Numba's an entry of its lowering table,
    or the default of an elementwise ufunc), and names a reason for each primitive it
    hands to the interpreter. A new primitive or backend fails here until it has one."""
    b = BACKENDS[backend]
    missing = []
    for name, prim in sorted(P.REGISTRY.items()):
        try:
            low = b.lowering(prim)
        except KeyError:
            missing.append(name)
            continue
        emit = getattr(low, "emit", low)
        assert callable(emit), f"{backend}'s lowering of {name} is not callable"
    assert not missing, (f"backend {backend} has no lowering of {missing}: add one to its "
                         "lowering table (CONTRIBUTING.md, 'Adding a primitive')")
    for prim, reason in b.interpreted.items():
        assert not prim.subgraphs and len(reason) > 20, f"{prim.name}: say why it is interpreted"


def test_every_complex_primitive_has_a_complex_kernel_or_runs_between_kernels():
    """A primitive that takes complex values (``complex=True``) is in the Numba backend's
    list of complex kernels, or runs between kernels (the FFT, complex log): a new one must
    say which
    (else a complex graph holding it runs on the interpreter, the reason in its source)."""
    from symgrad.backend.numba.lowering.complex import KERNEL_PRIMITIVES

    takes_complex = {name for name, prim in P.REGISTRY.items() if prim.complex}
    from symgrad.backend.numba.lowering import COMPLEX_INTERPRETED

    between = {prim.name for prim in (*BACKENDS["numba"].interpreted, *COMPLEX_INTERPRETED)}
    assert takes_complex - KERNEL_PRIMITIVES - between == set()
    assert KERNEL_PRIMITIVES - takes_complex == set(), "names of no complex primitive"


def test_lowerings_are_keyed_by_registered_primitive_objects():
    """No entry for a primitive the registry does not hold (an old object, a shadow)."""
    registered = {id(p) for p in P.REGISTRY.values()}
    stale = [p.name for p in NUMBA_TABLE if id(p) not in registered]
    assert not stale, f"lowering entries for unregistered primitives: {stale}"


def test_a_primitive_without_a_lowering_is_named():
    """A non-ufunc primitive registered with no Numba entry: the backend says which and
    where its lowering goes; a ufunc primitive lowers to its ufunc with no entry."""
    odd = P.register(name="test_odd", kind="array", shape_rule=lambda x: x,
                     impl=lambda x: x, vjp=lambda g, ans, x: (g,), sympy=lambda sp, x: x)
    try:
        with pytest.raises(KeyError, match="no lowering of primitive test_odd.*lowering/"):
            lowering(odd)
    finally:
        del P.REGISTRY["test_odd"]
    # an elementwise ufunc primitive with no entry: np.<ufunc>(...), what numpy computes
    lines = lowering(P.REGISTRY["sqrt"]).emit("b", ["a"], [Aval(())], Aval(()))
    a = 2.0
    namespace = {"np": np, "a": a}
    exec(lines[0], namespace)  # noqa: S102 -- our own kernel text
    assert namespace["b"] == np.sqrt(a)


def test_prims_hold_no_backend_text():
    """Primitives say what an operation means; how a backend writes it is the
    backend's (symgrad/backend/numba/lowering/)."""
    prims = Path(P.__file__).parent
    banned = re.compile(r"njit|prange|\bvm\.|\bemit\b|np\.\w+\(\{0\}")
    found = [f"{p.name}:{k}" for p in sorted(prims.glob("*.py"))
             for k, line in enumerate(p.read_text().splitlines(), 1) if banned.search(line)]
    assert not found, f"backend text in symgrad/prims: {found}"


@pytest.mark.parametrize("name", sorted(P.REGISTRY))
def test_every_primitive_has_a_test_case(name):
    covered = {p for case in CASES for p in case.prims}
    assert name in covered, f"tests/cases.py has no case for primitive {name}"


def test_round_one_coverage():
    assert ROUND_ONE <= set(P.REGISTRY), ROUND_ONE - set(P.REGISTRY)


def test_a_primitive_missing_a_facet_fails_at_declaration():
    with pytest.raises(TypeError, match="lacks facets.*vjp"):
        P.register(name="broken", kind="elementwise", shape_rule=lambda x: x, impl=np.sin,
                   vjp=None, sympy=lambda sp, x: x)
    assert "broken" not in P.REGISTRY


def test_a_primitive_cannot_be_declared_twice():
    exp = P.REGISTRY["exp"]
    with pytest.raises(ValueError, match="declared twice"):
        P.register(name="exp", kind=exp.kind, shape_rule=exp.shape_rule, impl=exp.impl,
                   vjp=exp.vjp, sympy=exp.sympy)


ELEMENTWISE = sorted(n for n, p in P.REGISTRY.items() if p.kind == "elementwise")


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_shape_rules_broadcast(name):
    prim = P.REGISTRY[name]
    unary = name in ("to_float", "convert", "real", "imag")
    n = (prim.impl.nin if isinstance(prim.impl, np.ufunc) or hasattr(prim.impl, "nin")
         else 1 if unary
         else 2 if name in ("bitwise", "complex") else 3)
    dtypes = (["bool", "float64", "float64"] if name == "where" else
              ["int64"] * n if name in ("to_float", "bitwise") else
              ["complex128"] * n if name in ("real", "imag", "conj", "cabs") else ["float64"] * n)
    shapes = [(2, 1), (3,), ()][:n] if n > 1 else [(2, 1)]
    avals = [Aval(s, d) for s, d in zip(shapes, dtypes)]
    params = ({"dtype": "float32"} if name == "convert" else {"op": "xor"} if name == "bitwise"
              else {})
    assert prim.shape_rule(*avals, **params).shape == np.broadcast_shapes(*shapes)


def test_conventions_version_is_an_integer():
    assert isinstance(P.CONVENTIONS_VERSION, int) and P.CONVENTIONS_VERSION >= 1


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_case_exercises_the_primitives_it_claims(case):
    # the coverage above counts claims; the traced forward and adjoint must bear them out
    args = case.args()
    avals = [Aval(np.shape(a)) for a in args]
    graph, _ = trace(case.fn, avals, args, [f"a{k}" for k in range(len(args))])
    used = {e.prim.name for e in _all_eqns(graph)}
    argnums = tuple(range(len(args)))
    out = np.asarray(case.fn(*args))
    ct = None if out.ndim == 0 else np.ones(out.shape)
    g = sg.value_and_grad(case.fn, argnums=argnums, backend="numpy")
    used |= {e.prim.name for e in _all_eqns(g.graph(*args, gradient=ct))}
    assert set(case.prims) <= used, f"{case} claims {set(case.prims) - used} but does not use it"


def _all_eqns(graph: Graph) -> list[Eqn]:
    """The equations of ``graph`` and of the graphs they hold (loop bodies, branches)."""
    found = []
    for e in graph.eqns:
        found.append(e)
        for _, sub in subgraphs(e):
            found += _all_eqns(sub)
    return found


# ---------------------------------------------------------------------------
# the flags agree with the facets: checked on an equation of each primitive,
# taken from the traced forward and adjoint graphs of the test table


@functools.cache
def _examples() -> dict[str, Eqn]:
    found: dict[str, Eqn] = {}
    for case in CASES:
        if case.layout != "C":
            continue
        args = case.args()
        out = np.asarray(case.fn(*args))
        ct = None if out.ndim == 0 else np.ones(out.shape)
        g = sg.value_and_grad(case.fn, argnums=tuple(range(len(args))), backend="numpy")
        for e in _all_eqns(g.graph(*args, gradient=ct)):
            old = found.get(e.prim.name)
            if old is None or _size(e) > _size(old):  # the largest example
                found[e.prim.name] = e
    return found


def _size(eqn: Eqn) -> int:
    return sum(a.aval.size for a in eqn.inputs)


def _example(name: str) -> Eqn:
    eqn = _examples().get(name)
    if eqn is None:
        pytest.skip(f"no optimized graph of tests/cases.py keeps a {name} equation")
    return eqn


def _distinct(aval: Aval, start: float = 1.0) -> Any:
    """Values all different from each other and from 0 (booleans alternate)."""
    if aval.dtype == "bool":
        return np.arange(aval.size).reshape(aval.shape) % 2 == 0
    return (start + np.arange(aval.size, dtype=float)).reshape(aval.shape)


def _operands(eqn: Eqn) -> list[Any]:
    start, values = 1.0, []
    for a in eqn.inputs:
        if isinstance(a, Literal):
            values.append(a.value)
        else:
            values.append(_distinct(a.aval, start))
            start += a.aval.size + 1
    return values


NAMES = sorted(P.REGISTRY)


@pytest.mark.parametrize("name", NAMES)
def test_flags_agree_with_kinds(name):
    prim = P.REGISTRY[name]
    low = lowering(prim)
    if low.cheap:
        assert prim.kind == "elementwise"
    if prim.accumulate:
        assert prim.kind == "reduction"
    if prim.view:  # (proj: a part of a loop's results, which may be one of its operands)
        assert prim.kind in ("structural", "control")
    if low.transposes or low.moves_elements:
        assert prim.kind == "structural"
    if low.transposed_operands:
        assert prim.kind == "array"
    if prim.commutative:
        assert prim.kind == "elementwise" and prim.impl.nin == 2


@pytest.mark.parametrize("name", sorted(n for n, p in P.REGISTRY.items() if p.kind == "structural"))
def test_structural_primitives_compute_nothing(name):
    """Their outputs hold only elements of their inputs, and zeros."""
    eqn = _example(name)
    values = _operands(eqn)
    out = np.asarray(eqn.prim.impl(*values, **eqn.params))
    allowed = {0.0} | {float(v) for x in values for v in np.ravel(x)}
    assert {float(v) for v in out.ravel()} <= allowed


@pytest.mark.parametrize("name", sorted(n for n, p in P.REGISTRY.items()
                                        if lowering(p).moves_elements))
def test_element_facets_find_every_element(name):
    """The index arithmetic fused loops read through agrees with the numpy implementation."""
    eqn = _example(name)
    values = _operands(eqn)
    want = np.asarray(eqn.prim.impl(*values, **eqn.params))
    at = tuple(f"i{k}" for k in range(want.ndim))
    pieces = lowering(eqn.prim).element(at, [a.aval for a in eqn.inputs], eqn.out.aval,
                                        **eqn.params)
    for index in np.ndindex(*want.shape):
        names = dict(zip(at, index))
        got = 0.0
        for conditions, k, where in pieces:
            if all(eval(c, {}, names) for c in conditions):  # noqa: S307 -- our own index text
                got = np.asarray(values[k])[tuple(eval(i, {}, names) for i in where)]  # noqa: S307
                break
        assert got == want[index], f"{name} at {index}: {got} != {want[index]}"


@pytest.mark.parametrize("name", sorted(n for n, p in P.REGISTRY.items() if p.commutative))
def test_commutative_primitives_give_the_same_bits_either_way(name):
    prim = P.REGISTRY[name]
    special = np.array([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan])
    x, y = np.meshgrid(special, special)
    with np.errstate(all="ignore"):
        a, b = prim.impl(x, y), prim.impl(y, x)
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


def _vjp_graph(eqn: Eqn) -> tuple[Graph, list[Var]]:
    """The VJP of ``eqn`` on fresh variables: its graph, and the primal variables."""
    g, ans = Var(eqn.out.aval, "g"), Var(eqn.out.aval, "ans")
    primals = [Var(a.aval, f"x{k}") for k, a in enumerate(eqn.inputs)]
    trace = Trace(tracer=PrimTracer)
    with recording(trace):
        cts = eqn.prim.vjp(PrimTracer(g, trace), PrimTracer(ans, trace),
                           *(PrimTracer(v, trace) for v in primals), **eqn.params)
    outputs = [c for c in cts if c is not None]
    return trace.to_graph([g, ans, *primals], outputs, eqn.prim.name), [ans, *primals]


@pytest.mark.parametrize("name", sorted(n for n, p in P.REGISTRY.items() if p.linear))
def test_linear_primitives_read_no_primal_value(name):
    """A linear VJP reads the cotangent and, of ``ans`` and the inputs, at most shapes and
    booleans (``where``'s condition): so a zero cotangent gives exact zeros."""
    graph, primal = _vjp_graph(_example(name))
    reads = {id(v) for e in graph.eqns if not lowering(e.prim).shape_only
             for v in e.inputs if isinstance(v, Var)}
    reads |= {id(a) for a in graph.outputs if isinstance(a, Var)}
    floats = {id(v) for v in primal if v.dtype == "float64"}
    assert not reads & floats, f"the VJP of {name} reads a primal value"


@pytest.mark.parametrize("name", sorted(n for n, p in P.REGISTRY.items()
                                        if lowering(p).shape_only))
def test_shape_only_primitives_have_no_gradient(name):
    eqn = _example(name)
    graph, _ = _vjp_graph(eqn)
    assert not graph.outputs


def test_transposes_means_the_transpose():
    (prim,) = [p for p in P.REGISTRY.values() if lowering(p).transposes]
    x = np.arange(6.0).reshape(2, 3)
    assert np.array_equal(prim.impl(x, perm=(1, 0)), x.T)


@pytest.mark.parametrize("name", sorted(n for n, p in P.REGISTRY.items()
                                        if isinstance(p.numpy, np.ufunc)))
def test_every_ufunc_primitive_traces_through_its_ufunc(name):
    prim = P.REGISTRY[name]
    avals = [Aval((2,), "bool" if name == "where" and k == 0 else "float64")
             for k in range(prim.numpy.nin)]
    graph, _ = trace(lambda *xs: prim.numpy(*xs), avals, [None] * len(avals),
                     [f"x{k}" for k in range(len(avals))])
    assert [e.prim for e in graph.eqns][-1] is prim


def test_a_primitive_registered_late_traces_through_its_ufunc():
    """The ufunc table is the registry itself: a primitive added after symgrad was
    imported (a new family module, a plugin) traces at once."""
    cbrt = P.register(name="test_cbrt", kind="elementwise",
                      shape_rule=lambda x: Aval(x.shape), impl=np.cbrt,
                      vjp=lambda g, ans, x: (g / (3.0 * ans * ans),),
                      sympy=lambda sp, x: sp.cbrt(x), numpy=np.cbrt)
    try:
        graph, _ = trace(lambda x: np.cbrt(x), [Aval((3,))], [None], ["x"])
        assert [e.prim for e in graph.eqns] == [cbrt]
    finally:
        del P.REGISTRY["test_cbrt"]


@pytest.mark.parametrize("name", sorted(P.REGISTRY[n].scipy for n in P.REGISTRY
                                        if P.REGISTRY[n].scipy))
def test_every_scipy_named_primitive_traces_through_scipy_and_sg_scipy(name):
    """A primitive's ``scipy`` fact is the one home of its scipy.special name: the ufunc
    of that name traces to it (``__array_ufunc__``) and ``sg.scipy.special`` has it, with
    no entry anywhere else (CONTRIBUTING.md, 'Adding a primitive')."""
    special = pytest.importorskip("scipy.special")
    prim = P.registry.of_scipy()[name]
    ufunc = getattr(special, name)
    assert isinstance(ufunc, np.ufunc)
    avals = [Aval((2,)) for _ in range(ufunc.nin)]
    for fn in (ufunc, getattr(sg.scipy.special, name)):
        graph, _ = trace(lambda *xs, fn=fn: fn(*xs), avals, [None] * len(avals),
                         [f"x{k}" for k in range(len(avals))])
        assert [e.prim for e in graph.eqns] == [prim]
    assert name in sg.scipy.special.__all__


def test_a_scipy_named_primitive_registered_late_traces_through_scipy():
    """The scipy.special table is the registry itself: a primitive declaring a scipy name
    after symgrad was imported traces at once (the dispatch has no list of its own)."""
    special = pytest.importorskip("scipy.special")
    # (exprel, (exp(x) - 1)/x: a scipy ufunc symgrad has no primitive for)
    exprel = P.register(name="test_exprel", kind="elementwise",
                        shape_rule=lambda x: Aval(x.shape), impl=special.exprel,
                        vjp=lambda g, ans, x: (g * ((1.0 - ans) / x + ans),),
                        sympy=lambda sp, x: (sp.exp(x) - 1) / x, scipy="exprel")
    try:
        graph, _ = trace(lambda x: special.exprel(x), [Aval((3,))], [None], ["x"])
        assert [e.prim for e in graph.eqns] == [exprel]
        # and sg.scipy.special has it (its module __getattr__ reads the registry)
        graph, _ = trace(lambda x: sg.scipy.special.exprel(x), [Aval((3,))], [None], ["x"])
        assert [e.prim for e in graph.eqns] == [exprel]
    finally:
        del P.REGISTRY["test_exprel"]
    with pytest.raises(AttributeError, match="exprel"):  # unregistered: gone again
        sg.scipy.special.exprel  # noqa: B018


def test_torch_facts_are_keyed_by_registered_primitives_and_agree_with_pytorch():
    """The eager Tensor's PyTorch-facing facts (one table, :mod:`symgrad.eager.torch_facts`)
    name registered primitives, and ``saves_output`` is what real PyTorch's node saves."""
    torch = pytest.importorskip("torch")
    from symgrad.eager.torch_facts import NODE_NAMES, TORCH, node_name, torch_facts

    registered = {id(p) for p in P.REGISTRY.values()}
    assert all(id(p) in registered for p in TORCH)
    assert all(id(p) in registered for p in NODE_NAMES)
    # a row only where the default <Name>Backward0 is not PyTorch's name
    for prim, name in list(NODE_NAMES.items()):
        assert re.fullmatch(r"[A-Z]\w*Backward\d", name)
        del NODE_NAMES[prim]
        try:
            assert node_name(prim) != name, f"{prim.name}: the row repeats the default"
        finally:
            NODE_NAMES[prim] = name
    checked = 0
    for prim in P.REGISTRY.values():
        fn = getattr(torch, prim.name, None)
        if prim.kind != "elementwise" or prim.numpy is None or not callable(fn):
            continue
        x = torch.tensor([0.5, 0.25], dtype=torch.float64, requires_grad=True)
        try:
            out = fn(x)
        except TypeError:  # a binary function
            continue
        if not isinstance(out, torch.Tensor) or out.grad_fn is None:  # no gradient (floor)
            continue
        saves = hasattr(out.grad_fn, "_saved_result")
        assert torch_facts(prim).saves_output == saves, f"{prim.name}: PyTorch saves {saves}"
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("name", NAMES)
def test_every_transform_has_a_rule_for_every_primitive(name):
    """The transforms that need a rule per primitive find one: the adjoint its ``vjp``
    (a declared facet), vmap its ``batch`` facet or its kind's rule (CONTRIBUTING.md,
    'Adding a transform')."""
    from symgrad.passes.batching import rule

    prim = P.REGISTRY[name]
    assert callable(prim.vjp)
    assert callable(rule(prim))
