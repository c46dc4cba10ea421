"""The ``symgrad`` command's bounds: one time budget for SymPy, memory for values.

:func:`run` runs the SymPy steps of a command (simplifying and printing the
formulas, ``--check``'s oracle, ``--show sympy``) one after another under one
deadline. SymPy cannot be stopped reliably from inside the process: an alarm
is only seen between bytecodes, and a product of huge integers or the ``str``
of one runs in C for as long as it takes, while memory grows. So on POSIX the
steps run in a forked child (it inherits the traced graphs; only results are
pickled back), each result is sent as soon as it is ready, and at the deadline
the child is killed. Its address space is limited to half the memory
available, so that a runaway expression is a ``MemoryError`` there, not the
machine's. Without ``fork`` (Windows) the steps run in this process under
:func:`symgrad.core.sympy_bridge.time_limit` (``SIGALRM``, where there is one).

:func:`memory_refusal` compares the working set that the values of ``--at``
need (the interpreter's, :func:`symgrad.core.interpreter.peak_bytes`, or with
``--jit`` the kernel's) with :func:`available_memory`, before they are computed.

    >>> import time
    >>> outcomes = run({"quick": lambda deadline: 6 * 7, "slow": lambda deadline: time.sleep(9)},
    ...                seconds=0.5)
    >>> outcomes["quick"].value, outcomes["slow"].status
    (42, 'timeout')
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: a step: called with the deadline (a ``time.monotonic()`` value), returns a picklable result
Step = Callable[[float], Any]


@dataclass(frozen=True)
class Outcome:
    """How a step ended: ``"done"`` (with ``value``), ``"failed"`` (``error`` says
    why, in one line) or ``"timeout"`` (not finished, or not started, in time)."""

    status: str
    value: Any = None
    error: str = ""


def run(steps: Mapping[str, Step], seconds: float) -> dict[str, Outcome]:
    """Run ``steps`` in order within ``seconds`` in all; an outcome for each."""
    deadline = time.monotonic() + seconds
    import multiprocessing

    if "fork" in multiprocessing.get_all_start_methods():
        return _in_child(steps, deadline)
    return _in_process(steps, deadline)


def describe(e: BaseException) -> str:
    """An exception as one short line: ``OverflowError: too many digits in integer``."""
    import sys

    bridge = sys.modules.get("symgrad.core.sympy_bridge")  # not imported here: it imports SymPy
    if bridge is not None and isinstance(e, bridge.TooLarge):
        return str(e)
    if isinstance(e, MemoryError):
        return "it ran out of memory"
    text = " ".join(str(e).split())
    if len(text) > 200:
        text = text[:200] + "..."
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _in_child(steps: Mapping[str, Step], deadline: float) -> dict[str, Outcome]:
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(send, steps, deadline), daemon=True)
    child.start()
    send.close()
    outcomes: dict[str, Outcome] = {}
    ended = False
    try:
        while len(outcomes) < len(steps):
            left = deadline - time.monotonic()
            if left <= 0 or not receive.poll(left):
                break
            try:
                name, outcome = receive.recv()
            except EOFError:  # the child ended without a word: killed, or out of memory
                ended = True
                break
            outcomes[name] = outcome
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    for name in steps:
        if name not in outcomes:
            if ended:  # the first unfinished step is the one that ended it
                outcomes[name] = Outcome("failed", error=f"SymPy's process ended (exit code "
                                                        f"{child.exitcode}; out of memory?)")
                ended = False
            else:
                outcomes[name] = Outcome("timeout")
    return outcomes


def _child(send: Any, steps: Mapping[str, Step], deadline: float) -> None:
    import signal

    from ..core.sympy_bridge import OutOfTime

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops, and kills this
    _limit_memory()
    for name, step in steps.items():
        try:
            outcome = Outcome("done", step(deadline))
        except OutOfTime:
            outcome = Outcome("timeout")
        except BaseException as e:  # noqa: BLE001  whatever SymPy raised, said in one line
            outcome = Outcome("failed", error=describe(e))
        try:
            send.send((name, outcome))
        except Exception as e:  # noqa: BLE001  (a result that does not pickle)
            send.send((name, Outcome("failed", error=f"its result could not be sent: {e}")))
    send.close()


def _limit_memory() -> None:
    """Cap this process's address space at what it has plus half the memory available."""
    try:
        import resource

        with open("/proc/self/status") as status:
            kb = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
        available = available_memory()
        if available is None:
            return
        limit = kb * 1024 + available // 2
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, OSError, StopIteration, ValueError):
        return  # not Linux: the deadline still bounds the child


def _in_process(steps: Mapping[str, Step], deadline: float) -> dict[str, Outcome]:
    from ..core.sympy_bridge import OutOfTime, time_limit

    outcomes: dict[str, Outcome] = {}
    for name, step in steps.items():
        left = deadline - time.monotonic()
        if left <= 0:
            outcomes[name] = Outcome("timeout")
            continue
        try:
            with time_limit(left):
                outcomes[name] = Outcome("done", step(deadline))
        except OutOfTime:
            outcomes[name] = Outcome("timeout")
        except Exception as e:  # noqa: BLE001
            outcomes[name] = Outcome("failed", error=describe(e))
    return outcomes


def memory_refusal(shapes: dict[str, tuple[int, ...]], g: Any, at: list[Any],
                   cotangent: Any, jit: bool, what: str = "the value and gradient") -> str | None:
    """Why ``what`` ``g`` computes (a ``value_and_grad``, or a ``hessian``...) at ``at``
    is refused, or None: the working set it needs (estimated from the graph that
    computes it, before anything large is allocated) against the memory available."""
    from ..core.interpreter import peak_bytes
    from .limits import MEMORY_SHARE

    available = available_memory()
    if available is None:
        return None
    kernel = g.kernel_bytes(*at, gradient=cotangent)
    need = kernel if jit else peak_bytes(g.graph(*at, gradient=cotangent))
    if need <= MEMORY_SHARE * available:
        return None
    given = " ".join(f"--shape {n}={','.join(map(str, s))}" for n, s in shapes.items() if s)
    how = "the compiled kernel" if jit else "the numpy interpreter"
    hint = f"; --jit needs about {_gb(kernel)}" if not jit and kernel <= MEMORY_SHARE * \
        available else ""
    return (f"{what} at {given or 'these shapes'} need about {_gb(need)} of "
            f"memory on {how}, and {_gb(available)} are available{hint}; use a smaller --shape")


def _gb(n: float) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.0f} MB"


def available_memory() -> int | None:
    """Bytes this process may still allocate: the kernel's ``MemAvailable``, less
    where a cgroup (a container) allows less; ``None`` where neither is known."""
    found: list[int] = []
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup/memory.max") as cap, \
                open("/sys/fs/cgroup/memory.current") as used:
            limit = cap.read().strip()
            if limit != "max":
                found.append(int(limit) - int(used.read().strip()))
    except (OSError, ValueError):
        pass
    if not found:
        import os

        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, ValueError, OSError):
            return None
    return max(0, min(found))


__all__ = ["run", "Outcome", "describe", "available_memory", "memory_refusal"]
