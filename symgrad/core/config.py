"""Settings a user may change: ``sg.config``, like ``jax.config``.

Each setting starts from an environment variable, so that a benchmark or a CI
run can set it without touching code, and can be changed at run time::

    import symgrad as sg
    sg.config.log_compiles = True            # or SYMGRAD_LOG_COMPILES=1
    sg.config.update("tiered", False)        # or SYMGRAD_TIERED=0

- ``tiered`` (``SYMGRAD_TIERED``, default on): when a kernel is not in the disk
  cache yet, the first calls run on the numpy interpreter while Numba compiles
  the kernel in a compile worker process (``symgrad.backend.numba.worker``); later
  calls load it from the disk cache and run it. A call whose
  loop runs longer than ``tiered_budget`` seconds stops interpreting and waits
  for the kernel instead (a graph without loops is always interpreted until the
  kernel is ready). Off: every first call compiles
  first (what benchmarks measure). The interpreter and the kernel round differently
  (numpy's float32 steps against the kernel's float64 inside a fused loop, the
  order of a sum's terms, numpy's ``exp`` against vecmath's): their results agree
  to the dtype's precision, not bit for bit, and which calls find the kernel ready
  depends on the compile's timing and on the disk cache, so results may differ in
  the last bits from run to run. Off, they do not (every call after a Tensor
  structure's first backward runs the kernel): :func:`use_deterministic_algorithms`
  (PyTorch's name) switches it off.
- ``tiered_budget`` (``SYMGRAD_TIERED_BUDGET``, default 0.5): seconds.
- ``log_compiles`` (``SYMGRAD_LOG_COMPILES``, default off): the start and end
  of each compile (and each load from the disk cache) are logged on the
  ``"symgrad"`` logger with the kernel's size and the time it took, at level
  WARNING so that it shows without any logging set-up.
- ``eager_compile`` (``SYMGRAD_EAGER_COMPILE``, default on): ``Tensor.backward`` of a
  graph structure seen before runs a compiled kernel (:mod:`symgrad.eager.backward`);
  off, every backward runs on the numpy interpreter (tests that compare numbers with
  PyTorch, where the kernels are not what is tested).
- ``reroll`` (``SYMGRAD_REROLL``, default on): a traced Python loop that repeats
  the same block of equations becomes one ``loop`` (see
  :mod:`symgrad.passes.reroll`).

The settings are plain values read when they are needed (thread-safe to read;
set them before starting threads that use symgrad).
"""

from __future__ import annotations

import os
from typing import Any


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")


class Config:
    """The settings (see the module docstring)."""

    def __init__(self) -> None:
        self.tiered: bool = _flag("SYMGRAD_TIERED", True)
        self.tiered_budget: float = float(os.environ.get("SYMGRAD_TIERED_BUDGET") or 0.5)
        self.log_compiles: bool = _flag("SYMGRAD_LOG_COMPILES", False)
        self.reroll: bool = _flag("SYMGRAD_REROLL", True)
        self.eager_compile: bool = _flag("SYMGRAD_EAGER_COMPILE", True)

    def update(self, name: str, value: Any) -> None:
        """``config.update("log_compiles", True)``, as ``jax.config.update``."""
        if not hasattr(self, name) or name.startswith("_"):
            raise AttributeError(f"symgrad has no setting {name!r}; the settings are "
                                 f"{sorted(vars(self))}")
        setattr(self, name, value)

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in sorted(vars(self).items())) + ")"


config = Config()


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """``torch.use_deterministic_algorithms``: with ``mode``, a program's results have
    the same bits on every run, whatever the compile timing and the disk cache (tiered
    execution off: a kernel compiles before its first call, on the calling thread; a
    kernel already interpreting waits for its compile at its next call). Everything else
    in symgrad is deterministic already (threads: ``symgrad.backend.numba.threads``);
    ``warn_only`` is accepted for PyTorch's signature and changes nothing."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms() expects a bool, got {type(mode).__name__}")
    del warn_only
    config.tiered = not mode


def are_deterministic_algorithms_enabled() -> bool:
    """``torch.are_deterministic_algorithms_enabled``: whether results may not depend
    on the compile timing (tiered execution off, :func:`use_deterministic_algorithms`)."""
    return not config.tiered
