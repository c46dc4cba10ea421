"""The eager layer: PyTorch-style ``Tensor``s that compute at once and record a graph.

:mod:`.tensor` (``Tensor`` and its eager trace), :mod:`.tensor_ops` (torch-style
factories and functions), :mod:`.graph` (``grad_fn`` nodes), :mod:`.grad_mode`
(``no_grad`` and friends), :mod:`.backward` (``Tensor.backward`` through
:mod:`symgrad.transforms.pipeline`) and :mod:`.printing` (PyTorch's printed form). The
public names are re-exported by :mod:`symgrad` and :mod:`symgrad.autograd`.
"""
