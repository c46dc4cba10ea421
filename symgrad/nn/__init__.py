"""``symgrad.nn``: PyTorch's ``torch.nn`` for symgrad Tensors.

:mod:`.module` (``Module``, ``Sequential``, ``ModuleList``, ``ModuleDict``),
:mod:`.parameter` (``Parameter``), :mod:`.layers` (``Linear``, activations,
``Dropout``, losses), :mod:`.spatial` (convolutions, pooling, padding,
normalizations, ``Embedding``, more activations), :mod:`.transformer`
(``MultiheadAttention``, the Transformer layers), :mod:`.functional`
(``torch.nn.functional``, with :mod:`.convolution` and :mod:`.activation`) and
:mod:`.init` (initializers), :mod:`.recurrent` (``RNN``, ``LSTM``, ``GRU`` and their
cells), :mod:`.more_layers` (upsampling, ``ParameterList``, ``Bilinear``, ``RMSNorm``,
channel dropout, more losses). A model written against ``torch.nn`` runs with
``import symgrad as torch``; its ``loss.backward()`` goes through symgrad's
compiler like any Tensor's.

    >>> import symgrad as torch
    >>> import symgrad.nn as nn
    >>> _ = torch.manual_seed(0)
    >>> model = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
    >>> loss = nn.MSELoss()(model(torch.ones(3, 2)), torch.zeros(3, 1))
    >>> loss.backward()
    >>> [tuple(p.grad.shape) for p in model.parameters()]
    [(4, 2), (4,), (1, 4), (1,)]
"""

from . import functional, init, utils
from .extra_layers import (
    AlphaDropout,
    ChannelShuffle,
    CTCLoss,
    FeatureAlphaDropout,
    LocalResponseNorm,
    LPPool1d,
    LPPool2d,
    MultiLabelMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .folding import Fold, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, Unfold
from .layers import (
    ELU,
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    Dropout,
    Flatten,
    HuberLoss,
    Identity,
    KLDivLoss,
    L1Loss,
    LeakyReLU,
    Linear,
    LogSoftmax,
    MSELoss,
    NLLLoss,
    PairwiseDistance,
    ReLU,
    RReLU,
    Sigmoid,
    SmoothL1Loss,
    Softmax,
    Softmax2d,
    Softplus,
    Tanh,
)
from .module import Module, ModuleDict, ModuleList, Sequential
from .more_layers import (
    Bilinear,
    CosineEmbeddingLoss,
    CosineSimilarity,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    EmbeddingBag,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    ParameterDict,
    ParameterList,
    PixelShuffle,
    PixelUnshuffle,
    PoissonNLLLoss,
    RMSNorm,
    SoftMarginLoss,
    TripletMarginLoss,
    Unflatten,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from .parameter import Parameter
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .spatial import (
    CELU,
    GELU,
    GLU,
    SELU,
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    Embedding,
    GroupNorm,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    LogSigmoid,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    Mish,
    PReLU,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReLU6,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    SiLU,
    Softmin,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .transformer import (
    MultiheadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = ["functional", "init", "utils", "Module", "Sequential", "ModuleList", "ModuleDict",
           "Parameter", "Linear", "Identity", "Flatten", "ReLU", "LeakyReLU", "ELU", "Tanh",
           "Sigmoid", "Softplus", "Softmax", "LogSoftmax", "Dropout", "MSELoss", "L1Loss",
           "SmoothL1Loss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss",
           # convolutions, pooling, padding, normalization, embedding (.spatial)
           "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
           "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "LayerNorm",
           "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Embedding",
           # im2col, col2im and unpooling (.folding)
           "Unfold", "Fold", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           # activations (.spatial)
           "GELU", "SiLU", "Mish", "SELU", "CELU", "Softsign", "Hardswish", "Hardsigmoid",
           "Hardtanh", "ReLU6", "LogSigmoid", "Tanhshrink", "Softshrink", "Hardshrink",
           "Threshold", "GLU", "Softmin", "PReLU", "RReLU", "Softmax2d",
           "HuberLoss", "KLDivLoss", "PairwiseDistance", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d",
           # attention and Transformer layers (.transformer)
           "MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerDecoder", "Transformer",
           # recurrent layers (.recurrent)
           "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
           # upsampling, containers of parameters, channel dropout, more losses (.more_layers)
           "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle",
           "PixelUnshuffle", "Unflatten", "ParameterList", "ParameterDict", "Bilinear",
           "EmbeddingBag", "Dropout1d", "Dropout2d", "Dropout3d", "RMSNorm", "CosineSimilarity",
           "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
           "CosineEmbeddingLoss", "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss",
           "MultiMarginLoss", "MultiLabelSoftMarginLoss",
           # LP pooling, LRN, channel shuffle, alpha dropout, more losses (.extra_layers)
           "LPPool1d", "LPPool2d", "LocalResponseNorm", "ChannelShuffle", "AlphaDropout",
           "FeatureAlphaDropout", "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss",
           "CTCLoss"]
