"""Random numbers for Tensors: ``manual_seed``, ``Generator`` and the default generator.

A :class:`Generator` wraps a numpy ``Generator`` (PCG64): ``torch.manual_seed(0)``
makes every later ``randn``, ``rand``, ``nn.init`` draw and ``Dropout`` mask
reproducible. The streams are numpy's, not PyTorch's: a seeded symgrad program
draws from the same *distributions* as the PyTorch one, not the same numbers
(copy weights across to compare the two, as ``tests/test_torch_programs.py`` does).

    >>> import symgrad as torch
    >>> _ = torch.manual_seed(0); a = torch.rand(2)
    >>> _ = torch.manual_seed(0); bool((torch.rand(2) == a).all())
    True
    >>> g = torch.Generator().manual_seed(1)
    >>> torch.rand(2, generator=g).shape
    torch.Size([2])
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Generator:
    """``torch.Generator``: a seedable stream of random numbers."""

    def __init__(self, device: Any = "cpu"):
        self._seed = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self.rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        self.manual_seed(int(np.random.SeedSequence().entropy % (2 ** 63)))
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> dict:
        return self.rng.bit_generator.state

    def set_state(self, state: dict) -> Generator:
        self.rng.bit_generator.state = state
        return self


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (behind ``randn``, ``rand``, ``nn.init``, ``Dropout``)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


#: called with the Generator before each draw (``torch.func.vmap``'s randomness modes
#: refuse a draw, or replay one per batch element: :mod:`symgrad.func.vmap`)
draw_guards: list[Any] = []


def numpy_generator(generator: Generator | None) -> np.random.Generator:
    """The numpy generator behind ``generator`` (the default one for None)."""
    g = generator or default_generator
    for guard in draw_guards:
        guard(g)
    return g.rng
