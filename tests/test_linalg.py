"""Linear algebra beyond the table: the norm-at-0 regression, einsum forms against
numpy, BLAS in the generated code, errors, and a model-shaped function on both backends."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg
from symgrad.core.errors import ShapeError, UnsupportedFunctionError
from symgrad.ops import supported_functions

from oracle import assert_close, finite_differences, rng_for

BACKENDS = ["numba", "numpy"]


# -- pytorch issue #2421: the gradient of the 2-norm at 0 ---------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("form", ["vector", "axis", "frobenius"])
def test_norm_gradient_at_zero_is_zero_not_nan(backend, form):
    fn, x = {
        "vector": (lambda x: np.linalg.norm(x), np.zeros(3)),
        "axis": (lambda x: np.sum(np.linalg.norm(x, axis=1)), np.array([[0.0, 0.0], [3.0, 4.0]])),
        "frobenius": (lambda x: np.linalg.norm(x, "fro"), np.zeros((2, 3))),
    }[form]
    value, grad = sg.value_and_grad(fn, backend=backend)(x)
    assert not np.isnan(grad).any()
    if form == "axis":  # the zero row gets exactly 0, the other x / |x|
        assert value == 5.0
        np.testing.assert_array_equal(grad[0], [0.0, 0.0])
        np.testing.assert_allclose(grad[1], [0.6, 0.8], rtol=1e-15)
    else:
        assert value == 0.0
        np.testing.assert_array_equal(grad, np.zeros_like(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_norm_gradient_away_from_zero_is_x_over_norm(backend):
    x = np.array([3.0, -4.0, 12.0])
    np.testing.assert_allclose(sg.grad(np.linalg.norm, backend=backend)(x), x / 13.0,
                               rtol=1e-15)


# -- einsum forms against numpy ------------------------------------------------------

EINSUM_FORMS = [
    ("ij,jk->ik", [(3, 4), (4, 2)]), ("ij,ij->", [(2, 3), (2, 3)]), ("i,i->", [(4,), (4,)]),
    ("ij,j->i", [(3, 4), (4,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]), ("ii->", [(3, 3)]),
    ("ij->ji", [(2, 3)]), ("ii->i", [(3, 3)]), ("ij->", [(2, 3)]), ("i,j->ij", [(3,), (2,)]),
    ("ij,jk", [(3, 4), (4, 2)]), ("ba,ca->bc", [(2, 3), (4, 3)]), ("ijk,jil->kl", [(2, 3, 2),
                                                                                  (3, 2, 4)]),
    ("bi,bi->b", [(3, 4), (3, 4)]), ("ij,k->ikj", [(2, 3), (2,)]), ("iij,jk->ik", [(2, 2, 3),
                                                                                  (3, 2)]),
    (" ij , jk -> ki ", [(3, 4), (4, 2)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM_FORMS, ids=[s for s, _ in EINSUM_FORMS])
def test_einsum_value_and_gradient_match_numpy(spec, shapes):
    rng = rng_for(spec)
    args = [rng.uniform(-1, 1, s) for s in shapes]
    fn = lambda *xs: np.einsum(spec, *xs)
    out = np.einsum(spec, *args)
    ct = rng.uniform(-1, 1, out.shape) if out.ndim else None
    f = sg.value_and_grad(fn, argnums=tuple(range(len(args))), backend="numpy")
    value, grads = f(*args, gradient=ct)
    assert_close(value, out, rtol=1e-13, atol=1e-14, what="value")
    for k, g in enumerate(grads):
        assert_close(g, finite_differences(fn, args, k, ct), rtol=1e-7, atol=1e-8,
                     what=f"gradient {k}")


def test_einsum_contraction_is_one_matmul():
    graph = sg.jit(lambda a, b: np.einsum("bij,bjk->bik", a, b)).graph(
        np.ones((2, 3, 4)), np.ones((2, 4, 5)))
    assert [e.prim.name for e in graph.eqns] == ["matmul"]


# -- BLAS stays BLAS ---------------------------------------------------------------

def test_generated_code_calls_blas_on_contiguous_operands():
    f = sg.grad(lambda w, x: np.sum(np.tanh(x @ w)), argnums=0)
    source = f.source(np.ones((3, 2)), np.ones((5, 3)))
    assert "np.dot(np.ascontiguousarray(x), np.ascontiguousarray(w))" in source
    # the gradient x.T @ g is one more BLAS call (numpy's gemm: symgrad.backend.blas)
    assert source.count("np.dot(") + source.count("= bl.ddot_tn(") == 2
    # whole-array calls, never inside the fused loops around them
    assert all(line.startswith("    " + line.split("=")[0].strip())
               for line in source.splitlines() if "np.dot(" in line or "= bl." in line)


def test_stacks_of_products_read_each_slice_where_it_lies():
    # symgrad.backend.batched: BLAS reads a slice through its leading dimension (rows or
    # columns contiguous) or from a copy (broadcast, strided); small integers, so that
    # every layout must give numpy's matmul exactly
    from symgrad.backend import batched as bm

    rng = np.random.default_rng(5)
    for dtype in (np.float32, np.float64):
        a = rng.integers(-4, 5, (3, 4, 5, 6)).astype(dtype)
        b = rng.integers(-4, 5, (3, 4, 6, 7)).astype(dtype)
        c = rng.integers(-4, 5, (4, 3, 7, 6)).astype(dtype)
        pairs = [(a, b), (a, c.transpose(1, 0, 3, 2)),                    # columns contiguous
                 (a.transpose(1, 0, 2, 3), b.transpose(1, 0, 2, 3)),      # whole rows apart
                 (a[:, :, :, ::-1], np.broadcast_to(b[:1], b.shape)),     # copied slices
                 (a[:, :1], b[:, :1, :, ::2]), (a[:, :, :0], b[:, :, :, :0])]
        for x, y in pairs:
            out = np.empty(x.shape[:-1] + y.shape[-1:], dtype)
            for i in range(x.shape[0]):
                bm.matmul(x[i], y[i], out[i])
            np.testing.assert_array_equal(out, np.matmul(x, y))
        x, y = np.ones((2, 3, 0), dtype), np.ones((2, 0, 4), dtype)
        out = np.full((2, 3, 4), np.nan, dtype)
        bm.matmul(x, y, out)
        np.testing.assert_array_equal(out, 0)


def test_a_kernels_stack_of_products_matches_the_interpreter():
    def f(q, k):
        scores = np.matmul(np.transpose(q, (1, 0, 2, 3)), np.swapaxes(k, -1, -2))
        return np.sum(np.tanh(scores) * scores)

    rng = np.random.default_rng(6)
    q = rng.standard_normal((4, 3, 5, 6)).astype(np.float32)
    k = rng.standard_normal((3, 4, 7, 6)).astype(np.float32)
    g = sg.value_and_grad(f, argnums=(0, 1))
    assert "bm.matmul(" in g.source(q, k)
    value, grads = g(q, k)
    ref_value, ref_grads = sg.value_and_grad(f, argnums=(0, 1), backend="numpy")(q, k)
    assert_close(value, ref_value, rtol=1e-5, what="value")
    for got, ref in zip(grads, ref_grads):
        assert got.dtype == np.float32
        assert_close(got, ref, rtol=1e-5, atol=1e-5, what="gradient")


def test_matmul_ufunc_and_operator_trace_the_same():
    x, y = np.ones((2, 3)), np.ones((3, 2))
    g1 = sg.jit(lambda x, y: np.matmul(x, y)).graph(x, y)
    g2 = sg.jit(lambda x, y: x @ y).graph(x, y)
    assert str(g1) == str(g2)


def test_supported_functions_name_linalg():
    names = set(supported_functions())
    assert {"np.matmul", "np.dot", "np.einsum", "np.outer", "np.inner", "np.trace",
            "np.linalg.norm", "np.linalg.solve", "np.linalg.inv", "np.linalg.det",
            "np.linalg.slogdet"} <= names


# -- errors ----------------------------------------------------------------------------

def _grad(fn, *args):
    return sg.grad(fn, argnums=tuple(range(len(args))), backend="numpy")(*args)


def test_matmul_shape_mismatch_names_both_shapes():
    with pytest.raises(ShapeError, match=r"\(2, 3\) and \(4, 5\) are not aligned.*\(3\).*\(4\)"):
        _grad(lambda x, y: np.sum(x @ y), np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ShapeError, match=r"matmul: shapes \(3,\) and \(2,\)"):
        _grad(lambda x, y: np.matmul(x, y), np.ones(3), np.ones(2))
    with pytest.raises(ShapeError, match=r"batch axes of shapes \(2, 3, 4\) and \(3, 4, 2\)"):
        _grad(lambda x, y: np.sum(x @ y), np.ones((2, 3, 4)), np.ones((3, 4, 2)))


def test_matmul_with_a_scalar_points_to_multiplication():
    with pytest.raises(ShapeError, match=r"at least one axis.*multiply by a scalar with \*"):
        _grad(lambda x: np.sum(x @ 2.0), np.ones(3))


def test_matmul_out_argument_is_refused():
    with pytest.raises(UnsupportedFunctionError, match="out="):
        _grad(lambda x: np.sum(np.matmul(x, x, out=np.empty((2, 2)))), np.ones((2, 2)))


@pytest.mark.parametrize("fn,shape,message", [
    (np.linalg.det, (2, 3), r"det: needs a square matrix.*got f64\[2,3\]"),
    (np.linalg.inv, (3,), r"inv: needs a square matrix"),
    (lambda a: np.linalg.slogdet(a)[1], (2, 2, 3), r"slogdet: needs a square matrix or a stack"),
])
def test_non_square_matrices_are_refused(fn, shape, message):
    with pytest.raises(ShapeError, match=message):
        _grad(lambda a: np.sum(fn(a)), np.ones(shape))


def test_solve_right_hand_side_shape_is_checked():
    with pytest.raises(ShapeError, match=r"right-hand side f64\[3\] must have shape \(2,\)"):
        _grad(lambda a, b: np.sum(np.linalg.solve(a, b)), np.eye(2), np.ones(3))
    with pytest.raises(ShapeError, match=r"batch axes of shapes \(2, 2, 2\) and \(3, 2, 1\)"):
        _grad(lambda a, b: np.sum(np.linalg.solve(a, b)), np.ones((2, 2, 2)), np.ones((3, 2, 1)))


@pytest.mark.parametrize("spec,nargs,message", [
    ("i1,i1->", 2, "letters"),
])
def test_unsupported_einsum_specs_say_so(spec, nargs, message):
    args = [np.ones((2, 2))] * nargs
    with pytest.raises(UnsupportedFunctionError, match=message):
        _grad(lambda *xs: np.sum(np.einsum(spec, *xs)), *args)


def test_einsum_size_mismatch_names_the_letter():
    with pytest.raises(ShapeError, match="letter 'j' stands for axes of sizes 3 and 4"):
        _grad(lambda x, y: np.sum(np.einsum("ij,jk->ik", x, y)), np.ones((2, 3)), np.ones((4, 2)))


@pytest.mark.parametrize("x, ord", [(np.ones((2, 2)), 3), (np.ones(2), "fro"),
                                    (np.ones(2), "nuc")])
def test_an_invalid_norm_order_is_numpys_error(x, ord):
    with pytest.raises(ValueError) as ours:
        _grad(lambda x: np.linalg.norm(x, ord), x)
    with pytest.raises(ValueError) as numpys:
        np.linalg.norm(x, ord)
    assert str(ours.value) == str(numpys.value)


# -- a model-shaped function on both backends ------------------------------------------

def gaussian_nll(mean, chol, x):
    """Negative log-likelihood of x under N(mean, L L^T), through solve and slogdet."""
    cov = chol @ chol.T + 0.5 * np.eye(3)
    r = x - mean
    _, logdet = np.linalg.slogdet(cov)
    return 0.5 * (r @ np.linalg.solve(cov, r) + logdet)


def test_gaussian_nll_gradient_on_both_backends_and_finite_differences():
    rng = rng_for("gaussian_nll")
    args = [rng.uniform(-1, 1, 3), np.tril(rng.uniform(-1, 1, (3, 3))), rng.uniform(-1, 1, 3)]
    argnums = (0, 1, 2)
    nb = sg.value_and_grad(gaussian_nll, argnums=argnums)(*args)
    py = sg.value_and_grad(gaussian_nll, argnums=argnums, backend="numpy")(*args)
    assert_close(nb[0], py[0], rtol=1e-14, atol=1e-15, what="value")
    assert_close(nb[0], gaussian_nll(*args), rtol=1e-14, what="value vs numpy")
    for k in argnums:
        assert_close(nb[1][k], py[1][k], rtol=1e-13, atol=1e-14, what=f"gradient {k}")
        assert_close(nb[1][k], finite_differences(gaussian_nll, args, k), rtol=1e-7,
                     atol=1e-8, what=f"gradient {k} vs finite differences")


@pytest.mark.parametrize("backend", BACKENDS)
def test_products_over_an_empty_contracted_axis_are_zeros(backend):
    # numpy sums nothing to 0; the gradients are empty like their arguments
    cases = [(np.matmul, (2, 2, 0), (0, 3)), (np.dot, (2, 0), (4, 0, 3)),
             (np.inner, (2, 0), (3, 0))]
    for fn, sa, sb in cases:
        a, b = np.ones(sa), np.ones(sb)
        value, (ga, gb) = sg.value_and_grad(lambda a, b, f=fn: np.sum(f(a, b)), argnums=(0, 1),
                                            backend=backend)(a, b)
        assert value == 0.0 and ga.shape == sa and gb.shape == sb, fn.__name__
        np.testing.assert_array_equal(sg.jit(fn, backend=backend)(a, b), fn(a, b))


def test_slogdet_is_numpys_named_tuple():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    g = sg.grad(lambda a: np.linalg.slogdet(a).logabsdet, backend="numpy")(a)
    assert_close(g, np.linalg.inv(a).T, what="d log|det| / dA")
    sign, logabsdet = sg.jit(np.linalg.slogdet, backend="numpy")(a)
    assert (sign, logabsdet) == tuple(np.linalg.slogdet(a))


def test_a_norm_order_of_more_than_two_axes_is_numpys_error():
    with pytest.raises(ValueError, match="Improper number of dimensions"):
        sg.jit(lambda x: np.linalg.norm(x, 2), backend="numpy")(np.ones((2, 2, 2)))
