"""symgrad's kernels vectorized with 512-bit registers where the CPU has AVX-512.

LLVM tunes Intel's AVX-512 CPUs (Skylake-X to Sapphire Rapids) to prefer 256-bit
vectors (its ``prefer-256-bit`` tuning: wide instructions once lowered the clock of
early ones), so Numba's loops there use half the registers' width. For symgrad's
kernels, whose loops are long and mostly the vectorized math of :mod:`..vecmath`,
the full width is faster on this session's Xeon: a loop of ``vm.tanh_sech2`` over
1e6 float64 values 3.1-3.4 -> 2.2 ms, the broadcast tanh gradient of
``benchmarks/tanh_broadcast.py`` 1.13-1.34x -> 0.85x JAX's CPU time
(``docs/benchmarks.md``, "Session 12").

:func:`compiling` marks the kernels a thread compiles (:meth:`.compile.Kernel.
compile_signature`, on the calling thread or in the compile worker): every function
Numba lowers meanwhile (the kernel, its parallel loops' gufuncs, the helpers it
inlines) gets LLVM's function attribute ``"prefer-vector-width"="512"``. Every other
Numba function in the process (the user's own, symgrad's eager loops) keeps Numba's
defaults. The results are the same bits: kernels are compiled without fast-math, so
LLVM vectorizes only what it may without reordering a floating-point operation. The
width is part of the kernels' Numba cache key (:func:`.compile._numba_cache`), so a
kernel compiled at another width is compiled again, not loaded.

Nothing changes when the CPU has no AVX-512, when the user chose Numba's target
(``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES``: a portable cache, say), or when
Numba's internals moved (a Numba version symgrad was not written for).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator

#: LLVM's function attribute that overrides the subtarget's preferred vector width
ATTRIBUTE = '"prefer-vector-width"="512"'

_COMPILING = threading.local()  # .depth: compiles of kernels under way on this thread


@functools.cache
def width() -> int | None:
    """512 where the kernels are widened (the module docstring), else None."""
    from llvmlite import binding
    from numba.core import codegen, config

    if config.CPU_NAME is not None or config.CPU_FEATURES is not None:
        return None
    try:
        if not binding.get_host_cpu_features().get("avx512f"):
            return None
    except RuntimeError:  # a platform where LLVM cannot tell
        return None
    library = getattr(codegen, "CPUCodeLibrary", None)
    if library is None or not hasattr(library, "add_ir_module"):
        return None
    original = library.add_ir_module

    def add_ir_module(self, ir_module):  # noqa: ANN001, ANN202 -- Numba's signature
        if getattr(_COMPILING, "depth", 0):
            for function in ir_module.functions:
                if not function.is_declaration:
                    # (a set of names llvmlite checks against the attributes it knows;
                    # a string attribute is printed as it is)
                    set.add(function.attributes, ATTRIBUTE)
        return original(self, ir_module)

    library.add_ir_module = add_ir_module
    return 512


@contextlib.contextmanager
def compiling() -> Iterator[None]:
    """Within: the functions Numba lowers on this thread are kernels (widened)."""
    if width() is None:
        yield
        return
    depth = getattr(_COMPILING, "depth", 0)
    _COMPILING.depth = depth + 1
    try:
        yield
    finally:
        _COMPILING.depth = depth
