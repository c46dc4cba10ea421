"""One home for writing a script's section of docs/benchmarks.md (higher_order.py,
loops.py): the section from its heading up to the next ``## `` heading is replaced,
or appended when absent; the other sections are kept as they are. Importing it has
no side effects (the scripts themselves import JAX and PyTorch)."""

from __future__ import annotations

from pathlib import Path


def write_section(heading: str, text: str, doc: Path) -> None:
    """Replace the section of ``doc`` that starts with the line ``heading`` by ``text``."""
    old = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    text = text.rstrip("\n") + "\n"
    start = old.find(heading + "\n")
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = old.find("\n## ", start + len(heading))
        new = old[:start] + text + ("\n" + old[end + 1:] if end >= 0 else "")
    doc.write_text(new, encoding="utf-8")
