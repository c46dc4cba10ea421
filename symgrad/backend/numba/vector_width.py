"""symgrad's kernels vectorized with 512-bit registers where the CPU has AVX-512.

LLVM tunes Intel's AVX-512 CPUs (Skylake-X to Sapphire Rapids) to prefer 256-bit
vectors (its ``prefer-256-bit`` tuning: wide instructions once lowered the clock of
early ones), so Numba's loops there use half the registers' width. For symgrad's
kernels that call the vectorized math of :mod:`..vecmath` (:func:`wanted`), the full
width is faster on this session's Xeon: a loop of ``vm.tanh_sech2`` over 1e6 float64
values 3.1-3.4 -> 2.2 ms, the broadcast tanh gradient 3.8-4.0 -> 2.8-2.9 ms, sinexp at
n = 1e7 53-56 -> 35 ms (one thread, CPU time; ``docs/benchmarks.md``, "Session 12").

:func:`compiling` marks the kernels a thread compiles (:meth:`.compile.Kernel.
compile_signature`, on the calling thread or in the compile worker): every function
Numba lowers meanwhile (the kernel, its parallel loops' gufuncs, the helpers it
inlines) gets LLVM's function attribute ``"prefer-vector-width"="512"``. Every other
Numba function in the process (the user's own, symgrad's eager loops) keeps Numba's
defaults. The results are the same bits: kernels are compiled without fast-math, so
LLVM vectorizes only what it may without reordering a floating-point operation. The
width is part of the kernels' Numba cache key (:func:`.compile._numba_cache`), so a
kernel compiled at another width is compiled again, not loaded.

Eight float64 lanes leave up to seven elements to the scalar remainder of a loop,
where four left three: a 20 x 20 broadcast gradient became 40% slower (3.2 -> 4.6 µs)
until LLVM was told to vectorize that remainder 4 wide too (its
``-epilogue-vectorization-force-VF``, a process-wide option: set only while a kernel
compiles, under Numba's compiler lock, and reset after): 3.1 µs, and 64 x 64 16.7 ->
13.0 µs.

Their vectorized loops are also interleaved twice (:data:`INTERLEAVE`, LLVM's
``-force-vector-interleave``, set and reset like the remainder's width): each iteration
computes two vectors, 32 float32 or 16 float64 elements, two independent chains that
keep more loads in flight when the arrays come from memory instead of the caches.
sinexp's gradient at n = 1e7, one thread: float32 2.7 -> 1.7 ns per element, float64
4.9 -> 3.3 (the loops alone, CPU time under load 5.5); in the caches (n = 1e6) 1.48 ->
1.43 and 2.93 -> 2.76. LLVM interleaves only what it may without reordering a
floating-point operation (a sum over the loop stays in order: it is not interleaved),
so the results are the same bits. Not a kernel that calls both the float64 and the
float32 math (``vm.`` and ``vm32.``: a float32 loop with float64 sums or scratch, whose
16 lanes are 32 registers of float64): the broadcast tanh gradient in float32 (its row
sums in float64) went 3.7 -> 4.0 ms when interleaved (:func:`interleaved`).

Nothing changes when the CPU has no AVX-512, when the user chose Numba's target
(``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES``: a portable cache, say), or when
Numba's internals moved (a Numba version symgrad was not written for).
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
from collections.abc import Iterator

#: LLVM's function attribute that overrides the subtarget's preferred vector width
ATTRIBUTE = '"prefer-vector-width"="512"'

#: LLVM's option for the width of a vectorized loop's remainder loop ("epilogue")
EPILOGUE = "-epilogue-vectorization-force-VF"

#: LLVM's option for how many vectors one iteration of a vectorized loop computes, and
#: the count the widened kernels get (the module docstring; 0: LLVM's cost model)
INTERLEAVE_OPTION, INTERLEAVE = "-force-vector-interleave", 2

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


def key() -> tuple[int | None, int, str]:
    """What a kernel's compiled code depends on here besides its text (part of its Numba
    cache key): the width, the interleave count and the rule of :func:`interleaved`."""
    return width(), INTERLEAVE, "interleaved unless vm and vm32"


def wanted(text: str) -> bool:
    """Whether a kernel's text calls the vectorized math (``vm.``/``vm32.``), whose
    loops gain from the full width; simpler loops are bound by memory and lose a little
    (the seed gradient at n = 1000, 1.0 -> 1.1 µs): they keep Numba's width."""
    return _VECMATH_CALL.search(text) is not None


_VECMATH_CALL = re.compile(r"\bvm(?:32)?\.")


def interleaved(text: str) -> bool:
    """Whether a widened kernel's loops are interleaved (the module docstring): unless
    it calls both the float64 and the float32 vectorized math."""
    return not (_VM64_CALL.search(text) and _VM32_CALL.search(text))


_VM64_CALL, _VM32_CALL = re.compile(r"\bvm\."), re.compile(r"\bvm32\.")


@contextlib.contextmanager
def compiling(wide: bool = True, interleave: bool = True) -> Iterator[None]:
    """Within (``wide``): the functions Numba lowers on this thread are kernels (widened), and
    LLVM vectorizes the remainder of a loop 4 wide and (``interleave``) interleaves its
    vectorized loops (the module docstring). Holds
    Numba's compiler lock (which every compile takes anyway, re-entrant), so no other
    thread's compile runs with LLVM's option set."""
    if not wide or width() is None:
        yield
        return
    from llvmlite import binding
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        depth = getattr(_COMPILING, "depth", 0)
        _COMPILING.depth = depth + 1
        if not depth:
            binding.set_option("", f"{EPILOGUE}=4")
            binding.set_option("", f"{INTERLEAVE_OPTION}={INTERLEAVE if interleave else 0}")
        try:
            yield
        finally:
            _COMPILING.depth = depth
            if not depth:
                binding.set_option("", f"{EPILOGUE}=1")  # (LLVM's default: no forced width)
                binding.set_option("", f"{INTERLEAVE_OPTION}=0")  # (LLVM's default)
