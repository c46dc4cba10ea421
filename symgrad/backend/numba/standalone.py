"""A Numba kernel as the text of a standalone module (``sg.export``'s ``target="numba"``).

:func:`kernel_text` asks :mod:`.codegen` for the kernel of a graph, serial (no
``prange``: the module runs wherever it is copied, on however many cores), and
makes it standalone: its imports of numpy, Numba and math are recorded in a
:class:`~.standalone.Copier`, and the helpers it calls from symgrad (``vm.exp``...
of :mod:`.vecmath`, ``la.eigh_upper`` of :mod:`.lapack`) are copied there with what
they read, only those it calls, and renamed (``_vecmath_exp``).

:mod:`.vecmath` imports Numba, so it is imported only inside :func:`_helper`, which
runs for a kernel that calls it (exporting to Numba needs Numba anyway).
"""

from __future__ import annotations

import re
from typing import Any

from ...core.ir import Graph, subgraphs
from ..standalone import Copier
from .codegen import generate
from .lowering.table import IN_KERNELS, between


def kernel_text(graph: Graph, kernel: str, what: str, copier: Copier) -> tuple[str, str]:
    """The Numba kernel's text (its imports recorded in ``copier``, the helpers it calls
    copied there) and the lines that make LAPACK helpers."""
    for e in graph.eqns:
        if e.prim.host:
            raise NotImplementedError(
                f"export: {graph.name} calls a Python function (primitive {e.prim.name}, "
                "sg.pure_callback), which an exported module cannot hold: export the parts "
                "before and after it separately")
    _require_one_kernel(graph)
    source = generate(graph, kernel, what, None, parallel_min=None, pool=False)
    lines = []
    for line in source.text.splitlines():
        stripped = line.split("#")[0].strip()
        if stripped.startswith(("import ", "from ")):
            if "symgrad" not in stripped:  # symgrad's helpers are copied in below
                _imports(copier, stripped)
            continue
        lines.append(line)
    # numpy's gemm is a symbol of this process only (symgrad.backend.blas): Numba's np.dot;
    # an operand is a name, the second maybe converted (lowering.linalg.widened)
    text = re.sub(r"\bbl\.[sd]dot_tn\((\w+), (\w+(?:\.astype\(np\.\w+\))?)\)",
                  r"np.dot(np.ascontiguousarray(\1).T, np.ascontiguousarray(\2))", "\n".join(lines))
    helpers: list[str] = []
    for alias, attribute in sorted(set(re.findall(r"\b(vm32|vm|la|nm|bm)\.(\w+)", text))):
        name = _helper(copier, alias, attribute, helpers)
        text = re.sub(rf"\b{alias}\.{attribute}\b", name, text)
    return "\n".join(helpers), text


def _require_one_kernel(graph: Graph) -> None:
    """Refuse an equation that symgrad runs in Python between kernels (complex erf...:
    :func:`~.lowering.table.between`; not the FFT, which the kernel calls numpy for in an
    object-mode block): an exported Numba module is one kernel. The numpy target writes
    them as numpy calls."""
    for e in graph.eqns:
        reason = between(e)
        if reason is not None and e.prim not in IN_KERNELS:  # (the FFT: object mode)
            raise NotImplementedError(
                f"export(target='numba'): {graph.name} has a {e.prim.name} equation, which "
                f"runs in Python between kernels ({reason}); an exported Numba module is one "
                "kernel: export with target='numpy'")
        for _, sub in subgraphs(e):
            _require_one_kernel(sub)


def _imports(copier: Copier, statement: str) -> None:
    """Record an import statement of the kernel (numpy, numba, math) in ``copier``."""
    namespace: dict[str, Any] = {}
    exec(statement, namespace)  # noqa: S102 -- a statement codegen wrote: import lines only
    for local, value in namespace.items():
        if local != "__builtins__":
            copier.reference(value, local)


def _helper(copier: Copier, alias: str, attribute: str, helpers: list[str]) -> str:
    """The module-level name of ``vm.<attribute>`` (:mod:`.vecmath`) or
    ``la.<attribute>`` (:mod:`.lapack`, whose functions are made by a factory)."""
    # imported here: vecmath imports Numba, which `import symgrad` must not load
    from .. import batched, lapack, npymath, vecmath, vecmath32

    if alias in ("vm", "vm32"):
        module = vecmath if alias == "vm" else vecmath32
        return copier.reference(getattr(module, attribute), attribute, module.__name__[17:])
    if alias == "nm":  # (numpy's cbrt loop is a symbol of this process only: libm's there)
        name = "libm_cbrt" if attribute == "cbrt" else attribute
        return copier.reference(getattr(npymath, name), name, "npymath")
    module = lapack if alias == "la" else batched
    factory = getattr(module, f"_{attribute}", None)
    if factory is None:
        raise NotImplementedError(f"export: the kernel calls {alias}.{attribute}, which "
                                  "export cannot copy")
    made = copier.reference(factory, f"_{attribute}", module.__name__.rsplit(".", 1)[-1])
    name = f"_{alias}_{attribute}"
    helpers.append(f"{name} = {made}()")
    return name


__all__ = ["kernel_text"]
