"""The project's own promises: the example, the command, the README, import cost."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ})


def test_seed_example_prints_the_seed_numbers():
    done = run("examples/seed_gradient.py", "--show")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1:3] == ["[[4.5 4.5]", " [4.5 4.5]]"]
    assert lines[4] == "[10. 20. 30. 40. 50.]"
    assert "@njit(cache=True" in done.stdout and "grad_x = " in done.stdout


def test_command_reports_its_version():
    done = run("-m", "symgrad.cli", "--version")
    assert done.returncode == 0 and done.stdout.strip() == "symgrad 0.1.0"


def test_importing_symgrad_loads_neither_numba_nor_sympy():
    code = "import sys, symgrad; print(sorted(m for m in ('numba', 'sympy') if m in sys.modules))"
    done = run("-c", code)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"^# run the tests\n(.+)$", readme, re.M)
    assert match and "pytest" in match.group(1)
    assert "grep -A1 -x '# run the tests' README.md" in (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^# run the main job.*\n.*symgrad grad \"mean\(3\*\(x\+2\)\*\*2\)\"",
                     readme, re.M)
