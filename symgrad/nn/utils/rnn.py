"""``torch.nn.utils.rnn``: ``pad_sequence``, ``PackedSequence``,
``pack_padded_sequence``, ``pad_packed_sequence``, ``pack_sequence``, ``unpad_sequence``
and ``unpack_sequence``, in PyTorch's
layout (``data`` time-major over the sequences sorted by decreasing length, stably,
``batch_sizes``, ``sorted_indices``, ``unsorted_indices``), made of ``cat``, ``stack``
and indexing so that the gradient reaches each sequence. symgrad's recurrent layers
take a ``PackedSequence`` (each sequence's state stops at its last step).

    >>> import symgrad as torch
    >>> from symgrad.nn.utils.rnn import pad_sequence
    >>> pad_sequence([torch.ones(2), torch.ones(1)], batch_first=True)
    tensor([[1., 1.],
            [1., 0.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ...eager.functions import cat, stack
from ...eager.tensor import Tensor
from ...eager.tensor_ops import full, tensor

__all__ = ["pad_sequence", "PackedSequence", "pack_padded_sequence", "pad_packed_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence"]


class PackedSequence(NamedTuple):
    """Sequences of different lengths packed time step by time step: ``data`` holds step
    0 of every sequence, then step 1 of those longer than 1, ...; ``batch_sizes[t]`` is
    how many sequences have a step ``t``."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None


def _lengths(lengths: Any) -> np.ndarray:
    values = np.asarray(lengths._value if isinstance(lengths, Tensor) else lengths)
    return values.astype(np.int64).reshape(-1)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded ``(T, B, *)`` (or ``(B, T, *)``) batch of sequences of ``lengths``."""
    n = _lengths(lengths)
    if enforce_sorted:
        if np.any(np.diff(n) > 0):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                               "to pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        order = None
    else:
        order = np.argsort(-n, kind="stable")
        n = n[order]
    if n.size and n[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    x = input.transpose(0, 1) if batch_first else input
    if order is not None:
        x = x[:, order.tolist()]
    if n.size and n[0] > x.shape[0]:
        raise RuntimeError(f"Expected sequence length to be <= {x.shape[0]}, but got {n[0]}")
    batch_sizes = np.array([(n > t).sum() for t in range(int(n[0]) if n.size else 0)])
    data = cat([x[t, :int(b)] for t, b in enumerate(batch_sizes)], 0)
    sorted_t = None if order is None else tensor(order)
    unsorted_t = None if order is None else tensor(np.argsort(order))
    return PackedSequence(data, tensor(batch_sizes), sorted_t, unsorted_t)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The padded batch (in the original order) and the lengths, as PyTorch's."""
    padded, lengths = _padded_sorted(sequence, padding_value, total_length)
    if sequence.unsorted_indices is not None:
        back = sequence.unsorted_indices._value.tolist()
        padded, lengths = padded[:, back], lengths[back]
    return (padded.transpose(0, 1) if batch_first else padded), tensor(lengths)


def _padded_sorted(sequence: PackedSequence, padding_value: float = 0.0,
                   total_length: int | None = None) -> tuple[Tensor, np.ndarray]:
    """``(T, B, *)`` in the packed (sorted) order, and the sorted lengths."""
    data, sizes = sequence.data, _lengths(sequence.batch_sizes)
    batch, steps = int(sizes[0]), len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence ({steps}), but got total_length={total_length}")
        steps = total_length
    rows, start = [], 0
    for t in range(steps):
        b = int(sizes[t]) if t < len(sizes) else 0
        part = data[start:start + b]
        start += b
        if b < batch:
            pad = full((batch - b, *data.shape[1:]), padding_value, dtype=data.dtype)
            part = cat([part, pad], 0) if b else pad
        rows.append(part)
    lengths = np.array([(sizes > i).sum() for i in range(batch)], dtype=np.int64)
    return stack(rows, 0), lengths


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of ``(L_i, *)`` sequences."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


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


def unpad_sequence(padded_sequences: Tensor, lengths: Any,
                   batch_first: bool = False) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :int(n)] for i, n in enumerate(_lengths(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The sequences of a ``PackedSequence``, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
