"""The layers of ``torch.nn`` for images and sequences: convolutions, pooling, padding,
normalizations, ``Embedding`` and the activations beyond :mod:`.layers`.

Each ``forward`` calls :mod:`symgrad.nn.functional`; parameters are initialized
from the distributions PyTorch's are (convolutions: Kaiming-uniform with
``a = sqrt(5)`` and a bias uniform in ``±1/sqrt(fan_in)``; ``Embedding``: standard
normal, the padding row zero), so a seeded model starts from the same
distribution, not the same numbers (copy a state dict for those).

    >>> import symgrad as torch
    >>> from symgrad import nn
    >>> net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
    >>> net(torch.ones(2, 1, 8, 8)).shape
    torch.Size([2, 4, 4, 4])
"""

from __future__ import annotations

from typing import Any

from ..eager import dtypes as dt
from ..eager.tensor import Tensor
from ..eager.tensor_ops import empty, ones, zeros
from . import functional as F
from . import init
from .convolution import _conv_padding, _tuple
from .layers import _Activation
from .module import Module
from .parameter import Parameter


def _kind(dtype: Any) -> Any:
    return dt.as_dtype(dtype) if dtype is not None else dt.DEFAULT


# ---------------------------------------------------------------------------
# convolutions


class _ConvNd(Module):
    _d = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 output_padding: Any = 0):
        super().__init__()
        d = self._d
        if in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of 'zeros', 'reflect', 'replicate' or "
                             f"'circular', not {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple(kernel_size, d, "kernel_size")
        self.stride, self.dilation = _tuple(stride, d, "stride"), _tuple(dilation, d, "dilation")
        self.padding = padding if isinstance(padding, str) else _tuple(padding, d, "padding")
        self.output_padding = _tuple(output_padding, d, "output_padding")
        self.padding_mode = padding_mode
        shape = ((in_channels, out_channels // groups) if self._transposed
                 else (out_channels, in_channels // groups))
        kind = _kind(dtype)
        self.weight = Parameter(empty(*shape, *self.kernel_size, dtype=kind))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=kind))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.layer_default_(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        conv = getattr(F, f"conv{self._d}d")
        if self.padding_mode == "zeros":
            return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)
        # PyTorch pads in the mode first ('same' split as F.conv splits it: the extra on the right)
        sides = _conv_padding(self.padding, self._d, self.kernel_size, self.stride, self.dilation)
        widths = [w for pair in reversed(sides) for w in pair]
        return conv(F.pad(input, widths, mode=self.padding_mode), self.weight, self.bias,
                    self.stride, 0, self.dilation, self.groups)

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding not in ((0,) * self._d, "valid"):
            text += f", padding={self.padding!r}" if isinstance(self.padding, str) \
                else f", padding={self.padding}"
        if self.dilation != (1,) * self._d:
            text += f", dilation={self.dilation}"
        if self._transposed and self.output_padding != (0,) * self._d:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv1d(_ConvNd):
    _d = 1


class Conv2d(_ConvNd):
    _d = 2


class Conv3d(_ConvNd):
    _d = 3


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        conv = getattr(F, f"conv_transpose{self._d}d")
        return conv(input, self.weight, self.bias, self.stride, self.padding,
                    self._output_padding(input, output_size), self.groups, self.dilation)

    def _output_padding(self, input: Tensor, output_size: Any) -> Any:
        """The output padding that gives ``output_size`` (with or without the batch and
        channel sizes), as PyTorch's: it must lie within ``stride - 1`` of the smallest."""
        if output_size is None:
            return self.output_padding
        d, lead = self._d, 2 if input.ndim == self._d + 2 else 1
        size = [int(n) for n in output_size]
        if len(size) == lead + d:
            size = size[lead:]
        if len(size) != d:
            raise ValueError(f"ConvTranspose{d}D: for {input.ndim}D input, output_size must have "
                             f"{d} or {lead + d} elements (got {len(size)})")
        k, st, pad, dil = self.kernel_size, self.stride, self.padding, self.dilation
        low = [(input.shape[lead + i] - 1) * st[i] - 2 * pad[i] + dil[i] * (k[i] - 1) + 1
               for i in range(d)]
        high = [n + s - 1 for n, s in zip(low, st)]
        if any(not lo <= n <= hi for n, lo, hi in zip(size, low, high)):
            raise ValueError(f"requested an output size of {size}, but valid sizes range from "
                             f"{low} to {high} (for an input of {input.shape[lead:]})")
        return tuple(n - lo for n, lo in zip(size, low))


class ConvTranspose1d(_ConvTransposeNd):
    _d = 1


class ConvTranspose2d(_ConvTransposeNd):
    _d = 2


class ConvTranspose3d(_ConvTransposeNd):
    _d = 3


# ---------------------------------------------------------------------------
# pooling and padding


class _MaxPoolNd(Module):
    _d = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:
        return getattr(F, f"max_pool{self._d}d")(input, self.kernel_size, self.stride,
                                                 self.padding, self.dilation, self.ceil_mode,
                                                 self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _d = 1


class MaxPool2d(_MaxPoolNd):
    _d = 2


class MaxPool3d(_MaxPoolNd):
    _d = 3


class _AvgPoolNd(Module):
    _d = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: Any = None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        if self._d == 1:
            return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                                self.ceil_mode, self.count_include_pad)
        return getattr(F, f"avg_pool{self._d}d")(input, self.kernel_size, self.stride,
                                                 self.padding, self.ceil_mode,
                                                 self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    _d = 1


class AvgPool2d(_AvgPoolNd):
    _d = 2


class AvgPool3d(_AvgPoolNd):
    _d = 3


class _AdaptivePool(Module):
    _d = 2
    _kind = "avg"

    def __init__(self, output_size: Any, return_indices: bool = False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Any:
        fn = getattr(F, f"adaptive_{self._kind}_pool{self._d}d")
        if self._kind == "max":
            return fn(input, self.output_size, self.return_indices)
        return fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


def _adaptive(name: str, d: int, kind: str) -> type:
    return type(name, (_AdaptivePool,), {"_d": d, "_kind": kind})


AdaptiveAvgPool1d = _adaptive("AdaptiveAvgPool1d", 1, "avg")
AdaptiveAvgPool2d = _adaptive("AdaptiveAvgPool2d", 2, "avg")
AdaptiveAvgPool3d = _adaptive("AdaptiveAvgPool3d", 3, "avg")
AdaptiveMaxPool1d = _adaptive("AdaptiveMaxPool1d", 1, "max")
AdaptiveMaxPool2d = _adaptive("AdaptiveMaxPool2d", 2, "max")
AdaptiveMaxPool3d = _adaptive("AdaptiveMaxPool3d", 3, "max")


class _PadNd(Module):
    _mode = "constant"
    _d = 2

    def __init__(self, padding: Any, value: float = 0.0):
        super().__init__()
        self.padding = _tuple(padding, 2 * self._d, "padding")
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode,
                     self.value if self._mode == "constant" else None)

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _pad(name: str, mode: str, d: int) -> type:
    return type(name, (_PadNd,), {"_mode": mode, "_d": d})


ZeroPad1d, ZeroPad2d, ZeroPad3d = (_pad(f"ZeroPad{d}d", "constant", d) for d in (1, 2, 3))
ConstantPad1d, ConstantPad2d, ConstantPad3d = (_pad(f"ConstantPad{d}d", "constant", d)
                                               for d in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (_pad(f"ReflectionPad{d}d", "reflect", d)
                                                     for d in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (
    _pad(f"ReplicationPad{d}d", "replicate", d) for d in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (_pad(f"CircularPad{d}d", "circular", d)
                                               for d in (1, 2, 3))


# ---------------------------------------------------------------------------
# normalization and embedding


class LayerNorm(Module):
    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape, self.eps = tuple(shape), eps
        self.elementwise_affine = elementwise_affine
        kind = _kind(dtype)
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape, dtype=kind))
            self.bias = Parameter(zeros(*self.normalized_shape, dtype=kind)) if bias else None
        else:
            self.weight = self.bias = None

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        kind = _kind(dtype)
        self.weight = Parameter(ones(num_channels, dtype=kind)) if affine else None
        self.bias = Parameter(zeros(num_channels, dtype=kind)) if affine else None

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _NormBase(Module):
    """The state of batch and instance norms: the affine weight and bias, the running
    statistics as buffers (PyTorch's ``_NormBase``)."""

    def __init__(self, num_features: int, eps: float, momentum: float | None, affine: bool,
                 track_running_stats: bool, dtype: Any):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        kind = _kind(dtype)
        self.weight = Parameter(ones(num_features, dtype=kind)) if affine else None
        self.bias = Parameter(zeros(num_features, dtype=kind)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=kind))
            self.register_buffer("running_var", ones(num_features, dtype=kind))
            self.register_buffer("num_batches_tracked", zeros((), dtype=dt.as_dtype("int64")))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def reset_running_stats(self) -> None:
        """Running mean 0, variance 1, no batch tracked (in place, as PyTorch's)."""
        if self.track_running_stats:
            self.running_mean.data.zero_()
            self.running_var.data.fill_(1.0)
            self.num_batches_tracked.data.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            self.weight.data.fill_(1.0)
            self.bias.data.zero_()

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    _dims: tuple[int, ...] = (2, 3)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in self._dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input "
                             f"(got {input.ndim}D input)")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.data.add_(1)
            if self.momentum is None:  # a cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or self.running_mean is None
        return F.batch_norm(input, self.running_mean if not self.training or
                            self.track_running_stats else None,
                            self.running_var if not self.training or
                            self.track_running_stats else None,
                            self.weight, self.bias, use_batch, momentum, self.eps)


class BatchNorm1d(_BatchNorm):
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    _dims = (5,)


class _InstanceNorm(_NormBase):
    _dim = 1  # spatial dims

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (self._dim + 1, self._dim + 2):
            raise ValueError(f"expected {self._dim + 1}D or {self._dim + 2}D input (got "
                             f"{input.ndim}D input)")
        unbatched = input.ndim == self._dim + 1
        x = input.unsqueeze(0) if unbatched else input
        if self.affine and x.shape[1] != self.num_features:
            raise ValueError(f"expected input's size at dim=1 to match num_features "
                             f"({self.num_features}), but got: {x.shape[1]}.")
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _dim = 1


class InstanceNorm2d(_InstanceNorm):
    _dim = 2


class InstanceNorm3d(_InstanceNorm):
    _dim = 3


class Embedding(Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: Any = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Any = None, _freeze: bool = False,
                 device: Any = None, dtype: Any = None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=_kind(dtype)),
                                    requires_grad=not _freeze)
            init.normal_(self.weight)
            if padding_idx is not None:
                self.weight.data[padding_idx] = 0.0
        else:
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, **kwargs: Any) -> Embedding:
        rows, dim = embeddings.shape
        return cls(rows, dim, padding_idx, _weight=embeddings, _freeze=freeze, **kwargs)

    def forward(self, input: Any) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            text += ", sparse=True"
        return text


# ---------------------------------------------------------------------------
# activations


def _activation(name: str, fn_name: str, *params: tuple[str, Any]) -> type:
    """A module class calling ``F.<fn_name>(input, *params)``."""
    names = [p for p, _ in params]

    def __init__(self, *args: Any, inplace: bool = False, **kwargs: Any) -> None:
        _Activation.__init__(self, inplace)
        values = dict(params)
        values.update(zip(names, args))
        values.update(kwargs)
        for key, value in values.items():
            setattr(self, key, value)

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, fn_name)(input, *(getattr(self, p) for p in names))

    def extra_repr(self) -> str:
        return ", ".join(f"{p}={getattr(self, p)}" for p in names)

    return type(name, (_Activation,), {"__init__": __init__, "forward": forward,
                                       "extra_repr": extra_repr})


GELU = _activation("GELU", "gelu", ("approximate", "none"))
SiLU = _activation("SiLU", "silu")
Mish = _activation("Mish", "mish")
SELU = _activation("SELU", "selu")
CELU = _activation("CELU", "celu", ("alpha", 1.0))
Softsign = _activation("Softsign", "softsign")
Hardswish = _activation("Hardswish", "hardswish")
Hardsigmoid = _activation("Hardsigmoid", "hardsigmoid")
Hardtanh = _activation("Hardtanh", "hardtanh", ("min_val", -1.0), ("max_val", 1.0))
ReLU6 = _activation("ReLU6", "relu6")
LogSigmoid = _activation("LogSigmoid", "logsigmoid")
Tanhshrink = _activation("Tanhshrink", "tanhshrink")
Softshrink = _activation("Softshrink", "softshrink", ("lambd", 0.5))
Hardshrink = _activation("Hardshrink", "hardshrink", ("lambd", 0.5))
Threshold = _activation("Threshold", "threshold", ("threshold", 0.0), ("value", 0.0))
GLU = _activation("GLU", "glu", ("dim", -1))
Softmin = _activation("Softmin", "softmin", ("dim", None))


class PReLU(Module):
    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None):
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(ones(num_parameters, dtype=_kind(dtype)) * init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)
