"""Every record of the op table (tests/optable*.py) against real PyTorch 2.13.

For each record and sample: the forward results (kind, dtype, shape, values), and the
gradients of ``sum(out * cotangent)`` for a random cotangent in every float input, in
float64 (PyTorch's default dtype set to symgrad's); its double backward
(``create_graph``, then the gradient of ``sum(grad * v)``) where the record says PyTorch
has one; and the forward (with the gradient for float32) in each further dtype the
record takes. One test per record (pytest's cost per test is a good part of a
small op's): CI runs every sample in float64, the first sample for the double backward
and in up to two more dtypes; ``SYMGRAD_FULL=1`` runs every sample in every dtype.
``test_every_public_op_is_in_the_table_or_excluded`` keeps the table complete.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

import optable_elementwise  # noqa: E402,F401 -- registers its records
import optable_fn  # noqa: E402,F401
import optable_gaps  # noqa: E402,F401
import optable_late  # noqa: E402,F401
import optable_more  # noqa: E402,F401
import optable_nn  # noqa: E402,F401
import optable_nn_more  # noqa: E402,F401
import optable_select  # noqa: E402,F401
import optable_shapes  # noqa: E402,F401
import optable_special  # noqa: E402,F401
from optable import RECORDS, OpInfo, make_input  # noqa: E402
from optable_exclusions import EXCLUDED  # noqa: E402
from torch_oracle import float64_default  # noqa: E402,F401

import symgrad  # noqa: E402

FULL = os.environ.get("SYMGRAD_FULL") == "1"


#: dtypes checked per record in CI besides its first (float64): a sample; all of them
#: with SYMGRAD_FULL=1
CI_DTYPES = 2


def _checks(r: OpInfo) -> list[tuple[str, int, str]]:
    """(check, sample, dtype) of a record: ``values`` (with first-order gradients) of every
    sample in the first dtype, ``gradgrad`` (values, first and second order gradients) of
    the first sample, ``values`` of the first sample in further dtypes."""
    double = r.grad and r.gradgrad and r.dtypes[0] == "float64" and (
        FULL or "gradgrad" not in r.full_only)
    checks = [("gradgrad", 0, "float64")] if double else []
    checks += [("values", k, r.dtypes[0]) for k in range(len(r.samples)) if k or not double]
    others = r.dtypes[1:] if FULL else r.dtypes[1:1 + CI_DTYPES]
    checks += [("values", k, d) for d in others for k in (range(len(r.samples)) if FULL else [0])]
    if FULL and double:
        checks += [("gradgrad", k, "float64") for k in range(1, len(r.samples))]
    return checks


@pytest.mark.parametrize("r", RECORDS, ids=str)
def test_op_equals_pytorch(r: OpInfo):
    """Every check of the record; a known disagreement (``r.known``, a bug reported and
    not yet fixed) must still fail, so that its fix removes it from the table's list."""
    for check, k, dtype in _checks(r):
        known = next((r.known[key] for key in (f"{check}:{dtype}", dtype, f"{dtype}:{k}")
                      if key in r.known), None)
        if known is None:
            _check(r, check, k, dtype)
            continue
        try:
            _check(r, check, k, dtype)
        except Exception:  # noqa: BLE001 -- the known disagreement, still there
            continue
        pytest.fail(f"{r.name} {check} {dtype} sample {k} now agrees with PyTorch: remove "
                    f"the known failure ({known}) from the record")


def _check(r: OpInfo, check: str, k: int, dtype: str) -> None:
    if check == "gradgrad":
        _double_backward(r, k)
    else:
        _values_and_gradients(r, k, dtype)


def _arrays(r: OpInfo, k: int, dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(sum(map(ord, r.name)) + k)
    shapes = r.samples[k]
    return [make_input(s, d, dtype, rng) for s, d in zip(shapes, r.domains(len(shapes)))]


def _run(L: Any, r: OpInfo, arrays: list[np.ndarray], grad: bool) -> tuple[Any, list[Any]]:
    xs = [L.tensor(a) for a in arrays]
    xs = [x.requires_grad_() if grad and x.is_floating_point() else x for x in xs]
    op = r.ref if L is torch_real and r.ref is not None else r.op
    return op(L, *xs), xs


def _flat(result: Any) -> list[Any]:
    if isinstance(result, (tuple, list)):
        return [v for item in result for v in _flat(item)]
    return [result]


def _compare(got: Any, want: Any, rtol: float, atol: float, what: str) -> None:
    assert str(got.dtype).rpartition(".")[2] == str(want.dtype).rpartition(".")[2], \
        f"{what}: dtype {got.dtype}, PyTorch {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape"
    g, w = _numpy(got), _numpy(want)
    if w.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(g, w, err_msg=what)


def _forward(r: OpInfo, k: int, dtype: str, grad: bool):
    arrays = _arrays(r, k, dtype)
    (want, txs), (got, sxs) = (_run(L, r, arrays, grad) for L in (torch_real, symgrad))
    wants, gots = _flat(want), _flat(got)
    assert len(gots) == len(wants), "number of results"
    single = dtype in ("float32",) or any("float16" in str(w.dtype) or "float32" in str(w.dtype)
                                          for w in wants)
    rtol, atol = (2e-5, 2e-6) if single else (r.rtol, 1e-12)
    for j, (g, w) in enumerate(zip(gots, wants)):
        _compare(g, w, rtol, atol * _scale(w), f"result {j}")
        assert g.requires_grad == w.requires_grad, f"result {j} requires_grad"
    if isinstance(want, tuple) and hasattr(want, "indices"):  # a named (values, indices)
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    outs = [(g, w) for g, w in zip(gots, wants) if w.requires_grad]
    return outs, sxs, txs, (rtol, atol)


def _scale(t: Any) -> float:
    """The size of a result's entries, for an absolute tolerance of float32 results."""
    a = _numpy(t)
    finite = np.abs(a[np.isfinite(a)]) if a.dtype.kind in "fc" else np.zeros(0)
    return max(1.0, float(finite.max(initial=0.0)))


def _numpy(t: Any) -> np.ndarray:
    t = t.detach()
    return t.numpy(force=True) if isinstance(t, torch_real.Tensor) else t.numpy()


def _total(L: Any, outs: list[Any], seed: int) -> Any:
    rng = np.random.default_rng(seed)
    return sum((o * L.tensor(np.asarray(rng.uniform(-1, 1, tuple(o.shape)),
                                        dtype=str(o.dtype).rpartition(".")[2]))).sum()
               for o in outs)


def _grads(L: Any, total: Any, xs: list[Any], **kw: Any) -> list[Any]:
    wrt = [x for x in xs if x.requires_grad]
    return list(L.autograd.grad(total, wrt, allow_unused=True, **kw)) if wrt else []


def _zeros_if_none(g: Any, x: Any) -> np.ndarray:
    return np.zeros(tuple(x.shape)) if g is None else _numpy(g)


def _values_and_gradients(r: OpInfo, k: int, dtype: str) -> None:
    outs, sxs, txs, (rtol, atol) = _forward(r, k, dtype, r.grad)
    if not (r.grad and outs):
        return
    seed = len(r.name) + k
    want = _grads(torch_real, _total(torch_real, [w for _, w in outs], seed), txs)
    got = _grads(symgrad, _total(symgrad, [g for g, _ in outs], seed), sxs)
    for j, (g, w, x) in enumerate(zip(got, want, [x for x in txs if x.requires_grad])):
        if g is not None and w is not None:
            assert str(g.dtype).rpartition(".")[2] == str(w.dtype).rpartition(".")[2]
        np.testing.assert_allclose(_zeros_if_none(g, x), _zeros_if_none(w, x), rtol=10 * rtol,
                                   atol=10 * atol, err_msg=f"gradient of input {j}")


def _double_backward(r: OpInfo, k: int) -> None:
    outs, sxs, txs, (rtol, atol) = _forward(r, k, "float64", True)
    if not outs:
        return
    seed = len(r.name) + k
    results = []
    for L, xs, os_ in ((torch_real, txs, [w for _, w in outs]),
                       (symgrad, sxs, [g for g, _ in outs])):
        firsts = _grads(L, _total(L, os_, seed), xs, create_graph=True)
        rng = np.random.default_rng(seed + 1)
        used = [(g, rng.uniform(-1, 1, tuple(g.shape))) for g in firsts
                if g is not None and g.requires_grad]
        seconds = _grads(L, sum((g * L.tensor(v)).sum() for g, v in used), xs) if used else []
        wrt = [x for x in xs if x.requires_grad]
        results.append(([_zeros_if_none(g, x) for g, x in zip(firsts, wrt)],
                         [_zeros_if_none(g, x) for g, x in zip(seconds, wrt)] or
                         [np.zeros(tuple(x.shape)) for x in wrt]))
    (want_first, want_second), (got_first, got_second) = results
    for j, (g, w) in enumerate(zip(got_first + got_second, want_first + want_second)):
        np.testing.assert_allclose(g, w, rtol=10 * rtol, atol=10 * atol,
                                   err_msg=f"{'first' if j < len(got_first) else 'second'} "
                                           f"order gradient {j % len(got_first)}")


# -- the table is complete ------------------------------------------------------------

def public_ops() -> set[str]:
    """Every public op of the Tensor API: Tensor's methods, properties and operators,
    the functions of ``symgrad`` (PyTorch's ``torch.*``; numpy's ufuncs where symgrad
    exports them under PyTorch's name), ``symgrad.nn.functional``, ``symgrad.linalg`` and
    ``symgrad.special``."""
    own = [vars(c) for c in symgrad.Tensor.__mro__[:-1]]  # not object's
    names = {f"Tensor.{n}" for n in dir(symgrad.Tensor)
             if not n.startswith("_") or (n.startswith("__") and any(n in v for v in own))}
    for prefix, module in (("torch", symgrad), ("F", symgrad.nn.functional),
                           ("linalg", symgrad.linalg), ("special", symgrad.special)):
        for n in dir(module):
            obj = getattr(module, n)
            if (n.startswith("_") or inspect.isclass(obj) or inspect.ismodule(obj)
                    or not callable(obj) or not (isinstance(obj, np.ufunc) or getattr(
                        obj, "__module__", "").startswith("symgrad"))):
                continue
            names.add(f"{prefix}.{n}")
    return names


def test_every_public_op_is_in_the_table_or_excluded():
    public = public_ops()
    covered = {n for r in RECORDS for n in r.names}
    missing = sorted(public - covered - set(EXCLUDED))
    assert not missing, f"ops neither in the table (tests/optable*.py) nor excluded: {missing}"
    stale = sorted((covered | set(EXCLUDED)) - public)
    assert not stale, f"names in the table or the exclusions that are not public ops: {stale}"
    both = sorted(covered & set(EXCLUDED))
    assert not both, f"excluded and yet in the table: {both}"
    assert all(len(reason) > 10 for reason in EXCLUDED.values())


def test_record_names_are_unique():
    names = [r.name for r in RECORDS]
    assert len(names) == len(set(names))
