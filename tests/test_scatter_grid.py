"""What the op-table records of tests/optable_late.py cannot show: ``as_strided_scatter``'s
input gradient (PyTorch 2.13's is wrong: finite differences here), the errors of the
``*_scatter`` ops and of ``matrix_norm``, and ``F.grid_sample`` at the borders (bicubic
too) and its refusals."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch_oracle import float64_default  # noqa: E402,F401

import symgrad as sg  # noqa: E402


def _numeric_gradient(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def test_as_strided_scatter_input_gradient_is_the_cotangent_off_the_written_places():
    rng = np.random.default_rng(0)
    xv, sv, w = (rng.standard_normal(shape) for shape in ((3, 4), (2, 2), (3, 4)))

    def f(x):
        return float((sg.as_strided_scatter(sg.tensor(x), sg.tensor(sv), (2, 2), (1, 2), 1)
                      * sg.tensor(w)).sum())
    x = sg.tensor(xv, requires_grad=True)
    s = sg.tensor(sv, requires_grad=True)
    out = sg.as_strided_scatter(x, s, (2, 2), (1, 2), 1)
    (gx, gs) = sg.autograd.grad((out * sg.tensor(w)).sum(), (x, s), create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), _numeric_gradient(f, xv), atol=1e-8)
    written = np.zeros(12, bool)
    written[[1, 2, 3, 4]] = True
    np.testing.assert_array_equal(gx.detach().numpy(), np.where(written.reshape(3, 4), 0, w))
    # src[i, j] lands at 1 + i + 2 j
    np.testing.assert_array_equal(gs.detach().numpy(), [[w.flat[1], w.flat[3]],
                                                        [w.flat[2], w.flat[4]]])
    # PyTorch 2.13's gradient for the input is the cotangent at the written places instead
    tx = torch.tensor(xv, requires_grad=True)
    torch.as_strided_scatter(tx, torch.tensor(sv), (2, 2), (1, 2), 1).mul(torch.tensor(w)).sum() \
        .backward()
    assert not np.allclose(tx.grad.numpy(), gx.detach().numpy())


@pytest.mark.parametrize("call, message", [
    (lambda L, x: L.select_scatter(x, L.ones(1), 0, 1), "size equal to the slice"),
    (lambda L, x: L.select_scatter(x, L.ones(4), 0, 3), "out of range"),
    (lambda L, x: L.slice_scatter(x, L.ones(3, 1), 1, 0, 2), "size equal to the slice"),
    (lambda L, x: L.diagonal_scatter(x, L.ones(3), 0, 1, 1), "cannot be identical"),
    (lambda L, x: L.as_strided_scatter(x, L.ones(4), (4,), (0,)), "single memory location"),
    (lambda L, x: L.as_strided_scatter(x, L.ones(4), (4,), (4,)), "out of bounds"),
    (lambda L, x: L.linalg.matrix_norm(x, 3), "Order 3 not supported"),
    (lambda L, x: L.norm(x[None], "nuc"), "dim must be a 2-tuple"),
    (lambda L, x: L.linalg.matrix_norm(x, "nuc", dim=(0, -2)), "dims must be different"),
    (lambda L, x: x.long().norm("nuc"), "floating point"),
])
def test_errors_are_pytorchs(call, message):
    for L in (sg, torch):
        with pytest.raises((RuntimeError, IndexError), match=message):
            call(L, L.arange(12.0).reshape(3, 4))


def test_as_strided_scatter_gradient_of_a_noncontiguous_input_is_refused():
    x = sg.ones(4, 3, requires_grad=True).t()
    with pytest.raises(NotImplementedError, match="contiguous"):
        sg.as_strided_scatter(x, sg.ones(2), (2,), (1,))
    with sg.no_grad():  # values only: as PyTorch's, on x's storage
        got = sg.as_strided_scatter(x, sg.zeros(2), (2,), (1,))
    want = torch.as_strided_scatter(torch.ones(4, 3).t(), torch.zeros(2), (2,), (1,))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_scatter_ops_twice_after_the_inputs_changed():
    x, s = sg.zeros(3, 4), sg.ones(4, requires_grad=True)
    first = sg.select_scatter(x, s, 0, 1)
    with sg.no_grad():
        s.mul_(3)
    x.fill_(2.0)
    second = sg.select_scatter(x, s, 0, 1)
    assert first.sum().item() == 4.0 and second.sum().item() == 2.0 * 8 + 12
    second.sum().backward()
    assert s.grad.tolist() == [1.0] * 4


# -- F.grid_sample at the borders: points on them, past them and on reflection points
_BORDERS = [-1.0, 1.0, 0.0, -1.0, 1.0, 1.0, -1.25, 1.25, 0.5, -0.5, 1.2, -1.1, -3.0, 2.75,
            -1.5, 3.5, 0.75, 1.0 / 3.0]


@pytest.mark.parametrize("d", [2, 3])
def test_grid_sample_gradients_at_the_borders_are_pytorchs(d):
    rng = np.random.default_rng(d)
    xs = rng.standard_normal((1, 2) + ((4, 5) if d == 2 else (3, 4, 2)))
    gs = rng.uniform(-1.3, 1.3, (1, 3, 3) + ((d,) if d == 2 else (2, d)))
    gs.flat[:len(_BORDERS)] = _BORDERS
    w = rng.standard_normal((1, 2, 3, 3) + (() if d == 2 else (2,)))
    for mode in ("bilinear", "nearest") + (("bicubic",) if d == 2 else ()):
        for pad in ("zeros", "border", "reflection"):
            for align in (False, True):
                res = []
                for L in (sg, torch):
                    x, g = L.tensor(xs, requires_grad=True), L.tensor(gs, requires_grad=True)
                    o = L.nn.functional.grid_sample(x, g, mode, pad, align)
                    gx, gg = L.autograd.grad((o * L.tensor(w)).sum(), (x, g), allow_unused=True,
                                             create_graph=d == 2)
                    gg = np.zeros(gs.shape) if gg is None else gg.detach().numpy()
                    res.append([o.detach().numpy(), gx.detach().numpy(), gg])
                    if d == 2 and mode != "nearest":  # (nearest: second order zero)
                        firsts = L.autograd.grad((o * L.tensor(w)).sum(), (x, g),
                                                 create_graph=True)
                        total = sum((f * f).sum() for f in firsts)
                        res[-1] += [s.numpy() for s in L.autograd.grad(total, (x, g))]
                for j, (a, b) in enumerate(zip(*res)):
                    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12,
                                               err_msg=f"{mode} {pad} {align} result {j}")


@pytest.mark.parametrize("d", [2, 3])
def test_grid_sample_of_infinite_points_with_border_padding(d):
    # an infinite coordinate is clipped to the border (its value and input gradient
    # those of a point far out, 1e10), its grid gradient 0; it was inf - inf = NaN
    # (bilinear) or a point outside the input, 0 (nearest). PyTorch's forward gives the
    # border's value; its backward of an infinite point crashes (segfault), so the
    # gradients' oracle is PyTorch's at 1e10
    rng = np.random.default_rng(d)
    xs = rng.standard_normal((1, 2) + ((4, 5) if d == 2 else (3, 4, 2)))
    far = rng.uniform(-0.9, 0.9, (1, 1, 4, d))
    far[0, 0, :, 0] = [1e10, -1e10, 1e10, -1e10]
    far[0, 0, 2:, d - 1] = [-1e10, 1e10]
    far = far if d == 2 else far[:, None]
    inf = np.where(np.abs(far) == 1e10, np.sign(far) * np.inf, far)
    for mode in ("bilinear", "nearest"):
        for align in (False, True):
            x, g = torch.tensor(xs, requires_grad=True), torch.tensor(far, requires_grad=True)
            o = torch.nn.functional.grid_sample(x, g, mode, "border", align)
            want = [o.detach().numpy(), *(t.numpy() for t in torch.autograd.grad(o.sum(), (x, g)))]
            assert np.array_equal(torch.nn.functional.grid_sample(
                torch.tensor(xs), torch.tensor(inf), mode, "border", align).numpy(), want[0])
            x, g = sg.tensor(xs, requires_grad=True), sg.tensor(inf, requires_grad=True)
            o = sg.nn.functional.grid_sample(x, g, mode, "border", align)
            gx, gg = sg.autograd.grad(o.sum(), (x, g), allow_unused=True)
            got = [o.detach().numpy(), gx.numpy(),
                   np.zeros(inf.shape) if gg is None else gg.numpy()]
            for a, b in zip(got, want):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=f"{mode} {align}")


def test_grid_sample_checks_its_arguments():
    for L in (sg, torch):
        with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
            L.nn.functional.grid_sample(L.ones(1, 1, 2, 2, 2), L.zeros(1, 1, 1, 1, 3),
                                        mode="bicubic", align_corners=False)
        with pytest.raises(ValueError, match="padding_mode"):
            L.nn.functional.grid_sample(L.ones(1, 1, 3, 3), L.zeros(1, 2, 2, 2),
                                        padding_mode="circular", align_corners=False)
        with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
            L.nn.functional.grid_sample(L.ones(1, 1, 3, 3), L.zeros(1, 2, 2, 2).float(),
                                        align_corners=False)
