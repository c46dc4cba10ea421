"""``torch.nn.utils.rnn``: ``pad_sequence`` (from ``cat`` and ``stack``, so the
gradient reaches each sequence). ``PackedSequence`` and ``pack_padded_sequence`` are
not provided: symgrad's recurrent layers take padded tensors.

    >>> import symgrad as torch
    >>> from symgrad.nn.utils.rnn import pad_sequence
    >>> pad_sequence([torch.ones(2), torch.ones(1)], batch_first=True)
    tensor([[1., 1.],
            [1., 0.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...eager.functions import cat, stack
from ...eager.tensor import Tensor
from ...eager.tensor_ops import full

__all__ = ["pad_sequence"]


def pad_sequence(sequences: Sequence[Tensor] | Tensor, batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences of lengths ``L_i`` (each ``(L_i, *)``) into ``(L, B, *)`` (or
    ``(B, L, *)``), padded with ``padding_value`` on ``padding_side``."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    sequences = list(sequences.unbind(0) if isinstance(sequences, Tensor) else sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    length = max(s.shape[0] for s in sequences)
    padded: list[Any] = []
    for s in sequences:
        if s.shape[0] == length:
            padded.append(s)
            continue
        pad = full((length - s.shape[0], *s.shape[1:]), padding_value, dtype=s.dtype)
        padded.append(cat([s, pad] if padding_side == "right" else [pad, s], 0))
    return stack(padded, 0 if batch_first else 1)
