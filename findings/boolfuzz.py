import numpy as np, symgrad as sg, warnings
warnings.simplefilter("ignore")
m = np.array([[True, False, True, True], [False, False, True, False], [True, True, True, False]])
fs = {
 "convolve": lambda a: np.convolve(a[0], a[1]), "correlate": lambda a: np.correlate(a[0], a[2], "full"), "cumprod": lambda a: np.cumprod(a, axis=1), "prod": lambda a: np.prod(a, axis=0),
 "mean": lambda a: np.mean(a, axis=1), "var": lambda a: np.var(a), "median": lambda a: np.median(a, axis=0), "percentile": lambda a: np.percentile(a, 40),
 "trace": lambda a: np.trace(a), "sum": lambda a: np.sum(a, axis=1), "cumsum": lambda a: np.cumsum(a), "max": lambda a: np.max(a, axis=0), "ptp": lambda a: np.ptp(a, axis=1),
 "clip": lambda a: np.clip(a, 0, 0.5), "clip_b": lambda a: np.clip(a, False, True), "where": lambda a: np.where(a, a, ~a), "sort": lambda a: np.sort(a, axis=1), "argsort": lambda a: np.argsort(a, axis=1, kind="stable"),
 "flip": lambda a: np.flip(a), "roll": lambda a: np.roll(a, 1), "pad": lambda a: np.pad(a, 1), "pad_edge": lambda a: np.pad(a, 1, mode="edge"), "repeat": lambda a: np.repeat(a, 2, axis=0),
 "stack": lambda a: np.stack([a, ~a]), "mult_int": lambda a: a * 3, "add_float": lambda a: a + 0.5, "div": lambda a: a / 2, "floordiv": lambda a: a // True, "mod": lambda a: a % True,
 "pow": lambda a: a ** 2, "pow_b": lambda a: a ** True, "square": lambda a: np.square(a), "sqrt": lambda a: np.sqrt(a), "exp": lambda a: np.exp(a), "neg_not": lambda a: np.logical_not(a),
 "sum_sq": lambda a: np.sum(a * a), "outer_add": lambda a: np.add.outer(a[0], a[1]) if False else a[0][:, None] + a[1][None, :], "max_float": lambda a: np.maximum(a, 0.5), "isclose": lambda a: np.isclose(a, True),
 "cross": lambda a: np.cross(a[0, :3], a[1, :3]), "linalg_norm": lambda a: np.linalg.norm(a), "average_w": lambda a: np.average(a, axis=1, weights=[1, 2, 3, 4]), "diag": lambda a: np.diag(a), "triu": lambda a: np.triu(a),
 "matmul_int": lambda a: a @ np.arange(4), "count": lambda a: np.count_nonzero(a, axis=1), "any": lambda a: np.any(a, axis=1), "cumsum_ax": lambda a: np.cumsum(a, axis=0), "nonzero_mul": lambda a: a * a[0],
 "minimum": lambda a: np.minimum(a, ~a), "abs": lambda a: np.abs(a), "sign_float": lambda a: np.sign(a + 0.0), "interp": lambda a: np.interp([0.5, 1.5], [0, 1, 2], a[0, :3]),
 "polyval": lambda a: np.polyval(a[0], 2.0), "std_ax": lambda a: np.std(a, axis=0), "logaddexp": lambda a: np.logaddexp(a, a), "arctan2": lambda a: np.arctan2(a, ~a), "heaviside": lambda a: np.heaviside(a, 0.5),
}
for n, f in fs.items():
    try:
        want = np.asarray(f(m))
    except Exception as e:
        want = e
    for be in ("numpy", "numba"):
        try:
            got = np.asarray(sg.jit(f, backend=be)(m))
        except Exception as e:
            got = e
        if isinstance(want, Exception) or isinstance(got, Exception):
            if isinstance(want, Exception) != isinstance(got, Exception):
                print(n, be, "numpy:", repr(want)[:80] if isinstance(want, Exception) else "ok", "| sg:", repr(got)[:120] if isinstance(got, Exception) else got.tolist())
            continue
        if got.shape != want.shape or not np.allclose(got.astype(float), want.astype(float), equal_nan=True):
            print(n, be, "VALUE numpy", want.tolist(), want.dtype, "| sg", got.tolist(), got.dtype)
print("done")
