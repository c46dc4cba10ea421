"""``torch.nn.utils.weight_norm`` and ``remove_weight_norm``: the legacy weight
normalization (deprecated in PyTorch for :func:`.parametrizations.weight_norm`).

``weight_norm(module, name, dim)`` replaces the parameter ``name`` by two,
``name_g`` (the norm over every dimension but ``dim``) and ``name_v`` (the
direction), and registers a forward pre-hook that sets ``module.<name> = g * v /
‖v‖`` (a plain tensor attribute) before each forward; ``remove_weight_norm`` makes
it one parameter again. PyTorch's names, order, warning and errors.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..module import Module
from ..parameter import Parameter
from .parametrizations import norm_except_dim, weight_norm_formula

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook of one weight-normalized parameter."""

    def __init__(self, name: str, dim: int | None):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        return weight_norm_formula(getattr(module, self.name + "_v"),
                                   getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        for hook, _ in module.__dict__.get("_forward_pre_hooks", {}).values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError("Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` (see the module)."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                  stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``<name>`` is one parameter again, with its value."""
    return remove_hook(module, name, WeightNorm, "weight_norm")


def remove_hook(module: Module, name: str, kind: type, what: str) -> Module:
    """Remove the forward pre-hook of class ``kind`` that reparametrizes ``<name>`` (the
    legacy ``weight_norm`` and ``spectral_norm``), letting it restore the parameter."""
    hooks = module.__dict__.get("_forward_pre_hooks", {})
    for key, (hook, _) in list(hooks.items()):
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del hooks[key]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")
