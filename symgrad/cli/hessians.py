"""``symgrad hessian`` and ``symgrad grad --jacobian``: the second derivatives of a
scalar function, and the first derivatives of a vector function, block by block.

    symgrad hessian "sum(sin(x)*y)" --shape x=3 --at x=0.1,0.2,0.3 --at y=2 --check
    symgrad grad "sin(x)*y" --shape x=3 --jacobian --at x=0.1,0.2,0.3 --at y=2

Both print what ``grad`` prints for a gradient (:mod:`.command`), per block of the
matrix (:class:`.report.Block`): ``∂²f/∂x∂y`` for each pair of ``--wrt`` variables, of
shape ``x.shape + y.shape``, as ``sg.hessian(f, argnums=(...))`` returns them;
``∂f/∂x`` of shape ``f.shape + x.shape`` per variable, as ``sg.jacrev``:

- the formulas symgrad derives: the optimized graph of ``sg.hessian``
  (``sg.jacrev``) as SymPy, simplified within the ``--sympy-seconds`` budget, one
  pattern per block where every element reads the same in its indices
  (:func:`symgrad.core.sympy_bridge.block_pattern`, a ``Piecewise`` where the diagonal
  differs), else the elements listed (:mod:`.symbolic`);
- the values at ``--at``;
- ``--check``: SymPy's ``hessian`` (``jacobian``) of the traced function at 50
  digits, and finite differences of symgrad's gradient (of the function) one row
  of each block at a time, with grad's tolerances and its one verdict rule
  (:mod:`.checks`).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from .checks import FDCheck, fd_check, sympy_check
from .limits import FD_LIMIT, FD_SAMPLE, MAX_ELEMENTS, SYMPY_SECONDS
from .problem import CLIError, Problem, prepared, refuse_what_would_not_fit
from .report import Block, Report

#: what a command's blocks are called, in messages
NAMES = {"hessian": "Hessian", "jacobian": "Jacobian"}


def run_hessian(args: argparse.Namespace) -> int:
    """``symgrad hessian``: the Hessian of a scalar function."""
    return _run(args, "hessian")


def run_jacobian(args: argparse.Namespace) -> int:
    """``symgrad grad --jacobian``: the Jacobian of a function (of any output shape)."""
    if args.gradient is not None:
        raise CLIError("--jacobian and --gradient exclude each other: the Jacobian has a "
                       "row per output element, --gradient weights them into one gradient")
    return _run(args, "jacobian")


def _run(args: argparse.Namespace, kind: str) -> int:
    p, at, sample, graph = prepared(args, "derivative")
    out = graph.outputs[0]
    if kind == "hessian" and out.shape != ():
        raise CLIError(f"hessian is for a scalar function, and {p.label} returns {out.aval}; "
                       "for the first derivatives of a vector function use symgrad grad "
                       "--jacobian", 1)
    blocks = _blocks(p, kind, out.shape)
    size = sum(_size(b.shape) for b in blocks)
    if size > MAX_ELEMENTS:
        raise CLIError(f"the {NAMES[kind]} would have {size} elements; at most {MAX_ELEMENTS}: "
                       "use a smaller --shape or fewer --wrt variables")
    # sg.hessian or sg.jacrev: values on the chosen backend, formulas from the
    # interpreter's twin (the same optimized graph, and no Numba compile for it)
    derive = _transform(p, kind, "numba" if args.jit else "numpy")
    twin = derive if not args.jit else _transform(p, kind, "numpy")
    report = Report(p, args.format, None, kind)
    value = matrices = None
    fd: list[FDCheck] = []
    if at is not None:
        refuse_what_would_not_fit(p, derive, at, None, args.jit, f"the value and {NAMES[kind]}")
        value, matrices = _values(p, kind, graph, derive, at)
        if args.check:
            fd = [_fd_block(p, kind, at, b, m, args.jit) for b, m in zip(blocks, matrices)]
    seconds = SYMPY_SECONDS if args.sympy_seconds is None else args.sympy_seconds
    from .symbolic import run_sympy_blocks

    sympy = run_sympy_blocks(p, kind, blocks, graph, _graph(twin, sample), at, args.check,
                             "sympy" in args.show, report, seconds, expand=args.expand)
    if sympy.get("formulas") is not None:
        report.add(sympy.get("formulas"))
    else:
        report.block_formulas([(b, ("omitted", sympy.why("formulas"))) for b in blocks])
    if at is not None:
        assert matrices is not None
        report.matrices(at, value, list(zip(blocks, matrices)))
    failed = False
    if args.check:
        assert matrices is not None
        oracle = sympy.get("check")  # per block: SymPy's values, and where they are zoo
        why = "" if oracle is not None else sympy.why("check")
        failed = report.check(
            [(b.key, sympy_check(m, None if oracle is None else oracle[k], why), fd[k])
             for k, (b, m) in enumerate(zip(blocks, matrices))],
            {b.key: report.label(b) for b in blocks})
    for what in args.show:
        if what != "sympy":
            report.show(what, f"{graph}\n{_graph(derive, sample)}" if what == "ir"
                        else _source(derive, sample))
        elif sympy.get("sympy") is not None:
            report.add(sympy.get("sympy"))
        else:
            report.show("sympy", f"omitted: {sympy.why('sympy')}")
    report.emit()
    return 1 if failed else 0


def _blocks(p: Problem, kind: str, out_shape: tuple[int, ...]) -> list[Block]:
    """The blocks, in the order of the outputs of ``sg.hessian`` (``sg.jacrev``) with
    ``argnums`` the --wrt variables: row by row."""
    if kind == "jacobian":
        return [Block(None, n, tuple(out_shape), p.shapes[n]) for n in p.wrt]
    return [Block(a, b, p.shapes[a], p.shapes[b]) for a in p.wrt for b in p.wrt]


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _transform(p: Problem, kind: str, backend: str) -> Any:
    from ..transforms.derivatives import hessian, jacrev

    make = hessian if kind == "hessian" else jacrev
    return make(p.fun, argnums=p.argnums, backend=backend)


def _graph(derive: Any, sample: list[Any]) -> Any:
    try:
        return derive.graph(*sample)
    except Exception as e:  # noqa: BLE001  symgrad's messages say what is wrong
        raise CLIError(f"{type(e).__name__}: {e}", 1) from None


def _source(derive: Any, sample: list[Any]) -> str:
    try:
        return derive.source(*sample)
    except Exception as e:  # noqa: BLE001
        raise CLIError(f"{type(e).__name__}: {e}", 1) from None


def _values(p: Problem, kind: str, graph: Any, derive: Any, at: list[Any]) -> tuple[Any, list]:
    """The function's value at ``at`` (the interpreter, on its traced graph) and the
    blocks (``derive``), flat in the order of :func:`_blocks`; ``-0.0`` reads ``0.0``."""
    import numpy as np

    from ..core.interpreter import interpret

    try:
        value = interpret(graph, *at)[0]
        result = derive(*at)
    except Exception as e:  # noqa: BLE001
        raise CLIError(f"{type(e).__name__}: {e}", 1) from None
    rows = result if kind == "hessian" else (result,)
    return value, [np.asarray(m, dtype=float) + 0.0 for row in rows for m in row]


# ---------------------------------------------------------------------------
# finite differences, one row of a block at a time


def _fd_block(p: Problem, kind: str, at: list[Any], b: Block, matrix: Any, jit: bool) -> FDCheck:
    """Central differences of the block's rows against ``matrix``: row ``r`` of a
    Hessian block ``∂²f/∂x∂y`` is the derivative in ``y`` of element ``r`` of symgrad's
    gradient in ``x``; of a Jacobian, of element ``r`` of the function. Each row is
    :func:`.checks.fd_check` of ``sum(g * e_r)``, with its steps, judgement and
    tolerance; the rows share the evaluations at each moved point (:class:`_Remembered`).
    Every row of a block of up to ``FD_LIMIT`` elements, above that a fixed sample of
    rows (at least ``FD_SAMPLE``); :func:`.checks.fd_check` samples a long row."""
    import numpy as np

    if kind == "hessian":
        from ..transforms.api import grad

        fun = grad(p.fun, argnums=p.names.index(b.row), backend="numba" if jit else "numpy")
    else:
        fun = p.fun
    q = replace(p, fun=_Remembered(fun), wrt=(b.col,))
    n_rows, n_cols = _size(b.row_shape), _size(b.col_shape)
    picked: Any = range(n_rows)
    if n_rows * n_cols > FD_LIMIT:  # as for a gradient: all up to FD_LIMIT, else a sample
        count = min(n_rows, max(FD_SAMPLE, FD_LIMIT // n_cols))
        picked = np.sort(np.random.default_rng(0).choice(n_rows, count, replace=False))
    checks = []
    for k in picked:
        r = np.unravel_index(int(k), b.row_shape) if b.row_shape else ()
        e = np.zeros(b.row_shape)
        e[r] = 1.0
        checks.append(fd_check(q, at, 0, matrix[r], e))
    from ..testing import not_finite

    return replace(_combined(checks, n_rows * n_cols), not_finite=not_finite(matrix))


class _Remembered:
    """``fun``, remembering its value at each point: the rows of a block are
    differenced at the same points (the steps depend on the point only)."""

    def __init__(self, fun: Any):
        self.fun, self.seen = fun, {}

    def __call__(self, *args: Any) -> Any:
        import numpy as np

        key = tuple(np.asarray(a, dtype=float).tobytes() for a in args)
        if key not in self.seen:
            self.seen[key] = self.fun(*args)
        return self.seen[key]


def _combined(checks: list[FDCheck], size: int) -> FDCheck:
    """One comparison for a block from those of its rows: a mismatch where any row is
    one; else not compared where a row could not be (calling the function a step
    away raised: every row meets the same points); else the worst error, unreliable
    where any row was."""
    from ..testing import NAN_AT_STEP

    checked = sum(c.checked for c in checks)
    left_out = sum(c.left_out for c in checks)
    mismatched = [c.error for c in checks if c.mismatch]
    if mismatched:
        return FDCheck(max(mismatched), checked, size, left_out=left_out)
    refused = next((c for c in checks if c.error is None and c.why_not != NAN_AT_STEP), None)
    errors = [c.error for c in checks if c.error is not None]
    if refused is not None or not errors:
        why = refused.why_not if refused is not None else NAN_AT_STEP
        return FDCheck(None, checked, size, left_out=left_out, why_not=why)
    unreliable = next((c.unreliable for c in checks if c.unreliable), "")
    return FDCheck(max(errors), checked, size, unreliable, left_out)


__all__ = ["run_hessian", "run_jacobian"]
