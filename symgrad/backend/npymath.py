"""numpy's complex functions, its ``cbrt``, its float ``//`` and ``%`` and its FFT, for Numba
kernels: the same bits.

Numba writes its own complex ``log``, ``tanh``, ``arccosh``... (``numba.cpython.cmathimpl``,
Python's algorithms), which are not numpy's: its complex log loses digits near |z| = 1,
its ``expm1`` is ``exp(z) - 1``, its ``tanh`` is nan for |Re z| > 355. Its ``cbrt`` is
``x ** (1/3)`` or libm's ``cbrt`` (``cbrt(27.0) == 3.0000000000000004``), where numpy's is
its own SIMD loop on a CPU with AVX-512 (3.0): kernels call numpy's loop itself
(:func:`numpy_loop`, registered as a symbol, :data:`NUMPY_CBRT`). numpy calls the C library's
``clog``, ``ctanh``, ``cacosh``, ``csqrt``... (npymath's ``npy_clog`` and the others, where
the platform has them: every one on Linux and macOS) and writes a few itself
(``funcs.inc.src``: ``log1p``, ``expm1``, ``exp2``, ``log2``, ``log10``; ``npy_cpow``'s
products for integer exponents; the complex ``sign`` of ``loops.c.src``). Here the
libm functions are called through Numba intrinsics (:func:`_libm_call`: the C ABI of
``double complex`` on x86-64, two doubles in, a pair out; ``float complex`` one
``<2 x float>``), and numpy's own compositions are copied, operation for operation, in
the operands' precision. The kernel and numpy then run the same machine code on the
same values: equal bits, which ``tests/test_npymath.py`` checks on both sides of every
branch cut, at signed zeros, infinities and nans.

:data:`symgrad.backend.numba.lowering.table.NPYMATH` says whether kernels call them
(x86-64, not Windows, where numpy writes its own): elsewhere the backend runs the
functions that differ between kernels, as before.
"""

from __future__ import annotations

import ctypes
import math

import numba
import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.extending import intrinsic

_JIT = {"inline": "always", "error_model": "numpy", "cache": False}

LOG2E = 1.4426950408889634074
LOG10E = 0.43429448190325182765
LOGE2 = 0.69314718055994530942


def _libm_call(name, *operands):
    """The signature and codegen of an intrinsic that calls libm's complex ``name`` (its
    ``f`` variant for complex64) on complex operands of one type."""
    kind = operands[0]
    if not isinstance(kind, types.Complex) or any(z != kind for z in operands):
        return None
    double = kind.underlying_float.bitwidth == 64

    def codegen(context, builder, signature, args):
        parts = [context.make_complex(builder, kind, value=a) for a in args]
        if double:
            real = ir.DoubleType()
            fnty = ir.FunctionType(ir.LiteralStructType([real, real]), [real] * (2 * len(args)))
            fn = cgutils.get_or_insert_function(builder.module, fnty, name)
            got = builder.call(fn, [x for p in parts for x in (p.real, p.imag)])
            re, im = builder.extract_value(got, 0), builder.extract_value(got, 1)
        else:
            pair = ir.VectorType(ir.FloatType(), 2)
            fnty = ir.FunctionType(pair, [pair] * len(args))
            fn = cgutils.get_or_insert_function(builder.module, fnty, name + "f")
            packed = []
            for p in parts:
                v = builder.insert_element(ir.Constant(pair, None), p.real, ir.IntType(32)(0))
                packed.append(builder.insert_element(v, p.imag, ir.IntType(32)(1)))
            got = builder.call(fn, packed)
            re = builder.extract_element(got, ir.IntType(32)(0))
            im = builder.extract_element(got, ir.IntType(32)(1))
        out = context.make_complex(builder, kind)
        out.real, out.imag = re, im
        return out._getvalue()
    return kind(*operands), codegen


@intrinsic
def clog(typingctx, z):  # noqa: ARG001 -- numba's intrinsic signature
    return _libm_call("clog", z)


@intrinsic
def cexp(typingctx, z):  # noqa: ARG001
    return _libm_call("cexp", z)


@intrinsic
def csqrt(typingctx, z):  # noqa: ARG001
    return _libm_call("csqrt", z)


@intrinsic
def csin(typingctx, z):  # noqa: ARG001
    return _libm_call("csin", z)


@intrinsic
def ccos(typingctx, z):  # noqa: ARG001
    return _libm_call("ccos", z)


@intrinsic
def ctan(typingctx, z):  # noqa: ARG001
    return _libm_call("ctan", z)


@intrinsic
def csinh(typingctx, z):  # noqa: ARG001
    return _libm_call("csinh", z)


@intrinsic
def ccosh(typingctx, z):  # noqa: ARG001
    return _libm_call("ccosh", z)


@intrinsic
def ctanh(typingctx, z):  # noqa: ARG001
    return _libm_call("ctanh", z)


@intrinsic
def casin(typingctx, z):  # noqa: ARG001
    return _libm_call("casin", z)


@intrinsic
def cacos(typingctx, z):  # noqa: ARG001
    return _libm_call("cacos", z)


@intrinsic
def catan(typingctx, z):  # noqa: ARG001
    return _libm_call("catan", z)


@intrinsic
def casinh(typingctx, z):  # noqa: ARG001
    return _libm_call("casinh", z)


@intrinsic
def cacosh(typingctx, z):  # noqa: ARG001
    return _libm_call("cacosh", z)


@intrinsic
def catanh(typingctx, z):  # noqa: ARG001
    return _libm_call("catanh", z)


@intrinsic
def cpow(typingctx, a, b):  # noqa: ARG001
    return _libm_call("cpow", a, b)


def numpy_loop(ufunc, types_: str) -> tuple[int, int]:
    """The address of numpy's own inner loop of ``ufunc`` for ``types_`` (``"d->d"``: the
    first such, the one numpy runs) and its data pointer: ``PyUFuncObject``'s
    ``functions`` and ``data`` (after PyObject_HEAD and four ints, a layout numpy has kept
    since 1.0). numpy picks the loop's machine code for the CPU when it loads (its SIMD
    ``cbrt`` where the CPU has AVX-512: not libm's, whose ``cbrt(27.0)`` is
    3.0000000000000004 where numpy's is 3.0)."""
    k = ufunc.types.index(types_)
    head = [ctypes.c_int.from_address(id(ufunc) + 16 + 4 * j).value for j in range(3)]
    if head != [ufunc.nin, ufunc.nout, ufunc.nargs] or \
            ctypes.c_int.from_address(id(ufunc) + 48).value != ufunc.ntypes:
        raise TypeError("numpy's PyUFuncObject is not laid out as numpy 1.x-2.x lays it out")
    functions = ctypes.c_void_p.from_address(id(ufunc) + 32).value
    data = ctypes.c_void_p.from_address(id(ufunc) + 40).value
    return (ctypes.c_void_p.from_address(functions + 8 * k).value,
            ctypes.c_void_p.from_address(data + 8 * k).value if data else 0)


#: the symbols kernels call for numpy's cbrt (its own loop, one element at a time)
CBRT_SYMBOLS = {"d": "symgrad_numpy_cbrt_f64", "f": "symgrad_numpy_cbrt_f32"}
_LOOP = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


def _register_numpy_cbrt() -> bool:
    """Make :data:`CBRT_SYMBOLS` numpy's cbrt loops for the JIT's linker (as Numba makes
    its helper functions), after checking through ctypes that they give np.cbrt's values
    on a few points; False (kernels call libm's cbrt) where they do not."""
    probe = np.array([27.0, -8.0, 2.0, 1e-310, -0.0, np.inf, 3.5e300, 0.1])
    for code, symbol in CBRT_SYMBOLS.items():
        kind = np.float64 if code == "d" else np.float32
        try:
            address, data = numpy_loop(np.cbrt, f"{code}->{code}")
        except (ValueError, TypeError):
            return False
        with np.errstate(all="ignore"):
            x = probe.astype(kind)
        out = np.empty_like(x)
        args = (ctypes.c_void_p * 2)(x.ctypes.data, out.ctypes.data)
        dims, steps = (ctypes.c_ssize_t * 1)(x.size), (ctypes.c_ssize_t * 2)(x.itemsize, x.itemsize)
        _LOOP(address)(ctypes.addressof(args), ctypes.addressof(dims), ctypes.addressof(steps),
                       data or None)
        if data or not np.array_equal(out.view(np.uint8), np.cbrt(x).view(np.uint8)):
            return False
        llvm_binding.add_symbol(symbol, address)
    return True


#: whether kernels call numpy's own cbrt loop (else libm's cbrt)
NUMPY_CBRT = _register_numpy_cbrt()


@intrinsic
def cbrt(typingctx, x):  # noqa: ARG001 -- numba's intrinsic signature
    """numpy's cbrt of a float64 or float32: its own loop on one element (the symbols of
    :data:`CBRT_SYMBOLS`), where registered, else libm's ``cbrt``/``cbrtf`` (generated
    kernels call :func:`libm_cbrt` then: their source, the cache's key, says which)."""
    if not isinstance(x, types.Float):
        return None
    code = "d" if x.bitwidth == 64 else "f"

    def codegen(context, builder, signature, args):
        real = args[0].type
        if not NUMPY_CBRT:
            name = "cbrt" if code == "d" else "cbrtf"
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(real, [real]),
                                                name)
            return builder.call(fn, args)
        pointer = ir.IntType(8).as_pointer()
        size = ir.IntType(64)
        fnty = ir.FunctionType(ir.VoidType(), [pointer.as_pointer(), size.as_pointer(),
                                               size.as_pointer(), pointer])
        fn = cgutils.get_or_insert_function(builder.module, fnty, CBRT_SYMBOLS[code])
        x_slot, out_slot = cgutils.alloca_once(builder, real), cgutils.alloca_once(builder, real)
        operands = cgutils.alloca_once(builder, pointer, size=2)
        shape = cgutils.alloca_once(builder, size, size=3)  # the length, then two strides
        builder.store(args[0], x_slot)
        builder.store(builder.bitcast(x_slot, pointer), operands)
        builder.store(builder.bitcast(out_slot, pointer), builder.gep(operands, [size(1)]))
        for k, value in enumerate((1, 0, 0)):
            builder.store(size(value), builder.gep(shape, [size(k)]))
        builder.call(fn, [operands, shape, builder.gep(shape, [size(1)]),
                          ir.Constant(pointer, None)])
        return builder.load(out_slot)
    return x(x), codegen


@intrinsic
def libm_cbrt(typingctx, x):  # noqa: ARG001
    """libm's ``cbrt``/``cbrtf`` (an exported module's: numpy's loop is not a symbol there).
    Not within 1 ulp: glibc's ``cbrt(360.5104896409217)`` is 3 ulps below numpy's (which
    is correctly rounded there)."""
    if not isinstance(x, types.Float):
        return None
    name = "cbrt" if x.bitwidth == 64 else "cbrtf"

    def codegen(context, builder, signature, args):
        real = args[0].type
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(real, [real]), name)
        return builder.call(fn, args)
    return x(x), codegen


@intrinsic
def like(typingctx, z, c):  # noqa: ARG001
    """The float ``c`` in the precision of ``z``'s parts (float32 for complex64, float32)
    rounded once, as C rounds a constant of that type."""
    part = z.underlying_float if isinstance(z, types.Complex) else z
    if not isinstance(part, types.Float) or not isinstance(c, types.Float):
        return None

    def codegen(context, builder, signature, args):
        return context.cast(builder, args[1], c, part)
    return part(z, c), codegen


@intrinsic
def pack(typingctx, z, re, im):  # noqa: ARG001
    """The complex number ``re + i im`` of ``z``'s type (parts as they are, no rounding)."""
    if not isinstance(z, types.Complex):
        return None
    part = z.underlying_float

    def codegen(context, builder, signature, args):
        out = context.make_complex(builder, z)
        out.real = context.cast(builder, args[1], signature.args[1], part)
        out.imag = context.cast(builder, args[2], signature.args[2], part)
        return out._getvalue()
    return z(z, re, im), codegen


# numpy's own compositions (numpy/_core/src/umath/funcs.inc.src, npymath's npy_cpow,
# loops.c.src's complex sign), operation for operation in the parts' precision


@njit(**_JIT)
def log2(z):
    """numpy's ``nc_log2``: clog, each part times log2(e)."""
    r, k = clog(z), like(z, LOG2E)
    return pack(z, r.real * k, r.imag * k)


@njit(**_JIT)
def log10(z):
    """numpy's ``nc_log10``: clog, each part times log10(e)."""
    r, k = clog(z), like(z, LOG10E)
    return pack(z, r.real * k, r.imag * k)


@njit(**_JIT)
def exp2(z):
    """numpy's ``nc_exp2``: cexp of each part times ln(2)."""
    k = like(z, LOGE2)
    return cexp(pack(z, z.real * k, z.imag * k))


@njit(**_JIT)
def log1p(z):
    """numpy's ``nc_log1p``: log(hypot(x + 1, y)) + i atan2(y, x + 1)."""
    x1 = z.real + like(z, 1.0)
    return pack(z, np.log(np.hypot(x1, z.imag)), np.arctan2(z.imag, x1))


@njit(**_JIT)
def expm1(z):
    """numpy's ``nc_expm1``: expm1(x) cos(y) - 2 sin(y/2)**2 + i exp(x) sin(y)."""
    x, y = z.real, z.imag
    a = np.sin(y / like(z, 2.0))
    return pack(z, np.expm1(x) * np.cos(y) - like(z, 2.0) * a * a, np.exp(x) * np.sin(y))


@njit(**_JIT)
def sign(z):
    """numpy's complex sign (loops.c.src): z / |z|, nan where a part is nan or both are
    infinite, +-1 or +-1j where one is infinite, 0 at 0."""
    x, y = z.real, z.imag
    m = np.hypot(x, y)
    one, zero, nan = like(z, 1.0), like(z, 0.0), like(z, np.nan)
    if np.isnan(m):
        return pack(z, nan, nan)
    if np.isinf(m):
        if np.isinf(x):
            if np.isinf(y):
                return pack(z, nan, nan)
            return pack(z, one if x > zero else -one, zero)
        return pack(z, zero, one if y > zero else -one)
    if m == zero:
        return pack(z, zero, zero)
    return pack(z, x / m, y / m)


@njit(**_JIT)
def _cmul(a, b):
    return pack(a, a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real)


@njit(**_JIT)
def divide(a, b):
    """numpy's complex division (its loop and npymath's ``cdiv``: Smith's algorithm; a
    zero divisor divides the parts by its real part's magnitude, so ``1/(-0-0j)`` is
    ``inf+nanj`` where Numba's gives ``-inf+nanj``)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    abs_br, abs_bi = np.abs(br), np.abs(bi)
    if abs_br >= abs_bi:
        if abs_br == like(a, 0.0) and abs_bi == like(a, 0.0):
            return pack(a, ar / abs_br, ai / abs_br)
        rat = bi / br
        scl = like(a, 1.0) / (br + bi * rat)
        return pack(a, (ar + ai * rat) * scl, (ai - ar * rat) * scl)
    rat = br / bi
    scl = like(a, 1.0) / (bi + br * rat)
    return pack(a, (ar * rat + ai) * scl, (ai * rat - ar) * scl)


@njit(**_JIT)
def power(a, b):
    """npymath's ``npy_cpow``: 1 for a zero exponent, 0 or nan for a zero base, products
    for an integer exponent in (-100, 100), else libm's cpow."""
    zero = like(a, 0.0)
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    if br == zero and bi == zero:
        return pack(a, like(a, 1.0), zero)
    if ar == zero and ai == zero:
        if br > zero:
            return pack(a, zero, zero)
        return pack(a, like(a, np.nan), like(a, np.nan))
    if bi == zero and br > like(a, -100.0) and br < like(a, 100.0) and int(br) == br:
        n = int(br)
        if n == 1:
            return a
        if n == 2:
            return _cmul(a, a)
        if n == 3:
            return _cmul(a, _cmul(a, a))
        n = -n if n < 0 else n
        aa, p, mask = pack(a, like(a, 1.0), zero), a, 1
        while True:
            if n & mask:
                aa = _cmul(aa, p)
            mask <<= 1
            if n < mask:
                break
            p = _cmul(p, p)
        if br < zero:
            return divide(pack(a, like(a, 1.0), zero), aa)
        return aa
    return cpow(a, b)


# numpy's floor division and remainder of floats (npy_math_internal.h.src: npy_divmod,
# npy_floor_divide, npy_remainder), operation for operation, each rounded to the dtype
# ``real`` (np.float64 or np.float32). Numba's np.floor_divide is floor(a / b): -8 // (1/3)
# is -24 (numpy's -25, a - fmod(a, b) divided), inf // 3 is inf (numpy's nan); its
# np.remainder has the sign of a zero result wrong (numpy's takes b's: 2 % -0.5 is -0.0)


@njit(**_JIT)
def _divmod(a, b, real):
    mod = real(np.fmod(a, b))
    div = real(real(a - mod) / b)  # a - mod should be very nearly a multiple of b
    if mod:
        if (b < 0) != (mod < 0):  # the remainder takes the sign of b, as Python's
            mod = real(mod + b)
            div = real(div - 1)
    else:
        mod = real(math.copysign(0.0, b))
    if div:  # the quotient snapped to the nearest whole number
        quotient = real(np.floor(div))
        if div - quotient > 0.5:
            quotient = real(quotient + 1)
    else:
        quotient = real(math.copysign(0.0, real(a / b)))
    return quotient, mod


@njit(**_JIT)
def floor_divide(a, b, real):
    if not b:
        return real(real(a) / b)
    return _divmod(a, b, real)[0]


@njit(**_JIT)
def remainder(a, b, real):
    if not b:
        return real(np.fmod(a, b))
    return _divmod(a, b, real)[1]


# numpy's FFT (Numba has none) where a kernel holds one (a loop or branch body, an exported
# module): numpy's own transform in an object-mode block, one function per result dtype
# (a block per call site in the kernel itself fails to compile where two loops each hold
# one: "Instruction does not dominate all uses!", Numba 0.68), the result flat


def numpy_fft(x, name, axes, norm, lengths, dtype):
    """numpy.fft's ``name`` (fftn, ifftn, rfftn, irfftn) as symgrad's fft primitive computes
    it, flat, in ``dtype`` (numpy's float32 transforms stay float32)."""
    fn = getattr(np.fft, name)
    y = fn(x, s=lengths, axes=axes, norm=norm) if name == "irfftn" else fn(x, axes=axes, norm=norm)
    return np.ascontiguousarray(y.astype(dtype, copy=False)).ravel()


@njit(cache=False)
def fft_complex128(x, name, axes, norm, lengths):
    with numba.objmode(y="complex128[::1]"):
        y = numpy_fft(x, name, axes, norm, lengths, "complex128")
    return y


@njit(cache=False)
def fft_complex64(x, name, axes, norm, lengths):
    with numba.objmode(y="complex64[::1]"):
        y = numpy_fft(x, name, axes, norm, lengths, "complex64")
    return y


@njit(cache=False)
def fft_float64(x, name, axes, norm, lengths):
    with numba.objmode(y="float64[::1]"):
        y = numpy_fft(x, name, axes, norm, lengths, "float64")
    return y


@njit(cache=False)
def fft_float32(x, name, axes, norm, lengths):
    with numba.objmode(y="float32[::1]"):
        y = numpy_fft(x, name, axes, norm, lengths, "float32")
    return y
