"""``F.ctc_loss``/``nn.CTCLoss`` (symgrad/nn/ctc.py) beyond the op table
(tests/optable_late.py): the refused double backward, the module, training steps whose
inputs change, in-place changes and the errors, against PyTorch 2.13."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg

torch = pytest.importorskip("torch")
from torch_oracle import float64_default  # noqa: E402,F401

_TG = [[1, 1, 3], [2, 4, 0], [3, 2, 4]]


def _raised(call) -> str:
    with pytest.raises(Exception) as error:  # noqa: PT011 -- compared with PyTorch's below
        call()
    return f"{type(error.value).__name__}: {error.value}"


def test_ctc_double_backward_raises_as_pytorch():
    x0 = np.random.default_rng(0).standard_normal((5, 3, 5))
    seen = []
    for L in (torch, sg):
        x = L.tensor(x0, requires_grad=True)
        loss = L.nn.functional.ctc_loss(x.log_softmax(2), L.tensor(_TG), (5, 4, 5), (3, 2, 1))
        g, = L.autograd.grad(loss, x, create_graph=True)
        seen.append((g.detach().numpy(), g.requires_grad,
                     _raised(lambda g=g: (g * g).sum().backward()), x.grad))
    np.testing.assert_allclose(seen[1][0], seen[0][0], rtol=1e-12, atol=1e-15)
    assert seen[1][1:] == seen[0][1:]


def test_ctc_module_training_steps_equal_pytorch():
    """nn.CTCLoss in a few steps of SGD on a linear layer: the inputs change every step
    (the backward's kernel is reused, its per-call state must be the step's)."""
    rng = np.random.default_rng(1)
    w0, feats = rng.standard_normal((5, 4)), rng.standard_normal((3, 6, 3, 4))
    history = []
    for L in (torch, sg):
        w = L.tensor(w0, requires_grad=True)
        opt = L.optim.SGD([w], lr=0.1)
        ctc = L.nn.CTCLoss(blank=4, reduction="mean", zero_infinity=True)
        steps = []
        for k in range(3):
            opt.zero_grad()
            lp = (L.tensor(feats[k]) @ w.T).log_softmax(2)
            loss = ctc(lp, L.tensor(_TG) - 1, L.tensor([6, 5, 1 + k]), L.tensor([3, 2, 3]))
            loss.backward()
            opt.step()
            steps.append((float(loss.detach()), w.detach().numpy().copy()))
        history.append(steps)
    for (lt, wt), (ls, ws) in zip(*history):
        assert ls == pytest.approx(lt, rel=1e-12)
        np.testing.assert_allclose(ws, wt, rtol=1e-12)


def test_ctc_input_changed_in_place_raises_as_pytorch():
    x0 = np.random.default_rng(2).standard_normal((5, 2, 4))
    seen = []
    for L in (torch, sg):
        lp = L.tensor(x0, requires_grad=True).log_softmax(2)
        loss = L.nn.functional.ctc_loss(lp, L.tensor([[1, 2], [3, 3]]), (5, 4), (2, 2))
        lp.mul_(2)
        seen.append(_raised(loss.backward).split(":")[0:2])
    assert seen[0][0] == seen[1][0] and "modified by an inplace operation" in seen[1][1]


@pytest.mark.parametrize("args", [
    dict(il=(7, 5)), dict(il=(5, 5, 5)), dict(tl=(3, 9)), dict(tl=(-1, 2)),
    dict(tg=[[1, 2]] * 3), dict(blank=5), dict(tg=[1, 2, 3, 4, 1, 1], tl=(3, 2)),
    dict(tg=[1, 2, 3, 4], tl=(3, 2)), dict(dtype="float16"), dict(dtype="int64")])
def test_ctc_errors_match_pytorch(args):
    x0 = np.random.default_rng(3).standard_normal((6, 2, 5))
    errors = []
    for L in (torch, sg):
        lp = L.tensor(x0).log_softmax(2).to(getattr(L, args.get("dtype", "float64")))
        tg = L.tensor(args.get("tg", [[1, 2, 3, 4]] * 2))
        errors.append(_raised(lambda L=L, lp=lp, tg=tg: L.nn.functional.ctc_loss(
            lp, tg, args.get("il", (6, 5)), args.get("tl", (3, 2)), blank=args.get("blank", 0))))
    assert errors[1] == errors[0]


def test_ctc_refuses_what_pytorch_reads_outside_its_tables():
    lp = sg.tensor(np.zeros((4, 1, 3))).log_softmax(2)
    with pytest.raises(IndexError, match="outside the 3 classes"):
        sg.nn.functional.ctc_loss(lp, sg.tensor([[1, 3]]), (4,), (2,))
    with pytest.raises(NotImplementedError, match="input length of 0"):
        sg.nn.functional.ctc_loss(lp, sg.tensor([[1, 2]]), (0,), (0,))


@pytest.mark.parametrize("shape, mode, options", [
    ((1, 2, 6), "linear", {}), ((1, 2, 6, 6), "nearest", {}), ((1, 1, 4, 4, 4), "trilinear", {}),
    ((1, 2, 6, 6), "area", {}), ((1, 2, 6, 6), "lanczos", dict(antialias=False)),
    ((1, 2, 6, 6), "lanczos", dict(align_corners=True))])
def test_interpolate_antialias_refusals_match_pytorch(shape, mode, options):
    errors = []
    for L in (torch, sg):
        x = L.zeros(shape)
        errors.append(_raised(lambda L=L, x=x: L.nn.functional.interpolate(
            x, scale_factor=0.5, mode=mode, **{"antialias": True, **options})))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("shape, mode, options", [
    ((1, 1, 9), "linear", dict(scale_factor=0.1)), ((1, 2, 1, 9), "nearest", dict(size=(0, 3))),
    ((1, 1, 1, 9), "bilinear", dict(scale_factor=(0.5, 2.5), antialias=True)),
    ((1, 1, 0, 3), "bicubic", dict(size=(2, 2))),
    ((1, 1, 2, 3, 4), "trilinear", dict(scale_factor=0.4))])
def test_interpolate_to_an_empty_size_raises_as_pytorch(shape, mode, options):
    # it returned an empty tensor where PyTorch refuses
    errors = [_raised(lambda L=L: L.nn.functional.interpolate(L.zeros(shape), mode=mode,
                                                               **options)) for L in (torch, sg)]
    assert errors[1] == errors[0]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_antialias_to_width_one_is_the_separable_resampling(mode):
    # PyTorch 2.13's antialiased kernel to a width of 1 repeats the first row (rows of
    # (8, 7) -> (3, 1) all 159.35); its result on the transposed input, and width then
    # height as two calls, are the separable resampling symgrad computes
    x = np.arange(56.0).reshape(1, 1, 8, 7) ** 2
    kw = dict(mode=mode, align_corners=False, antialias=True)
    got = sg.nn.functional.interpolate(sg.tensor(x), size=(3, 1), **kw).numpy()
    T = torch.nn.functional.interpolate
    transposed = T(torch.tensor(x).transpose(2, 3), size=(1, 3), **kw).transpose(2, 3).numpy()
    two_calls = T(T(torch.tensor(x), size=(3, 7), **kw), size=(3, 1), **kw).numpy()
    np.testing.assert_allclose(transposed, two_calls, rtol=1e-13)
    np.testing.assert_allclose(got, transposed, rtol=1e-13)
    assert len(np.unique(got)) == 3
