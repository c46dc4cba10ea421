"""Which values of a graph run over the data's rows, and which equations may be split.

This module is pure IR (it imports no Dask). The data inputs of a graph have
their rows on axis 0; :func:`align` finds the row axis of every value by
comparing the graph with the same function traced at another row count (an
axis whose length follows the row count is the row axis; a length that
follows it in any other way, ``n - 1`` or ``4 n``, mixes rows), and
:func:`classify` says what each equation is:

- *row-wise*: its value has a row axis and each row is computed from the same
  row of its operands and from values without rows (elementwise operations,
  ``X @ w``, reductions and reshapes that keep the row axis, a value broadcast
  over the rows);
- a *row reduction*: ``sum``, ``mean``, ``prod``, ``max`` or ``min`` over the
  row axis, or a matrix product contracting the rows of two row-wise values
  (the ``X.T @ g`` of a gradient);
- *post*: no row axis (parameters, and what is computed from reductions).

Anything else that touches rows raises :class:`RowSplitError` naming the
operation. The *stage* of a row-wise value is the number of passes over the
data it waits for (data: 1; a value that reads a post value of level ``k``:
``k + 1``), the *level* of a post value the passes it needs.

:func:`for_rows` retypes a graph typed for all ``n`` rows for a chunk of ``r``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.check import check
from ..core.ir import Atom, Aval, Eqn, Graph, Literal, Primitive, Printer, Var, freeze_params
from ..prims import (
    argsort_p,
    broadcast_to_p,
    cholesky_p,
    concatenate_p,
    cond_p,
    count_p,
    cumprod_p,
    cumsum_p,
    det_p,
    eig_p,
    eigh_p,
    extremum_weights_p,
    gather_p,
    inv_p,
    loop_p,
    lstsq_p,
    matmul_p,
    max_p,
    min_p,
    pinv_p,
    prod_p,
    qr_p,
    reshape_p,
    scatter_add_p,
    scatter_along_p,
    slice_p,
    slogdet_p,
    solve_p,
    svd_p,
    take_along_p,
    transpose_p,
    unslice_p,
    while_p,
)


class RowSplitError(ValueError):
    """The function combines values of different rows in a way that cannot be split
    into chunks of rows (a sort, cumulative sum, slice or index along the rows)."""


#: the reductions whose partial results over chunks combine by the reduction itself (sums
#: and means, which a fused loop accumulates, ``prim.accumulate``, combine by summing)
_SELF_COMBINING = {prod_p: "prod", max_p: "max", min_p: "min"}
#: primitives of square matrices on the last two axes; a row axis must be a batch axis
_MATRIX = (inv_p, det_p, slogdet_p, solve_p, cholesky_p, pinv_p)


def combine(prim: Primitive) -> str | None:
    """How partial results of ``prim`` over chunks of rows combine into its result over
    all rows: ``"sum"`` (a sum, a mean: divided by the count on the driver, a matrix
    product contracting the rows), ``"prod"``, ``"max"``, ``"min"``; ``None`` if they
    do not."""
    if prim.accumulate or prim is matmul_p:
        return "sum"
    return _SELF_COMBINING.get(prim)

#: what a refused primitive does to rows, in the user's terms
_MIXES = {
    cumsum_p: "a cumulative sum along the rows (np.cumsum over axis 0) makes each row "
              "depend on the rows before it, which may be in another chunk",
    cumprod_p: "a cumulative product along the rows (np.cumprod over axis 0) makes each "
               "row depend on the rows before it, which may be in another chunk",
    argsort_p: "a sort along the rows (np.sort, np.argsort, np.median, np.quantile over "
               "axis 0) orders rows from all chunks at once",
    take_along_p: "picking rows by sorted position (np.sort, np.take_along_axis over "
                  "axis 0) reads rows from any chunk",
    scatter_along_p: "the gradient of a sort along the rows moves rows between chunks",
    slice_p: "a slice along the rows (x[1:], x[::-1], np.diff, np.roll over axis 0) pairs "
             "rows that may be in different chunks",
    unslice_p: "the gradient of a slice along the rows (x[1:], np.diff over axis 0) moves "
               "rows between chunks",
    gather_p: "indexing rows by position (x[[0, 5]], x[mask], np.take over axis 0) picks "
              "rows from any chunk",
    scatter_add_p: "the gradient of indexing rows by position moves rows between chunks",
    concatenate_p: "concatenating along the rows renumbers them across chunks",
    reshape_p: "a reshape that merges the rows with another axis (x.ravel(), "
                 "x.reshape(-1)) mixes rows",
    extremum_weights_p: "the gradient of a max or min over the rows depends on which rows "
                          "tie for it, in all chunks at once (np.max over rows splits in "
                          "sg.jit, not under grad)",
    matmul_p: "a matrix product that pairs rows with other rows (X @ X.T) mixes them",
    **dict.fromkeys((loop_p, while_p, cond_p),
                    "the row plan does not look inside a loop or branch (sg.fori_loop, "
                    "sg.scan, sg.while_loop, sg.cond) that reads values with rows; loop over "
                    "parameters only, or write the per-row work without the loop"),
    **dict.fromkeys((eigh_p, eig_p, qr_p, svd_p, lstsq_p),
                    "a decomposition of a stack of matrices along the rows is not split "
                    "into chunks (inv, det, slogdet, solve, cholesky and pinv are)"),
}

_FIX = ("Compute that part on a numpy array, or write the function so that each row is "
        "computed from its own row and from sums, means, products, maxima or minima over "
        "all rows (see 'Gradients over Dask arrays' in the README).")


def refuse(graph: Graph, eqn: Eqn, rows: Rows | None = None) -> RowSplitError:
    """The error for ``eqn``, which mixes rows, in the user's terms: when ``eqn`` is
    part of the gradient of an operation that itself mixes rows (the reversed slice
    of a cumsum's gradient), that operation is named."""
    p = Printer(graph)
    culprit, cite = eqn, ""
    o = eqn.origin
    if o is not None and o.prim in _MIXES and rows is not None and any(
            isinstance(a, Var) and id(a) in rows.axis for a in o.inputs):
        culprit, cite = o, f" (its gradient needs `{p.eqn(eqn)}`)"
    elif o is not None:
        cite = f" (in the gradient of `{p.eqn(o)}`)"
    what = _MIXES.get(culprit.prim, f"{culprit.prim.name} combines values of different rows")
    return RowSplitError(f"symgrad cannot split `{p.eqn(culprit)}`{cite} over chunks of rows: "
                         f"{what}. {_FIX}")


# ---------------------------------------------------------------------------
# alignment: which axes are rows


@dataclass(frozen=True)
class Rows:
    """The row axes of a graph traced at ``n`` rows.

    ``axis``: id of a value -> its row axis (values without one are absent);
    ``sizes``: id of an equation -> the parameter paths (``("shape", 0)``) that
    hold the row count; ``odd``: id of an equation whose output or parameters
    depend on the row count otherwise (``n - 1`` rows, ``(n, n)``).
    """

    n: int
    axis: dict[int, int]
    sizes: dict[int, tuple[tuple[Any, ...], ...]]
    odd: frozenset[int]


class _Mismatch(Exception):
    pass


def align(graph: Graph, probe: Graph, n: int, n_probe: int) -> Rows:
    """The row axes of ``graph`` (traced at ``n`` rows), found by comparing it with
    ``probe``, the same function traced at ``n_probe`` rows.

    Raises :class:`RowSplitError` if the two graphs differ in structure (the
    function branches on the number of rows, say)."""
    axis: dict[int, int] = {}
    sizes: dict[int, tuple[tuple[Any, ...], ...]] = {}
    odd: set[int] = set()
    pairs: dict[int, Var] = {}  # id(var of probe) -> var of graph
    seen: set[int] = set()

    def var(v: Var, w: Var) -> bool:
        """Pair v (graph) with w (probe); False if v depends on rows oddly."""
        if v.dtype != w.dtype or len(v.shape) != len(w.shape):
            raise _Mismatch(f"{v} and {w}")
        pairs[id(w)] = v
        diff = [k for k, (a, b) in enumerate(zip(v.shape, w.shape)) if a != b]
        if len(diff) == 1 and v.shape[diff[0]] == n and w.shape[diff[0]] == n_probe:
            axis[id(v)] = diff[0]
        return len(diff) <= 1 and (not diff or id(v) in axis)

    def atom(a: Atom, b: Atom) -> None:
        if isinstance(a, Literal) != isinstance(b, Literal):
            raise _Mismatch(f"{a!r} and {b!r}")
        if isinstance(a, Var) and pairs.get(id(b)) is not a:
            raise _Mismatch(f"operands {a!r} and {b!r}")

    def eqn(e: Eqn, f: Eqn) -> None:
        if id(e) in seen:
            return
        seen.add(id(e))
        if e.prim is not f.prim or len(e.inputs) != len(f.inputs) or \
                tuple(e.params) != tuple(f.params):
            raise _Mismatch(f"{e.prim.name} and {f.prim.name}")
        if (e.origin is None) != (f.origin is None):
            raise _Mismatch("origins")
        if e.origin is not None and f.origin is not None:
            eqn(e.origin, f.origin)  # comments cite these: retyped along
        for a, b in zip(e.inputs, f.inputs):
            if isinstance(a, Var) and isinstance(b, Var) and id(b) not in pairs:
                var(a, b)  # an origin's operands, defined outside the graph
            atom(a, b)
        paths, strange = [], False
        for key in e.params:
            for path, how in _param_diff(e.params[key], f.params[key], n, n_probe, (key,)):
                paths.append(path)
                strange |= how == "odd"
        if paths:
            sizes[id(e)] = tuple(paths)
        if not var(e.out, f.out) or strange:
            odd.add(id(e))

    try:
        if len(graph.inputs) != len(probe.inputs) or len(graph.eqns) != len(probe.eqns) \
                or len(graph.consts) != len(probe.consts) \
                or len(graph.outputs) != len(probe.outputs):
            raise _Mismatch("a different number of equations")
        for v, w in zip(graph.inputs, probe.inputs):
            var(v, w)
        for (v, _), (w, _) in zip(graph.consts, probe.consts):
            if not var(v, w) or id(v) in axis:
                raise RowSplitError(
                    f"{graph.name} makes a numpy array with one entry per row of the data "
                    f"({v.aval}), such as np.arange(len(X)); pass it as a Dask array with the "
                    "data's chunks instead")
        for e, f in zip(graph.eqns, probe.eqns):
            eqn(e, f)
        for a, b in zip(graph.outputs, probe.outputs):
            atom(a, b)
    except _Mismatch as m:
        raise RowSplitError(
            f"{graph.name} computes something different at {n} and at {n_probe} rows "
            f"({m}), so symgrad cannot tell which values run over the rows: the function "
            "must not branch on the number of rows") from None
    return Rows(n, axis, sizes, frozenset(odd))


def _param_diff(p: Any, q: Any, n: int, n_probe: int,
                path: tuple[Any, ...]) -> Iterable[tuple[tuple[Any, ...], str]]:
    """The paths where parameter values ``p`` and ``q`` differ: ``"size"`` where one is
    the row count of each graph, ``"odd"`` elsewhere."""
    if p == q and type(p) is type(q):
        return
    if isinstance(p, Graph) and isinstance(q, Graph):  # a loop's body: the same text, or odd
        if str(p) != str(q):
            yield path, "odd"
        return
    if isinstance(p, tuple) and isinstance(q, tuple) and len(p) == len(q):
        for k, (a, b) in enumerate(zip(p, q)):
            yield from _param_diff(a, b, n, n_probe, (*path, k))
    elif type(p) is int and type(q) is int and p == n and q == n_probe:
        yield path, "size"
    else:
        yield path, "odd"


# ---------------------------------------------------------------------------
# classification and the passes


def _mixes(e: Eqn, rows: Rows) -> bool:
    """Whether ``e``, whose output has a row axis, computes a row from other rows."""
    out = rows.axis[id(e.out)]
    ins = [(a, rows.axis[id(a)]) for a in e.inputs if isinstance(a, Var) and id(a) in rows.axis]
    prim, params = e.prim, e.params
    if prim.kind == "elementwise":
        return any(k + e.out.aval.ndim - a.aval.ndim != out for a, k in ins)
    if prim.kind == "reduction" or prim is extremum_weights_p:
        (a, k), axes = ins[0], params["axes"]
        kept = k - sum(1 for x in axes if x < k)
        return k in axes or out != (k if prim is extremum_weights_p else kept)
    if prim is broadcast_to_p:
        return bool(ins) and ins[0][1] + e.out.aval.ndim - ins[0][0].aval.ndim != out
    if prim is transpose_p:
        return params["perm"][out] != ins[0][1]
    if prim is reshape_p:
        (a, k) = ins[0]
        return (math.prod(a.shape[:k]) != math.prod(e.out.shape[:out])
                or a.shape[k] != e.out.shape[out])
    if prim is slice_p:
        (a, k) = ins[0]
        return params["index"][k] != (0, rows.n, 1) or out != k
    if prim is unslice_p:
        return params["index"][out] != (0, rows.n, 1) or any(k != out for _, k in ins)
    if prim in (gather_p, scatter_add_p, cumsum_p, cumprod_p, concatenate_p):
        return params["axis"] == out or any(k != out for _, k in ins)
    if prim in (argsort_p, take_along_p, scatter_along_p):  # they work on the last axis
        return out == e.out.aval.ndim - 1 or any(k != out for _, k in ins)
    if prim is matmul_p:
        return matmul_row(e, rows) != "rows"
    if prim in _MATRIX:  # inv, det, solve...: a row axis must be a batch axis
        return any(k >= a.aval.ndim - 2 or k != out for a, k in ins)
    return True


def matmul_row(e: Eqn, rows: Rows) -> str:
    """``"rows"`` if each row of the product comes from one row of a row-wise operand,
    ``"reduction"`` if it sums over the rows of both, else ``"mixes"``."""
    x, y = e.inputs
    kx, ky = rows.axis.get(id(x)), rows.axis.get(id(y))
    nx, ny = len(x.shape), len(y.shape)
    contract_x = kx is not None and kx == nx - 1
    contract_y = ky is not None and ky == (0 if ny == 1 else ny - 2)
    if contract_x and contract_y and id(e.out) not in rows.axis:
        return "reduction"
    if contract_x or contract_y or id(e.out) not in rows.axis:
        return "mixes"
    out = rows.axis[id(e.out)]
    if nx <= 2 and ny <= 2:  # (n, k) @ (k, m) keeps x's rows; (k, m) @ (m, n) keeps y's
        wanted = ([0] if kx is not None else []) + ([len(e.out.shape) - 1] if ky is not None
                                                    else [])
        return "rows" if wanted and all(w == out for w in wanted) else "mixes"
    batch = [k for k in (kx, ky) if k is not None]  # stacks: the rows must be a batch axis
    return "rows" if all(k == out and k < nx - 2 for k in batch) else "mixes"


def classify(graph: Graph, rows: Rows, data: Sequence[Var]) -> tuple[dict[int, int],
                                                                      dict[int, int]]:
    """The stage of each row-wise value and the level of each post value (by id).

    Data inputs have stage 1 and parameters level 0; a row-wise value waits for
    the levels of the post values it reads (stage = level + 1); a row reduction
    has the level of the stage it reduces. Raises :class:`RowSplitError` for an
    equation that mixes rows."""
    stage: dict[int, int] = {id(v): 1 for v in data}
    level: dict[int, int] = {}

    def of_post(a: Atom) -> int:
        return level.get(id(a), 0) if isinstance(a, Var) else 0

    for e in graph.eqns:
        row_ins = [a for a in e.inputs if isinstance(a, Var) and id(a) in rows.axis]
        post_ins = [a for a in e.inputs if not (isinstance(a, Var) and id(a) in rows.axis)]
        if e.prim is count_p:  # a number the driver knows from the shapes
            level[id(e.out)] = 0
            continue
        if id(e) in rows.odd:
            raise refuse(graph, e, rows)
        if id(e.out) in rows.axis:
            if _mixes(e, rows):
                raise refuse(graph, e, rows)
            stage[id(e.out)] = max([stage[id(a)] for a in row_ins]
                                   + [of_post(a) + 1 for a in post_ins] + [1])
        elif row_ins:
            reduces = (e.prim.kind == "reduction" and combine(e.prim) is not None
                       and rows.axis[id(row_ins[0])] in e.params["axes"])
            if e.prim is matmul_p and matmul_row(e, rows) == "reduction":
                reduces = True
            if not reduces:
                raise refuse(graph, e, rows)
            level[id(e.out)] = max(stage[id(a)] for a in row_ins)
        else:
            level[id(e.out)] = max([of_post(a) for a in post_ins] + [0])
    return stage, level


# ---------------------------------------------------------------------------
# a chunk graph for a number of rows


def for_rows(graph: Graph, rows: Rows, r: int) -> Graph:
    """``graph`` (typed for ``rows.n`` rows) for a chunk of ``r`` rows: each row axis and
    each row-count parameter becomes ``r``; equations cited as origins too."""
    vars_: dict[int, Var] = {}
    eqns: dict[int, Eqn | None] = {}

    def var(v: Var) -> Var:
        if id(v) not in vars_:
            k = rows.axis.get(id(v))
            shape = v.shape if k is None else (*v.shape[:k], r, *v.shape[k + 1:])
            vars_[id(v)] = Var(Aval(shape, v.dtype), v.hint)
        return vars_[id(v)]

    def atom(a: Atom) -> Atom:
        return var(a) if isinstance(a, Var) else a

    def eqn(e: Eqn) -> Eqn:
        if id(e) not in eqns:
            params = dict(e.params)
            for path in rows.sizes.get(id(e), ()):
                params[path[0]] = _replaced(params[path[0]], path[1:], r)
            origin = None if e.origin is None else eqn(e.origin)
            eqns[id(e)] = Eqn(e.prim, tuple(map(atom, e.inputs)), var(e.out),
                              freeze_params(params), origin)
        result = eqns[id(e)]
        assert result is not None
        return result

    body = [eqn(e) for e in graph.eqns]
    return check(Graph(tuple(map(var, graph.inputs)), tuple(body),
                       tuple(map(atom, graph.outputs)),
                       tuple((var(v), value) for v, value in graph.consts), graph.name))


def _replaced(value: Any, path: tuple[Any, ...], r: int) -> Any:
    if not path:
        return r
    k = path[0]
    return (*value[:k], _replaced(value[k], path[1:], r), *value[k + 1:])
