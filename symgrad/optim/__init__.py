"""``symgrad.optim``: ``torch.optim`` over the eager Tensor.

:mod:`.optimizers` (``SGD``, ``Adam``, ``AdamW``, ``RMSprop`` and their base
``Optimizer``), :mod:`.more_optimizers` (``Adagrad``, ``Adadelta``, ``Adamax``, ``NAdam``,
``RAdam``, ``Rprop``, ``ASGD``, ``Adafactor``), :mod:`.lbfgs` (``LBFGS``) and
:mod:`.lr_scheduler` (``StepLR``, ``CosineAnnealingLR``, ...), under
PyTorch's names, so that ``import symgrad as torch`` code finds ``torch.optim.SGD``
and ``torch.optim.lr_scheduler.StepLR``. A folder beside :mod:`symgrad.nn` (until issue
30 it was ``symgrad/optim.py``, and the schedulers ``symgrad/eager/lr_scheduler.py``,
reached through a ``sys.modules`` entry). It imports :mod:`symgrad.eager` only.
"""

from . import lr_scheduler
from .lbfgs import LBFGS
from .more_optimizers import ASGD, Adadelta, Adafactor, Adagrad, Adamax, NAdam, RAdam, Rprop
from .optimizers import SGD, Adam, AdamW, Optimizer, RMSprop

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "Rprop", "ASGD", "Adafactor", "LBFGS", "lr_scheduler"]
