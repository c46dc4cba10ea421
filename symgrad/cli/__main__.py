"""``python -m symgrad.cli``: the ``symgrad`` command."""

import sys

from .command import main

sys.exit(main())
