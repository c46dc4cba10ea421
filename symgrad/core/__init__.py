"""The core: the IR and everything that needs nothing but the IR.

``ir`` (the typed SSA graph and its text form), ``check`` (the checker),
``interpreter`` (the numpy reference interpreter), ``sympy_bridge`` (the
graph as SymPy expressions: the oracle; importing it imports SymPy), ``tracing`` (traces,
tracers, recording), ``conventions`` (derivative conventions at kinks, as
data), ``errors`` (what symgrad raises for problems in user code),
``index_text`` (index arithmetic as kernel source) and ``version``.
Nothing here imports another part of symgrad.
"""
