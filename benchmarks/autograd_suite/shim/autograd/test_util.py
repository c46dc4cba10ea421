"""autograd's gradient check, with symgrad's reverse mode in autograd's place.

``check_grads(f, argnum)(*args)`` compares ``<v_y, J v_x>`` from symgrad's
pullback with the same inner product from autograd's central difference
(step 1e-6, tolerance 1e-6), at random directions: what autograd's
``check_vjp`` does. Only reverse mode at first order is checked (``modes`` and
``order`` are accepted and ignored).
"""

import itertools

import numpy as np

import symgrad as sg

from . import BACKEND

TOL = RTOL = 1e-6
EPS = 1e-6


def scalar_close(a, b):
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def _leaves(x):
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _leaves(item)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _leaves(x[k])]
    return [x]


def _like(x, leaves):
    """``x``'s structure with ``leaves`` (an iterator) in place of its leaves."""
    if isinstance(x, (list, tuple)):
        return type(x)(_like(item, leaves) for item in x)
    if isinstance(x, dict):
        return {k: _like(x[k], leaves) for k in sorted(x)}
    return next(leaves)


def _randn(x, rng):
    return _like(x, iter([rng.standard_normal(np.shape(leaf)) for leaf in _leaves(x)]))


def _inner(a, b):
    return sum(float(np.sum(np.real(np.asarray(p) * np.asarray(q))))
               for p, q in zip(_leaves(a), _leaves(b)))


def _axpy(a, x, y):
    return _like(y, iter([np.asarray(q) + a * np.asarray(p)
                          for p, q in zip(_leaves(x), _leaves(y))]))


def check_grads(f, argnum=0, modes=("fwd", "rev"), order=2):
    nums = tuple(argnum) if isinstance(argnum, (tuple, list)) else (argnum,)

    def check(*args, **kwargs):
        def g(*xs):
            a = list(args)
            for i, v in zip(nums, xs):
                a[i] = v
            return f(*a, **kwargs)

        xs = [args[i] for i in nums]
        y, pullback = sg.vjp(g, *xs, backend=BACKEND)
        rng = np.random.default_rng(0)
        x_v, y_v = _randn(xs, rng), _randn(y, rng)
        cts = pullback(y_v if isinstance(y, (list, tuple, dict)) else y_v)
        exact = _inner(x_v, list(cts))
        plus = g(*_axpy(EPS / 2, x_v, xs))
        minus = g(*_axpy(-EPS / 2, x_v, xs))
        numeric = _inner(y_v, _axpy(-1.0, minus, plus)) / EPS
        assert scalar_close(numeric, exact), (
            f"Derivative (VJP) check of {getattr(f, '__name__', f)} failed with arg {xs}:\n"
            f"analytic: {exact}\nnumeric:  {numeric}")

    return check


def combo_check(fun, *args, **kwargs):
    def _combo_check(*call_args, **call_kwargs):
        pairs = [[(k, x) for x in xs] for k, xs in call_kwargs.items()]
        for _args in itertools.product(*call_args):
            for _kwargs in itertools.product(*pairs):
                check_grads(fun, *args, **kwargs)(*_args, **dict(_kwargs))
    return _combo_check
