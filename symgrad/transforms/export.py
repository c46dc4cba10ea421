"""``sg.export``: a transformed function as one standalone Python module.

``export(fn, example_args, path, target)`` writes the kernel that symgrad runs for
``fn(*example_args)`` (``fn`` a transformed function, ``sg.grad(f)``,
``sg.value_and_grad(f, argnums=(0, 1))``, ``sg.jit(f)``, ``sg.hessian(f)``..., or a
plain function, exported as its value, which may call ``sg.vjp``, ``sg.jvp``...
inside) as a module that imports numpy only (``target="numpy"``) or numpy and Numba
(``target="numba"``), and runs where symgrad is not installed:

- ``target="numba"``: the fused, readable kernel of :mod:`symgrad.backend.numba.codegen`
  (serial: no ``prange``), with every helper it calls (the vectorized math of
  :mod:`symgrad.backend.vecmath`, the LAPACK call of :mod:`symgrad.backend.lapack`)
  copied in, only those it uses (:class:`~symgrad.backend.standalone.Copier`);
- ``target="numpy"``: the same optimized graph written by
  :mod:`symgrad.backend.numpy_source`, one numpy statement per equation.

Either way the module holds a public entry function, named after the function and
its transformation (``grad_f``), taking the user's arguments by the user's names
(pytrees of tuples, lists and dicts as such) and returning what ``fn`` returns. The
shapes and dtypes are those of ``example_args``: the entry checks them and raises
ValueError naming the expected ones; export again for others.

The module is checked before it exists: it is written to a temporary file beside
``path``, run in this process on ``example_args`` (executed from its text, so no
bytecode or Numba cache is left beside it) and compared with ``fn``'s own result
at a tight tolerance; the largest differences go into its header docstring, with
what it computes, for which shapes, symgrad's version and the date. Only then is
it renamed to ``path`` (atomically); if they differ, nothing is left and
:class:`ExportError` says by how much.

Refused, with a message: Tensors and Dask arrays as arguments (export takes numpy
arrays and numbers), static arguments, namedtuples, outputs that are not arrays,
numbers and tuples/lists/dicts of them, ``sg.pure_callback`` (a Python function
no module can hold; ``custom_vjp``/``custom_jvp`` export fine: the graph holds their
rules as IR), and for the numpy target any primitive without a lowering (named).

A C target is not built. Given this lowering it would cost about what
:mod:`symgrad.backend.numpy_source` did plus loops: the fused plan of
:mod:`symgrad.backend.numba.fusion` already gives loops over scalars; a C printer of
that plan needs a C expression per elementwise primitive (libm names nearly all of
them), explicit loops for reductions, matmul and the structural primitives
(index arithmetic the ``element`` facets already write as text), LAPACK calls for
the linear algebra, a ``static double*`` ABI with shapes as arguments, and a build
step (a compiler on the user's machine, or ``cffi``/``ctypes`` around it): about a
thousand lines and a compiler in CI, which is why it waits for a user who needs it.

    >>> import numpy as np, symgrad as sg, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "grad_f.py")
    >>> f = lambda x: np.sum(np.sin(x) ** 2)
    >>> str(sg.export(sg.grad(f, backend="numpy"), (np.ones(3),), path, target="numpy"))[-9:]
    'grad_f.py'
"""

from __future__ import annotations

import datetime
import importlib
import inspect
import keyword
import os
import re
import secrets
import sys
import tempfile
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..backend import entry_source, numpy_source
from ..backend.numba.standalone import kernel_text
from ..backend.numpy_source import literal
from ..backend.standalone import Copier
from ..core.ir import Graph
from ..core.pytree import Tree, flatten, is_namedtuple, paths, unflatten
from ..core.version import __version__
from ..eager.tensor import Tensor
from .api import jit
from .signature import Signature

TARGETS = ("numba", "numpy")
#: tolerances of the check at export time, per dtype of an output: (rtol, atol relative to
#: the output's largest magnitude). Kernels and the interpreter differ in summation order
#: and by the vectorized math's ulp, far below these
TOLERANCE = {"float64": (1e-9, 1e-12), "float32": (1e-4, 1e-6)}
TOLERANCE.update(complex128=TOLERANCE["float64"], complex64=TOLERANCE["float32"])
#: what an exported module may import: numpy and the standard library's math, and
#: Numba (and its llvmlite) for the Numba target
_NUMPY_ROOTS = frozenset({"numpy", "math", "itertools", "functools"})
_NUMBA_ROOTS = _NUMPY_ROOTS | {"numba", "llvmlite"}


class ExportError(RuntimeError):
    """The exported module disagreed with symgrad on the example arguments."""


def export(fn: Callable, example_args: Sequence[Any], path: str | os.PathLike,
           target: str = "numba", *, name: str | None = None,
           description: str | None = None) -> Path:
    """Write ``fn``'s kernel for arguments shaped like ``example_args`` as a standalone
    module at ``path`` (see the module docstring); returns the path.

    ``name`` is the entry function's name (default: ``grad_f`` for ``sg.grad(f)``,
    ``f`` for ``sg.jit(f)`` and plain functions); ``description`` replaces the
    header's account of what it computes (e.g. ``"Hessian of f"``, which the
    transformations that build one from ``jit`` cannot say themselves)."""
    if target not in TARGETS:
        hint = " (a C target is not built: see symgrad.transforms.export's docstring)" \
            if str(target).lower() == "c" else ""
        raise ValueError(f"target must be one of {TARGETS}, not {target!r}{hint}")
    if not callable(fn):
        raise TypeError(f"export needs a function, got {type(fn).__name__}")
    if not isinstance(example_args, (tuple, list)):
        raise TypeError("example_args is the tuple of positional arguments, e.g. (x,) for "
                        f"f(x); got a {type(example_args).__name__}")
    path = Path(path)
    if path.suffix != ".py" or not path.stem.isidentifier() or keyword.iskeyword(path.stem):
        raise ValueError(f"path must name a Python module (identifier.py), not {path.name!r}")
    if _attr(fn, "static_argnums", ()):
        raise TypeError("export takes no static arguments (static_argnums): bake them in, "
                        "e.g. sg.grad(functools.partial(f, n=3)), and export that")
    args = tuple(example_args)
    names = _parameter_names(fn, len(args))
    leaves, trees, leaf_names = _flat_arguments(args, names)

    reference = fn(*args)  # symgrad's own result, the one the module must reproduce
    ref_leaves, out_tree = flatten(reference)
    _check_out_tree(out_tree)
    graph = _graph(fn, args, trees, leaves, leaf_names)
    if len(graph.inputs) != len(leaves) or len(graph.outputs) != len(ref_leaves):
        raise ExportError(f"the traced graph takes {len(graph.inputs)} inputs and has "
                          f"{len(graph.outputs)} outputs, but {_title(fn)} takes {len(leaves)} "
                          f"arrays and numbers and returned {len(ref_leaves)}; cannot export it")

    # the kernel's own avals: a differentiated integer argument is float64 there
    expected = [(tuple(v.shape), str(np.dtype(v.dtype))) for v in graph.inputs]
    # the description goes into the module's docstring and comments, which the check
    # executes: one line, no quote or backslash that could end them (never user code)
    what = " ".join((description or _describe(fn, names)).split())
    what = what.replace("\\", "/").replace('"', "'")
    entry = name or _entry_name(fn)
    if not entry.isidentifier() or keyword.iskeyword(entry):
        raise ValueError(f"name must be a Python identifier, not {entry!r}")
    kernel = f"_{entry}_kernel"
    module = numpy_source.Module(Copier(_NUMBA_ROOTS if target == "numba" else _NUMPY_ROOTS))
    if target == "numba":
        helpers, function = kernel_text(graph, kernel, what, module.copier)
    else:
        helpers, function = "", _numpy_kernel(graph, kernel, module)
    consts = [literal(complex(value) if value.dtype.kind == "c" else float(value))
              if value.ndim == 0 and target == "numba" else module.constant(value)
              for _, value in graph.consts]
    checks = module.copier.reference(entry_source.check_input, "check_input", "export")
    owned = module.copier.reference(entry_source.owned_output, "owned_output", "export")
    signature = ", ".join(f"{n}: {_aval_text(a)}" for n, a in zip(leaf_names, expected))
    entry_text = entry_source.entry_text(entry, kernel, names, trees, leaf_names, expected,
                                         graph, out_tree, consts, checks, owned, signature,
                                         what, target)
    parts = [module.copier.text(), "\n".join(module.constants), helpers,
             *module.functions, function, entry_text, f"__all__ = [{entry!r}]\n"]
    code = "\n\n\n".join(p.strip("\n") for p in parts if p.strip()) + "\n"
    entry_source.require_standalone(code)

    path.parent.mkdir(parents=True, exist_ok=True)
    # a new file beside path (the rename is then atomic), with the user's permissions
    tmp = str(path.parent / f".{path.stem}-{os.getpid()}-{secrets.token_hex(4)}.py")
    try:
        text = _header(what, entry, signature, out_tree, graph, target, None) + code
        with open(tmp, "x") as file:
            file.write(text)
        got = _run(tmp, text, entry, args, target)
        diffs = _compare(got, ref_leaves, graph, what)
        text = _header(what, entry, signature, out_tree, graph, target, diffs) + code
        Path(tmp).write_text(text)  # the same code, the header now says how it was checked
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


# ---------------------------------------------------------------------------
# arguments and what the function is


def _title(fn: Callable) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _parameter_names(fn: Callable, n: int) -> list[str]:
    """The names of the first ``n`` positional parameters of ``fn`` (``arg<k>`` where
    it has none, or they are not identifiers)."""
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = params[:n] + [f"arg{k}" for k in range(len(params), n)]
    fixed = [x if x.isidentifier() and not keyword.iskeyword(x) and not x.startswith("_")
             else f"arg{k}" for k, x in enumerate(names)]
    return fixed


def _refuse(x: Any, what: str) -> None:
    if isinstance(x, Tensor):
        raise TypeError(f"{what} is a symgrad Tensor: export takes numpy arrays and numbers "
                        "(pass t.detach().numpy()), and exports a function of arrays, not "
                        "a recorded Tensor graph")
    if type(x).__module__.split(".")[0] == "dask":
        raise TypeError(f"{what} is a Dask array: an exported module runs on numpy arrays "
                        "in memory; export with a numpy example of one chunk's shape")


def _flat_arguments(args: tuple, names: list[str]) -> tuple[list, list, list[str]]:
    """The leaves of the arguments, each argument's structure (None: a leaf) and a name
    per leaf. Refuses what an exported module cannot take."""
    leaves: list[Any] = []
    trees: list[Tree | None] = []
    leaf_names: list[str] = []
    for a, n in zip(args, names):
        _refuse(a, f"argument {n}")
        if isinstance(a, (dict, tuple, list)):
            if is_namedtuple(a):
                raise TypeError(f"argument {n} is a namedtuple: export takes arrays, numbers "
                                "and tuples, lists and dicts of them; pass tuple(...)")
            ls, tree = flatten(a)
            if not any(isinstance(x, np.ndarray) for x in ls) and not isinstance(a, dict):
                raise TypeError(f"argument {n} is a {type(a).__name__} of numbers, which "
                                "symgrad takes as an array or a static value: pass "
                                "np.array(...)")
            _check_in_tree(tree, n)
            for x in ls:
                _refuse(x, f"a leaf of argument {n}")
            leaves += ls
            leaf_names += paths(tree, n)
            trees.append(tree)
        else:
            leaves.append(a)
            leaf_names.append(n)
            trees.append(None)
    for x, n in zip(leaves, leaf_names):
        _aval_of(x, n)
    # the entry assigns each leaf to its name: a pytree's leaf must not take the name of a
    # parameter (params_w for a dict params beside a parameter params_w) or another leaf
    unique: list[str] = []
    k = 0
    for tree in trees:
        for _ in range(1 if tree is None else tree.num_leaves):
            n = leaf_names[k]
            while n in unique or (tree is not None and n in names):
                n += "_"
            unique.append(n)
            k += 1
    return leaves, trees, unique


def _aval_of(x: Any, what: str = "") -> tuple[tuple[int, ...], str]:
    """(shape, dtype) of an argument as the kernel takes it; refuses other values."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(
            x, (np.ndarray, np.floating, np.integer, np.complexfloating, float, int, complex)):
        raise TypeError(f"{what or 'an argument'} is a {type(x).__name__}: export takes numpy "
                        "arrays and numbers (float, int, complex) as arguments; bake other "
                        "values in with functools.partial or a lambda")
    array = np.asarray(x)
    if array.dtype.kind in "iu":
        if array.dtype != np.int64 and isinstance(x, np.ndarray):
            raise TypeError(f"{what} is a {array.dtype} array; symgrad computes integers in "
                            "int64: pass x.astype(np.int64) or x.astype(np.float64)")
        return array.shape, "int64"
    if array.dtype not in (np.float64, np.float32, np.complex128, np.complex64, np.bool_):
        raise TypeError(f"{what} has dtype {array.dtype}: export takes float64, float32, "
                        "complex128, complex64, bool and int64 arrays")
    return array.shape, str(array.dtype)


def _check_in_tree(tree: Tree, what: str) -> None:
    if tree.kind == "namedtuple":
        raise TypeError(f"{what} holds a namedtuple: pass tuples, lists and dicts")
    if tree.kind == "none":
        raise TypeError(f"{what} holds None: pass arrays and numbers only")
    if tree.kind == "dict" and not all(isinstance(k, str) for k in tree.meta):
        raise TypeError(f"{what} is a dict with keys that are not strings")
    for child in tree.children:
        _check_in_tree(child, what)


def _check_out_tree(tree: Tree) -> None:
    if tree.kind == "namedtuple":
        raise TypeError("the function returns a namedtuple, which an exported module would "
                        "have to define: return a tuple or a dict")
    if tree.kind == "dict" and not all(isinstance(k, (str, int)) for k in tree.meta):
        raise TypeError("the function returns a dict with keys that are not strings")
    for child in tree.children:
        _check_out_tree(child)


def _graph(fn: Callable, args: tuple, trees: list, leaves: list, leaf_names: list[str]) -> Graph:
    """The optimized graph that runs ``fn(*args)``: a transformed function's own (its
    public ``graph``, whose inputs are the leaves of the arguments and outputs the leaves
    of the result), else ``fn`` traced inside ``jit`` (a transformed function called
    there inlines its derived graph), on the interpreter."""
    own = getattr(fn, "graph", None)
    if callable(own) and _attr(fn, "name", None) in ("grad", "value_and_grad", "jit") \
            and not _attr(fn, "has_aux", False):
        graph = own(*args)
        if len(graph.inputs) == len(leaves) and all(
                v.shape == np.shape(x) for v, x in zip(graph.inputs, leaves)):
            return graph

    def rebuild(flat: tuple) -> list:
        it = iter(flat)
        return [next(it) if tree is None else unflatten(tree, [next(it) for _ in
                                                               range(tree.num_leaves)])
                for tree in trees]

    def flat(*xs: Any) -> Any:
        return fn(*rebuild(xs))

    flat.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in leaf_names])
    flat.__name__ = flat.__qualname__ = _entry_name(fn, plain=True)
    flat.fun = fn  # type: ignore[attr-defined] -- what symgrad.transforms.captured guards
    return jit(flat, backend="numpy").graph(*leaves)


def _attr(fn: Callable, name: str, default: Any) -> Any:
    """What a transformed function's signature says (its ``name`` is the transformation:
    grad, value_and_grad, jit, vjp); ``default`` for a plain function."""
    sig = getattr(fn, "signature", None)
    return getattr(sig, name, default) if isinstance(sig, Signature) else default


def _entry_name(fn: Callable, plain: bool = False) -> str:
    base = getattr(_attr(fn, "fun", fn), "__name__", None) or _title(fn)
    base = re.sub(r"\W", "_", base).strip("_") or "fn"
    base = "fn" if base == "lambda" else base
    base = base if base.isidentifier() else f"fn_{base}"
    mode = _attr(fn, "name", None)
    if plain or mode not in ("grad", "value_and_grad"):
        return base
    return f"{mode}_{base}"


def _describe(fn: Callable, names: list[str]) -> str:
    """What ``fn`` computes, from the transformation its signature says it is (a plain
    function has none)."""
    mode, inner = _attr(fn, "name", None), _attr(fn, "fun", None)
    base = getattr(inner, "__name__", None) or _title(fn)
    argnums = _attr(fn, "argnums", ())
    wrt = ", ".join(names[i % len(names)] for i in argnums) if names else ""
    if mode == "grad":
        return f"gradient of {base} with respect to {wrt}"
    if mode == "value_and_grad":
        return f"value and gradient of {base} with respect to {wrt}"
    if mode == "jit":
        if getattr(inner, "fun", None) is not None:  # jacfwd/jacrev/hessian build on jit
            return (f"a derivative of {base} built from symgrad's transformations "
                    "(jacobian, hessian...), compiled as one sg.jit")
        return f"value of {base} (sg.jit)"
    return f"value of {base}"


def _aval_text(aval: tuple[tuple[int, ...], str]) -> str:
    shape, dtype = aval
    return f"{dtype}[{', '.join(map(str, shape))}]"


# ---------------------------------------------------------------------------
# the module's parts


def _numpy_kernel(graph: Graph, kernel: str, module: numpy_source.Module) -> str:
    try:
        return module.function(graph, kernel, consts_as_arguments=True)
    except numpy_source.Unlowerable as e:
        raise NotImplementedError(f"export(target='numpy'): {e}") from None


# ---------------------------------------------------------------------------
# header, run, compare


def _header(what: str, entry: str, signature: str, out_tree: Tree, graph: Graph,
            target: str, diffs: list | None) -> str:
    outs = entry_source.rebuild_text(out_tree, iter(str(a.aval) for a in graph.outputs))
    needs = ("numpy only" if target == "numpy" else
             "numpy and numba (the kernel compiles on the first call and is cached "
             "beside this file)")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if diffs is None:
        checked = "Not checked yet (this text is replaced once it is)."
    else:
        worst_abs = max((d[1] for d in diffs), default=0.0)
        worst_rel = max((d[2] for d in diffs), default=0.0)
        checked = (f"Checked at export: {entry} on the example arguments against symgrad's "
                   f"own result, output by output: max abs difference {worst_abs:.3g}, max "
                   f"rel difference {worst_rel:.3g} (tolerance per output: rtol "
                   f"{TOLERANCE['float64'][0]:g}, atol {TOLERANCE['float64'][1]:g} times its "
                   "largest magnitude, for float64; float32 "
                   f"{TOLERANCE['float32'][0]:g}/{TOLERANCE['float32'][1]:g}; complex as "
                   "its real dtype; exact for integers and booleans).")
    n = len(graph.consts)
    held = (f"\nIt holds {n} constant{'s' if n > 1 else ''} that the function read from outside "
            "its arguments (captured arrays and numbers, a pullback's point), as they were "
            "at export." if n else "")
    text = f'''"""{what[:1].upper() + what[1:]}: a standalone module exported by symgrad.

Entry: {entry}(...), for {signature};
returns {outs}. Other shapes or dtypes raise ValueError: export
again from symgrad for them.

Target: {target} (needs {needs}); symgrad is not needed.
Exported by symgrad {__version__} on {when}.
{checked}{held}
Generated: edit the function in symgrad and export again rather than this file.
"""
'''
    return _wrap(text)


def _wrap(text: str, width: int = 96) -> str:
    out = []
    for line in text.splitlines():
        while len(line) > width and " " in line[:width]:
            cut = line.rfind(" ", 0, width)
            out.append(line[:cut])
            line = line[cut + 1:]
        out.append(line)
    return "\n".join(out) + "\n\n"


def _run(tmp: str, text: str, entry: str, args: tuple, target: str) -> list:
    """The module's entry on ``args``, executed from ``text`` (as ``tmp``, the file it
    is in) with nothing written beside it: no bytecode, Numba's cache elsewhere."""
    name = f"_symgrad_export_check_{os.getpid()}_{abs(hash(tmp))}"
    module = types.ModuleType(name)
    module.__file__ = tmp
    code = compile(text, tmp, "exec")
    cache = tempfile.TemporaryDirectory(prefix="symgrad-export-") if target == "numba" else None
    sys.modules[name] = module
    try:
        if cache is not None:
            config = importlib.import_module("numba.core.config")
            old = config.CACHE_DIR
            config.CACHE_DIR = cache.name
        try:
            exec(code, module.__dict__)  # noqa: S102 -- the module we just generated
            result = getattr(module, entry)(*args)
        finally:
            if cache is not None:
                config.CACHE_DIR = old
    finally:
        sys.modules.pop(name, None)
        if cache is not None:
            cache.cleanup()
    return flatten(result)[0]


def _compare(got: list, want: list, graph: Graph, what: str) -> list:
    """(output, max abs difference, max rel difference) per output; ExportError where an
    output differs beyond :data:`TOLERANCE` (or in shape, dtype, nan or inf)."""
    if len(got) != len(want):
        raise ExportError(f"the exported module returned {len(got)} values, symgrad {len(want)}")
    diffs = []
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            raise ExportError(f"output {k} of {what}: the exported module gives "
                              f"{g.dtype}{list(g.shape)}, symgrad {w.dtype}{list(w.shape)}")
        if g.dtype.kind not in "fc":
            if not np.array_equal(g, w):
                raise ExportError(f"output {k} of {what} differs from symgrad's")
            diffs.append((k, 0.0, 0.0))
            continue
        rtol, atol = TOLERANCE.get(str(g.dtype), TOLERANCE["float32"])
        finite = np.isfinite(w)
        if not np.array_equal(np.isnan(g), np.isnan(w)) or not np.array_equal(
                g[~finite & ~np.isnan(w)], w[~finite & ~np.isnan(w)]):
            raise ExportError(f"output {k} of {what}: nan or inf where symgrad's has none "
                              "(or the other way)")
        d = np.abs(g[finite] - w[finite]) if finite.any() else np.zeros(1)
        scale = max(1.0, float(np.max(np.abs(w[finite])))) if finite.any() else 1.0
        mag = np.abs(w[finite]) if finite.any() else np.ones(1)
        rel = float(np.max(d / np.where(mag > 0, mag, 1.0)))
        worst = float(np.max(d))
        if np.any(d > atol * scale + rtol * mag):
            raise ExportError(f"output {k} of {what}: the exported module differs from "
                              f"symgrad by up to {worst:.3g} (relative {rel:.3g}), beyond "
                              f"rtol={rtol:g}, atol={atol:g}*{scale:.3g}; nothing was written")
        diffs.append((k, worst, rel))
    return diffs


__all__ = ["ExportError", "TARGETS", "export"]
