"""The package's import graph: no cycle, and every import points down a layer.

The graph is built from the source (``ast`` over ``symgrad/**.py``), counting
every import: those inside functions and those under ``if TYPE_CHECKING:`` too (a
cycle of type annotations is a cycle of meaning all the same, and the day one of
them is needed at run time it breaks the import). A package's ``__init__`` importing
its own modules counts as well: importing any module of a package runs its
``__init__`` first. The layers are those of the ``symgrad`` package docstring:

    core  <-  prims  <-  numpy_api, passes
    core, prims  <-  backend     (its lowering tables are keyed by primitives)
    passes, backend  <-  transforms.pipeline  <-  eager, distributed, transforms.*, cli, ...

Inside the front-end package ``transforms/`` each module is a layer of its own:
pipeline, captured  <-  calls  <-  signature  <-  api  <-  vectorize  <-  derivatives.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent / "symgrad"

#: what each layer may import (itself included)
ALLOWED = {
    "core": {"core"},
    "prims": {"core", "prims"},
    "numpy_api": {"core", "prims", "numpy_api"},
    "passes": {"core", "prims", "passes"},
    "backend": {"core", "prims", "backend"},  # lowering tables are keyed by primitives
    # the front-end package, module by module (its __init__ is a docstring)
    "transforms": set(),
    "transforms.pipeline": {"core", "passes", "backend"},
    "transforms.captured_code": set(),  # the names a function's bytecode reads
    "transforms.guards": {"core"},  # how one read is got again and compared
    "transforms.captured": {"core", "transforms.captured_code",  # what it reads from outside
                            "transforms.guards"},
    "transforms.calls": {"core", "prims", "backend", "transforms.pipeline",
                         "transforms.guards"},
    # one class per transformation (prims: custom_jvp's linearized primal, JAX's)
    "transforms.signature": {"core", "prims", "transforms.calls"},
    "transforms.api": {"core", "prims", "numpy_api", "backend", "transforms.pipeline",
                       "transforms.captured", "transforms.calls", "transforms.signature",
                       "distributed"},
    "transforms.vectorize": {"core", "numpy_api", "passes", "transforms.pipeline",
                             "transforms.api"},
    "transforms.sparse_derivatives": {"core", "passes", "transforms.api",
                                      "transforms.vectorize"},
    "transforms.derivatives": {"core", "transforms.api", "transforms.captured",
                               "transforms.signature", "transforms.sparse_derivatives",
                               "transforms.vectorize"},
    # sg.export: a transformed function's kernel as a standalone module
    "transforms.export": {"core", "backend", "transforms.api", "transforms.signature", "eager"},
    # gradients over Dask arrays: api hands such calls here (importing it inside a
    # function, so that Dask loads only then) with the call's Signature; never api
    "distributed": {"core", "prims", "numpy_api", "passes", "backend", "transforms.pipeline",
                    "transforms.captured", "transforms.calls", "transforms.signature"},
    "eager": {"core", "prims", "numpy_api", "transforms.pipeline", "eager"},
    "ops": {"numpy_api"},
    "scipy": {"numpy_api", "scipy"},  # sg.scipy.special/stats: numpy_api's, by scipy's names
    "autograd": {"core", "eager"},
    "nn": {"core", "numpy_api", "eager", "nn"},  # torch.nn over the eager Tensor
    "optim": {"eager"},  # torch.optim over the eager Tensor
    "utils": {"eager"},  # torch.utils.data over the eager Tensor
    "func": {"eager", "nn", "func"},  # torch.func over the eager Tensor and nn.Module
    # sg.vmap: JAX's (transforms.vectorize) on arrays, torch.func's on Tensors, per call
    "either_vmap": {"core", "eager", "func", "transforms.vectorize"},
    # tools over the front ends
    "testing": {"core", "numpy_api", "transforms.api", "transforms.calls",
                "transforms.derivatives"},
    # (backend: --jit reports the compiles still in flight, backend.numba.stats.compile_note)
    "cli": {"core", "prims", "numpy_api", "transforms.api", "transforms.derivatives", "testing",
            "backend", "cli"},
}
#: imported only inside functions, so that ``import symgrad`` and ``symgrad --help`` stay fast
HEAVY = {"numba", "sympy", "graphviz", "platformdirs", "mpmath"}


def _modules() -> dict[str, Path]:
    mods = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = path
    return mods


MODULES = _modules()


def _imports(name: str) -> list[tuple[str, bool]]:
    """(imported module, at module level) for each import in ``name``'s source."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    top = {id(n) for n in tree.body}  # (not an import under `if TYPE_CHECKING:`)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        found += [(t, id(node) in top) for t in targets]
    return found


def _resolve(target: str) -> str | None:
    """The symgrad module an import names (a name inside a module: that module)."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        for target, _ in _imports(m):
            t = _resolve(target) if target.startswith("symgrad") else None
            if t is not None and t != m:
                edges[m].add(t)  # a package's __init__ importing its modules counts too
    return edges


GRAPH = _graph()


def _layer(module: str) -> str:
    """The layer of a module: its folder under symgrad/, or, inside the front-end
    package (``transforms``), the module itself (``transforms.api``): the front
    ends are layered among themselves."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "transforms":
        return ".".join(parts[1:3])
    return parts[1] if len(parts) > 1 else "symgrad"


def test_the_graph_is_built_from_every_module():
    assert {"symgrad.core.ir", "symgrad.prims.elementwise", "symgrad.transforms.pipeline",
            "symgrad.eager.tensor", "symgrad.cli.command"} <= set(GRAPH)
    assert {_layer(m) for m in MODULES} - {"symgrad", "__main__"} <= set(ALLOWED)
    # imports under `if TYPE_CHECKING:` count (cli.report imports cli.checks only there)
    assert "symgrad.cli.checks" in GRAPH["symgrad.cli.report"]


#: the modules at the top of the package beside __init__ and __main__ (issue 30: everything
#: else lives in a layer folder): ``sg.testing`` (as ``np.testing``), ``symgrad.ops``
#: (numpy's API under the name earlier code imported) and ``symgrad.either_vmap``
#: (``sg.vmap`` over both front ends: JAX's on arrays, torch.func's on Tensors)
TOP_LEVEL = {"symgrad", "symgrad.__main__", "symgrad.ops", "symgrad.testing",
             "symgrad.either_vmap"}


def test_only_the_named_modules_sit_at_the_top_of_the_package():
    assert {m for m, path in MODULES.items() if path.parent == ROOT} == TOP_LEVEL


def test_there_is_no_import_cycle():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) in ALLOWED))
def test_imports_point_down_the_layers(module):
    allowed = ALLOWED[_layer(module)] | {_layer(module)}
    wrong = sorted(t for t in GRAPH[module] if _layer(t) not in allowed)
    assert not wrong, f"{module} ({_layer(module)}) imports {wrong}; it may import {allowed}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_nothing_imports_the_package_it_belongs_to(module):
    """Import the module that defines a name, not the package __init__ that re-exports
    it: an __init__ imports its modules, so that import would be a hidden cycle."""
    packages = [t for t in GRAPH[module]
                if MODULES[t].name == "__init__.py" and module.startswith(t + ".")]
    assert not packages, f"{module} imports its own package {packages}"


#: the modules whose work is SymPy's: they import it at their top, and are imported
#: only inside the functions that print or check formulas
SYMPY_MODULES = {"symgrad.core.sympy_bridge", "symgrad.core.sympy_simplify",
                 "symgrad.cli.notation", "symgrad.cli.sums", "symgrad.cli.textbook",
                 "symgrad.cli.textbook_forms"}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_heavy_dependencies_are_imported_when_needed(module):
    """numba, sympy and graphviz load inside the functions that need them; only the
    SymPy modules (the bridge and the CLI's formula printers) import SymPy at their top,
    and nothing but another of them imports one at its top; only vecmath (the math
    that compiled kernels import, its float32 twin vecmath32, npymath, numpy's complex
    functions and cbrt for kernels, and blas, numpy's gemm for kernels, whose symbols must
    be registered before a cached kernel is linked) imports Numba at its top, and nothing
    else in symgrad imports vecmath."""
    top = {t.partition(".")[0] for t, at_top in _imports(module) if at_top}
    heavy = top & HEAVY - ({"sympy"} if module in SYMPY_MODULES else set())
    kernel_math = ("symgrad.backend.vecmath", "symgrad.backend.vecmath32",
                   "symgrad.backend.npymath", "symgrad.backend.blas")
    heavy -= {"numba"} if module in kernel_math else set()
    assert not heavy, f"{module} imports {heavy} when it is imported"
    eager = {_resolve(t) for t, at_top in _imports(module) if at_top and t.startswith("symgrad")}
    assert not eager & SYMPY_MODULES or module in SYMPY_MODULES
    # sg.export copies vecmath's functions into an exported Numba module: it imports
    # vecmath inside the function that copies them (target="numba", which needs Numba)
    assert "symgrad.backend.vecmath" not in {
        _resolve(t) for t, at_top in _imports(module)
        if (at_top or module != "symgrad.backend.numba.standalone")
        and module != "symgrad.backend.vecmath32"}  # (float32 math: vecmath's HAS_FMA)
