"""benchmarks/loops.py: its section of docs/benchmarks.md replaces only itself, and every
child program it formats is valid Python. (Its rows check themselves when it runs: the
Euler row compares symgrad's gradient with the handwritten adjoint; running them here
would compile for minutes.)"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).parent.parent / "benchmarks" / "loops.py"


def load():
    spec = importlib.util.spec_from_file_location("symgrad_bench_loops", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = load()


def test_the_section_replaces_only_itself(tmp_path):
    doc = tmp_path / "benchmarks.md"
    head = "# Benchmarks\n\n## A\n\na\n\n"
    doc.write_text(head + bench.SECTION + "\n\nold\n\n## B\n\nb\n")
    bench.write_section(bench.SECTION + "\n\nnew\n", doc)
    assert doc.read_text() == head + bench.SECTION + "\n\nnew\n\n## B\n\nb\n"
    doc.write_text("# Benchmarks\n\n## A\n")
    bench.write_section(bench.SECTION + "\n\nnew\n", doc)
    assert doc.read_text().endswith("## A\n\n" + bench.SECTION + "\n\nnew\n")


def test_the_child_programs_are_valid_python():
    common = {"root": str(SCRIPT.parent.parent)}
    programs = {"first": bench.FIRST.format(fn="rnn_scan", **common),
                "euler": bench.EULER.format(n=10, **common),
                "jax": bench.JAX.format(n=10), "torch": bench.TORCH.format(n=10),
                "compile": bench.COMPILE.format(n=10, **common),
                "memory": bench.MEMORY.format(n=10, k="None", **common)}
    for name, code in programs.items():
        compile(code, name, "exec")
