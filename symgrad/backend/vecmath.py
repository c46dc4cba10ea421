"""Elementwise math that LLVM vectorizes: what fused loops call instead of libm.

Numba's pip build has no SVML, so ``np.exp(x[i])`` in a loop is a scalar call
into libm per element, and a loop that makes one is never vectorized. The
functions here are written in the operations LLVM turns into SIMD code:
range reduction, polynomials, bit manipulation of the exponent through
:func:`_bits`/:func:`_double` (two LLVM bitcasts), and selects instead of
branches. Every one is exact at its special values (±0, ±inf, nan,
subnormals, overflow and underflow thresholds) and its accuracy is measured
against mpmath by ``tests/test_vecmath.py`` (a sample in CI; millions of
points with ``SYMGRAD_FULL=1``).

Which path each primitive takes inside a fused loop is declared on the
primitive (``Primitive.vectorized``, the name of a function here), and the
table in :data:`PATHS` says why: a function goes here only where its measured
error is at most 1 ulp over the whole float64 range; the others stay libm.

=========  ==========================================================  ==============
function   method                                                       path
=========  ==========================================================  ==============
exp        k = rint(x/ln2), r = x - k ln2 (Cody-Waite), degree-13      vectorized
           polynomial (Estrin), 2**k in two exact steps (no overflow)
expm1      as exp, the polynomial for expm1(r), 2**k*em + (2**k - 1)   vectorized
log        fdlibm: x = 2**k m, m in [sqrt(2)/2, sqrt(2)), s = f/(2+f)  vectorized
log1p      log of u = 1 + x plus the rounding error of u, (1+x-u)/u     vectorized
sin, cos   k = rint(x*2/pi), pi/2 in three parts and a tail, TwoSums;  vectorized for
           fdlibm's kernels. For |x| >= 2**20*pi/2 the loop that met   |x| < 1.6e6
           such an argument (trig_in_range) runs again with libm
tanh       tanh_sech2's first value                                    vectorized
tanh_sech2 tanh and its derivative sech**2 from one exponential e =        vectorized
           exp(-2|x|): (1-e)/(1+e), 4e/(1+e)**2 from one division
sigmoid    1/(1+e) or e/(1+e), e = exp(-|x|)                            vectorized
softplus   log1p(exp(-|x|)) + max(x, 0); e - e**2/2 below -30           vectorized
pow        x**n for a literal integer n in POWI_EXPONENTS (3..8): the      vectorized for
           double-double product chain x*x*...*x (Dekker's TwoProd, no    n in 3..8 and
           FMA), rounded once at the end (powi). The split and the error  1e-36 < |x| <
           terms need 2**-960 <= |x|**n < 2**1020: a loop that met an     1e36 at n = 8,
           argument beyond (powi_in_range) runs again with libm. Other     wider below;
           exponents: x**y needs log(x) to ~70 bits, libm's pow           libm otherwise
=========  ==========================================================  ==============

All functions take and return float64. A float32 loop calls :mod:`.vecmath32`
instead for exp, log, sin, cos, tanh, sigmoid and softplus (float32 arithmetic, 8 or 16
lanes; ``vecmath_facts.FLOAT32_FUNCTIONS``); for the others a float32 argument is
widened and the result rounded once by the caller (within 1 ulp of float32 too).
Where the CPU has FMA (:data:`HAS_FMA`), TwoProd and the exp polynomial use it.

    >>> import math
    >>> exp(1.0) == math.exp(1.0), log(10.0) == math.log(10.0)
    (True, True)
"""

from __future__ import annotations

import math

from llvmlite import binding, ir
from numba import njit, types
from numba.core.extending import intrinsic

from .vecmath_facts import POWI_EXPONENTS

#: the path each primitive takes in a fused loop (the table above; the README has it too).
#: Kernels that call a function here carry a hash of this file in their source, so any
#: change here recompiles them
PATHS = {
    "exp": "vectorized", "expm1": "vectorized", "log": "vectorized", "log1p": "vectorized",
    "sin": "vectorized (a loop with |x| >= 1.6e6 runs again with libm)",
    "cos": "vectorized (a loop with |x| >= 1.6e6 runs again with libm)",
    "tanh": "vectorized", "sigmoid": "vectorized", "softplus": "vectorized",
    "pow": "vectorized for a literal integer exponent in POWI_EXPONENTS (3..8; a loop with "
           "|x|**n beyond [2**-960, 2**1020) runs again with libm), libm otherwise",
}


def _host_features() -> dict:
    try:
        return dict(binding.get_host_cpu_features())
    except RuntimeError:  # a platform where LLVM cannot tell: no FMA assumed
        return {}


@intrinsic
def _bits(typingctx, x):  # noqa: ARG001 -- numba's intrinsic signature
    """The bits of a float64 as an int64 (an LLVM bitcast: free, and vectorizable)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _double(typingctx, i):  # noqa: ARG001
    """The float64 whose bits are the int64 ``i``."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def _fma(typingctx, a, b, c):  # noqa: ARG001
    """a * b + c rounded once (LLVM's ``llvm.fma.f64``: one instruction where the CPU has
    FMA, and vectorizable; a libm call where it has not, still exact)."""
    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return types.float64(types.float64, types.float64, types.float64), codegen


#: whether the CPU has fused multiply-add: then TwoProd is two instructions (a product
#: and an FMA), else Dekker's seventeen. Numba's cache is per CPU, so is this choice
HAS_FMA = bool(_host_features().get("fma"))

_JIT = {"inline": "always", "error_model": "numpy", "cache": False}

SHIFT = 6755399441055744.0          # 1.5 * 2**52: x + SHIFT rounds x to an integer
SHIFT_BITS = 0x4338000000000000     # its bits: bits(k + SHIFT) - SHIFT_BITS == k
INV_LN2 = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01  # 32 significant bits: k * LN2_HI is exact
LN2_LO = 1.90821492927058770002e-10
EXP_MAX = 709.782712893384           # exp(x) overflows above
# 1/n! for the Taylor series of exp on |r| <= ln(2)/2; terms to r**14 leave < 2**-62
_F3, _F4, _F5, _F6 = 1 / 6, 1 / 24, 1 / 120, 1 / 720
_F7, _F8, _F9, _F10 = 1 / 5040, 1 / 40320, 1 / 362880, 1 / 3628800
_F11, _F12, _F13, _F14 = 1 / 39916800, 1 / 479001600, 1 / 6227020800, 1 / 87178291200


@njit(**_JIT)
def _as_int_float(t):
    """(k, float(k)) for t = k + SHIFT: the integer from t's bits, no float->int conversion
    (AVX2 has none for 64-bit integers)."""
    return _bits(t) - SHIFT_BITS, t - SHIFT


@njit(**_JIT)
def _scale(y, k):
    """y * 2**k for |k| <= 2100, in two exact power-of-two steps (each 2**j is normal), so
    that the one rounding is the last multiplication's (subnormal results, overflow)."""
    k1 = k >> 1
    s1 = _double((k1 + 1023) << 52)
    s2 = _double((k - k1 + 1023) << 52)
    return y * s1 * s2


@njit(**_JIT)
def _expm1_poly(r):
    """exp(r) - 1 - r for |r| <= 0.35, as (r*r*0.5 + r**3 * q(r)), q (degree 11) by
    Estrin's scheme: 4 dependent steps after r**8, not Horner's 11 (exp's loop was bound
    by the chain: 0.79-0.89x the time of Horner's for exp, expm1, sigmoid, softplus;
    the same measured error bounds)."""
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    if HAS_FMA:
        a = _fma(_fma(_F6, r, _F5), r2, _fma(_F4, r, _F3))
        b = _fma(_fma(_F10, r, _F9), r2, _fma(_F8, r, _F7))
        c = _fma(_fma(_F14, r, _F13), r2, _fma(_F12, r, _F11))
        q = _fma(c, r8, _fma(b, r4, a))
    else:
        a = (_F6 * r + _F5) * r2 + (_F4 * r + _F3)
        b = (_F10 * r + _F9) * r2 + (_F8 * r + _F7)
        c = (_F14 * r + _F13) * r2 + (_F12 * r + _F11)
        q = c * r8 + (b * r4 + a)
    return r2 * 0.5 + r2 * r * q


@njit(**_JIT)
def _reduce_ln2(x):
    """x = k*ln2 + r + c with |r| <= ln2/2: (k, r, c), c the rounding error of r."""
    t = x * INV_LN2 + SHIFT
    k, kf = _as_int_float(t)
    hi = _fma(-kf, LN2_HI, x) if HAS_FMA else x - kf * LN2_HI  # exact: k*LN2_HI is
    lo = kf * LN2_LO
    r = hi - lo
    c = (hi - r) - lo
    return k, r, c


@njit(**_JIT)
def _two_sum(a, b):
    """a + b as s + e exactly (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@njit(**_JIT)
def _split(a):
    """Dekker's split of a (|a| < 2**996) into two halves of 26 bits."""
    c = 134217729.0 * a
    hi = c - (c - a)
    return hi, a - hi


@njit(**_JIT)
def _two_prod(a, b):
    """a * b as p + e exactly: by an FMA where the CPU has one, else Dekker's."""
    p = a * b
    if HAS_FMA:  # a global constant: the branch folds away
        return p, _fma(a, b, -p)
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@njit(**_JIT)
def _div_dd(n_hi, n_lo, d_hi, d_lo):
    """(n_hi + n_lo) / (d_hi + d_lo), rounded once (a quotient and one exact correction)."""
    q = n_hi / d_hi
    p, pe = _two_prod(q, d_hi)
    r = (((n_hi - p) - pe) + n_lo) - q * d_lo
    return q + r / d_hi


@njit(**_JIT)
def _expm1_dd(r, c):
    """expm1(r + c) for |r| <= 0.35 as hi + lo, to about 2**-62 relative."""
    return _two_sum(r, _expm1_poly(r) + c * (1.0 + r))


@njit(**_JIT)
def exp(x):
    """e**x, within 1 ulp over the whole range (measured: tests/test_vecmath.py)."""
    xc = min(max(x, -746.0), 710.0)  # beyond: 0 and inf, and k stays small
    k, r, c = _reduce_ln2(xc)
    e = 1.0 + (r + (_expm1_poly(r) + c * (1.0 + r)))
    y = _scale(e, k)
    return y if x == x else x


@njit(**_JIT)
def _exp_parts(x):
    """exp(x) for x <= 0 as 2**k * (hi + lo), hi + lo in [0.7, 1.42]: scaled by the caller
    after its last operation, so a subnormal result is rounded once."""
    k, r, c = _reduce_ln2(max(x, -746.0))
    em_hi, em_lo = _expm1_dd(r, c)
    hi, lo = _two_sum(1.0, em_hi)
    return hi, lo + em_lo, k


@njit(**_JIT)
def _expm1_small_dd(x):
    """expm1(x) as hi + lo for -40 <= x <= 40 (2**k - 1 exact)."""
    k, r, c = _reduce_ln2(x)
    em_hi, em_lo = _expm1_dd(r, c)
    s = _double((k + 1023) << 52)                  # 2**k, normal
    m_hi, m_lo = _two_sum(s, -1.0)                 # 2**k - 1, exactly
    hi, lo = _two_sum(s * em_hi, m_hi)             # s * em_hi is exact
    return hi, lo + (m_lo + s * em_lo)


@njit(**_JIT)
def expm1(x):
    """e**x - 1, within 1 ulp; exact -1 below -40 and x itself for tiny x."""
    xc = min(max(x, -40.0), 710.0)
    hi, lo = _expm1_small_dd(min(xc, 38.0))
    small = hi + lo
    k, r, c = _reduce_ln2(xc)
    large = _scale(1.0 + (r + (_expm1_poly(r) + c * (1.0 + r))), k)  # the -1 is below ulp/2
    y = large if xc > 38.0 else small
    return y if (x == x) & (x != 0.0) else x  # nan, and +-0 with its sign, as they are


# fdlibm's log: log(1+f) = f - f*f/2 + s*(f*f/2 + R(s*s)), s = f/(2+f)
_LG1, _LG2 = 6.666666666666735130e-01, 3.999999999940941908e-01
_LG3, _LG4 = 2.857142874366239149e-01, 2.222219843214978396e-01
_LG5, _LG6 = 1.818357216161805012e-01, 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01
_TWO54 = 18014398509481984.0
_SQRT_HALF_BITS = 0x3FE6A09E00000000  # about sqrt(2)/2: mantissas reduce to [it, 2*it)


@njit(**_JIT)
def _log_dd(u, c):
    """log(u) + c as hi + lo, for a positive finite u (subnormal too) and a small c."""
    tiny = u < 2.2250738585072014e-308
    v = u * _TWO54 if tiny else u
    ix = _bits(v) + (0x3FF0000000000000 - _SQRT_HALF_BITS)
    k = ((ix >> 52) & 0x7FF) - 1023 - (54 if tiny else 0)
    m = _double((ix & 0x000FFFFFFFFFFFFF) + _SQRT_HALF_BITS)
    f = m - 1.0
    dk = _double(k + SHIFT_BITS) - SHIFT  # float(k) without an int64->float conversion
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    hfsq = 0.5 * f * f
    # fdlibm's dk*LN2_HI - ((hfsq - (...)) - f), its last two roundings kept in lo
    b_hi, b_lo = _two_sum(hfsq - (s * (hfsq + (t1 + t2)) + (dk * LN2_LO + c)), -f)
    hi, lo = _two_sum(dk * LN2_HI, -b_hi)  # dk * LN2_HI is exact
    return hi, lo - b_lo


@njit(**_JIT)
def log(x):
    """Natural logarithm, within 1 ulp; -inf at 0, nan below, inf at inf."""
    pos = (x > 0.0) & (x < math.inf)
    hi, lo = _log_dd(x if pos else 1.0, 0.0)
    y = hi + lo
    other = -math.inf if x == 0.0 else (x if x == math.inf else math.nan)
    return y if pos else other


@njit(**_JIT)
def _log1p_dd(x, x_lo):
    """log(1 + x + x_lo) as hi + lo, for x > -1: the log of u = 1 + x rounded, plus the
    rounding error of u over u."""
    u = 1.0 + x
    c = ((x - (u - 1.0)) if x < 1.0 else (1.0 - (u - x))) + x_lo  # each difference exact
    return _log_dd(u, c / u)


@njit(**_JIT)
def log1p(x):
    """log(1 + x), within 1 ulp; -inf at -1, nan below, inf at inf."""
    pos = (x > -1.0) & (x < math.inf)
    hi, lo = _log1p_dd(x if pos else 0.0, 0.0)
    y = hi + lo
    other = -math.inf if x == -1.0 else (x if (x == math.inf) | (x == 0.0) else math.nan)
    return y if pos & (x != 0.0) else other  # +-0 as it is: log1p(-0.0) is -0.0


# fdlibm's kernels of sin and cos on [-pi/4, pi/4], with a tail y of the argument
_S1, _S2 = -1.66666666666666324348e-01, 8.33333333332248946124e-03
_S3, _S4 = -1.98412698298579493134e-04, 2.75573137070700676789e-06
_S5, _S6 = -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2 = 4.16666666666666019037e-02, -1.38888888888741095749e-03
_C3, _C4 = 2.48015872894767294178e-05, -2.75573143513906633035e-07
_C5, _C6 = 2.08757232129817482790e-09, -1.13596475577881948265e-11
_INV_PIO2 = 6.36619772367581382433e-01
_PIO2_1 = 1.57079632673412561417e+00   # pi/2 = _PIO2_1 + _PIO2_2 + _PIO2_3 + _PIO2_3T
_PIO2_2 = 6.07710050630396597660e-11
_PIO2_3, _PIO2_3T = 2.02226624871116645580e-21, 8.47842766036889956997e-32
#: below this |x| the reduction above is exact enough; above it sin and cos call libm
TRIG_LIMIT = 1647099.3291652855  # 2**20 * pi/2


@njit(**_JIT)
def _sin_kernel(x, y):
    z = x * x
    w = z * z
    r = _S2 + z * (_S3 + z * _S4) + z * w * (_S5 + z * _S6)
    v = z * x
    return x - ((z * (0.5 * y - v * r) - y) - v * _S1)


@njit(**_JIT)
def _cos_kernel(x, y):
    z = x * x
    w = z * z
    r = z * (_C1 + z * (_C2 + z * _C3)) + w * w * (_C4 + z * (_C5 + z * _C6))
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + (z * r - x * y))


@njit(**_JIT)
def _two_diff(a, b):
    """a - b as s + e exactly (Knuth's TwoSum, no assumption on the magnitudes)."""
    s = a - b
    bb = s - a
    return s, (a - (s - bb)) - (b + bb)


@njit(**_JIT)
def _reduce_pio2(x):
    """x = k*pi/2 + y0 + y1, |y0| <= pi/4: (k mod 4, y0, y1), for |x| < TRIG_LIMIT. pi/2 in
    three 33-bit parts (each product with k exact) and a tail; the differences are exact
    (the first by Sterbenz, the others as TwoSums), so y0 + y1 is right to ~2**-100."""
    t = x * _INV_PIO2 + SHIFT
    k, fn = _as_int_float(t)
    r = x - fn * _PIO2_1
    r, e2 = _two_diff(r, fn * _PIO2_2)
    r, e3 = _two_diff(r, fn * _PIO2_3)
    tail = (e2 + e3) - fn * _PIO2_3T
    y0 = r + tail
    y1 = (r - y0) + tail
    return k & 3, y0, y1


@njit(**_JIT)
def trig_in_range(x):
    """Whether :func:`sin` and :func:`cos` are right at ``x``: |x| < TRIG_LIMIT, or inf or
    nan (whose result, nan, they give too)."""
    a = abs(x)
    return (a < TRIG_LIMIT) | ~(a < math.inf)


@njit(**_JIT)
def sin(x):
    """sin(x) within 1 ulp where :func:`trig_in_range` (a loop that finds an argument out
    of it runs again with libm)."""
    q, y0, y1 = _reduce_pio2(x)
    s = _sin_kernel(y0, y1)
    c = _cos_kernel(y0, y1)
    v = s if q & 1 == 0 else c
    v = -v if q & 2 else v
    return v if x != 0.0 else x  # sin(-0.0) is -0.0


@njit(**_JIT)
def cos(x):
    """cos(x) within 1 ulp where :func:`trig_in_range`."""
    q, y0, y1 = _reduce_pio2(x)
    s = _sin_kernel(y0, y1)
    c = _cos_kernel(y0, y1)
    v = c if q & 1 == 0 else s
    return -v if (q + 1) & 2 else v


@njit(**_JIT)
def _fast_two_sum(a, b):
    """a + b as s + e exactly, for |a| >= |b| or a == 0 (Dekker's Fast2Sum)."""
    s = a + b
    return s, b - (s - a)


#: (expm1(r) - r - r**2/2) / r**3 on |r| <= ln2/2, Chebyshev fit of degree 9 (mpmath): within
#: 2**-55.5 as rounded here; times r**3, below 2**-60 of e (tanh_sech2 needs no more)
_Q0, _Q1, _Q2 = 0.16666666666666669, 0.041666666666666664, 0.008333333333330062
_Q3, _Q4, _Q5 = 0.0013888888888886552, 0.00019841269863053618, 2.4801587317144498e-05
_Q6, _Q7, _Q8 = 2.7557268459997064e-06, 2.755728296954995e-07, 2.510038549551032e-08
_Q9 = 2.0911236630261545e-09


@njit(**_JIT)
def _expm1_poly_estrin(r):
    """expm1(r) - r, |r| <= ln2/2, by Estrin's scheme: 4 dependent steps, not Horner's 9
    (a loop of :func:`tanh_sech2` is bound by the latency of its chain)."""
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    if HAS_FMA:
        e0 = _fma(_fma(_Q3, r, _Q2), r2, _fma(_Q1, r, _Q0))
        e1 = _fma(_fma(_Q7, r, _Q6), r2, _fma(_Q5, r, _Q4))
        q = _fma(_fma(_Q9, r, _Q8), r8, _fma(e1, r4, e0))
    else:
        e0 = (_Q3 * r + _Q2) * r2 + (_Q1 * r + _Q0)
        e1 = (_Q7 * r + _Q6) * r2 + (_Q5 * r + _Q4)
        q = (_Q9 * r + _Q8) * r8 + (e1 * r4 + e0)
    return r2 * 0.5 + r2 * r * q


@njit(**_JIT)
def tanh_sech2(x):
    """(tanh(x), sech(x)**2) from ONE exponential, each within 1 ulp (tests/test_vecmath.py),
    for tanh's gradient (tanh_pairs). e = exp(-2|x|) = 2**k m, m = 1 + expm1(r + c) in
    double-double; 1 - e (-expm1 itself at k = 0: no cancellation) and D = 1 + e as Fast2Sums;
    tanh|x| = (1 - e)/D and sech**2 = 4 * 2**k * (m/D)/D by one reciprocal, each quotient
    with an exact correction, 2**k last (a subnormal result, |x| > 354, rounded once). XLA's
    1 - t*t is 0 from |x| = 19 on. Without FMA, the exact products are Dekker's."""
    a = abs(x)
    ac = 380.0 if a > 380.0 else a                 # exp(-760) * 4 < half the least subnormal;
    # nan stays nan, and so do both results
    k, r, c = _reduce_ln2(-2.0 * ac)
    cr = _fma(c, r, c) if HAS_FMA else c * (1.0 + r)
    em_hi, em_lo = _fast_two_sum(r, _expm1_poly_estrin(r) + cr)  # |r| >= the rest
    kt = k if k > -64 else -64                     # below, e < 2**-64 and 1 +- e is 1 +- tiny
    s = _double((kt + 1023) << 52)                 # 2**k, normal
    m_hi, m_lo = _fast_two_sum(1.0, em_hi)         # e = 2**k (m_hi + m_lo), each exact
    m_lo += em_lo
    e_hi, e_lo = s * m_hi, s * m_lo
    n_hi, n_lo = _fast_two_sum(1.0, -e_hi)         # 1 - e
    n_lo -= e_lo
    n_hi = n_hi if k != 0 else -em_hi              # k = 0: -em itself (tiny x: no cancellation)
    n_lo = n_lo if k != 0 else -em_lo
    d_hi, d_lo = _fast_two_sum(1.0, e_hi)          # 1 + e
    d_lo += e_lo
    w = 1.0 / d_hi                                 # the one division
    t0 = n_hi * w
    p, pe = _two_prod(t0, d_hi)
    rho = _fma(-t0, d_hi, n_hi) if HAS_FMA else (n_hi - p) - pe  # n - t0 d, exact
    tc = ((rho + n_lo) - t0 * d_lo) * w
    t = math.copysign(t0 + tc, x)                  # +-0 and subnormals come out as they are
    g0 = m_hi * w                                  # m/D = g0 + gc
    gp, gpe = _two_prod(g0, d_hi)
    gr = _fma(-g0, d_hi, m_hi) if HAS_FMA else (m_hi - gp) - gpe
    gc = ((gr + m_lo) - g0 * d_lo) * w
    h0 = g0 * w                                    # m/D**2 = h0 + hc, another correction
    hp, hpe = _two_prod(h0, d_hi)
    hr = _fma(-h0, d_hi, g0) if HAS_FMA else (g0 - hp) - hpe
    f = 4.0 * (h0 + ((hr + gc) - h0 * d_lo) * w)
    d = (f * _double((k + 74 + 1023) << 52)) * 2.0 ** -74  # 4e/D**2: k >= -1096, the
    # first product is exact (normal), the second the one rounding of a subnormal result
    return t, d


@njit(**_JIT)
def tanh(x):
    """tanh(x) within 1 ulp: :func:`tanh_sech2`'s first value (LLVM drops the rest)."""
    return tanh_sech2(x)[0]


@njit(**_JIT)
def sigmoid(x):
    """1/(1+e) for x >= 0, e/(1+e) below, e = exp(-|x|) in double-double: nothing
    overflows, and one rounding at the end (the scaling of a subnormal e/(1+e) last)."""
    m_hi, m_lo, k = _exp_parts(-abs(x))
    e_hi = _scale(m_hi, k)
    d_hi, d_lo = _two_sum(1.0, e_hi)
    d_lo += _scale(m_lo, k)
    y = (_div_dd(1.0, 0.0, d_hi, d_lo) if x >= 0.0
         else _scale(_div_dd(m_hi, m_lo, d_hi, d_lo), k))
    return y if x == x else x


@njit(**_JIT)
def softplus(x):
    """log(1 + exp(x)) = log1p(exp(-|x|)) + max(x, 0): no overflow; log1p and exp in
    double-double, one rounding at the end. Below -30, e - e**2/2 (e = exp(x); the next
    term is 2**-81 of e): log1p's double-double lost up to 0.64 ulp where 1 + e rounds
    to 1 + 2**-52 (1.14 ulp in all at x = -36.5147, before)."""
    m_hi, m_lo, k = _exp_parts(-abs(x))
    e_hi = _scale(m_hi, k)
    l_hi, l_lo = _log1p_dd(e_hi, _scale(m_lo, k))
    hi, lo = _two_sum(max(x, 0.0), l_hi)
    y = hi + (lo + l_lo)
    y = _scale(m_hi + (m_lo - 0.5 * m_hi * e_hi), k) if x < -30.0 else y
    return y if abs(x) < math.inf else (0.0 if x < 0.0 else x)  # -inf: 0; inf, nan: x


@njit(**_JIT)
def row_sum(r):
    """The sum of a fused loop's scratch row (:data:`.codegen.ROW_SUMS`) in 8 lanes: lane
    l adds r[l], r[l + 8], ... in order, the lanes pairwise, then the last len(r) % 8
    elements in order (below 8, a plain loop's order). Eight chains of additions instead
    of one: a third of a plain loop's time at 1000; the order depends on len(r) alone."""
    n = r.size
    m = n - n % 8
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
    for j in range(0, m, 8):
        a0 += r[j]
        a1 += r[j + 1]
        a2 += r[j + 2]
        a3 += r[j + 3]
        a4 += r[j + 4]
        a5 += r[j + 5]
        a6 += r[j + 6]
        a7 += r[j + 7]
    total = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
    for j in range(m, n):
        total += r[j]
    return total


@njit(**_JIT)
def _mul_dd_x(h, lo, x, xh, xl):
    """(h + lo) * x as a pair (s, t), s = fl(s + t): h * x exactly by Dekker's TwoProd (x
    split once by the caller into xh + xl), lo * x and the sum rounded (about 2**-104
    relative). Exact terms need 2**-960 <= |h * x| < 2**1020 (:func:`powi_in_range`)."""
    p = h * x
    if HAS_FMA:
        e = _fma(h, x, -p)
    else:
        hh, hl = _split(h)
        e = ((hh * xh - p) + hh * xl + hl * xh) + hl * xl
    t = e + lo * x
    s = p + t
    return s, t - (s - p)


@njit(**_JIT)
def powi_in_range(x, n):
    """Whether :func:`powi` is right at ``x``: 2**-960 <= |x|**n < 2**1020 (the product
    chain's split and error terms neither overflow nor underflow), or x is 0, inf or nan
    (which it gives as pow does). ``n`` is a literal: the bounds fold to constants."""
    a = abs(float(x))
    lo = _double((1023 - 960 // n) << 52)   # 2**-floor(960/n): a**n >= 2**-960
    hi = _double((1023 + 1020 // n) << 52)  # 2**floor(1020/n): a**n < 2**1020
    return ((a >= lo) & (a < hi)) | (a == 0.0) | ~(a < math.inf)


@njit(**_JIT)
def powi(x, n):
    """x**n for an integer n >= 2 (fused loops call it for n in :data:`POWI_EXPONENTS`)
    within 1 ulp where :func:`powi_in_range`: n - 1 double-double steps, rounded once at
    the end, so in practice the correctly rounded value. A float32 ``x`` is widened (the
    caller rounds the result once). 0, inf, nan: x for odd n, x*x for even n (pow's
    signs: (-0.0)**3 = -0.0, (-inf)**4 = inf).

    >>> powi(3.0, 5), powi(-0.0, 3), powi(-math.inf, 4)
    (243.0, -0.0, inf)
    """
    a = float(x)
    ah, al = _split(a)
    h, lo = a, 0.0
    for _ in range(n - 1):  # a literal n: LLVM unrolls it into straight-line code
        h, lo = _mul_dd_x(h, lo, a, ah, al)
    special = a if n & 1 else a * a
    return h if (a != 0.0) & (abs(a) < math.inf) else special


__all__ = ["PATHS", "POWI_EXPONENTS", "TRIG_LIMIT", "cos", "exp", "expm1", "log", "log1p",
           "powi", "powi_in_range", "row_sum", "sigmoid", "sin", "softplus", "tanh",
           "tanh_sech2", "trig_in_range"]
