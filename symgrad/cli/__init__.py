"""The ``symgrad`` command (:mod:`.command`), its ``--check`` (:mod:`.checks`), its
SymPy steps (:mod:`.symbolic`) under one time budget and its memory bounds
(:mod:`.bounds`), its report (:mod:`.report`), the safe expression parser
(:mod:`.expr`), graph pictures (:mod:`.drawing`) and the limits they share
(:mod:`.limits`).

This package imports only ``argparse`` until a command runs, so that
``symgrad --help`` stays fast.
"""

from .command import main

__all__ = ["main"]
