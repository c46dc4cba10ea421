"""sg.export: exported modules run where symgrad cannot be imported, and agree with
sg.grad (on the interpreter) and with an independent oracle (closed forms, finite
differences). One Numba export only: compiles are slow."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import site
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import symgrad as sg
from symgrad import prims
from symgrad.backend import numpy_source
from symgrad.transforms.export import ExportError

SITE = [p for p in (*site.getsitepackages(), site.getusersitepackages()) if os.path.isdir(p)]


def run_standalone(path, call: str, args: dict) -> object:
    """Import the module at ``path`` in a fresh interpreter that cannot import symgrad
    (isolated, no site processing: the editable install's hook never runs; the
    site-packages directories are on the path for numpy and numba, and a finder refuses
    symgrad should a regular install sit there), call it as ``call`` with ``args``
    (lists, made arrays there; ``{"re": ..., "im": ...}`` a complex one) and return what
    it printed (JSON; a complex result as such a dict)."""
    code = textwrap.dedent(f"""
        import sys

        class NoSymgrad:
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] == "symgrad":
                    raise ModuleNotFoundError("symgrad is not installed here", name=name)

        sys.meta_path.insert(0, NoSymgrad())
        sys.path[:0] = {[str(path.parent)]!r}
        sys.path += {SITE!r}
        try:
            import symgrad
        except ImportError:
            pass
        else:
            raise SystemExit("symgrad is importable here: " + symgrad.__file__)
        import json
        import numpy as np
        import {path.stem} as m

        def array(v):
            if isinstance(v, dict):
                return np.array(v["re"]) + 1j * np.array(v["im"])
            return np.array(v)
        args = {{k: array(v) for k, v in json.loads({json.dumps(args)!r}).items()}}
        result = {call}

        def plain(x):
            if isinstance(x, dict):
                return {{k: plain(v) for k, v in x.items()}}
            if isinstance(x, (tuple, list)):
                return [plain(v) for v in x]
            if np.iscomplexobj(x):
                return {{"re": np.real(x).tolist(), "im": np.imag(x).tolist(),
                         "dtype": str(np.asarray(x).dtype)}}
            return np.asarray(x).tolist()
        print(json.dumps(plain(result)))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run([sys.executable, "-I", "-S", "-B", "-c", code], cwd=path.parent,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def load(path):
    """The exported module, imported in this process (for the refusal tests)."""
    spec = importlib.util.spec_from_file_location(f"exported_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_elementwise_and_reductions(tmp_path):
    def f(x):
        return np.mean(3 * (x + 2) ** 2) + np.sum(np.sin(x) * np.exp(-x))

    x = np.linspace(0.1, 1.7, 6).reshape(2, 3)
    path = sg.export(sg.grad(f, backend="numpy"), (x,), tmp_path / "grad_f.py", target="numpy")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grad_f.py"]  # nothing else
    text = path.read_text()
    assert "gradient of f with respect to x" in text.lower() and "float64[2, 3]" in text
    assert "max abs difference" in text and "import symgrad" not in text
    got = np.array(run_standalone(path, "m.grad_f(args['x'])", {"x": x.tolist()}))
    closed = 6 * (x + 2) / x.size + np.exp(-x) * (np.cos(x) - np.sin(x))
    np.testing.assert_allclose(got, sg.grad(f, backend="numpy")(x), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(got, closed, rtol=1e-13)


def test_linalg_value_and_grad_of_two_arguments(tmp_path):
    def f(A, b):
        return np.sum((A @ b - 1.0) ** 2) + np.sum(np.linalg.solve(A, b))

    rng = np.random.default_rng(0)
    A, b = np.eye(3) * 2.0 + 0.3 * rng.standard_normal((3, 3)), rng.standard_normal(3)
    vg = sg.value_and_grad(f, argnums=(0, 1), backend="numpy")
    path = sg.export(vg, (A, b), tmp_path / "vg.py", target="numpy")
    value, (gA, gb) = run_standalone(path, "m.value_and_grad_f(args['A'], args['b'])",
                                     {"A": A.tolist(), "b": b.tolist()})
    want_value, (want_A, want_b) = vg(A, b)
    assert value == pytest.approx(float(want_value), rel=1e-14)
    np.testing.assert_allclose(gA, want_A, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(gb, want_b, rtol=1e-13, atol=1e-14)
    # the oracle: central differences
    h = 1e-6
    for x, g, k in ((A, gA, 0), (b, gb, 1)):
        fd = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[i] = h
            plus = (A + e, b) if k == 0 else (A, b + e)
            minus = (A - e, b) if k == 0 else (A, b - e)
            fd[i] = (f(*plus) - f(*minus)) / (2 * h)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("checkpoint", [None, 3])
def test_fori_loop(tmp_path, checkpoint):
    """A loop and its reverse loop (the tape of carries, or checkpoints every 3 steps
    and the steps recomputed from them) as functions of the module."""
    def f(x):
        return np.sum(sg.fori_loop(0, 7, lambda i, c: np.sin(c) * 1.1, x,
                                   checkpoint=checkpoint))

    x = np.array([0.3, -1.2, 2.0])
    path = sg.export(sg.grad(f, backend="numpy"), (x,), tmp_path / "loop.py", target="numpy")
    text = path.read_text()
    assert "def _body_" in text and ("def _recompute_" in text) == (checkpoint is not None)
    got = np.array(run_standalone(path, "m.grad_f(args['x'])", {"x": x.tolist()}))
    c, closed = x.copy(), np.ones_like(x)  # d c_7 / d x = prod 1.1 cos(c_k)
    for _ in range(7):
        closed *= 1.1 * np.cos(c)
        c = 1.1 * np.sin(c)
    np.testing.assert_allclose(got, sg.grad(f, backend="numpy")(x), rtol=1e-14)
    np.testing.assert_allclose(got, closed, rtol=1e-13)


def test_a_trip_count_stays_an_argument(tmp_path):
    """An int argument is a kernel input (int64), as in symgrad: a new count needs no
    new export; a float where the int was is refused."""
    def f(x, n):
        return np.sum(sg.fori_loop(0, n, lambda i, c: c * 0.5 + np.sin(c), x))

    x = np.array([0.2, 1.1])
    g = sg.grad(f, backend="numpy")
    module = load(sg.export(g, (x, 3), tmp_path / "count.py", target="numpy"))
    for n in (0, 1, 5):
        c, closed = x.copy(), np.ones_like(x)
        for _ in range(n):
            closed *= 0.5 + np.cos(c)
            c = c * 0.5 + np.sin(c)
        np.testing.assert_allclose(module.grad_f(x, n), g(x, n), rtol=1e-15)
        np.testing.assert_allclose(module.grad_f(x, n), closed, rtol=1e-14)
    with pytest.raises(ValueError, match="n has dtype float64"):
        module.grad_f(x, 2.0)


def test_a_pullback_with_its_point_held_as_constants(tmp_path):
    x, s = np.array([0.3, 1.0, 2.5]), 2.0
    y, pullback = sg.vjp(lambda x, s: np.sin(x) * x * s, x, s, backend="numpy")
    path = sg.export(pullback, (np.ones(3),), tmp_path / "pb.py", target="numpy",
                     name="pullback")
    assert "It holds 1 constant" in path.read_text()  # x (s is a float: a literal)
    ct = np.array([1.0, -2.0, 0.5])
    gx, gs = load(path).pullback(ct)
    np.testing.assert_allclose(gx, pullback(ct)[0], rtol=1e-15)
    np.testing.assert_allclose(gx, s * (np.cos(x) * x + np.sin(x)) * ct, rtol=1e-14)
    assert gs == pytest.approx(np.sum(np.sin(x) * x * ct), rel=1e-14)


def test_hessian(tmp_path):
    def h(x):
        return np.sum(x ** 3) + x[0] * x[1]

    x = np.array([1.5, -2.0, 0.5])
    path = sg.export(sg.hessian(h, backend="numpy"), (x,), tmp_path / "hess.py",
                     target="numpy", name="hessian_h", description="Hessian of h")
    assert path.read_text().startswith('"""Hessian of h: a standalone module')
    got = np.array(run_standalone(path, "m.hessian_h(args['x'])", {"x": x.tolist()}))
    closed = np.diag(6 * x)
    closed[0, 1] = closed[1, 0] = 1.0
    np.testing.assert_allclose(got, sg.hessian(h, backend="numpy")(x), rtol=1e-15)
    np.testing.assert_allclose(got, closed, rtol=1e-15, atol=1e-15)


def test_numba_target_with_a_pytree(tmp_path):
    """The fused Numba kernel (vectorized exp/log/tanh copied in), a dict of parameters."""
    def loss(params, x):
        return np.sum(np.tanh(params["w"] * x + params["b"]) ** 2 + np.exp(-x * x))

    params = {"w": np.array([0.5, -1.0, 2.0]), "b": np.array([0.1, 0.2, -0.3])}
    x = np.array([1.0, 0.5, -0.25])
    g = sg.grad(loss, backend="numpy")
    path = sg.export(g, (params, x), tmp_path / "nb.py", target="numba")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb.py"]  # no Numba cache beside
    text = path.read_text()
    # (no call through symgrad's vecmath module, vm.: its functions are copied in)
    assert "@njit" in text and not re.search(r"\bvm\.", text) and "import symgrad" not in text
    got = run_standalone(path, "m.grad_loss({'w': args['w'], 'b': args['b']}, args['x'])",
                         {"w": params["w"].tolist(), "b": params["b"].tolist(),
                          "x": x.tolist()})
    want = g(params, x)
    t = np.tanh(params["w"] * x + params["b"])
    closed = {"w": 2 * t * (1 - t * t) * x, "b": 2 * t * (1 - t * t)}
    assert sorted(got) == ["b", "w"]
    for k in ("w", "b"):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(got[k], closed[k], rtol=1e-13, atol=1e-15)


def test_a_float32_kernel_exports_to_numba(tmp_path):
    """A float32 kernel calls float32 math (vecmath32: LLVM intrinsics, float32
    constants): copied in too (it was refused as a helper export could not copy)."""
    def f(x):
        return np.sum(np.tanh(x) * np.exp(x))

    x = np.linspace(-2, 2, 9).astype(np.float32)
    g = sg.grad(f, backend="numpy")
    path = sg.export(g, (x,), tmp_path / "g32.py", target="numba")
    text = path.read_text()
    assert not re.search(r"\bvm32\.", text) and "np.float32(" in text
    got = run_standalone(path, "m.grad_f(args['x'].astype(np.float32))", {"x": x.tolist()})
    x64 = x.astype(np.float64)
    closed = np.exp(x64) * (np.tanh(x64) + 1 - np.tanh(x64) ** 2)
    np.testing.assert_allclose(got, g(x), rtol=3e-7, atol=1e-7)
    np.testing.assert_allclose(got, closed, rtol=2e-6)


def test_wrong_shapes_and_structures_are_refused_at_call_time(tmp_path):
    def f(x, y):
        return np.sum(x * y)

    x, y = np.ones((2, 3)), np.full(3, 2.0)
    module = load(sg.export(sg.grad(f, backend="numpy"), (x, y), tmp_path / "shapes.py",
                            target="numpy"))
    np.testing.assert_array_equal(module.grad_f(x, y), np.full((2, 3), 2.0))
    with pytest.raises(ValueError, match=r"x has shape \(3, 2\).*x: float64\[2, 3\], "
                                         r"y: float64\[3\]"):
        module.grad_f(np.ones((3, 2)), y)
    with pytest.raises(ValueError, match="complex128"):
        module.grad_f(x.astype(complex), y)
    tree = load(sg.export(sg.grad(lambda p: np.sum(p["a"] ** 2), backend="numpy"),
                          ({"a": np.ones(2)},), tmp_path / "tree.py", target="numpy"))
    with pytest.raises(ValueError, match="dict with the keys"):
        tree.grad_fn({"b": np.ones(2)})


def test_refusals_leave_no_file(tmp_path, monkeypatch):
    monkeypatch.delitem(numpy_source.LOWERINGS, prims.eigh_p)  # as a primitive added later
    eigh = sg.grad(lambda a: np.sum(np.linalg.eigh(a)[0] ** 2), backend="numpy")
    with pytest.raises(NotImplementedError, match="primitive eigh has no lowering"):
        sg.export(eigh, (np.eye(2) + 1.0,), tmp_path / "eigh.py", target="numpy")
    bits = sg.jit(lambda n: np.bitwise_and(n, 3) + n, backend="numpy")  # an impl reading
    with pytest.raises(NotImplementedError, match="primitive bitwise: .* cannot be copied"):
        sg.export(bits, (np.arange(4),), tmp_path / "bits.py", target="numpy")  # a dict
    with pytest.raises(TypeError, match="Tensor"):
        sg.export(sg.grad(np.sum, backend="numpy"), (sg.tensor([1.0, 2.0]),),
                  tmp_path / "t.py", target="numpy")

    def with_callback(x):
        y = sg.pure_callback(np.cos, sg.ShapeDtypeStruct((2,), np.float64), x)
        return np.sum(y * x)
    with pytest.raises(NotImplementedError, match="Python function"):
        sg.export(sg.jit(with_callback, backend="numpy"), (np.ones(2),),
                  tmp_path / "cb.py", target="numpy")
    dask = pytest.importorskip("dask.array")
    with pytest.raises(TypeError, match="Dask array"):
        sg.export(sg.grad(np.sum, backend="numpy"), (dask.ones(4, chunks=2),),
                  tmp_path / "d.py", target="numpy")
    with pytest.raises(TypeError, match="static arguments"):
        sg.export(sg.grad(lambda x, k: np.sum(x ** k), static_argnums=(1,), backend="numpy"),
                  (np.ones(2), 3), tmp_path / "s.py", target="numpy")
    with pytest.raises(ValueError, match="C target"):
        sg.export(np.sum, (np.ones(2),), tmp_path / "c.py", target="c")
    assert list(tmp_path.iterdir()) == []


def test_a_module_that_disagrees_is_not_written(tmp_path, monkeypatch):
    """The check at export time: a wrong lowering (sin written as cos) is caught."""
    monkeypatch.setitem(numpy_source.LOWERINGS, prims.sin_p,
                        lambda out, args, e, module: [f"{out} = np.cos({args[0]})"])
    with pytest.raises(ExportError, match="differs from symgrad"):
        sg.export(sg.jit(lambda x: np.sin(x) * 2.0, backend="numpy"), (np.ones(3),),
                  tmp_path / "wrong.py", target="numpy")
    assert list(tmp_path.iterdir()) == []


def test_the_numpy_lowering_covers_the_registry_or_says_which_it_does_not():
    """Every row of the table is a registered primitive; every other primitive is an
    elementwise ufunc (the default) or is refused by name."""
    registered = set(map(id, prims.REGISTRY.values()))
    assert all(id(p) in registered for p in numpy_source.LOWERINGS)
    refused = []
    for name, prim in sorted(prims.REGISTRY.items()):
        try:
            numpy_source.lowering(prim)
        except numpy_source.Unlowerable as e:
            assert f"primitive {name} " in str(e)
            refused.append(name)
    # every primitive has a row or the ufunc default; callback's row refuses when used, and
    # so does bitwise's copy of its impl (which reads a dict of ufuncs)
    assert refused == []


def test_a_description_cannot_end_the_docstring_it_goes_into(tmp_path):
    """The description (or a function's __name__) is text in the module's docstring and
    comments, which the export's check executes: quotes, backslashes and newlines in it
    are neutralized, never run."""
    f = lambda x: np.sum(x ** 2)  # noqa: E731
    f.__name__ = 'f"""\nraise SystemExit("ran")\n"""'
    path = sg.export(sg.grad(f, backend="numpy"), (np.ones(3),), tmp_path / "quoted.py",
                     target="numpy", description='g"""\nraise SystemExit("ran")\n"""\\')
    text = path.read_text()  # (the check ran it: a SystemExit would have ended the test)
    assert "\nraise SystemExit" not in text
    assert text.splitlines()[0].startswith('"""G\'\'\' raise SystemExit')  # still the docstring


def test_complex_graphs_with_an_fft_export_to_numpy_and_to_numba(tmp_path):
    """A graph with complex values (an FFT, a complex literal) exports to numpy, and to
    Numba, where the kernel calls numpy's FFT in an object-mode block."""
    f = lambda x: np.sum(np.abs(np.fft.fft(x * (1.0 + 0.5j))) ** 2 * x)  # noqa: E731
    x = np.linspace(-1.0, 1.0, 6)
    g = sg.grad(f, backend="numpy")
    path = sg.export(g, (x,), tmp_path / "fft_grad.py", target="numpy")
    spec = importlib.util.spec_from_file_location("fft_grad", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    eps = 1e-6
    fd = [(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(len(x))]
    np.testing.assert_allclose(module.grad_fn(x), fd, rtol=1e-7, atol=1e-8)  # (a lambda)
    path = sg.export(g, (x,), tmp_path / "fft_grad_numba.py", target="numba")
    assert "numba.objmode(" in path.read_text()  # (the export ran it against symgrad's)


def test_a_complex_gradient_exports_to_numba(tmp_path):
    """JAX's gradient of a real loss of a complex vector (complex matmul, exp, a complex
    fori_loop carry) and a real one, as one Numba kernel that takes and returns complex
    arrays, run where symgrad cannot be imported: sg.grad's numbers."""
    a = np.array([[1.0 - 0.5j, 0.3j, 2.0], [0.5, -1.0 + 1j, 0.25j]])

    def loss(z, t):
        w = sg.fori_loop(0, 3, lambda i, v: v * v * (0.3 - 0.1j) + np.exp(1j * t), z)
        return np.sum(np.abs(a @ w) ** 2) + np.real(np.sum(w * np.conj(z)))

    z, t = np.array([0.5 + 0.2j, -0.3 + 0.1j, 0.2 - 0.4j]), np.array([0.1, -0.7, 1.2])
    g = sg.value_and_grad(loss, argnums=(0, 1), backend="numpy")
    path = sg.export(g, (z, t), tmp_path / "cgrad.py", target="numba")
    assert "@njit" in path.read_text()
    got = run_standalone(path, "m.value_and_grad_loss(args['z'], args['t'])",
                         {"z": {"re": z.real.tolist(), "im": z.imag.tolist()},
                          "t": t.tolist()})
    value, (gz, gt) = g(z, t)
    np.testing.assert_allclose(got[0], value, rtol=1e-14)
    assert got[1][0]["dtype"] == "complex128"
    np.testing.assert_allclose(np.array(got[1][0]["re"]) + 1j * np.array(got[1][0]["im"]), gz,
                               rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(got[1][1], gt, rtol=1e-13, atol=1e-14)
