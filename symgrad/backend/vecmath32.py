"""float32 elementwise math computed in float32, for the fused loops of float32 kernels.

:mod:`.vecmath`'s functions take float64: a float32 loop that calls them converts
every element there and back and runs 4 lanes of 64 bits where it could run 8 (or
16) of 32. Here exp, log, tanh, sigmoid and softplus are written again in float32
arithmetic only, from the same methods as their float64 versions (Cody-Waite
reduction by ln 2, Taylor or fdlibm's polynomials with float32 coefficients,
double-float pairs -- an exact ``hi + lo`` of two float32 -- where a result must be
rounded once), and each is within 1 ulp of float32. The bounds are measured by
``benchmarks/float32_accuracy.py`` (every float32 in the range where the function
varies, stratified, plus the special and tail points; docs/accuracy.md) and checked
in CI by ``tests/test_float32.py`` on a sample.

No float64 and no 64-bit integer appears: Numba types any Python float literal as
float64 and any integer arithmetic as int64, so constants are module-level
``np.float32`` values and the bit manipulations (2**k, the exponent and mantissa
of log's argument) are LLVM intrinsics on 32-bit lanes.

    >>> import numpy as np
    >>> float(exp32(np.float32(1.0))) == float(np.float32(np.e))
    True
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

from .vecmath import HAS_FMA

F = np.float32
_JIT = {"inline": "always", "error_model": "numpy", "cache": False}


@intrinsic
def _pow2(typingctx, kf):  # noqa: ARG001 -- numba's intrinsic signature
    """2**k for a float32 ``kf`` holding an integer k in [-126, 127] (int32 lanes)."""
    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)  # (not a module constant: sg.export copies this function)
        k = builder.fptosi(args[0], i32)
        bits = builder.shl(builder.add(k, ir.Constant(i32, 127)), ir.Constant(i32, 23))
        return builder.bitcast(bits, ir.FloatType())
    return types.float32(types.float32), codegen


def _log_bits(builder, v):
    # fdlibm: mantissas reduce to [sqrt(2)/2, sqrt(2)) by adding 1 - 0x3f3504f3
    i32 = ir.IntType(32)
    ix = builder.add(builder.bitcast(v, i32), ir.Constant(i32, 0x3F800000 - 0x3F3504F3))
    return ix


@intrinsic
def _log_exponent(typingctx, v):  # noqa: ARG001
    """k of v = 2**k * m, m in [sqrt(2)/2, sqrt(2)), as a float32 (v normal, positive)."""
    def codegen(context, builder, signature, args):
        ix = _log_bits(builder, args[0])
        i32 = ir.IntType(32)
        k = builder.sub(builder.ashr(ix, ir.Constant(i32, 23)), ir.Constant(i32, 127))
        return builder.sitofp(k, ir.FloatType())
    return types.float32(types.float32), codegen


@intrinsic
def _log_mantissa(typingctx, v):  # noqa: ARG001
    """m of v = 2**k * m (see :func:`_log_exponent`)."""
    def codegen(context, builder, signature, args):
        ix = _log_bits(builder, args[0])
        i32 = ir.IntType(32)
        m = builder.add(builder.and_(ix, ir.Constant(i32, 0x007FFFFF)),
                        ir.Constant(i32, 0x3F3504F3))
        return builder.bitcast(m, ir.FloatType())
    return types.float32(types.float32), codegen


@intrinsic
def _fma(typingctx, a, b, c):  # noqa: ARG001
    """a * b + c rounded once, in float32."""
    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return types.float32(types.float32, types.float32, types.float32), codegen


ZERO, HALF, ONE, TWO, FOUR = F(0.0), F(0.5), F(1.0), F(2.0), F(4.0)
THIRD, QUARTER = F(1 / 3), F(0.25)
INF, NAN = F(np.inf), F(np.nan)
TANH_ONE = F(9.1)                      # tanh rounds to 1 from 9.01 on
SOFTPLUS_EXP = F(-24.0)                # below: softplus(x) = exp(x) (log1p(e) = e(1 - e/2))
SHIFT = F(12582912.0)                  # 1.5 * 2**23: t + SHIFT - SHIFT rounds t to an integer
INV_LN2 = F(1.44269504088896341)
LN2_HI = F(6.9314575195e-01)           # 0x3f317200: 15 bits, k * LN2_HI exact for |k| <= 255
LN2_LO = F(1.4286067653e-06)           # 0x35bfbe8e
EXP_LO, EXP_HI = F(-104.0), F(89.0)    # beyond: 0 and inf (exp(-103.98) is half the least)
_E2, _E3, _E4, _E5 = F(1 / 2), F(1 / 6), F(1 / 24), F(1 / 120)
_E6, _E7, _E8 = F(1 / 720), F(1 / 5040), F(1 / 40320)
SPLIT = F(4097.0)                      # 2**12 + 1: Dekker's split of a float32
TINY = F(1.1754943508222875e-38)       # the least normal float32
TWO25 = F(33554432.0)
# fdlibm's logf (FreeBSD e_logf.c): log(1+f) = f - f*f/2 + s*(f*f/2 + R(s*s))
_LG1, _LG2 = F(0.66666662693), F(0.40000972152)
_LG3, _LG4 = F(0.28498786688), F(0.24279078841)
LOG_LN2_HI = F(6.9313812256e-01)       # 0x3f317180: 16 bits, k * it exact for |k| <= 255
LOG_LN2_LO = F(9.0580006145e-06)


@njit(**_JIT)
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@njit(**_JIT)
def _two_prod(a, b):
    p = a * b
    if HAS_FMA:
        return p, _fma(a, b, -p)
    c = SPLIT * a
    ah = c - (c - a)
    al = a - ah
    d = SPLIT * b
    bh = d - (d - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@njit(**_JIT)
def _div_dd(n_hi, n_lo, d_hi, d_lo):
    """(n_hi + n_lo) / (d_hi + d_lo), rounded once (a quotient, one exact correction)."""
    q = n_hi / d_hi
    p, pe = _two_prod(q, d_hi)
    r = (((n_hi - p) - pe) + n_lo) - q * d_lo
    return q + r / d_hi


@njit(**_JIT)
def _scale(y, kf):
    """y * 2**k for an integer k = kf in [-252, 254], in two exact power-of-two steps:
    the one rounding is the last product's (subnormal results, overflow)."""
    k1 = (kf * HALF + SHIFT) - SHIFT
    return y * _pow2(k1) * _pow2(kf - k1)


@njit(**_JIT)
def _reduce(x):
    """x = k ln2 + r + c, |r| <= ln2/2: (k as a float32, r, c the rounding error of r)."""
    kf = (x * INV_LN2 + SHIFT) - SHIFT
    hi = x - kf * LN2_HI   # exact
    lo = kf * LN2_LO
    r = hi - lo
    return kf, r, (hi - r) - lo


@njit(**_JIT)
def _expm1_tail(r, c):
    """expm1(r + c) - r for |r| <= 0.35 (Taylor to r**8: 2e-10 relative)."""
    q = _fma(_fma(_fma(_fma(_fma(_E8, r, _E7), r, _E6), r, _E5), r, _E4), r, _E3) \
        if HAS_FMA else ((((_E8 * r + _E7) * r + _E6) * r + _E5) * r + _E4) * r + _E3
    r2 = r * r
    return r2 * _E2 + r2 * r * q + c * (ONE + r)


@njit(**_JIT)
def _exp_parts(x):
    """exp(x) = 2**k * (hi + lo), hi + lo in [0.7, 1.42] (a double-float), for
    EXP_LO <= x <= EXP_HI: (hi, lo, k)."""
    kf, r, c = _reduce(x)
    s, e = _two_sum(ONE, r)
    t = _expm1_tail(r, c)
    hi, lo = _two_sum(s, e + t)
    return hi, lo, kf


@njit(**_JIT)
def exp32(x):
    """e**x in float32, within 1 ulp; 0 below -104, inf above 89, nan as it is."""
    xc = min(max(x, EXP_LO), EXP_HI)
    hi, lo, kf = _exp_parts(xc)
    y = _scale(hi + lo, kf)
    return y if x == x else x


@njit(**_JIT)
def _expm1_dd(x):
    """expm1(x) as a double-float (hi, lo), for -18.2 <= x <= 0 (2**k normal, 2**k - 1
    exact as a pair)."""
    kf, r, c = _reduce(x)
    e_hi, e_lo = _two_sum(r, _expm1_tail(r, c))   # expm1(r + c)
    s = _pow2(kf)                                  # normal: k >= -15
    m_hi, m_lo = _two_sum(s, -ONE)                 # 2**k - 1, exactly
    hi, lo = _two_sum(s * e_hi, m_hi)              # s * e_hi is exact
    return hi, lo + (m_lo + s * e_lo)


@njit(**_JIT)
def tanh32(x):
    """tanh(|x|) = -t / (t + 2), t = expm1(-2|x|) as a double-float, rounded once at
    the end; 1 beyond 9.1 (tanh rounds to 1 from 9.01 on), x itself for tiny x."""
    a = abs(x)
    ac = a if a < TANH_ONE else TANH_ONE
    t_hi, t_lo = _expm1_dd(-TWO * ac)
    d_hi, d_lo = _two_sum(t_hi, TWO)
    z = _div_dd(-t_hi, -t_lo, d_hi, d_lo + t_lo)
    z = ONE if a >= TANH_ONE else z
    z = -z if x < ZERO else z
    return z if a > F(1e-30) else x  # +-0, tiny, nan as they are


@njit(**_JIT)
def sigmoid32(x):
    """1/(1+e) for x >= 0, e/(1+e) below, e = exp(-|x|) as 2**k (hi + lo): nothing
    overflows; one rounding at the end (a subnormal e/(1+e) scaled last)."""
    a = min(abs(x), -EXP_LO)
    m_hi, m_lo, kf = _exp_parts(-a)
    e_hi = _scale(m_hi, kf)
    d_hi, d_lo = _two_sum(ONE, e_hi)
    d_lo += _scale(m_lo, kf)
    y = (_div_dd(ONE, ZERO, d_hi, d_lo) if x >= ZERO
         else _scale(_div_dd(m_hi, m_lo, d_hi, d_lo), kf))
    return y if x == x else x


@njit(**_JIT)
def _log_dd(u, c):
    """log(u) + c as a double-float, for a positive finite float32 u and a small c."""
    tiny = u < TINY
    v = u * TWO25 if tiny else u
    dk = _log_exponent(v) - (F(25.0) if tiny else ZERO)
    f = _log_mantissa(v) - ONE
    s = f / (TWO + f)
    z = s * s
    w = z * z
    t1 = w * (_LG2 + w * _LG4)
    t2 = z * (_LG1 + w * _LG3)
    hfsq = HALF * f * f
    b_hi, b_lo = _two_sum(hfsq - (s * (hfsq + (t1 + t2)) + (dk * LOG_LN2_LO + c)), -f)
    hi, lo = _two_sum(dk * LOG_LN2_HI, -b_hi)  # dk * LOG_LN2_HI is exact
    return hi, lo - b_lo


@njit(**_JIT)
def log32(x):
    """Natural logarithm in float32, within 1 ulp; -inf at 0, nan below, inf at inf."""
    pos = (x > ZERO) & (x < INF)
    hi, lo = _log_dd(x if pos else ONE, ZERO)
    y = hi + lo
    other = -INF if x == ZERO else (x if x == INF else NAN)
    return y if pos else other


@njit(**_JIT)
def softplus32(x):
    """log(1 + exp(x)) = log1p(exp(-|x|)) + max(x, 0) in float32: exp and log1p as
    double-floats, one rounding at the end; exp(x) itself below -24 (log1p(e) = e to
    float32 precision there)."""
    a = min(abs(x), -EXP_LO)
    m_hi, m_lo, kf = _exp_parts(-a)
    e_hi = _scale(m_hi, kf)
    e_lo = _scale(m_lo, kf)
    u = ONE + e_hi
    c = (e_hi - (u - ONE)) + e_lo  # exact for e_hi < 1: the rounding error of u
    l_hi, l_lo = _log_dd(u, c / u)
    # below e = 2**-8 (|x| > 5.5) the rounding of c / u is a good part of an ulp of the
    # result: log1p(e) = e - e**2 (1/2 - e/3 + e**2/4) instead, e and a small correction
    series = e_lo - e_hi * e_hi * (HALF - e_hi * (THIRD - e_hi * QUARTER))
    far = a > F(5.5)
    l_hi = e_hi if far else l_hi
    l_lo = series if far else l_lo
    hi, lo = _two_sum(max(x, ZERO), l_hi)
    y = hi + (lo + l_lo)
    y = _scale(m_hi + m_lo, kf) if x < SOFTPLUS_EXP else y
    return y if abs(x) < INF else (ZERO if x < ZERO else x)  # -inf: 0; inf, nan: x


# sin and cos: x = k pi/2 + y0 + y1, pi/2 in three parts of 12 bits (each product with
# k < 2**12 exact) and a tail; fdlibm's kernel forms with Cephes' float32 coefficients
INV_PIO2 = F(0.6366197723675814)
PIO2_1, PIO2_2 = F(1.57080078125), F(-4.453584551811218e-06)
PIO2_3, PIO2_3T = F(-8.706138032721356e-10), F(6.223371969669989e-14)
#: below this |x| the reduction is exact enough; a loop with an argument beyond runs again
#: with libm (``trig_in_range32``)
TRIG_LIMIT32 = F(6433.0)               # below 2**12 * pi/2
_S1, _S2, _S3 = F(-1.6666654611e-1), F(8.3321608736e-3), F(-1.9515295891e-4)
_C1, _C2, _C3 = F(4.166664568298827e-2), F(-1.388731625493765e-3), F(2.443315711809948e-5)


@njit(**_JIT)
def _two_diff(a, b):
    s = a - b
    bb = s - a
    return s, (a - (s - bb)) - (b + bb)


@njit(**_JIT)
def _reduce_pio2(x):
    """x = k pi/2 + y0 + y1, |y0| <= pi/4: (k mod 4 as a float32, y0, y1)."""
    kf = (x * INV_PIO2 + SHIFT) - SHIFT
    r = x - kf * PIO2_1                  # exact (Sterbenz)
    r, e2 = _two_diff(r, kf * PIO2_2)
    r, e3 = _two_diff(r, kf * PIO2_3)
    tail = (e2 + e3) - kf * PIO2_3T
    y0 = r + tail
    y1 = (r - y0) + tail
    q = kf - F(4.0) * ((kf * F(0.25) + SHIFT) - SHIFT)  # k mod 4, in -2..2 (rint)
    return q, y0, y1


@njit(**_JIT)
def _sin_kernel(x, y):
    z = x * x
    r = _S2 + z * _S3
    v = z * x
    return x - ((z * (HALF * y - v * r) - y) - v * _S1)


@njit(**_JIT)
def _cos_kernel(x, y):
    z = x * x
    r = z * (_C1 + z * (_C2 + z * _C3))
    hz = HALF * z
    w = ONE - hz
    return w + (((ONE - w) - hz) + (z * r - x * y))


@njit(**_JIT)
def trig_in_range32(x):
    """Whether :func:`sin32` and :func:`cos32` are right at ``x``: |x| < TRIG_LIMIT32, or
    inf or nan (whose result, nan, they give too)."""
    a = abs(x)
    return (a < TRIG_LIMIT32) | ~(a < INF)


@njit(**_JIT)
def sin32(x):
    """sin(x) in float32, within 1 ulp where :func:`trig_in_range32`."""
    q, y0, y1 = _reduce_pio2(x)
    s = _sin_kernel(y0, y1)
    c = _cos_kernel(y0, y1)
    odd = (q == ONE) | (q == -ONE) | (q == F(3.0)) | (q == F(-3.0))
    v = c if odd else s
    neg = (q == TWO) | (q == -TWO) | (q == -ONE) | (q == F(3.0))
    v = -v if neg else v
    v = v if abs(x) < INF else NAN
    return v if x != ZERO else x  # sin(-0.0) is -0.0


@njit(**_JIT)
def cos32(x):
    """cos(x) in float32, within 1 ulp where :func:`trig_in_range32`."""
    q, y0, y1 = _reduce_pio2(x)
    s = _sin_kernel(y0, y1)
    c = _cos_kernel(y0, y1)
    odd = (q == ONE) | (q == -ONE) | (q == F(3.0)) | (q == F(-3.0))
    v = s if odd else c
    neg = (q == ONE) | (q == TWO) | (q == -TWO) | (q == F(-3.0))
    v = -v if neg else v
    return v if abs(x) < INF else NAN


__all__ = ["cos32", "exp32", "log32", "sigmoid32", "sin32", "softplus32", "tanh32",
           "trig_in_range32"]
