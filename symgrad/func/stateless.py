"""``torch.func.functional_call`` and ``stack_module_state``.

``functional_call(module, dicts, args)`` runs ``module(*args)`` with some of its
parameters and buffers replaced, by dotted name, with the given tensors: each
owner module's registry entry is swapped for the call and put back after it
(also when the forward raises), so the module's own tensors are unchanged and the
output is differentiable in the given ones (``grad`` of a loss through it is the
gradient in a parameter dict, the per-sample-gradient and ensembling recipes).
An in-place update of a given buffer (batch norm's running statistics) writes the
given tensor, as in PyTorch. A name that is not a parameter or buffer becomes a
plain attribute for the call.

    >>> import symgrad as torch
    >>> from symgrad.func import functional_call
    >>> m = torch.nn.Linear(2, 1)
    >>> functional_call(m, {"weight": torch.ones(1, 2), "bias": torch.zeros(1)},
    ...                 (torch.tensor([1., 2.]),))
    tensor([3.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..eager.functions import stack
from ..eager.tensor import Tensor
from ..nn.module import Module
from ..nn.spatial import _BatchNorm
from ..nn.utils.parametrize import is_parametrized

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_"]

_MISSING = object()


def _named_tensors(module: Module) -> list[tuple[str, Any]]:
    """Every parameter and buffer under each of its names (tied ones repeated)."""
    found = []
    for prefix, mod in module.named_modules(remove_duplicate=False):
        for registry in ("_parameters", "_buffers"):
            for name, t in mod.__dict__[registry].items():
                if t is not None:
                    found.append((f"{prefix}.{name}" if prefix else name, t))
    return found


def _merge(dicts: Any) -> dict[str, Any]:
    if isinstance(dicts, dict):
        return dict(dicts)
    counts: dict[str, int] = {}
    for d in dicts:
        for k in d:
            counts[k] = counts.get(k, 0) + 1
    repeated = [k for k, n in counts.items() if n > 1]
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                         "functional call is ambiguous")
    return {k: v for d in dicts for k, v in d.items()}


def _tie(module: Module, values: dict[str, Any]) -> dict[str, Any]:
    """The values with every name tied to a given one (the same tensor in the module)."""
    groups: dict[int, list[str]] = {}
    for name, t in _named_tensors(module):
        groups.setdefault(id(t), []).append(name)
    out = dict(values)
    for names in groups.values():
        given = [n for n in names if n in values]
        if len(names) < 2 or not given:
            continue
        if any(values[n] is not values[given[0]] for n in given):
            raise ValueError(f"functional_call got multiple values for keys {sorted(given)}, "
                             "which are tied. Consider using tie_weights=False")
        for n in names:
            out[n] = values[given[0]]
    return out


def _owner(module: Module, path: str) -> tuple[Module, str]:
    *parts, name = path.split(".")
    for p in parts:
        module = module._modules[p]
    return module, name


def _swap(module: Module, name: str, value: Any) -> tuple[Any, str, Any]:
    """Put ``value`` in place of ``module.<name>``; what :func:`_restore` needs."""
    if is_parametrized(module, name):
        raise NotImplementedError(
            f"functional_call with a value for the parametrized tensor '{name}' is not "
            "supported by symgrad: pass values for its originals "
            f"('parametrizations.{name}.original' or 'original0', ...) instead")
    for registry in ("_parameters", "_buffers"):
        reg = module.__dict__[registry]
        if name in reg:
            old = reg[name]
            reg[name] = value
            return reg, name, old
    old = module.__dict__.get(name, _MISSING)
    object.__setattr__(module, name, value)
    return module.__dict__, name, old


def _restore(swapped: list[tuple[Any, str, Any]]) -> None:
    for where, name, old in reversed(swapped):
        if old is _MISSING:
            where.pop(name, None)
        else:
            where[name] = old


def functional_call(module: Module, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced by the
    given tensors for this call (a dict, or a sequence of dicts with distinct keys);
    names not given keep the module's own. ``tie_weights``: a value given for one name
    of a tensor registered under several (tied weights) is used for all of them.
    ``strict``: every parameter and buffer must be given, and nothing else."""
    values = _merge(parameter_and_buffer_dicts)
    for v in values.values():
        if v is not None and not isinstance(v, Tensor):
            raise TypeError(f"{v} is not an instance of torch.Tensor")
    if tie_weights:
        values = _tie(module, values)
    if strict:
        valid = {n for n, _ in _named_tensors(module)}
        unexpected, missing = sorted(set(values) - valid), sorted(valid - set(values))
        errors = ([f"Unexpected key(s): {', '.join(map(repr, unexpected))}."] if unexpected
                  else []) + ([f"Missing key(s): {', '.join(map(repr, missing))}."]
                              if missing else [])
        if errors:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                               + "\n\t".join(errors))
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    swapped: list[tuple[Any, str, Any]] = []
    try:
        for path, value in values.items():
            swapped.append(_swap(*_owner(module, path), value))
        return module(*args, **(kwargs or {}))
    finally:
        _restore(swapped)


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """(parameters, buffers) of models of one architecture, each stacked along a new
    first dimension: parameters as new leaves (requiring grad when the models' do),
    buffers as plain tensors; for ``vmap(functional_call)`` over an ensemble."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    params = {name: stack([dict(m.named_parameters())[name] for m in models]).detach()
              .requires_grad_(p.requires_grad)
              for name, p in models[0].named_parameters()}
    buffers = {name: stack([dict(m.named_buffers())[name] for m in models]).detach()
               for name, _ in models[0].named_buffers()}
    return params, buffers


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """Make every batch norm under ``root`` stop tracking running statistics (in place:
    its buffers become None, it normalizes with the batch's statistics), so that it can
    run under ``vmap``."""
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
