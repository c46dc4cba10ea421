"""The transformations users call, and the machinery of a call.

``sg.grad``, ``sg.value_and_grad``, ``sg.vjp``, ``sg.jit`` (:mod:`.api`), ``sg.jvp``,
``sg.jacfwd``, ``sg.hessian``, ... (:mod:`.derivatives`), ``sg.vmap`` (:mod:`.vectorize`);
how a call reads its arguments and finds its kernel (:mod:`.calls`), what a
function reads from outside and the guards on it (:mod:`.captured`), and the one
build every front end shares (:mod:`.pipeline`: adjoint, passes, backend).

This ``__init__`` imports nothing: the eager Tensor and the distributed calls
import :mod:`.pipeline` or :mod:`.calls` alone, without loading the front ends.
(Graph -> graph passes are :mod:`symgrad.passes`.)
"""
