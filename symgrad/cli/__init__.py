"""The ``symgrad`` command (:mod:`.command`), its report (:mod:`.report`), the safe
expression parser (:mod:`.expr`) and graph pictures (:mod:`.drawing`).

This package imports only ``argparse`` until a command runs, so that
``symgrad --help`` stays fast.
"""

from .command import main

__all__ = ["main"]
