import numpy as np, symgrad as sg, warnings, itertools
warnings.simplefilter("ignore")
print(np.__version__)
arrs = {"f64": np.array([1.5, -2.0, 3.25]), "f32": np.array([1.5, -2.0, 3.25], np.float32), "f16": np.array([1.5, -2.0, 3.25], np.float16),
        "i64": np.array([3, -2, 7]), "i32": np.array([3, -2, 7], np.int32), "i8": np.array([3, -2, 7], np.int8), "u8": np.array([3, 2, 7], np.uint8),
        "b": np.array([True, False, True]), "c64": np.array([1+2j, -1j, 3], np.complex64)}
scalars = {"pyint": 2, "pyfloat": 2.5, "pybool": True, "np.f32": np.float32(2.5), "np.f64": np.float64(2.5), "np.i32": np.int32(2), "np.i64": np.int64(2), "pycomplex": 1+1j, "np.u8": np.uint8(2), "big": 300}
ops = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "truediv": lambda a, b: a / b, "floordiv": lambda a, b: a // b, "pow": lambda a, b: a ** b, "sub": lambda a, b: a - b, "mod": lambda a, b: a % b, "max": lambda a, b: np.maximum(a, b), "where": lambda a, b: np.where(a > 1, a, b), "rsub": lambda a, b: b - a, "rpow": lambda a, b: b ** a, "arctan2": lambda a, b: np.arctan2(a, b), "hypot": lambda a, b: np.hypot(a, b), "ldexp_like": lambda a, b: a * 1 + b}
bad = []
for (an, a), (sn, s), (on, op) in itertools.product(arrs.items(), list(scalars.items()) + [(k + "_arr", v) for k, v in arrs.items()], ops.items()):
    try:
        with np.errstate(all="ignore"):
            want = op(a, s)
    except Exception as e:
        want = e
    for backend in ("numpy", "numba"):
        try:
            if sn.endswith("_arr"):
                got = sg.jit(op, backend=backend)(a, s)
            else:
                got = sg.jit(lambda x: op(x, s), backend=backend)(a)
        except Exception as e:
            got = e
        if isinstance(want, Exception) or isinstance(got, Exception):
            if isinstance(want, Exception) and isinstance(got, Exception): continue
            if isinstance(got, Exception):
                if "not supported" in str(got) or "NotImplemented" in type(got).__name__ or "Unsupported" in type(got).__name__: continue
            bad.append((an, sn, on, backend, "EXC", repr(want)[:60], repr(got)[:100])); continue
        got = np.asarray(got); want = np.asarray(want)
        if got.dtype != want.dtype:
            bad.append((an, sn, on, backend, "dtype", want.dtype, got.dtype))
        elif not np.allclose(got.astype(complex), want.astype(complex), equal_nan=True, rtol=1e-6 if want.dtype.itemsize<=4 else 1e-13):
            bad.append((an, sn, on, backend, "value", want, got))
print(len(bad))
for b in bad: print(b)
import collections
print("VALUES:")
for b in bad:
    if b[4] == "value": print(b)
print("DTYPE pairs:", collections.Counter((b[0], b[1], str(b[5]), str(b[6])) for b in bad if b[4] == "dtype"))
print("EXC pairs:", collections.Counter((b[0], b[1], b[6][:50]) for b in bad if b[4] == "EXC" and "int64 only" not in b[6]))
