"""examples/train_loop.py trains (the loss goes down) with one backward structure."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

import symgrad as torch

pytestmark = pytest.mark.filterwarnings("error::symgrad.autograd.KernelFallbackWarning")

EXAMPLE = Path(__file__).parent.parent / "examples" / "train_loop.py"


def test_the_training_loop_lowers_the_loss():
    train = runpy.run_path(str(EXAMPLE))["train"]
    before = torch.autograd.backward_stats()
    losses = train(steps=40, verbose=False)
    after = torch.autograd.backward_stats()
    assert len(losses) == 40 and all(b < a for a, b in zip(losses, losses[1:]))
    assert losses[-1] < 0.8 * losses[0]
    runs = (after["interpreted"] - before["interpreted"]
            + after["compiled_runs"] - before["compiled_runs"])
    assert runs == 40 and after["structures"] - before["structures"] <= 1
