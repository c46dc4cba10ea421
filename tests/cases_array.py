"""Test-table cases of indexing, functional updates and shape ops (see cases.py)."""

from __future__ import annotations

from cases import Case

CASES: list[Case] = []
