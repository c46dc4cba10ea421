"""``torch.optim.lr_scheduler``: learning-rate schedules over an optimizer's
``param_groups``, with PyTorch's update rules (the recursive forms PyTorch uses, so
the rates agree to the last bit): ``LambdaLR``, ``StepLR``, ``MultiStepLR``,
``ExponentialLR``, ``CosineAnnealingLR``, ``OneCycleLR``, ``ReduceLROnPlateau``,
``MultiplicativeLR``, ``ConstantLR``, ``LinearLR``, ``PolynomialLR``, ``CyclicLR``,
``CosineAnnealingWarmRestarts``, and the composites ``SequentialLR`` and
``ChainedScheduler``.

    >>> import symgrad as torch
    >>> w = torch.nn.Parameter(torch.ones(1))
    >>> opt = torch.optim.SGD([w], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> for _ in range(4):
    ...     opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.25]
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from .more_schedulers import (
    ChainedScheduler,
    CosineAnnealingWarmRestarts,
    CyclicLR,
    SequentialLR,
)
from .scheduler_base import LRScheduler


def _per_group(optimizer: Any, lr_lambda: Callable | Sequence[Callable]) -> list[Callable]:
    """One function per parameter group: a list as given, one function for every group."""
    n = len(optimizer.param_groups)
    lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
    if len(lambdas) != n:
        raise ValueError(f"Expected {n} lr_lambdas, but got {len(lambdas)}")
    return lambdas


class LambdaLR(LRScheduler):
    def __init__(self, optimizer: Any, lr_lambda: Callable | Sequence[Callable],
                 last_epoch: int = -1):
        self.lr_lambdas = _per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * f(self.last_epoch) for base, f in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in super().state_dict().items() if k != "lr_lambdas"}


class StepLR(LRScheduler):
    def __init__(self, optimizer: Any, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    def __init__(self, optimizer: Any, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1):
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect.bisect_right(milestones, self.last_epoch)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    def __init__(self, optimizer: Any, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    def __init__(self, optimizer: Any, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, T, low = self.last_epoch, self.T_max, self.eta_min  # noqa: N806
        if self._is_initial:
            return self._lrs()
        if self._step_count == 1 and t > 0:
            return [low + (base - low) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [lr + (base - low) * (1 - math.cos(math.pi / T)) / 2
                    for base, lr in zip(self.base_lrs, self._lrs())]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
                * (lr - low) + low for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class OneCycleLR(LRScheduler):
    """Smith's one-cycle policy: warm up to ``max_lr`` over ``pct_start`` of the steps,
    then anneal to ``max_lr / div_factor / final_div_factor``; momentum (or Adam's
    ``betas[0]``) cycles the other way."""

    def __init__(self, optimizer: Any, max_lr: float | Sequence[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float = 0.85, max_momentum: float = 0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1):
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND "
                                 "steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        if total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.total_steps = total_steps
        self._cos = anneal_strategy == "cos"
        p = float(pct_start * total_steps)
        if three_phase:
            self._phases = [(p - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (2 * p - 2, "max_lr", "initial_lr", "base_momentum",
                             "max_momentum"),
                            (total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                             "max_momentum")]
        else:
            self._phases = [(p - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (total_steps - 1, "max_lr", "min_lr", "base_momentum",
                             "max_momentum")]
        groups = optimizer.param_groups
        top = list(max_lr) if isinstance(max_lr, (list, tuple)) else [max_lr] * len(groups)
        self.cycle_momentum = cycle_momentum
        for group, lr in zip(groups, top):
            if last_epoch == -1:
                group["initial_lr"] = lr / div_factor
                group["max_lr"], group["min_lr"] = lr, group["initial_lr"] / final_div_factor
            if cycle_momentum:
                self._use_betas = "betas" in group
                if not self._use_betas and "momentum" not in group:
                    raise ValueError("optimizer must support momentum or beta1 with "
                                     "`cycle_momentum` option enabled")
                if last_epoch == -1:
                    self._set_momentum(group, max_momentum)
                    group["max_momentum"], group["base_momentum"] = max_momentum, base_momentum
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict, value: float) -> None:
        if self._use_betas:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._cos:
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr0, lr1, m0, m1) in enumerate(self._phases):
                if step <= end or i == len(self._phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[lr0], group[lr1], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m0], group[m1], pct))
                    break
                start = end
        return lrs


class MultiplicativeLR(LRScheduler):
    """Each step multiplies the rate by ``lr_lambda(epoch)``."""

    def __init__(self, optimizer: Any, lr_lambda: Callable | Sequence[Callable],
                 last_epoch: int = -1):
        self.lr_lambdas = _per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._lrs()
        return [lr * f(self.last_epoch) for lr, f in zip(self._lrs(), self.lr_lambdas)]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in super().state_dict().items() if k != "lr_lambdas"}


class ConstantLR(LRScheduler):
    """The rate times ``factor`` until ``total_iters``, then the rate."""

    def __init__(self, optimizer: Any, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._lrs()]
        if self.last_epoch != self.total_iters:
            return self._lrs()
        return [lr * (1.0 / self.factor) for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor goes linearly from ``start_factor`` to ``end_factor`` in ``total_iters``
    steps (PyTorch's recursive form)."""

    def __init__(self, optimizer: Any, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        a, b, n, t = self.start_factor, self.end_factor, self.total_iters, self.last_epoch
        if t == 0:
            return [lr * a for lr in self._lrs()]
        if self._is_initial or t > n:
            return self._lrs()
        return [lr * (1.0 + (b - a) / (n * a + (t - 1) * (b - a))) for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        a, b, n = self.start_factor, self.end_factor, self.total_iters
        return [base * (a + (b - a) * min(n, self.last_epoch) / n) for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``base * (1 - t / total_iters) ** power`` up to ``total_iters`` (recursively)."""

    def __init__(self, optimizer: Any, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, n = self.last_epoch, self.total_iters
        if self._is_initial or t > n:
            return self._lrs()
        factor = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [lr * factor for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        n = self.total_iters
        return [base * (1.0 - min(n, self.last_epoch) / n) ** self.power
                for base in self.base_lrs]


class ReduceLROnPlateau:
    """Multiply the rates by ``factor`` when ``metrics`` passed to ``step`` stop
    improving for ``patience`` epochs (PyTorch's thresholds and cooldown)."""

    def __init__(self, optimizer: Any, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | Sequence[float] = 0.0, eps: float = 1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max") or threshold_mode not in ("rel", "abs"):
            raise ValueError(f"mode must be min/max and threshold_mode rel/abs, not {mode!r}, "
                             f"{threshold_mode!r}")
        self.optimizer, self.mode, self.factor, self.patience = optimizer, mode, factor, patience
        self.threshold, self.threshold_mode, self.cooldown, self.eps = (threshold,
                                                                        threshold_mode,
                                                                        cooldown, eps)
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)) and len(min_lr) != n:
            raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
        # a single min_lr also covers groups added later (PyTorch's default_min_lr)
        self.default_min_lr = None if isinstance(min_lr, (list, tuple)) else min_lr
        self.min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * n
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def _better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            return a < (best * (1.0 - self.threshold) if self.threshold_mode == "rel"
                        else best - self.threshold)
        return a > (best * (self.threshold + 1.0) if self.threshold_mode == "rel"
                    else best + self.threshold)

    def step(self, metrics: Any) -> None:
        current = float(metrics)
        self.last_epoch += 1
        if self._better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._match_groups()
            for group, low in zip(self.optimizer.param_groups, self.min_lrs):
                new = max(group["lr"] * self.factor, low)
                if group["lr"] - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _match_groups(self) -> None:
        """One min_lr per param group, groups added since included (PyTorch's error when
        a list was given: it would silently skip the new groups)."""
        groups = len(self.optimizer.param_groups)
        if groups == len(self.min_lrs):
            return
        if self.default_min_lr is None:
            raise RuntimeError(
                f"The number of param groups in the `optimizer` ({groups}) differs from when "
                f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a "
                "new param group being added to the optimizer. Please modify the `min_lrs` "
                "field to match the length of the `optimizer` param groups.")
        self.min_lrs = [self.default_min_lr] * groups

    def get_last_lr(self) -> list[float]:
        return self._last_lr

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer, as PyTorch's (a checkpoint resumes the counts)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR",
           "CosineAnnealingLR", "OneCycleLR", "ReduceLROnPlateau", "MultiplicativeLR",
           "ConstantLR", "LinearLR", "PolynomialLR", "SequentialLR", "ChainedScheduler",
           "CyclicLR", "CosineAnnealingWarmRestarts"]
