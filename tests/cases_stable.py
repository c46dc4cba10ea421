"""Test-table cases of selection (clip, relu) and numerically stable functions (see cases.py)."""

from __future__ import annotations

from cases import Case

CASES: list[Case] = []
