"""``nn.Module`` and the containers ``Sequential``, ``ModuleList``, ``ModuleDict``.

A Module registers what is assigned to its attributes: a :class:`Parameter`
goes to ``_parameters``, a Module to ``_modules``, ``register_buffer`` puts a
tensor in ``_buffers``. ``parameters()``, ``named_parameters()``,
``children()``, ``modules()``, ``state_dict()``/``load_state_dict()``,
``zero_grad()``, ``train()``/``eval()`` and the printed form follow PyTorch's,
so a model written for ``torch.nn`` runs unchanged; ``model(x)`` calls
``forward``. Modules hold Tensors only: the forward pass runs eagerly and
``loss.backward()`` differentiates it through symgrad's compiler.

    >>> import symgrad as torch
    >>> from symgrad import nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(3, 2)
    ...         self.scale = nn.Parameter(torch.ones(1))
    ...     def forward(self, x):
    ...         return self.fc(x) * self.scale
    >>> net = Net()
    >>> [name for name, _ in net.named_parameters()]
    ['scale', 'fc.weight', 'fc.bias']
    >>> net
    Net(
      (fc): Linear(in_features=3, out_features=2, bias=True)
    )
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..eager import dtypes as dt
from ..eager.grad_mode import no_grad
from ..eager.hooks import RemovableHandle
from ..eager.tensor import Tensor
from . import module_hooks
from .parameter import Parameter


class IncompatibleKeys(collections.namedtuple("IncompatibleKeys",
                                              ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it did not find, and those it did not use."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")


class Module:
    """The base class of layers and models (see the module docstring)."""

    training: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        d = self.__dict__
        if d.get(module_hooks.PRE) or d.get(module_hooks.POST) or d.get(
                module_hooks.BACKWARD) or d.get(module_hooks.BACKWARD_PRE):
            return module_hooks.call(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` before each forward (:mod:`.module_hooks`)."""
        return module_hooks.register(self, module_hooks.PRE, hook, prepend,
                                     with_kwargs=with_kwargs)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` after each forward (:mod:`.module_hooks`)."""
        return module_hooks.register(self, module_hooks.POST, hook, prepend,
                                     with_kwargs=with_kwargs, always_call=always_call)

    def register_full_backward_hook(self, hook: Callable,
                                    prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` when the gradients of the module's
        inputs are computed (:mod:`.backward_hooks`)."""
        return module_hooks.register(self, module_hooks.BACKWARD, hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable,
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` when the gradients of the module's outputs are
        computed (:mod:`.backward_hooks`)."""
        return module_hooks.register(self, module_hooks.BACKWARD_PRE, hook, prepend)

    def register_backward_hook(self, hook: Callable) -> None:
        raise NotImplementedError(
            "Module.register_backward_hook (deprecated in PyTorch: its grad_input is that of "
            "the module's last operation) is not supported by symgrad; use "
            "register_full_backward_hook, which sees the gradients of the module's inputs")

    # -- attribute registration ----------------------------------------------------------
    def _registries(self) -> tuple[dict, dict, dict]:
        try:
            return (self.__dict__["_parameters"], self.__dict__["_buffers"],
                    self.__dict__["_modules"])
        except KeyError:
            raise AttributeError(f"cannot assign to a {type(self).__name__} before "
                                 "Module.__init__() call: call super().__init__() first") from None

    def __setattr__(self, name: str, value: Any) -> None:
        params, buffers, modules = (self.__dict__.get(k) for k in
                                    ("_parameters", "_buffers", "_modules"))
        if isinstance(value, Parameter):
            params, buffers, modules = self._registries()
            self.__dict__.pop(name, None)
            buffers.pop(name, None)
            modules.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params, buffers, modules = self._registries()
            self.__dict__.pop(name, None)
            params.pop(name, None)
            buffers.pop(name, None)
            modules[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(registry, {}):
                del self.__dict__[registry][name]
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._parameters, *self._buffers, *self._modules})

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        self._registries()[0][name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        self._registries()[1][name] = tensor

    def add_module(self, name: str, module: Module | None) -> None:
        self._registries()[2][name] = module

    register_module = add_module

    # -- traversal ----------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        memo = set() if memo is None else memo
        if self in memo and remove_duplicate:
            return
        memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                                remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in module.__dict__[registry].items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- state ------------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the parameters' gradients: ``None`` (PyTorch's default), or zeros."""
        for p in self.parameters():
            if p._grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p._grad._value[...] = 0.0

    def state_dict(self, *args: Any, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Tensor]:
        """Parameters and buffers by dotted name, as tensors sharing their values
        (detached unless ``keep_vars``), in registration order."""
        out = collections.OrderedDict() if destination is None else destination
        for registry in ("_parameters", "_buffers"):
            for key, value in self.__dict__[registry].items():
                if value is not None:
                    out[prefix + key] = value if keep_vars else value.detach()
        for name, module in self._modules.items():  # a shared module under each name
            if module is not None:
                module.state_dict(destination=out, prefix=f"{prefix}{name}.",
                                  keep_vars=keep_vars)
        return out

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """Copy values into the parameters and buffers of the same names (in place, so
        optimizers keep working on them). ``strict`` raises on missing or unexpected
        keys, and any shape mismatch raises, with PyTorch's message."""
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict and unexpected:
            errors.append("Unexpected key(s) in state_dict: "
                          + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        if strict and missing:
            errors.append("Missing key(s) in state_dict: "
                          + ", ".join(f'"{k}"' for k in missing) + ". ")
        for key, target in own.items():
            if key in state_dict:
                source = state_dict[key]
                shape = tuple(getattr(source, "shape", ()))
                if shape != tuple(target.shape):
                    errors.append(
                        f"size mismatch for {key}: copying a param with shape "
                        f"{_size(shape)} from checkpoint, the shape in current model is "
                        f"{_size(target.shape)}.")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        with no_grad():
            for key, target in own.items():
                if key in state_dict:
                    target.copy_(state_dict[key])
        return IncompatibleKeys(missing, unexpected)

    # -- dtypes --------------------------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> Module:
        """``to(dtype)`` converts floating parameters and buffers; ``to('cpu')`` keeps them."""
        target = kwargs.get("dtype")
        for a in args:
            if not isinstance(a, (str, dt.device)) and a is not None:
                target = a
        if target is not None:
            self._convert(dt.as_dtype(target))
        return self

    def _convert(self, target: dt.dtype) -> None:
        for module in self.modules():
            for registry in ("_parameters", "_buffers"):
                for value in module.__dict__[registry].values():
                    if value is not None and value.dtype.is_floating_point:
                        value._value = dt.cast(value._value, target)
                        if value._grad is not None:
                            value._grad._value = dt.cast(value._grad._value, target)

    def float(self) -> Module:
        self._convert(dt.float32)
        return self

    def double(self) -> Module:
        self._convert(dt.float64)
        return self

    def half(self) -> Module:
        """float16 parameters and buffers (symgrad computes float16 tensors through float64
        and rounds each result, as :mod:`symgrad.eager.dtypes` says)."""
        self._convert(dt.float16)
        return self

    def bfloat16(self) -> Module:
        self._convert(dt.as_dtype(dt.bfloat16))
        return self

    def cpu(self) -> Module:
        return self

    # -- printing ----------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, module in self._modules.items():
            text = _indent(repr(module), 2)
            lines.append(f"({name}): {text}")
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _typename(value: Any) -> str:
    return value.type() if isinstance(value, Tensor) else type(value).__name__


def _indent(text: str, n: int) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first, *(" " * n + line for line in rest)])


def _size(shape: Iterable[int]) -> str:
    return f"torch.Size({list(shape)})"


class Sequential(Module):
    """Modules applied in order: ``Sequential(nn.Linear(2, 3), nn.ReLU())``, or from an
    ordered dict of names to modules."""

    def __init__(self, *modules: Any):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], collections.OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for k, module in enumerate(modules):
                self.add_module(str(k), module)

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, index: int | slice) -> Any:
        items = list(self._modules.values())
        if isinstance(index, slice):
            return Sequential(collections.OrderedDict(list(self._modules.items())[index]))
        return items[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules, registered as children ``0``, ``1``, ..."""

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        for module in modules or ():
            self.append(module)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for module in modules:
            self.append(module)
        return self

    def __getitem__(self, index: int) -> Any:
        return list(self._modules.values())[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())


class ModuleDict(Module):
    """A dict of modules, registered as children by key."""

    def __init__(self, modules: dict[str, Module] | None = None):
        super().__init__()
        for name, module in (modules or {}).items():
            self.add_module(name, module)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self) -> Any:
        return self._modules.keys()

    def values(self) -> Any:
        return self._modules.values()

    def items(self) -> Any:
        return self._modules.items()
