"""The eager fast paths (symgrad/eager/fastpath.py, the in-place updates of inplace.py,
backward's walk and kernel call) give PyTorch's numbers, nodes and errors.

Oracle: real PyTorch 2.13, float64, through :func:`torch_oracle.run_both` (the same
program prints the same text and numbers with both libraries). The training loops
change their program at one step (another operation, shape, constant, branch,
parameter): every step, the first after the change included, must match.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("torch")

from torch_oracle import float64_default, normal_data, run_both, show_error  # noqa: E402,F401

import symgrad  # noqa: E402
from symgrad.eager import fastpath  # noqa: E402
from symgrad.eager.tensor import EAGER  # noqa: E402

STEPS, CHANGE_AT = 7, 4


def _functions(t):
    """The names of a result's grad_fn and of its next functions."""
    if t.grad_fn is None:
        return None
    return [type(t.grad_fn).__name__] + [None if f is None else type(f).__name__
                                         for f, _ in t.grad_fn.next_functions]


def training_loop(torch, show, data, change):
    """The seeds' loop, y = x + c; z = y * y * 3; mean, with one thing changed from
    step CHANGE_AT on."""
    x = torch.tensor(data["x"], requires_grad=True)
    for step in range(STEPS):
        late = step >= CHANGE_AT
        if change == "parameter" and step == CHANGE_AT:
            x = torch.tensor(data["x2"], requires_grad=True)
        if change == "shape" and step == CHANGE_AT:
            x = torch.tensor(data["x3"], requires_grad=True)
        c = 3.5 if change == "constant" and late else 2
        y = x - c if change == "op" and late else x + c
        if change == "branch" and step % 3 == 1:
            y = y.tanh() / 2
        z = y * y * 3
        if change == "scalar_tensor" and late:
            z = z * torch.tensor(0.5)
        out = z.mean()
        if change == "retain" and late:
            y.retain_grad()
        out.backward()
        show(step, out.item(), _functions(out), _functions(z), _functions(y))
        show(x.grad)
        if change == "retain" and late:
            show(y.grad)
        x.data -= 0.1 * x.grad.data
        x.grad.data.zero_()
        show(x)


@pytest.mark.parametrize("change", ["none", "op", "shape", "constant", "branch",
                                    "parameter", "scalar_tensor", "retain"])
def test_a_loop_whose_program_changes_matches_pytorch_at_every_step(change):
    data = normal_data(3, x=(5,), x2=(5,), x3=(7,))
    run_both(training_loop, data, change=change)


def operand_kinds(torch, show, data):
    """Every kind of operand the fast path takes (float64 tensors that require grad or
    not, 0-d tensors, Python floats and ints, broadcasting) and two it leaves to the
    general path (float32, bool), through + - * / and their reflections."""
    a = torch.tensor(data["a"], requires_grad=True)
    b = torch.tensor(data["b"])
    col = torch.tensor(data["col"], requires_grad=True)
    s = torch.tensor(1.5, requires_grad=True)
    operands = {"a": a, "b": b, "col": col, "s": s, "f": 0.25, "i": 3,
                "f32": torch.tensor(data["b"]).float(), "mask": b > 0}
    ops = {"add": lambda p, q: p + q, "sub": lambda p, q: p - q,
           "mul": lambda p, q: p * q, "div": lambda p, q: p / q,
           "gt": lambda p, q: p > q}  # a bool result: the general path, every time
    for left in ("a", "b", "col", "s", "f", "i"):
        for right in ("a", "b", "col", "s", "f", "i", "f32", "mask"):
            p, q = operands[left], operands[right]
            if not any(hasattr(v, "grad_fn") for v in (p, q)):
                continue
            for name, op in ops.items():
                try:
                    r = op(p, q)
                except RuntimeError as e:  # PyTorch refuses a - mask
                    show(left, name, right, type(e).__name__)
                    continue
                show(left, name, right, r, r.dtype, _functions(r))
                if r.requires_grad and right != "f32":  # (float32 backward: its rounding)
                    for t in (a, col, s):
                        t.grad = None
                    (r * r).sum().backward()
                    show(a.grad, col.grad, s.grad)


def test_operand_kinds_match_pytorch():
    run_both(operand_kinds, normal_data(5, a=(3,), b=(3,), col=(2, 1)))


def float32_views(torch, show, data):
    """float32 operations of the fast paths: + * by numbers and tensors, reshape, view,
    flatten, transpose, permute (-1 inferred, negative dims, their own shape or order: the
    tensor itself); values, dtypes, grad_fn names, shared version counters, gradients."""
    x = torch.tensor(data["x"]).float().requires_grad_()
    y = x * 2.0 + 1
    outs = [y.reshape(-1, 3), y.view(2, 3, 4), torch.flatten(y, 1), y.transpose(-1, 0),
            y.permute(2, 0, -2), y.reshape(2, 3, 4), y.permute(0, 1, 2), y.transpose(1, 1),
            x.view(6, -1), x.permute(1, 2, 0)]
    for k, o in enumerate(outs):
        show(k, o, o.dtype, o.shape, _functions(o), o._version, o is y or o is x)
    v = y.sum((0, 1))
    with warnings.catch_warnings():  # (PyTorch's: .T of 1-D is deprecated)
        warnings.simplefilter("ignore")
        vt = v.T
    for o in (y.reshape(6, 4).T, vt):  # (a 1-D .T: a new view too)
        show(o, o.shape, _functions(o), o is v)
    y.add_(1.0)  # (the views share y's version counter: 1 each)
    show([o._version for o in outs])
    loss = sum(((o * o) * (k + 1.0)).sum() for k, o in enumerate(outs[:-2]))
    loss = loss + (outs[-2] * outs[-1].reshape(6, 4)).sum()
    show(loss.dtype)
    try:
        loss.backward()  # (y was changed in place since the squares saved its views)
    except RuntimeError as e:
        show(type(e).__name__)
    z = x * 3.0
    (z.reshape(4, 6).t() * z.permute(2, 1, 0).reshape(6, 4)).sum().backward()
    show(x.grad.dtype, x.grad)
    for bad in (lambda: x.reshape(5, -1), lambda: x.view(-1, -1), lambda: x.permute(0, 1)):
        try:
            bad()
        except RuntimeError:  # (symgrad's ShapeError is one)
            show("refused")


def test_float32_views_match_pytorch():
    run_both(float32_views, normal_data(7, x=(2, 3, 4)), rtol=3e-6)


def test_the_fast_path_is_the_general_path():
    """apply_f64 and the general path of EagerTrace.apply give the same value, node
    class, inputs and watched versions (the general one with the fast path off), for
    float64 and for float32 Tensors (whose nodes say float32: their backward runs in
    float32) with Python numbers, and where's boolean condition (a Tensor, an array)."""
    from symgrad.prims.elementwise import add_p, mul_p, pow_p, tanh_p
    from symgrad.prims.reductions import sum_p
    from symgrad.prims.selection import where_p

    cases = []
    for kind in (np.float64, np.float32):
        x = symgrad.tensor(np.array([0.5, -1.0, 2.0], dtype=kind), requires_grad=True)
        d = symgrad.tensor(np.array([3.0, 4.0, 5.0], dtype=kind))
        cases += [(add_p, (x, 2), {}), (mul_p, (x, d), {}), (mul_p, (x * 1, x), {}),
                  (pow_p, (x, 2.0), {}), (tanh_p, (x,), {}), (mul_p, (0.1, x), {}),
                  (sum_p, (x,), {"axes": (0,)}), (where_p, (x > 0, x, 0.0), {}),
                  (where_p, (np.array([[True], [False]]), d, x), {}),
                  (where_p, (d > 3.5, -1.5, x * 1), {})]
    for prim, args, params in cases:
        assert fastpath.apply_f64(prim, args, dict(params), symgrad.Tensor._make) is not None
        fast = EAGER.apply(prim, args, dict(params))
        original = fastpath.apply_f64
        fastpath_off = lambda *a: None  # noqa: E731
        import symgrad.eager.tensor as tensor_module
        tensor_module.apply_f64 = fastpath_off
        try:
            slow = EAGER.apply(prim, args, dict(params))
        finally:
            tensor_module.apply_f64 = original
        _same_result(fast, slow)


def _same_result(fast, slow):
    """The same value, dtype and node (class, aval, signature, inputs, watched versions)."""
    assert fast._value.tobytes() == slow._value.tobytes() and fast.dtype == slow.dtype
    f, s = fast._node, slow._node
    if f is None or s is None:
        assert f is s
        return
    assert type(f) is type(s) and f.aval == s.aval and f.sig == s.sig and f.params == s.params
    assert f.aval.dtype == str(fast.dtype).replace("torch.", "")
    assert [type(a) for a in f.inputs] == [type(a) for a in s.inputs]
    for fa, sa in zip(f.inputs, s.inputs):
        if isinstance(fa, np.ndarray):
            assert fa.tobytes() == sa.tobytes() and fa.shape == sa.shape
        else:
            assert fa is sa or fa == sa
    assert [(r if not callable(r) else "weak", v) for r, v in f.versions] == \
        [(r if not callable(r) else "weak", v) for r, v in s.versions]
    assert [(k, id(a), v) for k, a, v in f.reads] == [(k, id(a), v) for k, a, v in s.reads]
    assert (f.value is None) == (s.value is None) and f.made[1] == s.made[1]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_binary_and_unary_paths_are_apply_f64(dtype):
    """binary_f64 (x + 2, 0.1 * x, y * y) and unary_f64 (x.mean(), x.reshape(2)) give what
    apply_f64 gives, for leaves, results, data and Python numbers, with grad on and off, in
    float64 and float32; and leave other operands (mixed dtypes, bools, two numbers) to it."""
    from symgrad.prims.elementwise import add_p, div_p, exp_p, mul_p, pow_p, sub_p
    from symgrad.prims.reductions import mean_p, reshape_p, sum_p, transpose_p

    kind = getattr(symgrad, dtype)
    x = symgrad.tensor([0.5, -1.0, 2.0], dtype=kind, requires_grad=True)
    d = symgrad.tensor([[3.0], [4.0]], dtype=kind)
    y = x * 1
    make = symgrad.Tensor._make
    for grad in (True, False):
        with symgrad.set_grad_enabled(grad):
            for prim, a, b in [(add_p, x, 2), (add_p, 2, x), (mul_p, y, y), (sub_p, x, 2.5),
                               (div_p, 1, x), (mul_p, d, x), (mul_p, d, 3), (sub_p, x, d),
                               (mul_p, 0.1, y), (pow_p, y, x), (pow_p, x, 2.0), (mul_p, x, d),
                               (div_p, d, y)]:
                for _ in range(2):  # (the second call reads the memo)
                    _same_result(fastpath.binary_f64(prim, a, b, make),
                                 fastpath.apply_f64(prim, (a, b), {}, make))
            for prim, t, params in [(mean_p, x, {"axes": (0,)}), (mean_p, d, {"axes": (0, 1)}),
                                    (sum_p, d, {"axes": (1,)}), (mean_p, y, {"axes": (0,)}),
                                    (exp_p, x, {}), (exp_p, y, {}),
                                    (reshape_p, d, {"shape": (2,)}),
                                    (transpose_p, d, {"perm": (1, 0)})]:
                for _ in range(2):
                    _same_result(fastpath.unary_f64(prim, t, dict(params), make),
                                 fastpath.apply_f64(prim, (t,), dict(params), make))
    other = symgrad.tensor([1.0, 2.0, 3.0], requires_grad=True,
                           dtype=symgrad.float32 if dtype == "float64" else symgrad.float64)
    for a, b in [(other, x), (x, other), (x, True), (2, 3), (x, np.float64(2.0))]:
        assert fastpath.binary_f64(add_p, a, b, make) is None
    half = symgrad.tensor([1.0, 2.0], dtype=symgrad.float16, requires_grad=True)
    assert fastpath.unary_f64(mean_p, half, {"axes": (0,)}, make) is None


def inplace_updates(torch, show, data):
    """Unrecorded in-place updates (the optimizer's) bump versions, refuse as PyTorch
    does, and write into the same memory."""
    x = torch.tensor(data["x"], requires_grad=True)
    w = torch.tensor(data["w"])
    y = x * w  # mul saves w, since x requires grad
    w -= 1.0
    show_error(show, lambda: y.sum().backward())
    w2 = torch.tensor(data["w"])
    y2 = x * w2
    y2.sum().backward()
    w2 *= 2  # after backward: nothing needs it
    show(x.grad, w2, w2._version)
    show_error(show, lambda: x.__isub__(1))        # a leaf that requires grad
    show_error(show, lambda: x.zero_())
    with torch.no_grad():
        x -= 0.5 * x.grad
        view = x.data
        view /= 2
    show(x, x._version)
    a = torch.zeros(3)
    show_error(show, lambda: a.__isub__(torch.ones(2, 3)))  # broadcast to a larger shape
    a += 2
    a.mul_(torch.tensor(data["x"]))
    show(a, a._version)
    g = torch.tensor(data["x"])
    g.zero_()
    show(g, g._version)


def test_inplace_updates_match_pytorch():
    run_both(inplace_updates, normal_data(8, x=(3,), w=(3,)))


def test_unrecorded_updates_of_read_only_memory_refuse():
    """``zero_()`` and ``-=`` on a read-only array's tensor (their fast paths try numpy's
    write) raise the general path's error, and the values stay the array's."""
    from symgrad.eager.inplace import READ_ONLY_ERROR

    a = np.arange(3.0)
    a.flags.writeable = False
    t = symgrad.from_numpy(a)
    for update in (lambda: t.zero_(), lambda: t.__isub__(1.0), lambda: t.__imul__(t)):
        with pytest.raises(RuntimeError, match="read-only") as e:
            update()
        assert str(e.value) == READ_ONLY_ERROR and t._version == 0
    assert a.tolist() == [0.0, 1.0, 2.0] and t.tolist() == [0.0, 1.0, 2.0]


def test_a_repeated_loop_compiles_its_backward_once():
    """The structure key holds across steps: one Numba kernel for the whole loop (per
    structure), the rest calls it."""
    from symgrad.eager.backward import backward_stats

    x = symgrad.tensor(np.linspace(-1, 1, 9), requires_grad=True)
    before = backward_stats()
    for _ in range(6):
        ((x + 2) * (x + 2) * 3).mean().backward()
        x.data -= 0.1 * x.grad.data
        x.grad.data.zero_()
    after = backward_stats()
    assert after["interpreted"] - before["interpreted"] <= 1
    assert after["compiled_runs"] - before["compiled_runs"] >= 5


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(1000,), (3, 4, 5), (0, 3), (2, 0)])
def test_mean_interpreter_gives_numpys_bits(dtype, shape):
    """The mean primitive's interpreter (sum, then the division numpy makes) against
    np.mean itself: the same bits, type and dtype, empty slices (nan) included."""
    from symgrad.prims.reductions import _mean

    x = (np.random.default_rng(1).standard_normal(shape) * 10).astype(dtype)
    for axes in {tuple(range(x.ndim)), (0,), (x.ndim - 1,), ()}:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, want = _mean(x, axes), np.mean(x, axis=axes)
        assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
        assert np.array_equal(got, want, equal_nan=True)


def test_float16_mean_sums_in_float32_as_pytorch():
    """A float16 mean whose float16 sum would overflow: numpy and PyTorch sum in float32."""
    import torch as real

    a = np.array([-5.85e4, -3.722e4], dtype=np.float16)
    want = real.tensor(a).mean()
    got = symgrad.tensor(a, dtype=symgrad.float16).mean()
    assert got.dtype is symgrad.float16 and got.item() == want.item() == -47872.0


def _detached_change(lib, which: str):
    """A detached alias changed in place after a graph saved the values it shares."""
    a = lib.tensor([0.5, 1.0, 1.5, 2.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True)
    if which == "alias changed":  # y saved a; its detached alias is changed
        y = (a * a).sum()
        a.detach().add_(1)
    elif which == "original changed":  # y saved the alias c; the original is changed
        c = a.detach()
        y = (w * c).sum()
        with lib.no_grad():
            a.add_(1)
    else:  # an alias of an alias, changed by an optimizer-style update
        y = (a * a).sum()
        d = a.detach().detach()
        d -= 1.0
    try:
        y.backward()
    except RuntimeError as e:
        return "raises", "modified by an inplace operation" in str(e)
    return "grad", a.grad.tolist() if a.grad is not None else w.grad.tolist()


@pytest.mark.parametrize("which", ["alias changed", "original changed", "alias of alias"])
def test_detach_shares_the_version_counter_as_in_pytorch(which):
    """detach() shares the values and, as PyTorch, the version counter: changing either
    alias in place makes a backward that saved the other refuse (it gave a gradient of
    the changed values, silently)."""
    import torch as real

    assert _detached_change(symgrad, which) == _detached_change(real, which)
    assert _detached_change(symgrad, which) == ("raises", True)


def means(torch, show, data, dtype_name):
    """``x.mean()`` (its own fast exit for float64 and float32) against the general path's
    cases: 0-d, 2-d, empty (nan), no grad, under no_grad, integer (an error)."""
    for name in ("v", "m", "s"):
        for dtype in (getattr(torch, dtype_name),):
            x = torch.tensor(data[name], dtype=dtype, requires_grad=True)
            out = x.mean()
            show(name, str(out.dtype), out.shape, _functions(out), out.requires_grad)
            (out * 3).backward()
            show(out, x.grad, str(x.grad.dtype))
            with torch.no_grad():
                show(x.mean(), x.mean().requires_grad)
    show(torch.zeros(0, 3, dtype=torch.float64).mean())
    show(torch.ones(3, dtype=torch.float64).mean().grad_fn)
    show_error(show, lambda: torch.arange(4).mean())


@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
def test_mean_of_every_dim_matches_pytorch(dtype_name):
    # (float32: numpy's pairwise sum and PyTorch's differ by an ulp, here and before)
    run_both(means, normal_data(9, v=(5,), m=(3, 4), s=()),
             rtol=1e-9 if dtype_name == "float64" else 3e-7, dtype_name=dtype_name)



def matrix_products(torch, show, data):
    """``@`` of two float64 matrices: Tensor.__matmul__'s fast path (and ``t()``'s), for
    a leaf and for data, and its gradients."""
    a = torch.tensor(data["a"], requires_grad=True)
    w = torch.tensor(data["w"], requires_grad=True)
    x = torch.tensor(data["a"])
    for name, r in (("mm", a @ w.t()), ("data", x @ w.t())):
        show(name, r, r.dtype, _functions(r))
        a.grad = w.grad = None
        (r * r).sum().backward()
        show(a.grad, w.grad)


def test_matrix_products_match_pytorch():
    run_both(matrix_products, normal_data(9, a=(3, 4), w=(5, 4)))


def test_the_matrix_fast_path_is_numpys_matmul():
    """Tensor.__matmul__ gives the value, node and errors of numpy's matmul, the general
    path (``ArrayMethods.__matmul__``), for the matrices it takes (float64, float32) and
    the operands it leaves to it (a vector, a batch); two dtypes (int64 or float32 with
    float64) are PyTorch's error (tests/test_torch_semantics.py), numpy's would promote."""
    from symgrad.numpy_api.traced_array import ArrayMethods

    a = symgrad.tensor(np.arange(12.0).reshape(3, 4) / 7, requires_grad=True)
    w = symgrad.tensor(np.arange(20.0).reshape(4, 5) / 3)
    for right in (w.long(), w.float()):
        with pytest.raises(RuntimeError, match="one dtype"):
            a @ right
    s4 = symgrad.tensor(np.arange(48.0).reshape(2, 2, 3, 4) / 5, requires_grad=True)
    w4 = w.expand(2, 2, 4, 5) * 1.0
    for left, right in ((a, w), (a.float(), w.float()), (a, w[:, 0]), (a, w.expand(2, 4, 5)),
                        (s4, w4), (s4.float(), w4.float()), (s4[0], w4[1]), (s4, w4[0])):
        fast, slow = left @ right, ArrayMethods.__matmul__(left, right)
        assert fast._value.tobytes() == slow._value.tobytes() and fast.dtype == slow.dtype
        # (the same primitive; the fast path's node has PyTorch's name: MvBackward0, ...)
        assert fast._node.prim is slow._node.prim and fast._node.sig == slow._node.sig
    errors = []
    for product in (lambda: a @ a, lambda: ArrayMethods.__matmul__(a, a)):
        with pytest.raises(Exception) as e:
            product()
        errors.append((type(e.value), str(e.value).split(" (at ")[0]))
    assert errors[0] == errors[1]


def classifier_ops(torch, show, data, dtype_name):
    """``relu``, ``log_softmax`` and ``nll_loss`` (a classifier's; float64 and float32 take
    their fast exits, int64 and no-grad the general path): values, nodes, gradients."""
    F = torch.nn.functional
    x = torch.tensor(data["x"], dtype=getattr(torch, dtype_name), requires_grad=True)
    y = torch.tensor([0, 2, 1])
    h = x.relu()
    logp = (h * 2 - 1).log_softmax(1)
    loss = F.nll_loss(logp, y)
    ce = F.cross_entropy(x - 1, y, reduction="sum")
    for r in (h, logp, loss, ce):
        show(r, str(r.dtype), _functions(r))
    (loss + ce).backward()
    show(x.grad)
    with torch.no_grad():
        show(x.relu().requires_grad, x.log_softmax(0).grad_fn, F.nll_loss(logp, y).grad_fn)
    show(torch.tensor([-2, 3]).relu())
    try:  # (a bool's relu gave float64 here)
        show(torch.tensor([True, False]).relu())
    except RuntimeError as error:
        show(str(error))
    for name in ("softmax", "log_softmax"):  # (an int64's gave float64 here)
        try:
            show(getattr(torch.tensor([1, 2]), name)(0))
        except NotImplementedError as error:
            show(type(error).__name__)
    xt = x.t()  # (a view of x, as PyTorch's; its fast exit too)
    show(xt._base is x, _functions(xt))
    xt.sum().backward()
    show(x.grad)


@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
def test_classifier_ops_match_pytorch(dtype_name):
    run_both(classifier_ops, normal_data(4, x=(3, 4)),
             rtol=1e-9 if dtype_name == "float64" else 3e-6, dtype_name=dtype_name)


def test_classifier_fast_exits_are_the_general_path():
    """Tensor.relu's, log_softmax's, t()'s and nll_loss_rows' fast exits give the value and node
    (class, primitive, parameters, aval) of the primitives' general call."""
    from symgrad.eager import methods
    from symgrad.numpy_api import functions as ops
    from symgrad.prims import softmax as softmax_prims
    from symgrad.prims.reductions import transpose_p

    x = symgrad.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    t = symgrad.tensor(np.array([0.0, 3.0, -1.0]))
    w, total = symgrad.tensor(np.array([1.0, 1.0, 0.0])), symgrad.tensor(np.array(2.0))
    for fast, slow in ((x.relu(), ops.relu(x)),
                       (x.t(), methods.named(EAGER.apply(transpose_p, (x,), {"perm": (1, 0)}),
                                             x, "TBackward0")),
                       (x.log_softmax(1), softmax_prims.log_softmax(x, 1)),
                       (methods.nll_loss_rows(x, t._value, w._value, total._value, 1, "mean"),
                        softmax_prims.nll_loss(x, t, w, total, 1, "mean"))):
        assert fast._value.tobytes() == slow._value.tobytes()
        a, b = fast._node, slow._node
        assert (type(a), a.prim, a.params, a.aval) == (type(b), b.prim, b.params, b.aval)
