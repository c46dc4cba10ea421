"""``autograd.numpy`` is numpy itself: symgrad traces plain numpy code.

autograd adds one function of its own to the namespace, ``make_diagonal`` (the
complement of ``np.diagonal``), and two helpers to ``autograd.numpy.linalg``;
they are here as autograd 1.9.1 defines them, written with numpy functions."""

import importlib

import numpy
from numpy import *  # noqa: F403

from . import random  # noqa: F401

# (not `from . import linalg`: that finds numpy.linalg, bound by the star import)
linalg = importlib.import_module(f"{__name__}.linalg")

__version__ = numpy.__version__
fft = numpy.fft


def make_diagonal(D, offset=0, axis1=0, axis2=1):
    """autograd's: a new array with ``D``'s last axis on the diagonal of two last axes.
    autograd writes ``D`` into a float64 array of zeros (a complex ``D`` loses its
    imaginary part there, as here)."""
    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise NotImplementedError(
            "Currently make_diagonal only supports offset=0, axis1=-1, axis2=-2")
    D = numpy.real(D)
    return D[..., :, None] * numpy.eye(numpy.shape(D)[-1])
