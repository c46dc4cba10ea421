"""Complex Tensors (symgrad.eager.complex_tensors) against real PyTorch 2.13 and finite
differences: values, dtypes, gradients with PyTorch's convention, the LLaMA rotary
embedding program forward and backward, memory shared by view_as_complex/view_as_real,
and the refusals of everything else."""

from __future__ import annotations

import re

import numpy as np
import pytest

import symgrad as sg

from cases import FULL

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(27)
Z = RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))
X = RNG.normal(size=(3, 4))

#: (name, f(T, z, x)) run by symgrad and torch alike
OPS = [
    ("z*x", lambda T, z, x: z * x), ("x*z", lambda T, z, x: x * z), ("z*z", lambda T, z, x: z * z),
    ("z+x", lambda T, z, x: z + x), ("x-z", lambda T, z, x: x - z), ("z/x", lambda T, z, x: z / x),
    ("x/z", lambda T, z, x: x / z), ("z/(conj+2)", lambda T, z, x: z / (z.conj() + 2)),
    ("-z", lambda T, z, x: -z), ("exp", lambda T, z, x: T.exp(z * 0.3)),
    ("exp(z*x)", lambda T, z, x: (z * x).exp()), ("x*1j", lambda T, z, x: x * 1j),
    ("z*2", lambda T, z, x: z * 2), ("2-z", lambda T, z, x: 2 - z), ("1/z", lambda T, z, x: 1 / z),
    ("z*(1+2j)", lambda T, z, x: z * (1 + 2j)), ("real", lambda T, z, x: (z * x).real),
    ("imag", lambda T, z, x: (z * z).imag), ("conj", lambda T, z, x: z.conj() * z),
    ("abs", lambda T, z, x: z.abs()), ("angle", lambda T, z, x: z.angle()),
    ("torch.abs", lambda T, z, x: T.abs(z)), ("reshape", lambda T, z, x: (z * x).reshape(2, 6)),
    ("view", lambda T, z, x: (z * x).view(12)), ("flatten", lambda T, z, x: (z * z).flatten()),
    ("unsqueeze", lambda T, z, x: (z * x).unsqueeze(1)),
    ("transpose", lambda T, z, x: z.transpose(0, 1) * x.t()), ("t", lambda T, z, x: z.t()),
    ("z[1]", lambda T, z, x: z[1] * x[0]), ("slice", lambda T, z, x: z[:, 1:3] * 2),
    ("fancy", lambda T, z, x: z[T.tensor([2, 0])]), ("sum", lambda T, z, x: (z * x).sum()),
    ("sum(1)", lambda T, z, x: (z * z).sum(1)), ("mean", lambda T, z, x: (z * x).mean()),
    ("mean(0)", lambda T, z, x: z.mean(0, keepdim=True)),
    ("broadcast", lambda T, z, x: z * x[0]), ("broadcast2", lambda T, z, x: z[:, :1] * x),
    ("complex", lambda T, z, x: T.complex(x, x * x)),
    ("polar", lambda T, z, x: T.polar(x.abs(), x)),
    ("view_as_complex", lambda T, z, x: T.view_as_complex(x.reshape(3, 2, 2)) * z[:, :2]),
    ("view_as_real", lambda T, z, x: T.view_as_real(z * x)),
    ("to(complex128)", lambda T, z, x: x.to(T.complex128) * z),
    ("to(complex64)", lambda T, z, x: z.to(T.complex64) * z),
    ("torch.real/imag", lambda T, z, x: T.real(z * x) * T.imag(z)),
    ("torch.conj/angle", lambda T, z, x: T.conj(z) * T.angle(z) + T.angle(x)),
    ("conj_physical", lambda T, z, x: z.conj_physical().resolve_conj() * (1 + z.is_conj())),
]
#: (complex dtype, real dtype) by name, both libraries having them
DTYPES = [("complex128", "float64"), ("complex64", "float32"), ("complex64", "float64")]


def _loss(T, out):
    """A real loss of any output: the squares of its parts."""
    return ((T.view_as_real(out) if out.is_complex() else out) ** 2).sum()


def _run(T, f, cdtype, rdtype):
    z = T.tensor(Z, dtype=getattr(T, cdtype), requires_grad=True)
    x = T.tensor(X, dtype=getattr(T, rdtype), requires_grad=True)
    out = f(T, z, x)
    _loss(T, out).backward()
    return out, z.grad, x.grad


def _np(t):
    return None if t is None else t.detach().numpy()


def _same(a, b, what, rtol):
    if b is None:
        assert a is None, what
        return
    assert str(a.dtype) == str(b.dtype), (what, a.dtype, b.dtype)
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=rtol, err_msg=what)


@pytest.mark.parametrize("dtypes", DTYPES, ids=lambda d: "-".join(d))
@pytest.mark.parametrize("name,f", OPS, ids=[n for n, _ in OPS])
def test_values_dtypes_and_gradients_match_torch(name, f, dtypes):
    rtol = 1e-12 if dtypes[1] == "float64" and dtypes[0] == "complex128" else 2e-5
    got, want = _run(sg, f, *dtypes), _run(torch, f, *dtypes)
    for a, b, what in zip(got, want, ("value", "z.grad", "x.grad")):
        _same(a, b, f"{name} {what}", rtol)


@pytest.mark.parametrize("a", ["f32", "f64", "c64", "c128", "f64_0d", "c128_0d", "i64", "1j",
                               "2.5"])
def test_promotion_matches_torch(a):
    def operand(T, name):
        if name in ("1j", "2.5"):
            return eval(name)
        kind, _, zero_d = name.partition("_")
        dtype = {"f32": T.float32, "f64": T.float64, "c64": T.complex64,
                 "c128": T.complex128, "i64": T.int64}[kind]
        return T.ones(() if zero_d else (2,), dtype=dtype)
    for b in ["c64", "c128", "c64_0d", "1j"]:
        if not any(name.startswith("c") or name == "1j" for name in (a, b)):
            continue
        if a in ("1j", "2.5", "i64") and b == "1j":  # no tensor, or only a Python complex
            continue  # decides: the default complex dtype (float64's here, float32's in torch)
        got = operand(sg, a) * operand(sg, b)
        want = operand(torch, a) * operand(torch, b)
        assert str(got.dtype) == str(want.dtype), (a, b)


def _fd_grad(f, z, h=1e-6):
    """dL/dRe + i dL/dIm by central differences (PyTorch's convention)."""
    g = np.zeros_like(z)
    for k in np.ndindex(z.shape):
        for step in (1, 1j):
            e = np.zeros_like(z)
            e[k] = step * h
            g[k] += step * (f(z + e) - f(z - e)) / (2 * h)
    return g


def test_a_complex_leafs_gradient_is_pytorchs_and_finite_differences():
    """z.grad = dL/dRe(z) + i dL/dIm(z) (the conjugate of sg.grad's, JAX's)."""
    c = np.array([0.5 - 1j, 2 + 0.25j, -1j])
    z0 = np.array([1 + 2j, -0.5 + 0.3j, 0.7 - 1.1j])

    def loss(T, z):
        w = z * T.tensor(c) + z.conj() * 0.3j
        return (w.abs() ** 2).sum() + (z * z).imag.sum() + T.exp(z).real.mean()
    grads = []
    for T in (sg, torch):
        z = T.tensor(z0, requires_grad=True)
        loss(T, z).backward()
        grads.append(z.grad.numpy())
    fd = _fd_grad(lambda v: float(loss(sg, sg.tensor(v)).numpy()), z0)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(grads[0], fd, rtol=1e-7, atol=1e-7)
    jax_convention = sg.grad(lambda v: np.sum(np.abs(v * c + np.conj(v) * 0.3j) ** 2)
                             + np.sum(np.imag(v * v)) + np.mean(np.real(np.exp(v))),
                             backend="numpy")(z0)
    np.testing.assert_allclose(grads[0], np.conj(jax_convention), rtol=1e-13)


def test_angle_of_real_tensors_as_torch():
    """0 or pi (0 at -0.0, where numpy's atan2 gives pi), nan for nan; a zero gradient."""
    values = [1.0, -2.0, np.inf, -np.inf, np.nan, -0.0, 0.0]
    got = []
    for T in (sg, torch):
        x = T.tensor(values, dtype=T.float32, requires_grad=True)
        a = T.angle(x)
        a.sum().backward()
        got.append((a, x.grad))
    for a, b in zip(*got):
        _same(a, b, "angle", 0)
    # (of integers: the default float dtype, float64 here)
    assert sg.angle(sg.tensor([3, -1])).tolist() == [0.0, np.pi]  # torch: float32(pi)


@pytest.mark.parametrize("cdtype", ["complex64", "complex128"])
def test_angle_at_complex_zero_as_torch(cdtype):
    """PyTorch's angle_backward is 0 at z = 0 (atan2's derivative there is nan); the
    values at the signed zeros stay atan2's (0, pi, -pi, -0)."""
    zs = [0j, complex(-0.0, 0.0), complex(-0.0, -0.0), complex(0.0, -0.0), 1 + 1j, -2 + 0j,
          complex(-2.0, -0.0), complex(3.0, -0.0)]  # (-pi and -0 beside a zero)
    got = []
    for T in (sg, torch):
        z = T.tensor(zs, dtype=getattr(T, cdtype), requires_grad=True)
        a = (z * 2).angle()
        (a * T.arange(1.0, 9.0, dtype=a.dtype)).sum().backward()
        got.append((a, z.grad))
    for a, b in zip(*got):
        _same(a, b, "angle at 0", 1e-6 if cdtype == "complex64" else 1e-15)
    np.testing.assert_array_equal(np.signbit(_np(got[0][0])), np.signbit(_np(got[1][0])))


def test_backward_of_a_complex_output_takes_its_gradient_and_retains_intermediates():
    got = []
    for T in (sg, torch):
        z = T.tensor([1 + 2j, -1j], requires_grad=True)
        y = z * z
        y.retain_grad()
        (y * (2 - 1j)).backward(T.tensor([1 + 1j, 2 + 0j]))
        got.append((z.grad.numpy(), y.grad.numpy()))
        with pytest.raises(RuntimeError, match="only for real scalar outputs"):
            (T.tensor([1j], requires_grad=True) * 2).sum().backward()
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def rope(T, xq, theta=10000.0):
    """LLaMA's rotary embedding (apply_rotary_emb for xq), as its users write it."""
    _, seq, _, dim = xq.shape
    freqs = 1.0 / (theta ** (T.arange(0, dim, 2).float() / dim))
    t = T.arange(seq)
    f = T.outer(t, freqs)
    freqs_cis = T.polar(T.ones_like(f), f)
    xq_ = T.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, seq, 1, dim // 2)
    return T.view_as_real(xq_ * freqs_cis).flatten(3).type_as(xq)


W, B = RNG.normal(size=(24, 6)) * 0.3, RNG.normal(size=24) * 0.1
XS = RNG.normal(size=(2, 5, 6))


def _rope_step(T, dtype, shift, batch):
    """A loss of rope(Linear(x)) backpropagated to x and the Linear's parameters."""
    lin = T.nn.Linear(6, 24)
    with T.no_grad():
        lin.weight.copy_(T.tensor(W))
        lin.bias.copy_(T.tensor(B))
    lin = lin.to(dtype)
    x = T.tensor(XS[:batch] + shift, dtype=dtype, requires_grad=True)
    out = rope(T, lin(x).view(batch, 5, 3, 8))
    loss = (out * out.sin()).sum()
    loss.backward()
    return out, x.grad, lin.weight.grad, lin.bias.grad


def _check_rope(name, shifts=(0.0, 0.5), batch=2):
    for shift in shifts:  # called again with other inputs: the cached structure
        got = _rope_step(sg, getattr(sg, name), shift, batch)
        want = _rope_step(torch, getattr(torch, name), shift, batch)
        for a, b, what in zip(got, want, ("out", "x.grad", "weight.grad", "bias.grad")):
            # (complex64 arithmetic either way: float32 rounding, PyTorch's order differs)
            _same(a, b, f"{name} {what}", 2e-5)


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_rotary_embeddings_forward_and_backward_match_torch(name):
    _check_rope(name)


@pytest.mark.kernels
@pytest.mark.skipif(not FULL, reason="a Numba compile of ~15-40 s: SYMGRAD_FULL=1")
def test_rotary_embeddings_backward_compiled_matches_torch():
    """The third run of one structure calls its Numba kernel (complex128 values)."""
    before = sg.eager.backward.backward_stats()["compiled_runs"]
    _check_rope("float32", shifts=(0.0, 0.25, 0.5), batch=1)  # (a structure of its own)
    assert sg.eager.backward.backward_stats()["compiled_runs"] > before


def test_views_share_memory_both_ways():
    for T in (sg, torch):
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]])
        z = T.view_as_complex(x)
        with T.no_grad():
            x[0, 1] = 7.0
        r = T.view_as_real(z)
        with T.no_grad():
            r[1, 0] = -5.0
        re = z.real
        with T.no_grad():
            re[0] = 9.0
        assert z.numpy().tolist() == [9 + 7j, -5 + 4j], T
        assert x.numpy().tolist() == [[9.0, 7.0], [-5.0, 4.0]], T


def test_a_write_after_the_view_was_saved_raises_as_in_torch():
    for T in (sg, torch):
        y = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True) * 1.0
        w = T.tensor([1 + 1j, 2j], requires_grad=True)
        loss = (T.view_as_complex(y) * w).abs().sum()
        with T.no_grad():
            y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


REFUSED = [
    (lambda z, x: z.sin(), "sin does not take complex Tensors"),
    (lambda z, x: np.log(z), "log does not take complex Tensors"),
    (lambda z, x: z @ z.t(), "matmul does not take complex Tensors"),
    (lambda z, x: z ** 2, "pow does not take complex Tensors"),
    (lambda z, x: z.sqrt(), "sqrt does not take complex Tensors"),
    (lambda z, x: z > 0, "gt does not take complex Tensors"),
    (lambda z, x: z.floor(), "Tensor.floor does not take complex Tensors"),
    (lambda z, x: z.sort(), "Tensor.sort does not take complex Tensors"),
    (lambda z, x: z.isreal(), "Tensor.isreal does not take complex Tensors"),
    (lambda z, x: sg.where(x > 0, x, z), "where does not take complex Tensors"),
    (lambda z, x: np.fft.rfft(x), "fft does not take complex Tensors"),
    (lambda z, x: z.float(), "would drop the imaginary part"),
    (lambda z, x: sg.tensor([1 + 2j], dtype=sg.float64), "cannot convert complex values"),
    (lambda z, x: z.mul_(2), "Tensor.mul_ does not take complex Tensors"),
    (lambda z, x: z.detach().__setitem__(0, 1j), "in-place operations"),
    (lambda z, x: x.detach().copy_(z), "in-place operations"),
    (lambda z, x: z.register_hook(print), "register_hook on a complex tensor"),
    (lambda z, x: sg.autograd.grad(z.abs().sum(), z), "torch.autograd.grad"),
    (lambda z, x: (z * 2).abs().sum().backward(create_graph=True), "create_graph"),
]


@pytest.mark.parametrize("k", range(len(REFUSED)))
def test_what_complex_tensors_do_not_support_is_refused_by_name(k):
    f, message = REFUSED[k]
    z = sg.tensor(Z, requires_grad=True)
    x = sg.tensor(X, requires_grad=True)
    with pytest.raises(TypeError, match=re.escape(message)):
        f(z, x)


def test_a_recorded_write_into_a_tensor_with_a_complex_view_is_refused():
    y = sg.tensor([[1.0, 2.0]], requires_grad=True) * 1.0
    sg.view_as_complex(y)
    with pytest.raises(RuntimeError, match="shares its memory with a complex tensor"):
        y.mul_(2)


@pytest.mark.parametrize("bad", ["size3", "int", "stride", "offset"])
def test_view_as_complex_checks_as_torch(bad):
    def make(T):
        return {"size3": lambda: T.ones(3, 3), "int": lambda: T.ones(3, 2, dtype=T.int64),
                "stride": lambda: T.ones(2, 4).t(), "offset": lambda: T.ones(4, 4)[:, 1:3]}[bad]()
    with pytest.raises(RuntimeError) as want:
        torch.view_as_complex(make(torch))
    with pytest.raises(RuntimeError) as got:
        sg.view_as_complex(make(sg))
    assert str(got.value).replace("half, ", "") == str(want.value).replace("half, ", "")


@pytest.mark.parametrize("values", [[1 + 2j, 3 - 1j], [[0.1 + 2.5j, -3 - 1e-3j], [1, 2]],
                                    [complex("nan+1j"), 1, -2.5j], list(np.arange(12) * (1 + 1j))])
def test_printing_matches_torch(values):
    def shown(T, dtype):
        return re.sub(r",\s*dtype=torch\.complex\d+", "", repr(T.tensor(values, dtype=dtype)))
    for name in ("complex64", "complex128"):
        assert shown(sg, getattr(sg, name)) == shown(torch, getattr(torch, name))
