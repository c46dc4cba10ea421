"""Still more ``torch.nn`` layers (exported there) over :mod:`.extra_functional`:
``LPPool1d``/``LPPool2d``, ``LocalResponseNorm``, ``ChannelShuffle``, ``AlphaDropout``,
``FeatureAlphaDropout`` (their masks from the default generator, not PyTorch's stream),
``MultiLabelMarginLoss``, ``TripletMarginWithDistanceLoss`` and ``CTCLoss``; printed as PyTorch's.

    >>> import symgrad as torch
    >>> torch.nn.LPPool1d(2, 3)
    LPPool1d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..eager.tensor import Tensor
from . import functional as F
from .layers import PairwiseDistance
from .module import Module
from .more_layers import _Loss

__all__ = ["LPPool1d", "LPPool2d", "LocalResponseNorm", "ChannelShuffle", "AlphaDropout",
           "FeatureAlphaDropout", "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss",
           "CTCLoss"]


class _LPPoolNd(Module):
    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride = norm_type, kernel_size, stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool2d(_LPPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class ChannelShuffle(Module):
    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class AlphaDropout(Module):
    """SELU's dropout in training mode (``model.train()``); the identity in eval."""

    _feature = False

    def __init__(self, p: float = 0.5, inplace: bool = False, generator: Any = None):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace, self.generator = p, inplace, generator

    def forward(self, input: Tensor) -> Tensor:
        fn = F.feature_alpha_dropout if self._feature else F.alpha_dropout
        return fn(input, self.p, self.training, self.inplace, self.generator)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class FeatureAlphaDropout(AlphaDropout):
    """``AlphaDropout`` of whole channels."""

    _feature = True


class CTCLoss(_Loss):
    """``F.ctc_loss`` as a module: ``blank``, ``reduction``, ``zero_infinity``."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Any,
                target_lengths: Any) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


class MultiLabelMarginLoss(_Loss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(self, *, distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                 margin: float = 1.0, swap: bool = False, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function = (distance_function if distance_function is not None
                                  else PairwiseDistance())
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)
