"""Test configuration (tests/ and the doctests in symgrad/): a private kernel cache,
and the IR checker after every pass."""

import os
import sys
import tempfile
from pathlib import Path

# Before symgrad is imported: compile into a cache of this test run only (so
# that every run really compiles), and check the IR after every pass.
os.environ.setdefault("SYMGRAD_CACHE_DIR", tempfile.mkdtemp(prefix="symgrad-test-cache-"))
os.environ["SYMGRAD_CHECK_IR"] = "1"
sys.path.insert(0, str(Path(__file__).parent / "tests"))  # helpers: oracle.py, cases.py
