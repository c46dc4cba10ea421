"""autograd's gradient check, with symgrad's reverse mode in autograd's place.

``check_grads(f, argnum)(*args)`` compares ``<v_y, J v_x>`` from symgrad's
pullback with the same inner product from autograd's central difference
(step 1e-6, tolerance 1e-6), at random directions: what autograd's
``check_vjp`` does.

Two modes (``SYMGRAD_AUTOGRAD_MODES``, set by ``run.py --as-written``):

- ``rev`` (the default): reverse mode at first order only; the tests' ``modes``
  and ``order`` are accepted and ignored.
- ``as-written``: the tests' own ``modes`` and ``order``, checked as autograd
  1.9.1's ``check_grads`` does: ``fwd`` compares symgrad's ``jvp`` with the
  central difference, ``rev`` its ``vjp``, and each order above one checks the
  function ``(x, v) -> jvp`` (or ``vjp``) of the order below, with both of its
  arguments differentiated (forward over forward, reverse over reverse, and the
  mixed ones).
"""

import itertools
import os

import numpy as np

import symgrad as sg

from . import BACKEND

AS_WRITTEN = os.environ.get("SYMGRAD_AUTOGRAD_MODES", "rev") == "as-written"

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


def _name(f):
    return getattr(f, "__name__", repr(f))


def _select(args, nums, xs):
    a = list(args)
    for i, v in zip(nums, xs):
        a[i] = v
    return a


def _numeric(g, xs, x_v):
    """The central difference of ``g`` at ``xs`` in the direction ``x_v``."""
    plus = g(*_axpy(EPS / 2, x_v, xs))
    minus = g(*_axpy(-EPS / 2, x_v, xs))
    return _like(plus, iter([(np.asarray(p) - np.asarray(m)) / EPS
                             for p, m in zip(_leaves(plus), _leaves(minus))]))


def _check_vjp(g, xs, name):
    y, pullback = sg.vjp(g, *xs, backend=BACKEND)
    rng = np.random.default_rng(0)
    x_v, y_v = _randn(xs, rng), _randn(y, rng)
    exact = _inner(x_v, list(pullback(y_v)))
    numeric = _inner(y_v, _numeric(g, xs, x_v))
    assert scalar_close(numeric, exact), (
        f"Derivative (VJP) check of {name} failed with arg {xs}:\n"
        f"analytic: {exact}\nnumeric:  {numeric}")


def _check_jvp(g, xs, name):
    rng = np.random.default_rng(1)
    x_v = _randn(xs, rng)
    _, tangent = sg.jvp(g, tuple(xs), tuple(x_v), backend=BACKEND)
    numeric = _numeric(g, xs, x_v)
    y_v = _randn(numeric, rng)
    exact, expected = _inner(y_v, tangent), _inner(y_v, numeric)
    assert scalar_close(expected, exact), (
        f"Derivative (JVP) check of {name} failed with arg {xs}:\n"
        f"analytic: {exact}\nnumeric:  {expected}")


def _check(g, xs, modes, order, name):
    """autograd 1.9.1's ``check_grads`` on ``g(*xs)``, every argument differentiated."""
    n = len(xs)
    if "fwd" in modes:
        _check_jvp(g, xs, name)
        if order > 1:
            def jvp_g(*xv):
                return sg.jvp(g, tuple(xv[:n]), tuple(xv[n:]), backend=BACKEND)[1]
            v = _randn(list(xs), np.random.default_rng(2))
            _check(jvp_g, [*xs, *v], modes, order - 1, f"jvp_{name}")
    if "rev" in modes:
        _check_vjp(g, xs, name)
        if order > 1:
            def vjp_g(*xv):
                return sg.vjp(g, *xv[:n], backend=BACKEND)[1](xv[n])
            v = _randn(g(*xs), np.random.default_rng(3))
            _check(vjp_g, [*xs, v], modes, order - 1, f"vjp_{name}")


def check_grads(f, argnum=0, modes=("fwd", "rev"), order=2):
    nums = tuple(argnum) if isinstance(argnum, (tuple, list)) else (argnum,)

    def check(*args, **kwargs):
        def g(*xs):
            return f(*_select(args, nums, xs), **kwargs)

        xs = [args[i] for i in nums]
        if AS_WRITTEN:
            _check(g, xs, modes, order, _name(f))
        else:
            _check_vjp(g, xs, _name(f))

    return check


def combo_check(fun, *args, **kwargs):
    def _combo_check(*call_args, **call_kwargs):
        pairs = [[(k, x) for x in xs] for k, xs in call_kwargs.items()]
        for _args in itertools.product(*call_args):
            for _kwargs in itertools.product(*pairs):
                check_grads(fun, *args, **kwargs)(*_args, **dict(_kwargs))
    return _combo_check
