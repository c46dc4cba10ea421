"""Backward hooks of a Module, as PyTorch's: ``register_full_backward_hook`` and
``register_full_backward_pre_hook`` (with ``prepend``), built as PyTorch's
``BackwardHook`` builds them.

When a module with such hooks is called with grad enabled, its positional Tensor
arguments go through an identity (PyTorch's ``BackwardHookFunction``, here an
:class:`~symgrad.autograd.Function`) if one of them requires grad, and so do its
Tensor outputs. In the backward, the outputs' identity receives the gradients of the
outputs: the pre-hooks ``hook(module, grad_output)`` run there and may return new
ones (a tuple of the same length), which go on into the module. The inputs' identity
then receives the gradients of the inputs: the hooks ``hook(module, grad_input,
grad_output)`` run there and may return new ones. Each tuple has one entry per
positional argument (per output), None where it is no Tensor (zeros for an input
Tensor that needs no gradient, as PyTorch's).
When no input requires grad, the hooks run at the outputs' identity with
``grad_input`` all None and must return None (PyTorch warns then, and so does
this). Being Functions, they run in ``backward()``, ``autograd.grad`` and double
backward alike. Hooks run in the order registered (``prepend=True``: first); the
handle's ``remove()`` takes one away. One difference: an output the loss does not
depend on gets a zero ``grad_output`` here, None in PyTorch (the identity's backward
cannot tell a zero gradient from none).

    >>> import symgrad as torch
    >>> from symgrad import nn
    >>> m = nn.Linear(2, 1)
    >>> h = m.register_full_backward_hook(lambda mod, gin, gout: (gin[0] * 0 + 1,))
    >>> x = torch.ones(1, 2, requires_grad=True)
    >>> m(x).sum().backward()
    >>> x.grad
    tensor([[1., 1.]])
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..eager import grad_mode
from ..eager.function import Function
from ..eager.tensor import Tensor

#: the attributes a Module keeps its backward hooks in (absent until one is registered)
BACKWARD, BACKWARD_PRE = "_backward_hooks", "_backward_pre_hooks"

NO_INPUT_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module "
    "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
    "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
    "details.")


class BackwardHook:
    """One call's hooks (PyTorch's ``torch.utils.hooks.BackwardHook``): set up on the
    call's inputs (:meth:`setup_input_hook`) and outputs (:meth:`setup_output_hook`)."""

    def __init__(self, module: Any, hooks: list, pre_hooks: list):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_inputs = self.n_outputs = 0
        self.input_index: list[int] | None = None
        self.output_index: list[int] | None = None

    def setup_input_hook(self, args: tuple) -> tuple:
        out, self.input_index = _through_identity(self, "inputs", args)
        self.n_inputs = len(args)
        return out

    def setup_output_hook(self, output: Any) -> Any:
        single = not isinstance(output, tuple)
        outputs = (output,) if single else output
        out, self.output_index = _through_identity(self, "outputs", outputs)
        self.n_outputs = len(outputs)
        return out[0] if single else out

    def at_outputs(self, grads: tuple) -> tuple:
        """The outputs' gradients reached the module: pre-hooks (and, when no input requires
        grad, the hooks); what flows on into the module."""
        self.grad_outputs = _pack(self.output_index, grads, self.n_outputs)
        for hook in self.pre_hooks:
            new = hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError("Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(new)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = tuple(new)
        flowing = self.grad_outputs
        if self.input_index is None:
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple)
                                            and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(flowing[k] for k in self.output_index or ())

    def at_inputs(self, grads: tuple) -> tuple:
        """The inputs' gradients: the hooks, and what flows on to the inputs."""
        if self.grad_outputs is None:  # reached without passing the outputs (PyTorch's too)
            return grads
        res = _pack(self.input_index, grads, self.n_inputs)
        for hook in self.hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = tuple(out)
        self.grad_outputs = None
        return tuple(res[k] for k in self.input_index or ())


def _pack(index: list[int] | None, values: tuple, size: int) -> tuple:
    res: list[Any] = [None] * size
    for k, v in zip(index or (), values):
        res[k] = v
    return tuple(res)


def _through_identity(hook: BackwardHook, side: str, args: tuple) -> tuple[tuple, Any]:
    """``args`` with their Tensors through one identity node whose backward calls
    ``hook``'s ``side``; unchanged (and no index) when none requires grad."""
    index = [k for k, a in enumerate(args) if isinstance(a, Tensor)]
    tensors = [args[k] for k in index]
    if not (any(t.requires_grad for t in tensors) and grad_mode.is_grad_enabled()):
        return args, None
    new = BackwardHookFunction.apply((hook, side), *tensors)
    new = new if isinstance(new, tuple) else (new,)
    out = list(args)
    for k, t in zip(index, new):
        out[k] = t
    return tuple(out), index


class BackwardHookFunction(Function):
    """PyTorch's ``BackwardHookFunction``: its Tensors unchanged; its backward hands the
    gradients to the module's hooks (their dtype the Tensors', None where a Tensor needs
    no gradient) and passes on what they return."""

    @staticmethod
    def forward(ctx: Any, where: tuple, *tensors: Any) -> Any:
        ctx.where = where
        ctx.needs = [t.requires_grad for t in tensors]
        ctx.dtypes = [t.dtype for t in tensors]
        ctx.shapes = [tuple(t.shape) for t in tensors]
        out = tuple(Tensor._make(t._value) for t in tensors)
        ctx.mark_non_differentiable(*[o for o, t in zip(out, tensors) if not t.requires_grad])
        return out if len(out) != 1 else out[0]

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        hook, side = ctx.where
        # (an input that needs no gradient: zeros, as PyTorch's; an output: None)
        grads = tuple(g.to(d) if need and g is not None else
                      Tensor._make(np.zeros(shape, d.numpy)) if side == "inputs" else None
                      for g, need, d, shape in zip(grads, ctx.needs, ctx.dtypes, ctx.shapes))
        if side == "outputs":
            if hook.input_index is None and hook.hooks:
                warnings.warn(NO_INPUT_WARNING, stacklevel=2)
            new = hook.at_outputs(grads)
        else:
            new = hook.at_inputs(grads)
        return (None, *new)
