"""The one build: a traced graph, its adjoint, the passes, the backend.

Every front end goes through here: ``grad``, ``value_and_grad``, ``vjp`` and
``jit`` (:mod:`symgrad.transforms.api`) and ``Tensor.backward`` (:mod:`symgrad.eager`).
So a check or a pass added here covers all of them: with ``SYMGRAD_CHECK_IR=1``
(the test suite sets it) :func:`derive` runs the IR checker on the traced graph,
on the adjoint and after every pass. The front ends also share how an argument
becomes a kernel input (:func:`kernel_input`) and how a cotangent is checked
against its output (:func:`cotangent`).

    >>> import numpy as np, symgrad as sg
    >>> graph, _ = sg.numpy_api.trace(lambda x: np.sum(x * x), [Aval((3,))], [None], ["x"])
    >>> final, program = build(graph, wrt=[0], keep_primal=False, function="f",
    ...                        description="doctest", backend="numpy")
    >>> program.kernel(np.array([1.0, 2.0, 3.0]))[0]
    array([2., 4., 6.])
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..backend.numba.codegen import KernelSource
from ..backend.numba.eager_loops import first_max as compiled_first_max
from ..backend.numba.eager_loops import layer_norm as compiled_layer_norm
from ..backend.numba.eager_loops import middle_sum as compiled_middle_sum
from ..backend.numba.eager_loops import normalize as compiled_normalize
from ..backend.numba.eager_loops import relu as compiled_relu
from ..backend.numba.eager_loops import row_sum as compiled_row_sum
from ..backend.numba.eager_loops import select as compiled_select
from ..backend.numba.eager_loops import shift as compiled_shift
from ..backend.numba.entry import entry as kernel_entry
from ..backend.numba.lowering.complex import interpreted_reason
from ..backend.numba.window_gather import fill_window_rows
from ..backend.numba.window_gather import windows as gathered_windows
from ..backend.program import Program
from ..backend.program import build as build_program
from ..core import check as checker
from ..core.config import config
from ..core.errors import SCALAR_OUTPUT_ERROR
from ..core.interpreter import interpret
from ..core.ir import BOOL, C64, C128, F32, FLOAT, INT, Aval, Graph, has_complex
from ..core.trace_errors import refuse_overriding
from ..core.tracing import as_constant_array
from ..passes.adjoint import adjoint
from ..passes.gathers import sink_gathers
from ..passes.reroll import reroll
from ..passes.rewrites import optimize
from ..passes.structure import one_hot_products

__all__ = ["SCALAR_OUTPUT_ERROR", "build", "compiled_first_max", "compiled_layer_norm",
           "compiled_middle_sum", "compiled_normalize", "compiled_relu",
           "compiled_row_sum", "compiled_select", "compiled_shift", "cotangent", "derive",
           "differentiate", "fill_window_rows",
           "gathered_windows", "kernel_entry", "kernel_input", "program"]


def differentiate(graph: Graph, wrt: Sequence[int], seeded: bool = False,
                  keep_primal: bool = True, n_aux: int = 0) -> Graph:
    """The forward and adjoint of ``graph`` with respect to ``graph.inputs[wrt]``, not yet
    optimized. Outputs: the first output of ``graph`` if ``keep_primal``, then its other
    outputs if ``n_aux`` (``has_aux``: passed through, not differentiated), then the
    gradients. Inputs: ``graph``'s, then one cotangent per differentiated output if
    ``seeded``. A transformed function called inside a trace inlines this graph."""
    aux = graph.outputs[len(graph.outputs) - n_aux:] if n_aux else ()
    if n_aux:
        graph = replace(graph, outputs=graph.outputs[:len(graph.outputs) - n_aux])
    full = adjoint(graph, wrt, seed_inputs=seeded)
    primal, grads = full.outputs[:len(graph.outputs)], full.outputs[len(graph.outputs):]
    if not keep_primal:  # the value is not returned: not computed either
        primal = ()
    return replace(full, outputs=(*primal, *aux, *grads))


def derive(graph: Graph, wrt: Sequence[int] | None = None, seeded: bool = False,
           keep_primal: bool = True, n_aux: int = 0) -> Graph:
    """The optimized graph to run: ``graph`` itself (``wrt=None``), or
    :func:`differentiate`'s forward and adjoint; a traced Python loop in it rerolled
    first (``sg.config.reroll``, :mod:`symgrad.passes.reroll`)."""
    checked = checker.enabled()
    if checked:
        checker.check(graph)
    if config.reroll:  # a traced Python loop's repeated blocks as one loop
        rerolled = reroll(graph)
        graph = checker.check(rerolled) if checked and rerolled is not graph else rerolled
    if wrt is not None:
        full = differentiate(graph, wrt, seeded, keep_primal, n_aux)
        graph = checker.check(full) if checked else full
    graph = optimize(graph, checked=checked)
    # products by one-hot matrices (a Hessian's basis) as gathers, on the graph the
    # passes simplified (exact for finite operands, see passes.structure); then the
    # gathers pulled up to where their elements are made (passes.gathers)
    structured = sink_gathers(one_hot_products(graph))
    if structured is graph:
        return graph
    return optimize(checker.check(structured) if checked else structured, checked=checked)


def program(graph: Graph, function: str, description: str,
            out_names: Mapping[int, str] | None = None, backend: str = "numba",
            tiered: bool = False, nogil: bool = False) -> Program:
    """The backend's :class:`~symgrad.backend.program.Program` for an optimized graph
    (with ``tiered``, its first calls may run on the interpreter while it compiles;
    ``nogil``: kernels that release the GIL, to run on several threads at once). A graph
    with complex values is Numba kernels when every primitive that sees one has a complex
    kernel, else it runs on the numpy interpreter, and its source says why
    (:func:`~symgrad.backend.numba.lowering.complex.interpreted_reason`; README, "Complex
    numbers")."""
    reason = interpreted_reason(graph) if backend == "numba" and has_complex(graph) else None
    if reason is not None:
        return _interpreted(graph, function, description, reason)
    return build_program(graph, function, description, out_names, backend, tiered=tiered,
                         nogil=nogil)


def _interpreted(graph: Graph, function: str, description: str, reason: str) -> Program:
    """A complex graph's program on the numpy interpreter, where some primitive has no
    complex Numba kernel (``reason``). Its "source" is the IR, as comments, with a note
    saying so, so that ``.source()`` still shows what runs."""
    text = "\n".join([f"# {function}: {description}",
                      f"# complex values: this graph runs on the numpy interpreter ({reason})",
                      *("# " + line for line in str(graph).splitlines())])
    key = hashlib.sha256(text.encode()).hexdigest()[:32]
    return Program((graph,), (KernelSource(key, function, text),),
                   lambda *args: tuple(interpret(graph, *args)), ())


def build(graph: Graph, *, wrt: Sequence[int] | None = None, seeded: bool = False,
          keep_primal: bool = True, n_aux: int = 0, function: str, description: str,
          out_names: Mapping[int, str] | None = None,
          backend: str = "numba", tiered: bool = False) -> tuple[Graph, Program]:
    """:func:`derive`, then :func:`program`: the optimized graph and what runs it."""
    final = derive(graph, wrt, seeded, keep_primal, n_aux)
    return final, program(final, function, description, out_names, backend, tiered)


def kernel_input(x: Any, what: str = "", promote: bool = True,
                 integers: bool = False) -> tuple[Any, Aval]:
    """An argument as a kernel takes it, and its aval: float64, float32 (or bool) arrays,
    C-contiguous and writable, 0-d values as Python scalars (a float32 one as
    ``np.float32``). ``promote`` makes bools
    float; ``integers`` (with ``promote=False``) keeps an integer number an int64 (a loop
    bound, a trip count); ``what`` names the argument in a TypeError about its type."""
    if (integers and not promote and isinstance(x, int | np.integer)
            and not isinstance(x, bool | np.bool_)):
        if isinstance(x, np.integer):  # np.int32(100000) ** 2 wraps in numpy: as an array
            return _integer_array(np.asarray(x), what)
        return int(x), Aval((), INT, weak=True)  # a Python int: weak (NEP 50), as a float
    if integers and not promote and isinstance(x, np.ndarray) and x.dtype.kind in "iu":
        return _integer_array(x, what)
    refuse_overriding(x, what)
    array = as_constant_array(x, what)
    dtype = (BOOL if array.dtype == np.bool_ and not promote
             else array.dtype.name if array.dtype.kind == "c"
             else F32 if array.dtype == np.float32 else FLOAT)
    if array.ndim == 0:
        value = (bool(array) if dtype == BOOL else float(array) if dtype == FLOAT
                 else complex(array) if dtype == C128 else np.dtype(dtype).type(array))
        # a Python float is weak, as numpy 2 (NEP 50) and jax.jit take it: x32 * a stays float32
        return value, Aval((), dtype, weak=type(x) in (float, complex))
    array = np.ascontiguousarray(array, dtype=dtype)
    if not array.flags.writeable:  # Numba compiles read-only arrays separately
        array = array.copy()
    return array, Aval(array.shape, dtype)


def _integer_array(x: np.ndarray, what: str) -> tuple[Any, Aval]:
    """An integer array that is not differentiated: an int64 one is traced as integers, so
    that integer arithmetic on it is numpy's (``u - 3``, ``n // 2``, bitwise operations,
    wrapping as numpy's int64 does); other integer dtypes are refused, because numpy's
    arithmetic in them (uint8's ``1 - 3`` is 254) is not int64's."""
    if x.dtype != np.int64:
        raise TypeError(
            f"{what or 'an argument'} is a {x.dtype} {'array' if x.ndim else 'number'}: "
            "symgrad computes integers in int64 "
            "only, and "
            f"numpy's {x.dtype} arithmetic differs (it wraps at other bounds: uint8 1 - 3 is "
            "254). Pass x.astype(np.int64) for integer arithmetic, or x.astype(np.float64) "
            "where x only enters float arithmetic")
    if x.ndim == 0:
        return int(x), Aval((), INT)
    array = np.ascontiguousarray(x)
    if not array.flags.writeable:
        array = array.copy()
    return array, Aval(array.shape, INT)


def cotangent(gradient: Any, out: Aval, subject: str,
              error: type[Exception] = ValueError) -> Any:
    """The cotangent ``gradient`` of an output ``out`` as a kernel input: it must have
    the output's shape (one element for a one-element output will do, as the seeds'
    ``torch.Tensor([1.0])`` for a scalar). ``subject`` says whose output it is in the
    message (``"f returns"``, ``"the output has"``)."""
    value, aval = kernel_input(gradient, "gradient")
    if aval.dtype in (C128, C64) and out.dtype not in (C128, C64):
        raise TypeError(f"gradient is complex ({aval.dtype}) but {subject} a real value: the "
                        "cotangent of a real output is real (its imaginary part would be "
                        "dropped)")
    if aval.dtype != out.dtype:  # a cotangent has its output's dtype
        value = (np.ascontiguousarray(value, dtype=out.dtype) if aval.shape
                 else np.dtype(out.dtype).type(value))
        value = float(value) if out.dtype == FLOAT and not aval.shape else value
    if aval.shape == out.shape:
        return value
    if aval.size == 1 and out.size == 1:
        value = np.reshape(value, out.shape)
        if out.shape:
            return np.ascontiguousarray(value)
        return float(value) if out.dtype == FLOAT else np.dtype(out.dtype).type(value)
    raise error(f"gradient has shape {aval.shape} but {subject} shape {out.shape}: pass a "
                "gradient of the output's shape (the result is the gradient of "
                "sum(output * gradient))")
