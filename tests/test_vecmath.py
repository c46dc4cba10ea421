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

import ctypes
import ctypes.util
import functools
import math
import os
from fractions import Fraction

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


def _power(n):
    return (lambda x: x ** n), (-3.0, 3.0), (lambda v: v ** n)


#: x ** n for each exponent of vecmath.powi (pow with a literal integer exponent)
POWERS = {f"pow{n}": n for n in sorted(vecmath.POWI_EXPONENTS)}
FUNCTIONS.update({name: _power(n) for name, n in POWERS.items()})


def _powi_in_range(x: np.ndarray, n: int) -> np.ndarray:
    """Where powi computes x ** n in its vectorized loop: 2**-960 <= |x|**n < 2**1020
    (bounds on |x|, as vecmath's) or 0, inf, nan; written here from the contract."""
    a = np.abs(x)
    return (((a >= 2.0 ** -(960 // n)) & (a < 2.0 ** (1020 // n))) | (a == 0.0)
            | ~np.isfinite(a))


#: name -> where its vectorized loop is right; the loop of an array with other points in
#: it runs again with libm, so each part is checked through a kernel of its own
IN_RANGE = {"sin": lambda x: np.abs(x) < vecmath.TRIG_LIMIT,
            "cos": lambda x: np.abs(x) < vecmath.TRIG_LIMIT,
            **{name: functools.partial(_powi_in_range, n=n) for name, n in POWERS.items()}}

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
    limits = powi_limits(POWERS[name]) if name in POWERS else []
    return np.concatenate([SPECIAL, limits, bits, uniform, small])


def powi_limits(n: int) -> np.ndarray:
    """For x ** n: each side of powi's range limits, of the overflow threshold and of the
    thresholds of subnormal and zero results; both signs, and their neighbours."""
    edges = [2.0 ** -(960 // n), 2.0 ** (1020 // n), 1.7976931348623157e308 ** (1 / n),
             2.2250738585072014e-308 ** (1 / n), 5e-324 ** (1 / n), 2.0 ** (-1075 / n)]
    near = [np.nextafter(e, d) for e in edges for d in (0.0, np.inf)]
    return np.array([s * v for v in (*edges, *near) for s in (1.0, -1.0)])


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
    if name in IN_RANGE:  # the vectorized loop, and the loop run again with libm
        small = IN_RANGE[name](x)
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


#: where every function's value is exact, so numpy's is correctly rounded: zeros of both
#: signs, infinities, nan, subnormals and the smallest normals
EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324, 1e-310,
                  -1e-310, 2.2250738585072014e-308, -2.2250738585072014e-308, 1e-300, -1e-300])
#: numpy's value at EDGES (sigmoid and softplus have no ufunc: these spellings are exact
#: there)
NUMPY = {"sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v)),
         "softplus": lambda v: np.logaddexp(0.0, v),
         **{name: (lambda n: lambda v: np.power(v, float(n)))(n)  # noqa: B023 (bound)
            for name, n in POWERS.items()}}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_numpys_bits_at_zeros_infinities_nan_and_subnormals(name):
    # bit for bit (the sign of zero too: 1 / log1p(-0.0) is -inf), nan for nan. The kernel
    # is the one test_within_one_ulp_of_mpmath compiles (the same graph and rank)
    got = through_kernel(name, EDGES)
    with np.errstate(all="ignore"):
        want = NUMPY[name](EDGES) if name in NUMPY else getattr(np, name)(EDGES)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), (name, EDGES[np.isnan(got) != nan])
    wrong = got[~nan].view(np.int64) != want[~nan].view(np.int64)
    assert not wrong.any(), (name, EDGES[~nan][wrong], got[~nan][wrong], want[~nan][wrong])


def test_softplus_where_one_plus_exp_x_rounds_to_one_ulp_above_one():
    """Near x = -36.5, 1 + e**x rounds to 1 + 2**-52, and log1p's double-double lost up
    to 0.64 ulp there: 1.14 ulp in all (x = -36.5147...; 2 of 3 million points of the
    SYMGRAD_FULL sample). softplus now takes e - e**2/2 below -30; both sides of -30 too."""
    rng = np.random.default_rng(3)
    x = np.concatenate([[-36.514744128115694, -36.54491690789973],
                        rng.uniform(-37.5, -35.5, 600), rng.uniform(-30.01, -29.99, 100),
                        rng.uniform(-45.0, -25.0, 300)])
    errors = ulp_errors("softplus", x, through_kernel("softplus", x))
    assert errors.max() <= 1.0, (x[np.argmax(errors)], errors.max())


def test_the_kernels_call_vecmath_and_sin_falls_back_to_libm_beyond_its_range():
    source = sg.jit(lambda x: np.sin(x) + np.exp(x)).source(np.ones(4))
    assert "vm.sin(" in source and "vm.exp(" in source and "np.sin(" in source
    assert "if not ok0:" in source
    x = np.array([0.5, 1e7, -3.0e15, 2.0])  # two beyond TRIG_LIMIT: the libm loop runs
    got = sg.jit(lambda x: np.sin(x) * 2.0)(x)
    np.testing.assert_array_equal(got, np.array([math.sin(v) * 2.0 for v in x]))


def test_the_paths_are_documented_for_every_vectorized_primitive():
    from symgrad.backend.numba.lowering import lowering
    from symgrad.prims.registry import REGISTRY

    declared = {p.name: lowering(p).vectorized for p in REGISTRY.values()
                if lowering(p).vectorized}
    assert set(declared) <= set(vecmath.PATHS)
    for name, function in declared.items():
        assert vecmath.PATHS[name].startswith("vectorized")
        assert callable(getattr(vecmath, function))
        assert function in vecmath.__all__
    # pow names powi, which fused loops call only for a literal integer exponent in the set
    assert lowering(REGISTRY["pow"]).vectorized == "powi" and callable(vecmath.powi)
    assert vecmath.PATHS["pow"].startswith("vectorized for a literal integer exponent")
    assert "libm otherwise" in vecmath.PATHS["pow"]
    assert {3, 4, 5, 6, 7, 8} <= vecmath.POWI_EXPONENTS


def test_a_vectorized_loop_is_simd_code(tmp_path, monkeypatch):
    # the loop of exp compiles to 4-wide AVX2 (or wider) instructions where the CPU has them
    from llvmlite import binding

    if not binding.get_host_cpu_features().get("avx2"):
        pytest.skip("no AVX2 on this CPU: nothing to look for")
    monkeypatch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path))  # a fresh compile: inspectable
    asm = _simd_asm(lambda x: np.exp(x), np.ones(64))
    assert "ymm" in asm or "zmm" in asm


def _simd_asm(f, x):
    """The machine code of ``f``'s compiled kernel for ``x`` (compiled here: code Numba
    loaded from its cache cannot be inspected)."""
    from symgrad.backend.numba import compile as kernels

    g = sg.jit(f)
    spec, _ = g._prepare((x,), None, {})
    kernel = kernels.load(spec.source).function
    if not kernel.signatures:
        kernel(x)
    return kernel.inspect_asm(kernel.signatures[0])


def test_kernels_use_avx512s_full_width_and_give_the_same_bits(tmp_path, monkeypatch):
    # LLVM prefers 256-bit vectors on AVX-512 Intel CPUs; symgrad's kernels ask for 512
    # (symgrad/backend/numba/vector_width.py). The same kernel compiled at Numba's own
    # width (the oracle: no attribute) gives the same bits, special values included.
    import numba

    from symgrad.backend.numba import compile as kernels
    from symgrad.backend.numba import vector_width

    if vector_width.width() is None:
        pytest.skip("no AVX-512 on this CPU (or NUMBA_CPU_NAME/NUMBA_CPU_FEATURES set): "
                    "kernels keep Numba's vector width")
    monkeypatch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path))  # a fresh compile: inspectable
    rng = np.random.default_rng(5)
    x = np.concatenate([[0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e-300, 40.0, -800.0],
                        rng.standard_normal(500) * 4, rng.standard_normal(100) * 1e3])
    # and sums over loops (np.sum's, a row's vm.row_sum, a column's +=) of finite terms:
    # interleaving, vector_width.INTERLEAVE, must not reorder them; in float32 too (16
    # lanes interleaved to 32 elements an iteration)
    y = rng.standard_normal(1001) * 3
    jitted = sg.jit(lambda x, y: (np.tanh(x) * np.exp(-x * x) + np.log(x * x + 2.0),
                                  np.sin(x), np.sum(np.exp(-y * y) * np.cos(y) * y)))
    broadcast = sg.grad(lambda a, u, v: np.mean(np.tanh(a * u[:, None] + v) ** 2),
                        argnums=(1, 2))
    a, u, v = rng.standard_normal((7, 37)), rng.standard_normal(7), rng.standard_normal(37)
    for dtype in (np.float64, np.float32):
        for g, args in ((jitted, (x, y)), (broadcast, (a, u, v))):
            spec, inputs = g._prepare(tuple(w.astype(dtype) for w in args), None, {})
            kernel = kernels.load(spec.source)
            inputs = (*inputs, *spec.consts)  # (a gradient's seed)
            widened = kernel(*inputs)  # compiled by symgrad (Kernel.compile_signature)
            asm = kernel.function.inspect_asm(kernel.function.signatures[0])
            assert "zmm" in asm
            plain = numba.njit(error_model="numpy")(kernel.function.py_func)
            unwidened = plain(*inputs)
            assert "zmm" not in plain.inspect_asm(plain.signatures[0])
            assert np.isfinite(widened[-1]).all()
            for p, q in zip(widened, unwidened, strict=True):
                p, q = np.asarray(p), np.asarray(q)
                assert p.dtype == q.dtype
                assert np.array_equal(p.view(f"i{p.itemsize}"), q.view(f"i{q.itemsize}"))


def test_a_loop_of_x_cubed_is_simd_code(tmp_path, monkeypatch):
    # pow(x, 3.0) is a scalar libm call per element, which stops LLVM from vectorizing;
    # powi's chain of products is 4-wide AVX2 (ymm) multiplications
    import re

    from llvmlite import binding

    if not binding.get_host_cpu_features().get("avx2"):
        pytest.skip("no AVX2 on this CPU: nothing to look for")
    monkeypatch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path))  # a fresh compile: inspectable
    asm = _simd_asm(lambda x: x ** 3, np.ones(64))
    assert re.search(r"vmulpd\s+[^\n]*ymm", asm) or re.search(r"vmulpd\s+[^\n]*zmm", asm)


def _libm_power(x: np.ndarray, y: float) -> np.ndarray:
    """C's ``pow`` (glibc's), what a kernel's ``x ** y`` calls when powi hands over to
    libm: the oracle of the rerun. numpy's own ``np.power`` was that function until
    numpy 2.4, whose float64 power differs from it in about 3 of 100 points."""
    out = np.array([_LIBM.pow(float(v), float(y)) for v in np.ravel(x)])
    return out.reshape(np.shape(x))


_LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
_LIBM.pow.restype, _LIBM.pow.argtypes = ctypes.c_double, [ctypes.c_double, ctypes.c_double]

#: arguments whose powers are exact (or 0, inf, nan): powi's value is libm's pow's
POWI_EXACT = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 2.0, -2.0,
                       0.5, -0.5, 3.0, -3.0, 2.0 ** -100, -(2.0 ** 100), 1.5, -7.25])


def _rounded_power(x: float, n: int) -> float:
    """x ** n correctly rounded (exact rational arithmetic, one rounding)."""
    return float(Fraction(x) ** n)


@pytest.mark.parametrize("n", sorted(vecmath.POWI_EXPONENTS))
def test_powi_is_pow_at_special_values_and_libm_beyond_its_range(n):
    # in range (0, -0, inf, -inf, nan included): the vectorized loop, with pow's bits (the
    # sign of zero, (-inf)**n); the points near its limits inside it: correctly rounded
    exact = sg.jit(lambda v: v ** n)(POWI_EXACT)
    want = _libm_power(POWI_EXACT, float(n))
    assert _powi_in_range(POWI_EXACT, n).all()
    assert np.array_equal(np.isnan(exact), np.isnan(want))
    np.testing.assert_array_equal(exact[6:].view(np.int64), want[6:].view(np.int64))  # nan: ±
    assert np.signbit(exact[1]) == bool(n & 1) and exact[3] == want[3]
    limits = powi_limits(n)
    inside, beyond = limits[_powi_in_range(limits, n)], limits[~_powi_in_range(limits, n)]
    got = sg.jit(lambda v: v ** n)(inside)
    assert got.tolist() == [_rounded_power(v, n) for v in inside.tolist()]
    # any point beyond (overflow, subnormal and zero results, subnormal arguments): the
    # whole loop runs again with libm, so every element is libm's pow, bit for bit
    subnormal = np.array([5e-324, -5e-324, 1e-310, -2.2250738585072014e-308])
    assert beyond.size >= 8
    for x in (beyond, subnormal, np.concatenate([POWI_EXACT, inside, beyond[:1]]),
              np.concatenate([np.linspace(-3, 3, 101), subnormal[2:3]])):
        got = sg.jit(lambda v: v ** n)(x)
        want = _libm_power(x, float(n))
        assert np.array_equal(np.isnan(got), np.isnan(want)), (n, x)
        ok = ~np.isnan(want)
        np.testing.assert_array_equal(got[ok].view(np.int64), want[ok].view(np.int64))


@pytest.mark.parametrize("n", sorted(vecmath.POWI_EXPONENTS))
def test_powi_is_correctly_rounded_where_it_differs_from_numpys_power(n):
    # the chain is exact to about 2**-100 and rounded once: in practice the correctly
    # rounded x**n. glibc's pow (numpy's power) is within 0.52 ulp, not always correctly
    # rounded: the two differ at about 1e-3 of the points (measured on 2e5 uniform points
    # in [-3, 3]: 152 for n=3, 168 for n=8), and at every one checked powi is the right one
    rng = np.random.default_rng(n)
    size = 20 * (FULL_N if FULL else SAMPLE)
    bits = rng.integers(0, 2**64, size, dtype=np.uint64).view(np.float64)
    x = np.concatenate([bits[_powi_in_range(bits, n) & np.isfinite(bits)],
                        rng.uniform(-3, 3, size)])
    got = sg.jit(lambda v: v ** n)(x)
    want = _libm_power(x, float(n))
    differ = np.flatnonzero(got != want)
    print(f"\nx**{n}: {differ.size / x.size:.2e} of {x.size} points differ from libm's pow")
    assert differ.size <= 0.01 * x.size
    wrong = [x[k] for k in differ if got[k] != _rounded_power(float(x[k]), n)]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("f", [lambda x: x ** 3, lambda x: x ** 3.0,
                               lambda x: np.power(x, 3)],
                         ids=["int", "float", "np.power"])
def test_x_cubed_as_users_write_it_calls_powi_and_falls_back(f):
    source = sg.jit(f).source(np.ones(4))
    assert "vm.powi(x[i0], 3)" in source and "vm.powi_in_range(x[i0], 3)" in source
    assert "if not ok0:" in source and "x[i0] ** 3.0" in source  # the libm loop


@pytest.mark.parametrize("f", [lambda x: x ** np.int64(3), lambda x: np.power(x, np.float64(3.0))],
                         ids=["np.int64", "np.float64"])
def test_a_numpy_scalar_exponent_is_a_kernel_argument(f):
    # numbers numpy makes while the function is traced (W[0], np.float64(3.0)) enter the
    # kernel as arguments, so that a new value reuses the kernel: the power is libm's
    x = np.linspace(-2.0, 2.0, 9)
    source = sg.jit(f).source(x)
    assert "powi" not in source and "x[i0] ** " in source
    np.testing.assert_array_equal(sg.jit(f)(x), _libm_power(x, 3.0))


@pytest.mark.parametrize("f", [lambda x: x ** 9, lambda x: x ** 2.5, lambda x: x ** -3,
                               lambda x: x ** x, lambda x: 3.0 ** x],
                         ids=["9", "2.5", "-3", "x", "base"])
def test_other_powers_stay_libm(f):
    x = np.linspace(0.5, 2.0, 5)
    source = sg.jit(f).source(x)
    assert "powi" not in source and "**" in source
    np.testing.assert_array_equal(sg.jit(f)(x), f(x))


def test_powi_of_float32_is_pow_rounded_once():
    # the float64 result rounded once to float32: numpy's float32 power gives the same
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-3, 3, 2000), [0.0, -0.0, np.inf, -np.inf, 1e-30]])
    x = x.astype(np.float32)
    for n in (3, 7):
        got = sg.jit(lambda v, n=n: v ** n)(x)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, np.power(x.astype(np.float64), n).astype(np.float32))


def test_the_gradient_of_a_power_in_a_loop_matches_sympy():
    # d/dx sum(x**5) = 5 x**4: the adjoint's x**4 is powi too
    import sympy

    x = np.array([0.3, -1.7, 2.5, 1e-5, -40.0, 1e70])
    g = sg.grad(lambda v: np.sum(v ** 5))
    assert "vm.powi(" in g.source(x)
    got = g(x)
    s = sympy.Symbol("s")
    d = sympy.diff(s ** 5, s)
    want = np.array([float(d.subs(s, sympy.Float(float(v), 60)).evalf(40)) for v in x])
    np.testing.assert_allclose(got, want, rtol=4e-16, atol=0)


def _euler_numpy(x0, p, n, h=0.01):
    x = x0.copy()
    for _ in range(n):
        x = x + h * (-x ** 3 + np.sin(p * x))
    return np.sum(x ** 2)


def test_the_euler_gradient_through_fori_loop_matches_finite_differences():
    # the loop body of benchmarks/loops.py: x ** 3 in a fori_loop, forward and backward
    def euler(x0, p, n):
        def step(i, x):
            return x + 0.01 * (-x ** 3 + np.sin(p * x))
        return np.sum(sg.fori_loop(0, n, step, x0) ** 2)

    x0, p, n = np.linspace(0.1, 0.8, 8), 1.3, 200
    g = sg.grad(euler, argnums=(0, 1))
    assert "vm.powi(" in g.source(x0, p, n)
    dx0, dp = g(x0, p, n)
    assert euler(x0, p, n) == pytest.approx(_euler_numpy(x0, p, n), rel=1e-14)
    eps = 1e-6
    fd_p = (_euler_numpy(x0, p + eps, n) - _euler_numpy(x0, p - eps, n)) / (2 * eps)
    assert dp == pytest.approx(fd_p, rel=1e-7)
    for k in (0, 3, 7):
        e = np.zeros(8)
        e[k] = eps
        fd = (_euler_numpy(x0 + e, p, n) - _euler_numpy(x0 - e, p, n)) / (2 * eps)
        assert dx0[k] == pytest.approx(fd, rel=1e-7)


def test_a_loop_whose_power_leaves_the_range_runs_again_with_libm():
    # x -> x**3 twice: 1e100 ** 3 is in range, 1e300 ** 3 is not (inf): the step that meets
    # it runs with libm, the other steps stay vectorized; as a loop over libm's pow gives them
    def cubes(x0):
        return sg.fori_loop(0, 2, lambda i, x: x ** 3, x0)

    x0 = np.array([1.1, -2.0, 1e100, -0.0, 1e-120])
    want = x0.copy()
    for _ in range(2):
        want = _libm_power(want, 3.0)
    got = sg.jit(cubes)(x0)
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


def test_powi_in_a_parallel_loop_and_its_libm_rerun(monkeypatch):
    # a chunked prange loop: each chunk keeps its own range flag, any one sends the whole
    # loop to libm; a sum over chunks, and the elementwise result, as numpy's power gives
    monkeypatch.setenv("SYMGRAD_PARALLEL_MIN", "256")
    x = np.linspace(-2.5, 3.0, 1001)

    def f(v):
        return np.sum(v ** 5), v ** 4

    source = sg.jit(f).source(x)
    assert "prange(" in source and "vm.powi(" in source and "if not ok0:" in source
    total, fourth = sg.jit(f)(x)
    assert fourth.tolist() == [_rounded_power(v, 4) for v in x.tolist()]
    assert total == pytest.approx(float(sum(Fraction(v) ** 5 for v in x.tolist())), rel=1e-13)
    big = x.copy()
    big[700] = 1e300  # beyond powi's range: every chunk again with libm
    total, fourth = sg.jit(f)(big)
    assert np.array_equal(fourth, _libm_power(big, 4.0)) and total == np.inf


def _sech2(x):
    return mpmath.sech(x) ** 2


def test_tanh_and_its_derivative_from_one_exponential_are_within_one_ulp():
    """vm.tanh_sech2 (issue 31): tanh(x) and sech(x)**2 from one reduction and one
    polynomial, each within 1 ulp of mpmath; in the tails too (sech**2 is 7e-35 at 40,
    subnormal beyond 354, 0 beyond 373: where 1 - tanh**2 is 0 from 19 on)."""
    import numba

    @numba.njit(error_model="numpy")
    def both(x):
        t, d = np.empty_like(x), np.empty_like(x)
        for i in range(x.size):
            t[i], d[i] = vecmath.tanh_sech2(x[i])
        return t, d

    n = FULL_N if FULL else SAMPLE
    rng = np.random.default_rng(7)
    tails = np.array([19.0, 40.0, 354.0, 354.5, 372.5, 373.0, 379.9, 380.0, 380.1, 1e300])
    # where its cases change: k = 0 -> -1 (ln2/4), 0.55 (where others switch), 1 +- 2**k
    # inexact (k <= -53, |x| > 18.37), tanh = 1 (19.06), k clamped (-64: 22.18), subnormal
    # sech**2 (354), 0 (373), the clamp (380); each with points either side
    edges = np.array([math.log(2) / 4, 0.55, 11.0, 18.37, 18.7, 19.06, 64 * math.log(2) / 2,
                      354.0, 373.0, 380.0])
    near = (edges[:, None] * (1.0 + np.linspace(-1e-3, 1e-3, 11))).ravel()
    near = np.concatenate([near, np.nextafter(edges, 0.0), np.nextafter(edges, np.inf)])
    x = np.concatenate([points("tanh", n), rng.uniform(-400.0, 400.0, n), tails, -tails,
                        near, -near])
    t, d = both(x)
    FUNCTIONS["sech2"] = (_sech2, (-400.0, 400.0), None)
    try:
        for name, got in (("tanh", t), ("sech2", d)):
            errors = ulp_errors(name, x, got)
            worst = int(np.argmax(errors))
            print(f"\n{name} (tanh_sech2): max error {errors[worst]:.3f} ulp at "
                  f"x = {x[worst]!r} over {x.size} points")
            assert errors[worst] <= 1.0, (name, x[worst], got[worst])
    finally:
        del FUNCTIONS["sech2"]
    np.testing.assert_array_equal(t, through_kernel("tanh", x))  # tanh's own bits


def test_the_gradient_of_tanh_calls_tanh_sech2_once_per_element():
    f = lambda v: np.sum(np.tanh(v) ** 2)  # noqa: E731
    x = np.array([-30.0, -19.5, -1.0, -1e-9, 0.0, 2e-12, 0.3, 0.9, 5.0, 20.0, 40.0, 360.0])
    source = sg.grad(f).source(x)
    assert source.count("vm.tanh_sech2(") == 1 and "vm.exp(" not in source
    got = sg.grad(f)(x)
    with mpmath.workprec(_PREC):  # 2 tanh sech**2, rounded once: the kernel's is 2 roundings
        want = [float(2 * mpmath.tanh(mpmath.mpf(v)) * mpmath.sech(mpmath.mpf(v)) ** 2)
                for v in x.tolist()]
    # two roundings: 4.5e-16 relative; at 360 the value is subnormal: 2 of its ulps
    np.testing.assert_allclose(got, want, rtol=4.5e-16, atol=1e-323)
