import numpy as np, symgrad as sg
x = np.linspace(0.1, 1.0, 7)
fs = {
 "tridiag": lambda x: np.sum((x[1:] - x[:-1] ** 2) ** 2),
 "scan": lambda x: sg.scan(lambda c, r: (c * 0.5 + np.sin(r * c), c), 0.3, x)[0],
 "cumsum": lambda x: np.sum(np.cumsum(x) ** 3),
 "cumprod": lambda x: np.sum(np.cumprod(x)),
 "sort": lambda x: np.sum(np.sort(x * np.array([1, -1, 1, -1, 1, -1, 1.])) ** 3 * np.arange(7.)),
 "roll": lambda x: np.sum(x * np.roll(x, 2) ** 2),
 "where idx": lambda x: np.sum(np.where(x > 0.5, x[::-1], x) ** 3),
 "cond": lambda x: sg.cond(x[0] > 0, lambda z: np.sum(z[:3] * z[4:]) ** 2, lambda z: np.sum(z), x),
 "fori": lambda x: np.sum(sg.fori_loop(0, 3, lambda i, v: np.roll(v, 1) * v, x)),
 "while": lambda x: np.sum(sg.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] * np.roll(c[1], 1)), (0, x))[1]),
 "take_along": lambda x: np.sum(np.take_along_axis(x, np.argsort(-x), 0) ** 2 * np.arange(7.)),
 "gather idx": lambda x: np.sum(x[np.array([6, 0, 3, 3])] ** 3 * x[1]),
 "at set": lambda x: np.sum(sg.at(x)[2].set(x[5] * x[6]) ** 2),
 "matmul": lambda x: np.sum((np.triu(np.ones((7, 7))) @ x) ** 3),
 "einsum": lambda x: np.einsum("i,i->", np.diff(x), np.diff(x)) ** 2,
 "convolve": lambda x: np.sum(np.convolve(x, np.array([1.0, -2.0, 1.0]), "same") ** 3),
 "median": lambda x: np.median(x ** 2) * np.sum(x),
 "logsumexp": lambda x: sg.logsumexp(x[:3]) * x[6],
 "norm": lambda x: np.linalg.norm(x[::2]) * x[1],
 "interp": lambda x: np.sum(np.interp(x[:3] * 5, np.arange(4.), x[3:])),
 "repeat/tile": lambda x: np.sum(np.tile(x[:2], 3) * np.repeat(x[2:4], 3) * x[4:].mean()),
 "pad": lambda x: np.sum(np.pad(x, 2, constant_values=1.0)[1:-3] * np.pad(x, 2)[4:]),
 "reshape T": lambda x: np.sum(np.concatenate([x, [1.0, 2.0]]).reshape(3, 3).T @ np.arange(9.).reshape(3, 3) * x[0]),
}
for name, f in fs.items():
    try:
        dense = sg.hessian(f, backend="interpreter")(x)
        sp = sg.hessian(f, sparse=True, backend="interpreter")(x).toarray()
        ok = np.allclose(dense, sp, rtol=1e-10, atol=1e-12)
        print("OK " if ok else "BAD", name, "" if ok else np.argwhere(~np.isclose(dense, sp))[:5].tolist())
    except Exception as e:
        print("EXC", name, type(e).__name__, str(e)[:150])
    try:
        jd = sg.jacfwd(lambda z: f(z) * z, backend="interpreter")(x)
        js = sg.jacrev(lambda z: f(z) * z, sparse=True, backend="interpreter")(x).toarray()
        jf = sg.jacfwd(lambda z: f(z) * z, sparse=True, backend="interpreter")(x).toarray()
        ok = np.allclose(jd, js) and np.allclose(jd, jf)
        if not ok: print("BAD jac", name)
    except Exception as e:
        print("EXC jac", name, type(e).__name__, str(e)[:150])
