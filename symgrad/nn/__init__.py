"""``symgrad.nn``: PyTorch's ``torch.nn`` for symgrad Tensors.

:mod:`.module` (``Module``, ``Sequential``, ``ModuleList``, ``ModuleDict``),
:mod:`.parameter` (``Parameter``), :mod:`.layers` (``Linear``, activations,
``Dropout``, losses), :mod:`.functional` (``torch.nn.functional``) and
:mod:`.init` (initializers). A model written against ``torch.nn`` runs with
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

from . import functional, init
from .layers import (
    ELU,
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    Dropout,
    Flatten,
    Identity,
    L1Loss,
    LeakyReLU,
    Linear,
    LogSoftmax,
    MSELoss,
    NLLLoss,
    ReLU,
    Sigmoid,
    SmoothL1Loss,
    Softmax,
    Softplus,
    Tanh,
)
from .module import Module, ModuleDict, ModuleList, Sequential
from .parameter import Parameter

__all__ = ["functional", "init", "Module", "Sequential", "ModuleList", "ModuleDict",
           "Parameter", "Linear", "Identity", "Flatten", "ReLU", "LeakyReLU", "ELU", "Tanh",
           "Sigmoid", "Softplus", "Softmax", "LogSoftmax", "Dropout", "MSELoss", "L1Loss",
           "SmoothL1Loss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss"]
