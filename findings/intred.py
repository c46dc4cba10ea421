import numpy as np, symgrad as sg, warnings
warnings.simplefilter("ignore")
xi = np.array([[3, -2, 7], [0, 5, -9]]); xb = np.array([[True, False, True], [False, False, True]])
fs = {
 "sum": lambda x: np.sum(x), "sum0": lambda x: np.sum(x, axis=0), "cumsum": lambda x: np.cumsum(x, axis=1), "max": lambda x: np.max(x), "min1": lambda x: np.min(x, axis=1),
 "abs": lambda x: np.abs(x), "sign": lambda x: np.sign(x), "where": lambda x: np.where(x > 0, x, 0), "trace": lambda x: np.trace(x), "diff": lambda x: np.diff(x, axis=1),
 "ptp": lambda x: np.ptp(x), "mean": lambda x: np.mean(x), "prod": lambda x: np.prod(x), "any": lambda x: np.any(x), "all": lambda x: np.all(x, axis=0),
 "count": lambda x: np.count_nonzero(x), "argmax": lambda x: np.argmax(x, axis=1), "sort": lambda x: np.sort(x, axis=1), "clip": lambda x: np.clip(x, 0, 4),
 "maximum": lambda x: np.maximum(x, 1), "sq": lambda x: np.square(x), "neg": lambda x: -x, "x*x": lambda x: x * x, "x//2": lambda x: x // 2, "x%3": lambda x: x % 3,
 "x-1": lambda x: x - 1, "x+True": lambda x: x + True, "x*2.5": lambda x: x * 2.5, "x/2": lambda x: x / 2, "x**2": lambda x: x ** 2, "cumprod": lambda x: np.cumprod(x, axis=0),
 "dot": lambda x: x @ x.T, "einsum": lambda x: np.einsum("ij->j", x), "matmul_float": lambda x: x @ np.ones((3,)), "median": lambda x: np.median(x), "var": lambda x: np.var(x),
 "nonzero_sum": lambda x: np.sum(x != 0), "logical": lambda x: np.logical_and(x, x > 0), "bitand": lambda x: x & 6, "tile": lambda x: np.tile(x, 2), "concat": lambda x: np.concatenate([x, x]),
 "unique": lambda x: np.sort(x.ravel()), "round": lambda x: np.round(x), "floor": lambda x: np.floor(x), "minimum_b": lambda x: np.minimum(x, x > 1), "cumsum_b": lambda x: np.cumsum(x > 0),
 "mean_axis": lambda x: np.mean(x, axis=0), "average": lambda x: np.average(x, axis=1), "sum_keep": lambda x: np.sum(x, axis=1, keepdims=True), "sum_dtype": lambda x: np.sum(x, dtype=np.float64),
}
bad = []
for xn, x in (("int", xi), ("bool", xb)):
    for name, f in fs.items():
        try:
            want = np.asarray(f(x))
        except Exception as e:
            want = e
        for backend in ("numpy", "numba"):
            try:
                got = np.asarray(sg.jit(f, backend=backend)(x))
            except Exception as e:
                got = e
            if isinstance(want, Exception) or isinstance(got, Exception):
                if isinstance(got, Exception) and not isinstance(want, Exception):
                    msg = str(got)
                    if not any(k in msg for k in ("refused", "not supported", "convert", "Unsupported")):
                        bad.append((xn, name, backend, "ERR", type(got).__name__, msg[:90]))
                elif isinstance(want, Exception) and not isinstance(got, Exception):
                    bad.append((xn, name, backend, "numpy raises", type(want).__name__, "sg gives", got))
                continue
            if got.shape != want.shape or not np.array_equal(got.astype(float), want.astype(float)):
                bad.append((xn, name, backend, "VALUE", want, got))
            elif got.dtype != want.dtype:
                bad.append((xn, name, backend, "dtype", want.dtype, got.dtype))
for b in bad: print(b)
print(len(bad))
