"""A backward whose graph is the structure the last one ran (symgrad/eager/structure.py)
skips the planning; it must give PyTorch's gradients where the graph looks the same but is
not (another sharing of a node, a leaf or a data array, leaves swapped), and leave the
checks (versions, freed nodes, changes through .data) to the general path."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg
from symgrad.eager import backward as engine

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True, params=["written", "loop"])
def walk(request, monkeypatch):
    """Each test with both walks of a plan: the one written out for it and compiled, and
    the loop that large plans take (structure.WRITTEN_WALKS)."""
    from symgrad.eager import structure

    if request.param == "loop":
        monkeypatch.setattr(structure, "WRITTEN_WALKS", 0)
    return request.param


def _values(t):
    return np.array(t.tolist())  # (a copy: the gradient is zeroed in place later)


def _tensors(lib, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(5) for _ in range(3)]
    made = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays[:2]]
    return made, lib.tensor(arrays[2], dtype=lib.float64)


#: pairs of steps with the same operations in the same order, told apart only by which
#: node, leaf or data array each input is
STEPS = {
    "a node's inputs: the first node and the second, then the second twice": (
        lambda x, w, d: (lambda a: (a * (a * 3)).sum())(x * 2),
        lambda x, w, d: (lambda b: (b * b).sum())((x * 2) * 3)),
    "leaf twice, then two leaves": (
        lambda x, w, d: (x * x).sum(), lambda x, w, d: (x * w).sum()),
    "two leaves, then one twice": (
        lambda x, w, d: (x * w).sum(), lambda x, w, d: (x * x).sum()),
    "leaves swapped": (
        lambda x, w, d: (x * 3 - w).sum(), lambda x, w, d: (w * 3 - x).sum()),
    "data twice, then two arrays": (
        lambda x, w, d: (x * d + d).sum(), lambda x, w, d: (x * d + d * 2).sum()),
    "one node's result, then another's": (
        lambda x, w, d: (lambda a, b: (a * b).sum())(x + 1, x * 2),
        lambda x, w, d: (lambda a, b: (b * a).sum())(x + 1, x * 2)),
}


@pytest.mark.parametrize("name", sorted(STEPS))
def test_a_look_alike_structure_gives_pytorchs_gradients(name):
    got, want = [], []
    for lib, out in ((sg, got), (torch, want)):
        (x, w), d = _tensors(lib, 0)
        for step in (*STEPS[name], *STEPS[name][::-1], STEPS[name][0]):
            for _ in range(2):  # (the second run of a structure matches the first's)
                x.grad = w.grad = None
                step(x, w, d).backward()
                out.append([None if t.grad is None else _values(t.grad) for t in (x, w)])
    for g, t in zip(got, want):
        for a, b in zip(g, t):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-12)


def test_the_repeated_step_matches_and_changes_are_caught():
    """The seeds' step repeated takes the match; a version change, a freed graph, a change
    through .data between forward and backward, and a retained gradient go the general
    way, with PyTorch's errors and values."""
    calls = {"matched": 0}
    matched = engine._matched

    def counted(root, ct):
        found = matched(root, ct)
        calls["matched"] += found is not None
        return found
    engine._matched, before = counted, engine._matched
    try:
        results = {}
        for lib in (sg, torch):
            x = lib.tensor(np.linspace(-1, 1, 6), dtype=lib.float64, requires_grad=True)
            seen = []
            for step in range(8):
                y = x + 2
                z = y * y * 3
                out = z.mean()
                if step == 2:
                    y.retain_grad()
                if step == 5:
                    x.data.mul_(2)  # read as it is now: PyTorch's saved x changed too
                out.backward()
                seen.append(_values(x.grad))
                if step == 2:
                    seen.append(_values(y.grad))
                x.data -= 0.1 * x.grad.data
                x.grad.data.zero_()
            y = x * x
            out = y.sum()
            out.backward()
            seen.append(_values(x.grad))
            with pytest.raises(RuntimeError, match="second time"):
                out.backward()
            y = x * x
            out = y.sum()
            with torch.no_grad() if lib is torch else sg.no_grad():
                x.mul_(1.5)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                out.backward()
            results[lib.__name__] = seen
    finally:
        engine._matched = before
    for a, b in zip(results["symgrad"], results["torch"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert calls["matched"] == 3  # (steps 1, 4 and 7, after a general one each)


def test_a_repeated_function_with_a_silent_input_keeps_its_grad_none():
    """An autograd.Function's node (its ctx handle is no plain array) never matches: a
    repeated step keeps ``.grad`` None for the input its backward gives None, as PyTorch."""
    seen = {}
    for lib in (sg, torch):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None

        (x, w), _ = _tensors(lib, 1)
        for _ in range(3):
            Scale.apply(x * 1, w * 1).sum().backward()
        seen[lib.__name__] = (_values(x.grad), w.grad)
    np.testing.assert_allclose(seen["symgrad"][0], seen["torch"][0], rtol=1e-12)
    assert seen["symgrad"][1] is None and seen["torch"][1] is None


def test_nodes_made_in_another_order_do_not_match():
    """Positions hold nodes in creation order (the general path's sort): the same
    operations made in another order are not the last backward's structure."""
    from symgrad.eager.structure import match

    x = sg.tensor(np.linspace(-1, 1, 4), dtype=sg.float64, requires_grad=True)
    (x * 2 * (x * 3)).sum().backward()  # (the general path: the template)
    a = x * 2
    b = x * 3
    assert match((a * b).sum()._node, engine._TEMPLATE[0]) is not None
    b = x * 3
    a = x * 2
    assert match((a * b).sum()._node, engine._TEMPLATE[0]) is None


def test_a_matched_step_with_hooks_retain_graph_and_grads_set_to_none():
    """The matched backward's own path (engine._replayed) gives PyTorch's gradients over
    steps that add into ``.grad``, start it again (None), keep the graph for a second
    backward, and register then remove a hook on a leaf (the general path's case)."""
    taken = {"replayed": 0}
    replayed = engine._replayed

    def counted(*args):
        done = replayed(*args)
        taken["replayed"] += done
        return done
    engine._replayed, before = counted, engine._replayed
    try:
        seen = {}
        for lib in (sg, torch):
            (x, w), _ = _tensors(lib, 2)
            got, handle = [], None
            for step in range(8):
                if step == 3:
                    handle = x.register_hook(lambda g: g * 2)
                if step == 5:
                    handle.remove()
                out = ((x + 2) * (x + 2) * w).mean()
                out.backward(retain_graph=step == 6)
                if step == 6:
                    out.backward()
                got.append([_values(x.grad), _values(w.grad)])
                if step % 3 == 1:
                    x.grad = w.grad = None
            seen[lib.__name__] = got
    finally:
        engine._replayed = before
    for a, b in zip(seen["symgrad"], seen["torch"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert taken["replayed"] >= 3  # (steps 1, 2, 6 at least: the others after a change)


def test_a_leaf_whose_dtype_changes_between_steps():
    """The same operations on a leaf whose values turn float32 and back (``.data =``)
    each step: the walk compares the leaves' dtypes (a float32 leaf's gradient is
    float32), as PyTorch's gradients."""
    seen = {}
    for lib in (sg, torch):
        (x, w), _ = _tensors(lib, 3)
        got = []
        for step in range(6):
            x.data = x.data.float() if step % 2 else x.data.double()
            (x * w).sum().backward()
            got.append((str(x.grad.dtype).split(".")[-1], _values(x.grad), _values(w.grad)))
            x.grad = w.grad = None
        seen[lib.__name__] = got
    for a, b in zip(seen["symgrad"], seen["torch"], strict=True):
        assert a[0] == b[0]
        np.testing.assert_allclose(a[1], b[1], rtol=1e-6)
        np.testing.assert_allclose(a[2], b[2], rtol=1e-6)
