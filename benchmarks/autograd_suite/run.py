"""HIPS autograd's own tests (1.9.1), pointed at symgrad: how many pass.

    python benchmarks/autograd_suite/run.py [--tests DIR] [--backend numpy|numba]

runs ``test_numpy``, ``test_systematic``, ``test_linalg``, ``test_scalar_ops`` and
``test_binary_ops`` of autograd 1.9.1 with ``shim/`` first on the path: there
``autograd.numpy`` is numpy, ``autograd.grad`` is ``sg.grad`` and ``check_grads``
compares symgrad's reverse mode with autograd's numerical directional
derivative at first order (``shim/autograd/test_util.py``). Without ``--tests``
the tests are taken from autograd's source distribution, fetched with ``pip
download autograd==1.9.1``. Prints the passes per file and the failures grouped
by their first line (complex numbers, a function symgrad refuses, a wrong
gradient, ...). Measures; asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FILES = ["test_numpy.py", "test_systematic.py", "test_linalg.py", "test_scalar_ops.py",
         "test_binary_ops.py"]


def fetch_tests(into: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "autograd==1.9.1", "--no-deps",
                    "--no-binary", ":all:", "-d", str(into), "-q"], check=True)
    (sdist,) = into.glob("autograd-1.9.1.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(into, filter="data")
    return into / "autograd-1.9.1" / "tests"


def reason(message: str) -> str:
    """A failure's message reduced to a category."""
    first = message.strip().splitlines()[0] if message.strip() else "?"
    if "complex" in message:
        return "complex numbers"
    m = re.search(r"(np\.[\w.]+(?:\([^)]*\))?) (?:is not supported|on a traced value)", message)
    if m:
        return f"unsupported: {m.group(1)}"
    if "Derivative (VJP) check" in message or "Derivative (JVP) check" in message:
        return "wrong gradient"
    return first[:120]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=Path, help="autograd's tests/ directory")
    parser.add_argument("--backend", default="numpy", choices=["numpy", "numba"])
    parser.add_argument("--as-written", action="store_true",
                        help="check each test's own modes (fwd, rev) and order, as autograd "
                             "does, instead of reverse mode at first order")
    parser.add_argument("--show", type=int, default=0,
                        help="print the first N failures of each category")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tests = args.tests or fetch_tests(Path(tmp))
        report = Path(tmp) / "report.xml"
        env = dict(os.environ, SYMGRAD_AUTOGRAD_BACKEND=args.backend,
                   SYMGRAD_AUTOGRAD_MODES="as-written" if args.as_written else "rev",
                   PYTHONPATH=os.pathsep.join([str(HERE / "shim"), str(ROOT),
                                               os.environ.get("PYTHONPATH", "")]))
        config = Path(tmp) / "pytest.ini"  # not autograd's own (it needs pytest-cov)
        config.write_text("[pytest]\n")
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-c", str(config), "--rootdir", str(tests), "--tb=line", "-W", "ignore",
                        f"--junitxml={report}",
                        *FILES], cwd=tests, env=env, stdout=subprocess.DEVNULL)
        cases = ET.parse(report).getroot().iter("testcase")
        per_file: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
        failures: dict[str, list[str]] = collections.defaultdict(list)
        for case in cases:
            name = case.get("classname", "").rsplit(".", 1)[-1] + "::" + case.get("name", "")
            bad = case.find("failure") if case.find("failure") is not None else case.find("error")
            skipped = case.find("skipped") is not None
            counts = per_file[case.get("classname", "")]
            counts[1] += 1
            if bad is None and not skipped:
                counts[0] += 1
            elif bad is not None:
                failures[reason(bad.get("message", "") + "\n" + (bad.text or ""))].append(name)
    total = [sum(c[0] for c in per_file.values()), sum(c[1] for c in per_file.values())]
    checked = ("the tests' own modes and orders" if args.as_written
               else "reverse mode, first order")
    print(f"autograd 1.9.1 tests on symgrad ({args.backend} backend, {checked})")
    for file, (ok, n) in sorted(per_file.items()):
        print(f"  {file:<24} {ok:>4} / {n}")
    print(f"  {'total':<24} {total[0]:>4} / {total[1]}")
    print("failures by reason:")
    for why, names in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(names):>4}  {why}")
        for name in names[:args.show]:
            print(f"          {name}")


if __name__ == "__main__":
    main()
