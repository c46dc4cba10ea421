"""Hardening (issue 14): clear errors for bad arguments, bounded caches, threads."""

import numpy as np
import pytest

import symgrad as sg
from symgrad.transforms import api


@pytest.mark.parametrize("argnums", [0.0, "0", (0, 0.5), None, True, (1, 1)])
def test_bad_argnums_say_what_is_expected(argnums):
    with pytest.raises(TypeError, match="argnums must be an int or a tuple of distinct ints"):
        sg.grad(lambda x, y: x * y, argnums=argnums)


def test_bad_static_argnums_say_what_is_expected():
    with pytest.raises(TypeError, match="static_argnums must be an int or a tuple of ints"):
        sg.grad(lambda x, y: x * y, static_argnums=1.0)


def test_a_function_keeps_a_bounded_number_of_specializations():
    g = sg.grad(lambda x: np.sum(np.sin(x)), backend="numpy")
    for n in range(1, api._CACHE_LIMIT + 20):
        np.testing.assert_allclose(g(np.linspace(0, 1, n)), np.cos(np.linspace(0, 1, n)))
    assert len(g._cache) == api._CACHE_LIMIT
    np.testing.assert_allclose(g(np.ones(1)), np.cos(np.ones(1)))  # evicted: traced again
