"""``autograd.numpy`` is numpy itself: symgrad traces plain numpy code."""

import numpy
from numpy import *  # noqa: F403

from . import random  # noqa: F401

__version__ = numpy.__version__
linalg = numpy.linalg
fft = numpy.fft
