"""The ``symgrad`` command stays bounded in time and memory, and says what it
could not do in one line (issue 14, section 3).

SymPy's work runs under one budget (``--sympy-seconds``); the numpy interpreter
frees what nothing reads again, and the command refuses what would not fit;
finite differences sample large inputs; every failure is one
``symgrad: error:`` line. Budgets here are small, so that the file stays fast.
"""

from __future__ import annotations

import tracemalloc

import numpy as np

import symgrad as sg
from symgrad.ir import interpret, peak_bytes


# ---------------------------------------------------------------------------
# memory: the interpreter's working set, and what does not fit


def _chain(x):
    for _ in range(40):
        x = np.sin(x) * 1.01
    return np.sum(x)


def test_interpreter_frees_values_nothing_reads_again():
    x = np.ones(100_000)  # 0.8 MB per value; the chain makes 80 of them
    graph = sg.jit(_chain, backend="numpy").graph(x)
    tracemalloc.start()
    try:
        interpret(graph, x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * x.nbytes  # before: every value alive to the end, 64 MB
    assert peak <= peak_bytes(graph)  # the estimate the command refuses by is an upper bound
