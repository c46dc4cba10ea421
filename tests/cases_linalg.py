"""Test-table cases of linear algebra, selection and stable functions (see cases.py)."""

from __future__ import annotations

from cases import Case

CASES: list[Case] = []
