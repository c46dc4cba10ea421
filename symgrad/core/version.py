"""symgrad's version: part of every kernel's cache key (:mod:`symgrad.backend.numba.codegen`)."""

__version__ = "0.1.0"
