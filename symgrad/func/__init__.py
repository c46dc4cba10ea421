"""``torch.func``: composable function transforms over the eager Tensor.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd``,
``hessian`` (:mod:`.transforms`, built on the eager autograd's double backward, nestable),
``vmap`` (:mod:`.vmap`: a loop over the batch, composable with them),
``functionalize`` (:mod:`.mutations`: the function run as it is, its results aliasing
inputs as PyTorch's do),
``functional_call``, ``stack_module_state`` and ``replace_all_batch_norm_modules_``
(:mod:`.stateless`). Arguments and results are pytrees (tuples, lists, dicts) of Tensors.

    >>> import symgrad as torch
    >>> from symgrad.func import functional_call, grad, vmap
    >>> model = torch.nn.Linear(3, 1)
    >>> params = {k: v.detach() for k, v in model.named_parameters()}
    >>> def loss(params, x, y):
    ...     return ((functional_call(model, params, (x,)) - y) ** 2).sum()
    >>> x, y = torch.ones(4, 3), torch.zeros(4, 1)
    >>> per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    >>> per_sample["weight"].shape
    torch.Size([4, 1, 3])
"""

from .mutations import functionalize
from .stateless import functional_call, replace_all_batch_norm_modules_, stack_module_state
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .vmap import vmap

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_", "grad",
           "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian", "vmap",
           "functionalize"]
