"""Test configuration (tests/ and the doctests in symgrad/): a private kernel cache,
the IR checker after every pass, compile-first (no tiered execution), the
hypothesis profiles, and a summary section
of the random expressions checked (``tests/test_random_expressions.py``).

Profiles: ``ci`` (the default: few examples, derandomized so that every CI run
checks the same ones) and ``long`` (thousands of examples, new ones every run)
for a longer local run: ``HYPOTHESIS_PROFILE=long python -m pytest
tests/test_random_expressions.py`` or ``--hypothesis-profile long``.
"""

import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# Before symgrad is imported: compile into a cache of this test run only (so
# that every run really compiles), and check the IR after every pass.
os.environ.setdefault("SYMGRAD_CACHE_DIR", tempfile.mkdtemp(prefix="symgrad-test-cache-"))
os.environ["SYMGRAD_CHECK_IR"] = "1"
# compile first, as before tiered execution: tests that count compiles stay deterministic
# (tests/test_tiered.py switches it on where it is the subject)
os.environ.setdefault("SYMGRAD_TIERED", "0")
sys.path.insert(0, str(Path(__file__).parent / "tests"))  # helpers: oracle.py, cases.py

settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True,
                          print_blob=True)
settings.register_profile("long", max_examples=2000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


#: test modules whose subject is the Tensor API's compiled backward kernels
#: (symgrad.eager.backward): they compile them as users' programs do. Every other test
#: runs the Tensor API's backward on the interpreter (``sg.config.eager_compile``
#: off), where it compares numbers with PyTorch: the same graphs, without a Numba
#: compile per graph structure. A test elsewhere that needs the kernels says
#: ``@pytest.mark.kernels``.
EAGER_KERNEL_MODULES = {
    "test_eager_fastpath", "test_train_loop", "test_thread_safety", "test_compile_once",
    "test_replay", "test_benchmarks", "test_examples",
}


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "kernels: the test's subject is compiled kernels "
                                       "(the Tensor API's backward ones included)")


@pytest.fixture(autouse=True)
def _eager_backward_on_the_interpreter(request):
    module = getattr(request.node, "module", None)
    name = getattr(module, "__name__", "").rpartition(".")[2]
    if name in EAGER_KERNEL_MODULES or request.node.get_closest_marker("kernels"):
        yield
        return
    import symgrad

    before = symgrad.config.eager_compile
    symgrad.config.eager_compile = False
    try:
        yield
    finally:
        symgrad.config.eager_compile = before


def pytest_terminal_summary(terminalreporter) -> None:
    """How many random expressions were checked against SymPy, per backend: the tests
    leave one line each in their reports' ``user_properties``."""
    lines = [value for reports in terminalreporter.stats.values() for r in reports
             if getattr(r, "when", None) == "call"
             for name, value in getattr(r, "user_properties", ()) if name == "random expressions"]
    if lines:
        terminalreporter.section("random expressions")
        for line in lines:
            terminalreporter.write_line(line)
