"""What a replayed or recomputed eager backward reads after the world changed
between the forward and ``backward``, against real PyTorch: float32 values on a kink,
leaves and data changed in place, through ``.data`` or through numpy (``from_numpy``,
``.numpy()``), tensors a node holds a copy of (a convolution's windows, a loss's
targets), intermediates changed through ``.data``, fused ops. PyTorch's backward reads
what its nodes saved; symgrad's reads the forward's values where it kept them, and
refuses with a RuntimeError where it would otherwise return another gradient. Split
from tests/test_replay.py (the replayed step, its guard and its counters); the
backward runs on the numpy interpreter unless the test says otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

import symgrad  # noqa: E402
from symgrad.core.config import config  # noqa: E402

RTOL = 1e-12


@pytest.fixture(autouse=True)
def interpreted(monkeypatch):
    monkeypatch.setattr(config, "eager_compile", False)
    before = torch_real.get_default_dtype()
    torch_real.set_default_dtype(torch_real.float64)
    yield
    torch_real.set_default_dtype(before)


# -- saved values: what PyTorch's backward reads, not a recomputation -----------------
# float32 values on which W*X - Y rounds to exactly 0 (in float64 it is 9.5e-8 > 0): a
# backward that recomputed the forward in float64 took the other side of every kink
_W, _X, _Y = np.float32(1.7199054), np.float32(1.8691334), np.float32(3.2147324)

KINKS = {
    "relu": lambda L, z: z.relu(),
    "abs": lambda L, z: z.abs(),
    "clamp": lambda L, z: z.clamp(min=0.0),
    "maximum": lambda L, z: L.maximum(z, L.zeros_like(z)),  # a tie: half to each
    "minimum": lambda L, z: L.minimum(z, L.zeros_like(z)),
    "max_dim": lambda L, z: L.stack([z, L.zeros_like(z)]).max(0)[0],
    "amax": lambda L, z: L.stack([z, L.zeros_like(z)]).amax(0),
    "max_all": lambda L, z: z.max() + z * 0.5,
    "where": lambda L, z: L.where(z > 0, z, z * 0.25),
    "sign": lambda L, z: z.sign() * z.detach(),
    "hardtanh": lambda L, z: L.nn.functional.hardtanh(z, 0.0, 1.0),
    "l1_loss": lambda L, z: L.nn.functional.l1_loss(z, L.zeros_like(z), reduction="none"),
    "smooth_l1": lambda L, z: L.nn.functional.smooth_l1_loss(
        z, L.zeros_like(z), reduction="none"),
    "softplus": lambda L, z: L.nn.functional.softplus(z * 1e8, threshold=20) * 1e-8,
    "reciprocal": lambda L, z: 1 / (z + 1),
}


def _outcome(fn):
    """``fn()``'s arrays (float64 copies), or the type of the RuntimeError it raised."""
    try:
        return [None if v is None else np.asarray(v.detach().numpy(), np.float64).copy()
                for v in fn()]
    except RuntimeError:
        return RuntimeError


def _same(ours, theirs, rtol, what, atol=1e-30):
    if theirs is RuntimeError or ours is RuntimeError:
        assert ours is theirs, what
        return
    for a, b in zip(ours, theirs, strict=True):
        if a is None or b is None:
            assert a is None and b is None, what
            continue
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


def kink_program(L, dtype, kink):
    """``exp(kink(W*X - Y)).sum()`` at a float32 kink, differentiated as a training loop
    does and more: two backwards with ``retain_graph`` around an SGD step (PyTorch's
    nodes did not save W, so the second reads the saved values), a gradient of a
    gradient, and a new forward at the updated W."""
    dt = getattr(L, dtype)
    W = L.tensor([_W, _W, 1.0], dtype=dt, requires_grad=True)
    X, Y = L.tensor([_X, _X, 1.0], dtype=dt), L.tensor([_Y, _Y, 0.5], dtype=dt)

    def loss():
        return KINKS[kink](L, W * X - Y).exp().sum()

    out = loss()
    steps = [lambda: (out.backward(retain_graph=True), [out, W.grad])[1]]

    def double():
        (g,) = L.autograd.grad(out, W, create_graph=True)
        (gg,) = L.autograd.grad((g * g).sum(), W)
        return [g, gg]

    def sgd():
        with L.no_grad():
            W.sub_(0.125 * W.grad)
        out.backward()  # into W.grad: the first backward's gradient, twice
        return [W, W.grad]

    def again():
        W.grad = None
        new = loss()
        new.backward()
        return [new, W.grad]
    return steps + [double, sgd, again]


@pytest.mark.parametrize("kink", sorted(KINKS))
def test_float32_kinks_read_the_forward_values(kink):
    for dtype, rtol in (("float32", 2e-6), ("float64", 1e-10)):  # (gg: rounding x 1e8)
        theirs = kink_program(torch_real, dtype, kink)
        ours = kink_program(symgrad, dtype, kink)
        for k, (a, b) in enumerate(zip(ours, theirs)):
            _same(_outcome(a), _outcome(b), rtol, f"{dtype} step {k}")


#: programs of a leaf W and data X whose W changes between forward and backward
CHANGED = {
    "mul_data": lambda W, X: (W * X).sum(),
    "mul_self": lambda W, X: (W * W).sum(),
    "exp": lambda W, X: W.exp().sum(),
    "exp_lin": lambda W, X: (W * 2 + 1).exp().sum(),
    "tanh": lambda W, X: (W * X).tanh().sum(),
    "sigmoid": lambda W, X: (W * X).sigmoid().sum(),
    "relu": lambda W, X: (W * X - 1).relu().sum(),
    "abs": lambda W, X: (W * X - 1).abs().sum(),
    "square_of_result": lambda W, X: ((W * 2) * (W * 2)).sum(),
    "pow": lambda W, X: (W ** 2).sum(),
    "sqrt": lambda W, X: (W * X).sqrt().sum(),
    "log": lambda W, X: (W * X).log().sum(),
    "div": lambda W, X: (X / W).sum(),
    "mm": lambda W, X: (W.reshape(1, 2) @ X.reshape(2, 1)).sum(),
    "mse": lambda W, X: ((W - X) ** 2).mean(),
    "add": lambda W, X: (W + X).sum(),
    "two_layers": lambda W, X: ((W * X).tanh() * X).relu().sum(),
}
#: (program, how W changes) where symgrad refuses and PyTorch gives a number: symgrad's
#: DivBackward reads the output too, PyTorch's only W (its current values after .data)
REFUSED = {("div", "data")}


def changed_program(L, dtype, name, how):
    W = L.tensor([1.5, 0.7], dtype=getattr(L, dtype), requires_grad=True)
    X = L.tensor([2.0, 3.0], dtype=getattr(L, dtype))
    out = CHANGED[name](W, X)

    def first():
        out.backward(retain_graph=True)
        return [out, W.grad]

    def change():
        if how == "data":
            W.data.mul_(3)
        else:
            with L.no_grad():
                W.add_(1)
        W.grad = None
        out.backward(retain_graph=True)  # PyTorch: the saved values, W as it is now
        return [W.grad]

    def once_more():  # a third backward of the same graph, and a fresh forward
        out.backward()
        fresh = CHANGED[name](W, X)
        fresh.backward()
        return [fresh, W.grad]
    return [first, change, once_more]


@pytest.mark.parametrize("how", ["data", "no_grad"])
@pytest.mark.parametrize("name", sorted(CHANGED))
def test_leaf_changed_between_forward_and_backward(name, how):
    """A leaf written through ``.data`` or under ``no_grad`` after the forward: PyTorch
    raises where its nodes saved it (by version), else reads the values its nodes saved
    (the old results; a saved leaf as it is now). symgrad gives the same numbers, or the
    same error, or (``REFUSED``) a RuntimeError saying why it cannot."""
    for dtype, rtol in (("float64", RTOL), ("float32", 2e-5)):  # (float32 1 - tanh²)
        theirs = [_outcome(f) for f in changed_program(torch_real, dtype, name, how)]
        steps = changed_program(symgrad, dtype, name, how)
        ours = [_outcome(steps[0])]
        if (name, how) in REFUSED:
            assert theirs[1] is not RuntimeError
            with pytest.raises(RuntimeError, match="cannot read what PyTorch's would"):
                steps[1]()
            continue
        ours += [_outcome(f) for f in steps[1:]]
        for k, (a, b) in enumerate(zip(ours, theirs)):
            _same(a, b, rtol, f"{dtype} step {k}")


def data_changed_program(L, dtype, how):
    W = L.tensor([1.5, 0.7], dtype=getattr(L, dtype), requires_grad=True)
    X = L.tensor([2.0, 3.0], dtype=getattr(L, dtype))  # data: needs no gradient
    out = (W * X).sum() + (W * W).sum()

    def change():
        if how == "data":
            X.data.mul_(3)
        else:
            with L.no_grad():
                X.add_(1)
        out.backward()
        return [out, W.grad]
    return change


@pytest.mark.parametrize("how", ["data", "no_grad"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_data_changed_between_forward_and_backward(dtype, how):
    """A tensor that needs no gradient, changed after the forward: through ``.data``
    PyTorch's MulBackward reads it as it is now, under ``no_grad`` it raises (a saved
    tensor's version changed). A float32 one as a float64 one: its node keeps the
    tensor's own values, not a copy of the old ones (which refused the first)."""
    theirs = _outcome(data_changed_program(torch_real, dtype, how))
    ours = _outcome(data_changed_program(symgrad, dtype, how))
    _same(ours, theirs, RTOL if dtype == "float64" else 1e-6, f"{dtype} {how}")


COPIED = {  # an op whose node holds a copy of a tensor PyTorch's node saves: (data, loss)
    "conv2d input": (lambda L: L.tensor(np.linspace(-1, 1, 50).reshape(1, 2, 5, 5)),
                     lambda L, W, D: L.nn.functional.conv2d(D, W.reshape(1, 2, 1, 2),
                                                            padding=1).pow(2).sum()),
    "conv1d groups input": (lambda L: L.tensor(np.linspace(-1, 1, 12).reshape(1, 2, 6)),
                            lambda L, W, D: L.nn.functional.conv1d(
                                D, W.reshape(2, 1, 2), groups=2).pow(2).sum()),
    "cross_entropy target": (lambda L: L.tensor([0, 1]),
                             lambda L, W, D: L.nn.functional.cross_entropy(W.reshape(2, 2), D)),
    "cross_entropy float16 target": (lambda L: L.tensor([0, 1]),
                                     lambda L, W, D: L.nn.functional.cross_entropy(
                                         W.reshape(2, 2).half(), D).double()),
    "nll_loss weight": (lambda L: L.tensor([1.0, 3.0]),
                        lambda L, W, D: L.nn.functional.nll_loss(W.reshape(2, 2),
                                                                 L.tensor([0, 1]), weight=D)),
    "bce_with_logits target": (lambda L: L.tensor([0.2, 0.9, 0.5, 0.1]),
                               lambda L, W, D: L.nn.functional.binary_cross_entropy_with_logits(
                                   W, D, pos_weight=L.tensor([2.0]))),
    "bce target": (lambda L: L.tensor([0.2, 0.9, 0.5, 0.1]),
                   lambda L, W, D: L.nn.functional.binary_cross_entropy(W.sigmoid(), D)),
    "soft_margin target": (lambda L: L.tensor([1.0, -1.0, 1.0, 1.0]),
                           lambda L, W, D: L.nn.functional.soft_margin_loss(W, D)),
    # (read as PyTorch's: ATen's -(input * target * weight), the target and weight as they are)
    "cross_entropy probabilities": (lambda L: L.tensor([[0.2, 0.8], [0.6, 0.4]]),
                                    lambda L, W, D: L.nn.functional.cross_entropy(
                                        W.reshape(2, 2), D, weight=L.tensor([1.0, 3.0]))),
}


@pytest.mark.parametrize("how", ["data", "no_grad", "from_numpy"])
@pytest.mark.parametrize("name", sorted(COPIED))
def test_saved_tensor_copied_by_the_node_changed_before_backward(name, how):
    """A convolution's input (its windows), nll_loss's target and weight, the target of
    binary cross entropies (``1 - target``): symgrad's node holds a copy, PyTorch's the
    tensor. Changed in place before backward, PyTorch raises
    (a saved tensor's version); through ``.data``, or through numpy into the array given
    to ``from_numpy``, it reads the new values, which symgrad refuses (before: both gave
    the gradient of the old values)."""
    outcomes = []
    for L in (torch_real, symgrad):
        W = L.tensor([1.5, -0.7, 0.4, 2.0], requires_grad=True)
        make, loss = COPIED[name]
        D = make(L)
        if how == "from_numpy":
            raw = D.numpy().copy()
            D = L.from_numpy(raw)
        out = loss(L, W, D)
        if how == "data":
            D.data.fill_(1)
        elif how == "from_numpy":
            raw[...] = 1
        else:
            with L.no_grad():
                D.fill_(1)
        if L is symgrad and how != "no_grad" and name != "cross_entropy probabilities":
            with pytest.raises(RuntimeError, match="cannot read what PyTorch's would"):
                out.backward()
            continue
        outcomes.append(_outcome(lambda out=out, W=W: (out.backward(), [W.grad])[1]))
    if len(outcomes) == 2:
        _same(outcomes[1], outcomes[0], RTOL, name)


def shared_data_program(L, dtype, how):
    """Data sharing memory with a numpy array the user keeps (``from_numpy``, or
    ``.numpy()`` of a tensor), written through numpy after the forward: no version
    counts the write, so PyTorch's backward reads the new values."""
    W = L.tensor([1.5, 0.7, -0.4], dtype=getattr(L, dtype), requires_grad=True)
    raw = np.array([2.0, 3.0, -1.0], dtype=dtype)
    X = L.from_numpy(raw) if how == "from_numpy" else L.tensor(raw)
    shared = raw if how == "from_numpy" else X.numpy()
    out = (W * X).sum() + (W * W * X).sum()

    def change():
        shared[...] *= 3
        out.backward()
        return [out, W.grad, X]
    return change


@pytest.mark.parametrize("how", ["from_numpy", "numpy"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_data_shared_with_numpy_changed_before_backward(dtype, how):
    """float32 data are kept as they are (no copy of the old values), as float64 data
    were: the gradient is PyTorch's from the values written through numpy."""
    theirs = _outcome(shared_data_program(torch_real, dtype, how))
    ours = _outcome(shared_data_program(symgrad, dtype, how))
    _same(ours, theirs, RTOL if dtype == "float64" else 1e-6, f"{dtype} {how}")


def test_optimizer_step_between_retained_backwards():
    """A classifier's loss backwarded twice (``retain_graph``) around an optimizer step.
    Updating the first layer only: no PyTorch node saved its parameters, so the second
    backward runs and reads the saved values (before, symgrad raised); updating every
    layer: the second layer's node saved its weight, and both raise."""
    def program(L, first_only):
        L.manual_seed(0)
        model = L.nn.Sequential(L.nn.Linear(4, 5), L.nn.ReLU(), L.nn.Linear(5, 2)).double()
        if L is symgrad:
            model.load_state_dict({k: symgrad.tensor(v) for k, v in state.items()})
        x = L.tensor(np.random.default_rng(7).standard_normal((6, 4)))
        params = model[0].parameters() if first_only else model.parameters()
        opt = L.optim.SGD(params, lr=0.5)
        loss = model(x).pow(2).mean()
        grads = lambda: [p.grad for p in model.parameters()]  # noqa: E731

        def second():
            opt.step()
            loss.backward()
            return [loss, *grads()]
        return [lambda: (loss.backward(retain_graph=True), [loss, *grads()])[1], second]

    torch_real.manual_seed(0)
    state = {k: v.detach().numpy().copy() for k, v in torch_real.nn.Sequential(
        torch_real.nn.Linear(4, 5), torch_real.nn.ReLU(),
        torch_real.nn.Linear(5, 2)).double().state_dict().items()}
    for first_only in (True, False):
        theirs = [_outcome(f) for f in program(torch_real, first_only)]
        ours = [_outcome(f) for f in program(symgrad, first_only)]
        assert (theirs[1] is RuntimeError) is not first_only
        for k, (a, b) in enumerate(zip(ours, theirs)):
            _same(a, b, RTOL, f"first_only={first_only} step {k}")


@pytest.mark.parametrize("name", ["exp", "tanh", "square"])
def test_result_changed_through_data_before_backward(name):
    """``z.data.add_(1)`` on an intermediate after its consumer was recorded: PyTorch's
    ``exp`` reads its saved output and ``z * z`` reads z as it is now, which symgrad
    matches; its ``tanh`` rule reads the input where PyTorch reads the saved output,
    so it refuses (it used to return the gradient at the changed input)."""
    def run(L):
        W = L.tensor([1.5, 0.7], dtype=L.float64, requires_grad=True)
        z = W * 2
        out = (z * z if name == "square" else getattr(z, name)()).sum()
        z.data.add_(1)
        out.backward()
        return [W.grad]
    theirs = _outcome(lambda: run(torch_real))
    if name == "tanh":
        with pytest.raises(RuntimeError, match="cannot read what PyTorch's would"):
            run(symgrad)
    else:
        _same(_outcome(lambda: run(symgrad)), theirs, RTOL, name)


#: ops that PyTorch computes as one node and symgrad as several (or, ``max``/``amax``,
#: one node that saves its result as well as its input): a leaf changed after the
#: forward makes PyTorch read it as it is now against values saved from the old one
FUSED = {
    "mse_loss": lambda F, x, w: F.mse_loss(x, w),
    "clamp": lambda F, x, w: (x.clamp(0.7, 1.5) * w).sum(),
    "softplus": lambda F, x, w: (F.softplus(x) * w).sum(),
    "gelu": lambda F, x, w: (F.gelu(x) * w).sum(),
    "layer_norm": lambda F, x, w: (F.layer_norm(x, (3,)) * w).sum(),
    "logsumexp": lambda F, x, w: x.logsumexp(1).sum(),
    "cumprod": lambda F, x, w: (x.cumprod(1) * w).sum(),
    "bce_logits": lambda F, x, w: F.binary_cross_entropy_with_logits(x, w),
    "max": lambda F, x, w: x.max() * 2,
    "amax": lambda F, x, w: (x.amax(0) * w[0]).sum(),
    "addmm_bias": lambda F, x, w: F.linear(w, x, x[0]).exp().sum(),  # (linear in the bias)
    "linear_weight": lambda F, x, w: F.gelu(F.linear(w, x)).sum(),  # (mm reads x.t() now)
    # PyTorch's node reads only its saved result or indices: the same numbers after .data
    "softmax": lambda F, x, w: (x.softmax(1) * w).sum(),
    "cross_entropy": lambda F, x, w: F.cross_entropy(x, w.argmax(1)),
    "max_dim": lambda F, x, w: (x.max(0)[0] * w[0]).sum(),
    "rsqrt": lambda F, x, w: (x.abs().rsqrt() * w).sum(),
}
#: the ops above for which PyTorch still gives numbers after a .data write
DATA_READ = {"addmm_bias", "linear_weight", "softmax", "cross_entropy", "max_dim", "rsqrt"}
#: (softmax and log_softmax, one primitive each, watch their result as PyTorch's nodes do,
#: so a no_grad or detach change of x gives PyTorch's numbers: the composites, which
#: watched their input, raised the version-counter error there)


def fused_program(L, dtype, name, how):
    F, dt = L.nn.functional, getattr(L, dtype)
    x = L.tensor([[0.5, 1.0, 2.0], [1.5, -0.5, 0.8]], dtype=dt, requires_grad=True)
    w = L.tensor([[0.2, 0.3, 0.4], [1.0, 1.0, 1.0]], dtype=dt, requires_grad=True)

    def clean():  # (PyTorch may accumulate some gradients before it raises)
        x.grad = w.grad = None
        out = FUSED[name](F, x, w)
        out.backward()
        return [out, x.grad, w.grad]

    def changed():
        x.grad = w.grad = None
        out = FUSED[name](F, x, w)
        if how == "data":
            x.data.mul_(1.25)
        elif how == "detach":
            x.detach().mul_(1.25)
        else:
            with L.no_grad():
                x.mul_(1.25)
        out.backward()
        return [x.grad, w.grad]
    return [clean, clean, changed, clean]


@pytest.mark.parametrize("how", ["data", "no_grad", "detach"])
@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_op_with_a_leaf_changed_before_backward(name, how):
    """The same numbers as PyTorch, or its version-counter error (a change it counted of
    an input its node saved), or, where PyTorch reads a ``.data`` change against values
    its node saved, symgrad's refusal, never the gradient at the old values (which it
    returned for the ops not in ``DATA_READ``)."""
    for dtype, rtol in (("float64", RTOL), ("float32", 2e-6)):
        theirs = [_outcome(f) for f in fused_program(torch_real, dtype, name, how)]
        ours = fused_program(symgrad, dtype, name, how)
        if how != "data" and name not in DATA_READ | {"max", "amax", "logsumexp"}:
            assert theirs[2] is RuntimeError  # (f08: symgrad returned numbers)
        for k, f in enumerate(ours):
            if k == 2 and how == "data" and name not in DATA_READ:
                assert theirs[2] is not RuntimeError
                with pytest.raises(RuntimeError, match="cannot read what PyTorch's would"):
                    f()
                continue
            _same(_outcome(f), theirs[k], rtol, f"{dtype} step {k}",
                  atol=1e-30 if dtype == "float64" else 1e-6)  # (layer_norm's zero sums)


def test_fused_op_changed_leaf_compiled(monkeypatch):
    """The reviewer's program on the compiled backward: clean steps equal PyTorch, the
    step with a ``.data`` write refuses, both dtypes."""
    monkeypatch.setattr(config, "eager_compile", True)
    for dtype, rtol in (("float64", RTOL), ("float32", 2e-6)):
        def program(L, dtype=dtype):
            F, dt = L.nn.functional, getattr(L, dtype)
            x = L.tensor([[0.5, 1.0, 2.0], [1.5, -0.5, 0.8]], dtype=dt, requires_grad=True)
            w = L.tensor([[0.2, 0.3, 0.4], [1.0, 1.0, 1.0]], dtype=dt, requires_grad=True)
            loss = F.mse_loss(x, w) + x.clamp(0.7, 1.5).sum() + F.softplus(x).sum()
            return x, w, loss
        for k in range(4):
            results = []
            for L in (torch_real, symgrad):
                x, w, loss = program(L)
                if k == 3:
                    x.data.mul_(1.25)
                results.append(_outcome(
                    lambda x=x, w=w, loss=loss: (loss.backward(), [loss, x.grad, w.grad])[1]))
            theirs, ours = results
            if k == 3:
                assert theirs is not RuntimeError and ours is RuntimeError
            else:
                _same(ours, theirs, rtol, f"{dtype} step {k}")


def test_fused_op_changed_leaf_before_double_backward():
    """A ``create_graph`` gradient through gelu and softplus, then a ``.data`` write of
    the leaf: the gradient's graph holds the composites' inner values, so symgrad
    refuses (it returned the second derivative at the old values)."""
    for L in (torch_real, symgrad):
        F = L.nn.functional
        x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad((F.gelu(x) + F.softplus(x) * 2).sum(), x, create_graph=True)
        x.data.mul_(1.1)
        if L is torch_real:
            (g ** 2).sum().backward()
            assert x.grad is not None
        else:
            with pytest.raises(RuntimeError, match="cannot read what PyTorch's would"):
                (g ** 2).sum().backward()


def test_retain_grad_then_inplace_and_requires_grad_off(monkeypatch):
    """``h.retain_grad(); h.mul_(3)``: ``h.grad`` is the gradient of the tensor after the
    in-place op (PyTorch 2); a leaf set to ``requires_grad_(False)`` after the forward
    gets no ``.grad``. Float32 and float64, interpreted and compiled."""
    def program(L, dtype):
        x = L.tensor([1.0, -2.0, 0.5], dtype=getattr(L, dtype), requires_grad=True)
        v = L.tensor([0.5, 0.25, 2.0], dtype=getattr(L, dtype), requires_grad=True)
        h = x * 2
        h.retain_grad()
        h.mul_(3)
        loss = (h ** 2 * v).sum()
        v.requires_grad_(False)
        loss.backward()
        return [loss, h.grad, x.grad, v.grad]
    for compiled in (False, True):
        monkeypatch.setattr(config, "eager_compile", compiled)
        for dtype in ("float64", "float32"):
            for k in range(3):
                _same(_outcome(lambda d=dtype: program(symgrad, d)),
                      _outcome(lambda d=dtype: program(torch_real, d)), RTOL, f"{dtype} {k}")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_reshape_that_copies_is_read_as_saved(dtype):
    """``h.reshape(-1)`` of a permuted ``h`` is a copy (in PyTorch too), which numpy returns
    as the only view of a fresh array: its value is kept and read like any fresh result,
    so a later write into ``h`` leaves the gradient PyTorch's (the backward refused
    before, recomputing the copy from the changed ``h``)."""
    grads = []
    for lib in (symgrad, torch_real):
        w = lib.tensor(np.arange(6.0).reshape(2, 3) / 7, dtype=getattr(lib, dtype),
                       requires_grad=True)
        h = (w * 2).permute(1, 0)
        r = h.reshape(-1)
        loss = (r.exp() * r).sum()
        with lib.no_grad():
            h.mul_(3)  # changes w * 2 and h, not r
        loss.backward()
        grads.append(w.grad.numpy().astype(np.float64))
    np.testing.assert_allclose(grads[0], grads[1], rtol=RTOL if dtype == "float64" else 2e-7)
