"""The ``symgrad`` command.

This first version only reports the version and what the package provides;
the ``grad`` and ``graph`` subcommands are the next milestone.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="symgrad",
        description="symgrad: gradients of numpy functions, derived symbolically and "
                    "compiled with Numba. Use it from Python: import symgrad as sg; sg.grad(f).")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    args = parser.parse_args(argv)
    from . import __version__

    if args.version:
        print(f"symgrad {__version__}")
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
