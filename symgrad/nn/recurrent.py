"""PyTorch's recurrent layers: ``RNN`` (tanh or relu), ``LSTM``, ``GRU`` and the cells
``RNNCell``, ``LSTMCell``, ``GRUCell``.

Built from Tensor operations only (``F.linear``, ``sigmoid``, ``tanh``, ``chunk``,
``stack``), so values, gradients and double backward come from symgrad's
primitives. The parameters have PyTorch's names, shapes, registration order and gate
order (LSTM: input, forget, cell, output; GRU: reset, update, new, with the reset
gate applied to ``W_hn h + b_hn``), and the same initialization (uniform in
``±1/sqrt(hidden_size)``), so a PyTorch ``state_dict`` loads and gives the same
outputs. ``num_layers``, ``bias``, ``batch_first``, ``bidirectional``, initial states,
unbatched inputs, ``PackedSequence`` inputs (each sequence's state stops at its last
step) and ``dropout`` between layers (in training mode; the mask is drawn as
``nn.Dropout``'s, from numpy's generator) are PyTorch's, and the LSTM's ``proj_size``
(``weight_hr_l*``).

    >>> import symgrad as torch
    >>> from symgrad import nn
    >>> lstm = nn.LSTM(3, 5, num_layers=2, batch_first=True)
    >>> out, (h, c) = lstm(torch.ones(4, 7, 3))
    >>> tuple(out.shape), tuple(h.shape), tuple(c.shape)
    ((4, 7, 5), (2, 4, 5), (2, 4, 5))
    >>> [name for name, _ in nn.GRU(2, 3, bidirectional=True).named_parameters()][:5]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_ih_l0_reverse']
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..eager import dtypes as dt
from ..eager.functions import cat, stack
from ..eager.tensor import Tensor
from ..eager.tensor_ops import empty, zeros
from ..numpy_api import functions as ops
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence, _padded_sorted

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_step(mode: str, xg: Tensor, h: Any, w_hh: Tensor, b_hh: Tensor | None,
              w_hr: Tensor | None = None) -> Any:
    """One step from the input's projection ``xg = x W_ih^T + b_ih`` and the state
    (``(h, c)`` for an LSTM, ``h`` projected by ``w_hr`` with ``proj_size``); returns the
    new state."""
    if mode == "LSTM":
        h, c = h
        i, f, g, o = (xg + F.linear(h, w_hh, b_hh)).chunk(4, -1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        return (h if w_hr is None else F.linear(h, w_hr)), c
    hg = F.linear(h, w_hh, b_hh)
    if mode == "GRU":
        x_r, x_z, x_n = xg.chunk(3, -1)
        h_r, h_z, h_n = hg.chunk(3, -1)
        r, z = (x_r + h_r).sigmoid(), (x_z + h_z).sigmoid()
        n = (x_n + r * h_n).tanh()
        return (1 - z) * n + z * h
    pre = xg + hg
    return pre.tanh() if mode == "RNN_TANH" else pre.relu()


def _uniform_init(module: Module, hidden_size: int) -> None:
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -bound, bound)


def _kind(dtype: Any) -> Any:
    return dt.as_dtype(dtype) if dtype is not None else dt.DEFAULT


class RNNBase(Module):
    """The multi-layer, optionally bidirectional recurrence behind RNN, LSTM and GRU."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None):
        super().__init__()
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError("hidden_size and num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size
        out_size = proj_size or hidden_size
        gate_size = _GATES[mode] * hidden_size
        kind = _kind(dtype)
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            for direction in range(directions):
                width = input_size if layer == 0 else out_size * directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, width)), ("weight_hh",
                                                             (gate_size, out_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(empty(*shape, dtype=kind)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _uniform_init(self, self.hidden_size)

    def flatten_parameters(self) -> None:
        """Nothing to do (PyTorch's packs the weights for cuDNN; programs call it anyway)."""

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each layer and direction, in PyTorch's order."""
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional
                                                                    else 1))
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[k:k + per]]
                for k in range(0, len(names), per)]

    def _weights(self, layer: int, direction: int) -> tuple[Any, ...]:
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        return tuple(getattr(self, name + suffix, None) for name in
                     ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _initial(self, hx: Any, batch: int, like: Tensor) -> list[Any]:
        """The initial state of each layer and direction, ``(N, H)`` each (``h`` of
        ``proj_size`` with projections)."""
        directions = 2 if self.bidirectional else 1
        shape = (self.num_layers * directions, batch, self.hidden_size)
        h_shape = shape[:2] + (self.proj_size or self.hidden_size,)
        if hx is None:
            hx = zeros(*h_shape, dtype=like.dtype)
            if self.mode == "LSTM":
                hx = (hx, zeros(*shape, dtype=like.dtype))
        parts = hx if self.mode == "LSTM" else (hx,)
        for part, want in zip(parts, (h_shape, shape)):
            if tuple(part.shape) != want:
                raise RuntimeError(f"Expected hidden size {want}, got {tuple(part.shape)}")
        if self.mode == "LSTM":
            return list(zip(hx[0].unbind(0), hx[1].unbind(0)))
        return list(hx.unbind(0))

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        if not isinstance(input, Tensor):
            raise TypeError(f"{type(self).__name__} takes a Tensor or a PackedSequence, not "
                            f"{type(input).__name__}")
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D instead")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(1)
            if hx is not None:
                hx = tuple(h.unsqueeze(1) for h in hx) if self.mode == "LSTM" \
                    else hx.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        x, h_n = self._run(input, hx, None)
        if not batched:
            x = x.squeeze(1)
            h_n = tuple(h.squeeze(1) for h in h_n) if self.mode == "LSTM" else h_n.squeeze(1)
        elif self.batch_first:
            x = x.transpose(0, 1)
        return x, h_n

    def _forward_packed(self, input: PackedSequence, hx: Any) -> tuple[PackedSequence, Any]:
        """PyTorch's packed run: the batch in the packed (sorted) order, each sequence's
        state kept from its last step on; ``hx`` and ``h_n`` in the caller's order."""
        padded, lengths = _padded_sorted(input)
        order, back = (None, None) if input.sorted_indices is None else (
            input.sorted_indices._value.tolist(), input.unsorted_indices._value.tolist())
        if hx is not None and order is not None:
            hx = tuple(h[:, order] for h in hx) if self.mode == "LSTM" else hx[:, order]
        x, h_n = self._run(padded, hx, lengths)
        sizes = input.batch_sizes._value.tolist()
        data = cat([x[t, :b] for t, b in enumerate(sizes)], 0)
        if back is not None:
            h_n = tuple(h[:, back] for h in h_n) if self.mode == "LSTM" else h_n[:, back]
        return PackedSequence(data, input.batch_sizes, input.sorted_indices,
                              input.unsorted_indices), h_n

    def _run(self, input: Tensor, hx: Any, lengths: np.ndarray | None) -> tuple[Tensor, Any]:
        """The layers over a ``(T, N, input_size)`` input; with ``lengths``, sequence ``n``'s
        state stops changing after step ``lengths[n] - 1`` (and the reverse direction
        starts there)."""
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")
        states = self._initial(hx, input.shape[1], input)
        directions = 2 if self.bidirectional else 1
        finals = []
        x = input
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, direction)
                xg = F.linear(x, w_ih, b_ih).unbind(0)  # every step's input projection
                steps = range(len(xg) - 1, -1, -1) if direction == 1 else range(len(xg))
                state = states[layer * directions + direction]
                seq: list[Tensor] = [None] * len(xg)  # type: ignore[list-item]
                for t in steps:
                    new = _rnn_step(self.mode, xg[t], state, w_hh, b_hh, w_hr)
                    if lengths is not None and t >= lengths.min():
                        valid = Tensor._make((t < lengths)[:, None])
                        new = (tuple(ops.where(valid, a, b) for a, b in zip(new, state))
                               if self.mode == "LSTM" else ops.where(valid, new, state))
                    state = new
                    seq[t] = state[0] if self.mode == "LSTM" else state
                finals.append(state)
                outputs.append(stack(seq, 0))
            x = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        if self.mode == "LSTM":
            return x, (stack([h for h, _ in finals], 0), stack([c for _, c in finals], 0))
        return x, stack(finals, 0)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         dtype=dtype)
        self.nonlinearity = nonlinearity  # (not in the printed form, as in PyTorch)


class LSTM(RNNBase):
    """Long short-term memory; ``forward(input, (h_0, c_0))`` returns
    ``output, (h_n, c_n)``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, dtype=dtype)


class GRU(RNNBase):
    """Gated recurrent unit (PyTorch's form: the reset gate multiplies ``W_hn h + b_hn``)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, dtype=dtype)


class RNNCellBase(Module):
    """One step: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    _mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None, *, mode: str | None = None):
        super().__init__()
        if mode is not None:
            self._mode = mode
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gate_size, kind = _GATES[self._mode] * hidden_size, _kind(dtype)
        self.weight_ih = Parameter(empty(gate_size, input_size, dtype=kind))
        self.weight_hh = Parameter(empty(gate_size, hidden_size, dtype=kind))
        if bias:
            self.bias_ih = Parameter(empty(gate_size, dtype=kind))
            self.bias_hh = Parameter(empty(gate_size, dtype=kind))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _uniform_init(self, self.hidden_size)

    def _check(self, input: Tensor) -> bool:
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        return input.dim() == 2

    def _step(self, input: Tensor, state: Any) -> Any:
        xg = F.linear(input, self.weight_ih, self.bias_ih)
        return _rnn_step(self._mode, xg, state, self.weight_hh, self.bias_hh)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        batched = self._check(input)
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            hx = zeros(x.shape[0], self.hidden_size, dtype=input.dtype)
        elif not batched:
            hx = hx.unsqueeze(0)
        h = self._step(x, hx)
        return h if batched else h.squeeze(0)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            text += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text


class RNNCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, dtype=dtype,
                         mode="RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU")
        self.nonlinearity = nonlinearity


class GRUCell(RNNCellBase):
    _mode = "GRU"


class LSTMCell(RNNCellBase):
    """``forward(input, (h, c))`` returns ``(h', c')``."""

    _mode = "LSTM"

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:
        batched = self._check(input)
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            zero = zeros(x.shape[0], self.hidden_size, dtype=input.dtype)
            hx = (zero, zero)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = self._step(x, hx)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))
