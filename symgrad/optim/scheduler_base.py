"""The base of ``torch.optim.lr_scheduler``'s schedulers (:mod:`.lr_scheduler`,
:mod:`.more_schedulers`): ``step()`` advances ``last_epoch`` and writes each group's
``lr``, as PyTorch's ``LRScheduler``."""

from __future__ import annotations

from typing import Any


class LRScheduler:
    """The base: ``step()`` advances ``last_epoch`` and sets each group's ``lr``."""

    _is_initial = False

    def __init__(self, optimizer: Any, last_epoch: int = -1):
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError("param 'initial_lr' is not specified in param_groups when "
                               "resuming an optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        self._step_count += 1
        if epoch is not None:
            raise NotImplementedError("step(epoch) is deprecated in PyTorch and not supported: "
                                      "call step() once per epoch")
        self._update_lr()

    def _initial_step(self) -> None:
        """The step of the constructor (again for SequentialLR's first scheduler), with
        ``_is_initial`` set, as PyTorch's."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def _update_lr(self, epoch: int | None = None) -> None:
        """Advance (or, with ``epoch``, set) ``last_epoch`` and write the rates; a set epoch
        takes the closed form where there is one (SequentialLR's milestones), as PyTorch."""
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def _lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]
