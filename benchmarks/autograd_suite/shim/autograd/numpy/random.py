"""``autograd.numpy.random`` is numpy.random."""

from numpy.random import *  # noqa: F403
