"""A thin stand-in for HIPS autograd that runs autograd's own tests on symgrad.

``import autograd.numpy as np`` is plain numpy (symgrad traces plain numpy code),
``autograd.grad`` is :func:`symgrad.grad` (``argnum`` is ``argnums``),
``autograd.test_util.check_grads`` compares symgrad's reverse mode (``sg.vjp``)
with autograd's own numerical directional derivative, at first order. Nothing
else of autograd is imitated: see ``benchmarks/autograd_suite/run.py``.
"""

import builtins
import os

import symgrad as sg

BACKEND = os.environ.get("SYMGRAD_AUTOGRAD_BACKEND", "numpy")
tuple = builtins.tuple  # autograd.tuple builds tuples of boxes; symgrad traces real tuples


def grad(fun, argnum=0):
    return sg.grad(fun, argnums=argnum, backend=BACKEND)


def value_and_grad(fun, argnum=0):
    return sg.value_and_grad(fun, argnums=argnum, backend=BACKEND)
