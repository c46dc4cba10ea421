"""The vectorized math of fused loops (symgrad/backend/vecmath.py) against mpmath.

Each function is checked, through the kernels symgrad generates (``sg.jit``),
at its special values and at random points: random bit patterns (every
exponent, subnormals included), uniform points over the range where the
function varies, and points near 0 on a logarithmic scale. The reference is
mpmath at 120 bits; the error is in units in the last place of the float64
nearest the exact value (2**-1074 below the normal range), and must be at
most 1 ulp. CI checks ``SAMPLE`` points per kind; ``SYMGRAD_FULL=1`` checks
``FULL_N`` (a million per kind, three million per function; about half an hour per
function on one core), and prints the worst error found:

    SYMGRAD_FULL=1 python -m pytest tests/test_vecmath.py -s

(with gmpy2 installed, mpmath runs several times faster).
"""

from __future__ import annotations

import math
import os

import mpmath
import numpy as np
import pytest

import symgrad as sg
from symgrad.backend import vecmath

FULL = os.environ.get("SYMGRAD_FULL", "") not in ("", "0")
SAMPLE = 1500
#: points per kind with SYMGRAD_FULL=1 (SYMGRAD_FULL=N: N per kind)
FULL_N = int(os.environ["SYMGRAD_FULL"]) if FULL and os.environ["SYMGRAD_FULL"] != "1" \
    else 1_000_000

_PREC = 120


def _sigmoid(x):
    return 1 / (1 + mpmath.exp(-x))


def _log(x):
    return mpmath.log(x) if x > 0 else (mpmath.ninf if x == 0 else mpmath.nan)


def _log1p(x):
    return mpmath.log1p(x) if x > -1 else (mpmath.ninf if x == -1 else mpmath.nan)


#: name -> (mpmath reference, the range where it varies, the symgrad function)
FUNCTIONS = {
    "exp": (mpmath.exp, (-750.0, 712.0), np.exp),
    "expm1": (mpmath.expm1, (-45.0, 712.0), np.expm1),
    "log": (_log, (0.0, 10.0), np.log),
    "log1p": (_log1p, (-1.0, 10.0), np.log1p),
    "sin": (mpmath.sin, (-2e6, 2e6), np.sin),
    "cos": (mpmath.cos, (-2e6, 2e6), np.cos),
    "tanh": (mpmath.tanh, (-25.0, 25.0), np.tanh),
    "sigmoid": (_sigmoid, (-750.0, 750.0), sg.sigmoid),
    "softplus": (lambda x: mpmath.log1p(mpmath.exp(x)), (-750.0, 750.0), sg.softplus),
}

SPECIAL = np.array([
    0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
    -2.2250738585072014e-308, 1e-300, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-17, -1e-17, 1e-8, 22.0,
    22.000000000000004, 709.782712893384, 709.7827128933841, -745.1332191019411,
    -745.1332191019412, -708.3964185322641, 1.7976931348623157e308, -1.7976931348623157e308,
    np.pi / 4, np.pi / 2, np.pi, 1647099.3291652855, 1647099.329165286, 1e22, -1e300,
    0.34657359027997264, -0.34657359027997264, 38.0, -40.0, 3.0e15, 0.6931471805599453,
])


def points(name: str, n: int, seed: int = 0) -> np.ndarray:
    """Special values and 3n random points for ``name``."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)  # every exponent
    lo, hi = FUNCTIONS[name][1]
    uniform = rng.uniform(lo, hi, n)
    small = rng.uniform(-1, 1, n) * 10.0 ** rng.uniform(-30, 0.5, n)
    return np.concatenate([SPECIAL, bits, uniform, small])


def ulp_errors(name: str, x: np.ndarray, got: np.ndarray) -> np.ndarray:
    """|got - f(x)| in ulps of the float64 nearest f(x), f by mpmath; inf where got is
    not the special value (inf, nan) that f is."""
    f = FUNCTIONS[name][0]
    errors = np.empty(x.size)
    with mpmath.workprec(_PREC):
        for k, (xi, gi) in enumerate(zip(x.tolist(), got.tolist())):
            if math.isnan(xi):
                ref = mpmath.nan
            else:
                ref = f(mpmath.mpf(xi))
            if mpmath.isnan(ref) or mpmath.isinf(ref):
                same = (math.isnan(gi) if mpmath.isnan(ref) else gi == float(ref))
                errors[k] = 0.0 if same else math.inf
                continue
            near = float(ref)  # round to nearest: beyond the largest float, inf
            if math.isinf(near) or math.isinf(gi) or math.isnan(gi):
                errors[k] = 0.0 if gi == near else math.inf
                continue
            exponent = math.frexp(near)[1] if near != 0.0 else -1073
            ulp = mpmath.ldexp(1, max(exponent - 53, -1074))  # divided in mpmath: the
            errors[k] = float(abs(mpmath.mpf(gi) - ref) / ulp)  # error may be subnormal
    return errors


def through_kernel(name: str, x: np.ndarray) -> np.ndarray:
    """``name`` on ``x`` as a compiled symgrad kernel computes it (a fused loop)."""
    fn = FUNCTIONS[name][2]
    return sg.jit(lambda v: fn(v))(x)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_within_one_ulp_of_mpmath(name):
    n = FULL_N if FULL else SAMPLE
    x = points(name, n)
    if name in ("sin", "cos"):  # the vectorized loop, and the loop run again with libm
        small = np.abs(x) < vecmath.TRIG_LIMIT
        got = np.empty_like(x)
        got[small] = through_kernel(name, x[small])
        got[~small] = through_kernel(name, x[~small])
    else:
        got = through_kernel(name, x)
    errors = ulp_errors(name, x, got)
    worst = int(np.argmax(errors))
    print(f"\n{name}: max error {errors[worst]:.3f} ulp at x = {x[worst]!r} "
          f"over {x.size} points")
    assert errors[worst] <= 1.0, (name, x[worst], got[worst])


def test_the_kernels_call_vecmath_and_sin_falls_back_to_libm_beyond_its_range():
    source = sg.jit(lambda x: np.sin(x) + np.exp(x)).source(np.ones(4))
    assert "vm.sin(" in source and "vm.exp(" in source and "np.sin(" in source
    assert "if not ok0:" in source
    x = np.array([0.5, 1e7, -3.0e15, 2.0])  # two beyond TRIG_LIMIT: the libm loop runs
    got = sg.jit(lambda x: np.sin(x) * 2.0)(x)
    np.testing.assert_array_equal(got, np.array([math.sin(v) * 2.0 for v in x]))


def test_the_paths_are_documented_for_every_vectorized_primitive():
    from symgrad.prims.registry import REGISTRY

    declared = {p.name: p.vectorized for p in REGISTRY.values() if p.vectorized}
    assert set(declared) <= set(vecmath.PATHS)
    for name, function in declared.items():
        assert vecmath.PATHS[name].startswith("vectorized")
        assert callable(getattr(vecmath, function))
    assert vecmath.PATHS["pow"] == "libm" and not REGISTRY["pow"].vectorized


def test_a_vectorized_loop_is_simd_code():
    # the loop of exp compiles to 4-wide AVX2 (or wider) instructions where the CPU has them
    from llvmlite import binding

    from symgrad.backend import compile as kernels

    g = sg.jit(lambda x: np.exp(x))
    x = np.ones(64)
    g(x)
    spec, _ = g._prepare((x,), None, {})
    kernel = kernels.load(spec.source).function
    asm = kernel.inspect_asm(kernel.signatures[0])
    if not binding.get_host_cpu_features().get("avx2"):
        pytest.skip("no AVX2 on this CPU: nothing to look for")
    assert "ymm" in asm or "zmm" in asm
