"""``F.layer_norm`` as PyTorch records it: one node, ``NativeLayerNormBackward0``
(:mod:`symgrad.prims.layer_norm`), against real PyTorch 2.13: values, gradients of the
input, weight and bias, gradients of gradients (``create_graph``), dtypes, ``grad_fn``
names and ``next_functions``, with and without a weight or bias, over one and two axes,
1-d inputs, rows holding inf and nan; ``nn.LayerNorm`` without affine parameters or
bias; PyTorch's version error for a weight changed in place; the Numba kernel (float32)
against the interpreter; ``vmap`` of the primitive against a loop."""

import numpy as np
import pytest

import symgrad as sg
from symgrad.prims.layer_norm import layer_norm

torch = pytest.importorskip("torch")

SHAPES = {"rows": ((5, 8), (8,)), "two-axes": ((2, 3, 4), (3, 4)), "1d": ((6,), (6,))}


def _names(fn):
    return (fn.name(), [f if f is None else f.name().replace("torch::autograd::", "")
                        for f, _ in fn.next_functions])


def _run(L, dtype, x, w, b, shape, eps=1e-5):
    """Values, gradients and second gradients (of the squared gradient's sum; not with a
    bias and no weight, whose double backward PyTorch 2.13 refuses: "Expected a proper
    Tensor but got None"), the result's dtype, node name and next functions."""
    dt = getattr(L, dtype)
    x = L.tensor(x, dtype=dt, requires_grad=True)
    w, b = (None if a is None else L.tensor(a, dtype=dt, requires_grad=True) for a in (w, b))
    out = L.nn.functional.layer_norm(x * 1, shape, w, b, eps)
    seed = L.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)), dtype=dt)
    leaves = [a for a in (x, w, b) if a is not None]
    second = w is not None or b is None
    grads = L.autograd.grad(out, leaves, seed, create_graph=second)
    if second:
        sum(g.square().sum() for g in grads).backward()
    values = [out, *grads, *(a.grad for a in leaves if a.grad is not None)]
    return ([v.detach().numpy() for v in values], str(out.dtype).split(".")[-1],
            _names(out.grad_fn))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", ["weight-bias", "weight", "bias", "none"])
@pytest.mark.parametrize("shapes", list(SHAPES), ids=str)
def test_layer_norm_against_pytorch(shapes, affine, dtype):
    (xs, ns) = SHAPES[shapes]
    rng = np.random.default_rng(len(xs) + len(affine))
    x = rng.standard_normal(xs) * 3 + 1
    w = rng.uniform(0.5, 2.0, ns) if "weight" in affine else None
    b = rng.standard_normal(ns) if "bias" in affine else None
    got, want = _run(sg, dtype, x, w, b, ns), _run(torch, dtype, x, w, b, ns)
    assert got[1:] == want[1:]
    assert got[2][0] == "NativeLayerNormBackward0"
    assert len(got[0]) == len(want[0])
    tol = dict(rtol=2e-4, atol=2e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    for g, t in zip(*(got[0], want[0])):
        assert g.dtype == t.dtype
        np.testing.assert_allclose(g, t, **tol)


def test_rows_with_inf_and_nan_are_nan_as_pytorch():
    x = np.random.default_rng(3).standard_normal((4, 5))
    x[0, 1], x[1, 2], x[2, 0] = np.inf, np.nan, -np.inf
    got, want = (L.nn.functional.layer_norm(L.tensor(x), (5,)).numpy() for L in (sg, torch))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[:3]).all()
    np.testing.assert_allclose(got[3], want[3], rtol=1e-12)


@pytest.mark.parametrize("options", [dict(elementwise_affine=False), dict(bias=False)],
                         ids=str)
def test_layer_norm_modules_without_affine_or_bias(options):
    x = np.random.default_rng(4).standard_normal((3, 2, 4)).astype(np.float32)
    out = {}
    for L in (sg, torch):
        L.manual_seed(0)
        m = L.nn.LayerNorm((2, 4), **options)
        t = L.tensor(x, requires_grad=True)
        y = m(t)
        (y * y * y).sum().backward()
        out[L] = (y.detach().numpy(), t.grad.numpy(), _names(y.grad_fn),
                  [p.grad.numpy() for p in m.parameters()])
    got, want = out[sg], out[torch]
    assert got[2] == want[2]
    for g, t in zip((*got[:2], *got[3]), (*want[:2], *want[3])):
        np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)


def test_a_weight_changed_in_place_raises_as_pytorch():
    for L in (sg, torch):
        x = L.ones(2, 3, requires_grad=True)
        w = L.ones(3, requires_grad=True)
        y = L.nn.functional.layer_norm(x * L.tensor([1.0, 2.0, 4.0]), (3,), w)
        with L.no_grad():
            w.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_float32_kernel_agrees_with_the_interpreter():
    rng = np.random.default_rng(5)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((4, 3, 6), (6,), (6,)))
    c = rng.standard_normal((4, 3, 6)).astype(np.float32)

    def f(x, w, b):
        return (layer_norm(x, w, b, ndim=1, eps=1e-5) * c).sum()

    got = sg.value_and_grad(f, argnums=(0, 1, 2), backend="numba")(x, w, b)
    want = sg.value_and_grad(f, argnums=(0, 1, 2), backend="numpy")(x, w, b)
    for g, t in zip((got[0], *got[1]), (want[0], *want[1])):
        assert np.asarray(g).dtype == np.float32
        np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-5)


def test_vmap_over_the_input_alone_is_the_loop():
    rng = np.random.default_rng(6)
    x, w, b = rng.standard_normal((3, 2, 5)), rng.standard_normal(5), rng.standard_normal(5)
    f = sg.vmap(lambda x, w, b: layer_norm(x, w, b, ndim=1, eps=0.1), in_axes=(0, None, None))
    want = np.stack([layer_norm(r, w, b, ndim=1, eps=0.1) for r in x])
    np.testing.assert_allclose(f(x, w, b), want, rtol=1e-14)


def test_layer_norm_and_linear_export_to_a_standalone_numpy_module(tmp_path):
    """The numpy export copies both primitives' implementations (the copy of ``linear``'s
    once held a reference to the tracer's types and could not be exported)."""
    import importlib.util

    from symgrad.prims.linalg import linear

    def f(x, w, v):
        return (layer_norm(linear(x, v), w, ndim=1, eps=1e-5) ** 3).sum()

    rng = np.random.default_rng(9)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 4), (5,), (5, 4))]
    grad = sg.grad(f, argnums=(0, 1, 2))
    spec = importlib.util.spec_from_file_location(
        "exported", sg.export(grad, args, tmp_path / "exported.py", target="numpy"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    got = module.grad_f(*args)
    for g, t in zip(got, sg.grad(f, argnums=(0, 1, 2), backend="numpy")(*args)):
        assert g.dtype == np.float32
        np.testing.assert_array_equal(g, t)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_fast_path_is_the_primitives_general_call(dtype):
    """layer_norm's and F.linear's rows (eager.tensors_path.tensors_f64, memoized per
    shapes) give the value bits and the node (class, primitive, parameters, aval, signature,
    watched versions) of the primitives' call through the trace (fastpath.apply_f64)."""
    from symgrad.eager.tensors_path import layer_norm_rows, linear_rows
    from symgrad.prims.linalg import linear

    rng = np.random.default_rng(4)
    x, w, b = (sg.tensor(rng.standard_normal(s), dtype=getattr(sg, dtype), requires_grad=g)
               for s, g in (((2, 3, 4), True), ((4,), False), ((4,), True)))
    m = sg.tensor(rng.standard_normal((5, 4)), dtype=getattr(sg, dtype), requires_grad=True)
    for _ in range(2):  # (the second call: the memoized recipe)
        for fast, slow in ((layer_norm_rows(x, w, b, 1, 1e-5),
                            layer_norm(x, w, b, ndim=1, eps=1e-5)),
                           (linear_rows(x, m, b[:1].expand(5).contiguous()),
                            linear(x, m, b[:1].expand(5).contiguous())),
                           (linear_rows(x, m), linear(x, m))):
            assert fast._value.tobytes() == slow._value.tobytes()
            a, c = fast._node, slow._node
            assert (type(a), a.prim, a.params, a.aval, a.sig) == \
                (type(c), c.prim, c.params, c.aval, c.sig)
            assert [(type(i), v) for i, v in a.versions] == \
                [(type(i), v) for i, v in c.versions]
            assert [(k, v) for k, _, v in a.reads] == [(k, v) for k, _, v in c.reads]
