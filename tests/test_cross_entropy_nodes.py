"""``F.cross_entropy`` as PyTorch records it: ``log_softmax`` and ``nll_loss`` are one node
each (:mod:`symgrad.prims.softmax`), against real PyTorch: values, gradients, gradients of
gradients (``create_graph``), dtypes, ``grad_fn`` names and ``next_functions``, for weights,
``ignore_index``, label smoothing, probabilities as targets, every reduction, 1-d and K-dim
inputs, and logits with inf, -inf, nan and 1e30."""

import itertools

import numpy as np
import pytest

import symgrad as sg
from symgrad.eager.graph import Node

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(27)
SHAPES = {"2d": (6, 5), "1d": (5,), "kdim": (3, 4, 2, 2)}


def _special(x):
    """A copy of 2-d logits with a row holding +inf, one all -inf, a nan, 1e30 and -inf."""
    x = x.copy()
    x[0, 1], x[1, :], x[2, 2], x[3, 0], x[4, 3] = np.inf, -np.inf, np.nan, 1e30, -np.inf
    return x


def _data(shape):
    c = shape[1] if len(shape) > 1 else shape[0]
    samples = (shape[0], *shape[2:]) if len(shape) > 1 else ()
    rng = np.random.default_rng(len(shape))
    probs = rng.dirichlet(np.ones(c), size=samples or None)
    return dict(x=rng.standard_normal(shape) * 2, target=rng.integers(0, c, samples),
                probs=np.moveaxis(probs, -1, 1) if len(shape) > 1 else probs,
                weight=rng.uniform(0.5, 2.0, c))


def _names(fn):
    if fn is None:
        return None
    return (fn.name(), [f if f is None else f.name().replace("torch::autograd::", "")
                        for f, _ in fn.next_functions])


def _run(L, dtype, kind, x, data, weight, **kw):
    F = L.nn.functional
    dt = getattr(L, dtype)
    x = L.tensor(x, dtype=dt, requires_grad=True)
    w = None if weight is None else L.tensor(weight, dtype=dt)
    if kind == "probs":
        out = F.cross_entropy(x, L.tensor(data["probs"], dtype=dt), weight=w, **kw)
    elif kind == "nll":
        out = F.nll_loss(x.log_softmax(1 if x.ndim > 1 else 0), L.tensor(data["target"]),
                         weight=w, **kw)
    else:
        out = F.cross_entropy(x, L.tensor(data["target"]), weight=w, **kw)
    seed = np.random.default_rng(1).standard_normal(tuple(out.shape))
    gx, = L.autograd.grad(out, x, L.tensor(seed, dtype=dt) if out.ndim else None,
                          create_graph=True)
    (gx * gx).sum().backward()
    return ([a.detach().numpy() for a in (out, gx, x.grad)], str(out.dtype).split(".")[-1],
            _names(out.grad_fn), _names(out.grad_fn.next_functions[0][0]))


CONFIGS = [  # (shape, kind, reduction, weight, ignore_index, label_smoothing, special logits)
    ("2d", "ce", "mean", False, -100, 0.0, False), ("2d", "ce", "mean", False, -100, 0.0, True),
    ("2d", "ce", "sum", True, 2, 0.0, True), ("2d", "ce", "none", True, 2, 0.1, False),
    ("2d", "ce", "mean", True, 2, 0.1, True), ("2d", "nll", "mean", True, 2, 0.0, True),
    ("2d", "nll", "none", False, -100, 0.0, False), ("2d", "probs", "mean", True, -100, 0.1, True),
    ("2d", "probs", "none", False, -100, 0.0, False), ("1d", "ce", "mean", True, -100, 0.0, False),
    ("1d", "ce", "sum", False, -100, 0.1, False), ("1d", "probs", "mean", False, -100, 0.0, False),
    ("kdim", "ce", "mean", True, 2, 0.0, False), ("kdim", "ce", "none", False, -100, 0.1, False),
    ("kdim", "nll", "sum", True, -100, 0.0, False), ("kdim", "probs", "mean", True, -100, 0.0,
                                                     False),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c)))
def test_cross_entropy_against_pytorch(config, dtype):
    shape, kind, reduction, weighted, ignore, smoothing, special = config
    data = _data(SHAPES[shape])
    x = _special(data["x"]) if special else data["x"]
    if ignore == 2:  # every other sample ignored
        data["target"].flat[::2] = 2
    kw = dict(reduction=reduction)
    if kind != "probs":
        kw["ignore_index"] = ignore
    if smoothing:
        kw["label_smoothing"] = smoothing
    weight = data["weight"] if weighted else None
    theirs = _run(torch, dtype, kind, x, data, weight, **kw)
    ours = _run(sg, dtype, kind, x, data, weight, **kw)
    tol = 2e-5 if dtype == "float32" else 1e-11
    for what, a, b in zip(("value", "gradient", "gradient of |gradient|^2"), ours[0], theirs[0]):
        assert a.dtype == b.dtype, what
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=what)
    assert ours[1:] == theirs[1:]  # dtype, grad_fn and next_functions, and the next node's


def test_all_ignored_mean_is_nan_and_its_gradient_zero_as_pytorchs():
    for L in (torch, sg):
        x = L.tensor(RNG.standard_normal((3, 4)), dtype=L.float32, requires_grad=True)
        loss = L.nn.functional.cross_entropy(x, L.tensor([-100, -100, -100]))
        loss.backward()
        assert np.isnan(loss.item()) and loss.dtype == L.float32
        np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4), np.float32))


def test_a_cross_entropy_records_two_nodes():
    x = sg.tensor(RNG.standard_normal((64, 10)), dtype=sg.float32, requires_grad=True)
    loss = sg.nn.functional.cross_entropy(x, sg.tensor(RNG.integers(0, 10, 64)))
    nll = loss.grad_fn
    (log_softmax, _), = nll.next_functions
    assert [n.prim.name for n in (nll, log_softmax)] == ["nll_loss", "log_softmax"]
    assert all(not isinstance(a, Node) for a in log_softmax.inputs)  # (the leaf itself)
    assert [a for a in nll.inputs if isinstance(a, Node)] == [log_softmax]


def test_changing_a_saved_log_softmax_in_place_raises_as_pytorch():
    for L in (torch, sg):
        x = L.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
        logp = x.log_softmax(1)
        loss = L.nn.functional.nll_loss(logp, L.tensor([0, 1, 2]))
        logp.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


def test_a_training_loop_on_the_compiled_backward_equals_pytorch(monkeypatch):
    """Repeated steps (the compiled, replayed backward of the two primitives) equal
    PyTorch's, float32 and float64, the targets (and how many are ignored) changing from
    step to step."""
    from symgrad import config
    from symgrad.eager.backward import backward_stats

    monkeypatch.setattr(config, "eager_compile", True)
    compiled = backward_stats()["compiled_runs"]
    for dtype, tol in (("float32", 2e-5), ("float64", 1e-12)):
        got = {}
        for L in (torch, sg):
            x = L.tensor(RNG.standard_normal((8, 5)) if L is torch else got["x0"],
                         dtype=getattr(L, dtype), requires_grad=True)
            got.setdefault("x0", x.detach().numpy().astype(np.float64))
            steps = []
            for k, smoothing in itertools.product(range(3), (0.0, 0.2)):
                target = L.tensor(np.random.default_rng(k).integers(-1, 5, 8))
                loss = L.nn.functional.cross_entropy(x * 2.0, target, ignore_index=-1,
                                                     label_smoothing=smoothing)
                loss.backward()
                steps.append((loss.item(), x.grad.numpy().copy()))
                with L.no_grad():
                    x -= 0.5 * x.grad
                x.grad = None
            got[L.__name__] = steps
        for (a, ga), (b, gb) in zip(got["symgrad"], got["torch"]):
            np.testing.assert_allclose(a, b, rtol=tol)
            np.testing.assert_allclose(ga, gb, rtol=tol, atol=tol)
    assert backward_stats()["compiled_runs"] - compiled >= 4  # (2 structures, 2 dtypes)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_softmax_is_the_composites_bit_for_bit_where_the_maximum_is_finite(dtype):
    """The primitive's values are ``sg.log_softmax``'s (the composite's ``log1p`` of the
    others' sum) wherever a row's maximum is finite, along either axis; a row holding
    ``+inf`` is nan everywhere, as PyTorch's."""
    from symgrad.numpy_api import functions as ops

    x = np.array([[0.0, np.log(3.0), -40.0], [5.0, 5.0, -np.inf], [1e30, -1e30, 0.0],
                  [-745.0, 0.0, 700.0], [np.inf, 0.0, 1.0]], dtype=dtype)
    for axis in (0, 1):
        ours = sg.tensor(x).log_softmax(axis).numpy()
        composite = np.asarray(ops.log_softmax(x, axis))
        finite = np.broadcast_to(np.isfinite(x.max(axis, keepdims=True)), x.shape)
        np.testing.assert_array_equal(ours[finite], composite[finite])
        assert ours.dtype == dtype and np.isnan(ours[~finite]).all()


SOFTMAX_CONFIGS = [  # (shape, dim, special logits)
    ((6, 5), 1, True), ((6, 5), 0, True), ((6, 5), -1, False), ((3, 4, 2), 1, False),
    ((5,), 0, False),
]


def _softmax_run(L, dtype, x, dim, seed):
    dt = getattr(L, dtype)
    x = L.tensor(x, dtype=dt, requires_grad=True)
    out = L.nn.functional.softmax(x * 1.5, dim)
    gx, = L.autograd.grad(out, x, L.tensor(seed, dtype=dt), create_graph=True)
    (gx * gx).sum().backward()
    return ([a.detach().numpy() for a in (out, gx, x.grad)], str(out.dtype).split(".")[-1],
            _names(out.grad_fn))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", SOFTMAX_CONFIGS, ids=lambda c: "-".join(map(str, c)))
def test_softmax_against_pytorch(config, dtype):
    """One ``SoftmaxBackward0`` node: values, gradients and gradients of gradients as
    PyTorch's, in the input's dtype; a row (column) holding +inf, all -inf or a nan is nan
    everywhere, as PyTorch's (the composite had 0 beside a +inf)."""
    shape, dim, special = config
    x = RNG.standard_normal(shape) * 2
    x = _special(x) if special else x
    seed = np.random.default_rng(3).standard_normal(shape)
    theirs, ours = (_softmax_run(L, dtype, x, dim, seed) for L in (torch, sg))
    tol = 2e-5 if dtype == "float32" else 1e-11
    for what, a, b in zip(("value", "gradient", "gradient of |gradient|^2"), ours[0], theirs[0]):
        assert a.dtype == b.dtype, what
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=what)  # (nan where nan)
    assert ours[1:] == theirs[1:] == (dtype, ("SoftmaxBackward0", ["MulBackward0"]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_is_the_composites_bit_for_bit_where_the_maximum_is_finite(dtype):
    """The primitive's values are ``sg.softmax``'s wherever a row's maximum is finite,
    along either axis; a row holding ``+inf`` is nan everywhere, as PyTorch's."""
    from symgrad.numpy_api import functions as ops

    x = np.array([[0.0, np.log(3.0), -40.0], [5.0, 5.0, -np.inf], [1e30, -1e30, 0.0],
                  [-745.0, 0.0, 700.0], [np.inf, 0.0, 1.0]], dtype=dtype)
    for axis in (0, 1):
        ours = sg.tensor(x).softmax(axis).numpy()
        composite = np.asarray(ops.softmax(x, axis))
        finite = np.broadcast_to(np.isfinite(x.max(axis, keepdims=True)), x.shape)
        np.testing.assert_array_equal(ours[finite], composite[finite])
        assert ours.dtype == dtype and np.isnan(ours[~finite]).all()


def test_attention_records_one_softmax_node():
    q = sg.tensor(RNG.standard_normal((2, 3, 4)), dtype=sg.float32, requires_grad=True)
    scores = q @ q.transpose(1, 2)
    weights = scores.softmax(-1)
    assert weights.grad_fn.prim.name == "softmax"
    assert [a for a in weights.grad_fn.inputs if isinstance(a, Node)] == [scores.grad_fn]


def test_a_softmax_training_loop_on_the_compiled_backward_equals_pytorch(monkeypatch):
    """Repeated steps of an attention-like loss (the compiled, replayed backward of the
    primitive) equal PyTorch's, float32 and float64, the input changing each step."""
    from symgrad import config
    from symgrad.eager.backward import backward_stats

    monkeypatch.setattr(config, "eager_compile", True)
    compiled = backward_stats()["compiled_runs"]
    v0, t0 = RNG.standard_normal((6, 4)), RNG.standard_normal((5, 4))
    for dtype, tol in (("float32", 2e-5), ("float64", 1e-12)):
        got = {}
        for L in (torch, sg):
            dt = getattr(L, dtype)
            x = L.tensor(RNG.standard_normal((5, 6)) if L is torch else got["x0"], dtype=dt,
                         requires_grad=True)
            got.setdefault("x0", x.detach().numpy().astype(np.float64))
            v, t = L.tensor(v0, dtype=dt), L.tensor(t0, dtype=dt)
            steps = []
            for _ in range(3):
                loss = ((x * 2.0).softmax(1) @ v - t).square().sum()
                loss.backward()
                steps.append((loss.item(), x.grad.numpy().copy()))
                with L.no_grad():
                    x -= 0.5 * x.grad
                x.grad = None
            got[L.__name__] = steps
        for (a, ga), (b, gb) in zip(got["symgrad"], got["torch"]):
            np.testing.assert_allclose(a, b, rtol=tol)
            np.testing.assert_allclose(ga, gb, rtol=tol, atol=tol)
    assert backward_stats()["compiled_runs"] - compiled >= 2


@pytest.mark.parametrize("n", [16, 7])
def test_softmax_of_attention_sized_rows_against_pytorch(n):
    """Rows of 2 to 64 elements in a large tensor take the halving maximum
    (:func:`symgrad.prims.softmax._row_max`): the same values as ``x.max`` gives (the
    composite's, bit for bit) and PyTorch's, with rows holding +inf, all -inf, nan and
    signed zeros."""
    x = np.random.default_rng(n).standard_normal((32, 4, 16, n)).astype(np.float32)
    rows = x.reshape(-1, n)
    rows[0, 1], rows[1, :], rows[2, 2], rows[3, :] = np.inf, -np.inf, np.nan, -0.0
    rows[4, :2] = 0.0, -0.0
    got = sg.tensor(x).softmax(-1).numpy()
    with np.errstate(all="ignore"):
        e = np.exp(x - x.max(-1, keepdims=True))
        np.testing.assert_array_equal(got, e / e.sum(-1, keepdims=True))
    np.testing.assert_allclose(got, torch.tensor(x).softmax(-1).numpy(), rtol=2e-6, atol=1e-7)



def test_target_dtypes_and_shapes_as_pytorchs():
    """Class indices are int64 or uint8 only (an int32 target was taken, PyTorch raises);
    cross_entropy tells probabilities by the input's shape, then requires a float."""
    x = np.log(np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1], [0.25, 0.25, 0.5]], np.float32))
    got = []
    for L in (torch, sg):
        F = L.nn.functional
        cases = [(f, t, getattr(L, d)) for d in ("int64", "uint8", "int32", "int16", "int8",
                                                 "bool", "float32", "float64")
                 for f, t in ((F.nll_loss, [0, 2, 1]), (F.cross_entropy, [0, 2, 1]),
                              (F.cross_entropy, [[1, 0, 0]] * 3))]
        found = []
        for f, t, dtype in cases:
            try:
                found.append(round(float(f(L.tensor(x), L.tensor(t, dtype=dtype))), 5))
            except RuntimeError as e:  # (the message up to symgrad's explanation)
                found.append(str(e).split(":")[0])
        got.append(found)
    assert got[0] == got[1]


def test_target_shape_errors_as_pytorchs():
    """A class-index target of the wrong shape: PyTorch's error types and messages (a
    batch mismatch, a 2-d target of 2-d logits, a K-dim mismatch; symgrad raised one
    ValueError for all)."""
    got = []
    for L in (torch, sg):
        found = []
        for x, t in (((2, 3, 4), (2, 5)), ((2, 3), (3,)), ((2, 3), (2, 3)),
                     ((2, 3, 4), (2, 4, 1)), ((2, 3, 4), (3, 4))):
            for f in (L.nn.functional.nll_loss, L.nn.functional.cross_entropy):
                try:
                    f(L.zeros(x), L.zeros(t, dtype=L.int64))
                    found.append("no error")
                except (RuntimeError, ValueError) as e:
                    found.append((type(e).__name__, str(e).split(":")[0]))
        got.append(found)
    assert got[0] == got[1]


def test_targets_of_a_1d_input_as_pytorchs():
    """A 1-D input (C,): a target of shape (1,) is taken as the 0-d one in the forward
    (every reduction, a 0-d loss) and its backward raises PyTorch's size mismatch; other
    1-D and 2-D targets are PyTorch's errors (symgrad refused all with one ValueError)."""
    got = []
    for L in (torch, sg):
        F, found = L.nn.functional, []
        for f, kw in itertools.product((F.nll_loss, F.cross_entropy),
                                       ({}, {"reduction": "none"}, {"label_smoothing": 0.1})):
            if f is F.nll_loss and kw.get("label_smoothing"):
                continue
            for t in ([1], [1, 2], [], [[1]]):
                x = L.tensor([-1.0, -2.0, -0.5], dtype=L.float64, requires_grad=True)
                try:
                    loss = f(x, L.tensor(t, dtype=L.int64), **kw)
                    found += [tuple(loss.shape), round(loss.item(), 12)]
                    loss.backward()
                    found.append(x.grad.tolist())
                except (RuntimeError, ValueError) as e:
                    found.append((type(e).__name__, str(e)[:40]))
        got.append(found)
    assert got[0] == got[1]
