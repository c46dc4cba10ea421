"""Convolutions and padding of ``torch.nn.functional``, for 1, 2 and 3 spatial dims.

Every function here is a composition of Tensor operations the compiler already
knows, so values and gradients (and double backward) come from the primitives'
own rules; nothing here has a derivative of its own. The windows of a
convolution are one primitive, ``windows`` (im2col: the shape ``(N, C, *out,
*kernel)``, parameters the kernel, stride and dilation only; without groups, a
window spans the channels too, ``(N, 1, *out, C, *kernel)``, the matrix's rows as
they lie), and the contraction with the weight is one matrix product (a BLAS
call, forward and backward). A transposed convolution adds the product of ``x`` and ``w`` back
into its output with ``unwindows`` (col2im), the
transpose of ``windows``, so each is the other's gradient. Pooling, on the same
windows, is in :mod:`.pooling`; ``interpolate`` in :mod:`.resampling`.

    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> x = torch.arange(16.0).reshape(1, 1, 4, 4)
    >>> F.conv2d(x, torch.ones(1, 1, 2, 2), stride=2)
    tensor([[[[10., 18.],
              [42., 50.]]]])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..eager import dtypes as dt
from ..eager.fastpath import fill_window_rows
from ..eager.functions import cat
from ..eager.methods import linear_rows, named
from ..eager.saved_indices import watch_copied
from ..eager.tensor import Tensor
from ..numpy_api.shapes import add_windows, sliding_windows

PAD_MODES = {"constant": None, "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _tuple(value: Any, d: int, name: str) -> tuple[int, ...]:
    if isinstance(value, (int, np.integer)):
        return (int(value),) * d
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * d
    if len(value) != d:
        raise ValueError(f"{name} must be an int or a tuple of {d} ints, not {value}")
    return value


def _batched(input: Tensor, d: int, name: str) -> tuple[Tensor, bool]:
    """``input`` with a batch axis, and whether one was added (PyTorch accepts
    unbatched ``(C, *spatial)`` inputs)."""
    if input.ndim == d + 2:
        return input, False
    if input.ndim == d + 1:
        return input.unsqueeze(0), True
    raise RuntimeError(f"{name}: expected a {d + 1}-d (unbatched) or {d + 2}-d (batched) "
                       f"input, got one of shape {tuple(input.shape)}")


def _windows(x: Tensor, out: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
             dilation: Sequence[int]) -> Tensor:
    """``(N, C, *out, *kernel)``: one primitive whatever the sizes (:mod:`..prims.windows`)."""
    found = sliding_windows(x, tuple(kernel), tuple(stride), tuple(dilation))
    assert tuple(found.shape[2:2 + len(out)]) == tuple(out)
    return found


def _out_size(size: int, kernel: int, stride: int, padding: int, dilation: int,
              ceil_mode: bool = False) -> int:
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    if ceil_mode:
        out = -(-span // stride) + 1
        if (out - 1) * stride >= size + padding:  # the last window must start inside
            out -= 1
    else:
        out = span // stride + 1
    if out < 1:
        raise RuntimeError(f"the output of a window of {kernel} (dilation {dilation}, padding "
                           f"{padding}, stride {stride}) over {size} elements would be empty: "
                           "the input is too small")
    return out


# ---------------------------------------------------------------------------
# padding


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
        ) -> Tensor:
    """``F.pad``: ``pad`` lists (left, right) pairs from the last axis backwards;
    ``mode`` is ``constant`` (``value``, 0 by default), ``reflect``, ``replicate``
    or ``circular``. Negative pads crop, as PyTorch's do."""
    if mode not in PAD_MODES:
        raise NotImplementedError(f"F.pad: mode must be one of {', '.join(PAD_MODES)}, "
                                  f"not {mode!r}")
    pad = [int(p) for p in pad]
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"F.pad: padding length must be even and at most twice the number of "
                         f"dimensions ({input.ndim}), got {len(pad)}")
    widths = [(0, 0)] * input.ndim
    for j in range(len(pad) // 2):
        widths[input.ndim - 1 - j] = (pad[2 * j], pad[2 * j + 1])
    if mode == "constant":
        return _pad_constant(input, widths, 0.0 if value is None else value)
    if value not in (None, 0, 0.0):
        raise ValueError(f"F.pad: value is for mode='constant' only, not {mode!r}")
    out = input
    for axis, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        size = input.shape[axis]
        if size + lo + hi < (mode != "circular"):
            raise RuntimeError(f"F.pad: padding ({lo}, {hi}) leaves no element of a dimension "
                               f"of size {size}")
        if mode == "reflect" and max(lo, hi) >= size:
            raise RuntimeError(f"F.pad: padding ({lo}, {hi}) must be less than the size of "
                               f"the padded dimension ({size}) in reflect mode")
        out = np.take(out, _pad_index(size, lo, hi, mode), axis=axis)
    return named(out, input, {"reflect": "ReflectionPad", "replicate": "ReplicationPad",
                              "circular": "CircularPad"}[mode] + "Backward0", (input,))


def _pad_index(size: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """The source of each element along a padded axis (a negative pad crops first)."""
    if mode == "circular":  # PyTorch crops first, then wraps around what is left
        start, kept = max(-lo, 0), size - max(-lo, 0) - max(-hi, 0)
        if kept == 0 and max(lo, hi) <= 0:
            return np.zeros(0, dtype=np.int64)
        if kept <= 0 or max(lo, hi) > kept:
            raise RuntimeError(f"F.pad: circular padding ({lo}, {hi}) must be at most the "
                               f"size left after cropping ({max(kept, 0)})")
        return start + np.arange(-max(lo, 0), kept + max(hi, 0)) % kept
    index = np.arange(-lo, size + hi)
    if mode == "reflect":
        index = np.abs(index)
        return np.where(index >= size, 2 * (size - 1) - index, index)
    return np.clip(index, 0, size - 1)


def _pad_constant(input: Tensor, widths: list[tuple[int, int]], value: float) -> Tensor:
    crop = tuple(slice(max(-lo, 0), input.shape[i] - max(-hi, 0))
                 for i, (lo, hi) in enumerate(widths))
    out = input[crop] if any(min(w) < 0 for w in widths) else input
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if any(lo or hi for lo, hi in grow):
        out = _padded(out, grow, value)
    return named(out, input, "ConstantPadNdBackward0", (input,))


def _padded(x: Tensor, widths: Sequence[tuple[int, int]], value: float) -> Tensor:
    """``x`` between blocks of ``value`` of its dtype, joined axis by axis, as PyTorch's
    constant pad (np.pad would add a float64 border: a float32 ``x`` would come back
    float64, integers through float64; a write into a tensor of ``value`` would add ``x``
    to zeros, making its -0.0 +0.0)."""
    for axis, (lo, hi) in enumerate(widths):
        if lo or hi:
            shape = list(x.shape)
            # (value is a float, as PyTorch's: an int64 pad value above 2**53 rounds as there)
            blocks = [Tensor._make(dt.cast(np.full(shape[:axis] + [n] + shape[axis + 1:],
                                                   float(value)), x.dtype)) for n in (lo, hi)]
            x = cat([blocks[0], x, blocks[1]], axis)
    return x


# ---------------------------------------------------------------------------
# convolutions


def _conv_padding(padding: Any, d: int, kernel: Sequence[int], stride: Sequence[int],
                  dilation: Sequence[int]) -> list[tuple[int, int]]:
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * d
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = [dil * (k - 1) for k, dil in zip(kernel, dilation)]
            return [(t // 2, t - t // 2) for t in total]
        raise ValueError(f"invalid padding string {padding!r}: use 'valid' or 'same'")
    return [(p, p) for p in _tuple(padding, d, "padding")]


def _conv(input: Tensor, weight: Tensor, bias: Any, stride: Any, padding: Any, dilation: Any,
          groups: int, d: int, name: str) -> Tensor:
    x, unbatched = _batched(input, d, name)
    kernel = tuple(weight.shape[2:])
    if weight.ndim != d + 2:
        raise RuntimeError(f"{name}: weight must be {d + 2}-d, got shape {tuple(weight.shape)}")
    stride, dilation = _tuple(stride, d, "stride"), _tuple(dilation, d, "dilation")
    n, c = x.shape[:2]
    if c != weight.shape[1] * groups or weight.shape[0] % groups:
        raise RuntimeError(f"{name}: input with {c} channels, groups={groups} and weight of "
                           f"shape {tuple(weight.shape)} do not fit: expected "
                           f"{weight.shape[1] * groups} input channels")
    widths = _conv_padding(padding, d, kernel, stride, dilation)
    data = groups == 1 and _plain_data(x)
    if data:  # the windows as data: (O, C*K) @ (N, C*K, P), no node, PyTorch's order
        fold, padded = _foldable(bias, weight, x), _zero_padded(x._value, widths)
        out = [_out_size(padded.shape[2 + i], kernel[i], stride[i], 0, dilation[i])
               for i in range(d)]
        rows = Tensor._make(_window_rows(padded, kernel, stride, dilation, out, fold))
        w = weight.reshape(weight.shape[0], math.prod(weight.shape[1:]))
        if fold:  # the bias as the weight of a row of ones: no pass of its own
            w = cat([w, bias.reshape(-1, 1)], 1)
        # (the weight expanded over the batch first: the matmul's fast path, without
        # numpy's dispatch, 28 against 46 us; the same nodes)
        # (the windows are a copy of the input, which PyTorch's node saves: watched)
        y = watch_copied(w.expand(n, *w.shape) @ rows, 1, input)
        y = y.reshape(n, weight.shape[0], *out)  # (N, O, P)
        return _output(y, None if fold else bias, unbatched, input, weight, bias)
    if any(lo or hi for lo, hi in widths):
        x = np.pad(x, [(0, 0), (0, 0), *widths])
    out = [_out_size(x.shape[2 + i], kernel[i], stride[i], 0, dilation[i]) for i in range(d)]
    if groups == 1:
        fold = _foldable(bias, weight, x) and weight.dtype in (np.float32, np.float64)
        y = _contract_rows(x, weight, n, out, stride, dilation, bias if fold else None)
        return _output(y, None if fold else bias, unbatched, input, weight, bias)
    else:
        y = _contract(_windows(x, out, kernel, stride, dilation), weight, groups, n, out,
                      None if getattr(input, "requires_grad", True) else input)
    return _output(y, bias, unbatched, input, weight, bias)


def _output(y: Tensor, add: Any, unbatched: bool, input: Tensor, weight: Tensor,
            bias: Any) -> Tensor:
    """``y`` ``(N, O, *out)`` plus the bias ``add`` (None: none, or ``y`` has it),
    without the batch axis the input lacked, and C-contiguous as PyTorch's (``y.view(n,
    -1)`` needs it; products leave ``(N, *out, O)``); one node of ``input``, ``weight`` and
    ``bias`` as PyTorch's."""
    if add is not None:
        y = y + add.reshape(-1, *([1] * (y.ndim - 2)))
    if not y.is_contiguous():
        y = y.contiguous()
    if unbatched:
        y = y.squeeze(0)
    return named(y, input, "ConvolutionBackward0", (input, weight, bias))


def _foldable(bias: Any, weight: Tensor, x: Tensor) -> bool:
    """The bias can be the weight of a row of ones in the window matrix: a vector of the
    weight's and the input's dtype (else ``y + bias`` promotes as it does)."""
    return (isinstance(bias, Tensor) and bias.shape == (weight.shape[0],)
            and bias.dtype == weight.dtype == x.dtype)


def _zero_padded(x: np.ndarray, widths: Sequence[tuple[int, int]]) -> np.ndarray:
    """``x`` ``(N, C, *spatial)`` between zeros (``np.pad``'s values, without its Python
    steps: 0.01 against 0.04 ms for LeNet's input)."""
    if not any(lo or hi for lo, hi in widths):
        return x
    padded = np.zeros((*x.shape[:2], *(m + lo + hi for m, (lo, hi) in zip(x.shape[2:], widths))),
                      dtype=x.dtype)
    padded[(..., *(slice(lo, lo + m) for m, (lo, _) in zip(x.shape[2:], widths)))] = x
    return padded


def _plain_data(x: Any) -> bool:
    """``x`` is a Tensor of floating-point numbers whose windows need no gradient (a
    network's input): a convolution takes its windows from its numpy data."""
    return (isinstance(x, Tensor) and not x.requires_grad and type(x._value) is np.ndarray
            and x._value.dtype.kind == "f")


def _window_rows(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int],
                 dilation: Sequence[int], out: Sequence[int], ones: bool = False
                 ) -> np.ndarray:
    """The windows of ``x`` ``(N, C, *spatial)`` as the matrices ``(N, C*K, P)`` (rows in
    the order of the weight's ``(C, *kernel)``, columns in that of ``out``), and a last
    row of ones if ``ones``: one copy of the sliding view, the output's positions
    innermost (3x faster than the kernel's few elements innermost; LeNet's conv1 0.27
    ms, 0.33 as one numpy copy per offset), or from a geometry's third call the loops
    compiled for it (:func:`~symgrad.backend.numba.window_gather.fill_window_rows`: 0.19
    ms)."""
    n, c, d = x.shape[0], x.shape[1], len(kernel)
    span = tuple(dil * (k - 1) + 1 for k, dil in zip(kernel, dilation))
    view = sliding_window_view(x, span, axis=tuple(range(2, 2 + d)))[  # (N, C, *out, *kernel)
        (..., *(slice(0, (m - 1) * s + 1, s) for m, s in zip(out, stride)),
         *(slice(None, None, dil) for dil in dilation))]
    taps, places = c * math.prod(kernel), math.prod(out)
    rows = np.empty((n, taps + ones, places), dtype=x.dtype)
    if not fill_window_rows(x, tuple(kernel), tuple(stride), tuple(dilation), tuple(out),
                            rows):
        np.copyto(rows[:, :taps].reshape(n, c, *kernel, *out),
                  view.transpose(0, 1, *range(2 + d, 2 + 2 * d), *range(2, 2 + d)))
    if ones:
        rows[:, taps] = 1
    return rows


def _contract_rows(x: Tensor, weight: Tensor, n: int, out: Sequence[int],
                   stride: Sequence[int], dilation: Sequence[int], bias: Any = None
                   ) -> Tensor:
    """``x`` ``(N, C, *spatial)`` convolved with the weight ``(O, C, *kernel)`` as one
    matrix product ``(N*P, C*K) @ (C*K, O)`` whose rows are the windows of ``x`` over
    its channels too (a window of all ``C`` channels: the windows ``(N, 1, *out, C,
    *kernel)`` are the rows in C order, with no reordering copy, 0.3-0.4 ms of LeNet's
    second convolution; their gradient is added back, col2im, as it comes from the
    product's). A ``bias`` (a vector of their float dtype) is added by the product
    itself, one node (F.linear's primitive: the gemm adds into the bias, beta = 1;
    0.05 ms less for LeNet's second convolution than ``y + bias`` after it, 3 nodes less)."""
    d, cout, c = len(out), weight.shape[0], x.shape[1]
    span = math.prod(weight.shape[2:])
    cols = sliding_windows(x, (c, *weight.shape[2:]), (1, *stride), (1, *dilation))
    rows = cols.reshape(n * math.prod(out), c * span)
    y = linear_rows(rows, weight.reshape(cout, c * span), bias)  # (N*P, O)
    return y.reshape(n, *out, cout).permute(0, 1 + d, *range(1, 1 + d))


def _contract(cols: Tensor, weight: Tensor, groups: int, n: int, out: Sequence[int],
              source: Any = None) -> Tensor:
    """The windows ``(N, C, *out, *kernel)`` contracted with the weight ``(O, C/groups,
    *kernel)`` into ``(N, O, *out)`` as one batched matrix product over the groups
    ``(G, N*P, C/G*K) @ (G, C/G*K, O/G)`` (``groups == 1``: :func:`_contract_rows`):
    ``matmul`` stays a BLAS call in the forward and in both products of its gradient,
    where an ``einsum`` over six axes is a loop. ``source``: the input, when the windows
    are data (copied from it, where PyTorch's node saves it: watched)."""
    d, cout = len(out), weight.shape[0]
    c, span = cols.shape[1], math.prod(weight.shape[2:])
    places = n * math.prod(out)
    spatial = tuple(range(2, 2 + d))
    cg, og = c // groups, cout // groups
    cols = cols.reshape(n, groups, cg, *out, *weight.shape[2:])
    rows = cols.permute(1, 0, *(s + 1 for s in spatial), 2, *range(3 + d, 3 + 2 * d))
    rows = rows.reshape(groups, places, cg * span)
    y = rows @ weight.reshape(groups, og, cg * span).permute(0, 2, 1)  # (G, N*P, O/G)
    if source is not None:
        watch_copied(y, 0, source)
    y = y.reshape(groups, n, *out, og).permute(1, 0, 2 + d, *range(2, 2 + d))
    return y.reshape(n, cout, *out)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``F.conv2d``: cross-correlation of ``(N, C, H, W)`` with ``(O, C/groups, kH, kW)``;
    ``padding`` may be ``'same'`` or ``'valid'``."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose(input: Tensor, weight: Tensor, bias: Any, stride: Any, padding: Any,
                    output_padding: Any, groups: int, dilation: Any, d: int, name: str
                    ) -> Tensor:
    x, unbatched = _batched(input, d, name)
    kernel = tuple(weight.shape[2:])
    stride, dilation = _tuple(stride, d, "stride"), _tuple(dilation, d, "dilation")
    padding, extra = _tuple(padding, d, "padding"), _tuple(output_padding, d, "output_padding")
    if any(e >= max(s, dil) for e, s, dil in zip(extra, stride, dilation)):
        raise RuntimeError(f"{name}: output_padding {extra} must be smaller than either stride "
                           f"{stride} or dilation {dilation}")
    n, c, spatial = x.shape[0], x.shape[1], tuple(x.shape[2:])
    if c != weight.shape[0] or c % groups:
        raise RuntimeError(f"{name}: input with {c} channels and weight of shape "
                           f"{tuple(weight.shape)} (groups={groups}) do not fit")
    cols = _spread(x, weight, groups, n, spatial)
    full = [(spatial[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 + extra[i]
            for i in range(d)]
    y = add_windows(cols, kernel, stride, dilation, tuple(full))
    size = [full[i] - extra[i] - 2 * padding[i] + extra[i] for i in range(d)]
    if any(s < 1 for s in size):
        raise RuntimeError(f"{name}: padding {padding} leaves an empty output")
    y = y[(slice(None), slice(None), *(slice(p, p + s) for p, s in zip(padding, size)))]
    return _output(y, bias, unbatched, input, weight, bias)


def _spread(x: Tensor, weight: Tensor, groups: int, n: int, spatial: Sequence[int]) -> Tensor:
    """The windows ``(N, O, *spatial, *kernel)`` a transposed convolution adds back:
    the input ``(N, C, *spatial)`` times the weight ``(C, O/groups, *kernel)`` as one
    matrix product ``(N*S, C) @ (C, O*K)`` (batched over the groups), as in :func:`_contract`."""
    d, c, og, kernel = len(spatial), x.shape[1], weight.shape[1], tuple(weight.shape[2:])
    cg, span, places = c // groups, math.prod(kernel), n * math.prod(spatial)
    inner = tuple(range(2 + d, 2 + 2 * d))
    if groups == 1:
        rows = x.permute(0, *range(2, 2 + d), 1).reshape(places, c)
        cols = (rows @ weight.reshape(c, og * span)).reshape(n, *spatial, og, *kernel)
        return cols.permute(0, 1 + d, *range(1, 1 + d), *inner)
    rows = x.reshape(n, groups, cg, *spatial).permute(1, 0, *range(3, 3 + d), 2)
    cols = rows.reshape(groups, places, cg) @ weight.reshape(groups, cg, og * span)
    cols = cols.reshape(groups, n, *spatial, og, *kernel)
    cols = cols.permute(1, 0, 2 + d, *range(2, 2 + d), *(a + 1 for a in inner))
    return cols.reshape(n, groups * og, *spatial, *kernel)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """``F.conv_transpose2d``: the adjoint of ``conv2d``; weight ``(C, O/groups, kH, kW)``."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3, "conv_transpose3d")
