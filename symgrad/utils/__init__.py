"""``symgrad.utils``: PyTorch's ``torch.utils`` (its :mod:`.data` part), so that
``import symgrad as torch`` code finds ``torch.utils.data.DataLoader``."""

from . import data

__all__ = ["data"]
