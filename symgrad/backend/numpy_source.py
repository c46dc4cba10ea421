"""Graph -> numpy source: one numpy statement per equation, a backend in text.

The interpreter (:mod:`symgrad.core.interpreter`) runs a graph by calling each
primitive's numpy ``impl``; this module writes the same computation as Python
source that needs only numpy, for :func:`symgrad.transforms.export.export`'s ``target="numpy"``.
It is a small lowering in the shape every backend will have: :data:`LOWERINGS`, a
table keyed by :class:`~symgrad.core.ir.Primitive` objects, says what text each
primitive becomes; an elementwise primitive whose ``impl`` is its numpy ufunc
needs no entry (``np.<ufunc>(a, b)``, :func:`lowering`). A primitive with neither
raises :class:`Unlowerable`, naming it: a module is never written with a guess.

Rows of the table are of three sorts: a template (``np.sum(x, axis=(0,))``), a
copy of the primitive's own numpy implementation when that is a self-contained
function (``relu``, ``sigmoid``, ...: :class:`~.standalone.Copier` copies it and
what it reads, the reference semantics by construction), and for control flow
(``loop``, ``cond``, ``while``, ``call``) the graphs they hold as functions of
their own plus a copy of the driver below, which mirrors the primitive's
``impl`` (checkpointed loops too).

Array constants of the graph become module-level arrays, decoded from their exact
bytes (base64), so no number is rounded through text.

    >>> import numpy as np, symgrad as sg
    >>> graph = sg.jit(lambda x: np.sum(np.sin(x) * 2.0), backend="numpy").graph(np.ones(3))
    >>> module = Module()
    >>> print(module.function(graph, "f"))
    def f(x):
        a = np.sin(x)
        b = np.multiply(a, 2.0)
        c = np.sum(b, axis=(0,))
        return (c,)
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .. import prims
from ..core.ir import INT, Eqn, Graph, Literal, Primitive, Printer, is_complex, origin_changes
from ..prims import complex as CX
from ..prims import fft as FFT
from ..prims import special_functions as SF
from ..prims.overflow import check_exact
from .standalone import Copier, NotStandalone


class Unlowerable(NotImplementedError):
    """A primitive (or a form of one) that the numpy target cannot write."""


#: a lowering: (output name, operand texts, the equation, the module) -> lines
Lowering = Callable[[str, list, Eqn, "Module"], list]


def literal(value: float | bool | int | complex) -> str:
    """A literal as source: ``np.inf``/``np.nan`` by name, negatives parenthesized, a
    complex number as ``complex(re, im)``."""
    if isinstance(value, complex):
        return f"complex({literal(value.real)}, {literal(value.imag)})"
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return f"({value})" if value < 0 else repr(value)
    if math.isnan(value):
        return "np.nan"
    text = ("np.inf" if value > 0 else "-np.inf") if math.isinf(value) else repr(float(value))
    return f"({text})" if text.startswith("-") else text


def _expression(template: str, *params: str) -> Lowering:
    """``out = template``: ``{0}``... the operands, ``{name}`` the params given (repr),
    and no other params (a new param of the primitive must be lowered, not dropped)."""
    def lower(out: str, args: list, e: Eqn, module: Module) -> list:
        _only(e, params)
        return [f"{out} = {template.format(*args, **{p: repr(e.params[p]) for p in params})}"]
    return lower


def _only(e: Eqn, params: tuple[str, ...]) -> None:
    extra = set(e.params) - set(params)
    if extra:
        raise Unlowerable(f"the numpy target does not know the parameters {sorted(extra)} of "
                          f"primitive {e.prim.name}")


def _copied_impl(out: str, args: list, e: Eqn, module: Module) -> list:
    """A call of a copy of the primitive's own numpy implementation (with its params)."""
    try:
        name = module.copier.reference(e.prim.impl, f"{e.prim.name}_impl", "prims")
    except NotStandalone as error:
        raise Unlowerable(f"primitive {e.prim.name}: its numpy implementation cannot be "
                          f"copied into a standalone module ({error})") from None
    params = "".join(f", {k}={v!r}" for k, v in e.params.items())
    return [f"{out} = {name}({', '.join(args)}{params})"]


def _count(out: str, args: list, e: Eqn, module: Module) -> list:
    _only(e, ("axes",))
    n = math.prod(e.inputs[0].shape[a] for a in e.params["axes"])
    return [f"{out} = np.float64({n})"]


def _slice_text(index: tuple) -> str:
    parts = []
    for start, stop, step in index:  # a normalized stop of -1 with step < 0: through 0
        stop_text = "" if stop < 0 else str(stop)
        parts.append(f"{start}:{stop_text}" + (f":{step}" if step != 1 else ""))
    return ", ".join(parts)


def _slice(out: str, args: list, e: Eqn, module: Module) -> list:
    _only(e, ("index",))
    return [f"{out} = {args[0]}[{_slice_text(e.params['index'])}]"]


def _unslice(out: str, args: list, e: Eqn, module: Module) -> list:
    _only(e, ("shape", "index"))
    return [f"{out} = np.zeros({e.params['shape']!r}, dtype=np.{e.out.dtype})",
            f"{out}[{_slice_text(e.params['index'])}] = {args[0]}"]


def _gather(out: str, args: list, e: Eqn, module: Module) -> list:
    _only(e, ("indices", "axis"))
    return [f"{out} = np.take({args[0]}, {list(e.params['indices'])!r}, "
            f"axis={e.params['axis']})"]


def _concatenate(out: str, args: list, e: Eqn, module: Module) -> list:
    _only(e, ("axis",))
    return [f"{out} = np.concatenate(({', '.join(args)},), axis={e.params['axis']})"]


def _to_float(out: str, args: list, e: Eqn, module: Module) -> list:
    """``to_float``, and where it must be exact (``exact``) the test that refuses what
    float64 would round (prims.overflow.check_exact)."""
    lines = _as_dtype(lambda e: "float64")(out, args, e, module)
    if e.params.get("exact") is None:
        return lines
    total = bool(e.params.get("total", False))
    check = module.copier.reference(check_exact, "check_exact", "prims")
    return [f"{check}({args[0]}, {e.params['exact']!r}, {total})", *lines]


def _as_dtype(dtype_of: Callable[[Eqn], str]) -> Lowering:
    def lower(out: str, args: list, e: Eqn, module: Module) -> list:
        dtype, x = dtype_of(e), args[0]
        if "complex" in str(e.inputs[0].aval.dtype) and "complex" not in dtype:
            x = f"np.real({x})"  # complex to real is the real part (prims.convert)
        if not e.out.shape:
            return [f"{out} = np.{dtype}({x})"]
        return [f"{out} = np.asarray({x}, dtype=np.{dtype})"]
    return lower


def _part(template: str, parts: tuple[str, ...]) -> Lowering:
    """``template`` indexed by the position of the ``part`` param among ``parts`` (the
    order of numpy's result tuple: ``np.linalg.svd`` gives u, s, vh)."""
    def lower(out: str, args: list, e: Eqn, module: Module) -> list:
        _only(e, ("part",))
        return [f"{out} = {template.format(*args)}[{parts.index(e.params['part'])}]"]
    return lower


def _svd(out: str, args: list, e: Eqn, module: Module) -> list:
    """``np.linalg.svd``'s u, s or vh; ``uv`` (complex matrices) is U above Vh^T."""
    if e.params["part"] != "uv":
        return _part("np.linalg.svd({0}, full_matrices=False)", ("u", "s", "vh"))(
            out, args, e, module)
    _only(e, ("part",))
    return [f"_u, _s, _vh = np.linalg.svd({args[0]}, full_matrices=False)",
            f"{out} = np.concatenate([_u, np.swapaxes(_vh, -1, -2)], axis=-2)"]


def _math_of_elements(function: str) -> Lowering:
    """``math.<function>`` on each element (as the impls of erf and erfc compute it)."""
    def lower(out: str, args: list, e: Eqn, module: Module) -> list:
        _only(e, ())
        if any(is_complex(a.dtype) for a in e.inputs):  # (math's are real only)
            _scipy_only(out, args, e, module)
        math_name = module.copier.reference(math, "math")
        return [f"{out} = np.asarray(np.frompyfunc({math_name}.{function}, 1, 1)({args[0]}), "
                "dtype=np.float64)[()]"]
    return lower


# -- control flow: the graphs as functions, and drivers mirroring the impls --------


def run_loop(lo, hi, *ops, body, n_carry, n_xs, reverse, tape, ys, tapes, recompute=None,
             checkpoint=0, n_ckpt=0):
    """The ``loop`` primitive's impl: ``ys`` and ``tapes`` are the (shape, dtype) of a row
    of each stacked output and each carry's tape; with ``recompute`` (the backward loop
    of a checkpointed loop), segments of ``checkpoint`` steps, last first, each
    recomputing its forward rows from the checkpoint (the last ``n_ckpt`` operands)."""
    lo, hi = int(lo), int(hi)
    n = max(hi - lo, 0)
    rest = ops[n_carry + n_xs:]
    carry, xs = list(ops[:n_carry]), ops[n_carry:n_carry + n_xs]
    consts, ckpts = rest[:len(rest) - n_ckpt], rest[len(rest) - n_ckpt:]
    out_ys = [np.empty((n, *shape), dtype) for shape, dtype in ys]
    length = n if tape == 1 else -(-n // tape) if tape else 0
    out_tapes = [np.empty((length, *shape), dtype) for shape, dtype in tapes]

    def run(i, rows):
        nonlocal carry
        s = i - lo
        outs = body(np.int64(i), *carry, *rows, *(x[s] for x in xs), *consts)
        carry = list(outs[:n_carry])
        for y, value in zip(out_ys, outs[n_carry:]):
            y[s] = value

    if recompute is None:
        order = range(hi - 1, lo - 1, -1) if reverse else range(lo, hi)
        for t, i in enumerate(order):
            if tape == 1 or (tape > 1 and t % tape == 0):
                for tp, c in zip(out_tapes, carry):
                    tp[i - lo if tape == 1 else t // tape] = c
            run(i, [])
    else:
        def index(t):  # of the forward's step t (it ran the other way)
            return lo + t if reverse else hi - 1 - t

        for seg in range(-(-n // checkpoint) - 1, -1, -1):
            t0, t1 = seg * checkpoint, min(seg * checkpoint + checkpoint, n)
            c = [ck[seg] for ck in ckpts]
            local = []
            for t in range(t0, t1):
                local.append(c)
                i = index(t)
                c = list(recompute(np.int64(i), *c, *(x[i - lo] for x in xs), *consts))
            for t in range(t1 - 1, t0 - 1, -1):
                run(index(t), local[t - t0])
    return (*carry, *out_ys, *out_tapes)


def run_while(*ops, cond, body, n_carry, n_cconst, tape, tapes):
    """The ``while`` primitive's impl: ``tapes`` the (shape, dtype) of each carry."""
    carry = list(ops[:n_carry])
    cc, bc = ops[n_carry:n_carry + n_cconst], ops[n_carry + n_cconst:]
    count, stored = 0, [[] for _ in carry]
    while bool(cond(*carry, *cc)[0]):
        if tape and count % tape == 0:
            for s, c in zip(stored, carry):
                s.append(np.copy(c))
        carry = list(body(*carry, *bc))
        count += 1
    if not tape:
        return tuple(carry)
    out = [np.array(s, dtype=dtype) if s else np.empty((0, *shape), dtype)
           for s, (shape, dtype) in zip(stored, tapes)]
    return (*carry, np.int64(count), *out)


def _avals(values: Any) -> tuple:
    return tuple((tuple(v.shape), str(np.dtype(v.dtype))) for v in values)


def _loop(out: str, args: list, e: Eqn, module: Module) -> list:
    p = e.params
    _only(e, ("body", "n_carry", "n_xs", "reverse", "tape", "size", "recompute",
              "checkpoint"))
    body = module.nested(p["body"], "body")
    checkpointed = ""
    if p["recompute"] is not None:  # the backward loop of a loop with checkpoint=
        recompute = module.nested(p["recompute"], "recompute")
        checkpointed = (f", recompute={recompute}, checkpoint={p['checkpoint']}, "
                        f"n_ckpt={len(p['recompute'].outputs)}")
    n_carry = p["n_carry"]
    ys = _avals(a.aval for a in p["body"].outputs[n_carry:])
    tapes = _avals(v.aval for v in p["body"].inputs[1:1 + n_carry]) if p["tape"] else ()
    driver = module.copier.reference(run_loop, "run_loop", "numpy_source")
    return [f"{out} = {driver}({', '.join(args)}, body={body}, n_carry={n_carry}, "
            f"n_xs={p['n_xs']}, reverse={p['reverse']}, tape={p['tape']}, ys={ys!r}, "
            f"tapes={tapes!r}{checkpointed})"]


def _while(out: str, args: list, e: Eqn, module: Module) -> list:
    p = e.params
    _only(e, ("cond", "body", "n_carry", "n_cconst", "tape", "checkpoint"))
    # (``checkpoint`` shapes the adjoint, not this loop: the impl ignores it too)
    cond, body = module.nested(p["cond"], "cond"), module.nested(p["body"], "body")
    tapes = _avals(v.aval for v in p["body"].inputs[:p["n_carry"]])
    driver = module.copier.reference(run_while, "run_while", "numpy_source")
    return [f"{out} = {driver}({', '.join(args)}, cond={cond}, body={body}, "
            f"n_carry={p['n_carry']}, n_cconst={p['n_cconst']}, tape={p['tape']}, "
            f"tapes={tapes!r})"]


def _cond(out: str, args: list, e: Eqn, module: Module) -> list:
    _only(e, ("true", "false"))
    true, false = module.nested(e.params["true"], "true"), module.nested(e.params["false"],
                                                                          "false")
    return [f"{out} = ({true} if {args[0]} else {false})({', '.join(args[1:])})"]


def _call(out: str, args: list, e: Eqn, module: Module) -> list:
    fun = module.nested(e.params["fun"], "call")  # what the interpreter runs (its impl)
    n = e.params["n_args"] + e.params["n_fun"]
    return [f"{out} = {fun}({', '.join(args[:n])})"]


def _callback(out: str, args: list, e: Eqn, module: Module) -> list:
    raise Unlowerable(f"primitive callback ({e.params.get('name', 'sg.pure_callback')}) runs a "
                      "Python function, which an exported module cannot hold: export the "
                      "functions before and after it separately")


def _scipy_only(out: str, args: list, e: Eqn, module: Module) -> list:
    raise Unlowerable(f"primitive {e.prim.name} computes with scipy.special, which a "
                      "numpy-only module cannot call: export with target='numba' is no help "
                      "either (it runs between kernels); compute it outside the exported "
                      "function")


_SUM_LIKE = {prims.sum_p: "sum", prims.max_p: "max", prims.min_p: "min",
             prims.prod_p: "prod", prims.mean_p: "mean"}

#: the numpy target's lowering of each primitive that is not a plain ufunc
LOWERINGS: dict[Primitive, Lowering] = {
    **{p: _expression(f"np.{name}({{0}}, axis={{axes}})", "axes")
       for p, name in _SUM_LIKE.items()},
    prims.count_p: _count,
    prims.where_p: _expression("np.where({0}, {1}, {2})"),
    prims.matmul_p: _expression("{0} @ {1}"),
    prims.broadcast_to_p: _expression("np.broadcast_to({0}, {shape})", "shape"),
    prims.reshape_p: _expression("np.reshape({0}, {shape})", "shape"),
    prims.transpose_p: _expression("np.transpose({0}, {perm})", "perm"),
    prims.cumsum_p: _expression("np.cumsum({0}, axis={axis})", "axis"),
    prims.proj_p: _expression("{0}[{part}]", "part"),
    prims.slice_p: _slice,
    prims.unslice_p: _unslice,
    prims.gather_p: _gather,
    prims.concatenate_p: _concatenate,
    prims.convert_p: _as_dtype(lambda e: e.params["dtype"]),
    prims.to_float_p: _to_float,
    prims.inv_p: _expression("np.linalg.inv({0})"),
    prims.solve_p: _expression("np.linalg.solve({0}, {1})"),
    prims.det_p: _expression("np.linalg.det({0})"),
    prims.cholesky_p: _expression("np.linalg.cholesky({0})"),
    prims.slogdet_p: _part("np.linalg.slogdet({0})", ("sign", "logabsdet")),
    prims.sinc_p: _expression("np.sinc({0})"),
    prims.erf_p: _math_of_elements("erf"),
    prims.erfc_p: _math_of_elements("erfc"),
    prims.to_int_p: _as_dtype(lambda e: "int64"),
    prims.argsort_p: _expression('np.argsort({0}, axis=-1, kind="stable").astype(np.float64)'),
    prims.cumprod_p: _expression("np.cumprod({0}, axis={axis})", "axis"),
    prims.pinv_p: _expression("np.linalg.pinv({0}, {rcond})", "rcond"),
    prims.qr_p: _part("np.linalg.qr({0})", ("q", "r")),
    prims.svd_p: _svd,
    # self-contained numpy implementations, copied with what they read
    **{p: _copied_impl for p in (prims.relu_p, prims.sigmoid_p, prims.softplus_p,
                                 prims.xlogy_p, prims.extremum_weights_p, prims.norm2_p,
                                 prims.scatter_add_p, prims.take_along_p, prims.eig_p,
                                 prims.eigh_p, prims.lstsq_p, prims.scatter_along_p,
                                 prims.windows_p, prims.unwindows_p, prims.bitwise_p,
                                 prims.log_softmax_p, prims.nll_loss_p,
                                 prims.softmax_p, prims.layer_norm_p, prims.linear_p)},
    # scipy.special's (libm's lgamma and tgamma; the others need scipy), complex numbers
    # and the FFT (numpy's own functions)
    SF.gammaln_p: _math_of_elements("lgamma"),
    SF.gamma_p: _math_of_elements("gamma"),
    # (a host primitive declaring its scipy.special name needs no row: see lowering)
    SF.polygamma_p: _scipy_only,
    SF.zeta_p: _scipy_only,
    CX.real_p: _expression("np.real({0})"),
    CX.imag_p: _expression("np.imag({0})"),
    CX.conj_p: _expression("np.conj({0})"),
    CX.cabs_p: _expression("np.abs({0})"),
    CX.complex_p: _copied_impl,
    FFT.fft_p: _copied_impl,
    prims.loop_p: _loop,
    prims.while_p: _while,
    prims.cond_p: _cond,
    prims.call_p: _call,
    prims.callback_p: _callback,
}


def lowering(prim: Primitive) -> Lowering:
    """The lowering of ``prim``: its row of :data:`LOWERINGS`; for an elementwise
    primitive whose ``impl`` is its numpy ufunc (float results; int64 ones are checked
    for overflow as the impl checks), ``np.<ufunc>(...)``; for a host primitive of a
    scipy.special function (``scipy=`` declared), a refusal that says so."""
    if prim in LOWERINGS:
        return LOWERINGS[prim]
    if prim.host and prim.scipy:
        return _scipy_only
    ufunc = prim.numpy
    if prim.kind == "elementwise" and isinstance(ufunc, np.ufunc) and (
            prim.impl is ufunc or getattr(prim.impl, "ufunc", None) is ufunc):
        return _ufunc(ufunc)
    raise Unlowerable(f"primitive {prim.name} has no lowering for the numpy target (add one "
                      "to symgrad.backend.numpy_source.LOWERINGS); export with target='numba'")


def checked_int(ufunc, *args):
    """``ufunc`` on int64 operands, refusing to wrap (as symgrad's integers do)."""
    out = ufunc(*args)
    exact = ufunc(*(np.asarray(a).astype(object) for a in args))
    if np.any(np.asarray(exact != out, dtype=bool)):
        raise OverflowError(f"integer overflow in np.{ufunc.__name__} (int64)")
    return out


def _ufunc(ufunc: np.ufunc) -> Lowering:
    def lower(out: str, args: list, e: Eqn, module: Module) -> list:
        _only(e, ())
        if e.out.dtype == INT and getattr(e.prim.impl, "ufunc", None) is ufunc:
            check = module.copier.reference(checked_int, "checked_int", "numpy_source")
            return [f"{out} = {check}(np.{ufunc.__name__}, {', '.join(args)})"]
        return [f"{out} = np.{ufunc.__name__}({', '.join(args)})"]
    return lower


class Module:
    """The text of one module being written: functions for graphs (a kernel, the graphs
    control flow holds), module-level constants, and the copied helpers."""

    def __init__(self, copier: Copier | None = None):
        self.copier = copier or Copier(frozenset({"numpy", "math", "itertools"}))
        self.copier.reference(np, "np")
        self.functions: list[str] = []   # nested graphs' functions, innermost first
        self.constants: list[str] = []
        self._const_names: dict[int, str] = {}
        self._count = 0

    def nested(self, graph: Graph, kind: str) -> str:
        """The name of a module-level function computing ``graph`` (a loop body...)."""
        self._count += 1
        name = f"_{kind}_{self._count}"
        self.functions.append(self.function(graph, name))
        return name

    def constant(self, value: np.ndarray) -> str:
        """A module-level name holding the array ``value`` exactly."""
        if id(value) in self._const_names:
            return self._const_names[id(value)]
        self._count += 1
        name = f"_CONST_{len(self.constants) + 1}"
        array = np.ascontiguousarray(value)
        if array.ndim == 0 and array.dtype == np.float64:
            text = f"{name} = {literal(float(array))}"
        else:
            data = base64.b64encode(array.tobytes()).decode()
            text = (f"{name} = np.frombuffer(base64.b64decode({data!r}), "
                    f"dtype={array.dtype.str!r}).reshape({array.shape!r}).copy()")
            self.copier.imports.setdefault("base64", "import base64")
        self.constants.append(text)
        self._const_names[id(value)] = name
        return name

    def function(self, graph: Graph, name: str, out_names: Mapping[int, str] | None = None,
                 consts_as_arguments: bool = False) -> str:
        """``def name(<inputs>): ...; return (<outputs>,)`` computing ``graph``. Its
        array constants are module constants, or (``consts_as_arguments``) arguments
        after the inputs."""
        names = Printer(graph, out_names, reserved=("np", "math", "base64"))
        params = [names.name(v) for v in graph.inputs]
        lines = []
        for v, value in graph.consts:
            if consts_as_arguments:
                params.append(names.name(v))
            else:
                lines.append(f"{names.name(v)} = {self.constant(value)}")
        for cite, e in origin_changes(graph.eqns):
            if cite is not None:
                lines.append(f"# grad of: {names.eqn(cite)}")
            args = [literal(a.value) if isinstance(a, Literal) else names.name(a)
                    for a in e.inputs]
            lines += lowering(e.prim)(names.name(e.out), args, e, self)
        outs = [literal(a.value) if isinstance(a, Literal) else names.name(a)
                for a in graph.outputs]
        lines.append(f"return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
        body = "\n".join("    " + line for line in lines)
        return f"def {name}({', '.join(params)}):\n{body}"

    def text(self) -> str:
        """Imports, copied helpers, constants and the nested graphs' functions."""
        return "\n\n".join(part for part in (self.copier.text(), "\n".join(self.constants),
                                             "\n\n\n".join(self.functions)) if part.strip())


def is_view(e: Eqn | None, graph: Graph, a: Any) -> bool:
    """Whether an output ``a`` of ``graph`` may share memory with an input, a constant
    or a view (structural primitives, ``proj``): the caller should copy it."""
    if isinstance(a, Literal):
        return False
    if any(a is v for v in (*graph.inputs, *graph.const_vars)):
        return True
    return e is not None and (e.prim.view or e.prim.kind in ("structural", "control"))


__all__ = ["LOWERINGS", "Module", "Unlowerable", "is_view", "literal", "lowering"]
