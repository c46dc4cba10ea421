"""Test-table cases of control flow (loop, while, cond, proj, to_float, and the user's own
rules: call, callback; see cases.py).

Trip counts are known while tracing (Python ints), so that SymPy can unroll the
loops of the forward graph: the oracle never sees symgrad's loop VJP. The
``while`` cases count with an integer carry, whose condition SymPy evaluates
to True or False; loops whose trip count depends on the data are tested
against finite differences and the unrolled Python loop in test_loops.py.
"""

from __future__ import annotations

import numpy as np

import symgrad as sg

from cases import Case, _shape_id

CASES: list[Case] = []


def _fori(x):
    # the counter i enters float arithmetic (to_float)
    return sg.fori_loop(0, 3, lambda i, v: np.sin(v) * 1.5 + v * i, x)


def _fori_bits(x):
    # numpy's bitwise operators on the counter i (int64): & | ^ ~ << >>
    def body(i, v):
        k = (i & 1) + (i | 4) + (i ^ 2) + ~i + (i << 1) + (i >> 1)
        return v * 0.5 + np.sin(v) * k
    return sg.fori_loop(0, 3, body, x)


def _fori_offset(x, y):
    # bounds that do not start at 0, a carry pair, a value read from outside (y)
    def body(i, c):
        a, b = c
        return a * np.cos(b) + y, b - 0.25 * a * i
    a, b = sg.fori_loop(2, 5, body, (x, x * 0.5))
    return a + b


def _scan(c, xs):
    carry, ys = sg.scan(lambda c, x: (np.tanh(c * x + 0.5), c * x), c, xs)
    return carry + np.sum(ys, axis=0)


def _scan_reverse(c, xs):
    carry, ys = sg.scan(lambda c, x: (c * np.exp(-x), c + x), c, xs, reverse=True)
    return np.sum(ys * ys, axis=0) + carry


def _while(x):
    def body(s):
        k, v = s
        return k + 1, v * np.sin(v) + 1.0
    return sg.while_loop(lambda s: s[0] < 3, body, (0, x))[1]


def _cond(x):
    return sg.cond(np.sum(x) > 0.0, lambda v: v * v, lambda v: np.sin(v) * 2.0, x)


for shape in [(), (3,), (2, 3)]:
    CASES += [
        Case(f"fori-{_shape_id(shape)}", ("loop", "proj", "to_float"), _fori, (shape,),
             ((-1, 1),)),
        Case(f"fori_bits-{_shape_id(shape)}", ("bitwise", "loop", "proj"), _fori_bits,
             (shape,), ((-1, 1),)),
        Case(f"fori_offset-{_shape_id(shape)}", ("loop", "proj"), _fori_offset,
             (shape, shape), ((-1, 1), (-1, 1))),
        Case(f"while-{_shape_id(shape)}", ("while", "proj"), _while, (shape,), ((-1, 1),)),
        Case(f"cond-{_shape_id(shape)}", ("cond", "proj"), _cond, (shape,), ((-1, 1),)),
    ]
for sc, sx in [((), (4,)), ((3,), (4, 3)), ((2, 3), (2, 2, 3)), ((3,), (4, 1))]:
    CASES += [
        Case(f"scan-{_shape_id(sc, sx)}", ("loop", "proj"), _scan, (sc, sx), ((-1, 1), (-1, 1))),
        Case(f"scan_reverse-{_shape_id(sc, sx)}", ("loop", "proj"), _scan_reverse, (sc, sx),
             ((-1, 1), (-1, 1))),
    ]
CASES += [
    # both branches: a negative and a positive sum
    Case("cond-false", ("cond",), _cond, ((3,),), (), fixed=([-1.0, 0.5, -0.25],)),
    Case("cond-true", ("cond",), _cond, ((3,),), (), fixed=([1.0, -0.5, 0.25],)),
    # a scan over no steps: the carry passes through, the ys are empty
    Case("scan-empty", ("loop",), _scan, ((3,), (0, 3)), ((-1, 1), (-1, 1)),
         backends=("numpy",)),
    Case("fori-2x3-F", ("loop",), _fori, ((2, 3),), ((-1, 1),), layout="F"),
]


# the user's own rules (symgrad.prims.custom), printed by name in SymPy: finite differences.
# Each rule is the true derivative, so the numbers are those of the plain function.
@sg.custom_jvp
def _softplus(x):
    return np.log1p(np.exp(x))


_softplus.defjvps(lambda t, ans, x: t / (1.0 + np.exp(-x)))


@sg.custom_vjp
def _scaled_sin(x, y):
    return np.sin(x) * y


_scaled_sin.defvjp(lambda x, y: (np.sin(x) * y, (np.cos(x), np.sin(x), y)),
                   lambda res, g: (res[0] * res[2] * g, res[1] * g))


def _host(x):
    y = sg.pure_callback(np.tanh, sg.ShapeDtypeStruct(np.shape(x), np.float64), x,
                         vjp=lambda ct, x: (ct * (1.0 - np.tanh(x) ** 2),),
                         vmap_method="sequential")
    return y * x


for shape in [(), (3,), (2, 3)]:
    CASES += [
        Case(f"custom_jvp-{_shape_id(shape)}", ("call", "proj"), _softplus, (shape,),
             ((-2, 2),), oracle="fd"),
        Case(f"custom_vjp-{_shape_id(shape)}", ("call", "proj"), _scaled_sin,
             (shape, shape), ((-2, 2), (-2, 2)), oracle="fd"),
        Case(f"pure_callback-{_shape_id(shape)}", ("callback", "proj"), _host, (shape,),
             ((-2, 2),), oracle="fd", orders=1, backends=("numpy",)),
    ]
