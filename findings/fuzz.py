import numpy as np, torch, symgrad as sgt, itertools, warnings, collections
warnings.simplefilter("ignore"); torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(0)
dts = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
def mk(L, dt, seed):
    r = np.random.default_rng(seed)
    if dt == "bool": a = r.random(7) > 0.5
    elif dt.startswith("u"): a = r.integers(0, 255, 7)
    elif dt.startswith("int"): a = r.integers(-100, 100, 7)
    else: a = r.standard_normal(7) * 30
    return L.tensor(a, dtype=getattr(L, dt))
ops = {
 "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
 "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "pow": lambda a, b: a ** b,
 "lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "max": lambda a, b: a.maximum(b) if hasattr(a, "maximum") else None,
 "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b, "atan2": lambda a, b: a.atan2(b),
 "fmod": lambda a, b: a.fmod(b), "remainder": lambda a, b: a.remainder(b), "copysign": lambda a, b: a.copysign(b),
 "hypot": lambda a, b: a.hypot(b), "div_floor": lambda a, b: a.div(b, rounding_mode="floor"), "div_trunc": lambda a, b: a.div(b, rounding_mode="trunc"),
 "lshift": lambda a, b: a << b, "rshift": lambda a, b: a >> b, "fmax": lambda a, b: a.fmax(b), "logaddexp": lambda a, b: a.logaddexp(b),
 "xlogy": lambda a, b: a.xlogy(b), "ldexp": lambda a, b: a.ldexp(b), "bitwise_and": lambda a, b: a.bitwise_and(b), "clamp": lambda a, b: a.clamp(min=b),
 "where": lambda a, b: a.where(a > 0, b) if True else None, "lerp?": lambda a, b: a.lerp(b, 0.3), "true_divide": lambda a, b: a.true_divide(b),
 "addalpha": lambda a, b: a.add(b, alpha=2), "subalpha": lambda a, b: a.sub(b, alpha=3),
}
scalars = [2, -3, 2.5, True, 0, 300, -0.5]
bad = collections.OrderedDict()
def run(fn, L, *args):
    try:
        with np.errstate(all="ignore"):
            r = fn(*args)
        return ("ok", str(r.dtype).rpartition(".")[2], r.numpy().copy())
    except Exception as e:
        return ("err", type(e).__name__)
def same(t, s):
    if t[0] != s[0]: return False
    if t[0] == "err": return True
    if t[1] != s[1]: return False
    a, b = t[2], s[2]
    if a.shape != b.shape: return False
    if a.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)
for on, op in ops.items():
    for d1, d2 in itertools.product(dts, dts):
        t = run(op, torch, mk(torch, d1, 1), mk(torch, d2, 2)); s = run(op, sgt, mk(sgt, d1, 1), mk(sgt, d2, 2))
        if not same(t, s): bad[(on, d1, d2)] = (t, s)
    for d1, c in itertools.product(dts, scalars):
        t = run(op, torch, mk(torch, d1, 1), c); s = run(op, sgt, mk(sgt, d1, 1), c)
        if not same(t, s): bad[(on, d1, repr(c))] = (t, s)
        t = run(lambda a, b: op(b, a) if on in ("add", "sub", "mul", "div", "floordiv", "mod", "pow", "lt", "and", "or", "xor") else op(a, b), torch, mk(torch, d1, 1), c)
        s = run(lambda a, b: op(b, a) if on in ("add", "sub", "mul", "div", "floordiv", "mod", "pow", "lt", "and", "or", "xor") else op(a, b), sgt, mk(sgt, d1, 1), c)
        if not same(t, s): bad[("r" + on, d1, repr(c))] = (t, s)
print(len(bad))
for k, (t, s) in bad.items():
    def show(r):
        if r[0] == "err": return r[1]
        return f"{r[1]} {np.array2string(r[2], precision=9, max_line_width=200)}"
    print(k, "| torch:", show(t), "| sg:", show(s))
